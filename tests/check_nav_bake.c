/*
 * check_nav_bake: the baker on levels built by hand, with expected values
 * derived by hand from the grid rules (cell 0.3 m, cell height 0.2 m):
 * - a level spanning 9 m is 30 cells; the outermost cells are ledges (a
 *   drop into nothing), then erosion by radius 0.6 m (2 cells) removes 2
 *   more along each edge (the first has distance 0, the next 2, the third
 *   4 = 2 x 2 cells: kept), leaving 24 x 24 cells = 7.2 m x 7.2 m =
 *   51.84 m^2 from x = z = 0.9 to 8.1;
 * - a floor at y = 0 (the level's lowest point) is one cell high: span tops
 *   round up, so polygons sit at y = 0.2;
 * - a wall gap of k cells between faces at cell centres leaves k - 1 open
 *   cells, whose middle is open after erosion by rc = ceil(r / 0.3) cells
 *   exactly when k - 1 >= 2 rc + 1. So a path for radius r passes a gap of
 *   2r - cs never, and one of 2r + 2cs always; none passes a gap < 2r.
 * Also: settings validation messages, profiles sharing heightfields (and
 * twins, profiles whose radius rounds to the same cells), progress, cancellation, limits, an empty
 * level, tiles and threads.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake.h"
#include "nav/nav_internal.h"
#include "nav/nav_query.h"

/* ---- a tiny level builder: floors and boxes ---- */
typedef struct lvb {
    float v[3 * 4096];
    uint32_t t[3 * 4096];
    uint32_t nv, nt;
} lvb;

static uint32_t lvb_v(lvb *b, float x, float y, float z) {
    b->v[3 * b->nv] = x;
    b->v[3 * b->nv + 1] = y;
    b->v[3 * b->nv + 2] = z;
    return b->nv++;
}

/* Quad a b c d, split a-b-c, a-c-d (winding as given). */
static void lvb_quad(lvb *b, uint32_t a, uint32_t c1, uint32_t c2, uint32_t d) {
    uint32_t q[6] = {a, c1, c2, a, c2, d};
    memcpy(&b->t[3 * b->nt], q, sizeof q);
    b->nt += 2;
}

/* Upward-facing horizontal rectangle at height y. */
static void lvb_floor(lvb *b, float x0, float z0, float x1, float z1, float y) {
    uint32_t a = lvb_v(b, x0, y, z0), c = lvb_v(b, x1, y, z0), d = lvb_v(b, x1, y, z1),
             e = lvb_v(b, x0, y, z1);
    /* (c - a) x (e - a) has y = -(x1-x0)(z1-z0) < 0; the other order faces up */
    lvb_quad(b, a, e, d, c);
}

/* Closed box (outward faces); its top faces up. */
static void lvb_box(lvb *b, float x0, float y0, float z0, float x1, float y1, float z1) {
    uint32_t v[8];
    for (int i = 0; i < 8; i++)
        v[i] = lvb_v(b, i & 1 ? x1 : x0, i & 2 ? y1 : y0, i & 4 ? z1 : z0);
    lvb_quad(b, v[2], v[6], v[7], v[3]); /* top */
    lvb_quad(b, v[0], v[1], v[5], v[4]); /* bottom */
    lvb_quad(b, v[0], v[2], v[3], v[1]); /* -z */
    lvb_quad(b, v[4], v[5], v[7], v[6]); /* +z */
    lvb_quad(b, v[0], v[4], v[6], v[2]); /* -x */
    lvb_quad(b, v[1], v[3], v[7], v[5]); /* +x */
}

static nav_level *lvb_build(const lvb *b) {
    nav_level *lv = NULL;
    nav_error e = {0};
    nav_status st = nav_level_build(b->v, b->nv, b->t, b->nt, 0, &lv, &e);
    ck_assert_msg(st == NAV_OK, "%s", e.message);
    return lv;
}

static nav_mesh *bake1(const nav_level *lv, const nav_bake_settings *s, nav_bake_report *r) {
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *m = NULL;
    nav_error e = {0};
    nav_status st = nav_bake(lv, s, &p, 1, NULL, NULL, NULL, &m, r, &e);
    ck_assert_msg(st == NAV_OK, "%s", e.message);
    return m;
}

/* ---- validation ---- */
static void expect_bad(const nav_bake_settings *s, const nav_bake_profile *p, uint32_t n,
                       const char *text) {
    nav_error e = {0};
    ck_assert_int_eq(nav_bake_check(s, p, n, &e), NAV_E_INVALID_ARG);
    ck_assert_msg(strstr(e.message, text) != NULL, "'%s' does not name '%s'", e.message, text);
}

