#!/usr/bin/env bash
# run.sh - `make bench`: netd's DNS proxy side by side with dnsmasq
# (--nftset pinning into an nftables set, cache on and cache-size=0) and
# unbound as a plain forwarder, all asking the same resolver (the world's
# unbound -> knot), driven by dnsperf for BENCH_SECONDS per run.
#
# Private world only (tests/world.sh): netd runs in PREFIX-host, dnsperf for
# netd inside a sandbox; the peers and their dnsperf run in PREFIX-peer, a
# netns linked to PREFIX-inet.  Everything is removed on exit.
#
#   BENCH_SECONDS=10 BENCH_ROUNDS=3 tests/bench/run.sh     (root; build/netd first)
#   BENCH_SECTIONS=scale BENCH_SCALE_SIZES="1000 5000" tests/bench/run.sh
#   BENCH_SECTIONS=gateway tests/bench/run.sh      (only the API gateway's)
#
# The machine is shared with the client (dnsperf), so one run of each peer
# is noisy: each hot run is repeated BENCH_ROUNDS times with the peers
# interleaved (their order rotated each round) and the median is printed,
# with the range of q/s.
#
# Scenarios: "hot" = one allowed name the upstream has in cache, for
# BENCH_SECONDS; "distinct" = BENCH_DISTINCT (10,000) distinct allowed
# names, once each, new names each round.
# Then the resident memory with BENCH_SANDBOXES (1000) sandboxes, 100 pins
# each; BENCH_PERF=FILE records a perf profile of netd's hot run.
# Latency percentiles come from dnsperf -v (every query's latency), so the
# figures include dnsperf's own printing for every peer alike.  Not a test:
# it prints figures and asserts nothing about time.
# BENCH_PIN=1: each hot run's server on the last CPU and dnsperf on the
# others (taskset), so the two do not preempt each other on a small machine.
# BENCH_CALLGRIND=1: then tests/bench/callgrind.sh, instructions and system
# calls per hot query, netd next to unbound (a figure the machine's load
# does not move).
# Then the data plane: tests/bench/dataplane.sh (iperf3, netd vs no nftables),
# and the SNI check's cost per new connection: tests/bench/sni.sh, and per
# new QUIC flow: build/bench/quic_bench (tests/bench/quic_bench.c).
# What exporting one connection record costs (IPFIX, journal):
# build/bench/ipfix_bench (tests/bench/ipfix_bench.c).
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}	# the optimized build, not ASan
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/bench/lib_ns.sh

# Sections: BENCH_SECTIONS=dns,scale,gateway (comma-separated; default:
# all three).  scale: tests/bench/scale.sh (BENCH_SCALE_SIZES, default
# "1000").  gateway: tests/bench/gateway.sh, the API gateway next to squid's
# ssl_bump and mitmproxy (BENCH_SECTIONS=gateway runs only that).  The data
# plane and SNI sections run with dns.
BENCH_SECTIONS=${BENCH_SECTIONS:-dns,scale,gateway}
bench_section() { [[ ",$BENCH_SECTIONS," == *",$1,"* ]]; }
# A section that fails (a peer that does not start or answers nothing) fails
# the bench: its exit status is the bench's.
bench_gateway() {
	bench_section gateway || return 0
	NETD_BIN=$NETD_BIN tests/bench/gateway.sh || { echo "bench: the gateway section failed" >&2; return 1; }
}
. tests/bench/scale.sh
if bench_section scale; then
	[ -x "$NETD_BIN" ] || { echo "bench: build $NETD_BIN first" >&2; exit 1; }
	bench_scale
fi
if ! bench_section dns; then
	bench_gateway
	exit
fi

SECS=${BENCH_SECONDS:-10}
NCPU=$(nproc)
bench_need dnsperf dnsmasq unbound nft

