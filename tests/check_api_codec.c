/*
 * check_api_codec: data-driven tests of the request decoders (navmesh JSON
 * and OBJ uploads, path / paths / nearest / raycast / reachable bodies).
 *
 * Each file tests/data/codec/<name>.case is one case:
 *   # comment lines
 *   @ <decoder> <expected code | ok> [fragment the error message must contain]
 *   <the request body, verbatim, to the end of the file>
 * Decoders: navmesh (JSON decode, then nav_mesh_build), obj (OBJ decode then
 * build), path, paths (shared options, then every query in order: the first
 * failure is the result), nearest, raycast, reachable. Add a case by adding
 * a file; no code changes.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_codec.h"
#include "api/api_json.h"
#include "api/api_query.h"
#include "api/api_query_codec.h"
#include "test_fixtures.h"

#define CASE_DIR "tests/data/codec"
#define MAX_CASES 512

static char *case_names[MAX_CASES];
static int ncases;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_cases(void) {
    if (ncases)
        return;
    DIR *d = opendir(CASE_DIR);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && ncases < MAX_CASES) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".case") == 0)
            case_names[ncases++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(case_names, (size_t)ncases, sizeof case_names[0], cmp_str);
}

/* Runs `decoder` on body; returns the code and fills e. */
static api_code run_decoder(const char *decoder, const char *body, size_t len, api_err *e) {
    if (strcmp(decoder, "obj") == 0 || strcmp(decoder, "navmesh") == 0) {
        api_mesh_doc doc;
        api_code c;
        if (strcmp(decoder, "obj") == 0) {
            c = api_mesh_decode_obj(body, len, &doc, e);
        } else {
            json_t *j = api_json_parse(body, len, e);
            if (!j)
                return e->code;
            c = api_mesh_decode_json(j, &doc, e);
            json_decref(j);
        }
        if (c != API_OK)
            return c;
        nav_mesh *m = NULL;
        nav_error ne = {0};
        nav_status s = nav_mesh_build(&doc.in, NULL, &m, &ne);
        api_mesh_doc_free(&doc);
        nav_mesh_free(m);
        if (s != NAV_OK)
            return api_fail(e, api_code_from_nav(s), "%s", ne.message);
        return API_OK;
    }
    json_t *j = api_json_parse(body, len, e);
    if (!j)
        return e->code;
    api_code c = API_E_INTERNAL;
    if (strcmp(decoder, "path") == 0) {
        api_query_opts base;
        api_query_opts_default(&base);
        api_path_query q;
        c = api_decode_path(j, "", &base, &q, e);
    } else if (strcmp(decoder, "paths") == 0) {
        api_query_opts base;
        const json_t *queries;
        c = api_decode_paths(j, &base, &queries, e);
        for (size_t i = 0; c == API_OK && i < json_array_size(queries); i++) {
            char where[32];
            snprintf(where, sizeof where, "queries[%zu]", i);
            api_path_query q;
            c = api_decode_path(json_array_get(queries, i), where, &base, &q, e);
        }
    } else if (strcmp(decoder, "nearest") == 0) {
        api_nearest_query q;
        c = api_decode_nearest(j, &q, e);
    } else if (strcmp(decoder, "raycast") == 0) {
        api_path_query q;
        c = api_decode_raycast(j, &q, e);
    } else if (strcmp(decoder, "reachable") == 0) {
        api_reach_query q;
        c = api_decode_reachable(j, &q, e);
    } else {
        ck_abort_msg("unknown decoder '%s'", decoder);
    }
    json_decref(j);
    return c;
}

START_TEST(codec_case) {
    list_cases();
    ck_assert_msg(_i < ncases, "case %d missing", _i);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CASE_DIR, case_names[_i]);
    size_t len = 0;
    char *text = fx_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    /* skip comments; the "@ " line holds the expectation */
    char *p = text;
    while (*p == '#')
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    ck_assert_msg(strncmp(p, "@ ", 2) == 0, "%s: no '@ ' expectation line", path);
    char *nl = strchr(p, '\n');
    ck_assert_msg(nl != NULL, "%s: no body line", path);
    *nl = '\0';
    char decoder[32] = "", expect[48] = "";
    int consumed = 0;
    ck_assert_msg(sscanf(p + 2, "%31s %47s %n", decoder, expect, &consumed) >= 2,
                  "%s: bad expectation line", path);
    const char *fragment = p + 2 + consumed;
    const char *body = nl + 1;
    size_t body_len = len - (size_t)(body - text);

    api_err e = {0};
    api_code c = run_decoder(decoder, body, body_len, &e);
    if (strcmp(expect, "ok") == 0) {
        ck_assert_msg(c == API_OK, "%s: expected success, got %s: %s", case_names[_i],
                      api_code_name(c), e.message);
    } else {
        ck_assert_msg(c != API_OK && strcmp(api_code_name(c), expect) == 0,
                      "%s: expected %s, got %s (%s)", case_names[_i], expect, api_code_name(c),
                      e.message);
        ck_assert_msg(strstr(e.message, fragment) != NULL, "%s: message '%s' lacks '%s'",
                      case_names[_i], e.message, fragment);
    }
    free(text);
}
END_TEST

