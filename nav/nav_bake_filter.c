/*
 * nav_bake_filter.c: the heightfield filters that decide which span tops an
 * agent can stand on, from the geometry around them (all in cells):
 * - low obstacles: a non-walkable span whose top is at most `climb` above a
 *   walkable span right below it in the same column (a kerb, a stair's
 *   riser) becomes walkable: the agent steps onto it;
 * - ledges: a span with a neighbour column whose floor lies more than
 *   `climb` below it (or no floor at all) is the edge of a drop and is not
 *   walkable; nor is one whose reachable neighbour floors differ by more
 *   than `climb` among themselves (too steep in the voxel sense);
 * - low height: a span with less than `height` of free space above it.
 * The order matters and is Recast's: low obstacles first, so that a kerb's
 * top is not mistaken for a ledge.
 */
#include "nav/nav_bake_internal.h"

void nb_filter_low_obstacles(nb_hf *hf, int climb) {
    const nb_span *sp = hf->spans;
    for (int i = 0, n = hf->w * hf->h; i < n; i++) {
        bool prev_walk = false;
        uint8_t prev_area = NB_AREA_NULL;
        int prev_top = 0;
        for (uint32_t s = hf->col[i]; s != NB_NONE; s = sp[s].next) {
            nb_span *cur = &hf->spans[s];
            bool walk = cur->area != NB_AREA_NULL;
            if (!walk && prev_walk && (int)cur->smax - prev_top <= climb)
                cur->area = prev_area;
            prev_walk = walk; /* the original flag: a raised span does not raise the next */
            prev_area = cur->area;
            prev_top = cur->smax;
        }
    }
}

/* True when the span with floor `floor` and ceiling `ceil` is at a drop. */
static bool nb_is_ledge(const nb_hf *hf, int x, int z, int floor, int ceil, int height, int climb) {
    /* too low to stand in: no passage into any neighbour, so not a ledge
       (and the low-height filter drops it) */
    if (ceil - floor < height)
        return false;
    const nb_span *sp = hf->spans;
    int lowest = NB_SPAN_MAX, lo_ok = floor, hi_ok = floor;
    for (int d = 0; d < 4; d++) {
        int nx = x + nb_dx[d], nz = z + nb_dz[d];
        if (nx < 0 || nz < 0 || nx >= hf->w || nz >= hf->h)
            return true; /* outside the window: treated as a drop */
        uint32_t ns = hf->col[nx + nz * hf->w];
        /* the space below the neighbour's first span reaches down forever */
        int nceil = ns != NB_NONE ? sp[ns].smin : NB_SPAN_MAX;
        if ((ceil < nceil ? ceil : nceil) - floor >= height)
            return true;
        for (; ns != NB_NONE; ns = sp[ns].next) {
            int nfloor = sp[ns].smax;
            nceil = sp[ns].next != NB_NONE ? sp[sp[ns].next].smin : NB_SPAN_MAX;
            int top = ceil < nceil ? ceil : nceil, bot = floor > nfloor ? floor : nfloor;
            if (top - bot < height)
                continue; /* no passage into that span */
            int diff = nfloor - floor;
            if (diff < lowest)
                lowest = diff;
            if (diff >= -climb && diff <= climb) {
                lo_ok = nfloor < lo_ok ? nfloor : lo_ok;
                hi_ok = nfloor > hi_ok ? nfloor : hi_ok;
            } else if (diff < -climb) {
                break;
            }
        }
        if (lowest < -climb)
            return true;
    }
    return hi_ok - lo_ok > climb;
}

bool nb_filter_ledges(nb_hf *hf, int height, int climb, nb_ctx *c) {
    nb_span *sp = hf->spans;
    for (int z = 0; z < hf->h; z++) {
        if ((z & 15) == 15 && nb_cancelled(c))
            return false;
        for (int x = 0; x < hf->w; x++)
            for (uint32_t s = hf->col[x + z * hf->w]; s != NB_NONE; s = sp[s].next) {
                if (sp[s].area == NB_AREA_NULL)
                    continue;
                int floor = sp[s].smax;
                int ceil = sp[s].next != NB_NONE ? sp[sp[s].next].smin : NB_SPAN_MAX;
                if (nb_is_ledge(hf, x, z, floor, ceil, height, climb))
                    sp[s].area = NB_AREA_NULL;
            }
    }
    return true;
}

void nb_filter_low_height(nb_hf *hf, int height) {
    nb_span *sp = hf->spans;
    for (int i = 0, n = hf->w * hf->h; i < n; i++)
        for (uint32_t s = hf->col[i]; s != NB_NONE; s = sp[s].next) {
            int ceil = sp[s].next != NB_NONE ? sp[sp[s].next].smin : NB_SPAN_MAX;
            if (ceil - (int)sp[s].smax < height)
                sp[s].area = NB_AREA_NULL;
        }
}
