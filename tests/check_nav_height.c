/*
 * check_nav_height: the accelerated height lookup (per-polygon grids over the
 * detail triangles, nav_height.c) and the pruned nearest search.
 *
 * The grids must not change any answer: nav_mesh_height must equal, bit for
 * bit, nav_height_scan (the plain scan of every detail triangle in stored
 * order) at every point, inside, on edges, in cracks and outside. Checked on
 * hand-made lattices of many detail triangles (with values derived by hand)
 * and on the shared Recast meshes (skipped when ../shared is absent), where
 * nav_mesh_nearest is also compared with a brute-force ranking of every
 * polygon.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

/* ---- a hand-made polygon with a lattice of detail triangles ---- */

/* Height of lattice vertex (i, j): binary fractions, so every value below
   is exact in float. */
static float lat_h(uint32_t i, uint32_t j) {
    return 0.5f * (float)(i % 2) + 0.25f * (float)(j % 3);
}

/*
 * One rectangular polygon [0, nx] x [0, nz] (1 m cells) whose detail mesh is
 * the (nx + 1) x (nz + 1) lattice, each cell split along its diagonal
 * (i, j)-(i + 1, j + 1) into a lower triangle (below the diagonal, z - j <
 * x - i) and an upper one. Cell (hole_i, hole_j) gets no triangles (a crack,
 * when hole_i < nx). (It used to append a zero-area triangle too, to show
 * the height lookup skips one; uploads with one are now refused with 422,
 * see tests/badinput/mesh-detail-zero-area.case, so none reaches it.)
 */
static nav_mesh *lattice_mesh(uint32_t nx, uint32_t nz, uint32_t hole_i, uint32_t hole_j) {
    float corners[12] = {0,         lat_h(0, 0),   0,         0,         lat_h(0, nz), (float)nz,
                         (float)nx, lat_h(nx, nz), (float)nz, (float)nx, lat_h(nx, 0), 0};
    /* (0,0) -> (0,nz) -> (nx,nz) -> (nx,0): negative signed area, as stored */
    uint32_t pstart[2] = {0, 4}, pverts[4] = {0, 1, 2, 3};
    uint32_t ndv = (nx + 1) * (nz + 1);
    float *dv = malloc(sizeof(float) * 3 * ndv);
    uint32_t *dt = malloc(sizeof(uint32_t) * 3 * (2 * nx * nz + 1));
    for (uint32_t j = 0; j <= nz; j++)
        for (uint32_t i = 0; i <= nx; i++) {
            float *v = &dv[3 * (j * (nx + 1) + i)];
            v[0] = (float)i;
            v[1] = lat_h(i, j);
            v[2] = (float)j;
        }
        /* detail indices count after the 4 polygon vertices */
#define LV(i, j) (4 + (j) * (nx + 1) + (i))
    uint32_t nt = 0;
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            if (i == hole_i && j == hole_j)
                continue;
            uint32_t lower[3] = {LV(i, j), LV(i + 1, j + 1), LV(i + 1, j)};
            uint32_t upper[3] = {LV(i, j), LV(i, j + 1), LV(i + 1, j + 1)};
            memcpy(&dt[3 * nt++], lower, sizeof lower);
            memcpy(&dt[3 * nt++], upper, sizeof upper);
        }
#undef LV
    uint32_t dpoly[2] = {0, nt};
    nav_mesh_input in = {.verts = corners,
                         .nverts = 4,
                         .poly_start = pstart,
                         .poly_verts = pverts,
                         .npolys = 1,
                         .detail_verts = dv,
                         .ndetail_verts = ndv,
                         .detail_tris = dt,
                         .ndetail_tris = nt,
                         .detail_poly_tris = dpoly};
    nav_mesh *m = NULL;
    nav_error err;
    nav_status st = nav_mesh_build(&in, NULL, &m, &err);
    ck_assert_msg(st == NAV_OK, "lattice build: %s", err.message);
    free(dv);
    free(dt);
    return m;
}

static float height_of(const nav_mesh *m, uint32_t p, float x, float z) {
    float y = -1;
    ck_assert_int_eq(nav_mesh_height(m, p, x, z, &y), NAV_OK);
    return y;
}

/* The accelerated lookup equals the scan at (x, z), bit for bit. */
static void assert_same(const nav_mesh *m, uint32_t p, float x, float z) {
    float got = height_of(m, p, x, z), want = nav_height_scan(m, p, x, z);
    ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
                  "poly %u at (%.9g, %.9g): grid %.9g != scan %.9g", p, x, z, got, want);
}

