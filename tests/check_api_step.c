/*
 * check_api_step: POST /v1/navmeshes/{name}/step against the real navd
 * binary (tests/test_http.h): the response shape, per-agent errors, field
 * errors named as the client wrote them, the --max-agents limit, byte-
 * identical answers to identical requests, the link action, a short
 * closed loop in which the test plays the game server over HTTP, and the
 * contract's promises on behavior, corners and speed.
 *
 * Meshes are written out by hand, with the geometry the expectations are
 * derived from next to them.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_http.h"

/* Corridor [0,10] x [0,2] at y = 0 as 5 quads of 2 m (x lines 0..10). */
static const char CORRIDOR[] =
    "{\"vertices\":[[0,0,0],[2,0,0],[4,0,0],[6,0,0],[8,0,0],[10,0,0],"
    "[0,0,2],[2,0,2],[4,0,2],[6,0,2],[8,0,2],[10,0,2]],"
    "\"polygons\":[[0,1,7,6],[1,2,8,7],[2,3,9,8],[3,4,10,9],[4,5,11,10]]}";

/* Islands [0,4]x[0,4] and [10,14]x[0,4] joined by a one-way "jump" link
   (3.5, 0, 2) -> (10.5, 0, 2) of radius 0.5. */
static const char ISLANDS[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4],[10,0,0],[14,0,0],[14,0,4],[10,0,4]],"
    "\"polygons\":[[0,1,2,3],[4,5,6,7]],"
    "\"links\":[{\"start\":[3.5,0,2],\"end\":[10.5,0,2],\"radius\":0.5,\"bidirectional\":false,"
    "\"kind\":\"jump\"}]}";

/* A ring: the 6 m x 6 m square [0,6]^2 at y = 0 in 2 m quads, the centre
   quad [2,4]^2 cut out. Polygon 1 (x in [2,4], z in [0,2], the bottom
   middle) is area 1, the rest area 0. From (1,0,1) to (5,0,1) the straight
   way runs along the bottom row through polygon 1 (2 m of it); the other
   way goes up the left column, along the top row and down the right
   column, around the inner corners (2,0,4) and (4,0,4): 2 sqrt(10) + 2 =
   8.32 m. */
static const char RING[] =
    "{\"vertices\":[[0,0,0],[2,0,0],[4,0,0],[6,0,0],[0,0,2],[2,0,2],[4,0,2],[6,0,2],"
    "[0,0,4],[2,0,4],[4,0,4],[6,0,4],[0,0,6],[2,0,6],[4,0,6],[6,0,6]],"
    "\"polygons\":[[0,1,5,4],[1,2,6,5],[2,3,7,6],[4,5,9,8],[6,7,11,10],[8,9,13,12],"
    "[9,10,14,13],[10,11,15,14]],\"areas\":[0,1,0,0,0,0,0,0]}";

static th_server srv;

