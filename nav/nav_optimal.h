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
 *   NAV_OPT_GRAPH_AUTO (the default): by the straight distance from start
 *     to goal in typical polygon sizes (sqrt(area / polygons)): on meshes
 *     of fewer than NAV_OPT_GRAPH_MIN_POLYS polygons the interval search
 *     below NAV_OPT_INTERVAL_MAX_CELLS; the graph's all-pairs table
 *     (nav_corner_table.c), where the graph has one, from
 *     NAV_OPT_TABLE_MIN_CELLS; the graph's A* between and wherever the
 *     table cannot answer. The table's two visibility walks cost about the
 *     same at every distance; the interval search's work grows with the
 *     ellipse it opens, the A*'s more slowly (near goals learn sight by
 *     tests, nav_corner_search.c). Per query on the small Recast meshes
 *     (118-216 polygons, session 15, each query's best of 15, time over
 *     Detour's): below 6 sizes the interval search and the A* are within
 *     a few per cent (dungeon 2-6: interval 0.49-0.66, A* 0.51-0.72);
 *     from 6 to 16 the A* is the fastest (nav_test 6-8: interval 1.01,
 *     table 1.07, A* 0.89; undulating 8-10: 0.80, 0.88, 0.70; nav_test's
 *     16 queries at 10-12: table 0.60, A* 0.76); past 16 the table on
 *     dungeon (16-20: table 0.66, A* 0.71), the A* on undulating (0.62,
 *     0.56). On town (4,547) and the
 *     100,000-polygon grids (no table) the A* is faster than the interval
 *     search by 1.4-10x on medium and long paths;
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
#define NAV_OPT_INTERVAL_MAX_CELLS 6
#define NAV_OPT_TABLE_MIN_CELLS 16
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
