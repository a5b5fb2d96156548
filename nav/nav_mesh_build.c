/*
 * nav_mesh_build: turns a user's nav_mesh_input into an immutable nav_mesh.
 *
 * Owns validation (every rejection names the offending polygon, vertex or
 * link), vertex welding, winding normalization, edge adjacency, off-mesh link
 * snapping, undirected components, directed reachability (strongly connected
 * components and their transitive closure), bounds and area, plus the O(1)
 * metadata accessors and nav_mesh_free.
 *
 * Validation order (the first failure is reported): limits; vertex
 * coordinates; polygon ranges, sizes and vertex indices; areas; detail mesh;
 * links; then, after welding, per polygon zero area / convexity; then edges
 * shared by more than two polygons.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "nav/nav_corner.h"
#include "nav/nav_optimal.h"

/* fminf/fmaxf are library calls here (NaN rules); inputs are finite. */
static inline float nav_minf(float a, float b) {
    return a < b ? a : b;
}
static inline float nav_maxf(float a, float b) {
    return a > b ? a : b;
}

/* Beyond this many strongly connected components the closure table
   (nscc^2 bits: 2 MiB at 4096) is not built; reachable() searches instead. */
#define NAV_SCC_CLOSURE_MAX 4096u

/* Link ends are snapped within max(radius, LINK_SNAP_MIN_H) horizontally and
   LINK_SNAP_V vertically, the same rule as nav_mesh_nearest. */
#define NAV_LINK_SNAP_MIN_H 0.5f
#define NAV_LINK_SNAP_V 2.0f

static atomic_uint_fast64_t nav_next_uid = 1;

uint64_t nav_mesh_next_uid(void) {
    return atomic_fetch_add(&nav_next_uid, 1);
}

nav_status nav_set_error(nav_error *err, nav_status s, const char *fmt, ...) {
    if (err) {
        err->status = s;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* ---- small allocation helpers that keep the memory tally ---- */

static void *mesh_alloc(nav_mesh_ext *x, size_t n, size_t size, bool clear) {
    if (n == 0)
        n = 1;
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = clear ? calloc(n, size) : malloc(n * size);
    if (p)
        x->memory += n * size;
    return p;
}

void *nav_mesh_alloc(nav_mesh_ext *x, size_t n, size_t size) {
    return mesh_alloc(x, n, size, true);
}

void *nav_mesh_alloc_raw(nav_mesh_ext *x, size_t n, size_t size) {
    return mesh_alloc(x, n, size, false);
}

void nav_mesh_free(nav_mesh *m) {
    if (!m)
        return;
    nav_mesh_ext *x = (nav_mesh_ext *)m;
    free(m->verts);
    free(m->poly_start);
    free(m->poly_verts);
    free(m->poly_nei);
    free(m->areas);
    free(m->poly_bounds);
    free(m->poly_centroid);
    free(m->poly_area);
    free(m->links);
    free(m->link_out_start);
    free(m->link_out);
    free(m->detail_verts);
    free(m->detail_tris);
    free(m->detail_poly_tris);
    free(m->component);
    free(m->scc);
    free(m->scc_reach);
    free(m->scc_dag_start);
    free(m->scc_dag);
    free(m->bvh);
    free(m->poly_twin);
    free(m->poly_corner);
    free(m->poly_open);
    nav_corner_free(m->cgraph);
    free(x->link_in);
    nav_height_accel_free(x);
    free(x);
}

/* ---- validation of the raw input ---- */

static bool nav_finite3(const float *v) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static nav_status nav_check_limits(const nav_mesh_input *in, const nav_mesh_limits *lim,
                                   nav_error *err) {
    if (!lim)
        return NAV_OK;
    if (lim->max_verts && in->nverts > lim->max_verts)
        return nav_set_error(err, NAV_E_LIMIT,
                             "the navmesh has %u vertices, more than the limit of %u", in->nverts,
                             lim->max_verts);
    if (lim->max_polys && in->npolys > lim->max_polys)
        return nav_set_error(err, NAV_E_LIMIT,
                             "the navmesh has %u polygons, more than the limit of %u", in->npolys,
                             lim->max_polys);
    if (lim->max_links && in->nlinks > lim->max_links)
        return nav_set_error(err, NAV_E_LIMIT,
                             "the navmesh has %u links, more than the limit of %u", in->nlinks,
                             lim->max_links);
    if (lim->max_verts_per_poly && in->poly_start) {
        for (uint32_t p = 0; p < in->npolys; p++) {
            uint32_t a = in->poly_start[p], b = in->poly_start[p + 1];
            if (b > a && b - a > lim->max_verts_per_poly)
                return nav_set_error(err, NAV_E_LIMIT,
                                     "polygons[%u] has %u vertices, more than the limit of %u", p,
                                     b - a, lim->max_verts_per_poly);
        }
    }
    return NAV_OK;
}

nav_status nav_mesh_check_input(const nav_mesh_input *in, nav_error *err) {
    if ((in->nverts && !in->verts) || (in->npolys && (!in->poly_start || !in->poly_verts)) ||
        (in->nlinks && !in->links))
        return nav_set_error(err, NAV_E_INVALID_ARG, "the navmesh input has a missing array");
    if (in->npolys == 0)
        return nav_set_error(err, NAV_E_INVALID_MESH, "the navmesh has no polygons");
    for (uint32_t v = 0; v < in->nverts; v++)
        if (!nav_finite3(&in->verts[3 * (size_t)v]))
            return nav_set_error(err, NAV_E_INVALID_MESH,
                                 "vertices[%u] has a non-finite coordinate", v);
    if (in->poly_start[0] != 0)
        return nav_set_error(err, NAV_E_INVALID_MESH, "polygons[0] does not start at index 0");
    for (uint32_t p = 0; p < in->npolys; p++) {
        uint32_t a = in->poly_start[p], b = in->poly_start[p + 1];
        if (b < a)
            return nav_set_error(err, NAV_E_INVALID_MESH, "polygons[%u] has an invalid index range",
                                 p);
        if (b - a < 3)
            return nav_set_error(err, NAV_E_INVALID_MESH, "polygons[%u] has fewer than 3 vertices",
                                 p);
        for (uint32_t k = a; k < b; k++)
            if (in->poly_verts[k] >= in->nverts)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "polygons[%u] references vertex %u but there are %u vertices",
                                     p, in->poly_verts[k], in->nverts);
        /* The same index twice in one polygon ([0, 1, 1, 2]) is a broken
           export, even where dropping the repeat would leave a valid polygon:
           refused, by name, rather than silently repaired. Polygons are
           short (the limit is --max-verts-per-poly), so a quadratic scan of
           one polygon costs nothing next to the build. */
        for (uint32_t k = a; k < b; k++)
            for (uint32_t j = k + 1; j < b && j - a < 4096; j++)
                if (in->poly_verts[k] == in->poly_verts[j])
                    return nav_set_error(err, NAV_E_INVALID_MESH,
                                         "polygons[%u] uses vertex %u more than once", p,
                                         in->poly_verts[k]);
    }
    if (in->areas)
        for (uint32_t p = 0; p < in->npolys; p++)
            if (in->areas[p] >= NAV_MAX_AREAS)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "areas[%u] is %u, outside 0..63 (polygons[%u])", p,
                                     in->areas[p], p);
    bool has_detail = in->detail_poly_tris || in->ndetail_tris || in->ndetail_verts;
    if (has_detail) {
        if (!in->detail_poly_tris || (in->ndetail_tris && !in->detail_tris) ||
            (in->ndetail_verts && !in->detail_verts))
            return nav_set_error(err, NAV_E_INVALID_MESH,
                                 "the detail mesh needs vertices, triangles and polygon_triangles");
        for (uint32_t v = 0; v < in->ndetail_verts; v++)
            if (!nav_finite3(&in->detail_verts[3 * (size_t)v]))
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "detail vertices[%u] has a non-finite coordinate", v);
        uint64_t nall = (uint64_t)in->nverts + in->ndetail_verts;
        for (uint32_t t = 0; t < in->ndetail_tris; t++)
            for (int k = 0; k < 3; k++)
                if (in->detail_tris[3 * (size_t)t + k] >= nall)
                    return nav_set_error(
                        err, NAV_E_INVALID_MESH,
                        "detail triangles[%u] references vertex %u but there are %u vertices and "
                        "%u detail vertices",
                        t, in->detail_tris[3 * (size_t)t + k], in->nverts, in->ndetail_verts);
        for (uint32_t p = 0; p < in->npolys; p++) {
            uint64_t first = in->detail_poly_tris[2 * (size_t)p];
            uint64_t count = in->detail_poly_tris[2 * (size_t)p + 1];
            if (first + count > in->ndetail_tris)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "detail polygon_triangles[%u] = [%u, %u] is outside the %u "
                                     "detail triangles",
                                     p, (unsigned)first, (unsigned)count, in->ndetail_tris);
            /* An empty range gives the polygon no surface at all. */
            if (count == 0)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "detail polygon_triangles[%u] = [%u, 0] covers no triangle", p,
                                     (unsigned)first);
        }
        /* A triangle with no area has no surface to take a height from: zero
           up to float rounding, relative to its longest edge as polygons are. */
        for (uint32_t t = 0; t < in->ndetail_tris; t++) {
            double v[3][3];
            for (int k = 0; k < 3; k++) {
                uint32_t i = in->detail_tris[3 * (size_t)t + k];
                const float *src = i < in->nverts ? &in->verts[3 * (size_t)i]
                                                  : &in->detail_verts[3 * (size_t)(i - in->nverts)];
                for (int c = 0; c < 3; c++)
                    v[k][c] = src[c];
            }
            double e1[3], e2[3], e3[3], cr[3];
            for (int c = 0; c < 3; c++) {
                e1[c] = v[1][c] - v[0][c];
                e2[c] = v[2][c] - v[0][c];
                e3[c] = v[2][c] - v[1][c];
            }
            cr[0] = e1[1] * e2[2] - e1[2] * e2[1];
            cr[1] = e1[2] * e2[0] - e1[0] * e2[2];
            cr[2] = e1[0] * e2[1] - e1[1] * e2[0];
            double area2 = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
            double l2 = fmax(fmax(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2],
                                  e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]),
                             e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2]);
            if (l2 == 0 || area2 <= 1e-9 * l2)
                return nav_set_error(err, NAV_E_INVALID_MESH, "detail triangles[%u] has zero area",
                                     t);
        }
    }
    for (uint32_t l = 0; l < in->nlinks; l++) {
        const nav_link_input *li = &in->links[l];
        if (!nav_finite3(li->start) || !nav_finite3(li->end) || !isfinite(li->radius))
            return nav_set_error(err, NAV_E_INVALID_MESH, "links[%u] has a non-finite coordinate",
                                 l);
        if (li->radius < 0)
            return nav_set_error(err, NAV_E_INVALID_MESH, "links[%u] has a negative radius", l);
        if (li->area >= NAV_MAX_AREAS)
            return nav_set_error(err, NAV_E_INVALID_MESH, "links[%u] has area %u, outside 0..63", l,
                                 li->area);
    }
    return NAV_OK;
}