static void start_srv(void) {
    static const char *const extra[] = {"--max-agents", "4", NULL};
    ck_assert_msg(th_start(&srv, NULL, extra) == 0, "navd did not start");
    th_response r;
    th_json(srv.port, "PUT", "/v1/navmeshes/corridor", CORRIDOR, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    th_json(srv.port, "PUT", "/v1/navmeshes/islands", ISLANDS, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    th_json(srv.port, "PUT", "/v1/navmeshes/ring", RING, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
}

static void stop_srv(void) {
    int rc = th_stop(&srv);
    th_cleanup(&srv);
    ck_assert_int_eq(rc, 0);
}

static json_t *post_step(const char *mesh, const char *body, int want_status, th_response *keep) {
    char path[128];
    snprintf(path, sizeof path, "/v1/navmeshes/%s/step", mesh);
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "POST", path, body, &r), 0);
    ck_assert_msg(r.status == want_status, "status %d, expected %d: %.300s", r.status, want_status,
                  r.body);
    json_error_t je;
    json_t *j = json_loadb(r.body, r.body_len, 0, &je);
    ck_assert_msg(j != NULL, "not JSON: %.200s", r.body);
    if (keep)
        *keep = r;
    else
        th_response_free(&r);
    return j;
}

static void assert_error(const char *mesh, const char *body, int status, const char *code,
                         const char *message) {
    json_t *j = post_step(mesh, body, status, NULL);
    json_t *e = json_object_get(j, "error");
    ck_assert_str_eq(json_string_value(json_object_get(e, "code")), code);
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_msg(msg && strstr(msg, message), "message '%s' lacks '%s'", msg, message);
    json_decref(j);
}

static double at(const json_t *arr, size_t i) {
    return json_number_value(json_array_get(arr, i));
}

/* Three agents: a seeker on the mesh, one 50 m away (off the mesh) and an
   idle one. The seeker moves toward +x, the idle one stays; the lost one
   gets its own point_off_mesh error with its id. */
START_TEST(step_shape_and_per_agent_error) {
    const char *body = "{\"dt\":0.1,\"agents\":["
                       "{\"id\":\"orc-1\",\"position\":[1,0,1],\"velocity\":[0,0,0],"
                       "\"radius\":0.3,\"max_speed\":2,\"max_accel\":10,\"behavior\":\"seek\","
                       "\"target\":[9,0,1]},"
                       "{\"id\":\"lost\",\"position\":[50,0,50],\"behavior\":\"idle\"},"
                       "{\"id\":\"rock\",\"position\":[5,0,1.5],\"radius\":0.3}]}";
    json_t *j = post_step("corridor", body, 200, NULL);
    json_t *agents = json_object_get(j, "agents");
    ck_assert_int_eq(json_array_size(agents), 3);

    json_t *a = json_array_get(agents, 0);
    ck_assert_str_eq(json_string_value(json_object_get(a, "id")), "orc-1");
    /* from rest with max_accel 10 and dt 0.1 the speed is at most 1 m/s: the
       agent moves at most 0.1 m along +x, staying at z = 1 */
    json_t *pos = json_object_get(a, "position");
    ck_assert(at(pos, 0) > 1.0 && at(pos, 0) <= 1.1 + 1e-6);
    ck_assert_double_eq_tol(at(pos, 2), 1.0, 1e-6);
    ck_assert_double_eq_tol(at(json_object_get(a, "velocity"), 0), 1.0, 1e-4);
    ck_assert_double_eq_tol(at(json_object_get(a, "desired_velocity"), 0), 2.0, 1e-4);
    /* the straight path's only corner ahead is its end (9, 0, 1), repeated:
       the contract promises two or more */
    json_t *corners = json_object_get(a, "corners");
    ck_assert_int_eq(json_array_size(corners), 2);
    for (size_t c = 0; c < 2; c++) {
        ck_assert_double_eq_tol(at(json_array_get(corners, c), 0), 9.0, 1e-4);
        ck_assert_double_eq_tol(at(json_array_get(corners, c), 2), 1.0, 1e-4);
    }
    ck_assert_str_eq(json_string_value(json_object_get(a, "behavior")), "seek");
    ck_assert(json_is_false(json_object_get(a, "avoiding")));
    ck_assert(json_is_false(json_object_get(a, "arrived")));
    ck_assert_int_eq(json_integer_value(json_object_get(a, "polygon")), 0);
    ck_assert(json_is_null(json_object_get(a, "action")));

    json_t *lost = json_array_get(agents, 1);
    ck_assert_str_eq(json_string_value(json_object_get(lost, "id")), "lost");
    json_t *err = json_object_get(lost, "error");
    ck_assert_str_eq(json_string_value(json_object_get(err, "code")), "point_off_mesh");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(err, "message")), "agents[1].position"));
    ck_assert_ptr_null(json_object_get(lost, "position"));

    /* default behaviour without a target: idle, stays where it is; no path,
       so no corners */
    json_t *rock = json_array_get(agents, 2);
    ck_assert_str_eq(json_string_value(json_object_get(rock, "behavior")), "idle");
    ck_assert_int_eq(json_array_size(json_object_get(rock, "corners")), 0);
    ck_assert_double_eq_tol(at(json_object_get(rock, "position"), 0), 5.0, 1e-6);
    json_decref(j);
}
END_TEST

/* extents with a 0 component is a flat box, as for every query (api.md:
   each >= 0). In the corridor (flat at y = 0) a seeker at (1,0,1) on the
   surface snaps with extents (1,0,1) to itself in polygon 0 and heads for
   (9,0,1): the path is straight, its corners are the end twice, as with the
   default extents above. A negative extent is still refused by name. */
