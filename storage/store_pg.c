/*
 * store_pg.c: the PostgreSQL backend: connections, calls bounded in time,
 * the schema and its migrations, reads and writes (see store_pg_internal.h
 * for the two connections and store_pg_watch.c for the keeper thread).
 *
 * One table holds the three kinds, keyed by (kind, name); name sorts by
 * byte ("C" collation), as SQLite's BINARY does. A row trigger announces
 * every committed insert, update and delete on STORE_PG_CHANNEL with the
 * payload "kind:name:version" (0 on delete): small, never the blob
 * (NOTIFY payloads must stay under 8,000 bytes). Because the trigger runs in
 * the writing transaction, the notification is sent exactly when the commit
 * happens, whoever wrote (a navd, psql, a restore).
 *
 * Durability: a put is one INSERT ... ON CONFLICT DO UPDATE in autocommit,
 * so STORE_OK means PostgreSQL answered its COMMIT, which with
 * synchronous_commit on (enforced per session when the server says off or
 * local) means the WAL is flushed (and, with synchronous replicas
 * configured, replicated). When the answer is lost (a timeout, a dropped
 * connection) the write may or may not have committed; the caller reports
 * 503 and a retry of the same content is harmless: puts are idempotent by
 * content (sha256 column) unless store_options.idempotent is -1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/store_pg_internal.h"

/* Serializes first starts of several navd at once (an arbitrary constant:
   "navd" in ASCII). */
#define STORE_PG_LOCK_KEY "1851880036"

/*
 * Migrations, in order: step i brings navd_schema.version from i to i + 1,
 * in one transaction together with that bump, under an advisory lock.
 * Append new steps; never edit one that has shipped.
 */
static const char *const pg_migrations[] = {
    /* v1: every kind in one table; the notify trigger */
    "CREATE TABLE navd_entries ("
    " kind text NOT NULL,"
    " name text COLLATE \"C\" NOT NULL,"
    " version bigint NOT NULL,"
    " created_ms bigint NOT NULL,"
    " updated_ms bigint NOT NULL,"
    " sha256 bytea NOT NULL,"
    " blob bytea NOT NULL,"
    " PRIMARY KEY (kind, name));"
    /* meshes are already compact binary: skip pglz, keep reads a plain copy */
    "ALTER TABLE navd_entries ALTER COLUMN blob SET STORAGE EXTERNAL;"
    "CREATE FUNCTION navd_notify() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN"
    " IF TG_OP = 'DELETE' THEN"
    "  PERFORM pg_notify('" STORE_PG_CHANNEL "', OLD.kind || ':' || OLD.name || ':0');"
    "  RETURN OLD;"
    " END IF;"
    " PERFORM pg_notify('" STORE_PG_CHANNEL "', NEW.kind || ':' || NEW.name || ':' || NEW.version);"
    " RETURN NEW;"
    " END $f$;"
    "CREATE TRIGGER navd_entries_notify AFTER INSERT OR UPDATE OR DELETE ON navd_entries"
    " FOR EACH ROW EXECUTE FUNCTION navd_notify()",
};
#define PG_SCHEMA_LATEST ((int)(sizeof pg_migrations / sizeof pg_migrations[0]))

static const char PG_SQL_PUT[] =
    "INSERT INTO navd_entries AS e (kind, name, version, created_ms, updated_ms, sha256, blob)"
    " VALUES ($1, $2, 1, $3::bigint, $3::bigint, sha256($4::bytea), $4::bytea)"
    " ON CONFLICT (kind, name) DO UPDATE SET version = e.version + 1,"
    " updated_ms = EXCLUDED.updated_ms, sha256 = EXCLUDED.sha256, blob = EXCLUDED.blob"
    " WHERE NOT $5::boolean OR e.sha256 <> EXCLUDED.sha256"
    " RETURNING version, created_ms, updated_ms";
static const char PG_SQL_META[] = "SELECT name, version, created_ms, updated_ms FROM navd_entries"
                                  " WHERE kind = $1 AND name = $2";
