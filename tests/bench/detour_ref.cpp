// detour_ref: see detour_ref.h. Benchmark helper only: links librecast-dev.
#include "tests/bench/detour_ref.h"

#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <DetourNode.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
const int NVP = 6;
const int MAX_PATH = 65536;
const int MAX_STRAIGHT = 4096;
} // namespace

struct detour_ref {
    dtNavMesh *mesh;
    dtNavMeshQuery *query;
    dtQueryFilter filter;
    std::vector<dtPolyRef> path;
    std::vector<float> straight;
};

// Detour stores vertices as 16-bit cell indices from bmin. The shared
// meshes are Recast bakes (cell 0.3 m, cell height 0.2 m), so those cells
// give their vertices back exactly; any other mesh gets cells fine enough
// for 65,535 steps across it (a few millimetres of rounding at worst).
static bool quantize(const float *v, uint32_t nv, float cs, float ch, const float bmin[3],
                     std::vector<unsigned short> &out, double *err) {
    out.resize(3 * (size_t)nv);
    *err = 0;
    for (uint32_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            double c = k == 1 ? ch : cs, q = std::floor((v[3 * i + k] - bmin[k]) / c + 0.5);
            if (q < 0 || q > 65535)
                return false;
            out[3 * i + k] = (unsigned short)q;
            double e = std::fabs(bmin[k] + q * c - v[3 * i + k]);
            *err = e > *err ? e : *err;
        }
    return true;
}

extern "C" detour_ref *detour_ref_new(const float *verts, uint32_t nverts,
                                      const uint32_t *poly_start, const uint32_t *poly_verts,
                                      const uint32_t *poly_nei, uint32_t npolys, int max_nodes) {
    if (npolys == 0 || npolys > 65534 || nverts > 65535)
        return nullptr;
    float bmin[3] = {verts[0], verts[1], verts[2]}, bmax[3] = {verts[0], verts[1], verts[2]};
    for (uint32_t i = 0; i < nverts; i++)
        for (int k = 0; k < 3; k++) {
            bmin[k] = std::fmin(bmin[k], verts[3 * i + k]);
            bmax[k] = std::fmax(bmax[k], verts[3 * i + k]);
        }
    std::vector<unsigned short> qv;
    double err = 1;
    float cs = 0.3f, ch = 0.2f;
    if (!quantize(verts, nverts, cs, ch, bmin, qv, &err) || err > 1e-3) {
        float ext = std::fmax(bmax[0] - bmin[0], bmax[2] - bmin[2]);
        cs = std::fmax(ext / 65000.0f, 1e-3f);
        ch = std::fmax((bmax[1] - bmin[1]) / 65000.0f, 1e-3f);
        if (!quantize(verts, nverts, cs, ch, bmin, qv, &err))
            return nullptr;
    }
    std::vector<unsigned short> polys(2 * NVP * (size_t)npolys, 0xffff);
    std::vector<unsigned short> flags(npolys, 1);
    std::vector<unsigned char> areas(npolys, 0);
    for (uint32_t p = 0; p < npolys; p++) {
        uint32_t s = poly_start[p], n = poly_start[p + 1] - s;
        if (n > (uint32_t)NVP)
            return nullptr;
        for (uint32_t j = 0; j < n; j++) {
            polys[2 * NVP * p + j] = (unsigned short)poly_verts[s + j];
            uint32_t nb = poly_nei[s + j];
            // 0xffff: a border edge (high bit set, direction 0xf)
            polys[2 * NVP * p + NVP + j] = nb < npolys ? (unsigned short)nb : 0xffff;
        }
    }
    dtNavMeshCreateParams prm;
    std::memset(&prm, 0, sizeof prm);
    prm.verts = qv.data();
    prm.vertCount = (int)nverts;
    prm.polys = polys.data();
    prm.polyFlags = flags.data();
    prm.polyAreas = areas.data();
    prm.polyCount = (int)npolys;
    prm.nvp = NVP;
    prm.walkableHeight = 2.0f;
    prm.walkableRadius = 0.6f;
    prm.walkableClimb = 0.9f;
    prm.cs = cs;
    prm.ch = ch;
    prm.buildBvTree = true;
    for (int k = 0; k < 3; k++) {
        prm.bmin[k] = bmin[k];
        prm.bmax[k] = bmax[k];
    }
    unsigned char *data = nullptr;
    int size = 0;
    if (!dtCreateNavMeshData(&prm, &data, &size))
        return nullptr;
    detour_ref *d = new detour_ref();
    d->mesh = dtAllocNavMesh();
    d->query = dtAllocNavMeshQuery();
    if (!d->mesh || !d->query || dtStatusFailed(d->mesh->init(data, size, DT_TILE_FREE_DATA))) {
        if (!d->mesh)
            dtFree(data);
        detour_ref_free(d);
        return nullptr;
    }
    if (dtStatusFailed(d->query->init(d->mesh, max_nodes > 65535 ? 65535 : max_nodes))) {
        detour_ref_free(d);
        return nullptr;
    }
    d->path.resize(MAX_PATH);
    d->straight.resize(3 * MAX_STRAIGHT);
    return d;
}

extern "C" void detour_ref_free(detour_ref *d) {
    if (!d)
        return;
    dtFreeNavMeshQuery(d->query);
    dtFreeNavMesh(d->mesh);
    delete d;
}

extern "C" int detour_ref_path(detour_ref *d, const float start[3], const float end[3],
                               const float ext[3], double *len2d, int *nodes) {
    dtPolyRef sr = 0, er = 0;
    float sp[3], ep[3];
    if (dtStatusFailed(d->query->findNearestPoly(start, ext, &d->filter, &sr, sp)) || !sr ||
        dtStatusFailed(d->query->findNearestPoly(end, ext, &d->filter, &er, ep)) || !er)
        return -1;
    int np = 0;
    if (dtStatusFailed(
            d->query->findPath(sr, er, sp, ep, &d->filter, d->path.data(), &np, MAX_PATH)) ||
        np == 0)
        return -1;
    if (nodes)
        *nodes = d->query->getNodePool()->getNodeCount();
    int complete = d->path[np - 1] == er;
    float target[3];
    if (complete)
        std::memcpy(target, ep, sizeof target);
    else // as Detour's demo: aim at the closest point of the last polygon
        d->query->closestPointOnPoly(d->path[np - 1], ep, target, nullptr);
    int ns = 0;
    if (dtStatusFailed(d->query->findStraightPath(sp, target, d->path.data(), np,
                                                  d->straight.data(), nullptr, nullptr, &ns,
                                                  MAX_STRAIGHT)))
        return -1;
    if (len2d) {
        double l = 0;
        for (int i = 1; i < ns; i++)
            l += std::hypot((double)d->straight[3 * i] - d->straight[3 * i - 3],
                            (double)d->straight[3 * i + 2] - d->straight[3 * i - 1]);
        *len2d = l;
    }
    return complete;
}
