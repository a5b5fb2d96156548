/*
 * nav_bake_assemble.c: the tiles' polygons and detail triangles of one
 * profile become one nav_mesh_input, then a nav_mesh.
 *
 * Vertices are in the bake's global grid, so the same point has the same
 * integers in every tile; they are welded across tiles like within one
 * (same x, z; heights within two cells). A polygon edge lying on a tile
 * line gets, in order, every vertex of the other side that lies strictly
 * inside it at about its height (within ytol cells): the edge is then split
 * exactly where the neighbour's edges end, so both sides share vertices and
 * nav_mesh_build finds the adjacency (collinear vertices are allowed).
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"
#include "nav/nav_mesh_internal.h"

typedef struct nb_weld {
    int *v; /* 3 per vertex */
    uint32_t n, cap;
    uint32_t *head, *next;
    uint32_t size;
} nb_weld;

static uint32_t nb_weld_add(nb_weld *w, const int *p) {
    uint32_t h = ((uint32_t)p[0] * 0x8da6b343u + (uint32_t)p[2] * 0xd8163841u) & (w->size - 1);
    for (uint32_t i = w->head[h]; i != NB_NONE; i = w->next[i]) {
        const int *q = &w->v[i * 3];
        if (q[0] == p[0] && q[2] == p[2] && q[1] - p[1] <= 2 && p[1] - q[1] <= 2)
            return i;
    }
    uint32_t i = w->n++;
    memcpy(&w->v[i * 3], p, 3 * sizeof(int));
    w->next[i] = w->head[h];
    w->head[h] = i;
    return i;
}

/* Vertices on tile lines, sorted by (line, position along it). */
typedef struct nb_linev {
    int line, pos;
    uint32_t v;
} nb_linev;

