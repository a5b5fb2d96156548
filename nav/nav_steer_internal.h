/*
 * nav_steer_internal: the scratch of a steering tick and the seams between
 * nav_steer.c (the pipeline and the spatial hash), nav_steer_agent.c (the
 * behaviours and path following) and nav_steer_avoid.c (local avoidance and
 * overlap separation). Private to nav/.
 */
#ifndef NAV_STEER_INTERNAL_H
#define NAV_STEER_INTERNAL_H

#include <stdint.h>

#include "nav/nav_query.h"
#include "nav/nav_steer.h"

#define STEER_MAX_NEI 6         /* nearest agents considered by avoidance (as DetourCrowd) */
#define STEER_MAX_OBS 4         /* nearest obstacles considered by avoidance */
#define STEER_MAX_SEGS 16       /* nearest wall segments (the local boundary) */
#define STEER_BOUNDARY_POLYS 32 /* polygons walked to collect the boundary */
#define STEER_PATH_CORNERS 256  /* truncated answers are not cached: room for long paths */
#define STEER_PATH_POLYS 4096
#define STEER_PATH_LINKS 64
#define STEER_RAY_POLYS 256
/* m: agents farther apart in y are on other floors (Recast's agent height) */
#define STEER_FLOOR_DY 2.0f
#define STEER_THIN_EXT 1e-4f /* xz half-size of a box that finds only containing polygons */

/* A goal snapped this tick (many agents chase the same few targets). */
#define STEER_GOAL_MEMO 256 /* direct-mapped entries, cleared every tick */
typedef struct steer_goal {
    float p[3];  /* the goal as given */
    float on[3]; /* snapped */
    uint32_t poly;
    uint32_t tick_valid; /* == nav_steer.tick when filled this tick */
} steer_goal;

/* Per-agent state of one tick. */
typedef struct steer_agent {
    float pos[3];  /* snapped input position */
    uint32_t poly; /* polygon under pos */
    float npos[3]; /* position after the move (then after separation) */
    uint32_t npoly;
    float v[2];      /* velocity reported: commanded after limits, or made along a wall (xz) */
    float budget;    /* max_speed * dt: the xz displacement allowed this tick, all moves included */
    uint8_t arrived; /* at the goal before the move (the answer also asks for a low speed) */
    float range;     /* neighbour query range, rim to rim, m */
    uint32_t nei[STEER_MAX_NEI], nnei;
    uint32_t obs[STEER_MAX_OBS], nobs;
    uint8_t ok; /* snapped: takes part in the tick */
    /* crowd arrival (steer_settle): an `arrive` agent with a target on the
       mesh has_goal, its snapped goal and the 3-D distance to it; settled
       when it stands still at the goal or against settled agents of the
       same goal between it and the goal */
    uint8_t has_goal, settled;
    uint8_t blocks; /* stands in the way of farther agents of its goal */
    uint32_t gpoly;
    float goal[3];
    float tdist;
} steer_agent;

struct nav_steer {
    uint32_t max_agents, max_obstacles;
    steer_agent *agents;

    /* spatial hash: items are agent ids, then max_agents + obstacle ids */
    uint32_t nbuckets; /* power of two */
    uint32_t *bucket_start;
    uint32_t *fill;
    uint32_t *items;
    int32_t *item_cell; /* 2 per item: cell x, cell z */
    uint32_t *item_bucket;
    float inv_cell;
    float max_item_radius;

    float *push;     /* 2 per agent: separation displacement */
    uint64_t *order; /* per agent: the settle pass's order (nearest goal first) */

    /* the tick being computed (borrowed) */
    uint32_t n;
    const nav_mesh *mesh;
    nav_query *query;
    nav_cache *cache;
    const nav_steer_params *params;
    const nav_agent_in *in;
    const nav_obstacle *obstacles;
    uint32_t nobstacles;

    /* path and raycast buffers, reused by every agent */
    nav_path_result path;
    float corners[3 * STEER_PATH_CORNERS];
    uint32_t polys[STEER_PATH_POLYS];
    uint32_t links[STEER_PATH_LINKS];
    uint32_t ray_polys[STEER_RAY_POLYS];

    steer_goal goals[STEER_GOAL_MEMO];

    uint32_t tick; /* counts nav_step calls: invalidates goals[] at once */

    /* local boundary of the agent being avoided: 4 floats (ax, az, bx, bz) */
    float segs[4 * STEER_MAX_SEGS];
    uint32_t nsegs;
};

/*
 * nav_mesh_nearest, cheaper and with the same answer: first a box of zero
 * xz size (only the polygons containing p in xz: if one is within ext[1]
 * vertically, the full search would pick it too, by the same rule), then
 * the full box. On a fine mesh the full box holds dozens of polygons.
 */
