/*
 * crowd_ref: DetourCrowd itself on a navd steering scenario, the reference
 * the `crowd` bench section (bench_crowd.c) puts our nav_step beside.
 *
 * Benchmark helper only (C++ is allowed here and nowhere else): links
 * Debian's librecast-dev (Detour, DetourCrowd); the product never does.
 *
 * Usage: crowd_ref <navmesh.json> <scenario.txt> <low|medium|good|high> [total]
 * The navmesh is the API's upload JSON (Recast's own polygons, in Recast's
 * winding); it becomes one Detour tile, polygon for polygon: vertices
 * quantised on the bake's cell grid (cell 0.3 m, cell height 0.2 m, the
 * shared meshes' settings), neighbours from shared edges, no detail mesh
 * (Detour then uses the polygons' own planes). scenario.txt: "n warm ticks
 * dt radius speed accel", then n lines "px py pz tx ty tz". Every agent is
 * added at its start with DetourCrowd's usual flags (anticipate turns,
 * visibility and topology optimisation, obstacle avoidance of the given
 * quality, separation) and sent to its target; after `warm` updates of dt,
 * `ticks` more are timed. Prints one line:
 *   crowd_ref <quality> <us per agent-step> <agents active> <mean speed>
 * With `total` (> warm + ticks), the run goes on untimed to `total` ticks
 * and a second line gives the avoidance quality, measured the same way as
 * bench_crowd.c measures navd (after every tick from the first timed one):
 *   crowd_quality <deepest overlap, m> <pair-ticks overlapping > 5 cm>
 *                 <arrived at warm+ticks> <arrived at total / 2> <arrived at total>
 *                 <pair-ticks overlapping > 30 cm>
 * where "arrived" is within 1 m (xz, and 2 m in y) of the agent's target.
 */
#include <DetourCrowd.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <jansson.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <utility>
#include <vector>

