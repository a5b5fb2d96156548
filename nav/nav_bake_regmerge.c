/*
 * nav_bake_regmerge.c: what happens to regions after any partition:
 * - a group of connected regions smaller than min_area (cells) that touches
 *   no tile border is an island too small to matter (a table top, a ledge
 *   sliver) and is dropped;
 * - a region smaller than merge_area, or one that touches no wall (an
 *   enclosed region makes a needless ring of polygons), joins its smallest
 *   neighbour of the same area, as long as the two never share a column
 *   (one region must stay a single floor for its contour to be traceable);
 * - ids are then made dense (1..n-1) in the order of their first span, and
 *   tile-border spans keep their strip's id (with NB_BORDER_REG).
 * Also paints the tile border strips (nb_paint_border).
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

typedef struct nb_u16v {
    uint16_t *v;
    uint32_t n, cap;
} nb_u16v;

static bool nb_u16v_add_unique(nb_u16v *a, uint16_t x) {
    for (uint32_t i = 0; i < a->n; i++)
        if (a->v[i] == x)
            return true;
    if (a->n == a->cap) {
        uint32_t cap = a->cap ? a->cap * 2 : 8;
        uint16_t *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

static bool nb_u16v_has(const nb_u16v *a, uint16_t x) {
    for (uint32_t i = 0; i < a->n; i++)
        if (a->v[i] == x)
            return true;
    return false;
}

typedef struct nb_reginfo {
    uint32_t count;
    uint8_t area;
    bool wall;      /* has an edge to no region (a wall or a drop) */
    bool border;    /* next to a tile border region */
    bool self_over; /* has two floors in one column */
    bool gone;
    uint16_t into; /* merged into (or itself) */
    nb_u16v nei, floors;
} nb_reginfo;

void nb_paint_border(nb_work *wk, uint16_t *id) {
    const nb_chf *chf = wk->chf;
    int b = chf->border;
    if (b <= 0)
        return;
    const int w = chf->w, h = chf->h;
    /* four strips: -x, +x, -z, +z (corners belong to the x strips) */
    const int rect[4][4] = {{0, b, 0, h}, {w - b, w, 0, h}, {b, w - b, 0, b}, {b, w - b, h - b, h}};
    for (int r = 0; r < 4; r++) {
        uint16_t reg = (uint16_t)(*id | NB_BORDER_REG);
        (*id)++;
        for (int z = rect[r][2]; z < rect[r][3]; z++)
            for (int x = rect[r][0]; x < rect[r][1]; x++) {
                int c = x + z * w;
                for (uint32_t s = chf->first[c]; s < chf->first[c + 1]; s++)
                    if (wk->area[s] != NB_AREA_NULL)
                        wk->reg[s] = reg;
            }
    }
}

static nav_status nb_collect(nb_work *wk, nb_reginfo *ri) {
    const nb_chf *chf = wk->chf;
    uint16_t last_nei = 0, last_reg = 0;
    for (uint32_t s = 0; s < chf->nspans; s++) {
        uint16_t r = wk->reg[s];
        if (!r || (r & NB_BORDER_REG))
            continue;
        nb_reginfo *g = &ri[r];
        if (r != last_reg) {
            last_reg = r;
            last_nei = 0;
        }
        g->count++;
        g->area = wk->area[s];
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, s, dir);
            uint16_t o = a != NB_NONE ? wk->reg[a] : 0;
            if (!o)
                g->wall = true;
            else if (o & NB_BORDER_REG)
                g->border = true;
            else if (o != r && o != last_nei) {
                /* runs of the same neighbour are common: skip the scan */
                if (!nb_u16v_add_unique(&g->nei, o))
                    return NAV_E_NOMEM;
                last_nei = o;
            }
        }
    }
    /* regions sharing a column (floors is a set: only membership is read) */
    const int ncells = chf->w * chf->h;
    for (int c = 0; c < ncells; c++) {
        if (chf->first[c + 1] - chf->first[c] < 2)
            continue;
        for (uint32_t s = chf->first[c]; s < chf->first[c + 1]; s++) {
            uint16_t r = wk->reg[s];
            if (!r || (r & NB_BORDER_REG))
                continue;
            nb_reginfo *g = &ri[r];
            for (uint32_t t = chf->first[c]; t < chf->first[c + 1]; t++) {
                uint16_t o = wk->reg[t];
                if (t == s || !o || (o & NB_BORDER_REG))
                    continue;
                if (o == r)
                    g->self_over = true;
                else if (!nb_u16v_add_unique(&g->floors, o))
                    return NAV_E_NOMEM;
            }
        }
    }
    for (uint32_t r = 0; r < wk->nregs; r++)
        ri[r].into = (uint16_t)r;
    return NAV_OK;
}

