/*
 * check_nav_cache: the path cache. A hit must be exactly the answer a fresh
 * search gives for the same request; keys must separate meshes (uids),
 * filters and budgets; eviction keeps the counters consistent; corridor
 * reuse (steering's entry point) gives valid paths, equal to the answer
 * without a cache (tests/check_determinism.c checks history independence);
 * many threads on the same keys are safe (run under ASan/UBSan by make
 * test-san). The slot arena: fill/evict/clear cycles keep answers exact and
 * bytes within the budget, answers larger than a shard are refused, and 8
 * threads churning both levels stay correct.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query.h"
#include "tests/test_fixtures.h"

/* The same path (corners, corridor, links, length, flags), bit for bit. */
static int same_path(const fx_answer *x, const fx_answer *y) {
    const nav_path_result *a = &x->res, *b = &y->res;
    return a->ncorners == b->ncorners && a->npolys == b->npolys && a->nlinks == b->nlinks &&
           a->flags == b->flags && memcmp(&a->length, &b->length, sizeof(double)) == 0 &&
           memcmp(x->corners, y->corners, sizeof(float) * 3 * a->ncorners) == 0 &&
           memcmp(x->polys, y->polys, sizeof(uint32_t) * a->npolys) == 0 &&
           memcmp(x->links, y->links, sizeof(uint32_t) * a->nlinks) == 0;
}

static nav_path_request req(float sx, float sz, float ex, float ez, nav_algo algo) {
    nav_path_request r = {
        .start = {sx, 0, sz}, .end = {ex, 0, ez}, .extents = {2, 4, 2}, .algorithm = algo};
    return r;
}

START_TEST(hit_equals_fresh) {
    nav_mesh *m = fx_u_corridor();
    nav_mesh *islands = fx_two_islands();
    nav_query *q = nav_query_new(1024);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    nav_filter costly;
    nav_filter_default(&costly);
    costly.area_cost[0] = 2.5f;
    struct {
        const nav_mesh *m;
        nav_path_request r;
    } cases[] = {
        {m, req(1, 1, 9, 1, NAV_ALGO_AUTO)},
        {m, req(1, 1, 9, 1, NAV_ALGO_CORRIDOR)},
        {m, req(1.5f, 3, 9, 9, NAV_ALGO_AUTO)},
        {m, req(1, 1, 9, 1, NAV_ALGO_CORRIDOR)},        /* with costs, set below */
        {islands, req(1, 1, 12, 2, NAV_ALGO_AUTO)},     /* partial: unreachable */
        {islands, req(1, 1, 12, 2, NAV_ALGO_CORRIDOR)}, /* partial: unreachable */
        {m, req(1, 1, 9, 1, NAV_ALGO_CORRIDOR)},        /* partial: budget, set below */
    };
    cases[3].r.filter = &costly;
    cases[6].r.max_nodes = 2;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx_answer fresh, miss, hit;
        fx_answer_init(&fresh);
        fx_answer_init(&miss);
        fx_answer_init(&hit);
        ck_assert_int_eq(nav_find_path(q, cases[i].m, &cases[i].r, &fresh.res), NAV_OK);
        nav_cache_result o1, o2;
        ck_assert_int_eq(nav_find_path_cached(q, c, cases[i].m, &cases[i].r, &miss.res, &o1),
                         NAV_OK);
        ck_assert_int_eq(nav_find_path_cached(q, c, cases[i].m, &cases[i].r, &hit.res, &o2),
                         NAV_OK);
        ck_assert_msg(o2 == NAV_CACHE_HIT, "case %zu: second lookup is %s", i,
                      nav_cache_result_name(o2));
        ck_assert_msg(fx_answer_same(&fresh, &miss), "case %zu: miss differs from fresh", i);
        ck_assert_msg(fx_answer_same(&fresh, &hit), "case %zu: hit differs from fresh", i);
    }
    nav_cache_stats st;
    nav_cache_stats_get(c, &st);
    ck_assert_uint_eq(st.hits + st.misses, 14);
    ck_assert_str_eq(nav_cache_result_name(NAV_CACHE_HIT), "hit");
    ck_assert_str_eq(nav_cache_result_name(NAV_CACHE_MISS), "miss");
    ck_assert_str_eq(nav_cache_result_name(NAV_CACHE_BYPASS), "bypass");
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(islands);
    nav_mesh_free(m);
}
END_TEST

