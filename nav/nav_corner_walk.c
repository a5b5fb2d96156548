/*
 * nav_corner_walk: the visibility walker of the corner graph (see
 * nav_corner_internal.h) and the segment walk that rebuilds a path's
 * corridor. Geometry follows nav_optimal.c: xz in double, stored polygons
 * have negative signed area (interior where nav_cross2(edge start, edge
 * end, p) < 0), and an interval entering polygon q through edge e keeps A
 * nearer e's start vertex.
 *
 * Degenerate sight is handled as the interval search handles it: a root on
 * an edge sees the whole polygon beyond (a "full" cone, once per polygon);
 * an edge seen exactly edge-on, and a piece that shrinks to a point, are
 * not looked through. What lies beyond such a grazing ray is in sight of
 * the corner that grazes it, so a path through it is still in the graph
 * (as root -> corner -> beyond, of equal length).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner_internal.h"

#define CW_TEPS 1e-12 /* interval parameter below which a piece is a point */

#define CW_START NAV_CW_START
#define CW_FULL NAV_CW_FULL
#define CW_NORMAL NAV_CW_NORMAL

void nav_cwalk_free(nav_cwalk *w) {
    if (!w)
        return;
    free(w->stack);
    free(w->pstamp);
    free(w->sq);
    free(w->spar);
    memset(w, 0, sizeof *w);
}

/* Sizes the per-polygon stamps for m and starts a new generation. */
static int cw_prepare(nav_cwalk *w, const nav_mesh *m) {
    if (m->npolys > w->npstamp) {
        uint32_t *t = realloc(w->pstamp, (size_t)m->npolys * sizeof *t);
        if (!t)
            return 0;
        memset(t + w->npstamp, 0, (size_t)(m->npolys - w->npstamp) * sizeof *t);
        w->pstamp = t;
        w->npstamp = m->npolys;
    }
    if (++w->gen == 0) {
        memset(w->pstamp, 0, (size_t)w->npstamp * sizeof *w->pstamp);
        w->gen = 1;
    }
    return 1;
}

static inline __attribute__((always_inline)) int cw_push(nav_cwalk *w, uint32_t *top,
                                                         const nav_cw_item *it) {
    if (*top == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 256;
        nav_cw_item *t = realloc(w->stack, (size_t)cap * sizeof *t);
        if (!t)
            return 0;
        w->stack = t;
        w->cap = cap;
    }
    w->stack[(*top)++] = *it;
    return 1;
}

/* Sub-interval of [0, 1] where f0 + t (f1 - f0) <= 0 (closed). 0: empty. */
static inline int cw_nonpos(double f0, double f1, double *lo, double *hi) {
    if (f0 <= 0 && f1 <= 0) {
        *lo = 0, *hi = 1;
        return 1;
    }
    if (f0 > 0 && f1 > 0)
        return 0;
    double t = f0 / (f0 - f1);
    if (f0 <= 0)
        *lo = 0, *hi = t;
    else
        *lo = t, *hi = 1;
    return 1;
}

/* The piece [t0, t1] of edge j of p, in sight from the root: a cone into
   the neighbour, or the whole neighbour when the root lies on the edge. */
static int cw_piece(nav_cwalk *w, const nav_mesh *m, uint32_t p, uint32_t j, double t0, double t1,
                    double rx, double rz, int from_start, uint32_t *top) {
    uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
    uint32_t j1 = j + 1 == n ? 0 : j + 1;
    uint32_t nb = m->poly_nei[s + j];
    const float *va = nav_vert(m, m->poly_verts[s + j]);
    const float *vb = nav_vert(m, m->poly_verts[s + j1]);
    double c = nav_corner_orient(va[0], va[2], vb[0], vb[2], rx, rz);
    if (c > 0 && from_start)
        c = 0; /* a start a rounding error outside p is on the edge */
    nav_cw_item it = {.poly = nb, .el = m->poly_twin[s + j] - m->poly_start[nb]};
    double ex = (double)vb[0] - va[0], ez = (double)vb[2] - va[2];
    if (c < 0) {
        /* nb's edge runs vb -> va: A (nearer its start) is the t1 end */
        it.kind = CW_NORMAL;
        it.ax = t1 == 1 ? vb[0] : va[0] + t1 * ex;
        it.az = t1 == 1 ? vb[2] : va[2] + t1 * ez;
        it.bx = t0 == 0 ? va[0] : va[0] + t0 * ex;
        it.bz = t0 == 0 ? va[2] : va[2] + t0 * ez;
        return cw_push(w, top, &it);
    }
    if (c > 0)
        return 1;
    double d0 = (rx - va[0]) * ex + (rz - va[2]) * ez, l2 = ex * ex + ez * ez;
    if (d0 < -1e-12 * l2 || d0 > l2 * (1 + 1e-12) || w->pstamp[nb] == w->gen)
        return 1; /* seen edge-on from beyond an end: nothing in sight through it */
    w->pstamp[nb] = w->gen;
    it.kind = CW_FULL;
    return cw_push(w, top, &it);
}

