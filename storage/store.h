/*
 * store: durable storage of opaque blobs (navmeshes, levels, volumes) by
 * kind and name, each with a version and timestamps.
 *
 * Two backends behind one table of functions (storage/store_internal.h),
 * chosen once by store_open from the target's form:
 * - SQLite (the default): a file path. WAL with synchronous=FULL, so every
 *   write that returned STORE_OK survives a kill -9 or power loss right after
 *   (storage/store_sqlite.c).
 * - PostgreSQL: a libpq connection string, "postgres://..." /
 *   "postgresql://..." or "key=value ..." (several hosts with
 *   target_session_attrs=read-write included). A write returns STORE_OK only
 *   after PostgreSQL committed it; every committed change is announced to
 *   every navd watching the same database (store_watch), which is how
 *   replicas stay in step (storage/store_pg*.c).
 * Both create their schema on first use and migrate it by version.
 *
 * Knows nothing of a blob's insides. A handle serializes its own use with a
 * mutex, so it may be shared by the HTTP worker threads. The store never
 * logs; a PostgreSQL connection string (which may carry a password) is never
 * copied into any message: store_describe names the database without it.
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
    X(STORE_INVALID_ARG, "invalid argument")                                                       \
    X(STORE_UNAVAILABLE, "store unavailable (database not connected)")

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

/*
 * How a store behaves where the backends allow a choice. Zero-initialize and
 * set what you need: 0 means the default given here.
 */
typedef struct store_options {
    unsigned connect_timeout_s; /* PostgreSQL: seconds per connection attempt (2) */
    unsigned op_timeout_ms;     /* PostgreSQL: bound on one call's round trips (5000) */
    unsigned backoff_max_ms;    /* PostgreSQL: longest wait between reconnections (2000) */
    /*
     * 1: a put whose blob is byte-identical to the current version's changes
     * nothing (no new version, no notification) and reports the current
     * metadata with *created = 0, so a client may retry a write whose answer
     * it lost. -1: off. 0: the backend's default, on for PostgreSQL (where a
     * commit's answer can be lost with the connection), off for SQLite (each
     * put is a new version, as before).
     */
    int idempotent;
} store_options;

/* True when target names a PostgreSQL database rather than a SQLite file:
   it starts with postgres:// or postgresql://, or reads "keyword=value". */
int store_target_is_postgres(const char *target);

/*
 * Opens (creating if needed) and migrates the store target names (see
 * above), with options (NULL: all defaults). On failure writes a one-line
 * reason into why (when not NULL), e.g. "database schema version 7 is newer
 * than this navd supports (1); refusing to open it" or PostgreSQL's own
 * connection error (which never contains the password).
 */
store_status store_open_with(const char *target, const store_options *opt, store **out, char *why,
                             size_t why_size);
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

/* Like store_each without the blobs: fn gets (NULL, 0). Cheap on PostgreSQL
   (a replica compares versions with it after every reconnection). */
store_status store_each_meta(store *s, store_kind kind, store_each_fn fn, void *ctx,
                             int *fn_result);

/* "sqlite" or "postgres". */
const char *store_backend(store *s);
/* 1 when the store can take writes now (SQLite: always; PostgreSQL: both
   connections up). While 0, writes fail at once with STORE_UNAVAILABLE. */
int store_connected(store *s);
/* A name for logs: the file path, or "PostgreSQL <db> on <host>:<port>"
   (never the connection string: it may carry a password). */
void store_describe(store *s, char *buf, size_t size);

/* ---- change notifications (PostgreSQL; SQLite has one writer: no-ops) ---- */

typedef enum store_event_type {
    STORE_EV_CHANGED, /* kind/name has a new committed version (version > 0) */
    STORE_EV_DELETED, /* kind/name was deleted */
    /* (Re)connected: notifications sent while disconnected are lost, so the
       receiver must compare everything it holds (store_each_meta). */
    STORE_EV_RESYNC,
    /* The listen connection was lost (writes fail until STORE_EV_RESYNC);
       for the receiver's log, nothing to apply. */
    STORE_EV_DISCONNECTED
} store_event_type;

typedef struct store_event {
    store_event_type type;
    store_kind kind;     /* STORE_EV_CHANGED and STORE_EV_DELETED only */
    char name[65];       /* STORE_EV_CHANGED and STORE_EV_DELETED only */
    int64_t version;     /* STORE_EV_CHANGED only */
    int64_t received_ms; /* CLOCK_REALTIME when the notification arrived */
} store_event;

/*
 * Called on the store's listener thread, one event at a time, in commit
 * order. It may call store_get / store_each_meta on the same handle. A
 * non-zero return means "could not apply it": the store sends
 * STORE_EV_RESYNC again after its next successful connection check.
 */
typedef int (*store_watch_fn)(void *ctx, const store_event *ev);

/*
 * Starts watching every committed change (any navd's) on a listener thread
 * that also keeps both connections up, reconnecting with backoff. The first
 * event is STORE_EV_RESYNC once connected. One watcher per handle. SQLite:
 * STORE_OK and no event ever.
 */
store_status store_watch(store *s, store_watch_fn fn, void *ctx);
/* Stops the listener thread (waits for a callback in progress). No-op when
   not watching. Call before freeing what ctx points to. */
void store_unwatch(store *s);

typedef struct store_stats {
    int connected;          /* as store_connected */
    uint64_t reconnects;    /* successful connections after the first */
    uint64_t disconnects;   /* connections lost (either of the two) */
    uint64_t notifications; /* change notifications received */
} store_stats;
void store_get_stats(store *s, store_stats *out);

#endif
