#!/usr/bin/env bash
# The upstream deadline (dns.upstream_deadline_ms): whatever the upstream
# does - never answers (blackholed), answers too late, or answers TC=1 over
# UDP and then stalls half-way over TCP - a sandbox's client gets SERVFAIL
# before its own timeout, which is below glibc's 5 s (a stub that gives up
# first never sees netd's answer).  The upstream is
# tests/integ/dns_badupstream.py on 192.0.2.99 in the world's inet netns.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndu$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
BAD=192.0.2.99
world_exec inet ip addr add $BAD/32 dev lo || { echo "0 passed, 1 failed"; exit 1; }
world_spawn inet "$WORLD_DIR/badup.log" "$WORLD_PYTHON" tests/integ/dns_badupstream.py $BAD 3.5
for _ in $(seq 50); do grep -q READY "$WORLD_DIR/badup.log" 2>/dev/null && break; sleep 0.1; done
ok "the misbehaving upstream listens" grep -q READY "$WORLD_DIR/badup.log"

NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/dl.yaml" <<'YAML'
name: dl
egress:
  - domains: ["*.dt.example"]
    ports: [443]
YAML
NETD_UPSTREAM=$BAD
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1" sb_create sb1 dl

st() { grep -o 'status: [A-Z]*' <<<"$1" || echo "no answer: $(grep -m1 'timed out\|no servers' <<<"$1")"; }
# A client that waits 4 s, once: below glibc's 5 s.
dig4() { sb_exec sb1 dig +time=4 +tries=1 "$@"; }

# ---- the default deadline (2500 ms) ------------------------------------------------
eq "blackholed upstream: SERVFAIL before a 4 s client gives up" "status: SERVFAIL" \
	"$(st "$(dig4 blackhole.dt.example A)")"
has "audited as upstream-timeout" '"reason":"upstream-timeout"' \
	"$(audit_grep '"qname":"blackhole.dt.example"')"
eq "TC=1, then a stalled TCP answer: SERVFAIL in time" "status: SERVFAIL" \
	"$(st "$(dig4 tc.dt.example A)")"
eq "an answer slower than the deadline: SERVFAIL in time" "status: SERVFAIL" \
	"$(st "$(dig4 slow.dt.example A)")"
# The late answer arrives after the client got its SERVFAIL: dropped, no pin.
for _ in $(seq 40); do grep -q 'slow answered' "$WORLD_DIR/badup.log" && break; sleep 0.1; done
ok "the slow answer did arrive late" grep -q 'slow answered' "$WORLD_DIR/badup.log"
sleep 0.5
hasnt "the late answer pinned nothing" "198.51.100.40" \
	"$(sb_pins "$(sb_name sb1)")"
ok "netd still alive" netd_alive
netd_down

# ---- a configured deadline ------------------------------------------------------------
NETD_DNS_EXTRA='  upstream_deadline_ms: 1000'
netd_up || { echo "0 passed, 1 failed"; exit 1; }
# Restored from the state dir; a 2 s client would time out at the default.
eq "dns.upstream_deadline_ms: 1000: SERVFAIL before a 2 s client gives up" "status: SERVFAIL" \
	"$(st "$(sb_exec sb1 dig +time=2 +tries=1 blackhole2.dt.example A)")"
ok "netd still alive" netd_alive
netd_down
world_down
t_summary
