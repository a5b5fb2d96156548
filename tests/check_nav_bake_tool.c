/*
 * check_nav_bake_tool: `navd bake LEVEL.obj --out MESH.json [settings]`,
 * the real binary (NAVD_BIN, default bin/navd) on levels written here:
 * - a 9 m square floor bakes to one polygon of 7.2 m x 7.2 m (51.84 m^2,
 *   see check_nav_bake for the derivation) in the upload JSON format, which
 *   loads back as a navmesh; not a terminal, so progress comes as lines;
 * - a bad setting exits 2 naming the setting, before reading the level;
 * - a level with nothing walkable exits 1 saying so, and writes nothing.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/mesh_json.h"

static const char *navd_bin(void) {
    return getenv("NAVD_BIN") ? getenv("NAVD_BIN") : "bin/navd";
}

/* Runs navd with args; returns the exit code, stderr in err (malloc'd). */
static int run(const char *args, char **err) {
    char errpath[] = "/tmp/navd_bake_errXXXXXX";
    int fd = mkstemp(errpath);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s bake %s 2>%s", navd_bin(), args, errpath);
    int rc = system(cmd);
    FILE *f = fopen(errpath, "rb");
    ck_assert_ptr_nonnull(f);
    *err = calloc(1, 65536);
    size_t n = fread(*err, 1, 65535, f);
    (*err)[n] = '\0';
    fclose(f);
    unlink(errpath);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(tool_bakes_a_square) {
    char dir[] = "/tmp/navd_bake_toolXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char obj[256], out[256], args[1024];
    snprintf(obj, sizeof obj, "%s/square.obj", dir);
    snprintf(out, sizeof out, "%s/square.json", dir);
    /* counter-clockwise seen from above (x right, z down): faces up */
    write_text(obj, "v 0 0 0\nv 9 0 0\nv 9 0 9\nv 0 0 9\nf 1 4 3\nf 1 3 2\n");
    snprintf(args, sizeof args, "%s --out %s", obj, out);
    char *err = NULL;
    ck_assert_int_eq(run(args, &err), 0);
    ck_assert_msg(strstr(err, "bake:   0% rasterize") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "1 polygons") != NULL, "%s", err);
    ck_assert_ptr_null(strchr(err, '\r')); /* no bar when stderr is a file */
    free(err);
    nav_mesh *m = mj_load(out);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(nav_mesh_polygon_count(m), 1);
    ck_assert_double_eq_tol(nav_mesh_area(m), 51.84, 1e-3);
    ck_assert(nav_mesh_has_detail(m));
    nav_mesh_free(m);

    /* a bad setting: exit 2, named, nothing written */
    unlink(out);
    snprintf(args, sizeof args, "%s --out %s --cell-size 0", obj, out);
    ck_assert_int_eq(run(args, &err), 2);
    ck_assert_msg(strstr(err, "cell_size must be a finite number > 0") != NULL, "%s", err);
    free(err);
    snprintf(args, sizeof args, "%s --out %s --bogus 1", obj, out);
    ck_assert_int_eq(run(args, &err), 2);
    ck_assert_msg(strstr(err, "unknown option --bogus") != NULL, "%s", err);
    free(err);
    ck_assert_int_ne(access(out, F_OK), 0);

    /* a wall only: nothing walkable, exit 1 */
    write_text(obj, "v 0 0 0\nv 5 0 0\nv 5 3 0\nv 0 3 0\nf 1 2 3\nf 1 3 4\n");
    snprintf(args, sizeof args, "%s --out %s", obj, out);
    ck_assert_int_eq(run(args, &err), 1);
    ck_assert_msg(strstr(err, "no walkable surface") != NULL, "%s", err);
    free(err);
    ck_assert_int_ne(access(out, F_OK), 0);
    unlink(obj);
    rmdir(dir);
}
END_TEST

extern Suite *nav_bake_tool_suite(void);
Suite *nav_bake_tool_suite(void) {
    Suite *s = suite_create("nav_bake_tool");
    TCase *tc = tcase_create("tool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tool_bakes_a_square);
    suite_add_tcase(s, tc);
    return s;
}
