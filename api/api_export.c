/*
 * api_export.c: a navmesh to a JSON file (see api_export.h).
 */
#include "api/api_export.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/api_codec.h"

int api_mesh_save_json(const nav_mesh *m, const char *path, char *err, size_t errsz) {
    json_t *root = api_mesh_encode_json(m);
    if (!root) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    int rc;
    if (strcmp(path, "-") == 0) {
        rc = json_dumpf(root, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        fputc('\n', stdout);
        fflush(stdout);
    } else {
        rc =
            json_dump_file(root, path, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    }
    json_decref(root);
    if (rc != 0) {
        snprintf(err, errsz, "cannot write %s: %s", path, errno ? strerror(errno) : "error");
        return -1;
    }
    return 0;
}
