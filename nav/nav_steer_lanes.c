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
 * Threads are started per phase and joined (a few tens of microseconds
 * each, for steps of milliseconds): nav_step uses lanes only for steps of
 * STEER_LANE_MIN agents per lane or more.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_query_internal.h"
#include "nav/nav_steer_internal.h"

void steer_lanes_free(nav_steer *s) {
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

typedef struct lane_job {
    nav_steer *lane;
    steer_phase_fn fn;
    void *ctx;
    uint32_t from, to;
} lane_job;

static void *lane_main(void *p) {
    lane_job *j = p;
    j->fn(j->lane, j->from, j->to, j->ctx);
    return NULL;
}

void steer_parallel(nav_steer *s, steer_phase_fn fn, void *ctx) {
    uint32_t L = s->nlanes;
    if (L < 2) {
        fn(s, 0, s->n, ctx);
        return;
    }
    lane_job jobs[STEER_MAX_LANES];
    pthread_t tid[STEER_MAX_LANES];
    bool started[STEER_MAX_LANES] = {false};
    for (uint32_t k = 0; k < L; k++) {
        jobs[k].lane = &s->lanes[k];
        jobs[k].fn = fn;
        jobs[k].ctx = ctx;
        jobs[k].from = (uint32_t)((uint64_t)s->n * k / L);
        jobs[k].to = (uint32_t)((uint64_t)s->n * (k + 1) / L);
    }
    /* a thread that cannot start leaves its share to this one */
    for (uint32_t k = 1; k < L; k++)
        started[k] = pthread_create(&tid[k], NULL, lane_main, &jobs[k]) == 0;
    lane_main(&jobs[0]);
    for (uint32_t k = 1; k < L; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            lane_main(&jobs[k]);
    }
}
