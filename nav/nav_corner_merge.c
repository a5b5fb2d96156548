/*
 * nav_corner_merge: the walk mesh of the corner graph. The sight cones of
 * the graph's build and of every query are pushed through polygons one at
 * a time, and a cone's cost is the polygon's, whatever its size: a room
 * tiled by 400 unit cells costs 400 cones where one convex piece would
 * cost one. So the walks run on a coarser mesh over the same walkable
 * region: adjacent polygons merged greedily while the union stays convex
 * in xz, each merge across exactly one shared edge (so no vertex is ever
 * dropped: corners, and every vertex a portal ends at, stay vertices, and
 * consecutive collinear vertices keep the adjacency T-free), at most
 * CM_MAX_VERTS vertices a piece. Then straight runs of edges leading to the
 * same piece, or walls, are joined into one edge (cm_join): a cone through
 * a side of cells stays one cone. Without the join a cone split at every
 * cell edge of a side, so a cone cost grew with its piece's vertices and
 * larger caps were slower (instructions per query on random320 short /
 * walls320 medium: 64 vertices 118k / 7.1M, 16: 101k / 3.9M, 8: 93k /
 * 3.3M, unmerged 113k / 4.3M). With it, time ratios to Detour (best of 11
 * pairs, random320 / walls320, short / medium / long): cap 8 0.93 / 0.45 /
 * 0.24 and 0.93 / 0.40 / 0.09; 16: 0.80 / 0.36 / 0.26 and 0.56 / 0.25 /
 * 0.07; 32: 0.73 / 0.30 / 0.24 and 0.35 / 0.16 / 0.06; 64 no better than 32;
 * town unchanged (its baked polygons have few straight runs). Floors stay apart: merging
 * follows adjacency, and a union that winds more than once around (a
 * spiral ramp over itself) is refused by its turning number. Exact answers
 * do not depend on the tiling: visibility is a property of the region.
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner_internal.h"

#define CM_MAX_VERTS 32 /* <= 64: a walk sees a piece's vertices as bits */

typedef struct cm_loop {
    uint32_t v[CM_MAX_VERTS];
    uint32_t src[CM_MAX_VERTS]; /* original slot (poly_start[p] + k) of the edge leaving v[i] */
    uint32_t n;
    double area; /* summed xz area of the polygons in it */
} cm_loop;

/*
 * Is the loop exactly the union of its polygons, as one convex piece?
 * Convex: every turn toward the interior side or straight, never back
 * (a slit: two members touching along a wall would put the wall inside).
 * Simple: one turn around in all. Tiled: its area is its members' (no two
 * overlap in xz, as floors over one another would).
 */
static int cm_convex(const nav_mesh *m, const cm_loop *l) {
    double area2 = 0;
    int wraps = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const float *a = nav_vert(m, l->v[i]), *b = nav_vert(m, l->v[(i + 1) % l->n]),
                    *c = nav_vert(m, l->v[(i + 2) % l->n]);
        double cr = nav_cross2(a, b, c);
        double ux = (double)b[0] - a[0], uz = (double)b[2] - a[2];
        double vx = (double)c[0] - b[0], vz = (double)c[2] - b[2];
        double dot = ux * vx + uz * vz;
        if (cr > 0 || (cr == 0 && dot <= 0))
            return 0;
        wraps += nav_turn_wrap(ux, uz, vx, vz);
        area2 += (double)a[0] * b[2] - (double)b[0] * a[2];
    }
    double area = fabs(area2) * 0.5;
    return wraps == -1 && fabs(area - l->area) <= 1e-6 * (1.0 + l->area);
}

