/*
 * nav_bake_compact.c: the compact (open space) heightfield and what is done
 * to its walkable areas before regions: area volumes and erosion.
 *
 * The compact heightfield keeps only the walkable spans' floors, as flat
 * arrays indexed by span (y, clearance, area), with each cell's spans
 * contiguous (first[]), and links every floor to the floors of its four
 * neighbour cells that an agent can step to (enough clearance where both
 * overlap, a height difference of at most `climb`) in a table of span
 * indices. It is built once
 * per (height, climb, slope) and shared read-only by every profile; each
 * profile erodes its own copy of the area array.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

void nb_chf_free(nb_chf *chf) {
    free(chf->first);
    free(chf->y);
    free(chf->hgt);
    free(chf->area);
    free(chf->edist);
    free(chf->nei);
    memset(chf, 0, sizeof *chf);
}

/*
 * Links every floor to the floor of each neighbour cell an agent can step
 * to (the lowest one with room for the agent where both overlap, within
 * `climb`), as span indices: the neighbour table every later sweep reads
 * (distance fields, blur, growth, contours) instead of decoding a
 * connection and the neighbour cell's first span each time. Reads only
 * the compact arrays, so the heightfield is freed before the table is
 * allocated; the clearances are not needed after it.
 */
nav_status nb_chf_link(nb_chf *chf, nb_ctx *ctx) {
    const int w = chf->w, h = chf->h;
    uint32_t *nei = malloc(((size_t)chf->nspans + 1) * 4 * sizeof *nei);
    if (!nei)
        return NAV_E_NOMEM;
    chf->nei = nei;
    for (int z = 0; z < h; z++) {
        if ((z & 15) == 15 && nb_cancelled(ctx))
            return NAV_E_CANCELLED;
        for (int x = 0; x < w; x++) {
            int c = x + z * w;
            for (uint32_t s = chf->first[c]; s < chf->first[c + 1]; s++) {
                int bot = chf->y[s], top = bot + chf->hgt[s];
                for (int d = 0; d < 4; d++) {
                    int nx = x + nb_dx[d], nz = z + nb_dz[d];
                    uint32_t link = NB_NONE;
                    if (nx >= 0 && nz >= 0 && nx < w && nz < h) {
                        int nc = nx + nz * w;
                        for (uint32_t n = chf->first[nc]; n < chf->first[nc + 1]; n++) {
                            int nbot = chf->y[n], ntop = nbot + chf->hgt[n];
                            int lo = bot > nbot ? bot : nbot, hi = top < ntop ? top : ntop;
                            int dy = nbot - bot;
                            if (hi - lo >= chf->walk_height && dy <= chf->walk_climb &&
                                dy >= -chf->walk_climb) {
                                /* deeper stacks stay unlinked (62 floors),
                                   as in Recast's 6-bit connections */
                                if (n - chf->first[nc] < NB_NOCON)
                                    link = n;
                                break;
                            }
                        }
                    }
                    nei[(size_t)s * 4 + (size_t)d] = link;
                }
            }
        }
    }
    free(chf->hgt);
    chf->hgt = NULL;
    return NAV_OK;
}

