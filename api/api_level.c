/*
 * api_level: the level endpoints, PUT / GET / DELETE /v1/levels/{name} and
 * GET /v1/levels: the triangle soup that bakes start from (see the
 * contract's "Levels: source geometry").
 *
 * Levels live in the store only (STORE_LEVEL), not in memory: nothing but a
 * bake reads them, and a 400 m town is 28,522 triangles. PUT and DELETE run
 * on the writer thread like navmesh writes (api_routes.h), so a level write
 * is as durable and as atomic as a mesh write; GET reads and checks the
 * stored blob.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_codec.h"
#include "api/api_internal.h"
#include "api/api_json.h"
#include "nav/nav_level.h"

static int64_t level_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The contract's level metadata (plus dropped_triangles, ours). */
static json_t *level_meta(const store_meta *m, const nav_level *l) {
    char created[40], updated[40];
    api_format_time(m->created_ms, created, sizeof created);
    api_format_time(m->updated_ms, updated, sizeof updated);
    float bmin[3], bmax[3];
    nav_level_bounds(l, bmin, bmax);
    return json_pack("{s:s,s:I,s:I,s:I,s:I,s:[o,o],s:s,s:s}", "name", m->name, "version",
                     (json_int_t)m->version, "vertices", (json_int_t)nav_level_vertex_count(l),
                     "triangles", (json_int_t)nav_level_triangle_count(l), "dropped_triangles",
                     (json_int_t)nav_level_dropped(l), "bounds", api_json_vec3(bmin),
                     api_json_vec3(bmax), "created_at", created, "updated_at", updated);
}

/* Reads one coordinate or index array of fixed width 3 from arr into out
   (float or uint32), naming the first bad element. */
static api_code decode_rows(const json_t *arr, const char *what, int ints, void *out, api_err *e) {
    size_t n = json_array_size(arr);
    for (size_t i = 0; i < n; i++) {
        const json_t *row = json_array_get(arr, i);
        if (!json_is_array(row) || json_array_size(row) != 3)
            return api_fail(e, API_E_INVALID_LEVEL, "%s[%zu] must be an array of 3 %s", what, i,
                            ints ? "vertex indices" : "numbers");
        for (size_t k = 0; k < 3; k++) {
            const json_t *x = json_array_get(row, k);
            if (ints) {
                if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                    json_integer_value(x) > (json_int_t)UINT32_MAX - 1)
                    return api_fail(e, API_E_INVALID_LEVEL,
                                    "%s[%zu][%zu] must be a vertex index (an integer >= 0)", what,
                                    i, k);
                ((uint32_t *)out)[3 * i + k] = (uint32_t)json_integer_value(x);
            } else {
                if (!json_is_number(x))
                    return api_fail(e, API_E_INVALID_LEVEL, "%s[%zu] has a non-finite coordinate",
                                    what, i);
                ((float *)out)[3 * i + k] = (float)json_number_value(x);
            }
        }
    }
    return API_OK;
}

/* Builds the level a PUT body describes; on failure e says why. */
static nav_level *level_decode(api_req *r, api_err *e) {
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    uint32_t max_tris = api_req_config(r)->max_level_triangles;
    nav_level *l = NULL;
    nav_error ne = {0};
    nav_status st;
    if (type == API_BODY_JSON) {
        json_t *root = api_json_parse(body, len, e);
        if (!root)
            return NULL;
        const json_t *v = json_object_get(root, "vertices"),
                     *t = json_object_get(root, "triangles");
        if (!json_is_object(root) || !json_is_array(v) || !json_is_array(t)) {
            json_decref(root);
            api_fail(e, API_E_INVALID_LEVEL,
                     "the body must be {\"vertices\": [[x, y, z], ...], \"triangles\": [[a, b, c], "
                     "...]}");
            return NULL;
        }
        size_t nv = json_array_size(v), nt = json_array_size(t);
        if (nv > UINT32_MAX / 3 || nt > UINT32_MAX / 3 || (max_tris && nt > max_tris)) {
            json_decref(root);
            api_fail(e, API_E_INVALID_LEVEL,
                     "the level has %zu triangles, more than the limit of %u "
                     "(--max-level-triangles)",
                     nt, max_tris);
            return NULL;
        }
        float *verts = malloc(nv * 3 * sizeof *verts + 1);
        uint32_t *tris = malloc(nt * 3 * sizeof *tris + 1);
        api_code c = !verts || !tris ? api_fail(e, API_E_UNAVAILABLE, "out of memory")
                                     : decode_rows(v, "vertices", 0, verts, e);
        if (c == API_OK)
            c = decode_rows(t, "triangles", 1, tris, e);
        json_decref(root);
        if (c != API_OK) {
            free(verts);
            free(tris);
            return NULL;
        }
        st = nav_level_build(verts, (uint32_t)nv, tris, (uint32_t)nt, max_tris, &l, &ne);
        free(verts);
        free(tris);
    } else {
        st = nav_level_from_obj(body, len, max_tris, &l, &ne);
    }
    if (st == NAV_E_NOMEM) {
        api_fail(e, API_E_UNAVAILABLE, "out of memory while reading the level");
        return NULL;
    }
    if (st != NAV_OK) {
        api_fail(e, API_E_INVALID_LEVEL, "%s%s", ne.message[0] ? ne.message : nav_status_text(st),
                 st == NAV_E_LIMIT ? " (--max-level-triangles)" : "");
        return NULL;
    }
    return l;
}

