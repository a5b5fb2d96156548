/*
 * check_jobs: the job table (api_jobs) driven directly with runs written
 * here, and the bake and job endpoints against the real binary.
 *
 * The runs are real work functions of the shape a bake has: one returns at
 * once, one fails, one loops reporting progress until it is told to stop
 * (a bake of unbounded length), so queueing, cancelling, limits and
 * retention are exercised deterministically, without timing guesses: a
 * test waits for a state, bounded, never sleeps for one.
 */
#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_jobs.h"
#include "tests/test_http.h"

extern Suite *jobs_suite(void);

/* ---- runs ---- */

/* Written by the bake thread, read by the test: atomics. */
typedef struct run_arg {
    atomic_int ran;        /* set by the run */
    atomic_int committed;  /* api_job_commit's answer (-1: not asked) */
    atomic_int iterations; /* of the looping run */
    atomic_int *freed;     /* counts freed arguments */
} run_arg;

static run_arg *arg_new(atomic_int *freed) {
    run_arg *a = calloc(1, sizeof *a);
    a->committed = -1;
    a->freed = freed;
    return a;
}

static void arg_free(void *p) {
    run_arg *a = p;
    if (a->freed)
        (*a->freed)++;
    free(a);
}

static api_code run_ok(api_job *job, void *p, json_t **result, api_err *e) {
    run_arg *a = p;
    a->ran = 1;
    api_job_progress(job, "half", 0.5f);
    api_job_progress(job, "back", 0.2f); /* must not lower the progress */
    a->committed = api_job_commit(job);
    *result = json_pack("{s:i}", "x", 1);
    return API_OK;
}

static api_code run_fail(api_job *job, void *p, json_t **result, api_err *e) {
    (void)job;
    ((run_arg *)p)->ran = 1;
    return api_fail(e, API_E_INVALID_LEVEL, "the level has no walkable surface");
}

/* Loops until cancelled (at most 20 s, so a broken cancel fails, not hangs). */
static api_code run_until_cancelled(api_job *job, void *p, json_t **result, api_err *e) {
    run_arg *a = p;
    a->ran = 1;
    for (int i = 0; i < 20000; i++) {
        a->iterations = i + 1;
        if (api_job_progress(job, "spinning", (float)i / 20000.0f))
            break;
        usleep(1000);
    }
    a->committed = api_job_commit(job);
    *result = json_pack("{s:i}", "x", 2);
    return API_OK;
}

/* ---- helpers ---- */

static const char *state_of(api_job *job, char *buf, size_t size) {
    json_t *o = api_job_encode(job);
    snprintf(buf, size, "%s", json_string_value(json_object_get(o, "state")));
    json_decref(o);
    return buf;
}

/* Waits (bounded, 20 s) until the job is in state `want`. */
static void wait_state(api_job *job, const char *want) {
    char buf[32];
    for (int i = 0; i < 20000; i++) {
        if (!strcmp(state_of(job, buf, sizeof buf), want))
            return;
        usleep(1000);
    }
    ck_abort_msg("job never reached state %s (it is %s)", want, state_of(job, buf, sizeof buf));
}

typedef struct end_count {
    pthread_mutex_t lock;
    int calls;
} end_count;

static void on_end(void *ctx, api_job *job) {
    (void)job;
    end_count *c = ctx;
    pthread_mutex_lock(&c->lock);
    c->calls++;
    pthread_mutex_unlock(&c->lock);
}

