/*
 * check_store: the storage module against real SQLite files under /tmp and,
 * in the "postgres" test case, the same tests against a throwaway
 * PostgreSQL (tests/test_cluster.h; skipped with a message when its binaries
 * are absent). Each test gets a fresh store: a new file, or a new database
 * in the one cluster the case starts. File-specific tests (migrating a file,
 * refusing garbage, SQLite's allocator) run on SQLite only; the PostgreSQL
 * specifics (notifications, reconnection) are in check_store_pg.c.
 *
 * Covers the store's promises one by one: versions and timestamps across
 * create / replace / delete, name order, reopen, migrations from an empty
 * file, refusal of files we must not touch (newer schema, garbage, corrupt
 * pages), name validation, serialization of concurrent writers, durability
 * across a process that dies right after an acknowledged write, and
 * behaviour when SQLite's allocations fail. Every temporary file is made
 * with mkstemp and removed (with its -wal and -shm companions) by the test.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/store.h"
#include "tests/test_cluster.h"

/* Declared here for -Wmissing-prototypes; "extern" keeps the line out of the
   Makefile's suite discovery, which matches lines starting "Suite *". */
extern Suite *store_suite(void);

/* The PostgreSQL cluster of the "postgres" case (started once by its
   unchecked fixture, in the runner before the tests fork), and whether the
   test running is in that case. */
static tc_pg g_pg;
static int g_pg_mode;
static char g_pg_failed[256];

/* SQLite: two migration steps (v1: table navmeshes; v2: levels and
   volumes), so a freshly migrated file is at user_version 2. PostgreSQL:
   one step (every kind in one table). Bump with every new step. */
#define LATEST_SCHEMA (g_pg_mode ? 1 : 2)

/* ---- temporary stores ------------------------------------------------------------------------ */

typedef struct tmpdb {
    char path[160]; /* a file, or a connection string */
    char dbname[40];
} tmpdb;

/* SQLite: an empty, uniquely named file (an empty file is a valid, empty
   SQLite database, which is what a first start sees). PostgreSQL: a new,
   empty database. */
static void tmpdb_make(tmpdb *t) {
    memset(t, 0, sizeof *t);
    if (g_pg_mode) {
        static unsigned seq;
        ck_assert_msg(!g_pg_failed[0], "PostgreSQL: %s", g_pg_failed);
        snprintf(t->dbname, sizeof t->dbname, "t%d_%u", (int)getpid(), ++seq);
        char sql[96];
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", t->dbname);
        ck_assert_int_eq(tc_pg_exec(&g_pg, sql), 0);
        snprintf(t->path, sizeof t->path, "postgresql://navd@127.0.0.1:%d/%s", g_pg.port,
                 t->dbname);
        return;
    }
    snprintf(t->path, sizeof t->path, "/tmp/navd-check-store-XXXXXX");
    int fd = mkstemp(t->path);
    ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
    close(fd);
}

static void tmpdb_remove(const tmpdb *t) {
    if (t->dbname[0]) {
        char sql[96];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", t->dbname);
        tc_pg_exec(&g_pg, sql);
        return;
    }
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        char p[180];
        snprintf(p, sizeof p, "%s%s", t->path, suffix[i]);
        unlink(p);
    }
}

static store *open_ok(const tmpdb *t) {
    store *s = NULL;
    char why[256];
    store_status st = store_open_detail(t->path, &s, why, sizeof why);
    ck_assert_msg(st == STORE_OK, "store_open(%s): %s (%s)", t->path, store_status_text(st), why);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* Reads PRAGMA user_version / journal_mode with a plain sqlite3 connection,
   independent of the code under test. */
static int raw_user_version(const char *path) {
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void raw_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, err ? err : "?");
    sqlite3_close(db);
}

