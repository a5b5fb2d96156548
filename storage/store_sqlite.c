/*
 * store_sqlite.c: the SQLite backend: blobs kept durably in one file.
 *
 * Owns the SQLite connection, the schema and its migrations, and the mapping
 * of SQLite result codes onto store_status. A handle holds one connection,
 * its prepared statements (prepared once at open, reset after every use) and
 * a mutex: the connection is opened without SQLite's own per-connection mutex
 * because every entry point below takes ours for its whole duration, which
 * also keeps a statement's bind/step/reset sequence from interleaving with
 * another thread's.
 *
 * Durability rules (why the pragmas are what they are):
 * - journal_mode=WAL: readers never block the one writer and a commit is one
 *   sequential append to the -wal file.
 * - synchronous=FULL: in WAL mode SQLite then fsyncs the WAL at every commit,
 *   before COMMIT returns. With NORMAL (the usual WAL pairing) a commit that
 *   returned could still vanish on power loss until the next checkpoint;
 *   store_put's STORE_OK is what the HTTP layer acknowledges to a client, so
 *   it must mean "on disk", not "in the page cache".
 * - busy_timeout: another connection (a second navd on the same file, the
 *   sqlite3 shell, a backup) may hold the write lock briefly; we wait instead
 *   of failing at once.
 * - foreign_keys=ON: none in schema v1, but later migrations can rely on it.
 * - journal_size_limit: a checkpoint after a large upload truncates the -wal
 *   file back to this size instead of leaving it at its high-water mark.
 *
 * The store never logs: every failure is a status. store_open_detail adds a
 * readable reason for the one place that needs to explain itself (start-up).
 */
#include "storage/store_internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Milliseconds a statement waits for another connection's lock. */
#define STORE_BUSY_TIMEOUT_MS 5000
/* Bytes the -wal file is truncated to after a checkpoint (as SQL text). */
#define STORE_WAL_LIMIT_BYTES "16777216"

/*
 * Schema migrations, in order. Step i (0-based) brings the database from
 * user_version i to i + 1 and runs in one transaction together with that
 * bump, so a crash mid-migration leaves the previous version intact. Append
 * new steps; never edit a step that has shipped.
 */
static const char *const store_migrations[] = {
    /* v1: one row per navmesh; version counts puts since creation. */
    "CREATE TABLE navmeshes ("
    " name TEXT PRIMARY KEY,"
    " version INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL,"
    " blob BLOB NOT NULL)",
    /* v2: level geometry (bake sources) and flight volumes, kept exactly like
       navmeshes (store_kind) so every guarantee holds for all three. */
    "CREATE TABLE levels ("
    " name TEXT PRIMARY KEY,"
    " version INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL,"
    " blob BLOB NOT NULL);"
    "CREATE TABLE volumes ("
    " name TEXT PRIMARY KEY,"
    " version INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL,"
    " blob BLOB NOT NULL)",
};
#define STORE_SCHEMA_LATEST ((int)(sizeof store_migrations / sizeof store_migrations[0]))

/* Transaction statements, shared by every kind. */
#define STORE_TX_LIST(X)                                                                           \
    X(ST_BEGIN, "BEGIN IMMEDIATE")                                                                 \
    X(ST_COMMIT, "COMMIT")                                                                         \
    X(ST_ROLLBACK, "ROLLBACK")

/* Per-kind statements, one X-macro so the enum and the SQL never drift; "%1$s"
   is the kind's table (store_kind_table), filled in once at open. */
#define STORE_STMT_LIST(X)                                                                         \
    X(ST_FIND, "SELECT version, created_ms FROM %1$s WHERE name = ?1")                             \
    X(ST_SAME, "SELECT version, created_ms, updated_ms FROM %1$s WHERE name = ?1 AND blob = ?2")   \
    X(ST_INSERT, "INSERT INTO %1$s (name, version, created_ms, updated_ms, blob)"                  \
                 " VALUES (?1, 1, ?2, ?2, ?3)")                                                    \
    X(ST_UPDATE, "UPDATE %1$s SET version = ?2, updated_ms = ?3, blob = ?4 WHERE name = ?1")       \
    X(ST_DELETE, "DELETE FROM %1$s WHERE name = ?1")                                               \
    X(ST_GET, "SELECT name, version, created_ms, updated_ms, blob FROM %1$s WHERE name = ?1")      \
    X(ST_EACH, "SELECT name, version, created_ms, updated_ms, blob FROM %1$s ORDER BY name")

