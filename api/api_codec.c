/*
 * api_codec: navmesh upload JSON / OBJ decoding and metadata / export
 * encoding (see api_codec.h). Sizes are checked against the array lengths
 * before allocating, and every allocation is freed by api_mesh_doc_free.
 */
#include "api/api_codec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_json.h"

#define BAD API_E_INVALID_NAVMESH

void api_mesh_doc_free(api_mesh_doc *doc) {
    if (!doc)
        return;
    free(doc->verts);
    free(doc->poly_start);
    free(doc->poly_verts);
    free(doc->areas);
    free(doc->links);
    free(doc->detail_verts);
    free(doc->detail_tris);
    free(doc->detail_poly_tris);
    if (doc->from_obj)
        nav_obj_free(&doc->obj);
    memset(doc, 0, sizeof *doc);
}

/* An array of `n` vec3 under `where` into a new float array. */
static api_code decode_points(const json_t *arr, const char *where, float **out, uint32_t *n,
                              api_err *e) {
    if (!json_is_array(arr))
        return api_fail(e, BAD, "%s must be an array of [x, y, z] points", where);
    size_t count = json_array_size(arr);
    if (count > UINT32_MAX / 4)
        return api_fail(e, BAD, "%s has too many entries", where);
    *out = malloc((count ? count : 1) * 3 * sizeof(float));
    if (!*out)
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while decoding %s", where);
    for (size_t i = 0; i < count; i++) {
        const json_t *p = json_array_get(arr, i);
        if (api_json_get_vec3(p, "", *out + 3 * i, BAD, NULL) == API_OK)
            continue; /* the element's name is only formatted on failure */
        char w[96];
        return api_json_get_vec3(p, api_path(w, sizeof w, "%s[%zu]", where, i), *out + 3 * i, BAD,
                                 e);
    }
    *n = (uint32_t)count;
    return API_OK;
}

/* Fast path for the common case (a JSON integer in range); no error text. */
static int index_fast(const json_t *v, uint32_t *out) {
    if (!json_is_integer(v))
        return 0;
    json_int_t x = json_integer_value(v);
    if (x < 0 || x >= (json_int_t)UINT32_MAX)
        return 0;
    *out = (uint32_t)x;
    return 1;
}

static api_code decode_index(const json_t *v, const char *where, uint32_t *out, api_err *e) {
    int64_t x;
    api_code c = api_json_int_range(v, where, 0, UINT32_MAX - 1, &x, BAD, e);
    if (c == API_OK)
        *out = (uint32_t)x;
    return c;
}

static api_code decode_polygons(const json_t *arr, api_mesh_doc *d, api_err *e) {
    if (!json_is_array(arr))
        return api_fail(e, BAD, "polygons must be an array of arrays of vertex indices");
    size_t n = json_array_size(arr), total = 0;
    for (size_t p = 0; p < n; p++) {
        const json_t *poly = json_array_get(arr, p);
        if (!json_is_array(poly))
            return api_fail(e, BAD, "polygons[%zu] must be an array of vertex indices", p);
        total += json_array_size(poly);
    }
    if (n >= UINT32_MAX || total >= UINT32_MAX)
        return api_fail(e, BAD, "polygons has too many entries");
    d->poly_start = malloc((n + 1) * sizeof(uint32_t));
    d->poly_verts = malloc((total ? total : 1) * sizeof(uint32_t));
    if (!d->poly_start || !d->poly_verts)
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while decoding polygons");
    size_t k = 0;
    for (size_t p = 0; p < n; p++) {
        const json_t *poly = json_array_get(arr, p);
        d->poly_start[p] = (uint32_t)k;
        for (size_t i = 0; i < json_array_size(poly); i++, k++) {
            if (index_fast(json_array_get(poly, i), &d->poly_verts[k]))
                continue;
            char w[64];
            api_code c = decode_index(json_array_get(poly, i),
                                      api_path(w, sizeof w, "polygons[%zu][%zu]", p, i),
                                      &d->poly_verts[k], e);
            if (c != API_OK)
                return c;
        }
    }
    d->poly_start[n] = (uint32_t)k;
    d->in.poly_start = d->poly_start;
    d->in.poly_verts = d->poly_verts;
    d->in.npolys = (uint32_t)n;
    return API_OK;
}

