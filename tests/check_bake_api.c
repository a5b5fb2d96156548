/*
 * check_bake_api: baking over HTTP against the real binary: a bake
 * publishes a navmesh that answers queries, a second bake replaces it
 * (version + 1), several profiles bake into one navmesh whose queries
 * differ as the radii say, a queued and a running job can be cancelled
 * without touching their navmeshes, and a bake over the limits fails with
 * invalid_level.
 *
 * The level is a flat 20 x 20 m square (two triangles). Expected figures
 * come from the geometry: the walkable area of a square eroded by radius r
 * is (20 - 2r)^2, give or take one cell (0.3 m) on each side; a straight
 * path from (2,0,2) to (18,0,18) is 16 * sqrt(2) = 22.627 m.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test_http.h"

extern Suite *bake_api_suite(void);

#define YARD "{\"vertices\":[[0,0,0],[20,0,0],[20,0,20],[0,0,20]],\"triangles\":[[0,3,2],[0,2,1]]}"
/* A big flat square: a bake of it takes long enough to be cancelled. */
#define FIELD                                                                                      \
    "{\"vertices\":[[0,0,0],[300,0,0],[300,0,300],[0,0,300]],\"triangles\":[[0,3,2],[0,2,1]]}"

static th_server srv;

static void put_level(const char *name, const char *body) {
    char path[96];
    snprintf(path, sizeof path, "/v1/levels/%s", name);
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "PUT", path, body, &r), 0);
    ck_assert_msg(r.status == 201 || r.status == 200, "%d %s", r.status, r.body);
    th_response_free(&r);
}

/* POST path with body; checks the status and returns the parsed body. */
static json_t *call(const char *method, const char *path, const char *body, int status) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, method, path, body, &r), 0);
    ck_assert_msg(r.status == status, "%s %s: %d %s", method, path, r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_msg(j != NULL, "%s", r.body);
    th_response_free(&r);
    return j;
}

static const char *str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static double num(const json_t *o, const char *key) {
    return json_number_value(json_object_get(o, key));
}

START_TEST(t_bake_publishes_and_replaces) {
    ck_assert_int_eq(th_start(&srv, NULL, NULL), 0);
    put_level("yard", YARD);
    json_t *job = call("POST", "/v1/navmeshes/yard/bake?wait=true", "{\"level\":\"yard\"}", 200);
    ck_assert_str_eq(str(job, "state"), "done");
    ck_assert_str_eq(str(job, "stage"), "done");
    ck_assert(num(job, "progress") == 1.0);
    ck_assert(json_is_null(json_object_get(job, "error")));
    json_t *res = json_object_get(job, "result");
    ck_assert_int_eq(json_integer_value(json_object_get(res, "version")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(res, "components")), 1);
    double area = num(res, "area"); /* (20 - 1.2)^2 = 353.4 */
    ck_assert_msg(area > 331 && area < 376, "area %.2f", area);
    json_t *src = json_object_get(res, "source");
    ck_assert_str_eq(str(src, "level"), "yard");
    ck_assert_int_eq(json_integer_value(json_object_get(src, "level_version")), 1);
    json_t *set = json_object_get(src, "settings");
    ck_assert(num(set, "cell_size") == 0.3);
    ck_assert(num(set, "cell_height") == 0.2);
    ck_assert(num(json_object_get(json_object_get(set, "profiles"), "default"), "radius") == 0.6);
    ck_assert_ptr_nonnull(json_object_get(res, "report"));
    json_decref(job);

    /* the navmesh answers queries */
    json_t *p =
        call("POST", "/v1/navmeshes/yard/path", "{\"start\":[2,0,2],\"end\":[18,0,18]}", 200);
    ck_assert_str_eq(str(p, "status"), "complete");
    ck_assert_double_eq_tol(num(p, "length"), 22.627417, 0.05);
    json_decref(p);

    /* its metadata says where it came from */
    json_t *meta = call("GET", "/v1/navmeshes/yard", NULL, 200);
    ck_assert_str_eq(str(json_object_get(meta, "source"), "level"), "yard");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(meta, "profiles"), 0)),
                     "default");
    json_decref(meta);

    /* a second bake replaces it: version 2, same answer */
    job = call("POST", "/v1/navmeshes/yard/bake?wait=true", "{\"level\":\"yard\"}", 200);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(job, "result"), "version")),
                     2);
    json_decref(job);
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

