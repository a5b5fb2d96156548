/*
 * nav_height: the walkable surface of a polygon.
 *
 * Owns nav_mesh_height, nav_mesh_closest_on_poly and
 * nav_mesh_poly_contains_xz, and the per-polygon grids that make the height
 * lookup cheap. The surface of a polygon is its detail triangles when the
 * mesh has a height mesh (and the polygon has triangles), else the fan
 * triangulation from vertex 0. A point is lifted with the first triangle (in
 * stored order) that contains it in xz; when none does (a point outside the
 * polygon, or in a crack between detail triangles) the closest point of the
 * triangles in xz gives the height.
 *
 * Recast polygons carry up to a few hundred detail triangles on rough
 * terrain, so scanning them all dominated snapping. A polygon with at least
 * NAV_GRID_MIN_TRIS triangles gets a small uniform xz grid at build time
 * whose cells list the triangles that could contain a point of the cell
 * (boxes widened by the containment test's own slack and rounding error),
 * in stored order. The first containing triangle of the cell is then the
 * first containing triangle of the polygon, and an empty result proves no
 * triangle contains the point: the answer is bit-for-bit the full scan's
 * (nav_height_scan, kept as the reference the tests compare with).
 */
#include <stdlib.h>

#include "nav/nav_mesh_internal.h"

/* Barycentric slack: points this far outside a triangle (in barycentric
   units) still count as inside, so shared edges never fall in a crack. */
#define NAV_BARY_EPS 1e-6
/* A point this far (metres) outside a polygon edge in xz is still inside. */
#define NAV_CONTAINS_EPS 1e-5
/* Polygons with at least this many detail triangles get a grid; below it
   the plain scan is as fast. */
#define NAV_GRID_MIN_TRIS 6
/* Target detail triangles per grid cell, and the grid's largest side. */
#define NAV_GRID_TRIS_PER_CELL 2.0
#define NAV_GRID_MAX_SIDE 32.0
/* Most grid entries per triangle of a polygon (else it keeps the scan). */
#define NAV_GRID_MAX_COPIES 16

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

/* Lifts (x, z) with triangle v when it contains the point (barycentric
   slack NAV_BARY_EPS); false when it does not or is degenerate in xz. */
static inline bool nav_tri_lift(const float *const v[3], double x, double z, float *y) {
    double e1x = (double)v[1][0] - v[0][0], e1z = (double)v[1][2] - v[0][2];
    double e2x = (double)v[2][0] - v[0][0], e2z = (double)v[2][2] - v[0][2];
    double det = e1x * e2z - e1z * e2x;
    double scale = fabs(e1x) + fabs(e1z) + fabs(e2x) + fabs(e2z);
    if (!(fabs(det) > 1e-12 * scale * scale))
        return false;
    double px = x - v[0][0], pz = z - v[0][2];
    double u = (px * e2z - pz * e2x) / det; /* weight of v[1] */
    double w = (e1x * pz - e1z * px) / det; /* weight of v[2] */
    if (u >= -NAV_BARY_EPS && w >= -NAV_BARY_EPS && u + w <= 1 + NAV_BARY_EPS) {
        *y = (float)(v[0][1] + u * ((double)v[1][1] - v[0][1]) + w * ((double)v[2][1] - v[0][1]));
        return true;
    }
    return false;
}

/* Accumulates the edges of triangle t (vertices v) into the running
   closest edge point, ordered by (squared distance, t, edge): the order in
   which nav_height_closest_edge's scan keeps the first minimum, so visiting
   triangles in any order, even twice, gives its answer. */
static inline void nav_edge_min(const float *const v[3], uint32_t t, double x, double z,
                                double *best_d, uint32_t *best_te, double *best_y) {
    for (uint32_t k = 0; k < 3; k++) {
        double y;
        double d = nav_seg_closest(v[k], v[(k + 1) % 3], x, z, &y, NULL, NULL);
        uint32_t te = 3 * t + k;
        if (d < *best_d || (d == *best_d && te < *best_te)) {
            *best_d = d;
            *best_te = te;
            *best_y = y;
        }
    }
}

