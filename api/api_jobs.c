/*
 * api_jobs: the job table and the bake threads (see api_jobs.h).
 *
 * One mutex guards every job's mutable fields, the queue and the list; the
 * work itself (a bake of seconds) runs without it. Jobs are reference
 * counted: the list holds one reference, a running thread one, and every
 * client lookup one, so a job pruned from the list while a client still
 * reads it stays valid. Waiters (a request blocked on ?wait=true) are
 * called outside the lock, on the thread that ended the job.
 */
#include "api/api_jobs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/api_codec.h"
#include "api/api_json.h"

typedef enum job_state { J_QUEUED, J_RUNNING, J_DONE, J_FAILED, J_CANCELLED } job_state;

static const char *const state_names[] = {"queued", "running", "done", "failed", "cancelled"};

typedef struct waiter {
    api_job_end_fn fn;
    void *ctx;
    struct waiter *next;
} waiter;

struct api_job {
    api_jobs *owner;
    atomic_uint refs;
    char id[API_JOB_ID_MAX];
    char kind[16];
    char target[66];
    api_job_run_fn run;
    api_job_free_fn free_arg;
    void *arg;
    /* Guarded by owner->lock from here on. */
    job_state state;
    const char *stage; /* static text */
    float progress;
    int cancel;     /* the run should stop */
    int committing; /* api_job_commit said yes: no cancelling any more */
    int64_t created_ms, started_ms, finished_ms;
    double started_s, finished_s; /* monotonic, for elapsed_ms */
    json_t *result;
    api_err err;
    waiter *waiters;
    struct api_job *qnext;
};

struct api_jobs {
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* a job was queued, or stopping */
    pthread_cond_t ended; /* a job ended (for a cancel racing a commit) */
    api_job **list;       /* listed jobs, oldest first (one reference each) */
    size_t n, cap;
    api_job *qhead, *qtail;
    unsigned active; /* queued + running (a cancelled run still winding down counts) */
    unsigned max_active, keep;
    int stop;
    int joined; /* the bake threads have been joined */
    uint32_t nonce;
    uint64_t counter;
    unsigned nthreads;
    pthread_t threads[];
};

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void api_job_release(api_job *job) {
    if (!job || atomic_fetch_sub_explicit(&job->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (job->arg && job->free_arg)
        job->free_arg(job->arg);
    json_decref(job->result);
    for (waiter *w = job->waiters; w;) {
        waiter *next = w->next;
        free(w);
        w = next;
    }
    free(job);
}

static int ended(const api_job *job) {
    return job->state == J_DONE || job->state == J_FAILED || job->state == J_CANCELLED;
}

/*
 * Ends a job in state st (lock held): stamps the time, takes its waiters
 * (returned, to be called once the lock is dropped), and drops the oldest
 * finished jobs beyond --jobs-kept from the list.
 */
static waiter *finish_locked(api_jobs *j, api_job *job, job_state st) {
    job->state = st;
    job->finished_ms = wall_ms();
    job->finished_s = mono_s();
    waiter *w = job->waiters;
    job->waiters = NULL;
    pthread_cond_broadcast(&j->ended);
    size_t done = 0;
    for (size_t i = 0; i < j->n; i++)
        done += ended(j->list[i]);
    for (size_t i = 0; i < j->n && done > j->keep;) {
        if (ended(j->list[i])) {
            api_job_release(j->list[i]);
            memmove(&j->list[i], &j->list[i + 1], (j->n - i - 1) * sizeof *j->list);
            j->n--;
            done--;
        } else {
            i++;
        }
    }
    return w;
}

/* Calls and frees the waiters taken by finish_locked (lock not held). */
static void wake_waiters(waiter *w, api_job *job) {
    while (w) {
        waiter *next = w->next;
        w->fn(w->ctx, job);
        free(w);
        w = next;
    }
}

static void *bake_main(void *arg) {
    api_jobs *j = arg;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (!j->qhead && !j->stop)
            pthread_cond_wait(&j->wake, &j->lock);
        api_job *job = j->qhead;
        if (!job)
            break; /* stopping, nothing queued */
        j->qhead = job->qnext;
        if (!j->qhead)
            j->qtail = NULL;
        job->state = J_RUNNING;
        job->started_ms = wall_ms();
        job->started_s = mono_s();
        atomic_fetch_add(&job->refs, 1);
        pthread_mutex_unlock(&j->lock);

        json_t *result = NULL;
        api_err e = {0};
        api_code c = job->run(job, job->arg, &result, &e);
        if (job->free_arg)
            job->free_arg(job->arg);
        job->arg = NULL;

        pthread_mutex_lock(&j->lock);
        waiter *w = NULL;
        if (job->state == J_CANCELLED) {
            json_decref(result); /* ended for its clients when it was cancelled */
        } else if (c == API_OK) {
            job->result = result;
            w = finish_locked(j, job, J_DONE);
        } else {
            json_decref(result);
            job->err = e;
            w = finish_locked(j, job, J_FAILED);
        }
        j->active--;
        pthread_mutex_unlock(&j->lock);
        wake_waiters(w, job);
        api_job_release(job);
        pthread_mutex_lock(&j->lock);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

api_jobs *api_jobs_new(unsigned threads, unsigned max_active, unsigned keep) {
    if (threads == 0)
        threads = 1;
    api_jobs *j = calloc(1, sizeof *j + threads * sizeof j->threads[0]);
    if (!j)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->wake, NULL);
    pthread_cond_init(&j->ended, NULL);
    j->max_active = max_active ? max_active : 1;
    j->keep = keep;
    /* Ids carry a per-process nonce: a client holding an id from before a
       restart gets 404, never another job that happens to have its number. */
    if (getrandom(&j->nonce, sizeof j->nonce, 0) != (ssize_t)sizeof j->nonce)
        j->nonce = (uint32_t)wall_ms() ^ (uint32_t)(uintptr_t)j;
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&j->threads[i], NULL, bake_main, j) != 0)
            break;
        j->nthreads++;
    }
    if (j->nthreads == 0) {
        api_jobs_free(j);
        return NULL;
    }
    return j;
}

