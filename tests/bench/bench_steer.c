/*
 * bench_steer: microseconds per agent-step of nav_step, in process, with
 * avoidance on, for 100, 1,000 and 10,000 agents on the shared Recast meshes
 * (OBJ form) and on the query bench's generated large mesh.
 *
 * The scenario is a game's: eight "players" stand on the mesh; of the
 * agents, about 6 in 10 arrive at / pursue a player reachable from where they
 * stand (the path cache turns thousands of chasers into one search per
 * polygon pair), 2 in 10 wander, 1 in 10 flees a player and 1 in 10 idles.
 * The bench plays the game server: positions and velocities are fed back
 * each tick, so corridors, neighbours and caches evolve as in a real run.
 * Then HTTP: one POST .../step of 1,000 agents (JSON in and out) against the
 * real binary (NAVD_BIN), end to end, and the share of it that is not the
 * steering itself (JSON decode/encode, HTTP, copies), from the in-process
 * time of the same tick. Speed is reported, never asserted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_steer.h"
#include "tests/bench/bench.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"
#include "tests/test_load.h"

#define BENCH_PLAYERS 8
#define BENCH_MAX_PLAYERS 64

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: other processes share the cores */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static nav_mesh *load_obj(const char *file) {
    char path[256];
    snprintf(path, sizeof path, "../shared/meshes/%s", file);
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text)
        return NULL;
    nav_obj obj;
    nav_error err;
    nav_mesh *m = NULL;
    if (nav_obj_parse(text, len, &obj, &err) == NAV_OK) {
        nav_mesh_input in;
        nav_obj_as_input(&obj, &in);
        if (nav_mesh_build(&in, NULL, &m, &err) != NAV_OK)
            m = NULL;
        nav_obj_free(&obj);
    }
    free(text);
    return m;
}

/*
 * nplayers players; each agent chases a random reachable one, or with
 * `nearest` the nearest reachable one (a game where each player draws the
 * monsters around it, so paths are local).
 */
static void run(const char *name, const nav_mesh *m, uint32_t n, int use_cache, int nplayers,
                int nearest) {
    uint32_t rng = 0xC0FFEEu + n;
    nav_steer *s = nav_steer_new(n, 16);
    nav_query *q = nav_query_new(65536);
    nav_cache *cache = use_cache ? nav_cache_new((size_t)64 << 20, 0) : NULL;
    nav_agent_in *in = calloc(n, sizeof *in);
    nav_agent_out *out = calloc(n, sizeof *out);
    char(*ids)[16] = calloc(n, sizeof *ids);
    if (!s || !q || !in || !out || !ids || (use_cache && !cache)) {
        printf("steer %-12s %6u agents: allocation failed\n", name, (unsigned)n);
        goto done;
    }
    float players[BENCH_MAX_PLAYERS][3];
    uint32_t player_poly[BENCH_MAX_PLAYERS];
    for (int k = 0; k < nplayers; k++)
        player_poly[k] = fx_random_point(m, &rng, players[k]);
    for (uint32_t i = 0; i < n; i++) {
        nav_agent_in *a = &in[i];
        uint32_t poly = fx_random_point(m, &rng, a->pos);
        snprintf(ids[i], sizeof ids[i], "npc-%u", (unsigned)i);
        a->id = ids[i];
        a->radius = 0.3f;
        a->max_speed = 3.5f;
        a->max_accel = 8.0f;
        a->arrive_radius = 1.0f;
        int player = -1;
        float best = INFINITY;
        for (int k = 0, first = (int)(fx_rand(&rng) % (uint32_t)nplayers); k < nplayers; k++) {
            int c = (first + k) % nplayers;
            if (!nav_mesh_reachable(m, poly, player_poly[c]))
                continue;
            float d = hypotf(players[c][0] - a->pos[0], players[c][2] - a->pos[2]);
            if (!nearest) {
                player = c;
                break;
            }
            if (d < best) {
                best = d;
                player = c;
            }
        }
        uint32_t roll = fx_rand(&rng) % 10;
        if (player < 0 || roll >= 8)
            a->behavior = roll == 9 ? NAV_BEHAVIOR_IDLE : NAV_BEHAVIOR_WANDER;
        else if (roll < 5)
            a->behavior = NAV_BEHAVIOR_ARRIVE;
        else if (roll < 6)
            a->behavior = NAV_BEHAVIOR_PURSUE;
        else
            a->behavior = roll == 6 ? NAV_BEHAVIOR_FLEE : NAV_BEHAVIOR_WANDER;
        if (player >= 0) {
            memcpy(a->target, players[player], sizeof a->target);
            a->has_target = true;
            a->target_vel[0] = 1.0f;
            a->has_target_vel = true;
        }
    }
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.05f;
    int warm = 10, ticks = n >= 10000 ? 6 : (n >= 1000 ? 20 : 100);
    double t0 = 0;
    uint32_t offmesh = 0, avoiding = 0;
    for (int t = 0; t < warm + ticks; t++) {
        if (t == warm)
            t0 = now_s();
        nav_step_error err;
        if (nav_step(s, m, q, cache, &p, in, n, NULL, 0, out, &err) != NAV_OK) {
            printf("steer %-12s: nav_step failed: %s\n", name, err.message);
            goto done;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (out[i].status != NAV_OK) {
                offmesh++;
                continue;
            }
            memcpy(in[i].pos, out[i].pos, sizeof in[i].pos);
            memcpy(in[i].vel, out[i].vel, sizeof in[i].vel);
            avoiding += out[i].avoiding;
        }
    }
    double el = now_s() - t0;
    double us = el * 1e6 / ((double)n * ticks);
    char extra[96] = "";
    if (cache) {
        nav_cache_stats cs;
        nav_cache_stats_get(cache, &cs);
        double tot = (double)(cs.hits + cs.misses);
        snprintf(extra, sizeof extra, ", path cache: %.0f%% of its lookups hit",
                 tot > 0 ? 100.0 * (double)cs.hits / tot : 0.0);
    }
    printf("steer %-10s %5u agents, %2d players%-10s %-8s %6.2f us/agent-step (%d ticks, "
           "%.1f%% avoiding%s)\n",
           name, (unsigned)n, nplayers, nearest ? " (nearest)" : "", cache ? "cache" : "no-cache",
           us, ticks, 100.0 * avoiding / ((double)n * (warm + ticks)), extra);
done:
    free(ids);
    free(in);
    free(out);
    nav_cache_free(cache);
    nav_query_free(q);
    nav_steer_free(s);
}