static const char PG_SQL_GET[] = "SELECT name, version, created_ms, updated_ms, blob FROM"
                                 " navd_entries WHERE kind = $1 AND name = $2";
static const char PG_SQL_DELETE[] = "DELETE FROM navd_entries WHERE kind = $1 AND name = $2";
static const char PG_SQL_EACH[] = "SELECT name, version, created_ms, updated_ms, blob FROM"
                                  " navd_entries WHERE kind = $1 ORDER BY name";
static const char PG_SQL_EACH_META[] = "SELECT name, version, created_ms, updated_ms FROM"
                                       " navd_entries WHERE kind = $1 ORDER BY name";

static const store_methods store_pg_methods;

/* ---- time ------------------------------------------------------------------------------------ */

static int64_t pg_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- connections ----------------------------------------------------------------------------- */

/* libpq prints NOTICEs (e.g. "relation already exists, skipping") on
   stderr by default; the store never logs. */
static void pg_quiet(void *arg, const char *message) {
    (void)arg, (void)message;
}

/* Copies libpq's message without its trailing newline. */
static void pg_why(char *why, size_t why_size, const char *prefix, PGconn *c) {
    const char *m = c != NULL ? PQerrorMessage(c) : "out of memory";
    size_t n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' ')) {
        n--;
    }
    store_say(why, why_size, "%s%.*s", prefix, (int)n, m);
}

PGconn *store_pg_connect(store_pg *p, const char *app, char *why, size_t why_size) {
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%u", p->base.opt.connect_timeout_s);
    /* Keywords are applied in order and the expanded dbname (the user's whole
       string) comes last: whatever the user set wins over our defaults. */
    const char *const keys[] = {
        "connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
        "keepalives_count", "application_name", "dbname",          NULL};
    const char *const vals[] = {timeout, "1", "10", "5", "3", app, p->conninfo, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (c == NULL || PQstatus(c) != CONNECTION_OK) {
        pg_why(why, why_size, "cannot connect to PostgreSQL: ", c);
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, pg_quiet, NULL);
    if (PQsetnonblocking(c, 1) != 0) {
        store_say(why, why_size, "cannot make the PostgreSQL connection non-blocking");
        PQfinish(c);
        return NULL;
    }
    /* The server bounds each statement too; and an acknowledged write must
       be flushed, whatever the server's default says. */
    char ms[24];
    snprintf(ms, sizeof ms, "%u", p->base.opt.op_timeout_ms);
    const char *const v[] = {ms};
    PGresult *r = NULL;
    store_status st =
        store_pg_exec(p, c,
                      "SELECT set_config('statement_timeout', $1, false),"
                      " CASE WHEN current_setting('synchronous_commit') IN ('off', 'local')"
                      " THEN set_config('synchronous_commit', 'on', false) END",
                      1, v, NULL, NULL, 0, &r);
    PQclear(r);
    if (st != STORE_OK) {
        pg_why(why, why_size, "cannot set up the PostgreSQL session: ", c);
        PQfinish(c);
        return NULL;
    }
    return c;
}

void store_pg_wake(store_pg *p) {
    char b = 1;
    ssize_t n = write(p->wake[1], &b, 1); /* a full pipe already wakes it */
    (void)n;
}

void store_pg_drop_main(store_pg *p) {
    if (p->conn != NULL) {
        PQfinish(p->conn);
        p->conn = NULL;
        atomic_store(&p->main_up, 0);
        atomic_fetch_add(&p->disconnects, 1);
        store_pg_wake(p);
    }
}

/* ---- bounded calls --------------------------------------------------------------------------- */

/* Waits for events on c's socket until deadline; 1 ready, 0 timeout, -1 error. */
static int pg_wait(PGconn *c, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - pg_mono_ms();
        if (left <= 0) {
            return 0;
        }
        struct pollfd pfd = {.fd = PQsocket(c), .events = events};
        if (pfd.fd < 0) {
            return -1;
        }
        int n = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        if (n > 0) {
            return 1;
        }
        if (n < 0 && errno != EINTR) {
            return -1;
        }
    }
}

/* Maps a failed result to a status: a lost or read-only server (after a
   failover the old primary answers 25006) is STORE_UNAVAILABLE, and the
   caller must reconnect; *drop says so. */
