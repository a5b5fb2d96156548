/*
 * store_pg_watch.c: the keeper thread of a PostgreSQL store handle.
 *
 * It owns the listen connection and keeps both connections up:
 * - reconnects a lost one with exponential backoff (50 ms doubling to
 *   opt.backoff_max_ms, with jitter so replicas do not reconnect in step),
 *   each attempt bounded by connect_timeout;
 * - notices a main connection the server closed while it sat idle (a
 *   restart, pg_terminate_backend, a failover) without waiting for the next
 *   write to fail on it;
 * - LISTENs on STORE_PG_CHANNEL and hands every notification to the
 *   watcher, in commit order;
 * - tells the watcher when the listen connection is lost
 *   (STORE_EV_DISCONNECTED) and, after every (re)connection of it and after
 *   a notification the watcher could not apply, hands it STORE_EV_RESYNC:
 *   NOTIFY is not replayed, so whatever was announced while it was down is
 *   only found by comparing versions.
 * It sleeps in poll() on the listen socket and a self-pipe, so stopping
 * and waking it are immediate.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/store_pg_internal.h"

#define KEEPER_BACKOFF_MIN_MS 50u
#define KEEPER_IDLE_MS 1000 /* longest sleep: the idle main connection is probed this often */

static int64_t keeper_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t keeper_real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Calls the watcher (if any) with cb_lock held; 0 when applied or nobody watches. */
static int keeper_deliver(store_pg *p, const store_event *ev) {
    pthread_mutex_lock(&p->cb_lock);
    int rc = p->fn != NULL ? p->fn(p->ctx, ev) : 0;
    pthread_mutex_unlock(&p->cb_lock);
    return rc;
}

/* "kind:name:version" -> ev; 0 when the payload is ours and well formed. */
static int keeper_parse(const char *payload, store_event *ev) {
    memset(ev, 0, sizeof *ev);
    const char *a = strchr(payload, ':');
    const char *b = a != NULL ? strchr(a + 1, ':') : NULL;
    if (b == NULL || (size_t)(b - a - 1) >= sizeof ev->name || b == a + 1) {
        return -1;
    }
    int kind = -1;
    for (int k = 0; k < STORE_KIND_COUNT; k++) {
        const char *t = store_kind_table((store_kind)k);
        if (strlen(t) == (size_t)(a - payload) && strncmp(payload, t, (size_t)(a - payload)) == 0) {
            kind = k;
        }
    }
    char *end = NULL;
    long long v = strtoll(b + 1, &end, 10);
    if (kind < 0 || end == b + 1 || *end != '\0' || v < 0) {
        return -1;
    }
    memcpy(ev->name, a + 1, (size_t)(b - a - 1));
    if (!store_name_valid(ev->name)) {
        return -1;
    }
    ev->kind = (store_kind)kind;
    ev->version = v;
    ev->type = v == 0 ? STORE_EV_DELETED : STORE_EV_CHANGED;
    ev->received_ms = keeper_real_ms();
    return 0;
}

