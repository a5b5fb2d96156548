/*
 * bench_optimal: the optimal (interval) search against the corridor search,
 * side by side in one run, through the public nav_find_path (both snaps,
 * search, and string pulling for the corridor). Prints us/query for both and
 * their ratio, for short, medium and long paths, on the shared Recast meshes
 * (their reference queries, split into thirds by straight-line distance) and
 * on two generated meshes of over 100,000 polygons (single-cell pillars;
 * wall segments, i.e. rooms and corridors). Also the share of optimal
 * requests that fell back to the corridor (budget) and how much shorter the
 * optimal paths are. Each band's time is the best of its repetitions (the
 * machine is shared: the minimum is the least disturbed figure). Ends with
 * the mean time ratio per mesh family and the bands where the optimal
 * search is still slower. Figures only; nothing is asserted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nav/nav_corner.h"
#include "nav/nav_internal.h"
#include "nav/nav_optimal.h"
#include "nav/nav_query_internal.h"
#include "nav/nav_query.h"
#include "tests/bench/bench.h"
#include "tests/bench/detour_ref.h"
#include "tests/bench/mesh_json.h"
#include "tests/test_fixtures.h"

typedef struct ob_buf {
    float corners[3 * 2048];
    uint32_t polys[1 << 14];
    uint32_t links[64];
    nav_path_result res;
} ob_buf;

typedef struct ob_req {
    float start[3], end[3];
    double dist;
} ob_req;

typedef struct ob_fig {
    double us, len, nodes;
    int fallback, failed;
} ob_fig;

/* One path query of the bench into b's buffers. */
static inline nav_status ob_find(nav_query *q, const nav_mesh *m, const ob_req *r, nav_algo algo,
                                 const float ext[3], ob_buf *b) {
    nav_path_request req = {.algorithm = algo};
    memcpy(req.start, r->start, sizeof req.start);
    memcpy(req.end, r->end, sizeof req.end);
    memcpy(req.extents, ext, sizeof req.extents);
    memset(&b->res, 0, sizeof b->res);
    b->res.corners = b->corners;
    b->res.max_corners = 2048;
    b->res.polys = b->polys;
    b->res.max_polys = 1 << 14;
    b->res.links = b->links;
    b->res.max_links = 64;
    return nav_find_path(q, m, &req, &b->res);
}

static void ob_run(nav_query *q, const nav_mesh *m, const ob_req *rs, int n, nav_algo algo,
                   const float ext[3], int reps, ob_buf *b, ob_fig *out, double *lens) {
    memset(out, 0, sizeof *out);
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int i = 0; i < n; i++) {
            nav_status st = ob_find(q, m, &rs[i], algo, ext, b);
            if (r > 0)
                continue;
            if (lens)
                lens[i] = 0;
            if (st != NAV_OK) {
                out->failed++;
                continue;
            }
            double l = 0;
            for (uint32_t c = 1; c < b->res.ncorners; c++)
                l += hypot((double)b->corners[3 * c] - b->corners[3 * c - 3],
                           (double)b->corners[3 * c + 2] - b->corners[3 * c - 1]);
            out->len += l;
            if (lens && !b->res.flags && b->res.algorithm == NAV_ALGO_OPTIMAL)
                lens[i] = l;
            out->nodes += b->res.nodes_expanded;
            out->fallback += algo == NAV_ALGO_OPTIMAL && b->res.algorithm != NAV_ALGO_OPTIMAL;
        }
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    out->us = best * 1e6 / (double)(n ? n : 1);
}

/* Detour on the same requests: best of `reps` passes; len sums the xz
   length of Detour's complete paths over the requests our optimal search
   answered (ok[i]), so the two sums compare the same paths. */
typedef struct ob_dfig {
    double us, len, olen, nodes;
    int failed;
} ob_dfig;

static void ob_detour(detour_ref *d, const ob_req *rs, int n, const float ext[3], int reps,
                      const double *olen, ob_dfig *out) {
    memset(out, 0, sizeof *out);
    double best = INFINITY;
    for (int r = 0; r <= reps; r++) { /* pass 0 warms up and collects the figures */
        double t0 = bench_now();
        for (int i = 0; i < n; i++) {
            double l = 0;
            int nodes = 0;
            int st =
                detour_ref_path(d, rs[i].start, rs[i].end, ext, r ? NULL : &l, r ? NULL : &nodes);
            if (r > 0)
                continue;
            if (st != 1) {
                out->failed++;
                continue;
            }
            out->nodes += nodes;
            if (olen[i] > 0) {
                out->len += l;
                out->olen += olen[i];
            }
        }
        double t = bench_now() - t0;
        if (r > 0)
            best = t < best ? t : best;
    }
    out->us = best * 1e6 / (double)(n ? n : 1);
}

/*
 * Why the interval search expands more nodes than the corridor search: is
 * it pruning too little, or are the nodes needed? For every query of a band
 * the expanded intervals are collected (nav_optimal_observe) and grouped by
 * edge; an interval is "needed" when at one of 9 points along it its own
 * root is the cheapest (g + distance) of all intervals expanded on that
 * edge that contain the point. The rest is what even a perfect dominance
 * test (against every expanded node, not just the last) could prune.
 */
typedef struct ob_ivs {
    nav_optimal_interval *iv;
    size_t n, cap;
} ob_ivs;

static void ob_iv_add(void *ctx, const nav_optimal_interval *iv) {
    ob_ivs *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        nav_optimal_interval *t = realloc(l->iv, cap * sizeof *t);
        if (!t)
            return; /* the share is then over fewer intervals */
        l->iv = t;
        l->cap = cap;
    }
    l->iv[l->n++] = *iv;
}

static int ob_iv_cmp(const void *a, const void *b) {
    uint32_t x = ((const nav_optimal_interval *)a)->edge,
             y = ((const nav_optimal_interval *)b)->edge;
    return (x > y) - (x < y);
}

static double ob_iv_cost(const nav_optimal_interval *v, double x, double z) {
    return v->g + hypot(x - v->root[0], z - v->root[1]);
}

