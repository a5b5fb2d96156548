/*
 * test_fixtures: meshes built by hand (coordinates documented here so tests
 * can derive expected values by hand) and a seeded random mesh generator.
 *
 * All fixtures are flat at y = 0 unless stated; x and z in metres. Cells are
 * axis-aligned squares; "cell (i, j)" spans x in [i, i+1], z in [j, j+1] times
 * the stated cell size.
 */
#ifndef TEST_FIXTURES_H
#define TEST_FIXTURES_H

#include <stdint.h>

#include "nav/nav_mesh.h"
#include "nav/nav_query.h"

/* ---- builder: assemble an input by hand, then build ---- */
typedef struct fx_builder fx_builder;

fx_builder *fx_new(void);
/* Adds a vertex; returns its index. */
uint32_t fx_vert(fx_builder *b, float x, float y, float z);
/* Adds a polygon of n vertex ids (any winding); returns its index. */
uint32_t fx_poly(fx_builder *b, uint32_t n, const uint32_t *ids, uint8_t area);
/* Adds an axis-aligned quad cell [x0,x1] x [z0,z1] at height y, reusing
   vertices at equal coordinates; returns the polygon index. */
uint32_t fx_quad(fx_builder *b, float x0, float z0, float x1, float z1, float y, uint8_t area);
/* Adds an off-mesh link. */
void fx_link(fx_builder *b, const float start[3], const float end[3], float radius, int bidir,
             uint8_t area, const char *kind);
/* A view of what was added so far (valid until the next add or free). */
void fx_input(const fx_builder *b, nav_mesh_input *out);
/* Builds (ck_assert on failure, printing the error) and frees the builder. */
nav_mesh *fx_build(fx_builder *b);
void fx_free(fx_builder *b);

/* ---- hand-made fixtures ---- */

/* A square [0,10] x [0,10] with a square hole [4,6] x [4,6]: the 3 x 3 grid
   with lines at 0, 4, 6, 10 minus the centre cell, as 8 quads. */
nav_mesh *fx_square_with_hole(void);

/* L corridor, width 2: cells [0,10]x[0,2] (5 quads of 2 m) and [8,10]x[2,10]
   (4 quads of 2 m). Start at (1,0,1), end at (9,0,9): the path bends at
   the inner corner (8, 0, 2). */
nav_mesh *fx_l_corridor(void);

/* U corridor, width 2: [0,2]x[0,10] up, [0,10]x[8,10] across, [8,10]x[0,10]
   down, as 2 m quads. Inner corners at (2,0,8) and (8,0,8). */
nav_mesh *fx_u_corridor(void);

/* Two islands: quads [0,4]x[0,4] and [10,14]x[0,4]; not connected. */
nav_mesh *fx_two_islands(void);

/*
 * A bridge over a floor, all quads:
 * - floor y = 0 over [0,30] x [0,10] with grid lines x = 0,5,10,20,25,30 and
 *   z = 0,4,6,10, except the two cells [5,10]x[4,6] and [20,25]x[4,6];
 *   so there IS floor under the deck ([10,20]x[4,6] at y = 0);
 * - west ramp [5,10]x[4,6] rising from y = 0 at x = 5 to y = 5 at x = 10;
 * - deck [10,20]x[4,6] at y = 5;
 * - east ramp [20,25]x[4,6] falling from y = 5 at x = 20 to y = 0 at x = 25.
 * Ramps join the floor only at x = 5 and x = 25 (their long sides are walls),
 * so from the deck (15,5,5) to the floor below (15,0,5) a path goes down a
 * ramp and around through the z < 4 or z > 6 strip.
 */
nav_mesh *fx_bridge(void);

/* ---- seeded random meshes ---- */
typedef struct fx_random_opts {
    uint32_t width, height; /* grid cells */
    float cell;             /* cell size, metres */
    float hole_ratio;       /* 0..1, share of cells removed (walls, pillars) */
    int merge_runs;         /* merge horizontal runs into polygons with collinear vertices */
    int triangulate;        /* split some quads into triangles along a random diagonal */
    int bridge;             /* add a second level overlapping in xz, joined by ramps */
    int islands;            /* keep disconnected islands (else only the largest region) */
    int walls;    /* holes as wall segments (3-16 cells, axis-aligned) instead of single cells:
                     rooms and corridors rather than a field of pillars */
    float jitter; /* > 0: every grid vertex moves by up to +-jitter/2 cells in x and z, so
                     coordinates are not on a grid (quads stay convex below 0.3); ignored with
                     merge_runs (runs would bend) and bridge (the ramps must meet the floor) */
} fx_random_opts;

/* Default options for a small property-test mesh (about 10 x 10 cells). */
fx_random_opts fx_random_defaults(void);
/* Builds a random mesh from seed (same seed and options: same mesh). */
nav_mesh *fx_random(uint32_t seed, const fx_random_opts *opts);
/* Deterministic PRNG shared by tests (xorshift32); state must be non-zero. */
uint32_t fx_rand(uint32_t *state);
float fx_randf(uint32_t *state); /* [0, 1) */
/* A random point of m: a random polygon (uniform by count), a random
   triangle of its fan, a uniform point of that triangle, on the polygon's
   plane through its vertices (not lifted onto the detail surface).
   Returns the polygon. */
uint32_t fx_random_point(const nav_mesh *m, uint32_t *rng, float out[3]);

/* ---- path answers held in their own buffers (cache and determinism tests) ---- */
#define FX_ANSWER_MAX 512
typedef struct fx_answer {
    float corners[3 * FX_ANSWER_MAX];
    uint32_t polys[FX_ANSWER_MAX];
    uint32_t links[16];
    nav_path_result res; /* its buffer pointers point into this struct */
} fx_answer;
/* Zeroes a and points its result at its own buffers. */
void fx_answer_init(fx_answer *a);
/* Every output field of two answers, bit for bit. */
int fx_answer_same(const fx_answer *x, const fx_answer *y);

/* Path of a file under ../shared/meshes or NULL when ../shared is absent
   (tests then skip with a message). Returned string is static. */
const char *fx_shared_mesh_path(const char *file);
/* Reads a whole file (malloc'd, NUL-terminated) or NULL. */
char *fx_read_file(const char *path, size_t *len);

/* A flat grid of n x n unit squares (y = 0) as upload JSON (malloc'd; NULL
   on allocation failure). */
char *fx_grid_json(int n);
/* A step request body: `agents` agents in the grid's first 20 x 20 cells,
   every one seeking the far corner of an n_grid grid with the cache off, so
   each costs one full path search (malloc'd; NULL on allocation failure). */
char *fx_step_body(int agents, int n_grid);
/* The same with `ntargets` distinct targets (agent i heads for target
   i % ntargets, spread over the grid's far corner rows): with one target per
   agent no search is shared, so a step's work grows with its agents. */
char *fx_step_body_targets(int agents, int n_grid, int ntargets);

#endif
