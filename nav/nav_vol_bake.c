/*
 * nav_vol_bake: level triangles to a flight volume.
 *
 * Three stages, each reporting progress: rasterizing (every triangle marks
 * the voxels it comes within the radius of: tested first per brick against
 * the brick grown by the radius, then per voxel exactly, see
 * nav_vol_geom.c), compressing (bricks that are all blocked or all free keep no
 * bits), and components (face-connected pieces of each mixed brick found
 * with bit floods, then joined across brick faces with a union-find).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "nav/nav_vol_internal.h"

static nav_status vol_fail(nav_error *err, nav_status st, const char *fmt, const char *what) {
    if (err) {
        err->status = st;
        snprintf(err->message, sizeof err->message, fmt, what);
    }
    return st;
}

nav_status nav_vol_check(const nav_vol_settings *s, uint64_t *voxels, nav_error *err) {
    if (voxels)
        *voxels = 0;
    if (!s)
        return vol_fail(err, NAV_E_INVALID_ARG, "%s", "no settings");
    if (!isfinite(s->voxel_size) || s->voxel_size <= 0)
        return vol_fail(err, NAV_E_INVALID_ARG, "%s must be a positive number", "voxel_size");
    if (!isfinite(s->radius) || s->radius < 0)
        return vol_fail(err, NAV_E_INVALID_ARG, "%s must be a number >= 0", "radius");
    double n = 1;
    for (int a = 0; a < 3; a++) {
        if (!isfinite(s->bmin[a]) || !isfinite(s->bmax[a]) || !(s->bmax[a] > s->bmin[a]))
            return vol_fail(err, NAV_E_INVALID_ARG, "%s",
                            "bounds must be [[min x, y, z], [max x, y, z]] with max > min on "
                            "every axis");
        double k = ceil(((double)s->bmax[a] - s->bmin[a]) / s->voxel_size);
        n *= k < 1 ? 1 : k;
    }
    double cap = s->max_voxels && s->max_voxels < NAV_VOL_MAX_VOXELS ? (double)s->max_voxels
                                                                     : (double)NAV_VOL_MAX_VOXELS;
    if (n > cap) {
        if (err) {
            err->status = NAV_E_LIMIT;
            snprintf(err->message, sizeof err->message,
                     "voxel_size %g over these bounds makes %.0f voxels, more than the limit of "
                     "%.0f",
                     (double)s->voxel_size, n, cap);
        }
        return NAV_E_LIMIT;
    }
    if (voxels)
        *voxels = (uint64_t)n;
    return NAV_OK;
}

/* ---- stage 1: rasterize into per-brick blocked masks ---- */

typedef struct bake {
    nav_vol *v;
    uint64_t *blocked; /* per brick: 1 per blocked voxel */
    nav_vol_progress_fn progress;
    void *ctx;
    double last;
} bake;

static int bake_report(bake *k, const char *stage, double p) {
    if (!k->progress)
        return 0;
    if (p < k->last)
        p = k->last;
    k->last = p;
    return k->progress(k->ctx, stage, (float)p);
}

static void range_of(const nav_vol *v, float lo, float hi, int a, int64_t *i0, int64_t *i1) {
    int64_t l = (int64_t)floor(((double)lo - v->bmin[a]) * v->inv_vs);
    int64_t h = (int64_t)floor(((double)hi - v->bmin[a]) * v->inv_vs);
    *i0 = l < 0 ? 0 : l;
    *i1 = h >= (int64_t)v->n[a] ? (int64_t)v->n[a] - 1 : h;
}

static void raster_brick(bake *k, const float t[3][3], uint32_t bi, const uint32_t bc[3],
                         const int64_t lo[3], const int64_t hi[3], float h, float grow) {
    nav_vol *v = k->v;
    for (uint32_t lz = 0; lz < 4; lz++) {
        int64_t z = (int64_t)bc[2] * 4 + lz;
        if (z < lo[2] || z > hi[2])
            continue;
        for (uint32_t ly = 0; ly < 4; ly++) {
            int64_t y = (int64_t)bc[1] * 4 + ly;
            if (y < lo[1] || y > hi[1])
                continue;
            for (uint32_t lx = 0; lx < 4; lx++) {
                int64_t x = (int64_t)bc[0] * 4 + lx;
                uint64_t bit = 1ull << (lx + 4 * ly + 16 * lz);
                if (x < lo[0] || x > hi[0] || (k->blocked[bi] & bit))
                    continue;
                float c[3] = {v->bmin[0] + ((float)x + 0.5f) * v->vs,
                              v->bmin[1] + ((float)y + 0.5f) * v->vs,
                              v->bmin[2] + ((float)z + 0.5f) * v->vs};
                if (nav_vol_tri_near_box(t, c, h, grow))
                    k->blocked[bi] |= bit;
            }
        }
    }
}

