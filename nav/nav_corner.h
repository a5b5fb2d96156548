/*
 * nav_corner: the exact shortest-path search over a corner visibility graph,
 * precomputed once per built mesh. Internal to nav/: nav_optimal_search
 * (nav_optimal.c) answers through it when the mesh has a graph and the
 * request excludes no area of its polygons; the interval search answers
 * the rest (such exclusions change what is a wall, so the graph would be
 * wrong; excluded links the graph search skips).
 *
 * Why a graph (issue 13). The interval search is exact but, on a town of
 * 4,547 polygons, 2-3x slower than Detour's approximate corridor search,
 * and its own analysis showed that 87-100 % of the intervals it expands are
 * needed by every pruning rule it could use: it has to enumerate the
 * shortest-path map over the whole ellipse the Euclidean heuristic leaves
 * open. A shortest path in a polygonal domain bends only at convex corners
 * of the walkable boundary (vertices whose walkable angle exceeds 180
 * degrees) and at off-mesh link ends, so the search can run over those
 * points alone:
 *   - nodes: one per corner (per fan of polygons around a vertex, so two
 *     floors welded at one vertex give two nodes), then two per off-mesh
 *     link (its start and end points on the mesh);
 *   - edges: pairs that see each other, found by walking visibility cones
 *     through the mesh's portals from every node (never in the plane, so
 *     overlapping floors stay apart), kept only when the segment is tangent
 *     to the obstacle at each corner end (a path cannot bend at a corner it
 *     meets head-on: the reduced visibility graph of Lozano-Perez & Wesley,
 *     the pruning subgoal graphs use); plus each link's own hop;
 *   - a query walks the cones from the start and from the goal (the start's
 *     walk also notices a goal in plain sight; for a near goal each corner
 *     the search closes tests its own sight of the goal instead of the
 *     goal's walk), then runs A* from the start's visible corners with the
 *     Euclidean heuristic; at a corner reached from p it only follows
 *     edges that turn around the obstacle (taut paths), which halves the
 *     relaxations and loses no optimum.
 * The cones walk a coarser walk mesh (nav_corner_merge.c: polygons merged
 * while convex, at most 32 vertices, then straight runs of edges into the
 * same piece joined into one edge), so a room of small cells costs a few
 * cones, not one per cell edge. The corridor of the answer is rebuilt by walking each segment
 * through the original polygons it crosses.
 * Small graphs (at most NAV_CORNER_TABLE_MAX_NODES nodes, nav_corner_table.c)
 * also carry an all-pairs table of shortest lengths and first steps; a
 * query there runs the same two walks and takes the least start -> s ...
 * g -> goal over the nodes they show, with no graph search (session 11:
 * far goals on the small Recast meshes).
 * Alternatives weighed: landmark (differential) bounds would shrink the
 * interval search's ellipse but not its per-node cost; End Point Search /
 * compressed path databases (Shen, Cui, Harabor et al., IJCAI 2020) answer
 * faster still but need a first-move table per corner pair, quadratic to
 * build, beyond the 5 s / 64 MB budget at 100,000 polygons.
 *
 * Cost: built with the mesh (nav_mesh_build, on the thread that uploads the
 * mesh, the writer; queries never wait for it), or loaded from the mesh's
 * stored blob (nav_serialize.c; a damaged copy is rebuilt). Memory: about
 * 100 bytes per node (positions twice: doubles for the build, floats in
 * the search's 32-byte records), 4 per directed edge and the walk mesh
 * (about 16 bytes per polygon corner); building stops and leaves no graph
 * (the interval search then answers) past NAV_CORNER_MAX_BYTES. Measured
 * (`NAVD_BENCH=optimal`, quiet machine, after the walk mesh's joined runs):
 * town (4,547 polygons) 1.38 MB, 0.04 s; random320 (106,076 polygons)
 * 11.7 MB, 0.23 s; walls320 (112,309) 3.4 MB, 0.08 s (README).
 */
#ifndef NAV_CORNER_H
#define NAV_CORNER_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_internal.h"
#include "nav/nav_query.h"

/* Graphs larger than this are not built (the interval search answers). */
#define NAV_CORNER_MAX_BYTES ((size_t)64 << 20)

typedef struct nav_cgraph nav_cgraph;
typedef struct nav_corner_query nav_corner_query;

/* Builds m->cgraph from the finished mesh (needs poly_nei, poly_twin,
   poly_corner and the links). Leaves it NULL, and returns NAV_OK, when the
   graph would exceed NAV_CORNER_MAX_BYTES; NAV_E_NOMEM on allocation
   failure (m->cgraph NULL then too). */
nav_status nav_corner_build(nav_mesh *m);
/* The same graph, its visibility walks on `threads` threads (1: none
   started). */
