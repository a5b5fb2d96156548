/*
 * nav_bake_links.c: off-mesh links generated at ledges, per profile, from
 * the baked mesh and the level's triangles.
 *
 * Every wall edge of the mesh (an edge with no neighbour) is probed
 * outwards, perpendicular to the edge, in steps of half a cell, as far as
 * 2 x radius + 4 cells + max(drop, climb) for a lower floor (two eroded
 * margins, the ledge cells, and a slope too steep to walk, which is at
 * most as wide as it is high) and 2 x radius + a cell + jump for a jump:
 * - the first floor of the mesh found lower by more than the profile's
 *   max_climb and at most `drop` (resp. `climb`) below gives a one-way
 *   "drop" link down (resp. a one-way "climb" link up to the ledge);
 * - a floor at about the same height (within max_climb) reached only
 *   across a gap (nothing walkable at that height in between) no wider
 *   than `jump` (the mesh's gap less the two erosion margins, 2 x radius)
 *   gives a one-way "jump" link (the far side's own edge gives the way
 *   back).
 * A link is kept only when the level's geometry leaves room: the straight
 * line from the ledge to above the landing point, at knee and at head
 * height, and the fall from there to the landing floor, cross no
 * triangle.
 *
 * Placement is sparse and deterministic: candidates sit at the middle of
 * each wall edge and every `spacing` metres along longer ones, spacing =
 * max(3 m, 4 x radius); a candidate is dropped when a link of the same
 * kind already starts and ends within `spacing` of its own ends. Edges are
 * visited in polygon order, so the same mesh gives the same links.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"
#include "nav/nav_internal.h"

/* ---- the level's triangles in a uniform xz grid, for clearance tests ---- */
struct nb_trigrid {
    const float *v;
    const uint32_t *t;
    float x0, z0, cell;
    int w, h;
    uint32_t *start, *items;
};

void nb_trigrid_free(nb_trigrid *g) {
    if (!g)
        return;
    free(g->start);
    free(g->items);
    free(g);
}

nb_trigrid *nb_trigrid_new(const nav_level *lv) {
    nb_trigrid *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->v = nav_level_vertices(lv);
    g->t = nav_level_triangles(lv);
    uint32_t nt = nav_level_triangle_count(lv);
    float bmin[3], bmax[3];
    nav_level_bounds(lv, bmin, bmax);
    double area = ((double)bmax[0] - bmin[0]) * ((double)bmax[2] - bmin[2]);
    g->cell = (float)fmax(1.0, sqrt(area / (double)(nt + 1)) * 2.0);
    g->x0 = bmin[0];
    g->z0 = bmin[2];
    g->w = (int)((bmax[0] - bmin[0]) / g->cell) + 1;
    g->h = (int)((bmax[2] - bmin[2]) / g->cell) + 1;
    g->start = calloc((size_t)g->w * g->h + 1, sizeof *g->start);
    if (!g->start) {
        nb_trigrid_free(g);
        return NULL;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < nt; t++) {
            float mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY};
            for (int k = 0; k < 3; k++) {
                const float *p = &g->v[3 * (size_t)g->t[3 * (size_t)t + k]];
                mn[0] = fminf(mn[0], p[0]), mx[0] = fmaxf(mx[0], p[0]);
                mn[1] = fminf(mn[1], p[2]), mx[1] = fmaxf(mx[1], p[2]);
            }
            int ax = (int)((mn[0] - g->x0) / g->cell), bx = (int)((mx[0] - g->x0) / g->cell);
            int az = (int)((mn[1] - g->z0) / g->cell), bz = (int)((mx[1] - g->z0) / g->cell);
            for (int z = az; z <= bz && z < g->h; z++)
                for (int x = ax; x <= bx && x < g->w; x++) {
                    size_t c = (size_t)x + (size_t)z * g->w;
                    if (pass == 0)
                        g->start[c + 1]++;
                    else
                        g->items[g->start[c]++] = t;
                }
        }
        if (pass == 0) {
            for (size_t i = 1; i <= (size_t)g->w * g->h; i++)
                g->start[i] += g->start[i - 1];
            g->items = malloc(((size_t)g->start[(size_t)g->w * g->h] + 1) * sizeof *g->items);
            if (!g->items) {
                nb_trigrid_free(g);
                return NULL;
            }
        } else {
            for (size_t i = (size_t)g->w * g->h; i > 0; i--)
                g->start[i] = g->start[i - 1];
            g->start[0] = 0;
        }
    }
    return g;
}

