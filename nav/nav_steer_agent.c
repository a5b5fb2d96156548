/*
 * nav_steer_agent: what one agent wants and where it ends up in a tick.
 *
 * Owns the behaviours (each proposes a desired velocity in xz), the path
 * following shared by seek / arrive / pursue / hide (only the next corners of
 * the navmesh path are used: steer toward corner A, toward B once A is nearly
 * reached and B is in sight; slow down for the end or an off-mesh link), the
 * acceleration and speed limits, the move along the surface within the
 * tick's speed budget (steer_move_capped, also used by the separation
 * pushes) and the answer's velocity: the own move's (what was made along a
 * wall), never the separation push, which only corrects the position.
 * Path behaviours report two or more corners, the end repeated near it.
 *
 * The path is searched from the agent's current position every tick, so a
 * corner that was passed is never steered back to: the string-pulled path
 * from where the agent stands starts with the next visible corner.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_cache.h"
#include "nav/nav_internal.h"
#include "nav/nav_query_internal.h"
#include "nav/nav_steer_internal.h"

#define CORNER_EPS 1e-3f     /* a corner this close (xz) is where we stand */
#define LINK_MATCH_EPS 0.05f /* a corner this close to a link's end is that end */
#define HIDE_CLEARANCE 0.2f  /* extra gap between a hiding agent and its obstacle */
#define FLEE_DIRS 12         /* directions sampled by flee / evade */
#define WANDER_JITTER 0.6f   /* radians of heading change at most per tick */

_Static_assert(NAV_STEER_MAX_CORNERS >= 2, "the contract promises two or more corners");

static float len2f(float x, float z) {
    return sqrtf(x * x + z * z);
}

static float dist_xz(const float *a, const float *b) {
    return len2f(b[0] - a[0], b[2] - a[2]);
}

/* splitmix64 finaliser: a stateless, well mixed hash step. */
static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Wander's randomness: the agent id (FNV-1a), the request seed and the
   agent's own state, so the same request always yields the same answer while
   successive ticks (new positions) differ. */
static uint64_t agent_hash(const nav_agent_in *in, uint64_t seed) {
    uint64_t h = 0xCBF29CE484222325ull;
    if (in->id)
        for (const unsigned char *c = (const unsigned char *)in->id; *c; c++)
            h = (h ^ *c) * 0x100000001B3ull;
    h = mix64(h ^ seed);
    h = mix64(h ^ (float_bits(in->pos[0]) << 32 | float_bits(in->pos[2])));
    h = mix64(h ^ (float_bits(in->vel[0]) << 32 | float_bits(in->vel[2])));
    return h;
}

float steer_raycast(nav_steer *s, uint32_t poly, const float start[3], const float end[3],
                    float normal[3], bool *hit) {
    nav_raycast_result rc;
    memset(&rc, 0, sizeof rc);
    rc.polys = s->ray_polys;
    rc.max_polys = STEER_RAY_POLYS;
    *hit = false;
    if (nav_raycast(s->mesh, poly, start, end, s->params->filter, &rc) != NAV_OK) {
        *hit = true;
        if (normal)
            memset(normal, 0, 3 * sizeof(float));
        return 0.0f;
    }
    *hit = rc.hit;
    if (normal)
        memcpy(normal, rc.normal, 3 * sizeof(float));
    return rc.hit ? rc.t : 1.0f;
}

#define FLOW_PREFIX 48 /* polygons of a tree corridor walked first */

/* The path through the goal's shared tree (nav_steer_flow.c), pulled like
   nav_find_path_reuse_at's; not NAV_OK when the tree does not serve this
   agent (the caller then searches on its own). */
static nav_status flow_path(nav_steer *s, const steer_agent *a, const steer_flow *f, uint32_t gpoly,
                            const float goal[3], uint32_t stop_corners, float stop) {
    nav_path_prep prep;
    memset(&prep, 0, sizeof prep);
    prep.sp = a->poly;
    prep.ep = gpoly;
    memcpy(prep.spt, a->pos, sizeof prep.spt);
    memcpy(prep.ept, goal, sizeof prep.ept);
    prep.stop_corners = stop_corners;
    prep.stop_len = stop;
    nav_path_result *r = &s->path;
    /* Only the corridor's start is walked out of the tree when only the
       path's start is pulled: FLOW_PREFIX polygons, four times more while
       the pull asks for more (the corners are the whole corridor's). */
    for (uint32_t want = stop_corners ? FLOW_PREFIX : STEER_PATH_POLYS;;
         want = want * 4 < STEER_PATH_POLYS ? want * 4 : STEER_PATH_POLYS) {
        uint32_t n;
        double cost;
        bool complete;
        nav_status st =
            steer_flow_corridor(f, a->poly, a->pos, s->fpolys, s->fvia, want, &n, &cost, &complete);
        if (st != NAV_OK)
            return st;
        if (!complete && want == STEER_PATH_POLYS)
            return NAV_E_LIMIT; /* longer than the buffers: the caller searches */
        prep.open_end = !complete;
        r->ncorners = r->npolys = r->nlinks = r->nexpanded = 0;
        st = nav_path_pull_corridor(s->mesh, &prep, s->fpolys, s->fvia, n, 0, r);
        if (st != NAV_E_LIMIT || complete)
            return st;
    }
}

/*
 * How much of the path follow() reads: the corners it reports or steers by,
 * and the distance to the stop (goal or link) only while it is short enough
 * to change the speed (arrive_radius, braking, one tick), the avoidance
 * (contacts after the stop are ignored within horizon * max_speed) or the
 * crowd arrival (a blocker within the neighbour range, rim gap <= range).
 * A path pulled this far in xz (follow() measures in xz) is steered exactly
 * as the whole one: beyond it the stop is "far" either way (follow() then
 * treats the truncated path as not ending at the goal: full speed, no
 * stop, the same answer).
 */
