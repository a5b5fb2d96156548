/*
 * store.c: the store's front door. Chooses the backend once, at open, from
 * the target's form (a file path: SQLite; a libpq connection string:
 * PostgreSQL), checks every argument and zeroes every output before a
 * backend method runs, and owns what both backends share: status texts,
 * kind tables, the name rule.
 *
 * The caller never learns which backend it has beyond store_backend(): the
 * same tests (tests/check_store.c) run against both.
 */
#include "storage/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "storage/store_internal.h"

static const char *const store_status_texts[STORE_STATUS_COUNT] = {
#define STORE_STATUS_TEXT(name, text) [name] = text,
    STORE_STATUS_LIST(STORE_STATUS_TEXT)
#undef STORE_STATUS_TEXT
};

static const char *const store_kind_tables[STORE_KIND_COUNT] = {
#define STORE_KIND_TABLE(id, table) [id] = table,
    STORE_KIND_LIST(STORE_KIND_TABLE)
#undef STORE_KIND_TABLE
};

const char *store_kind_table(store_kind k) {
    return (unsigned)k < STORE_KIND_COUNT ? store_kind_tables[k] : "unknown";
}

const char *store_status_text(store_status s) {
    if ((unsigned)s >= STORE_STATUS_COUNT) {
        return "unknown store status";
    }
    return store_status_texts[s];
}

/* The contract's name rule ^[A-Za-z0-9_.-]{1,64}$, checked byte by byte so
   the locale can never widen it. */
int store_name_valid(const char *name) {
    if (name == NULL) {
        return 0;
    }
    size_t n = 0;
    for (const char *p = name; *p != '\0'; p++, n++) {
        unsigned char c = (unsigned char)*p;
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '-';
        if (!ok || n >= STORE_NAME_MAX) {
            return 0;
        }
    }
    return n >= 1;
}