/* nav_corner_orient(r, r + u, p), bit for bit, with k = 1e-11 (|ux| + |uz|)
   computed once for the many points tested against one ray. */
static inline double cw_orient_k(double rx, double rz, double ux, double uz, double k, double px,
                                 double pz) {
    double vx = px - rx, vz = pz - rz;
    double c = ux * vz - uz * vx;
    double tol = k * (fabs(vx) + fabs(vz));
    return fabs(c) <= tol ? 0.0 : c;
}

/* A cone through [A, B] of the entry edge: the far edges' pieces in it. */
static int cw_normal(nav_cwalk *w, const nav_mesh *m, const nav_cw_item *it, double rx, double rz,
                     uint32_t *top) {
    uint32_t p = it->poly, s = m->poly_start[p], n = nav_poly_nverts(m, p);
    uint32_t j = it->el + 1 == n ? 0 : it->el + 1;
    const float *w0 = nav_vert(m, m->poly_verts[s + j]);
    double ubx = it->bx - rx, ubz = it->bz - rz, kb = 1e-11 * (fabs(ubx) + fabs(ubz));
    double uax = it->ax - rx, uaz = it->az - rz, ka = 1e-11 * (fabs(uax) + fabs(uaz));
    double sb0 = cw_orient_k(rx, rz, ubx, ubz, kb, w0[0], w0[2]);
    double sa0 = cw_orient_k(rx, rz, uax, uaz, ka, w0[0], w0[2]);
    /* the polygon's vertices in sight, as nav_cone_sees would say */
    uint64_t seen = n <= 64 && sb0 <= 0 && sa0 >= 0 ? (uint64_t)1 << j : 0;
    for (uint32_t i = 0; i + 1 < n; i++, j = j + 1 == n ? 0 : j + 1) {
        uint32_t j1 = j + 1 == n ? 0 : j + 1;
        const float *w1 = nav_vert(m, m->poly_verts[s + j1]);
        double sb1 = cw_orient_k(rx, rz, ubx, ubz, kb, w1[0], w1[2]);
        double sa1 = cw_orient_k(rx, rz, uax, uaz, ka, w1[0], w1[2]);
        if (n <= 64 && sb1 <= 0 && sa1 >= 0)
            seen |= (uint64_t)1 << j1;
        double lo1, hi1, lo2, hi2;
        /* in sight: on B's negative side and A's positive side */
        if (m->poly_nei[s + j] != NAV_NONE && cw_nonpos(sb0, sb1, &lo1, &hi1) &&
            cw_nonpos(-sa0, -sa1, &lo2, &hi2)) {
            double lo = lo1 > lo2 ? lo1 : lo2, hi = hi1 < hi2 ? hi1 : hi2;
            if (lo < CW_TEPS)
                lo = 0;
            if (hi > 1 - CW_TEPS)
                hi = 1;
            if (hi - lo > CW_TEPS && !cw_piece(w, m, p, j, lo, hi, rx, rz, 0, top))
                return 0;
        }
        sb0 = sb1;
        sa0 = sa1;
    }
    w->seen = n <= 64 ? seen : NAV_CW_SEEN_ALL;
    return 1;
}

int nav_cwalk_begin(nav_cwalk *w, const nav_mesh *m, uint32_t poly, int at_vertex) {
    if (!cw_prepare(w, m))
        return 0;
    w->top = 0;
    nav_cw_item seed = {.poly = poly, .el = NAV_NONE, .kind = at_vertex ? CW_FULL : CW_START};
    w->pstamp[poly] = w->gen;
    return cw_push(w, &w->top, &seed);
}

