/*
 * nav_bake_tile.c: runs the stages over tiles and profiles, on threads, and
 * assembles the per-profile meshes.
 *
 * Profiles are grouped by what the heightfield stages depend on (height and
 * climb in cells, slope): each group rasterizes, filters and builds its
 * compact heightfield once per tile; each profile of the group then erodes
 * its own copy of the areas and runs regions, contours, polygons and the
 * detail mesh on it. Radius counts in whole cells, so two profiles of a
 * group can erode alike (0.4 and 0.6 m are both 2 cells of 0.3 m): then,
 * without generated links, the later one is the earlier one's twin, and
 * its mesh is joined from the earlier one's tile outputs.
 *
 * Tiles (tile_size > 0) are windows of one global grid, widened by a border
 * of radius + 3 cells whose spans are painted as a border region: filters
 * and erosion see the neighbours' geometry, contours stop exactly on the
 * tile line. Workers take tiles from a shared counter; every tile writes
 * only its own output slot, and assembly walks tiles in index order, so the
 * result does not depend on the thread count or finishing order. Where a
 * polygon edge lies on a tile line, the vertices of the other side that fall
 * inside it are inserted (collinear), so both sides share exact vertices
 * and nav_mesh_build connects them.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nav/nav_bake_internal.h"

struct nb_ctx {
    pthread_mutex_t mu;
    nav_bake_progress_fn fn;
    void *ud;
    atomic_int cancelled;
    float last;             /* progress last reported */
    const char *last_stage; /* stage last reported */
    double last_call_ms;    /* when the callback last ran */
    uint64_t done, total;
    const nav_bake_limits *lim;
    atomic_uint_fast64_t spans;
    double stage_ms[NAV_BAKE_STAGE_COUNT];
};

static double nb_now_ms(void);

/*
 * Also the cancellation poll inside long stages: at most every 10 ms (one
 * thread at a time; others skip the poll rather than wait), the callback
 * hears the current stage and progress again, so a caller can cancel a
 * bake whose stages take seconds (a huge tile) without waiting for them.
 */
bool nb_cancelled(nb_ctx *c) {
    if (!c)
        return false;
    if (atomic_load(&c->cancelled))
        return true;
    if (c->fn && pthread_mutex_trylock(&c->mu) == 0) {
        double now = nb_now_ms();
        if (now - c->last_call_ms >= 10.0) {
            c->last_call_ms = now;
            if (!atomic_load(&c->cancelled) && c->fn(c->ud, c->last_stage, c->last))
                atomic_store(&c->cancelled, 1);
        }
        pthread_mutex_unlock(&c->mu);
    }
    return atomic_load(&c->cancelled);
}

void nb_step(nb_ctx *c, nav_bake_stage stage, double ms, uint64_t units) {
    pthread_mutex_lock(&c->mu);
    c->stage_ms[stage] += ms;
    c->done += units;
    float p = c->total ? (float)((double)c->done / (double)c->total) * 0.97f : 0;
    if (p < c->last)
        p = c->last;
    if (p > 1)
        p = 1;
    c->last = p;
    c->last_stage = nav_bake_stage_text(stage);
    c->last_call_ms = nb_now_ms();
    if (c->fn && !atomic_load(&c->cancelled) && c->fn(c->ud, c->last_stage, p))
        atomic_store(&c->cancelled, 1);
    pthread_mutex_unlock(&c->mu);
}

static double nb_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Bytes per span a profile's stages hold at most: areas, regions, the
   distance field and its blur (the field's memory then holds the growth
   distances) and the sweep's sorted list, which is also the candidate
   list (span indices). */
#define NB_PROFILE_SPAN_BYTES (1 + 2 + 2 * 2 + 4)

/* ---- one bake's plan ---- */
typedef struct nb_group {
    int height, climb; /* cells */
    float slope_cos;
    uint32_t members[NAV_BAKE_MAX_PROFILES];
    uint32_t n;
    uint32_t own[NAV_BAKE_MAX_PROFILES]; /* the members whose stages run (not twins) */
    uint32_t nown;
} nb_group;