START_TEST(t_bake_profiles) {
    ck_assert_int_eq(th_start(&srv, NULL, NULL), 0);
    put_level("yard", YARD);
    json_t *job =
        call("POST", "/v1/navmeshes/yard/bake?wait=true",
             "{\"level\":\"yard\",\"profiles\":{\"small\":{\"radius\":0.3},\"large\":{\"radius\":"
             "1.5}}}",
             200);
    ck_assert_str_eq(str(job, "state"), "done");
    json_t *names = json_object_get(json_object_get(job, "result"), "profiles");
    ck_assert_uint_eq(json_array_size(names), 2);
    ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "small");
    ck_assert_str_eq(json_string_value(json_array_get(names, 1)), "large");
    json_decref(job);

    /* Each profile is a whole mesh: the small agent's reaches to 0.3 m from
       the edge, the large one's to 1.5 m, so (1, 0, 1) is on the first and
       more than 0.4 m away from the second. */
    json_t *n = call("POST", "/v1/navmeshes/yard/nearest",
                     "{\"point\":[1,0,1],\"extents\":[0.2,1,0.2],\"profile\":\"small\"}", 200);
    /* Straight above: a floor at y = 0 becomes a surface at the top of its
       voxel, one cell height (0.2 m) up, as in Recast. */
    ck_assert_msg(num(n, "distance") < 0.2 + 1e-4, "%f", num(n, "distance"));
    json_decref(n);
    n = call("POST", "/v1/navmeshes/yard/nearest",
             "{\"point\":[1,0,1],\"extents\":[0.2,1,0.2],\"profile\":\"large\"}", 422);
    ck_assert_str_eq(str(json_object_get(n, "error"), "code"), "point_off_mesh");
    json_decref(n);
    /* no profile: the first, small */
    n = call("POST", "/v1/navmeshes/yard/nearest", "{\"point\":[1,0,1],\"extents\":[0.2,1,0.2]}",
             200);
    json_decref(n);
    /* each profile's export is its own mesh: areas (20 - 2r)^2 within a cell */
    json_t *m = call("GET", "/v1/navmeshes/yard?format=json&profile=large", NULL, 200);
    json_decref(m);
    json_t *meta = call("GET", "/v1/navmeshes/yard", NULL, 200);
    double small_area = num(meta, "area"); /* (20 - 0.6)^2 = 376.4 */
    ck_assert_msg(small_area > 353 && small_area < 400, "small area %.2f", small_area);
    json_decref(meta);
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

/* Waits (bounded) for job `id` to reach a final state; returns its object. */
static json_t *wait_end(const char *id) {
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    for (int i = 0; i < 6000; i++) {
        json_t *j = call("GET", path, NULL, 200);
        const char *st = str(j, "state");
        if (strcmp(st, "queued") && strcmp(st, "running"))
            return j;
        json_decref(j);
        usleep(10000);
    }
    ck_abort_msg("job %s never ended", id);
    return NULL;
}

