/*
 * test_http: drive the real navd binary from tests.
 *
 * th_start runs $NAVD_BIN (absolute path, set by the Makefile; bin/navd
 * otherwise) with --port 0 --bind 127.0.0.1 and a database in a fresh temp
 * directory, sends its stderr to a file there (so no pipe can fill up),
 * reads the real port from the "navd: listening on <bind>:<port>" line and
 * waits for /health. A minimal blocking HTTP/1.1 client talks to it, with
 * keep-alive connections (th_conn) or one connection per request.
 */
#ifndef TEST_HTTP_H
#define TEST_HTTP_H

#include <stddef.h>
#include <sys/types.h>

typedef struct th_server {
    pid_t pid;
    int port;
    char dir[256];      /* temp directory owned by the server (removed by th_cleanup) */
    char db[320];       /* database path */
    char log_path[320]; /* the server's stderr */
} th_server;

/*
 * Starts navd. db: NULL for <dir>/navd.db in a new temp dir, else that path
 * (its directory is not removed). extra: NULL-terminated extra arguments.
 * Returns 0 when the server answers /health.
 */
int th_start(th_server *s, const char *db, const char *const *extra);
/* Starts again on the same database (after a stop or kill), keeping dir. */
int th_restart(th_server *s, const char *const *extra);
/* SIGTERM and wait; returns the exit status (0..255) or -1 when it died by a signal / timed out. */
int th_stop(th_server *s);
/* SIGKILL and wait. */
void th_kill(th_server *s);
/* Removes the temp directory (after stop/kill). */
void th_cleanup(th_server *s);
/* The server's log so far (malloc'd) for assertions on log lines. */
char *th_log(const th_server *s);

typedef struct th_response {
    int status;    /* 0 when no response was read */
    char *headers; /* raw header block, lines separated by \r\n */
    char *body;    /* NUL-terminated */
    size_t body_len;
} th_response;

/* A keep-alive connection. */
typedef struct th_conn {
    int fd;
    int port;
} th_conn;

int th_connect(th_conn *c, int port);
void th_close(th_conn *c);
/*
 * Sends one request and reads the response. headers: NULL-terminated list
 * of "Name: value" lines. content_type may be NULL (no header). Returns 0
 * when a full response was read.
 */
int th_conn_request(th_conn *c, const char *method, const char *path, const char *content_type,
                    const char *body, size_t body_len, const char *const *headers,
                    th_response *out);
/* Reads one response without sending (after writing a raw request to c->fd). */
int th_conn_read(th_conn *c, const char *method, th_response *out);
/* One request on a new connection. */
int th_request(int port, const char *method, const char *path, const char *content_type,
               const char *body, size_t body_len, const char *const *headers, th_response *out);
/* JSON shorthand: body is a NUL-terminated string (NULL for none). */
int th_json(int port, const char *method, const char *path, const char *body, th_response *out);
void th_response_free(th_response *r);
/* Value of a response header (case-insensitive name) into buf, or NULL. */
const char *th_header(const th_response *r, const char *name, char *buf, size_t size);

#endif
