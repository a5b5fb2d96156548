/*
 * api_profiles: the profile-set container (see api_profiles.h for the
 * layout). Every length is checked against what remains before it is used,
 * so a truncated or hostile blob is NAV_E_CORRUPT, never a read past the end.
 */
#include "api/api_profiles.h"

#include <stdlib.h>
#include <string.h>

#include "nav/nav_crc.h"

#define MAGIC "NAVP"
#define FORMAT_VERSION 1u

int api_profile_name_ok(const char *s) {
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
        if (n >= API_PROFILE_NAME_MAX)
            return 0;
    }
    return n > 0;
}

void api_profiles_free(api_profile *p, uint32_t n) {
    if (!p)
        return;
    for (uint32_t i = 0; i < n; i++)
        nav_mesh_free(p[i].mesh);
    free(p);
}

static void put_u32(uint8_t *d, uint32_t v) {
    d[0] = (uint8_t)v;
    d[1] = (uint8_t)(v >> 8);
    d[2] = (uint8_t)(v >> 16);
    d[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32(const uint8_t *d) {
    return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
}

nav_status api_profiles_serialize(const api_profile *p, uint32_t n, const char *source,
                                  uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    if (!p || n == 0 || n > API_MAX_PROFILES)
        return NAV_E_INVALID_ARG;
    if (n == 1 && !source && strcmp(p[0].name, "default") == 0)
        return nav_mesh_serialize(p[0].mesh, out, len);
    uint8_t *blobs[API_MAX_PROFILES] = {0};
    size_t blens[API_MAX_PROFILES] = {0};
    size_t slen = source ? strlen(source) : 0;
    size_t total = 16 + slen + 4;
    nav_status st = NAV_OK;
    for (uint32_t i = 0; i < n && st == NAV_OK; i++) {
        st = nav_mesh_serialize(p[i].mesh, &blobs[i], &blens[i]);
        if (st == NAV_OK && blens[i] > UINT32_MAX)
            st = NAV_E_LIMIT;
        total += 8 + strlen(p[i].name) + blens[i];
    }
    uint8_t *buf = st == NAV_OK ? malloc(total) : NULL;
    if (st == NAV_OK && !buf)
        st = NAV_E_NOMEM;
    if (st == NAV_OK) {
        uint8_t *d = buf;
        memcpy(d, MAGIC, 4);
        put_u32(d + 4, FORMAT_VERSION);
        put_u32(d + 8, n);
        put_u32(d + 12, (uint32_t)slen);
        d += 16;
        memcpy(d, source ? source : "", slen);
        d += slen;
        for (uint32_t i = 0; i < n; i++) {
            size_t nl = strlen(p[i].name);
            put_u32(d, (uint32_t)nl);
            memcpy(d + 4, p[i].name, nl);
            d += 4 + nl;
            put_u32(d, (uint32_t)blens[i]);
            memcpy(d + 4, blobs[i], blens[i]);
            d += 4 + blens[i];
        }
        put_u32(d, nav_crc32(buf, (size_t)(d - buf)));
        *out = buf;
        *len = total;
    }
    for (uint32_t i = 0; i < n; i++)
        free(blobs[i]);
    return st;
}

/* The plain form: one mesh, profile "default", no source. */
static nav_status read_plain(const uint8_t *blob, size_t len, api_profile **out, uint32_t *n) {
    api_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NAV_E_NOMEM;
    nav_status st = nav_mesh_deserialize(blob, len, &p->mesh, NULL);
    if (st != NAV_OK) {
        free(p);
        return st;
    }
    strcpy(p->name, "default");
    *out = p;
    *n = 1;
    return NAV_OK;
}

nav_status api_profiles_deserialize(const uint8_t *blob, size_t len, api_profile **out, uint32_t *n,
                                    char **source) {
    *out = NULL;
    *n = 0;
    *source = NULL;
    if (!blob || len < 4 || memcmp(blob, MAGIC, 4) != 0)
        return blob ? read_plain(blob, len, out, n) : NAV_E_CORRUPT;
    if (len < 20 || get_u32(blob + len - 4) != nav_crc32(blob, len - 4))
        return NAV_E_CORRUPT;
    uint32_t count = get_u32(blob + 8), slen = get_u32(blob + 12);
    size_t end = len - 4, at = 16;
    if (get_u32(blob + 4) != FORMAT_VERSION || count == 0 || count > API_MAX_PROFILES ||
        slen > end - at)
        return NAV_E_CORRUPT;
    api_profile *p = calloc(count, sizeof *p);
    char *src = slen ? malloc((size_t)slen + 1) : NULL;
    if (!p || (slen && !src)) {
        free(p);
        free(src);
        return NAV_E_NOMEM;
    }
    if (src) {
        memcpy(src, blob + at, slen);
        src[slen] = '\0';
    }
    at += slen;
    nav_status st = NAV_OK;
    uint32_t got = 0;
    for (; got < count && st == NAV_OK; got++) {
        uint32_t nl = end - at >= 4 ? get_u32(blob + at) : UINT32_MAX;
        if (nl == 0 || nl > API_PROFILE_NAME_MAX || nl + 8u > end - at) {
            st = NAV_E_CORRUPT;
            break;
        }
        memcpy(p[got].name, blob + at + 4, nl);
        p[got].name[nl] = '\0';
        at += 4 + nl;
        uint32_t bl = get_u32(blob + at);
        if (!api_profile_name_ok(p[got].name) || bl > end - at - 4) {
            st = NAV_E_CORRUPT;
            break;
        }
        /* the container's CRC, checked above, covers these bytes */
        st = nav_mesh_deserialize_checked(blob + at + 4, bl, &p[got].mesh, NULL);
        at += 4 + (size_t)bl;
    }
    if (st == NAV_OK && at != end)
        st = NAV_E_CORRUPT;
    if (st != NAV_OK) {
        api_profiles_free(p, count);
        free(src);
        return st == NAV_E_NOMEM ? st : NAV_E_CORRUPT;
    }
    *out = p;
    *n = count;
    *source = src;
    return NAV_OK;
}
