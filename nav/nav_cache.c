/*
 * nav_cache: the sharded, byte-bounded LRU path cache and the cached path
 * entry points (semantics in nav_cache.h).
 *
 * Memory. Each shard owns one arena carved from its share of the byte
 * budget when the cache is created: nslots fixed-size slots plus one chain
 * word per slot. An entry is a chain of slots holding a byte stream (key,
 * answer fields, then its arrays); eviction pushes the chain back on the
 * shard's free list. So storing and evicting never call malloc or free:
 * the steady state (steering churns the exact level constantly) allocates
 * nothing, and the process cannot fragment its heap through the cache.
 * Resident memory is bounded by the arenas: slots are handed out LIFO, so a
 * cache that never fills never touches (commits) its whole arena.
 *
 * Keys are compared byte for byte, so they are zeroed before being filled
 * (padding included). The filter costs are stored transformed (XOR with the
 * bit pattern of 1.0) and trimmed of trailing zero words: injective, and the
 * default filter's 256 bytes of costs cost nothing. A lookup copies the
 * answer out under the shard lock: answers are small, and copying avoids
 * reference counts on the hot path.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_query_internal.h"
#include "nav/nav_vol_internal.h"

enum { KEY_EXACT = 1, KEY_CORRIDOR = 2, KEY_CLOSEST = 3, KEY_VOLUME = 4 };

/* Slot size: small enough that the last slot of an entry wastes little
   (answers are a few hundred bytes), large enough that chains stay short. */
#define SLOT_BYTES 64u
/* What one slot costs the budget: its bytes and its chain word. */
#define SLOT_COST (SLOT_BYTES + sizeof(uint32_t))
#define NIL UINT32_MAX

typedef struct cache_key {
    uint64_t uid;
    uint64_t exclude_mask;
    uint32_t kind;
    uint32_t algo;
    uint32_t budget;
    uint32_t start_poly, end_poly; /* corridor keys */
    uint32_t pts[9];               /* exact keys: start, end, extents as bit patterns */
    uint32_t ncosts;               /* costs[] words stored (the rest are 0) */
    uint32_t costs[NAV_MAX_AREAS]; /* bit patterns XOR 1.0f; excluded areas: 0 XOR 1.0f */
} cache_key;

/* Bytes of a key that are stored and compared (ncosts is in the prefix). */
static size_t key_len(const cache_key *k) {
    return offsetof(cache_key, costs) + sizeof(uint32_t) * k->ncosts;
}

/* The answer fields stored after the key (both levels; arrays follow). */
typedef struct entry_meta {
    float start[3], end[3];
    uint32_t start_poly, end_poly, flags, nodes_expanded;
    nav_algo algorithm;
    uint32_t ncorners, npolys, nlinks;
    double length;
} entry_meta;

/* At the start of an entry's first slot; the entry is named by that slot. */
typedef struct entry_head {
    uint64_t hash;
    uint32_t hnext;      /* hash chain */
    uint32_t prev, next; /* LRU list, head = most recent */
    uint32_t nslots;
} entry_head;

_Static_assert(sizeof(entry_head) < SLOT_BYTES, "entry head must fit a slot");

typedef struct cache_shard {
    pthread_mutex_t lock;
    unsigned char *mem; /* nslots * SLOT_BYTES, carved at creation */
    uint32_t *chain;    /* next slot of the same entry, or of the free list */
    uint32_t nslots, nfree, free_head;
    uint32_t *buckets; /* first slots, NIL = empty */
    uint32_t mask;
    uint32_t head, tail;
    size_t bytes, cap;
} cache_shard;

struct nav_cache_tree {
    _Atomic uint32_t refs; /* the list's, while listed, and each holder's */
    nav_cache_tree_key key;
    void *tree;
    size_t bytes;
    void (*free_fn)(void *);
    uint64_t used; /* the list's clock at its last get or put */
};

