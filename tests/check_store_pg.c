/*
 * check_store_pg: what only the PostgreSQL store does, against a throwaway
 * cluster (tests/test_cluster.h): change notifications in commit order,
 * reconnection after the server drops the connections (with a RESYNC, since
 * notifications sent meanwhile are lost), failing fast while the server
 * refuses us, refusing a newer schema, several navd creating the schema at
 * once, never echoing a password, a walk slower than the call bound, and a
 * failover across a multi-host connection string. The tests every backend
 * passes are in check_store.c. Skipped with a message when PostgreSQL is not
 * installed.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/store.h"
#include "tests/test_cluster.h"

extern Suite *store_pg_suite(void);

static tc_pg g_pg;
static tc_pg g_pg2; /* a second server: the "next host" of t_failover */
static char g_failed[256];

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new database; its connection string (as role, NULL: navd) in url. */
static void new_db(char *db, size_t dbn, char *url, size_t urln, const char *role) {
    ck_assert_msg(!g_failed[0], "PostgreSQL: %s", g_failed);
    static unsigned seq;
    snprintf(db, dbn, "p%d_%u", (int)getpid(), ++seq);
    char sql[96];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    ck_assert_int_eq(tc_pg_exec(&g_pg, sql), 0);
    snprintf(url, urln, "postgresql://%s@127.0.0.1:%d/%s", role ? role : "navd", g_pg.port, db);
}

static void drop_db(const char *db) {
    char sql[96];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    tc_pg_exec(&g_pg, sql);
}

static store *open_url(const char *url) {
    store *s = NULL;
    char why[300];
    store_options o = {.backoff_max_ms = 200, .op_timeout_ms = 2000};
    store_status st = store_open_with(url, &o, &s, why, sizeof why);
    ck_assert_msg(st == STORE_OK, "open: %s (%s)", store_status_text(st), why);
    return s;
}

/* ---- a watcher that records events --------------------------------------------------------------
 */

#define REC_MAX 64

typedef struct recorder {
    pthread_mutex_t lock;
    int n;
    store_event ev[REC_MAX];
} recorder;

static int record(void *ctx, const store_event *ev) {
    recorder *r = ctx;
    pthread_mutex_lock(&r->lock);
    if (r->n < REC_MAX)
        r->ev[r->n++] = *ev;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

/* Waits (at most 10 s) until at least n events arrived; returns the count. */
static int wait_events(recorder *r, int n) {
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&r->lock);
        int have = r->n;
        pthread_mutex_unlock(&r->lock);
        if (have >= n)
            return have;
        sleep_ms(10);
    }
    return r->n;
}

static void expect_event(const recorder *r, int i, store_event_type type, store_kind kind,
                         const char *name, int64_t version) {
    const store_event *e = &r->ev[i];
    ck_assert_msg(e->type == type, "event %d: type %d, expected %d", i, e->type, type);
    if (type == STORE_EV_RESYNC || type == STORE_EV_DISCONNECTED)
        return;
    ck_assert_msg(e->kind == kind && strcmp(e->name, name) == 0 && e->version == version,
                  "event %d: %s %s v%lld, expected %s %s v%lld", i, store_kind_table(e->kind),
                  e->name, (long long)e->version, store_kind_table(kind), name, (long long)version);
    ck_assert_int_gt(e->received_ms, 0);
}

