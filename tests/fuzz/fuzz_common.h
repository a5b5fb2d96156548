/*
 * fuzz_common: what every libFuzzer harness in tests/fuzz/ shares.
 *
 * A byte reader that turns the fuzzer's input into small integers and
 * floats (running out of input yields zeros, never an error, so every input
 * is a valid program), a small fixed navmesh for the request harnesses, and
 * a check that exercises a built mesh through its read-only entry points so
 * that a mesh the builder or the blob reader accepted but left inconsistent
 * is caught here, not in production.
 *
 * Harnesses abort (and so report a crash) when an invariant the contract
 * promises is broken; sanitizers report memory and UB errors.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_mesh.h"

typedef struct fz_reader {
    const uint8_t *p;
    size_t left;
} fz_reader;

void fz_init(fz_reader *r, const uint8_t *data, size_t size);
uint8_t fz_u8(fz_reader *r);
uint32_t fz_u32(fz_reader *r);
/* Raw IEEE bits: any float including NaN, infinities and denormals. */
float fz_raw_float(fz_reader *r);

/* Aborts with a message when cond is false: the fuzzer reports it as a crash. */
void fz_require(int cond, const char *what);

/*
 * Calls every read-only accessor of a built mesh (metadata, heights,
 * nearest, box query, reachability, serialization round-trip, export
 * round-trip) and aborts when one of the mesh's promises does not hold.
 */
void fz_exercise_mesh(const nav_mesh *m);
/* Set while m came from a version 3 blob whose CRCs the harness forged: its
   stored structures passed the load's checks (so every query is safe), but
   nothing makes it a mesh the build would produce (vertices closer than the
   weld distance, a wall where the build would pair an edge, labels that
   merge two components), so its export may rebuild differently or not at
   all: fz_exercise_mesh then runs that rebuild without requiring either. */
extern int fz_forged_snapshot;

#endif
