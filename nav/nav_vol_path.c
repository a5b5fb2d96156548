/*
 * nav_vol_path: any-angle path search on a flight volume (Lazy Theta*,
 * Nash, Koenig & Tovey 2010) over the volume's two-level grid.
 *
 * The graph's nodes are whole free bricks (at their centres) and the free
 * voxels of mixed bricks (at theirs), plus the start and end points joined
 * to the node that holds them. Neighbours are the 26 around a voxel, or
 * every brick and voxel touching a brick. An edge is kept only when its
 * segment is free: face neighbours between voxels always are; diagonal
 * ones need the voxels around the shared edge or corner free; edges to and
 * from bricks are tested by line of sight.
 *
 * Lazy Theta* gives each node generated from s the parent of s, assuming
 * line of sight, and checks it only when the node is expanded; when the
 * check fails the node falls back to its best expanded graph neighbour
 * (kept while relaxing, so no second neighbour walk is needed). A final
 * pass drops every corner the previous kept corner can see past (heading
 * for the last visible point), then pulls the rest taut (tauten). The
 * scratch (node pool, hash, heap) belongs to a nav_vol_query and is reset,
 * not reallocated, per search; the hash is used from a cache-sized prefix
 * that grows only as far as the search does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_vol_internal.h"

#define ID_START 0xFFFFFFFEu
#define ID_GOAL 0xFFFFFFFDu
#define ID_BRICK 64u
#define NODE_NONE UINT32_MAX
#define HEAP_CLOSED UINT32_MAX
#define HEAP_NEW (UINT32_MAX - 1)
#define MAX_NEIGHBOURS 160

typedef struct vnode {
    uint32_t id;
    uint32_t parent, gp; /* pool indices: any-angle parent, best expanded graph neighbour */
    uint32_t heap;       /* position in the heap, HEAP_CLOSED or HEAP_NEW */
    float g, gg, f;
    float pos[3];
} vnode;

typedef struct slot {
    uint32_t key, node, stamp;
} slot;

struct nav_vol_query {
    uint32_t cap; /* nodes in the pool */
    uint32_t used;
    vnode *nodes;
    uint32_t *heap;
    uint32_t nheap;
    slot *hash;
    uint32_t hmask, stamp;
    uint32_t hmax; /* slots allocated - 1; a search uses the first hmask + 1 */
};

/* Slots a search starts with: 192 KB, so a short search's lookups stay in cache. A table
   sized for the whole pool (2 slots per node, 24 MB at 2^20 nodes) made every lookup a
   cache miss: the hash probe was the search's largest cost. 16,384 slots hold the nodes
   of most weight-1.5 searches on the 256 m bench world without growing (4,096 and 8,192
   grew and were 8 % and 4 % slower there; 32,768 was no faster). */
#define HASH_START 16384u

nav_status nav_vol_query_new(uint32_t max_nodes, nav_vol_query **out) {
    if (!out)
        return NAV_E_INVALID_ARG;
    *out = NULL;
    if (max_nodes < 16 || max_nodes > (1u << 26))
        return NAV_E_INVALID_ARG;
    nav_vol_query *q = calloc(1, sizeof *q);
    if (!q)
        return NAV_E_NOMEM;
    uint32_t hs = 64;
    while (hs < max_nodes * 2u)
        hs <<= 1;
    q->cap = max_nodes;
    q->nodes = malloc((size_t)max_nodes * sizeof *q->nodes);
    q->heap = malloc((size_t)max_nodes * sizeof *q->heap);
    q->hash = calloc(hs, sizeof *q->hash);
    q->hmax = hs - 1;
    q->hmask = (hs < HASH_START ? hs : HASH_START) - 1;
    if (!q->nodes || !q->heap || !q->hash) {
        nav_vol_query_free(q);
        return NAV_E_NOMEM;
    }
    *out = q;
    return NAV_OK;
}

