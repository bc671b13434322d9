#!/usr/bin/env bash
# bandwidth.sh - the bandwidth section of `make bench` (run.sh calls it;
# BENCH_BW=0 skips it; it also runs alone): what netd's shaping
# (limits.bandwidth, docs/policies.md) costs, in a private world, iperf3
# from a sandbox to 198.51.100.60 in the world's "internet".
#
#   BENCH_BW_ROUNDS=3 BENCH_BW_SECONDS=5 BENCH_BW_RATES="20mbit 100mbit 1gbit" \
#   tests/bench/bandwidth.sh                              (root; build/netd first)
#
# 1. A sandbox without a limit: what is on its interface (nothing of
#    netd's: the veth's noqueue, no ingress qdisc, no IFB), and its per-packet
#    cost - TCP 1 stream (Gbit/s) and 64-byte UDP (packets/s), up and down -
#    next to a sandbox shaped at 100gbit both ways, a shaper that never has
#    to wait: the price of the HTB, the redirect and the IFB alone.
# 2. Shaping at the limit: for each rate, a sandbox shaped at it both ways,
#    TCP at full speed (one stream) up and down, against the unlimited
#    sandbox sending at the same rate by itself (iperf3 -b): the rate each
#    reached and the whole machine's busy CPU time per MB moved (user +
#    system + softirq, /proc/stat), so the difference is what shaping adds
#    (the queue, the qdisc's timer, the drops TCP then recovers from).
# Medians of BENCH_BW_ROUNDS rounds of BENCH_BW_SECONDS, paths alternating.
# The machine is shared with the client and the server, and the CPU
# figure with anything else running: compare within one run only.  Prints
# figures, asserts nothing about time.
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/bench/lib_ns.sh

ROUNDS=${BENCH_BW_ROUNDS:-3}
SECS=${BENCH_BW_SECONDS:-5}
RATES=${BENCH_BW_RATES:-"20mbit 100mbit 1gbit"}
SRV=198.51.100.60
bench_need iperf3 jq tc

world_up "ndbb$$" >/dev/null || { echo "bench: world_up failed" >&2; exit 1; }
iperf_world bw
netd_up >/dev/null || exit 1
sb_create u bw >/dev/null || exit 1
sb_create h bw --egress-rate 100gbit --ingress-rate 100gbit >/dev/null || exit 1
for r in $RATES; do
	sb_create "r$r" bw --egress-rate "$r" --ingress-rate "$r" >/dev/null || exit 1
done
U=$(sb_name u)
IFU=$(sb_field "$U" host_ifname)

# busy - the machine's busy jiffies so far (user, nice, system, irq, softirq, steal).
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }

# run SB ARGS... - one iperf3 run; prints "BITS_PER_S BYTES BUSY_JIFFIES" (tcp)
# or "PACKETS_PER_S" (udp), "-" if it failed.
run() {
	local sb=$1 out b0 b1
	shift
	b0=$(busy)
	out=$(timeout $((SECS + 20)) ip netns exec "$sb" iperf3 -c "$SRV" -t "$SECS" -J "$@" 2>/dev/null)
	b1=$(busy)
	if [[ " $* " == *" -u "* ]]; then
		jq -r '.end.sum | if .seconds > 0 then ((.packets - .lost_packets) / .seconds | floor) else "-" end' \
			<<<"$out" 2>/dev/null || echo -
	else
		jq -r --arg j $((b1 - b0)) '.end.sum_received | "\(.bits_per_second | floor) \(.bytes) \($j)"' \
			<<<"$out" 2>/dev/null || echo -
	fi
}

median() { tr ' ' '\n' <<<"$1" | grep -v '^-*$' | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-"}'; }

echo
echo "Bandwidth benchmark: $(nproc) CPUs, $(uname -r), iperf $(iperf3 --version | awk 'NR == 1 {print $2}')," \
	"$ROUNDS rounds x ${SECS}s; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "a sandbox without a limit ($IFU): $(world_exec host tc qdisc show dev "$IFU" | tr -s ' ' | paste -sd';')" \
	"ingress qdisc: $(world_exec host tc qdisc show dev "$IFU" ingress | wc -l), IFBs of netd's:" \
	"$(world_exec host ip -o link show type ifb | wc -l) (the shaped sandboxes' $((1 + $(wc -w <<<"$RATES"))))"

