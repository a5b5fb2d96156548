/*
 * nav_query: the per-thread query object, filters, nav_find_path (snapping,
 * algorithm dispatch, partial paths), the corridor A* and the string puller.
 *
 * Corridor A* cost model: a node is a polygon and its position is a point
 * on the portal it was entered through: where the segment from the parent's
 * position to the end point crosses the portal, else the portal end that
 * makes that detour shortest. The start node sits at the snapped start.
 * Costs are 3-D distances between successive positions weighted by the area
 * cost of the polygon walked through (links: their 3-D length times their
 * area cost), plus the last leg to the end point in the end polygon; the
 * heuristic is the 3-D distance to the end times the smallest passable area
 * cost, admissible and consistent. Using the exact points (rather than, say,
 * polygon centroids) matters: on the shared Recast meshes the centroid model
 * string-pulls up to 0.6 % longer than Detour on average, this one 0-0.55 %
 * shorter. The price is that the corridor depends on the exact points, so
 * it cannot be shared between requests: corridor reuse (nav_cache.h) uses
 * nav_path_canonical instead, the same search between the two polygons'
 * centroids, whose corridor is a function of the polygon pair alone.
 *
 * Dispatch and partial paths (what nav_find_path promises):
 * - AUTO and OPTIMAL use the optimal search when every passable area costs
 *   1 (nav_filter_is_uniform), else the corridor search (an OPTIMAL request
 *   with costs is answered by the corridor search: costs win).
 * - Optimal search out of nodes (NAV_E_LIMIT): the corridor search runs
 *   with the same budget; its answer is reported (algorithm "corridor"),
 *   complete when it gets there, else partial with NAV_PATH_PARTIAL_BUDGET.
 *   max_nodes bounds each search, so such a request may expand up to twice
 *   max_nodes; nodes_expanded counts the nodes of every search it ran.
 * - End unreachable (nav_mesh_reachable, i.e. the precomputed components
 *   with one-way links respected): the target becomes the point closest
 *   (3-D) to the snapped end on a polygon reachable from the start and not
 *   excluded, found through the spatial index; the path leads there with
 *   NAV_PATH_PARTIAL_UNREACHABLE, and res->end / end_poly name it.
 * - Reachable by components but cut off by the filter's exclusions: the
 *   corridor search expands everything it can reach and goes to the closest
 *   point among those polygons (NAV_PATH_PARTIAL_UNREACHABLE).
 * - Budget exhausted in the corridor search (max_nodes expansions, or the
 *   pool full): the path leads to the expanded polygon whose entry point is
 *   closest to the target, ending at that polygon's point closest to the
 *   end, as Detour does (NAV_PATH_PARTIAL_BUDGET).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_query_internal.h"

#define NAV_QUERY_BOX_CAP 4096u
#define NAV_SAME_EPS 1e-6 /* metres: two xz points closer than this are one */
#define FUNNEL_MEMO 64    /* portals of a funnel run found once */

/* ---------------------------------------------------------------- pool */

static uint32_t next_pow2(uint32_t v) {
    uint32_t p = 1;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
}

nav_query *nav_query_new(uint32_t max_nodes) {
    if (max_nodes == 0 || max_nodes > (1u << 24))
        return NULL;
    nav_query *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->max_nodes = max_nodes;
    uint32_t nb = next_pow2(max_nodes / 2 > 16 ? max_nodes / 2 : 16);
    q->hash_mask = nb - 1;
    q->nodes = malloc(sizeof(nav_node) * max_nodes);
    q->heap = malloc(sizeof(uint32_t) * max_nodes);
    q->bucket_first = malloc(sizeof(uint32_t) * nb);
    q->bucket_gen = calloc(nb, sizeof(uint32_t));
    q->corr_polys = malloc(sizeof(uint32_t) * max_nodes);
    q->corr_via = malloc(sizeof(uint32_t) * max_nodes);
    q->box_cap = NAV_QUERY_BOX_CAP;
    q->box = malloc(sizeof(uint32_t) * q->box_cap);
    q->opt = nav_optimal_new(max_nodes);
    if (!q->nodes || !q->heap || !q->bucket_first || !q->bucket_gen || !q->corr_polys ||
        !q->corr_via || !q->box || !q->opt) {
        nav_query_free(q);
        return NULL;
    }
    q->gen = 1;
    return q;
}

void nav_query_free(nav_query *q) {
    if (!q)
        return;
    nav_optimal_free(q->opt);
    free(q->nodes);
    free(q->heap);
    free(q->bucket_first);
    free(q->bucket_gen);
    free(q->corr_polys);
    free(q->corr_via);
    free(q->box);
    free(q);
}

void nav_q_reset(nav_query *q) {
    q->nnodes = 0;
    q->nheap = 0;
    if (++q->gen == 0) { /* stamp wrapped: clear once every 2^32 searches */
        memset(q->bucket_gen, 0, sizeof(uint32_t) * (q->hash_mask + 1));
        q->gen = 1;
    }
}

static inline uint32_t poly_hash(uint32_t p) {
    p ^= p >> 16;
    p *= 0x7feb352du;
    p ^= p >> 15;
    return p;
}

