/*
 * check_nav_steer: the steering tick (nav_step) and the surface move
 * (nav_move_along_surface).
 *
 * The closed-loop tests play the game server: each tick they feed the
 * returned position and velocity back as the next input, and check
 * properties along the whole run (never off the mesh, no overlap, no
 * oscillation, progress) against references computed independently here
 * (pairwise distances, nav_mesh_nearest, nav_find_path lengths). Expected
 * points of the unit cases are derived by hand in the comments.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_steer.h"
#include "nav/nav_steer_internal.h"
#include "tests/test_fixtures.h"

#define DT 0.05f

/* A corridor [0, len] x [0, width] of 2 m square cells at y = 0. */
static nav_mesh *corridor(int len, int width) {
    fx_builder *b = fx_new();
    for (int x = 0; x < len; x += 2)
        for (int z = 0; z < width; z += 2)
            fx_quad(b, (float)x, (float)z, (float)x + 2, (float)z + 2, 0, 0);
    return fx_build(b);
}

typedef struct sim {
    const nav_mesh *m;
    nav_steer *s;
    nav_query *q;
    nav_steer_params p;
    nav_agent_in *in;
    nav_agent_out *out;
    nav_obstacle *obs;
    nav_cache *cache; /* borrowed, may be NULL */
    uint32_t n, nobs;
} sim;

static void sim_init(sim *w, const nav_mesh *m, uint32_t n, uint32_t nobs) {
    memset(w, 0, sizeof *w);
    w->m = m;
    w->n = n;
    w->nobs = nobs;
    w->s = nav_steer_new(n, nobs > 0 ? nobs : 1);
    w->q = nav_query_new(4096);
    ck_assert_ptr_nonnull(w->s);
    ck_assert_ptr_nonnull(w->q);
    nav_steer_params_default(&w->p);
    w->p.dt = DT;
    w->in = calloc(n, sizeof *w->in);
    w->out = calloc(n, sizeof *w->out);
    w->obs = calloc(nobs > 0 ? nobs : 1, sizeof *w->obs);
}

static void sim_free(sim *w) {
    nav_steer_free(w->s);
    nav_query_free(w->q);
    free(w->in);
    free(w->out);
    free(w->obs);
}

static nav_agent_in agent_at(float x, float z, nav_behavior b) {
    nav_agent_in a;
    memset(&a, 0, sizeof a);
    a.pos[0] = x;
    a.pos[2] = z;
    a.radius = 0.3f;
    a.max_speed = 2.0f;
    a.max_accel = 8.0f;
    a.behavior = b;
    a.arrive_radius = 1.0f;
    return a;
}

static void set_target(nav_agent_in *a, float x, float z) {
    a->target[0] = x;
    a->target[1] = 0;
    a->target[2] = z;
    a->has_target = true;
}

/* One tick, then the game feeds back position and velocity. */
static void sim_tick(sim *w) {
    nav_step_error err;
    nav_status st =
        nav_step(w->s, w->m, w->q, w->cache, &w->p, w->in, w->n, w->obs, w->nobs, w->out, &err);
    ck_assert_msg(st == NAV_OK, "nav_step: %s", err.message);
    for (uint32_t i = 0; i < w->n; i++) {
        if (w->out[i].status != NAV_OK)
            continue;
        memcpy(w->in[i].pos, w->out[i].pos, sizeof w->in[i].pos);
        memcpy(w->in[i].vel, w->out[i].vel, sizeof w->in[i].vel);
    }
    for (uint32_t k = 0; k < w->nobs; k++)
        for (int c = 0; c < 3; c++)
            w->obs[k].pos[c] += w->obs[k].vel[c] * w->p.dt;
}

static float dxz(const float *a, const float *b) {
    return hypotf(a[0] - b[0], a[2] - b[2]);
}

/* Distance from p to the mesh (0 when on it), by the mesh's own nearest. */
static float off_mesh_dist(const nav_mesh *m, const float *p) {
    float ext[3] = {5, 5, 5}, q[3];
    uint32_t poly;
    if (nav_mesh_nearest(m, p, ext, 0, &poly, q) != NAV_OK)
        return INFINITY;
    return dxz(p, q);
}

/* An agent within 1 mm (xz) of a mesh vertex stands on it: the step drops a
   corner that close (CORNER_EPS in nav_steer_agent.c) and steers at the next
   one, which a raycast from the agent's own position may then graze at that
   vertex. So the corner must be in sight from the vertex itself. Returns how
   far before `to` the sight from such a vertex is cut (INFINITY when the
   agent stands on no vertex). Brute force over the vertices: test meshes. */
static float sight_from_vertex_at(const nav_mesh *m, const float *at, const float *to,
                                  uint32_t *buf, uint32_t nbuf) {
    for (uint32_t v = 0; v < m->nverts; v++) {
        const float *p = &m->verts[3 * (size_t)v];
        if (dxz(p, at) >= 1e-3f || fabsf(p[1] - at[1]) > 0.5f)
            continue;
        float ext[3] = {0.01f, 0.5f, 0.01f}, sn[3];
        uint32_t sp;
        if (nav_mesh_nearest(m, p, ext, 0, &sp, sn) != NAV_OK)
            continue;
        nav_raycast_result rc;
        memset(&rc, 0, sizeof rc);
        rc.polys = buf;
        rc.max_polys = nbuf;
        if (nav_raycast(m, sp, sn, to, NULL, &rc) != NAV_OK)
            continue;
        return rc.hit ? (1.0f - rc.t) * dxz(sn, to) : 0;
    }
    return INFINITY;
}

/* ---- nav_move_along_surface, by hand ---- */

