/*
 * check_determinism: answers must not depend on the server's history (the
 * contract: "the same request against the same navmesh version yields the
 * same body"; "any replica can answer any tick"). For `path` (nav level:
 * nav_find_path_cached; steering's paths: nav_find_path_reuse) and `step`
 * (nav_step), the same request is answered
 *   (i)   with a cold cache,
 *   (ii)  after warming the cache (and the steering scratch) with OTHER
 *         requests whose points lie in the same polygon pairs,
 *   (iii) without a cache ("cache": false),
 * and the three answers must be identical bit for bit (memcmp). One HTTP
 * test does the same over the wire for `path` and `step`.
 *
 * The mesh that makes history visible: the square with a square hole
 * (tests/test_fixtures.c): 8 quads around the hole [4,6]x[4,6] of the
 * square [0,10]^2. Polygon 3 is [0,4]x[4,6] (left of the hole), polygon 4
 * is [6,10]x[4,6] (right of it). From (1, 5.5) to (9, 5.5) the shortest way
 * passes above the hole (corners (4,6), (6,6)); from (1, 4.5) to (9, 4.5)
 * below it (corners (4,4), (6,4)); both pairs of points are in polygons
 * (3, 4). A cache that reuses "the corridor first searched for (3, 4)"
 * answers the second request through the first one's corridor once warmed
 * by it, and through its own when cold: that is the failure caught here.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query.h"
#include "nav/nav_steer.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

static nav_path_request mkreq(float sx, float sz, float ex, float ez, nav_algo algo) {
    nav_path_request r = {
        .start = {sx, 0, sz}, .end = {ex, 0, ez}, .extents = {0.5f, 1, 0.5f}, .algorithm = algo};
    return r;
}

typedef nav_status (*path_fn)(nav_query *, nav_cache *, const nav_mesh *, const nav_path_request *,
                              nav_path_result *, nav_cache_result *);

/*
 * Answers r cold, after the warm-up requests w[0..nw), and without a cache,
 * with fn; returns 1 when all three are identical. *hit_after_warm tells
 * whether the warmed answer came from the cache (so the test exercised it).
 */
static int history_free(path_fn fn, nav_query *q, const nav_mesh *m, const nav_path_request *r,
                        const nav_path_request *w, int nw, int *hit_after_warm) {
    static fx_answer cold, warm, none, tmp;
    nav_cache_result o;
    nav_cache *c = nav_cache_new(1 << 20, 4);
    fx_answer_init(&cold);
    nav_status s1 = fn(q, c, m, r, &cold.res, &o);
    nav_cache_free(c);

    c = nav_cache_new(1 << 20, 4);
    for (int i = 0; i < nw; i++) {
        fx_answer_init(&tmp);
        (void)fn(q, c, m, &w[i], &tmp.res, &o);
    }
    fx_answer_init(&warm);
    nav_status s2 = fn(q, c, m, r, &warm.res, &o);
    if (hit_after_warm)
        *hit_after_warm = o == NAV_CACHE_HIT;
    nav_cache_free(c);

    fx_answer_init(&none);
    nav_status s3 = fn(q, NULL, m, r, &none.res, &o);
    return s1 == s2 && s2 == s3 && fx_answer_same(&cold, &warm) && fx_answer_same(&cold, &none);
}

START_TEST(path_square_hole) {
    nav_mesh *m = fx_square_with_hole();
    nav_query *q = nav_query_new(256);
    nav_path_request below = mkreq(1, 4.5f, 9, 4.5f, NAV_ALGO_CORRIDOR);
    nav_path_request above = mkreq(1, 5.5f, 9, 5.5f, NAV_ALGO_CORRIDOR);
    /* The `path` endpoint: equal to a fresh nav_find_path in every case. */
    ck_assert(history_free(nav_find_path_cached, q, m, &below, &above, 1, NULL));
    ck_assert(history_free(nav_find_path_cached, q, m, &above, &below, 1, NULL));
    /* and that fresh answer goes below the hole: corners (1,4.5) (4,4)
       (6,4) (9,4.5), length 2 * sqrt(3^2 + 0.5^2) + 2 */
    fx_answer a;
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_cached(q, NULL, m, &below, &a.res, NULL), NAV_OK);
    ck_assert_uint_eq(a.res.ncorners, 4);
    ck_assert_float_eq_tol(a.corners[5], 4.0f, 1e-5f);
    ck_assert_double_eq_tol(a.res.length, 2 * sqrt(9.25) + 2, 1e-4);
    /* Steering's corridor reuse: one corridor per polygon pair, whatever
       came first, and served from the cache after the warm-up. */
    int hit = 0;
    ck_assert(history_free(nav_find_path_reuse, q, m, &below, &above, 1, &hit));
    ck_assert(hit);
    ck_assert(history_free(nav_find_path_reuse, q, m, &above, &below, 1, &hit));
    ck_assert(hit);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* A point of polygon p other than its centroid: t of the way to vertex k. */