static int end_calls(end_count *c) {
    pthread_mutex_lock(&c->lock);
    int n = c->calls;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* ---- unit ---- */

START_TEST(t_done) {
    api_jobs *j = api_jobs_new(1, 4, 10);
    atomic_int freed = 0;
    run_arg *a = arg_new(&freed);
    api_job *job = NULL;
    api_err e = {0};
    ck_assert_int_eq(api_jobs_submit(j, "bake", "town", run_ok, arg_free, a, &job, &e), API_OK);
    end_count ec = {PTHREAD_MUTEX_INITIALIZER, 0};
    ck_assert_int_eq(api_job_on_end(job, on_end, &ec), 0);
    wait_state(job, "done");
    json_t *o = api_job_encode(job);
    ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "bake");
    ck_assert_str_eq(json_string_value(json_object_get(o, "target")), "town");
    ck_assert(json_real_value(json_object_get(o, "progress")) == 1.0);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "result"), "x")), 1);
    ck_assert(json_is_null(json_object_get(o, "error")));
    ck_assert(json_is_string(json_object_get(o, "started_at")));
    ck_assert(json_is_string(json_object_get(o, "finished_at")));
    ck_assert(json_integer_value(json_object_get(o, "elapsed_ms")) >= 0);
    json_decref(o);
    /* The waiter ran once; one registered after the end runs at once. */
    for (int i = 0; i < 1000 && end_calls(&ec) == 0; i++)
        usleep(1000);
    ck_assert_int_eq(end_calls(&ec), 1);
    ck_assert_int_eq(api_job_on_end(job, on_end, &ec), 0);
    ck_assert_int_eq(end_calls(&ec), 2);
    /* The run saw its commit accepted; its argument was freed once. */
    ck_assert_int_eq(freed, 1);
    api_job_release(job);
    api_jobs_free(j);
}
END_TEST

START_TEST(t_progress_never_decreases) {
    api_jobs *j = api_jobs_new(1, 4, 10);
    api_job *job = NULL;
    api_err e = {0};
    run_arg *a = arg_new(NULL);
    ck_assert_int_eq(api_jobs_submit(j, "bake", "m", run_until_cancelled, arg_free, a, &job, &e),
                     API_OK);
    wait_state(job, "running");
    /* Reports from outside the run go through the same door. */
    api_job_progress(job, "late", 0.9f);
    api_job_progress(job, "later", 0.1f);
    api_job_progress(job, "nan", 0.0f / 0.0f);
    json_t *o = api_job_encode(job);
    ck_assert(json_real_value(json_object_get(o, "progress")) >= 0.9 - 1e-6);
    ck_assert(json_real_value(json_object_get(o, "progress")) <= 1.0);
    json_decref(o);
    json_t *obj = NULL;
    ck_assert_int_eq(api_jobs_cancel(j, "no-such-job", &obj, &e), API_E_NOT_FOUND);
    ck_assert_ptr_null(obj);
    api_job_release(job);
    api_jobs_free(j); /* cancels the spinning run */
}
END_TEST

START_TEST(t_failed) {
    api_jobs *j = api_jobs_new(1, 4, 10);
    api_job *job = NULL;
    api_err e = {0};
    run_arg *a = arg_new(NULL);
    ck_assert_int_eq(api_jobs_submit(j, "volume", "v", run_fail, arg_free, a, &job, &e), API_OK);
    wait_state(job, "failed");
    json_t *o = api_job_encode(job);
    json_t *err = json_object_get(o, "error");
    ck_assert_str_eq(json_string_value(json_object_get(err, "code")), "invalid_level");
    ck_assert_str_eq(json_string_value(json_object_get(err, "message")),
                     "the level has no walkable surface");
    ck_assert(json_is_null(json_object_get(o, "result")));
    json_decref(o);
    api_job_release(job);
    api_jobs_free(j);
}
END_TEST