/* Needed intervals among those of one search (sorted by edge here). */
static size_t ob_iv_needed(ob_ivs *l) {
    qsort(l->iv, l->n, sizeof *l->iv, ob_iv_cmp);
    size_t needed = 0;
    for (size_t i = 0, j; i < l->n; i = j) {
        for (j = i; j < l->n && l->iv[j].edge == l->iv[i].edge; j++)
            ;
        for (size_t a = i; a < j; a++) {
            const nav_optimal_interval *v = &l->iv[a];
            int need = 0;
            for (int k = 0; k <= 8 && !need; k++) {
                double u = k / 8.0, t = v->ta + u * (v->tb - v->ta);
                double x = v->a[0] + u * (v->b[0] - v->a[0]), z = v->a[1] + u * (v->b[1] - v->a[1]);
                double mine = ob_iv_cost(v, x, z);
                need = 1;
                for (size_t b = i; b < j && need; b++)
                    if (b != a && t >= l->iv[b].ta - 1e-9 && t <= l->iv[b].tb + 1e-9 &&
                        ob_iv_cost(&l->iv[b], x, z) < mine - 1e-9)
                        need = 0;
            }
            needed += (size_t)need;
        }
    }
    return needed;
}

/* Share of needed intervals over a band (snapped as nav_find_path snaps). */
static double ob_needed(nav_query *q, nav_optimal *opt, const nav_mesh *m, const ob_req *rs, int n,
                        const float ext[3], ob_buf *b) {
    ob_ivs l = {0};
    size_t all = 0, needed = 0;
    nav_optimal_observe(opt, ob_iv_add, &l);
    for (int i = 0; i < n; i++) {
        nav_path_request req = {.algorithm = NAV_ALGO_CORRIDOR};
        memcpy(req.start, rs[i].start, sizeof req.start);
        memcpy(req.end, rs[i].end, sizeof req.end);
        memcpy(req.extents, ext, sizeof req.extents);
        memset(&b->res, 0, sizeof b->res);
        if (nav_find_path(q, m, &req, &b->res) != NAV_OK)
            continue;
        float s[3], e[3];
        memcpy(s, b->res.start, sizeof s);
        memcpy(e, b->res.end, sizeof e);
        uint32_t sp = b->res.start_poly, ep = b->res.end_poly;
        memset(&b->res, 0, sizeof b->res);
        l.n = 0;
        if (nav_optimal_search(opt, m, sp, s, ep, e, 0, 0, &b->res) != NAV_OK)
            continue;
        all += l.n;
        needed += ob_iv_needed(&l);
    }
    nav_optimal_observe(opt, NULL, NULL);
    free(l.iv);
    return all ? 100.0 * (double)needed / (double)all : 0;
}

/* Time ratios (optimal / corridor) per band, summed per mesh family. */
/* Which mean a band's ratio joins. */
typedef enum ob_family { OB_SHARED, OB_PILLARS, OB_WALLS } ob_family;

typedef struct ob_sum {
    double shared, large, walls;
    int nshared, nlarge, nwalls;
    char slower[1024];  /* "mesh band ratio" of every band where optimal is slower */
    char dslower[1024]; /* the same against Detour */
    double dratio[3];   /* optimal/Detour time ratios summed per ob_family */
    int ndratio[3];
    detour_ref *detour; /* Detour on the current mesh, NULL when it cannot hold it */
    /* the same mesh with Detour's query at a game's pool (OB_DT_SMALL;
       NULL on the grids, whose long paths need more nodes) */
    detour_ref *detour_small;
} ob_sum;

/*
 * Detour's node pool. navd's search needs no clearing per query (stamped
 * records), Detour's does: dtNavMeshQuery::findPath clears a node hash of
 * pool / 4 entries, 32 KB of memset for the 65,535 nodes that match navd's
 * default pool (--max-nodes 65536). A game on a small level gives Detour
 * the pool of Recast's own demo, 2,048 nodes, and pays 1 KB. Measured on
 * the small meshes the small pool made Detour 6-25 % faster (README). On the shared meshes
 * both pools run and the anchor is the faster one of those that answered
 * every query completely (a pool that runs out gives partial paths).
 */
#define OB_DT_LARGE 65535 /* Detour's ceiling, nearest navd's 65,536 */
#define OB_DT_SMALL 2048

static nav_optimal *ob_opt; /* the observed search (needed intervals) */
static int ob_need_on;      /* NAVD_BENCH_NEEDED=1: the (slow) needed-interval analysis */

/*
 * Instruction counts: NAVD_BENCH_CG="<mesh> <band> <algorithm>" (algorithm:
 * detour (the 65,535-node pool), detour-small (the 2,048-node one), default
 * (the optimal search as shipped), graph (the corner graph forced on),
 * interval or corridor) runs that one band once more inside
 * ob_cg_pass and prints nothing else for it, so
 *   NAVD_BENCH=optimal NAVD_BENCH_CG="town long graph" valgrind --tool=callgrind \
 *     --toggle-collect=ob_cg_pass build/bench_navd
 * counts exactly those queries (after a warm-up pass outside it); divide
 * by the query count it prints. The machine is shared: instructions do not scatter.
 */
static inline __attribute__((always_inline)) void ob_cg_loop(nav_query *q, const nav_mesh *m,
                                                             detour_ref *d, const ob_req *rs, int n,
                                                             nav_algo algo, const float ext[3],
                                                             ob_buf *b) {
    for (int i = 0; i < n; i++) {
        if (d) {
            detour_ref_path(d, rs[i].start, rs[i].end, ext, NULL, NULL);
            continue;
        }
        ob_find(q, m, &rs[i], algo, ext, b);
    }
}

/* Kept out of line and out of interprocedural analysis, so callgrind's
   --toggle-collect sees these passes whole (clang has no noipa). */
#ifdef __clang__
#define OB_NOINLINE __attribute__((noinline))
#else
#define OB_NOINLINE __attribute__((noinline, noipa))
#endif

