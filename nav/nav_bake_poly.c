/*
 * nav_bake_poly.c: contours to convex polygons.
 *
 * Each contour (one simple loop per region, holes bridged) is cut into
 * triangles by ear clipping on the integer grid, always cutting the ear
 * with the shortest diagonal (fewer slivers); then triangles of the same
 * contour merge greedily, the pair with the longest shared edge first, as
 * long as the result stays strictly convex and within max_verts_per_poly.
 * Vertices are welded across contours (same x, z; heights within two
 * cells, as corner heights of the two sides of a portal can differ that
 * much), which is what gives neighbouring polygons their shared edges.
 * Polygons keep the contour's orientation: negative signed area.
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

void nb_pmesh_free(nb_pmesh *pm) {
    free(pm->v);
    free(pm->p);
    free(pm->reg);
    free(pm->area);
    free(pm->vhash);
    free(pm->vnext);
    memset(pm, 0, sizeof *pm);
}

static uint32_t nb_hash(int x, int z, int size) {
    uint32_t h = (uint32_t)x * 0x8da6b343u + (uint32_t)z * 0xd8163841u;
    return h & (uint32_t)(size - 1);
}

static int nb_add_vert(nb_pmesh *pm, int x, int y, int z) {
    uint32_t b = nb_hash(x, z, pm->hash_size);
    for (int i = (int)pm->vhash[b]; i >= 0; i = pm->vnext[i]) {
        const int *v = &pm->v[i * 3];
        if (v[0] == x && v[2] == z && v[1] - y <= 2 && y - v[1] <= 2)
            return i;
    }
    if (pm->nv == pm->cap_v) {
        int cap = pm->cap_v ? pm->cap_v * 2 : 1024;
        int *v = realloc(pm->v, (size_t)cap * 3 * sizeof *v);
        int *nx = realloc(pm->vnext, (size_t)cap * sizeof *nx);
        if (v)
            pm->v = v;
        if (nx)
            pm->vnext = nx;
        if (!v || !nx)
            return -1;
        pm->cap_v = cap;
    }
    int i = pm->nv++;
    pm->v[i * 3] = x;
    pm->v[i * 3 + 1] = y;
    pm->v[i * 3 + 2] = z;
    pm->vnext[i] = (int)pm->vhash[b];
    pm->vhash[b] = (uint32_t)i;
    return i;
}

/* ---- ear clipping on a loop with negative area ---- */

/* in cone at vertex b (prev a, next c) of a clockwise loop, towards p */
static bool nb_cone(const int *a, const int *b, const int *c, const int *p) {
    if (nb_tri2(b, c, a) <= 0)
        return nb_tri2(b, p, a) < 0 && nb_tri2(p, b, c) < 0;
    return !(nb_tri2(b, p, c) <= 0 && nb_tri2(p, b, a) <= 0);
}

static bool nb_eq(const int *a, const int *b) {
    return a[0] == b[0] && a[2] == b[2];
}

/* diagonal from ind[i] to ind[j] crosses no edge of the current loop */
static bool nb_diag_free(const int *v, const int *ind, int n, int i, int j) {
    const int *p = &v[ind[i] * 4], *q = &v[ind[j] * 4];
    for (int k = 0; k < n; k++) {
        int k1 = (k + 1) % n;
        if (k == i || k1 == i || k == j || k1 == j)
            continue;
        const int *a = &v[ind[k] * 4], *b = &v[ind[k1] * 4];
        if (nb_eq(p, a) || nb_eq(q, a) || nb_eq(p, b) || nb_eq(q, b))
            continue;
        if (nb_seg_intersect(p, q, a, b))
            return false;
    }
    return true;
}

static bool nb_diagonal(const int *v, const int *ind, int n, int i, int j) {
    const int *a = &v[ind[(i + n - 1) % n] * 4], *b = &v[ind[i] * 4], *c = &v[ind[(i + 1) % n] * 4];
    return nb_cone(a, b, c, &v[ind[j] * 4]) && nb_diag_free(v, ind, n, i, j);
}

/* Triangulates loop v (nv points, stride 4) into tris (local indices);
   returns the triangle count (fewer than nv - 2 when it had to give up). */
