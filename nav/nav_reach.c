/*
 * nav_reach: the polygons a path from a point can enter within a cost
 * budget (nav_reach_cost).
 *
 * Uniform costs (every passable area costs 1, the default; exclusions
 * allowed): exact. The cost of a polygon is the length of the shortest path
 * from the start to its nearest point, measured in the xz plane like the
 * optimal path search, with links at their 3-D length; nav_optimal_flood
 * (the interval search without a goal) finds them. So a polygon that any
 * navd path reaches within the budget is listed, and every listed polygon
 * has such a path.
 *
 * Other costs (the weighted-region problem has no exact cheap answer): a
 * bounded Dijkstra over polygons. Each polygon is entered at one point, the
 * closest point (3-D) of its entry portal to the point where its parent was
 * entered; entering costs the 3-D distance between those points times the
 * area cost of the parent polygon (the one walked through). An off-mesh
 * link costs the walk to its start plus its 3-D length times its own area
 * cost, and enters at its end. Every such cost is that of a real walk, so
 * every listed polygon is within budget; but the hops from closest point to
 * closest point zig-zag, so a polygon whose best walk is within budget can
 * be missed. The start polygon always costs 0.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_query_internal.h"

/* Closest point of segment [a, b] to p, in 3-D. */
static void closest_on_segment(const float *p, const float *a, const float *b, float out[3]) {
    double ab[3], ap[3], d = 0, t = 0;
    for (int k = 0; k < 3; k++) {
        ab[k] = (double)b[k] - a[k];
        ap[k] = (double)p[k] - a[k];
        d += ab[k] * ab[k];
        t += ab[k] * ap[k];
    }
    t = d > 0 ? t / d : 0;
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    for (int k = 0; k < 3; k++)
        out[k] = (float)(a[k] + t * ab[k]);
}

