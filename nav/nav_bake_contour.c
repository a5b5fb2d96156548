/*
 * nav_bake_contour.c: region outlines, traced on the grid and simplified.
 *
 * Each region's boundary is walked span by span (turning clockwise along a
 * boundary edge, counter-clockwise into a neighbour), giving one raw point
 * per boundary edge at a cell corner, with the region across that edge. The
 * corner's height is the highest floor of the spans that meet there.
 * Simplification keeps every point where the region across changes (so two
 * regions share the exact end points of their common edge), then adds the
 * raw point farthest from each wall segment until all are within
 * max_error, then splits wall edges longer than max_edge_len. Portal edges
 * between regions stay straight, so both sides see the same segment.
 * Holes (a region around a pillar) are joined to their outline through a
 * bridge to the nearest visible vertex, making one simple loop.
 * Outlines have negative signed area (nav_mesh's convention).
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

typedef struct nb_ivec {
    int *v;
    int n, cap; /* in ints */
} nb_ivec;

static bool nb_ivec_push4(nb_ivec *a, int x, int y, int z, int w) {
    if (a->n + 4 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 256;
        int *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    a->v[a->n++] = y;
    a->v[a->n++] = z;
    a->v[a->n++] = w;
    return true;
}

static int nb_corner_height(const nb_work *wk, uint32_t s, int dir) {
    const nb_chf *chf = wk->chf;
    int h = chf->y[s];
    int dp = (dir + 1) & 3;
    uint32_t a = nb_nei4(chf, s, dir);
    if (a != NB_NONE) {
        h = chf->y[a] > h ? chf->y[a] : h;
        uint32_t b = nb_nei4(chf, a, dp);
        if (b != NB_NONE)
            h = chf->y[b] > h ? chf->y[b] : h;
    }
    a = nb_nei4(chf, s, dp);
    if (a != NB_NONE) {
        h = chf->y[a] > h ? chf->y[a] : h;
        uint32_t b = nb_nei4(chf, a, dir);
        if (b != NB_NONE)
            h = chf->y[b] > h ? chf->y[b] : h;
    }
    return h;
}

/* Walks the boundary starting at span s, clearing the edges it visits. */
static nav_status nb_walk(const nb_work *wk, int x, int z, uint32_t s, uint8_t *flags,
                          nb_ivec *pts) {
    const nb_chf *chf = wk->chf;
    int dir = 0;
    while (!(flags[s] & (1 << dir)))
        dir++;
    const int start_dir = dir;
    const uint32_t start = s;
    const uint8_t area = wk->area[s];
    for (int iter = 0; iter < 1 << 24; iter++) {
        if (flags[s] & (1 << dir)) {
            int px = x, pz = z;
            int py = nb_corner_height(wk, s, dir);
            if (dir == 0)
                pz++;
            else if (dir == 1) {
                px++;
                pz++;
            } else if (dir == 2)
                px++;
            int r = 0;
            uint32_t a = nb_nei4(chf, s, dir);
            if (a != NB_NONE) {
                r = wk->reg[a];
                if (wk->area[a] != area)
                    r |= NB_CV_AREA_EDGE;
            }
            if (!nb_ivec_push4(pts, px + chf->x0, py, pz + chf->z0, r))
                return NAV_E_NOMEM;
            flags[s] &= (uint8_t) ~(1 << dir);
            dir = (dir + 1) & 3;
        } else {
            uint32_t a = nb_nei4(chf, s, dir);
            if (a == NB_NONE)
                return NAV_OK; /* cannot happen: a connected edge is never a boundary */
            s = a;
            x += nb_dx[dir];
            z += nb_dz[dir];
            dir = (dir + 3) & 3;
        }
        if (s == start && dir == start_dir)
            break;
    }
    return NAV_OK;
}

static double nb_dist_pt_seg2(int x, int z, int px, int pz, int qx, int qz) {
    double dx = qx - px, dz = qz - pz;
    double ex = x - px, ez = z - pz;
    double d = dx * dx + dz * dz, t = dx * ex + dz * ez;
    if (d > 0)
        t /= d;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    ex = px + t * dx - x;
    ez = pz + t * dz - z;
    return ex * ex + ez * ez;
}

/* Inserts raw point `ri` after simplified vertex i. */
static bool nb_insert(nb_ivec *sv, int i, const int *raw, int ri) {
    if (!nb_ivec_push4(sv, 0, 0, 0, 0))
        return false;
    int n = sv->n / 4;
    memmove(&sv->v[(i + 2) * 4], &sv->v[(i + 1) * 4], (size_t)(n - i - 2) * 4 * sizeof(int));
    sv->v[(i + 1) * 4 + 0] = raw[ri * 4 + 0];
    sv->v[(i + 1) * 4 + 1] = raw[ri * 4 + 1];
    sv->v[(i + 1) * 4 + 2] = raw[ri * 4 + 2];
    sv->v[(i + 1) * 4 + 3] = ri;
    return true;
}

static bool nb_tess(int flag) {
    return (flag & NB_CV_REG_MASK) == 0 || (flag & NB_CV_AREA_EDGE);
}

/* Adds the raw point farthest from each wall (or area) segment until all
   are within max_error (Douglas-Peucker, one insertion at a time). */
static nav_status nb_refine_error(const int *raw, int pn, nb_ivec *sv, float max_error) {
    const double err2 = (double)max_error * max_error;
    for (int i = 0; i < sv->n / 4;) {
        int ii = (i + 1) % (sv->n / 4);
        int ax = sv->v[i * 4], az = sv->v[i * 4 + 2], ai = sv->v[i * 4 + 3];
        int bx = sv->v[ii * 4], bz = sv->v[ii * 4 + 2], bi = sv->v[ii * 4 + 3];
        /* walk the raw points in a fixed (lexicographic) direction so both
           sides of an area edge choose the same points */
        int ci, inc, end;
        if (bx > ax || (bx == ax && bz > az)) {
            inc = 1;
            ci = (ai + 1) % pn;
            end = bi;
        } else {
            inc = pn - 1;
            ci = (bi + inc) % pn;
            end = ai;
            int t = ax;
            ax = bx;
            bx = t;
            t = az;
            az = bz;
            bz = t;
        }
        double maxd = 0;
        int maxi = -1;
        if (nb_tess(raw[ci * 4 + 3]))
            for (; ci != end; ci = (ci + inc) % pn) {
                double d = nb_dist_pt_seg2(raw[ci * 4], raw[ci * 4 + 2], ax, az, bx, bz);
                if (d > maxd) {
                    maxd = d;
                    maxi = ci;
                }
            }
        if (maxi >= 0 && maxd > err2) {
            if (!nb_insert(sv, i, raw, maxi))
                return NAV_E_NOMEM;
        } else {
            i++;
        }
    }
    return NAV_OK;
}

/* Splits wall edges longer than max_edge_len at their middle raw point,
   rounding the same way from both ends. */
static nav_status nb_refine_long(const int *raw, int pn, nb_ivec *sv, int max_edge_len) {
    if (max_edge_len > 0) {
        for (int i = 0; i < sv->n / 4;) {
            int ii = (i + 1) % (sv->n / 4);
            int ax = sv->v[i * 4], az = sv->v[i * 4 + 2], ai = sv->v[i * 4 + 3];
            int bx = sv->v[ii * 4], bz = sv->v[ii * 4 + 2], bi = sv->v[ii * 4 + 3];
            int maxi = -1;
            if (nb_tess(raw[((ai + 1) % pn) * 4 + 3])) {
                int dx = bx - ax, dz = bz - az;
                if ((long)dx * dx + (long)dz * dz > (long)max_edge_len * max_edge_len) {
                    int n = bi < ai ? bi + pn - ai : bi - ai;
                    if (n > 1)
                        maxi = (bx > ax || (bx == ax && bz > az)) ? (ai + n / 2) % pn
                                                                  : (ai + (n + 1) / 2) % pn;
                }
            }
            if (maxi >= 0) {
                if (!nb_insert(sv, i, raw, maxi))
                    return NAV_E_NOMEM;
            } else {
                i++;
            }
        }
    }
    return NAV_OK;
}

static nav_status nb_simplify(const nb_ivec *rawv, nb_ivec *sv, float max_error, int max_edge_len) {
    const int *raw = rawv->v;
    const int pn = rawv->n / 4;
    sv->n = 0;
    bool portals = false;
    for (int i = 0; i < pn && !portals; i++)
        portals = (raw[i * 4 + 3] & NB_CV_REG_MASK) != 0;
    if (portals) {
        for (int i = 0; i < pn; i++) {
            int a = raw[i * 4 + 3], b = raw[((i + 1) % pn) * 4 + 3];
            if ((a & NB_CV_REG_MASK) != (b & NB_CV_REG_MASK) ||
                (a & NB_CV_AREA_EDGE) != (b & NB_CV_AREA_EDGE))
                if (!nb_ivec_push4(sv, raw[i * 4], raw[i * 4 + 1], raw[i * 4 + 2], i))
                    return NAV_E_NOMEM;
        }
    }
    if (sv->n == 0) {
        int ll = 0, ur = 0;
        for (int i = 1; i < pn; i++) {
            const int *p = &raw[i * 4], *l = &raw[ll * 4], *u = &raw[ur * 4];
            if (p[0] < l[0] || (p[0] == l[0] && p[2] < l[2]))
                ll = i;
            if (p[0] > u[0] || (p[0] == u[0] && p[2] > u[2]))
                ur = i;
        }
        if (!nb_ivec_push4(sv, raw[ll * 4], raw[ll * 4 + 1], raw[ll * 4 + 2], ll) ||
            !nb_ivec_push4(sv, raw[ur * 4], raw[ur * 4 + 1], raw[ur * 4 + 2], ur))
            return NAV_E_NOMEM;
    }
    nav_status st = nb_refine_error(raw, pn, sv, max_error);
    if (st == NAV_OK)
        st = nb_refine_long(raw, pn, sv, max_edge_len);
    if (st != NAV_OK)
        return st;
    /* each vertex carries the region of the edge that starts at it */
    for (int i = 0; i < sv->n / 4; i++) {
        int ai = (sv->v[i * 4 + 3] + 1) % pn;
        sv->v[i * 4 + 3] = raw[ai * 4 + 3];
    }
    /* drop zero-length edges */
    for (int i = 0; i < sv->n / 4 && sv->n / 4 > 0;) {
        int n = sv->n / 4, ni = (i + 1) % n;
        if (sv->v[i * 4] == sv->v[ni * 4] && sv->v[i * 4 + 2] == sv->v[ni * 4 + 2]) {
            memmove(&sv->v[ni * 4], &sv->v[(ni + 1) * 4], (size_t)(n - ni - 1) * 4 * sizeof(int));
            sv->n -= 4;
            if (ni == 0)
                continue;
        } else {
            i++;
        }
    }
    return NAV_OK;
}

static long nb_area2(const int *v, int n) {
    long a = 0;
    for (int i = 0, j = n - 1; i < n; j = i++)
        a += (long)v[j * 4] * v[i * 4 + 2] - (long)v[i * 4] * v[j * 4 + 2];
    return a;
}

nav_status nb_contours(const nb_work *wk, float max_error, int max_edge_len, nb_cset *out,
                       nb_ctx *ctx) {
    const nb_chf *chf = wk->chf;
    memset(out, 0, sizeof *out);
    uint8_t *flags = calloc(chf->nspans + 1, 1);
    nb_ivec raw = {0}, sv = {0};
    int cap = 0;
    nav_status st = NAV_OK;
    if (!flags)
        return NAV_E_NOMEM;
    for (uint32_t s = 0; s < chf->nspans; s++) {
        uint16_t r = wk->reg[s];
        if (!r || (r & NB_BORDER_REG))
            continue;
        uint8_t same = 0;
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, s, dir);
            if (a != NB_NONE && wk->reg[a] == r)
                same |= (uint8_t)(1 << dir);
        }
        flags[s] = same ^ 0xf;
    }
    for (int z = 0; z < chf->h; z++) {
        if (nb_cancelled(ctx)) {
            st = NAV_E_CANCELLED;
            goto out;
        }
        /* the row's spans in scan order; the cell is found only for the
           few that start a walk */
        const uint32_t *row = &chf->first[z * chf->w];
        int x = 0;
        for (uint32_t s = row[0]; s < row[chf->w]; s++) {
            if (flags[s] == 0 || flags[s] == 0xf) {
                flags[s] = 0;
                continue;
            }
            while (row[x + 1] <= s)
                x++;
            raw.n = 0;
            st = nb_walk(wk, x, z, s, flags, &raw);
            if (st != NAV_OK)
                goto out;
            st = nb_simplify(&raw, &sv, max_error, max_edge_len);
            if (st != NAV_OK)
                goto out;
            if (sv.n / 4 < 3)
                continue;
            if (out->n == cap) {
                cap = cap ? cap * 2 : 64;
                nb_contour *nc = realloc(out->c, (size_t)cap * sizeof *nc);
                if (!nc) {
                    st = NAV_E_NOMEM;
                    goto out;
                }
                out->c = nc;
            }
            nb_contour *ct = &out->c[out->n];
            ct->v = malloc((size_t)sv.n * sizeof(int));
            if (!ct->v) {
                st = NAV_E_NOMEM;
                goto out;
            }
            memcpy(ct->v, sv.v, (size_t)sv.n * sizeof(int));
            ct->nv = sv.n / 4;
            ct->reg = wk->reg[s];
            ct->area = wk->area[s];
            out->n++;
        }
    }
    st = nb_holes_merge(out);
out:
    free(flags);
    free(raw.v);
    free(sv.v);
    if (st != NAV_OK)
        nb_cset_free(out);
    return st;
}

long nb_contour_area2(const nb_contour *c) {
    return nb_area2(c->v, c->nv);
}

void nb_cset_free(nb_cset *cs) {
    for (int i = 0; i < cs->n; i++)
        free(cs->c[i].v);
    free(cs->c);
    memset(cs, 0, sizeof *cs);
}
