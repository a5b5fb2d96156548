/*
 * test_load: the keep-alive HTTP/1.1 client of the reliability tests and
 * of bench_load (see test_load.h). Only loopback: it never resolves names.
 */
#include "tests/test_fixtures.h"
#include "tests/test_load.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double tl_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t tl_rss_bytes(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return 0;
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

int tl_connect(tl_conn *c, uint16_t port) {
    if (c->timeout_ms == 0)
        c->timeout_ms = 10000;
    c->port = port;
    c->server_closes = 0;
    c->len = 0;
    if (c->buf)
        c->buf[0] = '\0';
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return TL_E_CONNECT;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(c->fd);
        c->fd = -1;
        return TL_E_CONNECT;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return TL_OK;
}

void tl_close(tl_conn *c) {
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->cap = c->len = 0;
}

static void drop(tl_conn *c) {
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->len = 0;
    if (c->buf)
        c->buf[0] = '\0';
}

static int wait_fd(int fd, short ev, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = ev};
    int n;
    do {
        n = poll(&p, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    return n > 0 ? 0 : -1;
}

static int send_all(tl_conn *c, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        if (wait_fd(c->fd, POLLOUT, c->timeout_ms) != 0)
            return TL_E_TIMEOUT;
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return TL_E_CLOSED;
        }
        p += n;
        len -= (size_t)n;
    }
    return TL_OK;
}

/* Reads more bytes into the buffer; TL_OK, TL_E_CLOSED on EOF/reset, TL_E_TIMEOUT. */
static int fill(tl_conn *c) {
    if (c->cap - c->len < 4096) {
        size_t cap = c->cap ? c->cap * 2 : 16384;
        char *nb = realloc(c->buf, cap);
        if (!nb)
            return TL_E_PROTOCOL;
        c->buf = nb;
        c->cap = cap;
    }
    if (wait_fd(c->fd, POLLIN, c->timeout_ms) != 0)
        return TL_E_TIMEOUT;
    ssize_t n;
    do {
        n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        return TL_E_CLOSED;
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    return TL_OK;
}

/* Case-insensitive header lookup inside [head, end); copies the value. */
static int header(const char *head, const char *end, const char *name, char *out, size_t size) {
    size_t nl = strlen(name);
    for (const char *p = head; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            size_t vl = (size_t)(eol - v);
            while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
                vl--;
            if (vl >= size)
                vl = size - 1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 1;
        }
        p = eol + 1;
    }
    return 0;
}

/* Consumes n bytes from the front of the buffer. */
static void consume(tl_conn *c, size_t n) {
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
    c->buf[c->len] = '\0'; /* the header search below relies on termination */
}

static int read_response(tl_conn *c, int head_only, tl_response *res) {
    char *hend;
    int rc;
    while (!(c->buf && (hend = strstr(c->buf, "\r\n\r\n")))) {
        if ((rc = fill(c)) != TL_OK)
            return rc;
    }
    size_t hlen = (size_t)(hend - c->buf) + 4;
    int minor = 0, status = 0;
    if (sscanf(c->buf, "HTTP/1.%d %d", &minor, &status) != 2)
        return TL_E_PROTOCOL;
    res->status = status;
    char v[64];
    res->close = header(c->buf, hend, "Connection", v, sizeof v) && strcasecmp(v, "close") == 0;
    if (minor == 0 &&
        !(header(c->buf, hend, "Connection", v, sizeof v) && strcasecmp(v, "keep-alive") == 0))
        res->close = 1;
    header(c->buf, hend, "Allow", res->allow, sizeof res->allow);
    int chunked =
        header(c->buf, hend, "Transfer-Encoding", v, sizeof v) && strcasecmp(v, "chunked") == 0;
    long long clen = -1;
    if (header(c->buf, hend, "Content-Length", v, sizeof v))
        clen = atoll(v);
    if (head_only || status == 204 || status == 304 || (status >= 100 && status < 200))
        clen = 0, chunked = 0;
    consume(c, hlen);

    size_t cap = 1024, n = 0;
    char *body = malloc(cap);
    if (!body)
        return TL_E_PROTOCOL;
    if (chunked) {
        for (;;) {
            char *eol;
            while (!(c->len > 0 && (eol = memchr(c->buf, '\n', c->len)))) {
                if ((rc = fill(c)) != TL_OK)
                    goto fail;
            }
            unsigned long size = strtoul(c->buf, NULL, 16);
            consume(c, (size_t)(eol - c->buf) + 1);
            while (c->len < size + 2) {
                if ((rc = fill(c)) != TL_OK)
                    goto fail;
            }
            if (n + size + 1 > cap) {
                cap = n + size + 1;
                char *nb = realloc(body, cap);
                if (!nb) {
                    rc = TL_E_PROTOCOL;
                    goto fail;
                }
                body = nb;
            }
            memcpy(body + n, c->buf, size);
            n += size;
            consume(c, size + 2);
            if (size == 0)
                break; /* trailers are not used by the service */
        }
    } else if (clen >= 0) {
        while (c->len < (size_t)clen) {
            if ((rc = fill(c)) != TL_OK)
                goto fail;
        }
        if ((size_t)clen + 1 > cap) {
            char *nb = realloc(body, (size_t)clen + 1);
            if (!nb) {
                rc = TL_E_PROTOCOL;
                goto fail;
            }
            body = nb;
        }
        memcpy(body, c->buf, (size_t)clen);
        n = (size_t)clen;
        consume(c, n);
    } else {
        /* No length: the body runs to the close. */
        for (;;) {
            rc = fill(c);
            if (rc == TL_E_CLOSED)
                break;
            if (rc != TL_OK)
                goto fail;
        }
        char *nb = realloc(body, c->len + 1);
        if (!nb) {
            rc = TL_E_PROTOCOL;
            goto fail;
        }
        body = nb;
        memcpy(body, c->buf, c->len);
        n = c->len;
        c->len = 0;
        res->close = 1;
    }
    body[n] = '\0';
    res->body = body;
    res->len = n;
    return TL_OK;
fail:
    free(body);
    return rc;
}