static void poly_point(const nav_mesh *m, uint32_t p, uint32_t k, float t, float out[3]) {
    const float *c = &m->poly_centroid[3 * p], *v = nav_poly_vert(m, p, k);
    for (int i = 0; i < 3; i++)
        out[i] = c[i] + t * (v[i] - c[i]);
}

START_TEST(path_random_meshes) {
    /* Random meshes, random polygon pairs; the warm-up requests use other
       points of the same two polygons, and the request itself too. Both
       algorithms (AUTO resolves to optimal here), and area costs (which
       make AUTO the corridor search). */
    nav_query *q = nav_query_new(4096);
    nav_filter costly;
    nav_filter_default(&costly);
    costly.area_cost[0] = 1.5f;
    int hits = 0, n = 0;
    for (uint32_t seed = 1; seed <= 24; seed++) {
        nav_mesh *m = fx_random(seed, NULL);
        uint32_t rng = seed * 977u + 1;
        for (int it = 0; it < 6; it++) {
            uint32_t p1 = fx_rand(&rng) % m->npolys, p2 = fx_rand(&rng) % m->npolys;
            nav_path_request r = {.extents = {0.05f, 0.5f, 0.05f},
                                  .algorithm = it % 3 == 0 ? NAV_ALGO_AUTO : NAV_ALGO_CORRIDOR,
                                  .filter = it % 3 == 2 ? &costly : NULL};
            nav_path_request w[3];
            poly_point(m, p1, 0, 0.6f, r.start);
            poly_point(m, p2, 1, 0.6f, r.end);
            for (int k = 0; k < 3; k++) {
                w[k] = r;
                poly_point(m, p1, (uint32_t)k + 1, 0.5f, w[k].start);
                poly_point(m, p2, (uint32_t)k + 2, 0.5f, w[k].end);
            }
            int hit = 0;
            ck_assert_msg(history_free(nav_find_path_cached, q, m, &r, w, 3, NULL),
                          "path: seed %u pair %u %u", seed, p1, p2);
            ck_assert_msg(history_free(nav_find_path_reuse, q, m, &r, w, 3, &hit),
                          "reuse: seed %u pair %u %u", seed, p1, p2);
            hits += hit;
            n++;
        }
        nav_mesh_free(m);
    }
    /* most pairs are connected: their warmed answers come from level 2 */
    ck_assert_int_gt(hits, n / 3);
    nav_query_free(q);
}
END_TEST

/* ---- steering ---- */

static nav_agent_in seeker(float x, float z, float tx, float tz) {
    nav_agent_in a;
    memset(&a, 0, sizeof a);
    a.pos[0] = x;
    a.pos[2] = z;
    a.radius = 0.3f;
    a.max_speed = 2;
    a.max_accel = 10;
    a.behavior = NAV_BEHAVIOR_SEEK;
    a.target[0] = tx;
    a.target[2] = tz;
    a.has_target = true;
    return a;
}

/*
 * Steps agents in[0..n) cold, after stepping warm[0..nw) (same scratch and
 * cache), and without a cache; asserts identical outputs (memcmp of the
 * output slots, zeroed beforehand so padding compares equal).
 */
static void step_history_free(const nav_mesh *m, const nav_agent_in *in, uint32_t n,
                              const nav_agent_in *warm, uint32_t nw) {
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.1f;
    p.extents[0] = p.extents[2] = 0.5f;
    uint32_t cap = n > nw ? n : nw;
    nav_agent_out *o1 = calloc(cap, sizeof *o1), *o2 = calloc(cap, sizeof *o2),
                  *o3 = calloc(cap, sizeof *o3), *tmp = calloc(cap, sizeof *tmp);
    nav_query *q = nav_query_new(4096);

    nav_steer *s = nav_steer_new(cap, 1);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    ck_assert_int_eq(nav_step(s, m, q, c, &p, in, n, NULL, 0, o1, NULL), NAV_OK);
    nav_cache_free(c);
    nav_steer_free(s);

    s = nav_steer_new(cap, 1);
    c = nav_cache_new(1 << 20, 4);
    ck_assert_int_eq(nav_step(s, m, q, c, &p, warm, nw, NULL, 0, tmp, NULL), NAV_OK);
    ck_assert_int_eq(nav_step(s, m, q, c, &p, in, n, NULL, 0, o2, NULL), NAV_OK);
    nav_cache_free(c);
    /* the same (warm) scratch without a cache */
    ck_assert_int_eq(nav_step(s, m, q, NULL, &p, in, n, NULL, 0, o3, NULL), NAV_OK);
    nav_steer_free(s);

    for (uint32_t i = 0; i < n; i++) {
        ck_assert_msg(
            memcmp(&o1[i], &o2[i], sizeof o1[i]) == 0,
            "agent %u: warmed cache answers differently (corner 0 %.3f,%.3f vs %.3f,%.3f)", i,
            o1[i].corners[0][0], o1[i].corners[0][2], o2[i].corners[0][0], o2[i].corners[0][2]);
        ck_assert_msg(memcmp(&o1[i], &o3[i], sizeof o1[i]) == 0,
                      "agent %u: no cache answers differently", i);
    }
    nav_query_free(q);
    free(o1);
    free(o2);
    free(o3);
    free(tmp);
}

