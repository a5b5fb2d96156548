/*
 * check_nav_optimal: the optimal (interval) search against hand-derived
 * lengths and against the brute-force visibility-graph reference
 * (tests/test_visgraph.c) on hundreds of seeded random meshes: holes,
 * merged runs with collinear vertices, triangles, a bridge over a floor,
 * exact vertices and edges as end points, excluded areas. Also symmetry,
 * links in both directions, budgets and output buffers.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_internal.h"
#include "nav/nav_corner.h"
#include "nav/nav_optimal.h"
#include "nav/nav_query.h"
#include "tests/test_fixtures.h"
#include "tests/test_visgraph.h"

/* Declared for -Wmissing-prototypes; "extern" keeps it out of suite discovery. */
extern Suite *nav_optimal_suite(void);

#define MAXC 1024
#define MAXP 8192

typedef struct run {
    float corners[3 * MAXC];
    uint32_t polys[MAXP];
    uint32_t links[64];
    nav_path_result res;
    nav_status st;
} run;

static nav_optimal *g_opt;

static void setup(void) {
    g_opt = nav_optimal_new(1u << 16);
    ck_assert_ptr_nonnull(g_opt);
}

static void teardown(void) {
    nav_optimal_free(g_opt);
    g_opt = NULL;
}

static void search(run *r, const nav_mesh *m, uint32_t sp, const float s[3], uint32_t ep,
                   const float e[3], uint64_t excl, uint32_t budget) {
    memset(&r->res, 0, sizeof r->res);
    r->res.corners = r->corners;
    r->res.max_corners = MAXC;
    r->res.polys = r->polys;
    r->res.max_polys = MAXP;
    r->res.links = r->links;
    r->res.max_links = 64;
    r->st = nav_optimal_search(g_opt, m, sp, s, ep, e, excl, budget, &r->res);
}

static double xz_len(const nav_path_result *res) {
    double l = 0;
    for (uint32_t i = 1; i < res->ncorners; i++)
        l += hypot((double)res->corners[3 * i] - res->corners[3 * i - 3],
                   (double)res->corners[3 * i + 2] - res->corners[3 * i - 1]);
    return l;
}

/* The cost the search minimises: xz segments, and each link taken at its
   3-D length (a segment between a listed link's two ends, either way). */
static double path_cost(const nav_mesh *m, const nav_path_result *res) {
    double l = 0;
    for (uint32_t i = 1; i < res->ncorners; i++) {
        const float *x = &res->corners[3 * i - 3], *y = &res->corners[3 * i];
        int link = 0;
        for (uint32_t k = 0; k < res->nlinks && !link; k++) {
            const nav_link *lk = &m->links[res->links[k]];
            link = (nav_dist3d(x, lk->start_on) < 1e-4 && nav_dist3d(y, lk->end_on) < 1e-4) ||
                   (nav_dist3d(x, lk->end_on) < 1e-4 && nav_dist3d(y, lk->start_on) < 1e-4);
        }
        l += link ? nav_dist3d(x, y) : hypot((double)y[0] - x[0], (double)y[2] - x[2]);
    }
    return l;
}

/* Polygon holding (x, z) at y = 0 (flat fixtures only). */
static uint32_t poly_at(const nav_mesh *m, float x, float z) {
    float p[3] = {x, 0, z}, ext[3] = {0.01f, 0.5f, 0.01f}, out[3];
    uint32_t poly = NAV_NONE;
    ck_assert_int_eq(nav_mesh_nearest(m, p, ext, 0, &poly, out), NAV_OK);
    return poly;
}

static void flat_search(run *r, const nav_mesh *m, float x0, float z0, float x1, float z1,
                        uint64_t excl) {
    float s[3] = {x0, 0, z0}, e[3] = {x1, 0, z1};
    search(r, m, poly_at(m, x0, z0), s, poly_at(m, x1, z1), e, excl, 0);
}

static int has_corner(const nav_path_result *res, float x, float z) {
    for (uint32_t i = 0; i < res->ncorners; i++)
        if (fabsf(res->corners[3 * i] - x) < 1e-4f && fabsf(res->corners[3 * i + 2] - z) < 1e-4f)
            return 1;
    return 0;
}

/* Is (x, z) in convex polygon p, or within eps of it? (interior where
   nav_cross2 < 0; a point outside is beyond some edge's line by more). */
static int in_poly(const nav_mesh *m, uint32_t p, double x, double z, double eps) {
    uint32_t s = m->poly_start[p], n = m->poly_start[p + 1] - s;
    for (uint32_t k = 0; k < n; k++) {
        const float *a = &m->verts[3 * (size_t)m->poly_verts[s + k]];
        const float *b = &m->verts[3 * (size_t)m->poly_verts[s + (k + 1) % n]];
        double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
        double c = ex * (z - a[2]) - ez * (x - a[0]);
        if (c > eps * sqrt(ex * ex + ez * ez))
            return 0;
    }
    return 1;
}

/* Is corner i -> i + 1 of res a link (both ends a link's ends)? */
static int link_segment(const nav_mesh *m, const nav_path_result *res, uint32_t i) {
    const float *a = &res->corners[3 * i], *b = &res->corners[3 * i + 3];
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const float *ls = m->links[l].start_on, *le = m->links[l].end_on;
        int fwd = a[0] == ls[0] && a[2] == ls[2] && b[0] == le[0] && b[2] == le[2];
        int rev = a[0] == le[0] && a[2] == le[2] && b[0] == ls[0] && b[2] == ls[2];
        if (fwd || rev)
            return 1;
    }
    return 0;
}

/* Consecutive corridor polygons share an edge (or are joined by a link),
   and the corridor covers the path: 33 points along every segment but a
   link's lie in (within 1e-4 of) some polygon of it. The corner graph
   rebuilds its corridor by walking each segment over exit edges; a walk
   that left through the wrong edge, dropped a polygon or stopped short
   would leave points of the path outside (turning the long way round a
   corner would not: every polygon of the fan holds the corner). */
