#!/bin/sh
# bench-guest.sh - the flowtable's data-plane figures, inside the microVM
# test guest on Debian's kernel, which has nftables flowtables
# (tests/bench/dataplane_guest.sh boots it; `make bench` runs that).  Three
# paths from a client netns through a router netns to the server netns
# (iperf3 -s on 198.51.100.60), in alternating rounds:
#   bare  router "hostb": no nftables at all
#   ft    router "host": netd (dataplane.flowtable: true), the client one
#         of its sandboxes
#   rules the same netd with forward's flow-add rule deleted by hand: the
#         rules' path (its fast-path rule included)
# Tests: TCP 1 stream and 64-byte UDP, each upload and download (-R).
# Under TCG emulation (this machine: no usable KVM) every path is slowed
# alike but not in proportion to real hardware: the ratios say which path
# does less per packet, not what a real host would measure.  Prints
# "BENCH ..." lines; asserts nothing.
[ -n "${BASH_VERSION:-}" ] || exec /opt/w/bin/bash "$0" "$@"
set -u
export PATH=/opt/w/bin:/bin:/sbin:/usr/bin:/usr/sbin
ROUNDS=$(sed -n 's/.*netd.rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
SECS=$(sed -n 's/.*netd.secs=\([0-9]*\).*/\1/p' /proc/cmdline)
ROUNDS=${ROUNDS:-3} SECS=${SECS:-3}
SRV=198.51.100.60
W=/run/w
mkdir -p "$W/policies" "$W/state"
[ -e /etc/resolv.conf ] || : >/etc/resolv.conf
H() { ip netns exec host "$@"; }
I() { ip netns exec inet "$@"; }
# shellcheck source=guest-netd.sh
. /opt/w/lib/netd.sh
say() { echo "BENCH $*"; }

ip netns add host && ip netns add hostb && ip netns add inet && ip netns add bc || exit 1
ip link add eth0 netns host type veth peer name wan0 netns inet
ip link add eth0 netns hostb type veth peer name wan1 netns inet
ip link add eth1 netns hostb type veth peer name eth0 netns bc
for n in host hostb inet bc; do ip -n $n link set lo up; done
H ip link set eth0 up
ip -n hostb link set eth0 up && ip -n hostb link set eth1 up
ip -n bc link set eth0 up
I ip link set wan0 up && I ip link set wan1 up
I ip link add d0 type dummy && I ip link set d0 up
H ip addr add 192.0.2.1/24 dev eth0
I ip addr add 192.0.2.2/24 dev wan0
ip -n hostb addr add 203.0.113.1/24 dev eth0
I ip addr add 203.0.113.2/24 dev wan1
ip -n hostb addr add 10.99.0.1/30 dev eth1
ip -n bc addr add 10.99.0.2/30 dev eth0
I ip addr add $SRV/24 dev d0
H ip route add default via 192.0.2.2
ip -n hostb route add default via 203.0.113.2
ip -n bc route add default via 10.99.0.1
I ip route add 10.99.0.0/30 via 203.0.113.1
ip netns exec hostb sysctl -qw net.ipv4.ip_forward=1
I iperf3 -s -D -B $SRV -p 5201 >/dev/null 2>&1

{
	echo "name: dp"
	echo "egress:"
	echo "  - cidrs: [$SRV/32]"
	echo "    ports: [5201]"
	echo "    protocol: tcp"
	echo "  - cidrs: [$SRV/32]"
	echo "    ports: [5201]"
	echo "    protocol: udp"
} >"$W/policies/dp.yaml"
guest_netd_config warn
guest_netd_start
netd sandbox create c --policy dp >/dev/null || { echo "BENCH FAIL - no sandbox"; tail "$W/netd.log"; exit 1; }

# ft_rule on|off: forward's flow-add rule there or deleted by hand
ft_rule() {
	local h
	h=$(H nft -a list chain inet netd forward | sed -n 's/.*flow add @ft.*# handle \([0-9]*\)/\1/p')
	case $1 in
	off) [ -n "$h" ] && H nft delete rule inet netd forward handle "$h" ;;
	on) [ -z "$h" ] && H nft insert rule inet netd forward position \
		"$(H nft -a list chain inet netd forward | sed -n 's/.*ct state established meta mark.*# handle \([0-9]*\)/\1/p' | head -n 1)" \
		ct state established ct direction reply oifname @sandbox_ifs flow add @ft ;;
	esac
	return 0
}
# one PATH TEST: Mbit/s (tcp) or packets/s (udp) the receiver got
one() {
	local ns=c args=() out
	[ "$1" = bare ] && ns=bc
	case $2 in
	tcp) ;; tcpR) args=(-R) ;;
	udp) args=(-u -l 64 -b 0) ;; udpR) args=(-R -u -l 64 -b 0) ;;
	esac
	out=$(ip netns exec $ns iperf3 -c $SRV -p 5201 -t "$SECS" "${args[@]}" 2>/dev/null)
	case $2 in
	tcp*) echo "$out" | awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Gbits/sec") v = $i * 1000; else if ($(i + 1) == "Mbits/sec") v = $i } END { print v ? int(v) : "-" }' ;;
	udp*) echo "$out" | awk '/receiver/ { for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, a, "/"); v = a[2] - a[1] } } END { print v ? int(v / '"$SECS"') : "-" }' ;;
	esac
}
median() { tr ' ' '\n' <<<"$1" | grep -v '^-*$' | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-"}'; }

PATHS=(bare ft rules) TESTS=(tcp tcpR udp udpR)
declare -A R
for ((round = 0; round < ROUNDS; round++)); do
	for t in "${TESTS[@]}"; do
		for ((p = 0; p < 3; p++)); do
			path=${PATHS[$(((p + round) % 3))]}
			case $path in ft) ft_rule on ;; rules) ft_rule off ;; esac
			R[$t,$path]="${R[$t,$path]:-} $(one "$path" "$t")"
		done
	done
done
ft_rule on
say "guest: $(uname -r), TCG, $ROUNDS rounds x ${SECS}s, paths rotated each round"
say "$(printf '%-24s %10s %10s %6s %10s %6s' test bare flowtable ratio rules ratio)"
for t in "${TESTS[@]}"; do
	case $t in
	tcp) d="TCP upload, Mbit/s" ;; tcpR) d="TCP download, Mbit/s" ;;
	udp) d="UDP 64 B upload, pkt/s" ;; udpR) d="UDP 64 B download, pkt/s" ;;
	esac
	b=$(median "${R[$t,bare]}") f=$(median "${R[$t,ft]}") s=$(median "${R[$t,rules]}")
	say "$(printf '%-24s %10s %10s %6s %10s %6s' "$d" "$b" "$f" "$(ratio "$f" "$b")" "$s" "$(ratio "$s" "$b")")   (rounds:${R[$t,bare]} /${R[$t,ft]} /${R[$t,rules]})"
done
kill -TERM $NETD
wait $NETD
exit 0
