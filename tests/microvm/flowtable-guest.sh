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
# shellcheck source=guest-netd.sh
. /opt/w/lib/netd.sh
# X SB CMD...: CMD inside sandbox SB (its netns, as netd made it).
X() { local n=$1; shift; ip netns exec "$n" "$@"; }
die() {
	echo "MVTEST FAIL - $*"
	[ -e "$W/netd.log" ] && tail -n 30 "$W/netd.log" | sed "s/^/    log: /"
	exit 1
}

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
# The servers: TCP receivers (uploads) and senders (downloads) on their own
# ports, a UDP echo, DNS for big.test.  What they receive and send is
# counted there too (table inet seen), so a conn record can be checked
# against the packets that really crossed.
PIDS=""
SINKS="5001 5008" SOURCES="5002 6001 6003 6004 6005 6006 6007"
for p in $SINKS; do
	I /bin/mvnet sink $p </dev/null >/dev/null 2>&1 &
	PIDS="$PIDS $!"
done
for p in $SOURCES; do
	case $p in 6001) n=8000000 s=4 ;; 6003) n=4000000 s=3 ;; 6004) n=20000000 s=10 ;;
	5002) n=30000000 s=12 ;; 6006) n=6000000 s=8 ;; *) n=4000000 s=3 ;; esac
	I /bin/mvnet source $p $n $s </dev/null >/dev/null 2>&1 &
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
I nft add chain inet seen out '{ type filter hook output priority -300; }'
for p in $SINKS; do I nft add rule inet seen in tcp dport $p counter; done
for p in $SOURCES; do I nft add rule inet seen out tcp sport $p counter; done
# seen_bytes PORT: bytes that crossed the server's end of the connections on PORT
seen_bytes() {
	I nft list table inet seen |
		sed -n "s/.*[sd]port $1 counter packets [0-9]* bytes \([0-9]*\).*/\1/p"
}