static void check_corridor(const nav_mesh *m, const nav_path_result *res, uint32_t sp,
                           uint32_t ep) {
    for (uint32_t i = 0; i + 1 < res->ncorners; i++) {
        if (link_segment(m, res, i))
            continue;
        const float *a = &res->corners[3 * i], *b = &res->corners[3 * i + 3];
        for (int k = 0; k <= 32; k++) {
            double u = k / 32.0, x = a[0] + u * (b[0] - a[0]), z = a[2] + u * (b[2] - a[2]);
            int in = 0;
            for (uint32_t j = 0; j < res->npolys && !in; j++)
                in = in_poly(m, res->polys[j], x, z, 1e-4);
            ck_assert_msg(in,
                          "segment %u (%.4f %.4f) -> (%.4f %.4f) leaves the corridor at %.4f %.4f",
                          i, a[0], a[2], b[0], b[2], x, z);
        }
    }
    ck_assert_uint_ge(res->npolys, 1);
    ck_assert_uint_eq(res->polys[0], sp);
    ck_assert_uint_eq(res->polys[res->npolys - 1], ep);
    for (uint32_t i = 1; i < res->npolys; i++) {
        uint32_t a = res->polys[i - 1], b = res->polys[i], ok = 0;
        for (uint32_t k = m->poly_start[a]; k < m->poly_start[a + 1]; k++)
            ok |= m->poly_nei[k] == b;
        for (uint32_t l = 0; l < m->nlinks && !ok; l++)
            ok |= (m->links[l].start_poly == a && m->links[l].end_poly == b) ||
                  (m->links[l].start_poly == b && m->links[l].end_poly == a);
        ck_assert_msg(ok, "corridor step %u -> %u is not an edge or link", a, b);
    }
}

/* ---- hand-made cases ---- */

/* Square [0,10]^2 with hole [4,6]^2, (1,5) -> (9,5): the hole blocks the
   straight line, the path bends at (4,4),(6,4) or (4,6),(6,6):
   |(1,5)-(4,4)| + 2 + |(6,4)-(9,5)| = 2 sqrt(10) + 2. */
START_TEST(test_square_hole) {
    nav_mesh *m = fx_square_with_hole();
    run r;
    flat_search(&r, m, 1, 5, 9, 5, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(10.0) + 2, 1e-5);
    ck_assert_uint_eq(r.res.ncorners, 4);
    ck_assert((has_corner(&r.res, 4, 4) && has_corner(&r.res, 6, 4)) ||
              (has_corner(&r.res, 4, 6) && has_corner(&r.res, 6, 6)));
    ck_assert_int_eq(r.res.algorithm, NAV_ALGO_OPTIMAL);
    ck_assert_uint_gt(r.res.nodes_expanded, 0);
    check_corridor(m, &r.res, poly_at(m, 1, 5), poly_at(m, 9, 5));
    /* the debug list of expanded polygons: capped at max_expanded, valid ids */
    uint32_t exp[3];
    r.res.expanded = exp;
    r.res.max_expanded = 3;
    r.res.nexpanded = 0;
    float s[3] = {1, 0, 5}, e[3] = {9, 0, 5};
    ck_assert_int_eq(
        nav_optimal_search(g_opt, m, poly_at(m, 1, 5), s, poly_at(m, 9, 5), e, 0, 0, &r.res),
        NAV_OK);
    ck_assert_uint_ge(r.res.nodes_expanded, r.res.nexpanded);
    ck_assert_uint_eq(r.res.nexpanded, 3);
    for (uint32_t i = 0; i < r.res.nexpanded; i++)
        ck_assert_uint_lt(exp[i], nav_mesh_polygon_count(m));
    ck_assert_uint_eq(exp[0], poly_at(m, 1, 5)); /* the start polygon first */
    nav_mesh_free(m);
}
END_TEST

/* Z corridor: [0,6]x[0,2], up [4,6]x[2,6], across [4,10]x[6,8].
   (1,1) -> (9,7) bends at the inner corners (4,2) and (6,6):
   sqrt(9+1) + sqrt(4+16) + sqrt(9+1) = 2 sqrt(10) + sqrt(20). */
START_TEST(test_zigzag) {
    fx_builder *b = fx_new();
    for (int i = 0; i < 3; i++)
        fx_quad(b, 2.0f * i, 0, 2.0f * i + 2, 2, 0, 0);
    fx_quad(b, 4, 2, 6, 4, 0, 0);
    fx_quad(b, 4, 4, 6, 6, 0, 0);
    for (int i = 0; i < 3; i++)
        fx_quad(b, 4 + 2.0f * i, 6, 6 + 2.0f * i, 8, 0, 0);
    nav_mesh *m = fx_build(b);
    run r;
    flat_search(&r, m, 1, 1, 9, 7, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(10.0) + sqrt(20.0), 1e-5);
    ck_assert(has_corner(&r.res, 4, 2) && has_corner(&r.res, 6, 6));
    check_corridor(m, &r.res, poly_at(m, 1, 1), poly_at(m, 9, 7));
    /* and back */
    flat_search(&r, m, 9, 7, 1, 1, 0);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(10.0) + sqrt(20.0), 1e-5);
    nav_mesh_free(m);
}
END_TEST

/* Ends exactly on vertices: (0,0) -> (10,10) across the square with a hole.
   The diagonal crosses the hole; bending at (6,4) (or (4,6)) gives
   |(0,0)-(6,4)| + |(6,4)-(10,10)| = 2 sqrt(52). */
START_TEST(test_vertex_ends) {
    nav_mesh *m = fx_square_with_hole();
    run r;
    flat_search(&r, m, 0, 0, 10, 10, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(52.0), 1e-5);
    /* from a hole corner (a vertex where the path may bend) to the far one:
       (4,4) -> (6,6) goes around: 2 + 2 */
    flat_search(&r, m, 4, 4, 6, 6, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 4, 1e-5);
    nav_mesh_free(m);
}
END_TEST

/* Ends exactly on edges. (5,0) -> (5,10) lie on the outer wall: around the
   hole by (4,4),(4,6): sqrt(1+16) + 2 + sqrt(1+16) = 2 sqrt(17) + 2.
   (4,2) -> (6,8) lie on inner edges: along the hole's side, 4 + sqrt(8). */
START_TEST(test_edge_ends) {
    nav_mesh *m = fx_square_with_hole();
    run r;
    flat_search(&r, m, 5, 0, 5, 10, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(17.0) + 2, 1e-5);
    flat_search(&r, m, 4, 2, 6, 8, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 4 + sqrt(8.0), 1e-5);
    nav_mesh_free(m);
}
END_TEST

