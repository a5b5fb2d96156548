/*
 * nav_steer_avoid: local avoidance and overlap separation.
 *
 * Avoidance is a sampled velocity-obstacle search in the spirit of
 * DetourCrowd's adaptive sampling: candidate velocities on two rings (six
 * directions each, aligned with the desired velocity) plus the desired
 * velocity and rest, then three refinements of six samples around the best
 * one at halving radii (32 samples, against DetourCrowd "medium"'s 22; the
 * former 8-direction pattern's 42 bought no fewer overlaps in the crowd
 * bench, while two refinements instead of three let crowds jitter after
 * settling, tests/check_nav_crowd.c). Each candidate is scored by
 *   W_DES * |v - desired| + W_CUR * |v - current|      (both / max_speed)
 *   + W_SIDE * passing-on-the-left share                (breaks symmetry: in a
 *     head-on meeting both agents keep right, so they never mirror each other)
 *   + W_TOI / (0.1 + tmin / horizon)                    (tmin: first contact
 *     with a neighbour (reciprocal: each agent takes half, relative velocity
 *     2v - v_self - v_other, as RVO), or an obstacle (full responsibility))
 *   + W_OVL * closing speed into neighbours already overlapped / max_speed
 *     (every candidate that presses on someone has tmin 0; this term tells
 *     them apart, so an agent squeezed between two others, or against one
 *     at a wall, picks the velocity that presses least instead of keeping
 *     its desired one: separation pushes are positional corrections the
 *     agent's velocity never sees, so a jam must be resolved here). Only an
 *     agent moving at JAM_PRESS_SPEED of its max_speed or more pays it: the
 *     least pressing velocity is mostly rest, so with the term everywhere a
 *     packed jam froze (crowd bench: 53 of 1,000 agents within 1 m of
 *     their target at 30 s, 91 with this rule, DetourCrowd medium's 327;
 *     W_OVL was 2.5 for everyone), while a slow agent
 *     pressing on toward its goal, as DetourCrowd's do, lets it drain; a
 *     fast one still must not run through bodies (without the term at all,
 *     tests/check_nav_steer.c's corridor crossing overlapped by 18 cm).
 *     Nor does a fast agent wedged in a jam, overlapping JAM_WEDGED or more
 *     of its neighbours: the least pressing velocity is then mostly a
 *     braking one, and a packed jam drained slowly (crowd bench, with the
 *     next rule: 92 / 156 / 274 within 1 m at 6 / 15 / 30 s with the term,
 *     130 / 256 / 438 without; tests/check_nav_steer.c
 *     wedged_fast_agent_keeps_its_way); one or two overlaps (the meetings of
 *     check_nav_steer's corridor crossing) keep it.
 *   + W_WALL * (1 - t_wall / wall_horizon)              (the centre crossing a
 *     wall segment of the local boundary within about two ticks: meshes are
 *     eroded by the agent radius, so the centre, not the rim, must stay in).
 * When the desired velocity meets nobody within the horizon it is kept as is
 * (no sampling): most agents in a crowd pay only the neighbour search.
 * Final approach: an agent that stops within FINAL_APPROACH arrive radii of
 * path does not avoid at all (the others avoid it, and separation keeps
 * bodies apart). Avoiding there made it give way to every passer-by next to
 * its goal, so in a jam it was shoved off and queued again: crowd bench
 * 130 / 256 / 438 agents within 1 m of their target at 6 / 15 / 30 s with
 * this rule, 96 / 189 / 325 without (the jam rule above on in both).
 * Deadlock breaker: an agent at NUDGE_SPEED of max_speed or slower whose
 * best candidate is slower still, while its desired velocity would touch
 * agents standing still (and no moving agent nor obstacle), takes its
 * desired direction at NUDGE_SPEED instead: separation pushes the standing
 * ones aside. Without it, an agent touching a standing one in its way (an
 * arrived agent on the spot next to its own, a ring of arrived agents with
 * gaps narrower than itself) found every velocity that does not touch it
 * dearer than rest, and stood there for good.
 *
 * Separation then pushes still-overlapping agents apart (half the overlap
 * each; all of it against an obstacle, which is never pushed), in up to 8 Jacobi
 * passes over the new positions, each push moved along the surface and cut to
 * the speed budget the agent has left: its whole displacement in the tick,
 * own move plus pushes, stays within max_speed * dt. A pass recomputes only
 * agents that moved or have a neighbour that moved in the last one (the
 * others' pushes would repeat exactly), and heights are looked up once,
 * after the last pass.
 */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nav/nav_internal.h"
#include "nav/nav_steer_internal.h"

/* DetourCrowd's is 2.0: with the jam rule of W_OVL, 3.5 took the crowd
   bench from 46 / 67 / 91 to 56 / 103 / 173 agents within 1 m of their
   target at 6 / 15 / 30 s for the same pair-ticks overlapping > 5 cm
   (4.0, tried once, failed check_nav_steer's corridor crossing) */
#define W_DES 3.5f
#define W_CUR 0.75f
#define W_SIDE 0.75f
#define W_TOI 2.5f
#define W_WALL 10.0f
#define W_OVL 1.5f
#define JAM_PRESS_SPEED 0.6f /* of max_speed: slower pays no W_OVL */
#define JAM_WEDGED 3         /* overlapped neighbours: a wedged agent pays no W_OVL */
#define FINAL_APPROACH 2.0f  /* arrive radii of path before the stop: no avoidance */
#define NUDGE_SPEED 0.2f     /* of max_speed: a stuck agent's push through standing ones */
#define NUDGE_SOON 0.5f      /* s: contact this soon is touching, for the nudge */
#define RING_DIVS 6
#define SEP_PASSES 8
#define STILL_SPEED 0.05f /* m/s: a neighbour slower than this stands still */
#define REFINE_DIVS 6
#define REFINE_LEVELS 3

/* cos, sin of k * 30 degrees: the sampling directions, fixed so that no
   trigonometry runs per sample and results do not depend on libm. */
static const float unit12[12][2] = {
    {1.000000000f, 0.000000000f},  {0.866025404f, 0.500000000f},   {0.500000000f, 0.866025404f},
    {0.000000000f, 1.000000000f},  {-0.500000000f, 0.866025404f},  {-0.866025404f, 0.500000000f},
    {-1.000000000f, 0.000000000f}, {-0.866025404f, -0.500000000f}, {-0.500000000f, -0.866025404f},
    {0.000000000f, -1.000000000f}, {0.500000000f, -0.866025404f},  {0.866025404f, -0.500000000f}};