int tl_request(tl_conn *c, const char *method, const char *path, const char *content_type,
               const void *body, size_t body_len, const char *extra_headers, tl_response *res) {
    memset(res, 0, sizeof *res);
    if (c->fd < 0 || c->server_closes) {
        drop(c);
        if (tl_connect(c, c->port) != TL_OK)
            return TL_E_CONNECT;
    }
    /* Sized for the request line and headers, so a long path (a fuzzed query
       string) is sent as it is rather than refused here. */
    size_t size = strlen(method) + strlen(path) + (content_type ? strlen(content_type) : 0) +
                  (extra_headers ? strlen(extra_headers) : 0) + 256;
    char *head = malloc(size);
    if (!head)
        return TL_E_PROTOCOL;
    int hl = snprintf(head, size, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s%s%s", method, path,
                      (unsigned)c->port, content_type ? "Content-Type: " : "",
                      content_type ? content_type : "", content_type ? "\r\n" : "");
    if (body || content_type)
        hl += snprintf(head + hl, size - (size_t)hl, "Content-Length: %zu\r\n", body_len);
    if (extra_headers)
        hl += snprintf(head + hl, size - (size_t)hl, "%s", extra_headers);
    hl += snprintf(head + hl, size - (size_t)hl, "\r\n");
    int rc = send_all(c, head, (size_t)hl);
    free(head);
    /* A server may answer (413) and close before reading a large body: a
       failed body write is not yet a failure, the response decides. */
    if (rc == TL_OK && body_len > 0)
        (void)send_all(c, body, body_len);
    if (rc == TL_OK)
        rc = read_response(c, strcmp(method, "HEAD") == 0, res);
    if (rc != TL_OK) {
        drop(c);
        return rc;
    }
    c->server_closes = res->close;
    return TL_OK;
}

void tl_response_free(tl_response *res) {
    free(res->body);
    res->body = NULL;
    res->len = 0;
}

const char *tl_error_code(const tl_response *res) {
    static _Thread_local char code[64];
    code[0] = '\0';
    if (!res->body)
        return code;
    const char *p = strstr(res->body, "\"code\"");
    if (!p)
        return code;
    p = strchr(p + 6, '"');
    if (!p)
        return code;
    p++;
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < sizeof code)
        n++;
    memcpy(code, p, n);
    code[n] = '\0';
    return code;
}

long tl_json_long(const char *body, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = body ? strstr(body, pat) : NULL;
    if (!p)
        return -1;
    p = strchr(p + strlen(pat), ':');
    return p ? strtol(p + 1, NULL, 10) : -1;
}

const char *tl_navd_bin(void) {
    const char *bin = getenv("NAVD_BIN");
    if (!bin || !*bin)
        bin = "bin/navd";
    return access(bin, X_OK) == 0 ? bin : NULL;
}

/* ---- load generator ---- */
#include <pthread.h>
#include <stdatomic.h>

static const char *const tl_ep_names[TL_EP_COUNT] = {"path",      "paths", "nearest", "raycast",
                                                     "reachable", "step",  "put"};

const char *tl_endpoint_name(tl_endpoint e) {
    return (unsigned)e < TL_EP_COUNT ? tl_ep_names[e] : "?";
}