/* Segment p-q meets triangle t (both ends included). */
static bool nb_seg_tri(const nb_trigrid *g, uint32_t t, const float *p, const float *q) {
    const float *a = &g->v[3 * (size_t)g->t[3 * (size_t)t]];
    const float *b = &g->v[3 * (size_t)g->t[3 * (size_t)t + 1]];
    const float *c = &g->v[3 * (size_t)g->t[3 * (size_t)t + 2]];
    double e1[3], e2[3], d[3], s[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
        d[k] = (double)q[k] - p[k];
        s[k] = (double)p[k] - a[k];
    }
    double h[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2],
                   d[0] * e2[1] - d[1] * e2[0]};
    double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
    if (fabs(det) < 1e-12)
        return false;
    double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / det;
    if (u < 0 || u > 1)
        return false;
    double qv[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2],
                    s[0] * e1[1] - s[1] * e1[0]};
    double v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) / det;
    if (v < 0 || u + v > 1)
        return false;
    double tt = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / det;
    return tt >= 0 && tt <= 1;
}

/* Does segment p-q cross any triangle of the level? */
static bool nb_blocked(const nb_trigrid *g, const float *p, const float *q) {
    int ax = (int)floorf((fminf(p[0], q[0]) - g->x0) / g->cell);
    int bx = (int)floorf((fmaxf(p[0], q[0]) - g->x0) / g->cell);
    int az = (int)floorf((fminf(p[2], q[2]) - g->z0) / g->cell);
    int bz = (int)floorf((fmaxf(p[2], q[2]) - g->z0) / g->cell);
    ax = ax < 0 ? 0 : ax;
    az = az < 0 ? 0 : az;
    bx = bx >= g->w ? g->w - 1 : bx;
    bz = bz >= g->h ? g->h - 1 : bz;
    for (int z = az; z <= bz; z++)
        for (int x = ax; x <= bx; x++) {
            size_t c = (size_t)x + (size_t)z * g->w;
            for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++)
                if (nb_seg_tri(g, g->items[k], p, q))
                    return true;
        }
    return false;
}

/* ---- probing the mesh ---- */

/* Highest mesh floor under (x, z) within [ylo, yhi]; false when none. */
static bool nb_floor_at(const nav_mesh *m, float x, float z, float ylo, float yhi, float *y,
                        uint32_t *poly) {
    const float bmin[3] = {x - 1e-3f, ylo - 1.0f, z - 1e-3f};
    const float bmax[3] = {x + 1e-3f, yhi + 1.0f, z + 1e-3f};
    uint32_t ids[64];
    uint32_t n = nav_mesh_query_box(m, bmin, bmax, ids, 64);
    bool found = false;
    for (uint32_t i = 0; i < n && i < 64; i++) {
        if (!nav_mesh_poly_contains_xz(m, ids[i], x, z))
            continue;
        float h;
        if (nav_mesh_height(m, ids[i], x, z, &h) != NAV_OK || h < ylo || h > yhi)
            continue;
        if (!found || h > *y) {
            *y = h;
            *poly = ids[i];
            found = true;
        }
    }
    return found;
}

typedef struct nb_linkset {
    nav_link_input *v;
    uint32_t n, cap;
} nb_linkset;

static bool nb_near_dup(const nb_linkset *ls, const char *kind, const float *s, const float *e,
                        float spacing) {
    for (uint32_t i = 0; i < ls->n; i++) {
        const nav_link_input *l = &ls->v[i];
        if (strcmp(l->kind, kind) != 0)
            continue;
        if (hypotf(l->start[0] - s[0], l->start[2] - s[2]) < spacing &&
            hypotf(l->end[0] - e[0], l->end[2] - e[2]) < spacing)
            return true;
    }
    return false;
}

static nav_status nb_add_link(nb_linkset *ls, const char *kind, const float *s, const float *e,
                              float radius, float spacing) {
    if (nb_near_dup(ls, kind, s, e, spacing))
        return NAV_OK;
    if (ls->n == ls->cap) {
        uint32_t cap = ls->cap ? ls->cap * 2 : 64;
        nav_link_input *v = realloc(ls->v, (size_t)cap * sizeof *v);
        if (!v)
            return NAV_E_NOMEM;
        ls->v = v;
        ls->cap = cap;
    }
    nav_link_input *l = &ls->v[ls->n++];
    memset(l, 0, sizeof *l);
    memcpy(l->start, s, sizeof l->start);
    memcpy(l->end, e, sizeof l->end);
    l->radius = radius;
    l->bidirectional = false;
    l->area = NAV_BAKE_AREA_WALKABLE;
    strncpy(l->kind, kind, sizeof l->kind - 1);
    return NAV_OK;
}

/* Room for the move from ledge point a to landing point b: at knee and
   head height from a to above b, then straight down to b. */
