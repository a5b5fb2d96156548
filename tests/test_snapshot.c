#include "tests/test_snapshot.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_corner_internal.h"
#include "nav/nav_mesh_internal.h"
#include "nav/nav_query.h"
#include "tests/test_fixtures.h"

#define SAME(field, count)                                                                         \
    do {                                                                                           \
        ck_assert_msg((a->field == NULL) == (b->field == NULL), #field " presence");               \
        if (a->field)                                                                              \
            ck_assert_msg(memcmp(a->field, b->field, (size_t)(count) * sizeof *a->field) == 0,     \
                          #field " differs");                                                      \
    } while (0)

static void same_ext(const nav_mesh *ma, const nav_mesh *mb) {
    const nav_mesh_ext *a = nav_mesh_ext_of(ma), *b = nav_mesh_ext_of(mb);
    uint32_t np = ma->npolys;
    SAME(link_in, ma->nlinks);
    SAME(tri_grid_of, np);
    uint32_t ngrids = 0;
    size_t ncells = 0;
    for (uint32_t p = 0; a->tri_grid_of && p < np; p++)
        if (a->tri_grid_of[p] != NAV_NONE) {
            const nav_tri_grid *g = &a->tri_grids[a->tri_grid_of[p]];
            ngrids++;
            ncells = g->first_cell + (size_t)g->nx * g->nz;
        }
    SAME(tri_grids, ngrids);
    if (a->grid_cells) {
        SAME(grid_cells, ncells + 1);
        SAME(grid_tris, a->grid_cells[ncells]);
    }
    ck_assert_uint_eq(a->memory, b->memory);
}

void snap_assert_same(const nav_mesh *a, const nav_mesh *b) {
    ck_assert_uint_eq(a->nverts, b->nverts);
    ck_assert_uint_eq(a->npolys, b->npolys);
    ck_assert_uint_eq(a->nlinks, b->nlinks);
    ck_assert_uint_eq(a->ndetail_verts, b->ndetail_verts);
    ck_assert_uint_eq(a->ndetail_tris, b->ndetail_tris);
    ck_assert_uint_eq(a->ncomponents, b->ncomponents);
    ck_assert_uint_eq(a->nscc, b->nscc);
    ck_assert_uint_eq(a->nbvh, b->nbvh);
    size_t nidx = a->poly_start[a->npolys];
    SAME(verts, 3 * (size_t)a->nverts);
    SAME(poly_start, a->npolys + 1);
    SAME(poly_verts, nidx);
    SAME(poly_nei, nidx);
    SAME(poly_twin, nidx);
    SAME(poly_corner, nidx);
    SAME(poly_open, a->npolys);
    SAME(areas, a->npolys);
    SAME(poly_bounds, 6 * (size_t)a->npolys);
    SAME(poly_centroid, 3 * (size_t)a->npolys);
    SAME(poly_area, a->npolys);
    ck_assert(memcmp(&a->contains_margin, &b->contains_margin, sizeof(float)) == 0);
    SAME(links, a->nlinks);
    SAME(link_out_start, a->npolys + 1);
    SAME(link_out, a->link_out_start[a->npolys]);
    SAME(detail_verts, 3 * (size_t)a->ndetail_verts);
    SAME(detail_tris, 3 * (size_t)a->ndetail_tris);
    SAME(detail_poly_tris, 2 * (size_t)a->npolys);
    SAME(component, a->npolys);
    SAME(scc, a->npolys);
    SAME(scc_dag_start, a->nscc + 1);
    SAME(scc_dag, a->scc_dag_start[a->nscc]);
    SAME(scc_reach, (size_t)a->nscc * ((a->nscc + 63) / 64));
    SAME(bvh, a->nbvh);
    ck_assert(memcmp(a->bmin, b->bmin, sizeof a->bmin) == 0);
    ck_assert(memcmp(a->bmax, b->bmax, sizeof a->bmax) == 0);
    ck_assert(memcmp(&a->area, &b->area, sizeof a->area) == 0);
    ck_assert(a->area_mask == b->area_mask && a->link_area_mask == b->link_area_mask);
    ck_assert_uint_eq(nav_corner_node_count(a->cgraph), nav_corner_node_count(b->cgraph));
    ck_assert_uint_eq(nav_corner_edge_count(a->cgraph), nav_corner_edge_count(b->cgraph));
    same_ext(a, b);
}

/* A point in the mesh's box, a little beyond it now and then. */
static void rand_point(const nav_mesh *m, uint32_t *rng, float p[3]) {
    for (int a = 0; a < 3; a++) {
        float u = (float)(fx_rand(rng) % 10001) / 10000.0f * 1.1f - 0.05f;
        p[a] = m->bmin[a] + u * (m->bmax[a] - m->bmin[a]);
    }
}

/* One query of each kind from the same random points; the answers are
   written to out (compared by the caller) or dropped (out NULL). */
typedef struct snap_answers {
    nav_status st_near[2], st_path[2], st_ray, st_reach;
    uint32_t poly[2];
    float near[2][3];
    float corners[2][3 * 256];
    uint32_t ncorners[2], flags[2], npolys_path[2];
    double length[2];
    bool hit, reachable;
    float t, point[3], height;
    nav_status st_height;
    uint32_t reach[512], nreach;
    double reach_area;
} snap_answers;

static void answer(const nav_mesh *m, nav_query *q, uint32_t seed, snap_answers *o) {
    memset(o, 0, sizeof *o);
    uint32_t rng = seed ? seed : 1;
    float pt[2][3], ext[3] = {2, 4, 2};
    for (int i = 0; i < 2; i++) {
        rand_point(m, &rng, pt[i]);
        o->st_near[i] = nav_mesh_nearest(m, pt[i], ext, 0, &o->poly[i], o->near[i]);
    }
    for (int alg = 0; alg < 2; alg++) {
        nav_path_request req;
        memset(&req, 0, sizeof req);
        memcpy(req.start, pt[0], sizeof req.start);
        memcpy(req.end, pt[1], sizeof req.end);
        memcpy(req.extents, ext, sizeof ext);
        req.algorithm = alg ? NAV_ALGO_CORRIDOR : NAV_ALGO_AUTO;
        uint32_t polys[1024];
        nav_path_result res;
        memset(&res, 0, sizeof res);
        res.corners = o->corners[alg];
        res.max_corners = 256;
        res.polys = polys;
        res.max_polys = 1024;
        o->st_path[alg] = nav_find_path(q, m, &req, &res);
        o->ncorners[alg] = res.ncorners;
        o->flags[alg] = res.flags;
        o->length[alg] = res.length;
        o->npolys_path[alg] = res.npolys;
    }
    if (o->st_near[0] != NAV_OK || o->st_near[1] != NAV_OK)
        return;
    o->reachable = nav_mesh_reachable(m, o->poly[0], o->poly[1]);
    o->st_height = nav_mesh_height(m, o->poly[0], o->near[0][0], o->near[0][2], &o->height);
    nav_raycast_result rr;
    memset(&rr, 0, sizeof rr);
    o->st_ray = nav_raycast(m, o->poly[0], o->near[0], o->near[1], NULL, &rr);
    o->hit = rr.hit;
    o->t = rr.t;
    memcpy(o->point, rr.point, sizeof o->point);
    bool trunc;
    o->st_reach = nav_reach_cost(q, m, o->poly[0], o->near[0], 8.0, NULL, o->reach, 512, &o->nreach,
                                 &o->reach_area, &trunc);
}

void snap_assert_same_answers(const nav_mesh *a, const nav_mesh *b, uint32_t seed, int nq) {
    nav_query *q = nav_query_new(1u << 16);
    ck_assert_ptr_nonnull(q);
    snap_answers *x = malloc(sizeof *x), *y = malloc(sizeof *y);
    for (int i = 0; i < nq; i++) {
        answer(a, q, seed * 7919u + (uint32_t)i, x);
        answer(b, q, seed * 7919u + (uint32_t)i, y);
        /* the struct is zeroed then filled field by field: equal bytes
           means every answer is equal */
        ck_assert_msg(memcmp(x, y, sizeof *x) == 0, "query %d of seed %u answers differ", i, seed);
    }
    free(x);
    free(y);
    nav_query_free(q);
}

void snap_exercise(const nav_mesh *m, uint32_t seed, int nq) {
    nav_query *q = nav_query_new(4096);
    ck_assert_ptr_nonnull(q);
    snap_answers *x = malloc(sizeof *x);
    for (int i = 0; i < nq; i++)
        answer(m, q, seed + (uint32_t)i, x);
    free(x);
    nav_query_free(q);
}

static void walk_mem_eq(const void *a, const void *b, size_t n, const char *what) {
    ck_assert_msg(n == 0 || memcmp(a, b, n) == 0, "walk mesh %s differs", what);
}

void snap_assert_same_walk(const struct nav_cgraph *a, const struct nav_cgraph *b) {
    const nav_mesh *x = a->wm, *y = b->wm;
    ck_assert_ptr_nonnull(y);
    ck_assert_uint_eq(x->npolys, y->npolys);
    ck_assert_uint_eq(x->nverts, y->nverts);
    ck_assert_uint_eq(a->mpolys, b->mpolys);
    ck_assert_uint_eq(a->nnodes, b->nnodes);
    size_t np = x->npolys, slots = x->poly_start[np];
    walk_mem_eq(x->poly_start, y->poly_start, (np + 1) * 4, "poly_start");
    walk_mem_eq(x->poly_verts, y->poly_verts, slots * 4, "poly_verts");
    walk_mem_eq(x->poly_nei, y->poly_nei, slots * 4, "poly_nei");
    walk_mem_eq(x->poly_twin, y->poly_twin, slots * 4, "poly_twin");
    walk_mem_eq(a->wcorner_of, b->wcorner_of, slots * 4, "wcorner_of");
    walk_mem_eq(a->wof, b->wof, (size_t)a->mpolys * 4, "wof");
    walk_mem_eq(a->wrep, b->wrep, np * 4, "wrep");
    walk_mem_eq(a->wpoly, b->wpoly, (size_t)a->nnodes * 4, "wpoly");
    walk_mem_eq(a->wpts_start, b->wpts_start, (np + 1) * 4, "wpts_start");
    walk_mem_eq(a->wpts, b->wpts, (size_t)a->wpts_start[np] * 4, "wpts");
}

void snap_check(const nav_mesh *m, uint32_t seed, int nq) {
    uint8_t *blob;
    size_t len;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    ck_assert(blob[4] == 3);
    nav_mesh *snap = NULL, *rebuilt = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_deserialize(blob, len, &snap, &err) == NAV_OK, "%s", err.message);
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    ck_assert_msg(nav_mesh_build(&in, NULL, &rebuilt, &err) == NAV_OK, "%s", err.message);
    ck_assert_int_eq(nav_mesh_graph_origin(snap), m->cgraph ? NAV_GRAPH_LOADED : NAV_GRAPH_NONE);
    snap_assert_same(snap, rebuilt);
    snap_assert_same(snap, m);
    if (m->cgraph) /* the walk mesh read back from the blob is the merge's */
        snap_assert_same_walk(m->cgraph, snap->cgraph);
    ck_assert_uint_ne(nav_mesh_uid(snap), nav_mesh_uid(m));
    snap_assert_same_answers(snap, rebuilt, seed, nq);
    free(blob);
    nav_mesh_free(snap);
    nav_mesh_free(rebuilt);
}
