/*
 * nav_serialize: the binary storage form of a mesh and its input view.
 *
 * A blob holds the canonical input (welded vertices, polygons in normalized
 * winding, areas, links as given, detail mesh), since version 3 the built
 * structures the build gets by sorting and searching (nav_snapshot.c), and
 * the corner graph. Loading a version 3 blob runs no build: the input form
 * passes nav_mesh_build's input checks, the stored structures are checked in
 * linear time against it (a CRC can be forged), and what the build derives
 * in one pass is derived again by the build's own functions. Versions 1 and
 * 2 rebuild through nav_mesh_build.
 *
 * Layout, all little-endian:
 *   "NAVM" | u32 version (3; 1 and 2 are read too)
 *   u32 nverts | nverts * 3 f32
 *   u32 npolys | (npolys + 1) u32 poly_start | poly_start[npolys] u32 vertex ids
 *   npolys u8 areas
 *   u32 nlinks | per link: 3 f32 start, 3 f32 end, f32 radius, u8 bidirectional,
 *                          u8 area, u8 kind length, kind bytes
 *   u32 has_detail (0/1) | if 1: u32 ndetail_verts, * 3 f32, u32 ndetail_tris,
 *                          * 3 u32, npolys * 2 u32 (first, count)
 *   version 3: u32 length | the built section (nav_snapshot.c)
 *   u32 CRC-32 of every byte before it (version 1: the blob ends here)
 *   the corner graph section (versions 2 and 3): "CGRF" | u32 graph format
 *     (2; 1, without the walk mesh, is read too) | u32 the mesh CRC above
 *     (binds the section to this mesh) | u32 payload length | payload
 *     (nav_corner_save, nav_corner.h) | u32 CRC-32 of the section before it
 * The reader checks every length against the bytes left before reading or
 * allocating, so damaged or hostile blobs fail with NAV_E_CORRUPT.
 *
 * Building the graph walks the region in sight of every corner (seconds at
 * 100,000 polygons), loading it takes milliseconds. A damaged, missing or
 * mismatched section never fails the load: the graph is then built afresh
 * (nav_mesh_graph_origin says so).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_mesh_internal.h"

#define NAV_BLOB_VERSION 3u
/* bump when the graph's build or meaning changes; 2 added the walk mesh
   (format 1, without it, is still read: the merge then runs again) */
#define NAV_CORNER_FORMAT 2u

/* Slicing by 8: table k gives the CRC contribution of a byte followed by k
   zero bytes, so eight bytes fold in with eight lookups and no per-byte
   dependency chain (a stored 16 MiB mesh is checked on every load). */
static uint32_t nav_crc_table[8][256];
static pthread_once_t nav_crc_once = PTHREAD_ONCE_INIT;

static void nav_crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        nav_crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = nav_crc_table[t - 1][i];
            nav_crc_table[t][i] = (c >> 8) ^ nav_crc_table[0][c & 0xFF];
        }
}

