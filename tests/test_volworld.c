/*
 * test_volworld: see test_volworld.h. Free of Check so the bench links it.
 */
#include "tests/test_volworld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_fixtures.h"

const char *const VW_NAME[VW_COUNT] = {"rooms", "pillars", "slabs", "thin", "closed"};

void vw_init(vw_world *w, float x0, float y0, float z0, float x1, float y1, float z1) {
    memset(w, 0, sizeof *w);
    w->bmin[0] = x0, w->bmin[1] = y0, w->bmin[2] = z0;
    w->bmax[0] = x1, w->bmax[1] = y1, w->bmax[2] = z1;
}

void vw_free(vw_world *w) {
    free(w->v);
    free(w->t);
    memset(w, 0, sizeof *w);
}

static uint32_t vw_vert(vw_world *w, float x, float y, float z) {
    if (w->nv == w->capv) {
        w->capv = w->capv ? w->capv * 2 : 256;
        w->v = realloc(w->v, (size_t)w->capv * 3 * sizeof *w->v);
        if (!w->v)
            abort();
    }
    w->v[3 * w->nv] = x, w->v[3 * w->nv + 1] = y, w->v[3 * w->nv + 2] = z;
    return w->nv++;
}

static void vw_tri(vw_world *w, uint32_t a, uint32_t b, uint32_t c) {
    if (w->nt == w->capt) {
        w->capt = w->capt ? w->capt * 2 : 256;
        w->t = realloc(w->t, (size_t)w->capt * 3 * sizeof *w->t);
        if (!w->t)
            abort();
    }
    w->t[3 * w->nt] = a, w->t[3 * w->nt + 1] = b, w->t[3 * w->nt + 2] = c;
    w->nt++;
}

void vw_triangle(vw_world *w, const float a[3], const float b[3], const float c[3]) {
    uint32_t i = vw_vert(w, a[0], a[1], a[2]), j = vw_vert(w, b[0], b[1], b[2]),
             k = vw_vert(w, c[0], c[1], c[2]);
    vw_tri(w, i, j, k);
}

void vw_box(vw_world *w, float x0, float y0, float z0, float x1, float y1, float z1) {
    uint32_t c[8];
    for (int i = 0; i < 8; i++)
        c[i] = vw_vert(w, i & 1 ? x1 : x0, i & 2 ? y1 : y0, i & 4 ? z1 : z0);
    static const int f[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1},
                                {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    for (int i = 0; i < 6; i++) {
        vw_tri(w, c[f[i][0]], c[f[i][1]], c[f[i][2]]);
        vw_tri(w, c[f[i][0]], c[f[i][2]], c[f[i][3]]);
    }
}

void vw_quad(vw_world *w, int axis, float at, float u0, float v0, float u1, float v1) {
    int ua = axis == 0 ? 1 : 0, va = axis == 2 ? 1 : 2;
    uint32_t c[4];
    for (int i = 0; i < 4; i++) {
        float p[3];
        p[axis] = at;
        p[ua] = (i == 1 || i == 2) ? u1 : u0;
        p[va] = (i >= 2) ? v1 : v0;
        c[i] = vw_vert(w, p[0], p[1], p[2]);
    }
    vw_tri(w, c[0], c[1], c[2]);
    vw_tri(w, c[0], c[2], c[3]);
}

void vw_wall_with_hole(vw_world *w, int axis, const float lo[3], const float hi[3],
                       const float h0[2], const float h1[2]) {
    int ua = axis == 0 ? 1 : 0, va = axis == 2 ? 1 : 2;
    /* below, above (on u), then left and right of the hole (on v) within the hole's u span */
    float parts[4][2][3];
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 3; a++)
            parts[k][0][a] = lo[a], parts[k][1][a] = hi[a];
    parts[0][1][ua] = h0[0];
    parts[1][0][ua] = h1[0];
    parts[2][0][ua] = h0[0], parts[2][1][ua] = h1[0], parts[2][1][va] = h0[1];
    parts[3][0][ua] = h0[0], parts[3][1][ua] = h1[0], parts[3][0][va] = h1[1];
    for (int k = 0; k < 4; k++) {
        const float *a = parts[k][0], *b = parts[k][1];
        if (b[0] > a[0] && b[1] > a[1] && b[2] > a[2])
            vw_box(w, a[0], a[1], a[2], b[0], b[1], b[2]);
    }
}