nav_status nb_chf_build(const nb_hf *hf, int height, int climb, int border, nb_chf *chf) {
    memset(chf, 0, sizeof *chf);
    chf->x0 = hf->x0;
    chf->z0 = hf->z0;
    chf->w = hf->w;
    chf->h = hf->h;
    chf->border = border;
    memcpy(chf->bmin, hf->bmin, sizeof chf->bmin);
    chf->cs = hf->cs;
    chf->ch = hf->ch;
    chf->walk_height = height;
    chf->walk_climb = climb;
    const nb_span *sp = hf->spans;
    size_t ncells = (size_t)hf->w * hf->h;
    uint32_t n = 0;
    for (size_t i = 0; i < ncells; i++)
        for (uint32_t s = hf->col[i]; s != NB_NONE; s = sp[s].next)
            n += sp[s].area != NB_AREA_NULL;
    chf->nspans = n;
    chf->first = malloc((ncells + 1) * sizeof *chf->first);
    chf->y = malloc((n + 1) * sizeof *chf->y);
    chf->hgt = malloc(n + 1);
    chf->area = malloc(n + 1);
    if (!chf->first || !chf->y || !chf->hgt || !chf->area) {
        nb_chf_free(chf);
        return NAV_E_NOMEM;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < ncells; i++) {
        chf->first[i] = k;
        for (uint32_t s = hf->col[i]; s != NB_NONE; s = sp[s].next) {
            if (sp[s].area == NB_AREA_NULL)
                continue;
            int bot = sp[s].smax;
            int top = sp[s].next != NB_NONE ? sp[sp[s].next].smin : NB_SPAN_MAX;
            int clr = top - bot;
            chf->y[k] = (uint16_t)bot;
            chf->hgt[k] = (uint8_t)(clr > 255 ? 255 : clr < 0 ? 0 : clr);
            chf->area[k] = sp[s].area;
            if (bot > chf->max_y)
                chf->max_y = bot;
            k++;
        }
    }
    chf->first[ncells] = k;
    return NAV_OK;
}

static bool nb_in_convex(const nav_bake_volume *v, float x, float z) {
    int sign = 0;
    for (uint32_t i = 0; i < v->nverts; i++) {
        const float *a = v->xz[i], *b = v->xz[(i + 1) % v->nverts];
        float cr = (b[0] - a[0]) * (z - a[1]) - (b[1] - a[1]) * (x - a[0]);
        int sg = cr > 0 ? 1 : cr < 0 ? -1 : 0;
        if (sg && sign && sg != sign)
            return false;
        if (sg)
            sign = sg;
    }
    return true;
}

void nb_mark_volumes(const nb_chf *chf, uint8_t *area, const nav_bake_volume *vols, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const nav_bake_volume *v = &vols[i];
        float mn[2] = {v->xz[0][0], v->xz[0][1]}, mx[2] = {mn[0], mn[1]};
        for (uint32_t k = 1; k < v->nverts; k++)
            for (int a = 0; a < 2; a++) {
                mn[a] = fminf(mn[a], v->xz[k][a]);
                mx[a] = fmaxf(mx[a], v->xz[k][a]);
            }
        int x0 = (int)floorf((mn[0] - chf->bmin[0]) / chf->cs) - chf->x0;
        int x1 = (int)floorf((mx[0] - chf->bmin[0]) / chf->cs) - chf->x0;
        int z0 = (int)floorf((mn[1] - chf->bmin[2]) / chf->cs) - chf->z0;
        int z1 = (int)floorf((mx[1] - chf->bmin[2]) / chf->cs) - chf->z0;
        x0 = x0 < 0 ? 0 : x0;
        z0 = z0 < 0 ? 0 : z0;
        x1 = x1 >= chf->w ? chf->w - 1 : x1;
        z1 = z1 >= chf->h ? chf->h - 1 : z1;
        for (int z = z0; z <= z1; z++)
            for (int x = x0; x <= x1; x++) {
                float cx = chf->bmin[0] + ((float)(chf->x0 + x) + 0.5f) * chf->cs;
                float cz = chf->bmin[2] + ((float)(chf->z0 + z) + 0.5f) * chf->cs;
                if (!nb_in_convex(v, cx, cz))
                    continue;
                int c = x + z * chf->w;
                for (uint32_t s = chf->first[c]; s < chf->first[c + 1]; s++) {
                    float y = chf->bmin[1] + (float)chf->y[s] * chf->ch;
                    if (area[s] != NB_AREA_NULL && y >= v->ymin && y <= v->ymax)
                        area[s] = v->area;
                }
            }
    }
}

