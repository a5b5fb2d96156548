/*
 * check_nav_links: off-mesh links in the steering tick (issue 14): several
 * links crossed in one tick (nav_steer_params.traverse_links) and landing
 * spots moved off other agents (nav_steer_action.land).
 *
 * Meshes are built by hand; every expected point is derived in the test's
 * comment from the geometry and the rule of nav_steer.h (a walked segment
 * costs its xz length, a link its 3-D length, out of max_speed * dt).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_steer.h"
#include "tests/test_fixtures.h"

/*
 * Three ledges stepping down along +x, z in [0,4]:
 *   A [0,4] at y = 4, B [4,5] at y = 2, C [5,9] at y = 0 (polygons 0, 1, 2;
 *   no shared edges: their vertices differ in y);
 *   link 0, drop (3.8,4,2) -> (4.3,2,2), one-way, radius 0.5;
 *   link 1, drop (4.7,2,2) -> (5.2,0,2), one-way, radius 0.5.
 * Each drop is sqrt(0.5^2 + 2^2) = 2.0616 m long; B's landing (4.3) is
 * 0.4 m before the second drop's start (4.7).
 */
#define DROP 2.06155281f
static nav_mesh *ledges(void) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 4, 0);
    fx_quad(b, 4, 0, 5, 4, 2, 0);
    fx_quad(b, 5, 0, 9, 4, 0, 0);
    const float s0[3] = {3.8f, 4, 2}, e0[3] = {4.3f, 2, 2};
    const float s1[3] = {4.7f, 2, 2}, e1[3] = {5.2f, 0, 2};
    fx_link(b, s0, e0, 0.5f, 0, 0, "drop");
    fx_link(b, s1, e1, 0.5f, 0, 0, "drop");
    return fx_build(b);
}

/* Islands [0,4]x[0,4] and [10,14]x[0,4] at y = 0 joined by a one-way
   "jump" link (3.5,0,2) -> (10.5,0,2) of radius 0.5 (7 m long). */
static nav_mesh *islands(void) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, 0, 0);
    const float ls[3] = {3.5f, 0, 2}, le[3] = {10.5f, 0, 2};
    fx_link(b, ls, le, 0.5f, 0, 0, "jump");
    return fx_build(b);
}

static nav_agent_in agent(float x, float y, float z, float radius, float max_speed) {
    nav_agent_in a;
    memset(&a, 0, sizeof a);
    a.pos[0] = x;
    a.pos[1] = y;
    a.pos[2] = z;
    a.radius = radius;
    a.max_speed = max_speed;
    a.max_accel = 100.0f;
    a.behavior = NAV_BEHAVIOR_IDLE;
    return a;
}

static void seek(nav_agent_in *a, float x, float y, float z) {
    a->behavior = NAV_BEHAVIOR_SEEK;
    a->target[0] = x;
    a->target[1] = y;
    a->target[2] = z;
    a->has_target = true;
}

/* One nav_step with fresh scratch (nothing carried between calls). */
static void step(const nav_mesh *m, float dt, bool traverse, const nav_agent_in *in, uint32_t n,
                 nav_agent_out *out) {
    nav_steer *s = nav_steer_new(n, 1);
    nav_query *q = nav_query_new(4096);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(q);
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = dt;
    p.traverse_links = traverse;
    nav_step_error err;
    nav_status st = nav_step(s, m, q, NULL, &p, in, n, NULL, 0, out, &err);
    ck_assert_msg(st == NAV_OK, "nav_step: %s", err.message);
    nav_steer_free(s);
    nav_query_free(q);
}

static float dxz(const float *a, const float *b) {
    return hypotf(a[0] - b[0], a[2] - b[2]);
}

/* p is on polygon `poly` of m, at its surface height (flat quads: y). */
static void assert_on(const nav_mesh *m, const float *p, uint32_t poly, float y) {
    float ext[3] = {0.01f, 0.01f, 0.01f}, q[3];
    uint32_t got;
    ck_assert_msg(nav_mesh_nearest(m, p, ext, 0, &got, q) == NAV_OK, "(%g, %g, %g) is off the mesh",
                  p[0], p[1], p[2]);
    ck_assert_uint_eq(got, poly);
    ck_assert_float_eq_tol(p[1], y, 1e-4f);
}

