/*
 * bench: the `make bench` runner (build/bench_navd). bench_main.c owns
 * main(); other helpers' bench files add one entry function each, declared
 * here and called from main only when linked (weak references), so the
 * runner builds before they land.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

/* Monotonic clock in seconds. */
double bench_now(void);

/* Optimal search figures (tests/bench/bench_optimal.c, optimal helper). */
void bench_optimal(void) __attribute__((weak));
/* Snapping and height lookup figures (tests/bench/bench_snap.c). */
void bench_snap(void) __attribute__((weak));
/* Steering figures (tests/bench/bench_steer.c, steering helper). */
void bench_steer(void) __attribute__((weak));
/* Mixed-traffic load/soak figures (tests/bench/bench_load.c, reliability helper). */
void bench_load(void) __attribute__((weak));

#endif