START_TEST(check_names_fields) {
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    nav_error e = {0};
    ck_assert_int_eq(nav_bake_check(&s, &p, 1, &e), NAV_OK);
    s.cell_size = 0;
    expect_bad(&s, &p, 1, "cell_size must be a finite number > 0");
    s.cell_size = NAN;
    expect_bad(&s, &p, 1, "cell_size");
    s = nav_bake_settings_default();
    s.cell_height = -1;
    expect_bad(&s, &p, 1, "cell_height");
    s = nav_bake_settings_default();
    s.tile_size = 3;
    expect_bad(&s, &p, 1, "tile_size");
    s = nav_bake_settings_default();
    s.max_verts_per_poly = 2;
    expect_bad(&s, &p, 1, "max_verts_per_poly");
    s = nav_bake_settings_default();
    s.partition = (nav_bake_partition)7;
    expect_bad(&s, &p, 1, "partition");
    s = nav_bake_settings_default();
    s.edge_max_error = INFINITY;
    expect_bad(&s, &p, 1, "edge_max_error");
    s = nav_bake_settings_default();
    p.radius = -0.1f;
    expect_bad(&s, &p, 1, "profiles.default.radius");
    p = nav_bake_profile_default();
    p.max_slope = 90;
    expect_bad(&s, &p, 1, "profiles.default.max_slope");
    p = nav_bake_profile_default();
    p.height = 0;
    expect_bad(&s, &p, 1, "profiles.default.height");
    p = nav_bake_profile_default();
    p.link_drop = -1;
    expect_bad(&s, &p, 1, "profiles.default.links.drop");
    nav_bake_profile two[2] = {nav_bake_profile_default(), nav_bake_profile_default()};
    expect_bad(&s, two, 2, "profiles.default is given twice");
    expect_bad(&s, two, 0, "profiles must have 1 to");
    nav_bake_volume v = {.xz = {{0, 0}, {2, 0}, {0, 2}, {2, 2}}, .nverts = 4, .ymin = 0, .ymax = 1};
    s.volumes = &v;
    s.nvolumes = 1;
    expect_bad(&s, &p, 1, "area_volumes[0].xz is not convex");
    v.nverts = 3;
    v.area = 64;
    expect_bad(&s, &p, 1, "area_volumes[0].area");
}
END_TEST

/* ---- the flat square, by hand ---- */
START_TEST(flat_square_by_hand) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 9, 9, 0);
    nav_level *lv = lvb_build(b);
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_report r;
    nav_mesh *m = bake1(lv, &s, &r);
    ck_assert_uint_eq(r.cells, 30 * 30);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert_double_eq_tol(nav_mesh_area(m), 7.2 * 7.2, 1e-3);
    float bmin[3], bmax[3];
    nav_mesh_bounds(m, bmin, bmax);
    ck_assert_float_eq_tol(bmin[0], 0.9f, 1e-4f);
    ck_assert_float_eq_tol(bmin[2], 0.9f, 1e-4f);
    ck_assert_float_eq_tol(bmax[0], 8.1f, 1e-4f);
    ck_assert_float_eq_tol(bmax[2], 8.1f, 1e-4f);
    ck_assert_float_eq_tol(bmin[1], 0.2f, 1e-5f);
    ck_assert_float_eq_tol(bmax[1], 0.2f, 1e-5f);
    /* a convex square needs one polygon of at most 6 vertices */
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 1);
    nav_mesh_free(m);
    nav_level_free(lv);
    free(b);
}
END_TEST

/* Area volumes on the same square: x, z in [3, 6] holds the centres of
   cells 10..19 (3.15 .. 5.85), a 3 m x 3 m patch well inside the eroded
   square. Area 5 marks 9 m^2 of polygons; area 0 cuts a 9 m^2 hole (after
   erosion, as Recast does: no margin around it). */
START_TEST(area_volumes_by_hand) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 9, 9, 0);
    nav_level *lv = lvb_build(b);
    nav_bake_volume v = {
        .xz = {{3, 3}, {6, 3}, {6, 6}, {3, 6}}, .nverts = 4, .ymin = -1, .ymax = 1, .area = 5};
    nav_bake_settings s = nav_bake_settings_default();
    s.volumes = &v;
    s.nvolumes = 1;
    nav_mesh *m = bake1(lv, &s, NULL);
    double a5 = 0, other = 0;
    for (uint32_t p = 0; p < nav_mesh_polygon_count(m); p++) {
        if (nav_mesh_poly_area(m, p) == 5)
            a5 += nav_mesh_poly_area_xz(m, p);
        else
            other += nav_mesh_poly_area_xz(m, p);
    }
    ck_assert_double_eq_tol(a5, 9.0, 1e-3);
    ck_assert_double_eq_tol(a5 + other, 51.84, 1e-3);
    nav_mesh_free(m);
    v.area = 0;
    m = bake1(lv, &s, NULL);
    ck_assert_double_eq_tol(nav_mesh_area(m), 51.84 - 9.0, 1e-3);
    nav_mesh_free(m);
    /* a volume above the floor (y 1..2) changes nothing */
    v.ymin = 1;
    v.ymax = 2;
    m = bake1(lv, &s, NULL);
    ck_assert_double_eq_tol(nav_mesh_area(m), 51.84, 1e-3);
    nav_mesh_free(m);
    nav_level_free(lv);
    free(b);
}
END_TEST

/* ---- the wall gap ---- */
static float cc(int k) { /* centre of cell k */
    return ((float)k + 0.5f) * 0.3f;
}

/* Floor [0,18] x [0,12]; a wall x in [c(30), c(33)] across all z except a
   gap between faces at z = c(18) and z = c(18 + k). */
static nav_level *gap_level(int k) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 18, 12, 0);
    lvb_box(b, cc(30), 0, -1, cc(33), 3, cc(18));
    lvb_box(b, cc(30), 0, cc(18 + k), cc(33), 3, 13);
    nav_level *lv = lvb_build(b);
    free(b);
    return lv;
}