int nav_cwalk_expand(nav_cwalk *w, const nav_mesh *m, const nav_cw_item *it, double rx, double rz) {
    if (it->kind == CW_NORMAL)
        return cw_normal(w, m, it, rx, rz, &w->top);
    w->seen = NAV_CW_SEEN_ALL;
    uint32_t s = m->poly_start[it->poly], n = nav_poly_nverts(m, it->poly);
    for (uint32_t j = 0; j < n; j++)
        if (j != it->el && m->poly_nei[s + j] != NAV_NONE &&
            !cw_piece(w, m, it->poly, j, 0, 1, rx, rz, it->kind == CW_START, &w->top))
            return 0;
    return 1;
}

int nav_cwalk_run(nav_cwalk *w, const nav_mesh *m, double rx, double rz, uint32_t poly,
                  int at_vertex, uint32_t limit, nav_cwalk_fn fn, void *ctx, uint32_t *steps) {
    if (!nav_cwalk_begin(w, m, poly, at_vertex))
        return NAV_CW_NOMEM;
    nav_cone cone;
    while (w->top > 0) {
        if (*steps >= limit)
            return NAV_CW_LIMIT;
        ++*steps;
        nav_cw_item it = w->stack[--w->top];
        nav_cw_cone(&it, rx, rz, &cone);
        if (!nav_cwalk_expand(w, m, &it, rx, rz))
            return NAV_CW_NOMEM;
        if (fn(ctx, it.poly, &cone, w->seen))
            return NAV_CW_STOPPED;
    }
    return NAV_CW_DONE;
}

/* ---- segment walk ---- */

/* Is (x, z) on the closed segment va -> vb (ex, ez = vb - va, l2 = its
   squared length), within tol = 1e-6 (1 + |x| + |z|), a few float roundings
   (points snapped onto an edge lie a rounding off it, on either side)? The
   caller computes the edge's terms once for both ends of its segment, and
   each end's tol once per walk. */
static int on_edge(const float *va, double ex, double ez, double l2, double x, double z,
                   double tol) {
    /* Within tol of the edge means within tol of its line: |cross| / |e|.
       Most points a segment walk asks about are far off the line, and this
       test (at twice tol, for roundings) rejects them without the division
       below; it never rejects a point the full test accepts. */
    double c = ex * (z - va[2]) - ez * (x - va[0]);
    if (c * c > 4 * tol * tol * l2)
        return 0;
    double t = l2 > 0 ? ((x - va[0]) * ex + (z - va[2]) * ez) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double dx = va[0] + t * ex - x, dz = va[2] + t * ez - z;
    return dx * dx + dz * dz <= tol * tol;
}

/*
 * May the walk of segment a -> b cross from polygon p over its edge
 * va -> vb? Yes when the segment leaves p through it (touching counts:
 * through a vertex, or along the edge), and whenever a or b lies on the
 * edge: at a corner the segment may leave through any polygon of the fan,
 * which can be more than half a turn away from the one the path arrived
 * in, and an end point on an edge belongs to the polygons on both sides.
 * ta, tb: on_edge's tol for a and b.
 */
static int seg_leaves(const float *va, const float *vb, double ax, double az, double bx, double bz,
                      double ta, double tb) {
    double ex = (double)vb[0] - va[0], ez = (double)vb[2] - va[2], l2 = ex * ex + ez * ez;
    if (on_edge(va, ex, ez, l2, ax, az, ta) || on_edge(va, ex, ez, l2, bx, bz, tb))
        return 1;
    double o1 = nav_corner_orient(ax, az, bx, bz, va[0], va[2]);
    double o2 = nav_corner_orient(ax, az, bx, bz, vb[0], vb[2]);
    if ((o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0))
        return 0;
    if (nav_corner_orient(va[0], va[2], vb[0], vb[2], bx, bz) < 0)
        return 0; /* b is on p's side of the edge */
    if (o1 != 0 || o2 != 0)
        return 1;
    /* along the edge's line: the two must overlap */
    if (l2 <= 0)
        return 0;
    double ua = ((ax - va[0]) * ex + (az - va[2]) * ez) / l2;
    double ub = ((bx - va[0]) * ex + (bz - va[2]) * ez) / l2;
    double lo = ua < ub ? ua : ub, hi = ua < ub ? ub : ua;
    return lo <= 1 + 1e-9 && hi >= -1e-9;
}

/* Appends p to the chain out[0..*len) of at most max: 0 when full (the
   breadth-first walk, whose chain is the shortest, then decides). */
