/*
 * nav_steer_flow: one search rooted at a goal, shared by every agent that
 * steers to it (issue 14: a step's cost grows with distinct targets, not
 * agents).
 *
 * The graph (fixed, so a search from either end finds the same costs):
 *  - a node on every edge slot of a polygon whose neighbour across it is
 *    passable, at the edge's midpoint; it lies in both polygons (the twin
 *    slot on the neighbour's side is another node at the same point, joined
 *    at cost 0 through either polygon);
 *  - two nodes per off-mesh link hop (an entry of link_out: a link taken in
 *    one direction), at its departure point (in the polygon it leaves) and
 *    its arrival point (in the polygon it lands on), joined by the hop at
 *    its cost (nav_link_take);
 *  - the goal point g in its polygon gp, and the agent's point x in its
 *    polygon sp.
 * Two nodes lying in a common passable polygon P are joined by the straight
 * walk inside P (polygons are convex) at |a - b| * area_cost(P), 3-D.
 * x reaches g directly only when sp == gp.
 *
 * The tree: Dijkstra from g over the reversed graph, to every node that
 * reaches g (ties by node index: the order of settling, hence every cost and
 * every next pointer, is a function of the mesh, filter, gp and g alone).
 * An agent at x in sp takes the node v of sp minimising
 * |x - v| * cost(sp) + D(v) (ties in a fixed order, g itself first when
 * sp == gp), then next pointers to g: exactly the cost a Dijkstra from x
 * on the same graph finds (tests/check_nav_steer.c compares them). The
 * polygons walked form the corridor, string-pulled for x and g.
 *
 * Each tree is built once and reused by later ticks: a step with a cache
 * lists the trees it builds there (nav_cache.h), so the next tick finds
 * them whichever thread it runs on; nav_steer also keeps references to a
 * few (least recently used dropped; see steer_flows_prepare below), and a
 * step without a cache keeps its own trees there.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query_internal.h"
#include "nav/nav_steer_internal.h"

#define FLOW_GOAL (UINT32_MAX - 1) /* next[] of a node that walks straight to g */

struct steer_flow {
    const nav_mesh *mesh; /* borrowed; uid checked by the owner */
    nav_filter filter;
    uint32_t gpoly;
    float goal[3];
    uint32_t nslots, nhops; /* nodes: slots, then 2 per hop (departure, arrival) */
    float *dist;            /* per node: cost to g; INFINITY when g is not reached */
    uint32_t *next;         /* per node: the next node toward g, or FLOW_GOAL */
    uint32_t *slot_poly;    /* per slot: its polygon */
    uint32_t *hop_from;     /* per hop: the polygon it leaves */
    uint32_t *hop_to;       /* per hop: the polygon it lands on; NAV_NONE: not takeable */
    uint32_t *in_start;     /* per polygon + 1: hops landing on it, in in_hops */
    uint32_t *in_hops;
    float *pos; /* while building: every node's point (node_pos), 3 per node */
};

typedef struct heap_item {
    double key;
    uint32_t node;
} heap_item;

typedef struct flow_heap {
    heap_item *a;
    size_t n, cap;
} flow_heap;

static int item_less(const heap_item *x, const heap_item *y) {
    return x->key < y->key || (x->key == y->key && x->node < y->node);
}

static int heap_push(flow_heap *h, double key, uint32_t node) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        heap_item *a = realloc(h->a, cap * sizeof *a);
        if (!a)
            return 0;
        h->a = a;
        h->cap = cap;
    }
    size_t i = h->n++;
    heap_item it = {key, node};
    while (i > 0 && item_less(&it, &h->a[(i - 1) / 2])) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = it;
    return 1;
}

