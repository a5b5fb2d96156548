# navd: one Makefile for the service, its tests and benchmarks.
#
# Layers (dependencies run one way): service -> api -> {nav, storage}.
# nav/ is a plain C library (libc + libm + pthread) and is archived on its own
# as build/libnav.a so a game server can link it directly.
#
# Every module directory is globbed, so adding a .c file needs no edit here.
# Test suites are discovered from tests/check_*.c (see tests/check_main.c).

.DEFAULT_GOAL := all

BUILD ?= build
BIN_DIR ?= bin
PORT ?= 8080
DB ?= data/navd.db
SAN ?=

CC ?= cc
PKGS := libmicrohttpd jansson sqlite3 libpq
TEST_PKGS := check

# Debian package that provides each pkg-config module (used by `make deps`).
# With TEST_RUNTIME=1 `make deps` also installs two runtime packages the
# replica tests and bench need (they skip without them): postgresql (initdb,
# pg_ctl) and nginx. `make test` and `make bench` ask for them; `make run` and
# the container image's build stage do not, so serving navd never installs
# (and on a normal Debian, starts) a PostgreSQL server or nginx.
TEST_RUNTIME ?= 0
DEB_libmicrohttpd := libmicrohttpd-dev
DEB_jansson := libjansson-dev
DEB_sqlite3 := libsqlite3-dev
DEB_libpq := libpq-dev
DEB_check := check

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wno-unused-parameter
CSTD := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT ?= -O2 -g
SANFLAGS :=
ifeq ($(SAN),1)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  OPT := -O1 -g
endif
ifeq ($(SAN),thread)
  SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
  OPT := -O1 -g
endif
# libFuzzer build (clang only): objects get coverage instrumentation; only the
# harnesses link the fuzzer's main (see "fuzzing" below).
ifeq ($(SAN),fuzz)
  SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all
  OPT := -O1 -g
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -pthread -I. -I$(BUILD)/gen $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) -pthread $(LDFLAGS)