# ---- 1. per-packet cost without a limit, and with an idle shaper ----
declare -A P
TESTS=(tcp1 udp64 tcp1r udp64r)
for ((round = 0; round < ROUNDS; round++)); do
	for t in "${TESTS[@]}"; do
		for path in u h; do
			[ $((round % 2)) = 1 ] && path=$([ "$path" = u ] && echo h || echo u)
			case $t in
			tcp1) args=() ;; tcp1r) args=(-R) ;;
			udp64) args=(-u -l 64 -b 0) ;; udp64r) args=(-R -u -l 64 -b 0) ;;
			esac
			v=$(run "$(sb_name "$path")" "${args[@]}")
			[[ $t == tcp* ]] && v=$(awk '{if ($1 == "-") print "-"; else printf "%.2f", $1 / 1e9}' <<<"$v")
			P[$t,$path]="${P[$t,$path]:-} $v"
		done
	done
done
echo
echo "per packet: no limit (nothing on the interface) next to a shaper at 100gbit that never waits"
printf '  %-7s %12s %12s %7s   %s\n' test "no limit" "100gbit" ratio "(unit; every round: no limit / 100gbit)"
for t in "${TESTS[@]}"; do
	a=$(median "${P[$t,u]}")
	b=$(median "${P[$t,h]}")
	u=Gbit/s
	[[ $t == udp* ]] && u=pkt/s
	printf '  %-7s %12s %12s %7s   %s;%s /%s\n' "$t" "$a" "$b" "$(ratio "$b" "$a")" "$u" "${P[$t,u]}" "${P[$t,h]}"
done

# ---- 2. shaping at the limit ----
echo
echo "at the limit: shaped (TCP at full speed, the shaper holds it) next to unshaped (iperf3 -b, the same rate)"
printf '  %-8s %-4s %10s %10s %12s %12s %7s\n' rate dir "shaped" "unshaped" "CPU ms/MB" "CPU ms/MB" "ratio"
printf '  %-8s %-4s %10s %10s %12s %12s %7s\n' "" "" "Mbit/s" "Mbit/s" "shaped" "unshaped" ""
for r in $RATES; do
	bps=$(awk -v r="$r" 'BEGIN {n = r + 0; u = substr(r, length(n "") + 1);
		m = u == "kbit" ? 1e3 : u == "mbit" ? 1e6 : u == "gbit" ? 1e9 : 1; printf "%.0f", n * m}')
	for dir in up down; do
		declare -A S=()
		dargs=()
		[ "$dir" = down ] && dargs=(-R)
		for ((round = 0; round < ROUNDS; round++)); do
			for path in shaped unshaped; do
				[ $((round % 2)) = 1 ] && path=$([ "$path" = shaped ] && echo unshaped || echo shaped)
				if [ "$path" = shaped ]; then
					v=$(run "$(sb_name "r$r")" "${dargs[@]}")
				else
					v=$(run "$U" -b "$bps" "${dargs[@]}")
				fi
				read -r vb vbytes vj <<<"$v"
				[ "$vb" = - ] && continue
				S[$path,rate]="${S[$path,rate]:-} $(awk -v b="$vb" 'BEGIN {printf "%.1f", b / 1e6}')"
				# busy jiffies are 10 ms (USER_HZ 100)
				S[$path,cpu]="${S[$path,cpu]:-} $(awk -v j="$vj" -v n="$vbytes" 'BEGIN {if (n > 0) printf "%.2f", j * 10 / (n / 1e6); else print "-"}')"
			done
		done
		cs=$(median "${S[shaped,cpu]:-}")
		cu=$(median "${S[unshaped,cpu]:-}")
		printf '  %-8s %-4s %10s %10s %12s %12s %7s\n' "$r" "$dir" "$(median "${S[shaped,rate]:-}")" \
			"$(median "${S[unshaped,rate]:-}")" "$cs" "$cu" "$(ratio "$cs" "$cu")"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
netd_down >/dev/null
