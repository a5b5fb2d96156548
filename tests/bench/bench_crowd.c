/*
 * bench_crowd: nav_step beside DetourCrowd itself, on the same scenario in
 * the same run (issue 14's cost bar: per agent-step <= 1.0x DetourCrowd
 * "medium", the goal 0.5x).
 *
 * The scenario: 1,000 agents at random points of dungeon, each sent to a
 * random point it can reach, radius 0.6, 3.5 m/s, accel 8, dt 0.05; 20
 * warm-up ticks, then 100 timed. It is written to a temporary file and run
 * by build/crowd_ref (tests/bench/crowd_ref.cpp, linking Debian's
 * librecast-dev; NAVD_CROWD_REF overrides the path) at DetourCrowd's
 * "medium" and "high" avoidance, then by nav_step (every agent `arrive`,
 * avoidance on) with the path cache and without it. The ratios divide our
 * time by DetourCrowd's measured just before, never by a typed-in figure.
 *
 * Quality beside cost: the runs with the cache and DetourCrowd's go on,
 * untimed, to CROWD_TOTAL ticks (30 s), and both sides measure the same way
 * after every tick from the first timed one: the deepest overlap between
 * two agents on one floor (within 2 m in y), the pair-ticks overlapping by
 * more than 5 cm and by more than 30 cm (bodies passing through each
 * other: a quarter of a diameter), and how many agents stand within 1 m (xz) of their target
 * at the end of the timed ticks, at 15 s and at 30 s. The scenario packs
 * 1,000 bodies of 1.13 m2 onto dungeon's 1,585 m2, so it is a jam on both
 * sides: the figures compare, they do not describe a realistic crowd.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nav/nav_cache.h"
#include "nav/nav_steer.h"
#include "tests/bench/bench.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

#define CROWD_N 1000
#define CROWD_WARM 20
#define CROWD_TICKS 100
#define CROWD_DT 0.05f
#define CROWD_RADIUS 0.6f
#define CROWD_SPEED 3.5f
#define CROWD_ACCEL 8.0f
#define CROWD_TOTAL 600 /* ticks of the quality run (30 s) */

/* The quality figures (see the top of the file). */
typedef struct crowd_quality {
    double deepest;
    long over5;
    int arrived[3];
    long over30;
} crowd_quality;

static void quality_tick(crowd_quality *cq, const nav_agent_in *in, const float *tg, int t) {
    for (int i = 0; i < CROWD_N; i++)
        for (int j = i + 1; j < CROWD_N; j++) {
            if (fabsf(in[i].pos[1] - in[j].pos[1]) > 2.0f)
                continue;
            double pen = 2.0 * CROWD_RADIUS - hypot((double)in[i].pos[0] - in[j].pos[0],
                                                    (double)in[i].pos[2] - in[j].pos[2]);
            if (pen > cq->deepest)
                cq->deepest = pen;
            if (pen > 0.05)
                cq->over5++;
            if (pen > 0.3)
                cq->over30++;
        }
    int at = t + 1 == CROWD_WARM + CROWD_TICKS ? 0
             : t + 1 == CROWD_TOTAL / 2        ? 1
             : t + 1 == CROWD_TOTAL            ? 2
                                               : -1;
    if (at < 0)
        return;
    for (int i = 0; i < CROWD_N; i++) {
        const float *g = &tg[3 * i];
        if (hypot((double)in[i].pos[0] - g[0], (double)in[i].pos[2] - g[2]) <= 1.0 &&
            fabsf(in[i].pos[1] - g[1]) <= 2.0f)
            cq->arrived[at]++;
    }
}

static void quality_print(const char *who, const crowd_quality *cq) {
    printf("crowd quality %-16s deepest overlap %.3f m, pair-ticks > 5 cm %8ld, > 30 cm %8ld, "
           "within 1 m of target %4d at 6 s, %4d at 15 s, %4d at 30 s\n",
           who, cq->deepest, cq->over5, cq->over30, cq->arrived[0], cq->arrived[1], cq->arrived[2]);
}

/* DetourCrowd's us/agent-step at `quality`, or -1 when the helper failed. */
static double detour_crowd(const char *mesh, const char *scen, const char *quality) {
    const char *ref = getenv("NAVD_CROWD_REF");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s %s %s %d", ref && *ref ? ref : "build/crowd_ref", mesh, scen,
             quality, CROWD_TOTAL);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char q[16];
    double us = -1, speed = 0;
    int active = 0;
    crowd_quality cq;
    if (fscanf(p, "crowd_ref %15s %lf %d %lf ", q, &us, &active, &speed) != 4)
        us = -1;
    else if (fscanf(p, "crowd_quality %lf %ld %d %d %d %ld", &cq.deepest, &cq.over5, &cq.arrived[0],
                    &cq.arrived[1], &cq.arrived[2], &cq.over30) != 6)
        us = -1;
    if (pclose(p) != 0)
        us = -1;
    if (us >= 0)
        printf("crowd DetourCrowd %-6s %4d agents: %6.2f us/agent-step (mean speed %.2f m/s at "
               "the end)\n",
               quality, active, us, speed);
    if (us >= 0) {
        char who[32];
        snprintf(who, sizeof who, "DetourCrowd %s", quality);
        quality_print(who, &cq);
    }
    return us;
}

