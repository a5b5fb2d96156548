/*
 * nav_raycast: walking the mesh surface along a straight line in xz.
 *
 * The walkable region is the union of the CLOSED polygons: a ray that runs
 * along a wall, grazes a wall corner or passes exactly through a vertex is
 * clear as long as every point of it is on some polygon. The walk keeps the
 * current polygon and the parameter t where the ray leaves it (clipping the
 * segment against the polygon's edges in double, with a 1e-5 m tolerance so
 * that points computed from float vertices on an edge count as on it).
 * Where the ray leaves:
 * - through the inside of an edge: the neighbour across that edge;
 * - through a vertex: every polygon around that vertex reachable through
 *   edges incident to it (the "fan");
 * the candidate whose own clip interval starts there and reaches farthest
 * is next (ties: the lowest polygon id); none means a wall. Each step moves
 * t forward, so the walk ends. Only edge adjacency is followed, so on a
 * multi-level mesh the ray stays on its level.
 */
#include <math.h>
#include <string.h>

#include "nav/nav_query_internal.h"

#define RAY_EPS 1e-5 /* metres */
#define RAY_FAN_MAX 32

typedef struct ray_ctx {
    const nav_mesh *m;
    const nav_filter *f;
    const float *s, *e;
    double len;   /* xz length of the segment */
    double eps_t; /* RAY_EPS as a fraction of the segment */
} ray_ctx;

/* [*tin, *tout] of the segment inside polygon p (closed, tolerant); 0 if empty. */
static int clip(const ray_ctx *rc, uint32_t p, double *tin, double *tout) {
    const nav_mesh *m = rc->m;
    uint32_t n = nav_poly_nverts(m, p);
    double lo = -1e300, hi = 1e300;
    for (uint32_t k = 0; k < n; k++) {
        const float *a = nav_poly_vert(m, p, k), *b = nav_poly_vert(m, p, k + 1);
        double el = nav_dist2d(a, b);
        if (el == 0)
            continue;
        /* inside: -cross2 >= -eps * el (interior has cross2 < 0) */
        double f0 = -nav_cross2(a, b, rc->s) + RAY_EPS * el;
        double f1 = -nav_cross2(a, b, rc->e) + RAY_EPS * el;
        if (f0 == f1) {
            if (f0 < 0)
                return 0;
            continue;
        }
        double t = f0 / (f0 - f1);
        if (f1 < f0) {
            if (t < hi)
                hi = t;
        } else if (t > lo) {
            lo = t;
        }
    }
    *tin = lo;
    *tout = hi;
    return lo <= hi;
}

/* xz distance from point (x, z) to segment [a, b]. */
static double seg_dist(double x, double z, const float *a, const float *b) {
    double abx = (double)b[0] - a[0], abz = (double)b[2] - a[2];
    double apx = x - a[0], apz = z - a[2];
    double d = abx * abx + abz * abz, t = d > 0 ? (abx * apx + abz * apz) / d : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double dx = apx - t * abx, dz = apz - t * abz;
    return sqrt(dx * dx + dz * dz);
}

static int passable(const ray_ctx *rc, uint32_t p) {
    return p != NAV_NONE && nav_filter_passable(rc->f, rc->m->areas[p]);
}

/*
 * The polygon to continue in when the ray leaves `cur` at t, or NAV_NONE.
 * On NAV_NONE, *wall_edge is an edge of cur the ray leaves through (for the
 * normal), preferring a real wall.
 */
static uint32_t next_poly(const ray_ctx *rc, uint32_t cur, double t, double *t_next,
                          uint32_t *wall_edge) {
    const nav_mesh *m = rc->m;
    double px = rc->s[0] + t * ((double)rc->e[0] - rc->s[0]);
    double pz = rc->s[2] + t * ((double)rc->e[2] - rc->s[2]);
    uint32_t cand[RAY_FAN_MAX], ncand = 0;
    uint32_t n = nav_poly_nverts(m, cur), base = m->poly_start[cur];
    *wall_edge = NAV_NONE;
    uint32_t any_edge = NAV_NONE;
    for (uint32_t k = 0; k < n; k++) {
        const float *a = nav_poly_vert(m, cur, k), *b = nav_poly_vert(m, cur, k + 1);
        if (seg_dist(px, pz, a, b) > 4 * RAY_EPS)
            continue;
        uint32_t nb = m->poly_nei[base + k];
        if (any_edge == NAV_NONE)
            any_edge = k;
        if (!passable(rc, nb) && *wall_edge == NAV_NONE)
            *wall_edge = k;
        if (passable(rc, nb) && ncand < RAY_FAN_MAX)
            cand[ncand++] = nb;
    }
    if (*wall_edge == NAV_NONE)
        *wall_edge = any_edge;
    /* At a vertex: widen to every polygon around it, through edges that
       touch the point (a breadth-first walk around the fan). */
    for (uint32_t i = 0; i < ncand && ncand < RAY_FAN_MAX; i++) {
        uint32_t p = cand[i], pn = nav_poly_nverts(m, p), pb = m->poly_start[p];
        for (uint32_t k = 0; k < pn && ncand < RAY_FAN_MAX; k++) {
            uint32_t nb = m->poly_nei[pb + k];
            if (!passable(rc, nb) || nb == cur)
                continue;
            if (seg_dist(px, pz, nav_poly_vert(m, p, k), nav_poly_vert(m, p, k + 1)) > 4 * RAY_EPS)
                continue;
            int seen = 0;
            for (uint32_t j = 0; j < ncand; j++)
                seen |= cand[j] == nb;
            if (!seen)
                cand[ncand++] = nb;
        }
    }
    uint32_t best = NAV_NONE;
    double best_out = t + rc->eps_t;
    for (uint32_t i = 0; i < ncand; i++) {
        double tin, tout;
        if (!clip(rc, cand[i], &tin, &tout) || tin > t + rc->eps_t)
            continue;
        if (tout > best_out || (tout == best_out && best != NAV_NONE && cand[i] < best)) {
            best_out = tout;
            best = cand[i];
        }
    }
    *t_next = best_out;
    return best;
}