START_TEST(move_inside_and_across_portals) {
    /* corridor [0,10] x [0,2] of 2 m cells: polygons 0..4 along x */
    nav_mesh *m = corridor(10, 2);
    float s[3] = {1, 0, 1}, t[3] = {7.5f, 0, 1.5f}, out[3];
    uint32_t poly;
    /* the target is inside the mesh and the segment is clear: reached exactly,
       in the cell [6,8] x [0,2] */
    ck_assert_int_eq(nav_move_along_surface(m, 0, s, t, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 7.5f, 1e-6f);
    ck_assert_float_eq_tol(out[2], 1.5f, 1e-6f);
    ck_assert_float_eq_tol(out[1], 0.0f, 1e-6f);
    ck_assert(nav_mesh_poly_contains_xz(m, poly, 7.5f, 1.5f));
    nav_mesh_free(m);
}
END_TEST

START_TEST(move_slides_along_wall) {
    nav_mesh *m = corridor(10, 2);
    float out[3];
    uint32_t poly;
    /* From (5, 1) toward (6, 3): the wall z = 2 blocks; the closest point of
       the corridor to (6, 3) is its projection on the wall, (6, 2): the
       motion (1, 2) keeps its along-wall part (1, 0) and loses the rest
       beyond the wall. */
    float s[3] = {5, 0, 1}, t[3] = {6, 0, 3};
    ck_assert_int_eq(nav_move_along_surface(m, 2, s, t, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 6.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 2.0f, 1e-5f);
    /* Toward (12, 0, 3), past the corridor's end corner (10, 2): the corner is
       the closest point (both walls x = 10 and z = 2 block). */
    float t2[3] = {12, 0, 3};
    ck_assert_int_eq(nav_move_along_surface(m, 2, s, t2, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 10.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 2.0f, 1e-5f);
    ck_assert_uint_eq(poly, 4);
    /* Straight into the wall z = 0 from (3, 0.5) to (3, -1): stops at (3, 0). */
    float s3[3] = {3, 0, 0.5f}, t3[3] = {3, 0, -1};
    ck_assert_int_eq(nav_move_along_surface(m, 1, s3, t3, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 3.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 0.0f, 1e-5f);
    nav_mesh_free(m);
}
END_TEST

START_TEST(move_around_l_corner_clamps) {
    /* L corridor: [0,10]x[0,2] then [8,10]x[2,10]. From (1,1) toward (12,1):
       the end wall x = 10 stops the motion at (10, 1). From (9,5) toward
       (5,5) (west, into the wall x = 8 of the vertical leg): (8, 5). */
    nav_mesh *m = fx_l_corridor();
    float out[3], ext[3] = {1, 1, 1};
    uint32_t poly, sp;
    float s[3] = {1, 0, 1}, t[3] = {12, 0, 1}, sn[3];
    ck_assert_int_eq(nav_mesh_nearest(m, s, ext, 0, &sp, sn), NAV_OK);
    ck_assert_int_eq(nav_move_along_surface(m, sp, s, t, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 10.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 1.0f, 1e-5f);
    float s2[3] = {9, 0, 5}, t2[3] = {5, 0, 5};
    ck_assert_int_eq(nav_mesh_nearest(m, s2, ext, 0, &sp, sn), NAV_OK);
    ck_assert_int_eq(nav_move_along_surface(m, sp, s2, t2, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 8.0f, 1e-5f);
    ck_assert_float_eq_tol(out[2], 5.0f, 1e-5f);
    nav_mesh_free(m);
}
END_TEST

START_TEST(move_follows_ramp_height) {
    /* fx_bridge: the west ramp [5,10]x[4,6] rises from y = 0 at x = 5 to
       y = 5 at x = 10, so at x = 8 the height is 5 * (8 - 5) / 5 = 3. */
    nav_mesh *m = fx_bridge();
    float s[3] = {6, 1, 5}, t[3] = {8, 0, 5}, out[3], ext[3] = {0.5f, 2, 0.5f}, sn[3];
    uint32_t sp, poly;
    ck_assert_int_eq(nav_mesh_nearest(m, s, ext, 0, &sp, sn), NAV_OK);
    ck_assert_int_eq(nav_move_along_surface(m, sp, sn, t, NULL, out, &poly), NAV_OK);
    ck_assert_float_eq_tol(out[0], 8.0f, 1e-5f);
    ck_assert_float_eq_tol(out[1], 3.0f, 1e-4f);
    nav_mesh_free(m);
}
END_TEST

START_TEST(move_rejects_bad_input) {
    nav_mesh *m = corridor(4, 2);
    float s[3] = {1, 0, 1}, t[3] = {NAN, 0, 1}, out[3];
    uint32_t poly;
    ck_assert_int_eq(nav_move_along_surface(m, 0, s, t, NULL, out, &poly), NAV_E_INVALID_ARG);
    ck_assert_uint_eq(poly, NAV_NONE);
    ck_assert_int_eq(nav_move_along_surface(m, 99, s, s, NULL, out, &poly), NAV_E_INVALID_ARG);
    ck_assert_int_eq(nav_move_along_surface(NULL, 0, s, s, NULL, out, &poly), NAV_E_INVALID_ARG);
    nav_mesh_free(m);
}
END_TEST

/* Property: on random meshes the move ends on the mesh, never farther from
   the target than the start, and exactly at the target when a raycast (an
   independent walk) says the straight segment is clear. */
START_TEST(move_property_random_meshes) {
    for (uint32_t seed = 1; seed <= 6; seed++) {
        fx_random_opts o = fx_random_defaults();
        nav_mesh *m = fx_random(seed, &o);
        uint32_t rng = seed * 7919u;
        float bmin[3], bmax[3];
        nav_mesh_bounds(m, bmin, bmax);
        uint32_t pbuf[256];
        for (int k = 0; k < 150; k++) {
            uint32_t p = fx_rand(&rng) % nav_mesh_polygon_count(m);
            const float *c = &m->poly_centroid[3 * p];
            float t[3] = {c[0] + (fx_randf(&rng) - 0.5f) * 8, c[1],
                          c[2] + (fx_randf(&rng) - 0.5f) * 8};
            float out[3];
            uint32_t op;
            ck_assert_int_eq(nav_move_along_surface(m, p, c, t, NULL, out, &op), NAV_OK);
            ck_assert(nav_mesh_poly_contains_xz(m, op, out[0], out[2]) ||
                      off_mesh_dist(m, out) < 1e-4f);
            ck_assert(dxz(out, t) <= dxz(c, t) + 1e-4f);
            nav_raycast_result rc;
            memset(&rc, 0, sizeof rc);
            rc.polys = pbuf;
            rc.max_polys = 256;
            if (nav_raycast(m, p, c, t, NULL, &rc) == NAV_OK && !rc.hit && rc.t >= 1.0f)
                ck_assert_msg(dxz(out, t) < 1e-3f, "clear ray but move stopped %g short",
                              (double)dxz(out, t));
        }
        nav_mesh_free(m);
    }
}
END_TEST

/* Property: the thin-box-first snap equals nav_mesh_nearest (the brute
   reference: the full box) for random points on random meshes, including
   ones with a bridge over a floor and points off the mesh. */
START_TEST(snap_equals_nearest) {
    for (uint32_t seed = 21; seed <= 24; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.bridge = seed & 1;
        o.triangulate = 1;
        nav_mesh *m = fx_random(seed, &o);
        float bmin[3], bmax[3];
        nav_mesh_bounds(m, bmin, bmax);
        uint32_t rng = seed * 40503u;
        float ext[3] = {2, 4, 2};
        for (int k = 0; k < 400; k++) {
            float p[3] = {bmin[0] - 2 + fx_randf(&rng) * (bmax[0] - bmin[0] + 4),
                          bmin[1] - 1 + fx_randf(&rng) * (bmax[1] - bmin[1] + 6),
                          bmin[2] - 2 + fx_randf(&rng) * (bmax[2] - bmin[2] + 4)};
            uint32_t pa, pb;
            float qa[3], qb[3];
            nav_status sa = steer_snap(m, p, ext, 0, &pa, qa);
            nav_status sb = nav_mesh_nearest(m, p, ext, 0, &pb, qb);
            ck_assert_int_eq(sa, sb);
            ck_assert_uint_eq(pa, pb);
            ck_assert_int_eq(memcmp(qa, qb, sizeof qa), 0);
        }
        nav_mesh_free(m);
    }
}
END_TEST

/* ---- steering, closed loops ---- */

/* A 20 x 6 corridor (x in [10, 30], z in [0, 6]) between two 10 x 18 rooms
   (x in [0, 10] and [30, 40], z in [-6, 12]), 2 m cells. */
static nav_mesh *rooms_and_corridor(void) {
    fx_builder *b = fx_new();
    for (int x = 0; x < 40; x += 2)
        for (int z = -6; z < 12; z += 2)
            if (x < 10 || x >= 30 || (z >= 0 && z < 6))
                fx_quad(b, (float)x, (float)z, (float)x + 2, (float)z + 2, 0, 0);
    return fx_build(b);
}

/* 50 agents, two groups of 25 (5 x 5 blocks, 1 m apart, radius 0.3) start
   in opposite rooms and cross the corridor in opposite directions to spots
   2 m x 3 m apart in the other room (spread out, so that no late agent has
   to squeeze between agents already standing on their spots). */
START_TEST(crowd_crossing_corridor) {
    nav_mesh *m = rooms_and_corridor();
    sim w;
    sim_init(&w, m, 50, 0);
    for (uint32_t i = 0; i < 50; i++) {
        uint32_t g = i / 25, r = (i % 25) / 5, c = i % 5;
        float x = g == 0 ? 3.0f + (float)c : 33.0f + (float)c;
        w.in[i] = agent_at(x, 1.0f + (float)r, NAV_BEHAVIOR_ARRIVE);
        set_target(&w.in[i], (g == 0 ? 31.0f : 1.0f) + 2.0f * (float)c, -4.0f + 3.0f * (float)r);
    }
    float min_gap = INFINITY, max_off = 0.0f;
    int done_tick = -1;
    /* bound: the longest trip is about 40 m, 400 ticks of 0.05 s at 2 m/s;
       allow 3x for the meeting in the corridor */
    for (int tick = 0; tick < 1200 && done_tick < 0; tick++) {
        sim_tick(&w);
        bool all = true;
        for (uint32_t i = 0; i < 50; i++) {
            ck_assert_int_eq(w.out[i].status, NAV_OK);
            float off = off_mesh_dist(m, w.out[i].pos);
            if (off > max_off)
                max_off = off;
            for (uint32_t j = i + 1; j < 50; j++) {
                float gap = dxz(w.out[i].pos, w.out[j].pos) - w.in[i].radius - w.in[j].radius;
                if (gap < min_gap)
                    min_gap = gap;
            }
            all = all && w.out[i].arrived;
        }
        if (all)
            done_tick = tick;
    }
    ck_assert_msg(done_tick >= 0, "not all agents arrived");
    ck_assert_msg(max_off < 1e-4f, "left the mesh by %g", (double)max_off);
    ck_assert_msg(min_gap > -0.05f, "agents overlapped by %g", (double)-min_gap);
    for (uint32_t i = 0; i < 50; i++)
        ck_assert(dxz(w.in[i].pos, w.in[i].target) <= w.p.arrive_tolerance + 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Ticks w (n agents, every status NAV_OK) until agents first .. n - 1
   all stand within 1 m of their targets, at most max_ticks ticks: the
   tick they did, or -1. *min_gap: the least gap between two bodies over
   the run (negative: an overlap). */
static int run_to_spots(sim *w, uint32_t n, uint32_t first, int max_ticks, float *min_gap) {
    *min_gap = INFINITY;
    for (int tick = 0; tick < max_ticks; tick++) {
        sim_tick(w);
        bool all = true;
        for (uint32_t i = 0; i < n; i++) {
            ck_assert_int_eq(w->out[i].status, NAV_OK);
            for (uint32_t j = i + 1; j < n; j++) {
                float gap = dxz(w->out[i].pos, w->out[j].pos) - w->in[i].radius - w->in[j].radius;
                if (gap < *min_gap)
                    *min_gap = gap;
            }
            if (i >= first)
                all = all && dxz(w->out[i].pos, w->in[i].target) <= 1.0f;
        }
        if (all)
            return tick;
    }
    return -1;
}

/* Two groups of 6 (3 columns x 2 rows, 1.1 m apart, radius 0.5, 3.5 m/s)
   fill the two ends of a 4 m wide corridor and swap ends, each agent to
   its mirror image (x -> 24 - x): the longest trip is 22 m, 6.3 s at full
   speed. Within 20 s every agent must stand within 1 m of its spot, and
   no two may ever overlap by more than 5 cm. The last metres are a swap
   inside a packed block (an agent's spot is held by one of the other group
   until it leaves); earlier builds, which avoided to the end, let 2 of the
   12 give way past their spots to the corridor's end, where they stayed
   boxed in behind agents standing on theirs (README, "Steering": the final
   approach). */
START_TEST(opposing_groups_swap_corridor) {
    nav_mesh *m = corridor(24, 4);
    sim w;
    sim_init(&w, m, 12, 0);
    for (uint32_t i = 0; i < 12; i++) {
        uint32_t g = i / 6, c = (i % 6) / 2, r = i % 2;
        float x = 1.0f + 1.1f * (float)c, z = 1.45f + 1.1f * (float)r;
        w.in[i] = agent_at(g == 0 ? x : 24.0f - x, z, NAV_BEHAVIOR_ARRIVE);
        w.in[i].radius = 0.5f;
        w.in[i].max_speed = 3.5f;
        set_target(&w.in[i], g == 0 ? 24.0f - x : x, z);
    }
    float min_gap;
    int done_tick = run_to_spots(&w, 12, 0, 400, &min_gap);
    ck_assert_msg(done_tick >= 0, "not all agents within 1 m of their spots after 20 s");
    ck_assert_msg(min_gap > -0.05f, "agents overlapped by %g", (double)-min_gap);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* One tick: agent 0 (radius 0.5, at full speed 3.5 m/s toward a goal 13 m
   ahead) is wedged among four others that each overlap it by 0.1 m (centres
   0.9 m away at 45, 135, 225 and 315 degrees) and walk toward it at 0.5 m/s.
   Every candidate velocity closes on one of them at least: for neighbour k
   (unit offset n_k, velocity -0.5 n_k) the reciprocal closing speed is
   (2v - v0) . n_k + 0.5, and the four n_k sum to zero, so these cannot all
   be <= 0. So every candidate has contact time 0 and the same time-of-impact
   term; what tells them apart is W_DES |v - desired| + W_CUR |v - current|
   (3.5 + 0.75 times |v - (3.5, 0)| / 3.5 here, desired = current) and the
   side term (0 to 0.75). A wedged fast agent pays no pressing term (README,
   "Steering", step 3), so the desired velocity, at most 0.75, beats every
   candidate more than 0.75 / (4.25 / 3.5) = 0.618 m/s from it. Before that
   rule the pressing term picked a braking velocity, (2.19, 0). */
START_TEST(wedged_fast_agent_keeps_its_way) {
    nav_mesh *m = corridor(20, 20);
    sim w;
    sim_init(&w, m, 5, 0);
    static nav_avoid_record rec[5];
    memset(rec, 0, sizeof rec);
    w.p.avoid_debug = rec;
    w.in[0] = agent_at(5, 10, NAV_BEHAVIOR_ARRIVE);
    w.in[0].vel[0] = 3.5f;
    set_target(&w.in[0], 18, 10);
    for (uint32_t k = 0; k < 4; k++) {
        float c = (k == 0 || k == 3) ? 0.70710678f : -0.70710678f;
        float z = k < 2 ? 0.70710678f : -0.70710678f;
        nav_agent_in *a = &w.in[1 + k];
        *a = agent_at(5 + 0.9f * c, 10 + 0.9f * z, NAV_BEHAVIOR_IDLE);
        a->vel[0] = -0.5f * c;
        a->vel[2] = -0.5f * z;
    }
    for (uint32_t i = 0; i < 5; i++) {
        w.in[i].radius = 0.5f;
        w.in[i].max_speed = 3.5f;
    }
    sim_tick(&w);
    ck_assert_uint_gt(rec[0].nsamples, 0);
    float dx = rec[0].chosen[0] - 3.5f, dz = rec[0].chosen[2];
    ck_assert_msg(hypotf(dx, dz) < 0.618f, "chose (%g, %g), not near the desired (3.5, 0)",
                  (double)rec[0].chosen[0], (double)rec[0].chosen[2]);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Three walkers (radius 0.5, 3.5 m/s) cross a 4 m corridor blocked by 18
   idle agents packed 6 x 3, 1 m apart (touching), to spots 26 m ahead: no
   gap lets a body through, so they must push the standing agents aside.
   Pushing at 0.2 max_speed (0.7 m/s) through the 6 m block and walking the
   other 20 m at full speed takes about 14 s; within 45 s all three must be
   within 1 m of their spots, and no two agents may overlap by more than
   5 cm. Earlier builds stood at the block for good: every velocity that
   does not touch a standing agent cost more than rest (README, "Steering",
   the deadlock breaker). */
START_TEST(walkers_push_through_standing_block) {
    nav_mesh *m = corridor(30, 4);
    sim w;
    sim_init(&w, m, 21, 0);
    for (uint32_t i = 0; i < 18; i++)
        w.in[i] = agent_at(12.0f + (float)(i / 3), 1.0f + (float)(i % 3), NAV_BEHAVIOR_IDLE);
    for (uint32_t i = 18; i < 21; i++) {
        float z = 0.9f + 1.1f * (float)(i - 18);
        w.in[i] = agent_at(2.0f, z, NAV_BEHAVIOR_ARRIVE);
        set_target(&w.in[i], 28.0f, z);
    }
    for (uint32_t i = 0; i < 21; i++) {
        w.in[i].radius = 0.5f;
        w.in[i].max_speed = 3.5f;
    }
    float min_gap;
    int done_tick = run_to_spots(&w, 21, 18, 900, &min_gap);
    ck_assert_msg(done_tick >= 0, "walkers not through the block after 45 s");
    ck_assert_msg(min_gap > -0.05f, "agents overlapped by %g", (double)-min_gap);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Arrive: after entering arrive_radius the speed never increases, the agent
   never passes the target, and it stops within the tolerance. */
START_TEST(arrive_stops_without_oscillation) {
    nav_mesh *m = corridor(40, 6);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(2, 3, NAV_BEHAVIOR_ARRIVE);
    w.in[0].max_speed = 3.5f;
    w.in[0].arrive_radius = 2.0f;
    set_target(&w.in[0], 30, 3);
    float prev_speed = INFINITY;
    bool inside = false, arrived = false;
    for (int tick = 0; tick < 600 && !arrived; tick++) {
        sim_tick(&w);
        float d = dxz(w.out[0].pos, w.in[0].target);
        float sp = hypotf(w.out[0].vel[0], w.out[0].vel[2]);
        ck_assert_msg(w.out[0].pos[0] <= 30.0f + 1e-4f, "overshot to x = %g",
                      (double)w.out[0].pos[0]);
        if (inside)
            ck_assert_msg(sp <= prev_speed + 1e-5f, "speed rose %g -> %g at tick %d",
                          (double)prev_speed, (double)sp, tick);
        if (d <= w.in[0].arrive_radius)
            inside = true;
        prev_speed = sp;
        arrived = w.out[0].arrived;
    }
    ck_assert(arrived);
    ck_assert(dxz(w.out[0].pos, w.in[0].target) <= w.p.arrive_tolerance);
    /* arrived and fed back: stays put, speed 0 */
    sim_tick(&w);
    ck_assert(w.out[0].arrived);
    ck_assert_float_eq_tol(hypotf(w.out[0].vel[0], w.out[0].vel[2]), 0.0f, 1e-3f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Zig-zag (U corridor): the remaining path length to the goal, measured by an
   independent nav_find_path each tick, never increases. */
START_TEST(zigzag_progress_never_backwards) {
    nav_mesh *m = fx_u_corridor();
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(1, 1, NAV_BEHAVIOR_ARRIVE);
    w.in[0].max_speed = 3.0f;
    set_target(&w.in[0], 9, 1);
    nav_query *q = nav_query_new(4096);
    float corners[3 * 64];
    uint32_t polys[256];
    double prev = INFINITY;
    bool arrived = false;
    for (int tick = 0; tick < 800 && !arrived; tick++) {
        sim_tick(&w);
        nav_path_request req;
        memset(&req, 0, sizeof req);
        memcpy(req.start, w.out[0].pos, sizeof req.start);
        memcpy(req.end, w.in[0].target, sizeof req.end);
        req.extents[0] = req.extents[2] = 2;
        req.extents[1] = 4;
        nav_path_result res;
        memset(&res, 0, sizeof res);
        res.corners = corners;
        res.max_corners = 64;
        res.polys = polys;
        res.max_polys = 256;
        ck_assert_int_eq(nav_find_path(q, m, &req, &res), NAV_OK);
        ck_assert_msg(res.length <= prev + 1e-4, "went backwards: %g -> %g at tick %d", prev,
                      res.length, tick);
        prev = res.length;
        ck_assert(w.out[0].ncorners >= 1 || w.out[0].arrived);
        arrived = w.out[0].arrived;
    }
    ck_assert(arrived);
    nav_query_free(q);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Flee along a corridor: the distance to the threat grows every tick until
   the agent is blocked by the corridor's end. */
START_TEST(flee_gains_distance_until_blocked) {
    nav_mesh *m = corridor(40, 6);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(12, 3, NAV_BEHAVIOR_FLEE);
    float threat[3] = {10, 0, 3};
    memcpy(w.in[0].threat, threat, sizeof threat);
    w.in[0].has_threat = true;
    float prev = dxz(w.in[0].pos, threat);
    bool blocked = false;
    for (int tick = 0; tick < 600; tick++) {
        sim_tick(&w);
        float d = dxz(w.out[0].pos, threat);
        if (d <= prev + 1e-5f) {
            blocked = true;
            /* blocked: at the far end wall x = 40 */
            ck_assert_msg(w.out[0].pos[0] > 39.0f, "stopped gaining at x = %g",
                          (double)w.out[0].pos[0]);
            break;
        }
        prev = d;
    }
    ck_assert(blocked);
    ck_assert(off_mesh_dist(m, w.out[0].pos) < 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Flee when "straight away" is a wall: the agent at (20, 5.5) flees a threat
   at (20, 3), i.e. toward the wall z = 6; it must pick a direction with room
   (along the corridor) and keep gaining instead of pinning into the wall. */
START_TEST(flee_not_pinned_to_wall) {
    nav_mesh *m = corridor(40, 6);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(20, 5.5f, NAV_BEHAVIOR_FLEE);
    float threat[3] = {20, 0, 3};
    memcpy(w.in[0].threat, threat, sizeof threat);
    w.in[0].has_threat = true;
    float d0 = dxz(w.in[0].pos, threat);
    for (int tick = 0; tick < 60; tick++)
        sim_tick(&w);
    /* 3 s at up to 2 m/s: well over 2 m gained along the corridor */
    ck_assert_msg(dxz(w.out[0].pos, threat) > d0 + 2.0f, "gained only %g",
                  (double)(dxz(w.out[0].pos, threat) - d0));
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Hide: obstacle at (10, 10) radius 1, threat at (3, 10): the hiding spot is
   (10, 10) + (1, 0) * (1 + 0.3 + 0.2) = (11.5, 10). The agent ends there, and
   the segment threat -> agent crosses the obstacle circle. */
START_TEST(hide_behind_obstacle) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 20, 20, 0, 0);
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 1, 1);
    w.in[0] = agent_at(12, 4, NAV_BEHAVIOR_HIDE);
    float threat[3] = {3, 0, 10};
    memcpy(w.in[0].threat, threat, sizeof threat);
    w.in[0].has_threat = true;
    w.obs[0].pos[0] = 10;
    w.obs[0].pos[2] = 10;
    w.obs[0].radius = 1;
    bool arrived = false;
    for (int tick = 0; tick < 400 && !arrived; tick++) {
        sim_tick(&w);
        /* the behaviour followed, avoiding or not (never a value outside the eight) */
        ck_assert_int_eq(w.out[0].behavior, NAV_BEHAVIOR_HIDE);
        arrived = w.out[0].arrived;
    }
    ck_assert(arrived);
    ck_assert_float_eq_tol(w.out[0].pos[0], 11.5f, 0.06f);
    ck_assert_float_eq_tol(w.out[0].pos[2], 10.0f, 0.06f);
    /* distance from the obstacle centre to the segment threat -> agent */
    float sx = w.out[0].pos[0] - threat[0], sz = w.out[0].pos[2] - threat[2];
    float t = ((10 - threat[0]) * sx + (10 - threat[2]) * sz) / (sx * sx + sz * sz);
    float cx = threat[0] + sx * t - 10, cz = threat[2] + sz * t - 10;
    ck_assert(t > 0 && t < 1 && hypotf(cx, cz) < 1.0f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Ticks until an agent with behaviour b catches a target crossing the field. */
static int ticks_to_catch(const nav_mesh *m, nav_behavior b) {
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(5, 5, b);
    w.in[0].max_speed = 3.0f;
    float tp[3] = {5, 0, 25}, tv[3] = {1.5f, 0, 0};
    int caught = -1;
    for (int tick = 0; tick < 1000 && caught < 0; tick++) {
        set_target(&w.in[0], tp[0], tp[2]);
        memcpy(w.in[0].target_vel, tv, sizeof tv);
        w.in[0].has_target_vel = true;
        sim_tick(&w);
        tp[0] += tv[0] * DT;
        if (dxz(w.out[0].pos, tp) <= 0.5f)
            caught = tick;
    }
    sim_free(&w);
    return caught;
}

START_TEST(pursue_beats_seek) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 40, 30, 0, 0);
    nav_mesh *m = fx_build(b);
    int seek = ticks_to_catch(m, NAV_BEHAVIOR_SEEK);
    int pursue = ticks_to_catch(m, NAV_BEHAVIOR_PURSUE);
    ck_assert_int_ge(seek, 0);
    ck_assert_int_ge(pursue, 0);
    ck_assert_msg(pursue < seek, "pursue %d ticks, seek %d", pursue, seek);
    nav_mesh_free(m);
}
END_TEST

/* A crate (obstacle radius 0.8) in the middle of a 4 m corridor, right on
   the agent's straight path: the agent goes around, never through it. */
START_TEST(crate_is_passed_around) {
    nav_mesh *m = corridor(20, 4);
    sim w;
    sim_init(&w, m, 1, 1);
    w.in[0] = agent_at(2, 2, NAV_BEHAVIOR_ARRIVE);
    set_target(&w.in[0], 18, 2);
    w.obs[0].pos[0] = 10;
    w.obs[0].pos[2] = 2;
    w.obs[0].radius = 0.8f;
    bool arrived = false, avoided = false;
    float min_gap = INFINITY;
    for (int tick = 0; tick < 800 && !arrived; tick++) {
        sim_tick(&w);
        float gap = dxz(w.out[0].pos, w.obs[0].pos) - 0.8f - 0.3f;
        if (gap < min_gap)
            min_gap = gap;
        avoided = avoided || w.out[0].avoiding;
        arrived = w.out[0].arrived;
    }
    ck_assert(arrived);
    ck_assert(avoided);
    ck_assert_msg(min_gap > -0.02f, "went through the crate by %g", (double)-min_gap);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* An agent that cannot steer (max_accel 0) moving at (2, 0, 2) from
   (5, 1.9) in a corridor [0,10]x[0,2] for dt = 0.1: the free move would end at
   (5.2, 2.1), beyond the wall z = 2; sliding keeps the along-wall part, so it
   ends at (5.2, 2.0), and the reported velocity is what was made:
   ((5.2 - 5) / 0.1, (2.0 - 1.9) / 0.1) = (2, 1). */
START_TEST(pressed_against_wall_slides) {
    nav_mesh *m = corridor(10, 2);
    sim w;
    sim_init(&w, m, 1, 0);
    w.p.dt = 0.1f;
    w.in[0] = agent_at(5, 1.9f, NAV_BEHAVIOR_IDLE);
    w.in[0].max_accel = 0;
    w.in[0].max_speed = 3;
    w.in[0].vel[0] = 2;
    w.in[0].vel[2] = 2;
    sim_tick(&w);
    ck_assert_float_eq_tol(w.out[0].pos[0], 5.2f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].pos[2], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].vel[0], 2.0f, 1e-3f);
    ck_assert_float_eq_tol(w.out[0].vel[2], 1.0f, 1e-3f);
    /* and it keeps sliding along the wall on the next ticks */
    for (int k = 0; k < 5; k++)
        sim_tick(&w);
    ck_assert(w.out[0].pos[0] > 5.5f);
    ck_assert_float_eq_tol(w.out[0].pos[2], 2.0f, 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Islands [0,4]x[0,4] and [10,14]x[0,4] joined by a "jump" link (3.5, 2) ->
   (10.5, 2), radius 0.5 (two-way when bidir). An agent at (x0, 2) seeks
   (x1, 2): it walks to the link's entry and gets the action there (entry
   first, exit second), is never moved across the gap (x stays on its
   island's side of `wall`, `west` saying which), and its first two corners
   are the entry and the exit. */
static void link_run(int bidir, float x0, float x1, float entry, float exit, float wall,
                     bool west) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, 0, 0);
    float ls[3] = {3.5f, 0, 2}, le[3] = {10.5f, 0, 2};
    fx_link(b, ls, le, 0.5f, bidir, 0, "jump");
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(x0, 2, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], x1, 2);
    bool action = false;
    for (int tick = 0; tick < 200 && !action; tick++) {
        sim_tick(&w);
        ck_assert(west ? w.out[0].pos[0] <= wall + 1e-4f : w.out[0].pos[0] >= wall - 1e-4f);
        if (tick == 0) {
            ck_assert_uint_ge(w.out[0].ncorners, 2);
            ck_assert_float_eq_tol(w.out[0].corners[0][0], entry, 1e-3f);
            ck_assert_float_eq_tol(w.out[0].corners[1][0], exit, 1e-3f);
        }
        action = w.out[0].has_action;
    }
    ck_assert(action);
    ck_assert_str_eq(w.out[0].action.kind, "jump");
    ck_assert_float_eq_tol(w.out[0].action.start[0], entry, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].action.start[2], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].action.end[0], exit, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].action.end[2], 2.0f, 1e-4f);
    float at[3] = {entry, 0, 2};
    ck_assert(dxz(w.out[0].pos, at) <= 0.5f + 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}

/* Two islands [0,4]x[0,4] and [10,14]x[0,4] joined by a one-way jump link
   (3.5, 2) -> (10.5, 2), radius 0.5. An agent at (1, 2) seeking (12, 2)
   walks to the link's start, gets the action there and is never moved
   across the gap. */
START_TEST(link_yields_action) {
    link_run(0, 1, 12, 3.5f, 10.5f, 4.0f, true);
}
END_TEST

/* A mixed crowd run twice with separate scratch: bit-identical outputs. */
static void run_mixed(const nav_mesh *m, nav_cache *cache, nav_agent_out *save, int ticks) {
    sim w;
    sim_init(&w, m, 40, 2);
    w.cache = cache;
    static char ids[40][8];
    for (uint32_t i = 0; i < 40; i++) {
        nav_behavior bs[] = {NAV_BEHAVIOR_ARRIVE, NAV_BEHAVIOR_SEEK,   NAV_BEHAVIOR_WANDER,
                             NAV_BEHAVIOR_FLEE,   NAV_BEHAVIOR_PURSUE, NAV_BEHAVIOR_HIDE,
                             NAV_BEHAVIOR_EVADE,  NAV_BEHAVIOR_IDLE};
        w.in[i] = agent_at(1.0f + (float)(i % 10) * 3.5f, 1.0f + (float)(i / 10) * 1.3f, bs[i % 8]);
        snprintf(ids[i], sizeof ids[i], "a%u", (unsigned)i);
        w.in[i].id = ids[i];
        set_target(&w.in[i], 39.0f - (float)(i % 10) * 3.5f, 5.0f - (float)(i / 10) * 1.3f);
        w.in[i].target_vel[0] = 0.5f;
        w.in[i].has_target_vel = true;
        w.in[i].threat[0] = 20;
        w.in[i].threat[2] = 3;
        w.in[i].has_threat = (i % 3) == 0;
    }
    w.obs[0].pos[0] = 15;
    w.obs[0].pos[2] = 3;
    w.obs[0].radius = 0.7f;
    w.obs[1].pos[0] = 25;
    w.obs[1].pos[2] = 2;
    w.obs[1].vel[2] = 0.2f;
    w.obs[1].radius = 0.5f;
    for (int t = 0; t < ticks; t++) {
        sim_tick(&w);
        memcpy(save + (size_t)t * 40, w.out, 40 * sizeof *w.out);
    }
    sim_free(&w);
}

START_TEST(determinism_bit_identical) {
    nav_mesh *m = corridor(40, 6);
    int ticks = 60;
    nav_agent_out *a = calloc((size_t)ticks * 40, sizeof *a);
    nav_agent_out *b = calloc((size_t)ticks * 40, sizeof *b);
    run_mixed(m, NULL, a, ticks);
    run_mixed(m, NULL, b, ticks);
    ck_assert_int_eq(memcmp(a, b, (size_t)ticks * 40 * sizeof *a), 0);
    /* through a path cache: two cold caches fed the same ticks hold the same
       corridors, so the runs are bit-identical too (a warm cache may reuse
       another valid corridor for a pair: see nav_step) */
    nav_cache *c = nav_cache_new((size_t)1 << 20, 4);
    nav_cache *c2 = nav_cache_new((size_t)1 << 20, 4);
    nav_agent_out *d = calloc((size_t)ticks * 40, sizeof *d);
    run_mixed(m, c, b, ticks);
    run_mixed(m, c2, d, ticks);
    ck_assert_int_eq(memcmp(b, d, (size_t)ticks * 40 * sizeof *b), 0);
    free(d);
    nav_cache_free(c2);
    nav_cache_stats cs;
    nav_cache_stats_get(c, &cs);
    ck_assert_uint_gt(cs.misses, 0); /* the cache was consulted */
    nav_cache_free(c);
    /* and the run is not trivially still */
    ck_assert(dxz(a[0].pos, a[(size_t)(ticks - 1) * 40].pos) > 0.5f);
    free(a);
    free(b);
    nav_mesh_free(m);
}
END_TEST

START_TEST(invalid_params_rejected) {
    nav_mesh *m = corridor(10, 2);
    sim w;
    sim_init(&w, m, 4, 1);
    for (uint32_t i = 0; i < 4; i++) {
        w.in[i] = agent_at(1.0f + 2.0f * (float)i, 1, NAV_BEHAVIOR_SEEK);
        set_target(&w.in[i], 9, 1);
    }
    nav_step_error err;
    nav_status st;
#define STEP() nav_step(w.s, m, w.q, NULL, &w.p, w.in, 4, w.obs, 0, w.out, &err)
    w.p.dt = 0;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_DT);
    ck_assert_str_eq(err.message, "dt must be a finite number in (0, 1]");
    w.p.dt = 1.5f;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    w.p.dt = NAN;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    w.p.dt = DT;
    ck_assert_int_eq(STEP(), NAV_OK);

    w.in[3].pos[1] = INFINITY;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.agent, 3);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_POSITION);
    ck_assert_int_eq(err.component, 1);
    ck_assert_str_eq(err.message, "agents[3].position[1] is not a finite number");
    w.in[3].pos[1] = 0;

    w.in[2].radius = 0;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.agent, 2);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_RADIUS);
    w.in[2].radius = 0.3f;
    w.in[1].max_speed = -1;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_MAX_SPEED);
    w.in[1].max_speed = 2;
    w.in[1].max_accel = NAN;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_MAX_ACCEL);
    w.in[1].max_accel = 8;
    w.in[0].behavior = NAV_BEHAVIOR_COUNT; /* past the eight */
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_BEHAVIOR);
    w.in[0].behavior = NAV_BEHAVIOR_SEEK;
    w.in[0].has_target = false;
    ck_assert_int_eq(STEP(), NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.field, NAV_STEP_FIELD_TARGET);
    w.in[0].has_target = true;

    w.obs[0].radius = -1;
    st = nav_step(w.s, m, w.q, NULL, &w.p, w.in, 4, w.obs, 1, w.out, &err);
    ck_assert_int_eq(st, NAV_E_INVALID_ARG);
    ck_assert_int_eq(err.obstacle, 0);
    ck_assert_str_eq(err.message, "obstacles[0].radius must be a finite number > 0");
    w.obs[0].radius = 1;

    /* more agents than the scratch holds */
    nav_steer *small = nav_steer_new(2, 1);
    st = nav_step(small, m, w.q, NULL, &w.p, w.in, 4, w.obs, 0, w.out, &err);
    ck_assert_int_eq(st, NAV_E_LIMIT);
    nav_steer_free(small);
    ck_assert_ptr_null(nav_steer_new(0, 1));
#undef STEP
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* One agent far off the mesh, one whose target is off the mesh: each gets
   its own error; the others are answered. */
START_TEST(off_mesh_agent_gets_own_error) {
    nav_mesh *m = corridor(10, 2);
    sim w;
    sim_init(&w, m, 3, 1);
    w.in[0] = agent_at(1, 1, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], 9, 1);
    w.in[1] = agent_at(50, 50, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[1], 9, 1);
    w.in[2] = agent_at(5, 1, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[2], 90, 1);
    nav_step_error err;
    ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 3, w.obs, 0, w.out, &err), NAV_OK);
    ck_assert_int_eq(w.out[0].status, NAV_OK);
    ck_assert(w.out[0].pos[0] > 1.0f);
    ck_assert_int_eq(w.out[1].status, NAV_E_OFF_MESH);
    ck_assert_int_eq(w.out[1].error_field, NAV_STEP_FIELD_POSITION);
    ck_assert_int_eq(w.out[2].status, NAV_E_OFF_MESH);
    ck_assert_int_eq(w.out[2].error_field, NAV_STEP_FIELD_TARGET);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Property, on random meshes (holes, triangles, collinear runs): a mixed
   crowd never leaves the mesh (the mesh's own nearest point is where the
   agent is), never produces a non-finite number, and never exceeds its
   max_speed, whatever the behaviours do. */
START_TEST(property_random_meshes_stay_on_mesh) {
    for (uint32_t seed = 11; seed <= 13; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.merge_runs = 1;
        o.triangulate = 1;
        nav_mesh *m = fx_random(seed, &o);
        sim w;
        sim_init(&w, m, 24, 1);
        uint32_t rng = seed * 2654435761u;
        static char ids[24][8];
        for (uint32_t i = 0; i < 24; i++) {
            uint32_t p = fx_rand(&rng) % nav_mesh_polygon_count(m);
            uint32_t t = fx_rand(&rng) % nav_mesh_polygon_count(m);
            const float *c = &m->poly_centroid[3 * p], *tc = &m->poly_centroid[3 * t];
            w.in[i] = agent_at(c[0], c[2], (nav_behavior)(1 + i % 7));
            w.in[i].pos[1] = c[1];
            snprintf(ids[i], sizeof ids[i], "r%u", (unsigned)i);
            w.in[i].id = ids[i];
            w.in[i].max_speed = 1.0f + fx_randf(&rng) * 3.0f;
            memcpy(w.in[i].target, tc, sizeof w.in[i].target);
            w.in[i].has_target = nav_mesh_reachable(m, p, t);
            if (!w.in[i].has_target)
                w.in[i].behavior = NAV_BEHAVIOR_WANDER;
        }
        const float *oc = &m->poly_centroid[0];
        memcpy(w.obs[0].pos, oc, sizeof w.obs[0].pos);
        w.obs[0].radius = 0.5f;
        /* with a path cache (canonical corridors shared between agents) */
        nav_cache *cache = nav_cache_new((size_t)1 << 20, 4);
        w.cache = cache;
        uint32_t rbuf[256];
        for (int tick = 0; tick < 120; tick++) {
            float before[24][3];
            for (uint32_t i = 0; i < 24; i++)
                memcpy(before[i], w.in[i].pos, sizeof before[i]);
            sim_tick(&w);
            for (uint32_t i = 0; i < 24; i++) {
                const nav_agent_out *a = &w.out[i];
                /* the corner steered at is in sight from where the agent stood
                   (independent check: a raycast from its snapped position) */
                if (a->ncorners > 0) {
                    uint32_t sp;
                    float sn[3], ext[3] = {2, 4, 2};
                    ck_assert_int_eq(nav_mesh_nearest(m, before[i], ext, 0, &sp, sn), NAV_OK);
                    nav_raycast_result rc;
                    memset(&rc, 0, sizeof rc);
                    rc.polys = rbuf;
                    rc.max_polys = 256;
                    ck_assert_int_eq(nav_raycast(m, sp, sn, a->corners[0], NULL, &rc), NAV_OK);
                    float gap = (1.0f - rc.t) * dxz(sn, a->corners[0]);
                    if (rc.hit && gap >= 1e-3f)
                        gap = sight_from_vertex_at(m, sn, a->corners[0], rbuf, 256);
                    ck_assert_msg(!rc.hit || gap < 1e-3f,
                                  "seed %u agent %u: corner A hidden %g m before it",
                                  (unsigned)seed, (unsigned)i, (double)gap);
                }
                ck_assert_int_eq(a->status, NAV_OK);
                for (int k = 0; k < 3; k++)
                    ck_assert(isfinite(a->pos[k]) && isfinite(a->vel[k]));
                ck_assert_msg(off_mesh_dist(m, a->pos) < 1e-3f, "seed %u agent %u off by %g",
                              (unsigned)seed, (unsigned)i, (double)off_mesh_dist(m, a->pos));
                ck_assert(nav_mesh_poly_contains_xz(m, a->poly, a->pos[0], a->pos[2]) ||
                          off_mesh_dist(m, a->pos) < 1e-4f);
                ck_assert(hypotf(a->vel[0], a->vel[2]) <= w.in[i].max_speed * 1.0001f + 1e-4f);
            }
        }
        sim_free(&w);
        nav_cache_free(cache);
        nav_mesh_free(m);
    }
}
END_TEST

START_TEST(names_and_parse) {
    nav_behavior b;
    ck_assert(nav_behavior_parse("arrive", 6, &b));
    ck_assert_int_eq(b, NAV_BEHAVIOR_ARRIVE);
    ck_assert(nav_behavior_parse("hide", 4, &b));
    ck_assert_int_eq(b, NAV_BEHAVIOR_HIDE);
    ck_assert(!nav_behavior_parse("arriv", 5, &b));
    ck_assert(!nav_behavior_parse("avoid", 5, &b)); /* not one of the contract's eight */
    ck_assert_str_eq(nav_behavior_name(NAV_BEHAVIOR_COUNT), "?");
    ck_assert_str_eq(nav_behavior_name((nav_behavior)99), "?");
    ck_assert_str_eq(nav_step_field_name(NAV_STEP_FIELD_TARGET_VELOCITY), "target_velocity");
}
END_TEST

/* Alone in a corridor, nothing to avoid: the velocity is the behaviour's. */
START_TEST(alone_no_avoidance) {
    nav_mesh *m = corridor(20, 4);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(2, 2, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], 18, 2);
    for (int t = 0; t < 20; t++) {
        sim_tick(&w);
        ck_assert(!w.out[0].avoiding);
        ck_assert_int_eq(w.out[0].behavior, NAV_BEHAVIOR_SEEK);
    }
    /* after 1 s at 8 m/s^2 up to 2 m/s the agent moves at full speed along +x */
    ck_assert_float_eq_tol(w.out[0].vel[0], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].vel[2], 0.0f, 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* ---- the contract's answer: behaviour enum, corners, speed ---- */

/* Two agents meet head-on in a 4 m corridor, and a crate stands in the way
   of a third: avoidance corrects their velocities (`avoiding`), yet each
   answer's behaviour is the one requested, one of the contract's eight. */
START_TEST(avoiding_keeps_requested_behavior) {
    nav_mesh *m = corridor(20, 4);
    sim w;
    sim_init(&w, m, 3, 1);
    w.in[0] = agent_at(2, 2, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], 18, 2);
    w.in[1] = agent_at(18, 2, NAV_BEHAVIOR_ARRIVE);
    set_target(&w.in[1], 2, 2);
    w.in[2] = agent_at(2, 3.5f, NAV_BEHAVIOR_PURSUE);
    set_target(&w.in[2], 18, 3.5f);
    w.obs[0].pos[0] = 8;
    w.obs[0].pos[2] = 3.5f;
    w.obs[0].radius = 0.4f;
    const nav_behavior want[3] = {NAV_BEHAVIOR_SEEK, NAV_BEHAVIOR_ARRIVE, NAV_BEHAVIOR_PURSUE};
    uint32_t avoiding[3] = {0, 0, 0};
    for (int tick = 0; tick < 120; tick++) {
        sim_tick(&w);
        for (uint32_t i = 0; i < 3; i++) {
            ck_assert_msg(w.out[i].behavior == want[i], "tick %d agent %u: behavior %s", tick,
                          (unsigned)i, nav_behavior_name(w.out[i].behavior));
            avoiding[i] += w.out[i].avoiding;
        }
    }
    /* the scenario does exercise avoidance for every agent */
    for (uint32_t i = 0; i < 3; i++)
        ck_assert_msg(avoiding[i] > 0, "agent %u never avoided", (unsigned)i);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Near the end of the path the contract's "two or more corners" still
   holds: on a flat 20 x 20 quad the path from (5, 5) to a target 1 m away at
   (6, 5) is the straight segment, corners [start, end]; the start is where
   the agent stands, so one corner is left, the end, and it is repeated:
   exactly [(6, 0, 5), (6, 0, 5)]. Standing on the target: the same two.
   The same for seek, pursue (no target velocity: the goal is the target)
   and hide (obstacle (10, 10) r 1, threat (3, 10), agent radius 0.3: spot
   (10 + 1 + 0.3 + 0.2, 10) = (11.5, 10); agent at (12.5, 10), 1 m away).
   Flee, evade, wander and idle follow no path: no corners. */
START_TEST(corners_two_near_the_end) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 20, 20, 0, 0);
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 1, 1);
    const nav_behavior path_bs[] = {NAV_BEHAVIOR_ARRIVE, NAV_BEHAVIOR_SEEK, NAV_BEHAVIOR_PURSUE};
    for (int k = 0; k < 3; k++) {
        for (int on = 0; on < 2; on++) {
            w.in[0] = agent_at(on ? 6.0f : 5.0f, 5, path_bs[k]);
            set_target(&w.in[0], 6, 5);
            nav_step_error err;
            ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err),
                             NAV_OK);
            ck_assert_msg(w.out[0].ncorners == 2, "%s from %g: %u corners",
                          nav_behavior_name(path_bs[k]), (double)w.in[0].pos[0],
                          (unsigned)w.out[0].ncorners);
            for (int c = 0; c < 2; c++) {
                ck_assert_float_eq_tol(w.out[0].corners[c][0], 6.0f, 1e-5f);
                ck_assert_float_eq_tol(w.out[0].corners[c][1], 0.0f, 1e-5f);
                ck_assert_float_eq_tol(w.out[0].corners[c][2], 5.0f, 1e-5f);
            }
        }
    }
    w.in[0] = agent_at(12.5f, 10, NAV_BEHAVIOR_HIDE);
    w.in[0].threat[0] = 3;
    w.in[0].threat[2] = 10;
    w.in[0].has_threat = true;
    w.obs[0].pos[0] = 10;
    w.obs[0].pos[2] = 10;
    w.obs[0].radius = 1;
    nav_step_error err;
    ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 1, w.out, &err), NAV_OK);
    ck_assert_int_eq(w.out[0].behavior, NAV_BEHAVIOR_HIDE);
    ck_assert_uint_eq(w.out[0].ncorners, 2);
    for (int c = 0; c < 2; c++) {
        ck_assert_float_eq_tol(w.out[0].corners[c][0], 11.5f, 1e-5f);
        ck_assert_float_eq_tol(w.out[0].corners[c][2], 10.0f, 1e-5f);
    }
    const nav_behavior free_bs[] = {NAV_BEHAVIOR_FLEE, NAV_BEHAVIOR_EVADE, NAV_BEHAVIOR_WANDER,
                                    NAV_BEHAVIOR_IDLE};
    for (int k = 0; k < 4; k++) {
        w.in[0] = agent_at(5, 5, free_bs[k]);
        set_target(&w.in[0], 6, 5);
        ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err), NAV_OK);
        ck_assert_uint_eq(w.out[0].ncorners, 0);
    }
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Far from the end the corners are the path's own, distinct. U corridor
   ([0,2]x[0,10] up, [0,10]x[8,10] across, [8,10]x[0,10] down): from (1, 1)
   to (9, 1) the string-pulled path turns at the inner corners (2, 8) and
   (8, 8), so the corners are (2, 0, 8), (8, 0, 8), (9, 0, 1). L corridor
   ([0,10]x[0,2], then [8,10]x[2,10]): from (1, 1) to (9, 9) it turns at
   (8, 2): corners (8, 0, 2), (9, 0, 9). */
