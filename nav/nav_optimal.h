/*
 * nav_optimal: the Euclidean-optimal any-angle search over the mesh (an
 * interval search after Polyanya, Cui, Harabor & Grastien, IJCAI 2017).
 * Internal to nav/: nav_find_path (nav_query.c) calls it when costs are
 * uniform, and falls back to the corridor search on NAV_E_LIMIT.
 *
 * A nav_optimal is per-thread scratch (node pool, open list, root table)
 * allocated once; searches only reset it.
 */
#ifndef NAV_OPTIMAL_H
#define NAV_OPTIMAL_H

#include <stdint.h>

#include "nav/nav_query.h"

typedef struct nav_optimal nav_optimal;

/* max_nodes: pool size, the hard cap on search nodes. NULL on allocation failure. */
nav_optimal *nav_optimal_new(uint32_t max_nodes);
void nav_optimal_free(nav_optimal *o);

/*
 * Shortest path in the xz plane from `start` (on start_poly) to `end` (on
 * end_poly), through polygons whose area is not in exclude_mask and through
 * usable off-mesh links (cost: the 3-D distance between the link's ends).
 * On NAV_OK fills res->corners (lifted onto the surface), polys, links,
 * length (3-D length of corners), nodes_expanded and, when res->expanded is
 * non-NULL, the expanded polygons; sets res->algorithm = NAV_ALGO_OPTIMAL and
 * may set NAV_PATH_TRUNCATED. Does not snap, and does not set start/end.
 * Returns NAV_E_NOT_FOUND when end is unreachable (the caller builds the
 * partial path) and NAV_E_LIMIT when max_nodes search nodes ran out.
 */
nav_status nav_optimal_search(nav_optimal *o, const nav_mesh *m, uint32_t start_poly,
                              const float start[3], uint32_t end_poly, const float end[3],
                              uint64_t exclude_mask, uint32_t max_nodes, nav_path_result *res);

/*
 * The polygons that a path from `start` (on start_poly) can enter within
 * max_cost (xz length, links at their 3-D length), through polygons whose
 * area is not in exclude_mask: exact, by the same interval search without
 * a goal. *polys points to the reached ids (in the order reached, owned by
 * o, valid until its next search) and *npolys counts them. NAV_E_LIMIT when
 * max_nodes nodes ran out: the ids found so far are then still each within
 * max_cost, but some may be missing. NAV_E_NOT_FOUND when the start's own
 * area is excluded.
 */
nav_status nav_optimal_flood(nav_optimal *o, const nav_mesh *m, uint32_t start_poly,
                             const float start[3], uint64_t exclude_mask, double max_cost,
                             uint32_t max_nodes, const uint32_t **polys, uint32_t *npolys);

/*
 * Observer of the search (analysis and benchmarks, not used by the service):
 * called once per expanded interval node, after pruning, with the entry edge
 * (index into the mesh's polygon edge arrays: poly_start[poly] + local
 * edge), its root and the root's g, and the interval as points a, b and as
 * parameters ta <= tb along that edge (from the polygon's edge start
 * vertex). NULL fn turns it off. One pointer test per expansion when off.
 */
typedef struct nav_optimal_interval {
    uint32_t edge;
    double root[2], g;
    double a[2], b[2];
    double ta, tb;
} nav_optimal_interval;
typedef void (*nav_optimal_observer)(void *ctx, const nav_optimal_interval *iv);
void nav_optimal_observe(nav_optimal *o, nav_optimal_observer fn, void *ctx);

/*
 * Which exact search answers. The corner graph (nav_corner.h) needs the
 * mesh to have one and no area of its polygons excluded; then:
 *   NAV_OPT_GRAPH_AUTO (the default): the graph on meshes of at least
 *     NAV_OPT_GRAPH_MIN_POLYS polygons; below that the interval search,
 *     except for goals farther than NAV_OPT_TABLE_MIN_CELLS typical
 *     polygon sizes (sqrt(area / polygons)) in a straight line when the
 *     graph has its all-pairs table (nav_corner_table.c): the table's
 *     two visibility walks cost about the same at every distance, the
 *     interval search's work grows with the ellipse it opens. On the
 *     small Recast meshes (118-216 polygons) the interval search is the
 *     faster on short and medium paths, the table on long ones (dungeon
 *     long 0.99 -> 0.71 of Detour's time; README); on town (4,547) and
 *     the 100,000-polygon grids the graph's A* is faster, by 1.4-10x on
 *     medium and long paths;
 *   NAV_OPT_GRAPH_ON: the graph whenever it can (tests, benchmarks);
 *   NAV_OPT_GRAPH_OFF: the interval search always;
 *   NAV_OPT_GRAPH_ASTAR: as ON, but the graph's A* search even where the
 *     graph has an all-pairs table (tests, benchmarks).
 */
enum {
    NAV_OPT_GRAPH_OFF = 0,
    NAV_OPT_GRAPH_ON = 1,
    NAV_OPT_GRAPH_AUTO = 2,
    NAV_OPT_GRAPH_ASTAR = 3
};
#define NAV_OPT_GRAPH_MIN_POLYS 1024
/* Measured on the three small Recast meshes (pairs against Detour): 4 made
   their short and medium bands slower (nav_test medium 0.90 -> 1.06), 10
   to 16 left nav_test's long band at the interval search's 1.06-1.13. */
#define NAV_OPT_TABLE_MIN_CELLS 8
void nav_optimal_use_graph(nav_optimal *o, int mode);

/* What answered this nav_optimal's searches so far. graph_misses: graph
   answers that had to be redone by the interval search (0 unless a bug). */
typedef struct nav_optimal_stats {
    uint64_t graph_searches, interval_searches, graph_misses;
    uint64_t table_searches; /* of graph_searches: answered by the all-pairs table */
} nav_optimal_stats;
void nav_optimal_stats_get(const nav_optimal *o, nav_optimal_stats *out);

/* Fills m->poly_corner and m->poly_open (mesh build time, needs
   m->poly_nei; see nav_internal.h): which polygon corners a taut path may
   bend at when no area is excluded, and how many neighbours each polygon
   has. */
void nav_optimal_corners(nav_mesh *m);

#endif
