/*
 * api_volume_step: POST /v1/volumes/{name}/step, the navmesh step for
 * flying agents (contract "Flight volumes"): the same request fields, read
 * by the same decoders (api_step_codec.h), and the same response fields in
 * 3-D. `polygon` and `action` are null (a volume has neither); an agent
 * whose position or target has no free space within extents gets
 * {"id", "error": point_blocked} in its slot and the others are answered.
 *
 * Each worker thread keeps its agent arrays (sized --max-agents) and the
 * volume path scratch (api_volume_thread_query): a tick allocates nothing
 * but its JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_step_codec.h"
#include "api/api_volume.h"

static void jw_key_vec3(api_jw *w, const char *key, const float v[3]) {
    api_jw_raw(w, key, strlen(key));
    api_jw_vec3(w, v);
}

static void encode_slot(api_jw *w, const nav_agent_in *a, const nav_vol_agent_out *o, uint32_t i) {
    api_jw_lit(w, "{\"id\":");
    if (a->id)
        api_jw_str(w, a->id);
    else
        api_jw_lit(w, "null");
    if (o->status != NAV_OK) {
        char msg[200];
        const char *field = nav_step_field_name(o->error_field);
        snprintf(msg, sizeof msg, "agents[%u].%s is not within extents of free space", (unsigned)i,
                 field[0] ? field : "position");
        api_jw_lit(w, ",\"error\":{\"code\":");
        api_jw_str(w, api_code_name(API_E_POINT_BLOCKED));
        api_jw_lit(w, ",\"message\":");
        api_jw_str(w, msg);
        api_jw_lit(w, "}}");
        return;
    }
    jw_key_vec3(w, ",\"position\":", o->pos);
    jw_key_vec3(w, ",\"velocity\":", o->vel);
    jw_key_vec3(w, ",\"desired_velocity\":", o->desired_vel);
    api_jw_lit(w, ",\"corners\":[");
    for (uint32_t k = 0; k < o->ncorners; k++) {
        if (k)
            api_jw_lit(w, ",");
        api_jw_vec3(w, o->corners[k]);
    }
    api_jw_lit(w, "],\"behavior\":");
    api_jw_str(w, nav_behavior_name(o->behavior));
    api_jw_raw(w, o->avoiding ? ",\"avoiding\":true" : ",\"avoiding\":false",
               o->avoiding ? 16 : 17);
    api_jw_raw(w, o->arrived ? ",\"arrived\":true" : ",\"arrived\":false", o->arrived ? 15 : 16);
    api_jw_lit(w, ",\"polygon\":null,\"action\":null}");
}

/* dt, extents, avoidance, seed, max_nodes, horizon, arrive_tolerance of root into p. */
static api_code decode_params(const json_t *root, nav_vol_steer_params *p, api_err *e) {
    double d = NAN;
    api_code c = api_obj_number(root, "", "dt", true, -HUGE_VAL, HUGE_VAL, &d, e);
    p->dt = (float)d;
    if (c == API_OK)
        c = api_obj_vec3(root, "", "extents", false, p->extents, e);
    if (c == API_OK)
        c = api_obj_bool(root, "", "avoidance", &p->avoidance, e);
    uint64_t seed = 0, mn = 0;
    if (c == API_OK)
        c = api_obj_uint(root, "", "seed", 0, UINT64_MAX >> 1, &seed, e);
    if (c == API_OK)
        c = api_obj_uint(root, "", "max_nodes", 1, UINT32_MAX, &mn, e);
    p->seed = seed;
    p->max_nodes = (uint32_t)mn;
    double h = p->horizon, tol = p->arrive_tolerance;
    if (c == API_OK)
        c = api_obj_number(root, "", "horizon", false, -HUGE_VAL, HUGE_VAL, &h, e);
    if (c == API_OK)
        c = api_obj_number(root, "", "arrive_tolerance", false, -HUGE_VAL, HUGE_VAL, &tol, e);
    p->horizon = (float)h;
    p->arrive_tolerance = (float)tol;
    return c;
}