static float stop_len(const nav_steer *s, const steer_agent *a, const nav_agent_in *in) {
    const nav_steer_params *pr = s->params;
    float v = in->max_speed, L = a->range;
    float cand[5] = {pr->horizon * v * 1.01f, in->arrive_radius, v * pr->dt, pr->arrive_tolerance,
                     in->max_accel > 0.0f ? v * v / (2.0f * in->max_accel) : 0.0f};
    for (int k = 0; k < 5; k++)
        if (cand[k] > L)
            L = cand[k];
    return L + 0.5f;
}

/* The path from the agent to goal (through the cache when there is one);
   stop_corners 0: the whole path, else the prefix stop_len() asks for. */
static nav_status find_path(nav_steer *s, const steer_agent *a, const nav_agent_in *in,
                            const float goal[3], uint32_t stop_corners) {
    /* a goal shared by STEER_FLOW_MIN seek / arrive agents this tick (and
       no per-agent node budget): one tree for all of them */
    const steer_goal *ge = steer_goal_entry(s, goal);
    if (!ge)
        return NAV_E_OFF_MESH;
    nav_path_result *r = &s->path;
    r->corners = s->corners;
    r->max_corners = STEER_PATH_CORNERS;
    r->polys = s->polys;
    r->max_polys = STEER_PATH_POLYS;
    r->links = s->links;
    r->max_links = STEER_PATH_LINKS;
    r->expanded = NULL;
    r->max_expanded = 0;
    /* (the count of the agent's own target, taken by nav_step) */
    if (goal == in->target && a->gc && a->gc->flow &&
        flow_path(s, a, a->gc->flow, ge->poly, ge->on, stop_corners,
                  stop_corners ? stop_len(s, a, in) : 0) == NAV_OK)
        return NAV_OK;
    const nav_steer_params *pr = s->params;
    nav_path_request req;
    memset(&req, 0, sizeof req);
    /* Both ends are snapped already (the agent this tick, the goal through
       the memo): the search starts from those polygons and points. */
    uint32_t gpoly = ge->poly;
    memcpy(req.end, ge->on, sizeof req.end);
    memcpy(req.start, a->pos, sizeof req.start);
    memcpy(req.extents, pr->extents, sizeof req.extents);
    req.filter = pr->filter;
    req.max_nodes = pr->max_nodes;
    /* The corridor search (A* over polygons, then string pulling: Detour's
       quality), not the optimal one: on a large mesh every polygon an agent
       enters is a new (start, end) pair, and a cross-map optimal search
       costs about 3x a corridor one (bench_steer). */
    req.algorithm = NAV_ALGO_CORRIDOR;
    /* The canonical corridor of (start polygon, goal polygon) (level 2 of
       the cache, nav_cache.h): thousands of agents chasing one target share
       one search per polygon pair, each agent only re-pulls the string for
       its exact points. The corridor does not depend on which request came
       first, so the answer is the same with a cold cache, a warm one or
       none (s->cache == NULL computes the same corridor). */
    return nav_find_path_reuse_at(s->query, s->cache, s->mesh, &req, a->poly, gpoly, stop_corners,
                                  stop_len(s, a, in), r, NULL);
}

/* Speed that stops exactly at distance d: linear inside radius R, never more
   than the braking distance allows (v^2 = 2 a d) nor than reaches the point
   within one tick (no overshoot, hence no oscillation). */
static float stopping_speed(float vmax, float amax, float d, float R, float dt, float tol) {
    if (d <= tol)
        return 0.0f;
    float v = vmax;
    if (R > 0.0f && vmax * d / R < v)
        v = vmax * d / R;
    if (amax > 0.0f) {
        float vb = sqrtf(2.0f * amax * d);
        if (vb < v)
            v = vb;
    }
    if (d / dt < v)
        v = d / dt;
    return v;
}

/* Sorts keys[0..n) ascending by their upper 32 bits, stably (keys built in
   index order keep it among equals, so the result is the full 64-bit
   order): three counting passes of 11 bits, through tmp. */
static void sort_upper32(uint64_t *keys, uint64_t *tmp, uint32_t n) {
    uint32_t count[2048];
    uint64_t *src = keys, *dst = tmp;
    for (int pass = 0; pass < 3; pass++) {
        int shift = 32 + 11 * pass;
        memset(count, 0, sizeof count);
        for (uint32_t k = 0; k < n; k++)
            count[(src[k] >> shift) & 2047u]++;
        uint32_t sum = 0;
        for (uint32_t d = 0; d < 2048; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint32_t k = 0; k < n; k++)
            dst[count[(src[k] >> shift) & 2047u]++] = src[k];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) /* three passes end in tmp */
        memcpy(keys, src, (size_t)n * sizeof *keys);
}

static bool same_goal(const steer_agent *a, const steer_agent *b) {
    return a->gpoly == b->gpoly && memcmp(a->goal, b->goal, sizeof a->goal) == 0;
}

bool steer_blocks(const nav_steer *s, uint32_t i, uint32_t j) {
    const steer_agent *a = &s->agents[i], *b = &s->agents[j];
    if (!b->blocks || !same_goal(a, b))
        return false;
    return b->tdist < a->tdist || (b->tdist == a->tdist && j < i);
}

