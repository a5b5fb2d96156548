/*
 * bench: the `make bench` runner (build/bench_navd). bench_main.c owns
 * main(); other helpers' bench files add one entry function each, declared
 * here and called from main only when linked (weak references), so the
 * runner builds before they land.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "tests/test_http.h"

/* Monotonic clock in seconds. */
double bench_now(void);

/*
 * The HTTP figures' common setup: reads ../shared's dungeon mesh, starts
 * navd ($NAVD_BIN) on a fresh database and PUTs the mesh as "dungeon".
 * Returns the PUT's HTTP status (0 when no response was read; stop and
 * clean up s afterwards), or -1 when ../shared is absent or navd did not
 * start: then it has printed why, after `label`, and cleaned up s.
 */
int bench_start_dungeon(th_server *s, const char *label);

/* The rooms-and-walls mesh of about 130,000 polygons (fx_random, 330 x 330
   cells, 8 % of them in wall segments, triangulated) whose stored blob is
   8 MiB: the load and propagation benches' realistic large mesh. */
struct nav_mesh *bench_rooms_mesh(void);

/* Optimal search figures (tests/bench/bench_optimal.c, optimal helper). */
void bench_optimal(void) __attribute__((weak));
/* reachable max_cost figures: the exact flood against the Dijkstra (bench_optimal.c). */
void bench_reach(void) __attribute__((weak));
/* Snapping and height lookup figures (tests/bench/bench_snap.c). */
void bench_snap(void) __attribute__((weak));
/* Steering figures (tests/bench/bench_steer.c, steering helper). */
void bench_steer(void) __attribute__((weak));
/* Only the 1,000-agent step over HTTP (tests/bench/bench_steer.c). */
void bench_step_http(void) __attribute__((weak));
/* Agents sharing targets on the large mesh (tests/bench/bench_steer.c). */
void bench_flow(void) __attribute__((weak));
/* nav_step beside DetourCrowd itself (tests/bench/bench_crowd.c, steering helper). */
void bench_crowd(void) __attribute__((weak));
/* Replace latency under load and the health lane (tests/bench/bench_hardening.c). */
void bench_hardening(void) __attribute__((weak));
/* Replicas over PostgreSQL: propagation, reads through nginx, write latency (bench_pg.c). */
void bench_pg(void) __attribute__((weak));
/* nav_bake beside Recast's bake (tests/bench/bench_bake.c). */
void bench_bake(void) __attribute__((weak));
/* Mixed-traffic load/soak figures (tests/bench/bench_load.c, reliability helper). */
void bench_load(void) __attribute__((weak));
/* Flight volumes: bake, memory, path latency (tests/bench/bench_volume.c). */
void bench_volume(void) __attribute__((weak));
/* Loading a stored mesh: version 3 (built structures) against a rebuild
   (tests/bench/bench_blobload.c). */
void bench_blobload(void) __attribute__((weak));

#endif