static int nb_triangulate(const int *v, int nv, int *ind, uint8_t *ear, int *tris) {
    int n = nv, nt = 0;
    for (int i = 0; i < n; i++)
        ind[i] = i;
    for (int i = 0; i < n; i++)
        ear[(i + 1) % n] = nb_diagonal(v, ind, n, i, (i + 2) % n);
    while (n > 3) {
        int best = -1;
        long best_d = 0;
        for (int i = 0; i < n; i++) {
            int i1 = (i + 1) % n;
            if (!ear[i1])
                continue;
            const int *p = &v[ind[i] * 4], *q = &v[ind[(i + 2) % n] * 4];
            long dx = q[0] - p[0], dz = q[2] - p[2], d = dx * dx + dz * dz;
            if (best < 0 || d < best_d) {
                best = i;
                best_d = d;
            }
        }
        if (best < 0) {
            /* no clean ear (touching loops): cut where the diagonal at least
               crosses nothing, else give up on the rest */
            for (int i = 0; i < n && best < 0; i++)
                if (nb_diag_free(v, ind, n, i, (i + 2) % n))
                    best = i;
            if (best < 0)
                return nt;
        }
        int i = best, i1 = (i + 1) % n, i2 = (i + 2) % n;
        tris[nt * 3] = ind[i];
        tris[nt * 3 + 1] = ind[i1];
        tris[nt * 3 + 2] = ind[i2];
        nt++;
        memmove(&ind[i1], &ind[i1 + 1], (size_t)(n - i1 - 1) * sizeof *ind);
        memmove(&ear[i1], &ear[i1 + 1], (size_t)(n - i1 - 1) * sizeof *ear);
        n--;
        if (i1 >= n)
            i1 = 0;
        i = (i1 + n - 1) % n;
        ear[i] = nb_diagonal(v, ind, n, (i + n - 1) % n, i1);
        ear[i1] = nb_diagonal(v, ind, n, i, (i1 + 1) % n);
    }
    tris[nt * 3] = ind[0];
    tris[nt * 3 + 1] = ind[1];
    tris[nt * 3 + 2] = ind[2];
    return nt + 1;
}

/* ---- merging ---- */

static int nb_pcount(const uint32_t *p, int nvp) {
    int n = 0;
    while (n < nvp && p[n] != NB_NONE)
        n++;
    return n;
}

/* Shared-edge length^2 when a and b can merge into a convex polygon of at
   most nvp vertices, else -1; *ea / *eb: the shared edge's index in each. */
static long nb_merge_value(const nb_pmesh *pm, const uint32_t *a, const uint32_t *b, int nvp,
                           int *ea, int *eb) {
    int na = nb_pcount(a, nvp), nb = nb_pcount(b, nvp);
    if (na + nb - 2 > nvp)
        return -1;
    *ea = *eb = -1;
    for (int i = 0; i < na && *ea < 0; i++) {
        uint32_t va = a[i], vb = a[(i + 1) % na];
        for (int j = 0; j < nb; j++)
            if (b[j] == vb && b[(j + 1) % nb] == va) {
                *ea = i;
                *eb = j;
                break;
            }
    }
    if (*ea < 0)
        return -1;
    const int *v = pm->v;
#define NB_V3(i) (&v[(i)*3])
    /* the two corners of the merged polygon at the shared edge's ends */
    uint32_t p0 = a[(*ea + na - 1) % na], c0 = a[*ea], n0 = b[(*eb + 2) % nb];
    uint32_t p1 = b[(*eb + nb - 1) % nb], c1 = b[*eb], n1 = a[(*ea + 2) % na];
    if (nb_tri2(NB_V3(p0), NB_V3(c0), NB_V3(n0)) >= 0)
        return -1;
    if (nb_tri2(NB_V3(p1), NB_V3(c1), NB_V3(n1)) >= 0)
        return -1;
    const int *s0 = NB_V3(a[*ea]), *s1 = NB_V3(a[(*ea + 1) % na]);
#undef NB_V3
    long dx = s0[0] - s1[0], dz = s0[2] - s1[2];
    return dx * dx + dz * dz;
}

static void nb_merge_polys(uint32_t *a, const uint32_t *b, int ea, int eb, int nvp) {
    int na = nb_pcount(a, nvp), nb = nb_pcount(b, nvp);
    uint32_t tmp[NAV_BAKE_MAX_VERTS_PER_POLY * 2];
    int n = 0;
    for (int i = 0; i < na - 1; i++)
        tmp[n++] = a[(ea + 1 + i) % na];
    for (int i = 0; i < nb - 1; i++)
        tmp[n++] = b[(eb + 1 + i) % nb];
    for (int i = 0; i < nvp; i++)
        a[i] = i < n ? tmp[i] : NB_NONE;
}

typedef struct nb_polybuf {
    int *ind, *tris, *vid;
    uint8_t *ear;
    uint32_t *polys;
    int cap;
} nb_polybuf;

static nav_status nb_polybuf_reserve(nb_polybuf *b, int n, int nvp) {
    if (n <= b->cap)
        return NAV_OK;
    int cap = n * 2;
    free(b->ind);
    free(b->tris);
    free(b->vid);
    free(b->ear);
    free(b->polys);
    b->ind = malloc((size_t)cap * sizeof(int));
    b->tris = malloc((size_t)cap * 3 * sizeof(int));
    b->vid = malloc((size_t)cap * sizeof(int));
    b->ear = malloc((size_t)cap);
    b->polys = malloc((size_t)cap * (size_t)nvp * sizeof(uint32_t));
    b->cap = cap;
    return b->ind && b->tris && b->vid && b->ear && b->polys ? NAV_OK : NAV_E_NOMEM;
}