/* Tries to absorb polygon q (not yet in a piece) across loop edge i. */
static int cm_absorb(const nav_mesh *m, const uint32_t *of, uint32_t id, cm_loop *l, uint32_t i,
                     uint32_t q) {
    uint32_t s = m->poly_start[q], n = nav_poly_nverts(m, q), shared = 0, jq = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t nb = m->poly_nei[s + j];
        if (nb != NAV_NONE && of[nb] == id)
            shared++, jq = j;
    }
    if (shared != 1 || l->n + n - 2 > CM_MAX_VERTS)
        return 0;
    uint32_t a = m->poly_verts[s + jq], b = m->poly_verts[s + (jq + 1) % n];
    if (l->v[i] != b || l->v[(i + 1) % l->n] != a)
        return 0;
    cm_loop c;
    c.n = 0;
    for (uint32_t k = 0; k <= i; k++) {
        c.v[c.n] = l->v[k];
        c.src[c.n++] = l->src[k];
    }
    c.src[c.n - 1] = s + (jq + 1) % n; /* b now leaves along q's next edge */
    for (uint32_t k = 2; k < n; k++) {
        uint32_t v = m->poly_verts[s + (jq + k) % n];
        for (uint32_t x = 0; x < l->n; x++)
            if (l->v[x] == v)
                return 0; /* q touches the piece elsewhere: not a simple union */
        c.v[c.n] = v;
        c.src[c.n++] = s + (jq + k) % n;
    }
    for (uint32_t k = i + 1; k < l->n; k++) {
        c.v[c.n] = l->v[k];
        c.src[c.n++] = l->src[k];
    }
    c.area = l->area + m->poly_area[q];
    if (!cm_convex(m, &c))
        return 0;
    *l = c;
    return 1;
}

static int cm_grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
    if (need <= *cap)
        return 1;
    uint32_t ncap = *cap ? *cap : 1024;
    while (ncap < need)
        ncap *= 2;
    void *t = realloc(*p, (size_t)ncap * size);
    if (!t)
        return 0;
    *p = t;
    *cap = ncap;
    return 1;
}

/* Is vertex b, between a and c on a piece's loop, a point of the straight
   segment a -> c? Only axis-parallel runs count (exact in floats: the
   cells of a grid, and the many axis-parallel edges of baked meshes); a
   nearly straight loop keeps its vertex, so no piece changes shape. */
static int cm_straight(const float *a, const float *b, const float *c) {
    if (a[0] == b[0] && b[0] == c[0])
        return (a[2] < b[2] && b[2] < c[2]) || (a[2] > b[2] && b[2] > c[2]);
    if (a[2] == b[2] && b[2] == c[2])
        return (a[0] < b[0] && b[0] < c[0]) || (a[0] > b[0] && b[0] > c[0]);
    return 0;
}

/*
 * Joins runs of straight edges. A piece's side along a row of cells is one
 * edge per cell, and a sight cone crossing it splits into one cone per
 * edge, even where every edge leads into the same neighbouring piece: in
 * rooms of one-metre cells that fragmentation made most of a short query's
 * cones. A vertex goes when the loop runs straight through it, its two
 * edges have the same neighbouring piece (or are both walls) and it is no
 * corner node: then the neighbour's loop runs straight through it too,
 * between two edges leading back (the condition is symmetric), so the
 * joined edges still pair one to one and the twins are remapped. Pieces
 * keep their shape and at least three vertices.
 */
