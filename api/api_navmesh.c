/*
 * api_navmesh: the service and navmesh-management endpoints: GET /health,
 * GET /metrics, and PUT / GET / DELETE of /v1/navmeshes[/{name}].
 *
 * Handlers are thin: decode (api_codec), build (nav_mesh_build with the
 * configured limits), publish through the registry (store first, then the
 * in-memory swap), encode. A failure at any step changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_codec.h"
#include "api/api_internal.h"
#include "api/api_json.h"

void api_h_health(api_req *r) {
    /* "ok" while PostgreSQL is down too: queries are answered from memory;
       store.connected says whether writes can succeed. */
    store *st = api_registry_store(api_req_registry(r));
    api_reply_json(r, API_OK,
                   json_pack("{s:s,s:I,s:s,s:{s:s,s:b}}", "status", "ok", "navmeshes",
                             (json_int_t)api_registry_count(api_req_registry(r)), "version",
                             API_VERSION, "store", "kind", store_backend(st), "connected",
                             store_connected(st)));
}

void api_h_metrics(api_req *r) {
    size_t len = 0;
    char *text = api_metrics_render(api_req_registry(r), api_req_in_flight(r),
                                    api_req_writes_pending(r), &len);
    if (!text) {
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while rendering metrics");
        return;
    }
    api_reply_raw(r, API_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

void api_h_mesh_list(api_req *r) {
    api_entry **list;
    size_t n = api_registry_snapshot(api_req_registry(r), &list);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, api_entry_encode(list[i]));
    api_registry_snapshot_free(list, n);
    api_reply_json(r, API_OK, json_pack("{s:o}", "navmeshes", arr));
}

void api_h_mesh_get(api_req *r) {
    const char *format = api_req_arg(r, "format");
    if (format && strcmp(format, "json") != 0 && strcmp(format, "obj") != 0 &&
        strcmp(format, "bin") != 0) {
        api_reply_fail(r, API_E_BAD_REQUEST, "format must be json, obj or bin");
        return;
    }
    const char *profile = api_req_arg(r, "profile");
    if (profile && !api_profile_name_ok(profile)) {
        api_reply_fail(r, API_E_BAD_REQUEST,
                       "profile must be a profile name (1-64 of A-Z a-z 0-9 _ . -)");
        return;
    }
    api_entry *e = api_req_mesh(r);
    if (!e)
        return;
    const nav_mesh *m = api_entry_profile(e, profile);
    if (!format) {
        api_reply_json(r, API_OK, api_entry_encode(e));
    } else if (!m) {
        api_reply_fail(r, API_E_BAD_REQUEST, "profile '%s' does not exist in navmesh '%s'", profile,
                       e->meta.name);
    } else if (strcmp(format, "json") == 0) {
        api_reply_json(r, API_OK, api_mesh_encode_json(m));
    } else if (strcmp(format, "bin") == 0) {
        size_t len = 0;
        char *bin = api_mesh_encode_bin(m, &len);
        if (!bin)
            api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while encoding the export");
        else
            api_reply_raw(r, API_OK, "application/octet-stream", bin, len);
    } else {
        char *text = NULL;
        size_t len = 0;
        nav_status s = nav_mesh_to_obj(m, &text, &len);
        if (s != NAV_OK)
            api_reply_fail(r, api_code_from_nav(s), "the navmesh could not be exported as OBJ");
        else
            api_reply_raw(r, API_OK, "model/obj", text, len);
    }
    api_entry_release(e);
}

void api_h_mesh_put(api_req *r) {
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    api_err err = {0};
    api_mesh_doc doc;
    if (type == API_BODY_JSON) {
        json_t *root = api_json_parse(body, len, &err);
        if (!root) {
            api_reply_error(r, &err);
            return;
        }
        /* The decoded arrays are copies: the JSON tree is freed before the build. */
        api_code c = api_mesh_decode_json(root, &doc, &err);
        json_decref(root);
        if (c != API_OK) {
            api_reply_error(r, &err);
            return;
        }
    } else if (api_mesh_decode_obj(body, len, &doc, &err) != API_OK) {
        api_reply_error(r, &err);
        return;
    }
    nav_mesh *mesh = NULL;
    nav_error ne = {0};
    nav_status s = nav_mesh_build(&doc.in, &api_req_config(r)->limits, &mesh, &ne);
    api_mesh_doc_free(&doc);
    if (s != NAV_OK) {
        api_reply_fail(r, api_code_from_nav(s), "%s",
                       ne.message[0] ? ne.message : nav_status_text(s));
        return;
    }
    api_entry *e = NULL;
    int created = 0;
    if (api_registry_put(api_req_registry(r), api_req_name(r), mesh, &e, &created, &err) !=
        API_OK) {
        api_reply_error(r, &err);
        return;
    }
    api_reply_json(r, created ? API_CREATED : API_OK, api_entry_encode(e));
    api_entry_release(e);
}

void api_h_mesh_delete(api_req *r) {
    api_err err = {0};
    if (api_registry_delete(api_req_registry(r), api_req_name(r), &err) != API_OK)
        api_reply_error(r, &err);
    else
        api_reply_empty(r, API_NO_CONTENT);
}
