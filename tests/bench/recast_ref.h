/*
 * recast_ref: upstream Recast (Debian's librecast-dev) baking the same
 * geometry with the same settings as the bench's nav_bake figures, in the
 * same process and run. C++ inside (tests/bench/recast_ref.cpp), a C
 * interface here; only the bench runner links it, never navd.
 */
#ifndef RECAST_REF_H
#define RECAST_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct recast_ref_result {
    double ms;         /* one solo-mesh bake: rasterize .. detail mesh */
    size_t peak_bytes; /* Recast's allocations alive at once, at most */
    int polygons;
    int ok;
} recast_ref_result;

/* Recast's demo pipeline (watershed regions, 6 verts per polygon) with the
   given settings; radius/height/climb in metres, slope in degrees. */
recast_ref_result recast_ref_bake(const float *verts, uint32_t nverts, const uint32_t *tris,
                                  uint32_t ntris, float cs, float ch, float radius, float height,
                                  float climb, float slope);

#ifdef __cplusplus
}
#endif

#endif