START_TEST(bypass) {
    nav_mesh *m = fx_u_corridor();
    nav_query *q = nav_query_new(256);
    nav_cache *c = nav_cache_new(1 << 16, 1);
    nav_path_request r = req(1, 1, 9, 1, NAV_ALGO_AUTO);
    fx_answer a;
    fx_answer_init(&a);
    nav_cache_result o = NAV_CACHE_HIT;
    ck_assert_int_eq(nav_find_path_cached(q, NULL, m, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_BYPASS);
    uint32_t exp[64];
    a.res.expanded = exp; /* debug requests are never cached */
    a.res.max_expanded = 64;
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_BYPASS);
    ck_assert_uint_gt(a.res.nexpanded, 0);
    nav_cache_stats st;
    nav_cache_stats_get(c, &st);
    ck_assert_uint_eq(st.entries, 0);
    /* errors are not stored and say miss */
    fx_answer_init(&a);
    r = req(1, 1, 40, 1, NAV_ALGO_AUTO);
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &r, &a.res, &o), NAV_E_OFF_MESH);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    ck_assert_uint_eq(a.res.end_poly, UINT32_MAX);
    nav_cache_stats_get(c, &st);
    ck_assert_uint_eq(st.entries, 0);
    ck_assert_ptr_null(nav_cache_new(0, 4));
    nav_cache_free(NULL);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

START_TEST(mesh_uid_and_options_separate_keys) {
    /* The same geometry built twice has two uids: the second never hits
       the first's entries (a replace can never serve a stale answer). */
    nav_mesh *m1 = fx_u_corridor(), *m2 = fx_u_corridor();
    ck_assert_uint_ne(nav_mesh_uid(m1), nav_mesh_uid(m2));
    nav_query *q = nav_query_new(256);
    nav_cache *c = nav_cache_new(1 << 20, 8);
    nav_path_request r = req(1, 1, 9, 1, NAV_ALGO_CORRIDOR);
    fx_answer a;
    nav_cache_result o;
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    ck_assert_int_eq(nav_find_path_cached(q, c, m2, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_HIT);
    /* other budget, other costs, other exclusions, other algorithm: misses */
    r.max_nodes = 100;
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    nav_filter f;
    nav_filter_default(&f);
    f.area_cost[0] = 2;
    r.filter = &f;
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    nav_filter_default(&f);
    f.exclude_mask = 1ull << 5;
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    r.filter = NULL;
    r.max_nodes = 0;
    r.algorithm = NAV_ALGO_AUTO;
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    /* max_nodes 0 and max_nodes = pool size are the same effective budget */
    r.max_nodes = 256;
    ck_assert_int_eq(nav_find_path_cached(q, c, m1, &r, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_HIT);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m1);
    nav_mesh_free(m2);
}
END_TEST

START_TEST(eviction_counts) {
    /* 1 shard, 4 KiB: each answer is a few hundred bytes, so 200 distinct
       requests must evict. Invariants: bytes <= budget, every lookup is a
       hit or a miss, entries = stored - evicted. */
    nav_mesh *m = fx_random(7, NULL);
    nav_query *q = nav_query_new(2048);
    nav_cache *c = nav_cache_new(4096, 1);
    uint32_t rng = 99, lookups = 0;
    for (int i = 0; i < 200; i++) {
        nav_path_request r =
            req(0.5f + 9 * fx_randf(&rng), 0.5f + 9 * fx_randf(&rng), 0.5f + 9 * fx_randf(&rng),
                0.5f + 9 * fx_randf(&rng), NAV_ALGO_CORRIDOR);
        fx_answer a;
        fx_answer_init(&a);
        nav_cache_result o;
        nav_status st = nav_find_path_cached(q, c, m, &r, &a.res, &o);
        ck_assert(st == NAV_OK || st == NAV_E_OFF_MESH);
        lookups++;
        nav_cache_stats s;
        nav_cache_stats_get(c, &s);
        ck_assert_uint_le(s.bytes, 4096);
    }
    nav_cache_stats s;
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.hits + s.misses, lookups);
    ck_assert_uint_gt(s.evictions, 0);
    ck_assert_uint_gt(s.entries, 0);
    ck_assert_uint_eq(s.max_bytes, 4096);
    nav_cache_clear(c);
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.entries, 0);
    ck_assert_uint_eq(s.bytes, 0);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* Corners on the mesh and consecutive ones mutually visible. */
