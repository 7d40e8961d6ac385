# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap top-level Makefile.
#
#   make                  library (static + shared), apps, tests
#   make check            build and run every test; ends "N passed, N failed"
#   make check TESTS="test-xsk test-pool:test_ring_full test-xsk:recv"
#                         only those tests, or only those cases of a test
#                         (NAME:CASE; tests/run-tests.sh)
#   make check SANITIZE=address|thread|undefined
#   make check-long       the long loops: ucpumapd started and stopped 200
#                         times (test-cycles; check runs 10), and 1000 ucm_dp
#                         life cycles (test-lifecycle; check runs 300)
#   make check-abi        the shared library's ABI against lib/abi/ (abigail-tools)
#   make abi-baseline     write that baseline again (a deliberate commit)
#   make check-unit       only the unit tests (no root, no network)
#   make fuzz FUZZ_SECONDS=S
#                         each libFuzzer target (tests/fuzz/) for S seconds
#                         (clang, ASan+UBSan; build/fuzz/)
#   make V=1              show the commands
#   make WERROR=1         warnings are errors (the default when CI=true)
#   make install PREFIX=/usr/local DESTDIR=...
#                         = install-lib install-dev install-bin install-man
#                         (SYSCONFDIR: /etc with PREFIX=/usr, else PREFIX/etc)
#   make uninstall        what install put there (the same PREFIX, DESTDIR)
#
# CPPFLAGS, CFLAGS and LDFLAGS are taken from the environment or the command
# line (as dpkg-buildflags sets them); CFLAGS defaults to -O2 -g.
#
# Objects go to build/ (build/$(SANITIZE)/ for sanitizer builds, build/fuzz/
# for the fuzz targets). Library sources are compiled twice: release objects
# for libucpumap.{a,so} and the apps, and debug objects (-DUCM_DEBUG: every
# frame move checked) for the unit tests.

# The version is the last node of the symbol map (UCPUMAP_x.y.z, one node
# per release), as libxdp does: the map says which release this is, and
# the file name of the shared library and the pkg-config file follow it.
# The soname is libucpumap.so.$(VERSION_MAJOR).
VERSION := $(shell sed -n 's/^UCPUMAP_\([0-9]*\.[0-9]*\.[0-9]*\) {.*/\1/p' \
	lib/libucpumap.map | tail -n 1)
ifeq ($(words $(subst ., ,$(VERSION))),3)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
VERSION_PATCH := $(word 3,$(subst ., ,$(VERSION)))
else
$(error lib/libucpumap.map: no version node 'UCPUMAP_x.y.z {' found)
endif

.DEFAULT_GOAL := all