static heap_item heap_pop(flow_heap *h) {
    heap_item top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && item_less(&h->a[c + 1], &h->a[c]))
            c++;
        if (!item_less(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = last;
    return top;
}

/* The node's point (computed). */
static void node_pos_compute(const steer_flow *f, uint32_t u, float out[3]) {
    const nav_mesh *m = f->mesh;
    if (u < f->nslots) {
        uint32_t p = f->slot_poly[u], e = u - m->poly_start[p];
        const float *a = nav_poly_vert(m, p, e), *b = nav_poly_vert(m, p, e + 1);
        for (int k = 0; k < 3; k++)
            out[k] = 0.5f * (a[k] + b[k]);
        return;
    }
    uint32_t h = (u - f->nslots) / 2;
    const nav_link *l = &m->links[m->link_out[h] & ~NAV_LINK_REVERSE];
    bool rev = (m->link_out[h] & NAV_LINK_REVERSE) != 0;
    bool depart = ((u - f->nslots) & 1u) == 0;
    memcpy(out, depart != rev ? l->start_on : l->end_on, 3 * sizeof(float));
}

/* The node's point: from the table while building, else computed. */
static void node_pos(const steer_flow *f, uint32_t u, float out[3]) {
    if (f->pos) {
        memcpy(out, &f->pos[3 * (size_t)u], 3 * sizeof(float));
        return;
    }
    node_pos_compute(f, u, out);
}

/* The polygons a node lies in (one or two); returns how many. */
static int node_polys(const steer_flow *f, uint32_t u, uint32_t out[2]) {
    if (u < f->nslots) {
        out[0] = f->slot_poly[u];
        out[1] = f->mesh->poly_nei[u];
        return 2;
    }
    uint32_t h = (u - f->nslots) / 2;
    out[0] = ((u - f->nslots) & 1u) == 0 ? f->hop_from[h] : f->hop_to[h];
    return 1;
}

static bool passable(const steer_flow *f, uint32_t p) {
    return p != NAV_NONE && nav_filter_passable(&f->filter, f->mesh->areas[p]);
}

/* A slot is a node when the polygon across it is passable. */
static bool slot_is_node(const steer_flow *f, uint32_t s) {
    return passable(f, f->mesh->poly_nei[s]);
}

void steer_flow_free(steer_flow *f) {
    if (!f)
        return;
    free(f->dist);
    free(f->next);
    free(f->slot_poly);
    free(f->hop_from);
    free(f->hop_to);
    free(f->in_start);
    free(f->in_hops);
    free(f->pos);
    free(f);
}

/* Lays out the nodes: slot polygons, hop ends, hops landing per polygon. */
static bool flow_layout(steer_flow *f) {
    const nav_mesh *m = f->mesh;
    f->nslots = m->poly_start[m->npolys];
    f->nhops = m->link_out_start[m->npolys];
    size_t nn = (size_t)f->nslots + 2 * (size_t)f->nhops;
    f->dist = malloc(nn * sizeof *f->dist);
    f->next = malloc(nn * sizeof *f->next);
    f->slot_poly = malloc(((size_t)f->nslots + 1) * sizeof *f->slot_poly);
    f->hop_from = malloc(((size_t)f->nhops + 1) * sizeof *f->hop_from);
    f->hop_to = malloc(((size_t)f->nhops + 1) * sizeof *f->hop_to);
    f->in_start = calloc((size_t)m->npolys + 2, sizeof *f->in_start);
    f->in_hops = malloc(((size_t)f->nhops + 1) * sizeof *f->in_hops);
    if (!f->dist || !f->next || !f->slot_poly || !f->hop_from || !f->hop_to || !f->in_start ||
        !f->in_hops)
        return false;
    for (uint32_t p = 0; p < m->npolys; p++) {
        for (uint32_t s = m->poly_start[p]; s < m->poly_start[p + 1]; s++)
            f->slot_poly[s] = p;
        for (uint32_t k = m->link_out_start[p]; k < m->link_out_start[p + 1]; k++) {
            nav_link_hop lh;
            f->hop_from[k] = p;
            f->hop_to[k] = passable(f, p) && nav_link_take(m, m->link_out[k], &f->filter, &lh)
                               ? lh.to
                               : NAV_NONE;
            if (f->hop_to[k] != NAV_NONE)
                f->in_start[f->hop_to[k] + 2]++;
        }
    }
    for (uint32_t p = 0; p < m->npolys; p++)
        f->in_start[p + 2] += f->in_start[p + 1];
    for (uint32_t k = 0; k < f->nhops; k++)
        if (f->hop_to[k] != NAV_NONE)
            f->in_hops[f->in_start[f->hop_to[k] + 1]++] = k;
    for (size_t i = 0; i < nn; i++) {
        f->dist[i] = INFINITY;
        f->next[i] = NAV_NONE;
    }
    f->pos = malloc((nn ? nn : 1) * 3 * sizeof *f->pos);
    if (!f->pos)
        return false;
    for (size_t i = 0; i < nn; i++)
        node_pos_compute(f, (uint32_t)i, &f->pos[3 * i]);
    return true;
}

/* Lowers node v's cost to d through u (the heap keeps stale duplicates). */
static bool relax(steer_flow *f, flow_heap *h, double *dd, uint32_t v, double d, uint32_t u) {
    if (!(d < dd[v]))
        return true;
    dd[v] = d;
    f->next[v] = u;
    return heap_push(h, d, v);
}

/* Every node that can walk inside P to point at (cost d0 at `at`): P's
   slots, the hops leaving P (departures) and landing on P (arrivals). */
static bool relax_in_poly(steer_flow *f, flow_heap *h, double *dd, uint32_t P, const float at[3],
                          double d0, uint32_t u) {
    const nav_mesh *m = f->mesh;
    double c = f->filter.area_cost[m->areas[P]];
    float q[3];
    for (uint32_t s = m->poly_start[P]; s < m->poly_start[P + 1]; s++) {
        /* settled nodes (dist set) are final: no distance to compute */
        if (s == u || isfinite(f->dist[s]) || !slot_is_node(f, s))
            continue;
        node_pos(f, s, q);
        if (!relax(f, h, dd, s, d0 + nav_dist3d(q, at) * c, u))
            return false;
    }
    for (uint32_t k = m->link_out_start[P]; k < m->link_out_start[P + 1]; k++) {
        uint32_t v = f->nslots + 2 * k;
        if (f->hop_to[k] == NAV_NONE || v == u || isfinite(f->dist[v]))
            continue;
        node_pos(f, v, q);
        if (!relax(f, h, dd, v, d0 + nav_dist3d(q, at) * c, u))
            return false;
    }
    for (uint32_t i = f->in_start[P]; i < f->in_start[P + 1]; i++) {
        uint32_t v = f->nslots + 2 * f->in_hops[i] + 1;
        if (v == u || isfinite(f->dist[v]))
            continue;
        node_pos(f, v, q);
        if (!relax(f, h, dd, v, d0 + nav_dist3d(q, at) * c, u))
            return false;
    }
    return true;
}

steer_flow *steer_flow_build(const nav_mesh *m, const nav_filter *filter, uint32_t gpoly,
                             const float goal[3]) {
    if (!m || gpoly >= m->npolys)
        return NULL;
    steer_flow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->mesh = m;
    if (filter)
        f->filter = *filter;
    else
        nav_filter_default(&f->filter);
    f->gpoly = gpoly;
    memcpy(f->goal, goal, sizeof f->goal);
    flow_heap h = {NULL, 0, 0};
    size_t nn = (size_t)m->poly_start[m->npolys] + 2 * (size_t)m->link_out_start[m->npolys];
    double *dd = NULL;
    bool ok = flow_layout(f) && (dd = malloc((nn ? nn : 1) * sizeof *dd)) != NULL;
    for (size_t i = 0; ok && i < nn; i++)
        dd[i] = INFINITY;
    /* settle g: every node of gp walks straight to it */
    if (ok && passable(f, gpoly)) {
        ok = relax_in_poly(f, &h, dd, gpoly, goal, 0.0, FLOW_GOAL);
        while (ok && h.n > 0) {
            heap_item it = heap_pop(&h);
            uint32_t u = it.node;
            if (it.key > dd[u])
                continue; /* a stale duplicate */
            f->dist[u] = (float)dd[u];
            float at[3];
            node_pos(f, u, at);
            uint32_t ps[2];
            int np = node_polys(f, u, ps);
            for (int k = 0; k < np && ok; k++)
                if (passable(f, ps[k]))
                    ok = relax_in_poly(f, &h, dd, ps[k], at, dd[u], u);
            /* an arrival is reached from its departure by the hop */
            if (ok && u >= f->nslots && ((u - f->nslots) & 1u) == 1) {
                uint32_t k = (u - f->nslots) / 2;
                nav_link_hop lh;
                if (nav_link_take(m, m->link_out[k], &f->filter, &lh))
                    ok = relax(f, &h, dd, u - 1, dd[u] + lh.cost, u);
            }
        }
    }
    free(h.a);
    free(dd);
    free(f->pos); /* agents look up a few points each: computed then */
    f->pos = NULL;
    if (!ok) {
        steer_flow_free(f);
        return NULL;
    }
    return f;
}

bool steer_flow_matches(const steer_flow *f, const nav_mesh *m, const nav_filter *filter,
                        uint32_t gpoly, const float goal[3]) {
    nav_filter d;
    if (!filter) {
        nav_filter_default(&d);
        filter = &d;
    }
    return f->mesh == m && f->gpoly == gpoly && memcmp(f->goal, goal, sizeof f->goal) == 0 &&
           f->filter.exclude_mask == filter->exclude_mask &&
           memcmp(f->filter.area_cost, filter->area_cost, sizeof f->filter.area_cost) == 0;
}

double steer_flow_cost(const steer_flow *f, uint32_t sp, const float x[3], uint32_t *first) {
    const nav_mesh *m = f->mesh;
    *first = NAV_NONE;
    if (sp >= m->npolys || !passable(f, sp))
        return INFINITY;
    double c = f->filter.area_cost[m->areas[sp]], best = INFINITY;
    if (sp == f->gpoly) {
        best = nav_dist3d(x, f->goal) * c;
        *first = FLOW_GOAL;
    }
    float q[3];
    /* the same candidates relax_in_poly offers, in index order */
    for (uint32_t s = m->poly_start[sp]; s < m->poly_start[sp + 1]; s++) {
        if (!slot_is_node(f, s) || !isfinite(f->dist[s]))
            continue;
        node_pos(f, s, q);
        double d = nav_dist3d(q, x) * c + f->dist[s];
        if (d < best) {
            best = d;
            *first = s;
        }
    }
    for (uint32_t k = m->link_out_start[sp]; k < m->link_out_start[sp + 1]; k++) {
        uint32_t v = f->nslots + 2 * k;
        if (f->hop_to[k] == NAV_NONE || !isfinite(f->dist[v]))
            continue;
        node_pos(f, v, q);
        double d = nav_dist3d(q, x) * c + f->dist[v];
        if (d < best) {
            best = d;
            *first = v;
        }
    }
    for (uint32_t i = f->in_start[sp]; i < f->in_start[sp + 1]; i++) {
        uint32_t v = f->nslots + 2 * f->in_hops[i] + 1;
        if (!isfinite(f->dist[v]))
            continue;
        node_pos(f, v, q);
        double d = nav_dist3d(q, x) * c + f->dist[v];
        if (d < best) {
            best = d;
            *first = v;
        }
    }
    return best;
}

/* Appends polygon P entered by `via` to the corridor; a return into the
   polygon before the last one (a zero-length visit through a twin node,
   or a detour the string pull does not need) drops the last instead. */
static bool corridor_push(uint32_t *polys, uint32_t *via, uint32_t *n, uint32_t max, uint32_t P,
                          uint32_t v) {
    if (*n > 0 && polys[*n - 1] == P)
        return true;
    if (v == NAV_NONE && *n > 1 && polys[*n - 2] == P && via[*n - 1] == NAV_NONE) {
        (*n)--;
        return true;
    }
    if (*n == max)
        return false;
    polys[*n] = P;
    via[*n] = v;
    (*n)++;
    return true;
}

nav_status steer_flow_corridor(const steer_flow *f, uint32_t sp, const float x[3], uint32_t *polys,
                               uint32_t *via, uint32_t max, uint32_t *n, double *cost,
                               bool *complete) {
    const nav_mesh *m = f->mesh;
    *n = 0;
    uint32_t u;
    *complete = false;
    *cost = steer_flow_cost(f, sp, x, &u);
    if (u == NAV_NONE)
        return NAV_E_NOT_FOUND;
    if (!corridor_push(polys, via, n, max, sp, NAV_NONE))
        return NAV_E_LIMIT;
    /* walk the next pointers; the polygon of each hop is the one both ends
       lie in (the current one when both do). A node's polygons are looked
       up once, as w, and kept for its turn as u: the walk is most of a
       tick's cost for agents on a tree, and those reads miss the cache. */
    uint32_t pu[2], pw[2];
    int nu = u == FLOW_GOAL ? 0 : node_polys(f, u, pu), nw;
    for (uint32_t guard = 0; u != FLOW_GOAL; guard++) {
        if (guard > f->nslots + 2 * f->nhops)
            return NAV_E_INVALID_ARG; /* cannot happen: next pointers form a tree */
        if (*n == max)
            return NAV_OK; /* a prefix: *complete stays false */
        uint32_t w = f->next[u];
        pw[0] = pw[1] = f->gpoly;
        nw = w == FLOW_GOAL ? 1 : node_polys(f, w, pw);
        if (u >= f->nslots && ((u - f->nslots) & 1u) == 0 && w == u + 1) {
            /* the hop of a link */
            uint32_t k = (u - f->nslots) / 2;
            if (!corridor_push(polys, via, n, max, f->hop_to[k], m->link_out[k]))
                return NAV_OK; /* full: a prefix */
            u = w;
            nu = nw;
            pu[0] = pw[0];
            pu[1] = pw[1];
            continue;
        }
        uint32_t cur = polys[*n - 1], P = NAV_NONE;
        for (int a = 0; a < nu; a++)
            for (int b = 0; b < nw; b++)
                if (pu[a] == pw[b] && (P == NAV_NONE || pu[a] == cur))
                    P = pu[a];
        if (P == NAV_NONE)
            return NAV_E_INVALID_ARG;
        if (!corridor_push(polys, via, n, max, P, NAV_NONE))
            return NAV_OK; /* full: a prefix */
        u = w;
        nu = nw;
        pu[0] = pw[0];
        pu[1] = pw[1];
    }
    *complete = true;
    return NAV_OK;
}

size_t steer_flow_bytes_for(const nav_mesh *m) {
    size_t slots = m->poly_start[m->npolys], hops = m->link_out_start[m->npolys];
    size_t nn = slots + 2 * hops;
    return sizeof(struct steer_flow) + nn * (sizeof(float) + sizeof(uint32_t)) + slots * 4 +
           hops * 12 + ((size_t)m->npolys + 2) * 4;
}

size_t steer_flow_bytes(const steer_flow *f) {
    size_t nn = (size_t)f->nslots + 2 * (size_t)f->nhops;
    return sizeof *f + nn * (sizeof(float) + sizeof(uint32_t)) + (size_t)f->nslots * 4 +
           (size_t)f->nhops * 12 + ((size_t)f->mesh->npolys + 2) * 4;
}

/* ---- the trees a nav_steer keeps (nav_steer_internal.h) ---- */

void steer_flow_slot_drop(steer_flow_slot *slot) {
    if (slot->shared)
        nav_cache_tree_release(slot->shared);
    else
        steer_flow_free(slot->flow);
    slot->flow = NULL;
    slot->shared = NULL;
}

static void flow_free_void(void *f) {
    steer_flow_free(f);
}

/* A free slot in s->flows, or NULL when out of memory. */
static steer_flow_slot *flow_slot_new(nav_steer *s) {
    if (s->nflows == s->capflows) {
        uint32_t cap = s->capflows ? 2 * s->capflows : STEER_FLOWS;
        steer_flow_slot *nf = realloc(s->flows, cap * sizeof *nf);
        if (!nf)
            return NULL;
        s->flows = nf;
        s->capflows = cap;
    }
    return &s->flows[s->nflows++];
}

/* The tree of goal (on gpoly) this scratch keeps or the cache lists (then
   kept here too), or NULL; marks it used this tick. */
static const steer_flow *flow_find(nav_steer *s, uint32_t gpoly, const float goal[3]) {
    uint64_t uid = nav_mesh_uid(s->mesh);
    for (uint32_t k = 0; k < s->nflows; k++) {
        steer_flow_slot *f = &s->flows[k];
        if (f->uid == uid && steer_flow_matches(f->flow, s->mesh, s->params->filter, gpoly, goal)) {
            f->used = s->tick;
            return f->flow;
        }
    }
    if (!s->cache)
        return NULL;
    nav_cache_tree_key key;
    nav_cache_tree_key_make(&key, s->mesh, s->params->filter, gpoly, goal);
    nav_cache_tree *t = nav_cache_tree_get(s->cache, &key);
    if (!t)
        return NULL;
    steer_flow_slot *slot = flow_slot_new(s);
    if (!slot) {
        nav_cache_tree_release(t);
        return NULL;
    }
    *slot = (steer_flow_slot){nav_cache_tree_data(t), uid, s->tick, t};
    return slot->flow;
}

/* Keeps f (built this tick) and lists it in the cache when there is one;
   the tree to use (the cache's when another thread listed the same one
   first), or NULL when out of memory (f is freed). */
static steer_flow *flow_keep(nav_steer *s, steer_flow *f) {
    steer_flow_slot *slot = flow_slot_new(s);
    if (!slot) {
        steer_flow_free(f);
        return NULL;
    }
    nav_cache_tree *t = NULL;
    if (s->cache) {
        nav_cache_tree_key key;
        nav_cache_tree_key_make(&key, s->mesh, s->params->filter, f->gpoly, f->goal);
        t = nav_cache_tree_put(s->cache, &key, f, steer_flow_bytes(f), flow_free_void);
        if (!t) {
            s->nflows--;
            return NULL;
        }
        f = nav_cache_tree_data(t);
    }
    *slot = (steer_flow_slot){f, nav_mesh_uid(s->mesh), s->tick, t};
    return f;
}

/* A tree to build this tick. */
typedef struct flow_job {
    const nav_mesh *mesh;
    const nav_filter *filter;
    uint32_t gpoly;
    float goal[3];
    steer_flow *out;
} flow_job;

typedef struct flow_worker {
    flow_job *jobs;
    uint32_t njobs, first, stride;
    double deadline; /* 0: none; else no build starts after it */
    bool late;
} flow_worker;

static void *flow_worker_main(void *p) {
    flow_worker *w = p;
    for (uint32_t k = w->first; k < w->njobs; k += w->stride) {
        if (w->deadline > 0 && steer_clock() > w->deadline) {
            w->late = true;
            return NULL;
        }
        flow_job *j = &w->jobs[k];
        j->out = steer_flow_build(j->mesh, j->filter, j->gpoly, j->goal);
    }
    return NULL;
}

/* Builds the jobs, on up to `threads` threads (trees are pure functions of
   their job: any split gives the same trees). false: the deadline passed
   before every build started (a tree costs a search of the whole mesh, so
   each thread reads it before each). */
static bool flow_build_all(flow_job *jobs, uint32_t njobs, uint32_t threads, double deadline) {
    if (threads > njobs)
        threads = njobs;
    if (threads > STEER_MAX_LANES)
        threads = STEER_MAX_LANES;
    flow_worker w[STEER_MAX_LANES];
    pthread_t tid[STEER_MAX_LANES];
    bool started[STEER_MAX_LANES] = {false};
    for (uint32_t t = 0; t < threads; t++)
        w[t] = (flow_worker){jobs, njobs, t, threads, deadline, false};
    for (uint32_t t = 1; t < threads; t++)
        started[t] = pthread_create(&tid[t], NULL, flow_worker_main, &w[t]) == 0;
    flow_worker_main(&w[0]);
    bool late = w[0].late;
    for (uint32_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            flow_worker_main(&w[t]);
        late = late || w[t].late;
    }
    return !late;
}

bool steer_flows_prepare(nav_steer *s) {
    const nav_steer_params *pr = s->params;
    if (pr->max_nodes != 0)
        return true;
    /* How many goals get a tree this tick: the first ones in agent order,
       up to STEER_FLOW_TICK_MAX and to what STEER_FLOW_BYTES holds on this
       mesh; a function of the request alone, never of what is kept (the
       agents of other goals search on their own). */
    size_t per = steer_flow_bytes_for(s->mesh);
    uint32_t allowed = STEER_FLOW_TICK_MAX;
    if (per > 0 && STEER_FLOW_BYTES / per < allowed)
        allowed = (uint32_t)(STEER_FLOW_BYTES / per);
    flow_job jobs[STEER_FLOW_TICK_MAX];
    uint32_t given = 0, njobs = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        steer_gcount *gc = s->agents[i].gc;
        if (!gc || gc->count < STEER_FLOW_MIN || gc->flow || gc->tried)
            continue;
        gc->tried = 1;
        if (given == allowed)
            continue;
        given++;
        const steer_goal *ge = steer_goal_entry(s, s->in[i].target);
        if (!ge)
            continue;
        if ((gc->flow = flow_find(s, ge->poly, ge->on)) != NULL)
            continue;
        /* to build: once per snapped goal (two targets can snap alike) */
        uint32_t k = 0;
        while (k < njobs &&
               !(jobs[k].gpoly == ge->poly && memcmp(jobs[k].goal, ge->on, sizeof ge->on) == 0))
            k++;
        if (k == njobs) {
            jobs[k] = (flow_job){s->mesh, pr->filter, ge->poly, {0, 0, 0}, NULL};
            memcpy(jobs[k].goal, ge->on, sizeof ge->on);
            njobs++;
        }
        gc->job = (int32_t)k;
    }
    if (njobs > 0) {
        /* built in parallel with the step's threads */
        bool in_time = flow_build_all(jobs, njobs, pr->threads > 1 ? pr->threads : 1, pr->deadline);
        for (uint32_t k = 0; k < njobs; k++)
            if (jobs[k].out)
                jobs[k].out = flow_keep(s, jobs[k].out);
        for (uint32_t i = 0; i < s->n; i++) {
            steer_gcount *gc = s->agents[i].gc;
            if (gc && gc->job >= 0 && !gc->flow)
                gc->flow = jobs[gc->job].out;
        }
        if (!in_time)
            return false;
    }
    /* keep at most STEER_FLOWS between ticks: drop the least recently used
       of those this tick did not use */
    while (s->nflows > STEER_FLOWS) {
        uint32_t lru = UINT32_MAX;
        for (uint32_t k = 0; k < s->nflows; k++)
            if (s->flows[k].used != s->tick &&
                (lru == UINT32_MAX || s->tick - s->flows[k].used > s->tick - s->flows[lru].used))
                lru = k;
        if (lru == UINT32_MAX)
            break;
        steer_flow_slot_drop(&s->flows[lru]);
        s->flows[lru] = s->flows[--s->nflows];
    }
    return true;
}
