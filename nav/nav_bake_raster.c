/*
 * nav_bake_raster.c: triangles to a heightfield of solid spans.
 *
 * Owns the span pool (one flat array with a free list, grown by doubling,
 * so no allocation per span) and the rasterizer: each triangle is clipped
 * row by row, then cell by cell (each cut splits off one cell's piece and
 * keeps the rest, so a triangle costs one clip per cell it touches), and the
 * y range of each piece becomes a span merged into its column.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

nav_status nb_hf_init(nb_hf *hf, int x0, int z0, int w, int h, const float bmin[3], float cs,
                      float ch) {
    memset(hf, 0, sizeof *hf);
    hf->x0 = x0;
    hf->z0 = z0;
    hf->w = w;
    hf->h = h;
    memcpy(hf->bmin, bmin, sizeof hf->bmin);
    hf->cs = cs;
    hf->ch = ch;
    hf->free_head = NB_NONE;
    hf->col = malloc((size_t)w * h * sizeof *hf->col);
    if (!hf->col)
        return NAV_E_NOMEM;
    memset(hf->col, 0xff, (size_t)w * h * sizeof *hf->col);
    hf->cap = (uint32_t)((size_t)w * h / 2 + 1024);
    hf->spans = malloc(hf->cap * sizeof *hf->spans);
    if (!hf->spans) {
        free(hf->col);
        hf->col = NULL;
        return NAV_E_NOMEM;
    }
    return NAV_OK;
}

void nb_hf_free(nb_hf *hf) {
    free(hf->col);
    free(hf->spans);
    memset(hf, 0, sizeof *hf);
}

static uint32_t nb_span_alloc(nb_hf *hf) {
    if (hf->free_head != NB_NONE) {
        uint32_t i = hf->free_head;
        hf->free_head = hf->spans[i].next;
        return i;
    }
    if (hf->nspans == hf->cap) {
        if (hf->cap > 0x7fffffffu)
            return NB_NONE;
        uint32_t cap = hf->cap * 2;
        nb_span *s = realloc(hf->spans, (size_t)cap * sizeof *s);
        if (!s)
            return NB_NONE;
        hf->spans = s;
        hf->cap = cap;
    }
    return hf->nspans++;
}

/*
 * Merges [smin, smax) into column (x, z). Overlapping or touching spans
 * become one; its area is the area of the higher top, or the larger id when
 * the two tops are within merge_thr cells (a walkable floor and the top of
 * a step both count).
 */
static nav_status nb_add_span(nb_hf *hf, int x, int z, int smin, int smax, uint8_t area,
                              int merge_thr) {
    uint32_t idx = nb_span_alloc(hf);
    if (idx == NB_NONE)
        return NAV_E_NOMEM;
    nb_span *sp = hf->spans;
    uint32_t *link = &hf->col[x + z * hf->w];
    uint32_t cur = *link;
    while (cur != NB_NONE) {
        nb_span *c = &sp[cur];
        if (c->smin > smax)
            break;
        if (c->smax < smin) {
            link = &c->next;
            cur = c->next;
            continue;
        }
        int d = (int)c->smax - smax;
        if (d >= -merge_thr && d <= merge_thr)
            area = c->area > area ? c->area : area;
        else if (d > 0)
            area = c->area;
        if (c->smin < smin)
            smin = c->smin;
        if (c->smax > smax)
            smax = c->smax;
        uint32_t next = c->next;
        c->next = hf->free_head;
        hf->free_head = cur;
        hf->live--;
        *link = next;
        cur = next;
    }
    sp[idx].smin = (uint16_t)smin;
    sp[idx].smax = (uint16_t)smax;
    sp[idx].area = area;
    sp[idx].next = cur;
    *link = idx;
    hf->live++;
    return NAV_OK;
}

#define NB_MINF(a, b) ((a) < (b) ? (a) : (b))
#define NB_MAXF(a, b) ((a) > (b) ? (a) : (b))

/* Splits polygon `in` by the line axis = at: the part below goes to lo, the
   part above to hi (points on the line go to both). */