#define UNIT unit12
_Static_assert(2 * RING_DIVS == 12, "the ring table has 2 * RING_DIVS directions");
_Static_assert(12 % REFINE_DIVS == 0, "refinement directions are table entries");

typedef struct avoid_ctx {
    float px, pz; /* agent position */
    float vx, vz; /* agent current velocity */
    float vmax;
    float horizon;
    float wall_horizon;
    float goal_dist; /* the agent stops after this distance (INFINITY: never) */
    uint32_t n;      /* neighbours: agents then obstacles */
    float rx[STEER_MAX_NEI + STEER_MAX_OBS]; /* relative position */
    float rz[STEER_MAX_NEI + STEER_MAX_OBS];
    float ox[STEER_MAX_NEI + STEER_MAX_OBS]; /* velocity term subtracted from the candidate */
    float oz[STEER_MAX_NEI + STEER_MAX_OBS];
    float k[STEER_MAX_NEI + STEER_MAX_OBS];       /* 2 for agents (reciprocal), 1 for obstacles */
    float rr[STEER_MAX_NEI + STEER_MAX_OBS];      /* sum of radii */
    float c0[STEER_MAX_NEI + STEER_MAX_OBS];      /* |relative position|^2 - rr^2 */
    uint8_t still[STEER_MAX_NEI + STEER_MAX_OBS]; /* the neighbour stands still */
    float inv_len[STEER_MAX_NEI + STEER_MAX_OBS]; /* 1 / |relative position| (0 if none) */
    uint32_t nagents;
    float inv_vmax;    /* 1 / vmax */
    float w_ovl;       /* W_OVL, or 0 for a slow agent (JAM_PRESS_SPEED) */
    uint8_t any_still; /* some still[] is set */
    const float *segs;
    uint32_t nsegs;
} avoid_ctx;

/* First time the relative motion (vab) brings two circles (centre offset p,
   radii sum r) into contact; horizon when never. Overlapping circles: 0 when
   approaching, horizon when separating (moving apart is always welcome). */
static float toi_circle(float px, float pz, float vx, float vz, float r, float horizon) {
    float c = px * px + pz * pz - r * r;
    float b = vx * px + vz * pz;
    if (c < 0.0f)
        return b > 0.0f ? 0.0f : horizon;
    float a = vx * vx + vz * vz;
    if (a < 1e-12f || b <= 0.0f)
        return horizon;
    float disc = b * b - a * c;
    if (disc < 0.0f)
        return horizon;
    float t = (b - sqrtf(disc)) / a;
    return t < horizon ? t : horizon;
}

/* A contact with a standing neighbour predicted after the agent has stopped
   at its goal never happens: the time the candidate needs to cover the
   remaining goal distance (moving neighbours still count for the horizon). */
static float stop_time(const avoid_ctx *c, float vx, float vz) {
    float sp = sqrtf(vx * vx + vz * vz);
    if (!isfinite(c->goal_dist) || sp < 1e-6f)
        return INFINITY;
    return c->goal_dist / sp;
}

/* Earliest predicted contact with a neighbour or obstacle for candidate v
   (horizon when none). */
static float first_contact(const avoid_ctx *c, float vx, float vz) {
    float tmin = c->horizon;
    float tlim = stop_time(c, vx, vz);
    for (uint32_t j = 0; j < c->n; j++) {
        float ax = c->k[j] * vx - c->ox[j], az = c->k[j] * vz - c->oz[j];
        float t = toi_circle(c->rx[j], c->rz[j], ax, az, c->rr[j], c->horizon);
        if (t < tmin && (!c->still[j] || t < tlim))
            tmin = t;
    }
    return tmin;
}

/* The search's best so far, and the agent's debug record (NULL: none). */
typedef struct avoid_pick {
    float bx, bz, best;
    nav_avoid_record *rec;
} avoid_pick;

/* Candidates scored together: up to four at once (the SSE lanes). */
#define AVOID_BATCH 4

#if defined(__SSE2__)
/*
 * The penalties of four candidates at once (the scalar penalty() below, for
 * builds without SSE, is the same computation one candidate at a time), lane
 * by lane the very same float operations in the same order: SSE arithmetic
 * and square roots are IEEE single precision like the scalar ones, and no
 * FMA is formed, so each lane has the bits of the scalar code. Branches
 * become masks, and a skipped addition becomes an addition of +0, which
 * changes no sum of non-negative terms. pen[] gets the four penalties; false
 * (pen[] untouched) when no lane can beat best, DetourCrowd's early out made
 * exact: every term after the first two is >= 0 and the time-of-impact term
 * is at least W_TOI / 1.1 (tmin <= horizon), and float addition is
 * monotone, so once the first two plus that least term reach best in every
 * lane, no full penalty would be below best, and only such a one is kept.
 */
