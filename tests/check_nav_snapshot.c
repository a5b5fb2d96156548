/*
 * check_nav_snapshot: version 3 blobs carry the built structures of a mesh
 * (nav_snapshot.c) and load without nav_mesh_build.
 *
 * - Loaded and rebuilt meshes are equal, array by array, and answer every
 *   kind of query identically (fixtures with links, one-way links, detail
 *   meshes, islands, bridges; the shared meshes in check_shared_meshes).
 * - Damage with the CRC recomputed (what the fuzz harness does): every
 *   single flipped byte and thousands of random multi-byte mutations are
 *   NAV_E_CORRUPT or a mesh that answers queries (run under ASan+UBSan);
 *   every truncation of the mesh fields is NAV_E_CORRUPT.
 * - Hand-forged structures, each breaking one invariant the queries rely on
 *   (twin, BVH escape, leaf, link end, component, DAG order), are refused.
 * - Version 1 and 2 blobs still load (rebuilt), with the stored graph.
 * - The corner graph section's walk mesh (format 2: the merge's pieces,
 *   nav_corner_merge.c): read back it equals the merge's, array by array,
 *   on random meshes of every kind, and the loaded mesh answers as the
 *   built one; forged pieces (not convex, in two parts, over 8 vertices,
 *   ids out of range or out of order, bad counts and lengths) are refused
 *   by the reader, and the blob still loads with the merge run again;
 *   other valid partitions (every polygon a piece; three quads in a row)
 *   are used as stored and answer the same (exact answers do not depend on
 *   the tiling); a format 1 section (no walk mesh) still loads.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_corner_internal.h"
#include "nav/nav_mesh_internal.h"
#include "tests/test_fixtures.h"
#include "tests/test_snapshot.h"

/* Declared for -Wmissing-prototypes; "extern" keeps it out of suite discovery. */
extern Suite *nav_snapshot_suite(void);

/* A random mesh with links added: two-way, one-way (so SCCs and a DAG),
   and one whose end is off the mesh; every other seed a detail mesh that
   is the polygons' own fan (the heights are the same, the grids exist). */
static nav_mesh *linked_mesh(uint32_t seed) {
    fx_random_opts o = fx_random_defaults();
    o.bridge = seed % 3 == 1;
    o.islands = seed % 2;
    o.merge_runs = seed % 4 == 3;
    o.triangulate = seed % 5 != 0;
    o.walls = seed % 3 == 2;
    o.hole_ratio = 0.15f;
    nav_mesh *base = fx_random(seed, &o);
    nav_mesh_input in;
    nav_mesh_as_input(base, &in);
    uint32_t rng = seed * 2654435761u + 1;
    nav_link_input links[12];
    memset(links, 0, sizeof links);
    for (uint32_t l = 0; l < 12; l++) {
        uint32_t a = fx_rand(&rng) % base->npolys, b = fx_rand(&rng) % base->npolys;
        memcpy(links[l].start, &base->poly_centroid[3 * (size_t)a], 12);
        memcpy(links[l].end, &base->poly_centroid[3 * (size_t)b], 12);
        if (l == 11)
            links[l].end[1] += 100; /* off the mesh: never taken */
        links[l].radius = 0.5f;
        links[l].bidirectional = l % 3 == 0;
        links[l].area = (uint8_t)(l % 4);
        snprintf(links[l].kind, sizeof links[l].kind, "k%u", l);
    }
    in.links = links;
    in.nlinks = 12;
    uint32_t *dtris = NULL, *dpoly = NULL;
    if (seed % 2 == 0) {
        size_t ntris = 0;
        for (uint32_t p = 0; p < base->npolys; p++)
            ntris += nav_poly_nverts(base, p) - 2;
        dtris = malloc(ntris * 3 * sizeof *dtris);
        dpoly = malloc((size_t)base->npolys * 2 * sizeof *dpoly);
        size_t t = 0;
        for (uint32_t p = 0; p < base->npolys; p++) {
            uint32_t s = base->poly_start[p], n = nav_poly_nverts(base, p);
            dpoly[2 * p] = (uint32_t)t;
            dpoly[2 * p + 1] = n - 2;
            for (uint32_t k = 1; k + 1 < n; k++, t++) {
                dtris[3 * t] = base->poly_verts[s];
                dtris[3 * t + 1] = base->poly_verts[s + k];
                dtris[3 * t + 2] = base->poly_verts[s + k + 1];
            }
        }
        in.detail_tris = dtris;
        in.ndetail_tris = (uint32_t)ntris;
        in.detail_poly_tris = dpoly;
        in.detail_verts = NULL;
        in.ndetail_verts = 0;
    }
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s", err.message);
    free(dtris);
    free(dpoly);
    nav_mesh_free(base);
    return m;
}

