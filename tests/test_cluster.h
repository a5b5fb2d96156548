/*
 * test_cluster: a throwaway PostgreSQL and an nginx in front of navd
 * replicas, all on 127.0.0.1, for the store, replica and bench suites.
 *
 * PostgreSQL: initdb + pg_ctl from /usr/lib/postgresql/<newest>/bin in a
 * fresh /tmp directory. initdb refuses to run as root, so when the tests
 * run as root (CI) every PostgreSQL command runs as the "postgres" user
 * (made by Debian's package; "nobody" otherwise), switched to in the forked
 * child (setgroups/setgid/setuid) before exec, with the directory chowned to
 * it. Trust authentication on loopback and a Unix socket in the directory;
 * the role "navd" is the superuser.
 *
 * nginx: `nginx -p <dir> -c <dir>/nginx.conf -e <dir>/error.log` with a
 * generated main file that includes the shipped docker/nginx/navd.conf (so
 * the routing under test is the one documented), plus the two files it
 * includes: the upstream list and the listen port. No system file is read
 * or written.
 *
 * Every wait is bounded; every helper returns non-zero (and a reason in
 * why) instead of asserting, so a suite can skip with a message.
 */
#ifndef TEST_CLUSTER_H
#define TEST_CLUSTER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct tc_pg {
    char dir[64];       /* temp root: data/, log, socket */
    char bindir[256];   /* /usr/lib/postgresql/<v>/bin */
    char conninfo[160]; /* postgresql://navd@127.0.0.1:<port>/navd */
    int port;
    int as_other; /* 1: commands run as uid/gid below */
    uid_t uid;
    gid_t gid;
} tc_pg;

/* A free TCP port on 127.0.0.1 (bound and released: a tiny race, tests only). */
int tc_free_port(void);

/* Finds initdb; 0 when present, else why says what is missing. */
int tc_pg_available(char *why, size_t why_size);
/* initdb, start, CREATE DATABASE navd. 0 when it answers; on failure the
   directory is removed and why says what failed. */
int tc_pg_start(tc_pg *pg, char *why, size_t why_size);
/* pg_ctl stop with mode "fast" or "immediate" (a crash: recovery on start). */
int tc_pg_stop(tc_pg *pg, const char *mode);
/* pg_ctl start again on the same data and port (waits until it accepts). */
int tc_pg_restart(tc_pg *pg);
/* Stops (immediate) and removes the directory. */
void tc_pg_destroy(tc_pg *pg);
/* Runs sql (several statements allowed) as navd; 0 on success. */
int tc_pg_exec(const tc_pg *pg, const char *sql);
/* The first column of the first row as a number (-1 on error or no row). */
long long tc_pg_long(const tc_pg *pg, const char *sql);
/* The connection string for another role (made by the caller). */
void tc_pg_conninfo_as(const tc_pg *pg, const char *role, char *buf, size_t size);

typedef struct tc_nginx {
    char dir[64];
    int port;
    pid_t pid;
} tc_nginx;

/* Finds the nginx binary and docker/nginx/navd.conf; 0 when both are there. */
int tc_nginx_available(char *why, size_t why_size);
/* Starts nginx on a free port in front of the given navd ports. */
int tc_nginx_start(tc_nginx *ng, const int *ports, int n, char *why, size_t why_size);
void tc_nginx_stop(tc_nginx *ng);

/* Milliseconds on CLOCK_MONOTONIC. */
double tc_now_ms(void);

#endif