static bool penalty4(const avoid_ctx *c, const float vx4[AVOID_BATCH], const float vz4[AVOID_BATCH],
                     float dvx, float dvz, float best, float pen[AVOID_BATCH]) {
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    const __m128 inv = _mm_set1_ps(c->inv_vmax);
    __m128 vx = _mm_loadu_ps(vx4), vz = _mm_loadu_ps(vz4);
    __m128 ddx = _mm_sub_ps(vx, _mm_set1_ps(dvx)), ddz = _mm_sub_ps(vz, _mm_set1_ps(dvz));
    __m128 cdx = _mm_sub_ps(vx, _mm_set1_ps(c->vx)), cdz = _mm_sub_ps(vz, _mm_set1_ps(c->vz));
    __m128 p = _mm_add_ps(
        _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(W_DES),
                              _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(ddx, ddx), _mm_mul_ps(ddz, ddz)))),
                   inv),
        _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(W_CUR),
                              _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(cdx, cdx), _mm_mul_ps(cdz, cdz)))),
                   inv));
    __m128 low = _mm_add_ps(p, _mm_set1_ps(W_TOI / (0.1f + 1.0f)));
    if (_mm_movemask_ps(_mm_cmplt_ps(low, _mm_set1_ps(best))) == 0)
        return false; /* low >= best in every lane (best may be INFINITY: never) */
    __m128 tmin = _mm_set1_ps(c->horizon), side = zero, ovl = zero, nside = zero;
    __m128 tlim = _mm_set1_ps(INFINITY);
    if (c->any_still && isfinite(c->goal_dist)) {
        /* stop_time(): goal_dist / |v|, INFINITY below 1e-6 m/s */
        __m128 sp = _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(vx, vx), _mm_mul_ps(vz, vz)));
        __m128 t = _mm_div_ps(_mm_set1_ps(c->goal_dist), sp);
        __m128 slow = _mm_cmplt_ps(sp, _mm_set1_ps(1e-6f));
        tlim = _mm_or_ps(_mm_and_ps(slow, tlim), _mm_andnot_ps(slow, t));
    }
    for (uint32_t j = 0; j < c->n; j++) {
        __m128 k = _mm_set1_ps(c->k[j]), rx = _mm_set1_ps(c->rx[j]), rz = _mm_set1_ps(c->rz[j]);
        __m128 ax = _mm_sub_ps(_mm_mul_ps(k, vx), _mm_set1_ps(c->ox[j]));
        __m128 az = _mm_sub_ps(_mm_mul_ps(k, vz), _mm_set1_ps(c->oz[j]));
        __m128 bb = _mm_add_ps(_mm_mul_ps(ax, rx), _mm_mul_ps(az, rz));
        __m128 app = _mm_cmpgt_ps(bb, zero); /* approaching (else: skipped) */
        if (_mm_movemask_ps(app) == 0)
            continue;
        __m128 il = _mm_set1_ps(c->inv_len[j]);
        if (j < c->nagents) {
            __m128 cr =
                _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(_mm_mul_ps(rx, vz), _mm_mul_ps(rz, vx)), il), inv);
            /* cr > 0 ? (cr < 1 ? cr : 1) : 0, added where approaching */
            __m128 term = _mm_and_ps(_mm_cmpgt_ps(cr, zero), _mm_min_ps(cr, one));
            side = _mm_add_ps(side, _mm_and_ps(app, term));
            nside = _mm_add_ps(nside, _mm_and_ps(app, one));
        }
        if (c->c0[j] < 0.0f) {
            /* overlapping and closing in */
            tmin = _mm_andnot_ps(app, tmin);
            ovl = _mm_add_ps(ovl, _mm_and_ps(app, _mm_mul_ps(bb, il)));
            continue;
        }
        __m128 lim = tmin;
        if (c->still[j]) {
            __m128 lt = _mm_cmplt_ps(tlim, tmin);
            lim = _mm_or_ps(_mm_and_ps(lt, tlim), _mm_andnot_ps(lt, tmin));
        }
        __m128 aa = _mm_add_ps(_mm_mul_ps(ax, ax), _mm_mul_ps(az, az));
        __m128 disc = _mm_sub_ps(_mm_mul_ps(bb, bb), _mm_mul_ps(aa, _mm_set1_ps(c->c0[j])));
        __m128 e = _mm_sub_ps(bb, _mm_mul_ps(lim, aa));
        /* contact earlier than lim: approaching, !(disc < 0), and
           !(e > 0 && e * e >= disc) */
        __m128 later = _mm_and_ps(_mm_cmpgt_ps(e, zero), _mm_cmpge_ps(_mm_mul_ps(e, e), disc));
        __m128 upd = _mm_andnot_ps(_mm_or_ps(_mm_cmplt_ps(disc, zero), later), app);
        if (_mm_movemask_ps(upd) == 0)
            continue;
        __m128 t = _mm_div_ps(_mm_sub_ps(bb, _mm_sqrt_ps(disc)), aa);
        tmin = _mm_or_ps(_mm_and_ps(upd, t), _mm_andnot_ps(upd, tmin));
    }
    /* pen += W_SIDE * side / nside where nside > 0 */
    __m128 sterm = _mm_div_ps(_mm_mul_ps(_mm_set1_ps(W_SIDE), side), nside);
    __m128 has = _mm_cmpgt_ps(nside, zero);
    p = _mm_or_ps(_mm_and_ps(has, _mm_add_ps(p, sterm)), _mm_andnot_ps(has, p));
    __m128 toi =
        _mm_div_ps(_mm_set1_ps(W_TOI),
                   _mm_add_ps(_mm_set1_ps(0.1f), _mm_div_ps(tmin, _mm_set1_ps(c->horizon))));
    p = _mm_add_ps(p, _mm_add_ps(toi, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(c->w_ovl), ovl), inv)));
    const __m128 wh = _mm_set1_ps(c->wall_horizon);
    for (uint32_t w = 0; w < c->nsegs; w++) {
        /* toi_wall(): the crossing time, where it is below wall_horizon */
        const float *sg = &c->segs[4 * w];
        float ax = sg[0] - c->px, az = sg[1] - c->pz;
        float ex = sg[2] - sg[0], ez = sg[3] - sg[1];
        float nx = ez, nz = -ex;
        __m128 ok = _mm_cmplt_ps(
            _mm_add_ps(_mm_mul_ps(vx, _mm_set1_ps(nx)), _mm_mul_ps(vz, _mm_set1_ps(nz))), zero);
        __m128 den = _mm_sub_ps(_mm_mul_ps(vx, _mm_set1_ps(ez)), _mm_mul_ps(vz, _mm_set1_ps(ex)));
        __m128 absden = _mm_andnot_ps(_mm_set1_ps(-0.0f), den);
        ok = _mm_andnot_ps(_mm_cmplt_ps(absden, _mm_set1_ps(1e-12f)), ok);
        if (_mm_movemask_ps(ok) == 0)
            continue;
        __m128 t = _mm_div_ps(_mm_set1_ps(ax * ez - az * ex), den);
        __m128 u = _mm_div_ps(
            _mm_sub_ps(_mm_mul_ps(_mm_set1_ps(ax), vz), _mm_mul_ps(_mm_set1_ps(az), vx)), den);
        ok = _mm_andnot_ps(_mm_or_ps(_mm_cmplt_ps(u, _mm_set1_ps(-1e-4f)),
                                     _mm_cmpgt_ps(u, _mm_set1_ps(1.0f + 1e-4f))),
                           ok);
        /* t < 0: 0 when above -1e-3, never otherwise */
        __m128 neg = _mm_cmplt_ps(t, zero);
        ok = _mm_andnot_ps(_mm_andnot_ps(_mm_cmpgt_ps(t, _mm_set1_ps(-1e-3f)), neg), ok);
        t = _mm_andnot_ps(neg, t);
        ok = _mm_and_ps(ok, _mm_cmplt_ps(t, wh));
        __m128 add = _mm_mul_ps(_mm_set1_ps(W_WALL), _mm_sub_ps(one, _mm_div_ps(t, wh)));
        p = _mm_or_ps(_mm_and_ps(ok, _mm_add_ps(p, add)), _mm_andnot_ps(ok, p));
    }
    _mm_storeu_ps(pen, p);
    return true;
}
#else
/* When the centre moving at (vx, vz) crosses wall segment s (stored in the
   polygon's order, interior on its inward-normal side); inf when never. */
