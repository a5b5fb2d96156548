/*
 * nav_bake: navmeshes baked from level geometry (a triangle soup).
 *
 * Owns the whole pipeline from a nav_level to finished nav_mesh objects, one
 * per agent profile: rasterize the triangles into a column-of-spans
 * heightfield, mark spans walkable by slope, filter low-hanging obstacles,
 * ledges and low clearance, build a compact (open space) heightfield, erode
 * it by the agent radius, partition it into regions, trace and simplify the
 * region contours, build convex polygons, sample a height (detail) mesh, and
 * optionally generate off-mesh links (drop / jump / climb) at ledges.
 *
 * Plain C (libc, libm, pthread): no JSON, HTTP or SQLite, so a game server
 * can bake in-process. Nothing is global; nav_bake may run on any number of
 * threads at once for different bakes.
 *
 * Units: metres and degrees unless a field says "cells". y is up.
 *
 * Sharing between profiles: rasterization, the walkable-slope marking, the
 * filters, the compact heightfield and its edge distance depend only on
 * (height and max_climb in cells, max_slope). Profiles equal in those three
 * share them and differ from the erosion on (a threshold of the shared edge
 * distance by the radius); a profile with different values gets its own
 * heightfield stages too. The report says how many heightfield passes ran.
 *
 * Determinism: the same level and settings give byte-identical meshes
 * (nav_mesh_serialize), whatever the thread count and whatever order the
 * tiles finish in.
 *
 * Tiles (tile_size > 0) are windows of one global grid with a border of
 * radius + 3 cells; polygon edges on a tile line get the other side's
 * vertices, so tiles share exact vertices. Generated links (drop, jump,
 * climb; nav_link_input kind "drop" / "jump" / "climb", one-way) are placed
 * at the middle of each wall edge and every max(3 m, 4 x radius) along it,
 * skipping near-duplicates (README "Baking").
 */
#ifndef NAV_BAKE_H
#define NAV_BAKE_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_level.h"
#include "nav/nav_mesh.h"
#include "nav/nav_status.h"

#define NAV_BAKE_MAX_PROFILES 16
#define NAV_BAKE_PROFILE_NAME_MAX 65 /* bytes of a profile name, including the NUL */
#define NAV_BAKE_MAX_VERTS_PER_POLY 12
#define NAV_BAKE_VOLUME_MAX_VERTS 32 /* corners of an area volume's xz polygon */
#define NAV_BAKE_MAX_VOLUMES 256
#define NAV_BAKE_AREA_WALKABLE 63 /* area id of baked polygons outside any volume (Recast's) */

/* Region partitioning (see README "Baking" for the trade-off). */
typedef enum nav_bake_partition {
    NAV_BAKE_WATERSHED = 0, /* distance field + watershed: round regions, good polygons (default) */
    NAV_BAKE_MONOTONE = 1,  /* sweep rows: cheaper, long thin regions, worse polygons */
} nav_bake_partition;

/*
 * A convex prism that sets the area id of the walkable surface inside it:
 * xz polygon (convex, any winding) extruded from ymin to ymax; a cell is
 * inside when its centre is, a floor when its height is within
 * [ymin, ymax]. area 0 removes the surface (a hole); 1..63 sets the
 * polygons' area. Applied after erosion, as Recast does: agents walk up to
 * a hole's edge (widen the volume by the radius for a margin). Later
 * volumes win where they overlap.
 */
typedef struct nav_bake_volume {
    float xz[NAV_BAKE_VOLUME_MAX_VERTS][2];
    uint32_t nverts; /* 3..NAV_BAKE_VOLUME_MAX_VERTS */
    float ymin, ymax;
    uint8_t area; /* 0..63 */
} nav_bake_volume;

/* Settings shared by all profiles of one bake. Defaults: Recast's demo. */
typedef struct nav_bake_settings {
    float cell_size;                /* 0.3: xz size of a heightfield cell, m */
    float cell_height;              /* 0.2: y resolution of spans, m */
    uint32_t tile_size;             /* 0: one tile; else cells per tile side (>= 16) */
    nav_bake_partition partition;   /* NAV_BAKE_WATERSHED */
    float edge_max_len;             /* 12: longest polygon border edge, m (0: unbounded) */
    float edge_max_error;           /* 1.3: contour simplification tolerance, cells */
    uint32_t region_min_size;       /* 8: regions smaller than this squared (cells) are dropped */
    uint32_t region_merge_size;     /* 20: regions smaller than this squared are merged */
    float detail_sample_dist;       /* 1.8: detail mesh sample spacing, m (0: no inner samples) */
    float detail_sample_max_error;  /* 0.2: the detail mesh's height tolerance, m */
    uint32_t max_verts_per_poly;    /* 6: 3..NAV_BAKE_MAX_VERTS_PER_POLY (tile seams may add
                                       collinear vertices beyond it) */
    const nav_bake_volume *volumes; /* borrowed for the call */
    uint32_t nvolumes;              /* 0..NAV_BAKE_MAX_VOLUMES */
    uint32_t threads; /* tiles baked at once (one tile: profiles sharing a heightfield baked
                         at once); 0 or 1: the calling thread only */
} nav_bake_settings;