void steer_settle(nav_steer *s) {
    const float tol = s->params->arrive_tolerance;
    uint32_t m = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        steer_agent *a = &s->agents[i];
        const nav_agent_in *in = &s->in[i];
        a->settled = 0;
        a->blocks = 0;
        a->has_goal = 0;
        if (!a->ok || in->behavior != NAV_BEHAVIOR_ARRIVE ||
            steer_snap_goal(s, in->target, &a->gpoly, a->goal) != NAV_OK)
            continue;
        a->has_goal = 1;
        float dy = a->goal[1] - a->pos[1];
        a->tdist = sqrtf(dist_xz(a->pos, a->goal) * dist_xz(a->pos, a->goal) + dy * dy);
        /* a non-negative float's bits order as the float: (distance, index)
           sorts with no context pointer and no ties */
        uint32_t bits;
        memcpy(&bits, &a->tdist, sizeof bits);
        s->order[m++] = (uint64_t)bits << 32 | i;
    }
    sort_upper32(s->order, s->order_tmp, m);
    for (uint32_t k = 0; k < m; k++) {
        uint32_t i = (uint32_t)s->order[k];
        steer_agent *a = &s->agents[i];
        const nav_agent_in *in = &s->in[i];
        bool still = len2f(in->vel[0], in->vel[2]) <= STEER_SETTLE_SPEED;
        /* the one whose body covers the goal keeps the way to it: the
           others stop against it instead of jostling for the point */
        a->blocks = still || a->tdist <= in->radius;
        if (!still)
            continue;
        if (a->tdist <= tol) {
            a->settled = 1;
            continue;
        }
        float gx = a->goal[0] - a->pos[0], gz = a->goal[2] - a->pos[2], gl = len2f(gx, gz);
        bool left = false, right = false;
        for (uint32_t n = 0; n < a->nnei && !a->settled; n++) {
            uint32_t j = a->nei[n];
            const steer_agent *b = &s->agents[j];
            if (!steer_blocks(s, i, j))
                continue;
            float dx = b->pos[0] - a->pos[0], dz = b->pos[2] - a->pos[2], d = len2f(dx, dz);
            if (d - in->radius - s->in[j].radius > STEER_CONTACT)
                continue;
            float dot = dx * gx + dz * gz;
            if (d < 1e-6f || gl < 1e-6f || dot >= STEER_BLOCK_COS * d * gl)
                a->settled = 1; /* one right in the way */
            else if (dot >= 0.0f && gx * dz - gz * dx >= 0.0f)
                left = true;
            else if (dot >= 0.0f)
                right = true;
        }
        /* wedged: blockers ahead on both sides, nothing to slide along */
        if (left && right)
            a->settled = 1;
    }
}

typedef struct follow_result {
    float dist_end; /* path distance to the goal (or to the link where we stop) */
    bool stops;     /* dist_end is where the agent stops (arrive, link, seek end) */
    bool reached;   /* within tolerance of the goal */
    bool cross;     /* traverse_links: the link ahead is taken this tick (cross_links) */
    float goal[3];  /* the goal followed, for cross_links */
} follow_result;

/*
 * Path following toward goal: fills dv, the output corners and, at an
 * off-mesh link's start, the action. slow: arrive (slow down inside R).
 * Returns NAV_E_OFF_MESH when the goal is not on the mesh.
 */
