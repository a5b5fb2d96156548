/*
 * check_step_avoid: "debug": true on POST .../step returns each sampling
 * agent's avoidance candidates (issue 17), against the real navd binary.
 *
 * The mesh is an open 20 m square [0,20]^2 at y = 0 (one quad): no wall is
 * within reach of the agents below, so only the other agent shapes the
 * penalties. Two agents of radius 0.5 and max_speed 2 face each other on
 * z = 10, 4 m apart, each already moving at 1.5 m/s toward the other and
 * seeking a target behind it: their desired velocities, (2,0,0) and
 * (-2,0,0), meet head on (rim gap 3 m closed at 4 m/s: contact after 0.75 s,
 * within the 2 s horizon), so both sample. What follows is read off the
 * sampling pattern (nav/nav_steer_avoid.c), not off an earlier answer:
 * the first candidate is the desired velocity, the second rest; the rings
 * sit at half and full max_speed on both sides of the desired direction;
 * nothing leaves the max_speed disc; the choice is the first candidate of
 * least penalty; and the chosen pair of velocities no longer collides.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh.h"
#include "nav/nav_query.h"
#include "nav/nav_steer.h"
#include "test_fixtures.h"
#include "test_http.h"

static const char SQUARE[] = "{\"vertices\":[[0,0,0],[20,0,0],[20,0,20],[0,0,20]],"
                             "\"polygons\":[[0,1,2,3]]}";

#define AGENT_A                                                                                    \
    "{\"id\":\"a\",\"position\":[8,0,10],\"velocity\":[1.5,0,0],\"radius\":0.5,"                   \
    "\"max_speed\":2,\"max_accel\":8,\"behavior\":\"seek\",\"target\":[16,0,10]}"
#define AGENT_B                                                                                    \
    "{\"id\":\"b\",\"position\":[12,0,10],\"velocity\":[-1.5,0,0],\"radius\":0.5,"                 \
    "\"max_speed\":2,\"max_accel\":8,\"behavior\":\"seek\",\"target\":[4,0,10]}"
/* alone in a far corner: no neighbour within any range */
#define AGENT_LONE                                                                                 \
    "{\"id\":\"lone\",\"position\":[2,0,2],\"velocity\":[0,0,0],\"radius\":0.5,"                   \
    "\"max_speed\":2,\"max_accel\":8,\"behavior\":\"seek\",\"target\":[2,0,6]}"

static th_server srv;

static void start_with(const char *cap) {
    const char *extra[] = {"--max-step-debug-samples", cap, NULL};
    ck_assert_msg(th_start(&srv, NULL, cap ? extra : NULL) == 0, "navd did not start");
    th_response r;
    th_json(srv.port, "PUT", "/v1/navmeshes/square", SQUARE, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
}

static void start_srv(void) {
    start_with(NULL);
}

static void stop_srv(void) {
    int rc = th_stop(&srv);
    th_cleanup(&srv);
    ck_assert_int_eq(rc, 0);
}

/* The raw 200 body of a step (caller frees). */
static char *step_text(const char *body) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/square/step", body, &r), 0);
    ck_assert_msg(r.status == 200, "status %d: %.300s", r.status, r.body);
    char *t = malloc(r.body_len + 1);
    memcpy(t, r.body, r.body_len);
    t[r.body_len] = '\0';
    th_response_free(&r);
    return t;
}

static json_t *step_json(const char *body) {
    char *t = step_text(body);
    json_error_t je;
    json_t *j = json_loads(t, 0, &je);
    ck_assert_msg(j != NULL, "not JSON: %.200s", t);
    free(t);
    return j;
}

static double at(const json_t *a, size_t i) {
    return json_number_value(json_array_get(a, i));
}

/* Smallest centre distance over [0, 2 s] of two discs starting at pa, pb
   (xz) moving at va, vb: the closest approach of the relative motion. */
