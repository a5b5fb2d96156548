/*
 * nav_vol_steer: stateless steering of flying agents in a flight volume
 * (the `step` endpoint on /v1/volumes), the navmesh step's behaviours in
 * 3-D.
 *
 * Per agent, in request order: snap the position into free space; the
 * behaviour proposes a desired velocity (a path for seek / arrive /
 * pursue, the direction with most room for flee / evade / wander); if
 * avoidance is on, the velocity is chosen among sampled candidates (the
 * desired one, the 26 grid directions at full and half speed, and rest) by
 * a cost: deviation from the desired velocity, plus a penalty for every
 * neighbour (agent or obstacle, moving spheres) met within the horizon,
 * plus one for geometry met along it (raycast); the acceleration and speed
 * limits apply; the move is a raycast that stops before the first blocked
 * voxel and slides along its face with what is left, and a position that
 * would not be free is never taken. Each agent weighs its 16 nearest
 * neighbours that could meet it within the horizon, found by one pass over
 * all agents and obstacles (quadratic in the agents of one request: fine
 * for the hundreds of fliers a request carries; the request deadline
 * bounds the rest).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nav/nav_vol.h"

#define VS_CORNERS 256

void nav_vol_steer_params_default(nav_vol_steer_params *p) {
    memset(p, 0, sizeof *p);
    p->dt = 0.05f;
    p->extents[0] = p->extents[1] = p->extents[2] = 2;
    p->avoidance = true;
    p->horizon = 2;
    p->arrive_tolerance = 0.05f;
}

static float len3(const float a[3]) {
    return sqrtf(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

static void scale3(float a[3], float s) {
    a[0] *= s, a[1] *= s, a[2] *= s;
}

/* a scaled to length l (zero stays zero) */
static void set_len(float a[3], float l) {
    float n = len3(a);
    if (n > 1e-9f)
        scale3(a, l / n);
    else
        a[0] = a[1] = a[2] = 0;
}

static double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The 26 grid directions, unit length, in a fixed order. */
static void grid_dir(int i, float d[3]) {
    int k = i < 13 ? i : i + 1; /* skip (0, 0, 0) */
    d[0] = (float)(k % 3 - 1), d[1] = (float)((k / 3) % 3 - 1), d[2] = (float)(k / 9 - 1);
    set_len(d, 1);
}

/* Free distance along unit direction d from p, up to reach (raycast). */
static float room(const nav_vol *v, const float p[3], const float d[3], float reach) {
    float e[3] = {p[0] + d[0] * reach, p[1] + d[1] * reach, p[2] + d[2] * reach};
    nav_vol_hit h;
    if (nav_vol_raycast(v, p, e, &h) != NAV_OK)
        return 0;
    return h.t * reach;
}

/*
 * The direction with most room that keeps to `want` (unit): among want and the
 * 26 grid directions, the best dot(dir, want) + 2 * room share. weight_intent
 * 0 ignores want (pure room).
 */
static void roomiest(const nav_vol *v, const float p[3], const float want[3], float reach,
                     float out[3]) {
    float best = -INFINITY;
    memcpy(out, want, 3 * sizeof *out);
    for (int i = -1; i < 26; i++) {
        float d[3];
        if (i < 0)
            memcpy(d, want, sizeof d);
        else
            grid_dir(i, d);
        if (len3(d) < 0.5f)
            continue;
        float score =
            d[0] * want[0] + d[1] * want[1] + d[2] * want[2] + 2 * room(v, p, d, reach) / reach;
        if (score > best) {
            best = score;
            memcpy(out, d, sizeof d);
        }
    }
}

