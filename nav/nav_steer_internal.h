/*
 * nav_steer_internal: the scratch of a steering tick and the seams between
 * nav_steer.c (the pipeline, the spatial hash, the goal memo and counts),
 * nav_steer_agent.c (the behaviours and path following), nav_steer_avoid.c
 * (local avoidance and overlap separation), nav_steer_flow.c (the trees
 * shared by the agents of one goal) and nav_steer_lanes.c (a step split
 * across threads). Private to nav/.
 */
#ifndef NAV_STEER_INTERNAL_H
#define NAV_STEER_INTERNAL_H

#include <stddef.h>
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

/* A snapped goal, memoised (agents chase the same targets tick after tick):
   open addressing, at least STEER_GOAL_MEMO entries and four per agent. An
   entry is a pure function of the goal's bits and of the memo's epoch key
   (mesh uid, extents, exclusion mask), so keeping it across ticks changes
   no answer; another key starts a new epoch, which drops every entry. */
#define STEER_GOAL_MEMO 256
#define STEER_GOAL_PROBE 4 /* slots probed per lookup */
typedef struct steer_goal {
    float p[3];  /* the goal as given */
    float on[3]; /* snapped */
    uint32_t poly;
    uint32_t epoch; /* == nav_steer.epoch when valid */
} steer_goal;

/* How many seek / arrive agents head for a goal this tick: an exact count
   (open addressing, never full: twice the agents), so whether a goal gets
   a shared tree depends on the request alone, never on the memo's state. */
typedef struct steer_flow steer_flow;
typedef struct steer_gcount {
    float p[3];
    uint32_t count;
    uint32_t tick; /* == nav_steer.tick when in use */
    /* its shared tree this tick (steer_flows_prepare), or NULL */
    const steer_flow *flow;
    uint8_t tried; /* steer_flows_prepare decided about it */
    int32_t job;   /* its tree to build this tick, or -1 */
} steer_gcount;

/*
 * A goal-rooted search shared by the agents of one goal (nav_steer_flow.c):
 * the tree of cheapest ways to the goal point over a fixed graph (edge
 * midpoints, link ends), built once and reused by later ticks.
 */
/* The tree for goal (on gpoly) under filter (NULL: default); NULL when out
   of memory. Costs the whole component of the goal. */
steer_flow *steer_flow_build(const nav_mesh *m, const nav_filter *filter, uint32_t gpoly,
                             const float goal[3]);
void steer_flow_free(steer_flow *f);
/* f was built for exactly this mesh (pointer), filter, polygon and point. */
bool steer_flow_matches(const steer_flow *f, const nav_mesh *m, const nav_filter *filter,
                        uint32_t gpoly, const float goal[3]);
/* The cost from x (on sp) to the goal through the tree, INFINITY when the
   tree does not reach sp; *first: the first node (internal), NAV_NONE then. */
double steer_flow_cost(const steer_flow *f, uint32_t sp, const float x[3], uint32_t *first);
/* The corridor from x (on sp) to the goal: polys / via as nav_string_pull
   reads them, *cost as steer_flow_cost; at most max polygons: *complete
   says whether it reaches the goal's polygon or is a prefix (about max
   long). NAV_E_NOT_FOUND when the tree does not reach sp. */
nav_status steer_flow_corridor(const steer_flow *f, uint32_t sp, const float x[3], uint32_t *polys,
                               uint32_t *via, uint32_t max, uint32_t *n, double *cost,
                               bool *complete);
/* Bytes the tree holds. */
size_t steer_flow_bytes(const steer_flow *f);

/* Trees kept by a nav_steer between ticks (beyond it, the least recently
   used are dropped; a tick holds every tree it needs however many), and how
   many seek / arrive agents must share a goal in a tick for it to get one
   (fewer follow their own canonical corridors, nav_cache.h). */
#define STEER_FLOWS 16
#define STEER_FLOW_MIN 4
typedef struct steer_flow_slot {
    steer_flow *flow;
    uint64_t uid;  /* nav_mesh_uid of its mesh */
    uint32_t used; /* tick of its last use */
    /* the cache's entry this slot holds a reference to (flow is its tree),
       or NULL: flow is owned (a step without a cache) */
    struct nav_cache_tree *shared;
} steer_flow_slot;

