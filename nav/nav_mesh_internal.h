/*
 * nav_mesh_internal: helpers shared by the files that implement nav_mesh
 * (nav_mesh_build.c, nav_index.c, nav_height.c, nav_serialize.c, nav_obj.c).
 * Not for other nav/ modules: they use nav_internal.h and the public API.
 *
 * A built mesh is allocated as a nav_mesh_ext so the canonical input form of
 * the links (what nav_mesh_as_input returns) and the memory figure can live
 * next to the layout nav_internal.h fixes, without widening that layout.
 */
#ifndef NAV_MESH_INTERNAL_H
#define NAV_MESH_INTERNAL_H

#include <stdarg.h>

#include "nav/nav_internal.h"

/* Uniform xz grid over one polygon's detail triangles (nav_height.c): cell
   (cx, cz) lists, in ascending order, the polygon-local ids of the
   triangles whose slightly widened xz box overlaps it, in
   nav_mesh_ext.grid_tris[grid_cells[c] .. grid_cells[c + 1]) with
   c = first_cell + cz * nx + cx. Derived at build time, never serialized. */
typedef struct nav_tri_grid {
    double x0, z0; /* xz minimum of the polygon's surface */
    double sx, sz; /* cells per metre along x and z */
    uint32_t first_cell;
    uint16_t nx, nz;
} nav_tri_grid;

typedef struct nav_mesh_ext {
    nav_mesh m;              /* must stay first: nav_mesh * <-> nav_mesh_ext * */
    nav_link_input *link_in; /* links exactly as given (canonical input form) */
    size_t memory;           /* bytes of every allocation the mesh owns */
    /* Height lookup acceleration (nav_height.c), NULL when no polygon has
       enough detail triangles to need it. */
    uint32_t *tri_grid_of; /* per polygon: index into tri_grids, NAV_NONE if none */
    nav_tri_grid *tri_grids;
    uint32_t *grid_cells; /* cell starts into grid_tris, total cells + 1 */
    uint16_t *grid_tris;  /* polygon-local triangle ids */
} nav_mesh_ext;

static inline const nav_mesh_ext *nav_mesh_ext_of(const nav_mesh *m) {
    return (const nav_mesh_ext *)m;
}

/* Fills err (if any) with status s and a printf-style sentence; returns s. */
nav_status nav_set_error(nav_error *err, nav_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Builds m->bvh / m->nbvh from m->poly_bounds (nav_index.c). */
nav_status nav_index_build(nav_mesh *m);

/* Nearest without argument validation, used by the builder to snap links. */
nav_status nav_nearest_unchecked(const nav_mesh *m, const float p[3], const float ext[3],
                                 uint64_t exclude_mask, uint32_t *poly, float out[3]);

/* Builds the per-polygon detail triangle grids (x->tri_grid_of and co.)
   from the detail mesh; adds their bytes to x->memory (nav_height.c). */
nav_status nav_height_accel_build(nav_mesh_ext *x);
/* Frees what nav_height_accel_build allocated. */
void nav_height_accel_free(nav_mesh_ext *x);
/* Surface height by scanning every triangle of the polygon, the reference
   the accelerated nav_height_unchecked must equal (tests use it). */
float nav_height_scan(const nav_mesh *m, uint32_t poly, double x, double z);

/* Surface height of poly at (x, z) without argument validation (nav_height.c). */
float nav_height_unchecked(const nav_mesh *m, uint32_t poly, double x, double z);
/* Containment in xz (boundary included) without argument validation. */
bool nav_contains_unchecked(const nav_mesh *m, uint32_t poly, double x, double z);
/* How far outside polygon p's xz box nav_contains_unchecked may accept a
   point: its slack divided by sin(half the angle) at the sharpest corner,
   capped at 1 m. */
double nav_contains_reach(const nav_mesh *m, uint32_t poly);
/* Closest point (ox, oz) of the polygon's boundary to (x, z) in xz: where
   nav_closest_unchecked moves a point the polygon does not contain. */
void nav_boundary_closest_xz(const nav_mesh *m, uint32_t poly, double x, double z, double *ox,
                             double *oz);
/* Closest point of the polygon's surface to p, without argument validation. */
void nav_closest_unchecked(const nav_mesh *m, uint32_t poly, const float p[3], float out[3]);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of len bytes. */
uint32_t nav_crc32(const uint8_t *data, size_t len);

#endif
