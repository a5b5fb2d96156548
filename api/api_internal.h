/*
 * api_internal: what api/ files share and nothing outside api/ sees: the
 * per-request state handed to handlers, the reply functions, the server's
 * read-only configuration and the route ids.
 *
 * A handler reads its inputs from api_req (path name, query arguments,
 * body), calls nav_ / the registry, and answers with exactly one api_reply_*
 * call. It never picks an HTTP status: api_code does (api_error.h).
 */
#ifndef API_INTERNAL_H
#define API_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <sys/socket.h>
#include <stdint.h>
#include <time.h>

#include "api/api.h"
#include "api/api_error.h"
#include "api/api_jobs.h"
#include "api/api_registry.h"
#include "api/api_routes.h"

/* Route flags checked by the dispatcher. */
enum {
    API_R_AUTH = 1u << 0,  /* write route: needs the API key when one is configured */
    API_R_JSON = 1u << 1,  /* body required, application/json */
    API_R_MESH = 1u << 2,  /* body required, application/json, model/obj or text/plain */
    API_R_WRITE = 1u << 3, /* runs on the writer thread, off the HTTP workers (api_server.c) */
    API_R_POOL = 1u << 4   /* work grows with the request: runs on the query pool (api_server.c) */
};

typedef enum api_route_id {
#define API_ROUTE_ENUM(id, method, pattern, handler, flags) API_ROUTE_##id,
    API_ROUTE_LIST(API_ROUTE_ENUM)
#undef API_ROUTE_ENUM
        API_ROUTE_COUNT
} api_route_id;

/* Media type of the request body as the dispatcher classified it. */
typedef enum api_body_type { API_BODY_NONE = 0, API_BODY_JSON, API_BODY_OBJ } api_body_type;

typedef struct api_server api_server;
typedef struct api_req api_req;

typedef void (*api_handler)(api_req *r);

#define API_ROUTE_DECLARE(id, method, pattern, handler, flags) void handler(api_req *r);
API_ROUTE_LIST(API_ROUTE_DECLARE)
#undef API_ROUTE_DECLARE

/* ---- request accessors (valid during the handler) ---- */
/* The server's configuration (read-only). */
const api_config *api_req_config(const api_req *r);
/* CLOCK_MONOTONIC seconds at which this request's compute budget ends
   (--request-deadline-ms after its handler started), 0 when none. */
double api_req_deadline(const api_req *r);
/* Now, on the clock api_req_deadline uses. */
double api_mono_now(void);
/* The navmesh registry. */
api_registry *api_req_registry(const api_req *r);
/* Requests between their first callback and completion, this one included. */
unsigned api_req_in_flight(const api_req *r);
/* Navmesh writes admitted and not yet finished (queued + running). */
unsigned api_req_writes_pending(const api_req *r);
/* The validated {name} path segment, or "" when the route has none. */
const char *api_req_name(const api_req *r);
/* The request body (NUL-terminated, len excludes the NUL) and its type. */
const char *api_req_body(const api_req *r, size_t *len, api_body_type *type);
/* A query-string argument, or NULL. */
const char *api_req_arg(const api_req *r, const char *key);

/*
 * Looks up the {name} navmesh with a reference taken (release it with
 * api_entry_release), or replies 404 not_found and returns NULL.
 */
api_entry *api_req_mesh(api_req *r);

/* The server's jobs (bakes). */
api_jobs *api_req_jobs(const api_req *r);
/* The server's flight volumes (api_volume.h). */
struct api_volumes;
struct api_volumes *api_req_volumes(const api_req *r);
/*
 * Answers r when job ends instead of now: the handler (on an API_R_POOL
 * route) calls this instead of replying, and r is answered 200 with the
 * job object as it ended. Takes a reference to job.
 */
void api_req_wait_job(api_req *r, api_job *job);

/*
 * The start of a POST that queues a job on a stored level (a navmesh or a
 * volume bake, api_jobs_http.c): ?wait (true or false), a JSON object body
 * and its "level" (a level name). Returns the body (json_decref it) with
 * *level borrowed from it, or NULL once answered with the 400.
 */
json_t *api_job_request(api_req *r, int *wait, const char **level);
/*
 * The end of such a POST: queues run(arg) as a job of `kind` on the
 * request's {name} and answers 202 with the job, or with wait the job as
 * it ends. Takes arg (freed with free_arg whatever happens).
 */
void api_job_start(api_req *r, int wait, const char *kind, api_job_run_fn run,
                   api_job_free_fn free_arg, void *arg);

/*
 * Reads and checks stored level `name` (api_level.c). NULL once answered:
 * 404 when absent, 500 when its stored blob is damaged.
 */
struct nav_level;
struct nav_level *api_level_load(api_req *r, const char *name, store_meta *meta);

/* ---- replies: exactly one per request ---- */
/* JSON body (steals j). */
void api_reply_json(api_req *r, api_code code, json_t *j);
/* Any body (steals buf, malloc'd; len bytes) with a content type. */
void api_reply_raw(api_req *r, api_code code, const char *content_type, char *buf, size_t len);
/* No body (204). */
void api_reply_empty(api_req *r, api_code code);
/* The contract's error body for e. */
void api_reply_error(api_req *r, const api_err *e);
/* Shorthand: error with a formatted message. */
void api_reply_fail(api_req *r, api_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of a request header (case-insensitive name), or NULL. */
const char *api_req_header(const api_req *r, const char *name);

/*
 * True when a peer address is this machine's own: 127.0.0.0/8, ::1 or an
 * IPv4-mapped 127/8 (::ffff:127.x.y.z). Writes without an API key are only
 * taken from such peers unless --allow-open-writes (403 otherwise).
 */
int api_peer_is_loopback(const struct sockaddr *sa);

struct MHD_Response;
/*
 * Queues a response the handler built itself, for bodies with headers of
 * their own (the viewer's embedded files: ETag, Cache-Control, 304); takes
 * ownership of resp (NULL = out of memory: the connection is closed). len is
 * the body size for the access log.
 */
void api_reply_response(api_req *r, unsigned http_status, struct MHD_Response *resp, size_t len);

/* ---- metrics (api_metrics.c) ---- */
/* Counts one finished request. route is an api_route_id or API_ROUTE_COUNT for "none";
   http_status is the status sent (0: none was sent), counted exactly when navd can send it,
   else as "other". */
void api_metrics_observe(unsigned route, unsigned http_status, double seconds);
/* Writes the Prometheus text exposition (malloc'd). in_flight: requests being
   served; writes_pending: navmesh writes queued for or on the writer thread; reg may be
   NULL (no navmeshes). */
char *api_metrics_render(api_registry *reg, unsigned in_flight, unsigned writes_pending,
                         size_t *len);

/* The route table (api_server.c) for metrics labels. */
const char *api_route_pattern(unsigned route);
const char *api_route_method(unsigned route);

#endif
