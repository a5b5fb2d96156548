/*
 * test_load: a small HTTP/1.1 client for the reliability tests and the load
 * benchmark: one keep-alive connection per tl_conn over a raw socket to
 * 127.0.0.1, requests written whole, responses read by Content-Length or
 * chunked encoding. No global state, so each load thread owns its
 * connections.
 *
 * A connection the server closed is noticed (tl_request returns
 * TL_E_CLOSED) and counted by the caller as a dropped connection, unless
 * the previous response said "Connection: close".
 */
#ifndef TEST_LOAD_H
#define TEST_LOAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_conn {
    int fd;
    uint16_t port;
    int server_closes; /* the last response carried "Connection: close" */
    char *buf;         /* receive buffer */
    size_t cap, len;
    int timeout_ms; /* per read/write; default 10 s */
} tl_conn;

typedef struct tl_response {
    int status; /* HTTP status, 0 when none was read */
    char *body; /* malloc'd, NUL-terminated (len excludes the NUL) */
    size_t len;
    int close;      /* server said Connection: close */
    char allow[64]; /* Allow header, "" when absent */
} tl_response;

enum {
    TL_OK = 0,
    TL_E_CONNECT = -1, /* could not connect */
    TL_E_CLOSED = -2,  /* the server closed the connection before a full response */
    TL_E_TIMEOUT = -3, /* no (complete) response within timeout_ms */
    TL_E_PROTOCOL = -4 /* not an HTTP/1.1 response we understand */
};

/* Connects to 127.0.0.1:port; TL_OK or TL_E_CONNECT. */
int tl_connect(tl_conn *c, uint16_t port);
/* Closes the socket (if open) and frees the buffer. */
void tl_close(tl_conn *c);

/*
 * Sends one request and reads its response on the keep-alive connection,
 * reconnecting first when the connection is not open. content_type may be
 * NULL (no body headers unless body is non-NULL); extra_headers is
 * NULL or CRLF-terminated header lines. On failure the connection is closed.
 */
int tl_request(tl_conn *c, const char *method, const char *path, const char *content_type,
               const void *body, size_t body_len, const char *extra_headers, tl_response *res);
/* Frees a response's body. */
void tl_response_free(tl_response *res);

/* The value of "code" in a contract error body ({"error":{"code":"..."}}), or "" (static buffer per
 * thread). */
const char *tl_error_code(const tl_response *res);

/* The integer after the first "key": in a JSON body, or -1 when absent (a
   probe for small known answers such as {"version":3}, not a JSON parser). */
long tl_json_long(const char *body, const char *key);

/* ---- the real binary ---- */
/* Path of the binary under test (NAVD_BIN, else bin/navd), or NULL when it
   does not exist. test_http.h's th_start runs it. */
const char *tl_navd_bin(void);

/* ---- the load generator (check_load, bench_load) ---- */
/* The endpoints a load run mixes; TL_EP_PUT replaces the queried mesh with itself. */
typedef enum tl_endpoint {
    TL_EP_PATH = 0,
    TL_EP_PATHS,
    TL_EP_NEAREST,
    TL_EP_RAYCAST,
    TL_EP_REACHABLE,
    TL_EP_STEP,
    TL_EP_PUT,
    TL_EP_COUNT
} tl_endpoint;

/* Static name of an endpoint ("path"). */
const char *tl_endpoint_name(tl_endpoint e);

/* Upload JSON of the load mesh: a 16 x 16 grid of 1 m quads at y = 0 with a
   2 x 2 hole at [6,8] x [6,8] (malloc'd). */
char *tl_load_mesh_json(size_t *len);

typedef struct tl_load_opts {
    uint16_t port;
    const char *mesh; /* name of the mesh to query (already uploaded) */
    const char *auth; /* "Authorization: Bearer ...\r\n" for PUTs, or NULL */
    int connections;  /* client threads, one keep-alive connection each */
    double seconds;   /* measured run length */
    double warmup;    /* seconds before measuring (RSS baseline taken after) */
    int server_pid;   /* for RSS sampling; 0: none */
    uint32_t seed;
    int put_per_mille; /* share of requests that are PUTs, per 1000 */
    unsigned enabled;  /* bit per tl_endpoint; 0: probe which endpoints exist */
} tl_load_opts;

typedef struct tl_endpoint_stats {
    long requests;
    long errors_4xx, errors_5xx;
    double p50_ms, p99_ms, max_ms;
} tl_endpoint_stats;

typedef struct tl_load_stats {
    tl_endpoint_stats ep[TL_EP_COUNT];
    unsigned enabled; /* endpoints that were mixed in */
    long requests;    /* measured requests */
    long errors_5xx;
    long errors_other;                   /* unexpected non-2xx other than 5xx */
    long dropped;                        /* connections the server closed or reset mid-request */
    double seconds;                      /* measured wall time */
    size_t rss_start, rss_end, rss_peak; /* server RSS after warm-up, at the end, max seen */
    double cache_start, cache_end; /* navd_path_cache_bytes at the same moments (-1: unknown) */
    char first_error[256];         /* the first unexpected answer, for the failure message */
} tl_load_stats;

/*
 * Runs a mixed load: `connections` threads, each on one keep-alive
 * connection, pick endpoints at random (seeded) over a fixed set of query
 * points (so the path cache reaches steady state during warm-up). Returns 0
 * when the run happened (inspect stats), -1 when it could not start.
 */
int tl_load_run(const tl_load_opts *o, tl_load_stats *stats);

/* The value of a Prometheus sample `name` (no labels) from GET /metrics, or -1. */
double tl_metric(uint16_t port, const char *name);

/* Monotonic clock in seconds. */
double tl_now(void);

/* Resident set size of process pid in bytes from /proc/<pid>/statm, or 0. */
size_t tl_rss_bytes(int pid);

#endif