START_TEST(t_cancel_running_and_queued) {
    api_jobs *j = api_jobs_new(1, 4, 10);
    api_err e = {0};
    atomic_int freed = 0;
    run_arg *a1 = arg_new(&freed), *a2 = arg_new(&freed);
    api_job *first = NULL, *second = NULL;
    ck_assert_int_eq(api_jobs_submit(j, "bake", "a", run_until_cancelled, arg_free, a1, &first, &e),
                     API_OK);
    ck_assert_int_eq(api_jobs_submit(j, "bake", "b", run_ok, arg_free, a2, &second, &e), API_OK);
    wait_state(first, "running");
    char buf[32];
    ck_assert_str_eq(state_of(second, buf, sizeof buf), "queued"); /* one thread, busy */
    end_count ec = {PTHREAD_MUTEX_INITIALIZER, 0};
    ck_assert_int_eq(api_job_on_end(second, on_end, &ec), 0);

    /* Cancelling the queued job ends it at once; it never runs. */
    char id[API_JOB_ID_MAX];
    json_t *o = api_job_encode(second);
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(o, "id")));
    json_decref(o);
    json_t *obj = NULL;
    ck_assert_int_eq(api_jobs_cancel(j, id, &obj, &e), API_OK);
    ck_assert_str_eq(json_string_value(json_object_get(obj, "state")), "cancelled");
    json_decref(obj);
    ck_assert_int_eq(end_calls(&ec), 1);

    /* Cancelling the running one ends it for its clients at once; the run
       stops at its next progress report and its commit is refused. */
    o = api_job_encode(first);
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(o, "id")));
    json_decref(o);
    ck_assert_int_eq(api_jobs_cancel(j, id, &obj, &e), API_OK);
    ck_assert_str_eq(json_string_value(json_object_get(obj, "state")), "cancelled");
    ck_assert(json_is_null(json_object_get(obj, "result")));
    json_decref(obj);
    /* A second cancel answers the job as it ended. */
    ck_assert_int_eq(api_jobs_cancel(j, id, &obj, &e), API_OK);
    ck_assert_str_eq(json_string_value(json_object_get(obj, "state")), "cancelled");
    json_decref(obj);
    for (int i = 0; i < 5000 && freed < 2; i++)
        usleep(1000);
    ck_assert_int_eq(freed, 2); /* both arguments freed: the queued one without running */
    api_job_release(first);
    api_job_release(second);
    api_jobs_free(j);
}
END_TEST

START_TEST(t_run_sees_cancel) {
    /* The run's side of a cancel: it stops early and api_job_commit says no. */
    api_jobs *j = api_jobs_new(1, 4, 10);
    api_err e = {0};
    run_arg *a = arg_new(NULL);
    api_job *job = NULL;
    ck_assert_int_eq(api_jobs_submit(j, "bake", "a", run_until_cancelled, NULL, a, &job, &e),
                     API_OK);
    wait_state(job, "running");
    json_t *o = api_job_encode(job), *obj = NULL;
    ck_assert_int_eq(api_jobs_cancel(j, json_string_value(json_object_get(o, "id")), &obj, &e),
                     API_OK);
    json_decref(o);
    json_decref(obj);
    for (int i = 0; i < 5000 && a->committed == -1; i++)
        usleep(1000);
    ck_assert_int_eq(a->committed, 0);
    ck_assert_int_lt(a->iterations, 20000);
    api_job_release(job);
    api_jobs_free(j);
    free(a); /* no free function was given: the argument is ours */
}
END_TEST

START_TEST(t_limit) {
    api_jobs *j = api_jobs_new(1, 2, 10);
    api_err e = {0};
    api_job *x = NULL, *y = NULL, *z = NULL;
    atomic_int freed = 0;
    ck_assert_int_eq(
        api_jobs_submit(j, "bake", "a", run_until_cancelled, arg_free, arg_new(&freed), &x, &e),
        API_OK);
    ck_assert_int_eq(
        api_jobs_submit(j, "bake", "b", run_until_cancelled, arg_free, arg_new(&freed), &y, &e),
        API_OK);
    ck_assert_int_eq(api_jobs_active(j), 2);
    ck_assert_int_eq(api_jobs_submit(j, "bake", "c", run_ok, arg_free, arg_new(&freed), &z, &e),
                     API_E_UNAVAILABLE);
    ck_assert_ptr_null(z);
    ck_assert_msg(strstr(e.message, "--max-queued-jobs") && strstr(e.message, "limit is 2"), "%s",
                  e.message);
    ck_assert_int_eq(freed, 1); /* the refused job's argument */
    api_job_release(x);
    api_job_release(y);
    api_jobs_free(j); /* cancels both */
    ck_assert_int_eq(freed, 3);
}
END_TEST

