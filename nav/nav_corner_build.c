/*
 * nav_corner_build: builds a mesh's corner graph (nav_corner.h): the
 * corners (one per fan of polygons around a vertex whose walkable angle
 * exceeds 180 degrees, as nav_optimal_corners flags them), the link nodes,
 * and the edges, by one visibility walk from every node.
 *
 * The walks are independent (each reads the finished mesh and writes only
 * its node's edges), so they run on threads: nodes are taken in chunks
 * from a shared counter, each chunk keeps its own edge list, and the lists
 * are joined in node order. The graph is the same whatever the thread
 * count; so is the decision to give up (the limits are monotone in the
 * total work and edge count, so checking the totals is checking what a
 * serial build checks after each node).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner_internal.h"

#define CB_MAX_FAN 256 /* fan walk guard, as the interval search's */
/* Total cones a build may expand before it gives up (no graph): bounds the
   time a pathological mesh (huge open areas full of corners) can take. */
#define CB_MAX_WORK 400000000u

static uint32_t cb_local(const nav_mesh *m, uint32_t p, uint32_t v) {
    uint32_t s = m->poly_start[p], n = nav_poly_nverts(m, p);
    for (uint32_t k = 0; k < n; k++)
        if (m->poly_verts[s + k] == v)
            return k;
    return n;
}

/*
 * Gives every polygon corner of the fan of (p, k) the node id `id`, and
 * returns the far ends of the fan's two wall edges in wall[4]: walking one
 * way across the edges leaving v to the wall, then the other way across the
 * edges entering v. 0 when the fan has no wall both ways (not a corner).
 */
static int cb_fan(const nav_mesh *m, uint32_t *corner_of, uint32_t p, uint32_t k, uint32_t id,
                  double wall[4]) {
    uint32_t v = m->poly_verts[m->poly_start[p] + k];
    int found = 0;
    for (int dir = 0; dir < 2; dir++) {
        uint32_t cur = p, kk = k;
        for (int i = 0; i < CB_MAX_FAN; i++) {
            uint32_t s = m->poly_start[cur], n = nav_poly_nverts(m, cur);
            if (corner_of[s + kk] == NAV_NONE)
                corner_of[s + kk] = id;
            /* dir 0: the edge leaving v (v -> next); dir 1: entering (prev -> v) */
            uint32_t e = dir == 0 ? kk : (kk + n - 1) % n;
            uint32_t nb = m->poly_nei[s + e];
            uint32_t j = nb == NAV_NONE ? 0 : cb_local(m, nb, v);
            if (nb == NAV_NONE || j == nav_poly_nverts(m, nb)) {
                const float *w = nav_poly_vert(m, cur, dir == 0 ? kk + 1 : kk + n - 1);
                wall[2 * dir] = w[0];
                wall[2 * dir + 1] = w[2];
                found++;
                break;
            }
            if (nb == p)
                break;
            cur = nb;
            kk = j;
        }
    }
    return found == 2;
}

typedef struct cb_state {
    const nav_mesh *m;
    nav_cgraph *g;
    uint32_t root;
    double rx, rz;
    uint32_t *stamp, gen;
    uint32_t *seen;
    uint32_t nseen;
} cb_state;

/* Node id, at (x, z) in the polygon the cone entered, is in sight unless it
   is the root's own place. in_sight: what nav_cone_sees says of it, or -1
   (ask the cone). */
static inline void cb_see(cb_state *b, uint32_t id, const nav_cone *c, int in_sight) {
    if (in_sight == 0 || id == b->root || b->stamp[id] == b->gen)
        return;
    double x = b->g->xz[2 * (size_t)id], z = b->g->xz[2 * (size_t)id + 1];
    if ((x == b->rx && z == b->rz) || !(in_sight < 0 ? nav_cone_sees(c, x, z) : in_sight))
        return;
    b->stamp[id] = b->gen;
    b->seen[b->nseen++] = id;
}

