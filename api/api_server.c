/*
 * api_server: the libmicrohttpd daemon, the per-request state and the
 * dispatcher that runs the route table (api_routes.h).
 *
 * Flow of one request, on the MHD worker thread that owns its connection:
 * 1. First call (headers read): allocate api_req in *con_cls, match the
 *    route and run the generic checks in a fixed order: 404 unknown path,
 *    405 known path with another method (+ Allow), 401 missing API key on a
 *    write route, 400 bad navmesh name, 415 body content type, 413 when
 *    Content-Length is over the limit. A failed check answers at once,
 *    before any body byte is read.
 * 2. Body calls: append to the buffer; past --max-body the rest is
 *    discarded and the answer is 413; past --request-timeout the
 *    connection is dropped (a trickling client cannot hold a worker).
 * 3. Last call: run the handler, which replies once. A write route
 *    (API_R_WRITE: PUT and DELETE of a navmesh) is not run here: the
 *    connection is suspended and the request handed to the writer thread
 *    (see pool_main), so that a long build and an fsync never hold up the
 *    other connections this worker serves.
 * 4. Completion callback: one log line, the metrics, free api_req.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_log.h"
#include "api/api_query.h"
#include "api/api_volume.h"

typedef struct api_route {
    const char *method;
    const char *pattern;
    api_handler handler;
    unsigned flags;
} api_route;

static const api_route routes[API_ROUTE_COUNT] = {
#define API_ROUTE_ROW(id, m, p, h, f) [API_ROUTE_##id] = {m, p, h, f},
    API_ROUTE_LIST(API_ROUTE_ROW)
#undef API_ROUTE_ROW
};

const char *api_route_pattern(unsigned route) {
    return route < API_ROUTE_COUNT ? routes[route].pattern : "none";
}

const char *api_route_method(unsigned route) {
    return route < API_ROUTE_COUNT ? routes[route].method : "other";
}

struct api_server {
    struct MHD_Daemon *daemon;
    const api_config *cfg;
    api_registry *reg;
    uint16_t port;
    atomic_uint in_flight;    /* requests between their first call and completion */
    atomic_size_t body_bytes; /* request bodies held now (reserved), for --max-body-memory */

    /* --request-timeout reaper (see conn_track). */
    pthread_mutex_t track_lock;
    pthread_cond_t track_wake;
    struct conn_track *tracked; /* doubly linked, guarded by track_lock */
    pthread_t reaper;
    int reaper_running, reaper_stop;

    /* Handlers that run off the HTTP workers (see pool_main): the writer
       (one thread, navmesh PUT/DELETE) and the query pool (--threads
       threads, the routes whose work grows with the request: step, paths,
       a mesh export). */
    struct api_pool *writes, *queries;
    /* Bakes: their own threads, off the workers and both pools. */
    api_jobs *jobs;
    /* Flight volumes (api_volume.h): the registry's, loaded from the store at start. */
    api_volumes *volumes;
};

/*
 * A queue of suspended requests and the threads that run their handlers.
 * Guarded by lock: head/tail/pending/stop and each queued request's
 * job_done.
 */
typedef struct api_pool {
    api_server *srv;
    const char *what; /* for refusals: "navmesh writes", "heavy queries" */
    const char *flag; /* the option that sets max */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct api_req *head, *tail; /* handed over, not yet started */
    unsigned pending;            /* admitted and not finished: queued + running */
    unsigned max;                /* admission limit (503 beyond) */
    int stop;                    /* no more admissions; exit once pending is 0 */
    unsigned nthreads;
    pthread_t threads[];
} api_pool;

/*
 * Every open connection, for the request deadline. libmicrohttpd's own
 * timeout is idle-based, so a client trickling one header byte every few
 * seconds would hold a connection forever (slowloris). A connection must
 * deliver each request within --request-timeout of connecting or of its
 * previous response; past that, and unless a handler is running for it, the
 * reaper shuts its socket down and libmicrohttpd closes it. The entry is
 * unlinked (under track_lock) in the CLOSED notification, which comes before
 * the socket is closed, so the fd shut down is always this connection's.
 */
typedef struct conn_track {
    struct conn_track *prev, *next;
    int fd;
    double since; /* monotonic seconds: connected, or previous response completed */
    int busy;     /* a handler runs / a response is being sent: not cut */
    int cut;
} conn_track;

struct api_req {
    api_server *srv;
    struct MHD_Connection *conn;
    unsigned route; /* API_ROUTE_COUNT while unmatched */
    char method[16];
    char path[200];
    char name[66];
    api_body_type body_type;
    char *body;
    size_t body_len, body_cap;
    size_t body_limit; /* this route's: --max-body for uploads, --max-query-body otherwise */
    size_t reserved;   /* bytes counted in srv->body_bytes for this request */
    int too_large;
    int no_memory; /* --max-body-memory was reached while its body grew */
    int replied;
    int started;     /* the first call's checks ran */
    int nul_in_url;  /* the raw URL held %00 (libmicrohttpd decodes it and cuts the path there) */
    api_err pending; /* a failed generic check, answered at the right moment */
    unsigned allow_from; /* for 405: a route whose pattern matched the path */
    conn_track *track;   /* this connection's deadline entry (NULL if untracked) */
    unsigned status;
    size_t resp_bytes;
    struct timespec t0;

