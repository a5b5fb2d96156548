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
#include "api/api_profiles.h"
#include "nav/nav_mesh.h"
#include "storage/store.h"

/*
 * One version of one navmesh: one complete mesh per agent profile (an
 * upload has the single profile "default"; a bake one per profile it was
 * given). Read-only once published.
 */
typedef struct api_entry {
    nav_mesh *mesh;        /* the default (first) profile's mesh: profiles[0].mesh */
    api_profile *profiles; /* nprofiles >= 1, in the order they were baked */
    uint32_t nprofiles;
    char *source; /* a bake's source as JSON text, or NULL for an upload */
    store_meta meta;
    atomic_uint refs;
} api_entry;

/*
 * The mesh of the named profile, or of the default (first) profile when
 * profile is NULL or ""; NULL when the entry has no such profile.
 */
const nav_mesh *api_entry_profile(const api_entry *e, const char *profile);

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

/*
 * As api_registry_put for a set of profiles (a bake): profiles (n >= 1,
 * meshes stolen and freed on failure, the array itself stays the caller's)
 * and the source description (JSON text, copied; may be NULL) become one
 * new version of name, stored as one blob.
 */
api_code api_registry_put_profiles(api_registry *r, const char *name, api_profile *profiles,
                                   uint32_t n, const char *source, api_entry **out, int *created,
                                   api_err *e);

/* Deletes name from the store and memory; API_E_NOT_FOUND when absent. */
api_code api_registry_delete(api_registry *r, const char *name, api_err *e);

/* Number of navmeshes loaded. */
size_t api_registry_count(api_registry *r);
/* The flight volumes kept beside the navmeshes (api_volume.h; loaded by the server at start,
   followed by replicas): borrowed, valid as long as the registry. */
struct api_volumes;
struct api_volumes *api_registry_volumes(api_registry *r);
/* The store the registry writes through, for the other kinds it keeps
   (levels): borrowed, valid as long as the registry. */
store *api_registry_store(api_registry *r);

/* ---- replicas: bringing memory in line with a store other processes write ---- */

typedef enum api_sync_result {
    API_SYNC_SAME,    /* memory already held the stored version (or both lack it) */
    API_SYNC_LOADED,  /* the stored version was loaded and swapped in */
    API_SYNC_REMOVED, /* the store no longer has it: removed from memory */
    API_SYNC_FAILED   /* the store could not be read: nothing changed, try again later */
} api_sync_result;

/*
 * Makes memory agree with the store for navmesh `name`: loads the stored
 * version when it differs from memory's (version, created and updated
 * times: a delete and re-create can reuse a version number), removes the
 * entry when the store has none. Serialized with local writes, so a
 * replica's own write is never reloaded or undone. *meta (may be NULL) gets
 * the stored metadata on API_SYNC_LOADED. A stored blob that cannot be
 * loaded is logged and memory keeps what it had (API_SYNC_SAME).
 */
api_sync_result api_registry_sync(api_registry *r, const char *name, store_meta *meta);

/*
 * Compares every stored navmesh with memory (after a reconnection:
 * notifications sent meanwhile are lost) and syncs each difference, both
 * ways. Returns the number of entries loaded or removed, -1 when the store
 * could not be read (nothing is removed then).
 */
long api_registry_resync(api_registry *r);

/*
 * Every current entry sorted by name, each with a reference taken; *out is
 * malloc'd. Release with api_registry_snapshot_free.
 */
size_t api_registry_snapshot(api_registry *r, api_entry ***out);
void api_registry_snapshot_free(api_entry **list, size_t n);

#endif
