#!/bin/sh
# flowtable-guest.sh - the flowtable fast path, run inside the microVM test
# guest (tests/integ/dp_flowtable.sh boots it with tests/microvm/world.sh's
# world): Debian's cloud kernel has nftables flowtables, which the machine
# running the suite may not.  The whole world is in the guest: a netns
# "host" where netd runs (dataplane.flowtable: true, so netd refuses to
# start without a flowtable), a netns "inet" with the servers on
# documentation addresses and a DNS server, and the sandboxes netd makes.
# Checks print "MVTEST ok/FAIL - ..." (/lib/mvtest.sh); the host turns them
# into results.  busybox sh starts it; the rest is bash from the world
# (busybox's shell runs its own applets before PATH).
[ -n "${BASH_VERSION:-}" ] || exec /opt/w/bin/bash "$0" "$@"
set -u
export PATH=/opt/w/bin:/bin:/sbin:/usr/bin:/usr/sbin
. /lib/mvtest.sh

W=/run/w
S4=198.51.100.10 S6=2001:db8:100::10
mkdir -p "$W/policies" "$W/state"
[ -e /etc/resolv.conf ] || : >/etc/resolv.conf
H() { ip netns exec host "$@"; }
I() { ip netns exec inet "$@"; }
netd() { H /opt/w/bin/netd "$@"; }
# X SB CMD...: CMD inside sandbox SB (its netns, as netd made it).
X() { local n=$1; shift; ip netns exec "$n" "$@"; }
die() { echo "MVTEST FAIL - $*"; exit 1; }

# ---- the world -------------------------------------------------------------
ip netns add host && ip netns add inet || die "netns"
ip link add eth0 netns host type veth peer name wan0 netns inet || die "veth"
H ip link set lo up && H ip link set eth0 up
I ip link set lo up && I ip link set wan0 up
I ip link add d0 type dummy && I ip link set d0 up
H ip addr add 192.0.2.1/24 dev eth0
H ip -6 addr add 2001:db8:1::1/64 dev eth0 nodad
I ip addr add 192.0.2.2/24 dev wan0
I ip -6 addr add 2001:db8:1::2/64 dev wan0 nodad
I ip addr add $S4/24 dev d0
I ip -6 addr add $S6/64 dev d0 nodad
H ip route add default via 192.0.2.2
H ip -6 route add default via 2001:db8:1::2
# The servers: a TCP receiver per test port, a UDP echo, DNS for big.test.
# What reaches them is counted there too (table inet seen), so a conn
# record can be checked against the packets that really crossed.
PIDS=""
PORTS="5001 5002 5003 5004 5005 5006 5007 5008"
for p in $PORTS; do
	I /bin/mvnet sink $p </dev/null >/dev/null 2>&1 &
	PIDS="$PIDS $!"
done
I /bin/mvnet udpecho 7 $S4 </dev/null >/dev/null 2>&1 &
PIDS="$PIDS $!"
I dnsmasq -k --no-resolv --no-hosts --bind-interfaces --listen-address=192.0.2.2 \
	--address=/big.test/$S4 --address=/big.test/$S6 --user=root --pid-file= \
	</dev/null >"$W/dnsmasq.log" 2>&1 &
PIDS="$PIDS $!"
I nft add table inet seen
I nft add chain inet seen in '{ type filter hook prerouting priority -300; }'
for p in $PORTS; do I nft add rule inet seen in tcp dport $p counter; done
seen_bytes() {
	I nft list chain inet seen in |
		sed -n "s/.*dport $1 counter packets [0-9]* bytes \([0-9]*\).*/\1/p"
}

# policy NAME [LIMITS_LINE]: the servers' ports by address, and big.test by name.
policy() {
	{
		echo "name: $1"
		echo "egress:"
		echo "  - cidrs: [$S4/32, $S6/128]"
		echo "    ports: [5001, 5003, 5004, 5005, 5006, 5007, 5008]"
		echo "    protocol: tcp"
		echo "  - cidrs: [$S4/32, $S6/128]"
		echo "    ports: [7]"
		echo "    protocol: udp"
		echo "  - domains: [big.test]"
		echo "    ports: [5002]"
		echo "    protocol: tcp"
		[ -n "${2:-}" ] && echo "$2"
	} >"$W/policies/$1.yaml"
}
policy open
policy keep
policy metered "limits: { egress_bytes: 3M, on_exceed: cut }"
policy later
{
	echo "socket: $W/netd.sock"
	echo "state_dir: $W/state"
	echo "policy_dir: $W/policies"
	echo "audit_log: $W/audit.jsonl"
	echo "upstream: [192.0.2.2]"
	echo "egress_interface: eth0"
	echo "pool: { ipv4: 10.87.0.0/16, ipv6: \"fd00:87::/48\" }"
	echo "log_level: debug"
	echo "audit: { conn_update_interval: 1 }"
	echo "dataplane: { flowtable: true }"
} >"$W/netd.yaml"
export NETD_SOCKET=$W/netd.sock
netd_start() {
	nsenter --net=/run/netns/host /opt/w/bin/netd run --config "$W/netd.yaml" \
		</dev/null >>"$W/netd.log" 2>&1 &
	NETD=$!
	for i in $(seq 100); do netd status >/dev/null 2>&1 && break; sleep 0.1; done
}
netd_start