    /* A trip through a pool (the writer or the query pool). The worker
       sets pool before suspending; a pool thread runs the handler, leaves
       the response in `deferred` and sets job_done (under the pool's lock)
       before resuming; the worker, called again after the resume, queues it. */
    struct api_req *job_next;
    struct api_pool *pool;
    int job_done;
    struct MHD_Response *deferred;
    double queued_s; /* admitted (mono_now) until the writer took it, for the access log */
    double deadline; /* see api_req_deadline; set as the handler starts */
    /* A handler on a pool that answers only when a job ends (?wait=true):
       set by api_req_wait_job, taken by the pool thread after the handler. */
    api_job *wait_job;
};

static double elapsed_s(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static double mono_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void track_set(api_server *srv, conn_track *t, int busy) {
    if (!t)
        return;
    pthread_mutex_lock(&srv->track_lock);
    t->busy = busy;
    if (!busy)
        t->since = mono_now();
    pthread_mutex_unlock(&srv->track_lock);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    api_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_track *t = ci ? calloc(1, sizeof *t) : NULL;
        *socket_context = t;
        if (!t)
            return; /* untracked: only the idle timeout applies */
        t->fd = ci->connect_fd;
        t->since = mono_now();
        pthread_mutex_lock(&srv->track_lock);
        t->next = srv->tracked;
        if (srv->tracked)
            srv->tracked->prev = t;
        srv->tracked = t;
        pthread_mutex_unlock(&srv->track_lock);
    } else {
        conn_track *t = *socket_context;
        *socket_context = NULL;
        if (!t)
            return;
        pthread_mutex_lock(&srv->track_lock);
        if (t->prev)
            t->prev->next = t->next;
        else
            srv->tracked = t->next;
        if (t->next)
            t->next->prev = t->prev;
        pthread_mutex_unlock(&srv->track_lock);
        free(t);
    }
}

static void *reaper_main(void *arg) {
    api_server *srv = arg;
    double limit = srv->cfg->request_timeout;
    pthread_mutex_lock(&srv->track_lock);
    while (!srv->reaper_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000000L; /* a quarter second: deadlines are in whole seconds */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv->track_wake, &srv->track_lock, &ts);
        double now = mono_now();
        for (conn_track *t = srv->tracked; t; t = t->next)
            if (!t->busy && !t->cut && now - t->since > limit) {
                t->cut = 1;
                shutdown(t->fd, SHUT_RDWR); /* MHD sees the end and closes it */
                api_log(API_LOG_WARN, "closing a connection that took over %us to send a request",
                        srv->cfg->request_timeout);
            }
    }
    pthread_mutex_unlock(&srv->track_lock);
    return NULL;
}

/* ---- accessors ---- */

const api_config *api_req_config(const api_req *r) {
    return r->srv->cfg;
}

double api_req_deadline(const api_req *r) {
    return r->deadline;
}

double api_mono_now(void) {
    return mono_now();
}

api_registry *api_req_registry(const api_req *r) {
    return r->srv->reg;
}

unsigned api_req_in_flight(const api_req *r) {
    return atomic_load(&r->srv->in_flight);
}

unsigned api_req_writes_pending(const api_req *r) {
    api_pool *p = r->srv->writes;
    pthread_mutex_lock(&p->lock);
    unsigned n = p->pending;
    pthread_mutex_unlock(&p->lock);
    return n;
}

const char *api_req_name(const api_req *r) {
    return r->name;
}

const char *api_req_body(const api_req *r, size_t *len, api_body_type *type) {
    if (len)
        *len = r->body_len;
    if (type)
        *type = r->body_type;
    return r->body ? r->body : "";
}