struct nav_cache {
    cache_shard *shards;
    uint32_t nshards;
    size_t max_bytes;
    _Atomic uint64_t hits, corridor_hits, misses, evictions, entries, bytes;
    /* goal trees: a short list (a few dozen at most), one lock; a step
       looks each goal up once per tick */
    pthread_mutex_t tree_lock;
    nav_cache_tree *trees[NAV_CACHE_TREES];
    uint32_t ntrees;
    size_t tree_bytes;
    uint64_t tree_clock;
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

static entry_head *head_of(cache_shard *s, uint32_t slot) {
    return (entry_head *)(void *)(s->mem + (size_t)slot * SLOT_BYTES);
}

/* Every slot free, every bucket empty. Touches the chain words, not the
   slots themselves (their pages are committed on first use). */
static void shard_reset(cache_shard *s) {
    for (uint32_t i = 0; i < s->nslots; i++)
        s->chain[i] = i + 1 < s->nslots ? i + 1 : NIL;
    s->free_head = s->nslots ? 0 : NIL;
    s->nfree = s->nslots;
    for (uint32_t b = 0; b <= s->mask; b++)
        s->buckets[b] = NIL;
    s->head = s->tail = NIL;
    s->bytes = 0;
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
    pthread_mutex_init(&c->tree_lock, NULL);
    size_t per = max_bytes / nshards;
    size_t ns = per / SLOT_COST;
    if (ns > UINT32_MAX - 1)
        ns = UINT32_MAX - 1;
    /* About one bucket per 256 bytes of budget keeps chains short for
       typical answers (a few hundred bytes to a few kB). */
    size_t nbw = per / 256 > 65536 ? 65536 : per / 256 + 16;
    uint32_t nb = pow2_at_least((uint32_t)nbw);
    for (uint32_t i = 0; i < nshards; i++) {
        cache_shard *s = &c->shards[i];
        s->cap = per;
        s->nslots = (uint32_t)ns;
        s->mask = nb - 1;
        s->mem = malloc(ns ? ns * SLOT_BYTES : 1);
        s->chain = malloc(ns ? ns * sizeof(uint32_t) : 1);
        s->buckets = malloc(sizeof(uint32_t) * nb);
        if (!s->mem || !s->chain || !s->buckets || pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s->mem);
            free(s->chain);
            free(s->buckets);
            c->nshards = i;
            nav_cache_free(c);
            return NULL;
        }
        shard_reset(s);
    }
    return c;
}

static void shard_drop_all(nav_cache *c, cache_shard *s) {
    uint64_t n = 0;
    for (uint32_t e = s->head; e != NIL; e = head_of(s, e)->next)
        n++;
    atomic_fetch_sub(&c->entries, n);
    atomic_fetch_sub(&c->bytes, s->bytes);
    shard_reset(s);
}

void nav_cache_free(nav_cache *c) {
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        free(s->mem);
        free(s->chain);
        free(s->buckets);
        pthread_mutex_destroy(&s->lock);
    }
    free(c->shards);
    for (uint32_t i = 0; i < c->ntrees; i++)
        nav_cache_tree_release(c->trees[i]);
    pthread_mutex_destroy(&c->tree_lock);
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
    pthread_mutex_lock(&c->tree_lock);
    for (uint32_t i = 0; i < c->ntrees; i++)
        nav_cache_tree_release(c->trees[i]);
    c->ntrees = 0;
    c->tree_bytes = 0;
    pthread_mutex_unlock(&c->tree_lock);
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
    /* the stored prefix only: the cost words after it are all 0 */
    size_t n = key_len(k);
    for (size_t i = 0; i + 8 <= n + 7 && i + 8 <= sizeof(*k); i += 8) {
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
    /* the default filter (every cost 1, nothing excluded: most requests)
       leaves every cost word 0; checked in one pass before the general one */
    const float *cost = prep->filter.area_cost;
    /* every cost equals the next one (one memcmp), and the first is 1 */
    if (k->exclude_mask == 0 && cost[0] == 1.0f &&
        memcmp(cost, cost + 1, sizeof(float) * (NAV_MAX_AREAS - 1)) == 0)
        return;
    const float one = 1.0f;
    uint32_t one_bits;
    memcpy(&one_bits, &one, 4);
    for (int a = 0; a < NAV_MAX_AREAS; a++) {
        uint32_t w = 0;
        if (nav_filter_passable(&prep->filter, (uint8_t)a))
            memcpy(&w, &prep->filter.area_cost[a], 4);
        k->costs[a] = w ^ one_bits;
        if (k->costs[a])
            k->ncosts = (uint32_t)a + 1;
    }
}

