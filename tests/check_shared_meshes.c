/*
 * check_shared_meshes: the real Recast-baked meshes under ../shared/meshes
 * load with the counts their README gives, and, with the height mesh, every
 * query start point snaps onto the surface at its own height.
 *
 * Skipped (with a printed message) when ../shared is absent. The JSON is
 * read with jansson here in the test; nav/ itself never sees JSON.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_internal.h"
#include "tests/test_fixtures.h"
#include "tests/test_snapshot.h"

typedef struct shared_case {
    const char *name;
    uint32_t verts, polys, components;
    double area; /* m^2, README */
} shared_case;

/* The README's table. */
static const shared_case CASES[3] = {
    {"dungeon", 223, 118, 4, 1585.3},
    {"nav_test", 349, 155, 17, 4002.0},
    {"undulating", 374, 216, 1, 8795.5},
};

/* Owns the arrays a nav_mesh_input points into. */
typedef struct json_mesh {
    float *verts, *dverts;
    uint32_t *pstart, *pverts, *dtris, *dpoly;
    uint8_t *areas;
    nav_mesh_input in;
} json_mesh;

static void json_mesh_free(json_mesh *j) {
    free(j->verts);
    free(j->dverts);
    free(j->pstart);
    free(j->pverts);
    free(j->dtris);
    free(j->dpoly);
    free(j->areas);
}

static float *read_vec3s(json_t *arr, uint32_t *n) {
    *n = (uint32_t)json_array_size(arr);
    float *v = malloc(((size_t)*n * 3 + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < *n; i++)
        for (size_t a = 0; a < 3; a++)
            v[3 * i + a] = (float)json_number_value(json_array_get(json_array_get(arr, i), a));
    return v;
}

static void load_json_mesh(const char *path, json_mesh *j, bool with_detail) {
    memset(j, 0, sizeof *j);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    ck_assert_msg(root != NULL, "%s: %s", path, jerr.text);
    j->verts = read_vec3s(json_object_get(root, "vertices"), &j->in.nverts);
    json_t *polys = json_object_get(root, "polygons");
    uint32_t np = (uint32_t)json_array_size(polys);
    j->pstart = malloc((np + 1) * sizeof *j->pstart);
    size_t total = 0;
    for (size_t p = 0; p < np; p++)
        total += json_array_size(json_array_get(polys, p));
    j->pverts = malloc((total + 1) * sizeof *j->pverts);
    j->pstart[0] = 0;
    size_t k = 0;
    for (size_t p = 0; p < np; p++) {
        json_t *poly = json_array_get(polys, p);
        for (size_t i = 0; i < json_array_size(poly); i++)
            j->pverts[k++] = (uint32_t)json_integer_value(json_array_get(poly, i));
        j->pstart[p + 1] = (uint32_t)k;
    }
    j->in.npolys = np;
    json_t *areas = json_object_get(root, "areas");
    if (areas) {
        j->areas = malloc(np + 1);
        for (size_t p = 0; p < np; p++)
            j->areas[p] = (uint8_t)json_integer_value(json_array_get(areas, p));
    }
    json_t *detail = json_object_get(root, "detail");
    if (detail && with_detail) {
        j->dverts = read_vec3s(json_object_get(detail, "vertices"), &j->in.ndetail_verts);
        json_t *tris = json_object_get(detail, "triangles");
        j->in.ndetail_tris = (uint32_t)json_array_size(tris);
        j->dtris = malloc(((size_t)j->in.ndetail_tris * 3 + 1) * sizeof *j->dtris);
        for (size_t t = 0; t < j->in.ndetail_tris; t++)
            for (size_t a = 0; a < 3; a++)
                j->dtris[3 * t + a] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(tris, t), a));
        json_t *pt = json_object_get(detail, "polygon_triangles");
        ck_assert_uint_eq(json_array_size(pt), np);
        j->dpoly = malloc((2 * (size_t)np + 1) * sizeof *j->dpoly);
        for (size_t p = 0; p < np; p++)
            for (size_t a = 0; a < 2; a++)
                j->dpoly[2 * p + a] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(pt, p), a));
    }
    j->in.verts = j->verts;
    j->in.poly_start = j->pstart;
    j->in.poly_verts = j->pverts;
    j->in.areas = j->areas;
    j->in.detail_verts = j->dverts;
    j->in.detail_tris = j->dtris;
    j->in.detail_poly_tris = j->dpoly;
    json_decref(root);
}

static void assert_counts(const nav_mesh *m, const shared_case *c) {
    ck_assert_uint_eq(nav_mesh_vertex_count(m), c->verts);
    ck_assert_uint_eq(nav_mesh_polygon_count(m), c->polys);
    ck_assert_uint_eq(nav_mesh_component_count(m), c->components);
    ck_assert_msg(fabs(nav_mesh_area(m) - c->area) <= 0.1, "%s: area %.3f, README %.1f", c->name,
                  nav_mesh_area(m), c->area);
    /* The baked meshes are already in negative signed-area order. */
    for (uint32_t p = 0; p < m->npolys; p++) {
        double s = 0;
        for (uint32_t k = 0; k < nav_poly_nverts(m, p); k++) {
            const float *a = nav_poly_vert(m, p, k), *b = nav_poly_vert(m, p, k + 1);
            s += (double)a[0] * b[2] - (double)b[0] * a[2];
        }
        ck_assert(s < 0);
    }
}

static char path_buf[512];

static const char *shared_file(const char *name, const char *suffix) {
    snprintf(path_buf, sizeof path_buf, "%s%s", name, suffix);
    return fx_shared_mesh_path(path_buf);
}