typedef struct nb_plan {
    const float *verts;
    const uint32_t *tris;
    uint32_t ntris;
    const nav_bake_settings *s;
    const nav_bake_profile *prof;
    uint32_t nprof;
    nb_group groups[NAV_BAKE_MAX_PROFILES];
    uint32_t ngroups;
    int radius[NAV_BAKE_MAX_PROFILES];    /* cells */
    uint32_t twin[NAV_BAKE_MAX_PROFILES]; /* the profile whose stage outputs p's mesh is built
                                             from: p, or an earlier one that bakes the same */
    float bmin[3], ymax;
    int gw, gh;     /* global grid */
    int ts, border; /* tile side (cells), border (cells) */
    int ntx, ntz;
    nb_out *out; /* ntiles * nprof */
    size_t *tile_bytes;
    uint32_t *bin_start, *bin; /* tiled: triangles meeting tile t's window, in order */
    atomic_int next;
    nb_ctx *ctx;
    pthread_mutex_t err_mu;
    nav_status st;
    int err_tile;
    nav_error err;
} nb_plan;

static void nb_plan_fail(nb_plan *pl, int tile, nav_status st, const char *msg) {
    pthread_mutex_lock(&pl->err_mu);
    /* keep the lowest tile's failure so the message does not depend on timing */
    if (pl->st == NAV_OK || tile < pl->err_tile) {
        pl->st = st;
        pl->err_tile = tile;
        snprintf(pl->err.message, sizeof pl->err.message, "%s", msg);
    }
    pthread_mutex_unlock(&pl->err_mu);
    atomic_store(&pl->ctx->cancelled, 1);
}

/* The compact heightfield beside the heightfield: cells, floors,
   clearances, areas. */
static size_t nb_chf_bytes(const nb_chf *c) {
    return ((size_t)c->w * c->h + 1) * 4 + (size_t)c->nspans * (2 + 1 + 1);
}

/* Once linked (the heightfield freed): the neighbour table (16 bytes per
   span) and the edge distance (2) replace the clearances (1). */
static size_t nb_chf_live_bytes(const nb_chf *c) {
    return nb_chf_bytes(c) + (size_t)c->nspans * (16 + 2 - 1);
}

/* Regions, contours, polygons and detail for one profile on a shared chf. */
static nav_status nb_profile_stages(nb_plan *pl, const nb_chf *chf, uint32_t p, nb_out *o,
                                    size_t *bytes) {
    const nav_bake_settings *s = pl->s;
    nb_ctx *ctx = pl->ctx;
    nb_work wk = {.chf = chf};
    size_t n = chf->nspans + 1;
    wk.area = malloc(n);
    wk.reg = malloc(n * sizeof *wk.reg);
    nav_status st = NAV_E_NOMEM;
    *bytes = n * NB_PROFILE_SPAN_BYTES;
    if (!wk.area || !wk.reg)
        goto out;
    memcpy(wk.area, chf->area, chf->nspans);
    double t = nb_now_ms();
    nb_erode(&wk, pl->radius[p]);
    nb_mark_volumes(chf, wk.area, s->volumes, s->nvolumes);
    double t2 = nb_now_ms();
    nb_step(ctx, NAV_BAKE_STAGE_ERODE, t2 - t, 1);
    int min_area = (int)(s->region_min_size * s->region_min_size);
    int merge_area = (int)(s->region_merge_size * s->region_merge_size);
    if (s->partition == NAV_BAKE_MONOTONE)
        st = nb_regions_monotone(&wk, min_area, merge_area, ctx);
    else
        st = nb_regions_watershed(&wk, min_area, merge_area, ctx);
    if (st != NAV_OK)
        goto out;
    t = nb_now_ms();
    nb_step(ctx, NAV_BAKE_STAGE_REGIONS, t - t2, 4);
    nb_cset cs;
    int max_edge = (int)(s->edge_max_len / s->cell_size);
    st = nb_contours(&wk, s->edge_max_error, max_edge, &cs, ctx);
    if (st != NAV_OK)
        goto out;
    t2 = nb_now_ms();
    nb_step(ctx, NAV_BAKE_STAGE_CONTOURS, t2 - t, 1);
    st = nb_polys(&cs, (int)s->max_verts_per_poly, &o->pm);
    nb_cset_free(&cs);
    if (st != NAV_OK)
        goto out;
    t = nb_now_ms();
    nb_step(ctx, NAV_BAKE_STAGE_POLYGONS, t - t2, 1);
    st = nb_detail(&wk, &o->pm, s->detail_sample_dist, s->detail_sample_max_error, &o->dm, ctx);
    if (st != NAV_OK)
        goto out;
    nb_step(ctx, NAV_BAKE_STAGE_DETAIL, nb_now_ms() - t, 2);
out:
    free(wk.area);
    free(wk.reg);
    return nb_cancelled(ctx) && st == NAV_OK ? NAV_E_CANCELLED : st;
}

