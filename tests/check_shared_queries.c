/*
 * check_shared_queries: nav_find_path against the reference answers of
 * ../shared/meshes/<name>.queries.json (Detour's findNearestPoly + findPath +
 * findStraightPath on real Recast meshes). Skips with a message when
 * ../shared is absent.
 *
 * For every query: complete/partial agrees with the reference; over the
 * queries both sides complete, the mean path length in the xz plane is no
 * greater than the reference's (the reference string-pulls an A* over edge
 * midpoints, which is not optimal). Checked for the corridor algorithm and
 * for AUTO (the per-path optimality check belongs to the optimal search's
 * own tests).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nav/nav_internal.h"
#include "nav/nav_query.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

static const char *const MESHES[] = {"dungeon", "nav_test", "undulating"};

static void check_mesh(const char *name, nav_algo algo) {
    char file[128];
    snprintf(file, sizeof(file), "%s.navmesh.json", name);
    const char *mpath = fx_shared_mesh_path(file);
    if (!mpath) {
        printf("check_shared_queries: ../shared absent, skipping %s\n", name);
        return;
    }
    nav_mesh *m = mj_load(mpath);
    ck_assert_msg(m != NULL, "%s does not load", mpath);
    snprintf(file, sizeof(file), "%s.queries.json", name);
    const char *qpath = fx_shared_mesh_path(file);
    ck_assert_ptr_nonnull(qpath);
    uint32_t nq;
    mj_query *qs = mj_queries(qpath, &nq);
    ck_assert_msg(qs && nq > 0, "%s has no queries", qpath);

    nav_query *q = nav_query_new(8192);
    float corners[3 * 512];
    uint32_t polys[1024];
    double ours = 0, ref = 0;
    uint32_t both = 0, disagree = 0;
    for (uint32_t i = 0; i < nq; i++) {
        nav_path_request r = {.extents = {2, 4, 2}, .algorithm = algo};
        for (int k = 0; k < 3; k++) {
            r.start[k] = qs[i].start[k];
            r.end[k] = qs[i].end[k];
        }
        nav_path_result res = {
            .corners = corners, .max_corners = 512, .polys = polys, .max_polys = 1024};
        nav_status st = nav_find_path(q, m, &r, &res);
        ck_assert_msg(st == NAV_OK, "%s query %u: %s", name, i, nav_status_text(st));
        ck_assert_uint_eq(res.flags & NAV_PATH_TRUNCATED, 0);
        int complete = (res.flags & (NAV_PATH_PARTIAL_UNREACHABLE | NAV_PATH_PARTIAL_BUDGET)) == 0;
        if (complete != qs[i].complete) {
            disagree++;
            continue;
        }
        if (!complete)
            continue;
        double l2 = 0;
        for (uint32_t c = 1; c < res.ncorners; c++)
            l2 += nav_dist2d(&corners[3 * (c - 1)], &corners[3 * c]);
        ours += l2;
        ref += qs[i].length2d;
        both++;
    }
    printf("shared %-10s %-8s: %u queries, status disagreements %u, mean xz length %.6f vs "
           "reference %.6f (ratio %.5f)\n",
           name, algo == NAV_ALGO_CORRIDOR ? "corridor" : "auto", nq, disagree,
           both ? ours / both : 0, both ? ref / both : 0, ref > 0 ? ours / ref : 0);
    ck_assert_msg(disagree == 0, "%s: %u queries disagree on complete/partial", name, disagree);
    ck_assert_msg(ours <= ref + 1e-6 * both, "%s: mean xz length %.6f above the reference %.6f",
                  name, ours / both, ref / both);
    nav_query_free(q);
    free(qs);
    nav_mesh_free(m);
}

START_TEST(shared_corridor) {
    check_mesh(MESHES[_i], NAV_ALGO_CORRIDOR);
}
END_TEST

START_TEST(shared_auto) {
    check_mesh(MESHES[_i], NAV_ALGO_AUTO);
}
END_TEST

extern Suite *shared_queries_suite(void);
Suite *shared_queries_suite(void) {
    Suite *s = suite_create("shared_queries");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, shared_corridor, 0, 3);
    tcase_add_loop_test(tc, shared_auto, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}