START_TEST(t_notifications) {
    /* A writes, B watches: B gets a RESYNC first, then every committed
       change in commit order, each "kind:name:version" (0 for a delete). An
       identical put with idempotent puts changes nothing, so announces
       nothing: the event after the delete is "end". */
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, NULL);
    store *a = open_url(url), *b = open_url(url);
    recorder rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ck_assert_int_eq(store_watch(b, record, &rec), STORE_OK);
    ck_assert_int_eq(store_watch(b, record, &rec), STORE_INVALID_ARG); /* one watcher */
    ck_assert_int_eq(wait_events(&rec, 1), 1);
    expect_event(&rec, 0, STORE_EV_RESYNC, 0, NULL, 0);

    ck_assert_int_eq(store_put(a, STORE_NAVMESH, "w1", "one", 3, 1, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(a, STORE_NAVMESH, "w1", "two", 3, 2, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(a, STORE_LEVEL, "w1", "lvl", 3, 3, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_delete(a, STORE_NAVMESH, "w1"), STORE_OK);
    ck_assert_int_eq(store_put(a, STORE_LEVEL, "w1", "lvl", 3, 4, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(a, STORE_VOLUME, "end", "", 0, 5, NULL, NULL), STORE_OK);
    ck_assert_int_eq(wait_events(&rec, 6), 6);
    sleep_ms(100); /* nothing more may come */
    ck_assert_int_eq(rec.n, 6);
    expect_event(&rec, 1, STORE_EV_CHANGED, STORE_NAVMESH, "w1", 1);
    expect_event(&rec, 2, STORE_EV_CHANGED, STORE_NAVMESH, "w1", 2);
    expect_event(&rec, 3, STORE_EV_CHANGED, STORE_LEVEL, "w1", 1);
    expect_event(&rec, 4, STORE_EV_DELETED, STORE_NAVMESH, "w1", 0);
    expect_event(&rec, 5, STORE_EV_CHANGED, STORE_VOLUME, "end", 1);
    store_stats st;
    store_get_stats(b, &st);
    ck_assert_int_eq(st.notifications, 5);
    ck_assert_int_eq(st.connected, 1);
    ck_assert_int_eq(st.reconnects, 0);

    /* After unwatch nothing is delivered. */
    store_unwatch(b);
    ck_assert_int_eq(store_put(a, STORE_NAVMESH, "late", "x", 1, 6, NULL, NULL), STORE_OK);
    sleep_ms(200);
    ck_assert_int_eq(rec.n, 6);
    store_close(a);
    store_close(b);
    drop_db(db);
}
END_TEST

START_TEST(t_reconnect) {
    /* The server drops B's connections (as a restart or failover does):
       B says so (DISCONNECTED), reconnects on its own, counts it, and sends
       RESYNC again; a write
       made while it was disconnected is in the store for the resync to
       find. */
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, NULL);
    store *b = open_url(url);
    recorder rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ck_assert_int_eq(store_watch(b, record, &rec), STORE_OK);
    ck_assert_int_eq(wait_events(&rec, 1), 1);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '%s' "
             "AND application_name LIKE 'navd%%'",
             db);
    ck_assert_int_eq(tc_pg_long(&g_pg, sql), 2); /* main + listen */
    ck_assert_int_ge(wait_events(&rec, 3), 3);
    expect_event(&rec, 1, STORE_EV_DISCONNECTED, 0, NULL, 0);
    expect_event(&rec, 2, STORE_EV_RESYNC, 0, NULL, 0);
    store_stats st;
    for (int i = 0; i < 500; i++) { /* both connections back: at most 5 s */
        store_get_stats(b, &st);
        if (st.connected && st.reconnects >= 2)
            break;
        sleep_ms(10);
    }
    ck_assert_int_eq(st.connected, 1);
    ck_assert_int_ge(st.reconnects, 2);
    ck_assert_int_ge(st.disconnects, 2);
    /* the handle works again */
    store_meta m;
    ck_assert_int_eq(store_put(b, STORE_NAVMESH, "after", "x", 1, 7, &m, NULL), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    store_close(b);
    drop_db(db);
}
END_TEST

START_TEST(t_down_fails_fast) {
    /* While the server refuses B (its role may not log in, its sessions
       are terminated), a put fails at once with STORE_UNAVAILABLE instead of
       waiting, reads do too, and /health's flag is 0; once the role may log
       in again B reconnects by itself (backoff capped at 200 ms here) and the
       same put succeeds. */
    tc_pg_exec(&g_pg, "DROP ROLE IF EXISTS navd_down; CREATE ROLE navd_down LOGIN SUPERUSER");
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, "navd_down");
    store *b = open_url(url);
    ck_assert_int_eq(store_connected(b), 1);
    ck_assert_int_eq(tc_pg_exec(&g_pg, "ALTER ROLE navd_down NOLOGIN"), 0);
    ck_assert_int_ge(tc_pg_long(&g_pg, "SELECT count(pg_terminate_backend(pid)) FROM "
                                       "pg_stat_activity WHERE usename = 'navd_down'"),
                     1);
    for (int i = 0; i < 500 && store_connected(b); i++)
        sleep_ms(10);
    ck_assert_int_eq(store_connected(b), 0);
    double t0 = tc_now_ms();
    store_status st = STORE_OK;
    for (int i = 0; i < 5; i++)
        st = store_put(b, STORE_NAVMESH, "x", "y", 1, 1, NULL, NULL);
    double dt = tc_now_ms() - t0;
    ck_assert_int_eq(st, STORE_UNAVAILABLE);
    /* A hang check, not a benchmark: five refused writes in far less than
       one op timeout (2 s). */
    ck_assert_msg(dt < 1000, "5 writes while down took %.0f ms", dt);
    ck_assert_int_eq(store_get(b, STORE_NAVMESH, "x", NULL, NULL, NULL), STORE_UNAVAILABLE);

    ck_assert_int_eq(tc_pg_exec(&g_pg, "ALTER ROLE navd_down LOGIN"), 0);
    for (int i = 0; i < 1000 && !store_connected(b); i++)
        sleep_ms(10);
    ck_assert_int_eq(store_connected(b), 1);
    store_meta m;
    ck_assert_int_eq(store_put(b, STORE_NAVMESH, "x", "y", 1, 1, &m, NULL), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    store_close(b);
    drop_db(db);
}
END_TEST

START_TEST(t_open_errors) {
    /* Nobody listens: STORE_UNAVAILABLE with libpq's reason, which never
       repeats the password of the connection string. */
    int port = tc_free_port();
    char url[160], why[400];
    snprintf(url, sizeof url, "postgresql://navd:s3cretpw@127.0.0.1:%d/navd", port);
    store *s = (store *)url;
    store_options o = {.connect_timeout_s = 2};
    ck_assert_int_eq(store_open_with(url, &o, &s, why, sizeof why), STORE_UNAVAILABLE);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(why, "cannot connect") != NULL, "%s", why);
    ck_assert_msg(strstr(why, "s3cretpw") == NULL, "the password leaked: %s", why);
    /* A string libpq cannot parse. */
    ck_assert_int_eq(store_open_with("host=x nonsense_keyword=1", &o, &s, why, sizeof why),
                     STORE_INVALID_ARG);
    ck_assert_msg(strstr(why, "nonsense_keyword") != NULL, "%s", why);
    /* describe names the database, never the string */
    char db[40];
    new_db(db, sizeof db, url, sizeof url, NULL);
    s = open_url(url);
    char d[300];
    store_describe(s, d, sizeof d);
    ck_assert_msg(strstr(d, db) != NULL && strstr(d, "postgresql://") == NULL, "%s", d);
    store_close(s);
    drop_db(db);
}
END_TEST

START_TEST(t_newer_schema_refused) {
    char db[40], url[160], why[300];
    new_db(db, sizeof db, url, sizeof url, NULL);
    store *s = open_url(url);
    ck_assert_int_eq(store_schema_version(s), 1);
    ck_assert_int_eq(store_check(s), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "kept", "k", 1, 1, NULL, NULL), STORE_OK);
    store_close(s);
    /* a future navd migrated the database to version 9 */
    tc_pg other = g_pg;
    snprintf(other.conninfo, sizeof other.conninfo, "%s", url);
    ck_assert_int_eq(tc_pg_exec(&other, "UPDATE navd_schema SET version = 9"), 0);
    s = (store *)why;
    ck_assert_int_eq(store_open_with(url, NULL, &s, why, sizeof why), STORE_IO);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(why, "newer") && strstr(why, "9"), "%s", why);
    ck_assert_int_eq(tc_pg_long(&other, "SELECT version FROM navd_schema"), 9);
    ck_assert_int_eq(tc_pg_long(&other, "SELECT count(*) FROM navd_entries"), 1);
    drop_db(db);
}
END_TEST