nav_status nav_raycast(const nav_mesh *m, uint32_t start_poly, const float start[3],
                       const float end[3], const nav_filter *filter, nav_raycast_result *res) {
    if (!res)
        return NAV_E_INVALID_ARG;
    res->npolys = 0;
    res->hit = false;
    res->t = 0;
    memset(res->point, 0, sizeof(res->point));
    memset(res->normal, 0, sizeof(res->normal));
    res->truncated = false;
    if (!m || !start || !end || start_poly >= m->npolys || (res->max_polys && !res->polys))
        return NAV_E_INVALID_ARG;
    for (int k = 0; k < 3; k++)
        if (!isfinite(start[k]) || !isfinite(end[k]))
            return NAV_E_INVALID_ARG;
    nav_filter fdef;
    if (!(filter = nav_filter_resolve(filter, &fdef)))
        return NAV_E_INVALID_ARG;
    if (!nav_filter_passable(filter, m->areas[start_poly]))
        return NAV_E_OFF_MESH;

    ray_ctx rc = {m, filter, start, end, nav_dist2d(start, end), 0};
    uint32_t cur = start_poly;
    int hit = 0;
    double t = 1;
    uint32_t wall = NAV_NONE;
    if (rc.len > 0) {
        rc.eps_t = RAY_EPS / rc.len;
        double tin, tout;
        if (!clip(&rc, cur, &tin, &tout) || tin > rc.eps_t || tout < -rc.eps_t) {
            /* the start is not on start_poly: nowhere to walk */
            hit = 1;
            t = 0;
        } else {
            t = tout;
            for (uint32_t guard = 0; t < 1 && guard <= m->npolys; guard++) {
                if (res->npolys < res->max_polys)
                    res->polys[res->npolys++] = cur;
                else
                    res->truncated = true;
                double tn;
                uint32_t nb = next_poly(&rc, cur, t < 0 ? 0 : t, &tn, &wall);
                if (nb == NAV_NONE) {
                    hit = 1;
                    break;
                }
                cur = nb;
                t = tn;
            }
        }
    }
    if (!hit) {
        if (res->npolys < res->max_polys)
            res->polys[res->npolys++] = cur;
        else
            res->truncated = true;
    } else if (res->npolys == 0) {
        if (res->max_polys)
            res->polys[res->npolys++] = cur;
        else
            res->truncated = true;
    }
    if (hit && wall != NAV_NONE) {
        /* t came from the tolerant clip (up to RAY_EPS beyond the wall):
           report the exact crossing of the wall's line when it is that close */
        const float *a = nav_poly_vert(m, cur, wall), *b = nav_poly_vert(m, cur, wall + 1);
        double f0 = nav_cross2(a, b, start), f1 = nav_cross2(a, b, end);
        if (f0 != f1) {
            double te = f0 / (f0 - f1);
            if (te <= t && te >= t - 4 * rc.eps_t)
                t = te;
        }
    }
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    res->hit = hit != 0;
    res->t = hit ? (float)t : 1.0f;
    res->point[0] = hit ? (float)(start[0] + t * ((double)end[0] - start[0])) : end[0];
    res->point[2] = hit ? (float)(start[2] + t * ((double)end[2] - start[2])) : end[2];
    float y = start[1];
    nav_mesh_height(m, cur, res->point[0], res->point[2], &y);
    res->point[1] = y;
    if (hit && wall != NAV_NONE) {
        const float *a = nav_poly_vert(m, cur, wall), *b = nav_poly_vert(m, cur, wall + 1);
        double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2], l = sqrt(dx * dx + dz * dz);
        if (l > 0) {
            /* edge a -> b has the interior on its right: (dz, -dx) points inward */
            res->normal[0] = (float)(dz / l);
            res->normal[2] = (float)(-dx / l);
        }
    }
    return NAV_OK;
}