static nav_status cm_join(nav_cgraph *g) {
    nav_mesh *w = g->wm;
    uint32_t slots = w->poly_start[w->npolys];
    uint32_t *newof = malloc(((size_t)slots + 1) * sizeof *newof);
    uint32_t *start = malloc(((size_t)w->npolys + 1) * sizeof *start);
    uint32_t *verts = malloc(((size_t)slots + 1) * sizeof *verts);
    uint32_t *nei = malloc(((size_t)slots + 1) * sizeof *nei);
    uint32_t *twin = malloc(((size_t)slots + 1) * sizeof *twin);
    uint32_t *corner = malloc(((size_t)slots + 1) * sizeof *corner);
    uint32_t *first = malloc(((size_t)slots + 1) * sizeof *first); /* new slot: its first old one */
    if (!newof || !start || !verts || !nei || !twin || !corner || !first) {
        free(newof), free(start), free(verts), free(nei), free(twin), free(corner), free(first);
        return NAV_E_NOMEM;
    }
    uint32_t nv = 0;
    for (uint32_t wp = 0; wp < w->npolys; wp++) {
        uint32_t os = w->poly_start[wp], n = w->poly_start[wp + 1] - os, kept = n;
        start[wp] = nv;
        /* the first vertex kept: the loop's slots start there */
        uint32_t k0 = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t kp = k == 0 ? n - 1 : k - 1, kn = k + 1 == n ? 0 : k + 1;
            int drop =
                w->poly_nei[os + kp] == w->poly_nei[os + k] && g->wcorner_of[os + k] == NAV_NONE &&
                cm_straight(nav_vert(w, w->poly_verts[os + kp]), nav_vert(w, w->poly_verts[os + k]),
                            nav_vert(w, w->poly_verts[os + kn]));
            newof[os + k] = drop ? NAV_NONE : 0; /* mark; numbered below */
            if (drop)
                kept--;
        }
        if (kept < 3) /* never in practice (a convex piece has 3 turns): keep all */
            for (uint32_t k = 0; k < n; k++)
                newof[os + k] = 0;
        while (k0 < n && newof[os + k0] == NAV_NONE)
            k0++;
        uint32_t cur = NAV_NONE;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = k0 + i < n ? k0 + i : k0 + i - n;
            if (newof[os + k] != NAV_NONE) {
                cur = nv++;
                verts[cur] = w->poly_verts[os + k];
                nei[cur] = w->poly_nei[os + k];
                corner[cur] = g->wcorner_of[os + k];
                first[cur] = os + k;
            }
            newof[os + k] = cur;
        }
    }
    start[w->npolys] = nv;
    for (uint32_t i = 0; i < nv; i++) {
        uint32_t t = w->poly_twin[first[i]];
        twin[i] = t == NAV_NONE ? NAV_NONE : newof[t];
    }
    free(newof);
    free(first);
    free(w->poly_start), free(w->poly_verts), free(w->poly_nei), free(w->poly_twin);
    free(g->wcorner_of);
    w->poly_start = start, w->poly_verts = verts, w->poly_nei = nei, w->poly_twin = twin;
    g->wcorner_of = corner;
    return NAV_OK;
}

