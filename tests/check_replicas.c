/*
 * check_replicas: three real navd processes on one throwaway PostgreSQL,
 * with nginx in front (the shipped docker/nginx/navd.conf), all on
 * 127.0.0.1 ephemeral ports (tests/test_cluster.h). Skipped with a message
 * when PostgreSQL or nginx is not installed.
 *
 * What it proves, one test each:
 * - a write through one replica is served by the others (replace, delete,
 *   levels, an identical retry that makes no new version);
 * - kill -9 of a replica under query load through nginx: no query fails
 *   beyond those in flight, and the restarted replica serves what was
 *   written while it was down;
 * - PostgreSQL crashing and restarting under write load: no acknowledged
 *   write is lost, writes meanwhile get 503 quickly, reads never fail;
 * - a notification lost while a replica was cut off is repaired when it
 *   reconnects.
 * Each replica logs in as its own role (navd_r0..2), so one can be cut off
 * (NOLOGIN + pg_terminate_backend) while the others carry on. Every loop is
 * bounded in count and time. Latencies are the bench's business
 * (tests/bench/bench_pg.c); the bounds here only catch hangs.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/test_cluster.h"
#include "tests/test_http.h"
#include "tests/test_load.h"

extern Suite *replicas_suite(void);

#define NREP 3

static tc_pg g_pg;
static char g_failed[256];

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the cluster of one test ----------------------------------------------------------------- */

typedef struct cluster {
    char db[40];
    char url[NREP][160];
    th_server nv[NREP];
    tc_nginx ng;
    int ports[NREP];
} cluster;

/* No cleanup on failure is needed here: Check runs each test in its own
   process group and kills the group when the test ends, which takes the
   navd replicas and nginx with it (nginx is deliberately left in that
   group; PostgreSQL is not: it belongs to the whole case). */
static const char *const REPLICA_ARGS[] = {
    "--pg-backoff-max-ms", "200", "--pg-timeout-ms", "2000", "--log-level", "warn", NULL};

static void cluster_up(cluster *c) {
    ck_assert_msg(!g_failed[0], "%s", g_failed);
    memset(c, 0, sizeof *c);
    static unsigned seq;
    snprintf(c->db, sizeof c->db, "r%d_%u", (int)getpid(), ++seq);
    char sql[80];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", c->db);
    ck_assert_int_eq(tc_pg_exec(&g_pg, sql), 0);
    char db[sizeof c->db]; /* a copy: GCC's -Wrestrict sees c->db and c->url[i] as one object */
    memcpy(db, c->db, sizeof db);
    for (int i = 0; i < NREP; i++) {
        snprintf(c->url[i], sizeof c->url[i], "postgresql://navd_r%d@127.0.0.1:%d/%s", i, g_pg.port,
                 db);
        ck_assert_msg(th_start(&c->nv[i], c->url[i], REPLICA_ARGS) == 0, "replica %d", i);
        c->ports[i] = c->nv[i].port;
    }
    char why[256];
    ck_assert_msg(tc_nginx_start(&c->ng, c->ports, NREP, why, sizeof why) == 0, "%s", why);
}

static void cluster_down(cluster *c) {
    tc_nginx_stop(&c->ng);
    for (int i = 0; i < NREP; i++) {
        if (c->nv[i].pid > 0)
            ck_assert_int_eq(th_stop(&c->nv[i]), 0);
        th_cleanup(&c->nv[i]);
    }
    char sql[96];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", c->db);
    tc_pg_exec(&g_pg, sql);
}

/* Restarts replica i on its old port (nginx's upstream list names it). */
static void replica_restart(cluster *c, int i) {
    char port[16];
    snprintf(port, sizeof port, "%d", c->ports[i]);
    const char *args[16];
    int n = 0;
    for (; REPLICA_ARGS[n]; n++)
        args[n] = REPLICA_ARGS[n];
    args[n++] = "--port";
    args[n++] = port;
    args[n] = NULL;
    ck_assert_int_eq(th_restart(&c->nv[i], args), 0);
    ck_assert_int_eq(c->nv[i].port, c->ports[i]);
}

