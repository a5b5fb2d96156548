/*
 * api_jobs_http: GET /v1/jobs, GET /v1/jobs/{id} and DELETE /v1/jobs/{id}
 * (cancel), the contract's "Jobs". The jobs themselves are api_jobs.c's;
 * these handlers only look them up and encode them.
 */
#include <string.h>

#include "api/api_internal.h"
#include "api/api_jobs.h"
#include "api/api_json.h"

void api_h_job_list(api_req *r) {
    api_reply_json(r, API_OK, api_jobs_list(api_req_jobs(r)));
}

void api_h_job_get(api_req *r) {
    api_job *job = api_jobs_get(api_req_jobs(r), api_req_name(r));
    if (!job) {
        api_reply_fail(r, API_E_NOT_FOUND, "job '%s' does not exist", api_req_name(r));
        return;
    }
    api_reply_json(r, API_OK, api_job_encode(job));
    api_job_release(job);
}

void api_h_job_delete(api_req *r) {
    json_t *obj = NULL;
    api_err e = {0};
    if (api_jobs_cancel(api_req_jobs(r), api_req_name(r), &obj, &e) != API_OK)
        api_reply_error(r, &e);
    else
        api_reply_json(r, API_OK, obj);
}

json_t *api_job_request(api_req *r, int *wait, const char **level) {
    const char *w = api_req_arg(r, "wait");
    if (w && strcmp(w, "true") && strcmp(w, "false")) {
        api_reply_fail(r, API_E_BAD_REQUEST, "wait must be true or false");
        return NULL;
    }
    *wait = w && !strcmp(w, "true");
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    api_err e = {0};
    json_t *root = api_json_parse(body, len, &e);
    if (!root) {
        api_reply_error(r, &e);
        return NULL;
    }
    *level = NULL;
    if (!json_is_object(root))
        api_fail(&e, API_E_BAD_REQUEST, "the request body must be a JSON object");
    else if (!(*level = json_string_value(json_object_get(root, "level"))))
        api_fail(&e, API_E_BAD_REQUEST, "level is required: the name of a stored level");
    else if (!api_profile_name_ok(*level))
        api_fail(&e, API_E_BAD_REQUEST, "level must be a level name (1-64 of A-Z a-z 0-9 _ . -)");
    else
        return root;
    json_decref(root);
    api_reply_error(r, &e);
    return NULL;
}

void api_job_start(api_req *r, int wait, const char *kind, api_job_run_fn run,
                   api_job_free_fn free_arg, void *arg) {
    api_job *job = NULL;
    api_err e = {0};
    if (api_jobs_submit(api_req_jobs(r), kind, api_req_name(r), run, free_arg, arg, &job, &e) !=
        API_OK) {
        api_reply_error(r, &e);
        return;
    }
    if (wait) {
        api_req_wait_job(r, job); /* takes the reference */
        return;
    }
    api_reply_json(r, API_ACCEPTED, api_job_encode(job));
    api_job_release(job);
}
