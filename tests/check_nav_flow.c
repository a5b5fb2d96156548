/*
 * check_nav_flow: the goal-rooted search steering shares between the agents
 * of one target (nav/nav_steer_flow.c).
 *
 * The property (issue 14): the shared tree's answer for an agent equals a
 * search from that agent alone over the same graph, cost for cost (within
 * 1e-4 m). The reference here is independent: it lays out the graph itself
 * from the mesh (edge midpoints of passable neighbours, link ends, walks
 * inside a common polygon) and runs a plain O(V^2) Dijkstra from the agent's
 * point. Meshes: random grids with walls, random bridges (two levels and
 * ramps), and two islands joined by a one-way and a two-way link, under the
 * default filter and under random area costs with an exclusion. The
 * corridor the tree gives must start at the agent's polygon, end at the
 * goal's, be connected (a shared edge or the link it was entered by) and
 * string-pull without error; and nav_step with the tree (targets shared by
 * enough agents) must answer the same bytes on a cold and a warm scratch.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query_internal.h"
#include "nav/nav_steer.h"
#include "nav/nav_steer_internal.h"
#include "tests/test_fixtures.h"

typedef struct ref_node {
    float p[3];
    uint32_t poly[2];
    int npoly;
    uint32_t hop_to; /* a departure: index of its arrival node; else UINT32_MAX */
    double hop_cost;
} ref_node;

static bool ok_poly(const nav_mesh *m, const nav_filter *f, uint32_t p) {
    return p != NAV_NONE && !((f->exclude_mask >> m->areas[p]) & 1u);
}

/* The cheapest cost from x (on sp) to g (on gp), Dijkstra over the graph
   described at the top; INFINITY when g cannot be reached. */
static double ref_cost(const nav_mesh *m, const nav_filter *f, uint32_t sp, const float x[3],
                       uint32_t gp, const float g[3]) {
    uint32_t cap = m->poly_start[m->npolys] + 4 * m->nlinks + 2;
    ref_node *v = calloc(cap, sizeof *v);
    uint32_t n = 0;
    /* x and g first */
    memcpy(v[n].p, x, sizeof v[n].p);
    v[n].poly[0] = sp;
    v[n].npoly = 1;
    v[n++].hop_to = UINT32_MAX;
    memcpy(v[n].p, g, sizeof v[n].p);
    v[n].poly[0] = gp;
    v[n].npoly = 1;
    v[n++].hop_to = UINT32_MAX;
    for (uint32_t p = 0; p < m->npolys; p++) {
        if (!ok_poly(m, f, p))
            continue;
        uint32_t nv = m->poly_start[p + 1] - m->poly_start[p];
        for (uint32_t e = 0; e < nv; e++) {
            uint32_t q = m->poly_nei[m->poly_start[p] + e];
            if (!ok_poly(m, f, q))
                continue;
            const float *a = &m->verts[3 * m->poly_verts[m->poly_start[p] + e]];
            const float *b = &m->verts[3 * m->poly_verts[m->poly_start[p] + (e + 1) % nv]];
            for (int k = 0; k < 3; k++)
                v[n].p[k] = 0.5f * (a[k] + b[k]);
            v[n].poly[0] = p;
            v[n].poly[1] = q;
            v[n].npoly = 2;
            v[n++].hop_to = UINT32_MAX;
        }
    }
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *L = &m->links[l];
        for (int dir = 0; dir < (L->bidirectional ? 2 : 1); dir++) {
            uint32_t from = dir ? L->end_poly : L->start_poly,
                     to = dir ? L->start_poly : L->end_poly;
            if ((f->exclude_mask >> L->area) & 1u || !ok_poly(m, f, from) || !ok_poly(m, f, to))
                continue;
            const float *fp = dir ? L->end_on : L->start_on, *tp = dir ? L->start_on : L->end_on;
            memcpy(v[n].p, fp, sizeof v[n].p);
            v[n].poly[0] = from;
            v[n].npoly = 1;
            v[n].hop_to = n + 1;
            v[n].hop_cost = nav_dist3d(fp, tp) * f->area_cost[L->area];
            n++;
            memcpy(v[n].p, tp, sizeof v[n].p);
            v[n].poly[0] = to;
            v[n].npoly = 1;
            v[n++].hop_to = UINT32_MAX;
        }
    }
    double *d = malloc(n * sizeof *d);
    bool *done = calloc(n, sizeof *done);
    for (uint32_t i = 0; i < n; i++)
        d[i] = INFINITY;
    d[0] = 0;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            if (!done[i] && isfinite(d[i]) && (u == UINT32_MAX || d[i] < d[u]))
                u = i;
        if (u == UINT32_MAX || u == 1)
            break;
        done[u] = true;
        if (v[u].hop_to != UINT32_MAX && d[u] + v[u].hop_cost < d[v[u].hop_to])
            d[v[u].hop_to] = d[u] + v[u].hop_cost;
        for (uint32_t w = 0; w < n; w++) {
            if (done[w])
                continue;
            for (int a = 0; a < v[u].npoly; a++)
                for (int b = 0; b < v[w].npoly; b++) {
                    uint32_t P = v[u].poly[a];
                    if (P != v[w].poly[b] || !ok_poly(m, f, P))
                        continue;
                    double c = d[u] + nav_dist3d(v[u].p, v[w].p) * f->area_cost[m->areas[P]];
                    if (c < d[w])
                        d[w] = c;
                }
        }
    }
    double out = d[1];
    free(d);
    free(done);
    free(v);
    return out;
}

