#!/usr/bin/env bash
# `make install DESTDIR=...` lays out a host install: netd, netd-cni
# (also in CNI_BIN_DIR) and netd-docker with its unit, the example config (every key, not overwritten
# later), the shipped policies, netd.service, the logrotate snippet, the
# man pages and the bash completion.  The unit passes `systemd-analyze
# verify` (with no output: unknown keys only warn), the man pages render
# without a warning, the completion is valid bash.  Touches nothing outside
# its temporary directory; needs no root.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/integ/lib_netd.sh

T=$(mktemp -d /tmp/ndinst.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/root
ok "make install DESTDIR=$D" make -s install DESTDIR="$D"
for f in usr/local/sbin/netd usr/local/sbin/netd-cni opt/cni/bin/netd-cni usr/local/sbin/netd-docker; do
	ok "installed and executable: /$f" test -x "$D/$f"
done
for f in etc/netd/netd.yaml etc/netd/policies/deny-all.yaml usr/local/share/netd/policies/python-dev.yaml \
	usr/local/share/netd/policies/openai-only.yaml usr/local/share/netd/policies/deny-all.yaml \
	usr/local/share/netd/logrotate.example \
	usr/local/lib/systemd/system/netd.service usr/local/lib/systemd/system/netd-docker.service \
	usr/local/share/man/man8/netd.8 usr/local/share/man/man8/netd-cni.8 \
	usr/local/share/man/man8/netd-docker.8 \
	usr/local/share/man/man5/netd.yaml.5 \
	usr/local/share/man/man5/netd-policy.5 usr/local/share/bash-completion/completions/netd \
	usr/local/share/netd/netd.yaml.example; do
	ok "installed: /$f" test -s "$D/$f"
done
# Issue 32: a host's install is a host's, not the test world's.
eq "only deny-all is live; the shipped others are examples" "deny-all.yaml" \
	"$(ls "$D/etc/netd/policies")"
has "the installed netd.yaml never pins the documentation blocks" \
	"never_pin_documentation: true" "$(grep -v '^ *#' "$D/etc/netd/netd.yaml")"
has "... and the example beside it keeps every key commented, with its default" \
	"#never_pin_documentation: false" "$(cat "$D/usr/local/share/netd/netd.yaml.example")"
ok "the installed netd.yaml passes netd config check" \
	"$D/usr/local/sbin/netd" config check "$D/etc/netd/netd.yaml"
U=$D/usr/local/lib/systemd/system/netd.service
has "the unit runs the installed binary with the installed config" \
	"ExecStart=/usr/local/sbin/netd run --config /etc/netd/netd.yaml" "$(cat "$U")"
hasnt "no placeholder left in the unit" "@S" "$(cat "$U")"
has "Type=notify" "Type=notify" "$(cat "$U")"
has "ExecReload sends SIGHUP" 'ExecReload=/bin/kill -HUP $MAINPID' "$(cat "$U")"
has "the logrotate example's postrotate sends SIGUSR1" "--signal=USR1" \
	"$(cat "$D/usr/local/share/netd/logrotate.example")"
# One rotation on by default (issue 32): netd's own; logrotate's only if copied in.
ok "no logrotate snippet is installed into /etc/logrotate.d" test ! -e "$D/etc/logrotate.d/netd"
ok "the installed binary checks the installed policies" "$D/usr/local/sbin/netd" policy check "$D"/etc/netd/policies/*.yaml

# systemd-analyze verify wants ExecStart's binary on this machine: verify a
# copy whose ExecStart points into DESTDIR (nothing else differs), with
# MANPATH so Documentation='s man pages are looked up among the installed.
sed "s|^ExecStart=/usr/local/sbin/|ExecStart=$D/usr/local/sbin/|" "$U" >"$T/netd.service"
out=$(MANPATH=$D/usr/local/share/man systemd-analyze verify --man=yes "$T/netd.service" 2>&1); rc=$?
eq "systemd-analyze verify: exit 0, no warning" "0 " "$rc $out"
# netd-docker's unit: the installed binary, no capability, Docker's plugin dir.
UD=$D/usr/local/lib/systemd/system/netd-docker.service
has "netd-docker's unit runs the installed binary" "ExecStart=/usr/local/sbin/netd-docker" "$(cat "$UD")"
has "... with no capability" "CapabilityBoundingSet=" "$(grep -x 'CapabilityBoundingSet=' "$UD")"
sed "s|^ExecStart=/usr/local/sbin/|ExecStart=$D/usr/local/sbin/|" "$UD" >"$T/netd-docker.service"
out=$(MANPATH=$D/usr/local/share/man systemd-analyze verify --man=yes "$T/netd-docker.service" 2>&1); rc=$?
eq "systemd-analyze verify netd-docker.service: exit 0, no warning" "0 " "$rc $out"
eq "netd-docker --help names its default socket in Docker's plugin dir" 1 \
	"$("$D/usr/local/sbin/netd-docker" --help | grep -c /run/docker/plugins/netd.sock)"
# ... and it does catch a mistake.
sed 's/^Type=notify$/Type=notify\nBogusKey=1/' "$T/netd.service" >"$T/bad.service"
has "(verify reports an unknown key)" "Unknown key" "$(systemd-analyze verify --man=no "$T/bad.service" 2>&1)"

for m in man8/netd.8 man8/netd-cni.8 man8/netd-docker.8 man5/netd.yaml.5 man5/netd-policy.5; do
	out=$(MANWIDTH=80 man -l --warnings "$D/usr/local/share/man/$m" 2>&1 >/dev/null); rc=$?
	eq "man -l --warnings $m: renders, no warning" "0 " "$rc $out"
done
has "netd(8) documents the exit statuses" "daemon is unreachable" \
	"$(MANWIDTH=80 man -l "$D/usr/local/share/man/man8/netd.8" 2>/dev/null)"
printf '.TH X 1\n.BOGUS\n' >"$T/bad.1"
has "(man --warnings reports a bad macro)" "BOGUS" "$(man -l --warnings "$T/bad.1" 2>&1 >/dev/null)"

C=$D/usr/local/share/bash-completion/completions/netd
ok "bash -n on the completion" bash -n "$C"
eq "completion: netd sandbox cr<TAB>" "create" \
	"$(bash -c '. "$1"; COMP_WORDS=(netd sandbox cr); COMP_CWORD=2; _netd; echo "${COMPREPLY[*]}"' _ "$C")"
eq "completion: netd pol<TAB>" "policy" \
	"$(bash -c '. "$1"; COMP_WORDS=(netd pol); COMP_CWORD=1; _netd; echo "${COMPREPLY[*]}"' _ "$C")"
# --event completes every record type docs/audit.md's table lists (it missed five)
eq "completion: netd audit --event <TAB> is docs/audit.md's event table" \
	"$(sed -n '/^| `event` |/,/^$/s/^| `\([a-z_]*\)` |.*/\1/p' docs/audit.md | grep -vx event | sort | tr '\n' ' ')" \
	"$(bash -c '. "$1"; COMP_WORDS=(netd audit --event ""); COMP_CWORD=3; _netd; printf "%s\n" "${COMPREPLY[@]}"' _ "$C" | sort | tr '\n' ' ')"

# A second install keeps an edited config and policy, and puts the new one beside it.
echo "log_level: debug" >"$D/etc/netd/netd.yaml"
echo "# edited" >>"$D/etc/netd/policies/deny-all.yaml"
ok "make install again" make -s install DESTDIR="$D"
eq "an existing netd.yaml is not overwritten" "log_level: debug" "$(cat "$D/etc/netd/netd.yaml")"
ok "... the shipped one is beside it as netd.yaml.dist" test -s "$D/etc/netd/netd.yaml.dist"
has "an edited policy is kept" "# edited" "$(cat "$D/etc/netd/policies/deny-all.yaml")"
eq "no other .dist: nothing unchanged gets one" "deny-all.yaml deny-all.yaml.dist" \
	"$(ls "$D/etc/netd/policies" | tr '\n' ' ' | sed 's/ $//')"

# PREFIX, sbindir, sysconfdir, CNI_BIN_DIR move what they name.
E=$T/other
ok "make install PREFIX=/usr sysconfdir=/srv/etc CNI_BIN_DIR=/usr/lib/cni" \
	make -s install DESTDIR="$E" PREFIX=/usr sysconfdir=/srv/etc CNI_BIN_DIR=/usr/lib/cni
ok "sbindir follows PREFIX" test -x "$E/usr/sbin/netd"
ok "CNI_BIN_DIR" test -x "$E/usr/lib/cni/netd-cni"
has "the unit names sysconfdir's config" "--config /srv/etc/netd/netd.yaml" \
	"$(cat "$E/usr/lib/systemd/system/netd.service")"
has "the config names sysconfdir's policy_dir" "policy_dir: /srv/etc/netd/policies" \
	"$(grep '^policy_dir' "$E/srv/etc/netd/netd.yaml")"

ok "make uninstall" make -s uninstall DESTDIR="$D"
fail "uninstall removes the binary" test -e "$D/usr/local/sbin/netd"
fail "... and netd-docker's" test -e "$D/usr/local/sbin/netd-docker"
fail "... and its unit" test -e "$D/usr/local/lib/systemd/system/netd-docker.service"
ok "uninstall keeps the config" test -e "$D/etc/netd/netd.yaml"
t_summary