const char *api_req_arg(const api_req *r, const char *key) {
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

api_entry *api_req_mesh(api_req *r) {
    api_entry *e = api_registry_get(r->srv->reg, r->name);
    if (!e)
        api_reply_fail(r, API_E_NOT_FOUND, "navmesh '%s' does not exist", r->name);
    return e;
}

/* ---- replies ---- */

/*
 * Hands a finished response to libmicrohttpd. On a pool thread the
 * connection is suspended and belongs to its worker, so the response is
 * kept for the worker to queue after the resume (finish_job): MHD is only
 * ever driven from the connection's own thread.
 */
static void submit(api_req *r, struct MHD_Response *resp) {
    if (r->pool) {
        r->deferred = resp;
        return;
    }
    MHD_queue_response(r->conn, r->status, resp);
    MHD_destroy_response(resp);
}

static void queue(api_req *r, api_code code, struct MHD_Response *resp, size_t len,
                  const char *content_type) {
    if (!resp) {
        /* Out of memory building the response: MHD closes the connection. */
        r->replied = 1;
        return;
    }
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (code == API_E_METHOD_NOT_ALLOWED) {
        char allow[64] = "";
        for (unsigned i = 0; i < API_ROUTE_COUNT; i++) {
            if (strcmp(routes[i].pattern, routes[r->allow_from].pattern))
                continue;
            if (!strstr(allow, routes[i].method)) {
                if (allow[0])
                    strncat(allow, ", ", sizeof allow - strlen(allow) - 1);
                strncat(allow, routes[i].method, sizeof allow - strlen(allow) - 1);
            }
        }
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    }
    if (code == API_E_UNAUTHORIZED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    r->status = api_code_http(code);
    r->resp_bytes = len;
    r->replied = 1;
    submit(r, resp);
}

const char *api_req_header(const api_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

void api_reply_response(api_req *r, unsigned http_status, struct MHD_Response *resp, size_t len) {
    if (r->replied) {
        if (resp)
            MHD_destroy_response(resp);
        return;
    }
    r->replied = 1;
    if (!resp)
        return; /* out of memory: MHD closes the connection */
    r->status = http_status;
    r->resp_bytes = len;
    submit(r, resp);
}

void api_reply_raw(api_req *r, api_code code, const char *content_type, char *buf, size_t len) {
    if (r->replied) {
        free(buf);
        return;
    }
    struct MHD_Response *resp =
        buf ? MHD_create_response_from_buffer_with_free_callback(len, buf, free) : NULL;
    if (!resp)
        free(buf);
    queue(r, code, resp, len, content_type);
}

void api_reply_json(api_req *r, api_code code, json_t *j) {
    size_t len = 0;
    char *s = j ? api_json_dump(j, &len) : NULL;
    json_decref(j);
    if (!s && !r->replied) {
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while encoding the response");
        return;
    }
    api_reply_raw(r, code, "application/json", s, len);
}

void api_reply_empty(api_req *r, api_code code) {
    if (r->replied)
        return;
    queue(r, code, MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT), 0, NULL);
}

void api_reply_error(api_req *r, const api_err *e) {
    if (r->replied)
        return;
    api_code code = api_code_is_error(e->code) ? e->code : API_E_INTERNAL;
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", api_code_name(code), "message",
                          e->message[0] ? e->message : api_code_name(code));
    size_t len = 0;
    char *s = j ? api_json_dump(j, &len) : NULL;
    json_decref(j);
    if (!s) {
        /* Last resort without allocating: a fixed body. */
        static const char oom[] =
            "{\"error\":{\"code\":\"unavailable\",\"message\":\"out of memory\"}}";
        queue(r, API_E_UNAVAILABLE,
              MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT),
              sizeof oom - 1, "application/json");
        return;
    }
    api_reply_raw(r, code, "application/json", s, len);
}

void api_reply_fail(api_req *r, api_code code, const char *fmt, ...) {
    api_err e = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.message, sizeof e.message, fmt, ap);
    va_end(ap);
    api_reply_error(r, &e);
}

/* ---- dispatch checks ---- */

/* Matches path against pattern; copies the {name} segment into name. */
static int match(const char *pattern, const char *path, char *name, size_t name_size) {
    const char *p = pattern, *u = path;
    while (*p && *u) {
        if (*p == '{' && strncmp(p, "{name}", 6) == 0) {
            const char *end = strchr(u, '/');
            size_t n = end ? (size_t)(end - u) : strlen(u);
            if (n == 0)
                return 0;
            /* An oversized name becomes "" so it fails validation (400), not 404. */
            if (n < name_size) {
                memcpy(name, u, n);
                name[n] = '\0';
            } else {
                name[0] = '\0';
            }
            p += 6;
            u += n;
            continue;
        }
        if (*p != *u)
            return 0;
        p++;
        u++;
    }
    return *p == '\0' && *u == '\0';
}