static store_status pg_error_status(PGconn *c, const PGresult *r, int *drop) {
    const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(c) == CONNECTION_BAD || state == NULL) {
        *drop = 1;
        return STORE_UNAVAILABLE;
    }
    if (strncmp(state, "08", 2) == 0 || strcmp(state, "25006") == 0 ||
        strncmp(state, "57P", 3) == 0) {
        *drop = 1; /* connection exception, read-only, shutdown / cannot connect now */
        return STORE_UNAVAILABLE;
    }
    if (strcmp(state, "57014") == 0 || strncmp(state, "53", 2) == 0) {
        return STORE_UNAVAILABLE; /* statement_timeout; out of resources */
    }
    if (strncmp(state, "40", 2) == 0) {
        return STORE_CONFLICT; /* serialization failure or deadlock: retry */
    }
    return STORE_IO;
}

/* Sends the whole query (8 MiB blobs take many writes in non-blocking mode). */
static int pg_flush(PGconn *c, int64_t deadline) {
    int f;
    while ((f = PQflush(c)) == 1) {
        if (pg_wait(c, POLLIN | POLLOUT, deadline) != 1) {
            return -1;
        }
        if (!PQconsumeInput(c)) {
            return -1;
        }
    }
    return f;
}

/*
 * values[i] is text, or raw bytes when formats[i] is 1 (then lengths[i]
 * counts them). binary: results in binary (blobs as raw bytes, integers as
 * 8-byte big-endian). On failure *res is NULL; a timeout or a broken
 * connection is STORE_UNAVAILABLE and leaves c unusable (the caller drops
 * it: a query may still be running on the server).
 */
store_status store_pg_exec(store_pg *p, PGconn *c, const char *sql, int nparams,
                           const char *const *values, const int *lengths, const int *formats,
                           int binary, PGresult **res) {
    *res = NULL;
    int64_t deadline = pg_mono_ms() + p->base.opt.op_timeout_ms;
    int sent = nparams > 0 || binary
                   ? PQsendQueryParams(c, sql, nparams, NULL, values, lengths, formats, binary)
                   : PQsendQuery(c, sql);
    if (!sent || pg_flush(c, deadline) != 0) {
        return STORE_UNAVAILABLE;
    }
    PGresult *first_error = NULL, *last = NULL;
    for (;;) {
        while (PQisBusy(c)) {
            if (pg_wait(c, POLLIN, deadline) != 1 || !PQconsumeInput(c)) {
                PQclear(first_error);
                PQclear(last);
                return STORE_UNAVAILABLE;
            }
        }
        PGresult *r = PQgetResult(c);
        if (r == NULL) {
            break;
        }
        ExecStatusType t = PQresultStatus(r);
        if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK && first_error == NULL) {
            first_error = r;
            continue;
        }
        PQclear(last);
        last = r;
    }
    if (first_error != NULL) {
        int drop = 0;
        store_status st = pg_error_status(c, first_error, &drop);
        PQclear(first_error);
        PQclear(last);
        return st;
    }
    if (last == NULL) {
        return STORE_UNAVAILABLE;
    }
    *res = last;
    return STORE_OK;
}

/* store_pg_exec on the main connection (lock held); a lost connection is dropped. */
static store_status pg_call(store_pg *p, const char *sql, int nparams, const char *const *values,
                            const int *lengths, const int *formats, int binary, PGresult **res) {
    *res = NULL;
    if (p->conn == NULL) {
        return STORE_UNAVAILABLE;
    }
    store_status st =
        store_pg_exec(p, p->conn, sql, nparams, values, lengths, formats, binary, res);
    if (st == STORE_UNAVAILABLE) {
        /* A timeout leaves a query in flight and a broken connection is
           useless: start over on a fresh one either way. A statement_timeout
           (57014) also lands here; a reconnection costs little. */
        store_pg_drop_main(p);
    }
    return st;
}

/* ---- schema ---------------------------------------------------------------------------------- */