world_up "ndb$$" >/dev/null || { echo "bench: world_up failed" >&2; exit 1; }
PEER=$WORLD_PREFIX-peer
PCLI=$WORLD_PREFIX-pcli	# the peers' client: across a veth, as a sandbox is from netd
trap 'ip netns del "$PEER" 2>/dev/null; ip netns del "$PCLI" 2>/dev/null; world_down' EXIT

# ---- netd ---------------------------------------------------------------------------
bench_netd_policy	# bench.yaml; NETD_DNS_EXTRA (tests/bench/lib_ns.sh)
# For the memory figure: one answer for mem.tun.dt.example pins 100
# (address, tcp, port) elements (two rules of 50 ports each).  A name no
# scenario asked, so its pins last the record's whole TTL (300 s): a cached
# answer would carry what is left of it, and early pins could expire before
# the count.
{
	echo "name: mem"
	echo "egress:"
	echo "  - domains: [mem.tun.dt.example]"
	echo "    ports: [$(seq -s, 1001 1050)]"
	echo "  - domains: [mem.tun.dt.example]"
	echo "    ports: [$(seq -s, 2001 2050)]"
} >"$NETD_POLICIES/mem.yaml"
netd_up >/dev/null || exit 1
sb_create b1 bench >/dev/null || exit 1
SB=$(sb_name b1)
SB_GW=$(netd sandbox show "$SB" | sed -n 's/.*"gateway4": "\(.*\)".*/\1/p')

# ---- the peers' netns: veth to the "internet" -----------------------------------------------
uplink_ns "$PEER" bp0 bi0 202
# Every peer is asked the way a sandbox asks netd: by a client in another
# netns, across a veth (10.99.0.100 -> 10.99.0.1/.2/.3).  (netd's sandbox asks
# its gateway, where the proxy listens itself: no DNAT, no conntrack entry;
# but netd's ruleset is on the path, while these peers have no firewall.)
client_ns "$PCLI" bc0 "$PEER" bs0 10.99.0.100/24 10.99.0.1/24 10.99.0.2/24 10.99.0.3/24
ip netns exec "$PEER" nft -f - <<'NFT'
table inet bench {
	set pins4 { type ipv4_addr; flags timeout; }
	set pins4nc { type ipv4_addr; flags timeout; }
}
NFT
peer() { ip netns exec "$PEER" "$@"; }
peer_spawn() {	# peer_spawn NAME CMD...
	local name=$1
	shift
	ip netns exec "$PEER" "$@" >"$WORLD_DIR/$name.log" 2>&1 &
	world_pid_track $!
	eval "${name}_PID=$!"
}
# Each dnsmasq gets a pid file of its own in the world's dir: by default all
# three share the machine's /run/dnsmasq/dnsmasq.pid, which each unlinks and
# re-creates with O_EXCL at startup - an instance that loses that race exits
# ("failed to open pidfile"), and the file belongs to the machine's dnsmasq.
# (The one interaction found behind the cache peer's "0 q/s, 400 lost" of
# issue 33, which three runs here did not reproduce.)
peer_spawn dnsmasq dnsmasq -k --no-resolv --no-hosts --server=192.0.2.53 --listen-address=10.99.0.1 \
	--bind-interfaces --port=5353 --user=root --cache-size=10000 --pid-file="$WORLD_DIR/dnsmasq.pid" \
	--nftset=/dt.example/4#inet#bench#pins4
peer_spawn dnsmasqnc dnsmasq -k --no-resolv --no-hosts --server=192.0.2.53 --listen-address=10.99.0.2 \
	--bind-interfaces --port=5353 --user=root --cache-size=0 --pid-file="$WORLD_DIR/dnsmasqnc.pid" \
	--nftset=/dt.example/4#inet#bench#pins4nc
unbound_fwd_conf "$WORLD_DIR/unbound-fwd.conf"
peer_spawn unbound unbound -d -c "$WORLD_DIR/unbound-fwd.conf"

