/*
 * check_nav_bake_shared: our bake of ../shared/meshes/<name>.obj with the
 * default settings against Recast's bake of the same geometry
 * (<name>.navmesh.json) and the reference query pairs (<name>.queries.json).
 *
 * - walkable area (xz) within 3 % of Recast's, the same number of connected
 *   components (the README's 4, 17, 1, 13);
 * - for every query pair whose two points snap on both meshes: the optimal
 *   path on our bake is within 2 % (xz length) of the optimal path on
 *   Recast's mesh for at least 95 % of the pairs; every point sampled every
 *   0.25 m along the path, lifted onto our surface, lies within 1 m (xz;
 *   2 m in y) of Recast's surface (both simplify edges by up to 1.3 cells),
 *   and the path raised 1 m (above any step) crosses no triangle of the
 *   level: no path cuts through a wall or over a void. A control checks
 *   that straight lines where the path bends do fail that check;
 * - the bake is deterministic (two bakes serialize byte-identically).
 * Town (28,522 triangles, 2,000 queries of up to 500 m) runs only in builds
 * without sanitizers: under ASan it takes minutes. Skipped with a message
 * when ../shared is absent.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_bake.h"
#include "nav/nav_internal.h"
#include "nav/nav_query.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BAKE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BAKE_SANITIZED 1
#endif
#endif
#ifndef BAKE_SANITIZED
#define BAKE_SANITIZED 0
#endif

#define SURFACE_TOL 1.0 /* m, xz */

typedef struct bake_case {
    const char *name;
    uint32_t components;
} bake_case;

static const bake_case CASES[4] = {
    {"dungeon", 4}, {"nav_test", 17}, {"undulating", 1}, {"town", 13}};

static char *shared_path(const char *name, const char *suffix) {
    char file[128];
    snprintf(file, sizeof file, "%s%s", name, suffix);
    const char *p = fx_shared_mesh_path(file);
    return p ? strdup(p) : NULL;
}

/* Bakes <name>.obj with the default settings (one profile). */
static nav_mesh *bake_shared(const char *name, const nav_bake_settings *s, nav_level **lv_out) {
    char *path = shared_path(name, ".obj");
    ck_assert_ptr_nonnull(path);
    size_t len;
    char *text = fx_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    nav_level *lv = NULL;
    nav_error e = {0};
    ck_assert_int_eq(nav_level_from_obj(text, len, 0, &lv, &e), NAV_OK);
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *m = NULL;
    nav_bake_report r;
    nav_status st = nav_bake(lv, s, &p, 1, NULL, NULL, NULL, &m, &r, &e);
    ck_assert_msg(st == NAV_OK, "%s: %s", name, e.message);
    ck_assert(nav_mesh_has_detail(m));
    printf("bake %-10s: %u polygons, %u components, %.1f m2, %.1f ms\n", name,
           nav_mesh_polygon_count(m), nav_mesh_component_count(m), nav_mesh_area(m), r.total_ms);
    if (lv_out)
        *lv_out = lv;
    else
        nav_level_free(lv);
    free(text);
    free(path);
    return m;
}

static double xz_length(const float *c, uint32_t n) {
    double l = 0;
    for (uint32_t i = 1; i < n; i++)
        l += nav_dist2d(&c[3 * (i - 1)], &c[3 * i]);
    return l;
}

/* ---- the level's triangles in 2 m buckets, for the geometry check ---- */
typedef struct tri_grid {
    const float *v;
    const uint32_t *t;
    float x0, z0, cell;
    int w, h;
    uint32_t *start, *items;
} tri_grid;

