/*
 * nav_vol_geom: the exact geometric tests behind a volume's blocked voxels.
 *
 * A voxel is blocked when its closed cube comes within `radius` of a
 * triangle, i.e. when the triangle meets the cube grown by a ball of that
 * radius. That rounded cube is exactly the union of the three cubes grown
 * by `radius` along one axis only and the twelve capsules of radius
 * `radius` around the cube's edges (a point whose nearest cube point lies
 * on a face is in one of the former; on an edge or corner, in a capsule).
 * So the test is: a separating-axis test against the cube grown on every
 * axis (a quick necessary condition), then the three one-axis cubes, then
 * the edges' distances to the triangle. Distances are computed in double.
 */
#include <math.h>

#include "nav/nav_vol_internal.h"

static int axis_separates(const float v[3][3], const float ax[3], const float h[3]) {
    float r = h[0] * fabsf(ax[0]) + h[1] * fabsf(ax[1]) + h[2] * fabsf(ax[2]);
    float p0 = v[0][0] * ax[0] + v[0][1] * ax[1] + v[0][2] * ax[2];
    float p1 = v[1][0] * ax[0] + v[1][1] * ax[1] + v[1][2] * ax[2];
    float p2 = v[2][0] * ax[0] + v[2][1] * ax[1] + v[2][2] * ax[2];
    float lo = fminf(p0, fminf(p1, p2)), hi = fmaxf(p0, fmaxf(p1, p2));
    return lo > r || hi < -r;
}

int nav_vol_tri_box(const float t[3][3], const float c[3], const float h[3]) {
    float v[3][3], e[3][3];
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++)
            v[i][a] = t[i][a] - c[a];
    for (int a = 0; a < 3; a++) {
        float lo = fminf(v[0][a], fminf(v[1][a], v[2][a]));
        float hi = fmaxf(v[0][a], fmaxf(v[1][a], v[2][a]));
        if (lo > h[a] || hi < -h[a])
            return 0;
    }
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++)
            e[i][a] = v[(i + 1) % 3][a] - v[i][a];
    float nrm[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                    e[0][0] * e[1][1] - e[0][1] * e[1][0]};
    if (axis_separates(v, nrm, h))
        return 0;
    for (int i = 0; i < 3; i++) {
        float a0[3] = {0, -e[i][2], e[i][1]}, a1[3] = {e[i][2], 0, -e[i][0]},
              a2[3] = {-e[i][1], e[i][0], 0};
        if (axis_separates(v, a0, h) || axis_separates(v, a1, h) || axis_separates(v, a2, h))
            return 0;
    }
    return 1;
}

/* ---- distances in double ---- */

static double dd(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void dsub(const double a[3], const double b[3], double o[3]) {
    o[0] = a[0] - b[0], o[1] = a[1] - b[1], o[2] = a[2] - b[2];
}

/* Squared distance from p to triangle abc, by its Voronoi regions. */
static double point_tri2(const double p[3], const double a[3], const double b[3],
                         const double c[3]) {
    double ab[3], ac[3], ap[3], q[3];
    dsub(b, a, ab);
    dsub(c, a, ac);
    dsub(p, a, ap);
    double d1 = dd(ab, ap), d2 = dd(ac, ap);
    double bp[3], cp[3];
    dsub(p, b, bp);
    dsub(p, c, cp);
    double d3 = dd(ab, bp), d4 = dd(ac, bp), d5 = dd(ab, cp), d6 = dd(ac, cp);
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    double s = 0, t = 0; /* q = a + s ab + t ac */
    if (d1 <= 0 && d2 <= 0) {
        s = 0, t = 0;
    } else if (d3 >= 0 && d4 <= d3) {
        s = 1, t = 0;
    } else if (d6 >= 0 && d5 <= d6) {
        s = 0, t = 1;
    } else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        s = d1 / (d1 - d3), t = 0;
    } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        s = 0, t = d2 / (d2 - d6);
    } else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        s = 1 - w, t = w;
    } else {
        double den = va + vb + vc;
        s = vb / den, t = vc / den;
    }
    for (int k = 0; k < 3; k++)
        q[k] = a[k] + s * ab[k] + t * ac[k] - p[k];
    return dd(q, q);
}

