/*
 * api_query_codec: decoding of the query request bodies (path, paths,
 * nearest, raycast, reachable) into nav/ request structures, with every
 * field validated and named in errors ("queries[3].start[1] is not a
 * finite number"). Kept apart from the handlers so the data-driven codec
 * tests (tests/check_api_codec.c) exercise it without a server.
 */
#ifndef API_QUERY_CODEC_H
#define API_QUERY_CODEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/api_error.h"
#include "api/api_profiles.h"
#include "nav/nav_query.h"

#define API_DEFAULT_EXTENTS                                                                        \
    { 2.0f, 4.0f, 2.0f }

/* Options shared by the query endpoints; api_query_opts_default gives the contract's defaults. */
typedef struct api_query_opts {
    float extents[3];                       /* snapping half-box, default [2, 4, 2] */
    nav_filter filter;                      /* area_costs (default 1) and exclude_areas */
    uint32_t max_nodes;                     /* search budget; 0 = the server's pool (--max-nodes) */
    nav_algo algorithm;                     /* "auto" (default), "optimal" or "corridor" */
    bool cache;                             /* default true */
    bool debug;                             /* path: also return the expanded polygons */
    char profile[API_PROFILE_NAME_MAX + 1]; /* agent profile; "" = the navmesh's first */
} api_query_opts;

void api_query_opts_default(api_query_opts *o);

/*
 * Reads the optional fields extents, area_costs, exclude_areas, max_nodes,
 * algorithm, cache, debug and profile of `obj` (named `where`, "" for the body) over
 * the values already in *o, so a batch's shared options can be refined per
 * query.
 */
api_code api_decode_query_opts(const json_t *obj, const char *where, api_query_opts *o, api_err *e);

/*
 * Reads only the search options area_costs, exclude_areas and max_nodes of
 * `obj` over *filter / *max_nodes (the part of api_decode_query_opts that
 * the `step` endpoint shares with the path queries: one codec, the same
 * errors).
 */
api_code api_decode_search_opts(const json_t *obj, const char *where, nav_filter *filter,
                                uint32_t *max_nodes, api_err *e);

/*
 * Reads the optional "profile" of obj (a profile name string) into
 * profile (API_PROFILE_NAME_MAX + 1 bytes), leaving it as it is when
 * absent or null. Shared by the queries and `step`.
 */
api_code api_decode_profile(const json_t *obj, const char *where, char *profile, api_err *e);

/* A path query: start and end (required) plus options. */
typedef struct api_path_query {
    float start[3], end[3];
    api_query_opts opts;
} api_path_query;

api_code api_decode_path(const json_t *obj, const char *where, const api_query_opts *base,
                         api_path_query *out, api_err *e);

/*
 * The batch body of POST .../paths: shared options into *base and the
 * borrowed `queries` array (each entry decoded later with api_decode_path
 * and where = "queries[i]", so one bad query fails only its own slot).
 */
api_code api_decode_paths(const json_t *obj, api_query_opts *base, const json_t **queries,
                          api_err *e);

/* "x,y,z" (GET form) into p; `what` names the parameter. */
api_code api_decode_point_text(const char *text, const char *what, float p[3], api_err *e);

/* The nav_path_request for q (filter points into q). */
void api_path_request(const api_path_query *q, nav_path_request *req);

/* nearest: point (required), extents, exclude_areas. */
typedef struct api_nearest_query {
    float point[3];
    api_query_opts opts;
} api_nearest_query;
api_code api_decode_nearest(const json_t *obj, api_nearest_query *out, api_err *e);

/* raycast: start, end (required) + options (filter, extents). */
api_code api_decode_raycast(const json_t *obj, api_path_query *out, api_err *e);

/* reachable: start plus either end or max_cost. */
typedef struct api_reach_query {
    float start[3], end[3];
    bool by_cost; /* true: max_cost form */
    double max_cost;
    api_query_opts opts;
} api_reach_query;
api_code api_decode_reachable(const json_t *obj, api_reach_query *out, api_err *e);

#endif
