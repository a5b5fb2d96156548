/*
 * svc_config: the option table and its parser (see svc_config.h).
 *
 * Each row says where the value lives in svc_config (offset), how to parse
 * it and its bounds; defaults are strings parsed by the same code as user
 * input, so a default can never be outside its own bounds unnoticed.
 */
#include "service/svc_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api/api_log.h"

typedef enum svc_type {
    SVC_UINT,  /* decimal integer */
    SVC_BYTES, /* integer with optional K, M, G suffix (powers of 1024) */
    SVC_STR,
    SVC_BOOL,  /* a flag; in the environment 1/0, true/false, yes/no */
    SVC_LEVEL, /* log level name */
} svc_type;

typedef struct svc_option {
    const char *name; /* flag without the dashes */
    const char *env;
    svc_type type;
    const char *def; /* "" for none; "cores" = online CPUs */
    uint64_t min, max;
    size_t offset, size;
    const char *help;
} svc_option;

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define GIB (1024ull * 1024 * 1024)
#define F(field) offsetof(svc_config, field), sizeof(((svc_config *)0)->field)

static const svc_option options[] = {
    {"port", "NAVD_PORT", SVC_UINT, "8080", 0, 65535, F(port), "TCP port; 0 picks a free one"},
    {"bind", "NAVD_BIND", SVC_STR, "127.0.0.1", 0, 0, F(bind),
     "IPv4/IPv6 address to listen on (0.0.0.0: every interface)"},
    {"db", "NAVD_DB", SVC_STR, "data/navd.db", 0, 0, F(db),
     "SQLite database file, or a PostgreSQL connection string (postgres://..., "
     "postgresql://... or 'host=... dbname=...') for replicas"},
    {"pg-connect-timeout", "NAVD_PG_CONNECT_TIMEOUT", SVC_UINT, "2", 1, 600, F(pg_connect_timeout),
     "PostgreSQL: seconds per connection attempt (the connection string's connect_timeout "
     "wins)"},
    {"pg-timeout-ms", "NAVD_PG_TIMEOUT_MS", SVC_UINT, "5000", 100, 600000, F(pg_timeout_ms),
     "PostgreSQL: longest wait for one store call before the write answers 503"},
    {"pg-backoff-max-ms", "NAVD_PG_BACKOFF_MAX_MS", SVC_UINT, "2000", 50, 600000,
     F(pg_backoff_max_ms), "PostgreSQL: longest pause between reconnection attempts"},
    {"threads", "NAVD_THREADS", SVC_UINT, "cores", 1, 256, F(threads),
     "HTTP worker threads, and as many query threads (step, paths, exports)"},
    {"api-key", "NAVD_API_KEY", SVC_STR, "", 0, 0, F(api_key),
     "key required as 'Authorization: Bearer <key>' on PUT/DELETE (empty: none)"},
    {"allow-open-writes", "NAVD_ALLOW_OPEN_WRITES", SVC_BOOL, "false", 0, 1, F(allow_open_writes),
     "without --api-key, accept writes from non-loopback peers too (default: 403)"},
    {"max-body", "NAVD_MAX_BODY", SVC_BYTES, "64M", 1 * KIB, 4 * GIB, F(max_body),
     "largest upload body: navmesh PUT (413 beyond)"},
    {"max-query-body", "NAVD_MAX_QUERY_BODY", SVC_BYTES, "4M", 1 * KIB, 4 * GIB, F(max_query_body),
     "largest query body: path, paths, step... (413 beyond)"},
    {"max-body-memory", "NAVD_MAX_BODY_MEMORY", SVC_BYTES, "256M", 64 * KIB, 64 * GIB,
     F(max_body_memory), "request bodies held at once, all clients together (503 beyond)"},
    {"demo", "NAVD_DEMO", SVC_BOOL, "false", 0, 1, F(demo),
     "store a demo navmesh named 'demo' when the store is empty"},
    {"max-batch", "NAVD_MAX_BATCH", SVC_UINT, "1000", 1, 1000000, F(max_batch),
     "queries per POST .../paths"},
    {"max-agents", "NAVD_MAX_AGENTS", SVC_UINT, "10000", 1, 1000000, F(max_agents),
     "agents per POST .../step"},
    {"max-step-debug-samples", "NAVD_MAX_STEP_DEBUG_SAMPLES", SVC_UINT, "65536", 0, 100000000,
     F(max_step_debug_samples),
     "avoidance samples one step response returns with debug (avoidance_omitted beyond)"},
    {"max-nodes", "NAVD_MAX_NODES", SVC_UINT, "65536", 16, 16777216, F(max_nodes),
     "search node pool per worker thread (hard cap of a query's max_nodes)"},
    {"max-polys", "NAVD_MAX_POLYS", SVC_UINT, "1000000", 1, 100000000, F(max_polys),
     "polygons per navmesh"},
    {"max-verts", "NAVD_MAX_VERTS", SVC_UINT, "4000000", 3, 400000000, F(max_verts),
     "vertices per navmesh"},
    {"max-verts-per-poly", "NAVD_MAX_VERTS_PER_POLY", SVC_UINT, "64", 3, 65536,
     F(max_verts_per_poly), "vertices per polygon"},
    {"max-level-triangles", "NAVD_MAX_LEVEL_TRIANGLES", SVC_UINT, "4000000", 1, 400000000,
     F(max_level_triangles), "triangles per level (bake source geometry)"},
    {"max-concurrent-bakes", "NAVD_MAX_CONCURRENT_BAKES", SVC_UINT, "1", 1, 64,
     F(max_concurrent_bakes), "bake jobs running at once (each on its own thread)"},
    {"max-queued-jobs", "NAVD_MAX_QUEUED_JOBS", SVC_UINT, "16", 1, 100000, F(max_queued_jobs),
     "bake jobs queued or running at once (503 beyond)"},
    {"jobs-kept", "NAVD_JOBS_KEPT", SVC_UINT, "100", 0, 100000, F(jobs_kept),
     "finished jobs kept for GET /v1/jobs (in memory; none survive a restart)"},
    {"bake-threads", "NAVD_BAKE_THREADS", SVC_UINT, "cores", 1, 256, F(bake_threads),
     "threads one bake uses for its tiles (one tile: its profiles) and its meshes' joins"},
    {"max-bake-cells", "NAVD_MAX_BAKE_CELLS", SVC_UINT, "100000000", 1, 1ull << 40,
     F(max_bake_cells),
     "heightfield columns of one bake (the job fails with invalid_level beyond)"},
    {"max-bake-spans", "NAVD_MAX_BAKE_SPANS", SVC_UINT, "200000000", 1, 1ull << 40,
     F(max_bake_spans), "heightfield spans of one bake (the job fails with invalid_level beyond)"},
    {"max-bake-memory", "NAVD_MAX_BAKE_MEMORY", SVC_BYTES, "2G", 1 * MIB, 1024 * GIB,
     F(max_bake_memory), "working memory of one bake (the job fails with invalid_level beyond)"},
    {"max-volume-voxels", "NAVD_MAX_VOLUME_VOXELS", SVC_UINT, "134217728", 1, 1ull << 31,
     F(max_volume_voxels),
     "voxels of one flight volume's grid (a bake beyond is refused with 422 before any work)"},
    {"max-links", "NAVD_MAX_LINKS", SVC_UINT, "100000", 0, 100000000, F(max_links),
     "off-mesh links per navmesh"},
    {"cache-bytes", "NAVD_CACHE_BYTES", SVC_BYTES, "64M", 0, 64 * GIB, F(cache_bytes),
     "path cache budget (0 disables the cache)"},
    {"request-timeout", "NAVD_REQUEST_TIMEOUT", SVC_UINT, "60", 0, 86400, F(request_timeout),
     "seconds to deliver a request (headers and body) from connecting or the previous "
     "response; 0 = no limit"},
    {"request-deadline-ms", "NAVD_REQUEST_DEADLINE_MS", SVC_UINT, "2000", 0, 3600000,
     F(request_deadline_ms),
     "ms a paths batch or a step may compute before it stops with 503 (0 = no deadline)"},
    {"connection-timeout", "NAVD_CONNECTION_TIMEOUT", SVC_UINT, "30", 1, 86400,
     F(connection_timeout), "seconds an idle connection is kept open"},
    {"max-connections", "NAVD_MAX_CONNECTIONS", SVC_UINT, "1024", 1, 1000000, F(max_connections),
     "concurrent connections"},
    {"max-connections-per-ip", "NAVD_MAX_CONNECTIONS_PER_IP", SVC_UINT, "64", 1, 1000000,
     F(max_connections_per_ip), "concurrent connections from one client address (refused beyond)"},
    {"max-pending-writes", "NAVD_MAX_PENDING_WRITES", SVC_UINT, "64", 1, 1000000,
     F(max_pending_writes),
     "navmesh PUT/DELETE waiting for or running on the writer thread (503 beyond)"},
    {"log-level", "NAVD_LOG_LEVEL", SVC_LEVEL, "info", 0, 0, F(log_level),
     "error, warn, info (one line per request) or debug"},
};
#define NOPTIONS (sizeof options / sizeof options[0])

