/*
 * check_api_http: integration tests of the HTTP API against the real navd
 * binary (tests/test_http.h): navmesh create / replace / list / get /
 * export / delete, every error code of those endpoints with its body
 * format, auth, persistence across restarts and kill -9, concurrent
 * clients, /health, /metrics, logging, configuration errors and graceful
 * shutdown.
 *
 * One server per test case (an unchecked fixture, started once in the
 * runner and shared by that case's tests); tests use distinct mesh names
 * so they do not depend on each other's order.
 *
 * Meshes are written out by hand here, with their expected metadata
 * derived by hand next to them.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "service/svc_config.h"
#include "test_fixtures.h"
#include "test_http.h"

/* The gauge's sample line in /metrics, preceded by its newline. */
#define IN_FLIGHT "\nnavd_requests_in_flight "

/* Square [0,10]^2 with the hole [4,6]^2: grid lines 0, 4, 6, 10 on both axes,
   vertex (i, j) = index 4j + i at (xs[i], 0, zs[j]); 8 quads (all cells but the
   centre one). Hand-derived metadata: 16 vertices (each is a corner of some
   kept cell), 8 polygons, 1 component, area 10*10 - 2*2 = 96 m^2, bounds
   [[0,0,0],[10,0,10]]. */
static const char SQUARE[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[6,0,0],[10,0,0],[0,0,4],[4,0,4],[6,0,4],[10,0,4],"
    "[0,0,6],[4,0,6],[6,0,6],[10,0,6],[0,0,10],[4,0,10],[6,0,10],[10,0,10]],"
    "\"polygons\":[[0,1,5,4],[1,2,6,5],[2,3,7,6],[4,5,9,8],[6,7,11,10],[8,9,13,12],"
    "[9,10,14,13],[10,11,15,14]]}";

/* L corridor of width 2: [0,10]x[0,2] as 5 quads (x lines 0,2,...,10) and
   [8,10]x[2,10] as 4 quads (z lines 2,4,...,10). Vertices: 6 x 2 on the
   first strip + 2 x 4 above it = 20; 9 polygons; area 20 + 16 = 36 m^2. */
static const char L_CORRIDOR[] =
    "{\"vertices\":[[0,0,0],[2,0,0],[4,0,0],[6,0,0],[8,0,0],[10,0,0],"
    "[0,0,2],[2,0,2],[4,0,2],[6,0,2],[8,0,2],[10,0,2],"
    "[8,0,4],[10,0,4],[8,0,6],[10,0,6],[8,0,8],[10,0,8],[8,0,10],[10,0,10]],"
    "\"polygons\":[[0,1,7,6],[1,2,8,7],[2,3,9,8],[3,4,10,9],[4,5,11,10],"
    "[10,11,13,12],[12,13,15,14],[14,15,17,16],[16,17,19,18]],"
    "\"areas\":[0,0,0,0,0,1,1,0,0]}";

/* Two 4 m islands [0,4]x[0,4] and [10,14]x[0,4] joined by a two-way "jump"
   link: 8 vertices, 2 polygons, 1 link, 1 component (links count as
   two-way), area 32 m^2, bounds [[0,0,0],[14,0,4]]. */
static const char ISLANDS_LINK[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4],[10,0,0],[14,0,0],[14,0,4],[10,0,4]],"
    "\"polygons\":[[0,1,2,3],[4,5,6,7]],"
    "\"links\":[{\"start\":[3,0,2],\"end\":[11,0,2],\"radius\":0.5,\"bidirectional\":true,"
    "\"area\":2,\"kind\":\"jump\"}]}";

static th_server srv;

static void start_default(void) {
    ck_assert_msg(th_start(&srv, NULL, NULL) == 0, "navd did not start (NAVD_BIN=%s)",
                  getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "(unset)");
}

/* Stops a server, which must exit 0 on SIGTERM, and removes its temp dir
   (before asserting, so a failing stop leaves nothing behind). */
static void stop_clean(th_server *s) {
    int rc = th_stop(s);
    th_cleanup(s);
    ck_assert_int_eq(rc, 0);
}

static void stop_default(void) {
    stop_clean(&srv);
}

static json_t *parse(const th_response *r) {
    json_error_t je;
    json_t *j = json_loadb(r->body, r->body_len, 0, &je);
    ck_assert_msg(j != NULL, "response is not JSON (%s): %.200s", je.text, r->body);
    return j;
}

/* Checks the contract's error format: exactly {"error":{"code","message"}}. */
static void assert_error(const th_response *r, int status, const char *code, const char *fragment) {
    ck_assert_msg(r->status == status, "status %d, expected %d: %.300s", r->status, status,
                  r->body);
    char ct[64];
    ck_assert_ptr_nonnull(th_header(r, "Content-Type", ct, sizeof ct));
    ck_assert_str_eq(ct, "application/json");
    json_t *j = parse(r);
    ck_assert_int_eq(json_object_size(j), 1);
    json_t *e = json_object_get(j, "error");
    ck_assert(json_is_object(e));
    ck_assert_int_eq(json_object_size(e), 2);
    ck_assert_str_eq(json_string_value(json_object_get(e, "code")), code);
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_ptr_nonnull(msg);
    ck_assert_msg(strlen(msg) > 0, "empty message");
    if (fragment)
        ck_assert_msg(strstr(msg, fragment), "message '%s' lacks '%s'", msg, fragment);
    /* never a file path or an internal detail */
    ck_assert_msg(!strstr(msg, "/tmp") && !strstr(msg, ".db") && !strstr(msg, ".c:"),
                  "message leaks internals: %s", msg);
    json_decref(j);
}

static th_response put_mesh(const char *name, const char *body) {
    char path[128];
    snprintf(path, sizeof path, "/v1/navmeshes/%s", name);
    th_response r;
    th_json(srv.port, "PUT", path, body, &r);
    return r;
}

static json_int_t int_field(const json_t *j, const char *k) {
    const json_t *v = json_object_get(j, k);
    ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
    return json_integer_value(v);
}

static double num_field(const json_t *j, const char *k) {
    const json_t *v = json_object_get(j, k);
    ck_assert_msg(json_is_number(v), "%s is not a number", k);
    return json_number_value(v);
}

static void assert_bounds(const json_t *meta, double x0, double y0, double z0, double x1, double y1,
                          double z1) {
    const json_t *b = json_object_get(meta, "bounds");
    double want[2][3] = {{x0, y0, z0}, {x1, y1, z1}};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++)
            ck_assert_double_eq_tol(json_number_value(json_array_get(json_array_get(b, i), k)),
                                    want[i][k], 1e-6);
}

/* RFC 3339 UTC with milliseconds: YYYY-MM-DDTHH:MM:SS.mmmZ */
static void assert_rfc3339(const char *s) {
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(strlen(s), 24);
    ck_assert(s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
              s[19] == '.' && s[23] == 'Z');
}

/* ---- navmesh lifecycle ---- */