static inline int ray_put(uint32_t *out, uint32_t max, uint32_t *len, uint32_t p) {
    if (*len >= max)
        return 0;
    out[(*len)++] = p;
    return 1;
}

#define RAY_AMBIGUOUS (-1)
#define RAY_BLOCKED 0  /* cw_ray: out of sight, decided without a touch */
#define RAY_FAN_MAX 64 /* polygons turned through around a corner */

#define RAY_AT_B (NAV_NONE - 1) /* cw_left_exit: a vertex on the line (b, or a touch) */

/*
 * The exit edge (its local index) of the polygon whose slots start at s
 * (nv of them), entered over local edge `entry` (its start o < 0: the
 * previous polygon's exit end, the same vertex; its end o > 0) or, when
 * entry is NAV_NONE, left from its local vertex `at` (a itself), read
 * along the left chain only: the first vertex right of a -> b (o < 0)
 * ends the exit edge. RAY_AT_B: a vertex lies on the line; NAV_NONE: no
 * way out. o is cw_orient_k's with (ux, uz, k) for a -> b.
 */
static uint32_t cw_left_exit(const nav_mesh *m, uint32_t s, uint32_t nv, uint32_t entry,
                             uint32_t at, double ax, double az, double ux, double uz, double k) {
    uint32_t j = entry != NAV_NONE ? (entry + 1 == nv ? 0 : entry + 1) : at;
    for (uint32_t i = 0; i < nv; i++) {
        uint32_t j1 = j + 1 == nv ? 0 : j + 1;
        if (j1 == entry)
            return j;
        if (j1 == at)
            return NAV_NONE; /* round the polygon */
        const float *v1 = nav_vert(m, m->poly_verts[s + j1]);
        double o = cw_orient_k(ax, az, ux, uz, k, v1[0], v1[2]);
        if (o == 0)
            return RAY_AT_B;
        if (o < 0)
            return j;
        j = j1;
    }
    return NAV_NONE;
}

/*
 * The segment walk's common case without a queue: a taut path's segment
 * runs from a corner (or the start, or a link's end) to the next through
 * the interiors of the edges between, so the polygons it crosses are
 * found one exit edge at a time. From a vertex of `from` the walk first
 * turns through the fan around it, over the edges at that vertex, to the
 * polygon whose angle holds the direction to b. 1: the chain to the
 * target is in out[0..*n); RAY_BLOCKED when, with no vertex on the line so
 * far, the segment ends inside a polygon no target or crosses a wall
 * edge's inside (it is not in sight; a target polygon there is left to the
 * breadth-first walk); RAY_AMBIGUOUS when the segment touches a vertex
 * other than a, runs along an edge, ends on an exit edge, meets walls both
 * ways round a's fan or needs more than max polygons: the breadth-first
 * walk answers those (it tries every polygon the segment touches). On
 * town, 290 of the 20,811 segments of its 1,958 reference paths are left
 * to it.
 */
