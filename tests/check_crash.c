/*
 * check_crash: crash safety of acknowledged writes.
 *
 * A client thread streams PUTs and DELETEs over a handful of names while
 * the test SIGKILLs the real binary at seeded random moments (a power cut
 * as far as the process is concerned), checks the database file with
 * SQLite's own PRAGMA integrity_check, restarts the service on the same
 * file and compares what it serves with what the client was told:
 * - every acknowledged write is there with the acknowledged version and
 *   content (a deleted name is absent);
 * - a write that was in flight when the kill came (sent, no answer) is
 *   either fully there (the next version, its own content) or not at all;
 * - nothing else: no version the client never wrote, no half mesh.
 * Each mesh's content identifies the write (its polygon count), so a mesh
 * that loaded from a torn blob or the wrong row would show.
 *
 * NAVD_CRASH_KILLS (default 30) and NAVD_CRASH_SEED override the run.
 */
#include <check.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/test_http.h"
#include "tests/test_fixtures.h"
#include "tests/test_load.h"

#define CR_NAMES 6
#define CR_MAX_QUADS 7

typedef struct cr_state {
    int present;
    long version;
    int polys;
} cr_state;

typedef enum cr_op { CR_NONE = 0, CR_PUT, CR_DELETE } cr_op;

typedef struct cr_client {
    uint16_t port;
    uint32_t rng;
    cr_state acked[CR_NAMES];
    cr_op pending[CR_NAMES]; /* sent, answer not received */
    int pending_polys[CR_NAMES];
    long acks;     /* acknowledged writes in total */
    char err[256]; /* an unexpected answer (not a transport failure) */
} cr_client;

/* A strip of n 1 m quads along x: 2n + 2 vertices, n polygons. */
static char *cr_mesh(int n, size_t *len) {
    size_t cap = 4096;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    size_t k = (size_t)snprintf(s, cap, "{\"vertices\": [");
    for (int i = 0; i <= n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s[%d,0,0],[%d,0,1]", i ? "," : "", i, i);
    k += (size_t)snprintf(s + k, cap - k, "], \"polygons\": [");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s[%d,%d,%d,%d]", i ? "," : "", 2 * i, 2 * i + 2,
                              2 * i + 3, 2 * i + 1);
    k += (size_t)snprintf(s + k, cap - k, "]}");
    *len = k;
    return s;
}

/* Streams writes until the connection fails (the kill). */
static void *cr_writer(void *arg) {
    cr_client *cl = arg;
    tl_conn c = {.fd = -1, .timeout_ms = 5000};
    if (tl_connect(&c, cl->port) != TL_OK)
        return NULL;
    for (;;) {
        int i = (int)(fx_rand(&cl->rng) % CR_NAMES);
        char path[64];
        snprintf(path, sizeof path, "/v1/navmeshes/crash-%d", i);
        int del = fx_rand(&cl->rng) % 4 == 0;
        tl_response r;
        int rc;
        if (del) {
            cl->pending[i] = CR_DELETE;
            rc = tl_request(&c, "DELETE", path, NULL, NULL, 0, NULL, &r);
        } else {
            int n = 1 + (int)(fx_rand(&cl->rng) % CR_MAX_QUADS);
            size_t len;
            char *body = cr_mesh(n, &len);
            cl->pending[i] = CR_PUT;
            cl->pending_polys[i] = n;
            rc = tl_request(&c, "PUT", path, "application/json", body, len, NULL, &r);
            free(body);
        }
        if (rc != TL_OK)
            break; /* killed: the op stays pending */
        cr_state *a = &cl->acked[i];
        if (del && r.status == 204) {
            a->present = 0;
        } else if (del && r.status == 404) {
            if (a->present)
                snprintf(cl->err, sizeof cl->err, "DELETE %s: 404 but it was stored", path);
        } else if (!del && (r.status == 200 || r.status == 201)) {
            long v = tl_json_long(r.body, "version");
            long expect = a->present ? a->version + 1 : 1;
            if (v != expect || (r.status == 201) != !a->present)
                snprintf(cl->err, sizeof cl->err, "PUT %s: %d version %ld, expected %ld", path,
                         r.status, v, expect);
            a->present = 1;
            a->version = v;
            a->polys = cl->pending_polys[i];
        } else {
            snprintf(cl->err, sizeof cl->err, "%s %s: unexpected %d %.100s", del ? "DELETE" : "PUT",
                     path, r.status, r.body);
        }
        cl->pending[i] = CR_NONE;
        cl->acks++;
        tl_response_free(&r);
        if (cl->err[0])
            break;
    }
    tl_close(&c);
    return NULL;
}

/* PRAGMA integrity_check on the file, with the service down. */
static void cr_integrity(const char *db, int kill_no) {
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    const char *res = (const char *)sqlite3_column_text(st, 0);
    ck_assert_msg(res && strcmp(res, "ok") == 0, "kill %d: integrity_check says %s", kill_no,
                  res ? res : "nothing");
    sqlite3_finalize(st);
    sqlite3_close(h);
}