/* ---------------------------------------------------------------- slot streams */

/* A position in an entry's byte stream. */
typedef struct cursor {
    uint32_t slot, off;
} cursor;

static cursor stream_begin(uint32_t first) {
    cursor cu = {first, (uint32_t)sizeof(entry_head)};
    return cu;
}

/* Moves n bytes between the stream and buf: dir 0 writes, 1 reads, 2
   compares (returns nonzero on the first difference), 3 only advances. */
static int stream_xfer(cache_shard *s, cursor *cu, void *buf, size_t n, int dir) {
    unsigned char *b = buf;
    while (n > 0) {
        if (cu->off == SLOT_BYTES) {
            cu->slot = s->chain[cu->slot];
            cu->off = 0;
        }
        size_t k = SLOT_BYTES - cu->off;
        if (k > n)
            k = n;
        unsigned char *p = s->mem + (size_t)cu->slot * SLOT_BYTES + cu->off;
        if (dir == 0)
            memcpy(p, b, k);
        else if (dir == 1)
            memcpy(b, p, k);
        else if (dir == 2 && memcmp(p, b, k) != 0)
            return 1;
        cu->off += (uint32_t)k;
        if (b)
            b += k;
        n -= k;
    }
    return 0;
}

static void stream_write(cache_shard *s, cursor *cu, const void *src, size_t n) {
    stream_xfer(s, cu, (void *)src, n, 0);
}

static void stream_read(cache_shard *s, cursor *cu, void *dst, size_t n) {
    stream_xfer(s, cu, dst, n, 1);
}

static void stream_skip(cache_shard *s, cursor *cu, size_t n) {
    stream_xfer(s, cu, NULL, n, 3);
}

/* Slots an entry of stream length len needs. */
static size_t slots_for(size_t len) {
    return (sizeof(entry_head) + len + SLOT_BYTES - 1) / SLOT_BYTES;
}

/* ---------------------------------------------------------------- shards */

static cache_shard *shard_of(nav_cache *c, uint64_t h) {
    return &c->shards[(h >> 48) & (c->nshards - 1)];
}

static void lru_unlink(cache_shard *s, uint32_t e) {
    entry_head *h = head_of(s, e);
    if (h->prev != NIL)
        head_of(s, h->prev)->next = h->next;
    else
        s->head = h->next;
    if (h->next != NIL)
        head_of(s, h->next)->prev = h->prev;
    else
        s->tail = h->prev;
    h->prev = h->next = NIL;
}

static void lru_push_front(cache_shard *s, uint32_t e) {
    entry_head *h = head_of(s, e);
    h->prev = NIL;
    h->next = s->head;
    if (s->head != NIL)
        head_of(s, s->head)->prev = e;
    s->head = e;
    if (s->tail == NIL)
        s->tail = e;
}

/* The entry holding key k, or NIL. Leaves *after at the stream position
   just past the key. */
static uint32_t shard_find(cache_shard *s, const cache_key *k, uint64_t h, cursor *after) {
    size_t kl = key_len(k);
    for (uint32_t e = s->buckets[h & s->mask]; e != NIL; e = head_of(s, e)->hnext) {
        if (head_of(s, e)->hash != h)
            continue;
        cursor cu = stream_begin(e);
        if (stream_xfer(s, &cu, (void *)k, kl, 2) == 0) {
            if (after)
                *after = cu;
            return e;
        }
    }
    return NIL;
}

static void shard_remove(nav_cache *c, cache_shard *s, uint32_t e) {
    entry_head *h = head_of(s, e);
    uint32_t *pp = &s->buckets[h->hash & s->mask];
    while (*pp != e)
        pp = &head_of(s, *pp)->hnext;
    *pp = h->hnext;
    lru_unlink(s, e);
    /* the chain's last slot links to the free list */
    uint32_t last = e;
    for (uint32_t i = 1; i < h->nslots; i++)
        last = s->chain[last];
    s->chain[last] = s->free_head;
    s->free_head = e;
    s->nfree += h->nslots;
    size_t bytes = (size_t)h->nslots * SLOT_COST;
    s->bytes -= bytes;
    atomic_fetch_sub(&c->entries, 1);
    atomic_fetch_sub(&c->bytes, bytes);
}