void vw_random_boxes(vw_world *w, float fraction, float smin, float smax, uint32_t seed) {
    uint32_t st = seed;
    double total = 1, sum = 0;
    for (int a = 0; a < 3; a++)
        total *= (double)w->bmax[a] - w->bmin[a];
    while (sum < fraction * total) {
        float lo[3], hi[3];
        double vol = 1;
        for (int a = 0; a < 3; a++) {
            float s = smin + fx_randf(&st) * (smax - smin);
            lo[a] = w->bmin[a] + fx_randf(&st) * (w->bmax[a] - w->bmin[a] - s);
            hi[a] = lo[a] + s;
            vol *= s;
        }
        vw_box(w, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
        sum += vol;
    }
}

char *vw_obj(const vw_world *w, size_t *len) {
    size_t cap = (size_t)w->nv * 64 + (size_t)w->nt * 40 + 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        abort();
    for (uint32_t i = 0; i < w->nv; i++)
        n += (size_t)snprintf(s + n, cap - n, "v %.9g %.9g %.9g\n", (double)w->v[3 * i],
                              (double)w->v[3 * i + 1], (double)w->v[3 * i + 2]);
    for (uint32_t i = 0; i < w->nt; i++)
        n += (size_t)snprintf(s + n, cap - n, "f %u %u %u\n", w->t[3 * i] + 1, w->t[3 * i + 1] + 1,
                              w->t[3 * i + 2] + 1);
    if (len)
        *len = n;
    return s;
}

/* Coordinates are deliberately off the 0.5 m voxel grid (as real levels are): geometry
   aligned with voxel faces at exactly the radius is the worst case of quantization. */
void vw_make(int which, vw_world *w) {
    switch (which) {
    case W_ROOMS: { /* floor, ceiling, two walls with doors at different heights */
        vw_init(w, 0, 0, 0, 24, 8, 16);
        vw_quad(w, 1, 0.1f, 0, 0, 24, 16);
        vw_quad(w, 1, 7.9f, 0, 0, 24, 16);
        float lo1[3] = {7.8f, 0, 0}, hi1[3] = {8.3f, 8, 16}, h01[2] = {1.1f, 6.2f},
              h11[2] = {4.15f, 10.1f};
        vw_wall_with_hole(w, 0, lo1, hi1, h01, h11);
        float lo2[3] = {16.05f, 0, 0}, hi2[3] = {16.6f, 8, 16}, h02[2] = {3.9f, 1.15f},
              h12[2] = {6.95f, 5.2f};
        vw_wall_with_hole(w, 0, lo2, hi2, h02, h12);
        break;
    }
    case W_PILLARS: /* a floor and a 4 x 4 grid of 1 m pillars, and a slanted plank */
        vw_init(w, 0, 0, 0, 20, 6, 20);
        vw_quad(w, 1, 0.1f, 0, 0, 20, 20);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                vw_box(w, 3.3f + 4 * i, 0, 3.7f + 4 * j, 4.3f + 4 * i, 6, 4.7f + 4 * j);
        {
            float a[3] = {0.5f, 0.5f, 1}, b[3] = {2.5f, 5, 1}, c[3] = {2.5f, 5, 19},
                  d[3] = {0.5f, 0.5f, 19};
            vw_triangle(w, a, b, c);
            vw_triangle(w, a, c, d);
        }
        break;
    case W_SLABS: /* floating slabs with gaps between them at several heights */
        vw_init(w, 0, 0, 0, 16, 16, 16);
        vw_box(w, 0, 5.1f, 0, 10.2f, 5.6f, 16);
        vw_box(w, 6.1f, 10.1f, 0, 16, 10.6f, 16);
        vw_box(w, 2.2f, 2.15f, 2.1f, 14.1f, 2.45f, 6.3f);
        vw_box(w, 4.1f, 13.1f, 4.2f, 12.3f, 13.3f, 12.1f);
        break;
    case W_THIN: /* walls 0.25 m thick (one voxel at 0.25 m) and of zero thickness, with gaps */
        vw_init(w, 0, 0, 0, 16, 8, 16);
        vw_box(w, 4.1f, 0, 0, 4.35f, 8, 12.1f);
        vw_quad(w, 0, 8.05f, 0, 4.1f, 8, 16); /* zero-thickness wall, open for z < 4.1 */
        vw_box(w, 12.1f, 0, 0, 12.35f, 8, 12.1f);
        vw_quad(w, 1, 4.1f, 8.05f, 0, 12.1f, 16); /* a zero-thickness shelf */
        break;
    case W_CLOSED: /* a hollow closed box in open space */
        vw_init(w, 0, 0, 0, 16, 16, 16);
        vw_quad(w, 0, 4, 4, 4, 12, 12);
        vw_quad(w, 0, 12, 4, 4, 12, 12);
        vw_quad(w, 1, 4, 4, 4, 12, 12);
        vw_quad(w, 1, 12, 4, 4, 12, 12);
        vw_quad(w, 2, 4, 4, 4, 12, 12);
        vw_quad(w, 2, 12, 4, 4, 12, 12);
        break;
    }
}
