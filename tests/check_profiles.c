/*
 * check_profiles: agent profiles, several complete meshes under one navmesh
 * name. The container blob (round trip, the plain form for a lone
 * "default", every damaged byte detected) and, against the real binary on
 * a store seeded with a two-profile navmesh, that every query and the
 * export select the profile they name, that the default is the first, that
 * an unknown profile is 400, and that the metadata lists the profiles and
 * the source.
 *
 * The two profiles are an L corridor ("default": the path from (1,0,1) to
 * (9,0,9) bends at the inner corner (8,0,2), so its length is
 * 2 * sqrt(7^2 + 1^2) = 14.1421) and one open 10 x 10 square ("wide": the
 * straight line, sqrt(8^2 + 8^2) = 11.3137).
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_profiles.h"
#include "storage/store.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

extern Suite *profiles_suite(void);

#define L_PATH 14.142136
#define OPEN_PATH 11.313708
#define SOURCE "{\"level\":\"yard\",\"level_version\":3}"

static nav_mesh *open_square(void) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 10, 10, 0, 0);
    return fx_build(b); /* frees b */
}

/* The two-profile container (default: L corridor, wide: open square). */
static uint8_t *two_profiles(size_t *len) {
    api_profile p[2] = {{.name = "default", .mesh = fx_l_corridor()},
                        {.name = "wide", .mesh = open_square()}};
    uint8_t *blob = NULL;
    ck_assert_int_eq(api_profiles_serialize(p, 2, SOURCE, &blob, len), NAV_OK);
    nav_mesh_free(p[0].mesh);
    nav_mesh_free(p[1].mesh);
    return blob;
}

START_TEST(t_round_trip) {
    size_t len = 0;
    uint8_t *blob = two_profiles(&len);
    ck_assert(memcmp(blob, "NAVP", 4) == 0);
    api_profile *p = NULL;
    uint32_t n = 0;
    char *src = NULL;
    ck_assert_int_eq(api_profiles_deserialize(blob, len, &p, &n, &src), NAV_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(p[0].name, "default");
    ck_assert_str_eq(p[1].name, "wide");
    ck_assert_uint_eq(nav_mesh_polygon_count(p[0].mesh), 9); /* 5 + 4 quads */
    ck_assert_uint_eq(nav_mesh_polygon_count(p[1].mesh), 1);
    ck_assert_str_eq(src, SOURCE);
    api_profiles_free(p, n);
    free(src);
    free(blob);
}
END_TEST

START_TEST(t_lone_default_is_plain) {
    /* An upload is stored as before, so older stores and newer ones agree. */
    api_profile one = {.name = "default", .mesh = open_square()};
    uint8_t *blob = NULL, *plain = NULL;
    size_t len = 0, plen = 0;
    ck_assert_int_eq(api_profiles_serialize(&one, 1, NULL, &blob, &len), NAV_OK);
    ck_assert_int_eq(nav_mesh_serialize(one.mesh, &plain, &plen), NAV_OK);
    ck_assert_uint_eq(len, plen);
    ck_assert(memcmp(blob, plain, len) == 0);
    api_profile *p = NULL;
    uint32_t n = 0;
    char *src = NULL;
    ck_assert_int_eq(api_profiles_deserialize(plain, plen, &p, &n, &src), NAV_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(p[0].name, "default");
    ck_assert_ptr_null(src);
    api_profiles_free(p, n);
    /* A single profile with another name is a container. */
    snprintf(one.name, sizeof one.name, "small");
    free(blob);
    ck_assert_int_eq(api_profiles_serialize(&one, 1, NULL, &blob, &len), NAV_OK);
    ck_assert(memcmp(blob, "NAVP", 4) == 0);
    nav_mesh_free(one.mesh);
    free(blob);
    free(plain);
}
END_TEST

START_TEST(t_every_damage_detected) {
    size_t len = 0;
    uint8_t *blob = two_profiles(&len);
    api_profile *p = NULL;
    uint32_t n = 0;
    char *src = NULL;
    /* Each byte flipped in turn (the magic too: then it reads as a damaged
       plain mesh), and every truncation. */
    for (size_t i = 0; i < len; i++) {
        blob[i] ^= 0x5a;
        ck_assert_msg(api_profiles_deserialize(blob, len, &p, &n, &src) == NAV_E_CORRUPT,
                      "byte %zu flipped was accepted", i);
        ck_assert_ptr_null(p);
        blob[i] ^= 0x5a;
    }
    for (size_t cut = 0; cut < len; cut++)
        ck_assert_msg(api_profiles_deserialize(blob, cut, &p, &n, &src) == NAV_E_CORRUPT,
                      "a blob cut to %zu bytes was accepted", cut);
    free(blob);
}
END_TEST

START_TEST(t_names) {
    ck_assert(api_profile_name_ok("default"));
    ck_assert(api_profile_name_ok("large_1.5-m"));
    ck_assert(!api_profile_name_ok(""));
    ck_assert(!api_profile_name_ok("a b"));
    ck_assert(!api_profile_name_ok("a/b"));
    char long_name[66];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    ck_assert(!api_profile_name_ok(long_name));
    long_name[64] = '\0';
    ck_assert(api_profile_name_ok(long_name));
}
END_TEST

/* ---- over HTTP ---- */

static th_server srv;

static void seeded_start(void) {
    char dir[] = "/tmp/navd-profiles-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char db[300];
    snprintf(db, sizeof db, "%s/navd.db", dir);
    store *st = NULL;
    ck_assert_int_eq(store_open(db, &st), STORE_OK);
    size_t len = 0;
    uint8_t *blob = two_profiles(&len);
    store_meta meta;
    int created = 0;
    ck_assert_int_eq(store_put(st, STORE_NAVMESH, "two", blob, len, 1000, &meta, &created),
                     STORE_OK);
    free(blob);
    store_close(st);
    ck_assert_int_eq(th_start(&srv, db, NULL), 0);
}

static double path_length(const char *body) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/path", body, &r), 0);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    double len = json_number_value(json_object_get(j, "length"));
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    json_decref(j);
    th_response_free(&r);
    return len;
}

static void expect_400(const char *method, const char *path, const char *body, const char *what) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, method, path, body, &r), 0);
    ck_assert_msg(r.status == 400 && strstr(r.body, "\"bad_request\"") && strstr(r.body, what),
                  "%s %s: %d %s", method, path, r.status, r.body);
    th_response_free(&r);
}