START_TEST(step_zero_extents) {
    const char *body = "{\"dt\":0.1,\"extents\":[1,0,1],\"agents\":["
                       "{\"id\":\"a\",\"position\":[1,0,1],\"velocity\":[0,0,0],"
                       "\"radius\":0.3,\"max_speed\":2,\"max_accel\":10,\"behavior\":\"seek\","
                       "\"target\":[9,0,1]}]}";
    json_t *j = post_step("corridor", body, 200, NULL);
    json_t *a = json_array_get(json_object_get(j, "agents"), 0);
    ck_assert_ptr_null(json_object_get(a, "error"));
    ck_assert_int_eq(json_integer_value(json_object_get(a, "polygon")), 0);
    json_t *corners = json_object_get(a, "corners");
    ck_assert_int_eq(json_array_size(corners), 2);
    ck_assert_double_eq_tol(at(json_array_get(corners, 0), 0), 9.0, 1e-4);
    ck_assert_double_eq_tol(at(json_array_get(corners, 0), 2), 1.0, 1e-4);
    json_decref(j);
    assert_error("corridor", "{\"dt\":0.1,\"extents\":[1,-1,1],\"agents\":[]}", 400, "bad_request",
                 "extents[1] must be a finite number >= 0");
}
END_TEST

/* The same request twice: byte-identical bodies. */
START_TEST(step_deterministic_bytes) {
    const char *body = "{\"dt\":0.05,\"agents\":["
                       "{\"id\":\"a\",\"position\":[1,0,1],\"behavior\":\"arrive\","
                       "\"target\":[9,0,1.2],\"velocity\":[1,0,0.1]},"
                       "{\"id\":\"b\",\"position\":[2,0,1.1],\"behavior\":\"wander\","
                       "\"velocity\":[-1,0,0]},"
                       "{\"id\":\"c\",\"position\":[8,0,1],\"behavior\":\"flee\","
                       "\"threat\":[7,0,1]},"
                       "{\"id\":\"d\",\"position\":[3,0,0.9],\"behavior\":\"pursue\","
                       "\"target\":[9,0,1],\"target_velocity\":[0,0,0.5]}],"
                       "\"obstacles\":[{\"position\":[5,0,1],\"velocity\":[0,0,0],"
                       "\"radius\":0.4}]}";
    th_response r1, r2;
    json_decref(post_step("corridor", body, 200, &r1));
    json_decref(post_step("corridor", body, 200, &r2));
    ck_assert_uint_eq(r1.body_len, r2.body_len);
    ck_assert_int_eq(memcmp(r1.body, r2.body, r1.body_len), 0);
    th_response_free(&r1);
    th_response_free(&r2);
    /* "cache": false (fresh searches, independent of any history): same again */
    char nocache[1400];
    snprintf(nocache, sizeof nocache, "{\"cache\":false,%s", body + 1);
    json_decref(post_step("corridor", nocache, 200, &r1));
    json_decref(post_step("corridor", nocache, 200, &r2));
    ck_assert_uint_eq(r1.body_len, r2.body_len);
    ck_assert_int_eq(memcmp(r1.body, r2.body, r1.body_len), 0);
    th_response_free(&r1);
    th_response_free(&r2);
}
END_TEST

START_TEST(step_field_errors) {
    assert_error("corridor", "{\"agents\":[]}", 400, "bad_request", "dt is required");
    assert_error("corridor", "{\"dt\":0,\"agents\":[]}", 400, "bad_request",
                 "dt must be a finite number in (0, 1]");
    assert_error("corridor", "{\"dt\":0.1}", 400, "bad_request", "agents must be an array");
    assert_error("corridor",
                 "{\"dt\":0.1,\"agents\":[{\"position\":[1,0,1]},"
                 "{\"position\":[1,\"x\",1]}]}",
                 400, "bad_request", "agents[1].position[1] is not a finite number");
    assert_error("corridor", "{\"dt\":0.1,\"agents\":[{\"position\":[1,0,1],\"radius\":0}]}", 400,
                 "bad_request", "agents[0].radius must be a finite number > 0");
    assert_error("corridor",
                 "{\"dt\":0.1,\"agents\":[{\"position\":[1,0,1],\"behavior\":\"dance\"}]}", 400,
                 "bad_request", "agents[0].behavior must be one of");
    assert_error("corridor",
                 "{\"dt\":0.1,\"agents\":[{\"position\":[1,0,1],\"behavior\":\"seek\"}]}", 400,
                 "bad_request", "agents[0].target is required");
    assert_error("corridor", "{\"dt\":0.1,\"agents\":[],\"obstacles\":[{\"position\":[1,0,1]}]}",
                 400, "bad_request", "obstacles[0].radius is required");
    assert_error("corridor", "{\"dt\":0.1,\"agents\":[", 400, "invalid_json", "");
    assert_error("nowhere", "{\"dt\":0.1,\"agents\":[]}", 404, "not_found", "");
    /* --max-agents 4 */
    assert_error("corridor",
                 "{\"dt\":0.1,\"agents\":[{\"position\":[1,0,1]},{\"position\":[2,0,1]},"
                 "{\"position\":[3,0,1]},{\"position\":[4,0,1]},{\"position\":[5,0,1]}]}",
                 413, "payload_too_large", "at most 4");
}
END_TEST