START_TEST(t_migrate_race) {
    /* Four processes open one brand-new database at once (released by one
       close of a pipe): the advisory lock lets exactly one create the
       schema; all four open and write. */
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, NULL);
    int gate[2];
    ck_assert_int_eq(pipe(gate), 0);
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            close(gate[1]);
            char c;
            if (read(gate[0], &c, 1) != 0)
                _exit(5);
            store *s = NULL;
            if (store_open(url, &s) != STORE_OK || store_schema_version(s) != 1)
                _exit(2);
            char name[24];
            snprintf(name, sizeof name, "proc-%d", k);
            int rc = store_put(s, STORE_NAVMESH, name, "p", 1, k, NULL, NULL) == STORE_OK ? 0 : 3;
            store_close(s);
            _exit(rc);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (int k = 0; k < 4; k++) {
        int status = 0;
        ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status %d", k,
                      status);
    }
    tc_pg other = g_pg;
    snprintf(other.conninfo, sizeof other.conninfo, "%s", url);
    ck_assert_int_eq(tc_pg_long(&other, "SELECT count(*) FROM navd_entries"), 4);
    ck_assert_int_eq(tc_pg_long(&other, "SELECT count(*) FROM navd_schema"), 1);
    drop_db(db);
}
END_TEST

typedef struct slow_walk {
    int calls;
    size_t bytes;
} slow_walk;

