/*
 * svc_bake: `navd bake LEVEL.obj --out MESH.json [settings]`, the offline
 * baker for tooling and CI: reads a level (OBJ), bakes one profile with
 * nav_bake, writes the navmesh as upload JSON. Progress goes to stderr: a
 * bar redrawn in place on a terminal, one plain line per stage otherwise
 * (logs stay readable). Exit 0 on success, 1 when the bake fails (the
 * reason on stderr, naming the setting), 2 for bad usage.
 */
#include "service/svc_bake.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_export.h"
#include "nav/nav_bake.h"
#include "nav/nav_level.h"

typedef enum { OPT_F, OPT_U, OPT_PART } svc_bake_kind;

/* The settings table: flag, where it goes, what it is. */
typedef struct svc_bake_opt {
    const char *flag;
    svc_bake_kind kind;
    size_t off;
    int in_profile; /* 1: nav_bake_profile field, 0: nav_bake_settings */
    const char *help;
} svc_bake_opt;

#define S_(f) offsetof(nav_bake_settings, f), 0
#define P_(f) offsetof(nav_bake_profile, f), 1
static const svc_bake_opt OPTS[] = {
    {"--cell-size", OPT_F, S_(cell_size), "cell size, m (0.3)"},
    {"--cell-height", OPT_F, S_(cell_height), "cell height, m (0.2)"},
    {"--tile-size", OPT_U, S_(tile_size), "cells per tile side, 0 = one tile (0)"},
    {"--threads", OPT_U, S_(threads), "tiles baked at once, and the corner graph's threads (1)"},
    {"--partition", OPT_PART, S_(partition), "watershed | monotone (watershed)"},
    {"--edge-max-len", OPT_F, S_(edge_max_len), "longest border edge, m (12)"},
    {"--edge-max-error", OPT_F, S_(edge_max_error), "contour tolerance, cells (1.3)"},
    {"--region-min-size", OPT_U, S_(region_min_size), "smallest island side, cells (8)"},
    {"--region-merge-size", OPT_U, S_(region_merge_size), "regions merged below, cells (20)"},
    {"--detail-sample-dist", OPT_F, S_(detail_sample_dist), "height samples every, m (1.8)"},
    {"--detail-sample-max-error", OPT_F, S_(detail_sample_max_error), "height tolerance, m (0.2)"},
    {"--max-verts-per-poly", OPT_U, S_(max_verts_per_poly), "3..12 (6)"},
    {"--radius", OPT_F, P_(radius), "agent radius, m (0.6)"},
    {"--height", OPT_F, P_(height), "agent height, m (2.0)"},
    {"--max-climb", OPT_F, P_(max_climb), "step height, m (0.9)"},
    {"--max-slope", OPT_F, P_(max_slope), "degrees (45)"},
    {"--drop", OPT_F, P_(link_drop), "drop links up to, m (0: none)"},
    {"--jump", OPT_F, P_(link_jump), "jump links across gaps up to, m (0: none)"},
    {"--climb", OPT_F, P_(link_climb), "climb links up to, m (0: none)"},
};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

static void usage(FILE *f) {
    fprintf(f, "usage: navd bake LEVEL.obj --out MESH.json [settings]\n"
               "  --out PATH                  where to write the navmesh JSON (- for stdout)\n");
    for (size_t i = 0; i < NOPTS; i++)
        fprintf(f, "  %-27s %s\n", OPTS[i].flag, OPTS[i].help);
}

typedef struct svc_bake_progress {
    int tty;
    const char *last_stage;
    int last_pct;
    unsigned printed; /* stages already given a plain line (bit per stage) */
} svc_bake_progress;

static unsigned stage_bit(const char *stage) {
    for (int i = 0; i < NAV_BAKE_STAGE_COUNT; i++)
        if (strcmp(nav_bake_stage_text((nav_bake_stage)i), stage) == 0)
            return 1u << i;
    return 0;
}

