/*
 * nav_bake_detail.c: the height (detail) mesh, so that heights on a polygon
 * follow the surface it was baked from rather than the plane through its
 * corners.
 *
 * Per polygon:
 * - each edge is sampled every sample_dist; the sample farthest (in y) from
 *   the edge's current pieces is added while one is off by more than
 *   max_error. Edges are walked from their lexicographically smaller end,
 *   so the two polygons of a shared edge sample the same places (heights
 *   are read just inside each polygon, so the two sides of a portal can
 *   differ by up to a step: the detail mesh is per polygon);
 * - the outline (corners plus edge points; convex) is cut into triangles
 *   at strictly convex corners;
 * - interior samples on a sample_dist grid are inserted one at a time,
 *   worst first, while one is off by more than max_error: the triangle
 *   holding it splits in three. Each sample remembers its triangle, so an
 *   insertion only revisits the samples of the triangle it split.
 * A sample's height is the polygon's region's own floor in its cell, or,
 * where the region has none (simplified edges stray from it), the floor
 * reached from the region through span links (a height patch grown over the
 * polygon's box, built only for polygons that need it): a bridge's polygon
 * samples the bridge and not the floor below, a bowl its bottom.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

#define NB_DMAX_EDGE 64  /* points per edge, corners included */
#define NB_DMAX_HULL 256 /* outline points of one polygon */
#define NB_DMAX_SAMPLES 1024
#define NB_DMAX_TRIS (NB_DMAX_HULL + 2 * NB_DMAX_SAMPLES)

void nb_dmesh_free(nb_dmesh *dm) {
    free(dm->v);
    free(dm->t);
    free(dm->ptris);
    memset(dm, 0, sizeof *dm);
}

typedef struct nb_dpt {
    float p[3];
    uint32_t id; /* pmesh vertex id, or NB_DLOCAL + extra vertex, NB_NONE: not yet stored */
} nb_dpt;

typedef struct nb_dctx {
    const nb_work *wk;
    const nb_pmesh *pm;
    nb_dmesh *dm;
    float sample_dist, max_error;
    float cs, ch;
    const float *bmin;
    uint16_t reg;            /* the current polygon's region */
    uint32_t *patch, *queue; /* height patch: span per cell of the polygon's box */
    size_t patch_cap;
    size_t qhead, qtail; /* the patch's breadth-first growth still to run */
    int px, pz, pw, ph;
    float pbmin[3], pbmax[3]; /* the polygon's box, for the patch built on first need */
    bool box_ready, patch_ready;
    nav_status patch_st;
    nb_dpt hull[NB_DMAX_HULL];
    int nhull;
    nb_dpt pts[NB_DMAX_HULL + NB_DMAX_SAMPLES];
    int npts;
    int tris[NB_DMAX_TRIS][3];
    /* nbr[t][k]: the triangle across edge tris[t][k] -> tris[t][k + 1], or
       -1 (the outline): kept by every cut, split and flip, so that a flip
       finds the triangle across an edge without scanning them all */
    int nbr[NB_DMAX_TRIS][3];
    int ntris;
    /* the hull triangles' boxes, widened so that a point outside one is
       outside the triangle (nb_tri_boxes); lo > hi: no box, test fully */
    struct {
        double lox, hix, loz, hiz;
    } tbox[NB_DMAX_TRIS];
    double span; /* the polygon's box, x plus z extent */
    struct {
        float p[3];
        int tri; /* containing triangle, -1: inserted or unusable */
        float err;
    } samp[NB_DMAX_SAMPLES];
    int nsamp;
} nb_dctx;

/*
 * The polygon's height patch: for each cell of its box (plus a margin of
 * two cells, as simplified edges stray from the region), the floor of the
 * polygon's surface there. Seeded with the spans of the polygon's region,
 * then grown breadth-first through span connections (any span, eroded ones
 * included: they are real floor), so each column gets the floor connected
 * to the polygon's own, not a bridge above or a cellar below.
 */
/* The patch's box (cells of the window): the polygon's box plus two. */
static void nb_patch_box(nb_dctx *d, const float *bmin, const float *bmax) {
    const nb_chf *chf = d->wk->chf;
    int x0 = (int)floorf((bmin[0] - d->bmin[0]) / d->cs) - chf->x0 - 2;
    int z0 = (int)floorf((bmin[2] - d->bmin[2]) / d->cs) - chf->z0 - 2;
    int x1 = (int)floorf((bmax[0] - d->bmin[0]) / d->cs) - chf->x0 + 2;
    int z1 = (int)floorf((bmax[2] - d->bmin[2]) / d->cs) - chf->z0 + 2;
    x0 = x0 < 0 ? 0 : x0;
    z0 = z0 < 0 ? 0 : z0;
    x1 = x1 >= chf->w ? chf->w - 1 : x1;
    z1 = z1 >= chf->h ? chf->h - 1 : z1;
    d->px = x0;
    d->pz = z0;
    d->pw = x1 - x0 + 1;
    d->ph = z1 - z0 + 1;
    if (d->pw <= 0 || d->ph <= 0)
        d->pw = d->ph = 0;
}