uint32_t nav_q_find(const nav_query *q, uint32_t poly) {
    uint32_t b = poly_hash(poly) & q->hash_mask;
    if (q->bucket_gen[b] != q->gen)
        return NAV_NONE;
    for (uint32_t i = q->bucket_first[b]; i != NAV_NONE; i = q->nodes[i].next)
        if (q->nodes[i].poly == poly)
            return i;
    return NAV_NONE;
}

uint32_t nav_q_add(nav_query *q, uint32_t poly) {
    if (q->nnodes >= q->max_nodes)
        return NAV_NONE;
    uint32_t i = q->nnodes++;
    uint32_t b = poly_hash(poly) & q->hash_mask;
    if (q->bucket_gen[b] != q->gen) {
        q->bucket_gen[b] = q->gen;
        q->bucket_first[b] = NAV_NONE;
    }
    nav_node *n = &q->nodes[i];
    n->poly = poly;
    n->parent = NAV_NONE;
    n->via = NAV_NONE;
    n->heap_at = NAV_NONE;
    n->closed = 0;
    n->g = n->f = 0;
    n->next = q->bucket_first[b];
    q->bucket_first[b] = i;
    return i;
}

/* Heap order: lower f first, ties by lower node index (deterministic). */
static inline int heap_less(const nav_query *q, uint32_t a, uint32_t b) {
    double fa = q->nodes[a].f, fb = q->nodes[b].f;
    return fa < fb || (fa == fb && a < b);
}

static void heap_up(nav_query *q, uint32_t at) {
    uint32_t n = q->heap[at];
    while (at > 0) {
        uint32_t parent = (at - 1) / 2;
        if (!heap_less(q, n, q->heap[parent]))
            break;
        q->heap[at] = q->heap[parent];
        q->nodes[q->heap[at]].heap_at = at;
        at = parent;
    }
    q->heap[at] = n;
    q->nodes[n].heap_at = at;
}

static void heap_down(nav_query *q, uint32_t at) {
    uint32_t n = q->heap[at];
    for (;;) {
        uint32_t c = 2 * at + 1;
        if (c >= q->nheap)
            break;
        if (c + 1 < q->nheap && heap_less(q, q->heap[c + 1], q->heap[c]))
            c++;
        if (!heap_less(q, q->heap[c], n))
            break;
        q->heap[at] = q->heap[c];
        q->nodes[q->heap[at]].heap_at = at;
        at = c;
    }
    q->heap[at] = n;
    q->nodes[n].heap_at = at;
}

void nav_q_push(nav_query *q, uint32_t node) {
    q->heap[q->nheap] = node;
    heap_up(q, q->nheap++);
}

void nav_q_decrease(nav_query *q, uint32_t node) {
    heap_up(q, q->nodes[node].heap_at);
}

uint32_t nav_q_pop(nav_query *q) {
    uint32_t top = q->heap[0];
    q->nodes[top].heap_at = NAV_NONE;
    if (--q->nheap > 0) {
        q->heap[0] = q->heap[q->nheap];
        heap_down(q, 0);
    }
    return top;
}

/* ---------------------------------------------------------------- filter */

void nav_filter_default(nav_filter *f) {
    if (!f)
        return;
    for (int a = 0; a < NAV_MAX_AREAS; a++)
        f->area_cost[a] = 1.0f;
    f->exclude_mask = 0;
}

bool nav_filter_is_uniform(const nav_filter *f) {
    return nav_filter_is_uniform_on(f, NULL);
}

bool nav_filter_is_uniform_on(const nav_filter *f, const nav_mesh *m) {
    if (!f)
        return true;
    uint64_t used = m ? m->area_mask | m->link_area_mask : ~0ull;
    /* the used areas only, by their bits: every path query asks this, and
       a mesh uses one or two of the 64 */
    for (; used; used &= used - 1) {
        int a = __builtin_ctzll(used);
        if (nav_filter_passable(f, (uint8_t)a) && f->area_cost[a] != 1.0f)
            return false;
    }
    return true;
}

nav_status nav_filter_check(const nav_filter *f) {
    for (int a = 0; a < NAV_MAX_AREAS; a++)
        if (nav_filter_passable(f, (uint8_t)a) &&
            (!isfinite(f->area_cost[a]) || !(f->area_cost[a] > 0.0f)))
            return NAV_E_INVALID_ARG;
    return NAV_OK;
}

double nav_filter_min_cost(const nav_filter *f) {
    double c = DBL_MAX;
    for (int a = 0; a < NAV_MAX_AREAS; a++)
        if (nav_filter_passable(f, (uint8_t)a) && f->area_cost[a] < c)
            c = f->area_cost[a];
    return c == DBL_MAX ? 1.0 : c;
}

/* ---------------------------------------------------------------- geometry */

static inline void copy3(float *d, const float *s) {
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
}

static inline int same_xz(const float *a, const float *b) {
    return fabs((double)a[0] - b[0]) <= NAV_SAME_EPS && fabs((double)a[2] - b[2]) <= NAV_SAME_EPS;
}