/*
 * The two sweeps of a chamfer distance transform (2 per straight step, 3
 * per diagonal, a diagonal only through a connected straight neighbour) over
 * d, whose seeds are 0 and every other span 0xffff; returns the largest
 * distance. Shared by the erosion's edge distance and the watershed's
 * region distance, which differ only in their seeds.
 */
uint16_t nb_chamfer(const nb_chf *chf, uint16_t *d) {
    /* spans are stored cell by cell in scan order, so ascending span index
       is the forward sweep (x, then z) and descending the backward one */
    const uint32_t *nei = chf->nei;
    const uint32_t n = chf->nspans;
#define NB_RELAX(t, val)                                                                           \
    do {                                                                                           \
        unsigned v_ = (val);                                                                       \
        if (v_ < d[t])                                                                             \
            d[t] = (uint16_t)v_;                                                                   \
    } while (0)
    for (uint32_t s = 0; s < n; s++) {
        if (d[s] == 0)
            continue; /* a seed: nothing is nearer */
        const uint32_t *ns = &nei[(size_t)s * 4];
        if (ns[0] != NB_NONE) {
            uint32_t a = ns[0], b = nei[(size_t)a * 4 + 3];
            NB_RELAX(s, d[a] + 2u);
            if (b != NB_NONE)
                NB_RELAX(s, d[b] + 3u);
        }
        if (ns[3] != NB_NONE) {
            uint32_t a = ns[3], b = nei[(size_t)a * 4 + 2];
            NB_RELAX(s, d[a] + 2u);
            if (b != NB_NONE)
                NB_RELAX(s, d[b] + 3u);
        }
    }
    uint16_t maxd = 0;
    for (uint32_t s = n; s-- > 0;) {
        if (d[s] == 0)
            continue;
        const uint32_t *ns = &nei[(size_t)s * 4];
        if (ns[2] != NB_NONE) {
            uint32_t a = ns[2], b = nei[(size_t)a * 4 + 1];
            NB_RELAX(s, d[a] + 2u);
            if (b != NB_NONE)
                NB_RELAX(s, d[b] + 3u);
        }
        if (ns[1] != NB_NONE) {
            uint32_t a = ns[1], b = nei[(size_t)a * 4];
            NB_RELAX(s, d[a] + 2u);
            if (b != NB_NONE)
                NB_RELAX(s, d[b] + 3u);
        }
        if (d[s] > maxd)
            maxd = d[s];
    }
#undef NB_RELAX
    return maxd;
}

/*
 * The distance of every span from the edge of the walkable area: a chamfer
 * distance (nb_chamfer) from every span that is unwalkable or misses a
 * neighbour. It depends only on the
 * shared heightfield, so it is computed once per group of profiles and
 * each profile erodes by thresholding it.
 */
nav_status nb_edge_distance(nb_chf *chf) {
    uint16_t *dist = malloc((chf->nspans + 1) * sizeof *dist);
    if (!dist)
        return NAV_E_NOMEM;
    for (uint32_t s = 0; s < chf->nspans; s++) {
        uint16_t d = 0xffff;
        if (chf->area[s] == NB_AREA_NULL) {
            d = 0;
        } else {
            for (int dir = 0; dir < 4; dir++) {
                uint32_t a = nb_nei4(chf, s, dir);
                if (a == NB_NONE || chf->area[a] == NB_AREA_NULL) {
                    d = 0;
                    break;
                }
            }
        }
        dist[s] = d;
    }
    nb_chamfer(chf, dist);
    free(chf->edist);
    chf->edist = dist;
    return NAV_OK;
}

/* Spans nearer than the radius (cells) to the edge become unwalkable. */
void nb_erode(nb_work *wk, int radius) {
    const nb_chf *chf = wk->chf;
    int thr = radius * 2;
    for (uint32_t s = 0; s < chf->nspans; s++)
        wk->area[s] = chf->edist[s] < thr ? NB_AREA_NULL : chf->area[s];
}
