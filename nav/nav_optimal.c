/*
 * nav_optimal: the Euclidean-optimal any-angle search over a built mesh, an
 * interval search after Polyanya (Cui, Harabor & Grastien, "Compromise-free
 * Pathfinding on a Navigation Mesh", IJCAI 2017). Owns the search nodes, the
 * open list, the root table and the reconstruction of corners, corridor and
 * links from a finished search. Geometry is xz, in double.
 *
 * A search node is (root, interval [A, B] on an edge of polygon P, P): every
 * point of the interval is visible from the root, and the node stands for
 * the paths that go straight from the root through the interval into P. Its
 * f is g(root) + the Euclidean length of the shortest root -> interval ->
 * goal path (the goal is mirrored across the interval's line when it lies on
 * the root's side). Expanding a node projects the interval through P:
 *   - observable successors: the parts of P's other edges inside the cone
 *     root->A, root->B keep the root;
 *   - non-observable successors: the parts outside the cone on A's (B's)
 *     side get A (B) as their new root, only when A (B) is a mesh vertex that
 *     touches a wall ("corner"): a taut path bends nowhere else.
 * Orientation: stored polygons have negative signed area, so P's interior is
 * where nav_cross2(edge start, edge end, p) < 0; A is the interval's end
 * nearer the entry edge's start vertex, and orient(A, B, root) > 0.
 *
 * Degenerate cases are node kinds rather than special code paths:
 *   - START: root strictly inside (or on the boundary of) P, P entered from
 *     nowhere: every edge of P is visible (the start, and link arrivals);
 *   - FULL: the root lies on the entry edge (a start on an edge, a corner
 *     root entering a polygon that has the corner as a vertex): P is convex,
 *     so all of it is visible;
 *   - a successor edge collinear with its root cannot be seen through: the
 *     polygon beyond is reached by turning at the edge's nearer end, when
 *     that end is a corner vertex (else other nodes of the fan reach it);
 *   - intervals that shrink to a point are dropped (the neighbouring
 *     intervals, closed at that point, carry any path through it).
 *
 * Links as extra roots. An off-mesh link is an edge between two points with
 * the cost of its 3-D length. Whenever a node of polygon P is expanded and a
 * usable link starts in P (its area and its arrival polygon not excluded),
 * the link start is treated like a goal: its cost through the interval is
 * exact inside the convex P (straight, or bending at A or B). The link end
 * then becomes a fresh root, key-pruned like a vertex root, and a START node
 * for the arrival polygon is pushed with g += the link's 3-D length. The
 * heuristic stays admissible because a link costs at least the xz distance
 * between its ends.
 *
 * Pruning, all exact (never loses the optimum):
 *   - root level (Polyanya's): the best g per root vertex or link arrival
 *     is kept in a table stamped with a per-search generation (no
 *     clearing); nodes whose root was later reached cheaper are dropped
 *     when generated and when popped;
 *   - corners: turning only at vertices whose walkable angle exceeds 180
 *     degrees;
 *   - dead ends: a node entering a polygon with no other way out (and no
 *     goal, no link) is not generated;
 *   - edge dominance: a node is dropped when an already expanded node on
 *     the same edge reaches every point of its interval at no higher cost
 *     (see dominated());
 *   - once a goal node is in the open list, nothing costlier is pushed.
 *
 * Memory: nav_optimal_new(max_nodes) allocates the node pool (open list,
 * max_nodes), root records (max_nodes) and the corridor trail (2 *
 * max_nodes) once; running out of any is NAV_E_LIMIT. The per-vertex,
 * per-polygon and per-edge tables (stamped, never cleared) grow with
 * realloc only when a mesh larger than any seen before is searched; after
 * that, searches allocate nothing. About 164 bytes per max_nodes (72 node,
 * 24 open list, 48 root record, 16 trail, 4 free list: 10.7 MB for 65536)
 * plus, for the largest mesh, 16 bytes per vertex, 16 per polygon (12 state,
 * 4 flood list) and 32 per polygon edge (24 dominance, 8 corner cache). The mesh itself carries the
 * search's derived data (corner flags and edge twins, nav_internal.h), built once with the mesh.
 *
 * Speed (Polyanya's collapse): when an expansion yields exactly one
 * successor, it is expanded at once instead of a push and a pop; the goal
 * node always goes through the open list, so answers are unchanged.
 */
#include "nav/nav_optimal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_internal.h"

enum { K_START, K_FULL, K_NORMAL, K_GOAL };
enum { F_AVERT = 1, F_BVERT = 2 };
enum { R_START, R_VERTEX, R_TURN, R_LSTART, R_LEND };

#define OPT_MAX_GOAL 32 /* polygons sharing the goal point (a vertex fan) */
#define OPT_TEPS 1e-12  /* interval parameter below which a piece is a point */
#define OPT_MAX_FAN 256 /* fan walk guard (a vertex with more polygons: a corner) */

/* A root: a corner of the path (start, corner vertex, link end). */
typedef struct opt_rec {
    double x, z, g;
    float y;         /* height when known (start, link ends), else lifted on poly */
    uint32_t parent; /* previous corner, NAV_NONE for the start */
    uint32_t poly;   /* polygon whose surface the corner is lifted on */
    uint32_t key;    /* root table key (vertex id, nverts + 2 * link + dir) or NAV_NONE */
    uint32_t link;   /* R_LEND: link id | NAV_LINK_REVERSE */
    uint8_t kind;
} opt_rec;

typedef struct opt_node {
    double ax, az, bx, bz; /* interval; A is nearer the entry edge's start vertex */
    uint32_t rec;          /* root */
    uint32_t poly;         /* polygon to expand (GOAL: the polygon the goal was seen from) */
    uint32_t trail;        /* corridor record of poly */
    uint32_t elocal;       /* local index of the entry edge in poly (none for START) */
    double ta, tb;         /* A and B as parameters of the entry edge (dominance) */
    uint32_t dver;         /* edge reference version last tested by dominated(), 0: none */
    uint8_t kind, flags;
} opt_node; /* 72 bytes */

/* An open-list entry, 16 bytes. The key is the bit pattern of f, which is
   non-negative and never NaN, so unsigned order is its numeric order.
   Integer keys compare without the branches of double compares (the
   parity test for NaN, the separate equality test) and let a pop pick a
   child by index arithmetic. */
typedef struct opt_heap {
    uint64_t fk;
    uint32_t node;
} opt_heap;

typedef struct opt_trail {
    uint32_t parent, poly;
} opt_trail;

typedef struct opt_vstate {
    double g;     /* best g of this root key in search `gen` */
    uint32_t gen; /* stamp of g */
} opt_vstate;

/* Corner answer of one polygon corner under the search's exclusions. */
typedef struct opt_cstate {
    uint32_t gen; /* stamp of corner */
    uint8_t corner;
} opt_cstate;

/* The last node expanded through an edge (entering its polygon), with its
   interval as edge parameters: dominance pruning of later nodes. */
typedef struct opt_estate {
    /* version of this reference: current in this search when > ever0, and
       changed whenever the reference is (also the generation stamp) */
    uint32_t ver;
    uint32_t rec;
    double t0, t1;
} opt_estate;

typedef struct opt_pstate {
    uint32_t gen, rec; /* last FULL entry into this polygon (fan cycle guard) */
    uint32_t rgen;     /* flood: reached in search rgen */
} opt_pstate;

struct nav_optimal {
    uint32_t cap;
    opt_node *nodes;
    uint32_t *free_nodes;
    uint32_t nfree, nused;
    opt_heap *heap;
    uint32_t nheap;
    opt_rec *recs;
    uint32_t nrecs, rec_cap;
    opt_trail *trail;
    uint32_t ntrail, trail_cap;
    opt_vstate *vtab;
    uint32_t vtab_cap;
    opt_pstate *ptab;
    uint32_t ptab_cap;
    uint32_t *reached; /* flood: polygons reached, in order (ptab_cap entries) */
    uint32_t nreached;
    opt_estate *etab;
    uint32_t etab_cap;
    opt_cstate *ctab; /* per polygon corner, sized with etab */
    uint32_t gen;
    uint32_t ever;  /* last edge reference version handed out */
    uint32_t ever0; /* ever when the current search started */

