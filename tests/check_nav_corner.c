/*
 * check_nav_corner: the corner visibility graph behind the exact search
 * (nav/nav_corner.h), beyond the property tests in check_nav_optimal.c
 * (which run every random mesh through both exact searches against the
 * brute-force reference):
 *   - the graph of a hand-made mesh, node by node and edge by edge;
 *   - which search answers: the graph without exclusions, the interval
 *     search when an exclusion removes a present area (the walls move);
 *   - the preprocessing belongs to the mesh: one query scratch serving
 *     meshes in turn (a replaced mesh, a larger one) answers each from its
 *     own graph; over HTTP, a replaced mesh answers from its new walls;
 *   - budgets: the graph search stops within max_nodes;
 *   - the walks on threads build the same graph as one thread, byte for
 *     byte (nav_corner_save), on meshes with many chunks of nodes;
 *   - the walk mesh joins straight runs of edges (a hand-made row of cells
 *     and random grids: nothing left to join, twins paired, shapes kept);
 *   - the search's bound on the answer (entries above a known path's
 *     length are not queued) keeps the answer: with and without it, the
 *     same status and length, and the brute-force reference's length.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner_internal.h"
#include "nav/nav_optimal.h"
#include "nav/nav_query.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"
#include "tests/test_visgraph.h"

/* Declared for -Wmissing-prototypes; "extern" keeps it out of suite discovery. */
extern Suite *nav_corner_suite(void);

typedef struct run {
    float corners[3 * 256];
    uint32_t polys[1024];
    nav_path_result res;
    nav_status st;
} run;

static void search(nav_optimal *o, run *r, const nav_mesh *m, float x0, float z0, float x1,
                   float z1, uint64_t excl, uint32_t budget) {
    float s[3] = {x0, 0, z0}, e[3] = {x1, 0, z1}, out[3];
    const float ext[3] = {0.01f, 0.5f, 0.01f};
    uint32_t sp, ep;
    ck_assert_int_eq(nav_mesh_nearest(m, s, ext, 0, &sp, out), NAV_OK);
    ck_assert_int_eq(nav_mesh_nearest(m, e, ext, 0, &ep, out), NAV_OK);
    memset(&r->res, 0, sizeof r->res);
    r->res.corners = r->corners;
    r->res.max_corners = 256;
    r->res.polys = r->polys;
    r->res.max_polys = 1024;
    r->st = nav_optimal_search(o, m, sp, s, ep, e, excl, budget, &r->res);
}

static double xz_len(const run *r) {
    double l = 0;
    for (uint32_t i = 1; i < r->res.ncorners; i++)
        l += hypot((double)r->corners[3 * i] - r->corners[3 * i - 3],
                   (double)r->corners[3 * i + 2] - r->corners[3 * i - 1]);
    return l;
}

static uint32_t node_at(const nav_cgraph *g, double x, double z) {
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->xz[2 * i] == x && g->xz[2 * i + 1] == z)
            return i;
    return NAV_NONE;
}

static int has_edge(const nav_cgraph *g, uint32_t u, uint32_t v) {
    for (uint32_t i = g->adj_start[u]; i < g->adj_start[u + 1]; i++)
        if (g->adj[i].to == v)
            return 1;
    return 0;
}

/*
 * Square [0,10]^2 with the hole [4,6]^2. The square's own corners have a
 * walkable angle of 90 degrees: no nodes. The hole's four corners have
 * 270: four nodes. Each sees its two neighbours along the hole's sides
 * (tangent: the segment runs along a wall) and not the opposite one
 * (through the hole): 8 directed edges, and a corner's two edges lie on
 * opposite sides of its obstacle, one in each half of its list.
 */
START_TEST(test_square_hole_graph) {
    nav_mesh *m = fx_square_with_hole();
    const nav_cgraph *g = m->cgraph;
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->ncorners, 4);
    ck_assert_uint_eq(g->nnodes, 4);
    ck_assert_uint_eq(nav_corner_edge_count(g), 8);
    static const double c[4][2] = {{4, 4}, {6, 4}, {6, 6}, {4, 6}};
    uint32_t id[4];
    for (int i = 0; i < 4; i++) {
        id[i] = node_at(g, c[i][0], c[i][1]);
        ck_assert_uint_ne(id[i], NAV_NONE);
    }
    for (int i = 0; i < 4; i++) {
        ck_assert(has_edge(g, id[i], id[(i + 1) % 4]));
        ck_assert(has_edge(g, id[i], id[(i + 3) % 4]));
        ck_assert(!has_edge(g, id[i], id[(i + 2) % 4]));
        ck_assert_uint_eq(g->adj_mid[id[i]] - g->adj_start[id[i]], 1);
        ck_assert_uint_eq(g->adj_start[id[i] + 1] - g->adj_mid[id[i]], 1);
    }
    ck_assert_uint_gt(nav_corner_memory(g), 0);
    ck_assert_uint_ge(nav_mesh_memory(m), nav_corner_memory(g));
    nav_mesh_free(m);
}
END_TEST