/* polys[i] and polys[i + 1] share an edge, or via[i + 1] is a link between them. */
static void assert_connected(const nav_mesh *m, const uint32_t *polys, const uint32_t *via,
                             uint32_t n) {
    for (uint32_t i = 0; i + 1 < n; i++) {
        if (via[i + 1] != NAV_NONE) {
            const nav_link *L = &m->links[via[i + 1] & ~NAV_LINK_REVERSE];
            bool rev = (via[i + 1] & NAV_LINK_REVERSE) != 0;
            ck_assert_uint_eq(rev ? L->end_poly : L->start_poly, polys[i]);
            ck_assert_uint_eq(rev ? L->start_poly : L->end_poly, polys[i + 1]);
            continue;
        }
        bool adj = false;
        for (uint32_t s = m->poly_start[polys[i]]; s < m->poly_start[polys[i] + 1]; s++)
            adj = adj || m->poly_nei[s] == polys[i + 1];
        ck_assert_msg(adj, "corridor step %u: %u and %u are not neighbours", i, polys[i],
                      polys[i + 1]);
    }
}

/* Checks goals and starts on m under filter f; returns the pairs compared. */
static uint32_t check_mesh(const nav_mesh *m, const nav_filter *f, uint32_t seed) {
    uint32_t rng = seed * 2654435761u + 1, compared = 0;
    uint32_t polys[4096], via[4096];
    nav_filter def; /* the reference's filter when the tree gets NULL */
    nav_filter_default(&def);
    const nav_filter *rf = f ? f : &def;
    for (int gi = 0; gi < 3; gi++) {
        float g[3];
        uint32_t gp = fx_random_point(m, &rng, g);
        steer_flow *fl = steer_flow_build(m, f, gp, g);
        ck_assert_ptr_nonnull(fl);
        ck_assert(steer_flow_matches(fl, m, f, gp, g));
        for (int si = 0; si < 12; si++) {
            float x[3];
            uint32_t sp = fx_random_point(m, &rng, x), first;
            double want = ref_cost(m, rf, sp, x, gp, g);
            double got = steer_flow_cost(fl, sp, x, &first);
            if (!isfinite(want)) {
                ck_assert_msg(!isfinite(got), "seed %u: tree reaches what the search cannot", seed);
                continue;
            }
            ck_assert_msg(fabs(got - want) <= 1e-4 * fmax(1.0, want),
                          "seed %u goal %d start %d: tree %.6f, own search %.6f", seed, gi, si, got,
                          want);
            uint32_t n;
            double cost;
            bool complete;
            ck_assert_int_eq(steer_flow_corridor(fl, sp, x, polys, via, 4096, &n, &cost, &complete),
                             NAV_OK);
            ck_assert(complete);
            ck_assert(cost == got);
            ck_assert_uint_eq(polys[0], sp);
            ck_assert_uint_eq(polys[n - 1], gp);
            assert_connected(m, polys, via, n);
            float corners[3 * 64];
            nav_path_result r;
            memset(&r, 0, sizeof r);
            r.corners = corners;
            r.max_corners = 64;
            ck_assert_int_eq(nav_string_pull(m, polys, via, n, x, g, &r), NAV_OK);
            /* the pulled path is no shorter than the straight line */
            ck_assert(r.length >= nav_dist3d(x, g) - 1e-4);
            /* a corridor prefix pulled with an open end gives the whole
               pull's first corners, or asks for more corridor */
            uint32_t cut = 1 + fx_rand(&rng) % 8, pn, pvia[16], ppolys[16];
            bool pc;
            ck_assert_int_eq(steer_flow_corridor(fl, sp, x, ppolys, pvia, cut, &pn, &cost, &pc),
                             NAV_OK);
            ck_assert(memcmp(ppolys, polys, pn * sizeof *polys) == 0);
            float pcorners[3 * 64];
            nav_path_result pr;
            memset(&pr, 0, sizeof pr);
            pr.corners = pcorners;
            pr.max_corners = 64;
            nav_status ps = nav_string_pull_prefix(m, ppolys, pvia, pn, x, g, 2, 0.5, !pc, &pr);
            ck_assert(ps == NAV_OK || (ps == NAV_E_LIMIT && !pc));
            if (ps == NAV_OK) {
                ck_assert_uint_le(pr.ncorners, r.ncorners);
                ck_assert_msg(memcmp(pcorners, corners, 3 * sizeof(float) * pr.ncorners) == 0,
                              "seed %u: an open-end prefix pulls other corners", seed);
            }
            compared++;
        }
        steer_flow_free(fl);
    }
    return compared;
}