static uint64_t hash_id(const char *id, uint64_t seed) {
    uint64_t h = 1469598103934665603ull ^ seed;
    for (const char *c = id ? id : ""; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    h ^= h >> 29;
    return h * 0xbf58476d1ce4e5b9ull;
}

/* seek / arrive / pursue: along the path's next corners. */
static void follow(const nav_vol *v, nav_vol_query *q, const nav_vol_steer_params *p,
                   const nav_agent_in *a, nav_vol_agent_out *o) {
    float c[3 * VS_CORNERS];
    nav_vol_path_request req = {.heuristic_weight = 1.5f,
                                .max_nodes = p->max_nodes,
                                .corners = c,
                                .max_corners = VS_CORNERS};
    memcpy(req.start, o->from, sizeof req.start);
    memcpy(req.end, o->goal, sizeof req.end);
    nav_vol_path_result res;
    if (nav_vol_path(v, q, &req, &res) != NAV_OK || res.ncorners < 1)
        return;
    uint32_t k = 0;
    for (uint32_t i = 1; i < res.ncorners && k < NAV_STEER_MAX_CORNERS; i++)
        memcpy(o->corners[k++], c + 3 * i, 3 * sizeof(float));
    const float *last = c + 3 * (res.ncorners - 1);
    while (k < 2)
        memcpy(o->corners[k++], last, 3 * sizeof(float));
    o->ncorners = k;
    float to[3] = {o->corners[0][0] - o->from[0], o->corners[0][1] - o->from[1],
                   o->corners[0][2] - o->from[2]};
    float speed = a->max_speed;
    float rest = res.length; /* along the path to its (reachable) end */
    if (a->behavior == NAV_BEHAVIOR_ARRIVE && a->arrive_radius > 0 && rest < a->arrive_radius)
        speed *= rest / a->arrive_radius;
    /* never overshoot the next corner within one tick */
    float d = len3(to);
    if (speed * p->dt > d)
        speed = d / p->dt;
    memcpy(o->desired_vel, to, sizeof to);
    set_len(o->desired_vel, speed);
}

static void propose(const nav_vol *v, nav_vol_query *q, const nav_vol_steer_params *p,
                    const nav_agent_in *a, nav_vol_agent_out *o) {
    float reach = fmaxf(a->max_speed * p->horizon, 2 * a->radius + 1);
    switch (a->behavior) {
    case NAV_BEHAVIOR_SEEK:
    case NAV_BEHAVIOR_ARRIVE:
    case NAV_BEHAVIOR_PURSUE:
        follow(v, q, p, a, o);
        break;
    case NAV_BEHAVIOR_FLEE:
    case NAV_BEHAVIOR_EVADE: {
        float away[3] = {o->from[0] - o->goal[0], o->from[1] - o->goal[1], o->from[2] - o->goal[2]};
        if (len3(away) < 1e-6f)
            away[0] = 1; /* on top of the threat: any way out */
        set_len(away, 1);
        float d[3];
        roomiest(v, o->from, away, reach, d);
        set_len(d, a->max_speed);
        memcpy(o->desired_vel, d, sizeof d);
        break;
    }
    case NAV_BEHAVIOR_WANDER: {
        uint64_t h = hash_id(a->id, p->seed);
        float want[3] = {(float)((h >> 0) & 1023) / 511.5f - 1,
                         (float)((h >> 10) & 1023) / 511.5f - 1 + 0.0f,
                         (float)((h >> 20) & 1023) / 511.5f - 1};
        want[1] *= 0.3f; /* mostly level flight */
        float cur[3] = {a->vel[0], a->vel[1], a->vel[2]};
        set_len(cur, 1);
        for (int k = 0; k < 3; k++)
            want[k] = cur[k] + 0.5f * want[k];
        if (len3(want) < 1e-6f)
            want[0] = 1;
        set_len(want, 1);
        float d[3];
        roomiest(v, o->from, want, reach, d);
        set_len(d, 0.5f * a->max_speed);
        memcpy(o->desired_vel, d, sizeof d);
        break;
    }
    default: /* idle (hide is refused before) */
        break;
    }
}

/* Earliest time in [0, horizon] at which spheres (dp apart, closing at dv) touch at R;
   INFINITY when they do not. Overlapping now: 0 when closing, else INFINITY. */
static float time_to_hit(const float dp[3], const float dv[3], float R, float horizon) {
    float c = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2] - R * R;
    float b = dp[0] * dv[0] + dp[1] * dv[1] + dp[2] * dv[2];
    if (c <= 0)
        return b < 0 ? 0 : INFINITY;
    float a = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
    if (a < 1e-12f || b >= 0)
        return INFINITY;
    float disc = b * b - a * c;
    if (disc < 0)
        return INFINITY;
    float t = (-b - sqrtf(disc)) / a;
    return t <= horizon ? t : INFINITY;
}

/* Neighbours considered per agent: the nearest that can meet it within the horizon. */
#define VS_NEAR 16

typedef struct near_set {
    uint32_t id[VS_NEAR]; /* agents 0..n-1, then obstacles n.. */
    float d2[VS_NEAR];
    uint32_t n;
} near_set;

