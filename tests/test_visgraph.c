/*
 * test_visgraph: the brute-force shortest-path reference (see the header).
 * Written separately from nav/nav_optimal.c on purpose: its own segment
 * walker (clip the segment against the current convex polygon, cross the
 * exit edge, or turn around the fan when the exit is a vertex), its own
 * corner detection (fans of polygons around each vertex) and a plain O(n^2)
 * Dijkstra that asks for visibility only when an edge could improve a
 * distance. Slow and simple by design.
 */
#include "tests/test_visgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_internal.h"

#define VG_MAXOWN 32

typedef struct vg_node {
    double x, z;
    float y;
    uint32_t nown;
    uint32_t own[VG_MAXOWN];
} vg_node;

typedef struct vg_edge {
    uint32_t from, to;
    double cost;
} vg_edge;

struct vg_ref {
    const nav_mesh *m;
    uint64_t excl;
    vg_node *nodes; /* K fixed nodes (corners, link ends), then start, end */
    uint32_t k;
    int8_t *vis; /* K x K: -1 unknown, 0, 1 */
    vg_edge *links;
    uint32_t nlinks;
    uint32_t ncorners;
};

static int vg_walkable(const vg_ref *r, uint32_t p) {
    return p != NAV_NONE && !((r->excl >> r->m->areas[p]) & 1u);
}

/* Signed doubled area with a relative dead zone around 0. */
static double vg_orient(double ax, double az, double bx, double bz, double px, double pz) {
    double ux = bx - ax, uz = bz - az, vx = px - ax, vz = pz - az;
    double c = ux * vz - uz * vx;
    return fabs(c) <= 1e-9 * (fabs(ux) + fabs(uz)) * (fabs(vx) + fabs(vz)) ? 0.0 : c;
}

static uint32_t vg_local(const nav_mesh *m, uint32_t p, uint32_t v) {
    uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
    for (uint32_t i = 0; i < n; i++)
        if (m->poly_verts[s + i] == v)
            return i;
    return UINT32_MAX;
}

static int vg_owns(const vg_node *n, uint32_t p) {
    for (uint32_t i = 0; i < n->nown; i++)
        if (n->own[i] == p)
            return 1;
    return 0;
}

/* Does the interior angle of polygon p at its local vertex k contain the
   direction (dx, dz)? Boundary included. */
static int vg_sector(const nav_mesh *m, uint32_t p, uint32_t k, double dx, double dz) {
    uint32_t n = nav_poly_nverts(m, p);
    const float *u = nav_poly_vert(m, p, k + n - 1), *v = nav_poly_vert(m, p, k),
                *w = nav_poly_vert(m, p, k + 1);
    double ex = v[0] + dx, ez = v[2] + dz;
    return vg_orient(u[0], u[2], v[0], v[2], ex, ez) <= 0 &&
           vg_orient(v[0], v[2], w[0], w[2], ex, ez) <= 0;
}

typedef struct vg_seg {
    double px, pz, qx, qz, dx, dz, vtol;
    double arrive; /* parameter beyond which the segment has arrived (an end point
                      on an edge is a float rounding away from it, either side) */
    double atol;   /* the same as a distance: an end point this close to an edge's line
                      is on it, not beyond it */
    const vg_node *b;
    uint32_t steps;
} vg_seg;

/* Continues the walk of segment g in polygon c from parameter t. Where the
   segment leaves c through a vertex, every polygon of the fan (reached
   either way round through passable edges) whose angle holds the direction
   is tried: at a vertex welded between levels (a ramp's foot) both levels
   may go on. */