uint32_t nav_vol_query_budget(const nav_vol_query *q, uint32_t max_nodes) {
    return max_nodes && max_nodes < q->cap ? max_nodes : q->cap;
}

void nav_vol_query_free(nav_vol_query *q) {
    if (!q)
        return;
    free(q->nodes);
    free(q->heap);
    free(q->hash);
    free(q);
}

/* ---- heap on f (ties: larger g first, so the search runs deep) ---- */

static int node_less(const vnode *a, const vnode *b) {
    return a->f < b->f || (a->f == b->f && a->g > b->g);
}

static void heap_up(nav_vol_query *q, uint32_t i) {
    uint32_t n = q->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!node_less(&q->nodes[n], &q->nodes[q->heap[p]]))
            break;
        q->heap[i] = q->heap[p];
        q->nodes[q->heap[i]].heap = i;
        i = p;
    }
    q->heap[i] = n;
    q->nodes[n].heap = i;
}

static void heap_down(nav_vol_query *q, uint32_t i) {
    uint32_t n = q->heap[i];
    for (;;) {
        uint32_t l = 2 * i + 1, best = i;
        const vnode *bn = &q->nodes[n];
        if (l < q->nheap && node_less(&q->nodes[q->heap[l]], bn)) {
            best = l;
            bn = &q->nodes[q->heap[l]];
        }
        if (l + 1 < q->nheap && node_less(&q->nodes[q->heap[l + 1]], bn))
            best = l + 1;
        if (best == i)
            break;
        q->heap[i] = q->heap[best];
        q->nodes[q->heap[i]].heap = i;
        i = best;
    }
    q->heap[i] = n;
    q->nodes[n].heap = i;
}

static uint32_t heap_pop(nav_vol_query *q) {
    uint32_t top = q->heap[0];
    q->nheap--;
    if (q->nheap) {
        q->heap[0] = q->heap[q->nheap];
        heap_down(q, 0);
    }
    q->nodes[top].heap = HEAP_CLOSED;
    return top;
}

static void heap_push_or_update(nav_vol_query *q, uint32_t n) {
    if (q->nodes[n].heap == HEAP_NEW) {
        q->heap[q->nheap] = n;
        heap_up(q, q->nheap++);
    } else {
        heap_up(q, q->nodes[n].heap);
    }
}

/* ---- node positions and lookup ---- */

typedef struct search {
    const nav_vol *v;
    nav_vol_query *q;
    const float *start, *end;
    uint32_t start_home, goal_home; /* ids of the nodes holding start and end */
    float w;
} search;

static void id_centre(const nav_vol *v, uint32_t id, float p[3]) {
    uint32_t bi = id >> 7, l = id & 127u;
    uint32_t bx = bi % v->b[0], by = (bi / v->b[0]) % v->b[1], bz = bi / (v->b[0] * v->b[1]);
    if (l == ID_BRICK) {
        p[0] = v->bmin[0] + ((float)bx * 4 + 2) * v->vs;
        p[1] = v->bmin[1] + ((float)by * 4 + 2) * v->vs;
        p[2] = v->bmin[2] + ((float)bz * 4 + 2) * v->vs;
    } else {
        p[0] = v->bmin[0] + ((float)(bx * 4 + (l & 3)) + 0.5f) * v->vs;
        p[1] = v->bmin[1] + ((float)(by * 4 + ((l >> 2) & 3)) + 0.5f) * v->vs;
        p[2] = v->bmin[2] + ((float)(bz * 4 + (l >> 4)) + 0.5f) * v->vs;
    }
}

void nav_vol_node_box(const nav_vol *v, uint32_t id, float bmin[3], float bmax[3]) {
    float c[3];
    id_centre(v, id, c);
    float h = (id & 127u) == ID_BRICK ? 2 * v->vs : 0.5f * v->vs;
    for (int a = 0; a < 3; a++) {
        bmin[a] = c[a] - h;
        bmax[a] = c[a] + h;
    }
}