static void raster_triangle(bake *k, const float t[3][3]) {
    nav_vol *v = k->v;
    float r = v->radius;
    /* grown a little beyond radius so float rounding can only block more */
    float grow = r + v->vs * 1e-4f;
    float hb[3] = {v->vs * 2 + grow, v->vs * 2 + grow, v->vs * 2 + grow};
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        float mn = fminf(t[0][a], fminf(t[1][a], t[2][a])) - grow;
        float mx = fmaxf(t[0][a], fmaxf(t[1][a], t[2][a])) + grow;
        range_of(v, mn, mx, a, &lo[a], &hi[a]);
        if (lo[a] > hi[a])
            return;
    }
    uint32_t bc[3];
    for (bc[2] = (uint32_t)(lo[2] >> 2); bc[2] <= (uint32_t)(hi[2] >> 2); bc[2]++)
        for (bc[1] = (uint32_t)(lo[1] >> 2); bc[1] <= (uint32_t)(hi[1] >> 2); bc[1]++)
            for (bc[0] = (uint32_t)(lo[0] >> 2); bc[0] <= (uint32_t)(hi[0] >> 2); bc[0]++) {
                uint32_t bi = nav_vol_brick_index(v, bc[0], bc[1], bc[2]);
                if (k->blocked[bi] == UINT64_MAX)
                    continue;
                float c[3];
                for (int a = 0; a < 3; a++)
                    c[a] = v->bmin[a] + ((float)bc[a] * 4 + 2) * v->vs;
                if (nav_vol_tri_box(t, c, hb))
                    raster_brick(k, t, bi, bc, lo, hi, v->vs * 0.5f, grow);
            }
}

/* Marks the voxels past the grid's dims (padding of the last bricks) blocked. */
static void block_padding(bake *k) {
    nav_vol *v = k->v;
    for (uint32_t bz = 0; bz < v->b[2]; bz++)
        for (uint32_t by = 0; by < v->b[1]; by++)
            for (uint32_t bx = 0; bx < v->b[0]; bx++) {
                uint64_t pad = 0;
                for (uint32_t l = 0; l < 64; l++) {
                    uint32_t x = bx * 4 + (l & 3), y = by * 4 + ((l >> 2) & 3),
                             z = bz * 4 + (l >> 4);
                    if (x >= v->n[0] || y >= v->n[1] || z >= v->n[2])
                        pad |= 1ull << l;
                }
                k->blocked[nav_vol_brick_index(v, bx, by, bz)] |= pad;
            }
}

static nav_status rasterize(bake *k, const float *verts, uint32_t nverts, const uint32_t *tris,
                            uint32_t ntris) {
    block_padding(k);
    uint32_t every = ntris / 200 + 1;
    for (uint32_t i = 0; i < ntris; i++) {
        if (i % every == 0 && bake_report(k, "rasterizing", 0.8 * i / (double)ntris))
            return NAV_E_CANCELLED;
        float t[3][3];
        int ok = 1;
        for (int j = 0; j < 3; j++) {
            uint32_t vi = tris[3 * i + j];
            if (vi >= nverts) {
                ok = 0;
                break;
            }
            memcpy(t[j], verts + 3 * (size_t)vi, sizeof t[j]);
        }
        if (ok)
            raster_triangle(k, t);
    }
    return NAV_OK;
}

/* ---- stages 2 and 3: compress and label ---- */

uint64_t nav_vol_flood(uint64_t seed, uint64_t within) {
    uint64_t x = seed & within, prev;
    do {
        prev = x;
        x |= ((x << 1) & ~NAV_VOL_X0) | ((x >> 1) & ~NAV_VOL_X3) | ((x << 4) & ~NAV_VOL_Y0) |
             ((x >> 4) & ~NAV_VOL_Y3) | (x << 16) | (x >> 16);
        x &= within;
    } while (x != prev);
    return x;
}

static uint32_t uf_find(uint32_t *p, uint32_t i) {
    while (p[i] != i) {
        p[i] = p[p[i]];
        i = p[i];
    }
    return i;
}

static void uf_union(uint32_t *p, uint32_t a, uint32_t b) {
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a != b) {
        if (a < b)
            p[b] = a;
        else
            p[a] = b;
    }
}