static nav_status nb_patch(nb_dctx *d) {
    const nb_chf *chf = d->wk->chf;
    d->qhead = d->qtail = 0;
    if (d->pw == 0)
        return NAV_OK;
    int x0 = d->px, z0 = d->pz, x1 = d->px + d->pw - 1, z1 = d->pz + d->ph - 1;
    size_t n = (size_t)d->pw * d->ph;
    if (n > d->patch_cap) {
        free(d->patch);
        free(d->queue);
        d->patch = malloc(n * sizeof *d->patch);
        d->queue = malloc(n * sizeof *d->queue);
        d->patch_cap = d->patch && d->queue ? n : 0;
        if (!d->patch_cap)
            return NAV_E_NOMEM;
    }
    memset(d->patch, 0xff, n * sizeof *d->patch);
    size_t head = 0, tail = 0;
    /* each row's spans in one run; a cell keeps its lowest span of the
       region */
    for (int z = z0; z <= z1; z++) {
        const uint32_t *row = &chf->first[z * chf->w];
        int x = x0;
        for (uint32_t sp = row[x0]; sp < row[x1 + 1]; sp++) {
            if (d->wk->reg[sp] != d->reg)
                continue;
            while (row[x + 1] <= sp)
                x++;
            size_t pi = (size_t)(x - x0) + (size_t)(z - z0) * d->pw;
            if (d->patch[pi] == NB_NONE)
                d->patch[pi] = sp;
        }
    }
    /* grow only from seeds next to an empty cell (most seeds are inside) */
    for (int z = 0; z < d->ph; z++)
        for (int x = 0; x < d->pw; x++) {
            size_t pi = (size_t)x + (size_t)z * d->pw;
            if (d->patch[pi] == NB_NONE)
                continue;
            if ((x > 0 && d->patch[pi - 1] == NB_NONE) ||
                (x + 1 < d->pw && d->patch[pi + 1] == NB_NONE) ||
                (z > 0 && d->patch[pi - d->pw] == NB_NONE) ||
                (z + 1 < d->ph && d->patch[pi + d->pw] == NB_NONE))
                d->queue[tail++] = (uint32_t)pi;
        }
    d->qhead = head;
    d->qtail = tail;
    return NAV_OK;
}

/*
 * The patch's span at cell pi (NB_NONE: no floor there). The growth runs
 * only as far as this cell needs: a cell is written once, by the first
 * queued cell that reaches it, so stopping the FIFO early and resuming it
 * later gives every cell the span the whole growth would, while the
 * samples (a few cells around the region) rarely need more than the first
 * rings of a box of thousands of cells.
 */
static uint32_t nb_patch_at(nb_dctx *d, size_t pi) {
    const nb_chf *chf = d->wk->chf;
    const int pw = d->pw, ph = d->ph;
    while (d->patch[pi] == NB_NONE && d->qhead < d->qtail) {
        uint32_t qi = d->queue[d->qhead++];
        int x = (int)(qi % (uint32_t)pw), z = (int)(qi / (uint32_t)pw);
        uint32_t sp = d->patch[qi];
        for (int dir = 0; dir < 4; dir++) {
            uint32_t a = nb_nei4(chf, sp, dir);
            if (a == NB_NONE)
                continue;
            int nx = x + nb_dx[dir], nz = z + nb_dz[dir];
            if (nx < 0 || nz < 0 || nx >= pw || nz >= ph)
                continue;
            size_t ni = (size_t)nx + (size_t)nz * (size_t)pw;
            if (d->patch[ni] != NB_NONE)
                continue;
            d->patch[ni] = a;
            d->queue[d->qtail++] = (uint32_t)ni;
        }
    }
    return d->patch[pi];
}

/* The region's lowest floor in cell (gx, gz) of the window: the patch's
   seed there, NB_NONE when the region has none. */
static uint32_t nb_region_floor(const nb_dctx *d, int gx, int gz) {
    const nb_chf *chf = d->wk->chf;
    int c = gx + gz * chf->w;
    for (uint32_t sp = chf->first[c]; sp < chf->first[c + 1]; sp++)
        if (d->wk->reg[sp] == d->reg)
            return sp;
    return NB_NONE;
}

