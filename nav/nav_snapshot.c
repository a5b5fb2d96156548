/*
 * nav_snapshot: the built structures of a mesh in a version 3 blob, so a
 * replica loads a stored mesh without running nav_mesh_build.
 *
 * The section carries what the build computes by sorting, searching or
 * graph walks (edge adjacency and twins, corner flags, the BVH, the snapped
 * link ends, undirected components, strongly connected components and their
 * condensed DAG). What the build derives in one linear pass (bounds,
 * centroids, areas, poly_open, the area masks, link_out lists, the closure
 * bit matrix, the height grids) is derived again on load by the build's own
 * functions, so it cannot disagree with the geometry and needs no checks.
 *
 * Layout, little-endian, inside the blob's CRC:
 *   u32 ncomponents | u32 nscc | u32 ndag | u32 nbvh | f32 contains_margin
 *   nidx u32 poly_nei | (nidx + 7) / 8 bytes of poly_corner bits (slot i in
 *     bit i % 8 of byte i / 8)
 *   per link: u32 start_poly, u32 end_poly, 3 f32 start_on, 3 f32 end_on
 *   npolys u32 component | npolys u32 scc
 *   (nscc + 1) u32 scc_dag_start | ndag u32 scc_dag
 *   nbvh i32 BVH node index (the tree's shape: the boxes are derived)
 *
 * The CRC only catches accidents: a blob may be forged with a valid CRC
 * (the fuzz harness does so), so every count is checked against the bytes
 * left and every stored index against what it indexes, in linear time,
 * before the mesh is assembled. A blob that passes can give wrong answers
 * only if it was forged, never an out-of-range read or an endless walk:
 * edges are twinned both ways over the same vertex pair, BVH escapes stay
 * inside the tree and move forward, each polygon is one BVH leaf, link ends
 * name real polygons, components agree across every edge and link, and the
 * DAG only points to lower SCC ids (which the closure pass relies on).
 */
#include <stdlib.h>
#include <string.h>

#include "nav/nav_mesh_internal.h"
#include "nav/nav_optimal.h"

typedef struct nav_snap_w {
    uint8_t *p;
    size_t len;
} nav_snap_w;

static void snap_u32(nav_snap_w *w, uint32_t v) {
    uint8_t *b = w->p + w->len;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
    w->len += 4;
}

static void snap_f32(nav_snap_w *w, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    snap_u32(w, v);
}

size_t nav_snapshot_size(const nav_mesh *m) {
    size_t nidx = m->poly_start[m->npolys];
    return 20 + nidx * 4 + (nidx + 7) / 8 + (size_t)m->nlinks * 32 + (size_t)m->npolys * 8 +
           ((size_t)m->nscc + 1) * 4 + (size_t)m->scc_dag_start[m->nscc] * 4 + (size_t)m->nbvh * 4;
}

void nav_snapshot_put(const nav_mesh *m, uint8_t *out) {
    nav_snap_w w = {out, 0};
    size_t nidx = m->poly_start[m->npolys];
    uint32_t ndag = m->scc_dag_start[m->nscc];
    snap_u32(&w, m->ncomponents);
    snap_u32(&w, m->nscc);
    snap_u32(&w, ndag);
    snap_u32(&w, m->nbvh);
    snap_f32(&w, m->contains_margin);
    for (size_t i = 0; i < nidx; i++)
        snap_u32(&w, m->poly_nei[i]);
    memset(w.p + w.len, 0, (nidx + 7) / 8);
    for (size_t i = 0; i < nidx; i++)
        w.p[w.len + i / 8] |= (uint8_t)((m->poly_corner[i] & 1u) << (i % 8));
    w.len += (nidx + 7) / 8;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *k = &m->links[l];
        snap_u32(&w, k->start_poly);
        snap_u32(&w, k->end_poly);
        for (int a = 0; a < 3; a++)
            snap_f32(&w, k->start_on[a]);
        for (int a = 0; a < 3; a++)
            snap_f32(&w, k->end_on[a]);
    }
    for (uint32_t p = 0; p < m->npolys; p++)
        snap_u32(&w, m->component[p]);
    for (uint32_t p = 0; p < m->npolys; p++)
        snap_u32(&w, m->scc[p]);
    for (uint32_t s = 0; s <= m->nscc; s++)
        snap_u32(&w, m->scc_dag_start[s]);
    for (uint32_t k = 0; k < ndag; k++)
        snap_u32(&w, m->scc_dag[k]);
    for (uint32_t i = 0; i < m->nbvh; i++)
        snap_u32(&w, (uint32_t)m->bvh[i].index);
}

