/*
 * nav_level: validation, degenerate-triangle dropping, the blob format and
 * the OBJ export of level geometry (see nav_level.h).
 *
 * Blob layout, little-endian: "NAVL", u32 version (1), u32 nverts, u32
 * ntris, u32 dropped, nverts * 3 f32, ntris * 3 u32, u32 CRC-32 of
 * everything before it.
 */
#include "nav/nav_level.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"

#define NAV_LEVEL_VERSION 1u
#define NAV_LEVEL_HEADER 20u

struct nav_level {
    float *verts;
    uint32_t *tris;
    uint32_t nverts, ntris, dropped;
    float bmin[3], bmax[3];
};

void nav_level_free(nav_level *l) {
    if (!l)
        return;
    free(l->verts);
    free(l->tris);
    free(l);
}

/* Twice the area of triangle (a, b, c), in double. */
static double tri_area2(const float *a, const float *b, const float *c) {
    double e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
    }
    double x = e1[1] * e2[2] - e1[2] * e2[1], y = e1[2] * e2[0] - e1[0] * e2[2],
           z = e1[0] * e2[1] - e1[1] * e2[0];
    return sqrt(x * x + y * y + z * z);
}

nav_status nav_level_build(const float *verts, uint32_t nverts, const uint32_t *tris,
                           uint32_t ntris, uint32_t max_tris, nav_level **out, nav_error *err) {
    *out = NULL;
    if ((nverts && !verts) || (ntris && !tris))
        return nav_set_error(err, NAV_E_INVALID_ARG, "the level input has a missing array");
    if (ntris == 0)
        return nav_set_error(err, NAV_E_INVALID_MESH, "the level has no triangles");
    if (max_tris && ntris > max_tris)
        return nav_set_error(err, NAV_E_LIMIT,
                             "the level has %u triangles, more than the limit of %u", ntris,
                             max_tris);
    for (uint32_t v = 0; v < nverts; v++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(verts[3 * (size_t)v + k]))
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "vertices[%u] has a non-finite coordinate", v);
    for (uint32_t t = 0; t < ntris; t++)
        for (int k = 0; k < 3; k++)
            if (tris[3 * (size_t)t + k] >= nverts)
                return nav_set_error(err, NAV_E_INVALID_MESH,
                                     "triangles[%u] references vertex %u but there are %u vertices",
                                     t, tris[3 * (size_t)t + k], nverts);
    nav_level *l = calloc(1, sizeof *l);
    if (!l)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    l->verts = malloc(((size_t)nverts * 3 + 1) * sizeof *l->verts);
    l->tris = malloc(((size_t)ntris * 3 + 1) * sizeof *l->tris);
    if (!l->verts || !l->tris) {
        nav_level_free(l);
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    }
    memcpy(l->verts, verts, (size_t)nverts * 3 * sizeof *verts);
    l->nverts = nverts;
    for (int k = 0; k < 3; k++) {
        l->bmin[k] = INFINITY;
        l->bmax[k] = -INFINITY;
    }
    for (uint32_t t = 0; t < ntris; t++) {
        const uint32_t *ix = &tris[3 * (size_t)t];
        const float *a = &verts[3 * (size_t)ix[0]], *b = &verts[3 * (size_t)ix[1]],
                    *c = &verts[3 * (size_t)ix[2]];
        /* Degenerate: a repeated index, or no area relative to its size
           (the same tolerance the navmesh builder uses for polygons). */
        double l2 = 0;
        for (int k = 0; k < 3; k++) {
            double d1 = (double)b[k] - a[k], d2 = (double)c[k] - a[k], d3 = (double)c[k] - b[k];
            l2 = fmax(l2, fmax(d1 * d1, fmax(d2 * d2, d3 * d3)));
        }
        if (ix[0] == ix[1] || ix[1] == ix[2] || ix[0] == ix[2] || l2 == 0 ||
            tri_area2(a, b, c) <= 1e-9 * l2) {
            l->dropped++;
            continue;
        }
        memcpy(&l->tris[3 * (size_t)l->ntris], ix, 3 * sizeof *ix);
        l->ntris++;
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++) {
                float x = verts[3 * (size_t)ix[v] + k];
                l->bmin[k] = fminf(l->bmin[k], x);
                l->bmax[k] = fmaxf(l->bmax[k], x);
            }
    }
    if (l->ntris == 0) {
        nav_level_free(l);
        return nav_set_error(err, NAV_E_INVALID_MESH,
                             "the level has no triangle with an area (all %u are degenerate)",
                             ntris);
    }
    *out = l;
    return NAV_OK;
}

nav_status nav_level_from_obj(const char *text, size_t len, uint32_t max_tris, nav_level **out,
                              nav_error *err) {
    *out = NULL;
    nav_obj o;
    nav_status st = nav_obj_parse(text, len, &o, err);
    if (st != NAV_OK)
        return st;
    uint64_t n = 0;
    for (uint32_t p = 0; p < o.npolys; p++) {
        uint32_t k = o.poly_start[p + 1] - o.poly_start[p];
        n += k >= 3 ? k - 2 : 0;
    }
    if (n > UINT32_MAX / 3 || (max_tris && n > max_tris)) {
        nav_obj_free(&o);
        return nav_set_error(err, NAV_E_LIMIT,
                             "the level has %llu triangles after fan triangulation, more than the "
                             "limit of %u",
                             (unsigned long long)n, max_tris);
    }
    uint32_t *tris = malloc((size_t)n * 3 * sizeof *tris + 1);
    if (!tris) {
        nav_obj_free(&o);
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    }
    uint32_t t = 0;
    for (uint32_t p = 0; p < o.npolys; p++) {
        const uint32_t *f = &o.poly_verts[o.poly_start[p]];
        uint32_t k = o.poly_start[p + 1] - o.poly_start[p];
        for (uint32_t i = 1; i + 1 < k; i++, t++) {
            tris[3 * (size_t)t] = f[0];
            tris[3 * (size_t)t + 1] = f[i];
            tris[3 * (size_t)t + 2] = f[i + 1];
        }
    }
    st = nav_level_build(o.verts, o.nverts, tris, t, max_tris, out, err);
    free(tris);
    nav_obj_free(&o);
    return st;
}