/*
 * The all-pairs table on the square with a 2 x 2 hole: corners side by side
 * are 2 apart (an edge), opposite ones 4 (the hole lies between them, so
 * round either neighbour, two steps); the "next" entries walk there in that
 * many steps, none a link's hop. The table is not stored: a graph loaded
 * from its stored form builds the same table again.
 */
START_TEST(test_square_hole_table) {
    nav_mesh *m = fx_square_with_hole();
    nav_cgraph *g = m->cgraph;
    ck_assert(nav_corner_has_table(g));
    uint32_t n = g->nnodes;
    static const double c[4][2] = {{4, 4}, {6, 4}, {6, 6}, {4, 6}};
    uint32_t id[4];
    for (int i = 0; i < 4; i++)
        id[i] = node_at(g, c[i][0], c[i][1]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int apart = (i - j + 4) % 4;
            double want = apart == 0 ? 0 : apart == 2 ? 4 : 2;
            ck_assert_double_eq_tol(g->td[(size_t)id[i] * n + id[j]], want, 1e-12);
            uint32_t v = id[i], steps = 0;
            while (v != id[j] && steps < 8) {
                uint16_t t = g->tnext[(size_t)v * n + id[j]];
                ck_assert_uint_ne(t, NAV_CORNER_TABLE_NONE);
                ck_assert_uint_eq(t & NAV_CORNER_TABLE_HOP, 0);
                v = t;
                steps++;
            }
            ck_assert_uint_eq(steps, apart == 0 ? 0 : apart == 2 ? 2 : 1);
        }
    size_t len = nav_corner_save(g, NULL);
    uint8_t *buf = malloc(len);
    ck_assert_uint_eq(nav_corner_save(g, buf), len);
    m->cgraph = NULL;
    ck_assert_int_eq(nav_corner_load(m, buf, len, 2), NAV_OK);
    ck_assert(nav_corner_has_table(m->cgraph));
    ck_assert_mem_eq(m->cgraph->td, g->td, (size_t)n * n * sizeof *g->td);
    ck_assert_mem_eq(m->cgraph->tnext, g->tnext, (size_t)n * n * sizeof *g->tnext);
    ck_assert_uint_eq(nav_corner_memory(m->cgraph), nav_corner_memory(g));
    nav_corner_free(g);
    free(buf);
    nav_mesh_free(m);
}
END_TEST

/* The same square, the quad [4,6]x[6,10] (above the hole) of area 1:
   excluding area 1 turns the whole column x in [4,6], z in [4,10] into a
   wall, which the graph (built with that quad walkable) does not know. */
static nav_mesh *hole_with_area(void) {
    static const float g[4] = {0, 4, 6, 10};
    fx_builder *b = fx_new();
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            if (i != 1 || j != 1)
                fx_quad(b, g[i], g[j], g[i + 1], g[j + 1], 0, (uint8_t)(i == 1 && j == 2));
    return fx_build(b);
}

/*
 * Which search answers. Nothing excluded: the graph; (1,5) -> (9,5) bends
 * at two hole corners, 2 sqrt(10) + 2. An area the mesh lacks excluded:
 * still the graph. Area 1 excluded: the interval search. From (1,9) to
 * (9,9) the straight line crosses the excluded quad, and the column
 * reaches the square's top side, so the way goes under the hole, via
 * (4,4) and (6,4): |(1,9)-(4,4)| + 2 + |(6,4)-(9,9)| = 2 sqrt(34) + 2;
 * without the exclusion it is the straight 8.
 */
/* Signed xz area of walk-mesh piece wp's loop (negative: stored winding). */
static double piece_area(const nav_mesh *w, uint32_t wp) {
    uint32_t s = w->poly_start[wp], n = nav_poly_nverts(w, wp);
    double a2 = 0;
    for (uint32_t k = 0; k < n; k++) {
        const float *a = nav_vert(w, w->poly_verts[s + k]);
        const float *b = nav_vert(w, w->poly_verts[s + (k + 1) % n]);
        a2 += (double)a[0] * b[2] - (double)b[0] * a[2];
    }
    return 0.5 * a2;
}

/* b strictly inside the axis-parallel segment a -> c. */
static int straight_through(const float *a, const float *b, const float *c) {
    if (a[0] == b[0] && b[0] == c[0])
        return (b[2] - a[2]) * (c[2] - b[2]) > 0;
    if (a[2] == b[2] && b[2] == c[2])
        return (b[0] - a[0]) * (c[0] - b[0]) > 0;
    return 0;
}

/*
 * The walk mesh joins runs of straight edges that lead to the same piece
 * (or are walls), so a sight cone does not split at every cell edge.
 * Hand-made: a row of three unit cells merges into one piece whose
 * eight-vertex loop runs straight through four vertices (walls on both
 * long sides): a rectangle of four remains. Then on random grids (pillars,
 * rooms, merged runs, triangles), every piece: no vertex left that could
 * be joined, every portal's twin leads back over the same two vertices
 * reversed, and the loop's area is its polygons' (the pieces keep their
 * shape and tile the mesh).
 */