/*
 * Issue 14's scale figure: n agents on the large mesh, all `arrive` at one of
 * ntargets targets (each reachable from the agent), stepped with the path
 * cache. A target shared by STEER_FLOW_MIN agents gets one goal-rooted tree
 * (nav_steer_flow.c): the first step builds the trees, later ones reuse
 * them. per_agent: max_nodes set to the query's pool, which turns the trees
 * off (each agent its own corridor search, the behaviour before): one step.
 * scratches 2: ticks alternate between two scratches sharing the cache, as
 * two HTTP threads serve them (the second one's first tick finds the trees
 * in the cache instead of building them again).
 */
static void shared_targets(const nav_mesh *m, uint32_t n, int ntargets, int per_agent,
                           uint32_t threads, int scratches) {
    uint32_t rng = 0x5EED + (uint32_t)ntargets;
    nav_steer *s = nav_steer_new(n, 1), *s2 = scratches > 1 ? nav_steer_new(n, 1) : NULL;
    nav_query *q = nav_query_new(1u << 20);
    nav_cache *cache = nav_cache_new((size_t)64 << 20, 0);
    nav_agent_in *in = calloc(n, sizeof *in);
    nav_agent_out *out = calloc(n, sizeof *out);
    float tg[16][3];
    uint32_t tp[16];
    if (!s || !q || !cache || !in || !out || ntargets > 16)
        goto done;
    for (int k = 0; k < ntargets; k++)
        tp[k] = fx_random_point(m, &rng, tg[k]);
    for (uint32_t i = 0; i < n; i++) {
        nav_agent_in *a = &in[i];
        int k = (int)(i % (uint32_t)ntargets);
        uint32_t poly;
        do
            poly = fx_random_point(m, &rng, a->pos);
        while (!nav_mesh_reachable(m, poly, tp[k]));
        memcpy(a->target, tg[k], sizeof a->target);
        a->has_target = true;
        a->radius = 0.3f;
        a->max_speed = 3.5f;
        a->max_accel = 8.0f;
        a->arrive_radius = 1.0f;
        a->behavior = NAV_BEHAVIOR_ARRIVE;
    }
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.05f;
    p.max_nodes = per_agent ? (1u << 20) : 0;
    p.threads = threads;
    int ticks = per_agent ? 1 : 6;
    double first = 0, rest = 0, second = 0;
    for (int t = 0; t < ticks; t++) {
        /* wall time with threads (CPU time would add the threads up) */
        double t0 = threads > 1 ? bench_now() : now_s();
        nav_step_error err;
        if (nav_step(s2 && (t & 1) ? s2 : s, m, q, cache, &p, in, n, NULL, 0, out, &err) !=
            NAV_OK) {
            printf("steer shared: nav_step failed: %s\n", err.message);
            goto done;
        }
        double el = (threads > 1 ? bench_now() : now_s()) - t0;
        if (t == 0)
            first = el;
        else
            rest += el;
        if (t == 1)
            second = el;
        for (uint32_t i = 0; i < n; i++) {
            if (out[i].status != NAV_OK)
                continue;
            memcpy(in[i].pos, out[i].pos, sizeof in[i].pos);
            memcpy(in[i].vel, out[i].vel, sizeof in[i].vel);
        }
    }
    if (per_agent)
        printf("steer shared %5u agents, %2d targets, %u polygons, one search per agent: %.0f ms "
               "per step (cold cache)\n",
               (unsigned)n, ntargets, (unsigned)m->npolys, first * 1e3);
    else if (s2)
        printf("steer shared %5u agents, %2d targets, two scratches sharing the cache, %u "
               "thread%s: first step %.0f ms (builds the trees), the other scratch's first %.1f "
               "ms (finds them in the cache), then %.1f ms per step\n",
               (unsigned)n, ntargets, (unsigned)threads, threads > 1 ? "s" : "", first * 1e3,
               second * 1e3, rest * 1e3 / (ticks - 1));
    else
        printf("steer shared %5u agents, %2d targets, %u polygons, one tree per target, %u "
               "thread%s: first step %.0f ms (builds the trees), then %.1f ms per step (target "
               "100 ms)\n",
               (unsigned)n, ntargets, (unsigned)m->npolys, (unsigned)threads,
               threads > 1 ? "s (wall time)" : " (CPU time)", first * 1e3,
               rest * 1e3 / (ticks - 1));
done:
    free(in);
    free(out);
    nav_cache_free(cache);
    nav_query_free(q);
    nav_steer_free(s);
    nav_steer_free(s2);
}

