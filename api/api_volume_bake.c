/*
 * api_volume_bake: POST /v1/volumes/{name}/bake, a flight-volume bake as a
 * job of kind "volume" (see api_jobs.h and the contract's "Flight
 * volumes").
 *
 * Body: {"level" (required), "voxel_size" (default 0.5), "radius" (default
 * 0.5), "bounds" (default: the level's bounds)}. Everything is checked
 * before the job is queued: a bad field is 400 naming it, an unknown level
 * 404, a grid of more than --max-volume-voxels voxels 422 invalid_level. The
 * level is read when the request arrives; the volume's source records its
 * version. 202 with the job, or with ?wait=true 200 with the job as it ended.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_internal.h"
#include "api/api_json.h"
#include "api/api_profiles.h"
#include "api/api_volume.h"
#include "nav/nav_level.h"

typedef struct vbake_arg {
    nav_level *level;
    nav_vol_settings settings;
    api_volumes *vols;
    char name[66];
    char *source;
} vbake_arg;

static void vbake_free(void *p) {
    vbake_arg *a = p;
    if (!a)
        return;
    nav_level_free(a->level);
    free(a->source);
    free(a);
}

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static api_code vbake_run(api_job *job, void *argp, json_t **result, api_err *e) {
    vbake_arg *a = argp;
    const nav_level *l = a->level;
    nav_vol *vol = NULL;
    nav_error ne = {0};
    double t0 = mono_ms();
    nav_status st =
        nav_vol_bake(nav_level_vertices(l), nav_level_vertex_count(l), nav_level_triangles(l),
                     nav_level_triangle_count(l), &a->settings, api_job_progress, job, &vol, &ne);
    double ms = mono_ms() - t0;
    if (st != NAV_OK) {
        api_code c = st == NAV_E_LIMIT         ? API_E_INVALID_LEVEL
                     : st == NAV_E_INVALID_ARG ? API_E_BAD_REQUEST
                                               : api_code_from_nav(st);
        return api_fail(e, c, "%s", ne.message[0] ? ne.message : nav_status_text(st));
    }
    api_job_progress(job, "store", 1.0f);
    if (!api_job_commit(job)) {
        nav_vol_free(vol);
        return api_fail(e, API_E_UNAVAILABLE, "cancelled");
    }
    api_vol_entry *ent = NULL;
    api_code c = api_volumes_put(a->vols, a->name, vol, a->source, &ent, e);
    if (c != API_OK)
        return c;
    json_t *meta = api_vol_entry_encode(ent);
    api_vol_entry_release(ent);
    json_object_set_new(meta, "report", json_pack("{s:o}", "bake_ms", api_json_num(ms)));
    *result = meta;
    return API_OK;
}

/* voxel_size, radius and bounds of root over the defaults in *s; *has_bounds says if given. */
static api_code decode_vsettings(const json_t *root, nav_vol_settings *s, int *has_bounds,
                                 api_err *e) {
    double vs = s->voxel_size, r = s->radius;
    api_code c = api_obj_number(root, "", "voxel_size", false, -HUGE_VAL, HUGE_VAL, &vs, e);
    if (c == API_OK && !(vs > 0))
        c = api_fail(e, API_E_BAD_REQUEST, "voxel_size must be a number > 0 (metres)");
    if (c == API_OK)
        c = api_obj_number(root, "", "radius", false, -HUGE_VAL, HUGE_VAL, &r, e);
    if (c == API_OK && !(r >= 0))
        c = api_fail(e, API_E_BAD_REQUEST, "radius must be a number >= 0 (metres)");
    if (c != API_OK)
        return c;
    s->voxel_size = (float)vs;
    s->radius = (float)r;
    const json_t *b = json_object_get(root, "bounds");
    *has_bounds = b && !json_is_null(b);
    if (!*has_bounds)
        return API_OK;
    if (!json_is_array(b) || json_array_size(b) != 2)
        return api_fail(e, API_E_BAD_REQUEST, "bounds must be [[min x, y, z], [max x, y, z]]");
    c = api_json_get_vec3(json_array_get(b, 0), "bounds[0]", s->bmin, API_E_BAD_REQUEST, e);
    if (c == API_OK)
        c = api_json_get_vec3(json_array_get(b, 1), "bounds[1]", s->bmax, API_E_BAD_REQUEST, e);
    for (int k = 0; c == API_OK && k < 3; k++)
        if (!(s->bmax[k] > s->bmin[k]))
            c = api_fail(e, API_E_BAD_REQUEST,
                         "bounds[1][%d] must be greater than bounds[0][%d] (an empty box)", k, k);
    return c;
}

static char *vsource_text(const char *level, int64_t version, const nav_vol_settings *s) {
    json_t *src = json_pack("{s:s,s:I,s:{s:o,s:o,s:[o,o]}}", "level", level, "level_version",
                            (json_int_t)version, "settings", "voxel_size",
                            api_json_num(s->voxel_size), "radius", api_json_num(s->radius),
                            "bounds", api_json_vec3(s->bmin), api_json_vec3(s->bmax));
    char *text = src ? api_json_dump(src, &(size_t){0}) : NULL;
    json_decref(src);
    return text;
}

/* Checks the settings against the grid limit; replies and returns nonzero on refusal. */
static int vbake_refuse(api_req *r, const vbake_arg *a) {
    const api_config *cfg = api_req_config(r);
    nav_vol_settings s = a->settings;
    s.max_voxels = cfg->max_volume_voxels;
    nav_error ne = {0};
    uint64_t n = 0;
    nav_status st = nav_vol_check(&s, &n, &ne);
    if (st == NAV_E_LIMIT) {
        api_reply_fail(r, API_E_INVALID_LEVEL, "%s (--max-volume-voxels)", ne.message);
        return 1;
    }
    if (st != NAV_OK) {
        api_reply_fail(r, API_E_BAD_REQUEST, "%s", ne.message);
        return 1;
    }
    return 0;
}

void api_h_volume_bake(api_req *r) {
    int wait = 0;
    const char *level = NULL;
    json_t *root = api_job_request(r, &wait, &level);
    if (!root)
        return;
    vbake_arg *a = calloc(1, sizeof *a);
    if (!a) {
        json_decref(root);
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory; retry later");
        return;
    }
    a->settings.voxel_size = 0.5f;
    a->settings.radius = 0.5f;
    api_err e = {0};
    int has_bounds = 0;
    api_code c = decode_vsettings(root, &a->settings, &has_bounds, &e);
    if (c != API_OK) {
        json_decref(root);
        vbake_free(a);
        api_reply_error(r, &e);
        return;
    }
    store_meta lmeta;
    a->level = api_level_load(r, level, &lmeta); /* answers 404 itself */
    if (a->level && !has_bounds)
        nav_level_bounds(a->level, a->settings.bmin, a->settings.bmax);
    if (!a->level || vbake_refuse(r, a)) {
        json_decref(root);
        vbake_free(a);
        return;
    }
    a->source = vsource_text(level, lmeta.version, &a->settings);
    json_decref(root);
    if (!a->source) {
        vbake_free(a);
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory; retry later");
        return;
    }
    a->settings.max_voxels = api_req_config(r)->max_volume_voxels;
    a->vols = api_req_volumes(r);
    snprintf(a->name, sizeof a->name, "%s", api_req_name(r));
    api_job_start(r, wait, "volume", vbake_run, vbake_free, a);
}