START_TEST(test_walk_joins_straight_runs) {
    fx_builder *b = fx_new();
    for (int i = 0; i < 3; i++)
        fx_quad(b, (float)i, 0, (float)i + 1, 1, 0, 0);
    nav_mesh *m = fx_build(b);
    ck_assert_ptr_nonnull(m->cgraph);
    const nav_mesh *w = m->cgraph->wm;
    ck_assert_uint_eq(w->npolys, 1);
    ck_assert_uint_eq(nav_poly_nverts(w, 0), 4);
    for (uint32_t k = 0; k < 4; k++) {
        const float *v = nav_vert(w, w->poly_verts[k]);
        ck_assert((v[0] == 0 || v[0] == 3) && (v[2] == 0 || v[2] == 1));
    }
    ck_assert_double_eq_tol(fabs(piece_area(w, 0)), 3.0, 1e-12);
    nav_mesh_free(m);

    uint32_t joinable = 0, slots_seen = 0;
    for (uint32_t seed = 1; seed <= 16; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.width = o.height = 12 + seed % 4 * 6;
        o.walls = seed % 2 == 0;
        o.merge_runs = seed % 4 == 1;
        o.triangulate = seed % 3 == 0;
        o.hole_ratio = 0.05f + 0.05f * (float)(seed % 3);
        m = fx_random(seed, &o);
        ck_assert_ptr_nonnull(m->cgraph);
        const nav_cgraph *g = m->cgraph;
        w = g->wm;
        double *area = calloc(w->npolys, sizeof *area);
        for (uint32_t p = 0; p < m->npolys; p++)
            area[g->wof[p]] += m->poly_area[p];
        for (uint32_t wp = 0; wp < w->npolys; wp++) {
            uint32_t s = w->poly_start[wp], n = nav_poly_nverts(w, wp);
            ck_assert_uint_ge(n, 3);
            ck_assert_double_eq_tol(fabs(piece_area(w, wp)), area[wp], 1e-9 * (1 + area[wp]));
            for (uint32_t k = 0; k < n; k++, slots_seen++) {
                uint32_t kp = (k + n - 1) % n, kn = (k + 1) % n;
                const float *a = nav_vert(w, w->poly_verts[s + kp]);
                const float *v = nav_vert(w, w->poly_verts[s + k]);
                const float *c = nav_vert(w, w->poly_verts[s + kn]);
                joinable += w->poly_nei[s + kp] == w->poly_nei[s + k] &&
                            g->wcorner_of[s + k] == NAV_NONE && straight_through(a, v, c);
                uint32_t nb = w->poly_nei[s + k];
                if (nb == NAV_NONE)
                    continue;
                uint32_t t = w->poly_twin[s + k], ts = w->poly_start[nb];
                uint32_t tn = nav_poly_nverts(w, nb);
                ck_assert(t >= ts && t < ts + tn);
                ck_assert_uint_eq(w->poly_nei[t], wp);
                ck_assert_uint_eq(w->poly_twin[t], s + k);
                ck_assert_uint_eq(w->poly_verts[t], w->poly_verts[s + kn]);
                ck_assert_uint_eq(w->poly_verts[ts + (t - ts + 1) % tn], w->poly_verts[s + k]);
            }
        }
        free(area);
        nav_mesh_free(m);
    }
    ck_assert_uint_eq(joinable, 0);
    ck_assert_uint_gt(slots_seen, 1000);
}
END_TEST

START_TEST(test_dispatch) {
    nav_mesh *m = hole_with_area();
    nav_optimal *o = nav_optimal_new(4096);
    nav_optimal_use_graph(o, NAV_OPT_GRAPH_ON); /* the mesh is small: AUTO would not use it */
    nav_optimal_stats a, b;
    run r;
    nav_optimal_stats_get(o, &a);
    search(o, &r, m, 1, 5, 9, 5, 0, 0);
    nav_optimal_stats_get(o, &b);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(xz_len(&r), 2 * sqrt(10.0) + 2, 1e-5);
    ck_assert_uint_eq(b.graph_searches, a.graph_searches + 1);

    search(o, &r, m, 1, 5, 9, 5, 1ull << 7, 0); /* area 7: not on this mesh */
    nav_optimal_stats_get(o, &a);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(xz_len(&r), 2 * sqrt(10.0) + 2, 1e-5);
    ck_assert_uint_eq(a.graph_searches, b.graph_searches + 1);

    search(o, &r, m, 1, 9, 9, 9, 1ull << 1, 0);
    nav_optimal_stats_get(o, &b);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(xz_len(&r), 2 * sqrt(34.0) + 2, 1e-5);
    ck_assert_uint_eq(b.graph_searches, a.graph_searches);
    ck_assert_uint_eq(b.interval_searches, a.interval_searches + 1);
    for (uint32_t i = 0; i < r.res.npolys; i++)
        ck_assert_uint_ne(m->areas[r.res.polys[i]], 1);
    /* and without the exclusion the graph takes the straight line */
    search(o, &r, m, 1, 9, 9, 9, 0, 0);
    ck_assert_double_eq_tol(xz_len(&r), 8, 1e-6);
    ck_assert_uint_eq(b.graph_misses, 0);
    nav_optimal_free(o);
    nav_mesh_free(m);
}
END_TEST

