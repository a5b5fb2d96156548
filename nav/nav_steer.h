/*
 * nav_steer: stateless steering of agents on a navmesh (the `step` endpoint).
 *
 * Owns: per-agent behaviours (seek, arrive, flee, pursue, evade, wander,
 * hide, idle), path following along the next corners of the navmesh path,
 * local avoidance of the other agents, of moving obstacles and of walls,
 * arbitration between them, acceleration / speed limits and the move along
 * the mesh surface (nav_move_along_surface, in nav_move.c).
 *
 * Stateless: the caller sends every agent's state each tick and gets back
 * the new velocity and position; nothing survives between calls except the
 * scratch buffers and the optional path cache. The same input yields
 * bit-identical output (no clock, no global RNG, fixed iteration order),
 * whether or not the path cache holds anything (see nav_step).
 *
 * Units: metres, seconds; y is up; steering happens in the xz plane and the
 * height of every returned position is the mesh surface (nav_mesh_height).
 *
 * Arbitration (highest priority first):
 *   1. stay on the mesh: every move is clamped to the surface and slides
 *      along walls; wall segments near the agent are obstacles for avoidance;
 *      flee/evade/wander only pick directions with room on the mesh;
 *   2. avoid collisions: a sampled velocity-obstacle search (DetourCrowd's
 *      adaptive sampling) around the behaviour's desired velocity, scored
 *      against the neighbours (spatial hash), the moving obstacles and the
 *      local wall boundary; then overlapping agents are pushed apart;
 *   3. the requested behaviour, which proposes the desired velocity.
 * The output's `behavior` is always one of the contract's eight: the
 * behaviour whose desired velocity the agent followed (the requested one, or
 * NAV_BEHAVIOR_FLEE for a hide with no hiding spot). That avoidance corrected
 * the velocity (by more than NAV_STEER_AVOID_EPS * max_speed) is said by
 * `avoiding`, never by `behavior`, so a client switching on the enum always
 * finds a known value.
 *
 * Speed: an agent's whole xz displacement in a tick, its own move and any
 * separation push included, never exceeds max_speed * dt (an agent with
 * max_speed 0 is never moved, even when overlapped). A separation push is a
 * positional correction (as in DetourCrowd), not part of the velocity: the
 * reported velocity is the agent's own move, the commanded velocity, or
 * when a wall changed that move, the displacement it made along the wall
 * divided by dt. So the reported velocity differs from the input one by at
 * most max_accel * dt (when the input speed is within max_speed), except
 * where a wall stopped or deflected the agent: a wall is an external
 * constraint, and feeding a push into it back in would be worse.
 *
 * Not thread-safe: a nav_steer is per-thread scratch, like nav_query.
 */
#ifndef NAV_STEER_H
#define NAV_STEER_H

#include <stdbool.h>
#include <stdint.h>

#include "nav/nav_mesh.h"
#include "nav/nav_query.h"

/* The path cache (nav/nav_cache.h); nav_step accepts NULL. */
typedef struct nav_cache nav_cache;

typedef struct nav_steer nav_steer;

/* Behaviours: the X-macro gives the enum and the contract's names; the same
   eight are accepted as input and reported as output. */
#define NAV_BEHAVIOR_LIST(X)                                                                       \
    X(NAV_BEHAVIOR_IDLE, "idle")                                                                   \
    X(NAV_BEHAVIOR_SEEK, "seek")                                                                   \
    X(NAV_BEHAVIOR_ARRIVE, "arrive")                                                               \
    X(NAV_BEHAVIOR_FLEE, "flee")                                                                   \
    X(NAV_BEHAVIOR_PURSUE, "pursue")                                                               \
    X(NAV_BEHAVIOR_EVADE, "evade")                                                                 \
    X(NAV_BEHAVIOR_WANDER, "wander")                                                               \
    X(NAV_BEHAVIOR_HIDE, "hide")

typedef enum nav_behavior {
#define NAV_BEHAVIOR_ENUM(name, text) name,
    NAV_BEHAVIOR_LIST(NAV_BEHAVIOR_ENUM)
#undef NAV_BEHAVIOR_ENUM
        NAV_BEHAVIOR_COUNT
} nav_behavior;