static bool nb_room(const nb_trigrid *g, const nav_bake_profile *p, const float *a,
                    const float *b) {
    float top = fmaxf(a[1], b[1]);
    float knee = p->max_climb + 0.1f, head = p->height * 0.9f;
    for (int k = 0; k < 2; k++) {
        float lift = k ? head : knee;
        float s[3] = {a[0], top + lift, a[2]}, e[3] = {b[0], top + lift, b[2]};
        if (nb_blocked(g, s, e))
            return false;
    }
    float hi[3] = {b[0], top + knee, b[2]}, lo[3] = {b[0], b[1] + 0.05f, b[2]};
    float hi2[3] = {a[0], top + knee, a[2]}, lo2[3] = {a[0], a[1] + 0.05f, a[2]};
    return !nb_blocked(g, hi, lo) && !nb_blocked(g, hi2, lo2);
}

/* Probes outward from ledge point p (outward unit normal n). */
static nav_status nb_probe(const nav_mesh *m, const nb_trigrid *g, const nav_bake_profile *pr,
                           float cs, float spacing, const float *p, const float *n,
                           nb_linkset *ls) {
    const float step = cs * 0.5f;
    const float down = fmaxf(pr->link_drop, pr->link_climb);
    /* the floors' edges are eroded by the radius each, plus the ledge cell
       and a slope too steep to walk, which spans at most its height */
    const float reach_drop = 2 * pr->radius + 4 * cs + down;
    const float reach = fmaxf(down > 0 ? reach_drop : 0,
                              pr->link_jump > 0 ? pr->link_jump + 2 * pr->radius + cs : 0);
    bool lower_done = down <= 0;
    float start[3] = {p[0] - n[0] * 0.05f, p[1], p[2] - n[2] * 0.05f};
    for (float d = step; d <= reach + 1e-4f; d += step) {
        float q[3] = {p[0] + n[0] * d, 0, p[2] + n[2] * d};
        float y;
        uint32_t poly;
        /* about the same height: the gap ends here */
        if (nb_floor_at(m, q[0], q[2], p[1] - pr->max_climb, p[1] + pr->max_climb, &y, &poly)) {
            q[1] = y;
            float gap = d - 2 * pr->radius;
            if (pr->link_jump > 0 && d > 2 * step && gap <= pr->link_jump &&
                nb_room(g, pr, start, q))
                return nb_add_link(ls, "jump", start, q, pr->radius, spacing);
            return NAV_OK; /* walkable ground: nothing to link across */
        }
        if (!lower_done && d <= reach_drop &&
            nb_floor_at(m, q[0], q[2], p[1] - down, p[1] - pr->max_climb - 1e-3f, &y, &poly)) {
            lower_done = true;
            q[1] = y;
            if (!nb_room(g, pr, start, q))
                continue;
            float fall = p[1] - y;
            if (pr->link_drop > 0 && fall <= pr->link_drop) {
                nav_status st = nb_add_link(ls, "drop", start, q, pr->radius, spacing);
                if (st != NAV_OK)
                    return st;
            }
            if (pr->link_climb > 0 && fall <= pr->link_climb) {
                nav_status st = nb_add_link(ls, "climb", q, start, pr->radius, spacing);
                if (st != NAV_OK)
                    return st;
            }
            if (pr->link_jump <= 0)
                return NAV_OK;
        }
    }
    return NAV_OK;
}

nav_status nb_links(const nav_mesh *m, const nb_trigrid *g, const nav_bake_profile *pr, float cs,
                    nav_link_input **out, uint32_t *nout) {
    *out = NULL;
    *nout = 0;
    nb_linkset ls = {0};
    const float spacing = fmaxf(3.0f, 4.0f * pr->radius);
    for (uint32_t p = 0; p < m->npolys; p++) {
        uint32_t s0 = m->poly_start[p], nv = nav_poly_nverts(m, p);
        for (uint32_t e = 0; e < nv; e++) {
            if (m->poly_nei[s0 + e] != NAV_NONE)
                continue;
            const float *a = nav_poly_vert(m, p, e), *b = nav_poly_vert(m, p, e + 1);
            double len = nav_dist2d(a, b);
            if (len < 1e-3)
                continue;
            /* outward: interior is where nav_cross2(a, b, .) < 0 */
            float t[2] = {(float)((b[0] - a[0]) / len), (float)((b[2] - a[2]) / len)};
            float n[3] = {-t[1], 0, t[0]};
            int k = (int)(len / spacing);
            k = k < 1 ? 1 : k;
            for (int i = 0; i < k; i++) {
                float f = ((float)i + 0.5f) / (float)k;
                float pt[3] = {a[0] + (b[0] - a[0]) * f, 0, a[2] + (b[2] - a[2]) * f};
                if (nav_mesh_height(m, p, pt[0], pt[2], &pt[1]) != NAV_OK)
                    continue;
                nav_status st = nb_probe(m, g, pr, cs, spacing, pt, n, &ls);
                if (st != NAV_OK) {
                    free(ls.v);
                    return st;
                }
            }
        }
    }
    *out = ls.v;
    *nout = ls.n;
    return NAV_OK;
}