/* Reads navd_schema's version into *v (-1: no row). */
static store_status pg_schema_read(store_pg *p, PGconn *c, int *v) {
    PGresult *r = NULL;
    store_status st =
        store_pg_exec(p, c, "SELECT version FROM navd_schema", 0, NULL, NULL, NULL, 0, &r);
    if (st == STORE_OK) {
        *v = PQntuples(r) > 0 ? atoi(PQgetvalue(r, 0, 0)) : -1;
    }
    PQclear(r);
    return st;
}

/* One transaction under the advisory lock: creates navd_schema on first
   use, refuses a newer schema, runs the missing steps. */
static store_status pg_migrate_locked(store_pg *p, PGconn *c, char *why, size_t why_size) {
    PGresult *r = NULL;
    store_status st = store_pg_exec(p, c,
                                    "SELECT pg_advisory_xact_lock(" STORE_PG_LOCK_KEY ");"
                                    "CREATE TABLE IF NOT EXISTS navd_schema (version integer"
                                    " NOT NULL)",
                                    0, NULL, NULL, NULL, 0, &r);
    PQclear(r);
    int v = -1;
    if (st == STORE_OK) {
        st = pg_schema_read(p, c, &v);
    }
    if (st == STORE_OK && v < 0) {
        st = store_pg_exec(p, c, "INSERT INTO navd_schema VALUES (0)", 0, NULL, NULL, NULL, 0, &r);
        PQclear(r);
        v = 0;
    }
    if (st != STORE_OK) {
        pg_why(why, why_size, "cannot read the schema version: ", c);
        return st;
    }
    if (v > PG_SCHEMA_LATEST) {
        store_say(why, why_size,
                  "database schema version %d is newer than this navd supports (%d); "
                  "refusing to use it",
                  v, PG_SCHEMA_LATEST);
        return STORE_IO;
    }
    for (; v < PG_SCHEMA_LATEST; v++) {
        st = store_pg_exec(p, c, pg_migrations[v], 0, NULL, NULL, NULL, 0, &r);
        PQclear(r);
        if (st != STORE_OK) {
            pg_why(why, why_size, "schema migration failed: ", c);
            return st;
        }
    }
    char bump[64];
    snprintf(bump, sizeof bump, "UPDATE navd_schema SET version = %d", v);
    st = store_pg_exec(p, c, bump, 0, NULL, NULL, NULL, 0, &r);
    PQclear(r);
    p->base.schema_version = v;
    return st;
}

static store_status pg_migrate(store_pg *p, PGconn *c, char *why, size_t why_size) {
    PGresult *r = NULL;
    store_status st = store_pg_exec(p, c, "BEGIN", 0, NULL, NULL, NULL, 0, &r);
    PQclear(r);
    if (st == STORE_OK) {
        st = pg_migrate_locked(p, c, why, why_size);
        st = store_pg_exec(p, c, st == STORE_OK ? "COMMIT" : "ROLLBACK", 0, NULL, NULL, NULL, 0,
                           &r) == STORE_OK
                 ? st
                 : STORE_UNAVAILABLE;
        PQclear(r);
    }
    return st;
}

/* ---- open / close ---------------------------------------------------------------------------- */

static void pg_close(store *base) {
    store_pg *p = PG(base);
    store_pg_keeper_stop(p);
    PQfinish(p->conn);
    if (p->wake[0] >= 0) {
        close(p->wake[0]);
        close(p->wake[1]);
    }
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->cb_lock);
    free(p->conninfo);
    free(p);
}