/* End-to-end time of one step request of n agents on dungeon, against the
   in-process nav_step of the same tick. */
static void bench_http(uint32_t n) {
    nav_mesh *m = load_obj("dungeon.navmesh.obj");
    if (!m) {
        printf("steer http: ../shared absent: skipped\n");
        return;
    }
    th_server srv;
    int put = bench_start_dungeon(&srv, "steer http: ");
    if (put < 0) {
        nav_mesh_free(m);
        return;
    }

    /* the request body: agents at random points arriving at one of 8 players */
    uint32_t rng = 0xBADC0DEu;
    float players[BENCH_PLAYERS][3];
    for (int k = 0; k < BENCH_PLAYERS; k++)
        fx_random_point(m, &rng, players[k]);
    size_t cap = (size_t)n * 256 + 64, len = 0;
    char *body = malloc(cap);
    nav_agent_in *in = calloc(n, sizeof *in);
    nav_agent_out *out = calloc(n, sizeof *out);
    len += (size_t)snprintf(body + len, cap - len, "{\"dt\":0.05,\"agents\":[");
    for (uint32_t i = 0; i < n; i++) {
        nav_agent_in *a = &in[i];
        fx_random_point(m, &rng, a->pos);
        const float *t = players[i % BENCH_PLAYERS];
        a->radius = 0.3f;
        a->max_speed = 3.5f;
        a->max_accel = 8.0f;
        a->arrive_radius = 1.0f;
        a->behavior = NAV_BEHAVIOR_ARRIVE;
        memcpy(a->target, t, sizeof a->target);
        a->has_target = true;
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"id\":\"npc-%u\",\"position\":[%.9g,%.9g,%.9g],"
                                "\"velocity\":[0,0,0],\"radius\":0.3,\"max_speed\":3.5,"
                                "\"max_accel\":8,\"behavior\":\"arrive\","
                                "\"target\":[%.9g,%.9g,%.9g],\"arrive_radius\":1}",
                                i ? "," : "", (unsigned)i, (double)a->pos[0], (double)a->pos[1],
                                (double)a->pos[2], (double)t[0], (double)t[1], (double)t[2]);
    }
    len += (size_t)snprintf(body + len, cap - len, "]}");

    th_conn c;
    th_response r;
    enum { reps = 20 };
    double e2e = 0, each[reps];
    size_t resp_len = 0;
    int status = 0;
    if (put / 100 == 2 && th_connect(&c, srv.port) == 0) {
        for (int k = 0; k < reps + 2; k++) {
            double t0 = bench_now();
            memset(&r, 0, sizeof r);
            th_conn_request(&c, "POST", "/v1/navmeshes/dungeon/step", "application/json", body, len,
                            NULL, &r);
            if (k >= 2) {
                each[k - 2] = bench_now() - t0;
                e2e += each[k - 2];
            }
            status = r.status;
            resp_len = r.body_len;
            th_response_free(&r);
        }
        th_close(&c);
    }
    /* the same tick in process (fresh scratch and query, no cache: as the
       server with its cache cold on the first request, warm afterwards) */
    nav_steer *st = nav_steer_new(n, 1);
    nav_query *q = nav_query_new(65536);
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = 0.05f;
    double inproc = 0;
    for (int k = 0; k < reps; k++) {
        nav_step_error err;
        double t0 = bench_now();
        nav_step(st, m, q, NULL, &p, in, n, NULL, 0, out, &err);
        inproc += bench_now() - t0;
    }
    if (status == 200) {
        double ms = e2e * 1e3 / reps, ims = inproc * 1e3 / reps;
        /* other work shares the cores: the fastest and the median request
           say more than the mean */
        for (int i = 1; i < reps; i++)
            for (int j = i; j > 0 && each[j] < each[j - 1]; j--) {
                double t = each[j];
                each[j] = each[j - 1];
                each[j - 1] = t;
            }
        printf("steer http: POST step of %u agents (%zu B in, %zu B out): %.2f ms end to end "
               "(fastest %.2f, median %.2f; target 5); nav_step %.2f ms in process, so JSON + "
               "HTTP are %.0f%%\n",
               (unsigned)n, len, resp_len, ms, each[0] * 1e3, each[reps / 2] * 1e3, ims,
               ms > 0 ? 100.0 * (ms - ims) / ms : 0.0);
    } else {
        printf("steer http: PUT -> %d, POST step -> %d: skipped\n", put, status);
    }
    nav_steer_free(st);
    nav_query_free(q);
    free(in);
    free(out);
    free(body);
    th_stop(&srv);
    th_cleanup(&srv);
    nav_mesh_free(m);
}

