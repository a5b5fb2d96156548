/*
 * nav_mesh: an immutable navigation mesh, built once from user input.
 *
 * Owns: welding, winding normalization, validation, edge adjacency, off-mesh
 * links, connected components (undirected and directed), bounds, area, the
 * height (detail) surface, the spatial index and the binary serialization.
 *
 * Coordinates are metres, y is up; all 2-D geometry is in the xz plane.
 * A built mesh is never modified, so any number of threads may query it at
 * once without locks. Lifetime is managed by the caller (api/ refcounts it).
 */
#ifndef NAV_MESH_H
#define NAV_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nav/nav_status.h"

#define NAV_MAX_AREAS 64       /* area ids are 0..63 */
#define NAV_LINK_KIND_MAX 64   /* bytes of a link's kind, including the NUL */
#define NAV_WELD_EPSILON 1e-4f /* vertices closer than this on every axis are welded */

typedef struct nav_mesh nav_mesh;

/* An off-mesh connection as the user gave it. */
typedef struct nav_link_input {
    float start[3];
    float end[3];
    float radius;                 /* metres, >= 0; how far from `start` an agent may enter it */
    bool bidirectional;           /* false: only start -> end */
    uint8_t area;                 /* 0..63 */
    char kind[NAV_LINK_KIND_MAX]; /* free text echoed back ("jump"); NUL-terminated */
} nav_link_input;

/*
 * A borrowed view of a navmesh as uploaded. Nothing here is owned by the
 * mesh; nav_mesh_build copies what it keeps.
 *
 * Polygon p uses poly_verts[poly_start[p] .. poly_start[p + 1]); poly_start
 * has npolys + 1 entries. Detail triangle indices i < nverts refer to verts,
 * larger ones to detail_verts[i - nverts]. detail_poly_tris holds (first,
 * count) per polygon; detail_* may all be NULL/0 (no height mesh).
 */
typedef struct nav_mesh_input {
    const float *verts; /* 3 per vertex */
    uint32_t nverts;
    const uint32_t *poly_start;
    const uint32_t *poly_verts;
    uint32_t npolys;
    const uint8_t *areas; /* npolys entries, or NULL for all 0 */
    const nav_link_input *links;
    uint32_t nlinks;
    const float *detail_verts; /* 3 per vertex */
    uint32_t ndetail_verts;
    const uint32_t *detail_tris; /* 3 per triangle */
    uint32_t ndetail_tris;
    const uint32_t *detail_poly_tris; /* 2 per polygon, or NULL */
} nav_mesh_input;

/* Size limits checked before any work; 0 means "no limit". */
typedef struct nav_mesh_limits {
    uint32_t max_verts;
    uint32_t max_polys;
    uint32_t max_verts_per_poly;
    uint32_t max_links;
} nav_mesh_limits;

/*
 * Builds a mesh. On failure returns NAV_E_INVALID_MESH (or NAV_E_LIMIT /
 * NAV_E_NOMEM), sets *out to NULL and writes a sentence naming the offending
 * polygon, vertex or link into err ("polygon 12 is not convex in xz").
 * limits may be NULL.
 */
nav_status nav_mesh_build(const nav_mesh_input *in, const nav_mesh_limits *limits, nav_mesh **out,
                          nav_error *err);

/* Frees a mesh; NULL is a no-op. */
void nav_mesh_free(nav_mesh *m);

/* ---- metadata (all O(1)) ---- */
/* Process-unique id of this built mesh (never reused), for cache keys. */
uint64_t nav_mesh_uid(const nav_mesh *m);
uint32_t nav_mesh_vertex_count(const nav_mesh *m); /* after welding, referenced only */
uint32_t nav_mesh_polygon_count(const nav_mesh *m);
uint32_t nav_mesh_link_count(const nav_mesh *m);
uint32_t nav_mesh_component_count(const nav_mesh *m); /* links counted as two-way */
void nav_mesh_bounds(const nav_mesh *m, float bmin[3], float bmax[3]);
double nav_mesh_area(const nav_mesh *m); /* walkable area projected on xz, m^2 */
bool nav_mesh_has_detail(const nav_mesh *m);
/* Bytes of memory owned by the mesh (for metrics and benchmarks). */
size_t nav_mesh_memory(const nav_mesh *m);

/*
 * Where the exact search's corner graph (precomputed with the mesh) came
 * from: built with it, loaded from a stored blob, rebuilt because the
 * stored copy was missing or damaged (its CRC), or none (too large: the
 * slower interval search answers exact queries).
 */
typedef enum nav_graph_origin {
    NAV_GRAPH_NONE,
    NAV_GRAPH_BUILT,
    NAV_GRAPH_LOADED,
    NAV_GRAPH_REBUILT
} nav_graph_origin;
nav_graph_origin nav_mesh_graph_origin(const nav_mesh *m);

