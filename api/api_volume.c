/*
 * api_volume: the flight-volume table (api_volume.h) and the endpoints that
 * read and change it: GET /v1/volumes, GET/DELETE /v1/volumes/{name} and
 * POST /v1/volumes/{name}/bake (a job of kind "volume", see api_jobs.h).
 *
 * A bake is checked before it is queued: bad fields are 400 naming them,
 * an unknown level 404, and a grid over --max-volume-voxels 422
 * invalid_level (nothing is queued, nothing changes). The job voxelizes the
 * level as it was when the request arrived, reports its stages and
 * progress, stops when cancelled, and publishes the volume (store, then
 * memory) only through api_job_commit, so a cancelled bake changes nothing.
 */
#include "api/api_volume.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_codec.h"
#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_log.h"
#include "api/api_profiles.h"
#include "nav/nav_level.h"

#define VOL_MAGIC "AVOL"

struct api_volumes {
    store *st;
    pthread_rwlock_t lock;      /* guards items / n / cap */
    pthread_mutex_t write_lock; /* one writer at a time, store and memory together */
    api_vol_entry **items;      /* sorted by name */
    size_t n, cap;
};

static int64_t vol_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

api_volumes *api_volumes_new(store *st) {
    api_volumes *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->st = st;
    pthread_rwlock_init(&v->lock, NULL);
    pthread_mutex_init(&v->write_lock, NULL);
    return v;
}

static void entry_free(api_vol_entry *e) {
    nav_vol_free(e->vol);
    free(e->source);
    free(e);
}

void api_vol_entry_release(api_vol_entry *e) {
    if (e && atomic_fetch_sub(&e->refs, 1) == 1)
        entry_free(e);
}

void api_volumes_free(api_volumes *v) {
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        api_vol_entry_release(v->items[i]);
    free(v->items);
    pthread_rwlock_destroy(&v->lock);
    pthread_mutex_destroy(&v->write_lock);
    free(v);
}

