/*
 * bench_bake: nav_bake beside Recast (Debian's librecast-dev, linked into
 * the bench runner only: tests/bench/recast_ref.cpp) on the shared levels,
 * same settings (Recast's demo defaults), same process, same run. Prints per
 * level: our single-threaded bake and Recast's (best of several runs: the
 * machine is shared), the ratio, peak memory of each, polygon counts; the
 * three-profiles-differing-in-radius cost against one profile (the
 * target's radii, two of which round to the same cells, and three radii of
 * distinct cells); and tiles
 * of 64 cells on 2 threads against Recast's single tile, with the peak
 * memory of one tile. Figures, never assertions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake.h"
#include "tests/bench/bench.h"
#include "tests/bench/recast_ref.h"
#include "tests/test_fixtures.h"

static nav_level *load_level(const char *name) {
    char file[64];
    snprintf(file, sizeof file, "%s.obj", name);
    const char *path = fx_shared_mesh_path(file);
    if (!path)
        return NULL;
    size_t len;
    char *text = fx_read_file(path, &len);
    nav_level *lv = NULL;
    nav_error e;
    if (!text || nav_level_from_obj(text, len, 0, &lv, &e) != NAV_OK)
        lv = NULL;
    free(text);
    return lv;
}

/* Best of reps bakes; fills r with the best run's report. */
static double our_bake(const nav_level *lv, const nav_bake_settings *s, const nav_bake_profile *p,
                       uint32_t np, int reps, nav_bake_report *best_r, uint32_t *polys) {
    double best = 1e300;
    for (int i = 0; i < reps; i++) {
        nav_mesh *m[NAV_BAKE_MAX_PROFILES];
        nav_bake_report r;
        nav_error e;
        double t0 = bench_now();
        if (nav_bake(lv, s, p, np, NULL, NULL, NULL, m, &r, &e) != NAV_OK) {
            printf("  bake failed: %s\n", e.message);
            return -1;
        }
        double ms = (bench_now() - t0) * 1e3;
        if (ms < best) {
            best = ms;
            *best_r = r;
            *polys = nav_mesh_polygon_count(m[0]);
        }
        for (uint32_t k = 0; k < np; k++)
            nav_mesh_free(m[k]);
    }
    return best;
}

static recast_ref_result recast_bake(const nav_level *lv, int reps) {
    recast_ref_result best = {0};
    best.ms = 1e300;
    for (int i = 0; i < reps; i++) {
        recast_ref_result r = recast_ref_bake(nav_level_vertices(lv), nav_level_vertex_count(lv),
                                              nav_level_triangles(lv), nav_level_triangle_count(lv),
                                              0.3f, 0.2f, 0.6f, 2.0f, 0.9f, 45.0f);
        if (r.ok && r.ms < best.ms)
            best = r;
    }
    return best;
}

void bench_bake(void) {
    static const char *const LEVELS[] = {"dungeon", "nav_test", "undulating", "town"};
    printf("\nbake: nav_bake vs Recast (demo defaults, one tile, single thread, best of runs)\n");
    printf("  %-10s %9s %9s %6s %10s %10s %6s %6s\n", "level", "ours ms", "recast", "ratio",
           "ours peak", "rc peak", "polys", "rc");
    for (size_t i = 0; i < 4; i++) {
        nav_level *lv = load_level(LEVELS[i]);
        if (!lv) {
            printf("  %-10s (../shared absent)\n", LEVELS[i]);
            continue;
        }
        int reps = i == 3 ? 3 : 7;
        nav_bake_settings s = nav_bake_settings_default();
        nav_bake_profile p = nav_bake_profile_default();
        nav_bake_report r;
        uint32_t polys = 0;
        double ours = our_bake(lv, &s, &p, 1, reps, &r, &polys);
        recast_ref_result rc = recast_bake(lv, reps);
        printf("  %-10s %9.1f %9.1f %6.2f %9.1fM %9.1fM %6u %6d\n", LEVELS[i], ours, rc.ms,
               ours / rc.ms, r.peak_bytes / 1048576.0, rc.peak_bytes / 1048576.0, polys,
               rc.polygons);
        printf("    stages ms:");
        for (int k = 0; k < NAV_BAKE_STAGE_COUNT; k++)
            printf(" %s %.1f", nav_bake_stage_text((nav_bake_stage)k), r.stage_ms[k]);
        printf("\n");
        /* three agents that differ only in radius share the heightfield stages */
        nav_bake_profile three[3] = {p, p, p};
        const float radii[3] = {0.4f, 0.6f, 0.9f};
        for (int k = 0; k < 3; k++) {
            snprintf(three[k].name, sizeof three[k].name, "r%d", k);
            three[k].radius = radii[k];
        }
        nav_bake_report r3;
        uint32_t p3;
        double t3 = our_bake(lv, &s, three, 3, reps, &r3, &p3);
        printf("    3 radii (0.4, 0.6, 0.9): %.1f ms = %.2fx one profile (target <= 1.8x), %u "
               "heightfield pass\n",
               t3, t3 / ours, r3.heightfields);
        /* on 2 threads against one profile on 2 threads: the same machine
           for both sides of the ratio */
        s.threads = 2;
        nav_bake_report r1b;
        uint32_t p1b;
        double ours2 = our_bake(lv, &s, &p, 1, reps, &r1b, &p1b);
        double t3b = our_bake(lv, &s, three, 3, reps, &r3, &p3);
        printf("    3 radii on 2 threads (profiles side by side): %.1f ms = %.2fx one profile on 2 "
               "threads (%.1f ms)\n",
               t3b, t3b / ours2, ours2);
        s.threads = 1;
        /* 0.4 and 0.6 m are both 2 cells of 0.3 m, so the two bake as twins
           (once); radii of 1, 2 and 3 cells bake every per-profile stage */
        three[0].radius = 0.3f;
        double t3d = our_bake(lv, &s, three, 3, reps, &r3, &p3);
        s.threads = 2;
        double t3d2 = our_bake(lv, &s, three, 3, reps, &r3, &p3);
        s.threads = 1;
        three[0].radius = radii[0];
        printf(
            "    3 radii of 1, 2, 3 cells (0.3, 0.6, 0.9; no twins): %.1f ms = %.2fx one profile, "
            "on 2 threads %.1f ms = %.2fx one profile on 2 threads\n",
            t3d, t3d / ours, t3d2, t3d2 / ours2);
        /* tiles of 64 cells on 2 threads */
        s.tile_size = 64;
        s.threads = 2;
        nav_bake_report rt;
        uint32_t pt;
        double tt = our_bake(lv, &s, &p, 1, reps, &rt, &pt);
        printf("    tiles 64 x 2 threads: %.1f ms = %.2fx Recast's one tile (town target <= 0.6x), "
               "%u tiles, peak %.2f MiB per tile (target <= 4)\n",
               tt, tt / rc.ms, rt.tiles, rt.peak_tile_bytes / 1048576.0);
        nav_level_free(lv);
    }
}