uint32_t nav_level_vertex_count(const nav_level *l) {
    return l->nverts;
}
uint32_t nav_level_triangle_count(const nav_level *l) {
    return l->ntris;
}
uint32_t nav_level_dropped(const nav_level *l) {
    return l->dropped;
}
const float *nav_level_vertices(const nav_level *l) {
    return l->verts;
}
const uint32_t *nav_level_triangles(const nav_level *l) {
    return l->tris;
}
void nav_level_bounds(const nav_level *l, float bmin[3], float bmax[3]) {
    memcpy(bmin, l->bmin, sizeof l->bmin);
    memcpy(bmax, l->bmax, sizeof l->bmax);
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

nav_status nav_level_serialize(const nav_level *l, uint8_t **blob, size_t *len) {
    size_t n = NAV_LEVEL_HEADER + (size_t)l->nverts * 12 + (size_t)l->ntris * 12 + 4;
    uint8_t *b = malloc(n);
    if (!b)
        return NAV_E_NOMEM;
    memcpy(b, "NAVL", 4);
    put_u32(b + 4, NAV_LEVEL_VERSION);
    put_u32(b + 8, l->nverts);
    put_u32(b + 12, l->ntris);
    put_u32(b + 16, l->dropped);
    uint8_t *p = b + NAV_LEVEL_HEADER;
    for (size_t i = 0; i < (size_t)l->nverts * 3; i++, p += 4) {
        uint32_t u;
        memcpy(&u, &l->verts[i], 4);
        put_u32(p, u);
    }
    for (size_t i = 0; i < (size_t)l->ntris * 3; i++, p += 4)
        put_u32(p, l->tris[i]);
    put_u32(p, nav_crc32(b, n - 4));
    *blob = b;
    *len = n;
    return NAV_OK;
}

nav_status nav_level_deserialize(const uint8_t *blob, size_t len, nav_level **out, nav_error *err) {
    *out = NULL;
    if (len < NAV_LEVEL_HEADER + 4 || memcmp(blob, "NAVL", 4) != 0)
        return nav_set_error(err, NAV_E_CORRUPT, "not a stored level");
    if (get_u32(blob + 4) != NAV_LEVEL_VERSION)
        return nav_set_error(err, NAV_E_CORRUPT, "stored level format %u is not supported",
                             get_u32(blob + 4));
    uint32_t nv = get_u32(blob + 8), nt = get_u32(blob + 12);
    if ((uint64_t)NAV_LEVEL_HEADER + (uint64_t)nv * 12 + (uint64_t)nt * 12 + 4 != len)
        return nav_set_error(err, NAV_E_CORRUPT, "stored level size does not match its counts");
    if (nav_crc32(blob, len - 4) != get_u32(blob + len - 4))
        return nav_set_error(err, NAV_E_CORRUPT, "stored level fails its CRC");
    float *v = malloc((size_t)nv * 12 + 1);
    uint32_t *t = malloc((size_t)nt * 12 + 1);
    if (!v || !t) {
        free(v);
        free(t);
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    }
    const uint8_t *p = blob + NAV_LEVEL_HEADER;
    for (size_t i = 0; i < (size_t)nv * 3; i++, p += 4) {
        uint32_t u = get_u32(p);
        memcpy(&v[i], &u, 4);
    }
    for (size_t i = 0; i < (size_t)nt * 3; i++, p += 4)
        t[i] = get_u32(p);
    /* Rebuilt through the same checks: a stored level is as valid as an upload. */
    nav_status st = nav_level_build(v, nv, t, nt, 0, out, err);
    if (st == NAV_OK)
        (*out)->dropped = get_u32(blob + 16);
    free(v);
    free(t);
    return st == NAV_OK ? NAV_OK : nav_set_error(err, NAV_E_CORRUPT, "stored level is invalid");
}

nav_status nav_level_to_obj(const nav_level *l, char **text, size_t *len) {
    /* A vertex line is at most 3 * 16 + 5 characters with %.9g, a face 3 * 11 + 4. */
    size_t cap = (size_t)l->nverts * 56 + (size_t)l->ntris * 40 + 64, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NAV_E_NOMEM;
    n += (size_t)snprintf(b + n, cap - n, "# navd level: %u vertices, %u triangles\n", l->nverts,
                          l->ntris);
    for (uint32_t i = 0; i < l->nverts; i++)
        n += (size_t)snprintf(b + n, cap - n, "v %.9g %.9g %.9g\n", l->verts[3 * (size_t)i],
                              l->verts[3 * (size_t)i + 1], l->verts[3 * (size_t)i + 2]);
    for (uint32_t t = 0; t < l->ntris; t++)
        n += (size_t)snprintf(b + n, cap - n, "f %u %u %u\n", l->tris[3 * (size_t)t] + 1,
                              l->tris[3 * (size_t)t + 1] + 1, l->tris[3 * (size_t)t + 2] + 1);
    *text = b;
    *len = n;
    return NAV_OK;
}