static nav_status follow(nav_steer *s, uint32_t i, const float goal[3], bool slow, float R,
                         nav_agent_out *o, float dv[2], follow_result *fr) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    const nav_steer_params *pr = s->params;
    const nav_mesh *m = s->mesh;
    dv[0] = dv[1] = 0.0f;
    fr->dist_end = 0.0f;
    fr->reached = false;
    fr->stops = false;
    fr->cross = false;
    memcpy(fr->goal, goal, sizeof fr->goal);
    /* the start and the corners reported (B after A is among them) */
    nav_status st = find_path(s, a, in, goal, NAV_STEER_MAX_CORNERS + 1);
    if (st != NAV_OK)
        return st;
    const nav_path_result *r = &s->path;
    uint32_t nc = r->ncorners < STEER_PATH_CORNERS ? r->ncorners : STEER_PATH_CORNERS;
    uint32_t first = 0;
    while (first < nc && dist_xz(a->pos, &r->corners[3 * first]) < CORNER_EPS)
        first++;
    if ((r->flags & NAV_PATH_TRUNCATED) && nc - first < NAV_STEER_MAX_CORNERS) {
        /* standing on corners (a vertex): the prefix holds too few ahead */
        st = find_path(s, a, in, goal, 0);
        if (st != NAV_OK)
            return st;
        nc = r->ncorners < STEER_PATH_CORNERS ? r->ncorners : STEER_PATH_CORNERS;
        first = 0;
        while (first < nc && dist_xz(a->pos, &r->corners[3 * first]) < CORNER_EPS)
            first++;
    }
    /* output: the next corners A, B, ... The contract promises two or more:
       near the end (or on it) the end is repeated, so corners[1] is always
       there and is where the agent is heading after A (nowhere else). */
    for (uint32_t k = first; k < nc && o->ncorners < NAV_STEER_MAX_CORNERS; k++)
        memcpy(o->corners[o->ncorners++], &r->corners[3 * k], 3 * sizeof(float));
    while (nc > 0 && o->ncorners < 2)
        memcpy(o->corners[o->ncorners++], &r->corners[3 * (nc - 1)], 3 * sizeof(float));
    if (first >= nc) {
        /* standing on the path's end: the goal, unless a budget cut it */
        fr->reached = !(r->flags & (NAV_PATH_TRUNCATED | NAV_PATH_PARTIAL_BUDGET));
        fr->stops = true;
        return NAV_OK;
    }

    /* Is one of the corners ahead the entry of the path's first link? */
    uint32_t stop = nc - 1; /* index of the corner where we must stop */
    bool at_link = false;
    uint32_t link = NAV_NONE;
    float link_start[3] = {0}, link_end[3] = {0};
    if (r->nlinks > 0) {
        link = r->links[0] & ~NAV_LINK_REVERSE;
        if (link < m->nlinks) {
            const nav_link *L = &m->links[link];
            /* from the last corner under the agent: standing on the link's
               start (the game landed it there from a link ending exactly
               where this one starts) is being at it */
            for (uint32_t k = first > 0 ? first - 1 : 0; k < nc && !at_link; k++) {
                const float *c = &r->corners[3 * k];
                if (dist_xz(c, L->start_on) < LINK_MATCH_EPS ||
                    dist_xz(c, L->start) < LINK_MATCH_EPS) {
                    at_link = true;
                    memcpy(link_start, L->start_on, sizeof link_start);
                    memcpy(link_end, L->end_on, sizeof link_end);
                } else if (L->bidirectional && (dist_xz(c, L->end_on) < LINK_MATCH_EPS ||
                                                dist_xz(c, L->end) < LINK_MATCH_EPS)) {
                    at_link = true;
                    memcpy(link_start, L->end_on, sizeof link_start);
                    memcpy(link_end, L->start_on, sizeof link_end);
                }
                if (at_link)
                    stop = k;
            }
        }
    }
    /* A path cut short by the buffers or by max_nodes does not end at the
       goal: keep full speed (the next tick searches again from farther on)
       and never call its end "arrived". */
    bool goal_known = at_link || !(r->flags & (NAV_PATH_TRUNCATED | NAV_PATH_PARTIAL_BUDGET));
    fr->stops = goal_known;

    /* Path distance to the stop corner. */
    float d = 0.0f;
    const float *prev = a->pos;
    for (uint32_t k = first; k <= stop; k++) {
        d += dist_xz(prev, &r->corners[3 * k]);
        prev = &r->corners[3 * k];
    }
    fr->dist_end = d;

    const float *A = &r->corners[3 * first];
    float tol = pr->arrive_tolerance;
    if (at_link && pr->traverse_links && in->max_speed > 0.0f) {
        /* taken when reached now (as below) or within this tick's travel;
           max_speed 0 never moves, so such an agent waits as below */
        const nav_link *L = &m->links[link];
        float reach = L->radius > tol ? L->radius : tol;
        if ((stop <= first && d <= reach) || d <= in->max_speed * pr->dt) {
            fr->cross = true;
            return NAV_OK;
        }
    }
    if (at_link && stop <= first) { /* (stop < first: standing on its start, d = 0) */
        const nav_link *L = &m->links[link];
        float reach = L->radius > tol ? L->radius : tol;
        if (d <= reach) {
            o->has_action = true;
            o->action.link = link;
            o->action.kind = L->kind;
            memcpy(o->action.start, link_start, sizeof link_start);
            memcpy(o->action.end, link_end, sizeof link_end);
            memcpy(o->action.land, link_end, sizeof link_end); /* steer_place_landings */
            o->action.nlinks = 1;
            return NAV_OK; /* wait at the link: the game performs it */
        }
    }

    /* Aim at A; once A is nearly reached, at B if it is in sight, so the
       agent turns smoothly instead of touching A and turning on the spot. */
    const float *aim = A;
    float dA = dist_xz(a->pos, A);
    if (first < stop) {
        float turn = 2.0f * in->radius;
        float step = 2.0f * in->max_speed * pr->dt;
        if (step > turn)
            turn = step;
        if (dA < turn) {
            bool hit;
            const float *B = &r->corners[3 * (first + 1)];
            steer_raycast(s, a->poly, a->pos, B, NULL, &hit);
            if (!hit)
                aim = B;
        }
    }
    float dx = aim[0] - a->pos[0], dz = aim[2] - a->pos[2];
    float len = len2f(dx, dz);
    if (len < 1e-6f)
        return NAV_OK;

    float speed = in->max_speed;
    if (goal_known) {
        if (slow || at_link)
            speed = stopping_speed(in->max_speed, in->max_accel, d, R, pr->dt, slow ? tol : 0.0f);
        else if (d / pr->dt < speed)
            speed = d / pr->dt; /* seek: never overshoot the goal in one tick */
        if (!at_link && d <= tol)
            fr->reached = true;
    }
    dv[0] = dx / len * speed;
    dv[1] = dz / len * speed;
    return NAV_OK;
}

/* Agent i touches (rim gap <= STEER_CONTACT) a blocker of its goal in the
   half-plane ahead of dv; any_order: also one farther from the goal (the
   straight distance misorders agents round a corner) and within
   STEER_STUCK_GAP, for the case where avoidance already found no way on
   (its sampled velocities keep a margin). */
static bool touches_blocker(const nav_steer *s, uint32_t i, const float dv[2], bool any_order) {
    const steer_agent *a = &s->agents[i];
    if (!a->has_goal)
        return false;
    for (uint32_t n = 0; n < a->nnei; n++) {
        uint32_t j = a->nei[n];
        const steer_agent *b = &s->agents[j];
        if (any_order ? !(b->blocks && same_goal(a, b)) : !steer_blocks(s, i, j))
            continue;
        float dx = b->pos[0] - a->pos[0], dz = b->pos[2] - a->pos[2];
        /* stuck: anything in the half-plane ahead; else within the cone */
        float contact = any_order ? STEER_STUCK_GAP : STEER_JAM_GAP;
        float d = len2f(dx, dz), cosmin = any_order ? 0.0f : STEER_BLOCK_COS;
        if (d - s->in[i].radius - s->in[j].radius <= contact &&
            dx * dv[0] + dz * dv[1] >= cosmin * d * len2f(dv[0], dv[1]))
            return true;
    }
    return false;
}

/*
 * Crowd arrival of a moving `arrive` agent i (dv from follow): a settled
 * agent of the same goal ahead of it (within STEER_BLOCK_COS of dv) ends its
 * way where they would touch, so it brakes to stop there, as it would at
 * the goal, and is `arrived` once there. A settled agent stops where it is.
 */
