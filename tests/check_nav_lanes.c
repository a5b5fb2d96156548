/*
 * check_nav_lanes: a step split across threads answers the same bytes as
 * one thread (nav/nav_steer_lanes.c), tick after tick of a closed loop, for
 * every thread count, with crowds that share targets (trees), agents with
 * their own targets, every behaviour, obstacles and agents off the mesh;
 * and a deadline that passes still answers NAV_E_DEADLINE with threads.
 * Run under TSan by the concurrency pass (make SAN=thread).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_steer.h"
#include "tests/test_fixtures.h"

#define LN 700

typedef struct world {
    nav_agent_in in[LN];
    nav_obstacle obs[4];
    char ids[LN][12];
} world;

static void world_init(world *w, const nav_mesh *m, uint32_t seed) {
    uint32_t rng = seed;
    float shared[3][3];
    for (int k = 0; k < 3; k++)
        fx_random_point(m, &rng, shared[k]);
    memset(w, 0, sizeof *w);
    for (uint32_t i = 0; i < LN; i++) {
        nav_agent_in *a = &w->in[i];
        fx_random_point(m, &rng, a->pos);
        snprintf(w->ids[i], sizeof w->ids[i], "a%u", (unsigned)i);
        a->id = w->ids[i];
        a->radius = 0.2f + 0.1f * (float)(i % 3);
        a->max_speed = 1.5f + (float)(i % 4);
        a->max_accel = 8;
        a->arrive_radius = 1;
        uint32_t roll = i % 10;
        a->behavior = roll < 4   ? NAV_BEHAVIOR_ARRIVE
                      : roll < 6 ? NAV_BEHAVIOR_SEEK
                      : roll < 7 ? NAV_BEHAVIOR_PURSUE
                      : roll < 8 ? NAV_BEHAVIOR_WANDER
                      : roll < 9 ? NAV_BEHAVIOR_FLEE
                                 : NAV_BEHAVIOR_IDLE;
        /* most share one of three targets; some have their own */
        if (i % 7 == 0)
            fx_random_point(m, &rng, a->target);
        else
            memcpy(a->target, shared[i % 3], sizeof a->target);
        a->has_target = true;
        a->target_vel[0] = 0.5f;
        a->has_target_vel = true;
    }
    /* one agent far off the mesh: answered in its own slot */
    w->in[5].pos[1] += 1000.0f;
    for (int k = 0; k < 4; k++) {
        fx_random_point(m, &rng, w->obs[k].pos);
        w->obs[k].radius = 0.5f;
        w->obs[k].vel[2] = 0.3f;
    }
}

START_TEST(threads_give_the_same_bytes) {
    fx_random_opts o = fx_random_defaults();
    o.width = 40;
    o.height = 40;
    o.walls = 1;
    nav_mesh *m = fx_random(31, &o);
    static world w1, wk;
    static nav_agent_out a[LN], b[LN];
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.05f;
    nav_query *q = nav_query_new(8192);
    const uint32_t counts[] = {2, 3, 5, 8};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        nav_steer *one = nav_steer_new(LN, 4), *many = nav_steer_new(LN, 4);
        world_init(&w1, m, 77);
        world_init(&wk, m, 77);
        for (int t = 0; t < 12; t++) {
            p.threads = 1;
            ck_assert_int_eq(nav_step(one, m, q, NULL, &p, w1.in, LN, w1.obs, 4, a, NULL), NAV_OK);
            p.threads = counts[c];
            ck_assert_int_eq(nav_step(many, m, q, NULL, &p, wk.in, LN, wk.obs, 4, b, NULL), NAV_OK);
            for (uint32_t i = 0; i < LN; i++)
                ck_assert_msg(memcmp(&a[i], &b[i], sizeof a[i]) == 0,
                              "%u threads, tick %d: agent %u differs", counts[c], t, i);
            for (uint32_t i = 0; i < LN; i++) {
                if (a[i].status != NAV_OK)
                    continue;
                memcpy(w1.in[i].pos, a[i].pos, sizeof a[i].pos);
                memcpy(w1.in[i].vel, a[i].vel, sizeof a[i].vel);
                memcpy(wk.in[i].pos, b[i].pos, sizeof b[i].pos);
                memcpy(wk.in[i].vel, b[i].vel, sizeof b[i].vel);
            }
        }
        ck_assert_int_eq(a[5].status, NAV_E_OFF_MESH);
        nav_steer_free(one);
        nav_steer_free(many);
    }
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

