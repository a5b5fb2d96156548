/*
 * check_concurrency: queries, steps and replaces of the same navmesh from
 * several threads at once, run under ThreadSanitizer by `make test-tsan`
 * (and plainly by `make test`).
 *
 * Two layers, both in this process so TSan sees every thread:
 * - in-process: reader threads take the current entry from the api
 *   registry and query its mesh (nearest, height, reachability, a path and
 *   a steering step, each thread with its own nav_query / nav_steer scratch
 *   and all sharing one path cache) while a writer replaces the mesh
 *   through the registry (store first, then the pointer swap);
 * - over HTTP: the real server (api_server_start on 127.0.0.1, several
 *   worker threads) with client threads querying and reading metadata while
 *   another client PUTs replacements;
 * - the writer thread: several clients PUT and DELETE at once through a
 *   small --max-pending-writes while others query, then the server stops
 *   with writes still queued (suspended connections resumed and answered).
 * Versions alternate between two meshes with different polygon counts
 * (odd: mesh A, 9 polygons; even: mesh B, 16 polygons), so every reader
 * checks that the entry it got is whole: its polygon count is the one of
 * its version's mesh. A half-replaced mesh or a torn entry would not match.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/api_log.h"
#include "api/api_registry.h"
#include "nav/nav_mesh.h"
#include "nav/nav_cache.h"
#include "nav/nav_query.h"
#include "nav/nav_steer.h"
#include "storage/store.h"
#include "tests/test_load.h"

#define CC_READERS 3
#define CC_REPLACES 24

/* An n x n grid of 1 m quads at y = 0: mesh A is n = 3 (9 polygons), B is
   n = 4 (16 polygons); both cover the point (1.5, 0, 1.5). */
static nav_mesh *cc_grid(int n) {
    float verts[5 * 5 * 3];
    uint32_t start[17], idx[16 * 4];
    int nv = 0;
    for (int z = 0; z <= n; z++)
        for (int x = 0; x <= n; x++) {
            verts[nv * 3] = (float)x, verts[nv * 3 + 1] = 0, verts[nv * 3 + 2] = (float)z;
            nv++;
        }
    uint32_t np = 0, k = 0;
    for (int z = 0; z < n; z++)
        for (int x = 0; x < n; x++) {
            uint32_t a = (uint32_t)(z * (n + 1) + x);
            start[np++] = k;
            idx[k++] = a;
            idx[k++] = a + 1;
            idx[k++] = a + (uint32_t)n + 2;
            idx[k++] = a + (uint32_t)n + 1;
        }
    start[np] = k;
    nav_mesh_input in = {.verts = verts,
                         .nverts = (uint32_t)nv,
                         .poly_start = start,
                         .poly_verts = idx,
                         .npolys = np};
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "grid: %s", err.message);
    return m;
}

static uint32_t cc_expected_polys(int64_t version) {
    return version % 2 ? 9u : 16u;
}

typedef struct cc_shared {
    api_registry *reg;
    nav_cache *cache; /* one path cache shared by every reader, as the api's workers share one */
    atomic_int stop;
    atomic_long reads;
    atomic_int bad; /* a reader saw a torn entry */
    char why[200];
    uint16_t port;
} cc_shared;

/* The path from (0.5, 0, 0.5) to (2.5, 0, 2.5) on either grid: the straight
   segment lies inside [0,3]^2, so it is one leg of length 2 * sqrt(2). */
static int cc_path_ok(nav_query *q, const nav_mesh *m) {
    float corners[16 * 3];
    uint32_t polys[64];
    nav_path_request req = {.start = {0.5f, 0, 0.5f}, .end = {2.5f, 0, 2.5f}, .extents = {2, 4, 2}};
    nav_path_result res = {.corners = corners, .max_corners = 16, .polys = polys, .max_polys = 64};
    if (nav_find_path(q, m, &req, &res) != NAV_OK)
        return 0;
    double want = 2.0 * sqrt(2.0);
    return res.flags == 0 && res.length > want - 1e-4 && res.length < want + 1e-4;
}

/* Two agents seeking across either grid: each stays on the mesh (y = 0,
   inside [0,3]^2, where both grids are) and is answered. */