static nav_status nb_add_poly(nb_pmesh *pm, const uint32_t *p, uint16_t reg, uint8_t area) {
    if (pm->np == pm->cap_p) {
        int cap = pm->cap_p ? pm->cap_p * 2 : 256;
        uint32_t *np = realloc(pm->p, (size_t)cap * (size_t)pm->nvp * sizeof *np);
        if (np)
            pm->p = np;
        uint16_t *nr = realloc(pm->reg, (size_t)cap * sizeof *nr);
        if (nr)
            pm->reg = nr;
        uint8_t *na = realloc(pm->area, (size_t)cap);
        if (na)
            pm->area = na;
        if (!np || !nr || !na)
            return NAV_E_NOMEM;
        pm->cap_p = cap;
    }
    memcpy(&pm->p[(size_t)pm->np * pm->nvp], p, (size_t)pm->nvp * sizeof *p);
    pm->reg[pm->np] = reg;
    pm->area[pm->np] = area;
    pm->np++;
    return NAV_OK;
}

static nav_status nb_contour_polys(nb_pmesh *pm, const nb_contour *c, nb_polybuf *b) {
    const int nvp = pm->nvp;
    nav_status st = nb_polybuf_reserve(b, c->nv + 2, nvp);
    if (st != NAV_OK)
        return st;
    for (int i = 0; i < c->nv; i++) {
        b->vid[i] = nb_add_vert(pm, c->v[i * 4], c->v[i * 4 + 1], c->v[i * 4 + 2]);
        if (b->vid[i] < 0)
            return NAV_E_NOMEM;
    }
    int nt = nb_triangulate(c->v, c->nv, b->ind, b->ear, b->tris);
    int np = 0;
    for (int t = 0; t < nt; t++) {
        const int *tr = &b->tris[t * 3];
        uint32_t a = (uint32_t)b->vid[tr[0]], bb = (uint32_t)b->vid[tr[1]],
                 cc = (uint32_t)b->vid[tr[2]];
        if (a == bb || a == cc || bb == cc)
            continue;
        if (nb_tri2(&pm->v[a * 3], &pm->v[bb * 3], &pm->v[cc * 3]) >= 0)
            continue; /* zero area, or inverted by a bridge */
        uint32_t *p = &b->polys[(size_t)np * nvp];
        for (int k = 0; k < nvp; k++)
            p[k] = NB_NONE;
        p[0] = a;
        p[1] = bb;
        p[2] = cc;
        np++;
    }
    for (;;) {
        long best = 0;
        int ba = -1, bbp = -1, bea = 0, beb = 0;
        for (int i = 0; i < np - 1; i++)
            for (int j = i + 1; j < np; j++) {
                int ea = -1, eb = -1;
                long v = nb_merge_value(pm, &b->polys[(size_t)i * nvp], &b->polys[(size_t)j * nvp],
                                        nvp, &ea, &eb);
                if (v > best) {
                    best = v;
                    ba = i;
                    bbp = j;
                    bea = ea;
                    beb = eb;
                }
            }
        if (ba < 0)
            break;
        nb_merge_polys(&b->polys[(size_t)ba * nvp], &b->polys[(size_t)bbp * nvp], bea, beb, nvp);
        memmove(&b->polys[(size_t)bbp * nvp], &b->polys[(size_t)(np - 1) * nvp],
                (size_t)nvp * sizeof(uint32_t));
        np--;
    }
    for (int i = 0; i < np; i++) {
        st = nb_add_poly(pm, &b->polys[(size_t)i * nvp], c->reg, c->area);
        if (st != NAV_OK)
            return st;
    }
    return NAV_OK;
}

nav_status nb_polys(const nb_cset *cs, int nvp, nb_pmesh *pm) {
    memset(pm, 0, sizeof *pm);
    pm->nvp = nvp;
    int total = 0;
    for (int i = 0; i < cs->n; i++)
        total += cs->c[i].nv;
    pm->hash_size = 1024;
    while (pm->hash_size < total * 2 && pm->hash_size < (1 << 24))
        pm->hash_size *= 2;
    pm->vhash = malloc((size_t)pm->hash_size * sizeof *pm->vhash);
    if (!pm->vhash)
        return NAV_E_NOMEM;
    memset(pm->vhash, 0xff, (size_t)pm->hash_size * sizeof *pm->vhash);
    nb_polybuf b = {0};
    nav_status st = NAV_OK;
    for (int i = 0; i < cs->n && st == NAV_OK; i++)
        if (cs->c[i].nv >= 3 && cs->c[i].v && nb_contour_area2(&cs->c[i]) < 0)
            st = nb_contour_polys(pm, &cs->c[i], &b);
    free(b.ind);
    free(b.tris);
    free(b.vid);
    free(b.ear);
    free(b.polys);
    if (st != NAV_OK)
        nb_pmesh_free(pm);
    return st;
}