START_TEST(step_square_hole) {
    nav_mesh *m = fx_square_with_hole();
    /* One seeker below the hole's middle line, warmed by one above it (same
       polygons 3 -> 4), and the other way round. */
    nav_agent_in below = seeker(1, 4.5f, 9, 4.5f), above = seeker(1, 5.5f, 9, 5.5f);
    step_history_free(m, &below, 1, &above, 1);
    step_history_free(m, &above, 1, &below, 1);
    nav_mesh_free(m);
}
END_TEST

START_TEST(step_random_meshes) {
    /* 40 seekers at random points of a random mesh chasing 3 targets; the
       warm-up tick has 40 other agents, each in the same polygon as one of
       them (another point of it) chasing another point of the same target
       polygon. Agents are far apart (radius 0.01) so avoidance, which is
       deterministic anyway, stays out of the way of the comparison. */
    enum { N = 40 };
    static nav_agent_in in[N], warm[N];
    for (uint32_t seed = 3; seed <= 8; seed++) {
        nav_mesh *m = fx_random(seed, NULL);
        uint32_t rng = seed * 31u + 7;
        uint32_t tp[3];
        for (int k = 0; k < 3; k++)
            tp[k] = fx_rand(&rng) % m->npolys;
        for (uint32_t i = 0; i < N; i++) {
            uint32_t p = fx_rand(&rng) % m->npolys, t = tp[i % 3];
            float a[3], b[3], wa[3], wb[3];
            poly_point(m, p, 0, 0.5f, a);
            poly_point(m, t, 0, 0.5f, b);
            poly_point(m, p, 1, 0.7f, wa);
            poly_point(m, t, 2, 0.7f, wb);
            in[i] = seeker(a[0], a[2], b[0], b[2]);
            in[i].pos[1] = a[1];
            in[i].target[1] = b[1];
            in[i].radius = 0.01f;
            warm[i] = seeker(wa[0], wa[2], wb[0], wb[2]);
            warm[i].pos[1] = wa[1];
            warm[i].target[1] = wb[1];
            warm[i].radius = 0.01f;
        }
        step_history_free(m, in, N, warm, N);
        nav_mesh_free(m);
    }
}
END_TEST

/* ---- over HTTP ---- */

/* fx_square_with_hole as JSON: vertices on the grid {0,4,6,10}^2 (index
   4j + i for x = g[i], z = g[j]), the 8 quads around the hole. */