/* The profiles of one group on one tile's shared heightfield. */
typedef struct nb_pjob {
    nb_plan *pl;
    const nb_chf *chf;
    const nb_group *g;
    int tile;
    atomic_uint next;
    nav_status st[NAV_BAKE_MAX_PROFILES];
    size_t bytes[NAV_BAKE_MAX_PROFILES];
} nb_pjob;

static void *nb_profile_worker(void *arg) {
    nb_pjob *pj = arg;
    for (;;) {
        uint32_t k = atomic_fetch_add(&pj->next, 1);
        if (k >= pj->g->nown)
            break;
        uint32_t p = pj->g->own[k];
        pj->st[k] = nb_profile_stages(
            pj->pl, pj->chf, p, &pj->pl->out[(size_t)pj->tile * pj->pl->nprof + p], &pj->bytes[k]);
        if (pj->st[k] != NAV_OK)
            atomic_store(&pj->pl->ctx->cancelled, 1); /* stop the others soon */
    }
    return NULL;
}

/* Rasterize, filter: the tile's heightfield for group g, with the span
   and memory limits checked; *hf_bytes: what it held. */
static nav_status nb_tile_heightfield(nb_plan *pl, int tile, const nb_group *g, nb_hf *hf,
                                      size_t *hf_bytes, nav_error *e) {
    nb_ctx *ctx = pl->ctx;
    int tx = pl->ts ? tile % pl->ntx : 0, tz = pl->ts ? tile / pl->ntx : 0;
    int x0 = pl->ts ? tx * pl->ts - pl->border : 0, z0 = pl->ts ? tz * pl->ts - pl->border : 0;
    int w = pl->ts ? pl->ts + 2 * pl->border : pl->gw;
    int h = pl->ts ? pl->ts + 2 * pl->border : pl->gh;
    double t = nb_now_ms();
    nav_status st = nb_hf_init(hf, x0, z0, w, h, pl->bmin, pl->s->cell_size, pl->s->cell_height);
    if (st != NAV_OK)
        return st;
    if (pl->bin_start)
        st = nb_rasterize(hf, pl->verts, pl->tris, pl->bin_start[tile + 1] - pl->bin_start[tile],
                          pl->bin + pl->bin_start[tile], g->slope_cos, g->climb, pl->ymax, ctx);
    else
        st = nb_rasterize(hf, pl->verts, pl->tris, pl->ntris, NULL, g->slope_cos, g->climb,
                          pl->ymax, ctx);
    if (st != NAV_OK)
        return st;
    *hf_bytes = (size_t)w * h * 4 + (size_t)hf->cap * sizeof(nb_span);
    uint64_t total = atomic_fetch_add(&ctx->spans, hf->live) + hf->live;
    if (ctx->lim && ctx->lim->max_spans && total > ctx->lim->max_spans)
        return nav_bake_fail(e, NAV_E_LIMIT,
                             "the level rasterizes to more than the limit of %llu spans",
                             (unsigned long long)ctx->lim->max_spans);
    if (ctx->lim && ctx->lim->max_memory && *hf_bytes > ctx->lim->max_memory)
        return nav_bake_fail(e, NAV_E_LIMIT,
                             "the heightfield needs %zu bytes, more than the limit of %llu bytes",
                             *hf_bytes, (unsigned long long)ctx->lim->max_memory);
    double t2 = nb_now_ms();
    nb_step(ctx, NAV_BAKE_STAGE_RASTERIZE, t2 - t, 4);
    nb_filter_low_obstacles(hf, g->climb);
    if (!nb_filter_ledges(hf, g->height, g->climb, ctx))
        return NAV_E_CANCELLED;
    nb_filter_low_height(hf, g->height);
    nb_step(ctx, NAV_BAKE_STAGE_FILTER, nb_now_ms() - t2, 1);
    return NAV_OK;
}

/* The profiles of group g on the tile's compact heightfield (side by side
   on one tile with threads > 1); *peak grows to their working set. */
static nav_status nb_tile_profiles(nb_plan *pl, int tile, const nb_group *g, const nb_chf *chf,
                                   size_t *peak) {
    nb_pjob pj = {.pl = pl, .chf = chf, .g = g, .tile = tile};
    atomic_init(&pj.next, 0);
    for (uint32_t k = 0; k < g->nown; k++)
        pj.st[k] = NAV_OK;
    /* each profile writes only its own slot, so the result is the same */
    uint32_t nth = pl->ntx * pl->ntz == 1 && pl->s->threads > 1 ? pl->s->threads : 1;
    nth = nth > g->nown ? g->nown : nth;
    nth = nth > 16 ? 16 : nth;
    pthread_t th[16];
    uint32_t started = 0;
    for (uint32_t i = 1; i < nth; i++)
        if (pthread_create(&th[started], NULL, nb_profile_worker, &pj) == 0)
            started++;
    nb_profile_worker(&pj);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    nav_status st = NAV_OK;
    for (uint32_t k = 0; k < g->nown; k++) {
        /* the first real failure, not the cancellation it caused in others */
        if (pj.st[k] != NAV_OK && (st == NAV_OK || st == NAV_E_CANCELLED))
            st = pj.st[k];
        if (nb_chf_live_bytes(chf) + pj.bytes[k] > *peak)
            *peak = nb_chf_live_bytes(chf) + pj.bytes[k];
    }
    return st;
}

