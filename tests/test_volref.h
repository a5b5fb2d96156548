/*
 * test_volref: independent references for the flight-volume tests, built
 * from the level's triangles only (never from nav/'s voxels):
 * - the exact distance from a segment to a world's triangles;
 * - a fine-grid shortest path: 26-neighbour shortest paths (A* with a
 *   consistent heuristic, so Dijkstra's lengths; no corner cutting) on
 *   voxels of side fs whose blocked test is the exact box-triangle distance
 *   <= r, then greedy shortcuts by an exact segment-box line of sight;
 *   optionally on the free space of a coarser grid (blocked by the same
 *   exact test on its voxels), to measure the search apart from the voxels.
 */
#ifndef TEST_VOLREF_H
#define TEST_VOLREF_H

#include "tests/test_volworld.h"

/* Smallest distance from segment p-q (a point when p == q) to w's triangles. */
double vr_seg_world_dist(const vw_world *w, const float *p, const float *q);
/* |a - b| */
double vr_dist(const float *a, const float *b);

typedef struct vr_fine vr_fine;
/* The fine grid over w's box (aborts when out of memory). */
vr_fine *vr_fine_new(const vw_world *w, double fs, double r);
/*
 * The same search on the free space of a grid of side cs (a multiple of fs, same
 * origin): a fine voxel is blocked when the cs voxel holding it lies within r of a
 * triangle. The shortest paths through the free voxels a volume of voxel size cs can
 * have (nav/ blocks the same voxels, up to its 1e-4-voxel margin), found finer.
 */
vr_fine *vr_fine_new_coarse(const vw_world *w, double fs, double cs, double r);
void vr_fine_free(vr_fine *f);
/* Length of the reference path from a to b; -1 when none exists, -2 when an end's
   voxel is blocked in the fine grid. */
double vr_fine_path(const vr_fine *f, const float *a, const float *b);

#endif
