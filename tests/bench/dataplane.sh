#!/usr/bin/env bash
# dataplane.sh - the data-plane section of `make bench` (run.sh calls it;
# it also runs alone): iperf3 from a sandbox through netd's host to the
# "internet", against the same topology with no nftables at all, with
# 1, 100 and 1,000 sandboxes existing and 100,000 pins in their sets.
#
#   BENCH_DP_ROUNDS=3 BENCH_DP_SECONDS=5 BENCH_DP_SANDBOXES="1 100 1000" \
#   BENCH_DP_PINS=100000 tests/bench/dataplane.sh          (root; build/netd first)
#   BENCH_DP_TESTS="tcp1 udp64" BENCH_DP_PATHS="bare floor netd": a subset;
#   BENCH_DP_PERF=DIR: every run of floor, netd and fast off under perf
#   record -a -g: netd's CPU per packet against the floor's (below)
#
# Paths, each client -> veth -> "host" netns (forwarding) -> veth -> inet
# (iperf3 -s on 198.51.100.60):
#   netd   a netd sandbox; the host runs netd's ruleset (conntrack, NAT,
#          anti-spoofing, its policy's chain), fast path on (the default)
#   slow   the same ruleset with the fast-path rule deleted by hand (what
#          dataplane.fast_path: false renders; tests/golden/nov6 shows it)
#   bare   PREFIX-bc -> PREFIX-bh: no nftables table, so no conntrack hooks
#   floor  PREFIX-fc -> PREFIX-fh: the least a conntrack-and-NAT firewall
#          does: established accepted, a new flow accepted by one lookup
#          in a pin-like concat set, masquerade; nothing else.  Its
#          conntrack sysctls (acct, timestamp, ...) are copied from netd's
#          host so both pay the same per-connection extras.
# Tests: TCP 1 stream, TCP 8 streams (Gbit/s received), UDP with 64-byte
# payloads at full speed (packets/s received), all uploads; then TCP 1
# stream and 64-byte UDP downloads (tcp1r, udp64r: iperf3 -R), the
# direction the flowtable offloads where the kernel has one.  Each round runs every
# (test, path) pair once, the paths' order rotated each round; the median
# of BENCH_DP_ROUNDS rounds of BENCH_DP_SECONDS seconds is printed, with
# the ratio to bare, and netd/fl: the median of the rounds' netd / floor
# ratios (the issue's target: >= 0.97).  The pins are written into the shared pin sets
# with nft (BENCH_DP_PINS elements in all, spread evenly; 198.18.0.0/15 and
# 2001:db8:ffff::/64 keys, never contacted).  Not a test: it asserts
# nothing about time.
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/bench/lib_ns.sh

ROUNDS=${BENCH_DP_ROUNDS:-3}
SECS=${BENCH_DP_SECONDS:-5}
COUNTS=${BENCH_DP_SANDBOXES:-"1 100 1000"}
NPINS=${BENCH_DP_PINS:-100000}
SRV=198.51.100.60
bench_need iperf3 nft jq

world_up "ndp$$" >/dev/null || { echo "bench: world_up failed" >&2; exit 1; }
BH=$WORLD_PREFIX-bh
BC=$WORLD_PREFIX-bc
FH=$WORLD_PREFIX-fh
FC=$WORLD_PREFIX-fc
trap 'for n in "$BC" "$BH" "$FC" "$FH"; do ip netns del "$n" 2>/dev/null; done; world_down' EXIT

# ---- the server, and the bare path --------------------------------------------------------
iperf_world dp	# the server, and netd's policy for it
# router P HOST CLIENT UP_A NET - netns HOST linked to inet (Pu0 with
# 203.0.113.UP_A/30) and netns CLIENT behind it (Pc0 NET.2/30, HOST's Ps0
# NET.1), forwarding (tests/bench/lib_ns.sh).
router() {
	local p=$1 h=$2 c=$3 a=$4 net=$5
	uplink_ns "$h" "${p}u0" "${p}i0" "$a"
	ip -n "$WORLD_INET_NS" route add "$net.0/30" via "203.0.113.$a"
	client_ns "$c" "${p}c0" "$h" "${p}s0" "$net.2/30" "$net.1/30"
	ip -n "$c" route add default via "$net.1"
	ip netns exec "$h" sysctl -qw net.ipv4.ip_forward=1
}
router b "$BH" "$BC" 210 10.97.0

