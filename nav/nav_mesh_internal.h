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

/* nav_mesh_build, with the corner graph (nav_corner.h) built or not: the
   deserializer attaches a stored one instead (then adds its memory).
   corner_graph > 0 builds it on that many threads (the same graph). */
nav_status nav_mesh_build_ex(const nav_mesh_input *in, const nav_mesh_limits *limits,
                             int corner_graph, nav_mesh **out, nav_error *err);

/* The pieces of nav_mesh_build the snapshot loader (nav_snapshot.c) reuses
   to derive, in linear time, what the blob does not carry:
   - nav_mesh_alloc: calloc of n (at least 1) elements, added to x->memory;
     nav_mesh_alloc_raw the same uncleared, for arrays every element of
     which is written next (clearing 8 MiB of arrays that are then
     overwritten was 7 % of a stored mesh's load);
   - nav_mesh_check_input: every check nav_mesh_build makes on its input;
   - nav_mesh_geometry: poly_bounds, centroids, areas, bmin/bmax, area and
     (margin true) contains_margin from the polygons and the detail mesh
     (before the height grids exist, as in the build);
   - nav_mesh_link_lists: link_out_start/link_out from the snapped ends;
   - nav_mesh_scc_closure: scc_reach from the condensed DAG (successors
     have lower ids). */
void *nav_mesh_alloc(nav_mesh_ext *x, size_t n, size_t size);
void *nav_mesh_alloc_raw(nav_mesh_ext *x, size_t n, size_t size);
nav_status nav_mesh_check_input(const nav_mesh_input *in, nav_error *err);
/* Twice the signed xz area of polygon ids[0..n) and whether it is convex
   (the build's checks on every polygon). */
double nav_mesh_signed_area2(const float *verts, const uint32_t *ids, uint32_t n);
bool nav_mesh_is_convex(const float *verts, const uint32_t *ids, uint32_t n);
nav_status nav_mesh_geometry(nav_mesh_ext *x, bool margin);
nav_status nav_mesh_link_lists(nav_mesh_ext *x);
nav_status nav_mesh_scc_closure(nav_mesh_ext *x);

/* The built-structure section of a version 3 blob (nav_snapshot.c): its
   size, writing it at out, and loading a mesh from the input form (already
   parsed from the blob) and that section, which is validated in linear time
   so forged bytes are NAV_E_CORRUPT or a mesh every query can walk safely.
   The input's arrays (malloc'd by the caller, with areas and links present)
   become the mesh's or are freed, whatever the outcome: *in is cleared.
   The corner graph is left to the caller (nav_serialize.c). */
size_t nav_snapshot_size(const nav_mesh *m);
void nav_snapshot_put(const nav_mesh *m, uint8_t *out);
nav_status nav_snapshot_load(nav_mesh_input *in, const uint8_t *p, size_t len, nav_mesh **out,
                             nav_error *err);

/* Unique id for a new mesh (nav_mesh_build.c). */
uint64_t nav_mesh_next_uid(void);

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

/* count little-endian 32-bit words from src into dst, in host order. */
void nav_le32_copy(void *dst, const uint8_t *src, size_t count);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of len bytes. */
uint32_t nav_crc32(const uint8_t *data, size_t len);

#endif