#define TL_GRID 16
#define TL_POINTS 64

/* Hole cells: [6,8] x [6,8]. */
static int tl_hole(int x, int z) {
    return x >= 6 && x < 8 && z >= 6 && z < 8;
}

char *tl_load_mesh_json(size_t *len) {
    size_t cap = 64 * 1024, k = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    k += (size_t)snprintf(s + k, cap - k, "{\"vertices\": [");
    for (int z = 0; z <= TL_GRID; z++)
        for (int x = 0; x <= TL_GRID; x++)
            k += (size_t)snprintf(s + k, cap - k, "%s[%d,0,%d]", (x || z) ? "," : "", x, z);
    k += (size_t)snprintf(s + k, cap - k, "], \"polygons\": [");
    int first = 1;
    for (int z = 0; z < TL_GRID; z++)
        for (int x = 0; x < TL_GRID; x++) {
            if (tl_hole(x, z))
                continue;
            int a = z * (TL_GRID + 1) + x;
            k += (size_t)snprintf(s + k, cap - k, "%s[%d,%d,%d,%d]", first ? "" : ",", a, a + 1,
                                  a + TL_GRID + 2, a + TL_GRID + 1);
            first = 0;
        }
    k += (size_t)snprintf(s + k, cap - k, "]}");
    *len = k;
    return s;
}

typedef struct tl_samples {
    double *v;
    size_t n, cap;
} tl_samples;

typedef struct tl_worker {
    const tl_load_opts *o;
    pthread_t th;
    uint32_t rng;
    atomic_int *measuring, *stop;
    tl_samples lat[TL_EP_COUNT];
    long req[TL_EP_COUNT], e4[TL_EP_COUNT], e5[TL_EP_COUNT];
    long dropped, other;
    char first_error[256];
    const char *mesh_json;
    size_t mesh_len;
} tl_worker;

static float tl_points[TL_POINTS][3];

static void tl_init_points(uint32_t seed) {
    uint32_t s = seed ? seed : 1;
    for (int i = 0; i < TL_POINTS;) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        int x = (int)(s % TL_GRID), z = (int)((s >> 8) % TL_GRID);
        if (tl_hole(x, z))
            continue;
        tl_points[i][0] = (float)x + 0.25f + (float)((s >> 16) % 50) / 100.0f;
        tl_points[i][1] = 0;
        tl_points[i][2] = (float)z + 0.25f + (float)((s >> 24) % 50) / 100.0f;
        i++;
    }
}

#define P3(p) (double)(p)[0], (double)(p)[1], (double)(p)[2]

/* Writes the body of one request of endpoint e into buf; returns its length. */
static size_t tl_body(tl_endpoint e, uint32_t *rng, char *buf, size_t size) {
    const float *a = tl_points[fx_rand(rng) % TL_POINTS];
    const float *b = tl_points[fx_rand(rng) % TL_POINTS];
    int n = 0;
    switch (e) {
    case TL_EP_PATH:
    case TL_EP_RAYCAST:
        n = snprintf(buf, size, "{\"start\":[%g,%g,%g],\"end\":[%g,%g,%g]}", P3(a), P3(b));
        break;
    case TL_EP_PATHS: {
        n = snprintf(buf, size, "{\"queries\":[");
        for (int q = 0; q < 4; q++) {
            const float *s = tl_points[fx_rand(rng) % TL_POINTS];
            const float *t = tl_points[fx_rand(rng) % TL_POINTS];
            n += snprintf(buf + n, size - (size_t)n, "%s{\"start\":[%g,%g,%g],\"end\":[%g,%g,%g]}",
                          q ? "," : "", P3(s), P3(t));
        }
        n += snprintf(buf + n, size - (size_t)n, "]}");
        break;
    }
    case TL_EP_NEAREST:
        n = snprintf(buf, size, "{\"point\":[%g,%g,%g]}", (double)a[0], 0.5, (double)a[2]);
        break;
    case TL_EP_REACHABLE:
        if (fx_rand(rng) % 2)
            n = snprintf(buf, size, "{\"start\":[%g,%g,%g],\"end\":[%g,%g,%g]}", P3(a), P3(b));
        else
            n = snprintf(buf, size, "{\"start\":[%g,%g,%g],\"max_cost\":4}", P3(a));
        break;
    case TL_EP_STEP: {
        n = snprintf(buf, size, "{\"dt\":0.05,\"agents\":[");
        for (int k = 0; k < 4; k++) {
            const float *p = tl_points[fx_rand(rng) % TL_POINTS];
            const float *t = tl_points[fx_rand(rng) % TL_POINTS];
            n += snprintf(buf + n, size - (size_t)n,
                          "%s{\"id\":\"a%d\",\"position\":[%g,%g,%g],\"velocity\":[0,0,0],"
                          "\"radius\":0.3,\"max_speed\":3,\"max_accel\":8,\"behavior\":\"%s\","
                          "\"target\":[%g,%g,%g]}",
                          k ? "," : "", k, P3(p), k % 2 ? "seek" : "arrive", P3(t));
        }
        n += snprintf(buf + n, size - (size_t)n, "]}");
        break;
    }
    default:
        break;
    }
    return n > 0 ? (size_t)n : 0;
}

