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

typedef struct nav_mesh_ext {
    nav_mesh m;              /* must stay first: nav_mesh * <-> nav_mesh_ext * */
    nav_link_input *link_in; /* links exactly as given (canonical input form) */
    size_t memory;           /* bytes of every allocation the mesh owns */
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

/* Surface height of poly at (x, z) without argument validation (nav_height.c). */
float nav_height_unchecked(const nav_mesh *m, uint32_t poly, double x, double z);
/* Containment in xz (boundary included) without argument validation. */
bool nav_contains_unchecked(const nav_mesh *m, uint32_t poly, double x, double z);
/* Closest point of the polygon's surface to p, without argument validation. */
void nav_closest_unchecked(const nav_mesh *m, uint32_t poly, const float p[3], float out[3]);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of len bytes. */
uint32_t nav_crc32(const uint8_t *data, size_t len);

#endif