static api_code decode_areas(const json_t *arr, api_mesh_doc *d, api_err *e) {
    if (!arr || json_is_null(arr))
        return API_OK; /* default: all 0 */
    if (!json_is_array(arr))
        return api_fail(e, BAD, "areas must be an array of integers from 0 to 63");
    size_t n = json_array_size(arr);
    if (n != d->in.npolys)
        return api_fail(e, BAD, "areas has %zu entries but there are %" PRIu32 " polygons", n,
                        d->in.npolys);
    d->areas = malloc(n ? n : 1);
    if (!d->areas)
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while decoding areas");
    for (size_t i = 0; i < n; i++) {
        char w[48];
        int64_t a;
        api_code c =
            api_json_int_range(json_array_get(arr, i), api_path(w, sizeof w, "areas[%zu]", i), 0,
                               NAV_MAX_AREAS - 1, &a, BAD, e);
        if (c != API_OK)
            return c;
        d->areas[i] = (uint8_t)a;
    }
    d->in.areas = d->areas;
    return API_OK;
}

static api_code decode_link(const json_t *o, size_t i, nav_link_input *l, api_err *e) {
    char w[96];
    if (!json_is_object(o))
        return api_fail(e, BAD, "links[%zu] must be an object", i);
    api_code c;
    const json_t *v = json_object_get(o, "start");
    if (!v)
        return api_fail(e, BAD, "links[%zu].start is required", i);
    if ((c = api_json_get_vec3(v, api_path(w, sizeof w, "links[%zu].start", i), l->start, BAD,
                               e)) != API_OK)
        return c;
    v = json_object_get(o, "end");
    if (!v)
        return api_fail(e, BAD, "links[%zu].end is required", i);
    if ((c = api_json_get_vec3(v, api_path(w, sizeof w, "links[%zu].end", i), l->end, BAD, e)) !=
        API_OK)
        return c;
    l->radius = API_LINK_DEFAULT_RADIUS;
    if ((v = json_object_get(o, "radius")) && !json_is_null(v)) {
        if ((c = api_json_float(v, api_path(w, sizeof w, "links[%zu].radius", i), &l->radius, BAD,
                                e)) != API_OK)
            return c;
        if (l->radius < 0)
            return api_fail(e, BAD, "links[%zu].radius must not be negative", i);
    }
    l->bidirectional = true;
    if ((v = json_object_get(o, "bidirectional")) && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return api_fail(e, BAD, "links[%zu].bidirectional must be true or false", i);
        l->bidirectional = json_is_true(v);
    }
    l->area = 0;
    if ((v = json_object_get(o, "area")) && !json_is_null(v)) {
        int64_t a;
        if ((c = api_json_int_range(v, api_path(w, sizeof w, "links[%zu].area", i), 0,
                                    NAV_MAX_AREAS - 1, &a, BAD, e)) != API_OK)
            return c;
        l->area = (uint8_t)a;
    }
    snprintf(l->kind, sizeof l->kind, "%s", API_LINK_DEFAULT_KIND);
    if ((v = json_object_get(o, "kind")) && !json_is_null(v)) {
        if (!json_is_string(v) || json_string_length(v) >= NAV_LINK_KIND_MAX ||
            strlen(json_string_value(v)) != json_string_length(v))
            return api_fail(e, BAD, "links[%zu].kind must be a string of at most %d bytes", i,
                            NAV_LINK_KIND_MAX - 1);
        memcpy(l->kind, json_string_value(v), json_string_length(v) + 1);
    }
    return API_OK;
}

static api_code decode_links(const json_t *arr, api_mesh_doc *d, api_err *e) {
    if (!arr || json_is_null(arr))
        return API_OK;
    if (!json_is_array(arr))
        return api_fail(e, BAD, "links must be an array of objects");
    size_t n = json_array_size(arr);
    if (n >= UINT32_MAX)
        return api_fail(e, BAD, "links has too many entries");
    d->links = calloc(n ? n : 1, sizeof *d->links);
    if (!d->links)
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while decoding links");
    for (size_t i = 0; i < n; i++) {
        api_code c = decode_link(json_array_get(arr, i), i, &d->links[i], e);
        if (c != API_OK)
            return c;
    }
    d->in.links = d->links;
    d->in.nlinks = (uint32_t)n;
    return API_OK;
}

