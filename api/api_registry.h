/*
 * api_registry: the navmeshes in memory, by name, and the only path by
 * which they change.
 *
 * Each name maps to its current version, an api_entry holding the built
 * mesh and its stored metadata. A lookup takes a reference under a read
 * lock; a replace swaps the entry pointer under the write lock, and the old
 * entry is freed when its last reference drops, so queries in flight finish
 * on the version they started with and nobody sees a half-replaced mesh.
 *
 * Writes (put, delete) go to the store first and are serialized by one
 * mutex, so the store and memory always agree on which version is current.
 */
#ifndef API_REGISTRY_H
#define API_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"
#include "nav/nav_mesh.h"
#include "storage/store.h"

/* One version of one navmesh. Read-only once published. */
typedef struct api_entry {
    nav_mesh *mesh;
    store_meta meta;
    atomic_uint refs;
} api_entry;

typedef struct api_registry api_registry;

/* An empty registry writing through to `st` (borrowed; must outlive it). */
api_registry *api_registry_new(store *st);
/* Frees the registry and drops its references (entries still held by others live on). */
void api_registry_free(api_registry *r);

/*
 * Loads every stored navmesh. A blob that fails to load is logged by name
 * and skipped. Returns the number loaded, or -1 when the store itself failed.
 */
long api_registry_load(api_registry *r);

/* The current entry for name with a reference taken, or NULL when absent. */
api_entry *api_registry_get(api_registry *r, const char *name);
/* Drops a reference from api_registry_get / put / snapshot; NULL is a no-op. */
void api_entry_release(api_entry *e);

/*
 * Stores `mesh` (stolen, freed on failure) as the new version of name and
 * publishes it. On success *out is the new entry with a reference taken and
 * *created is 1 when the name was new. On failure nothing changed.
 */
api_code api_registry_put(api_registry *r, const char *name, nav_mesh *mesh, api_entry **out,
                          int *created, api_err *e);

/* Deletes name from the store and memory; API_E_NOT_FOUND when absent. */
api_code api_registry_delete(api_registry *r, const char *name, api_err *e);

/* Number of navmeshes loaded. */
size_t api_registry_count(api_registry *r);
/* The store the registry writes through, for the other kinds it keeps
   (levels): borrowed, valid as long as the registry. */
store *api_registry_store(api_registry *r);

/*
 * Every current entry sorted by name, each with a reference taken; *out is
 * malloc'd. Release with api_registry_snapshot_free.
 */
size_t api_registry_snapshot(api_registry *r, api_entry ***out);
void api_registry_snapshot_free(api_entry **list, size_t n);

#endif
