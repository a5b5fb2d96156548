/*
 * nav_level: level geometry, the triangle soup navmeshes and flight volumes
 * are baked from. An immutable nav_level holds float32 vertices and
 * triangles (three vertex indices each) after validation; degenerate
 * triangles (a repeated index, or no area) are dropped, not rejected, since
 * editors export them routinely. The soup need not be closed, manifold or
 * consistently wound. It serializes to one compact blob with a CRC-32 (the
 * store keeps it as an opaque STORE_LEVEL blob) and exports as OBJ.
 */
#ifndef NAV_LEVEL_H
#define NAV_LEVEL_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_mesh.h"

typedef struct nav_level nav_level;

/*
 * Builds a level from nverts float3 vertices and ntris index triples.
 * NAV_E_INVALID_MESH with err naming the vertex or triangle for: a
 * non-finite coordinate, an index out of range, no triangle at all, or no
 * triangle left with an area; NAV_E_LIMIT past max_tris triangles (0: no
 * limit). Drops degenerate triangles (see nav_level_dropped).
 */
nav_status nav_level_build(const float *verts, uint32_t nverts, const uint32_t *tris,
                           uint32_t ntris, uint32_t max_tris, nav_level **out, nav_error *err);
/*
 * Builds a level from OBJ text: faces with more than three vertices are
 * fan-triangulated from their first vertex (the forms nav_obj_parse
 * accepts: 1-based, negative, v/vt/vn).
 */
nav_status nav_level_from_obj(const char *text, size_t len, uint32_t max_tris, nav_level **out,
                              nav_error *err);
void nav_level_free(nav_level *l);

uint32_t nav_level_vertex_count(const nav_level *l);
uint32_t nav_level_triangle_count(const nav_level *l);
/* Triangles dropped as degenerate when it was built. */
uint32_t nav_level_dropped(const nav_level *l);
const float *nav_level_vertices(const nav_level *l);     /* 3 per vertex */
const uint32_t *nav_level_triangles(const nav_level *l); /* 3 per triangle */
/* Bounds of the vertices the triangles use. */
void nav_level_bounds(const nav_level *l, float bmin[3], float bmax[3]);

/* One blob (malloc'd): magic "NAVL", format version, counts, data, CRC-32. */
nav_status nav_level_serialize(const nav_level *l, uint8_t **blob, size_t *len);
/* NAV_E_CORRUPT for a bad magic, version, size or CRC. */
nav_status nav_level_deserialize(const uint8_t *blob, size_t len, nav_level **out, nav_error *err);
/* OBJ text (malloc'd, NUL-terminated): v lines, then one f line per triangle. */
nav_status nav_level_to_obj(const nav_level *l, char **text, size_t *len);

#endif