static void assert_valid_path(const nav_mesh *m, const fx_answer *a) {
    ck_assert_uint_ge(a->res.ncorners, 2);
    ck_assert_float_eq(a->corners[0], a->res.start[0]);
    ck_assert_float_eq(a->corners[2], a->res.start[2]);
    const float *last = &a->corners[3 * (a->res.ncorners - 1)];
    ck_assert_float_eq(last[0], a->res.end[0]);
    ck_assert_float_eq(last[2], a->res.end[2]);
    for (uint32_t i = 0; i < a->res.ncorners; i++) {
        const float *p = &a->corners[3 * i];
        float ext[3] = {0.01f, 0.05f, 0.01f}, on[3];
        uint32_t poly;
        ck_assert_int_eq(nav_mesh_nearest(m, p, ext, 0, &poly, on), NAV_OK);
        ck_assert_double_lt(nav_dist3d(p, on), 1e-3);
        if (i == 0)
            continue;
        double best_t = -1;
        for (uint32_t k = 0; k < a->res.npolys; k++) {
            uint32_t pp = a->polys[k];
            if (!nav_mesh_poly_contains_xz(m, pp, p[-3], p[-1]))
                continue;
            nav_raycast_result rr = {0};
            ck_assert_int_eq(nav_raycast(m, pp, p - 3, p, NULL, &rr), NAV_OK);
            double t = rr.hit ? rr.t : 1.0;
            best_t = t > best_t ? t : best_t;
        }
        ck_assert_double_ge(best_t, 1.0 - 1e-4);
    }
}

START_TEST(corridor_reuse) {
    /* U corridor, polygons are 2 m cells. (1,1) and (1.5,0.5) lie in the
       same start cell, (9,1) and (8.5,1.5) in the same end cell. */
    nav_mesh *m = fx_u_corridor();
    nav_query *q = nav_query_new(256);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    fx_answer a, b, fresh;
    nav_cache_result o;
    nav_path_request r1 = req(1, 1, 9, 1, NAV_ALGO_CORRIDOR);
    nav_path_request r2 = req(1.5f, 0.5f, 8.5f, 1.5f, NAV_ALGO_CORRIDOR);
    /* The path endpoint's entry point keeps exact answers only: other
       points in the same polygons are a miss, answered as a fresh search. */
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &r1, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &r2, &b.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    fx_answer_init(&fresh);
    ck_assert_int_eq(nav_find_path(q, m, &r2, &fresh.res), NAV_OK);
    ck_assert(fx_answer_same(&fresh, &b));

    /* Steering's entry point: one canonical corridor per polygon pair, the
       second pair of points re-pulls the string in it. */
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r1, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r2, &b.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_HIT);
    ck_assert_uint_eq(b.res.start_poly, a.res.start_poly);
    ck_assert_uint_eq(b.res.end_poly, a.res.end_poly);
    assert_valid_path(m, &b);
    /* Here the corridor is the only one, so the path equals a fresh
       search's: (1.5,0.5) -> (2,8) -> (8,8) -> (8.5,1.5), length
       sqrt(0.5^2 + 7.5^2) + 6 + sqrt(0.5^2 + 6.5^2). */
    ck_assert(same_path(&fresh, &b));
    ck_assert_uint_eq(b.res.ncorners, 4);
    ck_assert_double_eq_tol(b.res.length, sqrt(0.25 + 56.25) + 6 + sqrt(0.25 + 42.25), 1e-4);
    nav_cache_stats st;
    nav_cache_stats_get(c, &st);
    ck_assert_uint_eq(st.corridor_hits, 1);
    /* and it is the answer without a cache, bit for bit */
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_reuse(q, NULL, m, &r2, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_BYPASS);
    ck_assert(fx_answer_same(&a, &b));

    /* The canonical corridor does not depend on the algorithm asked for:
       an AUTO request in the same pair is served by the same entry. */
    nav_path_request o3 = req(0.5f, 1.5f, 9.5f, 0.5f, NAV_ALGO_AUTO);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path_reuse(q, c, m, &o3, &b.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_HIT);
    assert_valid_path(m, &b);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/*
 * nav_find_path_reuse_at against the whole answer (property): on random
 * meshes (walls, bridges with links off) and random pairs of points, the
 * answer from the already-snapped polygons equals nav_find_path_reuse's
 * for the same snapped ends, bit for bit; asking only for a prefix
 * (stop_corners, stop_len) gives exactly the whole path's first corners,
 * at least stop_corners of them spanning at least stop_len in xz (or the
 * whole path, untruncated, when it is shorter), and its links are the
 * whole path's first ones.
 */