static void tri_grid_init(tri_grid *g, const nav_level *lv) {
    g->v = nav_level_vertices(lv);
    g->t = nav_level_triangles(lv);
    uint32_t nt = nav_level_triangle_count(lv);
    float bmin[3], bmax[3];
    nav_level_bounds(lv, bmin, bmax);
    g->cell = 2.0f;
    g->x0 = bmin[0];
    g->z0 = bmin[2];
    g->w = (int)((bmax[0] - bmin[0]) / g->cell) + 1;
    g->h = (int)((bmax[2] - bmin[2]) / g->cell) + 1;
    g->start = calloc((size_t)g->w * g->h + 1, sizeof *g->start);
    g->items = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int i = 1; i <= g->w * g->h; i++)
                g->start[i] += g->start[i - 1];
            g->items = malloc(sizeof *g->items * (g->start[g->w * g->h] + 1));
        }
        for (uint32_t t = 0; t < nt; t++) {
            float mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY};
            for (int k = 0; k < 3; k++) {
                const float *p = &g->v[3 * g->t[3 * t + k]];
                mn[0] = fminf(mn[0], p[0]), mx[0] = fmaxf(mx[0], p[0]);
                mn[1] = fminf(mn[1], p[2]), mx[1] = fmaxf(mx[1], p[2]);
            }
            int ax = (int)((mn[0] - g->x0) / g->cell), bx = (int)((mx[0] - g->x0) / g->cell);
            int az = (int)((mn[1] - g->z0) / g->cell), bz = (int)((mx[1] - g->z0) / g->cell);
            for (int z = az; z <= bz; z++)
                for (int x = ax; x <= bx; x++) {
                    int c = x + z * g->w;
                    if (pass == 0)
                        g->start[c + 1]++;
                    else
                        g->items[g->start[c]++] = t;
                }
        }
        if (pass == 1)
            for (int i = g->w * g->h; i > 0; i--)
                g->start[i] = g->start[i - 1];
        if (pass == 1)
            g->start[0] = 0;
    }
}

static void tri_grid_free(tri_grid *g) {
    free(g->start);
    free(g->items);
}

/* Segment p-q meets triangle t (Moller-Trumbore, both ends included). */
static bool seg_hits_tri(const tri_grid *g, uint32_t t, const float *p, const float *q) {
    const float *a = &g->v[3 * g->t[3 * t]], *b = &g->v[3 * g->t[3 * t + 1]],
                *c = &g->v[3 * g->t[3 * t + 2]];
    double e1[3], e2[3], d[3], s[3], h[3], qv[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
        d[k] = (double)q[k] - p[k];
        s[k] = (double)p[k] - a[k];
    }
    h[0] = d[1] * e2[2] - d[2] * e2[1];
    h[1] = d[2] * e2[0] - d[0] * e2[2];
    h[2] = d[0] * e2[1] - d[1] * e2[0];
    double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
    if (fabs(det) < 1e-12)
        return false;
    double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / det;
    if (u < 0 || u > 1)
        return false;
    qv[0] = s[1] * e1[2] - s[2] * e1[1];
    qv[1] = s[2] * e1[0] - s[0] * e1[2];
    qv[2] = s[0] * e1[1] - s[1] * e1[0];
    double v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) / det;
    if (v < 0 || u + v > 1)
        return false;
    double t2 = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / det;
    return t2 >= 0 && t2 <= 1;
}

static bool seg_hits_level(const tri_grid *g, const float *p, const float *q) {
    int cx = (int)((p[0] - g->x0) / g->cell), cz = (int)((p[2] - g->z0) / g->cell);
    for (int z = cz - 1; z <= cz + 1; z++)
        for (int x = cx - 1; x <= cx + 1; x++) {
            if (x < 0 || z < 0 || x >= g->w || z >= g->h)
                continue;
            int c = x + z * g->w;
            for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++)
                if (seg_hits_tri(g, g->items[k], p, q))
                    return true;
        }
    return false;
}

/*
 * Walks the path's corners in xz every 0.25 m, each point lifted onto our
 * surface. Returns 1 when a point is farther than `tol` (xz) from Recast's
 * surface at about that height (a void, or outside the walkable area), 2
 * when the segment between two points, raised 1 m (chest height: above
 * any step the agent climbs), passes through a level triangle (a wall).
 */
