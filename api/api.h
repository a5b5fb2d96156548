/*
 * api: the HTTP service as the process sees it: start a server over a
 * registry of navmeshes with a configuration, read back its port, stop it.
 *
 * Everything HTTP and JSON stays inside api/; service/ only fills an
 * api_config (from its own configuration table) and calls these.
 */
#ifndef API_H
#define API_H

#include <stddef.h>
#include <stdint.h>

#include "api/api_registry.h"
#include "nav/nav_bake.h"
#include "nav/nav_mesh.h"

#define API_VERSION "0.1.0"

/* Read-only once the server starts. Sizes in bytes, times in seconds. */
typedef struct api_config {
    const char *bind;                /* IPv4 or IPv6 literal address to listen on */
    uint16_t port;                   /* 0: an ephemeral port (read it back with api_server_port) */
    unsigned threads;                /* worker threads (>= 1) */
    const char *api_key;             /* NULL or "": writes need no key */
    size_t max_body;                 /* upload (navmesh PUT) body limit (413 beyond) */
    size_t max_query_body;           /* query body limit (413 beyond); 0: max_body */
    size_t max_body_memory;          /* bodies held at once by all requests (503 beyond); 0: none */
    unsigned max_batch;              /* queries per POST .../paths */
    unsigned max_agents;             /* agents per POST .../step */
    unsigned max_step_debug_samples; /* avoidance samples of a debug step response */
    unsigned max_nodes;          /* search node pool per worker thread = hard cap of max_nodes */
    nav_mesh_limits limits;      /* navmesh size limits for uploads */
    size_t cache_bytes;          /* path cache budget (0 disables it) */
    unsigned request_timeout;    /* whole request incl. body upload; 0 = none */
    unsigned connection_timeout; /* idle keep-alive connection timeout */
    unsigned max_connections;    /* concurrent connections */
    unsigned max_pending_writes; /* navmesh writes queued or running (503 beyond); 0 = 64 */
    unsigned max_connections_per_ip; /* 0: no per-address limit */
    unsigned request_deadline_ms;    /* compute budget of a batch or a step; 0 = none */
    unsigned max_level_triangles;    /* triangles per level (422 invalid_level beyond) */
    int allow_open_writes;           /* no key: accept writes from non-loopback peers too */
    unsigned max_concurrent_bakes;   /* bake threads (jobs running at once); 0 = 1 */
    unsigned max_queued_jobs;        /* jobs queued or running (503 beyond); 0 = 16 */
    unsigned jobs_kept;              /* finished jobs listed */
    unsigned bake_threads;           /* tile threads of one bake; 0 = 1 */
    nav_bake_limits bake_limits;     /* size limits of one bake (0 = none) */
    uint64_t max_volume_voxels;      /* voxels of one flight volume (422 beyond); 0 = 2^31 */
} api_config;

typedef struct api_server api_server;

/*
 * Starts listening and serving on worker threads. cfg and reg are borrowed
 * and must outlive the server. On failure returns NULL and writes a
 * sentence into err.
 */
api_server *api_server_start(const api_config *cfg, api_registry *reg, char *err, size_t errlen);

/* The port actually bound (the ephemeral one when cfg->port was 0). */
uint16_t api_server_port(const api_server *s);

/* Stops accepting, lets requests in flight finish, joins the workers and frees s. */
void api_server_stop(api_server *s);

/*
 * Builds the demo navmesh (see api_demo.c for its layout). Returns NAV_OK
 * and *out, or the build's status.
 */
nav_status api_demo_build(nav_mesh **out);

/* Builds the demo navmesh and stores it as "demo"; 0 on success. */
int api_demo_install(api_registry *reg);

/*
 * Stores vol (taken, freed in every case) as a new version of flight volume
 * `name` in the navd database at db_path, as a bake over HTTP would, with
 * source {"level": level_file, "level_version": null, "settings": s}: the
 * offline `navd bake-volume --db`. A running server sees it at its next
 * start. 0 on success, else -1 with a sentence in err.
 */
struct nav_vol;
struct nav_vol_settings;
int api_volume_install(const char *db_path, const char *name, struct nav_vol *vol,
                       const char *level_file, const struct nav_vol_settings *s, char *err,
                       size_t errlen);

#endif