/* Per brick during labelling: its pieces (free masks) and their union-find nodes. */
typedef struct piece {
    uint64_t mask;
    uint32_t node;
} piece;

typedef struct label_state {
    uint32_t *first; /* per brick: first piece, count in `count` */
    uint8_t *count;
    piece *pieces;
    uint32_t npieces;
    uint32_t *uf;
} label_state;

static nav_status split_pieces(bake *k, label_state *ls) {
    nav_vol *v = k->v;
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    size_t cap = nb + 64;
    ls->first = malloc(nb * sizeof *ls->first);
    ls->count = calloc(nb, 1);
    ls->pieces = malloc(cap * sizeof *ls->pieces);
    if (!ls->first || !ls->count || !ls->pieces)
        return NAV_E_NOMEM;
    for (size_t bi = 0; bi < nb; bi++) {
        uint64_t rest = ~k->blocked[bi];
        ls->first[bi] = ls->npieces;
        while (rest) {
            uint64_t p = nav_vol_flood(rest & (~rest + 1), rest);
            rest &= ~p;
            if (ls->npieces == cap) {
                cap *= 2;
                piece *np = realloc(ls->pieces, cap * sizeof *np);
                if (!np)
                    return NAV_E_NOMEM;
                ls->pieces = np;
            }
            ls->pieces[ls->npieces].mask = p;
            ls->pieces[ls->npieces].node = ls->npieces;
            ls->npieces++;
            ls->count[bi]++;
        }
    }
    ls->uf = malloc((ls->npieces + 1) * sizeof *ls->uf);
    if (!ls->uf)
        return NAV_E_NOMEM;
    for (uint32_t i = 0; i < ls->npieces; i++)
        ls->uf[i] = i;
    return NAV_OK;
}

/* Joins the pieces of bricks a and b (b the next along axis `ax`) that share a face voxel. */
static void join_faces(label_state *ls, size_t a, size_t b, int ax) {
    static const uint64_t hi_face[3] = {NAV_VOL_X3, NAV_VOL_Y3, NAV_VOL_Z3};
    static const unsigned shift[3] = {3, 12, 48};
    for (uint32_t i = 0; i < ls->count[a]; i++) {
        const piece *pa = &ls->pieces[ls->first[a] + i];
        uint64_t face = (pa->mask & hi_face[ax]) >> shift[ax];
        if (!face)
            continue;
        for (uint32_t j = 0; j < ls->count[b]; j++) {
            const piece *pb = &ls->pieces[ls->first[b] + j];
            if (pb->mask & face)
                uf_union(ls->uf, pa->node, pb->node);
        }
    }
}

static nav_status label(bake *k, label_state *ls) {
    nav_vol *v = k->v;
    nav_status st = split_pieces(k, ls);
    if (st != NAV_OK)
        return st;
    for (uint32_t bz = 0; bz < v->b[2]; bz++) {
        if (bake_report(k, "components", 0.85 + 0.1 * bz / (double)v->b[2]))
            return NAV_E_CANCELLED;
        for (uint32_t by = 0; by < v->b[1]; by++)
            for (uint32_t bx = 0; bx < v->b[0]; bx++) {
                size_t bi = nav_vol_brick_index(v, bx, by, bz);
                if (!ls->count[bi])
                    continue;
                if (bx + 1 < v->b[0])
                    join_faces(ls, bi, bi + 1, 0);
                if (by + 1 < v->b[1])
                    join_faces(ls, bi, bi + v->b[0], 1);
                if (bz + 1 < v->b[2])
                    join_faces(ls, bi, bi + (size_t)v->b[0] * v->b[1], 2);
            }
    }
    /* compact component ids in piece order: deterministic */
    uint32_t *id = malloc((ls->npieces + 1) * sizeof *id);
    if (!id)
        return NAV_E_NOMEM;
    for (uint32_t i = 0; i < ls->npieces; i++)
        id[i] = NAV_VOL_NONE;
    for (uint32_t i = 0; i < ls->npieces; i++) {
        uint32_t r = uf_find(ls->uf, i);
        if (id[r] == NAV_VOL_NONE)
            id[r] = v->ncomp++;
        ls->pieces[i].node = id[r];
    }
    free(id);
    return NAV_OK;
}