/* The VS_NEAR nearest agents and obstacles that could meet agent self within the horizon
   (one pass over all of them; sorted by distance, ties by index: deterministic). */
static void find_near(const nav_vol_steer_params *p, const nav_agent_in *agents,
                      const nav_vol_agent_out *va, uint32_t n, uint32_t self,
                      const nav_obstacle *obs, uint32_t nobs, near_set *ns) {
    const nav_agent_in *a = &agents[self];
    ns->n = 0;
    for (uint32_t j = 0; j < n + nobs; j++) {
        if (j == self || (j < n && va[j].status != NAV_OK))
            continue;
        const float *op = j < n ? va[j].from : obs[j - n].pos;
        const float *ov = j < n ? agents[j].vel : obs[j - n].vel;
        float R = a->radius + (j < n ? agents[j].radius : obs[j - n].radius);
        float dp[3] = {op[0] - va[self].from[0], op[1] - va[self].from[1],
                       op[2] - va[self].from[2]};
        float far = R + (a->max_speed + len3(ov)) * p->horizon;
        float d2 = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2];
        if (d2 > far * far || (ns->n == VS_NEAR && d2 >= ns->d2[VS_NEAR - 1]))
            continue;
        uint32_t k = ns->n < VS_NEAR ? ns->n++ : VS_NEAR - 1;
        while (k > 0 && ns->d2[k - 1] > d2) {
            ns->d2[k] = ns->d2[k - 1];
            ns->id[k] = ns->id[k - 1];
            k--;
        }
        ns->d2[k] = d2;
        ns->id[k] = j;
    }
}

static float candidate_cost(const nav_vol *v, const nav_vol_steer_params *p,
                            const nav_agent_in *agents, const nav_vol_agent_out *va, uint32_t n,
                            uint32_t self, const nav_obstacle *obs, const near_set *ns,
                            const float cand[3], const float want[3]) {
    const nav_agent_in *a = &agents[self];
    float ms = a->max_speed > 1e-6f ? a->max_speed : 1;
    float dvw[3] = {cand[0] - want[0], cand[1] - want[1], cand[2] - want[2]};
    float cost = len3(dvw) / ms;
    for (uint32_t k = 0; k < ns->n; k++) {
        uint32_t j = ns->id[k];
        const float *op = j < n ? va[j].from : obs[j - n].pos;
        const float *ov = j < n ? agents[j].vel : obs[j - n].vel;
        float R = a->radius + (j < n ? agents[j].radius : obs[j - n].radius);
        float dp[3] = {op[0] - va[self].from[0], op[1] - va[self].from[1],
                       op[2] - va[self].from[2]};
        float dv[3] = {ov[0] - cand[0], ov[1] - cand[1], ov[2] - cand[2]};
        float t = time_to_hit(dp, dv, R, p->horizon);
        if (t < INFINITY)
            cost += 2 * (p->horizon - t) / p->horizon + 0.5f;
    }
    float sp = len3(cand);
    float wl = len3(want);
    if (sp > 1e-6f && wl > 1e-6f) {
        /* pass on the right: agents meeting head-on pick opposite sides, not the same one
           (a tie broken alike by both would keep them nose to nose) */
        float right[3] = {-want[2], 0, want[0]}; /* want x up */
        if (len3(right) < 1e-3f * wl)
            right[0] = 1, right[2] = 0;
        set_len(right, 1);
        cost -= 0.1f * (cand[0] * right[0] + cand[2] * right[2]) / sp;
    }
    if (sp > 1e-6f) {
        float reach = sp * p->horizon, d[3] = {cand[0] / sp, cand[1] / sp, cand[2] / sp};
        float free = room(v, va[self].from, d, reach);
        if (free < reach)
            cost += 2 * (1 - free / reach);
    }
    return cost;
}

