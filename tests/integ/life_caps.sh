#!/usr/bin/env bash
# The capabilities netd needs, as deploy/systemd/netd.service grants them
# (CapabilityBoundingSet=; for a root service that is what it gets):
# CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_NET_BIND_SERVICE, CAP_SYS_PTRACE, and for
# the API gateway's worker CAP_SYS_CHROOT, CAP_SETUID, CAP_SETGID.  With
# exactly those, everything works: start, a new sandbox whose DNS and
# egress work, a --pid attach of a process with every capability, the
# gateway's worker up and unprivileged, delete.  Without each one, what
# needs it fails - so none is there for nothing.  (A new user found the
# gateway's worker dying at start under the unit's caps: it lacked the
# last three.)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndq$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
UNIT_CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' deploy/systemd/netd.service.in)
eq "the unit grants the seven capabilities" \
	"CAP_NET_ADMIN CAP_SYS_ADMIN CAP_NET_BIND_SERVICE CAP_SYS_PTRACE CAP_SYS_CHROOT CAP_SETUID CAP_SETGID" \
	"$UNIT_CAPS"
# The shipped policies, and one whose rule goes through the gateway (so
# netd starts the worker).
mkdir -p "$WORLD_DIR/policies"
cp policies/*.yaml "$WORLD_DIR/policies/" 2>/dev/null
cat >"$WORLD_DIR/policies/gw.yaml" <<-YAML
name: gw
egress:
  - domains: [api.openai.com]
    ports: [443]
    gateway: {}
YAML
export NETD_POLICIES=$WORLD_DIR/policies
REAL_BIN=$NETD_BIN

# with_caps CAPS... - a wrapper that runs netd with only CAPS (setpriv).
with_caps() {
	local set=-all c
	for c in "$@"; do set+=",+${c#CAP_}"; done
	set=${set,,}
	cat >"$WORLD_DIR/netd-caps" <<-SH
	#!/bin/sh
	exec setpriv --bounding-set=$set --inh-caps=-all -- "$REAL_BIN" "\$@"
	SH
	chmod +x "$WORLD_DIR/netd-caps"
}

# A process in its own netns holding every capability, to attach by --pid.
unshare -n sleep 600 &
FULL_PID=$!
world_pid_track "$FULL_PID"

gw_metrics() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics | grep -E '^netd_gateway_worker_(wanted|up) ' | sort -r | tr '\n' ' '; }

# ---- all four ----------------------------------------------------------------------
# shellcheck disable=SC2086
with_caps $UNIT_CAPS
NETD_BIN=$WORLD_DIR/netd-caps netd_up || { t_fail "netd starts with the unit's capabilities"; t_summary; exit 1; }
NETD_BIN=$REAL_BIN
has "netd really runs with only those" "00000000002c14c0" "$(grep CapEff /proc/"$NETD_PID"/status)"
wpid=$(netd status | jq -r .gateway.worker_pid)
eq "the gateway's worker is up" true "$(netd status | jq -r .gateway.worker_up)"
eq "... and status says it runs, and is ok" "running ok" "$(netd status | jq -r '"\(.gateway.worker) \(.status)"')"
eq "... and so do the metrics" "netd_gateway_worker_wanted 1 netd_gateway_worker_up 1 " "$(gw_metrics)"
ok "... and stays up (no restarts)" test "$(sleep 1; netd status | jq -r .gateway.restarts)" = 0
has "... with no capabilities left" "CapEff:	0000000000000000" "$(cat "/proc/$wpid/status" 2>/dev/null)"
ok "sandbox create (new netns)" sb_create sb1 python-dev
eq "its DNS works" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "its egress works" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
ok "policy reload" netd policy reload
ok "attach --pid of a process with every capability" \
	netd sandbox create "$(sb_name full)" --policy deny-all --pid "$FULL_PID"
ok "delete the attached one" netd sandbox delete "$(sb_name full)"
ok "delete the new one" netd sandbox delete "$(sb_name sb1)"
netd_down

# ---- each one missing ----------------------------------------------------------------
# without CAP - the unit's set but CAP (bash arrays: no word in another's way).
without() {
	local c out=()
	for c in $UNIT_CAPS; do [ "$c" = "$1" ] || out+=("$c"); done
	with_caps "${out[@]}"
}
without CAP_SYS_PTRACE
NETD_BIN=$WORLD_DIR/netd-caps netd_up || t_fail "netd starts without CAP_SYS_PTRACE"
NETD_BIN=$REAL_BIN
ok "without CAP_SYS_PTRACE: a new sandbox still works" sb_create sb2 deny-all
out=$(netd sandbox create "$(sb_name full)" --policy deny-all --pid "$FULL_PID" 2>&1)
has "without CAP_SYS_PTRACE: attaching a more privileged process fails" "Permission denied" "$out"
netd sandbox delete "$(sb_name sb2)" >/dev/null 2>&1
netd_down
without CAP_NET_BIND_SERVICE
NETD_BIN=$WORLD_DIR/netd-caps netd_up >/dev/null 2>&1
NETD_BIN=$REAL_BIN
out=$(netd sandbox create "$(sb_name sb3)" --policy deny-all 2>&1)
has "without CAP_NET_BIND_SERVICE: no sandbox (its gateway's DNS is port 53)" "ermission denied" "$out$(cat "$NETD_LOG")"
netd sandbox delete "$(sb_name sb3)" >/dev/null 2>&1
netd_down >/dev/null
for c in CAP_SYS_CHROOT CAP_SETUID CAP_SETGID; do
	without "$c"
	NETD_BIN=$WORLD_DIR/netd-caps netd_up >/dev/null 2>&1
	NETD_BIN=$REAL_BIN
	eq "without $c: no gateway worker" false "$(netd status | jq -r .gateway.worker_up)"
	st=$(netd status)
	eq "... status says it failed, and why" \
		"failed: netd lacks $c, which the worker needs to chroot and become gateway.user" \
		"$(jq -r .gateway.worker <<<"$st")"
	eq "... and is degraded, with that as its warning" \
		"degraded the gateway worker is not running (netd lacks $c, which the worker needs to chroot and become gateway.user): connections steered to it are refused" \
		"$(jq -r '"\(.status) \(.warnings | join("|"))"' <<<"$st")"
	eq "... metrics: wanted but not up" "netd_gateway_worker_wanted 1 netd_gateway_worker_up 0 " "$(gw_metrics)"
	has "... and netd says which capability and where to add it" "lacks $c" "$(cat "$NETD_LOG")"
	netd_down >/dev/null
done
for c in CAP_NET_ADMIN CAP_SYS_ADMIN; do
	without "$c"
	# not in $(...): netd_up must record NETD_PID here, for netd_down
	NETD_BIN=$WORLD_DIR/netd-caps netd_up >"$WORLD_DIR/up.out" 2>&1 &&
		netd sandbox create "$(sb_name sb4)" --policy deny-all >>"$WORLD_DIR/up.out" 2>&1
	rcc=$?
	NETD_BIN=$REAL_BIN
	ok "without $c: netd does not work (exit $rcc)" test "$rcc" != 0
	netd sandbox delete "$(sb_name sb4)" >/dev/null 2>&1
	if [ -n "${NETD_PID:-}" ] && kill -0 "$NETD_PID" 2>/dev/null; then netd_down >/dev/null; fi
	NETD_PID=""
done
t_summary