/* q: a piece of the walk mesh. A corner is a vertex of q at its own place
   (the walk mesh shares the mesh's vertices), so the walk's seen bits say
   whether the cone sees it without the two orientations. */
static int cb_collect(void *ctx, uint32_t q, const nav_cone *c, uint64_t seen) {
    cb_state *b = ctx;
    const nav_cgraph *g = b->g;
    const nav_mesh *w = g->wm;
    uint32_t s = w->poly_start[q], n = nav_poly_nverts(w, q);
    for (uint32_t k = 0; k < n; k++)
        if (g->wcorner_of[s + k] != NAV_NONE)
            cb_see(b, g->wcorner_of[s + k], c,
                   seen == NAV_CW_SEEN_ALL ? -1 : (int)((seen >> k) & 1u));
    for (uint32_t i = g->wpts_start[q]; i < g->wpts_start[q + 1]; i++)
        cb_see(b, g->wpts[i], c, -1);
    return 0;
}

/* Corners: ids, positions, wall ends and a polygon of each fan. */
static nav_status cb_corners(const nav_mesh *m, nav_cgraph *g) {
    uint32_t slots = m->poly_start[m->npolys], cap = 0;
    g->corner_of = malloc((size_t)slots * sizeof *g->corner_of + 1);
    if (!g->corner_of)
        return NAV_E_NOMEM;
    for (uint32_t i = 0; i < slots; i++)
        g->corner_of[i] = NAV_NONE;
    for (uint32_t p = 0; p < m->npolys; p++)
        for (uint32_t k = 0; k < nav_poly_nverts(m, p); k++) {
            uint32_t slot = m->poly_start[p] + k;
            if (!m->poly_corner[slot] || g->corner_of[slot] != NAV_NONE)
                continue;
            if (g->ncorners == cap) {
                cap = cap ? 2 * cap : 1024;
                double *xz = realloc(g->xz, (size_t)cap * 2 * sizeof *xz);
                if (xz)
                    g->xz = xz;
                double *wall = realloc(g->wall, (size_t)cap * 4 * sizeof *wall);
                if (wall)
                    g->wall = wall;
                uint32_t *poly = realloc(g->poly, (size_t)cap * sizeof *poly);
                if (poly)
                    g->poly = poly;
                if (!xz || !wall || !poly)
                    return NAV_E_NOMEM;
            }
            uint32_t id = g->ncorners;
            if (!cb_fan(m, g->corner_of, p, k, id, &g->wall[4 * (size_t)id])) {
                /* no wall both ways (a fan past the walk guard): not a node */
                for (uint32_t i = 0; i < slots; i++)
                    if (g->corner_of[i] == id)
                        g->corner_of[i] = NAV_NONE;
                continue;
            }
            const float *v = nav_poly_vert(m, p, k);
            g->xz[2 * (size_t)id] = v[0];
            g->xz[2 * (size_t)id + 1] = v[2];
            g->poly[id] = p;
            g->ncorners++;
        }
    return NAV_OK;
}

