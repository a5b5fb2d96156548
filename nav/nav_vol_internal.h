/*
 * nav_vol_internal: the layout of a flight volume, shared by the nav_vol_*
 * files (bake, blob, query, path, steer) and nothing else.
 *
 * Voxel (x, y, z) lies in brick (x >> 2, y >> 2, z >> 2) at bit
 * (x & 3) + 4 (y & 3) + 16 (z & 3) of that brick's mask. top[] holds one
 * word per brick:
 *   NAV_VOL_SOLID          every voxel blocked (or outside the grid);
 *   NAV_VOL_MIXED | i      mixed: masks[i] has a 1 per free voxel, and
 *                          labels[i] is its component, or NAV_VOL_MULTI | j
 *                          when its free voxels form several local pieces
 *                          (parts[j..] up to the one with `last` set);
 *   anything else          every voxel free; the value is the component.
 * Voxels past the grid's dims (in the last bricks of an axis) are blocked.
 */
#ifndef NAV_VOL_INTERNAL_H
#define NAV_VOL_INTERNAL_H

#include <stdint.h>

#include "nav/nav_vol.h"

#define NAV_VOL_SOLID 0xFFFFFFFFu
#define NAV_VOL_MIXED 0x80000000u
#define NAV_VOL_MULTI 0x80000000u
#define NAV_VOL_NONE UINT32_MAX
/* Hard cap of any grid: node ids are (brick << 7) | local in 32 bits. */
#define NAV_VOL_MAX_VOXELS (1ull << 31)

typedef struct nav_vol_part {
    uint64_t mask; /* free voxels of one face-connected piece of a mixed brick */
    uint32_t comp;
    uint32_t last; /* 1 on the brick's last part */
} nav_vol_part;

struct nav_vol {
    float vs, inv_vs, radius;
    float bmin[3];
    uint32_t n[3]; /* voxels per axis */
    uint32_t b[3]; /* bricks per axis */
    uint32_t *top; /* b[0] * b[1] * b[2] */
    uint64_t *masks;
    uint32_t *labels;
    uint32_t nmixed;
    nav_vol_part *parts;
    uint32_t nparts;
    uint32_t ncomp;
    uint64_t nfree;
    uint64_t uid; /* unique per volume made in this process (bake or load), never reused */
};

/* The capped node budget a search with max_nodes would get from q (0: the pool). */
uint32_t nav_vol_query_budget(const nav_vol_query *q, uint32_t max_nodes);

static inline uint32_t nav_vol_brick_index(const nav_vol *v, uint32_t bx, uint32_t by,
                                           uint32_t bz) {
    return (bz * v->b[1] + by) * v->b[0] + bx;
}

static inline uint32_t nav_vol_local(uint32_t x, uint32_t y, uint32_t z) {
    return (x & 3) + ((y & 3) << 2) + ((z & 3) << 4);
}

/* Whether voxel (x, y, z) (inside the grid) is free. */
static inline int nav_vol_voxel_free(const nav_vol *v, uint32_t x, uint32_t y, uint32_t z) {
    uint32_t t = v->top[nav_vol_brick_index(v, x >> 2, y >> 2, z >> 2)];
    if (t == NAV_VOL_SOLID)
        return 0;
    if (!(t & NAV_VOL_MIXED))
        return 1;
    return (int)((v->masks[t & ~NAV_VOL_MIXED] >> nav_vol_local(x, y, z)) & 1u);
}

/* Same for signed coordinates that may lie outside the grid (outside: not free). */
static inline int nav_vol_voxel_free_s(const nav_vol *v, int64_t x, int64_t y, int64_t z) {
    if (x < 0 || y < 0 || z < 0 || x >= v->n[0] || y >= v->n[1] || z >= v->n[2])
        return 0;
    return nav_vol_voxel_free(v, (uint32_t)x, (uint32_t)y, (uint32_t)z);
}

/* Component of free voxel (x, y, z), NAV_VOL_NONE when blocked. */
uint32_t nav_vol_voxel_comp(const nav_vol *v, uint32_t x, uint32_t y, uint32_t z);

/* Voxel holding point p (floor); 0 when p lies outside the grid's box. */
int nav_vol_locate(const nav_vol *v, const float p[3], uint32_t c[3]);

/* Bytes the grid's arrays hold. */
size_t nav_vol_bytes(const nav_vol *v);

/* Masks of the bits with local x == 0 (resp. 3), y == 0/3, z == 0/3. */
#define NAV_VOL_X0 0x1111111111111111ull
#define NAV_VOL_X3 0x8888888888888888ull
#define NAV_VOL_Y0 0x000F000F000F000Full
#define NAV_VOL_Y3 0xF000F000F000F000ull
#define NAV_VOL_Z0 0x000000000000FFFFull
#define NAV_VOL_Z3 0xFFFF000000000000ull

/* Whether triangle t meets the box c +- h (touching counts); separating axes. */
int nav_vol_tri_box(const float t[3][3], const float c[3], const float h[3]);
/* Whether triangle t comes within r of the cube c +- h (exact, see nav_vol_geom.c). */
int nav_vol_tri_near_box(const float t[3][3], const float c[3], float h, float r);

/* The face-connected piece of `within` that contains the bits of `seed`. */
uint64_t nav_vol_flood(uint64_t seed, uint64_t within);

#endif