/* Walk-mesh adjacency, corner slots and link lists from the pieces. */
static nav_status cm_finish(const nav_mesh *m, nav_cgraph *g, const uint32_t *src) {
    nav_mesh *w = g->wm;
    uint32_t slots = w->poly_start[w->npolys], oslots = m->poly_start[m->npolys];
    uint32_t *ow = malloc(((size_t)oslots + 1) * sizeof *ow);
    w->poly_nei = malloc(((size_t)slots + 1) * sizeof *w->poly_nei);
    w->poly_twin = malloc(((size_t)slots + 1) * sizeof *w->poly_twin);
    g->wcorner_of = malloc(((size_t)slots + 1) * sizeof *g->wcorner_of);
    g->wrep = malloc(((size_t)w->npolys + 1) * sizeof *g->wrep);
    g->wpoly = malloc(((size_t)g->nnodes + 1) * sizeof *g->wpoly);
    g->wpts_start = calloc((size_t)w->npolys + 1, sizeof *g->wpts_start);
    g->wpts = malloc((2 * (size_t)m->nlinks + 1) * sizeof *g->wpts);
    if (!ow || !w->poly_nei || !w->poly_twin || !g->wcorner_of || !g->wrep || !g->wpoly ||
        !g->wpts_start || !g->wpts) {
        free(ow);
        return NAV_E_NOMEM;
    }
    for (uint32_t i = 0; i < oslots; i++)
        ow[i] = NAV_NONE;
    for (uint32_t i = 0; i < slots; i++)
        ow[src[i]] = i;
    for (uint32_t wp = 0; wp < w->npolys; wp++)
        g->wrep[wp] = NAV_NONE;
    for (uint32_t p = 0; p < m->npolys; p++)
        if (g->wrep[g->wof[p]] == NAV_NONE)
            g->wrep[g->wof[p]] = p;
    for (uint32_t i = 0; i < slots; i++) {
        uint32_t nb = m->poly_nei[src[i]];
        w->poly_nei[i] = nb == NAV_NONE ? NAV_NONE : g->wof[nb];
        w->poly_twin[i] = nb == NAV_NONE ? NAV_NONE : ow[m->poly_twin[src[i]]];
        g->wcorner_of[i] = g->corner_of[src[i]];
    }
    free(ow);
    if (cm_join(g) != NAV_OK)
        return NAV_E_NOMEM;
    for (uint32_t u = 0; u < g->nnodes; u++)
        g->wpoly[u] = g->poly[u] == NAV_NONE ? NAV_NONE : g->wof[g->poly[u]];
    for (uint32_t u = g->ncorners; u < g->nnodes; u++)
        if (g->wpoly[u] != NAV_NONE)
            g->wpts_start[g->wpoly[u] + 1]++;
    for (uint32_t wp = 0; wp < w->npolys; wp++)
        g->wpts_start[wp + 1] += g->wpts_start[wp];
    uint32_t *fill = calloc((size_t)w->npolys + 1, sizeof *fill);
    if (!fill)
        return NAV_E_NOMEM;
    for (uint32_t u = g->ncorners; u < g->nnodes; u++)
        if (g->wpoly[u] != NAV_NONE)
            g->wpts[g->wpts_start[g->wpoly[u]] + fill[g->wpoly[u]]++] = u;
    free(fill);
    return NAV_OK;
}

nav_status nav_corner_merge(const nav_mesh *m, nav_cgraph *g) {
    nav_mesh *w = calloc(1, sizeof *w);
    g->wm = w;
    g->wof = malloc(((size_t)m->npolys + 1) * sizeof *g->wof);
    if (!w || !g->wof)
        return NAV_E_NOMEM;
    w->nverts = m->nverts;
    w->verts = m->verts; /* borrowed: nav_corner_merge_free never frees it */
    g->mpolys = m->npolys;
    for (uint32_t p = 0; p < m->npolys; p++)
        g->wof[p] = NAV_NONE;
    uint32_t cap_p = 0, cap_v = 0, cap_s = 0, nv = 0;
    uint32_t *src = NULL;
    cm_loop l;
    for (uint32_t p = 0; p < m->npolys; p++) {
        if (g->wof[p] != NAV_NONE)
            continue;
        uint32_t id = w->npolys, s = m->poly_start[p], n = nav_poly_nverts(m, p);
        g->wof[p] = id;
        l.n = 0;
        l.area = m->poly_area[p];
        for (uint32_t k = 0; k < n && k < CM_MAX_VERTS; k++) {
            l.v[l.n] = m->poly_verts[s + k];
            l.src[l.n++] = s + k;
        }
        if (n > CM_MAX_VERTS)
            l.n = 0; /* kept whole below, never merged */
        for (int grown = l.n > 0; grown;) {
            grown = 0;
            for (uint32_t i = 0; i < l.n && !grown; i++) {
                uint32_t q = m->poly_nei[l.src[i]];
                if (q != NAV_NONE && g->wof[q] == NAV_NONE && cm_absorb(m, g->wof, id, &l, i, q)) {
                    g->wof[q] = id;
                    grown = 1;
                }
            }
        }
        uint32_t ln = l.n ? l.n : n;
        if (!cm_grow((void **)&w->poly_start, &cap_p, id + 2, sizeof *w->poly_start) ||
            !cm_grow((void **)&w->poly_verts, &cap_v, nv + ln, sizeof *w->poly_verts) ||
            !cm_grow((void **)&src, &cap_s, nv + ln, sizeof *src)) {
            free(src);
            return NAV_E_NOMEM;
        }
        w->poly_start[id] = nv;
        for (uint32_t k = 0; k < ln; k++) {
            w->poly_verts[nv + k] = l.n ? l.v[k] : m->poly_verts[s + k];
            src[nv + k] = l.n ? l.src[k] : s + k;
        }
        nv += ln;
        w->npolys++;
        w->poly_start[w->npolys] = nv;
    }
    if (!w->poly_start) { /* no polygons */
        w->poly_start = calloc(1, sizeof *w->poly_start);
        if (!w->poly_start)
            return NAV_E_NOMEM;
    }
    nav_status st = cm_finish(m, g, src);
    free(src);
    return st;
}

