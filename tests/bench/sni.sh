#!/usr/bin/env bash
# sni.sh - what the SNI check (docs/sni.md) costs a new connection: N
# sequential HTTPS connections (SYN to first response byte, p50/p99, and
# connections per second) from a sandbox whose policy has tls.sni enforce,
# and from one with it off, to the same server (example.com in the test
# world); then the bulk throughput of one established download under both.
# Private world only; prints figures, asserts nothing.
#   BENCH_SNI_N=300 tests/bench/sni.sh        (root; build/netd first)
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
N=${BENCH_SNI_N:-300}
[ -x "$NETD_BIN" ] || { echo "bench: build $NETD_BIN first" >&2; exit 1; }
world_up "ndbs$$" >/dev/null || { echo "bench: world_up failed" >&2; exit 1; }
mkdir -p "$WORLD_DIR/policies"
for mode in enforce off; do
	cat >"$WORLD_DIR/policies/sni-$mode.yaml" <<-YAML
	name: sni-$mode
	egress:
	  - domains: [example.com]
	    ports: [443]
	    tls: { sni: $mode }
	YAML
done
NETD_POLICIES=$WORLD_DIR/policies
netd_up >/dev/null || exit 1
sb_create e sni-enforce >/dev/null && sb_create o sni-off >/dev/null || exit 1
printf '%-8s %10s %10s %10s %12s\n' mode p50_ms p99_ms conn/s bulk_MB/s
for sb in ${BENCH_SNI_ORDER:-o e}; do
	sb_dig "$sb" +short example.com >/dev/null
	read -r p50 p99 cps < <(ip netns exec "$(sb_name "$sb")" "$WORLD_PYTHON" tests/bench/sni_lat.py \
		203.0.113.66 443 example.com "$N" "$WORLD_CA")
	t0=$(date +%s.%N)
	sb_curl "$sb" -o /dev/null https://example.com/bytes/50000000 --max-time 120
	t1=$(date +%s.%N)
	mbs=$(echo "50 / ($t1 - $t0)" | bc -l)
	printf '%-8s %10s %10s %10s %12.1f\n' "$([ "$sb" = e ] && echo enforce || echo off)" \
		"$p50" "$p99" "$cps" "$mbs"
done
netd_down >/dev/null