START_TEST(test_lattice_by_hand) {
    nav_mesh *m = lattice_mesh(8, 8, 3, 3);
    const nav_mesh_ext *x = nav_mesh_ext_of(m);
    /* 126 triangles + 1 flat: far above NAV_GRID_MIN_TRIS, so a grid */
    ck_assert_ptr_nonnull(x->tri_grid_of);
    ck_assert_uint_ne(x->tri_grid_of[0], NAV_NONE);
    /* At a lattice vertex one triangle has barycentric weight 1 there, so
       the height is the vertex's own: h(5, 2) = 0.5*1 + 0.25*2 = 1.0;
       h(2, 7) = 0 + 0.25*1 = 0.25. */
    ck_assert_float_eq_tol(height_of(m, 0, 5, 2), 1.0f, 1e-6f);
    ck_assert_float_eq_tol(height_of(m, 0, 2, 7), 0.25f, 1e-6f);
    /* A cell centre lies on its diagonal (i,j)-(i+1,j+1): the mean of the
       two ends. Cell (5, 1): h(5,1) = 0.5 + 0.25 = 0.75, h(6,2) = 0 + 0.5 =
       0.5, so 0.625. */
    ck_assert_float_eq_tol(height_of(m, 0, 5.5f, 1.5f), 0.625f, 1e-6f);
    /* (6.25, 4.75) is in cell (6, 4) above the diagonal (0.75 > 0.25): the
       upper triangle (6,4), (6,5), (7,5), where the surface is
       y = h00 + dx * (h11 - h01) + dz * (h01 - h00) (it gives h00, h01, h11
       at the three corners). h00 = h(6,4) = 0.25, h01 = h(6,5) = 0.5,
       h11 = h(7,5) = 1.0: 0.25 + 0.25 * 0.5 + 0.75 * 0.25 = 0.5625. */
    ck_assert_float_eq_tol(height_of(m, 0, 6.25f, 4.75f), 0.5625f, 1e-6f);
    /* Outside, left of the x = 0 edge at z = 4.5: the closest triangle edge
       is (0,4)-(0,5) at its midpoint (1 m away; every other edge is
       farther): (h(0,4) + h(0,5)) / 2 = (0.25 + 0.5) / 2 = 0.375. */
    ck_assert_float_eq_tol(height_of(m, 0, -1, 4.5f), 0.375f, 1e-6f);
    /* In the hole (cell (3,3) has no triangle), at (3.5, 3.3): the closest
       edge is its bottom (3,3)-(4,3), 0.3 m away (the others are 0.5 and
       0.7): the midpoint of h(3,3) = 0.5 and h(4,3) = 0: 0.25. */
    ck_assert_float_eq_tol(height_of(m, 0, 3.5f, 3.3f), 0.25f, 1e-6f);
    nav_mesh_free(m);
}
END_TEST

/* Points of every kind: random (inside and out), lattice vertices, edge
   midpoints and points a hair off them, the hole. */
static void lattice_property(uint32_t nx, uint32_t nz, uint32_t hole_i, uint32_t hole_j,
                             uint32_t seed) {
    nav_mesh *m = lattice_mesh(nx, nz, hole_i, hole_j);
    ck_assert_uint_ne(nav_mesh_ext_of(m)->tri_grid_of[0], NAV_NONE);
    uint32_t rng = seed;
    for (int k = 0; k < 3000; k++)
        assert_same(m, 0, fx_randf(&rng) * (nx + 4) - 2, fx_randf(&rng) * (nz + 4) - 2);
    static const float offs[] = {0, 1e-7f, -1e-7f, 1e-4f, -1e-4f, 0.5f};
    for (uint32_t j = 0; j <= nz; j++)
        for (uint32_t i = 0; i <= nx; i++)
            for (size_t a = 0; a < sizeof offs / sizeof offs[0]; a++)
                for (size_t b = 0; b < sizeof offs / sizeof offs[0]; b++)
                    assert_same(m, 0, (float)i + offs[a], (float)j + offs[b]);
    for (int k = 0; k < 200; k++)
        assert_same(m, 0, (float)hole_i + fx_randf(&rng), (float)hole_j + fx_randf(&rng));
    nav_mesh_free(m);
}