/* One agent size. Defaults: Recast's demo agent; no links. */
typedef struct nav_bake_profile {
    char name[NAV_BAKE_PROFILE_NAME_MAX]; /* "default"; non-empty, unique in a bake */
    float radius;     /* 0.6: m, >= 0 (surface closer than this to a wall is not walkable) */
    float height;     /* 2.0: m, > 0 (clearance needed above a walkable span) */
    float max_climb;  /* 0.9: m, >= 0 (step height walked over) */
    float max_slope;  /* 45: degrees, 0..90 exclusive of 90 */
    float link_drop;  /* 0: largest drop from a ledge to a floor below, m (0: none) */
    float link_jump;  /* 0: widest gap jumped across at about equal height, m (0: none) */
    float link_climb; /* 0: highest ledge climbed up onto, m (0: none) */
} nav_bake_profile;

/* Size limits, each checked as early as it can be; 0 means "no limit". */
typedef struct nav_bake_limits {
    uint64_t max_cells;  /* heightfield columns, tile borders included: before any allocation */
    uint64_t max_spans;  /* solid spans (all tiles): after each tile's rasterization */
    uint64_t max_memory; /* bytes held at once: estimated before; checked on each tile's
                            heightfield, then its compact heightfield and profile arrays
                            (times the tiles or profiles running at once) */
} nav_bake_limits;

/* Stages as reported to the progress callback and in nav_bake_report. */
#define NAV_BAKE_STAGE_LIST(X)                                                                     \
    X(NAV_BAKE_STAGE_RASTERIZE, "rasterize")                                                       \
    X(NAV_BAKE_STAGE_FILTER, "filter")                                                             \
    X(NAV_BAKE_STAGE_COMPACT, "compact")                                                           \
    X(NAV_BAKE_STAGE_ERODE, "erode")                                                               \
    X(NAV_BAKE_STAGE_REGIONS, "regions")                                                           \
    X(NAV_BAKE_STAGE_CONTOURS, "contours")                                                         \
    X(NAV_BAKE_STAGE_POLYGONS, "polygons")                                                         \
    X(NAV_BAKE_STAGE_DETAIL, "detail")                                                             \
    X(NAV_BAKE_STAGE_LINKS, "links")                                                               \
    X(NAV_BAKE_STAGE_BUILD, "build")

typedef enum nav_bake_stage {
#define NAV_BAKE_STAGE_ENUM(name, text) name,
    NAV_BAKE_STAGE_LIST(NAV_BAKE_STAGE_ENUM)
#undef NAV_BAKE_STAGE_ENUM
        NAV_BAKE_STAGE_COUNT
} nav_bake_stage;

/* Static name of a stage ("regions"); never NULL. */
const char *nav_bake_stage_text(nav_bake_stage s);

/*
 * Progress callback: `stage` is a static string (nav_bake_stage_text),
 * `progress` is in [0, 1] and never decreases over one bake. Return nonzero
 * to cancel: nav_bake then stops soon and returns NAV_E_CANCELLED. With
 * threads > 1 it is called from one thread at a time (serialized), not
 * necessarily the caller's.
 */
typedef int (*nav_bake_progress_fn)(void *ctx, const char *stage, float progress);

/* What a bake did; filled by nav_bake, also on failure (as far as it got). */
typedef struct nav_bake_report {
    double stage_ms[NAV_BAKE_STAGE_COUNT]; /* wall time per stage, summed over tiles/profiles */
    double total_ms;
    uint64_t cells;         /* heightfield columns over the level bounds (all tiles) */
    uint64_t spans;         /* solid spans after rasterization (all tiles, borders included) */
    uint32_t tiles;         /* 1 without tiling */
    uint32_t heightfields;  /* heightfield passes: 1 when all profiles share them */
    size_t peak_tile_bytes; /* largest working memory of one tile bake */
    size_t peak_bytes;      /* largest working memory of the whole bake at once */
    uint32_t nprofiles;
    uint32_t polygons[NAV_BAKE_MAX_PROFILES]; /* per profile */
    uint32_t links[NAV_BAKE_MAX_PROFILES];    /* generated links per profile */
} nav_bake_report;

/* Recast demo defaults (see the fields). */
nav_bake_settings nav_bake_settings_default(void);
/* The default agent, named "default". */
nav_bake_profile nav_bake_profile_default(void);

/*
 * Validates settings and profiles without baking. On failure returns
 * NAV_E_INVALID_ARG and writes a sentence naming the field in the API's
 * JSON terms: "cell_size must be a finite number > 0",
 * "profiles.default.radius must be a finite number >= 0",
 * "profiles.small.links.drop ...", "area_volumes[2].xz is not convex".
 */
nav_status nav_bake_check(const nav_bake_settings *s, const nav_bake_profile *profiles,
                          uint32_t nprofiles, nav_error *err);

/*
 * Bakes one navmesh per profile from `level`. meshes_out has nprofiles
 * entries; on success each is a new mesh (with detail mesh and generated
 * links) owned by the caller; on failure all are NULL.
 * Statuses: NAV_E_INVALID_ARG (nav_bake_check's message), NAV_E_LIMIT
 * ("the bake needs 12000000 cells, more than the limit of 10000000"),
 * NAV_E_EMPTY (a profile has no walkable surface: "profiles.big has no
 * walkable surface"), NAV_E_CANCELLED
 * (progress returned nonzero), NAV_E_NOMEM.
 * limits, progress and report may be NULL.
 */
nav_status nav_bake(const nav_level *level, const nav_bake_settings *settings,
                    const nav_bake_profile *profiles, uint32_t nprofiles,
                    const nav_bake_limits *limits, nav_bake_progress_fn progress, void *ctx,
                    nav_mesh **meshes_out, nav_bake_report *report, nav_error *err);

#endif