    /* per search */
    const nav_mesh *m;
    int flood;        /* nav_optimal_flood: no goal, keys are distances */
    double flood_max; /* flood: nodes costlier than this are not generated */
    uint64_t excl;
    double tx, tz;
    uint32_t goal[OPT_MAX_GOAL], goal_from[OPT_MAX_GOAL];
    uint32_t ngoal;
    int overflow;
    double goal_f; /* best goal node pushed so far: nothing costlier is worth pushing */
    /* successors of the current expansion: nsucc counts them up to 2; the
       first waits in pend (collapse) */
    uint32_t nsucc;
    opt_node pend;
    double pend_f;
    nav_optimal_observer observer;
    void *observer_ctx;
    /* turn records made during the current expansion (local vertex -> rec) */
    uint32_t tc_local[8], tc_rec[8];
    uint32_t ntc;
    /* the corner graph's scratch (created on first use) and its switch */
    nav_corner_query *cq;
    int graph_mode; /* NAV_OPT_GRAPH_* (nav_optimal.h) */
    nav_optimal_stats stats;
};

/* ---- small geometry ---- */

/* Twice the signed area of (a, b, p); exactly 0 when p is within a relative
   1e-11 of the line ab (float inputs make the products nearly exact). */
static inline double orient(double ax, double az, double bx, double bz, double px, double pz) {
    double ux = bx - ax, uz = bz - az, vx = px - ax, vz = pz - az;
    double c = ux * vz - uz * vx;
    double tol = 1e-11 * (fabs(ux) + fabs(uz)) * (fabs(vx) + fabs(vz));
    return fabs(c) <= tol ? 0.0 : c;
}

static inline double dist(double ax, double az, double bx, double bz) {
    double dx = bx - ax, dz = bz - az;
    return sqrt(dx * dx + dz * dz);
}

/* a when c, else b, without a branch: the sides of an edge's ends are a
   coin toss per edge, and a mispredicted branch costs more than the masks */