/* Height of the polygon's floor under (x, z) from the patch; false when
   the patch has no floor there. */
static bool nb_sample_height(nb_dctx *d, float x, float z, float *y) {
    const nb_chf *chf = d->wk->chf;
    int gx = (int)floorf((x - d->bmin[0]) / d->cs) - chf->x0;
    int gz = (int)floorf((z - d->bmin[2]) / d->cs) - chf->z0;
    /* the region's own floor in the cell is what the patch would hold there
       (its seeds); only cells without one need the grown patch, built on
       first need (most polygons never need it) */
    if (gx >= 0 && gz >= 0 && gx < chf->w && gz < chf->h) {
        uint32_t sp = nb_region_floor(d, gx, gz);
        if (sp != NB_NONE) {
            *y = d->bmin[1] + (float)chf->y[sp] * d->ch;
            return true;
        }
    }
    if (!d->box_ready) {
        d->box_ready = true;
        nb_patch_box(d, d->pbmin, d->pbmax);
    }
    int cx = gx - d->px, cz = gz - d->pz;
    if (cx < 0 || cz < 0 || cx >= d->pw || cz >= d->ph)
        return false;
    if (!d->patch_ready) {
        /* A cell next to a seed gets, in the growth, the span linked to it
           from the first such seed in queue order (row by row: above, left,
           right, below) that has a link towards it: every seed is queued
           before any grown cell. So a sample next to the region (most
           are: simplified edges stray from it by a cell) needs no patch. */
        static const int ddx[4] = {0, -1, 1, 0}, ddz[4] = {-1, 0, 0, 1};
        static const int towards[4] = {1, 2, 0, 3};
        for (int k = 0; k < 4; k++) {
            int nx = cx + ddx[k], nz = cz + ddz[k];
            if (nx < 0 || nz < 0 || nx >= d->pw || nz >= d->ph)
                continue;
            uint32_t seed = nb_region_floor(d, gx + ddx[k], gz + ddz[k]);
            if (seed == NB_NONE)
                continue;
            uint32_t a = nb_nei4(chf, seed, towards[k]);
            if (a != NB_NONE) {
                *y = d->bmin[1] + (float)chf->y[a] * d->ch;
                return true;
            }
        }
        d->patch_ready = true;
        d->patch_st = nb_patch(d);
    }
    if (d->patch_st != NAV_OK)
        return false;
    uint32_t sp = nb_patch_at(d, (size_t)cx + (size_t)cz * d->pw);
    if (sp == NB_NONE)
        return false;
    *y = d->bmin[1] + (float)chf->y[sp] * d->ch;
    return true;
}

static bool nb_dm_push_tri(nb_dmesh *dm, uint32_t a, uint32_t b, uint32_t c) {
    if (dm->nt == dm->cap_t) {
        uint32_t cap = dm->cap_t ? dm->cap_t * 2 : 1024;
        uint32_t *t = realloc(dm->t, (size_t)cap * 3 * sizeof *t);
        if (!t)
            return false;
        dm->t = t;
        dm->cap_t = cap;
    }
    dm->t[dm->nt * 3] = a;
    dm->t[dm->nt * 3 + 1] = b;
    dm->t[dm->nt * 3 + 2] = c;
    dm->nt++;
    return true;
}

static bool nb_dm_push_vert(nb_dmesh *dm, const float *p, uint32_t *id) {
    if (dm->nv == dm->cap_v) {
        uint32_t cap = dm->cap_v ? dm->cap_v * 2 : 1024;
        float *v = realloc(dm->v, (size_t)cap * 3 * sizeof *v);
        if (!v)
            return false;
        dm->v = v;
        dm->cap_v = cap;
    }
    memcpy(&dm->v[dm->nv * 3], p, 3 * sizeof(float));
    *id = NB_DLOCAL + dm->nv++;
    return true;
}

static double nb_ftri2(const float *a, const float *b, const float *c) {
    return ((double)b[0] - a[0]) * ((double)c[2] - a[2]) -
           ((double)c[0] - a[0]) * ((double)b[2] - a[2]);
}

/* Triangle (a, b, c) is clockwise (negative area) and not a sliver: twice
   its xz area exceeds 1e-5 of its longest edge squared (nav_mesh_build
   refuses detail triangles under 1e-9, in 3-D). */
static bool nb_solid(const float *a, const float *b, const float *c) {
    double t = nb_ftri2(a, b, c);
    if (t >= 0)
        return false;
    double l = 0;
    const float *p[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        double dx = (double)p[(i + 1) % 3][0] - p[i][0], dz = (double)p[(i + 1) % 3][2] - p[i][2];
        double e = dx * dx + dz * dz;
        l = e > l ? e : l; /* finite: fmax without the call */
    }
    return -t > 1e-5 * l;
}

