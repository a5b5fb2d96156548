/*
 * nav_steer_lanes: a large step split across threads, with the same bytes
 * as one thread.
 *
 * A lane is a copy of the tick's nav_steer with its own path, raycast and
 * boundary buffers and its own nav_query (same node pool as the caller's,
 * so budgets mean the same), sharing the agents, inputs, grid, memos and
 * trees. The per-agent phases (snapping, neighbours, the agents' ticks,
 * the separation passes) read only the tick's shared state and write only
 * their own agents' slots, so any split gives the same answer; everything
 * that writes shared state (the grid, the goal counts, the trees, crowd
 * arrival's order) runs before, on one thread. Lanes are read-only on the
 * goal memo: a goal missing from it is snapped without being stored (the
 * same answer, a memo only saves work).
 *
 * The helper threads are started once per nav_steer (its first split step)
 * and wait on a condition variable between phases: a step runs up to 20
 * phases (8 separation passes of two), and starting threads per phase cost
 * more than the second core gave on a 1,000-agent step. A phase is cut in
 * chunks that the caller's thread and the helpers take in turn, each on
 * its own lane, so a helper the scheduler keeps waiting (other work on the
 * cores) only leaves its chunks to the others instead of holding the
 * phase; the caller never waits for a helper that has taken nothing.
 * nav_step uses lanes only for steps of STEER_LANE_MIN agents per lane or
 * more.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_query_internal.h"
#include "nav/nav_steer_internal.h"

/* Chunks per lane and phase: enough that a late helper costs little, few
   enough that taking one (an atomic) is nothing beside its agents. */
#define POOL_CHUNKS_PER_LANE 8
#define POOL_CHUNK_MIN 16

typedef struct steer_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* helpers: a new phase, or quit */
    pthread_cond_t done; /* the caller: the last chunk finished */
    pthread_t tid[STEER_MAX_LANES];
    uint32_t nthreads; /* helpers started: lanes 1..nthreads */
    bool quit;
    /* the phase (written under lock, with gen) */
    uint32_t gen;
    nav_steer *lanes;
    steer_phase_fn fn;
    void *ctx;
    uint32_t n, chunk, nchunks;
    uint32_t nlanes; /* lanes prepared for this step: helpers of others sit it out */
    /* (gen << 32) | next chunk: a helper takes a chunk only of the phase it
       read, so one that wakes late never runs a chunk of the next */
    _Atomic uint64_t ticket;
    _Atomic uint32_t finished; /* chunks of this phase done */
} steer_pool;

typedef struct pool_arg {
    steer_pool *pool;
    uint32_t lane;
} pool_arg;

