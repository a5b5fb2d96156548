/*
 * nav_bake_holes.c: joins each hole of a region (a contour with positive
 * signed area, e.g. around a pillar) to the region's outline, so polygon
 * building sees one simple loop per region. Holes are taken left to right;
 * each is bridged from its leftmost vertex to the nearest outline vertex
 * whose bridge lies inside the outline and crosses no contour edge; the
 * loop then runs along the outline to that vertex, around the hole and
 * back (both bridge ends appear twice); a region whose hole finds no clean
 * bridge is left out (never walkable through its obstacle). Also the
 * integer predicates shared with triangulation (nav_bake_poly.c).
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

/* Twice the signed area of (a, b, c) in xz (x right, z up: > 0 turns left). */
long nb_tri2(const int *a, const int *b, const int *c) {
    return ((long)b[0] - a[0]) * ((long)c[2] - a[2]) - ((long)c[0] - a[0]) * ((long)b[2] - a[2]);
}

static bool nb_xz_eq(const int *a, const int *b) {
    return a[0] == b[0] && a[2] == b[2];
}

/* c on the segment a-b (collinear, within its box). */
static bool nb_between(const int *a, const int *b, const int *c) {
    if (nb_tri2(a, b, c) != 0)
        return false;
    if (a[0] != b[0])
        return (a[0] <= c[0] && c[0] <= b[0]) || (a[0] >= c[0] && c[0] >= b[0]);
    return (a[2] <= c[2] && c[2] <= b[2]) || (a[2] >= c[2] && c[2] >= b[2]);
}

/* Segments a-b and c-d meet (properly or by touching). */
bool nb_seg_intersect(const int *a, const int *b, const int *c, const int *d) {
    long d1 = nb_tri2(a, b, c), d2 = nb_tri2(a, b, d), d3 = nb_tri2(c, d, a), d4 = nb_tri2(c, d, b);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
        return true;
    return nb_between(a, b, c) || nb_between(a, b, d) || nb_between(c, d, a) || nb_between(c, d, b);
}

/* Does segment p-q cross an edge of contour v (n vertices, stride 4),
   ignoring edges that touch p or q by position? */
static bool nb_seg_hits_contour(const int *p, const int *q, const int *v, int n) {
    for (int i = 0; i < n; i++) {
        const int *a = &v[i * 4], *b = &v[((i + 1) % n) * 4];
        if (nb_xz_eq(a, p) || nb_xz_eq(b, p) || nb_xz_eq(a, q) || nb_xz_eq(b, q))
            continue;
        if (nb_seg_intersect(p, q, a, b))
            return true;
    }
    return false;
}

/* The bridge from vertex i of a negative-area (clockwise in x right, z up)
   loop towards p leaves into the loop's interior. */
static bool nb_in_cone_cw(const int *v, int n, int i, const int *p) {
    const int *a0 = &v[((i + n - 1) % n) * 4], *a = &v[i * 4], *a1 = &v[((i + 1) % n) * 4];
    /* mirror of the counter-clockwise test: negate every turn */
    if (nb_tri2(a, a1, a0) <= 0) /* convex corner */
        return nb_tri2(a, p, a0) < 0 && nb_tri2(p, a, a1) < 0;
    return !(nb_tri2(a, p, a1) <= 0 && nb_tri2(p, a, a0) <= 0);
}

static int nb_leftmost(const nb_contour *c) {
    int best = 0;
    for (int i = 1; i < c->nv; i++) {
        const int *p = &c->v[i * 4], *b = &c->v[best * 4];
        if (p[0] < b[0] || (p[0] == b[0] && p[2] < b[2]))
            best = i;
    }
    return best;
}

/* Splices hole h (entered at hi) into outline o after vertex oi. */
static nav_status nb_splice(nb_contour *o, int oi, nb_contour *h, int hi) {
    int n = o->nv + h->nv + 2;
    int *v = malloc((size_t)n * 4 * sizeof *v);
    if (!v)
        return NAV_E_NOMEM;
    int k = 0;
    for (int i = 0; i <= o->nv; i++)
        memcpy(&v[4 * k++], &o->v[((oi + i) % o->nv) * 4], 4 * sizeof(int));
    for (int i = 0; i <= h->nv; i++)
        memcpy(&v[4 * k++], &h->v[((hi + i) % h->nv) * 4], 4 * sizeof(int));
    free(o->v);
    o->v = v;
    o->nv = n;
    free(h->v);
    h->v = NULL;
    h->nv = 0;
    return NAV_OK;
}