/* ---- reading: a cursor that fails once and stays failed ---- */

typedef struct nav_snap_r {
    const uint8_t *p;
    size_t len, pos;
    bool bad;
} nav_snap_r;

static uint32_t get_u32(nav_snap_r *r) {
    if (r->bad || r->len - r->pos < 4) {
        r->bad = true;
        return 0;
    }
    const uint8_t *b = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static float get_f32(nav_snap_r *r) {
    uint32_t v = get_u32(r);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* count u32 into a tallied allocation, once the bytes are known to be there */
static uint32_t *get_u32s(nav_snap_r *r, nav_mesh_ext *x, size_t count) {
    if (r->bad || count > (r->len - r->pos) / 4) {
        r->bad = true;
        return NULL;
    }
    uint32_t *a = nav_mesh_alloc_raw(x, count, sizeof *a);
    if (!a) {
        r->bad = true;
        return NULL;
    }
    nav_le32_copy(a, r->p + r->pos, count);
    r->pos += count * 4;
    return a;
}

static bool finite3(const float *v) {
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* ---- validation, each in one pass ---- */

/* Every polygon convex with negative signed area, as the build leaves it. */
static bool check_shapes(const nav_mesh *m) {
    for (uint32_t p = 0; p < m->npolys; p++) {
        const uint32_t *ids = &m->poly_verts[m->poly_start[p]];
        uint32_t n = nav_poly_nverts(m, p);
        if (!(nav_mesh_signed_area2(m->verts, ids, n) < 0) || !nav_mesh_is_convex(m->verts, ids, n))
            return false;
    }
    return true;
}

/* Edge slot k of p joins p to q = poly_nei[k] over the same two vertices
   (in reverse, or in the same order where polygons overlap: the build pairs
   edges by their vertex pair), at the slot of q that names p back: found by
   scanning q's edges (polygons are short; their vertices are distinct, so
   one slot at most matches), that slot is poly_twin[k]. */
static bool derive_twins(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    size_t nidx = m->poly_start[m->npolys];
    m->poly_twin = nav_mesh_alloc_raw(x, nidx, sizeof *m->poly_twin);
    if (!m->poly_twin)
        return false;
    for (uint32_t p = 0; p < m->npolys; p++) {
        uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
        for (uint32_t e = 0; e < n; e++) {
            uint32_t k = s + e, q = m->poly_nei[k];
            m->poly_twin[k] = NAV_NONE;
            if (q == NAV_NONE)
                continue;
            if (q >= m->npolys || q == p)
                return false;
            uint32_t a = m->poly_verts[k], b = m->poly_verts[s + (e + 1) % n];
            uint32_t qs = m->poly_start[q], qe = m->poly_start[q + 1];
            for (uint32_t t = qs; t < qe; t++) {
                uint32_t tn = t + 1 < qe ? t + 1 : qs;
                uint32_t c = m->poly_verts[t], d = m->poly_verts[tn];
                if (((c == b && d == a) || (c == a && d == b)) && m->poly_nei[t] == p) {
                    m->poly_twin[k] = t;
                    break;
                }
            }
            if (m->poly_twin[k] == NAV_NONE)
                return false;
        }
    }
    return true;
}

static bool check_links(const nav_mesh *m) {
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *k = &m->links[l];
        if ((k->start_poly != NAV_NONE && k->start_poly >= m->npolys) ||
            (k->end_poly != NAV_NONE && k->end_poly >= m->npolys) || !finite3(k->start_on) ||
            !finite3(k->end_on))
            return false;
    }
    return true;
}

/* Labels in range and equal across every edge and every usable link. */
static bool check_components(const nav_mesh *m) {
    if (m->ncomponents == 0 || m->ncomponents > m->npolys)
        return false;
    for (uint32_t p = 0; p < m->npolys; p++)
        if (m->component[p] >= m->ncomponents)
            return false;
    for (uint32_t p = 0; p < m->npolys; p++)
        for (uint32_t k = m->poly_start[p]; k < m->poly_start[p + 1]; k++)
            if (m->poly_nei[k] != NAV_NONE && m->component[m->poly_nei[k]] != m->component[p])
                return false;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *k = &m->links[l];
        if (k->start_poly != NAV_NONE && k->end_poly != NAV_NONE &&
            m->component[k->start_poly] != m->component[k->end_poly])
            return false;
    }
    return true;
}

/* SCC ids in range, the DAG's starts monotone from 0 to its length, and
   every DAG edge to a lower id (the closure pass reads those rows first). */
static bool check_scc(const nav_mesh *m, uint32_t ndag) {
    if (m->nscc == 0 || m->nscc > m->npolys)
        return false;
    for (uint32_t p = 0; p < m->npolys; p++)
        if (m->scc[p] >= m->nscc)
            return false;
    if (m->scc_dag_start[0] != 0 || m->scc_dag_start[m->nscc] != ndag)
        return false;
    /* every start within the DAG before any row is read: a monotone pair
       check alone lets a row run past ndag and come back down after it */
    for (uint32_t s = 0; s < m->nscc; s++)
        if (m->scc_dag_start[s + 1] < m->scc_dag_start[s] || m->scc_dag_start[s + 1] > ndag)
            return false;
    for (uint32_t s = 0; s < m->nscc; s++) {
        for (uint32_t k = m->scc_dag_start[s]; k < m->scc_dag_start[s + 1]; k++)
            if (m->scc_dag[k] >= s)
                return false;
    }
    return true;
}

static uint32_t subtree_size(const nav_bvh_node *n) {
    return n->index >= 0 ? 1 : n->index == INT32_MIN ? 0 : (uint32_t)(-n->index);
}

/* The tree the build makes: every internal node has two children, the left
   right after it and the right after the left's subtree, and its escape is
   one plus both subtrees' sizes; each polygon is one leaf. Every walk then
   moves forward and ends. The boxes are derived bottom-up (children come
   after their parent) from the polygons' boxes: the build's own unions. */
static bool derive_bvh(nav_mesh *m) {
    if (m->nbvh != 2 * (size_t)m->npolys - 1)
        return false;
    uint8_t *seen = calloc(m->npolys, 1);
    if (!seen)
        return false;
    bool ok = true;
    uint32_t leaves = 0;
    for (uint32_t i = m->nbvh; ok && i-- > 0;) {
        nav_bvh_node *n = &m->bvh[i];
        if (n->index >= 0) {
            uint32_t p = (uint32_t)n->index;
            ok = p < m->npolys && !seen[p];
            if (ok) {
                seen[p] = 1;
                leaves++;
                memcpy(n->bmin, &m->poly_bounds[6 * (size_t)p], sizeof n->bmin);
                memcpy(n->bmax, &m->poly_bounds[6 * (size_t)p + 3], sizeof n->bmax);
            }
            continue;
        }
        uint32_t esc = subtree_size(n);
        /* the left child is i + 1, the right one after the left's subtree */
        ok = esc >= 3 && esc <= m->nbvh - i;
        uint32_t l = i + 1, lsize = ok ? subtree_size(&m->bvh[l]) : 0;
        ok = ok && lsize >= 1 && lsize <= esc - 2;
        uint32_t r = l + lsize, rsize = ok ? subtree_size(&m->bvh[r]) : 0;
        ok = ok && 1 + lsize + rsize == esc;
        for (int a = 0; ok && a < 3; a++) {
            const nav_bvh_node *L = &m->bvh[l], *R = &m->bvh[r];
            n->bmin[a] = L->bmin[a] < R->bmin[a] ? L->bmin[a] : R->bmin[a];
            n->bmax[a] = L->bmax[a] > R->bmax[a] ? L->bmax[a] : R->bmax[a];
        }
    }
    free(seen);
    /* the root spans the whole tree, so no polygon sits outside it */
    return ok && leaves == m->npolys && subtree_size(&m->bvh[0]) == m->nbvh;
}

/* ---- assembly ---- */

/* Bytes nav_mesh_alloc would have tallied for n elements of size. */
static size_t tally(size_t n, size_t size) {
    return (n ? n : 1) * size;
}

/* Moves the parsed input arrays into the mesh (they are the built arrays:
   a blob stores the mesh's own), tallied as the build tallies its copies. */
static nav_status adopt_input(nav_mesh_ext *x, nav_mesh_input *in) {
    nav_mesh *m = &x->m;
    size_t nidx = in->poly_start[in->npolys];
    m->nverts = in->nverts;
    m->npolys = in->npolys;
    m->verts = (float *)in->verts;
    m->poly_start = (uint32_t *)in->poly_start;
    m->poly_verts = (uint32_t *)in->poly_verts;
    m->areas = (uint8_t *)in->areas;
    x->link_in = (nav_link_input *)in->links;
    m->nlinks = in->nlinks;
    m->detail_verts = (float *)in->detail_verts;
    m->detail_tris = (uint32_t *)in->detail_tris;
    m->detail_poly_tris = (uint32_t *)in->detail_poly_tris;
    if (m->detail_poly_tris) {
        m->ndetail_verts = in->ndetail_verts;
        m->ndetail_tris = in->ndetail_tris;
    }
    memset(in, 0, sizeof *in);
    x->memory += tally((size_t)m->nverts * 3, sizeof(float)) +
                 tally((size_t)m->npolys + 1, sizeof(uint32_t)) + tally(nidx, sizeof(uint32_t)) +
                 tally(m->npolys, 1) + tally(m->nlinks, sizeof(nav_link_input));
    if (m->detail_poly_tris) {
        /* nav_mesh_check_input has checked these against the counts */
        x->memory += tally((size_t)m->ndetail_verts * 3, sizeof(float)) +
                     tally((size_t)m->ndetail_tris * 3, sizeof(uint32_t)) +
                     tally((size_t)m->npolys * 2, sizeof(uint32_t));
    }
    for (uint32_t p = 0; p < m->npolys; p++)
        m->area_mask |= 1ull << m->areas[p];
    m->poly_corner = nav_mesh_alloc_raw(x, nidx, sizeof *m->poly_corner);
    m->poly_open = nav_mesh_alloc_raw(x, m->npolys, sizeof *m->poly_open);
    m->links = nav_mesh_alloc(x, m->nlinks, sizeof *m->links);
    if (!m->poly_corner || !m->poly_open || !m->links)
        return NAV_E_NOMEM;
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const nav_link_input *li = &x->link_in[i];
        nav_link *l = &m->links[i];
        memcpy(l->start, li->start, sizeof l->start);
        memcpy(l->end, li->end, sizeof l->end);
        l->radius = li->radius;
        l->area = li->area;
        l->bidirectional = li->bidirectional;
        memcpy(l->kind, li->kind, sizeof l->kind);
        m->link_area_mask |= 1ull << (li->area & 63u);
    }
    return NAV_OK;
}

