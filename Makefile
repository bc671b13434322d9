# netd — one hand-written GNU Makefile.  `make V=1` shows commands.
#
#   make            build/netd, build/netd-cni and build/netd-docker (gcc, -O2)
#   make deps       apt-get the Debian packages netd and its tests need
#   make demo       build, then run the embedded demo world (root)
#   make test       ASan+UBSan build, unit tests, fuzz-corpus replay, golden
#                   ruleset tests and integration tests in private worlds (root)
#                   (one stage alone: make unit | replay | golden | integ)
#   make fuzz       libFuzzer targets, each for FUZZ_SECONDS (clang)
#   make bench      side-by-side benchmark against the peers (root)
#   make help       every target, one line each (the '##' comments below)
#   make install    netd, netd-cni, netd-docker, config, policies, units, man pages (DESTDIR, PREFIX)

CC      ?= gcc
CLANG   ?= clang
PKGS    := libnftnl libmnl libnetfilter_queue libcares libevent libevent_pthreads yaml-0.1 jansson libpsl libsystemd libcrypto libssl libevent_openssl libnghttp2 libseccomp
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wformat=2 -Wno-unused-parameter -Wmissing-prototypes
ifeq ($(CI),true)
WARN    += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE -I. $(PKG_CFLAGS)
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -MMD -MP
LDLIBS  += $(PKG_LIBS) -lhttp_parser
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 60

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Everything but the entry point is library code, so unit tests and fuzz
# targets link exactly what the daemon runs.  The test seams are not in it:
# dnsproxy/replay.c (the replay seam's edges) goes into the tests' own
# archive, never into build/netd (tests/ship_check.sh checks).
SEAM_SRC := dnsproxy/replay.c
LIB_SRC  := $(wildcard common/*.c dnsproxy/*.c dnsproxy/*/*.c netd/*.c netd/*/*.c)
LIB_SRC  := $(filter-out netd/main.c $(SEAM_SRC),$(LIB_SRC))
MAIN_SRC := netd/main.c
CNI_SRC  := $(wildcard cni-plugin/*.c)
CNI_LIB_SRC := $(filter-out cni-plugin/main.c,$(CNI_SRC))
DK_SRC   := $(wildcard docker-plugin/*.c)
DK_LIB_SRC := $(filter-out docker-plugin/main.c,$(DK_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

# (helpers, so no '%' stands in pattern-rule prerequisites)
asan_objs = $(patsubst %.c,build/asan/obj/%.o,$(1))
fuzz_objs = $(patsubst %.c,build/fuzz/obj/%.o,$(1))

all: build/netd $(if $(CNI_SRC),build/netd-cni) $(if $(DK_SRC),build/netd-docker) ## release build: build/netd, build/netd-cni, build/netd-docker (-O2)

# ---- release build -------------------------------------------------------
build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/netd: $(patsubst %.c,build/obj/%.o,$(MAIN_SRC) $(LIB_SRC))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/netd-cni: $(patsubst %.c,build/obj/%.o,$(CNI_SRC) $(filter common/%,$(LIB_SRC)))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# netd-docker, Docker's network driver for netd: docker-plugin/ and common/,
# libevent's evhttp and jansson (docs/docker.md).
build/netd-docker: $(patsubst %.c,build/obj/%.o,$(DK_SRC) $(filter common/%,$(LIB_SRC)))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- static netd-cni and the image (deploy/) ------------------------------
# netd-cni is copied onto every node, which may lack libjansson: link it
# statically (Debian ships libjansson.a).  common/ goes in as an archive so
# only the members the plugin uses are linked.  `make image-rootfs` lays
# out build/image/ for `docker build -f deploy/Dockerfile build/image`.
build/static/libcommon.a: $(patsubst %.c,build/obj/%.o,$(filter common/%,$(LIB_SRC)))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

build/static/netd-cni: $(patsubst %.c,build/obj/%.o,$(CNI_SRC)) build/static/libcommon.a
	@$(if $(Q),echo "  LD      $@ (static)")
	$(Q)$(CC) $(CFLAGS) -static -o $@ $^ $(shell pkg-config --static --libs jansson)

image-rootfs: build/netd build/static/netd-cni ## the container image's root (build/image) for deploy/Dockerfile (docs/kubernetes.md)
	$(Q)deploy/image-rootfs.sh build/image

# ---- sanitizer build: what the tests run -------------------------------
build/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC/SAN  $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -c -o $@ $<

build/asan/netd: $(patsubst %.c,build/asan/obj/%.o,$(MAIN_SRC) $(LIB_SRC))
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

build/asan/netd-cni: $(patsubst %.c,build/asan/obj/%.o,$(CNI_SRC) $(filter common/%,$(LIB_SRC)))
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

build/asan/netd-docker: $(patsubst %.c,build/asan/obj/%.o,$(DK_SRC) $(filter common/%,$(LIB_SRC)))
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# Unit tests and replayed fuzz targets link the library archives below, as
# the golden and integration helpers do: the linker takes only the members a
# test needs, so no test keeps a list of sources and a file that moves needs
# no edit here.  That a pure module's test needs no I/O is docs_check's
# "pure" rule (on includes and calls), not the link line's.
# (objects first, then the archives: a harness object's calls are resolved too)
build/asan/unit/%: build/asan/obj/tests/unit/%.o build/asan/libseams.a build/asan/libcni.a build/asan/libdocker.a build/asan/libnetd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LDLIBS) -lcmocka

# The daemon in a box runs on the stand-ins: nf_tables (tests/golden/fake_nft.c)
# and links (tests/unit/box_link.c); tests/unit/box_daemon.c is the harness.
# test_box_cli runs the real build/asan/netd and netd-cni against it.
BOX_OBJS := build/asan/obj/tests/golden/fake_nft.o build/asan/obj/tests/unit/box_link.o \
	    build/asan/obj/tests/unit/box_daemon.o
build/asan/unit/test_daemon: $(BOX_OBJS)
build/asan/unit/test_box_cli: $(BOX_OBJS)

# Fuzz targets replayed through a plain main() (tests/fuzz/replay.c).
build/asan/replay/%: build/asan/obj/tests/fuzz/%.o build/asan/obj/tests/fuzz/replay.o build/asan/libcni.a build/asan/libdocker.a build/asan/libnetd.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

UNIT_BINS   := $(patsubst tests/unit/%.c,build/asan/unit/%,$(UNIT_SRC))
REPLAY_BINS := $(patsubst tests/fuzz/%.c,build/asan/replay/%,$(FUZZ_SRC))

# ---- test helpers: built here, run by the test scripts -----------------
# The drivers and harnesses the golden and integration scripts run link the
# library through an archive, so they take exactly the objects they need and
# keep working when files move.  (ar q: members with the same basename in
# different folders are all kept.)
build/asan/libnetd.a: $(call asan_objs,$(LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar qcs $@ $^

# The test seams (SEAM_SRC), for the unit tests only: linked before libnetd.a.
build/asan/libseams.a: $(call asan_objs,$(SEAM_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar qcs $@ $^

# netd-cni's library code (all of cni-plugin/ but its main), for the tests.
build/asan/libcni.a: $(call asan_objs,$(CNI_LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar qcs $@ $^

# netd-docker's library code (all of docker-plugin/ but its main), for the tests.
build/asan/libdocker.a: $(call asan_objs,$(DK_LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar qcs $@ $^

# The golden driver renders through a stand-in kernel (tests/golden/fake_nft.c).
build/asan/golden/fw_golden: build/asan/obj/tests/golden/fake_nft.o

build/asan/golden/%: build/asan/obj/tests/golden/%.o build/asan/libnetd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

build/asan/integ/%: build/asan/obj/tests/integ/%.o build/asan/libnetd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# The connection-burst load generator is built plain -O2, no sanitizers:
# it must outrun the daemon under test, and it uses nothing of netd's.
build/test/acct_burst: tests/integ/acct_burst.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -O2 -Wall -o $@ $<

TEST_HELPERS := build/asan/golden/fw_golden build/asan/integ/link_driver build/asan/integ/tap_driver \
		build/asan/integ/proxy_harness build/test/acct_burst build/asan/integ/quic_send

asan: build/asan/netd $(if $(CNI_SRC),build/asan/netd-cni) $(if $(DK_SRC),build/asan/netd-docker) $(UNIT_BINS) $(REPLAY_BINS) $(TEST_HELPERS) ## ASan+UBSan build of everything the tests run (build/asan/)

# The real guest the microVM tests boot (tests/microvm/): Debian's cloud
# kernel and a busybox initramfs from `apt-get download`, cached in
# build/microvm/ (a rebuild downloads nothing).  Phony: the script decides
# whether anything changed.
microvm-guest: ## the microVM test guest: kernel + busybox initramfs (build/microvm/)
	$(Q)tests/microvm/build.sh build/microvm

# A netd world for that guest (tests/microvm/world.sh): its kernel's
# netfilter modules, the sanitizer builds of netd and the fw driver, and
# the tools its tests use.
microvm-world: microvm-guest build/asan/netd build/asan/golden/fw_golden ## the guest's second initramfs: netd and its tools (build/microvm/world.cpio.gz)
	$(Q)tests/microvm/world.sh build/microvm build/asan/netd build/asan/golden/fw_golden

# ---- libFuzzer ---------------------------------------------------------
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(FUZZ_FLAGS) -c -o $@ $<

# The same two archives, built by clang with the fuzzer's instrumentation.
build/fuzz/libnetd.a: $(call fuzz_objs,$(LIB_SRC))
	$(Q)rm -f $@ && ar qcs $@ $^

build/fuzz/libcni.a: $(call fuzz_objs,$(CNI_LIB_SRC))
	$(Q)rm -f $@ && ar qcs $@ $^

build/fuzz/libdocker.a: $(call fuzz_objs,$(DK_LIB_SRC))
	$(Q)rm -f $@ && ar qcs $@ $^

build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o build/fuzz/libcni.a build/fuzz/libdocker.a build/fuzz/libnetd.a
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

fuzz: $(FUZZ_BINS) ## libFuzzer targets, each for FUZZ_SECONDS (default 60; clang)
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# ---- entry points -------------------------------------------------------
deps: ## apt-get the Debian packages netd and its tests need (root)
	$(Q)tests/deps.sh

demo: build/netd ## build, then run the embedded demo world (root)
	$(Q)tests/demo.sh

# test runs every stage in one tests/run.sh, so it ends with one
# "total: N passed, N failed" line; each stage alone is below it.
test: all asan microvm-world ## the whole suite: unit + replay + golden + integ (root, about 40 min on 2 cores)
	$(Q)tests/run.sh

unit: $(UNIT_BINS) build/asan/netd $(if $(CNI_SRC),build/asan/netd-cni) $(if $(DK_SRC),build/asan/netd-docker) ## unit tests (cmocka), no root
	$(Q)tests/run.sh --stage unit

replay: $(REPLAY_BINS) ## every fuzz target's corpus and crash reproducers, replayed; no root
	$(Q)tests/run.sh --stage replay

golden: build/asan/golden/fw_golden ## golden ruleset tests (tests/golden/run.sh)
	$(Q)tests/run.sh --stage golden

integ: all asan microvm-world ## integration tests in private worlds (root); FILTER=NAME for some
	$(Q)tests/run.sh --stage integ $(FILTER)

# COVERAGE=--integ adds the integration stage (root; tests/coverage.sh).
coverage: ## gcov on a copy of the tree: product lines the rootless stages reach (COVERAGE=--integ: and only root tests)
	$(Q)tests/coverage.sh $(COVERAGE)

# The QUIC check's microbench (tests/bench/quic_bench.c): netd's code as
# the release build compiles it, no sanitizers, through an archive.
build/libnetd.a: $(patsubst %.c,build/obj/%.o,$(LIB_SRC))
	$(Q)rm -f $@ && ar qcs $@ $^

build/bench/quic_bench: build/obj/tests/bench/quic_bench.o build/libnetd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# What exporting one connection record costs (tests/bench/ipfix_bench.c): the
# same release-built code.
build/bench/ipfix_bench: build/obj/tests/bench/ipfix_bench.o build/libnetd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

bench: build/netd build/bench/quic_bench build/bench/ipfix_bench microvm-world ## side-by-side benchmark against the peers (root)
	$(Q)tests/bench/run.sh

clean: ## remove build/
	rm -rf build

help: ## this list
	@echo "make [TARGET] [V=1] [CI=true]"
	@awk -F':.*## ' '/^[a-z][a-z_-]*:.*## /{ printf "  %-15s%s\n", $$1, $$2 }' $(firstword $(MAKEFILE_LIST))

.PHONY: all asan microvm-guest microvm-world deps demo test unit replay golden integ fuzz bench coverage clean help image-rootfs

# ---- install (docs/install.md) -------------------------------------------
#   make install [DESTDIR=/tmp/stage] [PREFIX=/usr/local] [sbindir=...]
#                [sysconfdir=/etc] [CNI_BIN_DIR=/opt/cni/bin]
# An existing netd.yaml or policy file is never overwritten (the shipped
# one is also put beside it as *.dist when it differs).
PREFIX        ?= /usr/local
sbindir       ?= $(PREFIX)/sbin
sysconfdir    ?= /etc
datadir       ?= $(PREFIX)/share
mandir        ?= $(datadir)/man
systemdunitdir ?= $(PREFIX)/lib/systemd/system
bashcompdir   ?= $(datadir)/bash-completion/completions
CNI_BIN_DIR   ?= /opt/cni/bin
INSTALL       ?= install

# install_conf SRC DST - install SRC as DST unless DST exists.
install_conf = if [ -e "$(2)" ]; then cmp -s "$(1)" "$(2)" || $(INSTALL) -m 0644 "$(1)" "$(2).dist"; \
	else $(INSTALL) -m 0644 "$(1)" "$(2)"; fi

install: build/netd build/netd-cni build/netd-docker ## install netd, netd-cni, netd-docker, config, policies, units, man pages (DESTDIR, PREFIX)
	$(INSTALL) -d "$(DESTDIR)$(sbindir)" "$(DESTDIR)$(CNI_BIN_DIR)" \
		"$(DESTDIR)$(sysconfdir)/netd/policies" \
		"$(DESTDIR)$(systemdunitdir)" "$(DESTDIR)$(mandir)/man5" "$(DESTDIR)$(mandir)/man8" \
		"$(DESTDIR)$(bashcompdir)" "$(DESTDIR)$(datadir)/netd/policies" build/install
	$(INSTALL) -m 0755 build/netd "$(DESTDIR)$(sbindir)/netd"
	$(INSTALL) -m 0755 build/netd-cni "$(DESTDIR)$(sbindir)/netd-cni"
	$(INSTALL) -m 0755 build/netd-cni "$(DESTDIR)$(CNI_BIN_DIR)/netd-cni"
	$(INSTALL) -m 0755 build/netd-docker "$(DESTDIR)$(sbindir)/netd-docker"
	sed -e 's|^#policy_dir: /etc/netd/policies$$|$(if $(filter /etc,$(sysconfdir)),#,)policy_dir: $(sysconfdir)/netd/policies|' \
		deploy/netd.yaml.example >build/install/netd.yaml.example
	# A host's config: the documentation blocks never pinned (they are the test
	# world's; a host never meets them), the rest commented out with its default.
	sed -e 's|^#dns:$$|dns:|' \
		-e 's|^  #never_pin_documentation: false$$|  never_pin_documentation: true   # on a host (docs/configuration.md)|' \
		build/install/netd.yaml.example >build/install/netd.yaml
	$(INSTALL) -m 0644 build/install/netd.yaml.example "$(DESTDIR)$(datadir)/netd/netd.yaml.example"
	$(call install_conf,build/install/netd.yaml,$(DESTDIR)$(sysconfdir)/netd/netd.yaml)
	# deny-all is live (CNI's defaultPolicy names it); the rest are examples.
	$(call install_conf,policies/deny-all.yaml,$(DESTDIR)$(sysconfdir)/netd/policies/deny-all.yaml)
	$(INSTALL) -m 0644 policies/*.yaml "$(DESTDIR)$(datadir)/netd/policies/"
	sed -e 's|@SBINDIR@|$(sbindir)|g' -e 's|@SYSCONFDIR@|$(sysconfdir)|g' \
		deploy/systemd/netd.service.in >build/install/netd.service
	$(INSTALL) -m 0644 build/install/netd.service "$(DESTDIR)$(systemdunitdir)/netd.service"
	sed -e 's|@SBINDIR@|$(sbindir)|g' deploy/systemd/netd-docker.service.in >build/install/netd-docker.service
	$(INSTALL) -m 0644 build/install/netd-docker.service "$(DESTDIR)$(systemdunitdir)/netd-docker.service"
	$(INSTALL) -m 0644 deploy/logrotate/netd "$(DESTDIR)$(datadir)/netd/logrotate.example"
	$(INSTALL) -m 0644 docs/man/netd.8 docs/man/netd-cni.8 docs/man/netd-docker.8 "$(DESTDIR)$(mandir)/man8/"
	$(INSTALL) -m 0644 docs/man/netd.yaml.5 docs/man/netd-policy.5 "$(DESTDIR)$(mandir)/man5/"
	$(INSTALL) -m 0644 deploy/bash-completion/netd "$(DESTDIR)$(bashcompdir)/netd"

uninstall: ## remove what make install installed (keeps config, policies, state, logs)
	rm -f "$(DESTDIR)$(sbindir)/netd" "$(DESTDIR)$(sbindir)/netd-cni" \
		"$(DESTDIR)$(sbindir)/netd-docker" "$(DESTDIR)$(systemdunitdir)/netd-docker.service" \
		"$(DESTDIR)$(mandir)/man8/netd-docker.8" \
		"$(DESTDIR)$(CNI_BIN_DIR)/netd-cni" "$(DESTDIR)$(systemdunitdir)/netd.service" \
		"$(DESTDIR)$(datadir)/netd/logrotate.example" "$(DESTDIR)$(mandir)/man8/netd.8" \
		"$(DESTDIR)$(mandir)/man8/netd-cni.8" \
		"$(DESTDIR)$(mandir)/man5/netd.yaml.5" "$(DESTDIR)$(mandir)/man5/netd-policy.5" \
		"$(DESTDIR)$(bashcompdir)/netd" "$(DESTDIR)$(datadir)/netd/netd.yaml.example"
	rm -rf "$(DESTDIR)$(datadir)/netd/policies"
	@echo "kept: $(DESTDIR)$(sysconfdir)/netd (config, policies), /var/lib/netd, /var/log/netd"

.PHONY: install uninstall

.SECONDARY:

-include $(shell find build -name '*.d' 2>/dev/null)