START_TEST(create_replace_get_delete) {
    th_response r = put_mesh("sq", SQUARE);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    json_t *m = parse(&r);
    ck_assert_str_eq(json_string_value(json_object_get(m, "name")), "sq");
    ck_assert_int_eq(int_field(m, "version"), 1);
    ck_assert_int_eq(int_field(m, "vertices"), 16);
    ck_assert_int_eq(int_field(m, "polygons"), 8);
    ck_assert_int_eq(int_field(m, "links"), 0);
    ck_assert_int_eq(int_field(m, "components"), 1);
    ck_assert_double_eq_tol(num_field(m, "area"), 96.0, 1e-6);
    assert_bounds(m, 0, 0, 0, 10, 0, 10);
    const char *created = json_string_value(json_object_get(m, "created_at"));
    assert_rfc3339(created);
    assert_rfc3339(json_string_value(json_object_get(m, "updated_at")));
    char created_copy[32];
    snprintf(created_copy, sizeof created_copy, "%s", created);
    json_decref(m);
    th_response_free(&r);

    /* replace: 200, version + 1, the new mesh's figures, created_at kept */
    r = put_mesh("sq", L_CORRIDOR);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    m = parse(&r);
    ck_assert_int_eq(int_field(m, "version"), 2);
    ck_assert_int_eq(int_field(m, "vertices"), 20);
    ck_assert_int_eq(int_field(m, "polygons"), 9);
    ck_assert_double_eq_tol(num_field(m, "area"), 36.0, 1e-6);
    ck_assert_str_eq(json_string_value(json_object_get(m, "created_at")), created_copy);
    ck_assert(strcmp(json_string_value(json_object_get(m, "updated_at")), created_copy) >= 0);
    json_decref(m);
    th_response_free(&r);

    /* get: the same metadata */
    th_json(srv.port, "GET", "/v1/navmeshes/sq", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    m = parse(&r);
    ck_assert_int_eq(int_field(m, "version"), 2);
    ck_assert_int_eq(int_field(m, "polygons"), 9);
    json_decref(m);
    th_response_free(&r);

    /* a failed replace changes nothing */
    r = put_mesh("sq", "{\"vertices\":[[0,0,0],[1,0,0],[1,0,1]],\"polygons\":[[0,1,7]]}");
    assert_error(&r, 422, "invalid_navmesh", "polygons[0]");
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/sq", NULL, &r);
    m = parse(&r);
    ck_assert_int_eq(int_field(m, "version"), 2);
    ck_assert_int_eq(int_field(m, "polygons"), 9);
    json_decref(m);
    th_response_free(&r);

    /* delete: 204 without a body, then 404 */
    th_json(srv.port, "DELETE", "/v1/navmeshes/sq", NULL, &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_int_eq(r.body_len, 0);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/sq", NULL, &r);
    assert_error(&r, 404, "not_found", "sq");
    th_response_free(&r);
    th_json(srv.port, "DELETE", "/v1/navmeshes/sq", NULL, &r);
    assert_error(&r, 404, "not_found", "sq");
    th_response_free(&r);
}
END_TEST

START_TEST(list_sorted) {
    const char *names[] = {"list-c", "list-A", "list-b", "list-a"};
    for (int i = 0; i < 4; i++) {
        th_response r = put_mesh(names[i], SQUARE);
        ck_assert_int_eq(r.status, 201);
        th_response_free(&r);
    }
    th_response r;
    th_json(srv.port, "GET", "/v1/navmeshes", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *j = parse(&r);
    json_t *list = json_object_get(j, "navmeshes");
    ck_assert(json_is_array(list));
    /* byte order: "list-A" < "list-a" < "list-b" < "list-c" ('A' = 65 < 'a' = 97) */
    const char *want[] = {"list-A", "list-a", "list-b", "list-c"};
    int k = 0;
    const char *prev = "";
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *n = json_string_value(json_object_get(json_array_get(list, i), "name"));
        ck_assert_msg(strcmp(prev, n) < 0, "not sorted: %s then %s", prev, n);
        prev = n;
        if (k < 4 && strcmp(n, want[k]) == 0)
            k++;
        ck_assert_int_eq(int_field(json_array_get(list, i), "polygons") > 0, 1);
    }
    ck_assert_int_eq(k, 4);
    json_decref(j);
    th_response_free(&r);
}
END_TEST

/* Fields that must survive an export / re-upload. */
static void assert_same_mesh(const json_t *a, const json_t *b) {
    const char *ints[] = {"vertices", "polygons", "links", "components"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(int_field(a, ints[i]), int_field(b, ints[i]));
    ck_assert_double_eq_tol(num_field(a, "area"), num_field(b, "area"), 1e-9);
    ck_assert(json_equal(json_object_get(a, "bounds"), json_object_get(b, "bounds")));
}

START_TEST(export_json_round_trip) {
    th_response r = put_mesh("isl", ISLANDS_LINK);
    ck_assert_int_eq(r.status, 201);
    json_t *meta = parse(&r);
    ck_assert_int_eq(int_field(meta, "vertices"), 8);
    ck_assert_int_eq(int_field(meta, "polygons"), 2);
    ck_assert_int_eq(int_field(meta, "links"), 1);
    ck_assert_int_eq(int_field(meta, "components"), 1);
    ck_assert_double_eq_tol(num_field(meta, "area"), 32.0, 1e-6);
    assert_bounds(meta, 0, 0, 0, 14, 0, 4);
    th_response_free(&r);

    th_json(srv.port, "GET", "/v1/navmeshes/isl?format=json", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *doc = parse(&r);
    ck_assert_int_eq(json_array_size(json_object_get(doc, "vertices")), 8);
    ck_assert_int_eq(json_array_size(json_object_get(doc, "polygons")), 2);
    json_t *link = json_array_get(json_object_get(doc, "links"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(link, "kind")), "jump");
    ck_assert(json_is_true(json_object_get(link, "bidirectional")));
    ck_assert_int_eq(int_field(link, "area"), 2);
    ck_assert_double_eq_tol(num_field(link, "radius"), 0.5, 1e-9);

    th_response r2 = put_mesh("isl-copy", r.body);
    ck_assert_msg(r2.status == 201, "%s", r2.body);
    json_t *meta2 = parse(&r2);
    assert_same_mesh(meta, meta2);
    th_response_free(&r2);

    /* exporting the copy yields the same document */
    th_json(srv.port, "GET", "/v1/navmeshes/isl-copy?format=json", NULL, &r2);
    json_t *doc2 = parse(&r2);
    ck_assert(json_equal(doc, doc2));
    json_decref(doc2);
    th_response_free(&r2);
    json_decref(meta2);
    json_decref(doc);
    json_decref(meta);
    th_response_free(&r);
}
END_TEST

START_TEST(export_obj_round_trip) {
    th_response r = put_mesh("sq-obj", SQUARE);
    ck_assert_int_eq(r.status, 201);
    json_t *meta = parse(&r);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/sq-obj?format=obj", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char ct[64];
    ck_assert_str_eq(th_header(&r, "Content-Type", ct, sizeof ct), "model/obj");
    /* 16 "v" lines and 8 "f" lines */
    int nv = 0, nf = 0;
    for (const char *l = r.body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        nv += strncmp(l, "v ", 2) == 0;
        nf += strncmp(l, "f ", 2) == 0;
    }
    ck_assert_int_eq(nv, 16);
    ck_assert_int_eq(nf, 8);
    th_response r2;
    th_request(srv.port, "PUT", "/v1/navmeshes/sq-obj2", "model/obj", r.body, r.body_len, NULL,
               &r2);
    ck_assert_msg(r2.status == 201, "%s", r2.body);
    json_t *meta2 = parse(&r2);
    assert_same_mesh(meta, meta2);
    json_decref(meta2);
    th_response_free(&r2);
    /* text/plain is accepted as OBJ too */
    th_request(srv.port, "PUT", "/v1/navmeshes/sq-obj3", "text/plain; charset=utf-8", r.body,
               r.body_len, NULL, &r2);
    ck_assert_int_eq(r2.status, 201);
    th_response_free(&r2);
    json_decref(meta);
    th_response_free(&r);
}
END_TEST

/* ---- errors ---- */

START_TEST(error_codes) {
    th_response r;
    /* invalid JSON names the line and column */
    r = put_mesh("e1", "{\"vertices\": [[0,0,0],\n  [1,0");
    assert_error(&r, 400, "invalid_json", "line 2");
    th_response_free(&r);
    /* duplicate keys are invalid JSON */
    r = put_mesh("e1", "{\"vertices\":[],\"vertices\":[]}");
    assert_error(&r, 400, "invalid_json", "duplicate");
    th_response_free(&r);
    /* an empty body */
    th_request(srv.port, "PUT", "/v1/navmeshes/e1", "application/json", "", 0, NULL, &r);
    assert_error(&r, 400, "invalid_json", NULL);
    th_response_free(&r);
    /* type errors name the field */
    r = put_mesh("e1", "{\"vertices\":[[0,0,0],[1,0,0],[1,0,1]],\"polygons\":[[0,1,-2]]}");
    assert_error(&r, 422, "invalid_navmesh", "polygons[0][2] must be a non-negative integer");
    th_response_free(&r);
    r = put_mesh("e1", "{\"vertices\":[[0,0,0],[1,0],[1,0,1]],\"polygons\":[[0,1,2]]}");
    assert_error(&r, 422, "invalid_navmesh", "vertices[1] must be an array of 3 finite numbers");
    th_response_free(&r);
    r = put_mesh("e1", "{\"vertices\":[[0,0,0],[1,0,0],[1,0,1]],\"polygons\":[[0,1,2]],"
                       "\"links\":[{\"start\":[0,0,0],\"end\":[1,0,1],\"kind\":7}]}");
    assert_error(&r, 422, "invalid_navmesh", "links[0].kind must be a string");
    th_response_free(&r);
    /* geometry errors name the polygon: polygon 1 has a reflex vertex at (1,0,1) */
    r = put_mesh("e1", "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4],[8,0,0],[8,0,4],"
                       "[6,0,1]],\"polygons\":[[0,1,2,3],[1,4,5,2,6]]}");
    assert_error(&r, 422, "invalid_navmesh", "polygons[1]");
    th_response_free(&r);
    /* bad names */
    th_json(srv.port, "GET", "/v1/navmeshes/a%20b", NULL, &r);
    assert_error(&r, 400, "bad_request", "name");
    th_response_free(&r);
    char longname[128] = "/v1/navmeshes/";
    memset(longname + strlen(longname), 'x', 65);
    th_json(srv.port, "GET", longname, NULL, &r);
    assert_error(&r, 400, "bad_request", "name");
    th_response_free(&r);
    /* a bad export format */
    r = put_mesh("e2", SQUARE);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/e2?format=xml", NULL, &r);
    assert_error(&r, 400, "bad_request", "format");
    th_response_free(&r);
    /* 415 */
    th_request(srv.port, "PUT", "/v1/navmeshes/e1", "text/html", "<p>", 3, NULL, &r);
    assert_error(&r, 415, "unsupported_media_type", NULL);
    th_response_free(&r);
    th_request(srv.port, "PUT", "/v1/navmeshes/e1", NULL, SQUARE, strlen(SQUARE), NULL, &r);
    assert_error(&r, 415, "unsupported_media_type", NULL);
    th_response_free(&r);
    /* 405 with Allow */
    char allow[64];
    th_json(srv.port, "POST", "/v1/navmeshes", "{}", &r);
    assert_error(&r, 405, "method_not_allowed", NULL);
    ck_assert_str_eq(th_header(&r, "Allow", allow, sizeof allow), "GET");
    th_response_free(&r);
    th_json(srv.port, "PATCH", "/v1/navmeshes/e2", NULL, &r);
    assert_error(&r, 405, "method_not_allowed", NULL);
    ck_assert_str_eq(th_header(&r, "Allow", allow, sizeof allow), "GET, PUT, DELETE");
    th_response_free(&r);
    /* 404 unknown route, and the mesh is untouched by all of the above */
    th_json(srv.port, "GET", "/v2/nothing", NULL, &r);
    assert_error(&r, 404, "not_found", NULL);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/e1", NULL, &r);
    assert_error(&r, 404, "not_found", NULL);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/e2", NULL, &r);
    json_t *m = parse(&r);
    ck_assert_int_eq(int_field(m, "version"), 1);
    json_decref(m);
    th_response_free(&r);
}
END_TEST

/*
 * Numbers beyond any double (1e999) are valid JSON: the contract wants the
 * vertex named (422 invalid_navmesh, "a non-finite coordinate"), not the
 * whole body called invalid JSON. Strings holding such text are text: a link
 * kind `x"1e999\` round-trips unchanged while an unknown field holds
 * -1e999 (unknown fields are ignored), and the mesh is created.
 */
START_TEST(overflowing_numbers_name_the_vertex) {
    th_response r = put_mesh("ov", "{\"vertices\":[[0,0,0],[1,0,1e999],[1,0,1]],"
                                   "\"polygons\":[[0,1,2]]}");
    assert_error(&r, 422, "invalid_navmesh", "vertices[1][2] is not a finite number");
    th_response_free(&r);
    r = put_mesh("ov", "{\"vertices\":[[0,0,0],[1,0,0],[1,0,1]],"
                       "\"polygons\":[[0,1,123456789012345678901234567890]]}");
    assert_error(&r, 422, "invalid_navmesh", "polygons[0][2] must be a non-negative integer");
    th_response_free(&r);
    /* OBJ: strtof reads the coordinate as infinity; the builder names the
       second vertex, vertices[1] (0-based as in the JSON form) */
    const char obj[] = "v 0 0 0\nv -1e999 0 0\nv 1 0 1\nf 1 2 3\n";
    th_request(srv.port, "PUT", "/v1/navmeshes/ov", "model/obj", obj, strlen(obj), NULL, &r);
    assert_error(&r, 422, "invalid_navmesh", "vertices[1] has a non-finite coordinate");
    th_response_free(&r);

    r = put_mesh("ov", "{\"note\":-1e999,\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4]],"
                       "\"polygons\":[[0,1,2,3]],\"links\":[{\"start\":[1,0,1],\"end\":[3,0,3],"
                       "\"kind\":\"x\\\"1e999\\\\\"}]}");
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    th_response_free(&r);
    th_json(srv.port, "GET", "/v1/navmeshes/ov?format=json", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *j = parse(&r);
    const json_t *kind = json_object_get(json_array_get(json_object_get(j, "links"), 0), "kind");
    ck_assert_str_eq(json_string_value(kind), "x\"1e999\\");
    json_decref(j);
    th_response_free(&r);
}
END_TEST

START_TEST(keep_alive_survives_errors) {
    th_conn c;
    ck_assert_int_eq(th_connect(&c, srv.port), 0);
    th_response r;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(th_conn_request(&c, "GET", "/nope", NULL, NULL, 0, NULL, &r), 0);
        ck_assert_int_eq(r.status, 404);
        th_response_free(&r);
        ck_assert_int_eq(th_conn_request(&c, "GET", "/health", NULL, NULL, 0, NULL, &r), 0);
        ck_assert_int_eq(r.status, 200);
        th_response_free(&r);
    }
    th_close(&c);
}
END_TEST

/* ---- the shared Recast meshes, end to end over HTTP ----
 * Counts and areas are those of ../shared/meshes/README.md; the reference
 * answers are Detour's (not optimal), so our xz length may only be shorter. */
static double xz_length(const json_t *corners) {
    double len = 0;
    for (size_t i = 1; i < json_array_size(corners); i++) {
        const json_t *a = json_array_get(corners, i - 1), *b = json_array_get(corners, i);
        double dx =
            json_number_value(json_array_get(b, 0)) - json_number_value(json_array_get(a, 0));
        double dz =
            json_number_value(json_array_get(b, 2)) - json_number_value(json_array_get(a, 2));
        len += sqrt(dx * dx + dz * dz);
    }
    return len;
}

START_TEST(shared_meshes_over_http) {
    static const struct {
        const char *name;
        int verts, polys, regions;
        double area;
    } meshes[] = {{"dungeon", 223, 118, 4, 1585.3},
                  {"nav_test", 349, 155, 17, 4002.0},
                  {"undulating", 374, 216, 1, 8795.5}};
    if (!fx_shared_mesh_path("dungeon.navmesh.json")) {
        printf("api_http: ../shared/meshes absent: shared mesh checks skipped\n");
        return;
    }
    for (size_t m = 0; m < 3; m++) {
        char file[96], path[128];
        size_t len;
        /* JSON (with the detail mesh) and OBJ give the same counts */
        for (int obj = 0; obj < 2; obj++) {
            snprintf(file, sizeof file, "%s.navmesh.%s", meshes[m].name, obj ? "obj" : "json");
            char *body = fx_read_file(fx_shared_mesh_path(file), &len);
            ck_assert_ptr_nonnull(body);
            snprintf(path, sizeof path, "/v1/navmeshes/shared-%s%s", meshes[m].name,
                     obj ? "-obj" : "");
            th_response r;
            th_request(srv.port, "PUT", path, obj ? "model/obj" : "application/json", body, len,
                       NULL, &r);
            ck_assert_msg(r.status == 201, "%s: %d %s", file, r.status, r.body);
            json_t *meta = parse(&r);
            ck_assert_int_eq(int_field(meta, "vertices"), meshes[m].verts);
            ck_assert_int_eq(int_field(meta, "polygons"), meshes[m].polys);
            ck_assert_int_eq(int_field(meta, "components"), meshes[m].regions);
            ck_assert_double_eq_tol(num_field(meta, "area"), meshes[m].area, 0.05);
            json_decref(meta);
            th_response_free(&r);
            free(body);
        }
        /* the first 200 reference queries as one batch */
        snprintf(file, sizeof file, "%s.queries.json", meshes[m].name);
        char *text = fx_read_file(fx_shared_mesh_path(file), &len);
        json_t *ref = json_loadb(text, len, 0, NULL);
        free(text);
        ck_assert_ptr_nonnull(ref);
        size_t n = json_array_size(ref) < 200 ? json_array_size(ref) : 200;
        json_t *qs = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *q = json_array_get(ref, i);
            json_array_append_new(qs, json_pack("{s:O,s:O}", "start", json_object_get(q, "start"),
                                                "end", json_object_get(q, "end")));
        }
        json_t *req = json_pack("{s:o,s:b}", "queries", qs, "cache", 0);
        char *body = json_dumps(req, JSON_COMPACT | JSON_REAL_PRECISION(9));
        json_decref(req);
        snprintf(path, sizeof path, "/v1/navmeshes/shared-%s/paths", meshes[m].name);
        th_response r;
        th_json(srv.port, "POST", path, body, &r);
        free(body);
        ck_assert_msg(r.status == 200, "%s", r.body);
        json_t *res = parse(&r);
        th_response_free(&r);
        json_t *results = json_object_get(res, "results");
        ck_assert_int_eq(json_array_size(results), n);
        double ours = 0, theirs = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *q = json_array_get(ref, i), *a = json_array_get(results, i);
            ck_assert_msg(
                json_object_get(a, "error") == NULL, "%s query %zu: %s", meshes[m].name, i,
                json_string_value(json_object_get(json_object_get(a, "error"), "message")));
            const char *want = json_string_value(json_object_get(q, "status"));
            const char *got = json_string_value(json_object_get(a, "status"));
            ck_assert_msg(strcmp(want, got) == 0, "%s query %zu: %s, reference %s", meshes[m].name,
                          i, got, want);
            if (strcmp(want, "complete") == 0) {
                double mine = xz_length(json_object_get(a, "corners"));
                double refl = json_number_value(json_object_get(q, "length2d"));
                ck_assert_msg(mine <= refl + 1e-3, "%s query %zu: %.6f m, reference %.6f m",
                              meshes[m].name, i, mine, refl);
                ours += mine;
                theirs += refl;
            }
        }
        printf("api_http: %s over HTTP: %zu queries agree; complete paths %.1f m vs reference "
               "%.1f m (xz)\n",
               meshes[m].name, n, ours, theirs);
        json_decref(res);
        json_decref(ref);
    }
}
END_TEST

/* ---- body limit (server with --max-body 2K) ---- */

static th_server small;

static void start_small(void) {
    const char *args[] = {"--max-body", "2K", NULL};
    ck_assert(th_start(&small, NULL, args) == 0);
}

static void stop_small(void) {
    stop_clean(&small);
}

START_TEST(payload_too_large) {
    size_t n = 3000;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    th_response r;
    /* announced by Content-Length: refused before the body is read */
    th_request(small.port, "PUT", "/v1/navmeshes/big", "application/json", big, n, NULL, &r);
    assert_error(&r, 413, "payload_too_large", "2048");
    th_response_free(&r);
    /* chunked, no length announced: refused once the limit is passed */
    char *chunked = malloc(n + 64);
    int len = snprintf(chunked, n + 64, "%zx\r\n", n);
    memcpy(chunked + len, big, n);
    len += (int)n;
    len += snprintf(chunked + len, 16, "\r\n0\r\n\r\n");
    const char *hdrs[] = {"Transfer-Encoding: chunked", NULL};
    th_conn c;
    ck_assert_int_eq(th_connect(&c, small.port), 0);
    /* body passed raw (already chunk-encoded), so no Content-Length is sent */
    char head[256];
    snprintf(head, sizeof head,
             "PUT /v1/navmeshes/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "%s\r\n\r\n",
             hdrs[0]);
    ck_assert(write(c.fd, head, strlen(head)) > 0);
    ck_assert(write(c.fd, chunked, (size_t)len) > 0);
    th_response r2;
    ck_assert_int_eq(th_conn_read(&c, "PUT", &r2), 0);
    assert_error(&r2, 413, "payload_too_large", NULL);
    th_response_free(&r2);
    th_close(&c);
    free(chunked);
    /* a body under the limit still works */
    th_request(small.port, "PUT", "/v1/navmeshes/small", "application/json", SQUARE, strlen(SQUARE),
               NULL, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(big);
}
END_TEST

/* ---- auth (server with --api-key) ---- */

static th_server authsrv;

static void start_auth(void) {
    const char *args[] = {"--api-key", "s3cret-key", NULL};
    ck_assert(th_start(&authsrv, NULL, args) == 0);
}

static void stop_auth(void) {
    stop_clean(&authsrv);
}

START_TEST(auth_required_for_writes) {
    th_response r;
    int port = authsrv.port;
    th_request(port, "PUT", "/v1/navmeshes/a", "application/json", SQUARE, strlen(SQUARE), NULL,
               &r);
    assert_error(&r, 401, "unauthorized", NULL);
    th_response_free(&r);
    const char *wrong[] = {"Authorization: Bearer s3cret-kez", NULL};
    th_request(port, "PUT", "/v1/navmeshes/a", "application/json", SQUARE, strlen(SQUARE), wrong,
               &r);
    assert_error(&r, 401, "unauthorized", NULL);
    th_response_free(&r);
    const char *prefix[] = {"Authorization: Bearer s3cret", NULL};
    th_request(port, "PUT", "/v1/navmeshes/a", "application/json", SQUARE, strlen(SQUARE), prefix,
               &r);
    assert_error(&r, 401, "unauthorized", NULL);
    th_response_free(&r);
    const char *good[] = {"Authorization: Bearer s3cret-key", NULL};
    th_request(port, "PUT", "/v1/navmeshes/a", "application/json", SQUARE, strlen(SQUARE), good,
               &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    /* reads need no key */
    th_request(port, "GET", "/v1/navmeshes/a", NULL, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    th_request(port, "GET", "/v1/navmeshes", NULL, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    /* delete needs the key */
    th_request(port, "DELETE", "/v1/navmeshes/a", NULL, NULL, 0, NULL, &r);
    assert_error(&r, 401, "unauthorized", NULL);
    th_response_free(&r);
    th_request(port, "DELETE", "/v1/navmeshes/a", NULL, NULL, 0, good, &r);
    ck_assert_int_eq(r.status, 204);
    th_response_free(&r);
}
END_TEST

/* ---- persistence ---- */

START_TEST(restart_keeps_meshes_and_versions) {
    th_server s;
    ck_assert(th_start(&s, NULL, NULL) == 0);
    th_response r;
    th_json(s.port, "PUT", "/v1/navmeshes/p1", SQUARE, &r);
    th_response_free(&r);
    th_json(s.port, "PUT", "/v1/navmeshes/p2", L_CORRIDOR, &r);
    th_response_free(&r);
    th_json(s.port, "PUT", "/v1/navmeshes/p2", SQUARE, &r);
    th_response_free(&r);
    th_json(s.port, "PUT", "/v1/navmeshes/p2", L_CORRIDOR, &r); /* version 3 */
    th_response_free(&r);
    th_json(s.port, "GET", "/v1/navmeshes", NULL, &r);
    json_t *before = parse(&r);
    th_response_free(&r);
    ck_assert_int_eq(th_stop(&s), 0);

    ck_assert(th_restart(&s, NULL) == 0);
    th_json(s.port, "GET", "/v1/navmeshes", NULL, &r);
    json_t *after = parse(&r);
    th_response_free(&r);
    ck_assert_msg(json_equal(before, after), "metadata changed across a restart");
    json_t *p2 = json_array_get(json_object_get(after, "navmeshes"), 1);
    ck_assert_int_eq(int_field(p2, "version"), 3);
    ck_assert_int_eq(int_field(p2, "polygons"), 9);
    json_decref(before);
    json_decref(after);
    /* and the log says how many were loaded */
    char *log = th_log(&s);
    ck_assert_ptr_nonnull(strstr(log, "loaded 2 navmeshes"));
    free(log);
    stop_clean(&s);
}
END_TEST

START_TEST(kill9_after_201_keeps_mesh) {
    th_server s;
    ck_assert(th_start(&s, NULL, NULL) == 0);
    th_response r;
    th_json(s.port, "PUT", "/v1/navmeshes/durable", SQUARE, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    th_kill(&s); /* no graceful shutdown: the 201 must already be durable */
    ck_assert(th_restart(&s, NULL) == 0);
    th_json(s.port, "GET", "/v1/navmeshes/durable", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *m = parse(&r);
    ck_assert_int_eq(int_field(m, "version"), 1);
    ck_assert_int_eq(int_field(m, "polygons"), 8);
    json_decref(m);
    th_response_free(&r);
    th_kill(&s);
    th_cleanup(&s);
}
END_TEST

/* A stored blob that no longer loads (damaged on disk) is logged by name and
   skipped at start-up; the other meshes still load and the service runs.
   The damage is written with SQL against storage/store.c's schema (table
   navmeshes, column blob): the test knows it, navd does not rely on it. */
START_TEST(damaged_blob_is_skipped) {
    th_server s;
    ck_assert(th_start(&s, NULL, NULL) == 0);
    th_response r;
    th_json(s.port, "PUT", "/v1/navmeshes/good", SQUARE, &r);
    th_response_free(&r);
    th_json(s.port, "PUT", "/v1/navmeshes/bad", SQUARE, &r);
    th_response_free(&r);
    ck_assert_int_eq(th_stop(&s), 0);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(s.db, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE navmeshes SET blob = x'deadbeef' WHERE name = 'bad'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    ck_assert(th_restart(&s, NULL) == 0);
    th_json(s.port, "GET", "/v1/navmeshes/good", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    th_json(s.port, "GET", "/v1/navmeshes/bad", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    char *log = th_log(&s);
    ck_assert_msg(strstr(log, "skipping stored navmesh 'bad'"), "%s", log);
    ck_assert_ptr_nonnull(strstr(log, "loaded 1 navmesh from"));
    free(log);
    stop_clean(&s);
}
END_TEST

START_TEST(demo_only_when_empty) {
    th_server s;
    const char *demo[] = {"--demo", NULL};
    ck_assert(th_start(&s, NULL, demo) == 0);
    th_response r;
    th_json(s.port, "GET", "/v1/navmeshes/demo", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *m = parse(&r);
    /* api_demo.c's layout: 14 hall + 1 corridor + 9 SW room + 3 floor corridor
       + 3 SE room + ramp + deck = 32 polygons; one component through the
       jump link and the rooms; area 1184 + 80 + 400 + 64 + 480 + 56 + 96 */
    ck_assert_int_eq(int_field(m, "polygons"), 32);
    ck_assert_int_eq(int_field(m, "links"), 1);
    ck_assert_int_eq(int_field(m, "components"), 1);
    ck_assert_double_eq_tol(num_field(m, "area"), 2360.0, 1e-6);
    assert_bounds(m, 0, 0, 0, 60, 4, 60);
    json_decref(m);
    th_response_free(&r);
    /* deleted, then restarted with --demo on a non-empty store: not re-added */
    th_json(s.port, "PUT", "/v1/navmeshes/other", SQUARE, &r);
    th_response_free(&r);
    th_json(s.port, "DELETE", "/v1/navmeshes/demo", NULL, &r);
    th_response_free(&r);
    ck_assert_int_eq(th_stop(&s), 0);
    ck_assert(th_restart(&s, demo) == 0);
    th_json(s.port, "GET", "/v1/navmeshes/demo", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    stop_clean(&s);
}
END_TEST

/* ---- concurrency ---- */

typedef struct worker {
    int port, id, failures;
    char why[160];
} worker;

#define PER_WORKER 8

static void *worker_main(void *arg) {
    worker *w = arg;
    th_conn c;
    if (th_connect(&c, w->port) != 0) {
        w->failures++;
        return NULL;
    }
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < PER_WORKER; i++) {
            char path[64];
            snprintf(path, sizeof path, "/v1/navmeshes/w%d-%d", w->id, i);
            const char *body = round == 0 ? SQUARE : L_CORRIDOR;
            th_response r;
            if (th_conn_request(&c, "PUT", path, "application/json", body, strlen(body), NULL,
                                &r) != 0 ||
                r.status != (round == 0 ? 201 : 200)) {
                snprintf(w->why, sizeof w->why, "PUT %s -> %d", path, r.status);
                w->failures++;
            }
            th_response_free(&r);
            if (th_conn_request(&c, "GET", path, NULL, NULL, 0, NULL, &r) != 0 || r.status != 200) {
                snprintf(w->why, sizeof w->why, "GET %s -> %d", path, r.status);
                w->failures++;
            }
            th_response_free(&r);
            if (th_conn_request(&c, "GET", "/v1/navmeshes", NULL, NULL, 0, NULL, &r) != 0 ||
                r.status != 200) {
                snprintf(w->why, sizeof w->why, "GET list -> %d", r.status);
                w->failures++;
            }
            th_response_free(&r);
        }
    th_close(&c);
    return NULL;
}

START_TEST(concurrent_clients_lose_nothing) {
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.port = srv.port, .id = i};
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(w[i].failures == 0, "worker %d: %d failures (%s)", i, w[i].failures,
                      w[i].why);
    }
    /* every mesh is there, replaced exactly once: version 2 with the L corridor */
    th_response r;
    th_json(srv.port, "GET", "/v1/navmeshes", NULL, &r);
    json_t *j = parse(&r);
    json_t *list = json_object_get(j, "navmeshes");
    int found = 0;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *m = json_array_get(list, i);
        const char *n = json_string_value(json_object_get(m, "name"));
        if (n[0] == 'w' && strchr(n, '-')) {
            found++;
            ck_assert_int_eq(int_field(m, "version"), 2);
            ck_assert_int_eq(int_field(m, "polygons"), 9);
        }
    }
    ck_assert_int_eq(found, 4 * PER_WORKER);
    json_decref(j);
    th_response_free(&r);
}
END_TEST

/* ---- service endpoints and process ---- */

/* The value of the sample `series` (name and labels) in a /metrics body, or -1. */
static long long metric_sample(const char *text, const char *series) {
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtoll(p + n + 1, NULL, 10);
    return -1;
}

START_TEST(health_and_metrics) {
    th_response r;
    th_json(srv.port, "GET", "/health", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *j = parse(&r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
    ck_assert(json_is_integer(json_object_get(j, "navmeshes")));
    ck_assert_str_eq(json_string_value(json_object_get(j, "version")), "0.1.0");
    /* the default store: SQLite, always able to take writes */
    json_t *store = json_object_get(j, "store");
    ck_assert_str_eq(json_string_value(json_object_get(store, "kind")), "sqlite");
    ck_assert(json_is_true(json_object_get(store, "connected")));
    json_decref(j);
    th_response_free(&r);
    th_json(srv.port, "GET", "/no-such-route", NULL, &r);
    th_response_free(&r);
    /* one route, two error statuses: 400 (not JSON) and 422 (an index out of range) */
    r = put_mesh("mx", "{");
    ck_assert_int_eq(r.status, 400);
    th_response_free(&r);
    r = put_mesh("mx", "{\"vertices\":[[0,0,0],[1,0,0],[1,0,1]],\"polygons\":[[0,1,3]]}");
    ck_assert_int_eq(r.status, 422);
    th_response_free(&r);
    /* HEAD answers like GET, without a body */
    th_request(srv.port, "HEAD", "/health", NULL, NULL, 0, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(r.body_len, 0);
    th_response_free(&r);

    th_json(srv.port, "GET", "/metrics", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char ct[80];
    ck_assert_ptr_nonnull(th_header(&r, "Content-Type", ct, sizeof ct));
    ck_assert_ptr_nonnull(strstr(ct, "text/plain"));
    const char *want[] = {
        "# TYPE navd_requests_total counter",
        "navd_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} ",
        "navd_requests_total{route=\"none\",method=\"other\",status=\"404\"} ",
        "# TYPE navd_request_duration_seconds histogram",
        ("navd_request_duration_seconds_bucket{route=\"/health\",method=\"GET\",status=\"200\","
         "le=\"+Inf\"} "), /* one line of the exposition, split for width */
        "navd_request_duration_seconds_count{route=\"/health\",method=\"GET\",status=\"200\"} ",
        "navd_navmeshes_loaded ",
        "navd_path_cache_hits ",
        "navd_path_cache_misses ",
        "navd_path_cache_evictions ",
        "navd_path_cache_entries ",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.body, want[i]), "metrics lack '%s'", want[i]);
    /* the scrape itself is in flight while the text is rendered */
    const char *g = strstr(r.body, IN_FLIGHT);
    ck_assert_msg(g && strtoul(g + strlen(IN_FLIGHT), NULL, 10) >= 1, "no in-flight gauge >= 1");
    /* Each status is a series of its own, per route and method, and its
       histogram counts the same requests (other tests may add to them). */
    const char *put_series[] = {"route=\"/v1/navmeshes/{name}\",method=\"PUT\",status=\"400\"",
                                "route=\"/v1/navmeshes/{name}\",method=\"PUT\",status=\"422\""};
    for (size_t i = 0; i < 2; i++) {
        char name[160];
        snprintf(name, sizeof name, "navd_requests_total{%s}", put_series[i]);
        long long total = metric_sample(r.body, name);
        snprintf(name, sizeof name, "navd_request_duration_seconds_count{%s}", put_series[i]);
        long long count = metric_sample(r.body, name);
        snprintf(name, sizeof name, "navd_request_duration_seconds_bucket{%s,le=\"+Inf\"}",
                 put_series[i]);
        long long inf = metric_sample(r.body, name);
        ck_assert_msg(total >= 1 && count == total && inf == total,
                      "%s: total %lld, histogram count %lld, +Inf %lld", put_series[i], total,
                      count, inf);
    }
    ck_assert_msg(!strstr(r.body, "xx\""), "a status class label is left");
    /* a raw mesh name never becomes a label: routes are patterns */
    ck_assert_ptr_null(strstr(r.body, "route=\"/v1/navmeshes/w"));
    th_response_free(&r);
}
END_TEST

START_TEST(request_log_lines) {
    th_response r;
    th_json(srv.port, "GET", "/v1/navmeshes/log-probe", NULL, &r);
    th_response_free(&r);
    th_json(srv.port, "GET", "/health", NULL, &r);
    th_response_free(&r);
    r = put_mesh("log-put", SQUARE);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    char *log = th_log(&srv);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "navd: listening on 127.0.0.1:"), "%s", log);
    /* method, path, status, latency ms, response bytes */
    ck_assert_msg(strstr(log, "navd: GET /v1/navmeshes/log-probe 404 "), "%s", log);
    const char *line = strstr(log, "navd: GET /v1/navmeshes/log-probe 404 ");
    double ms;
    unsigned bytes;
    ck_assert_int_eq(sscanf(line, "navd: GET /v1/navmeshes/log-probe 404 %lfms %uB", &ms, &bytes),
                     2);
    ck_assert(ms >= 0);
    ck_assert(bytes > 0);
    /* a write also says how long it waited for the writer thread: part of its latency.
       The line is written once the response is sent, so the client may read the
       answer first: wait for it (up to 5 s). */
    for (int i = 0; i < 500 && !strstr(log, "navd: PUT /v1/navmeshes/log-put 201 "); i++) {
        free(log);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        log = th_log(&srv);
        ck_assert_ptr_nonnull(log);
    }
    line = strstr(log, "navd: PUT /v1/navmeshes/log-put 201 ");
    ck_assert_msg(line, "no access log line for the PUT");
    double waited;
    ck_assert_int_eq(sscanf(line, "navd: PUT /v1/navmeshes/log-put 201 %lfms %uB (%lfms waiting",
                            &ms, &bytes, &waited),
                     3);
    ck_assert(waited >= 0 && waited <= ms);
    free(log);
}
END_TEST

static int run_navd(const char *args, char *out, size_t outsz) {
    const char *bin = getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "bin/navd";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(config_errors_exit_2) {
    static char out[8192];
    ck_assert_int_eq(run_navd("--port abc", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--port"));
    ck_assert_int_eq(run_navd("--port 70000", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "65535"));
    ck_assert_int_eq(run_navd("--threads 0", out, sizeof out), 2);
    ck_assert_int_eq(run_navd("--max-body 12X", out, sizeof out), 2);
    ck_assert_int_eq(run_navd("--log-level loud", out, sizeof out), 2);
    ck_assert_int_eq(run_navd("--no-such-flag", out, sizeof out), 2);
    ck_assert_int_eq(run_navd("--port", out, sizeof out), 2);
    ck_assert_int_eq(
        run_navd("--bind not-an-address --port 0 --db /dev/null/x", out, sizeof out) != 0, 1);
    ck_assert_int_eq(run_navd("--help", out, sizeof out), 0);
    const char *flags[] = {"--port",
                           "--bind",
                           "--db",
                           "--threads",
                           "--api-key",
                           "--max-body",
                           "--demo",
                           "--max-batch",
                           "--max-agents",
                           "--max-nodes",
                           "--max-polys",
                           "--max-verts",
                           "--max-verts-per-poly",
                           "--cache-bytes",
                           "--request-timeout",
                           "--connection-timeout",
                           "--max-connections",
                           "--max-links",
                           "--max-pending-writes",
                           "--log-level",
                           "NAVD_API_KEY"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ck_assert_msg(strstr(out, flags[i]), "--help lacks %s", flags[i]);
    /* a file that is not a database: exit 1, and the log says why (not just "i/o error") */
    char dir[] = "/tmp/navd-baddb-XXXXXX", cmd[400];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char db[300];
    snprintf(db, sizeof db, "%s/bad.db", dir);
    FILE *f = fopen(db, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 64; i++)
        fputs("this is not an SQLite database, only text. ", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "--port 0 --db %s", db);
    ck_assert_int_eq(run_navd(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "not a usable SQLite database"), "%s", out);
    unlink(db);
    rmdir(dir);
}
END_TEST

/* --connection-timeout bounds how long a client that stops sending can hold a
   connection: half a request line, then silence, is closed after ~1 s. */
START_TEST(idle_connection_is_closed) {
    th_server s;
    const char *args[] = {"--connection-timeout", "1", NULL};
    ck_assert(th_start(&s, NULL, args) == 0);
    th_conn c;
    ck_assert_int_eq(th_connect(&c, s.port), 0);
    const char partial[] = "GET /health HT";
    ck_assert(write(c.fd, partial, sizeof partial - 1) > 0);
    /* the server must close it: readable (end of stream) well before the
       client's own 30 s receive timeout, which must not be what ends the wait */
    struct pollfd pf = {.fd = c.fd, .events = POLLIN};
    ck_assert_msg(poll(&pf, 1, 10000) == 1, "the idle connection was not closed within 10 s");
    char buf[64];
    ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    ck_assert_int_le(n, 0);
    th_close(&c);
    /* the server still answers others */
    th_response r;
    th_json(s.port, "GET", "/health", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    stop_clean(&s);
}
END_TEST

/* Reads one response on c, waiting at most ms for its first byte: 0 when
   nothing came in that time (the connection is still open), else its
   status (-1 on a closed or failed connection). */
static int answer_within(th_conn *c, int ms) {
    struct pollfd pf = {.fd = c->fd, .events = POLLIN};
    if (poll(&pf, 1, ms) != 1)
        return 0;
    th_response r;
    if (th_conn_read(c, "GET", &r) != 0)
        return -1;
    int st = r.status;
    th_response_free(&r);
    return st;
}

/* --max-connections 2: two keep-alive clients hold both slots; a third
   connection is not served (it waits in the listen backlog, it is not
   refused) until one of the two closes, then it is answered. */
START_TEST(connection_limit_holds_the_third) {
    th_server s;
    const char *args[] = {"--max-connections", "2", "--threads", "1", NULL};
    ck_assert(th_start(&s, NULL, args) == 0);
    th_conn c[3];
    for (int i = 0; i < 2; i++) {
        th_response r;
        ck_assert_int_eq(th_connect(&c[i], s.port), 0);
        ck_assert_int_eq(th_conn_request(&c[i], "GET", "/health", NULL, NULL, 0, NULL, &r), 0);
        ck_assert_int_eq(r.status, 200); /* and the connection is kept alive */
        th_response_free(&r);
    }
    ck_assert_int_eq(th_connect(&c[2], s.port), 0); /* the kernel completes the handshake */
    const char req[] = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert(write(c[2].fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1));
    ck_assert_int_eq(answer_within(&c[2], 700), 0);
    th_close(&c[0]);
    ck_assert_int_eq(answer_within(&c[2], 10000), 200);
    th_close(&c[1]);
    th_close(&c[2]);
    stop_clean(&s);
}
END_TEST

/* Obstacles per step are bounded like agents (--max-agents): 413, naming
   obstacles. The bound also sizes the server's per-thread obstacle buffer. */
START_TEST(step_obstacles_limit) {
    th_server s;
    const char *args[] = {"--max-agents", "2", "--demo", NULL};
    ck_assert(th_start(&s, NULL, args) == 0);
    const char *body = "{\"dt\":0.05,\"agents\":[{\"id\":\"a\",\"position\":[1,0,1]}],"
                       "\"obstacles\":[{\"position\":[2,0,2],\"radius\":0.5},"
                       "{\"position\":[3,0,2],\"radius\":0.5},"
                       "{\"position\":[4,0,2],\"radius\":0.5}]}";
    th_response r;
    ck_assert_int_eq(th_json(s.port, "POST", "/v1/navmeshes/demo/step", body, &r), 0);
    ck_assert_msg(r.status == 413 && strstr(r.body, "\"payload_too_large\"") &&
                      strstr(r.body, "obstacles"),
                  "%d %s", r.status, r.body);
    th_response_free(&r);
    stop_clean(&s);
}
END_TEST

/* Threads of a running navd (from /proc), or -1. */
static int navd_threads(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* --threads N runs N HTTP worker threads and N query-pool threads: navd
   with 5 has 8 threads more than navd with 1 (everything else alike). */
START_TEST(thread_pool_size) {
    int count[2];
    const char *n[2] = {"1", "5"};
    for (int k = 0; k < 2; k++) {
        th_server s;
        const char *args[] = {"--threads", n[k], NULL};
        ck_assert(th_start(&s, NULL, args) == 0);
        count[k] = navd_threads(s.pid);
        stop_clean(&s);
    }
    if (count[0] < 0) {
        printf("api_http: /proc unavailable, thread pool size not checked\n");
        return;
    }
    ck_assert_msg(count[1] - count[0] == 8, "threads: %d with --threads 1, %d with --threads 5",
                  count[0], count[1]);
}
END_TEST

/* --request-timeout also bounds a client that trickles header bytes (each
   byte resets libmicrohttpd's idle timer, so only the deadline cuts it). */
START_TEST(trickled_headers_are_cut) {
    th_server s;
    const char *args[] = {"--request-timeout", "1", "--connection-timeout", "30", NULL};
    ck_assert(th_start(&s, NULL, args) == 0);
    th_conn c;
    ck_assert_int_eq(th_connect(&c, s.port), 0);
    const char *trickle = "GET /health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    struct timespec gap = {0, 200 * 1000000L};
    int closed = 0;
    for (size_t i = 0; trickle[i] && !closed; i++) {
        if (send(c.fd, &trickle[i], 1, MSG_NOSIGNAL) < 0)
            closed = 1;
        nanosleep(&gap, NULL);
        char b;
        if (recv(c.fd, &b, 1, MSG_DONTWAIT) == 0)
            closed = 1;
    }
    /* 50 bytes at 5 bytes/s would take 10 s: the 1 s deadline (+ the reaper's
       quarter-second tick) must have closed it long before */
    ck_assert_msg(closed, "a client trickling headers was never cut");
    th_close(&c);
    th_response r;
    th_json(s.port, "GET", "/health", NULL, &r); /* a normal client still gets through */
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    stop_clean(&s);
}
END_TEST

/* Polls /metrics (for at most 30 s) until navd_requests_in_flight >= want
   or fd has an answer to read. Returns 1 then, 0 on time-out. */
static int wait_in_flight(int port, int fd, unsigned want) {
    for (int i = 0; i < 3000; i++) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 0) > 0)
            return 1;
        th_response m;
        if (th_request(port, "GET", "/metrics", NULL, NULL, 0, NULL, &m) == 0 && m.body) {
            const char *g = strstr(m.body, IN_FLIGHT);
            unsigned n = g ? (unsigned)strtoul(g + strlen(IN_FLIGHT), NULL, 10) : 0;
            th_response_free(&m);
            if (n >= want)
                return 1;
        }
        usleep(10 * 1000);
    }
    return 0;
}

/* SIGTERM while an upload is being processed: the request still gets its
   201, the process exits 0, and the mesh is there after a restart. The body
   (a 200 x 200 grid, about 2 MB) is fully sent before the signal, so its
   headers were read and the request is in flight when the signal lands. */
START_TEST(sigterm_finishes_in_flight) {
    enum { N = 200 };
    size_t cap = (size_t)(N + 1) * (N + 1) * 24 + (size_t)N * N * 40 + 64, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "{\"vertices\":[");
    for (int j = 0; j <= N; j++)
        for (int i = 0; i <= N; i++)
            len += (size_t)snprintf(body + len, cap - len, "%s[%d,0,%d]", i || j ? "," : "", i, j);
    len += (size_t)snprintf(body + len, cap - len, "],\"polygons\":[");
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            int v = j * (N + 1) + i;
            len += (size_t)snprintf(body + len, cap - len, "%s[%d,%d,%d,%d]", i || j ? "," : "", v,
                                    v + 1, v + N + 2, v + N + 1);
        }
    len += (size_t)snprintf(body + len, cap - len, "]}");
    th_server s;
    ck_assert(th_start(&s, NULL, NULL) == 0);
    th_conn c;
    ck_assert_int_eq(th_connect(&c, s.port), 0);
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "PUT /v1/navmeshes/big HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      "application/json\r\nContent-Length: %zu\r\n\r\n",
                      len);
    ck_assert(write(c.fd, head, (size_t)hl) == hl);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(c.fd, body + off, len - off);
        ck_assert(w > 0);
        off += (size_t)w;
    }
    /* The body being written only means it reached the socket buffer; the
       server may not even have read the headers yet (ASan, a loaded CI
       machine), and a request it never received is rightly not in flight.
       Wait until it is: the gauge counts the PUT plus this scrape (>= 2), or
       the PUT's answer is already readable (it finished first). */
    ck_assert_msg(wait_in_flight(s.port, c.fd, 2), "the PUT never reached the server");
    kill(s.pid, SIGTERM);
    th_response r;
    ck_assert_int_eq(th_conn_read(&c, "PUT", &r), 0);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    th_response_free(&r);
    th_close(&c);
    ck_assert_int_eq(th_stop(&s), 0); /* already exiting: reaps it and checks the status */
    ck_assert(th_restart(&s, NULL) == 0);
    th_json(s.port, "GET", "/v1/navmeshes/big", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *m = parse(&r);
    /* (N+1)^2 vertices, N^2 quads, one component, N^2 m^2 */
    ck_assert_int_eq(int_field(m, "vertices"), (N + 1) * (N + 1));
    ck_assert_int_eq(int_field(m, "polygons"), N * N);
    ck_assert_int_eq(int_field(m, "components"), 1);
    ck_assert_double_eq_tol(num_field(m, "area"), (double)N * N, 1e-3);
    json_decref(m);
    th_response_free(&r);
    stop_clean(&s);
    free(body);
}
END_TEST

/* The configuration table in-process: defaults, environment, flags (which
   win), byte suffixes, booleans. */
START_TEST(config_table_parses) {
    svc_config c;
    FILE *devnull = fopen("/dev/null", "w");
    char *argv0[] = {"navd", NULL};
    unsetenv("NAVD_PORT");
    unsetenv("NAVD_MAX_BODY");
    ck_assert_int_eq(svc_config_parse(&c, 1, argv0, devnull), SVC_CONFIG_OK);
    ck_assert_uint_eq(c.port, 8080);
    ck_assert_str_eq(c.bind, "127.0.0.1");
    ck_assert_str_eq(c.db, "data/navd.db");
    ck_assert_uint_eq(c.max_body, 64ull << 20);
    ck_assert_uint_eq(c.max_nodes, 65536);
    ck_assert_uint_eq(c.max_batch, 1000);
    ck_assert_uint_eq(c.connection_timeout, 30);
    ck_assert(c.threads >= 1);
    ck_assert(!c.demo);
    ck_assert_str_eq(c.api_key, "");

    setenv("NAVD_PORT", "9000", 1);
    setenv("NAVD_MAX_BODY", "2K", 1);
    ck_assert_int_eq(svc_config_parse(&c, 1, argv0, devnull), SVC_CONFIG_OK);
    ck_assert_uint_eq(c.port, 9000);
    ck_assert_uint_eq(c.max_body, 2048);
    char *argv1[] = {"navd",          "--port", "9001",        "--max-body=3MiB", "--demo",
                     "--cache-bytes", "0",      "--log-level", "debug",           NULL};
    ck_assert_int_eq(svc_config_parse(&c, 9, argv1, devnull), SVC_CONFIG_OK);
    ck_assert_uint_eq(c.port, 9001); /* the flag wins over NAVD_PORT */
    ck_assert_uint_eq(c.max_body, 3ull << 20);
    ck_assert(c.demo);
    ck_assert_uint_eq(c.cache_bytes, 0);
    ck_assert_str_eq(c.log_level, "debug");
    setenv("NAVD_PORT", "99999", 1); /* out of range in the environment: refused too */
    ck_assert_int_eq(svc_config_parse(&c, 1, argv0, devnull), SVC_CONFIG_BAD);
    unsetenv("NAVD_PORT");
    unsetenv("NAVD_MAX_BODY");
    char *argv2[] = {"navd", "--max-body", "512", NULL}; /* below the 1K minimum */
    ck_assert_int_eq(svc_config_parse(&c, 3, argv2, devnull), SVC_CONFIG_BAD);
    fclose(devnull);
}
END_TEST

START_TEST(env_config_applies) {
    th_server s;
    setenv("NAVD_API_KEY", "from-env", 1);
    int started = th_start(&s, NULL, NULL);
    unsetenv("NAVD_API_KEY");
    ck_assert(started == 0);
    th_response r;
    th_json(s.port, "PUT", "/v1/navmeshes/x", SQUARE, &r);
    ck_assert_int_eq(r.status, 401);
    th_response_free(&r);
    stop_clean(&s);
}
END_TEST

/* ---- queries ----
 * Server with --max-batch 3 and these meshes (see the top of this file):
 *   sq   SQUARE (hole [4,6]^2), polygon p = cell order: 0 [0,4]x[0,4],
 *        1 [4,6]x[0,4], 2 [6,10]x[0,4], 3 [0,4]x[4,6], 4 [6,10]x[4,6],
 *        5 [0,4]x[6,10], 6 [4,6]x[6,10], 7 [6,10]x[6,10]
 *   L    L_CORRIDOR, polygons 0..4 along z in [0,2] (x = 0,2,..,10), then
 *        5..8 up x in [8,10] (z = 2,4,..,10); polygons 5 and 6 have area 1
 *   isl  two islands, no link; isl2 with a two-way link; isl1 one-way A->B
 */
static th_server qsrv;

static const char ISLANDS[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4],[10,0,0],[14,0,0],[14,0,4],[10,0,4]],"
    "\"polygons\":[[0,1,2,3],[4,5,6,7]]}";
static const char ISLANDS_ONEWAY[] =
    "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4],[10,0,0],[14,0,0],[14,0,4],[10,0,4]],"
    "\"polygons\":[[0,1,2,3],[4,5,6,7]],"
    "\"links\":[{\"start\":[3,0,2],\"end\":[11,0,2],\"bidirectional\":false,\"kind\":\"drop\"}]}";

static void start_queries(void) {
    const char *args[] = {"--max-batch", "3", NULL};
    ck_assert(th_start(&qsrv, NULL, args) == 0);
    const char *names[] = {"sq", "L", "isl", "isl2", "isl1"};
    const char *bodies[] = {SQUARE, L_CORRIDOR, ISLANDS, ISLANDS_LINK, ISLANDS_ONEWAY};
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/navmeshes/%s", names[i]);
        th_response r;
        th_json(qsrv.port, "PUT", path, bodies[i], &r);
        ck_assert_msg(r.status == 201, "%s: %s", names[i], r.body);
        th_response_free(&r);
    }
}

static void stop_queries(void) {
    stop_clean(&qsrv);
}

static json_t *query(const char *mesh, const char *what, const char *body, int want_status) {
    char path[96];
    snprintf(path, sizeof path, "/v1/navmeshes/%s/%s", mesh, what);
    th_response r;
    th_json(qsrv.port, "POST", path, body, &r);
    ck_assert_msg(r.status == want_status, "%s %s -> %d %s", path, body, r.status, r.body);
    json_t *j = parse(&r);
    th_response_free(&r);
    return j;
}

static void assert_vec(const json_t *v, double x, double y, double z, double tol) {
    ck_assert_msg(json_is_array(v) && json_array_size(v) == 3, "not a point");
    double want[3] = {x, y, z};
    for (size_t k = 0; k < 3; k++)
        ck_assert_msg(fabs(json_number_value(json_array_get(v, k)) - want[k]) <= tol,
                      "component %zu is %.9g, expected %.9g", k,
                      json_number_value(json_array_get(v, k)), want[k]);
}

static void assert_ids(const json_t *arr, const uint32_t *ids, size_t n) {
    ck_assert_int_eq(json_array_size(arr), n);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(json_integer_value(json_array_get(arr, i)), ids[i]);
}

/* Square with a hole, start (3,0,4.5) west of the hole, end (5.5,0,7) north of it.
   The segment between them is z = x + 1.5, which enters the hole at x = 4
   (z = 5.5), so the shortest path bends at the one hole corner (4,0,6):
   length = |(1,1.5)| + |(1.5,1)| = 2 * sqrt(3.25) = 3.605551275. The corridor
   is polygon 3 ([0,4]x[4,6]) -> 5 ([0,4]x[6,10]) -> 6 ([4,6]x[6,10]); 3 and 6
   only share a vertex, so 5 is needed. */
START_TEST(path_bends_at_one_corner) {
    json_t *j = query("sq", "path", "{\"start\":[3,0,4.5],\"end\":[5.5,0,7]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    json_t *c = json_object_get(j, "corners");
    ck_assert_int_eq(json_array_size(c), 3);
    assert_vec(json_array_get(c, 0), 3, 0, 4.5, 1e-5);
    assert_vec(json_array_get(c, 1), 4, 0, 6, 1e-5);
    assert_vec(json_array_get(c, 2), 5.5, 0, 7, 1e-5);
    assert_vec(json_object_get(j, "start"), 3, 0, 4.5, 1e-5);
    assert_vec(json_object_get(j, "end"), 5.5, 0, 7, 1e-5);
    ck_assert_double_eq_tol(num_field(j, "length"), 2 * sqrt(3.25), 1e-5);
    const uint32_t corridor[] = {3, 5, 6};
    assert_ids(json_object_get(j, "polygons"), corridor, 3);
    ck_assert_int_eq(json_array_size(json_object_get(j, "links")), 0);
    /* uniform costs: the optimal search answers by default */
    ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "optimal");
    ck_assert(json_is_integer(json_object_get(j, "nodes_expanded")));
    ck_assert_ptr_null(json_object_get(j, "expanded")); /* only with debug */
    json_decref(j);
}
END_TEST

/* L corridor from (1,0,1) to (9,0,9): bends at the inner corner (8,0,2);
   length 2 * |(7,1)| = 2 * sqrt(50) = 14.142135624. Area 1 (polygons 5, 6)
   is the only way up, so a cost of 10 there changes the algorithm (costs are
   not uniform: corridor) but not the path; excluding area 1 makes the end
   unreachable: partial, ending at the reachable point closest to (9,0,9),
   which is (9,0,2) on the strip z in [0,2]. */
START_TEST(path_costs_exclusions_partial) {
    json_t *j = query("L", "path", "{\"start\":[1,0,1],\"end\":[9,0,9]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    json_t *c = json_object_get(j, "corners");
    ck_assert_int_eq(json_array_size(c), 3);
    assert_vec(json_array_get(c, 1), 8, 0, 2, 1e-5);
    ck_assert_double_eq_tol(num_field(j, "length"), 2 * sqrt(50.0), 1e-5);
    json_decref(j);

    j = query("L", "path", "{\"start\":[1,0,1],\"end\":[9,0,9],\"area_costs\":{\"1\":10}}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "corridor");
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    ck_assert_double_eq_tol(num_field(j, "length"), 2 * sqrt(50.0), 1e-5);
    json_decref(j);

    j = query("L", "path", "{\"start\":[1,0,1],\"end\":[9,0,9],\"exclude_areas\":[1]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "partial");
    /* cut off by the exclusion (the components still join them): the corridor
       search's partial answer, and the response says so */
    ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "corridor");
    assert_vec(json_object_get(j, "end"), 9, 0, 2, 1e-3);
    c = json_object_get(j, "corners");
    assert_vec(json_array_get(c, json_array_size(c) - 1), 9, 0, 2, 1e-3);
    json_decref(j);

    /* a budget of one node cannot reach polygon 8 from polygon 0: partial */
    j = query("L", "path", "{\"start\":[1,0,1],\"end\":[9,0,9],\"max_nodes\":1,\"cache\":false}",
              200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "partial");
    /* the optimal search ran out first; the corridor search's answer is given */
    ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "corridor");
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "max_nodes");
    json_decref(j);

    /* debug lists the expanded polygons; the start polygon is always expanded */
    j = query("L", "path", "{\"start\":[1,0,1],\"end\":[9,0,9],\"debug\":true}", 200);
    json_t *ex = json_object_get(j, "expanded");
    ck_assert(json_is_array(ex) && json_array_size(ex) > 0);
    int has_start = 0;
    for (size_t i = 0; i < json_array_size(ex); i++)
        has_start |= json_integer_value(json_array_get(ex, i)) == 0;
    ck_assert(has_start);
    json_decref(j);
}
END_TEST

/* Two islands: no path, "partial" to the closest reachable point of island A
   to (12,0,2), i.e. (4,0,2) on its east edge. With the two-way link the path
   takes it: corners pass the link's ends (3,0,2) and (11,0,2), and `links`
   names it. */
START_TEST(path_links_and_islands) {
    json_t *j = query("isl", "path", "{\"start\":[1,0,2],\"end\":[12,0,2]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "partial");
    assert_vec(json_object_get(j, "end"), 4, 0, 2, 1e-3);
    json_decref(j);

    j = query("isl2", "path", "{\"start\":[1,0,2],\"end\":[12,0,2]}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    json_t *links = json_object_get(j, "links");
    ck_assert_int_eq(json_array_size(links), 1);
    ck_assert_int_eq(int_field(json_array_get(links, 0), "index"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(links, 0), "kind")), "jump");
    json_t *c = json_object_get(j, "corners");
    int saw_start = 0, saw_end = 0;
    for (size_t i = 0; i < json_array_size(c); i++) {
        const json_t *p = json_array_get(c, i);
        double x = json_number_value(json_array_get(p, 0)),
               z = json_number_value(json_array_get(p, 2));
        saw_start |= fabs(x - 3) < 1e-4 && fabs(z - 2) < 1e-4;
        saw_end |= fabs(x - 11) < 1e-4 && fabs(z - 2) < 1e-4;
    }
    ck_assert_msg(saw_start && saw_end, "corners do not pass the link's ends");
    json_decref(j);
}
END_TEST

/* The GET form answers exactly what POST answers; a second identical POST is
   a cache hit with an identical body otherwise; "cache": false bypasses. */
START_TEST(path_get_form_and_cache) {
    const char *body = "{\"start\":[1,0,1],\"end\":[9,0,9],\"extents\":[1,1,1]}";
    json_t *a = query("sq", "path", body, 200);
    json_t *b = query("sq", "path", body, 200);
    const char *ca = json_string_value(json_object_get(a, "cache"));
    ck_assert_msg(!strcmp(ca, "miss") || !strcmp(ca, "hit"), "cache=%s", ca);
    ck_assert_str_eq(json_string_value(json_object_get(b, "cache")), "hit");
    json_object_del(a, "cache");
    json_object_del(b, "cache");
    ck_assert(json_equal(a, b));
    /* hand check: (1,1) -> (9,9) crosses the hole; around (6,0,4) (or by symmetry
       (4,0,6)): 2 * |(5,3)| = 2 * sqrt(34) = 11.661903790 */
    ck_assert_double_eq_tol(num_field(a, "length"), 2 * sqrt(34.0), 1e-5);

    th_response r;
    th_json(qsrv.port, "GET", "/v1/navmeshes/sq/path?start=1,0,1&end=9,0,9&extents=1,1,1", NULL,
            &r);
    ck_assert_int_eq(r.status, 200);
    json_t *g = parse(&r);
    th_response_free(&r);
    json_object_del(g, "cache");
    ck_assert(json_equal(a, g));
    json_decref(g);

    json_t *c =
        query("sq", "path",
              "{\"start\":[1,0,1],\"end\":[9,0,9],\"extents\":[1,1,1],\"cache\":false}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(c, "cache")), "bypass");
    json_decref(c);
    json_decref(a);
    json_decref(b);

    th_json(qsrv.port, "GET", "/v1/navmeshes/sq/path?start=1,0&end=9,0,9", NULL, &r);
    assert_error(&r, 400, "bad_request", "start must be x,y,z");
    th_response_free(&r);
    th_json(qsrv.port, "GET", "/v1/navmeshes/sq/path?start=1,0,1", NULL, &r);
    assert_error(&r, 400, "bad_request", "end is required");
    th_response_free(&r);
}
END_TEST

START_TEST(query_errors) {
    th_response r;
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path", "{\"start\":[1,0,1],\"end\":[50,0,50]}",
            &r);
    assert_error(&r, 422, "point_off_mesh", "end is not within extents");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path",
            "{\"start\":[5,0,5],\"end\":[1,0,1],"
            "\"extents\":[0.5,1,0.5]}",
            &r);
    /* (5,0,5) is the hole's centre, 1 m from every edge: off mesh with 0.5 m extents */
    assert_error(&r, 422, "point_off_mesh", "start is not within extents");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path", "{\"start\":[1,0,1],\"end\":[1,0]}", &r);
    assert_error(&r, 400, "bad_request", "end must be an array of 3 finite numbers");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path", "{\"start\":[1,0,1],", &r);
    assert_error(&r, 400, "invalid_json", "line 1");
    th_response_free(&r);
    /* numbers beyond any double are valid JSON: the field is named, as for
       any other non-finite coordinate (api.md: "three finite numbers") */
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path", "{\"start\":[0,0,1e999],\"end\":[1,0,1]}",
            &r);
    assert_error(&r, 400, "bad_request", "start[2] is not a finite number");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path", "{\"start\":[1,0,1],\"end\":[0,0,-1e999]}",
            &r);
    assert_error(&r, 400, "bad_request", "end[2] is not a finite number");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/nearest", "{\"point\":[1,1E+999,1]}", &r);
    assert_error(&r, 400, "bad_request", "point[1] is not a finite number");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/raycast",
            "{\"start\":[1,0,1],\"end\":[9,0,9],\"extents\":[1e999,1,1]}", &r);
    assert_error(&r, 400, "bad_request", "extents[0] is not a finite number");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/L/reachable",
            "{\"start\":[1,0,1],\"max_cost\":1e999}", &r);
    assert_error(&r, 400, "bad_request", "max_cost is not a finite number");
    th_response_free(&r);
    /* 10^20 written as an integer (beyond 64 bits) is a finite point, off this mesh */
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/nearest",
            "{\"point\":[100000000000000000000,0,1]}", &r);
    assert_error(&r, 422, "point_off_mesh", "point is not within extents");
    th_response_free(&r);
    /* in a batch, the slot of the query names it; the others are answered */
    json_t *b = query("sq", "paths",
                      "{\"queries\":[{\"start\":[1,0,1],\"end\":[2,0,1]},"
                      "{\"start\":[1e999,0,1],\"end\":[2,0,1]}],\"cache\":false}",
                      200);
    const json_t *res = json_object_get(b, "results");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "status")),
                     "complete");
    const json_t *e1 = json_object_get(json_array_get(res, 1), "error");
    ck_assert_str_eq(json_string_value(json_object_get(e1, "code")), "bad_request");
    ck_assert_str_eq(json_string_value(json_object_get(e1, "message")),
                     "queries[1].start[0] is not a finite number");
    json_decref(b);
    th_json(qsrv.port, "POST", "/v1/navmeshes/nope/path", "{\"start\":[1,0,1],\"end\":[2,0,2]}",
            &r);
    assert_error(&r, 404, "not_found", "nope");
    th_response_free(&r);
    th_request(qsrv.port, "POST", "/v1/navmeshes/sq/nearest", "text/plain", "{}", 2, NULL, &r);
    assert_error(&r, 415, "unsupported_media_type", NULL);
    th_response_free(&r);
    char allow[64];
    th_json(qsrv.port, "PUT", "/v1/navmeshes/sq/path", "{}", &r);
    assert_error(&r, 405, "method_not_allowed", NULL);
    ck_assert_str_eq(th_header(&r, "Allow", allow, sizeof allow), "POST, GET");
    th_response_free(&r);
}
END_TEST

/* Batch: results in order, each error in its own slot; over --max-batch is 413. */
START_TEST(paths_batch) {
    json_t *j = query("sq", "paths",
                      "{\"queries\":[{\"start\":[3,0,4.5],\"end\":[5.5,0,7]},"
                      "{\"start\":[1,0,1],\"end\":[40,0,1]},"
                      "{\"start\":[1,\"x\",1],\"end\":[2,0,2]}],\"cache\":false}",
                      200);
    json_t *res = json_object_get(j, "results");
    ck_assert_int_eq(json_array_size(res), 3);
    json_t *r0 = json_array_get(res, 0);
    ck_assert_str_eq(json_string_value(json_object_get(r0, "status")), "complete");
    ck_assert_double_eq_tol(num_field(r0, "length"), 2 * sqrt(3.25), 1e-5);
    ck_assert_str_eq(json_string_value(json_object_get(r0, "cache")), "bypass");
    json_t *e1 = json_object_get(json_array_get(res, 1), "error");
    ck_assert_str_eq(json_string_value(json_object_get(e1, "code")), "point_off_mesh");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(e1, "message")), "queries[1].end"));
    json_t *e2 = json_object_get(json_array_get(res, 2), "error");
    ck_assert_str_eq(json_string_value(json_object_get(e2, "code")), "bad_request");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(e2, "message")),
                                 "queries[2].start[1] is not a finite number"));
    json_decref(j);

    th_response r;
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/paths",
            "{\"queries\":[{\"start\":[1,0,1],\"end\":[2,0,2]},{\"start\":[1,0,1],\"end\":[2,0,2]},"
            "{\"start\":[1,0,1],\"end\":[2,0,2]},{\"start\":[1,0,1],\"end\":[2,0,2]}]}",
            &r);
    assert_error(&r, 413, "payload_too_large", "limit of 3");
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/paths", "{\"start\":[1,0,1]}", &r);
    assert_error(&r, 400, "bad_request", "queries");
    th_response_free(&r);
}
END_TEST

