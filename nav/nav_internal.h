/*
 * nav_internal: the layout of a built nav_mesh, shared by nav/ modules only.
 *
 * Conventions every nav/ module relies on:
 * - Polygon vertices are stored with NEGATIVE signed area
 *   0.5 * sum(x_i * z_{i+1} - x_{i+1} * z_i) (Recast's order), so for an edge
 *   a -> b of a polygon, the polygon's interior is on the side where
 *   nav_cross2(a, b, p) = (b.x-a.x)*(p.z-a.z) - (b.z-a.z)*(p.x-a.x) < 0.
 * - Edge e of polygon p goes from vertex poly_verts[s + e] to
 *   poly_verts[s + (e + 1) % n] with s = poly_start[p], n = poly_nverts(p).
 *   poly_nei[s + e] is the polygon across that edge, or NAV_NONE (a wall).
 * - Consecutive collinear vertices are allowed (they keep T-free adjacency).
 * - Geometry is computed in double from the float storage.
 */
#ifndef NAV_INTERNAL_H
#define NAV_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "nav/nav_mesh.h"

#define NAV_NONE UINT32_MAX

/* A stored off-mesh link. Its ends are snapped to polygons at build time. */
typedef struct nav_link {
    float start[3], end[3]; /* as given */
    float radius;
    uint32_t start_poly, end_poly; /* polygons under start/end, NAV_NONE if off mesh */
    float start_on[3], end_on[3];  /* start/end lifted onto those polygons */
    uint8_t area;
    uint8_t bidirectional;
    char kind[NAV_LINK_KIND_MAX];
} nav_link;

/* Node of the bounding volume hierarchy over polygon boxes (spatial index). */
typedef struct nav_bvh_node {
    float bmin[3], bmax[3];
    /* >= 0: leaf holding polygon `index`; < 0: internal, -index is the escape
       offset (number of nodes in this subtree), as in Detour's BV tree. */
    int32_t index;
} nav_bvh_node;

struct nav_mesh {
    uint64_t uid; /* unique per built mesh in this process: cache keys use it */
    uint32_t nverts;
    float *verts; /* 3 per vertex, welded, referenced by polygons only */

    uint32_t npolys;
    uint32_t *poly_start;  /* npolys + 1 */
    uint32_t *poly_verts;  /* vertex ids, negative signed area order */
    uint32_t *poly_nei;    /* neighbour across each edge, NAV_NONE for walls */
    uint8_t *areas;        /* per polygon, 0..63 */
    float *poly_bounds;    /* 6 per polygon: bmin xyz, bmax xyz */
    float contains_margin; /* how far outside its box (xz) a polygon may still "contain" a
                              point, by nav_contains' slack: at most 1 (nav_height.c) */
    float *poly_centroid;  /* 3 per polygon, on the surface */
    double *poly_area;     /* xz area per polygon */

    uint32_t nlinks;
    nav_link *links;
    /* Links that can be taken from each polygon (each two-way link appears
       at both of its ends): ids in link_out[link_out_start[p] ..
       link_out_start[p + 1]); a set high bit (NAV_LINK_REVERSE) means the
       link is taken from end to start. */
    uint32_t *link_out_start; /* npolys + 1 */
    uint32_t *link_out;

    /* Height mesh. detail_tris index the combined space [verts, detail_verts]. */
    uint32_t ndetail_verts;
    float *detail_verts;
    uint32_t ndetail_tris;
    uint32_t *detail_tris;      /* 3 per triangle */
    uint32_t *detail_poly_tris; /* 2 per polygon (first, count), NULL if no detail */

    uint32_t *component; /* undirected component per polygon (links two-way) */
    uint32_t ncomponents;
    /* Directed reachability: strongly connected component per polygon and a
       transitive-closure bit matrix over them (nscc * nscc bits), or NULL
       when too large (then nav_mesh_reachable searches the condensed DAG). */
    uint32_t *scc;
    uint32_t nscc;
    uint64_t *scc_reach;
    uint32_t *scc_dag_start; /* condensed DAG adjacency, nscc + 1 */
    uint32_t *scc_dag;

    float bmin[3], bmax[3];
    double area;

    nav_bvh_node *bvh;
    uint32_t nbvh;

    /* Derived search data (computed by nav_mesh_build, never serialized):
       - poly_twin[s + e]: the slot of the same edge in the neighbour
         poly_nei[s + e] (its local index there is poly_twin - poly_start of
         the neighbour), NAV_NONE for walls;
       - poly_corner[s + k]: 1 when vertex k of p is a corner of the fan of
         polygons joined to p by edges, with no area excluded (the walkable
         angle around it exceeds 180 degrees; see nav_optimal.c);
       - poly_open[p]: how many edges of p have a neighbour (at most 255);
       - area_mask: bit a set when some polygon has area a (an exclude mask
         that misses every present area leaves poly_corner valid);
       - link_area_mask: bit a set when some link has area a (with
         area_mask: the areas whose costs can matter). */
    uint32_t *poly_twin;
    uint8_t *poly_corner;
    uint8_t *poly_open;
    uint64_t area_mask;
    uint64_t link_area_mask;
    /* The corner visibility graph of the exact search (nav_corner.h), built
       with the mesh, or NULL (too large: the interval search answers). */
    struct nav_cgraph *cgraph;
    uint8_t cgraph_origin; /* nav_graph_origin */
};

#define NAV_LINK_REVERSE 0x80000000u

static inline uint32_t nav_poly_nverts(const nav_mesh *m, uint32_t p) {
    return m->poly_start[p + 1] - m->poly_start[p];
}

static inline const float *nav_vert(const nav_mesh *m, uint32_t v) {
    return &m->verts[3 * (size_t)v];
}

/* Vertex k (0-based, wraps) of polygon p. */
static inline const float *nav_poly_vert(const nav_mesh *m, uint32_t p, uint32_t k) {
    uint32_t n = nav_poly_nverts(m, p);
    /* callers pass k < 2n (e + 1, k + n - 1): a subtraction instead of the
       division of k % n, which showed in every walk over a polygon's edges */
    if (k >= n)
        k = k - n < n ? k - n : k % n;
    return nav_vert(m, m->poly_verts[m->poly_start[p] + k]);
}

/* Twice the signed xz area of triangle (a, b, c); < 0 when c is on the
   interior side of edge a -> b of a stored polygon. */
static inline double nav_cross2(const float *a, const float *b, const float *c) {
    return ((double)b[0] - a[0]) * ((double)c[2] - a[2]) -
           ((double)b[2] - a[2]) * ((double)c[0] - a[0]);
}

/* Whether turning from direction u to direction v, the shorter way (never a
   half turn), sweeps across the +x direction: +1 counter-clockwise, -1
   clockwise, else 0 (the +x direction itself counts as above the axis).
   Summed over the edge directions of a closed loop it is the loop's turning
   number, exactly and without trigonometry: the convexity tests ask it
   whether a loop goes around once (atan2 per vertex was a sixth of a
   stored mesh's load). */
static inline int nav_turn_wrap(double ux, double uz, double vx, double vz) {
    double s = ux * vz - uz * vx;
    if (uz < 0 && vz >= 0 && s > 0)
        return 1;
    if (uz >= 0 && vz < 0 && s < 0)
        return -1;
    return 0;
}

static inline double nav_dist2d(const float *a, const float *b) {
    double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2];
    return sqrt(dx * dx + dz * dz);
}

static inline double nav_dist3d(const float *a, const float *b) {
    double dx = (double)b[0] - a[0], dy = (double)b[1] - a[1], dz = (double)b[2] - a[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

#endif