# ---- the floor: the bare path's shape, plus conntrack, one lookup, masquerade -------------
router f "$FH" "$FC" 214 10.96.0
ip netns exec "$FH" nft -f - <<NFT || { echo "bench: the floor's ruleset failed" >&2; exit 1; }
table inet floor {
	set pin4 {
		type ipv4_addr . ipv4_addr . inet_proto . inet_service
		size 2097152
		flags timeout
		elements = { 10.96.0.2 . $SRV . tcp . 5201 timeout 2h, 10.96.0.2 . $SRV . udp . 5201 timeout 2h }
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ip saddr . ip daddr . meta l4proto . th dport @pin4 accept
	}
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "fu0" masquerade
	}
}
NFT

# ---- netd ---------------------------------------------------------------------------------
netd_up >/dev/null || exit 1
sb_create b1 dp >/dev/null || exit 1
SB=$(sb_name b1)
# Per-netns conntrack sysctls: the floor gets netd's host's (netd turns on
# accounting and timestamps for its records), so the two differ only in rules.
CT_SYSCTLS="net.netfilter.nf_conntrack_acct net.netfilter.nf_conntrack_timestamp
	net.netfilter.nf_conntrack_checksum net.netfilter.nf_conntrack_tcp_loose
	net.netfilter.nf_conntrack_tcp_be_liberal net.netfilter.nf_conntrack_events
	net.netfilter.nf_conntrack_helper net.ipv4.conf.all.rp_filter"
ct_sysctls() { ip netns exec "$1" sysctl -e $CT_SYSCTLS 2>/dev/null | sed 's/^net\.//; s/netfilter\.nf_conntrack_/ct_/'; }
for ((i = 0; i < 100; i++)); do
	ip netns exec "$FC" iperf3 -c "$SRV" -t 1 >/dev/null 2>&1 &&
	ip netns exec "$BC" iperf3 -c "$SRV" -t 1 >/dev/null 2>&1 &&
		ip netns exec "$SB" iperf3 -c "$SRV" -t 1 >/dev/null 2>&1 && break
	sleep 0.2
done

for k in $CT_SYSCTLS; do
	v=$(world_exec host sysctl -n "$k" 2>/dev/null) && ip netns exec "$FH" sysctl -qw "$k=$v"
done
if [ "$(ct_sysctls "$WORLD_HOST_NS")" != "$(ct_sysctls "$FH")" ]; then
	echo "bench: the floor's sysctls differ from netd's host:" >&2
	diff <(ct_sysctls "$WORLD_HOST_NS") <(ct_sysctls "$FH") >&2
fi

# fast_path on|off - put the fast-path rule back before the rule that
# follows it, or delete it (the ruleset is then what fast_path: false renders).
fast_path() {
	local list h
	list=$(world_exec host nft -a list chain inet netd forward)
	h=$(grep -F 'meta mark & 0x00a00000 == 0x00000000 accept' <<<"$list" | sed -n 's/.*# handle //p')
	if [ "$1" = off ]; then
		[ -z "$h" ] || world_exec host nft delete rule inet netd forward handle "$h"
	elif [ -z "$h" ]; then
		h=$(grep -F 'oifname @sandbox_ifs ct state established,related accept' <<<"$list" |
			sed -n 's/.*# handle //p')
		world_exec host nft insert rule inet netd forward position "$h" \
			ct state established meta mark \& 0x00a00000 == 0 accept
	fi
}