/* nearest: (5,0,4.5) lies in the hole, 0.5 m from its south edge z = 4 (the
   north edge of polygon 1 = [4,6]x[0,4]); 1.5 m from the others. So the snap
   is (5,0,4), polygon 1, distance 0.5. (1,2,1) snaps straight down to
   (1,0,1) in polygon 0, distance 2. */
START_TEST(nearest_points) {
    json_t *j = query("sq", "nearest", "{\"point\":[5,0,4.5]}", 200);
    assert_vec(json_object_get(j, "point"), 5, 0, 4, 1e-5);
    ck_assert_int_eq(int_field(j, "polygon"), 1);
    ck_assert_double_eq_tol(num_field(j, "distance"), 0.5, 1e-5);
    json_decref(j);
    j = query("sq", "nearest", "{\"point\":[1,2,1]}", 200);
    assert_vec(json_object_get(j, "point"), 1, 0, 1, 1e-5);
    ck_assert_int_eq(int_field(j, "polygon"), 0);
    ck_assert_double_eq_tol(num_field(j, "distance"), 2.0, 1e-5);
    json_decref(j);
    th_response r;
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/nearest", "{\"point\":[50,0,50]}", &r);
    assert_error(&r, 422, "point_off_mesh", "point is not within extents");
    th_response_free(&r);
}
END_TEST