static int cc_step_ok(nav_steer *st, nav_query *q, nav_cache *cache, const nav_mesh *m) {
    nav_steer_params prm;
    nav_steer_params_default(&prm);
    prm.dt = 0.1f;
    nav_agent_in a[2];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 2; i++) {
        a[i].id = i ? "b" : "a";
        a[i].pos[0] = i ? 2.5f : 0.5f, a[i].pos[2] = 0.5f;
        a[i].radius = 0.3f, a[i].max_speed = 2, a[i].max_accel = 8;
        a[i].behavior = NAV_BEHAVIOR_SEEK;
        a[i].target[0] = i ? 0.5f : 2.5f, a[i].target[2] = 2.5f;
        a[i].has_target = true;
    }
    nav_agent_out out[2];
    nav_step_error err;
    if (nav_step(st, m, q, cache, &prm, a, 2, NULL, 0, out, &err) != NAV_OK)
        return 0;
    for (int i = 0; i < 2; i++)
        if (out[i].status != NAV_OK || out[i].pos[1] != 0.0f || out[i].pos[0] < 0 ||
            out[i].pos[0] > 3 || out[i].pos[2] < 0 || out[i].pos[2] > 3)
            return 0;
    return 1;
}

static void *cc_reader(void *arg) {
    cc_shared *sh = arg;
    const float p[3] = {1.5f, 0.2f, 1.5f}, ext[3] = {2, 4, 2};
    nav_query *q = nav_query_new(1024); /* per-thread scratch, as the api's workers have */
    nav_steer *st = nav_steer_new(4, 4);
    if (!q || !st) {
        atomic_store(&sh->bad, 1);
        nav_query_free(q);
        nav_steer_free(st);
        return NULL;
    }
    while (!atomic_load(&sh->stop)) {
        api_entry *e = api_registry_get(sh->reg, "cc");
        if (!e)
            continue;
        uint32_t np = nav_mesh_polygon_count(e->mesh);
        uint32_t poly = 0;
        float out[3], y = -1;
        int ok = np == cc_expected_polys(e->meta.version) &&
                 nav_mesh_nearest(e->mesh, p, ext, 0, &poly, out) == NAV_OK && poly < np &&
                 nav_mesh_height(e->mesh, poly, out[0], out[2], &y) == NAV_OK && y == 0.0f &&
                 nav_mesh_reachable(e->mesh, 0, np - 1) && cc_path_ok(q, e->mesh) &&
                 cc_step_ok(st, q, sh->cache, e->mesh);
        if (!ok && !atomic_exchange(&sh->bad, 1))
            snprintf(sh->why, sizeof sh->why, "version %lld: %u polygons, nearest poly %u y %g",
                     (long long)e->meta.version, np, poly, (double)y);
        api_entry_release(e);
        atomic_fetch_add(&sh->reads, 1);
    }
    nav_query_free(q);
    nav_steer_free(st);
    return NULL;
}

static char cc_dir[64];

static store *cc_open_store(void) {
    snprintf(cc_dir, sizeof cc_dir, "/tmp/navd-cc-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cc_dir));
    char db[128];
    snprintf(db, sizeof db, "%s/cc.db", cc_dir);
    store *st = NULL;
    ck_assert_int_eq(store_open(db, &st), STORE_OK);
    return st;
}

static void cc_remove_store(void) {
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s/cc.db%s", cc_dir, suffix[i]);
        unlink(p);
    }
    rmdir(cc_dir);
}

/* Both tests' start: quiet logs, a fresh store and a registry on it in sh. */
static store *cc_setup(cc_shared *sh) {
    api_log_set_level(API_LOG_ERROR);
    store *st = cc_open_store();
    memset(sh, 0, sizeof *sh);
    sh->reg = api_registry_new(st);
    ck_assert_ptr_nonnull(sh->reg);
    return st;
}

START_TEST(test_registry_replace_while_querying) {
    cc_shared sh;
    store *st = cc_setup(&sh);
    sh.cache = nav_cache_new(1u << 20, 0);
    ck_assert_ptr_nonnull(sh.cache);
    api_entry *e = NULL;
    int created = 0;
    api_err err;
    ck_assert_int_eq(api_registry_put(sh.reg, "cc", cc_grid(3), &e, &created, &err), API_OK);
    ck_assert_int_eq(e->meta.version, 1);
    api_entry_release(e);

    pthread_t th[CC_READERS];
    for (int i = 0; i < CC_READERS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, cc_reader, &sh), 0);
    /* Replace CC_REPLACES times: version v + 1 gets mesh B when even. */
    for (int v = 2; v <= CC_REPLACES + 1; v++) {
        ck_assert_int_eq(api_registry_put(sh.reg, "cc", cc_grid(v % 2 ? 3 : 4), &e, &created, &err),
                         API_OK);
        ck_assert_int_eq(e->meta.version, v);
        ck_assert_int_eq(created, 0);
        api_entry_release(e);
    }
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < CC_READERS; i++)
        pthread_join(th[i], NULL);
    ck_assert_msg(!atomic_load(&sh.bad), "a reader saw a torn entry: %s", sh.why);
    ck_assert_msg(atomic_load(&sh.reads) > 0, "the readers never ran");
    printf("concurrency: %d registry replaces under %ld in-process reads (each: nearest, "
           "height, reachability, a path and a 2-agent step)\n",
           CC_REPLACES, atomic_load(&sh.reads));
    nav_cache_free(sh.cache);
    api_registry_free(sh.reg);
    store_close(st);
    cc_remove_store();
}
END_TEST

