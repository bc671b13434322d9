#!/usr/bin/env bash
# microvm_tap - a real microVM on a netd tap sandbox.  netd creates the tap
# for an unprivileged user; QEMU (-M microvm, Debian's cloud kernel, busybox;
# tests/microvm/) runs as that user and boots a guest configured from the
# sandbox's own fields (kernel_ip_arg, mac, guest_ipv6, mtu).  From inside the
# guest: an allowed name resolves and an HTTP fetch works; a denied name
# gets NXDOMAIN; an unpinned address does not connect; DNS sent to another
# resolver still lands on the proxy; a spoofed source address and a spoofed
# MAC are dropped; IPv6 works the same way; exact-size UDP under a CIDR rule.
# Then the audit log shows the guest's DNS decisions and its connections
# with their bytes; another user cannot open the tap; delete removes it all.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_microvm.sh
mv_need

world_up "nmv$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$WORLD_DIR/policies"
cp policies/*.yaml "$WORLD_DIR/policies/"
cat >"$WORLD_DIR/policies/mv-http.yaml" <<'YAML'
name: mv-http
egress:
  - domains: [pypi.org, files.pythonhosted.org]
    ports: [80]
  - cidrs: [198.51.100.7/32]
    ports: [9999]
    protocol: udp
YAML
NETD_POLICIES=$WORLD_DIR/policies
# Short conntrack timeouts in the world's host netns only, so the flows'
# records are written soon after they end.
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 \
	net.netfilter.nf_conntrack_udp_timeout=1 \
	net.netfilter.nf_conntrack_udp_timeout_stream=2 2>/dev/null
world__start inet udpecho "$WORLD_PYTHON" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.7", 9999))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
'
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }

vmm_uid=64201 other_uid=64202
SB=$(sb_name vm1)
out=$(netd sandbox create "$SB" --policy mv-http --tap --tap-owner "$vmm_uid:$vmm_uid" --json 2>&1)
ok "tap sandbox created" jq -e . <<<"$out"
j() { jq -r ".$1 // empty" <<<"$out"; }
TAP=$(j tap) GUEST=$(j guest_ipv4) GW=$(j gateway_ipv4) MAC=$(j mac) IPARG=$(j kernel_ip_arg)
GUEST6=$(j guest_ipv6) GW6=$(j gateway_ipv6) MTU=$(j mtu)
eq "kind is tap" tap "$(j kind)"
ok "the tap is named ndtXXXX" grep -qE '^ndt[0-9a-f]{4}$' <<<"$TAP"
eq "kernel_ip_arg names the guest, gateway and /30" \
	"ip=$GUEST::$GW:255.255.255.252::eth0:off" "$IPARG"
ok "mac is locally administered unicast" grep -qE '^[0-9a-f][26ae](:[0-9a-f]{2}){5}$' <<<"$MAC"
eq "dns is the gateways" "$GW $GW6" "$(jq -r '.dns | join(" ")' <<<"$out")"
eq "mtu" 1500 "$MTU"
link=$(world_exec host ip -d link show "$TAP" 2>&1)
has "the tap exists in netd's netns, persistent" "tun type tap pi off vnet_hdr on persist on" "$link"
has "... owned by the VMM's user and group" "user $vmm_uid group $vmm_uid" "$link"
has "... with the gateway address" "inet $GW/30" "$(world_exec host ip addr show dev "$TAP")"
list=$(netd sandbox list)
has "sandbox list shows the tap" "$TAP" "$(grep -F "$SB" <<<"$list")"
eq "... as kind tap" tap "$(netd sandbox list --json | jq -r --arg n "$SB" '.[] | select(.name == $n) | .kind')"
ok "show --json" jq -e '.kind == "tap"' <<<"$(netd sandbox show "$SB" --json)"

# ---- the guest -------------------------------------------------------------------
SPOOF=10.87.255.250
TAP_HW=$(
	world_exec host ip -o link show "$TAP" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
cat >"$WORLD_DIR/guest.sh" <<GUEST
. /lib/mvtest.sh
check "eth0 has the sandbox's MAC" grep -qx $MAC /sys/class/net/eth0/address
check "an allowed name resolves (through the proxy)" retry 3 sh -c 'nslookup -type=a pypi.org | grep -q "Address: 198.51.100.10"'
check "an HTTP fetch of an allowed name works" sh -c 'timeout 20 wget -q -O /tmp/body http://pypi.org/bytes/40000 && [ \$(wc -c </tmp/body) = 40000 ]'
check "a denied name gets NXDOMAIN" sh -c 'nslookup -type=a example.com 2>&1 | grep -q NXDOMAIN'
check_fail "a direct connection to an unpinned address fails" mvnet tcp 203.0.113.66 80
check "nslookup to another resolver lands on the proxy (a denied name: NXDOMAIN)" \\
	sh -c 'nslookup -type=a example.com 192.0.2.53 2>&1 | grep -q NXDOMAIN'
check "nslookup to an address with no resolver at all is answered (by the proxy)" \\
	sh -c 'nslookup -type=a pypi.org 203.0.113.99 | grep -q "Address: 198.51.100.10"'
check "the pinned address connects from the guest's own address" mvnet tcp 198.51.100.10 80
ip addr add $SPOOF/32 dev eth0
check_fail "the same connection from a spoofed source address is dropped" mvnet tcp -s $SPOOF 198.51.100.10 80
ip addr del $SPOOF/32 dev eth0
# (virtio-net changes its MAC live: the routes stay; the neighbour entry of
# the gateway is flushed so ARP runs again from the new address.)
ip link set eth0 address 02:00:5e:00:53:99
ip neigh flush dev eth0
check "the guest's MAC is now another" grep -qx 02:00:5e:00:53:99 /sys/class/net/eth0/address
check_fail "ARP from a spoofed MAC gets no answer" arping -c 1 -w 2 -I eth0 $GW
check_fail "a connection from a spoofed MAC is dropped (gateway unresolved)" mvnet tcp 198.51.100.10 80
# The gateway's MAC known without ARP: IP frames from the spoofed MAC reach the tap.
check "the gateway's MAC entered by hand" arp -i eth0 -s $GW $TAP_HW
check_fail "IP frames from a spoofed MAC are dropped" mvnet tcp 198.51.100.10 80
arp -i eth0 -d $GW
ip link set eth0 address $MAC
ip neigh flush dev eth0
check "ARP from the sandbox's MAC is answered" arping -c 1 -w 2 -I eth0 $GW
check "... and the connection works again" mvnet tcp 198.51.100.10 80
check "IPv6: files.pythonhosted.org has an AAAA (through the proxy)" retry 3 sh -c 'nslookup -type=aaaa files.pythonhosted.org | grep -q "2001:db8:20::20"'
check "IPv6: the pinned address connects" mvnet tcp 2001:db8:20::20 80
check_fail "IPv6: an unpinned address does not" mvnet tcp 2001:db8:53::53 80
check "UDP under the CIDR rule: 3 x 100 bytes echoed" sh -c '[ "\$(mvnet udp 198.51.100.7 9999 100 3)" = 300 ]'
exit \$MVTEST_FAILS
GUEST
rc=0
mv_boot "$WORLD_HOST_NS" "$WORLD_DIR/console" --tap "$TAP" --mac "$MAC" --ip "$IPARG" \
	--append "netd.ip6=$GUEST6/126 netd.gw6=$GW6 netd.mtu=$MTU" --as "$vmm_uid:$vmm_uid" \
	--script "$WORLD_DIR/guest.sh" --timeout 170 || rc=$?
mv_results "$WORLD_DIR/console" "guest"
eq "the guest's checks all passed" 0 "$rc"

# ---- what netd recorded ------------------------------------------------------------
# wait_record N FILTER... - until N records match every FILTER (fixed strings).
wait_record() {
	local want=$1 i out
	shift
	for ((i = 0; i < 100; i++)); do
		out=$(audit_grep "$@")
		if [ -n "$out" ] && [ "$(wc -l <<<"$out")" -ge "$want" ]; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.1
	done
	printf '%s\n' "$out"
	return 1
}
field() { jq -r ".$2 // \"null\"" <<<"$1"; }
rec=$(wait_record 1 '"event":"dns"' "\"sandbox\":\"$SB\"" '"qname":"pypi.org"' | head -1)
eq "audit: the guest's pypi.org query, allowed" allow "$(field "$rec" verdict)"
eq "audit: ... from the guest's address" "$GUEST" "$(field "$rec" client)"
rec=$(wait_record 1 '"event":"dns"' "\"sandbox\":\"$SB\"" '"qname":"example.com"' | head -1)
eq "audit: the guest's example.com query, denied" deny "$(field "$rec" verdict)"
# The guest made four connections to pypi.org:80 (one fetch, three probes):
# the fetch is the one that carried the body.
wait_record 4 '"event":"conn"' "\"sandbox\":\"$SB\"" '"dst":"198.51.100.10"' '"dport":80' >/dev/null
rec=$(audit_grep '"event":"conn"' "\"sandbox\":\"$SB\"" '"dst":"198.51.100.10"' '"dport":80' |
	jq -c -s 'max_by(.bytes_in)')
eq "audit: the HTTP fetch's connection, domain pypi.org" pypi.org "$(field "$rec" domain)"
eq "audit: ... from the guest's address" "$GUEST" "$(field "$rec" src)"
bin=$(field "$rec" bytes_in)
bout=$(field "$rec" bytes_out)
# IP + TCP headers and the HTTP response header on top of the 40000-byte body.
ok "audit: ... its bytes_in ($bin) cover the body and little more" \
	test "$bin" -ge 40000 -a "$bin" -le 46000
ok "audit: ... its bytes_out ($bout) are the request and ACKs" test "$bout" -ge 100 -a "$bout" -le 4000
rec=$(wait_record 1 '"event":"conn"' "\"sandbox\":\"$SB\"" '"proto":"udp"' '"dport":9999' | head -1)
eq "audit: the UDP flow's bytes_out = 3 x (100 + 28)" 384 "$(field "$rec" bytes_out)"
eq "audit: the UDP flow's bytes_in = 3 x (100 + 28)" 384 "$(field "$rec" bytes_in)"
eq "audit: the UDP flow's packets_out" 3 "$(field "$rec" packets_out)"
ok "audit: the unpinned address was denied" \
	test -n "$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB\"" '"dst":"203.0.113.66"')"
ok "audit: the spoofed source was denied as a spoof" \
	test -n "$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB\"" '"reason":"spoof"' "\"src\":\"$SPOOF\"")"
ok "audit: the spoofed MAC's packets (from the guest's own address) too" \
	test -n "$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB\"" '"reason":"spoof"' "\"src\":\"$GUEST\"")"
has "nf_tables counted the dropped ARP (table arp netd)" "counter packets" \
	"$(world_exec host nft list chain arp netd input | grep -v 'packets 0 ' | grep tap_arp)"

# ---- another user --------------------------------------------------------------------
rc=0
mv_boot "$WORLD_HOST_NS" "$WORLD_DIR/console2" --tap "$TAP" --mac "$MAC" --ip "$IPARG" \
	--as "$other_uid:$other_uid" --script "$WORLD_DIR/guest.sh" --timeout 60 || rc=$?
eq "another user's VMM cannot open the tap" 98 "$rc"
has "... the kernel refused it" "Operation not permitted" "$(cat "$WORLD_DIR/console2")"

# ---- delete ------------------------------------------------------------------------------
ok "delete" netd sandbox delete "$SB"
fail "the tap is gone" world_exec host ip link show "$TAP"
eq "its jump is gone" "" "$(sb_jump "$TAP")"
eq "its mark element is gone" "" "$(sb_mark "$GUEST")"
fail "its state file is gone" test -e "$WORLD_DIR/state/sandboxes/$SB.json"
netd_down
t_summary
