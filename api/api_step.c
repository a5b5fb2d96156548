/*
 * api_step: POST /v1/navmeshes/{name}/step, the stateless steering tick.
 *
 * Thin: decode the agents and obstacles (every field checked and named as
 * the client wrote it, "agents[3].position[1] is not a finite number"),
 * call nav_step, encode one slot per agent in request order. An agent that
 * is off the mesh (or whose target is) gets {"id", "error"} in its slot and
 * the others are answered. Range checks (dt in (0, 1], radius > 0, ...) are
 * nav_step_validate's, whose message already names the field.
 *
 * Each worker thread owns its steering scratch (nav_steer sized for
 * --max-agents and the agent arrays), allocated on its first step request
 * and freed when the thread exits; paths use the thread's query scratch and
 * the process's path cache (api_query.h). A tick allocates nothing but its
 * JSON; the answer is written directly (api_jw, same bytes as jansson).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_query.h"
#include "api/api_query_codec.h"
#include "api/api_step_codec.h"
#include "api/api_step_fast.h"
#include "nav/nav_query.h"
#include "nav/nav_steer.h"

/* Defaults of the optional agent fields: api_step_fast.h (both decoders). */
#define STEP_DEFAULT_RADIUS STEP_FAST_DEFAULT_RADIUS
#define STEP_DEFAULT_MAX_SPEED STEP_FAST_DEFAULT_MAX_SPEED
#define STEP_DEFAULT_MAX_ACCEL STEP_FAST_DEFAULT_MAX_ACCEL
#define STEP_DEFAULT_ARRIVE_RADIUS STEP_FAST_DEFAULT_ARRIVE_RADIUS

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok;

static void scratch_free(void *p) {
    api_step_buffers *s = p;
    if (!s)
        return;
    nav_steer_free(s->steer);
    free(s->in);
    free(s->out);
    free(s->obs);
    free(s->vol_out);
    free(s);
}

static void scratch_key_init(void) {
    scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

api_step_buffers *api_step_thread_buffers(const api_config *cfg, bool vol) {
    pthread_once(&scratch_once, scratch_key_init);
    if (!scratch_key_ok)
        return NULL;
    unsigned n = cfg->max_agents ? cfg->max_agents : 1;
    api_step_buffers *s = pthread_getspecific(scratch_key);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        /* no per-thread corridor memory: corridors live in the shared path cache */
        s->steer = nav_steer_new(n, n);
        s->in = calloc(n, sizeof *s->in);
        s->out = calloc(n, sizeof *s->out);
        s->obs = calloc(n, sizeof *s->obs);
        if (!s->steer || !s->in || !s->out || !s->obs || pthread_setspecific(scratch_key, s) != 0) {
            scratch_free(s);
            return NULL;
        }
    }
    if (vol && !s->vol_out && !(s->vol_out = calloc(n, sizeof *s->vol_out)))
        return NULL; /* the set stays; the next volume step tries again */
    return s;
}

static api_code opt_vec3(const json_t *obj, const char *where, const char *key, float out[3],
                         bool *present, api_err *e) {
    const json_t *v = json_object_get(obj, key);
    *present = v && !json_is_null(v);
    return api_obj_vec3(obj, where, key, false, out, e);
}

static api_code opt_float(const json_t *obj, const char *where, const char *key, double dflt,
                          float *out, api_err *e) {
    double d = dflt;
    api_code c = api_obj_number(obj, where, key, false, -HUGE_VAL, HUGE_VAL, &d, e);
    if (c != API_OK)
        return c;
    float f = (float)d;
    if (!isfinite(f)) {
        char w[96];
        return api_fail(e, API_E_BAD_REQUEST, "%s is not a finite number",
                        api_path(w, sizeof w, "%s.%s", where, key));
    }
    *out = f;
    return API_OK;
}

