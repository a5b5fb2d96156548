/*
 * fuzz_obj: the Wavefront OBJ loader (nav_obj_parse) and the build of what
 * it parsed, as a PUT with Content-Type model/obj does.
 *
 * The input is the OBJ text itself (not NUL-terminated: the parser is given
 * the length, as the HTTP body arrives). Seeds: the shared Recast navmeshes
 * exported as OBJ and small hand-written files (tests/fuzz/corpus/obj/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A copy of exactly `size` bytes, so reading past the end is an ASan error. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);

    nav_obj obj;
    nav_error err;
    memset(&obj, 0, sizeof obj);
    nav_status st = nav_obj_parse(text, size, &obj, &err);
    if (st == NAV_OK) {
        nav_mesh_input in;
        nav_obj_as_input(&obj, &in);
        fz_require(in.nverts == obj.nverts && in.npolys == obj.npolys, "OBJ input view");
        nav_mesh_limits lim = {
            .max_verts = 1u << 16, .max_polys = 1u << 16, .max_verts_per_poly = 32, .max_links = 0};
        nav_mesh *m = NULL;
        if (nav_mesh_build(&in, &lim, &m, &err) == NAV_OK) {
            fz_exercise_mesh(m);
            nav_mesh_free(m);
        } else {
            fz_require(m == NULL, "a failed build leaves *out NULL");
        }
        nav_obj_free(&obj);
    }
    free(text);
    return 0;
}