/* Marks job cancelled (lock held) unless it has ended or is publishing;
   returns its waiters to wake, and whether it is cancelled now. */
static waiter *cancel_locked(api_jobs *j, api_job *job, int *cancelled) {
    *cancelled = 0;
    if (ended(job) || job->committing)
        return NULL;
    job->cancel = 1;
    *cancelled = 1;
    if (job->state == J_QUEUED) {
        api_job **pp = &j->qhead;
        api_job *prev = NULL;
        while (*pp && *pp != job) {
            prev = *pp;
            pp = &(*pp)->qnext;
        }
        if (*pp) {
            *pp = job->qnext;
            if (j->qtail == job)
                j->qtail = prev;
        }
        j->active--; /* no thread will take it */
        /* Nothing will run it: its argument (a level, a bake's settings)
           is freed now rather than when the last client lets go. */
        if (job->free_arg && job->arg)
            job->free_arg(job->arg);
        job->arg = NULL;
    }
    return finish_locked(j, job, J_CANCELLED);
}

void api_jobs_shutdown(api_jobs *j) {
    if (!j || j->joined)
        return;
    pthread_mutex_lock(&j->lock);
    j->stop = 1;
    /* Each cancel may prune the list, so walk it again after each. */
    for (;;) {
        api_job *victim = NULL;
        for (size_t i = 0; i < j->n && !victim; i++)
            if (!ended(j->list[i]) && !j->list[i]->committing)
                victim = j->list[i];
        if (!victim)
            break;
        atomic_fetch_add(&victim->refs, 1);
        int cancelled;
        waiter *w = cancel_locked(j, victim, &cancelled);
        pthread_mutex_unlock(&j->lock);
        wake_waiters(w, victim);
        api_job_release(victim);
        pthread_mutex_lock(&j->lock);
    }
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    for (unsigned i = 0; i < j->nthreads; i++)
        pthread_join(j->threads[i], NULL);
    j->joined = 1;
}

void api_jobs_free(api_jobs *j) {
    if (!j)
        return;
    api_jobs_shutdown(j);
    for (size_t i = 0; i < j->n; i++)
        api_job_release(j->list[i]);
    free(j->list);
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->ended);
    free(j);
}

api_code api_jobs_submit(api_jobs *j, const char *kind, const char *target, api_job_run_fn run,
                         api_job_free_fn free_arg, void *arg, api_job **out, api_err *e) {
    *out = NULL;
    api_job *job = calloc(1, sizeof *job);
    if (!job) {
        if (free_arg)
            free_arg(arg);
        return api_fail(e, API_E_UNAVAILABLE, "out of memory for the job; retry later");
    }
    job->owner = j;
    atomic_init(&job->refs, 2); /* the list's and the caller's */
    snprintf(job->kind, sizeof job->kind, "%s", kind);
    snprintf(job->target, sizeof job->target, "%s", target);
    job->run = run;
    job->free_arg = free_arg;
    job->arg = arg;
    job->state = J_QUEUED;
    job->stage = "queued";
    job->created_ms = wall_ms();
    pthread_mutex_lock(&j->lock);
    api_code refused = API_OK;
    if (j->stop)
        refused = api_fail(e, API_E_UNAVAILABLE, "the service is shutting down; retry");
    else if (j->active >= j->max_active)
        refused = api_fail(e, API_E_UNAVAILABLE,
                           "too many jobs are queued or running (the limit is %u, "
                           "--max-queued-jobs); retry later",
                           j->max_active);
    else if (j->n == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 32;
        api_job **list = realloc(j->list, cap * sizeof *list);
        if (!list)
            refused = api_fail(e, API_E_UNAVAILABLE, "out of memory for the job; retry later");
        else {
            j->list = list;
            j->cap = cap;
        }
    }
    if (refused != API_OK) {
        pthread_mutex_unlock(&j->lock);
        api_job_release(job); /* frees arg too */
        api_job_release(job);
        return refused;
    }
    snprintf(job->id, sizeof job->id, "%08x-%06llu", (unsigned)j->nonce,
             (unsigned long long)++j->counter);
    j->list[j->n++] = job;
    if (j->qtail)
        j->qtail->qnext = job;
    else
        j->qhead = job;
    j->qtail = job;
    j->active++;
    pthread_cond_signal(&j->wake);
    pthread_mutex_unlock(&j->lock);
    *out = job;
    return API_OK;
}