static int vg_walk_from(const vg_ref *r, vg_seg *g, uint32_t c, double t) {
    const nav_mesh *m = r->m;
    while (g->steps-- > 0) {
        uint32_t s = m->poly_start[c], n = nav_poly_nverts(m, c);
        double tout = 1;
        uint32_t kexit = UINT32_MAX;
        for (uint32_t k = 0; k < n; k++) {
            const float *ea = nav_vert(m, m->poly_verts[s + k]);
            const float *eb = nav_vert(m, m->poly_verts[s + (k + 1) % n]);
            double f0 = vg_orient(ea[0], ea[2], eb[0], eb[2], g->px, g->pz);
            double f1 = vg_orient(ea[0], ea[2], eb[0], eb[2], g->qx, g->qz);
            if (f1 <= g->atol * hypot((double)eb[0] - ea[0], (double)eb[2] - ea[2]))
                continue;
            double te = f1 > f0 ? f0 / (f0 - f1) : t;
            if (te < t)
                te = t;
            if (te < tout) {
                tout = te;
                kexit = k;
            }
        }
        if (kexit == UINT32_MAX || tout >= g->arrive)
            return vg_owns(g->b, c);
        double xx = g->px + tout * g->dx, xz = g->pz + tout * g->dz;
        uint32_t kv = UINT32_MAX;
        for (uint32_t k = 0; k < n; k++) {
            const float *v = nav_vert(m, m->poly_verts[s + k]);
            if (fabs(v[0] - xx) <= g->vtol && fabs(v[2] - xz) <= g->vtol)
                kv = k;
        }
        if (kv == UINT32_MAX) {
            /* the exit edge is the one holding the exit point (collinear
               edges of a polygon share the same exit parameter) */
            for (uint32_t k = 0; k < n; k++) {
                const float *ea = nav_vert(m, m->poly_verts[s + k]);
                const float *eb = nav_vert(m, m->poly_verts[s + (k + 1) % n]);
                double ex = (double)eb[0] - ea[0], ez = (double)eb[2] - ea[2];
                double l2 = ex * ex + ez * ez;
                double u = ((xx - ea[0]) * ex + (xz - ea[2]) * ez) / l2;
                double off = fabs((xx - ea[0]) * ez - (xz - ea[2]) * ex) / sqrt(l2);
                if (u >= 0 && u <= 1 && off <= g->vtol * 10) {
                    kexit = k;
                    break;
                }
            }
            uint32_t nb = m->poly_nei[s + kexit];
            if (!vg_walkable(r, nb))
                return 0;
            c = nb;
            t = tout;
            continue;
        }
        uint32_t vid = m->poly_verts[s + kv];
        for (int dir = 0; dir < 2; dir++) {
            uint32_t cur = c, kk = kv;
            for (int i = 0; i < 64; i++) {
                uint32_t cn = nav_poly_nverts(m, cur);
                uint32_t e = dir == 0 ? kk : (kk + cn - 1) % cn;
                uint32_t nb = m->poly_nei[m->poly_start[cur] + e];
                if (!vg_walkable(r, nb) || nb == c)
                    break;
                kk = vg_local(m, nb, vid);
                if (kk == UINT32_MAX)
                    break;
                cur = nb;
                if (vg_sector(m, cur, kk, g->dx, g->dz) && vg_walk_from(r, g, cur, tout))
                    return 1;
            }
        }
        return 0;
    }
    return 0;
}

/* Walks the segment a -> b through the polygons, from each of a's owners. */
static int vg_walk(const vg_ref *r, const vg_node *a, const vg_node *b) {
    double dx = b->x - a->x, dz = b->z - a->z;
    if (dx == 0 && dz == 0) {
        for (uint32_t i = 0; i < a->nown; i++)
            if (vg_owns(b, a->own[i]))
                return 1;
        return 0;
    }
    vg_seg g = {a->x, a->z, b->x, b->z, dx, dz, 0, 0, 0, b, 0};
    g.vtol = 1e-9 * (1.0 + hypot(dx, dz) + fabs(a->x) + fabs(a->z));
    /* within 1e-6 (relative, the tolerance vg_point gives owners) of b: there */
    g.atol = 1e-6 * (1.0 + fabs(b->x) + fabs(b->z));
    g.arrive = 1 - g.atol / hypot(dx, dz);
    if (g.arrive > 1 - 1e-12)
        g.arrive = 1 - 1e-12;
    for (uint32_t i = 0; i < a->nown; i++) {
        g.steps = 4 * r->m->npolys + 64;
        if (vg_walk_from(r, &g, a->own[i], 0))
            return 1;
    }
    return 0;
}

/* Owners of a point: its polygon and those sharing the edge (or vertex) it
   lies on, through passable edges. */
