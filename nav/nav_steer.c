/*
 * nav_steer: one stateless steering tick for a batch of agents (nav_step).
 *
 * Owns the pipeline of a tick and its scratch:
 *   1. validate the request (nav_step_validate) and zero the outputs;
 *   2. snap every agent onto the mesh (off-mesh agents fail in their slot);
 *   3. build a uniform-grid spatial hash over agents and obstacles, so each
 *      agent's neighbour search is local and the tick is linear in agents;
 *   4. per agent: the behaviour proposes a desired velocity (path following
 *      through nav_find_path_reuse for seek / arrive / pursue / hide: the
 *      canonical corridor of the polygon pair, string-pulled for the exact
 *      points, nav_cache.h), avoidance
 *      corrects it (nav_steer_avoid.c), limits apply, and the agent moves
 *      along the surface (nav_move.c);
 *   5. agents that still overlap are pushed apart, again along the surface,
 *      each within the speed budget its own move left (no agent's displacement
 *      in a tick exceeds max_speed * dt); a push corrects the position only,
 *      and the reported velocity is the own move's (made along a wall).
 * Every agent reads only the input state of the others (never a neighbour's
 * new velocity), so the result does not depend on the processing order and
 * the same input gives bit-identical output, whatever the path cache holds
 * and whatever this scratch computed before (the scratch keeps nothing
 * between ticks that an answer depends on).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nav/nav_internal.h"
#include "nav/nav_steer.h"
#include "nav/nav_steer_internal.h"

/* ---- names ---- */

static const char *const behavior_names[] = {
#define NAV_BEHAVIOR_NAME(name, text) text,
    NAV_BEHAVIOR_LIST(NAV_BEHAVIOR_NAME)
#undef NAV_BEHAVIOR_NAME
};

static const char *const field_names[] = {
#define NAV_STEP_FIELD_NAME(name, text) text,
    NAV_STEP_FIELD_LIST(NAV_STEP_FIELD_NAME)
#undef NAV_STEP_FIELD_NAME
};

const char *nav_behavior_name(nav_behavior b) {
    return (unsigned)b < NAV_BEHAVIOR_COUNT ? behavior_names[b] : "?";
}

bool nav_behavior_parse(const char *s, size_t len, nav_behavior *out) {
    if (!s || !out)
        return false;
    for (int b = 0; b < NAV_BEHAVIOR_COUNT; b++) {
        if (strlen(behavior_names[b]) == len && memcmp(behavior_names[b], s, len) == 0) {
            *out = (nav_behavior)b;
            return true;
        }
    }
    return false;
}

const char *nav_step_field_name(nav_step_field f) {
    return (unsigned)f < NAV_STEP_FIELD_COUNT ? field_names[f] : "?";
}

void nav_steer_params_default(nav_steer_params *p) {
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->dt = 0.1f;
    p->extents[0] = 2.0f;
    p->extents[1] = 4.0f;
    p->extents[2] = 2.0f;
    p->avoidance = true;
    p->horizon = 2.0f;
    p->arrive_tolerance = 0.05f;
}

/* ---- scratch ---- */

/* No per-thread path memory: paths come from canonical corridors, memoised
   only in the shared path cache, so answers never depend on this scratch's
   history (see nav_steer.h). */
nav_steer *nav_steer_new(uint32_t max_agents, uint32_t max_obstacles) {
    if (max_agents == 0 || max_obstacles == 0 || max_agents > (1u << 24) ||
        max_obstacles > (1u << 24))
        return NULL;
    nav_steer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_agents = max_agents;
    s->max_obstacles = max_obstacles;
    uint32_t items = max_agents + max_obstacles;
    s->nbuckets = 16;
    while (s->nbuckets < 2 * items)
        s->nbuckets <<= 1;
    s->agents = calloc(max_agents, sizeof *s->agents);
    s->bucket_start = calloc((size_t)s->nbuckets + 1, sizeof *s->bucket_start);
    s->items = calloc(items, sizeof *s->items);
    s->item_cell = calloc(2 * (size_t)items, sizeof *s->item_cell);
    s->item_bucket = calloc(items, sizeof *s->item_bucket);
    s->fill = calloc(s->nbuckets, sizeof *s->fill);
    s->push = calloc(2 * (size_t)max_agents, sizeof *s->push);
    s->order = calloc(max_agents, sizeof *s->order);
    if (!s->agents || !s->bucket_start || !s->items || !s->item_cell || !s->item_bucket ||
        !s->fill || !s->push || !s->order) {
        nav_steer_free(s);
        return NULL;
    }
    s->path.corners = s->corners;
    s->path.polys = s->polys;
    s->path.links = s->links;
    return s;
}

