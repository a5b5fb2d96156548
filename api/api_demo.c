/*
 * api_demo: the demo navmesh that `navd --demo` stores as "demo" when the
 * store is empty, so a newcomer can query at once. Built in code (no file
 * to ship), 32 polygons, one connected component.
 *
 * Top-down layout (x to the right, z downward, metres; y = 0 unless noted):
 *
 *   z=0  +------------------------------------------------------+
 *        |                 HALL  [0,60] x [0,20]                 |
 *   z=8  |                          +--+                         |
 *        |                          |##|  pillar hole            |
 *   z=12 |                          +--+  [28,32] x [8,12]       |
 *   z=20 +------+--+--------------+-RAMP-+-----------------------+
 *               |C |              | y 0->4, [28,32] x [20,34]
 *               |O |              +------+ z=34
 *               |R |              | DECK | y = 4, [28,32] x [34,58]
 *   z=40 +------+--+----+         |      |     +-------------------+
 *        | SW ROOM      |         |      |     | SE ROOM            |
 *   z=48 | area 1       +---------|------|-----+ [36,60] x [40,60]  |
 *        | [0,20]x      | FLOOR CORRIDOR under the deck, y = 0      |
 *   z=52 | [40,60]      +---------|------|-----+                    |
 *        |              |         | jump o---->o  one-way link      |
 *   z=60 +--------------+         +------+     +-------------------+
 *
 * - HALL: grid lines x = 0, 8, 12, 28, 32, 60 and z = 0, 8, 12, 20 (14
 *   quads, the centre cell [28,32] x [8,12] is the pillar hole).
 * - CORRIDOR [8,12] x [20,40] joins the hall to the SW room.
 * - SW ROOM [0,20] x [40,60], area 1 (e.g. shallow water, costed by
 *   area_costs), grid lines x = 0, 8, 12, 20 and z = 40, 48, 52, 60.
 * - FLOOR CORRIDOR [20,36] x [48,52] joins the SW and SE rooms, split at
 *   x = 28 and 32 (the part under the deck).
 * - SE ROOM [36,60] x [40,60], split at z = 48 and 52.
 * - RAMP [28,32] x [20,34] rises from the hall (y = 0 at z = 20) to the
 *   DECK [28,32] x [34,58] at y = 4, which passes over the floor corridor
 *   (overlapping floors: a point at (30, 4, 50) is on the deck, (30, 0, 50)
 *   on the corridor below). The ramp and deck sides are walls.
 * - One-way off-mesh link "jump" from the deck end (31, 4, 57) down to the
 *   SE room (40, 0, 57), radius 0.5.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_log.h"

#define DEMO_MAX_VERTS 96
#define DEMO_MAX_POLYS 40

typedef struct demo {
    float verts[3 * DEMO_MAX_VERTS];
    uint32_t nverts;
    uint32_t poly_start[DEMO_MAX_POLYS + 1];
    uint32_t poly_verts[4 * DEMO_MAX_POLYS];
    uint8_t areas[DEMO_MAX_POLYS];
    uint32_t npolys;
} demo;

static uint32_t vert(demo *d, float x, float y, float z) {
    for (uint32_t i = 0; i < d->nverts; i++)
        if (d->verts[3 * i] == x && d->verts[3 * i + 1] == y && d->verts[3 * i + 2] == z)
            return i;
    d->verts[3 * d->nverts] = x;
    d->verts[3 * d->nverts + 1] = y;
    d->verts[3 * d->nverts + 2] = z;
    return d->nverts++;
}

/* Quad [x0,x1] x [z0,z1]; y0 at z0 and y1 at z1 (a ramp when they differ). */
static void quad(demo *d, float x0, float z0, float x1, float z1, float y0, float y1,
                 uint8_t area) {
    uint32_t s = d->poly_start[d->npolys];
    d->poly_verts[s] = vert(d, x0, y0, z0);
    d->poly_verts[s + 1] = vert(d, x1, y0, z0);
    d->poly_verts[s + 2] = vert(d, x1, y1, z1);
    d->poly_verts[s + 3] = vert(d, x0, y1, z1);
    d->areas[d->npolys] = area;
    d->poly_start[++d->npolys] = s + 4;
}

/* Quads over the grid xs x zs at height 0, skipping cell (skip_i, skip_j) if >= 0. */
static void grid(demo *d, const float *xs, int nx, const float *zs, int nz, int skip_i, int skip_j,
                 uint8_t area) {
    for (int j = 0; j + 1 < nz; j++)
        for (int i = 0; i + 1 < nx; i++)
            if (i != skip_i || j != skip_j)
                quad(d, xs[i], zs[j], xs[i + 1], zs[j + 1], 0, 0, area);
}

nav_status api_demo_build(nav_mesh **out) {
    demo *d = calloc(1, sizeof *d);
    if (!d)
        return NAV_E_NOMEM;
    static const float hall_x[] = {0, 8, 12, 28, 32, 60}, hall_z[] = {0, 8, 12, 20};
    grid(d, hall_x, 6, hall_z, 4, 3, 1, 0);
    quad(d, 8, 20, 12, 40, 0, 0, 0); /* corridor */
    static const float sw_x[] = {0, 8, 12, 20}, room_z[] = {40, 48, 52, 60};
    grid(d, sw_x, 4, room_z, 4, -1, -1, 1);
    static const float fc_x[] = {20, 28, 32, 36}, fc_z[] = {48, 52};
    grid(d, fc_x, 4, fc_z, 2, -1, -1, 0);
    static const float se_x[] = {36, 60};
    grid(d, se_x, 2, room_z, 4, -1, -1, 0);
    quad(d, 28, 20, 32, 34, 0, 4, 0); /* ramp */
    quad(d, 28, 34, 32, 58, 4, 4, 0); /* deck */

    nav_link_input jump = {
        .start = {31, 4, 57}, .end = {40, 0, 57}, .radius = 0.5f, .bidirectional = false};
    strcpy(jump.kind, "jump");
    nav_mesh_input in = {.verts = d->verts,
                         .nverts = d->nverts,
                         .poly_start = d->poly_start,
                         .poly_verts = d->poly_verts,
                         .npolys = d->npolys,
                         .areas = d->areas,
                         .links = &jump,
                         .nlinks = 1};
    nav_error err = {0};
    nav_status s = nav_mesh_build(&in, NULL, out, &err);
    if (s != NAV_OK)
        api_log(API_LOG_ERROR, "the demo navmesh did not build: %s", err.message);
    free(d);
    return s;
}

int api_demo_install(api_registry *reg) {
    nav_mesh *m = NULL;
    if (api_demo_build(&m) != NAV_OK)
        return -1;
    api_entry *e = NULL;
    int created = 0;
    api_err err = {0};
    if (api_registry_put(reg, "demo", m, &e, &created, &err) != API_OK) {
        api_log(API_LOG_ERROR, "the demo navmesh could not be stored: %s", err.message);
        return -1;
    }
    api_log(API_LOG_INFO, "stored the demo navmesh as 'demo' (%u polygons)",
            (unsigned)nav_mesh_polygon_count(e->mesh));
    api_entry_release(e);
    return 0;
}