/* Takes and runs chunks of phase gen on lane `lane` until none is left. */
static void pool_work(steer_pool *p, uint32_t gen, nav_steer *lanes, steer_phase_fn fn, void *ctx,
                      uint32_t n, uint32_t chunk, uint32_t nchunks, uint32_t lane) {
    for (;;) {
        uint64_t t = atomic_load(&p->ticket);
        if ((uint32_t)(t >> 32) != gen || (uint32_t)t >= nchunks)
            return;
        if (!atomic_compare_exchange_weak(&p->ticket, &t, t + 1))
            continue;
        uint32_t k = (uint32_t)t, from = k * chunk, to = from + chunk < n ? from + chunk : n;
        fn(&lanes[lane], from, to, ctx);
        if (atomic_fetch_add(&p->finished, 1) + 1 == nchunks) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

static void *pool_main(void *arg) {
    pool_arg a = *(pool_arg *)arg;
    free(arg);
    steer_pool *p = a.pool;
    uint32_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->quit && p->gen == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->gen;
        nav_steer *lanes = p->lanes;
        steer_phase_fn fn = p->fn;
        void *ctx = p->ctx;
        uint32_t n = p->n, chunk = p->chunk, nchunks = p->nchunks, nlanes = p->nlanes;
        pthread_mutex_unlock(&p->lock);
        /* a helper started for a larger step: its lane is not this step's */
        if (a.lane < nlanes)
            pool_work(p, seen, lanes, fn, ctx, n, chunk, nchunks, a.lane);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void pool_free(steer_pool *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (uint32_t k = 1; k <= p->nthreads; k++)
        pthread_join(p->tid[k], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p);
}

/* The pool with helpers for lanes 1..L-1 (started as needed); how many
   helpers it has (fewer when threads cannot start: their lanes' chunks
   are taken by the others). */
static uint32_t pool_ready(nav_steer *s, uint32_t L) {
    if (!s->pool) {
        steer_pool *p = calloc(1, sizeof *p);
        if (!p)
            return 0;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->wake, NULL);
        pthread_cond_init(&p->done, NULL);
        atomic_init(&p->ticket, 0);
        atomic_init(&p->finished, 0);
        s->pool = p;
    }
    steer_pool *p = s->pool;
    while (p->nthreads + 1 < L) {
        pool_arg *a = malloc(sizeof *a);
        if (!a)
            break;
        *a = (pool_arg){p, p->nthreads + 1};
        if (pthread_create(&p->tid[p->nthreads + 1], NULL, pool_main, a) != 0) {
            free(a);
            break;
        }
        p->nthreads++;
    }
    return p->nthreads;
}

void steer_lanes_free(nav_steer *s) {
    pool_free(s->pool);
    s->pool = NULL;
    for (uint32_t k = 0; k < STEER_MAX_LANES; k++)
        nav_query_free(s->lane_q[k]);
    free(s->lanes);
    s->lanes = NULL;
    s->nlanes = 0;
    memset(s->lane_q, 0, sizeof s->lane_q);
}

uint32_t steer_lanes_prepare(nav_steer *s, uint32_t threads) {
    uint32_t want = threads;
    if (want > STEER_MAX_LANES)
        want = STEER_MAX_LANES;
    if (want > s->n / STEER_LANE_MIN)
        want = s->n / STEER_LANE_MIN;
    s->nlanes = 0;
    if (want < 2)
        return 0;
    if (!s->lanes) {
        s->lanes = malloc(STEER_MAX_LANES * sizeof *s->lanes);
        if (!s->lanes)
            return 0;
    }
    /* lane 0 borrows the caller's query; the others get their own, with
       the same pool (a budget is min(max_nodes, pool)) */
    uint32_t pool = s->query->max_nodes;
    for (uint32_t k = 1; k < want; k++) {
        if (s->lane_q[k] && s->lane_q_nodes != pool) {
            nav_query_free(s->lane_q[k]);
            s->lane_q[k] = NULL;
        }
        if (!s->lane_q[k] && !(s->lane_q[k] = nav_query_new(pool)))
            return 0;
    }
    s->lane_q_nodes = pool;
    for (uint32_t k = 0; k < want; k++) {
        memcpy(&s->lanes[k], s, sizeof *s);
        s->lanes[k].query = k == 0 ? s->query : s->lane_q[k];
        s->lanes[k].readonly = 1;
        s->lanes[k].lane_hit_deadline = 0;
    }
    s->nlanes = want;
    return want;
}

void steer_parallel(nav_steer *s, steer_phase_fn fn, void *ctx) {
    uint32_t L = s->nlanes;
    if (L < 2 || pool_ready(s, L) == 0) {
        fn(s, 0, s->n, ctx);
        return;
    }
    steer_pool *p = s->pool;
    /* lanes beyond the helpers started are left idle */
    uint32_t lanes = p->nthreads + 1 < L ? p->nthreads + 1 : L;
    uint32_t chunk = (s->n + lanes * POOL_CHUNKS_PER_LANE - 1) / (lanes * POOL_CHUNKS_PER_LANE);
    if (chunk < POOL_CHUNK_MIN)
        chunk = POOL_CHUNK_MIN;
    uint32_t nchunks = (s->n + chunk - 1) / chunk;
    pthread_mutex_lock(&p->lock);
    uint32_t gen = ++p->gen;
    p->lanes = s->lanes;
    p->fn = fn;
    p->ctx = ctx;
    p->n = s->n;
    p->chunk = chunk;
    p->nchunks = nchunks;
    p->nlanes = lanes;
    atomic_store(&p->finished, 0);
    atomic_store(&p->ticket, (uint64_t)gen << 32);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pool_work(p, gen, s->lanes, fn, ctx, s->n, chunk, nchunks, 0);
    /* every chunk is taken: wait for those helpers are still running */
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->finished) < nchunks)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
