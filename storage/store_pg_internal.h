/*
 * store_pg_internal: what the PostgreSQL backend's two files share:
 * store_pg.c (connections, bounded calls, schema, reads and writes) and
 * store_pg_watch.c (the keeper thread: reconnection with backoff, LISTEN,
 * notifications).
 *
 * Two connections per handle. The main one serves every store_ call under
 * `lock`; the listen one belongs to the keeper thread alone. Either may be
 * NULL (down): a call then fails at once with STORE_UNAVAILABLE and the
 * keeper reconnects. Every round trip is bounded by opt.op_timeout_ms on the
 * client side (poll on PQsocket), so a stalled server never holds a caller
 * longer than that; the server's statement_timeout says the same from its
 * side.
 */
#ifndef STORE_PG_INTERNAL_H
#define STORE_PG_INTERNAL_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>

#include "storage/store_internal.h"

/* The NOTIFY channel; payload "kind:name:version" (version 0: deleted). */
#define STORE_PG_CHANNEL "navd_changes"

typedef struct store_pg {
    struct store base;
    char *conninfo; /* the user's string: may hold a password, never printed */
    char describe[256];

    pthread_mutex_t lock; /* guards conn and every use of it */
    PGconn *conn;         /* main connection; NULL while down */

    /* the keeper thread (store_pg_watch.c) */
    pthread_t thread;
    int thread_started;
    int wake[2]; /* self-pipe: a caller lost conn, a watcher arrived, stop */
    atomic_int stop;
    atomic_int main_up;      /* conn != NULL, readable without the lock (/health) */
    atomic_int listen_up;    /* the listen connection is up and LISTENing */
    atomic_int need_resync;  /* send STORE_EV_RESYNC when both connections are up */
    pthread_mutex_t cb_lock; /* held while fn runs; guards fn and ctx */
    store_watch_fn fn;
    void *ctx;

    atomic_ullong reconnects, disconnects, notifications;
} store_pg;

#define PG(s) ((store_pg *)(s))

/* Opens a connection with navd's defaults (connect_timeout, keepalives,
   application_name) under the user's settings; NULL and why on failure. */
PGconn *store_pg_connect(store_pg *p, const char *app, char *why, size_t why_size);

/*
 * Runs sql (params: NULL-terminated text values except bytea ones, see
 * store_pg.c) on c within opt.op_timeout_ms and returns its last result in
 * *res (caller PQclears). Single statement with params, or several without.
 */
store_status store_pg_exec(store_pg *p, PGconn *c, const char *sql, int nparams,
                           const char *const *values, const int *lengths, const int *formats,
                           int binary, PGresult **res);

/* The main connection failed: close it (lock held), count it, wake the keeper. */
void store_pg_drop_main(store_pg *p);
/* Wakes the keeper thread (async-signal-safe write to the self-pipe). */
void store_pg_wake(store_pg *p);

/* The keeper: started by store_pg_open, stopped by close. */
int store_pg_keeper_start(store_pg *p);
void store_pg_keeper_stop(store_pg *p);
store_status store_pg_watch(store *s, store_watch_fn fn, void *ctx);
void store_pg_unwatch(store *s);

#endif
