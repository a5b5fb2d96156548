/*
 * nav_vol_blob: a flight volume as one versioned blob with a CRC-32, and the
 * volume's facts (info, bytes).
 *
 * Layout (little-endian, as every navd blob): "NAVV", u32 format version,
 * f32 voxel_size, f32 radius, f32 bmin[3], u32 dims[3], u32 nmixed,
 * u32 nparts, u32 ncomp, u64 nfree, then the arrays top, masks, labels and
 * parts (u64 mask, u32 comp, u32 last), then the CRC-32 of all of it.
 * Reading checks every index, so a damaged blob can never make a query read
 * out of bounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "nav/nav_vol_internal.h"

#define VOL_MAGIC "NAVV"
#define VOL_FORMAT 1u
#define VOL_HEADER (4 + 4 + 4 * 5 + 4 * 3 + 4 * 3 + 8)

size_t nav_vol_bytes(const nav_vol *v) {
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    return sizeof *v + nb * 4 + (size_t)v->nmixed * 12 + (size_t)v->nparts * sizeof *v->parts;
}

void nav_vol_get_info(const nav_vol *v, nav_vol_info *out) {
    memset(out, 0, sizeof *out);
    if (!v)
        return;
    out->voxel_size = v->vs;
    out->radius = v->radius;
    uint64_t total = 1;
    for (int a = 0; a < 3; a++) {
        out->bmin[a] = v->bmin[a];
        out->bmax[a] = v->bmin[a] + (float)v->n[a] * v->vs;
        out->dims[a] = v->n[a];
        total *= v->n[a];
    }
    out->free_voxels = v->nfree;
    out->blocked_voxels = total - v->nfree;
    out->components = v->ncomp;
    out->mixed_bricks = v->nmixed;
    out->bytes = nav_vol_bytes(v);
}

uint64_t nav_vol_uid(const nav_vol *v) {
    return v ? v->uid : 0;
}

void nav_vol_brick_dims(const nav_vol *v, uint32_t out[3]) {
    memcpy(out, v->b, sizeof v->b);
}

int nav_vol_brick(const nav_vol *v, uint32_t bx, uint32_t by, uint32_t bz, uint64_t *free_bits) {
    if (free_bits)
        *free_bits = 0;
    if (bx >= v->b[0] || by >= v->b[1] || bz >= v->b[2])
        return 0;
    uint32_t t = v->top[nav_vol_brick_index(v, bx, by, bz)];
    if (t == NAV_VOL_SOLID)
        return 0;
    if (!(t & NAV_VOL_MIXED)) {
        if (free_bits)
            *free_bits = UINT64_MAX;
        return 1;
    }
    if (free_bits)
        *free_bits = v->masks[t & ~NAV_VOL_MIXED];
    return 2;
}

static uint8_t *put(uint8_t *p, const void *src, size_t n) {
    memcpy(p, src, n);
    return p + n;
}

nav_status nav_vol_serialize(const nav_vol *v, uint8_t **blob, size_t *len) {
    if (!v || !blob || !len)
        return NAV_E_INVALID_ARG;
    *blob = NULL;
    *len = 0;
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    size_t n = VOL_HEADER + nb * 4 + (size_t)v->nmixed * 12 + (size_t)v->nparts * 16 + 4;
    uint8_t *b = malloc(n), *p = b;
    if (!b)
        return NAV_E_NOMEM;
    uint32_t version = VOL_FORMAT;
    p = put(p, VOL_MAGIC, 4);
    p = put(p, &version, 4);
    p = put(p, &v->vs, 4);
    p = put(p, &v->radius, 4);
    p = put(p, v->bmin, 12);
    p = put(p, v->n, 12);
    p = put(p, &v->nmixed, 4);
    p = put(p, &v->nparts, 4);
    p = put(p, &v->ncomp, 4);
    p = put(p, &v->nfree, 8);
    p = put(p, v->top, nb * 4);
    p = put(p, v->masks, (size_t)v->nmixed * 8);
    p = put(p, v->labels, (size_t)v->nmixed * 4);
    for (uint32_t i = 0; i < v->nparts; i++) {
        p = put(p, &v->parts[i].mask, 8);
        p = put(p, &v->parts[i].comp, 4);
        p = put(p, &v->parts[i].last, 4);
    }
    uint32_t crc = nav_crc32(b, (size_t)(p - b));
    p = put(p, &crc, 4);
    *blob = b;
    *len = n;
    return NAV_OK;
}

static nav_status corrupt(nav_error *err, const char *why) {
    if (err) {
        err->status = NAV_E_CORRUPT;
        snprintf(err->message, sizeof err->message, "corrupt flight volume: %s", why);
    }
    return NAV_E_CORRUPT;
}

/* Every index in the grid within range (a blob that passes can be queried safely). */
static const char *vol_validate(const nav_vol *v) {
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    for (size_t i = 0; i < nb; i++) {
        uint32_t t = v->top[i];
        if (t == NAV_VOL_SOLID)
            continue;
        if (t & NAV_VOL_MIXED) {
            if ((t & ~NAV_VOL_MIXED) >= v->nmixed)
                return "a brick names a mask that does not exist";
        } else if (t >= v->ncomp) {
            return "a brick names a component that does not exist";
        }
    }
    for (uint32_t i = 0; i < v->nmixed; i++) {
        uint32_t l = v->labels[i];
        if (!(l & NAV_VOL_MULTI)) {
            if (l >= v->ncomp)
                return "a mask names a component that does not exist";
            continue;
        }
        uint32_t j = l & ~NAV_VOL_MULTI;
        for (;; j++) {
            if (j >= v->nparts || v->parts[j].comp >= v->ncomp)
                return "a mask's pieces are out of range";
            if (v->parts[j].last)
                break;
        }
    }
    return NULL;
}

