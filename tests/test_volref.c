/*
 * test_volref: the flight-volume tests' independent references (see
 * test_volref.h): exact segment-triangle and box-triangle distances in
 * double precision (Ericson, Real-Time Collision Detection, 5.1), and a
 * fine-grid shortest path. Nothing here uses nav/. Free of Check.
 */
#include "tests/test_volref.h"

#include <math.h>
#include <stdlib.h>

/* ---- exact geometry (doubles), independent of nav/ ---- */

typedef struct d3 {
    double x, y, z;
} d3;

static d3 mk(const float *p) {
    return (d3){p[0], p[1], p[2]};
}
static d3 sub(d3 a, d3 b) {
    return (d3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static d3 add(d3 a, d3 b) {
    return (d3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static d3 scl(d3 a, double s) {
    return (d3){a.x * s, a.y * s, a.z * s};
}
static double dot(d3 a, d3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static d3 cross(d3 a, d3 b) {
    return (d3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static double len2(d3 a) {
    return dot(a, a);
}
static double clamp01(double x) {
    return x < 0 ? 0 : (x > 1 ? 1 : x);
}

/* Closest point of triangle abc to p (Ericson, Real-Time Collision Detection 5.1.5). */
static d3 closest_on_tri(d3 p, d3 a, d3 b, d3 c) {
    d3 ab = sub(b, a), ac = sub(c, a), ap = sub(p, a);
    double d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0)
        return a;
    d3 bp = sub(p, b);
    double d3_ = dot(ab, bp), d4 = dot(ac, bp);
    if (d3_ >= 0 && d4 <= d3_)
        return b;
    double vc = d1 * d4 - d3_ * d2;
    if (vc <= 0 && d1 >= 0 && d3_ <= 0)
        return add(a, scl(ab, d1 / (d1 - d3_)));
    d3 cp = sub(p, c);
    double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6)
        return c;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0)
        return add(a, scl(ac, d2 / (d2 - d6)));
    double va = d3_ * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3_) >= 0 && (d5 - d6) >= 0)
        return add(b, scl(sub(c, b), (d4 - d3_) / ((d4 - d3_) + (d5 - d6))));
    double den = 1 / (va + vb + vc);
    return add(a, add(scl(ab, vb * den), scl(ac, vc * den)));
}

static double pt_tri2(d3 p, d3 a, d3 b, d3 c) {
    return len2(sub(p, closest_on_tri(p, a, b, c)));
}

/* Squared distance between segments p1q1 and p2q2 (Ericson 5.1.9). */
static double seg_seg2(d3 p1, d3 q1, d3 p2, d3 q2) {
    d3 d1 = sub(q1, p1), d2 = sub(q2, p2), r = sub(p1, p2);
    double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), s, t;
    if (a <= 1e-18 && e <= 1e-18)
        return len2(r);
    if (a <= 1e-18) {
        s = 0;
        t = clamp01(f / e);
    } else {
        double c = dot(d1, r);
        if (e <= 1e-18) {
            t = 0;
            s = clamp01(-c / a);
        } else {
            double b = dot(d1, d2), den = a * e - b * b;
            s = den > 1e-18 ? clamp01((b * f - c * e) / den) : 0;
            t = (b * s + f) / e;
            if (t < 0) {
                t = 0;
                s = clamp01(-c / a);
            } else if (t > 1) {
                t = 1;
                s = clamp01((b - c) / a);
            }
        }
    }
    return len2(sub(add(p1, scl(d1, s)), add(p2, scl(d2, t))));
}

/* Whether segment pq meets triangle abc (Moller-Trumbore, both sides). */
static int seg_hits_tri(d3 p, d3 q, d3 a, d3 b, d3 c) {
    d3 d = sub(q, p), e1 = sub(b, a), e2 = sub(c, a), h = cross(d, e2);
    double det = dot(e1, h);
    if (fabs(det) < 1e-15)
        return 0;
    double inv = 1 / det;
    d3 s = sub(p, a);
    double u = dot(s, h) * inv;
    if (u < 0 || u > 1)
        return 0;
    d3 qq = cross(s, e1);
    double v = dot(d, qq) * inv;
    if (v < 0 || u + v > 1)
        return 0;
    double t = dot(e2, qq) * inv;
    return t >= 0 && t <= 1;
}

static double seg_tri2(d3 p, d3 q, d3 a, d3 b, d3 c) {
    if (seg_hits_tri(p, q, a, b, c))
        return 0;
    double m = fmin(pt_tri2(p, a, b, c), pt_tri2(q, a, b, c));
    m = fmin(m, seg_seg2(p, q, a, b));
    m = fmin(m, seg_seg2(p, q, b, c));
    return fmin(m, seg_seg2(p, q, c, a));
}

static d3 tri_v(const vw_world *w, uint32_t t, int k) {
    return mk(w->v + 3 * w->t[3 * t + k]);
}

/* Smallest distance from segment pq to the world's triangles. */
double vr_seg_world_dist(const vw_world *w, const float *p, const float *q) {
    double m = INFINITY;
    d3 P = mk(p), Q = mk(q);
    for (uint32_t t = 0; t < w->nt; t++)
        m = fmin(m, seg_tri2(P, Q, tri_v(w, t, 0), tri_v(w, t, 1), tri_v(w, t, 2)));
    return sqrt(m);
}

/* Whether the closed segment pq meets the closed box lo..hi (slab test). */
static int seg_hits_box(d3 p, d3 q, const double lo[3], const double hi[3], int open) {
    double t0 = 0, t1 = 1, P[3] = {p.x, p.y, p.z}, D[3] = {q.x - p.x, q.y - p.y, q.z - p.z};
    for (int a = 0; a < 3; a++) {
        if (fabs(D[a]) < 1e-15) {
            if (open ? (P[a] <= lo[a] || P[a] >= hi[a]) : (P[a] < lo[a] || P[a] > hi[a]))
                return 0;
            continue;
        }
        double ta = (lo[a] - P[a]) / D[a], tb = (hi[a] - P[a]) / D[a];
        if (ta > tb) {
            double x = ta;
            ta = tb;
            tb = x;
        }
        t0 = fmax(t0, ta);
        t1 = fmin(t1, tb);
        if (open ? t0 >= t1 : t0 > t1)
            return 0;
    }
    return 1;
}

/* Exact distance between the closed box lo..hi and triangle abc. */
static double box_tri_dist(const double lo[3], const double hi[3], d3 a, d3 b, d3 c) {
    d3 tv[3] = {a, b, c}, bv[8];
    for (int i = 0; i < 8; i++)
        bv[i] = (d3){i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1], i & 4 ? hi[2] : lo[2]};
    static const int be[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                  {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
    for (int i = 0; i < 3; i++)
        if (seg_hits_box(tv[i], tv[(i + 1) % 3], lo, hi, 0))
            return 0;
    for (int i = 0; i < 12; i++)
        if (seg_hits_tri(bv[be[i][0]], bv[be[i][1]], a, b, c))
            return 0;
    double m = INFINITY;
    for (int i = 0; i < 3; i++) {
        double P[3] = {tv[i].x, tv[i].y, tv[i].z}, s = 0;
        for (int k = 0; k < 3; k++) {
            double d = P[k] < lo[k] ? lo[k] - P[k] : (P[k] > hi[k] ? P[k] - hi[k] : 0);
            s += d * d;
        }
        m = fmin(m, s);
    }
    for (int i = 0; i < 8; i++)
        m = fmin(m, pt_tri2(bv[i], a, b, c));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 12; j++)
            m = fmin(m, seg_seg2(tv[i], tv[(i + 1) % 3], bv[be[j][0]], bv[be[j][1]]));
    return sqrt(m);
}

/* ---- fine-grid reference for lengths ---- */

struct vr_fine {
    int n[3];
    double lo[3], fs;
    uint8_t *blocked;
};
typedef vr_fine fine;

static size_t fidx(const fine *f, int x, int y, int z) {
    return ((size_t)z * f->n[1] + (size_t)y) * f->n[0] + (size_t)x;
}

/* cs > 0: a fine voxel takes the blocked test of the voxel of side cs (on the same
   origin) that holds it, so the free space is that coarser grid's, searched finer. */
static void fine_build(fine *f, const vw_world *w, double fs, double cs, double r) {
    f->fs = fs;
    /* how far a coarse voxel reaches past a fine one, in fine voxels */
    int reach = cs > 0 ? (int)ceil(cs / fs) : 0;
    for (int a = 0; a < 3; a++) {
        f->lo[a] = w->bmin[a];
        f->n[a] = (int)ceil((w->bmax[a] - w->bmin[a]) / fs - 1e-9);
    }
    f->blocked = calloc((size_t)f->n[0] * f->n[1] * f->n[2], 1);
    for (uint32_t t = 0; t < w->nt; t++) {
        d3 a = tri_v(w, t, 0), b = tri_v(w, t, 1), c = tri_v(w, t, 2);
        double tv[3][3] = {{a.x, a.y, a.z}, {b.x, b.y, b.z}, {c.x, c.y, c.z}};
        int i0[3], i1[3];
        for (int k = 0; k < 3; k++) {
            double mn = fmin(tv[0][k], fmin(tv[1][k], tv[2][k])) - r;
            double mx = fmax(tv[0][k], fmax(tv[1][k], tv[2][k])) + r;
            i0[k] = (int)fmax(0, floor((mn - f->lo[k]) / fs) - 1 - reach);
            i1[k] = (int)fmin(f->n[k] - 1, floor((mx - f->lo[k]) / fs) + 1 + reach);
        }
        for (int z = i0[2]; z <= i1[2]; z++)
            for (int y = i0[1]; y <= i1[1]; y++)
                for (int x = i0[0]; x <= i1[0]; x++) {
                    size_t i = fidx(f, x, y, z);
                    if (f->blocked[i])
                        continue;
                    double lo[3] = {f->lo[0] + x * fs, f->lo[1] + y * fs, f->lo[2] + z * fs};
                    double hi[3] = {lo[0] + fs, lo[1] + fs, lo[2] + fs};
                    for (int k = 0; k < 3 && cs > 0; k++) {
                        /* the coarse voxel holding this one (fs divides cs) */
                        lo[k] = f->lo[k] + floor((lo[k] - f->lo[k]) / cs + 1e-9) * cs;
                        hi[k] = lo[k] + cs;
                    }
                    if (box_tri_dist(lo, hi, a, b, c) <= r)
                        f->blocked[i] = 1;
                }
    }
}

static int fine_free(const fine *f, int x, int y, int z) {
    if (x < 0 || y < 0 || z < 0 || x >= f->n[0] || y >= f->n[1] || z >= f->n[2])
        return 0;
    return !f->blocked[fidx(f, x, y, z)];
}

/* Exact: no blocked fine voxel's open interior meets segment pq, and pq stays in bounds. */
static int fine_los(const fine *f, d3 p, d3 q) {
    double L = sqrt(len2(sub(q, p)));
    int m = (int)ceil(L / (f->fs * 0.5)) + 1;
    for (int s = 0; s < m; s++) {
        d3 a = add(p, scl(sub(q, p), (double)s / m)),
           b = add(p, scl(sub(q, p), (double)(s + 1) / m));
        double A[3] = {a.x, a.y, a.z}, B[3] = {b.x, b.y, b.z};
        int i0[3], i1[3];
        for (int k = 0; k < 3; k++) {
            double mn = fmin(A[k], B[k]), mx = fmax(A[k], B[k]);
            if (mn < f->lo[k] - 1e-9 || mx > f->lo[k] + f->n[k] * f->fs + 1e-9)
                return 0;
            i0[k] = (int)floor((mn - f->lo[k]) / f->fs) - 1;
            i1[k] = (int)floor((mx - f->lo[k]) / f->fs) + 1;
        }
        for (int z = i0[2]; z <= i1[2]; z++)
            for (int y = i0[1]; y <= i1[1]; y++)
                for (int x = i0[0]; x <= i1[0]; x++) {
                    if (x < 0 || y < 0 || z < 0 || x >= f->n[0] || y >= f->n[1] || z >= f->n[2] ||
                        !f->blocked[fidx(f, x, y, z)])
                        continue;
                    double lo[3] = {f->lo[0] + x * f->fs, f->lo[1] + y * f->fs,
                                    f->lo[2] + z * f->fs};
                    double hi[3] = {lo[0] + f->fs, lo[1] + f->fs, lo[2] + f->fs};
                    if (seg_hits_box(a, b, lo, hi, 1))
                        return 0;
                }
    }
    return 1;
}

typedef struct heapent {
    double f;
    uint32_t i;
} heapent;

static void hpush(heapent *h, size_t *n, heapent e) {
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2].f > e.f) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static heapent hpop(heapent *h, size_t *n) {
    heapent top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, b = i;
        double bf = last.f;
        if (l < *n && h[l].f < bf)
            b = l, bf = h[l].f;
        if (l + 1 < *n && h[l + 1].f < bf)
            b = l + 1;
        if (b == i)
            break;
        h[i] = h[b];
        i = b;
    }
    h[i] = last;
    return top;
}