/* The avoidance choice among sampled velocities (the desired one first: ties keep it). */
static void avoid(const nav_vol *v, const nav_vol_steer_params *p, const nav_agent_in *agents,
                  const nav_vol_agent_out *va, uint32_t n, uint32_t self, const nav_obstacle *obs,
                  uint32_t nobs, const float want[3], float out[3]) {
    float ms = agents[self].max_speed;
    memcpy(out, want, 3 * sizeof *out);
    near_set ns;
    find_near(p, agents, va, n, self, obs, nobs, &ns);
    float best = candidate_cost(v, p, agents, va, n, self, obs, &ns, want, want);
    for (int i = 0; i < 53; i++) {
        float c[3] = {0, 0, 0};
        if (i < 52) {
            grid_dir(i % 26, c);
            set_len(c, i < 26 ? ms : 0.5f * ms);
        }
        float cost = candidate_cost(v, p, agents, va, n, self, obs, &ns, c, want);
        if (cost < best - 1e-6f) {
            best = cost;
            memcpy(out, c, sizeof c);
        }
    }
}

/* Moves from p by d: stops before the first blocked voxel, slides along its face. */
static void move(const nav_vol *v, const float p[3], const float d[3], float out[3]) {
    float cur[3], rest[3];
    memcpy(cur, p, sizeof cur);
    memcpy(rest, d, sizeof rest);
    for (int pass = 0; pass < 3 && len3(rest) > 1e-7f; pass++) {
        float e[3] = {cur[0] + rest[0], cur[1] + rest[1], cur[2] + rest[2]};
        nav_vol_hit h;
        if (nav_vol_raycast(v, cur, e, &h) != NAV_OK)
            break;
        if (!h.hit) {
            memcpy(cur, e, sizeof e);
            break;
        }
        /* back off a little from the face so the point stays inside its free voxel */
        float l = len3(rest), back = l > 0 ? fminf(h.t, 1e-3f / l) : 0;
        float t = h.t - back;
        float np[3] = {cur[0] + t * rest[0], cur[1] + t * rest[1], cur[2] + t * rest[2]};
        if (nav_vol_point_free(v, np))
            memcpy(cur, np, sizeof np);
        for (int k = 0; k < 3; k++)
            rest[k] = h.normal[k] != 0 ? 0 : rest[k] * (1 - h.t);
    }
    if (!nav_vol_point_free(v, cur))
        memcpy(cur, p, sizeof cur);
    memcpy(out, cur, 3 * sizeof *out);
}

/* Behaviour, avoidance, limits and the move of agent i (prepared in out[i]). */
static void steer_one(const nav_vol *v, nav_vol_query *q, const nav_vol_steer_params *p,
                      const nav_agent_in *agents, uint32_t n, uint32_t i, const nav_obstacle *obs,
                      uint32_t nobs, nav_vol_agent_out *out) {
    const nav_agent_in *a = &agents[i];
    nav_vol_agent_out *o = &out[i];
    propose(v, q, p, a, o);
    float chosen[3];
    memcpy(chosen, o->desired_vel, sizeof chosen);
    if (p->avoidance && a->max_speed > 0) {
        avoid(v, p, agents, out, n, i, obs, nobs, o->desired_vel, chosen);
        float dv[3] = {chosen[0] - o->desired_vel[0], chosen[1] - o->desired_vel[1],
                       chosen[2] - o->desired_vel[2]};
        o->avoiding = len3(dv) > NAV_STEER_AVOID_EPS * a->max_speed;
    }
    /* acceleration, then speed */
    float dv[3] = {chosen[0] - a->vel[0], chosen[1] - a->vel[1], chosen[2] - a->vel[2]};
    float lim = a->max_accel * p->dt;
    if (len3(dv) > lim)
        set_len(dv, lim);
    float vel[3] = {a->vel[0] + dv[0], a->vel[1] + dv[1], a->vel[2] + dv[2]};
    if (len3(vel) > a->max_speed)
        set_len(vel, a->max_speed);
    float d[3] = {vel[0] * p->dt, vel[1] * p->dt, vel[2] * p->dt};
    move(v, o->from, d, o->pos);
    float made[3] = {o->pos[0] - o->from[0], o->pos[1] - o->from[1], o->pos[2] - o->from[2]};
    float miss[3] = {made[0] - d[0], made[1] - d[1], made[2] - d[2]};
    if (len3(miss) > 1e-5f) /* geometry stopped or deflected the move: report what was made */
        for (int k = 0; k < 3; k++)
            vel[k] = made[k] / p->dt;
    memcpy(o->vel, vel, sizeof vel);
    if (o->ncorners) {
        float g[3] = {o->pos[0] - o->goal[0], o->pos[1] - o->goal[1], o->pos[2] - o->goal[2]};
        o->arrived = len3(g) <= p->arrive_tolerance;
    }
}

