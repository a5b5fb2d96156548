/*
 * fuzz_blob: the binary blob reader (nav_mesh_deserialize), which runs on
 * every stored mesh at start-up: a damaged database row must give
 * NAV_E_CORRUPT, never a crash or a mesh that breaks later queries.
 *
 * A CRC over the payload would stop almost every mutation at the checksum,
 * so when the first byte's low bit is set the harness drops that byte and
 * recomputes the trailing CRC-32 over the rest (the layout
 * nav_mesh_serialize writes: ... payload, then the CRC-32 of everything
 * before it, little-endian), letting the fuzzer reach the payload decoder.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    int fix_crc = data[0] & 1;
    size_t len = size - 1;
    uint8_t *blob = malloc(len ? len : 1);
    if (!blob)
        return 0;
    memcpy(blob, data + 1, len);
    if (fix_crc && len >= 4) {
        uint32_t c = crc32_ieee(blob, len - 4);
        for (int i = 0; i < 4; i++)
            blob[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
    }

    nav_mesh *m = NULL;
    nav_error err;
    memset(&err, 0, sizeof err);
    nav_status st = nav_mesh_deserialize(blob, len, &m, &err);
    if (st == NAV_OK) {
        fz_require(m != NULL, "a successful load returns a mesh");
        fz_exercise_mesh(m);
        nav_mesh_free(m);
    } else {
        fz_require(m == NULL, "a failed load leaves *out NULL");
    }
    free(blob);
    return 0;
}