/* raycast from (1,0,5) toward (9,0,5) inside polygon 3 ([0,4]x[4,6]) hits the
   hole's west wall x = 4 at (4,0,5): t = 3/8 = 0.375, normal (-1,0,0) (back
   toward the ray's side), visited polygons [3]. Along z = 1 from x = 1 to 9
   nothing is hit: t = 1, point = end, polygons 0, 1, 2. */
START_TEST(raycast_hit_and_clear) {
    json_t *j = query("sq", "raycast", "{\"start\":[1,0,5],\"end\":[9,0,5]}", 200);
    ck_assert(json_is_true(json_object_get(j, "hit")));
    ck_assert_double_eq_tol(num_field(j, "t"), 0.375, 1e-5);
    assert_vec(json_object_get(j, "point"), 4, 0, 5, 1e-4);
    assert_vec(json_object_get(j, "normal"), -1, 0, 0, 1e-5);
    const uint32_t p3[] = {3};
    assert_ids(json_object_get(j, "polygons"), p3, 1);
    json_decref(j);
    j = query("sq", "raycast", "{\"start\":[1,0,1],\"end\":[9,0,1]}", 200);
    ck_assert(json_is_false(json_object_get(j, "hit")));
    ck_assert_double_eq_tol(num_field(j, "t"), 1.0, 1e-6);
    assert_vec(json_object_get(j, "point"), 9, 0, 1, 1e-4);
    ck_assert_ptr_null(json_object_get(j, "normal"));
    const uint32_t p012[] = {0, 1, 2};
    assert_ids(json_object_get(j, "polygons"), p012, 3);
    json_decref(j);
}
END_TEST

