/*
 * check_levels: level geometry, the source of bakes: nav_level (validation,
 * dropping degenerate triangles, fan triangulation of OBJ faces, the blob
 * and its CRC, the OBJ export) and the /v1/levels endpoints against the
 * real binary (create, replace, list, export, delete, errors, restart).
 * Expected counts and bounds are derived by hand from the inputs.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_level.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

extern Suite *levels_suite(void);

/* A 4 x 4 square at y = 1 (two triangles), plus a collinear triangle and
   one with a repeated index: both degenerate, both dropped. */
static const float sq_v[] = {0, 1, 0, 4, 1, 0, 4, 1, 4, 0, 1, 4, 2, 1, 0};
static const uint32_t sq_t[] = {0, 1, 2, 0, 2, 3, 0, 4, 1, 2, 2, 3};

START_TEST(t_build_drops_degenerate) {
    nav_level *l = NULL;
    nav_error err;
    ck_assert_int_eq(nav_level_build(sq_v, 5, sq_t, 4, 0, &l, &err), NAV_OK);
    ck_assert_uint_eq(nav_level_triangle_count(l), 2);
    ck_assert_uint_eq(nav_level_dropped(l), 2);
    ck_assert_uint_eq(nav_level_vertex_count(l), 5);
    float lo[3], hi[3];
    nav_level_bounds(l, lo, hi);
    ck_assert(lo[0] == 0 && lo[1] == 1 && lo[2] == 0 && hi[0] == 4 && hi[1] == 1 && hi[2] == 4);
    nav_level_free(l);
}
END_TEST

START_TEST(t_build_refuses) {
    nav_level *l = NULL;
    nav_error err;
    const uint32_t oob[] = {0, 1, 7};
    ck_assert_int_eq(nav_level_build(sq_v, 5, oob, 1, 0, &l, &err), NAV_E_INVALID_MESH);
    ck_assert_ptr_null(l);
    ck_assert_str_eq(err.message, "triangles[0] references vertex 7 but there are 5 vertices");
    float bad[15];
    memcpy(bad, sq_v, sizeof bad);
    bad[7] = INFINITY; /* vertices[2].y */
    ck_assert_int_eq(nav_level_build(bad, 5, sq_t, 2, 0, &l, &err), NAV_E_INVALID_MESH);
    ck_assert_str_eq(err.message, "vertices[2] has a non-finite coordinate");
    ck_assert_int_eq(nav_level_build(sq_v, 5, sq_t, 0, 0, &l, &err), NAV_E_INVALID_MESH);
    ck_assert_str_eq(err.message, "the level has no triangles");
    ck_assert_int_eq(nav_level_build(sq_v, 5, sq_t + 6, 2, 0, &l, &err), NAV_E_INVALID_MESH);
    ck_assert_msg(strstr(err.message, "no triangle with an area"), "%s", err.message);
    ck_assert_int_eq(nav_level_build(sq_v, 5, sq_t, 4, 3, &l, &err), NAV_E_LIMIT);
}
END_TEST

START_TEST(t_obj_fans_faces) {
    /* A quad (2 triangles) and a pentagon (3): 5 triangles by fans. */
    static const char obj[] = "v 0 0 0\nv 2 0 0\nv 2 0 2\nv 0 0 2\n"
                              "v 10 3 0\nv 12 3 0\nv 13 3 1\nv 12 3 2\nv 10 3 2\n"
                              "f 1 2 3 4\nf 5 6 7 8 9\n";
    nav_level *l = NULL;
    nav_error err;
    ck_assert_int_eq(nav_level_from_obj(obj, sizeof obj - 1, 0, &l, &err), NAV_OK);
    ck_assert_uint_eq(nav_level_triangle_count(l), 5);
    const uint32_t *t = nav_level_triangles(l);
    /* the pentagon's fan from its first vertex (index 4): (4,5,6) (4,6,7) (4,7,8) */
    ck_assert(t[6] == 4 && t[7] == 5 && t[8] == 6 && t[12] == 4 && t[13] == 7 && t[14] == 8);
    /* export and read back: the same triangles and bounds */
    char *text = NULL;
    size_t len = 0;
    ck_assert_int_eq(nav_level_to_obj(l, &text, &len), NAV_OK);
    nav_level *back = NULL;
    ck_assert_int_eq(nav_level_from_obj(text, len, 0, &back, &err), NAV_OK);
    ck_assert_uint_eq(nav_level_triangle_count(back), 5);
    ck_assert_int_eq(memcmp(nav_level_triangles(back), t, 15 * sizeof *t), 0);
    float a0[3], a1[3], b0[3], b1[3];
    nav_level_bounds(l, a0, a1);
    nav_level_bounds(back, b0, b1);
    ck_assert(memcmp(a0, b0, sizeof a0) == 0 && memcmp(a1, b1, sizeof a1) == 0);
    ck_assert(a0[0] == 0 && a1[0] == 13 && a1[1] == 3);
    free(text);
    nav_level_free(back);
    nav_level_free(l);
}
END_TEST

