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
 *      and the reported velocity is the own move's (made along a wall);
 *   6. landing spots of off-mesh links (nav_steer_action): others are
 *      pushed off them where their budget allows, then each lander, in
 *      index order, lands on the nearest free point near its link's end.
 * With traverse_links, step 4 moves an agent that reaches a link across it
 * (and across more within its budget) instead of stopping it at the start.
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
    p->threads = 1;
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
    s->bucket_cap = 16;
    while (s->bucket_cap < 2 * items)
        s->bucket_cap <<= 1;
    s->nbuckets = s->bucket_cap;
    s->agents = calloc(max_agents, sizeof *s->agents);
    s->bucket_start = calloc((size_t)s->bucket_cap + 1, sizeof *s->bucket_start);
    s->items = calloc(items, sizeof *s->items);
    s->item_cell = calloc(2 * (size_t)items, sizeof *s->item_cell);
    s->item_bucket = calloc(items, sizeof *s->item_bucket);
    s->fill = calloc(s->bucket_cap, sizeof *s->fill);
    s->push = calloc(2 * (size_t)max_agents, sizeof *s->push);
    s->order = calloc(max_agents, sizeof *s->order);
    s->order_tmp = calloc(max_agents, sizeof *s->order_tmp);
    s->sorted = calloc(items, sizeof *s->sorted);
    s->moved = calloc(max_agents, 1);
    s->nei_d = calloc((size_t)max_agents * (STEER_MAX_NEI + STEER_MAX_OBS), sizeof *s->nei_d);
    s->dirty = calloc(max_agents, 1);
    s->pushed = calloc(max_agents, 1);
    s->ngoals = STEER_GOAL_MEMO;
    while (s->ngoals < 4 * max_agents)
        s->ngoals <<= 1;
    s->goals = calloc(s->ngoals, sizeof *s->goals);
    s->ngcounts = 16;
    while (s->ngcounts < 2 * max_agents)
        s->ngcounts <<= 1;
    s->gcounts = calloc(s->ngcounts, sizeof *s->gcounts);
    s->epoch = 1;
    if (!s->goals || !s->gcounts || !s->sorted || !s->moved || !s->nei_d || !s->order_tmp ||
        !s->dirty || !s->pushed || !s->agents || !s->bucket_start || !s->items || !s->item_cell ||
        !s->item_bucket || !s->fill || !s->push || !s->order) {
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
    free(s->order_tmp);
    free(s->goals);
    free(s->gcounts);
    steer_lanes_free(s);
    for (uint32_t k = 0; k < s->nflows; k++)
        steer_flow_slot_drop(&s->flows[k]);
    free(s->flows);
    free(s->sorted);
    free(s->moved);
    free(s->nei_d);
    free(s->dirty);
    free(s->pushed);
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

/* splitmix64 finaliser: the goal memo's and counts' hash. */
static uint64_t goal_mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* ---- goals: snapped once (memo), counted per tick ---- */

/* steer_snap of a goal, memoised: a pure function of the goal's bits and
   of the memo's epoch key (mesh, extents, exclusions; nav_step). */
steer_goal *steer_goal_entry(nav_steer *s, const float g[3]) {
    uint32_t b[3];
    memcpy(b, g, sizeof b);
    uint64_t h = goal_mix(((uint64_t)b[0] << 32 | b[1]) ^ goal_mix(b[2]));
    /* linear probing over STEER_GOAL_PROBE slots; a miss with all of them
       taken replaces the first (a memo: losing an entry only costs a snap) */
    uint32_t mask = s->ngoals - 1, at = (uint32_t)h & mask;
    steer_goal *e = NULL;
    for (uint32_t k = 0; k < STEER_GOAL_PROBE; k++) {
        steer_goal *c = &s->goals[(at + k) & mask];
        if (c->epoch != s->epoch) {
            if (!e)
                e = c;
            break;
        }
        if (memcmp(c->p, g, sizeof c->p) == 0)
            return c;
    }
    if (!e || s->readonly)
        e = s->readonly ? &s->tmp_goal : &s->goals[at]; /* a lane never writes the memo */
    const nav_steer_params *pr = s->params;
    uint64_t exclude = pr->filter ? pr->filter->exclude_mask : 0;
    uint32_t poly;
    float on[3];
    if (steer_snap(s->mesh, g, pr->extents, exclude, &poly, on) != NAV_OK)
        return NULL;
    memcpy(e->p, g, sizeof e->p);
    memcpy(e->on, on, sizeof e->on);
    e->poly = poly;
    e->epoch = s->epoch;
    return e;
}

steer_gcount *steer_goal_count(nav_steer *s, const float g[3]) {
    uint32_t b[3];
    memcpy(b, g, sizeof b);
    uint64_t h = goal_mix(((uint64_t)b[0] << 32 | b[1]) ^ goal_mix(b[2]));
    uint32_t mask = s->ngcounts - 1;
    for (uint32_t at = (uint32_t)h & mask;; at = (at + 1) & mask) {
        steer_gcount *c = &s->gcounts[at];
        if (c->tick != s->tick) {
            memcpy(c->p, g, sizeof c->p);
            c->count = 0;
            c->tick = s->tick;
            return c;
        }
        if (memcmp(c->p, g, sizeof c->p) == 0)
            return c;
    }
}

nav_status steer_snap_goal(nav_steer *s, const float g[3], uint32_t *poly, float out[3]) {
    const steer_goal *e = steer_goal_entry(s, g);
    if (!e)
        return NAV_E_OFF_MESH;
    *poly = e->poly;
    memcpy(out, e->on, sizeof e->on);
    return NAV_OK;
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
    /* what the neighbour scan reads, in bucket order (contiguous) */
    uint32_t total = s->bucket_start[nb];
    for (uint32_t k = 0; k < total; k++) {
        uint32_t it = s->items[k];
        const float *p = it < s->max_agents ? s->agents[it].pos : obs[it - s->max_agents].pos;
        s->sorted[k].x = p[0];
        s->sorted[k].y = p[1];
        s->sorted[k].z = p[2];
        s->sorted[k].r = it < s->max_agents ? s->in[it].radius : obs[it - s->max_agents].radius;
        s->sorted[k].cx = s->item_cell[2 * it];
        s->sorted[k].cz = s->item_cell[2 * it + 1];
    }
}

/* Inserts (id, d) in a list kept sorted by d, then id; drops the farthest
   when full. */
static inline void nei_insert(uint32_t *ids, float *ds, uint32_t *n, uint32_t max, uint32_t id,
                              float d) {
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
   measured between the circles' rims. The result is the same whatever the
   grid's cell size or scan order: ties are broken by index. */
static void grid_neighbours(nav_steer *s, uint32_t i, const nav_agent_in *in) {
    steer_agent *a = &s->agents[i];
    a->nnei = 0;
    a->nobs = 0;
    const float q = a->range, ri = in[i].radius;
    const float px = a->pos[0], py = a->pos[1], pz = a->pos[2];
    float reach = q + s->max_item_radius + ri;
    int32_t x0 = cell_of(px - reach, s->inv_cell), x1 = cell_of(px + reach, s->inv_cell);
    int32_t z0 = cell_of(pz - reach, s->inv_cell), z1 = cell_of(pz + reach, s->inv_cell);
    float ds_a[STEER_MAX_NEI], ds_o[STEER_MAX_OBS];
    for (int32_t cz = z0; cz <= z1; cz++) {
        for (int32_t cx = x0; cx <= x1; cx++) {
            uint32_t b = cell_hash(cx, cz, s->nbuckets);
            for (uint32_t k = s->bucket_start[b]; k < s->bucket_start[b + 1]; k++) {
                const steer_item *e = &s->sorted[k];
                if (e->cx != cx || e->cz != cz)
                    continue; /* another cell in the same bucket */
                float dx = e->x - px, dz = e->z - pz;
                float lim = q + e->r + ri, d2 = dx * dx + dz * dz;
                /* rim to rim farther than the range; or another floor (a
                   deck above, the ground below): not a neighbour */
                if (d2 > lim * lim || fabsf(e->y - py) > STEER_FLOOR_DY)
                    continue;
                uint32_t it = s->items[k];
                if (it == i)
                    continue;
                float gap = sqrtf(d2) - e->r - ri;
                if (it < s->max_agents) {
                    if (a->nnei < STEER_MAX_NEI || gap <= ds_a[STEER_MAX_NEI - 1])
                        nei_insert(a->nei, ds_a, &a->nnei, STEER_MAX_NEI, it, gap);
                } else {
                    nei_insert(a->obs, ds_o, &a->nobs, STEER_MAX_OBS, it - s->max_agents, gap);
                }
            }
        }
    }
}

/* Offers pair member j (item it_j, at sorted[kj]) to agent i's lists, as
   grid_neighbours would: the same range test and gap, in the same float
   operation order. */
static inline void offer(nav_steer *s, uint32_t i, const steer_item *ei, const steer_item *ej,
                         uint32_t it_j, float d2, float root) {
    steer_agent *a = &s->agents[i];
    float lim = a->range + ej->r + ei->r;
    if (d2 > lim * lim)
        return;
    float gap = root - ej->r - ei->r;
    float *ds = &s->nei_d[(size_t)i * (STEER_MAX_NEI + STEER_MAX_OBS)];
    if (it_j < s->max_agents) {
        if (a->nnei < STEER_MAX_NEI || gap <= ds[STEER_MAX_NEI - 1])
            nei_insert(a->nei, ds, &a->nnei, STEER_MAX_NEI, it_j, gap);
    } else {
        nei_insert(a->obs, ds + STEER_MAX_NEI, &a->nobs, STEER_MAX_OBS, it_j - s->max_agents, gap);
    }
}

/*
 * Every agent's neighbours at once, each pair measured once (half the
 * distance computations of grid_neighbours per agent): the cells within two
 * of an item's (the widest reach, the grid being sized on it) on one side,
 * and the later items of its own cell. The lists are the same as
 * grid_neighbours': each keeps its nearest by (gap, index), whatever the
 * order pairs come in. Writes other agents' lists: one thread only.
 */
static void grid_neighbours_all(nav_steer *s) {
    for (uint32_t i = 0; i < s->n; i++) {
        s->agents[i].nnei = 0;
        s->agents[i].nobs = 0;
    }
    uint32_t total = s->bucket_start[s->nbuckets];
    for (uint32_t k = 0; k < total; k++) {
        const steer_item *ei = &s->sorted[k];
        uint32_t it = s->items[k];
        bool ia = it < s->max_agents;
        for (int32_t dz = 0; dz <= 2; dz++) {
            for (int32_t dx = dz == 0 ? 0 : -2; dx <= 2; dx++) {
                int32_t cx = ei->cx + dx, cz = ei->cz + dz;
                uint32_t b = cell_hash(cx, cz, s->nbuckets);
                /* its own cell: only the items after it (each pair once) */
                uint32_t k2 = dx == 0 && dz == 0 ? k + 1 : s->bucket_start[b];
                for (; k2 < s->bucket_start[b + 1]; k2++) {
                    const steer_item *ej = &s->sorted[k2];
                    if (ej->cx != cx || ej->cz != cz)
                        continue;
                    uint32_t jt = s->items[k2];
                    bool ja = jt < s->max_agents;
                    if (!ia && !ja)
                        continue; /* two obstacles */
                    if (fabsf(ej->y - ei->y) > STEER_FLOOR_DY)
                        continue;
                    float ddx = ej->x - ei->x, ddz = ej->z - ei->z;
                    float d2 = ddx * ddx + ddz * ddz;
                    /* beyond every range test of offer(): no sqrt (most
                       pairs of the 5 x 5 cells scanned) */
                    if (d2 > s->max_lim2)
                        continue;
                    float root = sqrtf(d2);
                    if (ia)
                        offer(s, it, ei, ej, jt, d2, root);
                    if (ja)
                        offer(s, jt, ej, ei, it, d2, root);
                }
            }
        }
    }
}

/* ---- the tick ---- */

double steer_clock(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- phases (run on lanes, nav_steer_lanes.c) ---- */

/* Snaps agents [from, to) (out: the answers, for off-mesh agents). */
static void phase_snap(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    nav_agent_out *out = ctx;
    const nav_steer_params *params = s->params;
    uint64_t exclude = params->filter ? params->filter->exclude_mask : 0;
    for (uint32_t i = from; i < to; i++) {
        steer_agent *a = &s->agents[i];
        const nav_agent_in *in = &s->in[i];
        memset(a, 0, sizeof *a);
        out[i].poly = NAV_NONE;
        if (steer_snap(s->mesh, in->pos, params->extents, exclude, &a->poly, a->pos) != NAV_OK) {
            out[i].status = NAV_E_OFF_MESH;
            out[i].error_field = NAV_STEP_FIELD_POSITION;
            memcpy(out[i].pos, in->pos, sizeof out[i].pos);
            continue;
        }
        a->ok = 1;
        a->range = 2.0f * in->radius + 0.5f * in->max_speed * params->horizon;
    }
}

static void phase_neighbours(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    (void)ctx;
    for (uint32_t i = from; i < to; i++)
        if (s->agents[i].ok)
            grid_neighbours(s, i, s->in);
}

/* The agents' ticks. The deadline is read every 8 agents: a clock read
   costs ~20 ns, an agent's path search up to milliseconds on a large
   mesh; a lane that sees it pass stops (nav_step answers NAV_E_DEADLINE). */
static void phase_ticks(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    nav_agent_out *out = ctx;
    double deadline = s->params->deadline;
    for (uint32_t i = from; i < to; i++) {
        if (deadline > 0 && ((i - from) & 7) == 0 && steer_clock() > deadline) {
            s->lane_hit_deadline = 1;
            return;
        }
        if (s->agents[i].ok)
            steer_agent_tick(s, i, &out[i]);
    }
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
    for (uint32_t i = 0; params->avoid_debug && i < nagents; i++)
        params->avoid_debug[i].nsamples = 0; /* sampled agents fill theirs */
    s->n = nagents;
    s->lane_hit_deadline = 0;
    if (++s->tick == 0)
        s->tick = 1; /* 0 marks "never" in goal counts */
    uint64_t exclude = params->filter ? params->filter->exclude_mask : 0;
    if (s->memo_uid != nav_mesh_uid(m) || s->memo_exclude != exclude ||
        memcmp(s->memo_ext, params->extents, sizeof s->memo_ext) != 0) {
        s->memo_uid = nav_mesh_uid(m);
        s->memo_exclude = exclude;
        memcpy(s->memo_ext, params->extents, sizeof s->memo_ext);
        if (++s->epoch == 0) { /* wrapped: make every entry stale explicitly */
            memset(s->goals, 0, (size_t)s->ngoals * sizeof *s->goals);
            s->epoch = 1;
        }
    }
    s->mesh = m;
    s->query = q;
    s->cache = cache;
    s->params = params;
    s->in = agents;
    s->obstacles = obstacles;
    s->nobstacles = nobstacles;

    /* Snap every agent (lanes when the step is large); then size the grid
       on the largest query range. */
    uint32_t threads = params->threads > 1 ? params->threads : 1;
    steer_lanes_prepare(s, threads);
    steer_parallel(s, phase_snap, out);
    float max_range = 0.0f;
    s->max_item_radius = 0.0f;
    for (uint32_t i = 0; i < nagents; i++) {
        if (!s->agents[i].ok)
            continue;
        if (s->agents[i].range > max_range)
            max_range = s->agents[i].range;
        if (agents[i].radius > s->max_item_radius)
            s->max_item_radius = agents[i].radius;
    }
    for (uint32_t k = 0; k < nobstacles; k++)
        if (obstacles[k].radius > s->max_item_radius)
            s->max_item_radius = obstacles[k].radius;
    /* Half the widest reach: a query scans 4 to 5 cells a side, about half
       the area of reach-sized cells (3 a side of twice the reach). */
    float cell = 0.5f * (max_range + 2.0f * s->max_item_radius);
    /* offer()'s lim is (range + r_j) + r_i: float addition and
       multiplication are monotone, so this bounds every lim * lim */
    float max_lim = max_range + s->max_item_radius + s->max_item_radius;
    s->max_lim2 = max_lim * max_lim;
    if (cell < 0.25f)
        cell = 0.25f;
    s->inv_cell = 1.0f / cell;
    /* Buckets for this step's items, not the scratch's capacity: clearing
       and summing 65,536 buckets (--max-agents 10,000) for 1,000 agents
       cost more than the grid's use. Which bucket holds a cell changes only
       the order pairs are offered in, never the lists (nearest by gap, then
       index). */
    s->nbuckets = 16;
    while (s->nbuckets < 2 * (nagents + nobstacles) && s->nbuckets < s->bucket_cap)
        s->nbuckets <<= 1;
    grid_build(s, obstacles, nobstacles);

    /* How many seek / arrive agents share each goal: a goal shared by
       STEER_FLOW_MIN or more gets one search for all (steer_flow). */
    for (uint32_t i = 0; i < nagents; i++) {
        const nav_agent_in *in = &agents[i];
        if (!s->agents[i].ok ||
            (in->behavior != NAV_BEHAVIOR_SEEK && in->behavior != NAV_BEHAVIOR_ARRIVE))
            continue;
        steer_gcount *gc = steer_goal_count(s, in->target);
        gc->count++;
        gc->flow = NULL;
        gc->tried = 0;
        gc->job = -1;
        s->agents[i].gc = gc;
    }
    if (!steer_flows_prepare(s))
        return NAV_E_DEADLINE;

    /* The lanes again: they copy the grid's size and the trees' table. */
    steer_lanes_prepare(s, threads);
    /* Neighbours of everyone first: crowd arrival reads them across agents. */
    if (s->nlanes >= 2)
        steer_parallel(s, phase_neighbours, NULL);
    else
        grid_neighbours_all(s); /* the same lists, each pair measured once */
    steer_settle(s);

    /* Behaviour, avoidance, limits and move, per agent. */
    steer_parallel(s, phase_ticks, out);
    bool late = s->lane_hit_deadline;
    for (uint32_t k = 0; k < s->nlanes; k++)
        late = late || s->lanes[k].lane_hit_deadline;
    if (late)
        return NAV_E_DEADLINE;

    /* Overlaps left after avoidance (dense crowds, accel limits) are pushed
       apart, DetourCrowd-style, over up to 8 Jacobi passes on the new
       positions, within what each agent's speed budget leaves; then every
       answer reports the velocity its displacement made. */
    steer_separate(s);
    steer_clear_landings(s, out);
    steer_place_landings(s, out);
    steer_finish(s, out);
    return NAV_OK;
}
