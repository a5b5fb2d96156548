/*
 * check_nav_mesh: the mesh builder, its validation, the height surface, the
 * spatial index and nearest-point queries, serialization and OBJ.
 *
 * Expected values are derived by hand from the fixture coordinates in
 * tests/test_fixtures.h (derivations in comments); the index and nearest
 * queries are also checked against brute-force references over every
 * polygon of seeded random meshes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_mesh_internal.h"
#include "tests/test_fixtures.h"

static const float EXT[3] = {2, 4, 2};

/* Builds from an input expecting failure; returns the status, message in err. */
static nav_status build_fail(const nav_mesh_input *in, const nav_mesh_limits *lim, nav_error *err) {
    nav_mesh *m = (nav_mesh *)0x1;
    nav_status st = nav_mesh_build(in, lim, &m, err);
    ck_assert_ptr_null(m);
    return st;
}

static void assert_rejects(fx_builder *b, const char *expect) {
    nav_mesh_input in;
    fx_input(b, &in);
    nav_error err;
    nav_status st = build_fail(&in, NULL, &err);
    ck_assert_int_eq(st, NAV_E_INVALID_MESH);
    ck_assert_msg(strstr(err.message, expect) != NULL, "message '%s' lacks '%s'", err.message,
                  expect);
    fx_free(b);
}

/* Twice the signed xz area of stored polygon p (the winding convention). */
static double signed_area2(const nav_mesh *m, uint32_t p) {
    double s = 0;
    for (uint32_t k = 0; k < nav_poly_nverts(m, p); k++) {
        const float *a = nav_poly_vert(m, p, k), *b = nav_poly_vert(m, p, k + 1);
        s += (double)a[0] * b[2] - (double)b[0] * a[2];
    }
    return s;
}

static uint32_t neighbour_entries(const nav_mesh *m) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < m->poly_start[m->npolys]; k++)
        n += m->poly_nei[k] != NAV_NONE;
    return n;
}

static bool are_neighbours(const nav_mesh *m, uint32_t a, uint32_t b) {
    for (uint32_t k = m->poly_start[a]; k < m->poly_start[a + 1]; k++)
        if (m->poly_nei[k] == b)
            return true;
    return false;
}

/* ---- hand-made fixtures ---- */

START_TEST(test_status_text) {
    ck_assert_str_eq(nav_status_text(NAV_OK), "ok");
    ck_assert_str_eq(nav_status_text(NAV_E_OFF_MESH), "point is not on the navmesh");
    ck_assert_str_eq(nav_status_text((nav_status)999), "unknown status");
}
END_TEST