START_TEST(reuse_at_prefix_equals_whole) {
    nav_query *q = nav_query_new(4096);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    fx_random_opts o = fx_random_defaults();
    uint32_t cut = 0, whole = 0;
    for (uint32_t seed = 1; seed <= 60; seed++) {
        o.walls = seed % 2;
        o.bridge = seed % 5 == 0;
        nav_mesh *m = fx_random(seed, &o);
        uint32_t rng = seed * 13 + 5;
        for (int it = 0; it < 8; it++) {
            float a[3], b[3];
            fx_random_point(m, &rng, a);
            fx_random_point(m, &rng, b);
            nav_path_request r = {.extents = {2, 4, 2}, .algorithm = NAV_ALGO_CORRIDOR};
            memcpy(r.start, a, sizeof a);
            memcpy(r.end, b, sizeof b);
            fx_answer full;
            fx_answer_init(&full);
            if (nav_find_path_reuse(q, it & 1 ? c : NULL, m, &r, &full.res, NULL) != NAV_OK ||
                (full.res.flags & NAV_PATH_PARTIAL_UNREACHABLE))
                continue;
            /* the snapped ends, as steering hands them in */
            memcpy(r.start, full.res.start, sizeof r.start);
            memcpy(r.end, full.res.end, sizeof r.end);
            uint32_t sp = full.res.start_poly, ep = full.res.end_poly;
            fx_answer at;
            fx_answer_init(&at);
            ck_assert_int_eq(nav_find_path_reuse_at(q, c, m, &r, sp, ep, 0, 0, &at.res, NULL),
                             NAV_OK);
            fx_answer ref;
            fx_answer_init(&ref);
            ck_assert_int_eq(nav_find_path_reuse(q, NULL, m, &r, &ref.res, NULL), NAV_OK);
            if (ref.res.start_poly == sp && ref.res.end_poly == ep)
                ck_assert_msg(same_path(&at, &ref), "seed %u: reuse_at differs", seed);
            uint32_t k = 1 + fx_rand(&rng) % 6;
            float L = 12.0f * fx_randf(&rng);
            fx_answer pre;
            fx_answer_init(&pre);
            ck_assert_int_eq(
                nav_find_path_reuse_at(q, it & 2 ? c : NULL, m, &r, sp, ep, k, L, &pre.res, NULL),
                NAV_OK);
            const nav_path_result *P = &pre.res, *W = &at.res;
            ck_assert_uint_le(P->ncorners, W->ncorners);
            ck_assert_msg(memcmp(pre.corners, at.corners, sizeof(float) * 3 * P->ncorners) == 0,
                          "seed %u: prefix corners differ", seed);
            ck_assert_uint_le(P->nlinks, W->nlinks);
            ck_assert(memcmp(pre.links, at.links, sizeof(uint32_t) * P->nlinks) == 0);
            if (!(P->flags & NAV_PATH_TRUNCATED)) {
                ck_assert_msg(same_path(&pre, &at), "seed %u: untruncated prefix differs", seed);
                whole++;
                continue;
            }
            /* (the whole path may hold no more corners: its end can fall
               on the last corner out, which is then not repeated) */
            cut++;
            ck_assert_uint_ge(P->ncorners, k);
            double xz = 0;
            for (uint32_t i = 1; i < P->ncorners; i++)
                xz += hypot((double)pre.corners[3 * i] - pre.corners[3 * i - 3],
                            (double)pre.corners[3 * i + 2] - pre.corners[3 * i - 1]);
            ck_assert_msg(xz >= L - 1e-4, "seed %u: prefix %g m < %g m", seed, xz, (double)L);
        }
        nav_mesh_free(m);
    }
    /* both branches ran often enough to mean something */
    ck_assert_uint_gt(cut, 40);
    ck_assert_uint_gt(whole, 40);
    nav_cache_free(c);
    nav_query_free(q);
}
END_TEST

START_TEST(corridor_reuse_random) {
    /* Random meshes: after a miss, other points in the same polygon pair
       are answered from the corridor and the path is valid. */
    nav_query *q = nav_query_new(2048);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    uint32_t reused = 0;
    for (uint32_t seed = 1; seed <= 40; seed++) {
        nav_mesh *m = fx_random(seed, NULL);
        uint32_t rng = seed * 7 + 3;
        for (int it = 0; it < 5; it++) {
            uint32_t p1 = fx_rand(&rng) % m->npolys, p2 = fx_rand(&rng) % m->npolys;
            const float *c1 = &m->poly_centroid[3 * p1], *c2 = &m->poly_centroid[3 * p2];
            nav_path_request r = {.start = {c1[0], c1[1], c1[2]},
                                  .end = {c2[0], c2[1], c2[2]},
                                  .extents = {0.1f, 0.5f, 0.1f},
                                  .algorithm = (it & 1) ? NAV_ALGO_CORRIDOR : NAV_ALGO_AUTO};
            fx_answer a;
            fx_answer_init(&a);
            nav_cache_result o;
            ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r, &a.res, &o), NAV_OK);
            if (a.res.flags)
                continue;
            /* another point of each polygon: halfway to its first vertex */
            const float *v1 = nav_poly_vert(m, p1, 0), *v2 = nav_poly_vert(m, p2, 0);
            for (int k = 0; k < 3; k++) {
                r.start[k] = 0.5f * (c1[k] + v1[k]);
                r.end[k] = 0.5f * (c2[k] + v2[k]);
            }
            fx_answer b;
            fx_answer_init(&b);
            ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r, &b.res, &o), NAV_OK);
            if (b.res.start_poly != a.res.start_poly || b.res.end_poly != a.res.end_poly)
                continue;
            ck_assert_int_eq(o, NAV_CACHE_HIT);
            reused++;
            assert_valid_path(m, &b);
        }
        nav_mesh_free(m);
    }
    ck_assert_uint_gt(reused, 50);
    nav_cache_free(c);
    nav_query_free(q);
}
END_TEST

