/*
 * nav_corner_search: a query over the corner graph (nav_corner.h).
 *
 * One priority queue orders three kinds of work by a lower bound on the
 * length of any path they can lead to:
 *   - cones of sight from the start (the visibility walk, one cone at a
 *     time): key = Polyanya's heuristic for root s through the cone's
 *     interval to t (|s t| for the first cones); a corner the cone shows
 *     joins the graph search with g = |s c|, a goal in sight ends it;
 *   - cones of sight from the goal: key = the same bound with the roles of
 *     s and t swapped (every corner c beyond the interval has
 *     |s c| + |c t| >= it); a corner they show learns its distance to t;
 *   - graph nodes: key = g + |c t| (A*, Euclidean heuristic, consistent
 *     because a link costs at least the xz distance between its ends).
 * When start and goal are near, no goal cones: each node closed tests its
 * own sight of the goal instead (cs_try_goal), cheaper there.
 * So neither walk goes past the ellipse the answer lies in, and the graph
 * search over corners replaces the interval search's propagation from
 * every bend. When the goal node is taken from the queue, no waiting item
 * can lead to a shorter path: undiscovered corners lie behind waiting
 * cones whose keys bound them, and a node closed before a goal cone shows
 * it sees t is offered to the goal at that moment (its g is final).
 * Equal keys leave in heap order (a tie-break on g cost a third of the
 * queue's instructions and changes only which of equal paths is taken).
 *
 * Owns the per-thread scratch: node arrays stamped with a search
 * generation (never cleared), the queue (lazy deletion: a node may be in
 * it several times; stale entries are skipped), the cone pool, the path and
 * the corridor scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner_internal.h"

#define CS_MAX_GOAL 32 /* polygons sharing the goal point (a vertex fan) */

/* A node record's stamp: the search generation above CS_FLAG_BITS flag
   bits; the record is valid when stamp >> CS_FLAG_BITS == gen. */
enum { CS_CLOSED = 1, CS_HOP = 2, CS_GOAL = 4, CS_FLAG_BITS = 3 };
#define CS_GEN_MAX (UINT32_MAX >> CS_FLAG_BITS)
enum { CS_NODE, CS_SCONE, CS_GCONE };

/* A queue entry, 16 bytes. The key is the bit pattern of f, which is
   non-negative and never NaN, so unsigned order is its numeric order.
   Integer keys compare without the branches of double compares (the
   parity test for NaN, the separate equality test) and pick a heap child
   by index arithmetic. */
typedef struct cs_heap {
    uint64_t fk;
    uint32_t id;
    uint32_t tag; /* CS_NODE (id: node), CS_SCONE / CS_GCONE (id: cone) */
} cs_heap;

/* A node's search state: its stamp (gen << CS_FLAG_BITS | flags) in one
   array, cost and parent in another. The edge scan reads one stamp per
   edge, at random (is the target closed?), and only the edges that pass
   read the rest; apart, town's stamps are 25 KB, within a core's L1 cache,
   where the 16-byte records holding them were 99 KB (they had been 32
   bytes, when cachegrind put a fifth of a short town query's L2 misses on
   this read). Flags in the stamp (CS_CLOSED; CS_HOP: reached by its
   link's hop; CS_GOAL: a goal cone showed it, its distance to the goal is
   in gd[]). A node a goal cone showed before any offer has g = INFINITY. */
typedef struct cs_node {
    double g; /* cost from the start */
    uint32_t par;
} cs_node;

struct nav_corner_query {
    nav_cwalk w, wg; /* the start's walk (and segment walks), the goal's */
    uint32_t cap;    /* node records: cap entries (nodes + the goal) */
    cs_node *ns;
    uint32_t *st; /* per node: its stamp (see cs_node) */
    double *gd;   /* per node: distance to the goal, valid with CS_GOAL */
    uint32_t gen;
    cs_heap *heap;
    uint32_t nheap, heap_cap;
    cs_heap front; /* the least entry pushed since the last pop, out of the heap */
    int has_front;
    cs_heap *far; /* entries keyed above the threshold, unordered */
    uint32_t nfar, far_cap;
    double tf;   /* the threshold */
    uint64_t tk; /* its bits */
    nav_cw_item *cones;
    uint32_t ncones, cones_cap;
    uint32_t *chain;   /* the path's nodes, start side first */
    uint32_t *sl, *gl; /* table mode: nodes the start's / the goal's walk showed */
    uint32_t nsl, ngl;
    uint32_t *seg; /* one segment's polygons (npolys entries) */
    uint32_t seg_cap;

    /* per search */
    const nav_mesh *m;
    const nav_cgraph *gr;
    double sx, sz, tx, tz;
    uint32_t goal_node; /* = gr->nnodes */
    uint32_t goal[CS_MAX_GOAL], ngoal;
    int direct, nomem;
    /* Sight tests (see cs_try_goal): while `tests` is set no goal walk
       runs and every node closed tests its sight of the goal; ntests this
       search's tests, max_tests how many before the goal's walk starts
       after all (from goal[0], the goal's piece). */
    int tests;
    uint32_t ntests, max_tests;
    uint32_t nwork, max_work; /* work done (cones, nodes and tests) and the budget */
    int over;                 /* a test was due past the budget */
    uint32_t rays;            /* nav_corner_query_set_rays (NAV_CORNER_RAYS_AUTO) */
    uint64_t sight_tests;     /* over all searches: tests made */
    uint64_t goal_walks;      /* over all searches: searches that walked from the goal */
    uint64_t excl;            /* link areas not to take */
    /* A bound on the answer's length, times 1 + CS_UB_SLACK: the least
       g + |v t| over the nodes known both from the start side (g, a path)
       and from a goal cone (v sees t), so a path of that length exists.
       An entry whose key is above it would leave the queue after the goal,
       i.e. never: it is not pushed (see cs_relax). */
    double ub;
    int no_bound;            /* tests: the bound off (nav_corner_query_set_bound) */
    int no_table;            /* tests: A* even where the graph has a table */
    uint32_t best_s, best_g; /* table mode: the best pair so far */
    double best;             /* and its length */
    uint64_t pruned;         /* entries the bound kept out, over all searches */
    uint64_t tabled;         /* searches answered in table mode, over all searches */
    nav_path_result *res;
};