/*
 * Reserves an entry of stream length len for key k and writes the key:
 * returns a cursor just past it (*ok = 1), or *ok = 0 when the key is
 * already held (another thread stored it) or the entry cannot fit the
 * shard at all. Evicts least recently used entries until enough slots are
 * free. The caller holds the lock and writes exactly len - key_len bytes.
 */
static cursor shard_reserve(nav_cache *c, cache_shard *s, const cache_key *k, uint64_t h,
                            size_t len, int *ok) {
    cursor none = {NIL, 0};
    *ok = 0;
    size_t need = slots_for(len);
    if (need > s->nslots || shard_find(s, k, h, NULL) != NIL)
        return none;
    while (s->nfree < need && s->tail != NIL) {
        shard_remove(c, s, s->tail);
        atomic_fetch_add(&c->evictions, 1);
    }
    uint32_t first = s->free_head, last = first;
    for (size_t i = 1; i < need; i++)
        last = s->chain[last];
    s->free_head = s->chain[last];
    s->chain[last] = NIL;
    s->nfree -= (uint32_t)need;
    entry_head *eh = head_of(s, first);
    eh->hash = h;
    eh->nslots = (uint32_t)need;
    eh->hnext = s->buckets[h & s->mask];
    s->buckets[h & s->mask] = first;
    lru_push_front(s, first);
    size_t bytes = need * SLOT_COST;
    s->bytes += bytes;
    atomic_fetch_add(&c->entries, 1);
    atomic_fetch_add(&c->bytes, bytes);
    cursor cu = stream_begin(first);
    stream_write(s, &cu, k, key_len(k));
    *ok = 1;
    return cu;
}

/* ---------------------------------------------------------------- answers */

/* Reads n stored words, keeping the first max in dst; the rest are
   skipped and flag the answer truncated. */
static void read_u32(cache_shard *s, cursor *cu, uint32_t *dst, uint32_t max, uint32_t *count,
                     uint32_t n, uint32_t *flags) {
    uint32_t k = n < max ? n : max;
    stream_read(s, cu, dst, sizeof(uint32_t) * k);
    *count = k;
    if (k < n) {
        *flags |= NAV_PATH_TRUNCATED;
        stream_skip(s, cu, sizeof(uint32_t) * (n - k));
    }
}

/* Level 1 lookup: copies a stored answer into res. */
static int lookup_exact(nav_cache *c, const cache_key *k, uint64_t h, nav_path_result *res) {
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cursor cu;
    uint32_t e = shard_find(s, k, h, &cu);
    if (e == NIL) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    lru_unlink(s, e);
    lru_push_front(s, e);
    entry_meta mt;
    stream_read(s, &cu, &mt, sizeof(mt));
    memcpy(res->start, mt.start, sizeof(res->start));
    memcpy(res->end, mt.end, sizeof(res->end));
    res->start_poly = mt.start_poly;
    res->end_poly = mt.end_poly;
    res->flags = mt.flags;
    res->length = mt.length;
    res->algorithm = mt.algorithm;
    res->nodes_expanded = mt.nodes_expanded;
    uint32_t k3 = mt.ncorners < res->max_corners ? mt.ncorners : res->max_corners;
    stream_read(s, &cu, res->corners, sizeof(float) * 3 * k3);
    res->ncorners = k3;
    if (k3 < mt.ncorners) {
        res->flags |= NAV_PATH_TRUNCATED;
        stream_skip(s, &cu, sizeof(float) * 3 * (mt.ncorners - k3));
    }
    read_u32(s, &cu, res->polys, res->max_polys, &res->npolys, mt.npolys, &res->flags);
    read_u32(s, &cu, res->links, res->max_links, &res->nlinks, mt.nlinks, &res->flags);
    pthread_mutex_unlock(&s->lock);
    return 1;
}