START_TEST(test_square_with_hole) {
    nav_mesh *m = fx_square_with_hole();
    /* Grid lines 0,4,6,10 give 4 x 4 = 16 points; the missing centre cell's
       corners are used by its neighbours, so all 16 remain. */
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 16);
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 8);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    /* 10 * 10 - 2 * 2 = 96 */
    ck_assert_double_eq_tol(nav_mesh_area(m), 96.0, 1e-9);
    float bmin[3], bmax[3];
    nav_mesh_bounds(m, bmin, bmax);
    ck_assert(bmin[0] == 0 && bmin[1] == 0 && bmin[2] == 0);
    ck_assert(bmax[0] == 10 && bmax[1] == 0 && bmax[2] == 10);
    /* The 3 x 3 grid has 12 inner edges; 4 touch the hole: 8 shared edges,
       each seen from both sides = 16 neighbour entries. */
    ck_assert_uint_eq(neighbour_entries(m), 16);
    /* Cells in order j=0: (0,0)(1,0)(2,0) = 0,1,2; j=1: (0,1)(2,1) = 3,4;
       j=2: 5,6,7. Cell (0,0) touches (1,0) and (0,1), not the far ones. */
    ck_assert(are_neighbours(m, 0, 1) && are_neighbours(m, 0, 3));
    ck_assert(!are_neighbours(m, 0, 4) && !are_neighbours(m, 3, 4));
    for (uint32_t p = 0; p < 8; p++)
        ck_assert(signed_area2(m, p) < 0);
    ck_assert_double_eq_tol(nav_mesh_poly_area_xz(m, 0), 16.0, 1e-9);
    ck_assert_double_eq_tol(nav_mesh_poly_area_xz(m, 1), 8.0, 1e-9);
    ck_assert(!nav_mesh_has_detail(m));

    /* (5,0,5) is the hole's centre: the closest boundary points (4,0,5),
       (6,0,5), (5,0,4), (5,0,6) are all 1 m away, in polygons 3, 4, 1, 6;
       the tie goes to the lowest id, polygon 1 ([4,6]x[0,4]) at (5,0,4). */
    uint32_t poly;
    float out[3];
    const float hole[3] = {5, 0, 5};
    ck_assert_int_eq(nav_mesh_nearest(m, hole, EXT, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 1);
    ck_assert(out[0] == 5 && out[1] == 0 && out[2] == 4);
    /* With extents 0.5 nothing is within the box. */
    const float small[3] = {0.5f, 0.5f, 0.5f};
    ck_assert_int_eq(nav_mesh_nearest(m, hole, small, 0, &poly, out), NAV_E_OFF_MESH);
    ck_assert_uint_eq(poly, NAV_NONE);
    /* Inside cell (2,2) = polygon 7 at (8,1,8): the floor is 1 m below. */
    const float inside[3] = {8, 1, 8};
    ck_assert_int_eq(nav_mesh_nearest(m, inside, EXT, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 7);
    ck_assert(out[0] == 8 && out[1] == 0 && out[2] == 8);
    /* Bad arguments. */
    const float nanp[3] = {NAN, 0, 0};
    ck_assert_int_eq(nav_mesh_nearest(m, nanp, EXT, 0, &poly, out), NAV_E_INVALID_ARG);
    float y;
    ck_assert_int_eq(nav_mesh_height(m, 8, 1, 1, &y), NAV_E_INVALID_ARG);
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_l_corridor) {
    nav_mesh *m = fx_l_corridor();
    /* Horizontal strip: x = 0,2,..,10 at z = 0,2: 12 points; vertical part
       adds x = 8,10 at z = 4,6,8,10: 8 points. */
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 20);
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 9);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert_double_eq_tol(nav_mesh_area(m), 10 * 2 + 2 * 8, 1e-9);
    /* Polygon 4 is the corner cell [8,10]x[0,2]: neighbours 3 (west) and 5 (north). */
    ck_assert(are_neighbours(m, 4, 3) && are_neighbours(m, 4, 5));
    /* 8 shared edges in a chain of 9 cells. */
    ck_assert_uint_eq(neighbour_entries(m), 16);
    ck_assert(nav_mesh_reachable(m, 0, 8) && nav_mesh_reachable(m, 8, 0));
    uint32_t poly;
    float out[3];
    const float end[3] = {9, 0, 9};
    ck_assert_int_eq(nav_mesh_nearest(m, end, EXT, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 8);
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_two_islands) {
    nav_mesh *m = fx_two_islands();
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 8);
    ck_assert_uint_eq(nav_mesh_component_count(m), 2);
    ck_assert_uint_ne(nav_mesh_poly_component(m, 0), nav_mesh_poly_component(m, 1));
    ck_assert_double_eq_tol(nav_mesh_area(m), 32.0, 1e-9);
    ck_assert(!nav_mesh_reachable(m, 0, 1) && !nav_mesh_reachable(m, 1, 0));
    ck_assert(nav_mesh_reachable(m, 1, 1));
    ck_assert(!nav_mesh_reachable(m, 0, 99));
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_u_corridor) {
    nav_mesh *m = fx_u_corridor();
    /* 5 + 3 + 5 cells; 12 shared edges along the U. */
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 13);
    ck_assert_uint_eq(neighbour_entries(m), 24);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert_double_eq_tol(nav_mesh_area(m), 13 * 4.0, 1e-9);
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_bridge) {
    nav_mesh *m = fx_bridge();
    /* Polygons: floor j=0 -> 0..4, j=1 (i = 0, 2, 4) -> 5, 6, 7,
       j=2 -> 8..12, west ramp 13, deck 14, east ramp 15. */
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 16);
    /* 6 x 4 floor grid points (all used: the ramp cells' corners belong to
       floor cells too) + deck corners (10,5,4) (10,5,6) (20,5,4) (20,5,6). */
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 28);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    /* floor 30*10 - two 5x2 cells = 280, ramps 2 * (5*2) = 20, deck 10*2 = 20
       -> 320 */
    ck_assert_double_eq_tol(nav_mesh_area(m), 320.0, 1e-9);
    float bmin[3], bmax[3];
    nav_mesh_bounds(m, bmin, bmax);
    ck_assert(bmin[1] == 0 && bmax[1] == 5);
    /* The west ramp touches floor cell 5 (x = 5) and the deck, not the floor
       cells along its long sides (different vertices at x = 10). */
    ck_assert(are_neighbours(m, 13, 5) && are_neighbours(m, 13, 14));
    ck_assert(!are_neighbours(m, 13, 1) && !are_neighbours(m, 13, 11));
    ck_assert(!are_neighbours(m, 14, 6));

    uint32_t poly;
    float out[3];
    const float ext[3] = {2, 6, 2};
    /* (15,5.2,5): deck (y 5, 0.2 below) and floor 6 (y 0, 5.2 below) both
       contain it in xz; the vertically closer deck wins. */
    const float on_deck[3] = {15, 5.2f, 5};
    ck_assert_int_eq(nav_mesh_nearest(m, on_deck, ext, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 14);
    ck_assert_float_eq_tol(out[1], 5.0f, 1e-6f);
    /* (15,0.3,5): floor 0.3 below, deck 4.7 above -> floor. */
    const float under[3] = {15, 0.3f, 5};
    ck_assert_int_eq(nav_mesh_nearest(m, under, ext, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 6);
    ck_assert_float_eq_tol(out[1], 0.0f, 1e-6f);
    /* (15,5,6.1): just off the deck's edge z = 6. The floor contains it in
       xz, 5 m below; the deck's edge point (15,5,6) is 0.1 m away: the deck
       wins (a character stepping off a bridge edge stays on the bridge). */
    const float off_edge[3] = {15, 5, 6.1f};
    ck_assert_int_eq(nav_mesh_nearest(m, off_edge, ext, 0, &poly, out), NAV_OK);
    ck_assert_uint_eq(poly, 14);
    ck_assert_float_eq_tol(out[0], 15.0f, 1e-5f);
    ck_assert_float_eq_tol(out[1], 5.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 6.0f, 1e-5f);
    ck_assert(nav_mesh_reachable(m, 14, 6) && nav_mesh_reachable(m, 6, 14));

    /* Ramp plane: y = x - 5 on [5,10]; at x = 7.5, y = 2.5; the east ramp
       y = 25 - x gives 3 at x = 22. */
    float y;
    ck_assert_int_eq(nav_mesh_height(m, 13, 7.5f, 5, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 2.5f, 1e-5f);
    ck_assert_int_eq(nav_mesh_height(m, 15, 22, 4.5f, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 3.0f, 1e-5f);
    /* The centroid of the deck is (15, 5, 5). */
    ck_assert_float_eq_tol(m->poly_centroid[3 * 14 + 1], 5.0f, 1e-6f);
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_weld) {
    /* Quad A uses vertices 0..3, quad B has its own copies 4, 5 of A's east
       edge (1,0,0) (1,0,1), one nudged by 5e-5 (< 1e-4: welds), plus an
       unused vertex 8. After welding: 6 vertices, and A, B share an edge. */
    fx_builder *b = fx_new();
    fx_vert(b, 0, 0, 0);
    fx_vert(b, 0, 0, 1);
    fx_vert(b, 1, 0, 1);
    fx_vert(b, 1, 0, 0);
    fx_vert(b, 1.00005f, 0, 0);
    fx_vert(b, 1, 0.00005f, 1);
    fx_vert(b, 2, 0, 1);
    fx_vert(b, 2, 0, 0);
    fx_vert(b, 100, 0, 100);
    uint32_t a[4] = {0, 1, 2, 3}, q[4] = {4, 5, 6, 7};
    fx_poly(b, 4, a, 0);
    fx_poly(b, 4, q, 0);
    nav_mesh *m = fx_build(b);
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 6);
    ck_assert(are_neighbours(m, 0, 1) && are_neighbours(m, 1, 0));
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    /* The first occurrence wins: the welded vertex keeps (1,0,0) exactly. */
    float bmin[3], bmax[3];
    nav_mesh_bounds(m, bmin, bmax);
    ck_assert(bmax[0] == 2 && bmax[2] == 1 && bmin[1] == 0 && bmax[1] == 0);
    nav_mesh_free(m);

    /* Nudged by 2e-4 (> 1e-4): no weld, 7 vertices, no shared edge. */
    b = fx_new();
    fx_vert(b, 0, 0, 0);
    fx_vert(b, 0, 0, 1);
    fx_vert(b, 1, 0, 1);
    fx_vert(b, 1, 0, 0);
    fx_vert(b, 1.0002f, 0, 0);
    fx_vert(b, 1, 0, 1);
    fx_vert(b, 2, 0, 1);
    fx_vert(b, 2, 0, 0);
    fx_poly(b, 4, a, 0);
    fx_poly(b, 4, q, 0);
    m = fx_build(b);
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 7);
    ck_assert(!are_neighbours(m, 0, 1));
    ck_assert_uint_eq(nav_mesh_component_count(m), 2);
    nav_mesh_free(m);

    /* A pentagon whose vertices 1 and 2 weld: the repeat is dropped and a
       quad remains (4 vertices, area 1). */
    b = fx_new();
    fx_vert(b, 0, 0, 0);
    fx_vert(b, 1, 0, 0);
    fx_vert(b, 1, 0, 0.00001f);
    fx_vert(b, 1, 0, 1);
    fx_vert(b, 0, 0, 1);
    uint32_t pent[5] = {0, 1, 2, 3, 4};
    fx_poly(b, 5, pent, 0);
    m = fx_build(b);
    ck_assert_uint_eq(nav_poly_nverts(m, 0), 4);
    ck_assert_uint_eq(nav_mesh_vertex_count(m), 4);
    ck_assert_double_eq_tol(nav_mesh_area(m), 1.0, 1e-6);
    nav_mesh_free(m);
}
END_TEST

START_TEST(test_winding) {
    /* The unit square listed counter-clockwise in the (x right, z up)
       drawing has signed area +1; listed the other way, -1. Both must be
       stored with negative signed area, starting at the same vertex. */
    static const float xz[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    for (int dir = 0; dir < 2; dir++) {
        fx_builder *b = fx_new();
        uint32_t ids[4];
        for (int i = 0; i < 4; i++) {
            int k = dir ? (4 - i) % 4 : i;
            ids[i] = fx_vert(b, xz[k][0], 0, xz[k][1]);
        }
        fx_poly(b, 4, ids, 0);
        nav_mesh *m = fx_build(b);
        ck_assert_double_eq_tol(signed_area2(m, 0), -2.0, 1e-9);
        const float *v0 = nav_poly_vert(m, 0, 0), *v1 = nav_poly_vert(m, 0, 1);
        ck_assert(v0[0] == 0 && v0[2] == 0);
        /* negative order from (0,0) goes to (0,1) first */
        ck_assert(v1[0] == 0 && v1[2] == 1);
        nav_mesh_free(m);
    }
}
END_TEST

/* ---- validation ---- */

static fx_builder *unit_square(void) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 1, 1, 0, 0);
    return b;
}

