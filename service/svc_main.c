/*
 * svc_main: the navd process. main() reads as its table of contents:
 * configuration -> store -> registry (load every stored mesh, the demo
 * when asked) -> replica sync (PostgreSQL) -> HTTP server -> wait for
 * SIGTERM/SIGINT -> teardown in the mirror order. Exit 0 after a clean shutdown, 1 when start-up
 * failed, 2 for a bad configuration.
 *
 * Signals: the handlers only set a flag (as Redis does). SIGTERM and SIGINT
 * are blocked before any thread starts, so only the main thread receives
 * them, inside sigsuspend: no race between testing the flag and sleeping.
 * This works as PID 1 in a container, where default actions do not apply.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"
#include "api/api_log.h"
#include "api/api_replica.h"
#include "service/svc_bake.h"
#include "service/svc_bake_volume.h"
#include "service/svc_config.h"
#include "storage/store.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* Blocks the stop signals (inherited by every thread started later) and installs the handler. */
static void signals_setup(sigset_t *old_mask) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client that hangs up must not kill the process */
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, old_mask);
}

static void wait_for_stop(const sigset_t *old_mask) {
    while (!stop_requested)
        sigsuspend(old_mask); /* atomically unblocks the stop signals and sleeps */
}

/* Creates the database's missing parent directories (like mkdir -p), so
   `navd --db data/navd.db` works in a fresh checkout or an empty volume. */
static void ensure_parent_dir(const char *path) {
    char dir[sizeof((svc_config *)0)->db];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0750);
        *p = '/';
    }
    mkdir(dir, 0750); /* EEXIST is fine; any other failure shows in store_open */
}

static void to_api_config(const svc_config *c, api_config *a) {
    memset(a, 0, sizeof *a);
    a->bind = c->bind;
    a->port = (uint16_t)c->port;
    a->threads = (unsigned)c->threads;
    a->api_key = c->api_key[0] ? c->api_key : NULL;
    a->max_body = (size_t)c->max_body;
    a->max_query_body = (size_t)c->max_query_body;
    a->max_body_memory = (size_t)c->max_body_memory;
    a->max_batch = (unsigned)c->max_batch;
    a->max_agents = (unsigned)c->max_agents;
    a->max_step_debug_samples = (unsigned)c->max_step_debug_samples;
    a->max_nodes = (unsigned)c->max_nodes;
    a->limits.max_polys = (uint32_t)c->max_polys;
    a->limits.max_verts = (uint32_t)c->max_verts;
    a->limits.max_verts_per_poly = (uint32_t)c->max_verts_per_poly;
    a->limits.max_links = (uint32_t)c->max_links;
    a->cache_bytes = (size_t)c->cache_bytes;
    a->request_timeout = (unsigned)c->request_timeout;
    a->connection_timeout = (unsigned)c->connection_timeout;
    a->max_connections = (unsigned)c->max_connections;
    a->max_pending_writes = (unsigned)c->max_pending_writes;
    a->max_connections_per_ip = (unsigned)c->max_connections_per_ip;
    a->request_deadline_ms = (unsigned)c->request_deadline_ms;
    a->max_level_triangles = (unsigned)c->max_level_triangles;
    a->allow_open_writes = c->allow_open_writes;
    a->max_concurrent_bakes = (unsigned)c->max_concurrent_bakes;
    a->max_queued_jobs = (unsigned)c->max_queued_jobs;
    a->jobs_kept = (unsigned)c->jobs_kept;
    a->bake_threads = (unsigned)c->bake_threads;
    a->bake_limits.max_cells = c->max_bake_cells;
    a->bake_limits.max_spans = c->max_bake_spans;
    a->bake_limits.max_memory = c->max_bake_memory;
    a->max_volume_voxels = c->max_volume_voxels;
}

int main(int argc, char **argv) {
    /* 0. offline tools: `navd bake ...` (navmesh) and `navd bake-volume ...`
       bake without serving */
    if (argc > 1 && !strcmp(argv[1], "bake"))
        return svc_bake_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "bake-volume"))
        return svc_bake_volume_main(argc - 1, argv + 1);

    /* 1. configuration */
    svc_config cfg;
    svc_parse_result pr = svc_config_parse(&cfg, argc, argv, stderr);
    if (pr != SVC_CONFIG_OK)
        return pr == SVC_CONFIG_HELP ? 0 : 2;
    api_log_set_level((api_log_level)api_log_level_parse(cfg.log_level));
    api_config acfg;
    to_api_config(&cfg, &acfg);
    sigset_t old_mask;
    signals_setup(&old_mask);

    /* 2. store */
    store *st = NULL;
    int pg = store_target_is_postgres(cfg.db);
    if (!pg)
        ensure_parent_dir(cfg.db);
    char why[512] = "";
    store_options sopt = {.connect_timeout_s = (unsigned)cfg.pg_connect_timeout,
                          .op_timeout_ms = (unsigned)cfg.pg_timeout_ms,
                          .backoff_max_ms = (unsigned)cfg.pg_backoff_max_ms};
    store_status ss = store_open_with(cfg.db, &sopt, &st, why, sizeof why);
    if (ss != STORE_OK) {
        /* the store's reason says which (not a database, newer schema, ...);
           a connection string is never printed: it may carry a password */
        api_log(API_LOG_ERROR, "cannot open the database %s: %s", pg ? "(PostgreSQL)" : cfg.db,
                why[0] ? why : store_status_text(ss));
        return 1;
    }
    char where[300];
    store_describe(st, where, sizeof where);

    /* 3. registry: every stored navmesh, then the demo when asked and empty */
    int rc = 1;
    api_server *srv = NULL;
    api_registry *reg = api_registry_new(st);
    if (!reg) {
        api_log(API_LOG_ERROR, "out of memory");
        goto close_store;
    }
    long loaded = api_registry_load(reg);
    if (loaded < 0) {
        api_log(API_LOG_ERROR, "cannot read the navmeshes stored in %s", where);
        goto free_registry;
    }
    api_log(API_LOG_INFO, "loaded %ld navmesh%s from %s", loaded, loaded == 1 ? "" : "es", where);
    if (cfg.demo && api_registry_count(reg) == 0 && api_demo_install(reg) != 0)
        api_log(API_LOG_WARN, "continuing without the demo navmesh");
    /* Other replicas' writes from now on (a no-op with SQLite). */
    if (api_replica_start(reg) != 0) {
        api_log(API_LOG_ERROR, "cannot watch the store for other replicas' changes");
        goto free_registry;
    }

    /* 4. server */
    char err[256];
    srv = api_server_start(&acfg, reg, err, sizeof err);
    if (!srv) {
        api_log(API_LOG_ERROR, "%s", err);
        goto free_registry;
    }
    /* Tests parse the port from this exact line. */
    fprintf(stderr, "navd: listening on %s:%u\n", cfg.bind, (unsigned)api_server_port(srv));
    fflush(stderr);

    /* 5. wait */
    wait_for_stop(&old_mask);
    api_log(API_LOG_INFO, "stopping: finishing requests in flight");

    /* 6. teardown, mirror order */
    api_server_stop(srv);
    rc = 0;
free_registry:
    api_replica_stop(reg);
    api_registry_free(reg);
close_store:
    store_close(st);
    if (rc == 0)
        api_log(API_LOG_INFO, "stopped");
    return rc;
}