static float toi_wall(const avoid_ctx *c, const float *s, float vx, float vz) {
    float ax = s[0] - c->px, az = s[1] - c->pz;
    float ex = s[2] - s[0], ez = s[3] - s[1];
    float nx = ez, nz = -ex; /* inward normal (see nav_internal.h winding) */
    if (vx * nx + vz * nz >= 0.0f)
        return INFINITY; /* moving away from or along the wall */
    float den = vx * ez - vz * ex;
    if (fabsf(den) < 1e-12f)
        return INFINITY;
    float t = (ax * ez - az * ex) / den;
    float u = (ax * vz - az * vx) / den;
    if (u < -1e-4f || u > 1.0f + 1e-4f)
        return INFINITY;
    return t < 0.0f ? (t > -1e-3f ? 0.0f : INFINITY) : t;
}

/* The candidate's penalty, or, when it cannot beat `best`, a value >= best
   (DetourCrowd's early out, exact here): every term after the first two is
   >= 0 and the time-of-impact term is at least W_TOI / 1.1 (tmin <=
   horizon), and float addition is monotone, so once the first two plus that
   least term reach best the full sum would too; the caller only ever keeps
   a penalty below best, so the choice is the same, bit for bit. */
static float penalty(const avoid_ctx *c, float vx, float vz, float dvx, float dvz, float best) {
    float inv = c->inv_vmax;
    float pen = W_DES * sqrtf((vx - dvx) * (vx - dvx) + (vz - dvz) * (vz - dvz)) * inv +
                W_CUR * sqrtf((vx - c->vx) * (vx - c->vx) + (vz - c->vz) * (vz - c->vz)) * inv;
    if (pen + W_TOI / (0.1f + 1.0f) >= best)
        return best;
    float tmin = c->horizon, side = 0.0f, ovl = 0.0f;
    /* only a standing neighbour reads the stop time */
    float tlim = c->any_still ? stop_time(c, vx, vz) : INFINITY;
    uint32_t nside = 0;
    for (uint32_t j = 0; j < c->n; j++) {
        /* toi_circle inlined, testing "earlier than tmin" before any sqrt */
        float ax = c->k[j] * vx - c->ox[j], az = c->k[j] * vz - c->oz[j];
        float bb = ax * c->rx[j] + az * c->rz[j];
        if (bb <= 0.0f)
            continue; /* not approaching: no contact, no side preference */
        if (j < c->nagents) {
            /* approaching: prefer the neighbour on our left (we keep right) */
            float cr = (c->rx[j] * vz - c->rz[j] * vx) * c->inv_len[j] * inv;
            side += cr > 0.0f ? (cr < 1.0f ? cr : 1.0f) : 0.0f;
            nside++;
        }
        float lim = c->still[j] && tlim < tmin ? tlim : tmin;
        if (c->c0[j] < 0.0f) {
            tmin = 0.0f; /* overlapping and closing in */
            ovl += bb * c->inv_len[j];
            continue;
        }
        float aa = ax * ax + az * az;
        float disc = bb * bb - aa * c->c0[j];
        if (disc < 0.0f)
            continue;            /* passes by */
        float e = bb - lim * aa; /* t < lim  <=>  e < sqrt(disc) */
        if (e > 0.0f && e * e >= disc)
            continue;
        tmin = (bb - sqrtf(disc)) / aa;
    }
    if (nside > 0)
        pen += W_SIDE * side / (float)nside;
    pen += W_TOI / (0.1f + tmin / c->horizon) + c->w_ovl * ovl * inv;
    for (uint32_t k = 0; k < c->nsegs; k++) {
        float t = toi_wall(c, &c->segs[4 * k], vx, vz);
        if (t < c->wall_horizon)
            pen += W_WALL * (1.0f - t / c->wall_horizon);
    }
    return pen;
}

/* Without SSE: penalty() lane by lane (a lane that returns best or more
   is not kept, as the best only falls within the batch). */
static bool penalty4(const avoid_ctx *c, const float vx4[AVOID_BATCH], const float vz4[AVOID_BATCH],
                     float dvx, float dvz, float best, float pen[AVOID_BATCH]) {
    for (int l = 0; l < AVOID_BATCH; l++)
        pen[l] = penalty(c, vx4[l], vz4[l], dvx, dvz, best);
    return true;
}
#endif

/* Scores candidates (cx[m], cz[m]), m < n, in batches of AVOID_BATCH and
   keeps them in order, as one by one: the same penalties and the same
   strict comparison, so the same choice (a batch skipped by
   penalty4's early out holds no candidate below the best it started with,
   let alone below a later, lower one). Recording scores every candidate. */
static void try_samples(const avoid_ctx *c, avoid_pick *k, const float *cx, const float *cz,
                        uint32_t n, const float dv[2]) {
    for (uint32_t m0 = 0; m0 < n; m0 += AVOID_BATCH) {
        uint32_t nb = n - m0 < AVOID_BATCH ? n - m0 : AVOID_BATCH;
        float bx[AVOID_BATCH], bz[AVOID_BATCH], pen[AVOID_BATCH];
        for (uint32_t l = 0; l < AVOID_BATCH; l++) {
            /* a short batch repeats its last candidate (scored, ignored) */
            uint32_t m = m0 + (l < nb ? l : nb - 1);
            bx[l] = cx[m];
            bz[l] = cz[m];
        }
        if (!penalty4(c, bx, bz, dv[0], dv[1], k->rec ? INFINITY : k->best, pen))
            continue;
        for (uint32_t l = 0; l < nb; l++) {
            if (k->rec && k->rec->nsamples < NAV_STEER_AVOID_SAMPLES) {
                float *sm = k->rec->samples[k->rec->nsamples];
                sm[0] = bx[l];
                sm[1] = 0.0f;
                sm[2] = bz[l];
                sm[3] = pen[l];
                if (pen[l] < k->best)
                    k->rec->chosen_index = k->rec->nsamples;
                k->rec->nsamples++;
            }
            if (pen[l] < k->best) {
                k->best = pen[l];
                k->bx = bx[l];
                k->bz = bz[l];
            }
        }
    }
}

/* Squared xz distance from (px, pz) to segment a-b. */
static float seg_dist2(float px, float pz, const float *a, const float *b) {
    float ex = b[0] - a[0], ez = b[2] - a[2];
    float l2 = ex * ex + ez * ez;
    float t = l2 > 0.0f ? ((px - a[0]) * ex + (pz - a[2]) * ez) / l2 : 0.0f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    float dx = a[0] + ex * t - px, dz = a[2] + ez * t - pz;
    return dx * dx + dz * dz;
}