void api_h_level_put(api_req *r) {
    api_err e = {0};
    nav_level *l = level_decode(r, &e);
    if (!l) {
        api_reply_error(r, &e);
        return;
    }
    uint8_t *blob = NULL;
    size_t len = 0;
    store_meta meta;
    int created = 0;
    store_status ss = STORE_NOMEM;
    if (nav_level_serialize(l, &blob, &len) == NAV_OK)
        ss = store_put(api_registry_store(api_req_registry(r)), STORE_LEVEL, api_req_name(r), blob,
                       len, level_now_ms(), &meta, &created);
    free(blob);
    if (ss != STORE_OK)
        api_reply_fail(r, api_code_from_store(ss), "the level could not be stored: %s",
                       store_status_text(ss));
    else
        api_reply_json(r, created ? API_CREATED : API_OK, level_meta(&meta, l));
    nav_level_free(l);
}

/* Reads and checks stored level `name`; replies and returns NULL when absent or damaged. */
nav_level *api_level_load(api_req *r, const char *name, store_meta *meta) {
    void *blob = NULL;
    size_t len = 0;
    store_status ss =
        store_get(api_registry_store(api_req_registry(r)), STORE_LEVEL, name, meta, &blob, &len);
    if (ss == STORE_NOT_FOUND) {
        api_reply_fail(r, API_E_NOT_FOUND, "level '%s' does not exist", name);
        return NULL;
    }
    if (ss != STORE_OK) {
        api_reply_fail(r, api_code_from_store(ss), "the level could not be read: %s",
                       store_status_text(ss));
        return NULL;
    }
    nav_level *l = NULL;
    nav_error ne = {0};
    nav_status st = nav_level_deserialize(blob, len, &l, &ne);
    free(blob);
    if (st != NAV_OK)
        api_reply_fail(r, API_E_INTERNAL, "stored level '%s' is damaged (%s)", name, ne.message);
    return l;
}

void api_h_level_get(api_req *r) {
    const char *format = api_req_arg(r, "format");
    if (format && strcmp(format, "obj") != 0) {
        api_reply_fail(r, API_E_BAD_REQUEST, "format must be obj (or absent for the metadata)");
        return;
    }
    store_meta meta;
    nav_level *l = api_level_load(r, api_req_name(r), &meta);
    if (!l)
        return;
    if (!format) {
        api_reply_json(r, API_OK, level_meta(&meta, l));
    } else {
        char *text = NULL;
        size_t len = 0;
        if (nav_level_to_obj(l, &text, &len) != NAV_OK)
            api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while exporting the level");
        else
            api_reply_raw(r, API_OK, "model/obj", text, len);
    }
    nav_level_free(l);
}

static int level_list_one(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    json_t *arr = ctx;
    nav_level *l = NULL;
    nav_error ne;
    if (nav_level_deserialize(blob, len, &l, &ne) != NAV_OK) {
        /* listed by name only: GET of it says what is wrong */
        json_array_append_new(arr, json_pack("{s:s,s:I,s:s}", "name", meta->name, "version",
                                             (json_int_t)meta->version, "error", "damaged"));
        return 0;
    }
    json_array_append_new(arr, level_meta(meta, l));
    nav_level_free(l);
    return 0;
}

void api_h_level_list(api_req *r) {
    json_t *arr = json_array();
    store_status ss =
        store_each(api_registry_store(api_req_registry(r)), STORE_LEVEL, level_list_one, arr, NULL);
    if (ss != STORE_OK) {
        json_decref(arr);
        api_reply_fail(r, api_code_from_store(ss), "the levels could not be listed");
        return;
    }
    api_reply_json(r, API_OK, json_pack("{s:o}", "levels", arr));
}

void api_h_level_delete(api_req *r) {
    store_status ss =
        store_delete(api_registry_store(api_req_registry(r)), STORE_LEVEL, api_req_name(r));
    if (ss == STORE_NOT_FOUND)
        api_reply_fail(r, API_E_NOT_FOUND, "level '%s' does not exist", api_req_name(r));
    else if (ss != STORE_OK)
        api_reply_fail(r, api_code_from_store(ss), "the level could not be deleted: %s",
                       store_status_text(ss));
    else
        api_reply_empty(r, API_NO_CONTENT);
}
