/*
 * nav_bake_region.c: the watershed partition of the walkable spans into
 * regions (the default; nav_bake_monotone.c has the fast one).
 *
 * Each span's distance to the nearest edge of the walkable area is computed
 * (chamfer 2/3, then a 3x3 box blur so ridges are not noisy). Regions then
 * grow from the "peaks" down, like water rising from the bottom of an
 * upside-down terrain: at each level (two distance units at a time, from
 * the largest distance down) the existing regions first grow a few steps
 * into the newly revealed spans, and spans still unclaimed seed new regions
 * by flood fill. The regions come out roughly round and convex, which is
 * what makes few, well-shaped polygons; the cost is the distance field and
 * the level sweep.
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

/* A list of spans. The neighbour table makes a span's cell unnecessary. */
typedef struct nb_stack {
    uint32_t *v;
    size_t n, cap;
} nb_stack;

/* Room for `more` entries past the end of st. */
static bool nb_reserve(nb_stack *st, size_t more) {
    if (st->n + more <= st->cap)
        return true;
    size_t cap = st->cap ? st->cap * 2 : 1024;
    while (cap < st->n + more)
        cap *= 2;
    uint32_t *v = realloc(st->v, cap * sizeof *v);
    if (!v)
        return false;
    st->v = v;
    st->cap = cap;
    return true;
}

static bool nb_push(nb_stack *st, uint32_t s) {
    if (!nb_reserve(st, 1))
        return false;
    st->v[st->n++] = s;
    return true;
}

/* Distance (2 per straight step, 3 per diagonal) to the nearest span that
   misses a neighbour or borders another area; returns the maximum. */
static uint16_t nb_distance_field(const nb_work *wk, uint16_t *d) {
    const nb_chf *chf = wk->chf;
    for (uint32_t s = 0; s < chf->nspans; s++) {
        /* unwalkable spans are seeds too: the walkable spans next to them
           are seeds already, so this changes no walkable span's distance
           (the only ones the sweep reads) and spares their sweeps */
        if (wk->area[s] == NB_AREA_NULL) {
            d[s] = 0;
            continue;
        }
        uint16_t v = 0xffff;
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, s, dir);
            if (a == NB_NONE || wk->area[a] != wk->area[s]) {
                v = 0;
                break;
            }
        }
        d[s] = v;
    }
    return nb_chamfer(chf, d);
}

/* 3x3 average of the distance field (missing neighbours count as the
   centre), leaving spans near the edge (<= 2) as they are. */
static void nb_blur(const nb_chf *chf, const uint16_t *src, uint16_t *dst) {
    for (uint32_t s = 0; s < chf->nspans; s++) {
        unsigned cd = src[s];
        if (cd <= 2) {
            dst[s] = (uint16_t)cd;
            continue;
        }
        unsigned sum = cd;
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, s, dir);
            if (a == NB_NONE) {
                sum += cd * 2;
                continue;
            }
            sum += src[a];
            uint32_t b = nb_nei4(chf, a, (dir + 1) & 3);
            sum += b != NB_NONE ? src[b] : cd;
        }
        dst[s] = (uint16_t)((sum + 5) / 9);
    }
}

typedef struct nb_ws {
    nb_work *wk;
    const uint16_t *dist;
    uint16_t *gdist; /* growth distance from the seed, to pick the nearest front */
    nb_stack flood;
} nb_ws;

/*
 * Floods a new region `r` from span s over spans of the same area with
 * distance >= lev that nobody owns, stopping at spans next to (8-connected)
 * another region so that regions never touch through a seed. Returns true
 * when at least one span was kept.
 */