static inline void nb_divide(const float *restrict in, int n, float *restrict lo, int *nlo,
                             float *restrict hi, int *nhi, float at, int axis) {
    float d[12];
    for (int i = 0; i < n; i++)
        d[i] = at - in[i * 3 + axis];
    int a = 0, b = 0;
    for (int i = 0, j = n - 1; i < n; j = i, i++) {
        const float *pi = &in[i * 3], *pj = &in[j * 3];
        float di = d[i], dj = d[j];
        if ((dj >= 0) != (di >= 0)) {
            float t = dj / (dj - di);
            float x = pj[0] + (pi[0] - pj[0]) * t, y = pj[1] + (pi[1] - pj[1]) * t,
                  z = pj[2] + (pi[2] - pj[2]) * t;
            lo[a * 3] = x, lo[a * 3 + 1] = y, lo[a * 3 + 2] = z, a++;
            hi[b * 3] = x, hi[b * 3 + 1] = y, hi[b * 3 + 2] = z, b++;
            if (di > 0)
                lo[a * 3] = pi[0], lo[a * 3 + 1] = pi[1], lo[a * 3 + 2] = pi[2], a++;
            else if (di < 0)
                hi[b * 3] = pi[0], hi[b * 3 + 1] = pi[1], hi[b * 3 + 2] = pi[2], b++;
        } else {
            if (di >= 0) {
                lo[a * 3] = pi[0], lo[a * 3 + 1] = pi[1], lo[a * 3 + 2] = pi[2], a++;
                if (di != 0)
                    continue;
            }
            hi[b * 3] = pi[0], hi[b * 3 + 1] = pi[1], hi[b * 3 + 2] = pi[2], b++;
        }
    }
    *nlo = a;
    *nhi = b;
}