static void crowd_arrive(nav_steer *s, uint32_t i, float dv[2], follow_result *fr, bool *arrived) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    if (a->settled) {
        dv[0] = dv[1] = 0.0f;
        fr->dist_end = 0.0f;
        fr->stops = true;
        *arrived = true;
        return;
    }
    float sp = len2f(dv[0], dv[1]);
    if (!a->has_goal || sp < 1e-6f)
        return;
    /* Slow already and touching a blocker ahead: the way is blocked, stop
       here rather than shuffle along the group's edge (milling). */
    if (len2f(in->vel[0], in->vel[2]) <= STEER_JAM_SPEED * in->max_speed &&
        touches_blocker(s, i, dv, false)) {
        dv[0] = dv[1] = 0.0f;
        fr->dist_end = 0.0f;
        fr->stops = true;
        *arrived = true;
        return;
    }
    float block = INFINITY;
    for (uint32_t n = 0; n < a->nnei; n++) {
        uint32_t j = a->nei[n];
        const steer_agent *b = &s->agents[j];
        if (!steer_blocks(s, i, j))
            continue;
        float dx = b->pos[0] - a->pos[0], dz = b->pos[2] - a->pos[2], d = len2f(dx, dz);
        if (dx * dv[0] + dz * dv[1] < STEER_BLOCK_COS * d * sp)
            continue;
        float gap = d - in->radius - s->in[j].radius;
        if (gap < block)
            block = gap;
    }
    if (!(block < fr->dist_end))
        return;
    if (block < 0.0f)
        block = 0.0f;
    const nav_steer_params *pr = s->params;
    float v = stopping_speed(in->max_speed, in->max_accel, block, in->arrive_radius, pr->dt,
                             pr->arrive_tolerance);
    dv[0] *= v / sp;
    dv[1] *= v / sp;
    fr->dist_end = block;
    fr->stops = true;
    if (block <= pr->arrive_tolerance)
        *arrived = true;
}

/*
 * Flee from T: among directions fanned around "away from T", the one whose
 * free run on the mesh (raycast, up to a look-ahead) ends farthest from T.
 * Directions into a nearby wall have a short run and lose, so the agent is
 * never pinned against a wall while a direction with room exists. Returns
 * false (dv = 0) when no direction gains distance: blocked.
 */
static bool flee(nav_steer *s, uint32_t i, const float T[3], float dv[2]) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    dv[0] = dv[1] = 0.0f;
    float ax = a->pos[0] - T[0], az = a->pos[2] - T[2];
    float cur = len2f(ax, az);
    float base;
    if (cur > 1e-4f) {
        base = atan2f(az, ax);
    } else {
        uint64_t h = agent_hash(in, s->params->seed);
        base = (float)((double)(h >> 11) * (6.283185307179586 / 9007199254740992.0));
    }
    float L = in->max_speed * 1.0f;
    if (L < 4.0f * in->radius)
        L = 4.0f * in->radius;
    float best = cur + 1e-3f, bdx = 0.0f, bdz = 0.0f;
    bool found = false;
    for (int k = 0; k < FLEE_DIRS; k++) {
        /* 0, +30, -30, +60, ... degrees: straight away first */
        int j = (k + 1) / 2;
        float ang = base + (k % 2 ? 1.0f : -1.0f) * (float)j * (6.2831853f / FLEE_DIRS);
        float cx = cosf(ang), cz = sinf(ang);
        float end[3] = {a->pos[0] + cx * L, a->pos[1], a->pos[2] + cz * L};
        bool hit;
        float t = steer_raycast(s, a->poly, a->pos, end, NULL, &hit);
        float ex = a->pos[0] + cx * L * t - T[0], ez = a->pos[2] + cz * L * t - T[2];
        float score = len2f(ex, ez);
        if (score > best) {
            best = score;
            bdx = cx;
            bdz = cz;
            found = true;
        }
        if (k == 0 && !hit)
            break; /* the straight way is clear for the whole look-ahead */
    }
    if (!found)
        return false;
    dv[0] = bdx * in->max_speed;
    dv[1] = bdz * in->max_speed;
    return true;
}

/* Wander: keep the current heading with a hashed jitter; turn along a wall
   seen ahead instead of walking into it. */
static void wander(nav_steer *s, uint32_t i, float dv[2]) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    uint64_t h = agent_hash(in, s->params->seed);
    float vx = in->vel[0], vz = in->vel[2];
    float heading;
    if (len2f(vx, vz) > 1e-3f)
        heading = atan2f(vz, vx);
    else
        heading = (float)((double)(h >> 40) * (6.283185307179586 / 16777216.0));
    float jitter = ((float)(h & 0xFFFF) / 65535.0f * 2.0f - 1.0f) * WANDER_JITTER;
    float ang = heading + jitter;
    float cx = cosf(ang), cz = sinf(ang);
    float L = in->max_speed * 1.0f;
    if (L < 2.0f * in->radius)
        L = 2.0f * in->radius;
    float end[3] = {a->pos[0] + cx * L, a->pos[1], a->pos[2] + cz * L};
    float n[3];
    bool hit;
    steer_raycast(s, a->poly, a->pos, end, n, &hit);
    if (hit) {
        /* slide: drop the part into the wall, lean away from it */
        float dn = cx * n[0] + cz * n[2];
        float tx = cx - dn * n[0], tz = cz - dn * n[2];
        if (len2f(tx, tz) < 0.2f) {
            float sgn = (h >> 20) & 1 ? 1.0f : -1.0f;
            tx = -n[2] * sgn;
            tz = n[0] * sgn;
        }
        cx = tx + 0.5f * n[0];
        cz = tz + 0.5f * n[2];
        float l = len2f(cx, cz);
        if (l > 1e-6f) {
            cx /= l;
            cz /= l;
        }
    }
    dv[0] = cx * in->max_speed;
    dv[1] = cz * in->max_speed;
}