static char *raw_text(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    char *out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* Gets name and checks its version and exact bytes. */
static void expect_entry(store *s, const char *name, int64_t version, const char *bytes) {
    store_meta m;
    void *blob = NULL;
    size_t len = 0;
    store_status st = store_get(s, STORE_NAVMESH, name, &m, &blob, &len);
    ck_assert_msg(st == STORE_OK, "get %s: %s", name, store_status_text(st));
    ck_assert_str_eq(m.name, name);
    ck_assert_int_eq(m.version, version);
    ck_assert_uint_eq(len, strlen(bytes));
    ck_assert_mem_eq(blob, bytes, len);
    free(blob);
}

/* ---- status texts ---------------------------------------------------------------------------- */

START_TEST(t_status_text) {
    /* Texts come from the X-macro in store.h: spot-check two by hand, then
       require every status to have a distinct non-empty text. */
    ck_assert_str_eq(store_status_text(STORE_OK), "ok");
    ck_assert_str_eq(store_status_text(STORE_NOT_FOUND), "not found");
    for (int i = 0; i < STORE_STATUS_COUNT; i++) {
        const char *a = store_status_text((store_status)i);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_gt(strlen(a), 0);
        for (int j = 0; j < i; j++) {
            ck_assert_str_ne(a, store_status_text((store_status)j));
        }
    }
    ck_assert_ptr_nonnull(store_status_text(STORE_STATUS_COUNT));
    ck_assert_ptr_nonnull(store_status_text((store_status)-1));
}
END_TEST

/* ---- create / replace / delete --------------------------------------------------------------- */

START_TEST(t_create_replace) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    store_meta m;
    int created = -1;

    /* Create at t = 1000: version 1, both timestamps 1000, created = 1. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "arena", "first", 5, 1000, &m, &created),
                     STORE_OK);
    ck_assert_str_eq(m.name, "arena");
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(m.created_ms, 1000);
    ck_assert_int_eq(m.updated_ms, 1000);
    ck_assert_int_eq(created, 1);

    /* Replace at t = 2500: version 1 + 1 = 2, created_ms kept at 1000. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "arena", "second!", 7, 2500, &m, &created),
                     STORE_OK);
    ck_assert_int_eq(m.version, 2);
    ck_assert_int_eq(m.created_ms, 1000);
    ck_assert_int_eq(m.updated_ms, 2500);
    ck_assert_int_eq(created, 0);

    /* Third put: version 3; the stored row matches what put reported. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "arena", "third", 5, 4000, NULL, NULL), STORE_OK);
    store_meta g;
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "arena", &g, &blob, &len), STORE_OK);
    ck_assert_int_eq(g.version, 3);
    ck_assert_int_eq(g.created_ms, 1000);
    ck_assert_int_eq(g.updated_ms, 4000);
    ck_assert_uint_eq(len, 5);
    ck_assert_mem_eq(blob, "third", 5);
    free(blob);

    /* Metadata-only get (blob and len both NULL). */
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "arena", &g, NULL, NULL), STORE_OK);
    ck_assert_int_eq(g.version, 3);

    /* Another name is independent: version 1. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "other", "x", 1, 5000, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(created, 1);

    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_empty_and_binary_blob) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    /* A zero-length blob is stored as X'' (not NULL) and read back as a
       non-NULL buffer of length 0. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "empty", NULL, 0, 1, NULL, NULL), STORE_OK);
    void *blob = NULL;
    size_t len = 99;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "empty", NULL, &blob, &len), STORE_OK);
    ck_assert_ptr_nonnull(blob);
    ck_assert_uint_eq(len, 0);
    free(blob);

    /* Bytes with embedded NULs and every byte value survive unchanged. */
    unsigned char bin[256];
    for (int i = 0; i < 256; i++) {
        bin[i] = (unsigned char)(255 - i);
    }
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "bin", bin, sizeof bin, 2, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "bin", NULL, &blob, &len), STORE_OK);
    ck_assert_uint_eq(len, 256);
    ck_assert_mem_eq(blob, bin, 256);
    free(blob);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_delete) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "1", 1, 10, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "2", 1, 20, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "b", "3", 1, 30, NULL, NULL), STORE_OK);

    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, "a"), STORE_OK);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "a", NULL, NULL, NULL), STORE_NOT_FOUND);
    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, "a"), STORE_NOT_FOUND);
    /* b is untouched. */
    expect_entry(s, "b", 1, "3");

    /* A put after a delete is a fresh create: version 1, new created_ms. */
    store_meta m;
    int created = 0;
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "new", 3, 40, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(m.created_ms, 40);
    ck_assert_int_eq(created, 1);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_get_missing) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    store_meta m;
    memset(&m, 0x5a, sizeof m);
    void *blob = (void *)&m;
    size_t len = 77;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "nothing-here", &m, &blob, &len), STORE_NOT_FOUND);
    /* Outputs are zeroed on failure, never left with stale values. */
    ck_assert_ptr_null(blob);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(m.version, 0);
    ck_assert_str_eq(m.name, "");
    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, "nothing-here"), STORE_NOT_FOUND);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

/* ---- iteration ------------------------------------------------------------------------------- */

typedef struct each_log {
    int calls;
    int stop_at; /* return 7 on this call (1-based), 0 = never */
    char names[8][65];
    int64_t versions[8];
    size_t lens[8];
} each_log;

static int each_record(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    each_log *log = ctx;
    ck_assert_ptr_nonnull(blob);
    if (log->calls < 8) {
        strcpy(log->names[log->calls], meta->name);
        log->versions[log->calls] = meta->version;
        log->lens[log->calls] = len;
    }
    log->calls++;
    return log->calls == log->stop_at ? 7 : 0;
}

START_TEST(t_each_order) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    /* Inserted out of order. Name order is byte order (BINARY collation):
       'C' 0x43 < '_' 0x5f < 'a' 0x61 < 'b' 0x62, and "a" < "a.1" (prefix
       first), so: C, _x, a, a.1, b. */
    const char *ins[] = {"b", "a.1", "_x", "a", "C"};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(store_put(s, STORE_NAVMESH, ins[i], "abc", (size_t)i, 100 + i, NULL, NULL),
                         STORE_OK);
    }
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "abcd", 4, 200, NULL, NULL),
                     STORE_OK); /* a: v2 */

    each_log log;
    memset(&log, 0, sizeof log);
    int r = -1;
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, each_record, &log, &r), STORE_OK);
    ck_assert_int_eq(r, 0);
    ck_assert_int_eq(log.calls, 5);
    const char *want[] = {"C", "_x", "a", "a.1", "b"};
    /* Lengths: C was put 5th with len 4, _x 3rd (2), a replaced with len 4,
       a.1 2nd (1), b 1st (0). */
    const size_t want_len[] = {4, 2, 4, 1, 0};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(log.names[i], want[i]);
        ck_assert_uint_eq(log.lens[i], want_len[i]);
        ck_assert_int_eq(log.versions[i], strcmp(want[i], "a") == 0 ? 2 : 1);
    }

    /* A non-zero return stops the walk and is passed back. */
    memset(&log, 0, sizeof log);
    log.stop_at = 2;
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, each_record, &log, &r), STORE_OK);
    ck_assert_int_eq(r, 7);
    ck_assert_int_eq(log.calls, 2);

    /* An empty store calls fn zero times. */
    tmpdb t2;
    tmpdb_make(&t2);
    store *s2 = open_ok(&t2);
    memset(&log, 0, sizeof log);
    ck_assert_int_eq(store_each(s2, STORE_NAVMESH, each_record, &log, NULL), STORE_OK);
    ck_assert_int_eq(log.calls, 0);
    store_close(s2);
    tmpdb_remove(&t2);

    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

