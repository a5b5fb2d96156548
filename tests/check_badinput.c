/*
 * check_badinput: the bad-input catalogue (tests/badinput/, one file per case) against
 * the real binary.
 *
 * The suite starts bin/navd with an API key and a small body limit, stores
 * one good mesh, then sends every malformed request of the catalogue and
 * checks the status and the contract's error code of each answer, that the
 * error body is well formed and reveals no file path, and, after each case,
 * that the service still answers and the stored mesh kept its version and
 * timestamps (a request that fails changes nothing).
 *
 * The case format is described in tests/badinput/README.md.
 */
#include <check.h>
#include <sqlite3.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test_http.h"
#include "tests/test_load.h"

#define BI_DIR "tests/badinput"
#define BI_KEY "bi-secret-key-0123456789"
#define BI_MESH "badinput"
#define BI_MAX_BODY "524288"

/* A 3 x 3 grid of 1 m quads: 16 vertices, 9 polygons. */
static const char *bi_good_mesh(void) {
    return "{\"vertices\": [[0,0,0],[1,0,0],[2,0,0],[3,0,0],[0,0,1],[1,0,1],[2,0,1],[3,0,1],"
           "[0,0,2],[1,0,2],[2,0,2],[3,0,2],[0,0,3],[1,0,3],[2,0,3],[3,0,3]],"
           "\"polygons\": [[0,1,5,4],[1,2,6,5],[2,3,7,6],[4,5,9,8],[5,6,10,9],[6,7,11,10],"
           "[8,9,13,12],[9,10,14,13],[10,11,15,14]]}";
}

typedef struct bi_case {
    char name[128];
    char method[16];
    char path[512];
    char ctype[128];
    int status;
    char code[64];
    char message[256]; /* optional: text error.message must contain */
    char auth[16];
    int or_close;
    char *body;
    size_t body_len;
} bi_case;

/* Appends n bytes to a growing buffer. */
static void bi_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
        ck_assert_ptr_nonnull(*buf);
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Expands @REPEAT(n,text)@ markers. */
static char *bi_expand(const char *raw, size_t rawlen, size_t *outlen) {
    char *out = NULL;
    size_t len = 0, cap = 0;
    bi_append(&out, &len, &cap, "", 0);
    size_t i = 0;
    while (i < rawlen) {
        const char *m = NULL;
        if (rawlen - i >= 8 && memcmp(raw + i, "@REPEAT(", 8) == 0)
            m = raw + i;
        if (!m) {
            bi_append(&out, &len, &cap, raw + i, 1);
            i++;
            continue;
        }
        char *end;
        long n = strtol(m + 8, &end, 10);
        ck_assert_msg(*end == ',', "bad @REPEAT marker");
        const char *text = end + 1;
        const char *close = strstr(text, ")@");
        ck_assert_msg(close != NULL, "unterminated @REPEAT marker");
        for (long k = 0; k < n; k++)
            bi_append(&out, &len, &cap, text, (size_t)(close - text));
        i = (size_t)(close + 2 - raw);
    }
    *outlen = len;
    return out;
}

/* Copies a header value, truncating to the field. */
static void bi_copy(char *dst, size_t size, const char *src) {
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int bi_parse(const char *file, bi_case *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->auth, sizeof c->auth, "right");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", BI_DIR, file);
    snprintf(c->name, sizeof c->name, "%s", file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *text = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        bi_append(&text, &len, &cap, chunk, n);
    fclose(f);
    if (!text)
        return -1;
    char *p = text;
    int have_body = 0;
    while (p < text + len) {
        char *eol = memchr(p, '\n', (size_t)(text + len - p));
        if (!eol)
            eol = text + len;
        *eol = '\0';
        if (strcmp(p, "body:") == 0) {
            char *b = eol + 1;
            size_t bl = b <= text + len ? (size_t)(text + len - b) : 0;
            if (bl > 0 && b[bl - 1] == '\n')
                bl--;
            c->body = bi_expand(b, bl, &c->body_len);
            have_body = 1;
            break;
        }
        char key[32], val[512];
        if (p[0] != '#' && p[0] != '\0' && sscanf(p, "%31[^:]: %511[^\n]", key, val) == 2) {
            if (strcmp(key, "method") == 0)
                bi_copy(c->method, sizeof c->method, val);
            else if (strcmp(key, "path") == 0)
                bi_copy(c->path, sizeof c->path, val);
            else if (strcmp(key, "content-type") == 0)
                bi_copy(c->ctype, sizeof c->ctype, val);
            else if (strcmp(key, "status") == 0)
                c->status = atoi(val);
            else if (strcmp(key, "code") == 0)
                bi_copy(c->code, sizeof c->code, val);
            else if (strcmp(key, "message") == 0)
                bi_copy(c->message, sizeof c->message, val);
            else if (strcmp(key, "auth") == 0)
                bi_copy(c->auth, sizeof c->auth, val);
            else if (strcmp(key, "or-close") == 0)
                c->or_close = strcmp(val, "yes") == 0;
        }
        p = eol + 1;
    }
    free(text);
    return (have_body && c->method[0] && c->path[0] && c->status) ? 0 : -1;
}

static int bi_name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.case file names (malloc'd array of malloc'd strings). */
static size_t bi_list(char ***out) {
    DIR *d = opendir(BI_DIR);
    *out = NULL;
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".case") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
            ck_assert_ptr_nonnull(names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, bi_name_cmp);
    *out = names;
    return n;
}