START_TEST(corners_far_are_the_path) {
    nav_mesh *u = fx_u_corridor(), *l = fx_l_corridor();
    const nav_mesh *ms[2] = {u, l};
    const float goal[2][2] = {{9, 1}, {9, 9}};
    const float want[2][3][2] = {{{2, 8}, {8, 8}, {9, 1}}, {{8, 2}, {9, 9}, {0, 0}}};
    const uint32_t nwant[2] = {3, 2};
    for (int k = 0; k < 2; k++) {
        sim w;
        sim_init(&w, ms[k], 1, 0);
        w.in[0] = agent_at(1, 1, NAV_BEHAVIOR_ARRIVE);
        set_target(&w.in[0], goal[k][0], goal[k][1]);
        nav_step_error err;
        ck_assert_int_eq(nav_step(w.s, ms[k], w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err),
                         NAV_OK);
        ck_assert_uint_eq(w.out[0].ncorners, nwant[k]);
        for (uint32_t c = 0; c < nwant[k]; c++) {
            ck_assert_float_eq_tol(w.out[0].corners[c][0], want[k][c][0], 1e-4f);
            ck_assert_float_eq_tol(w.out[0].corners[c][2], want[k][c][1], 1e-4f);
        }
        ck_assert(dxz(w.out[0].corners[0], w.out[0].corners[1]) > 1.0f);
        sim_free(&w);
    }
    nav_mesh_free(u);
    nav_mesh_free(l);
}
END_TEST