static nav_status nb_group_tile(nb_plan *pl, int tile, const nb_group *g, nav_error *e) {
    nb_ctx *ctx = pl->ctx;
    nb_hf hf;
    size_t hf_bytes = 0;
    nav_status st = nb_tile_heightfield(pl, tile, g, &hf, &hf_bytes, e);
    if (st != NAV_OK) {
        nb_hf_free(&hf);
        return st;
    }
    double t = nb_now_ms();
    nb_chf chf;
    st = nb_chf_build(&hf, g->height, g->climb, pl->ts ? pl->border : 0, &chf);
    nb_hf_free(&hf);
    if (st != NAV_OK)
        return st;
    st = nb_chf_link(&chf, ctx);
    if (st == NAV_OK)
        st = nb_edge_distance(&chf);
    if (st != NAV_OK) {
        nb_chf_free(&chf);
        return st;
    }
    nb_step(ctx, NAV_BAKE_STAGE_COMPACT, nb_now_ms() - t, 1);
    /* the rest of the tile: its compact heightfield and, per profile baked
       at once, the per-span arrays; times the tiles running together */
    uint32_t conc = pl->s->threads > 1 ? pl->s->threads : 1;
    size_t need =
        (nb_chf_live_bytes(&chf) + ((size_t)chf.nspans + 1) * NB_PROFILE_SPAN_BYTES * conc) *
        (pl->ntx * pl->ntz > 1 ? conc : 1);
    if (ctx->lim && ctx->lim->max_memory && need > ctx->lim->max_memory) {
        nb_chf_free(&chf);
        return nav_bake_fail(e, NAV_E_LIMIT,
                             "the bake needs %zu bytes at once, more than the limit of %llu bytes",
                             need, (unsigned long long)ctx->lim->max_memory);
    }
    /* while the compact heightfield is built the heightfield is alive,
       the neighbour table not yet */
    size_t peak = hf_bytes + nb_chf_bytes(&chf);
    st = nb_tile_profiles(pl, tile, g, &chf, &peak);
    if (peak > pl->tile_bytes[tile])
        pl->tile_bytes[tile] = peak;
    nb_chf_free(&chf);
    return st;
}

static void *nb_worker(void *arg) {
    nb_plan *pl = arg;
    int ntiles = pl->ntx * pl->ntz;
    for (;;) {
        int t = atomic_fetch_add(&pl->next, 1);
        if (t >= ntiles || nb_cancelled(pl->ctx))
            break;
        for (uint32_t g = 0; g < pl->ngroups; g++) {
            nav_error e = {0};
            nav_status st = nb_group_tile(pl, t, &pl->groups[g], &e);
            if (st != NAV_OK) {
                nb_plan_fail(pl, t, st, e.message[0] ? e.message : nav_status_text(st));
                break;
            }
        }
    }
    return NULL;
}

static bool nb_has_links(const nav_bake_profile *pr) {
    return pr->link_drop > 0 || pr->link_jump > 0 || pr->link_climb > 0;
}

static void nb_plan_groups(nb_plan *pl) {
    const nav_bake_settings *s = pl->s;
    for (uint32_t i = 0; i < pl->nprof; i++) {
        const nav_bake_profile *pr = &pl->prof[i];
        int height = (int)ceilf(pr->height / s->cell_height);
        int climb = (int)floorf(pr->max_climb / s->cell_height);
        float sc = cosf(pr->max_slope / 180.0f * 3.14159265f);
        pl->radius[i] = (int)ceilf(pr->radius / s->cell_size);
        uint32_t g = 0;
        for (; g < pl->ngroups; g++)
            if (pl->groups[g].height == height && pl->groups[g].climb == climb &&
                pl->groups[g].slope_cos == sc)
                break;
        if (g == pl->ngroups) {
            pl->groups[g].height = height;
            pl->groups[g].climb = climb;
            pl->groups[g].slope_cos = sc;
            pl->groups[g].n = 0;
            pl->groups[g].nown = 0;
            pl->ngroups++;
        }
        nb_group *gr = &pl->groups[g];
        /* A member of the same group with the same radius in cells and no
           generated links bakes the same mesh: erosion, regions, contours,
           polygons and detail see exactly the same inputs. Its stages run
           once; the twin's mesh is joined from the same tile outputs. */
        pl->twin[i] = i;
        for (uint32_t k = 0; k < gr->n && !nb_has_links(pr); k++) {
            uint32_t q = gr->members[k];
            if (pl->radius[q] == pl->radius[i] && !nb_has_links(&pl->prof[q])) {
                pl->twin[i] = pl->twin[q];
                break;
            }
        }
        gr->members[gr->n++] = i;
        if (pl->twin[i] == i)
            gr->own[gr->nown++] = i;
    }
}