nav_corner_query *nav_corner_query_new(void) {
    nav_corner_query *cq = calloc(1, sizeof(nav_corner_query));
    if (cq)
        cq->rays = NAV_CORNER_RAYS_AUTO;
    return cq;
}

void nav_corner_query_set_rays(nav_corner_query *cq, uint32_t rays) {
    cq->rays = rays;
}

void nav_corner_query_goal_counts(const nav_corner_query *cq, uint64_t *tests, uint64_t *walks) {
    *tests = cq ? cq->sight_tests : 0;
    *walks = cq ? cq->goal_walks : 0;
}

void nav_corner_query_set_bound(nav_corner_query *cq, int on) {
    cq->no_bound = !on;
}

void nav_corner_query_set_table(nav_corner_query *cq, int on) {
    cq->no_table = !on;
}

uint64_t nav_corner_query_pruned(const nav_corner_query *cq) {
    return cq->pruned;
}

uint64_t nav_corner_query_tabled(const nav_corner_query *cq) {
    return cq ? cq->tabled : 0;
}

void nav_corner_query_free(nav_corner_query *cq) {
    if (!cq)
        return;
    nav_cwalk_free(&cq->w);
    nav_cwalk_free(&cq->wg);
    free(cq->ns);
    free(cq->st);
    free(cq->gd);
    free(cq->heap);
    free(cq->far);
    free(cq->cones);
    free(cq->chain);
    free(cq->sl);
    free(cq->gl);
    free(cq->seg);
    free(cq);
}

#define CS_GROW(ptr, n)                                                                            \
    do {                                                                                           \
        void *t_ = realloc((ptr), (size_t)(n) * sizeof *(ptr));                                    \
        if (!t_)                                                                                   \
            return 0;                                                                              \
        (ptr) = t_;                                                                                \
    } while (0)

/* Sizes the scratch for graph gr and mesh m (grow only); new generation. */
static int cs_prepare(nav_corner_query *cq, const nav_mesh *m, const nav_cgraph *gr) {
    uint32_t need = gr->nnodes + 1;
    if (need > cq->cap) {
        CS_GROW(cq->ns, need);
        CS_GROW(cq->st, need);
        CS_GROW(cq->gd, need);
        CS_GROW(cq->chain, need + 1);
        CS_GROW(cq->sl, need);
        CS_GROW(cq->gl, need);
        memset(cq->st + cq->cap, 0, (size_t)(need - cq->cap) * sizeof *cq->st);
        cq->cap = need;
    }
    if (m->npolys > cq->seg_cap) {
        CS_GROW(cq->seg, m->npolys);
        cq->seg_cap = m->npolys;
    }
    if (++cq->gen > CS_GEN_MAX) {
        memset(cq->st, 0, (size_t)cq->cap * sizeof *cq->st);
        cq->gen = 1;
    }
    cq->nheap = 0;
    cq->has_front = 0;
    cq->nfar = 0;
    cq->ncones = 0;
    cq->nomem = 0;
    return 1;
}

/* ---- queue (min f) ---- */

/* A 4-ary heap: half the levels of a binary one, and a node's four
   children share one or two cache lines; the search pushes about three
   entries for every one it pops (most discovered corners are never
   taken), so pops, not pushes, are what the levels cost. */
#define CS_ARITY 4
/* cs_heap_pop picks the least of four children without branches */
_Static_assert(CS_ARITY == 4, "cs_heap_pop assumes four children");

static inline uint64_t cs_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline int cs_before(const cs_heap *a, const cs_heap *b) {
    return a->fk < b->fk;
}

/* Room for entry n of array *a (capacity *cap, grown by doubling): 0 when
   it cannot grow (the caller sets nomem). */
static inline int cs_room(cs_heap **a, uint32_t n, uint32_t *cap) {
    if (n < *cap)
        return 1;
    uint32_t c = *cap ? 2 * *cap : 1024;
    cs_heap *t = realloc(*a, (size_t)c * sizeof *t);
    if (!t)
        return 0;
    *a = t;
    *cap = c;
    return 1;
}

static inline __attribute__((always_inline)) void cs_heap_push(nav_corner_query *cq, cs_heap it) {
    if (!cs_room(&cq->heap, cq->nheap, &cq->heap_cap)) {
        cq->nomem = 1;
        return;
    }
    uint32_t i = cq->nheap++;
    while (i > 0) {
        uint32_t p = (i - 1) / CS_ARITY;
        if (!cs_before(&it, &cq->heap[p]))
            break;
        cq->heap[i] = cq->heap[p];
        i = p;
    }
    cq->heap[i] = it;
}

/* The queue: the heap and a front slot. A best-first search's next entry
   is often one it has just pushed (an expansion's cheapest successor, with
   a consistent heuristic, is rarely beaten), so the least entry pushed
   since the last pop waits outside the heap and, when no heap entry is
   below it, leaves without the heap's sift-down (the pop's cost) and
   without its sift-up. Same order as the heap alone, ties aside (equal
   keys leave in any order, see the file comment). Entries keyed above
   the threshold go to the far list instead (see cs_refill). */
static inline __attribute__((always_inline)) void cs_push(nav_corner_query *cq, double f,
                                                          uint32_t id, uint32_t tag) {
    /* f >= 0 (a sum of distances): + 0.0 keeps a zero's sign positive */
    cs_heap it = {cs_bits(f + 0.0), id, tag};
    if (it.fk > cq->tk) {
        if (!cs_room(&cq->far, cq->nfar, &cq->far_cap)) {
            cq->nomem = 1;
            return;
        }
        cq->far[cq->nfar++] = it;
        return;
    }
    if (!cq->has_front) {
        cq->front = it;
        cq->has_front = 1;
        return;
    }
    if (it.fk < cq->front.fk) {
        cs_heap t = cq->front;
        cq->front = it;
        it = t;
    }
    cs_heap_push(cq, it);
}