/*
 * The preprocessing belongs to the mesh. One scratch answers a mesh with a
 * hole, then its replacement without one (the same bounds: a stale graph
 * would still bend), then a 30 x 30 random mesh with many more nodes (the
 * scratch grows), then the first mesh again.
 */
START_TEST(test_scratch_across_meshes) {
    nav_optimal *o = nav_optimal_new(1u << 16);
    nav_optimal_use_graph(o, NAV_OPT_GRAPH_ON);
    nav_mesh *hole = fx_square_with_hole();
    fx_builder *bld = fx_new();
    static const float g[4] = {0, 4, 6, 10};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            fx_quad(bld, g[i], g[j], g[i + 1], g[j + 1], 0, 0);
    nav_mesh *full = fx_build(bld);
    ck_assert_uint_eq(full->cgraph->nnodes, 0);
    run r;
    search(o, &r, hole, 1, 5, 9, 5, 0, 0);
    ck_assert_double_eq_tol(xz_len(&r), 2 * sqrt(10.0) + 2, 1e-5);
    search(o, &r, full, 1, 5, 9, 5, 0, 0);
    ck_assert_double_eq_tol(xz_len(&r), 8, 1e-6);
    ck_assert_uint_eq(r.res.ncorners, 2);

    fx_random_opts ro = fx_random_defaults();
    ro.width = ro.height = 30;
    ro.hole_ratio = 0.25f;
    ro.islands = 0;
    nav_mesh *big = fx_random(77, &ro);
    ck_assert_uint_gt(big->cgraph->nnodes, 100);
    uint32_t rng = 99, answered = 0;
    nav_optimal *fresh = nav_optimal_new(1u << 16);
    for (int q = 0; q < 40; q++) {
        float s[3], e[3];
        uint32_t sp = fx_random_point(big, &rng, s), ep = fx_random_point(big, &rng, e);
        run x, y;
        memset(&x.res, 0, sizeof x.res);
        memset(&y.res, 0, sizeof y.res);
        x.res.corners = x.corners, x.res.max_corners = 256;
        y.res.corners = y.corners, y.res.max_corners = 256;
        x.st = nav_optimal_search(o, big, sp, s, ep, e, 0, 0, &x.res);
        nav_optimal_use_graph(fresh, NAV_OPT_GRAPH_OFF);
        y.st = nav_optimal_search(fresh, big, sp, s, ep, e, 0, 0, &y.res);
        ck_assert_int_eq(x.st, y.st);
        if (x.st == NAV_OK) {
            ck_assert_double_eq_tol(xz_len(&x), xz_len(&y), 1e-4);
            answered++;
        }
    }
    ck_assert_uint_gt(answered, 20);
    search(o, &r, hole, 1, 5, 9, 5, 0, 0);
    ck_assert_double_eq_tol(xz_len(&r), 2 * sqrt(10.0) + 2, 1e-5);
    nav_optimal_stats st;
    nav_optimal_stats_get(o, &st);
    ck_assert_uint_eq(st.graph_misses, 0);
    nav_optimal_free(fresh);
    nav_optimal_free(o);
    nav_mesh_free(big);
    nav_mesh_free(full);
    nav_mesh_free(hole);
}
END_TEST

/* One nav_corner_search into its own buffers. */
typedef struct cs_run {
    float corners[3 * 256];
    uint32_t polys[1024];
    nav_path_result res;
    nav_status st;
} cs_run;

static void corner_run(nav_corner_query *cq, cs_run *r, const nav_mesh *m, uint32_t sp,
                       const float s[3], uint32_t ep, const float e[3]) {
    memset(&r->res, 0, sizeof r->res);
    r->res.corners = r->corners;
    r->res.max_corners = 256;
    r->res.polys = r->polys;
    r->res.max_polys = 1024;
    r->st = nav_corner_search(cq, m, sp, s, ep, e, 0, 1u << 20, &r->res);
}