/* nav_step on the same scenario: us/agent-step. */
static double ours(const nav_mesh *m, const float *st, const float *tg, int use_cache) {
    nav_steer *s = nav_steer_new(CROWD_N, 1);
    nav_query *q = nav_query_new(65536);
    nav_cache *cache = use_cache ? nav_cache_new((size_t)64 << 20, 0) : NULL;
    nav_agent_in *in = calloc(CROWD_N, sizeof *in);
    nav_agent_out *out = calloc(CROWD_N, sizeof *out);
    double us = -1;
    if (!s || !q || !in || !out || (use_cache && !cache))
        goto done;
    for (int i = 0; i < CROWD_N; i++) {
        nav_agent_in *a = &in[i];
        memcpy(a->pos, &st[3 * i], sizeof a->pos);
        memcpy(a->target, &tg[3 * i], sizeof a->target);
        a->has_target = true;
        a->radius = CROWD_RADIUS;
        a->max_speed = CROWD_SPEED;
        a->max_accel = CROWD_ACCEL;
        a->arrive_radius = 1.0f;
        a->behavior = NAV_BEHAVIOR_ARRIVE;
    }
    nav_steer_params p;
    nav_steer_params_default(&p);
    p.dt = CROWD_DT;
    double el = 0, vsum = 0;
    crowd_quality cq = {0, 0, {0, 0, 0}, 0};
    /* only the steps of the timed ticks are timed; the quality figures are
       taken between steps (with the cache only: the answers are the same) */
    int last = use_cache ? CROWD_TOTAL : CROWD_WARM + CROWD_TICKS;
    for (int t = 0; t < last; t++) {
        nav_step_error err;
        double t0 = bench_now();
        if (nav_step(s, m, q, cache, &p, in, CROWD_N, NULL, 0, out, &err) != NAV_OK)
            goto done;
        if (t >= CROWD_WARM && t < CROWD_WARM + CROWD_TICKS)
            el += bench_now() - t0;
        for (int i = 0; i < CROWD_N; i++) {
            if (out[i].status != NAV_OK)
                continue;
            memcpy(in[i].pos, out[i].pos, sizeof in[i].pos);
            memcpy(in[i].vel, out[i].vel, sizeof in[i].vel);
        }
        if (t + 1 == CROWD_WARM + CROWD_TICKS)
            for (int i = 0; i < CROWD_N; i++)
                vsum += hypotf(in[i].vel[0], in[i].vel[2]);
        if (use_cache && t >= CROWD_WARM)
            quality_tick(&cq, in, tg, t);
    }
    us = el * 1e6 / ((double)CROWD_N * CROWD_TICKS);
    printf("crowd navd %-8s      %4d agents: %6.2f us/agent-step (mean speed %.2f m/s at the "
           "end)\n",
           use_cache ? "cache" : "no-cache", CROWD_N, us, vsum / CROWD_N);
    if (use_cache)
        quality_print("navd", &cq);
done:
    free(in);
    free(out);
    nav_cache_free(cache);
    nav_query_free(q);
    nav_steer_free(s);
    return us;
}

void bench_crowd(void) {
    printf("== crowd: nav_step beside DetourCrowd (1,000 agents on dungeon, radius 0.6, 3.5 m/s, "
           "accel 8, dt 0.05, 100 ticks after 20)\n");
    const char *mesh = fx_shared_mesh_path("dungeon.navmesh.json");
    nav_mesh *m = mesh ? mj_load(mesh) : NULL;
    if (!m) {
        printf("crowd: ../shared/meshes/dungeon.navmesh.json absent, skipped\n");
        return;
    }
    float *st = malloc(sizeof(float) * 3 * CROWD_N), *tg = malloc(sizeof(float) * 3 * CROWD_N);
    char scen[] = "/tmp/navd-crowd-XXXXXX";
    int fd = mkstemp(scen);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!st || !tg || !f) {
        printf("crowd: cannot write the scenario\n");
        goto done;
    }
    uint32_t rng = 0xC40DD;
    fprintf(f, "%d %d %d %g %g %g %g\n", CROWD_N, CROWD_WARM, CROWD_TICKS, (double)CROWD_DT,
            (double)CROWD_RADIUS, (double)CROWD_SPEED, (double)CROWD_ACCEL);
    for (int i = 0; i < CROWD_N; i++) {
        uint32_t sp = fx_random_point(m, &rng, &st[3 * i]), tp = sp;
        /* a target it can reach (a few tries; else where it stands) */
        memcpy(&tg[3 * i], &st[3 * i], 3 * sizeof(float));
        for (int k = 0; k < 20; k++) {
            float c[3];
            tp = fx_random_point(m, &rng, c);
            if (nav_mesh_reachable(m, sp, tp)) {
                memcpy(&tg[3 * i], c, sizeof c);
                break;
            }
        }
        fprintf(f, "%.6f %.6f %.6f %.6f %.6f %.6f\n", (double)st[3 * i], (double)st[3 * i + 1],
                (double)st[3 * i + 2], (double)tg[3 * i], (double)tg[3 * i + 1],
                (double)tg[3 * i + 2]);
    }
    fclose(f);
    f = NULL;
    double med = detour_crowd(mesh, scen, "medium");
    double high = detour_crowd(mesh, scen, "high");
    if (med < 0)
        printf("crowd: DetourCrowd helper (build/crowd_ref) did not run; ratios skipped\n");
    double c = ours(m, st, tg, 1), nc = ours(m, st, tg, 0);
    if (med > 0 && c > 0 && nc > 0)
        printf("crowd navd / DetourCrowd medium: %.2fx with the cache, %.2fx without "
               "(bar 1.0x, goal 0.5x)%s\n",
               c / med, nc / med, high > 0 ? "" : "; high not measured");
    if (high > 0 && c > 0)
        printf("crowd navd / DetourCrowd high:   %.2fx with the cache, %.2fx without\n", c / high,
               nc / high);
done:
    if (f)
        fclose(f);
    unlink(scen);
    free(st);
    free(tg);
    nav_mesh_free(m);
}
