/*
 * bench_blobload: what loading a stored mesh costs a replica, the blob
 * already in memory: nav_mesh_deserialize of a version 3 blob (the built
 * structures stored, validated and copied) against the same mesh in a
 * version 2 blob (input form and corner graph: nav_mesh_build runs), and
 * nav_mesh_build from scratch (corner graph included) for scale.
 *
 * Cases: the pg bench's 8 MiB mesh (a 504 x 504 grid of quads, 254,016
 * polygons) and, for issue 13 (a stored mesh with its preprocessing loaded
 * in <= 1 s at 100,000 polygons), a random mesh of rooms and walls of
 * about 100,000 polygons whose corner graph is not empty.
 * Wall-clock best of BL_RUNS and the thread's CPU time of that run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nav/nav_corner.h"
#include "nav/nav_mesh_internal.h"
#include "tests/bench/bench.h"
#include "tests/test_fixtures.h"

#define BL_RUNS 5

static double bl_ms(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static nav_mesh *bl_grid(int n) {
    nav_mesh_input in;
    memset(&in, 0, sizeof in);
    size_t nv = (size_t)(n + 1) * (n + 1), np = (size_t)n * n;
    float *v = malloc(nv * 3 * sizeof *v);
    uint32_t *ps = malloc((np + 1) * sizeof *ps), *pv = malloc(np * 4 * sizeof *pv);
    for (int z = 0; z <= n; z++)
        for (int x = 0; x <= n; x++) {
            float *p = &v[3 * ((size_t)z * (n + 1) + x)];
            p[0] = (float)x;
            p[1] = 0;
            p[2] = (float)z;
        }
    for (size_t q = 0; q < np; q++) {
        uint32_t x = (uint32_t)(q % n), z = (uint32_t)(q / n), a = z * (n + 1) + x;
        ps[q] = (uint32_t)(4 * q);
        pv[4 * q] = a;
        pv[4 * q + 1] = a + n + 1;
        pv[4 * q + 2] = a + n + 2;
        pv[4 * q + 3] = a + 1;
    }
    ps[np] = (uint32_t)(4 * np);
    in.verts = v;
    in.nverts = (uint32_t)nv;
    in.poly_start = ps;
    in.poly_verts = pv;
    in.npolys = (uint32_t)np;
    nav_mesh *m = NULL;
    nav_error err;
    if (nav_mesh_build(&in, NULL, &m, &err) != NAV_OK)
        printf("  grid build failed: %s\n", err.message);
    free(v);
    free(ps);
    free(pv);
    return m;
}

static void bl_put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The version 2 blob of m, made from its version 3 blob: the input fields,
   their CRC, the graph section bound to that CRC. */
static uint8_t *bl_v2(const nav_mesh *m, const uint8_t *b3, size_t len3, size_t *len) {
    size_t section = len3 - 20 - nav_corner_save(m->cgraph, NULL);
    size_t input_end = section - 4 - nav_snapshot_size(m) - 4;
    size_t glen = len3 - section;
    uint8_t *b = malloc(input_end + 4 + glen);
    memcpy(b, b3, input_end);
    b[4] = 2;
    uint32_t crc = nav_crc32(b, input_end);
    bl_put32(b + input_end, crc);
    uint8_t *g = b + input_end + 4;
    memcpy(g, b3 + section, glen);
    bl_put32(g + 8, crc);
    bl_put32(g + glen - 4, nav_crc32(g, glen - 4));
    *len = input_end + 4 + glen;
    return b;
}

/* Best wall time of BL_RUNS loads (and that run's CPU time). */
static void bl_time_load(const char *what, const uint8_t *b, size_t len, int runs) {
    double best = 1e30, cpu = 0;
    for (int i = 0; i < runs; i++) {
        nav_mesh *r = NULL;
        nav_error err;
        double c0 = bl_ms(CLOCK_THREAD_CPUTIME_ID), t0 = bl_ms(CLOCK_MONOTONIC);
        nav_status st = nav_mesh_deserialize(b, len, &r, &err);
        double t1 = bl_ms(CLOCK_MONOTONIC), c1 = bl_ms(CLOCK_THREAD_CPUTIME_ID);
        if (st != NAV_OK) {
            printf("  %s: load failed: %s\n", what, err.message);
            return;
        }
        nav_mesh_free(r);
        if (t1 - t0 < best) {
            best = t1 - t0;
            cpu = c1 - c0;
        }
    }
    printf("  %-44s %8.1f ms (cpu %.1f ms)\n", what, best, cpu);
}

static void bl_case(const char *label, nav_mesh *m) {
    if (!m)
        return;
    uint8_t *b3;
    size_t len3, len2;
    nav_mesh_serialize(m, &b3, &len3);
    uint8_t *b2 = bl_v2(m, b3, len3, &len2);
    printf(" %s: %u polygons, corner graph %u nodes; blob v3 %.2f MiB, v2 %.2f MiB\n", label,
           m->npolys, nav_corner_node_count(m->cgraph), len3 / 1048576.0, len2 / 1048576.0);
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    double t0 = bl_ms(CLOCK_MONOTONIC);
    nav_mesh *r = NULL;
    nav_error err;
    nav_mesh_build(&in, NULL, &r, &err);
    printf("  %-44s %8.1f ms\n", "nav_mesh_build (with the corner graph)",
           bl_ms(CLOCK_MONOTONIC) - t0);
    nav_mesh_free(r);
    bl_time_load("nav_mesh_deserialize v2 (rebuild, graph kept)", b2, len2, 3);
    bl_time_load("nav_mesh_deserialize v3 (built structures)", b3, len3, BL_RUNS);
    free(b2);
    free(b3);
}

nav_mesh *bench_rooms_mesh(void) {
    fx_random_opts o = fx_random_defaults();
    o.width = o.height = 330;
    o.hole_ratio = 0.08f;
    o.walls = 1;
    o.triangulate = 1;
    return fx_random(13, &o);
}

void bench_blobload(void) {
    printf("\n== blobload: nav_mesh_deserialize, version 3 against a rebuild (best of %d)\n",
           BL_RUNS);
    bl_case("8 MiB grid 504 x 504", bl_grid(504));
    nav_mesh *m = bench_rooms_mesh();
    bl_case("rooms and walls ~100,000 polygons", m);
    nav_mesh_free(m);
}