/* An array of fixed-size integer tuples ([a, b, c] or [first, count]). */
static api_code decode_tuples(const json_t *arr, const char *where, size_t arity, uint32_t **out,
                              size_t *n, api_err *e) {
    if (!json_is_array(arr))
        return api_fail(e, BAD, "%s must be an array of arrays of %zu non-negative integers", where,
                        arity);
    size_t count = json_array_size(arr);
    if (count >= UINT32_MAX / arity)
        return api_fail(e, BAD, "%s has too many entries", where);
    *out = malloc((count ? count : 1) * arity * sizeof(uint32_t));
    if (!*out)
        return api_fail(e, API_E_UNAVAILABLE, "out of memory while decoding %s", where);
    for (size_t i = 0; i < count; i++) {
        const json_t *t = json_array_get(arr, i);
        if (!json_is_array(t) || json_array_size(t) != arity)
            return api_fail(e, BAD, "%s[%zu] must be an array of %zu non-negative integers", where,
                            i, arity);
        for (size_t k = 0; k < arity; k++) {
            if (index_fast(json_array_get(t, k), &(*out)[arity * i + k]))
                continue;
            char w[96];
            api_code c = decode_index(json_array_get(t, k),
                                      api_path(w, sizeof w, "%s[%zu][%zu]", where, i, k),
                                      &(*out)[arity * i + k], e);
            if (c != API_OK)
                return c;
        }
    }
    *n = count;
    return API_OK;
}

static api_code decode_detail(const json_t *o, api_mesh_doc *d, api_err *e) {
    if (!o || json_is_null(o))
        return API_OK;
    if (!json_is_object(o))
        return api_fail(e, BAD, "detail must be an object");
    api_code c;
    const json_t *v = json_object_get(o, "vertices");
    if (v && !json_is_null(v)) {
        if ((c = decode_points(v, "detail.vertices", &d->detail_verts, &d->in.ndetail_verts, e)) !=
            API_OK)
            return c;
    }
    v = json_object_get(o, "triangles");
    if (!v)
        return api_fail(e, BAD, "detail.triangles is required");
    size_t ntris = 0, nranges = 0; /* set by decode_tuples on success; -O3 cannot see it */
    if ((c = decode_tuples(v, "detail.triangles", 3, &d->detail_tris, &ntris, e)) != API_OK)
        return c;
    v = json_object_get(o, "polygon_triangles");
    if (!v)
        return api_fail(e, BAD, "detail.polygon_triangles is required");
    if ((c = decode_tuples(v, "detail.polygon_triangles", 2, &d->detail_poly_tris, &nranges, e)) !=
        API_OK)
        return c;
    if (nranges != d->in.npolys)
        return api_fail(
            e, BAD, "detail.polygon_triangles has %zu entries but there are %" PRIu32 " polygons",
            nranges, d->in.npolys);
    d->in.detail_verts = d->detail_verts;
    d->in.detail_tris = d->detail_tris;
    d->in.ndetail_tris = (uint32_t)ntris;
    d->in.detail_poly_tris = d->detail_poly_tris;
    return API_OK;
}

api_code api_mesh_decode_json(const json_t *root, api_mesh_doc *doc, api_err *e) {
    memset(doc, 0, sizeof *doc);
    api_code c;
    if (!json_is_object(root)) {
        c = api_fail(e, BAD, "the navmesh must be a JSON object with vertices and polygons");
        goto fail;
    }
    const json_t *v = json_object_get(root, "vertices");
    if (!v) {
        c = api_fail(e, BAD, "vertices is required");
        goto fail;
    }
    if ((c = decode_points(v, "vertices", &doc->verts, &doc->in.nverts, e)) != API_OK)
        goto fail;
    doc->in.verts = doc->verts;
    v = json_object_get(root, "polygons");
    if (!v) {
        c = api_fail(e, BAD, "polygons is required");
        goto fail;
    }
    if ((c = decode_polygons(v, doc, e)) != API_OK ||
        (c = decode_areas(json_object_get(root, "areas"), doc, e)) != API_OK ||
        (c = decode_links(json_object_get(root, "links"), doc, e)) != API_OK ||
        (c = decode_detail(json_object_get(root, "detail"), doc, e)) != API_OK)
        goto fail;
    return API_OK;
fail:
    api_mesh_doc_free(doc);
    return c;
}