/* The brute-force reference of m (nothing excluded). */
static vg_ref *ref_new(const nav_mesh *m) {
    vg_ref *r = vg_new(m, 0);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* A random start and goal on m; 1 when the goal is reachable. */
static int rand_pair(const nav_mesh *m, uint32_t *rng, uint32_t *sp, float s[3], uint32_t *ep,
                     float e[3]) {
    *sp = fx_random_point(m, rng, s);
    *ep = fx_random_point(m, rng, e);
    return nav_mesh_reachable(m, *sp, *ep);
}

/* r's xz length is the brute-force reference's shortest (seed, q: where). */
static void check_ref(vg_ref *ref, const cs_run *r, uint32_t sp, const float s[3], uint32_t ep,
                      const float e[3], uint32_t seed, int q) {
    double got = 0, want = vg_shortest(ref, sp, s, ep, e);
    for (uint32_t i = 1; i < r->res.ncorners; i++)
        got += hypot((double)r->corners[3 * i] - r->corners[3 * i - 3],
                     (double)r->corners[3 * i + 2] - r->corners[3 * i - 1]);
    ck_assert_msg(fabs(got - want) <= 1e-4, "seed %u q %d: %.9f reference %.9f", seed, q, got,
                  want);
}

/*
 * The bound: a node known from the start side (cost g) that a goal cone
 * shows (distance d to the goal) gives a path of length g + d; a queue
 * entry whose key exceeds the least such length (plus a 1e-9 relative
 * slack for rounding) would leave the queue after the goal, so it is not
 * queued. Claim: the answer keeps its length. (Not always the same steps:
 * entries of equal keys leave in heap order, and the heap holds fewer
 * entries, so among equal paths another may be taken.) Tested against the
 * search with the bound off, on random meshes of pillars, walls, merged
 * runs and bridges, and against the brute-force visibility graph; the
 * bound must have kept entries out (else this tests nothing).
 *
 * The same queries check the edge targets' two forms: the search reads
 * 16-bit ids when every id fits (adj16) and adj past 65,536 nodes, which
 * no test mesh reaches. adj16 must equal adj entry for entry, and the A*
 * (which scans the edges; the table mode does not) over adj alone must
 * answer bit for bit as over the copy, and as the reference.
 */
START_TEST(test_bound_same_answers) {
    nav_corner_query *with = nav_corner_query_new(), *without = nav_corner_query_new();
    nav_corner_query *astar = nav_corner_query_new();
    ck_assert_ptr_nonnull(with);
    ck_assert_ptr_nonnull(without);
    ck_assert_ptr_nonnull(astar);
    nav_corner_query_set_bound(without, 0);
    nav_corner_query_set_table(astar, 0);
    uint32_t found = 0, queries = 0, same_steps = 0;
    for (uint32_t seed = 1; seed <= 60; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.width = o.height = 8 + seed % 6;
        o.hole_ratio = 0.2f + 0.05f * (float)(seed % 3);
        o.walls = seed % 4 == 1;
        o.merge_runs = seed % 4 == 2;
        o.bridge = seed % 5 == 0;
        nav_mesh *m = fx_random(seed, &o);
        nav_cgraph *g = m->cgraph;
        ck_assert_ptr_nonnull(g);
        ck_assert_ptr_nonnull(g->adj16);
        for (uint64_t i = 0; i < g->nedges; i++)
            ck_assert_uint_eq(g->adj16[i], g->adj[i].to);
        vg_ref *ref = ref_new(m);
        uint32_t rng = seed * 2246822519u + 7;
        for (int q = 0; q < 12; q++) {
            float s[3], e[3];
            uint32_t sp, ep;
            if (!rand_pair(m, &rng, &sp, s, &ep, e))
                continue;
            queries++;
            cs_run a, b;
            corner_run(with, &a, m, sp, s, ep, e);
            corner_run(without, &b, m, sp, s, ep, e);
            ck_assert_int_eq(a.st, b.st);
            if (a.st != NAV_OK)
                continue;
            found++;
            same_steps += a.res.nodes_expanded == b.res.nodes_expanded;
            ck_assert_msg(fabs(a.res.length - b.res.length) <= 1e-9 * (1 + b.res.length),
                          "seed %u q %d: %.12f without the bound %.12f", seed, q, a.res.length,
                          b.res.length);
            ck_assert_uint_ge(a.res.npolys, 1);
            ck_assert_uint_eq(a.polys[0], sp);
            ck_assert_uint_eq(a.polys[a.res.npolys - 1], ep);
            check_ref(ref, &a, sp, s, ep, e, seed, q);
            /* the A* over the 16-bit copy, then over adj alone */
            corner_run(astar, &a, m, sp, s, ep, e);
            uint16_t *a16 = g->adj16;
            g->adj16 = NULL;
            corner_run(astar, &b, m, sp, s, ep, e);
            g->adj16 = a16;
            ck_assert_int_eq(a.st, NAV_OK);
            ck_assert_int_eq(b.st, NAV_OK);
            ck_assert(a.res.length == b.res.length);
            ck_assert_uint_eq(a.res.ncorners, b.res.ncorners);
            ck_assert_uint_eq(a.res.npolys, b.res.npolys);
            ck_assert_uint_eq(a.res.nodes_expanded, b.res.nodes_expanded);
            ck_assert(memcmp(a.corners, b.corners, 3 * a.res.ncorners * sizeof(float)) == 0);
            ck_assert(memcmp(a.polys, b.polys, a.res.npolys * sizeof(uint32_t)) == 0);
            check_ref(ref, &a, sp, s, ep, e, seed, q);
        }
        vg_free(ref);
        nav_mesh_free(m);
    }
    printf("nav_corner bound: %u queries, %u paths (%u in as many steps), %llu entries kept out "
           "of the queue\n",
           queries, found, same_steps, (unsigned long long)nav_corner_query_pruned(with));
    ck_assert_uint_gt(found, queries / 2);
    ck_assert_uint_gt(nav_corner_query_pruned(with), 0);
    ck_assert_uint_eq(nav_corner_query_pruned(without), 0);
    nav_corner_query_free(with);
    nav_corner_query_free(without);
    nav_corner_query_free(astar);
}
END_TEST

/*
 * Sight tests (nav_corner_search.c, cs_try_goal): an A* search may learn
 * which nodes see the goal by testing each closed node's segment to it
 * instead of walking cones from the goal. Claim: the answer's length is
 * the same every way: the goal's walk alone (rays 0), one test and then
 * the walk (1, the hand-over mid-search), tests alone (never the walk),
 * and the default; each equal to the brute-force reference. On random
 * meshes of pillars, walls, merged runs (collinear vertices, grazing
 * sight lines), triangles, jittered vertices and bridges. The counts
 * must show each way was taken (else this tests nothing).
 */
START_TEST(test_sight_tests_same_lengths) {
    static const uint32_t rays[4] = {0, 1, NAV_CORNER_RAYS_AUTO - 1, NAV_CORNER_RAYS_AUTO};
    nav_corner_query *cq[4];
    for (int k = 0; k < 4; k++) {
        cq[k] = nav_corner_query_new();
        ck_assert_ptr_nonnull(cq[k]);
        nav_corner_query_set_table(cq[k], 0);
        nav_corner_query_set_rays(cq[k], rays[k]);
    }
    uint32_t queries = 0, found = 0;
    for (uint32_t seed = 1; seed <= 60; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.width = o.height = 8 + seed % 7;
        o.hole_ratio = 0.15f + 0.05f * (float)(seed % 4);
        o.walls = seed % 4 == 1;
        o.merge_runs = seed % 6 == 2;
        o.triangulate = seed % 3 == 0;
        o.jitter = seed % 6 == 5 ? 0.25f : 0.0f;
        o.bridge = seed % 5 == 0;
        nav_mesh *m = fx_random(seed, &o);
        ck_assert_ptr_nonnull(m->cgraph);
        vg_ref *ref = ref_new(m);
        uint32_t rng = seed * 3266489917u + 11;
        for (int q = 0; q < 12; q++) {
            float s[3], e[3];
            uint32_t sp, ep;
            if (!rand_pair(m, &rng, &sp, s, &ep, e))
                continue;
            queries++;
            cs_run r[4];
            for (int k = 0; k < 4; k++) {
                corner_run(cq[k], &r[k], m, sp, s, ep, e);
                ck_assert_int_eq(r[k].st, r[0].st);
            }
            if (r[0].st != NAV_OK)
                continue;
            found++;
            for (int k = 0; k < 4; k++) {
                ck_assert_msg(fabs(r[k].res.length - r[0].res.length) <=
                                  1e-9 * (1 + r[0].res.length),
                              "seed %u q %d rays %u: %.12f, by the goal's walk %.12f", seed, q,
                              rays[k], r[k].res.length, r[0].res.length);
                ck_assert_uint_eq(r[k].polys[0], sp);
                ck_assert_uint_eq(r[k].polys[r[k].res.npolys - 1], ep);
                check_ref(ref, &r[k], sp, s, ep, e, seed, q);
            }
        }
        vg_free(ref);
        nav_mesh_free(m);
    }
    uint64_t tests[4], walks[4];
    for (int k = 0; k < 4; k++)
        nav_corner_query_goal_counts(cq[k], &tests[k], &walks[k]);
    printf("nav_corner sight tests: %u queries, %u paths; tests / goal walks: walk only %llu / "
           "%llu, one test %llu / %llu, tests only %llu / %llu, default %llu / %llu\n",
           queries, found, (unsigned long long)tests[0], (unsigned long long)walks[0],
           (unsigned long long)tests[1], (unsigned long long)walks[1], (unsigned long long)tests[2],
           (unsigned long long)walks[2], (unsigned long long)tests[3],
           (unsigned long long)walks[3]);
    ck_assert_uint_gt(found, queries / 2);
    /* rays 0: every search walks from the goal, none tests */
    ck_assert_uint_eq(tests[0], 0);
    ck_assert_uint_eq(walks[0], queries);
    /* one test, then the walk: both happened, the walk more than once */
    ck_assert_uint_gt(tests[1], 0);
    ck_assert_uint_gt(walks[1], 1);
    ck_assert_uint_lt(walks[1], queries);
    /* tests only: many tests, no walk; these meshes are all near (the
       default tests too) */
    ck_assert_uint_gt(tests[2], queries);
    ck_assert_uint_eq(walks[2], 0);
    ck_assert_uint_gt(tests[3], 0);
    for (int k = 0; k < 4; k++)
        nav_corner_query_free(cq[k]);
}
END_TEST

/*
 * The default's choice: sight tests when start and goal are less than 32
 * typical polygon sizes apart (nav_corner_cell), the goal's walk from the
 * start when they are farther; tests give way to the walk after 64. On a
 * 60 x 60 field of pillars with random pairs, each search's counts say
 * which way it went: exactly as the rule predicts.
 */
START_TEST(test_sight_tests_by_distance) {
    fx_random_opts o = fx_random_defaults();
    o.width = o.height = 60;
    o.hole_ratio = 0.2f;
    nav_mesh *m = fx_random(21, &o);
    ck_assert_ptr_nonnull(m->cgraph);
    ck_assert(!nav_corner_has_table(m->cgraph));
    double cell = nav_corner_cell(m->cgraph);
    ck_assert(cell > 0);
    nav_corner_query *cq = nav_corner_query_new();
    ck_assert_ptr_nonnull(cq);
    uint32_t rng = 99, near = 0, far = 0, handed = 0;
    for (int q = 0; q < 200; q++) {
        float s[3], e[3];
        uint32_t sp, ep;
        if (!rand_pair(m, &rng, &sp, s, &ep, e))
            continue;
        double d = hypot((double)e[0] - s[0], (double)e[2] - s[2]) / cell;
        if (fabs(d - 32) < 1e-3)
            continue; /* on the line: either is right */
        uint64_t t0, w0, t1, w1;
        nav_corner_query_goal_counts(cq, &t0, &w0);
        cs_run r;
        corner_run(cq, &r, m, sp, s, ep, e);
        ck_assert_int_eq(r.st, NAV_OK);
        nav_corner_query_goal_counts(cq, &t1, &w1);
        if (d > 32) {
            far++;
            ck_assert_uint_eq(t1 - t0, 0);
            ck_assert_uint_eq(w1 - w0, 1);
        } else {
            near++;
            ck_assert_uint_le(t1 - t0, 64);
            ck_assert_uint_le(w1 - w0, t1 - t0 == 64 ? 1 : 0);
            handed += w1 - w0;
        }
    }
    printf("nav_corner sight tests by distance: %u near, %u far, %u near handed to the walk\n",
           near, far, handed);
    ck_assert_uint_gt(near, 20);
    ck_assert_uint_gt(far, 20);
    nav_corner_query_free(cq);
    nav_mesh_free(m);
}
END_TEST

/* The graph search spends at most max_nodes (cones walked plus nodes
   expanded plus sight tests) and then says NAV_E_LIMIT; with enough it
   answers. In table mode and in A* (where the tests run). */
START_TEST(test_budget) {
    for (int mode = 0; mode < 2; mode++) {
        fx_random_opts ro = fx_random_defaults();
        ro.width = ro.height = 20;
        ro.hole_ratio = 0.25f;
        ro.islands = 0;
        nav_mesh *m = fx_random(5, &ro);
        nav_optimal *o = nav_optimal_new(1u << 16);
        nav_optimal_use_graph(o, mode ? NAV_OPT_GRAPH_ASTAR : NAV_OPT_GRAPH_ON);
        uint32_t rng = 7, limited = 0;
        for (int q = 0; q < 30; q++) {
            float s[3], e[3];
            uint32_t sp = fx_random_point(m, &rng, s), ep = fx_random_point(m, &rng, e);
            run r;
            memset(&r.res, 0, sizeof r.res);
            r.res.corners = r.corners, r.res.max_corners = 256;
            nav_optimal_stats a, b;
            nav_optimal_stats_get(o, &a);
            r.st = nav_optimal_search(o, m, sp, s, ep, e, 0, 0, &r.res);
            nav_optimal_stats_get(o, &b);
            ck_assert_int_eq(r.st, NAV_OK);
            uint32_t need = r.res.nodes_expanded;
            if (b.graph_searches == a.graph_searches || need < 4)
                continue; /* the straight walk answered (its count is of polygons walked) */
            r.st = nav_optimal_search(o, m, sp, s, ep, e, 0, need / 2, &r.res);
            ck_assert_int_eq(r.st, NAV_E_LIMIT);
            ck_assert_uint_le(r.res.nodes_expanded, need / 2);
            limited++;
        }
        ck_assert_uint_gt(limited, 5);
        nav_optimal_free(o);
        nav_mesh_free(m);
    }
}
END_TEST

/* ---- over HTTP: a replace answers from the new mesh's graph ---- */

/* The square [0,10]^2 as a 3 x 3 grid of quads (lines 0, 4, 6, 10), with
   or without the centre cell, as upload JSON. */
static char *square_json(int hole) {
    static const int g[4] = {0, 4, 6, 10};
    char *buf = malloc(4096);
    ck_assert_ptr_nonnull(buf);
    size_t k = (size_t)snprintf(buf, 4096, "{\"vertices\":[");
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            k += (size_t)snprintf(buf + k, 4096 - k, "%s[%d,0,%d]", i || j ? "," : "", g[i], g[j]);
    k += (size_t)snprintf(buf + k, 4096 - k, "],\"polygons\":[");
    int first = 1;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            if (hole && i == 1 && j == 1)
                continue;
            int v = j * 4 + i;
            k += (size_t)snprintf(buf + k, 4096 - k, "%s[%d,%d,%d,%d]", first ? "" : ",", v, v + 4,
                                  v + 5, v + 1);
            first = 0;
        }
    snprintf(buf + k, 4096 - k, "]}");
    return buf;
}