static void volume_step(api_req *r, const api_vol_entry *ve) {
    const api_config *cfg = api_req_config(r);
    size_t len;
    api_body_type type;
    const char *body = api_req_body(r, &len, &type);
    api_err err = {0};
    json_t *root = api_json_parse(body, len, &err);
    if (!root) {
        api_reply_error(r, &err);
        return;
    }
    nav_vol_steer_params p;
    nav_vol_steer_params_default(&p);
    api_code c = decode_params(root, &p, &err);
    const json_t *agents = json_object_get(root, "agents");
    const json_t *obstacles = json_object_get(root, "obstacles");
    if (c == API_OK && !json_is_array(agents))
        c = api_fail(&err, API_E_BAD_REQUEST, "agents must be an array");
    if (c == API_OK && obstacles && !json_is_null(obstacles) && !json_is_array(obstacles))
        c = api_fail(&err, API_E_BAD_REQUEST, "obstacles must be an array");
    size_t n = c == API_OK ? json_array_size(agents) : 0;
    size_t nobs = c == API_OK && json_is_array(obstacles) ? json_array_size(obstacles) : 0;
    if (c == API_OK && (n > cfg->max_agents || nobs > cfg->max_agents))
        c = api_fail(&err, API_E_PAYLOAD_TOO_LARGE,
                     "%s has %zu entries; this server accepts at most %u (--max-agents)",
                     n > cfg->max_agents ? "agents" : "obstacles", n > cfg->max_agents ? n : nobs,
                     cfg->max_agents);
    api_step_buffers *s = NULL;
    nav_vol_query *q = NULL;
    if (c == API_OK &&
        (!(s = api_step_thread_buffers(cfg, true)) || !(q = api_volume_thread_query(cfg))))
        c = api_fail(&err, API_E_UNAVAILABLE, "out of memory for the steering scratch");
    for (size_t i = 0; c == API_OK && i < n; i++)
        c = api_step_decode_agent(json_array_get(agents, i), (uint32_t)i, &s->in[i], &err);
    for (size_t k = 0; c == API_OK && k < nobs; k++)
        c = api_step_decode_obstacle(json_array_get(obstacles, k), (uint32_t)k, &s->obs[k], &err);
    if (c == API_OK) {
        nav_step_error se;
        p.deadline = api_req_deadline(r);
        nav_status st = nav_vol_step(ve->vol, q, &p, s->in, (uint32_t)n, s->obs, (uint32_t)nobs,
                                     s->vol_out, &se);
        if (st == NAV_E_DEADLINE)
            c = api_fail(&err, API_E_UNAVAILABLE,
                         "the step did not finish within the request deadline of %u ms "
                         "(--request-deadline-ms): send fewer agents or retry",
                         cfg->request_deadline_ms);
        else if (st != NAV_OK)
            c = api_fail(&err, st == NAV_E_INVALID_ARG ? API_E_BAD_REQUEST : api_code_from_nav(st),
                         "%s", se.message);
    }
    if (c != API_OK) {
        json_decref(root);
        api_reply_error(r, &err);
        return;
    }
    api_jw w;
    api_jw_init(&w, 64 + n * 384);
    api_jw_lit(&w, "{\"agents\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            api_jw_lit(&w, ",");
        encode_slot(&w, &s->in[i], &s->vol_out[i], (uint32_t)i);
    }
    api_jw_lit(&w, "]}");
    json_decref(root); /* agent ids borrow from it */
    size_t olen = 0;
    char *text = api_jw_finish(&w, &olen);
    if (!text)
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory while encoding the response");
    else
        api_reply_raw(r, API_OK, "application/json", text, olen);
}

void api_h_volume_step(api_req *r) {
    api_vol_entry *ve = api_volumes_get(api_req_volumes(r), api_req_name(r));
    if (!ve) {
        api_reply_fail(r, API_E_NOT_FOUND, "volume '%s' does not exist", api_req_name(r));
        return;
    }
    volume_step(r, ve);
    api_vol_entry_release(ve);
}
