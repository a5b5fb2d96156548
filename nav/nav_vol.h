/*
 * nav_vol: flight volumes, the free 3-D space of a level for flying and
 * swimming agents, and the queries on it.
 *
 * A volume is a grid of cubic voxels of side voxel_size over a box
 * (`bounds`). A voxel is blocked when any part of it (the closed cube) lies
 * within `radius` of a level triangle; every other voxel is free, so a
 * sphere of that radius centred anywhere in a free voxel touches no
 * geometry. The bake tests each triangle against each voxel exactly (the
 * cube grown by a ball of that radius, nav_vol_geom.c), with a margin of
 * 1e-4 voxel so rounding can only block more. Space outside the bounds is not part
 * of the volume: paths never leave the box.
 *
 * Storage is a two-level grid: 4x4x4 voxel bricks, each either uniformly
 * blocked, uniformly free (no bits stored) or mixed (one 64-bit mask). The
 * free space's connected components (voxels joined through shared faces)
 * are precomputed at bake time, so `reachable` and a path to an unreachable
 * end cost one lookup each. A baked volume is immutable: any number of
 * threads may query it at once; each thread brings its own nav_vol_query
 * (the search's scratch memory, allocated once).
 *
 * Units: metres; y is up, as everywhere in navd. Points outside the bounds
 * snap into them only when free space lies within the caller's extents.
 */
#ifndef NAV_VOL_H
#define NAV_VOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nav/nav_status.h"
#include "nav/nav_steer.h"

typedef struct nav_vol nav_vol;

/* What a bake is asked for. */
typedef struct nav_vol_settings {
    float voxel_size;       /* metres, > 0 */
    float radius;           /* agent radius in metres, >= 0 */
    float bmin[3], bmax[3]; /* the box to voxelize; bmax > bmin on every axis */
    uint64_t max_voxels;    /* refuse (NAV_E_LIMIT) grids of more voxels; 0: no limit */
} nav_vol_settings;

/*
 * Progress of a bake: `stage` is static text ("rasterizing", "components"),
 * `progress` in [0, 1] never decreases across calls. A non-zero return
 * cancels the bake (NAV_E_CANCELLED, nothing built).
 */
typedef int (*nav_vol_progress_fn)(void *ctx, const char *stage, float progress);

/*
 * Voxels of the grid settings s describe (ceil(extent / voxel_size) per axis,
 * at least 1), or NAV_E_INVALID_ARG naming the setting in err. NAV_E_LIMIT
 * when the grid exceeds s->max_voxels. Costs nothing: callers use it to
 * refuse a bake before any work.
 */
nav_status nav_vol_check(const nav_vol_settings *s, uint64_t *voxels, nav_error *err);

/*
 * Bakes a volume from ntris triangles (index triples into nverts float3
 * vertices). Triangles outside the box still block what lies within radius
 * of them. progress may be NULL. NAV_E_CANCELLED when progress asked to stop.
 */
nav_status nav_vol_bake(const float *verts, uint32_t nverts, const uint32_t *tris, uint32_t ntris,
                        const nav_vol_settings *s, nav_vol_progress_fn progress, void *ctx,
                        nav_vol **out, nav_error *err);
void nav_vol_free(nav_vol *v);

/* Facts about a baked volume. */
typedef struct nav_vol_info {
    float voxel_size, radius;
    float bmin[3], bmax[3]; /* bmax = bmin + dims * voxel_size (the grid's box) */
    uint32_t dims[3];       /* voxels per axis */
    uint64_t free_voxels, blocked_voxels;
    uint32_t components;   /* connected components of free space */
    uint32_t mixed_bricks; /* bricks stored as bit masks */
    size_t bytes;          /* memory held by the volume */
} nav_vol_info;
void nav_vol_get_info(const nav_vol *v, nav_vol_info *out);
/* Unique per volume made in this process (baked or loaded) and never reused: a replaced
   volume's cached paths can never match the new one. 0 for NULL. */
uint64_t nav_vol_uid(const nav_vol *v);