static double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what) {
    std::fprintf(stderr, "crowd_ref: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5)
        return fail(
            "usage: crowd_ref <navmesh.json> <scenario.txt> <low|medium|good|high> [total]");
    int total = argc == 5 ? std::atoi(argv[4]) : 0;
    json_error_t jerr;
    json_t *root = json_load_file(argv[1], 0, &jerr);
    if (!root)
        return fail("cannot read the navmesh JSON");
    json_t *jv = json_object_get(root, "vertices"), *jp = json_object_get(root, "polygons");
    json_t *ja = json_object_get(root, "areas");
    size_t nv = json_array_size(jv), np = json_array_size(jp);
    if (nv < 3 || np < 1 || nv > 65535 || np > 65535)
        return fail("navmesh too small or too large for one Detour tile");
    const float cs = 0.3f, ch = 0.2f;
    const int nvp = 6;
    std::vector<float> v(3 * nv);
    float bmin[3] = {1e30f, 1e30f, 1e30f}, bmax[3] = {-1e30f, -1e30f, -1e30f};
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            v[3 * i + k] = (float)json_number_value(json_array_get(json_array_get(jv, i), k));
            bmin[k] = std::fmin(bmin[k], v[3 * i + k]);
            bmax[k] = std::fmax(bmax[k], v[3 * i + k]);
        }
    std::vector<unsigned short> qv(3 * nv);
    for (size_t i = 0; i < nv; i++) {
        qv[3 * i] = (unsigned short)std::lround((v[3 * i] - bmin[0]) / cs);
        qv[3 * i + 1] = (unsigned short)std::lround((v[3 * i + 1] - bmin[1]) / ch);
        qv[3 * i + 2] = (unsigned short)std::lround((v[3 * i + 2] - bmin[2]) / cs);
    }
    /* polygons: nvp vertex slots then nvp neighbour slots (0xffff = none) */
    std::vector<unsigned short> polys(np * 2 * nvp, 0xffff);
    std::vector<unsigned short> flags(np, 1);
    std::vector<unsigned char> areas(np, 0);
    std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> edges;
    for (size_t p = 0; p < np; p++) {
        json_t *poly = json_array_get(jp, p);
        size_t n = json_array_size(poly);
        if (n < 3 || n > (size_t)nvp)
            return fail("a polygon has more than 6 vertices");
        for (size_t j = 0; j < n; j++)
            polys[p * 2 * nvp + j] = (unsigned short)json_integer_value(json_array_get(poly, j));
        for (size_t j = 0; j < n; j++) {
            int a = polys[p * 2 * nvp + j], b = polys[p * 2 * nvp + (j + 1) % n];
            edges[std::make_pair(std::min(a, b), std::max(a, b))].push_back(
                std::make_pair((int)p, (int)j));
        }
        areas[p] = ja ? (unsigned char)json_integer_value(json_array_get(ja, p)) : 0;
    }
    for (auto &e : edges)
        if (e.second.size() == 2) {
            auto x = e.second[0], y = e.second[1];
            polys[x.first * 2 * nvp + nvp + x.second] = (unsigned short)y.first;
            polys[y.first * 2 * nvp + nvp + y.second] = (unsigned short)x.first;
        }
    dtNavMeshCreateParams prm;
    std::memset(&prm, 0, sizeof prm);
    prm.verts = qv.data();
    prm.vertCount = (int)nv;
    prm.polys = polys.data();
    prm.polyFlags = flags.data();
    prm.polyAreas = areas.data();
    prm.polyCount = (int)np;
    prm.nvp = nvp;
    prm.walkableHeight = 2.0f;
    prm.walkableRadius = 0.6f;
    prm.walkableClimb = 0.9f;
    std::memcpy(prm.bmin, bmin, sizeof bmin);
    std::memcpy(prm.bmax, bmax, sizeof bmax);
    prm.cs = cs;
    prm.ch = ch;
    prm.buildBvTree = true;
    unsigned char *data = nullptr;
    int size = 0;
    if (!dtCreateNavMeshData(&prm, &data, &size))
        return fail("dtCreateNavMeshData failed");
    dtNavMesh *nav = dtAllocNavMesh();
    if (!nav || dtStatusFailed(nav->init(data, size, DT_TILE_FREE_DATA)))
        return fail("dtNavMesh::init failed");

    FILE *f = std::fopen(argv[2], "r");
    if (!f)
        return fail("cannot read the scenario");
    int n = 0, warm = 0, ticks = 0;
    float dt = 0, radius = 0, speed = 0, accel = 0;
    if (std::fscanf(f, "%d %d %d %f %f %f %f", &n, &warm, &ticks, &dt, &radius, &speed, &accel) !=
            7 ||
        n < 1)
        return fail("bad scenario header");
    std::vector<float> st(3 * n), tg(3 * n);
    for (int i = 0; i < n; i++)
        if (std::fscanf(f, "%f %f %f %f %f %f", &st[3 * i], &st[3 * i + 1], &st[3 * i + 2],
                        &tg[3 * i], &tg[3 * i + 1], &tg[3 * i + 2]) != 6)
            return fail("bad scenario line");
    std::fclose(f);

    dtCrowd *crowd = dtAllocCrowd();
    if (!crowd || !crowd->init(n, radius, nav))
        return fail("dtCrowd::init failed");
    /* RecastDemo's four avoidance qualities (CrowdTool.cpp) */
    dtObstacleAvoidanceParams ap;
    std::memcpy(&ap, crowd->getObstacleAvoidanceParams(0), sizeof ap);
    ap.velBias = 0.5f;
    ap.adaptiveDivs = 5;
    ap.adaptiveRings = 2;
    ap.adaptiveDepth = 1;
    crowd->setObstacleAvoidanceParams(0, &ap); /* low */
    ap.adaptiveDepth = 2;
    crowd->setObstacleAvoidanceParams(1, &ap); /* medium */
    ap.adaptiveDivs = 7;
    ap.adaptiveDepth = 3;
    crowd->setObstacleAvoidanceParams(2, &ap); /* good */
    ap.adaptiveRings = 3;
    crowd->setObstacleAvoidanceParams(3, &ap); /* high */
    int quality = !std::strcmp(argv[3], "low")      ? 0
                  : !std::strcmp(argv[3], "medium") ? 1
                  : !std::strcmp(argv[3], "good")   ? 2
                  : !std::strcmp(argv[3], "high")   ? 3
                                                    : -1;
    if (quality < 0)
        return fail("quality must be low, medium, good or high");

    const dtNavMeshQuery *q = crowd->getNavMeshQuery();
    const dtQueryFilter *filter = crowd->getFilter(0);
    const float ext[3] = {2, 4, 2};
    int added = 0;
    std::vector<int> agent_of(n, 0); /* crowd index -> scenario line */
    for (int i = 0; i < n; i++) {
        dtCrowdAgentParams a;
        std::memset(&a, 0, sizeof a);
        a.radius = radius;
        a.height = 2.0f;
        a.maxAcceleration = accel;
        a.maxSpeed = speed;
        a.collisionQueryRange = radius * 12.0f;
        a.pathOptimizationRange = radius * 30.0f;
        a.updateFlags = DT_CROWD_ANTICIPATE_TURNS | DT_CROWD_OPTIMIZE_VIS | DT_CROWD_OPTIMIZE_TOPO |
                        DT_CROWD_OBSTACLE_AVOIDANCE | DT_CROWD_SEPARATION;
        a.obstacleAvoidanceType = (unsigned char)quality;
        a.separationWeight = 2.0f;
        int idx = crowd->addAgent(&st[3 * i], &a);
        if (idx < 0)
            continue;
        agent_of[idx] = i;
        dtPolyRef ref = 0;
        float on[3];
        q->findNearestPoly(&tg[3 * i], ext, filter, &ref, on);
        if (ref)
            crowd->requestMoveTarget(idx, ref, on);
        added++;
    }
    /* Only the updates of the timed ticks are timed; the quality figures
       are taken between updates, outside the clock. */
    int last = total > warm + ticks ? total : warm + ticks;
    double el = 0, deepest = 0;
    long over5 = 0, over30 = 0;
    int arrived_at[3] = {0, 0, 0}, active = 0;
    double vsum = 0; /* speeds at the end of the timed ticks */
    for (int t = 0; t < last; t++) {
        double t0 = now_s();
        crowd->update(dt, nullptr);
        if (t >= warm && t < warm + ticks)
            el += now_s() - t0;
        for (int i = 0; t + 1 == warm + ticks && i < crowd->getAgentCount(); i++) {
            const dtCrowdAgent *ag = crowd->getAgent(i);
            if (!ag->active)
                continue;
            active++;
            vsum += std::hypot(ag->vel[0], ag->vel[2]);
        }
        if (total <= 0 || t < warm)
            continue;
        /* overlaps: every pair on one floor (within 2 m in y) */
        for (int i = 0; i < crowd->getAgentCount(); i++) {
            const dtCrowdAgent *a = crowd->getAgent(i);
            if (!a->active)
                continue;
            for (int j = i + 1; j < crowd->getAgentCount(); j++) {
                const dtCrowdAgent *b = crowd->getAgent(j);
                if (!b->active || std::fabs(a->npos[1] - b->npos[1]) > 2.0f)
                    continue;
                double pen =
                    2.0 * radius - std::hypot(a->npos[0] - b->npos[0], a->npos[2] - b->npos[2]);
                if (pen > deepest)
                    deepest = pen;
                if (pen > 0.05)
                    over5++;
                if (pen > 0.3)
                    over30++;
            }
        }
        int at = t + 1 == warm + ticks ? 0 : t + 1 == total / 2 ? 1 : t + 1 == total ? 2 : -1;
        if (at < 0)
            continue;
        for (int i = 0; i < crowd->getAgentCount(); i++) {
            const dtCrowdAgent *a = crowd->getAgent(i);
            const float *g = &tg[3 * (size_t)agent_of[i]];
            if (a->active && std::hypot(a->npos[0] - g[0], a->npos[2] - g[2]) <= 1.0 &&
                std::fabs(a->npos[1] - g[1]) <= 2.0)
                arrived_at[at]++;
        }
    }
    std::printf("crowd_ref %s %.3f %d %.3f\n", argv[3], el * 1e6 / ((double)added * ticks), active,
                active ? vsum / active : 0.0);
    if (total > warm + ticks)
        std::printf("crowd_quality %.3f %ld %d %d %d %ld\n", deepest, over5, arrived_at[0],
                    arrived_at[1], arrived_at[2], over30);
    dtFreeCrowd(crowd);
    dtFreeNavMesh(nav);
    json_decref(root);
    return 0;
}