/* Index of name, or where it would go (*found 0). Caller holds the lock. */
static size_t find_slot(const api_volumes *v, const char *name, int *found) {
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v->items[mid]->meta.name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

/* Puts e (its reference moves to the table) in place of name's entry; 0 or -1 (no memory). */
static int publish(api_volumes *v, api_vol_entry *e) {
    pthread_rwlock_wrlock(&v->lock);
    int found;
    size_t i = find_slot(v, e->meta.name, &found);
    api_vol_entry *old = NULL;
    if (found) {
        old = v->items[i];
        v->items[i] = e;
    } else {
        if (v->n == v->cap) {
            size_t cap = v->cap ? v->cap * 2 : 8;
            api_vol_entry **it = realloc(v->items, cap * sizeof *it);
            if (!it) {
                pthread_rwlock_unlock(&v->lock);
                return -1;
            }
            v->items = it;
            v->cap = cap;
        }
        memmove(v->items + i + 1, v->items + i, (v->n - i) * sizeof *v->items);
        v->items[i] = e;
        v->n++;
    }
    pthread_rwlock_unlock(&v->lock);
    api_vol_entry_release(old);
    return 0;
}

/* Splits a stored blob into source text (malloc'd, may be NULL) and the volume. */
static nav_status decode_blob(const uint8_t *b, size_t len, nav_vol **vol, char **source,
                              nav_error *ne) {
    *vol = NULL;
    *source = NULL;
    uint32_t sl;
    if (len < 8 || memcmp(b, VOL_MAGIC, 4) != 0)
        return NAV_E_CORRUPT;
    memcpy(&sl, b + 4, 4);
    if (sl > len - 8)
        return NAV_E_CORRUPT;
    nav_status st = nav_vol_deserialize(b + 8 + sl, len - 8 - sl, vol, ne);
    if (st != NAV_OK)
        return st;
    if (sl) {
        *source = malloc(sl + 1);
        if (!*source) {
            nav_vol_free(*vol);
            *vol = NULL;
            return NAV_E_NOMEM;
        }
        memcpy(*source, b + 8, sl);
        (*source)[sl] = 0;
    }
    return NAV_OK;
}

static int load_one(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    api_volumes *v = ctx;
    api_vol_entry *e = calloc(1, sizeof *e);
    nav_error ne = {0};
    if (!e || decode_blob(blob, len, &e->vol, &e->source, &ne) != NAV_OK) {
        api_log(API_LOG_ERROR, "skipping stored flight volume '%s': it could not be loaded (%s)",
                meta->name, ne.message);
        free(e);
        return 0;
    }
    e->meta = *meta;
    atomic_init(&e->refs, 1);
    if (publish(v, e) != 0)
        entry_free(e);
    return 0;
}

long api_volumes_load(api_volumes *v) {
    if (store_each(v->st, STORE_VOLUME, load_one, v, NULL) != STORE_OK)
        return -1;
    return (long)v->n;
}

/* Removes name from memory; 1 when it was there. */
static int unpublish(api_volumes *v, const char *name) {
    pthread_rwlock_wrlock(&v->lock);
    int found;
    size_t i = find_slot(v, name, &found);
    api_vol_entry *old = NULL;
    if (found) {
        old = v->items[i];
        memmove(v->items + i, v->items + i + 1, (v->n - i - 1) * sizeof *v->items);
        v->n--;
    }
    pthread_rwlock_unlock(&v->lock);
    api_vol_entry_release(old);
    return old != NULL;
}

/* 1 when memory holds exactly the version sm describes (a delete and re-create can reuse
   a version number: the times tell them apart). */
static int holds(api_volumes *v, const store_meta *sm) {
    api_vol_entry *e = api_volumes_get(v, sm->name);
    int same = e && e->meta.version == sm->version && e->meta.created_ms == sm->created_ms &&
               e->meta.updated_ms == sm->updated_ms;
    api_vol_entry_release(e);
    return same;
}

api_sync_result api_volumes_sync(api_volumes *v, const char *name) {
    pthread_mutex_lock(&v->write_lock);
    store_meta sm;
    void *blob = NULL;
    size_t len = 0;
    api_sync_result res = API_SYNC_SAME;
    store_status ss = store_get(v->st, STORE_VOLUME, name, &sm, NULL, NULL);
    if (ss == STORE_NOT_FOUND) {
        res = unpublish(v, name) ? API_SYNC_REMOVED : API_SYNC_SAME;
    } else if (ss != STORE_OK) {
        res = API_SYNC_FAILED;
    } else if (!holds(v, &sm)) {
        ss = store_get(v->st, STORE_VOLUME, name, &sm, &blob, &len);
        if (ss == STORE_NOT_FOUND)
            res = unpublish(v, name) ? API_SYNC_REMOVED : API_SYNC_SAME;
        else if (ss != STORE_OK)
            res = API_SYNC_FAILED;
        else {
            load_one(v, &sm, blob, len); /* logs and keeps memory's when damaged */
            res = holds(v, &sm) ? API_SYNC_LOADED : API_SYNC_SAME;
        }
        free(blob);
    }
    pthread_mutex_unlock(&v->write_lock);
    return res;
}

typedef struct vmeta_list {
    store_meta *items;
    size_t n, cap;
} vmeta_list;

static int collect_meta(void *ctx, const store_meta *meta, const void *blob, size_t len) {
    (void)blob, (void)len;
    vmeta_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        store_meta *it = realloc(l->items, cap * sizeof *it);
        if (!it)
            return 1;
        l->items = it;
        l->cap = cap;
    }
    l->items[l->n++] = *meta;
    return 0;
}