# pins_fill N - BENCH_DP_PINS pin elements spread over sandboxes b1, f1..f(N-1),
# keyed by each one's source address in the shared sets pin4/pin6 (one
# sandbox: half IPv4, half IPv6).
pins_fill() {
	local n=$1 s name f=$WORLD_DIR/pins.nft
	for ((s = 0; s < n; s++)); do
		if [ "$s" = 0 ]; then name=$SB; else name=$(sb_name "f$s"); fi
		echo "$(sb_field "$name" ipv4) $(sb_field "$name" ipv6)"
	done | awk -v total="$NPINS" -v n="$n" '{a4[NR - 1] = $1; a6[NR - 1] = $2}
		END {
			print "flush set inet netd pin4\nflush set inet netd pin6"
			for (j = 0; j < total; j++) {
				s = j % n
				if (n == 1 && j >= total / 2 && a6[s] != "") {
					set = "pin6"
					key = a6[s] " . " sprintf("2001:db8:ffff::%x:%x", int(j / 65536), j % 65536)
				} else {
					set = "pin4"
					key = a4[s] " . " sprintf("198.%d.%d.%d", 18 + int(j / 65536) % 2, int(j / 256) % 256, j % 256)
				}
				print set, key
			}
		}' | sort -s -k1,1 | awk '
		/^flush/ {print; next}
		$1 != cur || k == 1000 {if (cur != "") print " }"; printf "add element inet netd %s { %s %s %s . tcp . 443 timeout 2h", $1, $2, $3, $4; cur = $1; k = 1; next}
		{printf ", %s %s %s . tcp . 443 timeout 2h", $2, $3, $4; k++}
		END {if (cur != "") print " }"}' >"$f"
	world_exec host nft -f "$f" 2>&1 | head -c 600
}

pins_count() {
	world_exec host nft list ruleset 2>/dev/null | grep -o '\. tcp \. 443 timeout' | wc -l
}

# one PATH TEST - one iperf3 run; prints Gbit/s (tcp) or packets/s (udp64).
one() {
	local ns args out try
	case $1 in bare) ns=$BC ;; floor) ns=$FC ;; *) ns=$SB ;; esac
	case $2 in
	tcp1) args=() ;;
	tcp8) args=(-P 8) ;;
	udp64) args=(-u -l 64 -b 0) ;;
	tcp1r) args=(-R) ;;		# downloads: the server sends, replies cross the host
	udp64r) args=(-R -u -l 64 -b 0) ;;
	esac
	# BENCH_DP_PERF=DIR: every run but bare's under perf record -a -g;
	# perf_shares appends its line to DIR/COUNT-TEST-PATH.cpu.  The first
	# udp64 run's samples stay (DIR/COUNT-PATH.data: where nft_do_chain
	# and its expressions spend; perf_nf below), the others go.
	local pf="" ppid="" keep=""
	if [ -n "${BENCH_DP_PERF:-}" ] && [ "$1" != bare ]; then
		mkdir -p "$BENCH_DP_PERF"
		pf=$BENCH_DP_PERF/$count-$1
		[ "$2" = udp64 ] && [ ! -e "$pf.data" ] && keep=1
		[ -n "$keep" ] || pf=$BENCH_DP_PERF/run
		perf record -q -F 10000 -a -g -o "$pf.data" -- sleep "$SECS" >/dev/null 2>&1 &
		ppid=$!
	fi
	for try in 1 2 3; do
		out=$(ip netns exec "$ns" iperf3 -c "$SRV" -t "$SECS" -J "${args[@]}" 2>/dev/null) &&
			break
		sleep 1
	done
	if [ -n "$ppid" ]; then
		wait "$ppid"
		jq -r '.end.sum.packets' <<<"$out" >"$pf.packets" 2>/dev/null
		perf_shares "$pf.data" >>"$BENCH_DP_PERF/$count-$2-$1.cpu"
		[ -n "$keep" ] || rm -f "$pf.data" "$pf.packets"
	fi
	if [[ $2 == udp64* ]]; then
		jq -r '.end.sum | if .seconds > 0 then ((.packets - .lost_packets) / .seconds | floor) else "-" end' <<<"$out" 2>/dev/null || echo -
	else
		jq -r '.end.sum_received.bits_per_second / 1e9 | . * 100 | floor / 100' <<<"$out" 2>/dev/null || echo -
	fi
}