int nav_portal(const nav_mesh *m, uint32_t a, uint32_t b, float left[3], float right[3]) {
    uint32_t s = m->poly_start[a], n = nav_poly_nverts(m, a);
    for (uint32_t e = 0; e < n; e++) {
        if (m->poly_nei[s + e] != b)
            continue;
        /* Walk back to the first edge of a run shared with b (a run may
           wrap around), then forward to its last: collinear vertices can
           split one shared side into several edges. */
        uint32_t first = e, cnt = 0;
        while (cnt < n && m->poly_nei[s + (first + n - 1) % n] == b) {
            first = (first + n - 1) % n;
            cnt++;
        }
        uint32_t last = first;
        cnt = 0;
        while (cnt < n && m->poly_nei[s + (last + 1) % n] == b) {
            last = (last + 1) % n;
            cnt++;
        }
        /* Edge v_i -> v_i+1 with the interior on its right side (negative
           cross): walking out of a through it, v_i is on the left. */
        copy3(left, nav_poly_vert(m, a, first));
        copy3(right, nav_poly_vert(m, a, last + 1));
        return 1;
    }
    return 0;
}

/*
 * The point where the corridor search crosses portal [pa, pb] when coming
 * from p and heading for t: the crossing of the segment p-t when it meets
 * the portal; when p and t are on the same side of the portal's line, the
 * crossing of p with t mirrored across it (the point minimizing
 * |p - x| + |x - t|), clamped; else the portal end that makes p -> x -> t
 * shortest.
 */
static void portal_point(const float *p, const float *t, const float *pa, const float *pb,
                         float out[3]) {
    double da = nav_cross2(p, t, pa), db = nav_cross2(p, t, pb);
    double dp = nav_cross2(pa, pb, p), dt = nav_cross2(pa, pb, t);
    if (((da <= 0 && db >= 0) || (da >= 0 && db <= 0)) && da != db &&
        ((dp <= 0 && dt >= 0) || (dp >= 0 && dt <= 0))) {
        double s = da / (da - db);
        if (s < 0)
            s = 0;
        if (s > 1)
            s = 1;
        for (int k = 0; k < 3; k++)
            out[k] = (float)(pa[k] + s * ((double)pb[k] - pa[k]));
        return;
    }
    if ((dp > 0 && dt > 0) || (dp < 0 && dt < 0)) {
        /* same side: reflect t across the portal's line, then cross */
        double ex = (double)pb[0] - pa[0], ez = (double)pb[2] - pa[2], l2 = ex * ex + ez * ez;
        if (l2 > 0) {
            /* dt / |e| is t's distance along the normal (-ez, ex) / |e| */
            double k = 2 * dt / l2;
            float tr[3] = {(float)(t[0] + k * ez), t[1], (float)(t[2] - k * ex)};
            double ra = nav_cross2(p, tr, pa), rb = nav_cross2(p, tr, pb);
            if (ra != rb) {
                double s = ra / (ra - rb);
                s = s < 0 ? 0 : s > 1 ? 1 : s;
                for (int q = 0; q < 3; q++)
                    out[q] = (float)(pa[q] + s * ((double)pb[q] - pa[q]));
                return;
            }
        }
    }
    double ca = nav_dist3d(p, pa) + nav_dist3d(pa, t);
    double cb = nav_dist3d(p, pb) + nav_dist3d(pb, t);
    copy3(out, ca <= cb ? pa : pb);
}

/* ---------------------------------------------------------------- corridor A* */

typedef enum { SEARCH_REACHED, SEARCH_EXHAUSTED, SEARCH_BUDGET } search_outcome;

typedef struct search_out {
    search_outcome outcome;
    uint32_t goal_node; /* the end polygon's node when reached */
    uint32_t best_node; /* expanded node closest to the target */
} search_out;

static void record_expanded(nav_path_result *res, uint32_t poly) {
    if (!res->expanded)
        return;
    if (res->nexpanded < res->max_expanded)
        res->expanded[res->nexpanded++] = poly;
    else
        res->flags |= NAV_PATH_TRUNCATED;
}

/* Relaxes the edge parent -> poly entered at pos with total cost g. */
static void relax(nav_query *q, uint32_t parent, uint32_t poly, uint32_t via, const float pos[3],
                  double g, double h, int *out_of_nodes) {
    uint32_t n = nav_q_find(q, poly);
    if (n == NAV_NONE) {
        n = nav_q_add(q, poly);
        if (n == NAV_NONE) {
            *out_of_nodes = 1;
            return;
        }
    } else if (q->nodes[n].closed || g >= q->nodes[n].g) {
        /* Closed nodes are final: positions depend on the parent, so the
           graph is not a fixed one and re-opening would buy little. */
        return;
    }
    nav_node *nd = &q->nodes[n];
    nd->g = g;
    nd->f = g + h;
    nd->parent = parent;
    nd->via = via;
    copy3(nd->pos, pos);
    if (nd->heap_at == NAV_NONE)
        nav_q_push(q, n);
    else
        nav_q_decrease(q, n);
}

/*
 * A* from (start_poly, start) to (end_poly, target) under filter f,
 * expanding at most budget nodes, with the cost model described at the top
 * of this file.
 */