static void tl_push(tl_samples *s, double v) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        double *nv = realloc(s->v, cap * sizeof *nv);
        if (!nv)
            return;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = v;
}

/* One request of endpoint e on c; returns the HTTP status or a TL_E_* code. */
static int tl_one(tl_conn *c, const tl_load_opts *o, tl_endpoint e, uint32_t *rng,
                  const char *mesh_json, size_t mesh_len, char *err, size_t errsize) {
    char path[160], body[4096];
    tl_response r;
    int rc;
    if (e == TL_EP_PUT) {
        snprintf(path, sizeof path, "/v1/navmeshes/%s", o->mesh);
        rc = tl_request(c, "PUT", path, "application/json", mesh_json, mesh_len, o->auth, &r);
    } else {
        snprintf(path, sizeof path, "/v1/navmeshes/%s/%s", o->mesh, tl_endpoint_name(e));
        size_t n = tl_body(e, rng, body, sizeof body);
        rc = tl_request(c, "POST", path, "application/json", body, n, NULL, &r);
    }
    if (rc != TL_OK)
        return rc;
    int status = r.status;
    int expected_422 = status == 422 && strcmp(tl_error_code(&r), "point_off_mesh") == 0;
    if ((status < 200 || status >= 300) && !expected_422 && err[0] == '\0')
        snprintf(err, errsize, "%s: %d %.160s", tl_endpoint_name(e), status, r.body);
    tl_response_free(&r);
    return expected_422 ? 200 : status;
}

static void *tl_work(void *arg) {
    tl_worker *w = arg;
    const tl_load_opts *o = w->o;
    tl_conn c = {.fd = -1, .timeout_ms = 15000};
    if (tl_connect(&c, o->port) != TL_OK) {
        w->dropped++;
        return NULL;
    }
    unsigned en = o->enabled;
    while (!*w->stop) {
        tl_endpoint e;
        if ((en & (1u << TL_EP_PUT)) && (int)(fx_rand(&w->rng) % 1000) < o->put_per_mille) {
            e = TL_EP_PUT;
        } else {
            do {
                e = (tl_endpoint)(fx_rand(&w->rng) % TL_EP_PUT);
            } while (!(en & (1u << e)));
        }
        int measuring = *w->measuring;
        double t = tl_now();
        int st = tl_one(&c, o, e, &w->rng, w->mesh_json, w->mesh_len, w->first_error,
                        sizeof w->first_error);
        double ms = (tl_now() - t) * 1000.0;
        if (!measuring)
            continue;
        if (st < 0) {
            /* The server closed or reset a keep-alive connection it had not
               announced closing, or did not answer: a dropped connection. */
            w->dropped++;
            if (w->first_error[0] == '\0')
                snprintf(w->first_error, sizeof w->first_error, "%s: transport error %d",
                         tl_endpoint_name(e), st);
            tl_close(&c);
            c.timeout_ms = 15000;
            if (tl_connect(&c, o->port) != TL_OK)
                break;
            continue;
        }
        w->req[e]++;
        tl_push(&w->lat[e], ms);
        if (st >= 500)
            w->e5[e]++;
        else if (st >= 400)
            w->e4[e]++;
        else if (st >= 300)
            w->other++;
    }
    tl_close(&c);
    return NULL;
}

static int tl_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Which endpoints answer on this server: 404 not_found on a stored mesh means no route. */
static unsigned tl_probe(const tl_load_opts *o, const char *mesh_json, size_t mesh_len) {
    unsigned en = 0;
    tl_conn c = {.fd = -1};
    if (tl_connect(&c, o->port) != TL_OK)
        return 0;
    uint32_t rng = 12345;
    char err[256] = "";
    for (int e = 0; e < TL_EP_COUNT; e++) {
        if (e == TL_EP_PUT && !o->put_per_mille)
            continue;
        int st = tl_one(&c, o, (tl_endpoint)e, &rng, mesh_json, mesh_len, err, sizeof err);
        if (st != 404 && st != 405 && st > 0)
            en |= 1u << e;
    }
    tl_close(&c);
    return en;
}