static OB_NOINLINE void ob_cg_warm(nav_query *q, const nav_mesh *m, detour_ref *d, const ob_req *rs,
                                   int n, nav_algo algo, const float ext[3], ob_buf *b) {
    ob_cg_loop(q, m, d, rs, n, algo, ext, b);
}

static OB_NOINLINE void ob_cg_pass(nav_query *q, const nav_mesh *m, detour_ref *d, const ob_req *rs,
                                   int n, nav_algo algo, const float ext[3], ob_buf *b) {
    ob_cg_loop(q, m, d, rs, n, algo, ext, b);
}

/*
 * NAVD_BENCH_CG_SPLIT=k (with NAVD_BENCH_CG naming a band and one of our
 * algorithms): where in the band the time goes. Every query is timed on its
 * own inside k passes over the band (ours, then Detour's, alternating; the
 * small pool when it completes as many paths), each query keeping its best
 * time, and the queries are grouped by the work our search did (graph nodes
 * and cones taken, or polygons / intervals expanded). Prints per group the
 * count, the mean best time of each and their ratio. A pass's figure is
 * what the issue measures; this says which queries make it (town short,
 * session 13: 0.84-0.90 up to 10, 1.24-1.28 at 11-30, 1.04-1.05 at 31-100,
 * 1.18-1.20 over 100).
 */
#define OB_SPLIT_MAX 4096
static int ob_dcomplete(detour_ref *d, const ob_req *rs, int n, const float ext[3]);

/* The splits' common start: at most OB_SPLIT_MAX queries, and Detour's
   small pool (ds) as the anchor when it completes as many paths as d. */
static detour_ref *ob_split_anchor(detour_ref *d, detour_ref *ds, const ob_req *rs, int *n,
                                   const float ext[3]) {
    if (*n > OB_SPLIT_MAX)
        *n = OB_SPLIT_MAX;
    return ds && ob_dcomplete(ds, rs, *n, ext) >= ob_dcomplete(d, rs, *n, ext) ? ds : d;
}

static void ob_cg_split(nav_query *q, const nav_mesh *m, const char *mesh, const char *band,
                        const ob_req *rs, int n, nav_algo a, const float ext[3], ob_buf *b,
                        detour_ref *d, detour_ref *ds, int passes) {
    static double tq[OB_SPLIT_MAX], td[OB_SPLIT_MAX];
    static uint32_t work[OB_SPLIT_MAX];
    if (!d) {
        printf("  %s %s: Detour cannot hold this mesh, nothing to split against\n", mesh, band);
        return;
    }
    d = ob_split_anchor(d, ds, rs, &n, ext);
    for (int i = 0; i < n; i++)
        tq[i] = td[i] = INFINITY;
    for (int r = 0; r < passes; r++) {
        for (int i = 0; i < n; i++) {
            double t0 = bench_now();
            ob_find(q, m, &rs[i], a, ext, b);
            double t = bench_now() - t0;
            tq[i] = t < tq[i] ? t : tq[i];
            work[i] = b->res.nodes_expanded;
        }
        for (int i = 0; i < n; i++) {
            double t0 = bench_now();
            detour_ref_path(d, rs[i].start, rs[i].end, ext, NULL, NULL);
            double t = bench_now() - t0;
            td[i] = t < td[i] ? t : td[i];
        }
    }
    static const uint32_t upto[] = {10, 30, 100, UINT32_MAX};
    static const char *const name[] = {"0-10", "11-30", "31-100", "101+"};
    double all_q = 0, all_d = 0;
    for (int g = 0; g < 4; g++) {
        uint32_t lo = g ? upto[g - 1] + 1 : 0;
        double sq = 0, sd = 0, sw = 0;
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (work[i] < lo || work[i] > upto[g])
                continue;
            sq += tq[i], sd += td[i], sw += work[i];
            k++;
        }
        all_q += sq, all_d += sd;
        if (!k)
            continue;
        printf("  %s %s work %-6s %4d queries (mean work %6.1f): ours %7.2f us, Detour %7.2f us, "
               "ratio %.2f\n",
               mesh, band, name[g], k, sw / k, sq * 1e6 / k, sd * 1e6 / k, sd > 0 ? sq / sd : 0);
    }
    printf("  %s %s all: %d queries, sum of best times ours/Detour %.3f (%d passes)\n", mesh, band,
           n, all_d > 0 ? all_q / all_d : 0, passes);
}

/*
 * NAVD_BENCH_CG_CELLS=k (with NAVD_BENCH_CG naming a band): which exact
 * search is fastest at which distance, the measure behind the default's
 * choice (nav_optimal.h). Every query is timed on its own in k passes over
 * the band by each of the interval search, the graph's all-pairs table
 * (the graph's A* where it has none) and the graph's A*, then Detour, each
 * query keeping its best time; the queries are grouped by their straight
 * distance in typical polygon sizes (nav_corner_cell). Prints per group
 * the count, the mean best time of each search and its ratio to Detour's.
 */