/* Same polygon: the straight segment, 2 corners, 1 polygon:
   (1,1) -> (3,2) in cell [0,4]^2: sqrt(4+1). Start == end: length 0 and
   two (equal) corners, start and end, as the contract's first/last rule. */
START_TEST(test_same_poly_and_same_point) {
    nav_mesh *m = fx_square_with_hole();
    run r;
    flat_search(&r, m, 1, 1, 3, 2, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, sqrt(5.0), 1e-6);
    ck_assert_uint_eq(r.res.ncorners, 2);
    ck_assert_uint_eq(r.res.npolys, 1);
    flat_search(&r, m, 2, 2, 2, 2, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 0, 1e-9);
    ck_assert_uint_eq(r.res.ncorners, 2);
    ck_assert_float_eq(r.res.corners[0], 2);
    ck_assert_float_eq(r.res.corners[5], 2);
    nav_mesh_free(m);
}
END_TEST

/* Bridge: from the deck (15,5,5) to the floor right below (15,0,5) the path
   must go down a ramp and around the ramp's floor gap. By the west ramp in
   xz: (15,5) -> (5,4) -> (10,4) -> (15,5): sqrt(101) + 5 + sqrt(26) (the
   east ramp and the z = 6 side are mirror images with the same length). */
START_TEST(test_bridge_not_shortcut) {
    nav_mesh *m = fx_bridge();
    float s[3] = {15, 5, 5}, e[3] = {15, 0, 5}, ext[3] = {0.1f, 0.5f, 0.1f}, out[3];
    uint32_t sp, ep;
    ck_assert_int_eq(nav_mesh_nearest(m, s, ext, 0, &sp, out), NAV_OK);
    ck_assert_int_eq(nav_mesh_nearest(m, e, ext, 0, &ep, out), NAV_OK);
    ck_assert_uint_ne(sp, ep);
    run r;
    search(&r, m, sp, s, ep, e, 0, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(xz_len(&r.res), sqrt(101.0) + 5 + sqrt(26.0), 1e-4);
    ck_assert_double_gt(r.res.length, xz_len(&r.res)); /* the ramp adds height */
    check_corridor(m, &r.res, sp, ep);
    nav_mesh_free(m);
}
END_TEST

/* Two islands [0,4]^2 and [10,14]x[0,4] joined by a one-way link
   (3,0,2) -> (11,h,2). (1,2) -> (13,2): 2 + link + 2; the link's 3-D length
   is sqrt(64 + h^2). Backwards there is no way (NAV_E_NOT_FOUND). */
START_TEST(test_link_one_way) {
    const float h = 3;
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, h, 0);
    float ls[3] = {3, 0, 2}, le[3] = {11, h, 2};
    fx_link(b, ls, le, 0.5f, 0, 0, "jump");
    nav_mesh *m = fx_build(b);
    float s[3] = {1, 0, 2}, e[3] = {13, h, 2};
    run r;
    search(&r, m, 0, s, 1, e, 0, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 4 + sqrt(64 + h * h), 1e-5);
    ck_assert_uint_eq(r.res.nlinks, 1);
    ck_assert_uint_eq(r.res.links[0], 0);
    ck_assert_uint_eq(r.res.ncorners, 4);
    check_corridor(m, &r.res, 0, 1);
    search(&r, m, 1, e, 0, s, 0, 0);
    ck_assert_int_eq(r.st, NAV_E_NOT_FOUND);
    /* the link's area excluded: no way either */
    search(&r, m, 0, s, 1, e, 1ull << 0, 0);
    ck_assert_int_eq(r.st, NAV_E_NOT_FOUND);
    nav_mesh_free(m);
}
END_TEST

/* U corridor (inner corners (2,8), (8,8)) with a one-way shortcut link
   (1.5,0,1) -> (8.5,0,1) of length 7. (1,1) -> (9,1): 0.5 + 7 + 0.5 = 8.
   Back (9,1) -> (1,1) walks: 2 sqrt(1 + 49) + 6. With the link both ways,
   the way back takes it too. */
START_TEST(test_link_shortcut_vs_reverse) {
    for (int bidir = 0; bidir < 2; bidir++) {
        fx_builder *b = fx_new();
        for (int j = 0; j < 5; j++)
            fx_quad(b, 0, 2.0f * j, 2, 2.0f * j + 2, 0, 0);
        for (int i = 1; i < 4; i++)
            fx_quad(b, 2.0f * i, 8, 2.0f * i + 2, 10, 0, 0);
        for (int j = 4; j >= 0; j--)
            fx_quad(b, 8, 2.0f * j, 10, 2.0f * j + 2, 0, 0);
        float ls[3] = {1.5f, 0, 1}, le[3] = {8.5f, 0, 1};
        fx_link(b, ls, le, 0.5f, bidir, 2, "door");
        nav_mesh *m = fx_build(b);
        run r;
        flat_search(&r, m, 1, 1, 9, 1, 0);
        ck_assert_int_eq(r.st, NAV_OK);
        ck_assert_double_eq_tol(r.res.length, 8, 1e-5);
        ck_assert_uint_eq(r.res.nlinks, 1);
        flat_search(&r, m, 9, 1, 1, 1, 0);
        ck_assert_int_eq(r.st, NAV_OK);
        ck_assert_double_eq_tol(r.res.length, bidir ? 8 : 2 * sqrt(50.0) + 6, 1e-5);
        ck_assert_uint_eq(r.res.nlinks, bidir ? 1 : 0);
        /* excluding the link's area restores the walk */
        flat_search(&r, m, 1, 1, 9, 1, 1ull << 2);
        ck_assert_double_eq_tol(r.res.length, 2 * sqrt(50.0) + 6, 1e-5);
        /* the reference agrees */
        vg_ref *ref = vg_new(m, 0);
        float s[3] = {1, 0, 1}, e[3] = {9, 0, 1};
        ck_assert_double_eq_tol(vg_shortest(ref, poly_at(m, 1, 1), s, poly_at(m, 9, 1), e), 8,
                                1e-6);
        vg_free(ref);
        nav_mesh_free(m);
    }
}
END_TEST

/* Excluded area: square with a hole whose cell [4,6]x[0,4] (under the hole)
   has area 1. (1,3) -> (9,3) is straight (8) through it; excluding area 1
   the path goes over the hole: (1,3)->(4,6)->(6,6)->(9,3) = 2 sqrt(18) + 2. */