static double clamp01(double x) {
    return x < 0 ? 0 : (x > 1 ? 1 : x);
}

/* Squared distance between segments p0p1 and q0q1. */
static double seg_seg2(const double p0[3], const double p1[3], const double q0[3],
                       const double q1[3]) {
    double u[3], w[3], r[3];
    dsub(p1, p0, u);
    dsub(q1, q0, w);
    dsub(p0, q0, r);
    double a = dd(u, u), e = dd(w, w), f = dd(w, r), c = dd(u, r), b = dd(u, w);
    double s, t;
    if (a < 1e-20 && e < 1e-20) {
        s = t = 0;
    } else if (a < 1e-20) {
        s = 0, t = clamp01(f / e);
    } else if (e < 1e-20) {
        t = 0, s = clamp01(-c / a);
    } else {
        double den = a * e - b * b;
        s = den > 1e-20 * a * e ? clamp01((b * f - c * e) / den) : 0;
        t = (b * s + f) / e;
        if (t < 0)
            t = 0, s = clamp01(-c / a);
        else if (t > 1)
            t = 1, s = clamp01((b - c) / a);
    }
    double d[3];
    for (int k = 0; k < 3; k++)
        d[k] = p0[k] + s * u[k] - (q0[k] + t * w[k]);
    return dd(d, d);
}

/* Whether segment p0p1 crosses triangle abc. */
static int seg_crosses_tri(const double p0[3], const double p1[3], const double a[3],
                           const double b[3], const double c[3]) {
    double e1[3], e2[3], d[3], s[3], h[3], q[3];
    dsub(b, a, e1);
    dsub(c, a, e2);
    dsub(p1, p0, d);
    h[0] = d[1] * e2[2] - d[2] * e2[1], h[1] = d[2] * e2[0] - d[0] * e2[2],
    h[2] = d[0] * e2[1] - d[1] * e2[0];
    double det = dd(e1, h);
    if (fabs(det) < 1e-18)
        return 0; /* parallel: the edge distances decide */
    dsub(p0, a, s);
    double u = dd(s, h) / det;
    if (u < 0 || u > 1)
        return 0;
    q[0] = s[1] * e1[2] - s[2] * e1[1], q[1] = s[2] * e1[0] - s[0] * e1[2],
    q[2] = s[0] * e1[1] - s[1] * e1[0];
    double v = dd(d, q) / det, t = dd(e2, q) / det;
    return v >= 0 && u + v <= 1 && t >= 0 && t <= 1;
}

static int seg_tri_within(const double p0[3], const double p1[3], const double t[3][3], double r2) {
    if (point_tri2(p0, t[0], t[1], t[2]) <= r2 || point_tri2(p1, t[0], t[1], t[2]) <= r2)
        return 1;
    for (int i = 0; i < 3; i++)
        if (seg_seg2(p0, p1, t[i], t[(i + 1) % 3]) <= r2)
            return 1;
    return seg_crosses_tri(p0, p1, t[0], t[1], t[2]);
}

int nav_vol_tri_near_box(const float t[3][3], const float c[3], float h, float r) {
    float hr[3] = {h + r, h + r, h + r};
    if (!nav_vol_tri_box(t, c, hr))
        return 0;
    for (int a = 0; a < 3; a++) {
        float ha[3] = {h, h, h};
        ha[a] += r;
        if (nav_vol_tri_box(t, c, ha))
            return 1;
    }
    if (r <= 0)
        return 0;
    double td[3][3];
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++)
            td[i][a] = (double)t[i][a] - c[a];
    double r2 = (double)r * r;
    /* the 12 edges: 4 along each axis a, at the corners of the other two */
    for (int a = 0; a < 3; a++) {
        int b = (a + 1) % 3, d = (a + 2) % 3;
        for (int k = 0; k < 4; k++) {
            double p0[3], p1[3];
            p0[a] = -h, p1[a] = h;
            p0[b] = p1[b] = k & 1 ? h : -h;
            p0[d] = p1[d] = k & 2 ? h : -h;
            if (seg_tri_within(p0, p1, td, r2))
                return 1;
        }
    }
    return 0;
}