static void vg_point(const vg_ref *r, uint32_t poly, const float p[3], vg_node *out) {
    const nav_mesh *m = r->m;
    out->x = p[0];
    out->z = p[2];
    out->y = p[1];
    out->own[0] = poly;
    out->nown = 1;
    double tol = 1e-6 * (1.0 + fabs(p[0]) + fabs(p[2]));
    for (uint32_t i = 0; i < out->nown; i++) {
        uint32_t q = out->own[i], s = m->poly_start[q], n = nav_poly_nverts(m, q);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t nb = m->poly_nei[s + k];
            if (!vg_walkable(r, nb) || vg_owns(out, nb) || out->nown >= VG_MAXOWN)
                continue;
            const float *a = nav_vert(m, m->poly_verts[s + k]);
            const float *b = nav_vert(m, m->poly_verts[s + (k + 1) % n]);
            double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
            double l2 = ex * ex + ez * ez;
            double u = l2 > 0 ? ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / l2 : 0;
            u = u < 0 ? 0 : (u > 1 ? 1 : u);
            if (hypot(a[0] + u * ex - p[0], a[2] + u * ez - p[2]) <= tol)
                out->own[out->nown++] = nb;
        }
    }
}

static int vg_add_node(vg_ref *r, uint32_t *cap, const vg_node *n) {
    if (r->k == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        vg_node *t = realloc(r->nodes, (size_t)(*cap + 2) * sizeof *t);
        if (!t)
            return 0;
        r->nodes = t;
    }
    r->nodes[r->k++] = *n;
    return 1;
}

vg_ref *vg_new(const nav_mesh *m, uint64_t exclude_mask) {
    vg_ref *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->m = m;
    r->excl = exclude_mask;
    uint32_t cap = 0;
    /* incident passable polygons per vertex */
    uint32_t *cnt = calloc((size_t)m->nverts + 1, sizeof *cnt);
    uint32_t total = 0;
    for (uint32_t p = 0; p < m->npolys; p++)
        if (vg_walkable(r, p))
            for (uint32_t i = m->poly_start[p]; i < m->poly_start[p + 1]; i++)
                cnt[m->poly_verts[i] + 1]++, total++;
    for (uint32_t v = 0; v < m->nverts; v++)
        cnt[v + 1] += cnt[v];
    uint32_t *inc = malloc(((size_t)total + 1) * sizeof *inc);
    uint32_t *fill = malloc(((size_t)m->nverts + 1) * sizeof *fill);
    memcpy(fill, cnt, ((size_t)m->nverts + 1) * sizeof *fill);
    for (uint32_t p = 0; p < m->npolys; p++)
        if (vg_walkable(r, p))
            for (uint32_t i = m->poly_start[p]; i < m->poly_start[p + 1]; i++)
                inc[fill[m->poly_verts[i]]++] = p;
    /* fans: polygons around v joined through passable edges incident to v */
    for (uint32_t v = 0; v < m->nverts; v++) {
        uint32_t d = cnt[v + 1] - cnt[v];
        uint32_t *ps = &inc[cnt[v]];
        int8_t done[VG_MAXOWN * 4] = {0};
        if (d > VG_MAXOWN * 4)
            d = VG_MAXOWN * 4;
        for (uint32_t i = 0; i < d; i++) {
            if (done[i])
                continue;
            vg_node fan = {0};
            const float *pv = nav_vert(m, v);
            fan.x = pv[0];
            fan.z = pv[2];
            fan.y = pv[1];
            fan.own[fan.nown++] = ps[i];
            done[i] = 1;
            int wall = 0;
            for (uint32_t q = 0; q < fan.nown; q++) {
                uint32_t p = fan.own[q], k = vg_local(m, p, v), n = nav_poly_nverts(m, p);
                uint32_t edges[2] = {k, (k + n - 1) % n};
                for (int e = 0; e < 2; e++) {
                    uint32_t nb = m->poly_nei[m->poly_start[p] + edges[e]];
                    if (!vg_walkable(r, nb)) {
                        wall = 1;
                        continue;
                    }
                    for (uint32_t j = 0; j < d; j++)
                        if (!done[j] && ps[j] == nb && fan.nown < VG_MAXOWN) {
                            done[j] = 1;
                            fan.own[fan.nown++] = nb;
                        }
                }
            }
            if (wall && !vg_add_node(r, &cap, &fan))
                goto fail;
        }
    }
    r->ncorners = r->k;
    /* link ends */
    r->links = calloc(2 * (size_t)m->nlinks + 1, sizeof *r->links);
    if (!r->links)
        goto fail;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *lk = &m->links[l];
        if ((exclude_mask >> lk->area) & 1u || !vg_walkable(r, lk->start_poly) ||
            !vg_walkable(r, lk->end_poly))
            continue;
        vg_node a, b;
        vg_point(r, lk->start_poly, lk->start_on, &a);
        vg_point(r, lk->end_poly, lk->end_on, &b);
        uint32_t ia = r->k;
        if (!vg_add_node(r, &cap, &a) || !vg_add_node(r, &cap, &b))
            goto fail;
        double c = nav_dist3d(lk->start_on, lk->end_on);
        r->links[r->nlinks++] = (vg_edge){ia, ia + 1, c};
        if (lk->bidirectional)
            r->links[r->nlinks++] = (vg_edge){ia + 1, ia, c};
    }
    if (!r->nodes && !(r->nodes = malloc(2 * sizeof *r->nodes))) /* room for start/end */
        goto fail;
    r->vis = malloc((size_t)r->k * r->k + 1);
    if (!r->vis)
        goto fail;
    memset(r->vis, -1, (size_t)r->k * r->k);
    free(cnt);
    free(inc);
    free(fill);
    return r;
