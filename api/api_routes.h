/*
 * api_routes: the declarative route table of the HTTP API.
 *
 * One row per (method, path pattern): the route's id, its handler and the
 * flags the dispatcher checks before the handler runs (see api_internal.h:
 * API_R_AUTH write route, API_R_JSON / API_R_MESH body content types,
 * API_R_WRITE run on the writer thread instead of the HTTP worker, API_R_POOL
 * on the query pool: the routes whose work grows with the request).
 * A pattern segment "{name}" matches one path segment, validated as a
 * navmesh name before the handler runs (400 bad_request otherwise).
 *
 * HOW TO ADD A ROUTE: write `void api_h_<x>(api_req *r)` in your own
 * api/api_<x>.c (decode, call nav_, encode, reply with api_reply_*), then
 * add ONE row below. The handler prototype, dispatch, 404/405/415/401/400
 * checks, metrics and logging all come from this row. Rows with the same
 * pattern share one Allow header. Keep rows of one pattern together.
 */
#ifndef API_ROUTES_H
#define API_ROUTES_H

/* X(id, method, pattern, handler, flags) */
#define API_ROUTE_LIST(X)                                                                          \
    X(VIEWER, "GET", "/", api_h_viewer, 0)                                                         \
    X(VIEWER_FILE, "GET", "/viewer/{name}", api_h_viewer, 0)                                       \
    X(HEALTH, "GET", "/health", api_h_health, 0)                                                   \
    X(METRICS, "GET", "/metrics", api_h_metrics, 0)                                                \
    X(MESH_LIST, "GET", "/v1/navmeshes", api_h_mesh_list, 0)                                       \
    X(MESH_GET, "GET", "/v1/navmeshes/{name}", api_h_mesh_get, API_R_POOL)                         \
    X(MESH_PUT, "PUT", "/v1/navmeshes/{name}", api_h_mesh_put,                                     \
      API_R_AUTH | API_R_MESH | API_R_WRITE)                                                       \
    X(MESH_DELETE, "DELETE", "/v1/navmeshes/{name}", api_h_mesh_delete, API_R_AUTH | API_R_WRITE)  \
    X(PATH, "POST", "/v1/navmeshes/{name}/path", api_h_path, API_R_JSON)                           \
    X(PATH_GET, "GET", "/v1/navmeshes/{name}/path", api_h_path_get, 0)                             \
    X(PATHS, "POST", "/v1/navmeshes/{name}/paths", api_h_paths, API_R_JSON | API_R_POOL)           \
    X(NEAREST, "POST", "/v1/navmeshes/{name}/nearest", api_h_nearest, API_R_JSON)                  \
    X(RAYCAST, "POST", "/v1/navmeshes/{name}/raycast", api_h_raycast, API_R_JSON)                  \
    X(REACHABLE, "POST", "/v1/navmeshes/{name}/reachable", api_h_reachable, API_R_JSON)            \
    X(STEP, "POST", "/v1/navmeshes/{name}/step", api_h_step, API_R_JSON | API_R_POOL)              \
    X(LEVEL_LIST, "GET", "/v1/levels", api_h_level_list, API_R_POOL)                               \
    X(LEVEL_GET, "GET", "/v1/levels/{name}", api_h_level_get, API_R_POOL)                          \
    X(LEVEL_PUT, "PUT", "/v1/levels/{name}", api_h_level_put,                                      \
      API_R_AUTH | API_R_MESH | API_R_WRITE)                                                       \
    X(LEVEL_DELETE, "DELETE", "/v1/levels/{name}", api_h_level_delete, API_R_AUTH | API_R_WRITE)   \
    X(BAKE, "POST", "/v1/navmeshes/{name}/bake", api_h_bake, API_R_AUTH | API_R_JSON | API_R_POOL) \
    X(JOB_LIST, "GET", "/v1/jobs", api_h_job_list, 0)                                              \
    X(JOB_GET, "GET", "/v1/jobs/{name}", api_h_job_get, 0)                                         \
    X(JOB_DELETE, "DELETE", "/v1/jobs/{name}", api_h_job_delete, API_R_AUTH)                       \
    X(VOL_LIST, "GET", "/v1/volumes", api_h_volume_list, 0)                                        \
    X(VOL_GET, "GET", "/v1/volumes/{name}", api_h_volume_get, API_R_POOL)                          \
    X(VOL_DELETE, "DELETE", "/v1/volumes/{name}", api_h_volume_delete, API_R_AUTH | API_R_WRITE)   \
    X(VOL_BAKE, "POST", "/v1/volumes/{name}/bake", api_h_volume_bake,                              \
      API_R_AUTH | API_R_JSON | API_R_POOL)                                                        \
    X(VOL_PATH, "POST", "/v1/volumes/{name}/path", api_h_volume_path, API_R_JSON)                  \
    X(VOL_RAYCAST, "POST", "/v1/volumes/{name}/raycast", api_h_volume_raycast, API_R_JSON)         \
    X(VOL_NEAREST, "POST", "/v1/volumes/{name}/nearest", api_h_volume_nearest, API_R_JSON)         \
    X(VOL_REACHABLE, "POST", "/v1/volumes/{name}/reachable", api_h_volume_reachable, API_R_JSON)   \
    X(VOL_STEP, "POST", "/v1/volumes/{name}/step", api_h_volume_step, API_R_JSON | API_R_POOL)     \
    /* further routes go above this line */

#endif
