/*
 * check_volumes: the flight-volume endpoints against the real binary
 * (contract "Flight volumes"): bake as a job (?wait=true and polled),
 * metadata, list, path / raycast / nearest / reachable with values derived
 * by hand, every refusal (unknown level, voxel budget, bad fields, points
 * outside the bounds, unknown volume) changing nothing, a cancelled bake
 * leaving the previous version, replace, delete, and a restart.
 *
 * The level, by hand (y up, metres; voxel 0.5 m, radius 0.25 m): a floor
 * y = 0 and a ceiling y = 16 over [0, 16] x [0, 16]; a hollow closed box
 * [4, 12]^3 (six quads); a pillar [13, 14] x [0, 16] x [1, 2]. A voxel that
 * touches a surface is blocked; one 0.5 m away is free (0.5 > 0.25). So
 * free space is two components (inside and outside the box), the nearest
 * free point to (13.3, 8.2, 1.6) inside the pillar is (12.4995, 8.2, 1.6)
 * (voxel [12, 12.5] is free, inset 1e-3 voxel: 0.8005 m away; the other
 * sides are 0.9005, 1.1005 and 1.2005 m away), and a ray
 * from (2, 8, 8) toward (8, 8, 8) stops at x = 3.5 (voxel [3.5, 4] touches
 * the wall x = 4), t = 0.25, normal [-1, 0, 0].
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_cluster.h"
#include "tests/test_http.h"
#include "tests/test_volworld.h"

extern Suite *volumes_suite(void);

static char *level_obj(size_t *len) {
    vw_world w;
    vw_init(&w, 0, 0, 0, 16, 16, 16);
    vw_quad(&w, 1, 0, 0, 0, 16, 16);
    vw_quad(&w, 1, 16, 0, 0, 16, 16);
    vw_quad(&w, 0, 4, 4, 4, 12, 12);
    vw_quad(&w, 0, 12, 4, 4, 12, 12);
    vw_quad(&w, 1, 4, 4, 4, 12, 12);
    vw_quad(&w, 1, 12, 4, 4, 12, 12);
    vw_quad(&w, 2, 4, 4, 4, 12, 12);
    vw_quad(&w, 2, 12, 4, 4, 12, 12);
    vw_box(&w, 13, 0, 1, 14, 16, 2);
    char *s = vw_obj(&w, len);
    vw_free(&w);
    return s;
}

static json_t *call(int port, const char *method, const char *path, const char *body,
                    int want_status) {
    th_response r;
    ck_assert_int_eq(th_json(port, method, path, body, &r), 0);
    ck_assert_msg(r.status == want_status, "%s %s -> %d, want %d: %s", method, path, r.status,
                  want_status, r.body);
    json_t *j = r.body_len ? json_loads(r.body, 0, NULL) : NULL;
    th_response_free(&r);
    return j;
}

static const char *err_code(const json_t *j) {
    return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

static const char *err_msg(const json_t *j) {
    return json_string_value(json_object_get(json_object_get(j, "error"), "message"));
}

static double num(const json_t *j, const char *key) {
    return json_number_value(json_object_get(j, key));
}

static double at(const json_t *arr, size_t i) {
    return json_number_value(json_array_get(arr, i));
}

static void put_level(int port) {
    size_t len;
    char *obj = level_obj(&len);
    th_response r;
    ck_assert_int_eq(th_request(port, "PUT", "/v1/levels/hangar", "model/obj", obj, len, NULL, &r),
                     0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(obj);
}

/* Checks the metadata of volume hv as baked from the hand-made level. */
static void check_meta(const json_t *m, int version) {
    ck_assert_str_eq(json_string_value(json_object_get(m, "name")), "hv");
    ck_assert_int_eq(json_integer_value(json_object_get(m, "version")), version);
    ck_assert(num(m, "voxel_size") == 0.5 && num(m, "radius") == 0.25);
    ck_assert_int_eq(json_integer_value(json_object_get(m, "components")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(m, "free_voxels")) +
                         json_integer_value(json_object_get(m, "blocked_voxels")),
                     32 * 32 * 32);
    const json_t *b = json_object_get(m, "bounds");
    ck_assert(at(json_array_get(b, 0), 0) == 0 && at(json_array_get(b, 1), 1) == 16);
    ck_assert(json_integer_value(json_object_get(m, "bytes")) > 0);
    const json_t *src = json_object_get(m, "source");
    ck_assert_str_eq(json_string_value(json_object_get(src, "level")), "hangar");
    ck_assert_int_eq(json_integer_value(json_object_get(src, "level_version")), 1);
    ck_assert_ptr_nonnull(json_object_get(m, "created_at"));
    ck_assert_ptr_nonnull(json_object_get(m, "updated_at"));
}