typedef struct nb_cand_d {
    long d2;
    int i;
} nb_cand_d;

static int nb_cmp_cand(const void *a, const void *b) {
    const nb_cand_d *x = a, *y = b;
    if (x->d2 != y->d2)
        return x->d2 < y->d2 ? -1 : 1;
    return x->i - y->i;
}

static nav_status nb_merge_hole(nb_cset *cs, int oi, int hidx, const int *holes, int nholes,
                                int hpos) {
    nb_contour *o = &cs->c[oi], *h = &cs->c[hidx];
    int hi = nb_leftmost(h);
    const int *p = &h->v[hi * 4];
    nb_cand_d *cand = malloc((size_t)o->nv * sizeof *cand);
    if (!cand)
        return NAV_E_NOMEM;
    int nc = 0;
    for (int i = 0; i < o->nv; i++) {
        if (!nb_in_cone_cw(o->v, o->nv, i, p))
            continue;
        long dx = o->v[i * 4] - p[0], dz = o->v[i * 4 + 2] - p[2];
        cand[nc++] = (nb_cand_d){dx * dx + dz * dz, i};
    }
    qsort(cand, (size_t)nc, sizeof *cand, nb_cmp_cand);
    int best = -1;
    for (int k = 0; k < nc && best < 0; k++) {
        const int *q = &o->v[cand[k].i * 4];
        if (nb_seg_hits_contour(q, p, o->v, o->nv))
            continue;
        bool hit = false;
        for (int j = hpos; j < nholes && !hit; j++)
            hit = nb_seg_hits_contour(q, p, cs->c[holes[j]].v, cs->c[holes[j]].nv);
        if (!hit)
            best = cand[k].i;
    }
    free(cand);
    if (best < 0) {
        /* No clean bridge (never seen on the shared levels or random
           clutter): polygons of the outline alone would cover the hole, so
           the region is left out rather than walkable through an obstacle. */
        free(o->v);
        o->v = NULL;
        o->nv = 0;
        return NAV_OK;
    }
    return nb_splice(o, best, h, hi);
}

/* A point strictly inside (or on) a loop, by crossings. */
static bool nb_point_in(const nb_contour *c, const int *p) {
    bool in = false;
    for (int i = 0, j = c->nv - 1; i < c->nv; j = i++) {
        const int *a = &c->v[i * 4], *b = &c->v[j * 4];
        if ((a[2] > p[2]) != (b[2] > p[2]) &&
            p[0] < (double)(b[0] - a[0]) * (p[2] - a[2]) / (double)(b[2] - a[2]) + a[0])
            in = !in;
    }
    return in;
}

nav_status nb_holes_merge(nb_cset *cs) {
    /* group by region: order contour ids by (reg, index) */
    int *ids = malloc(((size_t)cs->n + 1) * sizeof *ids);
    if (!ids)
        return NAV_E_NOMEM;
    nav_status st = NAV_OK;
    int nh = 0;
    for (int i = 0; i < cs->n; i++)
        if (nb_contour_area2(&cs->c[i]) > 0)
            ids[nh++] = i;
    if (nh == 0) {
        free(ids);
        return NAV_OK;
    }
    /* left to right by leftmost vertex (insertion sort: stable, no globals) */
    for (int i = 1; i < nh; i++) {
        int v = ids[i], j = i;
        const nb_contour *x = &cs->c[v];
        const int *p = &x->v[nb_leftmost(x) * 4];
        while (j > 0) {
            const nb_contour *y = &cs->c[ids[j - 1]];
            const int *q = &y->v[nb_leftmost(y) * 4];
            if (q[0] < p[0] || (q[0] == p[0] && q[2] <= p[2]))
                break;
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = v;
    }
    for (int k = 0; k < nh && st == NAV_OK; k++) {
        nb_contour *h = &cs->c[ids[k]];
        const int *p = &h->v[nb_leftmost(h) * 4];
        int outline = -1;
        for (int i = 0; i < cs->n; i++) {
            nb_contour *o = &cs->c[i];
            if (o->reg != h->reg || o->nv == 0 || nb_contour_area2(o) >= 0)
                continue;
            if (outline < 0 || nb_point_in(o, p))
                outline = i;
        }
        if (outline >= 0)
            st = nb_merge_hole(cs, outline, ids[k], ids, nh, k + 1);
    }
    free(ids);
    return st;
}
