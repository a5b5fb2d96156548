/*
 * nav_serialize: the binary storage form of a mesh and its input view.
 *
 * A blob is the canonical input (welded vertices, polygons in normalized
 * winding, areas, links as given, detail mesh), not the derived tables:
 * deserializing rebuilds through nav_mesh_build, so a blob can never smuggle
 * in an adjacency or index that disagrees with its geometry, and the format
 * does not change when derived tables do.
 *
 * Layout, all little-endian:
 *   "NAVM" | u32 version (1)
 *   u32 nverts | nverts * 3 f32
 *   u32 npolys | (npolys + 1) u32 poly_start | poly_start[npolys] u32 vertex ids
 *   npolys u8 areas
 *   u32 nlinks | per link: 3 f32 start, 3 f32 end, f32 radius, u8 bidirectional,
 *                          u8 area, u8 kind length, kind bytes
 *   u32 has_detail (0/1) | if 1: u32 ndetail_verts, * 3 f32, u32 ndetail_tris,
 *                          * 3 u32, npolys * 2 u32 (first, count)
 *   u32 CRC-32 of every byte before it
 * The reader checks every length against the bytes left before reading or
 * allocating, so damaged or hostile blobs fail with NAV_E_CORRUPT.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"

#define NAV_BLOB_VERSION 1u

static uint32_t nav_crc_table[256];
static pthread_once_t nav_crc_once = PTHREAD_ONCE_INIT;

static void nav_crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        nav_crc_table[i] = c;
    }
}

uint32_t nav_crc32(const uint8_t *data, size_t len) {
    pthread_once(&nav_crc_once, nav_crc_init);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = nav_crc_table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ---- writer ---- */

typedef struct nav_wbuf {
    uint8_t *p;
    size_t len;
} nav_wbuf;

static void nav_put_u32(nav_wbuf *w, uint32_t v) {
    w->p[w->len++] = (uint8_t)v;
    w->p[w->len++] = (uint8_t)(v >> 8);
    w->p[w->len++] = (uint8_t)(v >> 16);
    w->p[w->len++] = (uint8_t)(v >> 24);
}

static void nav_put_f32(nav_wbuf *w, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    nav_put_u32(w, v);
}

static void nav_put_u8(nav_wbuf *w, uint8_t v) {
    w->p[w->len++] = v;
}

void nav_mesh_as_input(const nav_mesh *m, nav_mesh_input *out) {
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!m)
        return;
    out->verts = m->verts;
    out->nverts = m->nverts;
    out->poly_start = m->poly_start;
    out->poly_verts = m->poly_verts;
    out->npolys = m->npolys;
    out->areas = m->areas;
    out->links = nav_mesh_ext_of(m)->link_in;
    out->nlinks = m->nlinks;
    if (m->detail_poly_tris) {
        out->detail_verts = m->detail_verts;
        out->ndetail_verts = m->ndetail_verts;
        out->detail_tris = m->detail_tris;
        out->ndetail_tris = m->ndetail_tris;
        out->detail_poly_tris = m->detail_poly_tris;
    }
}

