/*
 * api_volume_query: the queries on a flight volume, POST
 * /v1/volumes/{name}/path, raycast, nearest and reachable (the contract's
 * "Flight volumes"), on top of nav_vol.h.
 *
 * Every point is snapped to the nearest free point within "extents"
 * (default [2, 2, 2]); none there is 422 point_blocked naming the field
 * (and saying when the point lies outside the volume's bounds). Each worker
 * thread keeps one nav_vol_query (a node pool of --max-nodes) and result
 * buffers, made on its first volume query and freed when it exits: a query
 * allocates nothing but its JSON. A query holds a reference on the volume
 * version it started with, so a replace or delete does not disturb it.
 * Paths go through the navmeshes' path cache (nav_vol_path_cached: keyed by
 * the volume's uid, so a replaced volume never serves the old one's paths),
 * unless the request says "cache": false or "debug": true.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_query.h"
#include "api/api_volume.h"
#include "nav/nav_cache.h"

/* ---- per-thread scratch ---- */

typedef struct vscratch {
    nav_vol_query *q;
    float *corners;
    uint32_t max_corners;
    uint32_t *expanded;
    uint32_t max_expanded;
} vscratch;

static pthread_key_t vkey;
static pthread_once_t vonce = PTHREAD_ONCE_INIT;
static int vkey_ok;

static void vscratch_free(void *p) {
    vscratch *s = p;
    if (!s)
        return;
    nav_vol_query_free(s->q);
    free(s->corners);
    free(s->expanded);
    free(s);
}

static void vkey_make(void) {
    vkey_ok = pthread_key_create(&vkey, vscratch_free) == 0;
}

static vscratch *vscratch_get(const api_config *cfg) {
    pthread_once(&vonce, vkey_make);
    if (!vkey_ok)
        return NULL;
    vscratch *s = pthread_getspecific(vkey);
    if (s)
        return s;
    uint32_t nodes = cfg->max_nodes >= 16 ? cfg->max_nodes : 65536;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_corners = nodes + 2; /* a path has at most one corner per expanded node + the ends */
    s->max_expanded = nodes;
    s->corners = malloc(3 * (size_t)s->max_corners * sizeof *s->corners);
    s->expanded = malloc((size_t)s->max_expanded * sizeof *s->expanded);
    if (nav_vol_query_new(nodes, &s->q) != NAV_OK || !s->corners || !s->expanded ||
        pthread_setspecific(vkey, s) != 0) {
        vscratch_free(s);
        return NULL;
    }
    return s;
}

nav_vol_query *api_volume_thread_query(const api_config *cfg) {
    vscratch *s = vscratch_get(cfg);
    return s ? s->q : NULL;
}

/* ---- shared decoding ---- */

/* The {name} volume with a reference, or a 404 reply and NULL. */
static api_vol_entry *vol_of(api_req *r) {
    api_vol_entry *e = api_volumes_get(api_req_volumes(r), api_req_name(r));
    if (!e)
        api_reply_fail(r, API_E_NOT_FOUND, "volume '%s' does not exist", api_req_name(r));
    return e;
}

/* The parsed JSON object body, or a reply and NULL. */
static json_t *body_of(api_req *r) {
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    api_err e = {0};
    json_t *root = api_json_parse(body, len, &e);
    if (root && !json_is_object(root)) {
        json_decref(root);
        root = NULL;
        api_fail(&e, API_E_BAD_REQUEST, "the request body must be a JSON object");
    }
    if (!root)
        api_reply_error(r, &e);
    return root;
}

/* Every volume query's opening: the body (parsed first, so a bad body is a
   400 even for an unknown volume) and the {name} volume with a reference;
   NULL with the reply sent and nothing held. */
static api_vol_entry *open_query(api_req *r, json_t **root) {
    *root = body_of(r);
    if (!*root)
        return NULL;
    api_vol_entry *ve = vol_of(r);
    if (!ve) {
        json_decref(*root);
        *root = NULL;
    }
    return ve;
}

