#!/usr/bin/env bash
# microvm_boot - the microVM harness itself, no netd: a real guest (Debian's
# cloud kernel + busybox, QEMU -M microvm) boots on a tap in a private netns,
# configures eth0 from its kernel command line, and reaches a host-side
# address there (ping over IPv4 and IPv6, an HTTP fetch with a token only
# the host knows).  The VMM runs as an unprivileged user that owns the tap;
# another user cannot attach to it.  Nothing outside the namespace is
# touched: its tap carries only 198.51.100.0/30 and 2001:db8:100::/126.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/integ/lib_netd.sh
. tests/integ/lib_microvm.sh
mv_need
[ "$(id -u)" = 0 ] || { echo "FAIL - needs root"; echo "0 passed, 1 failed"; exit 1; }

ns=mvboot-$$
tap=mvb$$
dir=$(mktemp -d "/tmp/$ns.XXXXXX")
chmod 755 "$dir"
web_pid="" udp_pid=""
cleanup() {
	set +e
	if [ -n "$udp_pid" ]; then kill "$udp_pid" 2>/dev/null; wait "$udp_pid" 2>/dev/null; fi
	if [ -n "$web_pid" ]; then kill "$web_pid" 2>/dev/null; wait "$web_pid" 2>/dev/null; fi
	for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid"; done
	ip netns delete "$ns" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

vmm_uid=64101 other_uid=64102
ip netns add "$ns"
ip -n "$ns" link set lo up
drv() { ip netns exec "$ns" build/asan/integ/tap_driver "$@"; }
eq "tap_create makes the tap" ok "$(drv create "$tap" "$vmm_uid" 1 1400)"
eq "it is a persistent tap owned by the VMM's user, no group" \
	"ok tap=1 persist=1 multi_queue=0 vnet_hdr=1 owner=$vmm_uid group=-1 attached=0 mtu=1400" \
	"$(drv query "$tap")"
eq "a second tap_create of that name is refused" "err EEXIST" "$(drv create "$tap" "$other_uid" 1 0)"
eq "... and the tap keeps its owner" "owner=$vmm_uid" "$(drv query "$tap" | grep -o 'owner=[0-9]*')"
eq "an ownerless tap is refused" "err EINVAL" "$(drv create "${tap}x" 4294967295 1 0)"
eq "... and nothing was left behind" "err ENODEV" "$(drv query "${tap}x")"
eq "a multi-queue tap" ok "$(drv create "${tap}q" "$vmm_uid:$vmm_uid" 4 0)"
has "... is multi-queue, with owner and group" "multi_queue=1 vnet_hdr=1 owner=$vmm_uid group=$vmm_uid" \
	"$(drv query "${tap}q")"
eq "tap_delete removes it" "ok" "$(drv delete "${tap}q")"
eq "... it is gone" "err ENODEV" "$(drv query "${tap}q")"
ip -n "$ns" addr add 198.51.100.1/30 dev "$tap"
ip -n "$ns" addr add 2001:db8:100::1/126 dev "$tap" nodad
ip -n "$ns" link set "$tap" up

token=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir "$dir/www"
echo "token $token" >"$dir/www/token"
ip netns exec "$ns" python3 -m http.server --bind 198.51.100.1 --directory "$dir/www" 8080 \
	</dev/null >"$dir/web.log" 2>&1 &
web_pid=$!
ip netns exec "$ns" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", 9999))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
' </dev/null >"$dir/udp.log" 2>&1 &
udp_pid=$!
for ((i = 0; i < 100; i++)); do
	ip netns exec "$ns" python3 -c 'import socket; socket.create_connection(("198.51.100.1", 8080), 1)' \
		2>/dev/null && break
	sleep 0.1
done

mac=02:6e:64:00:00:01
cat >"$dir/guest.sh" <<GUEST
. /lib/mvtest.sh
check "eth0 has the MAC the VMM was given" grep -qx $mac /sys/class/net/eth0/address
check "eth0 has the address from ip=" sh -c 'ip -4 addr show dev eth0 | grep -q "inet 198.51.100.2/30"'
check "eth0 has the MTU from netd.mtu=" grep -qx 1400 /sys/class/net/eth0/mtu
check_fail "an address beyond the host side does not answer" ping -c 1 -W 2 203.0.113.99
check "the default route points at the gateway" sh -c 'ip route | grep -q "default via 198.51.100.1"'
check "resolv.conf names the gateway" grep -qx 'nameserver 198.51.100.1' /etc/resolv.conf
check "ping the host side (IPv4)" ping -c 2 -W 3 198.51.100.1
check "ping the host side (IPv6)" ping -6 -c 2 -W 3 2001:db8:100::1
check "HTTP fetch from the host side" sh -c 'timeout 15 wget -q -O - http://198.51.100.1:8080/token | grep -qx "token $token"'
check "UDP echo of 3 x 100 bytes (mvnet)" sh -c '[ "\$(mvnet udp 198.51.100.1 9999 100 3)" = 300 ]'
check "TCP connect (mvnet)" mvnet tcp 198.51.100.1 8080
check "TCP connect from a chosen source (mvnet -s)" mvnet tcp -s 198.51.100.2 198.51.100.1 8080
check_fail "TCP connect to a closed port fails (mvnet)" mvnet tcp 198.51.100.1 8081
exit \$MVTEST_FAILS
GUEST

ipa="ip=198.51.100.2::198.51.100.1:255.255.255.252::eth0:off"
rc=0
mv_boot "$ns" "$dir/console" --tap "$tap" --mac "$mac" --ip "$ipa" --as "$vmm_uid:$vmm_uid" \
	--append "netd.ip6=2001:db8:100::2/126 netd.gw6=2001:db8:100::1 netd.mtu=1400" \
	--script "$dir/guest.sh" --timeout 150 || rc=$?
mv_results "$dir/console" "guest"
eq "the guest's script ended with status 0" 0 "$rc"
has "the guest fetched the token" '"GET /token HTTP/1.1" 200' "$(cat "$dir/web.log")"

# Another user: QEMU cannot attach to a tap it does not own (TUNSETIFF EPERM),
# even with a /dev/net/tun it may open.
rc=0
mv_boot "$ns" "$dir/console2" --tap "$tap" --ip "$ipa" --as "$other_uid:$other_uid" \
	--script "$dir/guest.sh" --timeout 60 || rc=$?
eq "another user's VMM does not start on the tap" 98 "$rc"
has "... because the tap refused it" "Operation not permitted" "$(cat "$dir/console2")"
eq "tap_delete removes the guest's tap" ok "$(drv delete "$tap")"
eq "... and deleting it again is not an error" ok "$(drv delete "$tap")"
t_summary