/* reachable: islands are not connected; a two-way link connects both ways; a
   one-way link A -> B only from A. max_cost on the L corridor from (1,0,1):
   polygon 1 ([2,4]x[0,2]) is entered 1 m away, polygon 2 only 3 m away, so a
   budget of 2.5 reaches polygons 0 and 1: area 4 + 4 = 8 m^2. */
START_TEST(reachability) {
    const char *ab = "{\"start\":[1,0,2],\"end\":[12,0,2]}";
    const char *ba = "{\"start\":[12,0,2],\"end\":[1,0,2]}";
    json_t *j = query("isl", "reachable", ab, 200);
    ck_assert(json_is_false(json_object_get(j, "reachable")));
    ck_assert_int_eq(int_field(j, "start_polygon"), 0);
    ck_assert_int_eq(int_field(j, "end_polygon"), 1);
    json_decref(j);
    j = query("isl2", "reachable", ba, 200);
    ck_assert(json_is_true(json_object_get(j, "reachable")));
    json_decref(j);
    j = query("isl1", "reachable", ab, 200);
    ck_assert(json_is_true(json_object_get(j, "reachable")));
    json_decref(j);
    j = query("isl1", "reachable", ba, 200);
    ck_assert(json_is_false(json_object_get(j, "reachable")));
    json_decref(j);

    j = query("L", "reachable", "{\"start\":[1,0,1],\"max_cost\":2.5}", 200);
    const uint32_t p01[] = {0, 1};
    assert_ids(json_object_get(j, "polygons"), p01, 2);
    ck_assert_double_eq_tol(num_field(j, "area"), 8.0, 1e-6);
    json_decref(j);

    th_response r;
    th_json(qsrv.port, "POST", "/v1/navmeshes/isl/reachable", "{\"start\":[1,0,2],\"end\":[7,0,2]}",
            &r);
    assert_error(&r, 422, "point_off_mesh", "end is not within extents");
    th_response_free(&r);

    /* The end form ignores exclude_areas and area_costs entirely (components
       are per mesh), snapping included. On the L, (9,0,5) lies inside polygon
       6 ([8,10]x[4,6], area 1) and (9,0,9) inside polygon 8 ([8,10]x[8,10]),
       joined through 7. Excluding area 1 with 0.5 m extents: the start still
       snaps to polygon 6 (excluded, it would be 1 m from the nearest other
       polygon, beyond the extents: off the mesh), and the pair is reachable. */
    j = query("L", "reachable",
              "{\"start\":[9,0,5],\"end\":[9,0,9],\"extents\":[0.5,1,0.5],"
              "\"exclude_areas\":[1],\"area_costs\":{\"1\":5}}",
              200);
    ck_assert(json_is_true(json_object_get(j, "reachable")));
    ck_assert_int_eq(int_field(j, "start_polygon"), 6);
    ck_assert_int_eq(int_field(j, "end_polygon"), 8);
    json_decref(j);
    /* default extents: (9,0,3) is in polygon 5 ([8,10]x[2,4], area 1), not
       moved to polygon 4 below it ([8,10]x[0,2], 1 m away) */
    j = query("L", "reachable", "{\"start\":[9,0,3],\"end\":[1,0,1],\"exclude_areas\":[1]}", 200);
    ck_assert(json_is_true(json_object_get(j, "reachable")));
    ck_assert_int_eq(int_field(j, "start_polygon"), 5);
    ck_assert_int_eq(int_field(j, "end_polygon"), 0);
    json_decref(j);
    /* the max_cost form does apply exclusions: an excluded polygon is no start */
    th_json(qsrv.port, "POST", "/v1/navmeshes/L/reachable",
            "{\"start\":[9,0,5],\"max_cost\":10,\"extents\":[0.5,1,0.5],\"exclude_areas\":[1]}",
            &r);
    assert_error(&r, 422, "point_off_mesh", "start is not within extents");
    th_response_free(&r);
}
END_TEST

