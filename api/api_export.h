/*
 * api_export: writes a navmesh to a file in the upload JSON format, for
 * tools that run without a server (`navd bake`). Keeps jansson inside api/.
 */
#ifndef API_EXPORT_H
#define API_EXPORT_H

#include <stddef.h>

#include "nav/nav_mesh.h"

/* Writes m as upload JSON (compact) to path ("-": stdout). 0 on success,
   else -1 with a sentence in err. */
int api_mesh_save_json(const nav_mesh *m, const char *path, char *err, size_t errsz);

#endif