/* One blob (malloc'd): magic "NAVV", format version, settings, grid, CRC-32. */
nav_status nav_vol_serialize(const nav_vol *v, uint8_t **blob, size_t *len);
/* NAV_E_CORRUPT for a bad magic, version, size, CRC or inconsistent grid. */
nav_status nav_vol_deserialize(const uint8_t *blob, size_t len, nav_vol **out, nav_error *err);

/* Bricks per axis (4 x 4 x 4 voxels each; the last ones may reach past dims). */
void nav_vol_brick_dims(const nav_vol *v, uint32_t out[3]);
/*
 * What brick (bx, by, bz) holds: 0 all blocked, 1 all free, 2 mixed with
 * *free_bits one bit per free voxel (bit x + 4 y + 16 z, local coordinates;
 * voxels past dims are blocked). free_bits may be NULL; out of range: 0.
 */
int nav_vol_brick(const nav_vol *v, uint32_t bx, uint32_t by, uint32_t bz, uint64_t *free_bits);

/* ---- point queries (no scratch needed) ---- */

/* Whether point p lies in free space (inside the bounds, in a free voxel). */
bool nav_vol_point_free(const nav_vol *v, const float p[3]);

/*
 * The free point nearest to p within the box p +- ext (ext >= 0 per axis),
 * into out; *dist = |out - p|. A point already free is returned unchanged.
 * Snapped points lie slightly inside their voxel (1e-3 voxel from its
 * faces), so they are free without ambiguity. NAV_E_OFF_MESH when no free
 * voxel lies within the box (the API's point_blocked).
 */
nav_status nav_vol_nearest(const nav_vol *v, const float p[3], const float ext[3], float out[3],
                           float *dist);

/* Component id of free point p (>= 0), or -1 when p is not free. */
int64_t nav_vol_component(const nav_vol *v, const float p[3]);

/*
 * Line of sight: true when the segment a-b lies in free space (every voxel
 * it passes through is free; where it passes exactly through a voxel edge
 * or corner, the voxels sharing it must be free too). Both points must be
 * inside the bounds, else false.
 */
bool nav_vol_los(const nav_vol *v, const float a[3], const float b[3]);

/* Result of a raycast. */
typedef struct nav_vol_hit {
    bool hit;        /* a blocked voxel (or the bounds) stopped the ray before b */
    float t;         /* fraction of a-b travelled, 1 when clear */
    float point[3];  /* a + t (b - a) */
    float normal[3]; /* when hit: the face of the blocked voxel (or bound) entered, pointing back */
} nav_vol_hit;

/* Casts from a (which must be free: NAV_E_OFF_MESH otherwise) toward b. */
nav_status nav_vol_raycast(const nav_vol *v, const float a[3], const float b[3], nav_vol_hit *out);

/* ---- path search ---- */

typedef struct nav_vol_query nav_vol_query;

/* Scratch for one thread: a node pool of max_nodes (>= 16) nodes, an open list and a hash. */
nav_status nav_vol_query_new(uint32_t max_nodes, nav_vol_query **out);
void nav_vol_query_free(nav_vol_query *q);

typedef struct nav_vol_path_request {
    float start[3], end[3]; /* free points (snap them with nav_vol_nearest first) */
    float heuristic_weight; /* >= 1; 1 = shortest any-angle path the search finds */
    uint32_t max_nodes;     /* nodes the search may expand; 0 or > pool: the pool size */
    float *corners;         /* caller's array of max_corners points (3 floats each) */
    uint32_t max_corners;   /* >= 2 */
    uint32_t *expanded;     /* optional: voxel-or-brick ids of expanded nodes (see below) */
    uint32_t max_expanded;
} nav_vol_path_request;

typedef struct nav_vol_path_result {
    bool complete;     /* false: the end is unreachable or the budget ran out */
    bool truncated;    /* more corners than max_corners (the path is cut short) */
    uint32_t ncorners; /* first = start, last = end (or the closest point reached) */
    float length;      /* metres along corners */
    uint32_t nodes_expanded;
    uint32_t nexpanded; /* entries written to expanded */
} nav_vol_path_result;