/* ---- welding ---- */

/*
 * Maps every input vertex to a representative: the first vertex (lowest
 * index) within NAV_WELD_EPSILON on every axis of it. Vertices are compared
 * with representatives only, so representatives are pairwise further apart
 * than the epsilon and welding the output again changes nothing.
 * A hash grid with cells of the epsilon's size finds candidates in the 27
 * neighbouring cells. weld[v] receives the representative's input index.
 */
static int64_t nav_cell_of(float c) {
    double q = floor((double)c / NAV_WELD_EPSILON);
    if (q > 4e18)
        q = 4e18;
    if (q < -4e18)
        q = -4e18;
    return (int64_t)q;
}

static uint64_t nav_hash3(int64_t x, int64_t y, int64_t z) {
    uint64_t h = (uint64_t)x * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)y * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)z * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    return h;
}

static nav_status nav_weld(const float *verts, uint32_t n, uint32_t *weld) {
    size_t cap = 16;
    while (cap < (size_t)n * 2)
        cap <<= 1;
    /* head[slot] = first representative hashed there (+1, 0 = empty);
       chain through next[]. Collisions of different cells share a chain,
       which only costs a comparison. */
    uint32_t *head = calloc(cap, sizeof *head);
    uint32_t *next = malloc(((size_t)n + 1) * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return NAV_E_NOMEM;
    }
    for (uint32_t v = 0; v < n; v++) {
        const float *p = &verts[3 * (size_t)v];
        int64_t cx = nav_cell_of(p[0]), cy = nav_cell_of(p[1]), cz = nav_cell_of(p[2]);
        uint32_t best = UINT32_MAX;
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dz = -1; dz <= 1; dz++) {
                    size_t slot = nav_hash3(cx + dx, cy + dy, cz + dz) & (cap - 1);
                    for (uint32_t r = head[slot]; r; r = next[r - 1]) {
                        const float *q = &verts[3 * (size_t)(r - 1)];
                        if (fabsf(q[0] - p[0]) <= NAV_WELD_EPSILON &&
                            fabsf(q[1] - p[1]) <= NAV_WELD_EPSILON &&
                            fabsf(q[2] - p[2]) <= NAV_WELD_EPSILON && r - 1 < best)
                            best = r - 1;
                    }
                }
        if (best != UINT32_MAX) {
            weld[v] = best;
        } else {
            weld[v] = v;
            size_t slot = nav_hash3(cx, cy, cz) & (cap - 1);
            next[v] = head[slot];
            head[slot] = v + 1;
        }
    }
    free(head);
    free(next);
    return NAV_OK;
}