/* Separation is a positional correction within the speed budget, never
   part of the velocity (as in DetourCrowd). Radius 0.5, dt 0.05.
   1. Two idle agents at (5, 5) and (5.6, 5) overlap by 1.0 - 0.6 = 0.4 m.
      With max_speed 0 neither may move (displacement <= 0 * dt): both stay
      exactly where they are, velocity 0, and the overlap stays (it is not
      avoidable).
   2. Both with max_speed 2 (budget 2 * 0.05 = 0.1 m) and max_accel 1
      (|dv| <= 1 * 0.05 = 0.05 m/s), from rest: idle commands v = 0, so there
      is no own move. The first separation pass pushes each by half the
      overlap, 0.2 m, along the centre line, of which 0.1 m fits the budget:
      (4.9, 5) and (5.7, 5); the next pass finds the budget spent. The
      reported velocity is the own move's: 0 (reporting the displacement
      would say -+0.1 / 0.05 = -+2 m/s from rest, 40 times max_accel * dt).
   3. The first agent fixed (max_speed 0) at (5, 5); the second at (5.6, 5)
      coming in at (-1, 0), max_speed 2, max_accel 1: idle brakes by
      max_accel * dt = 0.05, v = (-0.95, 0), so its own move ends at
      5.6 - 0.95 * 0.05 = 5.5525. Overlap there 1 - 0.5525 = 0.4475; the
      push, half of it (0.22375 m) along +x, is cut so that the whole
      displacement stays within 0.1 m: the agent ends at 5.6 + 0.1 = 5.7.
      Its velocity is (-0.95, 0): |v - v_in| = 0.05 = max_accel * dt, though
      the push moved it +0.1 m (as displacement / dt: +2 m/s, 2.95 off). */