# ---- dnsmasq+nftset deployed as a sandbox egress filter, like netd -------------------
# The peers above have no firewall on their path (no conntrack, no rules):
# the fastest dnsmasq can be, and not a deployment.  Here dnsmasq is what
# its nftset is for: the "host" (PREFIX-dfw) of a client netns (PREFIX-dfc,
# across a veth, like a sandbox) whose traffic its firewall filters -
# conntrack on, the client may reach only dnsmasq's port 53 on the host and
# forward only to the pinned set (default deny), as netd's ruleset does.
FWH=$WORLD_PREFIX-dfw
FWC=$WORLD_PREFIX-dfc
trap 'ip netns del "$PEER" 2>/dev/null; ip netns del "$PCLI" 2>/dev/null; ip netns del "$FWH" 2>/dev/null; ip netns del "$FWC" 2>/dev/null; world_down' EXIT
uplink_ns "$FWH" fp0 fi0 206
client_ns "$FWC" fc0 "$FWH" fs0 10.98.0.2/30 10.98.0.1/30
ip -n "$FWC" route add default via 10.98.0.1
ip netns exec "$FWH" nft -f - <<'NFT'
table inet dmfw {
	set pins4 { type ipv4_addr; flags timeout; }
	chain input {
		type filter hook input priority filter; policy accept;
		iifname "fs0" ct state established,related accept
		iifname "fs0" udp dport 53 accept
		iifname "fs0" tcp dport 53 accept
		iifname "fs0" drop
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		oifname "fs0" ct state established,related accept
		oifname "fs0" drop
		iifname "fs0" ip daddr @pins4 tcp dport 443 accept
		iifname "fs0" drop
	}
}
NFT
ip netns exec "$FWH" dnsmasq -k --no-resolv --no-hosts --server=192.0.2.53 --listen-address=10.98.0.1 \
	--bind-interfaces --port=53 --user=root --cache-size=10000 --pid-file="$WORLD_DIR/dnsmasqfw.pid" \
	--nftset=/dt.example/4#inet#dmfw#pins4 >"$WORLD_DIR/dnsmasqfw.log" 2>&1 &
world_pid_track $!
dnsmasqfw_PID=$!
# peer_ready LABEL PID LOG NS SERVER PORT - the peer answers www.dt.example
# (30 s); else the bench fails here, loudly, with the peer's log: a peer that
# did not start must never print a row of zeros.
peer_ready() {
	local label=$1 pid=$2 log=$3 ns=$4 server=$5 port=$6 i
	for ((i = 0; i < 60; i++)); do
		[ -n "$(ip netns exec "$ns" dig +short +time=1 +tries=1 -p "$port" "@$server" www.dt.example A 2>/dev/null)" ] &&
			return 0
		world__alive "$pid" || break
		sleep 0.5
	done
	echo "bench: $label ($server port $port) $(world__alive "$pid" && echo "does not answer" || echo "exited");" \
		"$log says:" >&2
	tail -n 20 "$log" >&2
	exit 1
}
peer_ready "dnsmasq+nftset cache" "$dnsmasq_PID" "$WORLD_DIR/dnsmasq.log" "$PCLI" 10.99.0.1 5353
peer_ready "dnsmasq+nftset no-cache" "$dnsmasqnc_PID" "$WORLD_DIR/dnsmasqnc.log" "$PCLI" 10.99.0.2 5353
peer_ready "unbound forwarder" "$unbound_PID" "$WORLD_DIR/unbound.log" "$PCLI" 10.99.0.3 5353
peer_ready "dnsmasq+nftset cache fw" "$dnsmasqfw_PID" "$WORLD_DIR/dnsmasqfw.log" "$FWC" 10.98.0.1 53
peer_ready "netd (sandbox)" "$NETD_PID" "$NETD_LOG" "$SB" "$SB_GW" 53