/*
 * One tick crosses both drops. The seeker stands on A at (3,4,2) going to
 * (8,0,2) on C, max_speed 12, dt 0.5: 6 m of travel. It walks 0.8 m to the
 * first drop, drops (2.0616 m), walks 0.4 m on B, drops again (2.0616 m):
 * 5.3231 m, then walks the 0.6769 m left on C: it ends at x = 5.2 + 0.6769
 * = 5.8769, on C (y 0). Its action is the first drop (the animation that
 * starts this tick), links_taken 2; its velocity the walk after the last
 * landing, 0.6769 / 0.5 = 1.3538 m/s along +x.
 */
START_TEST(two_drops_in_one_tick) {
    nav_mesh *m = ledges();
    nav_agent_in in = agent(3, 4, 2, 0.3f, 12);
    seek(&in, 8, 0, 2);
    nav_agent_out out;
    step(m, 0.5f, true, &in, 1, &out);
    ck_assert_int_eq(out.status, NAV_OK);
    float left = 6.0f - 0.8f - DROP - 0.4f - DROP;
    ck_assert_float_eq_tol(out.pos[0], 5.2f + left, 1e-4f);
    ck_assert_float_eq_tol(out.pos[2], 2.0f, 1e-4f);
    assert_on(m, out.pos, 2, 0.0f);
    ck_assert_uint_eq(out.poly, 2);
    ck_assert(out.has_action);
    ck_assert_uint_eq(out.action.link, 0);
    ck_assert_str_eq(out.action.kind, "drop");
    ck_assert_float_eq_tol(out.action.start[0], 3.8f, 1e-5f);
    ck_assert_float_eq_tol(out.action.start[1], 4.0f, 1e-5f);
    ck_assert_float_eq_tol(out.action.end[0], 4.3f, 1e-5f);
    ck_assert_float_eq_tol(out.action.end[1], 2.0f, 1e-5f);
    ck_assert_uint_eq(out.action.nlinks, 2);
    ck_assert_float_eq_tol(out.vel[0], left / 0.5f, 1e-3f);
    ck_assert_float_eq_tol(out.vel[2], 0.0f, 1e-5f);
    /* where it ended is its landing (nobody there) */
    ck_assert_float_eq_tol(dxz(out.action.land, out.pos), 0.0f, 1e-6f);
    nav_mesh_free(m);
}
END_TEST

/*
 * A drop landing exactly on the next one's start: link 0 (3.8,4,2) ->
 * (4.5,2,2), link 1 (4.5,2,2) -> (5.2,0,2), each sqrt(0.7^2 + 2^2) =
 * 2.1190 m (the path holds (4.5,2,2) once). With traverse_links, from
 * (3,4,2) at 12 m/s for 0.5 s: 0.8 + 2.1190 + 2.1190 = 5.0380 m, then
 * 0.9620 m on C: x = 6.1620. Without it, an agent standing on (4.5,2,2) -
 * where the game lands it after the first drop - gets the second drop's
 * action at once and stays there.
 */
START_TEST(drop_onto_the_next_drop) {
    fx_builder *fb = fx_new();
    fx_quad(fb, 0, 0, 4, 4, 4, 0);
    fx_quad(fb, 4, 0, 5, 4, 2, 0);
    fx_quad(fb, 5, 0, 9, 4, 0, 0);
    const float s0[3] = {3.8f, 4, 2}, mid[3] = {4.5f, 2, 2}, e1[3] = {5.2f, 0, 2};
    fx_link(fb, s0, mid, 0.5f, 0, 0, "drop");
    fx_link(fb, mid, e1, 0.5f, 0, 0, "drop");
    nav_mesh *m = fx_build(fb);
    const float drop = sqrtf(0.49f + 4.0f);
    nav_agent_in in = agent(3, 4, 2, 0.3f, 12);
    seek(&in, 8, 0, 2);
    nav_agent_out out;
    step(m, 0.5f, true, &in, 1, &out);
    ck_assert(out.has_action);
    ck_assert_uint_eq(out.action.link, 0);
    ck_assert_uint_eq(out.action.nlinks, 2);
    ck_assert_float_eq_tol(out.pos[0], 5.2f + (6.0f - 0.8f - 2.0f * drop), 1e-4f);
    assert_on(m, out.pos, 2, 0.0f);
    nav_agent_in on = agent(4.5f, 2, 2, 0.3f, 12);
    seek(&on, 8, 0, 2);
    step(m, 0.5f, false, &on, 1, &out);
    ck_assert(out.has_action);
    ck_assert_uint_eq(out.action.link, 1);
    ck_assert_float_eq_tol(out.pos[0], 4.5f, 1e-4f);
    assert_on(m, out.pos, 1, 2.0f);
    nav_mesh_free(m);
}
END_TEST