/* Link nodes after the corners, and each polygon's list of them. */
static nav_status cb_links(const nav_mesh *m, nav_cgraph *g) {
    g->nnodes = g->ncorners + 2 * m->nlinks;
    size_t nn = (size_t)g->nnodes + 1;
    double *xz = realloc(g->xz, nn * 2 * sizeof *xz);
    if (xz)
        g->xz = xz;
    uint32_t *poly = realloc(g->poly, nn * sizeof *poly);
    if (poly)
        g->poly = poly;
    g->y = malloc(nn * sizeof *g->y);
    g->pts_start = calloc((size_t)m->npolys + 1, sizeof *g->pts_start);
    g->pts = malloc((2 * (size_t)m->nlinks + 1) * sizeof *g->pts);
    if (!xz || !poly || !g->y || !g->pts_start || !g->pts)
        return NAV_E_NOMEM;
    for (uint32_t c = 0; c < g->ncorners; c++) {
        float y = 0;
        nav_mesh_height(m, g->poly[c], (float)g->xz[2 * c], (float)g->xz[2 * c + 1], &y);
        g->y[c] = y;
    }
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *lk = &m->links[l];
        int usable = lk->start_poly != NAV_NONE && lk->end_poly != NAV_NONE;
        for (int e = 0; e < 2; e++) {
            uint32_t id = g->ncorners + 2 * l + (uint32_t)e;
            const float *on = e ? lk->end_on : lk->start_on;
            g->xz[2 * (size_t)id] = on[0];
            g->xz[2 * (size_t)id + 1] = on[2];
            g->y[id] = on[1];
            g->poly[id] = usable ? (e ? lk->end_poly : lk->start_poly) : NAV_NONE;
            if (usable)
                g->pts_start[g->poly[id] + 1]++;
        }
    }
    for (uint32_t p = 0; p < m->npolys; p++)
        g->pts_start[p + 1] += g->pts_start[p];
    uint32_t *fill = calloc((size_t)m->npolys + 1, sizeof *fill);
    if (!fill)
        return NAV_E_NOMEM;
    for (uint32_t id = g->ncorners; id < g->nnodes; id++)
        if (g->poly[id] != NAV_NONE)
            g->pts[g->pts_start[g->poly[id]] + fill[g->poly[id]]++] = id;
    free(fill);
    return NAV_OK;
}

/* Side of the line u -> (x, z) the obstacle at corner u lies on: < 0, > 0,
   or 0 when both wall ends lie on the line. */
static double cb_class(const nav_cgraph *g, uint32_t u, double x, double z) {
    const double *w = &g->wall[4 * (size_t)u];
    double ux = g->xz[2 * (size_t)u], uz = g->xz[2 * (size_t)u + 1];
    return nav_corner_side(ux, uz, x, z, w[0], w[1]) + nav_corner_side(ux, uz, x, z, w[2], w[3]);
}

/* One chunk of nodes' edges, offsets local to the chunk until joined. */
typedef struct cb_chunk {
    nav_cedge *adj;
    uint32_t n, cap;
} cb_chunk;

static int cb_put(const nav_cgraph *g, cb_chunk *ch, uint32_t d) {
    if (ch->n == ch->cap) {
        size_t ncap = ch->cap ? 2 * (size_t)ch->cap : 256;
        if (ncap > UINT32_MAX || ncap * sizeof *ch->adj > NAV_CORNER_MAX_BYTES)
            return 0;
        nav_cedge *t = realloc(ch->adj, ncap * sizeof *t);
        if (!t)
            return 0;
        ch->adj = t;
        ch->cap = (uint32_t)ncap;
    }
    nav_cedge *e = &ch->adj[ch->n++];
    e->to = d;
    return 1;
}

/* Appends u's edges: the nodes in sight, tangent at each corner end; a
   corner's in two halves by the side its obstacle is on (adj_mid). */
static int cb_edges(cb_state *b, cb_chunk *ch, uint32_t u) {
    nav_cgraph *g = b->g;
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->nseen; i++) {
        uint32_t d = b->seen[i];
        if (u < g->ncorners && !nav_corner_tangent(g, u, g->xz[2 * d], g->xz[2 * d + 1]))
            continue;
        if (d < g->ncorners && !nav_corner_tangent(g, d, b->rx, b->rz))
            continue;
        b->seen[n++] = d;
    }
    for (int half = 0; half < 2; half++) {
        if (half == 1)
            g->adj_mid[u] = ch->n;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = b->seen[i];
            double c = u < g->ncorners ? cb_class(g, u, g->xz[2 * d], g->xz[2 * d + 1]) : 0;
            if (u >= g->ncorners ? half == 1 : (half == 0 ? c > 0 : c < 0))
                continue;
            if (!cb_put(g, ch, d))
                return 0;
        }
    }
    return 1;
}