# has TEXT WORD...: every WORD is a word of TEXT; lacks TEXT WORD: it is not.
has() {
	local t=$1 w
	shift
	for w; do echo "$t" | grep -qw -- "$w" || { echo "no '$w' in: $t"; return 1; }; done
}
lacks() { ! echo "$1" | grep -qw -- "$2"; }
ft_devs() { H nft list flowtable inet netd ft-0 | grep devices; }

check "netd started with dataplane.flowtable: true" netd status
check "status: dataplane.flowtable is true" has "$(netd status)" '"flowtable": true'
check "netd logs the flowtable fast path on" grep -q "flowtable fast path: on" "$W/netd.log"

for sb in a b c d m; do
	case $sb in m) p=metered ;; b) p=later ;; d) p=keep ;; *) p=open ;; esac
	netd sandbox create "$sb" --policy "$p" >/dev/null || die "create $sb"
done
field() { netd sandbox show "$1" | sed -n "s/.*\"$2\": \"\([^\"]*\)\".*/\1/p" | head -n 1; }
ifn() { field "$1" host_ifname; }
A4=$(field a ipv4) A6=$(field a ipv6) B4=$(field b ipv4) C4=$(field c ipv4)
D4=$(field d ipv4) M4=$(field m ipv4)

# ---- the ruleset ---------------------------------------------------------------
ft=$(H nft list flowtable inet netd ft-0)
check "flowtable ft-0: hook ingress, the counter flag" has "$ft" ingress counter
check "its devices: the egress interface and each unmetered sandbox's" \
	has "$(ft_devs)" eth0 "$(ifn a)" "$(ifn b)" "$(ifn c)" "$(ifn d)"
check "a metered sandbox's interface is not one of them" lacks "$(ft_devs)" "$(ifn m)"
fwd=$(H nft list map inet netd flow_fwd)
check "flow_fwd: the unmetered sandboxes jump to fl-0" has "$fwd" "$(ifn a)" "$(ifn c)" fl-0
check "flow_fwd: not the metered one" lacks "$fwd" "$(ifn m)"

# offloaded SRC PROTO DPORT: conntrack shows [OFFLOAD] on SRC's entry to DPORT within 5 s
offloaded() {
	local fam=ipv4 i
	case $1 in *:*) fam=ipv6 ;; esac
	for i in $(seq 25); do
		H conntrack -L -f $fam -p "$2" --orig-src "$1" --orig-port-dst "$3" 2>/dev/null |
			grep -q OFFLOAD && return 0
		sleep 0.2
	done
	H conntrack -L -f $fam -p "$2" --orig-src "$1" 2>&1 | head -n 3
	return 1
}
# conn_bytes SRC DPORT: bytes_out of the audit conn record of SRC's connection to DPORT (waits 20 s)
conn_bytes() {
	local i l
	for i in $(seq 200); do
		l=$(grep '"event":"conn"' "$W/audit.jsonl" 2>/dev/null | grep "\"src\":\"$1\"" |
			grep "\"dport\":$2," | tail -n 1)
		if [ -n "$l" ]; then
			echo "$l" | sed -n 's/.*"bytes_out":\([0-9]*\).*/\1/p'
			return 0
		fi
		sleep 0.1
	done
}
# within_1pct X Y: |X - Y| <= Y / 100
within_1pct() {
	[ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] || return 1
	local d=$(($1 - $2))
	[ "${d#-}" -le $(($2 / 100)) ]
}

