/*
 * nav_corner_internal: what the corner-graph files share (nav_corner_walk.c,
 * nav_corner_build.c, nav_corner_search.c; nav/ only).
 *
 * Owns the graph's layout and the visibility walker: from a root point,
 * cones of sight are pushed through the portals of the mesh (by adjacency,
 * so floors that overlap in xz never see each other), and every polygon a
 * cone enters is handed to a callback with the cone, which then decides
 * which of the polygon's points are in sight. From one fixed root every
 * point is seen along one ray only, so a walk touches each piece of edge
 * in sight once: its cost is the size of the region in sight.
 */
#ifndef NAV_CORNER_INTERNAL_H
#define NAV_CORNER_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "nav/nav_corner.h"
#include "nav/nav_internal.h"

/*
 * Nodes: corners [0, ncorners), then for link l the node ncorners + 2 l at
 * its start point and ncorners + 2 l + 1 at its end point (both as snapped
 * on the mesh: start_on, end_on). A link whose start or end is off the
 * mesh has both nodes, but they are in no polygon's list and have no edges.
 */
/* A graph edge: its target alone. The search reads the target's position
   from gr->fxz, 8 bytes a node; with the position inline an edge was 12
   bytes and town's adjacency alone outgrew a core's L2 cache. */
typedef struct nav_cedge {
    uint32_t to;
} nav_cedge;

/* What expanding node u reads, in half a cache line: copies of xz and
   wall (corners only; every one a mesh vertex coordinate, a float, so the
   doubles the search computes with are the same) and u's edge range
   adj_start[u] .. node[u + 1].adj_start, split at adj_mid[u] (node has a
   sentinel record past the last node). From the separate arrays an
   expansion took four or five cache misses; from this, one. Half the
   size of the record of doubles it replaced (a pass over town short ran
   6 % faster with the edges shrunk; the records' own share was too small
   to measure). Filled by nav_corner_build.c. */
typedef struct nav_cnode {
    float x, z;
    float wall[4];
    uint32_t adj_start, adj_mid;
} nav_cnode;

struct nav_cgraph {
    uint32_t ncorners, nnodes;
    double *xz;          /* 2 per node */
    float *y;            /* per node: height (vertex's, or the link point's) */
    uint32_t *poly;      /* per node: a polygon holding it, NAV_NONE for an unusable link */
    double *wall;        /* 4 per corner: far ends (x, z, x, z) of its two wall edges */
    uint32_t *corner_of; /* per polygon corner slot (poly_start[p] + k): node id or NAV_NONE */
    uint32_t *pts_start; /* npolys + 1: link nodes lying in each polygon, in pts */
    uint32_t *pts;
    /* Edges of u: adj[adj_start[u] .. adj_start[u + 1]), the visible
       neighbours, tangent at each corner end. A corner's are split at
       adj_mid[u]: first those with the obstacle at u on the negative side
       of the line u -> v, then the positive ones (an edge with both wall
       ends on the line is in both halves). A taut path keeps the obstacle
       on one side through a bend, so the search scans one half. */
    uint32_t *adj_start, *adj_mid;
    nav_cedge *adj;
    /* adj's targets as 16-bit ids when every id fits (nnodes <= 65,536),
       else NULL: what the search reads. Half the bytes of adj: on town a
       third of the node expansions missed the core's L2 cache on their
       edge list (callgrind, a 1 MB L2), and a short query's time is more
       cache misses and mispredictions than instructions. adj stays for
       the build, the stored form and the table. */
    uint16_t *adj16;
    nav_cnode *node; /* nnodes + 1 entries (a sentinel), 64-byte aligned */
    float *fxz;      /* 2 per node: xz as floats (the edge scan's positions) */
    uint64_t nedges;
    size_t memory;
    /* The walk mesh (nav_corner_merge.c): the same region in fewer, larger
       convex pieces, on which every sight cone is walked. wm has only
       npolys, nverts, verts (the mesh's, borrowed), poly_start,
       poly_verts, poly_nei and poly_twin. wof: original polygon -> piece;
       wrep: piece -> one of its polygons; wcorner_of: per piece slot, the
       corner node or NAV_NONE; wpoly: per node, its piece; wpts_start /
       wpts: link nodes per piece; mpolys: the mesh's polygon count (wof's
       length). */
    nav_mesh *wm;
    uint32_t *wof, *wrep, *wcorner_of, *wpoly;
    uint32_t *wpts_start, *wpts;
    uint32_t mpolys;
    /* The all-pairs table (nav_corner_table.c), graphs of at most
       NAV_CORNER_TABLE_MAX_NODES nodes, else NULL: td[s * nnodes + g] the
       shortest length from node s to node g over edges and link hops
       (INFINITY: none), tnext the node after s toward g, with
       NAV_CORNER_TABLE_HOP set when that step is the link's hop
       (NAV_CORNER_TABLE_NONE: no path). link_areas: the areas of the
       mesh's links (a query excluding one cannot use the table). */
    double *td;
    uint16_t *tnext;
    uint64_t link_areas;
    double cell; /* sqrt(the mesh's xz area / its polygons): a polygon's typical size */
};