START_TEST(gap_never_narrower_than_2r) {
    const float radii[3] = {0.3f, 0.6f, 0.9f};
    nav_bake_profile p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = nav_bake_profile_default();
        snprintf(p[i].name, sizeof p[i].name, "r%d", i);
        p[i].radius = radii[i];
    }
    nav_query *q = nav_query_new(4096);
    float corners[3 * 256];
    for (int k = 1; k <= 9; k++) {
        nav_level *lv = gap_level(k);
        nav_bake_settings s = nav_bake_settings_default();
        nav_mesh *m[3];
        nav_bake_report r;
        nav_error e = {0};
        ck_assert_int_eq(nav_bake(lv, &s, p, 3, NULL, NULL, NULL, m, &r, &e), NAV_OK);
        ck_assert_uint_eq(r.heightfields, 1); /* radius-only profiles share */
        for (int i = 0; i < 3; i++) {
            int rc = (int)ceilf(radii[i] / 0.3f - 1e-4f);
            bool expect_open = k - 1 >= 2 * rc + 1;
            nav_path_request req = {
                .start = {3, 0.2f, 6}, .end = {15, 0.2f, 6}, .extents = {2, 4, 2}};
            nav_path_result res = {.corners = corners, .max_corners = 256};
            ck_assert_int_eq(nav_find_path(q, m[i], &req, &res), NAV_OK);
            bool open = (res.flags & NAV_PATH_PARTIAL_UNREACHABLE) == 0;
            ck_assert_msg(open == expect_open, "gap %d cells, radius %.1f: open %d, expected %d", k,
                          radii[i], open, expect_open);
            if (open) {
                /* the gap is at least 2r wide and the path keeps r from both faces */
                ck_assert(k * 0.3f >= 2 * radii[i] - 1e-4f);
                for (uint32_t c = 0; c < res.ncorners; c++) {
                    const float *pc = &corners[3 * c];
                    if (pc[0] < cc(30) || pc[0] > cc(33))
                        continue;
                    ck_assert_float_ge(pc[2] - cc(18), radii[i] - 1e-3f);
                    ck_assert_float_ge(cc(18 + k) - pc[2], radii[i] - 1e-3f);
                }
            }
            nav_mesh_free(m[i]);
        }
        nav_level_free(lv);
    }
    nav_query_free(q);
}
END_TEST

/* A box rotated by `a` (radians) about (cx, cz): half sizes hx (across) and
   hz (along), height h. */
static void lvb_rbox(lvb *b, float cx, float cz, float hx, float hz, float h, float a) {
    uint32_t v[8];
    float c = cosf(a), s = sinf(a);
    for (int i = 0; i < 8; i++) {
        float lx = i & 1 ? hx : -hx, lz = i & 4 ? hz : -hz;
        v[i] = lvb_v(b, cx + lx * c - lz * s, i & 2 ? h : 0, cz + lx * s + lz * c);
    }
    /* winding as lvb_box's for an unrotated box (rotation keeps it) */
    lvb_quad(b, v[2], v[6], v[7], v[3]);
    lvb_quad(b, v[0], v[1], v[5], v[4]);
    lvb_quad(b, v[0], v[2], v[3], v[1]);
    lvb_quad(b, v[4], v[5], v[7], v[6]);
    lvb_quad(b, v[0], v[4], v[6], v[2]);
    lvb_quad(b, v[1], v[3], v[7], v[5]);
}

/* The same safety at any angle: a wall through the middle of a 20 m floor,
   turned by 0..90 degrees, with a gap of 2r - cs: no path crosses it for
   r = 0.6 (the chamfer erosion is within a cell of the true distance in
   every direction). */
START_TEST(gap_blocked_at_any_angle) {
    const float r = 0.6f, gap = 2 * r - 0.3f;
    nav_query *q = nav_query_new(8192);
    float corners[3 * 256];
    for (int deg = 0; deg <= 90; deg += 15) {
        float a = (float)deg * 3.14159265f / 180.0f;
        lvb *b = calloc(1, sizeof *b);
        lvb_floor(b, 0, 0, 20, 20, 0);
        /* the wall runs along the rotated z axis through (10, 10); its two
           halves leave `gap` between them at the centre */
        float half = 8.0f, hz = (half * 2 - gap) / 4;
        float c = cosf(a), s = sinf(a);
        float off = gap / 2 + hz;
        lvb_rbox(b, 10 - off * s, 10 + off * c, 0.3f, hz, 3, a);
        lvb_rbox(b, 10 + off * s, 10 - off * c, 0.3f, hz, 3, a);
        /* extend both walls to the floor's edge with long boxes beyond */
        lvb_rbox(b, 10 - (half + 5) * s, 10 + (half + 5) * c, 0.3f, 5.5f, 3, a);
        lvb_rbox(b, 10 + (half + 5) * s, 10 - (half + 5) * c, 0.3f, 5.5f, 3, a);
        nav_level *lv = lvb_build(b);
        free(b);
        nav_bake_settings set = nav_bake_settings_default();
        nav_bake_profile p = nav_bake_profile_default();
        p.radius = r;
        nav_mesh *m = NULL;
        nav_error e = {0};
        ck_assert_int_eq(nav_bake(lv, &set, &p, 1, NULL, NULL, NULL, &m, NULL, &e), NAV_OK);
        /* start and end 4 m either side of the wall, across its normal */
        nav_path_request req = {.start = {10 - 4 * c, 0.2f, 10 - 4 * s},
                                .end = {10 + 4 * c, 0.2f, 10 + 4 * s},
                                .extents = {2, 4, 2}};
        nav_path_result res = {.corners = corners, .max_corners = 256};
        ck_assert_int_eq(nav_find_path(q, m, &req, &res), NAV_OK);
        ck_assert_msg(res.flags & NAV_PATH_PARTIAL_UNREACHABLE,
                      "%d degrees: a %.2f m gap let a %.1f m agent through", deg, gap, r);
        nav_mesh_free(m);
        nav_level_free(lv);
    }
    nav_query_free(q);
}
END_TEST