/* ---- the slot arena ---- */

/* An OPTIMAL request between the centroids of two polygons of m. */
/* An end in another component (steering's entry point): the path leads to
   the reachable point closest to the end through the canonical corridor of
   that point's polygon, memoised like any pair. An L of 2 m cells,
   [0,2]x[0,6] then [2,6]x[4,6], and an island [10,12]x[0,2]; from (1,1)
   to (11,1) on the island: the closest reachable point is (6,4), the
   corner of the L's far cell, and the path turns at the L's inner corner
   (2,4): length sqrt(1 + 9) + 4, partial (unreachable). Another start in
   the same cell is served by the same corridor; the answer is the same
   without a cache, and ends where nav_find_path's does. */
START_TEST(unreachable_end_reuses_corridor) {
    fx_builder *bld = fx_new();
    fx_quad(bld, 0, 0, 2, 2, 0, 0);
    fx_quad(bld, 0, 2, 2, 4, 0, 0);
    fx_quad(bld, 0, 4, 2, 6, 0, 0);
    fx_quad(bld, 2, 4, 4, 6, 0, 0);
    fx_quad(bld, 4, 4, 6, 6, 0, 0);
    fx_quad(bld, 10, 0, 12, 2, 0, 0);
    nav_mesh *m = fx_build(bld);
    nav_query *q = nav_query_new(256);
    nav_cache *c = nav_cache_new(1 << 20, 4);
    nav_cache_result o;
    fx_answer a, b, fresh;
    nav_path_request r1 = req(1, 1, 11, 1, NAV_ALGO_CORRIDOR);
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r1, &a.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_MISS);
    ck_assert(a.res.flags & NAV_PATH_PARTIAL_UNREACHABLE);
    ck_assert_uint_eq(a.res.ncorners, 3);
    const float want[9] = {1, 0, 1, 2, 0, 4, 6, 0, 4};
    for (int k = 0; k < 9; k++)
        ck_assert_float_eq_tol(a.corners[k], want[k], 1e-5f);
    ck_assert_double_eq_tol(a.res.length, sqrt(10.0) + 4, 1e-4);
    ck_assert_float_eq(a.res.end[0], 6);
    ck_assert_float_eq(a.res.end[2], 4);
    /* where nav_find_path goes too */
    fx_answer_init(&fresh);
    ck_assert_int_eq(nav_find_path(q, m, &r1, &fresh.res), NAV_OK);
    ck_assert(fresh.res.flags & NAV_PATH_PARTIAL_UNREACHABLE);
    ck_assert_uint_eq(fresh.res.end_poly, a.res.end_poly);
    ck_assert(memcmp(fresh.res.end, a.res.end, sizeof a.res.end) == 0);
    /* another start in the same cell: the memoised corridor */
    nav_path_request r2 = req(1.5f, 0.5f, 11, 1, NAV_ALGO_CORRIDOR);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path_reuse(q, c, m, &r2, &b.res, &o), NAV_OK);
    ck_assert_int_eq(o, NAV_CACHE_HIT);
    ck_assert(b.res.flags & NAV_PATH_PARTIAL_UNREACHABLE);
    assert_valid_path(m, &b);
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_reuse(q, NULL, m, &r2, &a.res, &o), NAV_OK);
    ck_assert(fx_answer_same(&a, &b));
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

static nav_path_request centroid_req(const nav_mesh *m, uint32_t p1, uint32_t p2) {
    const float *c1 = &m->poly_centroid[3 * p1], *c2 = &m->poly_centroid[3 * p2];
    nav_path_request r = {.start = {c1[0], c1[1], c1[2]},
                          .end = {c2[0], c2[1], c2[2]},
                          .extents = {0.1f, 0.5f, 0.1f},
                          .algorithm = NAV_ALGO_OPTIMAL};
    return r;
}