START_TEST(t_blob_round_trip_and_damage) {
    nav_level *l = NULL;
    nav_error err;
    ck_assert_int_eq(nav_level_build(sq_v, 5, sq_t, 4, 0, &l, &err), NAV_OK);
    uint8_t *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(nav_level_serialize(l, &blob, &len), NAV_OK);
    /* 20-byte header, 5 vertices x 12, 2 triangles x 12, CRC */
    ck_assert_uint_eq(len, 20 + 60 + 24 + 4);
    nav_level *back = NULL;
    ck_assert_int_eq(nav_level_deserialize(blob, len, &back, &err), NAV_OK);
    ck_assert_uint_eq(nav_level_triangle_count(back), 2);
    ck_assert_uint_eq(nav_level_dropped(back), 2);
    ck_assert_int_eq(memcmp(nav_level_vertices(back), sq_v, sizeof sq_v), 0);
    nav_level_free(back);
    for (size_t i = 0; i < len; i += 7) { /* every 7th byte flipped: the CRC or a check sees it */
        blob[i] ^= 0x40;
        ck_assert_int_eq(nav_level_deserialize(blob, len, &back, &err), NAV_E_CORRUPT);
        blob[i] ^= 0x40;
    }
    ck_assert_int_eq(nav_level_deserialize(blob, len - 1, &back, &err), NAV_E_CORRUPT);
    free(blob);
    nav_level_free(l);
}
END_TEST

static th_response put_level(int port, const char *name, const char *type, const char *body,
                             const char *const *headers) {
    char path[128];
    snprintf(path, sizeof path, "/v1/levels/%s", name);
    th_response r;
    ck_assert_int_eq(th_request(port, "PUT", path, type, body, strlen(body), headers, &r), 0);
    return r;
}

