/*
 * fuzz_request: every query and step request, from the HTTP dispatcher
 * down into nav/, in one process.
 *
 * Handlers take an api_req that only the server's connection code can
 * make, so the harness starts the real server in-process (api_server_start
 * on 127.0.0.1, an ephemeral port, one worker thread) over a registry
 * holding one small fixed mesh, and sends each input as one request on a
 * keep-alive connection. Coverage, ASan and UBSan see the worker thread as
 * well as this one.
 *
 * Input: the first byte picks the endpoint (POST path, paths, nearest,
 * raycast, reachable, step; GET path?query; GET the mesh with ?query), the
 * rest is the body (or the query string, percent-encoded). The harness
 * aborts on a 5xx answer, on no answer within 10 s (a stall), or on an
 * error body that is not the contract's error object.
 * Seeds: tests/fuzz/corpus/request/ (one valid request per endpoint).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "api/api_log.h"
#include "api/api_registry.h"
#include "storage/store.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/test_load.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static api_config fz_cfg;
static api_server *fz_srv;
static tl_conn fz_conn = {.fd = -1};

/*
 * The fixed mesh: a 4 x 3 grid of 2 m quads at y = 0 (areas 0 and 1
 * alternating by column), a 2 m square platform at y = 2 over x in [10,12],
 * and a one-way "jump" link from the platform down to the grid.
 */
static nav_mesh *fz_fixed_mesh(void) {
    float verts[(5 * 4 + 4) * 3];
    uint32_t start[13 + 1], idx[13 * 4];
    uint8_t areas[13];
    int nv = 0;
    for (int z = 0; z <= 3; z++)
        for (int x = 0; x <= 4; x++) {
            verts[nv * 3] = (float)(2 * x), verts[nv * 3 + 1] = 0,
                       verts[nv * 3 + 2] = (float)(2 * z);
            nv++;
        }
    const float plat[4][2] = {{10, 0}, {12, 0}, {12, 2}, {10, 2}};
    for (int k = 0; k < 4; k++) {
        verts[nv * 3] = plat[k][0], verts[nv * 3 + 1] = 2, verts[nv * 3 + 2] = plat[k][1];
        nv++;
    }
    uint32_t np = 0, ni = 0;
    for (uint32_t z = 0; z < 3; z++)
        for (uint32_t x = 0; x < 4; x++) {
            start[np] = ni;
            idx[ni++] = z * 5 + x;
            idx[ni++] = z * 5 + x + 1;
            idx[ni++] = (z + 1) * 5 + x + 1;
            idx[ni++] = (z + 1) * 5 + x;
            areas[np++] = (uint8_t)(x % 2);
        }
    start[np] = ni;
    for (uint32_t k = 0; k < 4; k++)
        idx[ni++] = 20 + k;
    areas[np++] = 0;
    start[np] = ni;
    nav_link_input link = {.start = {11, 2, 1},
                           .end = {7, 0, 1},
                           .radius = 0.5f,
                           .bidirectional = false,
                           .area = 2,
                           .kind = "jump"};
    nav_mesh_input in = {.verts = verts,
                         .nverts = (uint32_t)nv,
                         .poly_start = start,
                         .poly_verts = idx,
                         .npolys = np,
                         .areas = areas,
                         .links = &link,
                         .nlinks = 1};
    nav_mesh *m = NULL;
    nav_error err;
    fz_require(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "the fixed mesh builds");
    return m;
}

static char fz_dir[] = "/tmp/navd-fuzz-XXXXXX";