static double closest(const double pa[2], const double va[2], const double pb[2],
                      const double vb[2]) {
    double rx = pb[0] - pa[0], rz = pb[1] - pa[1];
    double vx = vb[0] - va[0], vz = vb[1] - va[1];
    double vv = vx * vx + vz * vz;
    double t = vv > 0.0 ? -(rx * vx + rz * vz) / vv : 0.0;
    t = t < 0.0 ? 0.0 : (t > 2.0 ? 2.0 : t);
    double dx = rx + vx * t, dz = rz + vz * t;
    return sqrt(dx * dx + dz * dz);
}

/* Checks one agent's avoidance against the pattern; returns chosen (xz). */
static void check_samples(const json_t *agent, double dvx, double chosen[2]) {
    const json_t *av = json_object_get(agent, "avoidance");
    ck_assert_msg(json_is_object(av), "agent %s has no avoidance",
                  json_string_value(json_object_get(agent, "id")));
    const json_t *s = json_object_get(av, "samples");
    size_t n = json_array_size(s);
    ck_assert_msg(n >= 2 + 12 && n <= 32, "%zu samples", n);
    /* 1st: the desired velocity; 2nd: rest */
    ck_assert(fabs(at(json_array_get(s, 0), 0) - dvx) < 1e-5);
    ck_assert(fabs(at(json_array_get(s, 0), 2)) < 1e-5);
    ck_assert(at(json_array_get(s, 1), 0) == 0.0 && at(json_array_get(s, 1), 2) == 0.0);
    double best = INFINITY;
    size_t arg = 0, left = 0, right = 0, half = 0, full = 0;
    for (size_t k = 0; k < n; k++) {
        const json_t *e = json_array_get(s, k);
        ck_assert_int_eq(json_array_size(e), 4);
        double x = at(e, 0), y = at(e, 1), z = at(e, 2), p = at(e, 3);
        double sp = sqrt(x * x + z * z);
        ck_assert_msg(sp <= 2.0 * 1.0001 + 1e-6, "sample %zu speed %g > max_speed", k, sp);
        ck_assert(y == 0.0);
        ck_assert_msg(isfinite(p) && p >= 0.0, "sample %zu penalty %g", k, p);
        if (p < best) {
            best = p;
            arg = k;
        }
        left += z > 0.1;
        right += z < -0.1;
        half += fabs(sp - 1.0) < 1e-4;
        full += fabs(sp - 2.0) < 1e-4;
    }
    /* the rings: at half and full speed, on both sides of the desired way */
    ck_assert_msg(left >= 4 && right >= 4, "left %zu right %zu", left, right);
    ck_assert_msg(half >= 6 && full >= 6, "half %zu full %zu", half, full);
    const json_t *c = json_object_get(av, "chosen");
    const json_t *m = json_array_get(s, arg);
    ck_assert_msg(at(c, 0) == at(m, 0) && at(c, 1) == at(m, 1) && at(c, 2) == at(m, 2),
                  "chosen (%g,%g) is not the argmin sample %zu (%g,%g)", at(c, 0), at(c, 2), arg,
                  at(m, 0), at(m, 2));
    chosen[0] = at(c, 0);
    chosen[1] = at(c, 2);
}

START_TEST(debug_head_on_samples) {
    json_t *j = step_json("{\"dt\":0.1,\"debug\":true,\"agents\":[" AGENT_A "," AGENT_B "]}");
    const json_t *ag = json_object_get(j, "agents");
    double ca[2], cb[2];
    check_samples(json_array_get(ag, 0), 2.0, ca);
    check_samples(json_array_get(ag, 1), -2.0, cb);
    /* desired velocities collide (closest approach 0 < 1 m of radii);
       the chosen ones turn aside, to opposite sides (both keep right),
       and pass farther apart than the head-on course */
    const double pa[2] = {8, 10}, pb[2] = {12, 10};
    const double da[2] = {2, 0}, db[2] = {-2, 0};
    ck_assert(closest(pa, da, pb, db) < 1e-9);
    ck_assert_msg(fabs(ca[1]) > 0.1 && fabs(cb[1]) > 0.1, "no lateral turn: %g %g", ca[1], cb[1]);
    ck_assert_msg(ca[1] * cb[1] < 0.0, "both turned the same way: %g %g", ca[1], cb[1]);
    ck_assert_msg(closest(pa, ca, pb, cb) > 0.5, "still too close: %g", closest(pa, ca, pb, cb));
    ck_assert(json_is_true(json_object_get(json_array_get(ag, 0), "avoiding")));
    json_decref(j);
}
END_TEST