/* ---- reopen and migrations ------------------------------------------------------------------- */

START_TEST(t_reopen) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "m1", "one", 3, 111, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "m2", "two", 3, 222, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "m2", "TWO", 3, 333, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "m3", "three", 5, 444, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, "m3"), STORE_OK);
    store_close(s);

    s = open_ok(&t);
    ck_assert_int_eq(store_schema_version(s), LATEST_SCHEMA);
    expect_entry(s, "m1", 1, "one");
    expect_entry(s, "m2", 2, "TWO");
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "m3", NULL, NULL, NULL), STORE_NOT_FOUND);
    store_meta m;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "m2", &m, NULL, NULL), STORE_OK);
    ck_assert_int_eq(m.created_ms, 222);
    ck_assert_int_eq(m.updated_ms, 333);
    /* Versions continue from the stored value after a reopen: 2 + 1 = 3. */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "m2", "2b", 2, 555, &m, NULL), STORE_OK);
    ck_assert_int_eq(m.version, 3);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_migrate_empty_file) {
    tmpdb t;
    tmpdb_make(&t); /* mkstemp leaves a 0-byte file */
    ck_assert_int_eq(raw_user_version(t.path), 0);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_schema_version(s), LATEST_SCHEMA);
    store_close(s);

    /* Checked from outside with a plain connection: the version stuck, the
       file is in WAL mode (a persistent property of the file), and the v1
       table has the documented columns in order. */
    ck_assert_int_eq(raw_user_version(t.path), LATEST_SCHEMA);
    char *mode = raw_text(t.path, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "wal");
    free(mode);
    char *cols = raw_text(t.path, "SELECT group_concat(name || ':' || type || ':' || \"notnull\" "
                                  "|| ':' || pk, ',') FROM pragma_table_info('navmeshes')");
    ck_assert_str_eq(cols, "name:TEXT:0:1,version:INTEGER:1:0,created_ms:INTEGER:1:0,"
                           "updated_ms:INTEGER:1:0,blob:BLOB:1:0");
    free(cols);

    /* Opening an up-to-date file runs nothing and changes nothing. */
    s = open_ok(&t);
    ck_assert_int_eq(store_schema_version(s), LATEST_SCHEMA);
    store_close(s);
    ck_assert_int_eq(raw_user_version(t.path), LATEST_SCHEMA);

    /* A path that does not exist yet is created. */
    tmpdb fresh;
    tmpdb_make(&fresh);
    unlink(fresh.path);
    s = open_ok(&fresh);
    ck_assert_int_eq(store_schema_version(s), LATEST_SCHEMA);
    store_close(s);
    ck_assert_int_eq(access(fresh.path, F_OK), 0);
    tmpdb_remove(&fresh);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_kinds_are_separate) {
    /* One name in each kind: three independent entries, each with its own
       version, listing and deletion. */
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    store_meta m;
    int created = 0;
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "dungeon", "mesh", 4, 10, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(store_put(s, STORE_LEVEL, "dungeon", "level", 5, 20, &m, &created), STORE_OK);
    ck_assert_int_eq(created, 1); /* a navmesh of the same name is no level */
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(store_put(s, STORE_LEVEL, "dungeon", "level2", 6, 30, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 2);
    ck_assert_int_eq(store_put(s, STORE_VOLUME, "dungeon", "vol", 3, 40, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);

    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "dungeon", &m, &blob, &len), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_uint_eq(len, 4);
    ck_assert_int_eq(memcmp(blob, "mesh", 4), 0);
    free(blob);
    ck_assert_int_eq(store_get(s, STORE_LEVEL, "dungeon", &m, &blob, &len), STORE_OK);
    ck_assert_uint_eq(len, 6);
    ck_assert_int_eq(memcmp(blob, "level2", 6), 0);
    free(blob);

    ck_assert_int_eq(store_delete(s, STORE_LEVEL, "dungeon"), STORE_OK);
    ck_assert_int_eq(store_get(s, STORE_LEVEL, "dungeon", NULL, NULL, NULL), STORE_NOT_FOUND);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "dungeon", NULL, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_get(s, STORE_VOLUME, "dungeon", NULL, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, (store_kind)STORE_KIND_COUNT, "x", "1", 1, 1, NULL, NULL),
                     STORE_INVALID_ARG);
    ck_assert_str_eq(store_kind_table(STORE_LEVEL), "levels");
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_migrate_v1_keeps_navmeshes) {
    /* A file written by a navd that knew only v1 (built here by hand with a
       plain connection) is migrated to v2 and keeps its navmeshes. */
    tmpdb t;
    tmpdb_make(&t);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(t.path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db,
                                  "CREATE TABLE navmeshes (name TEXT PRIMARY KEY, version INTEGER "
                                  "NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT "
                                  "NULL, blob BLOB NOT NULL);"
                                  "INSERT INTO navmeshes VALUES ('old', 7, 1, 2, x'616263');"
                                  "PRAGMA user_version = 1;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_schema_version(s), 2);
    store_meta m;
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "old", &m, &blob, &len), STORE_OK);
    ck_assert_int_eq(m.version, 7);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(blob, "abc", 3), 0);
    free(blob);
    ck_assert_int_eq(store_put(s, STORE_LEVEL, "old", "lvl", 3, 5, &m, NULL), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    store_close(s);
    ck_assert_int_eq(raw_user_version(t.path), 2);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_migrate_race) {
    /* Four processes open the same brand-new file at once (all released by
       one close of a pipe). Each migration step re-reads user_version inside
       its BEGIN IMMEDIATE, so exactly one runs CREATE TABLE and the others
       find version 1; without that every loser would fail with "table
       navmeshes already exists". All four must open and write. */
    tmpdb t;
    tmpdb_make(&t);
    int gate[2];
    ck_assert_int_eq(pipe(gate), 0);
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            close(gate[1]);
            char c;
            if (read(gate[0], &c, 1) != 0) { /* blocks until the parent closes */
                _exit(5);
            }
            store *s = NULL;
            if (store_open(t.path, &s) != STORE_OK || store_schema_version(s) != LATEST_SCHEMA) {
                _exit(2);
            }
            char name[32];
            snprintf(name, sizeof name, "proc-%d", k);
            _exit(store_put(s, STORE_NAVMESH, name, "p", 1, k, NULL, NULL) == STORE_OK ? 0 : 3);
        }
    }
    close(gate[0]);
    close(gate[1]); /* go */
    for (int k = 0; k < 4; k++) {
        int status = 0;
        ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status %d", k,
                      status);
    }
    store *s = open_ok(&t);
    each_log log;
    memset(&log, 0, sizeof log);
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, each_record, &log, NULL), STORE_OK);
    ck_assert_int_eq(log.calls, 4);
    store_close(s);
    ck_assert_int_eq(raw_user_version(t.path), LATEST_SCHEMA);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_future_version_refused) {
    tmpdb t;
    tmpdb_make(&t);
    /* A file written by a future navd: user_version beyond what we know, in
       rollback-journal mode. */
    raw_exec(t.path, "CREATE TABLE navmeshes_v9 (x); PRAGMA user_version = 9;");
    store *s = (store *)&t; /* must be reset to NULL */
    char why[256];
    ck_assert_int_eq(store_open_detail(t.path, &s, why, sizeof why), STORE_IO);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(why, "newer") != NULL, "reason: %s", why);
    ck_assert_msg(strstr(why, "9") != NULL, "reason names the version: %s", why);
    /* Left exactly as it was: version 9, and not switched to WAL. */
    ck_assert_int_eq(raw_user_version(t.path), 9);
    char *mode = raw_text(t.path, "PRAGMA journal_mode");
    ck_assert_str_eq(mode, "delete");
    free(mode);
    /* The plain entry point refuses too. */
    ck_assert_int_eq(store_open(t.path, &s), STORE_IO);
    ck_assert_ptr_null(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_garbage_refused) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = NULL;

    /* A text file. */
    char text[5000];
    for (size_t i = 0; i < sizeof text; i++) {
        text[i] = (char)('a' + i % 26);
    }
    write_file(t.path, text, sizeof text);
    ck_assert_int_eq(store_open(t.path, &s), STORE_IO);
    ck_assert_ptr_null(s);

    /* Pseudo-random bytes (xorshift32, seed 1). */
    unsigned char rnd[8192];
    uint32_t x = 1;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        rnd[i] = (unsigned char)x;
    }
    write_file(t.path, rnd, sizeof rnd);
    ck_assert_int_eq(store_open(t.path, &s), STORE_IO);
    ck_assert_ptr_null(s);

    /* The right magic followed by nonsense (a header that lies). */
    memcpy(rnd, "SQLite format 3", 16);
    write_file(t.path, rnd, sizeof rnd);
    ck_assert_int_eq(store_open(t.path, &s), STORE_IO);
    ck_assert_ptr_null(s);

    /* A directory is not a database either. */
    ck_assert_int_eq(store_open("/tmp", &s), STORE_IO);
    ck_assert_ptr_null(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_corrupt_pages) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "alpha", 5, 1, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "b", "beta", 4, 2, NULL, NULL), STORE_OK);
    ck_assert_int_eq(store_check(s), STORE_OK);
    store_close(s); /* last connection: the WAL is checkpointed into the file */

    /* Page 1 (the first 4096 bytes, default page size) holds the header and
       the schema; pages 2.. hold the table and its index. Overwrite all of
       them: the schema still parses, so open may succeed, but every read of
       the data must fail with a status, not a crash. */
    FILE *f = fopen(t.path, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 3 * 4096);
    ck_assert_int_eq(fseek(f, 4096, SEEK_SET), 0);
    for (long i = 4096; i < size; i++) {
        fputc(0xAA, f);
    }
    ck_assert_int_eq(fclose(f), 0);

    store_status st = store_open(t.path, &s);
    if (st == STORE_OK) {
        ck_assert_int_eq(store_check(s), STORE_IO);
        void *blob = NULL;
        size_t len = 0;
        ck_assert_int_eq(store_get(s, STORE_NAVMESH, "a", NULL, &blob, &len), STORE_IO);
        ck_assert_ptr_null(blob);
        ck_assert_int_eq(store_each(s, STORE_NAVMESH, each_record, &(each_log){0}, NULL), STORE_IO);
        ck_assert_int_ne(store_put(s, STORE_NAVMESH, "c", "x", 1, 3, NULL, NULL), STORE_OK);
        store_close(s);
    } else {
        ck_assert_int_eq(st, STORE_IO);
        ck_assert_ptr_null(s);
    }

    /* Truncated to half a header: refused. */
    ck_assert_int_eq(truncate(t.path, 50), 0);
    ck_assert_int_eq(store_open(t.path, &s), STORE_IO);
    tmpdb_remove(&t);
}
END_TEST