/*
 * The same with dt 0.25: 3 m of travel. 0.8 + 2.0616 = 2.8616 m to B's
 * landing leaves 0.1384 m, short of the second drop 0.4 m on: only the first
 * is taken and the agent walks the rest toward the second, ending on B at
 * x = 4.3 + 0.1384 = 4.4384 (y 2), links_taken 1.
 */
START_TEST(budget_stops_before_second_drop) {
    nav_mesh *m = ledges();
    nav_agent_in in = agent(3, 4, 2, 0.3f, 12);
    seek(&in, 8, 0, 2);
    nav_agent_out out;
    step(m, 0.25f, true, &in, 1, &out);
    ck_assert_int_eq(out.status, NAV_OK);
    ck_assert_float_eq_tol(out.pos[0], 4.3f + (3.0f - 0.8f - DROP), 1e-4f);
    assert_on(m, out.pos, 1, 2.0f);
    ck_assert(out.has_action);
    ck_assert_uint_eq(out.action.link, 0);
    ck_assert_uint_eq(out.action.nlinks, 1);
    nav_mesh_free(m);
}
END_TEST

/*
 * Without traverse_links nothing moves across (the game performs the link):
 * the same request leaves the agent on A, within the first drop's radius of
 * its start, with the action, one link, and `land` the drop's end.
 */
START_TEST(default_waits_at_the_link) {
    nav_mesh *m = ledges();
    nav_agent_in in = agent(3.5f, 4, 2, 0.3f, 12);
    seek(&in, 8, 0, 2);
    nav_agent_out out;
    step(m, 0.5f, false, &in, 1, &out);
    ck_assert(out.has_action);
    ck_assert_uint_eq(out.action.link, 0);
    ck_assert_uint_eq(out.action.nlinks, 1);
    const float s0[3] = {3.8f, 4, 2}, e0[3] = {4.3f, 2, 2};
    ck_assert(dxz(out.pos, s0) <= 0.5f + 1e-4f);
    ck_assert_float_eq_tol(out.pos[1], 4.0f, 1e-4f);
    for (int k = 0; k < 3; k++)
        ck_assert_float_eq_tol(out.action.land[k], e0[k], 1e-6f);
    nav_mesh_free(m);
}
END_TEST

/*
 * Closed loop from (1,4,2) to (8,0,2) at 3.5 m/s, dt 0.05, feeding back
 * position and velocity: every tick's position is on one of the three
 * ledges at its height; a tick without a link moves at most
 * max_speed * dt; the agent ends arrived on C within 5 cm of the target,
 * having been given exactly two actions (links 0 then 1).
 */