START_TEST(test_snapshot_equals_rebuild) {
    for (uint32_t seed = 1; seed <= 16; seed++) {
        nav_mesh *m = linked_mesh(seed);
        ck_assert_uint_gt(m->nlinks, 0);
        snap_check(m, seed, 40);
        nav_mesh_free(m);
    }
    /* the plain fixtures too (no links, no detail) */
    nav_mesh *fixed[4] = {fx_square_with_hole(), fx_l_corridor(), fx_two_islands(), fx_bridge()};
    for (int i = 0; i < 4; i++) {
        snap_check(fixed[i], 100 + (uint32_t)i, 20);
        nav_mesh_free(fixed[i]);
    }
}
END_TEST

/* Overlapping polygons whose shared edge runs the same way in both (the
   build pairs edges by vertex pair, whatever their direction): the load
   finds the same twins (the fuzz corpus held such a mesh). */
START_TEST(test_snapshot_same_direction_edge) {
    fx_builder *b = fx_new();
    fx_quad(b, 0, 0, 2, 2, 0, 0);
    fx_quad(b, 0, 0, 1, 2, 0, 0);
    nav_mesh_input in;
    fx_input(b, &in);
    nav_mesh *m = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_build(&in, NULL, &m, &err) == NAV_OK, "%s", err.message);
    fx_free(b);
    uint32_t shared = 0;
    for (uint32_t k = 0; k < m->poly_start[1]; k++)
        shared += m->poly_nei[k] == 1;
    ck_assert_uint_eq(shared, 1);
    snap_check(m, 5, 20);
    nav_mesh_free(m);
}
END_TEST

/* Where a version 3 blob of m splits (see nav_serialize.c). */
typedef struct blob_parts {
    size_t input_end; /* the input fields end: u32 section length follows */
    size_t built;     /* the built section starts */
    size_t mesh_end;  /* the mesh CRC sits here */
    size_t section;   /* the corner graph section starts */
} blob_parts;

static blob_parts parts_of(const nav_mesh *m, size_t len) {
    blob_parts b;
    b.section = len - 20 - nav_corner_save(m->cgraph, NULL);
    b.mesh_end = b.section - 4;
    b.built = b.mesh_end - nav_snapshot_size(m);
    b.input_end = b.built - 4;
    return b;
}

static void put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Loads copy with the mesh CRC recomputed; a mesh that loads must answer. */
static nav_status load_forged(uint8_t *copy, size_t len, size_t mesh_end, uint32_t seed) {
    put_le32(copy + mesh_end, nav_crc32(copy, mesh_end));
    nav_mesh *r = (nav_mesh *)0x1;
    nav_error err;
    nav_status st = nav_mesh_deserialize(copy, len, &r, &err);
    ck_assert_msg(st == NAV_OK || st == NAV_E_CORRUPT, "status %d", st);
    if (st == NAV_OK) {
        snap_exercise(r, seed, 3);
        nav_mesh_free(r);
    } else {
        ck_assert_ptr_null(r);
    }
    return st;
}