static nav_status nb_plan_grid(nb_plan *pl, const nav_level *level, nav_error *err) {
    const nav_bake_settings *s = pl->s;
    float bmax[3];
    nav_level_bounds(level, pl->bmin, bmax);
    pl->ymax = bmax[1];
    double gw = floor((double)(bmax[0] - pl->bmin[0]) / s->cell_size + 0.5);
    double gh = floor((double)(bmax[2] - pl->bmin[2]) / s->cell_size + 0.5);
    double gy = ceil((double)(bmax[1] - pl->bmin[1]) / s->cell_height);
    gw = gw < 1 ? 1 : gw;
    gh = gh < 1 ? 1 : gh;
    if (gw > 1e6 || gh > 1e6 || gw * gh > 4e9)
        return nav_bake_fail(err, NAV_E_LIMIT,
                             "the level is %.0f x %.0f cells, more than a bake can hold "
                             "(raise cell_size)",
                             gw, gh);
    if (gy > NB_SPAN_MAX - 1024)
        return nav_bake_fail(err, NAV_E_LIMIT,
                             "the level is %.0f cells high, more than the %d a bake can hold "
                             "(raise cell_height)",
                             gy, NB_SPAN_MAX - 1024);
    pl->gw = (int)gw;
    pl->gh = (int)gh;
    int rmax = 0;
    for (uint32_t i = 0; i < pl->nprof; i++)
        rmax = pl->radius[i] > rmax ? pl->radius[i] : rmax;
    pl->ts = (int)s->tile_size;
    pl->border = pl->ts ? rmax + 3 : 0;
    pl->ntx = pl->ts ? (pl->gw + pl->ts - 1) / pl->ts : 1;
    pl->ntz = pl->ts ? (pl->gh + pl->ts - 1) / pl->ts : 1;
    uint64_t cells = (uint64_t)pl->ntx * pl->ntz *
                     (pl->ts ? (uint64_t)(pl->ts + 2 * pl->border) * (pl->ts + 2 * pl->border)
                             : (uint64_t)pl->gw * pl->gh);
    const nav_bake_limits *lim = pl->ctx->lim;
    if (lim && lim->max_cells && cells > lim->max_cells)
        return nav_bake_fail(err, NAV_E_LIMIT,
                             "the bake needs %llu cells, more than the limit of %llu "
                             "(raise cell_size)",
                             (unsigned long long)cells, (unsigned long long)lim->max_cells);
    /* columns plus a first guess of spans: the least the bake will hold */
    uint64_t est =
        pl->ts ? (uint64_t)(pl->ts + 2 * pl->border) * (pl->ts + 2 * pl->border) * 10 : cells * 10;
    if (lim && lim->max_memory && est > lim->max_memory)
        return nav_bake_fail(err, NAV_E_LIMIT,
                             "the bake needs at least %llu bytes, more than the limit of %llu",
                             (unsigned long long)est, (unsigned long long)lim->max_memory);
    return NAV_OK;
}

static void nb_plan_free(nb_plan *pl) {
    if (pl->out)
        for (size_t i = 0; i < (size_t)pl->ntx * pl->ntz * pl->nprof; i++) {
            nb_pmesh_free(&pl->out[i].pm);
            nb_dmesh_free(&pl->out[i].dm);
        }
    free(pl->out);
    free(pl->tile_bytes);
    free(pl->bin_start);
    free(pl->bin);
}

/* The tiles whose window (with border) a triangle's xz box meets, so a
   tile rasterizes only its own triangles (two passes: count, fill). */