START_TEST(t_http_levels) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    static const char obj[] = "v 0 1 0\nv 4 1 0\nv 4 1 4\nv 0 1 4\nv 2 1 0\n"
                              "f 1 2 3 4\nf 1 5 2\n"; /* a quad and a collinear triangle */
    th_response r = put_level(s.port, "b-level", "model/obj", obj, NULL);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    ck_assert_msg(strstr(r.body, "\"version\":1") && strstr(r.body, "\"triangles\":2") &&
                      strstr(r.body, "\"vertices\":5") &&
                      strstr(r.body, "\"dropped_triangles\":1") &&
                      strstr(r.body, "\"bounds\":[[0.0,1.0,0.0],[4.0,1.0,4.0]]"),
                  "%s", r.body);
    th_response_free(&r);
    r = put_level(s.port, "b-level", "application/json",
                  "{\"vertices\":[[0,0,0],[1,0,0],[0,0,1]],\"triangles\":[[0,1,2]]}", NULL);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"version\":2") &&
                      strstr(r.body, "\"triangles\":1"),
                  "%d %s", r.status, r.body);
    th_response_free(&r);
    r = put_level(s.port, "a-level", "text/plain", obj, NULL);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);

    /* Each refusal names the triangle or vertex, and changes nothing. */
    static const char *const bad[][2] = {
        {"{\"vertices\":[[0,0,0],[1,0,0],[0,0,1]],\"triangles\":[[0,1,3]]}",
         "triangles[0] references vertex 3"},
        {"{\"vertices\":[[0,0,0],[1,0,0],[0,1e39,1]],\"triangles\":[[0,1,2]]}",
         "vertices[2] has a non-finite coordinate"},
        {"{\"vertices\":[[0,0,0]],\"triangles\":[]}", "no triangles"},
        {"{\"vertices\":[[0,0,0],[1,0,0]],\"triangles\":[[0,1,\"x\"]]}", "triangles[0][2]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = put_level(s.port, "b-level", "application/json", bad[i][0], NULL);
        ck_assert_msg(r.status == 422 && strstr(r.body, "\"invalid_level\"") &&
                          strstr(r.body, bad[i][1]),
                      "case %zu: %d %s", i, r.status, r.body);
        th_response_free(&r);
    }
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/levels/b-level", NULL, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"version\":2"), "%s", r.body);
    th_response_free(&r);

    /* The list is sorted by name. */
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/levels", NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    const char *a = strstr(r.body, "\"a-level\""), *b = strstr(r.body, "\"b-level\"");
    ck_assert_msg(a && b && a < b, "%s", r.body);
    th_response_free(&r);

    /* The OBJ export uploads again as the same level. */
    ck_assert_int_eq(
        th_request(s.port, "GET", "/v1/levels/a-level?format=obj", NULL, NULL, 0, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    char *exported = strdup(r.body);
    th_response_free(&r);
    r = put_level(s.port, "copy", "model/obj", exported, NULL);
    ck_assert_msg(r.status == 201 && strstr(r.body, "\"triangles\":2") &&
                      strstr(r.body, "\"bounds\":[[0.0,1.0,0.0],[4.0,1.0,4.0]]"),
                  "%s", r.body);
    th_response_free(&r);
    free(exported);

    /* A level and a navmesh may share a name. */
    const char *mesh = "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4]],\"polygons\":[[0,3,2,1]]}";
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/a-level", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);

    /* Levels survive a restart. */
    ck_assert_int_eq(th_restart(&s, NULL), 0);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/levels/a-level", NULL, &r), 0);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"triangles\":2"), "%s", r.body);
    th_response_free(&r);

    ck_assert_int_eq(th_json(s.port, "DELETE", "/v1/levels/a-level", NULL, &r), 0);
    ck_assert_int_eq(r.status, 204);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/levels/a-level", NULL, &r), 0);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "DELETE", "/v1/levels/a-level", NULL, &r), 0);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/a-level", NULL, &r), 0);
    ck_assert_int_eq(r.status, 200); /* the navmesh of the same name stays */
    th_response_free(&r);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

START_TEST(t_http_levels_key_and_shared) {
    th_server s;
    const char *extra[] = {"--api-key", "k3y", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    th_response r =
        put_level(s.port, "x", "model/obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", NULL);
    ck_assert_int_eq(r.status, 401);
    th_response_free(&r);
    const char *auth[] = {"Authorization: Bearer k3y", NULL};
    const char *p = fx_shared_mesh_path("town.obj");
    if (!p) {
        printf("levels: ../shared/meshes absent: the town upload is skipped\n");
        r = put_level(s.port, "x", "model/obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", auth);
        ck_assert_int_eq(r.status, 201);
        th_response_free(&r);
    } else {
        size_t len = 0;
        char *town = fx_read_file(p, &len);
        ck_assert_ptr_nonnull(town);
        r = put_level(s.port, "town", "model/obj", town, auth);
        /* ../shared/meshes/README.md: 20,128 vertices, 28,522 triangles */
        ck_assert_msg(r.status == 201 && strstr(r.body, "\"vertices\":20128") &&
                          strstr(r.body, "\"triangles\":28522"),
                      "%d %.300s", r.status, r.body);
        th_response_free(&r);
        free(town);
    }
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

Suite *levels_suite(void) {
    Suite *s = suite_create("levels");
    TCase *t = tcase_create("levels");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, t_build_drops_degenerate);
    tcase_add_test(t, t_build_refuses);
    tcase_add_test(t, t_obj_fans_faces);
    tcase_add_test(t, t_blob_round_trip_and_damage);
    tcase_add_test(t, t_http_levels);
    tcase_add_test(t, t_http_levels_key_and_shared);
    suite_add_tcase(s, t);
    return s;
}
