/*
 * test_http: process control of navd and a tiny HTTP/1.1 client for the
 * integration suites (see test_http.h). Blocking sockets with a receive
 * timeout, so a server that stops answering fails the test instead of
 * hanging it.
 */
#define _GNU_SOURCE /* strcasestr */
#include "test_http.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

char *th_log(const th_server *s) {
    return read_all(s->log_path);
}

static int spawn(th_server *s, const char *const *extra) {
    const char *bin = getenv("NAVD_BIN");
    if (!bin || !*bin)
        bin = "bin/navd";
    const char *argv[48];
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--db";
    argv[n++] = s->db;
    argv[n++] = "--threads";
    argv[n++] = "4";
    for (int i = 0; extra && extra[i] && n < 46; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    /* Truncate the log so the port line read below is this run's. */
    int logfd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (logfd < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(logfd);
        return -1;
    }
    if (pid == 0) {
        dup2(logfd, STDERR_FILENO);
        dup2(logfd, STDOUT_FILENO);
        close(logfd);
        execv(bin, (char *const *)argv);
        fprintf(stderr, "exec %s failed: %s\n", bin, strerror(errno));
        _exit(127);
    }
    close(logfd);
    s->pid = pid;
    s->port = 0;
    /* Wait for the port line (sanitizer builds start slowly). */
    for (int i = 0; i < 600 && !s->port; i++) {
        char *log = th_log(s);
        const char *line = log ? strstr(log, "navd: listening on ") : NULL;
        if (line && strchr(line, '\n')) {
            const char *colon = strrchr(line, ':'); /* bind may be IPv6: the port is last */
            const char *nl = strchr(line, '\n');
            for (const char *p = line; p < nl; p++)
                if (*p == ':')
                    colon = p;
            s->port = atoi(colon + 1);
        }
        free(log);
        if (s->port)
            break;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
        sleep_ms(50);
    }
    if (!s->port)
        return -1;
    for (int i = 0; i < 200; i++) {
        th_response r;
        int ok =
            th_request(s->port, "GET", "/health", NULL, NULL, 0, NULL, &r) == 0 && r.status == 200;
        th_response_free(&r);
        if (ok)
            return 0;
        sleep_ms(50);
    }
    return -1;
}

int th_start(th_server *s, const char *db, const char *const *extra) {
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/navd-test-XXXXXX");
    if (!mkdtemp(s->dir))
        return -1;
    if (db)
        snprintf(s->db, sizeof s->db, "%s", db);
    else
        snprintf(s->db, sizeof s->db, "%s/navd.db", s->dir);
    snprintf(s->log_path, sizeof s->log_path, "%s/navd.log", s->dir);
    return spawn(s, extra);
}

int th_restart(th_server *s, const char *const *extra) {
    return spawn(s, extra);
}

static int wait_exit(pid_t pid, int timeout_ms, int *status) {
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0)
            return -1;
        sleep_ms(10);
    }
    return -1;
}

/* A failed stop is rare and timing-bound, so the failing run is the only
   evidence: say how navd ended and print the end of its log on stderr. */
static void report_bad_exit(th_server *s, const char *why) {
    fprintf(stderr, "navd (log %s) %s; end of its log:\n", s->log_path, why);
    char *log = th_log(s);
    if (log) {
        size_t n = strlen(log);
        fputs(n > 2000 ? log + n - 2000 : log, stderr);
        free(log);
    }
}

int th_stop(th_server *s) {
    if (s->pid <= 0)
        return -1;
    int status = 0;
    kill(s->pid, SIGTERM);
    if (wait_exit(s->pid, 30000, &status) != 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &status, 0);
        s->pid = 0;
        report_bad_exit(s, "did not stop within 30 s of SIGTERM");
        return -1;
    }
    s->pid = 0;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    char why[64];
    snprintf(why, sizeof why, "died of signal %d after SIGTERM", WTERMSIG(status));
    report_bad_exit(s, why);
    return -1;
}

void th_kill(th_server *s) {
    if (s->pid <= 0)
        return;
    int status;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
    s->pid = 0;
}

