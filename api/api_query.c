/*
 * api_query: the query endpoints, POST/GET .../path, POST .../paths,
 * .../nearest, .../raycast and .../reachable, on top of nav_query.h, and
 * the per-thread scratch and path cache they share (see api_query.h).
 *
 * Each handler: decode (api_query_codec), take a reference on the current
 * mesh version, run nav/ with this thread's scratch, encode, release. A
 * replace during the query does not affect it: it holds its version.
 */
#include "api/api_query.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_cache_hook.h"
#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_log.h"
#include "api/api_query_codec.h"

/* nav/ marks "no polygon" with UINT32_MAX (NAV_NONE, private to nav/). */
#define NO_POLY UINT32_MAX

static pthread_key_t scratch_key;
static int key_ready;
static uint32_t pool_nodes;
static nav_cache *cache;

static void scratch_free(void *p) {
    api_scratch *s = p;
    if (!s)
        return;
    nav_query_free(s->q);
    free(s->corners);
    free(s->polys);
    free(s->links);
    free(s->expanded);
    free(s);
}

static void cache_stats(void *ctx, api_cache_stats *out) {
    nav_cache_stats st;
    nav_cache_stats_get(ctx, &st);
    out->hits = st.hits;
    out->misses = st.misses;
    out->evictions = st.evictions;
    out->entries = st.entries;
    out->bytes = st.bytes;
}

int api_query_init(const api_config *cfg) {
    pool_nodes = cfg->max_nodes ? cfg->max_nodes : 65536;
    if (!key_ready && pthread_key_create(&scratch_key, scratch_free) != 0)
        return -1;
    key_ready = 1;
    if (cfg->cache_bytes > 0) {
        cache = nav_cache_new(cfg->cache_bytes, 0);
        if (!cache)
            return -1;
        api_cache_hook_set(cache_stats, cache);
    }
    return 0;
}

void api_query_shutdown(void) {
    api_cache_hook_set(NULL, NULL);
    nav_cache_free(cache);
    cache = NULL;
    if (key_ready) {
        /* Worker threads have exited (their destructors ran); the main thread
           never queries, so nothing is left behind the key. */
        pthread_key_delete(scratch_key);
        key_ready = 0;
    }
}

nav_cache *api_query_cache(void) {
    return cache;
}

api_scratch *api_query_scratch(void) {
    api_scratch *s = pthread_getspecific(scratch_key);
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* A corridor can hold at most one polygon per expanded node (+ the start),
       and each polygon adds at most two corners (a link's ends). */
    s->max_polys = pool_nodes + 2;
    s->max_links = pool_nodes + 2;
    s->max_corners = 2 * pool_nodes + 4;
    s->max_expanded = pool_nodes;
    s->q = nav_query_new(pool_nodes);
    s->polys = malloc(s->max_polys * sizeof *s->polys);
    s->links = malloc(s->max_links * sizeof *s->links);
    s->corners = malloc(3 * (size_t)s->max_corners * sizeof *s->corners);
    s->expanded = malloc(s->max_expanded * sizeof *s->expanded);
    if (!s->q || !s->polys || !s->links || !s->corners || !s->expanded ||
        pthread_setspecific(scratch_key, s) != 0) {
        scratch_free(s);
        return NULL;
    }
    return s;
}

/* ---- encoding helpers ---- */

static json_t *ids_json(const uint32_t *ids, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(ids[i]));
    return a;
}

static const char *algo_name(nav_algo a) {
    return a == NAV_ALGO_CORRIDOR ? "corridor" : "optimal";
}

static void jw_ids(api_jw *w, const uint32_t *ids, uint32_t n) {
    api_jw_lit(w, "[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            api_jw_lit(w, ",");
        api_jw_uint(w, ids[i]);
    }
    api_jw_lit(w, "]");
}

/*
 * The error for a failed nav/ call, one wording for every query: when `off`
 * names the point that failed to snap (and st says so) "<off> is not within
 * extents", otherwise "the <what> failed: <status>". `slot` is "" or a batch
 * slot ("queries[2]"): it prefixes a point name as a field path
 * ("queries[2].end is not within ...") and is named inside the sentence
 * otherwise ("the path query in queries[2] failed: ..."), since the engine's
 * status names no field. Returns the code, like api_fail.
 */
api_code api_nav_fail(api_err *e, nav_status st, const char *slot, const char *off,
                      const char *what) {
    if (off && st == NAV_E_OFF_MESH)
        return api_fail(e, API_E_POINT_OFF_MESH, "%s%s%s is not within extents of the navmesh",
                        slot, *slot ? "." : "", off);
    return api_fail(e, api_code_from_nav(st), "the %s%s%s failed: %s", what, *slot ? " in " : "",
                    slot, nav_status_text(st));
}