/* ---- meshes and requests --------------------------------------------------------------------- */

/* A strip of n unit quads along x: n polygons, so the polygon count tells
   which write a stored version came from. */
static char *strip(int n, size_t *len) {
    size_t cap = 64 + (size_t)n * 64;
    char *s = malloc(cap);
    size_t k = (size_t)snprintf(s, cap, "{\"vertices\":[");
    for (int i = 0; i <= n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s[%d,0,0],[%d,0,1]", i ? "," : "", i, i);
    k += (size_t)snprintf(s + k, cap - k, "],\"polygons\":[");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s[%d,%d,%d,%d]", i ? "," : "", 2 * i, 2 * i + 1,
                              2 * i + 3, 2 * i + 2);
    k += (size_t)snprintf(s + k, cap - k, "]}");
    *len = k;
    return s;
}

/* PUT a strip of n quads as name; returns the HTTP status (0: no answer). */
static int put_strip(int port, const char *name, int n, long *version) {
    size_t len;
    char *body = strip(n, &len);
    char path[96];
    snprintf(path, sizeof path, "/v1/navmeshes/%s", name);
    th_response r;
    int rc = th_request(port, "PUT", path, "application/json", body, len, NULL, &r);
    free(body);
    int status = rc == 0 ? r.status : 0;
    if (version)
        *version = status == 200 || status == 201 ? tl_json_long(r.body, "version") : -1;
    th_response_free(&r);
    return status;
}

/* GET name's metadata: version (0 when 404, -1 on any other answer) and polygons. */
static long get_version(int port, const char *name, long *polygons) {
    char path[96];
    snprintf(path, sizeof path, "/v1/navmeshes/%s", name);
    th_response r;
    long v = -1;
    if (th_request(port, "GET", path, NULL, NULL, 0, NULL, &r) == 0) {
        if (r.status == 404)
            v = 0;
        else if (r.status == 200) {
            v = tl_json_long(r.body, "version");
            if (polygons)
                *polygons = tl_json_long(r.body, "polygons");
        }
    }
    th_response_free(&r);
    return v;
}