static nav_status nb_flood(nb_ws *ws, uint32_t s, unsigned lev, uint16_t r, bool *kept) {
    nb_work *wk = ws->wk;
    const nb_chf *chf = wk->chf;
    uint8_t area = wk->area[s];
    ws->flood.n = 0;
    if (!nb_push(&ws->flood, s))
        return NAV_E_NOMEM;
    wk->reg[s] = r;
    ws->gdist[s] = 0;
    unsigned count = 0;
    while (ws->flood.n) {
        uint32_t c = ws->flood.v[--ws->flood.n];
        uint16_t other = 0;
        for (int dir = 0; dir < 4 && !other; dir++) {
            uint32_t a = nb_nei4(chf, c, dir);
            if (a == NB_NONE || wk->area[a] != area)
                continue;
            uint16_t nr = wk->reg[a];
            if (nr & NB_BORDER_REG)
                continue;
            if (nr && nr != r) {
                other = nr;
                break;
            }
            uint32_t b = nb_nei4(chf, a, (dir + 1) & 3);
            if (b != NB_NONE) {
                if (wk->area[b] == area) {
                    uint16_t nr2 = wk->reg[b];
                    if (nr2 && nr2 != r && !(nr2 & NB_BORDER_REG))
                        other = nr2;
                }
            }
        }
        if (other) {
            wk->reg[c] = 0;
            continue;
        }
        count++;
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, c, dir);
            if (a == NB_NONE || wk->area[a] != area || wk->reg[a] != 0 || ws->dist[a] < lev)
                continue;
            wk->reg[a] = r;
            ws->gdist[a] = 0;
            if (!nb_push(&ws->flood, a))
                return NAV_E_NOMEM;
        }
    }
    *kept = count > 0;
    return NAV_OK;
}

/* The region span c would join in the next ring (0: none) and its growth
   distance: the neighbour of c's area nearest its own seed. A claim still
   pending in this ring (NB_BORDER_REG set) does not count yet. */
static inline uint16_t nb_nearest(const nb_ws *ws, uint32_t c, uint16_t *dist_out) {
    const nb_work *wk = ws->wk;
    const nb_chf *chf = wk->chf;
    uint16_t r = 0;
    unsigned best = 0xffff;
    for (int dir = 0; dir < 4; dir++) {
        /* most neighbours of a candidate are unclaimed: test that first */
        uint32_t a = nb_nei4(chf, c, dir);
        if (a == NB_NONE)
            continue;
        uint16_t nr = wk->reg[a];
        if (!nr || (nr & NB_BORDER_REG) || wk->area[a] != wk->area[c])
            continue;
        if ((unsigned)ws->gdist[a] + 2 < best) {
            r = nr;
            best = ws->gdist[a] + 2u;
        }
    }
    *dist_out = (uint16_t)best;
    return r;
}

/*
 * Grows existing regions into the unclaimed spans of `cand`, one ring per
 * iteration (all claims of a ring made together so the result does not
 * depend on scan order), at most max_iter rings (0: until nothing changes).
 * A claim is made at once but hidden from the rest of its ring by the
 * border flag (a neighbour's border region is skipped; the growth distance
 * of an unclaimed span is never read). The unclaimed entries keep their
 * order at the front of cand; swapped behind them, the claimed ones are
 * where the ring's flags are cleared, so the growth needs no list of its
 * own.
 */
static void nb_expand(nb_ws *ws, nb_stack *cand, int max_iter) {
    nb_work *wk = ws->wk;
    uint32_t *v = cand->v;
    for (int iter = 0; max_iter == 0 || iter < max_iter; iter++) {
        size_t kept = 0, claimed = 0;
        for (size_t j = 0; j < cand->n; j++) {
            uint32_t c = v[j];
            if (wk->reg[c])
                continue; /* claimed by a flood since: clearing its flag is a no-op */
            uint16_t d;
            uint16_t r = nb_nearest(ws, c, &d);
            if (r) {
                wk->reg[c] = (uint16_t)(r | NB_BORDER_REG);
                ws->gdist[c] = d;
                claimed++;
            } else {
                v[j] = v[kept];
                v[kept++] = c;
            }
        }
        for (size_t j = kept; j < cand->n; j++)
            wk->reg[v[j]] &= (uint16_t)~NB_BORDER_REG;
        cand->n = kept;
        if (claimed == 0)
            break;
    }
}

/*
 * The level sweep. The unclaimed walkable spans are bucketed by level
 * (dist / 2), highest level first, each bucket in scan order; the
 * candidate list is a prefix of that same array: at each level the
 * bucket moves down next to the candidates left over from the levels
 * above (claimed ones drop out as the growth passes), so it needs no
 * memory of its own and keeps the order the floods seed in.
 */