static int on_progress(void *ctx, const char *stage, float p) {
    svc_bake_progress *pr = ctx;
    int pct = (int)floorf(p * 100.0f + 0.5f);
    if (pr->tty) {
        if (pct == pr->last_pct && stage == pr->last_stage)
            return 0;
        char bar[41];
        int n = pct * 40 / 100;
        for (int i = 0; i < 40; i++)
            bar[i] = i < n ? '#' : '.';
        bar[40] = '\0';
        fprintf(stderr, "\r[%s] %3d%% %-10s", bar, pct, stage);
        fflush(stderr);
    } else if (!(pr->printed & stage_bit(stage)) || pct / 10 != pr->last_pct / 10) {
        /* a line per new stage and per 10 %: tiles cycle through the stages
           many times, which a log should not repeat */
        fprintf(stderr, "bake: %3d%% %s\n", pct, stage);
        pr->printed |= stage_bit(stage);
    } else {
        return 0; /* keep last_pct at the last printed line */
    }
    pr->last_stage = stage;
    pr->last_pct = pct;
    return 0;
}

static int parse_opt(const svc_bake_opt *o, const char *val, nav_bake_settings *s,
                     nav_bake_profile *p) {
    char *base = o->in_profile ? (char *)p : (char *)s;
    char *end = NULL;
    errno = 0;
    if (o->kind == OPT_PART) {
        if (strcmp(val, "watershed") == 0)
            s->partition = NAV_BAKE_WATERSHED;
        else if (strcmp(val, "monotone") == 0)
            s->partition = NAV_BAKE_MONOTONE;
        else
            return -1;
        return 0;
    }
    if (o->kind == OPT_F) {
        float v = strtof(val, &end);
        if (errno || end == val || *end)
            return -1;
        memcpy(base + o->off, &v, sizeof v);
        return 0;
    }
    unsigned long v = strtoul(val, &end, 10);
    if (errno || end == val || *end || val[0] == '-' || v > UINT32_MAX)
        return -1;
    uint32_t u = (uint32_t)v;
    memcpy(base + o->off, &u, sizeof u);
    return 0;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int svc_bake_main(int argc, char **argv) {
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    const char *level_path = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
            if (level_path) {
                fprintf(stderr, "navd bake: more than one level given (%s)\n", argv[i]);
                return 2;
            }
            level_path = argv[i];
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "navd bake: %s needs a value\n", argv[i]);
            return 2;
        }
        if (strcmp(argv[i], "--out") == 0) {
            out = argv[++i];
            continue;
        }
        size_t k = 0;
        while (k < NOPTS && strcmp(OPTS[k].flag, argv[i]) != 0)
            k++;
        if (k == NOPTS) {
            fprintf(stderr, "navd bake: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (parse_opt(&OPTS[k], argv[i + 1], &s, &p) != 0) {
            fprintf(stderr, "navd bake: %s: not a valid value: %s\n", argv[i], argv[i + 1]);
            return 2;
        }
        i++;
    }
    if (!level_path || !out) {
        fprintf(stderr, "navd bake: %s is required\n", level_path ? "--out" : "a level file");
        usage(stderr);
        return 2;
    }
    nav_error e = {0};
    if (nav_bake_check(&s, &p, 1, &e) != NAV_OK) {
        fprintf(stderr, "navd bake: %s\n", e.message);
        return 2;
    }
    size_t len = 0;
    char *text = read_all(level_path, &len);
    if (!text) {
        fprintf(stderr, "navd bake: cannot read %s: %s\n", level_path, strerror(errno));
        return 1;
    }
    nav_level *lv = NULL;
    nav_status st = nav_level_from_obj(text, len, 0, &lv, &e);
    free(text);
    if (st != NAV_OK) {
        fprintf(stderr, "navd bake: %s: %s\n", level_path, e.message);
        return 1;
    }
    svc_bake_progress pr = {.tty = isatty(STDERR_FILENO), .last_pct = -1};
    nav_mesh *m = NULL;
    nav_bake_report r;
    st = nav_bake(lv, &s, &p, 1, NULL, on_progress, &pr, &m, &r, &e);
    if (pr.tty)
        fputc('\n', stderr);
    nav_level_free(lv);
    if (st != NAV_OK) {
        fprintf(stderr, "navd bake: %s\n", e.message);
        return 1;
    }
    char err[256];
    int rc = api_mesh_save_json(m, out, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "navd bake: %s\n", err);
    else
        fprintf(stderr,
                "bake: %u polygons, %u vertices, %u components, %.1f m2, %u links in %.0f ms "
                "(%u tile%s)\n",
                nav_mesh_polygon_count(m), nav_mesh_vertex_count(m), nav_mesh_component_count(m),
                nav_mesh_area(m), nav_mesh_link_count(m), r.total_ms, r.tiles,
                r.tiles == 1 ? "" : "s");
    nav_mesh_free(m);
    return rc == 0 ? 0 : 1;
}