# Every goal one that needs no configuration (make clean): none read.
ifneq ($(filter-out clean distclean help uninstall,$(MAKECMDGOALS))$(if $(MAKECMDGOALS),,all),)
include config.mk
endif
# make clean all, make -j2 distclean check: the clean first, then the rest.
ifneq ($(filter clean distclean,$(MAKECMDGOALS)),)
ifneq ($(filter-out clean distclean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif
endif

config.mk: configure
	sh configure

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
# ucpumapd@.service; Debian's packages want /lib/systemd/system (debian/rules).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# Where the unit reads /etc/ucpumap/IFACE.conf: /etc for a system install
# (PREFIX=/usr), PREFIX/etc otherwise, as autoconf's sysconfdir.
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD := build/$(SANITIZE)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ifeq ($(SANITIZE),address)
SAN_FLAGS += -fsanitize=undefined
endif
# Undefined behaviour aborts, so its test fails; it would only print.
ifneq ($(filter address undefined,$(SANITIZE)),)
SAN_FLAGS += -fno-sanitize-recover=all
endif
else
BUILD := build
SAN_FLAGS :=
endif

CFLAGS ?= -O2 -g
# -Werror only when asked: WERROR=1, or CI=true (CI's `make check`). A
# distribution's compiler or flags may warn where ours do not.
WERROR ?= $(if $(filter true,$(CI)),1,0)
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN := -Wall -Wextra $(WERROR_FLAG) -Wno-unused-parameter -Wshadow -Wstrict-prototypes
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -fPIC -fvisibility=hidden \
	-Ilib/include -Ilib $(LIBURING_CFLAGS) $(LIBXDP_CFLAGS) $(LIBBPF_CFLAGS) $(SAN_FLAGS) \
	$(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
DBG_CFLAGS := $(BASE_CFLAGS) -DUCM_DEBUG
# What the library itself links: liburing (tun batches), libxdp (AF_XDP
# sockets), libbpf (and its libelf and zlib) for the XDP object.
LIB_LDLIBS := $(LIBURING_LIBS) $(LIBXDP_LIBS) $(LIBBPF_LIBS) $(LIBELF_LIBS) $(ZLIB_LIBS)
LDLIBS_BASE := $(LIB_LDLIBS) -lpthread $(SAN_FLAGS)

# The library's layers, each using only those before it (docs/design/overview.md, "Layers"):
# lib/core, lib/proto, lib/engine, lib/io, then xsk/ (the AF_XDP datapath).
LAYERS := lib/core lib/proto lib/engine lib/io xsk
LIB_SRCS := $(sort $(foreach l,$(LAYERS),$(wildcard $(l)/*.c)))
LIB_HDRS := $(foreach l,$(LAYERS),$(wildcard $(l)/*.h)) $(wildcard lib/include/ucpumap/*.h)
PUB_HDRS := $(wildcard lib/include/ucpumap/*.h)

# The XDP object, embedded in the library by xsk/bpf_obj.S.
BPF_OBJ := $(BUILD)/bpf/steer.bpf.o
BPF_CFLAGS := -target bpf -O2 -g -Wall $(WERROR_FLAG) $(ARCH_INCLUDES) -Ilib/include
EMBED_OBJ := $(BUILD)/xsk/bpf_obj.o

LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS)) $(EMBED_OBJ)
LIB_DBG_OBJS := $(patsubst %.c,$(BUILD)/%.dbg.o,$(LIB_SRCS)) $(EMBED_OBJ)

STATIC_LIB := $(BUILD)/libucpumap.a
DEBUG_LIB := $(BUILD)/libucpumap-debug.a
SHARED_LIB := $(BUILD)/libucpumap.so.$(VERSION)
SONAME := libucpumap.so.$(VERSION_MAJOR)

APPS := $(BUILD)/ucpumap-bench $(BUILD)/ucpumapd $(BUILD)/ucpumap-gen
# What the three apps share: helpers and the option tables' parser.
APP_COMMON := apps/common/util.c apps/common/opts.c
# Each program is every source of its folder and what the apps share.
APP_SRCS_ucpumap-bench := $(sort $(wildcard apps/ucpumap-bench/*.c)) $(APP_COMMON)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test-*.c))
# The pool's tests once more against the release library: what a release
# build checks of a return (no tags) is not what a debug build checks.
UNIT_TESTS += $(BUILD)/tests/test-pool-release
# Programs the test scripts run (tests/progs/). link_test.c is built by
# test-install.sh against the installed library, not here.
PROG_SHIMS := tests/progs/fault_shim.c
PROG_OWN_BUILD := tests/progs/link_test.c
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,\
	$(filter-out $(PROG_SHIMS) $(PROG_OWN_BUILD),$(wildcard tests/progs/*.c)))
# Faults on demand (LD_PRELOAD) in a running daemon (test-faults.sh,
# test-backpressure.sh).
TEST_PROGS += $(BUILD)/tests/progs/libfault_shim.so

# Everything is rebuilt when the flags change (a SANITIZE or V switch
# must not mix objects).
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(BASE_CFLAGS) $(LDFLAGS)
$(shell mkdir -p $(BUILD) && (test -f $(FLAGS_STAMP) && \
	[ "$$(cat $(FLAGS_STAMP))" = "$(FLAGS_NOW)" ] || echo "$(FLAGS_NOW)" > $(FLAGS_STAMP)))
DEPS := Makefile config.mk $(FLAGS_STAMP)
# Written above as make reads this file; again when a goal before (make
# clean all) took it away.
$(FLAGS_STAMP):
	@mkdir -p $(@D)
	@echo "$(FLAGS_NOW)" > $@

.PHONY: all lib apps tests check check-long check-unit check-abi abi-baseline fuzz fuzz-build install \
	install-lib install-dev install-bin install-man uninstall clean distclean help
all: lib apps tests

lib: $(STATIC_LIB) $(SHARED_LIB) $(DEBUG_LIB)
apps: $(APPS)
tests: $(UNIT_TESTS) $(TEST_PROGS)

$(BUILD)/%.o: %.c $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -c $< -o $@

$(BUILD)/%.dbg.o: %.c $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -c $< -o $@

$(BPF_OBJ): bpf/steer.bpf.c $(wildcard bpf/*.h) lib/include/ucpumap/flowhash.h lib/include/ucpumap/steer.h $(DEPS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(EMBED_OBJ): xsk/bpf_obj.S $(BPF_OBJ) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,AS,$@)
	$(Q)$(CC) -c -DUCM_STEER_OBJ='"$(BPF_OBJ)"' $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(DEBUG_LIB): $(LIB_DBG_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS) lib/libucpumap.map
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libucpumap.map $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LDLIBS_BASE)
	$(Q)ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(BUILD)/libucpumap.so

APP_CFLAGS := $(BASE_CFLAGS) -Iapps/common

$(BUILD)/ucpumap-bench: $(APP_SRCS_ucpumap-bench) $(wildcard apps/common/*.h apps/ucpumap-bench/*.h) $(STATIC_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $(APP_SRCS_ucpumap-bench) $(STATIC_LIB) $(LDFLAGS) $(LDLIBS_BASE) -lm

# The metrics' HTTP server is the daemon's alone among the apps; so is
# the version it prints (--version, the banner, /metrics), the map's.
UCPUMAPD_SRCS := $(wildcard apps/ucpumapd/*.c) apps/common/httpd.c
$(BUILD)/ucpumapd: $(UCPUMAPD_SRCS) $(wildcard apps/ucpumapd/*.h) $(APP_COMMON) $(wildcard apps/common/*.h) $(STATIC_LIB) $(LIB_HDRS) lib/libucpumap.map $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(APP_CFLAGS) $(LIBSECCOMP_CFLAGS) -DUCPUMAPD_VERSION='"$(VERSION)"' \
		-o $@ $(UCPUMAPD_SRCS) $(APP_COMMON) $(STATIC_LIB) \
		$(LDFLAGS) $(LDLIBS_BASE) $(LIBSYSTEMD_LIBS) $(LIBSECCOMP_LIBS) -lm

# The traffic generator: its own XDP object (bpf/gen.bpf.c), embedded in
# the binary by apps/ucpumap-gen/gen_obj.S; it needs libbpf and libxdp, and
# of the library only the netdev family's query (lib/io/netdev.c: whether
# IFACE takes redirected frames), from the static archive.
GEN_BPF_OBJ := $(BUILD)/bpf/gen.bpf.o
GEN_EMBED_OBJ := $(BUILD)/apps/ucpumap-gen/gen_obj.o

$(GEN_BPF_OBJ): bpf/gen.bpf.c apps/ucpumap-gen/gen.h $(DEPS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Iapps/ucpumap-gen -c $< -o $@

$(GEN_EMBED_OBJ): apps/ucpumap-gen/gen_obj.S $(GEN_BPF_OBJ) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,AS,$@)
	$(Q)$(CC) -c -DUCM_GEN_OBJ='"$(GEN_BPF_OBJ)"' $< -o $@

APP_SRCS_ucpumap-gen := $(sort $(wildcard apps/ucpumap-gen/*.c)) $(APP_COMMON)

$(BUILD)/ucpumap-gen: $(APP_SRCS_ucpumap-gen) $(wildcard apps/common/*.h apps/ucpumap-gen/*.h) $(GEN_EMBED_OBJ) $(STATIC_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $(APP_SRCS_ucpumap-gen) $(GEN_EMBED_OBJ) $(STATIC_LIB) $(LDFLAGS) $(LIBXDP_LIBS) $(LIBBPF_LIBS) $(LIBELF_LIBS) $(ZLIB_LIBS) -lpthread $(SAN_FLAGS) -lm

$(BUILD)/tests/%: tests/unit/%.c tests/unit/utest.h $(DEBUG_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -o $@ $< $(DEBUG_LIB) $(LDFLAGS) $(LDLIBS_BASE)

$(BUILD)/tests/test-pool-release: tests/unit/test-pool.c tests/unit/utest.h $(STATIC_LIB) \
		$(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -o $@ $< $(STATIC_LIB) $(LDFLAGS) $(LDLIBS_BASE)

# The apps' option tables are tested on their own: apps/common is not the
# library's.
$(BUILD)/tests/test-opts: tests/unit/test-opts.c tests/unit/utest.h $(APP_COMMON) \
		$(wildcard apps/common/*.h) $(DEBUG_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -Iapps/common -o $@ $< $(APP_COMMON) $(DEBUG_LIB) $(LDFLAGS) \
		$(LDLIBS_BASE)

# test-sports includes the bench's scale_sports.c, whose header wants
# apps/common's.
$(BUILD)/tests/test-sports: apps/ucpumap-bench/scale_sports.c apps/ucpumap-bench/scale.h
$(BUILD)/tests/test-sports: DBG_CFLAGS += -Iapps/common

# test-httpd includes apps/common's httpd.c (its internals).
$(BUILD)/tests/test-httpd: tests/unit/test-httpd.c tests/unit/utest.h apps/common/httpd.c \
		$(APP_COMMON) $(wildcard apps/common/*.h) $(DEBUG_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -Iapps/common -o $@ $< $(APP_COMMON) $(DEBUG_LIB) $(LDFLAGS) \
		$(LDLIBS_BASE) -lm

# test-journal includes the daemon's journal.c (its static functions).
$(BUILD)/tests/test-journal: apps/ucpumapd/journal.c apps/ucpumapd/journal.h

$(BUILD)/tests/progs/lib%_shim.so: tests/progs/%_shim.c $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -fPIC $(LIBURING_CFLAGS) $(CPPFLAGS) $(CFLAGS) \
		-shared -o $@ $< $(LDFLAGS) -ldl

$(BUILD)/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h) tests/unit/utest.h \
		$(DEBUG_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -Itests/unit -o $@ $< $(DEBUG_LIB) $(LDFLAGS) $(LDLIBS_BASE)

# Set-up failures (test-setupfail.sh): the calls setupfail.c makes fail,
# taken by the linker's --wrap. It reaches only calls from the objects
# linked in, so libxdp, libbpf, libelf, zlib and liburing come from their
# archives too (their -dev packages ship them): their own allocations,
# sockets and BPF objects fail as well. The real ones are __real_*: glibc's,
# or a sanitizer's malloc, so LeakSanitizer judges in an ASan build.
comma := ,
SETUPFAIL_WRAP := malloc calloc realloc aligned_alloc posix_memalign strdup \
	pthread_attr_setaffinity_np io_uring_queue_init_params socket eventfd epoll_create1 \
	bpf_map_create \
	bpf_prog_load bpf_btf_load bpf_link_create pthread_create
$(BUILD)/tests/progs/setupfail: tests/progs/setupfail.c tests/progs/census.h \
		$(DEBUG_LIB) $(LIB_HDRS) $(DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DBG_CFLAGS) -Itests/unit -o $@ $< $(DEBUG_LIB) $(LDFLAGS) \
		$(patsubst %,-Wl$(comma)--wrap=%,$(SETUPFAIL_WRAP)) \
		-Wl,-Bstatic $(LIB_LDLIBS) -Wl,-Bdynamic -lpthread $(SAN_FLAGS)

check: all
	$(Q)BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/run-tests.sh $(TESTS)

# The loops that take minutes: the daemon's 200 runs (issue 14) and 1000
# life cycles of a ucm_dp, 332 s and 140 s here (tests/run-tests.sh's
# limit per test raised to match; a sanitizer build doubles it).
check-long: all
	$(Q)BUILD=$(BUILD) SANITIZE=$(SANITIZE) CYCLES=200 LIFECYCLE_ROUNDS=1000 \
		TEST_TIMEOUT=1200 sh tests/run-tests.sh test-cycles test-lifecycle

# The ABI (libabigail): the shared library's exported functions and
# variables and the public types they reach, as abidw writes them. No
# absolute path goes in, so the baseline is the same file wherever the
# tree is. check-abi fails on any change but additions
# (scripts/check-abi.sh); abi-baseline writes the baseline again, for a
# deliberate commit.
ABI_BASELINE := lib/abi/libucpumap.abi
ABI_DUMP := $(BUILD)/libucpumap.abi
ABIDW_FLAGS := --no-corpus-path --no-comp-dir-path --drop-private-types \
	--exported-interfaces-only --headers-dir lib/include/ucpumap

$(ABI_DUMP): $(SHARED_LIB) $(PUB_HDRS)
	@command -v abidw > /dev/null || { echo "abidw not found (Debian: abigail-tools;" \
		"scripts/install-deps.sh installs it)" >&2; exit 1; }
	$(call msg,ABIDW,$@)
	$(Q)abidw $(ABIDW_FLAGS) --out-file $@ $(SHARED_LIB)

check-abi: $(ABI_DUMP)
	$(Q)sh scripts/check-abi.sh $(ABI_BASELINE) $(ABI_DUMP)

abi-baseline: $(ABI_DUMP)
	$(Q)mkdir -p $(dir $(ABI_BASELINE))
	$(Q)cp $(ABI_DUMP) $(ABI_BASELINE)
	@echo "  wrote $(ABI_BASELINE): commit it on its own, saying why the ABI changed"


# The unit tests alone: no root, no network (a package build runs these).
check-unit: $(UNIT_TESTS)
	$(Q)BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/run-tests.sh $(notdir $(UNIT_TESTS))

# libFuzzer targets (tests/fuzz/fuzz-NAME.c), linked with an archive of the
# library sources they exercise, all compiled by clang with the fuzzer's
# coverage, ASan and UBSan (a UBSan finding aborts, so libFuzzer reports
# it). They go to build/fuzz/, apart from every other build. `make fuzz`
# runs each for FUZZ_SECONDS from its seeds (tests/fuzz/corpus/fuzz-NAME/)
# with its dictionary (tests/fuzz/fuzz-NAME.dict, where there is one); no
# clang or no libFuzzer is a SKIP line, not a failure (tests/fuzz/run-fuzz.sh).
FUZZ_CC ?= $(CLANG)
FUZZ_SECONDS ?= 10
FUZZ_BUILD := build/fuzz
FUZZ_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilib/include -Ilib -g -O1 \
	-fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_SRCS := lib/core/log.c lib/proto/pkt.c lib/proto/gso.c lib/proto/split.c lib/io/neigh_nl.c
FUZZ_LIB := $(FUZZ_BUILD)/libucpumap-fuzz.a
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/%,$(FUZZ_NAMES))

# Rebuilt when the compiler or flags change, as the other builds are.
ifneq ($(filter fuzz fuzz-build,$(MAKECMDGOALS)),)
FUZZ_STAMP := $(FUZZ_BUILD)/.flags
FUZZ_NOW := $(FUZZ_CC) $(FUZZ_CFLAGS)
$(shell mkdir -p $(FUZZ_BUILD) && (test -f $(FUZZ_STAMP) && \
	[ "$$(cat $(FUZZ_STAMP))" = "$(FUZZ_NOW)" ] || echo "$(FUZZ_NOW)" > $(FUZZ_STAMP)))
$(FUZZ_STAMP):
	@mkdir -p $(@D)
	@echo "$(FUZZ_NOW)" > $@
endif
FUZZ_DEPS := Makefile config.mk $(FUZZ_STAMP)

$(FUZZ_BUILD)/%.o: %.c $(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_LIB_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz.h $(FUZZ_LIB) $(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB) -lpthread -lm

# fuzz-httpd includes apps/common's httpd.c (the metrics server's parser).
$(FUZZ_BUILD)/fuzz-httpd: apps/common/httpd.c apps/common/httpd.h apps/common/util.h

# fuzz-xskrx drives the RX path itself over a real UMEM and pool: an
# archive of its own, of xsk/queue*.c and what they call (lib/core,
# lib/proto, lib/engine; libxdp's ring accessors are inline, so no
# libxdp), compiled with -DUCM_DEBUG, as the unit tests' library is:
# every frame move checked against its tag, the audit counting the tags.
# clang 14 has no symver attribute (lib/core/ring.c), so the link names
# ucm_ring__create's default version itself (the function ring.c defines).
FUZZ_XSKRX_SRCS := $(sort $(wildcard lib/core/*.c lib/proto/*.c lib/engine/*.c)) \
	xsk/queue.c xsk/queue_chain.c xsk/queue_tx.c
FUZZ_XSKRX_CFLAGS := $(FUZZ_CFLAGS) -DUCM_DEBUG -Wno-unknown-attributes
FUZZ_XSKRX_LIB := $(FUZZ_BUILD)/libucpumap-fuzz-xskrx.a
FUZZ_RING_CREATE := $(shell sed -n 's/^struct ucm_ring \*\(ucm_ring_create_v[0-9_]*\)(.*)$$/\1/p' \
	lib/core/ring.c)
FUZZ_XSKRX_LDFLAGS := -Wl,--undefined=$(FUZZ_RING_CREATE) \
	-Wl,--defsym=ucm_ring__create=$(FUZZ_RING_CREATE)

$(FUZZ_BUILD)/dbg/%.o: %.c $(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_XSKRX_CFLAGS) -c $< -o $@

$(FUZZ_XSKRX_LIB): $(patsubst %.c,$(FUZZ_BUILD)/dbg/%.o,$(FUZZ_XSKRX_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz-xskrx: tests/fuzz/fuzz-xskrx.c tests/fuzz/fuzz.h $(FUZZ_XSKRX_LIB) \
		$(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_XSKRX_CFLAGS) -o $@ $< $(FUZZ_XSKRX_LIB) $(FUZZ_XSKRX_LDFLAGS) \
		-lpthread

# fuzz-chainq drives the cpumap (an inline worker) over the same debug
# archive, and the tun's iovecs of a chain: lib/io/tun_chain.c alone (it
# calls nothing but ucm_frame_chain(); the rest of lib/io needs liburing).
FUZZ_CHAINQ_OBJS := $(FUZZ_BUILD)/dbg/lib/io/tun_chain.o

$(FUZZ_BUILD)/fuzz-chainq: tests/fuzz/fuzz-chainq.c tests/fuzz/fuzz.h $(FUZZ_CHAINQ_OBJS) \
		$(FUZZ_XSKRX_LIB) $(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_XSKRX_CFLAGS) -o $@ $< $(FUZZ_CHAINQ_OBJS) $(FUZZ_XSKRX_LIB) \
		$(FUZZ_XSKRX_LDFLAGS) -lpthread

# fuzz-tunwrite compiles lib/io/tun.c in (its writev() renamed: no tun),
# over the same debug archive and tun_chain.c; tun.c's io_uring path is
# linked, not run.
$(FUZZ_BUILD)/fuzz-tunwrite: tests/fuzz/fuzz-tunwrite.c tests/fuzz/fuzz.h tests/fuzz/fuzz-batch.h \
		lib/io/tun.c $(FUZZ_CHAINQ_OBJS) $(FUZZ_XSKRX_LIB) $(LIB_HDRS) $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_XSKRX_CFLAGS) -o $@ $< $(FUZZ_CHAINQ_OBJS) $(FUZZ_XSKRX_LIB) \
		$(FUZZ_XSKRX_LDFLAGS) -luring -lpthread

# fuzz-gso shares its input's reading with fuzz-tunwrite.
$(FUZZ_BUILD)/fuzz-gso: tests/fuzz/fuzz-batch.h

fuzz-build: $(FUZZ_BINS)
	@:

fuzz:
	$(Q)MAKE="$(MAKE) --no-print-directory" FUZZ_CC="$(FUZZ_CC)" FUZZ_BUILD=$(FUZZ_BUILD) \
		sh tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

# The pkg-config file is rebuilt when the directories or the version it
# names change (a later `make install PREFIX=/usr` after `make`).
PC_FILE := $(BUILD)/libucpumap.pc
PC_STAMP := $(BUILD)/.pcvars
PC_NOW := $(PREFIX) $(LIBDIR) $(INCLUDEDIR) $(VERSION)
$(shell mkdir -p $(BUILD) && (test -f $(PC_STAMP) && \
	[ "$$(cat $(PC_STAMP))" = "$(PC_NOW)" ] || echo "$(PC_NOW)" > $(PC_STAMP)))
$(PC_STAMP):
	@mkdir -p $(@D)
	@echo "$(PC_NOW)" > $@

$(PC_FILE): lib/libucpumap.pc.template lib/libucpumap.map $(PC_STAMP) Makefile
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		$< > $@.tmp && mv $@.tmp $@

install: install-lib install-dev install-bin install-man

# The shared library and its symlinks.
install-lib: $(SHARED_LIB)
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libucpumap.so
	@# Installed for this system (no DESTDIR): the loader's cache, so that
	@# a program finds the library in /usr/local/lib at once.
	$(Q)if [ -z "$(DESTDIR)" ] && command -v ldconfig > /dev/null; then ldconfig; fi

# Headers, the static library and the pkg-config file.
install-dev: $(STATIC_LIB) $(PC_FILE)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/ucpumap $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(PUB_HDRS) $(DESTDIR)$(INCLUDEDIR)/ucpumap/
	install -m 0644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/

# The daemon in sbin (it needs root), the tools in bin, the daemon's
# systemd unit with its ExecStart pointing at where the daemon went, and
# the commented sample of the unit's optional IFACE.conf (never a file the
# unit reads: the operator's copies are left alone), both naming SYSCONFDIR.
UNIT_SED := -e 's|/usr/sbin/ucpumapd|$(SBINDIR)/ucpumapd|' -e 's|/etc/ucpumap/|$(SYSCONFDIR)/ucpumap/|g'
install-bin: $(APPS)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/ucpumap
	install -m 0755 $(BUILD)/ucpumapd $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(BUILD)/ucpumap-gen $(BUILD)/ucpumap-bench $(DESTDIR)$(BINDIR)/
	sed $(UNIT_SED) apps/ucpumapd/ucpumapd@.service > $(DESTDIR)$(SYSTEMDUNITDIR)/ucpumapd@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/ucpumapd@.service
	sed $(UNIT_SED) apps/ucpumapd/ucpumapd.conf.sample \
		> $(DESTDIR)$(SYSCONFDIR)/ucpumap/ucpumapd.conf.sample
	chmod 0644 $(DESTDIR)$(SYSCONFDIR)/ucpumap/ucpumapd.conf.sample

# man/*.3 (the library) and man/*.8 (the programs), those that exist;
# ucpumapd(8) with the paths of this install (the unit's, its IFACE.conf's
# folder, the daemon's), as the unit itself has them (UNIT_SED).
MAN_SED := $(UNIT_SED) -e 's|/lib/systemd/system/|$(SYSTEMDUNITDIR)/|g'
MAN3 := $(wildcard man/*.3)
MAN8 := $(wildcard man/*.8)
install-man:
ifneq ($(MAN3),)
	install -d $(DESTDIR)$(MANDIR)/man3
	install -m 0644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
endif
ifneq ($(MAN8),)
	install -d $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	sed $(MAN_SED) man/ucpumapd.8 > $(DESTDIR)$(MANDIR)/man8/ucpumapd.8
endif

# What install put there, and nothing else: the operator's IFACE.conf and
# IFACE.up files and the folder that holds them stay. A running unit goes
# on until it is stopped (systemctl stop, then daemon-reload).
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libucpumap.so.$(VERSION_MAJOR).* $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/libucpumap.so $(DESTDIR)$(LIBDIR)/$(notdir $(STATIC_LIB)) \
		$(DESTDIR)$(PKGCONFIGDIR)/libucpumap.pc \
		$(DESTDIR)$(SBINDIR)/ucpumapd $(DESTDIR)$(BINDIR)/ucpumap-gen \
		$(DESTDIR)$(BINDIR)/ucpumap-bench $(DESTDIR)$(SYSTEMDUNITDIR)/ucpumapd@.service \
		$(DESTDIR)$(SYSCONFDIR)/ucpumap/ucpumapd.conf.sample \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN8)))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/ucpumap
	$(Q)if [ -z "$(DESTDIR)" ] && command -v ldconfig > /dev/null; then ldconfig; fi

clean:
	rm -rf build

distclean: clean
	rm -f config.mk

# The header comment, from its third line to the first line that is not one.
help:
	@sed -n '3,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' Makefile