START_TEST(t_http_select) {
    seeded_start();
    const char *pts = "\"start\":[1,0,1],\"end\":[9,0,9]";
    char body[256];
    snprintf(body, sizeof body, "{%s}", pts);
    ck_assert_double_eq_tol(path_length(body), L_PATH, 1e-3);
    snprintf(body, sizeof body, "{%s,\"profile\":\"default\"}", pts);
    ck_assert_double_eq_tol(path_length(body), L_PATH, 1e-3);
    snprintf(body, sizeof body, "{%s,\"profile\":\"wide\"}", pts);
    ck_assert_double_eq_tol(path_length(body), OPEN_PATH, 1e-3);
    /* Cached answers stay per profile: ask both again. */
    ck_assert_double_eq_tol(path_length(body), OPEN_PATH, 1e-3);
    snprintf(body, sizeof body, "{%s}", pts);
    ck_assert_double_eq_tol(path_length(body), L_PATH, 1e-3);

    /* GET form */
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "GET",
                             "/v1/navmeshes/two/path?start=1,0,1&end=9,0,9&profile=wide", NULL, &r),
                     0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"length\":11.31"), "%s", r.body);
    th_response_free(&r);

    /* The batch: a shared profile and a per-query one; a bad one fails its slot only. */
    ck_assert_int_eq(
        th_json(srv.port, "POST", "/v1/navmeshes/two/paths",
                "{\"profile\":\"wide\",\"queries\":[{\"start\":[1,0,1],\"end\":[9,0,9]},"
                "{\"start\":[1,0,1],\"end\":[9,0,9],\"profile\":\"default\"},"
                "{\"start\":[1,0,1],\"end\":[9,0,9],\"profile\":\"tiny\"}]}",
                &r),
        0);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_msg(r.status == 200 && j, "%s", r.body);
    json_t *res = json_object_get(j, "results");
    ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(res, 0), "length")),
                            OPEN_PATH, 1e-3);
    ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(res, 1), "length")),
                            L_PATH, 1e-3);
    const char *msg = json_string_value(
        json_object_get(json_object_get(json_array_get(res, 2), "error"), "message"));
    ck_assert_msg(msg && strstr(msg, "queries[2].profile 'tiny'"), "%s", r.body);
    json_decref(j);
    th_response_free(&r);

    /* nearest: (5,0,5) is outside the L (its corner square is [8,10]x[0,2] and
       [0,10]x[0,2]...) but inside the open square. */
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/nearest",
                             "{\"point\":[5,0,5],\"profile\":\"wide\",\"extents\":[1,1,1]}", &r),
                     0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"distance\":0"), "%s", r.body);
    th_response_free(&r);
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/nearest",
                             "{\"point\":[5,0,5],\"extents\":[1,1,1]}", &r),
                     0);
    ck_assert_msg(r.status == 422 && strstr(r.body, "point_off_mesh"), "%s", r.body);
    th_response_free(&r);

    /* raycast from (1,0,1) to (9,0,9): a hit on the L, none on the square */
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/raycast",
                             "{\"start\":[1,0,1],\"end\":[9,0,9]}", &r),
                     0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"hit\":true"), "%s", r.body);
    th_response_free(&r);
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/raycast",
                             "{\"start\":[1,0,1],\"end\":[9,0,9],\"profile\":\"wide\"}", &r),
                     0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"hit\":false"), "%s", r.body);
    th_response_free(&r);

    /* reachable with max_cost 3 from (1,0,1): on the square that covers the
       3 m disc's polygon (the whole square, 100 m^2) */
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/reachable",
                             "{\"start\":[1,0,1],\"max_cost\":3,\"profile\":\"wide\"}", &r),
                     0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"area\":100"), "%s", r.body);
    th_response_free(&r);

    /* step: one agent seeking (9,0,9) from (1,0,1) heads straight for it on
       the square, for the inner corner (8,0,2) on the L. */
    const char *step_fmt =
        "{\"dt\":0.1,%s\"agents\":[{\"id\":\"a\",\"position\":[1,0,1],\"velocity\":[0,0,0],"
        "\"radius\":0.3,\"max_speed\":2,\"max_accel\":100,\"behavior\":\"seek\","
        "\"target\":[9,0,9]}]}";
    char sb[512];
    snprintf(sb, sizeof sb, step_fmt, "\"profile\":\"wide\",");
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/step", sb, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"corners\":[[9.0,0.0,9.0]"), "%s", r.body);
    th_response_free(&r);
    snprintf(sb, sizeof sb, step_fmt, "");
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/two/step", sb, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"corners\":[[8.0,0.0,2.0]"), "%s", r.body);
    th_response_free(&r);
    snprintf(sb, sizeof sb, step_fmt, "\"profile\":\"tiny\",");
    expect_400("POST", "/v1/navmeshes/two/step", sb, "profile 'tiny' does not exist");

    /* unknown or malformed profiles */
    snprintf(body, sizeof body, "{%s,\"profile\":\"tiny\"}", pts);
    expect_400("POST", "/v1/navmeshes/two/path", body, "profile 'tiny' does not exist");
    snprintf(body, sizeof body, "{%s,\"profile\":7}", pts);
    expect_400("POST", "/v1/navmeshes/two/path", body, "profile must be a profile name");
    expect_400("POST", "/v1/navmeshes/two/nearest", "{\"point\":[1,0,1],\"profile\":\"tiny\"}",
               "profile 'tiny'");
    expect_400("GET", "/v1/navmeshes/two?format=json&profile=tiny", NULL, "profile 'tiny'");
    expect_400("GET", "/v1/navmeshes/two?format=json&profile=a%20b", NULL, "profile must be");
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

