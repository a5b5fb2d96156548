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
 * effective node budget (max_nodes after clamping to the query's pool) and
 * the algorithm the request resolves to (AUTO -> OPTIMAL or CORRIDOR).
 *
 * Two levels.
 * 1. Exact answers, keyed additionally by the bit patterns of start, end and
 *    extents. A hit returns exactly what nav_find_path returned for that
 *    request (complete or partial). Answers with NAV_PATH_TRUNCATED are not
 *    stored (they are incomplete).
 * 2. Corridors, keyed additionally by the snapped (start_poly, end_poly)
 *    pair: the polygon corridor and the links it takes. A hit snaps the
 *    exact points and re-runs only the string pulling inside the stored
 *    corridor. Only complete answers are stored at this level (never partial
 *    or budget-limited ones).
 *    - For the CORRIDOR algorithm, nav_find_path_cached uses level 2: the
 *      answer is the string-pulled path through the corridor that an earlier
 *      search found for some points in the same polygon pair and options.
 *      The corridor A* weighs portal crossings toward the exact end point
 *      (for path quality: a polygon-only cost model would make level 2
 *      exact but string-pulls longer than Detour on the shared meshes), so
 *      a level-2 answer CAN DIFFER from a fresh corridor search for those
 *      exact points (another corridor, or another nodes_expanded); it is
 *      always a valid path from the snapped start to the snapped end
 *      through that corridor. For the exact same request it is identical
 *      (the level-1 entry, or the corridor searched for those very points).
 *    - For the OPTIMAL algorithm, reusing a corridor yields the shortest
 *      path WITHIN that corridor, not always the global optimum, so
 *      nav_find_path_cached never serves optimal answers from level 2 (the
 *      `path` endpoint promises optimal answers equal to a fresh search);
 *      nav_find_path_reuse does, for callers such as steering that re-plan
 *      every tick and prefer speed and corridor stability.
 *
 * Bypass. Requests with res->expanded set (debug) are never cached.
 */
#ifndef NAV_CACHE_H
#define NAV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_query.h"

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
 * nav_find_path through the cache, for the `path` endpoint. Level 1 (exact
 * requests) for every algorithm: identical to nav_find_path's answer.
 * Level 2 (corridor reuse) only for the CORRIDOR algorithm, with the caveat
 * above.
 * c == NULL (or res->expanded set): plain nav_find_path, *outcome = BYPASS.
 * outcome may be NULL. Thread-safe on c; q is the caller's own.
 */
nav_status nav_find_path_cached(nav_query *q, nav_cache *c, const nav_mesh *m,
                                const nav_path_request *req, nav_path_result *res,
                                nav_cache_result *outcome);

/*
 * Like nav_find_path_cached, but level 2 also serves OPTIMAL requests: the
 * answer may be the shortest path within a corridor searched earlier for
 * other points in the same polygon pair (valid, on the mesh, through the
 * same polygons, possibly longer than the global optimum). For steering.
 */
nav_status nav_find_path_reuse(nav_query *q, nav_cache *c, const nav_mesh *m,
                               const nav_path_request *req, nav_path_result *res,
                               nav_cache_result *outcome);

#endif