/* The local boundary: wall edges within `range` of the agent, found by
   walking polygon adjacency from the agent's polygon (nearest kept). */
static void collect_boundary(nav_steer *s, uint32_t i, float range) {
    const nav_mesh *m = s->mesh;
    const steer_agent *a = &s->agents[i];
    uint64_t ex = s->params->filter ? s->params->filter->exclude_mask : 0;
    float r2 = range * range;
    float d2s[STEER_MAX_SEGS];
    uint32_t visit[STEER_BOUNDARY_POLYS], nvisit = 0, head = 0;
    visit[nvisit++] = a->poly;
    s->nsegs = 0;
    while (head < nvisit) {
        uint32_t p = visit[head++];
        uint32_t n = nav_poly_nverts(m, p), s0 = m->poly_start[p];
        for (uint32_t e = 0; e < n; e++) {
            /* nav_poly_vert(m, p, e) and (e + 1), without its k % n */
            const float *va = nav_vert(m, m->poly_verts[s0 + e]);
            const float *vb = nav_vert(m, m->poly_verts[s0 + (e + 1 < n ? e + 1 : 0)]);
            float d2 = seg_dist2(a->pos[0], a->pos[2], va, vb);
            if (d2 > r2)
                continue;
            uint32_t nei = m->poly_nei[s0 + e];
            if (nei != NAV_NONE && !((ex >> m->areas[nei]) & 1u)) {
                bool seen = false;
                for (uint32_t k = 0; k < nvisit && !seen; k++)
                    seen = visit[k] == nei;
                if (!seen && nvisit < STEER_BOUNDARY_POLYS)
                    visit[nvisit++] = nei;
                continue;
            }
            /* keep the STEER_MAX_SEGS nearest walls, sorted by distance */
            uint32_t k = s->nsegs;
            if (k == STEER_MAX_SEGS) {
                if (d2 >= d2s[k - 1])
                    continue;
                k--;
            } else {
                s->nsegs++;
            }
            while (k > 0 && d2s[k - 1] > d2) {
                d2s[k] = d2s[k - 1];
                memcpy(&s->segs[4 * k], &s->segs[4 * (k - 1)], 4 * sizeof(float));
                k--;
            }
            d2s[k] = d2;
            s->segs[4 * k] = va[0];
            s->segs[4 * k + 1] = va[2];
            s->segs[4 * k + 2] = vb[0];
            s->segs[4 * k + 3] = vb[2];
        }
    }
}

/* May a stuck agent nudge at (ux, uz)? It must touch, within NUDGE_SOON,
   an agent that stands still, and no moving agent nor obstacle: a standing
   agent is pushed aside by separation, a moving one would be run through. */
static bool nudge_ok(const avoid_ctx *c, float ux, float uz) {
    bool touch = false;
    for (uint32_t j = 0; j < c->n; j++) {
        float t = toi_circle(c->rx[j], c->rz[j], c->k[j] * ux - c->ox[j], c->k[j] * uz - c->oz[j],
                             c->rr[j], c->horizon);
        if (t >= NUDGE_SOON)
            continue;
        if (j >= c->nagents || !c->still[j])
            return false;
        touch = true;
    }
    return touch;
}

