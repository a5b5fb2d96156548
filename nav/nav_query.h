/*
 * nav_query: searches over a built nav_mesh.
 *
 * A nav_query is per-thread scratch: a fixed node pool, open list and
 * buffers allocated once by nav_query_new and only reset by each search, so
 * queries allocate nothing. It is not thread-safe; meshes are.
 *
 * Results go into caller-owned arrays with a max and a count; a result that
 * did not fit sets NAV_PATH_TRUNCATED, never silently drops data. Every entry
 * point validates its arguments (finite floats, ranges) and zeroes its
 * outputs first.
 */
#ifndef NAV_QUERY_H
#define NAV_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "nav/nav_mesh.h"

typedef struct nav_query nav_query;

/* max_nodes: the node pool size, i.e. the hard cap on any search's budget. */
nav_query *nav_query_new(uint32_t max_nodes);
void nav_query_free(nav_query *q);

/* Per-area traversal cost multipliers and exclusions. */
typedef struct nav_filter {
    float area_cost[NAV_MAX_AREAS]; /* > 0, default 1 */
    uint64_t exclude_mask;          /* bit a set: polygons and links of area a are impassable */
} nav_filter;

void nav_filter_default(nav_filter *f);
/* True when every non-excluded area costs exactly 1: the optimal search applies. */
bool nav_filter_is_uniform(const nav_filter *f);
/* The same, over the areas m uses (its polygons' and links'): a cost on an
   area the mesh does not have changes no path, so it keeps the optimal
   search (and exact reachability). m == NULL: every area. */
bool nav_filter_is_uniform_on(const nav_filter *f, const nav_mesh *m);

typedef enum nav_algo {
    NAV_ALGO_AUTO = 0, /* optimal when the filter is uniform, else corridor */
    NAV_ALGO_OPTIMAL,  /* exact Euclidean shortest path (interval search) */
    NAV_ALGO_CORRIDOR  /* A* over polygons, then string pulling */
} nav_algo;

enum nav_path_flags {
    NAV_PATH_PARTIAL_UNREACHABLE = 1u << 0, /* end not reachable: path to closest point */
    NAV_PATH_PARTIAL_BUDGET = 1u << 1,      /* max_nodes ran out */
    NAV_PATH_TRUNCATED = 1u << 2            /* a caller buffer was too small */
};

typedef struct nav_path_request {
    float start[3];
    float end[3];
    float extents[3];         /* snapping half-box, each >= 0, e.g. {2, 4, 2} */
    const nav_filter *filter; /* NULL: default (uniform) */
    uint32_t max_nodes;       /* search budget; 0 or above the pool: the pool size */
    nav_algo algorithm;
} nav_path_request;

typedef struct nav_path_result {
    /* caller-owned buffers (set before the call; counts are outputs) */
    float *corners; /* 3 per corner */
    uint32_t max_corners, ncorners;
    uint32_t *polys; /* polygon corridor the path passes through */
    uint32_t max_polys, npolys;
    uint32_t *links; /* off-mesh links used, in order */
    uint32_t max_links, nlinks;
    uint32_t *expanded; /* polygons the search expanded (debug); NULL = not recorded */
    uint32_t max_expanded, nexpanded;

    /* outputs */
    float start[3], end[3]; /* snapped start; snapped end or closest reachable point */
    uint32_t start_poly, end_poly;
    uint32_t flags;     /* nav_path_flags; partial = flags & (UNREACHABLE | BUDGET) */
    double length;      /* 3-D length of corners */
    nav_algo algorithm; /* the one actually used (never AUTO) */
    uint32_t nodes_expanded;
} nav_path_result;

/*
 * Snaps start and end (NAV_E_OFF_MESH when either is off the mesh; the
 * result's start_poly / end_poly say which: NAV_NONE for the failed one),
 * searches and string-pulls. A partial path is NAV_OK with a flag.
 */
nav_status nav_find_path(nav_query *q, const nav_mesh *m, const nav_path_request *req,
                         nav_path_result *res);

/* ---- raycast ---- */
typedef struct nav_raycast_result {
    uint32_t *polys; /* polygons visited, caller-owned */
    uint32_t max_polys, npolys;
    bool hit;
    float t;         /* fraction of start->end travelled (1 when clear) */
    float point[3];  /* where the ray stopped, on the surface */
    float normal[3]; /* wall's horizontal normal toward the ray's side (y = 0), 0 if no hit */
    bool truncated;
} nav_raycast_result;

/* Walks the surface from `start` (on start_poly) toward end in xz. */
nav_status nav_raycast(const nav_mesh *m, uint32_t start_poly, const float start[3],
                       const float end[3], const nav_filter *filter, nav_raycast_result *res);

/* ---- reachability by cost ---- */
/*
 * Polygons that a path from `start` can enter at a cost <= max_cost (length
 * weighted by the filter's area costs), by a bounded Dijkstra. Writes at most
 * max ids (sorted ascending) into polys, sets *npolys to the number written and
 * *area to their summed xz area; *truncated when more did not fit.
 */
nav_status nav_reach_cost(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                          const float start[3], double max_cost, const nav_filter *filter,
                          uint32_t *polys, uint32_t max, uint32_t *npolys, double *area,
                          bool *truncated);

#endif