/* Per-agent state of one tick. */
typedef struct steer_agent {
    float pos[3];  /* snapped input position */
    uint32_t poly; /* polygon under pos */
    float npos[3]; /* position after the move (then after separation) */
    uint32_t npoly;
    float v[2];      /* velocity reported: commanded after limits, or made along a wall (xz) */
    float budget;    /* max_speed * dt: the xz displacement allowed this tick, all moves included */
    uint8_t arrived; /* at the goal before the move (the answer also asks for a low speed) */
    uint8_t crossed; /* moved across off-mesh links (traverse_links): npos is its landing */
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
    /* seek / arrive: the tick's count of its target (a shared tree when
       >= STEER_FLOW_MIN); NULL otherwise */
    steer_gcount *gc;
} steer_agent;

/* A spatial hash item as the neighbour scan reads it (in bucket order). */
typedef struct steer_item {
    float x, y, z, r;
    int32_t cx, cz; /* its cell */
} steer_item;

/* Lanes: a step split across threads (nav_steer_lanes.c). */
#define STEER_MAX_LANES 8
#define STEER_LANE_MIN 128 /* agents per lane at least */

struct nav_steer {
    uint32_t max_agents, max_obstacles;
    steer_agent *agents;

    /* spatial hash: items are agent ids, then max_agents + obstacle ids */
    uint32_t nbuckets;   /* this step's: a power of two, twice its items or more */
    uint32_t bucket_cap; /* allocated: for max_agents + max_obstacles items */
    uint32_t *bucket_start;
    uint32_t *fill;
    uint32_t *items;
    int32_t *item_cell; /* 2 per item: cell x, cell z */
    uint32_t *item_bucket;
    steer_item *sorted; /* items[k]'s position, radius and cell */
    float *nei_d;       /* per agent: its neighbours' then obstacles' gaps */
    float inv_cell;
    float max_item_radius;
    float max_lim2; /* square of the widest range test of a pair (grid_neighbours_all) */

    float *push;         /* 2 per agent: separation displacement */
    uint8_t *moved;      /* per agent: pushed in the last separation pass */
    uint8_t *dirty;      /* per agent: push computed in this pass */
    uint8_t *pushed;     /* per agent: moved by any separation pass */
    uint64_t *order;     /* per agent: the settle pass's order (nearest goal first) */
    uint64_t *order_tmp; /* the sort's second buffer */

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

    steer_goal *goals;
    uint32_t ngoals; /* power of two */
    uint32_t tick;   /* counts nav_step calls (goal counts, tree ages) */
    steer_gcount *gcounts;
    uint32_t ngcounts;      /* power of two, >= 2 * max_agents */
    steer_flow_slot *flows; /* nflows in use of capflows */
    uint32_t nflows, capflows;
    uint32_t fpolys[STEER_PATH_POLYS], fvia[STEER_PATH_POLYS]; /* a tree corridor */
    uint32_t epoch;                  /* goals[] entries of another epoch are stale */
    uint64_t memo_uid, memo_exclude; /* the epoch's key */
    float memo_ext[3];