enum {
#define STORE_STMT_ENUM(id, sql) id,
    STORE_TX_LIST(STORE_STMT_ENUM) ST_TX_COUNT
};
enum {
    STORE_STMT_LIST(STORE_STMT_ENUM) ST_COUNT
#undef STORE_STMT_ENUM
};

static const char *const store_tx_sql[ST_TX_COUNT] = {
#define STORE_STMT_SQL(id, sql) [id] = sql,
    STORE_TX_LIST(STORE_STMT_SQL)};
static const char *const store_stmt_sql[ST_COUNT] = {STORE_STMT_LIST(STORE_STMT_SQL)
#undef STORE_STMT_SQL
};

/* The handle: the common head first (store_internal.h), then ours. */
typedef struct store_sqlite {
    struct store base;
    sqlite3 *db;
    sqlite3_stmt *tx[ST_TX_COUNT];
    sqlite3_stmt *stmt[STORE_KIND_COUNT][ST_COUNT];
    pthread_mutex_t lock;
    int schema_version;
    char path[1024]; /* for store_describe */
} store_sqlite;

#define SQ(s) ((store_sqlite *)(s))

/* ---- helpers --------------------------------------------------------------------------------- */

/* Maps a SQLite primary result code to our status. Anything that is not
   memory or a bad argument is the disk's or the file's fault: STORE_IO. */
static store_status store_from_sqlite(int rc) {
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return STORE_OK;
    case SQLITE_NOMEM:
        return STORE_NOMEM;
    case SQLITE_TOOBIG:
        return STORE_INVALID_ARG;
    default:
        return STORE_IO;
    }
}

/* Runs one SQL text that returns no rows we need. */
static int store_exec(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Reads a single-integer PRAGMA (user_version). */
static int store_pragma_int(sqlite3 *db, const char *sql, int *value) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *value = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_CORRUPT; /* a pragma that returns no row: not a database we know */
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Fills meta from a row shaped (name, version, created_ms, updated_ms, ...).
   A name our API could never have written means the file was edited behind
   our back; report it rather than hand out a truncated name. */
static store_status store_row_meta(sqlite3_stmt *st, store_meta *meta) {
    const unsigned char *name = sqlite3_column_text(st, 0);
    if (name == NULL) {
        return sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM ? STORE_NOMEM : STORE_IO;
    }
    if (!store_name_valid((const char *)name)) {
        return STORE_IO;
    }
    if (meta != NULL) {
        memset(meta, 0, sizeof *meta);
        memcpy(meta->name, name, strlen((const char *)name) + 1);
        meta->version = sqlite3_column_int64(st, 1);
        meta->created_ms = sqlite3_column_int64(st, 2);
        meta->updated_ms = sqlite3_column_int64(st, 3);
    }
    return STORE_OK;
}

/* Runs the migrations the file has not seen yet. Each step re-reads
   user_version inside its write transaction, so two processes opening the
   same new file at once cannot both run a step. */
static store_status store_migrate(sqlite3 *db, int *version, char *why, size_t why_size) {
    for (;;) {
        int rc = store_exec(db, "BEGIN IMMEDIATE");
        int v = 0;
        if (rc == SQLITE_OK) {
            rc = store_pragma_int(db, "PRAGMA user_version", &v);
        }
        if (rc == SQLITE_OK && v < 0) {
            rc = SQLITE_CORRUPT; /* no step brings a negative version anywhere */
        }
        if (rc == SQLITE_OK && v >= STORE_SCHEMA_LATEST) {
            store_exec(db, "ROLLBACK");
            *version = v;
            return STORE_OK;
        }
        if (rc == SQLITE_OK) {
            rc = store_exec(db, store_migrations[v]);
        }
        if (rc == SQLITE_OK) {
            char bump[64];
            snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
            rc = store_exec(db, bump);
        }
        if (rc == SQLITE_OK) {
            rc = store_exec(db, "COMMIT");
        }
        if (rc != SQLITE_OK) {
            store_say(why, why_size, "schema migration to version %d failed: %s", v + 1,
                      sqlite3_errstr(rc));
            if (!sqlite3_get_autocommit(db)) {
                store_exec(db, "ROLLBACK");
            }
            return store_from_sqlite(rc);
        }
    }
}

/*
 * Switches the file to WAL. Leaving rollback-journal mode needs an exclusive
 * lock, and SQLite reports SQLITE_BUSY for it at once, without calling the
 * busy handler, when another connection holds any lock (seen with several
 * processes opening one new file together); so retry here for as long as
 * busy_timeout would have waited. journal_mode answers with the mode now in
 * force: anything but "wal" (an in-memory database says "memory") would void
 * the durability rules above, so refuse rather than run on quietly.
 */
static int store_enable_wal(sqlite3 *db) {
    int rc = SQLITE_BUSY;
    for (int waited = 0; waited <= STORE_BUSY_TIMEOUT_MS; waited += 10) {
        sqlite3_stmt *jm = NULL;
        rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &jm, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(jm);
            if (rc == SQLITE_ROW) {
                const char *mode = (const char *)sqlite3_column_text(jm, 0);
                rc = (mode != NULL && strcmp(mode, "wal") == 0) ? SQLITE_OK : SQLITE_CANTOPEN;
            }
        }
        sqlite3_finalize(jm);
        if ((rc & 0xff) != SQLITE_BUSY) {
            return rc;
        }
        sqlite3_sleep(10);
    }
    return rc;
}