/* ---- polygon geometry checks ---- */

/* Twice the signed xz area of polygon ids[0..n) over verts. */
double nav_mesh_signed_area2(const float *verts, const uint32_t *ids, uint32_t n) {
    double s = 0;
    for (uint32_t i = 0; i < n; i++) {
        const float *a = &verts[3 * (size_t)ids[i]], *b = &verts[3 * (size_t)ids[(i + 1) % n]];
        s += (double)a[0] * b[2] - (double)b[0] * a[2];
    }
    return s;
}

/*
 * Convexity of a polygon already in negative-area order: every turn is to
 * the interior side (cross < 0) or collinear within a relative tolerance,
 * no edge doubles back, and the boundary turns exactly once around (a
 * pentagram has all turns on one side but winds twice).
 */
bool nav_mesh_is_convex(const float *verts, const uint32_t *ids, uint32_t n) {
    int wraps = 0;
    for (uint32_t i = 0; i < n; i++) {
        const float *a = &verts[3 * (size_t)ids[(i + n - 1) % n]];
        const float *b = &verts[3 * (size_t)ids[i]];
        const float *c = &verts[3 * (size_t)ids[(i + 1) % n]];
        double e1x = (double)b[0] - a[0], e1z = (double)b[2] - a[2];
        double e2x = (double)c[0] - b[0], e2z = (double)c[2] - b[2];
        double cross = e1x * e2z - e1z * e2x;
        double dot = e1x * e2x + e1z * e2z;
        double l1 = sqrt(e1x * e1x + e1z * e1z), l2 = sqrt(e2x * e2x + e2z * e2z);
        if (l1 == 0 || l2 == 0)
            return false;
        /* nearly straight turns are let through either way, so the loop's
           turning number counts every turn, these too */
        wraps += nav_turn_wrap(e1x, e1z, e2x, e2z);
        if (fabs(cross) <= 1e-6 * l1 * l2) {
            if (dot < 0)
                return false; /* the boundary doubles back on itself */
            continue;
        }
        if (cross > 0)
            return false;
    }
    /* every real turn clockwise: once around is -1, a loop that winds twice
       (a star's outline walked as a polygon) is -2 */
    return wraps >= -1;
}

/* ---- adjacency ---- */

typedef struct nav_edge_rec {
    uint64_t key; /* (min vertex << 32) | max vertex */
    uint32_t poly, slot;
} nav_edge_rec;

static int nav_edge_cmp(const void *pa, const void *pb) {
    const nav_edge_rec *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->poly != b->poly)
        return a->poly < b->poly ? -1 : 1;
    return a->slot < b->slot ? -1 : (a->slot > b->slot);
}

static nav_status nav_build_adjacency(nav_mesh *m, const uint32_t *orig_of, nav_error *err) {
    size_t ne = m->poly_start[m->npolys];
    nav_edge_rec *e = malloc((ne ? ne : 1) * sizeof *e);
    if (!e)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory building adjacency");
    for (uint32_t p = 0; p < m->npolys; p++) {
        uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t a = m->poly_verts[s + k], b = m->poly_verts[s + (k + 1) % n];
            uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
            e[s + k] = (nav_edge_rec){((uint64_t)lo << 32) | hi, p, s + k};
        }
    }
    qsort(e, ne, sizeof *e, nav_edge_cmp);
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && e[j].key == e[i].key)
            j++;
        if (j - i == 2) {
            m->poly_nei[e[i].slot] = e[i + 1].poly;
            m->poly_nei[e[i + 1].slot] = e[i].poly;
            m->poly_twin[e[i].slot] = e[i + 1].slot;
            m->poly_twin[e[i + 1].slot] = e[i].slot;
        } else if (j - i > 2) {
            char list[128];
            size_t len = 0;
            for (size_t k = i; k < j && len < sizeof list - 16; k++) {
                const char *sep = k == i ? "" : (k + 1 == j ? " and " : ", ");
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", sep, e[k].poly);
            }
            uint32_t lo = (uint32_t)(e[i].key >> 32), hi = (uint32_t)e[i].key;
            nav_status s = nav_set_error(
                err, NAV_E_INVALID_MESH,
                "the edge between vertices %u and %u is shared by more than two polygons "
                "(polygons %s)",
                orig_of[lo] < orig_of[hi] ? orig_of[lo] : orig_of[hi],
                orig_of[lo] < orig_of[hi] ? orig_of[hi] : orig_of[lo], list);
            free(e);
            return s;
        }
        i = j;
    }
    free(e);
    return NAV_OK;
}

/* ---- components and reachability ---- */

static uint32_t nav_uf_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void nav_uf_union(uint32_t *parent, uint32_t a, uint32_t b) {
    a = nav_uf_find(parent, a);
    b = nav_uf_find(parent, b);
    if (a != b) {
        if (a < b)
            parent[b] = a;
        else
            parent[a] = b;
    }
}

/* Polygon reached by taking link_out entry `entry` (see NAV_LINK_REVERSE). */
static uint32_t nav_link_target(const nav_mesh *m, uint32_t entry) {
    const nav_link *l = &m->links[entry & ~NAV_LINK_REVERSE];
    return (entry & NAV_LINK_REVERSE) ? l->start_poly : l->end_poly;
}

static nav_status nav_build_components(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    uint32_t n = m->npolys;
    uint32_t *parent = malloc((size_t)n * sizeof *parent);
    m->component = nav_mesh_alloc(x, n, sizeof *m->component);
    if (!parent || !m->component) {
        free(parent);
        return NAV_E_NOMEM;
    }
    for (uint32_t p = 0; p < n; p++)
        parent[p] = p;
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t k = m->poly_start[p]; k < m->poly_start[p + 1]; k++)
            if (m->poly_nei[k] != NAV_NONE)
                nav_uf_union(parent, p, m->poly_nei[k]);
    for (uint32_t l = 0; l < m->nlinks; l++)
        if (m->links[l].start_poly != NAV_NONE && m->links[l].end_poly != NAV_NONE)
            nav_uf_union(parent, m->links[l].start_poly, m->links[l].end_poly);
    /* Number components in order of their lowest polygon: deterministic. */
    uint32_t nc = 0;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t r = nav_uf_find(parent, p);
        if (r == p)
            m->component[p] = nc++;
        else
            m->component[p] = m->component[r];
    }
    m->ncomponents = nc;
    free(parent);
    return NAV_OK;
}

