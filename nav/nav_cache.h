/*
 * nav_cache: a bounded, thread-safe cache of path answers in front of
 * nav_find_path.
 *
 * Structure. Entries live in N shards (a power of two); a key's hash picks
 * the shard, and each shard has its own mutex, hash table and LRU list, so
 * there is no global lock on the hot path. The byte budget is split evenly
 * between shards; an insert evicts the shard's least recently used entries
 * until it fits (an answer larger than a shard's budget is not stored).
 * Counters are atomics readable at any time (nav_cache_stats_get).
 *
 * Memory. nav_cache_new reserves each shard's share up front as an arena of
 * fixed-size slots; an entry occupies a chain of slots and eviction returns
 * them to the shard's free list, so lookups, stores and evictions never
 * allocate, and resident memory never exceeds the budget (pages are
 * committed as slots are first used). An entry is charged its slots: its
 * size rounded up to the slot size.
 *
 * Keys. Every key holds nav_mesh_uid(m), which is unique per built mesh in
 * the process and never reused: after a replace or delete the old mesh's
 * entries can never match again (they age out of the LRU). Keys also hold
 * the filter (per-area costs of passable areas and the exclusion mask), the
 * effective node budget (max_nodes after clamping to the query's pool) and,
 * in level 1, the algorithm the request resolves to (AUTO -> OPTIMAL or
 * CORRIDOR).
 *
 * Determinism (api.md: the same request against the same mesh version
 * yields the same body; any replica can answer any tick). Every answer is
 * what a computation from the request and the mesh alone gives: a hit is
 * mere memoisation, never "whatever was searched first". So a cold cache, a
 * warm one (whatever other requests warmed it), an evicted entry, another
 * replica and "cache": false all give identical bytes (except the `cache`
 * word). tests/check_determinism.c checks this.
 *
 * Two levels.
 * 1. Exact answers, keyed additionally by the bit patterns of start, end and
 *    extents: what nav_find_path returned for that request (complete or
 *    partial). Answers with NAV_PATH_TRUNCATED are not stored.
 * 2. Canonical corridors, keyed additionally by the snapped (start_poly,
 *    end_poly) pair (not by the algorithm): the corridor nav_path_canonical
 *    finds, an A* run from the start polygon's centroid to the end
 *    polygon's, so it is a pure function of (mesh, polygons, filter,
 *    budget), with the links it takes. Only found corridors are stored.
 *
 * Which entry point uses which level:
 *  - nav_find_path_cached (the `path` endpoint): level 1 only, so the answer
 *    always equals a fresh nav_find_path (option "a"). Level 2 is not used
 *    for `path`: string pulling in the canonical corridor is up to 0.6 %
 *    longer than the exact-point corridor search on the shared Recast
 *    meshes, which would break the "no longer than Detour" bar of
 *    tests/check_shared_queries.c, and for OPTIMAL a corridor would not give
 *    the global optimum. Repeated `path` requests (same points) still never
 *    search again.
 *  - nav_find_path_reuse (steering): level 2 only. Its answer is DEFINED as
 *    the canonical corridor string-pulled for the exact points, whenever a
 *    canonical corridor exists; for an end in another component, the same
 *    toward the reachable point closest to the end (where nav_find_path's
 *    partial path ends, NAV_PATH_PARTIAL_UNREACHABLE); otherwise
 *    (exclusions cut the way, budget exhausted) the fresh nav_find_path
 *    answer. With or without a cache the answer is the same; thousands of
 *    agents chasing one target share one search per polygon pair.
 *
 * Bypass. Requests with res->expanded set (debug) are never cached.
 *
 * Goal trees. Beside the two levels, the cache lists steering's goal trees
 * (nav_steer_flow.c: one search rooted at a target, shared by the agents
 * heading there), so every thread's next tick reuses a tree whichever
 * thread built it. A tree is a pure function of its key (mesh uid, filter,
 * goal polygon and point): listing it is memoisation only. They are held
 * outside the byte budget (a tree is megabytes on a large mesh, the path
 * budget a few), up to NAV_CACHE_TREES of them and NAV_CACHE_TREE_BYTES,
 * least recently used dropped; a dropped tree lives on while a step still
 * holds it (reference counts).
 */
#ifndef NAV_CACHE_H
#define NAV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_query.h"
#include "nav/nav_vol.h"

typedef struct nav_cache nav_cache;

typedef enum nav_cache_result {
    NAV_CACHE_BYPASS = 0, /* not consulted (no cache, or a debug request) */
    NAV_CACHE_MISS,       /* searched (and stored when storable) */
    NAV_CACHE_HIT         /* answered from level 1 or level 2 */
} nav_cache_result;

/* Static name: "bypass", "miss", "hit" (the contract's words). */
const char *nav_cache_result_name(nav_cache_result r);

typedef struct nav_cache_stats {
    uint64_t hits;          /* lookups answered from the cache (both levels) */
    uint64_t corridor_hits; /* of which from level 2 */
    uint64_t misses;        /* lookups that searched */
    uint64_t evictions;     /* entries dropped to make room */
    uint64_t entries;       /* entries held now */
    uint64_t bytes;         /* bytes held now (the slots of the entries held) */
    uint64_t max_bytes;     /* the configured budget */
} nav_cache_stats;

/*
 * A cache holding at most max_bytes (> 0) in nshards shards (0 picks 16;
 * rounded up to a power of two, at most 1024). NULL on bad arguments or
 * allocation failure.
 */
nav_cache *nav_cache_new(size_t max_bytes, uint32_t nshards);

