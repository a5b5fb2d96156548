/*
 * bench_main: the `make bench` runner. Prints figures and ratios (never
 * asserts on time):
 * - nav/ in-process, uncached path queries (both snaps + search + string
 *   pulling) on the shared Recast meshes, against Detour itself run on the
 *   same meshes and queries in this process (tests/bench/detour_ref.cpp),
 *   corridor vs AUTO;
 * - a generated large mesh (fx_random 320 x 320 with holes and islands):
 *   us/query for short, medium and cross-map paths, bytes per polygon,
 *   build and (deserialize) load time;
 * - the path cache on "many agents converging on a few targets": hit rate
 *   and speed-up over uncached;
 * - HTTP against the real binary (NAVD_BIN) with a small keep-alive load
 *   generator (several connections, one thread each): requests/s of
 *   GET /health, cached POST path and uncached POST path, and the ratio
 *   cached-path / health (target >= 0.7); the same three through wrk when
 *   it is installed (a lighter client, so the ratio is more navd's own);
 * - then the optimal and steering helpers' bench functions when linked.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query.h"
#include "tests/bench/bench.h"
#include "tests/bench/detour_ref.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *const SHARED[] = {"dungeon", "nav_test", "undulating", "town"};

typedef struct pbuf {
    float corners[3 * 1024];
    uint32_t polys[4096];
    uint32_t links[64];
    nav_path_result res;
} pbuf;

static void pbuf_init(pbuf *b) {
    memset(&b->res, 0, sizeof(b->res));
    b->res.corners = b->corners;
    b->res.max_corners = 1024;
    b->res.polys = b->polys;
    b->res.max_polys = 4096;
    b->res.links = b->links;
    b->res.max_links = 64;
}

/* ---------------------------------------------------------------- shared meshes */

/* Best of `reps` passes over all queries (other processes share the two
   cores: the fastest pass is the least disturbed one), us per query. */
static double time_queries(nav_query *q, const nav_mesh *m, const mj_query *qs, uint32_t n,
                           nav_algo algo, int reps, pbuf *b) {
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (uint32_t i = 0; i < n; i++) {
            nav_path_request req = {.extents = {2, 4, 2}, .algorithm = algo};
            memcpy(req.start, qs[i].start, sizeof(req.start));
            memcpy(req.end, qs[i].end, sizeof(req.end));
            b->res.ncorners = 0;
            nav_find_path(q, m, &req, &b->res);
        }
        double us = (bench_now() - t0) * 1e6 / n;
        best = us < best ? us : best;
    }
    return best;
}

/* Detour on the same mesh and queries, best of `reps` passes, us per
   query; -1 when Detour cannot hold the mesh. */
static double time_detour(const nav_mesh *m, const mj_query *qs, uint32_t n, int reps) {
    detour_ref *d = detour_ref_new(m->verts, m->nverts, m->poly_start, m->poly_verts, m->poly_nei,
                                   m->npolys, 65535);
    if (!d)
        return -1;
    const float ext[3] = {2, 4, 2};
    double best = 1e300;
    for (int r = 0; r <= reps; r++) { /* pass 0 warms up */
        double t0 = bench_now();
        for (uint32_t i = 0; i < n; i++)
            detour_ref_path(d, qs[i].start, qs[i].end, ext, NULL, NULL);
        double us = (bench_now() - t0) * 1e6 / n;
        best = r > 0 && us < best ? us : best;
    }
    detour_ref_free(d);
    return best;
}