void store_say(char *why, size_t why_size, const char *fmt, ...) {
    if (why == NULL || why_size == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

/* A URI with libpq's schemes, or a "keyword=value" string: a lower-case
   keyword, optional blanks, then '='. A SQLite file whose name looks like
   that can still be opened as "./host=x". */
int store_target_is_postgres(const char *t) {
    if (t == NULL) {
        return 0;
    }
    if (strncmp(t, "postgres://", 11) == 0 || strncmp(t, "postgresql://", 13) == 0) {
        return 1;
    }
    const char *p = t;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    const char *k = p;
    while ((*p >= 'a' && *p <= 'z') || *p == '_') {
        p++;
    }
    if (p == k) {
        return 0;
    }
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return *p == '=';
}

/* ---- open / close ---------------------------------------------------------------------------- */

store_status store_open_with(const char *target, const store_options *opt, store **out, char *why,
                             size_t why_size) {
    store_say(why, why_size, "ok");
    if (out != NULL) {
        *out = NULL;
    }
    if (target == NULL || target[0] == '\0' || out == NULL) {
        store_say(why, why_size, "no database path given");
        return STORE_INVALID_ARG;
    }
    store_options o = {0};
    if (opt != NULL) {
        o = *opt;
    }
    int pg = store_target_is_postgres(target);
    if (o.connect_timeout_s == 0) {
        o.connect_timeout_s = 2;
    }
    if (o.op_timeout_ms == 0) {
        o.op_timeout_ms = 5000;
    }
    if (o.backoff_max_ms == 0) {
        o.backoff_max_ms = 2000;
    }
    if (o.idempotent == 0) {
        o.idempotent = pg ? 1 : -1;
    }
    /* each backend copies o into its handle before it starts any thread */
    return pg ? store_pg_open(target, &o, out, why, why_size)
              : store_sqlite_open(target, &o, out, why, why_size);
}

store_status store_open_detail(const char *path, store **out, char *why, size_t why_size) {
    return store_open_with(path, NULL, out, why, why_size);
}

store_status store_open(const char *path, store **out) {
    return store_open_with(path, NULL, out, NULL, 0);
}

/* The caller guarantees no other thread is inside a store_ call on s. */
void store_close(store *s) {
    if (s != NULL) {
        store_unwatch(s);
        s->m->close(s);
    }
}

/* ---- writes ---------------------------------------------------------------------------------- */

/*
 * Creates or replaces `name` in one transaction. meta and created may be
 * NULL; blob may be NULL only when len is 0. now_ms must be >= 0. On failure
 * both outputs stay zeroed.
 */
store_status store_put(store *s, store_kind kind, const char *name, const void *blob, size_t len,
                       int64_t now_ms, store_meta *meta, int *created) {
    if (meta != NULL) {
        memset(meta, 0, sizeof *meta);
    }
    if (created != NULL) {
        *created = 0;
    }
    if (s == NULL || (unsigned)kind >= STORE_KIND_COUNT || !store_name_valid(name) ||
        (blob == NULL && len != 0) || now_ms < 0) {
        return STORE_INVALID_ARG;
    }
    store_meta m;
    int c = 0;
    store_status st = s->m->put(s, kind, name, blob, len, now_ms, &m, &c);
    if (st == STORE_OK) {
        if (meta != NULL) {
            *meta = m;
        }
        if (created != NULL) {
            *created = c;
        }
    }
    return st;
}

/* Deletes `name`; STORE_NOT_FOUND when absent. */
store_status store_delete(store *s, store_kind kind, const char *name) {
    if (s == NULL || (unsigned)kind >= STORE_KIND_COUNT || !store_name_valid(name)) {
        return STORE_INVALID_ARG;
    }
    return s->m->del(s, kind, name);
}

/* ---- reads ----------------------------------------------------------------------------------- */

/*
 * Reads one entry. meta may be NULL; blob and len are both NULL (metadata
 * only) or both given, and then *blob is malloc'd (never NULL on success,
 * even for an empty blob) and must be freed by the caller. Outputs are
 * zeroed on failure.
 */
store_status store_get(store *s, store_kind kind, const char *name, store_meta *meta, void **blob,
                       size_t *len) {
    if (meta != NULL) {
        memset(meta, 0, sizeof *meta);
    }
    if (blob != NULL) {
        *blob = NULL;
    }
    if (len != NULL) {
        *len = 0;
    }
    if (s == NULL || (unsigned)kind >= STORE_KIND_COUNT || !store_name_valid(name) ||
        (blob == NULL) != (len == NULL)) {
        return STORE_INVALID_ARG;
    }
    store_status st = s->m->get(s, kind, name, meta, blob, len);
    if (st != STORE_OK && meta != NULL) {
        memset(meta, 0, sizeof *meta);
    }
    return st;
}

/*
 * Calls fn per entry in name order (byte order of the names), over one
 * consistent snapshot. The handle's mutex is held throughout: fn must not
 * call back into the same store handle.
 */
store_status store_each(store *s, store_kind kind, store_each_fn fn, void *ctx, int *fn_result) {
    if (fn_result != NULL) {
        *fn_result = 0;
    }
    if (s == NULL || (unsigned)kind >= STORE_KIND_COUNT || fn == NULL) {
        return STORE_INVALID_ARG;
    }
    return s->m->each(s, kind, 1, fn, ctx, fn_result);
}

store_status store_each_meta(store *s, store_kind kind, store_each_fn fn, void *ctx,
                             int *fn_result) {
    if (fn_result != NULL) {
        *fn_result = 0;
    }
    if (s == NULL || (unsigned)kind >= STORE_KIND_COUNT || fn == NULL) {
        return STORE_INVALID_ARG;
    }
    return s->m->each(s, kind, 0, fn, ctx, fn_result);
}

/* SQLite: PRAGMA integrity_check says "ok". PostgreSQL: the schema is the
   one this navd knows and a query round trip works. */
store_status store_check(store *s) {
    if (s == NULL) {
        return STORE_INVALID_ARG;
    }
    return s->m->check(s);
}

/* The version reached by store_open's migrations; -1 for NULL. */
int store_schema_version(store *s) {
    if (s == NULL) {
        return -1;
    }
    return s->schema_version;
}

/* ---- state ----------------------------------------------------------------------------------- */

const char *store_backend(store *s) {
    return s != NULL ? s->m->name : "none";
}

int store_connected(store *s) {
    return s != NULL && s->m->connected(s);
}

void store_describe(store *s, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    buf[0] = '\0';
    if (s != NULL) {
        s->m->describe(s, buf, size);
    }
}

store_status store_watch(store *s, store_watch_fn fn, void *ctx) {
    if (s == NULL || fn == NULL) {
        return STORE_INVALID_ARG;
    }
    return s->m->watch(s, fn, ctx);
}

void store_unwatch(store *s) {
    if (s != NULL) {
        s->m->unwatch(s);
    }
}

void store_get_stats(store *s, store_stats *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (s != NULL) {
        s->m->stats(s, out);
    }
}