# ---- query files ------------------------------------------------------------------------------
echo "www.dt.example A" >"$WORLD_DIR/hot.txt"
# BENCH_DISTINCT (10000) names a round, new names each round.
NDISTINCT=${BENCH_DISTINCT:-10000}
for round in $(seq 1 "${BENCH_ROUNDS:-3}"); do
	for ((i = 1; i <= NDISTINCT; i++)); do echo "r${round}n$i.tun.dt.example A"; done >"$WORLD_DIR/distinct$round.txt"
	# The world's resolver has every distinct name in cache before any peer runs.
	world_exec inet dnsperf -s 192.0.2.53 -d "$WORLD_DIR/distinct$round.txt" -n 1 >/dev/null 2>&1
done

# Busy jiffies of the whole machine (every CPU, every process: the client's
# share and the kernel's included): what one query costs end to end.
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# run LABEL PID WHERE SERVER PORT FILE MODE - one dnsperf run; its figures
# are appended to R_q/R_p50/R_p99/R_cpu[LABEL|MODE] (one word per round).
declare -A R_q R_p50 R_p99 R_cpu R_rss R_lost R_sys
run() {
	local label=$1 pid=$2 where=$3 server=$4 port=$5 file=$6 mode=$7 out c0 c1 b0 b1 qps n p50 p99 args ns
	local k="$label|$mode"
	if [ "$mode" = hot ]; then args=(-l "$SECS"); else args=(-n 1); fi
	c0=$(cpu_ticks "$pid")
	b0=$(busy_ticks)
	# BENCH_PERF=FILE: a perf profile of netd during its (first) hot run.
	if [ -n "${BENCH_PERF:-}" ] && [ "$where" = sandbox ] && [ "$mode" = hot ] && [ -z "${R_q[$k]:-}" ]; then
		perf record -g -p "$pid" -o "$BENCH_PERF" -- sleep "$SECS" >/dev/null 2>&1 &
	fi
	case $where in sandbox) ns=$SB ;; fw) ns=$FWC ;; *) ns=$PCLI ;; esac
	local pin=()	# BENCH_PIN=1 (above): every peer alike
	if [ "${BENCH_PIN:-0}" = 1 ] && [ "$mode" = hot ] && [ "$NCPU" -ge 2 ]; then
		taskset -a -p -c $((NCPU - 1)) "$pid" >/dev/null
		pin=(taskset -c "0-$((NCPU - 2))")
	fi
	out=$(ip netns exec "$ns" "${pin[@]}" dnsperf -v -s "$server" -p "$port" -d "$file" -c 4 -q 200 "${args[@]}" 2>&1)
	c1=$(cpu_ticks "$pid")
	b1=$(busy_ticks)
	[ ${#pin[@]} -eq 0 ] || taskset -a -p -c "0-$((NCPU - 1))" "$pid" >/dev/null
	qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' <<<"$out")
	n=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' <<<"$out")
	# A peer that answered nothing (it died, or never listened) fails the
	# bench here: a median over zeros would print a row that means nothing.
	if [ -z "$n" ] || [ "$n" = 0 ] || ! world__alive "$pid"; then
		echo "bench: $label answered $([ -n "$n" ] && echo "$n queries" || echo "nothing") in the $mode run" \
			"($(world__alive "$pid" && echo "still running" || echo "its PID $pid has exited")); dnsperf says:" >&2
		tail -n 15 <<<"$out" >&2
		exit 1
	fi
	# dnsperf -v: "> NOERROR name A latency_s"
	read -r p50 p99 < <(awk '$1 == ">" {print $NF * 1000}' <<<"$out" | sort -n |
		awk '{a[NR] = $1} END {if (NR) printf "%.3f %.3f\n", a[int(NR * 0.5) + (NR * 0.5 > int(NR * 0.5))], a[int(NR * 0.99) + (NR * 0.99 > int(NR * 0.99))]; else print "- -"}')
	R_q[$k]="${R_q[$k]:-} ${qps:-0}"
	R_p50[$k]="${R_p50[$k]:-} $p50"
	R_p99[$k]="${R_p99[$k]:-} $p99"
	R_cpu[$k]="${R_cpu[$k]:-} $(awk -v c=$((c1 - c0)) -v n="${n:-0}" 'BEGIN {if (n > 0) printf "%.2f", c * 10 / n * 1000; else print "-"}')"
	R_sys[$k]="${R_sys[$k]:-} $(awk -v c=$((b1 - b0)) -v n="${n:-0}" 'BEGIN {if (n > 0) printf "%.2f", c * 10 / n * 1000; else print "-"}')"
	R_rss[$k]=$(rss_kb "$pid")
	R_lost[$k]="${R_lost[$k]:-} $(sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' <<<"$out")"
}
median() { tr ' ' '\n' <<<"$1" | grep -v '^-*$' | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }
range() { tr ' ' '\n' <<<"$1" | grep -v '^-*$' | sort -g | awk '{a[NR] = $1} END {if (NR) printf "%.0f-%.0f", a[1], a[NR]; else print "-"}'; }

ROUNDS=${BENCH_ROUNDS:-3}
PEERS=("netd (sandbox)|$NETD_PID|sandbox|$SB_GW|53"
	"dnsmasq+nftset cache|$dnsmasq_PID|peer|10.99.0.1|5353"
	"dnsmasq+nftset cache fw|$dnsmasqfw_PID|fw|10.98.0.1|53"
	"dnsmasq+nftset no-cache|$dnsmasqnc_PID|peer|10.99.0.2|5353"
	"unbound forwarder|$unbound_PID|peer|10.99.0.3|5353")
echo
echo "DNS proxy benchmark: $(nproc) CPUs, $(uname -r), dnsperf 4 clients x 200 outstanding," \
	"${SECS}s per hot run, $ROUNDS rounds (peers interleaved, order rotated each round)"
for mode in hot distinct; do
	for round in $(seq 1 "$ROUNDS"); do
		# The distinct names are cold only once per server: each round
		# asks its own (distinctN.txt).
		file=$WORLD_DIR/$mode.txt
		[ "$mode" = distinct ] && file=$WORLD_DIR/distinct$round.txt
		for i in "${!PEERS[@]}"; do
			IFS='|' read -r label pid where server port <<<"${PEERS[$(((i + round - 1) % ${#PEERS[@]}))]}"
			run "$label" "$pid" "$where" "$server" "$port" "$file" "$mode"
		done
	done
done
echo "(median of the rounds; q/s range in brackets)"
printf '%-26s %-9s %10s %15s %9s %9s %12s %12s %8s %6s\n' peer scenario "q/s" "(range)" "p50 ms" "p99 ms" "cpu ms/1k q" "all ms/1k q" "RSS kB" "lost"
for mode in hot distinct; do
	for e in "${PEERS[@]}"; do
		label=${e%%|*}
		k="$label|$mode"
		printf '%-26s %-9s %10.0f %15s %9s %9s %12s %12s %8s %6s\n' "$label" "$mode" "$(median "${R_q[$k]}")" \
			"($(range "${R_q[$k]}"))" "$(median "${R_p50[$k]}")" "$(median "${R_p99[$k]}")" \
			"$(median "${R_cpu[$k]}")" "$(median "${R_sys[$k]}")" "${R_rss[$k]}" "$(median "${R_lost[$k]}")"
		eval "QPS_${label//[^a-zA-Z0-9]/_}_$mode=$(median "${R_q[$k]}")"
		eval "P99_${label//[^a-zA-Z0-9]/_}_$mode=$(median "${R_p99[$k]}")"
	done
done
st=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status | tr -d '\n ')
echo
echo "netd pin latency (upstream answer -> kernel ack) and counters: $(grep -o '"dns_proxy":{[^}]*}' <<<"$st")"
echo
# rounds_ahead MODE PEER_KEY - "; q/s ahead in K of N rounds" (each round
# ran every peer once, back to back: the pairs share the machine's mood).
rounds_ahead() {
	local lbl e a b
	for e in "${PEERS[@]}"; do
		lbl=${e%%|*}
		[ "${lbl//[^a-zA-Z0-9]/_}" = "$2" ] && break
	done
	read -ra a <<<"${R_q[netd (sandbox)|$1]}"
	read -ra b <<<"${R_q[$lbl|$1]}"
	awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {n = split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= n; i++) k += (x[i] > y[i]); printf "   (q/s ahead in %d of %d rounds)", k, n}'
}
echo "ratios (netd / peer; q/s above 1 and p99 below 1 mean netd is ahead):"
for mode in hot distinct; do
	n=$(eval echo "\$QPS_netd__sandbox__$mode")
	for p in dnsmasq_nftset_cache dnsmasq_nftset_cache_fw dnsmasq_nftset_no_cache unbound_forwarder; do
		v=$(eval echo "\$QPS_${p}_$mode")
		printf '  %-9s vs %-24s q/s %s   p99 %s%s\n' "$mode" "$p" \
			"$(awk -v a="$n" -v b="$v" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')" \
			"$(awk -v a="$(eval echo "\$P99_netd__sandbox__$mode")" -v b="$(eval echo "\$P99_${p}_$mode")" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')" \
			"$(rounds_ahead "$mode" "$p")"
	done
