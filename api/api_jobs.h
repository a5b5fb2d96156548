/*
 * api_jobs: long work (navmesh bakes, flight-volume bakes) as jobs that run
 * on their own threads, never on the HTTP workers or the query pool, and
 * that clients watch and cancel over HTTP (GET/DELETE /v1/jobs/{id}).
 *
 * A job is queued, then running on one of --max-concurrent-bakes bake
 * threads, then done, failed or cancelled. It reports a stage and a
 * progress that never decreases. Cancelling a queued job ends it at once;
 * cancelling a running one ends it at once for the client too (state
 * "cancelled"), and the run, which polls api_job_progress, stops soon after
 * and never publishes: a run asks api_job_commit before it changes anything
 * visible, and a cancelled job's commit is refused. So a cancelled job
 * leaves its target unchanged, as the contract says.
 *
 * Jobs live in memory only: after a restart they are gone, their targets
 * unchanged. The most recent --jobs-kept finished jobs stay listed.
 */
#ifndef API_JOBS_H
#define API_JOBS_H

#include <jansson.h>
#include <stdint.h>

#include "api/api_error.h"

typedef struct api_jobs api_jobs;
typedef struct api_job api_job;

#define API_JOB_ID_MAX 24 /* bytes of a job id, with the NUL */

/*
 * A job's work, run on a bake thread. Report progress with
 * api_job_progress (it says when to stop); call api_job_commit right
 * before publishing anything and publish only when it returns 1. Return
 * API_OK with *result set (the target's metadata, stolen), or an error
 * code with e filled. What a cancelled job returns is dropped.
 */
typedef api_code (*api_job_run_fn)(api_job *job, void *arg, json_t **result, api_err *e);
/* Frees a job's argument (after the run, or when the job never runs). */
typedef void (*api_job_free_fn)(void *arg);

/*
 * Starts `threads` bake threads (>= 1). max_active bounds the jobs queued
 * or running at once (a submit beyond is refused with 503); keep is how
 * many finished jobs stay listed. NULL when threads cannot start.
 */
api_jobs *api_jobs_new(unsigned threads, unsigned max_active, unsigned keep);
/*
 * Cancels every unfinished job (their waiters are called), refuses new
 * ones with 503 and joins the bake threads. Jobs stay readable until
 * api_jobs_free. Idempotent.
 */
void api_jobs_shutdown(api_jobs *j);
/* api_jobs_shutdown, then frees the table. Release every job reference first. NULL: no-op. */
void api_jobs_free(api_jobs *j);

/*
 * Queues a job of `kind` ("bake", "volume") on `target` (a name). Takes
 * arg: freed with free_arg whatever happens. On success *out is the job
 * with a reference taken (api_job_release), state "queued" or later.
 */
api_code api_jobs_submit(api_jobs *j, const char *kind, const char *target, api_job_run_fn run,
                         api_job_free_fn free_arg, void *arg, api_job **out, api_err *e);

/*
 * The progress callback of a running job (the shape nav/'s bake progress
 * callbacks take, with job as ctx): records stage (a static string) and
 * progress (clamped to [0, 1] and never below what was reported before).
 * Returns nonzero once the job has been cancelled: the run should stop.
 */
int api_job_progress(void *job, const char *stage, float progress);

/*
 * Asks to publish the result: 1 when the job may (it can no longer be
 * cancelled), 0 when it was cancelled (publish nothing).
 */
int api_job_commit(api_job *job);

/* The job with id and a reference taken, or NULL. */
api_job *api_jobs_get(api_jobs *j, const char *id);
void api_job_release(api_job *job);
/* The job object of the contract ({"id", "kind", "target", "state", ...}). */
json_t *api_job_encode(api_job *job);
/* Every listed job, newest first, as {"jobs": [...]}. */
json_t *api_jobs_list(api_jobs *j);

/*
 * Cancels a queued or running job. A job that has already ended (or is
 * publishing its result at that moment, which takes milliseconds) is left
 * as it ended. *obj is the job object afterwards. API_E_NOT_FOUND for an
 * unknown id.
 */
api_code api_jobs_cancel(api_jobs *j, const char *id, json_t **obj, api_err *e);

/*
 * Calls fn(ctx, job) exactly once when the job has ended: at once, on
 * this thread, when it already has; else on the thread that ends it.
 * Returns 0, or -1 when out of memory (fn is then never called).
 */
typedef void (*api_job_end_fn)(void *ctx, api_job *job);
int api_job_on_end(api_job *job, api_job_end_fn fn, void *ctx);

/* Jobs queued or running now (for /metrics and /health). */
unsigned api_jobs_active(api_jobs *j);

#endif