# ---- 1. TCP is offloaded, and its conn record counts every byte that crossed ----
X a /bin/mvnet stream $S4 5001 8000000 4 >"$W/s1" 2>&1 &
P=$!
check "IPv4 TCP: the connection is offloaded ([OFFLOAD] in conntrack)" offloaded "$A4" tcp 5001
wait $P
check "IPv4 TCP: all 8,000,000 bytes arrive (the receiver's count)" test $? = 0
b=$(conn_bytes "$A4" 5001) s=$(seen_bytes 5001)
check "IPv4 TCP: its conn record's bytes_out ($b) is what reached the server ($s) within 1%" \
	within_1pct "$b" "$s"
X a /bin/mvnet stream $S6 5003 4000000 3 >"$W/s2" 2>&1 &
P=$!
check "IPv6 TCP: the connection is offloaded" offloaded "$A6" tcp 5003
wait $P
check "IPv6 TCP: all bytes arrive" test $? = 0
b=$(conn_bytes "$A6" 5003) s=$(seen_bytes 5003)
check "IPv6 TCP: bytes_out ($b) = what reached the server ($s) within 1%" within_1pct "$b" "$s"

# ---- 2. UDP, and a spoofed copy of an offloaded flow from another sandbox --------
check "UDP: 20 echoes from c, source port 40000" X c /bin/mvnet udp -p 40000 $S4 7 64 20
check "UDP: the flow is offloaded" offloaded "$C4" udp 7
pk() {
	H conntrack -L -p udp --orig-src "$C4" --orig-port-src 40000 -o extended 2>/dev/null |
		sed -n 's/.*packets=\([0-9]*\).*/\1/p' | head -n 1
}
drops() {
	H nft list chain inet netd sandbox_raw | grep 'sandbox_src4' |
		sed -n 's/.*packets \([0-9]*\).*/\1/p' | head -n 1
}
before=$(pk) d0=$(drops)
X a ip addr add "$C4/32" dev eth0
X a /bin/mvnet udp -s "$C4" -p 40000 $S4 7 64 3 >/dev/null 2>&1
after=$(pk) d1=$(drops)
check "a packet from a with c's offloaded tuple does not ride c's flow (c's packets $before -> $after)" \
	test -n "$before" -a "$before" = "$after"
check "the anti-spoofing rule dropped the 3 ($d0 -> $d1)" test $((${d1:-0} - ${d0:-0})) -ge 3
X a ip addr del "$C4/32" dev eth0

# ---- 3. a metered sandbox is never offloaded; its quota still cuts -----------
X m /bin/mvnet stream $S4 5008 1000000 3 >"$W/s3" 2>&1 &
P=$!
sleep 2
check_fail "metered: its connection is not offloaded" offloaded "$M4" tcp 5008
wait $P
check "metered: 1,000,000 bytes under its 3M quota arrive" test $? = 0
X m /bin/mvnet stream $S4 5008 6000000 3 >"$W/s4" 2>&1
rc=$?
check "metered: a stream past the quota is cut ($(tr '\n' ' ' <"$W/s4"))" test "$rc" = 3

# ---- 4. deleting a sandbox cuts its offloaded flow --------------------------------
X c /bin/mvnet stream $S4 5004 20000000 10 >"$W/s5" 2>&1 &
P=$!
check "delete: c's long stream is offloaded" offloaded "$C4" tcp 5004
netd sandbox delete c >/dev/null
wait $P
rc=$?
check "delete: the stream stops ($(tr '\n' ' ' <"$W/s5"))" test "$rc" != 0

# ---- 5. a reload that removes the name cuts the offloaded flow; another stays --
check "reload: a resolves big.test through netd" X a nslookup big.test 10.87.0.1
X a /bin/mvnet stream $S4 5002 30000000 12 >"$W/s6" 2>&1 &
P6=$!
X a /bin/mvnet stream $S4 5005 6000000 8 >"$W/s7" 2>&1 &
P7=$!
check "reload: the stream to big.test is offloaded" offloaded "$A4" tcp 5002
sed -i '/domains: \[big.test\]/,+2d' "$W/policies/open.yaml"
out=$(netd policy reload 2>&1)
check "reload: it cuts a's connection to big.test" has "$out" '"connections_cut":1'
wait $P6
rc6=$?
check "reload: the stream to the removed name stops ($(tr '\n' ' ' <"$W/s6"))" test "$rc6" != 0
wait $P7
check "reload: the stream to the address still allowed runs to its end" test $? = 0