static api_code get_extents(const json_t *root, float ext[3], api_err *e) {
    ext[0] = ext[1] = ext[2] = 2;
    api_code c = api_obj_vec3(root, "", "extents", false, ext, e);
    for (int k = 0; c == API_OK && k < 3; k++)
        if (ext[k] < 0)
            c = api_fail(e, API_E_BAD_REQUEST, "extents[%d] must be >= 0", k);
    return c;
}

/* Reads point `key` (required) and snaps it into out. */
static api_code snap_field(const nav_vol *v, const json_t *root, const char *key,
                           const float ext[3], float out[3], float *dist, api_err *e) {
    float p[3];
    api_code c = api_obj_vec3(root, "", key, true, p, e);
    if (c != API_OK)
        return c;
    nav_status st = nav_vol_nearest(v, p, ext, out, dist);
    if (st == NAV_OK)
        return API_OK;
    nav_vol_info in;
    nav_vol_get_info(v, &in);
    int outside = 0;
    for (int k = 0; k < 3; k++)
        outside |= p[k] < in.bmin[k] || p[k] > in.bmax[k];
    if (outside)
        return api_fail(e, API_E_POINT_BLOCKED,
                        "%s [%.9g, %.9g, %.9g] is outside the volume's bounds [[%.9g, %.9g, %.9g], "
                        "[%.9g, %.9g, %.9g]] and no free space lies within extents of it",
                        key, p[0], p[1], p[2], in.bmin[0], in.bmin[1], in.bmin[2], in.bmax[0],
                        in.bmax[1], in.bmax[2]);
    return api_fail(e, API_E_POINT_BLOCKED,
                    "%s is not within extents [%.9g, %.9g, %.9g] of free space (it lies in or "
                    "too near the level's geometry)",
                    key, ext[0], ext[1], ext[2]);
}

/* ---- path ---- */

typedef struct vpath_opts {
    float heuristic_weight;
    uint32_t max_nodes;
    bool cache, debug;
} vpath_opts;

static api_code decode_vpath(const json_t *root, vpath_opts *o, api_err *e) {
    double w = 1.0;
    uint64_t mn = 0;
    o->cache = true;
    o->debug = false;
    api_code c = api_obj_number(root, "", "heuristic_weight", false, 1.0, 1e6, &w, e);
    if (c == API_OK)
        c = api_obj_uint(root, "", "max_nodes", 1, UINT32_MAX, &mn, e);
    if (c == API_OK)
        c = api_obj_bool(root, "", "cache", &o->cache, e);
    if (c == API_OK)
        c = api_obj_bool(root, "", "debug", &o->debug, e);
    o->heuristic_weight = (float)w;
    o->max_nodes = (uint32_t)mn;
    return c;
}

static json_t *corners_json(const float *c, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, api_json_vec3(c + 3 * i));
    return a;
}

/* Expanded nodes as [min x, min y, min z, side] boxes, for the viewer. */
static json_t *expanded_json(const nav_vol *v, const uint32_t *ids, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        float lo[3], hi[3];
        nav_vol_node_box(v, ids[i], lo, hi);
        json_array_append_new(a, json_pack("[o,o,o,o]", api_json_num(lo[0]), api_json_num(lo[1]),
                                           api_json_num(lo[2]), api_json_num(hi[0] - lo[0])));
    }
    return a;
}