START_TEST(separation_within_speed_budget) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 20, 20, 0, 0);
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 2, 0);
    w.in[0] = agent_at(5, 5, NAV_BEHAVIOR_IDLE);
    w.in[1] = agent_at(5.6f, 5, NAV_BEHAVIOR_IDLE);
    for (int i = 0; i < 2; i++) {
        w.in[i].radius = 0.5f;
        w.in[i].max_speed = 0;
    }
    /* 1 */
    sim_tick(&w);
    for (int i = 0; i < 2; i++) {
        ck_assert_float_eq_tol(w.out[i].pos[0], i ? 5.6f : 5.0f, 1e-6f);
        ck_assert_float_eq_tol(w.out[i].pos[2], 5.0f, 1e-6f);
        ck_assert_float_eq_tol(hypotf(w.out[i].vel[0], w.out[i].vel[2]), 0.0f, 1e-6f);
    }
    /* 2 */
    for (int i = 0; i < 2; i++) {
        w.in[i].max_speed = 2;
        w.in[i].max_accel = 1;
    }
    sim_tick(&w);
    for (int i = 0; i < 2; i++) {
        ck_assert_float_eq_tol(w.out[i].pos[0], i ? 5.7f : 4.9f, 1e-5f);
        ck_assert_float_eq_tol(w.out[i].pos[2], 5.0f, 1e-5f);
        ck_assert_float_eq_tol(w.out[i].vel[0], 0.0f, 1e-6f);
        ck_assert_float_eq_tol(w.out[i].vel[2], 0.0f, 1e-6f);
    }
    /* 3 */
    w.in[0] = agent_at(5, 5, NAV_BEHAVIOR_IDLE);
    w.in[0].radius = 0.5f;
    w.in[0].max_speed = 0;
    w.in[1] = agent_at(5.6f, 5, NAV_BEHAVIOR_IDLE);
    w.in[1].radius = 0.5f;
    w.in[1].max_accel = 1;
    w.in[1].vel[0] = -1;
    sim_tick(&w);
    ck_assert_float_eq_tol(w.out[0].pos[0], 5.0f, 1e-6f);
    ck_assert_float_eq_tol(w.out[1].pos[0], 5.7f, 1e-5f);
    ck_assert_float_eq_tol(w.out[1].pos[2], 5.0f, 1e-5f);
    ck_assert_float_eq_tol(w.out[1].vel[0], -0.95f, 1e-5f);
    ck_assert_float_eq_tol(w.out[1].vel[2], 0.0f, 1e-6f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

#define CROWD_N 32

/* A random crowd on m (seeded): CROWD_N agents dropped near four centres so
   that many overlap, a mix of every behaviour, radii, speeds (every fifth
   agent 0) and accelerations; two standing obstacles on the first centres.
   ids must hold CROWD_N names and outlive the sim. */
static void random_crowd(sim *w, const nav_mesh *m, uint32_t seed, char (*ids)[8]) {
    uint32_t rng = seed * 2246822519u;
    float centre[4][3];
    for (int c = 0; c < 4; c++)
        fx_random_point(m, &rng, centre[c]);
    for (uint32_t i = 0; i < CROWD_N; i++) {
        /* near one of four centres, snapped onto the mesh */
        const float *c = centre[i % 4];
        float p[3] = {c[0] + (fx_randf(&rng) - 0.5f) * 1.2f, c[1],
                      c[2] + (fx_randf(&rng) - 0.5f) * 1.2f};
        float ext[3] = {3, 4, 3}, q[3];
        uint32_t poly;
        ck_assert_int_eq(nav_mesh_nearest(m, p, ext, 0, &poly, q), NAV_OK);
        static const nav_behavior all8[8] = {
            NAV_BEHAVIOR_SEEK,  NAV_BEHAVIOR_ARRIVE, NAV_BEHAVIOR_FLEE, NAV_BEHAVIOR_PURSUE,
            NAV_BEHAVIOR_EVADE, NAV_BEHAVIOR_WANDER, NAV_BEHAVIOR_HIDE, NAV_BEHAVIOR_IDLE};
        nav_behavior bh = all8[fx_rand(&rng) % 8];
        w->in[i] = agent_at(q[0], q[2], bh);
        w->in[i].pos[1] = q[1];
        snprintf(ids[i], 8, "c%u", (unsigned)i);
        w->in[i].id = ids[i];
        w->in[i].radius = 0.2f + fx_randf(&rng) * 0.4f;
        w->in[i].max_speed = i % 5 == 0 ? 0.0f : 0.5f + fx_randf(&rng) * 3.5f;
        w->in[i].max_accel = fx_randf(&rng) * 20.0f;
        uint32_t tp = fx_random_point(m, &rng, w->in[i].target);
        w->in[i].has_target = nav_mesh_reachable(m, poly, tp);
        w->in[i].target_vel[0] = 0.5f;
        w->in[i].has_target_vel = true;
        memcpy(w->in[i].threat, centre[(i + 1) % 4], sizeof w->in[i].threat);
        w->in[i].has_threat = true;
        if (!w->in[i].has_target && bh != NAV_BEHAVIOR_FLEE && bh != NAV_BEHAVIOR_EVADE &&
            bh != NAV_BEHAVIOR_HIDE)
            w->in[i].behavior = NAV_BEHAVIOR_WANDER;
    }
    for (uint32_t k = 0; k < 2; k++) {
        memcpy(w->obs[k].pos, centre[k], sizeof w->obs[k].pos);
        w->obs[k].radius = 0.4f;
    }
}

/* Nothing can push agent i this tick: every other agent and obstacle starts
   farther than the sum of radii and of both speed budgets (the most two
   moves within budget can close), so the two never overlap after the moves. */
static bool unpushable(const sim *w, uint32_t i) {
    const nav_agent_in *a = &w->in[i];
    float bi = a->max_speed * w->p.dt;
    for (uint32_t j = 0; j < w->n; j++) {
        const nav_agent_in *o = &w->in[j];
        if (j != i &&
            dxz(a->pos, o->pos) <= a->radius + o->radius + bi + o->max_speed * w->p.dt + 1e-3f)
            return false;
    }
    for (uint32_t k = 0; k < w->nobs; k++) {
        const nav_obstacle *o = &w->obs[k];
        if (dxz(a->pos, o->pos) <=
            a->radius + o->radius + bi + hypotf(o->vel[0], o->vel[2]) * w->p.dt + 1e-3f)
            return false;
    }
    return true;
}

/* Brute force: xz distance from p to the nearest wall edge of m (an edge
   with no neighbour), over every polygon. */
static float wall_dist(const nav_mesh *m, const float *p) {
    float best = INFINITY;
    for (uint32_t poly = 0; poly < nav_mesh_polygon_count(m); poly++) {
        uint32_t n = nav_poly_nverts(m, poly);
        for (uint32_t e = 0; e < n; e++) {
            if (m->poly_nei[m->poly_start[poly] + e] != NAV_NONE)
                continue;
            const float *a = nav_poly_vert(m, poly, e), *b = nav_poly_vert(m, poly, e + 1);
            float ex = b[0] - a[0], ez = b[2] - a[2], l2 = ex * ex + ez * ez;
            float t = l2 > 0 ? ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / l2 : 0;
            t = t < 0 ? 0 : (t > 1 ? 1 : t);
            float d = hypotf(a[0] + ex * t - p[0], a[2] + ez * t - p[2]);
            if (d < best)
                best = d;
        }
    }
    return best;
}

/* Property over random crowds on random meshes (seeded), fed back for 40
   ticks. Every tick, against the state sent (independent of the code:
   plain distances):
   - |new position - position|_xz <= max_speed * dt (+ 1e-5 of rounding),
     separation pushes included;
   - the reported velocity is no faster than max_speed, and for an agent
     nothing can push (unpushable) it is the displacement over dt (1e-4 m);
   - behavior is the requested one (flee for a hide), within the eight;
   - path behaviours have >= 2 corners, the others none. */
START_TEST(property_random_crowds_speed_budget) {
    for (uint32_t seed = 31; seed <= 34; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.triangulate = seed & 1;
        nav_mesh *m = fx_random(seed, &o);
        sim w;
        sim_init(&w, m, CROWD_N, 2);
        static char ids[CROWD_N][8];
        random_crowd(&w, m, seed, ids);
        uint32_t isolated = 0;
        for (int tick = 0; tick < 40; tick++) {
            float before[CROWD_N][3];
            bool alone[CROWD_N];
            for (uint32_t i = 0; i < CROWD_N; i++) {
                memcpy(before[i], w.in[i].pos, sizeof before[i]);
                alone[i] = unpushable(&w, i);
            }
            sim_tick(&w);
            for (uint32_t i = 0; i < CROWD_N; i++) {
                const nav_agent_in *in = &w.in[i];
                const nav_agent_out *a = &w.out[i];
                ck_assert_int_eq(a->status, NAV_OK);
                float moved = dxz(a->pos, before[i]);
                float budget = in->max_speed * w.p.dt;
                ck_assert_msg(moved <= budget + 1e-5f,
                              "seed %u tick %d agent %u: moved %g, budget %g (max_speed %g)",
                              (unsigned)seed, tick, (unsigned)i, (double)moved, (double)budget,
                              (double)in->max_speed);
                if (alone[i]) {
                    float ex = a->vel[0] * w.p.dt - (a->pos[0] - before[i][0]);
                    float ez = a->vel[2] * w.p.dt - (a->pos[2] - before[i][2]);
                    ck_assert_msg(hypotf(ex, ez) <= 1e-4f + 1e-5f,
                                  "seed %u tick %d agent %u: velocity %g,%g but moved %g,%g",
                                  (unsigned)seed, tick, (unsigned)i, (double)a->vel[0],
                                  (double)a->vel[2], (double)(a->pos[0] - before[i][0]),
                                  (double)(a->pos[2] - before[i][2]));
                    isolated += in->max_speed > 0.0f;
                }
                ck_assert(hypotf(a->vel[0], a->vel[2]) <= in->max_speed * 1.0001f + 1e-5f);
                ck_assert((unsigned)a->behavior < NAV_BEHAVIOR_COUNT);
                ck_assert(a->behavior == in->behavior ||
                          (in->behavior == NAV_BEHAVIOR_HIDE && a->behavior == NAV_BEHAVIOR_FLEE));
                bool path = a->behavior == NAV_BEHAVIOR_SEEK ||
                            a->behavior == NAV_BEHAVIOR_ARRIVE ||
                            a->behavior == NAV_BEHAVIOR_PURSUE || a->behavior == NAV_BEHAVIOR_HIDE;
                if (path)
                    ck_assert_msg(a->ncorners >= 2, "seed %u tick %d agent %u (%s): %u corners",
                                  (unsigned)seed, tick, (unsigned)i, nav_behavior_name(a->behavior),
                                  (unsigned)a->ncorners);
                else
                    ck_assert_uint_eq(a->ncorners, 0);
            }
        }
        /* the velocity check above did run on moving agents */
        ck_assert_msg(isolated > 30, "seed %u: only %u isolated samples", (unsigned)seed,
                      (unsigned)isolated);
        sim_free(&w);
        nav_mesh_free(m);
    }
}
END_TEST

/* Property: the reported velocity respects max_accel. Random crowds as above
   (clustered, so separation pushes are frequent) on larger random meshes,
   fed back for 40 ticks. For every agent whose start is farther from every
   wall than its speed budget (wall_dist, brute force over the mesh's wall
   edges: its own move cannot reach a wall, so no wall changed it), the
   change of velocity is at most max_accel * dt (+ 1e-4 of rounding):
   separation pushes move the agent but are not part of its velocity. The
   contract's one exception, a wall stopping or deflecting the agent, is
   what the wall distance excludes. The test also counts the ticks in which
   an agent was pushed (displacement != velocity * dt), so it is known to
   cover them. */
START_TEST(property_random_crowds_accel_limit) {
    uint32_t checked = 0, pushed = 0;
    for (uint32_t seed = 41; seed <= 44; seed++) {
        fx_random_opts o = fx_random_defaults();
        o.width = o.height = 16;
        o.hole_ratio = 0.08f;
        o.triangulate = seed & 1;
        nav_mesh *m = fx_random(seed, &o);
        sim w;
        sim_init(&w, m, CROWD_N, 2);
        static char ids[CROWD_N][8];
        random_crowd(&w, m, seed, ids);
        for (int tick = 0; tick < 40; tick++) {
            float before[CROWD_N][3], vin[CROWD_N][3];
            bool open[CROWD_N];
            for (uint32_t i = 0; i < CROWD_N; i++) {
                memcpy(before[i], w.in[i].pos, sizeof before[i]);
                memcpy(vin[i], w.in[i].vel, sizeof vin[i]);
                open[i] = wall_dist(m, w.in[i].pos) > w.in[i].max_speed * w.p.dt + 1e-3f;
            }
            sim_tick(&w);
            for (uint32_t i = 0; i < CROWD_N; i++) {
                const nav_agent_in *in = &w.in[i];
                const nav_agent_out *a = &w.out[i];
                ck_assert_int_eq(a->status, NAV_OK);
                float ex = a->vel[0] * w.p.dt - (a->pos[0] - before[i][0]);
                float ez = a->vel[2] * w.p.dt - (a->pos[2] - before[i][2]);
                pushed += hypotf(ex, ez) > 1e-3f;
                if (!open[i] || in->max_speed <= 0.0f)
                    continue;
                float dv = hypotf(a->vel[0] - vin[i][0], a->vel[2] - vin[i][2]);
                ck_assert_msg(dv <= in->max_accel * w.p.dt + 1e-4f,
                              "seed %u tick %d agent %u (%s): |dv| %g > max_accel * dt %g",
                              (unsigned)seed, tick, (unsigned)i, nav_behavior_name(in->behavior),
                              (double)dv, (double)(in->max_accel * w.p.dt));
                checked++;
            }
        }
        sim_free(&w);
        nav_mesh_free(m);
    }
    ck_assert_msg(checked > 1500, "only %u samples away from walls", (unsigned)checked);
    ck_assert_msg(pushed > 50, "only %u pushed samples: separation not exercised",
                  (unsigned)pushed);
}
END_TEST

/* ---- behaviours and avoidance, one line each (tests that fail when it breaks) ---- */

/* Avoidance scores the local wall boundary. Corridor [0,20] x [0,4], wall
   z = 0. Agent A at (5, 0.05) seeks (15, 0.05) at full speed (2, 0), with
   max_accel 100 so the limits pass avoidance's choice through; B comes
   head-on at (-2, 0) from (x, 0.2) (1.2 and 1.6 m ahead): closing at 4 m/s,
   centres 0.15 m apart across the corridor, radii 0.3 + 0.3, so A must
   dodge sideways. The wall term penalises a centre crossing a wall segment
   within the wall horizon 2 * dt = 0.1 s; from z = 0.05 every velocity with
   vz < -0.05 / 0.1 = -0.5 does. Under B (-z) is the side B's offset leaves
   open, so without the boundary A dodges into the wall (vz about -0.7);
   with it A dodges over B (+z). So: avoiding, vz >= 0 (nothing into the
   wall), the next position on the interior side (z >= 0), and no crossing
   within the horizon (0.05 + 0.1 * vz >= 0). */
START_TEST(avoidance_respects_wall_boundary) {
    nav_mesh *m = corridor(20, 4);
    const float bxs[2] = {6.2f, 6.6f};
    for (int k = 0; k < 2; k++) {
        sim w;
        sim_init(&w, m, 2, 0);
        w.in[0] = agent_at(5, 0.05f, NAV_BEHAVIOR_SEEK);
        set_target(&w.in[0], 15, 0.05f);
        w.in[0].vel[0] = 2;
        w.in[0].max_accel = 100;
        w.in[1] = agent_at(bxs[k], 0.2f, NAV_BEHAVIOR_SEEK);
        set_target(&w.in[1], 1, 0.2f);
        w.in[1].vel[0] = -2;
        sim_tick(&w);
        const nav_agent_out *a = &w.out[0];
        ck_assert(a->avoiding);
        ck_assert_msg(a->vel[2] >= 0.0f, "B at x %g: dodged into the wall, vz %g", (double)bxs[k],
                      (double)a->vel[2]);
        ck_assert(0.05f + 2.0f * DT * a->vel[2] >= 0.0f);
        ck_assert(a->pos[2] >= 0.0f);
        sim_free(&w);
    }
    nav_mesh_free(m);
}
END_TEST

/* Wander is a pure function of the agent id and the request. On a 40 x 40
   quad, agent at (20, 20) from rest, max_speed 2, max_accel 8, dt 0.05:
   - the same request twice (fresh scratch each time): identical answers;
   - ids "w1" and "w2" alone at the same state: different headings (the
     hash of the id picks it; 2^-24 odds of a tie);
   - params.seed 0 vs 1 for "w1": different too (the seed is mixed in);
   - it moves: from rest the desired velocity has length max_speed 2 > the
     allowed change 8 * 0.05 = 0.4, so the first answer's speed is exactly
     0.4; fed back, the speed does not drop while below 2 cos 0.6 = 1.65 in
     open space (each tick's jitter turns at most 0.6 rad, so the desired
     velocity, of length 2, has a component along v of at least 2 cos 0.6 >
     |v|), hence it stays >= 0.4 and after 10 ticks the agent has moved:
     asserted > 0.1 m from its start. */
static void wander_once(const nav_mesh *m, const char *id, uint64_t seed, nav_agent_out *out) {
    sim w;
    sim_init(&w, m, 1, 0);
    w.p.seed = seed;
    w.in[0] = agent_at(20, 20, NAV_BEHAVIOR_WANDER);
    w.in[0].id = id;
    nav_step_error err;
    ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err), NAV_OK);
    *out = w.out[0];
    sim_free(&w);
}