bool steer_avoid(nav_steer *s, uint32_t i, const float dv[2], float goal_dist, float v[2]) {
    const nav_agent_in *in = &s->in[i];
    const steer_agent *a = &s->agents[i];
    v[0] = dv[0];
    v[1] = dv[1];
    if (a->nnei == 0 && a->nobs == 0)
        return false;
    if (goal_dist < FINAL_APPROACH * in->arrive_radius)
        return false; /* final approach (see the top of the file) */

    avoid_ctx c;
    c.px = a->pos[0];
    c.pz = a->pos[2];
    c.vx = in->vel[0];
    c.vz = in->vel[2];
    c.vmax = in->max_speed;
    c.horizon = s->params->horizon;
    c.wall_horizon = 2.0f * s->params->dt;
    c.goal_dist = goal_dist;
    c.n = 0;
    for (uint32_t k = 0; k < a->nnei; k++) {
        uint32_t j = a->nei[k];
        /* j stops against i (crowd arrival): i keeps its way to the goal */
        if (steer_blocks(s, j, i))
            continue;
        c.rx[c.n] = s->agents[j].pos[0] - c.px;
        c.rz[c.n] = s->agents[j].pos[2] - c.pz;
        c.ox[c.n] = c.vx + s->in[j].vel[0];
        c.oz[c.n] = c.vz + s->in[j].vel[2];
        c.k[c.n] = 2.0f;
        c.rr[c.n] = in->radius + s->in[j].radius;
        c.c0[c.n] = c.rx[c.n] * c.rx[c.n] + c.rz[c.n] * c.rz[c.n] - c.rr[c.n] * c.rr[c.n];
        const float *vj = s->in[j].vel;
        c.still[c.n] = vj[0] * vj[0] + vj[2] * vj[2] < STILL_SPEED * STILL_SPEED;
        float l = sqrtf(c.rx[c.n] * c.rx[c.n] + c.rz[c.n] * c.rz[c.n]);
        c.inv_len[c.n] = l > 1e-6f ? 1.0f / l : 0.0f;
        c.n++;
    }
    c.nagents = c.n;
    for (uint32_t k = 0; k < a->nobs; k++) {
        const nav_obstacle *o = &s->obstacles[a->obs[k]];
        c.rx[c.n] = o->pos[0] - c.px;
        c.rz[c.n] = o->pos[2] - c.pz;
        c.ox[c.n] = o->vel[0];
        c.oz[c.n] = o->vel[2];
        c.k[c.n] = 1.0f;
        c.rr[c.n] = in->radius + o->radius;
        c.c0[c.n] = c.rx[c.n] * c.rx[c.n] + c.rz[c.n] * c.rz[c.n] - c.rr[c.n] * c.rr[c.n];
        c.still[c.n] = o->vel[0] * o->vel[0] + o->vel[2] * o->vel[2] < STILL_SPEED * STILL_SPEED;
        float l = sqrtf(c.rx[c.n] * c.rx[c.n] + c.rz[c.n] * c.rz[c.n]);
        c.inv_len[c.n] = l > 1e-6f ? 1.0f / l : 0.0f;
        c.n++;
    }
    c.segs = s->segs;
    c.nsegs = 0;
    c.inv_vmax = 1.0f / c.vmax;
    uint32_t overlapped = 0;
    for (uint32_t k = 0; k < c.nagents; k++)
        overlapped += c.c0[k] < 0.0f;
    c.w_ovl = c.vx * c.vx + c.vz * c.vz < JAM_PRESS_SPEED * JAM_PRESS_SPEED * c.vmax * c.vmax ||
                      overlapped >= JAM_WEDGED
                  ? 0.0f
                  : W_OVL;
    c.any_still = 0;
    for (uint32_t k = 0; k < c.n; k++)
        c.any_still |= c.still[k];

    /* Nobody in the way of the desired velocity: keep it. */
    float tmin = first_contact(&c, dv[0], dv[1]);
    if (tmin >= c.horizon)
        return false;

    collect_boundary(s, i, in->radius + c.vmax * c.wall_horizon + 0.1f);
    c.nsegs = s->nsegs;

    /* Orientation of the sampling pattern: the desired, else the current
       velocity, else +x; the pattern is the unit table rotated by (ux, uz). */
    float ux = 1.0f, uz = 0.0f;
    float ld = sqrtf(dv[0] * dv[0] + dv[1] * dv[1]), lc = sqrtf(c.vx * c.vx + c.vz * c.vz);
    if (ld > 1e-4f) {
        ux = dv[0] / ld;
        uz = dv[1] / ld;
    } else if (lc > 1e-4f) {
        ux = c.vx / lc;
        uz = c.vz / lc;
    }

    avoid_pick k = {dv[0], dv[1], INFINITY,
                    s->params->avoid_debug ? &s->params->avoid_debug[i] : NULL};
    /* the desired velocity, rest, and two rings (half and full speed; the
       outer one offset by half a step), in this order */
    float cx[2 + 2 * RING_DIVS], cz[2 + 2 * RING_DIVS];
    uint32_t nc = 0;
    cx[nc] = dv[0];
    cz[nc++] = dv[1];
    cx[nc] = 0.0f;
    cz[nc++] = 0.0f;
    for (int ring = 1; ring <= 2; ring++) {
        float rad = c.vmax * 0.5f * (float)ring;
        for (int d = 0; d < RING_DIVS; d++) {
            const float *u = UNIT[2 * d + (ring - 1)];
            cx[nc] = (u[0] * ux - u[1] * uz) * rad;
            cz[nc++] = (u[0] * uz + u[1] * ux) * rad;
        }
    }
    try_samples(&c, &k, cx, cz, nc, dv);
    /* refinements around the best so far at halving radii */
    float rad = c.vmax * 0.25f;
    for (int level = 0; level < REFINE_LEVELS; level++, rad *= 0.5f) {
        float cx0 = k.bx, cz0 = k.bz;
        nc = 0;
        for (int d = 0; d < REFINE_DIVS; d++) {
            const float *u = UNIT[d * (2 * RING_DIVS / REFINE_DIVS)];
            float x = cx0 + (u[0] * ux - u[1] * uz) * rad;
            float z = cz0 + (u[0] * uz + u[1] * ux) * rad;
            if (x * x + z * z > c.vmax * c.vmax * 1.0001f)
                continue;
            cx[nc] = x;
            cz[nc++] = z;
        }
        try_samples(&c, &k, cx, cz, nc, dv);
    }
    float bx = k.bx, bz = k.bz;
    if (k.rec) {
        k.rec->chosen[0] = bx;
        k.rec->chosen[1] = 0.0f;
        k.rec->chosen[2] = bz;
    }
    /* stuck against agents standing in the way: nudge through them */
    /* (1.01: an agent nudged last tick reports NUDGE_SPEED, give or take rounding) */
    if (ld > 1e-4f &&
        c.vx * c.vx + c.vz * c.vz <= 1.0201f * NUDGE_SPEED * NUDGE_SPEED * c.vmax * c.vmax &&
        bx * bx + bz * bz < NUDGE_SPEED * NUDGE_SPEED * c.vmax * c.vmax) {
        float nx = dv[0] / ld * NUDGE_SPEED * c.vmax, nz = dv[1] / ld * NUDGE_SPEED * c.vmax;
        if (nudge_ok(&c, nx, nz)) {
            bx = nx;
            bz = nz;
        }
    }
    v[0] = bx;
    v[1] = bz;
    float ddx = bx - dv[0], ddz = bz - dv[1];
    return sqrtf(ddx * ddx + ddz * ddz) > NAV_STEER_AVOID_EPS * c.vmax;
}

/* Largest share a in [0, 1] of push (px, pz) such that the displacement
   (ox, oz) + a * push from the tick-start position stays within budget b:
   the root of |o + a p|^2 = b^2 (0 when o already uses the whole budget). */
static float push_share(float ox, float oz, float px, float pz, float b) {
    double qa = (double)px * px + (double)pz * pz;
    double qb = 2.0 * ((double)ox * px + (double)oz * pz);
    double qc = (double)ox * ox + (double)oz * oz - (double)b * b;
    if (qa <= 0.0 || qc > 0.0)
        return 0.0f;
    double disc = qb * qb - 4.0 * qa * qc; /* >= 0: qc <= 0 */
    double r = (-qb + sqrt(disc)) / (2.0 * qa);
    return r >= 1.0 ? 1.0f : (r <= 0.0 ? 0.0f : (float)r);
}

/* Agent i's push must be computed again in this pass: the first pass, or
   it or one of its neighbours moved in the last one. Otherwise its push is
   the last pass's, which either was zero or moved nothing, and would do the
   same again (the positions it reads did not change): skipping it is exact. */
static bool separate_dirty(const nav_steer *s, uint32_t i, int pass) {
    if (pass == 0 || s->moved[i])
        return true;
    const steer_agent *a = &s->agents[i];
    for (uint32_t k = 0; k < a->nnei; k++)
        if (s->moved[a->nei[k]])
            return true;
    return false;
}

/* A separation pass, first half: the push of agents [from, to) from the
   positions the last pass left (lanes: every agent reads, none writes, the
   positions). */
