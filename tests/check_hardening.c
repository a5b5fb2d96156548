/*
 * check_hardening: what a hostile or careless client can do to a running
 * navd (issue 11), against the real binary: NUL bytes hidden in the path,
 * names that are directories, HTTP/1.1 without Host, writes from other
 * machines without a key, a flood of idle connections from one address, and
 * a client holding a half-sent request while the service is told to stop.
 * Each test fails on the service as it was before these limits existed.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "service/svc_config.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

extern Suite *hardening_suite(void);

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A TCP connection to 127.0.0.1:port whose source address is src
   (127.0.0.x: every loopback address is this machine's). -1 on failure. */
static int connect_from(const char *src, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &d.sin_addr);
    if (connect(fd, (struct sockaddr *)&d, sizeof d) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Opens a connection and sends the start of a request, leaving it
   half-sent; returns the descriptor. */
static int hold_partial(int port, const char *start) {
    int fd = connect_from("127.0.0.1", port);
    ck_assert_int_ge(fd, 0);
    size_t n = strlen(start);
    ck_assert_int_eq((int)write(fd, start, n), (int)n);
    return fd;
}

/* Sends raw bytes on a new connection and reads until the server closes
   it (or 5 s); returns the status code of the first response line. */
static int raw_status(int port, const char *req, size_t len, char *body, size_t body_size) {
    int fd = connect_from("127.0.0.1", port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq((int)write(fd, req, len), (int)len);
    char buf[8192];
    size_t got = 0;
    double t0 = now_s();
    while (got + 1 < sizeof buf && now_s() - t0 < 5) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    int status = 0;
    sscanf(buf, "HTTP/1.%*d %d", &status);
    if (body) {
        const char *b = strstr(buf, "\r\n\r\n");
        snprintf(body, body_size, "%s", b ? b + 4 : "");
    }
    return status;
}

START_TEST(t_nul_in_path) {
    th_server s;
    const char *extra[] = {"--demo", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    char body[4096];
    static const char get[] = "GET /health%00junk HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, get, sizeof get - 1, body, sizeof body), 400);
    ck_assert_msg(strstr(body, "\"bad_request\"") && strstr(body, "NUL"), "%s", body);
    /* Before: the path was cut at the NUL, so this deleted "demo". */
    static const char del[] =
        "DELETE /v1/navmeshes/demo%00-sandbox HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, del, sizeof del - 1, body, sizeof body), 400);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/demo", NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    th_response_free(&r);
    /* Lower-case hex is the same byte. */
    static const char put[] = "PUT /v1/navmeshes/victim%00ignored HTTP/1.1\r\nHost: x\r\n"
                              "Content-Type: application/json\r\nContent-Length: 2\r\n"
                              "Connection: close\r\n\r\n{}";
    ck_assert_int_eq(raw_status(s.port, put, sizeof put - 1, body, sizeof body), 400);
    ck_assert_int_eq(th_json(s.port, "GET", "/v1/navmeshes/victim", NULL, &r), 0);
    ck_assert_int_eq(r.status, 404);
    th_response_free(&r);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

START_TEST(t_dot_names_and_host) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    char body[4096];
    /* Sent raw: a client library would fold the dots away. */
    static const char *const dots[] = {
        "GET /v1/navmeshes/. HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET /v1/navmeshes/.. HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ("PUT /v1/navmeshes/.. HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: 2\r\nConnection: close\r\n\r\n{}"), /* one request, split for width */
    };
    for (size_t i = 0; i < sizeof dots / sizeof dots[0]; i++) {
        ck_assert_int_eq(raw_status(s.port, dots[i], strlen(dots[i]), body, sizeof body), 400);
        ck_assert_msg(strstr(body, "\"bad_request\""), "%s", body);
    }
    /* A name with dots inside stays valid. */
    static const char okname[] =
        "GET /v1/navmeshes/a..b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, okname, sizeof okname - 1, body, sizeof body), 404);

    static const char nohost[] = "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, nohost, sizeof nohost - 1, body, sizeof body), 400);
    ck_assert_msg(strstr(body, "Host"), "%s", body);
    /* HTTP/1.0 has no Host requirement. */
    static const char old[] = "GET /health HTTP/1.0\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, old, sizeof old - 1, body, sizeof body), 200);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

START_TEST(t_loopback_peers) {
    struct sockaddr_in in = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    static const char *const v4[][2] = {
        {"127.0.0.1", "1"},   {"127.255.3.4", "1"}, {"10.0.0.1", "0"},
        {"192.168.1.1", "0"}, {"0.0.0.0", "0"},     {"128.0.0.1", "0"},
    };
    for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
        ck_assert_int_eq(inet_pton(AF_INET, v4[i][0], &in.sin_addr), 1);
        ck_assert_msg(api_peer_is_loopback((struct sockaddr *)&in) == (v4[i][1][0] == '1'), "%s",
                      v4[i][0]);
    }
    static const char *const v6[][2] = {
        {"::1", "1"}, {"::ffff:127.0.0.1", "1"}, {"::ffff:10.1.2.3", "0"}, {"2001:db8::1", "0"},
        {"::", "0"},  {"fe80::1", "0"},
    };
    for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
        ck_assert_int_eq(inet_pton(AF_INET6, v6[i][0], &in6.sin6_addr), 1);
        ck_assert_msg(api_peer_is_loopback((struct sockaddr *)&in6) == (v6[i][1][0] == '1'), "%s",
                      v6[i][0]);
    }
    ck_assert(!api_peer_is_loopback(NULL));

    /* The default is to listen on loopback only. */
    svc_config cfg;
    char *argv[] = {"navd", NULL};
    FILE *devnull = fopen("/dev/null", "w");
    unsetenv("NAVD_BIND");
    ck_assert_int_eq(svc_config_parse(&cfg, 1, argv, devnull), SVC_CONFIG_OK);
    ck_assert_str_eq(cfg.bind, "127.0.0.1");
    ck_assert(!cfg.allow_open_writes);
    ck_assert_int_eq((int)cfg.max_connections_per_ip, 64);
    fclose(devnull);
}
END_TEST

/* Loopback writers need no key (make run's own use): a PUT and a DELETE
   from 127.0.0.1 on a server with no key succeed. The 403 side needs a
   peer on another machine, which these tests may not create: the decision
   is api_peer_is_loopback, tested above. */
START_TEST(t_loopback_writes_work) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    th_response r;
    const char *sq = "{\"vertices\":[[0,0,0],[4,0,0],[4,0,4],[0,0,4]],\"polygons\":[[0,3,2,1]]}";
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/sq", sq, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    ck_assert_int_eq(th_json(s.port, "DELETE", "/v1/navmeshes/sq", NULL, &r), 0);
    ck_assert_int_eq(r.status, 204);
    th_response_free(&r);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* Raises the soft descriptor limit to the hard one (the flood needs more
   than the usual 1,024); returns the new soft limit. */
static rlim_t raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
}

/* 1,100 idle connections from one address (127.0.0.2): only
   --max-connections-per-ip are kept, so /health from another client still
   answers at once. Before, they filled the 1,024 slots and /health timed
   out. */
START_TEST(t_idle_flood_one_address) {
    if (raise_fd_limit() < 1300) {
        printf("hardening: idle flood skipped: fewer than 1,300 file descriptors allowed\n");
        return;
    }
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    enum { FLOOD = 1100 };
    static int fds[FLOOD];
    int opened = 0;
    for (int i = 0; i < FLOOD; i++) {
        fds[i] = connect_from("127.0.0.2", s.port);
        if (fds[i] >= 0)
            opened++;
    }
    ck_assert_int_gt(opened, 1000); /* the kernel's backlog accepts them; navd decides */
    usleep(300 * 1000);
    /* Every probe must answer well within a second (the target is
       100 ms; the bound is generous for a loaded machine, and the old
       service never answered at all). */
    double worst = 0;
    for (int k = 0; k < 5; k++) {
        double t0 = now_s();
        th_response r;
        int rc = th_json(s.port, "GET", "/health", NULL, &r);
        double dt = now_s() - t0;
        ck_assert_msg(rc == 0 && r.status == 200, "probe %d: rc %d status %d", k, rc, r.status);
        th_response_free(&r);
        if (dt > worst)
            worst = dt;
    }
    printf(
        "hardening: /health with %d idle connections from 127.0.0.2: worst of 5 probes %.1f ms\n",
        opened, worst * 1e3);
    ck_assert_msg(worst < 1.0, "worst /health %.3f s", worst);
    /* The 65th connection from the flooding address was closed by navd:
       reading the last one gives end-of-file, not a wait. */
    char c;
    struct pollfd p = {.fd = fds[FLOOD - 1], .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 2000), 1);
    ck_assert_int_le((int)read(fds[FLOOD - 1], &c, 1), 0);
    for (int i = 0; i < FLOOD; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* SIGTERM while a client holds a half-sent request: navd is gone within
   5 s (it took 11-12 s, past Docker's 10 s grace). */
START_TEST(t_sigterm_with_partial_request) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    int fd =
        hold_partial(s.port, "POST /v1/navmeshes/x/path HTTP/1.1\r\nHost: x\r\n"
                             "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"st");
    usleep(200 * 1000);
    double t0 = now_s();
    ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(s.pid, &status, WNOHANG)) == 0 && now_s() - t0 < 15)
        usleep(20 * 1000);
    double dt = now_s() - t0;
    close(fd);
    ck_assert_int_eq(got, s.pid);
    s.pid = 0;
    printf("hardening: SIGTERM with a half-sent request: exited in %.2f s\n", dt);
    ck_assert_msg(dt < 5.0, "navd took %.2f s to stop", dt);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    th_cleanup(&s);
}
END_TEST

/* A step or a batch whose work outgrows --request-deadline-ms stops there:
   the step answers 503 naming the deadline at once (a 10,000-agent step
   used to run for 20 s and hold a worker), the batch answers the slots it
   finished and marks the rest. */
START_TEST(t_request_deadline) {
    th_server s;
    const char *extra[] = {"--request-deadline-ms", "5", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    enum { N = 150, AGENTS = 3000, QUERIES = 1000 };
    char *mesh = fx_grid_json(N);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/grid", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(mesh);

    char *body = fx_step_body(AGENTS, N);
    double t0 = now_s();
    ck_assert_int_eq(th_json(s.port, "POST", "/v1/navmeshes/grid/step", body, &r), 0);
    double dt = now_s() - t0;
    printf("hardening: a %d-agent step past a 5 ms deadline answered %d in %.0f ms\n", AGENTS,
           r.status, dt * 1e3);
    ck_assert_msg(r.status == 503 && strstr(r.body, "\"unavailable\"") &&
                      strstr(r.body, "deadline"),
                  "%d %.200s", r.status, r.body);
    th_response_free(&r);
    free(body);

    size_t cap = (size_t)QUERIES * 96 + 64;
    size_t len = 0;
    body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "{\"cache\":false,\"queries\":[");
    for (int i = 0; i < QUERIES; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"start\":[0.5,0,%d.5],\"end\":[%d.5,0,%d.5]}", i ? "," : "",
                                i % N, N - 1, N - 1 - i % N);
    snprintf(body + len, cap - len, "]}");
    t0 = now_s();
    ck_assert_int_eq(th_json(s.port, "POST", "/v1/navmeshes/grid/paths", body, &r), 0);
    printf("hardening: a %d-query batch with a 5 ms deadline answered %d in %.0f ms\n", QUERIES,
           r.status, (now_s() - t0) * 1e3);
    ck_assert_int_eq(r.status, 200);
    /* The first slot ran; the last one was marked. */
    const char *first = strstr(r.body, "{\"results\":[{");
    ck_assert_ptr_nonnull(first);
    ck_assert_msg(strncmp(first + 13, "\"status\"", 8) == 0, "%.200s", first);
    const char *last = strstr(r.body, "queries[999] was not run");
    ck_assert_msg(last != NULL, "the last slot was answered within 5 ms? %.200s",
                  r.body + (r.body_len > 200 ? r.body_len - 200 : 0));
    th_response_free(&r);
    free(body);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* A client sending steps back to back until told to stop, noting when
   each was sent and answered. */
enum { LANE_MAX_STEPS = 256 };
typedef struct lane_job {
    int port;
    const char *body;
    atomic_int *stop;
    int n, bad_status;
    double sent[LANE_MAX_STEPS], done[LANE_MAX_STEPS];
} lane_job;

static void *lane_steps(void *arg) {
    lane_job *j = arg;
    while (!atomic_load(j->stop) && j->n < LANE_MAX_STEPS) {
        th_response r;
        double t0 = now_s();
        if (th_json(j->port, "POST", "/v1/navmeshes/grid/step", j->body, &r) == 0) {
            if (r.status != 200 && r.status != 503)
                j->bad_status = r.status;
            th_response_free(&r);
        }
        j->sent[j->n] = t0;
        j->done[j->n++] = now_s();
    }
    return NULL;
}

/* /health and /metrics have a lane of their own: while heavy steps keep
   every query thread busy, they answer at once. Before, the steps ran on
   the HTTP workers and /health waited for one to finish. Four clients send
   10,000-agent steps back to back to the two query threads (two running,
   two queued at any time) for the whole probing, and each probe is checked
   to have run while at least two steps were in flight. */
START_TEST(t_health_lane) {
    th_server s;
    const char *extra[] = {"--threads", "2", "--request-deadline-ms", "3000", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    char *mesh = fx_grid_json(150);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/grid", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(mesh);
    /* One target per agent: no agents share a search. */
    char *body = fx_step_body_targets(10000, 150, 10000);
    enum { JOBS = 4, PROBES = 6 };
    pthread_t th[JOBS];
    static lane_job jobs[JOBS];
    atomic_int stop = 0;
    for (int i = 0; i < JOBS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].port = s.port;
        jobs[i].body = body;
        jobs[i].stop = &stop;
        ck_assert_int_eq(pthread_create(&th[i], NULL, lane_steps, &jobs[i]), 0);
    }
    usleep(700 * 1000); /* the first steps are parsed and running */
    double worst = 0, p0[PROBES], p1[PROBES];
    for (int k = 0; k < PROBES; k++) {
        const char *path = k % 2 ? "/metrics" : "/health";
        p0[k] = now_s();
        ck_assert_int_eq(th_json(s.port, "GET", path, NULL, &r), 0);
        p1[k] = now_s();
        ck_assert_int_eq(r.status, 200);
        th_response_free(&r);
        if (p1[k] - p0[k] > worst)
            worst = p1[k] - p0[k];
        usleep(100 * 1000);
    }
    atomic_store(&stop, 1);
    int steps = 0, least = JOBS;
    for (int i = 0; i < JOBS; i++) {
        pthread_join(th[i], NULL);
        steps += jobs[i].n;
        ck_assert_msg(jobs[i].bad_status == 0, "a step answered %d", jobs[i].bad_status);
    }
    /* The probes really ran beside the steps: at least two were in flight
       (sent before the probe, answered after it) during every probe. */
    for (int k = 0; k < PROBES; k++) {
        int in_flight = 0;
        for (int i = 0; i < JOBS; i++)
            for (int n = 0; n < jobs[i].n; n++)
                in_flight += jobs[i].sent[n] <= p0[k] && jobs[i].done[n] >= p1[k];
        if (in_flight < least)
            least = in_flight;
        ck_assert_msg(in_flight >= 2, "probe %d ran beside %d steps only", k, in_flight);
    }
    printf("hardening: /health and /metrics while 4 clients sent %d 10,000-agent steps to 2 query "
           "threads (at least %d in flight at every probe): worst %.1f ms\n",
           steps, least, worst * 1e3);
    /* The target is 100 ms; the bound is generous for a loaded 2-core
       machine, and the old service took seconds. */
    ck_assert_msg(worst < 1.0, "worst probe %.3f s", worst);
    free(body);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* Query bodies have their own, smaller limit (--max-query-body), refused
   from Content-Length before a byte is read; uploads keep --max-body. */
START_TEST(t_query_body_limit) {
    th_server s;
    const char *extra[] = {"--max-query-body", "8K", "--max-body", "1M", "--demo", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    char body[4096];
    /* Only the head is sent: the answer must not wait for 10 KB. */
    static const char head[] = "POST /v1/navmeshes/demo/path HTTP/1.1\r\nHost: x\r\n"
                               "Content-Type: application/json\r\nContent-Length: 10240\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, head, sizeof head - 1, body, sizeof body), 413);
    ck_assert_msg(strstr(body, "--max-query-body"), "%s", body);
    /* A 10 KB upload is fine: uploads are held to --max-body (1 MiB here). */
    char *mesh = fx_grid_json(24);
    ck_assert_int_gt((int)strlen(mesh), 8192);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/g", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(mesh);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* The bodies of all requests in flight share --max-body-memory: while one
   client holds a 900 KB upload half-sent, a second 200 KB upload is refused
   with 503 before its body is read, and accepted once the first is done. */
START_TEST(t_body_memory_budget) {
    th_server s;
    const char *extra[] = {"--max-body-memory", "1M", "--max-body", "4M", NULL};
    ck_assert_int_eq(th_start(&s, NULL, extra), 0);
    int a =
        hold_partial(s.port, "PUT /v1/navmeshes/big HTTP/1.1\r\nHost: x\r\n"
                             "Content-Type: application/json\r\nContent-Length: 921600\r\n\r\n{");
    usleep(300 * 1000);
    char body[4096];
    static const char head_b[] = "PUT /v1/navmeshes/other HTTP/1.1\r\nHost: x\r\n"
                                 "Content-Type: application/json\r\nContent-Length: 204800\r\n\r\n";
    ck_assert_int_eq(raw_status(s.port, head_b, sizeof head_b - 1, body, sizeof body), 503);
    ck_assert_msg(strstr(body, "--max-body-memory"), "%s", body);
    close(a); /* the first client gives up: its reservation is released */
    usleep(300 * 1000);
    char *mesh = fx_grid_json(40); /* about 60 KB */
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/other", mesh, &r), 0);
    ck_assert_msg(r.status == 201, "%d %.200s", r.status, r.body);
    th_response_free(&r);
    free(mesh);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

/* debug in a batch is capped: 1,000 debug queries whose expanded sets add up
   past 100,000 ids get "expanded_omitted" in the later slots instead of an
   answer that grows without bound (0.11 MB in once gave 158 MB out). */
START_TEST(t_batch_debug_cap) {
    th_server s;
    ck_assert_int_eq(th_start(&s, NULL, NULL), 0);
    char *mesh = fx_grid_json(150);
    th_response r;
    ck_assert_int_eq(th_json(s.port, "PUT", "/v1/navmeshes/grid", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    free(mesh);
    size_t cap = 1000 * 96 + 64, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "{\"debug\":true,\"cache\":false,\"queries\":[");
    for (int i = 0; i < 1000; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"start\":[0.5,0,%d.5],\"end\":[149.5,0,%d.5]}", i ? "," : "",
                                i % 150, 149 - i % 150);
    snprintf(body + len, cap - len, "]}");
    ck_assert_int_eq(th_json(s.port, "POST", "/v1/navmeshes/grid/paths", body, &r), 0);
    ck_assert_int_eq(r.status, 200);
    /* Count the ids actually returned in "expanded" arrays. */
    size_t ids = 0;
    for (const char *p = strstr(r.body, "\"expanded\":["); p; p = strstr(p + 1, "\"expanded\":[")) {
        const char *q = p + 12;
        if (*q != ']')
            ids++;
        for (; *q && *q != ']'; q++)
            ids += *q == ',';
    }
    printf("hardening: a 1,000-query debug batch returned %zu expanded ids in %zu bytes\n", ids,
           r.body_len);
    ck_assert_msg(strstr(r.body, "\"expanded_omitted\":true"), "no slot was capped (%zu ids)", ids);
    ck_assert_uint_le(ids, 100000);
    th_response_free(&r);
    free(body);
    th_stop(&s);
    th_cleanup(&s);
}
END_TEST

Suite *hardening_suite(void) {
    Suite *s = suite_create("hardening");
    TCase *t = tcase_create("hostile");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, t_nul_in_path);
    tcase_add_test(t, t_dot_names_and_host);
    tcase_add_test(t, t_loopback_peers);
    tcase_add_test(t, t_loopback_writes_work);
    tcase_add_test(t, t_idle_flood_one_address);
    tcase_add_test(t, t_sigterm_with_partial_request);
    tcase_add_test(t, t_request_deadline);
    tcase_add_test(t, t_health_lane);
    tcase_add_test(t, t_query_body_limit);
    tcase_add_test(t, t_body_memory_budget);
    tcase_add_test(t, t_batch_debug_cap);
    suite_add_tcase(s, t);
    return s;
}