/* ---- over HTTP ---- */

static char *cc_grid_json(int n, size_t *len) {
    char *s = malloc(8192);
    ck_assert_ptr_nonnull(s);
    size_t k = (size_t)sprintf(s, "{\"vertices\": [");
    for (int z = 0; z <= n; z++)
        for (int x = 0; x <= n; x++)
            k += (size_t)sprintf(s + k, "%s[%d,0,%d]", (x || z) ? "," : "", x, z);
    k += (size_t)sprintf(s + k, "], \"polygons\": [");
    for (int z = 0; z < n; z++)
        for (int x = 0; x < n; x++) {
            int a = z * (n + 1) + x;
            k += (size_t)sprintf(s + k, "%s[%d,%d,%d,%d]", (x || z) ? "," : "", a, a + 1, a + n + 2,
                                 a + n + 1);
        }
    k += (size_t)sprintf(s + k, "]}");
    *len = k;
    return s;
}

/* Reads metadata and queries over one keep-alive connection. */
static void *cc_http_reader(void *arg) {
    cc_shared *sh = arg;
    tl_conn c = {.fd = -1};
    if (tl_connect(&c, sh->port) != TL_OK) {
        atomic_store(&sh->bad, 1);
        return NULL;
    }
    static const char *const posts[] = {"path", "nearest", "raycast", "reachable", "step"};
    static const char *const bodies[] = {
        "{\"start\":[0.5,0,0.5],\"end\":[2.5,0,2.5]}", "{\"point\":[1.5,0.3,1.5]}",
        "{\"start\":[0.5,0,0.5],\"end\":[2.5,0,2.5]}",
        "{\"start\":[0.5,0,0.5],\"end\":[2.5,0,2.5]}",
        "{\"dt\":0.05,\"agents\":[{\"id\":\"a\",\"position\":[0.5,0,0.5],\"velocity\":[0,0,0],"
        "\"radius\":0.3,\"max_speed\":2,\"max_accel\":8,\"behavior\":\"seek\","
        "\"target\":[2.5,0,2.5]},{\"id\":\"b\",\"position\":[2.5,0,0.5],\"velocity\":[0,0,0],"
        "\"radius\":0.3,\"max_speed\":2,\"max_accel\":8,\"behavior\":\"arrive\","
        "\"target\":[0.5,0,2.5]}]}"};
    unsigned i = 0;
    while (!atomic_load(&sh->stop)) {
        tl_response r;
        char why[200] = "";
        if (i % 2 == 0) {
            if (tl_request(&c, "GET", "/v1/navmeshes/cc", NULL, NULL, 0, NULL, &r) != TL_OK) {
                snprintf(why, sizeof why, "GET metadata: no answer");
            } else {
                long v = tl_json_long(r.body, "version"), np = tl_json_long(r.body, "polygons");
                if (r.status != 200 || np != (long)cc_expected_polys(v))
                    snprintf(why, sizeof why, "GET metadata: %d version %ld with %ld polygons",
                             r.status, v, np);
                tl_response_free(&r);
            }
        } else {
            unsigned k = (i / 2) % 5;
            char path[64];
            snprintf(path, sizeof path, "/v1/navmeshes/cc/%s", posts[k]);
            if (tl_request(&c, "POST", path, "application/json", bodies[k], strlen(bodies[k]), NULL,
                           &r) != TL_OK) {
                snprintf(why, sizeof why, "POST %s: no answer", posts[k]);
            } else {
                if (r.status != 200)
                    snprintf(why, sizeof why, "POST %s: %d %.120s", posts[k], r.status, r.body);
                tl_response_free(&r);
            }
        }
        if (why[0] && !atomic_exchange(&sh->bad, 1))
            snprintf(sh->why, sizeof sh->why, "%s", why);
        atomic_fetch_add(&sh->reads, 1);
        i++;
    }
    tl_close(&c);
    return NULL;
}