void bench_steer(void) {
    printf("== steering (nav_step, avoidance on; DetourCrowd reference 4.5-7 us/agent-step at "
           "1,000 agents)\n");
    const char *files[] = {"dungeon.navmesh.obj", "nav_test.navmesh.obj", "undulating.navmesh.obj"};
    uint32_t counts[] = {100, 1000, 10000};
    for (int f = 0; f < 3; f++) {
        nav_mesh *m = load_obj(files[f]);
        if (!m) {
            printf("steer: ../shared/meshes/%s absent, skipped\n", files[f]);
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(files[f], '.') - files[f]), files[f]);
        for (int c = 0; c < 3; c++)
            run(name, m, counts[c], 1, BENCH_PLAYERS, 0);
        run(name, m, 1000, 0, BENCH_PLAYERS, 0);
        nav_mesh_free(m);
    }
    /* the query bench's generated large mesh: fx_random 320 x 320 of 1 m
       cells, 20% holes, triangles, islands */
    fx_random_opts o = fx_random_defaults();
    o.width = 320;
    o.height = 320;
    o.cell = 1.0f;
    o.hole_ratio = 0.2f;
    o.triangulate = 1;
    o.islands = 1;
    nav_mesh *big = fx_random(2024, &o);
    for (int c = 0; c < 3; c++)
        run("large", big, counts[c], 1, BENCH_MAX_PLAYERS, 1);
    /* the stress case: 8 players chased from anywhere on the 320 m map, so
       every polygon an agent enters is a new (start, end) pair for the cache
       and costs a cross-map search */
    run("large", big, 1000, 1, BENCH_PLAYERS, 0);
    nav_mesh_free(big);
    bench_http(1000);
}

/* NAVD_BENCH=stephttp: only the step over HTTP (bench_http above). */
void bench_step_http(void) {
    printf("== step over HTTP (1,000 agents on dungeon, the real binary)\n");
    bench_http(1000);
}

/* NAVD_BENCH=flow: shared_targets on the large mesh. */
void bench_flow(void) {
    printf("== flow: agents sharing targets on the large mesh (one tree per target)\n");
    fx_random_opts o = fx_random_defaults();
    o.width = 320;
    o.height = 320;
    o.cell = 1.0f;
    o.hole_ratio = 0.2f;
    o.triangulate = 1;
    o.islands = 1;
    nav_mesh *big = fx_random(2024, &o);
    shared_targets(big, 10000, 10, 0, 1, 1);
    shared_targets(big, 10000, 10, 0, 2, 1);
    shared_targets(big, 10000, 10, 0, 2, 2);
    shared_targets(big, 1000, 10, 1, 1, 1);
    nav_mesh_free(big);
}