static void ob_cg_cells(nav_query *q, const nav_mesh *m, const char *mesh, const char *band,
                        const ob_req *rs, int n, const float ext[3], ob_buf *b, detour_ref *d,
                        detour_ref *ds, int passes) {
    static double tm[4][OB_SPLIT_MAX];
    static const int mode[3] = {NAV_OPT_GRAPH_OFF, NAV_OPT_GRAPH_ON, NAV_OPT_GRAPH_ASTAR};
    static const double upto[] = {2, 4, 6, 8, 10, 12, 16, 20, INFINITY};
    double cell = nav_corner_cell(m->cgraph);
    if (!d || !(cell > 0)) {
        printf("  %s %s: no Detour or no corner graph, nothing to split\n", mesh, band);
        return;
    }
    d = ob_split_anchor(d, ds, rs, &n, ext);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < n; i++)
            tm[k][i] = INFINITY;
    for (int r = 0; r < passes; r++)
        for (int k = 0; k < 4; k++) {
            if (k < 3)
                nav_optimal_use_graph(q->opt, mode[k]);
            for (int i = 0; i < n; i++) {
                double t0 = bench_now();
                if (k < 3)
                    ob_find(q, m, &rs[i], NAV_ALGO_OPTIMAL, ext, b);
                else
                    detour_ref_path(d, rs[i].start, rs[i].end, ext, NULL, NULL);
                double t = bench_now() - t0;
                tm[k][i] = t < tm[k][i] ? t : tm[k][i];
            }
        }
    nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_AUTO);
    for (int g = 0; g < (int)(sizeof upto / sizeof upto[0]); g++) {
        double lo = g ? upto[g - 1] : 0, sum[4] = {0, 0, 0, 0};
        int k = 0;
        for (int i = 0; i < n; i++) {
            double dc = hypot((double)rs[i].end[0] - rs[i].start[0],
                              (double)rs[i].end[2] - rs[i].start[2]) /
                        cell;
            if (dc < lo || dc >= upto[g])
                continue;
            for (int j = 0; j < 4; j++)
                sum[j] += tm[j][i];
            k++;
        }
        if (k)
            printf(
                "  %s %s sizes %2.0f-%-3.0f %4d queries: interval %6.2f table %6.2f A* %6.2f us; "
                "of Detour's %.2f %.2f %.2f\n",
                mesh, band, lo, isinf(upto[g]) ? 99.0 : upto[g], k, sum[0] * 1e6 / k,
                sum[1] * 1e6 / k, sum[2] * 1e6 / k, sum[0] / sum[3], sum[1] / sum[3],
                sum[2] / sum[3]);
    }
}

/* 1 when NAVD_BENCH_CG names another band (skip it), else 0; runs the
   named one for callgrind. */
static int ob_cg(nav_query *q, const nav_mesh *m, const char *mesh, const char *band,
                 const ob_req *rs, int n, const float ext[3], ob_buf *b, detour_ref *d,
                 detour_ref *ds) {
    const char *cg = getenv("NAVD_BENCH_CG");
    if (!cg || !*cg)
        return 0;
    char want_mesh[32], want_band[16], algo[16];
    if (sscanf(cg, "%31s %15s %15s", want_mesh, want_band, algo) != 3 ||
        strcmp(want_mesh, mesh) != 0 || strcmp(want_band, band) != 0)
        return 1;
    int graph = strcmp(algo, "interval") != 0, auto_mode = strcmp(algo, "default") == 0;
    nav_algo a = strcmp(algo, "corridor") == 0 ? NAV_ALGO_CORRIDOR : NAV_ALGO_OPTIMAL;
    /* detour-small: the 2,048-node pool, whose per-query clear is 1 KB
       (the 65,535-node pool's 32 KB memset is up to half of "detour") */
    int small = strcmp(algo, "detour-small") == 0;
    int detour = small || strcmp(algo, "detour") == 0;
    if (small)
        d = ds;
    if (detour && !d) {
        printf("  %s %s: Detour cannot hold this mesh%s\n", mesh, band,
               small ? " at the small pool" : "");
        return 1;
    }
    nav_optimal_use_graph(q->opt, auto_mode ? NAV_OPT_GRAPH_AUTO
                                  : graph   ? NAV_OPT_GRAPH_ON
                                            : NAV_OPT_GRAPH_OFF);
    ob_cg_warm(q, m, detour ? d : NULL, rs, n, a, ext, b); /* warm up: scratch sized */
    const char *cells = getenv("NAVD_BENCH_CG_CELLS");
    if (cells && atoi(cells) > 0 && !detour) {
        ob_cg_cells(q, m, mesh, band, rs, n, ext, b, d, ds, atoi(cells));
        return 1;
    }
    const char *split = getenv("NAVD_BENCH_CG_SPLIT");
    if (split && atoi(split) > 0 && !detour) {
        ob_cg_split(q, m, mesh, band, rs, n, a, ext, b, d, ds, atoi(split));
        nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_AUTO);
        return 1;
    }
    /* NAVD_BENCH_CG_REPS=k: k passes (a sampling profiler's run) */
    const char *reps_s = getenv("NAVD_BENCH_CG_REPS");
    int reps = reps_s ? atoi(reps_s) : 1;
    double best = INFINITY;
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
        double t0 = bench_now();
        ob_cg_pass(q, m, detour ? d : NULL, rs, n, a, ext, b);
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_AUTO);
    /* the best pass's time per query: a quick figure for one algorithm
       while tuning (under callgrind it measures callgrind) */
    printf("  %s %s %s: %d queries in ob_cg_pass, best pass %.2f us per query\n", mesh, band, algo,
           n, best * 1e6 / n);
    return 1;
}

static int ob_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * NAVD_BENCH_PAIR=k: the default exact search and Detour timed in k pairs,
 * each pair back to back (a pass over the band each), so a load change on
 * the shared machine between the two is rare; prints the best times, the
 * ratio of the bests and the median and range of the pairs' ratios. 1 when
 * it ran (the band's other figures are then skipped), else 0. ds: Detour at
 * the small pool (NULL: none); when it completes as many paths as d, each
 * pair's Detour time is the faster of the two passes (see OB_DT_SMALL).
 */
static int ob_dcomplete(detour_ref *d, const ob_req *rs, int n, const float ext[3]) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += detour_ref_path(d, rs[i].start, rs[i].end, ext, NULL, NULL) == 1;
    return k;
}

