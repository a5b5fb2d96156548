/*
 * check_api_step_fast: the step body read without a JSON tree
 * (api/api_step_fast.c).
 *
 * By hand: what it reads from a small body (defaults, "-0" read as an
 * integer 0 as jansson does, exponents, a behaviour, obstacles), and the
 * shapes it must give up on (another key, a duplicate, a null, an escape,
 * non-ASCII, a long integer, a number beyond float, trailing bytes, too
 * many agents). Against the real binary, as a property: random step bodies
 * (numbers written every way JSON allows, optional fields present or not,
 * random whitespace) answer the same bytes read fast and read through the
 * tree (the same body with "seed": 0, the default, which only the
 * tree reads).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_step_fast.h"
#include "tests/test_fixtures.h"
#include "tests/test_http.h"

typedef struct fast_run {
    nav_agent_in agents[8];
    nav_obstacle obs[4];
    char ids[4096];
    nav_steer_params p;
    bool cache;
    uint32_t n, nobs;
} fast_run;

static bool run(fast_run *f, const char *body, uint32_t max_agents) {
    memset(f, 0, sizeof *f);
    nav_steer_params_default(&f->p);
    f->cache = true;
    api_step_fast_out o = {f->agents, max_agents, f->obs, 4, f->ids};
    return api_step_fast_decode(body, strlen(body), &o, &f->p, &f->cache, &f->n, &f->nobs);
}

START_TEST(reads_by_hand) {
    fast_run f;
    const char *b = " {\"dt\": 0.05, \"cache\":false, \"extents\":[1,2e0,-0],\n"
                    "\"agents\":[{\"id\":\"x\",\"position\":[-0,1.5,25E-1],\"target\":[1,0,2]},"
                    "{\"position\":[0,0,0],\"behavior\":\"flee\",\"radius\":0.25,"
                    "\"max_speed\":2,\"threat\":[3,0,4]}],"
                    "\"obstacles\":[{\"position\":[5,0,5],\"radius\":1}] } ";
    ck_assert(run(&f, b, 8));
    ck_assert_uint_eq(f.n, 2);
    ck_assert_uint_eq(f.nobs, 1);
    ck_assert(!f.cache);
    ck_assert(f.p.avoidance);
    ck_assert(f.p.dt == 0.05f);
    ck_assert(f.p.extents[1] == 2.0f);
    /* "-0" is an integer literal: jansson reads integer 0, so +0 */
    ck_assert(f.p.extents[2] == 0.0f && !signbit(f.p.extents[2]));
    ck_assert(f.agents[0].pos[0] == 0.0f && !signbit(f.agents[0].pos[0]));
    ck_assert(f.agents[0].pos[2] == 2.5f);
    ck_assert_str_eq(f.agents[0].id, "x");
    ck_assert(f.agents[0].has_target && !f.agents[0].has_threat);
    /* defaults: radius 0.5, max_speed 3.5, max_accel 8, arrive_radius 1;
       a target without a behaviour means arrive */
    ck_assert(f.agents[0].radius == 0.5f && f.agents[0].max_speed == 3.5f);
    ck_assert(f.agents[0].max_accel == 8.0f && f.agents[0].arrive_radius == 1.0f);
    ck_assert_int_eq(f.agents[0].behavior, NAV_BEHAVIOR_ARRIVE);
    ck_assert_ptr_null(f.agents[1].id);
    ck_assert_int_eq(f.agents[1].behavior, NAV_BEHAVIOR_FLEE);
    ck_assert(f.agents[1].radius == 0.25f && f.agents[1].max_speed == 2.0f);
    ck_assert(f.agents[1].has_threat && f.agents[1].threat[2] == 4.0f);
    ck_assert(f.obs[0].radius == 1.0f && f.obs[0].pos[0] == 5.0f);
    /* no target, no behaviour: idle */
    ck_assert(run(&f, "{\"dt\":1,\"agents\":[{\"position\":[0,0,0]}]}", 8));
    ck_assert_int_eq(f.agents[0].behavior, NAV_BEHAVIOR_IDLE);
    ck_assert(run(&f, "{\"agents\":[],\"dt\":0.1}", 8) && f.n == 0);
}
END_TEST