static void sep_push_phase(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    const int pass = *(const int *)ctx;
    const float dt = s->params->dt;
    for (uint32_t i = from; i < to; i++) {
        const steer_agent *a = &s->agents[i];
        float px = 0.0f, pz = 0.0f;
        s->dirty[i] = a->ok && separate_dirty(s, i, pass);
        if (s->dirty[i]) {
            for (uint32_t k = 0; k < a->nnei; k++) {
                uint32_t j = a->nei[k];
                const steer_agent *b = &s->agents[j];
                if (!b->ok)
                    continue;
                float dx = a->npos[0] - b->npos[0], dz = a->npos[2] - b->npos[2];
                float d2 = dx * dx + dz * dz;
                float r = s->in[i].radius + s->in[j].radius;
                /* clearly apart, without the sqrt (most neighbours): d2 above
                   r^2 by more than float rounding of r * r * 1.0001f can
                   take back, so sqrtf(d2) > r, which the test below skips */
                if (d2 > r * r * 1.0001f)
                    continue;
                float d = sqrtf(d2);
                if (d >= r)
                    continue;
                if (d < 1e-6f) {
                    /* coincident: split along x by index, deterministically */
                    px += (i < j ? -1.0f : 1.0f) * 0.5f * r;
                    continue;
                }
                float w = 0.5f * (r - d) / d;
                px += dx * w;
                pz += dz * w;
            }
            for (uint32_t k = 0; k < a->nobs; k++) {
                const nav_obstacle *o = &s->obstacles[a->obs[k]];
                float ox = o->pos[0] + o->vel[0] * dt, oz = o->pos[2] + o->vel[2] * dt;
                float dx = a->npos[0] - ox, dz = a->npos[2] - oz;
                float d = sqrtf(dx * dx + dz * dz);
                float r = s->in[i].radius + o->radius;
                if (d >= r || d < 1e-6f)
                    continue;
                float w = (r - d) / d;
                px += dx * w;
                pz += dz * w;
            }
        }
        s->push[2 * i] = px;
        s->push[2 * i + 1] = pz;
    }
}

/* Second half: each push only takes what the agent's speed budget leaves
   after its own move (max_speed * dt for the whole displacement of the
   tick): an agent with max_speed 0 is never moved, and an overlap nobody
   can afford to undo stays (the contract asks for no overlap only when
   avoidable). A push against the agent's motion frees budget. */
static void sep_apply_phase(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    (void)ctx;
    for (uint32_t i = from; i < to; i++) {
        steer_agent *a = &s->agents[i];
        float px = s->push[2 * i], pz = s->push[2 * i + 1];
        s->moved[i] = 0;
        if (!s->dirty[i] || (px == 0.0f && pz == 0.0f))
            continue;
        float share = push_share(a->npos[0] - a->pos[0], a->npos[2] - a->pos[2], px, pz, a->budget);
        if (share <= 0.0f)
            continue;
        float t[3] = {a->npos[0] + px * share, a->npos[1], a->npos[2] + pz * share};
        float np[3];
        uint32_t npoly;
        /* the height is looked up once, after the last pass */
        if (steer_move_capped_xz(s, i, a->npoly, a->npos, t, np, &npoly)) {
            memcpy(a->npos, np, sizeof np);
            a->npoly = npoly;
            s->moved[i] = 1;
            s->pushed[i] = 1;
        }
    }
}

/* The surface height where the pushes ended: exactly what each pass's full
   move would have given for its last position (a failed lookup keeps the
   agent where its own move left it). */
static void sep_height_phase(nav_steer *s, uint32_t from, uint32_t to, void *ctx) {
    (void)ctx;
    for (uint32_t i = from; i < to; i++) {
        steer_agent *a = &s->agents[i];
        float y;
        if (s->pushed[i] &&
            nav_mesh_height(s->mesh, a->npoly, a->npos[0], a->npos[2], &y) == NAV_OK)
            a->npos[1] = y;
    }
}

void steer_separate(nav_steer *s) {
    memset(s->moved, 0, s->n);
    memset(s->pushed, 0, s->n);
    for (int pass = 0; pass < SEP_PASSES; pass++) {
        steer_parallel(s, sep_push_phase, &pass);
        steer_parallel(s, sep_apply_phase, NULL);
        bool moved = false;
        for (uint32_t i = 0; i < s->n && !moved; i++)
            moved = s->moved[i] != 0;
        if (!moved)
            break;
    }
    steer_parallel(s, sep_height_phase, NULL);
}

void steer_clear_landings(nav_steer *s, const nav_agent_out *out) {
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->agents[i].ok || !out[i].has_action)
            continue;
        /* where it lands: the link's end, or where a crossing ended */
        const float *L = s->agents[i].crossed ? s->agents[i].npos : out[i].action.end;
        for (uint32_t j = 0; j < s->n; j++) {
            steer_agent *b = &s->agents[j];
            if (j == i || !b->ok || fabsf(b->npos[1] - L[1]) > STEER_FLOOR_DY)
                continue;
            float need = s->in[i].radius + s->in[j].radius;
            float dx = b->npos[0] - L[0], dz = b->npos[2] - L[2];
            float d = sqrtf(dx * dx + dz * dz);
            if (d >= need)
                continue;
            float ux = 1.0f, uz = 0.0f; /* on the spot: aside along +x */
            if (d > 1e-6f) {
                ux = dx / d;
                uz = dz / d;
            }
            float px = ux * (need - d), pz = uz * (need - d);
            float share =
                push_share(b->npos[0] - b->pos[0], b->npos[2] - b->pos[2], px, pz, b->budget);
            if (share <= 0.0f)
                continue;
            float t[3] = {b->npos[0] + px * share, b->npos[1], b->npos[2] + pz * share};
            float np[3];
            uint32_t npoly;
            if (steer_move_capped(s, j, b->npoly, b->npos, t, np, &npoly)) {
                memcpy(b->npos, np, sizeof np);
                b->npoly = npoly;
            }
        }
    }
}

/* The largest number of occupants a landing spot's search considers: those
   overlapping its search disc. More (a packed crowd) keep the first ones in
   index order; a spot found free of them is still checked against all. */
#define LAND_NEAR 32
#define LAND_RINGS 8     /* fallback samples: rings out to the bound ... */
#define LAND_DIRS 16     /* ... of this many directions each */
#define LAND_SLACK 1e-4f /* overlap tolerated by "free" (float rounding) */

static float dist_xz2(const float *a, const float *b) {
    float dx = b[0] - a[0], dz = b[2] - a[2];
    return sqrtf(dx * dx + dz * dz);
}

/* Does a body of radius ri at p overlap agent j's at q (same floor)? */
static bool land_hits(const float p[3], float ri, const float q[3], float rj) {
    if (fabsf(q[1] - p[1]) > STEER_FLOOR_DY)
        return false;
    float dx = q[0] - p[0], dz = q[2] - p[2];
    float need = ri + rj - LAND_SLACK;
    return dx * dx + dz * dz < need * need;
}

/* Where lander i would stand at p: overlapping nobody? Everyone is seen
   where it is now (npos: where it ended, a crossed lander placed before i
   where it landed; one after i not at all: it will be placed round i), and
   a waiting lander placed before i also where the game will land it (its
   `land`). */