/* ---- open / close ---------------------------------------------------------------------------- */

static const store_methods store_sqlite_methods;

/* Finalizes the cached statements and closes the connection. The caller
   guarantees no other thread is inside a store_ call on s (the service closes
   the store after the HTTP daemon has stopped). */
static void sq_close(store *base) {
    store_sqlite *s = SQ(base);
    for (int i = 0; i < ST_TX_COUNT; i++) {
        sqlite3_finalize(s->tx[i]);
    }
    for (int k = 0; k < STORE_KIND_COUNT; k++) {
        for (int i = 0; i < ST_COUNT; i++) {
            sqlite3_finalize(s->stmt[k][i]);
        }
    }
    /* Every statement is finalized, so this closes for real; as the last
       connection it also checkpoints the WAL into the main file. */
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Pragmas, migrations and statements of a freshly opened connection. */
static int sq_setup(store_sqlite *s, char *why, size_t why_size, store_status *st) {
    /* Read the version before touching anything: a file from a newer navd
       (or one that is not a database at all) must be left exactly as it is. */
    int v = 0;
    int rc = store_pragma_int(s->db, "PRAGMA user_version", &v);
    if (rc != SQLITE_OK) {
        store_say(why, why_size, "not a usable SQLite database: %s", sqlite3_errstr(rc));
        return rc;
    }
    if (v < 0 || v > STORE_SCHEMA_LATEST) {
        store_say(why, why_size,
                  "database schema version %d is newer than this navd supports (%d); "
                  "refusing to open it",
                  v, STORE_SCHEMA_LATEST);
        return SQLITE_ERROR;
    }
    rc = store_enable_wal(s->db);
    if (rc == SQLITE_OK) {
        rc = store_exec(s->db, "PRAGMA synchronous=FULL");
    }
    if (rc == SQLITE_OK) {
        rc = store_exec(s->db, "PRAGMA foreign_keys=ON");
    }
    if (rc == SQLITE_OK) {
        rc = store_exec(s->db, "PRAGMA journal_size_limit=" STORE_WAL_LIMIT_BYTES);
    }
    if (rc != SQLITE_OK) {
        store_say(why, why_size, "cannot enable WAL with synchronous=FULL: %s", sqlite3_errstr(rc));
        return rc;
    }
    *st = store_migrate(s->db, &s->schema_version, why, why_size);
    if (*st != STORE_OK) {
        return SQLITE_ERROR;
    }
    if (s->schema_version > STORE_SCHEMA_LATEST) {
        /* Another process upgraded the file between our check and our lock. */
        store_say(why, why_size, "database schema version %d is newer than this navd supports",
                  s->schema_version);
        return SQLITE_ERROR;
    }
    for (int i = 0; i < ST_TX_COUNT; i++) {
        rc = sqlite3_prepare_v3(s->db, store_tx_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->tx[i],
                                NULL);
        if (rc != SQLITE_OK) {
            store_say(why, why_size, "cannot prepare a statement: %s", sqlite3_errmsg(s->db));
            return rc;
        }
    }
    for (int k = 0; k < STORE_KIND_COUNT; k++) {
        for (int i = 0; i < ST_COUNT; i++) {
            if (i == ST_SAME && s->base.opt.idempotent <= 0) {
                continue; /* only idempotent puts compare blobs (the default open stays as it was)
                           */
            }
            char sql[256];
            snprintf(sql, sizeof sql, store_stmt_sql[i], store_kind_table((store_kind)k));
            rc =
                sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[k][i], NULL);
            if (rc != SQLITE_OK) {
                store_say(why, why_size, "unexpected table layout: %s", sqlite3_errmsg(s->db));
                return rc;
            }
        }
    }
    return SQLITE_OK;
}