/* Frees the cache and every entry; NULL is a no-op. No call may be running. */
void nav_cache_free(nav_cache *c);

/* Drops every entry (counters other than entries/bytes are kept). */
void nav_cache_clear(nav_cache *c);

/* A consistent-enough snapshot of the counters (each read atomically). */
void nav_cache_stats_get(const nav_cache *c, nav_cache_stats *out);

/*
 * nav_find_path through the cache, for the `path` endpoint: level 1 (exact
 * requests) only, so the answer is identical to nav_find_path's in every
 * case. c == NULL (or res->expanded set): plain nav_find_path, *outcome =
 * BYPASS. outcome may be NULL. Thread-safe on c; q is the caller's own.
 */
nav_status nav_find_path_cached(nav_query *q, nav_cache *c, const nav_mesh *m,
                                const nav_path_request *req, nav_path_result *res,
                                nav_cache_result *outcome);

/*
 * The path through the canonical corridor of the snapped polygon pair
 * (memoised in level 2), string-pulled for the exact points; when the pair
 * has no canonical corridor, nav_find_path's answer. The path is valid and
 * on the mesh, through the corridor's polygons, possibly a little longer
 * than a fresh search for these points; algorithm is CORRIDOR and
 * nodes_expanded the canonical search's. The result depends on the request
 * and the mesh only: c == NULL computes the same answer (*outcome =
 * BYPASS). res->expanded set: computed without the cache, not recorded.
 * For steering. Thread-safe on c; q is the caller's own.
 */
nav_status nav_find_path_reuse(nav_query *q, nav_cache *c, const nav_mesh *m,
                               const nav_path_request *req, nav_path_result *res,
                               nav_cache_result *outcome);

/*
 * nav_find_path_reuse for ends the caller has already snapped: req->start
 * lies on polygon sp and req->end on ep (as nav_mesh_nearest within
 * req->extents would put them; not checked), so no snapping runs; the
 * answer is the one nav_find_path_reuse gives for those polygons and
 * points. For steering, which snaps every agent and goal once per tick.
 * stop_corners > 0: only the path's first corners are wanted; string
 * pulling stops once stop_corners corners are out and they span at least
 * stop_len metres in xz, with NAV_PATH_TRUNCATED when it stopped before
 * the path's end (the corners given are the whole path's first ones,
 * exactly; the end may be the last of them).
 * NAV_E_INVALID_ARG when sp or ep is not a polygon of m.
 */
nav_status nav_find_path_reuse_at(nav_query *q, nav_cache *c, const nav_mesh *m,
                                  const nav_path_request *req, uint32_t sp, uint32_t ep,
                                  uint32_t stop_corners, double stop_len, nav_path_result *res,
                                  nav_cache_result *outcome);

/* ---- goal trees (steering) ---- */

#define NAV_CACHE_TREES 32
#define NAV_CACHE_TREE_BYTES ((size_t)256 << 20)

typedef struct nav_cache_tree nav_cache_tree;

/* What a tree is a function of; build it with nav_cache_tree_key_make (the
   padding is zeroed, keys are compared as bytes). */
typedef struct nav_cache_tree_key {
    uint64_t mesh_uid; /* nav_mesh_uid: never reused, so a replaced mesh never matches */
    uint64_t exclude_mask;
    float area_cost[NAV_MAX_AREAS];
    uint32_t poly; /* the goal's polygon */
    float goal[3]; /* the goal's point on it */
    uint32_t zero; /* padding, 0 */
} nav_cache_tree_key;

/* filter NULL: the default filter. */
void nav_cache_tree_key_make(nav_cache_tree_key *k, const nav_mesh *m, const nav_filter *filter,
                             uint32_t poly, const float goal[3]);

/* The listed tree of key k with a reference for the caller (release it
   with nav_cache_tree_release), or NULL (none listed, or c NULL). */
nav_cache_tree *nav_cache_tree_get(nav_cache *c, const nav_cache_tree_key *k);

/*
 * Lists tree (bytes: its size; free_fn frees it) under k and returns it
 * with a reference for the caller. Takes tree in every case: when another
 * thread listed k first, tree is freed and the listed one returned (the
 * same content: a function of k); NULL when out of memory (tree freed).
 */
nav_cache_tree *nav_cache_tree_put(nav_cache *c, const nav_cache_tree_key *k, void *tree,
                                   size_t bytes, void (*free_fn)(void *));

/* The tree (borrowed while the reference is held). */
void *nav_cache_tree_data(const nav_cache_tree *t);

/* Drops the caller's reference; the tree is freed with its last one. Does
   not touch the cache (which may be gone by then); NULL is a no-op. */
void nav_cache_tree_release(nav_cache_tree *t);

/* Trees listed now (for tests and stats). */
uint32_t nav_cache_tree_count(nav_cache *c);

/*
 * nav_vol_path through the cache (a flight volume's `path` endpoint): level 1
 * only, keyed by nav_vol_uid(v) (so a replaced volume's paths never match
 * the new one), the bit patterns of the (already snapped) start and end,
 * the heuristic weight and the effective node budget. A hit copies the
 * stored answer, identical to a fresh nav_vol_path's; answers with more
 * corners than req->max_corners are neither stored nor served (a fresh
 * search then gives the truncated answer). c == NULL or req->expanded set:
 * plain nav_vol_path, *outcome = BYPASS. Thread-safe on c; q is the
 * caller's own.
 */
nav_status nav_vol_path_cached(const nav_vol *v, nav_vol_query *q, nav_cache *c,
                               const nav_vol_path_request *req, nav_vol_path_result *res,
                               nav_cache_result *outcome);

#endif