static int ob_pair(nav_query *q, const nav_mesh *m, const char *mesh, const char *band,
                   const ob_req *rs, int n, const float ext[3], ob_buf *b, detour_ref *d,
                   detour_ref *ds) {
    const char *ps = getenv("NAVD_BENCH_PAIR");
    int k = ps ? atoi(ps) : 0;
    if (k <= 0)
        return 0;
    if (!d) {
        printf("  %-10s %-6s pairs: Detour cannot hold this mesh\n", mesh, band);
        return 1;
    }
    if (k > 99)
        k = 99;
    /* NAVD_BENCH_PAIR_ALGO=graph, astar or interval: that exact search
       instead of the default choice (graph: the table where the graph has
       one; astar: the graph's A* even then) */
    const char *pa = getenv("NAVD_BENCH_PAIR_ALGO");
    if (pa && strcmp(pa, "graph") == 0)
        nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_ON);
    else if (pa && strcmp(pa, "interval") == 0)
        nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_OFF);
    else if (pa && strcmp(pa, "astar") == 0)
        nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_ASTAR);
    if (ds && ob_dcomplete(ds, rs, n, ext) < ob_dcomplete(d, rs, n, ext))
        ds = NULL; /* the small pool runs out on this band */
    double r[99], bo = INFINITY, bd = INFINITY;
    int small_won = 0;
    ob_cg_warm(q, m, NULL, rs, n, NAV_ALGO_OPTIMAL, ext, b);
    ob_cg_warm(q, m, d, rs, n, NAV_ALGO_OPTIMAL, ext, b);
    for (int i = 0; i < k; i++) {
        double t0 = bench_now();
        ob_cg_warm(q, m, NULL, rs, n, NAV_ALGO_OPTIMAL, ext, b);
        double t1 = bench_now();
        ob_cg_warm(q, m, d, rs, n, NAV_ALGO_OPTIMAL, ext, b);
        double t2 = bench_now(), t3 = t2;
        if (ds) {
            ob_cg_warm(q, m, ds, rs, n, NAV_ALGO_OPTIMAL, ext, b);
            t3 = bench_now();
        }
        double td = t2 - t1;
        if (ds && t3 - t2 < td) {
            td = t3 - t2;
            small_won++;
        }
        r[i] = (t1 - t0) / td;
        bo = fmin(bo, t1 - t0);
        bd = fmin(bd, td);
    }
    nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_AUTO);
    qsort(r, (size_t)k, sizeof *r, ob_dcmp);
    printf("  %-10s %-6s %d pairs: %s %8.2f us, Detour %8.2f us (best of each), ratio of "
           "bests %.2f; pair ratios median %.2f, range %.2f-%.2f; Detour's pool: %d of %d "
           "pairs the %d-node one was faster%s\n",
           mesh, band, k, pa && *pa ? pa : "default", bo * 1e6 / n, bd * 1e6 / n, bo / bd, r[k / 2],
           r[0], r[k - 1], small_won, k, OB_DT_SMALL, ds ? "" : " (not run: it runs out)");
    return 1;
}

static void ob_band(nav_query *q, const nav_mesh *m, const char *mesh, const char *band,
                    const ob_req *rs, int n, const float ext[3], int reps, ob_buf *b, ob_family fam,
                    ob_sum *sum) {
    if (n == 0 || ob_cg(q, m, mesh, band, rs, n, ext, b, sum->detour, sum->detour_small) ||
        ob_pair(q, m, mesh, band, rs, n, ext, b, sum->detour, sum->detour_small))
        return;
    ob_fig c, o, iv;
    ob_dfig d = {0};
    double *lens = calloc((size_t)n, sizeof *lens);
    ob_run(q, m, rs, n, NAV_ALGO_CORRIDOR, ext, 1, b, &c, NULL); /* warm up */
    ob_run(q, m, rs, n, NAV_ALGO_OPTIMAL, ext, 1, b, &o, NULL);
    ob_run(q, m, rs, n, NAV_ALGO_CORRIDOR, ext, reps, b, &c, NULL);
    ob_run(q, m, rs, n, NAV_ALGO_OPTIMAL, ext, reps, b, &o, lens);
    /* the interval search, the exact search before the corner graph */
    nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_OFF);
    ob_run(q, m, rs, n, NAV_ALGO_OPTIMAL, ext, reps, b, &iv, NULL);
    nav_optimal_use_graph(q->opt, NAV_OPT_GRAPH_AUTO);
    ob_dfig ds = {0};
    int small = 0; /* the anchor is the small pool */
    if (sum->detour && lens)
        ob_detour(sum->detour, rs, n, ext, reps, lens, &d);
    if (sum->detour && sum->detour_small && lens) {
        ob_detour(sum->detour_small, rs, n, ext, reps, lens, &ds);
        small = ds.failed <= d.failed && ds.us < d.us;
    }
    free(lens);
    double ratio = o.us / c.us;
    printf("  %-10s %-6s            interval search (before) %8.2f us, nodes %7.0f, "
           "fallbacks %d | default (graph from %d polygons) / interval %5.2f\n",
           mesh, band, iv.us, iv.nodes / n, iv.fallback, NAV_OPT_GRAPH_MIN_POLYS, o.us / iv.us);
    double need = ob_opt && ob_need_on ? ob_needed(q, ob_opt, m, rs, n, ext, b) : 0;
    printf("  %-10s %-6s %4d queries: optimal %8.2f us  corridor %8.2f us  ratio %5.2f | nodes "
           "%7.0f vs %7.0f (ratio %4.2f), %3.0f%% needed | corridor paths %.2f%% longer | "
           "fallbacks %d\n",
           mesh, band, n, o.us, c.us, ratio, o.nodes / n, c.nodes / n,
           c.nodes > 0 ? o.nodes / c.nodes : 0.0, need,
           o.len > 0 ? 100.0 * (c.len - o.len) / o.len : 0.0, o.fallback);
    if (sum->detour && sum->detour_small)
        printf("  %-10s %-6s            Detour pool %d nodes %8.2f us (failed %d), pool %d nodes "
               "%8.2f us (failed %d): anchor pool %d\n",
               mesh, band, OB_DT_LARGE, d.us, d.failed, OB_DT_SMALL, ds.us, ds.failed,
               small ? OB_DT_SMALL : OB_DT_LARGE);
    if (small)
        d.us = ds.us;
    if (sum->detour) {
        double dr = o.us / d.us;
        printf("  %-10s %-6s            Detour   %8.2f us  optimal/Detour %5.2f  corridor/Detour "
               "%5.2f | Detour nodes %7.0f | Detour paths %.2f%% longer | Detour failed %d\n",
               mesh, band, d.us, dr, c.us / d.us, d.nodes / n,
               d.olen > 0 ? 100.0 * (d.len - d.olen) / d.olen : 0.0, d.failed);
        sum->dratio[fam] += dr;
        sum->ndratio[fam]++;
        size_t k = strlen(sum->dslower);
        if (dr > 1.0 && k + 48 < sizeof sum->dslower)
            snprintf(sum->dslower + k, sizeof sum->dslower - k, "%s%s %s %.2f", k ? ", " : "", mesh,
                     band, dr);
    } else {
        printf("  %-10s %-6s            Detour: not measured (cannot hold this mesh: %s)\n", mesh,
               band, detour_ref_layout());
    }
    if (fam == OB_WALLS) {
        sum->walls += ratio;
        sum->nwalls++;
    } else if (fam == OB_PILLARS) {
        sum->large += ratio;
        sum->nlarge++;
    } else {
        sum->shared += ratio;
        sum->nshared++;
    }
    size_t k = strlen(sum->slower);
    if (ratio > 1.0 && k + 48 < sizeof sum->slower)
        snprintf(sum->slower + k, sizeof sum->slower - k, "%s%s %s %.2f", k ? ", " : "", mesh, band,
                 ratio);
}