void nav_steer_free(nav_steer *s) {
    if (!s)
        return;
    free(s->agents);
    free(s->bucket_start);
    free(s->items);
    free(s->item_cell);
    free(s->item_bucket);
    free(s->fill);
    free(s->push);
    free(s->order);
    free(s);
}

uint32_t nav_steer_max_agents(const nav_steer *s) {
    return s ? s->max_agents : 0;
}

uint32_t nav_steer_max_obstacles(const nav_steer *s) {
    return s ? s->max_obstacles : 0;
}

/* ---- validation ---- */

static nav_status fail(nav_step_error *err, int32_t agent, int32_t obstacle, nav_step_field f,
                       int32_t comp, const char *what) {
    if (!err)
        return NAV_E_INVALID_ARG;
    err->status = NAV_E_INVALID_ARG;
    err->agent = agent;
    err->obstacle = obstacle;
    err->field = f;
    err->component = comp;
    char prefix[48] = "";
    if (agent >= 0)
        snprintf(prefix, sizeof prefix, "agents[%d].", (int)agent);
    else if (obstacle >= 0)
        snprintf(prefix, sizeof prefix, "obstacles[%d].", (int)obstacle);
    if (comp >= 0)
        snprintf(err->message, sizeof err->message, "%s%s[%d] %s", prefix, nav_step_field_name(f),
                 (int)comp, what);
    else
        snprintf(err->message, sizeof err->message, "%s%s %s", prefix, nav_step_field_name(f),
                 what);
    return NAV_E_INVALID_ARG;
}

static int nonfinite_at(const float *v) {
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]))
            return i;
    return -1;
}

#define CHECK_VEC(v, ag, ob, f)                                                                    \
    do {                                                                                           \
        int bad_ = nonfinite_at(v);                                                                \
        if (bad_ >= 0)                                                                             \
            return fail(err, ag, ob, f, bad_, "is not a finite number");                           \
    } while (0)

static nav_status validate_agent(const nav_agent_in *a, int32_t i, nav_step_error *err) {
    CHECK_VEC(a->pos, i, -1, NAV_STEP_FIELD_POSITION);
    CHECK_VEC(a->vel, i, -1, NAV_STEP_FIELD_VELOCITY);
    if (!isfinite(a->radius) || !(a->radius > 0.0f))
        return fail(err, i, -1, NAV_STEP_FIELD_RADIUS, -1, "must be a finite number > 0");
    if (!isfinite(a->max_speed) || a->max_speed < 0.0f)
        return fail(err, i, -1, NAV_STEP_FIELD_MAX_SPEED, -1, "must be a finite number >= 0");
    if (!isfinite(a->max_accel) || a->max_accel < 0.0f)
        return fail(err, i, -1, NAV_STEP_FIELD_MAX_ACCEL, -1, "must be a finite number >= 0");
    if ((unsigned)a->behavior >= NAV_BEHAVIOR_COUNT)
        return fail(err, i, -1, NAV_STEP_FIELD_BEHAVIOR, -1, "is not a known behavior");
    if (!isfinite(a->arrive_radius) || a->arrive_radius < 0.0f)
        return fail(err, i, -1, NAV_STEP_FIELD_ARRIVE_RADIUS, -1, "must be a finite number >= 0");
    if (a->has_target)
        CHECK_VEC(a->target, i, -1, NAV_STEP_FIELD_TARGET);
    if (a->has_target_vel)
        CHECK_VEC(a->target_vel, i, -1, NAV_STEP_FIELD_TARGET_VELOCITY);
    if (a->has_threat)
        CHECK_VEC(a->threat, i, -1, NAV_STEP_FIELD_THREAT);
    switch (a->behavior) {
    case NAV_BEHAVIOR_SEEK:
    case NAV_BEHAVIOR_ARRIVE:
    case NAV_BEHAVIOR_PURSUE:
        if (!a->has_target)
            return fail(err, i, -1, NAV_STEP_FIELD_TARGET, -1, "is required by this behavior");
        break;
    case NAV_BEHAVIOR_FLEE:
    case NAV_BEHAVIOR_EVADE:
    case NAV_BEHAVIOR_HIDE:
        if (!a->has_threat && !a->has_target)
            return fail(err, i, -1, NAV_STEP_FIELD_THREAT, -1,
                        "(or target) is required by this behavior");
        break;
    default:
        break;
    }
    return NAV_OK;
}