START_TEST(arena_fill_evict_cycles) {
    /* Churn like steering's: 3000 lookups drawn from 48 requests through a
       cache of 8 KiB in 2 shards, cleared twice on the way. Reference: a
       fresh search. nav_find_path_cached serves every request only from
       level 1, so every answer (hit or miss) must equal the fresh one bit
       for bit, whatever slots were recycled. Asking the request just
       answered again must hit: it was stored last (an answer here is well
       under 1 KiB: a key of ~80 B, ~60 B of fields, at most a few dozen
       corners of 12 B and polygons of 4 B), so nothing evicted it. The
       byte count never exceeds the budget. */
    enum { NR = 48 };
    nav_mesh *m = fx_random(7, NULL);
    nav_query *q = nav_query_new(2048);
    nav_cache *c = nav_cache_new(8192, 2);
    ck_assert_ptr_nonnull(c);
    nav_path_request reqs[NR];
    static fx_answer expect[NR];
    uint32_t rng = 2024;
    for (int i = 0; i < NR; i++) {
        reqs[i] = centroid_req(m, fx_rand(&rng) % m->npolys, fx_rand(&rng) % m->npolys);
        fx_answer_init(&expect[i]);
        ck_assert_int_eq(nav_find_path(q, m, &reqs[i], &expect[i].res), NAV_OK);
    }
    static fx_answer a;
    uint64_t lookups = 0, repeat_hits = 0, repeats = 0;
    for (int it = 0; it < 3000; it++) {
        if (it == 1000 || it == 2000) {
            nav_cache_clear(c);
            nav_cache_stats s;
            nav_cache_stats_get(c, &s);
            ck_assert_uint_eq(s.entries, 0);
            ck_assert_uint_eq(s.bytes, 0);
        }
        int k = (int)(fx_rand(&rng) % NR);
        for (int rep = 0; rep < 2; rep++) {
            fx_answer_init(&a);
            nav_cache_result o;
            ck_assert_int_eq(nav_find_path_cached(q, c, m, &reqs[k], &a.res, &o), NAV_OK);
            lookups++;
            ck_assert_msg(fx_answer_same(&a, &expect[k]), "lookup %d (request %d) differs", it, k);
            if (rep == 1) {
                repeats++;
                repeat_hits += o == NAV_CACHE_HIT;
            }
            nav_cache_stats s;
            nav_cache_stats_get(c, &s);
            ck_assert_uint_le(s.bytes, 8192);
        }
    }
    ck_assert_uint_eq(repeat_hits, repeats);
    nav_cache_stats s;
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.hits + s.misses, lookups);
    ck_assert_uint_gt(s.evictions, 0); /* 48 answers of a few hundred bytes > 8 KiB */
    ck_assert_uint_gt(s.entries, 0);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

