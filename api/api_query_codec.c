/*
 * api_query_codec: query request decoding (see api_query_codec.h).
 */
#include "api/api_query_codec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_json.h"

void api_query_opts_default(api_query_opts *o) {
    static const float ext[3] = API_DEFAULT_EXTENTS;
    memset(o, 0, sizeof *o);
    memcpy(o->extents, ext, sizeof ext);
    nav_filter_default(&o->filter);
    o->max_nodes = 0;
    o->algorithm = NAV_ALGO_AUTO;
    o->cache = true;
    o->debug = false;
}

static const char *join(char *buf, size_t size, const char *where, const char *key) {
    return api_path(buf, size, "%s%s%s", where, *where ? "." : "", key);
}

static api_code decode_area_costs(const json_t *v, const char *w, nav_filter *f, api_err *e) {
    if (!json_is_object(v))
        return api_fail(e, API_E_BAD_REQUEST,
                        "%s must be an object mapping area ids to costs, like {\"1\": 2.5}", w);
    const char *key;
    const json_t *cost;
    json_object_foreach((json_t *)v, key, cost) {
        /* Keys are plain decimals: "1", never " 1", "+1", "\n1" or "01".
           strtol would read all of those as 1, so {"1": 2, "01": 3} named
           area 1 twice and one cost silently won. */
        size_t klen = strlen(key);
        int plain = klen >= 1 && klen <= 2 && key[0] >= '0' && key[0] <= '9' &&
                    (klen == 1 || (key[0] != '0' && key[1] >= '0' && key[1] <= '9'));
        long a = plain ? strtol(key, NULL, 10) : -1;
        if (!plain || a >= NAV_MAX_AREAS) {
            char shown[24];
            size_t k = 0;
            for (const char *p = key; *p && k + 1 < sizeof shown; p++)
                shown[k++] = (*p >= 0x20 && *p < 0x7f && *p != '"') ? *p : '?';
            shown[k] = '\0';
            return api_fail(e, API_E_BAD_REQUEST,
                            "%s has key \"%s\", not an area id from 0 to 63 written as a plain "
                            "decimal (no sign, space or leading zero)",
                            w, shown);
        }
        if (!json_is_number(cost) || !isfinite(json_number_value(cost)) ||
            json_number_value(cost) <= 0 || !isfinite((float)json_number_value(cost)))
            return api_fail(e, API_E_BAD_REQUEST, "%s[\"%s\"] must be a positive finite number", w,
                            key);
        /* Costs are 32-bit floats in nav/: one that rounds to 0 there
           (below about 1.4e-45) would fail the engine's filter check with
           no field named, so it is refused here, by name. */
        if (!((float)json_number_value(cost) > 0))
            return api_fail(e, API_E_BAD_REQUEST,
                            "%s[\"%s\"] is too small: it rounds to 0 as a 32-bit float", w, key);
        f->area_cost[a] = (float)json_number_value(cost);
    }
    return API_OK;
}

static api_code decode_exclude(const json_t *v, const char *w, nav_filter *f, api_err *e) {
    if (!json_is_array(v))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be an array of area ids from 0 to 63", w);
    f->exclude_mask = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        char iw[160];
        int64_t a;
        api_code c =
            api_json_int_range(json_array_get(v, i), api_path(iw, sizeof iw, "%s[%zu]", w, i), 0,
                               NAV_MAX_AREAS - 1, &a, API_E_BAD_REQUEST, e);
        if (c != API_OK)
            return c;
        f->exclude_mask |= 1ull << a;
    }
    return API_OK;
}

api_code api_decode_search_opts(const json_t *obj, const char *where, nav_filter *filter,
                                uint32_t *max_nodes, api_err *e) {
    char w[160];
    api_code c;
    const json_t *v;
    if ((v = json_object_get(obj, "area_costs")) && !json_is_null(v) &&
        (c = decode_area_costs(v, join(w, sizeof w, where, "area_costs"), filter, e)) != API_OK)
        return c;
    if ((v = json_object_get(obj, "exclude_areas")) && !json_is_null(v) &&
        (c = decode_exclude(v, join(w, sizeof w, where, "exclude_areas"), filter, e)) != API_OK)
        return c;
    uint64_t nodes = *max_nodes;
    if ((c = api_obj_uint(obj, where, "max_nodes", 1, UINT32_MAX, &nodes, e)) != API_OK)
        return c;
    *max_nodes = (uint32_t)nodes;
    return API_OK;
}

