/*
 * svc_bake_volume: the offline flight-volume bake (see svc_bake_volume.h).
 *
 * Options (every one optional but an output):
 *   --voxel-size M        voxel side, default 0.5
 *   --radius M            agent radius, default 0.5
 *   --bounds x0,y0,z0,x1,y1,z1   the box to voxelize, default the level's bounds
 *   --max-volume-voxels N refuse grids of more voxels (default 134217728, as the server)
 *   --out FILE            write the volume blob (nav_vol_serialize) to FILE
 *   --db PATH --name NAME store it in a navd database as volume NAME (a new version)
 *   --max-level-triangles N   (default 4000000, as the server)
 * Progress goes to stderr: one line per stage and every 10 %; the summary
 * (dims, free and blocked voxels, components, bytes, seconds) to stdout.
 */
#include "service/svc_bake_volume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "nav/nav_level.h"
#include "nav/nav_vol.h"
#include "storage/store.h"

typedef struct bv_opts {
    const char *level, *out, *db, *name;
    nav_vol_settings s;
    int has_bounds;
    unsigned long long max_tris;
} bv_opts;

static void usage(FILE *f) {
    fprintf(f, "usage: navd bake-volume LEVEL.obj [--voxel-size M] [--radius M]\n"
               "         [--bounds x0,y0,z0,x1,y1,z1] [--max-volume-voxels N]\n"
               "         [--max-level-triangles N] (--out FILE | --db PATH --name NAME)\n");
}