fail:
    free(cnt);
    free(inc);
    free(fill);
    vg_free(r);
    return NULL;
}

void vg_free(vg_ref *r) {
    if (!r)
        return;
    free(r->nodes);
    free(r->vis);
    free(r->links);
    free(r);
}

uint32_t vg_corner_count(const vg_ref *r) {
    return r->ncorners;
}

static int vg_vis(vg_ref *r, uint32_t a, uint32_t b, uint32_t kfix) {
    if (a < kfix && b < kfix) {
        int8_t *c = &r->vis[(size_t)a * kfix + b];
        if (*c < 0) {
            *c = (int8_t)vg_walk(r, &r->nodes[a], &r->nodes[b]);
            r->vis[(size_t)b * kfix + a] = *c;
        }
        return *c;
    }
    return vg_walk(r, &r->nodes[a], &r->nodes[b]);
}

int vg_visible(vg_ref *r, uint32_t pa, const float a[3], uint32_t pb, const float b[3]) {
    vg_node na, nb;
    vg_point(r, pa, a, &na);
    vg_point(r, pb, b, &nb);
    return vg_walk(r, &na, &nb);
}

double vg_shortest(vg_ref *r, uint32_t start_poly, const float start[3], uint32_t end_poly,
                   const float end[3]) {
    if (!vg_walkable(r, start_poly) || !vg_walkable(r, end_poly))
        return INFINITY;
    uint32_t kfix = r->k, s = kfix, t = kfix + 1, n = kfix + 2;
    /* nodes has room for two more (vg_add_node keeps cap + 2) */
    vg_point(r, start_poly, start, &r->nodes[s]);
    vg_point(r, end_poly, end, &r->nodes[t]);
    double *d = malloc(n * sizeof *d);
    uint8_t *done = calloc(n, 1);
    if (!d || !done) {
        free(d);
        free(done);
        return NAN;
    }
    for (uint32_t i = 0; i < n; i++)
        d[i] = INFINITY;
    d[s] = 0;
    double result = INFINITY;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            if (!done[i] && isfinite(d[i]) && (u == UINT32_MAX || d[i] < d[u]))
                u = i;
        if (u == UINT32_MAX)
            break;
        if (u == t) {
            result = d[t];
            break;
        }
        done[u] = 1;
        const vg_node *nu = &r->nodes[u];
        for (uint32_t w = 0; w < n; w++) {
            if (done[w] || w == s)
                continue;
            double c = d[u] + hypot(r->nodes[w].x - nu->x, r->nodes[w].z - nu->z);
            if (c < d[w] && vg_vis(r, u, w, kfix))
                d[w] = c;
        }
        for (uint32_t i = 0; i < r->nlinks; i++)
            if (r->links[i].from == u && d[u] + r->links[i].cost < d[r->links[i].to])
                d[r->links[i].to] = d[u] + r->links[i].cost;
    }
    free(d);
    free(done);
    return result;
}