long api_volumes_resync(api_volumes *v) {
    vmeta_list l = {0};
    int stopped = 0;
    if (store_each_meta(v->st, STORE_VOLUME, collect_meta, &l, &stopped) != STORE_OK || stopped) {
        free(l.items);
        return -1;
    }
    long changed = 0;
    int failed = 0;
    for (size_t i = 0; i < l.n; i++) { /* stored names memory lacks or holds at another version */
        if (holds(v, &l.items[i]))
            continue;
        api_sync_result res = api_volumes_sync(v, l.items[i].name);
        failed |= res == API_SYNC_FAILED;
        changed += res == API_SYNC_LOADED || res == API_SYNC_REMOVED;
    }
    api_vol_entry **mem;
    size_t n = api_volumes_list(v, &mem);
    for (size_t i = 0; i < n; i++) { /* names in memory the store lacks (checked again) */
        int listed = 0;
        for (size_t k = 0; k < l.n && !listed; k++)
            listed = !strcmp(l.items[k].name, mem[i]->meta.name);
        if (listed)
            continue;
        api_sync_result res = api_volumes_sync(v, mem[i]->meta.name);
        failed |= res == API_SYNC_FAILED;
        changed += res == API_SYNC_LOADED || res == API_SYNC_REMOVED;
    }
    api_volumes_list_free(mem, n);
    free(l.items);
    return failed ? -1 : changed;
}

api_vol_entry *api_volumes_get(api_volumes *v, const char *name) {
    pthread_rwlock_rdlock(&v->lock);
    int found;
    size_t i = find_slot(v, name, &found);
    api_vol_entry *e = found ? v->items[i] : NULL;
    if (e)
        atomic_fetch_add(&e->refs, 1);
    pthread_rwlock_unlock(&v->lock);
    return e;
}

api_code api_volumes_put(api_volumes *v, const char *name, nav_vol *vol, const char *source,
                         api_vol_entry **out, api_err *e) {
    *out = NULL;
    size_t sl = source ? strlen(source) : 0;
    uint8_t *nb = NULL;
    size_t nlen = 0;
    api_vol_entry *ent = calloc(1, sizeof *ent);
    uint8_t *blob = NULL;
    if (!ent || nav_vol_serialize(vol, &nb, &nlen) != NAV_OK || !(blob = malloc(8 + sl + nlen)) ||
        (sl && !(ent->source = strdup(source)))) {
        free(nb);
        free(blob);
        if (ent)
            free(ent->source);
        free(ent);
        nav_vol_free(vol);
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while storing the volume");
    }
    uint32_t sl32 = (uint32_t)sl;
    memcpy(blob, VOL_MAGIC, 4);
    memcpy(blob + 4, &sl32, 4);
    if (sl)
        memcpy(blob + 8, source, sl);
    memcpy(blob + 8 + sl, nb, nlen);
    free(nb);
    ent->vol = vol;
    atomic_init(&ent->refs, 2); /* the table's and the caller's */
    pthread_mutex_lock(&v->write_lock);
    int created;
    store_status ss = store_put(v->st, STORE_VOLUME, name, blob, 8 + sl + nlen, vol_now_ms(),
                                &ent->meta, &created);
    free(blob);
    if (ss != STORE_OK) {
        pthread_mutex_unlock(&v->write_lock);
        api_log(API_LOG_ERROR, "storing flight volume '%s' failed: %s", name,
                store_status_text(ss));
        entry_free(ent);
        return api_fail(e, api_code_from_store(ss), "the volume could not be stored: %s",
                        store_status_text(ss));
    }
    if (publish(v, ent) != 0) {
        /* stored but not in memory: it loads at the next start; report the failure now */
        pthread_mutex_unlock(&v->write_lock);
        entry_free(ent);
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while publishing the volume");
    }
    pthread_mutex_unlock(&v->write_lock);
    *out = ent;
    return API_OK;
}

api_code api_volumes_delete(api_volumes *v, const char *name, api_err *e) {
    pthread_mutex_lock(&v->write_lock);
    store_status ss = store_delete(v->st, STORE_VOLUME, name);
    if (ss != STORE_OK) {
        pthread_mutex_unlock(&v->write_lock);
        if (ss == STORE_NOT_FOUND)
            return api_fail(e, API_E_NOT_FOUND, "volume '%s' does not exist", name);
        return api_fail(e, api_code_from_store(ss), "the volume could not be deleted: %s",
                        store_status_text(ss));
    }
    unpublish(v, name);
    pthread_mutex_unlock(&v->write_lock);
    return API_OK;
}