/* Replaces {mesh} in a case's path. */
static void bi_path(const char *tmpl, char *out, size_t size) {
    const char *m = strstr(tmpl, "{mesh}");
    if (!m) {
        snprintf(out, size, "%s", tmpl);
        return;
    }
    snprintf(out, size, "%.*s%s%s", (int)(m - tmpl), tmpl, BI_MESH, m + 6);
}

/* The "version" and "updated_at" of the stored mesh, as text, for comparison. */
static int bi_mesh_state(tl_conn *c, char *out, size_t size) {
    tl_response r;
    if (tl_request(c, "GET", "/v1/navmeshes/" BI_MESH, NULL, NULL, 0, NULL, &r) != TL_OK)
        return -1;
    int rc = -1;
    if (r.status == 200) {
        const char *v = strstr(r.body, "\"version\"");
        const char *u = strstr(r.body, "\"updated_at\"");
        const char *p = strstr(r.body, "\"polygons\"");
        if (v && u && p) {
            snprintf(out, size, "%.20s|%.40s|%.16s", v, u, p);
            rc = 0;
        }
    }
    tl_response_free(&r);
    return rc;
}

/* An error body must be {"error": {"code": ..., "message": ...}} without file paths. */
static const char *bi_body_problem(const tl_response *r, const char *db_dir) {
    if (!r->body || !strstr(r->body, "\"error\"") || !strstr(r->body, "\"message\""))
        return "the body is not the contract's error object";
    static const char *leaks[] = {".c:",   ".db",  "/tmp",   "/work",
                                  "/home", "/usr", "sqlite", "SQLITE"};
    for (size_t i = 0; i < sizeof leaks / sizeof *leaks; i++)
        if (strstr(r->body, leaks[i]))
            return "the error message reveals a file path or an internal";
    if (db_dir[0] && strstr(r->body, db_dir))
        return "the error message contains the database directory";
    return NULL;
}

