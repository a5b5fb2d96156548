/*
 * nav_obj: Wavefront OBJ in and out.
 *
 * Reads `v x y z` and `f a b c ...` lines (index forms a, a/b, a/b/c, a//c;
 * negative indices count back from the last vertex defined so far), skips
 * comments and every other statement, and reports the first problem with
 * its line number. Writes `v` lines with %.9g (enough digits to read back the
 * same float) and 1-based `f` lines, so export then import round-trips.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"

typedef struct nav_vec {
    void *p;
    size_t len, cap, elem;
} nav_vec;

static bool nav_vec_push(nav_vec *v, const void *item) {
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        void *p = realloc(v->p, cap * v->elem);
        if (!p)
            return false;
        v->p = p;
        v->cap = cap;
    }
    memcpy((char *)v->p + v->len * v->elem, item, v->elem);
    v->len++;
    return true;
}

static bool nav_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

void nav_obj_free(nav_obj *obj) {
    if (!obj)
        return;
    free(obj->verts);
    free(obj->poly_start);
    free(obj->poly_verts);
    memset(obj, 0, sizeof *obj);
}

nav_status nav_obj_parse(const char *text, size_t len, nav_obj *obj, nav_error *err) {
    if (obj)
        memset(obj, 0, sizeof *obj);
    if (!obj || (!text && len))
        return nav_set_error(err, NAV_E_INVALID_ARG, "nav_obj_parse needs text and an output");
    /* One NUL-terminated copy, so strtof/strtol never run past the text. */
    char *buf = malloc(len + 1);
    if (!buf)
        return nav_set_error(err, NAV_E_NOMEM, "out of memory");
    if (len)
        memcpy(buf, text, len);
    buf[len] = '\0';

    nav_vec verts = {NULL, 0, 0, sizeof(float)};
    nav_vec starts = {NULL, 0, 0, sizeof(uint32_t)};
    nav_vec idx = {NULL, 0, 0, sizeof(uint32_t)};
    nav_status st = NAV_OK;
    uint32_t zero = 0;
    if (!nav_vec_push(&starts, &zero))
        st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
    size_t line = 0;
    char *s = buf, *end = buf + len;
    while (st == NAV_OK && s < end) {
        line++;
        char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        *eol = '\0';
        char *c = s;
        s = eol + 1;
        while (nav_is_space(*c))
            c++;
        if (c[0] == 'v' && nav_is_space(c[1])) {
            float xyz[3];
            char *q = c + 1;
            for (int a = 0; a < 3; a++) {
                char *e;
                errno = 0;
                xyz[a] = strtof(q, &e);
                if (e == q) {
                    st = nav_set_error(err, NAV_E_INVALID_MESH,
                                       "line %zu: a vertex needs three numbers (v x y z)", line);
                    break;
                }
                q = e;
            }
            if (st != NAV_OK)
                break;
            if (verts.len / 3 >= UINT32_MAX - 1) {
                st = nav_set_error(err, NAV_E_LIMIT, "line %zu: too many vertices", line);
                break;
            }
            for (int a = 0; a < 3 && st == NAV_OK; a++)
                if (!nav_vec_push(&verts, &xyz[a]))
                    st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
        } else if (c[0] == 'f' && nav_is_space(c[1])) {
            char *q = c + 1;
            uint32_t n = 0;
            size_t nv = verts.len / 3;
            for (;;) {
                while (nav_is_space(*q))
                    q++;
                if (*q == '\0' || *q == '#')
                    break;
                char *e;
                errno = 0;
                long long i = strtoll(q, &e, 10);
                if (e == q || errno == ERANGE) {
                    st = nav_set_error(err, NAV_E_INVALID_MESH,
                                       "line %zu: a face index is not a number", line);
                    break;
                }
                /* Skip /texture/normal parts: digits, signs and slashes. */
                while (*e == '/' || *e == '-' || *e == '+' || (*e >= '0' && *e <= '9'))
                    e++;
                if (*e && !nav_is_space(*e) && *e != '#') {
                    st = nav_set_error(err, NAV_E_INVALID_MESH,
                                       "line %zu: a face index is not a number", line);
                    break;
                }
                q = e;
                long long abs_i = i < 0 ? (long long)nv + i + 1 : i;
                if (i == 0 || abs_i < 1 || abs_i > (long long)nv) {
                    st = nav_set_error(err, NAV_E_INVALID_MESH,
                                       "line %zu: face index %lld is out of range (%zu vertices "
                                       "so far)",
                                       line, i, nv);
                    break;
                }
                uint32_t v = (uint32_t)(abs_i - 1);
                if (!nav_vec_push(&idx, &v)) {
                    st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
                    break;
                }
                n++;
            }
            if (st != NAV_OK)
                break;
            if (n < 3) {
                st = nav_set_error(err, NAV_E_INVALID_MESH,
                                   "line %zu: a face needs at least 3 vertices", line);
                break;
            }
            if (idx.len >= UINT32_MAX || starts.len >= UINT32_MAX - 1) {
                st = nav_set_error(err, NAV_E_LIMIT, "line %zu: too many faces", line);
                break;
            }
            uint32_t at = (uint32_t)idx.len;
            if (!nav_vec_push(&starts, &at))
                st = nav_set_error(err, NAV_E_NOMEM, "out of memory");
        }
    }
    free(buf);
    if (st != NAV_OK) {
        free(verts.p);
        free(starts.p);
        free(idx.p);
        return st;
    }
    obj->verts = verts.p;
    obj->nverts = (uint32_t)(verts.len / 3);
    obj->poly_start = starts.p;
    obj->npolys = (uint32_t)(starts.len - 1);
    obj->poly_verts = idx.p;
    return NAV_OK;
}

void nav_obj_as_input(const nav_obj *obj, nav_mesh_input *out) {
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!obj)
        return;
    out->verts = obj->verts;
    out->nverts = obj->nverts;
    out->poly_start = obj->poly_start;
    out->poly_verts = obj->poly_verts;
    out->npolys = obj->npolys;
}

nav_status nav_mesh_to_obj(const nav_mesh *m, char **out, size_t *len) {
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!m || !out || !len)
        return NAV_E_INVALID_ARG;
    /* Worst case per number: sign, 9 digits, point, exponent "e-45": < 20. */
    size_t cap = 64 + (size_t)m->nverts * (2 + 3 * 20) + (size_t)m->npolys * 3 +
                 (size_t)m->poly_start[m->npolys] * 12;
    char *buf = malloc(cap);
    if (!buf)
        return NAV_E_NOMEM;
    size_t n = (size_t)snprintf(buf, cap, "# navd navmesh: %u vertices, %u polygons\n", m->nverts,
                                m->npolys);
    for (uint32_t v = 0; v < m->nverts; v++) {
        const float *p = nav_vert(m, v);
        n += (size_t)snprintf(buf + n, cap - n, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
    }
    for (uint32_t p = 0; p < m->npolys; p++) {
        buf[n++] = 'f';
        for (uint32_t k = m->poly_start[p]; k < m->poly_start[p + 1]; k++)
            n += (size_t)snprintf(buf + n, cap - n, " %u", m->poly_verts[k] + 1);
        buf[n++] = '\n';
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return NAV_OK;
}