START_TEST(arena_refuses_oversized) {
    /* a larger random mesh, so some paths are long */
    fx_random_opts big = fx_random_defaults();
    big.width = big.height = 40;
    nav_mesh *m = fx_random(3, &big);
    ck_assert_ptr_nonnull(m);
    nav_query *q = nav_query_new(2048);
    /* The longest answer between centroids (by its arrays' bytes). */
    uint32_t rng = 77, best_bytes = 0;
    nav_path_request longest = centroid_req(m, 0, 0);
    static fx_answer a, b;
    for (int i = 0; i < 64; i++) {
        nav_path_request r = centroid_req(m, fx_rand(&rng) % m->npolys, fx_rand(&rng) % m->npolys);
        fx_answer_init(&a);
        ck_assert_int_eq(nav_find_path(q, m, &r, &a.res), NAV_OK);
        uint32_t bytes = 12 * a.res.ncorners + 4 * a.res.npolys + 4 * a.res.nlinks;
        if (bytes > best_bytes) {
            best_bytes = bytes;
            longest = r;
        }
    }
    /* A budget one byte short of that answer's arrays alone cannot hold it;
       it can hold a one-polygon answer (2 corners, 1 polygon: 28 B of
       arrays plus ~80 B of key and ~60 B of fields, in 64 B slots: < 300 B)
       once the budget reaches 300 B. */
    ck_assert_uint_ge(best_bytes, 301);
    size_t budget = best_bytes - 1;
    nav_cache *c = nav_cache_new(budget, 1);
    ck_assert_ptr_nonnull(c);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path(q, m, &longest, &b.res), NAV_OK);
    for (int rep = 0; rep < 2; rep++) {
        fx_answer_init(&a);
        nav_cache_result o;
        ck_assert_int_eq(nav_find_path_cached(q, c, m, &longest, &a.res, &o), NAV_OK);
        ck_assert_int_eq(o, NAV_CACHE_MISS); /* refused, so never a hit */
        ck_assert(fx_answer_same(&a, &b));
    }
    nav_cache_stats s;
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.evictions, 0);
    ck_assert_uint_le(s.bytes, budget);
    /* the short answer fits and hits */
    nav_path_request shortr = centroid_req(m, 0, 0);
    fx_answer_init(&b);
    ck_assert_int_eq(nav_find_path(q, m, &shortr, &b.res), NAV_OK);
    ck_assert_uint_eq(b.res.npolys, 1);
    nav_cache_result o1, o2;
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &shortr, &a.res, &o1), NAV_OK);
    fx_answer_init(&a);
    ck_assert_int_eq(nav_find_path_cached(q, c, m, &shortr, &a.res, &o2), NAV_OK);
    ck_assert_int_eq(o1, NAV_CACHE_MISS);
    ck_assert_int_eq(o2, NAV_CACHE_HIT);
    ck_assert(fx_answer_same(&a, &b));
    nav_cache_stats_get(c, &s);
    ck_assert_uint_ge(s.entries, 1);
    ck_assert_uint_le(s.bytes, budget);
    nav_cache_free(c);

    /* A budget below any answer (the two corners alone are 24 B, the key
       holds the mesh uid and 9 floats): nothing is ever stored. */
    c = nav_cache_new(40, 1);
    ck_assert_ptr_nonnull(c);
    for (int rep = 0; rep < 3; rep++) {
        fx_answer_init(&a);
        nav_cache_result o;
        ck_assert_int_eq(nav_find_path_cached(q, c, m, &shortr, &a.res, &o), NAV_OK);
        ck_assert_int_eq(o, NAV_CACHE_MISS);
        ck_assert(fx_answer_same(&a, &b));
    }
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.entries, 0);
    ck_assert_uint_eq(s.bytes, 0);
    ck_assert_uint_eq(s.misses, 3);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* ---- threads ---- */

typedef struct hammer_arg {
    const nav_mesh *m;
    nav_cache *c;
    const nav_path_request *reqs;
    const fx_answer *expect;
    int nreq;
    int bad;
} hammer_arg;

static void *hammer(void *p) {
    hammer_arg *h = p;
    nav_query *q = nav_query_new(1024);
    fx_answer *a = malloc(sizeof(*a));
    for (int it = 0; it < 60; it++) {
        for (int i = 0; i < h->nreq; i++) {
            int k = (i + it) % h->nreq;
            fx_answer_init(a);
            nav_cache_result o;
            nav_status st = nav_find_path_cached(q, h->c, h->m, &h->reqs[k], &a->res, &o);
            if (st != NAV_OK || !fx_answer_same(a, &h->expect[k]))
                h->bad++;
        }
    }
    free(a);
    nav_query_free(q);
    return NULL;
}

START_TEST(threads_hammer_same_keys) {
    enum { NT = 8, NR = 12 };
    nav_mesh *m = fx_random(11, NULL);
    nav_query *q = nav_query_new(1024);
    nav_path_request reqs[NR];
    static fx_answer expect[NR];
    uint32_t rng = 5;
    for (int i = 0; i < NR; i++) {
        uint32_t p1 = fx_rand(&rng) % m->npolys, p2 = fx_rand(&rng) % m->npolys;
        reqs[i] = centroid_req(m, p1, p2);
        reqs[i].algorithm = (i & 1) ? NAV_ALGO_CORRIDOR : NAV_ALGO_AUTO;
        fx_answer_init(&expect[i]);
        ck_assert_int_eq(nav_find_path(q, m, &reqs[i], &expect[i].res), NAV_OK);
    }
    /* A small budget (2 KiB over 4 shards) keeps eviction busy too. */
    nav_cache *c = nav_cache_new(2048, 4);
    pthread_t th[NT];
    hammer_arg args[NT];
    for (int t = 0; t < NT; t++) {
        args[t] = (hammer_arg){m, c, reqs, expect, NR, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, hammer, &args[t]), 0);
    }
    int bad = 0;
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        bad += args[t].bad;
    }
    ck_assert_int_eq(bad, 0);
    nav_cache_stats s;
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.hits + s.misses, (uint64_t)NT * 60 * NR);
    ck_assert_uint_le(s.bytes, 2048);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* Each thread mixes shared keys (precomputed answers) with keys only it
   asks (points jittered inside polygons: constant insert + evict, like
   steering), checking every answer against a fresh search; every third
   request also goes through level 2 (nav_find_path_reuse). */
