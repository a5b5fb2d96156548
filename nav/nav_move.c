/*
 * nav_move: moving a point along the mesh surface (nav_move_along_surface).
 *
 * Owns the one primitive every steering move goes through, so nothing the
 * steering computes can leave the mesh. The method is Detour's
 * moveAlongSurface idea: a breadth-first walk from the start polygon through
 * portals, limited to polygons touching the circle that has start -> target
 * as its diameter; if a visited polygon contains the target, the move ends
 * there, else it ends at the point of the visited walls closest to the
 * target. That closest point is the projection of the blocked motion on the
 * wall, which is exactly "slide along the wall" (and a corner when two walls
 * meet). Everything is in the xz plane; the height comes from the surface.
 */
#include <math.h>
#include <string.h>

#include "nav/nav_internal.h"
#include "nav/nav_steer.h"
#include "nav/nav_steer_internal.h"

#define MOVE_MAX_VISIT 256

static bool finite3(const float *v) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* Closest point of segment a-b to p in xz; returns the squared distance. */
static double closest_on_seg(const float *a, const float *b, double px, double pz, double *cx,
                             double *cz) {
    double abx = (double)b[0] - a[0], abz = (double)b[2] - a[2];
    double len2 = abx * abx + abz * abz;
    double t = 0.0;
    if (len2 > 0.0) {
        t = ((px - a[0]) * abx + (pz - a[2]) * abz) / len2;
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    }
    *cx = a[0] + abx * t;
    *cz = a[2] + abz * t;
    double dx = px - *cx, dz = pz - *cz;
    return dx * dx + dz * dz;
}

static bool poly_usable(const nav_mesh *m, uint32_t p, uint64_t exclude) {
    return p != NAV_NONE && !((exclude >> m->areas[p]) & 1u);
}

nav_status nav_move_along_surface(const nav_mesh *m, uint32_t start_poly, const float start[3],
                                  const float target[3], const nav_filter *filter, float out[3],
                                  uint32_t *out_poly) {
    nav_status st = nav_move_xz(m, start_poly, start, target, filter, out, out_poly);
    if (st != NAV_OK)
        return st;
    float y = start[1];
    st = nav_mesh_height(m, *out_poly, out[0], out[2], &y);
    if (st != NAV_OK) {
        memset(out, 0, 3 * sizeof(float));
        *out_poly = NAV_NONE;
        return st;
    }
    out[1] = y;
    return NAV_OK;
}

nav_status nav_move_xz(const nav_mesh *m, uint32_t start_poly, const float start[3],
                       const float target[3], const nav_filter *filter, float out[3],
                       uint32_t *out_poly) {
    if (out)
        memset(out, 0, 3 * sizeof(float));
    if (out_poly)
        *out_poly = NAV_NONE;
    if (!m || !start || !target || !out || !out_poly || start_poly >= m->npolys ||
        !finite3(start) || !finite3(target))
        return NAV_E_INVALID_ARG;
    uint64_t exclude = filter ? filter->exclude_mask : 0;

    uint32_t visit[MOVE_MAX_VISIT];
    uint32_t nvisit = 0, head = 0;
    visit[nvisit++] = start_poly;

    double tx = target[0], tz = target[2];
    /* The search circle: start -> target is its diameter (plus a hair so
       polygons touching its rim at the start are not missed). */
    double cx = 0.5 * ((double)start[0] + tx), cz = 0.5 * ((double)start[2] + tz);
    double dx = tx - start[0], dz = tz - start[2];
    double rad = 0.5 * sqrt(dx * dx + dz * dz) + 1e-3;
    double rad2 = rad * rad;

    double best_x = start[0], best_z = start[2];
    double best_d2 = dx * dx + dz * dz;
    uint32_t best_poly = start_poly;

    while (head < nvisit) {
        uint32_t p = visit[head++];
        if (nav_mesh_poly_contains_xz(m, p, (float)tx, (float)tz)) {
            best_x = tx;
            best_z = tz;
            best_poly = p;
            break;
        }
        uint32_t n = nav_poly_nverts(m, p), s0 = m->poly_start[p];
        for (uint32_t e = 0; e < n; e++) {
            const float *a = nav_poly_vert(m, p, e);
            const float *b = nav_poly_vert(m, p, e + 1);
            uint32_t nei = m->poly_nei[s0 + e];
            double qx, qz;
            if (!poly_usable(m, nei, exclude)) {
                /* A wall: its closest point to the target is a candidate end. */
                double d2 = closest_on_seg(a, b, tx, tz, &qx, &qz);
                if (d2 < best_d2) {
                    best_d2 = d2;
                    best_x = qx;
                    best_z = qz;
                    best_poly = p;
                }
                continue;
            }
            /* A portal: walk through it only when it touches the circle. */
            if (closest_on_seg(a, b, cx, cz, &qx, &qz) > rad2)
                continue;
            bool seen = false;
            for (uint32_t k = 0; k < nvisit && !seen; k++)
                seen = visit[k] == nei;
            if (!seen && nvisit < MOVE_MAX_VISIT)
                visit[nvisit++] = nei;
        }
    }

    out[0] = (float)best_x;
    out[1] = start[1];
    out[2] = (float)best_z;
    *out_poly = best_poly;
    return NAV_OK;
}