/* A batch slot's error message names its slot the way the contract names
   fields: "queries[i]." followed by a request field, or, for a failure no
   field explains, "the path query in queries[i] failed: ..."; never
   "queries[i]." glued to a sentence. */
static void assert_slot_message(const char *msg, size_t i) {
    static const char *const fields[] = {"start",         "end",       "extents",
                                         "area_costs",    "max_nodes", "algorithm",
                                         "exclude_areas", "cache",     "debug"};
    char dot[32], in[48];
    snprintf(dot, sizeof dot, "queries[%zu].", i);
    snprintf(in, sizeof in, "the path query in queries[%zu] failed: ", i);
    ck_assert_ptr_nonnull(msg);
    if (!strncmp(msg, in, strlen(in)))
        return;
    ck_assert_msg(!strncmp(msg, dot, strlen(dot)), "slot %zu: '%s' names no slot", i, msg);
    const char *f = msg + strlen(dot);
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        size_t n = strlen(fields[k]);
        if (!strncmp(f, fields[k], n) && (f[n] == ' ' || f[n] == '[' || f[n] == '.'))
            return;
    }
    ck_abort_msg("slot %zu: '%s' follows the slot with no field name", i, msg);
}

/* extents with a 0 component is a flat box (api.md: each >= 0), accepted by
   path, paths and GET path as by nearest and raycast. On the square (flat at
   y = 0), (1,0,1) and (3,0,1) both lie in polygon 0 ([0,4]x[0,4]) on the
   surface, so they snap to themselves: two corners, length 2, corridor [0].
   A point 0.5 m above the surface is outside a box of half-height 0.
   In a batch (--max-batch 3) the good query is answered next to slots whose
   errors are named by slot and field: a cost of 1e-50, positive as JSON
   but 0 as a 32-bit float (which nav/ would refuse naming nothing), and an
   end 40 m off the mesh. */