START_TEST(gives_up_on_other_shapes) {
    fast_run f;
    static const char *const bodies[] = {
        "{\"dt\":0.1,\"agents\":[],\"max_nodes\":0}",                   /* another key */
        "{\"dt\":0.1,\"agents\":[],\"traverse_links\":true}",           /* only the tree reads it */
        "{\"dt\":0.1,\"dt\":0.2,\"agents\":[]}",                        /* duplicate */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"id\":null}]}", /* null */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"id\":\"a\\n\"}]}",     /* escape */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"id\":\"\xc3\xa9\"}]}", /* non-ASCII */
        "{\"dt\":1234567890123456,\"agents\":[]}",                              /* 16 digits */
        "{\"dt\":1e39,\"agents\":[]}",                                          /* beyond float */
        "{\"dt\":0.1,\"agents\":[]} x",                                         /* trailing bytes */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0]}]}",                       /* two components */
        "{\"dt\":0.1,\"agents\":[{\"velocity\":[0,0,0]}]}",                     /* no position */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"behavior\":\"run\"}]}",
        "{\"dt\":01,\"agents\":[]}", /* leading zero */
        "{\"dt\":.5,\"agents\":[]}",
        "{\"agents\":[]}",                     /* no dt */
        "{\"d\":0.1,\"agents\":[]}",           /* a known key's prefix */
        "{\"dtx\":0.1,\"agents\":[]}",         /* a known key and more */
        "{\"\":0.1,\"dt\":0.1,\"agents\":[]}", /* an empty key */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"pos\":[0,0,0]}]}",
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0],\"radiusx\":1}]}",
        "{\"dt\":0.1,\"agents\":[],}", /* trailing comma */
        "{\"dt\":0.1,\"agents\":[{\"position\":[0,0,0]},{\"position\":[1,0,0]}]}",
    };
    for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++)
        ck_assert_msg(!run(&f, bodies[k], k + 1 == sizeof bodies / sizeof bodies[0] ? 1 : 8),
                      "body %zu was read", k);
}
END_TEST

/* Numbers: 20,000 random literals (every form random_body writes, plus
   long and tiny ones) read bit for bit as strtod reads them. */
START_TEST(numbers_as_strtod) {
    uint32_t rng = 99;
    for (int it = 0; it < 20000; it++) {
        char lit[64];
        double v = (fx_randf(&rng) - 0.5) * pow(10.0, (double)(fx_rand(&rng) % 12) - 4.0);
        switch (it % 6) {
        case 0:
            snprintf(lit, sizeof lit, "%.9g", v);
            break;
        case 1:
            snprintf(lit, sizeof lit, "%.17g", v);
            break;
        case 2:
            snprintf(lit, sizeof lit, "%.6e", v);
            break;
        case 3:
            snprintf(lit, sizeof lit, "%.12f", v);
            break;
        case 4:
            snprintf(lit, sizeof lit, "%.3fe-2", v);
            break;
        default:
            snprintf(lit, sizeof lit, "%.20e", v);
            break;
        }
        if (!strchr(lit, '.') && !strchr(lit, 'e'))
            continue; /* integers: read as integers, not by strtod */
        double want = strtod(lit, NULL), got;
        ck_assert_msg(api_step_fast_number(lit, strlen(lit), &got), "%s was not read", lit);
        ck_assert_msg(memcmp(&got, &want, sizeof want) == 0, "%s: %a, strtod %a", lit, got, want);
    }
    /* the edges of the exact conversion: leading zeros of a fraction (not
       significant), 15 and 16 significant digits, powers of ten at 22 and
       23, exponents past 400, zeros of either sign */
    static const char *const edge[] = {"0.000000000000000000000123456789012345",
                                       "0.00000000000000000000012345678901234567",
                                       "123456789012345.0",
                                       "1234567890123456.0",
                                       "0.1234567890123456",
                                       "9007199254740993.0",
                                       "1.5e22",
                                       "1.5e23",
                                       "1e-22",
                                       "1e-23",
                                       "123456789012345e7",
                                       "0.5e-400",
                                       "1e401",
                                       "-0.0",
                                       "0.0e0",
                                       "-0e-5",
                                       "100000000000000000000000000e-5",
                                       "4.9406564584124654e-324",
                                       "1.7976931348623157e308",
                                       "0.30000000000000004",
                                       "2.2250738585072011e-308",
                                       "1.00000000000000000000000000000000000000000000001"};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
        double want = strtod(edge[k], NULL), got;
        ck_assert_msg(api_step_fast_number(edge[k], strlen(edge[k]), &got), "%s was not read",
                      edge[k]);
        ck_assert_msg(memcmp(&got, &want, sizeof want) == 0, "%s: %a, strtod %a", edge[k], got,
                      want);
    }
}
END_TEST

/* A number written one of the ways JSON allows, close to v. */
static int put_num(char *b, size_t cap, double v, uint32_t *rng) {
    switch (fx_rand(rng) % 5) {
    case 0:
        return snprintf(b, cap, "%.9g", v);
    case 1:
        return snprintf(b, cap, "%.17g", v);
    case 2:
        return snprintf(b, cap, "%.3e", v);
    case 3:
        return snprintf(b, cap, "%d", (int)v); /* an integer literal */
    default:
        return snprintf(b, cap, "%.4fE+0", v);
    }
}

static const char *ws_of(uint32_t *rng) {
    static const char *const w[] = {"", " ", "\n", "\t ", "\r\n  "};
    return w[fx_rand(rng) % 5];
}