/* Adds edge a -> b's inner points (not a, not b) to the hull, in order. */
static void nb_edge_points(nb_dctx *d, const float *a, const float *b) {
    if (d->sample_dist <= 0)
        return;
    bool swap = b[0] < a[0] || (b[0] == a[0] && b[2] < a[2]);
    const float *p = swap ? b : a, *q = swap ? a : b;
    double len = hypot((double)q[0] - p[0], (double)q[2] - p[2]);
    int n = (int)(len / d->sample_dist) + 1;
    if (n < 2)
        return;
    if (n > NB_DMAX_EDGE - 1)
        n = NB_DMAX_EDGE - 1;
    float s[NB_DMAX_EDGE][3];
    bool ok[NB_DMAX_EDGE];
    /* look up heights a little inside the polygon (edges lie on cell
       borders, and the cell outside may be a wall): the interior of an edge
       a -> b of a clockwise polygon is along (e.z, -e.x) */
    double el = hypot((double)b[0] - a[0], (double)b[2] - a[2]);
    float nx = (float)(((double)b[2] - a[2]) / el) * 0.4f * d->cs;
    float nz = (float)(-((double)b[0] - a[0]) / el) * 0.4f * d->cs;
    for (int i = 0; i <= n; i++) {
        float t = (float)i / (float)n;
        s[i][0] = p[0] + (q[0] - p[0]) * t;
        s[i][1] = p[1] + (q[1] - p[1]) * t;
        s[i][2] = p[2] + (q[2] - p[2]) * t;
        ok[i] = i == 0 || i == n;
        if (!ok[i]) {
            /* sample just inside the cells along the edge, either side */
            float y;
            ok[i] = nb_sample_height(d, s[i][0] + nx, s[i][2] + nz, &y);
            if (ok[i])
                s[i][1] = y;
        }
    }
    /* keep[] marks chosen points; refine the worst segment until fine */
    bool keep[NB_DMAX_EDGE] = {0};
    keep[0] = keep[n] = true;
    for (int guard = 0; guard < n; guard++) {
        float worst = d->max_error;
        int wi = -1;
        for (int a0 = 0; a0 < n;) {
            int b0 = a0 + 1;
            while (!keep[b0])
                b0++;
            for (int i = a0 + 1; i < b0; i++) {
                if (!ok[i])
                    continue;
                float t = (float)(i - a0) / (float)(b0 - a0);
                float y = s[a0][1] + (s[b0][1] - s[a0][1]) * t;
                float e = fabsf(y - s[i][1]);
                if (e > worst) {
                    worst = e;
                    wi = i;
                }
            }
            a0 = b0;
        }
        if (wi < 0)
            break;
        keep[wi] = true;
    }
    for (int k = 1; k < n; k++) {
        int i = swap ? n - k : k;
        if (!keep[i] || d->nhull >= NB_DMAX_HULL)
            continue;
        memcpy(d->hull[d->nhull].p, s[i], sizeof s[i]);
        d->hull[d->nhull].id = NB_NONE;
        d->nhull++;
    }
}

/* Triangle x (none when < 0) has the edge v0 -> v1: t is now across it. */
static void nb_relink(nb_dctx *d, int x, int v0, int v1, int t) {
    if (x < 0)
        return;
    for (int k = 0; k < 3; k++)
        if (d->tris[x][k] == v0 && d->tris[x][(k + 1) % 3] == v1)
            d->nbr[x][k] = t;
}

/* The ear at position i of the outline idx[0..n): its diagonal's length,
   or -1 when the corner is not clearly convex (the outline has negative
   area). */
static double nb_ear(const nb_dctx *d, const int *idx, int n, int i) {
    const float *a = d->pts[idx[(i + n - 1) % n]].p, *b = d->pts[idx[i]].p,
                *c = d->pts[idx[(i + 1) % n]].p;
    if (!nb_solid(a, b, c))
        return -1;
    return hypot((double)c[0] - a[0], (double)c[2] - a[2]);
}