/* Length of the reference path from a to b, or -1 when the fine grid finds none. */
/* The path a, the voxel centres from the start voxel to voxel ei (parents in par), b,
   shortened greedily: from each kept point, the farthest later point in sight. */
static double shortcut_length(const fine *f, const int32_t *par, size_t ei, const float *pa,
                              const float *pb) {
    size_t cnt = 0;
    for (int64_t i = (int64_t)ei; i >= 0; i = par[i])
        cnt++;
    d3 *pts = malloc((cnt + 2) * sizeof *pts);
    size_t k = cnt;
    for (int64_t i = (int64_t)ei; i >= 0; i = par[i]) {
        int x = (int)(i % f->n[0]), y = (int)((i / f->n[0]) % f->n[1]),
            z = (int)(i / ((int64_t)f->n[0] * f->n[1]));
        pts[k--] = (d3){f->lo[0] + (x + 0.5) * f->fs, f->lo[1] + (y + 0.5) * f->fs,
                        f->lo[2] + (z + 0.5) * f->fs};
    }
    pts[0] = mk(pa);
    pts[cnt + 1] = mk(pb);
    size_t last = cnt + 1, i = 0;
    double len = 0;
    while (i < last) {
        size_t j = i + 1;
        for (size_t t = last; t > i + 1; t--)
            if (fine_los(f, pts[i], pts[t])) {
                j = t;
                break;
            }
        len += sqrt(len2(sub(pts[j], pts[i])));
        i = j;
    }
    free(pts);
    return len;
}