/* Static name of a behaviour ("arrive"); "?" when out of range. */
const char *nav_behavior_name(nav_behavior b);
/* Parses a behaviour name (len bytes, not NUL-terminated). Returns false when
   it is not one of the eight. */
bool nav_behavior_parse(const char *s, size_t len, nav_behavior *out);

/* Corners reported per agent (A, B, ... of the path ahead), at most this
   many. The contract promises "two or more": an agent following a path
   (seek, arrive, pursue, hide) always gets at least two, the path's end
   repeated when fewer remain; the others have no path and get none. */
#define NAV_STEER_MAX_CORNERS 4
/* Avoidance counts as "changed the velocity" beyond this share of max_speed. */
#define NAV_STEER_AVOID_EPS 0.05f

/* Which input field a validation error is about (names as in the contract). */
#define NAV_STEP_FIELD_LIST(X)                                                                     \
    X(NAV_STEP_FIELD_NONE, "")                                                                     \
    X(NAV_STEP_FIELD_DT, "dt")                                                                     \
    X(NAV_STEP_FIELD_EXTENTS, "extents")                                                           \
    X(NAV_STEP_FIELD_HORIZON, "horizon")                                                           \
    X(NAV_STEP_FIELD_ARRIVE_TOLERANCE, "arrive_tolerance")                                         \
    X(NAV_STEP_FIELD_AGENTS, "agents")                                                             \
    X(NAV_STEP_FIELD_POSITION, "position")                                                         \
    X(NAV_STEP_FIELD_VELOCITY, "velocity")                                                         \
    X(NAV_STEP_FIELD_RADIUS, "radius")                                                             \
    X(NAV_STEP_FIELD_MAX_SPEED, "max_speed")                                                       \
    X(NAV_STEP_FIELD_MAX_ACCEL, "max_accel")                                                       \
    X(NAV_STEP_FIELD_BEHAVIOR, "behavior")                                                         \
    X(NAV_STEP_FIELD_TARGET, "target")                                                             \
    X(NAV_STEP_FIELD_TARGET_VELOCITY, "target_velocity")                                           \
    X(NAV_STEP_FIELD_THREAT, "threat")                                                             \
    X(NAV_STEP_FIELD_ARRIVE_RADIUS, "arrive_radius")                                               \
    X(NAV_STEP_FIELD_OBSTACLES, "obstacles")

typedef enum nav_step_field {
#define NAV_STEP_FIELD_ENUM(name, text) name,
    NAV_STEP_FIELD_LIST(NAV_STEP_FIELD_ENUM)
#undef NAV_STEP_FIELD_ENUM
        NAV_STEP_FIELD_COUNT
} nav_step_field;

/* Static contract name of a field ("max_speed"). */
const char *nav_step_field_name(nav_step_field f);

/* One agent's state as the game sends it. */
typedef struct nav_agent_in {
    const char *id;  /* borrowed, NUL-terminated; hashed by wander; may be NULL */
    float pos[3];    /* current position (snapped within params.extents) */
    float vel[3];    /* current velocity, m/s (y ignored) */
    float radius;    /* > 0, m */
    float max_speed; /* >= 0, m/s */
    float max_accel; /* >= 0, m/s^2 */
    nav_behavior behavior;
    float target[3]; /* seek/arrive/pursue goal; flee/evade/hide threat when no `threat` */
    float target_vel[3];
    float threat[3];
    float arrive_radius; /* >= 0, m: arrive slows down inside it */
    bool has_target, has_target_vel, has_threat;
} nav_agent_in;

/* A moving circular obstacle (a crate, a vehicle): avoided, never pushed. */
typedef struct nav_obstacle {
    float pos[3];
    float vel[3];
    float radius; /* > 0, m */
} nav_obstacle;

/*
 * Avoidance debug record of one agent (nav_steer_params.avoid_debug): every
 * candidate velocity the sampled avoidance scored, in the order scored, with
 * its full penalty (never the early-out bound), and the one it chose: the
 * first candidate of lowest penalty (ties keep the earlier). `chosen` is
 * the sampling's answer before the deadlock breaker (a stuck agent's nudge,
 * nav_steer_avoid.c) and the later stages of steer_agent_tick: crowd
 * arrival may stop the agent, the acceleration and speed limits clamp it and
 * a wall slides it, so the reported velocity may differ from it.
 * nsamples is 0 when avoidance did not sample for the agent: avoidance off,
 * max_speed 0, a settled agent, one in its final approach, no neighbour or
 * obstacle in range, or the desired velocity meets nobody within the horizon
 * (kept as is).
 */