#define NAV_CORNER_TABLE_MAX_NODES 1024
#define NAV_CORNER_TABLE_HOP 0x8000u
#define NAV_CORNER_TABLE_NONE 0xffffu
_Static_assert(NAV_CORNER_TABLE_MAX_NODES <= NAV_CORNER_TABLE_HOP,
               "tnext holds a node id below the hop bit");

/* Builds g's table when g is small enough (else leaves it NULL) and sets
   link_areas; needs the nodes, the edges and m's links. NAV_E_NOMEM on
   allocation failure (no table then). Free: nav_corner_table_free; bytes:
   nav_corner_table_memory. */
nav_status nav_corner_table_build(const nav_mesh *m, nav_cgraph *g);
void nav_corner_table_free(nav_cgraph *g);
size_t nav_corner_table_memory(const nav_cgraph *g);

/* The stored form's words, little-endian: put writes v at out + *at (out
   NULL: only counts) and advances *at. */
static inline void nav_corner_put_u32(uint8_t *out, size_t *at, uint32_t v) {
    if (out) {
        out[*at] = (uint8_t)v;
        out[*at + 1] = (uint8_t)(v >> 8);
        out[*at + 2] = (uint8_t)(v >> 16);
        out[*at + 3] = (uint8_t)(v >> 24);
    }
    *at += 4;
}

static inline uint32_t nav_corner_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Builds the walk mesh fields of g (needs its nodes); frees them (and
   clears the pointers); bytes. */
nav_status nav_corner_merge(const nav_mesh *m, nav_cgraph *g);
void nav_corner_merge_free(nav_cgraph *g);
size_t nav_corner_merge_memory(const nav_cgraph *g);
/* The merge's result in stored form: u32 pieces | u32 mesh polygons |
   mesh polygons u32 wof (pieces numbered by their first polygon). save
   writes it at out + *at (out NULL: only counts) and advances *at. load
   rebuilds the walk mesh from p[0..len) in linear time, exactly as
   nav_corner_merge would give it, after checking that the pieces are a
   partition it could have made (a CRC can be forged); NAV_E_CORRUPT (g's
   walk-mesh fields left empty) when not: the caller merges. */
void nav_corner_merge_save(const nav_cgraph *g, uint8_t *out, size_t *at);
nav_status nav_corner_merge_load(const nav_mesh *m, nav_cgraph *g, const uint8_t *p, size_t len);

/* Twice the signed area of (a, b, p), exactly 0 within a relative 1e-11 of
   the line ab (the interval search's tolerance, nav_optimal.c). */