NAV_SRC := $(wildcard nav/*.c)
STORE_SRC := $(wildcard storage/*.c)
API_SRC := $(wildcard api/*.c)
SVC_SRC := $(filter-out service/svc_main.c,$(wildcard service/*.c))
MAIN_SRC := service/svc_main.c
TEST_SRC := $(wildcard tests/*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)
SUITE_SRC := $(wildcard tests/check_*.c)
VIEWER_ASSETS := $(sort $(wildcard api/viewer/*))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

NAV_OBJ := $(call obj,$(NAV_SRC))
STORE_OBJ := $(call obj,$(STORE_SRC))
API_OBJ := $(call obj,$(API_SRC)) $(if $(VIEWER_ASSETS),$(BUILD)/obj/gen/api_assets.o)
SVC_OBJ := $(call obj,$(SVC_SRC))
MAIN_OBJ := $(call obj,$(MAIN_SRC))
TEST_OBJ := $(call obj,$(TEST_SRC))
BENCH_OBJ := $(call obj,$(BENCH_SRC))

LIBNAV := $(BUILD)/libnav.a
NAVD := $(if $(SAN),$(BUILD)/navd,$(BIN_DIR)/navd)
TEST_RUNNER := $(BUILD)/check_navd
BENCH_RUNNER := $(BUILD)/bench_navd

.PHONY: all deps run test test-unit test-san test-tsan bench bench-deps clean format format-check help test-browser \
        fuzz fuzz-short fuzz-build fuzz-run

all: $(NAVD) $(LIBNAV)

help:
	@echo "make            build bin/navd and build/libnav.a"
	@echo "make run        install missing deps, build, serve on :$(PORT) with $(DB)"
	@echo "make test       install missing deps, run every test, then again under ASan+UBSan and TSan"
	@echo "make test-tsan  the concurrency suite under ThreadSanitizer"
	@echo "make fuzz       every libFuzzer harness for FUZZ_SECONDS (default 60) each; fuzz-short: CI pass"
	@echo "make bench      benchmarks (figures and ratios)"
	@echo "make test-browser  the web viewer in headless Chromium (installs chromium, playwright-core)"
	@echo "make deps       apt-get install the -dev packages pkg-config cannot find"
	@echo "make format     clang-format every source file; format-check only checks"

# ---- dependencies ---------------------------------------------------------
# Installs only what pkg-config cannot find, so it is a no-op on a ready machine.
deps:
	@set -e; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	need=""; \
	command -v pkg-config >/dev/null 2>&1 || need="pkg-config"; \
	command -v $(CC) >/dev/null 2>&1 || need="$$need build-essential"; \
	for p in $(PKGS) $(TEST_PKGS); do \
	  case $$p in libmicrohttpd) d=$(DEB_libmicrohttpd);; jansson) d=$(DEB_jansson);; \
	    sqlite3) d=$(DEB_sqlite3);; libpq) d=$(DEB_libpq);; check) d=$(DEB_check);; esac; \
	  pkg-config --exists $$p 2>/dev/null || need="$$need $$d"; \
	done; \
	if [ "$(TEST_RUNTIME)" = 1 ]; then \
	  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$$need postgresql"; \
	  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || need="$$need nginx"; \
	fi; \
	if [ -n "$$need" ]; then \
	  echo "deps: installing$$need"; \
	  $$SUDO apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$need; \
	else echo "deps: all present"; fi

# ---- build ----------------------------------------------------------------
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PKG_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

# Viewer files are compiled into the binary; tests/tools/embed.c turns them into C arrays.
$(BUILD)/gen/api_assets.c: $(VIEWER_ASSETS) tests/tools/embed.c api/api_viewer.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -o $(BUILD)/embed tests/tools/embed.c
	$(BUILD)/embed $@ $(VIEWER_ASSETS)

$(BUILD)/obj/gen/api_assets.o: $(BUILD)/gen/api_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIBNAV): $(NAV_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(NAVD): $(MAIN_OBJ) $(SVC_OBJ) $(API_OBJ) $(STORE_OBJ) $(LIBNAV)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(MAIN_OBJ) $(SVC_OBJ) $(API_OBJ) $(STORE_OBJ) $(LIBNAV) $(PKG_LIBS) -lm

# The suite list is generated so each tests/check_<module>.c only has to define
# `Suite *<module>_suite(void)`.
$(BUILD)/gen/suites.h: $(SUITE_SRC) Makefile
	@mkdir -p $(dir $@)
	@sed -n 's/^Suite \*\([a-z0-9_]*_suite\)(void) *{*$$/SUITE(\1)/p' $(SUITE_SRC) | sort -u > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/obj/tests/check_main.o: $(BUILD)/gen/suites.h

$(TEST_RUNNER): $(TEST_OBJ) $(SVC_OBJ) $(API_OBJ) $(STORE_OBJ) $(LIBNAV)
	$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJ) $(SVC_OBJ) $(API_OBJ) $(STORE_OBJ) $(LIBNAV) \
	  $(PKG_LIBS) $(CHECK_LIBS) -lm

# ---- Detour reference (benchmark only) ----------------------------------------
# tests/bench/detour_ref.cpp runs upstream Detour (Debian's librecast-dev) on
# the bench's meshes and queries, so the ratios are against Detour measured in
# the same run. Only the bench runner links it; navd and libnav.a never do.
DETOUR_INC := /usr/include/recastnavigation
CXX ?= c++
BENCH_EXTRA_OBJ += $(BUILD)/obj/tests/bench/detour_ref.o
BENCH_EXTRA_LIBS += -lDetour -lstdc++
$(BUILD)/obj/tests/bench/detour_ref.o: tests/bench/detour_ref.cpp tests/bench/detour_ref.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 -Wall -Wextra -Werror $(OPT) $(SANFLAGS) -I. -I$(DETOUR_INC) -c $< -o $@

# tests/bench/recast_ref.cpp: upstream Recast's bake (same package) beside
# nav_bake in the bench's `bake` section.
BENCH_EXTRA_OBJ += $(BUILD)/obj/tests/bench/recast_ref.o
BENCH_EXTRA_LIBS += -lRecast
$(BUILD)/obj/tests/bench/recast_ref.o: tests/bench/recast_ref.cpp tests/bench/recast_ref.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 -Wall -Wextra -Werror $(OPT) $(SANFLAGS) -I. -I$(DETOUR_INC) -c $< -o $@

# librecast-dev from apt when missing, as `make deps` does for the libraries.
bench-deps:
	@if [ ! -f $(DETOUR_INC)/DetourNavMeshQuery.h ]; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "bench: installing librecast-dev (Detour, the benchmark's reference)"; \
	  $$SUDO apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    librecast-dev; \
	fi

$(BENCH_RUNNER): $(BENCH_OBJ) $(filter-out $(BUILD)/obj/tests/check_%,$(TEST_OBJ)) $(SVC_OBJ) $(API_OBJ) $(STORE_OBJ) $(LIBNAV) $(BENCH_EXTRA_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) $(CHECK_LIBS) $(BENCH_EXTRA_LIBS) -lm

# ---- run / test / bench ---------------------------------------------------
run: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(dir $(DB))
	$(NAVD) --port $(PORT) --db $(DB) --demo

# CK_DEFAULT_TIMEOUT is generous because the sanitizer pass is slow on 2 cores.
test:
	@$(MAKE) --no-print-directory deps TEST_RUNTIME=1
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-san
	@$(MAKE) --no-print-directory test-tsan

test-unit: $(NAVD) $(TEST_RUNNER)
	NAVD_BIN=$(abspath $(NAVD)) CK_DEFAULT_TIMEOUT=120 $(TEST_RUNNER)

test-san:
	@$(MAKE) --no-print-directory SAN=1 BUILD=build/san test-unit

# ThreadSanitizer pass over the threaded suites only (TSan is ~10x slower;
# the other suites are single-threaded or covered by test-san). The server
# under test is the TSan build too, so races inside navd are reported.
TSAN_BUILD := build/tsan
# The suites with threads of their own: the HTTP server under load, the
# bake jobs (threads, cancel, waiters) and the PostgreSQL store's keeper
# thread (store_pg skips without PostgreSQL), and steps split across threads
# (nav_lanes).
TSAN_SUITES ?= concurrency jobs store_pg nav_lanes
test-tsan:
	@$(MAKE) --no-print-directory SAN=thread BUILD=$(TSAN_BUILD) $(TSAN_BUILD)/navd $(TSAN_BUILD)/check_navd
	@set -e; for s in $(TSAN_SUITES); do \
	  NAVD_BIN=$(abspath $(TSAN_BUILD)/navd) CK_RUN_SUITE=$$s CK_DEFAULT_TIMEOUT=600 \
	    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(TSAN_BUILD)/check_navd; \
	done

bench: bench-deps
	@$(MAKE) --no-print-directory deps TEST_RUNTIME=1
	@$(MAKE) --no-print-directory $(NAVD) $(BENCH_RUNNER)
	NAVD_BIN=$(abspath $(NAVD)) $(BENCH_RUNNER)

# ---- DetourCrowd reference for the bench's `crowd` section (steering helper) ----
# tests/bench/crowd_ref.cpp links Debian's librecast-dev (installed here when
# missing, as `make deps` does for the rest); only this helper, never navd.
CROWD_REF := $(BUILD)/crowd_ref
$(CROWD_REF): tests/bench/crowd_ref.cpp
	@mkdir -p $(dir $@)
	@if [ ! -f /usr/include/recastnavigation/DetourCrowd.h ] || ! command -v $(CXX) >/dev/null; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "crowd_ref: installing librecast-dev g++"; \
	  $$SUDO apt-get install -y -qq librecast-dev g++; \
	fi
	$(CXX) -O2 -I/usr/include/recastnavigation -o $@ $< -lDetourCrowd -lDetour -ljansson
bench: $(CROWD_REF)

# The viewer in a real headless Chromium: Debian's chromium package (never a
# downloaded browser) driven by playwright-core from npm. Installs only what is
# missing. UPDATE_DOCS=1 refreshes docs/viewer.png from the run's screenshot.
test-browser: deps
	@$(MAKE) --no-print-directory $(NAVD)
	@set -e; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	need=""; \
	[ -x /usr/bin/chromium ] || need="chromium"; \
	command -v curl >/dev/null 2>&1 || need="$$need curl"; \
	command -v node >/dev/null 2>&1 || need="$$need nodejs"; \
	command -v npm >/dev/null 2>&1 || need="$$need npm"; \
	if [ -n "$$need" ]; then \
	  echo "test-browser: installing$$need"; \
	  $$SUDO apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$need; \
	fi; \
	want=$$(node -p "require('./tests/browser/package.json').dependencies['playwright-core']"); \
	have=$$(node -p "try { require('./tests/browser/node_modules/playwright-core/package.json').version } catch (e) { '' }"); \
	if [ "$$want" != "$$have" ]; then \
	  cd tests/browser && { npm ci --no-audit --no-fund || npm install --no-audit --no-fund; }; \
	fi
	NAVD_BIN=$(abspath $(NAVD)) node tests/browser/viewer.test.mjs

clean:
	rm -rf build $(BIN_DIR)

# ---- fuzzing ----------------------------------------------------------------
# One libFuzzer harness per tests/fuzz/fuzz_<target>.c, linked against the
# project's objects built with coverage + ASan + UBSan under build/fuzz.
# Corpora: tests/fuzz/corpus/<target>/ (hand-written seeds and the minimized
# corpus of a 30-minute run per harness, committed, so fuzz-short replays it),
# build/fuzz/seeds/<target>/ (made from the fixtures and ../shared/meshes by
# tests/fuzz/seeds.sh) and build/fuzz/corpus/<target>/ (what the fuzzer
# grows). A crash leaves build/fuzz/artifacts/<target>-crash-* and fails.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SHORT_SECONDS ?= 40
# libFuzzer's -seed: 0 draws a random one (make fuzz explores anew each run);
# fuzz-short pins it so the CI pass replays what passed on a developer's machine
# instead of failing at random on an input nobody has seen.
FUZZ_SEED ?= 0
FUZZ_SHORT_SEED ?= 1
FUZZ_BUILD := build/fuzz
FUZZ_HARNESS := $(filter-out tests/fuzz/fuzz_common.c,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_HARNESS))
FUZZ_LINK_OBJ = $(call obj,tests/fuzz/fuzz_common.c tests/test_load.c tests/test_rand.c) $(API_OBJ) \
                $(STORE_OBJ) $(LIBNAV)

$(BUILD)/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o \
                      $(call obj,tests/fuzz/fuzz_common.c tests/test_load.c tests/test_rand.c) \
                      $(API_OBJ) $(STORE_OBJ) $(LIBNAV)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(FUZZ_LINK_OBJ) $(PKG_LIBS) -lm

$(BUILD)/fuzz/seed_blobs: $(BUILD)/obj/tests/fuzz/seed_blobs.o $(LIBNAV)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lm

# clang and its libFuzzer runtime come from apt when missing, like `make deps`
# does for the libraries. The runtime must be the installed clang's own
# version (libclang-rt-<major>-dev): the newest one Debian lists is another
# clang's and does not link.
fuzz-build: deps
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
	    $(FUZZ_CC) -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "fuzz: installing clang and its libFuzzer runtime"; \
	  $$SUDO apt-get update -qq; \
	  command -v $(FUZZ_CC) >/dev/null 2>&1 || \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends clang; \
	  v=$$($(FUZZ_CC) --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1); \
	  echo "fuzz: clang $$v found; installing its own runtime libclang-rt-$$v-dev"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    libclang-rt-$$v-dev; \
	fi
	@$(MAKE) --no-print-directory SAN=fuzz CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) \
	  $(patsubst %,$(FUZZ_BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS)) $(FUZZ_BUILD)/fuzz/seed_blobs
	@sh tests/fuzz/seeds.sh $(FUZZ_BUILD)

# FUZZ_SECONDS per harness; prints each harness's executions and result.
# Inputs are capped per harness: a whole-mesh input (navmesh_json, blob) costs
# a parse, three builds, a serialization and an export per execution, so the
# 100-600 KB shared meshes ran navmesh_json at 1/50 of the request harness's
# rate while adding nothing the unit tests do not cover; 32 KB still holds
# dungeon and nav_test, 64 KB the blobs of every mesh but town.
fuzz-run:
	@set -e; mkdir -p $(FUZZ_BUILD)/artifacts $(FUZZ_BUILD)/log; \
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/seeds/$$t; \
	  case $$t in navmesh_json) ml=32768;; blob) ml=65536;; *) ml=262144;; esac; \
	  rc=0; $(FUZZ_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -timeout=20 \
	    -rss_limit_mb=2048 -max_len=$$ml -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- $(FUZZ_BUILD)/corpus/$$t \
	    $(FUZZ_BUILD)/seeds/$$t $$( [ -d tests/fuzz/corpus/$$t ] && echo tests/fuzz/corpus/$$t ) \
	    > $(FUZZ_BUILD)/log/$$t.log 2>&1 || rc=$$?; \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_BUILD)/log/$$t.log); \
	  echo "fuzz $$t: $${runs:-?} executions in $(FUZZ_SECONDS) s, exit $$rc"; \
	  if [ $$rc != 0 ]; then grep -E 'ERROR|SUMMARY|invariant|Test unit written' \
	    $(FUZZ_BUILD)/log/$$t.log | head -20; exit 1; fi; \
	done

fuzz: fuzz-build
	@$(MAKE) --no-print-directory fuzz-run

fuzz-short: fuzz-build
	@$(MAKE) --no-print-directory FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS) FUZZ_SEED=$(FUZZ_SHORT_SEED) fuzz-run

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null) \
               $(shell git ls-files --others --exclude-standard '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