/* The contract's `step` section, over HTTP. In the 2 m corridor:
   - two seekers 2 m apart walk head-on at 2 m/s (radius 0.3): avoidance
     steers them past each other (`avoiding` true), and `behavior` stays
     "seek", one of the eight values a client can switch on;
   - an arrive 1 m from its target (1, 0, 1) -> (2, 0, 1): the path is
     straight, its only corner ahead is the end: corners are exactly
     [[2,0,1],[2,0,1]] (two or more);
   then two idle agents with max_speed 0, radius 0.5, 0.6 m apart at
   (6, 0, 1) and (6.6, 0, 1): speed is limited by max_speed, so neither
   moves (displacement <= 0 * dt) and both report velocity [0, 0, 0]. */
START_TEST(step_contract_enum_corners_speed) {
    const char *body = "{\"dt\":0.05,\"agents\":["
                       "{\"id\":\"w\",\"position\":[4,0,1],\"velocity\":[2,0,0],\"radius\":0.3,"
                       "\"max_speed\":2,\"behavior\":\"seek\",\"target\":[9.5,0,1]},"
                       "{\"id\":\"e\",\"position\":[6,0,1],\"velocity\":[-2,0,0],\"radius\":0.3,"
                       "\"max_speed\":2,\"behavior\":\"seek\",\"target\":[0.5,0,1]},"
                       "{\"id\":\"near\",\"position\":[1,0,1],\"radius\":0.3,"
                       "\"behavior\":\"arrive\",\"target\":[2,0,1]}]}";
    json_t *j = post_step("corridor", body, 200, NULL);
    json_t *agents = json_object_get(j, "agents");
    ck_assert_int_eq(json_array_size(agents), 3);
    bool any_avoiding = false;
    for (size_t i = 0; i < 2; i++) {
        json_t *a = json_array_get(agents, i);
        ck_assert_str_eq(json_string_value(json_object_get(a, "behavior")), "seek");
        any_avoiding = any_avoiding || json_is_true(json_object_get(a, "avoiding"));
    }
    ck_assert_msg(any_avoiding, "the head-on pair did not avoid: the test shows nothing");
    json_t *corners = json_object_get(json_array_get(agents, 2), "corners");
    ck_assert_int_eq(json_array_size(corners), 2);
    for (size_t c = 0; c < 2; c++) {
        json_t *p = json_array_get(corners, c);
        ck_assert_double_eq_tol(at(p, 0), 2.0, 1e-6);
        ck_assert_double_eq_tol(at(p, 1), 0.0, 1e-6);
        ck_assert_double_eq_tol(at(p, 2), 1.0, 1e-6);
    }
    json_decref(j);

    body = "{\"dt\":0.05,\"agents\":["
           "{\"id\":\"s1\",\"position\":[6,0,1],\"radius\":0.5,\"max_speed\":0},"
           "{\"id\":\"s2\",\"position\":[6.6,0,1],\"radius\":0.5,\"max_speed\":0}]}";
    j = post_step("corridor", body, 200, NULL);
    agents = json_object_get(j, "agents");
    for (size_t i = 0; i < 2; i++) {
        json_t *a = json_array_get(agents, i);
        json_t *p = json_object_get(a, "position"), *v = json_object_get(a, "velocity");
        ck_assert_double_eq_tol(at(p, 0), i ? 6.6 : 6.0, 1e-6);
        ck_assert_double_eq_tol(at(p, 2), 1.0, 1e-6);
        ck_assert_double_eq_tol(hypot(at(v, 0), at(v, 2)), 0.0, 1e-9);
    }
    json_decref(j);
}
END_TEST

/* Seek across the link: at its start the agent gets the action
   {"type": "jump", "start": [3.5,0,2], "end": [10.5,0,2]} and is not moved
   across. The test feeds back position and velocity each tick. */