START_TEST(wander_deterministic_and_moves) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 40, 40, 0, 0);
    nav_mesh *m = fx_build(b);
    nav_agent_out a1, a2, b1, s1;
    wander_once(m, "w1", 0, &a1);
    wander_once(m, "w1", 0, &a2);
    ck_assert_int_eq(memcmp(&a1, &a2, sizeof a1), 0);
    wander_once(m, "w2", 0, &b1);
    ck_assert_msg(a1.vel[0] != b1.vel[0] || a1.vel[2] != b1.vel[2], "ids w1 and w2 wander alike");
    wander_once(m, "w1", 1, &s1);
    ck_assert(a1.vel[0] != s1.vel[0] || a1.vel[2] != s1.vel[2]);
    ck_assert_float_eq_tol(hypotf(a1.vel[0], a1.vel[2]), 0.4f, 1e-5f);
    ck_assert_float_eq_tol(hypotf(a1.desired_vel[0], a1.desired_vel[2]), 2.0f, 1e-5f);

    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(20, 20, NAV_BEHAVIOR_WANDER);
    w.in[0].id = "w1";
    float start[3] = {20, 0, 20}, prev = 0.0f;
    for (int t = 0; t < 10; t++) {
        sim_tick(&w);
        float sp = hypotf(w.out[0].vel[0], w.out[0].vel[2]);
        if (prev < 1.65f)
            ck_assert_msg(sp >= prev - 1e-5f, "tick %d: speed fell %g -> %g", t, (double)prev,
                          (double)sp);
        prev = sp;
    }
    ck_assert(prev >= 0.4f);
    ck_assert(dxz(w.out[0].pos, start) > 0.1f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Evade flees the threat's predicted position, flee its current one. On a
   40 x 40 quad, agent at (20, 20), max_speed 2; threat at (20, 16) (4 m
   away) moving (3, 0, 0). Evade looks ahead t = min(4 / 2, horizon 2) = 2 s:
   predicted threat (20 + 3 * 2, 16) = (26, 16). Away from it: (20 - 26,
   20 - 16) = (-6, 4), |.| = sqrt(52) = 7.2111, so the desired velocity is
   2 * (-0.83205, 0.55470) = (-1.66410, 1.10940) (the straight-away
   direction has a clear 2 m run, so it is taken as is). Flee ignores the
   threat's velocity: away from (20, 16) is (0, 1), desired (0, 2). */
START_TEST(evade_uses_target_velocity) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 40, 40, 0, 0);
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 1, 0);
    const nav_behavior bs[2] = {NAV_BEHAVIOR_EVADE, NAV_BEHAVIOR_FLEE};
    const float want[2][2] = {{-1.66410f, 1.10940f}, {0.0f, 2.0f}};
    for (int k = 0; k < 2; k++) {
        w.in[0] = agent_at(20, 20, bs[k]);
        w.in[0].threat[0] = 20;
        w.in[0].threat[2] = 16;
        w.in[0].has_threat = true;
        w.in[0].target_vel[0] = 3;
        w.in[0].has_target_vel = true;
        nav_step_error err;
        ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err), NAV_OK);
        ck_assert_int_eq(w.out[0].behavior, bs[k]);
        ck_assert_float_eq_tol(w.out[0].desired_vel[0], want[k][0], 1e-4f);
        ck_assert_float_eq_tol(w.out[0].desired_vel[2], want[k][1], 1e-4f);
    }
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Hide picks the closest spot that is still hidden after snapping. Quad
   [0,40] x [0,40], threat T = (15, 5.1), agent radius 0.3 at (21, 3); the
   spot behind an obstacle of radius r is its centre + (centre - T) / |..| *
   (r + 0.3 + 0.2):
   - A (20, 0.1) r 0.2, 0.1 m inside the wall z = 0: direction (5, -5) /
     7.0711 = (0.70711, -0.70711), spot (20.49497, -0.39497), off the mesh;
     snapped (box 0.7 around it) to (20.49497, 0). The segment T -> (20.49497,
     0) passes 0.2634 m from A's centre (> r = 0.2): not hidden, rejected,
     though A is the nearest obstacle and its spot the nearest (3.04 m);
   - B (25, 10) r 1: direction (10, 4.9) / 11.1360, spot (26.34699,
     10.66002), on the mesh, hidden (on the line through B), 9.34 m away;
   - C (10, 30) r 1: spot (9.70469, 31.47064), hidden, 30.63 m away.
   So the agent heads for B's spot: the path is straight, corners [0] is
   the spot. Listed A, B, C and A, C, B: the answer does not depend on the
   order (neither "first hidden" nor "last hidden" would pass both). */