done
# Against unbound as a plain forwarder (docs/performance.md#a-cache-hit-step-by-step):
# CPU per hot query (target <= 0.8), p99 on the hot name (<= 0.5), q/s on
# distinct names (>= 2.5); medians of the rounds.  Distinct names' q/s is
# the whole machine's (the client and the world's resolver share its cores:
# docs/performance.md), so their CPU per query is printed too: at most 0.4
# of unbound's is the 2.5x of a machine where the server is the bottleneck.
cpu_of() { median "${R_cpu[$1|$2]}"; }
echo "against unbound (netd / unbound): hot CPU per query $(awk -v a="$(cpu_of "netd (sandbox)" hot)" \
	-v b="$(cpu_of "unbound forwarder" hot)" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}') (target <= 0.8)," \
	"hot p99 $(awk -v a="$P99_netd__sandbox__hot" -v b="$P99_unbound_forwarder_hot" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}') (<= 0.5)," \
	"distinct q/s $(awk -v a="$QPS_netd__sandbox__distinct" -v b="$QPS_unbound_forwarder_distinct" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}') (>= 2.5)," \
	"distinct CPU per query $(awk -v a="$(cpu_of "netd (sandbox)" distinct)" \
	-v b="$(cpu_of "unbound forwarder" distinct)" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}') (<= 0.4: 2.5x where the server is the bottleneck)"