/* Directed successors of polygon p: its edge neighbours, then its links. */
static uint32_t nav_succ_count(const nav_mesh *m, uint32_t p) {
    return nav_poly_nverts(m, p) + (m->link_out_start[p + 1] - m->link_out_start[p]);
}

static uint32_t nav_succ(const nav_mesh *m, uint32_t p, uint32_t i) {
    uint32_t nv = nav_poly_nverts(m, p);
    if (i < nv)
        return m->poly_nei[m->poly_start[p] + i];
    return nav_link_target(m, m->link_out[m->link_out_start[p] + i - nv]);
}

/*
 * Tarjan's strongly connected components, iterative (meshes reach 100k+
 * polygons, far beyond a safe recursion depth). SCC ids come out in reverse
 * topological order: every DAG edge goes from a higher id to a lower one,
 * which the closure below relies on.
 */
static nav_status nav_build_scc(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    uint32_t n = m->npolys;
    uint32_t *index = malloc((size_t)n * sizeof *index);
    uint32_t *low = malloc((size_t)n * sizeof *low);
    uint32_t *stack = malloc((size_t)n * sizeof *stack);   /* Tarjan's stack */
    uint32_t *cstack = malloc((size_t)n * sizeof *cstack); /* call stack: node */
    uint32_t *citer = malloc((size_t)n * sizeof *citer);   /* call stack: next successor */
    uint8_t *onstack = calloc(n ? n : 1, 1);
    m->scc = nav_mesh_alloc(x, n, sizeof *m->scc);
    nav_status st = NAV_E_NOMEM;
    if (!index || !low || !stack || !cstack || !citer || !onstack || !m->scc)
        goto out;
    for (uint32_t p = 0; p < n; p++)
        index[p] = NAV_NONE;
    uint32_t counter = 0, sp = 0, nscc = 0;
    for (uint32_t root = 0; root < n; root++) {
        if (index[root] != NAV_NONE)
            continue;
        uint32_t csp = 0;
        cstack[csp] = root;
        citer[csp++] = 0;
        index[root] = low[root] = counter++;
        stack[sp++] = root;
        onstack[root] = 1;
        while (csp) {
            uint32_t v = cstack[csp - 1];
            if (citer[csp - 1] < nav_succ_count(m, v)) {
                uint32_t w = nav_succ(m, v, citer[csp - 1]++);
                if (w == NAV_NONE)
                    continue;
                if (index[w] == NAV_NONE) {
                    index[w] = low[w] = counter++;
                    stack[sp++] = w;
                    onstack[w] = 1;
                    cstack[csp] = w;
                    citer[csp++] = 0;
                } else if (onstack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                uint32_t w;
                do {
                    w = stack[--sp];
                    onstack[w] = 0;
                    m->scc[w] = nscc;
                } while (w != v);
                nscc++;
            }
            csp--;
            if (csp) {
                uint32_t u = cstack[csp - 1];
                if (low[v] < low[u])
                    low[u] = low[v];
            }
        }
    }
    m->nscc = nscc;

    /* Condensed DAG: successor SCCs per SCC, deduplicated with a marker. */
    uint32_t *cnt = calloc((size_t)nscc + 1, sizeof *cnt);
    uint32_t *mark = malloc(((size_t)nscc + 1) * sizeof *mark);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order); /* polygons grouped by SCC */
    uint32_t *ostart = calloc((size_t)nscc + 1, sizeof *ostart);
    if (!cnt || !mark || !order || !ostart) {
        free(cnt);
        free(mark);
        free(order);
        free(ostart);
        goto out;
    }
    for (uint32_t p = 0; p < n; p++)
        ostart[m->scc[p]]++;
    for (uint32_t s = 0, acc = 0; s < nscc; s++) {
        uint32_t c = ostart[s];
        ostart[s] = acc;
        acc += c;
    }
    {
        uint32_t *fill = cnt; /* reuse as a cursor, reset below */
        for (uint32_t p = 0; p < n; p++)
            order[ostart[m->scc[p]] + fill[m->scc[p]]++] = p;
        memset(cnt, 0, ((size_t)nscc + 1) * sizeof *cnt);
    }
    /* Two passes over the same walk: count, then fill. */
    m->scc_dag_start = nav_mesh_alloc(x, (size_t)nscc + 1, sizeof *m->scc_dag_start);
    if (!m->scc_dag_start) {
        free(cnt);
        free(mark);
        free(order);
        free(ostart);
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t s = 0; s < nscc; s++)
            mark[s] = NAV_NONE;
        uint32_t total = 0;
        for (uint32_t s = 0; s < nscc; s++) {
            if (pass == 0)
                m->scc_dag_start[s] = total;
            uint32_t end = s + 1 < nscc ? ostart[s + 1] : n;
            uint32_t w = m->scc_dag_start[s];
            for (uint32_t k = ostart[s]; k < end; k++) {
                uint32_t p = order[k];
                for (uint32_t i = 0, c = nav_succ_count(m, p); i < c; i++) {
                    uint32_t q = nav_succ(m, p, i);
                    if (q == NAV_NONE || m->scc[q] == s || mark[m->scc[q]] == s)
                        continue;
                    mark[m->scc[q]] = s;
                    if (pass == 1)
                        m->scc_dag[w] = m->scc[q];
                    w++;
                    total++;
                }
            }
        }
        if (pass == 0) {
            m->scc_dag_start[nscc] = total;
            m->scc_dag = nav_mesh_alloc(x, total, sizeof *m->scc_dag);
            if (!m->scc_dag) {
                free(cnt);
                free(mark);
                free(order);
                free(ostart);
                goto out;
            }
        }
    }
    free(cnt);
    free(mark);
    free(order);
    free(ostart);

    st = nav_mesh_scc_closure(x);
out:
    free(index);
    free(low);
    free(stack);
    free(cstack);
    free(citer);
    free(onstack);
    return st;
}

