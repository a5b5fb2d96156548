/*
 * api_replica: keeps this process's navmeshes in step with every other navd
 * writing the same PostgreSQL database.
 *
 * The store's keeper thread hands over each committed change (a name and a
 * version, never the mesh) and, after every (re)connection, a request to
 * compare everything; this module applies them to the registry
 * (api_registry_sync / api_registry_resync), which loads the new version
 * and swaps it in atomically. Levels need nothing: they are read from the
 * store on every request. With SQLite nothing is ever delivered.
 *
 * Also counts what /metrics reports: notifications applied, meshes loaded
 * and removed, resyncs, and the lag from a write's commit (its updated_ms,
 * the writer's clock) to the new version being live here.
 */
#ifndef API_REPLICA_H
#define API_REPLICA_H

#include "api/api_registry.h"

/* Starts applying the store's notifications to reg; 0 on success. */
int api_replica_start(api_registry *reg);
/* Stops it (waits for a change being applied); call before freeing reg. */
void api_replica_stop(api_registry *reg);

/* Prometheus text for the store and replica figures (malloc'd), or NULL. */
char *api_replica_metrics(api_registry *reg);

#endif