static search_out corridor_search(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                                  const float start[3], uint32_t end_poly, const float target[3],
                                  const nav_filter *f, uint32_t budget, nav_path_result *res) {
    search_out out = {SEARCH_EXHAUSTED, NAV_NONE, NAV_NONE};
    double hw = nav_filter_min_cost(f);
    double end_cost = f->area_cost[m->areas[end_poly]];
    int out_of_nodes = 0;
    double best_h = DBL_MAX;

    nav_q_reset(q);
    uint32_t s = nav_q_add(q, start_poly);
    nav_node *sn = &q->nodes[s];
    copy3(sn->pos, start);
    sn->g = 0;
    sn->f = start_poly == end_poly ? 0 : nav_dist3d(sn->pos, target) * hw;
    nav_q_push(q, s);

    uint32_t expanded = 0;
    while (q->nheap > 0) {
        uint32_t ni = nav_q_pop(q);
        q->nodes[ni].closed = 1;
        uint32_t poly = q->nodes[ni].poly;
        if (poly == end_poly) {
            out.outcome = SEARCH_REACHED;
            out.goal_node = ni;
            break;
        }
        if (expanded >= budget) {
            out.outcome = SEARCH_BUDGET;
            break;
        }
        expanded++;
        record_expanded(res, poly);
        double dh = nav_dist3d(q->nodes[ni].pos, target);
        if (dh < best_h) {
            best_h = dh;
            out.best_node = ni;
        }
        float pos[3];
        copy3(pos, q->nodes[ni].pos);
        double g0 = q->nodes[ni].g;
        double cost_here = f->area_cost[m->areas[poly]];
        uint32_t parent_poly =
            q->nodes[ni].parent == NAV_NONE ? NAV_NONE : q->nodes[q->nodes[ni].parent].poly;

        uint32_t vs = m->poly_start[poly], nv = nav_poly_nverts(m, poly);
        for (uint32_t e = 0; e < nv; e++) {
            uint32_t nb = m->poly_nei[vs + e];
            if (nb == NAV_NONE || nb == parent_poly || !nav_filter_passable(f, m->areas[nb]))
                continue;
            float p[3];
            portal_point(pos, target, nav_poly_vert(m, poly, e), nav_poly_vert(m, poly, e + 1), p);
            double g = g0 + nav_dist3d(pos, p) * cost_here, h;
            if (nb == end_poly) {
                g += nav_dist3d(p, target) * end_cost;
                h = 0;
            } else {
                h = nav_dist3d(p, target) * hw;
            }
            relax(q, ni, nb, NAV_NONE, p, g, h, &out_of_nodes);
        }
        for (uint32_t k = m->link_out_start[poly]; k < m->link_out_start[poly + 1]; k++) {
            nav_link_hop lh;
            if (!nav_link_take(m, m->link_out[k], f, &lh))
                continue;
            double g = g0 + nav_dist3d(pos, lh.from_on) * cost_here + lh.cost, h;
            if (lh.to == end_poly) {
                g += nav_dist3d(lh.to_on, target) * end_cost;
                h = 0;
            } else {
                h = nav_dist3d(lh.to_on, target) * hw;
            }
            relax(q, ni, lh.to, m->link_out[k], lh.to_on, g, h, &out_of_nodes);
        }
    }
    if (out.outcome == SEARCH_EXHAUSTED && out_of_nodes)
        out.outcome = SEARCH_BUDGET;
    res->nodes_expanded = expanded;
    if (out.best_node == NAV_NONE)
        out.best_node = s;
    return out;
}

/* Writes the corridor ending at node `last` into q->corr_*; returns its length. */
static uint32_t extract_corridor(nav_query *q, uint32_t last) {
    uint32_t n = 0;
    for (uint32_t i = last; i != NAV_NONE; i = q->nodes[i].parent)
        n++;
    uint32_t k = n;
    for (uint32_t i = last; i != NAV_NONE; i = q->nodes[i].parent) {
        k--;
        q->corr_polys[k] = q->nodes[i].poly;
        q->corr_via[k] = q->nodes[i].via;
    }
    return n;
}

/* ---------------------------------------------------------------- string pulling */

typedef struct corner_sink {
    nav_path_result *res;
    float last[3];
    int have_last;
    uint32_t stop_corners; /* 0: never stop early */
    double stop_len;       /* compared with len_xz */
    double len_xz;         /* length of the corners so far in xz */
    int stopped;           /* the prefix asked for is out */
} corner_sink;

static void emit(corner_sink *cs, const float p[3]) {
    nav_path_result *res = cs->res;
    if (cs->have_last) {
        if (same_xz(cs->last, p) && fabs((double)cs->last[1] - p[1]) <= NAV_SAME_EPS)
            return;
        res->length += nav_dist3d(cs->last, p);
        if (cs->stop_corners)
            cs->len_xz += hypot((double)p[0] - cs->last[0], (double)p[2] - cs->last[2]);
    }
    copy3(cs->last, p);
    cs->have_last = 1;
    if (res->ncorners < res->max_corners && res->corners)
        copy3(&res->corners[3 * (size_t)res->ncorners++], p);
    else
        res->flags |= NAV_PATH_TRUNCATED;
    if (cs->stop_corners && res->ncorners >= cs->stop_corners && cs->len_xz >= cs->stop_len)
        cs->stopped = 1;
}

/*
 * Emits a funnel corner. Funnel corners are always polygon vertices (portal
 * ends), and the height surface passes through every polygon vertex (the
 * fan triangulation, and Recast detail meshes, which index the polygon's
 * own vertices), so the vertex's y is already on the surface: no height
 * lookup (a scan of the polygon's detail triangles) is needed.
 */