/* An in-process server on an ephemeral port over sh's registry, with small
   limits; max_pending_writes 0 keeps the default. cfg must outlive it. */
static api_server *cc_server(cc_shared *sh, api_config *cfg, unsigned threads,
                             unsigned max_pending_writes) {
    *cfg = (api_config){.bind = "127.0.0.1",
                        .threads = threads,
                        .max_body = 1u << 20,
                        .max_batch = 16,
                        .max_agents = 16,
                        .max_nodes = 4096,
                        .limits = {.max_verts = 1000, .max_polys = 1000, .max_verts_per_poly = 16},
                        .cache_bytes = 1u << 20,
                        .request_timeout = 30,
                        .connection_timeout = 30,
                        .max_connections = 32,
                        .max_pending_writes = max_pending_writes};
    char msg[256];
    api_server *srv = api_server_start(cfg, sh->reg, msg, sizeof msg);
    ck_assert_msg(srv != NULL, "server: %s", msg);
    sh->port = api_server_port(srv);
    return srv;
}

START_TEST(test_http_replace_while_querying) {
    cc_shared sh;
    store *st = cc_setup(&sh);
    api_config cfg;
    api_server *srv = cc_server(&sh, &cfg, 4, 0);

    size_t lena, lenb;
    char *a = cc_grid_json(3, &lena), *b = cc_grid_json(4, &lenb);
    /* A replace slower than the bound below is a starved writer; the
       connection's own timeout is longer so the bound is what reports it. */
    tl_conn w = {.fd = -1, .timeout_ms = 30000};
    ck_assert_int_eq(tl_connect(&w, sh.port), TL_OK);
    tl_response r;
    ck_assert_int_eq(
        tl_request(&w, "PUT", "/v1/navmeshes/cc", "application/json", a, lena, NULL, &r), TL_OK);
    ck_assert_msg(r.status == 201, "first PUT: %d %s", r.status, r.body);
    tl_response_free(&r);

    pthread_t th[CC_READERS];
    for (int i = 0; i < CC_READERS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, cc_http_reader, &sh), 0);
    double worst = 0;
    for (int v = 2; v <= CC_REPLACES + 1; v++) {
        const char *body = v % 2 ? a : b;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(tl_request(&w, "PUT", "/v1/navmeshes/cc", "application/json", body,
                                    v % 2 ? lena : lenb, NULL, &r),
                         TL_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (dt > worst)
            worst = dt;
        ck_assert_msg(r.status == 200 && tl_json_long(r.body, "version") == v, "replace %d: %d %s",
                      v, r.status, r.body);
        tl_response_free(&r);
    }
    /* Writers are never starved: with the registry's lock preferring
       writers, a replace waits for the reads in progress, not for every read
       that keeps arriving. 10 s is far past the 1 s target (make bench
       measures it) and was still missed once by the reader-preferring lock. */
    ck_assert_msg(worst < 10.0, "a replace took %.2f s under query load", worst);
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < CC_READERS; i++)
        pthread_join(th[i], NULL);
    tl_close(&w);
    free(a);
    free(b);
    api_server_stop(srv);
    ck_assert_msg(!atomic_load(&sh.bad), "an HTTP reader saw: %s", sh.why);
    printf("concurrency: %d HTTP replaces under %ld HTTP reads and queries, slowest %.1f ms\n",
           CC_REPLACES, atomic_load(&sh.reads), worst * 1e3);
    api_registry_free(sh.reg);
    store_close(st);
    cc_remove_store();
}
END_TEST

/* ---- the writer thread under contention and at shutdown ---- */

#define CC_WRITERS 3

typedef struct cc_writer {
    cc_shared *sh;
    atomic_int *stopping; /* the server is being stopped: transport failures are expected */
    int id;
    const char *body;
    size_t len;
    atomic_long answered, refused; /* 2xx answers, 503 unavailable answers */
} cc_writer;

/* PUTs its own name, DELETEs it every third turn; each answer must be one
   the contract allows for that write. */