/* Compares what the restarted service serves with the client's record. */
static void cr_verify(cr_client *cl, uint16_t port, int kill_no, int *inflight_seen) {
    tl_conn c = {.fd = -1};
    ck_assert_int_eq(tl_connect(&c, port), TL_OK);
    for (int i = 0; i < CR_NAMES; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/navmeshes/crash-%d", i);
        tl_response r;
        ck_assert_int_eq(tl_request(&c, "GET", path, NULL, NULL, 0, NULL, &r), TL_OK);
        ck_assert_msg(r.status == 200 || r.status == 404, "kill %d: GET %s: %d", kill_no, path,
                      r.status);
        cr_state got = {0, 0, 0};
        if (r.status == 200) {
            got.present = 1;
            got.version = tl_json_long(r.body, "version");
            got.polys = (int)tl_json_long(r.body, "polygons");
        }
        tl_response_free(&r);

        cr_state *a = &cl->acked[i];
        int same = got.present == a->present &&
                   (!got.present || (got.version == a->version && got.polys == a->polys));
        int ok = same;
        if (!ok && cl->pending[i] == CR_PUT) {
            /* The in-flight PUT committed: exactly the next version, with its content. */
            long next = a->present ? a->version + 1 : 1;
            ok = got.present && got.version == next && got.polys == cl->pending_polys[i];
        }
        if (!ok && cl->pending[i] == CR_DELETE)
            ok = !got.present;
        if (!same && ok)
            (*inflight_seen)++;
        ck_assert_msg(ok,
                      "kill %d: %s is %s v%ld (%d polygons); acknowledged %s v%ld (%d "
                      "polygons), in flight: %s",
                      kill_no, path, got.present ? "present" : "absent", got.version, got.polys,
                      a->present ? "present" : "absent", a->version, a->polys,
                      cl->pending[i] == CR_PUT      ? "PUT"
                      : cl->pending[i] == CR_DELETE ? "DELETE"
                                                    : "none");
        *a = got; /* what survived is the new truth */
        cl->pending[i] = CR_NONE;
    }
    tl_close(&c);
}

static long cr_env(const char *name, long def) {
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : def;
}

START_TEST(test_kill_restart) {
    if (!tl_navd_bin()) {
        printf("crash: navd binary not built: skipped\n");
        return;
    }
    int kills = (int)cr_env("NAVD_CRASH_KILLS", 30);
    uint32_t seed = (uint32_t)cr_env("NAVD_CRASH_SEED", 20261121);
    uint32_t sched = seed ? seed : 1;

    /* --threads 2 overrides test_http's 4 (navd takes the last value). */
    const char *args[] = {"--threads", "2", NULL};
    th_server srv;

    cr_client cl;
    memset(&cl, 0, sizeof cl);
    cl.rng = sched ^ 0x9e3779b9u;
    int inflight_seen = 0;
    double t0 = tl_now();
    for (int k = 1; k <= kills; k++) {
        /* the first start makes the temp dir and database; the others reopen it */
        int up = k == 1 ? th_start(&srv, NULL, args) : th_restart(&srv, args);
        ck_assert_msg(up == 0, "kill %d: navd did not restart", k - 1);
        if (k > 1)
            cr_verify(&cl, (uint16_t)srv.port, k - 1, &inflight_seen);
        cl.port = (uint16_t)srv.port;
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, cr_writer, &cl), 0);
        /* 20..200 ms of writes, then the power cut. */
        long ms = 20 + (long)(fx_rand(&sched) % 181);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        th_kill(&srv);
        pthread_join(th, NULL);
        ck_assert_msg(cl.err[0] == '\0', "kill %d: %s", k, cl.err);
        cr_integrity(srv.db, k);
    }
    /* The last restart: the state after the final kill. */
    ck_assert_int_eq(th_restart(&srv, args), 0);
    cr_verify(&cl, (uint16_t)srv.port, kills, &inflight_seen);
    int stop = th_stop(&srv);
    ck_assert_msg(stop == 0, "navd did not shut down cleanly on SIGTERM (%d); its log: %s", stop,
                  srv.log_path);
    cr_integrity(srv.db, kills);

    printf("crash: %d SIGKILLs survived (seed %u), %ld acknowledged writes kept, %d in-flight "
           "writes found committed, %.1f s\n",
           kills, seed, cl.acks, inflight_seen, tl_now() - t0);
    ck_assert_msg(cl.acks > kills, "the client wrote too little to test anything (%ld)", cl.acks);
    th_cleanup(&srv);
}
END_TEST

extern Suite *crash_suite(void);
Suite *crash_suite(void) {
    Suite *s = suite_create("crash");
    TCase *tc = tcase_create("kill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill_restart);
    suite_add_tcase(s, tc);
    return s;
}
