# tracekit: build, test, install.
#
# Sources are found by globbing, so adding a file to lib/<concern>/,
# tests/unit/<concern>/, tests/runtime/ or tools/ needs no edit here:
#   lib/**/*.cpp              -> build/libtracekit.a (mechanisms only)
#   tools/<tool>/*.cpp        -> linked into build/bin/tracekit (multi-call),
#                                build/bin/<tool> is a symlink to it; its
#                                main.cpp registers it in the tool table
#                                (lib/cli/tool_table.hpp)
#   tools/family/<family>/    -> code a family of tools shares (linked too)
#   tools/tracekit/           -> the dispatcher and its own commands
#   tests/unit/**/*_test.cpp  -> build/tests/unit_tests     (GoogleTest, no root)
#   tests/runtime/*_test.cpp  -> build/tests/runtime_tests  (GoogleTest, root)
#   tests/workloads/*.c       -> build/workloads/<name>
#   tests/vm/<file>.sh        -> cases run in a qemu guest (make check-vm)
#   lib/**/*.proto            -> build/gen/**/*.pb.{cc,h} (protoc, lite runtime),
#                                compiled into build/libtracekit.a
#   bench/src/*.cpp           -> build/bench/<name>         (Google Benchmark)
#   bench/parts/<part>.sh     -> a part of make bench       (bench/run)
#   make static               -> build/static/tracekit      (statically linked,
#                                with its tool symlinks; see the static section)
#
# V=1 shows the full commands.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
CXX     ?= g++
CC      ?= gcc
BUILD   ?= build

V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN      := -Wall -Wextra -Werror
CPPFLAGS  += -Ilib -Itools -I$(BUILD)/gen -MMD -MP $(shell pkg-config --cflags libtraceevent 2>/dev/null)
# -g1: line tables and functions (backtraces, perf annotate), no variables:
# a third less compile time than -g (8.5 -> 5.6 CPU-s for lib/cli/command.cpp),
# on a fresh clone's make check too. For a debugger: make CXXFLAGS='-O2 -g'.
CXXFLAGS  ?= -O2 -g1
CXXFLAGS  += -std=c++20 $(WARN) -fno-omit-frame-pointer
LDLIBS    := -lboost_program_options -ltraceevent -lre2 -lprotobuf-lite -lz -ldw -lelf -lseccomp \
             -lpthread
TEST_LIBS := -lgtest -lgmock -lpthread