static int path_check(const nav_mesh *ours, const nav_mesh *ref, const tri_grid *g, const float *c,
                      uint32_t n, double tol, double *worst) {
    const float rext[3] = {(float)tol, 2.0f, (float)tol};
    float prev[3];
    bool have = false;
    for (uint32_t i = 0; i + 1 < n; i++) {
        const float *a = &c[3 * i], *b = &c[3 * (i + 1)];
        int steps = (int)(nav_dist2d(a, b) / 0.25) + 1;
        for (int k = (i == 0 ? 0 : 1); k <= steps; k++) {
            float t = (float)k / (float)steps, p[3], on[3], out[3];
            for (int j = 0; j < 3; j++)
                p[j] = a[j] + (b[j] - a[j]) * t;
            uint32_t poly;
            const float oext[3] = {0.05f, 8.0f, 0.05f};
            /* follow the floor the path is on (under a bridge, the bridge is
               also "near"): look from the previous point's height */
            if (have)
                p[1] = prev[1] - 1.0f;
            if (nav_mesh_nearest(ours, p, oext, 0, &poly, on) != NAV_OK)
                memcpy(on, p, sizeof on);
            if (nav_mesh_nearest(ref, on, rext, 0, &poly, out) != NAV_OK) {
                if (getenv("BAKE_DEBUG")) {
                    const float big[3] = {(float)tol, 20, (float)tol};
                    int r1 = nav_mesh_nearest(ref, on, big, 0, &poly, out);
                    printf("off: p %.2f %.2f %.2f on %.2f %.2f %.2f ref(%d) %.2f %.2f %.2f\n", p[0],
                           p[1], p[2], on[0], on[1], on[2], r1, out[0], out[1], out[2]);
                }
                return 1;
            }
            double dxz = hypot(out[0] - on[0], out[2] - on[2]);
            if (dxz > *worst)
                *worst = dxz;
            float lifted[3] = {on[0], on[1] + 1.0f, on[2]};
            if (have && seg_hits_level(g, prev, lifted)) {
                if (getenv("BAKE_DEBUG"))
                    printf("wall: %.2f %.2f %.2f -> %.2f %.2f %.2f\n", prev[0], prev[1], prev[2],
                           lifted[0], lifted[1], lifted[2]);
                return 2;
            }
            memcpy(prev, lifted, sizeof prev);
            have = true;
        }
    }
    return 0;
}

typedef struct path_stats {
    uint32_t pairs, within, partial_mismatch, off, walls;
    uint32_t bent, bent_caught; /* control: straight lines where the path bends */
    double worst;               /* largest xz distance of a path point from Recast's surface */
} path_stats;