api_code api_mesh_decode_obj(const char *text, size_t len, api_mesh_doc *doc, api_err *e) {
    memset(doc, 0, sizeof *doc);
    nav_error ne = {0};
    nav_status s = nav_obj_parse(text, len, &doc->obj, &ne);
    if (s != NAV_OK) {
        api_code c = s == NAV_E_NOMEM ? API_E_UNAVAILABLE : BAD;
        api_fail(e, c, "%s", ne.message[0] ? ne.message : nav_status_text(s));
        memset(doc, 0, sizeof *doc);
        return c;
    }
    doc->from_obj = 1;
    nav_obj_as_input(&doc->obj, &doc->in);
    return API_OK;
}

/* ---- encoding ---- */

static json_t *points_json(const float *p, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, api_json_vec3(p + 3 * (size_t)i));
    return a;
}

/* The export's "links" array (both exports write it the same way). */
static json_t *links_json(const nav_mesh_input *in) {
    json_t *links = json_array();
    for (uint32_t i = 0; i < in->nlinks; i++) {
        const nav_link_input *l = &in->links[i];
        json_array_append_new(
            links,
            json_pack("{s:o,s:o,s:o,s:b,s:i,s:s}", "start", api_json_vec3(l->start), "end",
                      api_json_vec3(l->end), "radius", api_json_num(l->radius), "bidirectional",
                      (int)l->bidirectional, "area", (int)l->area, "kind", l->kind));
    }
    return links;
}

json_t *api_mesh_encode_json(const nav_mesh *m) {
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    json_t *root = json_object();
    json_object_set_new(root, "vertices", points_json(in.verts, in.nverts));
    json_t *polys = json_array(), *areas = json_array();
    for (uint32_t p = 0; p < in.npolys; p++) {
        json_t *poly = json_array();
        for (uint32_t k = in.poly_start[p]; k < in.poly_start[p + 1]; k++)
            json_array_append_new(poly, json_integer(in.poly_verts[k]));
        json_array_append_new(polys, poly);
        json_array_append_new(areas, json_integer(in.areas ? in.areas[p] : 0));
    }
    json_object_set_new(root, "polygons", polys);
    json_object_set_new(root, "areas", areas);
    json_object_set_new(root, "links", links_json(&in));
    if (in.detail_poly_tris) {
        json_t *tris = json_array(), *ranges = json_array();
        for (uint32_t t = 0; t < in.ndetail_tris; t++)
            json_array_append_new(tris, json_pack("[III]", (json_int_t)in.detail_tris[3 * t],
                                                  (json_int_t)in.detail_tris[3 * t + 1],
                                                  (json_int_t)in.detail_tris[3 * t + 2]));
        for (uint32_t p = 0; p < in.npolys; p++)
            json_array_append_new(ranges, json_pack("[II]", (json_int_t)in.detail_poly_tris[2 * p],
                                                    (json_int_t)in.detail_poly_tris[2 * p + 1]));
        json_object_set_new(root, "detail",
                            json_pack("{s:o,s:o,s:o}", "vertices",
                                      points_json(in.detail_verts, in.ndetail_verts), "triangles",
                                      tris, "polygon_triangles", ranges));
    }
    return root;
}

/* Little-endian writers: the format does not depend on the host's byte order. */
static unsigned char *put_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
    return p + 4;
}

static unsigned char *put_f32s(unsigned char *p, const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        p = put_u32(p, bits);
    }
    return p;
}

static unsigned char *put_u32s(unsigned char *p, const uint32_t *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        p = put_u32(p, v[i]);
    return p;
}

