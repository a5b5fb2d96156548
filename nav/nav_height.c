/*
 * nav_height: the walkable surface of a polygon.
 *
 * Owns nav_mesh_height, nav_mesh_closest_on_poly and
 * nav_mesh_poly_contains_xz. The surface of a polygon is its detail
 * triangles when the mesh has a height mesh (and the polygon has triangles),
 * else the fan triangulation from vertex 0. A point is lifted with the
 * triangle that contains it in xz; when none does (a point outside the
 * polygon, or in a crack between detail triangles) the closest point of the
 * triangles in xz gives the height.
 */
#include "nav/nav_mesh_internal.h"

/* Barycentric slack: points this far outside a triangle (in barycentric
   units) still count as inside, so shared edges never fall in a crack. */
#define NAV_BARY_EPS 1e-6
/* A point this far (metres) outside a polygon edge in xz is still inside. */
#define NAV_CONTAINS_EPS 1e-5

static uint32_t nav_tri_count(const nav_mesh *m, uint32_t p) {
    if (m->detail_poly_tris && m->detail_poly_tris[2 * (size_t)p + 1])
        return m->detail_poly_tris[2 * (size_t)p + 1];
    return nav_poly_nverts(m, p) - 2;
}

static const float *nav_detail_vert(const nav_mesh *m, uint32_t i) {
    return i < m->nverts ? nav_vert(m, i) : &m->detail_verts[3 * (size_t)(i - m->nverts)];
}

static void nav_tri(const nav_mesh *m, uint32_t p, uint32_t t, const float *v[3]) {
    if (m->detail_poly_tris && m->detail_poly_tris[2 * (size_t)p + 1]) {
        const uint32_t *tri = &m->detail_tris[3 * ((size_t)m->detail_poly_tris[2 * (size_t)p] + t)];
        for (int k = 0; k < 3; k++)
            v[k] = nav_detail_vert(m, tri[k]);
        return;
    }
    v[0] = nav_poly_vert(m, p, 0);
    v[1] = nav_poly_vert(m, p, t + 1);
    v[2] = nav_poly_vert(m, p, t + 2);
}

/* Closest point of segment a-b to (x, z) in xz: squared distance, and the
   height interpolated along the segment. */
static double nav_seg_closest(const float *a, const float *b, double x, double z, double *y,
                              double *ox, double *oz) {
    double dx = (double)b[0] - a[0], dz = (double)b[2] - a[2];
    double l2 = dx * dx + dz * dz;
    double t = l2 > 0 ? ((x - a[0]) * dx + (z - a[2]) * dz) / l2 : 0;
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    double px = a[0] + t * dx, pz = a[2] + t * dz;
    if (y)
        *y = a[1] + t * ((double)b[1] - a[1]);
    if (ox)
        *ox = px;
    if (oz)
        *oz = pz;
    return (px - x) * (px - x) + (pz - z) * (pz - z);
}

float nav_height_unchecked(const nav_mesh *m, uint32_t p, double x, double z) {
    uint32_t nt = nav_tri_count(m, p);
    double best_d = INFINITY, best_y = 0;
    for (uint32_t t = 0; t < nt; t++) {
        const float *v[3];
        nav_tri(m, p, t, v);
        double e1x = (double)v[1][0] - v[0][0], e1z = (double)v[1][2] - v[0][2];
        double e2x = (double)v[2][0] - v[0][0], e2z = (double)v[2][2] - v[0][2];
        double det = e1x * e2z - e1z * e2x;
        double scale = fabs(e1x) + fabs(e1z) + fabs(e2x) + fabs(e2z);
        if (fabs(det) > 1e-12 * scale * scale) {
            double px = x - v[0][0], pz = z - v[0][2];
            double u = (px * e2z - pz * e2x) / det; /* weight of v[1] */
            double w = (e1x * pz - e1z * px) / det; /* weight of v[2] */
            if (u >= -NAV_BARY_EPS && w >= -NAV_BARY_EPS && u + w <= 1 + NAV_BARY_EPS)
                return (float)(v[0][1] + u * ((double)v[1][1] - v[0][1]) +
                               w * ((double)v[2][1] - v[0][1]));
        }
        for (int k = 0; k < 3; k++) {
            double y;
            double d = nav_seg_closest(v[k], v[(k + 1) % 3], x, z, &y, NULL, NULL);
            if (d < best_d) {
                best_d = d;
                best_y = y;
            }
        }
    }
    return (float)best_y;
}

bool nav_contains_unchecked(const nav_mesh *m, uint32_t p, double x, double z) {
    uint32_t n = nav_poly_nverts(m, p);
    for (uint32_t k = 0; k < n; k++) {
        const float *a = nav_poly_vert(m, p, k), *b = nav_poly_vert(m, p, k + 1);
        /* nav_cross2 < 0 is the interior side; allow a thin slack outside:
           c / |ab| is the distance outside the edge's line. */
        double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
        double c = ex * (z - a[2]) - ez * (x - a[0]);
        if (c > 0 && c * c > NAV_CONTAINS_EPS * NAV_CONTAINS_EPS * (ex * ex + ez * ez))
            return false;
    }
    return true;
}

void nav_closest_unchecked(const nav_mesh *m, uint32_t p, const float pt[3], float out[3]) {
    double x = pt[0], z = pt[2];
    if (!nav_contains_unchecked(m, p, x, z)) {
        uint32_t n = nav_poly_nverts(m, p);
        double best = INFINITY, bx = x, bz = z;
        for (uint32_t k = 0; k < n; k++) {
            double ox, oz;
            double d = nav_seg_closest(nav_poly_vert(m, p, k), nav_poly_vert(m, p, k + 1), x, z,
                                       NULL, &ox, &oz);
            if (d < best) {
                best = d;
                bx = ox;
                bz = oz;
            }
        }
        x = bx;
        z = bz;
    }
    out[0] = (float)x;
    out[2] = (float)z;
    out[1] = nav_height_unchecked(m, p, x, z);
}

nav_status nav_mesh_height(const nav_mesh *m, uint32_t poly, float x, float z, float *y) {
    if (y)
        *y = 0;
    if (!m || !y || poly >= m->npolys || !isfinite(x) || !isfinite(z))
        return NAV_E_INVALID_ARG;
    *y = nav_height_unchecked(m, poly, x, z);
    return NAV_OK;
}

nav_status nav_mesh_closest_on_poly(const nav_mesh *m, uint32_t poly, const float p[3],
                                    float out[3]) {
    if (out)
        out[0] = out[1] = out[2] = 0;
    if (!m || !p || !out || poly >= m->npolys || !isfinite(p[0]) || !isfinite(p[1]) ||
        !isfinite(p[2]))
        return NAV_E_INVALID_ARG;
    nav_closest_unchecked(m, poly, p, out);
    return NAV_OK;
}

bool nav_mesh_poly_contains_xz(const nav_mesh *m, uint32_t poly, float x, float z) {
    if (!m || poly >= m->npolys || !isfinite(x) || !isfinite(z))
        return false;
    return nav_contains_unchecked(m, poly, x, z);
}
