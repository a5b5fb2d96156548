/*
 * store_internal: what the store's backends share and nothing outside
 * storage/ sees: the method table each backend fills (as SQLite's VFS does
 * with sqlite3_io_methods), the common head of every handle, and the helpers
 * both backends need.
 *
 * store.c checks every argument and zeroes every output before it calls a
 * method, so a method may assume valid arguments: a known kind, a valid
 * name, blob and len consistent, now_ms >= 0.
 */
#ifndef STORE_INTERNAL_H
#define STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"

#define STORE_NAME_MAX 64

typedef struct store_methods {
    const char *name; /* "sqlite" or "postgres": /health's store.kind */
    void (*close)(store *s);
    store_status (*put)(store *s, store_kind kind, const char *name, const void *blob, size_t len,
                        int64_t now_ms, store_meta *meta, int *created);
    store_status (*del)(store *s, store_kind kind, const char *name);
    store_status (*get)(store *s, store_kind kind, const char *name, store_meta *meta, void **blob,
                        size_t *len);
    /* with_blobs 0: fn gets (NULL, 0) for every entry (the resync's cheap walk) */
    store_status (*each)(store *s, store_kind kind, int with_blobs, store_each_fn fn, void *ctx,
                         int *fn_result);
    store_status (*check)(store *s);
    int (*connected)(store *s);
    store_status (*watch)(store *s, store_watch_fn fn, void *ctx);
    void (*unwatch)(store *s);
    void (*stats)(store *s, store_stats *out);
    void (*describe)(store *s, char *buf, size_t size);
} store_methods;

/* The head of every backend's handle (its first member). */
struct store {
    const store_methods *m;
    store_options opt; /* resolved: no -1 left in idempotent */
    int schema_version;
};

/* The contract's name rule ^[A-Za-z0-9_.-]{1,64}$. */
int store_name_valid(const char *name);
/* Writes a formatted reason into why when the caller gave a buffer. */
void store_say(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Backends: open (the argument checks are done) and fill *out. */
store_status store_sqlite_open(const char *path, const store_options *opt, store **out, char *why,
                               size_t why_size);
store_status store_pg_open(const char *conninfo, const store_options *opt, store **out, char *why,
                           size_t why_size);

#endif