api_code api_decode_query_opts(const json_t *obj, const char *where, api_query_opts *o,
                               api_err *e) {
    char w[160];
    api_code c;
    if (!json_is_object(obj))
        return *where ? api_fail(e, API_E_BAD_REQUEST, "%s must be an object", where)
                      : api_fail(e, API_E_BAD_REQUEST, "the request body must be a JSON object");
    const json_t *v = json_object_get(obj, "extents");
    if (v && !json_is_null(v)) {
        if ((c = api_json_get_vec3(v, join(w, sizeof w, where, "extents"), o->extents,
                                   API_E_BAD_REQUEST, e)) != API_OK)
            return c;
        for (int i = 0; i < 3; i++)
            if (o->extents[i] < 0)
                return api_fail(e, API_E_BAD_REQUEST, "%s[%d] must not be negative", w, i);
    }
    if ((c = api_decode_search_opts(obj, where, &o->filter, &o->max_nodes, e)) != API_OK)
        return c;
    if ((v = json_object_get(obj, "algorithm")) && !json_is_null(v)) {
        const char *s = json_string_value(v);
        if (s && !strcmp(s, "auto"))
            o->algorithm = NAV_ALGO_AUTO;
        else if (s && !strcmp(s, "optimal"))
            o->algorithm = NAV_ALGO_OPTIMAL;
        else if (s && !strcmp(s, "corridor"))
            o->algorithm = NAV_ALGO_CORRIDOR;
        else
            return api_fail(e, API_E_BAD_REQUEST,
                            "%s must be \"auto\", \"optimal\" or \"corridor\"",
                            join(w, sizeof w, where, "algorithm"));
    }
    if ((c = api_obj_bool(obj, where, "cache", &o->cache, e)) != API_OK)
        return c;
    if ((c = api_decode_profile(obj, where, o->profile, e)) != API_OK)
        return c;
    return api_obj_bool(obj, where, "debug", &o->debug, e);
}

api_code api_decode_profile(const json_t *obj, const char *where, char *profile, api_err *e) {
    char w[160];
    const json_t *v = json_object_get(obj, "profile");
    if (!v || json_is_null(v))
        return API_OK;
    const char *s = json_string_value(v);
    if (!s || !api_profile_name_ok(s))
        return api_fail(e, API_E_BAD_REQUEST,
                        "%s must be a profile name (1-64 of A-Z a-z 0-9 _ . -)",
                        join(w, sizeof w, where, "profile"));
    snprintf(profile, API_PROFILE_NAME_MAX + 1, "%s", s);
    return API_OK;
}

api_code api_decode_path(const json_t *obj, const char *where, const api_query_opts *base,
                         api_path_query *out, api_err *e) {
    api_code c;
    memset(out, 0, sizeof *out);
    out->opts = *base;
    if ((c = api_decode_query_opts(obj, where, &out->opts, e)) != API_OK)
        return c;
    if ((c = api_obj_vec3(obj, where, "start", true, out->start, e)) != API_OK)
        return c;
    return api_obj_vec3(obj, where, "end", true, out->end, e);
}

api_code api_decode_paths(const json_t *obj, api_query_opts *base, const json_t **queries,
                          api_err *e) {
    api_query_opts_default(base);
    *queries = NULL;
    api_code c = api_decode_query_opts(obj, "", base, e);
    if (c != API_OK)
        return c;
    const json_t *q = json_object_get(obj, "queries");
    if (!json_is_array(q))
        return api_fail(e, API_E_BAD_REQUEST, "queries is required: an array of {start, end}");
    *queries = q;
    return API_OK;
}

api_code api_decode_point_text(const char *text, const char *what, float p[3], api_err *e) {
    if (!text)
        return api_fail(e, API_E_BAD_REQUEST, "%s is required (as x,y,z)", what);
    const char *s = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        double d = strtod(s, &end);
        if (end == s || errno || !isfinite(d) || !isfinite((float)d) ||
            *end != (i < 2 ? ',' : '\0'))
            return api_fail(e, API_E_BAD_REQUEST, "%s must be x,y,z with 3 finite numbers", what);
        p[i] = (float)d;
        s = end + 1;
    }
    return API_OK;
}

void api_path_request(const api_path_query *q, nav_path_request *req) {
    memset(req, 0, sizeof *req);
    memcpy(req->start, q->start, sizeof req->start);
    memcpy(req->end, q->end, sizeof req->end);
    memcpy(req->extents, q->opts.extents, sizeof req->extents);
    req->filter = &q->opts.filter;
    req->max_nodes = q->opts.max_nodes;
    req->algorithm = q->opts.algorithm;
}

api_code api_decode_nearest(const json_t *obj, api_nearest_query *out, api_err *e) {
    api_code c;
    memset(out, 0, sizeof *out);
    api_query_opts_default(&out->opts);
    if ((c = api_decode_query_opts(obj, "", &out->opts, e)) != API_OK)
        return c;
    return api_obj_vec3(obj, "", "point", true, out->point, e);
}

api_code api_decode_raycast(const json_t *obj, api_path_query *out, api_err *e) {
    api_query_opts base;
    api_query_opts_default(&base);
    return api_decode_path(obj, "", &base, out, e);
}

api_code api_decode_reachable(const json_t *obj, api_reach_query *out, api_err *e) {
    api_code c;
    memset(out, 0, sizeof *out);
    api_query_opts_default(&out->opts);
    if ((c = api_decode_query_opts(obj, "", &out->opts, e)) != API_OK)
        return c;
    if ((c = api_obj_vec3(obj, "", "start", true, out->start, e)) != API_OK)
        return c;
    const json_t *end = json_object_get(obj, "end");
    const json_t *cost = json_object_get(obj, "max_cost");
    bool has_end = end && !json_is_null(end), has_cost = cost && !json_is_null(cost);
    if (has_end && has_cost)
        return api_fail(e, API_E_BAD_REQUEST, "give either end or max_cost, not both");
    if (!has_end && !has_cost)
        return api_fail(e, API_E_BAD_REQUEST, "end or max_cost is required");
    if (has_end)
        return api_obj_vec3(obj, "", "end", true, out->end, e);
    out->by_cost = true;
    return api_obj_number(obj, "", "max_cost", true, 0, HUGE_VAL, &out->max_cost, e);
}