nav_status nav_corner_build_mt(nav_mesh *m, uint32_t threads);
void nav_corner_free(nav_cgraph *g);

/*
 * Stored form (beside the mesh in its blob; nav_serialize.c frames it with
 * a CRC): the edges the build's walks found, not the nodes, which loading
 * recomputes from the mesh in a few milliseconds and checks against the
 * stored counts. Payload: u32 1 | u32 corners | u32 nodes | (nodes + 1)
 * u32 edge starts | nodes u32 mids | edge starts[nodes] u32 targets, and
 * since format 2 the walk mesh (the merge's pieces, nav_corner_internal.h
 * nav_corner_merge_save: a quarter of the load's instructions on a 130,000
 * polygon mesh went to merging again); "no graph" is u32 0 alone. save
 * writes format 2 into out (NULL: only counts) and returns the bytes; g
 * NULL stores "no graph" (too large to build). load reads format 1 or 2,
 * sets m->cgraph (NULL for "no graph"), or returns NAV_E_CORRUPT when the
 * bytes do not fit this mesh (the caller then builds the graph afresh). A
 * stored walk mesh that is not a sound partition is merged again instead.
 */
size_t nav_corner_save(const nav_cgraph *g, uint8_t *out);
nav_status nav_corner_load(nav_mesh *m, const uint8_t *p, size_t len, uint32_t format);

/* Bytes the graph owns; its node and directed edge counts. */
size_t nav_corner_memory(const nav_cgraph *g);
int nav_corner_has_table(const nav_cgraph *g);
/* Whether a search excluding exclude_mask can use g's table: g has one and
   no link of the mesh is of an excluded area (the table's lengths may run
   through such a link). */
int nav_corner_table_usable(const nav_cgraph *g, uint64_t exclude_mask);
double nav_corner_cell(const nav_cgraph *g);
uint32_t nav_corner_node_count(const nav_cgraph *g);
uint64_t nav_corner_edge_count(const nav_cgraph *g);

/* Per-thread scratch (grows to the largest graph searched, then never
   allocates again). NULL on allocation failure. */
nav_corner_query *nav_corner_query_new(void);
void nav_corner_query_free(nav_corner_query *cq);
/* For tests: on = 0 turns off the search's bound on the answer (entries
   whose keys exceed a known path's length are then queued too, as before
   the bound); the number of entries the bound kept out of the queue over
   this scratch's searches. */
void nav_corner_query_set_bound(nav_corner_query *cq, int on);
/* For tests: on = 0 makes the search run A* over the graph even where the
   graph has its all-pairs table (nav_corner_table.c). */
void nav_corner_query_set_table(nav_corner_query *cq, int on);
/* How an A* search learns which nodes see the goal (nav_corner_search.c,
   cs_try_goal): NAV_CORNER_RAYS_AUTO (the default) by sight tests from
   the nodes it closes when start and goal are near (within 32 typical
   polygon sizes), giving way to the goal's walk of cones after 64 tests,
   else by that walk from the start. For tests: 0 always by the walk; n
   by sight tests, the walk after n of them. The answer's length is the
   same every way. */
#define NAV_CORNER_RAYS_AUTO UINT32_MAX
void nav_corner_query_set_rays(nav_corner_query *cq, uint32_t rays);
/* Over this scratch's searches: sight tests made, and searches that
   walked from the goal (table mode's included; zeros for NULL). */
void nav_corner_query_goal_counts(const nav_corner_query *cq, uint64_t *tests, uint64_t *walks);
/* Searches this scratch ran in table mode (0 for NULL). */
uint64_t nav_corner_query_tabled(const nav_corner_query *cq);
uint64_t nav_corner_query_pruned(const nav_corner_query *cq);

/*
 * Shortest xz path (links at their 3-D length) from start (on start_poly)
 * to end (on end_poly) over m->cgraph. exclude_mask may name link areas
 * (those links are not taken) but no area of a polygon: the graph's walls
 * would be wrong (the caller uses the interval search then). The caller
 * (nav_optimal_search) has checked the arguments and that end is
 * reachable. Fills res as nav_optimal_search documents (corners lifted on
 * the surface, polys, links, length, nodes_expanded, expanded).
 * NAV_E_LIMIT when more than max_nodes units of work (polygons walked,
 * graph nodes expanded and sight tests) would be needed; NAV_E_NOT_FOUND when no path
 * exists; NAV_E_NOMEM when the scratch cannot grow.
 */
nav_status nav_corner_search(nav_corner_query *cq, const nav_mesh *m, uint32_t start_poly,
                             const float start[3], uint32_t end_poly, const float end[3],
                             uint64_t exclude_mask, uint32_t max_nodes, nav_path_result *res);

#endif