START_TEST(test_invalid_cases) {
    /* Dart (0,0) (2,1) (4,0) (2,4): the turn at (2,1) goes the other way. */
    fx_builder *b = unit_square();
    uint32_t d[4] = {fx_vert(b, 0, 0, 0), fx_vert(b, 2, 0, 1), fx_vert(b, 4, 0, 0),
                     fx_vert(b, 2, 0, 4)};
    fx_poly(b, 4, d, 0);
    assert_rejects(b, "polygons[1] is not convex in the xz plane");

    /* Pentagram: every turn has the same sign, but it winds twice. */
    b = fx_new();
    uint32_t s[5];
    for (int i = 0; i < 5; i++) {
        double a = 2 * M_PI * (2 * i) / 5;
        s[i] = fx_vert(b, (float)cos(a), 0, (float)sin(a));
    }
    fx_poly(b, 5, s, 0);
    assert_rejects(b, "polygons[0] is not convex");

    /* Index out of range: the square has 4 vertices, 9 does not exist. */
    b = unit_square();
    uint32_t bad[3] = {0, 1, 9};
    fx_poly(b, 3, bad, 0);
    assert_rejects(b, "polygons[1] references vertex 9 but there are 4 vertices");

    b = unit_square();
    fx_vert(b, 0, NAN, 0);
    assert_rejects(b, "vertices[4] has a non-finite coordinate");
    b = unit_square();
    fx_vert(b, INFINITY, 0, 0);
    assert_rejects(b, "vertices[4] has a non-finite coordinate");

    b = unit_square();
    uint32_t two[2] = {0, 1};
    fx_poly(b, 2, two, 0);
    assert_rejects(b, "polygons[1] has fewer than 3 vertices");

    /* Collinear triangle (0,0) (1,0) (2,0): zero area. */
    b = unit_square();
    uint32_t c[3] = {fx_vert(b, 5, 0, 0), fx_vert(b, 6, 0, 0), fx_vert(b, 7, 0, 0)};
    fx_poly(b, 3, c, 0);
    assert_rejects(b, "polygons[1] has zero area");

    /* A triangle two of whose vertices weld: zero area after welding. */
    b = unit_square();
    uint32_t w[3] = {fx_vert(b, 5, 0, 0), fx_vert(b, 5, 0, 0.00002f), fx_vert(b, 6, 0, 1)};
    fx_poly(b, 3, w, 0);
    assert_rejects(b, "polygons[1] has zero area");

    /* Three triangles on the edge (0,0)-(1,0): two above it, one below. */
    b = fx_new();
    uint32_t e0 = fx_vert(b, 0, 0, 0), e1 = fx_vert(b, 1, 0, 0), up = fx_vert(b, 0.5f, 0, 1),
             down = fx_vert(b, 0.5f, 0, -1), up2 = fx_vert(b, 0.3f, 0, 2);
    uint32_t t0[3] = {e0, e1, up}, t1[3] = {e0, e1, down}, t2[3] = {e0, e1, up2};
    fx_poly(b, 3, t0, 0);
    fx_poly(b, 3, t1, 0);
    fx_poly(b, 3, t2, 0);
    assert_rejects(
        b, "the edge between vertices 0 and 1 is shared by more than two polygons (polygons 0, 1 "
           "and 2)");

    b = unit_square();
    fx_quad(b, 1, 0, 2, 1, 0, 64);
    assert_rejects(b, "areas[1] is 64");

    const float p0[3] = {0.5f, 0, 0.5f}, pn[3] = {NAN, 0, 0};
    b = unit_square();
    fx_link(b, p0, pn, 0.5f, 1, 0, "jump");
    assert_rejects(b, "links[0] has a non-finite coordinate");
    b = unit_square();
    fx_link(b, p0, p0, 0.5f, 1, 0, "jump");
    fx_link(b, p0, p0, -1, 1, 0, "jump");
    assert_rejects(b, "links[1] has a negative radius");
    b = unit_square();
    fx_link(b, p0, p0, 0.5f, 1, 64, "jump");
    assert_rejects(b, "links[0] has area 64");

    /* A vertex used twice (not consecutively): 0 1 2 1 3. */
    b = fx_new();
    uint32_t r0 = fx_vert(b, 0, 0, 0), r1 = fx_vert(b, 1, 0, 0), r2 = fx_vert(b, 1, 0, 1),
             r3 = fx_vert(b, 0, 0, 1);
    uint32_t rep[5] = {r0, r1, r2, r1, r3};
    fx_poly(b, 5, rep, 0);
    assert_rejects(b, "polygons[0] uses vertex 1 more than once");

    /* No polygons at all. */
    b = fx_new();
    fx_vert(b, 0, 0, 0);
    assert_rejects(b, "no polygons");

    nav_mesh *m = NULL;
    ck_assert_int_eq(nav_mesh_build(NULL, NULL, &m, NULL), NAV_E_INVALID_ARG);
}
END_TEST

START_TEST(test_invalid_detail) {
    fx_builder *b = unit_square();
    nav_mesh_input in;
    fx_input(b, &in);
    const float dv[3] = {0.5f, 0, 0.5f};
    uint32_t tris[3] = {0, 1, 5}; /* 4 vertices + 1 detail vertex: 5 is out */
    uint32_t pt[2] = {0, 1};
    in.detail_verts = dv;
    in.ndetail_verts = 1;
    in.detail_tris = tris;
    in.ndetail_tris = 1;
    in.detail_poly_tris = pt;
    nav_error err;
    ck_assert_int_eq(build_fail(&in, NULL, &err), NAV_E_INVALID_MESH);
    ck_assert_msg(strstr(err.message, "detail triangles[0] references vertex 5") != NULL, "%s",
                  err.message);
    tris[2] = 4;
    pt[1] = 2; /* triangles [0, 2) but there is 1 */
    ck_assert_int_eq(build_fail(&in, NULL, &err), NAV_E_INVALID_MESH);
    ck_assert_msg(strstr(err.message, "polygon_triangles[0]") != NULL, "%s", err.message);
    pt[1] = 1;
    nav_mesh *m = NULL;
    ck_assert_int_eq(nav_mesh_build(&in, NULL, &m, &err), NAV_OK);
    nav_mesh_free(m);
    fx_free(b);
}
END_TEST