START_TEST(test_snapshot_damage) {
    nav_mesh *m = linked_mesh(4);
    uint8_t *blob;
    size_t len;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    blob_parts b = parts_of(m, len);
    ck_assert_uint_eq(le32(blob + b.input_end), b.mesh_end - b.built);
    uint8_t *copy = malloc(len);
    /* every byte of the mesh fields flipped, two ways */
    int loaded = 0;
    for (size_t i = 8; i < b.mesh_end; i++)
        for (int v = 0; v < 2; v++) {
            memcpy(copy, blob, len);
            copy[i] ^= v ? 0x80 : 0x01;
            loaded += load_forged(copy, len, b.mesh_end, (uint32_t)i) == NAV_OK;
        }
    /* random multi-byte damage confined to the built section */
    uint32_t rng = 777;
    for (int t = 0; t < 4000; t++) {
        memcpy(copy, blob, len);
        int flips = 1 + (int)(fx_rand(&rng) % 6);
        for (int f = 0; f < flips; f++)
            copy[b.built + fx_rand(&rng) % (b.mesh_end - b.built)] = (uint8_t)fx_rand(&rng);
        loaded += load_forged(copy, len, b.mesh_end, (uint32_t)t) == NAV_OK;
    }
    printf("nav_snapshot damage: %zu mesh bytes flipped both ways and 4000 random mutations, "
           "%d loaded (and answered), the rest refused\n",
           b.mesh_end - 8, loaded);
    /* every truncation inside the mesh fields and their CRC is refused */
    nav_mesh *r;
    nav_error err;
    for (size_t n = 0; n < b.section; n++)
        ck_assert_int_eq(nav_mesh_deserialize(blob, n, &r, &err), NAV_E_CORRUPT);
    free(copy);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* Offsets of the built section's arrays (nav_snapshot.c's layout). */
typedef struct snap_layout {
    size_t nei, corner, links, component, scc, dag_start, dag, bvh;
} snap_layout;

static snap_layout layout_of(const nav_mesh *m, size_t built) {
    snap_layout l;
    size_t nidx = m->poly_start[m->npolys];
    l.nei = built + 20;
    l.corner = l.nei + 4 * nidx;
    l.links = l.corner + (nidx + 7) / 8;
    l.component = l.links + 32 * (size_t)m->nlinks;
    l.scc = l.component + 4 * (size_t)m->npolys;
    l.dag_start = l.scc + 4 * (size_t)m->npolys;
    l.dag = l.dag_start + 4 * ((size_t)m->nscc + 1);
    l.bvh = l.dag + 4 * (size_t)m->scc_dag_start[m->nscc];
    return l;
}