/* Answers the error api_nav_fail words (no batch slot). */
static void reply_nav_fail(api_req *r, nav_status st, const char *off, const char *what) {
    api_err e = {0};
    api_nav_fail(&e, st, "", off, what);
    api_reply_error(r, &e);
}

/*
 * Runs one path query and appends its response object to w, or fills e and
 * appends nothing. `slot` names the batch slot in errors ("queries[2]", or
 * "" for a single query; see api_nav_fail).
 * Written with the direct writer (api_jw): this is the hottest response.
 */
/* Expanded polygon ids a whole `paths` batch may return with "debug": 1,000
   debug queries on a large mesh once turned 0.11 MB of request into 158 MB
   of response. Past it a slot says "expanded_omitted": true instead. */
#define API_BATCH_DEBUG_IDS 100000u

static api_code run_path(api_scratch *s, const nav_mesh *m, const api_path_query *pq,
                         const char *slot, api_jw *w, api_err *e, size_t *debug_left) {
    nav_path_request req;
    api_path_request(pq, &req);
    nav_path_result res;
    memset(&res, 0, sizeof res);
    res.corners = s->corners;
    res.max_corners = s->max_corners;
    res.polys = s->polys;
    res.max_polys = s->max_polys;
    res.links = s->links;
    res.max_links = s->max_links;
    if (pq->opts.debug) {
        res.expanded = s->expanded;
        res.max_expanded = s->max_expanded;
    }
    nav_cache_result outcome = NAV_CACHE_BYPASS;
    nav_cache *c = pq->opts.cache ? cache : NULL;
    nav_status st = nav_find_path_cached(s->q, c, m, &req, &res, &outcome);
    if (st != NAV_OK)
        return api_nav_fail(e, st, slot, res.start_poly == NO_POLY ? "start" : "end", "path query");
    bool partial = res.flags & (NAV_PATH_PARTIAL_UNREACHABLE | NAV_PATH_PARTIAL_BUDGET);
    const char *cache_word = !pq->opts.cache             ? "bypass"
                             : outcome == NAV_CACHE_HIT  ? "hit"
                             : outcome == NAV_CACHE_MISS ? "miss"
                                                         : "bypass";
    api_jw_lit(w, "{\"status\":");
    api_jw_str(w, partial ? "partial" : "complete");
    api_jw_lit(w, ",\"start\":");
    api_jw_vec3(w, res.start);
    api_jw_lit(w, ",\"end\":");
    api_jw_vec3(w, res.end);
    api_jw_lit(w, ",\"corners\":[");
    for (uint32_t i = 0; i < res.ncorners; i++) {
        if (i)
            api_jw_lit(w, ",");
        api_jw_vec3(w, &res.corners[3 * i]);
    }
    api_jw_lit(w, "],\"polygons\":");
    jw_ids(w, res.polys, res.npolys);
    api_jw_lit(w, ",\"length\":");
    api_jw_num(w, res.length);
    api_jw_lit(w, ",\"links\":[");
    for (uint32_t i = 0; i < res.nlinks; i++) {
        if (i)
            api_jw_lit(w, ",");
        api_jw_lit(w, "{\"index\":");
        api_jw_uint(w, res.links[i]);
        api_jw_lit(w, ",\"kind\":");
        api_jw_str(w, nav_mesh_link_kind(m, res.links[i]));
        api_jw_lit(w, "}");
    }
    api_jw_lit(w, "],\"algorithm\":");
    api_jw_str(w, algo_name(res.algorithm));
    api_jw_lit(w, ",\"cache\":");
    api_jw_str(w, cache_word);
    api_jw_lit(w, ",\"nodes_expanded\":");
    api_jw_uint(w, res.nodes_expanded);
    if (partial) {
        api_jw_lit(w, ",\"reason\":");
        api_jw_str(w, res.flags & NAV_PATH_PARTIAL_BUDGET ? "max_nodes" : "unreachable");
    }
    if (res.flags & NAV_PATH_TRUNCATED)
        api_jw_lit(w, ",\"truncated\":true");
    if (pq->opts.debug && debug_left && res.nexpanded > *debug_left) {
        api_jw_lit(w, ",\"expanded_omitted\":true");
    } else if (pq->opts.debug) {
        api_jw_lit(w, ",\"expanded\":");
        jw_ids(w, res.expanded, res.nexpanded);
        if (debug_left)
            *debug_left -= res.nexpanded;
    }
    api_jw_lit(w, "}");
    return API_OK;
}