START_TEST(test_limits) {
    fx_builder *b = fx_new();
    for (int i = 0; i < 8; i++)
        fx_quad(b, (float)i, 0, (float)i + 1, 1, 0, 0);
    const float p[3] = {0.5f, 0, 0.5f};
    fx_link(b, p, p, 0, 0, 0, "x");
    fx_link(b, p, p, 0, 0, 0, "y");
    nav_mesh_input in;
    fx_input(b, &in);
    nav_error err;
    /* 8 quads in a row: 18 vertices, 8 polygons of 4, 2 links. */
    nav_mesh_limits lim = {.max_polys = 7};
    ck_assert_int_eq(build_fail(&in, &lim, &err), NAV_E_LIMIT);
    ck_assert_msg(strstr(err.message, "8 polygons") != NULL, "%s", err.message);
    lim = (nav_mesh_limits){.max_verts = 17};
    ck_assert_int_eq(build_fail(&in, &lim, &err), NAV_E_LIMIT);
    ck_assert_msg(strstr(err.message, "18 vertices") != NULL, "%s", err.message);
    lim = (nav_mesh_limits){.max_verts_per_poly = 3};
    ck_assert_int_eq(build_fail(&in, &lim, &err), NAV_E_LIMIT);
    ck_assert_msg(strstr(err.message, "polygons[0] has 4 vertices") != NULL, "%s", err.message);
    lim = (nav_mesh_limits){.max_links = 1};
    ck_assert_int_eq(build_fail(&in, &lim, &err), NAV_E_LIMIT);
    lim =
        (nav_mesh_limits){.max_verts = 18, .max_polys = 8, .max_verts_per_poly = 4, .max_links = 2};
    nav_mesh *m = NULL;
    ck_assert_int_eq(nav_mesh_build(&in, &lim, &m, &err), NAV_OK);
    nav_mesh_free(m);
    fx_free(b);
}
END_TEST

/* ---- height ---- */