static nav_status compress(bake *k, label_state *ls) {
    nav_vol *v = k->v;
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    uint32_t nmixed = 0, nparts = 0;
    for (size_t bi = 0; bi < nb; bi++) {
        uint64_t bl = k->blocked[bi];
        if (bl != 0 && bl != UINT64_MAX) {
            nmixed++;
            if (ls->count[bi] > 1)
                nparts += ls->count[bi];
        }
        v->nfree += (uint64_t)__builtin_popcountll(~bl);
    }
    v->top = malloc(nb * sizeof *v->top);
    v->masks = malloc((nmixed + 1) * sizeof *v->masks);
    v->labels = malloc((nmixed + 1) * sizeof *v->labels);
    v->parts = malloc((nparts + 1) * sizeof *v->parts);
    if (!v->top || !v->masks || !v->labels || !v->parts)
        return NAV_E_NOMEM;
    for (size_t bi = 0; bi < nb; bi++) {
        uint64_t bl = k->blocked[bi];
        const piece *p = &ls->pieces[ls->first[bi]];
        if (bl == UINT64_MAX) {
            v->top[bi] = NAV_VOL_SOLID;
        } else if (bl == 0) {
            v->top[bi] = p->node;
        } else {
            uint32_t i = v->nmixed++;
            v->top[bi] = NAV_VOL_MIXED | i;
            v->masks[i] = ~bl;
            if (ls->count[bi] == 1) {
                v->labels[i] = p->node;
            } else {
                v->labels[i] = NAV_VOL_MULTI | v->nparts;
                for (uint32_t j = 0; j < ls->count[bi]; j++) {
                    nav_vol_part *q = &v->parts[v->nparts++];
                    q->mask = p[j].mask;
                    q->comp = p[j].node;
                    q->last = j + 1 == ls->count[bi];
                }
            }
        }
    }
    return NAV_OK;
}

static nav_vol *vol_alloc(const nav_vol_settings *s) {
    nav_vol *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->vs = s->voxel_size;
    v->inv_vs = 1.0f / s->voxel_size;
    v->radius = s->radius;
    v->uid = nav_mesh_next_uid();
    for (int a = 0; a < 3; a++) {
        v->bmin[a] = s->bmin[a];
        double k = ceil(((double)s->bmax[a] - s->bmin[a]) / s->voxel_size);
        v->n[a] = k < 1 ? 1 : (uint32_t)k;
        v->b[a] = (v->n[a] + 3) / 4;
    }
    return v;
}

nav_status nav_vol_bake(const float *verts, uint32_t nverts, const uint32_t *tris, uint32_t ntris,
                        const nav_vol_settings *s, nav_vol_progress_fn progress, void *ctx,
                        nav_vol **out, nav_error *err) {
    if (out)
        *out = NULL;
    if (!out || (ntris && (!verts || !tris)))
        return vol_fail(err, NAV_E_INVALID_ARG, "%s", "no output or no triangles");
    nav_status st = nav_vol_check(s, NULL, err);
    if (st != NAV_OK)
        return st;
    bake k = {.v = vol_alloc(s), .progress = progress, .ctx = ctx};
    label_state ls = {0};
    if (!k.v)
        return vol_fail(err, NAV_E_NOMEM, "%s", "out of memory");
    size_t nb = (size_t)k.v->b[0] * k.v->b[1] * k.v->b[2];
    k.blocked = calloc(nb, sizeof *k.blocked);
    st = k.blocked ? NAV_OK : NAV_E_NOMEM;
    if (st == NAV_OK)
        st = rasterize(&k, verts, nverts, tris, ntris);
    if (st == NAV_OK && bake_report(&k, "components", 0.8))
        st = NAV_E_CANCELLED;
    if (st == NAV_OK)
        st = label(&k, &ls);
    if (st == NAV_OK && bake_report(&k, "compressing", 0.95))
        st = NAV_E_CANCELLED;
    if (st == NAV_OK)
        st = compress(&k, &ls);
    free(k.blocked);
    free(ls.first);
    free(ls.count);
    free(ls.pieces);
    free(ls.uf);
    if (st == NAV_OK && bake_report(&k, "done", 1.0))
        st = NAV_E_CANCELLED;
    if (st != NAV_OK) {
        nav_vol_free(k.v);
        return vol_fail(err, st, "%s",
                        st == NAV_E_CANCELLED ? "the bake was cancelled"
                                              : "out of memory while baking");
    }
    *out = k.v;
    return NAV_OK;
}

void nav_vol_free(nav_vol *v) {
    if (!v)
        return;
    free(v->top);
    free(v->masks);
    free(v->labels);
    free(v->parts);
    free(v);
}
