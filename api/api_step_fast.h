/*
 * api_step_fast: reads the common shape of a step body without a JSON tree
 * (api_step_fast.c); gives up on anything else, which the tree-based
 * decoder in api_step.c then reads, so answers and errors stay the same.
 */
#ifndef API_STEP_FAST_H
#define API_STEP_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nav/nav_steer.h"

/* Defaults of the optional agent fields (documented in api/openapi.yaml),
   shared by both decoders. */
#define STEP_FAST_DEFAULT_RADIUS 0.5
#define STEP_FAST_DEFAULT_MAX_SPEED 3.5
#define STEP_FAST_DEFAULT_MAX_ACCEL 8.0
#define STEP_FAST_DEFAULT_ARRIVE_RADIUS 1.0

/* Where the decoded request goes. ids: at least as many bytes as the body
   (agent ids are copied there, NUL-terminated, and borrowed by agents). */
typedef struct api_step_fast_out {
    nav_agent_in *agents;
    uint32_t max_agents; /* more: give up (the tree decoder answers 413) */
    nav_obstacle *obstacles;
    uint32_t max_obstacles;
    char *ids;
} api_step_fast_out;

/*
 * Decodes body into o's arrays and p (dt, extents, avoidance; p holds the
 * defaults on entry) and *use_cache. Returns false when the body is not of
 * the shape read here (or is invalid): p, *use_cache and o's arrays may
 * then hold anything, and the caller decodes the body the other way.
 */
bool api_step_fast_decode(const char *body, size_t len, const api_step_fast_out *o,
                          nav_steer_params *p, bool *use_cache, uint32_t *nagents,
                          uint32_t *nobstacles);

/* The number [s, s + n) as jansson would read it (an integer literal as an
   integer, a real as strtod does); false when it is not all one JSON number
   of the kind read here. For tests. */
bool api_step_fast_number(const char *s, size_t n, double *out);

#endif