START_TEST(step_link_action_closed_loop) {
    double pos[3] = {1, 0, 2}, vel[3] = {0, 0, 0};
    json_t *action = NULL;
    for (int tick = 0; tick < 80 && !action; tick++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"dt\":0.1,\"agents\":[{\"id\":\"j\",\"position\":[%.9g,%.9g,%.9g],"
                 "\"velocity\":[%.9g,%.9g,%.9g],\"radius\":0.3,\"max_speed\":3,"
                 "\"behavior\":\"seek\",\"target\":[12,0,2]}]}",
                 pos[0], pos[1], pos[2], vel[0], vel[1], vel[2]);
        json_t *j = post_step("islands", body, 200, NULL);
        json_t *a = json_array_get(json_object_get(j, "agents"), 0);
        for (int k = 0; k < 3; k++) {
            pos[k] = at(json_object_get(a, "position"), (size_t)k);
            vel[k] = at(json_object_get(a, "velocity"), (size_t)k);
        }
        ck_assert(pos[0] <= 4.0 + 1e-6);
        json_t *act = json_object_get(a, "action");
        if (!json_is_null(act))
            action = json_incref(act);
        json_decref(j);
    }
    ck_assert_ptr_nonnull(action);
    ck_assert_str_eq(json_string_value(json_object_get(action, "type")), "jump");
    ck_assert_double_eq_tol(at(json_object_get(action, "start"), 0), 3.5, 1e-5);
    ck_assert_double_eq_tol(at(json_object_get(action, "end"), 0), 10.5, 1e-5);
    ck_assert(hypot(pos[0] - 3.5, pos[2] - 2) <= 0.5 + 1e-6);
    json_decref(action);
}
END_TEST

/* A counter of /metrics ("navd_path_cache_hits"), or -1 when absent. */
static long long metric(const char *series) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "GET", "/metrics", NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    long long v = -1;
    size_t n = strlen(series);
    for (const char *p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            v = strtoll(p + n + 1, NULL, 10);
    th_response_free(&r);
    return v;
}

/* The step endpoint goes through the process's path cache. On a mesh
   uploaded for this test alone (so no earlier request warmed its keys), a
   seeker at (3, 0, 1) (polygon 1 of the corridor, x in [2, 4]) heading for
   (7, 0, 1) (polygon 3) needs the corridor of the pair (1, 3): the first
   step searches and stores it (misses + 1, hits + 0), the same step again
   finds it (hits + 1, misses + 0), and with "cache": false it is searched
   without consulting the cache (both counters unchanged). The answers are
   the same bytes all three times. */
START_TEST(step_uses_path_cache) {
    th_response r;
    th_json(srv.port, "PUT", "/v1/navmeshes/cachecorr", CORRIDOR, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    const char *body = "{\"dt\":0.05,\"agents\":[{\"id\":\"s\",\"position\":[3,0,1],"
                       "\"behavior\":\"seek\",\"target\":[7,0,1]}]}";
    long long h0 = metric("navd_path_cache_hits"), m0 = metric("navd_path_cache_misses");
    ck_assert(h0 >= 0 && m0 >= 0);
    th_response r1, r2, r3;
    json_decref(post_step("cachecorr", body, 200, &r1));
    long long h1 = metric("navd_path_cache_hits"), m1 = metric("navd_path_cache_misses");
    ck_assert_int_eq(h1 - h0, 0);
    ck_assert_int_eq(m1 - m0, 1);
    json_decref(post_step("cachecorr", body, 200, &r2));
    long long h2 = metric("navd_path_cache_hits"), m2 = metric("navd_path_cache_misses");
    ck_assert_int_eq(h2 - h1, 1);
    ck_assert_int_eq(m2 - m1, 0);
    char nocache[256];
    snprintf(nocache, sizeof nocache, "{\"cache\":false,%s", body + 1);
    json_decref(post_step("cachecorr", nocache, 200, &r3));
    ck_assert_int_eq(metric("navd_path_cache_hits"), h2);
    ck_assert_int_eq(metric("navd_path_cache_misses"), m2);
    ck_assert_uint_eq(r1.body_len, r2.body_len);
    ck_assert_int_eq(memcmp(r1.body, r2.body, r1.body_len), 0);
    ck_assert_uint_eq(r1.body_len, r3.body_len);
    ck_assert_int_eq(memcmp(r1.body, r3.body, r1.body_len), 0);
    th_response_free(&r1);
    th_response_free(&r2);
    th_response_free(&r3);
}
END_TEST

/* The first corner of a seeker's answer on `mesh` for a step body that
   adds `opts` (",\"key\":value..." or "") to a one-agent request from
   `from` toward `to`, plus its desired velocity and `arrived`. */
static void seek_corner(const char *mesh, const char *from, const char *to, const char *opts,
                        double c0[3], double dv[3], bool *arrived) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"dt\":0.1%s,\"agents\":[{\"id\":\"a\",\"position\":%s,\"radius\":0.3,"
             "\"max_speed\":2,\"max_accel\":10,\"behavior\":\"seek\",\"target\":%s}]}",
             opts, from, to);
    json_t *j = post_step(mesh, body, 200, NULL);
    json_t *a = json_array_get(json_object_get(j, "agents"), 0);
    ck_assert_msg(json_object_get(a, "error") == NULL, "agent failed for %s", body);
    json_t *c = json_array_get(json_object_get(a, "corners"), 0);
    for (size_t k = 0; k < 3; k++) {
        c0[k] = at(c, k);
        dv[k] = at(json_object_get(a, "desired_velocity"), k);
    }
    *arrived = json_is_true(json_object_get(a, "arrived"));
    json_decref(j);
}