int tl_load_run(const tl_load_opts *o, tl_load_stats *stats) {
    memset(stats, 0, sizeof *stats);
    tl_init_points(o->seed);
    size_t mesh_len = 0;
    char *mesh_json = tl_load_mesh_json(&mesh_len);
    if (!mesh_json)
        return -1;
    tl_load_opts opts = *o;
    if (opts.enabled == 0)
        opts.enabled = tl_probe(&opts, mesh_json, mesh_len);
    stats->enabled = opts.enabled;
    if ((opts.enabled & ((1u << TL_EP_PUT) - 1)) == 0) {
        free(mesh_json);
        return -1; /* no query endpoint at all */
    }
    int n = opts.connections > 0 ? opts.connections : 1;
    tl_worker *w = calloc((size_t)n, sizeof *w);
    atomic_int measuring = 0, stop = 0;
    if (!w) {
        free(mesh_json);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        w[i].o = &opts;
        w[i].rng = (opts.seed ? opts.seed : 1) * 2654435761u + (uint32_t)i * 7919u + 1u;
        w[i].measuring = &measuring;
        w[i].stop = &stop;
        w[i].mesh_json = mesh_json;
        w[i].mesh_len = mesh_len;
        pthread_create(&w[i].th, NULL, tl_work, &w[i]);
    }
    struct timespec tick = {0, 100 * 1000 * 1000};
    double t0 = tl_now();
    while (tl_now() - t0 < opts.warmup)
        nanosleep(&tick, NULL);
    if (opts.server_pid > 0)
        stats->rss_start = stats->rss_peak = tl_rss_bytes(opts.server_pid);
    stats->cache_start = tl_metric(opts.port, "navd_path_cache_bytes");
    measuring = 1;
    double m0 = tl_now();
    while (tl_now() - m0 < opts.seconds) {
        nanosleep(&tick, NULL);
        if (opts.server_pid > 0) {
            size_t rss = tl_rss_bytes(opts.server_pid);
            if (rss > stats->rss_peak)
                stats->rss_peak = rss;
        }
    }
    measuring = 0;
    stats->seconds = tl_now() - m0;
    stop = 1;
    for (int i = 0; i < n; i++)
        pthread_join(w[i].th, NULL);
    if (opts.server_pid > 0)
        stats->rss_end = tl_rss_bytes(opts.server_pid);
    stats->cache_end = tl_metric(opts.port, "navd_path_cache_bytes");

    for (int e = 0; e < TL_EP_COUNT; e++) {
        tl_samples all = {0};
        tl_endpoint_stats *es = &stats->ep[e];
        for (int i = 0; i < n; i++) {
            es->requests += w[i].req[e];
            es->errors_4xx += w[i].e4[e];
            es->errors_5xx += w[i].e5[e];
            for (size_t k = 0; k < w[i].lat[e].n; k++)
                tl_push(&all, w[i].lat[e].v[k]);
            free(w[i].lat[e].v);
        }
        if (all.n > 0) {
            qsort(all.v, all.n, sizeof *all.v, tl_cmp_double);
            es->p50_ms = all.v[all.n / 2];
            es->p99_ms = all.v[(all.n * 99) / 100 < all.n ? (all.n * 99) / 100 : all.n - 1];
            es->max_ms = all.v[all.n - 1];
        }
        free(all.v);
        stats->requests += es->requests;
        stats->errors_5xx += es->errors_5xx;
        stats->errors_other += es->errors_4xx;
    }
    for (int i = 0; i < n; i++) {
        stats->dropped += w[i].dropped;
        stats->errors_other += w[i].other;
        if (stats->first_error[0] == '\0' && w[i].first_error[0])
            snprintf(stats->first_error, sizeof stats->first_error, "%s", w[i].first_error);
    }
    free(w);
    free(mesh_json);
    return 0;
}

double tl_metric(uint16_t port, const char *name) {
    tl_conn c = {.fd = -1};
    tl_response r;
    double v = -1;
    if (tl_connect(&c, port) != TL_OK)
        return -1;
    if (tl_request(&c, "GET", "/metrics", NULL, NULL, 0, NULL, &r) == TL_OK) {
        size_t n = strlen(name);
        for (const char *p = r.body; p && *p;) {
            if (strncmp(p, name, n) == 0 && p[n] == ' ') {
                v = strtod(p + n + 1, NULL);
                break;
            }
            p = strchr(p, '\n');
            if (p)
                p++;
        }
        tl_response_free(&r);
    }
    tl_close(&c);
    return v;
}
