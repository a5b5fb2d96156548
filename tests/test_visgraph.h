/*
 * test_visgraph: a brute-force shortest-path reference for the optimal
 * search, sharing no code with it. Graph nodes are the start, the end, the
 * ends of usable off-mesh links and every "corner": a fan of polygons around
 * a mesh vertex that touches a wall (a vertex where two fans only touch, as
 * at a pinch, gives two nodes). Two nodes see each other when a walk through
 * the polygons along the xz segment stays on passable polygons and arrives
 * in a polygon that owns the target; Dijkstra then gives the length (xz
 * segments plus the 3-D length of each link taken).
 */
#ifndef TEST_VISGRAPH_H
#define TEST_VISGRAPH_H

#include <stdint.h>

#include "nav/nav_mesh.h"

typedef struct vg_ref vg_ref;

/* Reference for mesh m where polygons and links of the areas in
   exclude_mask are impassable. Caches corner-to-corner visibility. */
vg_ref *vg_new(const nav_mesh *m, uint64_t exclude_mask);
void vg_free(vg_ref *r);

/* Length of the shortest path from start (on start_poly) to end (on
   end_poly), or INFINITY when there is none. */
double vg_shortest(vg_ref *r, uint32_t start_poly, const float start[3], uint32_t end_poly,
                   const float end[3]);

/* 1 when the xz segment a -> b, starting on polygon pa, reaches b on
   polygon pb (or a polygon sharing b's edge or vertex with pb). */
int vg_visible(vg_ref *r, uint32_t pa, const float a[3], uint32_t pb, const float b[3]);

/* Number of corner nodes (for test diagnostics). */
uint32_t vg_corner_count(const vg_ref *r);

#endif