static int slow_row(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    (void)meta, (void)blob;
    slow_walk *w = ctx;
    w->calls++;
    w->bytes += len;
    sleep_ms(30);
    return 0;
}

START_TEST(t_slow_walk) {
    /* Start-up loads every mesh while it walks the rows, so a walk can take
       far longer than one call's bound (here 300 ms): forty 1 MiB rows
       that take 30 ms each to consume (far more than the socket buffers
       hold, so the server waits on us). The walk must complete: the bound
       applies to each row's wait, not to the whole walk (the server's
       statement_timeout, the same bound, failed this walk before it was
       lifted for walks). */
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, NULL);
    store *s = NULL;
    char why[300];
    store_options o = {.op_timeout_ms = 300};
    ck_assert_int_eq(store_open_with(url, &o, &s, why, sizeof why), STORE_OK);
    size_t n = 1 << 20;
    unsigned char *blob = malloc(n);
    ck_assert_ptr_nonnull(blob);
    for (int i = 0; i < 40; i++) {
        for (size_t k = 0; k < n; k++)
            blob[k] = (unsigned char)(k * 31 + (size_t)i);
        char name[16];
        snprintf(name, sizeof name, "big%d", i);
        ck_assert_int_eq(store_put(s, STORE_NAVMESH, name, blob, n, i, NULL, NULL), STORE_OK);
    }
    free(blob);
    slow_walk w = {0};
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, slow_row, &w, NULL), STORE_OK);
    ck_assert_int_eq(w.calls, 40);
    ck_assert_uint_eq(w.bytes, 40 * n);
    /* and the connection is usable afterwards */
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "big3", NULL, NULL, NULL), STORE_OK);
    store_close(s);
    drop_db(db);
}
END_TEST