START_TEST(test_catalogue) {
    if (!tl_navd_bin()) {
        printf("badinput: %s not built: skipped\n",
               getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "bin/navd");
        return;
    }
    char **files;
    size_t nfiles = bi_list(&files);
    ck_assert_msg(nfiles >= 40, "the catalogue %s has %zu cases", BI_DIR, nfiles);

    const char *args[] = {"--api-key",    BI_KEY, "--max-body", BI_MAX_BODY, "--max-batch", "8",
                          "--max-agents", "8",    "--threads",  "2",         NULL};
    th_server srv;
    ck_assert_msg(th_start(&srv, NULL, args) == 0, "navd did not start");

    tl_conn c = {.fd = -1};
    ck_assert_int_eq(tl_connect(&c, (uint16_t)srv.port), TL_OK);
    tl_response r;
    const char *good = bi_good_mesh();
    ck_assert_int_eq(tl_request(&c, "PUT", "/v1/navmeshes/" BI_MESH, "application/json", good,
                                strlen(good), "Authorization: Bearer " BI_KEY "\r\n", &r),
                     TL_OK);
    ck_assert_msg(r.status == 201, "upload of the good mesh: %d %s", r.status, r.body);
    tl_response_free(&r);
    char before[160], after[160];
    ck_assert_int_eq(bi_mesh_state(&c, before, sizeof before), 0);

    int failures = 0;
    for (size_t i = 0; i < nfiles; i++) {
        bi_case k;
        if (bi_parse(files[i], &k) != 0) {
            printf("badinput %s: malformed case file\n", files[i]);
            failures++;
            continue;
        }
        char path[600], hdr[160] = "";
        bi_path(k.path, path, sizeof path);
        if (strcmp(k.auth, "right") == 0)
            snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", BI_KEY);
        else if (strcmp(k.auth, "wrong") == 0)
            snprintf(hdr, sizeof hdr, "Authorization: Bearer not-the-key-0123456789\r\n");
        else if (strcmp(k.auth, "prefix") == 0)
            snprintf(hdr, sizeof hdr, "Authorization: Bearer %.8s\r\n", BI_KEY);
        int rc = tl_request(&c, k.method, path, k.ctype[0] ? k.ctype : NULL, k.body, k.body_len,
                            hdr, &r);
        const char *problem = NULL;
        char got[128];
        snprintf(got, sizeof got, "transport error %d", rc);
        if (rc != TL_OK) {
            if (!(k.or_close && rc == TL_E_CLOSED))
                problem = "no response";
        } else {
            snprintf(got, sizeof got, "%d %s", r.status, tl_error_code(&r));
            if (r.status != k.status || strcmp(tl_error_code(&r), k.code) != 0)
                problem = "wrong status or code";
            else
                problem = bi_body_problem(&r, srv.dir);
            if (!problem && k.message[0] && !strstr(r.body, k.message))
                problem = "the message does not name the field";
            if (!problem && r.status == 405 && r.allow[0] == '\0')
                problem = "405 without an Allow header";
        }
        if (problem) {
            printf("badinput %s: %s: expected %d %s, got %s: %.200s\n", k.name, problem, k.status,
                   k.code, got, rc == TL_OK && r.body ? r.body : "");
            failures++;
        }
        if (rc == TL_OK)
            tl_response_free(&r);
        free(k.body);

        /* Still alive, and nothing changed. */
        ck_assert_int_eq(tl_request(&c, "GET", "/health", NULL, NULL, 0, NULL, &r), TL_OK);
        ck_assert_msg(r.status == 200, "after %s: /health answered %d", files[i], r.status);
        tl_response_free(&r);
        ck_assert_msg(bi_mesh_state(&c, after, sizeof after) == 0 && strcmp(before, after) == 0,
                      "after %s the stored mesh changed: %s -> %s", files[i], before, after);
    }

    /* No bad request created a mesh under another name. */
    ck_assert_int_eq(tl_request(&c, "GET", "/v1/navmeshes", NULL, NULL, 0, NULL, &r), TL_OK);
    ck_assert_int_eq(r.status, 200);
    const char *first = strstr(r.body, "\"name\"");
    ck_assert_msg(first && !strstr(first + 1, "\"name\""), "only one mesh is stored: %s", r.body);
    tl_response_free(&r);
    tl_close(&c);

    ck_assert_int_eq(th_stop(&srv), 0);
    printf("badinput: %zu cases, %d failed\n", nfiles, failures);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    th_cleanup(&srv);
    fflush(stdout);
    ck_assert_msg(failures == 0, "%d bad-input cases failed (see the lines above)", failures);
}
END_TEST

/* ---- limits ---- */
/*
 * A server with every limit small: each is answered with the contract's
 * error (or, for the time limits, a closed connection) and never a crash or
 * a stall. Failures are collected so one run lists every missing limit.
 */
#define LIM_MAX_BODY 4096

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

static int lim_failures;

static void lim_expect(tl_conn *c, const char *what, const char *method, const char *path,
                       const char *body, size_t len, int status, const char *code,
                       int skip_if_404) {
    tl_response r;
    int rc = tl_request(c, method, path, "application/json", body, len, NULL, &r);
    if (rc != TL_OK) {
        printf("limits %s: no answer (%d)\n", what, rc);
        lim_failures++;
        return;
    }
    if (skip_if_404 && r.status == 404 && strstr(r.body, "no such endpoint")) {
        printf("limits %s: route not served yet: skipped\n", what);
    } else if (r.status != status || (code && strcmp(tl_error_code(&r), code) != 0)) {
        printf("limits %s: expected %d %s, got %d %.200s\n", what, status, code ? code : "",
               r.status, r.body);
        lim_failures++;
    }
    tl_response_free(&r);
}

