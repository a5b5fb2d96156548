/*
 * test_snapshot: checks shared by the suites that load meshes from version 3
 * blobs (the built structures stored, nav_snapshot.c) against meshes built
 * from their input form (what every older blob goes through).
 */
#ifndef TEST_SNAPSHOT_H
#define TEST_SNAPSHOT_H

#include <stdint.h>

#include "nav/nav_mesh.h"

/* Every array of the two built meshes equal (the corner graph by counts). */
void snap_assert_same(const nav_mesh *a, const nav_mesh *b);
/* b's corner-graph walk mesh equal to a's, array by array (pieces, loops,
   adjacency, corner slots, node pieces, link lists). */
struct nav_cgraph;
void snap_assert_same_walk(const struct nav_cgraph *a, const struct nav_cgraph *b);
/* nq random queries of every kind give the same answers on both meshes. */
void snap_assert_same_answers(const nav_mesh *a, const nav_mesh *b, uint32_t seed, int nq);
/* m serialized and loaded (snapshot) and rebuilt from nav_mesh_as_input:
   both equal to m and to each other, in arrays and in answers. */
void snap_check(const nav_mesh *m, uint32_t seed, int nq);
/* Runs nq queries of every kind on m, answers unchecked: a mesh loaded from
   damaged bytes must answer without crashing (ASan and UBSan watch). */
void snap_exercise(const nav_mesh *m, uint32_t seed, int nq);

#endif
