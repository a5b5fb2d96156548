/*
 * detour_ref: upstream Detour (Debian's librecast-dev) on our meshes, as
 * the benchmark's anchor. C++ inside (tests/bench/detour_ref.cpp), a C
 * interface here; only the bench runner links it, never navd.
 *
 * The mesh is handed over as plain arrays (the layout of nav_internal.h:
 * polygons as vertex runs, one neighbour per edge, NAV_NONE for walls) and
 * becomes one Detour tile without a height (detail) mesh, so Detour's
 * heights come from the polygons' own planes. A mesh over one tile's 16-bit
 * limits becomes a grid of square tiles (64 units a side, or
 * NAVD_BENCH_DTILE) joined through portal edges, as a game team would tile
 * it; that needs every polygon inside one tile (true of the generated
 * grids, whose tile borders fall on cell lines).
 */
#ifndef DETOUR_REF_H
#define DETOUR_REF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct detour_ref detour_ref;

/* NULL when Detour cannot hold the mesh: more than 6 vertices in a
   polygon, a polygon across a tile border of a mesh too large for one
   tile, or Detour refuses it (detour_ref_layout says which). max_nodes:
   Detour's node pool (at most 65,535). */
detour_ref *detour_ref_new(const float *verts, uint32_t nverts, const uint32_t *poly_start,
                           const uint32_t *poly_verts, const uint32_t *poly_nei, uint32_t npolys,
                           int max_nodes);
void detour_ref_free(detour_ref *d);

/* The last detour_ref_new's layout ("one tile", "25 tiles of 64 x 64 ...")
   or, after a NULL, why it failed. */
const char *detour_ref_layout(void);

/* One query as a game server runs it: findNearestPoly for both ends,
   findPath, findStraightPath. Returns 1 when the path reaches the end
   polygon, 0 when it is partial, -1 when a snap or the search failed.
   *len2d: length of the straight path in the xz plane; *nodes: nodes the
   search touched (Detour's node pool count). Either may be NULL. */
int detour_ref_path(detour_ref *d, const float start[3], const float end[3], const float ext[3],
                    double *len2d, int *nodes);

#ifdef __cplusplus
}
#endif

#endif