START_TEST(test_snapshot_forged) {
    /* a mesh whose one-way links split it into three SCCs or more */
    nav_mesh *m = NULL;
    for (uint32_t seed = 1; seed <= 400 && !m; seed++) {
        m = linked_mesh(seed);
        if (m->nscc < 3 || m->scc_dag_start[m->nscc] == 0) {
            nav_mesh_free(m);
            m = NULL;
        }
    }
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_gt(m->scc_dag_start[m->nscc], 0);
    uint8_t *blob;
    size_t len;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    blob_parts b = parts_of(m, len);
    snap_layout l = layout_of(m, b.built);
    uint8_t *c = malloc(len);
    /* untouched (CRC recomputed over the same bytes): loads */
    memcpy(c, blob, len);
    ck_assert_int_eq(load_forged(c, len, b.mesh_end, 1), NAV_OK);
    /* the first edge with a neighbour, and one wall */
    uint32_t open = NAV_NONE, wall = NAV_NONE;
    for (uint32_t k = 0; k < m->poly_start[m->npolys]; k++) {
        if (m->poly_nei[k] != NAV_NONE && open == NAV_NONE)
            open = k;
        if (m->poly_nei[k] == NAV_NONE && wall == NAV_NONE)
            wall = k;
    }
    ck_assert(open != NAV_NONE && wall != NAV_NONE);
    struct {
        const char *what;
        size_t at;
        uint32_t value;
    } cases[] = {
        {"neighbour out of range", l.nei + 4 * open, m->npolys},
        {"neighbour not pointing back", l.nei + 4 * open, m->poly_nei[open] == 0 ? 1 : 0},
        {"a wall given a neighbour", l.nei + 4 * wall, m->poly_nei[open]},
        {"link start polygon out of range", l.links, m->npolys + 5},
        {"link end NaN", l.links + 20, 0x7FC00000u},
        {"component out of range", l.component, m->ncomponents},
        {"components split across an edge", l.component + 4 * m->poly_nei[open],
         m->component[m->poly_nei[open]] + 1 < m->ncomponents
             ? m->component[m->poly_nei[open]] + 1
             : m->component[m->poly_nei[open]] - 1},
        {"scc out of range", l.scc, m->nscc},
        {"dag start not monotone", l.dag_start + 4, UINT32_MAX},
        /* a row that runs past the DAG's end, the last start back at it:
           read past the array unless every start is bounded first (the
           fuzzer's find; it needs a row after the first, which refuses
           at its first edge) */
        {"dag start past the dag", l.dag_start + 4 * ((size_t)m->nscc - 1),
         m->scc_dag_start[m->nscc] + 64},
        {"dag edge to a higher scc", l.dag, m->nscc - 1},
        {"bvh escape past the end", l.bvh, (uint32_t) - (int32_t)(m->nbvh + 1)},
        {"bvh escape INT32_MIN", l.bvh, 0x80000000u},
        {"bvh escape zero-length", l.bvh, (uint32_t)-1},
        {"bvh escape one short", l.bvh, (uint32_t) - (int32_t)(m->nbvh - 1)},
        {"bvh leaf out of range", l.bvh + 4 * ((size_t)m->nbvh - 1), m->npolys},
        {"bvh leaf twice", l.bvh + 4 * ((size_t)m->nbvh - 1), (uint32_t)m->bvh[m->nbvh - 2].index},
        {"ncomponents 0", b.built, 0},
        {"contains_margin NaN", b.built + 16, 0x7FC00000u},
        {"contains_margin 2 m", b.built + 16, 0x40000000u},
        {"contains_margin negative", b.built + 16, 0xBF800000u},
        {"nscc beyond polygons", b.built + 4, m->npolys + 1},
        {"ndag larger", b.built + 8, m->scc_dag_start[m->nscc] + 1},
        {"nbvh huge", b.built + 12, 0x40000000u},
        {"nbvh one less", b.built + 12, m->nbvh - 1},
        {"section length short", b.input_end, (uint32_t)(b.mesh_end - b.built - 4)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, blob, len);
        ck_assert_msg(le32(c + cases[i].at) != cases[i].value, "%s: no change", cases[i].what);
        put_le32(c + cases[i].at, cases[i].value);
        ck_assert_msg(load_forged(c, len, b.mesh_end, 2) == NAV_E_CORRUPT, "%s: accepted",
                      cases[i].what);
    }
    free(c);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* Version 2 (input fields, CRC, graph section bound to that CRC) and
   version 1 (input fields, CRC last) blobs of the same mesh still load,
   through the build, to the same mesh; version 2 keeps its stored graph. */
START_TEST(test_snapshot_old_versions) {
    nav_mesh *m = linked_mesh(8);
    uint8_t *blob;
    size_t len;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    blob_parts b = parts_of(m, len);
    size_t glen = len - b.section;
    uint8_t *v2 = malloc(b.input_end + 4 + glen);
    memcpy(v2, blob, b.input_end);
    v2[4] = 2;
    uint32_t crc = nav_crc32(v2, b.input_end);
    put_le32(v2 + b.input_end, crc);
    uint8_t *g = v2 + b.input_end + 4;
    memcpy(g, blob + b.section, glen);
    put_le32(g + 8, crc); /* the section binds to the mesh CRC */
    put_le32(g + glen - 4, nav_crc32(g, glen - 4));
    nav_mesh *r = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_deserialize(v2, b.input_end + 4 + glen, &r, &err) == NAV_OK, "%s",
                  err.message);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_LOADED);
    snap_assert_same(r, m);
    snap_assert_same_answers(r, m, 8, 20);
    nav_mesh_free(r);
    uint8_t *v1 = v2; /* the same input fields, version 1, CRC last */
    v1[4] = 1;
    put_le32(v1 + b.input_end, nav_crc32(v1, b.input_end));
    ck_assert_int_eq(nav_mesh_deserialize(v1, b.input_end + 4, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), m->cgraph ? NAV_GRAPH_BUILT : NAV_GRAPH_NONE);
    snap_assert_same(r, m);
    nav_mesh_free(r);
    free(v2);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* ---- the stored walk mesh (corner graph format 2) ---- */

