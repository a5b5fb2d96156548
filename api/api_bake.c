/*
 * api_bake: POST /v1/navmeshes/{name}/bake, the contract's "Baking a
 * navmesh": decode and check the settings (400 naming the field), read the
 * level as it is now (404 when absent), and queue a job that bakes every
 * profile (nav_bake) and publishes them as one new version of the navmesh,
 * exactly as a PUT would. 202 with the job, or with ?wait=true 200 with the
 * job as it ended.
 *
 * The level is read when the request arrives, so the bake uses that version
 * even if the level is replaced while the job waits; the navmesh's source
 * records which.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_codec.h"
#include "api/api_internal.h"
#include "api/api_json.h"
#include "nav/nav_bake.h"
#include "nav/nav_level.h"

/* What one bake job owns. */
typedef struct bake_arg {
    nav_level *level;
    nav_bake_settings settings;
    nav_bake_volume *volumes;
    nav_bake_profile profiles[NAV_BAKE_MAX_PROFILES];
    uint32_t nprofiles;
    nav_bake_limits limits;
    api_registry *reg;
    char name[66];
    char *source; /* JSON text: level, level_version, settings */
} bake_arg;

static void bake_arg_free(void *p) {
    bake_arg *a = p;
    if (!a)
        return;
    nav_level_free(a->level);
    free(a->volumes);
    free(a->source);
    free(a);
}

/* A float field: a JSON number finite as a float; ranges are nav_bake_check's. */
static api_code get_float(const json_t *obj, const char *where, const char *key, float *out,
                          api_err *e) {
    double d = *out;
    api_code c = api_obj_number(obj, where, key, false, -HUGE_VAL, HUGE_VAL, &d, e);
    if (c == API_OK)
        *out = (float)d;
    return c;
}

static api_code get_u32(const json_t *obj, const char *where, const char *key, uint32_t *out,
                        api_err *e) {
    uint64_t v = *out;
    api_code c = api_obj_uint(obj, where, key, 0, UINT32_MAX, &v, e);
    if (c == API_OK)
        *out = (uint32_t)v;
    return c;
}

/* {"drop", "jump", "climb"} of obj[key] (where names obj) into p. */
static api_code decode_links(const json_t *obj, const char *where, nav_bake_profile *p,
                             api_err *e) {
    const json_t *l = json_object_get(obj, "links");
    if (!l || json_is_null(l))
        return API_OK;
    char w[160];
    api_path(w, sizeof w, "%s%slinks", where, *where ? "." : "");
    if (!json_is_object(l))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be an object like {\"drop\": 3}", w);
    api_code c = get_float(l, w, "drop", &p->link_drop, e);
    if (c == API_OK)
        c = get_float(l, w, "jump", &p->link_jump, e);
    if (c == API_OK)
        c = get_float(l, w, "climb", &p->link_climb, e);
    return c;
}

static api_code decode_profiles(const json_t *root, const nav_bake_profile *base, bake_arg *a,
                                api_err *e) {
    const json_t *ps = json_object_get(root, "profiles");
    if (!ps || json_is_null(ps)) {
        a->profiles[0] = *base;
        a->nprofiles = 1;
        return API_OK;
    }
    if (!json_is_object(ps) || json_object_size(ps) == 0)
        return api_fail(e, API_E_BAD_REQUEST,
                        "profiles must be an object of one or more named agent sizes, like "
                        "{\"default\": {\"radius\": 0.6}}");
    if (json_object_size(ps) > NAV_BAKE_MAX_PROFILES)
        return api_fail(e, API_E_BAD_REQUEST, "profiles has %zu entries; at most %d are baked",
                        json_object_size(ps), NAV_BAKE_MAX_PROFILES);
    const char *key;
    const json_t *v;
    /* jansson keeps members in document order: the first is the default. */
    json_object_foreach((json_t *)ps, key, v) {
        char w[160];
        api_path(w, sizeof w, "profiles.%.64s", key);
        if (!api_profile_name_ok(key))
            return api_fail(e, API_E_BAD_REQUEST,
                            "profiles has a profile named \"%.64s\": names are 1-64 of "
                            "A-Z a-z 0-9 _ . -",
                            key);
        if (!json_is_object(v))
            return api_fail(e, API_E_BAD_REQUEST, "%s must be an object", w);
        nav_bake_profile *p = &a->profiles[a->nprofiles++];
        *p = *base;
        snprintf(p->name, sizeof p->name, "%s", key);
        api_code c = get_float(v, w, "radius", &p->radius, e);
        if (c == API_OK)
            c = get_float(v, w, "height", &p->height, e);
        if (c == API_OK)
            c = get_float(v, w, "max_climb", &p->max_climb, e);
        if (c == API_OK)
            c = get_float(v, w, "max_slope", &p->max_slope, e);
        if (c == API_OK)
            c = decode_links(v, w, p, e);
        if (c != API_OK)
            return c;
    }
    return API_OK;
}

