/*
 * check_main: the one test runner. Suites are discovered at build time: the
 * Makefile lists every `Suite *<name>_suite(void)` found in tests/check_*.c
 * into build/gen/suites.h as SUITE(<name>_suite) lines.
 *
 * CK_RUN_SUITE=<name> runs one suite (Check's own variable).
 */
#include <check.h>
#include <stdlib.h>

#define SUITE(fn) Suite *fn(void);
#include "suites.h"
#undef SUITE

int main(void) {
    SRunner *sr = srunner_create(NULL);
#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.h"
#undef SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
