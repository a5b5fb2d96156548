/*
 * fuzz_blob: the binary blob reader (nav_mesh_deserialize), which runs on
 * every stored mesh at start-up: a damaged database row must give
 * NAV_E_CORRUPT, never a crash or a mesh that breaks later queries.
 *
 * A CRC over the payload would stop almost every mutation at the checksum,
 * so when the first byte's low bit is set the harness recomputes the CRCs
 * over the rest (the first byte dropped), letting the fuzzer reach the
 * decoders and, in version 3, the validation of the stored built
 * structures: a blob with a corner graph section (version 2 and 3: the
 * mesh fields, their CRC, then "CGRF" | format | the mesh CRC | length |
 * payload | the section's CRC, found from the end by its length field) gets
 * the mesh CRC, the section's copy of it and the section's CRC fixed; any
 * other (version 1) its trailing CRC-32 of everything before it.
 * Seeds: serialized fixture and shared meshes (tests/fuzz/seed_blobs.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* CRC-32 (IEEE 802.3, reflected, the zlib one), bitwise: speed is irrelevant here. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The start of a graph section that runs to the end of the blob, or 0. */
static size_t graph_section(const uint8_t *b, size_t len) {
    for (size_t s = len >= 20 ? len - 20 : 0; s >= 4 && len >= 20; s--)
        if (memcmp(b + s, "CGRF", 4) == 0 && le32(b + s + 12) == len - s - 20)
            return s;
    return 0;
}

static void fix_crcs(uint8_t *blob, size_t len) {
    size_t s = graph_section(blob, len);
    if (s == 0) {
        put_le32(blob + len - 4, crc32_ieee(blob, len - 4));
        return;
    }
    uint32_t mesh = crc32_ieee(blob, s - 4);
    put_le32(blob + s - 4, mesh);
    put_le32(blob + s + 8, mesh);
    put_le32(blob + len - 4, crc32_ieee(blob + s, len - s - 4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    int fix_crc = data[0] & 1;
    size_t len = size - 1;
    uint8_t *blob = malloc(len ? len : 1);
    if (!blob)
        return 0;
    memcpy(blob, data + 1, len);
    if (fix_crc && len >= 4)
        fix_crcs(blob, len);

    nav_mesh *m = NULL;
    nav_error err;
    memset(&err, 0, sizeof err);
    nav_status st = nav_mesh_deserialize(blob, len, &m, &err);
    if (st == NAV_OK) {
        fz_require(m != NULL, "a successful load returns a mesh");
        fz_forged_snapshot =
            fix_crc && len >= 8 && blob[4] == 3 && !blob[5] && !blob[6] && !blob[7];
        fz_exercise_mesh(m);
        fz_forged_snapshot = 0;
        nav_mesh_free(m);
    } else {
        fz_require(m == NULL, "a failed load leaves *out NULL");
    }
    free(blob);
    return 0;
}