/* Rebuilds m's corner graph, timed (the mesh build made one already: the
   figure is the graph's own cost), and prints its size. */
static void ob_graph(nav_mesh *m, const char *name) {
    nav_corner_free(m->cgraph);
    m->cgraph = NULL;
    double t0 = bench_now();
    nav_status st = nav_corner_build(m);
    double t = bench_now() - t0;
    const nav_cgraph *g = m->cgraph;
    if (st != NAV_OK || !g) {
        printf("  %-10s corner graph: not built (%s) after %.3f s\n", name,
               st != NAV_OK ? nav_status_text(st) : "over its size limit", t);
        return;
    }
    printf("  %-10s corner graph: %u nodes, %llu edges (%.1f per node), %.2f MB, built in %.3f s "
           "(%u polygons)\n",
           name, nav_corner_node_count(g), (unsigned long long)nav_corner_edge_count(g),
           nav_corner_node_count(g) ? (double)nav_corner_edge_count(g) / nav_corner_node_count(g)
                                    : 0.0,
           (double)nav_corner_memory(g) / (1 << 20), t, m->npolys);
    /* a restart: the stored blob (mesh + graph section) back into a mesh */
    uint8_t *blob = NULL;
    size_t len = 0;
    if (nav_mesh_serialize(m, &blob, &len) != NAV_OK)
        return;
    nav_mesh *r = NULL;
    t0 = bench_now();
    nav_status ds = nav_mesh_deserialize(blob, len, &r, NULL);
    double tl = bench_now() - t0;
    printf("  %-10s stored blob %.2f MB; loading it (mesh rebuilt, graph loaded: %s) %.3f s\n",
           name, (double)len / (1 << 20),
           ds == NAV_OK && nav_mesh_graph_origin(r) == NAV_GRAPH_LOADED ? "yes" : "NO", tl);
    nav_mesh_free(r);
    free(blob);
}

static int ob_cmp(const void *a, const void *b) {
    double x = ((const ob_req *)a)->dist, y = ((const ob_req *)b)->dist;
    return (x > y) - (x < y);
}

static void ob_shared(nav_query *q, ob_buf *b, ob_sum *sum) {
    static const char *const names[] = {"dungeon", "nav_test", "undulating", "town"};
    const float ext[3] = {2, 4, 2};
    const char *only = getenv("NAVD_BENCH_ONLY");
    for (int k = 0; k < 4; k++) {
        if (only && *only && strcmp(only, names[k]) != 0)
            continue;
        char file[128];
        snprintf(file, sizeof file, "%s.navmesh.json", names[k]);
        const char *mp = fx_shared_mesh_path(file);
        nav_mesh *m = mp ? mj_load(mp) : NULL;
        snprintf(file, sizeof file, "%s.queries.json", names[k]);
        const char *qp = fx_shared_mesh_path(file);
        uint32_t nq = 0;
        mj_query *qs = m && qp ? mj_queries(qp, &nq) : NULL;
        if (!m || !qs) {
            printf("  ../shared absent or unreadable: skipping %s\n", names[k]);
            nav_mesh_free(m);
            free(qs);
            continue;
        }
        ob_req *rs = calloc(nq ? nq : 1, sizeof *rs);
        int n = 0;
        for (uint32_t i = 0; i < nq; i++) {
            if (!qs[i].complete)
                continue;
            memcpy(rs[n].start, qs[i].start, sizeof rs[n].start);
            memcpy(rs[n].end, qs[i].end, sizeof rs[n].end);
            rs[n].dist = nav_dist2d(qs[i].start, qs[i].end);
            n++;
        }
        qsort(rs, (size_t)n, sizeof *rs, ob_cmp);
        ob_graph(m, names[k]);
        sum->detour = detour_ref_new(m->verts, m->nverts, m->poly_start, m->poly_verts, m->poly_nei,
                                     m->npolys, OB_DT_LARGE);
        sum->detour_small = detour_ref_new(m->verts, m->nverts, m->poly_start, m->poly_verts,
                                           m->poly_nei, m->npolys, OB_DT_SMALL);
        int t = n / 3;
        ob_band(q, m, names[k], "short", rs, t, ext, 5, b, OB_SHARED, sum);
        ob_band(q, m, names[k], "medium", rs + t, t, ext, 5, b, OB_SHARED, sum);
        ob_band(q, m, names[k], "long", rs + 2 * t, n - 2 * t, ext, 5, b, OB_SHARED, sum);
        detour_ref_free(sum->detour);
        detour_ref_free(sum->detour_small);
        sum->detour = sum->detour_small = NULL;
        free(rs);
        free(qs);
        nav_mesh_free(m);
    }
}