START_TEST(t_keep_newest_first) {
    api_jobs *j = api_jobs_new(1, 8, 2);
    api_err e = {0};
    char ids[4][API_JOB_ID_MAX];
    for (int i = 0; i < 4; i++) {
        api_job *job = NULL;
        char target[8];
        snprintf(target, sizeof target, "t%d", i & 7);
        ck_assert_int_eq(
            api_jobs_submit(j, "bake", target, run_ok, arg_free, arg_new(NULL), &job, &e), API_OK);
        wait_state(job, "done");
        json_t *o = api_job_encode(job);
        snprintf(ids[i], sizeof ids[i], "%s", json_string_value(json_object_get(o, "id")));
        json_decref(o);
        api_job_release(job);
    }
    json_t *list = api_jobs_list(j);
    json_t *arr = json_object_get(list, "jobs");
    ck_assert_uint_eq(json_array_size(arr), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(arr, 0), "target")), "t3");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(arr, 1), "target")), "t2");
    json_decref(list);
    api_job *gone = api_jobs_get(j, ids[0]);
    ck_assert_ptr_null(gone);
    api_job *kept = api_jobs_get(j, ids[3]);
    ck_assert_ptr_nonnull(kept);
    api_job_release(kept);
    /* Ids are distinct and carry the process's nonce. */
    ck_assert_str_ne(ids[2], ids[3]);
    ck_assert(strncmp(ids[2], ids[3], 8) == 0);
    api_jobs_free(j);
}
END_TEST

START_TEST(t_free_cancels_and_wakes) {
    api_jobs *j = api_jobs_new(1, 4, 10);
    api_err e = {0};
    api_job *x = NULL, *y = NULL;
    atomic_int freed = 0;
    ck_assert_int_eq(
        api_jobs_submit(j, "bake", "a", run_until_cancelled, arg_free, arg_new(&freed), &x, &e),
        API_OK);
    ck_assert_int_eq(api_jobs_submit(j, "bake", "b", run_ok, arg_free, arg_new(&freed), &y, &e),
                     API_OK);
    end_count ec = {PTHREAD_MUTEX_INITIALIZER, 0};
    ck_assert_int_eq(api_job_on_end(x, on_end, &ec), 0);
    ck_assert_int_eq(api_job_on_end(y, on_end, &ec), 0);
    api_jobs_shutdown(j);
    ck_assert_int_eq(end_calls(&ec), 2);
    ck_assert_int_eq(freed, 2);
    char buf[32];
    ck_assert_str_eq(state_of(x, buf, sizeof buf), "cancelled");
    ck_assert_str_eq(state_of(y, buf, sizeof buf), "cancelled");
    /* After shutdown nothing new is taken. */
    api_job *z = NULL;
    ck_assert_int_eq(api_jobs_submit(j, "bake", "c", run_ok, arg_free, arg_new(&freed), &z, &e),
                     API_E_UNAVAILABLE);
    ck_assert_msg(strstr(e.message, "shutting down"), "%s", e.message);
    api_job_release(x);
    api_job_release(y);
    api_jobs_free(j);
}
END_TEST

/* ---- over HTTP ---- */

/* Wound counter-clockwise seen from above, so its top is a floor. */
#define FLOOR_LEVEL                                                                                \
    "{\"vertices\":[[0,0,0],[10,0,0],[10,0,10],[0,0,10]],\"triangles\":[[0,3,2],[0,2,1]]}"
