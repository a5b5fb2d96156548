// detour_ref: see detour_ref.h. Benchmark helper only: links librecast-dev.
#include "tests/bench/detour_ref.h"

#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <DetourNode.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
const int NVP = 6;
const int MAX_PATH = 65536;
const int MAX_STRAIGHT = 4096;
// Side of a tile, in mesh units, for meshes over one tile's 16-bit limits:
// 64 one-metre cells, a common Recast tile (the generated 320 x 320 grids
// become 5 x 5 tiles of about 4,000 polygons).
const float DEFAULT_TILE = 64.0f;
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

// How detour_ref_new last laid the mesh out, or why it gave up
// (detour_ref_layout): the bench prints it beside its figures.
static char last_note[256];

static void fail(const char *why) {
    std::snprintf(last_note, sizeof last_note, "%s", why);
}

static bool bounds(const float *verts, const uint32_t *poly_start, const uint32_t *poly_verts,
                   uint32_t npolys, float bmin[3], float bmax[3]) {
    bool any = false;
    for (uint32_t i = 0; i < poly_start[npolys]; i++) {
        const float *v = &verts[3 * poly_verts[i]];
        for (int k = 0; k < 3; k++) {
            bmin[k] = any ? std::fmin(bmin[k], v[k]) : v[k];
            bmax[k] = any ? std::fmax(bmax[k], v[k]) : v[k];
        }
        any = true;
    }
    return any;
}

// Finishes d around a built mesh: the query with its node pool, buffers.
static detour_ref *with_query(dtNavMesh *mesh, int max_nodes) {
    detour_ref *d = new detour_ref();
    d->mesh = mesh;
    d->query = dtAllocNavMeshQuery();
    if (!d->query || dtStatusFailed(d->query->init(mesh, max_nodes > 65535 ? 65535 : max_nodes))) {
        fail("dtNavMeshQuery::init failed");
        detour_ref_free(d);
        return nullptr;
    }
    d->path.resize(MAX_PATH);
    d->straight.resize(3 * MAX_STRAIGHT);
    return d;
}

static void fill_params(dtNavMeshCreateParams &prm, const std::vector<unsigned short> &qv,
                        const std::vector<unsigned short> &polys,
                        const std::vector<unsigned short> &flags,
                        const std::vector<unsigned char> &areas, float cs, float ch,
                        const float bmin[3], const float bmax[3]) {
    std::memset(&prm, 0, sizeof prm);
    prm.verts = qv.data();
    prm.vertCount = (int)(qv.size() / 3);
    prm.polys = polys.data();
    prm.polyFlags = flags.data();
    prm.polyAreas = areas.data();
    prm.polyCount = (int)flags.size();
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
}

// The whole mesh as one tile (every mesh that fits: the shared ones).
static detour_ref *single_tile(const float *verts, uint32_t nverts, const uint32_t *poly_start,
                               const uint32_t *poly_verts, const uint32_t *poly_nei,
                               uint32_t npolys, int max_nodes) {
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
        if (!quantize(verts, nverts, cs, ch, bmin, qv, &err)) {
            fail("vertices out of the 16-bit range");
            return nullptr;
        }
    }
    std::vector<unsigned short> polys(2 * NVP * (size_t)npolys, 0xffff);
    std::vector<unsigned short> flags(npolys, 1);
    std::vector<unsigned char> areas(npolys, 0);
    for (uint32_t p = 0; p < npolys; p++) {
        uint32_t s = poly_start[p], n = poly_start[p + 1] - s;
        if (n > (uint32_t)NVP) {
            fail("a polygon has more than 6 vertices");
            return nullptr;
        }
        for (uint32_t j = 0; j < n; j++) {
            polys[2 * NVP * p + j] = (unsigned short)poly_verts[s + j];
            uint32_t nb = poly_nei[s + j];
            // 0xffff: a border edge (high bit set, direction 0xf)
            polys[2 * NVP * p + NVP + j] = nb < npolys ? (unsigned short)nb : 0xffff;
        }
    }
    dtNavMeshCreateParams prm;
    fill_params(prm, qv, polys, flags, areas, cs, ch, bmin, bmax);
    unsigned char *data = nullptr;
    int size = 0;
    if (!dtCreateNavMeshData(&prm, &data, &size)) {
        fail("dtCreateNavMeshData refused the mesh");
        return nullptr;
    }
    dtNavMesh *mesh = dtAllocNavMesh();
    if (!mesh || dtStatusFailed(mesh->init(data, size, DT_TILE_FREE_DATA))) {
        if (!mesh)
            dtFree(data);
        dtFreeNavMesh(mesh);
        fail("dtNavMesh::init refused the tile");
        return nullptr;
    }
    std::snprintf(last_note, sizeof last_note, "one tile");
    return with_query(mesh, max_nodes);
}