static bool land_free(const nav_steer *s, const nav_agent_out *out, uint32_t i, const float p[3]) {
    float ri = s->in[i].radius;
    for (uint32_t j = 0; j < s->n; j++) {
        const steer_agent *b = &s->agents[j];
        /* (a crossed lander after i is placed after it, round it) */
        if (j == i || !b->ok || (j > i && b->crossed))
            continue;
        if (land_hits(p, ri, b->npos, s->in[j].radius))
            return false;
        if (j < i && out[j].has_action && !b->crossed &&
            land_hits(p, ri, out[j].action.land, s->in[j].radius))
            return false;
    }
    return true;
}

/* Candidate c (xz; y ignored) of a landing at spot (on poly): reached along
   the surface from the spot without a wall in the way (the move ends on c),
   on the same floor and free? Then *best / best_d take it when nearer. */
static void land_try(nav_steer *s, const nav_agent_out *out, uint32_t i, uint32_t poly,
                     const float spot[3], float cx, float cz, float bound, float best[4],
                     float *best_d) {
    float d = sqrtf((cx - spot[0]) * (cx - spot[0]) + (cz - spot[2]) * (cz - spot[2]));
    if (!(d <= bound) || d >= *best_d)
        return;
    float t[3] = {cx, spot[1], cz}, o[3];
    uint32_t op;
    if (nav_move_along_surface(s->mesh, poly, spot, t, s->params->filter, o, &op) != NAV_OK)
        return;
    if (fabsf(o[0] - cx) > 1e-3f || fabsf(o[2] - cz) > 1e-3f ||
        fabsf(o[1] - spot[1]) > STEER_FLOOR_DY || !land_free(s, out, i, o))
        return;
    memcpy(best, o, 3 * sizeof(float));
    memcpy(&best[3], &op, sizeof op);
    *best_d = d;
}

/*
 * The nearest free landing spot for lander i near spot (on poly), into
 * at / *at_poly; false when the spot is free already or no free point is
 * within the bound (at untouched). In the plane, the nearest point outside
 * a union of discs is the spot pushed straight out of one disc, or a point
 * where two discs' rims cross: those are tried first, exactly; rings of
 * samples cover what the mesh's edges cut off.
 */
static bool land_spot(nav_steer *s, const nav_agent_out *out, uint32_t i, uint32_t poly,
                      const float spot[3], float at[3], uint32_t *at_poly) {
    if (land_free(s, out, i, spot))
        return false;
    float ri = s->in[i].radius;
    /* the occupants: agents whose disc (grown by ri) covers the spot */
    uint32_t near[LAND_NEAR], nn = 0;
    float rmax = 0.0f;
    for (uint32_t j = 0; j < s->n && nn < LAND_NEAR; j++) {
        const steer_agent *b = &s->agents[j];
        if (j == i || !b->ok || fabsf(b->npos[1] - spot[1]) > STEER_FLOOR_DY)
            continue;
        float need = ri + s->in[j].radius;
        if (dist_xz2(b->npos, spot) < need) {
            near[nn++] = j;
            if (s->in[j].radius > rmax)
                rmax = s->in[j].radius;
        }
    }
    /* far enough to step off any single occupant standing on the spot
       (the pushed-out candidates sit LAND_SLACK beyond the rims) */
    float bound = ri + rmax + 2.0f * LAND_SLACK;
    float best[4];
    float best_d = INFINITY;
    for (uint32_t a = 0; a < nn; a++) {
        const float *pa = s->agents[near[a]].npos;
        float ra = ri + s->in[near[a]].radius + LAND_SLACK;
        float dx = spot[0] - pa[0], dz = spot[2] - pa[2], d = sqrtf(dx * dx + dz * dz);
        if (d < 1e-6f) {
            dx = 1.0f; /* on its centre: out along +x (the rings try the rest) */
            dz = 0.0f;
            d = 1.0f;
        }
        land_try(s, out, i, poly, spot, pa[0] + dx / d * ra, pa[2] + dz / d * ra, bound, best,
                 &best_d);
        for (uint32_t b = a + 1; b < nn; b++) {
            const float *pb = s->agents[near[b]].npos;
            float rb = ri + s->in[near[b]].radius + LAND_SLACK;
            float ex = pb[0] - pa[0], ez = pb[2] - pa[2], e = sqrtf(ex * ex + ez * ez);
            if (e < 1e-6f || e > ra + rb || e < fabsf(ra - rb))
                continue;
            float along = (ra * ra - rb * rb + e * e) / (2.0f * e);
            float h2 = ra * ra - along * along, h = h2 > 0.0f ? sqrtf(h2) : 0.0f;
            float mx = pa[0] + ex / e * along, mz = pa[2] + ez / e * along;
            land_try(s, out, i, poly, spot, mx - ez / e * h, mz + ex / e * h, bound, best, &best_d);
            land_try(s, out, i, poly, spot, mx + ez / e * h, mz - ex / e * h, bound, best, &best_d);
        }
    }
    for (int k = 1; k <= LAND_RINGS && !(best_d < INFINITY); k++) {
        float rr = bound * (float)k / LAND_RINGS;
        for (int d = 0; d < LAND_DIRS; d++) {
            float ang = (float)d * (6.2831853f / LAND_DIRS);
            land_try(s, out, i, poly, spot, spot[0] + rr * cosf(ang), spot[2] + rr * sinf(ang),
                     bound, best, &best_d);
        }
    }
    if (!(best_d < INFINITY))
        return false;
    memcpy(at, best, 3 * sizeof(float));
    memcpy(at_poly, &best[3], sizeof *at_poly);
    return true;
}

void steer_place_landings(nav_steer *s, nav_agent_out *out) {
    for (uint32_t i = 0; i < s->n; i++) {
        steer_agent *a = &s->agents[i];
        if (!a->ok || !out[i].has_action)
            continue;
        float spot[3];
        uint32_t poly;
        if (a->crossed) {
            memcpy(spot, a->npos, sizeof spot);
            poly = a->npoly;
        } else {
            const nav_link *L = &s->mesh->links[out[i].action.link];
            memcpy(spot, out[i].action.end, sizeof spot);
            /* the end of the link as taken (two-way links either way) */
            poly = memcmp(spot, L->end_on, sizeof spot) == 0 ? L->end_poly : L->start_poly;
            if (poly == NAV_NONE)
                continue;
        }
        float p[3];
        uint32_t pp;
        if (land_spot(s, out, i, poly, spot, p, &pp)) {
            memcpy(spot, p, sizeof spot);
            poly = pp;
        }
        memcpy(out[i].action.land, spot, sizeof spot);
        if (a->crossed) {
            memcpy(a->npos, spot, sizeof spot);
            a->npoly = poly;
        }
    }
}
