/*
 * check_api_metrics: the request counters of /metrics, in process.
 *
 * api_metrics_observe is fed known requests and api_metrics_render's text
 * is read back: every status navd can send (each api_code's HTTP status and
 * the viewer's 304) gets a series of its own labelled with the exact code,
 * an unlisted status (or 0, no response) falls into status="other", and the
 * histogram of a (route, method, status) series agrees with its counter.
 * The counters are process-global; Check forks each test, so the counts
 * seen here are this test's alone.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"

/* The value of the sample whose line starts with `series` (labels included), or -1. */
static long long sample(const char *text, const char *series) {
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtoll(p + n + 1, NULL, 10);
    return -1;
}

/*
 * Health (GET /health) observes each api_code's status k + 1 times, where k
 * is the code's index; codes sharing a status (400: bad_request and
 * invalid_json; 422: invalid_navmesh and point_off_mesh) add up. So a
 * status's count is the sum of (k + 1) over the codes mapping to it,
 * computed here from the table, never read from the renderer.
 */
START_TEST(every_sent_status_has_its_series) {
    unsigned long long want[600] = {0};
    for (int c = 0; c < API_CODE_COUNT; c++) {
        unsigned st = api_code_http((api_code)c);
        ck_assert_uint_lt(st, 600);
        for (int k = 0; k <= c; k++)
            api_metrics_observe(API_ROUTE_HEALTH, st, 0.0002);
        want[st] += (unsigned long long)c + 1;
    }
    api_metrics_observe(API_ROUTE_VIEWER, 304, 0.0002); /* the viewer's Not Modified */
    size_t len = 0;
    char *text = api_metrics_render(NULL, 1, 0, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), len);
    for (unsigned st = 0; st < 600; st++) {
        if (!want[st])
            continue;
        char series[160];
        snprintf(series, sizeof series,
                 "navd_requests_total{route=\"/health\",method=\"GET\",status=\"%u\"}", st);
        ck_assert_msg(sample(text, series) == (long long)want[st], "%s: %lld, expected %llu",
                      series, sample(text, series), want[st]);
        /* 0.0002 s lies in the bucket le=0.00025 (above 0.0001) */
        snprintf(series, sizeof series,
                 "navd_request_duration_seconds_bucket{route=\"/health\",method=\"GET\","
                 "status=\"%u\",le=\"0.0001\"}",
                 st);
        ck_assert_int_eq(sample(text, series), 0);
        snprintf(series, sizeof series,
                 "navd_request_duration_seconds_bucket{route=\"/health\",method=\"GET\","
                 "status=\"%u\",le=\"0.00025\"}",
                 st);
        ck_assert_int_eq(sample(text, series), (long long)want[st]);
        snprintf(series, sizeof series,
                 "navd_request_duration_seconds_count{route=\"/health\",method=\"GET\","
                 "status=\"%u\"}",
                 st);
        ck_assert_int_eq(sample(text, series), (long long)want[st]);
    }
    ck_assert_int_eq(sample(text, "navd_requests_total{route=\"/\",method=\"GET\",status=\"304\"}"),
                     1);
    /* nothing unlisted was sent */
    ck_assert_ptr_null(strstr(text, "status=\"other\""));
    ck_assert_ptr_null(strstr(text, "xx\""));
    free(text);
}
END_TEST

/* 418 is never sent by navd and 0 means no response: both count as "other";
   a route id out of range counts under route "none". */
START_TEST(unknown_statuses_share_one_series) {
    api_metrics_observe(API_ROUTE_PATH, 418, 0.5);
    api_metrics_observe(API_ROUTE_PATH, 0, 0.5);
    api_metrics_observe(API_ROUTE_PATH, 99999, 0.5);
    api_metrics_observe(API_ROUTE_COUNT + 7, 200, 0.5);
    size_t len = 0;
    char *text = api_metrics_render(NULL, 1, 0, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(sample(text, "navd_requests_total{route=\"/v1/navmeshes/{name}/path\","
                                  "method=\"POST\",status=\"other\"}"),
                     3);
    /* 0.5 s: not above the bucket 0.5, so le=0.25 holds none, le=0.5 all 3 */
    ck_assert_int_eq(sample(text, "navd_request_duration_seconds_bucket{route=\"/v1/navmeshes/"
                                  "{name}/path\",method=\"POST\",status=\"other\",le=\"0.25\"}"),
                     0);
    ck_assert_int_eq(sample(text, "navd_request_duration_seconds_bucket{route=\"/v1/navmeshes/"
                                  "{name}/path\",method=\"POST\",status=\"other\",le=\"0.5\"}"),
                     3);
    ck_assert_int_eq(
        sample(text, "navd_requests_total{route=\"none\",method=\"other\",status=\"200\"}"), 1);
    ck_assert_ptr_null(strstr(text, "status=\"418\""));
    ck_assert_ptr_null(strstr(text, "status=\"0\""));
    free(text);
}
END_TEST

Suite *api_metrics_suite(void); /* called by check_main.c */
Suite *api_metrics_suite(void) {
    Suite *s = suite_create("api_metrics");
    TCase *tc = tcase_create("statuses");
    tcase_add_test(tc, every_sent_status_has_its_series);
    tcase_add_test(tc, unknown_statuses_share_one_series);
    suite_add_tcase(s, tc);
    return s;
}