static void emit_on(corner_sink *cs, const nav_mesh *m, uint32_t poly, const float p[3]) {
    (void)m;
    (void)poly;
    emit(cs, p);
}

/*
 * The simple stupid funnel over polys[a..b] (portals between consecutive
 * ones, then the degenerate portal at e), from s. In xz with
 * nav_cross2(a, b, c) > 0 meaning c is left of a -> b. Emits the corners
 * after s up to, not including, e.
 */
static nav_status funnel(corner_sink *cs, const nav_mesh *m, const uint32_t *polys, uint32_t a,
                         uint32_t b, const float s[3], const float e[3]) {
    float apex[3], pl[3], pr[3], L[3], R[3];
    copy3(apex, s);
    copy3(pl, s);
    copy3(pr, s);
    int64_t apex_i = (int64_t)a - 1, li = apex_i, ri = apex_i;
    int64_t i = a;
    /* Portals are revisited after every corner (the scan restarts behind
       the new apex): the first FUNNEL_MEMO of the run are found once. */
    float memo[FUNNEL_MEMO][6];
    uint64_t have = 0;
    _Static_assert(FUNNEL_MEMO <= 64, "one bit per memoised portal");
    while (i <= (int64_t)b) {
        if (i < (int64_t)b) {
            int64_t k = i - (int64_t)a;
            if (k < FUNNEL_MEMO && (have >> k & 1u)) {
                copy3(L, memo[k]);
                copy3(R, memo[k] + 3);
            } else {
                if (!nav_portal(m, polys[i], polys[i + 1], L, R))
                    return NAV_E_INVALID_ARG;
                if (k < FUNNEL_MEMO) {
                    copy3(memo[k], L);
                    copy3(memo[k] + 3, R);
                    have |= (uint64_t)1 << k;
                }
            }
        } else {
            if (!e)
                return NAV_OK; /* an open end: the corridor goes on beyond polys[b] */
            copy3(L, e);
            copy3(R, e);
        }
        /* right side */
        if (nav_cross2(apex, pr, R) >= 0) {
            if (same_xz(apex, pr) || nav_cross2(apex, pl, R) < 0) {
                copy3(pr, R);
                ri = i;
            } else {
                /* the right side crossed the left one: the left point is a corner */
                emit_on(cs, m, polys[li < (int64_t)a ? a : li], pl);
                if (cs->stopped)
                    return NAV_OK;
                copy3(apex, pl);
                apex_i = li;
                copy3(pr, apex);
                ri = li = apex_i;
                i = apex_i + 1;
                continue;
            }
        }
        /* left side */
        if (nav_cross2(apex, pl, L) <= 0) {
            if (same_xz(apex, pl) || nav_cross2(apex, pr, L) > 0) {
                copy3(pl, L);
                li = i;
            } else {
                emit_on(cs, m, polys[ri < (int64_t)a ? a : ri], pr);
                if (cs->stopped)
                    return NAV_OK;
                copy3(apex, pr);
                apex_i = ri;
                copy3(pl, apex);
                ri = li = apex_i;
                i = apex_i + 1;
                continue;
            }
        }
        i++;
    }
    return NAV_OK;
}

nav_status nav_string_pull(const nav_mesh *m, const uint32_t *polys, const uint32_t *via,
                           uint32_t n, const float start[3], const float end[3],
                           nav_path_result *res) {
    return nav_string_pull_prefix(m, polys, via, n, start, end, 0, 0, false, res);
}

nav_status nav_string_pull_prefix(const nav_mesh *m, const uint32_t *polys, const uint32_t *via,
                                  uint32_t n, const float start[3], const float end[3],
                                  uint32_t stop_corners, double stop_len, bool open_end,
                                  nav_path_result *res) {
    res->ncorners = res->npolys = res->nlinks = 0;
    res->length = 0;
    if (n == 0)
        return NAV_E_INVALID_ARG;
    for (uint32_t i = 0; i < n; i++) {
        if (res->polys && res->npolys < res->max_polys)
            res->polys[res->npolys++] = polys[i];
        else
            res->flags |= NAV_PATH_TRUNCATED;
    }
    corner_sink cs = {res, {0, 0, 0}, 0, stop_corners, stop_len, 0, 0};
    emit(&cs, start);
    if (n == 1) {
        if (open_end)
            return NAV_E_LIMIT; /* no portal yet: more corridor needed */
        /* start and end in one polygon: always two corners */
        cs.have_last = 1;
        res->length += nav_dist3d(start, end);
        if (res->ncorners < res->max_corners && res->corners)
            copy3(&res->corners[3 * (size_t)res->ncorners++], end);
        else
            res->flags |= NAV_PATH_TRUNCATED;
        return NAV_OK;
    }
    /* Split at links: each run of edge-connected polygons is funnelled
       between the run's entry point and its exit point. */
    float seg_start[3];
    copy3(seg_start, start);
    uint32_t a = 0;
    for (uint32_t i = 1; i <= n; i++) {
        if (i < n && via[i] == NAV_NONE)
            continue;
        float seg_end[3];
        const nav_link *l = NULL;
        int rev = 0;
        if (i < n) {
            uint32_t lid = via[i] & ~NAV_LINK_REVERSE;
            if (lid >= m->nlinks)
                return NAV_E_INVALID_ARG;
            l = &m->links[lid];
            rev = (via[i] & NAV_LINK_REVERSE) != 0;
            copy3(seg_end, rev ? l->end_on : l->start_on);
        } else {
            copy3(seg_end, end);
        }
        bool open = open_end && i == n;
        nav_status st = funnel(&cs, m, polys, a, i - 1, seg_start, open ? NULL : seg_end);
        if (st != NAV_OK)
            return st;
        if (open && !cs.stopped)
            return NAV_E_LIMIT; /* the prefix asked for needs more corridor */
        int cut = cs.stopped;   /* stopped inside the run: seg_end is not out */
        if (!cut) {
            emit(&cs, seg_end);
            if (l) {
                if (res->links && res->nlinks < res->max_links)
                    res->links[res->nlinks++] = via[i] & ~NAV_LINK_REVERSE;
                else
                    res->flags |= NAV_PATH_TRUNCATED;
            }
        }
        if (cs.stopped) {
            /* only a prefix was asked for: the rest is not pulled (stopped
               at the path's very end, nothing is left out) */
            if (cut || i < n)
                res->flags |= NAV_PATH_TRUNCATED;
            return NAV_OK;
        }
        if (l) {
            const float *to_on = rev ? l->start_on : l->end_on;
            emit(&cs, to_on);
            copy3(seg_start, to_on);
        }
        a = i;
    }
    return NAV_OK;
}

