/*
 * nav_vol_query: the point and segment queries on a flight volume: which
 * voxel and component a point is in, the nearest free point, line of sight
 * and raycasts.
 *
 * Segments are walked voxel by voxel in grid coordinates (Amanatides & Woo)
 * in double precision. Where a segment crosses two or three voxel
 * boundaries at once (through an edge or a corner, up to a relative 1e-9),
 * the voxels around that edge or corner must be free too: a rounding error
 * may then only make a line of sight fail, never pass through a blocked
 * voxel's corner. Whole free bricks are crossed in one step.
 */
#include <math.h>
#include <string.h>

#include "nav/nav_vol_internal.h"

int nav_vol_locate(const nav_vol *v, const float p[3], uint32_t c[3]) {
    for (int a = 0; a < 3; a++) {
        double f = ((double)p[a] - v->bmin[a]) * (double)v->inv_vs;
        if (!(f >= 0) || f >= (double)v->n[a])
            return 0;
        c[a] = (uint32_t)f;
        if (c[a] >= v->n[a])
            c[a] = v->n[a] - 1;
    }
    return 1;
}

uint32_t nav_vol_voxel_comp(const nav_vol *v, uint32_t x, uint32_t y, uint32_t z) {
    uint32_t t = v->top[nav_vol_brick_index(v, x >> 2, y >> 2, z >> 2)];
    if (t == NAV_VOL_SOLID)
        return NAV_VOL_NONE;
    if (!(t & NAV_VOL_MIXED))
        return t;
    uint32_t i = t & ~NAV_VOL_MIXED, l = nav_vol_local(x, y, z);
    if (!((v->masks[i] >> l) & 1u))
        return NAV_VOL_NONE;
    if (!(v->labels[i] & NAV_VOL_MULTI))
        return v->labels[i];
    for (const nav_vol_part *p = &v->parts[v->labels[i] & ~NAV_VOL_MULTI];; p++) {
        if ((p->mask >> l) & 1u)
            return p->comp;
        if (p->last)
            break;
    }
    return NAV_VOL_NONE;
}

bool nav_vol_point_free(const nav_vol *v, const float p[3]) {
    uint32_t c[3];
    if (!v || !p || !nav_vol_locate(v, p, c))
        return false;
    return nav_vol_voxel_free(v, c[0], c[1], c[2]);
}

int64_t nav_vol_component(const nav_vol *v, const float p[3]) {
    uint32_t c[3];
    if (!v || !p || !nav_vol_locate(v, p, c))
        return -1;
    uint32_t comp = nav_vol_voxel_comp(v, c[0], c[1], c[2]);
    return comp == NAV_VOL_NONE ? -1 : (int64_t)comp;
}

/* Closest point to p in free voxel (x, y, z) (inset 1e-3 voxel) within the box lo..hi;
   0 when they do not meet. */
static int voxel_closest(const nav_vol *v, const uint32_t c[3], const float p[3], const float lo[3],
                         const float hi[3], float out[3]) {
    for (int a = 0; a < 3; a++) {
        float vmin = v->bmin[a] + ((float)c[a] + 1e-3f) * v->vs;
        float vmax = v->bmin[a] + ((float)c[a] + 1 - 1e-3f) * v->vs;
        float l = fmaxf(vmin, lo[a]), h = fminf(vmax, hi[a]);
        if (l > h)
            return 0;
        out[a] = fminf(fmaxf(p[a], l), h);
    }
    return 1;
}

/* The free point nearest to p within p +- e into out when nearer than *best (squared);
   returns whether any was found so far. */
static int scan_box(const nav_vol *v, const float p[3], const float e[3], float out[3],
                    double *best) {
    float lo[3], hi[3];
    int64_t i0[3], i1[3];
    for (int a = 0; a < 3; a++) {
        lo[a] = p[a] - e[a];
        hi[a] = p[a] + e[a];
        double f0 = floor(((double)lo[a] - v->bmin[a]) * v->inv_vs);
        double f1 = floor(((double)hi[a] - v->bmin[a]) * v->inv_vs);
        i0[a] = f0 < 0 ? 0 : (int64_t)f0;
        i1[a] = f1 >= v->n[a] ? (int64_t)v->n[a] - 1 : (int64_t)f1;
        if (i0[a] > i1[a])
            return isfinite(*best);
    }
    uint32_t c[3];
    for (int64_t z = i0[2]; z <= i1[2]; z++)
        for (int64_t y = i0[1]; y <= i1[1]; y++)
            for (int64_t x = i0[0]; x <= i1[0]; x++) {
                c[0] = (uint32_t)x, c[1] = (uint32_t)y, c[2] = (uint32_t)z;
                uint32_t t = v->top[nav_vol_brick_index(v, c[0] >> 2, c[1] >> 2, c[2] >> 2)];
                if (t == NAV_VOL_SOLID) {
                    x |= 3; /* skip the rest of this solid brick's row */
                    continue;
                }
                float q[3];
                if (!nav_vol_voxel_free(v, c[0], c[1], c[2]) || !voxel_closest(v, c, p, lo, hi, q))
                    continue;
                double d = 0;
                for (int a = 0; a < 3; a++)
                    d += ((double)q[a] - p[a]) * ((double)q[a] - p[a]);
                if (d < *best) {
                    *best = d;
                    memcpy(out, q, sizeof q);
                }
            }
    return isfinite(*best);
}