/* ---- argument validation --------------------------------------------------------------------- */

START_TEST(t_invalid_args) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    char n64[65], n65[66];
    memset(n64, 'k', 64);
    n64[64] = '\0';
    memset(n65, 'k', 65);
    n65[65] = '\0';

    /* Names outside ^[A-Za-z0-9_.-]{1,64}$. */
    const char *bad[] = {"",
                         n65,
                         "a/b",
                         "a b",
                         "../x",
                         "x\\y",
                         "na\xc3\xafve",
                         "x;DROP TABLE navmeshes",
                         "tab\there",
                         "q'uote",
                         "%",
                         "a\nb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_meta m;
        int created = 5;
        ck_assert_msg(store_put(s, STORE_NAVMESH, bad[i], "x", 1, 1, &m, &created) ==
                          STORE_INVALID_ARG,
                      "put accepted bad name #%zu", i);
        ck_assert_int_eq(created, 0);
        ck_assert_int_eq(store_get(s, STORE_NAVMESH, bad[i], NULL, NULL, NULL), STORE_INVALID_ARG);
        ck_assert_int_eq(store_delete(s, STORE_NAVMESH, bad[i]), STORE_INVALID_ARG);
    }
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, NULL, "x", 1, 1, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, NULL, NULL, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, NULL), STORE_INVALID_ARG);

    /* Every character class of the rule at its edges, and exactly 64. */
    const char *good[] = {n64, "A", "z", "0", "9", "_", ".", "-", "a.b-c_D9", ".."};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ck_assert_msg(store_put(s, STORE_NAVMESH, good[i], "x", 1, 1, NULL, NULL) == STORE_OK,
                      "put refused good name #%zu", i);
        expect_entry(s, good[i], 1, "x");
    }

    /* Other arguments. */
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(store_put(NULL, STORE_NAVMESH, "a", "x", 1, 1, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", NULL, 1, 1, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "a", "x", 1, -1, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_get(NULL, STORE_NAVMESH, "a", NULL, &blob, &len), STORE_INVALID_ARG);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "a", NULL, &blob, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_get(s, STORE_NAVMESH, "a", NULL, NULL, &len), STORE_INVALID_ARG);
    ck_assert_int_eq(store_delete(NULL, STORE_NAVMESH, "a"), STORE_INVALID_ARG);
    ck_assert_int_eq(store_each(NULL, STORE_NAVMESH, each_record, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, NULL, NULL, NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_check(NULL), STORE_INVALID_ARG);
    ck_assert_int_eq(store_schema_version(NULL), -1);
    store *o = (store *)&t;
    ck_assert_int_eq(store_open(NULL, &o), STORE_INVALID_ARG);
    ck_assert_ptr_null(o);
    ck_assert_int_eq(store_open("", &o), STORE_INVALID_ARG);
    ck_assert_int_eq(store_open(t.path, NULL), STORE_INVALID_ARG);
    store_close(NULL);

    /* None of the rejected calls wrote anything: only the 10 good names. */
    each_log log;
    memset(&log, 0, sizeof log);
    ck_assert_int_eq(store_each(s, STORE_NAVMESH, each_record, &log, NULL), STORE_OK);
    ck_assert_int_eq(log.calls, 10);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_integrity_ok) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    ck_assert_int_eq(store_check(s), STORE_OK);
    /* A blob bigger than a page spills into overflow pages; still ok. */
    size_t big = 100000;
    char *b = malloc(big);
    ck_assert_ptr_nonnull(b);
    memset(b, 'n', big);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(
            store_put(s, STORE_NAVMESH, "big", b, big - (size_t)i * 1000, i, NULL, NULL), STORE_OK);
    }
    free(b);
    ck_assert_int_eq(store_delete(s, STORE_NAVMESH, "big"), STORE_OK);
    ck_assert_int_eq(store_check(s), STORE_OK);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

/* ---- concurrency ----------------------------------------------------------------------------- */

#define CONC_THREADS 4
#define CONC_PUTS 15

typedef struct conc_arg {
    store *s;
    int id;
    int creates_shared;                 /* how often "shared" came back as created */
    int64_t shared_versions[CONC_PUTS]; /* versions put reported for "shared" */
    int failures;
} conc_arg;

static void *conc_worker(void *p) {
    conc_arg *a = p;
    char own[16], payload[32];
    snprintf(own, sizeof own, "own-%d", a->id);
    for (int i = 0; i < CONC_PUTS; i++) {
        store_meta m;
        int created = 0;
        snprintf(payload, sizeof payload, "t%d-i%d", a->id, i);
        if (store_put(a->s, STORE_NAVMESH, own, payload, strlen(payload), i, &m, &created) !=
                STORE_OK ||
            m.version != i + 1) {
            a->failures++;
        }
        if (store_put(a->s, STORE_NAVMESH, "shared", payload, strlen(payload), i, &m, &created) !=
            STORE_OK) {
            a->failures++;
        }
        a->shared_versions[i] = m.version;
        a->creates_shared += created;
    }
    return NULL;
}

/* Runs CONC_THREADS writers, thread k on handles[k % nhandles], and checks
   that nothing was lost: own-k ends at version CONC_PUTS with its last
   payload, "shared" at CONC_THREADS * CONC_PUTS, and the versions put
   reported for "shared" are exactly 1..N, each once (every put saw the
   previous one: writes were serialized, none overwrote another's read). */
static void run_concurrent(store **handles, int nhandles) {
    pthread_t th[CONC_THREADS];
    conc_arg args[CONC_THREADS];
    for (int k = 0; k < CONC_THREADS; k++) {
        memset(&args[k], 0, sizeof args[k]);
        args[k].s = handles[k % nhandles];
        args[k].id = k;
        ck_assert_int_eq(pthread_create(&th[k], NULL, conc_worker, &args[k]), 0);
    }
    for (int k = 0; k < CONC_THREADS; k++) {
        ck_assert_int_eq(pthread_join(th[k], NULL), 0);
    }
    enum { TOTAL = CONC_THREADS * CONC_PUTS };
    int seen[TOTAL + 1] = {0};
    int creates = 0;
    for (int k = 0; k < CONC_THREADS; k++) {
        ck_assert_int_eq(args[k].failures, 0);
        creates += args[k].creates_shared;
        for (int i = 0; i < CONC_PUTS; i++) {
            int64_t v = args[k].shared_versions[i];
            ck_assert_int_ge(v, 1);
            ck_assert_int_le(v, TOTAL);
            seen[v]++;
        }
        char own[16], last[32];
        snprintf(own, sizeof own, "own-%d", k);
        snprintf(last, sizeof last, "t%d-i%d", k, CONC_PUTS - 1);
        expect_entry(handles[0], own, CONC_PUTS, last);
    }
    ck_assert_int_eq(creates, 1);
    for (int v = 1; v <= TOTAL; v++) {
        ck_assert_int_eq(seen[v], 1);
    }
    store_meta m;
    ck_assert_int_eq(store_get(handles[0], STORE_NAVMESH, "shared", &m, NULL, NULL), STORE_OK);
    ck_assert_int_eq(m.version, TOTAL);
    ck_assert_int_eq(store_check(handles[0]), STORE_OK);
}

START_TEST(t_concurrent_one_handle) {
    tmpdb t;
    tmpdb_make(&t);
    store *s = open_ok(&t);
    run_concurrent(&s, 1);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_concurrent_two_handles) {
    /* Two connections to one file (as two navd processes would have): now
       SQLite's file locks and busy_timeout serialize the writers, and
       BEGIN IMMEDIATE keeps read-version-then-write atomic across them. */
    tmpdb t;
    tmpdb_make(&t);
    store *h[2] = {open_ok(&t), open_ok(&t)};
    run_concurrent(h, 2);
    store_close(h[0]);
    store_close(h[1]);
    tmpdb_remove(&t);
}
END_TEST

/* ---- durability ------------------------------------------------------------------------------ */

START_TEST(t_durable_exit_without_close) {
    tmpdb t;
    tmpdb_make(&t);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Child: put, then leave at once: no store_close, no atexit, no
           stdio flush, exactly what kill -9 after the acknowledgement does
           to the process. */
        store *s = NULL;
        if (store_open(t.path, &s) != STORE_OK) {
            _exit(2);
        }
        if (store_put(s, STORE_NAVMESH, "survivor", "still here", 10, 12345, NULL, NULL) !=
            STORE_OK) {
            _exit(3);
        }
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    /* The -wal file is still there (nobody checkpointed); opening replays it. */
    store *s = open_ok(&t);
    expect_entry(s, "survivor", 1, "still here");
    ck_assert_int_eq(store_check(s), STORE_OK);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

/* The payload the kill test writes for version v, so the parent can tell a
   row is whole: version and bytes must agree. */
static int kill_payload(char *buf, size_t n, int64_t v) {
    return snprintf(buf, n, "payload for version %lld, padded %0*d", (long long)v, (int)(v % 50),
                    0);
}

START_TEST(t_durable_sigkill_mid_stream) {
    /* A child streams replaces of one name and reports each acknowledged
       version through a pipe; the parent SIGKILLs it at a varying moment.
       Afterwards the stored version is the last acknowledged one, or one
       more (the put in flight may commit before its report is written),
       never less, and the row's bytes belong to that version. */
    tmpdb t;
    tmpdb_make(&t);
    int64_t last_acked = 0;
    for (int round = 0; round < 3; round++) {
        int fds[2];
        ck_assert_int_eq(pipe(fds), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(fds[0]);
            store *s = NULL;
            if (store_open(t.path, &s) != STORE_OK) {
                _exit(2);
            }
            for (;;) {
                store_meta m;
                if (store_get(s, STORE_NAVMESH, "stream", &m, NULL, NULL) == STORE_NOT_FOUND) {
                    m.version = 0;
                }
                char buf[96];
                int n = kill_payload(buf, sizeof buf, m.version + 1);
                if (store_put(s, STORE_NAVMESH, "stream", buf, (size_t)n, m.version + 1, &m,
                              NULL) != STORE_OK) {
                    _exit(3);
                }
                if (write(fds[1], &m.version, sizeof m.version) != (ssize_t)sizeof m.version) {
                    _exit(4);
                }
            }
        }
        close(fds[1]);
        /* Wait for 3 + 4 * round acknowledgements, then kill. */
        int64_t v = 0;
        for (int i = 0; i < 3 + 4 * round; i++) {
            ck_assert_int_eq(read(fds[0], &v, sizeof v), (ssize_t)sizeof v);
            last_acked = v;
        }
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        /* Acknowledgements written before the kill count too. */
        while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) {
            last_acked = v;
        }
        close(fds[0]);

        store *s = open_ok(&t);
        store_meta m;
        void *blob = NULL;
        size_t len = 0;
        ck_assert_int_eq(store_get(s, STORE_NAVMESH, "stream", &m, &blob, &len), STORE_OK);
        ck_assert_int_ge(m.version, last_acked);
        ck_assert_int_le(m.version, last_acked + 1);
        char want[96];
        int n = kill_payload(want, sizeof want, m.version);
        ck_assert_uint_eq(len, (size_t)n);
        ck_assert_mem_eq(blob, want, len);
        ck_assert_int_eq(m.updated_ms, m.version);
        free(blob);
        ck_assert_int_eq(store_check(s), STORE_OK);
        store_close(s);
    }
    tmpdb_remove(&t);
}
END_TEST

/* ---- allocation failure ---------------------------------------------------------------------- */

/* SQLite's allocator, wrapped so the Nth and every later allocation fails. */
static sqlite3_mem_methods oom_base;
static long oom_count, oom_fail_at;

static void *oom_malloc(int n) {
    if (oom_fail_at > 0 && ++oom_count >= oom_fail_at) {
        return NULL;
    }
    return oom_base.xMalloc(n);
}
static void *oom_realloc(void *p, int n) {
    if (oom_fail_at > 0 && ++oom_count >= oom_fail_at) {
        return NULL;
    }
    return oom_base.xRealloc(p, n);
}

START_TEST(t_alloc_failure) {
    /* Walk N upward (SQLite's own method): with allocation N and all later
       ones failing, open + put + close must return a status (OK, NOMEM or
       IO), never crash or leak; and a put is atomic: a later fault-free open
       finds the entry whole at version 1, or not at all. Stops at the first
       N where the whole sequence succeeds without reaching a fault. */
    ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &oom_base), SQLITE_OK);
    sqlite3_mem_methods hooked = oom_base;
    hooked.xMalloc = oom_malloc;
    hooked.xRealloc = oom_realloc;
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &hooked), SQLITE_OK);

    tmpdb t;
    tmpdb_make(&t);
    int done = 0, failures_seen = 0;
    long n;
    for (n = 1; n < 5000 && !done; n++) {
        tmpdb_remove(&t);
        oom_count = 0;
        oom_fail_at = n;
        store *s = NULL;
        store_status st = store_open(t.path, &s);
        store_status pst = STORE_IO;
        if (st == STORE_OK) {
            pst = store_put(s, STORE_NAVMESH, "oom", "payload", 7, 1, NULL, NULL);
            ck_assert(pst == STORE_OK || pst == STORE_NOMEM || pst == STORE_IO);
            store_close(s);
        } else {
            ck_assert(st == STORE_NOMEM || st == STORE_IO);
            ck_assert_ptr_null(s);
        }
        done = st == STORE_OK && pst == STORE_OK && oom_count < n;
        failures_seen += !done;
        oom_fail_at = 0;

        /* Fault-free check of what is on disk. */
        s = open_ok(&t);
        store_meta m;
        void *blob = NULL;
        size_t len = 0;
        store_status g = store_get(s, STORE_NAVMESH, "oom", &m, &blob, &len);
        if (g == STORE_OK) {
            ck_assert_int_eq(m.version, 1);
            ck_assert_uint_eq(len, 7);
            ck_assert_mem_eq(blob, "payload", 7);
            free(blob);
        } else {
            ck_assert_int_eq(g, STORE_NOT_FOUND);
            ck_assert_int_ne(pst, STORE_OK); /* acknowledged puts are never lost */
        }
        ck_assert_int_eq(store_check(s), STORE_OK);
        store_close(s);
    }
    ck_assert_msg(done, "no fault-free run within %ld allocations", n);
    ck_assert_int_gt(failures_seen, 10); /* the walk did exercise failures */
    tmpdb_remove(&t);

    ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &oom_base), SQLITE_OK);
    ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
}
END_TEST

