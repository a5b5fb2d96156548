/*
 * api_query: the query endpoints' shared machinery: per-worker-thread
 * search scratch (a nav_query sized --max-nodes and result buffers,
 * allocated lazily on a thread's first query and freed when the thread
 * exits), so a query allocates nothing beyond its JSON; and the one path
 * cache of the process (nav/nav_cache.h), sized --cache-bytes.
 */
#ifndef API_QUERY_H
#define API_QUERY_H

#include <stdint.h>

#include "api/api.h"
#include "api/api_error.h"
#include "nav/nav_cache.h"
#include "nav/nav_query.h"

/* Result buffers of one worker thread, sized from --max-nodes. */
typedef struct api_scratch {
    nav_query *q;
    float *corners; /* 3 per corner */
    uint32_t max_corners;
    uint32_t *polys;
    uint32_t max_polys;
    uint32_t *links;
    uint32_t max_links;
    uint32_t *expanded;
    uint32_t max_expanded;
} api_scratch;

/* Prepares the per-thread scratch key and the path cache for cfg; 0 on success. */
int api_query_init(const api_config *cfg);
/* After the worker threads have exited: frees the cache and the key. */
void api_query_shutdown(void);

/* This thread's scratch (created on first use), or NULL when out of memory. */
api_scratch *api_query_scratch(void);
/* The process's path cache, or NULL when --cache-bytes is 0. */
nav_cache *api_query_cache(void);

/*
 * Fills e with the error for a failed nav/ query call and returns its code.
 * st NAV_E_OFF_MESH with `off` set (the point that did not snap: "start"):
 * point_off_mesh, "<slot>.<off> is not within extents of the navmesh";
 * any other status: "the <what> [in <slot>] failed: <status text>". slot is
 * "" for a single query or a batch slot such as "queries[2]", never NULL.
 */
api_code api_nav_fail(api_err *e, nav_status st, const char *slot, const char *off,
                      const char *what);

#endif