# ---- 6. a reload that gives a sandbox a quota takes it off the flowtable ------
X b /bin/mvnet stream $S4 5006 8000000 8 >"$W/s8" 2>&1 &
P=$!
check "quota later: b's stream is offloaded" offloaded "$B4" tcp 5006
echo 'limits: { egress_bytes: 1G, on_exceed: cut }' >>"$W/policies/later.yaml"
check "quota later: netd policy reload" netd policy reload
check "quota later: b's interface left the flowtable" lacks "$(ft_devs)" "$(ifn b)"
qused() { H nft list quota inet netd q-b | sed -n 's/.*used \([0-9]*\) bytes.*/\1/p'; }
sleep 1
u1=$(qused)
sleep 1
u2=$(qused)
check "quota later: its quota counts what it sends now ($u1 -> $u2 bytes)" \
	test -n "$u1" -a -n "$u2" -a "${u2:-0}" -gt "${u1:-0}"
wait $P
check "quota later: the reload did not cut the stream" test $? = 0

# ---- 7. a restart keeps the flowtable and its devices -----------------------------
kill -TERM $NETD
wait $NETD
netd_start
check "restart: the flowtable has a's and d's interfaces again" has "$(ft_devs)" eth0 "$(ifn a)" "$(ifn d)"
check "restart: not b's (metered now)" lacks "$(ft_devs)" "$(ifn b)"
X d /bin/mvnet stream $S4 5007 4000000 3 >"$W/s9" 2>&1 &
P=$!
check "restart: a new connection is offloaded" offloaded "$D4" tcp 5007
wait $P
check "restart: its bytes arrive" test $? = 0

kill -TERM $NETD
wait $NETD
check "netd exited cleanly" test $? = 0
kill $PIDS 2>/dev/null

# ---- 8. at size: 1,100 sandboxes, two shards (the fw driver, a netns of its own) --
# Marks 1..1100 (slot + 1, as netd gives them): shard 0 takes 1..1023, shard
# 1 the other 77.  Their interfaces are dummies; ftsync registers them.
N=1100
ip netns add fws
for ((i = 0; i < N; i++)); do printf 'link add s%x type dummy\n' $i; done >"$W/links"
ip -n fws -batch "$W/links" || die "dummies"
drv() { ip netns exec fws /opt/w/bin/fw_golden; }
out=$(printf '%s\n' "opt flowtable=3" "open netd 5300 - 10.88.0.0/16 -" "opt ct_mark=1" \
	"addmany s $N tcp:198.51.100.0/24:443" ftsync | drv)
check "at size: $N sandboxes added and synced ($(echo $out))" test "$(echo $out)" = "ok ok ok ok ok"
fts=$(ip netns exec fws nft list flowtables)
check "at size: nft can list the flowtables (each fits a dump)" test -n "$fts"
check "at size: ... and the whole ruleset" ip netns exec fws nft list ruleset
# ndevs FT: how many devices flowtable FT of the fws world has, from a dump
# (`nft list flowtable inet netd FT` is one GET, whose answer must fit a
# page: the kernel cannot send one for a flowtable of ~180 devices or more)
ndevs() {
	ip netns exec fws nft list flowtables | tr -d ' \t\n' |
		sed -n "s/.*flowtable$1{\([^}]*\)}.*/\1/p" |
		sed -n 's/.*devices={\(.*\)/\1/p' | tr ',' '\n' | grep -c .
}
n0=$(ndevs ft-0) n1=$(ndevs ft-1)
check "at size: ft-0 has 1,023 devices, ft-1 the other 77 ($n0, $n1)" test "$n0" = 1023 -a "$n1" = 77
fl1=$(ip netns exec fws nft list map inet netd flow_fwd | grep -o 'jump fl-1' | wc -l)
check "at size: flow_fwd sends those 77 to fl-1 ($fl1)" test "$fl1" = 77
out=$(printf '%s\n' "opt flowtable=3" "open netd 5300 - 10.88.0.0/16 -" "opt ct_mark=1" \
	"addmany s $N tcp:198.51.100.0/24:443" "opt quota=1000000" \
	"updatemany s $N tcp:198.51.100.0/24:443" ftsync | drv)
check "at size: a reload giving all $N a quota, synced ($(echo $out))" test "$(echo $out)" = "ok ok ok ok ok ok ok"
n0=$(ndevs ft-0)
check "at size: ... takes every sandbox's interface out of the flowtable ($n0 left)" test "$n0" = 0
ip netns del fws
if [ "$MVTEST_FAILS" != 0 ]; then
	echo "--- netd's log (tail):"
	tail -n 40 "$W/netd.log"
fi
[ "$MVTEST_FAILS" = 0 ]