static void bench_shared(void) {
    printf("\n== nav/ in-process, uncached (snap both + search + string pull) against Detour "
           "(findNearestPoly x2 + findPath + findStraightPath) in this process; best of 9 "
           "passes over the 2000 reference queries\n");
    nav_query *q = nav_query_new(65536);
    pbuf *b = malloc(sizeof(*b));
    pbuf_init(b);
    for (size_t k = 0; k < sizeof(SHARED) / sizeof(SHARED[0]); k++) {
        char file[128];
        /* fx_shared_mesh_path returns a static buffer: use each path at once */
        snprintf(file, sizeof(file), "%s.navmesh.json", SHARED[k]);
        const char *mp = fx_shared_mesh_path(file);
        if (!mp) {
            printf("  ../shared absent: skipping %s\n", SHARED[k]);
            continue;
        }
        nav_mesh *m = mj_load(mp);
        snprintf(file, sizeof(file), "%s.queries.json", SHARED[k]);
        const char *qp = fx_shared_mesh_path(file);
        uint32_t n = 0;
        mj_query *qs = qp ? mj_queries(qp, &n) : NULL;
        if (!m || !qs) {
            printf("  %s: cannot load\n", SHARED[k]);
            nav_mesh_free(m);
            free(qs);
            continue;
        }
        time_queries(q, m, qs, n, NAV_ALGO_CORRIDOR, 1, b); /* warm up */
        double uc = time_queries(q, m, qs, n, NAV_ALGO_CORRIDOR, 9, b);
        double ua = time_queries(q, m, qs, n, NAV_ALGO_AUTO, 9, b);
        double ud = time_detour(m, qs, n, 9);
        if (ud > 0)
            printf("  %-10s %4u polys: Detour %6.2f us/query, corridor %6.2f (/Detour %.2f), AUTO "
                   "%6.2f (/Detour %.2f), AUTO/corridor %.2f\n",
                   SHARED[k], nav_mesh_polygon_count(m), ud, uc, uc / ud, ua, ua / ud, ua / uc);
        else
            printf("  %-10s %4u polys: Detour refused the mesh; corridor %6.2f us/query, AUTO "
                   "%6.2f, AUTO/corridor %.2f\n",
                   SHARED[k], nav_mesh_polygon_count(m), uc, ua, ua / uc);
        free(qs);
        nav_mesh_free(m);
    }
    free(b);
    nav_query_free(q);
}

/* ---------------------------------------------------------------- large mesh */

static void bench_band(nav_query *q, const nav_mesh *m, const char *name, double dmin, double dmax,
                       int npairs, pbuf *b) {
    uint32_t rng = 12345u + (uint32_t)dmin;
    nav_path_request *reqs = calloc((size_t)npairs, sizeof(*reqs));
    int n = 0;
    for (int tries = 0; n < npairs && tries < npairs * 2000; tries++) {
        float s[3], e[3];
        uint32_t ps = fx_random_point(m, &rng, s), pe = fx_random_point(m, &rng, e);
        double d = nav_dist2d(s, e);
        if (d < dmin || d > dmax || !nav_mesh_reachable(m, ps, pe))
            continue;
        nav_path_request r = {.extents = {0.5f, 1, 0.5f}, .algorithm = NAV_ALGO_AUTO};
        memcpy(r.start, s, sizeof(s));
        memcpy(r.end, e, sizeof(e));
        reqs[n++] = r;
    }
    for (int algo = 0; algo < 2; algo++) {
        double t0 = bench_now(), len = 0, nodes = 0;
        int partial = 0;
        for (int i = 0; i < n; i++) {
            reqs[i].algorithm = algo ? NAV_ALGO_AUTO : NAV_ALGO_CORRIDOR;
            nav_find_path(q, m, &reqs[i], &b->res);
            len += b->res.length;
            nodes += b->res.nodes_expanded;
            partial += (b->res.flags & 3) != 0;
        }
        double us = (bench_now() - t0) * 1e6 / (n ? n : 1);
        printf("  %-9s (%3.0f-%4.0f m, %3d pairs) %-8s %9.1f us/query, mean length %7.1f m, "
               "mean nodes %8.0f, partial %d\n",
               name, dmin, dmax, n, algo ? "AUTO" : "corridor", us, n ? len / n : 0,
               n ? nodes / n : 0, partial);
    }
    free(reqs);
}