/* A lone agent has no neighbour: avoidance does not run, no "avoidance". */
START_TEST(debug_absent_without_neighbours) {
    json_t *j = step_json("{\"dt\":0.1,\"debug\":true,\"agents\":[" AGENT_LONE "," AGENT_A
                          "," AGENT_B "]}");
    const json_t *ag = json_object_get(j, "agents");
    ck_assert_ptr_null(json_object_get(json_array_get(ag, 0), "avoidance"));
    ck_assert_ptr_nonnull(json_object_get(json_array_get(ag, 1), "avoidance"));
    json_decref(j);
    /* avoidance off: nobody samples */
    j = step_json("{\"dt\":0.1,\"debug\":true,\"avoidance\":false,\"agents\":[" AGENT_A "," AGENT_B
                  "]}");
    ag = json_object_get(j, "agents");
    ck_assert_ptr_null(json_object_get(json_array_get(ag, 0), "avoidance"));
    ck_assert_ptr_null(json_object_get(json_array_get(ag, 1), "avoidance"));
    json_decref(j);
}
END_TEST

/* Removes every ,"avoidance":{...} (its value holds arrays only). */
static void strip_avoidance(char *t) {
    static const char key[] = ",\"avoidance\":{";
    char *p;
    while ((p = strstr(t, key)) != NULL) {
        char *e = strchr(p + sizeof key - 1, '}');
        ck_assert_ptr_nonnull(e);
        memmove(p, e + 1, strlen(e + 1) + 1);
    }
}

/* Feeds a step's positions and velocities back as the next request's. */
static void next_body(char *body, size_t cap, const char *text, int debug) {
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    ck_assert_ptr_nonnull(j);
    const json_t *ag = json_object_get(j, "agents");
    const double tx[2] = {16, 4};
    int n = snprintf(body, cap, "{\"dt\":0.1,%s\"agents\":[", debug ? "\"debug\":true," : "");
    for (size_t i = 0; i < 2; i++) {
        const json_t *a = json_array_get(ag, i);
        const json_t *p = json_object_get(a, "position"), *v = json_object_get(a, "velocity");
        n +=
            snprintf(body + n, cap - (size_t)n,
                     "%s{\"id\":\"%c\",\"position\":[%.9g,%.9g,%.9g],\"velocity\":[%.9g,%.9g,%.9g],"
                     "\"radius\":0.5,\"max_speed\":2,\"max_accel\":8,\"behavior\":\"seek\","
                     "\"target\":[%g,0,10]}",
                     i ? "," : "", (int)('a' + i), at(p, 0), at(p, 1), at(p, 2), at(v, 0), at(v, 1),
                     at(v, 2), tx[i]);
    }
    snprintf(body + n, cap - (size_t)n, "]}");
    json_decref(j);
}

/* Recording changes no byte: the same closed loop of 30 ticks with and
   without "debug" (the latter through the fast body reader) gives the same
   agents, byte for byte, once the "avoidance" members are taken out. */