nav_status nav_step_validate(const nav_steer_params *params, const nav_agent_in *agents,
                             uint32_t nagents, const nav_obstacle *obstacles, uint32_t nobstacles,
                             nav_step_error *err) {
    if (err) {
        memset(err, 0, sizeof *err);
        err->agent = -1;
        err->obstacle = -1;
        err->component = -1;
    }
    if (!params)
        return fail(err, -1, -1, NAV_STEP_FIELD_NONE, -1, "parameters are missing");
    if (!isfinite(params->dt) || !(params->dt > 0.0f) || params->dt > 1.0f)
        return fail(err, -1, -1, NAV_STEP_FIELD_DT, -1, "must be a finite number in (0, 1]");
    for (int k = 0; k < 3; k++)
        if (!isfinite(params->extents[k]) || !(params->extents[k] >= 0.0f))
            return fail(err, -1, -1, NAV_STEP_FIELD_EXTENTS, k, "must be a finite number >= 0");
    if (!isfinite(params->horizon) || !(params->horizon > 0.0f) || params->horizon > 60.0f)
        return fail(err, -1, -1, NAV_STEP_FIELD_HORIZON, -1, "must be a finite number in (0, 60]");
    if (!isfinite(params->arrive_tolerance) || !(params->arrive_tolerance > 0.0f))
        return fail(err, -1, -1, NAV_STEP_FIELD_ARRIVE_TOLERANCE, -1,
                    "must be a finite number > 0");
    if (nagents > 0 && !agents)
        return fail(err, -1, -1, NAV_STEP_FIELD_AGENTS, -1, "are missing");
    if (nobstacles > 0 && !obstacles)
        return fail(err, -1, -1, NAV_STEP_FIELD_OBSTACLES, -1, "are missing");
    for (uint32_t i = 0; i < nagents; i++) {
        nav_status st = validate_agent(&agents[i], (int32_t)i, err);
        if (st != NAV_OK)
            return st;
    }
    for (uint32_t k = 0; k < nobstacles; k++) {
        const nav_obstacle *o = &obstacles[k];
        CHECK_VEC(o->pos, -1, (int32_t)k, NAV_STEP_FIELD_POSITION);
        CHECK_VEC(o->vel, -1, (int32_t)k, NAV_STEP_FIELD_VELOCITY);
        if (!isfinite(o->radius) || !(o->radius > 0.0f))
            return fail(err, -1, (int32_t)k, NAV_STEP_FIELD_RADIUS, -1,
                        "must be a finite number > 0");
    }
    return NAV_OK;
}

/* ---- snapping ---- */

nav_status steer_snap(const nav_mesh *m, const float p[3], const float ext[3], uint64_t exclude,
                      uint32_t *poly, float out[3]) {
    float thin[3] = {STEER_THIN_EXT, ext[1], STEER_THIN_EXT};
    /* Agents stand on the surface, so a containing polygon (it answers with
       p's own x and z) is usually at distance 0, and nothing beats that. At
       a distance d > 0 a polygon not containing p may be closer, but only
       one within d in x and z: search that smaller box (it still holds the
       containing polygon, so the answer is the full box's). */
    if (nav_mesh_nearest(m, p, thin, exclude, poly, out) == NAV_OK && out[0] == p[0] &&
        out[2] == p[2]) {
        double d = fabs((double)out[1] - p[1]);
        if (d == 0)
            return NAV_OK;
        float r = (float)(d * (1 + 1e-6)) + 1e-6f;
        float box[3] = {r < ext[0] ? r : ext[0], ext[1], r < ext[2] ? r : ext[2]};
        return nav_mesh_nearest(m, p, box, exclude, poly, out);
    }
    return nav_mesh_nearest(m, p, ext, exclude, poly, out);
}

/* ---- spatial hash ---- */

static uint32_t cell_hash(int32_t cx, int32_t cz, uint32_t nb) {
    uint32_t h = (uint32_t)cx * 0x9E3779B1u ^ (uint32_t)cz * 0x85EBCA77u;
    h ^= h >> 15;
    return h & (nb - 1);
}

static int32_t cell_of(float v, float inv) {
    double c = floor((double)v * inv);
    if (c < -1e9)
        c = -1e9;
    if (c > 1e9)
        c = 1e9;
    return (int32_t)c;
}

/* Counting sort of agents then obstacles into buckets by cell: items keep
   their index order inside a bucket, which keeps neighbour order stable. */
