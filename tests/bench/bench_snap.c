/*
 * bench_snap: snapping alone (nav_mesh_nearest of a query's start and end,
 * extents 2 x 4 x 2 as the path bench uses) on the shared Recast meshes, in
 * us per query (two snaps), next to the cost of the plain scan of every
 * detail triangle the per-polygon grids replace (nav_height_scan at the
 * same snapped points), so the gain of the grids shows in one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "tests/bench/bench.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

#define SNAP_PASSES 9

void bench_snap(void) {
    static const char *const names[] = {"dungeon", "nav_test", "undulating"};
    printf("\n== snapping (both points of each reference query, extents 2/4/2), best of %d "
           "passes\n",
           SNAP_PASSES);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char file[128];
        snprintf(file, sizeof file, "%s.navmesh.json", names[k]);
        const char *mp = fx_shared_mesh_path(file);
        nav_mesh *m = mp ? mj_load(mp) : NULL;
        snprintf(file, sizeof file, "%s.queries.json", names[k]);
        const char *qp = fx_shared_mesh_path(file);
        uint32_t n = 0;
        mj_query *qs = qp ? mj_queries(qp, &n) : NULL;
        if (!m || !qs || n == 0) {
            printf("  %s: ../shared absent or unreadable, skipped\n", names[k]);
            nav_mesh_free(m);
            free(qs);
            continue;
        }
        const float ext[3] = {2, 4, 2};
        float *snapped = malloc(sizeof(float) * 6 * n);
        uint32_t *polys = malloc(sizeof(uint32_t) * 2 * n);
        double best_snap = 1e300, best_grid = 1e300, best_scan = 1e300;
        volatile float sink = 0;
        for (int r = 0; r < SNAP_PASSES; r++) {
            double t0 = bench_now();
            for (uint32_t i = 0; i < n; i++) {
                if (nav_mesh_nearest(m, qs[i].start, ext, 0, &polys[2 * i], &snapped[6 * i]) !=
                    NAV_OK)
                    polys[2 * i] = NAV_NONE;
                if (nav_mesh_nearest(m, qs[i].end, ext, 0, &polys[2 * i + 1],
                                     &snapped[6 * i + 3]) != NAV_OK)
                    polys[2 * i + 1] = NAV_NONE;
            }
            double t1 = bench_now();
            for (uint32_t i = 0; i < 2 * n; i++)
                if (polys[i] != NAV_NONE)
                    sink += nav_height_unchecked(m, polys[i], snapped[3 * i], snapped[3 * i + 2]);
            double t2 = bench_now();
            for (uint32_t i = 0; i < 2 * n; i++)
                if (polys[i] != NAV_NONE)
                    sink += nav_height_scan(m, polys[i], snapped[3 * i], snapped[3 * i + 2]);
            double t3 = bench_now();
            best_snap = t1 - t0 < best_snap ? t1 - t0 : best_snap;
            best_grid = t2 - t1 < best_grid ? t2 - t1 : best_grid;
            best_scan = t3 - t2 < best_scan ? t3 - t2 : best_scan;
        }
        (void)sink;
        printf("  %-10s snap both %5.2f us/query; one height lookup: grid %5.3f us, full scan "
               "%5.3f us (scan/grid %.1f); mesh %zu bytes\n",
               names[k], best_snap * 1e6 / n, best_grid * 1e6 / (2 * n), best_scan * 1e6 / (2 * n),
               best_scan / best_grid, nav_mesh_memory(m));
        free(snapped);
        free(polys);
        free(qs);
        nav_mesh_free(m);
    }
}
