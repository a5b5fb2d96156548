/*
 * api_codec: the navmesh wire formats of the contract, to and from nav/.
 *
 * Decoding turns an upload body (JSON or Wavefront OBJ) into a borrowed
 * nav_mesh_input view over arrays owned by an api_mesh_doc; it checks every
 * JSON type and names the field ("polygons[3][1] must be a non-negative
 * integer"). Geometry (convexity, index ranges, shared edges) is nav/'s job.
 * Encoding writes the metadata object and the upload JSON of a built mesh.
 */
#ifndef API_CODEC_H
#define API_CODEC_H

#include <jansson.h>
#include <stdint.h>

#include "api/api_error.h"
#include "api/api_registry.h"
#include "nav/nav_mesh.h"
#include "storage/store.h"

/* Default radius (m) and kind of an uploaded link that omits them. */
#define API_LINK_DEFAULT_RADIUS 0.5f
#define API_LINK_DEFAULT_KIND "link"

/* Owns the arrays an upload decodes into; `in` views them. */
typedef struct api_mesh_doc {
    nav_mesh_input in;
    float *verts;
    uint32_t *poly_start, *poly_verts;
    uint8_t *areas;
    nav_link_input *links;
    float *detail_verts;
    uint32_t *detail_tris, *detail_poly_tris;
    nav_obj obj; /* set when decoded from OBJ */
    int from_obj;
} api_mesh_doc;

/* Decodes upload JSON. On failure e says which field (invalid_navmesh) and doc is empty. */
api_code api_mesh_decode_json(const json_t *root, api_mesh_doc *doc, api_err *e);
/* Decodes OBJ text. */
api_code api_mesh_decode_obj(const char *text, size_t len, api_mesh_doc *doc, api_err *e);
/* Frees what a decode allocated; safe on a zeroed or already freed doc. */
void api_mesh_doc_free(api_mesh_doc *doc);

/* The mesh in the upload JSON format (links and detail included); new reference. */
json_t *api_mesh_encode_json(const nav_mesh *m);

/*
 * The same mesh as the compact binary export (?format=bin, for the viewer:
 * typed arrays instead of 4 MB of JSON numbers on a 100,000-polygon mesh).
 * Little-endian, every section 4-byte aligned:
 *   "NAVB", u32 version (1), u32 nverts, npolys, nindices, ndetail_verts,
 *   ndetail_tris, has_detail (0 or 1), links_len;
 *   f32 verts[3 nverts]; u32 poly_start[npolys + 1]; u32 poly_verts[nindices];
 *   u8 areas[npolys] padded with zeros to a multiple of 4;
 *   when has_detail: f32 detail_verts[3 ndetail_verts],
 *   u32 detail_tris[3 ndetail_tris], u32 detail_poly_tris[2 npolys];
 *   links_len bytes of UTF-8 JSON: the "links" array of the JSON export.
 * Floats are the mesh's own (the JSON export prints them), so nothing is
 * rounded. Returns a malloc'd buffer and its length, or NULL (no memory).
 */
char *api_mesh_encode_bin(const nav_mesh *m, size_t *len);

/* The contract's metadata object; new reference. */
json_t *api_meta_encode(const store_meta *meta, const nav_mesh *m);
/* api_meta_encode of the default profile plus "profiles" (names) and, for a
   bake, "source" (level, level version, every setting). */
json_t *api_entry_encode(const api_entry *e);

/* RFC 3339 UTC with milliseconds ("2026-11-21T05:23:31.123Z") into buf (>= 32 bytes). */
void api_format_time(int64_t unix_ms, char *buf, size_t size);

#endif
