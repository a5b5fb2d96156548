/*
 * bench_load: the soak/load figures of `make bench`: mixed traffic (path,
 * paths, nearest, raycast, reachable, step and occasional PUTs that
 * replace the queried mesh) from several keep-alive connections on
 * loopback against the real binary, for a fixed time after a warm-up.
 * Prints per endpoint p50/p99/max latency and counts, the total request
 * rate, errors, dropped connections and the server's RSS growth after
 * warm-up. NAVD_BENCH_LOAD_SECONDS (default 20),
 * NAVD_BENCH_LOAD_CONNECTIONS (default 8) and NAVD_BENCH_LOAD_CACHE (the
 * server's --cache-bytes, default 8M) override the run.
 *
 * The cache matters for the memory figure: every PUT makes a new version,
 * whose queries are new cache entries, so RSS grows until the path cache
 * reaches its budget; and with a cache, each worker's steering scratch keeps
 * a corridor memo (about 4 MiB) whose pages become resident as it fills.
 * Both are bounded: RSS is flat after about 15 s of this traffic, so the
 * warm-up is 15 s and the growth printed is what remains after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench.h"
#include "tests/test_http.h"
#include "tests/test_load.h"

#define BL_KEY "bench-load-key-0123456789"

static long bl_env(const char *name, long def) {
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : def;
}

void bench_load(void) {
    if (!tl_navd_bin()) {
        printf("bench_load: navd binary not built: skipped\n");
        return;
    }
    const char *cache = getenv("NAVD_BENCH_LOAD_CACHE");
    if (!cache || !*cache)
        cache = "8M";
    /* --threads cores: navd's own default, not test_http's 4 */
    const char *args[] = {"--api-key", BL_KEY,      "--log-level", "warn", "--cache-bytes",
                          cache,       "--threads", "cores",       NULL};
    th_server srv;
    if (th_start(&srv, NULL, args) != 0) {
        printf("bench_load: navd did not start\n");
        th_cleanup(&srv);
        return;
    }
    uint16_t port = (uint16_t)srv.port;
    size_t len;
    char *mesh = tl_load_mesh_json(&len);
    tl_conn c = {.fd = -1};
    tl_response r;
    int ok = mesh && tl_connect(&c, port) == TL_OK &&
             tl_request(&c, "PUT", "/v1/navmeshes/load", "application/json", mesh, len,
                        "Authorization: Bearer " BL_KEY "\r\n", &r) == TL_OK;
    if (ok) {
        ok = r.status == 201;
        tl_response_free(&r);
    }
    tl_close(&c);
    free(mesh);
    if (!ok) {
        printf("bench_load: upload failed\n");
        th_kill(&srv);
        th_cleanup(&srv);
        return;
    }

    tl_load_opts o = {.port = port,
                      .mesh = "load",
                      .auth = "Authorization: Bearer " BL_KEY "\r\n",
                      .connections = (int)bl_env("NAVD_BENCH_LOAD_CONNECTIONS", 8),
                      .seconds = (double)bl_env("NAVD_BENCH_LOAD_SECONDS", 20),
                      .warmup = 15.0,
                      .server_pid = (int)srv.pid,
                      .seed = 7,
                      .put_per_mille = 2};
    tl_load_stats st;
    if (tl_load_run(&o, &st) != 0) {
        printf("bench_load: no query route answers: skipped\n");
    } else {
        printf("\n== load: %d keep-alive connections, %.1f s after %.0f s warm-up, 16 x 16 grid, "
               "--cache-bytes %s ==\n",
               o.connections, st.seconds, o.warmup, cache);
        printf("%-10s %10s %9s %9s %9s %6s %6s\n", "endpoint", "requests", "p50 ms", "p99 ms",
               "max ms", "4xx", "5xx");
        for (int e = 0; e < TL_EP_COUNT; e++) {
            const tl_endpoint_stats *es = &st.ep[e];
            if (!(st.enabled & (1u << e)))
                continue;
            printf("%-10s %10ld %9.3f %9.3f %9.3f %6ld %6ld\n", tl_endpoint_name((tl_endpoint)e),
                   es->requests, es->p50_ms, es->p99_ms, es->max_ms, es->errors_4xx,
                   es->errors_5xx);
        }
        double growth = st.rss_start ? 100.0 * ((double)st.rss_end - (double)st.rss_start) /
                                           (double)st.rss_start
                                     : 0.0;
        printf("total: %ld requests, %.0f requests/s, 5xx %ld, other errors %ld, dropped "
               "connections %ld\n",
               st.requests, (double)st.requests / st.seconds, st.errors_5xx, st.errors_other,
               st.dropped);
        printf("server RSS: %.1f MiB after warm-up, %.1f MiB at the end (%+.2f%%), peak %.1f "
               "MiB\n",
               (double)st.rss_start / 1048576.0, (double)st.rss_end / 1048576.0, growth,
               (double)st.rss_peak / 1048576.0);
        if (st.cache_start >= 0 && st.cache_end >= 0)
            printf("path cache: %.1f MiB after warm-up, %.1f MiB at the end\n",
                   st.cache_start / 1048576.0, st.cache_end / 1048576.0);
        if (st.first_error[0])
            printf("first unexpected answer: %s\n", st.first_error);
    }
    int rc = th_stop(&srv);
    if (rc != 0)
        printf("bench_load: navd exited with %d on SIGTERM\n", rc);
    th_cleanup(&srv);
}