void th_cleanup(th_server *s) {
    if (!s->dir[0])
        return;
    DIR *d = opendir(s->dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[600];
            snprintf(p, sizeof p, "%s/%s", s->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
}

/* ---- client ---- */

int th_connect(th_conn *c, int port) {
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    c->port = port;
    if (c->fd < 0)
        return -1;
    struct timeval tv = {30, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

void th_close(th_conn *c) {
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A growable receive buffer over the socket. */
typedef struct rbuf {
    int fd;
    char *p;
    size_t len, cap, pos;
    int eof;
} rbuf;

static int fill(rbuf *b) {
    if (b->eof)
        return -1;
    if (b->cap - b->len < 4096) {
        size_t cap = b->cap ? b->cap * 2 : 16384;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    ssize_t r;
    do
        r = recv(b->fd, b->p + b->len, b->cap - b->len - 1, 0);
    while (r < 0 && errno == EINTR);
    if (r <= 0) {
        b->eof = 1;
        return -1;
    }
    b->len += (size_t)r;
    b->p[b->len] = '\0';
    return 0;
}

/* Ensures n unread bytes are buffered. */
static int need(rbuf *b, size_t n) {
    while (b->len - b->pos < n)
        if (fill(b) != 0)
            return -1;
    return 0;
}

/* Reads one CRLF-terminated line; returns its start (NUL-terminated in place). */
static char *read_line(rbuf *b) {
    for (;;) {
        char *start = b->p ? b->p + b->pos : NULL;
        char *nl = start ? memchr(start, '\n', b->len - b->pos) : NULL;
        if (nl) {
            size_t off = b->pos;
            b->pos = (size_t)(nl - b->p) + 1;
            *nl = '\0';
            if (nl > b->p + off && nl[-1] == '\r')
                nl[-1] = '\0';
            return b->p + off;
        }
        if (fill(b) != 0)
            return NULL;
    }
}

static const char *find_header(const char *headers, const char *name, char *buf, size_t size) {
    size_t n = strlen(name);
    for (const char *line = headers; line && *line;) {
        const char *end = strstr(line, "\r\n");
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > n && line[n] == ':' && strncasecmp(line, name, n) == 0) {
            const char *v = line + n + 1;
            while (*v == ' ')
                v++;
            size_t vl = len - (size_t)(v - line);
            snprintf(buf, size, "%.*s", (int)vl, v);
            return buf;
        }
        line = end ? end + 2 : NULL;
    }
    return NULL;
}

const char *th_header(const th_response *r, const char *name, char *buf, size_t size) {
    return r->headers ? find_header(r->headers, name, buf, size) : NULL;
}

int th_conn_request(th_conn *c, const char *method, const char *path, const char *content_type,
                    const char *body, size_t body_len, const char *const *headers,
                    th_response *out) {
    memset(out, 0, sizeof *out);
    size_t hcap = 1024 + strlen(path);
    for (int i = 0; headers && headers[i]; i++)
        hcap += strlen(headers[i]) + 2;
    char *head = malloc(hcap);
    if (!head)
        return -1;
    int n = snprintf(head, hcap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", method, path, c->port);
    if (content_type)
        n += snprintf(head + n, hcap - (size_t)n, "Content-Type: %s\r\n", content_type);
    if (body)
        n += snprintf(head + n, hcap - (size_t)n, "Content-Length: %zu\r\n", body_len);
    for (int i = 0; headers && headers[i]; i++)
        n += snprintf(head + n, hcap - (size_t)n, "%s\r\n", headers[i]);
    n += snprintf(head + n, hcap - (size_t)n, "\r\n");
    int rc = send_all(c->fd, head, (size_t)n);
    free(head);
    /* A server may answer (413, 401...) and close before taking the body: read anyway. */
    if (rc == 0 && body && body_len)
        send_all(c->fd, body, body_len);

    if (rc != 0)
        return -1;
    return th_conn_read(c, method, out);
}

int th_conn_read(th_conn *c, const char *method, th_response *out) {
    memset(out, 0, sizeof *out);
    rbuf b = {.fd = c->fd};
    char *line = read_line(&b);
    if (!line || sscanf(line, "HTTP/1.%*d %d", &out->status) != 1) {
        free(b.p);
        out->status = 0;
        return -1;
    }
    size_t hlen = 0, hcap2 = 1024;
    out->headers = malloc(hcap2);
    out->headers[0] = '\0';
    while ((line = read_line(&b)) && *line) {
        size_t l = strlen(line);
        while (hlen + l + 3 > hcap2) {
            hcap2 *= 2;
            out->headers = realloc(out->headers, hcap2);
        }
        memcpy(out->headers + hlen, line, l);
        memcpy(out->headers + hlen + l, "\r\n", 3);
        hlen += l + 2;
    }
    if (!line) {
        free(b.p);
        return -1;
    }
    char v[64];
    size_t blen = 0, bcap = 1024;
    out->body = malloc(bcap);
    int ok = 0;
    if (find_header(out->headers, "Transfer-Encoding", v, sizeof v) && strcasestr(v, "chunked")) {
        for (;;) {
            char *sz = read_line(&b);
            if (!sz)
                break;
            size_t chunk = strtoul(sz, NULL, 16);
            if (chunk == 0) {
                while ((sz = read_line(&b)) && *sz) /* trailers */
                    ;
                ok = 1;
                break;
            }
            if (need(&b, chunk + 2) != 0)
                break;
            while (blen + chunk + 1 > bcap)
                bcap *= 2;
            out->body = realloc(out->body, bcap);
            memcpy(out->body + blen, b.p + b.pos, chunk);
            blen += chunk;
            b.pos += chunk + 2;
        }
    } else if (find_header(out->headers, "Content-Length", v, sizeof v)) {
        size_t len = strtoul(v, NULL, 10);
        if (strcmp(method, "HEAD") == 0 || out->status == 204 || out->status == 304)
            len = 0;
        if (need(&b, len) == 0) {
            if (len + 1 > bcap)
                out->body = realloc(out->body, bcap = len + 1);
            memcpy(out->body, b.p + b.pos, len);
            blen = len;
            ok = 1;
        }
    } else if (out->status == 204 || out->status == 304 || strcmp(method, "HEAD") == 0) {
        ok = 1;
    } else {
        while (fill(&b) == 0)
            ;
        blen = b.len - b.pos;
        if (blen + 1 > bcap)
            out->body = realloc(out->body, bcap = blen + 1);
        memcpy(out->body, b.p + b.pos, blen);
        ok = 1;
    }
    out->body[blen] = '\0';
    out->body_len = blen;
    free(b.p);
    return ok ? 0 : -1;
}

int th_request(int port, const char *method, const char *path, const char *content_type,
               const char *body, size_t body_len, const char *const *headers, th_response *out) {
    th_conn c;
    memset(out, 0, sizeof *out);
    if (th_connect(&c, port) != 0)
        return -1;
    int rc = th_conn_request(&c, method, path, content_type, body, body_len, headers, out);
    th_close(&c);
    return rc;
}

int th_json(int port, const char *method, const char *path, const char *body, th_response *out) {
    return th_request(port, method, path, body ? "application/json" : NULL, body,
                      body ? strlen(body) : 0, NULL, out);
}

void th_response_free(th_response *r) {
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof *r);
}