static void bench_large(void) {
    printf("\n== generated large mesh (fx_random 320 x 320, holes 20%%, islands)\n");
    fx_random_opts o = fx_random_defaults();
    o.width = 320;
    o.height = 320;
    o.cell = 1.0f;
    o.hole_ratio = 0.2f;
    o.triangulate = 1;
    o.islands = 1;
    double t0 = bench_now();
    nav_mesh *m = fx_random(2024, &o);
    double tb = bench_now() - t0;
    uint32_t np = nav_mesh_polygon_count(m);
    size_t mem = nav_mesh_memory(m);
    uint8_t *blob = NULL;
    size_t blen = 0;
    double tl = 0;
    if (nav_mesh_serialize(m, &blob, &blen) == NAV_OK) {
        nav_mesh *m2 = NULL;
        nav_error err;
        t0 = bench_now();
        nav_mesh_deserialize(blob, blen, &m2, &err);
        tl = bench_now() - t0;
        nav_mesh_free(m2);
        free(blob);
    }
    printf("  %u polygons, %u components, %.1f bytes/polygon (%.1f MiB), build (generate + "
           "nav_mesh_build) %.1f ms, load (deserialize %.1f MiB) %.1f ms\n",
           np, nav_mesh_component_count(m), (double)mem / np, mem / 1048576.0, tb * 1e3,
           blen / 1048576.0, tl * 1e3);
    nav_query *q = nav_query_new(1u << 18);
    pbuf *b = malloc(sizeof(*b));
    pbuf_init(b);
    bench_band(q, m, "short", 2, 10, 400, b);
    bench_band(q, m, "medium", 40, 80, 200, b);
    bench_band(q, m, "cross-map", 250, 1000, 40, b);
    free(b);
    nav_query_free(q);
    nav_mesh_free(m);
}

/* ---------------------------------------------------------------- cache workload */

static void bench_cache(void) {
    printf("\n== path cache: many agents converging on a few targets\n");
    const char *mp = fx_shared_mesh_path("undulating.navmesh.json");
    nav_mesh *m = mp ? mj_load(mp) : NULL;
    const char *mesh_name = "undulating";
    if (!m) {
        m = fx_random(77, NULL);
        mesh_name = "fx_random(77)";
    }
    enum { AGENTS = 1000, TARGETS = 4, TICKS = 40 };
    const float step = 1.5f; /* metres per tick */
    uint32_t rng = 4242;
    float pos[AGENTS][3], targets[TARGETS][3];
    for (int t = 0; t < TARGETS; t++)
        fx_random_point(m, &rng, targets[t]);
    for (int a = 0; a < AGENTS; a++)
        fx_random_point(m, &rng, pos[a]);
    size_t nreq = (size_t)AGENTS * TICKS;
    nav_path_request *reqs = calloc(nreq, sizeof(*reqs));
    nav_query *q = nav_query_new(65536);
    pbuf *b = malloc(sizeof(*b));
    pbuf_init(b);
    nav_cache *c = nav_cache_new(64u << 20, 16);
    /* Simulate with the reuse entry point (what steering uses), recording
       every request; then replay the same requests through each variant. */
    size_t k = 0;
    for (int tick = 0; tick < TICKS; tick++) {
        for (int a = 0; a < AGENTS; a++) {
            nav_path_request r = {.extents = {2, 4, 2}, .algorithm = NAV_ALGO_AUTO};
            memcpy(r.start, pos[a], sizeof(r.start));
            memcpy(r.end, targets[a % TARGETS], sizeof(r.end));
            reqs[k++] = r;
            nav_cache_result o;
            if (nav_find_path_reuse(q, c, m, &r, &b->res, &o) != NAV_OK || b->res.ncorners < 2)
                continue;
            const float *n1 = &b->corners[3];
            double d = nav_dist3d(pos[a], n1);
            double f = d <= step ? 1.0 : step / d;
            for (int i = 0; i < 3; i++)
                pos[a][i] = (float)(pos[a][i] + f * (n1[i] - pos[a][i]));
        }
    }
    nav_cache_free(c);
    const char *names[] = {"uncached", "nav_find_path_cached (path endpoint)",
                           "nav_find_path_reuse (steering)"};
    double base = 0;
    for (int v = 0; v < 3; v++) {
        nav_cache *cc = v ? nav_cache_new(64u << 20, 16) : NULL;
        double t0 = bench_now();
        for (size_t i = 0; i < nreq; i++) {
            nav_cache_result o;
            if (v == 0)
                nav_find_path(q, m, &reqs[i], &b->res);
            else if (v == 1)
                nav_find_path_cached(q, cc, m, &reqs[i], &b->res, &o);
            else
                nav_find_path_reuse(q, cc, m, &reqs[i], &b->res, &o);
        }
        double us = (bench_now() - t0) * 1e6 / nreq;
        if (v == 0) {
            base = us;
            printf("  %s, %d agents, %d targets, %d ticks (%zu requests): %-38s %6.2f us/query\n",
                   mesh_name, AGENTS, TARGETS, TICKS, nreq, names[v], us);
        } else {
            nav_cache_stats s;
            nav_cache_stats_get(cc, &s);
            printf("  %-38s %6.2f us/query, hit rate %5.1f%% (corridor reuse %5.1f%%), speed-up "
                   "%.2fx, %llu entries, %.1f KiB\n",
                   names[v], us, 100.0 * s.hits / (s.hits + s.misses),
                   100.0 * s.corridor_hits / (s.hits + s.misses), base / us,
                   (unsigned long long)s.entries, s.bytes / 1024.0);
        }
        nav_cache_free(cc);
    }
    free(b);
    free(reqs);
    nav_query_free(q);
    nav_mesh_free(m);
}