nav_status nav_vol_nearest(const nav_vol *v, const float p[3], const float ext[3], float out[3],
                           float *dist) {
    if (!v || !p || !ext || !out)
        return NAV_E_INVALID_ARG;
    for (int a = 0; a < 3; a++)
        if (!isfinite(p[a]) || !isfinite(ext[a]) || ext[a] < 0)
            return NAV_E_INVALID_ARG;
    if (dist)
        *dist = 0;
    if (nav_vol_point_free(v, p)) {
        memcpy(out, p, 3 * sizeof *out);
        return NAV_OK;
    }
    /* Growing boxes: the nearest free point at distance d <= h lies in the box p +- h
       (anything outside is farther than h), so a small box usually settles it and a
       large `extents` costs only when free space is far. */
    double best = INFINITY;
    for (float h = 2 * v->vs;; h *= 4) {
        float e[3];
        int full = 1;
        for (int a = 0; a < 3; a++) {
            e[a] = fminf(ext[a], h);
            full &= e[a] == ext[a];
        }
        if (scan_box(v, p, e, out, &best) && (full || sqrt(best) <= h))
            break;
        if (full)
            return NAV_E_OFF_MESH;
    }
    if (!isfinite(best))
        return NAV_E_OFF_MESH;
    if (dist)
        *dist = (float)sqrt(best);
    return NAV_OK;
}

/* ---- segment walking ---- */

typedef struct march {
    double t; /* where the walk stopped: entry into a voxel that is not free */
    int axis; /* axis of the boundary crossed there (-1: the first voxel) */
    int step; /* direction of travel on that axis */
} march;

/* Brick word of voxel c, NAV_VOL_SOLID outside the grid. */
static inline uint32_t brick_word(const nav_vol *v, const int64_t c[3]) {
    if ((uint64_t)c[0] >= v->n[0] || (uint64_t)c[1] >= v->n[1] || (uint64_t)c[2] >= v->n[2])
        return NAV_VOL_SOLID;
    return v->top[nav_vol_brick_index(v, (uint32_t)c[0] >> 2, (uint32_t)c[1] >> 2,
                                      (uint32_t)c[2] >> 2)];
}

/* Whether voxel c is free given its brick word t. */
static inline int word_free(const nav_vol *v, uint32_t t, const int64_t c[3]) {
    if (t == NAV_VOL_SOLID)
        return 0;
    if (!(t & NAV_VOL_MIXED))
        return 1;
    return (int)((v->masks[t & ~NAV_VOL_MIXED] >>
                  nav_vol_local((uint32_t)c[0], (uint32_t)c[1], (uint32_t)c[2])) &
                 1u);
}

/* The voxels around an edge or corner crossed at once (all but the final one) must be free. */
static int corner_free(const nav_vol *v, const int64_t c[3], const int st[3], unsigned axes) {
    for (unsigned sub = 1; sub < axes; sub++) {
        if ((sub & axes) != sub)
            continue;
        int64_t q[3] = {c[0], c[1], c[2]};
        for (int a = 0; a < 3; a++)
            if (sub & (1u << a))
                q[a] += st[a];
        if (!nav_vol_voxel_free_s(v, q[0], q[1], q[2]))
            return 0;
    }
    return 1;
}

/*
 * Inside a whole free brick: takes every voxel crossing that stays in the
 * brick without reading the grid (none of those voxels can be blocked),
 * leaving the crossing out of the brick, and any tie that involves it, to
 * the caller's checks. Stops early when the segment ends in the brick.
 */
static void skip_free_brick(int64_t c[3], const int st[3], double tmax[3], const double tdelta[3]) {
    for (;;) {
        double tm = tmax[0] < tmax[1] ? tmax[0] : tmax[1];
        tm = tmax[2] < tm ? tmax[2] : tm;
        if (tm > 1)
            return;
        double lim = tm + 1e-9 * (1 + tm);
        unsigned axes = 0;
        for (int a = 0; a < 3; a++)
            if (st[a] && tmax[a] <= lim) {
                if (((c[a] + st[a]) >> 2) != (c[a] >> 2))
                    return; /* leaves the brick: the caller checks that step */
                axes |= 1u << a;
            }
        for (int a = 0; a < 3; a++)
            if (axes & (1u << a)) {
                c[a] += st[a];
                tmax[a] += tdelta[a];
            }
    }
}