/* ---- idempotent puts and the backend's choice ------------------------------------------------ */

static store *open_opts(const tmpdb *t, int idempotent) {
    store_options o = {.idempotent = idempotent};
    store *s = NULL;
    char why[256];
    store_status st = store_open_with(t->path, &o, &s, why, sizeof why);
    ck_assert_msg(st == STORE_OK, "store_open_with: %s (%s)", store_status_text(st), why);
    return s;
}

START_TEST(t_idempotent) {
    tmpdb t;
    tmpdb_make(&t);
    /* On: an identical put at t = 200 changes nothing: version 1, updated
       still 100, created 0 (the name exists); a different blob is version 2;
       putting the first blob again is a change again (version 3). */
    store *s = open_opts(&t, 1);
    store_meta m;
    int created = -1;
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "abc", 3, 100, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "abc", 3, 200, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(m.created_ms, 100);
    ck_assert_int_eq(m.updated_ms, 100);
    ck_assert_int_eq(created, 0);
    ck_assert_str_eq(m.name, "same");
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "abd", 3, 300, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 2);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "abc", 3, 400, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 3);
    ck_assert_int_eq(m.updated_ms, 400);
    /* a prefix is not the same content */
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "ab", 2, 500, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 4);
    /* the same bytes under another kind are another entry */
    ck_assert_int_eq(store_put(s, STORE_LEVEL, "same", "ab", 2, 600, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 1);
    ck_assert_int_eq(created, 1);
    expect_entry(s, "same", 4, "ab");
    store_close(s);

    /* Off (-1): every put is a new version, identical or not. */
    s = open_opts(&t, -1);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "ab", 2, 700, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, 5);
    store_close(s);

    /* Default: on for PostgreSQL, off for SQLite (unchanged behaviour). */
    s = open_ok(&t);
    ck_assert_int_eq(store_put(s, STORE_NAVMESH, "same", "ab", 2, 800, &m, &created), STORE_OK);
    ck_assert_int_eq(m.version, g_pg_mode ? 5 : 6);
    ck_assert_str_eq(store_backend(s), g_pg_mode ? "postgres" : "sqlite");
    ck_assert_int_eq(store_connected(s), 1);
    store_close(s);
    tmpdb_remove(&t);
}
END_TEST

