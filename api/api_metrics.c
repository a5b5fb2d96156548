/*
 * api_metrics: request counters and latency histograms, exposed as
 * Prometheus text on GET /metrics.
 *
 * Every counter is a relaxed atomic in a fixed array indexed by route (one
 * row of the route table: the pattern and its method, so
 * /v1/navmeshes/{name} is one series however many meshes exist) and exact
 * HTTP status (the contract asks for counts and latencies per endpoint and
 * status): recording a request takes no lock and allocates nothing. The
 * statuses navd sends are few and known (STATUS_LIST), so the arrays are
 * fixed (about 30 KB); any other status, or a connection that ended before
 * a response was sent (status 0), counts under status="other". Requests
 * that matched no route count under route="none", method="other".
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_cache_hook.h"
#include "api/api_internal.h"
#include "api/api_replica.h"

#define NROUTES (API_ROUTE_COUNT + 1) /* + "none" */

/*
 * Every status navd answers with: those of API_CODE_LIST (api_error.h) and
 * the viewer's 304. A status added there belongs here too (the unit test in
 * tests/check_api_metrics.c fails otherwise); until then it counts as
 * "other", never out of bounds.
 */
#define STATUS_LIST(X)                                                                             \
    X(200)                                                                                         \
    X(201)                                                                                         \
    X(202) X(204) X(304) X(400) X(401) X(403) X(404) X(405) X(413) X(415) X(422) X(500) X(503)

enum {
#define STATUS_ENUM(code) ST_##code,
    STATUS_LIST(STATUS_ENUM)
#undef STATUS_ENUM
        ST_OTHER,
    NSTATUS
};

static const char *const status_label[NSTATUS] = {
#define STATUS_NAME(code) #code,
    STATUS_LIST(STATUS_NAME)
#undef STATUS_NAME
        "other"};

/* status -> slot + 1 (0: not listed), so a lookup is one load */
#define STATUS_MAX 600
static const unsigned char status_slot[STATUS_MAX] = {
#define STATUS_SLOT(code) [code] = ST_##code + 1,
    STATUS_LIST(STATUS_SLOT)
#undef STATUS_SLOT
};

static unsigned slot_of(unsigned http_status) {
    if (http_status >= STATUS_MAX || status_slot[http_status] == 0)
        return ST_OTHER;
    return status_slot[http_status] - 1u;
}

/* Upper bounds of the latency buckets, seconds (+Inf is implicit). */
static const double bucket_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
#define NBUCKETS (sizeof bucket_le / sizeof bucket_le[0])

/* A request's count is the sum of its histogram's buckets: no separate counter. */
static atomic_ullong buckets[NROUTES][NSTATUS][NBUCKETS + 1]; /* not cumulative; last = +Inf */
static atomic_ullong duration_ns[NROUTES][NSTATUS];

static api_cache_stats_fn cache_fn;
static void *cache_ctx;

void api_cache_hook_set(api_cache_stats_fn fn, void *ctx) {
    cache_ctx = ctx;
    cache_fn = fn;
}

void api_metrics_observe(unsigned route, unsigned http_status, double seconds) {
    if (route >= NROUTES)
        route = API_ROUTE_COUNT;
    unsigned st = slot_of(http_status);
    size_t b = 0;
    while (b < NBUCKETS && seconds > bucket_le[b])
        b++;
    atomic_fetch_add_explicit(&buckets[route][st][b], 1, memory_order_relaxed);
    double ns = seconds > 0 ? seconds * 1e9 : 0;
    atomic_fetch_add_explicit(&duration_ns[route][st], (unsigned long long)ns,
                              memory_order_relaxed);
}

/* A growable text buffer; on allocation failure it stops growing and render returns NULL. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

static const char *route_label(unsigned r) {
    return r < API_ROUTE_COUNT ? api_route_pattern(r) : "none";
}

static const char *method_label(unsigned r) {
    return r < API_ROUTE_COUNT ? api_route_method(r) : "other";
}

/* The requests of one (route, status) series: its histogram's total. */
static unsigned long long series_count(unsigned r, unsigned st) {
    unsigned long long n = 0;
    for (size_t i = 0; i <= NBUCKETS; i++)
        n += atomic_load_explicit(&buckets[r][st][i], memory_order_relaxed);
    return n;
}