static int cw_ray(const nav_mesh *m, uint32_t from, double ax, double az, double bx, double bz,
                  nav_seg_target_fn is_target, const void *ctx, uint32_t target_poly, uint32_t *out,
                  uint32_t max, uint32_t *n) {
    uint32_t len = 0, p = from;
    if (!ray_put(out, max, &len, p))
        return RAY_AMBIGUOUS;
    if (is_target(ctx, p)) {
        *n = len;
        return 1;
    }
    /* at: the start vertex's local index */
    uint32_t at = NAV_NONE;
    uint32_t s = m->poly_start[p], nv = nav_poly_nverts(m, p);
    for (uint32_t k = 0; k < nv; k++) {
        const float *v = nav_vert(m, m->poly_verts[s + k]);
        if (v[0] == ax && v[2] == az) {
            at = k;
            break;
        }
    }
    /* From a vertex: turn to the polygon of its fan whose angle there
       holds b (both edges at the vertex keep b on their inner side),
       one way round: first towards b's side, and from the start the
       other way when that meets a wall (a corner's fan is open between
       two walls, and b may lie more than half a turn away). dir: 0 not
       chosen; odd: over the edge leaving a (local `at`), even: over
       the one entering it; 3 and 4 after a wall sent the walk back. */
    int dir = 0;
    uint32_t at0 = at;
    for (uint32_t turns = 0; at != NAV_NONE; turns++) {
        if (turns == RAY_FAN_MAX)
            return RAY_AMBIGUOUS;
        s = m->poly_start[p], nv = nav_poly_nverts(m, p);
        uint32_t kp = at == 0 ? nv - 1 : at - 1, kn = at + 1 == nv ? 0 : at + 1;
        const float *u = nav_vert(m, m->poly_verts[s + kp]);
        const float *w = nav_vert(m, m->poly_verts[s + kn]);
        double o1 = nav_corner_orient(u[0], u[2], ax, az, bx, bz);
        double o2 = nav_corner_orient(ax, az, w[0], w[2], bx, bz);
        if (o1 == 0 || o2 == 0)
            return RAY_AMBIGUOUS; /* along an edge at the vertex */
        if (o1 < 0 && o2 < 0)
            break;
        /* b beyond the edge a -> w (local edge at) or u -> a (kp) */
        if (dir == 0)
            dir = o2 > 0 ? 1 : 2;
        uint32_t e = (dir & 1) ? at : kp;
        uint32_t nb = m->poly_nei[s + e];
        if (nb == NAV_NONE) {
            if (dir > 2)
                return RAY_AMBIGUOUS; /* walls both ways round */
            /* the other way round, from the start */
            dir = 5 - dir; /* 1 -> 4, 2 -> 3: tried once each */
            p = from, at = at0, len = 1, turns = 0;
            continue;
        }
        /* the shared edge runs the other way in nb: a is its end when
           leaving over `at`, its start when leaving over kp */
        uint32_t el = m->poly_twin[s + e] - m->poly_start[nb];
        uint32_t nnv = nav_poly_nverts(m, nb);
        at = e == at ? (el + 1 == nnv ? 0 : el + 1) : el;
        p = nb;
        if (!ray_put(out, max, &len, p))
            return RAY_AMBIGUOUS;
        if (is_target(ctx, p)) {
            *n = len;
            return 1;
        }
    }
    /* Crossing one polygon after another. The line a -> b crosses a
       convex polygon's boundary twice: in index order the vertices run
       from the entry (o < 0 before it, o > 0 after) through a left chain
       (o > 0) to the exit edge (o > 0, then o < 0). Past an entry edge
       only the left chain is read, from the entry's known positive end;
       a vertex on the line there is b (the walk is done when the target
       says so) or a touch (ambiguous). The first polygon, which holds a
       inside, is read whole. With exact orientations a vertex of the
       right chain cannot lie on the line either. */
    double ux = bx - ax, uz = bz - az, k = 1e-11 * (fabs(ux) + fabs(uz));
    uint32_t entry = NAV_NONE; /* local index of the edge the walk came in by */
    for (uint32_t steps = 0; target_poly == NAV_NONE || p != target_poly; steps++) {
        if (steps > m->npolys)
            return RAY_AMBIGUOUS;
        s = m->poly_start[p], nv = nav_poly_nverts(m, p);
        uint32_t exit = NAV_NONE;
        if (entry != NAV_NONE || at != NAV_NONE) {
            exit = cw_left_exit(m, s, nv, entry, at, ax, az, ux, uz, k);
            if (exit == RAY_AT_B) {
                if (target_poly == NAV_NONE && is_target(ctx, p)) {
                    *n = len;
                    return 1;
                }
                return RAY_AMBIGUOUS;
            }
        } else {
            const float *v0 = nav_vert(m, m->poly_verts[s]);
            double o0 = cw_orient_k(ax, az, ux, uz, k, v0[0], v0[2]);
            double oa = o0;
            for (uint32_t j = 0; j < nv; j++) {
                double ob = o0;
                if (j + 1 < nv) {
                    const float *v1 = nav_vert(m, m->poly_verts[s + j + 1]);
                    ob = cw_orient_k(ax, az, ux, uz, k, v1[0], v1[2]);
                }
                if (oa == 0)
                    return RAY_AMBIGUOUS;
                if (oa > 0 && ob < 0)
                    exit = j;
                oa = ob;
            }
        }
        if (exit == NAV_NONE)
            return RAY_AMBIGUOUS;
        uint32_t nb = m->poly_nei[s + exit];
        const float *va = nav_vert(m, m->poly_verts[s + exit]);
        const float *vb = nav_vert(m, m->poly_verts[s + (exit + 1 == nv ? 0 : exit + 1)]);
        /* b on the inner side of the exit edge: the segment ends in p,
           which is no target (the loop stops at target_poly; another
           target, with b on its boundary, is the breadth-first walk's);
           b beyond a wall edge crossed inside: blocked */
        double ob = nav_corner_orient(va[0], va[2], vb[0], vb[2], bx, bz);
        if ((ob < 0 || (nb == NAV_NONE && ob > 0)) && !is_target(ctx, p))
            return RAY_BLOCKED; /* b in p, or the segment crosses a wall's inside */
        if (nb == NAV_NONE || ob == 0)
            return RAY_AMBIGUOUS;
        entry = m->poly_twin[s + exit] - m->poly_start[nb];
        at = NAV_NONE;
        p = nb;
        if (!ray_put(out, max, &len, p))
            return RAY_AMBIGUOUS;
    }
    *n = len;
    return 1;
}

