/*
 * nav_index: the spatial index of a mesh and the point queries built on it.
 *
 * Owns the bounding volume hierarchy over polygon boxes (one polygon per
 * leaf, nodes in depth-first order with escape offsets as in Detour's BV
 * tree, so traversal needs no stack and no recursion), nav_mesh_query_box
 * and nav_mesh_nearest. Building splits at the median of the longest axis of
 * the box centres (quickselect), O(n log n) overall.
 */
#include <stdlib.h>

#include "nav/nav_mesh_internal.h"

/* fminf/fmaxf are library calls here (NaN rules); inputs are finite. */
static inline float nav_minf(float a, float b) {
    return a < b ? a : b;
}
static inline float nav_maxf(float a, float b) {
    return a > b ? a : b;
}
static inline double nav_maxd(double a, double b) {
    return a > b ? a : b;
}

typedef struct nav_bvh_item {
    float c[3]; /* box centre */
    uint32_t poly;
} nav_bvh_item;

typedef struct nav_bvh_builder {
    const nav_mesh *m;
    nav_bvh_item *items;
    nav_bvh_node *nodes;
    uint32_t nnodes;
} nav_bvh_builder;

/* Orders by the axis coordinate, then polygon id, so builds are deterministic. */
static bool nav_item_less(const nav_bvh_item *a, const nav_bvh_item *b, int axis) {
    if (a->c[axis] != b->c[axis])
        return a->c[axis] < b->c[axis];
    return a->poly < b->poly;
}

static void nav_item_swap(nav_bvh_item *a, nav_bvh_item *b) {
    nav_bvh_item t = *a;
    *a = *b;
    *b = t;
}

#define NAV_ITEM_CMP(AX)                                                                           \
    static int nav_item_cmp##AX(const void *pa, const void *pb) {                                  \
        const nav_bvh_item *a = pa, *b = pb;                                                       \
        return nav_item_less(a, b, AX) ? -1 : nav_item_less(b, a, AX);                             \
    }
NAV_ITEM_CMP(0)
NAV_ITEM_CMP(1)
NAV_ITEM_CMP(2)

/*
 * Quickselect: afterwards items[k] is in its sorted place, smaller ones
 * before. Median-of-three pivots are linear on real meshes; if an input
 * defeats them (many rounds without converging) the range is sorted instead,
 * so a crafted upload cannot make the build quadratic.
 */
static void nav_select(nav_bvh_item *it, uint32_t lo, uint32_t hi, uint32_t k, int axis) {
    static int (*const cmp[3])(const void *, const void *) = {nav_item_cmp0, nav_item_cmp1,
                                                              nav_item_cmp2};
    for (int rounds = 0; hi > lo + 1; rounds++) {
        if (rounds > 64) {
            qsort(&it[lo], hi - lo, sizeof *it, cmp[axis]);
            return;
        }
        uint32_t mid = lo + (hi - lo) / 2;
        /* median of three into it[lo] as the pivot */
        if (nav_item_less(&it[mid], &it[lo], axis))
            nav_item_swap(&it[mid], &it[lo]);
        if (nav_item_less(&it[hi - 1], &it[lo], axis))
            nav_item_swap(&it[hi - 1], &it[lo]);
        if (nav_item_less(&it[hi - 1], &it[mid], axis))
            nav_item_swap(&it[hi - 1], &it[mid]);
        nav_item_swap(&it[lo], &it[mid]);
        nav_bvh_item pivot = it[lo];
        uint32_t store = lo + 1;
        for (uint32_t i = lo + 1; i < hi; i++)
            if (nav_item_less(&it[i], &pivot, axis))
                nav_item_swap(&it[i], &it[store++]);
        nav_item_swap(&it[lo], &it[store - 1]);
        uint32_t p = store - 1;
        if (k == p)
            return;
        if (k < p)
            hi = p;
        else
            lo = p + 1;
    }
}

/* Depth is log2(n) thanks to median splits, so recursion is safe here. */
static void nav_bvh_subdivide(nav_bvh_builder *b, uint32_t lo, uint32_t hi) {
    uint32_t self = b->nnodes++;
    nav_bvh_node *node = &b->nodes[self];
    for (int a = 0; a < 3; a++) {
        node->bmin[a] = INFINITY;
        node->bmax[a] = -INFINITY;
    }
    float cmin[3] = {INFINITY, INFINITY, INFINITY}, cmax[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = lo; i < hi; i++) {
        const float *pb = &b->m->poly_bounds[6 * (size_t)b->items[i].poly];
        for (int a = 0; a < 3; a++) {
            node->bmin[a] = nav_minf(node->bmin[a], pb[a]);
            node->bmax[a] = nav_maxf(node->bmax[a], pb[3 + a]);
            cmin[a] = nav_minf(cmin[a], b->items[i].c[a]);
            cmax[a] = nav_maxf(cmax[a], b->items[i].c[a]);
        }
    }
    if (hi - lo == 1) {
        node->index = (int32_t)b->items[lo].poly;
        return;
    }
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (cmax[a] - cmin[a] > cmax[axis] - cmin[axis])
            axis = a;
    uint32_t mid = lo + (hi - lo) / 2;
    nav_select(b->items, lo, hi, mid, axis);
    nav_bvh_subdivide(b, lo, mid);
    nav_bvh_subdivide(b, mid, hi);
    b->nodes[self].index = -(int32_t)(b->nnodes - self);
}