static void grid_build(nav_steer *s, const nav_obstacle *obs, uint32_t nobs) {
    uint32_t nb = s->nbuckets;
    memset(s->bucket_start, 0, ((size_t)nb + 1) * sizeof *s->bucket_start);
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->agents[i].ok)
            continue;
        const float *p = s->agents[i].pos;
        int32_t cx = cell_of(p[0], s->inv_cell), cz = cell_of(p[2], s->inv_cell);
        s->item_cell[2 * i] = cx;
        s->item_cell[2 * i + 1] = cz;
        s->item_bucket[i] = cell_hash(cx, cz, nb);
        s->bucket_start[s->item_bucket[i] + 1]++;
    }
    for (uint32_t k = 0; k < nobs; k++) {
        uint32_t it = s->max_agents + k;
        int32_t cx = cell_of(obs[k].pos[0], s->inv_cell), cz = cell_of(obs[k].pos[2], s->inv_cell);
        s->item_cell[2 * it] = cx;
        s->item_cell[2 * it + 1] = cz;
        s->item_bucket[it] = cell_hash(cx, cz, nb);
        s->bucket_start[s->item_bucket[it] + 1]++;
    }
    for (uint32_t b = 0; b < nb; b++)
        s->bucket_start[b + 1] += s->bucket_start[b];
    uint32_t *fill = s->fill;
    memcpy(fill, s->bucket_start, (size_t)nb * sizeof *fill);
    for (uint32_t i = 0; i < s->n; i++)
        if (s->agents[i].ok)
            s->items[fill[s->item_bucket[i]]++] = i;
    for (uint32_t k = 0; k < nobs; k++) {
        uint32_t it = s->max_agents + k;
        s->items[fill[s->item_bucket[it]]++] = it;
    }
}

/* Inserts (id, d) in a list kept sorted by d, then id; drops the farthest
   when full. */
static void nei_insert(uint32_t *ids, float *ds, uint32_t *n, uint32_t max, uint32_t id, float d) {
    uint32_t k = *n;
    if (k == max) {
        if (d > ds[k - 1] || (d == ds[k - 1] && id > ids[k - 1]))
            return;
        k--;
    } else {
        (*n)++;
    }
    while (k > 0 && (ds[k - 1] > d || (ds[k - 1] == d && ids[k - 1] > id))) {
        ids[k] = ids[k - 1];
        ds[k] = ds[k - 1];
        k--;
    }
    ids[k] = id;
    ds[k] = d;
}

/* The nearest agents and obstacles of agent i within its query range,
   measured between the circles' rims. */
static void grid_neighbours(nav_steer *s, uint32_t i, const nav_agent_in *in,
                            const nav_obstacle *obs) {
    steer_agent *a = &s->agents[i];
    a->nnei = 0;
    a->nobs = 0;
    float q = a->range;
    float reach = q + s->max_item_radius + in[i].radius;
    int32_t x0 = cell_of(a->pos[0] - reach, s->inv_cell),
            x1 = cell_of(a->pos[0] + reach, s->inv_cell);
    int32_t z0 = cell_of(a->pos[2] - reach, s->inv_cell),
            z1 = cell_of(a->pos[2] + reach, s->inv_cell);
    float ds_a[STEER_MAX_NEI], ds_o[STEER_MAX_OBS];
    for (int32_t cz = z0; cz <= z1; cz++) {
        for (int32_t cx = x0; cx <= x1; cx++) {
            uint32_t b = cell_hash(cx, cz, s->nbuckets);
            for (uint32_t k = s->bucket_start[b]; k < s->bucket_start[b + 1]; k++) {
                uint32_t it = s->items[k];
                if (it == i || s->item_cell[2 * it] != cx || s->item_cell[2 * it + 1] != cz)
                    continue;
                const float *p;
                float r;
                if (it < s->max_agents) {
                    p = s->agents[it].pos;
                    r = in[it].radius;
                } else {
                    p = obs[it - s->max_agents].pos;
                    r = obs[it - s->max_agents].radius;
                }
                /* another floor (a deck above, the ground below): not a
                   neighbour, though it is close in xz */
                if (fabsf(p[1] - a->pos[1]) > STEER_FLOOR_DY)
                    continue;
                float dx = p[0] - a->pos[0], dz = p[2] - a->pos[2];
                float lim = q + r + in[i].radius, d2 = dx * dx + dz * dz;
                if (d2 > lim * lim)
                    continue; /* rim to rim farther than the range */
                float gap = sqrtf(d2) - r - in[i].radius;
                if (it < s->max_agents)
                    nei_insert(a->nei, ds_a, &a->nnei, STEER_MAX_NEI, it, gap);
                else
                    nei_insert(a->obs, ds_o, &a->nobs, STEER_MAX_OBS, it - s->max_agents, gap);
            }
        }
    }
}

