/*
 * api_step_codec: the agent and obstacle decoders of the step endpoints,
 * shared by the navmesh step (api_step.c) and the flight-volume step
 * (api_volume_step.c) so both read and refuse the same fields alike
 * ("agents[3].position[1] is not a finite number").
 */
#ifndef API_STEP_CODEC_H
#define API_STEP_CODEC_H

#include <jansson.h>
#include <stdint.h>

#include "api/api.h"
#include "api/api_error.h"
#include "nav/nav_steer.h"
#include "nav/nav_vol.h"

/* agents[i]: position (required), velocity, radius, max_speed, max_accel, arrive_radius,
   target, target_velocity, threat, behavior (default arrive with a target, else idle). */
api_code api_step_decode_agent(const json_t *j, uint32_t i, nav_agent_in *a, api_err *e);
/* obstacles[k]: position and radius (required), velocity. */
api_code api_step_decode_obstacle(const json_t *j, uint32_t k, nav_obstacle *o, api_err *e);

/* This thread's step buffers, each --max-agents long, made on first use and
   freed with the thread (one set for both steps: a worker serves either);
   vol_out is made on the first volume step. NULL when out of memory. */
typedef struct api_step_buffers {
    nav_steer *steer;
    nav_agent_in *in;
    nav_agent_out *out;
    nav_obstacle *obs;
    nav_vol_agent_out *vol_out;
} api_step_buffers;
api_step_buffers *api_step_thread_buffers(const api_config *cfg, bool vol);

#endif