/* Parses text for option o into cfg; 0 on success, else writes why to err_out. */
static int set_value(svc_config *cfg, const svc_option *o, const char *text, const char *origin,
                     FILE *err_out) {
    void *field = (char *)cfg + o->offset;
    switch (o->type) {
    case SVC_STR:
        if (strlen(text) >= o->size) {
            fprintf(err_out, "navd: %s --%s is longer than %zu bytes\n", origin, o->name,
                    o->size - 1);
            return -1;
        }
        strcpy(field, text);
        return 0;
    case SVC_LEVEL:
        if (api_log_level_parse(text) < 0) {
            fprintf(err_out, "navd: %s --%s must be error, warn, info or debug (got '%s')\n",
                    origin, o->name, text);
            return -1;
        }
        snprintf(field, o->size, "%s", text);
        return 0;
    case SVC_BOOL:
        if (!strcmp(text, "1") || !strcasecmp(text, "true") || !strcasecmp(text, "yes")) {
            *(bool *)field = true;
        } else if (!strcmp(text, "0") || !strcasecmp(text, "false") || !strcasecmp(text, "no") ||
                   !*text) {
            *(bool *)field = false;
        } else {
            fprintf(err_out, "navd: %s --%s must be true or false (got '%s')\n", origin, o->name,
                    text);
            return -1;
        }
        return 0;
    case SVC_UINT:
    case SVC_BYTES: {
        uint64_t v;
        if (!strcmp(text, "cores")) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            v = n > 0 ? (uint64_t)n : 1;
            if (v > o->max)
                v = o->max;
        } else {
            char *end;
            errno = 0;
            unsigned long long x = strtoull(text, &end, 10);
            uint64_t mult = 1;
            if (o->type == SVC_BYTES && *end) {
                switch (*end == 'k' || *end == 'K'   ? 'K'
                        : *end == 'm' || *end == 'M' ? 'M'
                        : *end == 'g' || *end == 'G' ? 'G'
                                                     : 0) {
                case 'K':
                    mult = KIB;
                    end++;
                    break;
                case 'M':
                    mult = MIB;
                    end++;
                    break;
                case 'G':
                    mult = GIB;
                    end++;
                    break;
                default:
                    break;
                }
                if (*end == 'i' || *end == 'I')
                    end++;
                if (*end == 'b' || *end == 'B')
                    end++;
            }
            if (errno || end == text || *end || text[0] == '-' || x > UINT64_MAX / mult) {
                fprintf(err_out, "navd: %s --%s must be %s (got '%s')\n", origin, o->name,
                        o->type == SVC_BYTES ? "a byte count such as 65536 or 64M"
                                             : "a non-negative integer",
                        text);
                return -1;
            }
            v = (uint64_t)x * mult;
        }
        if (v < o->min || v > o->max) {
            fprintf(err_out, "navd: %s --%s must be from %llu to %llu (got '%s')\n", origin,
                    o->name, (unsigned long long)o->min, (unsigned long long)o->max, text);
            return -1;
        }
        *(uint64_t *)field = v;
        return 0;
    }
    }
    return -1;
}