START_TEST(test_shared_json) {
    const shared_case *c = &CASES[_i];
    const char *path = shared_file(c->name, ".navmesh.json");
    if (!path) {
        printf("skip: ../shared/meshes/%s.navmesh.json absent\n", c->name);
        return;
    }
    for (int detail = 0; detail < 2; detail++) {
        json_mesh j;
        load_json_mesh(path, &j, detail);
        nav_mesh *m = NULL;
        nav_error err;
        ck_assert_msg(nav_mesh_build(&j.in, NULL, &m, &err) == NAV_OK, "%s: %s", c->name,
                      err.message);
        assert_counts(m, c);
        ck_assert_int_eq(nav_mesh_has_detail(m), detail);
        /* The serialized form rebuilds to the same counts. */
        uint8_t *blob;
        size_t len;
        ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
        nav_mesh *r = NULL;
        ck_assert_int_eq(nav_mesh_deserialize(blob, len, &r, &err), NAV_OK);
        assert_counts(r, c);
        free(blob);
        nav_mesh_free(r);
        nav_mesh_free(m);
        json_mesh_free(&j);
    }
}
END_TEST

START_TEST(test_shared_obj) {
    const shared_case *c = &CASES[_i];
    const char *path = shared_file(c->name, ".navmesh.obj");
    if (!path) {
        printf("skip: ../shared/meshes/%s.navmesh.obj absent\n", c->name);
        return;
    }
    size_t len;
    char *text = fx_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    nav_obj obj;
    nav_error err;
    ck_assert_msg(nav_obj_parse(text, len, &obj, &err) == NAV_OK, "%s", err.message);
    nav_mesh_input in;
    nav_obj_as_input(&obj, &in);
    nav_mesh *m = NULL;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s: %s", c->name, err.message);
    assert_counts(m, c);
    nav_mesh_free(m);
    nav_obj_free(&obj);
    free(text);
}
END_TEST

START_TEST(test_shared_query_heights) {
    const shared_case *c = &CASES[_i];
    const char *mpath = shared_file(c->name, ".navmesh.json");
    if (!mpath) {
        printf("skip: ../shared/meshes/%s.navmesh.json absent\n", c->name);
        return;
    }
    json_mesh j;
    load_json_mesh(mpath, &j, true);
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_int_eq(nav_mesh_build(&j.in, NULL, &m, &err), NAV_OK);
    const char *qpath = shared_file(c->name, ".queries.json");
    ck_assert_ptr_nonnull(qpath);
    json_error_t jerr;
    json_t *queries = json_load_file(qpath, 0, &jerr);
    ck_assert_msg(queries != NULL, "%s", jerr.text);
    const float ext[3] = {2, 4, 2};
    size_t nq = json_array_size(queries);
    ck_assert_uint_gt(nq, 0);
    double worst = 0;
    /* Start and end points alike lie on the reference's height surface. */
    for (size_t qe = 0; qe < 2 * nq; qe++) {
        size_t q = qe / 2;
        json_t *pt = json_object_get(json_array_get(queries, q), qe % 2 ? "end" : "start");
        float p[3];
        for (size_t a = 0; a < 3; a++)
            p[a] = (float)json_number_value(json_array_get(pt, a));
        uint32_t poly;
        float out[3];
        ck_assert_msg(nav_mesh_nearest(m, p, ext, 0, &poly, out) == NAV_OK,
                      "%s query %zu (%s): off mesh", c->name, q, qe % 2 ? "end" : "start");
        float y;
        ck_assert_int_eq(nav_mesh_height(m, poly, p[0], p[2], &y), NAV_OK);
        double d = fabs((double)y - p[1]);
        if (d > worst)
            worst = d;
        ck_assert_msg(d <= 1e-3, "%s query %zu: height %.6f at (%g, %g), expected %.6f (poly %u)",
                      c->name, q, y, p[0], p[2], p[1], poly);
    }
    printf("%s: %zu query starts and ends, worst height error %.2g m\n", c->name, nq, worst);
    json_decref(queries);
    nav_mesh_free(m);
    json_mesh_free(&j);
}
END_TEST

/* Every shared mesh (town too), with and without its detail mesh: loaded
   from a version 3 blob (built structures stored) it equals the mesh rebuilt
   from its input form, array by array, and answers the same. */
START_TEST(test_shared_snapshot) {
    static const char *const names[4] = {"dungeon", "nav_test", "undulating", "town"};
    const char *path = shared_file(names[_i], ".navmesh.json");
    if (!path) {
        printf("skip: ../shared/meshes/%s.navmesh.json absent\n", names[_i]);
        return;
    }
    for (int detail = 0; detail < 2; detail++) {
        json_mesh j;
        load_json_mesh(path, &j, detail);
        nav_mesh *m = NULL;
        nav_error err;
        ck_assert_msg(nav_mesh_build(&j.in, NULL, &m, &err) == NAV_OK, "%s", err.message);
        snap_check(m, 31 * (uint32_t)_i + (uint32_t)detail + 1, 60);
        nav_mesh_free(m);
        json_mesh_free(&j);
    }
}
END_TEST

extern Suite *shared_meshes_suite(void);
Suite *shared_meshes_suite(void) {
    Suite *s = suite_create("shared_meshes");
    TCase *tc = tcase_create("recast");
    tcase_add_loop_test(tc, test_shared_json, 0, 3);
    tcase_add_loop_test(tc, test_shared_obj, 0, 3);
    tcase_add_loop_test(tc, test_shared_query_heights, 0, 3);
    tcase_add_loop_test(tc, test_shared_snapshot, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