static const char BAKE[] = "{\"level\":\"hangar\",\"voxel_size\":0.5,\"radius\":0.25}";

START_TEST(t_volume_bake_and_queries) {
    th_server s;
    const char *extra[] = {"--max-volume-voxels", "40000000", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    put_level(s.port);
    json_t *job = call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200);
    ck_assert_str_eq(json_string_value(json_object_get(job, "kind")), "volume");
    ck_assert_str_eq(json_string_value(json_object_get(job, "target")), "hv");
    ck_assert_str_eq(json_string_value(json_object_get(job, "state")), "done");
    ck_assert(num(job, "progress") == 1.0);
    check_meta(json_object_get(job, "result"), 1);
    json_decref(job);

    json_t *m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
    check_meta(m, 1);
    json_decref(m);
    /* the blocked space brick by brick adds up to blocked_voxels (32 is a multiple of 4:
       no padding voxels) */
    json_t *br = call(s.port, "GET", "/v1/volumes/hv?format=bricks", NULL, 200);
    long long blocked = 64 * (long long)json_array_size(json_object_get(br, "solid"));
    const json_t *mixed = json_object_get(br, "mixed");
    for (size_t i = 0; i < json_array_size(mixed); i++) {
        unsigned long long bits =
            strtoull(json_string_value(json_array_get(json_array_get(mixed, i), 1)), NULL, 16);
        ck_assert(bits != 0 && bits != ~0ull);
        blocked += __builtin_popcountll(bits);
    }
    m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
    ck_assert_int_eq(blocked, json_integer_value(json_object_get(m, "blocked_voxels")));
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(br, "brick_dims"), 0)), 8);
    json_decref(m);
    json_decref(br);
    json_decref(call(s.port, "GET", "/v1/volumes/hv?format=obj", NULL, 400));
    json_t *list = call(s.port, "GET", "/v1/volumes", NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(list, "volumes")), 1);
    json_decref(list);

    /* a path around the box: complete, from the start to the end, never shorter than the
       straight line, which the box blocks */
    json_t *p =
        call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "status")), "complete");
    const json_t *c = json_object_get(p, "corners");
    ck_assert_uint_ge(json_array_size(c), 3);
    ck_assert(at(json_array_get(c, 0), 0) == 2);
    ck_assert(at(json_array_get(c, json_array_size(c) - 1), 0) == 14);
    ck_assert(num(p, "straight_line") == 12);
    ck_assert(num(p, "length") > 12.5);
    ck_assert(json_integer_value(json_object_get(p, "nodes_expanded")) > 0);
    /* paths go through the cache: the same request again is a hit with the same answer,
       and "cache": false bypasses it */
    ck_assert_str_eq(json_string_value(json_object_get(p, "cache")), "miss");
    json_t *p2 =
        call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p2, "cache")), "hit");
    json_object_del(p, "cache");
    json_object_del(p2, "cache");
    ck_assert(json_equal(p, p2));
    json_decref(p2);
    p2 = call(s.port, "POST", "/v1/volumes/hv/path",
              "{\"start\":[2,8,8],\"end\":[14,8,8],\"cache\":false}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p2, "cache")), "bypass");
    json_object_del(p2, "cache");
    ck_assert(json_equal(p, p2));
    json_decref(p2);
    const double first_length = num(p, "length");
    json_decref(p);
    /* a goal inside the closed box: unreachable, answered without a search */
    p = call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[8,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "status")), "partial");
    ck_assert_int_eq(json_integer_value(json_object_get(p, "nodes_expanded")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(p, "corners")), 1);
    json_decref(p);
    json_t *q = call(s.port, "POST", "/v1/volumes/hv/reachable",
                     "{\"start\":[2,8,8],\"end\":[8,8,8]}", 200);
    ck_assert(json_is_false(json_object_get(q, "reachable")));
    json_decref(q);
    q = call(s.port, "POST", "/v1/volumes/hv/reachable", "{\"start\":[2,8,8],\"end\":[14.5,3,14]}",
             200);
    ck_assert(json_is_true(json_object_get(q, "reachable")));
    json_decref(q);
    /* nearest: out of the pillar to the free voxel [12, 12.5] */
    q = call(s.port, "POST", "/v1/volumes/hv/nearest", "{\"point\":[13.3,8.2,1.6]}", 200);
    const json_t *pt = json_object_get(q, "point");
    ck_assert_double_eq_tol(at(pt, 0), 12.4995, 1e-4);
    ck_assert_double_eq_tol(at(pt, 1), 8.2, 1e-6);
    ck_assert_double_eq_tol(at(pt, 2), 1.6, 1e-6);
    ck_assert_double_eq_tol(num(q, "distance"), 0.8005, 1e-4);
    json_decref(q);
    q = call(s.port, "POST", "/v1/volumes/hv/nearest",
             "{\"point\":[13.3,8.2,1.6],\"extents\":[0.5,0.5,0.5]}", 422);
    ck_assert_str_eq(err_code(q), "point_blocked");
    ck_assert_ptr_nonnull(strstr(err_msg(q), "point"));
    json_decref(q);
    /* raycast into the box's wall */
    q = call(s.port, "POST", "/v1/volumes/hv/raycast", "{\"start\":[2,8,8],\"end\":[8,8,8]}", 200);
    ck_assert(json_is_true(json_object_get(q, "hit")));
    ck_assert_double_eq_tol(num(q, "t"), 0.25, 1e-6);
    ck_assert_double_eq_tol(at(json_object_get(q, "point"), 0), 3.5, 1e-5);
    const json_t *nrm = json_object_get(q, "normal");
    ck_assert(at(nrm, 0) == -1 && at(nrm, 1) == 0 && at(nrm, 2) == 0);
    json_decref(q);
    q = call(s.port, "POST", "/v1/volumes/hv/raycast", "{\"start\":[2,8,2],\"end\":[2,8,14]}", 200);
    ck_assert(json_is_false(json_object_get(q, "hit")));
    ck_assert(num(q, "t") == 1);
    ck_assert_ptr_null(json_object_get(q, "normal"));
    json_decref(q);
    /* debug: the expanded voxels for the viewer */
    p = call(s.port, "POST", "/v1/volumes/hv/path",
             "{\"start\":[2,8,8],\"end\":[14,8,8],\"debug\":true,\"heuristic_weight\":1.5}", 200);
    ck_assert_uint_gt(json_array_size(json_object_get(p, "expanded")), 0);
    ck_assert_uint_eq(json_array_size(json_array_get(json_object_get(p, "expanded"), 0)), 4);
    json_decref(p);

    /* step: an arriving flier gets a 3-D move and its path's next corners; one outside
       the bounds fails in its own slot; hide is refused (no cover in open space) */
    json_t *st = call(s.port, "POST", "/v1/volumes/hv/step",
                      "{\"dt\":0.1,\"agents\":[{\"id\":\"bird\",\"position\":[2,8,8],"
                      "\"target\":[14,8,8],\"max_speed\":4},{\"id\":\"lost\","
                      "\"position\":[60,8,8]}]}",
                      200);
    const json_t *ag = json_object_get(st, "agents");
    ck_assert_uint_eq(json_array_size(ag), 2);
    const json_t *a0 = json_array_get(ag, 0), *a1 = json_array_get(ag, 1);
    ck_assert_str_eq(json_string_value(json_object_get(a0, "id")), "bird");
    ck_assert_str_eq(json_string_value(json_object_get(a0, "behavior")), "arrive");
    ck_assert_uint_ge(json_array_size(json_object_get(a0, "corners")), 2);
    const json_t *pos = json_object_get(a0, "position");
    double moved = hypot(hypot(at(pos, 0) - 2, at(pos, 1) - 8), at(pos, 2) - 8);
    ck_assert(moved > 0 && moved <= 4 * 0.1 + 1e-4);
    ck_assert(json_is_null(json_object_get(a0, "polygon")));
    ck_assert(json_is_null(json_object_get(a0, "action")));
    ck_assert_str_eq(err_code(a1), "point_blocked");
    json_decref(st);
    st = call(s.port, "POST", "/v1/volumes/hv/step",
              "{\"dt\":0.1,\"agents\":[{\"position\":[2,8,8],\"behavior\":\"hide\","
              "\"threat\":[3,8,8]}]}",
              400);
    ck_assert_ptr_nonnull(strstr(err_msg(st), "hide"));
    json_decref(st);
    st = call(s.port, "POST", "/v1/volumes/hv/step", "{\"agents\":[]}", 400);
    ck_assert_ptr_nonnull(strstr(err_msg(st), "dt"));
    json_decref(st);

    /* restart: the volume is stored */
    ck_assert_int_eq(th_stop(&s), 0);
    ck_assert_int_eq(th_restart(&s, extra), 0);
    m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
    check_meta(m, 1);
    json_decref(m);
    p = call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "status")), "complete");
    json_decref(p);

    /* a replaced volume never answers from the old one's cached paths: at radius 0.75
       the way around the box keeps 0.5 m more clearance, so the same request is a miss
       and longer; baked back at 0.25 it is a miss again, as long as the first answer */
    job = call(s.port, "POST", "/v1/volumes/hv/bake?wait=true",
               "{\"level\":\"hangar\",\"voxel_size\":0.5,\"radius\":0.75}", 200);
    json_decref(job);
    p = call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "cache")), "miss");
    ck_assert_msg(num(p, "length") > first_length + 0.1, "length %g after the replace, %g before",
                  num(p, "length"), first_length);
    json_decref(p);

    /* replace, then delete */
    job = call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200);
    check_meta(json_object_get(job, "result"), 3);
    json_decref(job);
    p = call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "cache")), "miss");
    ck_assert(num(p, "length") == first_length);
    json_decref(p);
    json_decref(call(s.port, "DELETE", "/v1/volumes/hv", NULL, 204));
    json_decref(call(s.port, "GET", "/v1/volumes/hv", NULL, 404));
    json_decref(call(s.port, "DELETE", "/v1/volumes/hv", NULL, 404));
    json_decref(
        call(s.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 404));
    ck_assert_int_eq(th_stop(&s), 0);
    th_cleanup(&s);
}
END_TEST