static void reply_jw(api_req *r, api_jw *w) {
    size_t len = 0;
    char *text = api_jw_finish(w, &len);
    if (!text)
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while encoding the response");
    else
        api_reply_raw(r, API_OK, "application/json", text, len);
}

/* Common prologue: parse the JSON body. NULL when answered. */
static json_t *body_json(api_req *r) {
    size_t len;
    const char *body = api_req_body(r, &len, NULL);
    api_err e = {0};
    json_t *j = api_json_parse(body, len, &e);
    if (!j)
        api_reply_error(r, &e);
    return j;
}

/* One endpoint's body decoder (api_query_codec), `out` being its query struct. */
typedef api_code (*body_decoder)(const json_t *j, void *out, api_err *e);

static api_code decode_path_body(const json_t *j, void *out, api_err *e) {
    api_query_opts base;
    api_query_opts_default(&base);
    return api_decode_path(j, "", &base, out, e);
}

static api_code decode_nearest_body(const json_t *j, void *out, api_err *e) {
    return api_decode_nearest(j, out, e);
}

static api_code decode_raycast_body(const json_t *j, void *out, api_err *e) {
    return api_decode_raycast(j, out, e);
}

static api_code decode_reachable_body(const json_t *j, void *out, api_err *e) {
    return api_decode_reachable(j, out, e);
}

/*
 * The prologue every single-query POST handler shares: parse the body and
 * decode it into `out`. False once it has answered with the parse or decode
 * error, so the handler only states what differs.
 */
static bool decode_body(api_req *r, body_decoder decode, void *out) {
    json_t *j = body_json(r);
    if (!j)
        return false;
    api_err e = {0};
    api_code c = decode(j, out, &e);
    json_decref(j);
    if (c != API_OK) {
        api_reply_error(r, &e);
        return false;
    }
    return true;
}

/*
 * Takes what a query runs on, in the order the client sees its failures:
 * this thread's scratch first (503 when it cannot be allocated; skipped when
 * `s` is NULL, for queries that need none), then a reference on the current
 * mesh (404). NULL once answered; otherwise release the entry.
 */
static api_entry *begin_query(api_req *r, api_scratch **s) {
    if (s) {
        *s = api_query_scratch();
        if (!*s) {
            api_reply_fail(r, API_E_UNAVAILABLE, "out of memory for the search; retry later");
            return NULL;
        }
    }
    return api_req_mesh(r);
}

/*
 * The mesh of the query's profile in ent. An unknown profile is the
 * client's mistake (400 naming it): the entry is released and NULL returned
 * once answered.
 */
static const nav_mesh *profile_mesh(api_req *r, api_entry *ent, const char *profile) {
    const nav_mesh *m = api_entry_profile(ent, profile);
    if (!m) {
        api_reply_fail(r, API_E_BAD_REQUEST, "profile '%s' does not exist in navmesh '%s'", profile,
                       ent->meta.name);
        api_entry_release(ent);
    }
    return m;
}

/* decode_body, then begin_query: a single-query POST handler's whole prologue. */
static api_entry *open_query(api_req *r, body_decoder decode, void *out, api_scratch **s) {
    return decode_body(r, decode, out) ? begin_query(r, s) : NULL;
}

static void answer_path(api_req *r, const api_path_query *pq) {
    api_scratch *s = NULL;
    api_entry *ent = begin_query(r, &s);
    if (!ent)
        return;
    const nav_mesh *m = profile_mesh(r, ent, pq->opts.profile);
    if (!m)
        return;
    api_err e = {0};
    api_jw w;
    api_jw_init(&w, 1024);
    api_code c = run_path(s, m, pq, "", &w, &e, NULL);
    api_entry_release(ent);
    if (c == API_OK) {
        reply_jw(r, &w);
    } else {
        free(api_jw_finish(&w, &(size_t){0}));
        api_reply_error(r, &e);
    }
}

void api_h_path(api_req *r) {
    api_path_query pq;
    if (decode_body(r, decode_path_body, &pq))
        answer_path(r, &pq);
}

