/*
 * api_viewer: serves the embedded web viewer (see api_viewer.h). The bytes
 * live in build/gen/api_assets.c, written by tests/tools/embed.c; this file
 * only maps request paths to table rows and builds the responses.
 */
#include "api/api_viewer.h"

#include "api/api_internal.h"

#include <microhttpd.h>
#include <string.h>

static const api_viewer_asset *find_by_name(const char *name) {
    for (unsigned i = 0; i < api_viewer_asset_count; i++) {
        if (strcmp(api_viewer_assets[i].name, name) == 0) {
            return &api_viewer_assets[i];
        }
    }
    return NULL;
}

const api_viewer_asset *api_viewer_find(const char *path) {
    static const char prefix[] = "/viewer/";
    if (path == NULL) {
        return NULL;
    }
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
        return find_by_name("index.html");
    }
    if (strncmp(path, prefix, sizeof prefix - 1) == 0 && path[sizeof prefix - 1] != '\0') {
        return find_by_name(path + sizeof prefix - 1);
    }
    return NULL;
}

/* True when an If-None-Match header lists etag (or is "*"); the list is
   comma separated and a weak "W/" prefix still matches for GET (RFC 9110). */
static int etag_matches(const char *header, const char *etag) {
    size_t elen = strlen(etag);
    const char *p = header;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        }
        if (*p == '*') {
            return 1;
        }
        if (strncmp(p, "W/", 2) == 0) {
            p += 2;
        }
        if (strncmp(p, etag, elen) == 0 &&
            (p[elen] == '\0' || p[elen] == ',' || p[elen] == ' ' || p[elen] == '\t')) {
            return 1;
        }
        while (*p != '\0' && *p != ',') {
            p++;
        }
    }
    return 0;
}

struct MHD_Response *api_viewer_response(const api_viewer_asset *a, const char *if_none_match,
                                         unsigned *http_status) {
    if (a == NULL || http_status == NULL) {
        return NULL;
    }
    int not_modified = if_none_match != NULL && etag_matches(if_none_match, a->etag);
    /* The data is static: no copy and no free callback. */
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(
        not_modified ? 0 : a->len, not_modified ? NULL : (void *)a->data, NULL);
    if (r == NULL) {
        return NULL;
    }
    int ok = MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, a->etag) == MHD_YES &&
             MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache") == MHD_YES &&
             MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") == MHD_YES;
    if (ok && !not_modified) {
        ok = MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type) == MHD_YES;
    }
    if (!ok) {
        MHD_destroy_response(r);
        return NULL;
    }
    *http_status = not_modified ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK;
    return r;
}

int api_viewer_queue(struct MHD_Connection *c, const api_viewer_asset *a) {
    if (c == NULL || a == NULL) {
        return MHD_NO;
    }
    const char *inm =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    unsigned status = 0;
    struct MHD_Response *r = api_viewer_response(a, inm, &status);
    if (r == NULL) {
        return MHD_NO;
    }
    int ret = (int)MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- the routes (api_routes.h: GET / and GET /viewer/{name}) ---- */

void api_h_viewer(api_req *r) {
    const char *name = api_req_name(r);
    const api_viewer_asset *a = find_by_name(name[0] != '\0' ? name : "index.html");
    if (a == NULL) {
        api_reply_fail(r, API_E_NOT_FOUND, "the viewer has no file '%s'", name);
        return;
    }
    unsigned status = 0;
    struct MHD_Response *resp =
        api_viewer_response(a, api_req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH), &status);
    api_reply_response(r, status, resp, status == MHD_HTTP_OK ? a->len : 0);
}