static inline double nav_corner_orient(double ax, double az, double bx, double bz, double px,
                                       double pz) {
    double ux = bx - ax, uz = bz - az, vx = px - ax, vz = pz - az;
    double c = ux * vz - uz * vx;
    double tol = 1e-11 * (fabs(ux) + fabs(uz)) * (fabs(vx) + fabs(vz));
    return fabs(c) <= tol ? 0.0 : c;
}

/* orient(a, b, p), or 0 when p lies within a few float roundings of the
   line through a and b (|orient| / |b - a| is p's distance from it). For
   the pruning rules only: a start snapped onto a wall edge lies a rounding
   off the wall's line, and must count as on it, so the rules can only keep
   more edges than exact arithmetic would, never fewer. */
static inline double nav_corner_side(double ax, double az, double bx, double bz, double px,
                                     double pz) {
    double ux = bx - ax, uz = bz - az;
    double c = ux * (pz - az) - uz * (px - ax);
    double eps = 5e-7 * (1.0 + fabs(ax) + fabs(az));
    return c * c <= eps * eps * (ux * ux + uz * uz) ? 0.0 : c;
}

/* Is the segment from (px, pz) to corner c tangent to the obstacle at c:
   both wall edges at c on one side of the line (or on it)? Only then can a
   shortest path bend at c after (or before) that segment. */
static inline int nav_corner_tangent_at(double cx, double cz, const double w[4], double px,
                                        double pz) {
    /* orient(p, c, w) = orient(c, w, p): p's side of each wall's line */
    double o1 = nav_corner_side(cx, cz, w[0], w[1], px, pz);
    double o2 = nav_corner_side(cx, cz, w[2], w[3], px, pz);
    return !((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0));
}

static inline int nav_corner_tangent(const nav_cgraph *g, uint32_t c, double px, double pz) {
    return nav_corner_tangent_at(g->xz[2 * (size_t)c], g->xz[2 * (size_t)c + 1],
                                 &g->wall[4 * (size_t)c], px, pz);
}

/* ---- the visibility walker ---- */

/* The cone through which a walk entered a polygon: everything (the root
   is in the polygon or on its boundary) or the rays from the root through
   the interval [a, b] of the entry edge (a on the cone's positive side:
   orient(r, a, p) >= 0 and orient(r, b, p) <= 0 for p inside). */
typedef struct nav_cone {
    int all;
    double rx, rz, ax, az, bx, bz;
} nav_cone;

/* Is (x, z), a point of the polygon the cone entered, in sight (closed)? */
static inline int nav_cone_sees(const nav_cone *c, double x, double z) {
    return c->all || (nav_corner_orient(c->rx, c->rz, c->bx, c->bz, x, z) <= 0 &&
                      nav_corner_orient(c->rx, c->rz, c->ax, c->az, x, z) >= 0);
}

enum { NAV_CW_START, NAV_CW_FULL, NAV_CW_NORMAL };

/* A cone waiting to be expanded: the polygon it enters, how (START: the
   root is in it; FULL: the root is on its boundary; NORMAL: through the
   interval [a, b] of its local edge el). */
typedef struct nav_cw_item {
    double ax, az, bx, bz;
    uint32_t poly, el; /* el: NAV_NONE when entered from nowhere */
    uint8_t kind;
} nav_cw_item;

static inline void nav_cw_cone(const nav_cw_item *it, double rx, double rz, nav_cone *c) {
    c->all = it->kind != NAV_CW_NORMAL;
    c->rx = rx, c->rz = rz;
    c->ax = it->ax, c->az = it->az, c->bx = it->bx, c->bz = it->bz;
}

