/*
 * test_rand: the seeded xorshift32 every test and benchmark draws from
 * (declared in tests/test_fixtures.h). Its own file, free of Check, because
 * the fuzz harnesses link tests/test_load.c, which uses it, without the
 * Check-based fixtures.
 */
#include "tests/test_fixtures.h"

uint32_t fx_rand(uint32_t *state) {
    uint32_t x = *state ? *state : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

float fx_randf(uint32_t *state) {
    return (float)(fx_rand(state) >> 8) / 16777216.0f;
}