/* Cuts the convex outline into triangles at strictly convex corners. */
static void nb_hull_tris(nb_dctx *d) {
    /* own[i]: the triangle already cut off across outline edge
       idx[i] -> idx[i + 1], or -1 (an edge of the polygon itself); ear[i]:
       nb_ear at i, kept with the outline (a cut changes only the ears of
       the two corners beside it) */
    int idx[NB_DMAX_HULL], own[NB_DMAX_HULL], n = d->nhull;
    double ear[NB_DMAX_HULL];
    for (int i = 0; i < n; i++) {
        idx[i] = i;
        own[i] = -1;
    }
    for (int i = 0; n >= 3 && i < n; i++)
        ear[i] = nb_ear(d, idx, n, i);
    d->ntris = 0;
    while (n >= 3) {
        int best = -1;
        double best_l = 0;
        for (int i = 0; i < n; i++) {
            if (ear[i] < 0)
                continue;
            if (best < 0 || ear[i] < best_l) {
                best = i;
                best_l = ear[i];
            }
        }
        if (best < 0)
            break;
        int prev = (best + n - 1) % n, t = d->ntris++;
        int a = idx[prev], b = idx[best], c = idx[(best + 1) % n];
        d->tris[t][0] = a;
        d->tris[t][1] = b;
        d->tris[t][2] = c;
        d->nbr[t][0] = own[prev];
        d->nbr[t][1] = own[best];
        /* c -> a is a new diagonal, but the outline's last edge when the
           last triangle closes it */
        d->nbr[t][2] = n == 3 ? own[(best + 1) % n] : -1;
        nb_relink(d, own[prev], b, a, t);
        nb_relink(d, own[best], c, b, t);
        nb_relink(d, d->nbr[t][2], a, c, t);
        memmove(&idx[best], &idx[best + 1], (size_t)(n - best - 1) * sizeof *idx);
        memmove(&own[best], &own[best + 1], (size_t)(n - best - 1) * sizeof *own);
        memmove(&ear[best], &ear[best + 1], (size_t)(n - best - 1) * sizeof *ear);
        n--;
        own[(best + n - 1) % n] = t; /* the new outline edge a -> c */
        if (n >= 3) {
            ear[(best + n - 1) % n] = nb_ear(d, idx, n, (best + n - 1) % n);
            ear[best % n] = nb_ear(d, idx, n, best % n);
        }
    }
}

/* Height of triangle t at (x, z) when it contains the point (with margin). */
static bool nb_tri_height(const nb_dctx *d, int t, float x, float z, float *y) {
    const float *a = d->pts[d->tris[t][0]].p, *b = d->pts[d->tris[t][1]].p,
                *c = d->pts[d->tris[t][2]].p;
    double det = nb_ftri2(a, b, c);
    if (det == 0)
        return false;
    float p[3] = {x, 0, z};
    double u = nb_ftri2(p, b, c) / det, v = nb_ftri2(a, p, c) / det, w = 1 - u - v;
    const double eps = -1e-5;
    if (u < eps || v < eps || w < eps)
        return false;
    *y = (float)(u * a[1] + v * b[1] + w * c[1]);
    return true;
}

/*
 * Box of triangle t for nb_locate's quick rejection (of the hull's
 * triangles, then of each triangle an insertion rewrites). A point
 * nb_tri_height accepts has every barycentric >= -1e-5, so it lies within
 * 2e-5 of the triangle's extent outside its box; the box is widened by
 * 1e-3 of the extent, far beyond that. The barycentrics are computed in
 * double from floats: their error is below 1e-15 of the squared extent
 * (points and triangle inside the polygon's box, `span`) over twice the
 * area, so triangles thinner than 1e-9 of span squared get no box and are
 * tested fully, as before. Only rejections are decided here.
 */
static void nb_tri_box(nb_dctx *d, int t) {
    const float *a = d->pts[d->tris[t][0]].p, *b = d->pts[d->tris[t][1]].p,
                *c = d->pts[d->tris[t][2]].p;
    double det = nb_ftri2(a, b, c), span = d->span;
    /* finite coordinates: plain comparisons are fmin / fmax */
    double lox = a[0] < b[0] ? a[0] : b[0], hix = a[0] > b[0] ? a[0] : b[0];
    double loz = a[2] < b[2] ? a[2] : b[2], hiz = a[2] > b[2] ? a[2] : b[2];
    lox = c[0] < lox ? c[0] : lox, hix = c[0] > hix ? c[0] : hix;
    loz = c[2] < loz ? c[2] : loz, hiz = c[2] > hiz ? c[2] : hiz;
    if (fabs(det) < 1e-9 * span * span) {
        d->tbox[t].lox = d->tbox[t].loz = INFINITY;
        d->tbox[t].hix = d->tbox[t].hiz = -INFINITY;
        return;
    }
    double mx = (hix - lox) * 1e-3, mz = (hiz - loz) * 1e-3;
    d->tbox[t].lox = lox - mx;
    d->tbox[t].hix = hix + mx;
    d->tbox[t].loz = loz - mz;
    d->tbox[t].hiz = hiz + mz;
}