/* The table itself: every code has its contract HTTP status and name. */
START_TEST(error_table) {
    ck_assert_uint_eq(api_code_http(API_E_BAD_REQUEST), 400);
    ck_assert_uint_eq(api_code_http(API_E_INVALID_JSON), 400);
    ck_assert_uint_eq(api_code_http(API_E_UNAUTHORIZED), 401);
    ck_assert_uint_eq(api_code_http(API_E_NOT_FOUND), 404);
    ck_assert_uint_eq(api_code_http(API_E_METHOD_NOT_ALLOWED), 405);
    ck_assert_uint_eq(api_code_http(API_E_PAYLOAD_TOO_LARGE), 413);
    ck_assert_uint_eq(api_code_http(API_E_UNSUPPORTED_MEDIA_TYPE), 415);
    ck_assert_uint_eq(api_code_http(API_E_INVALID_NAVMESH), 422);
    ck_assert_uint_eq(api_code_http(API_E_POINT_OFF_MESH), 422);
    ck_assert_uint_eq(api_code_http(API_E_INTERNAL), 500);
    ck_assert_uint_eq(api_code_http(API_E_UNAVAILABLE), 503);
    ck_assert_str_eq(api_code_name(API_E_UNSUPPORTED_MEDIA_TYPE), "unsupported_media_type");
    ck_assert_int_eq(api_code_from_nav(NAV_E_OFF_MESH), API_E_POINT_OFF_MESH);
    ck_assert_int_eq(api_code_from_nav(NAV_E_INVALID_MESH), API_E_INVALID_NAVMESH);
    ck_assert_int_eq(api_code_from_nav(NAV_E_CORRUPT), API_E_INTERNAL);
    ck_assert_int_eq(api_code_from_store(STORE_NOT_FOUND), API_E_NOT_FOUND);
    ck_assert_int_eq(api_code_from_store(STORE_IO), API_E_UNAVAILABLE);
}
END_TEST

/* The wording of a failed nav/ query call (api_nav_fail), alone and in a
   batch slot: a point that did not snap is a field ("queries[2].end"), any
   other status names the slot inside the sentence, never "queries[2]."
   glued to it. */
START_TEST(nav_failure_wording) {
    api_err e = {0};
    ck_assert_int_eq(api_nav_fail(&e, NAV_E_OFF_MESH, "", "end", "path query"),
                     API_E_POINT_OFF_MESH);
    ck_assert_str_eq(e.message, "end is not within extents of the navmesh");
    ck_assert_int_eq(api_nav_fail(&e, NAV_E_OFF_MESH, "queries[2]", "end", "path query"),
                     API_E_POINT_OFF_MESH);
    ck_assert_str_eq(e.message, "queries[2].end is not within extents of the navmesh");
    ck_assert_int_eq(api_nav_fail(&e, NAV_E_INVALID_ARG, "", "start", "path query"),
                     API_E_BAD_REQUEST);
    ck_assert_str_eq(e.message, "the path query failed: invalid argument");
    ck_assert_int_eq(api_nav_fail(&e, NAV_E_INVALID_ARG, "queries[0]", "start", "path query"),
                     API_E_BAD_REQUEST);
    ck_assert_str_eq(e.message, "the path query in queries[0] failed: invalid argument");
    ck_assert_int_eq(api_nav_fail(&e, NAV_E_NOMEM, "queries[7]", NULL, "path query"),
                     api_code_from_nav(NAV_E_NOMEM));
    ck_assert_str_eq(e.message, "the path query in queries[7] failed: out of memory");
}
END_TEST

