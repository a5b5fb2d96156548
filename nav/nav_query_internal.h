/*
 * nav_query_internal: what nav_query.c shares with nav_reach.c and
 * nav_cache.c (nav/ only, not a public header).
 *
 * Owns the layout of the per-thread query scratch (node pool, binary heap,
 * polygon -> node hash with generation stamps so a reset is O(1)) and the
 * corridor representation that the string puller and the path cache share:
 * a polygon sequence plus, per step, how the polygon was entered (an edge
 * portal or an off-mesh link).
 */
#ifndef NAV_QUERY_INTERNAL_H
#define NAV_QUERY_INTERNAL_H

#include <stdint.h>

#include "nav/nav_internal.h"
#include "nav/nav_optimal.h"
#include "nav/nav_query.h"

/* A search node: one per polygon per search. */
typedef struct nav_node {
    double g;         /* cost from the start to pos */
    double f;         /* g + heuristic */
    float pos[3];     /* where the search entered the polygon */
    uint32_t poly;    /* polygon id */
    uint32_t parent;  /* node index, NAV_NONE for the start */
    uint32_t via;     /* NAV_NONE: entered through an edge; else link id | NAV_LINK_REVERSE */
    uint32_t heap_at; /* index in the heap, NAV_NONE when not open */
    uint32_t next;    /* hash chain */
    uint8_t closed;
} nav_node;

struct nav_query {
    uint32_t max_nodes; /* pool size */
    nav_node *nodes;
    uint32_t nnodes;
    uint32_t *heap; /* node indices, min-heap on f */
    uint32_t nheap;
    /* polygon -> node: chained hash; a bucket is valid only when its stamp
       equals `gen`, so resetting is gen++ (no clearing per search). */
    uint32_t hash_mask;
    uint32_t *bucket_first;
    uint32_t *bucket_gen;
    uint32_t gen;
    /* corridor scratch (max_nodes entries each) */
    uint32_t *corr_polys;
    uint32_t *corr_via;
    uint32_t corr_n; /* length of the corridor the last corridor search produced, 0 if none */
    /* spatial query scratch for the closest reachable point */
    uint32_t *box;
    uint32_t box_cap;
    nav_optimal *opt;
};

/* Empties the pool, heap and hash (O(1)). */
void nav_q_reset(nav_query *q);
/* Node for poly, or NAV_NONE. */
uint32_t nav_q_find(const nav_query *q, uint32_t poly);
/* New node for poly (must not exist), or NAV_NONE when the pool is full. */
uint32_t nav_q_add(nav_query *q, uint32_t poly);
void nav_q_push(nav_query *q, uint32_t node);
/* Re-sorts an open node whose f decreased. */
void nav_q_decrease(nav_query *q, uint32_t node);
uint32_t nav_q_pop(nav_query *q);

/* The filter the request means (NULL -> default) and its validation. */
nav_status nav_filter_check(const nav_filter *f);

/* Minimum cost multiplier over non-excluded areas (the heuristic's weight). */
double nav_filter_min_cost(const nav_filter *f);

static inline int nav_filter_passable(const nav_filter *f, uint8_t area) {
    return ((f->exclude_mask >> area) & 1u) == 0;
}

/* The filter a call means: f when valid, the default (written to *fdef)
   when f is NULL; NULL when f is invalid (the caller answers
   NAV_E_INVALID_ARG). */
static inline const nav_filter *nav_filter_resolve(const nav_filter *f, nav_filter *fdef) {
    if (!f) {
        nav_filter_default(fdef);
        return fdef;
    }
    return nav_filter_check(f) == NAV_OK ? f : NULL;
}

/* A link taken from a search's current polygon: link_out entry `entry`
   (see NAV_LINK_REVERSE) seen in its direction of travel. */
typedef struct nav_link_hop {
    uint32_t to;                  /* arrival polygon */
    const float *from_on, *to_on; /* departure and arrival points on the mesh */
    double cost;                  /* its 3-D length times its area's cost */
} nav_link_hop;

/* Fills *h for link_out entry `entry`; 0 when the link has no arrival
   polygon or the filter excludes the link's area or the arrival's. */
static inline int nav_link_take(const nav_mesh *m, uint32_t entry, const nav_filter *f,
                                nav_link_hop *h) {
    const nav_link *l = &m->links[entry & ~NAV_LINK_REVERSE];
    int rev = (entry & NAV_LINK_REVERSE) != 0;
    h->to = rev ? l->start_poly : l->end_poly;
    if (h->to == NAV_NONE || !nav_filter_passable(f, l->area) ||
        !nav_filter_passable(f, m->areas[h->to]))
        return 0;
    h->from_on = rev ? l->end_on : l->start_on;
    h->to_on = rev ? l->start_on : l->end_on;
    h->cost = nav_dist3d(h->from_on, h->to_on) * f->area_cost[l->area];
    return 1;
}