/* Every refusal answers the contract's error and changes nothing. */
START_TEST(t_volume_refusals) {
    th_server s;
    const char *extra[] = {"--max-volume-voxels", "40000000", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    put_level(s.port);
    json_decref(call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    static const struct {
        const char *body;
        int status;
        const char *code, *names;
    } bad[] = {
        {"{\"level\":\"nope\"}", 404, "not_found", "nope"},
        {"{\"voxel_size\":0.5}", 400, "bad_request", "level"},
        {"{\"level\":\"hangar\",\"voxel_size\":0}", 400, "bad_request", "voxel_size"},
        {"{\"level\":\"hangar\",\"voxel_size\":\"big\"}", 400, "bad_request", "voxel_size"},
        {"{\"level\":\"hangar\",\"radius\":-1}", 400, "bad_request", "radius"},
        {"{\"level\":\"hangar\",\"bounds\":[[0,0,0],[1,1]]}", 400, "bad_request", "bounds"},
        {"{\"level\":\"hangar\",\"bounds\":[[0,0,0],[1,0,1]]}", 400, "bad_request", "bounds"},
        /* 16 m / 0.04 m = 400 per axis: 64,000,000 voxels > 40,000,000 */
        {"{\"level\":\"hangar\",\"voxel_size\":0.04}", 422, "invalid_level", "--max-volume-voxels"},
        {"[1]", 400, "bad_request", "object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *e = call(s.port, "POST", "/v1/volumes/hv/bake", bad[i].body, bad[i].status);
        ck_assert_str_eq(err_code(e), bad[i].code);
        ck_assert_msg(strstr(err_msg(e), bad[i].names), "%s: %s", bad[i].body, err_msg(e));
        json_decref(e);
    }
    /* nothing was queued, the volume is as it was */
    json_t *jobs = call(s.port, "GET", "/v1/jobs", NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(jobs, "jobs")), 1);
    json_decref(jobs);
    json_t *m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
    check_meta(m, 1);
    json_decref(m);
    /* query refusals */
    static const struct {
        const char *path, *body;
        int status;
        const char *code, *names;
    } qbad[] = {
        {"/v1/volumes/hv/path", "{\"start\":[100,8,8],\"end\":[14,8,8]}", 422, "point_blocked",
         "outside the volume's bounds"},
        {"/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[13.5,8,1.5],\"extents\":[0,0,0]}", 422,
         "point_blocked", "end"},
        {"/v1/volumes/hv/path", "{\"start\":[2,8,8]}", 400, "bad_request", "end"},
        {"/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8],\"heuristic_weight\":0.5}",
         400, "bad_request", "heuristic_weight"},
        {"/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8],\"max_nodes\":0}", 400,
         "bad_request", "max_nodes"},
        {"/v1/volumes/hv/nearest", "{\"point\":[1,2,\"x\"]}", 400, "bad_request", "point"},
        {"/v1/volumes/hv/nearest", "{\"point\":[1,2,3],\"extents\":[1,-1,1]}", 400, "bad_request",
         "extents"},
        {"/v1/volumes/hv/raycast", "{\"start\":[8,8,8.1],\"end\":[8,8,20],\"extents\":[0,0,0]}",
         200, NULL, NULL},
        {"/v1/volumes/nope/reachable", "{\"start\":[2,8,8],\"end\":[3,8,8]}", 404, "not_found",
         "nope"},
    };
    for (size_t i = 0; i < sizeof qbad / sizeof qbad[0]; i++) {
        json_t *e = call(s.port, "POST", qbad[i].path, qbad[i].body, qbad[i].status);
        if (qbad[i].code) {
            ck_assert_str_eq(err_code(e), qbad[i].code);
            ck_assert_msg(strstr(err_msg(e), qbad[i].names), "%s: %s", qbad[i].body, err_msg(e));
        }
        json_decref(e);
    }
    ck_assert_int_eq(th_stop(&s), 0);
    th_cleanup(&s);
}
END_TEST

/* A bake cancelled while queued or running leaves the previous version. */
START_TEST(t_volume_cancel) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    put_level(s.port);
    json_decref(call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    /* 16 m at 0.06 m: 267^3 = 19 million voxels, long enough to cancel in flight */
    json_t *job = call(s.port, "POST", "/v1/volumes/hv/bake",
                       "{\"level\":\"hangar\",\"voxel_size\":0.06,\"radius\":0.25}", 202);
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%s", json_string_value(json_object_get(job, "id")));
    json_decref(job);
    json_t *c = call(s.port, "DELETE", path, NULL, 200);
    const char *state = json_string_value(json_object_get(c, "state"));
    /* cancelled, unless it already finished (then it is a new version and this run proves
       nothing about cancelling: fail loudly so the size above gets raised) */
    ck_assert_str_eq(state, "cancelled");
    json_decref(c);
    for (int i = 0; i < 50; i++) { /* the run stops soon after; it must never publish */
        usleep(20000);
        json_t *m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
        check_meta(m, 1);
        json_decref(m);
    }
    c = call(s.port, "GET", path, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(c, "state")), "cancelled");
    json_decref(c);
    ck_assert_int_eq(th_stop(&s), 0);
    th_cleanup(&s);
}
END_TEST

typedef struct qload {
    int port, ok, other;
} qload;

static void *query_loop(void *arg) {
    qload *l = arg;
    for (int i = 0; i < 40; i++) {
        th_response r;
        const char *body = i % 2
                               ? "{\"start\":[2,8,8],\"end\":[14,8,8]}"
                               : "{\"start\":[2,2,2],\"end\":[14,14,14],\"heuristic_weight\":1.5}";
        if (th_json(l->port, "POST", "/v1/volumes/hv/path", body, &r) == 0 && r.status == 200 &&
            strstr(r.body, "\"complete\""))
            l->ok++;
        else
            l->other++;
        th_response_free(&r);
    }
    return NULL;
}

/* Queries on four threads while the volume is replaced twice: every answer is a complete
   path from one version or the other (the server runs under TSan in `make test-tsan`). */
START_TEST(t_volume_concurrent_replace) {
    th_server s;
    const char *extra[] = {"--threads", "4", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    put_level(s.port);
    json_decref(call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    pthread_t t[4];
    qload l[4];
    for (int i = 0; i < 4; i++) {
        l[i] = (qload){.port = s.port};
        ck_assert_int_eq(pthread_create(&t[i], NULL, query_loop, &l[i]), 0);
    }
    for (int k = 0; k < 2; k++)
        json_decref(call(s.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(l[i].other, 0);
        ck_assert_int_eq(l[i].ok, 40);
    }
    json_t *m = call(s.port, "GET", "/v1/volumes/hv", NULL, 200);
    check_meta(m, 3);
    json_decref(m);
    ck_assert_int_eq(th_stop(&s), 0);
    th_cleanup(&s);
}
END_TEST

/* The offline tool: `navd bake-volume LEVEL.obj --out FILE --db DB --name NAME`. */
START_TEST(t_bake_volume_tool) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    ck_assert_int_eq(th_stop(&s), 0); /* the database exists; the tool writes while it is down */
    const char *bin = getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "bin/navd";
    char obj_path[400], out_path[400], cmd[2000];
    snprintf(obj_path, sizeof obj_path, "%s/hangar.obj", s.dir);
    snprintf(out_path, sizeof out_path, "%s/hv.navvol", s.dir);
    size_t len;
    char *obj = level_obj(&len);
    FILE *f = fopen(obj_path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(obj, 1, len, f), len);
    fclose(f);
    free(obj);
    snprintf(cmd, sizeof cmd,
             "'%s' bake-volume '%s' --voxel-size 0.5 --radius 0.25 --out '%s' --db '%s' --name "
             "tool > '%s/tool.out' 2> '%s/tool.err'",
             bin, obj_path, out_path, s.db, s.dir, s.dir);
    ck_assert_int_eq(system(cmd), 0);
    /* refusals: over the voxel budget (2), no such file (1), bad usage (2); nothing written */
    snprintf(cmd, sizeof cmd,
             "'%s' bake-volume '%s' --voxel-size 0.01 --max-volume-voxels 1000 --db '%s' --name "
             "big 2> /dev/null",
             bin, obj_path, s.db);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof cmd, "'%s' bake-volume '%s/none.obj' --out x 2> /dev/null", bin, s.dir);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
    snprintf(cmd, sizeof cmd, "'%s' bake-volume '%s' 2> /dev/null", bin, obj_path);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
    /* the file is a volume blob; the server loads the stored one */
    f = fopen(out_path, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t blob[1 << 20];
    size_t n = fread(blob, 1, sizeof blob, f);
    fclose(f);
    ck_assert(n > 8 && memcmp(blob, "NAVV", 4) == 0);
    ck_assert_int_eq(th_restart(&s, NULL), 0);
    json_t *m = call(s.port, "GET", "/v1/volumes/tool", NULL, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(m, "components")), 2);
    ck_assert(num(m, "voxel_size") == 0.5 && num(m, "radius") == 0.25);
    json_decref(m);
    json_decref(call(s.port, "GET", "/v1/volumes/big", NULL, 404));
    json_t *p =
        call(s.port, "POST", "/v1/volumes/tool/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "status")), "complete");
    json_decref(p);
    ck_assert_int_eq(th_stop(&s), 0);
    th_cleanup(&s);
}
END_TEST

/* ---- replicas over PostgreSQL: a volume written through one is served by the other ---- */

static tc_pg g_pg;
static char g_pg_failed[256];

static void pg_setup(void) {
    char why[200] = "";
    if (tc_pg_start(&g_pg, why, sizeof why) != 0)
        snprintf(g_pg_failed, sizeof g_pg_failed, "PostgreSQL: %s", why);
}

static void pg_teardown(void) {
    if (!g_pg_failed[0])
        tc_pg_destroy(&g_pg);
}

/* Polls replica `port` until GET /v1/volumes/hv answers `status` (and version `version`
   when 200), at most 5 s. */
static int wait_volume(int port, int status, long version) {
    double end = tc_now_ms() + 5000;
    while (tc_now_ms() < end) {
        th_response r;
        if (th_json(port, "GET", "/v1/volumes/hv", NULL, &r) == 0 && r.status == status) {
            json_t *j = status == 200 ? json_loads(r.body, 0, NULL) : NULL;
            int ok = status != 200 || json_integer_value(json_object_get(j, "version")) == version;
            json_decref(j);
            th_response_free(&r);
            if (ok)
                return 0;
        } else {
            th_response_free(&r);
        }
        usleep(20000);
    }
    return -1;
}

START_TEST(t_volume_replicas) {
    ck_assert_msg(!g_pg_failed[0], "%s", g_pg_failed);
    th_server a, b;
    const char *extra[] = {"--pg-backoff-max-ms", "200", "--log-level", "warn", NULL};
    ck_assert_int_eq(th_start(&a, g_pg.conninfo, extra), 0);
    ck_assert_int_eq(th_start(&b, g_pg.conninfo, extra), 0);
    put_level(a.port);
    json_decref(call(a.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    ck_assert_msg(wait_volume(b.port, 200, 1) == 0, "replica b never served version 1");
    json_t *p =
        call(b.port, "POST", "/v1/volumes/hv/path", "{\"start\":[2,8,8],\"end\":[14,8,8]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(p, "status")), "complete");
    json_decref(p);
    /* other settings: a new version (PostgreSQL keeps the version of an identical write) */
    json_decref(call(a.port, "POST", "/v1/volumes/hv/bake?wait=true",
                     "{\"level\":\"hangar\",\"voxel_size\":0.5,\"radius\":0.3}", 200));
    ck_assert_msg(wait_volume(b.port, 200, 2) == 0, "replica b never served version 2");
    json_decref(call(a.port, "DELETE", "/v1/volumes/hv", NULL, 204));
    ck_assert_msg(wait_volume(b.port, 404, 0) == 0, "replica b still serves a deleted volume");
    /* a volume baked while b is down is there when b comes back (its first resync) */
    ck_assert_int_eq(th_stop(&b), 0);
    json_decref(call(a.port, "POST", "/v1/volumes/hv/bake?wait=true", BAKE, 200));
    ck_assert_int_eq(th_restart(&b, extra), 0);
    ck_assert_msg(wait_volume(b.port, 200, 1) == 0, "restarted replica b lacks the volume");
    ck_assert_int_eq(th_stop(&a), 0);
    ck_assert_int_eq(th_stop(&b), 0);
    th_cleanup(&a);
    th_cleanup(&b);
}
END_TEST

Suite *volumes_suite(void) {
    Suite *s = suite_create("volumes");
    TCase *tc = tcase_create("http");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, t_volume_bake_and_queries);
    tcase_add_test(tc, t_volume_refusals);
    tcase_add_test(tc, t_volume_cancel);
    tcase_add_test(tc, t_bake_volume_tool);
    tcase_add_test(tc, t_volume_concurrent_replace);
    suite_add_tcase(s, tc);
    char why[200];
    if (tc_pg_available(why, sizeof why) != 0) {
        printf("skip: volumes replicas: %s\n", why);
        return s;
    }
    TCase *tr = tcase_create("replicas");
    tcase_set_timeout(tr, 300);
    tcase_add_unchecked_fixture(tr, pg_setup, pg_teardown);
    tcase_add_test(tr, t_volume_replicas);
    suite_add_tcase(s, tr);
    return s;
}