/* Height of the closest point of the triangles' edges in xz (the first
   closest in stored order), for points no triangle contains. */
static float nav_height_closest_edge(const nav_mesh *m, uint32_t p, uint32_t nt, double x,
                                     double z) {
    double best_d = INFINITY, best_y = 0;
    uint32_t best_te = UINT32_MAX;
    for (uint32_t t = 0; t < nt; t++) {
        const float *v[3];
        nav_tri(m, p, t, v);
        nav_edge_min(v, t, x, z, &best_d, &best_te, &best_y);
    }
    return (float)best_y;
}

float nav_height_scan(const nav_mesh *m, uint32_t p, double x, double z) {
    uint32_t nt = nav_tri_count(m, p);
    for (uint32_t t = 0; t < nt; t++) {
        const float *v[3];
        float y;
        nav_tri(m, p, t, v);
        if (nav_tri_lift(v, x, z, &y))
            return y;
    }
    return nav_height_closest_edge(m, p, nt, x, z);
}

/* Grid cell of coordinate v along one axis, clamped into [0, n). Monotone
   in v (so a point inside a box maps between the box's end cells), which
   is all the bucketing relies on; points off the grid land in its border
   cells, where they find no containing triangle, correctly. */
static inline uint32_t nav_cell(double v, double v0, double s, uint32_t n) {
    double f = (v - v0) * s;
    if (!(f > 0))
        return 0;
    if (f >= (double)n)
        return n - 1;
    return (uint32_t)f;
}

/* nav_height_closest_edge through the grid: rings of cells around the
   point's cell, outward, until the unvisited cells are all farther than the
   best edge so far (every point of a triangle lies in a cell it is listed
   in, so a closer edge would have been seen). Points in cracks sit next to
   an edge, so the first ring nearly always settles it. */
static float nav_grid_closest_edge(const nav_mesh *m, const nav_mesh_ext *xm,
                                   const nav_tri_grid *gr, const uint32_t *tris, double x,
                                   double z) {
    uint32_t cx = nav_cell(x, gr->x0, gr->sx, gr->nx), cz = nav_cell(z, gr->z0, gr->sz, gr->nz);
    double cw = gr->nx > 1 ? 1.0 / gr->sx : INFINITY, cd = gr->nz > 1 ? 1.0 / gr->sz : INFINITY;
    double mincell = fmin(cw, cd);
    uint32_t rmax = cx;
    rmax = gr->nx - 1 - cx > rmax ? gr->nx - 1 - cx : rmax;
    rmax = cz > rmax ? cz : rmax;
    rmax = gr->nz - 1 - cz > rmax ? gr->nz - 1 - cz : rmax;
    double best_d = INFINITY, best_y = 0;
    uint32_t best_te = UINT32_MAX;
    for (uint32_t r = 0; r <= rmax; r++) {
        /* Unvisited cells are r or more cells away: at least (r - 1) cell
           sizes from the point, less a hair for the rounding of nav_cell. */
        if (r > 1) {
            double gap = (r - 1) * mincell * (1 - 1e-9) - 1e-9;
            if (gap > 0 && gap * gap > best_d)
                break;
        }
        uint32_t z0 = cz >= r ? cz - r : 0, z1 = cz + r < gr->nz ? cz + r : gr->nz - 1u;
        uint32_t x0 = cx >= r ? cx - r : 0, x1 = cx + r < gr->nx ? cx + r : gr->nx - 1u;
        for (uint32_t j = z0; j <= z1; j++) {
            bool edge_row = j + r == cz || j == cz + r;
            for (uint32_t i = x0; i <= x1; i++) {
                if (!edge_row && i + r != cx && i != cx + r)
                    continue; /* inside the ring: visited already */
                uint32_t c = gr->first_cell + j * gr->nx + i;
                for (uint32_t e = xm->grid_cells[c]; e < xm->grid_cells[c + 1]; e++) {
                    uint32_t t = xm->grid_tris[e];
                    const uint32_t *tri = &tris[3 * (size_t)t];
                    const float *v[3] = {nav_detail_vert(m, tri[0]), nav_detail_vert(m, tri[1]),
                                         nav_detail_vert(m, tri[2])};
                    nav_edge_min(v, t, x, z, &best_d, &best_te, &best_y);
                }
            }
        }
    }
    return (float)best_y;
}