static int valid_name(const char *s) {
    size_t n = strlen(s);
    if (n < 1 || n > 64)
        return 0;
    /* "." and ".." match the character rule but name directories in every
       tool a name may travel through (URLs, files, shells): never a mesh. */
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* Constant time in the key's length: no early exit on the first differing byte. */
static int key_matches(const char *header, const char *key) {
    static const char prefix[] = "Bearer ";
    if (!header || strncasecmp(header, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *given = header + sizeof prefix - 1;
    size_t glen = strlen(given), klen = strlen(key);
    unsigned diff = (unsigned)(glen != klen);
    for (size_t i = 0; i < klen; i++)
        diff |= (unsigned char)key[i] ^ (unsigned char)(i < glen ? given[i] : 0);
    return diff == 0;
}

/* Media type without parameters, compared case-insensitively. */
static int media_is(const char *ct, const char *type) {
    size_t n = strlen(type);
    if (strncasecmp(ct, type, n) != 0)
        return 0;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

static api_body_type classify_body(const char *ct, unsigned flags) {
    if (!ct)
        return API_BODY_NONE;
    while (*ct == ' ')
        ct++;
    if (media_is(ct, "application/json"))
        return API_BODY_JSON;
    if ((flags & API_R_MESH) && (media_is(ct, "model/obj") || media_is(ct, "text/plain")))
        return API_BODY_OBJ;
    return API_BODY_NONE;
}

int api_peer_is_loopback(const struct sockaddr *sa) {
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

/* Counts n more bytes of this request's body against --max-body-memory;
   0 (and nothing counted) when that would pass the budget. */
static int body_reserve(api_req *r, size_t n) {
    size_t budget = r->srv->cfg->max_body_memory;
    if (budget) {
        size_t cur = atomic_load(&r->srv->body_bytes);
        do {
            if (cur + n > budget || cur + n < cur)
                return 0;
        } while (!atomic_compare_exchange_weak(&r->srv->body_bytes, &cur, cur + n));
    } else {
        atomic_fetch_add(&r->srv->body_bytes, n);
    }
    r->reserved += n;
    return 1;
}

/* Runs the generic checks; 0 when the request may proceed, else r->pending says why. */
static int precheck(api_req *r, const char *url, const char *method, const char *version) {
    api_err *e = &r->pending;
    const api_config *cfg = r->srv->cfg;
    /* Framing first: a path hiding a NUL byte (%00), or an HTTP/1.1 request
       without Host, is malformed whatever it asks for. A raw NUL byte in a
       header value cannot be checked here: libmicrohttpd 0.9.75 hands values
       over as C strings ending at it, with value_size = strlen (README,
       "Malformed requests"). */
    if (r->nul_in_url) {
        api_fail(e, API_E_BAD_REQUEST, "the request path contains a NUL byte (%%00)");
        return -1;
    }
    if (version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
        !MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
        api_fail(e, API_E_BAD_REQUEST, "an HTTP/1.1 request needs a Host header");
        return -1;
    }
    int path_known = 0;
    char name[66];
    for (unsigned i = 0; i < API_ROUTE_COUNT; i++) {
        name[0] = '\0';
        if (!match(routes[i].pattern, url, name, sizeof name))
            continue;
        if (!path_known)
            r->allow_from = i; /* for the Allow header when no method matches */
        path_known = 1;
        /* HEAD is GET without the body (libmicrohttpd drops it), e.g. for probes */
        if (strcmp(routes[i].method, method) == 0 ||
            (strcmp(method, "HEAD") == 0 && strcmp(routes[i].method, "GET") == 0)) {
            r->route = i;
            snprintf(r->name, sizeof r->name, "%s", name);
            goto matched;
        }
    }
    if (!path_known) {
        api_fail(e, API_E_NOT_FOUND, "no such endpoint: %.15s %.100s", method, url);
        return -1;
    }
    api_fail(e, API_E_METHOD_NOT_ALLOWED, "%.15s is not allowed on %s", method,
             routes[r->allow_from].pattern);
    return -1;
matched:;
    const api_route *rt = &routes[r->route];
    if ((rt->flags & API_R_AUTH) && cfg->api_key && cfg->api_key[0] &&
        !key_matches(
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
            cfg->api_key)) {
        api_fail(e, API_E_UNAUTHORIZED,
                 "this endpoint requires the API key as 'Authorization: Bearer <key>'");
        return -1;
    }
    /* Without a key, a write is taken only from this machine: a navd bound
       to a public address must not let anyone who reaches it replace meshes. */
    if ((rt->flags & API_R_AUTH) && !(cfg->api_key && cfg->api_key[0]) && !cfg->allow_open_writes) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !api_peer_is_loopback(ci->client_addr)) {
            api_fail(e, API_E_FORBIDDEN,
                     "writes from other machines need an API key: start navd with --api-key "
                     "(NAVD_API_KEY) and send 'Authorization: Bearer <key>', or pass "
                     "--allow-open-writes to accept them without one");
            return -1;
        }
    }
    if (strstr(rt->pattern, "{name}") && !valid_name(name)) {
        api_fail(e, API_E_BAD_REQUEST,
                 "the navmesh name must be 1 to 64 characters from A-Z a-z 0-9 _ . -");
        return -1;
    }
    if (rt->flags & (API_R_JSON | API_R_MESH)) {
        const char *ct =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        r->body_type = classify_body(ct, rt->flags);
        if (r->body_type == API_BODY_NONE) {
            api_fail(e, API_E_UNSUPPORTED_MEDIA_TYPE, "%s",
                     (rt->flags & API_R_MESH)
                         ? "the body must be application/json, model/obj or text/plain"
                         : "the body must be application/json");
            return -1;
        }
        /* Uploads may be large meshes; a query never needs more than a few
           MiB (1,000 path queries are about 0.1 MB). */
        r->body_limit =
            (rt->flags & API_R_MESH) || !cfg->max_query_body ? cfg->max_body : cfg->max_query_body;
        const char *cl =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            unsigned long long n = strtoull(cl, &end, 10);
            if (n > r->body_limit) {
                api_fail(e, API_E_PAYLOAD_TOO_LARGE,
                         "the body is %llu bytes, over the limit of %zu bytes (%s)", n,
                         r->body_limit,
                         r->body_limit == cfg->max_body ? "--max-body" : "--max-query-body");
                return -1;
            }
            /* The announced size is counted against --max-body-memory before
               a byte is read: 30 clients announcing 60 MiB bodies once held
               1.86 GB. Then it is allocated at once, to avoid regrowing. */
            if (n > 0 && !body_reserve(r, (size_t)n + 1)) {
                api_fail(e, API_E_UNAVAILABLE,
                         "the service is holding its limit of request bodies (%zu bytes, "
                         "--max-body-memory); retry",
                         cfg->max_body_memory);
                return -1;
            }
            if (n > 0) {
                r->body = malloc((size_t)n + 1);
                r->body_cap = r->body ? (size_t)n + 1 : 0;
            }
        }
    }
    return 0;
}

/* True when the client announced a request body (Content-Length > 0 or chunked). */
static int body_pending(struct MHD_Connection *conn) {
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    return (cl && strtoull(cl, NULL, 10) > 0) || te != NULL;
}

static int append_body(api_req *r, const char *data, size_t n) {
    size_t max = r->body_limit ? r->body_limit : r->srv->cfg->max_body;
    if (r->too_large || r->no_memory || r->body_len + n > max) {
        if (!r->no_memory)
            r->too_large = 1;
        free(r->body);
        r->body = NULL;
        r->body_len = r->body_cap = 0;
        return 0;
    }
    if (r->body_len + n + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 4096;
        while (cap < r->body_len + n + 1)
            cap *= 2;
        /* A body without Content-Length (chunked) counts as it grows. */
        if (cap > r->reserved && !body_reserve(r, cap - r->reserved)) {
            r->no_memory = 1;
            free(r->body);
            r->body = NULL;
            r->body_len = r->body_cap = 0;
            return 0;
        }
        char *b = realloc(r->body, cap);
        if (!b)
            return -1;
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return 0;
}

/* ---- the pools: the writer and the query pool ---- */

/* Runs a matched request's handler: its compute budget starts here, so a
   slow upload or a wait in a pool's queue does not use it up. */
static void run_handler(api_req *r) {
    if (r->srv->cfg->request_deadline_ms)
        r->deadline = mono_now() + r->srv->cfg->request_deadline_ms / 1000.0;
    routes[r->route].handler(r);
    if (!r->replied && !r->wait_job)
        api_reply_fail(r, API_E_INTERNAL, "the request could not be answered");
}

api_jobs *api_req_jobs(const api_req *r) {
    return r->srv->jobs;
}

api_volumes *api_req_volumes(const api_req *r) {
    return r->srv->volumes;
}

void api_req_wait_job(api_req *r, api_job *job) {
    r->wait_job = job;
}

/*
 * A waiting request's job ended (on the thread that ended it, or on the
 * pool thread when it had already): answer with the job object and hand
 * the connection back, as pool_main does for an ordinary pool job.
 */
static void wake_waiter(void *ctx, api_job *job) {
    api_req *r = ctx;
    api_reply_json(r, API_OK, api_job_encode(job));
    api_pool *pool = r->pool;
    struct MHD_Connection *conn = r->conn;
    pthread_mutex_lock(&pool->lock);
    r->job_done = 1;
    pool->pending--;
    pthread_cond_broadcast(&pool->wake); /* a stopping pool may be waiting for it */
    pthread_mutex_unlock(&pool->lock);
    MHD_resume_connection(conn); /* r belongs to the worker from here */
}

/*
 * A pool thread: runs queued handlers with the connection suspended.
 *
 * The writer (one thread) runs the write routes (navmesh PUT and DELETE)
 * one at a time: parse, build, store with its fsync, swap, exactly as a
 * worker would, but off the workers. libmicrohttpd pins each connection to
 * one worker, so a write run there would stall every keep-alive connection
 * of that worker for the build and the fsync. One thread is also the order
 * the store wants: SQLite takes one writer at a time anyway.
 *
 * The query pool (--threads threads) runs the routes whose work grows with
 * the request (step, paths, a mesh export), for the same reason: with them
 * off the workers, /health and /metrics answer at once even while every
 * query thread runs a maximal request (a lane of their own), and a slow
 * batch never holds up the other connections of its worker.
 *
 * On stop it keeps going until every admitted job has been answered, so
 * that no connection stays suspended: libmicrohttpd must not be stopped
 * with one.
 */
static void *pool_main(void *arg) {
    api_pool *pool = arg;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->head && !(pool->stop && pool->pending == 0))
            pthread_cond_wait(&pool->wake, &pool->lock);
        api_req *r = pool->head;
        if (!r)
            break; /* stopping and nothing left */
        pool->head = r->job_next;
        if (!pool->head)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->lock);

        r->queued_s = mono_now() - r->queued_s;
        run_handler(r);
        struct MHD_Connection *conn = r->conn;
        api_job *wj = r->wait_job;
        if (wj) {
            /* The job answers: the request stays admitted (pending) until
               wake_waiter, which may run at once, here, and after which r
               may be gone, so nothing below touches r. */
            r->wait_job = NULL;
            int ok = api_job_on_end(wj, wake_waiter, r) == 0;
            api_job_release(wj);
            if (ok) {
                pthread_mutex_lock(&pool->lock);
                continue;
            }
            api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while waiting for the job");
        }

        pthread_mutex_lock(&pool->lock);
        r->job_done = 1;
        pool->pending--;
        pthread_mutex_unlock(&pool->lock);
        /* r belongs to the worker again from here: it may be freed any time. */
        MHD_resume_connection(conn);
        pthread_mutex_lock(&pool->lock);
    }
    /* Wake the pool's other threads: they exit too once nothing is left. */
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/*
 * Admits a job (reserve = 1) or only tells whether it would be admitted
 * now; on refusal answers r with the 503 and returns 0. Admission and
 * queueing are two steps so that MHD_suspend_connection runs without the
 * pool's lock held (no lock order between ours and libmicrohttpd's); the
 * pool does not exit while an admitted job is still to come.
 */
static int pool_admit(api_pool *pool, api_req *r, int reserve) {
    pthread_mutex_lock(&pool->lock);
    int stopping = pool->stop, full = pool->pending >= pool->max;
    if (reserve && !stopping && !full)
        pool->pending++;
    pthread_mutex_unlock(&pool->lock);
    if (stopping) {
        api_reply_fail(r, API_E_UNAVAILABLE, "the service is shutting down; retry");
        return 0;
    }
    if (full) {
        api_reply_fail(r, API_E_UNAVAILABLE,
                       "too many %s are waiting (the limit is %u, %s); retry later", pool->what,
                       pool->max, pool->flag);
        return 0;
    }
    return 1;
}

static void hand_to_pool(api_pool *pool, api_req *r) {
    if (!pool_admit(pool, r, 1))
        return;
    r->pool = pool;
    r->queued_s = mono_now(); /* the pool thread turns it into the wait */
    MHD_suspend_connection(r->conn);
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->job_next = r;
    else
        pool->head = r;
    pool->tail = r;
    pthread_cond_signal(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}

/* The call after a pool thread resumed the connection: queue its response. */
static enum MHD_Result finish_job(api_req *r) {
    api_pool *pool = r->pool;
    pthread_mutex_lock(&pool->lock); /* pairs with the pool's: its writes to r are visible */
    int done = r->job_done;
    pthread_mutex_unlock(&pool->lock);
    if (!done)
        return MHD_YES; /* not expected: a suspended connection is not called */
    r->pool = NULL;
    struct MHD_Response *resp = r->deferred;
    r->deferred = NULL;
    if (!resp)
        return MHD_NO; /* out of memory building the response: close the connection */
    MHD_queue_response(r->conn, r->status, resp);
    MHD_destroy_response(resp);
    return MHD_YES;
}

/* Starts a pool of n threads; NULL on failure. */
static api_pool *pool_start(api_server *srv, unsigned n, unsigned max, const char *what,
                            const char *flag) {
    api_pool *pool = calloc(1, sizeof *pool + n * sizeof pool->threads[0]);
    if (!pool)
        return NULL;
    pool->srv = srv;
    pool->what = what;
    pool->flag = flag;
    pool->max = max;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&pool->threads[i], NULL, pool_main, pool) != 0)
            break;
        pool->nthreads++;
    }
    if (pool->nthreads == 0) {
        pthread_mutex_destroy(&pool->lock);
        pthread_cond_destroy(&pool->wake);
        free(pool);
        return NULL;
    }
    return pool;
}