#define NAV_STEER_AVOID_SAMPLES 32 /* desired + rest + 2 rings of 6 + 3 x 6 refinements */
typedef struct nav_avoid_record {
    uint32_t nsamples;
    uint32_t chosen_index;                     /* into samples */
    float samples[NAV_STEER_AVOID_SAMPLES][4]; /* vx, vy (0), vz, penalty */
    float chosen[3];
} nav_avoid_record;

/* Step-wide parameters. nav_steer_params_default fills the defaults. */
typedef struct nav_steer_params {
    float dt;                 /* seconds, finite, in (0, 1] */
    float extents[3];         /* snapping half-box, each >= 0; default {2, 4, 2} */
    const nav_filter *filter; /* NULL: default; applies to snapping, paths, moves and raycasts */
    uint32_t max_nodes;       /* path search budget per agent; 0: the query's pool */
    bool avoidance;           /* default true */
    float horizon;            /* s, > 0: look-ahead of avoidance; default 2 */
    float arrive_tolerance;   /* m, > 0: `arrived` distance; default 0.05 */
    uint64_t seed;            /* mixed into wander's hash; default 0 */
    /* CLOCK_MONOTONIC seconds after which nav_step gives up with
       NAV_E_DEADLINE (checked between agents, so a step overruns it by at
       most one agent's path search); 0: none (default). */
    double deadline;
    /* Threads a large step may use (default 1: the caller's only). Up to 8,
       and only with at least 128 agents per thread; the answer is the same
       bytes whatever the number (each agent reads only the tick's shared
       input state). */
    uint32_t threads;
    /* NULL (default): nothing recorded, no cost. Else nagents records the
       caller owns, one per agent slot, each rewritten by nav_step (see
       nav_avoid_record); recording changes no byte of the output. */
    nav_avoid_record *avoid_debug;
    /* false (default): an agent that reaches an off-mesh link stops at its
       start with the link's `action` and the game moves it across. true:
       navd moves it across within the tick (see nav_steer_action). An
       agent with max_speed 0 is never moved: it waits either way. */
    bool traverse_links;
} nav_steer_params;

void nav_steer_params_default(nav_steer_params *p);

/*
 * The off-mesh link an agent has reached (the first one, when it crossed
 * several this tick): the game performs its animation.
 *
 * Landing: `land` is where the agent lands: the link's end, unless another
 * agent of the request stands there (radii overlapping after this tick's
 * moves and pushes, which first clear the spot where they can). Then it is
 * the nearest point of the landing floor (reached along the surface from
 * the end, no wall crossed, within the jumper's radius plus the largest
 * occupant's of the end) where the jumper overlaps nobody; the end itself
 * when there is no such point. Landers are placed in index order, each
 * seeing the earlier ones where they land (a waiting one also where it
 * stands).
 *
 * With params.traverse_links the agent is moved across within the tick
 * (nav_step), its travel counted out of max_speed * dt: the walk to the
 * link's start (xz), the link's 3-D length, then the walk on along its
 * path. The first link is taken when its start is within the link's radius
 * (as without the option) or within max_speed * dt of path, and completed
 * whatever its length (the game does the same without the option); a
 * further link is taken only when its start is reached with budget left
 * (nlinks counts them). The walk stops when the budget runs out, at the
 * goal, or short of a link it has no budget left for. Its answer's position
 * is where that ends, moved off any occupant as a landing is; `land` is
 * that same position.
 */
typedef struct nav_steer_action {
    uint32_t link;
    const char *kind; /* owned by the mesh */
    float start[3], end[3];
    float land[3];   /* where to land (see above): end, or the nearest free spot */
    uint32_t nlinks; /* links taken this tick: 1, or more with traverse_links */
} nav_steer_action;