nav_status nav_mesh_serialize(const nav_mesh *m, uint8_t **out, size_t *len) {
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!m || !out || !len)
        return NAV_E_INVALID_ARG;
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    size_t nidx = in.poly_start[in.npolys];
    size_t size = 8 + 4 + (size_t)in.nverts * 12 + 4 + ((size_t)in.npolys + 1) * 4 + nidx * 4 +
                  in.npolys + 4 + 4 + 4;
    for (uint32_t l = 0; l < in.nlinks; l++)
        size += 28 + 3 + strnlen(in.links[l].kind, NAV_LINK_KIND_MAX - 1);
    if (in.detail_poly_tris)
        size += 4 + (size_t)in.ndetail_verts * 12 + 4 + (size_t)in.ndetail_tris * 12 +
                (size_t)in.npolys * 8;
    nav_wbuf w = {malloc(size), 0};
    if (!w.p)
        return NAV_E_NOMEM;
    memcpy(w.p, "NAVM", 4);
    w.len = 4;
    nav_put_u32(&w, NAV_BLOB_VERSION);
    nav_put_u32(&w, in.nverts);
    for (size_t i = 0; i < (size_t)in.nverts * 3; i++)
        nav_put_f32(&w, in.verts[i]);
    nav_put_u32(&w, in.npolys);
    for (uint32_t p = 0; p <= in.npolys; p++)
        nav_put_u32(&w, in.poly_start[p]);
    for (size_t i = 0; i < nidx; i++)
        nav_put_u32(&w, in.poly_verts[i]);
    for (uint32_t p = 0; p < in.npolys; p++)
        nav_put_u8(&w, in.areas[p]);
    nav_put_u32(&w, in.nlinks);
    for (uint32_t l = 0; l < in.nlinks; l++) {
        const nav_link_input *li = &in.links[l];
        for (int a = 0; a < 3; a++)
            nav_put_f32(&w, li->start[a]);
        for (int a = 0; a < 3; a++)
            nav_put_f32(&w, li->end[a]);
        nav_put_f32(&w, li->radius);
        nav_put_u8(&w, li->bidirectional ? 1 : 0);
        nav_put_u8(&w, li->area);
        size_t kl = strnlen(li->kind, NAV_LINK_KIND_MAX - 1);
        nav_put_u8(&w, (uint8_t)kl);
        memcpy(w.p + w.len, li->kind, kl);
        w.len += kl;
    }
    nav_put_u32(&w, in.detail_poly_tris ? 1 : 0);
    if (in.detail_poly_tris) {
        nav_put_u32(&w, in.ndetail_verts);
        for (size_t i = 0; i < (size_t)in.ndetail_verts * 3; i++)
            nav_put_f32(&w, in.detail_verts[i]);
        nav_put_u32(&w, in.ndetail_tris);
        for (size_t i = 0; i < (size_t)in.ndetail_tris * 3; i++)
            nav_put_u32(&w, in.detail_tris[i]);
        for (size_t i = 0; i < (size_t)in.npolys * 2; i++)
            nav_put_u32(&w, in.detail_poly_tris[i]);
    }
    nav_put_u32(&w, nav_crc32(w.p, w.len));
    *out = w.p;
    *len = w.len;
    return NAV_OK;
}

/* ---- reader ---- */

typedef struct nav_rbuf {
    const uint8_t *p;
    size_t len, pos;
    bool bad;
} nav_rbuf;

static bool nav_have(nav_rbuf *r, size_t n) {
    if (r->bad || n > r->len - r->pos) {
        r->bad = true;
        return false;
    }
    return true;
}

