/*
 * test_fixtures: the hand-made meshes and the seeded random mesh generator
 * every test suite shares (declared, with their coordinates, in
 * tests/test_fixtures.h), plus helpers to find and read ../shared files.
 */
#include "tests/test_fixtures.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nav/nav_internal.h"

/* Fails the current test with a message. Check's ck_assert marks a point
   even on success, which aborts outside a test run; the benchmarks use these
   fixtures outside Check, so only the failure path may call into it. */
#define FX_REQUIRE(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

struct fx_builder {
    float *verts;
    uint32_t nverts, cap_verts;
    uint32_t *poly_start; /* npolys + 1 */
    uint32_t *poly_verts;
    uint8_t *areas;
    uint32_t npolys, cap_polys, nidx, cap_idx;
    nav_link_input *links;
    uint32_t nlinks, cap_links;
    /* exact-coordinate lookup for fx_quad: open addressing, slot = vertex + 1 */
    uint32_t *table;
    uint32_t table_cap;
};

static void *fx_grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(p, (size_t)c * elem);
    FX_REQUIRE(q != NULL, "fixture allocation failed");
    *cap = c;
    return q;
}

fx_builder *fx_new(void) {
    fx_builder *b = calloc(1, sizeof *b);
    FX_REQUIRE(b != NULL, "fixture allocation failed");
    b->poly_start = fx_grow(NULL, &b->cap_polys, 1, sizeof *b->poly_start);
    b->poly_start[0] = 0;
    return b;
}

static uint32_t fx_hash(float x, float y, float z) {
    uint32_t u[3];
    float f[3] = {x + 0.0f, y + 0.0f, z + 0.0f}; /* + 0 folds -0 into 0 */
    memcpy(u, f, sizeof u);
    uint32_t h = 2166136261u;
    for (int i = 0; i < 3; i++)
        h = (h ^ u[i]) * 16777619u;
    return h ^ (h >> 15);
}

static void fx_table_insert(fx_builder *b, uint32_t v) {
    const float *p = &b->verts[3 * (size_t)v];
    uint32_t i = fx_hash(p[0], p[1], p[2]) & (b->table_cap - 1);
    while (b->table[i])
        i = (i + 1) & (b->table_cap - 1);
    b->table[i] = v + 1;
}

uint32_t fx_vert(fx_builder *b, float x, float y, float z) {
    b->verts = fx_grow(b->verts, &b->cap_verts, b->nverts + 1, 3 * sizeof *b->verts);
    uint32_t v = b->nverts++;
    b->verts[3 * (size_t)v] = x;
    b->verts[3 * (size_t)v + 1] = y;
    b->verts[3 * (size_t)v + 2] = z;
    if (b->table && b->nverts * 2 <= b->table_cap)
        fx_table_insert(b, v);
    else if (b->table) { /* rehash at half load */
        free(b->table);
        b->table = NULL;
    }
    return v;
}

/* A vertex with exactly these coordinates, reused when it exists. */
static uint32_t fx_vert_shared(fx_builder *b, float x, float y, float z) {
    if (!b->table) {
        b->table_cap = 64;
        while (b->table_cap < b->nverts * 4)
            b->table_cap *= 2;
        b->table = calloc(b->table_cap, sizeof *b->table);
        FX_REQUIRE(b->table != NULL, "fixture allocation failed");
        for (uint32_t v = 0; v < b->nverts; v++)
            fx_table_insert(b, v);
    }
    for (uint32_t i = fx_hash(x, y, z) & (b->table_cap - 1); b->table[i];
         i = (i + 1) & (b->table_cap - 1)) {
        const float *p = &b->verts[3 * (size_t)(b->table[i] - 1)];
        if (p[0] == x && p[1] == y && p[2] == z)
            return b->table[i] - 1;
    }
    return fx_vert(b, x, y, z);
}

uint32_t fx_poly(fx_builder *b, uint32_t n, const uint32_t *ids, uint8_t area) {
    b->poly_start = fx_grow(b->poly_start, &b->cap_polys, b->npolys + 2, sizeof *b->poly_start);
    /* areas share the polygon capacity */
    b->areas = realloc(b->areas, b->cap_polys);
    FX_REQUIRE(b->areas != NULL, "fixture allocation failed");
    b->poly_verts = fx_grow(b->poly_verts, &b->cap_idx, b->nidx + n, sizeof *b->poly_verts);
    memcpy(&b->poly_verts[b->nidx], ids, n * sizeof *ids);
    b->nidx += n;
    uint32_t p = b->npolys++;
    b->areas[p] = area;
    b->poly_start[b->npolys] = b->nidx;
    return p;
}