/* Does triangle t's box (nb_tri_box) rule out that it holds (x, z)? */
static bool nb_box_misses(const nb_dctx *d, int t, double x, double z) {
    return d->tbox[t].lox <= d->tbox[t].hix &&
           (x < d->tbox[t].lox || x > d->tbox[t].hix || z < d->tbox[t].loz || z > d->tbox[t].hiz);
}

/* nb_locate over all triangles, skipping those whose box (nb_tri_boxes)
   misses the sample. */
static void nb_locate_boxed(nb_dctx *d, int i) {
    const double x = d->samp[i].p[0], z = d->samp[i].p[2];
    d->samp[i].tri = -1;
    for (int t = 0; t < d->ntris; t++) {
        if (nb_box_misses(d, t, x, z))
            continue;
        float y;
        if (nb_tri_height(d, t, d->samp[i].p[0], d->samp[i].p[2], &y)) {
            d->samp[i].tri = t;
            d->samp[i].err = fabsf(y - d->samp[i].p[1]);
            return;
        }
    }
}

/* Re-evaluates which of triangles [t0, t1) holds sample i, and its error. */
static void nb_locate(nb_dctx *d, int i, int t0, int t1) {
    d->samp[i].tri = -1;
    for (int t = t0; t < t1; t++) {
        float y;
        if (nb_tri_height(d, t, d->samp[i].p[0], d->samp[i].p[2], &y)) {
            d->samp[i].tri = t;
            d->samp[i].err = fabsf(y - d->samp[i].p[1]);
            return;
        }
    }
}

static void nb_interior(nb_dctx *d, const float *bmin, const float *bmax, uint16_t reg) {
    d->nsamp = 0;
    if (d->sample_dist <= 0)
        return;
    d->span = ((double)bmax[0] - bmin[0]) + ((double)bmax[2] - bmin[2]);
    for (int t = 0; t < d->ntris; t++)
        nb_tri_box(d, t);
    for (float z = bmin[2] + d->sample_dist * 0.5f; z < bmax[2]; z += d->sample_dist)
        for (float x = bmin[0] + d->sample_dist * 0.5f; x < bmax[0]; x += d->sample_dist) {
            if (d->nsamp >= NB_DMAX_SAMPLES)
                return;
            int i = d->nsamp;
            d->samp[i].p[0] = x;
            d->samp[i].p[2] = z;
            nb_locate_boxed(d, i);
            if (d->samp[i].tri < 0)
                continue;
            /* keep samples away from the outline: edges are handled there */
            const float *pa = d->pts[d->tris[d->samp[i].tri][0]].p;
            float hint;
            nb_tri_height(d, d->samp[i].tri, x, z, &hint);
            (void)pa;
            if (!nb_sample_height(d, x, z, &d->samp[i].p[1]))
                continue;
            d->samp[i].err = fabsf(hint - d->samp[i].p[1]);
            d->nsamp++;
        }
}

/* d inside the circle through triangle (a, b, c), which has negative
   (clockwise) orientation. */
static bool nb_in_circle(const float *a, const float *b, const float *c, const float *d) {
    /* the textbook determinant for counter-clockwise (a, c, b) */
    double ax = (double)a[0] - d[0], az = (double)a[2] - d[2];
    double bx = (double)c[0] - d[0], bz = (double)c[2] - d[2];
    double cx = (double)b[0] - d[0], cz = (double)b[2] - d[2];
    double det = (ax * ax + az * az) * (bx * cz - cx * bz) -
                 (bx * bx + bz * bz) * (ax * cz - cx * az) +
                 (cx * cx + cz * cz) * (ax * bz - bx * az);
    return det > 1e-9;
}

/* The triangle across t's edge k (tris[t][k] -> tris[t][k + 1]), or -1;
   *q: its corner off that edge. The triangles tile part of the polygon
   without overlap (cuts, splits at inner points and flips of convex quads
   keep it so), so each directed edge has one triangle: this is the
   triangle a scan of all of them for the reversed edge would find. */
static int nb_across(const nb_dctx *d, int t, int k, int *q) {
    int u = d->nbr[t][k];
    if (u < 0)
        return -1;
    int b = d->tris[t][(k + 1) % 3];
    int j = 0;
    while (d->tris[u][j] != b)
        j++;
    *q = d->tris[u][(j + 2) % 3];
    return u;
}

/* Restores the Delaunay property around new point p by flipping edges
   (Lawson); marks every triangle it rewrites in touched[]. */