START_TEST(path_zero_extents_and_slot_messages) {
    json_t *j =
        query("sq", "path",
              "{\"start\":[1,0,1],\"end\":[3,0,1],\"extents\":[1,0,1],\"cache\":false}", 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "complete");
    json_t *c = json_object_get(j, "corners");
    ck_assert_int_eq(json_array_size(c), 2);
    assert_vec(json_array_get(c, 0), 1, 0, 1, 1e-6);
    assert_vec(json_array_get(c, 1), 3, 0, 1, 1e-6);
    ck_assert_double_eq_tol(num_field(j, "length"), 2.0, 1e-6);
    const uint32_t p0[] = {0};
    assert_ids(json_object_get(j, "polygons"), p0, 1);
    json_decref(j);
    th_response r;
    th_json(qsrv.port, "GET", "/v1/navmeshes/sq/path?start=1,0,1&end=3,0,1&extents=1,0,1", NULL,
            &r);
    ck_assert_msg(r.status == 200, "GET: %d %s", r.status, r.body);
    j = parse(&r);
    ck_assert_double_eq_tol(num_field(j, "length"), 2.0, 1e-6);
    json_decref(j);
    th_response_free(&r);
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path",
            "{\"start\":[1,0.5,1],\"end\":[3,0,1],\"extents\":[1,0,1]}", &r);
    assert_error(&r, 422, "point_off_mesh", "start is not within extents");
    th_response_free(&r);

    j = query("sq", "paths",
              "{\"queries\":[{\"start\":[1,0,1],\"end\":[3,0,1],\"extents\":[1,0,1]},"
              "{\"start\":[1,0,1],\"end\":[3,0,1],\"area_costs\":{\"0\":1e-50}},"
              "{\"start\":[1,0,1],\"end\":[50,0,50]}],\"cache\":false}",
              200);
    json_t *res = json_object_get(j, "results");
    ck_assert_int_eq(json_array_size(res), 3);
    ck_assert_msg(!json_object_get(json_array_get(res, 0), "error"), "slot 0 failed: %s",
                  json_string_value(json_object_get(
                      json_object_get(json_array_get(res, 0), "error"), "message")));
    ck_assert_double_eq_tol(num_field(json_array_get(res, 0), "length"), 2.0, 1e-6);
    const char *want[3][2] = {{NULL, NULL},
                              {"bad_request", "queries[1].area_costs[\"0\"] is too small: it "
                                              "rounds to 0 as a 32-bit float"},
                              {"point_off_mesh", "queries[2].end is not within extents of the "
                                                 "navmesh"}};
    for (size_t i = 1; i < 3; i++) {
        const json_t *e = json_object_get(json_array_get(res, i), "error");
        ck_assert_str_eq(json_string_value(json_object_get(e, "code")), want[i][0]);
        const char *msg = json_string_value(json_object_get(e, "message"));
        assert_slot_message(msg, i);
        ck_assert_str_eq(msg, want[i][1]);
    }
    json_decref(j);
    /* the same cost alone names the field without a slot */
    th_json(qsrv.port, "POST", "/v1/navmeshes/sq/path",
            "{\"start\":[1,0,1],\"end\":[3,0,1],\"area_costs\":{\"0\":1e-50}}", &r);
    assert_error(&r, 400, "bad_request", "area_costs[\"0\"] is too small");
    th_response_free(&r);
}
END_TEST