static nav_status nb_plan_bins(nb_plan *pl) {
    int ntiles = pl->ntx * pl->ntz;
    pl->bin_start = calloc((size_t)ntiles + 1, sizeof *pl->bin_start);
    if (!pl->bin_start)
        return NAV_E_NOMEM;
    const float cs = pl->s->cell_size, span = (float)pl->ts * cs,
                pad = (float)(pl->border + 1) * cs;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t t = 0; t < pl->ntris; t++) {
            float mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY};
            for (int k = 0; k < 3; k++) {
                const float *v = &pl->verts[3 * (size_t)pl->tris[3 * (size_t)t + k]];
                mn[0] = v[0] < mn[0] ? v[0] : mn[0];
                mx[0] = v[0] > mx[0] ? v[0] : mx[0];
                mn[1] = v[2] < mn[1] ? v[2] : mn[1];
                mx[1] = v[2] > mx[1] ? v[2] : mx[1];
            }
            int tx0 = (int)floorf((mn[0] - pl->bmin[0] - pad) / span);
            int tx1 = (int)floorf((mx[0] - pl->bmin[0] + pad) / span);
            int tz0 = (int)floorf((mn[1] - pl->bmin[2] - pad) / span);
            int tz1 = (int)floorf((mx[1] - pl->bmin[2] + pad) / span);
            tx0 = tx0 < 0 ? 0 : tx0;
            tz0 = tz0 < 0 ? 0 : tz0;
            tx1 = tx1 >= pl->ntx ? pl->ntx - 1 : tx1;
            tz1 = tz1 >= pl->ntz ? pl->ntz - 1 : tz1;
            for (int tz = tz0; tz <= tz1; tz++)
                for (int tx = tx0; tx <= tx1; tx++) {
                    int tile = tx + tz * pl->ntx;
                    if (pass == 0)
                        pl->bin_start[tile + 1]++;
                    else
                        pl->bin[pl->bin_start[tile]++] = t;
                }
        }
        if (pass == 0) {
            for (int i = 0; i < ntiles; i++)
                pl->bin_start[i + 1] += pl->bin_start[i];
            pl->bin = malloc(((size_t)pl->bin_start[ntiles] + 1) * sizeof *pl->bin);
            if (!pl->bin)
                return NAV_E_NOMEM;
        } else {
            for (int i = ntiles; i > 0; i--)
                pl->bin_start[i] = pl->bin_start[i - 1];
            pl->bin_start[0] = 0;
        }
    }
    return NAV_OK;
}

static nav_status nb_run_tiles(nb_plan *pl) {
    uint32_t nthreads = pl->s->threads ? pl->s->threads : 1;
    int ntiles = pl->ntx * pl->ntz;
    if (nthreads > (uint32_t)ntiles)
        nthreads = (uint32_t)ntiles;
    pthread_t th[64];
    if (nthreads > 64)
        nthreads = 64;
    uint32_t started = 0;
    for (uint32_t i = 1; i < nthreads; i++) {
        if (pthread_create(&th[started], NULL, nb_worker, pl) != 0)
            break; /* fewer threads: the same result, later */
        started++;
    }
    nb_worker(pl);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return pl->st;
}

/* Joins profile p's tiles into its mesh, then generates its links (and
   joins again with them). */