void nav_corner_merge_free(nav_cgraph *g) {
    if (g->wm) {
        free(g->wm->poly_start);
        free(g->wm->poly_verts);
        free(g->wm->poly_nei);
        free(g->wm->poly_twin);
        free(g->wm);
    }
    free(g->wof);
    free(g->wrep);
    free(g->wcorner_of);
    free(g->wpoly);
    free(g->wpts_start);
    free(g->wpts);
    g->wm = NULL;
    g->wof = g->wrep = g->wcorner_of = g->wpoly = g->wpts_start = g->wpts = NULL;
}

size_t nav_corner_merge_memory(const nav_cgraph *g) {
    if (!g->wm)
        return 0;
    size_t slots = g->wm->poly_start[g->wm->npolys];
    return sizeof *g->wm + slots * 4 * sizeof(uint32_t) +
           ((size_t)g->wm->npolys * 3 + g->nnodes + 2) * sizeof(uint32_t);
}

/* ---- stored form ---- */

void nav_corner_merge_save(const nav_cgraph *g, uint8_t *out, size_t *at) {
    nav_corner_put_u32(out, at, g->wm->npolys);
    nav_corner_put_u32(out, at, g->mpolys);
    for (uint32_t p = 0; p < g->mpolys; p++)
        nav_corner_put_u32(out, at, g->wof[p]);
}

/*
 * The loops from wof, checked. The merge's loop starts at its seed's
 * (first polygon's) vertex 0 and never repeats a vertex (an absorption
 * that would touch the piece elsewhere is refused), so it is the piece's
 * boundary edges (those whose neighbour is in another piece or none)
 * followed from that vertex, one edge leaving each vertex: tracing them
 * gives the merge's v and src exactly. Refused (0): a vertex leaving twice
 * or never, a trace that closes before using every boundary edge (a piece
 * in two parts, or with a hole), or a piece of several polygons that has
 * more than CM_MAX_VERTS vertices or fails the merge's own convexity test. A piece of
 * one polygon is that polygon, as the merge keeps it.
 */
static int cm_trace(const nav_mesh *m, nav_cgraph *g, const uint32_t *first, const uint32_t *order,
                    uint32_t *from, uint32_t *to, uint32_t *src) {
    nav_mesh *w = g->wm;
    uint32_t nv = 0;
    for (uint32_t wp = 0; wp < w->npolys; wp++) {
        uint32_t nb = 0;
        double area = 0;
        for (uint32_t i = first[wp]; i < first[wp + 1]; i++) {
            uint32_t p = order[i], a = m->poly_start[p], e = m->poly_start[p + 1];
            area += m->poly_area[p];
            for (uint32_t s = a; s < e; s++) {
                uint32_t q = m->poly_nei[s], v = m->poly_verts[s];
                if (q != NAV_NONE && g->wof[q] == wp)
                    continue;
                if (from[v] != NAV_NONE)
                    return 0;
                from[v] = s;
                to[v] = m->poly_verts[s + 1 < e ? s + 1 : a];
                nb++;
            }
        }
        uint32_t v0 = m->poly_verts[m->poly_start[order[first[wp]]]], v = v0, n = 0;
        w->poly_start[wp] = nv;
        do {
            if (from[v] == NAV_NONE || n == nb)
                return 0;
            src[nv + n] = from[v];
            w->poly_verts[nv + n++] = v;
            v = to[v];
        } while (v != v0);
        if (n != nb)
            return 0;
        for (uint32_t k = nv; k < nv + n; k++)
            from[w->poly_verts[k]] = NAV_NONE;
        if (first[wp + 1] - first[wp] > 1) {
            if (n > CM_MAX_VERTS)
                return 0;
            cm_loop l;
            l.n = n;
            l.area = area;
            memcpy(l.v, &w->poly_verts[nv], n * sizeof *l.v);
            memcpy(l.src, &src[nv], n * sizeof *l.src);
            if (!cm_convex(m, &l))
                return 0;
        }
        nv += n;
    }
    w->poly_start[w->npolys] = nv;
    return 1;
}