float nav_height_unchecked(const nav_mesh *m, uint32_t p, double x, double z) {
    const nav_mesh_ext *xm = nav_mesh_ext_of(m);
    uint32_t g = xm->tri_grid_of ? xm->tri_grid_of[p] : NAV_NONE;
    if (g == NAV_NONE)
        return nav_height_scan(m, p, x, z);
    const nav_tri_grid *gr = &xm->tri_grids[g];
    uint32_t c = gr->first_cell + nav_cell(z, gr->z0, gr->sz, gr->nz) * gr->nx +
                 nav_cell(x, gr->x0, gr->sx, gr->nx);
    const uint32_t *tris = &m->detail_tris[3 * (size_t)m->detail_poly_tris[2 * (size_t)p]];
    for (uint32_t i = xm->grid_cells[c]; i < xm->grid_cells[c + 1]; i++) {
        const uint32_t *tri = &tris[3 * (size_t)xm->grid_tris[i]];
        const float *v[3] = {nav_detail_vert(m, tri[0]), nav_detail_vert(m, tri[1]),
                             nav_detail_vert(m, tri[2])};
        float y;
        if (nav_tri_lift(v, x, z, &y))
            return y;
    }
    /* The cell lists every triangle that could contain (x, z): none does. */
    return nav_grid_closest_edge(m, xm, gr, tris, x, z);
}

/* ---- building the grids ---- */

/* Triangle t of polygon p as an xz box that holds the triangle and every
   point the containment test accepts (for a triangle degenerate in xz,
   which never accepts one, just its edges). The widening covers the barycentric slack (each
   weight may reach -NAV_BARY_EPS, moving the point by up to that fraction
   of the edges) and the rounding of u and w, whose error grows with the
   coordinate magnitude and the triangle's conditioning (edge lengths
   squared over twice its area); both bounds are generous by a wide factor. */
static void nav_tri_box(const nav_mesh *m, uint32_t p, uint32_t t, double lo[2], double hi[2]) {
    const float *v[3];
    nav_tri(m, p, t, v);
    double e1x = (double)v[1][0] - v[0][0], e1z = (double)v[1][2] - v[0][2];
    double e2x = (double)v[2][0] - v[0][0], e2z = (double)v[2][2] - v[0][2];
    double det = e1x * e2z - e1z * e2x;
    double scale = fabs(e1x) + fabs(e1z) + fabs(e2x) + fabs(e2z);
    bool lifts = fabs(det) > 1e-12 * scale * scale;
    double mag = 0;
    for (int k = 0; k < 3; k++) {
        mag = fmax(mag, fabs((double)v[k][0]));
        mag = fmax(mag, fabs((double)v[k][2]));
    }
    double margin = 1e-9 * (1 + mag);
    if (lifts)
        margin += 4 * NAV_BARY_EPS * scale + 1e-13 * (mag + scale) * scale * scale / fabs(det);
    for (int a = 0; a < 2; a++) {
        int ax = a ? 2 : 0;
        lo[a] = fmin(fmin(v[0][ax], v[1][ax]), v[2][ax]) - margin;
        hi[a] = fmax(fmax(v[0][ax], v[1][ax]), v[2][ax]) + margin;
    }
}

/* Grid shape for polygon p (with nt detail triangles): about one cell per
   NAV_GRID_TRIS_PER_CELL triangles, cells roughly square. */
static void nav_grid_shape(const nav_mesh *m, uint32_t p, uint32_t nt, nav_tri_grid *g) {
    const float *b = &m->poly_bounds[6 * (size_t)p];
    double w = (double)b[3] - b[0], d = (double)b[5] - b[2];
    double cells = fmax(1.0, (double)nt / NAV_GRID_TRIS_PER_CELL);
    double nx = w > 0 && d > 0 ? round(sqrt(cells * w / d)) : (w > 0 ? cells : 1);
    nx = fmin(fmax(nx, 1.0), NAV_GRID_MAX_SIDE);
    double nz = d > 0 ? fmin(fmax(round(cells / nx), 1.0), NAV_GRID_MAX_SIDE) : 1;
    g->nx = (uint16_t)nx;
    g->nz = (uint16_t)nz;
    g->x0 = b[0];
    g->z0 = b[2];
    g->sx = w > 0 ? nx / w : 0;
    g->sz = d > 0 ? nz / d : 0;
}