/* RFC 3339 formatting, derived by hand: 1700000000123 ms = 2023-11-14 22:13:20.123 UTC
   (1700000000 s / 86400 = 19675 days + 80000 s; day 19675 after 1970-01-01 is
   2023-11-14; 80000 s = 22 h 13 min 20 s). */
START_TEST(time_format) {
    char buf[40];
    api_format_time(1700000000123LL, buf, sizeof buf);
    ck_assert_str_eq(buf, "2023-11-14T22:13:20.123Z");
    api_format_time(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "1970-01-01T00:00:00.000Z");
}
END_TEST

/* Output keeps 9 significant digits: a float32 near 5000 round-trips. */
START_TEST(number_precision) {
    float v[3] = {5000.00049f, -0.1f, 123456.789f};
    json_t *j = api_json_vec3(v);
    size_t len;
    char *s = api_json_dump(j, &len);
    json_t *back = json_loads(s, 0, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_msg((float)json_real_value(json_array_get(back, (size_t)i)) == v[i],
                      "%s does not round-trip component %d", s, i);
    free(s);
    json_decref(j);
    json_decref(back);
    /* -0 prints as 0.0, so a wall normal reads [-1.0,0.0,0.0], never "-0.0" */
    j = api_json_num(-0.0);
    s = api_json_dump(j, &len);
    ck_assert_str_eq(s, "0.0");
    free(s);
    json_decref(j);
}
END_TEST

/*
 * Numbers jansson cannot hold are valid JSON: api_json_parse reads them so
 * that the field's own reader can name it. Expected values by hand:
 * +-1e999 (beyond DBL_MAX) read as +-1e39, finite as a double but beyond
 * FLT_MAX = 3.40282347e38, so (float) is infinite; the 30-digit integer
 * 123456789012345678901234567890 (beyond 2^63) reads as a real equal to it
 * to 13 significant digits (relative error < 1e-12); 1e-999 underflows,
 * which jansson already accepts as 0. Strings are never touched, whatever
 * they hold; an escaped backslash before a closing quote ends the string.
 */
START_TEST(overflowing_numbers) {
    const char *body = "{\"s\":\"1e999 \\\"1e999\\\" \\\\\",\"n\":1e999,\"m\":-1E+999,"
                       "\"i\":123456789012345678901234567890,\"u\":1e-999,\"ok\":7}";
    api_err e = {0};
    json_t *j = api_json_parse(body, strlen(body), &e);
    ck_assert_msg(j != NULL, "refused: %s", e.message);
    ck_assert_str_eq(json_string_value(json_object_get(j, "s")), "1e999 \"1e999\" \\");
    double n = json_real_value(json_object_get(j, "n"));
    double m = json_real_value(json_object_get(j, "m"));
    ck_assert(isfinite(n) && n > 3.40282347e38 && isinf((float)n) && (float)n > 0);
    ck_assert(isfinite(m) && m < -3.40282347e38 && isinf((float)m) && (float)m < 0);
    double i = json_real_value(json_object_get(j, "i"));
    ck_assert_msg(fabs(i / 1.2345678901234567890e29 - 1) < 1e-12, "i read as %.17g", i);
    ck_assert(json_is_real(json_object_get(j, "u")) &&
              json_real_value(json_object_get(j, "u")) == 0);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "ok")), 7);
    json_decref(j);

    /* A later syntax error keeps its position: the body with 1e999 fails
       where the same body with a short number in its place fails. */
    const char *bad = "[1e999,\n 2, }";
    const char *ref = "[1e9  ,\n 2, }";
    json_error_t je;
    ck_assert_ptr_null(json_loadb(ref, strlen(ref), 0, &je));
    char want[96];
    snprintf(want, sizeof want, "line %d, column %d", je.line, je.column);
    ck_assert_ptr_null(api_json_parse(bad, strlen(bad), &e));
    ck_assert_int_eq(e.code, API_E_INVALID_JSON);
    ck_assert_msg(strstr(e.message, want), "'%s' lacks '%s'", e.message, want);
    /* line 2, column 5: the '}' (jansson counts columns from 1) */
    ck_assert_str_eq(want, "line 2, column 5");
}
END_TEST