nav_status nav_corner_merge_load(const nav_mesh *m, nav_cgraph *g, const uint8_t *p, size_t len) {
    if (len % 4 != 0 || len < 8)
        return NAV_E_CORRUPT;
    uint32_t npieces = nav_corner_get_u32(p), mpolys = nav_corner_get_u32(p + 4);
    if (mpolys != m->npolys || npieces > mpolys || len / 4 != 2 + (size_t)mpolys)
        return NAV_E_CORRUPT;
    uint32_t oslots = m->poly_start[m->npolys];
    nav_mesh *w = calloc(1, sizeof *w);
    g->wm = w;
    g->mpolys = mpolys;
    g->wof = malloc(((size_t)mpolys + 1) * sizeof *g->wof);
    uint32_t *first = calloc((size_t)npieces + 2, sizeof *first);
    uint32_t *order = malloc(((size_t)mpolys + 1) * sizeof *order);
    uint32_t *from = malloc(((size_t)m->nverts + 1) * sizeof *from);
    uint32_t *to = malloc(((size_t)m->nverts + 1) * sizeof *to);
    uint32_t *src = malloc(((size_t)oslots + 1) * sizeof *src);
    nav_status st = NAV_OK;
    if (!w || !g->wof || !first || !order || !from || !to || !src)
        st = NAV_E_NOMEM;
    if (st == NAV_OK) {
        w->nverts = m->nverts;
        w->verts = m->verts;
        w->npolys = npieces;
        w->poly_start = malloc(((size_t)npieces + 1) * sizeof *w->poly_start);
        w->poly_verts = malloc(((size_t)oslots + 1) * sizeof *w->poly_verts);
        if (!w->poly_start || !w->poly_verts)
            st = NAV_E_NOMEM;
    }
    /* pieces numbered by their first polygon, as the merge numbers them */
    for (uint32_t q = 0, next = 0; st == NAV_OK && q < mpolys; q++) {
        uint32_t id = nav_corner_get_u32(p + 8 + 4 * (size_t)q);
        if (id > next || id >= npieces)
            st = NAV_E_CORRUPT;
        else {
            next += id == next;
            g->wof[q] = id;
            first[id + 2]++;
        }
        if (q + 1 == mpolys && next != npieces)
            st = NAV_E_CORRUPT;
    }
    if (st == NAV_OK) { /* members of each piece, ascending: counting sort */
        for (uint32_t wp = 0; wp < npieces; wp++)
            first[wp + 2] += first[wp + 1];
        for (uint32_t q = 0; q < mpolys; q++)
            order[first[g->wof[q] + 1]++] = q;
        for (uint32_t v = 0; v < m->nverts; v++)
            from[v] = NAV_NONE;
        if (!cm_trace(m, g, first, order, from, to, src))
            st = NAV_E_CORRUPT;
    }
    free(first);
    free(order);
    free(from);
    free(to);
    if (st == NAV_OK)
        st = cm_finish(m, g, src);
    free(src);
    if (st != NAV_OK)
        nav_corner_merge_free(g);
    return st;
}