nav_status nav_mesh_scc_closure(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    uint32_t nscc = m->nscc;
    /* Transitive closure: successors have lower ids, so one pass upward. */
    if (nscc <= NAV_SCC_CLOSURE_MAX) {
        size_t words = ((size_t)nscc + 63) / 64;
        m->scc_reach = nav_mesh_alloc(x, (size_t)nscc * words, sizeof *m->scc_reach);
        if (!m->scc_reach)
            return NAV_E_NOMEM;
        for (uint32_t s = 0; s < nscc; s++) {
            uint64_t *row = &m->scc_reach[(size_t)s * words];
            row[s / 64] |= 1ull << (s % 64);
            for (uint32_t k = m->scc_dag_start[s]; k < m->scc_dag_start[s + 1]; k++) {
                const uint64_t *succ = &m->scc_reach[(size_t)m->scc_dag[k] * words];
                for (size_t w = 0; w < words; w++)
                    row[w] |= succ[w];
            }
        }
    }
    return NAV_OK;
}

/*
 * Without the closure table (more than NAV_SCC_CLOSURE_MAX SCCs) this is a
 * depth-first search over the condensed DAG that allocates its visited set
 * and stack per call: acceptable because such meshes are rare (one-way links
 * by the thousand) and the DAG is far smaller than the polygon graph.
 */
bool nav_mesh_reachable(const nav_mesh *m, uint32_t a, uint32_t b) {
    if (!m || a >= m->npolys || b >= m->npolys)
        return false;
    uint32_t sa = m->scc[a], sb = m->scc[b];
    if (sa == sb)
        return true;
    if (m->component[a] != m->component[b] || sb > sa)
        return false; /* DAG edges only go to lower ids */
    if (m->scc_reach) {
        size_t words = ((size_t)m->nscc + 63) / 64;
        return (m->scc_reach[(size_t)sa * words + sb / 64] >> (sb % 64)) & 1;
    }
    uint8_t *seen = calloc(m->nscc, 1);
    uint32_t *stack = malloc((size_t)m->nscc * sizeof *stack);
    bool found = false;
    if (seen && stack) {
        uint32_t sp = 0;
        stack[sp++] = sa;
        seen[sa] = 1;
        while (sp && !found) {
            uint32_t s = stack[--sp];
            for (uint32_t k = m->scc_dag_start[s]; k < m->scc_dag_start[s + 1]; k++) {
                uint32_t t = m->scc_dag[k];
                if (t == sb) {
                    found = true;
                    break;
                }
                if (!seen[t] && t > sb) {
                    seen[t] = 1;
                    stack[sp++] = t;
                }
            }
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* ---- links ---- */

static nav_status nav_build_links(nav_mesh_ext *x, const nav_mesh_input *in) {
    nav_mesh *m = &x->m;
    m->nlinks = in->nlinks;
    m->links = nav_mesh_alloc(x, in->nlinks, sizeof *m->links);
    x->link_in = nav_mesh_alloc(x, in->nlinks, sizeof *x->link_in);
    if (!m->links || !x->link_in)
        return NAV_E_NOMEM;
    for (uint32_t i = 0; i < in->nlinks; i++) {
        const nav_link_input *li = &in->links[i];
        nav_link_input *ci = &x->link_in[i];
        *ci = *li;
        size_t kl = strnlen(li->kind, NAV_LINK_KIND_MAX - 1);
        memset(ci->kind, 0, sizeof ci->kind);
        memcpy(ci->kind, li->kind, kl);
        ci->bidirectional = li->bidirectional ? true : false;
        nav_link *l = &m->links[i];
        memcpy(l->start, li->start, sizeof l->start);
        memcpy(l->end, li->end, sizeof l->end);
        l->radius = li->radius;
        l->area = li->area;
        m->link_area_mask |= 1ull << (li->area & 63u);
        l->bidirectional = ci->bidirectional;
        memcpy(l->kind, ci->kind, sizeof l->kind);
        float h = li->radius > NAV_LINK_SNAP_MIN_H ? li->radius : NAV_LINK_SNAP_MIN_H;
        float ext[3] = {h, NAV_LINK_SNAP_V, h};
        if (nav_nearest_unchecked(m, l->start, ext, 0, &l->start_poly, l->start_on) != NAV_OK) {
            l->start_poly = NAV_NONE;
            memcpy(l->start_on, l->start, sizeof l->start_on);
        }
        if (nav_nearest_unchecked(m, l->end, ext, 0, &l->end_poly, l->end_on) != NAV_OK) {
            l->end_poly = NAV_NONE;
            memcpy(l->end_on, l->end, sizeof l->end_on);
        }
    }
    return nav_mesh_link_lists(x);
}

nav_status nav_mesh_link_lists(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    /* Counting sort of the link ends by polygon. */
    m->link_out_start = nav_mesh_alloc(x, (size_t)m->npolys + 1, sizeof *m->link_out_start);
    if (!m->link_out_start)
        return NAV_E_NOMEM;
    uint32_t total = 0;
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const nav_link *l = &m->links[i];
        if (l->start_poly == NAV_NONE || l->end_poly == NAV_NONE)
            continue;
        m->link_out_start[l->start_poly + 1]++;
        total++;
        if (l->bidirectional) {
            m->link_out_start[l->end_poly + 1]++;
            total++;
        }
    }
    for (uint32_t p = 0; p < m->npolys; p++)
        m->link_out_start[p + 1] += m->link_out_start[p];
    m->link_out = nav_mesh_alloc(x, total, sizeof *m->link_out);
    uint32_t *cur = malloc(((size_t)m->npolys + 1) * sizeof *cur);
    if (!m->link_out || !cur) {
        free(cur);
        return NAV_E_NOMEM;
    }
    memcpy(cur, m->link_out_start, ((size_t)m->npolys + 1) * sizeof *cur);
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const nav_link *l = &m->links[i];
        if (l->start_poly == NAV_NONE || l->end_poly == NAV_NONE)
            continue;
        m->link_out[cur[l->start_poly]++] = i;
        if (l->bidirectional)
            m->link_out[cur[l->end_poly]++] = i | NAV_LINK_REVERSE;
    }
    free(cur);
    return NAV_OK;
}

/* ---- the builder ---- */

typedef struct nav_build_tmp {
    uint32_t *weld;    /* input vertex -> representative input vertex */
    uint32_t *newid;   /* input vertex (representative) -> compact id, NAV_NONE if unused */
    uint32_t *orig_of; /* compact id -> representative input index (for messages) */
    uint32_t *pv;      /* polygon vertex ids in representative input indices */
    uint32_t *ps;      /* polygon starts after dropping repeats */
    uint32_t *extra;   /* unused top-level vertex -> appended detail vertex id */
    uint32_t *stamp;   /* vertex -> last polygon that used it (repeat check) */
} nav_build_tmp;

static void nav_tmp_free(nav_build_tmp *t) {
    free(t->weld);
    free(t->newid);
    free(t->orig_of);
    free(t->pv);
    free(t->ps);
    free(t->extra);
    free(t->stamp);
}

static int nav_cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Two polygons over the same (welded) vertex set are one polygon uploaded
 * twice: the area doubles (a 100 m2 square was reported as 200 m2) and
 * adjacency sees an edge shared three times. Each polygon's sorted vertex
 * list is hashed into an open-addressing table; equal hashes are compared
 * in full, so the answer never depends on a collision.
 */
static nav_status nav_check_duplicates(const nav_build_tmp *t, uint32_t npolys, nav_error *err) {
    size_t cap = 16;
    while (cap < 2 * (size_t)npolys)
        cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot);
    uint32_t *sorted = malloc(((size_t)t->ps[npolys] + 1) * sizeof *sorted);
    if (!slot || !sorted) {
        free(slot);
        free(sorted);
        return nav_set_error(err, NAV_E_NOMEM, "out of memory checking for duplicate polygons");
    }
    memcpy(sorted, t->pv, (size_t)t->ps[npolys] * sizeof *sorted);
    for (size_t i = 0; i < cap; i++)
        slot[i] = NAV_NONE;
    nav_status st = NAV_OK;
    for (uint32_t p = 0; p < npolys && st == NAV_OK; p++) {
        uint32_t *ids = &sorted[t->ps[p]], n = t->ps[p + 1] - t->ps[p];
        qsort(ids, n, sizeof *ids, nav_cmp_u32);
        uint64_t h = 1469598103934665603ull ^ n;
        for (uint32_t i = 0; i < n; i++)
            h = (h ^ ids[i]) * 1099511628211ull;
        for (size_t i = (size_t)(h & (cap - 1));; i = (i + 1) & (cap - 1)) {
            uint32_t q = slot[i];
            if (q == NAV_NONE) {
                slot[i] = p;
                break;
            }
            uint32_t m = t->ps[q + 1] - t->ps[q];
            if (m == n && memcmp(&sorted[t->ps[q]], ids, n * sizeof *ids) == 0) {
                st = nav_set_error(err, NAV_E_INVALID_MESH,
                                   "polygons[%u] has the same vertices as polygons[%u]", p, q);
                break;
            }
        }
    }
    free(slot);
    free(sorted);
    return st;
}