/* ---- sharing, progress, cancellation, limits, empty ---- */
START_TEST(profiles_share_heightfields) {
    nav_level *lv = gap_level(8);
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p[3] = {nav_bake_profile_default(), nav_bake_profile_default(),
                             nav_bake_profile_default()};
    snprintf(p[1].name, sizeof p[1].name, "wide");
    p[1].radius = 1.2f;
    snprintf(p[2].name, sizeof p[2].name, "tall");
    p[2].height = 3.0f;
    nav_mesh *m[3];
    nav_bake_report r;
    nav_error e = {0};
    ck_assert_int_eq(nav_bake(lv, &s, p, 3, NULL, NULL, NULL, m, &r, &e), NAV_OK);
    ck_assert_uint_eq(r.heightfields, 2); /* default + wide share; tall has its own */
    ck_assert_uint_eq(r.nprofiles, 3);
    /* a wider agent has less room */
    ck_assert(nav_mesh_area(m[1]) < nav_mesh_area(m[0]));
    /* on two threads the profiles run side by side: the same bytes */
    s.threads = 2;
    nav_mesh *m2[3];
    ck_assert_int_eq(nav_bake(lv, &s, p, 3, NULL, NULL, NULL, m2, NULL, &e), NAV_OK);
    for (int i = 0; i < 3; i++) {
        size_t l1, l2;
        uint8_t *b1 = NULL, *b2 = NULL;
        ck_assert_int_eq(nav_mesh_serialize(m[i], &b1, &l1), NAV_OK);
        ck_assert_int_eq(nav_mesh_serialize(m2[i], &b2, &l2), NAV_OK);
        ck_assert(l1 == l2 && memcmp(b1, b2, l1) == 0);
        free(b1);
        free(b2);
        nav_mesh_free(m2[i]);
    }
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(r.polygons[i], nav_mesh_polygon_count(m[i]));
        nav_mesh_free(m[i]);
    }
    nav_level_free(lv);
}
END_TEST

/* Serialized bytes of a mesh (for byte-for-byte comparisons). */
static uint8_t *mesh_bytes(const nav_mesh *m, size_t *len) {
    uint8_t *b = NULL;
    ck_assert_int_eq(nav_mesh_serialize(m, &b, len), NAV_OK);
    return b;
}

/* Profiles whose radius rounds to the same cells (0.4 and 0.6 m are both 2
   cells of 0.3 m) bake their stages once: every mesh must still be, byte
   for byte, the mesh of that profile baked alone; a profile with links, or
   another radius, is never a twin. One tile and 16-cell tiles, 1 and 2
   threads. */
START_TEST(twin_profiles_bake_as_alone) {
    nav_level *lv = gap_level(8);
    nav_bake_profile p[4] = {nav_bake_profile_default(), nav_bake_profile_default(),
                             nav_bake_profile_default(), nav_bake_profile_default()};
    snprintf(p[0].name, sizeof p[0].name, "wide");
    p[0].radius = 0.9f;
    snprintf(p[2].name, sizeof p[2].name, "small");
    p[2].radius = 0.4f;
    snprintf(p[3].name, sizeof p[3].name, "small_links");
    p[3].radius = 0.4f;
    p[3].link_drop = 2.0f;
    for (uint32_t ts = 0; ts <= 16; ts += 16)
        for (uint32_t th = 1; th <= 2; th++) {
            nav_bake_settings s = nav_bake_settings_default();
            s.tile_size = ts;
            s.threads = th;
            nav_mesh *m[4];
            nav_bake_report r;
            nav_error e = {0};
            ck_assert_int_eq(nav_bake(lv, &s, p, 4, NULL, NULL, NULL, m, &r, &e), NAV_OK);
            ck_assert_uint_eq(r.heightfields, 1);
            for (int i = 0; i < 4; i++) {
                nav_mesh *alone;
                ck_assert_int_eq(nav_bake(lv, &s, &p[i], 1, NULL, NULL, NULL, &alone, NULL, &e),
                                 NAV_OK);
                size_t l1, l2;
                uint8_t *b1 = mesh_bytes(m[i], &l1), *b2 = mesh_bytes(alone, &l2);
                ck_assert_msg(l1 == l2 && memcmp(b1, b2, l1) == 0,
                              "profile %s differs from its bake alone (tile %u, %u threads)",
                              p[i].name, ts, th);
                ck_assert_uint_eq(r.polygons[i], nav_mesh_polygon_count(alone));
                free(b1);
                free(b2);
                nav_mesh_free(alone);
            }
            /* the twins really are one mesh; the wider agent a smaller one */
            ck_assert_double_eq_tol(nav_mesh_area(m[2]), nav_mesh_area(m[1]), 1e-9);
            ck_assert(nav_mesh_area(m[0]) < nav_mesh_area(m[1]));
            for (int i = 0; i < 4; i++)
                nav_mesh_free(m[i]);
        }
    nav_level_free(lv);
}
END_TEST