nav_status steer_snap(const nav_mesh *m, const float p[3], const float ext[3], uint64_t exclude,
                      uint32_t *poly, float out[3]);

/* steer_snap of a goal with the tick's extents and filter, memoised for the
   tick (nav_steer_agent.c). */
nav_status steer_snap_goal(nav_steer *s, const float g[3], uint32_t *poly, float out[3]);

/*
 * Crowd arrival (nav_steer_agent.c), after the neighbour lists and before
 * the agent ticks: marks settled agents. An `arrive` agent is settled when
 * it is still (input speed <= STEER_SETTLE_SPEED) and either within
 * arrive_tolerance of its goal, or in contact (rim gap <= STEER_CONTACT)
 * with a blocking agent of the same goal (steer_blocks) that is nearer the
 * goal and lies ahead of it (within STEER_BLOCK_COS of the straight
 * direction to the goal), or with two such, ahead on either side (wedged). A pure function of the
 * input state: nearest goal first, so a blocker is decided before the agents behind it.
 */
void steer_settle(nav_steer *s);
/* Agent j stands in the way of agent i toward their common goal: j blocks
   (settled, still, or covering the goal) and is nearer the goal (ties by
   index, so two agents never block each other). i then stops against j, so
   j does not dodge i (valid after steer_settle). */
bool steer_blocks(const nav_steer *s, uint32_t i, uint32_t j);
#define STEER_SETTLE_SPEED 0.05f /* m/s: "still" */
#define STEER_CONTACT 0.3f       /* m: rim gap that counts as touching */
#define STEER_BLOCK_COS 0.5f     /* a blocker within 60 degrees of the way */
#define STEER_STUCK_GAP 0.5f     /* m: the same once avoidance finds no way on */
#define STEER_JAM_GAP 0.1f       /* m: rim gap of a touch that stops a slow agent */
#define STEER_JAM_SPEED 0.25f    /* share of max_speed below which a touch ahead stops */

/* Behaviour, avoidance, limits and move of agent i (nav_steer_agent.c). */
void steer_agent_tick(nav_steer *s, uint32_t i, nav_agent_out *o);

/* Raycast from agent position toward `end` with the tick's filter; returns
   the fraction travelled (1 when clear) and the wall normal when hit. */
float steer_raycast(nav_steer *s, uint32_t poly, const float start[3], const float end[3],
                    float normal[3], bool *hit);

/*
 * Local avoidance of agent i (nav_steer_avoid.c): corrects the desired
 * velocity dv (xz) into v (xz) against neighbours, obstacles and nearby walls.
 * goal_dist: the path distance after which the agent stops (INFINITY when it
 * does not), so contacts predicted beyond its goal are ignored.
 * Returns true when the result differs from dv by more than
 * NAV_STEER_AVOID_EPS * max_speed.
 */
bool steer_avoid(nav_steer *s, uint32_t i, const float dv[2], float goal_dist, float v[2]);

/*
 * Moves agent i along the surface from `from` (on from_poly, itself within
 * the agent's budget of its tick-start position) toward `to`, such that the
 * end is still within budget of the tick-start position (steer_within): when
 * a slide around a concave corner would end farther, the step is halved a
 * few times, and the agent stays at `from` when nothing fits. Writes out /
 * out_poly; returns true when the end differs from `from`.
 */
bool steer_move_capped(nav_steer *s, uint32_t i, uint32_t from_poly, const float from[3],
                       const float to[3], float out[3], uint32_t *out_poly);

/* |p - tick-start position of agent i| <= its budget in xz, with room for
   the float rounding of the coordinates only. */
bool steer_within(const nav_steer *s, uint32_t i, const float p[3]);

/* Pushes overlapping agents apart along the surface, each push limited so the
   agent's whole displacement stays within its budget (npos / npoly). */
void steer_separate(nav_steer *s);

/* Landing spots cleared where possible: an agent that is given an off-mesh
   link's action this tick (out[i].has_action) will land at the link's end;
   every other agent on that floor overlapping a circle of the jumper's
   radius there is pushed out of it, like a separation push (position only,
   within what its speed budget leaves; max_speed 0 never moves). Scans all
   agents per action: actions are few. */
void steer_clear_landings(nav_steer *s, const nav_agent_out *out);

/* Writes out[].pos / poly (pushes included), the velocity of the own move
   (steer_agent_tick: commanded, or made along a wall; never the push) and
   `arrived`. */
void steer_finish(nav_steer *s, nav_agent_out *out);

#endif