/* A new listen connection, LISTENing; NULL when the server is not there. */
static PGconn *keeper_listen_connect(store_pg *p) {
    PGconn *c = store_pg_connect(p, "navd-listen", NULL, 0);
    if (c == NULL) {
        return NULL;
    }
    PGresult *r = NULL;
    store_status st = store_pg_exec(p, c, "LISTEN " STORE_PG_CHANNEL, 0, NULL, NULL, NULL, 0, &r);
    PQclear(r);
    if (st != STORE_OK) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

/* Without the lock: a call may hold it for up to op_timeout_ms. */
static int keeper_main_is_up(store_pg *p) {
    return atomic_load(&p->main_up);
}

/* Reconnects the main connection when it is down; 0 when it is up. */
static int keeper_main_up(store_pg *p) {
    if (keeper_main_is_up(p)) {
        return 0;
    }
    PGconn *c = store_pg_connect(p, "navd", NULL, 0);
    if (c == NULL) {
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    if (p->conn == NULL) {
        p->conn = c;
        c = NULL;
        atomic_store(&p->main_up, 1);
        atomic_fetch_add(&p->reconnects, 1);
    }
    pthread_mutex_unlock(&p->lock);
    PQfinish(c);
    return 0;
}

/* Drops an idle main connection the server has closed (only when nobody
   is using it: a caller in the middle of a call finds out by itself). */
static void keeper_probe_main(store_pg *p) {
    if (pthread_mutex_trylock(&p->lock) != 0) {
        return;
    }
    if (p->conn != NULL) {
        struct pollfd pfd = {.fd = PQsocket(p->conn), .events = POLLIN};
        if (pfd.fd < 0 || (poll(&pfd, 1, 0) > 0 && !PQconsumeInput(p->conn)) ||
            PQstatus(p->conn) == CONNECTION_BAD) {
            store_pg_drop_main(p);
        } else {
            PGnotify *n;
            while ((n = PQnotifies(p->conn)) != NULL) {
                PQfreemem(n); /* the main connection never LISTENs; just in case */
            }
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Hands every pending notification of c to the watcher. */
static void keeper_drain(store_pg *p, PGconn *c) {
    PGnotify *n;
    while ((n = PQnotifies(c)) != NULL) {
        store_event ev;
        if (strcmp(n->relname, STORE_PG_CHANNEL) == 0 && keeper_parse(n->extra, &ev) == 0) {
            atomic_fetch_add(&p->notifications, 1);
            if (keeper_deliver(p, &ev) != 0) {
                atomic_store(&p->need_resync, 1);
            }
        }
        PQfreemem(n);
    }
}

/* Sleeps until the listen socket or the self-pipe is readable, or ms pass. */
static void keeper_sleep(store_pg *p, PGconn *listen, int ms) {
    struct pollfd pfd[2] = {{.fd = p->wake[0], .events = POLLIN},
                            {.fd = listen != NULL ? PQsocket(listen) : -1, .events = POLLIN}};
    if (poll(pfd, 2, ms < 0 ? 0 : ms) > 0 && (pfd[0].revents & POLLIN)) {
        char buf[64];
        while (read(p->wake[0], buf, sizeof buf) == (ssize_t)sizeof buf) {
        }
    }
}

static void *keeper_main(void *arg) {
    store_pg *p = arg;
    PGconn *listen = NULL;
    unsigned delay = KEEPER_BACKOFF_MIN_MS;
    unsigned seed = (unsigned)keeper_real_ms() ^ (unsigned)(uintptr_t)p;
    int64_t retry_at = 0;
    int ever = 0;
    while (!atomic_load(&p->stop)) {
        int64_t now = keeper_mono_ms();
        if (now >= retry_at && (keeper_main_up(p) != 0 ||
                                (listen == NULL && (listen = keeper_listen_connect(p)) == NULL))) {
            /* jitter: 75% to 125% of the delay */
            retry_at = now + delay * 3 / 4 + (int64_t)(rand_r(&seed) % (delay / 2 + 1));
            delay = delay * 2 > p->base.opt.backoff_max_ms ? p->base.opt.backoff_max_ms : delay * 2;
        } else if (listen != NULL && !atomic_load(&p->listen_up)) {
            atomic_store(&p->listen_up, 1);
            atomic_store(&p->need_resync, 1);
            if (ever) {
                atomic_fetch_add(&p->reconnects, 1);
            }
            ever = 1;
            delay = KEEPER_BACKOFF_MIN_MS;
        }
        int both = listen != NULL && keeper_main_is_up(p);
        if (both && atomic_exchange(&p->need_resync, 0)) {
            store_event ev = {.type = STORE_EV_RESYNC, .received_ms = keeper_real_ms()};
            if (keeper_deliver(p, &ev) != 0) {
                atomic_store(&p->need_resync, 1);
            }
        }
        int ms = KEEPER_IDLE_MS;
        if (listen == NULL || !both) {
            int64_t left = retry_at - keeper_mono_ms();
            ms = left < ms ? (int)left : ms;
        }
        if (atomic_load(&p->need_resync)) {
            ms = ms < 100 ? ms : 100; /* the watcher could not apply: try again soon */
        }
        keeper_sleep(p, listen, ms);
        keeper_probe_main(p);
        if (listen != NULL) {
            if (!PQconsumeInput(listen) || PQstatus(listen) == CONNECTION_BAD) {
                PQfinish(listen);
                listen = NULL;
                atomic_store(&p->listen_up, 0);
                atomic_fetch_add(&p->disconnects, 1);
                keeper_probe_main(p); /* the server is likely gone for both */
                retry_at = 0;
                store_event ev = {.type = STORE_EV_DISCONNECTED, .received_ms = keeper_real_ms()};
                keeper_deliver(p, &ev);
            } else {
                keeper_drain(p, listen);
            }
        }
    }
    PQfinish(listen);
    atomic_store(&p->listen_up, 0);
    return NULL;
}

int store_pg_keeper_start(store_pg *p) {
    if (pthread_create(&p->thread, NULL, keeper_main, p) != 0) {
        return -1;
    }
    p->thread_started = 1;
    return 0;
}

void store_pg_keeper_stop(store_pg *p) {
    if (!p->thread_started) {
        return;
    }
    atomic_store(&p->stop, 1);
    store_pg_wake(p);
    pthread_join(p->thread, NULL);
    p->thread_started = 0;
}

store_status store_pg_watch(store *s, store_watch_fn fn, void *ctx) {
    store_pg *p = PG(s);
    pthread_mutex_lock(&p->cb_lock);
    int busy = p->fn != NULL;
    if (!busy) {
        p->fn = fn;
        p->ctx = ctx;
    }
    pthread_mutex_unlock(&p->cb_lock);
    if (busy) {
        return STORE_INVALID_ARG;
    }
    atomic_store(&p->need_resync, 1);
    store_pg_wake(p);
    return STORE_OK;
}

void store_pg_unwatch(store *s) {
    store_pg *p = PG(s);
    pthread_mutex_lock(&p->cb_lock); /* waits for a callback in progress */
    p->fn = NULL;
    p->ctx = NULL;
    pthread_mutex_unlock(&p->cb_lock);
}