api_code api_step_decode_agent(const json_t *j, uint32_t i, nav_agent_in *a, api_err *e) {
    char where[48];
    api_path(where, sizeof where, "agents[%u]", (unsigned)i);
    if (!json_is_object(j))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be an object", where);
    memset(a, 0, sizeof *a);
    const json_t *id = json_object_get(j, "id");
    if (id && !json_is_null(id)) {
        if (!json_is_string(id))
            return api_fail(e, API_E_BAD_REQUEST, "%s.id must be a string", where);
        a->id = json_string_value(id);
    }
    api_code c = api_obj_vec3(j, where, "position", true, a->pos, e);
    bool has;
    if (c == API_OK)
        c = opt_vec3(j, where, "velocity", a->vel, &has, e);
    if (c == API_OK)
        c = opt_float(j, where, "radius", STEP_DEFAULT_RADIUS, &a->radius, e);
    if (c == API_OK)
        c = opt_float(j, where, "max_speed", STEP_DEFAULT_MAX_SPEED, &a->max_speed, e);
    if (c == API_OK)
        c = opt_float(j, where, "max_accel", STEP_DEFAULT_MAX_ACCEL, &a->max_accel, e);
    if (c == API_OK)
        c = opt_float(j, where, "arrive_radius", STEP_DEFAULT_ARRIVE_RADIUS, &a->arrive_radius, e);
    if (c == API_OK)
        c = opt_vec3(j, where, "target", a->target, &a->has_target, e);
    if (c == API_OK)
        c = opt_vec3(j, where, "target_velocity", a->target_vel, &a->has_target_vel, e);
    if (c == API_OK)
        c = opt_vec3(j, where, "threat", a->threat, &a->has_threat, e);
    if (c != API_OK)
        return c;
    /* default: arrive at the target when there is one, else stand still */
    a->behavior = a->has_target ? NAV_BEHAVIOR_ARRIVE : NAV_BEHAVIOR_IDLE;
    const json_t *b = json_object_get(j, "behavior");
    if (b && !json_is_null(b)) {
        if (!json_is_string(b) ||
            !nav_behavior_parse(json_string_value(b), json_string_length(b), &a->behavior))
            return api_fail(e, API_E_BAD_REQUEST,
                            "%s.behavior must be one of seek, arrive, flee, pursue, evade, "
                            "wander, hide, idle",
                            where);
    }
    return API_OK;
}

api_code api_step_decode_obstacle(const json_t *j, uint32_t k, nav_obstacle *o, api_err *e) {
    char where[48];
    api_path(where, sizeof where, "obstacles[%u]", (unsigned)k);
    if (!json_is_object(j))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be an object", where);
    memset(o, 0, sizeof *o);
    bool has;
    api_code c = api_obj_vec3(j, where, "position", true, o->pos, e);
    if (c == API_OK)
        c = opt_vec3(j, where, "velocity", o->vel, &has, e);
    if (c == API_OK) {
        double r = 0.0;
        c = api_obj_number(j, where, "radius", true, -HUGE_VAL, HUGE_VAL, &r, e);
        o->radius = (float)r;
    }
    return c;
}

/* The agent's "avoidance" (debug only; nothing when it did not sample). */
static void encode_avoidance(api_jw *w, const nav_avoid_record *rec, size_t *left) {
    if (!rec || rec->nsamples == 0)
        return;
    if (rec->nsamples > *left) {
        api_jw_lit(w, ",\"avoidance_omitted\":true");
        return;
    }
    *left -= rec->nsamples;
    api_jw_lit(w, ",\"avoidance\":{\"samples\":[");
    for (uint32_t k = 0; k < rec->nsamples; k++) {
        if (k)
            api_jw_lit(w, ",");
        api_jw_lit(w, "[");
        for (int c = 0; c < 4; c++) {
            if (c)
                api_jw_lit(w, ",");
            api_jw_num(w, rec->samples[k][c]);
        }
        api_jw_lit(w, "]");
    }
    api_jw_lit(w, "],\"chosen\":");
    api_jw_vec3(w, rec->chosen);
    api_jw_lit(w, "}");
}