START_TEST(closed_loop_down_the_ledges) {
    nav_mesh *m = ledges();
    nav_agent_in in = agent(1, 4, 2, 0.3f, 3.5f);
    seek(&in, 8, 0, 2);
    in.behavior = NAV_BEHAVIOR_ARRIVE;
    nav_agent_out out;
    uint32_t actions[4], nact = 0;
    bool arrived = false;
    for (int t = 0; t < 400 && !arrived; t++) {
        float before[3];
        memcpy(before, in.pos, sizeof before);
        step(m, 0.05f, true, &in, 1, &out);
        ck_assert_int_eq(out.status, NAV_OK);
        float y = out.pos[0] <= 4.0f ? 4.0f : (out.pos[0] <= 5.0f ? 2.0f : 0.0f);
        assert_on(m, out.pos, y == 4.0f ? 0 : (y == 2.0f ? 1 : 2), y);
        if (out.has_action) {
            ck_assert_uint_lt(nact, 4);
            actions[nact++] = out.action.link;
        } else {
            ck_assert_msg(dxz(before, out.pos) <= 3.5f * 0.05f + 1e-4f, "tick %d moved %g m", t,
                          dxz(before, out.pos));
        }
        memcpy(in.pos, out.pos, sizeof in.pos);
        memcpy(in.vel, out.vel, sizeof in.vel);
        arrived = out.arrived;
    }
    ck_assert(arrived);
    const float goal[3] = {8, 0, 2};
    ck_assert(dxz(out.pos, goal) <= 0.05f + 1e-4f);
    ck_assert_uint_eq(nact, 2);
    ck_assert_uint_eq(actions[0], 0);
    ck_assert_uint_eq(actions[1], 1);
    nav_mesh_free(m);
}
END_TEST

/*
 * A jumper lands on an agent that cannot move. A (radius 0.3) stands at
 * (3.3,0,2), 0.2 m from the jump's start (within its radius), going to
 * (12,0,2); B (radius 0.3, max_speed 0: never pushed) stands at
 * (10.6,0,2.1), 0.1414 m from the jump's end. The nearest free point to the
 * end is straight out of B's 0.6 m disc toward the end: B + 0.6 (-1,-1)/√2
 * = (10.1757, 1.6757), 0.4586 m from the end (within the 0.6 m bound), on
 * the east island. With traverse_links A ends there; without, it waits at
 * the start and `land` says the same point. Earlier builds landed it on the
 * end, 0.1414 m from B: 0.4586 m of overlap.
 */
START_TEST(landing_moves_off_an_occupant) {
    nav_mesh *m = islands();
    nav_agent_in in[2] = {agent(3.3f, 0, 2, 0.3f, 2), agent(10.6f, 0, 2.1f, 0.3f, 0)};
    seek(&in[0], 12, 0, 2);
    const float want[3] = {10.6f - 0.6f / sqrtf(2.0f), 0, 2.1f - 0.6f / sqrtf(2.0f)};
    for (int traverse = 0; traverse < 2; traverse++) {
        nav_agent_out out[2];
        step(m, 0.05f, traverse, in, 2, out);
        ck_assert(out[0].has_action);
        ck_assert_float_eq_tol(out[0].action.end[0], 10.5f, 1e-5f);
        ck_assert_float_eq_tol(out[0].action.land[0], want[0], 1e-3f);
        ck_assert_float_eq_tol(out[0].action.land[2], want[2], 1e-3f);
        ck_assert(dxz(out[0].action.land, out[1].pos) >= 0.6f - 0.05f);
        assert_on(m, out[0].action.land, 1, 0.0f);
        /* B never moves */
        ck_assert_float_eq_tol(out[1].pos[0], 10.6f, 1e-6f);
        ck_assert_float_eq_tol(out[1].pos[2], 2.1f, 1e-6f);
        if (traverse) {
            ck_assert_float_eq_tol(dxz(out[0].pos, want), 0.0f, 1e-3f);
            ck_assert_uint_eq(out[0].poly, 1);
        } else {
            ck_assert(out[0].pos[0] <= 4.0f);
        }
    }
    nav_mesh_free(m);
}
END_TEST

/*
 * Two jumpers land in the same tick, nobody else there: A1 at (3.3,0,2)
 * lands on the end (10.5,0,2); A2 at (3.3,0,1.6) (0.447 m from the start,
 * within its radius) is placed after A1 (index order) and finds the end
 * taken: the nearest free point is out of A1's 0.6 m disc along +x (the
 * end is A1's centre), (11.1,0,2). No two agents overlap by more than 5 cm.
 */
