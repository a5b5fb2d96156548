/*
 * api_registry: name -> current api_entry, a sorted array of entry pointers
 * behind a pthread rwlock (see api_registry.h for the rules).
 *
 * The array holds one reference per entry; api_registry_get adds one for
 * the caller. Writers serialize on write_lock for the whole store-then-swap
 * sequence and hold the rwlock for writing only to move pointers.
 */
/* pthread_rwlockattr_setkind_np (glibc), for a lock that prefers writers. */
#define _GNU_SOURCE
#include "api/api_registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_log.h"

struct api_registry {
    store *st;
    pthread_rwlock_t lock;      /* guards items / n / cap */
    pthread_mutex_t write_lock; /* one writer at a time, store and memory together */
    api_entry **items;          /* sorted by meta.name */
    size_t n, cap;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static api_entry *entry_new(nav_mesh *mesh, const store_meta *meta, unsigned refs) {
    api_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->mesh = mesh;
    e->meta = *meta;
    atomic_init(&e->refs, refs);
    return e;
}

void api_entry_release(api_entry *e) {
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        nav_mesh_free(e->mesh);
        free(e);
    }
}

api_registry *api_registry_new(store *st) {
    api_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->st = st;
    /* glibc's default rwlock prefers readers: with every worker looking up
       meshes, read sections overlap without a gap and a replace can wait
       for seconds (a PUT once got no answer in 10 s under load). Preferring
       writers, a waiting replace blocks new lookups for the few microseconds
       it needs to move a pointer. */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&r->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&r->write_lock, NULL);
    return r;
}

void api_registry_free(api_registry *r) {
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        api_entry_release(r->items[i]);
    free(r->items);
    pthread_rwlock_destroy(&r->lock);
    pthread_mutex_destroy(&r->write_lock);
    free(r);
}

/* Index of name, or -(insertion point) - 1. Caller holds the lock. */
static long find(const api_registry *r, const char *name) {
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->items[mid]->meta.name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

/* Makes e current for its name (the array takes e's reference); returns the
   replaced entry (its array reference now the caller's) or NULL. */
static api_entry *publish(api_registry *r, api_entry *e, int *ok) {
    api_entry *old = NULL;
    *ok = 1;
    pthread_rwlock_wrlock(&r->lock);
    long at = find(r, e->meta.name);
    if (at >= 0) {
        old = r->items[at];
        r->items[at] = e;
    } else {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 16;
            api_entry **items = realloc(r->items, cap * sizeof *items);
            if (!items) {
                *ok = 0; /* a put is already stored: it loads at the next start */
                pthread_rwlock_unlock(&r->lock);
                return NULL;
            }
            r->items = items;
            r->cap = cap;
        }
        size_t pos = (size_t)(-at - 1);
        memmove(&r->items[pos + 1], &r->items[pos], (r->n - pos) * sizeof *r->items);
        r->items[pos] = e;
        r->n++;
    }
    pthread_rwlock_unlock(&r->lock);
    return old;
}

typedef struct load_ctx {
    api_registry *r;
    long loaded;
} load_ctx;

static int load_one(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    load_ctx *lc = ctx;
    nav_mesh *m = NULL;
    nav_error ne = {0};
    if (nav_mesh_deserialize(blob, len, &m, &ne) != NAV_OK) {
        /* Only the name: a damaged blob must not stop the service nor leak its bytes. */
        api_log(API_LOG_ERROR, "skipping stored navmesh '%s': it could not be loaded", meta->name);
        return 0;
    }
    api_entry *e = entry_new(m, meta, 1);
    int ok = 0;
    if (e)
        api_entry_release(publish(lc->r, e, &ok));
    if (!ok) {
        api_entry_release(e);
        if (!e)
            nav_mesh_free(m);
        api_log(API_LOG_ERROR, "skipping stored navmesh '%s': out of memory", meta->name);
        return 0;
    }
    lc->loaded++;
    return 0;
}