static cs_heap cs_heap_pop(nav_corner_query *cq) {
    cs_heap *h = cq->heap;
    cs_heap top = h[0];
    cs_heap last = h[--cq->nheap];
    uint32_t i = 0, n = cq->nheap;
    for (;;) {
        uint32_t c = CS_ARITY * i + 1, best = c;
        if (c >= n)
            break;
        if (c + CS_ARITY <= n) {
            /* all four: the smallest by index arithmetic (which child wins
               is a coin toss, a branch on it a misprediction in two) */
            uint32_t b1 = c + (uint32_t)cs_before(&h[c + 1], &h[c]);
            uint32_t b2 = c + 2 + (uint32_t)cs_before(&h[c + 3], &h[c + 2]);
            best = b1 + (b2 - b1) * (uint32_t)cs_before(&h[b2], &h[b1]);
        } else {
            for (uint32_t k = c + 1; k < n; k++)
                if (cs_before(&h[k], &h[best]))
                    best = k;
        }
        if (!cs_before(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    if (n > 0)
        h[i] = last;
    return top;
}

static cs_heap cs_pop(nav_corner_query *cq) {
    if (cq->has_front && (cq->nheap == 0 || cq->front.fk <= cq->heap[0].fk)) {
        cq->has_front = 0;
        return cq->front;
    }
    return cs_heap_pop(cq);
}

/*
 * Far entries. Two thirds of a town query's node entries are keyed above
 * the answer and never leave the queue, and almost all of them are pushed
 * before the bound (cq->ub) is known. Entries keyed above a threshold
 * (first CS_FAR_FIRST times |s t|, a lower bound on the answer) are
 * appended to an unordered list instead of being sifted into the heap;
 * when the heap runs dry the threshold rises to CS_FAR_GROW times the
 * least of them, those below it move into the heap and those above the
 * bound by then are dropped (the rule of cs_relax). The queue still gives
 * out its least entry: every far entry is keyed above every heap entry.
 * Measured on town's bands (a pass each): 3 % off short and medium, 2 % off
 * long; 1.05 and 1.2 were slower.
 */
#define CS_FAR_FIRST 1.1
#define CS_FAR_GROW 1.1

/* The heap ran dry: raise the threshold and refill (see above). 0 when
   nothing is left. */
static int cs_refill(nav_corner_query *cq) {
    while (cq->nheap == 0 && cq->nfar > 0) {
        uint64_t least = cq->far[0].fk;
        for (uint32_t i = 1; i < cq->nfar; i++)
            least = cq->far[i].fk < least ? cq->far[i].fk : least;
        double lf;
        memcpy(&lf, &least, sizeof lf);
        cq->tf = (lf > cq->tf ? lf : cq->tf) * CS_FAR_GROW;
        cq->tk = cs_bits(cq->tf);
        uint64_t ubk = cs_bits(cq->ub);
        uint32_t keep = 0;
        for (uint32_t i = 0; i < cq->nfar; i++) {
            cs_heap it = cq->far[i];
            if (it.fk > ubk)
                cq->pruned++;
            else if (it.fk <= cq->tk)
                cs_heap_push(cq, it);
            else
                cq->far[keep++] = it;
        }
        cq->nfar = keep;
    }
    return cq->nheap > 0;
}

static inline int cs_queue_empty(nav_corner_query *cq) {
    return cq->nheap == 0 && !cq->has_front && !cs_refill(cq);
}

static inline double cs_dist(double ax, double az, double bx, double bz) {
    double dx = bx - ax, dz = bz - az;
    return sqrt(dx * dx + dz * dz);
}

/* Slack on the bound: entries whose keys equal the answer up to rounding
   (equal paths summed in another order) are kept, so every entry the
   search would take before the goal is still queued and the answer keeps
   its length (the relative rounding of a sum of a few hundred distances
   is below 1e-13). Not always the same steps: entries of equal keys leave
   in heap order, and a heap holding fewer entries may order them
   otherwise, so among equal paths another may be taken (tested:
   check_nav_corner.c, test_bound_same_answers). */
#define CS_UB_SLACK 1e-9

/* Node v, at distance g from the start by some path, sees the goal from
   distance gd: s ... v t is a path; the bound may fall. */
static inline void cs_bound_by(nav_corner_query *cq, double g, double gd) {
    if (cq->no_bound)
        return;
    double b = (g + gd) * (1 + CS_UB_SLACK);
    cq->ub = b < cq->ub ? b : cq->ub;
}

/* Offers node v, at (vx, vz), the cost g through parent u (NAV_NONE: the
   start). The caller passes v's position: the edge scan has read it from
   gr->fxz (the floats gr->xz was made from, so the same values), and
   reading gr->xz here would touch one more cache line per relaxation.
   Forced inline: with its four callers gcc kept it out of line, and the
   call was a tenth of a town query's instructions (town short 58.3 M ->
   54.3 M for the band in callgrind, long 326 M -> 288 M with cs_sigma's). */
static inline __attribute__((always_inline)) void cs_relax(nav_corner_query *cq, uint32_t v,
                                                           double vx, double vz, double g,
                                                           uint32_t u, uint8_t hop) {
    cs_node *n = &cq->ns[v];
    uint32_t *sp = &cq->st[v];
    uint32_t valid = (*sp >> CS_FLAG_BITS) == cq->gen;
    if (valid && ((*sp & CS_CLOSED) || g >= n->g))
        return;
    /* the heuristic |v t|: a goal cone that showed v computed it already
       (the same expression, so the same bits); the goal node sits at t,
       so its distance comes out exactly 0 */
    double h;
    uint32_t goal = valid ? *sp & CS_GOAL : 0;
    if (goal) {
        h = cq->gd[v];
        cs_bound_by(cq, g, h);
    } else {
        h = cs_dist(vx, vz, cq->tx, cq->tz);
    }
    /* f above the bound: this entry would leave after the goal, and no
       later offer of v with a larger g matters either (v is left unset,
       as if never offered: a cheaper offer still gets in) */
    if (g + h > cq->ub) {
        cq->pruned++;
        return;
    }
    *sp = cq->gen << CS_FLAG_BITS | goal | hop;
    n->g = g;
    n->par = u;
    cs_push(cq, g + h, v, CS_NODE);
}

/* ---- cones ---- */

/*
 * Polyanya's bound: the shortest r -> (a point of [a, b]) -> x, with x
 * mirrored across the line ab when it lies on r's side (a path from r
 * through the interval that ends on r's side crosses the line twice).
 * The cone has a on its positive side (nav_cone).
 */
static double cs_bound(double rx, double rz, const nav_cw_item *it, double x, double z) {
    double ax = it->ax, az = it->az, bx = it->bx, bz = it->bz;
    double sr = nav_corner_orient(ax, az, bx, bz, rx, rz);
    double sx = nav_corner_orient(ax, az, bx, bz, x, z);
    if ((sr > 0 && sx > 0) || (sr < 0 && sx < 0)) {
        double dx = bx - ax, dz = bz - az, l2 = dx * dx + dz * dz;
        if (l2 > 0) {
            double u = ((x - ax) * dx + (z - az) * dz) / l2;
            x = 2 * (ax + u * dx) - x;
            z = 2 * (az + u * dz) - z;
        }
    }
    if (nav_corner_orient(rx, rz, ax, az, x, z) < 0)
        return cs_dist(rx, rz, ax, az) + cs_dist(ax, az, x, z);
    if (nav_corner_orient(rx, rz, bx, bz, x, z) > 0)
        return cs_dist(rx, rz, bx, bz) + cs_dist(bx, bz, x, z);
    return cs_dist(rx, rz, x, z);
}

/* Moves the cones the walk w just pushed into the pool and the queue. */
static void cs_take_cones(nav_corner_query *cq, nav_cwalk *w, uint32_t tag) {
    int from_start = tag == CS_SCONE;
    double rx = from_start ? cq->sx : cq->tx, rz = from_start ? cq->sz : cq->tz;
    double ox = from_start ? cq->tx : cq->sx, oz = from_start ? cq->tz : cq->sz;
    double direct = cs_dist(rx, rz, ox, oz);
    if (cq->ncones + w->top > cq->cones_cap) {
        uint32_t cap = cq->cones_cap ? cq->cones_cap : 256;
        while (cap < cq->ncones + w->top)
            cap *= 2;
        nav_cw_item *t = realloc(cq->cones, (size_t)cap * sizeof *t);
        if (!t) {
            cq->nomem = 1;
            return;
        }
        cq->cones = t;
        cq->cones_cap = cap;
    }
    for (uint32_t i = 0; i < w->top; i++) {
        const nav_cw_item *it = &w->stack[i];
        double f = it->kind == NAV_CW_NORMAL ? cs_bound(rx, rz, it, ox, oz) : direct;
        if (f > cq->ub) {
            cq->pruned++;
            continue; /* it would leave after the goal (see cs_relax) */
        }
        cq->cones[cq->ncones] = *it;
        cs_push(cq, f, cq->ncones++, tag);
    }
    w->top = 0;
}

static int cs_in_goal(const nav_corner_query *cq, uint32_t p) {
    for (uint32_t i = 0; i < cq->ngoal; i++)
        if (cq->goal[i] == p)
            return 1;
    return 0;
}

static void cs_record(nav_corner_query *cq, uint32_t poly) {
    nav_path_result *res = cq->res;
    if (res->expanded && res->nexpanded < res->max_expanded)
        res->expanded[res->nexpanded++] = poly;
}

/* A start cone: the goal in sight ends the search; every corner in sight
   (tangent toward the start) and link node joins the graph search. */
static inline int cs_sees_vertex(uint64_t seen, uint32_t k, const nav_cone *c, double x, double z) {
    return seen == NAV_CW_SEEN_ALL ? nav_cone_sees(c, x, z) : (int)((seen >> k) & 1u);
}

/* nav_corner_tangent from the node record: position and walls in one cache
   line (the separate xz and wall arrays are two); the same doubles. */
static inline int cs_tangent(const nav_cnode *nd, double px, double pz) {
    const double w[4] = {nd->wall[0], nd->wall[1], nd->wall[2], nd->wall[3]};
    return nav_corner_tangent_at(nd->x, nd->z, w, px, pz);
}

static void ct_start_node(nav_corner_query *cq, uint32_t v, double d);

/* table: the table mode's search (nodes shown are paired, not relaxed) */
static void cs_from_start(nav_corner_query *cq, uint32_t q, const nav_cone *c, uint64_t seen,
                          int table) {
    const nav_cgraph *gr = cq->gr;
    const nav_mesh *m = gr->wm;
    if (cs_in_goal(cq, q) && nav_cone_sees(c, cq->tx, cq->tz)) {
        cq->direct = 1;
        return;
    }
    uint32_t s = m->poly_start[q], n = nav_poly_nverts(m, q);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id = gr->wcorner_of[s + k];
        if (id == NAV_NONE)
            continue;
        const nav_cnode *nd = &gr->node[id];
        double x = nd->x, z = nd->z;
        if (!cs_sees_vertex(seen, k, c, x, z) || !cs_tangent(nd, cq->sx, cq->sz))
            continue;
        if (table)
            ct_start_node(cq, id, cs_dist(cq->sx, cq->sz, x, z));
        else
            cs_relax(cq, id, x, z, cs_dist(cq->sx, cq->sz, x, z), NAV_NONE, 0);
    }
    for (uint32_t i = gr->wpts_start[q]; i < gr->wpts_start[q + 1]; i++) {
        uint32_t id = gr->wpts[i];
        double x = gr->xz[2 * (size_t)id], z = gr->xz[2 * (size_t)id + 1];
        if (!nav_cone_sees(c, x, z))
            continue;
        if (table)
            ct_start_node(cq, id, cs_dist(cq->sx, cq->sz, x, z));
        else
            cs_relax(cq, id, x, z, cs_dist(cq->sx, cq->sz, x, z), NAV_NONE, 0);
    }
}

/* The sides of the line p -> u (p: u's parent, or the start) that the
   obstacle at corner u lies on: 0 when u is no corner or p lies on a
   wall's line (no turn rule then). Forced inline as cs_relax (one call
   per closed node; 1 % of town short's instructions). */
static inline __attribute__((always_inline)) double cs_sigma(const nav_corner_query *cq, uint32_t u,
                                                             double *px, double *pz) {
    const nav_cgraph *gr = cq->gr;
    *px = cq->sx, *pz = cq->sz;
    if (cq->ns[u].par != NAV_NONE) {
        *px = gr->node[cq->ns[u].par].x;
        *pz = gr->node[cq->ns[u].par].z;
    }
    if (u >= gr->ncorners)
        return 0;
    const float *w = gr->node[u].wall;
    double ux = gr->node[u].x, uz = gr->node[u].z;
    /* as nav_corner_tangent: zero when p is on a wall's line */
    return nav_corner_side(ux, uz, w[0], w[1], *px, *pz) +
           nav_corner_side(ux, uz, w[2], w[3], *px, *pz);
}

/* Node u (closed, g final) sees the goal: offer the goal, unless the turn
   at u toward t is not taut. */
static void cs_to_goal(nav_corner_query *cq, uint32_t u) {
    const nav_cgraph *gr = cq->gr;
    double px, pz, sigma = cs_sigma(cq, u, &px, &pz);
    double ux = gr->node[u].x, uz = gr->node[u].z;
    if (sigma * nav_corner_side(px, pz, ux, uz, cq->tx, cq->tz) < 0)
        return;
    cs_relax(cq, cq->goal_node, cq->tx, cq->tz, cq->ns[u].g + cq->gd[u], u, 0);
}

static int cs_goal_piece(const void *ctx, uint32_t p) {
    return cs_in_goal(ctx, p);
}

/* Starts the walk of cones from the goal's piece, goal[0] (at the
   search's start, or when sight tests give way to it). */
static void cs_walk_goal(nav_corner_query *cq) {
    cq->goal_walks++;
    if (!nav_cwalk_begin(&cq->wg, cq->gr->wm, cq->goal[0], 0)) {
        cq->nomem = 1;
        return;
    }
    cs_take_cones(cq, &cq->wg, CS_GCONE);
}

/*
 * Sight tests instead of the goal's walk. The goal's cones tell every
 * node that sees the goal its distance to it, and they cost as much as
 * the start's: on a short query that is half the search (town's shortest
 * third: 15 cones for 5 graph nodes in its 11-30 work group). But the
 * search only needs to know, of each node it closes, whether it sees the
 * goal: then the goal is offered at g + |u t| (as cs_to_goal), and A*
 * with the Euclidean heuristic stays exact, because the last corner of
 * the shortest path is closed before the goal leaves the queue and offers
 * it the answer's length. So closed node u tests its segment to the goal
 * (nav_cwalk_sees: one exit edge per polygon crossed, usually a few
 * polygons until a wall) after the cheap rules that make most tests
 * needless: u must be tangent toward the goal and the turn at u taut (as
 * a goal cone's node is), and the path through u must beat the goal's
 * offer so far. A test sees through a grazed vertex where a cone stops,
 * so it may find a path of equal length the walk would reach by one more
 * corner; never a longer one nor one outside the region.
 *
 * Tests pay per closed node, the walk per cone near the goal; on long
 * queries the nodes win (town's longest third: 2.4x the goal walk's
 * instructions in tests). So tests run when the start and the goal are
 * within CS_TEST_CELLS typical polygon sizes (gr->cell), and give way to
 * the goal's walk after CS_TEST_MAX of them (a near goal behind a long
 * wall). Measured per query, each query's best of 15 passes (session
 * 14, bench split): town's short band 0.87x the walk's time; by distance
 * in cells, tests cost 0.47x (0-5), 0.68x (10-15), 0.92x (20-25), 0.97x
 * (30-40), 1.09x (40-60); random320 short 0.64-0.73x, medium (40-100
 * cells) 1.11x.
 */
#define CS_TEST_CELLS 32.0
#define CS_TEST_MAX 64

/* Closed node u (g final, p its parent's position, sigma its turn):
   tests its sight of the goal and offers the goal when it sees it. */
static void cs_try_goal(nav_corner_query *cq, uint32_t u, double px, double pz, double sigma) {
    const nav_cgraph *gr = cq->gr;
    const nav_cnode *nd = &gr->node[u];
    double ux = nd->x, uz = nd->z;
    if (gr->wpoly[u] == NAV_NONE || (u < gr->ncorners && !cs_tangent(nd, cq->tx, cq->tz)))
        return;
    if (sigma * nav_corner_side(px, pz, ux, uz, cq->tx, cq->tz) < 0)
        return; /* as cs_to_goal: not taut */
    double gd = cs_dist(ux, uz, cq->tx, cq->tz), f = cq->ns[u].g + gd;
    uint32_t gs = cq->st[cq->goal_node];
    if (f > cq->ub || ((gs >> CS_FLAG_BITS) == cq->gen && cq->ns[cq->goal_node].g <= f))
        return; /* no shorter than a path known */
    if (cq->nwork >= cq->max_work) {
        cq->over = 1; /* a test is a unit of work too (cs_run stops) */
        return;
    }
    if (cq->ntests >= cq->max_tests) {
        /* the walk shows u too, and offers the goal from it (closed) */
        cq->tests = 0;
        cs_walk_goal(cq);
        return;
    }
    cq->ntests++;
    cq->nwork++;
    int sees = nav_cwalk_sees(&cq->wg, gr->wm, gr->wpoly[u], ux, uz, cq->tx, cq->tz, cs_goal_piece,
                              cq, cq->goal[0], cq->seg, cq->seg_cap);
    if (sees < 0)
        cq->nomem = 1;
    if (sees <= 0)
        return;
    cq->gd[u] = gd;
    cs_bound_by(cq, cq->ns[u].g, gd);
    cs_relax(cq, cq->goal_node, cq->tx, cq->tz, f, u, 0);
}

/* A goal cone: the distance to the goal of every node it shows. */
static void ct_goal_node(nav_corner_query *cq, uint32_t v, double d);

/* table: the table mode's search (a node shown is paired, see ct_goal_node) */
static inline void cs_goal_sees(nav_corner_query *cq, uint32_t id, const nav_cone *c, uint64_t seen,
                                uint32_t k, int table) {
    const nav_cgraph *gr = cq->gr;
    cs_node *n = &cq->ns[id];
    uint32_t *sp = &cq->st[id];
    uint32_t valid = (*sp >> CS_FLAG_BITS) == cq->gen;
    if (valid && (*sp & CS_GOAL))
        return;
    const nav_cnode *nd = &gr->node[id];
    double x = nd->x, z = nd->z;
    if (!cs_sees_vertex(seen, k, c, x, z) || (id < gr->ncorners && !cs_tangent(nd, cq->tx, cq->tz)))
        return;
    if (table) {
        ct_goal_node(cq, id, cs_dist(x, z, cq->tx, cq->tz));
        return;
    }
    cq->gd[id] = cs_dist(x, z, cq->tx, cq->tz);
    if (!valid) { /* not offered yet: no path known */
        *sp = cq->gen << CS_FLAG_BITS | CS_GOAL;
        n->g = INFINITY;
        n->par = NAV_NONE;
        return;
    }
    *sp |= CS_GOAL;
    if (n->g < INFINITY) {
        cs_bound_by(cq, n->g, cq->gd[id]);
        if (*sp & CS_CLOSED)
            cs_to_goal(cq, id);
    }
}

static void cs_from_goal(nav_corner_query *cq, uint32_t q, const nav_cone *c, uint64_t seen,
                         int table) {
    const nav_cgraph *gr = cq->gr;
    const nav_mesh *m = gr->wm;
    uint32_t s = m->poly_start[q], n = nav_poly_nverts(m, q);
    for (uint32_t k = 0; k < n; k++)
        if (gr->wcorner_of[s + k] != NAV_NONE)
            cs_goal_sees(cq, gr->wcorner_of[s + k], c, seen, k, table);
    /* link nodes lie inside: ask the cone */
    for (uint32_t i = gr->wpts_start[q]; i < gr->wpts_start[q + 1]; i++)
        cs_goal_sees(cq, gr->wpts[i], c, NAV_CW_SEEN_ALL, 0, table);
}

/* Pieces of the walk mesh that hold the goal on their boundary, through
   edges the goal lies on (as nav_optimal.c's goal_set); end_poly is the
   piece holding it. */
static void cs_goal_set(nav_corner_query *cq, uint32_t end_poly) {
    const nav_mesh *m = cq->gr->wm;
    double tol = 1e-6 * (1.0 + fmax(fabs(cq->tx), fabs(cq->tz)));
    cq->goal[0] = end_poly;
    cq->ngoal = 1;
    for (uint32_t i = 0; i < cq->ngoal; i++) {
        uint32_t p = cq->goal[i], s = m->poly_start[p], n = nav_poly_nverts(m, p);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t nb = m->poly_nei[s + j];
            if (nb == NAV_NONE || cs_in_goal(cq, nb) || cq->ngoal >= CS_MAX_GOAL)
                continue;
            const float *a = nav_vert(m, m->poly_verts[s + j]);
            const float *b = nav_vert(m, m->poly_verts[s + (j + 1) % n]);
            double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
            double l2 = ex * ex + ez * ez;
            double u = l2 > 0 ? ((cq->tx - a[0]) * ex + (cq->tz - a[2]) * ez) / l2 : 0;
            u = u < 0 ? 0 : u > 1 ? 1 : u;
            if (cs_dist(a[0] + u * ex, a[2] + u * ez, cq->tx, cq->tz) <= tol)
                cq->goal[cq->ngoal++] = nb;
        }
    }
}

/* ---- graph nodes ---- */

/* Expands node u (closed): its graph edges that keep the path taut at u,
   its link hop, and the goal when u sees it. */
static void cs_expand(nav_corner_query *cq, uint32_t u) {
    const nav_cgraph *gr = cq->gr;
    const nav_mesh *m = cq->m;
    const nav_cnode *nu = &gr->node[u];
    double ux = nu->x, uz = nu->z, gu = cq->ns[u].g;
    double px, pz, sigma = cs_sigma(cq, u, &px, &pz);
    if (cq->tests)
        cs_try_goal(cq, u, px, pz, sigma);
    else if (cq->st[u] & CS_GOAL)
        cs_to_goal(cq, u);
    /* the half whose obstacle side matches the turn (both when no rule) */
    uint32_t i = nu->adj_start, end = nu[1].adj_start;
    if (sigma < 0)
        end = nu->adj_mid;
    else if (sigma > 0)
        i = nu->adj_mid;
    /* the turn rule, nav_corner_side(p, u, v) inlined: p and u are fixed */
    double dx = ux - px, dz = uz - pz, eps = 5e-7 * (1.0 + fabs(px) + fabs(pz));
    double thr = eps * eps * (dx * dx + dz * dz);
    uint32_t closed_stamp = cq->gen << CS_FLAG_BITS | CS_CLOSED;
    const uint16_t *a16 = gr->adj16;
    for (; i < end; i++) {
        uint32_t v = a16 ? a16[i] : gr->adj[i].to;
        double vx = gr->fxz[2 * (size_t)v], vz = gr->fxz[2 * (size_t)v + 1];
        double c = dx * (vz - pz) - dz * (vx - px);
        /* closed, or turning away from the obstacle (never taut): both
           tests evaluated and joined without branches, so the loop takes
           one hard-to-predict branch per edge, not two */
        int closed = (cq->st[v] & ~(uint32_t)(CS_HOP | CS_GOAL)) == closed_stamp;
        int away = (sigma * c < 0) & (c * c > thr);
        if (closed | away)
            continue;
        cs_relax(cq, v, vx, vz, gu + cs_dist(ux, uz, vx, vz), u, 0);
    }
    if (u >= gr->ncorners) {
        uint32_t l = (u - gr->ncorners) / 2, at_end = (u - gr->ncorners) & 1;
        const nav_link *lk = &m->links[l];
        uint32_t to = gr->ncorners + 2 * l + (at_end ? 0u : 1u);
        if ((!at_end || lk->bidirectional) && !((cq->excl >> lk->area) & 1u))
            cs_relax(cq, to, gr->xz[2 * (size_t)to], gr->xz[2 * (size_t)to + 1],
                     gu + nav_dist3d(lk->start_on, lk->end_on), u, CS_HOP);
    }
}

/* ---- the answer ---- */

typedef struct cs_target {
    const nav_cgraph *gr;
    const nav_mesh *m;
    uint32_t node; /* NAV_NONE: the goal polygon */
    uint32_t poly;
} cs_target;

static int cs_is_target(const void *ctx, uint32_t p) {
    const cs_target *t = ctx;
    if (t->node == NAV_NONE || t->node >= t->gr->ncorners)
        return p == t->poly;
    uint32_t s = t->m->poly_start[p], n = nav_poly_nverts(t->m, p);
    for (uint32_t k = 0; k < n; k++)
        if (t->gr->corner_of[s + k] == t->node)
            return 1;
    return 0;
}

static void cs_put_poly(nav_path_result *res, uint32_t *np, uint32_t poly) {
    if (res->polys && *np < res->max_polys)
        res->polys[*np] = poly;
    (*np)++;
}

static void cs_put_corner(nav_path_result *res, uint32_t *nc, const float c[3], float prev[3]) {
    if (*nc > 0)
        res->length += nav_dist3d(prev, c);
    if (res->corners && *nc < res->max_corners)
        memcpy(&res->corners[3 * *nc], c, 3 * sizeof(float));
    memcpy(prev, c, 3 * sizeof(float));
    (*nc)++;
}

/*
 * Corners, links and corridor from the chain start, chain[0..n), goal.
 * Returns 0 when a segment's corridor could not be walked (the caller
 * then answers with the interval search).
 */
static int cs_fill(nav_corner_query *cq, uint32_t sp, const float start[3], uint32_t ep,
                   const float end[3], uint32_t n) {
    const nav_cgraph *gr = cq->gr;
    const nav_mesh *m = cq->m;
    nav_path_result *res = cq->res;
    uint32_t nc = 0, np = 0, nl = 0, cur = sp;
    float prev[3];
    double px = cq->sx, pz = cq->sz;
    res->length = 0;
    cs_put_corner(res, &nc, start, prev);
    cs_put_poly(res, &np, sp);
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t v = i < n ? cq->chain[i] : NAV_NONE;
        /* the node records' floats: the values of gr->xz, in lines the
           search has just read */
        double vx = i < n ? gr->node[v].x : cq->tx;
        double vz = i < n ? gr->node[v].z : cq->tz;
        if (i < n && (cq->st[v] & CS_HOP)) {
            uint32_t l = (v - gr->ncorners) / 2;
            if (res->links && nl < res->max_links)
                res->links[nl] = l;
            nl++;
            cur = gr->poly[v];
            cs_put_poly(res, &np, cur);
        } else {
            cs_target t = {gr, m, v, v == NAV_NONE ? ep : gr->poly[v]};
            uint32_t len;
            /* a corner's polygons have it as a vertex; the goal's and a
               link node's target is one polygon */
            uint32_t tpoly = v == NAV_NONE || v >= gr->ncorners ? t.poly : NAV_NONE;
            if (!nav_cwalk_segment(&cq->w, m, cur, px, pz, vx, vz, cs_is_target, &t, tpoly, cq->seg,
                                   cq->seg_cap, &len))
                return 0;
            for (uint32_t k = 1; k < len; k++)
                cs_put_poly(res, &np, cq->seg[k]);
            cur = cq->seg[len - 1];
        }
        /* a corner where the path does not move in xz is no corner */
        int skip =
            i < n && v < gr->ncorners &&
            ((vx == px && vz == pz) ||
             (i + 1 < n ? (vx == gr->node[cq->chain[i + 1]].x && vz == gr->node[cq->chain[i + 1]].z)
                        : (vx == cq->tx && vz == cq->tz)));
        if (i == n) {
            cs_put_corner(res, &nc, end, prev);
        } else if (!skip) {
            float c[3] = {(float)vx, gr->y[v], (float)vz};
            cs_put_corner(res, &nc, c, prev);
        }
        px = vx, pz = vz;
    }
    res->ncorners = res->corners ? (nc < res->max_corners ? nc : res->max_corners) : 0;
    res->npolys = res->polys ? (np < res->max_polys ? np : res->max_polys) : 0;
    res->nlinks = res->links ? (nl < res->max_links ? nl : res->max_links) : 0;
    if (nc > res->ncorners || np > res->npolys || nl > res->nlinks)
        res->flags |= NAV_PATH_TRUNCATED;
    return 1;
}