START_TEST(t_cancel_leaves_navmesh_unchanged) {
    const char *args[] = {"--max-concurrent-bakes", "1", NULL};
    ck_assert_int_eq(th_start(&srv, NULL, args), 0);
    put_level("field", FIELD);
    put_level("yard", YARD);
    /* A long bake (300 m at 0.1 m cells, 9,000,000 columns) takes the one
       bake thread; the next job waits behind it. */
    json_t *first = call("POST", "/v1/navmeshes/one/bake",
                         "{\"level\":\"field\",\"cell_size\":0.1,\"cell_height\":0.1}", 202);
    json_t *second = call("POST", "/v1/navmeshes/two/bake", "{\"level\":\"yard\"}", 202);
    char id1[64], id2[64], path[96];
    snprintf(id1, sizeof id1, "%s", str(first, "id"));
    snprintf(id2, sizeof id2, "%s", str(second, "id"));
    json_decref(first);
    json_decref(second);

    /* the queued one: cancelled at once, never run */
    snprintf(path, sizeof path, "/v1/jobs/%s", id2);
    json_t *c = call("DELETE", path, NULL, 200);
    ck_assert_str_eq(str(c, "state"), "cancelled");
    ck_assert(json_is_null(json_object_get(c, "started_at")));
    json_decref(c);

    /* the running one: progress never goes back while we watch it */
    snprintf(path, sizeof path, "/v1/jobs/%s", id1);
    double last = 0;
    for (int i = 0; i < 5; i++) {
        json_t *j = call("GET", path, NULL, 200);
        ck_assert_msg(num(j, "progress") >= last, "progress went from %f to %f", last,
                      num(j, "progress"));
        last = num(j, "progress");
        json_decref(j);
    }
    c = call("DELETE", path, NULL, 200);
    int cancelled = !strcmp(str(c, "state"), "cancelled");
    json_decref(c);
    /* A tiny bake with wait=true runs only once the thread is free, i.e.
       once the cancelled run has returned; then nothing it did is visible. */
    json_t *third = call("POST", "/v1/navmeshes/three/bake?wait=true", "{\"level\":\"yard\"}", 200);
    ck_assert_str_eq(str(third, "state"), "done");
    json_decref(third);
    json_t *gone = call("GET", "/v1/navmeshes/two", NULL, 404);
    json_decref(gone);
    if (cancelled) {
        gone = call("GET", "/v1/navmeshes/one", NULL, 404);
        json_decref(gone);
    } else {
        fprintf(stderr, "bake_api: the long bake ended before it could be cancelled\n");
    }
    json_t *j = wait_end(id1);
    ck_assert_str_eq(str(j, "state"), cancelled ? "cancelled" : "done");
    json_decref(j);
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

START_TEST(t_limits_fail_the_job) {
    const char *args[] = {"--max-bake-cells", "1000", NULL};
    ck_assert_int_eq(th_start(&srv, NULL, args), 0);
    put_level("yard", YARD);
    /* 20 m at 0.3 m: 67 x 67 = 4,489 columns, over 1,000 */
    json_t *job = call("POST", "/v1/navmeshes/yard/bake?wait=true", "{\"level\":\"yard\"}", 200);
    ck_assert_str_eq(str(job, "state"), "failed");
    json_t *err = json_object_get(job, "error");
    ck_assert_str_eq(str(err, "code"), "invalid_level");
    ck_assert_msg(strstr(str(err, "message"), "cells"), "%s", str(err, "message"));
    json_decref(job);
    json_t *gone = call("GET", "/v1/navmeshes/yard", NULL, 404);
    json_decref(gone);
    /* a coarser bake fits: 20 m at 1 m is 400 columns */
    job =
        call("POST", "/v1/navmeshes/yard/bake?wait=true",
             "{\"level\":\"yard\",\"cell_size\":1,\"profiles\":{\"default\":{\"radius\":1}}}", 200);
    ck_assert_msg(!strcmp(str(job, "state"), "done"), "%s", str(job, "state"));
    json_decref(job);
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

Suite *bake_api_suite(void) {
    Suite *s = suite_create("bake_api");
    TCase *tc = tcase_create("http");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_bake_publishes_and_replaces);
    tcase_add_test(tc, t_bake_profiles);
    tcase_add_test(tc, t_cancel_leaves_navmesh_unchanged);
    tcase_add_test(tc, t_limits_fail_the_job);
    suite_add_tcase(s, tc);
    return s;
}
