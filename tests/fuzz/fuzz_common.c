/*
 * fuzz_common: the shared byte reader and the mesh exerciser of the fuzz
 * harnesses (see fuzz_common.h).
 */
#include "tests/fuzz/fuzz_common.h"

#include "nav/nav_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fz_init(fz_reader *r, const uint8_t *data, size_t size) {
    r->p = data;
    r->left = size;
}

uint8_t fz_u8(fz_reader *r) {
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

uint32_t fz_u32(fz_reader *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fz_u8(r) << (8 * i);
    return v;
}

float fz_raw_float(fz_reader *r) {
    uint32_t bits = fz_u32(r);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void fz_require(int cond, const char *what) {
    if (!cond) {
        fprintf(stderr, "fuzz invariant broken: %s\n", what);
        abort();
    }
}

static int finite3(const float v[3]) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* A round-trip must give back a mesh with the same counts: export then
   upload is promised to be lossless (nav_mesh_as_input). */
static void same_counts(const nav_mesh *a, const nav_mesh *b, const char *what) {
    fz_require(nav_mesh_polygon_count(a) == nav_mesh_polygon_count(b), what);
    fz_require(nav_mesh_vertex_count(a) == nav_mesh_vertex_count(b), what);
    fz_require(nav_mesh_link_count(a) == nav_mesh_link_count(b), what);
    fz_require(nav_mesh_component_count(a) == nav_mesh_component_count(b), what);
}

/* Queries between two points with both algorithms, a raycast and a bounded
   reach, checking only what every answer promises: finite output, ids in
   range, counts within the caller's buffers. */
static void exercise_queries(const nav_mesh *m, const float a[3], const float b[3]) {
    static nav_query *q;
    if (!q)
        q = nav_query_new(2048); /* per process, as a worker thread keeps one */
    fz_require(q != NULL, "query scratch");
    uint32_t np = nav_mesh_polygon_count(m);
    float corners[64 * 3];
    uint32_t polys[256], links[16];
    nav_filter f;
    nav_filter_default(&f);
    f.area_cost[1] = 3.0f;
    f.exclude_mask = 1ull << 5;
    for (int algo = NAV_ALGO_AUTO; algo <= NAV_ALGO_CORRIDOR; algo++) {
        nav_path_request req = {.extents = {2, 4, 2},
                                .filter = algo == NAV_ALGO_CORRIDOR ? &f : NULL,
                                .max_nodes = algo == NAV_ALGO_OPTIMAL ? 64 : 0,
                                .algorithm = (nav_algo)algo};
        memcpy(req.start, a, sizeof req.start);
        memcpy(req.end, b, sizeof req.end);
        nav_path_result res = {.corners = corners,
                               .max_corners = 64,
                               .polys = polys,
                               .max_polys = 256,
                               .links = links,
                               .max_links = 16};
        if (nav_find_path(q, m, &req, &res) != NAV_OK)
            continue;
        fz_require(res.ncorners <= 64 && res.npolys <= 256 && res.nlinks <= 16, "path counts");
        fz_require(isfinite(res.length) && res.length >= 0, "path length finite");
        for (uint32_t i = 0; i < res.ncorners; i++)
            fz_require(finite3(&corners[3 * i]), "corner finite");
        for (uint32_t i = 0; i < res.npolys; i++)
            fz_require(polys[i] < np, "path polygon in range");
        for (uint32_t i = 0; i < res.nlinks; i++)
            fz_require(links[i] < nav_mesh_link_count(m), "path link in range");
        fz_require(res.start_poly < np && res.end_poly < np, "snapped polygons in range");

        nav_raycast_result rr = {.polys = polys, .max_polys = 256};
        if (nav_raycast(m, res.start_poly, res.start, b, &f, &rr) == NAV_OK) {
            fz_require(rr.npolys <= 256 && isfinite(rr.t) && rr.t >= 0 && rr.t <= 1,
                       "raycast t in [0, 1]");
            fz_require(finite3(rr.point) && finite3(rr.normal), "raycast point finite");
        }
        uint32_t n = 0;
        double area = 0;
        bool trunc = false;
        if (nav_reach_cost(q, m, res.start_poly, res.start, 25.0, &f, polys, 256, &n, &area,
                           &trunc) == NAV_OK) {
            fz_require(n <= 256 && isfinite(area) && area >= 0, "reach within bounds");
            for (uint32_t i = 0; i < n; i++)
                fz_require(polys[i] < np && (i == 0 || polys[i - 1] < polys[i]),
                           "reach ids in range and ascending");
        }
    }
}

int fz_forged_snapshot;

void fz_exercise_mesh(const nav_mesh *m) {
    uint32_t np = nav_mesh_polygon_count(m);
    float bmin[3], bmax[3];
    nav_mesh_bounds(m, bmin, bmax);
    fz_require(finite3(bmin) && finite3(bmax), "bounds are finite");
    fz_require(isfinite(nav_mesh_area(m)) && nav_mesh_area(m) >= 0, "area is finite");
    fz_require(nav_mesh_component_count(m) <= np, "no more components than polygons");
    (void)nav_mesh_memory(m);
    (void)nav_mesh_uid(m);

    /* Every polygon: its centre of bounds snaps back onto the mesh. */
    uint32_t limit = np < 64 ? np : 64;
    for (uint32_t p = 0; p < limit; p++) {
        (void)nav_mesh_poly_area(m, p);
        fz_require(nav_mesh_poly_component(m, p) < nav_mesh_component_count(m),
                   "component id in range");
        fz_require(isfinite(nav_mesh_poly_area_xz(m, p)), "polygon area finite");
        float c[3] = {(bmin[0] + bmax[0]) * 0.5f, (bmin[1] + bmax[1]) * 0.5f,
                      (bmin[2] + bmax[2]) * 0.5f};
        float y = 0, out[3];
        if (nav_mesh_height(m, p, c[0], c[2], &y) == NAV_OK)
            fz_require(isfinite(y), "height finite");
        if (nav_mesh_closest_on_poly(m, p, c, out) == NAV_OK)
            fz_require(finite3(out), "closest point finite");
        (void)nav_mesh_poly_contains_xz(m, p, c[0], c[2]);
        (void)nav_mesh_reachable(m, p, np - 1 - p);
    }
    for (uint32_t l = 0; l < nav_mesh_link_count(m) && l < 16; l++) {
        float s[3], e[3];
        fz_require(nav_mesh_link_kind(m, l) != NULL, "link kind");
        nav_mesh_link_points(m, l, s, e);
    }

    uint32_t ids[32];
    uint32_t total = nav_mesh_query_box(m, bmin, bmax, ids, 32);
    fz_require(total == np, "the bounds box overlaps every polygon");
    for (uint32_t i = 0; i < total && i < 32; i++)
        fz_require(ids[i] < np, "box query id in range");

    float ext[3] = {2, 4, 2}, snapped[3];
    uint32_t poly = 0;
    if (nav_mesh_nearest(m, bmin, ext, 0, &poly, snapped) == NAV_OK) {
        fz_require(poly < np, "nearest polygon in range");
        fz_require(finite3(snapped), "nearest point finite");
    }

    exercise_queries(m, bmin, bmax);

    /* Serialization round-trip: what was stored must load. */
    uint8_t *blob = NULL;
    size_t len = 0;
    if (nav_mesh_serialize(m, &blob, &len) == NAV_OK) {
        nav_mesh *back = NULL;
        nav_error err;
        fz_require(nav_mesh_deserialize(blob, len, &back, &err) == NAV_OK,
                   "a serialized mesh deserializes");
        same_counts(m, back, "serialization round-trip keeps counts");
        nav_mesh_free(back);
        free(blob);
    }

    /* Export as upload input and rebuild: must be accepted again. */
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    nav_mesh *again = NULL;
    nav_error err;
    nav_status rebuilt = nav_mesh_build(&in, NULL, &again, &err);
    if (!fz_forged_snapshot) {
        fz_require(rebuilt == NAV_OK, "an exported mesh rebuilds");
        same_counts(m, again, "export round-trip keeps counts");
    }
    nav_mesh_free(rebuilt == NAV_OK ? again : NULL);

    char *obj = NULL;
    size_t objlen = 0;
    if (nav_mesh_to_obj(m, &obj, &objlen) == NAV_OK) {
        nav_obj o;
        fz_require(nav_obj_parse(obj, objlen, &o, &err) == NAV_OK, "exported OBJ parses");
        fz_require(o.npolys == np, "exported OBJ keeps polygons");
        nav_obj_free(&o);
        free(obj);
    }
}