/* Issue 11: step applies the path queries' area_costs, exclude_areas and
   max_nodes (it used to ignore all three). On the ring (see RING), a seeker
   from (1,0,1) to (5,0,1):
   - by default goes straight: its first corner is the end (5,0,1) and its
     desired velocity is (2,0,0);
   - excluding area 1 closes the bottom middle: the way round the ring, first
     corner the inner corner (2,0,4), heading (1,0,3)/sqrt(10) at 2 m/s;
   - area 1 at cost 10 makes the straight way cost at least 20 (2 m in it)
     against at most 12 for the way round (every polygon route round is
     shorter than 12 m): round again; at cost 1.5 (straight: 2 + 3 = 5 <
     8.32) straight again;
   - a budget of 2 nodes in the corridor mesh from (1,0,1) to (9,0,1): the
     search expands polygon 0 and opens polygon 1, then the pool is full; the
     partial path ends at polygon 1's point nearest the end, (4,0,1), and the
     agent keeps full speed (2 m/s) and is not `arrived` at that end.
   Then: the same codec's errors, by name. */
START_TEST(step_applies_filter_and_budget) {
    double c[3], dv[3];
    bool arrived;
    seek_corner("ring", "[1,0,1]", "[5,0,1]", "", c, dv, &arrived);
    ck_assert_double_eq_tol(c[0], 5, 1e-4);
    ck_assert_double_eq_tol(c[2], 1, 1e-4);
    ck_assert_double_eq_tol(dv[0], 2, 1e-4);
    ck_assert_double_eq_tol(dv[2], 0, 1e-4);

    const double ux = 2 / sqrt(10.0), uz = 6 / sqrt(10.0);
    const char *round[] = {",\"exclude_areas\":[1]", ",\"area_costs\":{\"1\":10}",
                           ",\"area_costs\":{\"1\":10},\"cache\":false"};
    for (size_t k = 0; k < sizeof round / sizeof *round; k++) {
        seek_corner("ring", "[1,0,1]", "[5,0,1]", round[k], c, dv, &arrived);
        ck_assert_msg(fabs(c[0] - 2) < 1e-4 && fabs(c[2] - 4) < 1e-4,
                      "%s: first corner (%g, %g), expected (2, 4)", round[k], c[0], c[2]);
        ck_assert_double_eq_tol(dv[0], ux, 1e-4);
        ck_assert_double_eq_tol(dv[2], uz, 1e-4);
    }
    seek_corner("ring", "[1,0,1]", "[5,0,1]", ",\"area_costs\":{\"1\":1.5}", c, dv, &arrived);
    ck_assert_double_eq_tol(c[0], 5, 1e-4);
    ck_assert_double_eq_tol(c[2], 1, 1e-4);

    seek_corner("corridor", "[1,0,1]", "[9,0,1]", ",\"max_nodes\":2", c, dv, &arrived);
    ck_assert_double_eq_tol(c[0], 4, 1e-4);
    ck_assert_double_eq_tol(c[2], 1, 1e-4);
    ck_assert_double_eq_tol(dv[0], 2, 1e-4);
    ck_assert(!arrived);
    seek_corner("corridor", "[4,0,1]", "[9,0,1]", ",\"max_nodes\":2", c, dv, &arrived);
    ck_assert(!arrived); /* standing on a budget-cut end is not arriving */
    seek_corner("corridor", "[1,0,1]", "[9,0,1]", ",\"max_nodes\":100", c, dv, &arrived);
    ck_assert_double_eq_tol(c[0], 9, 1e-4);

    assert_error("ring", "{\"dt\":0.1,\"max_nodes\":0,\"agents\":[]}", 400, "bad_request",
                 "max_nodes");
    assert_error("ring", "{\"dt\":0.1,\"exclude_areas\":[64],\"agents\":[]}", 400, "bad_request",
                 "exclude_areas[0]");
    assert_error("ring", "{\"dt\":0.1,\"area_costs\":{\"1\":-2},\"agents\":[]}", 400, "bad_request",
                 "area_costs[\"1\"] must be a positive finite number");
}
END_TEST