/*
 * A mesh too large for one tile as a game team would ship it: a grid of
 * square tiles of side `tile` (mesh units) from the polygons' bounding-box
 * minimum, each tile its own dtCreateNavMeshData with the tile's own
 * vertices quantised from its own bmin, added to one dtNavMesh; addTile's
 * connectExtLinks joins the tiles through the edges marked as portals.
 *
 * Every polygon must lie inside one tile (borders on the mesh's cell
 * lines): a polygon that straddles a border would need Recast's re-bake,
 * which would change the mesh under the comparison, so that fails instead.
 * An edge whose neighbour is in another tile must lie on the border between
 * the two; it becomes a portal, 0x8000 | side with side 0 = x-, 1 = z+,
 * 2 = x+, 3 = z- (rcPolyMesh's convention, which dtCreateNavMeshData turns
 * into DT_EXT_LINK | 4, 2, 0, 6). Walls stay 0xffff (side 0xf: no link).
 */
static detour_ref *tiled(const float *verts, uint32_t nverts, const uint32_t *poly_start,
                         const uint32_t *poly_verts, const uint32_t *poly_nei, uint32_t npolys,
                         int max_nodes, float tile) {
    float bmin[3], bmax[3];
    if (!bounds(verts, poly_start, poly_verts, npolys, bmin, bmax) || !(tile > 0)) {
        fail("no polygons or no tile size");
        return nullptr;
    }
    const int ntx = (int)std::ceil((bmax[0] - bmin[0]) / tile - 1e-6),
              ntz = (int)std::ceil((bmax[2] - bmin[2]) / tile - 1e-6);
    const int nx = ntx > 0 ? ntx : 1, nz = ntz > 0 ? ntz : 1;
    const double eps = 1e-4;
    char why[200];
    // tile of every polygon (by its centroid), and the check that it fits
    std::vector<int> ptile(npolys);
    std::vector<uint32_t> tcount((size_t)nx * nz, 0);
    for (uint32_t p = 0; p < npolys; p++) {
        uint32_t s = poly_start[p], n = poly_start[p + 1] - s;
        if (n > (uint32_t)NVP) {
            fail("a polygon has more than 6 vertices");
            return nullptr;
        }
        double cx = 0, cz = 0;
        for (uint32_t j = 0; j < n; j++) {
            cx += verts[3 * poly_verts[s + j]];
            cz += verts[3 * poly_verts[s + j] + 2];
        }
        int tx = (int)std::floor((cx / n - bmin[0]) / tile),
            tz = (int)std::floor((cz / n - bmin[2]) / tile);
        tx = tx < 0 ? 0 : tx >= nx ? nx - 1 : tx;
        tz = tz < 0 ? 0 : tz >= nz ? nz - 1 : tz;
        double x0 = bmin[0] + (double)tx * tile, z0 = bmin[2] + (double)tz * tile;
        for (uint32_t j = 0; j < n; j++) {
            const float *v = &verts[3 * poly_verts[s + j]];
            if (v[0] < x0 - eps || v[0] > x0 + tile + eps || v[2] < z0 - eps ||
                v[2] > z0 + tile + eps) {
                std::snprintf(why, sizeof why,
                              "polygon %u straddles a border of the %g-unit tiles (vertex "
                              "%.3f, %.3f outside tile %d, %d)",
                              p, (double)tile, (double)v[0], (double)v[2], tx, tz);
                fail(why);
                return nullptr;
            }
        }
        ptile[p] = tz * nx + tx;
        tcount[(size_t)ptile[p]]++;
    }
    // one cell size for every tile: Recast's 0.3 m when it gives the
    // vertices back (a bake), else the finest power of two for which a tile
    // spans at most 65,000 steps (exact for coordinates on a binary grid)
    float ch = 0.2f, cs = 0.3f;
    double worst = 0;
    for (uint32_t i = 0; i < poly_start[npolys] && worst <= 1e-3; i++) {
        const float *v = &verts[3 * poly_verts[i]];
        for (int k = 0; k < 3; k += 2) {
            double q = (v[k] - bmin[k]) / cs;
            worst = std::fmax(worst, std::fabs(q - std::floor(q + 0.5)) * cs);
        }
        double q = (v[1] - bmin[1]) / ch;
        worst = std::fmax(worst, std::fabs(q - std::floor(q + 0.5)) * ch);
    }
    // tile origins are bmin + k * tile: 0.3 m holds only for a whole number of cells per tile
    double tcells = tile / 0.3;
    if (worst > 1e-3 || std::fabs(tcells - std::floor(tcells + 0.5)) > 1e-4) {
        cs = 1.0f;
        while (cs * 65000.0f >= tile && cs > 1e-6f)
            cs *= 0.5f;
        cs *= 2.0f;
        ch = 1.0f;
        float yr = bmax[1] - bmin[1];
        while (ch * 65000.0f >= yr && ch > 1.0f / 1024)
            ch *= 0.5f;
        ch *= 2.0f;
    }
    dtNavMesh *mesh = dtAllocNavMesh();
    dtNavMeshParams nmp;
    std::memset(&nmp, 0, sizeof nmp);
    nmp.orig[0] = bmin[0];
    nmp.orig[1] = bmin[1];
    nmp.orig[2] = bmin[2];
    nmp.tileWidth = tile;
    nmp.tileHeight = tile;
    nmp.maxTiles = nx * nz;
    uint32_t most = 0;
    for (uint32_t c : tcount)
        most = c > most ? c : most;
    nmp.maxPolys = (int)most;
    if (most > 65534) {
        dtFreeNavMesh(mesh);
        fail("a tile would hold more than 65,534 polygons");
        return nullptr;
    }
    if (!mesh || dtStatusFailed(mesh->init(&nmp))) {
        dtFreeNavMesh(mesh);
        fail("dtNavMesh::init refused the tile grid (too many tiles x polygons for 32-bit "
             "references?)");
        return nullptr;
    }
    // local vertex numbers, reset per tile (only the touched entries)
    std::vector<int> local(nverts, -1);
    std::vector<uint32_t> lpoly(npolys, 0); // polygon -> index in its tile
    {
        std::vector<uint32_t> next((size_t)nx * nz, 0);
        for (uint32_t p = 0; p < npolys; p++)
            lpoly[p] = next[(size_t)ptile[p]]++;
    }
    std::vector<std::vector<uint32_t>> members((size_t)nx * nz);
    for (uint32_t p = 0; p < npolys; p++)
        members[(size_t)ptile[p]].push_back(p);
    int added = 0, portals = 0;
    for (int tz = 0; tz < nz; tz++)
        for (int tx = 0; tx < nx; tx++) {
            const std::vector<uint32_t> &ps = members[(size_t)(tz * nx + tx)];
            if (ps.empty())
                continue;
            float tmin[3] = {bmin[0] + tx * tile, bmin[1], bmin[2] + tz * tile};
            float tmax[3] = {tmin[0] + tile, bmax[1], tmin[2] + tile};
            std::vector<uint32_t> used; // global vertex of each local one
            std::vector<unsigned short> polys(2 * NVP * ps.size(), 0xffff);
            std::vector<unsigned short> flags(ps.size(), 1);
            std::vector<unsigned char> areas(ps.size(), 0);
            bool ok = true;
            for (size_t i = 0; i < ps.size() && ok; i++) {
                uint32_t p = ps[i], s = poly_start[p], n = poly_start[p + 1] - s;
                for (uint32_t j = 0; j < n; j++) {
                    uint32_t gv = poly_verts[s + j];
                    if (local[gv] < 0) {
                        local[gv] = (int)used.size();
                        used.push_back(gv);
                    }
                    polys[2 * NVP * i + j] = (unsigned short)local[gv];
                }
                for (uint32_t j = 0; j < n && ok; j++) {
                    uint32_t nb = poly_nei[s + j];
                    unsigned short e = 0xffff;
                    if (nb < npolys && ptile[nb] == ptile[p]) {
                        e = (unsigned short)lpoly[nb];
                    } else if (nb < npolys) {
                        const float *a = &verts[3 * poly_verts[s + j]],
                                    *b = &verts[3 * poly_verts[s + (j + 1) % n]];
                        int ntx_ = ptile[nb] % nx, ntz_ = ptile[nb] / nx;
                        auto on = [&](int k, float c) {
                            return std::fabs(a[k] - c) <= eps && std::fabs(b[k] - c) <= eps;
                        };
                        if (on(0, tmin[0]) && ntx_ == tx - 1 && ntz_ == tz)
                            e = 0x8000 | 0; // x-
                        else if (on(2, tmax[2]) && ntz_ == tz + 1 && ntx_ == tx)
                            e = 0x8000 | 1; // z+
                        else if (on(0, tmax[0]) && ntx_ == tx + 1 && ntz_ == tz)
                            e = 0x8000 | 2; // x+
                        else if (on(2, tmin[2]) && ntz_ == tz - 1 && ntx_ == tx)
                            e = 0x8000 | 3; // z-
                        else {
                            std::snprintf(why, sizeof why,
                                          "polygon %u's edge %u joins tile %d, %d to %d, %d off "
                                          "their shared border",
                                          p, j, tx, tz, ntx_, ntz_);
                            fail(why);
                            ok = false;
                        }
                        portals += ok;
                    }
                    polys[2 * NVP * i + NVP + j] = e;
                }
            }
            std::vector<float> lv(3 * used.size());
            for (size_t i = 0; i < used.size(); i++) {
                std::memcpy(&lv[3 * i], &verts[3 * used[i]], 3 * sizeof(float));
                local[used[i]] = -1;
            }
            std::vector<unsigned short> qv;
            double err = 0;
            if (ok && (used.size() >= 0xffff ||
                       !quantize(lv.data(), (uint32_t)used.size(), cs, ch, tmin, qv, &err))) {
                fail("a tile's vertices do not fit 16 bits");
                ok = false;
            }
            if (ok && err > 1e-3) {
                std::snprintf(why, sizeof why,
                              "quantising a tile's vertices moves one by %.4f (cell %g)", err,
                              (double)cs);
                fail(why);
                ok = false;
            }
            dtNavMeshCreateParams prm;
            fill_params(prm, qv, polys, flags, areas, cs, ch, tmin, tmax);
            prm.tileX = tx;
            prm.tileY = tz;
            unsigned char *data = nullptr;
            int size = 0;
            if (ok && !dtCreateNavMeshData(&prm, &data, &size)) {
                fail("dtCreateNavMeshData refused a tile");
                ok = false;
            }
            if (ok && dtStatusFailed(mesh->addTile(data, size, DT_TILE_FREE_DATA, 0, nullptr))) {
                dtFree(data);
                fail("dtNavMesh::addTile refused a tile");
                ok = false;
            }
            if (!ok) {
                dtFreeNavMesh(mesh);
                return nullptr;
            }
            added++;
        }
    std::snprintf(last_note, sizeof last_note,
                  "%d tiles of %g x %g units (%d x %d grid), at most %u polygons per tile, %d "
                  "portal edges, cell %g",
                  added, (double)tile, (double)tile, nx, nz, most, portals, (double)cs);
    return with_query(mesh, max_nodes);
}

extern "C" detour_ref *detour_ref_new(const float *verts, uint32_t nverts,
                                      const uint32_t *poly_start, const uint32_t *poly_verts,
                                      const uint32_t *poly_nei, uint32_t npolys, int max_nodes) {
    if (npolys == 0) {
        fail("no polygons");
        return nullptr;
    }
    if (npolys <= 65534 && nverts <= 65535)
        return single_tile(verts, nverts, poly_start, poly_verts, poly_nei, npolys, max_nodes);
    // NAVD_BENCH_DTILE=<units>: another tile side (the tile size's effect)
    const char *ts = std::getenv("NAVD_BENCH_DTILE");
    float tile = ts && *ts ? (float)std::atof(ts) : DEFAULT_TILE;
    return tiled(verts, nverts, poly_start, poly_verts, poly_nei, npolys, max_nodes, tile);
}

extern "C" const char *detour_ref_layout(void) {
    return last_note;
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
