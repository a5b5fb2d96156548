/*
 * check_nav_vol_steer: steering in a flight volume (nav_vol_step) by closed
 * loops: an arriving agent goes round a closed box and arrives, a fleeing
 * one gains distance, wander and idle stay in free space (idle brakes to
 * rest), two agents head-on pass each other without overlapping; every
 * position of every tick is free, every move keeps the volume's radius from
 * the level's triangles (exact distance, tests/test_volref.c) and no speed
 * exceeds max_speed. Also: hide is refused, an agent with no free space
 * near fails in its own slot.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_vol.h"
#include "tests/test_volref.h"
#include "tests/test_volworld.h"

/* Declared for -Wmissing-prototypes; "extern" keeps it out of suite discovery. */
extern Suite *nav_vol_steer_suite(void);

static float len3f(const float *a) {
    return sqrtf(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

static nav_vol *bake_world(const vw_world *w, float vs, float r) {
    nav_vol_settings s = {.voxel_size = vs, .radius = r};
    memcpy(s.bmin, w->bmin, sizeof s.bmin);
    memcpy(s.bmax, w->bmax, sizeof s.bmax);
    nav_vol *v = NULL;
    nav_error err = {0};
    nav_status st = nav_vol_bake(w->v, w->nv, w->t, w->nt, &s, NULL, NULL, &v, &err);
    ck_assert_msg(st == NAV_OK, "bake: %s", err.message);
    return v;
}

typedef struct sim {
    nav_agent_in in[4];
    nav_vol_agent_out out[4];
} sim;

/* Steps n agents for ticks; checks every position is free and keeps the radius from the
   triangles; returns the smallest distance between agents 0 and 1 seen (n >= 2), else 0. */
static double run_sim(const nav_vol *v, const vw_world *w, nav_vol_query *q, sim *s, uint32_t n,
                      int ticks, float r_vol) {
    nav_vol_steer_params p;
    nav_vol_steer_params_default(&p);
    double closest = INFINITY;
    for (int t = 0; t < ticks; t++) {
        nav_step_error err;
        ck_assert_int_eq(nav_vol_step(v, q, &p, s->in, n, NULL, 0, s->out, &err), NAV_OK);
        for (uint32_t i = 0; i < n; i++) {
            ck_assert_int_eq(s->out[i].status, NAV_OK);
            ck_assert(nav_vol_point_free(v, s->out[i].pos));
            /* the move itself stays in free space too */
            ck_assert(vr_seg_world_dist(w, s->out[i].from, s->out[i].pos) >= r_vol - 1e-4);
            float sp = len3f(s->out[i].vel);
            ck_assert(sp <= s->in[i].max_speed * 1.0001f + 1e-4f);
            memcpy(s->in[i].pos, s->out[i].pos, sizeof s->in[i].pos);
            memcpy(s->in[i].vel, s->out[i].vel, sizeof s->in[i].vel);
        }
        if (n >= 2) {
            double d = vr_dist(s->in[0].pos, s->in[1].pos);
            closest = fmin(closest, d);
        }
    }
    return n >= 2 ? closest : 0;
}

START_TEST(test_steer_arrive_around_box) {
    vw_world w;
    vw_make(W_CLOSED, &w);
    nav_vol *v = bake_world(&w, 0.5f, 0.25f);
    nav_vol_query *q;
    ck_assert_int_eq(nav_vol_query_new(1u << 16, &q), NAV_OK);
    sim *s = calloc(1, sizeof *s);
    nav_agent_in *a = &s->in[0];
    *a = (nav_agent_in){.id = "bird",
                        .pos = {2, 8, 8},
                        .radius = 0.25f,
                        .max_speed = 4,
                        .max_accel = 10,
                        .behavior = NAV_BEHAVIOR_ARRIVE,
                        .target = {14, 8, 8},
                        .has_target = true,
                        .arrive_radius = 1};
    run_sim(v, &w, q, s, 1, 400, 0.25f); /* 20 s: the way round the box is about 14 m */
    ck_assert_msg(s->out[0].arrived, "not arrived: at (%g %g %g)", (double)s->out[0].pos[0],
                  (double)s->out[0].pos[1], (double)s->out[0].pos[2]);
    ck_assert_uint_ge(s->out[0].ncorners, 2);
    /* flee: the distance to the threat grows and stays in free space */
    *a = (nav_agent_in){.id = "bird",
                        .pos = {2, 8, 8},
                        .radius = 0.25f,
                        .max_speed = 4,
                        .max_accel = 10,
                        .behavior = NAV_BEHAVIOR_FLEE,
                        .threat = {3, 8, 8},
                        .has_threat = true};
    run_sim(v, &w, q, s, 1, 40, 0.25f);
    static const float threat[3] = {3, 8, 8};
    ck_assert(vr_dist(s->in[0].pos, threat) > 2.5);
    /* wander and idle stay in free space; idle brakes to rest */
    *a = (nav_agent_in){.id = "w",
                        .pos = {2, 8, 8},
                        .radius = 0.25f,
                        .max_speed = 4,
                        .max_accel = 10,
                        .behavior = NAV_BEHAVIOR_WANDER};
    run_sim(v, &w, q, s, 1, 200, 0.25f);
    *a = (nav_agent_in){.id = "i",
                        .pos = {2, 8, 8},
                        .vel = {2, 0, 0},
                        .radius = 0.25f,
                        .max_speed = 4,
                        .max_accel = 10,
                        .behavior = NAV_BEHAVIOR_IDLE};
    run_sim(v, &w, q, s, 1, 20, 0.25f);
    ck_assert(len3f(s->out[0].vel) < 1e-4f);
    /* hide is refused; a position with no free space near fails its own slot only */
    nav_vol_steer_params p;
    nav_vol_steer_params_default(&p);
    nav_step_error err;
    a->behavior = NAV_BEHAVIOR_HIDE;
    ck_assert_int_eq(nav_vol_step(v, q, &p, s->in, 1, NULL, 0, s->out, &err), NAV_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(err.message, "hide"));
    a->behavior = NAV_BEHAVIOR_IDLE;
    s->in[1] = *a;
    s->in[1].pos[0] = 40;
    ck_assert_int_eq(nav_vol_step(v, q, &p, s->in, 2, NULL, 0, s->out, &err), NAV_OK);
    ck_assert_int_eq(s->out[0].status, NAV_OK);
    ck_assert_int_eq(s->out[1].status, NAV_E_OFF_MESH);
    free(s);
    nav_vol_query_free(q);
    nav_vol_free(v);
    vw_free(&w);
}
END_TEST

START_TEST(test_steer_head_on_avoidance) {
    vw_world w;
    vw_init(&w, 0, 0, 0, 24, 12, 12);
    vw_quad(&w, 1, 0, 0, 0, 24, 12); /* a floor only */
    nav_vol *v = bake_world(&w, 0.5f, 0.25f);
    nav_vol_query *q;
    ck_assert_int_eq(nav_vol_query_new(1u << 16, &q), NAV_OK);
    sim *s = calloc(1, sizeof *s);
    s->in[0] = (nav_agent_in){.id = "a",
                              .pos = {2, 6, 6},
                              .radius = 0.5f,
                              .max_speed = 3,
                              .max_accel = 8,
                              .behavior = NAV_BEHAVIOR_SEEK,
                              .target = {22, 6, 6},
                              .has_target = true};
    s->in[1] = (nav_agent_in){.id = "b",
                              .pos = {22, 6, 6},
                              .radius = 0.5f,
                              .max_speed = 3,
                              .max_accel = 8,
                              .behavior = NAV_BEHAVIOR_SEEK,
                              .target = {2, 6, 6},
                              .has_target = true};
    double closest = run_sim(v, &w, q, s, 2, 200, 0.25f);
    ck_assert_msg(closest >= 1.0 - 0.05, "agents came %g apart (radii sum 1)", closest);
    /* both got past each other */
    ck_assert_msg(s->in[0].pos[0] > 15 && s->in[1].pos[0] < 9, "a at (%g %g %g), b at (%g %g %g)",
                  (double)s->in[0].pos[0], (double)s->in[0].pos[1], (double)s->in[0].pos[2],
                  (double)s->in[1].pos[0], (double)s->in[1].pos[1], (double)s->in[1].pos[2]);
    free(s);
    nav_vol_query_free(q);
    nav_vol_free(v);
    vw_free(&w);
}
END_TEST

Suite *nav_vol_steer_suite(void) {
    Suite *s = suite_create("nav_vol_steer");
    TCase *tc = tcase_create("closed_loop");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_steer_arrive_around_box);
    tcase_add_test(tc, test_steer_head_on_avoidance);
    suite_add_tcase(s, tc);
    return s;
}