# Each round runs every peer once, within seconds of each other, so a
# round's netd and unbound share the machine's mood: the ratio per round
# shows how much of the spread is the machine's (docs/performance.md: on
# two cores it straddles the target).
echo "hot CPU per query by round (netd / unbound): $(awk -v a="${R_cpu[netd (sandbox)|hot]}" \
	-v b="${R_cpu[unbound forwarder|hot]}" 'BEGIN {n = split(a, x, " "); split(b, y, " ");
	for (i = 1; i <= n; i++) if (y[i] > 0) { r = x[i] / y[i]; printf "%.2f ", r; m++; k += (r <= 0.8) }
	printf "(at or below 0.8 in %d of %d rounds)", k, m}')"
echo "dnsmasq's sets (cache / no cache / fw): $(peer nft list set inet bench pins4 | grep -o '198\.51\.100\.[0-9]*' | sort -u | tr '\n' ' ')/ $(peer nft list set inet bench pins4nc | grep -o '198\.51\.100\.[0-9]*' | sort -u | tr '\n' ' ')/ $(ip netns exec "$FWH" nft list set inet dmfw pins4 | grep -o '198\.51\.100\.[0-9]*' | sort -u | tr '\n' ' ')"
# ---- resident memory with many sandboxes and pins (BENCH_SANDBOXES, default 1000; 0 = skip) ----
# Each sandbox (policy mem) resolves mem.tun.dt.example once: 100 live pins each.
NSB=${BENCH_SANDBOXES:-1000}
if [ "$NSB" -gt 0 ]; then
	rss0=$(rss_kb "$NETD_PID")
	t0=$(date +%s)
	for i in $(seq 1 "$NSB"); do
		sb_create "m$i" mem >/dev/null 2>&1 || { echo "bench: sandbox m$i: creation failed" >&2; break; }
	done
	t1=$(date +%s)
	for i in $(seq 1 "$NSB"); do
		ip netns exec "$(sb_name "m$i")" dig +short +time=2 +tries=2 mem.tun.dt.example A >/dev/null 2>&1
	done
	t2=$(date +%s)
	n=$(netd sandbox list | grep -c -- "$WORLD_PREFIX-m")
	st=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status | tr -d '\n ')
	echo
	echo "netd RSS: $rss0 kB with 1 sandbox and a full answer cache;" \
		"$(rss_kb "$NETD_PID") kB with $((n + 1)) sandboxes and" \
		"$(grep -o '"pins_tracked":[0-9]*' <<<"$st" | cut -d: -f2) live pins" \
		"($n sandboxes created through the API in $((t1 - t0)) s, one lookup each in $((t2 - t1)) s)"