/* Whether g's edge targets fit 16 bits (then the search reads adj16). */
static int cb_narrow(const nav_cgraph *g) {
    return g->nnodes <= 65536;
}

static size_t cb_memory(const nav_mesh *m, const nav_cgraph *g, uint64_t nedges) {
    size_t nn = (size_t)g->nnodes + 1;
    return sizeof *g + nn * (2 * sizeof(double) + sizeof(float) + 3 * sizeof(uint32_t)) +
           nn * (sizeof(nav_cnode) + 2 * sizeof(float)) + (size_t)g->ncorners * 4 * sizeof(double) +
           ((size_t)m->poly_start[m->npolys] + m->npolys + 1 + 2 * (size_t)m->nlinks + 1) *
               sizeof(uint32_t) +
           (size_t)nedges * (sizeof(nav_cedge) + (cb_narrow(g) ? sizeof(uint16_t) : 0)) +
           nav_corner_merge_memory(g) + nav_corner_table_memory(g);
}

/* Whether a graph of `nedges` edges is within the limits: the edge array
   as it grew by doubling from 4,096 and the graph's bytes. */
static int cb_fits(const nav_mesh *m, const nav_cgraph *g, uint64_t nedges) {
    uint64_t cap = 4096;
    while (nedges > 0 && cap < nedges)
        cap *= 2;
    if (nedges > 0 && (cap > UINT32_MAX || cap * sizeof(nav_cedge) > NAV_CORNER_MAX_BYTES))
        return 0;
    return cb_memory(m, g, nedges) <= NAV_CORNER_MAX_BYTES;
}

#define CB_CHUNK 64 /* nodes per unit of work */

enum { CB_GO = 0, CB_TOO_BIG = 1, CB_NOMEM = 2 };

typedef struct cb_job {
    const nav_mesh *m;
    nav_cgraph *g;
    cb_chunk *chunks;
    uint32_t nchunks;
    atomic_uint next;
    atomic_uint_fast64_t edges; /* found so far, to give up early */
    atomic_uint_fast64_t work;  /* cones expanded, summed at each thread's end */
    atomic_int stop;
} cb_job;

static void cb_stop(cb_job *j, int why) {
    int cur = CB_GO;
    atomic_compare_exchange_strong(&j->stop, &cur, why);
    if (why == CB_NOMEM)
        atomic_store(&j->stop, CB_NOMEM);
}

static void *cb_worker(void *arg) {
    cb_job *j = arg;
    nav_cgraph *g = j->g;
    cb_state b = {.m = j->m, .g = g};
    nav_cwalk w = {0};
    uint32_t work = 0;
    b.stamp = calloc((size_t)g->nnodes + 1, sizeof *b.stamp);
    b.seen = malloc(((size_t)g->nnodes + 1) * sizeof *b.seen);
    if (!b.stamp || !b.seen)
        cb_stop(j, CB_NOMEM);
    while (atomic_load(&j->stop) == CB_GO) {
        uint32_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks)
            break;
        cb_chunk *ch = &j->chunks[c];
        uint32_t u1 = (c + 1) * CB_CHUNK < g->nnodes ? (c + 1) * CB_CHUNK : g->nnodes;
        for (uint32_t u = c * CB_CHUNK; u < u1 && atomic_load(&j->stop) == CB_GO; u++) {
            g->adj_start[u] = g->adj_mid[u] = ch->n;
            if (g->poly[u] == NAV_NONE)
                continue;
            b.root = u;
            b.rx = g->xz[2 * (size_t)u];
            b.rz = g->xz[2 * (size_t)u + 1];
            b.gen++;
            b.nseen = 0;
            uint32_t before = ch->n;
            int r = nav_cwalk_run(&w, g->wm, b.rx, b.rz, g->wpoly[u], u < g->ncorners, CB_MAX_WORK,
                                  cb_collect, &b, &work);
            if (r == NAV_CW_NOMEM)
                cb_stop(j, CB_NOMEM);
            else if (r == NAV_CW_LIMIT || !cb_edges(&b, ch, u))
                cb_stop(j, CB_TOO_BIG);
            else if (!cb_fits(j->m, g,
                              atomic_fetch_add(&j->edges, ch->n - before) + ch->n - before))
                cb_stop(j, CB_TOO_BIG);
        }
    }
    atomic_fetch_add(&j->work, work);
    nav_cwalk_free(&w);
    free(b.stamp);
    free(b.seen);
    return NULL;
}