typedef struct churn_arg {
    const nav_mesh *m;
    nav_cache *c;
    const nav_path_request *reqs;
    const fx_answer *expect;
    int nreq;
    uint32_t seed;
    int bad;
    uint64_t lookups;
} churn_arg;

static void *churn(void *p) {
    churn_arg *h = p;
    nav_query *q = nav_query_new(1024);
    fx_answer *a = malloc(sizeof(*a)), *f = malloc(sizeof(*f));
    uint32_t rng = h->seed;
    for (int it = 0; it < 300; it++) {
        nav_path_request r;
        const fx_answer *want;
        if (it & 1) {
            int k = (int)(fx_rand(&rng) % (uint32_t)h->nreq);
            r = h->reqs[k];
            want = &h->expect[k];
        } else {
            r = centroid_req(h->m, fx_rand(&rng) % h->m->npolys, fx_rand(&rng) % h->m->npolys);
            r.start[0] += 0.01f * fx_randf(&rng);
            r.end[2] += 0.01f * fx_randf(&rng);
            fx_answer_init(f);
            if (nav_find_path(q, h->m, &r, &f->res) != NAV_OK) {
                h->bad++;
                continue;
            }
            want = f;
        }
        fx_answer_init(a);
        nav_cache_result o;
        nav_status st = nav_find_path_cached(q, h->c, h->m, &r, &a->res, &o);
        h->lookups++;
        if (st != NAV_OK || !fx_answer_same(a, want))
            h->bad++;
        if (it % 3 == 0) {
            /* level 2 too: steering's entry point gives the answer it
               gives without a cache */
            fx_answer_init(f);
            fx_answer_init(a);
            st = nav_find_path_reuse(q, h->c, h->m, &r, &a->res, &o);
            h->lookups++;
            if (st != NAV_OK || nav_find_path_reuse(q, NULL, h->m, &r, &f->res, NULL) != NAV_OK ||
                !fx_answer_same(a, f))
                h->bad++;
        }
    }
    free(a);
    free(f);
    nav_query_free(q);
    return NULL;
}

START_TEST(threads_churn_arena) {
    enum { NT = 8, NR = 16 };
    nav_mesh *m = fx_random(11, NULL);
    nav_query *q = nav_query_new(1024);
    nav_path_request reqs[NR];
    static fx_answer expect[NR];
    uint32_t rng = 9;
    for (int i = 0; i < NR; i++) {
        reqs[i] = centroid_req(m, fx_rand(&rng) % m->npolys, fx_rand(&rng) % m->npolys);
        fx_answer_init(&expect[i]);
        ck_assert_int_eq(nav_find_path(q, m, &reqs[i], &expect[i].res), NAV_OK);
    }
    /* 16 KiB over 4 shards: a few dozen answers, far fewer than the
       8 * 150 distinct jittered requests, so shards evict all the time. */
    nav_cache *c = nav_cache_new(16384, 4);
    pthread_t th[NT];
    churn_arg args[NT];
    for (int t = 0; t < NT; t++) {
        args[t] = (churn_arg){m, c, reqs, expect, NR, 100u + (uint32_t)t, 0, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, churn, &args[t]), 0);
    }
    int bad = 0;
    uint64_t lookups = 0;
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        bad += args[t].bad;
        lookups += args[t].lookups;
    }
    ck_assert_int_eq(bad, 0);
    nav_cache_stats s;
    nav_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.hits + s.misses, lookups);
    ck_assert_uint_gt(s.evictions, 0);
    ck_assert_uint_le(s.bytes, 16384);
    nav_cache_free(c);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

extern Suite *nav_cache_suite(void);
Suite *nav_cache_suite(void) {
    Suite *s = suite_create("nav_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, hit_equals_fresh);
    tcase_add_test(tc, bypass);
    tcase_add_test(tc, mesh_uid_and_options_separate_keys);
    tcase_add_test(tc, eviction_counts);
    tcase_add_test(tc, corridor_reuse);
    tcase_add_test(tc, unreachable_end_reuses_corridor);
    tcase_add_test(tc, corridor_reuse_random);
    tcase_add_test(tc, reuse_at_prefix_equals_whole);
    tcase_add_test(tc, threads_hammer_same_keys);
    tcase_add_test(tc, arena_fill_evict_cycles);
    tcase_add_test(tc, arena_refuses_oversized);
    tcase_add_test(tc, threads_churn_arena);
    suite_add_tcase(s, tc);
    return s;
}
