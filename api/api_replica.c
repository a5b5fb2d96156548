/*
 * api_replica: applies the store's change notifications to the registry and
 * counts them (see api_replica.h). Counters are relaxed atomics, read
 * without a lock by /metrics.
 */
#include "api/api_replica.h"
#include "api/api_volume.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/api_log.h"

/* Upper bounds of the lag buckets, seconds (+Inf implicit). */
static const double lag_le[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                0.25,  0.5,    1,     2.5,  5,     10};
#define NLAG (sizeof lag_le / sizeof lag_le[0])

static atomic_ullong lag_buckets[NLAG + 1]; /* not cumulative; last = +Inf */
static atomic_ullong lag_sum_us;
static atomic_ullong loads, removals, resyncs, failures;

static int64_t replica_real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void lag_observe(int64_t ms) {
    if (ms < 0)
        ms = 0; /* the writer's clock ahead of ours */
    double s = (double)ms / 1000.0;
    size_t b = 0;
    while (b < NLAG && s > lag_le[b])
        b++;
    atomic_fetch_add_explicit(&lag_buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&lag_sum_us, (unsigned long long)ms * 1000, memory_order_relaxed);
}

/* The store's keeper thread calls this, one event at a time. */
static int replica_on_event(void *ctx, const store_event *ev) {
    api_registry *reg = ctx;
    if (ev->type == STORE_EV_DISCONNECTED) {
        api_log(API_LOG_WARN, "lost the connection to the store: queries go on from memory, "
                              "writes answer 503 until it is back");
        return 0;
    }
    if (ev->type == STORE_EV_RESYNC) {
        long n = api_registry_resync(reg);
        long nv = api_volumes_resync(api_registry_volumes(reg));
        if (nv > 0)
            api_log(API_LOG_INFO, "store connected; %ld flight volume%s loaded or removed", nv,
                    nv == 1 ? "" : "s");
        if (nv < 0)
            n = -1;
        if (n < 0) {
            atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
            return -1; /* the store will ask again */
        }
        /* the first one follows start-up's load and normally finds nothing */
        if (atomic_fetch_add_explicit(&resyncs, 1, memory_order_relaxed) > 0 || n > 0)
            api_log(API_LOG_INFO,
                    "store connected; compared versions: %ld navmesh%s loaded or removed", n,
                    n == 1 ? "" : "es");
        return 0;
    }
    if (ev->kind == STORE_VOLUME)
        return api_volumes_sync(api_registry_volumes(reg), ev->name) == API_SYNC_FAILED ? -1 : 0;
    if (ev->kind != STORE_NAVMESH)
        return 0; /* levels are read from the store per request */
    store_meta meta;
    switch (api_registry_sync(reg, ev->name, &meta)) {
    case API_SYNC_LOADED:
        atomic_fetch_add_explicit(&loads, 1, memory_order_relaxed);
        lag_observe(replica_real_ms() - meta.updated_ms);
        api_log(API_LOG_DEBUG, "navmesh '%s' version %lld loaded from the store", ev->name,
                (long long)meta.version);
        return 0;
    case API_SYNC_REMOVED:
        atomic_fetch_add_explicit(&removals, 1, memory_order_relaxed);
        return 0;
    case API_SYNC_SAME:
        return 0;
    case API_SYNC_FAILED:
        break;
    }
    atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
    return -1;
}

int api_replica_start(api_registry *reg) {
    return store_watch(api_registry_store(reg), replica_on_event, reg) == STORE_OK ? 0 : -1;
}

void api_replica_stop(api_registry *reg) {
    store_unwatch(api_registry_store(reg));
}

char *api_replica_metrics(api_registry *reg) {
    store *st = api_registry_store(reg);
    store_stats ss;
    store_get_stats(st, &ss);
    size_t cap = 6144, len = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
#define OUT(...) len += (size_t)snprintf(b + len, len < cap ? cap - len : 0, __VA_ARGS__)
    OUT("# HELP navd_store_connected 1 when the store takes writes (PostgreSQL: both "
        "connections up).\n# TYPE navd_store_connected gauge\n"
        "navd_store_connected{kind=\"%s\"} %d\n",
        store_backend(st), ss.connected);
    OUT("# HELP navd_store_reconnects_total Connections to PostgreSQL re-established.\n"
        "# TYPE navd_store_reconnects_total counter\nnavd_store_reconnects_total %llu\n",
        (unsigned long long)ss.reconnects);
    OUT("# HELP navd_store_disconnects_total Connections to PostgreSQL lost.\n"
        "# TYPE navd_store_disconnects_total counter\nnavd_store_disconnects_total %llu\n",
        (unsigned long long)ss.disconnects);
    OUT("# HELP navd_store_notifications_total Change notifications received.\n"
        "# TYPE navd_store_notifications_total counter\nnavd_store_notifications_total %llu\n",
        (unsigned long long)ss.notifications);
    OUT("# HELP navd_replica_loads_total Navmesh versions written elsewhere and loaded here.\n"
        "# TYPE navd_replica_loads_total counter\nnavd_replica_loads_total %llu\n",
        atomic_load_explicit(&loads, memory_order_relaxed));
    OUT("# HELP navd_replica_removals_total Navmeshes deleted elsewhere and removed here.\n"
        "# TYPE navd_replica_removals_total counter\nnavd_replica_removals_total %llu\n",
        atomic_load_explicit(&removals, memory_order_relaxed));
    OUT("# HELP navd_replica_resyncs_total Full comparisons with the store (one per "
        "(re)connection).\n# TYPE navd_replica_resyncs_total counter\n"
        "navd_replica_resyncs_total %llu\n",
        atomic_load_explicit(&resyncs, memory_order_relaxed));
    OUT("# HELP navd_replica_sync_failures_total Changes that could not be applied at once "
        "(retried by a resync).\n# TYPE navd_replica_sync_failures_total counter\n"
        "navd_replica_sync_failures_total %llu\n",
        atomic_load_explicit(&failures, memory_order_relaxed));
    OUT("# HELP navd_replica_lag_seconds From a write's commit (the writer's clock) to the new "
        "version answering here.\n# TYPE navd_replica_lag_seconds histogram\n");
    unsigned long long cum = 0;
    for (size_t i = 0; i <= NLAG; i++) {
        cum += atomic_load_explicit(&lag_buckets[i], memory_order_relaxed);
        if (i < NLAG)
            OUT("navd_replica_lag_seconds_bucket{le=\"%g\"} %llu\n", lag_le[i], cum);
    }
    OUT("navd_replica_lag_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
    OUT("navd_replica_lag_seconds_sum %.6f\n",
        (double)atomic_load_explicit(&lag_sum_us, memory_order_relaxed) / 1e6);
    OUT("navd_replica_lag_seconds_count %llu\n", cum);
#undef OUT
    if (len >= cap) {
        free(b);
        return NULL; /* cap is sized for the text above; never truncate silently */
    }
    return b;
}
