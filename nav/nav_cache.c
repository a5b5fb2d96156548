/*
 * nav_cache: the sharded, byte-bounded LRU path cache and the cached path
 * entry points (semantics in nav_cache.h).
 *
 * An entry is one malloc block: header, key, then its arrays. Keys are
 * compared whole with memcmp, so they are zeroed before being filled
 * (padding included). A lookup copies the answer out under the shard lock:
 * answers are small, and copying avoids reference counts on the hot path.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_query_internal.h"

enum { KEY_EXACT = 1, KEY_CORRIDOR = 2 };

typedef struct cache_key {
    uint64_t uid;
    uint64_t exclude_mask;
    uint32_t kind;
    uint32_t algo;
    uint32_t budget;
    uint32_t start_poly, end_poly; /* corridor keys */
    uint32_t pts[9];               /* exact keys: start, end, extents as bit patterns */
    uint32_t costs[NAV_MAX_AREAS]; /* bit patterns; 0 for excluded areas */
} cache_key;

typedef struct cache_entry {
    struct cache_entry *hnext;       /* hash chain */
    struct cache_entry *prev, *next; /* LRU list, head = most recent */
    uint64_t hash;
    size_t bytes;
    cache_key key;
    /* exact answers */
    float start[3], end[3];
    uint32_t start_poly, end_poly, flags, nodes_expanded;
    nav_algo algorithm;
    double length;
    uint32_t ncorners, npolys, nlinks;
    float *corners;  /* ncorners * 3 */
    uint32_t *polys; /* npolys */
    uint32_t *links; /* exact: nlinks link ids; corridor: npolys via words */
} cache_entry;

typedef struct cache_shard {
    pthread_mutex_t lock;
    cache_entry **buckets;
    uint32_t mask;
    cache_entry *head, *tail;
    size_t bytes, cap;
} cache_shard;

struct nav_cache {
    cache_shard *shards;
    uint32_t nshards;
    size_t max_bytes;
    _Atomic uint64_t hits, corridor_hits, misses, evictions, entries, bytes;
};

const char *nav_cache_result_name(nav_cache_result r) {
    switch (r) {
    case NAV_CACHE_HIT:
        return "hit";
    case NAV_CACHE_MISS:
        return "miss";
    default:
        return "bypass";
    }
}

static uint32_t pow2_at_least(uint32_t v) {
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

nav_cache *nav_cache_new(size_t max_bytes, uint32_t nshards) {
    if (max_bytes == 0)
        return NULL;
    if (nshards == 0)
        nshards = 16;
    if (nshards > 1024)
        nshards = 1024;
    nshards = pow2_at_least(nshards);
    nav_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->shards = calloc(nshards, sizeof(cache_shard));
    if (!c->shards) {
        free(c);
        return NULL;
    }
    c->nshards = nshards;
    c->max_bytes = max_bytes;
    /* About one bucket per 512 bytes of budget keeps chains short for
       typical answers (a few hundred bytes to a few kB). */
    size_t per = max_bytes / nshards;
    uint32_t nb = pow2_at_least((uint32_t)(per / 512 > 65536 ? 65536 : per / 512 + 16));
    for (uint32_t i = 0; i < nshards; i++) {
        cache_shard *s = &c->shards[i];
        s->cap = per;
        s->mask = nb - 1;
        s->buckets = calloc(nb, sizeof(cache_entry *));
        if (!s->buckets || pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s->buckets);
            s->buckets = NULL;
            c->nshards = i;
            nav_cache_free(c);
            return NULL;
        }
    }
    return c;
}

static void shard_drop_all(nav_cache *c, cache_shard *s) {
    cache_entry *e = s->head;
    while (e) {
        cache_entry *n = e->next;
        atomic_fetch_sub(&c->entries, 1);
        atomic_fetch_sub(&c->bytes, e->bytes);
        free(e);
        e = n;
    }
    s->head = s->tail = NULL;
    s->bytes = 0;
    memset(s->buckets, 0, sizeof(cache_entry *) * (s->mask + 1));
}

void nav_cache_free(nav_cache *c) {
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nshards; i++) {
        shard_drop_all(c, &c->shards[i]);
        free(c->shards[i].buckets);
        pthread_mutex_destroy(&c->shards[i].lock);
    }
    free(c->shards);
    free(c);
}