/* Drops connected groups of regions smaller than min_area. */
static nav_status nb_drop_islands(nb_reginfo *ri, uint16_t nregs, int min_area) {
    uint16_t *stack = malloc((size_t)nregs * sizeof *stack);
    uint16_t *group = malloc((size_t)nregs * sizeof *group);
    uint8_t *seen = calloc(nregs, 1);
    if (!stack || !group || !seen) {
        free(stack);
        free(group);
        free(seen);
        return NAV_E_NOMEM;
    }
    for (uint16_t r = 1; r < nregs; r++) {
        if (seen[r] || !ri[r].count)
            continue;
        uint32_t ns = 0, ng = 0;
        uint64_t total = 0;
        bool border = false;
        stack[ns++] = r;
        seen[r] = 1;
        while (ns) {
            uint16_t a = stack[--ns];
            group[ng++] = a;
            total += ri[a].count;
            border |= ri[a].border;
            for (uint32_t k = 0; k < ri[a].nei.n; k++) {
                uint16_t b = ri[a].nei.v[k];
                if (!seen[b] && ri[b].count) {
                    seen[b] = 1;
                    stack[ns++] = b;
                }
            }
        }
        if (total < (uint64_t)min_area && !border)
            for (uint32_t k = 0; k < ng; k++)
                ri[group[k]].gone = true;
    }
    free(stack);
    free(group);
    free(seen);
    return NAV_OK;
}

static bool nb_can_merge(const nb_reginfo *a, uint16_t ia, const nb_reginfo *b, uint16_t ib) {
    return a->area == b->area && !nb_u16v_has(&a->floors, ib) && !nb_u16v_has(&b->floors, ia);
}

/* Moves region r into m: counts, neighbours, floors; others' lists rename. */
static nav_status nb_merge_into(nb_reginfo *ri, uint16_t r, uint16_t m) {
    nb_reginfo *a = &ri[r], *b = &ri[m];
    for (uint32_t k = 0; k < a->nei.n; k++) {
        uint16_t o = a->nei.v[k];
        if (o != m && !nb_u16v_add_unique(&b->nei, o))
            return NAV_E_NOMEM;
        nb_reginfo *g = &ri[o];
        for (uint32_t j = 0; j < g->nei.n; j++)
            if (g->nei.v[j] == r)
                g->nei.v[j] = m;
        /* a neighbour may now list m twice */
        for (uint32_t j = 0; j < g->nei.n; j++)
            for (uint32_t i = j + 1; i < g->nei.n; i++)
                if (g->nei.v[i] == g->nei.v[j] || g->nei.v[i] == o)
                    g->nei.v[i--] = g->nei.v[--g->nei.n];
    }
    for (uint32_t k = 0; k < b->nei.n; k++)
        if (b->nei.v[k] == r || b->nei.v[k] == m)
            b->nei.v[k--] = b->nei.v[--b->nei.n];
    for (uint32_t k = 0; k < a->floors.n; k++) {
        uint16_t o = a->floors.v[k];
        if (!nb_u16v_add_unique(&b->floors, o))
            return NAV_E_NOMEM;
        nb_reginfo *g = &ri[o];
        for (uint32_t j = 0; j < g->floors.n; j++)
            if (g->floors.v[j] == r)
                g->floors.v[j] = m;
        if (!nb_u16v_add_unique(&g->floors, m))
            return NAV_E_NOMEM;
    }
    b->count += a->count;
    b->wall |= a->wall;
    b->border |= a->border;
    a->count = 0;
    a->nei.n = 0;
    a->gone = true;
    a->into = m;
    return NAV_OK;
}

