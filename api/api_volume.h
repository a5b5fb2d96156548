/*
 * api_volume: the flight volumes in memory, by name, private to api/ (the
 * contract's "Flight volumes"). Like the navmesh registry: each name maps to
 * its current version, an api_vol_entry holding the baked nav_vol, its
 * stored metadata and its source; a lookup takes a reference, a replace
 * swaps the pointer under the lock and the old version lives until its last
 * reader releases it. Writes go to the store (STORE_VOLUME) first, one at a
 * time, so store and memory always agree.
 *
 * Stored blob: "AVOL", u32 length of the source JSON text, the text, then
 * the nav_vol blob (which carries its own version and CRC).
 */
#ifndef API_VOLUME_H
#define API_VOLUME_H

#include <jansson.h>
#include <stdatomic.h>

#include "api/api_error.h"
#include "api/api_registry.h"
#include "nav/nav_vol.h"
#include "storage/store.h"

typedef struct api_vol_entry {
    nav_vol *vol;
    store_meta meta;
    char *source; /* JSON text {"level", "level_version", "settings"}, or NULL */
    atomic_uint refs;
} api_vol_entry;

typedef struct api_volumes api_volumes;

/* An empty table over st (borrowed). NULL when out of memory. */
api_volumes *api_volumes_new(store *st);
void api_volumes_free(api_volumes *v);
/* Loads every stored volume (a damaged one is logged and skipped); count, or -1. */
long api_volumes_load(api_volumes *v);

/*
 * Makes memory agree with the store for volume `name` (a replica's change
 * notification): loads the stored version when it differs from memory's
 * (version, created and updated times), removes it when the store has none.
 * Serialized with local writes. A stored blob that cannot be loaded is
 * logged and memory keeps what it had (API_SYNC_SAME).
 */
api_sync_result api_volumes_sync(api_volumes *v, const char *name);
/* Compares every stored volume with memory (after a reconnection) and syncs each difference,
   both ways: the number loaded or removed, -1 when the store could not be read. */
long api_volumes_resync(api_volumes *v);

/* The current entry with a reference taken, or NULL. */
api_vol_entry *api_volumes_get(api_volumes *v, const char *name);
void api_vol_entry_release(api_vol_entry *e);

/* Stores vol (stolen) with source (copied) as the new version of name; *out referenced. */
api_code api_volumes_put(api_volumes *v, const char *name, nav_vol *vol, const char *source,
                         api_vol_entry **out, api_err *e);
/* Deletes name (API_E_NOT_FOUND when absent). */
api_code api_volumes_delete(api_volumes *v, const char *name, api_err *e);
/* Every entry sorted by name, referenced; free with api_volumes_list_free. */
size_t api_volumes_list(api_volumes *v, api_vol_entry ***out);
void api_volumes_list_free(api_vol_entry **list, size_t n);

/* This worker thread's path-search scratch for volumes (made on first use; a pool of
   --max-nodes nodes), or NULL when out of memory. */
struct api_config;
nav_vol_query *api_volume_thread_query(const struct api_config *cfg);

/* The contract's volume metadata; new reference. */
json_t *api_vol_entry_encode(const api_vol_entry *e);

#endif