/* ---------------------------------------------------------------- partial targets */

/*
 * The point closest (3-D) to `end` on a polygon that start_poly can reach
 * (nav_mesh_reachable) and the filter does not exclude. Grows a box around
 * end through the spatial index; a polygon within distance r of end overlaps
 * the box of half-size r, so the first r holding a candidate at <= r is
 * final. Falls back to a scan when a box holds more than the scratch.
 */
static void closest_reachable(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                              const float end[3], const nav_filter *f, uint32_t *poly,
                              float pt[3]) {
    double best = DBL_MAX;
    *poly = start_poly;
    nav_mesh_closest_on_poly(m, start_poly, end, pt);
    best = nav_dist3d(pt, end);
    double span = 0;
    for (int k = 0; k < 3; k++) {
        double d = fmax(fabs((double)m->bmax[k] - end[k]), fabs((double)end[k] - m->bmin[k]));
        span = fmax(span, d);
    }
    /* The start polygon's closest point bounds the answer: boxes never need
       to grow beyond it, and a polygon whose bounding box is farther than
       the best so far is skipped before any exact (height) work. */
    for (double r = 1.0;; r *= 2) {
        if (r > best)
            r = best;
        float bmin[3], bmax[3];
        for (int k = 0; k < 3; k++) {
            bmin[k] = (float)(end[k] - r);
            bmax[k] = (float)(end[k] + r);
        }
        /* small meshes: one pruned pass over every polygon beats growing boxes */
        uint32_t total =
            m->npolys <= 2048 ? UINT32_MAX : nav_mesh_query_box(m, bmin, bmax, q->box, q->box_cap);
        int scan = total > q->box_cap;
        uint32_t cnt = scan ? m->npolys : total;
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t p = scan ? i : q->box[i];
            const float *pb = &m->poly_bounds[6 * (size_t)p];
            double lb2 = 0;
            for (int k = 0; k < 3; k++) {
                double g = (double)pb[k] - end[k], h = (double)end[k] - pb[3 + k];
                g = g > h ? g : h;
                if (g > 0)
                    lb2 += g * g;
            }
            if (lb2 > best * best || !nav_filter_passable(f, m->areas[p]) ||
                !nav_mesh_reachable(m, start_poly, p))
                continue;
            float c[3];
            if (nav_mesh_closest_on_poly(m, p, end, c) != NAV_OK)
                continue;
            double d = nav_dist3d(c, end);
            if (d < best || (d == best && p < *poly)) {
                best = d;
                *poly = p;
                copy3(pt, c);
            }
        }
        if (scan || best <= r || r > span)
            return;
    }
}

/* ---------------------------------------------------------------- find path */

static void clear_outputs(nav_path_result *res) {
    res->ncorners = res->npolys = res->nlinks = res->nexpanded = 0;
    memset(res->start, 0, sizeof(res->start));
    memset(res->end, 0, sizeof(res->end));
    res->start_poly = res->end_poly = NAV_NONE;
    res->flags = 0;
    res->length = 0;
    res->algorithm = NAV_ALGO_CORRIDOR;
    res->nodes_expanded = 0;
}

static int finite3(const float *v) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/*
 * Corridor search and string pulling from (sp, spt) toward (ep, ept).
 * When ep is not reachable from sp, heads for the closest reachable point.
 */