uint32_t fx_quad(fx_builder *b, float x0, float z0, float x1, float z1, float y, uint8_t area) {
    /* Listed in negative signed-area order: (x0,z0) (x0,z1) (x1,z1) (x1,z0). */
    uint32_t ids[4] = {fx_vert_shared(b, x0, y, z0), fx_vert_shared(b, x0, y, z1),
                       fx_vert_shared(b, x1, y, z1), fx_vert_shared(b, x1, y, z0)};
    return fx_poly(b, 4, ids, area);
}

void fx_link(fx_builder *b, const float start[3], const float end[3], float radius, int bidir,
             uint8_t area, const char *kind) {
    b->links = fx_grow(b->links, &b->cap_links, b->nlinks + 1, sizeof *b->links);
    nav_link_input *l = &b->links[b->nlinks++];
    memset(l, 0, sizeof *l);
    memcpy(l->start, start, sizeof l->start);
    memcpy(l->end, end, sizeof l->end);
    l->radius = radius;
    l->bidirectional = bidir != 0;
    l->area = area;
    if (kind)
        snprintf(l->kind, sizeof l->kind, "%s", kind);
}

void fx_input(const fx_builder *b, nav_mesh_input *out) {
    memset(out, 0, sizeof *out);
    out->verts = b->verts;
    out->nverts = b->nverts;
    out->poly_start = b->poly_start;
    out->poly_verts = b->poly_verts;
    out->npolys = b->npolys;
    out->areas = b->areas;
    out->links = b->links;
    out->nlinks = b->nlinks;
}

nav_mesh *fx_build(fx_builder *b) {
    nav_mesh_input in;
    fx_input(b, &in);
    nav_mesh *m = NULL;
    nav_error err;
    nav_status st = nav_mesh_build(&in, NULL, &m, &err);
    FX_REQUIRE(st == NAV_OK, "fixture build failed: %s (%s)", err.message, nav_status_text(st));
    fx_free(b);
    return m;
}

void fx_free(fx_builder *b) {
    if (!b)
        return;
    free(b->verts);
    free(b->poly_start);
    free(b->poly_verts);
    free(b->areas);
    free(b->links);
    free(b->table);
    free(b);
}

/* ---- hand-made fixtures ---- */

nav_mesh *fx_square_with_hole(void) {
    static const float g[4] = {0, 4, 6, 10};
    fx_builder *b = fx_new();
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            if (i != 1 || j != 1)
                fx_quad(b, g[i], g[j], g[i + 1], g[j + 1], 0, 0);
    return fx_build(b);
}

nav_mesh *fx_l_corridor(void) {
    fx_builder *b = fx_new();
    for (int i = 0; i < 5; i++)
        fx_quad(b, 2.0f * i, 0, 2.0f * i + 2, 2, 0, 0);
    for (int j = 1; j < 5; j++)
        fx_quad(b, 8, 2.0f * j, 10, 2.0f * j + 2, 0, 0);
    return fx_build(b);
}

nav_mesh *fx_u_corridor(void) {
    fx_builder *b = fx_new();
    for (int j = 0; j < 5; j++)
        fx_quad(b, 0, 2.0f * j, 2, 2.0f * j + 2, 0, 0);
    for (int i = 1; i < 4; i++)
        fx_quad(b, 2.0f * i, 8, 2.0f * i + 2, 10, 0, 0);
    for (int j = 4; j >= 0; j--)
        fx_quad(b, 8, 2.0f * j, 10, 2.0f * j + 2, 0, 0);
    return fx_build(b);
}

nav_mesh *fx_two_islands(void) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 4, 4, 0, 0);
    fx_quad(b, 10, 0, 14, 4, 0, 0);
    return fx_build(b);
}

/* A ramp cell [x0,x1] x [z0,z1] whose height goes from y0 at x0 to y1 at x1. */
static uint32_t fx_ramp(fx_builder *b, float x0, float z0, float x1, float z1, float y0, float y1) {
    uint32_t ids[4] = {fx_vert_shared(b, x0, y0, z0), fx_vert_shared(b, x0, y0, z1),
                       fx_vert_shared(b, x1, y1, z1), fx_vert_shared(b, x1, y1, z0)};
    return fx_poly(b, 4, ids, 0);
}