/* One agent's answer, in the slot of the same index. */
typedef struct nav_agent_out {
    nav_status status; /* NAV_OK, or NAV_E_OFF_MESH (only this slot failed) */
    float pos[3];      /* new position, on the surface */
    float vel[3];      /* own move's velocity (along a wall: what was made), y = 0; no push */
    float desired_vel[3];
    float corners[NAV_STEER_MAX_CORNERS][3];
    uint32_t ncorners;     /* >= 2 for a path behaviour, 0 otherwise (NAV_STEER_MAX_CORNERS) */
    nav_behavior behavior; /* one of the eight: whose desired velocity was followed */
    bool avoiding;
    /* "stop here": at the goal and nearly still, or, for `arrive`, blocked
       by still or arrived agents of the same goal nearer to it (crowd
       arrival, steer_settle in nav_steer_internal.h) */
    bool arrived;
    uint32_t poly; /* polygon under pos */
    /* When status is NAV_E_OFF_MESH: which point was off the mesh
       (NAV_STEP_FIELD_POSITION, _TARGET or _THREAT). */
    nav_step_field error_field;
    bool has_action;
    nav_steer_action action;
} nav_agent_out;

/*
 * Why nav_step rejected its input. agent / obstacle: the index the error is
 * about, or -1; component: 0..2 for a vector's element, else -1. message is a
 * sentence naming the field as the API does ("agents[3].radius must be > 0").
 */
typedef struct nav_step_error {
    nav_status status;
    int32_t agent;
    int32_t obstacle;
    nav_step_field field;
    int32_t component;
    char message[160];
} nav_step_error;

/*
 * Allocates the scratch for up to max_agents agents and max_obstacles
 * obstacles per step (both >= 1). All per-step memory is allocated here, so
 * nav_step never allocates. NULL on allocation failure or bad sizes.
 */
nav_steer *nav_steer_new(uint32_t max_agents, uint32_t max_obstacles);
void nav_steer_free(nav_steer *s);
uint32_t nav_steer_max_agents(const nav_steer *s);
uint32_t nav_steer_max_obstacles(const nav_steer *s);

/*
 * Validates the inputs without stepping: NAV_OK or NAV_E_INVALID_ARG with
 * err filled (err may be NULL). nav_step calls it first.
 */
nav_status nav_step_validate(const nav_steer_params *params, const nav_agent_in *agents,
                             uint32_t nagents, const nav_obstacle *obstacles, uint32_t nobstacles,
                             nav_step_error *err);

/*
 * One steering tick for nagents agents: out must have nagents slots.
 * query: path search scratch (see nav_query_new); cache: NULL or a path cache
 * shared by the caller. Output is a pure function of the inputs and the
 * mesh: paths follow the canonical corridor of each (agent polygon, goal
 * polygon) pair (nav_find_path_reuse, nav_cache.h), which the cache only
 * memoises, so a cold cache, a warm one or none (NULL) give identical bytes;
 * the cache only saves searches. Returns NAV_E_INVALID_ARG (err says which
 * agent / field), NAV_E_LIMIT when nagents or nobstacles exceed the scratch,
 * NAV_E_DEADLINE when params->deadline passed before every agent was
 * steered (out is then not an answer), else NAV_OK; an agent whose position is not within
 * params->extents of the mesh gets NAV_E_OFF_MESH in its own slot and the others are answered.
 */
nav_status nav_step(nav_steer *s, const nav_mesh *m, nav_query *q, nav_cache *cache,
                    const nav_steer_params *params, const nav_agent_in *agents, uint32_t nagents,
                    const nav_obstacle *obstacles, uint32_t nobstacles, nav_agent_out *out,
                    nav_step_error *err);

/*
 * Moves from `start` (on start_poly) toward `target` along the surface, in xz:
 * crosses portals, and where a wall (an edge with no usable neighbour) is in
 * the way, slides along it: the result is the point of the polygons reachable
 * within the circle spanned by start -> target that is closest to target
 * (Detour's moveAlongSurface), so the blocked part of the motion is projected
 * on the wall. Never leaves the mesh; out's y is the surface height there.
 * filter: NULL for default (excluded areas are walls). Visits at most 256
 * polygons (a longer move stops at the best point found so far).
 */
nav_status nav_move_along_surface(const nav_mesh *m, uint32_t start_poly, const float start[3],
                                  const float target[3], const nav_filter *filter, float out[3],
                                  uint32_t *out_poly);

#endif