START_TEST(test_excluded_area) {
    static const float g[4] = {0, 4, 6, 10};
    fx_builder *b = fx_new();
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            if (i != 1 || j != 1)
                fx_quad(b, g[i], g[j], g[i + 1], g[j + 1], 0, (i == 1 && j == 0) ? 1 : 0);
    nav_mesh *m = fx_build(b);
    run r;
    flat_search(&r, m, 1, 3, 9, 3, 0);
    ck_assert_double_eq_tol(r.res.length, 8, 1e-6);
    flat_search(&r, m, 1, 3, 9, 3, 1ull << 1);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(18.0) + 2, 1e-5);
    ck_assert(has_corner(&r.res, 4, 6) && has_corner(&r.res, 6, 6));
    nav_mesh_free(m);
}
END_TEST

/* Budget, unreachable, bad arguments, small buffers. */
START_TEST(test_limits_and_buffers) {
    nav_mesh *m = fx_square_with_hole();
    float s[3] = {1, 0, 5}, e[3] = {9, 0, 5};
    uint32_t sp = poly_at(m, 1, 5), ep = poly_at(m, 9, 5);
    run r;
    search(&r, m, sp, s, ep, e, 0, 1);
    ck_assert_int_eq(r.st, NAV_E_LIMIT);
    search(&r, m, sp, s, 999, e, 0, 0);
    ck_assert_int_eq(r.st, NAV_E_INVALID_ARG);
    float bad[3] = {NAN, 0, 0};
    search(&r, m, sp, bad, ep, e, 0, 0);
    ck_assert_int_eq(r.st, NAV_E_INVALID_ARG);
    /* start polygon excluded */
    search(&r, m, sp, s, ep, e, 1ull << 0, 0);
    ck_assert_int_eq(r.st, NAV_E_NOT_FOUND);
    /* 2 corners of 4 fit: the first two, flagged */
    search(&r, m, sp, s, ep, e, 0, 0);
    uint32_t full = r.res.npolys;
    float c2[6];
    uint32_t p2[2];
    r.res.corners = c2;
    r.res.max_corners = 2;
    r.res.polys = p2;
    r.res.max_polys = 2;
    r.res.flags = 0;
    r.st = nav_optimal_search(g_opt, m, sp, s, ep, e, 0, 0, &r.res);
    ck_assert_int_eq(r.st, NAV_OK);
    ck_assert_uint_eq(r.res.ncorners, 2);
    ck_assert_uint_eq(r.res.npolys, 2 < full ? 2 : full);
    ck_assert(r.res.flags & NAV_PATH_TRUNCATED);
    ck_assert_float_eq(c2[0], 1);
    ck_assert_float_eq(c2[2], 5);
    ck_assert_double_eq_tol(r.res.length, 2 * sqrt(10.0) + 2, 1e-5);
    nav_mesh_free(m);

    m = fx_two_islands();
    float a[3] = {1, 0, 1}, z[3] = {11, 0, 1};
    search(&r, m, 0, a, 1, z, 0, 0);
    ck_assert_int_eq(r.st, NAV_E_NOT_FOUND);
    nav_mesh_free(m);
}
END_TEST

/* The observer sees each expanded interval: on its entry edge, at the
   parameters it reports, and inside the A* bound (g + distance from the
   root to the interval <= the optimal length, as the heuristic is
   admissible). */
typedef struct obs_log {
    const nav_mesh *m;
    double bound;
    uint32_t calls;
} obs_log;

static void obs_check(void *ctx, const nav_optimal_interval *iv) {
    obs_log *lg = ctx;
    const nav_mesh *m = lg->m;
    uint32_t p = 0;
    while (m->poly_start[p + 1] <= iv->edge)
        p++;
    uint32_t k = iv->edge - m->poly_start[p];
    const float *v0 = nav_poly_vert(m, p, k), *v1 = nav_poly_vert(m, p, k + 1);
    ck_assert(0 <= iv->ta && iv->ta <= iv->tb && iv->tb <= 1);
    ck_assert_double_eq_tol(iv->a[0], v0[0] + iv->ta * (v1[0] - v0[0]), 1e-9);
    ck_assert_double_eq_tol(iv->a[1], v0[2] + iv->ta * (v1[2] - v0[2]), 1e-9);
    ck_assert_double_eq_tol(iv->b[0], v0[0] + iv->tb * (v1[0] - v0[0]), 1e-9);
    ck_assert_double_eq_tol(iv->b[1], v0[2] + iv->tb * (v1[2] - v0[2]), 1e-9);
    double d = INFINITY;
    for (int i = 0; i <= 64; i++) {
        double u = i / 64.0;
        d = fmin(d, hypot(iv->a[0] + u * (iv->b[0] - iv->a[0]) - iv->root[0],
                          iv->a[1] + u * (iv->b[1] - iv->a[1]) - iv->root[1]));
    }
    ck_assert_double_le(iv->g + d, lg->bound + 1e-9);
    lg->calls++;
}