/* The error slot of an agent that is off the mesh (or whose target is). */
static void encode_error(api_jw *w, const nav_agent_out *o, uint32_t i) {
    char msg[160];
    const char *field = nav_step_field_name(o->error_field);
    snprintf(msg, sizeof msg, "agents[%u].%s is not on the navmesh (within extents)", (unsigned)i,
             field[0] ? field : "position");
    api_jw_lit(w, ",\"error\":{\"code\":");
    api_jw_str(w, api_code_name(api_code_from_nav(o->status)));
    api_jw_lit(w, ",\"message\":");
    api_jw_str(w, msg);
    api_jw_lit(w, "}}");
}

/* Room for a slot's fixed keys and punctuation (under 300 bytes) beside its
   numbers, behaviour name and id. */
#define SLOT_FIXED 384

/* One agent's slot, in the contract's key order; rec: its avoidance record
   (debug) or NULL. Written in place (api_jw_room): one reservation per
   slot instead of one per piece, a third of the encoding's time. */
static void encode_slot(api_jw *w, const nav_agent_in *a, const nav_agent_out *o, uint32_t i,
                        const nav_avoid_record *rec, size_t *debug_left) {
    size_t idn = a->id ? strlen(a->id) : 0;
    const char *beh = nav_behavior_name(o->behavior);
    size_t behn = strlen(beh);
    const char *kind = o->has_action ? o->action.kind : "";
    size_t kindn = strlen(kind);
    char *b =
        api_jw_room(w, SLOT_FIXED + API_JW_STR_MAX(idn) + API_JW_STR_MAX(behn) +
                           API_JW_STR_MAX(kindn) + (5 + NAV_STEER_MAX_CORNERS) * API_JW_VEC3_MAX);
    if (!b)
        return;
    char *p = api_jw_put(b, "{\"id\":");
    if (a->id)
        p += api_jw_str_to(p, a->id, idn);
    else
        p = api_jw_put(p, "null");
    if (o->status != NAV_OK) {
        w->len += (size_t)(p - b);
        encode_error(w, o, i);
        return;
    }
    p = api_jw_put(p, ",\"position\":");
    p += api_jw_vec3_to(p, o->pos);
    p = api_jw_put(p, ",\"velocity\":");
    p += api_jw_vec3_to(p, o->vel);
    p = api_jw_put(p, ",\"desired_velocity\":");
    p += api_jw_vec3_to(p, o->desired_vel);
    p = api_jw_put(p, ",\"corners\":[");
    for (uint32_t k = 0; k < o->ncorners; k++) {
        if (k)
            *p++ = ',';
        p += api_jw_vec3_to(p, o->corners[k]);
    }
    p = api_jw_put(p, "],\"behavior\":");
    p += api_jw_str_to(p, beh, behn);
    if (o->avoiding)
        p = api_jw_put(p, ",\"avoiding\":true");
    else
        p = api_jw_put(p, ",\"avoiding\":false");
    if (o->arrived)
        p = api_jw_put(p, ",\"arrived\":true");
    else
        p = api_jw_put(p, ",\"arrived\":false");
    p = api_jw_put(p, ",\"polygon\":");
    w->len += (size_t)(p - b);
    api_jw_uint(w, o->poly);
    encode_avoidance(w, rec, debug_left);
    if (!o->has_action) {
        api_jw_lit(w, ",\"action\":null}");
        return;
    }
    b = api_jw_room(w, SLOT_FIXED + API_JW_STR_MAX(kindn) + 2 * API_JW_VEC3_MAX);
    if (!b)
        return;
    p = api_jw_put(b, ",\"action\":{\"type\":");
    p += api_jw_str_to(p, kind, kindn);
    p = api_jw_put(p, ",\"start\":");
    p += api_jw_vec3_to(p, o->action.start);
    p = api_jw_put(p, ",\"end\":");
    p += api_jw_vec3_to(p, o->action.end);
    p = api_jw_put(p, ",\"link\":");
    w->len += (size_t)(p - b);
    api_jw_uint(w, o->action.link);
    api_jw_lit(w, ",\"landing\":");
    api_jw_vec3(w, o->action.land);
    api_jw_lit(w, ",\"links_taken\":");
    api_jw_uint(w, o->action.nlinks);
    api_jw_lit(w, "}}");
}

/* The body through the jansson tree: every field checked and named; the
   profile's mesh in *m. On API_OK, *root holds the tree the agent ids
   borrow from. */