/* Issue 14 over HTTP: three `arrive` agents of radius 0.3 sent to one point
   (9, 0, 1) of the corridor settle: the test plays the game (each answer's
   position and velocity fed back, dt 0.1, at most 20 simulated s) until all
   three say `arrived` with speed < 0.05 m/s; then 10 more ticks move nobody
   by more than 1 cm, one agent stands within the 5 cm tolerance of the
   target, and no two overlap by more than 5 cm. Only one agent fits on the
   point: earlier builds kept the other two jostling, never arrived. */
START_TEST(step_crowd_settles_over_http) {
    double pos[3][3] = {{1, 0, 0.6}, {1, 0, 1.4}, {2.5, 0, 1}}, vel[3][3] = {{0}}, before[3][3];
    bool arrived[3] = {false, false, false};
    int settled_at = -1;
    for (int tick = 0; tick < 210 && (settled_at < 0 || tick < settled_at + 11); tick++) {
        char body[1024];
        int len = snprintf(body, sizeof body, "{\"dt\":0.1,\"agents\":[");
        for (int i = 0; i < 3; i++)
            len += snprintf(body + len, sizeof body - (size_t)len,
                            "%s{\"id\":\"c%d\",\"position\":[%.9g,%.9g,%.9g],"
                            "\"velocity\":[%.9g,%.9g,%.9g],\"radius\":0.3,\"max_speed\":3,"
                            "\"behavior\":\"arrive\",\"target\":[9,0,1]}",
                            i ? "," : "", i, pos[i][0], pos[i][1], pos[i][2], vel[i][0], vel[i][1],
                            vel[i][2]);
        snprintf(body + len, sizeof body - (size_t)len, "]}");
        json_t *j = post_step("corridor", body, 200, NULL);
        bool all = true;
        for (int i = 0; i < 3; i++) {
            json_t *a = json_array_get(json_object_get(j, "agents"), (size_t)i);
            for (int k = 0; k < 3; k++) {
                pos[i][k] = at(json_object_get(a, "position"), (size_t)k);
                vel[i][k] = at(json_object_get(a, "velocity"), (size_t)k);
            }
            arrived[i] = json_is_true(json_object_get(a, "arrived"));
            all = all && arrived[i] && hypot(vel[i][0], vel[i][2]) < 0.05;
        }
        json_decref(j);
        if (all && settled_at < 0) {
            settled_at = tick;
            memcpy(before, pos, sizeof before);
        }
    }
    ck_assert_msg(settled_at >= 0, "the three never all arrived within 21 s");
    double nearest = INFINITY;
    for (int i = 0; i < 3; i++) {
        ck_assert(arrived[i]);
        ck_assert(hypot(vel[i][0], vel[i][2]) < 0.05);
        ck_assert(hypot(pos[i][0] - before[i][0], pos[i][2] - before[i][2]) < 0.01);
        double d = hypot(pos[i][0] - 9, pos[i][2] - 1);
        nearest = d < nearest ? d : nearest;
        for (int k = i + 1; k < 3; k++)
            ck_assert(hypot(pos[i][0] - pos[k][0], pos[i][2] - pos[k][2]) >= 0.6 - 0.05);
    }
    ck_assert_msg(nearest <= 0.051, "nobody on the target: nearest %g m", nearest);
}
END_TEST

/* Landing over HTTP: "j" (radius 0.3) stands 0.2 m before the jump's start
   (3.5,0,2), within its radius; "b" (radius 0.3, max_speed 0: never pushed)
   stands at (10.6,0,2.1), 0.1414 m from its end (10.5,0,2). The nearest
   free landing point is straight out of b's 0.6 m disc toward the end:
   (10.6 - 0.6/sqrt2, 0, 2.1 - 0.6/sqrt2) = (10.1757, 0, 1.6757).
   With "traverse_links": true j is there after the tick, on the east island
   (polygon 1), its action the jump with "landing" that point and
   "links_taken" 1; without it j waits on the west island and "landing"
   says the same point. Each body answers the same bytes twice, and the
   default one read fast and through the tree (with "seed": 0) too. */