/* One scratch keeps its helper threads between steps: a step with fewer
   lanes than the last (fewer threads, or fewer agents) must leave the
   extra helpers out (their lanes hold the last step's state), and give
   the bytes of one thread. */
START_TEST(fewer_lanes_than_the_last_step) {
    fx_random_opts o = fx_random_defaults();
    o.width = 40;
    o.height = 40;
    o.walls = 1;
    nav_mesh *m = fx_random(33, &o);
    /* two crowds in turn, in other arrays and with other speeds (so other
       grid cells): a lane left from the last step reads the other crowd */
    static world w1[2], wk[2];
    static nav_agent_out a[LN], b[LN];
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.05f;
    nav_query *q = nav_query_new(8192);
    nav_steer *one = nav_steer_new(LN, 4), *many = nav_steer_new(LN, 4);
    for (int c = 0; c < 2; c++) {
        world_init(&w1[c], m, 91 + (uint32_t)c);
        world_init(&wk[c], m, 91 + (uint32_t)c);
        for (uint32_t i = 0; c == 1 && i < LN; i++)
            w1[c].in[i].max_speed = wk[c].in[i].max_speed *= 3.0f;
    }
    /* (threads, agents): 5 lanes, then 2 by threads, 2 by agents, 3, 5, 2 */
    const uint32_t plan[][2] = {{8, LN}, {2, LN}, {8, 300}, {3, LN}, {8, LN}, {2, 260}};
    for (size_t t = 0; t < sizeof plan / sizeof plan[0]; t++) {
        uint32_t n = plan[t][1];
        world *x1 = &w1[t & 1], *xk = &wk[t & 1];
        p.threads = 1;
        ck_assert_int_eq(nav_step(one, m, q, NULL, &p, x1->in, n, x1->obs, 4, a, NULL), NAV_OK);
        p.threads = plan[t][0];
        ck_assert_int_eq(nav_step(many, m, q, NULL, &p, xk->in, n, xk->obs, 4, b, NULL), NAV_OK);
        for (uint32_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(&a[i], &b[i], sizeof a[i]) == 0, "step %zu: agent %u differs", t,
                          i);
        for (uint32_t i = 0; i < n; i++) {
            if (a[i].status != NAV_OK)
                continue;
            memcpy(x1->in[i].pos, a[i].pos, sizeof a[i].pos);
            memcpy(xk->in[i].pos, b[i].pos, sizeof b[i].pos);
        }
    }
    nav_steer_free(one);
    nav_steer_free(many);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

START_TEST(threads_and_a_passed_deadline) {
    fx_random_opts o = fx_random_defaults();
    o.width = 40;
    o.height = 40;
    nav_mesh *m = fx_random(32, &o);
    static world w;
    static nav_agent_out out[LN];
    world_init(&w, m, 5);
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.threads = 4;
    p.deadline = 1e-9; /* long past */
    nav_query *q = nav_query_new(8192);
    nav_steer *s = nav_steer_new(LN, 4);
    ck_assert_int_eq(nav_step(s, m, q, NULL, &p, w.in, LN, w.obs, 4, out, NULL), NAV_E_DEADLINE);
    p.deadline = 0;
    ck_assert_int_eq(nav_step(s, m, q, NULL, &p, w.in, LN, w.obs, 4, out, NULL), NAV_OK);
    nav_steer_free(s);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

extern Suite *nav_lanes_suite(void);
Suite *nav_lanes_suite(void) {
    Suite *s = suite_create("nav_lanes");
    TCase *tc = tcase_create("lanes");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, threads_give_the_same_bytes);
    tcase_add_test(tc, threads_and_a_passed_deadline);
    tcase_add_test(tc, fewer_lanes_than_the_last_step);
    suite_add_tcase(s, tc);
    return s;
}