typedef struct prog {
    float last;
    int calls, bad, cancel_at;
    char stages[512];
} prog;

static int on_progress(void *ctx, const char *stage, float p) {
    prog *g = ctx;
    if (p < g->last || p < 0 || p > 1 || !stage || !*stage)
        g->bad++;
    g->last = p;
    g->calls++;
    if (!strstr(g->stages, stage) && strlen(g->stages) + strlen(stage) + 2 < sizeof g->stages) {
        strcat(g->stages, stage);
        strcat(g->stages, " ");
    }
    return g->cancel_at && g->calls >= g->cancel_at;
}

START_TEST(progress_monotone_and_cancel) {
    nav_level *lv = gap_level(8);
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *m = NULL;
    nav_error e = {0};
    prog g = {0};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, on_progress, &g, &m, NULL, &e), NAV_OK);
    ck_assert_int_eq(g.bad, 0);
    ck_assert_float_eq(g.last, 1.0f);
    ck_assert_int_gt(g.calls, 5);
    ck_assert_ptr_nonnull(strstr(g.stages, "rasterize"));
    ck_assert_ptr_nonnull(strstr(g.stages, "regions"));
    ck_assert_ptr_nonnull(strstr(g.stages, "detail"));
    nav_mesh_free(m);
    for (int at = 1; at <= 4; at++) {
        prog c = {.cancel_at = at};
        m = (nav_mesh *)1;
        ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, on_progress, &c, &m, NULL, &e),
                         NAV_E_CANCELLED);
        ck_assert_ptr_null(m);
        ck_assert_ptr_nonnull(strstr(e.message, "cancelled"));
    }
    nav_level_free(lv);
}
END_TEST

/* A long stage still hears the caller: rasterizing one 300 m square at
   0.1 m cells (9,000,000 columns) takes far longer than the 10 ms poll
   interval, so the callback is asked again during the stage (progress
   still 0, stage still "rasterize") and can cancel there. */
typedef struct inpoll {
    int calls, in_stage, saw_filter;
} inpoll;

static int cancel_in_stage(void *ctx, const char *stage, float p) {
    inpoll *g = ctx;
    g->calls++;
    if (strcmp(stage, "rasterize") != 0)
        g->saw_filter = 1;
    if (g->calls >= 2 && p == 0 && strcmp(stage, "rasterize") == 0) {
        g->in_stage = 1;
        return 1;
    }
    return 0;
}

START_TEST(cancel_inside_a_long_stage) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 300, 300, 0);
    nav_level *lv = lvb_build(b);
    free(b);
    nav_bake_settings s = nav_bake_settings_default();
    s.cell_size = 0.1f;
    s.cell_height = 0.1f;
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *m = NULL;
    nav_error e = {0};
    inpoll g = {0};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, cancel_in_stage, &g, &m, NULL, &e),
                     NAV_E_CANCELLED);
    ck_assert_int_eq(g.in_stage, 1);
    ck_assert_int_eq(g.saw_filter, 0); /* cancelled before the stage ended */
    ck_assert_ptr_null(m);
    nav_level_free(lv);
}
END_TEST

START_TEST(limits_and_empty) {
    nav_level *lv = gap_level(8);
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *m = NULL;
    nav_error e = {0};
    nav_bake_limits lim = {.max_cells = 1000};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, &lim, NULL, NULL, &m, NULL, &e), NAV_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(e.message, "cells"));
    ck_assert_ptr_null(m);
    lim = (nav_bake_limits){.max_spans = 100};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, &lim, NULL, NULL, &m, NULL, &e), NAV_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(e.message, "spans"));
    lim = (nav_bake_limits){.max_memory = 10000}; /* under the first estimate */
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, &lim, NULL, NULL, &m, NULL, &e), NAV_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(e.message, "bytes"));
    /* 60 x 47 cells (the walls reach z = -1 .. 13): the heightfield
       (2,820 columns of 4 bytes and a span pool grown once to 4,868 spans
       of 12 bytes: 69,696 bytes) fits in 80,000; the compact heightfield
       and a profile's arrays next to it do not */
    lim = (nav_bake_limits){.max_memory = 80000};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, &lim, NULL, NULL, &m, NULL, &e), NAV_E_LIMIT);
    ck_assert_msg(strstr(e.message, "bytes at once") != NULL, "%s", e.message);
    lim = (nav_bake_limits){.max_memory = 1 << 20, .max_cells = 2820, .max_spans = 100000};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, &lim, NULL, NULL, &m, NULL, &e), NAV_OK);
    nav_mesh_free(m);
    m = NULL;
    nav_level_free(lv);
    /* 20 km high at 0.2 m: 100,000 cells, more than a span's 16 bits */
    lvb *tall = calloc(1, sizeof *tall);
    lvb_floor(tall, 0, 0, 5, 5, 0);
    lvb_floor(tall, 0, 0, 5, 5, 20000);
    lv = lvb_build(tall);
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, NULL, NULL, &m, NULL, &e), NAV_E_LIMIT);
    ck_assert_msg(strstr(e.message, "cells high") != NULL, "%s", e.message);
    nav_level_free(lv);
    free(tall);
    /* a wall only: nothing faces up */
    lvb *b = calloc(1, sizeof *b);
    uint32_t a = lvb_v(b, 0, 0, 0), c = lvb_v(b, 5, 0, 0), d = lvb_v(b, 5, 3, 0),
             f = lvb_v(b, 0, 3, 0);
    lvb_quad(b, a, c, d, f);
    lv = lvb_build(b);
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, NULL, NULL, &m, NULL, &e), NAV_E_EMPTY);
    ck_assert_ptr_nonnull(strstr(e.message, "profiles.default has no walkable surface"));
    ck_assert_ptr_null(m);
    nav_level_free(lv);
    free(b);
}
END_TEST