/* The walks of every node on `threads` threads, then the edge lists
   joined into g->adj in node order. */
static nav_status cb_all_edges(const nav_mesh *m, nav_cgraph *g, uint32_t threads, int *too_big) {
    cb_job j = {.m = m, .g = g};
    j.nchunks = (g->nnodes + CB_CHUNK - 1) / CB_CHUNK;
    j.chunks = calloc((size_t)j.nchunks + 1, sizeof *j.chunks);
    if (!j.chunks)
        return NAV_E_NOMEM;
    atomic_init(&j.next, 0);
    atomic_init(&j.edges, 0);
    atomic_init(&j.work, 0);
    atomic_init(&j.stop, CB_GO);
    uint32_t nth = threads > j.nchunks ? j.nchunks : threads;
    nth = nth > 64 ? 64 : nth < 1 ? 1 : nth;
    pthread_t th[64];
    uint32_t started = 0;
    for (uint32_t i = 1; i < nth; i++)
        if (pthread_create(&th[started], NULL, cb_worker, &j) == 0)
            started++;
    cb_worker(&j);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    nav_status st = NAV_OK;
    uint64_t total = 0;
    for (uint32_t c = 0; c < j.nchunks; c++)
        total += j.chunks[c].n;
    int stop = atomic_load(&j.stop);
    if (stop == CB_NOMEM)
        st = NAV_E_NOMEM;
    else if (stop == CB_TOO_BIG || atomic_load(&j.work) > CB_MAX_WORK || !cb_fits(m, g, total))
        *too_big = 1;
    if (st == NAV_OK && !*too_big) {
        g->adj = malloc((size_t)(total ? total : 1) * sizeof *g->adj);
        if (!g->adj)
            st = NAV_E_NOMEM;
    }
    if (st == NAV_OK && !*too_big) {
        uint32_t off = 0;
        for (uint32_t c = 0; c < j.nchunks; c++) {
            uint32_t u1 = (c + 1) * CB_CHUNK < g->nnodes ? (c + 1) * CB_CHUNK : g->nnodes;
            for (uint32_t u = c * CB_CHUNK; u < u1; u++) {
                g->adj_start[u] += off;
                g->adj_mid[u] += off;
            }
            if (j.chunks[c].n)
                memcpy(&g->adj[off], j.chunks[c].adj, j.chunks[c].n * sizeof *g->adj);
            off += j.chunks[c].n;
        }
        g->adj_start[g->nnodes] = off;
        g->nedges = total;
    }
    for (uint32_t c = 0; c < j.nchunks; c++)
        free(j.chunks[c].adj);
    free(j.chunks);
    return st;
}

/* The search's per-node records (nav_cnode) and float positions, from the
   arrays. */
