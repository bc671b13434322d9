#!/usr/bin/env bash
# Root in a sandbox (CAP_NET_RAW in its own netns) sends ICMPv6 Router
# Advertisements (RFC 4861 4.2) with a Route Information option (RFC 4191)
# up its veth.  netd's input chain must drop them: a host that routes and
# autoconfigures its uplink from RAs runs with accept_ra=2 (new interfaces,
# the sandbox veths included, inherit net.ipv6.conf.default.accept_ra), and
# an accepted RA installs a default route (and any prefix route) through
# the sandbox into the host's namespace: the host's own and every other
# sandbox's IPv6 traffic, netd's upstream DNS queries included, would then
# be routed to the attacker.  Neighbour Discovery (NS/NA) must keep working.
# Everything stays inside the test world's namespaces.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nra$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
# The host (the world's private host netns) takes RAs while forwarding, as
# an RA-configured router does.  New veths inherit "default".
world_exec host sysctl -q -w net.ipv6.conf.default.accept_ra=2 \
	net.ipv6.conf.default.accept_ra_rt_info_max_plen=64
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)
HIF=$(sb_field "$SB1" host_ifname)
eq "the host side inherited accept_ra=2 (the test's premise)" "2" \
	"$(world_exec host sysctl -n "net.ipv6.conf.$HIF.accept_ra")"

# The RA's source must be the sandbox's link-local address (RFC 4861 6.1.2):
# wait until its DAD is done.
for ((i = 0; i < 100; i++)); do
	ll=$(ip -n "$SB1" -6 addr show dev eth0 scope link | grep inet6 || true)
	[ -n "$ll" ] && ! grep -q tentative <<<"$ll" && break
	sleep 0.1
done
has "the sandbox has a link-local address" "fe80::" "$ll"
ip netns exec "$SB1" "$WORLD_PYTHON" - eth0 <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
# type 134, router lifetime 1800 s; Route Information 2001:db8:bad::/48
ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 1800, 0, 0)
rio = struct.pack("!BBBBI", 24, 3, 48, 0, 1800) + socket.inet_pton(socket.AF_INET6, "2001:db8:bad::")
idx = socket.if_nametoindex(sys.argv[1])
for dst in ("ff02::1", "ff02::2"):
    for _ in range(3):
        s.sendto(ra + rio, (dst, 0, 0, idx))
PY
sleep 1
routes=$(world_exec host ip -6 route show)
hasnt "no default route through the sandbox in the host netns" "dev $HIF proto ra" "$routes"
hasnt "no RA-learned prefix route (2001:db8:bad::/48) in the host netns" "2001:db8:bad::" "$routes"
eq "the host's default route is still the uplink's alone" "1" \
	"$(world_exec host ip -6 route show default | grep -c .)"

# Neighbour Discovery still works: an IPv6 connection to an allowed name.
eq "IPv6 to an allowed name still connects (NS/NA pass)" "files.pythonhosted.org ok" \
	"$(sb_curl sb1 -6 https://files.pythonhosted.org/)"
ok "netd alive" netd_alive
netd_down
world_down
t_summary