START_TEST(t_http_metadata_and_export) {
    seeded_start();
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "GET", "/v1/navmeshes/two", NULL, &r), 0);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_msg(r.status == 200 && j, "%s", r.body);
    json_t *names = json_object_get(j, "profiles");
    ck_assert_uint_eq(json_array_size(names), 2);
    ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "default");
    ck_assert_str_eq(json_string_value(json_array_get(names, 1)), "wide");
    json_t *src = json_object_get(j, "source");
    ck_assert_str_eq(json_string_value(json_object_get(src, "level")), "yard");
    ck_assert_int_eq(json_integer_value(json_object_get(src, "level_version")), 3);
    /* the figures are the default profile's: 9 polygons */
    ck_assert_int_eq(json_integer_value(json_object_get(j, "polygons")), 9);
    json_decref(j);
    th_response_free(&r);

    ck_assert_int_eq(
        th_json(srv.port, "GET", "/v1/navmeshes/two?format=json&profile=wide", NULL, &r), 0);
    j = json_loads(r.body, 0, NULL);
    ck_assert_msg(r.status == 200 && j, "%s", r.body);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "polygons")), 1);
    json_decref(j);
    th_response_free(&r);
    ck_assert_int_eq(th_json(srv.port, "GET", "/v1/navmeshes/two?format=json", NULL, &r), 0);
    j = json_loads(r.body, 0, NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "polygons")), 9);
    json_decref(j);
    th_response_free(&r);

    /* An upload replaces the set with the single profile "default", no source. */
    char *grid = fx_grid_json(2);
    ck_assert_int_eq(th_json(srv.port, "PUT", "/v1/navmeshes/two", grid, &r), 0);
    free(grid);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"profiles\":[\"default\"]") &&
                      !strstr(r.body, "\"source\""),
                  "%s", r.body);
    th_response_free(&r);
    expect_400("GET", "/v1/navmeshes/two?format=json&profile=wide", NULL, "profile 'wide'");
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

Suite *profiles_suite(void) {
    Suite *s = suite_create("profiles");
    TCase *tc = tcase_create("container");
    tcase_add_test(tc, t_round_trip);
    tcase_add_test(tc, t_lone_default_is_plain);
    tcase_add_test(tc, t_every_damage_detected);
    tcase_add_test(tc, t_names);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("http");
    tcase_add_test(th, t_http_select);
    tcase_add_test(th, t_http_metadata_and_export);
    suite_add_tcase(s, th);
    return s;
}