/* A random point strictly inside a random polygon. */
static uint32_t ob_point(const nav_mesh *m, uint32_t *rng, float out[3]) {
    uint32_t p = fx_rand(rng) % m->npolys, n = nav_poly_nverts(m, p);
    double w[64], sum = 0;
    for (uint32_t k = 0; k < n && k < 64; k++)
        sum += (w[k] = 0.1 + fx_randf(rng));
    out[0] = out[1] = out[2] = 0;
    for (uint32_t k = 0; k < n && k < 64; k++)
        for (int i = 0; i < 3; i++)
            out[i] += (float)(w[k] / sum * nav_poly_vert(m, p, k)[i]);
    return p;
}

/*
 * Detour tiled against navd's exact search on one band: navd is exact, so
 * wherever its optimal answer is complete, Detour must reach the end
 * polygon too, and Detour's straight path cannot be shorter (1 mm for
 * Detour's quantised vertices and float arithmetic). Prints pairs checked
 * and violations; a violation means the tiling (portals, quantisation) or
 * the exact search is wrong.
 */
static void ob_dcheck(nav_query *q, const nav_mesh *m, detour_ref *d, const char *mesh,
                      const char *band, const ob_req *rs, int n, const float ext[3], ob_buf *b) {
    int checked = 0, incomplete = 0, shorter = 0;
    double worst = 0, excess = 0;
    for (int i = 0; i < n; i++) {
        if (ob_find(q, m, &rs[i], NAV_ALGO_OPTIMAL, ext, b) != NAV_OK || b->res.flags ||
            b->res.algorithm != NAV_ALGO_OPTIMAL)
            continue; /* not an exact complete answer: nothing to hold Detour to */
        double ol = 0, dl = 0;
        for (uint32_t c = 1; c < b->res.ncorners; c++)
            ol += hypot((double)b->corners[3 * c] - b->corners[3 * c - 3],
                        (double)b->corners[3 * c + 2] - b->corners[3 * c - 1]);
        checked++;
        if (detour_ref_path(d, rs[i].start, rs[i].end, ext, &dl, NULL) != 1) {
            incomplete++;
            continue;
        }
        if (dl < ol - 1e-3) {
            shorter++;
            worst = fmax(worst, ol - dl);
        }
        excess += ol > 0 ? (dl - ol) / ol : 0;
    }
    printf("  %-10s %-6s            Detour check: %d exact complete pairs, Detour partial or "
           "failed on %d, shorter than exact on %d (by up to %.4f); Detour %.2f%% longer on "
           "average\n",
           mesh, band, checked, incomplete, shorter, worst,
           checked > incomplete ? 100.0 * excess / (checked - incomplete) : 0.0);
}

/* A generated mesh over 100,000 polygons: walls = 0, 20 % single-cell holes
   (a field of pillars, the hard case for an exact search: see README);
   walls = 1, 15 % of the cells as wall segments (rooms and corridors). */
static void ob_large(nav_query *q, ob_buf *b, ob_sum *sum, int walls) {
    fx_random_opts o = fx_random_defaults();
    o.width = o.height = 320;
    o.hole_ratio = walls ? 0.15f : 0.2f;
    o.walls = walls;
    o.islands = 0;
    nav_mesh *m = fx_random(2024, &o);
    ob_graph(m, walls ? "walls320" : "random320");
    double t0 = bench_now();
    sum->detour = detour_ref_new(m->verts, m->nverts, m->poly_start, m->poly_verts, m->poly_nei,
                                 m->npolys, OB_DT_LARGE);
    const char *family = walls ? "walls320" : "random320";
    printf("  fx_random 320 x 320, %s: %u polygons; Detour: %s (%s, %.3f s)\n",
           walls ? "15% of cells in wall segments" : "holes 20%", nav_mesh_polygon_count(m),
           sum->detour ? "tiled dtNavMesh" : "not built", detour_ref_layout(), bench_now() - t0);
    static const struct {
        const char *name;
        double lo, hi;
        int n;
    } bands[] = {{"short", 2, 20, 200}, {"medium", 40, 100, 60}, {"long", 200, 450, 20}};
    const float ext[3] = {0.5f, 1, 0.5f};
    for (int k = 0; k < 3; k++) {
        ob_req *rs = calloc((size_t)bands[k].n, sizeof *rs);
        uint32_t rng = 777u + (uint32_t)k;
        int n = 0;
        for (int tries = 0; n < bands[k].n && tries < 1000000; tries++) {
            float s[3], e[3];
            uint32_t ps = ob_point(m, &rng, s), pe = ob_point(m, &rng, e);
            double d = nav_dist2d(s, e);
            if (d < bands[k].lo || d > bands[k].hi || !nav_mesh_reachable(m, ps, pe))
                continue;
            memcpy(rs[n].start, s, sizeof s);
            memcpy(rs[n].end, e, sizeof e);
            rs[n].dist = d;
            n++;
        }
        const char *cg = getenv("NAVD_BENCH_CG"), *pair = getenv("NAVD_BENCH_PAIR");
        if (sum->detour && !(cg && *cg) && !(pair && *pair))
            ob_dcheck(q, m, sum->detour, family, bands[k].name, rs, n, ext, b);
        ob_band(q, m, family, bands[k].name, rs, n, ext, k == 2 ? 2 : 3, b,
                walls ? OB_WALLS : OB_PILLARS, sum);
        free(rs);
    }
    detour_ref_free(sum->detour);
    sum->detour = NULL;
    nav_mesh_free(m);
}