/* The search proper (see the file comment; table: the table mode's, where
   the queue holds cones only). 1: the goal was reached (or is in sight:
   cq->direct; table mode: a pair was priced); 0: not reachable; -1: over
   budget (cq->max_work); -2: out of memory. */
static int cs_run(nav_corner_query *cq, uint32_t start_poly, uint32_t end_poly, int table) {
    const nav_mesh *m = cq->gr->wm; /* the cones walk the coarser pieces */
    cq->nsl = cq->ngl = 0;
    cq->best = INFINITY;
    cq->best_s = cq->best_g = NAV_NONE;
    if (!nav_cwalk_begin(&cq->w, m, cq->gr->wof[start_poly], 0))
        return -2;
    cs_take_cones(cq, &cq->w, CS_SCONE);
    if (!cq->tests)
        cs_walk_goal(cq); /* a failure sets nomem: the loop below returns -2 */
    nav_cone cone;
    while (!cs_queue_empty(cq) && !cq->nomem) {
        cs_heap e = cs_pop(cq);
        if (table && e.fk > cs_bits(cq->ub))
            break; /* table mode: every waiting cone's paths are longer than the best pair's */
        if (e.tag == CS_NODE) {
            uint32_t u = e.id;
            if (u == cq->goal_node)
                return 1;
            /* stale: a node's h is fixed in a search (see cs_relax), so
               its first entry out is one with its current g (f = g + h is
               least), or ties it, and the expansion reads g from the
               record; every later one finds the node closed */
            if (cq->st[u] & CS_CLOSED)
                continue;
        }
        if (cq->nwork >= cq->max_work)
            return -1;
        cq->nwork++;
        if (e.tag == CS_NODE) {
            cq->st[e.id] |= CS_CLOSED;
            if (cq->res->expanded) /* the debug list only: spare the load */
                cs_record(cq, cq->gr->poly[e.id]);
            cs_expand(cq, e.id);
            if (cq->over)
                return -1;
            continue;
        }
        int from_start = e.tag == CS_SCONE;
        nav_cwalk *w = from_start ? &cq->w : &cq->wg;
        const nav_cw_item it = cq->cones[e.id];
        double rx = from_start ? cq->sx : cq->tx, rz = from_start ? cq->sz : cq->tz;
        nav_cw_cone(&it, rx, rz, &cone);
        /* debug list: a piece by one of its polygons, the seeds by the
           start's and the goal's own */
        cs_record(cq, it.kind == NAV_CW_START ? (from_start ? start_poly : end_poly)
                                              : cq->gr->wrep[it.poly]);
        /* children first: the expansion also says which vertices are seen */
        if (!nav_cwalk_expand(w, m, &it, rx, rz))
            return -2;
        if (from_start) {
            cs_from_start(cq, it.poly, &cone, w->seen, table);
            if (cq->direct)
                return 1;
        } else {
            cs_from_goal(cq, it.poly, &cone, w->seen, table);
        }
        cs_take_cones(cq, w, e.tag);
    }
    if (cq->nomem)
        return -2;
    return table && cq->best_s != NAV_NONE ? 1 : 0; /* A*: the goal node returns above */
}

