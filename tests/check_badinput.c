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
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

    char dir[] = "/tmp/navd-badinput-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char db[128];
    snprintf(db, sizeof db, "%s/navd.db", dir);
    const char *args[] = {"--api-key", BI_KEY, "--max-body", BI_MAX_BODY, "--threads", "2", NULL};
    tl_server srv;
    ck_assert_msg(tl_server_start(&srv, db, args, NULL) == 0, "navd did not start");

    tl_conn c = {.fd = -1};
    ck_assert_int_eq(tl_connect(&c, srv.port), TL_OK);
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
                problem = bi_body_problem(&r, dir);
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

    ck_assert_int_eq(tl_server_stop(&srv), 0);
    printf("badinput: %zu cases, %d failed\n", nfiles, failures);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    unlink(db);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    rmdir(dir);
    fflush(stdout);
    ck_assert_msg(failures == 0, "%d bad-input cases failed (see the lines above)", failures);
}
END_TEST

extern Suite *badinput_suite(void);
Suite *badinput_suite(void) {
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("catalogue");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_catalogue);
    suite_add_tcase(s, tc);
    return s;
}