static nav_status cb_pack(nav_cgraph *g) {
    size_t bytes = (((size_t)g->nnodes + 1) * sizeof(nav_cnode) + 63) / 64 * 64;
    g->node = aligned_alloc(64, bytes);
    g->fxz = malloc(((size_t)g->nnodes + 1) * 2 * sizeof *g->fxz);
    if (!g->node || !g->fxz)
        return NAV_E_NOMEM;
    if (cb_narrow(g)) {
        g->adj16 = malloc((g->nedges ? g->nedges : 1) * sizeof *g->adj16);
        if (!g->adj16)
            return NAV_E_NOMEM;
        for (uint64_t i = 0; i < g->nedges; i++)
            g->adj16[i] = (uint16_t)g->adj[i].to;
    }
    for (uint32_t u = 0; u <= g->nnodes; u++) {
        nav_cnode *n = &g->node[u];
        memset(n, 0, sizeof *n);
        n->adj_start = g->adj_start[u];
        if (u == g->nnodes)
            break; /* the sentinel: only the last node's edge end */
        n->x = (float)g->xz[2 * (size_t)u];
        n->z = (float)g->xz[2 * (size_t)u + 1];
        for (int k = 0; k < 4 && u < g->ncorners; k++)
            n->wall[k] = (float)g->wall[4 * (size_t)u + k];
        n->adj_mid = g->adj_mid[u];
        g->fxz[2 * (size_t)u] = n->x;
        g->fxz[2 * (size_t)u + 1] = n->z;
    }
    return NAV_OK;
}

nav_status nav_corner_build(nav_mesh *m) {
    return nav_corner_build_mt(m, 1);
}

nav_status nav_corner_build_mt(nav_mesh *m, uint32_t threads) {
    m->cgraph = NULL;
    nav_cgraph *g = calloc(1, sizeof *g);
    if (!g)
        return NAV_E_NOMEM;
    nav_status st = cb_corners(m, g);
    if (st == NAV_OK)
        st = cb_links(m, g);
    if (st == NAV_OK)
        st = nav_corner_merge(m, g);
    if (st == NAV_OK) {
        g->adj_start = malloc(((size_t)g->nnodes + 1) * sizeof *g->adj_start);
        g->adj_mid = malloc(((size_t)g->nnodes + 1) * sizeof *g->adj_mid);
        if (!g->adj_start || !g->adj_mid)
            st = NAV_E_NOMEM;
    }
    int too_big = 0;
    if (st == NAV_OK)
        st = cb_all_edges(m, g, threads, &too_big);
    if (st == NAV_OK && !too_big)
        st = cb_pack(g);
    if (st == NAV_OK && !too_big)
        st = nav_corner_table_build(m, g);
    if (st != NAV_OK || too_big) {
        nav_corner_free(g);
        return st;
    }
    g->memory = cb_memory(m, g, g->nedges);
    m->cgraph = g;
    return NAV_OK;
}

void nav_corner_free(nav_cgraph *g) {
    if (!g)
        return;
    free(g->xz);
    free(g->y);
    free(g->poly);
    free(g->wall);
    free(g->corner_of);
    free(g->pts_start);
    free(g->pts);
    free(g->adj_start);
    free(g->adj_mid);
    free(g->adj);
    free(g->adj16);
    free(g->node);
    free(g->fxz);
    nav_corner_table_free(g);
    nav_corner_merge_free(g);
    free(g);
}

size_t nav_corner_memory(const nav_cgraph *g) {
    return g ? g->memory : 0;
}

uint32_t nav_corner_node_count(const nav_cgraph *g) {
    return g ? g->nnodes : 0;
}

uint64_t nav_corner_edge_count(const nav_cgraph *g) {
    return g ? g->nedges : 0;
}

/* ---- stored form ---- */

size_t nav_corner_save(const nav_cgraph *g, uint8_t *out) {
    size_t at = 0;
    nav_corner_put_u32(out, &at, g ? 1 : 0);
    if (!g)
        return at;
    nav_corner_put_u32(out, &at, g->ncorners);
    nav_corner_put_u32(out, &at, g->nnodes);
    for (uint32_t u = 0; u <= g->nnodes; u++)
        nav_corner_put_u32(out, &at, g->adj_start[u]);
    for (uint32_t u = 0; u < g->nnodes; u++)
        nav_corner_put_u32(out, &at, g->adj_mid[u]);
    for (uint64_t i = 0; i < g->nedges; i++)
        nav_corner_put_u32(out, &at, g->adj[i].to);
    nav_corner_merge_save(g, out, &at);
    return at;
}