store_status store_pg_open(const char *conninfo, const store_options *opt, store **out, char *why,
                           size_t why_size) {
    store_pg *p = calloc(1, sizeof *p);
    if (p == NULL || (p->conninfo = strdup(conninfo)) == NULL) {
        free(p);
        store_say(why, why_size, "out of memory");
        return STORE_NOMEM;
    }
    p->base.m = &store_pg_methods;
    p->base.opt = *opt;
    p->wake[0] = p->wake[1] = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->cb_lock, NULL);
    char *err = NULL;
    PQconninfoOption *parsed = PQconninfoParse(conninfo, &err);
    if (parsed == NULL) {
        /* libpq's parse errors quote the keyword, never the value */
        store_say(why, why_size, "not a valid PostgreSQL connection string: %s",
                  err != NULL ? err : "out of memory");
        PQfreemem(err);
        pg_close(&p->base);
        return STORE_INVALID_ARG;
    }
    PQconninfoFree(parsed);
    if (pipe(p->wake) != 0 || fcntl(p->wake[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(p->wake[1], F_SETFL, O_NONBLOCK) != 0) {
        store_say(why, why_size, "cannot create a pipe");
        pg_close(&p->base);
        return STORE_NOMEM;
    }
    p->conn = store_pg_connect(p, "navd", why, why_size);
    if (p->conn == NULL) {
        pg_close(&p->base);
        return STORE_UNAVAILABLE;
    }
    atomic_store(&p->main_up, 1);
    snprintf(p->describe, sizeof p->describe, "PostgreSQL database %s on %s:%s", PQdb(p->conn),
             PQhost(p->conn), PQport(p->conn));
    store_status st = pg_migrate(p, p->conn, why, why_size);
    if (st == STORE_OK && store_pg_keeper_start(p) != 0) {
        store_say(why, why_size, "cannot start the PostgreSQL connection thread");
        st = STORE_NOMEM;
    }
    if (st != STORE_OK) {
        pg_close(&p->base);
        return st;
    }
    /* Give the keeper its first listen connection (bounded), so a store
       that just opened reports itself connected. */
    for (int64_t until = pg_mono_ms() + 1000 * (int64_t)opt->connect_timeout_s;
         !atomic_load(&p->listen_up) && pg_mono_ms() < until;) {
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    *out = &p->base;
    return STORE_OK;
}

/* ---- rows ------------------------------------------------------------------------------------ */

/* An 8-byte big-endian integer of a binary result. */
static int64_t pg_int8(const PGresult *r, int row, int col) {
    const unsigned char *b = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t v = 0;
    if (PQgetlength(r, row, col) == 8) {
        for (int i = 0; i < 8; i++) {
            v = v << 8 | b[i];
        }
    }
    return (int64_t)v;
}

/* meta from a binary row (name, version, created_ms, updated_ms, ...). A name
   our API could never have written means someone edited the table by hand. */
static store_status pg_row_meta(const PGresult *r, int row, store_meta *meta) {
    const char *name = PQgetvalue(r, row, 0);
    int n = PQgetlength(r, row, 0);
    if (n <= 0 || n > STORE_NAME_MAX || memchr(name, '\0', (size_t)n) != NULL) {
        return STORE_IO;
    }
    memset(meta, 0, sizeof *meta);
    memcpy(meta->name, name, (size_t)n);
    if (!store_name_valid(meta->name)) {
        return STORE_IO;
    }
    meta->version = pg_int8(r, row, 1);
    meta->created_ms = pg_int8(r, row, 2);
    meta->updated_ms = pg_int8(r, row, 3);
    return STORE_OK;
}

/* ---- writes ---------------------------------------------------------------------------------- */

static store_status pg_put(store *base, store_kind kind, const char *name, const void *blob,
                           size_t len, int64_t now_ms, store_meta *meta, int *created) {
    store_pg *p = PG(base);
    if (len > 0x3fffffff) {
        return STORE_INVALID_ARG; /* a bytea holds at most 1 GB */
    }
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)now_ms);
    const char *vals[5] = {store_kind_table(kind), name, now, len > 0 ? blob : "",
                           p->base.opt.idempotent > 0 ? "t" : "f"};
    const int lens[5] = {0, 0, 0, (int)len, 0};
    const int fmts[5] = {0, 0, 0, 1, 0};
    pthread_mutex_lock(&p->lock);
    store_status st = STORE_OK;
    /* At most twice: an identical put returns no row and the current row is
       read; if a delete slipped in between, the put runs again. */
    for (int attempt = 0; attempt < 2; attempt++) {
        PGresult *r = NULL;
        st = pg_call(p, PG_SQL_PUT, 5, vals, lens, fmts, 0, &r);
        if (st == STORE_OK && PQntuples(r) == 1) {
            memcpy(meta->name, name, strlen(name) + 1);
            meta->version = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
            meta->created_ms = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
            meta->updated_ms = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
            *created = meta->version == 1; /* an update always makes 2 or more */
            PQclear(r);
            break;
        }
        PQclear(r);
        if (st != STORE_OK) {
            break;
        }
        st = pg_call(p, PG_SQL_META, 2, vals, NULL, NULL, 1, &r);
        int found = st == STORE_OK && PQntuples(r) == 1;
        if (found) {
            st = pg_row_meta(r, 0, meta);
        }
        PQclear(r);
        if (st != STORE_OK || found) {
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

static store_status pg_del(store *base, store_kind kind, const char *name) {
    store_pg *p = PG(base);
    const char *vals[2] = {store_kind_table(kind), name};
    pthread_mutex_lock(&p->lock);
    PGresult *r = NULL;
    store_status st = pg_call(p, PG_SQL_DELETE, 2, vals, NULL, NULL, 0, &r);
    if (st == STORE_OK && strcmp(PQcmdTuples(r), "0") == 0) {
        st = STORE_NOT_FOUND;
    }
    PQclear(r);
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* ---- reads ----------------------------------------------------------------------------------- */

static store_status pg_get(store *base, store_kind kind, const char *name, store_meta *meta,
                           void **blob, size_t *len) {
    store_pg *p = PG(base);
    const char *vals[2] = {store_kind_table(kind), name};
    pthread_mutex_lock(&p->lock);
    PGresult *r = NULL;
    store_status st =
        pg_call(p, blob != NULL ? PG_SQL_GET : PG_SQL_META, 2, vals, NULL, NULL, 1, &r);
    pthread_mutex_unlock(&p->lock);
    if (st == STORE_OK && PQntuples(r) == 0) {
        st = STORE_NOT_FOUND;
    }
    store_meta m;
    if (st == STORE_OK) {
        st = pg_row_meta(r, 0, &m);
    }
    if (st == STORE_OK && blob != NULL) {
        size_t n = (size_t)PQgetlength(r, 0, 4);
        void *copy = malloc(n > 0 ? n : 1);
        if (copy == NULL) {
            st = STORE_NOMEM;
        } else {
            memcpy(copy, PQgetvalue(r, 0, 4), n);
            *blob = copy;
            *len = n;
        }
    }
    if (st == STORE_OK && meta != NULL) {
        *meta = m;
    }
    PQclear(r);
    return st;
}

/* A walk's state: what to call, and whether it asked to stop. */
typedef struct pg_walk {
    int with_blobs;
    store_each_fn fn;
    void *ctx;
    int *fn_result;
    int stopped;
} pg_walk;

/* Reads the walk's rows until the last result; st says how it ended. */
static store_status pg_walk_rows(store_pg *p, PGconn *c, pg_walk *w) {
    store_status st = STORE_OK;
    int64_t deadline = pg_mono_ms() + p->base.opt.op_timeout_ms;
    for (;;) {
        while (PQisBusy(c)) {
            if (pg_wait(c, POLLIN, deadline) != 1 || !PQconsumeInput(c)) {
                return STORE_UNAVAILABLE;
            }
        }
        PGresult *r = PQgetResult(c);
        if (r == NULL) {
            return st;
        }
        ExecStatusType t = PQresultStatus(r);
        if (t == PGRES_SINGLE_TUPLE && st == STORE_OK && !w->stopped) {
            deadline = pg_mono_ms() + p->base.opt.op_timeout_ms; /* per row, not per walk */
            store_meta m;
            st = pg_row_meta(r, 0, &m);
            int rv = st != STORE_OK ? 0
                     : w->with_blobs
                         ? w->fn(w->ctx, &m, PQgetvalue(r, 0, 4), (size_t)PQgetlength(r, 0, 4))
                         : w->fn(w->ctx, &m, NULL, 0);
            if (rv != 0) {
                w->stopped = 1;
                if (w->fn_result != NULL) {
                    *w->fn_result = rv;
                }
            }
        } else if (t != PGRES_SINGLE_TUPLE && t != PGRES_TUPLES_OK && st == STORE_OK) {
            int drop = 0;
            st = pg_error_status(c, r, &drop);
            if (drop) {
                PQclear(r);
                return STORE_UNAVAILABLE;
            }
        }
        PQclear(r);
    }
}

/*
 * One SELECT in single-row mode, so a walk over many 8 MiB blobs holds one
 * row at a time. Every row's wait is bounded by op_timeout_ms. After fn
 * stops the walk (or a row is refused), the remaining rows are read and
 * dropped: the connection must be idle again.
 */
static store_status pg_each(store *base, store_kind kind, int with_blobs, store_each_fn fn,
                            void *ctx, int *fn_result) {
    store_pg *p = PG(base);
    const char *vals[1] = {store_kind_table(kind)};
    pg_walk w = {with_blobs, fn, ctx, fn_result, 0};
    pthread_mutex_lock(&p->lock);
    PGconn *c = p->conn;
    if (c == NULL) {
        pthread_mutex_unlock(&p->lock);
        return STORE_UNAVAILABLE;
    }
    /* The session's statement_timeout bounds a whole statement, and a walk
       lasts as long as fn takes (start-up rebuilds every mesh inside it):
       lift it for this one statement. */
    PGresult *tx = NULL;
    store_status st =
        store_pg_exec(p, c, "BEGIN; SET LOCAL statement_timeout = 0", 0, NULL, NULL, NULL, 0, &tx);
    PQclear(tx);
    if (st == STORE_OK) {
        int64_t deadline = pg_mono_ms() + p->base.opt.op_timeout_ms;
        st = PQsendQueryParams(c, with_blobs ? PG_SQL_EACH : PG_SQL_EACH_META, 1, NULL, vals, NULL,
                               NULL, 1) &&
                     PQsetSingleRowMode(c) && pg_flush(c, deadline) == 0
                 ? pg_walk_rows(p, c, &w)
                 : STORE_UNAVAILABLE;
        if (st != STORE_UNAVAILABLE) {
            /* read-only: COMMIT ends it (and just closes a failed one) */
            if (store_pg_exec(p, c, "COMMIT", 0, NULL, NULL, NULL, 0, &tx) != STORE_OK)
                st = STORE_UNAVAILABLE;
            PQclear(tx);
        }
    }
    if (st == STORE_UNAVAILABLE) {
        store_pg_drop_main(p);
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* The schema is the one we migrated to, and a round trip works. */
static store_status pg_check(store *base) {
    store_pg *p = PG(base);
    pthread_mutex_lock(&p->lock);
    int v = -1;
    store_status st = p->conn == NULL ? STORE_UNAVAILABLE : pg_schema_read(p, p->conn, &v);
    if (st == STORE_UNAVAILABLE) {
        store_pg_drop_main(p);
    }
    pthread_mutex_unlock(&p->lock);
    if (st == STORE_OK && v != PG_SCHEMA_LATEST) {
        st = STORE_IO;
    }
    return st;
}

/* ---- state ----------------------------------------------------------------------------------- */

/* Lock-free: /health must answer while a write waits on a stalled server. */
static int pg_connected(store *base) {
    store_pg *p = PG(base);
    return atomic_load(&p->main_up) && atomic_load(&p->listen_up);
}

static void pg_stats(store *base, store_stats *out) {
    store_pg *p = PG(base);
    out->connected = pg_connected(base);
    out->reconnects = atomic_load(&p->reconnects);
    out->disconnects = atomic_load(&p->disconnects);
    out->notifications = atomic_load(&p->notifications);
}

static void pg_describe(store *base, char *buf, size_t size) {
    snprintf(buf, size, "%s", PG(base)->describe);
}

static const store_methods store_pg_methods = {
    .name = "postgres",
    .close = pg_close,
    .put = pg_put,
    .del = pg_del,
    .get = pg_get,
    .each = pg_each,
    .check = pg_check,
    .connected = pg_connected,
    .watch = store_pg_watch,
    .unwatch = store_pg_unwatch,
    .stats = pg_stats,
    .describe = pg_describe,
};