# perf_shares FILE.data - of all CPU samples of a run (both CPUs, whatever
# ran), the share in netfilter (a stack through nf_hook_slow) and, of
# those, in nf_tables' rules (leaf nft_*, and the jhash and memcpy they
# call) and in conntrack's own functions: "NF RULES CT", fractions.
perf_shares() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		function done_sample() {
			if (any) {
				t++
				if (nf) n++
				if (nf && leaf ~ /^(nft_|jhash|__pi_memcpy)/) rules++
				if (leaf ~ /^(nf_conntrack|__nf_conntrack|nf_ct_|hash_conntrack|nf_confirm|ipv[46]_conntrack)/) ct++
			}
			nf = 0; leaf = ""; any = 0
		}
		/^$/ {done_sample(); next}
		{any = 1; if (leaf == "") leaf = $2}
		/nf_hook_slow/ {nf = 1}
		END {done_sample(); if (t) printf "%.5f %.5f %.5f\n", n / t, rules / t, ct / t; else print "- - -"}'
}

# cpu_ratio COUNT TEST - netd's CPU per packet against the floor's: each
# round, (1 - the floor's netfilter share) / (1 - netd's), which is what
# netd's packet costs over the floor's if everything outside netfilter
# costs both the same (the same client, server, veths and stack); the
# median of the rounds, then the two paths' median netfilter shares and
# rules per conntrack.  A share of the CPU is taken over the same packets
# whatever the machine's speed of the moment: it moves far less than
# packets/s between rounds.
cpu_ratio() {
	local fl=$BENCH_DP_PERF/$1-$2-floor.cpu nd=$BENCH_DP_PERF/$1-$2-netd.cpu
	[ -s "$fl" ] && [ -s "$nd" ] || { echo -; return; }
	paste -d' ' "$fl" "$nd" | awk '
		function med(a, k,   i, j, x) {
			for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return a[int((k + 1) / 2)]
		}
		NF == 6 && $1 != "-" && $4 != "-" && $4 < 1 {k++; r[k] = (1 - $1) / (1 - $4); fn[k] = $1; nn[k] = $4
			fr[k] = $3 > 0 ? $2 / $3 : 0; nr[k] = $6 > 0 ? $5 / $6 : 0}
		END {
			if (!k) {print "-"; exit}
			printf "%.3f (netfilter %.1f%% / %.1f%% of the CPU, rules per conntrack %.2f / %.2f; %d rounds)",
				med(r, k), 100 * med(nn, k), 100 * med(fn, k), med(nr, k), med(fr, k), k
		}'
}

# perf_nf FILE - CPU samples (10 kHz: 100 us each) in netfilter (a stack
# through nf_hook_slow) per 1,000 packets sent: time on a CPU, so less
# moved by other load than packets/s; then, after a slash, the samples of
# nf_tables' rules (leaf functions nft_*, and the jhash and memcpy they
# call) per sample of conntrack's own (nf_conntrack_*, nf_ct_*, ...): work
# against work in the same packets, which the machine's speed of the
# moment cancels out of (the floor's rules are one: its figure is what
# one rule costs).
perf_nf() {
	[ -s "$1.data" ] && [ -s "$1.packets" ] || { echo -; return; }
	perf script -i "$1.data" -F ip,sym 2>/dev/null | awk -v pk="$(cat "$1.packets")" '
		function done_sample() {
			if (nf) n++
			if (nf && leaf ~ /^(nft_|jhash|__pi_memcpy)/) rules++
			if (leaf ~ /^(nf_conntrack|__nf_conntrack|nf_ct_|hash_conntrack|nf_confirm|ipv[46]_conntrack)/) ct++
			nf = 0; leaf = ""
		}
		/^$/ {done_sample(); next}
		{if (leaf == "") leaf = $2}
		/nf_hook_slow/ {nf = 1}
		END {
			done_sample()
			if (pk > 0) printf "%.2f", 1000 * n / pk; else printf "-"
			if (ct > 0) printf "/%.2f", rules / ct; else printf "/-"
		}'
}