/* ---- table mode ---- */

/*
 * With the graph's all-pairs table (nav_corner_table.c) no graph search
 * runs: the same two walks of cones, in the same queue and order, collect
 * the nodes the start sees (tangent toward it) and those the goal sees, and
 * every pair (s, g) of one from each is a path start -> s ... g -> goal of
 * length |start s| + table(s, g) + |g goal|. The least such pair is the
 * answer once the queue's next key exceeds it: the shortest path's first
 * bend lies behind a start cone and its last behind a goal cone whose keys
 * bound that path's length from below, so both were taken before, and
 * their pair was offered. A node record's CS_SEEN flag (the A* mode's
 * CS_CLOSED bit; that mode never runs in the same search) says the start's
 * walk showed it, g its distance from the start; CS_GOAL and gd as there.
 */
#define CS_SEEN CS_CLOSED

static inline void ct_pair(nav_corner_query *cq, uint32_t s, uint32_t g) {
    const nav_cgraph *gr = cq->gr;
    double len = cq->ns[s].g + gr->td[(size_t)s * gr->nnodes + g] + cq->gd[g];
    if (len < cq->best) {
        cq->best = len;
        cq->best_s = s;
        cq->best_g = g;
        if (!cq->no_bound)
            cq->ub = len * (1 + CS_UB_SLACK);
    }
}