static nav_status corridor_path(nav_query *q, const nav_mesh *m, uint32_t sp, const float spt[3],
                                uint32_t ep, const float ept[3], const nav_filter *f,
                                uint32_t budget, nav_path_result *res) {
    uint32_t keep_flags = res->flags & NAV_PATH_TRUNCATED;
    res->flags = keep_flags;
    res->nexpanded = 0;
    uint32_t tp = ep;
    float tpt[3];
    copy3(tpt, ept);
    if (!nav_mesh_reachable(m, sp, ep)) {
        closest_reachable(q, m, sp, ept, f, &tp, tpt);
        res->flags |= NAV_PATH_PARTIAL_UNREACHABLE;
    }
    search_out so = corridor_search(q, m, sp, spt, tp, tpt, f, budget, res);
    uint32_t last;
    if (so.outcome == SEARCH_REACHED) {
        last = so.goal_node;
    } else if (so.outcome == SEARCH_BUDGET) {
        res->flags |= NAV_PATH_PARTIAL_BUDGET;
        last = so.best_node;
        nav_mesh_closest_on_poly(m, q->nodes[last].poly, ept, tpt);
    } else {
        /* Every polygon the filter lets us reach was expanded (exclusions
           cut the way): go to the closest point among them. */
        res->flags |= NAV_PATH_PARTIAL_UNREACHABLE;
        double best = DBL_MAX;
        last = so.best_node;
        for (uint32_t i = 0; i < q->nnodes; i++) {
            if (!q->nodes[i].closed)
                continue;
            float c[3];
            nav_mesh_closest_on_poly(m, q->nodes[i].poly, ept, c);
            double d = nav_dist3d(c, ept);
            if (d < best) {
                best = d;
                last = i;
                copy3(tpt, c);
            }
        }
        if (best == DBL_MAX)
            nav_mesh_closest_on_poly(m, q->nodes[last].poly, ept, tpt);
    }
    uint32_t n = extract_corridor(q, last);
    q->corr_n = n;
    res->end_poly = q->nodes[last].poly;
    copy3(res->end, tpt);
    res->algorithm = NAV_ALGO_CORRIDOR;
    return nav_string_pull(m, q->corr_polys, q->corr_via, n, spt, tpt, res);
}

/* Optimal search with the fallbacks nav_query.h documents. */
static nav_status optimal_path(nav_query *q, const nav_mesh *m, uint32_t sp, const float spt[3],
                               uint32_t ep, const float ept[3], const nav_filter *f,
                               uint32_t budget, nav_path_result *res) {
    nav_status st = nav_optimal_search(q->opt, m, sp, spt, ep, ept, f->exclude_mask, budget, res);
    uint32_t spent = res->nodes_expanded; /* nodes_expanded counts every search run */
    if (st == NAV_OK) {
        res->algorithm = NAV_ALGO_OPTIMAL;
        res->end_poly = ep;
        copy3(res->end, ept);
        return NAV_OK;
    }
    if (st == NAV_E_NOT_FOUND) {
        uint32_t tp;
        float tpt[3];
        closest_reachable(q, m, sp, ept, f, &tp, tpt);
        res->ncorners = res->npolys = res->nlinks = res->nexpanded = 0;
        res->flags &= NAV_PATH_TRUNCATED;
        st = nav_optimal_search(q->opt, m, sp, spt, tp, tpt, f->exclude_mask, budget, res);
        res->nodes_expanded += spent;
        spent = res->nodes_expanded;
        if (st == NAV_OK) {
            res->algorithm = NAV_ALGO_OPTIMAL;
            res->flags |= NAV_PATH_PARTIAL_UNREACHABLE;
            res->end_poly = tp;
            copy3(res->end, tpt);
            return NAV_OK;
        }
    }
    if (st != NAV_E_LIMIT && st != NAV_E_NOT_FOUND)
        return st;
    /* Budget ran out (or exclusions cut the way): the corridor search with
       the same budget decides, and says partial if it runs out too. */
    res->ncorners = res->npolys = res->nlinks = res->nexpanded = 0;
    res->flags = 0;
    st = corridor_path(q, m, sp, spt, ep, ept, f, budget, res);
    res->nodes_expanded += spent;
    return st;
}

nav_status nav_path_validate(const nav_query *q, const nav_mesh *m, const nav_path_request *req,
                             nav_path_result *res, nav_path_prep *prep) {
    if (!res)
        return NAV_E_INVALID_ARG;
    clear_outputs(res);
    if (!q || !m || !req || !prep)
        return NAV_E_INVALID_ARG;
    if (!finite3(req->start) || !finite3(req->end) || !finite3(req->extents))
        return NAV_E_INVALID_ARG;
    /* A 0 half-size is a flat box, as nav_mesh_nearest allows: a point
       exactly on the surface still snaps. */
    for (int k = 0; k < 3; k++)
        if (req->extents[k] < 0)
            return NAV_E_INVALID_ARG;
    if (req->algorithm != NAV_ALGO_AUTO && req->algorithm != NAV_ALGO_OPTIMAL &&
        req->algorithm != NAV_ALGO_CORRIDOR)
        return NAV_E_INVALID_ARG;
    if (req->filter) {
        if (nav_filter_check(req->filter) != NAV_OK)
            return NAV_E_INVALID_ARG;
        prep->filter = *req->filter;
    } else {
        nav_filter_default(&prep->filter);
    }
    if ((res->max_corners && !res->corners) || (res->max_polys && !res->polys) ||
        (res->max_links && !res->links))
        return NAV_E_INVALID_ARG;
    prep->budget =
        req->max_nodes == 0 || req->max_nodes > q->max_nodes ? q->max_nodes : req->max_nodes;
    /* The optimal search knows exclusions but not costs: a request for it
       with non-uniform costs gets the corridor search, which honours them. */
    prep->algo = req->algorithm;
    if (prep->algo == NAV_ALGO_AUTO || prep->algo == NAV_ALGO_OPTIMAL)
        prep->algo =
            nav_filter_is_uniform_on(&prep->filter, m) ? NAV_ALGO_OPTIMAL : NAV_ALGO_CORRIDOR;
    prep->sp = prep->ep = NAV_NONE;
    prep->stop_corners = 0;
    prep->stop_len = 0;
    prep->open_end = false;
    return NAV_OK;
}

