/*
 * nav_crc: the CRC-32 every nav/ blob format ends with (navmesh, level),
 * public so the other layers' containers (api/'s profile sets, stored
 * preprocessing) check their bytes the same way instead of each carrying
 * a copy.
 */
#ifndef NAV_CRC_H
#define NAV_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of len bytes. */
uint32_t nav_crc32(const uint8_t *data, size_t len);

#endif
