// recast_ref.cpp: the bench's Recast reference (see recast_ref.h). Calls
// Recast's public API in the order of its solo-mesh demo; the allocator hook
// counts bytes alive (a size header in front of each block) for the peak.
#include "tests/bench/recast_ref.h"

#include <Recast.h>
#include <RecastAlloc.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

size_t g_live = 0, g_peak = 0;

void *ref_alloc(size_t size, rcAllocHint) {
    size_t *p = static_cast<size_t *>(std::malloc(size + 16));
    if (!p)
        return nullptr;
    p[0] = size;
    g_live += size;
    if (g_live > g_peak)
        g_peak = g_live;
    return reinterpret_cast<char *>(p) + 16;
}

void ref_free(void *ptr) {
    if (!ptr)
        return;
    size_t *p = reinterpret_cast<size_t *>(static_cast<char *>(ptr) - 16);
    g_live -= p[0];
    std::free(p);
}

} // namespace

extern "C" recast_ref_result recast_ref_bake(const float *verts, uint32_t nverts,
                                             const uint32_t *tris, uint32_t ntris, float cs,
                                             float ch, float radius, float height, float climb,
                                             float slope) {
    recast_ref_result r;
    std::memset(&r, 0, sizeof r);
    rcAllocSetCustom(ref_alloc, ref_free);
    g_live = g_peak = 0;
    std::vector<int> itris(ntris * 3);
    for (size_t i = 0; i < itris.size(); i++)
        itris[i] = static_cast<int>(tris[i]);
    std::vector<unsigned char> areas(ntris, 0);
    rcContext ctx(false);
    rcConfig cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.cs = cs;
    cfg.ch = ch;
    cfg.walkableSlopeAngle = slope;
    cfg.walkableHeight = static_cast<int>(std::ceil(height / ch));
    cfg.walkableClimb = static_cast<int>(std::floor(climb / ch));
    cfg.walkableRadius = static_cast<int>(std::ceil(radius / cs));
    cfg.maxEdgeLen = static_cast<int>(12.0f / cs);
    cfg.maxSimplificationError = 1.3f;
    cfg.minRegionArea = 8 * 8;
    cfg.mergeRegionArea = 20 * 20;
    cfg.maxVertsPerPoly = 6;
    cfg.detailSampleDist = cs * 6.0f;
    cfg.detailSampleMaxError = ch * 1.0f;
    auto t0 = std::chrono::steady_clock::now();
    rcCalcBounds(verts, static_cast<int>(nverts), cfg.bmin, cfg.bmax);
    rcCalcGridSize(cfg.bmin, cfg.bmax, cfg.cs, &cfg.width, &cfg.height);
    rcHeightfield *hf = rcAllocHeightfield();
    rcCompactHeightfield *chf = rcAllocCompactHeightfield();
    rcContourSet *cset = rcAllocContourSet();
    rcPolyMesh *pm = rcAllocPolyMesh();
    rcPolyMeshDetail *dm = rcAllocPolyMeshDetail();
    bool ok = hf && chf && cset && pm && dm &&
              rcCreateHeightfield(&ctx, *hf, cfg.width, cfg.height, cfg.bmin, cfg.bmax, cfg.cs,
                                  cfg.ch);
    if (ok) {
        rcMarkWalkableTriangles(&ctx, cfg.walkableSlopeAngle, verts, static_cast<int>(nverts),
                                itris.data(), static_cast<int>(ntris), areas.data());
        ok = rcRasterizeTriangles(&ctx, verts, static_cast<int>(nverts), itris.data(),
                                  areas.data(), static_cast<int>(ntris), *hf, cfg.walkableClimb);
    }
    if (ok) {
        rcFilterLowHangingWalkableObstacles(&ctx, cfg.walkableClimb, *hf);
        rcFilterLedgeSpans(&ctx, cfg.walkableHeight, cfg.walkableClimb, *hf);
        rcFilterWalkableLowHeightSpans(&ctx, cfg.walkableHeight, *hf);
        ok = rcBuildCompactHeightfield(&ctx, cfg.walkableHeight, cfg.walkableClimb, *hf, *chf);
    }
    rcFreeHeightField(hf); // the demo frees it here too
    ok = ok && rcErodeWalkableArea(&ctx, cfg.walkableRadius, *chf) &&
         rcBuildDistanceField(&ctx, *chf) &&
         rcBuildRegions(&ctx, *chf, 0, cfg.minRegionArea, cfg.mergeRegionArea) &&
         rcBuildContours(&ctx, *chf, cfg.maxSimplificationError, cfg.maxEdgeLen, *cset) &&
         rcBuildPolyMesh(&ctx, *cset, cfg.maxVertsPerPoly, *pm) &&
         rcBuildPolyMeshDetail(&ctx, *pm, *chf, cfg.detailSampleDist, cfg.detailSampleMaxError,
                               *dm);
    auto t1 = std::chrono::steady_clock::now();
    r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.ok = ok ? 1 : 0;
    r.polygons = ok ? pm->npolys : 0;
    r.peak_bytes = g_peak;
    rcFreeCompactHeightfield(chf);
    rcFreeContourSet(cset);
    rcFreePolyMesh(pm);
    rcFreePolyMeshDetail(dm);
    rcAllocSetCustom(nullptr, nullptr);
    return r;
}