nav_mesh *fx_bridge(void) {
    static const float gx[6] = {0, 5, 10, 20, 25, 30};
    static const float gz[4] = {0, 4, 6, 10};
    fx_builder *b = fx_new();
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 5; i++)
            if (!(j == 1 && (i == 1 || i == 3)))
                fx_quad(b, gx[i], gz[j], gx[i + 1], gz[j + 1], 0, 0);
    fx_ramp(b, 5, 4, 10, 6, 0, 5);
    fx_quad(b, 10, 4, 20, 6, 5, 0);
    fx_ramp(b, 20, 4, 25, 6, 5, 0);
    return fx_build(b);
}

/* ---- seeded random meshes ---- */

uint32_t fx_random_point(const nav_mesh *m, uint32_t *rng, float out[3]) {
    uint32_t p = fx_rand(rng) % m->npolys;
    uint32_t n = nav_poly_nverts(m, p);
    uint32_t k = 1 + fx_rand(rng) % (n - 2);
    const float *a = nav_poly_vert(m, p, 0), *b = nav_poly_vert(m, p, k),
                *c = nav_poly_vert(m, p, k + 1);
    float u = fx_randf(rng), v = fx_randf(rng);
    if (u + v > 1) { /* fold the far half of the square onto the triangle */
        u = 1 - u;
        v = 1 - v;
    }
    for (int i = 0; i < 3; i++)
        out[i] = a[i] + u * (b[i] - a[i]) + v * (c[i] - a[i]);
    return p;
}

fx_random_opts fx_random_defaults(void) {
    fx_random_opts o = {.width = 10,
                        .height = 10,
                        .cell = 1.0f,
                        .hole_ratio = 0.15f,
                        .merge_runs = 0,
                        .triangulate = 1,
                        .bridge = 0,
                        .islands = 1};
    return o;
}

/* Emits the floor cells of row j, merging runs when asked. */
static void fx_random_row(fx_builder *b, const uint8_t *present, const fx_random_opts *o,
                          uint32_t j, uint32_t *rng, uint32_t **scratch, uint32_t *scratch_cap) {
    uint32_t w = o->width, stride = w + 1;
    for (uint32_t i = 0; i < w;) {
        if (!present[j * w + i]) {
            i++;
            continue;
        }
        uint32_t i1 = i + 1;
        if (o->merge_runs)
            while (i1 < w && present[j * w + i1] && fx_randf(rng) >= 0.3f)
                i1++;
        uint32_t run = i1 - i;
        if (run == 1 && o->triangulate && fx_randf(rng) < 0.3f) {
            uint32_t v00 = j * stride + i, v10 = v00 + 1, v01 = v00 + stride, v11 = v01 + 1;
            if (fx_rand(rng) & 1) { /* diagonal (i,j)-(i+1,j+1) */
                uint32_t t1[3] = {v00, v11, v10}, t2[3] = {v00, v01, v11};
                fx_poly(b, 3, t1, 0);
                fx_poly(b, 3, t2, 0);
            } else { /* diagonal (i+1,j)-(i,j+1) */
                uint32_t t1[3] = {v00, v01, v10}, t2[3] = {v10, v01, v11};
                fx_poly(b, 3, t1, 0);
                fx_poly(b, 3, t2, 0);
            }
        } else {
            /* bottom edge left to right, then top edge right to left: keeps
               every grid vertex, so neighbours share exact edges */
            uint32_t n = 2 * (run + 1);
            *scratch = fx_grow(*scratch, scratch_cap, n, sizeof **scratch);
            uint32_t k = 0;
            for (uint32_t x = i; x <= i1; x++)
                (*scratch)[k++] = j * stride + x;
            for (uint32_t x = i1 + 1; x-- > i;)
                (*scratch)[k++] = (j + 1) * stride + x;
            fx_poly(b, n, *scratch, (uint8_t)(fx_rand(rng) % 4 == 0 ? 1 : 0));
        }
        i = i1;
    }
}