static void nb_flip_around(nb_dctx *d, int p, int first, uint8_t *touched) {
    int stack[3 * NB_DMAX_TRIS], ns = 0;
    stack[ns++] = first;
    stack[ns++] = d->ntris - 2;
    stack[ns++] = d->ntris - 1;
    int guard = 0;
    while (ns && guard++ < 4 * NB_DMAX_TRIS) {
        int t = stack[--ns];
        /* rotate t so that p is its third corner */
        int k = 0;
        while (k < 3 && d->tris[t][k] != p)
            k++;
        if (k == 3)
            continue;
        int a = d->tris[t][(k + 1) % 3], b = d->tris[t][(k + 2) % 3], q;
        int u = nb_across(d, t, (k + 1) % 3, &q);
        if (u < 0 || !nb_in_circle(d->pts[a].p, d->pts[b].p, d->pts[p].p, d->pts[q].p))
            continue;
        /* quad a, q, b, p (clockwise): diagonal p-q replaces a-b, only when
           both new triangles keep the orientation (the quad is convex) */
        if (!nb_solid(d->pts[a].p, d->pts[q].p, d->pts[p].p) ||
            !nb_solid(d->pts[q].p, d->pts[b].p, d->pts[p].p))
            continue;
        /* the quad's outer edges keep their neighbours: b -> p and p -> a
           of t, a -> q and q -> b of u */
        int nbp = d->nbr[t][(k + 2) % 3], npa = d->nbr[t][k];
        int ju = 0;
        while (d->tris[u][ju] != b)
            ju++;
        int naq = d->nbr[u][(ju + 1) % 3], nqb = d->nbr[u][(ju + 2) % 3];
        d->tris[t][0] = a, d->tris[t][1] = q, d->tris[t][2] = p;
        d->tris[u][0] = q, d->tris[u][1] = b, d->tris[u][2] = p;
        d->nbr[t][0] = naq, d->nbr[t][1] = u, d->nbr[t][2] = npa;
        d->nbr[u][0] = nqb, d->nbr[u][1] = nbp, d->nbr[u][2] = t;
        nb_relink(d, naq, q, a, t);
        nb_relink(d, nbp, p, b, u);
        touched[t] = touched[u] = 1;
        if (ns + 2 <= 3 * NB_DMAX_TRIS) {
            stack[ns++] = t;
            stack[ns++] = u;
        }
    }
}

static void nb_insert_samples(nb_dctx *d) {
    static _Thread_local uint8_t touched[NB_DMAX_TRIS];
    /* wi: the worst sample (the first of the largest errors above
       max_error), found by the pass that re-locates samples after an
       insertion, else by a scan */
    int wi = -1;
    bool known = false;
    for (;;) {
        if (!known) {
            float worst = d->max_error;
            wi = -1;
            for (int i = 0; i < d->nsamp; i++)
                if (d->samp[i].tri >= 0 && d->samp[i].err > worst) {
                    worst = d->samp[i].err;
                    wi = i;
                }
        }
        known = false;
        if (wi < 0 || d->npts >= NB_DMAX_HULL + NB_DMAX_SAMPLES || d->ntris + 2 > NB_DMAX_TRIS)
            return;
        int t = d->samp[wi].tri, p = d->npts++;
        memcpy(d->pts[p].p, d->samp[wi].p, sizeof d->samp[wi].p);
        d->pts[p].id = NB_NONE;
        int a = d->tris[t][0], b = d->tris[t][1], c = d->tris[t][2];
        d->samp[wi].tri = -1;
        /* a point on (or very near) an edge would leave a sliver: skip it */
        if (!nb_solid(d->pts[a].p, d->pts[b].p, d->pts[p].p) ||
            !nb_solid(d->pts[b].p, d->pts[c].p, d->pts[p].p) ||
            !nb_solid(d->pts[c].p, d->pts[a].p, d->pts[p].p)) {
            d->npts--;
            continue;
        }
        int t1 = d->ntris, t2 = d->ntris + 1;
        int n1 = d->nbr[t][1], n2 = d->nbr[t][2];
        d->tris[t][0] = a, d->tris[t][1] = b, d->tris[t][2] = p;
        d->tris[t1][0] = b, d->tris[t1][1] = c, d->tris[t1][2] = p;
        d->tris[t2][0] = c, d->tris[t2][1] = a, d->tris[t2][2] = p;
        d->nbr[t][1] = t1, d->nbr[t][2] = t2;
        d->nbr[t1][0] = n1, d->nbr[t1][1] = t2, d->nbr[t1][2] = t;
        d->nbr[t2][0] = n2, d->nbr[t2][1] = t, d->nbr[t2][2] = t1;
        nb_relink(d, n1, c, b, t1);
        nb_relink(d, n2, a, c, t2);
        d->ntris += 2;
        memset(touched, 0, (size_t)d->ntris);
        touched[t] = touched[t1] = touched[t2] = 1;
        nb_flip_around(d, p, t, touched);
        int tl[NB_DMAX_TRIS], nt = 0;
        for (int u = 0; u < d->ntris; u++)
            if (touched[u]) {
                tl[nt++] = u;
                nb_tri_box(d, u);
            }
        float worst = d->max_error;
        wi = -1;
        for (int i = 0; i < d->nsamp; i++) {
            int st = d->samp[i].tri;
            if (st >= 0 && touched[st]) {
                d->samp[i].tri = -1;
                const double x = d->samp[i].p[0], z = d->samp[i].p[2];
                for (int k = 0; k < nt && d->samp[i].tri < 0; k++)
                    if (!nb_box_misses(d, tl[k], x, z))
                        nb_locate(d, i, tl[k], tl[k] + 1);
            }
            if (d->samp[i].tri >= 0 && d->samp[i].err > worst) {
                worst = d->samp[i].err;
                wi = i;
            }
        }
        known = true;
    }
}

