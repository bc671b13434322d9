#!/usr/bin/env bash
# callgrind.sh - instructions per hot DNS query, netd next to unbound as a
# plain forwarder: a figure that does not move with the machine's load
# (`make bench` measures time, and this machine is shared).  Root, private
# world only (tests/world.sh); everything is removed on exit.
#
#   BENCH_CG_QUERIES=20000 BENCH_CG_QPS=2000 tests/bench/callgrind.sh
#
# Both servers run under valgrind --tool=callgrind; each is warmed up
# (its cache filled; netd's pin made), its counters zeroed
# (callgrind_control -z), then asked BENCH_CG_QUERIES queries for one name
# at BENCH_CG_QPS (dnsperf -Q, 4 clients x 20 outstanding: the same offered
# load for both, so both batch alike), and dumped (callgrind_control -d).
# Printed: user-space instructions (Ir) per query of each, their ratio, and
# netd's per step of a cache hit (inclusive Ir per query of the functions
# in CG_STEPS).  The kernel's share (system calls, the stack) is not in an
# Ir count: `make bench` shows it as CPU time, and the system calls per
# query are printed from a run without valgrind (perf stat, tracepoint
# raw_syscalls:sys_enter).  BENCH_CG_KEEP=DIR keeps the dumps there
# (callgrind_annotate them).  BENCH_CG_MODE=distinct asks BENCH_CG_QUERIES
# distinct names instead, once each (the world's resolver has them in its
# cache first, so both servers forward every one and wait alike): the
# cache-miss path, its steps those of an upstream query.  Not a test: it
# asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/bench/lib_ns.sh

NQ=${BENCH_CG_QUERIES:-20000}
QPS=${BENCH_CG_QPS:-2000}
bench_need valgrind callgrind_control callgrind_annotate dnsperf unbound perf

world_up "ndc$$" >/dev/null || { echo "bench: world_up failed" >&2; exit 1; }
PEER=$WORLD_PREFIX-peer
PCLI=$WORLD_PREFIX-pcli
trap 'ip netns del "$PEER" 2>/dev/null; ip netns del "$PCLI" 2>/dev/null; world_down' EXIT

bench_netd_policy	# bench.yaml; NETD_DNS_EXTRA (tests/bench/lib_ns.sh)
CG=(valgrind --tool=callgrind --dump-instr=no --collect-jumps=no)
netd_start() {	# netd_start WRAP... - netd (under WRAP), sandbox b1; sets SB, SB_GW
	NETD_WRAP=("$@")
	netd_up >/dev/null || exit 1
	SB=$(sb_name b1)
	# (netd's state keeps the sandbox across a restart)
	netd sandbox show "$SB" >/dev/null 2>&1 || sb_create b1 bench >/dev/null || exit 1
	SB_GW=$(netd sandbox show "$SB" | sed -n 's/.*"gateway4": "\(.*\)".*/\1/p')
}
netd_start "${CG[@]}" --callgrind-out-file="$WORLD_DIR/cg.netd"

uplink_ns "$PEER" bp0 bi0 202
client_ns "$PCLI" bc0 "$PEER" bs0 10.99.0.100/24 10.99.0.3/24
unbound_fwd_conf "$WORLD_DIR/unbound-fwd.conf"
ip netns exec "$PEER" "${CG[@]}" --callgrind-out-file="$WORLD_DIR/cg.unbound" \
	unbound -d -c "$WORLD_DIR/unbound-fwd.conf" >"$WORLD_DIR/unbound.log" 2>&1 &
world_pid_track $!
UNBOUND_PID=$!

MODE=${BENCH_CG_MODE:-hot}
case $MODE in
hot)
	echo "www.dt.example A" >"$WORLD_DIR/warm.txt"
	cp "$WORLD_DIR/warm.txt" "$WORLD_DIR/ask.txt"
	;;