static const char SQUARE_HOLE[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[6,0,0],[10,0,0],[0,0,4],[4,0,4],[6,0,4],[10,0,4],"
    "[0,0,6],[4,0,6],[6,0,6],[10,0,6],[0,0,10],[4,0,10],[6,0,10],[10,0,10]],"
    "\"polygons\":[[0,1,5,4],[1,2,6,5],[2,3,7,6],[4,5,9,8],[6,7,11,10],[8,9,13,12],"
    "[9,10,14,13],[10,11,15,14]]}";

/* The body with the value of "cache" blanked (the one field allowed to
   differ); malloc'd. */
static char *without_cache(const th_response *r) {
    char *b = malloc(r->body_len + 1);
    memcpy(b, r->body, r->body_len);
    b[r->body_len] = 0;
    char *at = strstr(b, "\"cache\":\"");
    if (at) {
        char *v = at + 9, *e = strchr(v, '"');
        if (e)
            memmove(v, e, strlen(e) + 1);
    }
    return b;
}

static char *post(int port, const char *path, const char *body) {
    th_response r;
    ck_assert_int_eq(th_json(port, "POST", path, body, &r), 0);
    ck_assert_msg(r.status == 200, "status %d: %.300s", r.status, r.body);
    char *b = without_cache(&r);
    th_response_free(&r);
    return b;
}

START_TEST(http_path_and_step) {
    /* Four copies of the mesh (each PUT builds a new mesh version, with its
       own cache keys): "pc" and "sc" answer the request cold, "pw" and "sw"
       after the warm-up. */
    th_server srv;
    ck_assert_msg(th_start(&srv, NULL, NULL) == 0, "navd did not start");
    const char *names[] = {"pc", "pw", "sc", "sw"};
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/navmeshes/%s", names[i]);
        th_response r;
        ck_assert_int_eq(th_json(srv.port, "PUT", path, SQUARE_HOLE, &r), 0);
        ck_assert_int_eq(r.status, 201);
        th_response_free(&r);
    }

    const char *pb = "{\"start\":[1,0,4.5],\"end\":[9,0,4.5],\"algorithm\":\"corridor\"%s}";
    char req[256], req_nc[256];
    snprintf(req, sizeof req, pb, "");
    snprintf(req_nc, sizeof req_nc, pb, ",\"cache\":false");
    const char *warm_path = "{\"start\":[1,0,5.5],\"end\":[9,0,5.5],\"algorithm\":\"corridor\"}";
    char *cold = post(srv.port, "/v1/navmeshes/pc/path", req);
    free(post(srv.port, "/v1/navmeshes/pw/path", warm_path));
    char *warm = post(srv.port, "/v1/navmeshes/pw/path", req);
    char *nc = post(srv.port, "/v1/navmeshes/pc/path", req_nc);
    ck_assert_str_eq(cold, warm);
    ck_assert_str_eq(cold, nc);
    free(cold);
    free(warm);
    free(nc);

    const char *sb = "{\"dt\":0.1,\"extents\":[0.5,1,0.5]%s,\"agents\":[{\"id\":\"a\","
                     "\"position\":[1,0,%s],\"radius\":0.3,\"max_speed\":2,\"max_accel\":10,"
                     "\"behavior\":\"seek\",\"target\":[9,0,%s]}]}";
    char sreq[512], sreq_nc[512], swarm[512];
    snprintf(sreq, sizeof sreq, sb, "", "4.5", "4.5");
    snprintf(sreq_nc, sizeof sreq_nc, sb, ",\"cache\":false", "4.5", "4.5");
    snprintf(swarm, sizeof swarm, sb, "", "5.5", "5.5");
    char *scold = post(srv.port, "/v1/navmeshes/sc/step", sreq);
    /* several requests after the warm-up: the server's worker threads each
       have their own steering scratch, so try to reach more than one */
    for (int k = 0; k < 4; k++)
        free(post(srv.port, "/v1/navmeshes/sw/step", swarm));
    for (int k = 0; k < 4; k++) {
        char *s2 = post(srv.port, "/v1/navmeshes/sw/step", sreq);
        ck_assert_str_eq(scold, s2);
        free(s2);
    }
    char *snc = post(srv.port, "/v1/navmeshes/sw/step", sreq_nc);
    ck_assert_str_eq(scold, snc);
    free(snc);
    free(scold);
    int rc = th_stop(&srv);
    th_cleanup(&srv);
    ck_assert_int_eq(rc, 0);
}
END_TEST

/* A step large enough to be split across threads (600 agents, 7 shared
   targets, so trees too) answers the same bytes from a server with one
   thread and from one with four, and again on a repeat. */
START_TEST(http_step_threads) {
    char *mesh = fx_grid_json(40), *body = fx_step_body(600, 40);
    ck_assert(mesh && body);
    const char *one[] = {"--threads", "1", NULL}, *four[] = {"--threads", "4", NULL};
    th_server a, b;
    ck_assert_msg(th_start(&a, NULL, one) == 0, "navd did not start");
    ck_assert_msg(th_start(&b, NULL, four) == 0, "navd did not start");
    th_response r;
    ck_assert_int_eq(th_json(a.port, "PUT", "/v1/navmeshes/g", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    ck_assert_int_eq(th_json(b.port, "PUT", "/v1/navmeshes/g", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    char *x = post(a.port, "/v1/navmeshes/g/step", body);
    for (int k = 0; k < 3; k++) {
        char *y = post(b.port, "/v1/navmeshes/g/step", body);
        ck_assert_msg(strcmp(x, y) == 0, "four threads answer other bytes (try %d)", k);
        free(y);
    }
    free(x);
    int ra = th_stop(&a), rb = th_stop(&b);
    th_cleanup(&a);
    th_cleanup(&b);
    ck_assert_int_eq(ra, 0);
    ck_assert_int_eq(rb, 0);
    free(mesh);
    free(body);
}
END_TEST

extern Suite *determinism_suite(void);
Suite *determinism_suite(void) {
    Suite *s = suite_create("determinism");
    TCase *tc = tcase_create("history");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, path_square_hole);
    tcase_add_test(tc, path_random_meshes);
    tcase_add_test(tc, step_square_hole);
    tcase_add_test(tc, step_random_meshes);
    tcase_add_test(tc, http_path_and_step);
    tcase_add_test(tc, http_step_threads);
    suite_add_tcase(s, tc);
    return s;
}