void svc_config_usage(FILE *out) {
    fprintf(out, "usage: navd [options]\n\n"
                 "Every option can also be set by its environment variable; flags win.\n\n");
    fprintf(out, "  %-24s %-24s %-14s %s\n", "flag", "environment", "default", "meaning");
    for (size_t i = 0; i < NOPTIONS; i++) {
        char flag[40];
        snprintf(flag, sizeof flag, "--%s%s", options[i].name,
                 options[i].type == SVC_BOOL ? "" : " V");
        fprintf(out, "  %-24s %-24s %-14s %s\n", flag, options[i].env,
                options[i].def[0] ? options[i].def : "(none)", options[i].help);
    }
    fprintf(out, "  %-24s %-24s %-14s %s\n", "--help", "", "", "print this table and exit");
}

static const svc_option *find_option(const char *name, size_t len) {
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
            return &options[i];
    return NULL;
}

svc_parse_result svc_config_parse(svc_config *cfg, int argc, char **argv, FILE *err_out) {
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NOPTIONS; i++)
        if (set_value(cfg, &options[i], options[i].def, "default", err_out) != 0)
            return SVC_CONFIG_BAD;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const char *v = getenv(options[i].env);
        char origin[64];
        snprintf(origin, sizeof origin, "%s:", options[i].env);
        if (v && set_value(cfg, &options[i], v, origin, err_out) != 0)
            return SVC_CONFIG_BAD;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            svc_config_usage(stdout);
            return SVC_CONFIG_HELP;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(err_out, "navd: unexpected argument '%s' (see --help)\n", a);
            return SVC_CONFIG_BAD;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        const svc_option *o = find_option(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!o) {
            fprintf(err_out, "navd: unknown option '%s' (see --help)\n", a);
            return SVC_CONFIG_BAD;
        }
        const char *value;
        if (eq) {
            value = eq + 1;
        } else if (o->type == SVC_BOOL) {
            value = "true";
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            fprintf(err_out, "navd: --%s needs a value (see --help)\n", o->name);
            return SVC_CONFIG_BAD;
        }
        if (set_value(cfg, o, value, "option", err_out) != 0)
            return SVC_CONFIG_BAD;
    }
    return SVC_CONFIG_OK;
}