/* ---- per polygon / link accessors ---- */
uint8_t nav_mesh_poly_area(const nav_mesh *m, uint32_t poly);
uint32_t nav_mesh_poly_component(const nav_mesh *m, uint32_t poly);
double nav_mesh_poly_area_xz(const nav_mesh *m, uint32_t poly);
/* The link's kind text (NUL-terminated, owned by the mesh). */
const char *nav_mesh_link_kind(const nav_mesh *m, uint32_t link);
/* The link's end points as given (not snapped). */
void nav_mesh_link_points(const nav_mesh *m, uint32_t link, float start[3], float end[3]);

/*
 * Height of the walkable surface of `poly` at (x, z): the detail mesh when
 * present, else the polygon's fan triangulation. Points outside the polygon
 * in xz take the height of the closest point of the surface.
 */
nav_status nav_mesh_height(const nav_mesh *m, uint32_t poly, float x, float z, float *y);

/* The point of polygon `poly` closest to p in xz (p itself when inside),
   lifted onto the surface. On a flat polygon that is also the 3-D closest
   point; on a slope the 3-D closest can lie elsewhere. */
nav_status nav_mesh_closest_on_poly(const nav_mesh *m, uint32_t poly, const float p[3],
                                    float out[3]);

/* True when (x, z) lies inside polygon `poly` in xz (boundary included). */
bool nav_mesh_poly_contains_xz(const nav_mesh *m, uint32_t poly, float x, float z);

/*
 * Polygons whose bounding box overlaps [bmin, bmax], through the spatial
 * index (no scan of all polygons). Writes at most max ids and returns how
 * many overlap in total (so a return > max means truncated).
 */
uint32_t nav_mesh_query_box(const nav_mesh *m, const float bmin[3], const float bmax[3],
                            uint32_t *polys, uint32_t max);

/*
 * Nearest point on the mesh to p within the box p +- ext. Prefers, among
 * polygons containing p in xz, the one whose surface is vertically closest
 * (so a point on a bridge snaps to the bridge, not the floor below), else the
 * 3-D closest. exclude_mask bit a set = polygons of area a are not eligible.
 * Returns NAV_E_OFF_MESH when no polygon is within the box.
 */
nav_status nav_mesh_nearest(const nav_mesh *m, const float p[3], const float ext[3],
                            uint64_t exclude_mask, uint32_t *poly, float out[3]);

/*
 * Reachability from precomputed components: true when a path exists from
 * polygon a to polygon b, with one-way links counted only in their own
 * direction. O(1) for meshes whose strongly connected components fit the
 * precomputed closure table.
 */
bool nav_mesh_reachable(const nav_mesh *m, uint32_t a, uint32_t b);

/* ---- serialization ---- */
/*
 * Compact binary form for storage: magic "NAVM", format version, payload,
 * CRC-32. *out is malloc'd; free() it.
 */
nav_status nav_mesh_serialize(const nav_mesh *m, uint8_t **out, size_t *len);
/* Rebuilds a mesh from nav_mesh_serialize's bytes; NAV_E_CORRUPT on any damage. */
nav_status nav_mesh_deserialize(const uint8_t *data, size_t len, nav_mesh **out, nav_error *err);
/* The same for bytes whose integrity the caller has checked already (a
   container whose own CRC covers them): the blob's checksums are not
   recomputed, every structural check still runs. A replica's load of an
   8 MiB mesh otherwise reads the same bytes twice for CRCs. */
nav_status nav_mesh_deserialize_checked(const uint8_t *data, size_t len, nav_mesh **out,
                                        nav_error *err);

/*
 * A view of the mesh in the upload form (welded vertices, normalized winding),
 * valid while the mesh lives. Building from it yields an equal mesh, so
 * export followed by upload round-trips.
 */
void nav_mesh_as_input(const nav_mesh *m, nav_mesh_input *out);

/* ---- Wavefront OBJ ---- */
/*
 * Parses OBJ text (v and f lines; "f 1/1/1 ..." and negative indices
 * accepted; other lines ignored) into malloc'd arrays owned by *obj.
 */
typedef struct nav_obj {
    float *verts;
    uint32_t nverts;
    uint32_t *poly_start;
    uint32_t *poly_verts;
    uint32_t npolys;
} nav_obj;
nav_status nav_obj_parse(const char *text, size_t len, nav_obj *obj, nav_error *err);
void nav_obj_free(nav_obj *obj);
/* Input view of a parsed OBJ (no areas, links or detail). */
void nav_obj_as_input(const nav_obj *obj, nav_mesh_input *out);
/* Writes the mesh as OBJ text (malloc'd, NUL-terminated). */
nav_status nav_mesh_to_obj(const nav_mesh *m, char **out, size_t *len);

#endif