static inline double pick(int c, double a, double b) {
    uint64_t ua, ub, mask = (uint64_t)0 - (uint64_t)(c != 0);
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    uint64_t u = (ua & mask) | (ub & ~mask);
    double r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* Shortest root r -> segment [a, b] -> p, for p on the far side of (or on)
   the line ab, where the cone r->a, r->b has a on its positive side.
   *turn: 0 straight, 1 bending at a, 2 bending at b. The bend point q is
   a, b or p itself, picked by masks (which one is a coin toss per call):
   |rq| + |qp| with q = p is |rp| + 0, the straight length's very bits. */
static inline double via(double rx, double rz, double ax, double az, double bx, double bz,
                         double px, double pz, int *turn) {
    int ta = orient(rx, rz, ax, az, px, pz) < 0;
    int tb = !ta & (orient(rx, rz, bx, bz, px, pz) > 0);
    *turn = ta + 2 * tb;
    double qx = pick(ta, ax, pick(tb, bx, px)), qz = pick(ta, az, pick(tb, bz, pz));
    return dist(rx, rz, qx, qz) + dist(qx, qz, px, pz);
}

/* Polyanya's heuristic: the goal mirrored onto the far side of the interval's
   line, then the shortest root -> interval -> goal length. (A branch here:
   computing the mirror image always, for masks, cost more time than the
   mispredictions it saved.) */
static inline double heur(double rx, double rz, double ax, double az, double bx, double bz,
                          double tx, double tz) {
    if (orient(ax, az, bx, bz, tx, tz) > 0) {
        double dx = bx - ax, dz = bz - az, l2 = dx * dx + dz * dz;
        if (l2 > 0) {
            double u = ((tx - ax) * dx + (tz - az) * dz) / l2;
            double fx = ax + u * dx, fz = az + u * dz;
            tx = 2 * fx - tx;
            tz = 2 * fz - tz;
        }
    }
    int turn;
    return via(rx, rz, ax, az, bx, bz, tx, tz, &turn);
}

/* One branch for the caller, not two: a wall reads polygon 0's area,
   then the wall test masks the answer. */
static inline uint32_t passable(const nav_optimal *o, uint32_t nb) {
    uint32_t wall = nb == NAV_NONE;
    uint32_t area = o->m->areas[wall ? 0 : nb];
    return !wall & !((o->excl >> area) & 1u);
}

/* Local index of vertex id v in polygon p, or n when absent. */
static uint32_t local_of(const nav_mesh *m, uint32_t p, uint32_t v) {
    uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
    for (uint32_t k = 0; k < n; k++)
        if (m->poly_verts[s + k] == v)
            return k;
    return n;
}

/* Is direction (dx, dz) strictly inside the angle of convex polygon p at
   its local vertex k? */
static int in_sector(const nav_mesh *m, uint32_t p, uint32_t k, double dx, double dz) {
    uint32_t n = nav_poly_nverts(m, p);
    const float *a = nav_poly_vert(m, p, k + n - 1), *v = nav_poly_vert(m, p, k),
                *b = nav_poly_vert(m, p, k + 1);
    double x = v[0] + dx, z = v[2] + dz;
    return orient(a[0], a[2], v[0], v[2], x, z) < 0 && orient(v[0], v[2], b[0], b[2], x, z) < 0;
}

/*
 * A vertex is a corner (a place where a taut path may bend) when the
 * walkable angle around it, in the fan of polygons joined to p through
 * passable edges, exceeds 180 degrees: only there does an obstacle poke
 * into free space. A complete fan (no wall) is never one; a flat wall or an
 * inner corner of a room is not one either. Test without angles: walk the
 * fan one way to its wall edge w; the walkable sweep exceeds 180 degrees
 * exactly when the direction opposite to w lies strictly inside it (inside
 * a polygon's angle or along a passable edge between two of them).
 * The mesh builder stores the answer per polygon corner for the case where
 * nothing is excluded (nav_optimal_corners, exact per fan). An exclude mask
 * that hits a present area changes what is a wall, so then it is computed
 * on the fly and cached per search per polygon corner (not per vertex: a
 * vertex welded into two separate fans, levels touching at one point, has
 * one answer per fan).
 */
static int corner_walk(const nav_mesh *m, uint64_t excl, uint32_t p, uint32_t k) {
    uint32_t v = m->poly_verts[m->poly_start[p] + k];
    int corner = 0;
    /* forward (across the edge leaving v) to the wall */
    uint32_t cur = p, kk = k;
    int walled = 0;
    for (int i = 0; i < OPT_MAX_FAN; i++) {
        uint32_t nb = m->poly_nei[m->poly_start[cur] + kk];
        if (nb == NAV_NONE || ((excl >> m->areas[nb]) & 1u)) {
            walled = 1;
            break;
        }
        if (nb == p)
            break;
        uint32_t j = local_of(m, nb, v);
        if (j == nav_poly_nverts(m, nb)) {
            walled = 1;
            break;
        }
        cur = nb;
        kk = j;
    }
    if (walled) {
        const float *pv = nav_vert(m, v), *pw = nav_poly_vert(m, cur, kk + 1);
        double dx = (double)pv[0] - pw[0], dz = (double)pv[2] - pw[2];
        /* backward from there over the whole fan */
        for (int i = 0; i < OPT_MAX_FAN && !corner; i++) {
            if (in_sector(m, cur, kk, dx, dz)) {
                corner = 1;
                break;
            }
            uint32_t cn = nav_poly_nverts(m, cur);
            uint32_t e = (kk + cn - 1) % cn;
            uint32_t nb = m->poly_nei[m->poly_start[cur] + e];
            if (nb == NAV_NONE || ((excl >> m->areas[nb]) & 1u))
                break;
            /* the passable edge (prev -> v) itself, pointing away from v */
            const float *pa = nav_poly_vert(m, cur, kk + cn - 1);
            double ex = (double)pa[0] - pv[0], ez = (double)pa[2] - pv[2];
            if (orient(0, 0, ex, ez, dx, dz) == 0 && ex * dx + ez * dz > 0) {
                corner = 1;
                break;
            }
            uint32_t j = local_of(m, nb, v);
            if (j == nav_poly_nverts(m, nb))
                break;
            cur = nb;
            kk = j;
        }
    }
    return corner;
}

void nav_optimal_corners(nav_mesh *m) {
    for (uint32_t p = 0; p < m->npolys; p++) {
        uint32_t open = 0;
        for (uint32_t k = 0; k < nav_poly_nverts(m, p); k++) {
            m->poly_corner[m->poly_start[p] + k] = (uint8_t)corner_walk(m, 0, p, k);
            open += m->poly_nei[m->poly_start[p] + k] != NAV_NONE;
        }
        m->poly_open[p] = (uint8_t)(open < 255 ? open : 255);
    }
}

/* Corner test for the current search: the mesh's precomputed flag when the
   exclude mask removes no polygon, else the fan walk cached per search per
   vertex. */
static int is_corner(nav_optimal *o, uint32_t p, uint32_t k) {
    const nav_mesh *m = o->m;
    if (!(o->excl & m->area_mask))
        return m->poly_corner[m->poly_start[p] + k];
    opt_cstate *cs = &o->ctab[m->poly_start[p] + k];
    if (cs->gen == o->gen)
        return cs->corner;
    int corner = corner_walk(m, o->excl, p, k);
    cs->gen = o->gen;
    cs->corner = (uint8_t)corner;
    return corner;
}

/* ---- pools ---- */

static uint32_t new_rec(nav_optimal *o, uint8_t kind, double x, double z, double g, uint32_t parent,
                        uint32_t poly) {
    if (o->nrecs >= o->rec_cap) {
        o->overflow = 1;
        return NAV_NONE;
    }
    opt_rec *r = &o->recs[o->nrecs];
    r->x = x;
    r->z = z;
    r->g = g;
    r->y = NAN;
    r->parent = parent;
    r->poly = poly;
    r->key = NAV_NONE;
    r->link = NAV_NONE;
    r->kind = kind;
    return o->nrecs++;
}

/* Root-level pruning: 1 when g is no worse than the best g seen for key
   (ties kept: equal-cost roots may cover different sides), recording it. */
static int root_ok(nav_optimal *o, uint32_t key, double g) {
    opt_vstate *vs = &o->vtab[key];
    if (vs->gen == o->gen) {
        if (g > vs->g + 1e-9 * (1.0 + vs->g))
            return 0;
        if (g < vs->g)
            vs->g = g;
        return 1;
    }
    vs->gen = o->gen;
    vs->g = g;
    return 1;
}

static int root_dominated(const nav_optimal *o, const opt_rec *r) {
    if (r->key == NAV_NONE)
        return 0;
    const opt_vstate *vs = &o->vtab[r->key];
    return vs->gen == o->gen && r->g > vs->g + 1e-9 * (1.0 + vs->g);
}

/* A binary heap: a 4-ary one (as in the corner search) spent more compares
   per level than its fewer levels saved here (pops 272k -> 473k
   instructions on nav_test long) and was no faster. */
#define OPT_ARITY 2

static inline uint64_t key_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* min f; equal keys leave in heap order (a tie-break on g cost two of a
   compare's three operations and only picks among equal paths) */
static inline int heap_before(const opt_heap *a, const opt_heap *b) {
    return a->fk < b->fk;
}

static void heap_push(nav_optimal *o, double f, uint32_t node) {
    uint32_t i = o->nheap++;
    /* f >= 0 (a sum of distances): + 0.0 keeps a zero's sign positive */
    opt_heap item = {key_bits(f + 0.0), node};
    opt_heap *h = o->heap;
    while (i > 0) {
        uint32_t p = (i - 1) / OPT_ARITY;
        if (!heap_before(&item, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = item;
}

static uint32_t heap_pop(nav_optimal *o) {
    opt_heap *h = o->heap;
    uint32_t top = h[0].node;
    opt_heap last = h[--o->nheap];
    uint32_t i = 0, n = o->nheap;
    for (;;) {
        uint32_t c = OPT_ARITY * i + 1;
        if (c >= n)
            break;
        /* the smaller child by index arithmetic (which wins is a coin
           toss); a lone last child is compared with itself */
        uint32_t c2 = c + 1 < n ? c + 1 : c;
        uint32_t best = c + (uint32_t)heap_before(&h[c2], &h[c]);
        if (!heap_before(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    if (n > 0)
        h[i] = last;
    return top;
}

/*
 * Edge dominance. A node (root r, interval I) entering polygon q is useless
 * when an expanded node (root r', interval I' containing I, same edge) reaches
 * every point p of I at least as cheaply: g' + |r'p| <= g + |rp|. Then any
 * path through the new node is matched by one through p from r', and since
 * an optimal path cannot bend at p (not a corner), the old node's own
 * subtree already carries it. The test is conservative: I is cut into
 * pieces, and on each the new cost's lower bound (g + distance from r to
 * the piece) must reach the old cost's upper bound (the larger of its
 * values at the piece's ends, as g' + |r'p| is convex along a segment).
 */
#define OPT_DOM_PIECES 4

static double seg_dist(double px, double pz, double ax, double az, double bx, double bz) {
    double dx = bx - ax, dz = bz - az, l2 = dx * dx + dz * dz;
    double u = l2 > 0 ? ((px - ax) * dx + (pz - az) * dz) / l2 : 0;
    u = u < 0 ? 0 : (u > 1 ? 1 : u);
    return dist(px, pz, ax + u * dx, az + u * dz);
}

static int dominated_by(const nav_optimal *o, opt_node *nd, const opt_estate *es);

/* The quick exits inline (most calls), the geometric test out of line. */
static inline int dominated(const nav_optimal *o, opt_node *nd) {
    const opt_estate *es = &o->etab[o->m->poly_start[nd->poly] + nd->elocal];
    /* the node was tested against this very reference when generated (or
       there was none then and is none now): the answer cannot change */
    uint32_t ver = es->ver > o->ever0 ? es->ver : 0;
    if (ver == nd->dver)
        return 0;
    nd->dver = ver;
    if (ver == 0 || es->rec == nd->rec)
        return 0;
    return dominated_by(o, nd, es);
}

/* Does the current reference es of nd's edge dominate nd? May trim nd to the
   part es does not cover. */
static __attribute__((noinline)) int dominated_by(const nav_optimal *o, opt_node *nd,
                                                  const opt_estate *es) {
    double lo = nd->ta > es->t0 ? nd->ta : es->t0, hi = nd->tb < es->t1 ? nd->tb : es->t1;
    if (hi - lo <= OPT_TEPS)
        return 0;
    int at_a = lo <= nd->ta, at_b = hi >= nd->tb;
    if (!at_a && !at_b)
        return 0; /* the covered part is in the middle: one interval cannot express the rest */
    const nav_mesh *m = o->m;
    uint32_t s = m->poly_start[nd->poly], n = nav_poly_nverts(m, nd->poly);
    const float *v0 = nav_vert(m, m->poly_verts[s + nd->elocal]);
    const float *v1 = nav_vert(m, m->poly_verts[s + (nd->elocal + 1u == n ? 0 : nd->elocal + 1u)]);
    double ex = (double)v1[0] - v0[0], ez = (double)v1[2] - v0[2];
    double lx = at_a ? nd->ax : v0[0] + lo * ex, lz = at_a ? nd->az : v0[2] + lo * ez;
    double hx = at_b ? nd->bx : v0[0] + hi * ex, hz = at_b ? nd->bz : v0[2] + hi * ez;
    const opt_rec *r = &o->recs[nd->rec], *ro = &o->recs[es->rec];
    double px = lx, pz = lz;
    double fo = ro->g + dist(ro->x, ro->z, px, pz);
    for (int i = 1; i <= OPT_DOM_PIECES; i++) {
        double u = (double)i / OPT_DOM_PIECES;
        double qx = lx + u * (hx - lx), qz = lz + u * (hz - lz);
        double fq = ro->g + dist(ro->x, ro->z, qx, qz);
        double low = r->g + seg_dist(r->x, r->z, px, pz, qx, qz);
        if (low < (fo > fq ? fo : fq) + 1e-9 * (1.0 + low))
            return 0;
        px = qx, pz = qz, fo = fq;
    }
    if (at_a && at_b)
        return 1;
    /* keep only the part the old node does not cover; the new end is not a
       vertex, so no bending there */
    if (at_a) {
        nd->ta = hi;
        nd->ax = hx, nd->az = hz;
        nd->flags &= (uint8_t)~F_AVERT;
    } else {
        nd->tb = lo;
        nd->bx = lx, nd->bz = lz;
        nd->flags &= (uint8_t)~F_BVERT;
    }
    return 0;
}

/* Records an expanded node as its edge's reference for dominance, keeping
   the wider interval when both are the same root's. */
static void record_edge(nav_optimal *o, const opt_node *nd) {
    opt_estate *es = &o->etab[o->m->poly_start[nd->poly] + nd->elocal];
    if (es->ver > o->ever0) {
        /* keep the cheaper reference at the new interval's middle */
        const opt_rec *r = &o->recs[nd->rec], *ro = &o->recs[es->rec];
        double mx = 0.5 * (nd->ax + nd->bx), mz = 0.5 * (nd->az + nd->bz);
        if (ro->g + dist(ro->x, ro->z, mx, mz) <= r->g + dist(r->x, r->z, mx, mz) &&
            nd->tb - nd->ta <= es->t1 - es->t0)
            return;
    }
    es->rec = nd->rec;
    es->t0 = nd->ta;
    es->t1 = nd->tb;
    es->ver = ++o->ever; /* no wrap within a search: see prepare() */
}

static int goal_index(const nav_optimal *o, uint32_t p);

/* Entering polygon q through the edge that starts at vertex `entry` leads
   nowhere when q has no other passable edge, no link out and no goal: such
   nodes are not generated (Polyanya's dead-end pruning). */
static inline int dead_end(const nav_optimal *o, uint32_t q, uint32_t el) {
    const nav_mesh *m = o->m;
    /* nothing excluded: two edges with neighbours mean one besides the entry */
    if (m->poly_open[q] >= 2 && !(o->excl & m->area_mask))
        return 0;
    uint32_t s = m->poly_start[q], n = nav_poly_nverts(m, q);
    for (uint32_t k = 0; k < n; k++)
        if (k != el && passable(o, m->poly_nei[s + k]))
            return 0;
    if (m->link_out_start && m->link_out_start[q] != m->link_out_start[q + 1])
        return 0;
    return goal_index(o, q) < 0;
}

/* Puts a node in the pool and the open list; a full pool sets overflow
   (the search fails with NAV_E_LIMIT). */
static void commit(nav_optimal *o, const opt_node *nn, double f) {
    if (o->nfree == 0 && o->nused >= o->cap) {
        o->overflow = 1;
        return;
    }
    uint32_t idx = o->nfree > 0 ? o->free_nodes[--o->nfree] : o->nused++;
    o->nodes[idx] = *nn;
    heap_push(o, f, idx);
}

/* f of a NORMAL node: g of its root plus Polyanya's heuristic. */
static double node_f(const nav_optimal *o, const opt_node *nn) {
    const opt_rec *r = &o->recs[nn->rec];
    return r->g + heur(r->x, r->z, nn->ax, nn->az, nn->bx, nn->bz, o->tx, o->tz);
}

/* Generates a successor (f is computed here for K_NORMAL) unless pruned;
   for non-GOAL kinds also a corridor record for its polygon. */
static inline __attribute__((always_inline)) void
push_node(nav_optimal *o, uint8_t kind, uint32_t poly, uint32_t el, uint32_t rec, double ax,
          double az, double bx, double bz, uint8_t flags, double f, uint32_t trail_parent,
          double ta, double tb) {
    if (kind != K_NORMAL && f >= o->goal_f)
        return;
    if (!o->flood && (kind == K_NORMAL || kind == K_FULL) && dead_end(o, poly, el))
        return;
    opt_node nn = {.ax = ax,
                   .az = az,
                   .bx = bx,
                   .bz = bz,
                   .rec = rec,
                   .poly = poly,
                   .trail = trail_parent,
                   .ta = ta,
                   .tb = tb,
                   .elocal = el,
                   .kind = kind,
                   .flags = flags};
    if (kind == K_NORMAL) {
        /* the heuristic only for nodes that survive pruning (and on the
           interval dominance may have trimmed) */
        if (dominated(o, &nn))
            return; /* (flood: the dominating node reached poly through this edge already) */
        /* f only orders the open list and prunes against a goal: a first
           successor found before any goal gets it only if it is committed
           (most such nodes are collapsed and never need it) */
        if (o->flood) {
            const opt_rec *r = &o->recs[rec];
            f = r->g + seg_dist(r->x, r->z, nn.ax, nn.az, nn.bx, nn.bz);
        } else if (o->nsucc == 0 && o->goal_f == INFINITY) {
            f = NAN;
        } else {
            f = node_f(o, &nn);
            if (f >= o->goal_f)
                return;
        }
    }
    if (o->flood) {
        /* f is what entering poly through this node costs, exactly (the
           root's g is a real path, the interval is in sight): poly is
           reached when f is within budget, even when it leads nowhere */
        if (f > o->flood_max)
            return;
        opt_pstate *ps = &o->ptab[poly];
        if (ps->rgen != o->gen) {
            ps->rgen = o->gen;
            o->reached[o->nreached++] = poly;
        }
        if ((kind == K_NORMAL || kind == K_FULL) && dead_end(o, poly, el))
            return;
    }
    if (kind == K_GOAL)
        o->goal_f = f;
    if (kind != K_GOAL) {
        if (o->ntrail >= o->trail_cap) {
            o->overflow = 1;
            return;
        }
        nn.trail = o->ntrail++;
        o->trail[nn.trail].parent = trail_parent;
        o->trail[nn.trail].poly = poly;
    }
    /* Polyanya's collapse: the first successor of an expansion is held
       back; if it stays the only one, the search loop expands it at once
       instead of a push and a pop (see nav_optimal_search) */
    if (o->nsucc == 0 && kind != K_GOAL) {
        o->pend = nn;
        o->pend_f = f;
        o->nsucc = 1;
        return;
    }
    if (o->nsucc == 1)
        commit(o, &o->pend, isnan(o->pend_f) ? node_f(o, &o->pend) : o->pend_f);
    o->nsucc = 2;
    commit(o, &nn, f);
}

/* ---- expansion ---- */

/* Root at local vertex k of p (a turn of the path there), or NAV_NONE when
   k is not a corner or the vertex was already reached more cheaply. One
   record per vertex per expansion. */
static inline __attribute__((always_inline)) uint32_t turn_rec(nav_optimal *o, uint32_t p,
                                                               uint32_t k, uint32_t parent) {
    for (uint32_t i = 0; i < o->ntc; i++)
        if (o->tc_local[i] == k)
            return o->tc_rec[i];
    const nav_mesh *m = o->m;
    uint32_t v = m->poly_verts[m->poly_start[p] + k];
    uint32_t rec = NAV_NONE;
    if (is_corner(o, p, k)) {
        const float *pv = nav_vert(m, v);
        const opt_rec *pr = &o->recs[parent];
        double g = pr->g + dist(pr->x, pr->z, pv[0], pv[2]);
        if (root_ok(o, v, g)) {
            rec = new_rec(o, R_VERTEX, pv[0], pv[2], g, parent, p);
            if (rec != NAV_NONE)
                o->recs[rec].key = v;
        }
    }
    if (o->ntc < 8) {
        o->tc_local[o->ntc] = k;
        o->tc_rec[o->ntc] = rec;
        o->ntc++;
    }
    return rec;
}

/* FULL node into nb (root on nb's boundary), once per root per polygon. */
static void push_full(nav_optimal *o, uint32_t nb, uint32_t el, uint32_t rec,
                      uint32_t trail_parent) {
    opt_pstate *ps = &o->ptab[nb];
    if (ps->gen == o->gen && ps->rec == rec)
        return;
    ps->gen = o->gen;
    ps->rec = rec;
    const opt_rec *r = &o->recs[rec];
    double f = r->g + (o->flood ? 0 : dist(r->x, r->z, o->tx, o->tz));
    push_node(o, K_FULL, nb, el, rec, r->x, r->z, r->x, r->z, 0, f, trail_parent, 0, 1);
}

/*
 * Successor for the piece [t0, t1] of edge j of p (from local vertex j to
 * j + 1) seen from root `rec`. from_start: the root is a START root, which
 * may lie a rounding error outside p: treat "outside" as "on the edge".
 */
static inline __attribute__((always_inline)) void push_piece(nav_optimal *o, uint32_t p, uint32_t j,
                                                             double t0, double t1, uint32_t rec,
                                                             int from_start,
                                                             uint32_t trail_parent) {
    const nav_mesh *m = o->m;
    uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
    uint32_t j1 = j + 1;
    j1 -= n & (0u - (uint32_t)(j1 >= n));
    uint32_t nb = m->poly_nei[s + j];
    const float *va = nav_vert(m, m->poly_verts[s + j]);
    const float *vb = nav_vert(m, m->poly_verts[s + j1]);
    /* nb's edge runs vb -> va */
    uint32_t el = m->poly_twin[s + j] - m->poly_start[nb];
    const opt_rec *r = &o->recs[rec];
    double c = orient(va[0], va[2], vb[0], vb[2], r->x, r->z);
    if (c > 0 && from_start)
        c = 0;
    if (c < 0) {
        double ex = (double)vb[0] - va[0], ez = (double)vb[2] - va[2];
        /* a whole end is the vertex itself (no rounding), by masks */
        double xx = pick(t0 == 0, va[0], va[0] + t0 * ex),
               xz = pick(t0 == 0, va[2], va[2] + t0 * ez);
        double yx = pick(t1 == 1, vb[0], va[0] + t1 * ex),
               yz = pick(t1 == 1, vb[2], va[2] + t1 * ez);
        uint8_t flags = (uint8_t)((t1 == 1 ? F_AVERT : 0) | (t0 == 0 ? F_BVERT : 0));
        push_node(o, K_NORMAL, nb, el, rec, yx, yz, xx, xz, flags, 0, trail_parent, 1 - t1, 1 - t0);
        return;
    }
    if (c > 0)
        return;
    /* collinear: on the edge (then nb is wholly visible) or beyond an end */
    double ex = (double)vb[0] - va[0], ez = (double)vb[2] - va[2];
    double d0 = (r->x - va[0]) * ex + (r->z - va[2]) * ez;
    double l2 = ex * ex + ez * ez;
    if (d0 >= -1e-12 * l2 && d0 <= l2 * (1 + 1e-12)) {
        push_full(o, nb, el, rec, trail_parent);
        return;
    }
    /* beyond an end: bend at the nearer end of the piece if it is a corner */
    uint32_t k;
    if (d0 < 0) {
        if (t0 != 0)
            return;
        k = j;
    } else {
        if (t1 != 1)
            return;
        k = j1;
    }
    uint32_t nr = turn_rec(o, p, k, rec);
    if (nr != NAV_NONE)
        push_full(o, nb, el, nr, trail_parent);
}

/* Cost of reaching point (px, pz) of the node's polygon from its root, and
   the record the final straight segment starts from (a bend at A or B gets
   a record of its own). */
static double reach(nav_optimal *o, const opt_node *nd, double px, double pz, uint32_t *from) {
    const opt_rec *r = &o->recs[nd->rec];
    *from = nd->rec;
    if (nd->kind != K_NORMAL)
        return r->g + dist(r->x, r->z, px, pz);
    int turn;
    double d = via(r->x, r->z, nd->ax, nd->az, nd->bx, nd->bz, px, pz, &turn);
    if (turn) {
        double bx = turn == 1 ? nd->ax : nd->bx, bz = turn == 1 ? nd->az : nd->bz;
        uint32_t t = new_rec(o, R_TURN, bx, bz, r->g + dist(r->x, r->z, bx, bz), nd->rec, nd->poly);
        if (t == NAV_NONE)
            return INFINITY;
        *from = t;
    }
    return r->g + d;
}

/* Links that start in the node's polygon: extra roots at their arrival. */
static void expand_links(nav_optimal *o, const opt_node *nd) {
    const nav_mesh *m = o->m;
    uint32_t p = nd->poly;
    if (!m->link_out_start)
        return;
    for (uint32_t i = m->link_out_start[p]; i < m->link_out_start[p + 1]; i++) {
        uint32_t id = m->link_out[i];
        uint32_t l = id & ~NAV_LINK_REVERSE;
        int rev = (id & NAV_LINK_REVERSE) != 0;
        const nav_link *lk = &m->links[l];
        if ((o->excl >> lk->area) & 1u)
            continue;
        uint32_t to_poly = rev ? lk->start_poly : lk->end_poly;
        if (!passable(o, to_poly))
            continue;
        const float *a = rev ? lk->end_on : lk->start_on;
        const float *b = rev ? lk->start_on : lk->end_on;
        uint32_t from;
        uint32_t mark = o->nrecs;
        double g = reach(o, nd, a[0], a[2], &from) + nav_dist3d(a, b);
        uint32_t key = m->nverts + 2 * l + (rev ? 1u : 0u);
        if (!isfinite(g) || !root_ok(o, key, g)) {
            o->nrecs = mark; /* drop an unused bend record */
            continue;
        }
        uint32_t ra = new_rec(o, R_LSTART, a[0], a[2], g - nav_dist3d(a, b), from, p);
        if (ra == NAV_NONE)
            return;
        o->recs[ra].y = a[1];
        uint32_t rb = new_rec(o, R_LEND, b[0], b[2], g, ra, to_poly);
        if (rb == NAV_NONE)
            return;
        o->recs[rb].y = b[1];
        o->recs[rb].key = key;
        o->recs[rb].link = id;
        double f = g + (o->flood ? 0 : dist(b[0], b[2], o->tx, o->tz));
        push_node(o, K_START, to_poly, 0, rb, b[0], b[2], b[0], b[2], 0, f, nd->trail, 0, 0);
    }
}

/* START / FULL: every edge but the entry edge is visible from the root. */
static void expand_all(nav_optimal *o, const opt_node *nd) {
    const nav_mesh *m = o->m;
    uint32_t p = nd->poly, s = m->poly_start[p], n = nav_poly_nverts(m, p);
    uint32_t skip = nd->kind == K_START ? n : nd->elocal;
    for (uint32_t j = 0; j < n; j++) {
        if (j == skip || !passable(o, m->poly_nei[s + j]))
            continue;
        push_piece(o, p, j, 0, 1, nd->rec, nd->kind == K_START, nd->trail);
    }
}

/* nd is the caller's copy of the node (its pool slot is already free):
   dominance may trim it in place, no further copy is needed. */
static void expand_normal(nav_optimal *o, opt_node *nd) {
    const nav_mesh *m = o->m;
    uint32_t p = nd->poly, s = m->poly_start[p], n = nav_poly_nverts(m, p);
    uint32_t e = nd->elocal;
    if (dominated(o, nd))
        return;
    record_edge(o, nd);
    const opt_rec *r = &o->recs[nd->rec];
    if (o->observer) {
        nav_optimal_interval iv = {.edge = s + e,
                                   .root = {r->x, r->z},
                                   .g = r->g,
                                   .a = {nd->ax, nd->az},
                                   .b = {nd->bx, nd->bz},
                                   .ta = nd->ta,
                                   .tb = nd->tb};
        o->observer(o->observer_ctx, &iv);
    }
    double rx = r->x, rz = r->z;
    uint32_t rec = nd->rec;
    /* far chain w_0 = v_{e+1} ... w_{n-1} = v_e runs from B's side to A's */
    /* indices wrap by arithmetic, not by a branch */
    uint32_t j = e + 1, j1;
    j -= n & (0u - (uint32_t)(j >= n));
    const float *w0 = nav_vert(m, m->poly_verts[s + j]);
    double sb0 = orient(rx, rz, nd->bx, nd->bz, w0[0], w0[2]);
    double sa0 = orient(rx, rz, nd->ax, nd->az, w0[0], w0[2]);
    int bvert = (nd->flags & F_BVERT) != 0, avert = (nd->flags & F_AVERT) != 0;
    for (uint32_t i = 0; i + 1 < n; i++, j = j1) {
        j1 = j + 1;
        j1 -= n & (0u - (uint32_t)(j1 >= n));
        const float *w1 = nav_vert(m, m->poly_verts[s + j1]);
        double sb1 = orient(rx, rz, nd->bx, nd->bz, w1[0], w1[2]);
        double sa1 = orient(rx, rz, nd->ax, nd->az, w1[0], w1[2]);
        if (passable(o, m->poly_nei[s + j])) {
            /* The edge's parts by side, as parameters: sB(t), sA(t) are
               linear along it, crossing zero at tb, ta (unused when they
               do not cross; the divisions then may give inf or NaN). */
            double tb = sb0 / (sb0 - sb1), ta = sa0 / (sa0 - sa1);
            int bo0 = sb0 <= 0, bo1 = sb1 <= 0; /* ends observable past B */
            int ao0 = sa0 >= 0, ao1 = sa1 >= 0; /* ends observable past A */
            /* observable: sB <= 0 and sA >= 0 */
            /* each part's ends are computed whether or not it exists and
               its tests joined into one branch: an empty part's ends are
               equal (or NaN), so its length test fails by itself */
            {
                double lo1 = pick(bo0, 0, tb), hi1 = pick(bo1, 1, tb);
                double lo2 = pick(ao0, 0, ta), hi2 = pick(ao1, 1, ta);
                double lo = lo1 > lo2 ? lo1 : lo2, hi = hi1 < hi2 ? hi1 : hi2;
                lo = pick(lo < OPT_TEPS, 0, lo);
                hi = pick(hi > 1 - OPT_TEPS, 1, hi);
                if ((bo0 | bo1) & (ao0 | ao1) & (hi - lo > OPT_TEPS))
                    push_piece(o, p, j, lo, hi, rec, 0, nd->trail);
            }
            /* non-observable on B's side (sB > 0): bend at B */
            {
                double lo1 = pick(bo0, tb, 0), hi1 = pick(bo1, tb, 1);
                if (bvert & !(bo0 & bo1) & (hi1 - lo1 > OPT_TEPS)) {
                    uint32_t br = turn_rec(o, p, (e + 1) % n, rec);
                    if (br != NAV_NONE)
                        push_piece(o, p, j, pick(lo1 < OPT_TEPS, 0, lo1),
                                   pick(hi1 > 1 - OPT_TEPS, 1, hi1), br, 0, nd->trail);
                }
            }
            /* non-observable on A's side (sA < 0): bend at A */
            {
                double lo1 = pick(ao0, ta, 0), hi1 = pick(ao1, ta, 1);
                if (avert & !(ao0 & ao1) & (hi1 - lo1 > OPT_TEPS)) {
                    uint32_t ar = turn_rec(o, p, e, rec);
                    if (ar != NAV_NONE)
                        push_piece(o, p, j, pick(lo1 < OPT_TEPS, 0, lo1),
                                   pick(hi1 > 1 - OPT_TEPS, 1, hi1), ar, 0, nd->trail);
                }
            }
        }
        sb0 = sb1;
        sa0 = sa1;
    }
}

static int goal_index(const nav_optimal *o, uint32_t p) {
    for (uint32_t i = 0; i < o->ngoal; i++)
        if (o->goal[i] == p)
            return (int)i;
    return -1;
}

static void expand(nav_optimal *o, opt_node *nd) {
    o->ntc = 0;
    if (goal_index(o, nd->poly) >= 0) {
        /* the goal is in this convex polygon: the rest of this node's paths
           can only be longer than the exact root -> interval -> goal path */
        uint32_t from;
        double g = reach(o, nd, o->tx, o->tz, &from);
        if (isfinite(g))
            push_node(o, K_GOAL, nd->poly, 0, from, 0, 0, 0, 0, 0, g, nd->trail, 0, 0);
        return;
    }
    expand_links(o, nd);
    if (nd->kind == K_NORMAL)
        expand_normal(o, nd);
    else
        expand_all(o, nd);
}

/* ---- setup ---- */

nav_optimal *nav_optimal_new(uint32_t max_nodes) {
    if (max_nodes == 0 || max_nodes > (UINT32_MAX / 4))
        return NULL;
    nav_optimal *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->graph_mode = NAV_OPT_GRAPH_AUTO;
    o->cap = max_nodes;
    o->rec_cap = max_nodes;
    o->trail_cap = 2 * max_nodes;
    o->nodes = malloc((size_t)o->cap * sizeof *o->nodes);
    o->free_nodes = malloc((size_t)o->cap * sizeof *o->free_nodes);
    o->heap = malloc((size_t)o->cap * sizeof *o->heap);
    o->recs = malloc((size_t)o->rec_cap * sizeof *o->recs);
    o->trail = malloc((size_t)o->trail_cap * sizeof *o->trail);
    if (!o->nodes || !o->free_nodes || !o->heap || !o->recs || !o->trail) {
        nav_optimal_free(o);
        return NULL;
    }
    return o;
}

void nav_optimal_free(nav_optimal *o) {
    if (!o)
        return;
    free(o->nodes);
    free(o->free_nodes);
    free(o->heap);
    free(o->recs);
    free(o->trail);
    free(o->vtab);
    free(o->ptab);
    free(o->reached);
    free(o->etab);
    free(o->ctab);
    nav_corner_query_free(o->cq);
    free(o);
}

void nav_optimal_use_graph(nav_optimal *o, int on) {
    if (o)
        o->graph_mode = on;
}

void nav_optimal_stats_get(const nav_optimal *o, nav_optimal_stats *out) {
    if (o && out) {
        *out = o->stats;
        out->table_searches = nav_corner_query_tabled(o->cq);
    }
}

void nav_optimal_observe(nav_optimal *o, nav_optimal_observer fn, void *ctx) {
    if (!o)
        return;
    o->observer = fn;
    o->observer_ctx = ctx;
}

/* Sizes the per-vertex and per-polygon tables for m (grow only) and starts
   a new generation. */
static int prepare(nav_optimal *o, const nav_mesh *m) {
    uint64_t nv = (uint64_t)m->nverts + 2 * (uint64_t)m->nlinks;
    if (nv > UINT32_MAX)
        return 0;
    if (nv > o->vtab_cap) {
        opt_vstate *t = realloc(o->vtab, (size_t)nv * sizeof *t);
        if (!t)
            return 0;
        memset(t + o->vtab_cap, 0, (size_t)(nv - o->vtab_cap) * sizeof *t);
        o->vtab = t;
        o->vtab_cap = (uint32_t)nv;
    }
    if (m->npolys > o->ptab_cap) {
        uint32_t *rl = realloc(o->reached, (size_t)m->npolys * sizeof *rl);
        if (!rl)
            return 0;
        o->reached = rl;
        opt_pstate *t = realloc(o->ptab, (size_t)m->npolys * sizeof *t);
        if (!t)
            return 0;
        memset(t + o->ptab_cap, 0, (size_t)(m->npolys - o->ptab_cap) * sizeof *t);
        o->ptab = t;
        o->ptab_cap = m->npolys;
    }
    uint32_t ne = m->poly_start[m->npolys];
    if (ne > o->etab_cap) {
        opt_cstate *c = realloc(o->ctab, (size_t)ne * sizeof *c);
        if (!c)
            return 0;
        memset(c + o->etab_cap, 0, (size_t)(ne - o->etab_cap) * sizeof *c);
        o->ctab = c;
        opt_estate *t = realloc(o->etab, (size_t)ne * sizeof *t);
        if (!t)
            return 0; /* ctab is grown already: harmless, etab_cap says what both hold */
        memset(t + o->etab_cap, 0, (size_t)(ne - o->etab_cap) * sizeof *t);
        o->etab = t;
        o->etab_cap = ne;
    }
    if (++o->gen == 0) {
        memset(o->vtab, 0, (size_t)o->vtab_cap * sizeof *o->vtab);
        memset(o->ptab, 0, (size_t)o->ptab_cap * sizeof *o->ptab);
        memset(o->etab, 0, (size_t)o->etab_cap * sizeof *o->etab);
        memset(o->ctab, 0, (size_t)o->etab_cap * sizeof *o->ctab);
        o->gen = 1;
    }
    /* a search records at most one edge reference per expansion (<= cap):
       restart the versions while they cannot wrap within the next search */
    if (o->ever > UINT32_MAX - o->cap - 1) {
        memset(o->etab, 0, (size_t)o->etab_cap * sizeof *o->etab);
        o->ever = 0;
    }
    o->ever0 = o->ever;
    o->m = m;
    o->nfree = o->nused = o->nheap = o->nrecs = o->ntrail = 0;
    o->overflow = 0;
    o->goal_f = INFINITY;
    o->flood = 0;
    o->nreached = 0;
    return 1;
}

/* Polygons that hold the goal on their boundary, reached from end_poly
   through edges the goal lies on (a goal on an edge or vertex is "in" all of
   them). goal_from gives the way back to end_poly for the corridor. */
static void goal_set(nav_optimal *o, uint32_t end_poly) {
    const nav_mesh *m = o->m;
    double tol = 1e-6 * (1.0 + fmax(fabs(o->tx), fabs(o->tz)));
    o->goal[0] = end_poly;
    o->goal_from[0] = NAV_NONE;
    o->ngoal = 1;
    for (uint32_t i = 0; i < o->ngoal; i++) {
        uint32_t p = o->goal[i], s = m->poly_start[p], n = nav_poly_nverts(m, p);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t nb = m->poly_nei[s + j];
            if (!passable(o, nb) || goal_index(o, nb) >= 0 || o->ngoal >= OPT_MAX_GOAL)
                continue;
            const float *a = nav_vert(m, m->poly_verts[s + j]);
            const float *b = nav_vert(m, m->poly_verts[s + (j + 1) % n]);
            double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
            double l2 = ex * ex + ez * ez;
            double u = l2 > 0 ? ((o->tx - a[0]) * ex + (o->tz - a[2]) * ez) / l2 : 0;
            u = u < 0 ? 0 : u > 1 ? 1 : u;
            if (dist(a[0] + u * ex, a[2] + u * ez, o->tx, o->tz) > tol)
                continue;
            o->goal[o->ngoal] = nb;
            o->goal_from[o->ngoal] = i;
            o->ngoal++;
        }
    }
}

/*
 * Fast path: walks the straight xz segment start -> goal through the
 * polygons (by adjacency, so levels stay apart). When it arrives in a goal
 * polygon without meeting a wall, that segment is the answer and no search
 * runs. The walk gives up (returns 0, and the search decides) at anything
 * delicate: the line through a vertex, a wall, an unexpected geometry, or
 * more polygons than the budget. The polygons crossed go to the trail.
 */
static int straight_walk(nav_optimal *o, uint32_t start_poly, uint32_t budget, uint32_t *walked) {
    const nav_mesh *m = o->m;
    const opt_rec *sr = &o->recs[0];
    double sx = sr->x, sz = sr->z, tx = o->tx, tz = o->tz;
    uint32_t cur = start_poly, tr = NAV_NONE;
    for (uint32_t step = 0; step < budget && o->ntrail < o->trail_cap; step++) {
        o->trail[o->ntrail].parent = tr;
        o->trail[o->ntrail].poly = cur;
        tr = o->ntrail++;
        *walked = step + 1;
        uint32_t s = m->poly_start[cur], n = nav_poly_nverts(m, cur), exit_edge = NAV_NONE;
        int inside = 1;
        const float *a = nav_vert(m, m->poly_verts[s + n - 1]);
        double oa = orient(sx, sz, tx, tz, a[0], a[2]);
        for (uint32_t j = 0; j < n; j++) {
            /* edge (a -> b) is edge j - 1 */
            const float *b = nav_vert(m, m->poly_verts[s + j]);
            double ob = orient(sx, sz, tx, tz, b[0], b[2]);
            if (orient(a[0], a[2], b[0], b[2], tx, tz) > 0) {
                inside = 0;
                if (oa == 0 || ob == 0)
                    return 0; /* through a vertex: let the search decide */
                if ((oa < 0) != (ob < 0))
                    exit_edge = j == 0 ? n - 1 : j - 1;
            }
            a = b;
            oa = ob;
        }
        if (inside)
            return goal_index(o, cur) >= 0;
        if (exit_edge == NAV_NONE)
            return 0;
        uint32_t nb = m->poly_nei[s + exit_edge];
        if (!passable(o, nb))
            return 0;
        cur = nb;
    }
    return 0;
}

/* ---- result ---- */

static void corner_pos(const nav_optimal *o, const opt_rec *r, float out[3]) {
    out[0] = (float)r->x;
    out[2] = (float)r->z;
    if (!isnan(r->y)) {
        out[1] = r->y;
        return;
    }
    float y = 0;
    if (nav_mesh_height(o->m, r->poly, out[0], out[2], &y) != NAV_OK)
        y = 0;
    out[1] = y;
}

/* Is record r a corner of the output? A bend that coincides with the next
   corner in xz (a zero-length segment) is not. */
static int emits(const opt_rec *r, double nx, double nz) {
    if (r->kind != R_VERTEX && r->kind != R_TURN)
        return 1;
    return !(r->x == nx && r->z == nz);
}

static void fill_result(nav_optimal *o, const opt_node *gn, const float end[3], uint32_t end_poly,
                        nav_path_result *res) {
    /* corners: goal, then the root chain backwards */
    uint32_t n = 1;
    double nx = o->tx, nz = o->tz;
    for (uint32_t r = gn->rec; r != NAV_NONE; r = o->recs[r].parent)
        if (emits(&o->recs[r], nx, nz)) {
            n++;
            nx = o->recs[r].x;
            nz = o->recs[r].z;
        }
    uint32_t idx = n - 1;
    float prev[3] = {end[0], end[1], end[2]};
    if (res->corners && idx < res->max_corners)
        memcpy(&res->corners[3 * idx], prev, sizeof prev);
    double len = 0;
    nx = o->tx;
    nz = o->tz;
    for (uint32_t r = gn->rec; r != NAV_NONE; r = o->recs[r].parent) {
        const opt_rec *rr = &o->recs[r];
        if (!emits(rr, nx, nz))
            continue;
        nx = rr->x;
        nz = rr->z;
        float c[3];
        corner_pos(o, rr, c);
        len += nav_dist3d(c, prev);
        memcpy(prev, c, sizeof c);
        idx--;
        if (res->corners && idx < res->max_corners)
            memcpy(&res->corners[3 * idx], c, sizeof c);
    }
    res->ncorners = res->corners ? (n < res->max_corners ? n : res->max_corners) : 0;
    if (n > res->ncorners)
        res->flags |= NAV_PATH_TRUNCATED;
    res->length = len;

    /* links, in path order */
    uint32_t nl = 0;
    for (uint32_t r = gn->rec; r != NAV_NONE; r = o->recs[r].parent)
        if (o->recs[r].kind == R_LEND)
            nl++;
    idx = nl;
    for (uint32_t r = gn->rec; r != NAV_NONE; r = o->recs[r].parent)
        if (o->recs[r].kind == R_LEND) {
            idx--;
            if (res->links && idx < res->max_links)
                res->links[idx] = o->recs[r].link & ~NAV_LINK_REVERSE;
        }
    res->nlinks = res->links ? (nl < res->max_links ? nl : res->max_links) : 0;
    if (nl > res->nlinks)
        res->flags |= NAV_PATH_TRUNCATED;

    /* corridor: the trail of expanded polygons, then the way from the
       polygon the goal was seen from to end_poly */
    uint32_t tail[OPT_MAX_GOAL], ntail = 0;
    int gi = goal_index(o, gn->poly);
    for (uint32_t i = gi < 0 ? NAV_NONE : o->goal_from[gi]; i != NAV_NONE; i = o->goal_from[i])
        tail[ntail++] = o->goal[i];
    uint32_t np = ntail;
    for (uint32_t t = gn->trail; t != NAV_NONE; t = o->trail[t].parent)
        np++;
    uint32_t cap = res->polys ? res->max_polys : 0;
    idx = np - ntail;
    for (uint32_t t = gn->trail; t != NAV_NONE; t = o->trail[t].parent) {
        idx--;
        if (idx < cap)
            res->polys[idx] = o->trail[t].poly;
    }
    for (uint32_t i = 0; i < ntail; i++)
        if (np - ntail + i < cap)
            res->polys[np - ntail + i] = tail[i];
    res->npolys = np < cap ? np : cap;
    if (np > res->npolys)
        res->flags |= NAV_PATH_TRUNCATED;
    (void)end_poly;
}

/*
 * The corner graph answers when the mesh has one and no area of its
 * polygons is excluded (that would move the walls the graph was built
 * from); excluded links it skips itself.
 * NAV_E_CORRUPT: it did not answer, the interval search must (counted as a
 * miss when the graph was tried: its answer had no walkable corridor, which
 * the tests require never to happen).
 */
static nav_status graph_search(nav_optimal *o, const nav_mesh *m, uint32_t start_poly,
                               const float start[3], uint32_t end_poly, const float end[3],
                               uint64_t exclude_mask, uint32_t budget, nav_path_result *res) {
    if (o->graph_mode == NAV_OPT_GRAPH_OFF || !m->cgraph || (exclude_mask & m->area_mask)) {
        o->stats.interval_searches++;
        return NAV_E_CORRUPT;
    }
    /* the default by the straight distance in typical polygon sizes
       (nav_optimal.h): the interval search near on small meshes, the
       table far where the graph has one, the graph's A* between */
    int table = o->graph_mode != NAV_OPT_GRAPH_ASTAR;
    if (o->graph_mode == NAV_OPT_GRAPH_AUTO) {
        double cell = nav_corner_cell(m->cgraph);
        double cells = cell > 0 ? dist(start[0], start[2], end[0], end[2]) / cell : 0;
        if (m->npolys < NAV_OPT_GRAPH_MIN_POLYS && cells < NAV_OPT_INTERVAL_MAX_CELLS) {
            o->stats.interval_searches++;
            return NAV_E_CORRUPT;
        }
        table = cells >= NAV_OPT_TABLE_MIN_CELLS;
    }
    if (!o->cq && !(o->cq = nav_corner_query_new()))
        return NAV_E_NOMEM;
    nav_corner_query_set_table(o->cq, table);
    o->stats.graph_searches++;
    uint32_t nexp = res->nexpanded;
    nav_status st =
        nav_corner_search(o->cq, m, start_poly, start, end_poly, end, exclude_mask, budget, res);
    if (st == NAV_E_CORRUPT) {
        o->stats.graph_misses++;
        o->stats.interval_searches++;
        res->ncorners = res->npolys = res->nlinks = 0;
        res->nexpanded = nexp;
        res->nodes_expanded = 0;
        res->length = 0;
        res->flags &= (uint32_t)~NAV_PATH_TRUNCATED;
    }
    return st;
}

static int finite3(const float *p) {
    return p && isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

nav_status nav_optimal_search(nav_optimal *o, const nav_mesh *m, uint32_t start_poly,
                              const float start[3], uint32_t end_poly, const float end[3],
                              uint64_t exclude_mask, uint32_t max_nodes, nav_path_result *res) {
    if (!o || !m || !res || !finite3(start) || !finite3(end) || start_poly >= m->npolys ||
        end_poly >= m->npolys)
        return NAV_E_INVALID_ARG;
    res->algorithm = NAV_ALGO_OPTIMAL;
    res->ncorners = res->npolys = res->nlinks = res->nexpanded = 0;
    res->nodes_expanded = 0;
    res->length = 0;
    if ((exclude_mask >> m->areas[start_poly]) & 1u || (exclude_mask >> m->areas[end_poly]) & 1u)
        return NAV_E_NOT_FOUND;
    if (!nav_mesh_reachable(m, start_poly, end_poly))
        return NAV_E_NOT_FOUND;
    if (!prepare(o, m))
        return NAV_E_NOMEM;
    o->excl = exclude_mask;
    o->tx = end[0];
    o->tz = end[2];
    goal_set(o, end_poly);
    uint32_t budget = (max_nodes == 0 || max_nodes > o->cap) ? o->cap : max_nodes;

    uint32_t sr = new_rec(o, R_START, start[0], start[2], 0, NAV_NONE, start_poly);
    o->recs[sr].y = start[1];
    uint32_t walked = 0;
    if (straight_walk(o, start_poly, budget, &walked)) {
        /* the segment itself is the shortest path (links cost at least
           the xz distance between their ends, so none can beat it) */
        opt_node gn = {.rec = sr, .poly = o->trail[o->ntrail - 1].poly, .trail = o->ntrail - 1};
        res->nodes_expanded = walked;
        for (uint32_t i = 0; i < o->ntrail && res->expanded && res->nexpanded < res->max_expanded;
             i++)
            res->expanded[res->nexpanded++] = o->trail[i].poly;
        fill_result(o, &gn, end, end_poly, res);
        return NAV_OK;
    }
    o->ntrail = 0;
    nav_status gs = graph_search(o, m, start_poly, start, end_poly, end, exclude_mask, budget, res);
    if (gs != NAV_E_CORRUPT)
        return gs;
    o->nsucc = 2; /* the start node goes to the open list */
    push_node(o, K_START, start_poly, 0, sr, start[0], start[2], start[0], start[2], 0,
              dist(start[0], start[2], o->tx, o->tz), NAV_NONE, 0, 0);

    uint32_t expanded = 0;
    while (o->nheap > 0) {
        uint32_t ni = heap_pop(o);
        opt_node nd = o->nodes[ni];
        o->free_nodes[o->nfree++] = ni;
        if (nd.kind == K_GOAL) {
            res->nodes_expanded = expanded;
            fill_result(o, &nd, end, end_poly, res);
            return NAV_OK;
        }
        /* a chain of nodes with one successor each is expanded without the
           open list (exact: every node is still expanded, only earlier; the
           goal is still taken from the open list in f order) */
        while (!root_dominated(o, &o->recs[nd.rec])) {
            if (expanded >= budget) {
                res->nodes_expanded = expanded;
                return NAV_E_LIMIT;
            }
            expanded++;
            if (res->expanded && res->nexpanded < res->max_expanded)
                res->expanded[res->nexpanded++] = nd.poly;
            o->nsucc = 0;
            expand(o, &nd);
            if (o->overflow) {
                res->nodes_expanded = expanded;
                return NAV_E_LIMIT;
            }
            if (o->nsucc != 1)
                break;
            nd = o->pend;
        }
    }
    res->nodes_expanded = expanded;
    return NAV_E_NOT_FOUND;
}

/*
 * Flood: the same search without a goal, ordered by the exact cost of
 * entering each node's interval (g of the root plus the distance from the
 * root to the interval), which never decreases from a node to its
 * successors, so stopping at max_cost loses nothing. Every point's shortest
 * path is still carried by some node (the prunings only drop nodes that
 * another node beats everywhere), so the cheapest node entering a polygon
 * gives the polygon's distance: a polygon is reached when any node entering
 * it costs at most max_cost, and such a node is itself a path of that cost.
 */
nav_status nav_optimal_flood(nav_optimal *o, const nav_mesh *m, uint32_t start_poly,
                             const float start[3], uint64_t exclude_mask, double max_cost,
                             uint32_t max_nodes, const uint32_t **polys, uint32_t *npolys) {
    if (!o || !m || !polys || !npolys || !finite3(start) || start_poly >= m->npolys ||
        !(max_cost >= 0) || isnan(max_cost))
        return NAV_E_INVALID_ARG;
    *polys = NULL;
    *npolys = 0;
    if ((exclude_mask >> m->areas[start_poly]) & 1u)
        return NAV_E_NOT_FOUND;
    if (!prepare(o, m))
        return NAV_E_NOMEM;
    o->excl = exclude_mask;
    o->flood = 1;
    o->flood_max = max_cost;
    o->ngoal = 0;
    o->tx = start[0];
    o->tz = start[2];
    *polys = o->reached;
    uint32_t budget = (max_nodes == 0 || max_nodes > o->cap) ? o->cap : max_nodes;
    uint32_t sr = new_rec(o, R_START, start[0], start[2], 0, NAV_NONE, start_poly);
    o->nsucc = 2; /* the start node goes to the open list */
    push_node(o, K_START, start_poly, 0, sr, start[0], start[2], start[0], start[2], 0, 0, NAV_NONE,
              0, 0);
    uint32_t expanded = 0;
    nav_status st = NAV_OK;
    while (o->nheap > 0 && st == NAV_OK) {
        uint32_t ni = heap_pop(o);
        opt_node nd = o->nodes[ni];
        o->free_nodes[o->nfree++] = ni;
        while (!root_dominated(o, &o->recs[nd.rec])) {
            if (expanded >= budget) {
                st = NAV_E_LIMIT;
                break;
            }
            expanded++;
            o->nsucc = 0;
            expand(o, &nd);
            if (o->overflow) {
                st = NAV_E_LIMIT;
                break;
            }
            if (o->nsucc != 1)
                break;
            nd = o->pend;
        }
    }
    *npolys = o->nreached;
    return st;
}