static inline float dist3(const float a[3], const float b[3]) {
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

/* Bumps the stamp that marks this search's slots, clearing the table when it wraps. */
static void next_stamp(nav_vol_query *q) {
    if (++q->stamp == 0) { /* wrapped: clear once every 2^32 stamps */
        memset(q->hash, 0, ((size_t)q->hmax + 1) * sizeof *q->hash);
        q->stamp = 1;
    }
}

/* Doubles the slots in use and inserts the pool's nodes again under a new stamp (the
   old stamp's slots then read as empty). */
static void hash_grow(nav_vol_query *q) {
    q->hmask = q->hmask * 2 + 1;
    next_stamp(q);
    for (uint32_t n = 0; n < q->used; n++) {
        uint32_t h = (q->nodes[n].id * 2654435761u) & q->hmask;
        while (q->hash[h].stamp == q->stamp)
            h = (h + 1) & q->hmask;
        q->hash[h] = (slot){.key = q->nodes[n].id, .node = n, .stamp = q->stamp};
    }
}

/* The pool node for id, created on first sight; NODE_NONE when the pool is full. */
static uint32_t node_get(search *s, uint32_t id) {
    nav_vol_query *q = s->q;
    /* at most half full, so probes stay short */
    if (q->used * 2u > q->hmask && q->hmask < q->hmax)
        hash_grow(q);
    uint32_t h = (id * 2654435761u) & q->hmask;
    for (;; h = (h + 1) & q->hmask) {
        slot *sl = &q->hash[h];
        if (sl->stamp != q->stamp) {
            if (q->used == q->cap)
                return NODE_NONE;
            uint32_t n = q->used++;
            sl->stamp = q->stamp;
            sl->key = id;
            sl->node = n;
            vnode *nd = &q->nodes[n];
            nd->id = id;
            nd->parent = nd->gp = NODE_NONE;
            nd->heap = HEAP_NEW;
            nd->g = nd->gg = nd->f = INFINITY;
            if (id == ID_START)
                memcpy(nd->pos, s->start, sizeof nd->pos);
            else if (id == ID_GOAL)
                memcpy(nd->pos, s->end, sizeof nd->pos);
            else
                id_centre(s->v, id, nd->pos);
            return n;
        }
        if (sl->key == id)
            return sl->node;
    }
}

/* Id of the node holding free point p. */
static uint32_t home_of(const nav_vol *v, const float p[3]) {
    uint32_t c[3];
    nav_vol_locate(v, p, c);
    uint32_t bi = nav_vol_brick_index(v, c[0] >> 2, c[1] >> 2, c[2] >> 2);
    if (!(v->top[bi] & NAV_VOL_MIXED))
        return (bi << 7) | ID_BRICK;
    return (bi << 7) | nav_vol_local(c[0], c[1], c[2]);
}

/* ---- neighbours ---- */

typedef struct nbrs {
    uint32_t id[MAX_NEIGHBOURS];
    uint32_t n;
} nbrs;

static void nb_add(nbrs *out, uint32_t id) {
    for (uint32_t i = 0; i < out->n; i++)
        if (out->id[i] == id)
            return;
    if (out->n < MAX_NEIGHBOURS)
        out->id[out->n++] = id;
}

/* Brick coordinates of brick index bi. */
static void brick_xyz(const nav_vol *v, uint32_t bi, int64_t b[3]) {
    b[0] = bi % v->b[0];
    b[1] = (bi / v->b[0]) % v->b[1];
    b[2] = bi / (v->b[0] * v->b[1]);
}

/* For each of the 27 moves (index (dz+1)*9 + (dy+1)*3 + dx+1), the bits of the 3x3x3
   block that must be free: the box the move spans, the target included (bit 13 is the
   voxel itself). Generated from that rule; a constant, so threads share it freely. */
static const uint32_t MOVE_NEEDS[27] = {
    0x000361b, 0x0002412, 0x0006c36, 0x0003018, 0x0002010, 0x0006030, 0x001b0d8,
    0x0012090, 0x00361b0, 0x0003600, 0x0002400, 0x0006c00, 0x0003000, 0x0002000,
    0x0006000, 0x001b000, 0x0012000, 0x0036000, 0x06c3600, 0x0482400, 0x0d86c00,
    0x0603000, 0x0402000, 0x0c06000, 0x361b000, 0x2412000, 0x6c36000};

/* Free bits of the 3x3x3 voxels around c (bit (dz+1)*9 + (dy+1)*3 + dx+1), row by row,
   reading each brick word once per row. */
static uint32_t gather27(const nav_vol *v, const int64_t c[3]) {
    uint32_t fr = 0;
    for (int r = 0; r < 9; r++) {
        int64_t y = c[1] + r % 3 - 1, z = c[2] + r / 3 - 1;
        if (y < 0 || z < 0 || y >= v->n[1] || z >= v->n[2])
            continue;
        uint32_t base = ((uint32_t)(z >> 2) * v->b[1] + (uint32_t)(y >> 2)) * v->b[0];
        uint32_t lyz = (((uint32_t)y & 3) << 2) | (((uint32_t)z & 3) << 4);
        int64_t bx_prev = -1;
        uint32_t t = NAV_VOL_SOLID;
        for (int dx = 0; dx < 3; dx++) {
            int64_t x = c[0] + dx - 1;
            if (x < 0 || x >= v->n[0])
                continue;
            if ((x >> 2) != bx_prev) {
                bx_prev = x >> 2;
                t = v->top[base + (uint32_t)bx_prev];
            }
            uint32_t free =
                t == NAV_VOL_SOLID ? 0
                : !(t & NAV_VOL_MIXED)
                    ? 1
                    : (uint32_t)((v->masks[t & ~NAV_VOL_MIXED] >> (((uint32_t)x & 3) | lyz)) & 1u);
            fr |= free << (r * 3 + dx);
        }
    }
    return fr;
}

static void voxel_neighbours(const nav_vol *v, uint32_t id, nbrs *out) {
    int64_t b[3], c[3];
    brick_xyz(v, id >> 7, b);
    uint32_t l = id & 127u;
    c[0] = b[0] * 4 + (l & 3);
    c[1] = b[1] * 4 + ((l >> 2) & 3);
    c[2] = b[2] * 4 + (l >> 4);
    /* the 3x3x3 block around the voxel, read once, as bits (x fastest) */
    uint32_t fr = gather27(v, c);
    const uint32_t *need = MOVE_NEEDS;
    for (int i = 0; i < 27; i++) {
        /* every voxel of the block the move spans must be free (for a diagonal: the
           voxels around the crossed edge or corner) */
        if (i == 13 || (fr & need[i]) != need[i])
            continue;
        int dx = i % 3 - 1, dy = (i / 3) % 3 - 1, dz = i / 9 - 1;
        int64_t w[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
        uint32_t wb =
            nav_vol_brick_index(v, (uint32_t)w[0] >> 2, (uint32_t)w[1] >> 2, (uint32_t)w[2] >> 2);
        if (!(v->top[wb] & NAV_VOL_MIXED)) {
            /* the same edges as brick_neighbours', seen from the voxel's side */
            int kb = ((w[0] >> 2) != b[0]) + ((w[1] >> 2) != b[1]) + ((w[2] >> 2) != b[2]);
            if (kb == 1)
                nb_add(out, (wb << 7) | ID_BRICK);
        } else {
            out->id[out->n++] =
                (wb << 7) | nav_vol_local((uint32_t)w[0], (uint32_t)w[1], (uint32_t)w[2]);
        }
    }
}

/* The voxels of a brick that touch the neighbour in direction e (-1, 0, 1 per axis):
   local x == 0 when the neighbour lies at -x, and so on. */
static uint64_t touching_layer(const int e[3]) {
    static const uint64_t lo[3] = {NAV_VOL_X0, NAV_VOL_Y0, NAV_VOL_Z0},
                          hi[3] = {NAV_VOL_X3, NAV_VOL_Y3, NAV_VOL_Z3};
    uint64_t m = UINT64_MAX;
    for (int a = 0; a < 3; a++)
        if (e[a])
            m &= e[a] > 0 ? lo[a] : hi[a]; /* in the neighbour: the side facing back */
    return m;
}

/*
 * Whether the bricks between brick b and its diagonal neighbour b + e (the
 * ones around the edge or corner the centre-to-centre segment passes
 * through) are all whole free bricks: then that segment is free.
 */
static int between_free(const nav_vol *v, const int64_t b[3], const int e[3]) {
    for (int sz = 0; sz <= (e[2] != 0); sz++)
        for (int sy = 0; sy <= (e[1] != 0); sy++)
            for (int sx = 0; sx <= (e[0] != 0); sx++) {
                int64_t c[3] = {b[0] + sx * e[0], b[1] + sy * e[1], b[2] + sz * e[2]};
                uint32_t t =
                    v->top[nav_vol_brick_index(v, (uint32_t)c[0], (uint32_t)c[1], (uint32_t)c[2])];
                if (t == NAV_VOL_SOLID || (t & NAV_VOL_MIXED))
                    return 0;
            }
    return 1;
}

/*
 * Edges from a whole free brick: to its six face neighbours (the brick, or
 * a mixed one's free voxels on the shared face). The segment from the
 * brick's centre enters such a voxel straight through the shared face (the
 * crossing point lies 0.8, 1.6, 2.4 or 3.2 voxels across, inside the
 * voxel's span), so these edges need no test. Diagonal neighbours that are
 * whole free bricks too are joined when every brick around the crossed edge
 * or corner is (between_free). Voxels met only across an edge or a corner
 * are left out: face edges already join every
 * pair of face-adjacent free voxels (so the graph's connectivity is the
 * components'), and the any-angle parents of Lazy Theta* cut the corners
 * such edges would, without a line-of-sight test per edge.
 */
static void brick_neighbours(const nav_vol *v, uint32_t id, nbrs *out) {
    int64_t b[3];
    brick_xyz(v, id >> 7, b);
    for (int ez = -1; ez <= 1; ez++)
        for (int ey = -1; ey <= 1; ey++)
            for (int ex = -1; ex <= 1; ex++) {
                int k = (ex != 0) + (ey != 0) + (ez != 0);
                int64_t n[3] = {b[0] + ex, b[1] + ey, b[2] + ez};
                if (!k || n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= v->b[0] || n[1] >= v->b[1] ||
                    n[2] >= v->b[2])
                    continue;
                uint32_t nb =
                    nav_vol_brick_index(v, (uint32_t)n[0], (uint32_t)n[1], (uint32_t)n[2]);
                uint32_t t = v->top[nb];
                if (t == NAV_VOL_SOLID)
                    continue;
                int e[3] = {ex, ey, ez};
                if (!(t & NAV_VOL_MIXED)) {
                    if (k == 1 || between_free(v, b, e))
                        out->id[out->n++] = (nb << 7) | ID_BRICK;
                    continue;
                }
                if (k > 1)
                    continue;
                uint64_t m = v->masks[t & ~NAV_VOL_MIXED] & touching_layer(e);
                while (m) {
                    uint32_t loc = (uint32_t)__builtin_ctzll(m);
                    m &= m - 1;
                    out->id[out->n++] = (nb << 7) | loc; /* distinct by construction */
                }
            }
}

static void neighbours(const search *s, uint32_t id, nbrs *out) {
    out->n = 0;
    if (id == ID_START) {
        out->id[out->n++] = s->start_home;
        return;
    }
    if (id == ID_GOAL)
        return;
    if ((id & 127u) == ID_BRICK)
        brick_neighbours(s->v, id, out);
    else
        voxel_neighbours(s->v, id, out);
    if (id == s->goal_home)
        nb_add(out, ID_GOAL);
}

/* ---- the search ---- */

/* Relaxes node m (pool index) seen from expanded node n. */
static void relax(search *s, uint32_t n, uint32_t m) {
    vnode *N = &s->q->nodes[n], *M = &s->q->nodes[m];
    float c = N->g + dist3(N->pos, M->pos);
    if (c < M->gg) {
        M->gg = c;
        M->gp = n;
    }
    const vnode *P = &s->q->nodes[N->parent];
    float lazy = P->g + dist3(P->pos, M->pos);
    if (lazy < M->g) {
        M->g = lazy;
        M->parent = N->parent;
        M->f = lazy + s->w * dist3(M->pos, s->end);
        heap_push_or_update(s->q, m);
    }
}

/* Lazy Theta*'s SetVertex: checks the assumed line of sight of n to its parent. */
static void set_vertex(search *s, uint32_t n) {
    vnode *N = &s->q->nodes[n];
    /* a parent that is the node's own expanded graph neighbour is a tested edge */
    if (N->parent == n || N->parent == NODE_NONE || N->parent == N->gp)
        return;
    /* walked from the node back: a failure, when there is one, is usually near it */
    if (nav_vol_los(s->v, N->pos, s->q->nodes[N->parent].pos))
        return;
    N->parent = N->gp;
    N->g = N->gg;
}

/* Runs the search; returns the pool index of the goal, or of the expanded
   node closest to the end when the goal was not reached. */
static uint32_t run(search *s, uint32_t budget, const nav_vol_path_request *req,
                    nav_vol_path_result *res, int *reached) {
    nav_vol_query *q = s->q;
    uint32_t n0 = node_get(s, ID_START);
    q->nodes[n0].g = q->nodes[n0].gg = 0;
    q->nodes[n0].parent = q->nodes[n0].gp = n0;
    q->nodes[n0].f = s->w * dist3(s->start, s->end);
    heap_push_or_update(q, n0);
    uint32_t best = n0;
    float best_h = dist3(s->start, s->end);
    nbrs nb;
    *reached = 0;
    while (q->nheap) {
        uint32_t n = heap_pop(q);
        set_vertex(s, n);
        res->nodes_expanded++;
        vnode *N = &q->nodes[n];
        if (req->expanded && res->nexpanded < req->max_expanded && N->id < ID_GOAL)
            req->expanded[res->nexpanded++] = N->id;
        if (N->id == ID_GOAL) {
            *reached = 1;
            return n;
        }
        float h = dist3(N->pos, s->end);
        if (h < best_h) {
            best_h = h;
            best = n;
        }
        if (res->nodes_expanded >= budget)
            break;
        neighbours(s, N->id, &nb);
        for (uint32_t i = 0; i < nb.n; i++) {
            uint32_t m = node_get(s, nb.id[i]);
            if (m == NODE_NONE)
                return best; /* pool full: the budget is spent */
            if (q->nodes[m].heap != HEAP_CLOSED)
                relax(s, n, m);
        }
    }
    return best;
}

/* p moved the fraction t of the way to q, into out. */
static void lerp3(const float p[3], const float q[3], float t, float out[3]) {
    for (int k = 0; k < 3; k++)
        out[k] = p[k] + t * (q[k] - p[k]);
}

/*
 * Slides corner p toward q as far as `anchor` still sees it (bisection on
 * the fraction; the segment from the moved corner to q is part of p-q, so
 * it stays free). By the triangle inequality this never lengthens the path.
 * Returns whether it moved by more than a thousandth of a voxel.
 */
static int slide(const nav_vol *v, const float *anchor, float *p, const float *q, int steps) {
    float lo = 0, hi = 1, m[3];
    lerp3(p, q, 1, m);
    if (!nav_vol_los(v, anchor, m)) {
        for (int k = 0; k < steps; k++) {
            float mid = 0.5f * (lo + hi);
            lerp3(p, q, mid, m);
            if (nav_vol_los(v, anchor, m))
                lo = mid;
            else
                hi = mid;
        }
        hi = lo;
    }
    if (hi <= 0)
        return 0;
    lerp3(p, q, hi, m);
    int moved = dist3(m, p) > 1e-3f * v->vs;
    memcpy(p, m, sizeof m);
    return moved;
}

/*
 * Pattern search on corner p between a and b: tries moves along each axis,
 * from a voxel down to 2^-steps of one, keeping any that shortens a-p-b
 * while both segments stay free. Blocked space is a union of axis-aligned
 * voxels, so a taut path bends on their edges, and an edge runs along an
 * axis: these moves slide a corner along the edge it rests on, which the
 * slides toward a neighbour or the chord cannot do once the corner touches
 * the edge (every such move enters the blocked voxel or hides a neighbour).
 * Returns whether p moved by more than a thousandth of a voxel in all.
 */
static int nudge(const nav_vol *v, const float *a, float *p, const float *b, int steps) {
    float start[3] = {p[0], p[1], p[2]};
    float cur = dist3(a, p) + dist3(p, b);
    float step = v->vs;
    for (int k = 0; k <= steps; k++, step *= 0.5f) {
        int improved;
        do {
            improved = 0;
            for (int d = 0; d < 6; d++) {
                float m[3] = {p[0], p[1], p[2]};
                m[d >> 1] += d & 1 ? -step : step;
                float len = dist3(a, m) + dist3(m, b);
                if (len < cur && nav_vol_los(v, a, m) && nav_vol_los(v, m, b)) {
                    memcpy(p, m, sizeof m);
                    cur = len;
                    improved = 1;
                }
            }
        } while (improved);
    }
    return dist3(start, p) > 1e-3f * v->vs;
}

/*
 * Pulls the path taut: corners sit at node centres, up to half a voxel (or
 * two, for a brick) off the obstacle they turn around. Each pass drops the
 * corners whose neighbours see each other and slides every inner corner
 * toward its next and its previous corner as far as the other neighbour
 * still sees it, then toward the nearest point of the chord between its
 * neighbours while both do, then along the axes (nudge). No move lengthens
 * the path or leaves free space. A heuristic weight above 1 asks for speed
 * over length: one pass of slides in coarse steps (1/16), else up to 8
 * passes of all four in fine ones (1/1024).
 */
static void tauten(const nav_vol *v, float *c, uint32_t *n, int passes, int steps) {
    for (int pass = 0; pass < passes && (*n) > 2; pass++) {
        int moved = 0;
        for (uint32_t i = 1; i + 1 < *n; i++) {
            float *a = c + 3 * (i - 1), *p = c + 3 * i, *b = c + 3 * (i + 1);
            if (nav_vol_los(v, a, b)) {
                memmove(p, b, (size_t)(*n - i - 1) * 3 * sizeof *c);
                (*n)--;
                i--;
                moved = 1;
                continue;
            }
            moved |= slide(v, a, p, b, steps);
            moved |= slide(v, b, p, a, steps);
            if (passes == 1)
                continue; /* the quick pass (weight > 1) only slides */
            float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            float l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
            float t =
                l2 > 0
                    ? ((p[0] - a[0]) * ab[0] + (p[1] - a[1]) * ab[1] + (p[2] - a[2]) * ab[2]) / l2
                    : 0;
            t = t < 0 ? 0 : (t > 1 ? 1 : t);
            float foot[3] = {a[0] + t * ab[0], a[1] + t * ab[1], a[2] + t * ab[2]};
            float step = 1;
            for (int k = 0; k < steps; k++, step *= 0.5f) {
                float m[3];
                lerp3(p, foot, step, m);
                if (nav_vol_los(v, a, m) && nav_vol_los(v, m, b)) {
                    if (dist3(m, p) > 1e-3f * v->vs)
                        moved = 1;
                    memcpy(p, m, sizeof m);
                    break;
                }
            }
            moved |= nudge(v, a, p, b, steps);
        }
        if (!moved)
            break;
    }
}

/* Writes the corners from the start to pool node n, then drops the corners
   that the previous kept corner sees past. */
static void emit(search *s, uint32_t n, const nav_vol_path_request *req, nav_vol_path_result *res) {
    nav_vol_query *q = s->q;
    /* reverse the parent chain into the heap array (free after the search) */
    uint32_t len = 0;
    for (uint32_t i = n;; i = q->nodes[i].parent) {
        q->heap[len++] = i;
        if (q->nodes[i].parent == i || len == q->cap)
            break;
    }
    uint32_t *chain = q->heap;
    for (uint32_t i = 0; i < len / 2; i++) {
        uint32_t t = chain[i];
        chain[i] = chain[len - 1 - i];
        chain[len - 1 - i] = t;
    }
    /* (tauten drops the corners the previous kept one sees past) */
    uint32_t kept = len;
    res->ncorners = 0;
    for (uint32_t i = 0; i < kept; i++) {
        if (res->ncorners == req->max_corners) {
            res->truncated = true;
            break;
        }
        memcpy(req->corners + 3 * res->ncorners, q->nodes[chain[i]].pos, 3 * sizeof(float));
        res->ncorners++;
    }
    if (!res->truncated)
        tauten(s->v, req->corners, &res->ncorners, s->w > 1 ? 1 : 8, s->w > 1 ? 4 : 10);
    res->length = 0;
    for (uint32_t i = 1; i < res->ncorners; i++)
        res->length += dist3(req->corners + 3 * (i - 1), req->corners + 3 * i);
}

static void emit_points(const float *const *pts, uint32_t n, const nav_vol_path_request *req,
                        nav_vol_path_result *res) {
    res->ncorners = n;
    res->length = 0;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(req->corners + 3 * i, pts[i], 3 * sizeof(float));
        if (i)
            res->length += dist3(pts[i - 1], pts[i]);
    }
}

nav_status nav_vol_path(const nav_vol *v, nav_vol_query *q, const nav_vol_path_request *req,
                        nav_vol_path_result *res) {
    if (!res)
        return NAV_E_INVALID_ARG;
    memset(res, 0, sizeof *res);
    if (!v || !q || !req || !req->corners || req->max_corners < 2 ||
        !(req->heuristic_weight >= 1) || !isfinite(req->heuristic_weight))
        return NAV_E_INVALID_ARG;
    if (!nav_vol_point_free(v, req->start) || !nav_vol_point_free(v, req->end))
        return NAV_E_OFF_MESH;
    const float *pts[2] = {req->start, req->end};
    if (nav_vol_component(v, req->start) != nav_vol_component(v, req->end)) {
        emit_points(pts, 1, req, res);
        return NAV_OK;
    }
    if (nav_vol_los(v, req->start, req->end)) {
        emit_points(pts, 2, req, res);
        res->complete = true;
        return NAV_OK;
    }
    search s = {.v = v,
                .q = q,
                .start = req->start,
                .end = req->end,
                .start_home = home_of(v, req->start),
                .goal_home = home_of(v, req->end),
                .w = req->heuristic_weight};
    q->used = 0;
    q->nheap = 0;
    q->hmask = (q->hmax + 1 < HASH_START ? q->hmax + 1 : HASH_START) - 1;
    next_stamp(q);
    uint32_t budget = nav_vol_query_budget(q, req->max_nodes);
    int reached;
    uint32_t last = run(&s, budget, req, res, &reached);
    res->complete = reached;
    emit(&s, last, req, res);
    return NAV_OK;
}
