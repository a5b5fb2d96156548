/*
 * api_step_fast: the step body read straight into nav_agent_in, without a
 * jansson tree (issue 14: for 1,000 agents, jansson's parse was half of the
 * request's time).
 *
 * It reads only the common shape of a step body, exactly as the tree-based
 * decoder would (api_step.c): the top-level keys dt, extents, avoidance,
 * cache, agents, obstacles; an agent's id, position, velocity, radius,
 * max_speed, max_accel, arrive_radius, behavior, target, target_velocity,
 * threat; an obstacle's position, velocity, radius. Any other key (seed,
 * profile, filters, "debug" for the avoidance samples) declines, and the
 * full decoder reads the body. Numbers are converted
 * as jansson converts them (an integer literal as an integer, so "-0" is 0;
 * a real through strtod), then as the decoder does (to float, finite).
 * Anything else (another key, a null, a duplicate key, an escape in a
 * string, a long integer, a number that is not finite as a float, a
 * malformed document, more agents than --max-agents, ...) makes it give up,
 * and the tree-based decoder reads the body instead and words the error:
 * so the answer and every error are the same as without it
 * (tests/check_api_step.c sends bodies both ways and compares the bytes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_step_fast.h"

typedef struct rd {
    const char *p, *end;
    char *ids; /* where agent ids are copied (NUL-terminated) */
    size_t ids_len;
} rd;