START_TEST(t_target_kind) {
    /* Which backend a --db value selects, case by case. */
    static const struct {
        const char *target;
        int pg;
    } cases[] = {
        {"postgres://navd@db:5432/navd", 1},
        {"postgresql://u:secret@h1:5432,h2:5432/navd?target_session_attrs=read-write", 1},
        {"host=db1,db2 dbname=navd target_session_attrs=read-write", 1},
        {"  dbname = navd", 1},
        {"data/navd.db", 0},
        {"/var/lib/navd/navd.db", 0},
        {"./host=x.db", 0},
        {"navd.db", 0},
        {"Host=x", 0}, /* keywords are lower case */
        {"=x", 0},
        {"postgres:/x", 0},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(store_target_is_postgres(cases[i].target) == cases[i].pg, "%s",
                      cases[i].target);
    ck_assert_int_eq(store_target_is_postgres(NULL), 0);
}
END_TEST

/* The "postgres" case's cluster, started once in the runner (not per test). */
static void pg_case_setup(void) {
    char why[200] = "";
    if (tc_pg_start(&g_pg, why, sizeof why) != 0)
        snprintf(g_pg_failed, sizeof g_pg_failed, "%s", why);
    g_pg_mode = 1;
}

static void pg_case_teardown(void) {
    tc_pg_destroy(&g_pg);
    g_pg_mode = 0;
}

Suite *store_suite(void) {
    Suite *s = suite_create("store");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, t_status_text);
    tcase_add_test(basic, t_create_replace);
    tcase_add_test(basic, t_empty_and_binary_blob);
    tcase_add_test(basic, t_delete);
    tcase_add_test(basic, t_get_missing);
    tcase_add_test(basic, t_each_order);
    tcase_add_test(basic, t_reopen);
    tcase_add_test(basic, t_invalid_args);
    tcase_add_test(basic, t_integrity_ok);
    tcase_add_test(basic, t_kinds_are_separate);
    tcase_add_test(basic, t_idempotent);
    tcase_add_test(basic, t_target_kind);
    suite_add_tcase(s, basic);

    TCase *files = tcase_create("files");
    tcase_add_test(files, t_migrate_empty_file);
    tcase_add_test(files, t_migrate_race);
    tcase_add_test(files, t_migrate_v1_keeps_navmeshes);
    tcase_add_test(files, t_future_version_refused);
    tcase_add_test(files, t_garbage_refused);
    tcase_add_test(files, t_corrupt_pages);
    suite_add_tcase(s, files);

    TCase *conc = tcase_create("concurrency");
    tcase_set_timeout(conc, 60);
    tcase_add_test(conc, t_concurrent_one_handle);
    tcase_add_test(conc, t_concurrent_two_handles);
    suite_add_tcase(s, conc);

    /* Each put here is an fsync: seconds on a disk shared with parallel
       builds, so do not depend on Check's 4 s default. */
    TCase *dur = tcase_create("durability");
    tcase_set_timeout(dur, 300); /* the allocation-failure walk opens and fsyncs a database per
                                    step: minutes on a loaded machine */
    tcase_add_test(dur, t_durable_exit_without_close);
    tcase_add_test(dur, t_durable_sigkill_mid_stream);
    tcase_add_test(dur, t_alloc_failure);
    suite_add_tcase(s, dur);

    /* The same tests on PostgreSQL, when its binaries are installed. */
    char why[200];
    if (tc_pg_available(why, sizeof why) != 0) {
        printf("skip: store tests on PostgreSQL: %s\n", why);
        return s;
    }
    TCase *pg = tcase_create("postgres");
    tcase_set_timeout(pg, 120);
    tcase_add_unchecked_fixture(pg, pg_case_setup, pg_case_teardown);
    tcase_add_test(pg, t_create_replace);
    tcase_add_test(pg, t_empty_and_binary_blob);
    tcase_add_test(pg, t_delete);
    tcase_add_test(pg, t_get_missing);
    tcase_add_test(pg, t_each_order);
    tcase_add_test(pg, t_reopen);
    tcase_add_test(pg, t_invalid_args);
    tcase_add_test(pg, t_integrity_ok);
    tcase_add_test(pg, t_kinds_are_separate);
    tcase_add_test(pg, t_idempotent);
    tcase_add_test(pg, t_concurrent_one_handle);
    tcase_add_test(pg, t_concurrent_two_handles);
    tcase_add_test(pg, t_durable_exit_without_close);
    tcase_add_test(pg, t_durable_sigkill_mid_stream);
    suite_add_tcase(s, pg);
    return s;
}