/* The closest reachable hiding spot behind an obstacle relative to T. */
static bool hide_spot(nav_steer *s, uint32_t i, const float T[3], float spot[3]) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    const nav_steer_params *pr = s->params;
    uint64_t exclude = pr->filter ? pr->filter->exclude_mask : 0;
    float best = INFINITY;
    bool found = false;
    for (uint32_t k = 0; k < s->nobstacles; k++) {
        const nav_obstacle *ob = &s->obstacles[k];
        float ox = ob->pos[0] - T[0], oz = ob->pos[2] - T[2];
        float l = len2f(ox, oz);
        if (l < 1e-4f)
            continue;
        float off = ob->radius + in->radius + HIDE_CLEARANCE;
        float p[3] = {ob->pos[0] + ox / l * off, ob->pos[1], ob->pos[2] + oz / l * off};
        float ext[3] = {off, pr->extents[1], off};
        float q[3];
        uint32_t qp;
        if (steer_snap(s->mesh, p, ext, exclude, &qp, q) != NAV_OK)
            continue;
        /* still hidden after snapping: the segment T -> q crosses the circle */
        float sx = q[0] - T[0], sz = q[2] - T[2];
        float s2 = sx * sx + sz * sz;
        float t = s2 > 0.0f ? (ox * sx + oz * sz) / s2 : 0.0f;
        t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        float cx = T[0] + sx * t - ob->pos[0], cz = T[2] + sz * t - ob->pos[2];
        if (len2f(cx, cz) >= ob->radius)
            continue;
        if (!nav_mesh_reachable(s->mesh, a->poly, qp))
            continue;
        float d = dist_xz(a->pos, q);
        if (d < best) {
            best = d;
            memcpy(spot, q, 3 * sizeof(float));
            found = true;
        }
    }
    return found;
}