static nav_status nb_finish_profile(nb_plan *pl, const nav_level *level, uint32_t p,
                                    nb_trigrid **tg, nav_mesh **meshes_out, nav_bake_report *report,
                                    nav_error *err) {
    const nav_bake_settings *s = pl->s;
    const nav_bake_profile *pr = &pl->prof[p];
    double t = nb_now_ms();
    uint32_t np = 0;
    nb_grid g = {{pl->bmin[0], pl->bmin[1], pl->bmin[2]},
                 s->cell_size,
                 s->cell_height,
                 pl->ts,
                 pl->ntx,
                 pl->ntz,
                 pl->groups[0].climb,
                 (double)s->region_min_size * s->region_min_size * s->cell_size * s->cell_size,
                 1};
    /* nb_finish_all joins the profiles side by side; the last one to
       start has the threads to itself as the others finish, so its corner
       graph gets all of them (the graph is the same on any number) */
    if (p + 1 == pl->nprof && s->threads > 1)
        g.threads = s->threads;
    for (uint32_t k = 0; k < pl->ngroups; k++)
        for (uint32_t j = 0; j < pl->groups[k].n; j++)
            if (pl->groups[k].members[j] == p)
                g.ytol = pl->groups[k].climb;
    /* a profile with links is joined again with them, and only that mesh
       is kept: the first one needs no corner graph (the links' probes do
       not search paths) */
    uint32_t graph_threads = g.threads;
    if (nb_has_links(pr))
        g.threads = 0;
    nav_status st =
        nb_assemble(pl->out, pl->nprof, pl->twin[p], &g, NULL, 0, &meshes_out[p], &np, err);
    g.threads = graph_threads;
    if (st == NAV_E_EMPTY)
        nav_bake_fail(err, st, "profiles.%s has no walkable surface", pr->name);
    if (report)
        report->polygons[p] = np;
    nb_step(pl->ctx, NAV_BAKE_STAGE_BUILD, nb_now_ms() - t, 0);
    if (st == NAV_OK && nb_has_links(pr)) {
        t = nb_now_ms();
        if (!*tg)
            *tg = nb_trigrid_new(level);
        nav_link_input *links = NULL;
        uint32_t nl = 0;
        st = *tg ? nb_links(meshes_out[p], *tg, pr, s->cell_size, &links, &nl) : NAV_E_NOMEM;
        if (st == NAV_OK) {
            /* the same polygons again, now with their links (if any) and
               the corner graph */
            nav_mesh_free(meshes_out[p]);
            meshes_out[p] = NULL;
            st = nb_assemble(pl->out, pl->nprof, p, &g, links, nl, &meshes_out[p], &np, err);
        } else {
            nav_bake_fail(err, st, "out of memory");
        }
        free(links);
        if (report)
            report->links[p] = nl;
        nb_step(pl->ctx, NAV_BAKE_STAGE_LINKS, nb_now_ms() - t, 0);
    }
    if (st == NAV_OK && nb_cancelled(pl->ctx))
        st = nav_bake_fail(err, NAV_E_CANCELLED, "the bake was cancelled");
    return st;
}

/* The profiles' joins and links, side by side on threads > 1. */
typedef struct nb_fjob {
    nb_plan *pl;
    const nav_level *level;
    nb_trigrid *tg;
    nav_mesh **meshes_out;
    nav_bake_report *report;
    atomic_uint next;
    nav_status st[NAV_BAKE_MAX_PROFILES];
    nav_error err[NAV_BAKE_MAX_PROFILES];
} nb_fjob;

static void *nb_finish_worker(void *arg) {
    nb_fjob *fj = arg;
    for (;;) {
        uint32_t p = atomic_fetch_add(&fj->next, 1);
        if (p >= fj->pl->nprof)
            break;
        nb_trigrid *tg = fj->tg;
        fj->st[p] =
            nb_finish_profile(fj->pl, fj->level, p, &tg, fj->meshes_out, fj->report, &fj->err[p]);
    }
    return NULL;
}

/*
 * Every profile's mesh. Each profile writes only its own mesh, report and
 * error slot, and reads the tiles' outputs and the level's triangle grid
 * (built first, when any profile generates links), so the meshes are the
 * same whatever the thread count; the error reported is the first failing
 * profile's, as in a serial run.
 */