START_TEST(t_failover) {
    /* What a Patroni failover looks like from navd: a multi-host string
       with target_session_attrs=read-write, the primary (first host)
       turning read-only under a connected navd. The next write fails with
       503-worthy STORE_UNAVAILABLE (SQLSTATE 25006 drops the connection),
       navd reconnects, libpq skips the read-only host, and writes land on
       the second server. (No replication here: each server has its own
       rows; the point is where writes go.) */
    char db[40], url[160];
    new_db(db, sizeof db, url, sizeof url, NULL);
    char sql[96];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    ck_assert_int_eq(tc_pg_exec(&g_pg2, sql), 0);
    /* a standby would have the schema by replication: make it here */
    char url2[160];
    snprintf(url2, sizeof url2, "postgresql://navd@127.0.0.1:%d/%s", g_pg2.port, db);
    store_close(open_url(url2));
    char multi[256];
    snprintf(multi, sizeof multi,
             "postgresql://navd@127.0.0.1:%d,127.0.0.1:%d/%s?target_session_attrs=read-write",
             g_pg.port, g_pg2.port, db);
    store *s = open_url(multi);
    char d[300];
    store_describe(s, d, sizeof d);
    char want[32];
    snprintf(want, sizeof want, ":%d", g_pg.port);
    ck_assert_msg(strstr(d, want) != NULL, "%s", d);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "before", "b", 1, 1, NULL, NULL), STORE_OK);

    ck_assert_int_eq(tc_pg_exec(&g_pg, "ALTER SYSTEM SET default_transaction_read_only = on"), 0);
    ck_assert_int_eq(tc_pg_exec(&g_pg, "SELECT pg_reload_conf()"), 0);
    sleep_ms(300); /* the reload reaches every backend asynchronously */
    store_status first = store_put(s, STORE_NAVMESH, "after", "a", 1, 2, NULL, NULL);
    store_status st = first;
    for (int i = 0; i < 200 && st != STORE_OK; i++) { /* at most 10 s */
        sleep_ms(50);
        st = store_put(s, STORE_NAVMESH, "after", "a", 1, 2, NULL, NULL);
    }
    /* give the first server back to the other tests before any assertion */
    tc_pg_exec(&g_pg, "ALTER SYSTEM RESET default_transaction_read_only");
    tc_pg_exec(&g_pg, "SELECT pg_reload_conf()");
    ck_assert_int_eq(first, STORE_UNAVAILABLE);
    ck_assert_int_eq(st, STORE_OK);
    tc_pg on2 = g_pg2, on1 = g_pg;
    snprintf(on2.conninfo, sizeof on2.conninfo, "%s", url2);
    snprintf(on1.conninfo, sizeof on1.conninfo, "%s", url);
    ck_assert_int_eq(tc_pg_long(&on2, "SELECT count(*) FROM navd_entries WHERE name = 'after'"), 1);
    ck_assert_int_eq(tc_pg_long(&on1, "SELECT count(*) FROM navd_entries WHERE name = 'after'"), 0);
    store_close(s);
    drop_db(db);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    tc_pg_exec(&g_pg2, sql);
}
END_TEST

static void pg_setup(void) {
    char why[200] = "";
    if (tc_pg_start(&g_pg, why, sizeof why) != 0 || tc_pg_start(&g_pg2, why, sizeof why) != 0)
        snprintf(g_failed, sizeof g_failed, "%s", why);
}

static void pg_teardown(void) {
    tc_pg_destroy(&g_pg);
    tc_pg_destroy(&g_pg2);
}

Suite *store_pg_suite(void) {
    Suite *s = suite_create("store_pg");
    char why[200];
    if (tc_pg_available(why, sizeof why) != 0) {
        printf("skip: store_pg: %s\n", why);
        return s;
    }
    TCase *tc = tcase_create("postgres");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, pg_setup, pg_teardown);
    tcase_add_test(tc, t_notifications);
    tcase_add_test(tc, t_reconnect);
    tcase_add_test(tc, t_down_fails_fast);
    tcase_add_test(tc, t_open_errors);
    tcase_add_test(tc, t_newer_schema_refused);
    tcase_add_test(tc, t_migrate_race);
    tcase_add_test(tc, t_slow_walk);
    tcase_add_test(tc, t_failover); /* last: it makes the first server read-only for a while */
    suite_add_tcase(s, tc);
    return s;
}