/* GET .../path?start=x,y,z&end=x,y,z[&extents=hx,hy,hz][&cache=false][&max_nodes=N][&debug=true] */
void api_h_path_get(api_req *r) {
    api_path_query pq;
    memset(&pq, 0, sizeof pq);
    api_query_opts_default(&pq.opts);
    api_err e = {0};
    const char *v;
    if (api_decode_point_text(api_req_arg(r, "start"), "start", pq.start, &e) != API_OK ||
        api_decode_point_text(api_req_arg(r, "end"), "end", pq.end, &e) != API_OK ||
        ((v = api_req_arg(r, "extents")) &&
         api_decode_point_text(v, "extents", pq.opts.extents, &e) != API_OK)) {
        api_reply_error(r, &e);
        return;
    }
    if (pq.opts.extents[0] < 0 || pq.opts.extents[1] < 0 || pq.opts.extents[2] < 0) {
        api_reply_fail(r, API_E_BAD_REQUEST, "extents must not be negative");
        return;
    }
    if ((v = api_req_arg(r, "profile"))) {
        if (!api_profile_name_ok(v)) {
            api_reply_fail(r, API_E_BAD_REQUEST,
                           "profile must be a profile name (1-64 of A-Z a-z 0-9 _ . -)");
            return;
        }
        snprintf(pq.opts.profile, sizeof pq.opts.profile, "%s", v);
    }
    const char *flags[] = {"cache", "debug"};
    bool *dst[] = {&pq.opts.cache, &pq.opts.debug};
    for (int i = 0; i < 2; i++)
        if ((v = api_req_arg(r, flags[i]))) {
            if (strcmp(v, "true") && strcmp(v, "false")) {
                api_reply_fail(r, API_E_BAD_REQUEST, "%s must be true or false", flags[i]);
                return;
            }
            *dst[i] = !strcmp(v, "true");
        }
    if ((v = api_req_arg(r, "max_nodes"))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || *v == '-' || n < 1 || n > UINT32_MAX) {
            api_reply_fail(r, API_E_BAD_REQUEST, "max_nodes must be a positive integer");
            return;
        }
        pq.opts.max_nodes = (uint32_t)n;
    }
    answer_path(r, &pq);
}

void api_h_paths(api_req *r) {
    json_t *j = body_json(r);
    if (!j)
        return;
    api_err e = {0};
    api_query_opts base;
    const json_t *queries;
    if (api_decode_paths(j, &base, &queries, &e) != API_OK) {
        json_decref(j);
        api_reply_error(r, &e);
        return;
    }
    size_t n = json_array_size(queries);
    unsigned max = api_req_config(r)->max_batch;
    if (n > max) {
        json_decref(j);
        api_reply_fail(r, API_E_PAYLOAD_TOO_LARGE,
                       "queries has %zu entries, more than the limit of %u per request", n, max);
        return;
    }
    api_scratch *s = NULL;
    api_entry *ent = begin_query(r, &s);
    if (!ent) {
        json_decref(j);
        return;
    }
    api_jw w;
    api_jw_init(&w, 512 * (n + 1));
    api_jw_lit(&w, "{\"results\":[");
    /* Past the request deadline the remaining slots are not searched: each
       says so, and the finished ones are kept (a batch is never all or
       nothing). Slot 0 always runs. */
    double deadline = api_req_deadline(r);
    int late = 0;
    size_t debug_left = API_BATCH_DEBUG_IDS;
    for (size_t i = 0; i < n; i++) {
        char where[48];
        api_path(where, sizeof where, "queries[%zu]", i);
        api_path_query pq;
        if (i)
            api_jw_lit(&w, ",");
        if (!late && i > 0 && deadline > 0 && api_mono_now() > deadline)
            late = 1;
        api_code c = late ? api_fail(&e, API_E_UNAVAILABLE,
                                     "%s was not run: the request deadline of %u ms "
                                     "(--request-deadline-ms) was reached first",
                                     where, api_req_config(r)->request_deadline_ms)
                          : api_decode_path(json_array_get(queries, i), where, &base, &pq, &e);
        const nav_mesh *m = c == API_OK ? api_entry_profile(ent, pq.opts.profile) : NULL;
        if (c == API_OK && !m)
            c = api_fail(&e, API_E_BAD_REQUEST, "%s.profile '%s' does not exist in navmesh '%s'",
                         where, pq.opts.profile, ent->meta.name);
        if (c == API_OK)
            c = run_path(s, m, &pq, where, &w, &e, &debug_left);
        if (c != API_OK) {
            /* this query's error in its own slot; the others are still answered */
            api_jw_lit(&w, "{\"error\":{\"code\":");
            api_jw_str(&w, api_code_name(e.code));
            api_jw_lit(&w, ",\"message\":");
            api_jw_str(&w, e.message);
            api_jw_lit(&w, "}}");
        }
    }
    api_jw_lit(&w, "]}");
    api_entry_release(ent);
    json_decref(j);
    reply_jw(r, &w);
}