START_TEST(test_lattice_vs_scan) {
    lattice_property(8, 8, 3, 3, 11);
    lattice_property(24, 2, 20, 1, 12); /* long and thin: cells not square */
    lattice_property(5, 9, 99, 99, 13); /* no hole */
}
END_TEST

/* 40 copies of the two halves of the square [0, 8]^2 (all at y = 1): each
   triangle spans every cell of any grid, more copies than the grids allow
   per triangle, so the polygon keeps the plain scan, which lifts every
   inside point to y = 1 (every triangle's corners are at 1). */
START_TEST(test_overlapping_triangles_keep_scan) {
    float corners[12] = {0, 1, 0, 0, 1, 8, 8, 1, 8, 8, 1, 0};
    uint32_t pstart[2] = {0, 4}, pverts[4] = {0, 1, 2, 3};
    uint32_t dt[3 * 80];
    for (int k = 0; k < 40; k++) {
        uint32_t a[6] = {0, 2, 3, 0, 1, 2};
        memcpy(&dt[6 * k], a, sizeof a);
    }
    uint32_t dpoly[2] = {0, 80};
    nav_mesh_input in = {.verts = corners,
                         .nverts = 4,
                         .poly_start = pstart,
                         .poly_verts = pverts,
                         .npolys = 1,
                         .detail_tris = dt,
                         .ndetail_tris = 80,
                         .detail_poly_tris = dpoly};
    nav_mesh *m = NULL;
    ck_assert_int_eq(nav_mesh_build(&in, NULL, &m, NULL), NAV_OK);
    const nav_mesh_ext *x = nav_mesh_ext_of(m);
    ck_assert(x->tri_grid_of == NULL || x->tri_grid_of[0] == NAV_NONE);
    ck_assert_float_eq_tol(height_of(m, 0, 3.3f, 6.1f), 1.0f, 1e-6f);
    uint32_t rng = 5;
    for (int k = 0; k < 200; k++)
        assert_same(m, 0, fx_randf(&rng) * 12 - 2, fx_randf(&rng) * 12 - 2);
    nav_mesh_free(m);
}
END_TEST

/* ---- the shared Recast meshes ---- */

static nav_mesh *load_shared(const char *name) {
    char file[128];
    snprintf(file, sizeof file, "%s.navmesh.json", name);
    const char *path = fx_shared_mesh_path(file);
    if (!path) {
        printf("check_nav_height: ../shared absent, skipping %s\n", name);
        return NULL;
    }
    nav_mesh *m = mj_load(path);
    ck_assert_msg(m != NULL, "cannot load %s", path);
    return m;
}

static const char *const SHARED[3] = {"dungeon", "nav_test", "undulating"};

static const float *dvert(const nav_mesh *m, uint32_t i) {
    return i < m->nverts ? &m->verts[3 * (size_t)i] : &m->detail_verts[3 * (size_t)(i - m->nverts)];
}

START_TEST(test_shared_height_vs_scan) {
    for (int s = 0; s < 3; s++) {
        nav_mesh *m = load_shared(SHARED[s]);
        if (!m)
            continue;
        ck_assert_ptr_nonnull(m->detail_poly_tris);
        uint32_t rng = 977u * (uint32_t)(s + 1);
        for (uint32_t p = 0; p < m->npolys; p++) {
            const float *pb = &m->poly_bounds[6 * (size_t)p];
            uint32_t first = m->detail_poly_tris[2 * (size_t)p];
            uint32_t nt = m->detail_poly_tris[2 * (size_t)p + 1];
            for (uint32_t t = first; t < first + nt; t++) {
                const float *v[3];
                for (int k = 0; k < 3; k++)
                    v[k] = dvert(m, m->detail_tris[3 * (size_t)t + k]);
                for (int k = 0; k < 3; k++) {
                    const float *a = v[k], *b = v[(k + 1) % 3];
                    assert_same(m, p, a[0], a[2]);
                    assert_same(m, p, 0.5f * (a[0] + b[0]), 0.5f * (a[2] + b[2]));
                }
                assert_same(m, p, (v[0][0] + v[1][0] + v[2][0]) / 3,
                            (v[0][2] + v[1][2] + v[2][2]) / 3);
            }
            for (int k = 0; k < 40; k++) {
                /* the box widened by 1 m on each side: inside and outside */
                float x = pb[0] - 1 + fx_randf(&rng) * (pb[3] - pb[0] + 2);
                float z = pb[2] - 1 + fx_randf(&rng) * (pb[5] - pb[2] + 2);
                assert_same(m, p, x, z);
                /* where nearest moves an outside point: the boundary */
                double ox, oz;
                nav_boundary_closest_xz(m, p, x, z, &ox, &oz);
                float on[3];
                float pt[3] = {x, pb[1], z};
                ck_assert_int_eq(nav_mesh_closest_on_poly(m, p, pt, on), NAV_OK);
                float want = nav_height_scan(m, p, ox, oz);
                if (!nav_mesh_poly_contains_xz(m, p, x, z))
                    ck_assert_msg(memcmp(&on[1], &want, sizeof want) == 0,
                                  "%s poly %u boundary (%.9g, %.9g): %.9g != %.9g", SHARED[s], p,
                                  ox, oz, on[1], want);
            }
        }
        nav_mesh_free(m);
    }
}
END_TEST