nav_status nav_path_snap(const nav_mesh *m, const nav_path_request *req, nav_path_prep *prep,
                         nav_path_result *res) {
    uint64_t mask = prep->filter.exclude_mask;
    nav_status ss = nav_mesh_nearest(m, req->start, req->extents, mask, &prep->sp, prep->spt);
    nav_status es = nav_mesh_nearest(m, req->end, req->extents, mask, &prep->ep, prep->ept);
    if (ss == NAV_OK) {
        res->start_poly = prep->sp;
        copy3(res->start, prep->spt);
    } else {
        prep->sp = NAV_NONE;
    }
    if (es == NAV_OK) {
        res->end_poly = prep->ep;
        copy3(res->end, prep->ept);
    } else {
        prep->ep = NAV_NONE;
    }
    return ss != NAV_OK ? ss : es;
}

nav_status nav_path_run(nav_query *q, const nav_mesh *m, const nav_path_prep *prep,
                        nav_path_result *res) {
    q->corr_n = 0;
    nav_status st = prep->algo == NAV_ALGO_OPTIMAL
                        ? optimal_path(q, m, prep->sp, prep->spt, prep->ep, prep->ept,
                                       &prep->filter, prep->budget, res)
                        : corridor_path(q, m, prep->sp, prep->spt, prep->ep, prep->ept,
                                        &prep->filter, prep->budget, res);
    if (st != NAV_OK) {
        uint32_t s_poly = res->start_poly, e_poly = res->end_poly;
        clear_outputs(res);
        res->start_poly = s_poly;
        res->end_poly = e_poly;
        q->corr_n = 0;
    }
    return st;
}

nav_status nav_find_path(nav_query *q, const nav_mesh *m, const nav_path_request *req,
                         nav_path_result *res) {
    nav_path_prep prep;
    nav_status st = nav_path_validate(q, m, req, res, &prep);
    if (st == NAV_OK)
        st = nav_path_snap(m, req, &prep, res);
    if (st == NAV_OK)
        st = nav_path_run(q, m, &prep, res);
    return st;
}

void nav_path_closest_reachable(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                                const float end[3], const nav_filter *f, uint32_t *poly,
                                float pt[3]) {
    closest_reachable(q, m, start_poly, end, f, poly, pt);
}

/* ---------------------------------------------------------------- canonical corridor */

nav_status nav_path_canonical(nav_query *q, const nav_mesh *m, const nav_path_prep *prep,
                              uint32_t *nodes_expanded) {
    q->corr_n = 0;
    *nodes_expanded = 0;
    if (prep->sp == NAV_NONE || prep->ep == NAV_NONE)
        return NAV_E_INVALID_ARG;
    if (!nav_mesh_reachable(m, prep->sp, prep->ep))
        return NAV_E_NOT_FOUND;
    /* The search's costs see only the two centroids, never the request's
       points: the corridor is a function of (mesh, sp, ep, filter, budget).
       No debug output is recorded (the scratch result has no buffers). */
    nav_path_result scratch;
    memset(&scratch, 0, sizeof scratch);
    const float *cs = &m->poly_centroid[3 * (size_t)prep->sp];
    const float *ce = &m->poly_centroid[3 * (size_t)prep->ep];
    search_out so =
        corridor_search(q, m, prep->sp, cs, prep->ep, ce, &prep->filter, prep->budget, &scratch);
    *nodes_expanded = scratch.nodes_expanded;
    if (so.outcome != SEARCH_REACHED)
        return so.outcome == SEARCH_BUDGET ? NAV_E_LIMIT : NAV_E_NOT_FOUND;
    q->corr_n = extract_corridor(q, so.goal_node);
    return NAV_OK;
}

nav_status nav_path_pull_corridor(const nav_mesh *m, const nav_path_prep *prep,
                                  const uint32_t *polys, const uint32_t *via, uint32_t n,
                                  uint32_t nodes_expanded, nav_path_result *res) {
    res->flags = 0;
    res->nexpanded = 0;
    copy3(res->start, prep->spt);
    copy3(res->end, prep->ept);
    res->start_poly = prep->sp;
    res->end_poly = prep->ep;
    res->algorithm = NAV_ALGO_CORRIDOR;
    res->nodes_expanded = nodes_expanded;
    nav_status st = nav_string_pull_prefix(m, polys, via, n, prep->spt, prep->ept,
                                           prep->stop_corners, prep->stop_len, prep->open_end, res);
    if (st != NAV_OK) {
        clear_outputs(res);
        res->start_poly = prep->sp;
        res->end_poly = prep->ep;
    }
    return st;
}