/* The breadth-first walk over every polygon the segment touches (the
   cases cw_ray leaves): 1 with the chain to a target in out[0..*n), 0 when
   none is reached, -1 when the scratch cannot grow. */
static int cw_bfs(nav_cwalk *w, const nav_mesh *m, uint32_t from, double ax, double az, double bx,
                  double bz, nav_seg_target_fn is_target, const void *ctx, uint32_t *out,
                  uint32_t max, uint32_t *n) {
    if (!cw_prepare(w, m))
        return -1;
    if (w->scap < m->npolys) {
        uint32_t *q = realloc(w->sq, (size_t)m->npolys * sizeof *q);
        if (q)
            w->sq = q;
        uint32_t *p = realloc(w->spar, (size_t)m->npolys * sizeof *p);
        if (p)
            w->spar = p;
        if (!q || !p)
            return -1;
        w->scap = m->npolys;
    }
    double tol_a = 1e-6 * (1.0 + fabs(ax) + fabs(az)), tol_b = 1e-6 * (1.0 + fabs(bx) + fabs(bz));
    uint32_t head = 0, tail = 1;
    w->sq[0] = from;
    w->spar[0] = NAV_NONE;
    w->pstamp[from] = w->gen;
    for (; head < tail; head++) {
        uint32_t p = w->sq[head];
        if (is_target(ctx, p)) {
            uint32_t len = 0;
            for (uint32_t i = head; i != NAV_NONE; i = w->spar[i])
                len++;
            if (len > max)
                return 0;
            uint32_t k = len;
            for (uint32_t i = head; i != NAV_NONE; i = w->spar[i])
                out[--k] = w->sq[i];
            *n = len;
            return 1;
        }
        uint32_t s = m->poly_start[p], nv = nav_poly_nverts(m, p);
        for (uint32_t j = 0; j < nv; j++) {
            uint32_t nb = m->poly_nei[s + j];
            if (nb == NAV_NONE || w->pstamp[nb] == w->gen)
                continue;
            const float *va = nav_vert(m, m->poly_verts[s + j]);
            const float *vb = nav_vert(m, m->poly_verts[s + (j + 1 == nv ? 0 : j + 1)]);
            if (!seg_leaves(va, vb, ax, az, bx, bz, tol_a, tol_b))
                continue;
            w->pstamp[nb] = w->gen;
            w->sq[tail] = nb;
            w->spar[tail] = head;
            tail++;
        }
    }
    return 0;
}

int nav_cwalk_segment(nav_cwalk *w, const nav_mesh *m, uint32_t from, double ax, double az,
                      double bx, double bz, nav_seg_target_fn is_target, const void *ctx,
                      uint32_t target_poly, uint32_t *out, uint32_t max, uint32_t *n) {
    *n = 0;
    int r = cw_ray(m, from, ax, az, bx, bz, is_target, ctx, target_poly, out, max, n);
    if (r == 1)
        return r;
    return cw_bfs(w, m, from, ax, az, bx, bz, is_target, ctx, out, max, n) > 0;
}

int nav_cwalk_sees(nav_cwalk *w, const nav_mesh *m, uint32_t from, double ax, double az, double bx,
                   double bz, nav_seg_target_fn is_target, const void *ctx, uint32_t target_poly,
                   uint32_t *out, uint32_t max) {
    uint32_t n = 0;
    int r = cw_ray(m, from, ax, az, bx, bz, is_target, ctx, target_poly, out, max, &n);
    if (r != RAY_AMBIGUOUS)
        return r;
    return cw_bfs(w, m, from, ax, az, bx, bz, is_target, ctx, out, max, &n);
}