/* Reference nearest: every polygon ranked with the scan heights by the 3-D
   distance to its closest point (straight below or above p for a polygon
   containing it in xz), inside the box p +- ext, lower id on ties. */
static uint32_t brute_nearest(const nav_mesh *m, const float p[3], const float ext[3],
                              float out[3]) {
    uint32_t best = NAV_NONE;
    double best_d = INFINITY;
    for (uint32_t q = 0; q < m->npolys; q++) {
        float pt[3];
        int tier = !nav_mesh_poly_contains_xz(m, q, p[0], p[2]);
        double ox = p[0], oz = p[2];
        if (tier) /* moved onto the boundary first, as closest_on_poly does */
            nav_boundary_closest_xz(m, q, p[0], p[2], &ox, &oz);
        pt[0] = (float)ox;
        pt[2] = (float)oz;
        pt[1] = nav_height_scan(m, q, ox, oz);
        double d = tier ? nav_dist3d(p, pt) : fabs((double)pt[1] - p[1]);
        if (fabsf(pt[0] - p[0]) > ext[0] || fabsf(pt[1] - p[1]) > ext[1] ||
            fabsf(pt[2] - p[2]) > ext[2])
            continue;
        if (d < best_d) { /* the closest point in 3-D, ties to the lower id */
            best = q;
            best_d = d;
            memcpy(out, pt, sizeof pt);
        }
    }
    return best;
}

START_TEST(test_shared_nearest_vs_brute) {
    for (int s = 0; s < 3; s++) {
        nav_mesh *m = load_shared(SHARED[s]);
        if (!m)
            continue;
        uint32_t rng = 7919u * (uint32_t)(s + 1);
        for (int k = 0; k < 600; k++) {
            /* around a random polygon's box, above, below and beside it */
            const float *pb = &m->poly_bounds[6 * (size_t)(fx_rand(&rng) % m->npolys)];
            float p[3];
            for (int a = 0; a < 3; a++)
                p[a] = pb[a] - 2 + fx_randf(&rng) * (pb[3 + a] - pb[a] + 4);
            float ext[3] = {0.1f + fx_randf(&rng) * 2, 0.2f + fx_randf(&rng) * 4,
                            0.1f + fx_randf(&rng) * 2};
            float want[3] = {0, 0, 0}, got[3];
            uint32_t wp = brute_nearest(m, p, ext, want), gp;
            nav_status st = nav_mesh_nearest(m, p, ext, 0, &gp, got);
            if (wp == NAV_NONE) {
                ck_assert_int_eq(st, NAV_E_OFF_MESH);
                continue;
            }
            ck_assert_int_eq(st, NAV_OK);
            ck_assert_msg(gp == wp, "%s query %d: poly %u != %u", SHARED[s], k, gp, wp);
            ck_assert(memcmp(got, want, sizeof got) == 0);
        }
        nav_mesh_free(m);
    }
}
END_TEST

extern Suite *nav_height_suite(void);
Suite *nav_height_suite(void) {
    Suite *s = suite_create("nav_height");
    TCase *tc = tcase_create("grid");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lattice_by_hand);
    tcase_add_test(tc, test_lattice_vs_scan);
    tcase_add_test(tc, test_overlapping_triangles_keep_scan);
    tcase_add_test(tc, test_shared_height_vs_scan);
    tcase_add_test(tc, test_shared_nearest_vs_brute);
    suite_add_tcase(s, tc);
    return s;
}