static void compare_paths(const char *name, const nav_mesh *ours, const nav_mesh *ref,
                          const nav_level *lv, path_stats *ps) {
    tri_grid g;
    tri_grid_init(&g, lv);
    char *qpath = shared_path(name, ".queries.json");
    ck_assert_ptr_nonnull(qpath);
    uint32_t nq;
    mj_query *qs = mj_queries(qpath, &nq);
    ck_assert(qs && nq > 0);
    nav_query *q = nav_query_new(65536);
    enum { MAXC = 4096 };
    float *ca = malloc(sizeof(float) * 3 * MAXC), *cb = malloc(sizeof(float) * 3 * MAXC);
    memset(ps, 0, sizeof *ps);
    const float ext[3] = {2, 4, 2};
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t pp;
        float tmp[3];
        if (nav_mesh_nearest(ours, qs[i].start, ext, 0, &pp, tmp) != NAV_OK ||
            nav_mesh_nearest(ours, qs[i].end, ext, 0, &pp, tmp) != NAV_OK ||
            nav_mesh_nearest(ref, qs[i].start, ext, 0, &pp, tmp) != NAV_OK ||
            nav_mesh_nearest(ref, qs[i].end, ext, 0, &pp, tmp) != NAV_OK)
            continue;
        nav_path_request r = {.extents = {2, 4, 2}, .algorithm = NAV_ALGO_OPTIMAL};
        memcpy(r.start, qs[i].start, sizeof r.start);
        memcpy(r.end, qs[i].end, sizeof r.end);
        nav_path_result ra = {.corners = ca, .max_corners = MAXC};
        nav_path_result rb = {.corners = cb, .max_corners = MAXC};
        ck_assert_int_eq(nav_find_path(q, ours, &r, &ra), NAV_OK);
        ck_assert_int_eq(nav_find_path(q, ref, &r, &rb), NAV_OK);
        ps->pairs++;
        const uint32_t partial = NAV_PATH_PARTIAL_UNREACHABLE | NAV_PATH_PARTIAL_BUDGET;
        bool pa = (ra.flags & partial) != 0, pb = (rb.flags & partial) != 0;
        int pc = path_check(ours, ref, &g, ca, ra.ncorners, SURFACE_TOL, &ps->worst);
        ps->off += pc == 1;
        ps->walls += pc == 2;
        if (pa != pb) {
            ps->partial_mismatch++;
            continue;
        }
        double la = xz_length(ca, ra.ncorners), lb = xz_length(cb, rb.ncorners);
        /* control: where the optimal path bends by more than 5 %, the straight
           line between its ends must fail the same check (else the check
           could not see a wall) */
        if (!pa && ra.ncorners >= 3 && la > 1.05 * nav_dist2d(ra.start, ra.end) && ps->bent < 200) {
            float line[6];
            memcpy(line, ra.start, sizeof ra.start);
            memcpy(line + 3, ra.end, sizeof ra.end);
            double w = 0;
            ps->bent++;
            ps->bent_caught += path_check(ours, ref, &g, line, 2, SURFACE_TOL, &w) != 0;
        }
        if (fabs(la - lb) <= 0.02 * lb + 1e-3)
            ps->within++;
    }
    printf("bake %-10s paths: %u pairs snap on both, %u within 2 %% (%.1f %%), %u complete on one "
           "side only, %u leave Recast's surface (worst %.2f m), %u cross geometry\n",
           name, ps->pairs, ps->within, ps->pairs ? 100.0 * ps->within / ps->pairs : 0,
           ps->partial_mismatch, ps->off, ps->worst, ps->walls);
    tri_grid_free(&g);
    free(ca);
    free(cb);
    nav_query_free(q);
    free(qs);
    free(qpath);
}