static uint32_t nav_get_u32(nav_rbuf *r) {
    if (!nav_have(r, 4))
        return 0;
    const uint8_t *b = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static float nav_get_f32(nav_rbuf *r) {
    uint32_t v = nav_get_u32(r);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static uint8_t nav_get_u8(nav_rbuf *r) {
    if (!nav_have(r, 1))
        return 0;
    return r->p[r->pos++];
}

/* Allocates count elements of size bytes once the blob is known to hold
   count * wire bytes, so a forged count cannot trigger a huge allocation. */
static void *nav_get_array(nav_rbuf *r, size_t count, size_t wire, size_t size) {
    if (r->bad || (wire && count > (r->len - r->pos) / wire)) {
        r->bad = true;
        return NULL;
    }
    void *p = malloc((count ? count : 1) * size);
    if (!p)
        r->bad = true;
    return p;
}

nav_status nav_mesh_deserialize(const uint8_t *data, size_t len, nav_mesh **out, nav_error *err) {
    if (out)
        *out = NULL;
    if (!data || !out)
        return nav_set_error(err, NAV_E_INVALID_ARG, "nav_mesh_deserialize needs data and out");
    if (len < 12 || memcmp(data, "NAVM", 4) != 0)
        return nav_set_error(err, NAV_E_CORRUPT, "the blob is not a serialized navmesh");
    uint32_t crc = (uint32_t)data[len - 4] | (uint32_t)data[len - 3] << 8 |
                   (uint32_t)data[len - 2] << 16 | (uint32_t)data[len - 1] << 24;
    if (nav_crc32(data, len - 4) != crc)
        return nav_set_error(err, NAV_E_CORRUPT, "the blob's checksum does not match");
    nav_rbuf r = {data, len - 4, 4, false};
    uint32_t version = nav_get_u32(&r);
    if (version != NAV_BLOB_VERSION)
        return nav_set_error(err, NAV_E_CORRUPT, "unsupported navmesh blob version %u", version);

    nav_mesh_input in;
    memset(&in, 0, sizeof in);
    float *verts = NULL, *dverts = NULL;
    uint32_t *pstart = NULL, *pverts = NULL, *dtris = NULL, *dpoly = NULL;
    uint8_t *areas = NULL;
    nav_link_input *links = NULL;

    in.nverts = nav_get_u32(&r);
    verts = nav_get_array(&r, (size_t)in.nverts * 3, 4, sizeof *verts);
    for (size_t i = 0; verts && !r.bad && i < (size_t)in.nverts * 3; i++)
        verts[i] = nav_get_f32(&r);
    in.npolys = nav_get_u32(&r);
    pstart = nav_get_array(&r, (size_t)in.npolys + 1, 4, sizeof *pstart);
    for (size_t i = 0; pstart && !r.bad && i <= in.npolys; i++) {
        pstart[i] = nav_get_u32(&r);
        if (i && pstart[i] < pstart[i - 1])
            r.bad = true;
    }
    if (pstart && !r.bad && pstart[0] != 0)
        r.bad = true;
    size_t nidx = pstart && !r.bad ? pstart[in.npolys] : 0;
    pverts = nav_get_array(&r, nidx, 4, sizeof *pverts);
    for (size_t i = 0; pverts && !r.bad && i < nidx; i++)
        pverts[i] = nav_get_u32(&r);
    areas = nav_get_array(&r, in.npolys, 1, 1);
    for (size_t i = 0; areas && !r.bad && i < in.npolys; i++)
        areas[i] = nav_get_u8(&r);
    in.nlinks = nav_get_u32(&r);
    links = nav_get_array(&r, in.nlinks, 31, sizeof *links);
    for (size_t l = 0; links && !r.bad && l < in.nlinks; l++) {
        nav_link_input *li = &links[l];
        memset(li, 0, sizeof *li);
        for (int a = 0; a < 3; a++)
            li->start[a] = nav_get_f32(&r);
        for (int a = 0; a < 3; a++)
            li->end[a] = nav_get_f32(&r);
        li->radius = nav_get_f32(&r);
        uint8_t bidir = nav_get_u8(&r);
        li->bidirectional = bidir == 1;
        li->area = nav_get_u8(&r);
        uint8_t kl = nav_get_u8(&r);
        if (bidir > 1 || kl >= NAV_LINK_KIND_MAX || !nav_have(&r, kl)) {
            r.bad = true;
            break;
        }
        memcpy(li->kind, r.p + r.pos, kl);
        r.pos += kl;
    }
    uint32_t has_detail = nav_get_u32(&r);
    if (has_detail > 1)
        r.bad = true;
    if (has_detail == 1 && !r.bad) {
        in.ndetail_verts = nav_get_u32(&r);
        dverts = nav_get_array(&r, (size_t)in.ndetail_verts * 3, 4, sizeof *dverts);
        for (size_t i = 0; dverts && !r.bad && i < (size_t)in.ndetail_verts * 3; i++)
            dverts[i] = nav_get_f32(&r);
        in.ndetail_tris = nav_get_u32(&r);
        dtris = nav_get_array(&r, (size_t)in.ndetail_tris * 3, 4, sizeof *dtris);
        for (size_t i = 0; dtris && !r.bad && i < (size_t)in.ndetail_tris * 3; i++)
            dtris[i] = nav_get_u32(&r);
        dpoly = nav_get_array(&r, (size_t)in.npolys * 2, 4, sizeof *dpoly);
        for (size_t i = 0; dpoly && !r.bad && i < (size_t)in.npolys * 2; i++)
            dpoly[i] = nav_get_u32(&r);
    }
    if (!r.bad && r.pos != r.len)
        r.bad = true; /* trailing bytes */

    nav_status st;
    if (r.bad) {
        st = nav_set_error(err, NAV_E_CORRUPT, "the navmesh blob is truncated or malformed");
    } else {
        in.verts = verts;
        in.poly_start = pstart;
        in.poly_verts = pverts;
        in.areas = areas;
        in.links = links;
        in.detail_verts = dverts;
        in.detail_tris = dtris;
        in.detail_poly_tris = dpoly;
        nav_error berr;
        st = nav_mesh_build(&in, NULL, out, &berr);
        if (st == NAV_E_NOMEM)
            nav_set_error(err, st, "out of memory rebuilding the navmesh");
        else if (st != NAV_OK)
            st = nav_set_error(err, NAV_E_CORRUPT, "the navmesh blob does not rebuild: %s",
                               berr.message);
    }
    free(verts);
    free(pstart);
    free(pverts);
    free(areas);
    free(links);
    free(dverts);
    free(dtris);
    free(dpoly);
    return st;
}