void nav_cache_clear(nav_cache *c) {
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nshards; i++) {
        pthread_mutex_lock(&c->shards[i].lock);
        shard_drop_all(c, &c->shards[i]);
        pthread_mutex_unlock(&c->shards[i].lock);
    }
}

void nav_cache_stats_get(const nav_cache *c, nav_cache_stats *out) {
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!c)
        return;
    nav_cache *cc = (nav_cache *)c; /* atomics loads on a const object */
    out->hits = atomic_load(&cc->hits);
    out->corridor_hits = atomic_load(&cc->corridor_hits);
    out->misses = atomic_load(&cc->misses);
    out->evictions = atomic_load(&cc->evictions);
    out->entries = atomic_load(&cc->entries);
    out->bytes = atomic_load(&cc->bytes);
    out->max_bytes = c->max_bytes;
}

/* ---------------------------------------------------------------- keys */

static uint64_t key_hash(const cache_key *k) {
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i + 8 <= sizeof(*k); i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h ^= w;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    return h;
}

static void key_base(cache_key *k, const nav_mesh *m, const nav_path_prep *prep, uint32_t kind) {
    memset(k, 0, sizeof(*k));
    k->uid = nav_mesh_uid(m);
    k->exclude_mask = prep->filter.exclude_mask;
    k->kind = kind;
    k->algo = (uint32_t)prep->algo;
    k->budget = prep->budget;
    for (int a = 0; a < NAV_MAX_AREAS; a++)
        if (nav_filter_passable(&prep->filter, (uint8_t)a))
            memcpy(&k->costs[a], &prep->filter.area_cost[a], 4);
}

/* ---------------------------------------------------------------- shards */

static cache_shard *shard_of(nav_cache *c, uint64_t h) {
    return &c->shards[(h >> 48) & (c->nshards - 1)];
}