START_TEST(bake_matches_recast) {
    const bake_case *c = &CASES[_i];
    char *ref_path = shared_path(c->name, ".navmesh.json");
    if (!ref_path) {
        printf("check_nav_bake_shared: ../shared absent, skipping %s\n", c->name);
        return;
    }
    if (BAKE_SANITIZED && strcmp(c->name, "town") == 0) {
        printf("check_nav_bake_shared: town skipped in sanitized builds (too slow)\n");
        free(ref_path);
        return;
    }
    nav_mesh *ref = mj_load(ref_path);
    ck_assert_ptr_nonnull(ref);
    nav_bake_settings s = nav_bake_settings_default();
    nav_level *lv;
    nav_mesh *m = bake_shared(c->name, &s, &lv);
    double a = nav_mesh_area(m), ra = nav_mesh_area(ref);
    ck_assert_msg(fabs(a - ra) <= 0.03 * ra, "%s: area %.1f vs Recast %.1f", c->name, a, ra);
    ck_assert_uint_eq(nav_mesh_component_count(ref), c->components);
    ck_assert_msg(nav_mesh_component_count(m) == c->components, "%s: %u components, Recast %u",
                  c->name, nav_mesh_component_count(m), c->components);
    path_stats ps;
    compare_paths(c->name, m, ref, lv, &ps);
    ck_assert_uint_gt(ps.pairs, 1000);
    ck_assert_msg(ps.within >= 0.95 * ps.pairs, "%s: only %u of %u paths within 2 %%", c->name,
                  ps.within, ps.pairs);
    ck_assert_msg(ps.off == 0, "%s: %u paths leave Recast's walkable surface", c->name, ps.off);
    ck_assert_msg(ps.walls == 0, "%s: %u paths cross the level's geometry", c->name, ps.walls);
    printf("bake %-10s control: %u of %u straight lines where the path bends fail the check\n",
           c->name, ps.bent_caught, ps.bent);
    /* (undulating is one open hill: few paths bend, and around bumps that
       are themselves walkable, so only levels with walls count) */
    if (ps.bent >= 100)
        ck_assert_msg(ps.bent_caught >= 0.9 * ps.bent, "%s: the check caught only %u of %u",
                      c->name, ps.bent_caught, ps.bent);

    /* determinism: a second bake serializes to the same bytes */
    nav_mesh *m2 = bake_shared(c->name, &s, NULL);
    uint8_t *b1, *b2;
    size_t l1, l2;
    ck_assert_int_eq(nav_mesh_serialize(m, &b1, &l1), NAV_OK);
    ck_assert_int_eq(nav_mesh_serialize(m2, &b2, &l2), NAV_OK);
    ck_assert(l1 == l2 && memcmp(b1, b2, l1) == 0);
    free(b1);
    free(b2);
    nav_mesh_free(m2);
    nav_mesh_free(m);
    nav_mesh_free(ref);
    nav_level_free(lv);
    free(ref_path);
}
END_TEST

/* The other ways to bake the same level keep its walkable area (3 %) and
   connected components: the monotone partition, and 64-cell tiles on two
   threads (stitched borders, islands dropped after joining). */
START_TEST(variants_match) {
    const bake_case *c = &CASES[_i];
    char *ref_path = shared_path(c->name, ".navmesh.json");
    if (!ref_path) {
        printf("check_nav_bake_shared: ../shared absent, skipping %s\n", c->name);
        return;
    }
    free(ref_path);
    if (BAKE_SANITIZED && strcmp(c->name, "town") == 0)
        return;
    nav_bake_settings s = nav_bake_settings_default();
    nav_mesh *one = bake_shared(c->name, &s, NULL);
    s.partition = NAV_BAKE_MONOTONE;
    nav_mesh *mono = bake_shared(c->name, &s, NULL);
    s.partition = NAV_BAKE_WATERSHED;
    s.tile_size = 64;
    s.threads = 2;
    nav_mesh *tiled = bake_shared(c->name, &s, NULL);
    double a = nav_mesh_area(one);
    const nav_mesh *v[2] = {mono, tiled};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(fabs(nav_mesh_area(v[i]) - a) <= 0.03 * a, "%s %s: area %.1f vs %.1f",
                      c->name, i ? "tiled" : "monotone", nav_mesh_area(v[i]), a);
        ck_assert_msg(nav_mesh_component_count(v[i]) == c->components, "%s %s: %u components",
                      c->name, i ? "tiled" : "monotone", nav_mesh_component_count(v[i]));
    }
    nav_mesh_free(one);
    nav_mesh_free(mono);
    nav_mesh_free(tiled);
}
END_TEST

/* nav_test with drop 3 and climb 1.8: ledges get links (each more than a
   step and within its limit), and paths that exist only through them are
   found. */