/* Node v is in the start's sight at distance d: pairs with the goal's. */
static void ct_start_node(nav_corner_query *cq, uint32_t v, double d) {
    cs_node *n = &cq->ns[v];
    uint32_t *sp = &cq->st[v];
    uint32_t valid = (*sp >> CS_FLAG_BITS) == cq->gen;
    if (valid && (*sp & CS_SEEN))
        return; /* shown by another cone too: the same distance */
    *sp = valid ? *sp | CS_SEEN : (cq->gen << CS_FLAG_BITS | CS_SEEN);
    n->g = d;
    cq->sl[cq->nsl++] = v;
    for (uint32_t i = 0; i < cq->ngl; i++)
        ct_pair(cq, v, cq->gl[i]);
}

/* Node v is in the goal's sight at distance d: pairs with the start's.
   Once per search (cs_goal_sees returns for a node already CS_GOAL). */
static void ct_goal_node(nav_corner_query *cq, uint32_t v, double d) {
    uint32_t *sp = &cq->st[v];
    uint32_t valid = (*sp >> CS_FLAG_BITS) == cq->gen;
    *sp = valid ? *sp | CS_GOAL : (cq->gen << CS_FLAG_BITS | CS_GOAL);
    cq->gd[v] = d;
    cq->gl[cq->ngl++] = v;
    for (uint32_t i = 0; i < cq->nsl; i++)
        ct_pair(cq, cq->sl[i], v);
}

