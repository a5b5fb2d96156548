/*
 * fuzz_mesh_build: nav_mesh_build on arbitrary structured input.
 *
 * The bytes are decoded into a nav_mesh_input by a small adapter (not by
 * the JSON decoder: that one has its own harness, fuzz_navmesh_json), so the
 * fuzzer reaches the builder's validation, welding, adjacency, link and
 * detail code directly. Layout of an input, every field taken from the next
 * bytes (zeros when the input runs out):
 *   flags (1): bit0 raw IEEE floats (NaN, inf, denormals) instead of grid
 *              coordinates, bit1 areas, bit2 links, bit3 detail mesh,
 *              bit4 tight limits
 *   nverts (1, mod 48), then per vertex 3 coordinates
 *   npolys (1, mod 32), then per polygon a count (mod 9) and indices
 *              (mod nverts + 2, so some are out of range)
 *   areas (1 per polygon, mod 70: some above 63)
 *   links: count (mod 4), each start, end, radius, flags, area, kind
 *   detail: nverts (mod 16), vertices, ntris (mod 48), indices, then a
 *              (first, count) pair per polygon
 * Grid coordinates lie on a 16 x 16 lattice with a few heights so that
 * valid, connected meshes are common; raw floats test the validation.
 */
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VERTS 48
#define MAX_POLYS 32
#define MAX_POLY_VERTS 8
#define MAX_LINKS 3
#define MAX_DVERTS 16
#define MAX_DTRIS 48

static float coord(fz_reader *r, int raw, int axis) {
    if (raw)
        return fz_raw_float(r);
    uint8_t b = fz_u8(r);
    if (axis == 1)
        return (float)(b % 4) * 0.5f; /* a few heights: ramps and floors */
    return (float)(b % 16) + ((b & 0x80) ? 0.5f : 0.0f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_reader r;
    fz_init(&r, data, size);

    static float verts[MAX_VERTS * 3];
    static uint32_t poly_start[MAX_POLYS + 1];
    static uint32_t poly_verts[MAX_POLYS * MAX_POLY_VERTS];
    static uint8_t areas[MAX_POLYS];
    static nav_link_input links[MAX_LINKS];
    static float dverts[MAX_DVERTS * 3];
    static uint32_t dtris[MAX_DTRIS * 3];
    static uint32_t dpoly[MAX_POLYS * 2];

    uint8_t flags = fz_u8(&r);
    int raw = flags & 1;
    nav_mesh_input in;
    memset(&in, 0, sizeof in);

    in.nverts = fz_u8(&r) % MAX_VERTS;
    for (uint32_t v = 0; v < in.nverts * 3; v++)
        verts[v] = coord(&r, raw, (int)(v % 3));
    in.verts = verts;

    in.npolys = fz_u8(&r) % MAX_POLYS;
    uint32_t nidx = 0;
    for (uint32_t p = 0; p < in.npolys; p++) {
        poly_start[p] = nidx;
        uint32_t n = fz_u8(&r) % (MAX_POLY_VERTS + 1);
        for (uint32_t k = 0; k < n; k++)
            poly_verts[nidx++] = fz_u8(&r) % (in.nverts + 2);
    }
    poly_start[in.npolys] = nidx;
    in.poly_start = poly_start;
    in.poly_verts = poly_verts;

    if (flags & 2) {
        for (uint32_t p = 0; p < in.npolys; p++)
            areas[p] = fz_u8(&r) % 70;
        in.areas = areas;
    }
    if (flags & 4) {
        in.nlinks = fz_u8(&r) % (MAX_LINKS + 1);
        for (uint32_t l = 0; l < in.nlinks; l++) {
            nav_link_input *k = &links[l];
            memset(k, 0, sizeof *k);
            for (int a = 0; a < 3; a++)
                k->start[a] = coord(&r, raw, a);
            for (int a = 0; a < 3; a++)
                k->end[a] = coord(&r, raw, a);
            k->radius = raw ? fz_raw_float(&r) : (float)(fz_u8(&r) % 4) * 0.5f;
            uint8_t lf = fz_u8(&r);
            k->bidirectional = lf & 1;
            k->area = fz_u8(&r) % 70;
            uint8_t klen = fz_u8(&r) % NAV_LINK_KIND_MAX;
            for (uint8_t c = 0; c < klen; c++)
                k->kind[c] = (char)(fz_u8(&r) | 1); /* no embedded NUL */
            k->kind[klen] = '\0';
        }
        in.links = links;
    }
    if (flags & 8) {
        in.ndetail_verts = fz_u8(&r) % MAX_DVERTS;
        for (uint32_t v = 0; v < in.ndetail_verts * 3; v++)
            dverts[v] = coord(&r, raw, (int)(v % 3));
        in.detail_verts = dverts;
        in.ndetail_tris = fz_u8(&r) % MAX_DTRIS;
        uint32_t space = in.nverts + in.ndetail_verts + 2;
        for (uint32_t t = 0; t < in.ndetail_tris * 3; t++)
            dtris[t] = fz_u8(&r) % space;
        in.detail_tris = dtris;
        for (uint32_t p = 0; p < in.npolys; p++) {
            dpoly[2 * p] = fz_u8(&r) % (in.ndetail_tris + 2);
            dpoly[2 * p + 1] = fz_u8(&r) % 8;
        }
        in.detail_poly_tris = dpoly;
    }

    nav_mesh_limits tight = {
        .max_verts = 24, .max_polys = 12, .max_verts_per_poly = 6, .max_links = 2};
    nav_mesh *m = NULL;
    nav_error err;
    memset(&err, 0, sizeof err);
    nav_status st = nav_mesh_build(&in, (flags & 16) ? &tight : NULL, &m, &err);
    if (st != NAV_OK) {
        fz_require(m == NULL, "a failed build leaves *out NULL");
        fz_require(memchr(err.message, '\0', sizeof err.message) != NULL,
                   "error message is terminated");
        return 0;
    }
    fz_require(m != NULL, "a successful build returns a mesh");
    if (flags & 16) {
        fz_require(nav_mesh_polygon_count(m) <= tight.max_polys, "polygon limit holds");
    }
    fz_exercise_mesh(m);
    nav_mesh_free(m);
    return 0;
}