START_TEST(step_traverse_links_and_landing) {
    const char *agents =
        "\"agents\":[{\"id\":\"j\",\"position\":[3.3,0,2],\"radius\":0.3,\"max_speed\":2,"
        "\"behavior\":\"seek\",\"target\":[12,0,2]},{\"id\":\"b\",\"position\":[10.6,0,2.1],"
        "\"radius\":0.3,\"max_speed\":0,\"behavior\":\"idle\"}]}";
    const double lx = 10.6 - 0.6 / sqrt(2.0), lz = 2.1 - 0.6 / sqrt(2.0);
    char body[3][512];
    snprintf(body[0], sizeof body[0], "{\"dt\":0.05,\"traverse_links\":true,%s", agents);
    snprintf(body[1], sizeof body[1], "{\"dt\":0.05,%s", agents);
    snprintf(body[2], sizeof body[2], "{\"dt\":0.05,\"seed\":0,%s", agents);
    th_response first[3];
    for (int k = 0; k < 3; k++) {
        th_response again;
        json_t *j = post_step("islands", body[k], 200, &first[k]);
        json_decref(post_step("islands", body[k], 200, &again));
        ck_assert_uint_eq(first[k].body_len, again.body_len);
        ck_assert_int_eq(memcmp(first[k].body, again.body, again.body_len), 0);
        th_response_free(&again);
        json_t *a = json_array_get(json_object_get(j, "agents"), 0);
        json_t *b = json_array_get(json_object_get(j, "agents"), 1);
        json_t *pos = json_object_get(a, "position"), *act = json_object_get(a, "action");
        ck_assert_ptr_nonnull(act);
        ck_assert_str_eq(json_string_value(json_object_get(act, "type")), "jump");
        ck_assert_double_eq_tol(at(json_object_get(act, "start"), 0), 3.5, 1e-5);
        ck_assert_double_eq_tol(at(json_object_get(act, "end"), 0), 10.5, 1e-5);
        ck_assert_int_eq(json_integer_value(json_object_get(act, "links_taken")), 1);
        json_t *land = json_object_get(act, "landing");
        ck_assert_double_eq_tol(at(land, 0), lx, 1e-3);
        ck_assert_double_eq_tol(at(land, 1), 0.0, 1e-5);
        ck_assert_double_eq_tol(at(land, 2), lz, 1e-3);
        json_t *bpos = json_object_get(b, "position");
        ck_assert(hypot(at(land, 0) - at(bpos, 0), at(land, 2) - at(bpos, 2)) >= 0.6 - 0.05);
        if (k == 0) {
            ck_assert_double_eq_tol(at(pos, 0), lx, 1e-3);
            ck_assert_double_eq_tol(at(pos, 2), lz, 1e-3);
            ck_assert_int_eq(json_integer_value(json_object_get(a, "polygon")), 1);
        } else {
            ck_assert(at(pos, 0) <= 4.0);
            ck_assert_int_eq(json_integer_value(json_object_get(a, "polygon")), 0);
        }
        json_decref(j);
    }
    /* the default body read fast and through the tree: the same answer */
    ck_assert_uint_eq(first[1].body_len, first[2].body_len);
    ck_assert_int_eq(memcmp(first[1].body, first[2].body, first[1].body_len), 0);
    for (int k = 0; k < 3; k++)
        th_response_free(&first[k]);
    /* a non-boolean is named */
    assert_error("islands", "{\"dt\":0.05,\"traverse_links\":1,\"agents\":[]}", 400, "bad_request",
                 "traverse_links");
}
END_TEST

extern Suite *api_step_suite(void);
Suite *api_step_suite(void) {
    Suite *s = suite_create("api_step");
    TCase *tc = tcase_create("step");
    tcase_add_unchecked_fixture(tc, start_srv, stop_srv);
    tcase_add_test(tc, step_shape_and_per_agent_error);
    tcase_add_test(tc, step_deterministic_bytes);
    tcase_add_test(tc, step_field_errors);
    tcase_add_test(tc, step_zero_extents);
    tcase_add_test(tc, step_link_action_closed_loop);
    tcase_add_test(tc, step_traverse_links_and_landing);
    tcase_add_test(tc, step_contract_enum_corners_speed);
    tcase_add_test(tc, step_uses_path_cache);
    tcase_add_test(tc, step_applies_filter_and_budget);
    tcase_add_test(tc, step_crowd_settles_over_http);
    suite_add_tcase(s, tc);
    return s;
}