/* ---- generated links at a known ledge ---- */
/*
 * Ground x in [0, 20], z in [0, 10] at y = 0, and a 2 m box over x in
 * [0, 10]. Grid: 67 x 33 cells from (0, 0, 0). Platform: column 33 (9.9 ..
 * 10.2, holding the face x = 10) is a ledge (2 m over the ground next to
 * it), 32 then has distance 0, 31 2, 30 4 (kept): the platform's edge is at
 * x = 31 x 0.3 = 9.3. Ground: column 34 misses its -x neighbour (10 cells
 * up), so 34, 35 are eroded and the ground's edge is at x = 36 x 0.3 =
 * 10.8. Heights: the top's spans end at ceil(2 / 0.2) + 1 (a flat span is
 * one cell) = 11 cells: 2.2; the ground's at 0.2. In z the platform spans
 * cells 3 .. 29 (the level's edge cells are ledges, then 2 eroded): 0.9 ..
 * 9.0, one straight edge of 8.1 m at x = 9.3: with spacing max(3, 4 x 0.6)
 * = 3 m it gets floor(8.1 / 3) = 2 candidates, at z = 0.9 + 8.1 / 4 =
 * 2.925 and 0.9 + 3 x 8.1 / 4 = 6.975. A link starts 0.05 m inside its
 * edge (x = 9.25) and lands on the first probe, in steps of 0.15 m from
 * x = 9.3, inside the ground: x = 10.8 (or the next step, by rounding).
 */
static nav_level *ledge_level(void) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 20, 10, 0);
    lvb_box(b, 0, 0, 0, 10, 2, 10);
    nav_level *lv = lvb_build(b);
    free(b);
    return lv;
}

static nav_mesh *bake_links(const nav_level *lv, float drop, float jump, float climb,
                            nav_bake_report *r) {
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    p.link_drop = drop;
    p.link_jump = jump;
    p.link_climb = climb;
    nav_mesh *m = NULL;
    nav_error e = {0};
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, NULL, NULL, &m, r, &e), NAV_OK);
    return m;
}

START_TEST(links_at_a_known_ledge) {
    nav_level *lv = ledge_level();
    nav_bake_report r;
    nav_mesh *m = bake_links(lv, 3, 0, 2.5f, &r);
    ck_assert_uint_eq(nav_mesh_link_count(m), 4);
    ck_assert_uint_eq(r.links[0], 4);
    int drops = 0, climbs = 0;
    for (uint32_t i = 0; i < nav_mesh_link_count(m); i++) {
        float a[3], b[3];
        nav_mesh_link_points(m, i, a, b);
        const char *kind = nav_mesh_link_kind(m, i);
        const float *top = a, *low = b;
        if (strcmp(kind, "drop") == 0) {
            drops++;
        } else {
            ck_assert_str_eq(kind, "climb");
            climbs++;
            top = b;
            low = a;
        }
        ck_assert_float_eq_tol(top[0], 9.25f, 1e-3f);
        ck_assert_float_eq_tol(top[1], 2.2f, 1e-3f);
        ck_assert_float_ge(low[0], 10.8f - 1e-3f);
        ck_assert_float_le(low[0], 10.95f + 1e-3f);
        ck_assert_float_eq_tol(low[1], 0.2f, 1e-3f);
        ck_assert_float_eq_tol(top[2], low[2], 1e-3f); /* straight across the edge */
        ck_assert_msg(fabsf(top[2] - 2.925f) < 1e-2f || fabsf(top[2] - 6.975f) < 1e-2f,
                      "link at z = %.3f", top[2]);
    }
    ck_assert_int_eq(drops, 2);
    ck_assert_int_eq(climbs, 2);
    /* the platform is reachable from the ground only by climbing */
    nav_query *q = nav_query_new(4096);
    float corners[3 * 64];
    uint32_t links[8];
    nav_path_request req = {.start = {15, 0.2f, 5}, .end = {5, 2.2f, 5}, .extents = {2, 4, 2}};
    nav_path_result res = {.corners = corners, .max_corners = 64, .links = links, .max_links = 8};
    ck_assert_int_eq(nav_find_path(q, m, &req, &res), NAV_OK);
    ck_assert_uint_eq(res.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
    ck_assert_uint_eq(res.nlinks, 1);
    ck_assert_str_eq(nav_mesh_link_kind(m, links[0]), "climb");
    nav_mesh_free(m);
    /* limits below the 2 m fall: no drop (1.9), no climb (1.9) */
    m = bake_links(lv, 1.9f, 0, 1.9f, &r);
    ck_assert_uint_eq(nav_mesh_link_count(m), 0);
    nav_path_result res2 = {.corners = corners, .max_corners = 64};
    ck_assert_int_eq(nav_find_path(q, m, &req, &res2), NAV_OK);
    ck_assert_uint_ne(res2.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
    nav_mesh_free(m);
    nav_query_free(q);
    nav_level_free(lv);
}
END_TEST

/*
 * A jump: two floors at y = 0, x in [0, 8] and [10, 18] (z in [0, 8]),
 * with nothing between: the meshes' facing edges are 2 x 0.6 m eroded plus
 * the ledge cells away from the 2 m gap, so a 3 m jump links them and a
 * 1 m jump does not (the gap itself is 2 m).
 */
START_TEST(links_jump_a_gap) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 8, 8, 0);
    lvb_floor(b, 10, 0, 18, 8, 0);
    nav_level *lv = lvb_build(b);
    free(b);
    nav_bake_report r;
    nav_mesh *m = bake_links(lv, 0, 3, 0, &r);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1); /* joined by the jumps */
    ck_assert_uint_ge(nav_mesh_link_count(m), 2);      /* one each way at least */
    for (uint32_t i = 0; i < nav_mesh_link_count(m); i++) {
        ck_assert_str_eq(nav_mesh_link_kind(m, i), "jump");
        float a[3], c[3];
        nav_mesh_link_points(m, i, a, c);
        ck_assert(a[0] < 9 ? c[0] > 9 : c[0] < 9); /* across the gap */
        ck_assert_float_le(fabsf(a[0] - c[0]), 3 + 2 * 0.6f + 0.3f);
    }
    nav_mesh_free(m);
    m = bake_links(lv, 0, 1, 0, &r);
    ck_assert_uint_eq(nav_mesh_link_count(m), 0);
    ck_assert_uint_eq(nav_mesh_component_count(m), 2);
    nav_mesh_free(m);
    nav_level_free(lv);
}
END_TEST