static void lru_unlink(cache_shard *s, cache_entry *e) {
    if (e->prev)
        e->prev->next = e->next;
    else
        s->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(cache_shard *s, cache_entry *e) {
    e->prev = NULL;
    e->next = s->head;
    if (s->head)
        s->head->prev = e;
    s->head = e;
    if (!s->tail)
        s->tail = e;
}

static cache_entry *shard_find(cache_shard *s, const cache_key *k, uint64_t h) {
    for (cache_entry *e = s->buckets[h & s->mask]; e; e = e->hnext)
        if (e->hash == h && memcmp(&e->key, k, sizeof(*k)) == 0)
            return e;
    return NULL;
}

static void shard_remove(nav_cache *c, cache_shard *s, cache_entry *e) {
    cache_entry **pp = &s->buckets[e->hash & s->mask];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(s, e);
    s->bytes -= e->bytes;
    atomic_fetch_sub(&c->entries, 1);
    atomic_fetch_sub(&c->bytes, e->bytes);
    free(e);
}

/* Takes ownership of e (frees it when it cannot be stored). */
static void cache_insert(nav_cache *c, cache_entry *e) {
    cache_shard *s = shard_of(c, e->hash);
    if (e->bytes > s->cap) {
        free(e);
        return;
    }
    pthread_mutex_lock(&s->lock);
    cache_entry *old = shard_find(s, &e->key, e->hash);
    if (old) {
        /* another thread stored the same answer meanwhile: keep it */
        pthread_mutex_unlock(&s->lock);
        free(e);
        return;
    }
    while (s->bytes + e->bytes > s->cap && s->tail) {
        shard_remove(c, s, s->tail);
        atomic_fetch_add(&c->evictions, 1);
    }
    e->hnext = s->buckets[e->hash & s->mask];
    s->buckets[e->hash & s->mask] = e;
    lru_push_front(s, e);
    s->bytes += e->bytes;
    atomic_fetch_add(&c->entries, 1);
    atomic_fetch_add(&c->bytes, e->bytes);
    pthread_mutex_unlock(&s->lock);
}

static cache_entry *entry_alloc(uint32_t ncorners, uint32_t npolys, uint32_t nlinks) {
    size_t bytes = sizeof(cache_entry) + sizeof(float) * 3 * ncorners +
                   sizeof(uint32_t) * ((size_t)npolys + nlinks);
    cache_entry *e = calloc(1, bytes);
    if (!e)
        return NULL;
    e->bytes = bytes;
    e->ncorners = ncorners;
    e->npolys = npolys;
    e->nlinks = nlinks;
    char *p = (char *)(e + 1);
    e->corners = (float *)p;
    p += sizeof(float) * 3 * ncorners;
    e->polys = (uint32_t *)p;
    p += sizeof(uint32_t) * npolys;
    e->links = (uint32_t *)p;
    return e;
}

/* ---------------------------------------------------------------- answers */

static void copy_out_u32(uint32_t *dst, uint32_t max, uint32_t *count, const uint32_t *src,
                         uint32_t n, uint32_t *flags) {
    uint32_t k = n < max ? n : max;
    if (k)
        memcpy(dst, src, sizeof(uint32_t) * k);
    *count = k;
    if (k < n)
        *flags |= NAV_PATH_TRUNCATED;
}

/* Level 1 lookup: copies a stored answer into res. */
static int lookup_exact(nav_cache *c, const cache_key *k, uint64_t h, nav_path_result *res) {
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cache_entry *e = shard_find(s, k, h);
    if (!e) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    lru_unlink(s, e);
    lru_push_front(s, e);
    memcpy(res->start, e->start, sizeof(res->start));
    memcpy(res->end, e->end, sizeof(res->end));
    res->start_poly = e->start_poly;
    res->end_poly = e->end_poly;
    res->flags = e->flags;
    res->length = e->length;
    res->algorithm = e->algorithm;
    res->nodes_expanded = e->nodes_expanded;
    uint32_t k3 = e->ncorners < res->max_corners ? e->ncorners : res->max_corners;
    if (k3)
        memcpy(res->corners, e->corners, sizeof(float) * 3 * k3);
    res->ncorners = k3;
    if (k3 < e->ncorners)
        res->flags |= NAV_PATH_TRUNCATED;
    copy_out_u32(res->polys, res->max_polys, &res->npolys, e->polys, e->npolys, &res->flags);
    copy_out_u32(res->links, res->max_links, &res->nlinks, e->links, e->nlinks, &res->flags);
    pthread_mutex_unlock(&s->lock);
    return 1;
}

static void store_exact(nav_cache *c, const cache_key *k, uint64_t h, const nav_path_result *res) {
    if (res->flags & NAV_PATH_TRUNCATED)
        return;
    cache_entry *e = entry_alloc(res->ncorners, res->npolys, res->nlinks);
    if (!e)
        return;
    e->key = *k;
    e->hash = h;
    memcpy(e->start, res->start, sizeof(e->start));
    memcpy(e->end, res->end, sizeof(e->end));
    e->start_poly = res->start_poly;
    e->end_poly = res->end_poly;
    e->flags = res->flags;
    e->length = res->length;
    e->algorithm = res->algorithm;
    e->nodes_expanded = res->nodes_expanded;
    if (res->ncorners)
        memcpy(e->corners, res->corners, sizeof(float) * 3 * res->ncorners);
    if (res->npolys)
        memcpy(e->polys, res->polys, sizeof(uint32_t) * res->npolys);
    if (res->nlinks)
        memcpy(e->links, res->links, sizeof(uint32_t) * res->nlinks);
    cache_insert(c, e);
}

/* Level 2: stores the canonical corridor the last nav_path_canonical left in q. */
static void store_corridor(nav_cache *c, nav_query *q, const cache_key *k, uint64_t h,
                           uint32_t nodes_expanded) {
    uint32_t n = q->corr_n;
    if (n == 0)
        return;
    cache_entry *e = entry_alloc(0, n, n);
    if (!e)
        return;
    memcpy(e->polys, q->corr_polys, sizeof(uint32_t) * n);
    memcpy(e->links, q->corr_via, sizeof(uint32_t) * n);
    e->key = *k;
    e->hash = h;
    e->algorithm = NAV_ALGO_CORRIDOR;
    e->nodes_expanded = nodes_expanded;
    cache_insert(c, e);
}

/* Level 2 lookup: copies a stored canonical corridor into q->corr_*. */
static int lookup_corridor(nav_cache *c, nav_query *q, const cache_key *k, uint64_t h,
                           uint32_t *nodes_expanded) {
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cache_entry *e = shard_find(s, k, h);
    if (!e || e->npolys > q->max_nodes) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    lru_unlink(s, e);
    lru_push_front(s, e);
    uint32_t n = e->npolys;
    memcpy(q->corr_polys, e->polys, sizeof(uint32_t) * n);
    memcpy(q->corr_via, e->links, sizeof(uint32_t) * n);
    *nodes_expanded = e->nodes_expanded;
    pthread_mutex_unlock(&s->lock);
    q->corr_n = n;
    return 1;
}

nav_status nav_find_path_cached(nav_query *q, nav_cache *c, const nav_mesh *m,
                                const nav_path_request *req, nav_path_result *res,
                                nav_cache_result *outcome) {
    nav_cache_result dummy;
    if (!outcome)
        outcome = &dummy;
    *outcome = NAV_CACHE_BYPASS;
    if (!c || (res && res->expanded))
        return nav_find_path(q, m, req, res);

    nav_path_prep prep;
    nav_status st = nav_path_validate(q, m, req, res, &prep);
    if (st != NAV_OK)
        return st;

    cache_key k1;
    key_base(&k1, m, &prep, KEY_EXACT);
    memcpy(&k1.pts[0], req->start, 12);
    memcpy(&k1.pts[3], req->end, 12);
    memcpy(&k1.pts[6], req->extents, 12);
    uint64_t h1 = key_hash(&k1);
    if (lookup_exact(c, &k1, h1, res)) {
        atomic_fetch_add(&c->hits, 1);
        *outcome = NAV_CACHE_HIT;
        return NAV_OK;
    }
    atomic_fetch_add(&c->misses, 1);
    *outcome = NAV_CACHE_MISS;
    st = nav_path_snap(m, req, &prep, res);
    if (st == NAV_OK)
        st = nav_path_run(q, m, &prep, res);
    if (st == NAV_OK)
        store_exact(c, &k1, h1, res);
    return st;
}

nav_status nav_find_path_reuse(nav_query *q, nav_cache *c, const nav_mesh *m,
                               const nav_path_request *req, nav_path_result *res,
                               nav_cache_result *outcome) {
    nav_cache_result dummy;
    if (!outcome)
        outcome = &dummy;
    *outcome = NAV_CACHE_BYPASS;
    if (res && res->expanded)
        c = NULL; /* the debug list belongs to a search: compute, same answer */

    nav_path_prep prep;
    nav_status st = nav_path_validate(q, m, req, res, &prep);
    if (st != NAV_OK)
        return st;
    st = nav_path_snap(m, req, &prep, res);
    if (st != NAV_OK) {
        if (c) {
            atomic_fetch_add(&c->misses, 1);
            *outcome = NAV_CACHE_MISS;
        }
        return st;
    }

    /* The algorithm is not part of the key: the canonical corridor is the
       same whatever the request asked for. */
    cache_key k2;
    key_base(&k2, m, &prep, KEY_CORRIDOR);
    k2.algo = 0;
    k2.start_poly = prep.sp;
    k2.end_poly = prep.ep;
    uint64_t h2 = key_hash(&k2);
    uint32_t expanded = 0;
    if (c && lookup_corridor(c, q, &k2, h2, &expanded)) {
        atomic_fetch_add(&c->hits, 1);
        atomic_fetch_add(&c->corridor_hits, 1);
        *outcome = NAV_CACHE_HIT;
        return nav_path_pull_corridor(m, &prep, q->corr_polys, q->corr_via, q->corr_n, expanded,
                                      res);
    }
    if (c) {
        atomic_fetch_add(&c->misses, 1);
        *outcome = NAV_CACHE_MISS;
    }
    st = nav_path_canonical(q, m, &prep, &expanded);
    if (st == NAV_OK) {
        if (c)
            store_corridor(c, q, &k2, h2, expanded);
        return nav_path_pull_corridor(m, &prep, q->corr_polys, q->corr_via, q->corr_n, expanded,
                                      res);
    }
    /* No canonical corridor (unreachable end, exclusions, budget): the
       fresh answer, which depends on the request alone as well. */
    return nav_path_run(q, m, &prep, res);
}