/* Cell range of triangle t of polygon p in grid g. */
static void nav_tri_cells(const nav_mesh *m, uint32_t p, uint32_t t, const nav_tri_grid *g,
                          uint32_t c0[2], uint32_t c1[2]) {
    double lo[2], hi[2];
    nav_tri_box(m, p, t, lo, hi);
    c0[0] = nav_cell(lo[0], g->x0, g->sx, g->nx);
    c1[0] = nav_cell(hi[0], g->x0, g->sx, g->nx);
    c0[1] = nav_cell(lo[1], g->z0, g->sz, g->nz);
    c1[1] = nav_cell(hi[1], g->z0, g->sz, g->nz);
}

/* Number of (cell, triangle) entries polygon p's grid g would hold. */
static size_t nav_grid_entries(const nav_mesh *m, uint32_t p, const nav_tri_grid *g) {
    size_t total = 0;
    uint32_t nt = m->detail_poly_tris[2 * (size_t)p + 1];
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t c0[2], c1[2];
        nav_tri_cells(m, p, t, g, c0, c1);
        total += (size_t)(c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1);
    }
    return total;
}

static bool nav_wants_grid(const nav_mesh *m, uint32_t p) {
    if (!m->detail_poly_tris)
        return false;
    uint32_t nt = m->detail_poly_tris[2 * (size_t)p + 1];
    return nt >= NAV_GRID_MIN_TRIS && nt <= UINT16_MAX;
}

void nav_height_accel_free(nav_mesh_ext *x) {
    free(x->tri_grid_of);
    free(x->tri_grids);
    free(x->grid_cells);
    free(x->grid_tris);
    x->tri_grid_of = NULL;
    x->tri_grids = NULL;
    x->grid_cells = NULL;
    x->grid_tris = NULL;
}

/* Three passes over the qualifying polygons: shapes and cell counts, then
   entries per cell (counted, prefix-summed into starts), then the entries
   themselves, filled in triangle order so every cell's list is sorted. */