void api_h_nearest(api_req *r) {
    api_nearest_query nq;
    api_entry *ent = open_query(r, decode_nearest_body, &nq, NULL);
    if (!ent)
        return;
    const nav_mesh *m = profile_mesh(r, ent, nq.opts.profile);
    if (!m)
        return;
    uint32_t poly = NO_POLY;
    float p[3];
    nav_status st =
        nav_mesh_nearest(m, nq.point, nq.opts.extents, nq.opts.filter.exclude_mask, &poly, p);
    api_entry_release(ent);
    if (st != NAV_OK) {
        reply_nav_fail(r, st, "point", "nearest query");
        return;
    }
    double dx = (double)p[0] - nq.point[0], dy = (double)p[1] - nq.point[1],
           dz = (double)p[2] - nq.point[2];
    api_reply_json(r, API_OK,
                   json_pack("{s:o,s:I,s:o}", "point", api_json_vec3(p), "polygon",
                             (json_int_t)poly, "distance",
                             api_json_num(sqrt(dx * dx + dy * dy + dz * dz))));
}

void api_h_raycast(api_req *r) {
    api_path_query rq;
    api_scratch *s = NULL;
    api_entry *ent = open_query(r, decode_raycast_body, &rq, &s);
    if (!ent)
        return;
    const nav_mesh *m = profile_mesh(r, ent, rq.opts.profile);
    if (!m)
        return;
    uint32_t poly = NO_POLY;
    float start[3];
    nav_status st =
        nav_mesh_nearest(m, rq.start, rq.opts.extents, rq.opts.filter.exclude_mask, &poly, start);
    nav_raycast_result res;
    memset(&res, 0, sizeof res);
    res.polys = s->polys;
    res.max_polys = s->max_polys;
    if (st == NAV_OK)
        st = nav_raycast(m, poly, start, rq.end, &rq.opts.filter, &res);
    api_entry_release(ent);
    if (st != NAV_OK) {
        /* only the start is snapped; the ray walks toward the raw end */
        reply_nav_fail(r, st, "start", "raycast");
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "hit", json_boolean(res.hit));
    json_object_set_new(o, "t", api_json_num(res.t));
    json_object_set_new(o, "start", api_json_vec3(start));
    json_object_set_new(o, "point", api_json_vec3(res.point));
    if (res.hit)
        json_object_set_new(o, "normal", api_json_vec3(res.normal));
    json_object_set_new(o, "polygons", ids_json(res.polys, res.npolys));
    if (res.truncated)
        json_object_set_new(o, "truncated", json_true());
    api_reply_json(r, API_OK, o);
}

void api_h_reachable(api_req *r) {
    api_reach_query rq;
    api_scratch *s = NULL;
    api_entry *ent = open_query(r, decode_reachable_body, &rq, &s);
    if (!ent)
        return;
    const nav_mesh *m = profile_mesh(r, ent, rq.opts.profile);
    if (!m)
        return;
    uint32_t a = NO_POLY, b = NO_POLY;
    float sa[3], sb[3];
    json_t *o = NULL;
    const char *off = NULL;
    /* The end form answers from components precomputed over the whole mesh,
       so it ignores the filter entirely: start and end snap to any polygon,
       excluded areas included (snapping around them would be half a filter). */
    uint64_t snap_mask = rq.by_cost ? rq.opts.filter.exclude_mask : 0;
    nav_status st = nav_mesh_nearest(m, rq.start, rq.opts.extents, snap_mask, &a, sa);
    if (st == NAV_E_OFF_MESH)
        off = "start";
    if (st == NAV_OK && !rq.by_cost) {
        st = nav_mesh_nearest(m, rq.end, rq.opts.extents, 0, &b, sb);
        if (st == NAV_E_OFF_MESH)
            off = "end";
        else if (st == NAV_OK)
            o = json_pack("{s:b,s:I,s:I}", "reachable", (int)nav_mesh_reachable(m, a, b),
                          "start_polygon", (json_int_t)a, "end_polygon", (json_int_t)b);
    } else if (st == NAV_OK) {
        uint32_t n = 0;
        double area = 0;
        bool truncated = false;
        st = nav_reach_cost(s->q, m, a, sa, rq.max_cost, &rq.opts.filter, s->polys, s->max_polys,
                            &n, &area, &truncated);
        if (st == NAV_OK) {
            o = json_pack("{s:o,s:o}", "polygons", ids_json(s->polys, n), "area",
                          api_json_num(area));
            if (truncated)
                json_object_set_new(o, "truncated", json_true());
        }
    }
    api_entry_release(ent);
    /* off stays NULL when the cost search itself refuses the start
       (impassable area): that is a failed query, not a point off the mesh. */
    if (st != NAV_OK)
        reply_nav_fail(r, st, off, "reachability query");
    else
        api_reply_json(r, API_OK, o);
}