/* A wall only: nothing faces up, so nothing is walkable for any agent. */
#define WALL_LEVEL                                                                                 \
    "{\"vertices\":[[0,0,0],[10,0,0],[10,5,0],[0,5,0]],\"triangles\":[[0,1,2],[0,2,3]]}"

static th_server srv;

static void put_level(const char *name, const char *body) {
    char path[96];
    snprintf(path, sizeof path, "/v1/levels/%s", name);
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "PUT", path, body, &r), 0);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    th_response_free(&r);
}

/* Sends a request and checks the status and that the body holds `has`. */
static void expect(const char *method, const char *path, const char *body, int status,
                   const char *has) {
    th_response r;
    ck_assert_int_eq(th_json(srv.port, method, path, body, &r), 0);
    ck_assert_msg(r.status == status && (!has || strstr(r.body, has)), "%s %s %s: %d %s", method,
                  path, body ? body : "", r.status, r.body);
    th_response_free(&r);
}

START_TEST(t_http_refusals_change_nothing) {
    ck_assert_int_eq(th_start(&srv, NULL, NULL), 0);
    put_level("floor", FLOOR_LEVEL);
    const char *bake = "/v1/navmeshes/m/bake";
    expect("POST", bake, "{}", 400, "level is required");
    expect("POST", bake, "[]", 400, "must be a JSON object");
    expect("POST", bake, "{\"level\":\"nope\"}", 404, "level 'nope' does not exist");
    expect("POST", bake, "{\"level\":\"floor\",\"cell_size\":-1}", 400, "cell_size");
    expect("POST", bake, "{\"level\":\"floor\",\"cell_size\":\"x\"}", 400, "cell_size");
    expect("POST", bake, "{\"level\":\"floor\",\"cell_height\":0}", 400, "cell_height");
    expect("POST", bake, "{\"level\":\"floor\",\"profiles\":[]}", 400,
           "profiles must be an object");
    expect("POST", bake, "{\"level\":\"floor\",\"profiles\":{}}", 400,
           "profiles must be an object");
    expect("POST", bake, "{\"level\":\"floor\",\"profiles\":{\"a b\":{}}}", 400, "a profile named");
    expect("POST", bake, "{\"level\":\"floor\",\"profiles\":{\"big\":{\"radius\":-2}}}", 400,
           "profiles.big.radius");
    expect("POST", bake, "{\"level\":\"floor\",\"profiles\":{\"big\":{\"links\":{\"drop\":true}}}}",
           400, "profiles.big.links.drop");
    expect("POST", bake, "{\"level\":\"floor\",\"partition\":\"fast\"}", 400, "partition must be");
    expect("POST", bake,
           "{\"level\":\"floor\",\"area_volumes\":[{\"xz\":[[0,0],[1,0]],\"ymin\":0,"
           "\"ymax\":1,\"area\":2}]}",
           400, "area_volumes[0].xz");
    expect("POST", bake,
           "{\"level\":\"floor\",\"area_volumes\":[{\"xz\":[[0,0],[1,0],[1,1]],"
           "\"ymin\":0,\"ymax\":1,\"area\":64}]}",
           400, "area_volumes[0].area");
    expect("POST", "/v1/navmeshes/m/bake?wait=maybe", "{\"level\":\"floor\"}", 400, "wait must be");
    expect("POST", "/v1/navmeshes/bad%20name/bake", "{\"level\":\"floor\"}", 400, NULL);
    /* nothing was queued or created */
    expect("GET", "/v1/jobs", NULL, 200, "{\"jobs\":[]}");
    expect("GET", "/v1/navmeshes/m", NULL, 404, "not_found");
    expect("GET", "/v1/jobs/zzz", NULL, 404, "job 'zzz' does not exist");
    expect("DELETE", "/v1/jobs/zzz", NULL, 404, "job 'zzz' does not exist");
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

/* The job id in a job object. */
static void job_id(const char *body, char *id, size_t size) {
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    snprintf(id, size, "%s", json_string_value(json_object_get(j, "id")));
    json_decref(j);
}

START_TEST(t_http_job_fails_without_walkable) {
    ck_assert_int_eq(th_start(&srv, NULL, NULL), 0);
    put_level("wall", WALL_LEVEL);
    /* ?wait=true: the request answers when the job has ended */
    th_response r;
    ck_assert_int_eq(
        th_json(srv.port, "POST", "/v1/navmeshes/m/bake?wait=true", "{\"level\":\"wall\"}", &r), 0);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_msg(r.status == 200 && j, "%d %s", r.status, r.body);
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "failed");
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "bake");
    ck_assert_str_eq(json_string_value(json_object_get(j, "target")), "m");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
                     "invalid_level");
    ck_assert(json_is_null(json_object_get(j, "result")));
    json_decref(j);
    th_response_free(&r);

    /* without wait: 202 at once, then the job is watched until it ends */
    ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/m/bake", "{\"level\":\"wall\"}", &r),
                     0);
    ck_assert_msg(r.status == 202 && strstr(r.body, "\"kind\":\"bake\""), "%d %s", r.status,
                  r.body);
    char id[64], path[96];
    job_id(r.body, id, sizeof id);
    th_response_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    int ended = 0;
    for (int i = 0; i < 2000 && !ended; i++) {
        ck_assert_int_eq(th_json(srv.port, "GET", path, NULL, &r), 0);
        ck_assert_int_eq(r.status, 200);
        ended = strstr(r.body, "\"state\":\"failed\"") != NULL;
        ck_assert_msg(ended || strstr(r.body, "\"state\":\"queued\"") ||
                          strstr(r.body, "\"state\":\"running\""),
                      "%s", r.body);
        th_response_free(&r);
        if (!ended)
            usleep(5000);
    }
    ck_assert(ended);
    /* listed newest first; the navmesh was never created */
    ck_assert_int_eq(th_json(srv.port, "GET", "/v1/jobs", NULL, &r), 0);
    j = json_loads(r.body, 0, NULL);
    json_t *arr = json_object_get(j, "jobs");
    ck_assert_uint_eq(json_array_size(arr), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(arr, 0), "id")), id);
    json_decref(j);
    th_response_free(&r);
    expect("GET", "/v1/navmeshes/m", NULL, 404, "not_found");
    /* cancelling a job that has ended answers it as it ended */
    expect("DELETE", path, NULL, 200, "\"state\":\"failed\"");
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

