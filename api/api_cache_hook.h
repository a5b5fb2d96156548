/*
 * api_cache_hook: how /metrics learns the path cache's figures without
 * api_metrics.c depending on the cache's implementation. Whoever owns the
 * cache registers a function once at start-up; until then every figure is 0.
 */
#ifndef API_CACHE_HOOK_H
#define API_CACHE_HOOK_H

#include <stdint.h>

typedef struct api_cache_stats {
    uint64_t hits, misses, evictions, entries, bytes;
} api_cache_stats;

typedef void (*api_cache_stats_fn)(void *ctx, api_cache_stats *out);

/* Registers (or with NULL removes) the stats source; call before serving. */
void api_cache_hook_set(api_cache_stats_fn fn, void *ctx);

#endif