median() { tr ' ' '\n' <<<"$1" | grep -v '^-*$' | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-"}'; }

read -ra PATHS <<<"${BENCH_DP_PATHS:-bare floor netd slow}"
read -ra TESTS <<<"${BENCH_DP_TESTS:-tcp1 tcp8 udp64 tcp1r udp64r}"
declare -A R
have=1
# pairs A B - the median of the rounds' A/B ratios (each round's two runs
# were minutes apart at most: a steadier figure than the medians' ratio).
pairs() {
	paste -d' ' <(tr ' ' '\n' <<<"$1" | grep -v '^$') <(tr ' ' '\n' <<<"$2" | grep -v '^$') |
		awk '$1 != "-" && $2 != "-" && $2 > 0 {print $1 / $2}' | sort -g |
		awk '{a[NR] = $1} END {if (NR) printf "%.3f", a[int((NR + 1) / 2)]; else print "-"}'
}
echo
echo "Data-plane benchmark: $(nproc) CPUs, $(uname -r), iperf $(iperf3 --version | awk 'NR == 1 {print $2}'), " \
	"$ROUNDS rounds x ${SECS}s, paths alternating (order rotated each round), $NPINS pins"
# With the flowtable on, "netd" is its path (and "fast off" too: deleting
# the forward rule leaves offloaded flows offloaded); off, the rules'.
echo "netd's flowtable (dataplane.flowtable: auto): $(netd status |
	jq -r '.dataplane | if .flowtable then "on" else "off, " + .flowtable_off_because end')"
echo "conntrack sysctls, netd's host and the floor's: $(ct_sysctls "$WORLD_HOST_NS" | tr '\n' ' ')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for count in $COUNTS; do
	for ((i = have; i < count; i++)); do
		# (under load the CLI may give up on an answer netd still sends:
		# the count below is what netd has)
		sb_create "f$i" dp >/dev/null 2>&1 || echo "bench: sandbox f$i: creation failed" >&2
	done
	have=$count
	n=$(($(netd sandbox list | grep -c -- "$WORLD_PREFIX-") ))
	pins_fill "$n"
	for ((round = 0; round < ROUNDS; round++)); do
		for t in "${TESTS[@]}"; do
			for ((p = 0; p < ${#PATHS[@]}; p++)); do
				path=${PATHS[$(((p + round) % ${#PATHS[@]}))]}
				case $path in netd) fast_path on ;; slow) fast_path off ;; esac
				R[$count,$t,$path]="${R[$count,$t,$path]:-} $(one "$path" "$t")"
			done
		done
	done
	fast_path on
	echo
	echo "$n sandboxes, $(pins_count) pins (load $(cut -d' ' -f1-3 /proc/loadavg)):"
	printf '  %-6s %10s %10s %6s %10s %6s %8s %10s %6s   %s\n' test bare floor ratio netd ratio \
		"netd/fl" "fast off" ratio "(unit; every round: bare / floor / netd / fast off)"
	for t in "${TESTS[@]}"; do
		b=$(median "${R[$count,$t,bare]:-}")
		fl=$(median "${R[$count,$t,floor]:-}")
		f=$(median "${R[$count,$t,netd]:-}")
		s=$(median "${R[$count,$t,slow]:-}")
		u=Gbit/s
		[[ $t == udp64* ]] && u=pkt/s
		printf '  %-6s %10s %10s %6s %10s %6s %8s %10s %6s   %s;%s /%s /%s /%s\n' "$t" "$b" "$fl" \
			"$(ratio "$fl" "$b")" "$f" "$(ratio "$f" "$b")" \
			"$(pairs "${R[$count,$t,netd]:-}" "${R[$count,$t,floor]:-}")" "$s" "$(ratio "$s" "$b")" \
			"$u" "${R[$count,$t,bare]:-}" "${R[$count,$t,floor]:-}" "${R[$count,$t,netd]:-}" \
			"${R[$count,$t,slow]:-}"
	done
	if [ -n "${BENCH_DP_PERF:-}" ]; then
		printf '  udp64 netfilter CPU samples per 1,000 packets / rules per conntrack (perf, 10 kHz; one run each):'
		for path in "${PATHS[@]}"; do printf ' %s %s' "$path" "$(perf_nf "$BENCH_DP_PERF/$count-$path")"; done
		echo
		echo "  CPU per packet, netd / floor (perf; the issue's target: <= 1.03):"
		for t in "${TESTS[@]}"; do printf '    %-6s %s\n' "$t" "$(cpu_ratio "$count" "$t")"; done
	fi
done
netd_down >/dev/null