nav_status nav_index_build(nav_mesh *m) {
    /* A polygon id must fit a non-negative int32 leaf index. */
    if (m->npolys == 0 || m->npolys > (uint32_t)INT32_MAX / 2)
        return NAV_E_LIMIT;
    nav_bvh_builder b = {m, NULL, NULL, 0};
    b.items = malloc((size_t)m->npolys * sizeof *b.items);
    b.nodes = malloc(((size_t)m->npolys * 2 - 1) * sizeof *b.nodes);
    if (!b.items || !b.nodes) {
        free(b.items);
        free(b.nodes);
        return NAV_E_NOMEM;
    }
    for (uint32_t p = 0; p < m->npolys; p++) {
        const float *pb = &m->poly_bounds[6 * (size_t)p];
        for (int a = 0; a < 3; a++)
            b.items[p].c[a] = 0.5f * (pb[a] + pb[3 + a]);
        b.items[p].poly = p;
    }
    nav_bvh_subdivide(&b, 0, m->npolys);
    free(b.items);
    m->bvh = b.nodes;
    m->nbvh = b.nnodes;
    return NAV_OK;
}

/* All six tests joined without branches: which of them fails first is a
   coin toss on a tree walk, and a short-circuit chain mispredicted about
   one node in three (a fifth of a short town query's mispredictions were
   the two snaps' walks). */
static bool nav_overlap(const float *amin, const float *amax, const float *bmin,
                        const float *bmax) {
    return (amin[0] <= bmax[0]) & (amax[0] >= bmin[0]) & (amin[1] <= bmax[1]) &
           (amax[1] >= bmin[1]) & (amin[2] <= bmax[2]) & (amax[2] >= bmin[2]);
}

uint32_t nav_mesh_query_box(const nav_mesh *m, const float bmin[3], const float bmax[3],
                            uint32_t *polys, uint32_t max) {
    if (!m || !bmin || !bmax || (max && !polys))
        return 0;
    for (int a = 0; a < 3; a++)
        if (isnan(bmin[a]) || isnan(bmax[a]))
            return 0;
    uint32_t count = 0;
    for (uint32_t i = 0; i < m->nbvh;) {
        const nav_bvh_node *n = &m->bvh[i];
        bool hit = nav_overlap(bmin, bmax, n->bmin, n->bmax);
        bool leaf = n->index >= 0;
        if (leaf && hit) {
            if (count < max)
                polys[count] = (uint32_t)n->index;
            count++;
        }
        i += (hit || leaf) ? 1 : (uint32_t)(-n->index);
    }
    return count;
}

/* Best candidate so far, ranked by (d, polygon id); ties go to the lower id. */
typedef struct nav_nearest_best {
    uint32_t poly;
    double d;
    float pt[3];
} nav_nearest_best;

static void nav_nearest_offer(nav_nearest_best *b, uint32_t q, double d, const float pt[3]) {
    if (d < b->d || (d == b->d && q < b->poly)) {
        b->poly = q;
        b->d = d;
        b->pt[0] = pt[0];
        b->pt[1] = pt[1];
        b->pt[2] = pt[2];
    }
}

/* Lower bound of |surface y - p.y| anywhere on polygon q: its y range
   includes its detail vertices, and the height lookup leaves it only by its
   barycentric slack and rounding, which yslack covers generously. */
static double nav_y_gap(const float *pb, const float p[3]) {
    double yslack = 1e-4 * (1.0 + fabs((double)pb[1]) + fabs((double)pb[4]));
    return nav_maxd(nav_maxd((double)pb[1] - p[1], (double)p[1] - pb[4]) - yslack, 0.0);
}

/*
 * Traverses the index directly (no candidate buffer, so no allocation).
 * The answer is the polygon point closest to p in 3-D: for a polygon that
 * contains p in xz, the surface point straight below or above p; for the
 * others, the closest point of their boundary. It only counts when the
 * snapped point stays in the box p +- ext. Ties go to the lower polygon id.
 * (A polygon containing p in xz does not win by that alone: a point just off
 * the edge of a bridge snaps to the bridge, not to the floor 3 m below.)
 *
 * Two passes, because height lookups are the expensive part. The first
 * visits only the polygons containing p in xz (a box whose xz extent is
 * the containment slack's reach, m->contains_margin); a query point usually
 * lies on or near one, which gives a tight distance d, and d = 0 ends the
 * search (nothing is closer, and every polygon tying at 0 contains p). The
 * second visits every polygon in the box shrunk to d (plus that reach) in
 * x and z: no polygon farther than that in xz can be closer. A candidate
 * gets a height lookup only when bounds from its box (y range, xz
 * distance) leave it a chance to win or tie. Only strictly worse candidates
 * are skipped, so the result equals the exhaustive search's.
 */