double vr_fine_path(const vr_fine *f, const float *pa, const float *pb) {
    size_t n = (size_t)f->n[0] * f->n[1] * f->n[2];
    double *g = malloc(n * sizeof *g);
    int32_t *par = malloc(n * sizeof *par);
    uint8_t *done = calloc(n, 1);
    heapent *h = malloc(n * 27 * sizeof *h);
    for (size_t i = 0; i < n; i++)
        g[i] = INFINITY, par[i] = -1;
    int s[3], e[3];
    for (int k = 0; k < 3; k++) {
        s[k] = (int)floor((pa[k] - f->lo[k]) / f->fs);
        e[k] = (int)floor((pb[k] - f->lo[k]) / f->fs);
    }
    if (!fine_free(f, s[0], s[1], s[2]) || !fine_free(f, e[0], e[1], e[2])) {
        free(g);
        free(par);
        free(done);
        free(h);
        return -2;
    }
    size_t si = fidx(f, s[0], s[1], s[2]), ei = fidx(f, e[0], e[1], e[2]), nh = 0;
    g[si] = 0;
    hpush(h, &nh, (heapent){0, (uint32_t)si});
    while (nh) {
        heapent t = hpop(h, &nh);
        if (done[t.i])
            continue;
        done[t.i] = 1;
        if (t.i == ei)
            break;
        int x = (int)(t.i % f->n[0]), y = (int)((t.i / f->n[0]) % f->n[1]),
            z = (int)(t.i / ((size_t)f->n[0] * f->n[1]));
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    if (!dx && !dy && !dz)
                        continue;
                    /* no corner cutting: the whole block spanned by the move is free */
                    int ok = 1;
                    for (int cz = 0; cz <= (dz != 0) && ok; cz++)
                        for (int cy = 0; cy <= (dy != 0) && ok; cy++)
                            for (int cx = 0; cx <= (dx != 0) && ok; cx++)
                                ok = fine_free(f, x + cx * dx, y + cy * dy, z + cz * dz);
                    if (!ok)
                        continue;
                    size_t j = fidx(f, x + dx, y + dy, z + dz);
                    double ng = g[t.i] + f->fs * sqrt((double)(dx * dx + dy * dy + dz * dz));
                    if (ng < g[j]) {
                        g[j] = ng;
                        par[j] = (int32_t)t.i;
                        double hx = (x + dx - e[0]) * f->fs, hy = (y + dy - e[1]) * f->fs,
                               hz = (z + dz - e[2]) * f->fs;
                        hpush(h, &nh,
                              (heapent){ng + sqrt(hx * hx + hy * hy + hz * hz), (uint32_t)j});
                    }
                }
    }
    double len = -1;
    if (done[ei]) {
        len = shortcut_length(f, par, ei, pa, pb);
    }
    free(g);
    free(par);
    free(done);
    free(h);
    return len;
}

vr_fine *vr_fine_new(const vw_world *w, double fs, double r) {
    vr_fine *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    fine_build(f, w, fs, 0, r);
    return f;
}

vr_fine *vr_fine_new_coarse(const vw_world *w, double fs, double cs, double r) {
    vr_fine *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    fine_build(f, w, fs, cs, r);
    return f;
}

void vr_fine_free(vr_fine *f) {
    if (f)
        free(f->blocked);
    free(f);
}

double vr_dist(const float *a, const float *b) {
    return sqrt(len2(sub(mk(a), mk(b))));
}