/* Waits (at most 10 s) until port serves version v of name (0: absent). */
static int wait_version(int port, const char *name, long v) {
    for (int i = 0; i < 1000; i++) {
        if (get_version(port, name, NULL) == v)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

/* A path query across a strip of n quads; the HTTP status (0: no answer). */
static int query(int port, const char *name, int n) {
    char path[96], body[96];
    snprintf(path, sizeof path, "/v1/navmeshes/%s/path", name);
    snprintf(body, sizeof body, "{\"start\":[0.5,0,0.5],\"end\":[%d.5,0,0.5]}", n - 1);
    th_response r;
    int rc = th_request(port, "POST", path, "application/json", body, strlen(body), NULL, &r);
    int status = rc == 0 ? r.status : 0;
    th_response_free(&r);
    return status;
}

/* store.connected of /health: 1, 0, or -1 when it did not answer. */
static int health_connected(int port) {
    th_response r;
    int v = -1;
    if (th_request(port, "GET", "/health", NULL, NULL, 0, NULL, &r) == 0 && r.status == 200) {
        if (strstr(r.body, "\"store\":{\"kind\":\"postgres\",\"connected\":true}"))
            v = 1;
        else if (strstr(r.body, "\"store\":{\"kind\":\"postgres\",\"connected\":false}"))
            v = 0;
    }
    th_response_free(&r);
    return v;
}

static int wait_health(int port, int connected) {
    for (int i = 0; i < 1000; i++) {
        if (health_connected(port) == connected)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

/* One series of /metrics (the first line starting with name + ' '). */
static double metric(int port, const char *name) {
    th_response r;
    double v = -1;
    if (th_request(port, "GET", "/metrics", NULL, NULL, 0, NULL, &r) == 0 && r.status == 200) {
        size_t n = strlen(name);
        for (const char *p = r.body; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            if (strncmp(p, name, n) == 0 && p[n] == ' ') {
                v = strtod(p + n + 1, NULL);
                break;
            }
    }
    th_response_free(&r);
    return v;
}

/* ---- a write through one replica, served by the others ----------------------------------------
 */

START_TEST(t_propagation) {
    cluster c;
    cluster_up(&c);
    for (int i = 0; i < NREP; i++)
        ck_assert_int_eq(health_connected(c.ports[i]), 1);
    /* create on 0: the others serve version 1 (its 3 polygons) */
    long v = 0;
    ck_assert_int_eq(put_strip(c.ports[0], "alpha", 3, &v), 201);
    ck_assert_int_eq(v, 1);
    for (int i = 1; i < NREP; i++) {
        ck_assert_msg(wait_version(c.ports[i], "alpha", 1), "replica %d never saw alpha v1", i);
        long polys = 0;
        ck_assert_int_eq(get_version(c.ports[i], "alpha", &polys), 1);
        ck_assert_int_eq(polys, 3);
        ck_assert_int_eq(query(c.ports[i], "alpha", 3), 200);
    }
    /* replace on 2: 0 and 1 serve version 2 with 5 polygons */
    ck_assert_int_eq(put_strip(c.ports[2], "alpha", 5, &v), 200);
    ck_assert_int_eq(v, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert(wait_version(c.ports[i], "alpha", 2));
        long polys = 0;
        get_version(c.ports[i], "alpha", &polys);
        ck_assert_int_eq(polys, 5);
    }
    /* an identical retry (through nginx) makes no new version */
    ck_assert_int_eq(put_strip(c.ng.port, "alpha", 5, &v), 200);
    ck_assert_int_eq(v, 2);
    /* delete on 1: gone everywhere */
    th_response r;
    ck_assert_int_eq(
        th_request(c.ports[1], "DELETE", "/v1/navmeshes/alpha", NULL, NULL, 0, NULL, &r), 0);
    ck_assert_int_eq(r.status, 204);
    th_response_free(&r);
    for (int i = 0; i < NREP; i++)
        ck_assert_msg(wait_version(c.ports[i], "alpha", 0), "replica %d kept alpha", i);
    /* a level written on 0 is read on 2 (levels live in the store only) */
    const char *obj = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    ck_assert_int_eq(
        th_request(c.ports[0], "PUT", "/v1/levels/lvl", "model/obj", obj, strlen(obj), NULL, &r),
        0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    ck_assert_int_eq(th_json(c.ports[2], "GET", "/v1/levels/lvl", NULL, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"triangles\":1"), "%d %s", r.status, r.body);
    th_response_free(&r);
    /* the figures say what happened: replica 1 loaded two versions */
    ck_assert_int_ge(metric(c.ports[1], "navd_replica_loads_total"), 2);
    ck_assert_int_ge(metric(c.ports[1], "navd_replica_removals_total"), 0);
    ck_assert_int_ge(metric(c.ports[1], "navd_replica_lag_seconds_count"), 2);
    ck_assert_int_ge(metric(c.ports[0], "navd_store_notifications_total"), 3);
    cluster_down(&c);
}
END_TEST

/* ---- kill -9 of a replica under load through nginx --------------------------------------------
 */

#define LOAD_MESHES 12
#define LOAD_CLIENTS 2

typedef struct load_client {
    int port;
    atomic_int *stop;
    unsigned seed;
    const char *only; /* query this mesh only (NULL: m0..m11 at random) */
    int sent, failed, last_status;
} load_client;

static void *load_main(void *arg) {
    load_client *lc = arg;
    /* bounded: the main thread stops it within seconds; 20,000 is a cap */
    for (int i = 0; i < 20000 && !atomic_load(lc->stop); i++) {
        char name[16];
        snprintf(name, sizeof name, "%s", lc->only ? lc->only : "m");
        if (!lc->only)
            snprintf(name, sizeof name, "m%d", (int)(rand_r(&lc->seed) % LOAD_MESHES));
        int st = query(lc->port, name, 4);
        lc->sent++;
        if (st != 200) {
            lc->failed++;
            lc->last_status = st;
        }
    }
    return NULL;
}

START_TEST(t_kill_replica_under_load) {
    cluster c;
    cluster_up(&c);
    for (int m = 0; m < LOAD_MESHES; m++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", m);
        ck_assert_int_eq(put_strip(c.ng.port, name, 4, NULL), 201);
    }
    for (int i = 0; i < NREP; i++)
        for (int m = 0; m < LOAD_MESHES; m++) {
            char name[16];
            snprintf(name, sizeof name, "m%d", m);
            ck_assert(wait_version(c.ports[i], name, 1));
        }
    atomic_int stop = 0;
    load_client lc[LOAD_CLIENTS];
    pthread_t th[LOAD_CLIENTS];
    for (int k = 0; k < LOAD_CLIENTS; k++) {
        lc[k] = (load_client){.port = c.ng.port, .stop = &stop, .seed = 7u + (unsigned)k};
        ck_assert_int_eq(pthread_create(&th[k], NULL, load_main, &lc[k]), 0);
    }
    sleep_ms(700);
    th_kill(&c.nv[1]); /* kill -9 */
    sleep_ms(700);
    /* written while replica 1 is down: a new version of m3, and m99 */
    long v = 0;
    ck_assert_int_eq(put_strip(c.ng.port, "m3", 4 + 2, &v), 200);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(put_strip(c.ng.port, "m99", 2, &v), 201);
    replica_restart(&c, 1);
    sleep_ms(700);
    atomic_store(&stop, 1);
    int sent = 0, failed = 0, last = 0;
    for (int k = 0; k < LOAD_CLIENTS; k++) {
        pthread_join(th[k], NULL);
        sent += lc[k].sent;
        failed += lc[k].failed;
        if (lc[k].failed)
            last = lc[k].last_status;
    }
    /* nginx retries a request whose replica vanished on the next one, so
       not even the in-flight ones should fail; at most one per client
       (those in flight at the kill) is tolerated. */
    ck_assert_msg(failed <= LOAD_CLIENTS, "%d of %d queries failed (last status %d)", failed, sent,
                  last);
    ck_assert_int_gt(sent, 20);
    /* the restarted replica loaded what it missed at start */
    long polys = 0;
    ck_assert_int_eq(get_version(c.ports[1], "m3", &polys), 2);
    ck_assert_int_eq(polys, 6);
    ck_assert_int_eq(get_version(c.ports[1], "m99", NULL), 1);
    ck_assert_int_eq(query(c.ports[1], "m99", 2), 200);
    cluster_down(&c);
}
END_TEST

/* ---- PostgreSQL restarts under write load -----------------------------------------------------
 */

#define W_NAMES 4

typedef struct writer {
    int port;
    atomic_int *stop;
    int n;                      /* the polygons of the next write (grows: each write differs) */
    long acked_v[W_NAMES];      /* last acknowledged version per name */
    int acked_polys[W_NAMES];   /* and its content */
    int attempted[W_NAMES][64]; /* polygons of writes not acknowledged after the last ack */
    int nattempted[W_NAMES];
    int ok, unavailable, other, other_status;
    double max_503_ms;
} writer;

static void *writer_main(void *arg) {
    writer *w = arg;
    for (int i = 0; i < 4000 && !atomic_load(w->stop); i++) {
        int k = i % W_NAMES;
        char name[16];
        snprintf(name, sizeof name, "w%d", k);
        int polys = ++w->n;
        long v = 0;
        double t0 = tc_now_ms();
        int st = put_strip(w->port, name, polys, &v);
        double dt = tc_now_ms() - t0;
        if (st == 200 || st == 201) {
            w->ok++;
            w->acked_v[k] = v;
            w->acked_polys[k] = polys;
            w->nattempted[k] = 0;
        } else {
            if (w->nattempted[k] < 64)
                w->attempted[k][w->nattempted[k]++] = polys;
            if (st == 503) {
                w->unavailable++;
                if (dt > w->max_503_ms)
                    w->max_503_ms = dt;
                sleep_ms(20); /* a client backing off */
            } else {
                w->other++;
                w->other_status = st;
            }
        }
    }
    return NULL;
}

START_TEST(t_pg_restart_under_writes) {
    cluster c;
    cluster_up(&c);
    ck_assert_int_eq(put_strip(c.ports[0], "read", 4, NULL), 201);
    for (int i = 0; i < NREP; i++)
        ck_assert(wait_version(c.ports[i], "read", 1));
    atomic_int stop = 0;
    writer w = {.port = c.ports[0], .stop = &stop};
    load_client rd = {.port = c.ng.port, .stop = &stop, .seed = 3, .only = "read"};
    pthread_t wt, rt;
    ck_assert_int_eq(pthread_create(&wt, NULL, writer_main, &w), 0);
    /* the reader queries "read" only */
    ck_assert_int_eq(pthread_create(&rt, NULL, load_main, &rd), 0);
    sleep_ms(600);
    ck_assert_int_eq(tc_pg_stop(&g_pg, "immediate"), 0); /* a crash: recovery from the WAL */
    ck_assert(wait_health(c.ports[0], 0));
    sleep_ms(800);
    ck_assert_int_eq(tc_pg_restart(&g_pg), 0);
    for (int i = 0; i < NREP; i++)
        ck_assert_msg(wait_health(c.ports[i], 1), "replica %d did not reconnect", i);
    sleep_ms(600);
    atomic_store(&stop, 1);
    pthread_join(wt, NULL);
    pthread_join(rt, NULL);
    ck_assert_msg(rd.failed == 0, "%d of %d reads failed (status %d)", rd.failed, rd.sent,
                  rd.last_status);
    ck_assert_msg(w.other == 0, "%d writes answered %d (neither 2xx nor 503)", w.other,
                  w.other_status);
    ck_assert_int_gt(w.unavailable, 0); /* the outage was seen */
    ck_assert_int_gt(w.ok, 4);
    /* a hang check: 503 within the op timeout (2 s) plus slack */
    ck_assert_msg(w.max_503_ms < 4000, "a 503 took %.0f ms", w.max_503_ms);
    /* No acknowledged write lost: each name is at its last acknowledged
       version with that content, or later with the content of a write
       whose answer was lost (it committed before the crash). */
    for (int k = 0; k < W_NAMES; k++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", k);
        long polys = 0;
        long v = get_version(c.ports[0], name, &polys);
        ck_assert_msg(v >= w.acked_v[k], "%s: stored v%ld < acknowledged v%ld", name, v,
                      w.acked_v[k]);
        int known = polys == w.acked_polys[k] && v == w.acked_v[k];
        for (int j = 0; j < w.nattempted[k] && !known; j++)
            known = polys == w.attempted[k][j] && v > w.acked_v[k];
        ck_assert_msg(known, "%s: stored v%ld with %ld polygons, acknowledged v%ld with %d", name,
                      v, polys, w.acked_v[k], w.acked_polys[k]);
        /* and the other replicas agree */
        for (int i = 1; i < NREP; i++)
            ck_assert_msg(wait_version(c.ports[i], name, v), "replica %d: %s not at v%ld", i, name,
                          v);
    }
    ck_assert_int_ge(metric(c.ports[1], "navd_store_reconnects_total"), 2);
    cluster_down(&c);
}
END_TEST

/* ---- a notification lost while disconnected ---------------------------------------------------
 */

START_TEST(t_lost_notification_repaired) {
    cluster c;
    cluster_up(&c);
    ck_assert_int_eq(put_strip(c.ports[0], "x", 2, NULL), 201);
    ck_assert_int_eq(put_strip(c.ports[0], "y", 2, NULL), 201);
    ck_assert(wait_version(c.ports[2], "x", 1));
    ck_assert(wait_version(c.ports[2], "y", 1));
    double resyncs = metric(c.ports[2], "navd_replica_resyncs_total");
    /* cut replica 2 off */
    ck_assert_int_eq(tc_pg_exec(&g_pg, "ALTER ROLE navd_r2 NOLOGIN"), 0);
    ck_assert_int_ge(tc_pg_long(&g_pg, "SELECT count(pg_terminate_backend(pid)) FROM "
                                       "pg_stat_activity WHERE usename = 'navd_r2'"),
                     1);
    ck_assert(wait_health(c.ports[2], 0));
    /* changes it cannot hear of */
    long v = 0;
    ck_assert_int_eq(put_strip(c.ports[0], "x", 7, &v), 200);
    ck_assert_int_eq(v, 2);
    th_response r;
    ck_assert_int_eq(th_request(c.ports[1], "DELETE", "/v1/navmeshes/y", NULL, NULL, 0, NULL, &r),
                     0);
    ck_assert_int_eq(r.status, 204);
    th_response_free(&r);
    ck_assert_int_eq(put_strip(c.ports[1], "z", 3, NULL), 201);
    /* replica 2 missed them (and keeps answering from memory) ... */
    sleep_ms(300);
    long polys = 0;
    ck_assert_int_eq(get_version(c.ports[2], "x", &polys), 1);
    ck_assert_int_eq(polys, 2);
    ck_assert_int_eq(get_version(c.ports[2], "y", NULL), 1);
    ck_assert_int_eq(get_version(c.ports[2], "z", NULL), 0);
    ck_assert_int_eq(query(c.ports[2], "x", 2), 200);
    /* ... its writes answer 503 ... */
    ck_assert_int_eq(put_strip(c.ports[2], "q", 2, NULL), 503);
    /* ... and once it may log in again, the resync repairs all three */
    ck_assert_int_eq(tc_pg_exec(&g_pg, "ALTER ROLE navd_r2 LOGIN"), 0);
    ck_assert(wait_health(c.ports[2], 1));
    ck_assert(wait_version(c.ports[2], "x", 2));
    ck_assert(wait_version(c.ports[2], "y", 0));
    ck_assert(wait_version(c.ports[2], "z", 1));
    get_version(c.ports[2], "x", &polys);
    ck_assert_int_eq(polys, 7);
    ck_assert_int_gt(metric(c.ports[2], "navd_replica_resyncs_total"), resyncs);
    ck_assert_int_ge(metric(c.ports[2], "navd_store_reconnects_total"), 1);
    /* nothing failed to apply (an outage is not a failure), and the log
       (at --log-level warn) says what happened */
    ck_assert_int_eq(metric(c.ports[2], "navd_replica_sync_failures_total"), 0);
    char *log = th_log(&c.nv[2]);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "lost the connection to the store") != NULL, "%s", log);
    free(log);
    cluster_down(&c);
}
END_TEST

static void replicas_setup(void) {
    char why[200] = "";
    if (tc_pg_start(&g_pg, why, sizeof why) != 0) {
        snprintf(g_failed, sizeof g_failed, "PostgreSQL: %s", why);
        return;
    }
    if (tc_pg_exec(&g_pg, "CREATE ROLE navd_r0 LOGIN SUPERUSER; CREATE ROLE navd_r1 LOGIN "
                          "SUPERUSER; CREATE ROLE navd_r2 LOGIN SUPERUSER") != 0)
        snprintf(g_failed, sizeof g_failed, "cannot create the replicas' roles");
}

static void replicas_teardown(void) {
    tc_pg_destroy(&g_pg);
}

Suite *replicas_suite(void) {
    Suite *s = suite_create("replicas");
    char why[200];
    if (tc_pg_available(why, sizeof why) != 0 || tc_nginx_available(why, sizeof why) != 0) {
        printf("skip: replicas: %s\n", why);
        return s;
    }
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, replicas_setup, replicas_teardown);
    tcase_add_test(tc, t_propagation);
    tcase_add_test(tc, t_kill_replica_under_load);
    tcase_add_test(tc, t_pg_restart_under_writes);
    tcase_add_test(tc, t_lost_notification_repaired);
    suite_add_tcase(s, tc);
    return s;
}
