/*
 * api_profiles: the agent profiles of one navmesh version, and the blob
 * they are stored as.
 *
 * A baked navmesh holds one complete nav_mesh per agent profile ("default",
 * "large", ...), all under one name and one version, plus the description
 * of where it came from (the level and every bake setting, as JSON text).
 * An uploaded navmesh is the single profile "default" with no source, and
 * is stored exactly as before (a plain nav_mesh blob), so stores written by
 * older navd keep loading and uploads cost nothing extra.
 *
 * Container blob (little endian): "NAVP", u32 format version (1), u32
 * profile count, u32 source length, source bytes; per profile: u32 name
 * length, name bytes, u32 blob length, nav_mesh blob; u32 CRC-32 of all
 * preceding bytes. Each inner blob carries its own CRC too.
 */
#ifndef API_PROFILES_H
#define API_PROFILES_H

#include <stddef.h>
#include <stdint.h>

#include "nav/nav_mesh.h"

#define API_PROFILE_NAME_MAX 64 /* bytes of a profile name, without the NUL */
#define API_MAX_PROFILES 16     /* profiles per navmesh */

typedef struct api_profile {
    char name[API_PROFILE_NAME_MAX + 1];
    nav_mesh *mesh;
} api_profile;

/* True when s is a valid profile name: ^[A-Za-z0-9_.-]{1,64}$, the navmesh name rule. */
int api_profile_name_ok(const char *s);

/*
 * Serializes n profiles (n >= 1) and the source text (NULL: none). A single
 * profile named "default" without a source is written as its plain nav_mesh
 * blob. *out is malloc'd.
 */
nav_status api_profiles_serialize(const api_profile *p, uint32_t n, const char *source,
                                  uint8_t **out, size_t *len);

/*
 * Reads either form back: *out (malloc'd, *n entries, meshes owned) and
 * *source (malloc'd, or NULL). NAV_E_CORRUPT for damaged bytes, with
 * nothing allocated. Free with api_profiles_free.
 */
nav_status api_profiles_deserialize(const uint8_t *blob, size_t len, api_profile **out, uint32_t *n,
                                    char **source);

/* Frees the meshes and the array; NULL is a no-op. */
void api_profiles_free(api_profile *p, uint32_t n);

#endif