static int parse_num(const char *flag, const char *text, double lo, double *out) {
    char *end;
    errno = 0;
    double d = strtod(text, &end);
    if (errno || end == text || *end || !(d >= lo) || d > 1e30) {
        fprintf(stderr, "navd bake-volume: %s must be a number >= %g (got '%s')\n", flag, lo, text);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_args(int argc, char **argv, bv_opts *o) {
    memset(o, 0, sizeof *o);
    o->s.voxel_size = 0.5f;
    o->s.radius = 0.5f;
    o->s.max_voxels = 134217728ull;
    o->max_tris = 4000000ull;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 1;
        }
        if (a[0] != '-') {
            if (o->level) {
                fprintf(stderr, "navd bake-volume: one level file only ('%s' and '%s')\n", o->level,
                        a);
                return -1;
            }
            o->level = a;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "navd bake-volume: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        double d;
        if (!strcmp(a, "--voxel-size")) {
            if (parse_num(a, val, 1e-9, &d))
                return -1;
            o->s.voxel_size = (float)d;
        } else if (!strcmp(a, "--radius")) {
            if (parse_num(a, val, 0, &d))
                return -1;
            o->s.radius = (float)d;
        } else if (!strcmp(a, "--max-volume-voxels")) {
            if (parse_num(a, val, 1, &d))
                return -1;
            o->s.max_voxels = (uint64_t)d;
        } else if (!strcmp(a, "--max-level-triangles")) {
            if (parse_num(a, val, 1, &d))
                return -1;
            o->max_tris = (unsigned long long)d;
        } else if (!strcmp(a, "--bounds")) {
            float *b[6] = {&o->s.bmin[0], &o->s.bmin[1], &o->s.bmin[2],
                           &o->s.bmax[0], &o->s.bmax[1], &o->s.bmax[2]};
            const char *p = val;
            for (int k = 0; k < 6; k++) {
                char *end;
                *b[k] = strtof(p, &end);
                if (end == p || (k < 5 && *end != ',') || (k == 5 && *end)) {
                    fprintf(stderr, "navd bake-volume: --bounds must be x0,y0,z0,x1,y1,z1\n");
                    return -1;
                }
                p = end + 1;
            }
            o->has_bounds = 1;
        } else if (!strcmp(a, "--out")) {
            o->out = val;
        } else if (!strcmp(a, "--db")) {
            o->db = val;
        } else if (!strcmp(a, "--name")) {
            o->name = val;
        } else {
            fprintf(stderr, "navd bake-volume: unknown option %s\n", a);
            return -1;
        }
    }
    if (!o->level || (!o->out && !o->db) || (!o->db != !o->name)) {
        usage(stderr);
        return -1;
    }
    return 0;
}

typedef struct bv_progress {
    const char *stage;
    int tenth;
} bv_progress;

static int on_progress(void *ctx, const char *stage, float p) {
    bv_progress *g = ctx;
    int tenth = (int)(p * 10);
    if (stage != g->stage || tenth != g->tenth) {
        fprintf(stderr, "navd bake-volume: %-12s %3d %%\n", stage, (int)(p * 100 + 0.5f));
        g->stage = stage;
        g->tenth = tenth;
    }
    return 0;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (cap ? cap * 2 : 1 << 20);
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

static int write_out(const char *path, const nav_vol *v) {
    uint8_t *blob;
    size_t len;
    if (nav_vol_serialize(v, &blob, &len) != NAV_OK)
        return -1;
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(blob, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(blob);
    return ok ? 0 : -1;
}

int svc_bake_volume_main(int argc, char **argv) {
    bv_opts o;
    int pr = parse_args(argc, argv, &o);
    if (pr)
        return pr > 0 ? 0 : 2;
    size_t len = 0;
    char *text = read_file(o.level, &len);
    if (!text) {
        fprintf(stderr, "navd bake-volume: cannot read %s: %s\n", o.level, strerror(errno));
        return 1;
    }
    nav_level *l = NULL;
    nav_error ne = {0};
    nav_status st = nav_level_from_obj(text, len, (uint32_t)o.max_tris, &l, &ne);
    free(text);
    if (st != NAV_OK) {
        fprintf(stderr, "navd bake-volume: %s is not a usable level: %s\n", o.level, ne.message);
        return 1;
    }
    if (!o.has_bounds)
        nav_level_bounds(l, o.s.bmin, o.s.bmax);
    uint64_t voxels = 0;
    if ((st = nav_vol_check(&o.s, &voxels, &ne)) != NAV_OK) {
        fprintf(stderr, "navd bake-volume: %s%s\n", ne.message,
                st == NAV_E_LIMIT ? " (--max-volume-voxels)" : "");
        nav_level_free(l);
        return 2;
    }
    fprintf(stderr, "navd bake-volume: %s: %u triangles, %llu voxels\n", o.level,
            nav_level_triangle_count(l), (unsigned long long)voxels);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    nav_vol *v = NULL;
    bv_progress g = {NULL, -1};
    st = nav_vol_bake(nav_level_vertices(l), nav_level_vertex_count(l), nav_level_triangles(l),
                      nav_level_triangle_count(l), &o.s, on_progress, &g, &v, &ne);
    nav_level_free(l);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != NAV_OK) {
        fprintf(stderr, "navd bake-volume: the bake failed: %s\n", ne.message);
        return 1;
    }
    nav_vol_info in;
    nav_vol_get_info(v, &in);
    printf("dims %u x %u x %u, %llu free voxels, %llu blocked, %u components, %zu bytes, %.2f s\n",
           in.dims[0], in.dims[1], in.dims[2], (unsigned long long)in.free_voxels,
           (unsigned long long)in.blocked_voxels, in.components, in.bytes,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    int rc = 0;
    if (o.out && write_out(o.out, v) != 0) {
        fprintf(stderr, "navd bake-volume: cannot write %s\n", o.out);
        rc = 1;
    }
    if (rc == 0 && o.db) {
        char err[256] = "";
        if (api_volume_install(o.db, o.name, v, o.level, &o.s, err, sizeof err) != 0) {
            fprintf(stderr, "navd bake-volume: %s\n", err);
            rc = 1;
        } else {
            printf("stored as volume '%s' in %s\n", o.name, o.db);
        }
        v = NULL; /* taken */
    }
    nav_vol_free(v);
    return rc;
}