static void ws(rd *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool lit(rd *r, char c) {
    ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

/* A string without escapes or control bytes: [*s, *s + *n). */
static bool str(rd *r, const char **s, size_t *n) {
    if (!lit(r, '"'))
        return false;
    const char *b = r->p;
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        /* escapes, control bytes and non-ASCII (jansson checks UTF-8) */
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return false;
        r->p++;
    }
    if (r->p >= r->end)
        return false;
    *s = b;
    *n = (size_t)(r->p - b);
    r->p++;
    return true;
}

/*
 * A JSON number as jansson reads it: an integer literal (at most 15 digits,
 * exact either way) as an integer, anything with a fraction or exponent as
 * strtod reads it. The literal is checked and its digits gathered in one
 * pass; a significand of at most 15 significant digits (below 2^53) and a
 * power of ten up to 22 (exactly a double) then make one IEEE
 * multiplication or division, which rounds correctly, as strtod does
 * (Clinger's fast path). Longer significands and larger powers go through
 * strtod.
 */
static bool num(rd *r, double *out) {
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    ws(r);
    const char *b = r->p, *q = r->p, *end = r->end;
    bool neg = false, real = false, exact = true;
    uint64_t sig = 0;
    int sigd = 0, e10 = 0; /* significant digits so far; the power of ten */
    if (q < end && *q == '-') {
        neg = true;
        q++;
    }
    const char *d0 = q;
    if (q < end && *q == '0') {
        q++;
    } else {
        for (; q < end && *q >= '0' && *q <= '9'; q++) {
            if (++sigd > 15)
                exact = false;
            else
                sig = sig * 10 + (uint64_t)(*q - '0');
        }
    }
    if (q == d0)
        return false;
    size_t ndig = (size_t)(q - d0);
    if (q < end && *q == '.') {
        real = true;
        const char *f = ++q;
        for (; q < end && *q >= '0' && *q <= '9'; q++) {
            if (sigd == 0 && *q == '0') {
                e10--; /* a leading zero: no significant digit yet */
                continue;
            }
            if (++sigd > 15) {
                exact = false;
                continue;
            }
            sig = sig * 10 + (uint64_t)(*q - '0');
            e10--;
        }
        if (q == f)
            return false;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        real = true;
        q++;
        bool eneg = false;
        if (q < end && (*q == '+' || *q == '-'))
            eneg = *q++ == '-';
        const char *f = q;
        int x = 0;
        for (; q < end && *q >= '0' && *q <= '9'; q++)
            if (x <= 400)
                x = x * 10 + (*q - '0');
        if (q == f)
            return false;
        if (x > 400)
            exact = false;
        e10 += eneg ? -x : x;
    }
    if (q < end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E'))
        return false; /* "01" and the like: the tree decoder says what is wrong */
    if (!real) {
        if (ndig > 15)
            return false;
        long long v = (long long)sig; /* "0" and "-0" gathered nothing: 0 */
        *out = (double)(neg ? -v : v);
    } else if (exact && e10 >= -22 && e10 <= 22) {
        double v = (double)sig; /* exact: sig < 10^15 < 2^53 */
        v = e10 < 0 ? v / p10[-e10] : v * p10[e10];
        *out = neg ? -v : v;
    } else {
        char buf[64];
        size_t n = (size_t)(q - b);
        if (n >= sizeof buf)
            return false;
        memcpy(buf, b, n);
        buf[n] = '\0';
        *out = strtod(buf, NULL);
    }
    r->p = q;
    return true;
}

bool api_step_fast_number(const char *s, size_t n, double *out) {
    rd r = {s, s + n, NULL, 0};
    return num(&r, out) && r.p == r.end;
}

/* A number finite as a float, as the decoder takes it. */
static bool fnum(rd *r, float *out) {
    double d;
    if (!num(r, &d))
        return false;
    float f = (float)d;
    if (!isfinite(d) || !isfinite(f))
        return false;
    *out = f;
    return true;
}

static bool vec3(rd *r, float out[3]) {
    if (!lit(r, '['))
        return false;
    for (int k = 0; k < 3; k++)
        if ((k && !lit(r, ',')) || !fnum(r, &out[k]))
            return false;
    return lit(r, ']');
}

static bool boolean(rd *r, bool *out) {
    ws(r);
    if (r->end - r->p >= 4 && memcmp(r->p, "true", 4) == 0) {
        r->p += 4;
        *out = true;
        return true;
    }
    if (r->end - r->p >= 5 && memcmp(r->p, "false", 5) == 0) {
        r->p += 5;
        *out = false;
        return true;
    }
    return false;
}

/* Index of key (n bytes) in names, or -1. strncmp stops at the name's end,
   so no strlen per name and key (11 names, every key of every agent). */
static int key_index(const char *const *names, int count, const char *k, size_t n) {
    for (int i = 0; i < count; i++)
        if (names[i][0] == k[0] && strncmp(names[i], k, n) == 0 && names[i][n] == '\0')
            return i;
    return -1;
}

enum { A_ID, A_POS, A_VEL, A_RAD, A_SPEED, A_ACCEL, A_ARAD, A_BEH, A_TGT, A_TVEL, A_THR, A_N };
static const char *const agent_keys[A_N] = {
    "id",       "position", "velocity",        "radius", "max_speed", "max_accel", "arrive_radius",
    "behavior", "target",   "target_velocity", "threat"};

static bool agent(rd *r, nav_agent_in *a) {
    memset(a, 0, sizeof *a);
    a->radius = (float)STEP_FAST_DEFAULT_RADIUS;
    a->max_speed = (float)STEP_FAST_DEFAULT_MAX_SPEED;
    a->max_accel = (float)STEP_FAST_DEFAULT_MAX_ACCEL;
    a->arrive_radius = (float)STEP_FAST_DEFAULT_ARRIVE_RADIUS;
    if (!lit(r, '{'))
        return false;
    unsigned seen = 0;
    const char *beh = NULL;
    size_t behn = 0;
    bool has_beh = false;
    if (!lit(r, '}')) {
        do {
            const char *k;
            size_t kn;
            if (!str(r, &k, &kn) || !lit(r, ':'))
                return false;
            int i = key_index(agent_keys, A_N, k, kn);
            if (i < 0 || (seen >> i & 1u))
                return false; /* another key, or twice: the tree decoder decides */
            seen |= 1u << i;
            bool ok = false;
            switch (i) {
            case A_ID: {
                const char *s;
                size_t n;
                ok = str(r, &s, &n);
                if (ok) {
                    memcpy(r->ids + r->ids_len, s, n);
                    r->ids[r->ids_len + n] = '\0';
                    a->id = r->ids + r->ids_len;
                    r->ids_len += n + 1;
                }
                break;
            }
            case A_POS:
                ok = vec3(r, a->pos);
                break;
            case A_VEL:
                ok = vec3(r, a->vel);
                break;
            case A_RAD:
                ok = fnum(r, &a->radius);
                break;
            case A_SPEED:
                ok = fnum(r, &a->max_speed);
                break;
            case A_ACCEL:
                ok = fnum(r, &a->max_accel);
                break;
            case A_ARAD:
                ok = fnum(r, &a->arrive_radius);
                break;
            case A_BEH:
                ok = str(r, &beh, &behn);
                has_beh = true;
                break;
            case A_TGT:
                ok = a->has_target = vec3(r, a->target);
                break;
            case A_TVEL:
                ok = a->has_target_vel = vec3(r, a->target_vel);
                break;
            default:
                ok = a->has_threat = vec3(r, a->threat);
                break;
            }
            if (!ok)
                return false;
        } while (lit(r, ','));
        if (!lit(r, '}'))
            return false;
    }
    if (!(seen >> A_POS & 1u))
        return false; /* required: the tree decoder says so */
    a->behavior = a->has_target ? NAV_BEHAVIOR_ARRIVE : NAV_BEHAVIOR_IDLE;
    return !has_beh || nav_behavior_parse(beh, behn, &a->behavior);
}

static bool obstacle(rd *r, nav_obstacle *o) {
    memset(o, 0, sizeof *o);
    if (!lit(r, '{'))
        return false;
    unsigned seen = 0;
    static const char *const keys[3] = {"position", "velocity", "radius"};
    do {
        const char *k;
        size_t kn;
        if (!str(r, &k, &kn) || !lit(r, ':'))
            return false;
        int i = key_index(keys, 3, k, kn);
        if (i < 0 || (seen >> i & 1u))
            return false;
        seen |= 1u << i;
        if (!(i == 0 ? vec3(r, o->pos) : i == 1 ? vec3(r, o->vel) : fnum(r, &o->radius)))
            return false;
    } while (lit(r, ','));
    return lit(r, '}') && (seen & 5u) == 5u; /* position and radius are required */
}

enum { T_DT, T_EXT, T_AVOID, T_CACHE, T_AGENTS, T_OBS, T_N };
static const char *const top_keys[T_N] = {"dt",    "extents", "avoidance",
                                          "cache", "agents",  "obstacles"};

bool api_step_fast_decode(const char *body, size_t len, const api_step_fast_out *o,
                          nav_steer_params *p, bool *use_cache, uint32_t *nagents,
                          uint32_t *nobstacles) {
    rd r = {body, body + len, o->ids, 0};
    unsigned seen = 0;
    uint32_t n = 0, nobs = 0;
    if (!body || len == 0 || !lit(&r, '{'))
        return false;
    do {
        const char *k;
        size_t kn;
        if (!str(&r, &k, &kn) || !lit(&r, ':'))
            return false;
        int i = key_index(top_keys, T_N, k, kn);
        if (i < 0 || (seen >> i & 1u))
            return false;
        seen |= 1u << i;
        bool ok = false;
        switch (i) {
        case T_DT:
            ok = fnum(&r, &p->dt);
            break;
        case T_EXT:
            ok = vec3(&r, p->extents);
            break;
        case T_AVOID:
            ok = boolean(&r, &p->avoidance);
            break;
        case T_CACHE:
            ok = boolean(&r, use_cache);
            break;
        case T_AGENTS:
            if (!lit(&r, '['))
                return false;
            if (lit(&r, ']')) {
                ok = true;
                break;
            }
            do {
                if (n >= o->max_agents || !agent(&r, &o->agents[n]))
                    return false;
                n++;
            } while (lit(&r, ','));
            ok = lit(&r, ']');
            break;
        default:
            if (!lit(&r, '['))
                return false;
            if (lit(&r, ']')) {
                ok = true;
                break;
            }
            do {
                if (nobs >= o->max_obstacles || !obstacle(&r, &o->obstacles[nobs]))
                    return false;
                nobs++;
            } while (lit(&r, ','));
            ok = lit(&r, ']');
            break;
        }
        if (!ok)
            return false;
    } while (lit(&r, ','));
    if (!lit(&r, '}'))
        return false;
    ws(&r);
    /* dt and agents are required; nothing may follow the document */
    if (r.p != r.end || !(seen >> T_DT & 1u) || !(seen >> T_AGENTS & 1u))
        return false;
    *nagents = n;
    *nobstacles = nobs;
    return true;
}