static void *cc_http_writer(void *arg) {
    cc_writer *w = arg;
    cc_shared *sh = w->sh;
    char path[64], why[200] = "";
    snprintf(path, sizeof path, "/v1/navmeshes/w%d", w->id);
    tl_conn c = {.fd = -1, .port = sh->port}; /* tl_request connects (again) on demand */
    for (unsigned i = 0; !atomic_load(w->stopping) && !why[0]; i++) {
        int del = i % 3 == 2;
        tl_response r;
        int rc = del ? tl_request(&c, "DELETE", path, NULL, NULL, 0, NULL, &r)
                     : tl_request(&c, "PUT", path, "application/json", w->body, w->len, NULL, &r);
        if (rc != TL_OK) {
            if (!atomic_load(w->stopping))
                snprintf(why, sizeof why, "%s %s: no answer (%d)", del ? "DELETE" : "PUT", path,
                         rc);
            break;
        }
        if (r.status == 503 && strcmp(tl_error_code(&r), "unavailable") == 0)
            atomic_fetch_add(&w->refused, 1);
        else if (del ? (r.status == 204 || r.status == 404) : (r.status == 200 || r.status == 201))
            atomic_fetch_add(&w->answered, 1);
        else
            snprintf(why, sizeof why, "%s %s: %d %.120s", del ? "DELETE" : "PUT", path, r.status,
                     r.body);
        tl_response_free(&r);
    }
    tl_close(&c);
    if (why[0] && !atomic_exchange(&sh->bad, 1))
        snprintf(sh->why, sizeof sh->why, "%s", why);
    return NULL;
}

START_TEST(test_http_writer_under_contention_and_stop) {
    cc_shared sh;
    store *st = cc_setup(&sh);
    api_config cfg;
    api_server *srv = cc_server(&sh, &cfg, 2, 2);
    size_t lena;
    char *a = cc_grid_json(3, &lena);
    tl_conn w0 = {.fd = -1, .port = sh.port};
    tl_response r;
    ck_assert_int_eq(
        tl_request(&w0, "PUT", "/v1/navmeshes/cc", "application/json", a, lena, NULL, &r), TL_OK);
    ck_assert_msg(r.status == 201, "first PUT: %d %s", r.status, r.body);
    tl_response_free(&r);
    tl_close(&w0);

    atomic_int stopping = 0;
    cc_writer wr[CC_WRITERS];
    pthread_t rth[CC_READERS], wth[CC_WRITERS];
    for (int i = 0; i < CC_READERS; i++)
        ck_assert_int_eq(pthread_create(&rth[i], NULL, cc_http_reader, &sh), 0);
    for (int i = 0; i < CC_WRITERS; i++) {
        wr[i] = (cc_writer){.sh = &sh, .stopping = &stopping, .id = i, .body = a, .len = lena};
        atomic_init(&wr[i].answered, 0);
        atomic_init(&wr[i].refused, 0);
        ck_assert_int_eq(pthread_create(&wth[i], NULL, cc_http_writer, &wr[i]), 0);
    }
    /* Until readers and writers have done some work (bounded: a stuck server fails below). */
    for (int i = 0; i < 3000 && !atomic_load(&sh.bad); i++) {
        long writes = 0;
        for (int k = 0; k < CC_WRITERS; k++)
            writes += atomic_load(&wr[k].answered);
        if (atomic_load(&sh.reads) >= 60 && writes >= 4 * CC_WRITERS)
            break;
        usleep(10 * 1000);
    }
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < CC_READERS; i++)
        pthread_join(rth[i], NULL);
    /* Stop while the writers keep writing: whatever was admitted is answered. */
    atomic_store(&stopping, 1);
    api_server_stop(srv);
    long answered = 0, refused = 0;
    for (int i = 0; i < CC_WRITERS; i++) {
        pthread_join(wth[i], NULL);
        answered += atomic_load(&wr[i].answered);
        refused += atomic_load(&wr[i].refused);
    }
    free(a);
    ck_assert_msg(!atomic_load(&sh.bad), "%s", sh.why);
    ck_assert_msg(answered > 0, "no write was answered");
    printf("concurrency: %d writer clients through --max-pending-writes 2: %ld writes answered, "
           "%ld refused with 503, under %ld reads; stopped while writing\n",
           CC_WRITERS, answered, refused, atomic_load(&sh.reads));
    api_registry_free(sh.reg);
    store_close(st);
    cc_remove_store();
}
END_TEST

extern Suite *concurrency_suite(void);
Suite *concurrency_suite(void) {
    Suite *s = suite_create("concurrency");
    TCase *tc = tcase_create("replace");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_registry_replace_while_querying);
    tcase_add_test(tc, test_http_replace_while_querying);
    tcase_add_test(tc, test_http_writer_under_contention_and_stop);
    suite_add_tcase(s, tc);
    return s;
}
