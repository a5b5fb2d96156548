/*
 * test_volworld: triangle-soup worlds for the flight-volume tests and the
 * bench, built from boxes and quads with coordinates the tests can reason
 * about by hand, and exported as OBJ text for the HTTP tests.
 */
#ifndef TEST_VOLWORLD_H
#define TEST_VOLWORLD_H

#include <stddef.h>
#include <stdint.h>

typedef struct vw_world {
    float *v; /* 3 per vertex */
    uint32_t nv, capv;
    uint32_t *t; /* 3 per triangle */
    uint32_t nt, capt;
    float bmin[3], bmax[3]; /* the box the tests voxelize */
} vw_world;

void vw_init(vw_world *w, float x0, float y0, float z0, float x1, float y1, float z1);
void vw_free(vw_world *w);
/* A closed axis-aligned box [lo, hi] (12 triangles). */
void vw_box(vw_world *w, float x0, float y0, float z0, float x1, float y1, float z1);
/* An axis-aligned rectangle of zero thickness at coordinate `at` on axis `axis`,
   spanning [u0, u1] x [v0, v1] on the two other axes (in x, y, z order): 2 triangles. */
void vw_quad(vw_world *w, int axis, float at, float u0, float v0, float u1, float v1);
/* One triangle. */
void vw_triangle(vw_world *w, const float a[3], const float b[3], const float c[3]);
/* A box wall [lo, hi] with a rectangular hole: the hole spans [h0, h1] on the two axes
   other than `axis` (the wall's thin axis), in x, y, z order; four boxes around it. */
void vw_wall_with_hole(vw_world *w, int axis, const float lo[3], const float hi[3],
                       const float h0[2], const float h1[2]);
/* Random axis-aligned boxes (sides in [smin, smax]) inside the world until their summed
   volume reaches `fraction` of the world's box (overlaps counted twice). */
void vw_random_boxes(vw_world *w, float fraction, float smin, float smax, uint32_t seed);
/* The generated test worlds (see vw_make in test_volworld.c for their coordinates). */
enum { W_ROOMS, W_PILLARS, W_SLABS, W_THIN, W_CLOSED, VW_COUNT };
extern const char *const VW_NAME[VW_COUNT];
/* Builds world `which`: rooms with doors, pillars and a slanted plank, floating slabs, thin
   walls (0.25 m and zero thickness), a hollow closed box. */
void vw_make(int which, vw_world *w);

/* OBJ text (malloc'd, NUL-terminated). */
char *vw_obj(const vw_world *w, size_t *len);

#endif