START_TEST(links_on_nav_test) {
    char *ref_path = shared_path("nav_test", ".obj");
    if (!ref_path) {
        printf("check_nav_bake_shared: ../shared absent, skipping links\n");
        return;
    }
    char *path = shared_path("nav_test", ".obj");
    size_t len;
    char *text = fx_read_file(path, &len);
    nav_level *lv = NULL;
    nav_error e = {0};
    ck_assert_int_eq(nav_level_from_obj(text, len, 0, &lv, &e), NAV_OK);
    nav_bake_settings s = nav_bake_settings_default();
    nav_bake_profile p = nav_bake_profile_default();
    nav_mesh *plain = NULL, *linked = NULL;
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, NULL, NULL, &plain, NULL, &e), NAV_OK);
    p.link_drop = 3;
    p.link_climb = 1.8f;
    nav_bake_report r;
    ck_assert_int_eq(nav_bake(lv, &s, &p, 1, NULL, NULL, NULL, &linked, &r, &e), NAV_OK);
    uint32_t nl = nav_mesh_link_count(linked);
    ck_assert_uint_gt(nl, 0);
    ck_assert_uint_eq(r.links[0], nl);
    for (uint32_t i = 0; i < nl; i++) {
        const char *k = nav_mesh_link_kind(linked, i);
        ck_assert(strcmp(k, "drop") == 0 || strcmp(k, "climb") == 0);
        float a[3], b[3];
        nav_mesh_link_points(linked, i, a, b);
        float dy = strcmp(k, "drop") == 0 ? a[1] - b[1] : b[1] - a[1];
        ck_assert_float_gt(dy, p.max_climb); /* more than a step */
        ck_assert_float_le(dy, strcmp(k, "drop") == 0 ? 3.0f : 1.8f);
    }
    /* every link that joins two components of the plain mesh carries
       paths that exist only through it: from just before its start to just
       after its end */
    nav_query *q = nav_query_new(65536);
    float corners[3 * 1024];
    uint32_t links[64];
    uint32_t joining = 0;
    const float ext[3] = {0.5f, 1.0f, 0.5f};
    for (uint32_t i = 0; i < nl; i++) {
        float a[3], b[3], o[3];
        nav_mesh_link_points(linked, i, a, b);
        uint32_t pa, pb;
        ck_assert_int_eq(nav_mesh_nearest(plain, a, ext, 0, &pa, o), NAV_OK);
        ck_assert_int_eq(nav_mesh_nearest(plain, b, ext, 0, &pb, o), NAV_OK);
        if (nav_mesh_poly_component(plain, pa) == nav_mesh_poly_component(plain, pb))
            continue;
        joining++;
        nav_path_request req = {.extents = {0.5f, 1.0f, 0.5f}};
        memcpy(req.start, a, sizeof req.start);
        memcpy(req.end, b, sizeof req.end);
        nav_path_result ra = {.corners = corners, .max_corners = 1024};
        ck_assert_int_eq(nav_find_path(q, plain, &req, &ra), NAV_OK);
        ck_assert_uint_ne(ra.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
        nav_path_result rb = {
            .corners = corners, .max_corners = 1024, .links = links, .max_links = 64};
        ck_assert_int_eq(nav_find_path(q, linked, &req, &rb), NAV_OK);
        ck_assert_uint_eq(rb.flags & NAV_PATH_PARTIAL_UNREACHABLE, 0);
        ck_assert_uint_ge(rb.nlinks, 1);
    }
    printf("bake nav_test links: %u (drop 3, climb 1.8), %u join parts that no walk joins: "
           "components %u -> %u\n",
           nl, joining, nav_mesh_component_count(plain), nav_mesh_component_count(linked));
    ck_assert_uint_gt(joining, 0);
    ck_assert_uint_lt(nav_mesh_component_count(linked), nav_mesh_component_count(plain));
    nav_query_free(q);
    nav_mesh_free(plain);
    nav_mesh_free(linked);
    nav_level_free(lv);
    free(text);
    free(path);
    free(ref_path);
}
END_TEST

extern Suite *nav_bake_shared_suite(void);
Suite *nav_bake_shared_suite(void) {
    Suite *s = suite_create("nav_bake_shared");
    TCase *tc = tcase_create("recast");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, bake_matches_recast, 0, 4);
    tcase_add_test(tc, links_on_nav_test);
    tcase_add_loop_test(tc, variants_match, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