static float dist3f(const float *a, const float *b) {
    float dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

/* Walks from cur (on *poly) toward c, `len` metres at most in xz, along the
   surface (sliding on walls, never off the mesh). */
static void walk_toward(nav_steer *s, float cur[3], uint32_t *poly, const float c[3], float len) {
    float seg = dist_xz(cur, c);
    float t[3] = {c[0], c[1], c[2]};
    if (seg > len) {
        float k = seg > 0.0f ? len / seg : 0.0f;
        t[0] = cur[0] + (c[0] - cur[0]) * k;
        t[1] = cur[1];
        t[2] = cur[2] + (c[2] - cur[2]) * k;
    }
    float out[3];
    uint32_t op;
    if (nav_move_along_surface(s->mesh, *poly, cur, t, s->params->filter, out, &op) == NAV_OK) {
        memcpy(cur, out, sizeof out);
        *poly = op;
    }
}

/*
 * traverse_links: agent i moves across the off-mesh link(s) ahead within the
 * tick (nav_steer_action says the rule): along the whole path to goal, each
 * walked segment and each link's 3-D length taken from max_speed * dt; the
 * first link is completed whatever is left, a later one only when its start
 * is reached with budget left. The action is the first link's. The agent
 * ends `crossed` (npos: where the walk ended; no push moves it: budget 0)
 * with the velocity of its walk after the last landing. *reached: the walk
 * ended on the goal of a whole path.
 */
static void cross_links(nav_steer *s, uint32_t i, const float goal[3], nav_agent_out *o,
                        bool *reached) {
    const nav_agent_in *in = &s->in[i];
    steer_agent *a = &s->agents[i];
    const nav_mesh *m = s->mesh;
    const float dt = s->params->dt, tol = s->params->arrive_tolerance;
    const float budget = in->max_speed * dt;
    float cur[3], land[3];
    memcpy(cur, a->pos, sizeof cur);
    memcpy(land, a->pos, sizeof land);
    uint32_t poly = a->poly;
    uint32_t taken = 0;
    *reached = false;
    /* the whole path: the walk may go past the prefix follow() pulled */
    if (find_path(s, a, in, goal, 0) == NAV_OK) {
        const nav_path_result *r = &s->path;
        uint32_t nc = r->ncorners < STEER_PATH_CORNERS ? r->ncorners : STEER_PATH_CORNERS;
        uint32_t li = 0, k = 0;
        float left = budget;
        while (k < nc && (left > 0.0f || taken == 0)) {
            const float *c = &r->corners[3 * k];
            /* is corner k the departure of the path's next link, k + 1 its arrival? */
            const nav_link *L = NULL;
            bool rev = false;
            if (li < r->nlinks && k + 1 < nc && (r->links[li] & ~NAV_LINK_REVERSE) < m->nlinks) {
                const nav_link *l = &m->links[r->links[li] & ~NAV_LINK_REVERSE];
                const float *nx = &r->corners[3 * (k + 1)];
                if (dist3f(c, l->start_on) < LINK_MATCH_EPS &&
                    dist3f(nx, l->end_on) < LINK_MATCH_EPS && l->end_poly != NAV_NONE) {
                    L = l;
                } else if (l->bidirectional && dist3f(c, l->end_on) < LINK_MATCH_EPS &&
                           dist3f(nx, l->start_on) < LINK_MATCH_EPS && l->start_poly != NAV_NONE) {
                    L = l;
                    rev = true;
                }
            }
            float seg = dist_xz(cur, c);
            if (!L) {
                walk_toward(s, cur, &poly, c, left);
                if (seg > left) {
                    left = 0.0f;
                    break;
                }
                left -= seg;
                k++;
                continue;
            }
            float reach = L->radius > tol ? L->radius : tol;
            if (!(seg <= left || (taken == 0 && seg <= reach))) {
                walk_toward(s, cur, &poly, c, left); /* short of it: the budget ran out */
                left = 0.0f;
                break;
            }
            const float *from = rev ? L->end_on : L->start_on, *to = rev ? L->start_on : L->end_on;
            if (taken == 0) {
                o->has_action = true;
                o->action.link = r->links[li] & ~NAV_LINK_REVERSE;
                o->action.kind = L->kind;
                memcpy(o->action.start, from, sizeof o->action.start);
                memcpy(o->action.end, to, sizeof o->action.end);
            }
            taken++;
            /* the walk to its start (within reach: what the game would
               bridge), then the link itself, both counted as travelled */
            left -= seg + dist3f(from, to);
            memcpy(cur, to, sizeof cur);
            memcpy(land, to, sizeof land);
            poly = rev ? L->start_poly : L->end_poly;
            li++;
            /* on to the arrival corner, where it stands: when the next link
               starts exactly there, the path holds that point once (a
               repeated corner is dropped), so it is the next departure */
            k++;
        }
        *reached = k >= nc && !(r->flags & (NAV_PATH_TRUNCATED | NAV_PATH_PARTIAL_BUDGET)) &&
                   dist_xz(cur, goal) <= tol;
    }
    memcpy(a->npos, cur, sizeof cur);
    a->npoly = poly;
    a->v[0] = (cur[0] - land[0]) / dt;
    a->v[1] = (cur[2] - land[2]) / dt;
    float sp = len2f(a->v[0], a->v[1]);
    if (sp > in->max_speed) { /* rounding only: the walk is within budget */
        a->v[0] *= in->max_speed / sp;
        a->v[1] *= in->max_speed / sp;
    }
    o->desired_vel[0] = a->v[0];
    o->desired_vel[2] = a->v[1];
    if (taken > 0) {
        o->action.nlinks = taken;
        memcpy(o->action.land, cur, sizeof cur);
        a->crossed = 1;
        a->budget = 0.0f; /* far from where it stood: no separation push */
    } else {
        a->budget = budget; /* no link after all: an ordinary walk within budget */
    }
}

void steer_agent_tick(nav_steer *s, uint32_t i, nav_agent_out *o) {
    const nav_agent_in *in = &s->in[i];
    steer_agent *a = &s->agents[i];
    const nav_steer_params *pr = s->params;
    float dt = pr->dt;
    float dv[2] = {0.0f, 0.0f};
    nav_behavior used = in->behavior;
    bool arrived = false;
    follow_result fr;
    memset(&fr, 0, sizeof fr);
    nav_status st = NAV_OK;
    const float *threat = in->has_threat ? in->threat : in->target;

    switch (in->behavior) {
    case NAV_BEHAVIOR_IDLE:
        break;
    case NAV_BEHAVIOR_SEEK:
    case NAV_BEHAVIOR_ARRIVE: {
        bool slow = in->behavior == NAV_BEHAVIOR_ARRIVE;
        st = follow(s, i, in->target, slow, in->arrive_radius, o, dv, &fr);
        arrived = fr.reached;
        if (slow && st == NAV_OK && !fr.cross)
            crowd_arrive(s, i, dv, &fr, &arrived);
        break;
    }
    case NAV_BEHAVIOR_PURSUE: {
        /* aim where the target will be when we get there (capped look-ahead),
           kept on the mesh by a raycast from the target along its motion */
        float goal[3];
        memcpy(goal, in->target, sizeof goal);
        if (in->has_target_vel && in->max_speed > 0.0f) {
            float t = dist_xz(a->pos, in->target) / in->max_speed;
            if (t > pr->horizon)
                t = pr->horizon;
            uint32_t tp;
            float ton[3];
            if (steer_snap_goal(s, in->target, &tp, ton) == NAV_OK) {
                float pred[3] = {ton[0] + in->target_vel[0] * t, ton[1],
                                 ton[2] + in->target_vel[2] * t};
                float nrm[3];
                bool hit;
                float f = steer_raycast(s, tp, ton, pred, nrm, &hit);
                goal[0] = ton[0] + (pred[0] - ton[0]) * f;
                goal[1] = ton[1];
                goal[2] = ton[2] + (pred[2] - ton[2]) * f;
            }
        }
        st = follow(s, i, goal, false, 0.0f, o, dv, &fr);
        arrived = dist_xz(a->pos, in->target) <= in->radius + pr->arrive_tolerance;
        break;
    }
    case NAV_BEHAVIOR_FLEE:
        flee(s, i, threat, dv);
        break;
    case NAV_BEHAVIOR_EVADE: {
        float T[3];
        memcpy(T, threat, sizeof T);
        if (in->has_target_vel) {
            float t = in->max_speed > 0.0f ? dist_xz(a->pos, T) / in->max_speed : 0.0f;
            if (t > pr->horizon)
                t = pr->horizon;
            T[0] += in->target_vel[0] * t;
            T[2] += in->target_vel[2] * t;
        }
        flee(s, i, T, dv);
        break;
    }
    case NAV_BEHAVIOR_WANDER:
        wander(s, i, dv);
        break;
    case NAV_BEHAVIOR_HIDE: {
        float spot[3];
        if (hide_spot(s, i, threat, spot)) {
            float R = in->arrive_radius > 0.0f ? in->arrive_radius : 1.0f;
            st = follow(s, i, spot, true, R, o, dv, &fr);
            arrived = fr.reached;
        } else {
            used = NAV_BEHAVIOR_FLEE;
            flee(s, i, threat, dv);
        }
        break;
    }
    default:
        break;
    }
    if (st == NAV_E_OFF_MESH) {
        /* the goal is not on the mesh: this agent fails in its slot */
        o->status = NAV_E_OFF_MESH;
        o->error_field = NAV_STEP_FIELD_TARGET;
        a->ok = 0;
        memcpy(o->pos, in->pos, sizeof o->pos);
        memcpy(a->npos, a->pos, sizeof a->npos);
        a->npoly = a->poly;
        return;
    }

    if (fr.cross) {
        cross_links(s, i, fr.goal, o, &arrived);
        a->arrived = arrived;
        o->behavior = used;
        return;
    }

    o->desired_vel[0] = dv[0];
    o->desired_vel[2] = dv[1];

    /* 2. avoid collisions (may override the behaviour) */
    float v[2] = {dv[0], dv[1]};
    float goal_dist = fr.stops ? fr.dist_end : INFINITY;
    /* The behaviour stays the one followed: avoidance only corrects its
       velocity, which `avoiding` reports (the contract's enum has no value
       for it). */
    /* a settled agent holds still: it neither dodges nor drifts (pushes
       from newcomers still separate it) */
    bool holds = a->settled ||
                 (in->behavior == NAV_BEHAVIOR_ARRIVE && arrived && dv[0] == 0.0f && dv[1] == 0.0f);
    if (pr->avoidance && in->max_speed > 0.0f && !holds && steer_avoid(s, i, dv, goal_dist, v))
        o->avoiding = true;
    /* Crowd arrival, the case steer_settle cannot see: still, touching a
       blocker ahead, and avoidance finds no way on (a wall on the other
       side, say). Its way is blocked: it arrives where it stands. */
    /* (wanting to move: not waiting at a link, nor already stopping) */
    if (in->behavior == NAV_BEHAVIOR_ARRIVE && !arrived && !o->has_action &&
        len2f(dv[0], dv[1]) > 1e-6f && len2f(v[0], v[1]) <= STEER_SETTLE_SPEED &&
        len2f(in->vel[0], in->vel[2]) <= STEER_SETTLE_SPEED && touches_blocker(s, i, dv, true)) {
        arrived = true;
        v[0] = v[1] = 0.0f;
    }

    /* limits: |v - v_old| <= max_accel * dt, then |v| <= max_speed */
    float ddx = v[0] - in->vel[0], ddz = v[1] - in->vel[2];
    float dmax = in->max_accel * dt, dl = len2f(ddx, ddz);
    if (dl > dmax) {
        float k = dl > 0.0f ? dmax / dl : 0.0f;
        v[0] = in->vel[0] + ddx * k;
        v[1] = in->vel[2] + ddz * k;
    }
    float sp = len2f(v[0], v[1]);
    if (sp > in->max_speed) {
        float k = sp > 0.0f ? in->max_speed / sp : 0.0f;
        v[0] *= k;
        v[1] *= k;
    }

    /* 1. stay on the mesh: move along the surface, sliding on walls, never
       farther than max_speed * dt (a slide around a concave corner could) */
    a->budget = in->max_speed * dt;
    a->arrived = arrived;
    float target[3] = {a->pos[0] + v[0] * dt, a->pos[1], a->pos[2] + v[1] * dt};
    steer_move_capped(s, i, a->poly, a->pos, target, a->npos, &a->npoly);
    /* The velocity to report is fixed here, before the separation pushes: a
       push is a positional correction (as in DetourCrowd), not motion the
       agent chose, so it never shows in the velocity (the game would feed it
       back as momentum, beyond max_accel). A wall that changed the own move
       (a slide, or a move shortened at a concave corner) is different: the
       velocity actually made along it is reported, so the game never feeds
       a push into the wall back in. That is the one case where the reported
       velocity may differ from the input one by more than max_accel * dt. */
    if (len2f(a->npos[0] - target[0], a->npos[2] - target[2]) > 1e-4f) {
        v[0] = (a->npos[0] - a->pos[0]) / dt;
        v[1] = (a->npos[2] - a->pos[2]) / dt;
        float made = len2f(v[0], v[1]);
        if (made > in->max_speed) { /* rounding only: the move is within budget */
            float k = made > 0.0f ? in->max_speed / made : 0.0f;
            v[0] *= k;
            v[1] *= k;
        }
    }
    a->v[0] = v[0];
    a->v[1] = v[1];
    o->behavior = used;
}

bool steer_within(const nav_steer *s, uint32_t i, const float p[3]) {
    const steer_agent *a = &s->agents[i];
    double dx = (double)p[0] - a->pos[0], dz = (double)p[2] - a->pos[2];
    /* a float coordinate of magnitude c is only known to c * FLT_EPSILON / 2 */
    double slack = 1e-7 + 2.0 * FLT_EPSILON * (fabs((double)a->pos[0]) + fabs((double)a->pos[2]));
    return sqrt(dx * dx + dz * dz) <= (double)a->budget + slack;
}

static bool move_capped(nav_steer *s, uint32_t i, uint32_t from_poly, const float from[3],
                        const float to[3], float out[3], uint32_t *out_poly, bool height) {
    float t[3] = {to[0], to[1], to[2]};
    /* Nearly always the first try fits: a move toward a point within the
       budget ends within it unless the slide wraps around a concave corner. */
    for (int k = 0; k < 4; k++) {
        nav_status st =
            height ? nav_move_along_surface(s->mesh, from_poly, from, t, s->params->filter, out,
                                            out_poly)
                   : nav_move_xz(s->mesh, from_poly, from, t, s->params->filter, out, out_poly);
        if (st == NAV_OK && steer_within(s, i, out))
            return out[0] != from[0] || out[2] != from[2];
        t[0] = from[0] + 0.5f * (t[0] - from[0]);
        t[2] = from[2] + 0.5f * (t[2] - from[2]);
    }
    memcpy(out, from, 3 * sizeof(float));
    *out_poly = from_poly;
    return false;
}

bool steer_move_capped(nav_steer *s, uint32_t i, uint32_t from_poly, const float from[3],
                       const float to[3], float out[3], uint32_t *out_poly) {
    return move_capped(s, i, from_poly, from, to, out, out_poly, true);
}

bool steer_move_capped_xz(nav_steer *s, uint32_t i, uint32_t from_poly, const float from[3],
                          const float to[3], float out[3], uint32_t *out_poly) {
    return move_capped(s, i, from_poly, from, to, out, out_poly, false);
}

void steer_finish(nav_steer *s, nav_agent_out *out) {
    for (uint32_t i = 0; i < s->n; i++) {
        const steer_agent *a = &s->agents[i];
        if (!a->ok)
            continue;
        const nav_agent_in *in = &s->in[i];
        nav_agent_out *o = &out[i];
        /* the velocity of the own move (steer_agent_tick); the position
           includes the separation pushes, each within the speed budget */
        o->vel[0] = a->v[0];
        o->vel[1] = 0.0f;
        o->vel[2] = a->v[1];
        o->arrived = a->arrived && len2f(a->v[0], a->v[1]) <= 0.05f * in->max_speed + 1e-3f;
        memcpy(o->pos, a->npos, sizeof o->pos);
        o->poly = a->npoly;
    }
}
