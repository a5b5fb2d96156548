/*
 * nav_bake_internal: the data the bake stages (nav/nav_bake_*.c) pass along.
 * Private to nav/.
 *
 * Grid conventions (all stages):
 * - The grid is global to the bake: cell (x, z) covers
 *   [bmin.x + x*cs, +cs) x [bmin.z + z*cs, +cs) where bmin is the level's
 *   bounds minimum. A tile is a window of that grid (with a border of extra
 *   cells), so two tiles compute the same integer vertex for the same point:
 *   that is what makes tile borders share exact vertices.
 * - Span heights are integers in cell_height units above bmin.y.
 * - Directions: 0 = -x, 1 = +z, 2 = +x, 3 = -z (nb_dx/nb_dz); dir + 1 turns
 *   clockwise when seen from above with x right and z down.
 * - All arrays are flat (no per-span allocation); sizes are counted first.
 */
#ifndef NAV_BAKE_INTERNAL_H
#define NAV_BAKE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nav/nav_bake.h"

#define NB_NONE 0xffffffffu
#define NB_NOCON 63           /* floors a cell may link to per neighbour (Recast: 6 bits) */
#define NB_SPAN_MAX 0xffff    /* highest span height (cells) */
#define NB_BORDER_REG 0x8000u /* region flag: the tile border */
#define NB_AREA_NULL 0        /* not walkable */
#define NB_WALKABLE NAV_BAKE_AREA_WALKABLE

static const int nb_dx[4] = {-1, 0, 1, 0};
static const int nb_dz[4] = {0, 1, 0, -1};