/* Removes the temporary database when the fuzzer exits (its time is up). */
static void fz_cleanup(void) {
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s/fuzz.db%s", fz_dir, suffix[i]);
        unlink(p);
    }
    rmdir(fz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    signal(SIGPIPE, SIG_IGN);
    api_log_set_level(API_LOG_ERROR); /* one line per request would dominate the run */
    fz_require(mkdtemp(fz_dir) != NULL, "temp dir");
    atexit(fz_cleanup);
    char db[128];
    snprintf(db, sizeof db, "%s/fuzz.db", fz_dir);
    store *st = NULL;
    fz_require(store_open(db, &st) == STORE_OK, "store opens");
    api_registry *reg = api_registry_new(st);
    fz_require(reg != NULL, "registry");
    api_entry *e = NULL;
    int created = 0;
    api_err err;
    fz_require(api_registry_put(reg, "fz", fz_fixed_mesh(), &e, &created, &err) == API_OK,
               "the fixed mesh is stored");
    api_entry_release(e);

    fz_cfg.bind = "127.0.0.1";
    fz_cfg.port = 0;
    fz_cfg.threads = 1;
    fz_cfg.api_key = "";
    fz_cfg.max_body = 1u << 20;
    fz_cfg.max_batch = 16;
    fz_cfg.max_agents = 16;
    fz_cfg.max_nodes = 1024;
    fz_cfg.limits = (nav_mesh_limits){
        .max_verts = 4096, .max_polys = 4096, .max_verts_per_poly = 64, .max_links = 64};
    fz_cfg.cache_bytes = 1u << 20;
    fz_cfg.request_timeout = 10;
    fz_cfg.connection_timeout = 30;
    fz_cfg.max_connections = 8;
    char msg[256];
    fz_srv = api_server_start(&fz_cfg, reg, msg, sizeof msg);
    if (!fz_srv)
        fprintf(stderr, "fuzz_request: %s\n", msg);
    fz_require(fz_srv != NULL, "the server starts");
    fz_require(tl_connect(&fz_conn, api_server_port(fz_srv)) == TL_OK, "connects");
    /* The server, registry and store live until the process exits. */
    return 0;
}

static const char *const fz_posts[] = {"path", "paths", "nearest", "raycast", "reachable", "step"};

/* Percent-encodes everything but unreserved characters and the query's own syntax. */
static size_t fz_encode(const uint8_t *p, size_t n, char *out, size_t size) {
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < size; i++) {
        uint8_t c = p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-_.~=&,+", c)) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = '\0';
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    unsigned which = data[0] % 8;
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    char path[4096];
    tl_response r;
    int rc;
    fz_conn.timeout_ms = 10000;
    if (which < 6) {
        snprintf(path, sizeof path, "/v1/navmeshes/fz/%s", fz_posts[which]);
        rc = tl_request(&fz_conn, "POST", path, "application/json", body, len, NULL, &r);
    } else {
        char q[3000];
        if (len > 900)
            len = 900;
        fz_encode(body, len, q, sizeof q);
        snprintf(path, sizeof path, "/v1/navmeshes/fz%s?%s", which == 6 ? "/path" : "", q);
        rc = tl_request(&fz_conn, "GET", path, NULL, NULL, 0, NULL, &r);
    }
    if (rc == TL_E_TIMEOUT)
        fz_require(0, "the server did not answer within 10 s (a stall)");
    if (rc != TL_OK)
        fprintf(stderr, "fuzz_request: %s (%zu bytes) -> transport error %d\n", path, strlen(path),
                rc);
    fz_require(rc == TL_OK, "the server answers on a keep-alive connection");
    if (r.status >= 500)
        fprintf(stderr, "fuzz_request: %s -> %d %s\n", path, r.status, r.body);
    fz_require(r.status < 500, "no 5xx on any request");
    if (r.status >= 400) {
        json_error_t je;
        json_t *j = json_loadb(r.body, r.len, 0, &je);
        json_t *e = j ? json_object_get(j, "error") : NULL;
        fz_require(e && json_is_string(json_object_get(e, "code")) &&
                       json_is_string(json_object_get(e, "message")),
                   "an error answer is the contract's error object");
        json_decref(j);
    } else if (r.status == 200 && which != 7) {
        json_error_t je;
        json_t *j = json_loadb(r.body, r.len, 0, &je);
        fz_require(j != NULL, "a 200 answer is JSON");
        json_decref(j);
    }
    tl_response_free(&r);
    return 0;
}