/*
 * Walks from grid point ga toward gb (t in [0, 1]); returns 1 and fills *m at
 * the first voxel that is blocked or outside the grid, 0 when the whole
 * segment lies in free voxels.
 */
static int vol_march(const nav_vol *v, const double ga[3], const double gb[3], march *m) {
    int64_t c[3], last[3];
    int st[3];
    double tmax[3], tdelta[3], d[3];
    for (int a = 0; a < 3; a++) {
        c[a] = (int64_t)floor(ga[a]);
        last[a] = (int64_t)floor(gb[a]);
        d[a] = gb[a] - ga[a];
        st[a] = d[a] > 0 ? 1 : (d[a] < 0 ? -1 : 0);
        tdelta[a] = st[a] ? 1.0 / fabs(d[a]) : INFINITY;
        tmax[a] = st[a] > 0   ? ((double)c[a] + 1 - ga[a]) / d[a]
                  : st[a] < 0 ? ((double)c[a] - ga[a]) / d[a]
                              : INFINITY;
    }
    m->t = 0;
    m->axis = -1;
    m->step = 0;
    uint32_t t = brick_word(v, c);
    if (!word_free(v, t, c))
        return 1;
    uint64_t guard = (uint64_t)v->n[0] + v->n[1] + v->n[2] + 8;
    for (uint64_t it = 0; it < guard * 2; it++) {
        if (c[0] == last[0] && c[1] == last[1] && c[2] == last[2])
            return 0;
        if (t != NAV_VOL_SOLID && !(t & NAV_VOL_MIXED))
            skip_free_brick(c, st, tmax, tdelta);
        double tm = tmax[0] < tmax[1] ? tmax[0] : tmax[1];
        tm = tmax[2] < tm ? tmax[2] : tm;
        if (tm > 1)
            return 0;
        double lim = tm + 1e-9 * (1 + tm);
        unsigned axes = (st[0] && tmax[0] <= lim ? 1u : 0u) | (st[1] && tmax[1] <= lim ? 2u : 0u) |
                        (st[2] && tmax[2] <= lim ? 4u : 0u);
        int first_axis = axes & 1u ? 0 : (axes & 2u ? 1 : 2);
        if ((axes & (axes - 1)) && !corner_free(v, c, st, axes)) {
            m->t = tm;
            m->axis = first_axis;
            m->step = st[first_axis];
            return 1;
        }
        for (int k = 0; k < 3; k++)
            if (axes & (1u << k)) {
                c[k] += st[k];
                tmax[k] += tdelta[k];
            }
        t = brick_word(v, c);
        if (!word_free(v, t, c)) {
            m->t = tm;
            m->axis = first_axis;
            m->step = st[first_axis];
            return 1;
        }
    }
    return 0;
}

static void to_grid(const nav_vol *v, const float p[3], double g[3]) {
    for (int a = 0; a < 3; a++)
        g[a] = ((double)p[a] - v->bmin[a]) * (double)v->inv_vs;
}

bool nav_vol_los(const nav_vol *v, const float a[3], const float b[3]) {
    uint32_t ca[3], cb[3];
    if (!v || !a || !b || !nav_vol_locate(v, a, ca) || !nav_vol_locate(v, b, cb))
        return false;
    double ga[3], gb[3];
    to_grid(v, a, ga);
    to_grid(v, b, gb);
    march m;
    return !vol_march(v, ga, gb, &m);
}

nav_status nav_vol_raycast(const nav_vol *v, const float a[3], const float b[3], nav_vol_hit *out) {
    if (!v || !a || !b || !out)
        return NAV_E_INVALID_ARG;
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 3; k++)
        if (!isfinite(a[k]) || !isfinite(b[k]))
            return NAV_E_INVALID_ARG;
    if (!nav_vol_point_free(v, a))
        return NAV_E_OFF_MESH;
    double ga[3], gb[3];
    to_grid(v, a, ga);
    to_grid(v, b, gb);
    march m;
    out->t = 1;
    if (vol_march(v, ga, gb, &m) && m.axis >= 0) {
        out->hit = true;
        out->t = (float)m.t;
        out->normal[m.axis] = (float)-m.step;
    }
    for (int k = 0; k < 3; k++)
        out->point[k] = a[k] + out->t * (b[k] - a[k]);
    return NAV_OK;
}
