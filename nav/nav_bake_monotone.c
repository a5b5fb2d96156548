/*
 * nav_bake_monotone.c: the fast partition. Rows are swept in +x: a run of
 * connected spans ("sweep") continues the region of its left neighbour;
 * at the end of a row a sweep whose spans all touch one region of the
 * previous row, and that region touches no other sweep of this row, takes
 * that region's id, else it starts a new region. One pass, no distance
 * field, so it is the cheapest partition; regions come out as long
 * x-monotone strips, which cost more and thinner polygons than the
 * watershed's round regions.
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

typedef struct nb_sweep {
    uint16_t id, nei; /* nei: the one region below, 0xffff when several */
    uint32_t ns;      /* spans of this sweep that touch nei */
} nb_sweep;

nav_status nb_regions_monotone(nb_work *wk, int min_area, int merge_area, nb_ctx *ctx) {
    const nb_chf *chf = wk->chf;
    const int w = chf->w, h = chf->h;
    memset(wk->reg, 0, ((size_t)chf->nspans + 1) * sizeof *wk->reg);
    uint16_t id = 1;
    nb_paint_border(wk, &id);
    uint32_t maxrow = 0;
    for (int z = 0; z < h; z++) {
        uint32_t n = chf->first[(z + 1) * w] - chf->first[z * w];
        maxrow = n > maxrow ? n : maxrow;
    }
    nb_sweep *sw = malloc(((size_t)maxrow + 2) * sizeof *sw);
    uint32_t *prev = calloc(NB_BORDER_REG, sizeof *prev);
    if (!sw || !prev) {
        free(sw);
        free(prev);
        return NAV_E_NOMEM;
    }
    nav_status st = NAV_OK;
    for (int z = 0; z < h && st == NAV_OK; z++) {
        if ((z & 63) == 0 && nb_cancelled(ctx)) {
            st = NAV_E_CANCELLED;
            break;
        }
        uint32_t rid = 1;
        for (int x = 0; x < w; x++) {
            int c = x + z * w;
            for (uint32_t s = chf->first[c]; s < chf->first[c + 1]; s++) {
                if (wk->area[s] == NB_AREA_NULL || (wk->reg[s] & NB_BORDER_REG))
                    continue;
                uint32_t sid = 0;
                uint32_t a0 = nb_nei4(chf, s, 0);
                if (a0 != NB_NONE) {
                    uint32_t a = a0;
                    uint16_t r = wk->reg[a];
                    if (r && !(r & NB_BORDER_REG) && wk->area[a] == wk->area[s])
                        sid = r;
                }
                if (!sid) {
                    sid = rid++;
                    sw[sid] = (nb_sweep){0, 0, 0};
                }
                uint32_t a3 = nb_nei4(chf, s, 3);
                if (a3 != NB_NONE) {
                    uint32_t a = a3;
                    uint16_t r = wk->reg[a];
                    if (r && !(r & NB_BORDER_REG) && wk->area[a] == wk->area[s]) {
                        if (sw[sid].nei == 0 || sw[sid].nei == r) {
                            sw[sid].nei = r;
                            sw[sid].ns++;
                            prev[r]++;
                        } else {
                            sw[sid].nei = 0xffff;
                        }
                    }
                }
                wk->reg[s] = (uint16_t)sid;
            }
        }
        for (uint32_t i = 1; i < rid; i++) {
            uint16_t nei = sw[i].nei;
            if (nei != 0xffff && nei != 0 && prev[nei] == sw[i].ns) {
                sw[i].id = nei;
            } else {
                if (id >= NB_BORDER_REG - 1) {
                    st = NAV_E_LIMIT;
                    break;
                }
                sw[i].id = id++;
            }
        }
        for (uint32_t i = 1; i < rid; i++)
            if (sw[i].nei != 0xffff)
                prev[sw[i].nei] = 0;
        for (uint32_t s = chf->first[z * w]; s < chf->first[(z + 1) * w] && st == NAV_OK; s++) {
            uint16_t r = wk->reg[s];
            if (r && !(r & NB_BORDER_REG) && r < rid)
                wk->reg[s] = sw[r].id;
        }
    }
    free(sw);
    free(prev);
    if (st != NAV_OK)
        return st;
    wk->nregs = id;
    return nb_regions_merge(wk, min_area, merge_area, &wk->nregs);
}