/* Reads the section into m; false when it is short or its counts are. */
static bool read_section(nav_snap_r *r, nav_mesh_ext *x, uint32_t *ndag) {
    nav_mesh *m = &x->m;
    size_t nidx = m->poly_start[m->npolys];
    m->ncomponents = get_u32(r);
    m->nscc = get_u32(r);
    *ndag = get_u32(r);
    m->nbvh = get_u32(r);
    /* nav_contains_reach's maximum (its slack over the sharpest corner's
       sine): stored, as it takes trigonometry per corner; capped at 1 m */
    m->contains_margin = get_f32(r);
    if (!(m->contains_margin >= 0 && m->contains_margin <= 1))
        return false;
    m->poly_nei = get_u32s(r, x, nidx);
    size_t bits = (nidx + 7) / 8;
    if (r->bad || bits > r->len - r->pos)
        return false;
    for (size_t i = 0; i < nidx; i++)
        m->poly_corner[i] = (r->p[r->pos + i / 8] >> (i % 8)) & 1u;
    r->pos += bits;
    if ((size_t)m->nlinks > (r->len - r->pos) / 32)
        return false;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        nav_link *k = &m->links[l];
        k->start_poly = get_u32(r);
        k->end_poly = get_u32(r);
        for (int a = 0; a < 3; a++)
            k->start_on[a] = get_f32(r);
        for (int a = 0; a < 3; a++)
            k->end_on[a] = get_f32(r);
    }
    m->component = get_u32s(r, x, m->npolys);
    m->scc = get_u32s(r, x, m->npolys);
    m->scc_dag_start = get_u32s(r, x, (size_t)m->nscc + 1);
    m->scc_dag = get_u32s(r, x, *ndag);
    if (r->bad || m->nbvh > (r->len - r->pos) / 4)
        return false;
    m->bvh = nav_mesh_alloc_raw(x, m->nbvh, sizeof *m->bvh);
    if (!m->bvh)
        return false;
    for (uint32_t i = 0; i < m->nbvh; i++)
        m->bvh[i].index = (int32_t)get_u32(r);
    return !r->bad && r->pos == r->len;
}