nav_status nav_nearest_unchecked(const nav_mesh *m, const float p[3], const float ext[3],
                                 uint64_t exclude_mask, uint32_t *poly, float out[3]) {
    nav_nearest_best best = {NAV_NONE, INFINITY, {0, 0, 0}};
    for (int pass = 0; pass < 2; pass++) {
        float bmin[3], bmax[3];
        for (int a = 0; a < 3; a++) {
            float e = ext[a];
            if (a != 1) {
                /* a little over d or the reach: ties and slack still count */
                double want = pass == 0 ? 0 : best.d * (1 + 1e-6);
                want += m->contains_margin + 1e-6;
                if (want < e)
                    e = (float)want;
            }
            bmin[a] = p[a] - e;
            bmax[a] = p[a] + e;
        }
        for (uint32_t i = 0; i < m->nbvh;) {
            const nav_bvh_node *n = &m->bvh[i];
            bool hit = nav_overlap(bmin, bmax, n->bmin, n->bmax);
            bool leaf = n->index >= 0;
            i += (hit || leaf) ? 1 : (uint32_t)(-n->index);
            if (!leaf || !hit)
                continue;
            uint32_t q = (uint32_t)n->index;
            if ((exclude_mask >> m->areas[q]) & 1)
                continue;
            const float *pb = &m->poly_bounds[6 * (size_t)q];
            double ylb = nav_y_gap(pb, p);
            if (ylb > ext[1] || ylb > best.d)
                continue;
            bool inside = nav_contains_unchecked(m, q, p[0], p[2]);
            if (pass == 0 && !inside)
                continue; /* (pass 1 may offer a pass-0 polygon again: same answer) */
            float pt[3];
            double d;
            if (inside) {
                pt[0] = p[0];
                pt[2] = p[2];
                pt[1] = nav_height_unchecked(m, q, p[0], p[2]);
                d = fabs((double)pt[1] - p[1]);
            } else {
                /* no point of the polygon is closer than its box */
                double lb2 = 0;
                for (int a = 0; a < 3; a++) {
                    double g =
                        nav_maxd(nav_maxd((double)pb[a] - p[a], (double)p[a] - pb[3 + a]), 0.0);
                    lb2 += g * g;
                }
                if (lb2 > best.d * best.d)
                    continue;
                /* As nav_closest_unchecked, with the height last: the
                   closest boundary point's xz distance with ylb bounds the
                   3-D distance and can spare the height lookup. */
                double ox, oz;
                nav_boundary_closest_xz(m, q, p[0], p[2], &ox, &oz);
                pt[0] = (float)ox;
                pt[2] = (float)oz;
                if (fabsf(pt[0] - p[0]) > ext[0] || fabsf(pt[2] - p[2]) > ext[2])
                    continue;
                double dx = (double)pt[0] - p[0], dz = (double)pt[2] - p[2];
                if (dx * dx + dz * dz + ylb * ylb > best.d * best.d)
                    continue;
                pt[1] = nav_height_unchecked(m, q, ox, oz);
                d = nav_dist3d(p, pt);
            }
            if (fabsf(pt[0] - p[0]) > ext[0] || fabsf(pt[1] - p[1]) > ext[1] ||
                fabsf(pt[2] - p[2]) > ext[2])
                continue;
            nav_nearest_offer(&best, q, d, pt);
        }
        if (best.d == 0)
            break; /* on the surface of a containing polygon: nothing is closer */
    }
    if (best.poly == NAV_NONE)
        return NAV_E_OFF_MESH;
    *poly = best.poly;
    out[0] = best.pt[0];
    out[1] = best.pt[1];
    out[2] = best.pt[2];
    return NAV_OK;
}

nav_status nav_mesh_nearest(const nav_mesh *m, const float p[3], const float ext[3],
                            uint64_t exclude_mask, uint32_t *poly, float out[3]) {
    if (poly)
        *poly = NAV_NONE;
    if (out)
        out[0] = out[1] = out[2] = 0;
    if (!m || !p || !ext || !poly || !out)
        return NAV_E_INVALID_ARG;
    for (int a = 0; a < 3; a++)
        if (!isfinite(p[a]) || !isfinite(ext[a]) || ext[a] < 0)
            return NAV_E_INVALID_ARG;
    return nav_nearest_unchecked(m, p, ext, exclude_mask, poly, out);
}