static void store_exact(nav_cache *c, const cache_key *k, uint64_t h, const nav_path_result *res) {
    if (res->flags & NAV_PATH_TRUNCATED)
        return;
    entry_meta mt;
    memset(&mt, 0, sizeof(mt));
    memcpy(mt.start, res->start, sizeof(mt.start));
    memcpy(mt.end, res->end, sizeof(mt.end));
    mt.start_poly = res->start_poly;
    mt.end_poly = res->end_poly;
    mt.flags = res->flags;
    mt.length = res->length;
    mt.algorithm = res->algorithm;
    mt.nodes_expanded = res->nodes_expanded;
    mt.ncorners = res->ncorners;
    mt.npolys = res->npolys;
    mt.nlinks = res->nlinks;
    size_t arrays =
        sizeof(float) * 3 * res->ncorners + sizeof(uint32_t) * ((size_t)res->npolys + res->nlinks);
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    int ok;
    cursor cu = shard_reserve(c, s, k, h, key_len(k) + sizeof(mt) + arrays, &ok);
    if (ok) {
        stream_write(s, &cu, &mt, sizeof(mt));
        stream_write(s, &cu, res->corners, sizeof(float) * 3 * res->ncorners);
        stream_write(s, &cu, res->polys, sizeof(uint32_t) * res->npolys);
        stream_write(s, &cu, res->links, sizeof(uint32_t) * res->nlinks);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Level 2: stores the canonical corridor the last nav_path_canonical left in q. */
static void store_corridor(nav_cache *c, nav_query *q, const cache_key *k, uint64_t h,
                           uint32_t nodes_expanded) {
    uint32_t n = q->corr_n;
    if (n == 0)
        return;
    entry_meta mt;
    memset(&mt, 0, sizeof(mt));
    mt.algorithm = NAV_ALGO_CORRIDOR;
    mt.nodes_expanded = nodes_expanded;
    mt.npolys = n;
    mt.nlinks = n;
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    int ok;
    cursor cu =
        shard_reserve(c, s, k, h, key_len(k) + sizeof(mt) + sizeof(uint32_t) * 2 * (size_t)n, &ok);
    if (ok) {
        stream_write(s, &cu, &mt, sizeof(mt));
        stream_write(s, &cu, q->corr_polys, sizeof(uint32_t) * n);
        stream_write(s, &cu, q->corr_via, sizeof(uint32_t) * n);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Level 2 lookup: copies a stored canonical corridor into q->corr_*. */
static int lookup_corridor(nav_cache *c, nav_query *q, const cache_key *k, uint64_t h,
                           uint32_t *nodes_expanded) {
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cursor cu;
    uint32_t e = shard_find(s, k, h, &cu);
    entry_meta mt;
    if (e != NIL)
        stream_read(s, &cu, &mt, sizeof(mt));
    if (e == NIL || mt.npolys > q->max_nodes) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    lru_unlink(s, e);
    lru_push_front(s, e);
    uint32_t n = mt.npolys;
    stream_read(s, &cu, q->corr_polys, sizeof(uint32_t) * n);
    stream_read(s, &cu, q->corr_via, sizeof(uint32_t) * n);
    *nodes_expanded = mt.nodes_expanded;
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

/* The reachable point closest to prep->ept from prep->sp
   (nav_path_closest_reachable), memoised by (mesh, filter, sp, end point):
   an agent chasing a goal it cannot reach asks again every tick, mostly
   from the same polygon, and the answer scans its component. Not counted
   as a path hit or miss (the path lookup that follows is). */
static void closest_memo(nav_cache *c, nav_query *q, const nav_mesh *m, const nav_path_prep *prep,
                         uint32_t *tp, float tpt[3]) {
    if (!c) {
        nav_path_closest_reachable(q, m, prep->sp, prep->ept, &prep->filter, tp, tpt);
        return;
    }
    cache_key k;
    key_base(&k, m, prep, KEY_CLOSEST);
    k.algo = 0; /* neither the algorithm nor the budget matters here */
    k.budget = 0;
    k.start_poly = prep->sp;
    memcpy(&k.pts[0], prep->ept, 12);
    uint64_t h = key_hash(&k);
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cursor cu;
    uint32_t e = shard_find(s, &k, h, &cu);
    if (e != NIL) {
        stream_read(s, &cu, tp, sizeof *tp);
        stream_read(s, &cu, tpt, 3 * sizeof(float));
        lru_unlink(s, e);
        lru_push_front(s, e);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    pthread_mutex_unlock(&s->lock);
    nav_path_closest_reachable(q, m, prep->sp, prep->ept, &prep->filter, tp, tpt);
    pthread_mutex_lock(&s->lock);
    int ok;
    cu = shard_reserve(c, s, &k, h, key_len(&k) + sizeof *tp + 3 * sizeof(float), &ok);
    if (ok) {
        stream_write(s, &cu, tp, sizeof *tp);
        stream_write(s, &cu, tpt, 3 * sizeof(float));
    }
    pthread_mutex_unlock(&s->lock);
}

/* nav_find_path_reuse after validation and snapping (prep.sp / ep set). */
static nav_status reuse_snapped(nav_query *q, nav_cache *c, const nav_mesh *m,
                                const nav_path_prep *prep, nav_path_result *res,
                                nav_cache_result *outcome) {
    /* The algorithm is not part of the key: the canonical corridor is the
       same whatever the request asked for. */
    cache_key k2;
    key_base(&k2, m, prep, KEY_CORRIDOR);
    k2.algo = 0;
    k2.start_poly = prep->sp;
    k2.end_poly = prep->ep;
    uint64_t h2 = key_hash(&k2);
    uint32_t expanded = 0;
    if (c && lookup_corridor(c, q, &k2, h2, &expanded)) {
        atomic_fetch_add(&c->hits, 1);
        atomic_fetch_add(&c->corridor_hits, 1);
        *outcome = NAV_CACHE_HIT;
        return nav_path_pull_corridor(m, prep, q->corr_polys, q->corr_via, q->corr_n, expanded,
                                      res);
    }
    if (c) {
        atomic_fetch_add(&c->misses, 1);
        *outcome = NAV_CACHE_MISS;
    }
    nav_status st = nav_path_canonical(q, m, prep, &expanded);
    if (st == NAV_OK) {
        if (c)
            store_corridor(c, q, &k2, h2, expanded);
        return nav_path_pull_corridor(m, prep, q->corr_polys, q->corr_via, q->corr_n, expanded,
                                      res);
    }
    /* An end in another component: the path leads to the reachable point
       closest to it, as nav_find_path's does, but through the canonical
       corridor toward that point's polygon, so it is memoised like any
       pair (agents chasing a target they cannot reach searched the whole
       component every tick: a fifth of the agents of the HTTP bench's
       step, and a third of its steering time). */
    if (st == NAV_E_NOT_FOUND && !nav_mesh_reachable(m, prep->sp, prep->ep)) {
        nav_path_prep to = *prep;
        closest_memo(c, q, m, prep, &to.ep, to.ept);
        if (nav_mesh_reachable(m, to.sp, to.ep)) {
            st = reuse_snapped(q, c, m, &to, res, outcome);
            if (st == NAV_OK)
                res->flags |= NAV_PATH_PARTIAL_UNREACHABLE;
            return st;
        }
    }
    /* No canonical corridor (exclusions, budget): the fresh answer, which
       depends on the request alone as well. */
    return nav_path_run(q, m, prep, res);
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
    return reuse_snapped(q, c, m, &prep, res, outcome);
}

nav_status nav_find_path_reuse_at(nav_query *q, nav_cache *c, const nav_mesh *m,
                                  const nav_path_request *req, uint32_t sp, uint32_t ep,
                                  uint32_t stop_corners, double stop_len, nav_path_result *res,
                                  nav_cache_result *outcome) {
    nav_cache_result dummy;
    if (!outcome)
        outcome = &dummy;
    *outcome = NAV_CACHE_BYPASS;
    if (res && res->expanded)
        c = NULL;
    nav_path_prep prep;
    nav_status st = nav_path_validate(q, m, req, res, &prep);
    if (st != NAV_OK)
        return st;
    if (sp >= m->npolys || ep >= m->npolys)
        return NAV_E_INVALID_ARG;
    prep.sp = sp;
    prep.ep = ep;
    prep.stop_corners = stop_corners;
    prep.stop_len = stop_len;
    memcpy(prep.spt, req->start, sizeof prep.spt);
    memcpy(prep.ept, req->end, sizeof prep.ept);
    res->start_poly = sp;
    res->end_poly = ep;
    memcpy(res->start, req->start, sizeof res->start);
    memcpy(res->end, req->end, sizeof res->end);
    return reuse_snapped(q, c, m, &prep, res, outcome);
}

/* ---- goal trees ---- */

void nav_cache_tree_key_make(nav_cache_tree_key *k, const nav_mesh *m, const nav_filter *filter,
                             uint32_t poly, const float goal[3]) {
    nav_filter d;
    if (!filter) {
        nav_filter_default(&d);
        filter = &d;
    }
    memset(k, 0, sizeof *k);
    k->mesh_uid = nav_mesh_uid(m);
    k->exclude_mask = filter->exclude_mask;
    memcpy(k->area_cost, filter->area_cost, sizeof k->area_cost);
    k->poly = poly;
    memcpy(k->goal, goal, sizeof k->goal);
}

/* The index of k in the list, or ntrees; under tree_lock. */
static uint32_t tree_find(const nav_cache *c, const nav_cache_tree_key *k) {
    uint32_t i = 0;
    while (i < c->ntrees && memcmp(&c->trees[i]->key, k, sizeof *k) != 0)
        i++;
    return i;
}

nav_cache_tree *nav_cache_tree_get(nav_cache *c, const nav_cache_tree_key *k) {
    if (!c)
        return NULL;
    pthread_mutex_lock(&c->tree_lock);
    uint32_t i = tree_find(c, k);
    nav_cache_tree *t = NULL;
    if (i < c->ntrees) {
        t = c->trees[i];
        t->used = ++c->tree_clock;
        atomic_fetch_add(&t->refs, 1);
    }
    pthread_mutex_unlock(&c->tree_lock);
    return t;
}

/* Unlists trees, least recently used first, until `bytes` more fit both
   limits (or the list is empty); under tree_lock. */
static void tree_make_room(nav_cache *c, size_t bytes) {
    while (c->ntrees > 0 &&
           (c->ntrees >= NAV_CACHE_TREES || c->tree_bytes + bytes > NAV_CACHE_TREE_BYTES)) {
        uint32_t lru = 0;
        for (uint32_t i = 1; i < c->ntrees; i++)
            if (c->trees[i]->used < c->trees[lru]->used)
                lru = i;
        nav_cache_tree *t = c->trees[lru];
        c->trees[lru] = c->trees[--c->ntrees];
        c->tree_bytes -= t->bytes;
        nav_cache_tree_release(t); /* the list's reference */
    }
}

nav_cache_tree *nav_cache_tree_put(nav_cache *c, const nav_cache_tree_key *k, void *tree,
                                   size_t bytes, void (*free_fn)(void *)) {
    if (!c || !tree) {
        if (tree)
            free_fn(tree);
        return NULL;
    }
    nav_cache_tree *t = calloc(1, sizeof *t);
    if (!t) {
        free_fn(tree);
        return NULL;
    }
    t->key = *k;
    t->tree = tree;
    t->bytes = bytes;
    t->free_fn = free_fn;
    atomic_init(&t->refs, 2); /* the list's and the caller's */
    pthread_mutex_lock(&c->tree_lock);
    uint32_t i = tree_find(c, k);
    if (i < c->ntrees) {
        /* listed meanwhile by another thread: the same tree, keep that one */
        nav_cache_tree *had = c->trees[i];
        had->used = ++c->tree_clock;
        atomic_fetch_add(&had->refs, 1);
        pthread_mutex_unlock(&c->tree_lock);
        free_fn(tree);
        free(t);
        return had;
    }
    tree_make_room(c, bytes);
    t->used = ++c->tree_clock;
    c->trees[c->ntrees++] = t;
    c->tree_bytes += bytes;
    pthread_mutex_unlock(&c->tree_lock);
    return t;
}

void *nav_cache_tree_data(const nav_cache_tree *t) {
    return t ? t->tree : NULL;
}

void nav_cache_tree_release(nav_cache_tree *t) {
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) {
        t->free_fn(t->tree);
        free(t);
    }
}

uint32_t nav_cache_tree_count(nav_cache *c) {
    if (!c)
        return 0;
    pthread_mutex_lock(&c->tree_lock);
    uint32_t n = c->ntrees;
    pthread_mutex_unlock(&c->tree_lock);
    return n;
}

/* ---------------------------------------------------------------- flight volumes */

/* A volume path answer as stored after its key; the corners follow. */
typedef struct vol_meta {
    uint32_t complete, ncorners, nodes_expanded;
    float length;
} vol_meta;

static int lookup_volume(nav_cache *c, const cache_key *k, uint64_t h,
                         const nav_vol_path_request *req, nav_vol_path_result *res) {
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    cursor cu;
    uint32_t e = shard_find(s, k, h, &cu);
    vol_meta mt;
    if (e != NIL)
        stream_read(s, &cu, &mt, sizeof(mt));
    /* more corners than the caller holds: a fresh search truncates (and skips the
       pulling taut), so only it gives the same answer */
    if (e == NIL || mt.ncorners > req->max_corners) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    lru_unlink(s, e);
    lru_push_front(s, e);
    memset(res, 0, sizeof(*res));
    res->complete = mt.complete != 0;
    res->ncorners = mt.ncorners;
    res->nodes_expanded = mt.nodes_expanded;
    res->length = mt.length;
    stream_read(s, &cu, req->corners, sizeof(float) * 3 * mt.ncorners);
    pthread_mutex_unlock(&s->lock);
    return 1;
}

static void store_volume(nav_cache *c, const cache_key *k, uint64_t h,
                         const nav_vol_path_request *req, const nav_vol_path_result *res) {
    if (res->truncated)
        return;
    vol_meta mt = {.complete = res->complete,
                   .ncorners = res->ncorners,
                   .nodes_expanded = res->nodes_expanded,
                   .length = res->length};
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->lock);
    int ok;
    cursor cu = shard_reserve(
        c, s, k, h, key_len(k) + sizeof(mt) + sizeof(float) * 3 * (size_t)res->ncorners, &ok);
    if (ok) {
        stream_write(s, &cu, &mt, sizeof(mt));
        stream_write(s, &cu, req->corners, sizeof(float) * 3 * res->ncorners);
    }
    pthread_mutex_unlock(&s->lock);
}

nav_status nav_vol_path_cached(const nav_vol *v, nav_vol_query *q, nav_cache *c,
                               const nav_vol_path_request *req, nav_vol_path_result *res,
                               nav_cache_result *outcome) {
    nav_cache_result dummy;
    if (!outcome)
        outcome = &dummy;
    *outcome = NAV_CACHE_BYPASS;
    if (!c || !v || !q || !req || !res || req->expanded || !req->corners)
        return nav_vol_path(v, q, req, res);
    cache_key k;
    memset(&k, 0, sizeof(k));
    k.uid = nav_vol_uid(v);
    k.kind = KEY_VOLUME;
    memcpy(&k.algo, &req->heuristic_weight, 4);
    k.budget = nav_vol_query_budget(q, req->max_nodes);
    memcpy(&k.pts[0], req->start, 12);
    memcpy(&k.pts[3], req->end, 12);
    uint64_t h = key_hash(&k);
    if (lookup_volume(c, &k, h, req, res)) {
        atomic_fetch_add(&c->hits, 1);
        *outcome = NAV_CACHE_HIT;
        return NAV_OK;
    }
    nav_status st = nav_vol_path(v, q, req, res);
    if (st != NAV_OK)
        return st; /* a refused request is not a lookup that searched */
    atomic_fetch_add(&c->misses, 1);
    *outcome = NAV_CACHE_MISS;
    store_volume(c, &k, h, req, res);
    return st;
}
