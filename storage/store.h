/*
 * store: durable storage of navmesh blobs in one SQLite file.
 *
 * Knows nothing of a navmesh's insides: it keeps, per name, an opaque blob
 * with a version and timestamps. WAL mode with synchronous=FULL, so every
 * write that returned STORE_OK survives a kill -9 or power loss right after.
 * Schema changes go through PRAGMA user_version migrations.
 *
 * A store handle serializes its own use with a mutex, so it may be shared by
 * the HTTP worker threads (writes are rare; reads happen at start-up).
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_STATUS_LIST(X)                                                                       \
    X(STORE_OK, "ok")                                                                              \
    X(STORE_NOT_FOUND, "not found")                                                                \
    X(STORE_CONFLICT, "version conflict")                                                          \
    X(STORE_IO, "storage i/o error")                                                               \
    X(STORE_NOMEM, "out of memory")                                                                \
    X(STORE_INVALID_ARG, "invalid argument")

typedef enum store_status {
#define STORE_STATUS_ENUM(name, text) name,
    STORE_STATUS_LIST(STORE_STATUS_ENUM)
#undef STORE_STATUS_ENUM
        STORE_STATUS_COUNT
} store_status;

const char *store_status_text(store_status s);

/* What a blob is; each kind has its own names and versions (a level and a
   navmesh may both be called "dungeon"). The text is the kind's table. */
#define STORE_KIND_LIST(X)                                                                         \
    X(STORE_NAVMESH, "navmeshes")                                                                  \
    X(STORE_LEVEL, "levels")                                                                       \
    X(STORE_VOLUME, "volumes")

typedef enum store_kind {
#define STORE_KIND_ENUM(name, table) name,
    STORE_KIND_LIST(STORE_KIND_ENUM)
#undef STORE_KIND_ENUM
        STORE_KIND_COUNT
} store_kind;

/* The kind's table name ("navmeshes"), "unknown" out of range. */
const char *store_kind_table(store_kind k);

typedef struct store store;

/* Metadata of one stored blob. Times are Unix milliseconds (UTC). */
typedef struct store_meta {
    char name[65];
    int64_t version; /* 1 on create, +1 per replace */
    int64_t created_ms;
    int64_t updated_ms;
} store_meta;

/* Opens (creating if needed) and migrates the database at path. */
store_status store_open(const char *path, store **out);
/*
 * store_open that also writes a one-line reason into why (when why is not
 * NULL), e.g. "database schema version 7 is newer than this navd supports
 * (1); refusing to open it", for start-up to print. The store never logs.
 * STORE_IO: not a database, unreadable, newer schema, or WAL unavailable.
 */
store_status store_open_detail(const char *path, store **out, char *why, size_t why_size);
/* Closes the database; NULL is a no-op. */
void store_close(store *s);

/*
 * Creates or replaces `name` in one transaction. On success *meta holds the
 * stored metadata (version 1 when created, previous + 1 when replaced) and
 * *created is 1 when the name was new.
 */
store_status store_put(store *s, store_kind kind, const char *name, const void *blob, size_t len,
                       int64_t now_ms, store_meta *meta, int *created);

/* Deletes `name`; STORE_NOT_FOUND when absent. */
store_status store_delete(store *s, store_kind kind, const char *name);

/* Reads one entry; *blob is malloc'd (free it). */
store_status store_get(store *s, store_kind kind, const char *name, store_meta *meta, void **blob,
                       size_t *len);

/*
 * Calls fn for every stored entry in name order (used at start-up to load all
 * meshes). The blob is only valid during the call. A non-zero return from fn
 * stops the iteration and is passed back.
 */
typedef int (*store_each_fn)(void *ctx, const store_meta *meta, const void *blob, size_t len);
store_status store_each(store *s, store_kind kind, store_each_fn fn, void *ctx, int *fn_result);

/* SQLite's PRAGMA integrity_check; STORE_OK when it says "ok". */
store_status store_check(store *s);

/* Current schema version (PRAGMA user_version) after migrations. */
int store_schema_version(store *s);

#endif