START_TEST(hide_picks_nearest_hidden_spot) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 40, 40, 0, 0);
    nav_mesh *m = fx_build(b);
    const float obs[3][3] = {{20, 0.1f, 0.2f}, {25, 10, 1}, {10, 30, 1}}; /* x, z, r */
    const int orders[2][3] = {{0, 1, 2}, {0, 2, 1}};
    for (int o = 0; o < 2; o++) {
        sim w;
        sim_init(&w, m, 1, 3);
        w.in[0] = agent_at(21, 3, NAV_BEHAVIOR_HIDE);
        w.in[0].threat[0] = 15;
        w.in[0].threat[2] = 5.1f;
        w.in[0].has_threat = true;
        for (int k = 0; k < 3; k++) {
            const float *ob = obs[orders[o][k]];
            w.obs[k].pos[0] = ob[0];
            w.obs[k].pos[2] = ob[1];
            w.obs[k].radius = ob[2];
        }
        sim_tick(&w);
        ck_assert_int_eq(w.out[0].behavior, NAV_BEHAVIOR_HIDE);
        ck_assert_uint_ge(w.out[0].ncorners, 2);
        ck_assert_float_eq_tol(w.out[0].corners[0][0], 26.34699f, 1e-3f);
        ck_assert_float_eq_tol(w.out[0].corners[0][2], 10.66002f, 1e-3f);
        /* and that spot is hidden from T behind B: distance from B's centre
           to the segment T -> spot below B's radius */
        const float *sp = w.out[0].corners[0];
        float sx = sp[0] - 15, sz = sp[2] - 5.1f;
        float t = ((25 - 15) * sx + (10 - 5.1f) * sz) / (sx * sx + sz * sz);
        ck_assert(t > 0 && t < 1);
        ck_assert(hypotf(15 + sx * t - 25, 5.1f + sz * t - 10) < 1.0f);
        sim_free(&w);
    }
    nav_mesh_free(m);
}
END_TEST