START_TEST(test_observer) {
    nav_mesh *m = fx_square_with_hole();
    run r;
    nav_optimal_use_graph(g_opt, NAV_OPT_GRAPH_OFF); /* the observer watches the interval search */
    flat_search(&r, m, 1, 5, 9, 5, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    obs_log lg = {.m = m, .bound = xz_len(&r.res)};
    nav_optimal_observe(g_opt, obs_check, &lg);
    flat_search(&r, m, 1, 5, 9, 5, 0);
    ck_assert_int_eq(r.st, NAV_OK);
    /* the first node is the start polygon (not an interval); the path
       crosses at least the edges into the polygons beside the hole */
    ck_assert_uint_ge(lg.calls, 2);
    ck_assert_uint_lt(lg.calls, r.res.nodes_expanded);
    uint32_t seen = lg.calls;
    nav_optimal_observe(g_opt, NULL, NULL);
    flat_search(&r, m, 1, 5, 9, 5, 0);
    ck_assert_uint_eq(lg.calls, seen);
    nav_mesh_free(m);
}
END_TEST

/*
 * The default's choice by distance (nav_optimal.h). A U of unit squares:
 * bottom strip [0,30]x[0,1], top strip [0,30]x[2,3], joined by [29,30]x
 * [1,2]; 61 polygons of area 1, so a typical polygon size of 1. Every
 * query below runs from the bottom strip to the top one, out of sight of
 * each other, round the corners (29,1) and (29,2): with a = (1.5, 0.5)
 * and b = (x, 2.5) the length is |a (29,1)| + 1 + |(29,2) b|. Straight
 * distances sqrt(dx^2 + 4): x = 1.5 -> 2 sizes (the interval search),
 * 10.5 -> 9.2 (the graph's A*), 21.5 -> 20.1 (the all-pairs table).
 */
START_TEST(test_auto_by_distance) {
    fx_builder *b = fx_new();
    for (int i = 0; i < 30; i++) {
        fx_quad(b, (float)i, 0, (float)i + 1, 1, 0, 0);
        fx_quad(b, (float)i, 2, (float)i + 1, 3, 0, 0);
    }
    fx_quad(b, 29, 1, 30, 2, 0, 0);
    nav_mesh *m = fx_build(b);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(m->cgraph);
    ck_assert(nav_corner_has_table(m->cgraph));
    ck_assert_double_eq_tol(nav_corner_cell(m->cgraph), 1.0, 1e-9);
    static const float xs[3] = {1.5f, 10.5f, 21.5f};
    /* which search answered: interval, A* (graph, no table), table */
    static const int want[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    nav_optimal_use_graph(g_opt, NAV_OPT_GRAPH_AUTO);
    for (int k = 0; k < 3; k++) {
        nav_optimal_stats before, after;
        nav_optimal_stats_get(g_opt, &before);
        run r;
        flat_search(&r, m, 1.5f, 0.5f, xs[k], 2.5f, 0);
        nav_optimal_stats_get(g_opt, &after);
        ck_assert_int_eq(r.st, NAV_OK);
        double len = hypot(27.5, 0.5) + 1 + hypot(29.0 - xs[k], 0.5);
        ck_assert_msg(fabs(xz_len(&r.res) - len) < 1e-5, "to x %.1f: %.9f, by hand %.9f", xs[k],
                      xz_len(&r.res), len);
        uint64_t interval = after.interval_searches - before.interval_searches;
        uint64_t graph = after.graph_searches - before.graph_searches;
        uint64_t table = after.table_searches - before.table_searches;
        ck_assert_msg(interval == (uint64_t)want[k][0] && graph - table == (uint64_t)want[k][1] &&
                          table == (uint64_t)want[k][2],
                      "to x %.1f: interval %llu graph %llu table %llu", xs[k],
                      (unsigned long long)interval, (unsigned long long)graph,
                      (unsigned long long)table);
    }
    nav_mesh_free(m);
}
END_TEST

/*
 * Two levels welded at one vertex V = (2,0,2): a floor fan of 8 triangles
 * around V (V is an inner vertex there: no corner), and an upper level at
 * y = 3 of quads touching V from above ([1,2]x[1,2], [1,2]x[2,3],
 * [2,3]x[2,3], then [3,4]x[2,3]), where V is the convex corner of an L and
 * paths bend. A link climbs from the floor to the upper level, and an
 * island of area 2 exists elsewhere, so excluding area 2 makes the search
 * compute corners under the exclusion itself. Cached per vertex, the
 * floor's "not a corner" answered for the upper level too and no path
 * bent at V (all queries failed); per polygon corner, every answer matches
 * the reference, with the exclusion and without.
 */
START_TEST(test_welded_levels_corner_cache) {
    const float H = 3;
    fx_builder *b = fx_new();
    uint32_t V = fx_vert(b, 2, 0, 2), ring[8];
    for (int k = 0; k < 8; k++)
        ring[k] = fx_vert(b, 2 + 1.9f * cosf(k * 0.785398f + 0.3f), 0,
                          2 + 1.9f * sinf(k * 0.785398f + 0.3f));
    for (int k = 0; k < 8; k++) {
        uint32_t t[3] = {V, ring[k], ring[(k + 1) % 8]};
        fx_poly(b, 3, t, 0);
    }
    fx_quad(b, 10, 0, 11, 1, 0, 2);
    uint32_t a1 = fx_vert(b, 1, H, 1), a2 = fx_vert(b, 2, H, 1), a3 = fx_vert(b, 1, H, 2);
    uint32_t b1 = fx_vert(b, 1, H, 3), b2 = fx_vert(b, 2, H, 3), c1 = fx_vert(b, 3, H, 2),
             c2 = fx_vert(b, 3, H, 3);
    uint32_t d1 = fx_vert(b, 4, H, 2), d2 = fx_vert(b, 4, H, 3);
    uint32_t qa[4] = {a1, a2, V, a3}, qb[4] = {a3, V, b2, b1}, qc[4] = {V, c1, c2, b2},
             qd[4] = {c1, d1, d2, c2};
    uint32_t pa = fx_poly(b, 4, qa, 0);
    fx_poly(b, 4, qb, 0);
    fx_poly(b, 4, qc, 0);
    uint32_t pd = fx_poly(b, 4, qd, 0);
    nav_mesh *m0 = fx_build(b);
    nav_mesh_input in;
    nav_mesh_as_input(m0, &in);
    nav_link_input lk;
    memset(&lk, 0, sizeof lk);
    lk.start[0] = 0.8f, lk.start[2] = 3.0f;
    lk.end[0] = lk.end[2] = 1.5f;
    ck_assert_int_eq(nav_mesh_height(m0, pa, 1.5f, 1.5f, &lk.end[1]), NAV_OK);
    lk.radius = 0.1f;
    lk.bidirectional = 1;
    snprintf(lk.kind, sizeof lk.kind, "up");
    in.links = &lk;
    in.nlinks = 1;
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s", err.message);
    for (int ex = 0; ex < 2; ex++) {
        uint64_t excl = ex ? 1ull << 2 : 0;
        vg_ref *ref = vg_new(m, excl);
        uint32_t rng = 12345;
        int found = 0;
        for (int t = 0; t < 300; t++) {
            float s[3], e[3];
            uint32_t sp = fx_rand(&rng) % 8;
            float u = 0.05f + 0.9f * fx_randf(&rng), v = (0.05f + 0.9f * fx_randf(&rng)) * (1 - u);
            const float *P = nav_poly_vert(m, sp, 0), *Q = nav_poly_vert(m, sp, 1),
                        *R = nav_poly_vert(m, sp, 2);
            for (int k = 0; k < 3; k++)
                s[k] = P[k] + u * (Q[k] - P[k]) + v * (R[k] - P[k]);
            e[0] = 3.05f + 0.9f * fx_randf(&rng);
            e[2] = 2.05f + 0.9f * fx_randf(&rng);
            ck_assert_int_eq(nav_mesh_height(m, pd, e[0], e[2], &e[1]), NAV_OK);
            double want = vg_shortest(ref, sp, s, pd, e);
            ck_assert(isfinite(want));
            run r;
            search(&r, m, sp, s, pd, e, excl, 0);
            ck_assert_msg(r.st == NAV_OK, "exclude %d, query %d: status %d", ex, t, r.st);
            double got = path_cost(m, &r.res);
            ck_assert_msg(fabs(got - want) <= 1e-4, "exclude %d, query %d: %.6f vs reference %.6f",
                          ex, t, got, want);
            found++;
        }
        ck_assert_int_eq(found, 300);
        vg_free(ref);
    }
    nav_mesh_free(m);
    nav_mesh_free(m0);
}
END_TEST

/* ---- property tests against the reference ---- */

/* A random point of a random passable polygon: inside, on a vertex or on
   an edge. */
static uint32_t random_point(const nav_mesh *m, uint64_t excl, uint32_t *rng, float out[3]) {
    uint32_t p;
    do
        p = fx_rand(rng) % m->npolys;
    while ((excl >> m->areas[p]) & 1u);
    uint32_t n = nav_poly_nverts(m, p), mode = fx_rand(rng) % 5;
    double x = 0, z = 0;
    if (mode == 0) {
        const float *v = nav_poly_vert(m, p, fx_rand(rng) % n);
        x = v[0], z = v[2];
    } else if (mode == 1) {
        uint32_t k = fx_rand(rng) % n;
        const float *a = nav_poly_vert(m, p, k), *b = nav_poly_vert(m, p, k + 1);
        float u = (float)(1 + fx_rand(rng) % 3) / 4.0f;
        x = a[0] + u * (b[0] - a[0]), z = a[2] + u * (b[2] - a[2]);
    } else {
        double wsum = 0;
        for (uint32_t k = 0; k < n; k++) {
            double w = 0.05 + fx_randf(rng);
            const float *v = nav_poly_vert(m, p, k);
            x += w * v[0], z += w * v[2], wsum += w;
        }
        x /= wsum, z /= wsum;
    }
    out[0] = (float)x;
    out[2] = (float)z;
    ck_assert_int_eq(nav_mesh_height(m, p, out[0], out[2], &out[1]), NAV_OK);
    return p;
}

typedef struct prop_stats {
    uint32_t queries, found, symmetric;
    double max_err;
} prop_stats;

/* Both exact searches (the corner graph, then the interval search forced)
   against the reference, with corridor and symmetry checks. */
/* The three exact searches the property tests compare with the reference:
   the graph (its all-pairs table where the graph has one, as every small
   random mesh's does), the graph's A*, the interval search. */
static const int prop_mode[3] = {NAV_OPT_GRAPH_ON, NAV_OPT_GRAPH_ASTAR, NAV_OPT_GRAPH_OFF};
static const char *const prop_name[3] = {"graph", "astar", "interval"};

static void property_case(uint32_t seed, const fx_random_opts *o, uint64_t excl, int nq,
                          prop_stats *st) {
    nav_mesh *m = fx_random(seed, o);
    vg_ref *ref = vg_new(m, excl);
    ck_assert_ptr_nonnull(ref);
    uint32_t rng = seed * 2654435761u + 1;
    int usable = 0;
    for (uint32_t p = 0; p < m->npolys; p++)
        usable |= !((excl >> m->areas[p]) & 1u);
    /* an exclusion that removes a present area moves the walls: the corner
       graph must not answer, the interval search does */
    int walls_moved = (excl & (m->area_mask | m->link_area_mask)) != 0;
    nav_optimal_stats before, after;
    nav_optimal_stats_get(g_opt, &before);
    for (int q = 0; q < nq && usable; q++) {
        float s[3], e[3];
        uint32_t sp = random_point(m, excl, &rng, s), ep = random_point(m, excl, &rng, e);
        double want = vg_shortest(ref, sp, s, ep, e);
        st->queries++;
        for (int mode = 0; mode < 3; mode++) {
            nav_optimal_use_graph(g_opt, prop_mode[mode]);
            run r;
            search(&r, m, sp, s, ep, e, excl, 0);
            if (!isfinite(want)) {
                ck_assert_msg(r.st == NAV_E_NOT_FOUND,
                              "seed %u q %d mode %d: reference unreachable, search status %d", seed,
                              q, mode, r.st);
                continue;
            }
            ck_assert_msg(r.st == NAV_OK, "seed %u q %d mode %d: status %d, reference %.6f", seed,
                          q, mode, r.st, want);
            double got = xz_len(&r.res);
            ck_assert_msg(fabs(got - want) <= 1e-4 && got <= want + 1e-6,
                          "seed %u q %d: (%.6f,%.6f)p%u -> (%.6f,%.6f)p%u: %s %.9f reference "
                          "%.9f",
                          seed, q, s[0], s[2], sp, e[0], e[2], ep, prop_name[mode], got, want);
            ck_assert_float_eq_tol(r.res.corners[0], s[0], 1e-6f);
            ck_assert_float_eq_tol(r.res.corners[3 * r.res.ncorners - 1], e[2], 1e-6f);
            check_corridor(m, &r.res, sp, ep);
            if (fabs(got - want) > st->max_err)
                st->max_err = fabs(got - want);
            st->found += mode == 0;
            run back;
            search(&back, m, ep, e, sp, s, excl, 0);
            ck_assert_int_eq(back.st, NAV_OK);
            ck_assert_msg(fabs(xz_len(&back.res) - got) <= 1e-4,
                          "seed %u q %d mode %d: asymmetric %.9f %.9f", seed, q, mode, got,
                          xz_len(&back.res));
            st->symmetric += mode == 0;
        }
        nav_optimal_use_graph(g_opt, NAV_OPT_GRAPH_AUTO);
    }
    nav_optimal_stats_get(g_opt, &after);
    if (walls_moved)
        ck_assert_uint_eq(after.graph_searches, before.graph_searches);
    /* the table answered every graph search of the graph mode, none of the
       A* mode's (both modes search the same queries: the same number) */
    if (!walls_moved && nav_corner_has_table(m->cgraph))
        ck_assert_uint_eq(2 * (after.table_searches - before.table_searches),
                          after.graph_searches - before.graph_searches);
    else
        ck_assert_uint_eq(after.table_searches, before.table_searches);
    vg_free(ref);
    nav_mesh_free(m);
}

/* Without exclusions the corner graph answers the searches the straight
   walk does not, and never hands one back (a miss). */
static void property_run(const char *name, fx_random_opts o, uint64_t excl, uint32_t seeds,
                         int nq) {
    prop_stats st = {0};
    nav_optimal_stats before, after;
    nav_optimal_stats_get(g_opt, &before);
    for (uint32_t seed = 1; seed <= seeds; seed++)
        property_case(seed, &o, excl, nq, &st);
    nav_optimal_stats_get(g_opt, &after);
    uint64_t graph = after.graph_searches - before.graph_searches;
    printf("nav_optimal %s: %u seeds, %u queries, %u paths (max |optimal - reference| %.2e), "
           "%u symmetric, %llu answered by the corner graph\n",
           name, seeds, st.queries, st.found, st.max_err, st.symmetric, (unsigned long long)graph);
    ck_assert_uint_gt(st.found, st.queries / 4);
    ck_assert_uint_eq(after.graph_misses, before.graph_misses);
    if (excl == 0)
        ck_assert_uint_gt(graph, st.found / 4);
}

START_TEST(test_random_holes) {
    fx_random_opts o = fx_random_defaults();
    o.hole_ratio = 0.25f;
    property_run("holes+triangles", o, 0, 150, 6);
}
END_TEST

START_TEST(test_random_merged) {
    fx_random_opts o = fx_random_defaults();
    o.merge_runs = 1;
    o.triangulate = 0;
    o.hole_ratio = 0.3f;
    property_run("merged runs (collinear vertices)", o, 0, 150, 6);
}
END_TEST

START_TEST(test_random_bridge) {
    fx_random_opts o = fx_random_defaults();
    o.bridge = 1;
    o.hole_ratio = 0.12f;
    property_run("bridge", o, 0, 100, 6);
}
END_TEST

START_TEST(test_random_excluded) {
    fx_random_opts o = fx_random_defaults();
    o.merge_runs = 1;
    o.hole_ratio = 0.15f;
    property_run("exclude area 1", o, 1ull << 1, 100, 6);
}
END_TEST

START_TEST(test_random_narrow) {
    /* long thin meshes with many holes: narrow corridors, many bends */
    fx_random_opts o = fx_random_defaults();
    o.width = 24;
    o.height = 6;
    o.hole_ratio = 0.35f;
    o.islands = 0;
    property_run("narrow", o, 0, 60, 4);
}
END_TEST

/*
 * nav_reach_cost with uniform costs against the reference: the cost of a
 * polygon is the shortest path to its nearest point. The reference samples
 * each polygon's boundary (its vertices and 7 points inside each edge) and
 * takes the shortest reference path to any sample, d_s; the true cost d is
 * at most d_s, and at least d_s - h, h being half a sample step (the
 * nearest point lies on an edge, and along an edge two points are their
 * straight distance apart). So: d_s <= C means listed, and listed means
 * d_s - h <= C. Holes, merged runs, a bridge over a floor, links.
 */
START_TEST(test_reach_cost_vs_reference) {
    nav_query *q = nav_query_new(1u << 14);
    ck_assert_ptr_nonnull(q);
    uint32_t *got = malloc(sizeof(uint32_t) * 4096);
    uint32_t checked = 0, listed = 0, in_band = 0;
    for (uint32_t seed = 1; seed <= 16; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.hole_ratio = 0.25f;
        o.merge_runs = seed % 2;
        o.bridge = seed % 3 == 0;
        nav_mesh *m = fx_random(seed, &o);
        vg_ref *ref = vg_new(m, 0);
        uint32_t rng = seed * 48271u + 11;
        for (int k = 0; k < 2; k++) {
            float st[3];
            uint32_t sp = random_point(m, 0, &rng, st);
            double cmax = 1 + 6 * fx_randf(&rng);
            uint32_t n = 0;
            double area;
            bool trunc;
            ck_assert_int_eq(nav_reach_cost(q, m, sp, st, cmax, NULL, got, 4096, &n, &area, &trunc),
                             NAV_OK);
            ck_assert(!trunc);
            for (uint32_t p = 0; p < m->npolys; p++) {
                double ds = p == sp ? 0 : INFINITY, h = 0;
                uint32_t nv = nav_poly_nverts(m, p);
                for (uint32_t e = 0; e < nv && ds > 0; e++) {
                    const float *a = nav_poly_vert(m, p, e), *b = nav_poly_vert(m, p, e + 1);
                    h = fmax(h, hypot(b[0] - a[0], b[2] - a[2]) / 16);
                    for (int i = 0; i < 8; i++) {
                        float u = (float)i / 8, x[3];
                        for (int c = 0; c < 3; c++)
                            x[c] = a[c] + u * (b[c] - a[c]);
                        ds = fmin(ds, vg_shortest(ref, sp, st, p, x));
                    }
                }
                int is_listed = 0;
                for (uint32_t i = 0; i < n; i++)
                    is_listed |= got[i] == p;
                if (ds <= cmax - 1e-6)
                    ck_assert_msg(is_listed, "seed %u: polygon %u at %.6f <= %.6f not listed", seed,
                                  p, ds, cmax);
                if (is_listed)
                    ck_assert_msg(ds - h <= cmax + 1e-6,
                                  "seed %u: polygon %u listed, its cost is over %.6f > %.6f", seed,
                                  p, ds - h, cmax);
                checked++;
                listed += (uint32_t)is_listed;
                in_band += (uint32_t)(ds > cmax - 1e-6 && ds - h <= cmax + 1e-6);
            }
        }
        vg_free(ref);
        nav_mesh_free(m);
    }
    printf("nav_optimal reach: %u polygons checked, %u listed, %u within a sample step of the "
           "budget (not decided by the reference)\n",
           checked, listed, in_band);
    ck_assert_uint_gt(listed, checked / 10);
    free(got);
    nav_query_free(q);
}
END_TEST

/* Off the grid: every vertex moved by up to +-0.18 cells (quads stay
   convex), so orientation tests meet coordinates that are not small
   integers, and points on edges lie a float rounding away from them. */
START_TEST(test_random_jittered) {
    fx_random_opts o = fx_random_defaults();
    o.hole_ratio = 0.25f;
    o.jitter = 0.36f;
    property_run("jittered", o, 0, 120, 6);
    property_run("jittered, area 1 excluded", o, 1ull << 1, 40, 6);
}
END_TEST

/* Random meshes with random off-mesh links (one-way and two-way, some of an
   excluded area) against the reference, which treats each link as a graph
   edge of its 3-D length. Every third mesh has a bridge at y = 4 over the
   floor, so links climb and drop: the path's cost is its xz segments plus
   each link at its 3-D length (path_cost), which a search pricing links at
   their xz length would get wrong. */
START_TEST(test_random_links) {
    prop_stats st = {0};
    uint32_t climbs = 0, table_links = 0;
    for (uint32_t seed = 1; seed <= 60; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.hole_ratio = 0.25f;
        o.merge_runs = seed % 2;
        o.bridge = seed % 3 == 0;
        nav_mesh *base = fx_random(seed, &o);
        nav_mesh_input in;
        nav_mesh_as_input(base, &in);
        uint32_t rng = seed * 7919u + 3;
        nav_link_input links[6];
        memset(links, 0, sizeof links);
        for (int l = 0; l < 6; l++) {
            random_point(base, 0, &rng, links[l].start);
            random_point(base, 0, &rng, links[l].end);
            links[l].radius = 0.1f;
            links[l].bidirectional = (fx_rand(&rng) & 1) != 0;
            links[l].area = (uint8_t)(l == 5 ? 3 : 0);
            snprintf(links[l].kind, sizeof links[l].kind, "l%d", l);
        }
        in.links = links;
        in.nlinks = 6;
        nav_mesh *m = NULL;
        nav_error err;
        ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s", err.message);
        /* half the meshes exclude link 5's area (the graph's A* answers,
           skipping it), half nothing (the graph's table answers, links and
           all) */
        uint64_t excl = (seed / 2) % 2 ? 1ull << 3 : 0;
        vg_ref *ref = vg_new(m, excl);
        for (int q = 0; q < 6; q++) {
            float s[3], e[3];
            uint32_t sp = random_point(m, excl, &rng, s), ep = random_point(m, excl, &rng, e);
            double want = vg_shortest(ref, sp, s, ep, e);
            st.queries++;
            for (int mode = 0; mode < 3; mode++) {
                nav_optimal_use_graph(g_opt, prop_mode[mode]);
                run r;
                search(&r, m, sp, s, ep, e, excl, 0);
                if (!isfinite(want)) {
                    ck_assert_msg(r.st == NAV_E_NOT_FOUND, "seed %u q %d mode %d: status %d", seed,
                                  q, mode, r.st);
                    continue;
                }
                ck_assert_msg(r.st == NAV_OK, "seed %u q %d mode %d: status %d", seed, q, mode,
                              r.st);
                double got = path_cost(m, &r.res);
                ck_assert_msg(fabs(got - want) <= 1e-4 && got <= want + 1e-6,
                              "seed %u q %d mode %d: optimal %.9f reference %.9f (%u links)", seed,
                              q, mode, got, want, r.res.nlinks);
                climbs += r.res.nlinks > 0 && o.bridge && mode == 0;
                table_links += r.res.nlinks > 0 && mode == 0 && !excl;
                for (uint32_t i = 0; i < r.res.nlinks && excl; i++)
                    ck_assert_uint_ne(r.res.links[i], 5); /* excluded */
                check_corridor(m, &r.res, sp, ep);
                st.found += mode == 0;
                st.symmetric += r.res.nlinks > 0 && mode == 0; /* here: paths through a link */
            }
            nav_optimal_use_graph(g_opt, NAV_OPT_GRAPH_AUTO);
        }
        vg_free(ref);
        nav_mesh_free(m);
        nav_mesh_free(base);
    }
    printf("nav_optimal links: 60 seeds, %u queries, %u paths, %u of them through links (%u on "
           "bridge meshes)\n",
           st.queries, st.found, st.symmetric, climbs);
    ck_assert_uint_gt(st.symmetric, 10);
    ck_assert_uint_gt(climbs, 2);
    ck_assert_uint_gt(table_links, 5); /* the table's paths through links */
    /* the exclusion hits a link's area only: the graph answers (it skips
       that link), and never hands an answer back */
    nav_optimal_stats os;
    nav_optimal_stats_get(g_opt, &os);
    ck_assert_uint_eq(os.graph_misses, 0);
    ck_assert_uint_gt(os.graph_searches, st.found / 4);
}
END_TEST

Suite *nav_optimal_suite(void) {
    Suite *s = suite_create("nav_optimal");
    TCase *tc = tcase_create("hand");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_square_hole);
    tcase_add_test(tc, test_zigzag);
    tcase_add_test(tc, test_vertex_ends);
    tcase_add_test(tc, test_edge_ends);
    tcase_add_test(tc, test_same_poly_and_same_point);
    tcase_add_test(tc, test_bridge_not_shortcut);
    tcase_add_test(tc, test_link_one_way);
    tcase_add_test(tc, test_link_shortcut_vs_reverse);
    tcase_add_test(tc, test_excluded_area);
    tcase_add_test(tc, test_limits_and_buffers);
    tcase_add_test(tc, test_observer);
    tcase_add_test(tc, test_welded_levels_corner_cache);
    tcase_add_test(tc, test_auto_by_distance);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("reference");
    tcase_add_checked_fixture(tp, setup, teardown);
    tcase_set_timeout(tp, 300);
    tcase_add_test(tp, test_random_holes);
    tcase_add_test(tp, test_random_merged);
    tcase_add_test(tp, test_random_bridge);
    tcase_add_test(tp, test_random_excluded);
    tcase_add_test(tp, test_random_narrow);
    tcase_add_test(tp, test_random_links);
    tcase_add_test(tp, test_random_jittered);
    tcase_add_test(tp, test_reach_cost_vs_reference);
    suite_add_tcase(s, tp);
    return s;
}