START_TEST(debug_changes_no_byte) {
    char plain[2048], dbg[2048];
    snprintf(plain, sizeof plain, "{\"dt\":0.1,\"agents\":[" AGENT_A "," AGENT_B "]}");
    snprintf(dbg, sizeof dbg, "{\"dt\":0.1,\"debug\":true,\"agents\":[" AGENT_A "," AGENT_B "]}");
    int sampled = 0;
    for (int tick = 0; tick < 30; tick++) {
        char *a = step_text(plain), *b = step_text(dbg);
        ck_assert_ptr_null(strstr(a, "avoidance"));
        sampled += strstr(b, "\"avoidance\":{") != NULL;
        strip_avoidance(b);
        ck_assert_msg(strcmp(a, b) == 0, "tick %d differs:\n%s\n%s", tick, a, b);
        next_body(plain, sizeof plain, a, 0);
        next_body(dbg, sizeof dbg, a, 1);
        free(a);
        free(b);
    }
    ck_assert_msg(sampled >= 3, "only %d ticks sampled", sampled);
    /* "debug": false is the plain answer too */
    char *a = step_text("{\"dt\":0.1,\"agents\":[" AGENT_A "," AGENT_B "]}");
    char *b = step_text("{\"dt\":0.1,\"debug\":false,\"agents\":[" AGENT_A "," AGENT_B "]}");
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

START_TEST(debug_bad_value) {
    th_response r;
    th_json(srv.port, "POST", "/v1/navmeshes/square/step",
            "{\"dt\":0.1,\"debug\":1,\"agents\":[" AGENT_A "]}", &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.body, "debug"), "message does not name debug: %s", r.body);
    th_response_free(&r);
}
END_TEST

/* --max-step-debug-samples 40: the first sampling agent (at most 32 samples)
   fits; the second gets "avoidance_omitted" exactly when both together
   exceed 40. With 0, every sampling agent is omitted. */
START_TEST(debug_cap) {
    start_with("40");
    json_t *j = step_json("{\"dt\":0.1,\"debug\":true,\"agents\":[" AGENT_A "," AGENT_B "]}");
    const json_t *ag = json_object_get(j, "agents");
    const json_t *a = json_array_get(ag, 0), *b = json_array_get(ag, 1);
    size_t na = json_array_size(json_object_get(json_object_get(a, "avoidance"), "samples"));
    ck_assert(na >= 14 && na <= 32);
    const json_t *bav = json_object_get(b, "avoidance");
    if (bav) {
        ck_assert(na + json_array_size(json_object_get(bav, "samples")) <= 40);
        ck_assert_ptr_null(json_object_get(b, "avoidance_omitted"));
    } else {
        ck_assert(json_is_true(json_object_get(b, "avoidance_omitted")));
    }
    json_decref(j);
    stop_srv();
    start_with("0");
    j = step_json("{\"dt\":0.1,\"debug\":true,\"agents\":[" AGENT_A "," AGENT_B "]}");
    ag = json_object_get(j, "agents");
    for (size_t i = 0; i < 2; i++) {
        ck_assert_ptr_null(json_object_get(json_array_get(ag, i), "avoidance"));
        ck_assert(json_is_true(json_object_get(json_array_get(ag, i), "avoidance_omitted")));
    }
    json_decref(j);
    stop_srv();
}
END_TEST

/* The engine alone, on two threads: 320 agents in two groups crossing a
   40 m square for 25 ticks, stepped twice from the same inputs, once with
   records and once without (separate scratch, so no memo is shared): the
   outputs are the same bytes every tick, and every record is sound: the
   chosen sample is the first of least penalty, penalties finite and >= 0,
   samples within max_speed. */