/* Writes a formatted message into err (when not NULL) and returns st. */
nav_status nav_bake_fail(nav_error *err, nav_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- progress / cancellation / accounting shared by one bake ---- */
typedef struct nb_ctx nb_ctx;
/* True when the bake was cancelled; long loops call it every few rows,
   and it polls the caller's callback (nav_bake_tile.c). */
bool nb_cancelled(nb_ctx *c);

/* ---- heightfield: columns of solid spans (nav_bake_raster.c) ---- */
typedef struct nb_span {
    uint16_t smin, smax;
    uint8_t area;
    uint32_t next; /* next span up in the column, NB_NONE */
} nb_span;

typedef struct nb_hf {
    int x0, z0;    /* grid offset of this window's cell (0, 0) */
    int w, h;      /* columns in x, z */
    float bmin[3]; /* world position of grid cell (0, 0) of the bake (not the window) */
    float cs, ch;
    uint32_t *col;  /* w*h column heads (lowest span), NB_NONE when empty */
    nb_span *spans; /* pool */
    uint32_t nspans, cap;
    uint32_t free_head; /* recycled pool entries */
    uint64_t live;      /* spans in columns */
} nb_hf;

nav_status nb_hf_init(nb_hf *hf, int x0, int z0, int w, int h, const float bmin[3], float cs,
                      float ch);
void nb_hf_free(nb_hf *hf);
/* Rasterizes triangles ids[0..n) (ids NULL: 0..n), only what falls in the
   window; a triangle is walkable when its normal's y > cos(max_slope).
   merge_thr: spans whose tops are within this many cells merge areas. */
nav_status nb_rasterize(nb_hf *hf, const float *verts, const uint32_t *tris, uint32_t n,
                        const uint32_t *ids, float walkable_cos, int merge_thr, float ymax_world,
                        nb_ctx *c);

/* ---- filters (nav_bake_filter.c) ---- */
void nb_filter_low_obstacles(nb_hf *hf, int climb);
/* false when cancelled (the slowest filter polls) */
bool nb_filter_ledges(nb_hf *hf, int height, int climb, nb_ctx *c);
void nb_filter_low_height(nb_hf *hf, int height);

/* ---- compact (open) heightfield (nav_bake_compact.c) ---- */
typedef struct nb_chf {
    int x0, z0, w, h;
    int border; /* cells of the window that belong to neighbouring tiles */
    float bmin[3], cs, ch;
    int walk_height, walk_climb;
    uint32_t *first; /* w*h + 1: spans of cell i are [first[i], first[i+1]) */
    uint32_t nspans;
    uint16_t *y;     /* floor height (cells) */
    uint8_t *hgt;    /* clearance (cells, clamped to 255); freed by nb_chf_link */
    uint8_t *area;   /* after filters, before volumes and erosion */
    uint16_t *edist; /* chamfer distance to the walkable area's edge (nb_edge_distance) */
    uint32_t *nei;   /* 4 per span: the neighbour span in each direction or NB_NONE
                        (nb_chf_link; every later sweep reads it) */
    int max_y;
} nb_chf;

/* The compact arrays of hf's walkable floors (without links: the caller
   frees hf, then links). */
nav_status nb_chf_build(const nb_hf *hf, int height, int climb, int border, nb_chf *chf);
/* The neighbour table (chf->nei); frees the clearances. */
nav_status nb_chf_link(nb_chf *chf, nb_ctx *ctx);
void nb_chf_free(nb_chf *chf);
void nb_mark_volumes(const nb_chf *chf, uint8_t *area, const nav_bake_volume *v, uint32_t n);

/* ---- per-profile work on a shared chf ---- */
typedef struct nb_work {
    const nb_chf *chf;
    uint8_t *area;  /* per span, this profile's copy (eroded) */
    uint16_t *dist; /* distance field (watershed) */
    uint16_t *reg;  /* region per span: 0 none, NB_BORDER_REG flag for tile borders */
    uint16_t nregs; /* region ids are 1..nregs-1 */
} nb_work;

/* The shared edge distance (chf->edist), once per heightfield (needs
   chf->nei). */
nav_status nb_edge_distance(nb_chf *chf);
/* The neighbour span of s in direction dir from chf->nei, or NB_NONE. */
static inline uint32_t nb_nei4(const nb_chf *chf, uint32_t s, int dir) {
    return chf->nei[(size_t)s * 4 + (size_t)dir];
}
/* Both sweeps of a chamfer distance transform over seeded d (needs
   chf->nei); the maximum. */
uint16_t nb_chamfer(const nb_chf *chf, uint16_t *d);
/* This profile's areas: chf's, minus spans closer than radius (cells) to
   the edge. */
void nb_erode(nb_work *w, int radius);
/* Partitions into regions (nav_bake_region.c, nav_bake_monotone.c). */
nav_status nb_regions_watershed(nb_work *w, int min_area, int merge_area, nb_ctx *c);
nav_status nb_regions_monotone(nb_work *w, int min_area, int merge_area, nb_ctx *c);
/* Drops and merges small regions, then compacts the ids (nav_bake_regmerge.c). */
nav_status nb_regions_merge(nb_work *w, int min_area, int merge_area, uint16_t *nregs);
/* Marks the tile border cells with border regions (first ids). */
void nb_paint_border(nb_work *w, uint16_t *id);

/* ---- contours (nav_bake_contour.c) ---- */
#define NB_CV_BORDER 0x10000 /* vertex on the tile border (4th int) */
#define NB_CV_AREA_EDGE 0x20000
#define NB_CV_REG_MASK 0xffff
typedef struct nb_contour {
    int *v; /* 4 ints per vertex: x, y, z, neighbour region | flags (grid coordinates) */
    int nv;
    uint16_t reg;
    uint8_t area;
} nb_contour;
typedef struct nb_cset {
    nb_contour *c;
    int n;
} nb_cset;
nav_status nb_contours(const nb_work *w, float max_error, int max_edge_len, nb_cset *cs, nb_ctx *c);
void nb_cset_free(nb_cset *cs);

/* ---- polygons (nav_bake_poly.c) ---- */
typedef struct nb_pmesh {
    int *v; /* 3 per vertex: x, y, z (grid) */
    int nv, cap_v;
    uint32_t *p; /* nvp per polygon, NB_NONE past the last vertex */
    uint16_t *reg;
    uint8_t *area;
    int np, cap_p, nvp;
    uint32_t *vhash; /* vertex weld table */
    int hash_size;
    int *vnext;
} nb_pmesh;
nav_status nb_polys(const nb_cset *cs, int nvp, nb_pmesh *pm);
void nb_pmesh_free(nb_pmesh *pm);

/* ---- height (detail) mesh (nav_bake_detail.c) ---- */
typedef struct nb_dmesh {
    float *v; /* 3 per extra detail vertex (world) */
    uint32_t nv, cap_v;
    uint32_t *t; /* 3 per triangle: a polygon-mesh vertex id, or NB_DLOCAL + extra vertex id */
    uint32_t nt, cap_t;
    uint32_t *ptris; /* 2 per polygon: first, count */
} nb_dmesh;
#define NB_DLOCAL 0x80000000u
nav_status nb_detail(const nb_work *w, const nb_pmesh *pm, float sample_dist, float max_error,
                     nb_dmesh *dm, nb_ctx *c);
void nb_dmesh_free(nb_dmesh *dm);

/* World position of grid vertex v (x, y, z ints). */
static inline void nb_world(const float bmin[3], float cs, float ch, const int *v, float out[3]) {
    out[0] = bmin[0] + (float)v[0] * cs;
    out[1] = bmin[1] + (float)v[1] * ch;
    out[2] = bmin[2] + (float)v[2] * cs;
}

/* ---- contour/poly helpers shared across files ---- */
long nb_tri2(const int *a, const int *b, const int *c);
bool nb_seg_intersect(const int *a, const int *b, const int *c, const int *d);
long nb_contour_area2(const nb_contour *c);
nav_status nb_holes_merge(nb_cset *cs);

/* ---- assembly of tiles into one mesh (nav_bake_assemble.c) ---- */
typedef struct nb_out {
    nb_pmesh pm;
    nb_dmesh dm;
} nb_out;
typedef struct nb_grid {
    float bmin[3], cs, ch;
    int ts, ntx, ntz;  /* ts 0: one tile */
    int ytol;          /* cells: a vertex on a tile line joins an edge within this height */
    double min_island; /* m^2: tiled bakes drop connected groups of polygons smaller */
    uint32_t threads;  /* for the mesh's corner graph; 0: none (a mesh only probed for links) */
} nb_grid;
/* Joins the tiles' polygons of profile p (out[tile * stride + p]) into one
   mesh; NAV_E_EMPTY when there is no polygon. */
nav_status nb_assemble(const nb_out *out, uint32_t stride, uint32_t p, const nb_grid *g,
                       const nav_link_input *links, uint32_t nlinks, nav_mesh **mesh,
                       uint32_t *npolys, nav_error *err);

/* ---- generated links (nav_bake_links.c) ---- */
typedef struct nb_trigrid nb_trigrid;
nb_trigrid *nb_trigrid_new(const nav_level *lv);
void nb_trigrid_free(nb_trigrid *g);
/* Links for profile pr on mesh m (malloc'd array in *out). */
nav_status nb_links(const nav_mesh *m, const nb_trigrid *g, const nav_bake_profile *pr, float cs,
                    nav_link_input **out, uint32_t *nout);

/* ---- the driver (nav_bake_tile.c) ---- */
nav_status nb_run(const nav_level *level, const nav_bake_settings *s,
                  const nav_bake_profile *profiles, uint32_t nprofiles,
                  const nav_bake_limits *limits, nav_bake_progress_fn fn, void *ud,
                  nav_mesh **meshes_out, nav_bake_report *report, nav_error *err);
/* Reports that `units` of work of `stage` finished (progress, cancellation). */
void nb_step(nb_ctx *c, nav_bake_stage stage, double ms, uint64_t units);

#endif