static void reach_relax(nav_query *q, uint32_t parent, uint32_t poly, const float pos[3], double g,
                        int *full) {
    uint32_t n = nav_q_find(q, poly);
    if (n == NAV_NONE) {
        n = nav_q_add(q, poly);
        if (n == NAV_NONE) {
            *full = 1;
            return;
        }
    } else if (q->nodes[n].closed || g >= q->nodes[n].g) {
        return;
    }
    nav_node *nd = &q->nodes[n];
    nd->g = nd->f = g;
    nd->parent = parent;
    memcpy(nd->pos, pos, sizeof(nd->pos));
    if (nd->heap_at == NAV_NONE)
        nav_q_push(q, n);
    else
        nav_q_decrease(q, n);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted, truncated to max, summed: the answer from a list of reached ids. */
static void reach_answer(const nav_mesh *m, uint32_t *ids, uint32_t n, uint32_t *polys,
                         uint32_t max, uint32_t *npolys, double *area, bool *truncated) {
    qsort(ids, n, sizeof(uint32_t), cmp_u32);
    uint32_t written = n < max ? n : max;
    if (written)
        memcpy(polys, ids, sizeof(uint32_t) * written);
    if (n > max)
        *truncated = true;
    double sum = 0;
    for (uint32_t i = 0; i < written; i++)
        sum += m->poly_area[polys[i]];
    *npolys = written;
    *area = sum;
}

/* The Dijkstra (see the file comment): leaves the ids of the polygons it
   reached in q->corr_polys and returns their count; *full when the node
   pool ran out (some may be missing). */
static uint32_t reach_dijkstra(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                               const float start[3], double max_cost, const nav_filter *filter,
                               int *full) {
    nav_q_reset(q);
    uint32_t s = nav_q_add(q, start_poly);
    memcpy(q->nodes[s].pos, start, sizeof(float) * 3);
    nav_q_push(q, s);
    while (q->nheap > 0) {
        uint32_t ni = nav_q_pop(q);
        q->nodes[ni].closed = 1;
        uint32_t poly = q->nodes[ni].poly;
        float pos[3];
        memcpy(pos, q->nodes[ni].pos, sizeof(pos));
        double g0 = q->nodes[ni].g;
        double c = filter->area_cost[m->areas[poly]];
        uint32_t base = m->poly_start[poly], nv = nav_poly_nverts(m, poly);
        for (uint32_t e = 0; e < nv; e++) {
            uint32_t nb = m->poly_nei[base + e];
            if (nb == NAV_NONE || !nav_filter_passable(filter, m->areas[nb]))
                continue;
            float p[3];
            closest_on_segment(pos, nav_poly_vert(m, poly, e), nav_poly_vert(m, poly, e + 1), p);
            double g = g0 + nav_dist3d(pos, p) * c;
            if (g <= max_cost)
                reach_relax(q, ni, nb, p, g, full);
        }
        for (uint32_t k = m->link_out_start[poly]; k < m->link_out_start[poly + 1]; k++) {
            nav_link_hop lh;
            if (!nav_link_take(m, m->link_out[k], filter, &lh))
                continue;
            double g = g0 + nav_dist3d(pos, lh.from_on) * c + lh.cost;
            if (g <= max_cost)
                reach_relax(q, ni, lh.to, lh.to_on, g, full);
        }
    }
    /* Every node ever added had g <= max_cost and, the heap being empty,
       is closed with its final cost. */
    for (uint32_t i = 0; i < q->nnodes; i++)
        q->corr_polys[i] = q->nodes[i].poly;
    return q->nnodes;
}

/* Uniform costs: the exact flood. Its list lives in q->opt; sorting it in
   place is fine (it is rebuilt by the next search). When the flood runs out
   of nodes, its polygons are all within budget but some may be missing: the
   Dijkstra's polygons (each within budget too) are added, and the answer
   says truncated. */
static nav_status reach_exact(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                              const float start[3], double max_cost, const nav_filter *filter,
                              uint32_t *polys, uint32_t max, uint32_t *npolys, double *area,
                              bool *truncated) {
    const uint32_t *found = NULL;
    uint32_t n = 0;
    nav_status st = nav_optimal_flood(q->opt, m, start_poly, start, filter->exclude_mask, max_cost,
                                      q->max_nodes, &found, &n);
    uint32_t *ids = (uint32_t *)found;
    if (st == NAV_OK) {
        reach_answer(m, ids, n, polys, max, npolys, area, truncated);
        return NAV_OK;
    }
    if (st != NAV_E_LIMIT)
        return st;
    *truncated = true;
    int full = 0;
    uint32_t nd = reach_dijkstra(q, m, start_poly, start, max_cost, filter, &full);
    qsort(ids, n, sizeof(uint32_t), cmp_u32);
    qsort(q->corr_polys, nd, sizeof(uint32_t), cmp_u32);
    /* merge the two sorted lists, each id once */
    uint32_t a = 0, b = 0, written = 0;
    double sum = 0;
    while ((a < n || b < nd) && written < max) {
        uint32_t id;
        if (b >= nd || (a < n && ids[a] < q->corr_polys[b]))
            id = ids[a++];
        else if (a >= n || q->corr_polys[b] < ids[a])
            id = q->corr_polys[b++];
        else
            id = ids[a++], b++;
        polys[written++] = id;
        sum += m->poly_area[id];
    }
    *npolys = written;
    *area = sum;
    return NAV_OK;
}

nav_status nav_reach_cost(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                          const float start[3], double max_cost, const nav_filter *filter,
                          uint32_t *polys, uint32_t max, uint32_t *npolys, double *area,
                          bool *truncated) {
    if (npolys)
        *npolys = 0;
    if (area)
        *area = 0;
    if (truncated)
        *truncated = false;
    if (!q || !m || !start || !npolys || !area || !truncated || (max && !polys))
        return NAV_E_INVALID_ARG;
    if (start_poly >= m->npolys || !isfinite(max_cost) || max_cost < 0)
        return NAV_E_INVALID_ARG;
    for (int k = 0; k < 3; k++)
        if (!isfinite(start[k]))
            return NAV_E_INVALID_ARG;
    nav_filter fdef;
    if (!(filter = nav_filter_resolve(filter, &fdef)))
        return NAV_E_INVALID_ARG;
    if (!nav_filter_passable(filter, m->areas[start_poly]))
        return NAV_E_OFF_MESH;
    if (nav_filter_is_uniform_on(filter, m))
        return reach_exact(q, m, start_poly, start, max_cost, filter, polys, max, npolys, area,
                           truncated);

    int full = 0;
    uint32_t n = reach_dijkstra(q, m, start_poly, start, max_cost, filter, &full);
    if (full)
        *truncated = true;
    reach_answer(m, q->corr_polys, n, polys, max, npolys, area, truncated);
    return NAV_OK;
}