store_status store_sqlite_open(const char *path, const store_options *opt, store **out, char *why,
                               size_t why_size) {
    store_sqlite *s = calloc(1, sizeof *s);
    if (s == NULL) {
        store_say(why, why_size, "out of memory");
        return STORE_NOMEM;
    }
    s->base.m = &store_sqlite_methods;
    s->base.opt = *opt;
    snprintf(s->path, sizeof s->path, "%s", path);
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        store_say(why, why_size, "cannot create a mutex");
        return STORE_NOMEM;
    }
    int rc = sqlite3_open_v2(
        path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        store_say(why, why_size, "cannot open the database: %s", sqlite3_errstr(rc));
        sq_close(&s->base);
        return store_from_sqlite(rc);
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
    store_status st = STORE_OK;
    rc = sq_setup(s, why, why_size, &st);
    if (rc != SQLITE_OK) {
        sq_close(&s->base);
        return st != STORE_OK ? st : store_from_sqlite(rc);
    }
    s->base.schema_version = s->schema_version;
    *out = &s->base;
    return STORE_OK;
}

/* ---- writes ---------------------------------------------------------------------------------- */

/* Steps a write statement to completion and resets it. */
static int store_step_done(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Binds a blob; a zero-length blob becomes X'' (NOT NULL holds) instead of
   the SQL NULL that a NULL pointer would bind. */
static int store_bind_blob(sqlite3_stmt *st, int idx, const void *blob, size_t len) {
    if (len == 0) {
        return sqlite3_bind_zeroblob(st, idx, 0);
    }
    return sqlite3_bind_blob64(st, idx, blob, (sqlite3_uint64)len, SQLITE_STATIC);
}

/* With idempotent puts: 1 and *meta filled when the current version's blob
   is byte-identical to blob (the put then changes nothing). */
static int store_same(store_sqlite *s, store_kind kind, const char *name, const void *blob,
                      size_t len, store_meta *meta, int *same) {
    sqlite3_stmt *st = s->stmt[kind][ST_SAME];
    *same = 0;
    int rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) {
        rc = store_bind_blob(st, 2, blob, len);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *same = 1;
            memcpy(meta->name, name, strlen(name) + 1);
            meta->version = sqlite3_column_int64(st, 0);
            meta->created_ms = sqlite3_column_int64(st, 1);
            meta->updated_ms = sqlite3_column_int64(st, 2);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* The body of store_put, inside BEGIN IMMEDIATE with the mutex held. */
static int store_put_locked(store_sqlite *s, store_kind kind, const char *name, const void *blob,
                            size_t len, int64_t now_ms, store_meta *meta, int *created) {
    if (s->base.opt.idempotent > 0) {
        int same = 0;
        int rc = store_same(s, kind, name, blob, len, meta, &same);
        if (rc != SQLITE_OK || same) {
            return rc;
        }
    }
    sqlite3_stmt *find = s->stmt[kind][ST_FIND];
    int rc = sqlite3_bind_text(find, 1, name, -1, SQLITE_STATIC);
    int found = 0;
    int64_t version = 0, created_ms = now_ms;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(find);
        if (rc == SQLITE_ROW) {
            found = 1;
            version = sqlite3_column_int64(find, 0);
            created_ms = sqlite3_column_int64(find, 1);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_reset(find);
    sqlite3_clear_bindings(find);
    if (rc != SQLITE_OK) {
        return rc;
    }

    sqlite3_stmt *w = s->stmt[kind][found ? ST_UPDATE : ST_INSERT];
    rc = sqlite3_bind_text(w, 1, name, -1, SQLITE_STATIC);
    if (found) {
        if (rc == SQLITE_OK) {
            rc = sqlite3_bind_int64(w, 2, version + 1);
        }
        if (rc == SQLITE_OK) {
            rc = sqlite3_bind_int64(w, 3, now_ms);
        }
        if (rc == SQLITE_OK) {
            rc = store_bind_blob(w, 4, blob, len);
        }
    } else {
        if (rc == SQLITE_OK) {
            rc = sqlite3_bind_int64(w, 2, now_ms);
        }
        if (rc == SQLITE_OK) {
            rc = store_bind_blob(w, 3, blob, len);
        }
    }
    if (rc != SQLITE_OK) {
        sqlite3_reset(w);
        sqlite3_clear_bindings(w);
        return rc;
    }
    rc = store_step_done(w);
    if (rc != SQLITE_OK) {
        return rc;
    }
    if (meta != NULL) {
        memcpy(meta->name, name, strlen(name) + 1);
        meta->version = found ? version + 1 : 1;
        meta->created_ms = created_ms;
        meta->updated_ms = now_ms;
    }
    if (created != NULL) {
        *created = !found;
    }
    return SQLITE_OK;
}

/* Ends the transaction the way rc says: COMMIT on success (whose own failure
   becomes the result), ROLLBACK otherwise. */
static int store_finish(store_sqlite *s, int rc) {
    if (rc == SQLITE_OK) {
        rc = store_step_done(s->tx[ST_COMMIT]);
        if (rc == SQLITE_OK) {
            return SQLITE_OK;
        }
    }
    /* A failed COMMIT may have left the transaction open (SQLITE_BUSY) or
       already rolled back (I/O error); only roll back what is still open. */
    if (!sqlite3_get_autocommit(s->db)) {
        store_step_done(s->tx[ST_ROLLBACK]);
    }
    return rc;
}

/*
 * Creates or replaces `name` in one BEGIN IMMEDIATE transaction (the write
 * lock is taken before the version is read, so two writers on the same file
 * cannot both read version N and both write N + 1). store.c checked the
 * arguments; meta and created are never NULL here.
 */
static store_status sq_put(store *base, store_kind kind, const char *name, const void *blob,
                           size_t len, int64_t now_ms, store_meta *meta, int *created) {
    store_sqlite *s = SQ(base);
    pthread_mutex_lock(&s->lock);
    int rc = store_step_done(s->tx[ST_BEGIN]);
    if (rc == SQLITE_OK) {
        rc = store_finish(s, store_put_locked(s, kind, name, blob, len, now_ms, meta, created));
    }
    pthread_mutex_unlock(&s->lock);
    return store_from_sqlite(rc);
}

/* Deletes `name` (a single statement is its own transaction). */
static store_status sq_del(store *base, store_kind kind, const char *name) {
    store_sqlite *s = SQ(base);
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = s->stmt[kind][ST_DELETE];
    int rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int changed = 0;
    if (rc == SQLITE_OK) {
        rc = store_step_done(st);
        changed = sqlite3_changes(s->db);
    } else {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    pthread_mutex_unlock(&s->lock);
    if (rc != SQLITE_OK) {
        return store_from_sqlite(rc);
    }
    return changed > 0 ? STORE_OK : STORE_NOT_FOUND;
}

/* ---- reads ----------------------------------------------------------------------------------- */

/* Reads one entry (store.c zeroed the outputs and checked the arguments). */
static store_status sq_get(store *base, store_kind kind, const char *name, store_meta *meta,
                           void **blob, size_t *len) {
    store_sqlite *s = SQ(base);
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = s->stmt[kind][ST_GET];
    store_status out = STORE_OK;
    int rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_DONE) {
        out = STORE_NOT_FOUND;
    } else if (rc != SQLITE_ROW) {
        out = store_from_sqlite(rc);
    } else {
        out = store_row_meta(st, meta);
        if (out == STORE_OK && blob != NULL) {
            const void *src = sqlite3_column_blob(st, 4);
            size_t n = (size_t)sqlite3_column_bytes(st, 4);
            if (src == NULL && n > 0) {
                out = STORE_NOMEM; /* SQLite could not materialize the value */
            } else {
                void *copy = malloc(n > 0 ? n : 1);
                if (copy == NULL) {
                    out = STORE_NOMEM;
                } else {
                    if (n > 0) {
                        memcpy(copy, src, n);
                    }
                    *blob = copy;
                    *len = n;
                }
            }
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    pthread_mutex_unlock(&s->lock);
    return out;
}

/*
 * Calls fn per entry in name order (byte order of the names). The whole walk
 * is one SELECT, so it sees one consistent snapshot, and the handle's mutex
 * is held throughout: fn must not call back into the same store handle.
 */
static store_status sq_each(store *base, store_kind kind, int with_blobs, store_each_fn fn,
                            void *ctx, int *fn_result) {
    store_sqlite *s = SQ(base);
    static const unsigned char empty[1] = {0};
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = s->stmt[kind][ST_EACH];
    store_status out = STORE_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_meta meta;
        out = store_row_meta(st, &meta);
        if (out != STORE_OK) {
            break;
        }
        const void *b = sqlite3_column_blob(st, 4);
        size_t n = (size_t)sqlite3_column_bytes(st, 4);
        if (b == NULL && n > 0) {
            out = STORE_NOMEM;
            break;
        }
        int r = with_blobs ? fn(ctx, &meta, b != NULL ? b : empty, n) : fn(ctx, &meta, NULL, 0);
        if (r != 0) {
            if (fn_result != NULL) {
                *fn_result = r;
            }
            break;
        }
    }
    if (out == STORE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        out = store_from_sqlite(rc);
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&s->lock);
    return out;
}

/* PRAGMA integrity_check answers a single row "ok" when all is well, else one
   row per problem found. */
static store_status sq_check(store *base) {
    store_sqlite *s = SQ(base);
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL);
    store_status out = STORE_OK;
    if (rc == SQLITE_OK) {
        int rows = 0, ok = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *text = (const char *)sqlite3_column_text(st, 0);
            rows++;
            ok = text != NULL && strcmp(text, "ok") == 0;
        }
        if (rc != SQLITE_DONE) {
            out = store_from_sqlite(rc);
        } else if (rows != 1 || !ok) {
            out = STORE_IO;
        }
    } else {
        out = store_from_sqlite(rc);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->lock);
    return out;
}

/* ---- the rest of the method table: one writer, nothing to watch --------------------------- */

static int sq_connected(store *base) {
    (void)base;
    return 1;
}

static store_status sq_watch(store *base, store_watch_fn fn, void *ctx) {
    (void)base, (void)fn, (void)ctx;
    return STORE_OK;
}

static void sq_unwatch(store *base) {
    (void)base;
}

static void sq_stats(store *base, store_stats *out) {
    (void)base;
    out->connected = 1;
}

static void sq_describe(store *base, char *buf, size_t size) {
    snprintf(buf, size, "%s", SQ(base)->path);
}

static const store_methods store_sqlite_methods = {
    .name = "sqlite",
    .close = sq_close,
    .put = sq_put,
    .del = sq_del,
    .get = sq_get,
    .each = sq_each,
    .check = sq_check,
    .connected = sq_connected,
    .watch = sq_watch,
    .unwatch = sq_unwatch,
    .stats = sq_stats,
    .describe = sq_describe,
};
