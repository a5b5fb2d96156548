/*
 * seed_blobs: writes the generated seed inputs of the fuzz harnesses.
 *
 *   seed_blobs OUTDIR [mesh.obj ...]
 *
 * OUTDIR/blob/: nav_mesh_serialize of a hand-made 3 x 2 grid with a link and
 * of every OBJ navmesh given (the shared Recast meshes), each prefixed with
 * the harness's control byte (0: keep the CRC, 1: recompute it).
 * OUTDIR/mesh_build/: the same grid in fuzz_mesh_build's byte layout.
 * Built with the fuzz objects but without libFuzzer's main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh.h"

static int write_file(const char *dir, const char *sub, const char *name, uint8_t prefix,
                      const uint8_t *data, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    int ok = fwrite(&prefix, 1, 1, f) == 1 && fwrite(data, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int write_blob(const char *dir, const char *name, const nav_mesh *m) {
    uint8_t *blob = NULL;
    size_t len = 0;
    if (nav_mesh_serialize(m, &blob, &len) != NAV_OK)
        return -1;
    char n0[256], n1[256];
    snprintf(n0, sizeof n0, "%s.crc-kept", name);
    snprintf(n1, sizeof n1, "%s.crc-fixed", name);
    int rc = write_file(dir, "blob", n0, 0, blob, len) | write_file(dir, "blob", n1, 1, blob, len);
    free(blob);
    return rc;
}

/* A 3 x 2 grid of 1 m quads at y = 0 in fuzz_mesh_build's layout: flags
   (grid coordinates, areas, links), 12 vertices, 6 quads, areas, one link. */
static size_t grid_seed(uint8_t *out) {
    size_t n = 0;
    out[n++] = 2 | 4;
    out[n++] = 12;
    for (int z = 0; z < 3; z++)
        for (int x = 0; x < 4; x++) {
            out[n++] = (uint8_t)x;
            out[n++] = 0;
            out[n++] = (uint8_t)z;
        }
    out[n++] = 6;
    for (int z = 0; z < 2; z++)
        for (int x = 0; x < 3; x++) {
            out[n++] = 4;
            out[n++] = (uint8_t)(z * 4 + x);
            out[n++] = (uint8_t)(z * 4 + x + 1);
            out[n++] = (uint8_t)((z + 1) * 4 + x + 1);
            out[n++] = (uint8_t)((z + 1) * 4 + x);
        }
    for (int p = 0; p < 6; p++)
        out[n++] = (uint8_t)(p % 2);
    out[n++] = 1; /* one link */
    const uint8_t link[] = {0, 0, 0, 2, 0, 1, 1, 1, 3, 'j', 'm', 'p'};
    memcpy(out + n, link, sizeof link); /* start, end, radius, bidir, area, kind */
    n += sizeof link;
    return n;
}

static nav_mesh *grid_mesh(void) {
    float verts[12 * 3];
    uint32_t start[7], idx[24];
    for (int z = 0; z < 3; z++)
        for (int x = 0; x < 4; x++) {
            float *v = &verts[(z * 4 + x) * 3];
            v[0] = (float)x, v[1] = 0, v[2] = (float)z;
        }
    uint32_t k = 0;
    for (uint32_t z = 0; z < 2; z++)
        for (uint32_t x = 0; x < 3; x++) {
            start[z * 3 + x] = k;
            idx[k++] = z * 4 + x;
            idx[k++] = z * 4 + x + 1;
            idx[k++] = (z + 1) * 4 + x + 1;
            idx[k++] = (z + 1) * 4 + x;
        }
    start[6] = k;
    nav_link_input link = {.start = {0.5f, 0, 0.5f},
                           .end = {2.5f, 0, 1.5f},
                           .radius = 0.5f,
                           .bidirectional = true,
                           .area = 3,
                           .kind = "jump"};
    nav_mesh_input in = {.verts = verts,
                         .nverts = 12,
                         .poly_start = start,
                         .poly_verts = idx,
                         .npolys = 6,
                         .links = &link,
                         .nlinks = 1};
    nav_mesh *m = NULL;
    nav_error err;
    if (nav_mesh_build(&in, NULL, &m, &err) != NAV_OK) {
        fprintf(stderr, "seed_blobs: grid: %s\n", err.message);
        return NULL;
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: seed_blobs OUTDIR [mesh.obj ...]\n");
        return 2;
    }
    const char *dir = argv[1];
    int rc = 0;
    uint8_t seed[256];
    size_t n = grid_seed(seed);
    rc |= write_file(dir, "mesh_build", "grid", seed[0], seed + 1, n - 1);

    nav_mesh *g = grid_mesh();
    if (!g || write_blob(dir, "grid", g) != 0)
        rc = 1;
    nav_mesh_free(g);

    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            continue;
        static char text[1 << 20];
        size_t len = fread(text, 1, sizeof text, f);
        fclose(f);
        nav_obj obj;
        nav_error err;
        if (nav_obj_parse(text, len, &obj, &err) != NAV_OK) {
            fprintf(stderr, "seed_blobs: %s: %s\n", argv[i], err.message);
            rc = 1;
            continue;
        }
        nav_mesh_input in;
        nav_obj_as_input(&obj, &in);
        nav_mesh *m = NULL;
        if (nav_mesh_build(&in, NULL, &m, &err) == NAV_OK) {
            const char *base = strrchr(argv[i], '/');
            rc |= write_blob(dir, base ? base + 1 : argv[i], m);
            nav_mesh_free(m);
        } else {
            fprintf(stderr, "seed_blobs: %s: %s\n", argv[i], err.message);
            rc = 1;
        }
        nav_obj_free(&obj);
    }
    return rc;
}