/* The stored walk mesh of m's graph (what the blob's section ends with). */
static uint8_t *walk_bytes(const nav_mesh *m, size_t *len) {
    *len = 0;
    nav_corner_merge_save(m->cgraph, NULL, len);
    uint8_t *p = malloc(*len);
    size_t at = 0;
    nav_corner_merge_save(m->cgraph, p, &at);
    ck_assert_uint_eq(at, *len);
    return p;
}

/* nav_corner_merge_load on a graph that borrows m's nodes; on refusal the
   walk mesh fields must be left empty. The caller frees with
   nav_corner_merge_free. */
static nav_status walk_load(const nav_mesh *m, const uint8_t *p, size_t len, nav_cgraph *g) {
    memset(g, 0, sizeof *g);
    g->ncorners = m->cgraph->ncorners;
    g->nnodes = m->cgraph->nnodes;
    g->poly = m->cgraph->poly;
    g->corner_of = m->cgraph->corner_of;
    nav_status st = nav_corner_merge_load(m, g, p, len);
    if (st != NAV_OK)
        ck_assert(!g->wm && !g->wof && !g->wrep && !g->wcorner_of && !g->wpoly && !g->wpts_start &&
                  !g->wpts);
    return st;
}

/* The stored form of the partition of m into groups (group[p]: any label
   below npolys), pieces numbered by their first polygon. */
static uint8_t *walk_forge(const nav_mesh *m, const uint32_t *group, size_t *len) {
    uint32_t np = m->npolys, npieces = 0;
    uint32_t *map = malloc((size_t)np * 4);
    for (uint32_t p = 0; p < np; p++)
        map[p] = NAV_NONE;
    *len = 4 * (2 + (size_t)np);
    uint8_t *out = malloc(*len);
    for (uint32_t p = 0; p < np; p++) {
        if (map[group[p]] == NAV_NONE)
            map[group[p]] = npieces++;
        put_le32(out + 8 + 4 * (size_t)p, map[group[p]]);
    }
    put_le32(out, npieces);
    put_le32(out + 4, np);
    free(map);
    return out;
}

/* m's blob with the walk mesh (the last old_wlen bytes of the graph
   section's payload) replaced by walk[0..wlen), the section's format set,
   its length and CRC fixed. */
static uint8_t *blob_with_walk(const nav_mesh *m, const uint8_t *blob, size_t len, size_t old_wlen,
                               const uint8_t *walk, size_t wlen, uint32_t format, size_t *out_len) {
    size_t section = parts_of(m, len).section, keep = len - 4 - old_wlen;
    size_t n = keep + wlen + 4;
    uint8_t *c = malloc(n);
    memcpy(c, blob, keep);
    if (wlen)
        memcpy(c + keep, walk, wlen);
    ck_assert_int_eq(memcmp(c + section, "CGRF", 4), 0);
    put_le32(c + section + 4, format);
    put_le32(c + section + 12, (uint32_t)(n - section - 20));
    put_le32(c + n - 4, nav_crc32(c + section, n - 4 - section));
    *out_len = n;
    return c;
}

/* Loads blob: a mesh whose stored graph is used (walk mesh read back or
   merged again) and that answers as m does. */
static nav_mesh *load_walk_blob(const nav_mesh *m, const uint8_t *blob, size_t len, uint32_t seed) {
    nav_mesh *r = NULL;
    nav_error err;
    ck_assert_msg(nav_mesh_deserialize(blob, len, &r, &err) == NAV_OK, "%s", err.message);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_LOADED);
    ck_assert_ptr_nonnull(r->cgraph);
    ck_assert_uint_eq(r->cgraph->nedges, m->cgraph->nedges);
    snap_assert_same_answers(r, m, seed, 12);
    return r;
}