/* ---- the tick ---- */

static double steer_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

nav_status nav_step(nav_steer *s, const nav_mesh *m, nav_query *q, nav_cache *cache,
                    const nav_steer_params *params, const nav_agent_in *agents, uint32_t nagents,
                    const nav_obstacle *obstacles, uint32_t nobstacles, nav_agent_out *out,
                    nav_step_error *err) {
    nav_status st = nav_step_validate(params, agents, nagents, obstacles, nobstacles, err);
    if (st != NAV_OK)
        return st;
    if (!s || !m || !q || (nagents > 0 && !out))
        return fail(err, -1, -1, NAV_STEP_FIELD_NONE, -1, "scratch, mesh or output is missing");
    if (nagents > s->max_agents) {
        if (err) {
            err->status = NAV_E_LIMIT;
            err->field = NAV_STEP_FIELD_AGENTS;
            snprintf(err->message, sizeof err->message, "agents has %u entries, more than %u",
                     (unsigned)nagents, (unsigned)s->max_agents);
        }
        return NAV_E_LIMIT;
    }
    if (nobstacles > s->max_obstacles) {
        if (err) {
            err->status = NAV_E_LIMIT;
            err->field = NAV_STEP_FIELD_OBSTACLES;
            snprintf(err->message, sizeof err->message, "obstacles has %u entries, more than %u",
                     (unsigned)nobstacles, (unsigned)s->max_obstacles);
        }
        return NAV_E_LIMIT;
    }
    if (nagents > 0)
        memset(out, 0, (size_t)nagents * sizeof *out);
    s->n = nagents;
    if (++s->tick == 0) { /* wrapped: make every goal entry stale explicitly */
        memset(s->goals, 0, sizeof s->goals);
        s->tick = 1;
    }
    s->mesh = m;
    s->query = q;
    s->cache = cache;
    s->params = params;
    s->in = agents;
    s->obstacles = obstacles;
    s->nobstacles = nobstacles;
    uint64_t exclude = params->filter ? params->filter->exclude_mask : 0;

    /* Snap every agent; size the grid on the largest query range. */
    float max_range = 0.0f;
    s->max_item_radius = 0.0f;
    for (uint32_t i = 0; i < nagents; i++) {
        steer_agent *a = &s->agents[i];
        const nav_agent_in *in = &agents[i];
        memset(a, 0, sizeof *a);
        out[i].poly = NAV_NONE;
        if (steer_snap(m, in->pos, params->extents, exclude, &a->poly, a->pos) != NAV_OK) {
            out[i].status = NAV_E_OFF_MESH;
            out[i].error_field = NAV_STEP_FIELD_POSITION;
            memcpy(out[i].pos, in->pos, sizeof out[i].pos);
            continue;
        }
        a->ok = 1;
        a->range = 2.0f * in->radius + 0.5f * in->max_speed * params->horizon;
        if (a->range > max_range)
            max_range = a->range;
        if (in->radius > s->max_item_radius)
            s->max_item_radius = in->radius;
    }
    for (uint32_t k = 0; k < nobstacles; k++)
        if (obstacles[k].radius > s->max_item_radius)
            s->max_item_radius = obstacles[k].radius;
    float cell = max_range + 2.0f * s->max_item_radius;
    if (cell < 0.25f)
        cell = 0.25f;
    s->inv_cell = 1.0f / cell;
    grid_build(s, obstacles, nobstacles);

    /* Neighbours of everyone first: crowd arrival reads them across agents. */
    for (uint32_t i = 0; i < nagents; i++)
        if (s->agents[i].ok)
            grid_neighbours(s, i, agents, obstacles);
    steer_settle(s);

    /* Behaviour, avoidance, limits and move, per agent. The deadline is
       read every 8 agents: a clock read costs ~20 ns, an agent's path
       search up to milliseconds on a large mesh. */
    for (uint32_t i = 0; i < nagents; i++) {
        if (params->deadline > 0 && (i & 7) == 0 && steer_now() > params->deadline)
            return NAV_E_DEADLINE;
        if (!s->agents[i].ok)
            continue;
        steer_agent_tick(s, i, &out[i]);
    }

    /* Overlaps left after avoidance (dense crowds, accel limits) are pushed
       apart, DetourCrowd-style, over up to 8 Jacobi passes on the new
       positions, within what each agent's speed budget leaves; then every
       answer reports the velocity its displacement made. */
    steer_separate(s);
    steer_clear_landings(s, out);
    steer_finish(s, out);
    return NAV_OK;
}