START_TEST(nav_records_change_nothing) {
    fx_builder *b = fx_new();
    for (int x = 0; x < 40; x += 4)
        for (int z = 0; z < 40; z += 4)
            fx_quad(b, (float)x, (float)z, (float)x + 4, (float)z + 4, 0, 0);
    nav_mesh *m = fx_build(b);
    ck_assert_ptr_nonnull(m);
    enum { N = 320, TICKS = 25 };
    nav_steer *s1 = nav_steer_new(N, 1), *s2 = nav_steer_new(N, 1);
    nav_query *q1 = nav_query_new(4096), *q2 = nav_query_new(4096);
    nav_agent_in *in = calloc(N, sizeof *in);
    nav_agent_out *o1 = calloc(N, sizeof *o1), *o2 = calloc(N, sizeof *o2);
    nav_avoid_record *rec = malloc(N * sizeof *rec);
    ck_assert(s1 && s2 && q1 && q2 && in && o1 && o2 && rec);
    for (uint32_t i = 0; i < N; i++) {
        int left = i % 2 == 0;
        float row = (float)(i / 2 % 16), col = (float)(i / 32);
        in[i].pos[0] = left ? 2.0f + col * 1.2f : 38.0f - col * 1.2f;
        in[i].pos[2] = 2.0f + row * 2.3f + (left ? 0.0f : 0.6f);
        in[i].radius = 0.4f;
        in[i].max_speed = 2.0f;
        in[i].max_accel = 8.0f;
        in[i].behavior = NAV_BEHAVIOR_SEEK;
        in[i].has_target = true;
        in[i].target[0] = left ? 38.0f : 2.0f;
        in[i].target[2] = in[i].pos[2];
    }
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.1f;
    p.threads = 2;
    uint32_t sampled = 0;
    for (int t = 0; t < TICKS; t++) {
        nav_step_error e;
        p.avoid_debug = NULL;
        ck_assert_int_eq(nav_step(s1, m, q1, NULL, &p, in, N, NULL, 0, o1, &e), NAV_OK);
        p.avoid_debug = rec;
        ck_assert_int_eq(nav_step(s2, m, q2, NULL, &p, in, N, NULL, 0, o2, &e), NAV_OK);
        ck_assert_msg(memcmp(o1, o2, N * sizeof *o1) == 0, "tick %d: outputs differ", t);
        for (uint32_t i = 0; i < N; i++) {
            const nav_avoid_record *r = &rec[i];
            ck_assert_uint_le(r->nsamples, NAV_STEER_AVOID_SAMPLES);
            if (r->nsamples == 0)
                continue;
            sampled++;
            uint32_t arg = 0;
            for (uint32_t k = 0; k < r->nsamples; k++) {
                const float *sm = r->samples[k];
                ck_assert(isfinite(sm[3]) && sm[3] >= 0.0f);
                ck_assert(hypotf(sm[0], sm[2]) <= 2.0f * 1.0001f + 1e-5f);
                if (sm[3] < r->samples[arg][3])
                    arg = k;
            }
            ck_assert_uint_eq(r->chosen_index, arg);
            ck_assert(r->chosen[0] == r->samples[arg][0] && r->chosen[2] == r->samples[arg][2]);
        }
        for (uint32_t i = 0; i < N; i++) {
            memcpy(in[i].pos, o1[i].pos, sizeof in[i].pos);
            memcpy(in[i].vel, o1[i].vel, sizeof in[i].vel);
        }
    }
    ck_assert_msg(sampled > 100, "only %u agent-ticks sampled", sampled);
    free(rec);
    free(o2);
    free(o1);
    free(in);
    nav_query_free(q2);
    nav_query_free(q1);
    nav_steer_free(s2);
    nav_steer_free(s1);
    nav_mesh_free(m);
}
END_TEST

extern Suite *step_avoid_suite(void);
Suite *step_avoid_suite(void) {
    Suite *s = suite_create("step_avoid");
    TCase *tc = tcase_create("debug");
    tcase_add_unchecked_fixture(tc, start_srv, stop_srv);
    tcase_add_test(tc, debug_head_on_samples);
    tcase_add_test(tc, debug_absent_without_neighbours);
    tcase_add_test(tc, debug_changes_no_byte);
    tcase_add_test(tc, debug_bad_value);
    suite_add_tcase(s, tc);
    TCase *cap = tcase_create("cap");
    tcase_add_test(cap, debug_cap);
    suite_add_tcase(s, cap);
    TCase *eng = tcase_create("engine");
    tcase_add_test(eng, nav_records_change_nothing);
    suite_add_tcase(s, eng);
    return s;
}