static double http_length(int port) {
    th_response r;
    ck_assert_int_eq(th_json(port, "POST", "/v1/navmeshes/sq/path",
                             "{\"start\":[1,0,5],\"end\":[9,0,5],\"cache\":false}", &r),
                     0);
    ck_assert_int_eq(r.status, 200);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "optimal");
    double len = json_number_value(json_object_get(j, "length"));
    json_decref(j);
    th_response_free(&r);
    return len;
}

START_TEST(test_http_replace) {
    th_server srv;
    ck_assert_msg(th_start(&srv, NULL, NULL) == 0, "navd did not start");
    for (int round = 0; round < 2; round++) {
        for (int hole = 1; hole >= 0; hole--) {
            char *body = square_json(hole);
            th_response r;
            ck_assert_int_eq(th_json(srv.port, "PUT", "/v1/navmeshes/sq", body, &r), 0);
            ck_assert_msg(r.status / 100 == 2, "PUT -> %d %s", r.status, r.body);
            th_response_free(&r);
            free(body);
            double want = hole ? 2 * sqrt(10.0) + 2 : 8;
            ck_assert_double_eq_tol(http_length(srv.port), want, 1e-4);
        }
    }
    /* After a restart the stored mesh answers with its stored graph; the
       hole's version is stored last, so a path must bend again. */
    char *body = square_json(1);
    th_response r;
    th_json(srv.port, "PUT", "/v1/navmeshes/sq", body, &r);
    th_response_free(&r);
    free(body);
    ck_assert_int_eq(th_stop(&srv), 0);
    ck_assert_int_eq(th_restart(&srv, NULL), 0);
    ck_assert_double_eq_tol(http_length(srv.port), 2 * sqrt(10.0) + 2, 1e-4);
    char *log = th_log(&srv);
    ck_assert_msg(!strstr(log, "search graph"), "%s", log);
    free(log);
    /* Damage the stored graph section (its CRC, the blob's last 4 bytes):
       the mesh still loads, the graph is rebuilt (logged) and answers. */
    ck_assert_int_eq(th_stop(&srv), 0);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(srv.db, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db,
                                  "UPDATE navmeshes SET blob = substr(blob, 1, length(blob) - 4) "
                                  "|| CASE WHEN substr(blob, -4) = x'00000000' THEN x'01010101' "
                                  "ELSE x'00000000' END WHERE name = 'sq'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_changes(db), 1);
    sqlite3_close(db);
    ck_assert_int_eq(th_restart(&srv, NULL), 0);
    ck_assert_double_eq_tol(http_length(srv.port), 2 * sqrt(10.0) + 2, 1e-4);
    log = th_log(&srv);
    ck_assert_msg(strstr(log, "stored navmesh 'sq': its search graph was missing or damaged"), "%s",
                  log);
    free(log);
    ck_assert_int_eq(th_stop(&srv), 0);
    th_cleanup(&srv);
}
END_TEST

/* The threaded build joins its chunks in node order: the same nodes,
   edges and halves as the serial one, whatever the thread count. */
START_TEST(test_threads_same_graph) {
    for (uint32_t seed = 1; seed <= 3; seed++) {
        fx_random_opts ro = fx_random_defaults();
        ro.width = ro.height = 60;
        ro.hole_ratio = 0.3f;
        ro.walls = (int)(seed & 1);
        nav_mesh *m = fx_random(seed, &ro);
        ck_assert_ptr_nonnull(m->cgraph);
        /* several chunks of 64 nodes, so threads share them */
        ck_assert_uint_gt(m->cgraph->nnodes, 3 * 64);
        size_t len = nav_corner_save(m->cgraph, NULL);
        uint8_t *want = malloc(len);
        ck_assert_uint_eq(nav_corner_save(m->cgraph, want), len);
        nav_cgraph *serial = m->cgraph;
        for (uint32_t th = 2; th <= 5; th += 3) {
            ck_assert_int_eq(nav_corner_build_mt(m, th), NAV_OK);
            ck_assert_ptr_nonnull(m->cgraph);
            ck_assert_uint_eq(m->cgraph->nedges, serial->nedges);
            ck_assert_uint_eq(nav_corner_save(m->cgraph, NULL), len);
            uint8_t *got = malloc(len);
            nav_corner_save(m->cgraph, got);
            ck_assert_int_eq(memcmp(got, want, len), 0);
            free(got);
            nav_corner_free(m->cgraph);
        }
        m->cgraph = serial;
        free(want);
        nav_mesh_free(m);
    }
}
END_TEST

Suite *nav_corner_suite(void) {
    Suite *s = suite_create("nav_corner");
    TCase *tc = tcase_create("graph");
    tcase_add_test(tc, test_square_hole_graph);
    tcase_add_test(tc, test_square_hole_table);
    tcase_add_test(tc, test_walk_joins_straight_runs);
    tcase_add_test(tc, test_dispatch);
    tcase_add_test(tc, test_scratch_across_meshes);
    tcase_add_test(tc, test_sight_tests_same_lengths);
    tcase_add_test(tc, test_sight_tests_by_distance);
    tcase_add_test(tc, test_budget);
    tcase_add_test(tc, test_bound_same_answers);
    tcase_add_test(tc, test_threads_same_graph);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("http");
    tcase_set_timeout(th, 60);
    tcase_add_test(th, test_http_replace);
    suite_add_tcase(s, th);
    return s;
}