    /* lanes of this step (copies of this struct, read-only on the memos),
       their queries (lane 0 borrows the caller's) and the pool they have */
    struct nav_steer *lanes;
    uint32_t nlanes;
    nav_query *lane_q[STEER_MAX_LANES];
    uint32_t lane_q_nodes;
    struct steer_pool *pool;   /* the helper threads lanes 1.. run on (nav_steer_lanes.c) */
    uint8_t readonly;          /* a lane: no memo inserts */
    uint8_t lane_hit_deadline; /* a lane saw params->deadline pass */
    steer_goal tmp_goal;       /* a lane's goal snapped outside the memo */

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

/* steer_snap of a goal with the tick's extents and filter, memoised
   (nav_steer.c). */
nav_status steer_snap_goal(nav_steer *s, const float g[3], uint32_t *poly, float out[3]);
/* The memo entry of goal g, snapped; NULL when g is off the mesh. */
steer_goal *steer_goal_entry(nav_steer *s, const float g[3]);
/* The tick's count entry of goal g (created at 0). */
steer_gcount *steer_goal_count(nav_steer *s, const float g[3]);

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

/* Before the agents' ticks, serially: goals shared by STEER_FLOW_MIN seek /
   arrive agents (and no max_nodes) get their trees, found or built, in
   their count entries (nav_steer_flow.c): at most STEER_FLOW_TICK_MAX a
   tick, and no more than STEER_FLOW_BYTES of them. Agents then only read
   trees, so lanes can run them in parallel. false: params->deadline
   passed before a build. */
#define STEER_FLOW_TICK_MAX 32
#define STEER_FLOW_BYTES ((size_t)256 << 20)
bool steer_flows_prepare(nav_steer *s);
/* Lets go of a kept tree: the cache reference released, or the tree freed. */
void steer_flow_slot_drop(steer_flow_slot *slot);
/* Bytes a tree of mesh m holds (the same for every goal). */
size_t steer_flow_bytes_for(const nav_mesh *m);
/* CLOCK_MONOTONIC seconds (params->deadline's clock). */
double steer_clock(void);

/* A phase over agents [from, to) on one lane. */
typedef void (*steer_phase_fn)(nav_steer *lane, uint32_t from, uint32_t to, void *ctx);
/* Splits the tick's agents across up to `threads` lanes (STEER_LANE_MIN
   agents each at least); returns how many (0: run on s alone). */
uint32_t steer_lanes_prepare(nav_steer *s, uint32_t threads);
/* Runs fn over [0, s->n): on the prepared lanes in parallel (chunks taken
   in turn by the caller's thread, on lane 0, and the helpers, each on its
   own lane), else on s. */
void steer_parallel(nav_steer *s, steer_phase_fn fn, void *ctx);
void steer_lanes_free(nav_steer *s);

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
/* The same without the height: out[1] is from[1] (nav_move_xz). */
bool steer_move_capped_xz(nav_steer *s, uint32_t i, uint32_t from_poly, const float from[3],
                          const float to[3], float out[3], uint32_t *out_poly);

/* |p - tick-start position of agent i| <= its budget in xz, with room for
   the float rounding of the coordinates only. */
bool steer_within(const nav_steer *s, uint32_t i, const float p[3]);

/*
 * nav_move_along_surface without the height lookup (nav_move.c): out[1] is
 * start[1]; out[0], out[2] and *out_poly are the full move's, exactly. For
 * the separation passes, which read only xz until their end.
 */
nav_status nav_move_xz(const nav_mesh *m, uint32_t start_poly, const float start[3],
                       const float target[3], const nav_filter *filter, float out[3],
                       uint32_t *out_poly);

/* Pushes overlapping agents apart along the surface, each push limited so the
   agent's whole displacement stays within its budget (npos / npoly). */
void steer_separate(nav_steer *s);

/* Landing spots cleared where possible: an agent that is given an off-mesh
   link's action this tick (out[i].has_action) will land at the link's end
   (a `crossed` agent: where it ended, npos); every other agent on that
   floor overlapping a circle of the jumper's radius there is pushed out of
   it, like a separation push (position only, within what its speed budget
   leaves; max_speed 0 never moves). Scans all agents per action: actions
   are few. */
void steer_clear_landings(nav_steer *s, const nav_agent_out *out);

/* Then the landings themselves (nav_steer_action's `land`), in index order:
   a lander whose spot is still overlapped by another agent (where that one
   ended, or an earlier lander where it landed) takes the nearest free spot
   of the landing floor within its radius plus the occupants' largest; a
   `crossed` agent is moved there (npos / npoly). Serial: landers are few. */
void steer_place_landings(nav_steer *s, nav_agent_out *out);

/* Writes out[].pos / poly (pushes included), the velocity of the own move
   (steer_agent_tick: commanded, or made along a wall; never the push) and
   `arrived`. */
void steer_finish(nav_steer *s, nav_agent_out *out);

#endif