/* The best pair's nodes into cq->chain, each record stamped CS_HOP when
   the link's hop leads to it (cs_fill reads that); the count, or
   NAV_NONE when the table has no way (never, for a pair it priced). */
static uint32_t ct_chain(nav_corner_query *cq) {
    const nav_cgraph *gr = cq->gr;
    uint32_t v = cq->best_s, g = cq->best_g, n = 0;
    cq->st[v] = cq->gen << CS_FLAG_BITS;
    cq->chain[n++] = v;
    while (v != g) {
        uint16_t step = gr->tnext[(size_t)v * gr->nnodes + g];
        if (step == NAV_CORNER_TABLE_NONE || n >= gr->nnodes)
            return NAV_NONE;
        v = step & ~NAV_CORNER_TABLE_HOP & 0xffffu;
        cq->st[v] = cq->gen << CS_FLAG_BITS | (step & NAV_CORNER_TABLE_HOP ? CS_HOP : 0);
        cq->chain[n++] = v;
    }
    return n;
}

nav_status nav_corner_search(nav_corner_query *cq, const nav_mesh *m, uint32_t start_poly,
                             const float start[3], uint32_t end_poly, const float end[3],
                             uint64_t exclude_mask, uint32_t max_nodes, nav_path_result *res) {
    const nav_cgraph *gr = m->cgraph;
    if (!cq || !gr)
        return NAV_E_INVALID_ARG;
    if (!cs_prepare(cq, m, gr))
        return NAV_E_NOMEM;
    cq->m = m;
    cq->gr = gr;
    cq->res = res;
    cq->sx = start[0], cq->sz = start[2], cq->tx = end[0], cq->tz = end[2];
    cq->goal_node = gr->nnodes;
    cq->direct = 0;
    cq->excl = exclude_mask;
    cq->ub = INFINITY;
    cq->tf = cs_dist(cq->sx, cq->sz, cq->tx, cq->tz) * CS_FAR_FIRST;
    cq->tk = cs_bits(cq->tf);
    cs_goal_set(cq, gr->wof[end_poly]);
    uint32_t n = 0;
    int table = !cq->no_table && nav_corner_table_usable(gr, exclude_mask);
    cq->tabled += (uint64_t)table;
    /* sight tests or the goal's walk (see cs_try_goal); never in table
       mode, which pairs the nodes the goal's walk shows */
    uint32_t rays = cq->rays;
    if (rays == NAV_CORNER_RAYS_AUTO)
        rays = cs_dist(cq->sx, cq->sz, cq->tx, cq->tz) < CS_TEST_CELLS * gr->cell ? CS_TEST_MAX : 0;
    cq->tests = !table && rays > 0;
    cq->ntests = 0;
    cq->max_tests = rays;
    cq->nwork = 0;
    cq->max_work = max_nodes;
    cq->over = 0;
    int r = cs_run(cq, start_poly, end_poly, table);
    cq->sight_tests += cq->ntests;
    res->nodes_expanded = cq->nwork;
    if (r <= 0)
        return r == 0 ? NAV_E_NOT_FOUND : r == -1 ? NAV_E_LIMIT : NAV_E_NOMEM;
    if (table && !cq->direct) {
        n = ct_chain(cq);
        if (n == NAV_NONE)
            return NAV_E_CORRUPT;
    } else if (!cq->direct) {
        for (uint32_t v = cq->ns[cq->goal_node].par; v != NAV_NONE; v = cq->ns[v].par)
            n++;
        uint32_t k = n;
        for (uint32_t v = cq->ns[cq->goal_node].par; v != NAV_NONE; v = cq->ns[v].par)
            cq->chain[--k] = v;
    }
    res->algorithm = NAV_ALGO_OPTIMAL;
    return cs_fill(cq, start_poly, start, end_poly, end, n) ? NAV_OK : NAV_E_CORRUPT;
}