int api_job_progress(void *ctx, const char *stage, float progress) {
    api_job *job = ctx;
    api_jobs *j = job->owner;
    pthread_mutex_lock(&j->lock);
    int stop = job->cancel;
    if (!stop && !ended(job)) {
        if (stage)
            job->stage = stage;
        float p = progress >= 0 ? (progress <= 1 ? progress : 1) : 0; /* NaN reads as 0 */
        if (p > job->progress)
            job->progress = p;
    }
    pthread_mutex_unlock(&j->lock);
    return stop;
}

int api_job_commit(api_job *job) {
    api_jobs *j = job->owner;
    pthread_mutex_lock(&j->lock);
    int ok = !job->cancel && !ended(job);
    if (ok)
        job->committing = 1;
    pthread_mutex_unlock(&j->lock);
    return ok;
}

api_job *api_jobs_get(api_jobs *j, const char *id) {
    api_job *found = NULL;
    pthread_mutex_lock(&j->lock);
    for (size_t i = 0; i < j->n && !found; i++)
        if (strcmp(j->list[i]->id, id) == 0) {
            found = j->list[i];
            atomic_fetch_add(&found->refs, 1);
        }
    pthread_mutex_unlock(&j->lock);
    return found;
}

static json_t *time_or_null(int64_t ms) {
    if (!ms)
        return json_null();
    char buf[40];
    api_format_time(ms, buf, sizeof buf);
    return json_string(buf);
}

/* The job object (lock held). */
static json_t *encode_locked(const api_job *job) {
    double elapsed = 0;
    if (job->started_s > 0)
        elapsed = ((job->finished_s > 0 ? job->finished_s : mono_s()) - job->started_s) * 1e3;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(job->id));
    json_object_set_new(o, "kind", json_string(job->kind));
    json_object_set_new(o, "target", json_string(job->target));
    json_object_set_new(o, "state", json_string(state_names[job->state]));
    json_object_set_new(o, "stage", json_string(job->state == J_DONE ? "done" : job->stage));
    json_object_set_new(o, "progress",
                        api_json_num(job->state == J_DONE ? 1.0 : (double)job->progress));
    json_object_set_new(o, "created_at", time_or_null(job->created_ms));
    json_object_set_new(o, "started_at", time_or_null(job->started_ms));
    json_object_set_new(o, "finished_at", time_or_null(job->finished_ms));
    json_object_set_new(o, "elapsed_ms", json_integer((json_int_t)(elapsed + 0.5)));
    json_object_set_new(o, "result", job->result ? json_deep_copy(job->result) : json_null());
    if (job->state == J_FAILED)
        json_object_set_new(o, "error",
                            json_pack("{s:s,s:s}", "code", api_code_name(job->err.code), "message",
                                      job->err.message));
    else
        json_object_set_new(o, "error", json_null());
    return o;
}

json_t *api_job_encode(api_job *job) {
    pthread_mutex_lock(&job->owner->lock);
    json_t *o = encode_locked(job);
    pthread_mutex_unlock(&job->owner->lock);
    return o;
}

json_t *api_jobs_list(api_jobs *j) {
    json_t *arr = json_array();
    pthread_mutex_lock(&j->lock);
    for (size_t i = j->n; i-- > 0;)
        json_array_append_new(arr, encode_locked(j->list[i]));
    pthread_mutex_unlock(&j->lock);
    return json_pack("{s:o}", "jobs", arr);
}

api_code api_jobs_cancel(api_jobs *j, const char *id, json_t **obj, api_err *e) {
    *obj = NULL;
    api_job *job = api_jobs_get(j, id);
    if (!job)
        return api_fail(e, API_E_NOT_FOUND, "job '%s' does not exist", id);
    pthread_mutex_lock(&j->lock);
    int cancelled;
    waiter *w = cancel_locked(j, job, &cancelled);
    /* Publishing takes milliseconds: answer with how it ended. */
    while (!cancelled && job->committing && !ended(job))
        pthread_cond_wait(&j->ended, &j->lock);
    *obj = encode_locked(job);
    pthread_mutex_unlock(&j->lock);
    wake_waiters(w, job);
    api_job_release(job);
    return API_OK;
}

int api_job_on_end(api_job *job, api_job_end_fn fn, void *ctx) {
    waiter *w = malloc(sizeof *w);
    if (!w)
        return -1;
    w->fn = fn;
    w->ctx = ctx;
    pthread_mutex_lock(&job->owner->lock);
    int now = ended(job);
    if (!now) {
        w->next = job->waiters;
        job->waiters = w;
    }
    pthread_mutex_unlock(&job->owner->lock);
    if (now) {
        fn(ctx, job);
        free(w);
    }
    return 0;
}

unsigned api_jobs_active(api_jobs *j) {
    pthread_mutex_lock(&j->lock);
    unsigned n = j->active;
    pthread_mutex_unlock(&j->lock);
    return n;
}