void bench_optimal(void) {
    printf("\n== optimal (interval search) vs corridor (A* + string pulling), nav_find_path, "
           "uncached\n");
    /* the service's default pool (--max-nodes 65536): searches that need
       more fall back to the corridor search as in the service, and the
       fallbacks column counts them */
    nav_query *q = nav_query_new(1u << 16);
    ob_buf *b = malloc(sizeof *b);
    if (!q || !b) {
        printf("  allocation failed\n");
        nav_query_free(q);
        free(b);
        return;
    }
    printf("  (needed: share of the expanded intervals that are, somewhere on their edge, the\n"
           "   cheapest of all intervals expanded there; perfect dominance pruning could remove\n"
           "   only the rest)\n");
    ob_opt = nav_optimal_new(1u << 18); /* the analysis wants complete searches */
    ob_need_on = getenv("NAVD_BENCH_NEEDED") && getenv("NAVD_BENCH_NEEDED")[0] == '1';
    ob_sum sum = {0};
    ob_shared(q, b, &sum);
    /* NAVD_BENCH_ONLY=<shared mesh>: that mesh alone, no grids (quick
       same-run ratios while tuning); =random320, =walls320 or =grids: the
       generated grids alone (the shared meshes match no such name) */
    const char *only = getenv("NAVD_BENCH_ONLY");
    int all = !only || !*only, grids = !all && strcmp(only, "grids") == 0;
    if (all || grids || strcmp(only, "random320") == 0)
        ob_large(q, b, &sum, 0);
    if (all || grids || strcmp(only, "walls320") == 0)
        ob_large(q, b, &sum, 1);
    int nall = sum.nshared + sum.nlarge + sum.nwalls;
    printf("  mean optimal/corridor time ratio (< 1: optimal faster):");
    if (sum.nshared)
        printf(" shared meshes %.2f (%d bands),", sum.shared / sum.nshared, sum.nshared);
    if (sum.nlarge)
        printf(" random320 %.2f (%d bands),", sum.large / sum.nlarge, sum.nlarge);
    if (sum.nwalls)
        printf(" walls320 %.2f (%d bands),", sum.walls / sum.nwalls, sum.nwalls);
    if (nall)
        printf(" all %.2f\n", (sum.shared + sum.large + sum.walls) / nall);
    printf("  optimal slower than corridor in: %s\n", sum.slower[0] ? sum.slower : "no band");
    printf("  mean optimal/Detour time ratio (< 1: optimal faster):");
    static const char *const fams[3] = {"shared meshes", "random320", "walls320"};
    for (int f = 0; f < 3; f++)
        if (sum.ndratio[f])
            printf(" %s %.2f (%d bands)", fams[f], sum.dratio[f] / sum.ndratio[f], sum.ndratio[f]);
    printf("\n  optimal slower than Detour in: %s\n", sum.dslower[0] ? sum.dslower : "no band");
    nav_optimal_free(ob_opt);
    ob_opt = NULL;
    free(b);
    nav_query_free(q);
}

/*
 * reachable max_cost: the exact answer (uniform costs: the interval search
 * flooding without a goal) against the Dijkstra from closest portal point to
 * closest portal point, which navd uses for non-uniform costs and used for
 * every request before. The Dijkstra is forced by a cost of 1.0001 on every
 * area, with the budget scaled alike. Prints
 * us/query and polygons listed (the Dijkstra lists a subset: the exact
 * answer's excess is what it missed), and how many exact answers ran out of
 * nodes (they then add the Dijkstra's polygons and say truncated).
 */
static void rb_run(const char *name, const nav_mesh *m, const double *costs, int ncost, int nq,
                   uint32_t *ids) {
    nav_query *q = nav_query_new(1u << 16);
    for (int c = 0; c < ncost; c++) {
        double us[2], listed[2];
        int trunc_n = 0;
        for (int k = 0; k < 2; k++) {
            nav_filter f;
            nav_filter_default(&f);
            double budget = costs[c];
            if (k == 1) { /* every area at 1.0001, the budget with it: the Dijkstra */
                for (int a = 0; a < NAV_MAX_AREAS; a++)
                    f.area_cost[a] = 1.0001f;
                budget *= 1.0001;
            }
            uint32_t rng = 4242;
            float s[3];
            uint32_t n = 0;
            double area;
            bool tr;
            uint32_t sp = fx_random_point(m, &rng, s); /* warm: tables sized for this mesh */
            nav_reach_cost(q, m, sp, s, budget, &f, ids, m->npolys, &n, &area, &tr);
            rng = 4243;
            double t0 = bench_now(), sum = 0;
            for (int i = 0; i < nq; i++) {
                sp = fx_random_point(m, &rng, s);
                nav_reach_cost(q, m, sp, s, budget, &f, ids, m->npolys, &n, &area, &tr);
                sum += n;
                trunc_n += k == 0 && tr;
            }
            us[k] = (bench_now() - t0) * 1e6 / nq;
            listed[k] = sum / nq;
        }
        printf("  %-10s max_cost %5.0f m: exact %9.1f us, %8.1f polygons | dijkstra %8.1f us, "
               "%8.1f polygons (%.1f%% missed) | exact out of nodes %d of %d\n",
               name, costs[c], us[0], listed[0], us[1], listed[1],
               listed[0] > 0 ? 100.0 * (listed[0] - listed[1]) / listed[0] : 0.0, trunc_n, nq);
    }
    nav_query_free(q);
}

void bench_reach(void) {
    printf("\n== reachable max_cost: exact (uniform costs) vs the portal-point Dijkstra, "
           "in process, 65,536 nodes\n");
    static const char *const names[] = {"dungeon", "nav_test", "undulating"};
    static const double small[] = {10, 30};
    for (int k = 0; k < 3; k++) {
        char file[128];
        snprintf(file, sizeof file, "%s.navmesh.json", names[k]);
        const char *mp = fx_shared_mesh_path(file);
        nav_mesh *m = mp ? mj_load(mp) : NULL;
        if (!m) {
            printf("  ../shared absent or unreadable: skipping %s\n", names[k]);
            continue;
        }
        uint32_t *ids = malloc(sizeof(uint32_t) * m->npolys);
        if (ids)
            rb_run(names[k], m, small, 2, 500, ids);
        free(ids);
        nav_mesh_free(m);
    }
    static const double large[] = {10, 30, 100};
    for (int w = 0; w < 2; w++) {
        fx_random_opts o = fx_random_defaults();
        o.width = o.height = 320;
        o.hole_ratio = w ? 0.15f : 0.2f;
        o.walls = w;
        o.islands = 0;
        nav_mesh *m = fx_random(2024, &o);
        uint32_t *ids = malloc(sizeof(uint32_t) * m->npolys);
        if (ids)
            rb_run(w ? "walls320" : "random320", m, large, 3, 10, ids);
        free(ids);
        nav_mesh_free(m);
    }
}