# lib/static/: link-time support of the static binary only (see static).
LIB_SRCS     := $(shell find lib -name '*.cpp' -not -path 'lib/static/*' 2>/dev/null | sort)
# Protocol buffers: lib/<dir>/x.proto -> build/gen/<dir>/x.pb.{cc,h}, included
# as "<dir>/x.pb.h".
PROTO_SRCS   := $(shell find lib -name '*.proto' 2>/dev/null | sort)
PROTO_CCS    := $(PROTO_SRCS:lib/%.proto=$(BUILD)/gen/%.pb.cc)
PROTO_HDRS   := $(PROTO_CCS:.cc=.h)
PROTO_OBJS   := $(PROTO_CCS:$(BUILD)/gen/%.cc=$(BUILD)/obj/gen/%.o)
# The version and the commit (--version, lib/cli/version.hpp): build/gen/
# version.cc, compiled into build/libtracekit.a. make checks them on every
# run (FORCE) but rewrites the file only when they changed, so a new commit
# recompiles that one file and relinks. The commit is HEAD's when this
# directory is the top of a git work tree (a clone, a worktree), else
# "unknown" (a tarball; also one unpacked inside another repository).
TRACEKIT_VERSION := 0.1
GIT_COMMIT   := $(shell test "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" && \
                  git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
VERSION_CC   := $(BUILD)/gen/version.cc
VERSION_OBJ  := $(BUILD)/obj/gen/version.o
LIB_OBJS     := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o) $(PROTO_OBJS) $(VERSION_OBJ)
# Kept between builds (make would delete them as intermediates).
.SECONDARY: $(PROTO_CCS) $(PROTO_HDRS)
# Tools: every tools/**/*.cpp, linked object by object (not from an archive,
# which would drop the objects nothing calls: the tool table's registrations).
# A tool is a folder with a main.cpp; its name is the folder's. Aliases (other
# names with links of their own, as perf-tools' reset-ftrace) are read from
# the tools' table rows.
DISPATCH_OBJ := $(BUILD)/obj/tools/tracekit/main.o
TOOL_SRCS    := $(shell find tools -name '*.cpp' -not -path 'tools/tracekit/main.cpp' 2>/dev/null | sort)
TOOL_OBJS    := $(TOOL_SRCS:%.cpp=$(BUILD)/obj/%.o)
TOOLS        := $(filter-out tracekit,$(patsubst tools/%/main.cpp,%,$(wildcard tools/*/main.cpp)))
TOOL_ALIASES := $(shell sed -n 's/^ *\.aliases = {\(.*\)},$$/\1/p' tools/*/main.cpp | tr -d '",')
TOOLS        += $(TOOL_ALIASES)
UNIT_SRCS    := $(shell find tests/unit -name '*.cpp' 2>/dev/null | sort)
UNIT_OBJS    := $(UNIT_SRCS:%.cpp=$(BUILD)/obj/%.o)
RT_SRCS      := $(shell find tests/runtime -name '*.cpp' 2>/dev/null | sort)
RT_OBJS      := $(RT_SRCS:%.cpp=$(BUILD)/obj/%.o)
WL_SRCS      := $(wildcard tests/workloads/*.c)
# compat32 is 32-bit x86 code: x86-64 hosts only.
ifneq ($(shell uname -m),x86_64)
WL_SRCS      := $(filter-out tests/workloads/compat32.c,$(WL_SRCS))
endif
WORKLOADS    := $(WL_SRCS:tests/workloads/%.c=$(BUILD)/workloads/%)
BENCH_SRCS   := $(wildcard bench/src/*.cpp)
BENCHES      := $(BENCH_SRCS:bench/src/%.cpp=$(BUILD)/bench/%)

LIBTRACEKIT  := $(BUILD)/libtracekit.a
MULTICALL    := $(BUILD)/bin/tracekit
TOOL_LINKS   := $(TOOLS:%=$(BUILD)/bin/%)

.PHONY: all deps deps-check check check-unit check-layers check-runtime check-vm check-browser bench demo install clean tests workloads

all: $(MULTICALL) $(TOOL_LINKS)

# deps: what building and running the tools needs (make, make static, make
# demo). deps-check: that and what the tests and benchmarks need (GoogleTest,
# the peers, qemu, Chromium, Go, the browser tier's npm packages). After
# deps, so that two apt-gets never run at once under -j.
deps:
	$(Q)scripts/install-deps

deps-check: deps
	$(Q)scripts/install-deps check

# Every object needs the packages' headers: deps runs first (order-only, so it
# never forces a rebuild), and so does protoc, whose headers any object may
# include (the .d files then know which do).
$(BUILD)/obj/%.o: %.cpp | deps $(PROTO_HDRS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

# One rule makes both files (a pattern rule with two targets).
$(BUILD)/gen/%.pb.cc $(BUILD)/gen/%.pb.h: lib/%.proto | deps
	@mkdir -p $(BUILD)/gen
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc -Ilib --cpp_out=$(BUILD)/gen $<

$(VERSION_CC): FORCE
	@mkdir -p $(@D)
	$(Q)printf '%s\n' '// Written by make (see the Makefile): the version and the commit.' \
		'namespace tracekit::cli {' \
		'extern const char kVersion[] = "$(TRACEKIT_VERSION)";' \
		'extern const char kCommit[] = "$(GIT_COMMIT)";' \
		'}  // namespace tracekit::cli' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

.PHONY: FORCE
FORCE:

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.cc | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(LIBTRACEKIT): $(LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(MULTICALL): $(DISPATCH_OBJ) $(TOOL_OBJS) $(LIBTRACEKIT)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS)

$(TOOL_LINKS): $(MULTICALL)
	$(Q)ln -sf tracekit $@

# Workloads: small programs with known behaviour, built at -O0: GCC 12 drops
# the frame pointer of leaf functions at -O1 and above even with
# -fno-omit-frame-pointer, which hides the leaf's caller from stack walks.
$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/workload.h | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-Wall -Wextra -Werror -o $@ $< -lpthread

# nofp: the exception, code as distributions build it (-O2, no frame
# pointers), for DWARF unwinding (--call-graph dwarf).
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror
$(BUILD)/workloads/nofp: tests/workloads/nofp.c tests/workloads/workload.h | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (no frame pointers)")
	$(Q)$(CC) $(NOFP_CFLAGS) -o $@ $< -lpthread

# compat32: a 32-bit x86 program with no C library (no 32-bit libraries
# needed), for what a 64-bit kernel's compat system calls do to the tools.
COMPAT32_CFLAGS := -m32 -nostdlib -static -O1 -g -fno-pic -fno-stack-protector \
                   -Wall -Wextra -Werror
$(BUILD)/workloads/compat32 $(BUILD)/workloads-static/compat32: tests/workloads/compat32.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (32-bit)")
	$(Q)$(CC) $(COMPAT32_CFLAGS) -o $@ $<

workloads: $(WORKLOADS)

# LD_PRELOAD shims for runtime tests (tests/shims): old_perf.so makes
# perf_event_open refuse newer attributes as an older kernel does.
SHIMS        := $(patsubst tests/shims/%.c,$(BUILD)/tests/%.so,$(wildcard tests/shims/*.c))
$(BUILD)/tests/%.so: tests/shims/%.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

# The tests themselves need no optimising: -O0 (the last -O wins) builds
# them in about half the time, and make check starts on a fresh clone. They
# keep full debug information (-g), for a debugger on a failing case.
# ... and GoogleTest's headers, precompiled once (tests/gtest_pch.hpp, with
# the tests' own flags: GCC uses build/pch/gtest_pch.hpp.gch in place of the
# header it is beside) and included first in every test object: about a
# third of a test object's compile time was parsing gtest and gmock.
PCH_HDR := $(BUILD)/pch/gtest_pch.hpp
PCH     := $(PCH_HDR).gch
$(UNIT_OBJS) $(RT_OBJS) $(PCH): private CXXFLAGS += -O0 -g
$(UNIT_OBJS) $(RT_OBJS): private CPPFLAGS += -include $(PCH_HDR)
$(UNIT_OBJS) $(RT_OBJS): $(PCH) | deps-check

$(PCH_HDR): tests/gtest_pch.hpp
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(PCH): $(PCH_HDR) | deps-check
	@$(if $(Q),echo "  PCH     $<")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -x c++-header -c $< -o $@

$(BUILD)/tests/unit_tests: $(UNIT_OBJS) $(TOOL_OBJS) $(LIBTRACEKIT)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest_main $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/runtime_tests: $(RT_OBJS) $(LIBTRACEKIT)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest_main $(TEST_LIBS) $(LDLIBS)

tests: all workloads $(SHIMS) $(BUILD)/tests/unit_tests $(BUILD)/tests/runtime_tests

check-unit: $(BUILD)/tests/unit_tests
	$(Q)scripts/check unit

# No include runs back up (lib/LAYERS); also part of check-unit.
check-layers:
	$(Q)scripts/check-layers

check-runtime: tests
	$(Q)REPEAT=$(REPEAT) scripts/check runtime

# The browser tier (tests/browser, Node's test runner): our flame graph SVG
# in headless Chromium, our speedscope files in speedscope's own importer.
check-browser: all $(BUILD)/tests/unit_tests | deps-check
	$(Q)scripts/check browser

# The VM tier: tests/vm inside a Debian kernel under qemu (scripts/vm).
# VM_KERNEL picks the kernel: 6.1 (bookworm, the default of check-vm), 5.10
# (bullseye), "6.1 5.10" or all (both, one boot each); make check boots
# 6.1 twice (dynamic and static image) and 5.10 once.
# REPEAT=N runs the suite N times in one boot and lists the cases that ever
# failed; the same for the runtime tier (check-runtime REPEAT=N). STATIC=1
# runs it on build/static/tracekit and the static workloads, in an image
# with no libc at all (scripts/vm's VM_STATIC=1).
REPEAT ?= 1
STATIC ?= 0
VM_KERNEL ?= 6.1
check-vm: $(if $(filter 1,$(STATIC)),static static-workloads,all workloads) | deps-check
	$(Q)VM_REPEAT=$(REPEAT) VM_STATIC=$(STATIC) VM_KERNEL="$(VM_KERNEL)" scripts/check vm

# All tiers; the last line is the combined "check: N passed, N failed". The
# VM tier boots three times: the 6.1 kernel on build/bin (and the host's
# shared libraries) and on build/static/tracekit (no libc in the guest), and
# the 5.10 kernel on build/bin.
check: tests static static-workloads | deps-check
	$(Q)scripts/check all

$(BUILD)/bench/%: bench/src/%.cpp $(LIBTRACEKIT) | deps-check
	@mkdir -p $(@D)
	@$(if $(Q),echo "  BENCH   $<")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -o $@ $< $(LIBTRACEKIT) \
		$$(pkg-config --libs absl_flat_hash_map) -lbenchmark -lpthread $(LDLIBS)

# Every benchmark part (bench/parts/) in one run, ending with one summary
# table and one record appended to bench/results/runs.jsonl (bench/run; as
# root: the overhead benchmarks trace). BENCH_QUICK=1: every part short, to
# prove the suite runs (its record goes to build/bench/quick-runs.jsonl).
bench: all workloads $(BENCHES) | deps-check
	$(Q)bench/run

# (The build in parallel on every CPU: a fresh machine's first command.)
demo: | deps
	$(Q)$(MAKE) --no-print-directory -j$(shell nproc) all workloads
	$(Q)scripts/demo

install: all
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	$(Q)install -m 0755 $(MULTICALL) $(DESTDIR)$(BINDIR)/tracekit
	$(Q)for t in $(TOOLS); do ln -sf tracekit $(DESTDIR)$(BINDIR)/$$t; done
	$(Q)for m in man/man8/*.8; do [ -e "$$m" ] && install -m 0644 "$$m" $(DESTDIR)$(MANDIR)/man8/; done; true

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- static (issue 10): one statically linked file --------------------------
# build/static/tracekit: the multi-call binary linked with -static against
# glibc's and Debian's .a archives (no NEEDED entries, no interpreter), for
# hosts where nothing can be installed; build/static/<tool> are symlinks to
# it. The same objects as build/bin/tracekit, plus lib/static/ (dlopen
# stubbed out: see no_dlopen.cpp). Linked with --strip-debug: the DWARF is
# 34 of its 39 MB and only serves a debugger (build/bin/tracekit has it);
# the symbol table stays, so that stacks through tracekit itself still have
# function names. The linker still warns that libdw and libtraceevent
# reference dlopen: that is the reference the stub answers.
# build/workloads-static/: the workloads linked with -static, for the VM
# tier's static image (make check-vm STATIC=1).
STATIC_DIR       := $(BUILD)/static
STATIC_BIN       := $(STATIC_DIR)/tracekit
STATIC_LINKS     := $(TOOLS:%=$(STATIC_DIR)/%)
STATIC_OBJS      := $(patsubst %.cpp,$(BUILD)/obj/%.o,$(wildcard lib/static/*.cpp))
STATIC_WORKLOADS := $(WL_SRCS:tests/workloads/%.c=$(BUILD)/workloads-static/%)
STATIC_LDFLAGS   ?= -Wl,--strip-debug
# libdw's and libelf's own libraries (their Libs.private): -lz -llzma -lbz2.
STATIC_LDLIBS     = $(LDLIBS) $(shell pkg-config --static --libs libdw libelf 2>/dev/null)

.PHONY: static static-workloads

static: $(STATIC_BIN) $(STATIC_LINKS)

$(STATIC_BIN): $(DISPATCH_OBJ) $(TOOL_OBJS) $(STATIC_OBJS) $(LIBTRACEKIT)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@ (static)")
	$(Q)$(CXX) $(CXXFLAGS) -static $(STATIC_LDFLAGS) -o $@ $^ $(STATIC_LDLIBS)

$(STATIC_LINKS): $(STATIC_BIN)
	$(Q)ln -sf tracekit $@

$(BUILD)/workloads-static/%: tests/workloads/%.c tests/workloads/workload.h | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (static)")
	$(Q)$(CC) -static -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-Wall -Wextra -Werror -o $@ $< -lpthread

$(BUILD)/workloads-static/nofp: tests/workloads/nofp.c tests/workloads/workload.h | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (static, no frame pointers)")
	$(Q)$(CC) -static $(NOFP_CFLAGS) -o $@ $< -lpthread

static-workloads: $(STATIC_WORKLOADS)
# ---- end static -------------------------------------------------------------

# ---- fuzz (issue 8): libFuzzer targets, not part of check -------------------
# tests/fuzz/<name>_fuzz.cpp -> build/fuzz/<name>_fuzz, built with Debian's
# clang++ and -fsanitize=fuzzer,address,undefined against lib/ compiled the
# same way into build/fuzz/obj. `make fuzz` installs clang (scripts/
# install-deps fuzz), builds every target and runs each for FUZZ_SECONDS
# (scripts/fuzz: executions, coverage, findings; exit 1 on a finding).
# `make fuzz-build` only builds; `scripts/fuzz NAME` runs one target;
# `make fuzz-corpus` rewrites tests/fuzz/corpus/ from this machine (root).
# The corpora in tests/fuzz/corpus/ are also replayed by the unit tests
# (tests/unit/fuzz/), without clang.
FUZZ_CXX      ?= clang++
FUZZ_SECONDS  ?= 30
FUZZ_BUILD    := $(BUILD)/fuzz
FUZZ_CXXFLAGS := -std=c++20 -g -O1 $(WARN) -fno-omit-frame-pointer \
                 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRCS     := $(wildcard tests/fuzz/*_fuzz.cpp)
FUZZERS       := $(FUZZ_SRCS:tests/fuzz/%.cpp=$(FUZZ_BUILD)/%)
FUZZ_LIB      := $(FUZZ_BUILD)/libtracekit.a
# Kept between builds (make would delete them as intermediates).
.SECONDARY: $(FUZZ_SRCS:%.cpp=$(FUZZ_BUILD)/obj/%.o)

.PHONY: deps-fuzz fuzz fuzz-build fuzz-corpus

deps-fuzz:
	$(Q)scripts/install-deps fuzz

$(FUZZ_BUILD)/obj/%.o: %.cpp | deps deps-fuzz $(PROTO_HDRS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCXX $<")
	$(Q)$(FUZZ_CXX) $(CPPFLAGS) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(LIB_SRCS:%.cpp=$(FUZZ_BUILD)/obj/%.o) $(TOOL_SRCS:%.cpp=$(FUZZ_BUILD)/obj/%.o) \
             $(PROTO_CCS:$(BUILD)/gen/%.cc=$(FUZZ_BUILD)/obj/gen/%.o) \
             $(FUZZ_BUILD)/obj/gen/version.o
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/obj/gen/%.o: $(BUILD)/gen/%.cc | deps deps-fuzz
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCXX $<")
	$(Q)$(FUZZ_CXX) $(CPPFLAGS) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/%_fuzz: $(FUZZ_BUILD)/obj/tests/fuzz/%_fuzz.o $(FUZZ_LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZERS)

fuzz: fuzz-build
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) scripts/fuzz

# Rewrites the seed corpora from this machine (root; see the two generators).
$(FUZZ_BUILD)/make-perf-corpus: tests/fuzz/make-perf-corpus.cpp $(LIBTRACEKIT) | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -o $@ $< $(LIBTRACEKIT) $(LDLIBS)

fuzz-corpus: $(FUZZ_BUILD)/make-perf-corpus
	$(Q)tests/fuzz/make-corpus.sh && $(FUZZ_BUILD)/make-perf-corpus

-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
# ---- end fuzz ---------------------------------------------------------------