static nav_status nb_raster_tri(nb_hf *hf, const float *v0, const float *v1, const float *v2,
                                uint8_t area, int merge_thr, float ymax_world, nb_ctx *c) {
    const float cs = hf->cs, ics = 1.0f / hf->cs, ich = 1.0f / hf->ch;
    float tmin[3], tmax[3];
    for (int k = 0; k < 3; k++) {
        tmin[k] = NB_MINF(v0[k], NB_MINF(v1[k], v2[k]));
        tmax[k] = NB_MAXF(v0[k], NB_MAXF(v1[k], v2[k]));
    }
    /* window bounds in world xz */
    float wx0 = hf->bmin[0] + (float)hf->x0 * cs, wz0 = hf->bmin[2] + (float)hf->z0 * cs;
    float wx1 = hf->bmin[0] + (float)(hf->x0 + hf->w) * cs;
    float wz1 = hf->bmin[2] + (float)(hf->z0 + hf->h) * cs;
    if (tmax[0] < wx0 || tmin[0] > wx1 || tmax[2] < wz0 || tmin[2] > wz1)
        return NAV_OK;
    int z0 = (int)floorf((tmin[2] - hf->bmin[2]) * ics) - hf->z0;
    int z1 = (int)floorf((tmax[2] - hf->bmin[2]) * ics) - hf->z0;
    z0 = z0 < -1 ? -1 : z0 > hf->h - 1 ? hf->h - 1 : z0;
    z1 = z1 < 0 ? 0 : z1 > hf->h - 1 ? hf->h - 1 : z1;
    float buf[4][12 * 3];
    float *in = buf[0], *row = buf[1], *cell = buf[2], *rest = buf[3];
    int nin = 3, nrow, ncell, nrest;
    memcpy(in, v0, 3 * sizeof(float));
    memcpy(in + 3, v1, 3 * sizeof(float));
    memcpy(in + 6, v2, 3 * sizeof(float));
    const float by = ymax_world - hf->bmin[1];
    for (int z = z0; z <= z1; z++) {
        if ((z & 63) == 63 && nb_cancelled(c)) /* one triangle can cover the whole level */
            return NAV_E_CANCELLED;
        float cz = hf->bmin[2] + (float)(hf->z0 + z + 1) * cs;
        nb_divide(in, nin, row, &nrow, rest, &nrest, cz, 2);
        float *t = in;
        in = rest;
        rest = t;
        nin = nrest;
        if (nrow < 3 || z < 0)
            continue;
        float mnx = row[0], mxx = row[0];
        for (int i = 1; i < nrow; i++) {
            mnx = NB_MINF(mnx, row[i * 3]);
            mxx = NB_MAXF(mxx, row[i * 3]);
        }
        int x0 = (int)floorf((mnx - hf->bmin[0]) * ics) - hf->x0;
        int x1 = (int)floorf((mxx - hf->bmin[0]) * ics) - hf->x0;
        if (x1 < 0 || x0 >= hf->w)
            continue;
        x0 = x0 < -1 ? -1 : x0;
        int last = x1; /* the column holding the row's largest x */
        x1 = x1 > hf->w - 1 ? hf->w - 1 : x1;
        for (int x = x0; x <= x1; x++) {
            if (x == last) {
                /* the last column takes what is left of the row */
                t = cell;
                cell = row;
                row = t;
                ncell = nrow;
                nrow = 0;
            } else {
                float cx = hf->bmin[0] + (float)(hf->x0 + x + 1) * cs;
                nb_divide(row, nrow, cell, &ncell, rest, &nrest, cx, 0);
                t = row;
                row = rest;
                rest = t;
                nrow = nrest;
            }
            if (ncell < 3 || x < 0)
                continue;
            float lo = cell[1], hi = cell[1];
            for (int i = 1; i < ncell; i++) {
                lo = NB_MINF(lo, cell[i * 3 + 1]);
                hi = NB_MAXF(hi, cell[i * 3 + 1]);
            }
            lo -= hf->bmin[1];
            hi -= hf->bmin[1];
            if (hi < 0 || lo > by)
                continue;
            lo = lo < 0 ? 0 : lo;
            hi = hi > by ? by : hi;
            /* both are >= 0 and far below 2^24 here, so truncation is the
               floor, and one more where it cut something off the ceiling
               (cheaper than floorf/ceilf without SSE4.1's roundss) */
            float flo = lo * ich, fhi = hi * ich;
            int smin = (int)flo, smax = (int)fhi;
            smax += (float)smax < fhi;
            smin = smin < 0 ? 0 : smin > NB_SPAN_MAX ? NB_SPAN_MAX : smin;
            smax = smax < smin + 1 ? smin + 1 : smax > NB_SPAN_MAX ? NB_SPAN_MAX : smax;
            nav_status st = nb_add_span(hf, x, z, smin, smax, area, merge_thr);
            if (st != NAV_OK)
                return st;
        }
    }
    return NAV_OK;
}

nav_status nb_rasterize(nb_hf *hf, const float *verts, const uint32_t *tris, uint32_t ntris,
                        const uint32_t *ids, float walkable_cos, int merge_thr, float ymax_world,
                        nb_ctx *c) {
    for (uint32_t k = 0; k < ntris; k++) {
        if ((k & 4095) == 4095 && nb_cancelled(c))
            return NAV_E_CANCELLED;
        uint32_t t = ids ? ids[k] : k;
        const float *a = &verts[3 * (size_t)tris[3 * t]], *b = &verts[3 * (size_t)tris[3 * t + 1]],
                    *d = &verts[3 * (size_t)tris[3 * t + 2]];
        /* walkable when the normal (b - a) x (d - a), i.e. the side from
           which the corners run counter-clockwise, points up within the
           slope: Recast's convention, so a ceiling is not a floor */
        float e0[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e1[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        float n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                      e0[0] * e1[1] - e0[1] * e1[0]};
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        uint8_t area = NB_AREA_NULL;
        if (len > 0 && n[1] / len > walkable_cos)
            area = NB_WALKABLE;
        nav_status st = nb_raster_tri(hf, a, b, d, area, merge_thr, ymax_world, c);
        if (st != NAV_OK)
            return st;
    }
    return NAV_OK;
}
