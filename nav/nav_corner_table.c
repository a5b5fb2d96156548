/*
 * nav_corner_table: the corner graph's all-pairs table, for small graphs.
 *
 * For every ordered pair of graph nodes (s, g): the length of the shortest
 * path from s to g over the graph's edges and link hops, and the node after
 * s on it. A query then needs no graph search at all: the shortest path
 * from a start to a goal that do not see each other bends first at a node
 * s the start sees and last at a node g the goal sees, and between them it
 * is a path of the graph (every bend of a taut path is a corner and every
 * segment between two bends is tangent at both, so it is a graph edge).
 * Hence its length is the least |start s| + table(s, g) + |g goal| over
 * the pairs the two visibility walks show (each such sum is the length of
 * a real path, so the least one is exact; nav_corner_search.c).
 *
 * This is End Point Search's idea (Shen, Cui, Harabor et al., IJCAI 2020)
 * without its compression: quadratic in the nodes, so built only for graphs
 * of at most NAV_CORNER_TABLE_MAX_NODES nodes (10 bytes a pair: 10 MB at
 * 1,024), where it costs milliseconds. Larger graphs keep their A* search.
 * The table is not stored: a load builds it again (nav_corner_load).
 *
 * Built by one reverse Dijkstra per target g over the transposed graph, so
 * the "next" entries toward one g form a tree: following them from any node
 * reaches g without a cycle, even where edges of length zero join two
 * nodes at one position (two floors welded at a vertex, a link end on a
 * corner).
 */
#include <math.h>
#include <stdlib.h>

#include "nav/nav_corner_internal.h"

/* A reversed edge: from `to`'s point of view, the node it can be reached
   from (u -> to in the graph) and the step's cost. */
typedef struct ct_redge {
    uint32_t from;
    uint32_t hop; /* the link's hop, not a visibility edge */
    double w;
} ct_redge;

typedef struct ct_item {
    double d;
    uint32_t v;
} ct_item;

static void ct_push(ct_item *h, uint32_t *n, double d, uint32_t v) {
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p].d <= d)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i].d = d;
    h[i].v = v;
}

static ct_item ct_pop(ct_item *h, uint32_t *n) {
    ct_item top = h[0], last = h[--*n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].d < h[c].d)
            c++;
        if (last.d <= h[c].d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static double ct_dist(const nav_cgraph *g, uint32_t u, uint32_t v) {
    double dx = g->xz[2 * (size_t)v] - g->xz[2 * (size_t)u];
    double dz = g->xz[2 * (size_t)v + 1] - g->xz[2 * (size_t)u + 1];
    return sqrt(dx * dx + dz * dz);
}

/* The transposed graph in CSR form: rstart[v] .. rstart[v + 1] in re. */
static int ct_transpose(const nav_mesh *m, const nav_cgraph *g, uint32_t **rstart_out,
                        ct_redge **re_out) {
    uint32_t n = g->nnodes;
    uint32_t *rstart = calloc((size_t)n + 2, sizeof *rstart);
    uint64_t nhop = 0;
    for (uint32_t l = 0; l < m->nlinks; l++)
        nhop += m->links[l].bidirectional ? 2 : 1;
    ct_redge *re = malloc((size_t)(g->nedges + nhop + 1) * sizeof *re);
    if (!rstart || !re) {
        free(rstart);
        free(re);
        return 0;
    }
    /* counts shifted by two, then prefix sums: rstart[v + 1] is v's fill slot */
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t i = g->adj_start[u]; i < g->adj_start[u + 1]; i++)
            rstart[g->adj[i].to + 2]++;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        uint32_t a = g->ncorners + 2 * l;
        rstart[a + 1 + 2]++;
        if (m->links[l].bidirectional)
            rstart[a + 2]++;
    }
    for (uint32_t v = 0; v < n; v++)
        rstart[v + 2] += rstart[v + 1];
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t i = g->adj_start[u]; i < g->adj_start[u + 1]; i++) {
            uint32_t v = g->adj[i].to;
            re[rstart[v + 1]++] = (ct_redge){u, 0, ct_dist(g, u, v)};
        }
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const nav_link *lk = &m->links[l];
        uint32_t a = g->ncorners + 2 * l, b = a + 1;
        double w = nav_dist3d(lk->start_on, lk->end_on);
        re[rstart[b + 1]++] = (ct_redge){a, 1, w};
        if (lk->bidirectional)
            re[rstart[a + 1]++] = (ct_redge){b, 1, w};
    }
    *rstart_out = rstart;
    *re_out = re;
    return 1;
}

