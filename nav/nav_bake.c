/*
 * nav_bake.c: the public entry points of the baker: defaults, validation of
 * settings and profiles (messages in the API's JSON terms), and nav_bake,
 * which drives the stages in nav_bake_*.c.
 */
#include "nav/nav_bake.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nav/nav_bake_internal.h"

static const char *const nav_bake_stage_names[] = {
#define NAV_BAKE_STAGE_NAME(name, text) text,
    NAV_BAKE_STAGE_LIST(NAV_BAKE_STAGE_NAME)
#undef NAV_BAKE_STAGE_NAME
};

const char *nav_bake_stage_text(nav_bake_stage s) {
    if ((unsigned)s >= NAV_BAKE_STAGE_COUNT)
        return "unknown";
    return nav_bake_stage_names[s];
}

nav_bake_settings nav_bake_settings_default(void) {
    nav_bake_settings s;
    memset(&s, 0, sizeof s);
    s.cell_size = 0.3f;
    s.cell_height = 0.2f;
    s.tile_size = 0;
    s.partition = NAV_BAKE_WATERSHED;
    s.edge_max_len = 12.0f;
    s.edge_max_error = 1.3f;
    s.region_min_size = 8;
    s.region_merge_size = 20;
    s.detail_sample_dist = 1.8f;
    s.detail_sample_max_error = 0.2f;
    s.max_verts_per_poly = 6;
    s.threads = 1;
    return s;
}

nav_bake_profile nav_bake_profile_default(void) {
    nav_bake_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "default");
    p.radius = 0.6f;
    p.height = 2.0f;
    p.max_climb = 0.9f;
    p.max_slope = 45.0f;
    return p;
}

nav_status nav_bake_fail(nav_error *err, nav_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

/* A setting in (lo, hi] or [lo, hi] by `open_lo`; named in JSON terms. */
static bool nav_bake_bad_float(float v, float lo, bool open_lo, float hi) {
    if (!isfinite(v))
        return true;
    if (open_lo ? !(v > lo) : !(v >= lo))
        return true;
    return v > hi;
}

static nav_status nav_bake_check_volume(const nav_bake_volume *v, uint32_t i, nav_error *err) {
    if (v->nverts < 3 || v->nverts > NAV_BAKE_VOLUME_MAX_VERTS)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "area_volumes[%u].xz must have 3 to %d points",
                             i, NAV_BAKE_VOLUME_MAX_VERTS);
    for (uint32_t k = 0; k < v->nverts; k++)
        if (!isfinite(v->xz[k][0]) || !isfinite(v->xz[k][1]) || fabsf(v->xz[k][0]) > 1e7f ||
            fabsf(v->xz[k][1]) > 1e7f)
            return nav_bake_fail(err, NAV_E_INVALID_ARG,
                                 "area_volumes[%u].xz[%u] must be finite numbers within 1e7", i, k);
    if (!isfinite(v->ymin) || !isfinite(v->ymax) || !(v->ymin <= v->ymax))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "area_volumes[%u].ymin and ymax must be finite with ymin <= ymax", i);
    if (v->area >= NAV_MAX_AREAS)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "area_volumes[%u].area must be 0..63", i);
    /* convex: every turn has the same sign (collinear points allowed), non-zero area */
    int sign = 0;
    double area2 = 0;
    for (uint32_t k = 0; k < v->nverts; k++) {
        const float *a = v->xz[k], *b = v->xz[(k + 1) % v->nverts], *c = v->xz[(k + 2) % v->nverts];
        double cr = ((double)b[0] - a[0]) * ((double)c[1] - b[1]) -
                    ((double)b[1] - a[1]) * ((double)c[0] - b[0]);
        area2 += (double)a[0] * b[1] - (double)b[0] * a[1];
        int sg = cr > 0 ? 1 : cr < 0 ? -1 : 0;
        if (sg && sign && sg != sign)
            return nav_bake_fail(err, NAV_E_INVALID_ARG, "area_volumes[%u].xz is not convex", i);
        if (sg)
            sign = sg;
    }
    if (fabs(area2) < 1e-12)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "area_volumes[%u].xz has no area", i);
    return NAV_OK;
}