/* The cache key holds the mesh build: replacing a mesh under the same name
   changes a cached answer. (1,0,1) -> (9,0,9) on the square with the hole
   [4,6]^2 bends at one hole corner: 2 * |(3,5)| = 2 * sqrt(34) = 11.662, 3
   corners; on the L corridor it bends at the inner corner (8,0,2):
   |(7,1)| + |(1,7)| = 2 * sqrt(50) = 14.142, corners (1,0,1), (8,0,2),
   (9,0,9). A cache keyed without the mesh would answer the square's path,
   as a hit, after the replace. */
START_TEST(cache_follows_mesh_replace) {
    /* extents no other test uses (the exact key holds them), so the first
       answer is this test's own miss; points on the surface snap to
       themselves whatever the extents */
    const char *body = "{\"start\":[1,0,1],\"end\":[9,0,9],\"extents\":[1.5,2,1.5]}";
    th_response r;
    th_json(qsrv.port, "PUT", "/v1/navmeshes/cx", SQUARE, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    json_t *a = query("cx", "path", body, 200);
    ck_assert_str_eq(json_string_value(json_object_get(a, "cache")), "miss");
    ck_assert_double_eq_tol(num_field(a, "length"), 2 * sqrt(34.0), 1e-5);
    ck_assert_int_eq(json_array_size(json_object_get(a, "corners")), 3);
    json_t *b = query("cx", "path", body, 200);
    ck_assert_str_eq(json_string_value(json_object_get(b, "cache")), "hit");
    json_object_del(a, "cache");
    json_object_del(b, "cache");
    ck_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);

    th_json(qsrv.port, "PUT", "/v1/navmeshes/cx", L_CORRIDOR, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    json_t *l = query("cx", "path", body, 200);
    ck_assert_str_eq(json_string_value(json_object_get(l, "cache")), "miss");
    ck_assert_str_eq(json_string_value(json_object_get(l, "status")), "complete");
    ck_assert_double_eq_tol(num_field(l, "length"), 2 * sqrt(50.0), 1e-5);
    json_t *c = json_object_get(l, "corners");
    ck_assert_int_eq(json_array_size(c), 3);
    assert_vec(json_array_get(c, 0), 1, 0, 1, 1e-5);
    assert_vec(json_array_get(c, 1), 8, 0, 2, 1e-5);
    assert_vec(json_array_get(c, 2), 9, 0, 9, 1e-5);
    json_decref(l);
    /* and the new answer is what is cached now */
    l = query("cx", "path", body, 200);
    ck_assert_str_eq(json_string_value(json_object_get(l, "cache")), "hit");
    ck_assert_double_eq_tol(num_field(l, "length"), 2 * sqrt(50.0), 1e-5);
    json_decref(l);
}
END_TEST

/* The navd_path_cache_* samples of /metrics, read in one scrape. */
typedef struct cache_sample {
    long long hits, misses, evictions, entries;
} cache_sample;

static cache_sample read_cache_metrics(void) {
    th_response r;
    th_json(qsrv.port, "GET", "/metrics", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    cache_sample cs = {metric_sample(r.body, "navd_path_cache_hits"),
                       metric_sample(r.body, "navd_path_cache_misses"),
                       metric_sample(r.body, "navd_path_cache_evictions"),
                       metric_sample(r.body, "navd_path_cache_entries")};
    th_response_free(&r);
    ck_assert_msg(cs.hits >= 0 && cs.misses >= 0 && cs.evictions >= 0 && cs.entries >= 0,
                  "a navd_path_cache_* sample is missing");
    return cs;
}

/* /metrics counts the cache: a request no test sent before is one miss
   (searched and stored: one entry more, unless something was evicted), and
   the same request twice more is two hits (two, so that hits and misses
   swapped would show). Tests in this case run one at a time, so nothing
   else queries the server between the two scrapes. */
START_TEST(metrics_count_cache_hits_and_misses) {
    cache_sample before = read_cache_metrics();
    const char *body = "{\"start\":[1.25,0,1.5],\"end\":[8.5,0,1.75]}";
    const char *want[] = {"miss", "hit", "hit"};
    for (int i = 0; i < 3; i++) {
        json_t *j = query("sq", "path", body, 200);
        ck_assert_str_eq(json_string_value(json_object_get(j, "cache")), want[i]);
        json_decref(j);
    }
    cache_sample after = read_cache_metrics();
    ck_assert_int_eq(after.misses - before.misses, 1);
    ck_assert_int_eq(after.hits - before.hits, 2);
    ck_assert_int_ge(after.entries, 1);
    if (after.evictions == before.evictions)
        ck_assert_int_eq(after.entries - before.entries, 1);
}
END_TEST

/* A replace while queries run: every answer is a whole answer of one version.
   (1,0,1) -> (9,0,9) is 2*sqrt(34) on the square and 2*sqrt(50) on the L. */
typedef struct swap_reader {
    int port, bad, total;
    volatile int stop;
    double seen;
} swap_reader;

static void *swap_reader_main(void *arg) {
    swap_reader *sr = arg;
    th_conn c;
    if (th_connect(&c, sr->port) != 0) {
        sr->bad++;
        return NULL;
    }
    const char *body = "{\"start\":[1,0,1],\"end\":[9,0,9],\"cache\":false}";
    while (!sr->stop) {
        th_response r;
        if (th_conn_request(&c, "POST", "/v1/navmeshes/swap/path", "application/json", body,
                            strlen(body), NULL, &r) != 0 ||
            r.status != 200) {
            sr->bad++;
        } else {
            json_t *j = json_loads(r.body, 0, NULL);
            double len = json_number_value(json_object_get(j, "length"));
            if (fabs(len - 2 * sqrt(34.0)) > 1e-4 && fabs(len - 2 * sqrt(50.0)) > 1e-4) {
                sr->bad++;
                sr->seen = len;
            }
            json_decref(j);
        }
        sr->total++;
        th_response_free(&r);
    }
    th_close(&c);
    return NULL;
}

START_TEST(replace_under_load_sees_whole_versions) {
    th_response r;
    th_json(qsrv.port, "PUT", "/v1/navmeshes/swap", SQUARE, &r);
    th_response_free(&r);
    swap_reader sr[2] = {{.port = qsrv.port}, {.port = qsrv.port}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, swap_reader_main, &sr[i]);
    for (int k = 0; k < 10; k++) {
        th_json(qsrv.port, "PUT", "/v1/navmeshes/swap", k % 2 ? SQUARE : L_CORRIDOR, &r);
        ck_assert_int_eq(r.status, 200);
        th_response_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        sr[i].stop = 1;
        pthread_join(t[i], NULL);
        ck_assert_msg(sr[i].bad == 0, "reader %d: %d bad of %d (length %g)", i, sr[i].bad,
                      sr[i].total, sr[i].seen);
    }
}
END_TEST

START_TEST(queries_need_no_key) {
    th_response r;
    th_request(authsrv.port, "PUT", "/v1/navmeshes/k", "application/json", SQUARE, strlen(SQUARE),
               (const char *[]){"Authorization: Bearer s3cret-key", NULL}, &r);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    th_json(authsrv.port, "POST", "/v1/navmeshes/k/nearest", "{\"point\":[1,0,1]}", &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    th_json(authsrv.port, "GET", "/v1/navmeshes/k/path?start=1,0,1&end=9,0,1", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
}
END_TEST

extern Suite *api_http_suite(void); /* called by check_main.c */
Suite *api_http_suite(void) {
    Suite *s = suite_create("api_http");
    TCase *tc = tcase_create("navmeshes");
    tcase_add_unchecked_fixture(tc, start_default, stop_default);
    tcase_add_test(tc, create_replace_get_delete);
    tcase_add_test(tc, list_sorted);
    tcase_add_test(tc, export_json_round_trip);
    tcase_add_test(tc, export_obj_round_trip);
    tcase_add_test(tc, error_codes);
    tcase_add_test(tc, overflowing_numbers_name_the_vertex);
    tcase_add_test(tc, keep_alive_survives_errors);
    tcase_add_test(tc, concurrent_clients_lose_nothing);
    tcase_add_test(tc, health_and_metrics);
    tcase_add_test(tc, request_log_lines);
    tcase_add_test(tc, shared_meshes_over_http);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_unchecked_fixture(tc, start_small, stop_small);
    tcase_add_test(tc, payload_too_large);
    suite_add_tcase(s, tc);

    tc = tcase_create("auth");
    tcase_add_unchecked_fixture(tc, start_auth, stop_auth);
    tcase_add_test(tc, auth_required_for_writes);
    tcase_add_test(tc, queries_need_no_key);
    suite_add_tcase(s, tc);

    tc = tcase_create("queries");
    tcase_add_unchecked_fixture(tc, start_queries, stop_queries);
    tcase_add_test(tc, path_bends_at_one_corner);
    tcase_add_test(tc, path_costs_exclusions_partial);
    tcase_add_test(tc, path_links_and_islands);
    tcase_add_test(tc, path_get_form_and_cache);
    tcase_add_test(tc, query_errors);
    tcase_add_test(tc, paths_batch);
    tcase_add_test(tc, nearest_points);
    tcase_add_test(tc, raycast_hit_and_clear);
    tcase_add_test(tc, reachability);
    tcase_add_test(tc, path_zero_extents_and_slot_messages);
    tcase_add_test(tc, cache_follows_mesh_replace);
    tcase_add_test(tc, metrics_count_cache_hits_and_misses);
    tcase_add_test(tc, replace_under_load_sees_whole_versions);
    suite_add_tcase(s, tc);

    tc = tcase_create("process");
    tcase_add_test(tc, restart_keeps_meshes_and_versions);
    tcase_add_test(tc, kill9_after_201_keeps_mesh);
    tcase_add_test(tc, demo_only_when_empty);
    tcase_add_test(tc, damaged_blob_is_skipped);
    tcase_add_test(tc, config_errors_exit_2);
    tcase_add_test(tc, env_config_applies);
    tcase_add_test(tc, config_table_parses);
    tcase_add_test(tc, idle_connection_is_closed);
    tcase_add_test(tc, connection_limit_holds_the_third);
    tcase_add_test(tc, step_obstacles_limit);
    tcase_add_test(tc, thread_pool_size);
    tcase_add_test(tc, trickled_headers_are_cut);
    tcase_add_test(tc, sigterm_finishes_in_flight);
    suite_add_tcase(s, tc);
    return s;
}