/* ---- tiles and threads ---- */
static uint8_t *serialize(const nav_mesh *m, size_t *len) {
    uint8_t *bytes = NULL;
    ck_assert_int_eq(nav_mesh_serialize(m, &bytes, len), NAV_OK);
    return bytes;
}

/* Pillars on a 30 m floor: tiles of 16 cells put ~36 borders under it. */
static nav_level *pillars_level(void) {
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 30, 30, 0);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            if ((i + j) % 2 == 0)
                lvb_box(b, 3.1f + 5.3f * i, 0, 2.7f + 5.1f * j, 4.9f + 5.3f * i, 2.5f,
                        4.3f + 5.1f * j);
    nav_level *lv = lvb_build(b);
    free(b);
    return lv;
}

START_TEST(tiles_connect_and_match_single) {
    nav_level *lv = pillars_level();
    nav_bake_settings s = nav_bake_settings_default();
    nav_mesh *one = bake1(lv, &s, NULL);
    s.tile_size = 16;
    s.threads = 1;
    nav_bake_report r;
    nav_mesh *t1 = bake1(lv, &s, &r);
    ck_assert_uint_ge(r.tiles, 36);
    s.threads = 2;
    nav_mesh *t2 = bake1(lv, &s, NULL);
    /* the thread count changes nothing */
    size_t l1, l2;
    uint8_t *b1 = serialize(t1, &l1), *b2 = serialize(t2, &l2);
    ck_assert(l1 == l2 && memcmp(b1, b2, l1) == 0);
    free(b1);
    free(b2);
    ck_assert_uint_eq(nav_mesh_component_count(t1), 1);
    /* contours are simplified (1.3 cells) between different end points where
       a tile line cuts them, so the outlines differ slightly */
    ck_assert_double_eq_tol(nav_mesh_area(t1), nav_mesh_area(one), 0.03 * nav_mesh_area(one));
    /* paths across many borders: the same length as on the single tile */
    nav_query *q = nav_query_new(8192);
    float ca[3 * 256], cb[3 * 256];
    const float pts[6][3] = {{1, 0.2f, 1},     {28.5f, 0.2f, 28.5f}, {1, 0.2f, 28.5f},
                             {28.5f, 0.2f, 1}, {15, 0.2f, 1},        {15, 0.2f, 28.5f}};
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++) {
            nav_path_request req = {.extents = {2, 4, 2}, .algorithm = NAV_ALGO_OPTIMAL};
            memcpy(req.start, pts[i], sizeof req.start);
            memcpy(req.end, pts[j], sizeof req.end);
            nav_path_result ra = {.corners = ca, .max_corners = 256};
            nav_path_result rb = {.corners = cb, .max_corners = 256};
            ck_assert_int_eq(nav_find_path(q, one, &req, &ra), NAV_OK);
            ck_assert_int_eq(nav_find_path(q, t1, &req, &rb), NAV_OK);
            ck_assert_uint_eq(ra.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
            ck_assert_uint_eq(rb.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
            ck_assert_msg(fabs(ra.length - rb.length) <= 0.01 * ra.length,
                          "path %d-%d: single tile %.3f, tiles %.3f", i, j, ra.length, rb.length);
        }
    nav_query_free(q);
    /* peak memory per tile is reported and small for 16-cell tiles */
    ck_assert_uint_gt(r.peak_tile_bytes, 0);
    ck_assert_uint_lt(r.peak_tile_bytes, 1u << 20);
    nav_mesh_free(one);
    nav_mesh_free(t1);
    nav_mesh_free(t2);
    nav_level_free(lv);
}
END_TEST

START_TEST(monotone_partition_bakes_the_same_area) {
    nav_level *lv = pillars_level();
    nav_bake_settings s = nav_bake_settings_default();
    nav_mesh *w = bake1(lv, &s, NULL);
    s.partition = NAV_BAKE_MONOTONE;
    nav_mesh *m = bake1(lv, &s, NULL);
    ck_assert_uint_eq(nav_mesh_component_count(m), 1);
    ck_assert_double_eq_tol(nav_mesh_area(m), nav_mesh_area(w), 0.02 * nav_mesh_area(w));
    nav_mesh_free(w);
    nav_mesh_free(m);
    nav_level_free(lv);
}
END_TEST

/* ---- robustness: random clutter ---- */
static uint32_t rnd(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}
static float rndf(uint32_t *s, float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd(s) % 100000) / 100000.0f;
}