nav_status nav_corner_load(nav_mesh *m, const uint8_t *p, size_t len, uint32_t format) {
    m->cgraph = NULL;
    if (len < 4 || len % 4 != 0 || format < 1 || format > 2)
        return NAV_E_CORRUPT;
    if (nav_corner_get_u32(p) == 0)
        return len == 4 ? NAV_OK : NAV_E_CORRUPT; /* stored as too large to build */
    if (len < 12)
        return NAV_E_CORRUPT;
    uint32_t nc = nav_corner_get_u32(p + 4), nn = nav_corner_get_u32(p + 8);
    size_t words = len / 4 - 3;
    if ((size_t)nn * 2 + 1 > words)
        return NAV_E_CORRUPT;
    const uint8_t *starts = p + 12, *mids = starts + 4 * ((size_t)nn + 1);
    const uint8_t *targets = mids + 4 * (size_t)nn;
    uint64_t ne = words - ((size_t)nn * 2 + 1);
    const uint8_t *walk = NULL; /* format 2: the merge's result after the edges */
    size_t walk_len = 0;
    if (format == 2) {
        uint32_t stored = nav_corner_get_u32(starts + 4 * (size_t)nn);
        if (stored > ne)
            return NAV_E_CORRUPT;
        walk = targets + 4 * (size_t)stored;
        walk_len = 4 * (ne - stored);
        ne = stored;
    }
    nav_cgraph *g = calloc(1, sizeof *g);
    if (!g)
        return NAV_E_NOMEM;
    /* the nodes are recomputed (cheap), and must be the ones stored; the
       walk mesh is read back when stored and sound, else merged again */
    nav_status st = cb_corners(m, g);
    if (st == NAV_OK)
        st = cb_links(m, g);
    if (st == NAV_OK && walk)
        st = nav_corner_merge_load(m, g, walk, walk_len);
    if (st == NAV_E_CORRUPT || (st == NAV_OK && !walk))
        st = nav_corner_merge(m, g);
    if (st == NAV_OK && (g->ncorners != nc || g->nnodes != nn))
        st = NAV_E_CORRUPT;
    if (st == NAV_OK) {
        g->adj_start = malloc(((size_t)nn + 1) * sizeof *g->adj_start);
        g->adj_mid = malloc(((size_t)nn + 1) * sizeof *g->adj_mid);
        g->adj = malloc((ne ? ne : 1) * sizeof *g->adj);
        if (!g->adj_start || !g->adj_mid || !g->adj)
            st = NAV_E_NOMEM;
    }
    for (uint32_t u = 0; st == NAV_OK && u <= nn; u++) {
        g->adj_start[u] = nav_corner_get_u32(starts + 4 * (size_t)u);
        uint32_t mid = u < nn ? nav_corner_get_u32(mids + 4 * (size_t)u) : 0;
        if ((u == 0 && g->adj_start[0] != 0) || (u > 0 && g->adj_start[u] < g->adj_start[u - 1]))
            st = NAV_E_CORRUPT;
        if (u > 0) {
            uint32_t mprev = g->adj_mid[u - 1];
            if (mprev < g->adj_start[u - 1] || mprev > g->adj_start[u])
                st = NAV_E_CORRUPT;
        }
        g->adj_mid[u] = mid;
    }
    if (st == NAV_OK && g->adj_start[nn] != ne)
        st = NAV_E_CORRUPT;
    for (uint64_t i = 0; st == NAV_OK && i < ne; i++) {
        uint32_t d = nav_corner_get_u32(targets + 4 * i);
        if (d >= nn) {
            st = NAV_E_CORRUPT;
            break;
        }
        g->adj[i].to = d;
    }
    g->nedges = ne;
    if (st == NAV_OK)
        st = cb_pack(g);
    if (st == NAV_OK)
        st = nav_corner_table_build(m, g);
    if (st != NAV_OK) {
        nav_corner_free(g);
        return st;
    }
    g->memory = cb_memory(m, g, g->nedges);
    m->cgraph = g;
    return NAV_OK;
}