START_TEST(test_height_slope) {
    /* Quad (0,0,0) (0,0,4) (4,2,4) (4,2,0): the plane y = x / 2. */
    fx_builder *b = fx_new();
    uint32_t ids[4] = {fx_vert(b, 0, 0, 0), fx_vert(b, 0, 0, 4), fx_vert(b, 4, 2, 4),
                       fx_vert(b, 4, 2, 0)};
    fx_poly(b, 4, ids, 0);
    nav_mesh *m = fx_build(b);
    float y;
    ck_assert_int_eq(nav_mesh_height(m, 0, 1, 2, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 0.5f, 1e-6f);
    ck_assert_int_eq(nav_mesh_height(m, 0, 3, 1, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 1.5f, 1e-6f);
    /* Outside at (6, 2): the closest surface point is (4, 2) on the x = 4
       edge, height 2. */
    ck_assert_int_eq(nav_mesh_height(m, 0, 6, 2, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 2.0f, 1e-6f);
    /* Closest point to (2, 5, 6): outside in z; boundary point (2, ., 4),
       lifted to y = 1. */
    const float p[3] = {2, 5, 6};
    float out[3];
    ck_assert_int_eq(nav_mesh_closest_on_poly(m, 0, p, out), NAV_OK);
    ck_assert_float_eq_tol(out[0], 2, 1e-6f);
    ck_assert_float_eq_tol(out[1], 1, 1e-6f);
    ck_assert_float_eq_tol(out[2], 4, 1e-6f);
    ck_assert(nav_mesh_poly_contains_xz(m, 0, 4, 4)); /* corner: boundary included */
    ck_assert(!nav_mesh_poly_contains_xz(m, 0, 4.01f, 2));
    nav_mesh_free(m);
}
END_TEST

/* A square [0,2]x[0,2] with flat corners (y = 0) and a detail vertex at
   its centre (1, 1, 1): four triangles form a pyramid whose height is
   y = 1 - max(|x - 1|, |z - 1|). The fan triangulation would give 0. */
static nav_mesh *pyramid(void) {
    fx_builder *b = fx_new();
    uint32_t ids[4] = {fx_vert(b, 0, 0, 0), fx_vert(b, 0, 0, 2), fx_vert(b, 2, 0, 2),
                       fx_vert(b, 2, 0, 0)};
    fx_poly(b, 4, ids, 0);
    nav_mesh_input in;
    fx_input(b, &in);
    static const float dv[3] = {1, 1, 1};
    static const uint32_t tris[12] = {0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4};
    static const uint32_t pt[2] = {0, 4};
    in.detail_verts = dv;
    in.ndetail_verts = 1;
    in.detail_tris = tris;
    in.ndetail_tris = 4;
    in.detail_poly_tris = pt;
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_int_eq(nav_mesh_build(&in, NULL, &m, &err), NAV_OK);
    fx_free(b);
    return m;
}

START_TEST(test_height_detail) {
    nav_mesh *m = pyramid();
    ck_assert(nav_mesh_has_detail(m));
    float y;
    /* y = 1 - max(|x-1|, |z-1|) */
    static const float cases[][3] = {{1, 1, 1},         {0.5f, 1, 0.5f}, {1.5f, 0.5f, 0.5f},
                                     {1, 0.25f, 0.25f}, {0, 0, 0},       {1.9f, 1.2f, 0.1f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(nav_mesh_height(m, 0, cases[i][0], cases[i][1], &y), NAV_OK);
        ck_assert_msg(fabsf(y - cases[i][2]) < 1e-6f, "(%g,%g): %g != %g", cases[i][0], cases[i][1],
                      y, cases[i][2]);
    }
    /* Outside at (3, 1): the closest surface point is (2, 1), height 0. */
    ck_assert_int_eq(nav_mesh_height(m, 0, 3, 1, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 0, 1e-6f);
    /* The polygon's box includes the detail apex: y up to 1. */
    ck_assert_float_eq(m->poly_bounds[4], 1.0f);
    /* The nearest point from above the apex lands on it. */
    uint32_t poly;
    float out[3];
    const float p[3] = {1, 2, 1};
    ck_assert_int_eq(nav_mesh_nearest(m, p, EXT, 0, &poly, out), NAV_OK);
    ck_assert_float_eq_tol(out[1], 1, 1e-6f);
    /* The centroid (1, ., 1) is lifted to the apex. */
    ck_assert_float_eq_tol(m->poly_centroid[1], 1, 1e-6f);
    nav_mesh_free(m);
}
END_TEST

/* ---- links ---- */

START_TEST(test_links) {
    /* Islands [0,4]x[0,4] (polygon 0) and [10,14]x[0,4] (polygon 1). */
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, 0, 0);
    const float a[3] = {3, 0.5f, 2}, c[3] = {11, 0, 2}, far[3] = {50, 0, 50};
    fx_link(b, a, c, 0.5f, 0, 2, "jump");      /* one-way 0 -> 1 */
    fx_link(b, far, c, 0.5f, 1, 0, "nowhere"); /* start off mesh: unusable */
    nav_mesh *m = fx_build(b);
    ck_assert_uint_eq(nav_mesh_link_count(m), 2);
    ck_assert_str_eq(nav_mesh_link_kind(m, 0), "jump");
    ck_assert_uint_eq(m->links[0].start_poly, 0);
    ck_assert_uint_eq(m->links[0].end_poly, 1);
    /* start (3, 0.5, 2) is lifted on the floor: (3, 0, 2) */
    ck_assert(m->links[0].start_on[1] == 0 && m->links[0].start_on[0] == 3);
    ck_assert_uint_eq(m->links[1].start_poly, NAV_NONE);
    float s[3], e[3];
    nav_mesh_link_points(m, 0, s, e);
    ck_assert(s[1] == 0.5f && e[0] == 11);
    /* Components count the one-way link as two-way: 1. */
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert(nav_mesh_reachable(m, 0, 1));
    ck_assert(!nav_mesh_reachable(m, 1, 0));
    /* link_out: polygon 0 has link 0; polygon 1 nothing (one-way). */
    ck_assert_uint_eq(m->link_out_start[1] - m->link_out_start[0], 1);
    ck_assert_uint_eq(m->link_out[m->link_out_start[0]], 0);
    ck_assert_uint_eq(m->link_out_start[2] - m->link_out_start[1], 0);
    nav_mesh_free(m);

    /* The same link two-way appears at both ends, reversed at the end. */
    b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, 0, 0);
    fx_link(b, a, c, 0.5f, 1, 2, "ladder");
    m = fx_build(b);
    ck_assert(nav_mesh_reachable(m, 0, 1) && nav_mesh_reachable(m, 1, 0));
    ck_assert_uint_eq(m->link_out[m->link_out_start[1]], 0 | NAV_LINK_REVERSE);
    nav_mesh_free(m);
}
END_TEST

/* A chain of cells 0 -> 1 -> ... joined only by one-way links, so every
   polygon is its own SCC: reachable(i, j) is exactly i <= j. */
START_TEST(test_reachable_chain) {
    fx_builder *b = fx_new();
    const int n = 12;
    for (int i = 0; i < n; i++)
        fx_quad(b, 3.0f * i, 0, 3.0f * i + 1, 1, 0, 0);
    for (int i = 0; i + 1 < n; i++) {
        const float s[3] = {3.0f * i + 0.5f, 0, 0.5f}, e[3] = {3.0f * i + 3.5f, 0, 0.5f};
        fx_link(b, s, e, 0.1f, 0, 0, "step");
    }
    nav_mesh *m = fx_build(b);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert_uint_eq(m->nscc, (uint32_t)n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            ck_assert_int_eq(nav_mesh_reachable(m, i, j), i <= j);
    nav_mesh_free(m);
}
END_TEST

/* Past NAV_SCC_CLOSURE_MAX (4096) strongly connected components there is no
   closure table and reachable() searches the condensed DAG instead: a
   one-way chain of 4200 cells must give the same answers, i <= j. */
START_TEST(test_reachable_fallback) {
    fx_builder *b = fx_new();
    const int n = 4200;
    for (int i = 0; i < n; i++)
        fx_quad(b, 3.0f * i, 0, 3.0f * i + 1, 1, 0, 0);
    for (int i = 0; i + 1 < n; i++) {
        const float s[3] = {3.0f * i + 0.5f, 0, 0.5f}, e[3] = {3.0f * i + 3.5f, 0, 0.5f};
        fx_link(b, s, e, 0.1f, 0, 0, "step");
    }
    nav_mesh *m = fx_build(b);
    ck_assert_uint_eq(m->nscc, (uint32_t)n);
    ck_assert_ptr_null(m->scc_reach);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    uint32_t rng = 99;
    for (int t = 0; t < 200; t++) {
        uint32_t i = fx_rand(&rng) % n, j = fx_rand(&rng) % n;
        ck_assert_int_eq(nav_mesh_reachable(m, i, j), i <= j);
    }
    ck_assert(nav_mesh_reachable(m, 0, n - 1) && !nav_mesh_reachable(m, n - 1, 0));
    nav_mesh_free(m);
}
END_TEST

/* ---- index and nearest against brute force ---- */

static fx_random_opts opts_for(uint32_t seed) {
    fx_random_opts o = fx_random_defaults();
    o.merge_runs = seed % 2;
    o.bridge = (seed / 2) % 2;
    o.islands = (seed / 4) % 2;
    o.triangulate = seed % 3 != 0;
    o.cell = seed % 5 == 0 ? 0.75f : 1.0f;
    return o;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

START_TEST(test_query_box_vs_brute) {
    uint32_t got[512], want[512];
    for (uint32_t seed = 1; seed <= 40; seed++) {
        fx_random_opts o = opts_for(seed);
        nav_mesh *m = fx_random(seed, &o);
        uint32_t rng = seed * 7919u;
        for (int q = 0; q < 50; q++) {
            float bmin[3], bmax[3];
            for (int a = 0; a < 3; a++) {
                float span = a == 1 ? 6 : 12;
                float c = fx_randf(&rng) * span - 1, h = fx_randf(&rng) * 3;
                bmin[a] = c - h;
                bmax[a] = c + h;
            }
            uint32_t n = nav_mesh_query_box(m, bmin, bmax, got, 512);
            uint32_t nw = 0;
            for (uint32_t p = 0; p < m->npolys; p++) {
                const float *pb = &m->poly_bounds[6 * p];
                if (pb[0] <= bmax[0] && pb[3] >= bmin[0] && pb[1] <= bmax[1] && pb[4] >= bmin[1] &&
                    pb[2] <= bmax[2] && pb[5] >= bmin[2])
                    want[nw++] = p;
            }
            ck_assert_uint_eq(n, nw);
            qsort(got, n, sizeof *got, cmp_u32);
            for (uint32_t i = 0; i < n; i++)
                ck_assert_uint_eq(got[i], want[i]);
            /* a smaller buffer still reports the full count */
            if (nw > 2)
                ck_assert_uint_eq(nav_mesh_query_box(m, bmin, bmax, got, 2), nw);
        }
        nav_mesh_free(m);
    }
}
END_TEST

/* The reference: every polygon, through the public per-polygon functions;
   the closest point in 3-D wins, ties to the lower id. */
static uint32_t brute_nearest(const nav_mesh *m, const float p[3], const float ext[3],
                              uint64_t mask, float out[3]) {
    uint32_t best = NAV_NONE;
    double best_d = INFINITY;
    for (uint32_t q = 0; q < nav_mesh_polygon_count(m); q++) {
        if ((mask >> nav_mesh_poly_area(m, q)) & 1)
            continue;
        float pt[3];
        double d;
        if (nav_mesh_poly_contains_xz(m, q, p[0], p[2])) {
            pt[0] = p[0];
            pt[2] = p[2];
            nav_mesh_height(m, q, p[0], p[2], &pt[1]);
            d = fabs((double)pt[1] - p[1]);
        } else {
            nav_mesh_closest_on_poly(m, q, p, pt);
            d = nav_dist3d(p, pt);
        }
        if (fabsf(pt[0] - p[0]) > ext[0] || fabsf(pt[1] - p[1]) > ext[1] ||
            fabsf(pt[2] - p[2]) > ext[2])
            continue;
        if (d < best_d) {
            best = q;
            best_d = d;
            memcpy(out, pt, sizeof pt);
        }
    }
    return best;
}

START_TEST(test_nearest_vs_brute) {
    for (uint32_t seed = 1; seed <= 40; seed++) {
        fx_random_opts o = opts_for(seed);
        nav_mesh *m = fx_random(seed, &o);
        uint32_t rng = seed * 104729u;
        for (int q = 0; q < 60; q++) {
            float p[3] = {fx_randf(&rng) * 13 - 1.5f, fx_randf(&rng) * 7 - 1.5f,
                          fx_randf(&rng) * 13 - 1.5f};
            float ext[3] = {0.2f + fx_randf(&rng) * 2, 0.5f + fx_randf(&rng) * 4,
                            0.2f + fx_randf(&rng) * 2};
            uint64_t mask = q % 4 == 0 ? 2u : 0u; /* sometimes exclude area 1 */
            float want[3] = {0, 0, 0}, got[3];
            uint32_t wp = brute_nearest(m, p, ext, mask, want), gp;
            nav_status st = nav_mesh_nearest(m, p, ext, mask, &gp, got);
            if (wp == NAV_NONE) {
                ck_assert_int_eq(st, NAV_E_OFF_MESH);
                continue;
            }
            ck_assert_int_eq(st, NAV_OK);
            ck_assert_msg(gp == wp, "seed %u query %d: poly %u != %u", seed, q, gp, wp);
            ck_assert(got[0] == want[0] && got[1] == want[1] && got[2] == want[2]);
            ck_assert(!((mask >> nav_mesh_poly_area(m, gp)) & 1));
        }
        nav_mesh_free(m);
    }
}
END_TEST

START_TEST(test_random_properties) {
    /* Same seed, same mesh; a flat floor's height is 0 everywhere. */
    fx_random_opts o = fx_random_defaults();
    o.bridge = 1;
    o.islands = 0;
    nav_mesh *a = fx_random(7, &o), *b = fx_random(7, &o);
    ck_assert_uint_eq(nav_mesh_polygon_count(a), nav_mesh_polygon_count(b));
    ck_assert_uint_eq(nav_mesh_component_count(a), 1);
    uint8_t *ba, *bb;
    size_t la, lb;
    ck_assert_int_eq(nav_mesh_serialize(a, &ba, &la), NAV_OK);
    ck_assert_int_eq(nav_mesh_serialize(b, &bb, &lb), NAV_OK);
    ck_assert(la == lb && memcmp(ba, bb, la) == 0);
    ck_assert_uint_ne(nav_mesh_uid(a), nav_mesh_uid(b));
    free(ba);
    free(bb);
    /* The deck (y = 4) exists: bounds reach 4. */
    float bmin[3], bmax[3];
    nav_mesh_bounds(a, bmin, bmax);
    ck_assert_float_eq(bmax[1], 4.0f);
    ck_assert(nav_mesh_memory(a) > 0);
    nav_mesh_free(a);
    nav_mesh_free(b);
}
END_TEST

/* ---- serialization ---- */

static nav_mesh *bridge_with_links_and_detail(void) {
    /* The pyramid plus a second square and a one-way and a two-way link. */
    fx_builder *b = fx_new();
    uint32_t ids[4] = {fx_vert(b, 0, 0, 0), fx_vert(b, 0, 0, 2), fx_vert(b, 2, 0, 2),
                       fx_vert(b, 2, 0, 0)};
    fx_poly(b, 4, ids, 3);
    fx_quad(b, 5, 0, 7, 2, 0, 1);
    const float s[3] = {1.5f, 0, 1}, e[3] = {5.5f, 0, 1};
    fx_link(b, s, e, 0.25f, 0, 5, "jump");
    fx_link(b, e, s, 0.25f, 1, 6, "ladder");
    nav_mesh_input in;
    fx_input(b, &in);
    static const float dv[3] = {1, 1, 1};
    static const uint32_t tris[18] = {0, 1, 8, 1, 2, 8, 2, 3, 8, 3, 0, 8, 4, 5, 6, 4, 6, 7};
    static const uint32_t pt[4] = {0, 4, 4, 2};
    in.detail_verts = dv;
    in.ndetail_verts = 1;
    in.detail_tris = tris;
    in.ndetail_tris = 6;
    in.detail_poly_tris = pt;
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s", err.message);
    fx_free(b);
    return m;
}

static void assert_same_mesh(const nav_mesh *a, const nav_mesh *b) {
    ck_assert_uint_eq(nav_mesh_vertex_count(a), nav_mesh_vertex_count(b));
    ck_assert_uint_eq(nav_mesh_polygon_count(a), nav_mesh_polygon_count(b));
    ck_assert_uint_eq(nav_mesh_link_count(a), nav_mesh_link_count(b));
    ck_assert_uint_eq(nav_mesh_component_count(a), nav_mesh_component_count(b));
    ck_assert(nav_mesh_area(a) == nav_mesh_area(b));
    ck_assert_int_eq(nav_mesh_has_detail(a), nav_mesh_has_detail(b));
    ck_assert(memcmp(a->verts, b->verts, a->nverts * 3 * sizeof(float)) == 0);
    ck_assert(memcmp(a->poly_start, b->poly_start, (a->npolys + 1) * sizeof(uint32_t)) == 0);
    ck_assert(memcmp(a->poly_verts, b->poly_verts, a->poly_start[a->npolys] * 4) == 0);
    ck_assert(memcmp(a->poly_nei, b->poly_nei, a->poly_start[a->npolys] * 4) == 0);
    ck_assert(memcmp(a->areas, b->areas, a->npolys) == 0);
    for (uint32_t l = 0; l < a->nlinks; l++) {
        ck_assert_str_eq(nav_mesh_link_kind(a, l), nav_mesh_link_kind(b, l));
        ck_assert_uint_eq(a->links[l].start_poly, b->links[l].start_poly);
        ck_assert_uint_eq(a->links[l].end_poly, b->links[l].end_poly);
    }
}

START_TEST(test_serialize_roundtrip) {
    nav_mesh *m = bridge_with_links_and_detail();
    uint8_t *blob, *blob2;
    size_t len, len2;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    ck_assert(memcmp(blob, "NAVM", 4) == 0);
    ck_assert(blob[4] == 3 && blob[5] == 0 && blob[6] == 0 && blob[7] == 0);
    nav_mesh *r = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_deserialize(blob, len, &r, &err) == NAV_OK, "%s", err.message);
    assert_same_mesh(m, r);
    /* the corner graph travels with the mesh and comes back as stored */
    ck_assert_int_eq(nav_mesh_graph_origin(m), NAV_GRAPH_BUILT);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_LOADED);
    ck_assert_uint_eq(nav_corner_node_count(r->cgraph), nav_corner_node_count(m->cgraph));
    ck_assert_uint_eq(nav_corner_edge_count(r->cgraph), nav_corner_edge_count(m->cgraph));
    ck_assert_uint_ne(nav_mesh_uid(m), nav_mesh_uid(r));
    float y;
    ck_assert_int_eq(nav_mesh_height(r, 0, 1, 1, &y), NAV_OK);
    ck_assert_float_eq_tol(y, 1, 1e-6f); /* the pyramid's apex survived */
    ck_assert(nav_mesh_reachable(r, 0, 1) && nav_mesh_reachable(r, 1, 0));
    ck_assert_int_eq(nav_mesh_serialize(r, &blob2, &len2), NAV_OK);
    ck_assert(len == len2 && memcmp(blob, blob2, len) == 0);
    /* as_input rebuilds an equal mesh too */
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    nav_mesh *r2 = NULL;
    ck_assert_int_eq(nav_mesh_build(&in, NULL, &r2, &err), NAV_OK);
    assert_same_mesh(m, r2);
    nav_mesh_free(r2);
    free(blob2);
    free(blob);
    nav_mesh_free(r);
    nav_mesh_free(m);

    /* Random meshes round-trip byte for byte. */
    for (uint32_t seed = 1; seed <= 8; seed++) {
        fx_random_opts o = opts_for(seed);
        m = fx_random(seed, &o);
        ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
        ck_assert_int_eq(nav_mesh_deserialize(blob, len, &r, &err), NAV_OK);
        assert_same_mesh(m, r);
        ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_LOADED);
        ck_assert_uint_gt(nav_corner_edge_count(r->cgraph), 0);
        ck_assert_int_eq(nav_mesh_serialize(r, &blob2, &len2), NAV_OK);
        ck_assert(len == len2 && memcmp(blob, blob2, len) == 0);
        free(blob);
        free(blob2);
        nav_mesh_free(r);
        nav_mesh_free(m);
    }
}
END_TEST

static void put_crc_at(uint8_t *blob, size_t end) {
    uint32_t c = nav_crc32(blob, end);
    for (int i = 0; i < 4; i++)
        blob[end + i] = (uint8_t)(c >> (8 * i));
}

static void put_crc(uint8_t *blob, size_t len) {
    put_crc_at(blob, len - 4);
}

/* Where a version 3 blob of m splits: the mesh fields (input form, then the
   built section) end at *mesh_end (its CRC follows), the corner graph
   section runs from *section to the end (20 bytes of framing around the
   graph's stored form). */
static void blob_parts(const nav_mesh *m, size_t len, size_t *mesh_end, size_t *section) {
    *section = len - 20 - nav_corner_save(m->cgraph, NULL);
    *mesh_end = *section - 4;
}

START_TEST(test_serialize_corrupt) {
    /* The standard check value of CRC-32 (IEEE): crc32("123456789"). */
    ck_assert_uint_eq(nav_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
    nav_mesh *m = bridge_with_links_and_detail();
    uint8_t *blob;
    size_t len, mesh_end, section;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    blob_parts(m, len, &mesh_end, &section);
    ck_assert(memcmp(blob + section, "CGRF", 4) == 0);
    nav_mesh_free(m);
    nav_mesh *r = (nav_mesh *)0x1;
    nav_error err;
    uint8_t *copy = malloc(len);
    /* Every single flipped byte of the mesh fields or their CRC is caught
       (the CRC or the magic); one in the graph section only costs a
       rebuild of the graph. */
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, blob, len);
        copy[i] ^= 0x5A;
        nav_status st = nav_mesh_deserialize(copy, len, &r, &err);
        if (i < section) {
            ck_assert_int_eq(st, NAV_E_CORRUPT);
            ck_assert_ptr_null(r);
        } else {
            ck_assert_int_eq(st, NAV_OK);
            ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
            nav_mesh_free(r);
        }
    }
    /* Every truncation: in the mesh fields fatal, in the section a rebuild. */
    for (size_t n = 0; n < len; n++) {
        nav_status st = nav_mesh_deserialize(blob, n, &r, &err);
        ck_assert_int_eq(st, n < section ? NAV_E_CORRUPT : NAV_OK);
        if (st == NAV_OK) {
            ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
            nav_mesh_free(r);
        }
    }
    /* Wrong magic / version with a valid CRC. */
    memcpy(copy, blob, len);
    copy[0] = 'X';
    put_crc(copy, len);
    ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_E_CORRUPT);
    memcpy(copy, blob, len);
    copy[4] = 4;
    put_crc_at(copy, mesh_end);
    ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_E_CORRUPT);
    ck_assert_msg(strstr(err.message, "version 4") != NULL, "%s", err.message);
    /* Random damage to the mesh fields with their CRC fixed up: must fail
       cleanly or rebuild a valid mesh, never read out of bounds (ASan
       watches); the graph section no longer matches the mesh's CRC then. */
    uint32_t rng = 12345;
    for (int t = 0; t < 3000; t++) {
        memcpy(copy, blob, len);
        int flips = 1 + (int)(fx_rand(&rng) % 4);
        for (int f = 0; f < flips; f++)
            copy[8 + fx_rand(&rng) % (mesh_end - 8)] = (uint8_t)fx_rand(&rng);
        put_crc_at(copy, mesh_end);
        nav_status st = nav_mesh_deserialize(copy, len, &r, &err);
        ck_assert(st == NAV_OK || st == NAV_E_CORRUPT);
        nav_mesh_free(st == NAV_OK ? r : NULL);
    }
    /* A count field forged huge does not allocate or read past the end. */
    memcpy(copy, blob, len);
    copy[8] = copy[9] = copy[10] = copy[11] = 0xFF;
    put_crc(copy, len);
    ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_E_CORRUPT);
    free(copy);
    free(blob);
}
END_TEST