static nav_mesh *fx_random_once(uint32_t seed, const fx_random_opts *o, const uint8_t *keep_polys,
                                uint32_t nkeep_hint) {
    uint32_t rng = seed ? seed : 0x2545F491u;
    uint32_t w = o->width, h = o->height;
    float cell = o->cell > 0 ? o->cell : 1.0f;
    uint8_t *present = malloc((size_t)w * h + 1);
    FX_REQUIRE(present != NULL, "fixture allocation failed");
    if (o->walls) {
        /* wall segments until hole_ratio of the cells are walls */
        memset(present, 1, (size_t)w * h);
        size_t target = (size_t)(o->hole_ratio * (float)w * (float)h), holes = 0;
        while (holes < target) {
            uint32_t i = fx_rand(&rng) % w, j = fx_rand(&rng) % h, len = 3 + fx_rand(&rng) % 14;
            int across = fx_rand(&rng) & 1;
            for (uint32_t k = 0; k < len && holes < target; k++) {
                uint32_t ci = across ? i + k : i, cj = across ? j : j + k;
                if (ci >= w || cj >= h)
                    break;
                if (present[(size_t)cj * w + ci]) {
                    present[(size_t)cj * w + ci] = 0;
                    holes++;
                }
            }
        }
    } else {
        for (size_t c = 0; c < (size_t)w * h; c++)
            present[c] = fx_randf(&rng) >= o->hole_ratio;
    }
    int bridge = o->bridge && w >= 5 && h >= 3;
    uint32_t jb = h / 2, ia = 1, ib = w - 2;
    if (bridge) {
        present[jb * w + ia - 1] = 1; /* floor where the ramps land */
        present[jb * w + ib + 1] = 1;
        present[jb * w + ia] = 0; /* the ramp cells replace the floor there */
        present[jb * w + ib] = 0;
    }
    fx_builder *b = fx_new();
    int jitter = o->jitter > 0 && !o->merge_runs && !bridge;
    for (uint32_t j = 0; j <= h; j++)
        for (uint32_t i = 0; i <= w; i++) {
            float dx = 0, dz = 0;
            if (jitter) { /* drawn only then: meshes without jitter keep their seeds' shapes */
                dx = (fx_randf(&rng) - 0.5f) * o->jitter * cell;
                dz = (fx_randf(&rng) - 0.5f) * o->jitter * cell;
            }
            fx_vert(b, i * cell + dx, 0, j * cell + dz);
        }
    uint32_t *scratch = NULL, scratch_cap = 0;
    for (uint32_t j = 0; j < h; j++)
        fx_random_row(b, present, o, j, &rng, &scratch, &scratch_cap);
    if (bridge) {
        const float top = 4.0f;
        float z0 = jb * cell, z1 = (jb + 1) * cell;
        fx_ramp(b, ia * cell, z0, (ia + 1) * cell, z1, 0, top);
        for (uint32_t i = ia + 1; i < ib; i++)
            fx_quad(b, i * cell, z0, (i + 1) * cell, z1, top, 0);
        fx_ramp(b, ib * cell, z0, (ib + 1) * cell, z1, top, 0);
    }
    free(scratch);
    free(present);
    if (keep_polys) {
        /* Rebuild the polygon list with only the kept polygons. */
        fx_builder *k = fx_new();
        (void)nkeep_hint;
        for (uint32_t v = 0; v < b->nverts; v++)
            fx_vert(k, b->verts[3 * v], b->verts[3 * v + 1], b->verts[3 * v + 2]);
        for (uint32_t p = 0; p < b->npolys; p++)
            if (keep_polys[p])
                fx_poly(k, b->poly_start[p + 1] - b->poly_start[p],
                        &b->poly_verts[b->poly_start[p]], b->areas[p]);
        fx_free(b);
        b = k;
    }
    return fx_build(b);
}

nav_mesh *fx_random(uint32_t seed, const fx_random_opts *opts) {
    fx_random_opts o = opts ? *opts : fx_random_defaults();
    nav_mesh *m = fx_random_once(seed, &o, NULL, 0);
    if (o.islands || nav_mesh_component_count(m) <= 1)
        return m;
    /* Keep only the largest component (lowest component id on ties). */
    uint32_t nc = nav_mesh_component_count(m), np = nav_mesh_polygon_count(m);
    uint32_t *size = calloc(nc, sizeof *size);
    uint8_t *keep = malloc(np);
    FX_REQUIRE(size && keep, "fixture allocation failed");
    for (uint32_t p = 0; p < np; p++)
        size[nav_mesh_poly_component(m, p)]++;
    uint32_t best = 0;
    for (uint32_t c = 1; c < nc; c++)
        if (size[c] > size[best])
            best = c;
    for (uint32_t p = 0; p < np; p++)
        keep[p] = nav_mesh_poly_component(m, p) == best;
    nav_mesh_free(m);
    m = fx_random_once(seed, &o, keep, size[best]);
    free(size);
    free(keep);
    return m;
}

