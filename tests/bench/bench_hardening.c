/*
 * bench_hardening: the figures of the hardening issue, against the real
 * binary on loopback.
 *
 * 1. Writers under load: 100 replaces of dungeon (PUT of the shared mesh)
 *    while clients keep every worker busy with path queries on it; prints
 *    the replaces' p50 / p99 / max latency (target: p99 under 1 s) and how
 *    many queries ran meanwhile.
 * 2. The health lane: /health and /metrics latency (p50 / p99 / max of 40
 *    probes) while every query thread runs a maximal step (10,000 agents on
 *    a 22,500-polygon grid, cache off, each running to the default 2 s
 *    request deadline).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

typedef struct bh_shared {
    int port;
    atomic_int stop;
    atomic_long queries;
    const char *body; /* what the load threads send */
    const char *path; /* where */
} bh_shared;

static void *bh_load(void *arg) {
    bh_shared *sh = arg;
    th_conn c;
    if (th_connect(&c, sh->port) != 0)
        return NULL;
    while (!atomic_load(&sh->stop)) {
        th_response r;
        if (th_conn_request(&c, "POST", sh->path, "application/json", sh->body, strlen(sh->body),
                            NULL, &r) != 0) {
            th_close(&c);
            if (th_connect(&c, sh->port) != 0)
                break;
            continue;
        }
        th_response_free(&r);
        atomic_fetch_add(&sh->queries, 1);
    }
    th_close(&c);
    return NULL;
}

static int bh_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bh_print(const char *what, double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bh_cmp);
    int p99 = (int)(0.99 * (n - 1) + 0.5);
    printf("  %-44s p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms  (n = %d)\n", what, v[n / 2] * 1e3,
           v[p99] * 1e3, v[n - 1] * 1e3, n);
}

static void bh_replaces(void) {
    th_server s;
    printf("\nwriters under load (100 replaces of dungeon while every worker runs path queries)\n");
    if (bench_start_dungeon(&s, "  ") != 201) {
        th_stop(&s);
        th_cleanup(&s);
        return;
    }
    const char *mp = fx_shared_mesh_path("dungeon.navmesh.json");
    size_t mlen = 0;
    char *mesh = mp ? fx_read_file(mp, &mlen) : NULL;
    /* The longest complete reference query: the most work per request. */
    const char *qpath = fx_shared_mesh_path("dungeon.queries.json");
    char *qp = qpath ? strdup(qpath) : NULL;
    uint32_t nq = 0;
    mj_query *qs = qp ? mj_queries(qp, &nq) : NULL;
    free(qp);
    char body[256] = "{}";
    double best = -1;
    for (uint32_t i = 0; i < nq; i++)
        if (qs[i].complete && qs[i].length3d > best) {
            best = qs[i].length3d;
            snprintf(body, sizeof body,
                     "{\"start\":[%.9g,%.9g,%.9g],\"end\":[%.9g,%.9g,%.9g],\"cache\":false}",
                     qs[i].start[0], qs[i].start[1], qs[i].start[2], qs[i].end[0], qs[i].end[1],
                     qs[i].end[2]);
        }
    free(qs);
    bh_shared sh = {.port = s.port, .path = "/v1/navmeshes/dungeon/path", .body = body};
    enum { LOADERS = 8, REPLACES = 100 };
    pthread_t th[LOADERS];
    for (int i = 0; i < LOADERS; i++)
        pthread_create(&th[i], NULL, bh_load, &sh);
    usleep(300 * 1000);
    static double lat[REPLACES];
    int n = 0;
    long q0 = atomic_load(&sh.queries);
    for (int i = 0; mesh && i < REPLACES; i++) {
        th_response r;
        double t0 = bench_now();
        int rc = th_request(s.port, "PUT", "/v1/navmeshes/dungeon", "application/json", mesh, mlen,
                            NULL, &r);
        double dt = bench_now() - t0;
        if (rc == 0 && r.status == 200)
            lat[n++] = dt;
        th_response_free(&r);
    }
    long q1 = atomic_load(&sh.queries);
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < LOADERS; i++)
        pthread_join(th[i], NULL);
    if (n > 0)
        bh_print("replace (PUT dungeon) under query load", lat, n);
    printf("  %ld path queries answered during the replaces (%d load connections)\n", q1 - q0,
           LOADERS);
    free(mesh);
    th_stop(&s);
    th_cleanup(&s);
}

static void bh_lane(void) {
    printf("\nthe health lane (/health and /metrics while every query thread runs a maximal "
           "step)\n");
    th_server s;
    const char *args[] = {"--threads", "2", NULL};
    if (th_start(&s, NULL, args) != 0) {
        printf("  navd did not start: skipped\n");
        th_cleanup(&s);
        return;
    }
    enum { N = 150, AGENTS = 10000, PROBES = 40 };
    char *mesh = fx_grid_json(N);
    th_response r;
    th_request(s.port, "PUT", "/v1/navmeshes/grid", "application/json", mesh, strlen(mesh), NULL,
               &r);
    th_response_free(&r);
    free(mesh);
    char *body = fx_step_body(AGENTS, N);
    bh_shared sh = {.port = s.port, .path = "/v1/navmeshes/grid/step", .body = body};
    enum { LOADERS = 4 };
    pthread_t th[LOADERS];
    for (int i = 0; i < LOADERS; i++)
        pthread_create(&th[i], NULL, bh_load, &sh);
    usleep(1000 * 1000);
    static double lat[PROBES];
    for (int i = 0; i < PROBES; i++) {
        double t0 = bench_now();
        th_request(s.port, "GET", i % 2 ? "/metrics" : "/health", NULL, NULL, 0, NULL, &r);
        lat[i] = bench_now() - t0;
        th_response_free(&r);
        usleep(50 * 1000);
    }
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < LOADERS; i++)
        pthread_join(th[i], NULL);
    bh_print("/health, /metrics beside maximal steps", lat, PROBES);
    printf("  %ld maximal steps answered meanwhile (%d clients, 2 query threads)\n",
           atomic_load(&sh.queries), LOADERS);
    free(body);
    th_stop(&s);
    th_cleanup(&s);
}

void bench_hardening(void) {
    bh_replaces();
    bh_lane();
}