static api_code decode_volume(const json_t *v, const char *w, nav_bake_volume *out, api_err *e) {
    if (!json_is_object(v))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be an object {xz, ymin, ymax, area}", w);
    const json_t *xz = json_object_get(v, "xz");
    size_t n = json_array_size(xz);
    if (!json_is_array(xz) || n < 3 || n > NAV_BAKE_VOLUME_MAX_VERTS)
        return api_fail(e, API_E_BAD_REQUEST, "%s.xz must be an array of 3 to %d [x, z] points", w,
                        NAV_BAKE_VOLUME_MAX_VERTS);
    for (size_t i = 0; i < n; i++) {
        const json_t *pt = json_array_get(xz, i);
        char pw[200];
        api_path(pw, sizeof pw, "%s.xz[%zu]", w, i);
        if (!json_is_array(pt) || json_array_size(pt) != 2)
            return api_fail(e, API_E_BAD_REQUEST, "%s must be [x, z]", pw);
        for (size_t k = 0; k < 2; k++) {
            char kw[220];
            api_code c =
                api_json_float(json_array_get(pt, k), api_path(kw, sizeof kw, "%s[%zu]", pw, k),
                               &out->xz[i][k], API_E_BAD_REQUEST, e);
            if (c != API_OK)
                return c;
        }
    }
    out->nverts = (uint32_t)n;
    double lo = 0, hi = 0;
    api_code c = api_obj_number(v, w, "ymin", true, -HUGE_VAL, HUGE_VAL, &lo, e);
    if (c == API_OK)
        c = api_obj_number(v, w, "ymax", true, -HUGE_VAL, HUGE_VAL, &hi, e);
    uint64_t area = 0;
    if (c == API_OK)
        c = api_obj_uint(v, w, "area", 0, NAV_MAX_AREAS - 1, &area, e);
    if (c == API_OK && !json_object_get(v, "area"))
        c = api_fail(e, API_E_BAD_REQUEST, "%s.area is required (0 removes the surface)", w);
    out->ymin = (float)lo;
    out->ymax = (float)hi;
    out->area = (uint8_t)area;
    return c;
}

static api_code decode_settings(const json_t *root, bake_arg *a, api_err *e) {
    nav_bake_settings *s = &a->settings;
    api_code c = get_float(root, "", "cell_size", &s->cell_size, e);
    if (c == API_OK)
        c = get_float(root, "", "cell_height", &s->cell_height, e);
    if (c == API_OK)
        c = get_u32(root, "", "tile_size", &s->tile_size, e);
    if (c == API_OK)
        c = get_float(root, "", "edge_max_len", &s->edge_max_len, e);
    if (c == API_OK)
        c = get_float(root, "", "edge_max_error", &s->edge_max_error, e);
    if (c == API_OK)
        c = get_u32(root, "", "region_min_size", &s->region_min_size, e);
    if (c == API_OK)
        c = get_u32(root, "", "region_merge_size", &s->region_merge_size, e);
    if (c == API_OK)
        c = get_float(root, "", "detail_sample_dist", &s->detail_sample_dist, e);
    if (c == API_OK)
        c = get_float(root, "", "detail_sample_max_error", &s->detail_sample_max_error, e);
    if (c == API_OK)
        c = get_u32(root, "", "max_verts_per_poly", &s->max_verts_per_poly, e);
    if (c != API_OK)
        return c;
    const json_t *part = json_object_get(root, "partition");
    if (part && !json_is_null(part)) {
        const char *t = json_string_value(part);
        if (t && !strcmp(t, "watershed"))
            s->partition = NAV_BAKE_WATERSHED;
        else if (t && !strcmp(t, "monotone"))
            s->partition = NAV_BAKE_MONOTONE;
        else
            return api_fail(e, API_E_BAD_REQUEST,
                            "partition must be \"watershed\" or \"monotone\"");
    }
    const json_t *vols = json_object_get(root, "area_volumes");
    if (vols && !json_is_null(vols)) {
        size_t n = json_array_size(vols);
        if (!json_is_array(vols) || n > NAV_BAKE_MAX_VOLUMES)
            return api_fail(e, API_E_BAD_REQUEST, "area_volumes must be an array of at most %d",
                            NAV_BAKE_MAX_VOLUMES);
        a->volumes = n ? calloc(n, sizeof *a->volumes) : NULL;
        if (n && !a->volumes)
            return api_fail(e, API_E_UNAVAILABLE, "out of memory; retry later");
        for (size_t i = 0; i < n; i++) {
            char w[64];
            c = decode_volume(json_array_get(vols, i),
                              api_path(w, sizeof w, "area_volumes[%zu]", i), &a->volumes[i], e);
            if (c != API_OK)
                return c;
        }
        s->volumes = a->volumes;
        s->nvolumes = (uint32_t)n;
    }
    /* Top-level links apply to every profile that does not give its own. */
    nav_bake_profile base = nav_bake_profile_default();
    if ((c = decode_links(root, "", &base, e)) != API_OK)
        return c;
    return decode_profiles(root, &base, a, e);
}