static int lim_socket(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/*
 * Sends `prefix`, then `trickle` one byte every `gap_ms`, and returns the
 * seconds until the server closed the connection (reading and discarding
 * any answer), or -1 when it was still open after `give_up` seconds.
 */
static double lim_closed_after(uint16_t port, const char *prefix, const char *trickle, int gap_ms,
                               double give_up) {
    int fd = lim_socket(port);
    if (fd < 0)
        return -2;
    double t0 = tl_now();
    if (prefix[0])
        (void)send(fd, prefix, strlen(prefix), MSG_NOSIGNAL);
    size_t i = 0, n = strlen(trickle);
    double next = t0;
    while (tl_now() - t0 < give_up) {
        if (n > 0 && tl_now() >= next) {
            if (send(fd, &trickle[i % n], 1, MSG_NOSIGNAL) < 0)
                break; /* reset: closed */
            i++;
            next = tl_now() + gap_ms / 1000.0;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0) {
            char buf[512];
            ssize_t k = recv(fd, buf, sizeof buf, 0);
            if (k <= 0)
                break;
        }
    }
    double t = tl_now() - t0;
    close(fd);
    return t < give_up ? t : -1;
}

START_TEST(test_limits) {
    if (!tl_navd_bin()) {
        printf("limits: navd binary not built: skipped\n");
        return;
    }
    const char *args[] = {"--max-body",
                          "4096",
                          "--max-polys",
                          "4",
                          "--max-verts",
                          "8",
                          "--max-verts-per-poly",
                          "4",
                          "--max-links",
                          "1",
                          "--max-batch",
                          "2",
                          "--max-agents",
                          "2",
                          "--max-nodes",
                          "16",
                          "--request-timeout",
                          "2",
                          "--connection-timeout",
                          "1",
                          "--max-connections",
                          "8",
                          "--threads",
                          "2",
                          NULL};
    th_server srv;
    ck_assert_msg(th_start(&srv, NULL, args) == 0, "navd did not start");
    tl_conn c = {.fd = -1};
    ck_assert_int_eq(tl_connect(&c, (uint16_t)srv.port), TL_OK);
    lim_failures = 0;

    /* Mesh size limits: each body breaks exactly one limit. */
    const char *fan5 = "{\"vertices\": [[0,0,0],[2,0,0],[1,0,2],[-1,0,2],[-2,0,0],[-1,0,-2],"
                       "[1,0,-2]], \"polygons\": [[0,1,2],[0,2,3],[0,3,4],[0,4,5],[0,5,6]]}";
    lim_expect(&c, "5 polygons over --max-polys 4", "PUT", "/v1/navmeshes/lim", fan5, strlen(fan5),
               422, "invalid_navmesh", 0);
    const char *v9 = "{\"vertices\": [[0,0,0],[1,0,0],[0,0,1],[5,0,0],[6,0,0],[5,0,1],"
                     "[10,0,0],[11,0,0],[10,0,1]], \"polygons\": [[0,1,2],[3,4,5],[6,7,8]]}";
    lim_expect(&c, "9 vertices over --max-verts 8", "PUT", "/v1/navmeshes/lim", v9, strlen(v9), 422,
               "invalid_navmesh", 0);
    const char *penta = "{\"vertices\": [[0,0,0],[2,0,0],[3,0,2],[1,0,3],[-1,0,2]], "
                        "\"polygons\": [[0,1,2,3,4]]}";
    lim_expect(&c, "a pentagon over --max-verts-per-poly 4", "PUT", "/v1/navmeshes/lim", penta,
               strlen(penta), 422, "invalid_navmesh", 0);
    const char *links2 = "{\"vertices\": [[0,0,0],[4,0,0],[4,0,4],[0,0,4]], \"polygons\": "
                         "[[0,1,2,3]], \"links\": [{\"start\":[1,0,1],\"end\":[3,0,3]},"
                         "{\"start\":[3,0,3],\"end\":[1,0,1]}]}";
    lim_expect(&c, "2 links over --max-links 1", "PUT", "/v1/navmeshes/lim", links2, strlen(links2),
               422, "invalid_navmesh", 0);
    char big[LIM_MAX_BODY + 600];
    memset(big, ' ', sizeof big);
    memcpy(big, "{\"vertices\": []", 15);
    big[sizeof big - 1] = '}';
    lim_expect(&c, "a body over --max-body 4096", "PUT", "/v1/navmeshes/lim", big, sizeof big, 413,
               "payload_too_large", 0);

    /* A mesh within every limit, then the query limits. */
    const char *quad = "{\"vertices\": [[0,0,0],[4,0,0],[4,0,4],[0,0,4]], \"polygons\": "
                       "[[0,1,2,3]]}";
    lim_expect(&c, "a mesh within the limits", "PUT", "/v1/navmeshes/lim", quad, strlen(quad), 201,
               NULL, 0);
    const char *batch3 = "{\"queries\": [{\"start\":[1,0,1],\"end\":[3,0,3]},{\"start\":[1,0,1],"
                         "\"end\":[3,0,3]},{\"start\":[1,0,1],\"end\":[3,0,3]}]}";
    lim_expect(&c, "3 queries over --max-batch 2", "POST", "/v1/navmeshes/lim/paths", batch3,
               strlen(batch3), 413, "payload_too_large", 1);
    const char *agents3 =
        "{\"dt\":0.1,\"agents\":[{\"id\":\"a\",\"position\":[1,0,1]},{\"id\":\"b\",\"position\":"
        "[2,0,2]},{\"id\":\"c\",\"position\":[3,0,3]}]}";
    lim_expect(&c, "3 agents over --max-agents 2", "POST", "/v1/navmeshes/lim/step", agents3,
               strlen(agents3), 413, "payload_too_large", 1);
    const char *nodes = "{\"start\":[1,0,1],\"end\":[3,0,3],\"max_nodes\":1000000}";
    {
        tl_response r;
        int rc = tl_request(&c, "POST", "/v1/navmeshes/lim/path", "application/json", nodes,
                            strlen(nodes), NULL, &r);
        if (rc != TL_OK || r.status >= 500) {
            printf("limits max_nodes above --max-nodes: %d %s\n", rc == TL_OK ? r.status : rc,
                   rc == TL_OK ? r.body : "");
            lim_failures++;
        }
        if (rc == TL_OK)
            tl_response_free(&r);
    }
    tl_close(&c);

    /* Time limits: nothing sent, a body trickled, headers trickled. */
    double t = lim_closed_after(srv.port, "", "", 0, 8);
    printf("limits: an idle connection was closed after %.1f s (--connection-timeout 1)\n", t);
    if (t < 0) {
        printf("limits: an idle connection was still open after 8 s\n");
        lim_failures++;
    }
    t = lim_closed_after(srv.port,
                         "PUT /v1/navmeshes/lim HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         "application/json\r\nContent-Length: 1000\r\n\r\n",
                         "[", 300, 10);
    printf("limits: a trickled body was cut after %.1f s (--request-timeout 2)\n", t);
    if (t < 0) {
        printf("limits: a body trickled at 3 bytes/s was still being read after 10 s\n");
        lim_failures++;
    }
    /* A header block trickled byte by byte (slowloris) must not hold a
       connection past --request-timeout: libmicrohttpd's own timeout is
       reset by every byte. */
    t = lim_closed_after(srv.port, "GET /health HTTP/1.1\r\n", "X-Slow: aaaaaaaaaaaaaaaaaa\r\n",
                         300, 8);
    printf("limits: trickled headers were cut after %.1f s (--request-timeout 2)\n", t);
    if (t < 0) {
        printf("limits: headers trickled at 3 bytes/s were still being read after 8 s\n");
        lim_failures++;
    }

    /* Connections: twice the limit at once; then the service still answers. */
    int fds[16];
    for (int i = 0; i < 16; i++)
        fds[i] = lim_socket(srv.port);
    for (int i = 0; i < 16; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    tl_conn h = {.fd = -1};
    tl_response r;
    ck_assert_int_eq(tl_connect(&h, srv.port), TL_OK);
    ck_assert_int_eq(tl_request(&h, "GET", "/health", NULL, NULL, 0, NULL, &r), TL_OK);
    ck_assert_int_eq(r.status, 200);
    tl_response_free(&r);
    tl_close(&h);

    int stop = th_stop(&srv);
    fflush(stdout);
    ck_assert_msg(stop == 0, "navd did not stop cleanly (%d), log in %s", stop, srv.log_path);
    if (lim_failures == 0) /* else the log stays for the lines above */
        th_cleanup(&srv);
    ck_assert_msg(lim_failures == 0, "%d limits not enforced (see the lines above)", lim_failures);
}
END_TEST

/* ---- storage failures ---- */
/* Runs one SQL statement on the database file from the test; SQLITE_OK or the error. */
static int st_exec(sqlite3 *h, const char *sql) {
    return sqlite3_exec(h, sql, NULL, NULL, NULL);
}

/*
 * Storage errors reach the client as the contract's error without the
 * database path or SQLite's text, change nothing, and a damaged row is
 * skipped at start-up instead of stopping the service:
 * - a write while another connection holds the database's write lock past
 *   the store's busy timeout is answered 503 unavailable;
 * - a stored blob overwritten with garbage is not loaded (404) while the
 *   other mesh is, and /health answers.
 */
START_TEST(test_storage_errors) {
    if (!tl_navd_bin()) {
        printf("storage errors: navd binary not built: skipped\n");
        return;
    }
    const char *args[] = {"--threads", "2", NULL};
    th_server srv;
    ck_assert_int_eq(th_start(&srv, NULL, args), 0);
    tl_conn c = {.fd = -1};
    ck_assert_int_eq(tl_connect(&c, (uint16_t)srv.port), TL_OK);
    tl_response r;
    const char *good = bi_good_mesh();
    const char *names[] = {"/v1/navmeshes/keep", "/v1/navmeshes/damaged"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(
            tl_request(&c, "PUT", names[i], "application/json", good, strlen(good), NULL, &r),
            TL_OK);
        ck_assert_int_eq(r.status, 201);
        tl_response_free(&r);
    }

    /* Hold the write lock past the store's busy timeout (5 s). */
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(srv.db, &h), SQLITE_OK);
    ck_assert_int_eq(st_exec(h, "BEGIN IMMEDIATE"), SQLITE_OK);
    c.timeout_ms = 30000;
    ck_assert_int_eq(tl_request(&c, "PUT", "/v1/navmeshes/keep", "application/json", good,
                                strlen(good), NULL, &r),
                     TL_OK);
    ck_assert_msg(r.status == 503 && strcmp(tl_error_code(&r), "unavailable") == 0,
                  "a write against a locked database: %d %s", r.status, r.body);
    const char *problem = bi_body_problem(&r, srv.dir);
    ck_assert_msg(problem == NULL, "%s: %s", problem ? problem : "", r.body);
    tl_response_free(&r);
    ck_assert_int_eq(st_exec(h, "ROLLBACK"), SQLITE_OK);
    ck_assert_int_eq(tl_request(&c, "GET", "/v1/navmeshes/keep", NULL, NULL, 0, NULL, &r), TL_OK);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"version\":1"),
                  "the failed write changed the mesh: %s", r.body);
    tl_response_free(&r);
    tl_close(&c);
    ck_assert_int_eq(th_stop(&srv), 0);

    /* Damage one row while the service is down, then restart. */
    ck_assert_int_eq(
        st_exec(h,
                "UPDATE navmeshes SET blob = X'4E41564D0100000007000000' WHERE name = 'damaged'"),
        SQLITE_OK);
    sqlite3_close(h);
    ck_assert_int_eq(th_restart(&srv, args), 0);
    ck_assert_int_eq(tl_connect(&c, (uint16_t)srv.port), TL_OK);
    ck_assert_int_eq(tl_request(&c, "GET", "/v1/navmeshes/damaged", NULL, NULL, 0, NULL, &r),
                     TL_OK);
    ck_assert_msg(r.status == 404, "a damaged row was served: %d %s", r.status, r.body);
    problem = bi_body_problem(&r, srv.dir);
    ck_assert_msg(problem == NULL, "%s: %s", problem ? problem : "", r.body);
    tl_response_free(&r);
    ck_assert_int_eq(tl_request(&c, "GET", "/v1/navmeshes/keep", NULL, NULL, 0, NULL, &r), TL_OK);
    ck_assert_int_eq(r.status, 200);
    tl_response_free(&r);
    ck_assert_int_eq(tl_request(&c, "GET", "/health", NULL, NULL, 0, NULL, &r), TL_OK);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"navmeshes\":1"), "health: %s", r.body);
    tl_response_free(&r);
    tl_close(&c);
    ck_assert_int_eq(th_stop(&srv), 0);
    th_cleanup(&srv);
}
END_TEST

extern Suite *badinput_suite(void);
Suite *badinput_suite(void) {
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("catalogue");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_catalogue);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_set_timeout(tl, 120);
    tcase_add_test(tl, test_limits);
    tcase_add_test(tl, test_storage_errors);
    suite_add_tcase(s, tl);
    return s;
}
