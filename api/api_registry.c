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
#include "api/api_volume.h"

struct api_registry {
    store *st;
    /* the flight volumes, kept beside the navmeshes (api_volume.h) */
    struct api_volumes *volumes;
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

/* Takes p (n profiles) and source (malloc'd or NULL); on failure the caller still owns them. */
static api_entry *entry_new(api_profile *p, uint32_t n, char *source, const store_meta *meta,
                            unsigned refs) {
    api_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->profiles = p;
    e->nprofiles = n;
    e->mesh = p[0].mesh;
    e->source = source;
    e->meta = *meta;
    atomic_init(&e->refs, refs);
    return e;
}

void api_entry_release(api_entry *e) {
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        api_profiles_free(e->profiles, e->nprofiles);
        free(e->source);
        free(e);
    }
}

const nav_mesh *api_entry_profile(const api_entry *e, const char *profile) {
    if (!profile || !profile[0])
        return e->mesh;
    for (uint32_t i = 0; i < e->nprofiles; i++)
        if (strcmp(e->profiles[i].name, profile) == 0)
            return e->profiles[i].mesh;
    return NULL;
}

api_registry *api_registry_new(store *st) {
    api_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->st = st;
    if (!(r->volumes = api_volumes_new(st))) {
        free(r);
        return NULL;
    }
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
    api_volumes_free(r->volumes);
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
    api_profile *p = NULL;
    uint32_t n = 0;
    char *source = NULL;
    if (api_profiles_deserialize(blob, len, &p, &n, &source) != NAV_OK) {
        /* Only the name: a damaged blob must not stop the service nor leak its bytes. */
        api_log(API_LOG_ERROR, "skipping stored navmesh '%s': it could not be loaded", meta->name);
        return 0;
    }
    /* a mesh that is intact but whose stored search graph was not: rebuilt,
       and stored again with the next write of this name */
    for (uint32_t i = 0; i < n; i++)
        if (nav_mesh_graph_origin(p[i].mesh) == NAV_GRAPH_REBUILT)
            api_log(API_LOG_WARN,
                    "stored navmesh '%s': its search graph was missing or damaged and was rebuilt",
                    meta->name);
    api_entry *e = entry_new(p, n, source, meta, 1);
    int ok = 0;
    if (e)
        api_entry_release(publish(lc->r, e, &ok));
    if (!ok) {
        if (e) {
            api_entry_release(e);
        } else {
            api_profiles_free(p, n);
            free(source);
        }
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
    api_profile one = {.name = "default", .mesh = mesh};
    return api_registry_put_profiles(r, name, &one, 1, NULL, out, created, e);
}

api_code api_registry_put_profiles(api_registry *r, const char *name, api_profile *profiles,
                                   uint32_t n, const char *source, api_entry **out, int *created,
                                   api_err *e) {
    *out = NULL;
    *created = 0;
    uint8_t *blob = NULL;
    size_t len = 0;
    /* The entry owns its own copies: the caller's array is not kept. */
    api_profile *p = n ? calloc(n, sizeof *p) : NULL;
    char *src = source ? strdup(source) : NULL;
    nav_status ns = !p || (source && !src) ? NAV_E_NOMEM : NAV_OK;
    if (ns == NAV_OK) {
        memcpy(p, profiles, n * sizeof *p);
        ns = api_profiles_serialize(p, n, src, &blob, &len);
    }
    if (ns != NAV_OK) {
        if (p)
            api_profiles_free(p, n);
        else
            for (uint32_t i = 0; i < n; i++)
                nav_mesh_free(profiles[i].mesh);
        free(src);
        return api_fail(e, api_code_from_nav(ns), "the navmesh could not be serialized");
    }
    pthread_mutex_lock(&r->write_lock);
    store_meta meta;
    store_status ss = store_put(r->st, STORE_NAVMESH, name, blob, len, now_ms(), &meta, created);
    free(blob);
    if (ss != STORE_OK) {
        pthread_mutex_unlock(&r->write_lock);
        api_profiles_free(p, n);
        free(src);
        api_log(API_LOG_ERROR, "storing navmesh '%s' failed: %s", name, store_status_text(ss));
        return api_fail(e, api_code_from_store(ss), "the navmesh could not be stored: %s",
                        store_status_text(ss));
    }
    api_entry *ent = entry_new(p, n, src, &meta, 2); /* the registry's and the caller's */
    int ok = 0;
    if (ent)
        api_entry_release(publish(r, ent, &ok));
    pthread_mutex_unlock(&r->write_lock);
    if (!ok) {
        if (ent) {
            api_entry_release(ent);
            api_entry_release(ent);
        } else {
            api_profiles_free(p, n);
            free(src);
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
        return api_fail(e, api_code_from_store(ss), "the navmesh could not be deleted: %s",
                        store_status_text(ss));
    }
    return API_OK;
}

/* ---- replicas ---- */

static int same_version(const store_meta *a, const store_meta *b) {
    return a->version == b->version && a->created_ms == b->created_ms &&
           a->updated_ms == b->updated_ms;
}

/* Removes name from memory (write_lock held); 1 when it was there. */
static int unpublish(api_registry *r, const char *name) {
    api_entry *old = NULL;
    pthread_rwlock_wrlock(&r->lock);
    long at = find(r, name);
    if (at >= 0) {
        old = r->items[at];
        memmove(&r->items[at], &r->items[at + 1], (r->n - (size_t)at - 1) * sizeof *r->items);
        r->n--;
    }
    pthread_rwlock_unlock(&r->lock);
    api_entry_release(old);
    return old != NULL;
}

/* 1 when memory holds exactly the version described by sm. */
static int holds(api_registry *r, const store_meta *sm) {
    api_entry *cur = api_registry_get(r, sm->name);
    int same = cur && same_version(&cur->meta, sm);
    api_entry_release(cur);
    return same;
}

/* Loads the stored blob of name and publishes it (write_lock held). */
static api_sync_result load_stored(api_registry *r, const char *name, store_meta *meta) {
    store_meta sm;
    void *blob = NULL;
    size_t len = 0;
    store_status ss = store_get(r->st, STORE_NAVMESH, name, &sm, &blob, &len);
    if (ss == STORE_NOT_FOUND)
        return unpublish(r, name) ? API_SYNC_REMOVED : API_SYNC_SAME;
    if (ss != STORE_OK)
        return API_SYNC_FAILED;
    if (holds(r, &sm)) {
        free(blob);
        return API_SYNC_SAME;
    }
    api_profile *p = NULL;
    uint32_t n = 0;
    char *source = NULL;
    nav_status ns = api_profiles_deserialize(blob, len, &p, &n, &source);
    free(blob);
    if (ns != NAV_OK) {
        api_log(API_LOG_ERROR,
                "stored navmesh '%s' version %lld could not be loaded; keeping "
                "what memory had",
                name, (long long)sm.version);
        return API_SYNC_SAME;
    }
    api_entry *e = entry_new(p, n, source, &sm, 1);
    int ok = 0;
    if (e)
        api_entry_release(publish(r, e, &ok));
    if (!ok) {
        if (e) {
            api_entry_release(e);
        } else {
            api_profiles_free(p, n);
            free(source);
        }
        return API_SYNC_FAILED;
    }
    if (meta)
        *meta = sm;
    return API_SYNC_LOADED;
}

api_sync_result api_registry_sync(api_registry *r, const char *name, store_meta *meta) {
    pthread_mutex_lock(&r->write_lock);
    /* The metadata first: a replica's own write (notified like any other)
       then costs one small read instead of the blob. */
    store_meta sm;
    store_status ss = store_get(r->st, STORE_NAVMESH, name, &sm, NULL, NULL);
    api_sync_result res;
    if (ss == STORE_NOT_FOUND)
        res = unpublish(r, name) ? API_SYNC_REMOVED : API_SYNC_SAME;
    else if (ss != STORE_OK)
        res = API_SYNC_FAILED;
    else if (holds(r, &sm))
        res = API_SYNC_SAME;
    else
        res = load_stored(r, name, meta);
    pthread_mutex_unlock(&r->write_lock);
    return res;
}

typedef struct meta_list {
    store_meta *items;
    size_t n, cap;
} meta_list;

static int collect_meta(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    (void)blob, (void)len;
    meta_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        store_meta *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return 1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = *meta;
    return 0;
}

static int meta_cmp(const void *a, const void *b) {
    return strcmp(((const store_meta *)a)->name, ((const store_meta *)b)->name);
}

long api_registry_resync(api_registry *r) {
    meta_list l = {0};
    int stopped = 0;
    if (store_each_meta(r->st, STORE_NAVMESH, collect_meta, &l, &stopped) != STORE_OK || stopped) {
        free(l.items);
        return -1;
    }
    if (l.n > 1)
        qsort(l.items, l.n, sizeof *l.items, meta_cmp); /* already in order; bsearch relies on it */
    long changed = 0;
    int failed = 0;
    /* Stored names that memory lacks or holds at another version. Anything
       that changes after this list was read is announced by a notification
       (the watcher LISTENs before it resyncs). */
    for (size_t i = 0; i < l.n; i++) {
        if (holds(r, &l.items[i]))
            continue;
        api_sync_result res = api_registry_sync(r, l.items[i].name, NULL);
        failed |= res == API_SYNC_FAILED;
        changed += res == API_SYNC_LOADED || res == API_SYNC_REMOVED;
    }
    /* Names in memory the list lacks: each is checked against the store
       again before it goes, since a local put may have made it since. */
    api_entry **mem;
    size_t n = api_registry_snapshot(r, &mem);
    for (size_t i = 0; i < n; i++) {
        if (l.n > 0 && bsearch(&mem[i]->meta, l.items, l.n, sizeof *l.items, meta_cmp))
            continue;
        api_sync_result res = api_registry_sync(r, mem[i]->meta.name, NULL);
        failed |= res == API_SYNC_FAILED;
        changed += res == API_SYNC_LOADED || res == API_SYNC_REMOVED;
    }
    api_registry_snapshot_free(mem, n);
    free(l.items);
    return failed ? -1 : changed;
}

store *api_registry_store(api_registry *r) {
    return r->st;
}

struct api_volumes *api_registry_volumes(api_registry *r) {
    return r->volumes;
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