START_TEST(test_walk_stored_equals_merge) {
    int pieces_merged = 0, long_kept = 0;
    for (uint32_t seed = 1; seed <= 24; seed++) {
        nav_mesh *m;
        if (seed > 20) {
            m = linked_mesh(seed); /* links: wpts */
        } else {
            fx_random_opts o = fx_random_defaults();
            o.width = o.height = 16 + seed % 3 * 8;
            o.walls = seed % 2 == 0; /* rooms, else pillars */
            o.triangulate = seed % 3 != 0;
            o.merge_runs = seed % 4 == 1; /* long polygons, collinear vertices */
            o.hole_ratio = 0.05f + 0.05f * (float)(seed % 4);
            o.jitter = seed % 5 == 2 ? 0.2f : 0;
            m = fx_random(seed, &o);
        }
        ck_assert_ptr_nonnull(m->cgraph);
        const nav_cgraph *g = m->cgraph;
        pieces_merged += g->wm->npolys < m->npolys;
        for (uint32_t wp = 0; wp < g->wm->npolys; wp++)
            long_kept += nav_poly_nverts(g->wm, wp) > 8;
        size_t wlen;
        uint8_t *walk = walk_bytes(m, &wlen);
        nav_cgraph got;
        ck_assert_int_eq(walk_load(m, walk, wlen, &got), NAV_OK);
        snap_assert_same_walk(g, &got);
        nav_corner_merge_free(&got);
        /* the whole blob: the loaded graph's walk mesh is the merge's */
        uint8_t *blob;
        size_t len;
        ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
        nav_mesh *r = load_walk_blob(m, blob, len, seed);
        snap_assert_same_walk(g, r->cgraph);
        nav_mesh_free(r);
        free(blob);
        free(walk);
        nav_mesh_free(m);
    }
    /* the meshes exercise merging (fewer pieces than polygons) */
    ck_assert_int_ge(pieces_merged, 20);
    printf("nav_snapshot walk mesh: 24 meshes read back equal to the merge, %d pieces of more "
           "than 8 vertices\n",
           long_kept);
}
END_TEST

/* The slot of quad a's edge towards b, or 4. */
static uint32_t quad_edge(const nav_mesh *m, uint32_t a, uint32_t b) {
    for (uint32_t k = 0; k < 4; k++)
        if (m->poly_nei[m->poly_start[a] + k] == b)
            return k;
    return 4;
}

static int is_quad(const nav_mesh *m, uint32_t a) {
    return a != NAV_NONE && nav_poly_nverts(m, a) == 4;
}

/* A grid mesh (quads only) and, in it, quads p, q, r, s: q and r beside p
   across two consecutive edges (an L of three cells), s beyond q (a strip
   p q s of three cells). */
static nav_mesh *walk_grid(uint32_t *p, uint32_t *q, uint32_t *r, uint32_t *s) {
    fx_random_opts o = fx_random_defaults();
    o.width = o.height = 14;
    o.triangulate = 0;
    o.hole_ratio = 0.1f;
    nav_mesh *m = fx_random(3, &o);
    ck_assert_ptr_nonnull(m->cgraph);
    for (uint32_t a = 0; a < m->npolys; a++) {
        uint32_t st = m->poly_start[a];
        if (!is_quad(m, a))
            continue;
        for (uint32_t k = 0; k < 4; k++) {
            uint32_t b = m->poly_nei[st + k], c = m->poly_nei[st + (k + 1) % 4];
            if (!is_quad(m, b) || !is_quad(m, c) || b == c)
                continue;
            uint32_t j = quad_edge(m, b, a);
            uint32_t d = j < 4 ? m->poly_nei[m->poly_start[b] + (j + 2) % 4] : NAV_NONE;
            if (is_quad(m, d) && d != a && d != c) {
                *p = a, *q = b, *r = c, *s = d;
                return m;
            }
        }
    }
    ck_abort_msg("no L and strip of quads");
    return NULL;
}