static const uint8_t *get(const uint8_t *p, void *dst, size_t n) {
    memcpy(dst, p, n);
    return p + n;
}

nav_status nav_vol_deserialize(const uint8_t *blob, size_t len, nav_vol **out, nav_error *err) {
    if (!out)
        return NAV_E_INVALID_ARG;
    *out = NULL;
    if (!blob || len < VOL_HEADER + 4 || memcmp(blob, VOL_MAGIC, 4) != 0)
        return corrupt(err, "not a flight volume blob");
    uint32_t version, crc;
    memcpy(&version, blob + 4, 4);
    if (version != VOL_FORMAT)
        return corrupt(err, "unknown format version");
    memcpy(&crc, blob + len - 4, 4);
    if (nav_crc32(blob, len - 4) != crc)
        return corrupt(err, "checksum mismatch");
    nav_vol *v = calloc(1, sizeof *v);
    if (!v)
        return NAV_E_NOMEM;
    v->uid = nav_mesh_next_uid();
    const uint8_t *p = blob + 8;
    p = get(p, &v->vs, 4);
    p = get(p, &v->radius, 4);
    p = get(p, v->bmin, 12);
    p = get(p, v->n, 12);
    p = get(p, &v->nmixed, 4);
    p = get(p, &v->nparts, 4);
    p = get(p, &v->ncomp, 4);
    p = get(p, &v->nfree, 8);
    uint64_t total = 1;
    int ok = isfinite(v->vs) && v->vs > 0 && isfinite(v->radius) && v->radius >= 0;
    for (int a = 0; a < 3; a++) {
        ok = ok && isfinite(v->bmin[a]) && v->n[a] > 0;
        v->b[a] = (v->n[a] + 3) / 4;
        total *= v->n[a] ? v->n[a] : 1;
        ok = ok && total <= NAV_VOL_MAX_VOXELS;
    }
    size_t nb = (size_t)v->b[0] * v->b[1] * v->b[2];
    if (!ok || v->nmixed > nb || v->nfree > total ||
        len != VOL_HEADER + nb * 4 + (size_t)v->nmixed * 12 + (size_t)v->nparts * 16 + 4) {
        free(v);
        return corrupt(err, "inconsistent sizes");
    }
    v->inv_vs = 1.0f / v->vs;
    v->top = malloc(nb * 4);
    v->masks = malloc((size_t)v->nmixed * 8 + 8);
    v->labels = malloc((size_t)v->nmixed * 4 + 4);
    v->parts = malloc((size_t)v->nparts * sizeof *v->parts + 1);
    if (!v->top || !v->masks || !v->labels || !v->parts) {
        nav_vol_free(v);
        return NAV_E_NOMEM;
    }
    p = get(p, v->top, nb * 4);
    p = get(p, v->masks, (size_t)v->nmixed * 8);
    p = get(p, v->labels, (size_t)v->nmixed * 4);
    for (uint32_t i = 0; i < v->nparts; i++) {
        p = get(p, &v->parts[i].mask, 8);
        p = get(p, &v->parts[i].comp, 4);
        p = get(p, &v->parts[i].last, 4);
    }
    const char *why = vol_validate(v);
    if (why) {
        nav_vol_free(v);
        return corrupt(err, why);
    }
    *out = v;
    return NAV_OK;
}