/* Welds, drops consecutive repeats, normalizes winding and checks each polygon. */
static nav_status nav_build_polys(nav_mesh_ext *x, const nav_mesh_input *in, nav_build_tmp *t,
                                  nav_error *err) {
    uint32_t total = in->poly_start[in->npolys];
    t->weld = malloc(((size_t)in->nverts + 1) * sizeof *t->weld);
    t->pv = malloc(((size_t)total + 1) * sizeof *t->pv);
    t->ps = malloc(((size_t)in->npolys + 1) * sizeof *t->ps);
    t->stamp = malloc(((size_t)in->nverts + 1) * sizeof *t->stamp);
    if (t->stamp)
        for (uint32_t v = 0; v < in->nverts; v++)
            t->stamp[v] = NAV_NONE;
    if (!t->weld || !t->pv || !t->ps || !t->stamp ||
        nav_weld(in->verts, in->nverts, t->weld) != NAV_OK)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory welding vertices");
    uint32_t w = 0;
    for (uint32_t p = 0; p < in->npolys; p++) {
        t->ps[p] = w;
        uint32_t *ids = &t->pv[w];
        uint32_t n = 0;
        for (uint32_t k = in->poly_start[p]; k < in->poly_start[p + 1]; k++) {
            uint32_t v = t->weld[in->poly_verts[k]];
            if (n == 0 || ids[n - 1] != v)
                ids[n++] = v;
        }
        while (n > 1 && ids[n - 1] == ids[0])
            n--;
        if (n < 3)
            return nav_set_error(err, NAV_E_INVALID_MESH,
                                 "polygons[%u] has zero area (fewer than 3 distinct vertices "
                                 "after welding)",
                                 p);
        double a2 = nav_mesh_signed_area2(in->verts, ids, n);
        double minx = INFINITY, maxx = -INFINITY, minz = INFINITY, maxz = -INFINITY;
        for (uint32_t i = 0; i < n; i++) {
            const float *v = &in->verts[3 * (size_t)ids[i]];
            minx = fmin(minx, v[0]);
            maxx = fmax(maxx, v[0]);
            minz = fmin(minz, v[2]);
            maxz = fmax(maxz, v[2]);
        }
        double diag2 = (maxx - minx) * (maxx - minx) + (maxz - minz) * (maxz - minz);
        if (fabs(a2) <= 1e-9 * diag2 || diag2 == 0)
            return nav_set_error(err, NAV_E_INVALID_MESH, "polygons[%u] has zero area", p);
        if (a2 > 0) /* reverse, keeping vertex 0 first */
            for (uint32_t i = 1, j = n - 1; i < j; i++, j--) {
                uint32_t tmp = ids[i];
                ids[i] = ids[j];
                ids[j] = tmp;
            }
        /* A stamp per vertex finds repeats in O(n), even for huge polygons. */
        for (uint32_t i = 0; i < n; i++) {
            if (t->stamp[ids[i]] == p)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "polygons[%u] uses vertex %u more than once", p, ids[i]);
            t->stamp[ids[i]] = p;
        }
        if (!nav_mesh_is_convex(in->verts, ids, n))
            return nav_set_error(err, NAV_E_INVALID_MESH,
                                 "polygons[%u] is not convex in the xz plane", p);
        w += n;
    }
    t->ps[in->npolys] = w;
    nav_status dup = nav_check_duplicates(t, in->npolys, err);
    if (dup != NAV_OK)
        return dup;

    /* Compact: keep referenced representatives in input order. */
    nav_mesh *m = &x->m;
    t->newid = malloc(((size_t)in->nverts + 1) * sizeof *t->newid);
    t->orig_of = malloc(((size_t)in->nverts + 1) * sizeof *t->orig_of);
    if (!t->newid || !t->orig_of)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    for (uint32_t v = 0; v < in->nverts; v++)
        t->newid[v] = NAV_NONE;
    for (uint32_t k = 0; k < w; k++)
        t->newid[t->pv[k]] = 0;
    uint32_t nv = 0;
    for (uint32_t v = 0; v < in->nverts; v++)
        if (t->newid[v] != NAV_NONE) {
            t->orig_of[nv] = v;
            t->newid[v] = nv++;
        }
    m->nverts = nv;
    m->npolys = in->npolys;
    m->verts = nav_mesh_alloc(x, (size_t)nv * 3, sizeof *m->verts);
    m->poly_start = nav_mesh_alloc(x, (size_t)m->npolys + 1, sizeof *m->poly_start);
    m->poly_verts = nav_mesh_alloc(x, w, sizeof *m->poly_verts);
    m->poly_nei = nav_mesh_alloc(x, w, sizeof *m->poly_nei);
    m->areas = nav_mesh_alloc(x, m->npolys, sizeof *m->areas);
    m->poly_twin = nav_mesh_alloc(x, w, sizeof *m->poly_twin);
    m->poly_corner = nav_mesh_alloc(x, w, sizeof *m->poly_corner);
    m->poly_open = nav_mesh_alloc(x, m->npolys, sizeof *m->poly_open);
    if (!m->verts || !m->poly_start || !m->poly_verts || !m->poly_nei || !m->areas ||
        !m->poly_twin || !m->poly_corner || !m->poly_open)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    for (uint32_t v = 0; v < nv; v++)
        memcpy(&m->verts[3 * (size_t)v], &in->verts[3 * (size_t)t->orig_of[v]], 3 * sizeof(float));
    memcpy(m->poly_start, t->ps, ((size_t)m->npolys + 1) * sizeof *m->poly_start);
    for (uint32_t k = 0; k < w; k++) {
        m->poly_verts[k] = t->newid[t->pv[k]];
        m->poly_nei[k] = NAV_NONE;
        m->poly_twin[k] = NAV_NONE;
    }
    if (in->areas)
        memcpy(m->areas, in->areas, m->npolys);
    for (uint32_t p = 0; p < m->npolys; p++)
        m->area_mask |= 1ull << m->areas[p];
    return NAV_OK;
}