START_TEST(test_walk_forged) {
    uint32_t p, q, r, sq;
    nav_mesh *m = walk_grid(&p, &q, &r, &sq);
    const nav_cgraph *g = m->cgraph;
    uint32_t np = m->npolys, npieces = g->wm->npolys;
    ck_assert_uint_lt(npieces, np);
    uint8_t *blob;
    size_t len, wlen, flen, blen;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    uint8_t *walk = walk_bytes(m, &wlen);
    ck_assert_uint_eq(wlen, 4 * (2 + (size_t)np));
    ck_assert_int_eq(memcmp(blob + len - 4 - wlen, walk, wlen), 0);
    nav_cgraph got;
    uint32_t *group = malloc((size_t)np * 4);

    /* valid partitions other than the merge's are used as stored */
    for (uint32_t a = 0; a < np; a++)
        group[a] = a; /* every polygon its own piece */
    uint8_t *forged = walk_forge(m, group, &flen);
    ck_assert_int_eq(walk_load(m, forged, flen, &got), NAV_OK);
    ck_assert_uint_eq(got.wm->npolys, np);
    for (uint32_t a = 0; a < np; a++) /* each piece its polygon, from its vertex 0 */
        for (uint32_t k = 0; k < nav_poly_nverts(m, a); k++)
            ck_assert_uint_eq(got.wm->poly_verts[got.wm->poly_start[a] + k],
                              m->poly_verts[m->poly_start[a] + k]);
    nav_corner_merge_free(&got);
    uint8_t *b2 = blob_with_walk(m, blob, len, wlen, forged, flen, 2, &blen);
    nav_mesh *res = load_walk_blob(m, b2, blen, 11);
    ck_assert_uint_eq(res->cgraph->wm->npolys, np); /* the stored tiling was used */
    nav_mesh_free(res);
    free(b2);
    free(forged);
    group[q] = group[sq] = p; /* the strip p q s: a rectangle of 8 vertices */
    forged = walk_forge(m, group, &flen);
    ck_assert_int_eq(walk_load(m, forged, flen, &got), NAV_OK);
    ck_assert_uint_eq(got.wm->npolys, np - 2);
    ck_assert_uint_eq(got.wof[p], got.wof[sq]);
    nav_corner_merge_free(&got);
    free(forged);

    /* refused, and the blob still loads with the merge run again */
    struct {
        const char *what;
        uint32_t a, b, c; /* polygons grouped with p (NAV_NONE: none) */
    } bad[] = {
        {"an L of three quads (not convex)", q, r, NAV_NONE},
        {"a piece in two parts (the strip's middle moved out)", sq, NAV_NONE, NAV_NONE},
        {"a piece of 10 vertices (the strip and the L)", q, r, sq},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (uint32_t a = 0; a < np; a++)
            group[a] = a;
        uint32_t with[3] = {bad[i].a, bad[i].b, bad[i].c};
        for (int k = 0; k < 3; k++)
            if (with[k] != NAV_NONE)
                group[with[k]] = p;
        forged = walk_forge(m, group, &flen);
        ck_assert_msg(walk_load(m, forged, flen, &got) == NAV_E_CORRUPT, "%s: accepted",
                      bad[i].what);
        b2 = blob_with_walk(m, blob, len, wlen, forged, flen, 2, &blen);
        res = load_walk_blob(m, b2, blen, 12 + (uint32_t)i);
        snap_assert_same_walk(g, res->cgraph); /* merged again */
        nav_mesh_free(res);
        free(b2);
        free(forged);
    }

    /* edits of the merge's own bytes */
    uint32_t member = NAV_NONE; /* a polygon that is not its piece's first */
    for (uint32_t a = 0; a < np && member == NAV_NONE; a++)
        if (g->wrep[g->wof[a]] != a)
            member = a;
    ck_assert(member != NAV_NONE);
    struct {
        const char *what;
        size_t at;
        uint32_t value;
    } cases[] = {
        {"a piece id out of range", 8 + 4 * (size_t)member, npieces},
        {"a piece id far out of range", 8 + 4 * (size_t)member, UINT32_MAX},
        {"pieces not numbered by their first polygon", 8, 1},
        {"piece count short", 0, npieces - 1},
        {"piece count long", 0, npieces + 1},
        {"mesh polygon count off", 4, np + 1},
    };
    uint8_t *c = malloc(wlen);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, walk, wlen);
        ck_assert_msg(le32(c + cases[i].at) != cases[i].value, "%s: no change", cases[i].what);
        put_le32(c + cases[i].at, cases[i].value);
        ck_assert_msg(walk_load(m, c, wlen, &got) == NAV_E_CORRUPT, "%s: accepted", cases[i].what);
        b2 = blob_with_walk(m, blob, len, wlen, c, wlen, 2, &blen);
        res = load_walk_blob(m, b2, blen, 20 + (uint32_t)i);
        snap_assert_same_walk(g, res->cgraph);
        nav_mesh_free(res);
        free(b2);
    }
    /* lengths: a word short, a word more, nothing */
    ck_assert_int_eq(walk_load(m, walk, wlen - 4, &got), NAV_E_CORRUPT);
    uint8_t *longer = calloc(1, wlen + 4);
    memcpy(longer, walk, wlen);
    ck_assert_int_eq(walk_load(m, longer, wlen + 4, &got), NAV_E_CORRUPT);
    ck_assert_int_eq(walk_load(m, walk, 0, &got), NAV_E_CORRUPT);
    b2 = blob_with_walk(m, blob, len, wlen, walk, wlen - 4, 2, &blen);
    res = load_walk_blob(m, b2, blen, 40);
    snap_assert_same_walk(g, res->cgraph);
    nav_mesh_free(res);
    free(b2);
    free(longer);
    free(c);
    free(group);
    free(walk);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* A format 1 section (the edges only, as blobs stored before the walk
   mesh was) loads with the merge run again; an unknown format is not
   read (the graph is rebuilt). */