size_t api_volumes_list(api_volumes *v, api_vol_entry ***out) {
    pthread_rwlock_rdlock(&v->lock);
    size_t n = v->n;
    *out = malloc((n + 1) * sizeof **out);
    if (!*out) {
        pthread_rwlock_unlock(&v->lock);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        (*out)[i] = v->items[i];
        atomic_fetch_add(&v->items[i]->refs, 1);
    }
    pthread_rwlock_unlock(&v->lock);
    return n;
}

void api_volumes_list_free(api_vol_entry **list, size_t n) {
    for (size_t i = 0; i < n; i++)
        api_vol_entry_release(list[i]);
    free(list);
}

json_t *api_vol_entry_encode(const api_vol_entry *e) {
    nav_vol_info in;
    nav_vol_get_info(e->vol, &in);
    char created[40], updated[40];
    api_format_time(e->meta.created_ms, created, sizeof created);
    api_format_time(e->meta.updated_ms, updated, sizeof updated);
    json_t *src = e->source ? json_loads(e->source, 0, NULL) : NULL;
    return json_pack(
        "{s:s,s:I,s:o,s:o,s:[o,o],s:[I,I,I],s:I,s:I,s:I,s:I,s:o,s:s,s:s}", "name", e->meta.name,
        "version", (json_int_t)e->meta.version, "voxel_size", api_json_num(in.voxel_size), "radius",
        api_json_num(in.radius), "bounds", api_json_vec3(in.bmin), api_json_vec3(in.bmax), "dims",
        (json_int_t)in.dims[0], (json_int_t)in.dims[1], (json_int_t)in.dims[2], "free_voxels",
        (json_int_t)in.free_voxels, "blocked_voxels", (json_int_t)in.blocked_voxels, "components",
        (json_int_t)in.components, "bytes", (json_int_t)in.bytes, "source", src ? src : json_null(),
        "created_at", created, "updated_at", updated);
}

int api_volume_install(const char *db_path, const char *name, nav_vol *vol, const char *level_file,
                       const nav_vol_settings *s, char *err, size_t errlen) {
    if (!api_profile_name_ok(name)) {
        snprintf(err, errlen, "--name must be 1-64 of A-Z a-z 0-9 _ . -");
        nav_vol_free(vol);
        return -1;
    }
    store *st = NULL;
    char why[256] = "";
    if (store_open_detail(db_path, &st, why, sizeof why) != STORE_OK) {
        snprintf(err, errlen, "cannot open the database %s: %s", db_path, why);
        nav_vol_free(vol);
        return -1;
    }
    api_volumes *v = api_volumes_new(st);
    json_t *src =
        json_pack("{s:s,s:n,s:{s:o,s:o,s:[o,o]}}", "level", level_file, "level_version", "settings",
                  "voxel_size", api_json_num(s->voxel_size), "radius", api_json_num(s->radius),
                  "bounds", api_json_vec3(s->bmin), api_json_vec3(s->bmax));
    char *text = src ? api_json_dump(src, &(size_t){0}) : NULL;
    json_decref(src);
    api_vol_entry *ent = NULL;
    api_err e = {0};
    int rc = 0;
    if (!v || !text) {
        snprintf(err, errlen, "out of memory");
        nav_vol_free(vol);
        rc = -1;
    } else if (api_volumes_put(v, name, vol, text, &ent, &e) != API_OK) {
        snprintf(err, errlen, "%s", e.message);
        rc = -1;
    }
    api_vol_entry_release(ent);
    free(text);
    api_volumes_free(v);
    store_close(st);
    return rc;
}

/* ---- GET / DELETE ---- */