static nav_status nb_merge_small(nb_reginfo *ri, uint16_t nregs, int merge_area) {
    for (bool changed = true; changed;) {
        changed = false;
        for (uint16_t r = 1; r < nregs; r++) {
            nb_reginfo *a = &ri[r];
            if (a->gone || !a->count || a->self_over)
                continue;
            if (a->count > (uint32_t)merge_area && a->wall)
                continue;
            uint16_t best = 0;
            uint32_t best_n = UINT32_MAX;
            for (uint32_t k = 0; k < a->nei.n; k++) {
                uint16_t o = a->nei.v[k];
                nb_reginfo *b = &ri[o];
                if (b->gone || b->self_over || !nb_can_merge(a, r, b, o))
                    continue;
                if (b->count < best_n || (b->count == best_n && o < best)) {
                    best = o;
                    best_n = b->count;
                }
            }
            if (!best)
                continue;
            nav_status st = nb_merge_into(ri, r, best);
            if (st != NAV_OK)
                return st;
            changed = true;
        }
    }
    return NAV_OK;
}

static uint16_t nb_final(const nb_reginfo *ri, uint16_t r) {
    while (ri[r].into != r)
        r = ri[r].into;
    return r;
}

nav_status nb_regions_merge(nb_work *wk, int min_area, int merge_area, uint16_t *nregs_out) {
    uint16_t nregs = wk->nregs;
    nb_reginfo *ri = calloc(nregs + 1u, sizeof *ri);
    uint16_t *remap = calloc(nregs + 1u, sizeof *remap);
    nav_status st = NAV_E_NOMEM;
    if (!ri || !remap)
        goto out;
    st = nb_collect(wk, ri);
    if (st == NAV_OK)
        st = nb_drop_islands(ri, nregs, min_area);
    if (st == NAV_OK) {
        /* dropped islands must not absorb or be absorbed */
        for (uint16_t r = 1; r < nregs; r++)
            if (ri[r].gone)
                ri[r].count = 0;
        st = nb_merge_small(ri, nregs, merge_area);
    }
    if (st != NAV_OK)
        goto out;
    /* where each region ended up, once (not per span) */
    for (uint16_t r = 1; r < nregs; r++)
        ri[r].into = nb_final(ri, r);
    /* dense ids in scan order of the spans */
    const nb_chf *chf = wk->chf;
    uint16_t next = 1;
    uint16_t last = 0, last_to = 0; /* spans come in runs of one region */
    for (uint32_t s = 0; s < chf->nspans; s++) {
        uint16_t r = wk->reg[s];
        if (!r)
            continue;
        if (r & NB_BORDER_REG)
            continue; /* each strip keeps its own id: a contour turning the
                         tile's corner must see the region change there */
        if (r == last) {
            wk->reg[s] = last_to;
            continue;
        }
        uint16_t f = ri[r].into;
        last = r;
        if (!ri[f].count) {
            last_to = 0;
            wk->reg[s] = 0;
            continue;
        }
        if (!remap[f])
            remap[f] = next++;
        last_to = remap[f];
        wk->reg[s] = remap[f];
    }
    *nregs_out = next;
out:
    if (ri)
        for (uint32_t r = 0; r <= nregs; r++) {
            free(ri[r].nei.v);
            free(ri[r].floors.v);
        }
    free(ri);
    free(remap);
    return st;
}