static api_code decode_tree(const char *body, size_t len, const api_config *cfg, const api_entry *e,
                            api_step_buffers *s, nav_steer_params *p, nav_filter *filter,
                            bool *use_cache, bool *debug, const nav_mesh **m, size_t *n,
                            size_t *nobs, json_t **root, api_err *err) {
    *root = api_json_parse(body, len, err);
    if (!*root)
        return err->code;
    double d = NAN;
    api_code c = api_obj_number(*root, "", "dt", true, -HUGE_VAL, HUGE_VAL, &d, err);
    p->dt = (float)d;
    if (c == API_OK)
        c = api_obj_vec3(*root, "", "extents", false, p->extents, err);
    if (c == API_OK)
        c = api_obj_bool(*root, "", "avoidance", &p->avoidance, err);
    if (c == API_OK)
        c = api_obj_bool(*root, "", "cache", use_cache, err);
    if (c == API_OK)
        c = api_obj_bool(*root, "", "debug", debug, err);
    /* off-mesh links crossed by navd within the tick, not left to the game
       (the fast path does not know the key: such a body comes here) */
    if (c == API_OK)
        c = api_obj_bool(*root, "", "traverse_links", &p->traverse_links, err);
    uint64_t seed = 0;
    if (c == API_OK)
        c = api_obj_uint(*root, "", "seed", 0, UINT64_MAX >> 1, &seed, err);
    p->seed = seed;
    /* area_costs, exclude_areas and max_nodes: the path queries' codec, so
       the same body fields mean and reject the same things in both */
    uint32_t max_nodes = 0;
    if (c == API_OK)
        c = api_decode_search_opts(*root, "", filter, &max_nodes, err);
    p->max_nodes = max_nodes;
    char profile[API_PROFILE_NAME_MAX + 1] = "";
    if (c == API_OK)
        c = api_decode_profile(*root, "", profile, err);
    *m = api_entry_profile(e, profile);
    if (c == API_OK && !*m)
        c = api_fail(err, API_E_BAD_REQUEST, "profile '%s' does not exist in navmesh '%s'", profile,
                     e->meta.name);
    const json_t *agents = json_object_get(*root, "agents");
    const json_t *obstacles = json_object_get(*root, "obstacles");
    if (c == API_OK && !json_is_array(agents))
        c = api_fail(err, API_E_BAD_REQUEST, "agents must be an array");
    if (c == API_OK && obstacles && !json_is_null(obstacles) && !json_is_array(obstacles))
        c = api_fail(err, API_E_BAD_REQUEST, "obstacles must be an array");
    *n = c == API_OK ? json_array_size(agents) : 0;
    *nobs = c == API_OK && json_is_array(obstacles) ? json_array_size(obstacles) : 0;
    if (c == API_OK && *n > cfg->max_agents)
        c = api_fail(err, API_E_PAYLOAD_TOO_LARGE,
                     "agents has %zu entries; this server accepts at most %u (--max-agents)", *n,
                     cfg->max_agents);
    if (c == API_OK && *nobs > cfg->max_agents)
        c = api_fail(err, API_E_PAYLOAD_TOO_LARGE,
                     "obstacles has %zu entries; this server accepts at most %u (--max-agents)",
                     *nobs, cfg->max_agents);
    if (c == API_OK && !s)
        c = api_fail(err, API_E_UNAVAILABLE, "out of memory for the steering scratch");
    for (size_t i = 0; c == API_OK && i < *n; i++)
        c = api_step_decode_agent(json_array_get(agents, i), (uint32_t)i, &s->in[i], err);
    for (size_t k = 0; c == API_OK && k < *nobs; k++)
        c = api_step_decode_obstacle(json_array_get(obstacles, k), (uint32_t)k, &s->obs[k], err);
    return c;
}