/* Lets the pool answer every admitted job, then joins and frees it. */
static void pool_stop(api_pool *pool) {
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    free(pool);
}

/*
 * The raw request URI, before libmicrohttpd decodes it: its return value
 * becomes the request's *con_cls. Decoding turns %00 into a NUL that ends
 * the path, so "DELETE /v1/navmeshes/prod%00-sandbox" would reach the
 * handler as "prod"; the flag makes the first call refuse it (400).
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    (void)conn;
    api_req *r = calloc(1, sizeof *r);
    if (r && uri) {
        for (const char *p = uri; (p = strchr(p, '%')) != NULL; p++)
            if (p[1] == '0' && p[2] == '0') {
                r->nul_in_url = 1;
                break;
            }
    }
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    api_server *srv = cls;
    api_req *r = *con_cls;
    if (!r) { /* on_uri always allocates it; kept for safety */
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
    }
    if (!r->started) {
        r->started = 1;
        clock_gettime(CLOCK_MONOTONIC, &r->t0);
        r->srv = srv;
        r->conn = conn;
        r->route = API_ROUTE_COUNT;
        atomic_fetch_add(&srv->in_flight, 1);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        r->track = ci ? ci->socket_context : NULL;
        snprintf(r->method, sizeof r->method, "%s", method);
        snprintf(r->path, sizeof r->path, "%s", url);
        /* The URL arrives percent-decoded: keep control bytes out of the log. */
        for (char *p = r->path; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        *con_cls = r;
        int ok = precheck(r, url, method, version) == 0;
        if (!ok && body_pending(conn)) {
            /* Answer before reading a body we would refuse (MHD then closes the
               connection). Without a body, wait for the last call so that the
               connection can be kept alive. */
            api_reply_error(r, &r->pending);
        } else if (ok && (routes[r->route].flags & API_R_WRITE) && body_pending(conn)) {
            /* A write that would be refused now (queue full, stopping) is
               refused before its body is read: a client uploading a big mesh
               learns at once (with Expect: 100-continue, before sending it).
               Admission proper is still at the last call (hand_to_pool): a
               write let in here may be refused there if the queue filled. */
            pool_admit(srv->writes, r, 0);
        }
        return MHD_YES;
    }
    if (r->pool)
        return finish_job(r);
    if (*upload_data_size) {
        unsigned tmo = srv->cfg->request_timeout;
        if (tmo && elapsed_s(&r->t0) > tmo) {
            api_log(API_LOG_WARN, "%s %s: request timeout while reading the body, closing",
                    r->method, r->path);
            return MHD_NO;
        }
        if (!r->replied && append_body(r, upload_data, *upload_data_size) != 0)
            return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->replied)
        return MHD_YES;
    if (r->pending.code != API_OK) {
        api_reply_error(r, &r->pending);
        return MHD_YES;
    }
    if (r->too_large) {
        api_reply_fail(r, API_E_PAYLOAD_TOO_LARGE, "the body is over the limit of %zu bytes",
                       r->body_limit ? r->body_limit : srv->cfg->max_body);
        return MHD_YES;
    }
    if (r->no_memory) {
        api_reply_fail(r, API_E_UNAVAILABLE,
                       "the service is holding its limit of request bodies (%zu bytes, "
                       "--max-body-memory); retry",
                       srv->cfg->max_body_memory);
        return MHD_YES;
    }
    track_set(srv, r->track, 1); /* a slow handler (a big upload's build) is not cut */
    if (routes[r->route].flags & (API_R_WRITE | API_R_POOL)) {
        hand_to_pool((routes[r->route].flags & API_R_WRITE) ? srv->writes : srv->queries, r);
        return MHD_YES;
    }
    run_handler(r);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    api_req *r = *con_cls;
    api_server *srv = cls;
    if (!r)
        return;
    *con_cls = NULL;
    if (!r->started) { /* on_uri ran, on_request never did (libmicrohttpd refused it itself) */
        free(r);
        return;
    }
    double s = elapsed_s(&r->t0);
    /* Requests refused by the generic checks count under route "none". */
    api_metrics_observe(r->pending.code == API_OK ? r->route : API_ROUTE_COUNT, r->status, s);
    /* a write's latency includes its wait for the writer thread: say how much */
    char queued[48] = "";
    if (r->route < API_ROUTE_COUNT && (routes[r->route].flags & API_R_WRITE)) {
        api_pool *w = srv->writes;
        pthread_mutex_lock(&w->lock); /* pairs with the writer's, as in finish_job */
        if (r->job_done)
            snprintf(queued, sizeof queued, " (%.3fms waiting for the writer)", r->queued_s * 1e3);
        pthread_mutex_unlock(&w->lock);
    }
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        api_log(API_LOG_INFO, "%s %s %u %.3fms %zuB%s", r->method, r->path, r->status, s * 1e3,
                r->resp_bytes, queued);
    else
        api_log(API_LOG_INFO, "%s %s %u %.3fms %zuB%s (connection ended early)", r->method, r->path,
                r->status, s * 1e3, r->resp_bytes, queued);
    track_set(srv, r->track, 0); /* the next request's deadline starts now */
    if (r->deferred) /* resumed, then closed before it was called again (daemon stopping) */
        MHD_destroy_response(r->deferred);
    free(r->body);
    if (r->reserved)
        atomic_fetch_sub(&srv->body_bytes, r->reserved);
    free(r);
    atomic_fetch_sub(&srv->in_flight, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    api_log(API_LOG_WARN, "http: %s", line);
}

/*
 * libmicrohttpd's default panic handler aborts without a word. Twice in
 * hundreds of loaded test runs navd died of SIGABRT while stopping, and
 * nothing said why; this names the file, line and reason before aborting,
 * so the next occurrence can be diagnosed. (Aborting is still right: MHD's
 * state is unknown after a panic.)
 */
static void on_mhd_panic(void *cls, const char *file, unsigned int line, const char *reason) {
    (void)cls;
    fprintf(stderr, "navd: libmicrohttpd panic at %s:%u: %s\n", file ? file : "?", line,
            reason ? reason : "(no reason)");
    fflush(stderr);
    abort();
}

/* Stops both pools (each answers every job it admitted first). */
static void pools_stop(api_server *s) {
    pool_stop(s->queries);
    s->queries = NULL;
    pool_stop(s->writes);
    s->writes = NULL;
}

static void server_free(api_server *s) {
    pthread_mutex_destroy(&s->track_lock);
    pthread_cond_destroy(&s->track_wake);
    free(s);
}

api_server *api_server_start(const api_config *cfg, api_registry *reg, char *err, size_t errlen) {
    MHD_set_panic_func(on_mhd_panic, NULL);
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
    struct sockaddr *sa;
    /* poll(), not epoll: libmicrohttpd 0.9.75 (Debian 12) races with itself
       when a daemon using epoll is quiesced. MHD_quiesce_daemon() removes the
       listen socket from each worker's epoll set while the worker, seeing
       was_quiesced, removes it too; the loser gets ENOENT and MHD panics
       (abort). That was the SIGABRT at shutdown seen under load and once in
       CI. With poll() quiescing only wakes the workers through their ITC and
       nothing can fail. Each pool thread polls only its own connections, so
       poll() costs little at a game server's handful of keep-alive clients. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC |             /* MHD_quiesce_daemon needs it with a thread pool */
                     MHD_ALLOW_SUSPEND_RESUME; /* writes and heavy queries run on pools */
    memset(&sin, 0, sizeof sin);
    memset(&sin6, 0, sizeof sin6);
    if (inet_pton(AF_INET, cfg->bind, &sin.sin_addr) == 1) {
        sin.sin_family = AF_INET;
        sin.sin_port = htons(cfg->port);
        sa = (struct sockaddr *)&sin;
    } else if (inet_pton(AF_INET6, cfg->bind, &sin6.sin6_addr) == 1) {
        sin6.sin6_family = AF_INET6;
        sin6.sin6_port = htons(cfg->port);
        sa = (struct sockaddr *)&sin6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "--bind %s is not an IPv4 or IPv6 address", cfg->bind);
        return NULL;
    }
    api_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = cfg;
    s->reg = reg;
    pthread_mutex_init(&s->track_lock, NULL);
    pthread_cond_init(&s->track_wake, NULL);
    if (api_query_init(cfg) != 0) {
        snprintf(err, errlen, "the query module could not start (out of memory)");
        server_free(s);
        return NULL;
    }
    /* The pools exist before the first request can be accepted. Heavy
       queries are admitted up to the connection limit: every connection may
       have one in flight, and the deadline bounds each. */
    s->writes = pool_start(s, 1, cfg->max_pending_writes ? cfg->max_pending_writes : 64,
                           "navmesh writes", "--max-pending-writes");
    s->queries = pool_start(s, cfg->threads ? cfg->threads : 1,
                            cfg->max_connections ? cfg->max_connections : 1024, "heavy queries",
                            "--max-connections");
    s->jobs = api_jobs_new(cfg->max_concurrent_bakes,
                           cfg->max_queued_jobs ? cfg->max_queued_jobs : 16, cfg->jobs_kept);
    s->volumes = api_registry_volumes(reg);
    long nvol = api_volumes_load(s->volumes);
    if (nvol >= 0)
        api_log(API_LOG_INFO, "loaded %ld flight volume%s", nvol, nvol == 1 ? "" : "s");
    if (!s->writes || !s->queries || !s->jobs || nvol < 0) {
        snprintf(err, errlen, "%s",
                 nvol < 0 && s->writes && s->queries && s->jobs
                     ? "the stored flight volumes could not be read"
                     : "the writer, query or bake threads could not start");
        api_jobs_free(s->jobs);
        pools_stop(s);
        api_query_shutdown();
        server_free(s);
        return NULL;
    }
    /* Optional entries are appended, never written as MHD_OPTION_END in
       the middle, which would end the list there. */
    struct MHD_OptionItem opts[12] = {
        {MHD_OPTION_SOCK_ADDR, 0, sa},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->connection_timeout, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cfg->max_connections, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, s},
    };
    size_t nopt = 6;
    if (cfg->max_connections_per_ip)
        opts[nopt++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                               (intptr_t)cfg->max_connections_per_ip, NULL};
    if (cfg->threads > 1)
        opts[nopt++] =
            (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)cfg->threads, NULL};
    opts[nopt] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    /* The logger goes first so that MHD reports option errors through it. */
    s->daemon =
        MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
                         on_mhd_log, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%u (address in use or not permitted)", cfg->bind,
                 (unsigned)cfg->port);
        api_jobs_free(s->jobs);
        pools_stop(s);
        api_query_shutdown();
        server_free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : cfg->port;
    if (cfg->request_timeout > 0)
        s->reaper_running = pthread_create(&s->reaper, NULL, reaper_main, s) == 0;
    return s;
}