/* The shortest decimal text that reads back as exactly f (a float32). */
static json_t *float_json(float f) {
    char buf[32];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            break;
    }
    return api_json_num(strtod(buf, NULL));
}

/* The navmesh's "source": the level, its version and every setting used. */
static char *source_text(const bake_arg *a, const char *level, int64_t level_version) {
    const nav_bake_settings *s = &a->settings;
    json_t *set = json_object();
    json_object_set_new(set, "cell_size", float_json(s->cell_size));
    json_object_set_new(set, "cell_height", float_json(s->cell_height));
    json_object_set_new(set, "tile_size", json_integer(s->tile_size));
    json_object_set_new(set, "partition",
                        json_string(s->partition == NAV_BAKE_MONOTONE ? "monotone" : "watershed"));
    json_object_set_new(set, "edge_max_len", float_json(s->edge_max_len));
    json_object_set_new(set, "edge_max_error", float_json(s->edge_max_error));
    json_object_set_new(set, "region_min_size", json_integer(s->region_min_size));
    json_object_set_new(set, "region_merge_size", json_integer(s->region_merge_size));
    json_object_set_new(set, "detail_sample_dist", float_json(s->detail_sample_dist));
    json_object_set_new(set, "detail_sample_max_error", float_json(s->detail_sample_max_error));
    json_object_set_new(set, "max_verts_per_poly", json_integer(s->max_verts_per_poly));
    json_t *profiles = json_object();
    for (uint32_t i = 0; i < a->nprofiles; i++) {
        const nav_bake_profile *p = &a->profiles[i];
        json_t *links = json_object();
        json_object_set_new(links, "drop", float_json(p->link_drop));
        json_object_set_new(links, "jump", float_json(p->link_jump));
        json_object_set_new(links, "climb", float_json(p->link_climb));
        json_t *o = json_object();
        json_object_set_new(o, "radius", float_json(p->radius));
        json_object_set_new(o, "height", float_json(p->height));
        json_object_set_new(o, "max_climb", float_json(p->max_climb));
        json_object_set_new(o, "max_slope", float_json(p->max_slope));
        json_object_set_new(o, "links", links);
        json_object_set_new(profiles, p->name, o);
    }
    json_object_set_new(set, "profiles", profiles);
    json_t *vols = json_array();
    for (uint32_t i = 0; i < s->nvolumes; i++) {
        const nav_bake_volume *v = &s->volumes[i];
        json_t *xz = json_array();
        for (uint32_t k = 0; k < v->nverts; k++)
            json_array_append_new(
                xz, json_pack("[o,o]", float_json(v->xz[k][0]), float_json(v->xz[k][1])));
        json_array_append_new(vols,
                              json_pack("{s:o,s:o,s:o,s:i}", "xz", xz, "ymin", float_json(v->ymin),
                                        "ymax", float_json(v->ymax), "area", (int)v->area));
    }
    json_object_set_new(set, "area_volumes", vols);
    json_t *src = json_pack("{s:s,s:I,s:o}", "level", level, "level_version",
                            (json_int_t)level_version, "settings", set);
    char *text = src ? api_json_dump(src, &(size_t){0}) : NULL;
    json_decref(src);
    return text;
}

/* The bake's figures, beside the navmesh metadata in the job's result. */
static json_t *report_json(const nav_bake_report *r, const bake_arg *a) {
    json_t *stages = json_object();
    for (int i = 0; i < NAV_BAKE_STAGE_COUNT; i++)
        json_object_set_new(stages, nav_bake_stage_text((nav_bake_stage)i),
                            api_json_num(r->stage_ms[i]));
    json_t *polys = json_object();
    for (uint32_t i = 0; i < a->nprofiles && i < NAV_BAKE_MAX_PROFILES; i++)
        json_object_set_new(polys, a->profiles[i].name,
                            json_pack("{s:I,s:I}", "polygons", (json_int_t)r->polygons[i], "links",
                                      (json_int_t)r->links[i]));
    return json_pack("{s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "total_ms", api_json_num(r->total_ms),
                     "stage_ms", stages, "cells", (json_int_t)r->cells, "spans",
                     (json_int_t)r->spans, "tiles", (json_int_t)r->tiles, "heightfields",
                     (json_int_t)r->heightfields, "peak_tile_bytes", (json_int_t)r->peak_tile_bytes,
                     "peak_bytes", (json_int_t)r->peak_bytes, "profiles", polys);
}