/* A floor with random boxes and 60 loose triangles at any angle (40 seeds
   here; 1,000 seeds with 150 triangles passed once, and 200 under ASan): every
   bake (one tile or 16-cell tiles, two profiles, links) succeeds or finds
   nothing walkable; never a mesh nav_mesh_build refuses. */
START_TEST(random_clutter_always_bakes) {
    uint32_t seed = 0x9e3779b9u ^ (uint32_t)(_i * 7919 + 1);
    lvb *b = calloc(1, sizeof *b);
    lvb_floor(b, 0, 0, 12, 12, rndf(&seed, -1, 1));
    int nbox = 3 + (int)(rnd(&seed) % 8);
    for (int i = 0; i < nbox; i++) {
        float x = rndf(&seed, 0, 11), z = rndf(&seed, 0, 11), y = rndf(&seed, -0.5f, 2);
        lvb_box(b, x, y, z, x + rndf(&seed, 0.2f, 3), y + rndf(&seed, 0.1f, 3),
                z + rndf(&seed, 0.2f, 3));
    }
    for (int i = 0; i < 60; i++) {
        uint32_t v[3];
        float cx = rndf(&seed, 0, 12), cz = rndf(&seed, 0, 12), cy = rndf(&seed, -1, 3);
        for (int k = 0; k < 3; k++)
            v[k] =
                lvb_v(b, cx + rndf(&seed, -2, 2), cy + rndf(&seed, -1, 1), cz + rndf(&seed, -2, 2));
        memcpy(&b->t[3 * b->nt], v, sizeof v);
        b->nt++;
    }
    nav_level *lv = NULL;
    nav_error e = {0};
    if (nav_level_build(b->v, b->nv, b->t, b->nt, 0, &lv, &e) != NAV_OK) {
        free(b);
        return; /* every triangle degenerate: nothing to bake */
    }
    nav_bake_profile p[2] = {nav_bake_profile_default(), nav_bake_profile_default()};
    snprintf(p[1].name, sizeof p[1].name, "small");
    p[1].radius = 0.3f;
    p[1].link_drop = 3;
    p[1].link_jump = 2;
    p[1].link_climb = 1.5f;
    for (int tiled = 0; tiled < 2; tiled++) {
        nav_bake_settings s = nav_bake_settings_default();
        s.tile_size = tiled ? 16 : 0;
        s.threads = tiled ? 2 : 1;
        s.partition = (_i & 1) ? NAV_BAKE_MONOTONE : NAV_BAKE_WATERSHED;
        nav_mesh *m[2] = {NULL, NULL};
        nav_status st = nav_bake(lv, &s, p, 2, NULL, NULL, NULL, m, NULL, &e);
        ck_assert_msg(st == NAV_OK || st == NAV_E_EMPTY, "seed %d tiled %d: %s", _i, tiled,
                      e.message);
        nav_mesh_free(m[0]);
        nav_mesh_free(m[1]);
    }
    nav_level_free(lv);
    free(b);
}
END_TEST

extern Suite *nav_bake_suite(void);
Suite *nav_bake_suite(void) {
    Suite *s = suite_create("nav_bake");
    TCase *tc = tcase_create("bake");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, check_names_fields);
    tcase_add_test(tc, flat_square_by_hand);
    tcase_add_test(tc, area_volumes_by_hand);
    tcase_add_test(tc, gap_never_narrower_than_2r);
    tcase_add_test(tc, gap_blocked_at_any_angle);
    tcase_add_test(tc, profiles_share_heightfields);
    tcase_add_test(tc, twin_profiles_bake_as_alone);
    tcase_add_test(tc, progress_monotone_and_cancel);
    tcase_add_test(tc, cancel_inside_a_long_stage);
    tcase_add_test(tc, limits_and_empty);
    tcase_add_test(tc, tiles_connect_and_match_single);
    tcase_add_test(tc, links_at_a_known_ledge);
    tcase_add_test(tc, links_jump_a_gap);
    tcase_add_loop_test(tc, random_clutter_always_bakes, 0, 40);
    tcase_add_test(tc, monotone_partition_bakes_the_same_area);
    suite_add_tcase(s, tc);
    return s;
}