/* A random step body on the grid of 20 x 20 unit cells. */
static char *random_body(uint32_t *rng) {
    size_t cap = 64 * 1024, len = 0;
    char *b = malloc(cap);
    static const char *const beh[] = {"seek",  "arrive", "flee", "pursue",
                                      "evade", "wander", "hide", "idle"};
    len += (size_t)snprintf(b + len, cap - len, "{%s\"dt\":%s", ws_of(rng), ws_of(rng));
    len += (size_t)put_num(b + len, cap - len, 0.05 + 0.1 * fx_randf(rng), rng);
    if (fx_rand(rng) % 2)
        len += (size_t)snprintf(b + len, cap - len, ",\"avoidance\":%s",
                                fx_rand(rng) % 2 ? "true" : "false");
    len += (size_t)snprintf(b + len, cap - len, ",%s\"agents\":[", ws_of(rng));
    int n = 1 + (int)(fx_rand(rng) % 20);
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(b + len, cap - len, "%s{\"id\":\"r%d\",\"position\":[",
                                i ? "," : "", i);
        for (int k = 0; k < 3; k++) {
            double v = k == 1 ? 0.0 : 1.0 + 18.0 * fx_randf(rng);
            len += (size_t)put_num(b + len, cap - len, v, rng);
            len += (size_t)snprintf(b + len, cap - len, "%s%s", k < 2 ? "," : "]", ws_of(rng));
        }
        if (fx_rand(rng) % 2)
            len += (size_t)snprintf(b + len, cap - len, ",\"velocity\":[%.3f,0,%.3f]",
                                    fx_randf(rng) - 0.5, fx_randf(rng) - 0.5);
        if (fx_rand(rng) % 2) {
            len += (size_t)snprintf(b + len, cap - len, ",\"radius\":");
            len += (size_t)put_num(b + len, cap - len, 1.0 + 0.3 * fx_randf(rng), rng);
        }
        /* (every behaviour has what it needs: a target) */
        len += (size_t)snprintf(b + len, cap - len, ",\"target\":[%.5f,0,%.5f]",
                                1 + 18 * fx_randf(rng), 1 + 18 * fx_randf(rng));
        if (fx_rand(rng) % 2)
            len +=
                (size_t)snprintf(b + len, cap - len, ",\"behavior\":\"%s\"", beh[fx_rand(rng) % 8]);
        if (fx_rand(rng) % 4 == 0)
            len += (size_t)snprintf(b + len, cap - len, ",\"threat\":[10,0,10]");
        len += (size_t)snprintf(b + len, cap - len, "}");
    }
    len += (size_t)snprintf(b + len, cap - len, "]%s", ws_of(rng));
    if (fx_rand(rng) % 3 == 0)
        len += (size_t)snprintf(b + len, cap - len,
                                ",\"obstacles\":[{\"position\":[8,0,8],"
                                "\"radius\":1.5}]");
    snprintf(b + len, cap - len, "}");
    return b;
}

START_TEST(fast_and_tree_answer_the_same_bytes) {
    char *mesh = fx_grid_json(20);
    th_server srv;
    ck_assert_msg(th_start(&srv, NULL, NULL) == 0, "navd did not start");
    th_response r;
    ck_assert_int_eq(th_json(srv.port, "PUT", "/v1/navmeshes/g", mesh, &r), 0);
    ck_assert_int_eq(r.status, 201);
    th_response_free(&r);
    uint32_t rng = 4242;
    int ok = 0;
    for (int it = 0; it < 60; it++) {
        char *fast = random_body(&rng);
        /* the same request through the tree: seed 0 is the default */
        size_t fl = strlen(fast);
        char *tree = malloc(fl + 32);
        memcpy(tree, fast, fl - 1);
        strcpy(tree + fl - 1, ",\"seed\":0}");
        th_response a, b;
        ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/g/step", fast, &a), 0);
        ck_assert_int_eq(th_json(srv.port, "POST", "/v1/navmeshes/g/step", tree, &b), 0);
        ck_assert_msg(a.status == b.status, "%d vs %d: %.300s", a.status, b.status, b.body);
        ck_assert_msg(strcmp(a.body, b.body) == 0, "body %d: the two reads answer differently", it);
        ok += a.status == 200;
        th_response_free(&a);
        th_response_free(&b);
        free(fast);
        free(tree);
    }
    ck_assert_int_gt(ok, 50);
    int rc = th_stop(&srv);
    th_cleanup(&srv);
    ck_assert_int_eq(rc, 0);
    free(mesh);
}
END_TEST

extern Suite *api_step_fast_suite(void);
Suite *api_step_fast_suite(void) {
    Suite *s = suite_create("api_step_fast");
    TCase *tc = tcase_create("fast");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, reads_by_hand);
    tcase_add_test(tc, gives_up_on_other_shapes);
    tcase_add_test(tc, numbers_as_strtod);
    tcase_add_test(tc, fast_and_tree_answer_the_same_bytes);
    suite_add_tcase(s, tc);
    return s;
}