START_TEST(t_http_auth) {
    const char *args[] = {"--api-key", "sesame", NULL};
    ck_assert_int_eq(th_start(&srv, NULL, args), 0);
    expect("POST", "/v1/navmeshes/m/bake", "{\"level\":\"wall\"}", 401, "unauthorized");
    expect("DELETE", "/v1/jobs/zzz", NULL, 401, "unauthorized");
    expect("GET", "/v1/jobs", NULL, 200, "\"jobs\"");
    th_stop(&srv);
    th_cleanup(&srv);
}
END_TEST

Suite *jobs_suite(void) {
    Suite *s = suite_create("jobs");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, t_done);
    tcase_add_test(tc, t_progress_never_decreases);
    tcase_add_test(tc, t_failed);
    tcase_add_test(tc, t_cancel_running_and_queued);
    tcase_add_test(tc, t_run_sees_cancel);
    tcase_add_test(tc, t_limit);
    tcase_add_test(tc, t_keep_newest_first);
    tcase_add_test(tc, t_free_cancels_and_wakes);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("http");
    tcase_set_timeout(th, 60);
    tcase_add_test(th, t_http_refusals_change_nothing);
    tcase_add_test(th, t_http_job_fails_without_walkable);
    tcase_add_test(th, t_http_auth);
    suite_add_tcase(s, th);
    return s;
}
