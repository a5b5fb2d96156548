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

static bool nav_overlap(const float *amin, const float *amax, const float *bmin,
                        const float *bmax) {
    return amin[0] <= bmax[0] && amax[0] >= bmin[0] && amin[1] <= bmax[1] && amax[1] >= bmin[1] &&
           amin[2] <= bmax[2] && amax[2] >= bmin[2];
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

/*
 * Traverses the index directly (no candidate buffer, so no allocation).
 * Candidates are ranked in two tiers: polygons containing p in xz, by the
 * vertical distance to their surface; then the others, by the 3-D distance
 * to their closest point. Both only count when the snapped point stays in
 * the box p +- ext. Ties go to the lower polygon id.
 */
nav_status nav_nearest_unchecked(const nav_mesh *m, const float p[3], const float ext[3],
                                 uint64_t exclude_mask, uint32_t *poly, float out[3]) {
    float bmin[3], bmax[3];
    for (int a = 0; a < 3; a++) {
        bmin[a] = p[a] - ext[a];
        bmax[a] = p[a] + ext[a];
    }
    uint32_t best = NAV_NONE;
    int best_tier = 2;
    double best_d = INFINITY;
    float best_pt[3] = {0, 0, 0};
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
        int tier;
        double d;
        float pt[3];
        if (nav_contains_unchecked(m, q, p[0], p[2])) {
            tier = 0;
            pt[0] = p[0];
            pt[2] = p[2];
            pt[1] = nav_height_unchecked(m, q, p[0], p[2]);
            d = fabs((double)pt[1] - p[1]);
        } else {
            /* A containing polygon always beats this one; and no point of
               this polygon is closer than its box, so skip the exact work
               when the box is already farther than the best (exact pruning:
               results equal the unpruned search). */
            if (best_tier == 0)
                continue;
            const float *pb = &m->poly_bounds[6 * (size_t)q];
            double lb2 = 0;
            for (int a = 0; a < 3; a++) {
                double g = fmax(fmax((double)pb[a] - p[a], (double)p[a] - pb[3 + a]), 0.0);
                lb2 += g * g;
            }
            if (best_tier == 1 && lb2 > best_d * best_d)
                continue;
            tier = 1;
            nav_closest_unchecked(m, q, p, pt);
            d = nav_dist3d(p, pt);
        }
        if (fabsf(pt[0] - p[0]) > ext[0] || fabsf(pt[1] - p[1]) > ext[1] ||
            fabsf(pt[2] - p[2]) > ext[2])
            continue;
        if (tier < best_tier || (tier == best_tier && (d < best_d || (d == best_d && q < best)))) {
            best = q;
            best_tier = tier;
            best_d = d;
            best_pt[0] = pt[0];
            best_pt[1] = pt[1];
            best_pt[2] = pt[2];
        }
    }
    if (best == NAV_NONE)
        return NAV_E_OFF_MESH;
    *poly = best;
    out[0] = best_pt[0];
    out[1] = best_pt[1];
    out[2] = best_pt[2];
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