static nav_status nb_detail_poly(nb_dctx *d, int pi) {
    const nb_pmesh *pm = d->pm;
    const uint32_t *poly = &pm->p[(size_t)pi * pm->nvp];
    int n = 0;
    while (n < pm->nvp && poly[n] != NB_NONE)
        n++;
    float corner[NAV_BAKE_MAX_VERTS_PER_POLY][3];
    float bmin[3] = {INFINITY, INFINITY, INFINITY}, bmax[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int k = 0; k < n; k++) {
        nb_world(d->bmin, d->cs, d->ch, &pm->v[poly[k] * 3], corner[k]);
        for (int j = 0; j < 3; j++) {
            bmin[j] = fminf(bmin[j], corner[k][j]);
            bmax[j] = fmaxf(bmax[j], corner[k][j]);
        }
    }
    d->nhull = 0;
    d->reg = pm->reg[pi];
    memcpy(d->pbmin, bmin, sizeof d->pbmin);
    memcpy(d->pbmax, bmax, sizeof d->pbmax);
    d->box_ready = d->patch_ready = false;
    d->patch_st = NAV_OK;
    for (int k = 0; k < n; k++) {
        memcpy(d->hull[d->nhull].p, corner[k], sizeof corner[k]);
        d->hull[d->nhull].id = poly[k];
        d->nhull++;
        nb_edge_points(d, corner[k], corner[(k + 1) % n]);
    }
    d->npts = d->nhull;
    memcpy(d->pts, d->hull, (size_t)d->nhull * sizeof *d->pts);
    nb_hull_tris(d);
    nb_interior(d, bmin, bmax, pm->reg[pi]);
    if (d->patch_st != NAV_OK)
        return d->patch_st;
    nb_insert_samples(d);
    nb_dmesh *dm = d->dm;
    dm->ptris[2 * pi] = dm->nt;
    for (int t = 0; t < d->ntris; t++) {
        uint32_t id[3];
        for (int k = 0; k < 3; k++) {
            nb_dpt *p = &d->pts[d->tris[t][k]];
            if (p->id == NB_NONE && !nb_dm_push_vert(dm, p->p, &p->id))
                return NAV_E_NOMEM;
            id[k] = p->id;
        }
        if (!nb_dm_push_tri(dm, id[0], id[1], id[2]))
            return NAV_E_NOMEM;
    }
    dm->ptris[2 * pi + 1] = dm->nt - dm->ptris[2 * pi];
    return NAV_OK;
}

nav_status nb_detail(const nb_work *w, const nb_pmesh *pm, float sample_dist, float max_error,
                     nb_dmesh *dm, nb_ctx *c) {
    memset(dm, 0, sizeof *dm);
    dm->ptris = malloc(((size_t)pm->np + 1) * 2 * sizeof *dm->ptris);
    nb_dctx *d = malloc(sizeof *d);
    if (!dm->ptris || !d) {
        free(d);
        return NAV_E_NOMEM;
    }
    d->wk = w;
    d->pm = pm;
    d->dm = dm;
    d->sample_dist = sample_dist;
    d->max_error = max_error;
    d->cs = w->chf->cs;
    d->ch = w->chf->ch;
    d->bmin = w->chf->bmin;
    d->patch = d->queue = NULL;
    d->patch_cap = 0;
    nav_status st = NAV_OK;
    for (int p = 0; p < pm->np && st == NAV_OK; p++) {
        if ((p & 255) == 255 && nb_cancelled(c))
            st = NAV_E_CANCELLED;
        else
            st = nb_detail_poly(d, p);
    }
    free(d->patch);
    free(d->queue);
    free(d);
    return st;
}