char *api_metrics_render(api_registry *reg, unsigned in_flight, unsigned writes_pending,
                         size_t *len) {
    sbuf b = {0};
    /* One snapshot of the counts, so navd_requests_total equals the
       histogram's _count in the same scrape. */
    unsigned long long count[NROUTES][NSTATUS];
    for (unsigned r = 0; r < NROUTES; r++)
        for (unsigned st = 0; st < NSTATUS; st++)
            count[r][st] = series_count(r, st);
    sb_printf(&b, "# HELP navd_requests_total HTTP requests answered, by route pattern, method "
                  "and status code.\n# TYPE navd_requests_total counter\n");
    for (unsigned r = 0; r < NROUTES; r++)
        for (unsigned st = 0; st < NSTATUS; st++)
            if (count[r][st])
                sb_printf(&b,
                          "navd_requests_total{route=\"%s\",method=\"%s\",status=\"%s\"} %llu\n",
                          route_label(r), method_label(r), status_label[st], count[r][st]);
    sb_printf(&b, "# HELP navd_request_duration_seconds Time from the request's headers to the "
                  "response being sent, by route pattern, method and status code.\n"
                  "# TYPE navd_request_duration_seconds histogram\n");
    for (unsigned r = 0; r < NROUTES; r++)
        for (unsigned st = 0; st < NSTATUS; st++) {
            if (count[r][st] == 0)
                continue;
            char labels[160];
            snprintf(labels, sizeof labels, "route=\"%s\",method=\"%s\",status=\"%s\"",
                     route_label(r), method_label(r), status_label[st]);
            /* cumulative buckets, capped at the snapshot so +Inf == _count
               even when a request lands during the scrape */
            unsigned long long cum = 0;
            for (size_t i = 0; i < NBUCKETS; i++) {
                cum += atomic_load_explicit(&buckets[r][st][i], memory_order_relaxed);
                if (cum > count[r][st])
                    cum = count[r][st];
                sb_printf(&b, "navd_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", labels,
                          bucket_le[i], cum);
            }
            sb_printf(&b, "navd_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", labels,
                      count[r][st]);
            sb_printf(&b, "navd_request_duration_seconds_sum{%s} %.9f\n", labels,
                      (double)atomic_load_explicit(&duration_ns[r][st], memory_order_relaxed) /
                          1e9);
            sb_printf(&b, "navd_request_duration_seconds_count{%s} %llu\n", labels, count[r][st]);
        }
    /* Operators watch it drain during a graceful shutdown; tests use it to
       know a request has reached the server, not just the socket buffer. */
    sb_printf(&b,
              "# HELP navd_requests_in_flight Requests being served, this scrape included.\n"
              "# TYPE navd_requests_in_flight gauge\nnavd_requests_in_flight %u\n",
              in_flight);
    /* Writes queued for or running on the writer thread: at
       --max-pending-writes, further PUTs and DELETEs get 503. */
    sb_printf(&b,
              "# HELP navd_writes_pending Navmesh writes waiting for or running on the writer "
              "thread.\n# TYPE navd_writes_pending gauge\nnavd_writes_pending %u\n",
              writes_pending);
    sb_printf(&b,
              "# HELP navd_navmeshes_loaded Navmeshes in memory.\n"
              "# TYPE navd_navmeshes_loaded gauge\nnavd_navmeshes_loaded %zu\n",
              reg ? api_registry_count(reg) : (size_t)0);
    api_cache_stats cs = {0};
    if (cache_fn)
        cache_fn(cache_ctx, &cs);
    sb_printf(&b,
              "# HELP navd_path_cache_hits Path queries answered from the cache.\n"
              "# TYPE navd_path_cache_hits counter\nnavd_path_cache_hits %llu\n"
              "# HELP navd_path_cache_misses Path queries searched and stored.\n"
              "# TYPE navd_path_cache_misses counter\nnavd_path_cache_misses %llu\n"
              "# HELP navd_path_cache_evictions Entries evicted to stay within the budget.\n"
              "# TYPE navd_path_cache_evictions counter\n"
              "navd_path_cache_evictions %llu\n"
              "# HELP navd_path_cache_entries Entries in the path cache.\n"
              "# TYPE navd_path_cache_entries gauge\nnavd_path_cache_entries %llu\n"
              "# HELP navd_path_cache_bytes Bytes held by the path cache.\n"
              "# TYPE navd_path_cache_bytes gauge\nnavd_path_cache_bytes %llu\n",
              (unsigned long long)cs.hits, (unsigned long long)cs.misses,
              (unsigned long long)cs.evictions, (unsigned long long)cs.entries,
              (unsigned long long)cs.bytes);
    if (reg) {
        /* the store's state and, with PostgreSQL, how replicas keep up */
        char *rep = api_replica_metrics(reg);
        if (rep)
            sb_printf(&b, "%s", rep);
        else
            b.failed = 1;
        free(rep);
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