static uint32_t nav_crc_le32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint32_t nav_crc32(const uint8_t *data, size_t len) {
    pthread_once(&nav_crc_once, nav_crc_init);
    const uint32_t(*t)[256] = (const uint32_t(*)[256])nav_crc_table;
    uint32_t c = 0xFFFFFFFFu;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint32_t lo = c ^ nav_crc_le32(data + i), hi = nav_crc_le32(data + i + 4);
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    }
    for (; i < len; i++)
        c = t[0][(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void nav_le32_copy(void *dst, const uint8_t *src, size_t count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst, src, count * 4); /* the wire order is the host's */
#else
    uint32_t *d = dst;
    for (size_t i = 0; i < count; i++, src += 4)
        d[i] = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
               (uint32_t)src[3] << 24;
#endif
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
    size_t built = nav_snapshot_size(m);
    size += 4 + built;
    size_t graph = nav_corner_save(m->cgraph, NULL);
    size += 20 + graph;
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
    nav_put_u32(&w, (uint32_t)built);
    nav_snapshot_put(m, w.p + w.len);
    w.len += built;
    uint32_t mesh_crc = nav_crc32(w.p, w.len);
    nav_put_u32(&w, mesh_crc);
    size_t section = w.len;
    memcpy(w.p + w.len, "CGRF", 4);
    w.len += 4;
    nav_put_u32(&w, NAV_CORNER_FORMAT);
    nav_put_u32(&w, mesh_crc);
    nav_put_u32(&w, (uint32_t)graph);
    w.len += nav_corner_save(m->cgraph, w.p + w.len);
    nav_put_u32(&w, nav_crc32(w.p + section, w.len - section));
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

/* count 32-bit words into dst (checked by nav_get_array before). */
static void nav_get_words(nav_rbuf *r, void *dst, size_t count) {
    if (!dst || r->bad)
        return;
    nav_le32_copy(dst, r->p + r->pos, count);
    r->pos += count * 4;
}

static uint32_t nav_le32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The payload of the graph section in p[0..n), or NULL when the section is
   missing, damaged (CRC), of another format or of another mesh. */
static const uint8_t *nav_graph_section(const uint8_t *p, size_t n, uint32_t mesh_crc, bool checked,
                                        size_t *plen, uint32_t *format) {
    if (n < 20 || memcmp(p, "CGRF", 4) != 0)
        return NULL;
    uint32_t len = nav_le32(p + 12);
    if (len != n - 20 || (!checked && nav_le32(p + n - 4) != nav_crc32(p, n - 4)))
        return NULL;
    *format = nav_le32(p + 4);
    if (*format < 1 || *format > NAV_CORNER_FORMAT || nav_le32(p + 8) != mesh_crc)
        return NULL;
    *plen = len;
    return p + 16;
}

/* The stored graph when it fits the mesh, else one built afresh. On
   NAV_E_NOMEM the mesh is freed and *m cleared by the caller's path. */
static nav_status nav_attach_graph(nav_mesh *m, const uint8_t *graph, size_t len, uint32_t format) {
    nav_status st = graph ? nav_corner_load(m, graph, len, format) : NAV_E_CORRUPT;
    if (st == NAV_OK) {
        m->cgraph_origin = m->cgraph ? NAV_GRAPH_LOADED : NAV_GRAPH_NONE;
    } else if (st == NAV_E_CORRUPT) {
        st = nav_corner_build(m);
        m->cgraph_origin = m->cgraph ? NAV_GRAPH_REBUILT : NAV_GRAPH_NONE;
    }
    if (st == NAV_OK)
        ((nav_mesh_ext *)m)->memory += nav_corner_memory(m->cgraph);
    return st;
}

static nav_status deserialize(const uint8_t *data, size_t len, bool checked, nav_mesh **out,
                              nav_error *err) {
    if (out)
        *out = NULL;
    if (!data || !out)
        return nav_set_error(err, NAV_E_INVALID_ARG, "nav_mesh_deserialize needs data and out");
    if (len < 12 || memcmp(data, "NAVM", 4) != 0)
        return nav_set_error(err, NAV_E_CORRUPT, "the blob is not a serialized navmesh");
    nav_rbuf r = {data, len, 4, false};
    uint32_t version = nav_get_u32(&r);
    if (version < 1 || version > NAV_BLOB_VERSION)
        return nav_set_error(err, NAV_E_CORRUPT, "unsupported navmesh blob version %u", version);
    /* version 1: the CRC is the blob's last word; version 2: it follows the
       mesh fields (found by reading them), the graph section after it */
    if (version == 1) {
        if (!checked && nav_le32(data + len - 4) != nav_crc32(data, len - 4))
            return nav_set_error(err, NAV_E_CORRUPT, "the blob's checksum does not match");
        r.len = len - 4;
    }

    nav_mesh_input in;
    memset(&in, 0, sizeof in);
    float *verts = NULL, *dverts = NULL;
    uint32_t *pstart = NULL, *pverts = NULL, *dtris = NULL, *dpoly = NULL;
    uint8_t *areas = NULL;
    nav_link_input *links = NULL;

    in.nverts = nav_get_u32(&r);
    verts = nav_get_array(&r, (size_t)in.nverts * 3, 4, sizeof *verts);
    nav_get_words(&r, verts, (size_t)in.nverts * 3);
    in.npolys = nav_get_u32(&r);
    pstart = nav_get_array(&r, (size_t)in.npolys + 1, 4, sizeof *pstart);
    nav_get_words(&r, pstart, (size_t)in.npolys + 1);
    for (size_t i = 1; pstart && !r.bad && i <= in.npolys; i++)
        if (pstart[i] < pstart[i - 1])
            r.bad = true;
    if (pstart && !r.bad && pstart[0] != 0)
        r.bad = true;
    size_t nidx = pstart && !r.bad ? pstart[in.npolys] : 0;
    pverts = nav_get_array(&r, nidx, 4, sizeof *pverts);
    nav_get_words(&r, pverts, nidx);
    areas = nav_get_array(&r, in.npolys, 1, 1);
    if (areas && !r.bad) {
        memcpy(areas, r.p + r.pos, in.npolys);
        r.pos += in.npolys;
    }
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
        nav_get_words(&r, dverts, (size_t)in.ndetail_verts * 3);
        in.ndetail_tris = nav_get_u32(&r);
        dtris = nav_get_array(&r, (size_t)in.ndetail_tris * 3, 4, sizeof *dtris);
        nav_get_words(&r, dtris, (size_t)in.ndetail_tris * 3);
        dpoly = nav_get_array(&r, (size_t)in.npolys * 2, 4, sizeof *dpoly);
        nav_get_words(&r, dpoly, (size_t)in.npolys * 2);
    }
    const uint8_t *built = NULL;
    size_t built_len = 0;
    if (version == 3) {
        built_len = nav_get_u32(&r);
        if (nav_have(&r, built_len)) {
            built = r.p + r.pos;
            r.pos += built_len;
        }
    }
    const uint8_t *graph = NULL;
    size_t graph_len = 0;
    uint32_t graph_format = 0;
    bool crc_bad = false;
    if (!r.bad && version == 1 && r.pos != r.len)
        r.bad = true; /* trailing bytes */
    if (!r.bad && version >= 2) {
        size_t mesh_end = r.pos;
        uint32_t mesh_crc = nav_get_u32(&r);
        crc_bad = !r.bad && !checked && mesh_crc != nav_crc32(data, mesh_end);
        if (!r.bad && !crc_bad)
            graph = nav_graph_section(data + r.pos, len - r.pos, mesh_crc, checked, &graph_len,
                                      &graph_format);
    }

    nav_status st;
    if (crc_bad) {
        st = nav_set_error(err, NAV_E_CORRUPT, "the blob's checksum does not match");
    } else if (r.bad) {
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
        berr.message[0] = '\0';
        if (version == 3) {
            /* the parsed arrays become the mesh's own */
            st = nav_snapshot_load(&in, built, built_len, out, &berr);
            verts = dverts = NULL;
            pstart = pverts = dtris = dpoly = NULL;
            areas = NULL;
            links = NULL;
        } else
            st = nav_mesh_build_ex(&in, NULL, version == 1, out, &berr);
        if (st == NAV_OK && version >= 2 &&
            (st = nav_attach_graph(*out, graph, graph_len, graph_format)) != NAV_OK) {
            nav_mesh_free(*out);
            *out = NULL;
        }
        if (st == NAV_E_NOMEM)
            nav_set_error(err, st, "out of memory loading the navmesh");
        else if (st != NAV_OK)
            st = nav_set_error(err, NAV_E_CORRUPT, "the navmesh blob does not load: %s",
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

nav_status nav_mesh_deserialize(const uint8_t *data, size_t len, nav_mesh **out, nav_error *err) {
    return deserialize(data, len, false, out, err);
}

nav_status nav_mesh_deserialize_checked(const uint8_t *data, size_t len, nav_mesh **out,
                                        nav_error *err) {
    return deserialize(data, len, true, out, err);
}