distinct)
	for ((i = 1; i <= 1000; i++)); do echo "w$i.tun.dt.example A"; done >"$WORLD_DIR/warm.txt"
	for ((i = 1; i <= NQ * 11; i++)); do echo "n$i.tun.dt.example A"; done >"$WORLD_DIR/ask.txt"
	world_exec inet dnsperf -s 192.0.2.53 -d "$WORLD_DIR/warm.txt" -n 1 >/dev/null 2>&1
	world_exec inet dnsperf -s 192.0.2.53 -d "$WORLD_DIR/ask.txt" -n 1 >/dev/null 2>&1
	;;
*) echo "bench: BENCH_CG_MODE is hot or distinct, not $MODE" >&2; exit 1 ;;
esac
# ask NS SERVER PORT N [QPS [OUTSTANDING [FILE [SKIP]]]] - dnsperf's output
# (QPS "": as fast as it answers).  N: queries (hot), or N names of FILE
# after its first SKIP, once each (distinct).
ask() {
	local qps=() file=${7:-$WORLD_DIR/ask.txt} n=(-n "$4")
	[ -n "${5:-}" ] && qps=(-Q "$5")
	if [ "$MODE" = distinct ]; then
		tail -n "+$((${8:-0} + 1))" "$file" | head -n "$4" >"$WORLD_DIR/ask.part"
		file=$WORLD_DIR/ask.part
		n=(-n 1)
	fi
	ip netns exec "$1" dnsperf -s "$2" -p "$3" -d "$file" "${n[@]}" -c 4 -q "${6:-20}" -t 10 "${qps[@]}" 2>&1
}
ready() {	# ready NS SERVER PORT LABEL
	local i
	for ((i = 0; i < 120; i++)); do
		[ -n "$(ip netns exec "$1" dig +short +time=2 +tries=1 -p "$3" "@$2" www.dt.example A 2>/dev/null)" ] && return 0
		sleep 0.5
	done
	echo "bench: $4 does not answer" >&2
	exit 1
}
ready "$SB" "$SB_GW" 53 netd
ready "$PCLI" 10.99.0.3 5353 unbound

# measure LABEL PID NS SERVER PORT - Ir per query into IR_<LABEL>
measure() {
	local label=$1 pid=$2 out n dump ir
	ask "$3" "$4" "$5" 500 200 "" "$WORLD_DIR/warm.txt" >/dev/null	# warm: cache, pins, every path
	callgrind_control -z "$pid" >/dev/null 2>&1 || { echo "bench: callgrind_control -z $label failed" >&2; exit 1; }
	out=$(ask "$3" "$4" "$5" "$NQ" "$QPS")
	callgrind_control -d "$pid" >/dev/null 2>&1 || { echo "bench: callgrind_control -d $label failed" >&2; exit 1; }
	n=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' <<<"$out")
	dump=$(ls -t "$WORLD_DIR/cg.$label"* 2>/dev/null | head -n 1)
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dump" 2>/dev/null | head -n 1)
	[ -z "$ir" ] && ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$dump" | head -n 1)
	if [ -z "$n" ] || [ "$n" = 0 ] || [ -z "$ir" ]; then
		echo "bench: $label: no figure (completed: ${n:-?}; dump: ${dump:-none})" >&2
		tail -n 15 <<<"$out" >&2
		exit 1
	fi
	printf '%-10s %8d queries %14d Ir %10.0f Ir/query  (lost %s)\n' "$label" "$n" "$ir" \
		"$(awk -v a="$ir" -v b="$n" 'BEGIN {print a / b}')" \
		"$(sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' <<<"$out")"
	eval "IR_$label=$(awk -v a="$ir" -v b="$n" 'BEGIN {printf "%.0f", a / b}')"
	eval "DUMP_$label=$dump"
	eval "N_$label=$n"
}
echo "Instructions per $MODE query (callgrind, user space only; $NQ queries of one name at $QPS q/s," \
	"dnsperf 4 clients x 20 outstanding); load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure netd "$NETD_PID" "$SB" "$SB_GW" 53
measure unbound "$UNBOUND_PID" "$PCLI" 10.99.0.3 5353
echo "netd / unbound: $(awk -v a="$IR_netd" -v b="$IR_unbound" 'BEGIN {printf "%.2f", a / b}')"

