/*
 * test_cluster: throwaway PostgreSQL and nginx for the tests (see
 * test_cluster.h for how and why they run the way they do).
 */
#define _GNU_SOURCE /* setgroups */
#include "test_cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double tc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void tc_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int tc_free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void rm_rf(const char *dir) {
    if (dir[0])
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Runs argv (as pg's user when as_other), output appended to log, and waits
 * at most timeout_ms. Returns the exit status, or -1 (killed on timeout,
 * exec failure).
 */
static int tc_run(const tc_pg *pg, char *const argv[], const char *log, int timeout_ms) {
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        if (pg && pg->as_other &&
            (setgroups(0, NULL) != 0 || setgid(pg->gid) != 0 || setuid(pg->uid) != 0)) {
            fprintf(stderr, "cannot switch to uid %d: %s\n", (int)pg->uid, strerror(errno));
            _exit(126);
        }
        setsid(); /* a signal for the test runner's group never reaches the server */
        /* the runner's directory may be closed to the postgres user */
        if (chdir("/") != 0)
            _exit(125);
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    for (double t0 = tc_now_ms(); tc_now_ms() - t0 < timeout_ms; tc_sleep_ms(20)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* ---- PostgreSQL ------------------------------------------------------------------------------ */

/* The newest /usr/lib/postgresql/<v>/bin holding initdb. */
static int tc_pg_bindir(char *out, size_t n) {
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
        return -1;
    int best = -1, bestv = -1;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
        if (v > bestv && access(g.gl_pathv[i], X_OK) == 0) {
            bestv = v;
            best = (int)i;
        }
    }
    if (best >= 0) {
        snprintf(out, n, "%s", g.gl_pathv[best]);
        char *slash = strrchr(out, '/');
        *slash = '\0';
    }
    globfree(&g);
    return best >= 0 ? 0 : -1;
}

/*
 * As root the server runs as the postgres (or nobody) user, which must be
 * able to reach its own binaries. On a normal system it can; in a root
 * directory closed to other users (a chroot made in a mktemp -d directory,
 * mode 0700, as the fresh-machine check builds) it cannot execute anything,
 * and initdb would fail for a reason that is the machine's, not navd's: a
 * child switches to that user and tries. 0 when it can.
 */
static int tc_other_user_can_run(const char *bindir, char *why, size_t why_size) {
    if (geteuid() != 0)
        return 0;
    struct passwd *pw = getpwnam("postgres");
    if (!pw)
        pw = getpwnam("nobody");
    if (!pw) {
        snprintf(why, why_size, "running as root and no postgres or nobody user for initdb");
        return -1;
    }
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    char initdb[300];
    snprintf(initdb, sizeof initdb, "%s/initdb", bindir);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(2);
        _exit(chdir("/") == 0 && access(initdb, X_OK) == 0 ? 0 : 1);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        struct stat st;
        int root_closed = stat("/", &st) == 0 && !(st.st_mode & S_IXOTH);
        snprintf(why, why_size,
                 "PostgreSQL cannot run here: the server refuses root, and user %s cannot execute "
                 "%s%s",
                 pw->pw_name, initdb,
                 root_closed ? " (the root directory is closed to other users, mode 0700, as in a "
                               "chroot made with mktemp -d)"
                             : "");
        return -1;
    }
    return 0;
}

int tc_pg_available(char *why, size_t why_size) {
    char dir[256];
    if (tc_pg_bindir(dir, sizeof dir) != 0) {
        snprintf(why, why_size,
                 "PostgreSQL binaries absent (/usr/lib/postgresql/*/bin/initdb; `make deps` "
                 "installs the postgresql package)");
        return -1;
    }
    return tc_other_user_can_run(dir, why, why_size);
}

static int tc_pg_ctl_start(tc_pg *pg) {
    char bin[300], data[96], log[96], opts[256];
    snprintf(bin, sizeof bin, "%s/pg_ctl", pg->bindir);
    snprintf(data, sizeof data, "%s/data", pg->dir);
    snprintf(log, sizeof log, "%s/server.log", pg->dir);
    /* Small and quiet: loopback only, the socket in our directory, fsync on
       (the suite checks that acknowledged writes survive a crash). */
    snprintf(opts, sizeof opts,
             "-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=60 "
             "-c shared_buffers=16MB -c max_wal_size=256MB",
             pg->port, pg->dir);
    char *argv[] = {bin, "-D", data, "-l", log, "-w", "-t", "60", "-o", opts, "start", NULL};
    char cl[96];
    snprintf(cl, sizeof cl, "%s/ctl.log", pg->dir);
    return tc_run(pg, argv, cl, 70000);
}

int tc_pg_start(tc_pg *pg, char *why, size_t why_size) {
    memset(pg, 0, sizeof *pg);
    if (tc_pg_bindir(pg->bindir, sizeof pg->bindir) != 0) {
        tc_pg_available(why, why_size);
        return -1;
    }
    snprintf(pg->dir, sizeof pg->dir, "/tmp/navd-pg-XXXXXX");
    if (!mkdtemp(pg->dir)) {
        snprintf(why, why_size, "mkdtemp: %s", strerror(errno));
        return -1;
    }
    if (geteuid() == 0) {
        struct passwd *pw = getpwnam("postgres");
        if (!pw)
            pw = getpwnam("nobody");
        if (!pw) {
            snprintf(why, why_size, "running as root and no postgres or nobody user for initdb");
            rm_rf(pg->dir);
            return -1;
        }
        pg->as_other = 1;
        pg->uid = pw->pw_uid;
        pg->gid = pw->pw_gid;
        if (chown(pg->dir, pg->uid, pg->gid) != 0) {
            snprintf(why, why_size, "chown %s: %s", pg->dir, strerror(errno));
            rm_rf(pg->dir);
            return -1;
        }
    }
    pg->port = tc_free_port();
    char bin[300], data[96], log[96];
    snprintf(bin, sizeof bin, "%s/initdb", pg->bindir);
    snprintf(data, sizeof data, "%s/data", pg->dir);
    snprintf(log, sizeof log, "%s/initdb.log", pg->dir);
    char *argv[] = {bin,     "-D", data,   "-U",         "navd",      "-A",
                    "trust", "-E", "UTF8", "--locale=C", "--no-sync", NULL};
    int rc = tc_run(pg, argv, log, 120000);
    if (rc != 0) {
        snprintf(why, why_size, "initdb failed (exit %d; see %s)", rc, log);
        return -1; /* the directory stays for the log */
    }
    if (tc_pg_ctl_start(pg) != 0) {
        snprintf(why, why_size, "pg_ctl start failed (see %s/server.log)", pg->dir);
        return -1;
    }
    snprintf(pg->conninfo, sizeof pg->conninfo, "postgresql://navd@127.0.0.1:%d/postgres",
             pg->port);
    if (tc_pg_exec(pg, "CREATE DATABASE navd") != 0) {
        snprintf(why, why_size, "CREATE DATABASE navd failed");
        tc_pg_destroy(pg);
        return -1;
    }
    snprintf(pg->conninfo, sizeof pg->conninfo, "postgresql://navd@127.0.0.1:%d/navd", pg->port);
    return 0;
}

int tc_pg_stop(tc_pg *pg, const char *mode) {
    char bin[300], data[96], cl[96];
    snprintf(bin, sizeof bin, "%s/pg_ctl", pg->bindir);
    snprintf(data, sizeof data, "%s/data", pg->dir);
    snprintf(cl, sizeof cl, "%s/ctl.log", pg->dir);
    char m[16];
    snprintf(m, sizeof m, "%s", mode);
    char *argv[] = {bin, "-D", data, "-m", m, "-w", "-t", "60", "stop", NULL};
    return tc_run(pg, argv, cl, 70000);
}

int tc_pg_restart(tc_pg *pg) {
    return tc_pg_ctl_start(pg);
}

void tc_pg_destroy(tc_pg *pg) {
    if (!pg->dir[0])
        return;
    tc_pg_stop(pg, "immediate");
    rm_rf(pg->dir);
    pg->dir[0] = '\0';
}

static PGconn *tc_connect(const tc_pg *pg) {
    const char *const keys[] = {"dbname", "connect_timeout", NULL};
    const char *const vals[] = {pg->conninfo, "5", NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (c && PQstatus(c) != CONNECTION_OK) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

static void tc_quiet(void *arg, const char *message) {
    (void)arg, (void)message;
}

int tc_pg_exec(const tc_pg *pg, const char *sql) {
    PGconn *c = tc_connect(pg);
    if (!c)
        return -1;
    PQsetNoticeProcessor(c, tc_quiet, NULL);
    PGresult *r = PQexec(c, sql);
    ExecStatusType t = PQresultStatus(r);
    int ok = t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "tc_pg_exec(%.80s): %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return ok ? 0 : -1;
}

long long tc_pg_long(const tc_pg *pg, const char *sql) {
    PGconn *c = tc_connect(pg);
    if (!c)
        return -1;
    PGresult *r = PQexec(c, sql);
    long long v = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
        v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}

void tc_pg_conninfo_as(const tc_pg *pg, const char *role, char *buf, size_t size) {
    snprintf(buf, size, "postgresql://%s@127.0.0.1:%d/navd", role, pg->port);
}

/* ---- nginx ----------------------------------------------------------------------------------- */

static const char *tc_nginx_bin(void) {
    static const char *const where[] = {"/usr/sbin/nginx", "/usr/bin/nginx",
                                        "/usr/local/sbin/nginx"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (access(where[i], X_OK) == 0)
            return where[i];
    return NULL;
}

int tc_nginx_available(char *why, size_t why_size) {
    if (!tc_nginx_bin()) {
        snprintf(why, why_size, "nginx absent (`make deps` installs the nginx package)");
        return -1;
    }
    if (access("docker/nginx/navd.conf", R_OK) != 0) {
        snprintf(why, why_size, "docker/nginx/navd.conf not found (run from the repository root)");
        return -1;
    }
    return 0;
}

static int tc_write(const char *dir, const char *name, const char *text) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* The main file (including the shipped navd.conf by absolute path) and the
   two files navd.conf includes, in ng->dir; 0 on success. */
static int tc_nginx_conf(const tc_nginx *ng, const int *ports, int n) {
    char cwd[512];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    char main_conf[2048], ups[1024] = "", listen[64];
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(ups + k, sizeof ups - k,
                              "server 127.0.0.1:%d max_fails=1 fail_timeout=2s;\n", ports[i]);
    snprintf(listen, sizeof listen, "listen 127.0.0.1:%d;\n", ng->port);
    snprintf(main_conf, sizeof main_conf,
             "worker_processes auto;\n"
             "pid %s/nginx.pid;\n"
             "error_log %s/error.log warn;\n"
             "events { worker_connections 512; }\n"
             "http {\n"
             "  access_log off;\n"
             "  client_body_temp_path %s/body;\n"
             "  proxy_temp_path %s/proxy;\n"
             "  fastcgi_temp_path %s/fastcgi;\n"
             "  uwsgi_temp_path %s/uwsgi;\n"
             "  scgi_temp_path %s/scgi;\n"
             "  include %s/docker/nginx/navd.conf;\n"
             "}\n",
             ng->dir, ng->dir, ng->dir, ng->dir, ng->dir, ng->dir, ng->dir, cwd);
    return tc_write(ng->dir, "nginx.conf", main_conf) ||
                   tc_write(ng->dir, "navd-upstreams.conf", ups) ||
                   tc_write(ng->dir, "navd-listen.conf", listen)
               ? -1
               : 0;
}

int tc_nginx_start(tc_nginx *ng, const int *ports, int n, char *why, size_t why_size) {
    memset(ng, 0, sizeof *ng);
    if (tc_nginx_available(why, why_size) != 0)
        return -1;
    snprintf(ng->dir, sizeof ng->dir, "/tmp/navd-nginx-XXXXXX");
    if (!mkdtemp(ng->dir))
        return -1;
    /* Workers drop to "nobody" when the master is root: let them buffer. */
    chmod(ng->dir, 0777);
    ng->port = tc_free_port();
    if (tc_nginx_conf(ng, ports, n) != 0) {
        snprintf(why, why_size, "cannot write the nginx configuration in %s", ng->dir);
        return -1;
    }
    char conf[96], err[96], log[96];
    snprintf(conf, sizeof conf, "%s/nginx.conf", ng->dir);
    snprintf(err, sizeof err, "%s/error.log", ng->dir);
    snprintf(log, sizeof log, "%s/nginx.out", ng->dir);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        /* no setsid(): in the caller's process group, so a test runner that
           kills the group of a failed test stops nginx too */
        execl(tc_nginx_bin(), "nginx", "-p", ng->dir, "-c", conf, "-e", err, "-g", "daemon off;",
              (char *)NULL);
        _exit(127);
    }
    ng->pid = pid;
    /* Bounded wait until it accepts connections. */
    for (int i = 0; i < 200; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            ng->pid = 0;
            snprintf(why, why_size, "nginx exited at start (see %s and %s)", log, err);
            return -1;
        }
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)ng->port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (fd >= 0)
            close(fd);
        if (ok)
            return 0;
        tc_sleep_ms(25);
    }
    snprintf(why, why_size, "nginx did not listen within 5 s (see %s)", err);
    tc_nginx_stop(ng);
    return -1;
}

void tc_nginx_stop(tc_nginx *ng) {
    if (ng->pid > 0) {
        /* SIGQUIT would wait for keep-alive clients; TERM is a fast shutdown. */
        kill(ng->pid, SIGTERM);
        for (int i = 0; i < 250; i++) {
            if (waitpid(ng->pid, NULL, WNOHANG) == ng->pid) {
                ng->pid = 0;
                break;
            }
            tc_sleep_ms(20);
        }
        if (ng->pid > 0) {
            kill(ng->pid, SIGKILL); /* rare: workers left then go with the caller's group */
            waitpid(ng->pid, NULL, 0);
            ng->pid = 0;
        }
    }
    rm_rf(ng->dir);
    ng->dir[0] = '\0';
}