/* The shared edge of polygons a and b as a portal: left and right seen
   when moving from a into b (consecutive collinear edges shared with b are
   merged). Returns 0 when they share no edge. */
int nav_portal(const nav_mesh *m, uint32_t a, uint32_t b, float left[3], float right[3]);

/*
 * String pulling of a corridor: polys[0..n) with via[i] telling how polys[i]
 * was entered (NAV_NONE = through the shared edge with polys[i - 1], else a
 * link id | NAV_LINK_REVERSE when taken backwards; via[0] is ignored).
 * Writes corners (first = start, last = end), polys, links, length and may
 * set NAV_PATH_TRUNCATED; leaves the other fields alone. Returns
 * NAV_E_INVALID_ARG when two consecutive polygons share no portal.
 */
nav_status nav_string_pull(const nav_mesh *m, const uint32_t *polys, const uint32_t *via,
                           uint32_t n, const float start[3], const float end[3],
                           nav_path_result *res);

/*
 * nav_string_pull that may stop early: once at least stop_corners corners
 * are out and their path is at least stop_len long in xz, it returns with
 * NAV_PATH_TRUNCATED set (the corners so far are exactly the first ones of
 * the whole pull: the funnel never takes back a corner it emitted). Links
 * beyond the stop are not listed. stop_corners 0: the whole path.
 * open_end: polys[0..n) is only the start of the corridor (it goes on
 * toward `end`); the pull must stop within it, else NAV_E_LIMIT (give more
 * corridor). Corners are emitted from real portals only, so they are the
 * whole corridor's.
 */
nav_status nav_string_pull_prefix(const nav_mesh *m, const uint32_t *polys, const uint32_t *via,
                                  uint32_t n, const float start[3], const float end[3],
                                  uint32_t stop_corners, double stop_len, bool open_end,
                                  nav_path_result *res);

/* A path request after validation (and, once snapped, its polygons). */
typedef struct nav_path_prep {
    nav_filter filter; /* the request's, or the default */
    uint32_t budget;   /* max_nodes clamped to the pool */
    nav_algo algo;     /* resolved: OPTIMAL or CORRIDOR */
    uint32_t sp, ep;   /* snapped polygons (NAV_NONE before nav_path_snap) */
    float spt[3], ept[3];
    /* nav_string_pull_prefix's stop (0: the whole path); set by callers
       that only read the first corners (steering) */
    uint32_t stop_corners;
    double stop_len;
    bool open_end; /* the corridor handed in is a prefix (nav_string_pull_prefix) */
} nav_path_prep;

/* nav_find_path in three steps, so the cache can look up between them:
   validate (clears res), snap (fills res start/end and polygons), run. */
nav_status nav_path_validate(const nav_query *q, const nav_mesh *m, const nav_path_request *req,
                             nav_path_result *res, nav_path_prep *prep);
nav_status nav_path_snap(const nav_mesh *m, const nav_path_request *req, nav_path_prep *prep,
                         nav_path_result *res);
nav_status nav_path_run(nav_query *q, const nav_mesh *m, const nav_path_prep *prep,
                        nav_path_result *res);

/*
 * The canonical corridor of (sp, ep) under the prep's filter and budget:
 * the corridor A* run from sp's centroid to ep's centroid, so its costs do
 * not depend on the request's exact points and ties are broken by the
 * search's fixed order (heap: lower f, then lower node index). The result
 * is a pure function of (mesh, sp, ep, filter, budget): caching it is mere
 * memoisation. On NAV_OK it is in q->corr_polys / corr_via (q->corr_n).
 * NAV_E_NOT_FOUND: ep is not reachable from sp (components or the filter's
 * exclusions); NAV_E_LIMIT: the budget ran out. *nodes_expanded: the
 * search's expansions. prep must be snapped (sp, ep set).
 */
/* The point closest (3-D) to end on a polygon reachable from start_poly
   (nav_mesh_reachable) that the filter lets through: where a path to an
   unreachable end leads (*poly, pt; start_poly's own closest point when no
   other is closer). */
void nav_path_closest_reachable(nav_query *q, const nav_mesh *m, uint32_t start_poly,
                                const float end[3], const nav_filter *f, uint32_t *poly,
                                float pt[3]);
nav_status nav_path_canonical(nav_query *q, const nav_mesh *m, const nav_path_prep *prep,
                              uint32_t *nodes_expanded);

/* The answer for the prep's exact points through the corridor polys/via[0..n)
   (which must lead from prep->sp to prep->ep): string pulling, plus start,
   end, polygons, algorithm CORRIDOR and nodes_expanded as given. */
nav_status nav_path_pull_corridor(const nav_mesh *m, const nav_path_prep *prep,
                                  const uint32_t *polys, const uint32_t *via, uint32_t n,
                                  uint32_t nodes_expanded, nav_path_result *res);

#endif