/* ---------------------------------------------------------------- HTTP */

typedef struct load_arg {
    int port;
    const char *method, *path;
    char **bodies;
    int nbodies;
    double seconds;
    long ok, fail;
    int offset;
} load_arg;

static void *load_thread(void *p) {
    load_arg *a = p;
    th_conn c;
    if (th_connect(&c, a->port) != 0) {
        a->fail++;
        return NULL;
    }
    double end = bench_now() + a->seconds;
    int i = a->offset;
    while (bench_now() < end) {
        const char *body = a->bodies ? a->bodies[i++ % a->nbodies] : NULL;
        th_response r;
        memset(&r, 0, sizeof(r));
        int rc = th_conn_request(&c, a->method, a->path, body ? "application/json" : NULL, body,
                                 body ? strlen(body) : 0, NULL, &r);
        if (rc == 0 && r.status == 200) {
            a->ok++;
        } else {
            a->fail++;
            th_response_free(&r);
            th_close(&c);
            if (th_connect(&c, a->port) != 0)
                break;
            continue;
        }
        th_response_free(&r);
    }
    th_close(&c);
    return NULL;
}

static double run_load(int port, int conns, const char *method, const char *path, char **bodies,
                       int nbodies, double seconds, long *fails) {
    pthread_t th[16];
    load_arg args[16];
    for (int i = 0; i < conns; i++) {
        args[i] = (load_arg){port, method, path, bodies, nbodies, seconds, 0, 0, i * 7};
        pthread_create(&th[i], NULL, load_thread, &args[i]);
    }
    long ok = 0, fail = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        ok += args[i].ok;
        fail += args[i].fail;
    }
    *fails = fail;
    return ok / seconds;
}

int bench_start_dungeon(th_server *s, const char *label) {
    const char *mp = fx_shared_mesh_path("dungeon.navmesh.json");
    size_t mlen = 0;
    char *mesh = mp ? fx_read_file(mp, &mlen) : NULL;
    if (!mesh) {
        printf("%s../shared absent: skipped\n", label);
        return -1;
    }
    if (th_start(s, NULL, NULL) != 0) {
        printf("%snavd did not start (NAVD_BIN=%s): skipped\n", label,
               getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "unset");
        th_cleanup(s);
        free(mesh);
        return -1;
    }
    th_response r;
    memset(&r, 0, sizeof r);
    int status = th_request(s->port, "PUT", "/v1/navmeshes/dungeon", "application/json", mesh, mlen,
                            NULL, &r) == 0
                     ? r.status
                     : 0;
    th_response_free(&r);
    free(mesh);
    return status;
}

/* Requests/s that wrk (Debian's `wrk`, an epoll client far lighter than
   the thread-per-connection generator above) measures for `seconds` on 4
   connections; lua: a request script or NULL for GET. < 0 when wrk is
   absent or fails. */
static double wrk_rate(int port, const char *path, const char *lua, int seconds) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "wrk -t2 -c4 -d%ds %s%s http://127.0.0.1:%d%s 2>/dev/null", seconds,
             lua ? "-s " : "", lua ? lua : "", port, path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[512];
    double rate = -1;
    int errors = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Requests/sec:", 13))
            rate = atof(line + 13);
        /* wrk counts error answers as requests: any makes the figure void */
        if (strstr(line, "Non-2xx") || strstr(line, "Socket errors"))
            errors = 1;
    }
    return pclose(f) == 0 && !errors ? rate : -1;
}

