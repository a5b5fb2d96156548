/*
 * svc_config: the process configuration, described by one table (name,
 * flag, NAVD_* environment variable, type, default, bounds, help), parsed
 * once at start-up (defaults, then environment, then flags) and read-only
 * afterwards. `--help` prints the table.
 */
#ifndef SVC_CONFIG_H
#define SVC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct svc_config {
    uint64_t port;
    char bind[64];
    char db[1024];
    uint64_t threads;
    char api_key[256];
    uint64_t max_body;
    bool demo;
    uint64_t max_batch;
    uint64_t max_agents;
    uint64_t max_step_debug_samples;
    uint64_t max_nodes;
    uint64_t max_polys;
    uint64_t max_verts;
    uint64_t max_verts_per_poly;
    uint64_t max_links;
    uint64_t cache_bytes;
    uint64_t request_timeout;
    uint64_t connection_timeout;
    uint64_t max_connections;
    uint64_t max_pending_writes;
    uint64_t max_connections_per_ip;
    uint64_t request_deadline_ms;
    uint64_t max_query_body;
    uint64_t max_level_triangles;
    uint64_t max_body_memory;
    uint64_t pg_connect_timeout;
    uint64_t pg_timeout_ms;
    uint64_t pg_backoff_max_ms;
    uint64_t max_concurrent_bakes;
    uint64_t max_queued_jobs;
    uint64_t jobs_kept;
    uint64_t bake_threads;
    uint64_t max_bake_cells;
    uint64_t max_bake_spans;
    uint64_t max_bake_memory;
    uint64_t max_volume_voxels;
    bool allow_open_writes;
    char log_level[16];
} svc_config;

typedef enum svc_parse_result {
    SVC_CONFIG_OK = 0,   /* run */
    SVC_CONFIG_HELP = 1, /* --help was printed: exit 0 */
    SVC_CONFIG_BAD = 2   /* a message was written to err_out: exit 2 */
} svc_parse_result;

/*
 * Fills cfg from defaults, then the NAVD_* environment, then argv. On a bad
 * value writes one line naming the option to err_out.
 */
svc_parse_result svc_config_parse(svc_config *cfg, int argc, char **argv, FILE *err_out);

/* Prints the option table (flag, environment variable, default, meaning). */
void svc_config_usage(FILE *out);

#endif
