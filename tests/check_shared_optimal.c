/*
 * check_shared_optimal: the optimal search on the real Recast meshes in
 * ../shared/meshes against the reference implementation's answers (Detour's
 * corridor A* + string pulling) in *.queries.json. For every complete
 * reference query, our path (start and end snapped with nav_mesh_nearest and
 * extents {2, 4, 2}) must be no longer in xz than the reference's length2d
 * plus 1e-3 m: a shortest path can never lose to a corridor path. Prints the
 * mean and maximum percentage by which the reference is longer. Skips with a
 * message when ../shared is absent.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_optimal.h"
#include "tests/test_fixtures.h"
#include "tests/test_visgraph.h"

/* Declared for -Wmissing-prototypes; "extern" keeps it out of suite discovery. */
extern Suite *shared_optimal_suite(void);

/* Reads n floats of a JSON array into out; 0 on a shape error. */
static int json_floats(const json_t *a, float *out, size_t n) {
    if (!json_is_array(a) || json_array_size(a) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v))
            return 0;
        out[i] = (float)json_number_value(v);
    }
    return 1;
}

/* Builds a mesh from the upload JSON (vertices, polygons, areas, detail). */
static nav_mesh *load_shared_mesh(const char *file) {
    const char *path = fx_shared_mesh_path(file);
    if (!path)
        return NULL;
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    ck_assert_msg(root != NULL, "%s: %s", file, err.text);
    const json_t *jv = json_object_get(root, "vertices"), *jp = json_object_get(root, "polygons");
    size_t nv = json_array_size(jv), np = json_array_size(jp), npv = 0;
    for (size_t i = 0; i < np; i++)
        npv += json_array_size(json_array_get(jp, i));
    float *verts = malloc(3 * nv * sizeof *verts);
    uint32_t *start = malloc((np + 1) * sizeof *start), *pv = malloc(npv * sizeof *pv);
    uint8_t *areas = malloc(np + 1);
    ck_assert(verts && start && pv && areas);
    for (size_t i = 0; i < nv; i++)
        ck_assert(json_floats(json_array_get(jv, i), &verts[3 * i], 3));
    const json_t *ja = json_object_get(root, "areas");
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        const json_t *poly = json_array_get(jp, i);
        start[i] = (uint32_t)k;
        for (size_t j = 0; j < json_array_size(poly); j++)
            pv[k++] = (uint32_t)json_integer_value(json_array_get(poly, j));
        areas[i] = ja ? (uint8_t)json_integer_value(json_array_get(ja, i)) : 0;
    }
    start[np] = (uint32_t)k;
    nav_mesh_input in = {0};
    in.verts = verts;
    in.nverts = (uint32_t)nv;
    in.poly_start = start;
    in.poly_verts = pv;
    in.npolys = (uint32_t)np;
    in.areas = areas;
    float *dverts = NULL;
    uint32_t *dtris = NULL, *dpt = NULL;
    const json_t *det = json_object_get(root, "detail");
    if (json_is_object(det)) {
        const json_t *dv = json_object_get(det, "vertices"),
                     *dt = json_object_get(det, "triangles"),
                     *dp = json_object_get(det, "polygon_triangles");
        size_t ndv = json_array_size(dv), ndt = json_array_size(dt), ndp = json_array_size(dp);
        dverts = malloc((3 * ndv + 1) * sizeof *dverts);
        dtris = malloc((3 * ndt + 1) * sizeof *dtris);
        dpt = malloc((2 * ndp + 1) * sizeof *dpt);
        ck_assert(dverts && dtris && dpt);
        for (size_t i = 0; i < ndv; i++)
            ck_assert(json_floats(json_array_get(dv, i), &dverts[3 * i], 3));
        for (size_t i = 0; i < ndt; i++)
            for (size_t j = 0; j < 3; j++)
                dtris[3 * i + j] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(dt, i), j));
        for (size_t i = 0; i < ndp; i++)
            for (size_t j = 0; j < 2; j++)
                dpt[2 * i + j] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(dp, i), j));
        in.detail_verts = dverts;
        in.ndetail_verts = (uint32_t)ndv;
        in.detail_tris = dtris;
        in.ndetail_tris = (uint32_t)ndt;
        in.detail_poly_tris = ndp == np ? dpt : NULL;
    }
    nav_mesh *m = NULL;
    nav_error e;
    nav_status st = nav_mesh_build(&in, NULL, &m, &e);
    ck_assert_msg(st == NAV_OK, "%s: %s", file, e.message);
    free(verts);
    free(start);
    free(pv);
    free(areas);
    free(dverts);
    free(dtris);
    free(dpt);
    json_decref(root);
    return m;
}

/* vg_every: every how many queries also against the brute-force reference
   (and, when 8, also those where the corridor path is over 5 % longer; the
   reference is quadratic in the corners, so town gets a sample). Each
   query runs both exact searches, the corner graph (the default) and the
   interval search, which must agree. */