nav_status nav_corner_table_build(const nav_mesh *m, nav_cgraph *g) {
    g->td = NULL;
    g->tnext = NULL;
    g->link_areas = 0;
    for (uint32_t l = 0; l < m->nlinks; l++)
        g->link_areas |= (uint64_t)1 << m->links[l].area;
    double area = 0;
    for (uint32_t p = 0; p < m->npolys; p++)
        area += m->poly_area[p];
    g->cell = m->npolys ? sqrt(area / m->npolys) : 0;
    uint32_t n = g->nnodes;
    if (n == 0 || n > NAV_CORNER_TABLE_MAX_NODES)
        return NAV_OK;
    uint32_t *rstart = NULL;
    ct_redge *re = NULL;
    size_t pairs = (size_t)n * n;
    double *td = malloc(pairs * sizeof *td);
    uint16_t *tnext = malloc(pairs * sizeof *tnext);
    ct_item *heap = malloc(((size_t)g->nedges + 2 * (size_t)m->nlinks + n + 1) * sizeof *heap);
    uint8_t *done = malloc(n);
    if (!td || !tnext || !heap || !done || !ct_transpose(m, g, &rstart, &re)) {
        free(td);
        free(tnext);
        free(heap);
        free(done);
        return NAV_E_NOMEM;
    }
    for (size_t i = 0; i < pairs; i++) {
        td[i] = INFINITY;
        tnext[i] = NAV_CORNER_TABLE_NONE;
    }
    for (uint32_t t = 0; t < n; t++) {
        /* distances to t: column t of the table */
        for (uint32_t v = 0; v < n; v++)
            done[v] = 0;
        uint32_t nh = 0;
        td[(size_t)t * n + t] = 0;
        ct_push(heap, &nh, 0, t);
        while (nh > 0) {
            ct_item it = ct_pop(heap, &nh);
            uint32_t v = it.v;
            if (done[v])
                continue;
            done[v] = 1;
            for (uint32_t i = rstart[v]; i < rstart[v + 1]; i++) {
                uint32_t u = re[i].from;
                double d = it.d + re[i].w;
                if (done[u] || d >= td[(size_t)u * n + t])
                    continue;
                td[(size_t)u * n + t] = d;
                tnext[(size_t)u * n + t] = (uint16_t)(v | (re[i].hop ? NAV_CORNER_TABLE_HOP : 0u));
                ct_push(heap, &nh, d, u);
            }
        }
    }
    free(heap);
    free(done);
    free(rstart);
    free(re);
    g->td = td;
    g->tnext = tnext;
    return NAV_OK;
}

void nav_corner_table_free(nav_cgraph *g) {
    free(g->td);
    free(g->tnext);
    g->td = NULL;
    g->tnext = NULL;
}

size_t nav_corner_table_memory(const nav_cgraph *g) {
    return g->td ? (size_t)g->nnodes * g->nnodes * (sizeof *g->td + sizeof *g->tnext) : 0;
}

int nav_corner_has_table(const nav_cgraph *g) {
    return g && g->td;
}

int nav_corner_table_usable(const nav_cgraph *g, uint64_t exclude_mask) {
    return nav_corner_has_table(g) && !(exclude_mask & g->link_areas);
}

double nav_corner_cell(const nav_cgraph *g) {
    return g ? g->cell : 0;
}