static nav_status nav_bake_check_profile(const nav_bake_profile *p, uint32_t i,
                                         const nav_bake_profile *all, nav_error *err) {
    size_t len = strnlen(p->name, NAV_BAKE_PROFILE_NAME_MAX);
    if (len == 0 || len >= NAV_BAKE_PROFILE_NAME_MAX)
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "profiles[%u] must have a name of 1 to 64 bytes", i);
    for (uint32_t j = 0; j < i; j++)
        if (strcmp(all[j].name, p->name) == 0)
            return nav_bake_fail(err, NAV_E_INVALID_ARG, "profiles.%s is given twice", p->name);
    const char *n = p->name;
    if (nav_bake_bad_float(p->radius, 0, false, 1000))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "profiles.%s.radius must be a finite number >= 0 and <= 1000", n);
    if (nav_bake_bad_float(p->height, 0, true, 1000))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "profiles.%s.height must be a finite number > 0 and <= 1000", n);
    if (nav_bake_bad_float(p->max_climb, 0, false, 1000))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "profiles.%s.max_climb must be a finite number >= 0 and <= 1000", n);
    if (!isfinite(p->max_slope) || p->max_slope < 0 || p->max_slope >= 90)
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "profiles.%s.max_slope must be a finite number >= 0 and < 90", n);
    const struct {
        float v;
        const char *f;
    } links[] = {{p->link_drop, "drop"}, {p->link_jump, "jump"}, {p->link_climb, "climb"}};
    for (size_t k = 0; k < 3; k++)
        if (nav_bake_bad_float(links[k].v, 0, false, 1000))
            return nav_bake_fail(err, NAV_E_INVALID_ARG,
                                 "profiles.%s.links.%s must be a finite number >= 0 and <= 1000", n,
                                 links[k].f);
    return NAV_OK;
}

nav_status nav_bake_check(const nav_bake_settings *s, const nav_bake_profile *profiles,
                          uint32_t nprofiles, nav_error *err) {
    if (!s)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "settings are missing");
    if (nav_bake_bad_float(s->cell_size, 0.001f, false, 100))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "cell_size must be a finite number > 0 (0.001 to 100)");
    if (nav_bake_bad_float(s->cell_height, 0.001f, false, 100))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "cell_height must be a finite number > 0 (0.001 to 100)");
    if (s->tile_size != 0 && (s->tile_size < 16 || s->tile_size > 4096))
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "tile_size must be 0 or 16 to 4096 cells");
    if (s->partition != NAV_BAKE_WATERSHED && s->partition != NAV_BAKE_MONOTONE)
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "partition must be \"watershed\" or \"monotone\"");
    if (nav_bake_bad_float(s->edge_max_len, 0, false, 1e6f))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "edge_max_len must be a finite number >= 0 (0: unbounded)");
    if (nav_bake_bad_float(s->edge_max_error, 0, false, 1000))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "edge_max_error must be a finite number >= 0 and <= 1000 (cells)");
    if (s->region_min_size > 10000)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "region_min_size must be 0 to 10000 cells");
    if (s->region_merge_size > 10000)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "region_merge_size must be 0 to 10000 cells");
    if (nav_bake_bad_float(s->detail_sample_dist, 0, false, 1e6f))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "detail_sample_dist must be a finite number >= 0 (0: no samples)");
    if (nav_bake_bad_float(s->detail_sample_max_error, 0, false, 1e6f))
        return nav_bake_fail(err, NAV_E_INVALID_ARG,
                             "detail_sample_max_error must be a finite number >= 0");
    if (s->max_verts_per_poly < 3 || s->max_verts_per_poly > NAV_BAKE_MAX_VERTS_PER_POLY)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "max_verts_per_poly must be 3 to %d",
                             NAV_BAKE_MAX_VERTS_PER_POLY);
    if (s->nvolumes > NAV_BAKE_MAX_VOLUMES || (s->nvolumes && !s->volumes))
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "area_volumes must have at most %d entries",
                             NAV_BAKE_MAX_VOLUMES);
    for (uint32_t i = 0; i < s->nvolumes; i++) {
        nav_status st = nav_bake_check_volume(&s->volumes[i], i, err);
        if (st != NAV_OK)
            return st;
    }
    if (s->threads > 1024)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "threads must be 0 to 1024");
    if (nprofiles == 0 || nprofiles > NAV_BAKE_MAX_PROFILES || !profiles)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "profiles must have 1 to %d entries",
                             NAV_BAKE_MAX_PROFILES);
    for (uint32_t i = 0; i < nprofiles; i++) {
        nav_status st = nav_bake_check_profile(&profiles[i], i, profiles, err);
        if (st != NAV_OK)
            return st;
    }
    return NAV_OK;
}

nav_status nav_bake(const nav_level *level, const nav_bake_settings *settings,
                    const nav_bake_profile *profiles, uint32_t nprofiles,
                    const nav_bake_limits *limits, nav_bake_progress_fn progress, void *ctx,
                    nav_mesh **meshes_out, nav_bake_report *report, nav_error *err) {
    if (report)
        memset(report, 0, sizeof *report);
    if (meshes_out)
        for (uint32_t i = 0; i < nprofiles && i < NAV_BAKE_MAX_PROFILES; i++)
            meshes_out[i] = NULL;
    if (!level || !meshes_out)
        return nav_bake_fail(err, NAV_E_INVALID_ARG, "level and meshes_out are required");
    nav_status st = nav_bake_check(settings, profiles, nprofiles, err);
    if (st != NAV_OK)
        return st;
    return nb_run(level, settings, profiles, nprofiles, limits, progress, ctx, meshes_out, report,
                  err);
}