/* Walker scratch: a stack of cones and a per-polygon stamp (grow only). */
typedef struct nav_cwalk {
    nav_cw_item *stack;
    uint32_t cap, top;
    uint32_t *pstamp;
    uint32_t npstamp;
    uint32_t gen;
    uint32_t *sq, *spar; /* segment walk: queue of polygons and their parents */
    uint32_t scap;
    /* after nav_cwalk_expand: bit k set when local vertex k of the cone's
       polygon is in sight (what nav_cone_sees says of it), computed from
       the orientations the expansion needs anyway; NAV_CW_SEEN_ALL for a
       whole polygon in sight or more than 64 vertices (then ask the cone) */
    uint64_t seen;
} nav_cwalk;

#define NAV_CW_SEEN_ALL UINT64_MAX

void nav_cwalk_free(nav_cwalk *w);

/* Called for every (polygon, cone) the walk enters, after the cone's
   expansion: seen is w->seen for it (which vertices of poly are in sight).
   Non-zero stops the walk. */
typedef int (*nav_cwalk_fn)(void *ctx, uint32_t poly, const nav_cone *cone, uint64_t seen);

enum { NAV_CW_DONE = 0, NAV_CW_STOPPED = 1, NAV_CW_LIMIT = -1, NAV_CW_NOMEM = -2 };

/*
 * Walks the region in sight of (rx, rz). at_vertex = 0: the root is in
 * polygon `poly` (or a rounding error off its boundary); at_vertex = 1: the
 * root is a vertex of `poly`, and the walk covers the whole fan around it.
 * Every polygon is passable (the graph is built and searched with nothing
 * excluded). *steps counts the cones expanded (added to); more than limit
 * ends the walk with NAV_CW_LIMIT.
 */
int nav_cwalk_run(nav_cwalk *w, const nav_mesh *m, double rx, double rz, uint32_t poly,
                  int at_vertex, uint32_t limit, nav_cwalk_fn fn, void *ctx, uint32_t *steps);

/* A walk one cone at a time (the search orders cones itself): begin puts
   the seed cone on w->stack (w->top = 1); expand pushes the children of
   `it` there and sets w->seen. Both return 0 when the scratch cannot
   grow. */
int nav_cwalk_begin(nav_cwalk *w, const nav_mesh *m, uint32_t poly, int at_vertex);
int nav_cwalk_expand(nav_cwalk *w, const nav_mesh *m, const nav_cw_item *it, double rx, double rz);

/*
 * The polygons along the xz segment a -> b, from polygon `from` (which holds
 * a) to the first polygon for which is_target says yes: one exit edge at a
 * time (after turning round a's fan when a is a vertex of `from`), or, when
 * the segment touches a vertex or runs along an edge, by a breadth-first
 * walk over the polygons the segment touches. Writes the chain from `from` to
 * the target (both included) into out[0..*n) and returns 1; 0 when no chain
 * was found within max polygons or the scratch could not grow.
 * What is_target may say, the walk uses to ask less: target_poly is the one
 * polygon it says yes to, or NAV_NONE when every polygon it says yes to has
 * b as a vertex (the walk then asks only where b can be).
 */
typedef int (*nav_seg_target_fn)(const void *ctx, uint32_t poly);
int nav_cwalk_segment(nav_cwalk *w, const nav_mesh *m, uint32_t from, double ax, double az,
                      double bx, double bz, nav_seg_target_fn is_target, const void *ctx,
                      uint32_t target_poly, uint32_t *out, uint32_t max, uint32_t *n);

/*
 * Is b in sight of a: does the segment a -> b lie in the walkable region,
 * walked by adjacency from polygon `from` (which holds a) to a polygon
 * is_target says yes to? The segment walk's question without its chain
 * (target_poly and out, max as there): 1 yes, 0 no, -1 when the scratch
 * cannot grow. A segment that grazes a vertex is in sight (it lies in the
 * closed region), where a cone may stop at the vertex.
 */
int nav_cwalk_sees(nav_cwalk *w, const nav_mesh *m, uint32_t from, double ax, double az, double bx,
                   double bz, nav_seg_target_fn is_target, const void *ctx, uint32_t target_poly,
                   uint32_t *out, uint32_t max);

#endif