void api_h_volume_path(api_req *r) {
    json_t *root;
    api_vol_entry *ve = open_query(r, &root);
    if (!ve)
        return;
    const api_config *cfg = api_req_config(r);
    api_err e = {0};
    float ext[3], a[3], b[3];
    vpath_opts o;
    api_code c = decode_vpath(root, &o, &e);
    if (c == API_OK)
        c = get_extents(root, ext, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "start", ext, a, NULL, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "end", ext, b, NULL, &e);
    json_decref(root);
    vscratch *s = c == API_OK ? vscratch_get(cfg) : NULL;
    if (c == API_OK && !s)
        c = api_fail(&e, API_E_UNAVAILABLE, "out of memory; retry later");
    if (c != API_OK) {
        api_vol_entry_release(ve);
        api_reply_error(r, &e);
        return;
    }
    nav_vol_path_request req = {.heuristic_weight = o.heuristic_weight,
                                .max_nodes = o.max_nodes,
                                .corners = s->corners,
                                .max_corners = s->max_corners,
                                .expanded = o.debug ? s->expanded : NULL,
                                .max_expanded = o.debug ? s->max_expanded : 0};
    memcpy(req.start, a, sizeof a);
    memcpy(req.end, b, sizeof b);
    nav_vol_path_result res;
    nav_cache_result outcome = NAV_CACHE_BYPASS;
    nav_status st = nav_vol_path_cached(ve->vol, s->q, o.cache ? api_query_cache() : NULL, &req,
                                        &res, &outcome);
    if (st != NAV_OK) {
        api_vol_entry_release(ve);
        api_reply_fail(r, api_code_from_nav(st), "the path search failed: %s", nav_status_text(st));
        return;
    }
    const float *last = s->corners + 3 * (res.ncorners - 1);
    float dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    json_t *j = json_pack(
        "{s:s,s:o,s:o,s:o,s:o,s:o,s:I,s:s}", "status", res.complete ? "complete" : "partial",
        "start", api_json_vec3(a), "end", api_json_vec3(res.complete ? b : last), "corners",
        corners_json(s->corners, res.ncorners), "length", api_json_num(res.length), "straight_line",
        api_json_num(sqrt((double)dx * dx + (double)dy * dy + (double)dz * dz)), "nodes_expanded",
        (json_int_t)res.nodes_expanded, "cache", nav_cache_result_name(outcome));
    if (o.debug)
        json_object_set_new(j, "expanded", expanded_json(ve->vol, s->expanded, res.nexpanded));
    api_vol_entry_release(ve);
    api_reply_json(r, API_OK, j);
}

/* ---- raycast, nearest, reachable ---- */

void api_h_volume_raycast(api_req *r) {
    json_t *root;
    api_vol_entry *ve = open_query(r, &root);
    if (!ve)
        return;
    api_err e = {0};
    float ext[3], a[3], b[3];
    api_code c = get_extents(root, ext, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "start", ext, a, NULL, &e);
    if (c == API_OK)
        c = api_obj_vec3(root, "", "end", true, b, &e);
    json_decref(root);
    nav_vol_hit h;
    if (c == API_OK && nav_vol_raycast(ve->vol, a, b, &h) != NAV_OK)
        c = api_fail(&e, API_E_INTERNAL, "the raycast failed");
    api_vol_entry_release(ve);
    if (c != API_OK) {
        api_reply_error(r, &e);
        return;
    }
    json_t *j = json_pack("{s:b,s:o,s:o}", "hit", h.hit, "t", api_json_num(h.t), "point",
                          api_json_vec3(h.point));
    if (h.hit)
        json_object_set_new(j, "normal", api_json_vec3(h.normal));
    api_reply_json(r, API_OK, j);
}

void api_h_volume_nearest(api_req *r) {
    json_t *root;
    api_vol_entry *ve = open_query(r, &root);
    if (!ve)
        return;
    api_err e = {0};
    float ext[3], p[3], d = 0;
    api_code c = get_extents(root, ext, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "point", ext, p, &d, &e);
    json_decref(root);
    api_vol_entry_release(ve);
    if (c != API_OK) {
        api_reply_error(r, &e);
        return;
    }
    api_reply_json(r, API_OK,
                   json_pack("{s:o,s:o}", "point", api_json_vec3(p), "distance", api_json_num(d)));
}

void api_h_volume_reachable(api_req *r) {
    json_t *root;
    api_vol_entry *ve = open_query(r, &root);
    if (!ve)
        return;
    api_err e = {0};
    float ext[3], a[3], b[3];
    api_code c = get_extents(root, ext, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "start", ext, a, NULL, &e);
    if (c == API_OK)
        c = snap_field(ve->vol, root, "end", ext, b, NULL, &e);
    json_decref(root);
    bool reach = c == API_OK && nav_vol_component(ve->vol, a) == nav_vol_component(ve->vol, b);
    api_vol_entry_release(ve);
    if (c != API_OK) {
        api_reply_error(r, &e);
        return;
    }
    api_reply_json(r, API_OK, json_pack("{s:b}", "reachable", reach));
}