/* A wrk script posting the bodies in turn (each wrk thread cycles them). */
static int wrk_script(const char *file, char *const *bodies, int n) {
    FILE *f = fopen(file, "w");
    if (!f)
        return -1;
    fprintf(f, "local bodies = {\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "  [[%s]],\n", bodies[i]);
    fprintf(f, "}\nlocal i = 0\nrequest = function()\n  i = i %% #bodies + 1\n"
               "  return wrk.format(\"POST\", \"/v1/navmeshes/dungeon/path\",\n"
               "    {[\"Content-Type\"] = \"application/json\"}, bodies[i])\nend\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* The same three rates through wrk when it is installed: with the client
   taking less of the 2 cores, the ratio says more about navd itself. */
static void bench_http_wrk(int port, const char *dir, char *const *cached, char *const *uncached,
                           int n) {
    if (system("command -v wrk >/dev/null 2>&1") != 0) {
        printf("  wrk not installed (apt-get install wrk): the wrk figures are skipped\n");
        return;
    }
    char hit_lua[600], miss_lua[600];
    snprintf(hit_lua, sizeof hit_lua, "%s/hit.lua", dir);
    snprintf(miss_lua, sizeof miss_lua, "%s/miss.lua", dir);
    if (wrk_script(hit_lua, cached, n) != 0 || wrk_script(miss_lua, uncached, n) != 0) {
        printf("  cannot write the wrk scripts: skipped\n");
        return;
    }
    const int rounds = 3;
    double health = 0, hit = 0, miss = 0;
    for (int k = 0; k < rounds; k++) {
        double a = wrk_rate(port, "/health", NULL, 1);
        double b = wrk_rate(port, "/v1/navmeshes/dungeon/path", hit_lua, 1);
        double c = wrk_rate(port, "/v1/navmeshes/dungeon/path", miss_lua, 1);
        if (a <= 0 || b <= 0 || c <= 0) {
            printf("  wrk failed or saw error answers: skipped\n");
            return;
        }
        health += a / rounds;
        hit += b / rounds;
        miss += c / rounds;
    }
    printf(
        "  wrk (2 threads, 4 connections, %d x 1 s interleaved): GET /health %.0f req/s; POST path "
        "cached %.0f req/s; uncached %.0f req/s\n",
        rounds, health, hit, miss);
    printf("  wrk ratio cached-path/health %.2f (target >= 0.7), uncached-path/health %.2f\n",
           hit / health, miss / health);
}

static void bench_http(void) {
    printf("\n== HTTP, keep-alive, load generator in tests/bench (one thread per connection)\n");
    /* copied: fx_shared_mesh_path's buffer is static and reused below */
    const char *p = fx_shared_mesh_path("dungeon.queries.json");
    char *qp = p ? strdup(p) : NULL;
    if (!qp) {
        printf("  ../shared absent: skipped\n");
        return;
    }
    th_server s;
    int put_status = bench_start_dungeon(&s, "  ");
    if (put_status < 0) {
        free(qp);
        return;
    }
    th_response r;
    uint32_t nq;
    mj_query *qs = mj_queries(qp, &nq);
    enum { NB = 256 };
    char *cached[NB], *uncached[NB];
    for (int i = 0; i < NB; i++) {
        const mj_query *x = &qs[i % nq];
        char buf[512];
        snprintf(buf, sizeof(buf), "{\"start\":[%.9g,%.9g,%.9g],\"end\":[%.9g,%.9g,%.9g]%s}",
                 x->start[0], x->start[1], x->start[2], x->end[0], x->end[1], x->end[2], "");
        cached[i] = strdup(buf);
        snprintf(buf, sizeof(buf),
                 "{\"start\":[%.9g,%.9g,%.9g],\"end\":[%.9g,%.9g,%.9g],\"cache\":false}",
                 x->start[0], x->start[1], x->start[2], x->end[0], x->end[1], x->end[2]);
        uncached[i] = strdup(buf);
    }
    free(qs);
    free(qp);
    memset(&r, 0, sizeof(r));
    th_json(s.port, "POST", "/v1/navmeshes/dungeon/path", cached[0], &r);
    int path_status = r.status;
    th_response_free(&r);
    if (put_status / 100 != 2 || path_status != 200) {
        printf("  PUT mesh -> %d, POST path -> %d: path endpoint not available, skipped\n",
               put_status, path_status);
    } else {
        const int conns = 4, rounds = 6;
        const double slice = 0.4;
        long f1 = 0, f2 = 0, f3 = 0, f;
        /* warm the cache with every cached body once */
        for (int i = 0; i < NB; i++) {
            memset(&r, 0, sizeof(r));
            th_json(s.port, "POST", "/v1/navmeshes/dungeon/path", cached[i], &r);
            th_response_free(&r);
        }
        /* Interleaved short slices, so load from other processes on the
           machine hits the three cases alike and the ratios stay meaningful. */
        double health = 0, hit = 0, miss = 0;
        for (int k = 0; k < rounds; k++) {
            health += run_load(s.port, conns, "GET", "/health", NULL, 0, slice, &f) / rounds;
            f1 += f;
            hit += run_load(s.port, conns, "POST", "/v1/navmeshes/dungeon/path", cached, NB, slice,
                            &f) /
                   rounds;
            f2 += f;
            miss += run_load(s.port, conns, "POST", "/v1/navmeshes/dungeon/path", uncached, NB,
                             slice, &f) /
                    rounds;
            f3 += f;
        }
        double secs = rounds * slice;
        printf("  %d connections, %.1f s each (interleaved slices): GET /health %.0f req/s; POST "
               "path cached %.0f "
               "req/s; POST path uncached (\"cache\": false) %.0f req/s; failures %ld/%ld/%ld\n",
               conns, secs, health, hit, miss, f1, f2, f3);
        printf("  ratio cached-path/health %.2f (target >= 0.7), uncached-path/health %.2f\n",
               hit / health, miss / health);
        bench_http_wrk(s.port, s.dir, cached, uncached, NB);
    }
    for (int i = 0; i < NB; i++) {
        free(cached[i]);
        free(uncached[i]);
    }
    th_stop(&s);
    th_cleanup(&s);
}

/* NAVD_BENCH=optimal,steer (a comma list of section names) runs only those
   sections; unset or empty runs all of them (stephttp, the HTTP part of
   steer alone, only when named). */
static int wanted(const char *name) {
    const char *only = getenv("NAVD_BENCH");
    if (!only || !*only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("navd benchmarks (figures, not assertions)\n");
    static const struct {
        const char *name;
        void (*run)(void);
    } sections[] = {
        {"shared", bench_shared}, {"snap", NULL},    {"large", bench_large}, {"cache", bench_cache},
        {"http", bench_http},     {"optimal", NULL}, {"reach", NULL},        {"steer", NULL},
        {"load", NULL},           {"crowd", NULL},   {"hardening", NULL},    {"pg", NULL},
        {"bake", NULL},           {"volume", NULL},  {"flow", NULL},         {"blobload", NULL},
        {"stephttp", NULL},
    };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        void (*run)(void) = sections[i].run;
        /* weak references: NULL when the helper's bench file is not linked */
        if (!strcmp(sections[i].name, "snap"))
            run = bench_snap;
        else if (!strcmp(sections[i].name, "optimal"))
            run = bench_optimal;
        else if (!strcmp(sections[i].name, "reach"))
            run = bench_reach;
        else if (!strcmp(sections[i].name, "steer"))
            run = bench_steer;
        else if (!strcmp(sections[i].name, "load"))
            run = bench_load;
        else if (!strcmp(sections[i].name, "crowd"))
            run = bench_crowd;
        else if (!strcmp(sections[i].name, "hardening"))
            run = bench_hardening;
        else if (!strcmp(sections[i].name, "pg"))
            run = bench_pg;
        else if (!strcmp(sections[i].name, "bake"))
            run = bench_bake;
        else if (!strcmp(sections[i].name, "volume"))
            run = bench_volume;
        else if (!strcmp(sections[i].name, "flow"))
            run = bench_flow;
        else if (!strcmp(sections[i].name, "blobload"))
            run = bench_blobload;
        else if (!strcmp(sections[i].name, "stephttp"))
            run = bench_step_http;
        if (!wanted(sections[i].name))
            continue;
        /* stephttp is a part of steer, run alone only when named */
        const char *only = getenv("NAVD_BENCH");
        if (!strcmp(sections[i].name, "stephttp") && (!only || !*only))
            continue;
        if (run)
            run();
        else
            printf("\n(bench_%s not linked)\n", sections[i].name);
    }
    return 0;
}