static nav_status nb_watershed_sweep(nb_ws *ws, uint16_t maxd, uint16_t *next_id, nb_ctx *ctx) {
    nb_work *wk = ws->wk;
    const nb_chf *chf = wk->chf;
    unsigned nb = maxd / 2u + 2;
    uint32_t *bstart = calloc(nb + 1, sizeof *bstart);
    uint32_t *sorted = malloc((chf->nspans + 1) * sizeof *sorted);
    nav_status st = NAV_OK;
    if (!bstart || !sorted) {
        st = NAV_E_NOMEM;
        goto out;
    }
    /* bucket b goes to slot nb - 1 - b */
    for (uint32_t s = 0; s < chf->nspans; s++)
        if (wk->area[s] != NB_AREA_NULL && !wk->reg[s])
            bstart[nb - ws->dist[s] / 2u]++;
    for (unsigned k = 0; k < nb; k++)
        bstart[k + 1] += bstart[k];
    for (uint32_t s = 0; s < chf->nspans; s++)
        if (wk->area[s] != NB_AREA_NULL && !wk->reg[s])
            sorted[bstart[nb - 1 - ws->dist[s] / 2u]++] = s;
    /* bstart[k] is now the end of slot k, which starts at bstart[k - 1]
       (slot 0 at 0) */
    nb_stack cand = {.v = sorted, .n = 0, .cap = chf->nspans + 1};
    for (int b = (int)nb - 1; b >= 0; b--) {
        if (nb_cancelled(ctx)) {
            st = NAV_E_CANCELLED;
            goto out;
        }
        unsigned level = (unsigned)b * 2, k = nb - 1 - (unsigned)b;
        uint32_t from = k ? bstart[k - 1] : 0, to = bstart[k];
        if (to > from && from != cand.n)
            memmove(sorted + cand.n, sorted + from, (to - from) * sizeof *sorted);
        cand.n += to - from;
        nb_expand(ws, &cand, 8);
        for (size_t j = 0; j < cand.n; j++) {
            uint32_t c = cand.v[j];
            if (wk->reg[c])
                continue;
            bool kept = false;
            if (*next_id >= NB_BORDER_REG - 1) {
                st = NAV_E_LIMIT;
                goto out;
            }
            st = nb_flood(ws, c, level >= 2 ? level - 2 : 0, *next_id, &kept);
            if (st != NAV_OK)
                goto out;
            if (kept)
                (*next_id)++;
        }
    }
    /* whatever is left joins the nearest region, until nothing changes */
    nb_expand(ws, &cand, 0);
out:
    free(bstart);
    free(sorted);
    return st;
}

nav_status nb_regions_watershed(nb_work *wk, int min_area, int merge_area, nb_ctx *ctx) {
    const nb_chf *chf = wk->chf;
    size_t n = chf->nspans + 1;
    uint16_t *d0 = malloc(n * sizeof *d0), *d1 = malloc(n * sizeof *d1);
    nb_ws ws = {.wk = wk};
    nav_status st = NAV_OK;
    if (!d0 || !d1) {
        st = NAV_E_NOMEM;
        goto out;
    }
    memset(wk->reg, 0, n * sizeof *wk->reg);
    uint16_t id = 1;
    nb_paint_border(wk, &id);
    /* computed again, not derived from the shared edge distance: the
       shifted field (edist - erosion) makes measurably worse regions */
    uint16_t maxd = nb_distance_field(wk, d0);
    nb_blur(chf, d0, d1);
    ws.dist = d1;
    /* the raw field is not read again: its memory holds the growth
       distances, which are only read where a region has written them */
    ws.gdist = d0;
    st = nb_watershed_sweep(&ws, maxd, &id, ctx);
    if (st != NAV_OK)
        goto out;
    wk->nregs = id;
    st = nb_regions_merge(wk, min_area, merge_area, &wk->nregs);
out:
    free(d0);
    free(d1);
    free(ws.flood.v);
    return st;
}