START_TEST(tree_equals_own_search_random) {
    fx_random_opts o = fx_random_defaults();
    uint32_t compared = 0;
    for (uint32_t seed = 1; seed <= 24; seed++) {
        o.walls = seed % 2;
        o.bridge = seed % 3 == 0;
        o.triangulate = seed % 4 == 1;
        nav_mesh *m = fx_random(seed, &o);
        compared += check_mesh(m, NULL, seed);
        nav_mesh_free(m);
    }
    ck_assert_uint_gt(compared, 500);
}
END_TEST

/* Two 6 x 6 islands (the second 2 m higher) joined by a one-way link and a
   two-way one; a band of area 1 (cost 3) and one of area 2 (excluded by the
   second filter) across the first island. */
static nav_mesh *linked_islands(void) {
    fx_builder *b = fx_new();
    for (int x = 0; x < 6; x++)
        for (int z = 0; z < 6; z++) {
            uint8_t area = x == 2 ? 1 : (x == 4 && z < 4 ? 2 : 0);
            fx_quad(b, (float)x, (float)z, (float)x + 1, (float)z + 1, 0, area);
            fx_quad(b, 8.0f + (float)x, (float)z, 9.0f + (float)x, (float)z + 1, 2, 0);
        }
    const float a1[3] = {5.5f, 0, 0.5f}, b1[3] = {8.5f, 2, 0.5f};
    const float a2[3] = {5.5f, 0, 5.5f}, b2[3] = {8.5f, 2, 5.5f};
    fx_link(b, a1, b1, 0.5f, 0, 0, "jump");
    fx_link(b, b2, a2, 0.5f, 1, 3, "ladder");
    return fx_build(b);
}