char *api_mesh_encode_bin(const nav_mesh *m, size_t *len) {
    nav_mesh_input in;
    nav_mesh_as_input(m, &in);
    json_t *links = links_json(&in);
    size_t links_len = 0;
    char *ltext = links ? api_json_dump(links, &links_len) : NULL;
    json_decref(links);
    if (!ltext)
        return NULL;
    const uint32_t nidx = in.poly_start[in.npolys];
    const int detail = in.detail_poly_tris != NULL;
    const size_t areas_len = ((size_t)in.npolys + 3) / 4 * 4;
    size_t n = 4 + 8 * 4 + (size_t)in.nverts * 12 + ((size_t)in.npolys + 1) * 4 + (size_t)nidx * 4 +
               areas_len + links_len;
    if (detail)
        n += (size_t)in.ndetail_verts * 12 + (size_t)in.ndetail_tris * 12 + (size_t)in.npolys * 8;
    unsigned char *buf = malloc(n), *p = buf;
    if (!buf) {
        free(ltext);
        return NULL;
    }
    memcpy(p, "NAVB", 4);
    p += 4;
    const uint32_t head[8] = {1,
                              in.nverts,
                              in.npolys,
                              nidx,
                              detail ? in.ndetail_verts : 0,
                              detail ? in.ndetail_tris : 0,
                              (uint32_t)detail,
                              (uint32_t)links_len};
    p = put_u32s(p, head, 8);
    p = put_f32s(p, in.verts, (size_t)in.nverts * 3);
    p = put_u32s(p, in.poly_start, (size_t)in.npolys + 1);
    p = put_u32s(p, in.poly_verts, nidx);
    memset(p, 0, areas_len);
    if (in.areas)
        memcpy(p, in.areas, in.npolys);
    p += areas_len;
    if (detail) {
        p = put_f32s(p, in.detail_verts, (size_t)in.ndetail_verts * 3);
        p = put_u32s(p, in.detail_tris, (size_t)in.ndetail_tris * 3);
        p = put_u32s(p, in.detail_poly_tris, (size_t)in.npolys * 2);
    }
    memcpy(p, ltext, links_len);
    free(ltext);
    *len = n;
    return (char *)buf;
}

void api_format_time(int64_t unix_ms, char *buf, size_t size) {
    time_t secs = (time_t)(unix_ms / 1000);
    int ms = (int)(unix_ms % 1000);
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    /* every caller's buffer is 40 bytes, room for any int fields (at most 31 characters);
       a smaller one would get the text cut, still terminated. The result is tested so that
       -O3's truncation warning, which cannot prove the fields' range, stays quiet. */
    if (snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms) < 0 &&
        size > 0)
        buf[0] = '\0';
}

json_t *api_meta_encode(const store_meta *meta, const nav_mesh *m) {
    float bmin[3], bmax[3];
    char created[40], updated[40];
    nav_mesh_bounds(m, bmin, bmax);
    api_format_time(meta->created_ms, created, sizeof created);
    api_format_time(meta->updated_ms, updated, sizeof updated);
    return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:[o,o],s:o,s:s,s:s}", "name", meta->name, "version",
                     (json_int_t)meta->version, "vertices", (json_int_t)nav_mesh_vertex_count(m),
                     "polygons", (json_int_t)nav_mesh_polygon_count(m), "links",
                     (json_int_t)nav_mesh_link_count(m), "components",
                     (json_int_t)nav_mesh_component_count(m), "bounds", api_json_vec3(bmin),
                     api_json_vec3(bmax), "area", api_json_num(nav_mesh_area(m)), "created_at",
                     created, "updated_at", updated);
}

/*
 * A navmesh's metadata: the stored fields, the default profile's figures,
 * the profile names, and for a bake its source (level, level version and
 * every setting used). An upload has the one profile "default" and no
 * source field.
 */
json_t *api_entry_encode(const api_entry *e) {
    json_t *o = api_meta_encode(&e->meta, e->mesh);
    json_t *names = json_array();
    for (uint32_t i = 0; i < e->nprofiles; i++)
        json_array_append_new(names, json_string(e->profiles[i].name));
    json_object_set_new(o, "profiles", names);
    if (e->source) {
        json_t *src = json_loads(e->source, 0, NULL);
        if (src)
            json_object_set_new(o, "source", src);
    }
    return o;
}
