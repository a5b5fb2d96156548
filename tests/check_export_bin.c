/*
 * check_export_bin: GET /v1/navmeshes/{name}?format=bin, the compact export
 * the viewer loads (layout in api/api_codec.h and api/openapi.yaml), against
 * the real binary. The mesh is written here by hand, already in the form the
 * build keeps (welded, wound, in order), so every expected byte is derived
 * from the upload: the header's counts, each section's offset, the floats,
 * the indices, the padded areas, the detail arrays and the links' JSON (which
 * must equal the JSON export's). Then the refusals: a bad format, an unknown
 * profile, an unknown mesh.
 */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_http.h"

extern Suite *export_bin_suite(void);

/* Two 2 m squares side by side (the second of area 5), a one-way jump link,
   and a height mesh: a tent over the first square (its centre 0.5 m up, a
   detail vertex) and two triangles over the second. */
static const char MESH[] = "{\"vertices\":[[0,0,0],[2,0,0],[2,0,2],[0,0,2],[4,0,0],[4,0,2]],"
                           "\"polygons\":[[0,3,2,1],[1,2,5,4]],\"areas\":[0,5],"
                           "\"links\":[{\"start\":[0.5,0,0.5],\"end\":[3.5,0,1.5],\"radius\":0.5,"
                           "\"bidirectional\":false,\"area\":3,\"kind\":\"jump\"}],"
                           "\"detail\":{\"vertices\":[[1,0.5,1]],"
                           "\"triangles\":[[0,1,6],[1,2,6],[2,3,6],[3,0,6],[1,4,5],[1,5,2]],"
                           "\"polygon_triangles\":[[0,4],[4,2]]}}";

static uint32_t u32_at(const th_response *r, size_t off) {
    const unsigned char *p = (const unsigned char *)r->body + off;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float f32_at(const th_response *r, size_t off) {
    uint32_t bits = u32_at(r, off);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

START_TEST(t_bin_layout) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/two", MESH, &r), 0);
    ck_assert_msg(r.status == 201, "%s", r.body);
    th_response_free(&r);

    ck_assert_int_eq(
        th_request(s.port, "GET", "/v1/navmeshes/two?format=bin", NULL, NULL, 0, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    char ct[64];
    ck_assert_str_eq(th_header(&r, "Content-Type", ct, sizeof ct), "application/octet-stream");
    ck_assert_int_eq(memcmp(r.body, "NAVB", 4), 0);
    /* version, nverts, npolys, nindices, ndetail_verts, ndetail_tris, has_detail */
    const uint32_t head[7] = {1, 6, 2, 8, 1, 6, 1};
    for (int i = 0; i < 7; i++)
        ck_assert_msg(u32_at(&r, 4 + 4 * i) == head[i], "header word %d: %u", i,
                      u32_at(&r, 4 + 4 * i));
    const uint32_t links_len = u32_at(&r, 32);
    /* 36 header + 72 verts + 12 poly_start + 32 indices + 4 areas (2, padded)
       + 12 detail verts + 72 detail tris + 16 ranges = 256, then the links. */
    ck_assert_uint_eq(r.body_len, 256 + links_len);
    const float verts[18] = {0, 0, 0, 2, 0, 0, 2, 0, 2, 0, 0, 2, 4, 0, 0, 4, 0, 2};
    for (int i = 0; i < 18; i++)
        ck_assert_msg(f32_at(&r, 36 + 4 * i) == verts[i], "verts[%d]", i);
    const uint32_t start[3] = {0, 4, 8}, idx[8] = {0, 3, 2, 1, 1, 2, 5, 4};
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(u32_at(&r, 108 + 4 * i), start[i]);
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(u32_at(&r, 120 + 4 * i), idx[i]);
    const unsigned char *areas = (const unsigned char *)r.body + 152;
    ck_assert(areas[0] == 0 && areas[1] == 5 && areas[2] == 0 && areas[3] == 0);
    ck_assert(f32_at(&r, 156) == 1.0f && f32_at(&r, 160) == 0.5f && f32_at(&r, 164) == 1.0f);
    const uint32_t tris[18] = {0, 1, 6, 1, 2, 6, 2, 3, 6, 3, 0, 6, 1, 4, 5, 1, 5, 2};
    for (int i = 0; i < 18; i++)
        ck_assert_uint_eq(u32_at(&r, 168 + 4 * i), tris[i]);
    const uint32_t ranges[4] = {0, 4, 4, 2};
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(u32_at(&r, 240 + 4 * i), ranges[i]);

    /* The links are the JSON export's "links", byte for byte equal as JSON. */
    json_error_t je;
    json_t *links = json_loadb(r.body + 256, links_len, 0, &je);
    ck_assert_msg(links != NULL, "links JSON: %s", je.text);
    th_response j;
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/two?format=json", NULL, &j), 0);
    json_t *doc = json_loads(j.body, 0, &je);
    ck_assert_ptr_nonnull(doc);
    ck_assert(json_equal(links, json_object_get(doc, "links")));
    ck_assert_int_eq(json_array_size(links), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(links, 0), "kind")), "jump");
    json_decref(doc);
    json_decref(links);
    th_response_free(&j);
    th_response_free(&r);

    /* Without detail or links: no detail section, "[]" for the links. */
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/one",
                             "{\"vertices\":[[0,1,0],[3,1,0],[3,1,3]],\"polygons\":[[0,2,1]]}", &r),
                     0);
    ck_assert_msg(r.status == 201, "%s", r.body);
    th_response_free(&r);
    ck_assert_int_eq(
        th_request(s.port, "GET", "/v1/navmeshes/one?format=bin", NULL, NULL, 0, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert(u32_at(&r, 8) == 3 && u32_at(&r, 12) == 1 && u32_at(&r, 16) == 3 &&
              u32_at(&r, 20) == 0 && u32_at(&r, 24) == 0 && u32_at(&r, 28) == 0 &&
              u32_at(&r, 32) == 2);
    /* 36 + 36 verts + 8 poly_start + 12 indices + 4 areas = 96, then "[]" */
    ck_assert_uint_eq(r.body_len, 98);
    ck_assert(f32_at(&r, 40) == 1.0f && f32_at(&r, 48) == 3.0f);
    ck_assert_int_eq(memcmp(r.body + 96, "[]", 2), 0);
    th_response_free(&r);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

START_TEST(t_bin_refusals) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/two", MESH, &r), 0);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/two?format=bogus", NULL, &r), 0);
    ck_assert_msg(r.status == 400 && strstr(r.body, "format must be json, obj or bin"), "%s",
                  r.body);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/two?format=bin&profile=large", NULL, &r),
                     0);
    ck_assert_msg(r.status == 400 && strstr(r.body, "profile 'large' does not exist"), "%s",
                  r.body);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/nope?format=bin", NULL, &r), 0);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

Suite *export_bin_suite(void) {
    Suite *s = suite_create("export_bin");
    TCase *t = tcase_create("export_bin");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, t_bin_layout);
    tcase_add_test(t, t_bin_refusals);
    suite_add_tcase(s, t);
    return s;
}