/*
 * Copies the detail mesh into the welded index space: an index to a top-level
 * vertex follows the weld; if that vertex is used by no polygon (so it was
 * dropped) it is appended as an extra detail vertex. Detail vertices keep
 * their own order after the welded top-level ones.
 */
static nav_status nav_build_detail(nav_mesh_ext *x, const nav_mesh_input *in, nav_build_tmp *t) {
    nav_mesh *m = &x->m;
    if (!in->detail_poly_tris)
        return NAV_OK;
    uint32_t nextra = 0;
    t->extra = malloc(((size_t)in->nverts + 1) * sizeof *t->extra);
    if (!t->extra)
        return NAV_E_NOMEM;
    for (uint32_t v = 0; v < in->nverts; v++)
        t->extra[v] = NAV_NONE;
    for (size_t k = 0; k < (size_t)in->ndetail_tris * 3; k++) {
        uint32_t i = in->detail_tris[k];
        if (i < in->nverts) {
            uint32_t r = t->weld[i];
            if (t->newid[r] == NAV_NONE && t->extra[r] == NAV_NONE)
                t->extra[r] = in->ndetail_verts + nextra++;
        }
    }
    m->ndetail_verts = in->ndetail_verts + nextra;
    m->ndetail_tris = in->ndetail_tris;
    m->detail_verts = nav_mesh_alloc(x, (size_t)m->ndetail_verts * 3, sizeof *m->detail_verts);
    m->detail_tris = nav_mesh_alloc(x, (size_t)m->ndetail_tris * 3, sizeof *m->detail_tris);
    m->detail_poly_tris = nav_mesh_alloc(x, (size_t)m->npolys * 2, sizeof *m->detail_poly_tris);
    if (!m->detail_verts || !m->detail_tris || !m->detail_poly_tris)
        return NAV_E_NOMEM;
    if (in->ndetail_verts)
        memcpy(m->detail_verts, in->detail_verts, (size_t)in->ndetail_verts * 3 * sizeof(float));
    for (uint32_t v = 0; v < in->nverts; v++)
        if (t->extra[v] != NAV_NONE)
            memcpy(&m->detail_verts[3 * (size_t)t->extra[v]], &in->verts[3 * (size_t)v],
                   3 * sizeof(float));
    for (size_t k = 0; k < (size_t)in->ndetail_tris * 3; k++) {
        uint32_t i = in->detail_tris[k];
        if (i < in->nverts) {
            uint32_t r = t->weld[i];
            m->detail_tris[k] = t->newid[r] != NAV_NONE ? t->newid[r] : m->nverts + t->extra[r];
        } else {
            m->detail_tris[k] = m->nverts + (i - in->nverts);
        }
    }
    memcpy(m->detail_poly_tris, in->detail_poly_tris, (size_t)m->npolys * 2 * sizeof(uint32_t));
    return NAV_OK;
}

/* Bounds, areas and centroids; needs the detail mesh for the surface. */
nav_status nav_mesh_geometry(nav_mesh_ext *x, bool margin) {
    nav_mesh *m = &x->m;
    m->poly_bounds = nav_mesh_alloc_raw(x, (size_t)m->npolys * 6, sizeof *m->poly_bounds);
    m->poly_centroid = nav_mesh_alloc_raw(x, (size_t)m->npolys * 3, sizeof *m->poly_centroid);
    m->poly_area = nav_mesh_alloc_raw(x, m->npolys, sizeof *m->poly_area);
    if (!m->poly_bounds || !m->poly_centroid || !m->poly_area)
        return NAV_E_NOMEM;
    for (int a = 0; a < 3; a++) {
        m->bmin[a] = INFINITY;
        m->bmax[a] = -INFINITY;
    }
    for (uint32_t v = 0; v < m->nverts; v++)
        for (int a = 0; a < 3; a++) {
            m->bmin[a] = nav_minf(m->bmin[a], m->verts[3 * (size_t)v + a]);
            m->bmax[a] = nav_maxf(m->bmax[a], m->verts[3 * (size_t)v + a]);
        }
    m->area = 0;
    if (margin)
        m->contains_margin = 0;
    for (uint32_t p = 0; p < m->npolys; p++) {
        double reach = margin ? nav_contains_reach(m, p) : 0;
        if (reach > m->contains_margin)
            m->contains_margin = (float)reach;
        float *b = &m->poly_bounds[6 * (size_t)p];
        uint32_t n = nav_poly_nverts(m, p);
        double cx = 0, cz = 0;
        for (int a = 0; a < 3; a++) {
            b[a] = INFINITY;
            b[3 + a] = -INFINITY;
        }
        for (uint32_t k = 0; k < n; k++) {
            const float *v = nav_poly_vert(m, p, k);
            for (int a = 0; a < 3; a++) {
                b[a] = nav_minf(b[a], v[a]);
                b[3 + a] = nav_maxf(b[3 + a], v[a]);
            }
            cx += v[0];
            cz += v[2];
        }
        if (m->detail_poly_tris) {
            uint32_t first = m->detail_poly_tris[2 * (size_t)p];
            uint32_t count = m->detail_poly_tris[2 * (size_t)p + 1];
            for (uint32_t t = first; t < first + count; t++)
                for (int k = 0; k < 3; k++) {
                    uint32_t i = m->detail_tris[3 * (size_t)t + k];
                    const float *v = i < m->nverts ? nav_vert(m, i)
                                                   : &m->detail_verts[3 * (size_t)(i - m->nverts)];
                    for (int a = 0; a < 3; a++) {
                        b[a] = nav_minf(b[a], v[a]);
                        b[3 + a] = nav_maxf(b[3 + a], v[a]);
                    }
                }
        }
        double a2 = 0;
        for (uint32_t k = 0; k < n; k++) {
            const float *u = nav_poly_vert(m, p, k), *v = nav_poly_vert(m, p, k + 1);
            a2 += (double)u[0] * v[2] - (double)v[0] * u[2];
        }
        m->poly_area[p] = fabs(a2) * 0.5;
        m->area += m->poly_area[p];
        float *c = &m->poly_centroid[3 * (size_t)p];
        c[0] = (float)(cx / n);
        c[2] = (float)(cz / n);
        c[1] = nav_height_unchecked(m, p, c[0], c[2]);
    }
    return NAV_OK;
}