static nav_status nb_finish_all(nb_plan *pl, const nav_level *level, nav_mesh **meshes_out,
                                nav_bake_report *report, nav_error *err) {
    nb_fjob *fj = calloc(1, sizeof *fj);
    if (!fj)
        return nav_bake_fail(err, NAV_E_NOMEM, "out of memory");
    fj->pl = pl;
    fj->level = level;
    fj->meshes_out = meshes_out;
    fj->report = report;
    atomic_init(&fj->next, 0);
    nav_status st = NAV_OK;
    for (uint32_t p = 0; p < pl->nprof; p++) {
        const nav_bake_profile *pr = &pl->prof[p];
        if (!fj->tg && nb_has_links(pr)) {
            fj->tg = nb_trigrid_new(level);
            if (!fj->tg)
                st = nav_bake_fail(err, NAV_E_NOMEM, "out of memory");
        }
    }
    uint32_t nth = pl->s->threads > 1 ? pl->s->threads : 1;
    nth = nth > pl->nprof ? pl->nprof : nth;
    nth = nth > 16 ? 16 : nth;
    pthread_t th[16];
    uint32_t started = 0;
    if (st == NAV_OK) {
        for (uint32_t i = 1; i < nth; i++)
            if (pthread_create(&th[started], NULL, nb_finish_worker, fj) == 0)
                started++;
        nb_finish_worker(fj);
        for (uint32_t i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        for (uint32_t p = 0; p < pl->nprof; p++)
            if (fj->st[p] != NAV_OK) {
                st = fj->st[p];
                if (err)
                    *err = fj->err[p];
                break;
            }
    }
    nb_trigrid_free(fj->tg);
    free(fj);
    return st;
}

static void nb_fill_report(const nb_plan *pl, nav_bake_report *report, double total_ms) {
    const nb_ctx *ctx = pl->ctx;
    memcpy(report->stage_ms, ctx->stage_ms, sizeof report->stage_ms);
    report->cells = (uint64_t)pl->gw * pl->gh;
    report->spans = atomic_load(&pl->ctx->spans);
    report->tiles = (uint32_t)(pl->ntx * pl->ntz);
    report->heightfields = pl->ngroups;
    report->nprofiles = pl->nprof;
    size_t sum = 0;
    for (int t = 0; pl->tile_bytes && t < pl->ntx * pl->ntz; t++) {
        if (pl->tile_bytes[t] > report->peak_tile_bytes)
            report->peak_tile_bytes = pl->tile_bytes[t];
        sum += pl->tile_bytes[t];
    }
    uint32_t th = pl->s->threads ? pl->s->threads : 1;
    report->peak_bytes = pl->ts ? report->peak_tile_bytes * th : sum;
    report->total_ms = total_ms;
}

nav_status nb_run(const nav_level *level, const nav_bake_settings *s,
                  const nav_bake_profile *profiles, uint32_t nprofiles,
                  const nav_bake_limits *limits, nav_bake_progress_fn fn, void *ud,
                  nav_mesh **meshes_out, nav_bake_report *report, nav_error *err) {
    double t0 = nb_now_ms();
    nb_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.mu, NULL);
    ctx.fn = fn;
    ctx.ud = ud;
    ctx.lim = limits;
    ctx.last_stage = nav_bake_stage_text(NAV_BAKE_STAGE_RASTERIZE);
    ctx.last_call_ms = nb_now_ms();
    atomic_init(&ctx.cancelled, 0);
    atomic_init(&ctx.spans, 0);
    nb_plan *pl = calloc(1, sizeof *pl);
    if (!pl) {
        pthread_mutex_destroy(&ctx.mu);
        return nav_bake_fail(err, NAV_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&pl->err_mu, NULL);
    pl->verts = nav_level_vertices(level);
    pl->tris = nav_level_triangles(level);
    pl->ntris = nav_level_triangle_count(level);
    pl->s = s;
    pl->prof = profiles;
    pl->nprof = nprofiles;
    pl->ctx = &ctx;
    atomic_init(&pl->next, 0);
    nb_plan_groups(pl);
    nav_status st = nb_plan_grid(pl, level, err);
    if (st != NAV_OK)
        goto out;
    int ntiles = pl->ntx * pl->ntz;
    pl->out = calloc((size_t)ntiles * nprofiles, sizeof *pl->out);
    pl->tile_bytes = calloc((size_t)ntiles, sizeof *pl->tile_bytes);
    if (!pl->out || !pl->tile_bytes || (pl->ts && nb_plan_bins(pl) != NAV_OK)) {
        st = nav_bake_fail(err, NAV_E_NOMEM, "out of memory");
        goto out;
    }
    /* work units: rasterize 4 + filter 1 + compact 1 per group and tile,
       erode 1 + regions 4 + contours 1 + polygons 1 + detail 2 per profile
       that is not a twin */
    uint32_t nown = 0;
    for (uint32_t g = 0; g < pl->ngroups; g++)
        nown += pl->groups[g].nown;
    ctx.total = (uint64_t)ntiles * (6u * pl->ngroups + 9u * nown);
    if (fn && fn(ud, nav_bake_stage_text(NAV_BAKE_STAGE_RASTERIZE), 0))
        atomic_store(&ctx.cancelled, 1);
    st = nb_run_tiles(pl);
    if (st == NAV_OK && nb_cancelled(&ctx))
        st = NAV_E_CANCELLED;
    if (st != NAV_OK) {
        if (st == NAV_E_CANCELLED)
            nav_bake_fail(err, st, "the bake was cancelled");
        else
            nav_bake_fail(err, st, "%s", pl->err.message);
        goto out;
    }
    st = nb_finish_all(pl, level, meshes_out, report, err);
    if (st != NAV_OK)
        for (uint32_t p = 0; p < nprofiles; p++) {
            nav_mesh_free(meshes_out[p]);
            meshes_out[p] = NULL;
        }
out:
    if (report)
        nb_fill_report(pl, report, nb_now_ms() - t0);
    if (st == NAV_OK && fn)
        fn(ud, nav_bake_stage_text(NAV_BAKE_STAGE_BUILD), 1.0f);
    nb_plan_free(pl);
    pthread_mutex_destroy(&pl->err_mu);
    free(pl);
    pthread_mutex_destroy(&ctx.mu);
    return st;
}