START_TEST(tree_equals_own_search_links_costs) {
    nav_mesh *m = linked_islands();
    nav_filter f;
    nav_filter_default(&f);
    uint32_t compared = check_mesh(m, &f, 7);
    f.area_cost[1] = 3.0f;
    f.area_cost[3] = 0.5f;
    compared += check_mesh(m, &f, 8);
    f.exclude_mask = 1u << 2;
    compared += check_mesh(m, &f, 9);
    /* the link can be the only way: from the first island to the second */
    nav_filter_default(&f);
    float g[3] = {12.5f, 2, 3.5f}, x[3] = {0.5f, 0, 3.5f}, on[3];
    uint32_t gp, sp, first;
    ck_assert_int_eq(nav_mesh_nearest(m, g, (float[3]){0.1f, 1, 0.1f}, 0, &gp, on), NAV_OK);
    ck_assert_int_eq(nav_mesh_nearest(m, x, (float[3]){0.1f, 1, 0.1f}, 0, &sp, on), NAV_OK);
    steer_flow *fl = steer_flow_build(m, &f, gp, g);
    double got = steer_flow_cost(fl, sp, x, &first);
    ck_assert(isfinite(got));
    ck_assert(fabs(got - ref_cost(m, &f, sp, x, gp, g)) <= 1e-4);
    uint32_t polys[256], via[256], n;
    double cost;
    bool complete;
    ck_assert_int_eq(steer_flow_corridor(fl, sp, x, polys, via, 256, &n, &cost, &complete), NAV_OK);
    ck_assert(complete);
    bool linked = false;
    for (uint32_t i = 0; i < n; i++)
        linked = linked || via[i] != NAV_NONE;
    ck_assert_msg(linked, "the corridor crosses to the other island by a link");
    steer_flow_free(fl);
    nav_mesh_free(m);
    ck_assert_uint_gt(compared, 60);
}
END_TEST

/* nav_step with a shared tree: 12 agents seek one target across a random
   mesh; a cold scratch and one that already holds the tree (and other
   trees) answer the same bytes, tick after tick. */