START_TEST(test_walk_old_format) {
    nav_mesh *m = linked_mesh(9);
    ck_assert_ptr_nonnull(m->cgraph);
    uint8_t *blob;
    size_t len, wlen;
    ck_assert_int_eq(nav_mesh_serialize(m, &blob, &len), NAV_OK);
    uint8_t *walk = walk_bytes(m, &wlen);
    ck_assert_uint_eq(le32(blob + parts_of(m, len).section + 4), 2);
    size_t blen;
    uint8_t *b1 = blob_with_walk(m, blob, len, wlen, NULL, 0, 1, &blen);
    nav_mesh *r = load_walk_blob(m, b1, blen, 9);
    snap_assert_same_walk(m->cgraph, r->cgraph);
    snap_assert_same(r, m);
    nav_mesh_free(r);
    free(b1);
    /* format 2 bytes labelled format 1: the edge count does not fit, rebuilt */
    b1 = blob_with_walk(m, blob, len, wlen, walk, wlen, 1, &blen);
    nav_error err;
    ck_assert_int_eq(nav_mesh_deserialize(b1, blen, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
    snap_assert_same_walk(m->cgraph, r->cgraph);
    nav_mesh_free(r);
    free(b1);
    b1 = blob_with_walk(m, blob, len, wlen, walk, wlen, 3, &blen);
    ck_assert_int_eq(nav_mesh_deserialize(b1, blen, &r, &err), NAV_OK);
    ck_assert_int_eq(nav_mesh_graph_origin(r), NAV_GRAPH_REBUILT);
    nav_mesh_free(r);
    free(b1);
    free(walk);
    free(blob);
    nav_mesh_free(m);
}
END_TEST

/* The table-sliced CRC against the bitwise definition, at every length
   and alignment up to 64 bytes and on a long buffer. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

START_TEST(test_snapshot_crc) {
    ck_assert_uint_eq(nav_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(nav_crc32(NULL, 0), 0);
    uint8_t buf[4096 + 16];
    uint32_t rng = 99;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)fx_rand(&rng);
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 64; n++)
            ck_assert_uint_eq(nav_crc32(buf + off, n), crc_bitwise(buf + off, n));
    ck_assert_uint_eq(nav_crc32(buf + 3, 4096), crc_bitwise(buf + 3, 4096));
}
END_TEST

Suite *nav_snapshot_suite(void) {
    Suite *s = suite_create("nav_snapshot");
    TCase *tc = tcase_create("snapshot");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_snapshot_crc);
    tcase_add_test(tc, test_snapshot_equals_rebuild);
    tcase_add_test(tc, test_snapshot_same_direction_edge);
    tcase_add_test(tc, test_snapshot_damage);
    tcase_add_test(tc, test_snapshot_forged);
    tcase_add_test(tc, test_snapshot_old_versions);
    tcase_add_test(tc, test_walk_stored_equals_merge);
    tcase_add_test(tc, test_walk_forged);
    tcase_add_test(tc, test_walk_old_format);
    suite_add_tcase(s, tc);
    return s;
}
