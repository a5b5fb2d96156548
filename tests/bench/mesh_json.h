/*
 * mesh_json: loads a navmesh in the API's upload JSON format (the files in
 * ../shared/meshes) with jansson, for tests and benchmarks only (nav/ never
 * sees JSON). Header-only (static inline) so both the test runner and the
 * bench runner can use it without a shared object file.
 */
#ifndef MESH_JSON_H
#define MESH_JSON_H

#include <jansson.h>
#include <stdlib.h>

#include "nav/nav_mesh.h"

static inline float *mj_points(json_t *arr, uint32_t *n) {
    *n = (uint32_t)json_array_size(arr);
    float *v = malloc(sizeof(float) * 3 * (*n ? *n : 1));
    for (uint32_t i = 0; i < *n; i++)
        for (int k = 0; k < 3; k++)
            v[3 * i + k] = (float)json_number_value(json_array_get(json_array_get(arr, i), k));
    return v;
}

/* Builds the mesh in file `path`; NULL when unreadable or invalid. */
static inline nav_mesh *mj_load(const char *path) {
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        return NULL;
    nav_mesh_input in = {0};
    float *verts = mj_points(json_object_get(root, "vertices"), &in.nverts);
    json_t *polys = json_object_get(root, "polygons");
    in.npolys = (uint32_t)json_array_size(polys);
    uint32_t *start = malloc(sizeof(uint32_t) * (in.npolys + 1));
    size_t total = 0;
    for (uint32_t p = 0; p < in.npolys; p++)
        total += json_array_size(json_array_get(polys, p));
    uint32_t *pv = malloc(sizeof(uint32_t) * (total ? total : 1));
    uint8_t *areas = malloc(in.npolys ? in.npolys : 1);
    json_t *jareas = json_object_get(root, "areas");
    uint32_t k = 0;
    for (uint32_t p = 0; p < in.npolys; p++) {
        json_t *poly = json_array_get(polys, p);
        start[p] = k;
        for (size_t i = 0; i < json_array_size(poly); i++)
            pv[k++] = (uint32_t)json_integer_value(json_array_get(poly, i));
        areas[p] = jareas ? (uint8_t)json_integer_value(json_array_get(jareas, p)) : 0;
    }
    start[in.npolys] = k;
    in.verts = verts;
    in.poly_start = start;
    in.poly_verts = pv;
    in.areas = areas;
    float *dverts = NULL;
    uint32_t *dtris = NULL, *dpt = NULL;
    json_t *detail = json_object_get(root, "detail");
    if (detail) {
        dverts = mj_points(json_object_get(detail, "vertices"), &in.ndetail_verts);
        json_t *tris = json_object_get(detail, "triangles");
        in.ndetail_tris = (uint32_t)json_array_size(tris);
        dtris = malloc(sizeof(uint32_t) * 3 * (in.ndetail_tris ? in.ndetail_tris : 1));
        for (uint32_t t = 0; t < in.ndetail_tris; t++)
            for (int j = 0; j < 3; j++)
                dtris[3 * t + j] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(tris, t), j));
        json_t *pt = json_object_get(detail, "polygon_triangles");
        dpt = malloc(sizeof(uint32_t) * 2 * (in.npolys ? in.npolys : 1));
        for (uint32_t p = 0; p < in.npolys; p++)
            for (int j = 0; j < 2; j++)
                dpt[2 * p + j] =
                    (uint32_t)json_integer_value(json_array_get(json_array_get(pt, p), j));
        in.detail_verts = dverts;
        in.detail_tris = dtris;
        in.detail_poly_tris = dpt;
    }
    nav_mesh *m = NULL;
    nav_error err;
    if (nav_mesh_build(&in, NULL, &m, &err) != NAV_OK)
        m = NULL;
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

/* One reference query of a *.queries.json file. */
typedef struct mj_query {
    float start[3], end[3];
    int complete;
    double length2d, length3d;
} mj_query;

/* Loads the queries (malloc'd array, *n entries) or NULL. */
static inline mj_query *mj_queries(const char *path, uint32_t *n) {
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    *n = 0;
    if (!root || !json_is_array(root)) {
        json_decref(root);
        return NULL;
    }
    uint32_t cnt = (uint32_t)json_array_size(root);
    mj_query *q = calloc(cnt ? cnt : 1, sizeof(*q));
    for (uint32_t i = 0; i < cnt; i++) {
        json_t *o = json_array_get(root, i);
        for (int k = 0; k < 3; k++) {
            q[i].start[k] =
                (float)json_number_value(json_array_get(json_object_get(o, "start"), k));
            q[i].end[k] = (float)json_number_value(json_array_get(json_object_get(o, "end"), k));
        }
        const char *st = json_string_value(json_object_get(o, "status"));
        q[i].complete = st && st[0] == 'c';
        q[i].length2d = json_number_value(json_object_get(o, "length2d"));
        q[i].length3d = json_number_value(json_object_get(o, "length3d"));
    }
    *n = cnt;
    json_decref(root);
    return q;
}

#endif