static api_code bake_run(api_job *job, void *argp, json_t **result, api_err *e) {
    bake_arg *a = argp;
    nav_mesh *meshes[NAV_BAKE_MAX_PROFILES] = {0};
    nav_bake_report rep;
    memset(&rep, 0, sizeof rep);
    nav_error ne = {0};
    nav_status st = nav_bake(a->level, &a->settings, a->profiles, a->nprofiles, &a->limits,
                             api_job_progress, job, meshes, &rep, &ne);
    if (st != NAV_OK) {
        /* Too large for the limits, or nothing walkable: the level cannot
           be baked with these settings (the contract's invalid_level). */
        api_code c = st == NAV_E_LIMIT || st == NAV_E_EMPTY ? API_E_INVALID_LEVEL
                     : st == NAV_E_INVALID_ARG              ? API_E_BAD_REQUEST
                                                            : api_code_from_nav(st);
        /* Floors are the side whose corners run counter-clockwise seen from
           above (Recast's rule; both sides would make every hull's underside
           a floor). A level exported with flipped normals bakes to nothing:
           say so, since the geometry looks right in any viewer. */
        return api_fail(e, c, "%s%s", ne.message[0] ? ne.message : nav_status_text(st),
                        st == NAV_E_EMPTY
                            ? " (a walkable surface faces up: its corners run counter-clockwise "
                              "seen from above; a level exported with flipped normals has none)"
                            : "");
    }
    api_job_progress(job, "store", 1.0f);
    if (!api_job_commit(job)) {
        for (uint32_t i = 0; i < a->nprofiles; i++)
            nav_mesh_free(meshes[i]);
        return api_fail(e, API_E_UNAVAILABLE, "cancelled");
    }
    api_profile p[NAV_BAKE_MAX_PROFILES];
    for (uint32_t i = 0; i < a->nprofiles; i++) {
        snprintf(p[i].name, sizeof p[i].name, "%s", a->profiles[i].name);
        p[i].mesh = meshes[i];
    }
    api_entry *ent = NULL;
    int created = 0;
    api_code c =
        api_registry_put_profiles(a->reg, a->name, p, a->nprofiles, a->source, &ent, &created, e);
    if (c != API_OK)
        return c;
    json_t *meta = api_entry_encode(ent);
    api_entry_release(ent);
    json_object_set_new(meta, "report", report_json(&rep, a));
    *result = meta;
    return API_OK;
}

void api_h_bake(api_req *r) {
    int wait = 0;
    const char *level = NULL;
    json_t *root = api_job_request(r, &wait, &level);
    if (!root)
        return;
    bake_arg *a = calloc(1, sizeof *a);
    if (!a) {
        json_decref(root);
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory; retry later");
        return;
    }
    a->settings = nav_bake_settings_default();
    api_err e = {0};
    api_code c = decode_settings(root, a, &e);
    const api_config *cfg = api_req_config(r);
    a->settings.threads = cfg->bake_threads ? cfg->bake_threads : 1;
    nav_error ne = {0};
    if (c == API_OK && nav_bake_check(&a->settings, a->profiles, a->nprofiles, &ne) != NAV_OK)
        c = api_fail(&e, API_E_BAD_REQUEST, "%s", ne.message);
    if (c != API_OK) {
        json_decref(root);
        bake_arg_free(a);
        api_reply_error(r, &e);
        return;
    }
    store_meta lmeta;
    a->level = api_level_load(r, level, &lmeta); /* answers 404 itself */
    if (a->level)
        a->source = source_text(a, level, lmeta.version);
    json_decref(root);
    if (!a->level) {
        bake_arg_free(a);
        return;
    }
    if (!a->source) {
        bake_arg_free(a);
        api_reply_fail(r, API_E_UNAVAILABLE, "out of memory; retry later");
        return;
    }
    a->limits = cfg->bake_limits;
    a->reg = api_req_registry(r);
    snprintf(a->name, sizeof a->name, "%s", api_req_name(r));
    api_job_start(r, wait, "bake", bake_run, bake_arg_free, a);
}