static int nb_cmp_linev(const void *a, const void *b) {
    const nb_linev *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

typedef struct nb_out_polys {
    uint32_t *start, *verts;
    uint32_t np, nverts, cap;
} nb_out_polys;

static bool nb_op_push(nb_out_polys *o, uint32_t v) {
    if (o->nverts == o->cap) {
        uint32_t cap = o->cap ? o->cap * 2 : 4096;
        uint32_t *nv = realloc(o->verts, (size_t)cap * sizeof *nv);
        if (!nv)
            return false;
        o->verts = nv;
        o->cap = cap;
    }
    o->verts[o->nverts++] = v;
    return true;
}

/* Appends to o the vertices of lines[] strictly inside edge a -> b. */
static bool nb_split_edge(const nb_weld *w, const nb_linev *lines, size_t nlines, int axis,
                          uint32_t a, uint32_t b, int ytol, nb_out_polys *o) {
    const int *pa = &w->v[a * 3], *pb = &w->v[b * 3];
    int line = pa[axis], oa = pa[2 - axis], ob = pb[2 - axis];
    int lo = oa < ob ? oa : ob, hi = oa < ob ? ob : oa;
    /* first entry with (line, > lo) */
    size_t l = 0, r = nlines;
    while (l < r) {
        size_t m = (l + r) / 2;
        if (lines[m].line < line || (lines[m].line == line && lines[m].pos <= lo))
            l = m + 1;
        else
            r = m;
    }
    size_t first = l, last = l;
    while (last < nlines && lines[last].line == line && lines[last].pos < hi)
        last++;
    if (first == last)
        return true;
    for (size_t k = 0; k < last - first; k++) {
        size_t i = oa < ob ? first + k : last - 1 - k;
        const int *pv = &w->v[lines[i].v * 3];
        double t = (double)(lines[i].pos - oa) / (double)(ob - oa);
        double y = pa[1] + t * (pb[1] - pa[1]);
        if (pv[1] - y > ytol || y - pv[1] > ytol)
            continue;
        if (!nb_op_push(o, lines[i].v))
            return false;
    }
    return true;
}

typedef struct nb_asm {
    nb_weld w;
    nb_linev *lines[2]; /* [0]: vertices on x lines (axis 0), [1]: on z lines */
    size_t nlines[2];
    uint32_t **vmap; /* per tile: pmesh vertex -> welded id */
    nb_out_polys op;
    uint8_t *areas;
    float *dverts;
    uint32_t *dtris, *dpoly;
    float *verts;
} nb_asm;

static void nb_asm_free(nb_asm *a, int ntiles) {
    free(a->w.v);
    free(a->w.head);
    free(a->w.next);
    free(a->lines[0]);
    free(a->lines[1]);
    if (a->vmap)
        for (int t = 0; t < ntiles; t++)
            free(a->vmap[t]);
    free(a->vmap);
    free(a->op.start);
    free(a->op.verts);
    free(a->areas);
    free(a->dverts);
    free(a->dtris);
    free(a->dpoly);
    free(a->verts);
}

static nav_status nb_asm_weld(nb_asm *a, const nb_out *out, uint32_t stride, uint32_t p, int ntiles,
                              const nb_grid *g) {
    uint32_t total = 0;
    for (int t = 0; t < ntiles; t++)
        total += (uint32_t)out[(size_t)t * stride + p].pm.nv;
    a->w.size = 1024;
    while (a->w.size < total * 2u && a->w.size < (1u << 26))
        a->w.size *= 2;
    a->w.v = malloc(((size_t)total + 1) * 3 * sizeof(int));
    a->w.next = malloc(((size_t)total + 1) * sizeof(uint32_t));
    a->w.head = malloc((size_t)a->w.size * sizeof(uint32_t));
    a->vmap = calloc((size_t)ntiles, sizeof *a->vmap);
    if (!a->w.v || !a->w.next || !a->w.head || !a->vmap)
        return NAV_E_NOMEM;
    memset(a->w.head, 0xff, (size_t)a->w.size * sizeof(uint32_t));
    for (int t = 0; t < ntiles; t++) {
        const nb_pmesh *pm = &out[(size_t)t * stride + p].pm;
        a->vmap[t] = malloc(((size_t)pm->nv + 1) * sizeof(uint32_t));
        if (!a->vmap[t])
            return NAV_E_NOMEM;
        for (int i = 0; i < pm->nv; i++)
            a->vmap[t][i] = nb_weld_add(&a->w, &pm->v[i * 3]);
    }
    if (!g->ts)
        return NAV_OK;
    for (int ax = 0; ax < 2; ax++) {
        a->lines[ax] = malloc(((size_t)a->w.n + 1) * sizeof(nb_linev));
        if (!a->lines[ax])
            return NAV_E_NOMEM;
        size_t n = 0;
        int c = ax ? 2 : 0;
        for (uint32_t i = 0; i < a->w.n; i++) {
            const int *v = &a->w.v[i * 3];
            if (v[c] % g->ts == 0)
                a->lines[ax][n++] = (nb_linev){v[c], v[2 - c], i};
        }
        qsort(a->lines[ax], n, sizeof(nb_linev), nb_cmp_linev);
        a->nlines[ax] = n;
    }
    return NAV_OK;
}

static nav_status nb_asm_polys(nb_asm *a, const nb_out *out, uint32_t stride, uint32_t p,
                               int ntiles, const nb_grid *g) {
    uint32_t np = 0;
    for (int t = 0; t < ntiles; t++)
        np += (uint32_t)out[(size_t)t * stride + p].pm.np;
    a->op.start = malloc(((size_t)np + 1) * sizeof(uint32_t));
    a->areas = malloc((size_t)np + 1);
    if (!a->op.start || !a->areas)
        return NAV_E_NOMEM;
    for (int t = 0; t < ntiles; t++) {
        const nb_pmesh *pm = &out[(size_t)t * stride + p].pm;
        for (int i = 0; i < pm->np; i++) {
            const uint32_t *poly = &pm->p[(size_t)i * pm->nvp];
            int n = 0;
            while (n < pm->nvp && poly[n] != NB_NONE)
                n++;
            a->op.start[a->op.np] = a->op.nverts;
            a->areas[a->op.np] = pm->area[i];
            a->op.np++;
            for (int k = 0; k < n; k++) {
                uint32_t va = a->vmap[t][poly[k]], vb = a->vmap[t][poly[(k + 1) % n]];
                if (!nb_op_push(&a->op, va))
                    return NAV_E_NOMEM;
                if (!g->ts)
                    continue;
                const int *pa = &a->w.v[va * 3], *pb = &a->w.v[vb * 3];
                for (int ax = 0; ax < 2; ax++) {
                    int c = ax ? 2 : 0;
                    if (pa[c] == pb[c] && pa[c] % g->ts == 0 &&
                        !nb_split_edge(&a->w, a->lines[ax], a->nlines[ax], c, va, vb, g->ytol,
                                       &a->op))
                        return NAV_E_NOMEM;
                }
            }
        }
    }
    a->op.start[a->op.np] = a->op.nverts;
    return NAV_OK;
}

/*
 * A safety net for the rare simplified contour that folds over itself
 * (two walls closer than the simplification error): polygons cut from it
 * can overlap. Overlapping polygons share a directed edge, which a valid
 * mesh never has; the later such polygon is dropped (its detail triangles
 * go with it). Returns how many were dropped.
 */
static nav_status nb_asm_drop_overlaps(nb_asm *a, uint8_t *keep, uint32_t *dropped) {
    uint32_t ne = a->op.nverts, size = 1024;
    while (size < ne * 2u)
        size *= 2;
    uint64_t *tab = malloc((size_t)size * sizeof *tab);
    if (!tab)
        return NAV_E_NOMEM;
    memset(tab, 0xff, (size_t)size * sizeof *tab);
    *dropped = 0;
    for (uint32_t q = 0; q < a->op.np; q++) {
        uint32_t s0 = a->op.start[q], n = a->op.start[q + 1] - s0;
        bool clash = false;
        for (uint32_t k = 0; k < n && !clash; k++) {
            uint64_t key = (uint64_t)a->op.verts[s0 + k] << 32 | a->op.verts[s0 + (k + 1) % n];
            for (uint32_t h = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & (size - 1);
                 tab[h] != UINT64_MAX; h = (h + 1) & (size - 1))
                if (tab[h] == key) {
                    clash = true;
                    break;
                }
        }
        keep[q] = !clash;
        if (clash) {
            (*dropped)++;
            continue;
        }
        for (uint32_t k = 0; k < n; k++) {
            uint64_t key = (uint64_t)a->op.verts[s0 + k] << 32 | a->op.verts[s0 + (k + 1) % n];
            uint32_t h = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & (size - 1);
            while (tab[h] != UINT64_MAX && tab[h] != key)
                h = (h + 1) & (size - 1);
            tab[h] = key;
        }
    }
    free(tab);
    return NAV_OK;
}

static uint32_t nb_uf_find(uint32_t *uf, uint32_t x) {
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/*
 * Tiled bakes only: a tile keeps a region too small to matter when it
 * touches the tile's border (its other part might be large), so after
 * stitching, connected groups of polygons smaller than the island limit
 * are dropped, as the single-tile bake drops them by region.
 */
static nav_status nb_asm_drop_islands(nb_asm *a, const nb_grid *g, uint8_t *keep,
                                      uint32_t *dropped) {
    uint32_t np = a->op.np, ne = a->op.nverts, size = 1024;
    while (size < ne * 2u)
        size *= 2;
    uint64_t *key = malloc((size_t)size * sizeof *key);
    uint32_t *owner = malloc((size_t)size * sizeof *owner);
    uint32_t *uf = malloc(((size_t)np + 1) * sizeof *uf);
    double *area = calloc((size_t)np + 1, sizeof *area);
    if (!key || !owner || !uf || !area) {
        free(key);
        free(owner);
        free(uf);
        free(area);
        return NAV_E_NOMEM;
    }
    memset(key, 0xff, (size_t)size * sizeof *key);
    for (uint32_t q = 0; q < np; q++) {
        uf[q] = q;
        if (!keep[q])
            continue;
        uint32_t s0 = a->op.start[q], n = a->op.start[q + 1] - s0;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t kk = (uint64_t)a->op.verts[s0 + k] << 32 | a->op.verts[s0 + (k + 1) % n];
            uint32_t h = (uint32_t)(kk * 0x9e3779b97f4a7c15ull >> 40) & (size - 1);
            while (key[h] != UINT64_MAX && key[h] != kk)
                h = (h + 1) & (size - 1);
            key[h] = kk;
            owner[h] = q;
        }
    }
    for (uint32_t q = 0; q < np; q++) {
        if (!keep[q])
            continue;
        uint32_t s0 = a->op.start[q], n = a->op.start[q + 1] - s0;
        double ar = 0;
        for (uint32_t k = 0; k < n; k++) {
            const int *p0 = &a->w.v[a->op.verts[s0 + k] * 3];
            const int *p1 = &a->w.v[a->op.verts[s0 + (k + 1) % n] * 3];
            ar += (double)p0[0] * p1[2] - (double)p1[0] * p0[2];
            uint64_t kk = (uint64_t)a->op.verts[s0 + (k + 1) % n] << 32 | a->op.verts[s0 + k];
            for (uint32_t h = (uint32_t)(kk * 0x9e3779b97f4a7c15ull >> 40) & (size - 1);
                 key[h] != UINT64_MAX; h = (h + 1) & (size - 1))
                if (key[h] == kk) {
                    uint32_t x = nb_uf_find(uf, q), y = nb_uf_find(uf, owner[h]);
                    if (x != y)
                        uf[x < y ? y : x] = x < y ? x : y;
                    break;
                }
        }
        area[q] = ar * 0.5 * g->cs * g->cs;
    }
    double *total = calloc((size_t)np + 1, sizeof *total);
    if (!total) {
        free(key);
        free(owner);
        free(uf);
        free(area);
        return NAV_E_NOMEM;
    }
    for (uint32_t q = 0; q < np; q++)
        if (keep[q])
            total[nb_uf_find(uf, q)] += area[q] < 0 ? -area[q] : area[q];
    for (uint32_t q = 0; q < np; q++)
        if (keep[q] && total[nb_uf_find(uf, q)] < g->min_island) {
            keep[q] = 0;
            (*dropped)++;
        }
    free(total);
    free(key);
    free(owner);
    free(uf);
    free(area);
    return NAV_OK;
}

/* Removes the polygons keep[] rejects (and their detail ranges). */
static void nb_asm_compact(nb_asm *a, const uint8_t *keep) {
    uint32_t np = 0, nv = 0;
    for (uint32_t q = 0; q < a->op.np; q++) {
        uint32_t s0 = a->op.start[q], n = a->op.start[q + 1] - s0;
        if (!keep[q])
            continue;
        memmove(&a->op.verts[nv], &a->op.verts[s0], n * sizeof(uint32_t));
        a->op.start[np] = nv;
        a->areas[np] = a->areas[q];
        a->dpoly[2 * np] = a->dpoly[2 * q];
        a->dpoly[2 * np + 1] = a->dpoly[2 * q + 1];
        nv += n;
        np++;
    }
    a->op.start[np] = nv;
    a->op.np = np;
    a->op.nverts = nv;
}

static nav_status nb_asm_detail(nb_asm *a, const nb_out *out, uint32_t stride, uint32_t p,
                                int ntiles) {
    uint32_t nv = 0, nt = 0;
    for (int t = 0; t < ntiles; t++) {
        nv += out[(size_t)t * stride + p].dm.nv;
        nt += out[(size_t)t * stride + p].dm.nt;
    }
    a->dverts = malloc(((size_t)nv + 1) * 3 * sizeof(float));
    a->dtris = malloc(((size_t)nt + 1) * 3 * sizeof(uint32_t));
    a->dpoly = malloc(((size_t)a->op.np + 1) * 2 * sizeof(uint32_t));
    if (!a->dverts || !a->dtris || !a->dpoly)
        return NAV_E_NOMEM;
    uint32_t vo = 0, to = 0, po = 0;
    for (int t = 0; t < ntiles; t++) {
        const nb_out *o = &out[(size_t)t * stride + p];
        if (o->dm.nv)
            memcpy(&a->dverts[(size_t)vo * 3], o->dm.v, (size_t)o->dm.nv * 3 * sizeof(float));
        for (uint32_t k = 0; k < o->dm.nt * 3; k++) {
            uint32_t i = o->dm.t[k];
            a->dtris[(size_t)to * 3 + k] =
                i >= NB_DLOCAL ? a->w.n + vo + (i - NB_DLOCAL) : a->vmap[t][i];
        }
        for (int i = 0; i < o->pm.np; i++) {
            a->dpoly[2 * (size_t)(po + i)] = to + o->dm.ptris[2 * i];
            a->dpoly[2 * (size_t)(po + i) + 1] = o->dm.ptris[2 * i + 1];
        }
        vo += o->dm.nv;
        to += o->dm.nt;
        po += (uint32_t)o->pm.np;
    }
    return NAV_OK;
}

nav_status nb_assemble(const nb_out *out, uint32_t stride, uint32_t p, const nb_grid *g,
                       const nav_link_input *links, uint32_t nlinks, nav_mesh **mesh,
                       uint32_t *npolys, nav_error *err) {
    int ntiles = g->ntx * g->ntz;
    nb_asm a;
    memset(&a, 0, sizeof a);
    *mesh = NULL;
    nav_status st = nb_asm_weld(&a, out, stride, p, ntiles, g);
    if (st == NAV_OK)
        st = nb_asm_polys(&a, out, stride, p, ntiles, g);
    if (st == NAV_OK)
        st = nb_asm_detail(&a, out, stride, p, ntiles);
    if (st != NAV_OK) {
        nb_asm_free(&a, ntiles);
        return nav_bake_fail(err, st, "out of memory");
    }
    uint8_t *keep = malloc((size_t)a.op.np + 1);
    uint32_t dropped = 0;
    st = keep ? nb_asm_drop_overlaps(&a, keep, &dropped) : NAV_E_NOMEM;
    if (st == NAV_OK && g->ts && g->min_island > 0)
        st = nb_asm_drop_islands(&a, g, keep, &dropped);
    if (st != NAV_OK) {
        free(keep);
        nb_asm_free(&a, ntiles);
        return nav_bake_fail(err, st, "out of memory");
    }
    if (dropped)
        nb_asm_compact(&a, keep);
    free(keep);
    *npolys = a.op.np;
    if (a.op.np == 0) {
        nb_asm_free(&a, ntiles);
        return NAV_E_EMPTY;
    }
    a.verts = malloc(((size_t)a.w.n + 1) * 3 * sizeof(float));
    if (!a.verts) {
        nb_asm_free(&a, ntiles);
        return nav_bake_fail(err, NAV_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < a.w.n; i++)
        nb_world(g->bmin, g->cs, g->ch, &a.w.v[i * 3], &a.verts[i * 3]);
    uint32_t ndv = 0, ndt = 0;
    for (int t = 0; t < ntiles; t++) {
        ndv += out[(size_t)t * stride + p].dm.nv;
        ndt += out[(size_t)t * stride + p].dm.nt;
    }
    nav_mesh_input in = {
        .verts = a.verts,
        .nverts = a.w.n,
        .poly_start = a.op.start,
        .poly_verts = a.op.verts,
        .npolys = a.op.np,
        .areas = a.areas,
        .links = links,
        .nlinks = nlinks,
        .detail_verts = a.dverts,
        .ndetail_verts = ndv,
        .detail_tris = a.dtris,
        .ndetail_tris = ndt,
        .detail_poly_tris = a.dpoly,
    };
    nav_error e = {0};
    st = nav_mesh_build_ex(&in, NULL, (int)g->threads, mesh, &e);
    if (st != NAV_OK)
        nav_bake_fail(err, st, "the baked mesh was refused: %s", e.message);
    nb_asm_free(&a, ntiles);
    return st;
}