# policy NAME [LIMITS_LINE]: the servers' ports by address, and big.test by name.
policy() {
	{
		echo "name: $1"
		echo "egress:"
		echo "  - cidrs: [$S4/32, $S6/128]"
		echo "    ports: [5001, 5008, 6001, 6003, 6004, 6005, 6006, 6007]"
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
guest_netd_config debug
# netd is the ASan+UBSan build; a guest has no use for its leak check at exit
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
guest_netd_start

# has TEXT WORD...: every WORD is a word of TEXT; lacks TEXT WORD: it is not.
has() {
	local t=$1 w
	shift
	for w; do echo "$t" | grep -qw -- "$w" || { echo "no '$w' in: $t"; return 1; }; done
}
lacks() { ! echo "$1" | grep -qw -- "$2"; }

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
ft=$(H nft list flowtable inet netd ft)
check "flowtable ft: hook ingress, the counter flag" has "$ft" ingress counter
devs=$(echo "$ft" | grep devices)
check "its one device is the egress interface" has "$devs" eth0
for sb in a m; do
	check "no sandbox's interface is one ($sb: $(ifn $sb))" lacks "$devs" "$(ifn $sb)"
done
check "forward offloads replies to sandboxes" \
	has "$(H nft list chain inet netd forward | grep 'flow add @ft')" 'ct direction reply' sandbox_ifs

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
# conn_field SRC DPORT FIELD: FIELD (bytes_in, bytes_out) of the audit conn record of
# SRC's connection to DPORT (waits 20 s for it)
conn_field() {
	local i l
	for i in $(seq 200); do
		l=$(grep '"event":"conn"' "$W/audit.jsonl" 2>/dev/null | grep "\"src\":\"$1\"" |
			grep "\"dport\":$2," | tail -n 1)
		if [ -n "$l" ]; then
			echo "$l" | sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
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

# ---- 1. a download is offloaded, and its conn record counts every byte ---------
# flow_check WHAT SRC DPORT FIELD CMD...: CMD (from sandbox SRC to DPORT) in the
# background is offloaded, runs to its end, and its conn record's FIELD is
# what crossed the server's end of it
flow_check() {
	local what=$1 src=$2 port=$3 field=$4 pid rc b s
	shift 4
	"$@" >"$W/flow.out" 2>&1 &
	pid=$!
	check "$what: the connection is offloaded ([OFFLOAD] in conntrack)" offloaded "$src" tcp "$port"
	wait $pid
	rc=$?
	check "$what: all bytes arrive ($(tr '\n' ' ' <"$W/flow.out"))" test "$rc" = 0
	b=$(conn_field "$src" "$port" "$field") s=$(seen_bytes "$port")
	check "$what: its conn record's $field ($b) is what crossed the server's end ($s) within 1%" \
		within_1pct "$b" "$s"
}
flow_check "IPv4 download" "$A4" 6001 bytes_in X a /bin/mvnet pull $S4 6001 8000000
flow_check "IPv6 download" "$A6" 6003 bytes_in X a /bin/mvnet pull $S6 6003 4000000
flow_check "upload (its replies, the ACKs, offloaded)" "$A4" 5001 bytes_out \
	X a /bin/mvnet stream $S4 5001 4000000 3

# ---- 2. UDP, and a spoofed copy of an offloaded flow from another sandbox --------
check "UDP: 20 echoes from c, source port 40000" X c /bin/mvnet udp -p 40000 $S4 7 64 20
check "UDP: the flow is offloaded" offloaded "$C4" udp 7
pk() {
	H conntrack -L -p udp --orig-src "$C4" --orig-port-src 40000 -o extended 2>/dev/null |
		sed -n 's/.*packets=\([0-9]*\).*/\1/p' | head -n 1
}
drops() {
	H nft list chain inet netd sandbox_raw | grep 'meta nfproto ipv4 counter' |
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

# ---- 3. a metered sandbox: its quota counts every byte it sends, and cuts ---------
# qused SB: bytes SB's quota has counted, from the JSON (the text listing
# says "used 1323 kbytes" when the count is a multiple of 1024)
qused() { H nft -j list quota inet netd "q-$1" | sed -n 's/.*"used": \([0-9]*\).*/\1/p'; }
X m /bin/mvnet stream $S4 5008 1000000 3 >"$W/s3" 2>&1 &
P=$!
check "metered: its connection's replies are offloaded" offloaded "$M4" tcp 5008
wait $P
check "metered: 1,000,000 bytes under its 3M quota arrive" test $? = 0
u=$(qused m) s=$(seen_bytes 5008)
check "metered: its quota counted what reached the server ($u, $s bytes)" within_1pct "$u" "$s"
X m /bin/mvnet stream $S4 5008 6000000 3 >"$W/s4" 2>&1
rc=$?
check "metered: a stream past the quota is cut ($(tr '\n' ' ' <"$W/s4"))" test "$rc" = 3

# ---- 4. deleting a sandbox cuts its offloaded flow --------------------------------
X c /bin/mvnet pull $S4 6004 20000000 >"$W/p5" 2>&1 &
P=$!
check "delete: c's long download is offloaded" offloaded "$C4" tcp 6004
netd sandbox delete c >/dev/null
wait $P
rc=$?
check "delete: the download stops ($(tr '\n' ' ' <"$W/p5"))" test "$rc" != 0

# ---- 5. a reload that removes the name cuts the offloaded flow; another stays --
check "reload: a resolves big.test through netd" X a nslookup big.test 10.87.0.1
X a /bin/mvnet pull $S4 5002 30000000 >"$W/p6" 2>&1 &
P6=$!
X a /bin/mvnet pull $S4 6005 4000000 >"$W/p7" 2>&1 &
P7=$!
check "reload: the download from big.test is offloaded" offloaded "$A4" tcp 5002
sed -i '/domains: \[big.test\]/,+2d' "$W/policies/open.yaml"
out=$(netd policy reload 2>&1)
check "reload: it cuts a's connection to big.test" has "$out" 'connections cut 1'
wait $P6
rc6=$?
check "reload: the download from the removed name stops ($(tr '\n' ' ' <"$W/p6"))" test "$rc6" != 0
wait $P7
check "reload: the download from the address still allowed runs to its end" test $? = 0

# ---- 6. a reload that gives a sandbox a quota: its offloaded download runs on -----
X b /bin/mvnet pull $S4 6006 6000000 >"$W/p8" 2>&1 &
P=$!
check "quota later: b's download is offloaded" offloaded "$B4" tcp 6006
echo 'limits: { egress_bytes: 1G, on_exceed: cut }' >>"$W/policies/later.yaml"
check "quota later: netd policy reload" netd policy reload
sleep 1
u1=$(qused b)
sleep 1
u2=$(qused b)
check "quota later: its quota counts what it sends from then on ($u1 -> $u2 bytes)" \
	test -n "$u1" -a -n "$u2" -a "${u2:-0}" -gt "${u1:-0}"
wait $P
check "quota later: the reload did not cut the download" test $? = 0

# ---- 7. a restart keeps the flowtable -------------------------------------------
kill -TERM $NETD
wait $NETD
guest_netd_start
check "restart: the flowtable is there with its device" has "$(H nft list flowtable inet netd ft)" eth0
X d /bin/mvnet pull $S4 6007 4000000 >"$W/p9" 2>&1 &
P=$!
check "restart: a new connection is offloaded" offloaded "$D4" tcp 6007
wait $P
check "restart: its bytes arrive" test $? = 0

# ---- 8. the egress interface goes and comes back ---------------------------------
H ip link del eth0
H ip link add eth0 type veth peer name wan0 netns inet
H ip link set eth0 up && I ip link set wan0 up
H ip addr add 192.0.2.1/24 dev eth0
I ip addr add 192.0.2.2/24 dev wan0
H ip route add default via 192.0.2.2
check_fail "gone and back: the kernel dropped it from the flowtable" \
	has "$(H nft list flowtable inet netd ft)" eth0
check "gone and back: a reload puts it back" netd policy reload
check "gone and back: ... it is a device again" has "$(H nft list flowtable inet netd ft)" eth0

kill -TERM $NETD
wait $NETD
check "netd exited cleanly" test $? = 0
check_fail "netd ran clean under ASan/UBSan" grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$W/netd.log"
kill $PIDS 2>/dev/null

# ---- 8b. flowtable: true with no egress interface known: netd refuses to start ----
ip netns add noup
mkdir -p "$W/noup"
sed -e '/^egress_interface:/d' -e "s|$W/netd.sock|$W/noup/s|" -e "s|$W/state|$W/noup/state|" \
	-e "s|$W/audit.jsonl|$W/noup/a|" "$W/netd.yaml" >"$W/noup/netd.yaml"
timeout 20 nsenter --net=/run/netns/noup /opt/w/bin/netd run --config "$W/noup/netd.yaml" \
	</dev/null >"$W/noup/log" 2>&1
rc=$?
check "no egress interface, flowtable: true: netd refuses to start (exit $rc)" \
	test "$rc" != 0 -a "$rc" != 124
check "... and says what is missing" grep -q "knows no egress interface" "$W/noup/log"
ip netns del noup

# ---- 9. at size: 1,100 sandboxes (the fw driver, a netns of its own) ------------
# The flowtable is the same whatever the number of sandboxes: one device,
# one rule; a create adds no device.
N=1100
ip netns add fws
ip -n fws link add up0 type dummy
drv() { ip netns exec fws /opt/w/bin/fw_golden; }
out=$(printf '%s\n' "opt flowtable=3" "open netd 5300 up0 10.88.0.0/16 -" \
	"addmany s $N tcp:198.51.100.0/24:443" ftrefresh | drv 2>&1)
check "at size: $N sandboxes added ($(echo $out))" test "$(echo $out)" = "ok ok ok ok"
check "at size: the ruleset lists" ip netns exec fws nft list ruleset
fts=$(ip netns exec fws nft list flowtables)
check "at size: one flowtable, its one device the egress interface" \
	test "$(echo "$fts" | grep -c 'flowtable ')" = 1 -a -n "$(echo "$fts" | grep 'devices = { up0 }')"
ip netns del fws

if [ "$MVTEST_FAILS" != 0 ]; then
	echo "--- netd's log (tail):"
	tail -n 40 "$W/netd.log"
fi
[ "$MVTEST_FAILS" = 0 ]
