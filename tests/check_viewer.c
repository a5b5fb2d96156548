/*
 * check_viewer: the embedded web viewer (api/api_viewer.c and the table that
 * tests/tools/embed.c generates from api/viewer/).
 *
 * Expected bytes come from the files on disk (the tests run from the
 * repository root, as `make test-unit` does); they skip with a message when
 * api/viewer/ is not there. The HTTP cases run api_viewer_queue inside a
 * private libmicrohttpd daemon on port 0 and talk to it over a plain socket,
 * so they do not depend on the service's router.
 */
#include <check.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_viewer.h"

/* Reads a whole file into a malloc'd buffer, or NULL when absent. */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The asset served at url must hold exactly the bytes of file. */
static void assert_same_as_file(const char *url, const char *file, const char *type_prefix) {
    size_t len = 0;
    unsigned char *want = slurp(file, &len);
    if (want == NULL) {
        printf("check_viewer: %s not found (not run from the repository root?), skipped\n", file);
        return;
    }
    const api_viewer_asset *a = api_viewer_find(url);
    ck_assert_msg(a != NULL, "%s not served", url);
    ck_assert_uint_eq(a->len, len);
    ck_assert_msg(memcmp(a->data, want, len) == 0, "%s differs from %s", url, file);
    ck_assert_msg(strncmp(a->content_type, type_prefix, strlen(type_prefix)) == 0,
                  "%s has Content-Type %s", url, a->content_type);
    free(want);
}

START_TEST(test_paths_map_to_files) {
    assert_same_as_file("/", "api/viewer/index.html", "text/html");
    assert_same_as_file("/index.html", "api/viewer/index.html", "text/html");
    assert_same_as_file("/viewer/viewer.js", "api/viewer/viewer.js", "text/javascript");
    assert_same_as_file("/viewer/viewer.css", "api/viewer/viewer.css", "text/css");
}
END_TEST

START_TEST(test_unknown_paths_are_not_served) {
    /* Only table rows are ever returned: no file system, no traversal. */
    const char *bad[] = {"",
                         "/viewer/",
                         "/viewer",
                         "/viewer/../Makefile",
                         "/index.htm",
                         "/viewer/nope.js",
                         "/viewerx/viewer.js",
                         "//",
                         "/v1/navmeshes",
                         "/viewer/viewer.js/",
                         "/viewer/VIEWER.JS"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(api_viewer_find(bad[i]) == NULL, "'%s' should not be served", bad[i]);
    }
    ck_assert_ptr_null(api_viewer_find(NULL));
}
END_TEST

START_TEST(test_table_shape) {
    /* At least the three files the viewer is made of; each NUL-terminated
       (embed adds an uncounted NUL), each with a quoted 16-hex-digit tag, and
       distinct contents give distinct tags. Then the all-zero sentinel. */
    ck_assert_uint_ge(api_viewer_asset_count, 3);
    for (unsigned i = 0; i < api_viewer_asset_count; i++) {
        const api_viewer_asset *a = &api_viewer_assets[i];
        ck_assert_ptr_nonnull(a->name);
        ck_assert_ptr_null(strchr(a->name, '/'));
        ck_assert_uint_eq(a->data[a->len], 0);
        ck_assert_uint_eq(strlen(a->etag), 18);
        ck_assert_int_eq(a->etag[0], '"');
        ck_assert_int_eq(a->etag[17], '"');
        for (unsigned j = 0; j < i; j++) {
            ck_assert_str_ne(api_viewer_assets[j].name, a->name);
            ck_assert_str_ne(api_viewer_assets[j].etag, a->etag);
        }
    }
    ck_assert_ptr_null(api_viewer_assets[api_viewer_asset_count].name);
}
END_TEST

/* ---- HTTP: a private daemon whose only route is the viewer ---- */

static enum MHD_Result viewer_only(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_len, void **con_cls) {
    const api_viewer_asset *a = api_viewer_find(url);
    if (a == NULL) {
        static const char nf[] = "not found";
        struct MHD_Response *r =
            MHD_create_response_from_buffer_with_free_callback(sizeof nf - 1, (void *)nf, NULL);
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_NOT_FOUND, r);
        MHD_destroy_response(r);
        return ret;
    }
    return (enum MHD_Result)api_viewer_queue(c, a);
}

/* One request over a fresh socket; returns the whole response (malloc'd). */
static char *http_get(uint16_t port, const char *path, const char *extra_header) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n",
                     path, extra_header != NULL ? extra_header : "");
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 18, len = 0;
    char *buf = malloc(cap + 1);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - len)) > 0) {
        len += (size_t)got;
        ck_assert_uint_lt(len, cap);
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

START_TEST(test_http_headers_and_revalidation) {
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                            viewer_only, NULL, MHD_OPTION_END);
    ck_assert_ptr_nonnull(d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    ck_assert_ptr_nonnull(info);
    uint16_t port = info->port;
    const api_viewer_asset *index = api_viewer_find("/");
    ck_assert_ptr_nonnull(index);

    char *r = http_get(port, "/", NULL);
    ck_assert_msg(strncmp(r, "HTTP/1.1 200", 12) == 0, "%.40s", r);
    ck_assert_ptr_nonnull(strstr(r, "Content-Type: text/html; charset=utf-8\r\n"));
    ck_assert_ptr_nonnull(strstr(r, "Cache-Control: no-cache\r\n"));
    char etag_line[64];
    snprintf(etag_line, sizeof etag_line, "ETag: %s\r\n", index->etag);
    ck_assert_ptr_nonnull(strstr(r, etag_line));
    const char *body = strstr(r, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_uint_eq(strlen(body + 4), index->len);
    free(r);

    /* A browser revalidating with the tag gets 304 and no body. */
    char inm[96];
    snprintf(inm, sizeof inm, "If-None-Match: W/\"0000000000000000\", %s\r\n", index->etag);
    r = http_get(port, "/", inm);
    ck_assert_msg(strncmp(r, "HTTP/1.1 304", 12) == 0, "%.40s", r);
    body = strstr(r, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body + 4, "");
    free(r);

    /* A stale tag gets the full body again. */
    r = http_get(port, "/viewer/viewer.js", "If-None-Match: \"0000000000000000\"\r\n");
    ck_assert_msg(strncmp(r, "HTTP/1.1 200", 12) == 0, "%.40s", r);
    ck_assert_ptr_nonnull(strstr(r, "Content-Type: text/javascript; charset=utf-8\r\n"));
    free(r);

    r = http_get(port, "/viewer/missing.js", NULL);
    ck_assert_msg(strncmp(r, "HTTP/1.1 404", 12) == 0, "%.40s", r);
    free(r);
    MHD_stop_daemon(d);
}
END_TEST

extern Suite *viewer_suite(void); /* called by check_main.c */

Suite *viewer_suite(void) {
    Suite *s = suite_create("viewer");
    TCase *tc = tcase_create("assets");
    tcase_add_test(tc, test_paths_map_to_files);
    tcase_add_test(tc, test_unknown_paths_are_not_served);
    tcase_add_test(tc, test_table_shape);
    tcase_add_test(tc, test_http_headers_and_revalidation);
    suite_add_tcase(s, tc);
    return s;
}