START_TEST(step_with_tree_is_history_free) {
    fx_random_opts o = fx_random_defaults();
    o.walls = 1;
    nav_mesh *m = fx_random(5, &o);
    enum { N = 12 };
    nav_agent_in in[N];
    nav_agent_out a[N], b[N];
    uint32_t rng = 99;
    float target[3];
    fx_random_point(m, &rng, target);
    memset(in, 0, sizeof in);
    for (int i = 0; i < N; i++) {
        fx_random_point(m, &rng, in[i].pos);
        memcpy(in[i].target, target, sizeof target);
        in[i].has_target = true;
        in[i].radius = 0.2f;
        in[i].max_speed = 2;
        in[i].max_accel = 8;
        in[i].behavior = i % 2 ? NAV_BEHAVIOR_SEEK : NAV_BEHAVIOR_ARRIVE;
    }
    nav_steer_params p;
    nav_steer_params_default(&p);
    nav_query *q = nav_query_new(4096);
    nav_steer *warm = nav_steer_new(N, 1);
    /* warm up with other targets first */
    for (int t = 0; t < 3; t++) {
        nav_agent_in other[N];
        memcpy(other, in, sizeof other);
        for (int i = 0; i < N; i++)
            fx_random_point(m, &rng, other[i].target);
        ck_assert_int_eq(nav_step(warm, m, q, NULL, &p, other, N, NULL, 0, a, NULL), NAV_OK);
    }
    for (int t = 0; t < 20; t++) {
        nav_steer *cold = nav_steer_new(N, 1);
        ck_assert_int_eq(nav_step(cold, m, q, NULL, &p, in, N, NULL, 0, a, NULL), NAV_OK);
        ck_assert_int_eq(nav_step(warm, m, q, NULL, &p, in, N, NULL, 0, b, NULL), NAV_OK);
        ck_assert(memcmp(a, b, sizeof a) == 0);
        nav_steer_free(cold);
        for (int i = 0; i < N; i++) {
            memcpy(in[i].pos, a[i].pos, sizeof in[i].pos);
            memcpy(in[i].vel, a[i].vel, sizeof in[i].vel);
        }
    }
    nav_steer_free(warm);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* More shared goals than a tick builds trees for (STEER_FLOW_TICK_MAX):
   40 goals of 4 agents each. Which goals get trees depends on the request
   alone: a cold scratch, one that keeps trees of other goals and one that
   keeps trees of the later goals answer the same bytes. A deadline already
   passed stops the step before the trees are built. */
START_TEST(many_goals_history_free) {
    fx_random_opts o = fx_random_defaults();
    o.walls = 1;
    nav_mesh *m = fx_random(9, &o);
    enum { G = 40, N = 4 * G };
    static nav_agent_in in[N], rev[N];
    static nav_agent_out a[N], b[N];
    uint32_t rng = 17;
    float goals[G][3];
    for (int g = 0; g < G; g++)
        fx_random_point(m, &rng, goals[g]);
    memset(in, 0, sizeof in);
    for (int i = 0; i < N; i++) {
        fx_random_point(m, &rng, in[i].pos);
        memcpy(in[i].target, goals[i % G], sizeof in[i].target);
        in[i].has_target = true;
        in[i].radius = 0.1f;
        in[i].max_speed = 2;
        in[i].max_accel = 8;
        in[i].behavior = NAV_BEHAVIOR_SEEK;
    }
    /* the same goals in the opposite order: other goals get the trees */
    for (int i = 0; i < N; i++)
        rev[i] = in[N - 1 - i];
    nav_steer_params p;
    nav_steer_params_default(&p);
    nav_query *q = nav_query_new(4096);
    nav_steer *cold = nav_steer_new(N, 1), *warm = nav_steer_new(N, 1);
    ck_assert_int_eq(nav_step(warm, m, q, NULL, &p, rev, N, NULL, 0, b, NULL), NAV_OK);
    ck_assert_int_eq(nav_step(cold, m, q, NULL, &p, in, N, NULL, 0, a, NULL), NAV_OK);
    ck_assert_int_eq(nav_step(warm, m, q, NULL, &p, in, N, NULL, 0, b, NULL), NAV_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    nav_steer *late = nav_steer_new(N, 1);
    p.deadline = 1e-9;
    ck_assert_int_eq(nav_step(late, m, q, NULL, &p, in, N, NULL, 0, a, NULL), NAV_E_DEADLINE);
    nav_steer_free(late);
    nav_steer_free(cold);
    nav_steer_free(warm);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* A 10 x 10 grid of 1 m quads; wall: the cells of column x = 5 but the
   one at z = 9 are lifted 5 m (islands), so the way from the left half to
   the right one bends through the gap. The polygons, their order and the
   goal's polygon are the same in both: only the mesh's identity tells the
   trees apart. */
static nav_mesh *grid_mesh(bool wall) {
    fx_builder *b = fx_new();
    for (int x = 0; x < 10; x++)
        for (int z = 0; z < 10; z++) {
            float y = wall && x == 5 && z != 9 ? 5.0f : 0.0f;
            fx_quad(b, (float)x, (float)z, (float)x + 1, (float)z + 1, y, 0);
        }
    return fx_build(b);
}

/* One nav_step of the 8 seekers of grid_test_agents on m. */
static void grid_step(nav_steer *s, const nav_mesh *m, nav_cache *c, const nav_agent_in *in,
                      nav_agent_out *out) {
    nav_steer_params p;
    nav_steer_params_default(&p);
    nav_query *q = nav_query_new(4096);
    ck_assert_int_eq(nav_step(s, m, q, c, &p, in, 8, NULL, 0, out, NULL), NAV_OK);
    nav_query_free(q);
}

/* Trees are listed in the path cache, so a step on another scratch (another
   thread) reuses the tree instead of building it, with the same answer as
   a step without any cache; and a replaced mesh never gets the old mesh's
   tree: the same goal on a mesh rebuilt with a wall is answered as without
   a cache (the detour through the gap), not along the old straight tree. */
START_TEST(trees_shared_through_cache_never_stale) {
    nav_agent_in in[8];
    memset(in, 0, sizeof in);
    for (int i = 0; i < 8; i++) {
        in[i].pos[0] = 1.5f + 0.3f * (float)(i % 4);
        in[i].pos[2] = 1.5f + (float)(i / 4);
        in[i].target[0] = 8.5f;
        in[i].target[2] = 2.5f;
        in[i].has_target = true;
        in[i].radius = 0.1f;
        in[i].max_speed = 2;
        in[i].max_accel = 8;
        in[i].behavior = NAV_BEHAVIOR_SEEK;
    }
    nav_agent_out ref[8], a[8], b[8];
    nav_cache *c = nav_cache_new(1 << 20, 4);
    nav_mesh *open = grid_mesh(false);
    nav_steer *ref_s = nav_steer_new(8, 1), *s1 = nav_steer_new(8, 1), *s2 = nav_steer_new(8, 1);
    grid_step(ref_s, open, NULL, in, ref);
    grid_step(s1, open, c, in, a);
    ck_assert(memcmp(ref, a, sizeof ref) == 0);
    ck_assert_uint_eq(nav_cache_tree_count(c), 1);
    ck_assert_uint_eq(s1->nflows, 1);
    ck_assert_ptr_nonnull(s1->flows[0].shared);
    /* a cold scratch finds the listed tree: the same entry, not a rebuild */
    grid_step(s2, open, c, in, b);
    ck_assert(memcmp(ref, b, sizeof ref) == 0);
    ck_assert_uint_eq(s2->nflows, 1);
    ck_assert_ptr_eq(s2->flows[0].shared, s1->flows[0].shared);
    ck_assert_uint_eq(nav_cache_tree_count(c), 1);
    /* the straight way: every agent heads right, along z */
    for (int i = 0; i < 8; i++)
        ck_assert_float_gt(ref[i].corners[0][0], 5.0f);

    /* the mesh is replaced (as a PUT does): the old one is freed while both
       scratches and the cache still hold its tree */
    nav_mesh_free(open);
    nav_mesh *walled = grid_mesh(true);
    nav_steer *cold = nav_steer_new(8, 1);
    grid_step(ref_s, walled, NULL, in, ref);
    /* the detour: every path turns at the gap, z >= 9 */
    for (int i = 0; i < 8; i++) {
        bool gap = false;
        for (uint32_t k = 0; k < ref[i].ncorners; k++)
            gap = gap || ref[i].corners[k][2] >= 9.0f;
        ck_assert(gap);
    }
    grid_step(s1, walled, c, in, a);
    grid_step(cold, walled, c, in, b);
    ck_assert(memcmp(ref, a, sizeof ref) == 0);
    ck_assert(memcmp(ref, b, sizeof ref) == 0);
    ck_assert_uint_eq(nav_cache_tree_count(c), 2);
    ck_assert_ptr_ne(cold->flows[0].shared, s2->flows[0].shared);
    ck_assert_ptr_eq(cold->flows[0].shared, s1->flows[1].shared);

    /* the cache goes first (as at shutdown): scratches keep their trees */
    nav_cache_free(c);
    grid_step(cold, walled, NULL, in, b);
    ck_assert(memcmp(ref, b, sizeof ref) == 0);
    nav_steer_free(cold);
    nav_steer_free(s2);
    nav_steer_free(s1);
    nav_steer_free(ref_s);
    nav_mesh_free(walled);
}
END_TEST

extern Suite *nav_flow_suite(void);
Suite *nav_flow_suite(void) {
    Suite *s = suite_create("nav_flow");
    TCase *tc = tcase_create("flow");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tree_equals_own_search_random);
    tcase_add_test(tc, tree_equals_own_search_links_costs);
    tcase_add_test(tc, step_with_tree_is_history_free);
    tcase_add_test(tc, many_goals_history_free);
    tcase_add_test(tc, trees_shared_through_cache_never_stale);
    suite_add_tcase(s, tc);
    return s;
}