/* A two-way link used backwards. Islands [0,4] x [0,4] and [10,14] x [0,4],
   a bidirectional "jump" link (3.5, 2) <-> (10.5, 2), radius 0.5. An agent at
   (13, 2) on the east island seeking (1, 2) walks west to the link's end
   (10.5, 2), which is where it enters the link, and gets the action with
   start and end swapped: start (10.5, 0, 2), end (3.5, 0, 2). It is never
   moved across the gap (x stays >= 10). */
START_TEST(link_used_backwards_swaps_action) {
    link_run(1, 13, 1, 10.5f, 3.5f, 10.0f, false);
}
END_TEST

/* Seek never overshoots in one tick. Agent at (5, 5) moving (2, 0) with
   max_speed 3.5, max_accel 8, dt 0.05, target (5.1, 5), 0.1 m away: the seek
   speed is min(3.5, 0.1 / 0.05) = 2, equal to the current velocity (no
   acceleration needed), so it moves 2 * 0.05 = 0.1 m and lands exactly on
   (5.1, 5). (Full speed 3.5 would be cut by max_accel to 2 + 0.4 = 2.4 and
   land at 5.12, past the target.) */
START_TEST(seek_lands_on_target) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 20, 20, 0, 0);
    nav_mesh *m = fx_build(b);
    sim w;
    sim_init(&w, m, 1, 0);
    w.in[0] = agent_at(5, 5, NAV_BEHAVIOR_SEEK);
    w.in[0].max_speed = 3.5f;
    w.in[0].vel[0] = 2;
    set_target(&w.in[0], 5.1f, 5);
    sim_tick(&w);
    ck_assert_float_eq_tol(w.out[0].desired_vel[0], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].pos[0], 5.1f, 1e-5f);
    ck_assert_float_eq_tol(w.out[0].pos[2], 5.0f, 1e-5f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

/* Toward B once A is nearly reached and B is in sight. An L corridor of
   cheap cells (area 0: the row [0,12] x [0,2] and the column [10,12] x
   [0,12]) inside a 12 x 12 field whose other cells are mud (area 1, cost 50
   with the filter below): the path keeps to the L, so from (9.6, 1.6) to
   (11, 11) it turns at the L's inner corner, corners A = (10, 2), B =
   (11, 11). A is |(0.4, 0.4)| = 0.566 m away, within max(2 * radius 0.6,
   2 * speed * dt = 0.2) = 0.6; the mud is walkable, so a raycast to B is
   clear: the agent steers at B, desired velocity 2 * (1.4, 9.4) / 9.5037 =
   (0.29462, 1.97818) (toward A it would be (1.41421, 1.41421)). On a plain
   L corridor B is never in sight while A is a path corner (the shortest
   path in a simple polygon is straight where it can be), so the path must
   bend for a reason the raycast does not see: here, area costs. */
START_TEST(steers_toward_b_when_a_is_near) {
    fx_builder *b = fx_new();
    for (int x = 0; x < 12; x += 2)
        for (int z = 0; z < 12; z += 2)
            fx_quad(b, (float)x, (float)z, (float)x + 2, (float)z + 2, 0,
                    (z == 0 || x == 10) ? 0 : 1);
    nav_mesh *m = fx_build(b);
    nav_filter f;
    nav_filter_default(&f);
    f.area_cost[1] = 50;
    sim w;
    sim_init(&w, m, 1, 0);
    w.p.filter = &f;
    w.in[0] = agent_at(9.6f, 1.6f, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], 11, 11);
    nav_step_error err;
    ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err), NAV_OK);
    ck_assert_uint_ge(w.out[0].ncorners, 2);
    ck_assert_float_eq_tol(w.out[0].corners[0][0], 10.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].corners[0][2], 2.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].corners[1][0], 11.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].corners[1][2], 11.0f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].desired_vel[0], 0.29462f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].desired_vel[2], 1.97818f, 1e-4f);
    /* farther from A (1.5 m, beyond 0.6), it steers at A: from (8.5, 0.5),
       (1.5, 1.5) / 2.1213 * 2 = (1.41421, 1.41421) */
    w.in[0] = agent_at(8.5f, 0.5f, NAV_BEHAVIOR_SEEK);
    set_target(&w.in[0], 11, 11);
    ck_assert_int_eq(nav_step(w.s, m, w.q, NULL, &w.p, w.in, 1, w.obs, 0, w.out, &err), NAV_OK);
    ck_assert_float_eq_tol(w.out[0].desired_vel[0], 1.41421f, 1e-4f);
    ck_assert_float_eq_tol(w.out[0].desired_vel[2], 1.41421f, 1e-4f);
    sim_free(&w);
    nav_mesh_free(m);
}
END_TEST

extern Suite *nav_steer_suite(void);
Suite *nav_steer_suite(void) {
    Suite *s = suite_create("nav_steer");
    TCase *mv = tcase_create("move");
    tcase_add_test(mv, move_inside_and_across_portals);
    tcase_add_test(mv, move_slides_along_wall);
    tcase_add_test(mv, move_around_l_corner_clamps);
    tcase_add_test(mv, move_follows_ramp_height);
    tcase_add_test(mv, move_rejects_bad_input);
    tcase_add_test(mv, move_property_random_meshes);
    tcase_add_test(mv, snap_equals_nearest);
    suite_add_tcase(s, mv);
    TCase *st = tcase_create("step");
    tcase_add_test(st, names_and_parse);
    tcase_add_test(st, invalid_params_rejected);
    tcase_add_test(st, off_mesh_agent_gets_own_error);
    tcase_add_test(st, alone_no_avoidance);
    tcase_add_test(st, pressed_against_wall_slides);
    tcase_add_test(st, arrive_stops_without_oscillation);
    tcase_add_test(st, zigzag_progress_never_backwards);
    tcase_add_test(st, flee_gains_distance_until_blocked);
    tcase_add_test(st, flee_not_pinned_to_wall);
    tcase_add_test(st, hide_behind_obstacle);
    tcase_add_test(st, pursue_beats_seek);
    tcase_add_test(st, crate_is_passed_around);
    tcase_add_test(st, link_yields_action);
    tcase_add_test(st, determinism_bit_identical);
    tcase_add_test(st, crowd_crossing_corridor);
    tcase_add_test(st, opposing_groups_swap_corridor);
    tcase_add_test(st, wedged_fast_agent_keeps_its_way);
    tcase_add_test(st, walkers_push_through_standing_block);
    tcase_add_test(st, property_random_meshes_stay_on_mesh);
    tcase_add_test(st, avoiding_keeps_requested_behavior);
    tcase_add_test(st, corners_two_near_the_end);
    tcase_add_test(st, corners_far_are_the_path);
    tcase_add_test(st, separation_within_speed_budget);
    tcase_add_test(st, property_random_crowds_speed_budget);
    tcase_add_test(st, property_random_crowds_accel_limit);
    tcase_add_test(st, avoidance_respects_wall_boundary);
    tcase_add_test(st, wander_deterministic_and_moves);
    tcase_add_test(st, evade_uses_target_velocity);
    tcase_add_test(st, hide_picks_nearest_hidden_spot);
    tcase_add_test(st, link_used_backwards_swaps_action);
    tcase_add_test(st, seek_lands_on_target);
    tcase_add_test(st, steers_toward_b_when_a_is_near);
    suite_add_tcase(s, st);
    return s;
}