static bool derive(nav_mesh_ext *x) {
    nav_mesh *m = &x->m;
    for (uint32_t p = 0; p < m->npolys; p++) {
        uint32_t open = 0;
        for (uint32_t k = m->poly_start[p]; k < m->poly_start[p + 1]; k++)
            open += m->poly_nei[k] != NAV_NONE;
        m->poly_open[p] = (uint8_t)(open < 255 ? open : 255);
    }
    return nav_mesh_geometry(x, false) == NAV_OK && nav_height_accel_build(x) == NAV_OK &&
           nav_mesh_link_lists(x) == NAV_OK && nav_mesh_scc_closure(x) == NAV_OK;
}

static void free_input(nav_mesh_input *in) {
    free((void *)in->verts);
    free((void *)in->poly_start);
    free((void *)in->poly_verts);
    free((void *)in->areas);
    free((void *)in->links);
    free((void *)in->detail_verts);
    free((void *)in->detail_tris);
    free((void *)in->detail_poly_tris);
    memset(in, 0, sizeof *in);
}

nav_status nav_snapshot_load(nav_mesh_input *in, const uint8_t *p, size_t len, nav_mesh **out,
                             nav_error *err) {
    *out = NULL;
    nav_error ierr;
    if (nav_mesh_check_input(in, &ierr) != NAV_OK) {
        free_input(in);
        return nav_set_error(err, NAV_E_CORRUPT, "the navmesh blob's mesh is invalid: %s",
                             ierr.message);
    }
    nav_mesh_ext *x = calloc(1, sizeof *x);
    if (!x) {
        free_input(in);
        return nav_set_error(err, NAV_E_NOMEM, "out of memory loading the navmesh");
    }
    x->memory = sizeof *x;
    nav_mesh *m = &x->m;
    nav_status st = adopt_input(x, in);
    if (st == NAV_OK) {
        nav_snap_r r = {p, len, 0, false};
        uint32_t ndag = 0;
        if (!read_section(&r, x, &ndag) || !check_shapes(m) || !derive_twins(x) ||
            !check_links(m) || !check_components(m) || !check_scc(m, ndag))
            st = NAV_E_CORRUPT;
    }
    if (st == NAV_OK && !derive(x))
        st = NAV_E_NOMEM;
    if (st == NAV_OK && !derive_bvh(m))
        st = NAV_E_CORRUPT;
    if (st != NAV_OK) {
        nav_mesh_free(m);
        if (st == NAV_E_NOMEM)
            return nav_set_error(err, st, "out of memory loading the navmesh");
        return nav_set_error(err, st, "the navmesh blob's built structures are inconsistent");
    }
    m->uid = nav_mesh_next_uid();
    *out = m;
    return NAV_OK;
}
