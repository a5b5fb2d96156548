/*
 * fuzz_navmesh_json: the navmesh upload path of PUT /v1/navmeshes/{name}
 * for JSON bodies, minus the HTTP and the store: api_json_parse, the
 * contract decoder api_mesh_decode_json, nav_mesh_build with the service's
 * default limits, then the export the service offers (?format=json) must
 * parse, decode and build again to a mesh with the same counts.
 *
 * Seeds: the shared Recast navmeshes (copied by seeds.sh) and small
 * hand-written documents in tests/fuzz/corpus/navmesh_json/.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_codec.h"
#include "api/api_json.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The service's defaults (service/svc_config.c), smaller where the fuzzer
   would otherwise spend its time allocating. */
static const nav_mesh_limits fz_limits = {
    .max_verts = 1u << 16, .max_polys = 1u << 15, .max_verts_per_poly = 64, .max_links = 1024};

static nav_mesh *decode_build(const char *body, size_t len, int must_succeed) {
    api_err e;
    memset(&e, 0, sizeof e);
    json_t *root = api_json_parse(body, len, &e);
    if (!root) {
        fz_require(!must_succeed, "exported JSON parses");
        fz_require(api_code_is_error(e.code), "a parse failure carries an error code");
        return NULL;
    }
    api_mesh_doc doc;
    memset(&doc, 0, sizeof doc);
    nav_mesh *m = NULL;
    if (api_mesh_decode_json(root, &doc, &e) == API_OK) {
        nav_error ne;
        nav_status s = nav_mesh_build(&doc.in, &fz_limits, &m, &ne);
        fz_require(s == NAV_OK || m == NULL, "a failed build leaves *out NULL");
        fz_require(!must_succeed || s == NAV_OK, "exported JSON builds");
    } else {
        fz_require(!must_succeed, "exported JSON decodes");
        fz_require(api_code_is_error(e.code), "a decode failure carries an error code");
        fz_require(memchr(e.message, '\0', sizeof e.message) != NULL, "message terminated");
    }
    api_mesh_doc_free(&doc);
    json_decref(root);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *body = malloc(size + 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    body[size] = '\0'; /* the server NUL-terminates bodies; len excludes it */

    nav_mesh *m = decode_build(body, size, 0);
    if (m) {
        fz_exercise_mesh(m);
        json_t *out = api_mesh_encode_json(m);
        fz_require(out != NULL, "a built mesh encodes");
        size_t len = 0;
        char *text = api_json_dump(out, &len);
        fz_require(text != NULL, "the export dumps");
        nav_mesh *again = decode_build(text, len, 1);
        fz_require(nav_mesh_polygon_count(again) == nav_mesh_polygon_count(m) &&
                       nav_mesh_vertex_count(again) == nav_mesh_vertex_count(m) &&
                       nav_mesh_link_count(again) == nav_mesh_link_count(m),
                   "the JSON export round-trips");
        nav_mesh_free(again);
        free(text);
        json_decref(out);
        nav_mesh_free(m);
    }
    free(body);
    return 0;
}