long api_registry_load(api_registry *r) {
    load_ctx lc = {r, 0};
    int fn_result = 0;
    if (store_each(r->st, STORE_NAVMESH, load_one, &lc, &fn_result) != STORE_OK)
        return -1;
    return lc.loaded;
}

api_entry *api_registry_get(api_registry *r, const char *name) {
    api_entry *e = NULL;
    pthread_rwlock_rdlock(&r->lock);
    long at = find(r, name);
    if (at >= 0) {
        e = r->items[at];
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    }
    pthread_rwlock_unlock(&r->lock);
    return e;
}

api_code api_registry_put(api_registry *r, const char *name, nav_mesh *mesh, api_entry **out,
                          int *created, api_err *e) {
    *out = NULL;
    *created = 0;
    uint8_t *blob = NULL;
    size_t len = 0;
    nav_status ns = nav_mesh_serialize(mesh, &blob, &len);
    if (ns != NAV_OK) {
        nav_mesh_free(mesh);
        return api_fail(e, api_code_from_nav(ns), "the navmesh could not be serialized");
    }
    pthread_mutex_lock(&r->write_lock);
    store_meta meta;
    store_status ss = store_put(r->st, STORE_NAVMESH, name, blob, len, now_ms(), &meta, created);
    free(blob);
    if (ss != STORE_OK) {
        pthread_mutex_unlock(&r->write_lock);
        nav_mesh_free(mesh);
        api_log(API_LOG_ERROR, "storing navmesh '%s' failed: %s", name, store_status_text(ss));
        return api_fail(e, api_code_from_store(ss), "the navmesh could not be stored");
    }
    api_entry *ent = entry_new(mesh, &meta, 2); /* the registry's and the caller's */
    int ok = 0;
    if (ent)
        api_entry_release(publish(r, ent, &ok));
    pthread_mutex_unlock(&r->write_lock);
    if (!ok) {
        if (ent) {
            api_entry_release(ent);
            api_entry_release(ent);
        } else {
            nav_mesh_free(mesh);
        }
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while publishing the navmesh");
    }
    *out = ent;
    return API_OK;
}

api_code api_registry_delete(api_registry *r, const char *name, api_err *e) {
    pthread_mutex_lock(&r->write_lock);
    store_status ss = store_delete(r->st, STORE_NAVMESH, name);
    api_entry *old = NULL;
    if (ss == STORE_OK || ss == STORE_NOT_FOUND) {
        pthread_rwlock_wrlock(&r->lock);
        long at = find(r, name);
        if (at >= 0) {
            old = r->items[at];
            memmove(&r->items[at], &r->items[at + 1], (r->n - (size_t)at - 1) * sizeof *r->items);
            r->n--;
        }
        pthread_rwlock_unlock(&r->lock);
    }
    pthread_mutex_unlock(&r->write_lock);
    api_entry_release(old);
    if (ss == STORE_NOT_FOUND)
        return api_fail(e, API_E_NOT_FOUND, "navmesh '%s' does not exist", name);
    if (ss != STORE_OK) {
        api_log(API_LOG_ERROR, "deleting navmesh '%s' failed: %s", name, store_status_text(ss));
        return api_fail(e, api_code_from_store(ss), "the navmesh could not be deleted");
    }
    return API_OK;
}

store *api_registry_store(api_registry *r) {
    return r->st;
}

size_t api_registry_count(api_registry *r) {
    pthread_rwlock_rdlock(&r->lock);
    size_t n = r->n;
    pthread_rwlock_unlock(&r->lock);
    return n;
}

size_t api_registry_snapshot(api_registry *r, api_entry ***out) {
    pthread_rwlock_rdlock(&r->lock);
    size_t n = r->n;
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        (*out)[i] = r->items[i];
        atomic_fetch_add_explicit(&r->items[i]->refs, 1, memory_order_relaxed);
    }
    pthread_rwlock_unlock(&r->lock);
    return n;
}

void api_registry_snapshot_free(api_entry **list, size_t n) {
    for (size_t i = 0; i < n; i++)
        api_entry_release(list[i]);
    free(list);
}