START_TEST(two_jumpers_share_the_landing) {
    nav_mesh *m = islands();
    nav_agent_in in[2] = {agent(3.3f, 0, 2, 0.3f, 2), agent(3.3f, 0, 1.6f, 0.3f, 2)};
    seek(&in[0], 12, 0, 2);
    seek(&in[1], 12, 0, 2);
    nav_agent_out out[2];
    step(m, 0.05f, true, in, 2, out);
    ck_assert(out[0].has_action && out[1].has_action);
    ck_assert_float_eq_tol(out[0].pos[0], 10.5f, 1e-4f);
    ck_assert_float_eq_tol(out[0].pos[2], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(out[1].pos[0], 11.1f, 1e-3f);
    ck_assert_float_eq_tol(out[1].pos[2], 2.0f, 1e-3f);
    ck_assert(dxz(out[0].pos, out[1].pos) >= 0.6f - 0.05f);
    assert_on(m, out[1].pos, 1, 0.0f);
    nav_mesh_free(m);
}
END_TEST

/*
 * No free point within the bound. West [0,4]x[0,4], east [10,16]x[-2,6],
 * jump (3.5,0,2) -> (12.5,0,2). On the end stands B (radius 1, max_speed
 * 0), and six more like it ring it 1.5 m away every 60 degrees. The search
 * bound is 0.3 + 1 m: every point that near the end is inside B's 1.3 m disc
 * or, on its rim, within 0.75 m of a ring agent (30 degrees from the
 * nearest). The jumper lands on the end as before (nothing better exists),
 * on the mesh.
 */
START_TEST(landing_without_room_keeps_the_end) {
    fx_builder *fb = fx_new();
    fx_quad(fb, 0, 0, 4, 4, 0, 0);
    fx_quad(fb, 10, -2, 16, 6, 0, 0);
    const float ls[3] = {3.5f, 0, 2}, le[3] = {12.5f, 0, 2};
    fx_link(fb, ls, le, 0.5f, 0, 0, "jump");
    nav_mesh *m = fx_build(fb);
    nav_agent_in in[8];
    in[0] = agent(3.3f, 0, 2, 0.3f, 2);
    seek(&in[0], 13, 0, 2);
    in[1] = agent(12.5f, 0, 2, 1, 0);
    for (int k = 0; k < 6; k++) {
        float ang = (float)k * 1.04719755f;
        in[2 + k] = agent(12.5f + 1.5f * cosf(ang), 0, 2 + 1.5f * sinf(ang), 1, 0);
    }
    nav_agent_out out[8];
    step(m, 0.05f, true, in, 8, out);
    for (int k = 0; k < 8; k++)
        ck_assert_int_eq(out[k].status, NAV_OK);
    ck_assert(out[0].has_action);
    ck_assert_float_eq_tol(out[0].pos[0], 12.5f, 1e-4f);
    ck_assert_float_eq_tol(out[0].pos[2], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(out[0].action.land[0], 12.5f, 1e-4f);
    assert_on(m, out[0].pos, 1, 0.0f);
    nav_mesh_free(m);
}
END_TEST

/* The same request twice, fresh scratch each time: the same bytes, for the
   crossing, the landing and an agent walking beside them. */
START_TEST(crossing_is_deterministic) {
    nav_mesh *m = ledges();
    nav_agent_in in[3] = {agent(3, 4, 2, 0.3f, 12), agent(5.8f, 0, 2.1f, 0.3f, 0),
                          agent(6, 0, 1, 0.3f, 3)};
    seek(&in[0], 8, 0, 2);
    seek(&in[2], 8, 0, 3);
    nav_agent_out a[3], b[3];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    step(m, 0.5f, true, in, 3, a);
    step(m, 0.5f, true, in, 3, b);
    ck_assert(a[0].has_action);
    ck_assert_uint_eq(a[0].action.nlinks, 2);
    /* the occupant at (5.8, 2.1) moved the landing off it */
    ck_assert(dxz(a[0].pos, a[1].pos) >= 0.6f - 0.05f);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
    nav_mesh_free(m);
}
END_TEST

/*
 * Crossing under the step's other machinery: the ledges widened to z in
 * [0,40] with a pair of drops every 4 m (z = 2, 6, ..., 38), 512 agents on
 * A (a 16 x 32 grid, 0.2 m radius) sent to four targets on C (shared goal
 * trees), 6 closed-loop ticks of 0.25 s at 12 m/s with traverse_links.
 * The same bytes with 1 thread and no cache, 4 threads and no cache, and 1
 * thread with a warm cache; and agents do cross (some take two drops).
 */
#define WN 512
START_TEST(crossing_same_bytes_threads_and_cache) {
    fx_builder *fb = fx_new();
    fx_quad(fb, 0, 0, 4, 40, 4, 0);
    fx_quad(fb, 4, 0, 5, 40, 2, 0);
    fx_quad(fb, 5, 0, 9, 40, 0, 0);
    for (int k = 0; k < 10; k++) {
        float z = 2.0f + 4.0f * (float)k;
        const float s0[3] = {3.8f, 4, z}, e0[3] = {4.3f, 2, z};
        const float s1[3] = {4.7f, 2, z}, e1[3] = {5.2f, 0, z};
        fx_link(fb, s0, e0, 0.5f, 0, 0, "drop");
        fx_link(fb, s1, e1, 0.5f, 0, 0, "drop");
    }
    nav_mesh *m = fx_build(fb);
    static nav_agent_in in[3][WN];
    static nav_agent_out out[3][WN];
    for (uint32_t i = 0; i < WN; i++) {
        in[0][i] =
            agent(0.2f + 0.22f * (float)(i % 16), 4, 0.3f + 1.2f * (float)(i / 16), 0.2f, 12);
        seek(&in[0][i], 8, 0, 5.0f + 10.0f * (float)(i % 4));
    }
    memcpy(in[1], in[0], sizeof in[0]);
    memcpy(in[2], in[0], sizeof in[0]);
    nav_query *q = nav_query_new(8192);
    nav_cache *cache = nav_cache_new(1u << 24, 4);
    nav_steer *st[3] = {nav_steer_new(WN, 1), nav_steer_new(WN, 1), nav_steer_new(WN, 1)};
    ck_assert_ptr_nonnull(cache);
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.25f;
    p.traverse_links = true;
    uint32_t crossed = 0, twice = 0;
    for (int t = 0; t < 6; t++) {
        for (int r = 0; r < 3; r++) {
            p.threads = r == 1 ? 4 : 1;
            ck_assert_int_eq(
                nav_step(st[r], m, q, r == 2 ? cache : NULL, &p, in[r], WN, NULL, 0, out[r], NULL),
                NAV_OK);
        }
        for (uint32_t i = 0; i < WN; i++) {
            ck_assert_msg(memcmp(&out[0][i], &out[1][i], sizeof out[0][i]) == 0,
                          "4 threads, tick %d: agent %u differs", t, i);
            ck_assert_msg(memcmp(&out[0][i], &out[2][i], sizeof out[0][i]) == 0,
                          "cache, tick %d: agent %u differs", t, i);
            crossed += out[0][i].has_action;
            twice += out[0][i].has_action && out[0][i].action.nlinks == 2;
            for (int r = 0; r < 3; r++) {
                memcpy(in[r][i].pos, out[r][i].pos, sizeof in[r][i].pos);
                memcpy(in[r][i].vel, out[r][i].vel, sizeof in[r][i].vel);
            }
        }
    }
    ck_assert_uint_gt(crossed, 0);
    ck_assert_uint_gt(twice, 0);
    for (int r = 0; r < 3; r++)
        nav_steer_free(st[r]);
    nav_cache_free(cache);
    nav_query_free(q);
    nav_mesh_free(m);
}
END_TEST

extern Suite *nav_links_suite(void);
Suite *nav_links_suite(void) {
    Suite *s = suite_create("nav_links");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, two_drops_in_one_tick);
    tcase_add_test(tc, budget_stops_before_second_drop);
    tcase_add_test(tc, drop_onto_the_next_drop);
    tcase_add_test(tc, default_waits_at_the_link);
    tcase_add_test(tc, closed_loop_down_the_ledges);
    tcase_add_test(tc, landing_moves_off_an_occupant);
    tcase_add_test(tc, two_jumpers_share_the_landing);
    tcase_add_test(tc, landing_without_room_keeps_the_end);
    tcase_add_test(tc, crossing_is_deterministic);
    tcase_add_test(tc, crossing_same_bytes_threads_and_cache);
    suite_add_tcase(s, tc);
    return s;
}
