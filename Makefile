# netd — one hand-written GNU Makefile.  `make V=1` shows commands.
#
#   make            build/netd and build/netd-cni (gcc, -O2)
#   make deps       apt-get the Debian packages netd and its tests need
#   make demo       build, then run the embedded demo world (root)
#   make test       ASan+UBSan build, unit tests, fuzz-corpus replay, golden
#                   ruleset tests and integration tests in private worlds (root)
#   make fuzz       libFuzzer targets, each for FUZZ_SECONDS (clang)
#   make bench      side-by-side benchmark against the peers (root)
#   make install    netd, netd-cni, config, policies, unit, man pages (DESTDIR, PREFIX)

CC      ?= gcc
CLANG   ?= clang
PKGS    := libnftnl libmnl libcares libevent libevent_pthreads yaml-0.1 jansson libsystemd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wformat=2 -Wno-unused-parameter -Wmissing-prototypes
ifeq ($(CI),true)
WARN    += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE -I. $(PKG_CFLAGS)
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -MMD -MP
LDLIBS  += $(PKG_LIBS)
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 60

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Everything but the entry point is library code, so unit tests and fuzz
# targets link exactly what the daemon runs.
LIB_SRC  := $(wildcard common/*.c dnsproxy/*.c dnsproxy/*/*.c netd/*.c netd/*/*.c)
LIB_SRC  := $(filter-out netd/main.c,$(LIB_SRC))
MAIN_SRC := netd/main.c
CNI_SRC  := $(wildcard cni-plugin/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

# (helpers, so no '%' stands in pattern-rule prerequisites)
asan_objs = $(patsubst %.c,build/asan/obj/%.o,$(1))
fuzz_objs = $(patsubst %.c,build/fuzz/obj/%.o,$(1))

all: build/netd $(if $(CNI_SRC),build/netd-cni)

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

# Each test names the sources it links in tests/unit/NAME.mk as NAME_SRC
# (pure modules link only themselves and common/).
-include $(wildcard tests/unit/*.mk tests/fuzz/*.mk)
.SECONDEXPANSION:
build/asan/unit/%: build/asan/obj/tests/unit/%.o $$(call asan_objs,$$($$*_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD/SAN  $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS) -lcmocka

# Fuzz targets replayed through a plain main() (tests/fuzz/replay.c).
build/asan/replay/%: build/asan/obj/tests/fuzz/%.o build/asan/obj/tests/fuzz/replay.o $$(call asan_objs,$$($$*_SRC))
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

UNIT_BINS   := $(patsubst tests/unit/%.c,build/asan/unit/%,$(UNIT_SRC))
REPLAY_BINS := $(patsubst tests/fuzz/%.c,build/asan/replay/%,$(FUZZ_SRC))

asan: build/asan/netd $(if $(CNI_SRC),build/asan/netd-cni) $(UNIT_BINS) $(REPLAY_BINS)

# ---- libFuzzer ---------------------------------------------------------
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(FUZZ_FLAGS) -c -o $@ $<

build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o $$(call fuzz_objs,$$($$*_SRC))
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

fuzz: $(FUZZ_BINS)
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# ---- entry points -------------------------------------------------------
deps:
	$(Q)tests/deps.sh

demo: build/netd
	$(Q)tests/demo.sh

test: asan
	$(Q)tests/run.sh

bench: build/netd
	$(Q)tests/bench/run.sh

clean:
	rm -rf build

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

install: build/netd build/netd-cni
	$(INSTALL) -d "$(DESTDIR)$(sbindir)" "$(DESTDIR)$(CNI_BIN_DIR)" \
		"$(DESTDIR)$(sysconfdir)/netd/policies" "$(DESTDIR)$(sysconfdir)/logrotate.d" \
		"$(DESTDIR)$(systemdunitdir)" "$(DESTDIR)$(mandir)/man5" "$(DESTDIR)$(mandir)/man8" \
		"$(DESTDIR)$(bashcompdir)" "$(DESTDIR)$(datadir)/netd" build/install
	$(INSTALL) -m 0755 build/netd "$(DESTDIR)$(sbindir)/netd"
	$(INSTALL) -m 0755 build/netd-cni "$(DESTDIR)$(sbindir)/netd-cni"
	$(INSTALL) -m 0755 build/netd-cni "$(DESTDIR)$(CNI_BIN_DIR)/netd-cni"
	sed -e 's|^#policy_dir: /etc/netd/policies$$|$(if $(filter /etc,$(sysconfdir)),#,)policy_dir: $(sysconfdir)/netd/policies|' \
		deploy/netd.yaml.example >build/install/netd.yaml
	$(INSTALL) -m 0644 build/install/netd.yaml "$(DESTDIR)$(datadir)/netd/netd.yaml.example"
	$(call install_conf,build/install/netd.yaml,$(DESTDIR)$(sysconfdir)/netd/netd.yaml)
	for f in policies/*.yaml; do \
		$(call install_conf,$$f,$(DESTDIR)$(sysconfdir)/netd/policies/$$(basename $$f)); \
	done
	sed -e 's|@SBINDIR@|$(sbindir)|g' -e 's|@SYSCONFDIR@|$(sysconfdir)|g' \
		deploy/systemd/netd.service.in >build/install/netd.service
	$(INSTALL) -m 0644 build/install/netd.service "$(DESTDIR)$(systemdunitdir)/netd.service"
	$(INSTALL) -m 0644 deploy/logrotate/netd "$(DESTDIR)$(sysconfdir)/logrotate.d/netd"
	$(INSTALL) -m 0644 docs/man/netd.8 "$(DESTDIR)$(mandir)/man8/netd.8"
	$(INSTALL) -m 0644 docs/man/netd.yaml.5 docs/man/netd-policy.5 "$(DESTDIR)$(mandir)/man5/"
	$(INSTALL) -m 0644 deploy/bash-completion/netd "$(DESTDIR)$(bashcompdir)/netd"

uninstall:
	rm -f "$(DESTDIR)$(sbindir)/netd" "$(DESTDIR)$(sbindir)/netd-cni" \
		"$(DESTDIR)$(CNI_BIN_DIR)/netd-cni" "$(DESTDIR)$(systemdunitdir)/netd.service" \
		"$(DESTDIR)$(sysconfdir)/logrotate.d/netd" "$(DESTDIR)$(mandir)/man8/netd.8" \
		"$(DESTDIR)$(mandir)/man5/netd.yaml.5" "$(DESTDIR)$(mandir)/man5/netd-policy.5" \
		"$(DESTDIR)$(bashcompdir)/netd" "$(DESTDIR)$(datadir)/netd/netd.yaml.example"
	@echo "kept: $(DESTDIR)$(sysconfdir)/netd (config, policies), /var/lib/netd, /var/log/netd"

.PHONY: install uninstall

.PHONY: all asan deps demo test fuzz bench clean
.SECONDARY:

-include $(shell find build -name '*.d' 2>/dev/null)