nav_status nav_mesh_build(const nav_mesh_input *in, const nav_mesh_limits *limits, nav_mesh **out,
                          nav_error *err) {
    return nav_mesh_build_ex(in, limits, 1, out, err);
}

nav_status nav_mesh_build_ex(const nav_mesh_input *in, const nav_mesh_limits *limits,
                             int corner_graph, nav_mesh **out, nav_error *err) {
    if (out)
        *out = NULL;
    if (err) {
        err->status = NAV_OK;
        err->message[0] = '\0';
    }
    if (!in || !out)
        return nav_set_error(err, NAV_E_INVALID_ARG, "nav_mesh_build needs an input and an output");
    nav_status st = nav_check_limits(in, limits, err);
    if (st == NAV_OK)
        st = nav_mesh_check_input(in, err);
    if (st != NAV_OK)
        return st;

    nav_mesh_ext *x = calloc(1, sizeof *x);
    if (!x)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    x->memory = sizeof *x;
    nav_mesh *m = &x->m;
    nav_build_tmp t = {0};
    st = nav_build_polys(x, in, &t, err);
    if (st == NAV_OK)
        st = nav_build_adjacency(m, t.orig_of, err);
    if (st == NAV_OK && nav_build_detail(x, in, &t) != NAV_OK)
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory copying the detail mesh");
    if (st == NAV_OK)
        nav_optimal_corners(m);
    if (st == NAV_OK && nav_mesh_geometry(x, true) != NAV_OK)
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
    if (st == NAV_OK && nav_height_accel_build(x) != NAV_OK)
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory indexing the detail mesh");
    if (st == NAV_OK && nav_index_build(m) != NAV_OK)
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory building the spatial index");
    if (st == NAV_OK) {
        x->memory += (size_t)m->nbvh * sizeof *m->bvh;
        if (nav_build_links(x, in) != NAV_OK || nav_build_components(x) != NAV_OK ||
            nav_build_scc(x) != NAV_OK)
            st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
    }
    if (st == NAV_OK && corner_graph > 0 &&
        nav_corner_build_mt(m, (uint32_t)corner_graph) != NAV_OK)
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory building the corner graph");
    if (st == NAV_OK) {
        x->memory += nav_corner_memory(m->cgraph);
        m->cgraph_origin = m->cgraph ? NAV_GRAPH_BUILT : NAV_GRAPH_NONE;
    }
    nav_tmp_free(&t);
    if (st != NAV_OK) {
        nav_mesh_free(m);
        return st;
    }
    m->uid = nav_mesh_next_uid();
    *out = m;
    return NAV_OK;
}

/* ---- metadata ---- */

uint64_t nav_mesh_uid(const nav_mesh *m) {
    return m ? m->uid : 0;
}
uint32_t nav_mesh_vertex_count(const nav_mesh *m) {
    return m ? m->nverts : 0;
}
uint32_t nav_mesh_polygon_count(const nav_mesh *m) {
    return m ? m->npolys : 0;
}
uint32_t nav_mesh_link_count(const nav_mesh *m) {
    return m ? m->nlinks : 0;
}
uint32_t nav_mesh_component_count(const nav_mesh *m) {
    return m ? m->ncomponents : 0;
}
void nav_mesh_bounds(const nav_mesh *m, float bmin[3], float bmax[3]) {
    for (int a = 0; a < 3; a++) {
        if (bmin)
            bmin[a] = m ? m->bmin[a] : 0;
        if (bmax)
            bmax[a] = m ? m->bmax[a] : 0;
    }
}
double nav_mesh_area(const nav_mesh *m) {
    return m ? m->area : 0;
}
bool nav_mesh_has_detail(const nav_mesh *m) {
    return m && m->detail_poly_tris;
}
nav_graph_origin nav_mesh_graph_origin(const nav_mesh *m) {
    return m ? (nav_graph_origin)m->cgraph_origin : NAV_GRAPH_NONE;
}

size_t nav_mesh_memory(const nav_mesh *m) {
    return m ? nav_mesh_ext_of(m)->memory : 0;
}
uint8_t nav_mesh_poly_area(const nav_mesh *m, uint32_t poly) {
    return m && poly < m->npolys ? m->areas[poly] : 0;
}
uint32_t nav_mesh_poly_component(const nav_mesh *m, uint32_t poly) {
    return m && poly < m->npolys ? m->component[poly] : NAV_NONE;
}
double nav_mesh_poly_area_xz(const nav_mesh *m, uint32_t poly) {
    return m && poly < m->npolys ? m->poly_area[poly] : 0;
}
const char *nav_mesh_link_kind(const nav_mesh *m, uint32_t link) {
    return m && link < m->nlinks ? m->links[link].kind : "";
}
void nav_mesh_link_points(const nav_mesh *m, uint32_t link, float start[3], float end[3]) {
    bool ok = m && link < m->nlinks;
    for (int a = 0; a < 3; a++) {
        if (start)
            start[a] = ok ? m->links[link].start[a] : 0;
        if (end)
            end[a] = ok ? m->links[link].end[a] : 0;
    }
}