# What each step of netd's cache hit costs: inclusive Ir per query.
# (A function the compiler inlined into its caller has no line of its own.)
CG_STEPS=${CG_STEPS:-"event_base_loop udp_rounds query_in wire_parse_query client_lookup rate_ok decide_local decide_query budget_filter cache_get wire_question_end query_forward upstream_send ares_send timer_update ares_timeout on_sock ares_process_fd on_upstream answer_pass decide_ech_strip wire_walk_answer decide_pins pintrack_plan answer_commit cache_put ops_audit pinreg_note audit_write_members udp_flush on_flush"}
echo
echo "netd, per step of a $MODE query (inclusive Ir per query; callgrind_annotate $(basename "$DUMP_netd")):"
callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$DUMP_netd" 2>/dev/null >"$WORLD_DIR/netd.annot"
for f in $CG_STEPS; do
	ir=$(awk -v f="$f" '{gsub(",", "", $1)} $0 ~ (":" f " ") || $0 ~ (":" f "$") || $0 ~ (":" f "\\.") {print $1; exit}' "$WORLD_DIR/netd.annot")
	[ -n "$ir" ] && printf '  %-20s %8.0f\n' "$f" "$(awk -v a="$ir" -v b="$N_netd" 'BEGIN {print a / b}')"
done
[ -n "${BENCH_CG_KEEP:-}" ] && mkdir -p "$BENCH_CG_KEEP" && cp "$DUMP_netd" "$DUMP_unbound" "$BENCH_CG_KEEP"/

# System calls per query, without valgrind (the same load): the kernel's
# share is in what these do.
kill -TERM "$UNBOUND_PID" 2>/dev/null
netd_down >/dev/null 2>&1
netd_start
ip netns exec "$PEER" unbound -d -c "$WORLD_DIR/unbound-fwd.conf" >"$WORLD_DIR/unbound2.log" 2>&1 &
world_pid_track $!
UNBOUND_PID=$!
ready "$SB" "$SB_GW" 53 netd
ready "$PCLI" 10.99.0.3 5353 unbound
sysc() {	# sysc LABEL PID NS SERVER PORT N QPS OUTSTANDING [SKIP]
	local out n s e perf_pid
	ask "$3" "$4" "$5" 500 200 "" "$WORLD_DIR/warm.txt" >/dev/null
	perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait -p "$2" -o "$WORLD_DIR/sysc.$1" &
	perf_pid=$!
	sleep 0.5
	out=$(ask "$3" "$4" "$5" "$6" "$7" "$8" "" "${9:-0}")
	kill -INT "$perf_pid"
	wait "$perf_pid"
	n=$(sed -n 's/.*Queries completed: *\([0-9]*\).*/\1/p' <<<"$out")
	s=$(awk -F, '/raw_syscalls/ {print $1}' "$WORLD_DIR/sysc.$1")
	e=$(awk -F, '/epoll_wait/ {print $1}' "$WORLD_DIR/sysc.$1")
	printf '%-10s %6s system calls per query, %6s wakeups (epoll_wait) per 100 queries (%s queries, %s q/s offered, 4 x %s outstanding)\n' "$1" \
		"$(awk -v a="${s:-0}" -v b="${n:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')" \
		"$(awk -v a="${e:-0}" -v b="${n:-0}" 'BEGIN {if (b > 0) printf "%.1f", a * 100 / b; else print "-"}')" \
		"${n:-0}" "${7:-max}" "$8"
}
echo
sysc netd "$NETD_PID" "$SB" "$SB_GW" 53 "$NQ" "$QPS" 20
sysc unbound "$UNBOUND_PID" "$PCLI" 10.99.0.3 5353 "$NQ" "$QPS" 20
# The bench's load: as fast as each answers, 4 x 200 outstanding.
# (distinct: the names after the first run's; each server restarted empty)
sysc netd "$NETD_PID" "$SB" "$SB_GW" 53 $((NQ * 10)) "" 200 "$NQ"
sysc unbound "$UNBOUND_PID" "$PCLI" 10.99.0.3 5353 $((NQ * 10)) "" 200 "$NQ"
netd_down >/dev/null 2>&1
exit 0