uint16_t api_server_port(const api_server *s) {
    return s->port;
}

void api_server_stop(api_server *s) {
    if (!s)
        return;
    /* Stop accepting first, then let requests in flight finish (bounded, so
       a stuck client cannot block shutdown; queued writes are in flight and
       the writer keeps answering them), then stop the writer, which first
       answers and resumes every write still admitted (libmicrohttpd must
       not stop with a suspended connection; a write whose body completes
       after this point is refused with 503), then close idle keep-alive
       connections and join the workers; their per-thread query scratch is
       freed as they exit. */
    MHD_socket lsock = MHD_quiesce_daemon(s->daemon);
    /* At most 3 s for requests in flight: a client holding a half-sent
       request counts as one, and Docker's grace is 10 s, the contract's
       promise 5 s; what is still unfinished then is cut by MHD_stop_daemon. */
    for (int i = 0; i < 300 && atomic_load(&s->in_flight) > 0; i++)
        usleep(10 * 1000);
    /* Jobs survive nothing: unfinished bakes are cancelled (their targets
       unchanged) and their waiting requests answered, before the pools
       stop, since a waiter is still admitted to the query pool. */
    api_jobs_shutdown(s->jobs);
    pools_stop(s);
    MHD_stop_daemon(s->daemon);
    if (lsock != MHD_INVALID_SOCKET)
        close(lsock);
    if (s->reaper_running) {
        pthread_mutex_lock(&s->track_lock);
        s->reaper_stop = 1;
        pthread_cond_signal(&s->track_wake);
        pthread_mutex_unlock(&s->track_lock);
        pthread_join(s->reaper, NULL);
    }
    api_query_shutdown();
    api_jobs_free(s->jobs);
    server_free(s);
}