fi
netd_down >/dev/null
rc=0
# ---- instructions per hot query (tests/bench/callgrind.sh; BENCH_CALLGRIND=1 runs it) ----
if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then
	echo
	NETD_BIN=$NETD_BIN tests/bench/callgrind.sh || rc=1
fi
# ---- the data plane (tests/bench/dataplane.sh; BENCH_DATAPLANE=0 skips it) ----
[ "${BENCH_DATAPLANE:-1}" = 0 ] || NETD_BIN=$NETD_BIN tests/bench/dataplane.sh || rc=1
# ---- the flowtable's, where a kernel has it (tests/bench/dataplane_guest.sh; BENCH_DATAPLANE=0 skips it) ----
[ "${BENCH_DATAPLANE:-1}" = 0 ] || tests/bench/dataplane_guest.sh || rc=1

# ---- the SNI check's cost per new connection (tests/bench/sni.sh; BENCH_SNI=0 skips it) ----
[ "${BENCH_SNI:-1}" = 0 ] || NETD_BIN=$NETD_BIN tests/bench/sni.sh || rc=1
# ... and the QUIC check's per new flow, in netd's code beside the TCP parse
# (tests/bench/quic_bench.c, built by make bench; BENCH_QUIC=0 skips it)
if [ "${BENCH_QUIC:-1}" != 0 ]; then
	echo "=== the QUIC check: added cost per new flow (docs/sni.md#cost)"
	build/bench/quic_bench || rc=1
fi

# ---- what exporting a connection record costs (IPFIX, the journal's fields;
# build/bench/ipfix_bench, tests/bench/ipfix_bench.c; BENCH_FLOWS=0 skips it) ----
if [ "${BENCH_FLOWS:-1}" != 0 ]; then
	echo "=== IPFIX export and the journal: added cost per connection record (docs/performance.md#exporting-flows)"
	build/bench/ipfix_bench "${BENCH_FLOW_RECORDS:-1000000}" || rc=1
fi

# ---- bandwidth limits: an unlimited sandbox's cost, shaping's (tests/bench/bandwidth.sh; BENCH_BW=0 skips it) ----
[ "${BENCH_BW:-1}" = 0 ] || NETD_BIN=$NETD_BIN tests/bench/bandwidth.sh || rc=1

# ---- the API gateway next to squid ssl_bump and mitmproxy (tests/bench/gateway.sh) ----
bench_gateway || rc=1
exit "$rc"