extern Suite *api_codec_suite(void); /* called by check_main.c */
/* The direct writer prints every number exactly as the jansson path does. */
START_TEST(writer_matches_jansson) {
    const double values[] = {0.0,         -0.0,       1.0, -2.5,   1e20, 1e-5,      1.5e-7,
                             123456789.0, 5000.00049, 0.1, -1e300, 1e21, 7.25e-300, 3.0e9};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        json_t *j = api_json_num(values[i]);
        size_t jl, wl;
        char *a = api_json_dump(j, &jl);
        api_jw w;
        api_jw_init(&w, 4);
        api_jw_num(&w, values[i]);
        char *b = api_jw_finish(&w, &wl);
        ck_assert_msg(strcmp(a, b) == 0, "%.17g: jansson %s, writer %s", values[i], a, b);
        free(a);
        free(b);
        json_decref(j);
    }
    /* 400,000 values across magnitudes, as floats and as doubles: the
       writer's integer formatter must agree with printf byte for byte */
    uint32_t rng = 12345;
    for (int i = 0; i < 400000; i++) {
        double mag = pow(10.0, (double)(int)(fx_rand(&rng) % 16) - 6.0);
        double v = (fx_randf(&rng) * 2 - 1) * mag * 10;
        if (i & 1)
            v = (double)(float)v; /* coordinates are float32 */
        if (i % 1000 == 0)
            v = (double)(int)(fx_rand(&rng) % 100000); /* integral values */
        json_t *j = api_json_num(v);
        size_t jl, wl;
        char *a = api_json_dump(j, &jl);
        api_jw w2;
        api_jw_init(&w2, 8);
        api_jw_num(&w2, v);
        char *b = api_jw_finish(&w2, &wl);
        ck_assert_msg(strcmp(a, b) == 0, "%.17g: jansson %s, writer %s", v, a, b);
        free(a);
        free(b);
        json_decref(j);
    }
    /* every neighbour of the decade boundaries, where the digit count
       changes (10^k) or rounding carries into the next decade
       (9.999999995 * 10^k), as doubles and as floats: the writer's estimate
       of the exponent is corrected there */
    for (int k = -6; k <= 10; k++) {
        const double centres[2] = {pow(10.0, k), 9.999999995 * pow(10.0, k)};
        for (int c = 0; c < 2; c++) {
            double lo = centres[c], hi = centres[c];
            float flo = (float)centres[c], fhi = (float)centres[c];
            for (int step = 0; step < 40; step++) {
                const double vs[4] = {lo, hi, flo, fhi};
                for (int t = 0; t < 4; t++) {
                    for (int sign = -1; sign <= 1; sign += 2) {
                        double v = sign * vs[t];
                        json_t *j = api_json_num(v);
                        size_t jl, wl;
                        char *a = api_json_dump(j, &jl);
                        api_jw w3;
                        api_jw_init(&w3, 8);
                        api_jw_num(&w3, v);
                        char *b = api_jw_finish(&w3, &wl);
                        ck_assert_msg(strcmp(a, b) == 0, "%.17g: jansson %s, writer %s", v, a, b);
                        free(a);
                        free(b);
                        json_decref(j);
                    }
                }
                lo = nextafter(lo, 0.0);
                hi = nextafter(hi, INFINITY);
                flo = nextafterf(flo, 0.0f);
                fhi = nextafterf(fhi, INFINITY);
            }
        }
    }
    /* integers */
    api_jw wi;
    api_jw_init(&wi, 2);
    api_jw_uint(&wi, 0);
    api_jw_lit(&wi, ",");
    api_jw_uint(&wi, 18446744073709551615ull);
    size_t il;
    char *is = api_jw_finish(&wi, &il);
    ck_assert_str_eq(is, "0,18446744073709551615");
    free(is);
    /* strings: quotes, backslashes and control bytes are escaped */
    api_jw w;
    api_jw_init(&w, 1);
    api_jw_str(&w, "a\"b\\c\n\x01");
    size_t len;
    char *s = api_jw_finish(&w, &len);
    ck_assert_str_eq(s, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    free(s);
}
END_TEST

Suite *api_codec_suite(void) {
    Suite *s = suite_create("api_codec");
    TCase *tc = tcase_create("cases");
    list_cases();
    tcase_add_loop_test(tc, codec_case, 0, ncases ? ncases : 1);
    tcase_add_test(tc, error_table);
    tcase_add_test(tc, nav_failure_wording);
    tcase_add_test(tc, time_format);
    tcase_add_test(tc, number_precision);
    tcase_add_test(tc, writer_matches_jansson);
    tcase_add_test(tc, overflowing_numbers);
    suite_add_tcase(s, tc);
    return s;
}