void api_h_volume_list(api_req *r) {
    api_vol_entry **list;
    size_t n = api_volumes_list(api_req_volumes(r), &list);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, api_vol_entry_encode(list[i]));
    api_volumes_list_free(list, n);
    api_reply_json(r, API_OK, json_pack("{s:o}", "volumes", arr));
}

/*
 * ?format=bricks: the blocked space for a viewer, brick by brick (linear
 * index (bz * by_count + by) * bx_count + bx): "solid" lists the wholly
 * blocked bricks, "mixed" the others holding blocked voxels as [index,
 * "16 hex digits"] with bit x + 4 y + 16 z set per blocked voxel. Wholly free
 * bricks are not listed.
 */
static void reply_bricks(api_req *r, const nav_vol *v) {
    nav_vol_info in;
    nav_vol_get_info(v, &in);
    uint32_t b[3];
    nav_vol_brick_dims(v, b);
    api_jw w;
    api_jw_init(&w, 4096);
    api_jw_lit(&w, "{\"voxel_size\":");
    api_jw_num(&w, in.voxel_size);
    api_jw_lit(&w, ",\"origin\":");
    api_jw_vec3(&w, in.bmin);
    api_jw_lit(&w, ",\"dims\":[");
    for (int k = 0; k < 3; k++) {
        if (k)
            api_jw_lit(&w, ",");
        api_jw_uint(&w, in.dims[k]);
    }
    api_jw_lit(&w, "],\"brick_dims\":[");
    for (int k = 0; k < 3; k++) {
        if (k)
            api_jw_lit(&w, ",");
        api_jw_uint(&w, b[k]);
    }
    for (int pass = 0; pass < 2; pass++) {
        api_jw_raw(&w, pass ? "],\"mixed\":[" : "],\"solid\":[", pass ? 11 : 11);
        int first = 1;
        uint64_t i = 0;
        for (uint32_t bz = 0; bz < b[2]; bz++)
            for (uint32_t by = 0; by < b[1]; by++)
                for (uint32_t bx = 0; bx < b[0]; bx++, i++) {
                    uint64_t fb;
                    int kind = nav_vol_brick(v, bx, by, bz, &fb);
                    if ((pass == 0 && kind != 0) || (pass == 1 && kind != 2))
                        continue;
                    if (!first)
                        api_jw_lit(&w, ",");
                    first = 0;
                    if (pass == 0) {
                        api_jw_uint(&w, i);
                        continue;
                    }
                    char hex[40];
                    int n = snprintf(hex, sizeof hex, "[%llu,\"%016llx\"]", (unsigned long long)i,
                                     (unsigned long long)~fb);
                    api_jw_raw(&w, hex, (size_t)n);
                }
    }
    api_jw_lit(&w, "]}");
    size_t len = 0;
    char *text = api_jw_finish(&w, &len);
    if (!text)
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while exporting the volume");
    else
        api_reply_raw(r, API_OK, "application/json", text, len);
}

void api_h_volume_get(api_req *r) {
    const char *format = api_req_arg(r, "format");
    if (format && strcmp(format, "bricks") != 0) {
        api_reply_fail(r, API_E_BAD_REQUEST, "format must be bricks (or absent for the metadata)");
        return;
    }
    api_vol_entry *e = api_volumes_get(api_req_volumes(r), api_req_name(r));
    if (!e) {
        api_reply_fail(r, API_E_NOT_FOUND, "volume '%s' does not exist", api_req_name(r));
        return;
    }
    if (format)
        reply_bricks(r, e->vol);
    else
        api_reply_json(r, API_OK, api_vol_entry_encode(e));
    api_vol_entry_release(e);
}

void api_h_volume_delete(api_req *r) {
    api_err e = {0};
    if (api_volumes_delete(api_req_volumes(r), api_req_name(r), &e) != API_OK)
        api_reply_error(r, &e);
    else
        api_reply_empty(r, API_NO_CONTENT);
}