/*
 * The stored corner graph on a mesh with many corners: intact it is
 * loaded (not rebuilt); damaged it is detected by the section's CRC and
 * rebuilt, giving the same graph; damaged with the CRC fixed up (the
 * stored form's own checks then decide) the load is memory-safe and ends
 * with a graph either way; a version 1 blob (no section) builds one.
 */
START_TEST(test_serialize_graph_section) {
    fx_random_opts o = fx_random_defaults();
    o.width = o.height = 16;
    o.hole_ratio = 0.25f;
    nav_mesh *m = fx_random(3, &o);
    ck_assert_uint_gt(nav_corner_node_count(m->cgraph), 20);
    uint8_t *blob;
    size_t len, mesh_end, section;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    blob_parts(m, len, &mesh_end, &section);
    nav_mesh *r = NULL;
    nav_error err;
    ck_assert_int_eq(nav_mesh_deserialize(blob, len, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_LOADED);
    nav_mesh_free(r);
    uint8_t *copy = malloc(len);
    uint32_t rng = 4242;
    for (int t = 0; t < 200; t++) {
        memcpy(copy, blob, len);
        copy[section + 16 + fx_rand(&rng) % (len - section - 20)] ^= (uint8_t)(1 + t % 255);
        ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_OK);
        ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
        ck_assert_uint_eq(nav_corner_edge_count(r->cgraph), nav_corner_edge_count(m->cgraph));
        nav_mesh_free(r);
        put_crc(copy, len);
        ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_OK);
        ck_assert(nav_mesh_graph_origin(r) == NAV_GRAPH_LOADED ||
                  nav_mesh_graph_origin(r) == NAV_GRAPH_REBUILT);
        ck_assert_ptr_nonnull(r->cgraph);
        nav_mesh_free(r);
    }
    /* the section of another mesh (same size, other CRC) is not taken */
    memcpy(copy, blob, len);
    copy[section + 8] ^= 1; /* the bound mesh CRC */
    put_crc(copy, len);
    ck_assert_int_eq(nav_mesh_deserialize(copy, len, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
    nav_mesh_free(r);
    /* version 1: the input fields (no built section), version 1, the CRC last */
    size_t input_end = mesh_end - nav_snapshot_size(m) - 4;
    memcpy(copy, blob, input_end);
    copy[4] = 1;
    put_crc_at(copy, input_end);
    ck_assert_int_eq(nav_mesh_deserialize(copy, input_end + 4, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_BUILT);
    ck_assert_uint_eq(nav_corner_edge_count(r->cgraph), nav_corner_edge_count(m->cgraph));
    nav_mesh_free(r);
    free(copy);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* ---- OBJ ---- */

START_TEST(test_obj_parse) {
    const char *text = "# a square and a triangle\r\n"
                       "o thing\n"
                       "v 0 0 0\n"
                       "v 1 0 0\n"
                       "vn 0 1 0\n"
                       "vt 0.5 0.5\n"
                       "v 1 0 1\r\n"
                       "v 0 0 1\n"
                       "f 1/1/1 2//1 3/2 -1\n"
                       "v 2 0 0\n"
                       "f -3 -4 -1 # trailing comment\n"
                       "usemtl x\n";
    nav_obj obj;
    nav_error err;
    ck_assert_msg(nav_obj_parse(text, strlen(text), &obj, &err) == NAV_OK, "%s", err.message);
    ck_assert_uint_eq(obj.nverts, 5);
    ck_assert_uint_eq(obj.npolys, 2);
    /* "-1" on line 9 is the 4th vertex; on line 11, -3 -4 -1 are 3, 2, 5
       (1-based) with 5 vertices defined. */
    static const uint32_t want[7] = {0, 1, 2, 3, 2, 1, 4};
    ck_assert_uint_eq(obj.poly_start[2], 7);
    for (int i = 0; i < 7; i++)
        ck_assert_uint_eq(obj.poly_verts[i], want[i]);
    nav_mesh_input in;
    nav_obj_as_input(&obj, &in);
    nav_mesh *m = NULL;
    ck_assert_int_eq(nav_mesh_build(&in, NULL, &m, &err), NAV_OK);
    /* square 1 + triangle (1,0)(1,1)(2,0) 0.5 */
    ck_assert_double_eq_tol(nav_mesh_area(m), 1.5, 1e-9);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    nav_mesh_free(m);
    nav_obj_free(&obj);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 2 5\n", "line 4: face index 5 is out of range"},
        {"v 0 0 0\nv 1 0 0\nv 1 0 1\n\nf 0 1 2\n", "line 5: face index 0 is out of range"},
        {"v 0 0 0\nv 1 0 0\nv 1 0 1\nf -4 1 2\n", "line 4: face index -4 is out of range"},
        {"v 0 0\n", "line 1: a vertex needs three numbers"},
        {"v 0 0 0\nv 1 0 0\nf 1 2\n", "line 3: a face needs at least 3 vertices"},
        {"v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 2 x\n", "line 4: a face index is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(nav_obj_parse(bad[i].text, strlen(bad[i].text), &obj, &err),
                         NAV_E_INVALID_MESH);
        ck_assert_msg(strstr(err.message, bad[i].msg) != NULL, "'%s' lacks '%s'", err.message,
                      bad[i].msg);
        ck_assert_ptr_null(obj.verts);
    }
    /* Not NUL-terminated: only len bytes are read. */
    char raw[8] = {'v', ' ', '1', ' ', '2', ' ', '3', '7'};
    ck_assert_int_eq(nav_obj_parse(raw, 7, &obj, &err), NAV_OK);
    ck_assert(obj.nverts == 1 && obj.verts[2] == 3.0f);
    nav_obj_free(&obj);
}
END_TEST

START_TEST(test_obj_roundtrip) {
    nav_mesh *srcs[3] = {fx_bridge(), fx_square_with_hole(), NULL};
    fx_random_opts o = opts_for(3);
    o.cell = 0.3f; /* coordinates that are not exact in binary */
    srcs[2] = fx_random(3, &o);
    for (int i = 0; i < 3; i++) {
        nav_mesh *m = srcs[i];
        char *text;
        size_t len;
        ck_assert_int_eq(nav_mesh_to_obj(m, &text, &len), NAV_OK);
        ck_assert_uint_eq(strlen(text), len);
        nav_obj obj;
        nav_error err;
        ck_assert_int_eq(nav_obj_parse(text, len, &obj, &err), NAV_OK);
        nav_mesh_input in;
        nav_obj_as_input(&obj, &in);
        nav_mesh *r = NULL;
        ck_assert_int_eq(nav_mesh_build(&in, NULL, &r, &err), NAV_OK);
        /* areas are not part of OBJ; compare geometry and topology */
        ck_assert_uint_eq(nav_mesh_vertex_count(m), nav_mesh_vertex_count(r));
        ck_assert(memcmp(m->verts, r->verts, m->nverts * 3 * sizeof(float)) == 0);
        ck_assert(memcmp(m->poly_verts, r->poly_verts, m->poly_start[m->npolys] * 4) == 0);
        ck_assert(memcmp(m->poly_nei, r->poly_nei, m->poly_start[m->npolys] * 4) == 0);
        ck_assert_uint_eq(nav_mesh_component_count(m), nav_mesh_component_count(r));
        nav_mesh_free(r);
        nav_obj_free(&obj);
        free(text);
        nav_mesh_free(m);
    }
}
END_TEST

extern Suite *nav_mesh_suite(void);
Suite *nav_mesh_suite(void) {
    Suite *s = suite_create("nav_mesh");
    TCase *tc = tcase_create("build");
    tcase_add_test(tc, test_status_text);
    tcase_add_test(tc, test_square_with_hole);
    tcase_add_test(tc, test_l_corridor);
    tcase_add_test(tc, test_two_islands);
    tcase_add_test(tc, test_u_corridor);
    tcase_add_test(tc, test_bridge);
    tcase_add_test(tc, test_weld);
    tcase_add_test(tc, test_winding);
    tcase_add_test(tc, test_invalid_cases);
    tcase_add_test(tc, test_invalid_detail);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_height_slope);
    tcase_add_test(tc, test_height_detail);
    tcase_add_test(tc, test_links);
    tcase_add_test(tc, test_reachable_chain);
    tcase_add_test(tc, test_reachable_fallback);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("properties");
    tcase_add_test(tp, test_query_box_vs_brute);
    tcase_add_test(tp, test_nearest_vs_brute);
    tcase_add_test(tp, test_random_properties);
    suite_add_tcase(s, tp);
    TCase *ts = tcase_create("serialize");
    tcase_add_test(ts, test_serialize_roundtrip);
    tcase_add_test(ts, test_serialize_corrupt);
    tcase_add_test(ts, test_serialize_graph_section);
    tcase_add_test(ts, test_obj_parse);
    tcase_add_test(ts, test_obj_roundtrip);
    suite_add_tcase(s, ts);
    return s;
}