static nav_status vfail(nav_step_error *err, int32_t agent, nav_step_field f, const char *msg) {
    if (err) {
        memset(err, 0, sizeof *err);
        err->status = NAV_E_INVALID_ARG;
        err->agent = agent;
        err->obstacle = -1;
        err->field = f;
        err->component = -1;
        strncpy(err->message, msg, sizeof err->message - 1);
    }
    return NAV_E_INVALID_ARG;
}

/* Snaps position and goal of agent i into va (or fails its slot). */
static void prepare(const nav_vol *v, const nav_vol_steer_params *p, const nav_agent_in *a,
                    nav_vol_agent_out *o) {
    float d;
    memset(o, 0, sizeof *o);
    o->behavior = a->behavior;
    if (nav_vol_nearest(v, a->pos, p->extents, o->from, &d) != NAV_OK) {
        o->status = NAV_E_OFF_MESH;
        o->error_field = NAV_STEP_FIELD_POSITION;
        return;
    }
    memcpy(o->pos, o->from, sizeof o->pos);
    float g[3];
    bool follow_path = a->behavior == NAV_BEHAVIOR_SEEK || a->behavior == NAV_BEHAVIOR_ARRIVE ||
                       a->behavior == NAV_BEHAVIOR_PURSUE;
    bool run_away = a->behavior == NAV_BEHAVIOR_FLEE || a->behavior == NAV_BEHAVIOR_EVADE;
    if (follow_path || run_away) {
        const float *src = run_away && a->has_threat ? a->threat : a->target;
        memcpy(g, src, sizeof g);
        if (a->behavior == NAV_BEHAVIOR_PURSUE || a->behavior == NAV_BEHAVIOR_EVADE) {
            /* where the target will be when reached at full speed (at most 2 s ahead) */
            float dp[3] = {g[0] - o->from[0], g[1] - o->from[1], g[2] - o->from[2]};
            float ahead = a->max_speed > 0 ? fminf(len3(dp) / a->max_speed, 2) : 0;
            for (int k = 0; k < 3; k++)
                g[k] += a->target_vel[k] * ahead;
        }
        if (follow_path) {
            if (nav_vol_nearest(v, g, p->extents, o->goal, &d) != NAV_OK) {
                o->status = NAV_E_OFF_MESH;
                o->error_field = NAV_STEP_FIELD_TARGET;
            }
        } else {
            memcpy(o->goal, g, sizeof g); /* a threat need not be in free space */
        }
    }
}

nav_status nav_vol_step(const nav_vol *v, nav_vol_query *q, const nav_vol_steer_params *params,
                        const nav_agent_in *agents, uint32_t nagents, const nav_obstacle *obstacles,
                        uint32_t nobstacles, nav_vol_agent_out *out, nav_step_error *err) {
    if (!v || !q || !params || (nagents && (!agents || !out)))
        return vfail(err, -1, NAV_STEP_FIELD_NONE, "volume, scratch or output is missing");
    nav_steer_params sp;
    nav_steer_params_default(&sp);
    sp.dt = params->dt;
    memcpy(sp.extents, params->extents, sizeof sp.extents);
    sp.horizon = params->horizon;
    sp.arrive_tolerance = params->arrive_tolerance;
    for (uint32_t i = 0; i < nagents; i++)
        if (agents[i].behavior == NAV_BEHAVIOR_HIDE) {
            char msg[120];
            snprintf(msg, sizeof msg,
                     "agents[%u].behavior hide is not available on a volume (seek, arrive, flee, "
                     "pursue, evade, wander, idle)",
                     (unsigned)i);
            return vfail(err, (int32_t)i, NAV_STEP_FIELD_BEHAVIOR, msg);
        }
    nav_status st = nav_step_validate(&sp, agents, nagents, obstacles, nobstacles, err);
    if (st != NAV_OK)
        return st;
    /* every agent's snapped start first: neighbours see where the others start */
    for (uint32_t i = 0; i < nagents; i++)
        prepare(v, params, &agents[i], &out[i]);
    for (uint32_t i = 0; i < nagents; i++) {
        if (params->deadline > 0 && mono_now() > params->deadline)
            return NAV_E_DEADLINE;
        if (out[i].status == NAV_OK)
            steer_one(v, q, params, agents, nagents, i, obstacles, nobstacles, out);
    }
    return NAV_OK;
}