/* ---- files ---- */

const char *fx_shared_mesh_path(const char *file) {
    static char path[4096];
    static const char *const ups[4] = {"", "../", "../../", "../../../"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%sshared/meshes/%s", ups[i], file);
        if (access(path, R_OK) == 0)
            return path;
    }
    return NULL;
}

char *fx_read_file(const char *path, size_t *len) {
    if (len)
        *len = 0;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 262144;
            char *q = realloc(buf, cap + 1);
            if (!q) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = q;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void fx_answer_init(fx_answer *a) {
    memset(a, 0, sizeof(*a));
    a->res.corners = a->corners;
    a->res.max_corners = FX_ANSWER_MAX;
    a->res.polys = a->polys;
    a->res.max_polys = FX_ANSWER_MAX;
    a->res.links = a->links;
    a->res.max_links = 16;
}

int fx_answer_same(const fx_answer *x, const fx_answer *y) {
    const nav_path_result *a = &x->res, *b = &y->res;
    return a->ncorners == b->ncorners && a->npolys == b->npolys && a->nlinks == b->nlinks &&
           a->flags == b->flags && a->start_poly == b->start_poly && a->end_poly == b->end_poly &&
           a->algorithm == b->algorithm && a->nodes_expanded == b->nodes_expanded &&
           memcmp(&a->length, &b->length, sizeof(double)) == 0 &&
           memcmp(a->start, b->start, sizeof(a->start)) == 0 &&
           memcmp(a->end, b->end, sizeof(a->end)) == 0 &&
           memcmp(x->corners, y->corners, sizeof(float) * 3 * a->ncorners) == 0 &&
           memcmp(x->polys, y->polys, sizeof(uint32_t) * a->npolys) == 0 &&
           memcmp(x->links, y->links, sizeof(uint32_t) * a->nlinks) == 0;
}

/* ---- request bodies for the hardening tests and benchmarks ---- */

char *fx_grid_json(int n) {
    size_t cap = (size_t)(n + 1) * (n + 1) * 32 + (size_t)n * n * 48 + 64, len = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    len += (size_t)snprintf(b + len, cap - len, "{\"vertices\":[");
    for (int z = 0; z <= n; z++)
        for (int x = 0; x <= n; x++)
            len += (size_t)snprintf(b + len, cap - len, "%s[%d,0,%d]", x || z ? "," : "", x, z);
    len += (size_t)snprintf(b + len, cap - len, "],\"polygons\":[");
    for (int z = 0; z < n; z++)
        for (int x = 0; x < n; x++) {
            int a = z * (n + 1) + x;
            len += (size_t)snprintf(b + len, cap - len, "%s[%d,%d,%d,%d]", x || z ? "," : "", a,
                                    a + n + 1, a + n + 2, a + 1);
        }
    snprintf(b + len, cap - len, "]}");
    return b;
}

char *fx_step_body(int agents, int n_grid) {
    return fx_step_body_targets(agents, n_grid, 7);
}

char *fx_step_body_targets(int agents, int n_grid, int ntargets) {
    size_t cap = (size_t)agents * 200 + 64, len = 0;
    char *body = malloc(cap);
    if (!body)
        return NULL;
    len += (size_t)snprintf(body + len, cap - len, "{\"dt\":0.05,\"cache\":false,\"agents\":[");
    for (int i = 0; i < agents; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"id\":\"a%d\",\"position\":[%d.5,0,%d.5],\"velocity\":[0,0,0],"
                                "\"radius\":0.3,\"max_speed\":3,\"max_accel\":8,\"behavior\":"
                                "\"seek\",\"target\":[%d.5,0,%d.5]}",
                                i ? "," : "", i, i % 20, (i / 20) % 20,
                                n_grid - 1 - (i % ntargets) % n_grid,
                                n_grid - 1 - (i % ntargets) / n_grid % n_grid);
    snprintf(body + len, cap - len, "]}");
    return body;
}