/*
 * Any-angle path (Lazy Theta* over the bricks and voxels, f = g + w h with
 * Euclidean h, each corner heading for the last point it can see). An end
 * in another component than the start is answered from the components
 * alone: not complete, the path is the start only, nodes_expanded 0. When
 * max_nodes runs out the path leads to the expanded node closest to the end.
 * expanded: each entry is (brick index << 7) | voxel-in-brick (0..63), or
 * | 64 for a whole free brick (see nav_vol_node_box).
 */
nav_status nav_vol_path(const nav_vol *v, nav_vol_query *q, const nav_vol_path_request *req,
                        nav_vol_path_result *res);

/* The box (min, max) of an id from nav_vol_path_request.expanded. */
void nav_vol_node_box(const nav_vol *v, uint32_t id, float bmin[3], float bmax[3]);

/* ---- steering (the `step` endpoint on a volume) ---- */

/*
 * Step-wide parameters (the navmesh step's, in 3-D). Agents and obstacles
 * are the navmesh step's types (nav_steer.h), velocities in 3-D; the
 * behaviours are seek, arrive, flee, pursue, evade, wander and idle (hide
 * is refused: there is no cover to pick in open space).
 */
typedef struct nav_vol_steer_params {
    float dt;               /* s, in (0, 1] */
    float extents[3];       /* snapping half-box of positions and targets; default {2, 2, 2} */
    uint32_t max_nodes;     /* path budget per agent; 0: the query's pool */
    bool avoidance;         /* default true */
    float horizon;          /* s, > 0: look-ahead of avoidance; default 2 */
    float arrive_tolerance; /* m, > 0: `arrived` distance; default 0.05 */
    uint64_t seed;          /* mixed into wander's hash */
    double deadline;        /* CLOCK_MONOTONIC s after which NAV_E_DEADLINE; 0: none */
} nav_vol_steer_params;

void nav_vol_steer_params_default(nav_vol_steer_params *p);

typedef struct nav_vol_agent_out {
    nav_status status;          /* NAV_OK, or NAV_E_OFF_MESH: error_field was not within extents */
    nav_step_field error_field; /* NAV_STEP_FIELD_POSITION, _TARGET or _THREAT */
    float pos[3], vel[3], desired_vel[3];
    float corners[NAV_STEER_MAX_CORNERS][3]; /* the path's next corners (seek, arrive, pursue) */
    uint32_t ncorners;                       /* >= 2 when following a path, else 0 */
    nav_behavior behavior;
    bool avoiding, arrived;
    float from[3]; /* the snapped position the tick started from */
    float goal[3]; /* the snapped target (seek, arrive, pursue) or the threat (flee, evade) */
} nav_vol_agent_out;

/*
 * One steering tick on a volume. Each agent is snapped into free space
 * (within extents); seek, arrive and pursue follow nav_vol_path (weight
 * 1.5) toward the target (pursue: where it will be); flee, evade and
 * wander pick, among the desired direction and the 26 grid directions, the
 * one with the most room (raycast) that keeps the intent; idle brakes. The
 * velocity is then chosen among sampled candidates against the other agents,
 * the obstacles (time to collision of moving spheres) and the geometry
 * (raycast over the horizon), limited by max_accel and max_speed, and the
 * move is a raycast: an agent stops at the first blocked voxel and slides
 * along its face, so positions never enter blocked space. Deterministic.
 * NAV_E_INVALID_ARG (err names the field) for bad input, NAV_E_DEADLINE
 * past params->deadline; an agent whose position or target has no free space
 * within extents fails in its own slot.
 */
nav_status nav_vol_step(const nav_vol *v, nav_vol_query *q, const nav_vol_steer_params *params,
                        const nav_agent_in *agents, uint32_t nagents, const nav_obstacle *obstacles,
                        uint32_t nobstacles, nav_vol_agent_out *out, nav_step_error *err);

#endif