static void step(api_req *r, const api_entry *e) {
    const api_config *cfg = api_req_config(r);
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    api_err err = {0};
    nav_steer_params p;
    nav_steer_params_default(&p);
    nav_filter filter;
    nav_filter_default(&filter);
    p.filter = &filter;
    bool use_cache = true, debug = false;
    nav_avoid_record *recs = NULL;
    size_t n = 0, nobs = 0;
    json_t *root = NULL;
    api_step_buffers *s = api_step_thread_buffers(cfg, false);
    api_scratch *qs = api_query_scratch();
    if (!qs)
        s = NULL;
    /* the common shape without a tree (api_step_fast.c: no "profile", so
       the first profile's mesh); anything else, or any error, through the
       tree, which words the errors */
    const nav_mesh *m = api_entry_profile(e, "");
    char *ids = s && m ? malloc(len + 1) : NULL;
    api_step_fast_out fo = {s ? s->in : NULL, cfg->max_agents, s ? s->obs : NULL, cfg->max_agents,
                            ids};
    uint32_t fn = 0, fnobs = 0;
    api_code c = API_OK;
    if (ids && api_step_fast_decode(body, len, &fo, &p, &use_cache, &fn, &fnobs)) {
        n = fn;
        nobs = fnobs;
    } else {
        nav_steer_params_default(&p);
        p.filter = &filter;
        use_cache = true;
        c = decode_tree(body, len, cfg, e, s, &p, &filter, &use_cache, &debug, &m, &n, &nobs, &root,
                        &err);
    }
    if (c == API_OK) {
        p.deadline = api_req_deadline(r);
        /* a large step is split across as many threads as the query pool
           has (--threads); the answer is the same bytes whatever the split */
        p.threads = cfg->threads;
        /* "debug": the avoidance records, only for this request (the fast
           path never sees "debug": an unknown key sends the body here) */
        if (debug && n > 0) {
            recs = malloc(n * sizeof *recs);
            if (!recs)
                c = api_fail(&err, API_E_UNAVAILABLE, "out of memory for the debug records");
            p.avoid_debug = recs;
        }
    }
    if (c == API_OK) {
        nav_step_error se;
        /* "cache": false: every corridor is searched, not looked up; the
           answer is the same bytes either way (canonical corridors) */
        nav_cache *cache = use_cache ? api_query_cache() : NULL;
        nav_status st = nav_step(s->steer, m, qs->q, cache, &p, s->in, (uint32_t)n, s->obs,
                                 (uint32_t)nobs, s->out, &se);
        if (st == NAV_E_DEADLINE)
            c = api_fail(&err, API_E_UNAVAILABLE,
                         "the step did not finish within the request deadline of %u ms "
                         "(--request-deadline-ms): send fewer agents, keep the cache on, or retry",
                         cfg->request_deadline_ms);
        else if (st != NAV_OK)
            c = api_fail(&err, st == NAV_E_INVALID_ARG ? API_E_BAD_REQUEST : api_code_from_nav(st),
                         "%s", se.message);
    }
    if (c != API_OK) {
        json_decref(root);
        free(ids);
        free(recs);
        api_reply_error(r, &err);
        return;
    }
    /* about 330 bytes per agent; agent ids borrow from root or ids: encode
       first */
    api_jw w;
    api_jw_init(&w, 64 + n * 384);
    api_jw_lit(&w, "{\"agents\":[");
    /* the avoidance samples the response may carry with "debug": true
       (--max-step-debug-samples, default 65,536: 2,048 agents at 32 each,
       ~40 bytes a sample); past it an agent that sampled says
       "avoidance_omitted": true instead, so a large debug step cannot ask
       for an unbounded answer */
    size_t debug_left = cfg->max_step_debug_samples;
    for (size_t i = 0; i < n; i++) {
        if (i)
            api_jw_lit(&w, ",");
        encode_slot(&w, &s->in[i], &s->out[i], (uint32_t)i, recs ? &recs[i] : NULL, &debug_left);
    }
    api_jw_lit(&w, "]}");
    json_decref(root);
    free(ids);
    free(recs);
    size_t olen = 0;
    char *text = api_jw_finish(&w, &olen);
    if (!text)
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while encoding the response");
    else
        api_reply_raw(r, API_OK, "application/json", text, olen);
}

void api_h_step(api_req *r) {
    api_entry *e = api_req_mesh(r);
    if (!e)
        return;
    step(r, e);
    api_entry_release(e);
}