static void run_mesh(const char *name, size_t vg_every) {
    char mesh_file[128], query_file[128];
    snprintf(mesh_file, sizeof mesh_file, "%s.navmesh.json", name);
    snprintf(query_file, sizeof query_file, "%s.queries.json", name);
    nav_mesh *m = load_shared_mesh(mesh_file);
    if (!m) {
        printf("shared_optimal: ../shared absent, skipping %s\n", name);
        return;
    }
    json_error_t err;
    json_t *qs = json_load_file(fx_shared_mesh_path(query_file), 0, &err);
    ck_assert_msg(qs != NULL, "%s: %s", query_file, err.text);
    nav_optimal *o = nav_optimal_new(1u << 18);
    ck_assert_ptr_nonnull(o);
    static float corners[3 * 1024];
    static uint32_t polys[4096];
    const float ext[3] = {2, 4, 2};
    vg_ref *vg = vg_new(m, 0);
    ck_assert_ptr_nonnull(vg);
    uint32_t count = 0, checked = 0;
    double sum_pct = 0, max_pct = 0, min_pct = 0;
    for (size_t i = 0; i < json_array_size(qs); i++) {
        const json_t *q = json_array_get(qs, i);
        if (strcmp(json_string_value(json_object_get(q, "status")), "complete") != 0)
            continue;
        float s[3], e[3], ss[3], es[3];
        ck_assert(json_floats(json_object_get(q, "start"), s, 3));
        ck_assert(json_floats(json_object_get(q, "end"), e, 3));
        double ref = json_number_value(json_object_get(q, "length2d"));
        uint32_t sp, ep;
        ck_assert_int_eq(nav_mesh_nearest(m, s, ext, 0, &sp, ss), NAV_OK);
        ck_assert_int_eq(nav_mesh_nearest(m, e, ext, 0, &ep, es), NAV_OK);
        nav_path_result res;
        memset(&res, 0, sizeof res);
        res.corners = corners;
        res.max_corners = 1024;
        res.polys = polys;
        res.max_polys = 4096;
        double lens[2];
        for (int mode = 1; mode >= 0; mode--) {
            nav_optimal_use_graph(o, mode == 0 ? NAV_OPT_GRAPH_ON : NAV_OPT_GRAPH_OFF);
            memset(&res, 0, sizeof res);
            res.corners = corners;
            res.max_corners = 1024;
            res.polys = polys;
            res.max_polys = 4096;
            nav_status st = nav_optimal_search(o, m, sp, ss, ep, es, 0, 0, &res);
            ck_assert_msg(st == NAV_OK, "%s query %zu mode %d: status %d", name, i, mode, (int)st);
            ck_assert_uint_eq(res.polys[0], sp);
            ck_assert_uint_eq(res.polys[res.npolys - 1], ep);
            lens[mode] = 0;
            for (uint32_t c = 1; c < res.ncorners; c++)
                lens[mode] += hypot((double)corners[3 * c] - corners[3 * c - 3],
                                    (double)corners[3 * c + 2] - corners[3 * c - 1]);
        }
        double len = lens[0];
        ck_assert_msg(fabs(lens[0] - lens[1]) <= 1e-4 * (1 + len),
                      "%s query %zu: corner graph %.6f, interval search %.6f", name, i, lens[0],
                      lens[1]);
        ck_assert_msg(len <= ref + 1e-3, "%s query %zu: optimal %.6f > reference %.6f", name, i,
                      len, ref);
        /* every 8th query (and every one where the corridor path is much
           longer) also against the brute-force reference */
        double pct = len > 1e-6 ? 100.0 * (ref - len) / len : 0;
        if (i % vg_every == 0 || (vg_every == 8 && pct > 5)) {
            double want = vg_shortest(vg, sp, ss, ep, es);
            ck_assert_msg(fabs(want - len) <= 1e-3, "%s query %zu: optimal %.6f, visibility %.6f",
                          name, i, len, want);
            checked++;
        }
        count++;
        sum_pct += pct;
        max_pct = pct > max_pct ? pct : max_pct;
        min_pct = pct < min_pct ? pct : min_pct;
    }
    printf("shared_optimal %s: %u complete queries (%u also against the visibility graph), "
           "reference longer by %.3f%% on average, %.3f%% at most (min %.4f%%)\n",
           name, count, checked, count ? sum_pct / count : 0.0, max_pct, min_pct);
    vg_free(vg);
    ck_assert_uint_gt(count, 0);
    nav_optimal_stats os;
    nav_optimal_stats_get(o, &os);
    ck_assert_uint_eq(os.graph_misses, 0);
    nav_optimal_free(o);
    json_decref(qs);
    nav_mesh_free(m);
}

START_TEST(test_dungeon) {
    run_mesh("dungeon", 8);
}
END_TEST

START_TEST(test_nav_test) {
    run_mesh("nav_test", 8);
}
END_TEST

/* A 400 m town of 4,547 polygons with overpasses: the scale the corner
   graph is for. */
START_TEST(test_town) {
    run_mesh("town", 250);
}
END_TEST

START_TEST(test_undulating) {
    run_mesh("undulating", 8);
}
END_TEST

Suite *shared_optimal_suite(void) {
    Suite *s = suite_create("shared_optimal");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_dungeon);
    tcase_add_test(tc, test_nav_test);
    tcase_add_test(tc, test_undulating);
    tcase_add_test(tc, test_town);
    suite_add_tcase(s, tc);
    return s;
}