nav_status nav_height_accel_build(nav_mesh_ext *x) {
    const nav_mesh *m = &x->m;
    uint32_t ngrids = 0;
    for (uint32_t p = 0; p < m->npolys; p++)
        ngrids += nav_wants_grid(m, p);
    if (ngrids == 0)
        return NAV_OK;
    x->tri_grid_of = malloc((size_t)m->npolys * sizeof *x->tri_grid_of);
    x->tri_grids = malloc((size_t)ngrids * sizeof *x->tri_grids);
    if (!x->tri_grid_of || !x->tri_grids)
        goto nomem;
    size_t ncells = 0;
    ngrids = 0;
    for (uint32_t p = 0; p < m->npolys; p++) {
        x->tri_grid_of[p] = NAV_NONE;
        if (!nav_wants_grid(m, p))
            continue;
        nav_tri_grid *g = &x->tri_grids[ngrids];
        uint32_t nt = m->detail_poly_tris[2 * (size_t)p + 1];
        nav_grid_shape(m, p, nt, g);
        /* Polygons whose triangles overlap too many cells each (crafted
           uploads: huge overlapping triangles) keep the plain scan, so the
           grids never take more than NAV_GRID_MAX_COPIES entries per
           triangle; so do any beyond the 32-bit cell range. */
        if (ncells + (size_t)g->nx * g->nz > UINT32_MAX - 1 ||
            nav_grid_entries(m, p, g) > (size_t)NAV_GRID_MAX_COPIES * nt)
            continue;
        g->first_cell = (uint32_t)ncells;
        ncells += (size_t)g->nx * g->nz;
        x->tri_grid_of[p] = ngrids++;
    }
    x->grid_cells = calloc(ncells + 1, sizeof *x->grid_cells);
    if (!x->grid_cells)
        goto nomem;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t p = 0; p < m->npolys; p++) {
            if (x->tri_grid_of[p] == NAV_NONE)
                continue;
            const nav_tri_grid *g = &x->tri_grids[x->tri_grid_of[p]];
            uint32_t nt = m->detail_poly_tris[2 * (size_t)p + 1];
            for (uint32_t t = 0; t < nt; t++) {
                uint32_t c0[2], c1[2];
                nav_tri_cells(m, p, t, g, c0, c1);
                for (uint32_t cz = c0[1]; cz <= c1[1]; cz++)
                    for (uint32_t cx = c0[0]; cx <= c1[0]; cx++) {
                        uint32_t c = g->first_cell + cz * g->nx + cx;
                        if (pass == 0)
                            x->grid_cells[c + 1]++;
                        else
                            x->grid_tris[x->grid_cells[c + 1]++] = (uint16_t)t;
                    }
            }
        }
        if (pass == 0) {
            /* grid_cells[c + 1] holds cell c's count: turn it into cell c's
               start; the fill pass advances it to cell c's end, which is
               cell c + 1's start, and grid_cells[0] stays 0. */
            size_t total = 0;
            for (size_t c = 1; c <= ncells; c++) {
                if (total + x->grid_cells[c] > UINT32_MAX)
                    goto nomem;
                uint32_t n = x->grid_cells[c];
                x->grid_cells[c] = (uint32_t)total;
                total += n;
            }
            x->grid_tris = malloc((total ? total : 1) * sizeof *x->grid_tris);
            if (!x->grid_tris)
                goto nomem;
            x->memory += (total ? total : 1) * sizeof *x->grid_tris;
        }
    }
    x->memory += (size_t)m->npolys * sizeof *x->tri_grid_of +
                 (size_t)ngrids * sizeof *x->tri_grids + (ncells + 1) * sizeof *x->grid_cells;
    return NAV_OK;
nomem:
    nav_height_accel_free(x);
    return NAV_E_NOMEM;
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

double nav_contains_reach(const nav_mesh *m, uint32_t p) {
    uint32_t n = nav_poly_nverts(m, p);
    double r = NAV_CONTAINS_EPS;
    for (uint32_t k = 0; k < n; k++) {
        /* the slack moves each edge out by EPS; the corner between two of
           them moves out by EPS / sin(half its interior angle) */
        const float *u = nav_poly_vert(m, p, k + n - 1), *v = nav_poly_vert(m, p, k),
                    *w = nav_poly_vert(m, p, k + 1);
        double ax = (double)u[0] - v[0], az = (double)u[2] - v[2];
        double bx = (double)w[0] - v[0], bz = (double)w[2] - v[2];
        double la = sqrt(ax * ax + az * az), lb = sqrt(bx * bx + bz * bz);
        if (la == 0 || lb == 0)
            return 1.0;
        double c = (ax * bx + az * bz) / (la * lb);
        double s = sqrt(fmax((1 - c) / 2, 0));
        if (s * 1.0 < NAV_CONTAINS_EPS)
            return 1.0;
        r = fmax(r, NAV_CONTAINS_EPS / s);
    }
    return r < 1.0 ? r : 1.0;
}

void nav_boundary_closest_xz(const nav_mesh *m, uint32_t p, double x, double z, double *ox,
                             double *oz) {
    uint32_t n = nav_poly_nverts(m, p);
    double best = INFINITY, bx = x, bz = z;
    for (uint32_t k = 0; k < n; k++) {
        double sx, sz;
        double d = nav_seg_closest(nav_poly_vert(m, p, k), nav_poly_vert(m, p, k + 1), x, z, NULL,
                                   &sx, &sz);
        if (d < best) {
            best = d;
            bx = sx;
            bz = sz;
        }
    }
    *ox = bx;
    *oz = bz;
}

void nav_closest_unchecked(const nav_mesh *m, uint32_t p, const float pt[3], float out[3]) {
    double x = pt[0], z = pt[2];
    if (!nav_contains_unchecked(m, p, x, z))
        nav_boundary_closest_xz(m, p, pt[0], pt[2], &x, &z);
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
