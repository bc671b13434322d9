#!/bin/bash
# link_netlink.sh - integration test of netd/link/link.c and netd/link/nsexec.c.
#
# Everything happens in a private world: a throwaway "host" netns
# (ndlink-PID) in which the driver runs via nsenter --net (which keeps the
# root mount namespace, so the /run/netns bind mounts the driver makes are
# visible to `ip netns`), plus sandbox netns the driver itself creates.
# Nothing touches the machine's own netns.  An EXIT trap removes every
# namespace, link and /etc/netns entry made here.  Needs root, ip, ping.
# Ends with "N passed, N failed"; exit status non-zero if any failed.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/asan/integ
DRV=$OUT/link_driver	# built by make asan / make integ

HOSTNS=ndlink-$$
SB=ndlsb-$$		# made by the driver
SB2=ndlsb2-$$		# made by the driver, IPv6 disabled (failure path)
SB3=ndlsb3-$$		# made by the driver in a private mount namespace
VH=ndv$$
VH2=ndw$$
VH3=ndx$$
MARK="ndlink-test-$$"

pass=0
fail=0

cleanup() {
	local n
	for n in "$SB" "$SB2" "$SB3" "$HOSTNS"; do
		if [ -e "/run/netns/$n" ]; then
			ip netns delete "$n" 2>/dev/null ||
				{ umount -l "/run/netns/$n" 2>/dev/null; rm -f "/run/netns/$n"; }
		fi
		rm -rf "/etc/netns/$n"
	done
	rmdir /etc/netns 2>/dev/null || true
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "ok   - $*"; }
ko() { fail=$((fail + 1)); echo "FAIL - $*"; }

# check DESC CMD...: CMD's exit status decides.
check() {
	local desc=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$desc"; else ko "$desc"; fi
}
# expect DESC WANT CMD...: CMD's stdout (last line) must equal WANT.
expect() {
	local desc=$1 want=$2 got; shift 2
	got=$("$@" 2>&1 | tail -n 1)
	if [ "$got" = "$want" ]; then ok "$desc"; else ko "$desc: want '$want', got '$got'"; fi
}
# contains DESC REGEX CMD...: CMD's output must match REGEX.
contains() {
	local desc=$1 re=$2 out; shift 2
	out=$("$@" 2>&1)
	if grep -Eq -- "$re" <<<"$out"; then ok "$desc"; else ko "$desc: /$re/ not in: $out"; fi
}
lacks() {
	local desc=$1 re=$2 out; shift 2
	out=$("$@" 2>&1)
	if grep -Eq -- "$re" <<<"$out"; then ko "$desc: /$re/ found in: $out"; else ok "$desc"; fi
}

D() { nsenter --net="/run/netns/$HOSTNS" "$DRV" "$@"; }	# driver in the host netns
DS() { nsenter --net="/run/netns/$SB" "$DRV" "$@"; }	# driver in the sandbox

if [ "$(id -u)" != 0 ]; then echo "link_netlink.sh: needs root" >&2; exit 1; fi
for t in ip ping nsenter; do
	command -v $t >/dev/null || { echo "link_netlink.sh: needs $t" >&2; exit 1; }
done

[ -x "$DRV" ] || { echo "missing $DRV: run make asan first"; echo "0 passed, 1 failed"; exit 1; }

ip netns add "$HOSTNS" || exit 1
ip -n "$HOSTNS" link set lo up
# "Internet" addresses local to the host netns, reachable from the sandbox
# only through its default routes.
ip -n "$HOSTNS" addr add 192.0.2.1/32 dev lo
ip -n "$HOSTNS" addr add 2001:db8::1/128 dev lo

root_ino=$(stat -L -c %i /proc/self/ns/net)
host_ino=$(stat -L -c %i "/run/netns/$HOSTNS")

# ---- named netns ---------------------------------------------------------
expect "netns create" "ok 0" D netns-create "$SB"
contains "ip netns list shows it" "^$SB( |\$)" ip netns list
check "ip netns exec NAME ip link works" ip netns exec "$SB" ip link show lo
sb_ino=$(stat -L -c %i "/run/netns/$SB" 2>/dev/null)
if [ -n "$sb_ino" ] && [ "$sb_ino" != "$root_ino" ] && [ "$sb_ino" != "$host_ino" ]; then
	ok "netns is a new netns"
else
	ko "netns is a new netns ($sb_ino vs root $root_ino host $host_ino)"
fi
expect "netns create twice -> EEXIST" "err EEXIST" D netns-create "$SB"
check "netns still usable after EEXIST" ip netns exec "$SB" true
expect "netns name with / -> EINVAL" "err EINVAL" D netns-create "a/b"
expect "netns name .. -> EINVAL" "err EINVAL" D netns-create ".."
expect "netns name 65 bytes -> EINVAL" "err EINVAL" D netns-create "$(printf 'n%.0s' {1..65})"
expect "netns open" "ok 0" D netns-open "/run/netns/$SB"
expect "netns open /proc/PID/ns/net" "ok 0" D netns-open /proc/self/ns/net
expect "netns open of a plain file -> EINVAL" "err EINVAL" D netns-open /etc/hostname
expect "netns open missing -> ENOENT" "err ENOENT" D netns-open "/run/netns/none-$$"

# /run/netns not yet a mount point (fresh boot): it must be bound on itself
# and made shared, as iproute2 does.  Done in a private mount namespace so
# the machine's mounts are not touched; the netns is deleted in there too.
prop=$(unshare --mount --propagation private sh -c "
	while umount -l /run/netns 2>/dev/null; do :; done
	findmnt -n --mountpoint /run/netns >/dev/null && exit 1
	$DRV netns-create $SB3 >/dev/null || exit 1
	findmnt -n -o PROPAGATION --mountpoint /run/netns | head -n 1
	ip netns exec $SB3 true || exit 1
	$DRV netns-delete $SB3 >/dev/null")
if [ "$prop" = "shared" ]; then ok "run dir made a shared mount"; else ko "run dir made a shared mount: '$prop'"; fi
check "no file left by the private-mount test" test ! -e "/run/netns/$SB3"

# ---- veth ----------------------------------------------------------------
expect "veth setup" "ok 0" D veth "$VH" eth0 "/run/netns/$SB" \
	10.87.0.1/30 10.87.0.2/30 fd00:87::1/64 fd00:87::2/64
contains "host end has 10.87.0.1/30" "inet 10\.87\.0\.1/30 " ip -n "$HOSTNS" -o addr show dev "$VH"
contains "host end has fd00:87::1/64" "inet6 fd00:87::1/64 " ip -n "$HOSTNS" -o addr show dev "$VH"
# (the kernel's own fe80:: address does DAD; ours must not)
lacks "host v6 not tentative" "tentative" ip -n "$HOSTNS" -6 -o addr show dev "$VH" scope global
contains "host end is up" "state UP" ip -n "$HOSTNS" link show dev "$VH"
contains "peer has 10.87.0.2/30" "inet 10\.87\.0\.2/30 " ip -n "$SB" -o addr show dev eth0
contains "peer has fd00:87::2/64" "inet6 fd00:87::2/64 " ip -n "$SB" -o addr show dev eth0
lacks "peer v6 not tentative" "tentative" ip -n "$SB" -6 -o addr show dev eth0 scope global
contains "peer is up" "state UP" ip -n "$SB" link show dev eth0
contains "sandbox lo is up" "<LOOPBACK,UP" ip -n "$SB" link show dev lo
contains "sandbox v4 default route" "^default via 10\.87\.0\.1 dev eth0" ip -n "$SB" -4 route show default
contains "sandbox v6 default route" "^default via fd00:87::1 dev eth0" ip -n "$SB" -6 route show default
lacks "peer not left in host netns" "eth0" ip -n "$HOSTNS" -o link
check "ping host -> sandbox v4" ip netns exec "$HOSTNS" ping -c 1 -W 2 10.87.0.2
check "ping host -> sandbox v6" ip netns exec "$HOSTNS" ping -6 -c 1 -W 2 fd00:87::2
check "ping sandbox -> host v4" ip netns exec "$SB" ping -c 1 -W 2 10.87.0.1
check "ping sandbox -> host v6" ip netns exec "$SB" ping -6 -c 1 -W 2 fd00:87::1
check "sandbox v4 default route carries traffic" ip netns exec "$SB" ping -c 1 -W 2 192.0.2.1
check "sandbox v6 default route carries traffic" ip netns exec "$SB" ping -6 -c 1 -W 2 2001:db8::1

expect "link exists" "ok 1" D exists "$VH"
expect "link missing" "ok 0" D exists "nope$$"
expect "link name too long -> EINVAL" "err EINVAL" D exists "abcdefghijklmnopq"

# ---- failures leave nothing behind ----------------------------------------
expect "veth with taken host name -> EEXIST" "err EEXIST" D veth "$VH" eth1 "/run/netns/$SB" \
	10.88.0.1/30 10.88.0.2/30 - -
contains "existing host link untouched" "inet 10\.87\.0\.1/30 " ip -n "$HOSTNS" -o addr show dev "$VH"
lacks "no eth1 left in sandbox" "eth1" ip -n "$SB" -o link
expect "veth with taken peer name -> EEXIST" "err EEXIST" D veth "$VH2" eth0 "/run/netns/$SB" \
	10.88.0.1/30 10.88.0.2/30 - -
expect "no host end left after peer clash" "ok 0" D exists "$VH2"

# A failure after the pair exists: IPv6 disabled in the netns, so the v6
# address on the peer is refused; the whole pair must go.
expect "netns create (v6 off)" "ok 0" D netns-create "$SB2"
ip netns exec "$SB2" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6'
contains "veth setup into v6-off netns fails" "^err " D veth "$VH3" eth0 "/run/netns/$SB2" \
	10.89.0.1/30 10.89.0.2/30 fd00:89::1/64 fd00:89::2/64
expect "host end removed after late failure" "ok 0" D exists "$VH3"
lacks "peer removed after late failure" "eth0" ip -n "$SB2" -o link

# ---- dumps ---------------------------------------------------------------
expect "default route ifname in sandbox" "ifname eth0" bash -c "nsenter --net=/run/netns/$SB $DRV default-route | head -n 1"
expect "no default route -> ENOENT" "err ENOENT" D default-route
# A second "uplink" (a veth pair kept inside the host netns).
ip -n "$HOSTNS" link add nduplink type veth peer name nduplink-p
ip -n "$HOSTNS" link set nduplink up
ip -n "$HOSTNS" link set nduplink-p up
ip -n "$HOSTNS" addr add 198.51.100.1/24 dev nduplink
ip -n "$HOSTNS" route add default via 198.51.100.2 dev nduplink metric 200
ip -n "$HOSTNS" route add default via 10.87.0.2 dev "$VH" metric 50
expect "default route: lowest metric wins" "ifname $VH" bash -c "nsenter --net=/run/netns/$HOSTNS $DRV default-route | head -n 1"
ip -n "$HOSTNS" route del default via 10.87.0.2 dev "$VH" metric 50
expect "default route after delete" "ifname nduplink" bash -c "nsenter --net=/run/netns/$HOSTNS $DRV default-route | head -n 1"

addrs=$(DS local-addrs)
for a in 10.87.0.2/32 fd00:87::2/128 127.0.0.1/32 ::1/128; do
	if grep -qx "addr $a" <<<"$addrs"; then ok "local addrs has $a"; else ko "local addrs has $a: $addrs"; fi
done
if grep -q '^addr fe80:' <<<"$addrs"; then ok "local addrs has link-local"; else ko "local addrs has link-local: $addrs"; fi
if grep -q '10.87.0.1' <<<"$addrs"; then ko "local addrs has no host-side address"; else ok "local addrs has no host-side address"; fi
# At size (issue 12: a fixed table of 256 made netd fail to start at ~80
# sandboxes): 1,000 addresses and 300 interfaces, every one listed.
ip -n "$SB" link add ndmany type veth peer name ndmany-p
for ((i = 0; i < 1000; i++)); do
	echo "addr add 10.99.$((i / 250)).$((i % 250 + 1))/32 dev ndmany"
done | ip -n "$SB" -b -
for ((i = 0; i < 150; i++)); do echo "link add ndm$i type veth peer name ndm$i-p"; done | ip -n "$SB" -b -
expect "1,000 addresses listed" "1000" bash -c "nsenter --net=/run/netns/$SB $DRV local-addrs | grep -c '^addr 10\.99\.'"
expect "300 interfaces listed" "300" bash -c "nsenter --net=/run/netns/$SB $DRV names | grep -c '^name ndm[0-9]'"
{ echo "link del ndmany"; for ((i = 0; i < 150; i++)); do echo "link del ndm$i"; done; } | ip -n "$SB" -b -

# ---- forwarding ----------------------------------------------------------
root_fwd4=$(cat /proc/sys/net/ipv4/ip_forward)
root_fwd6=$(cat /proc/sys/net/ipv6/conf/all/forwarding)
ip netns exec "$HOSTNS" sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward; echo 0 > /proc/sys/net/ipv6/conf/all/forwarding'
expect "forwarding v4 only" "ok 0" D forwarding 0
expect "ip_forward=1" "1" ip netns exec "$HOSTNS" cat /proc/sys/net/ipv4/ip_forward
expect "v6 forwarding untouched" "0" ip netns exec "$HOSTNS" cat /proc/sys/net/ipv6/conf/all/forwarding
expect "forwarding v4+v6" "ok 0" D forwarding 1
expect "v6 forwarding=1" "1" ip netns exec "$HOSTNS" cat /proc/sys/net/ipv6/conf/all/forwarding
expect "root ip_forward unchanged" "$root_fwd4" cat /proc/sys/net/ipv4/ip_forward
expect "root v6 forwarding unchanged" "$root_fwd6" cat /proc/sys/net/ipv6/conf/all/forwarding

# ---- nsexec --------------------------------------------------------------
mkdir -p "/etc/netns/$SB"
echo "nameserver 192.0.2.53 # $MARK" >"/etc/netns/$SB/resolv.conf"
echo "not-in-etc $MARK" >"/etc/netns/$SB/ndlink-absent-$$"	# no /etc file: skipped
contains "exec sees /etc/netns/NAME/resolv.conf" "$MARK" D exec "/run/netns/$SB" "$SB" -- cat /etc/resolv.conf
lacks "exec without a name keeps /etc/resolv.conf" "$MARK" D exec "/run/netns/$SB" - -- cat /etc/resolv.conf
lacks "bind mount did not leak to the host" "$MARK" cat /etc/resolv.conf
sysnet=$(D exec "/run/netns/$SB" "$SB" -- ls /sys/class/net | sort | tr '\n' ' ')
if [ "$sysnet" = "eth0 lo " ]; then ok "exec /sys/class/net is the sandbox's"; else ko "exec /sys/class/net: '$sysnet'"; fi
contains "exec runs in the netns" "inet 10\.87\.0\.2/30" D exec "/run/netns/$SB" "$SB" -- ip -o addr show dev eth0
lacks "root /sys/class/net untouched" "^eth0 lo \$" bash -c "ls /sys/class/net | sort | tr '\n' ' '"
D exec "/run/netns/$SB" "$SB" -- sh -c 'exit 7'
if [ $? = 7 ]; then ok "exec status passes through"; else ko "exec status passes through"; fi
expect "exec missing command -> ENOENT" "err ENOENT" D exec "/run/netns/$SB" "$SB" -- /nonexistent-$$
expect "exec into a non-netns -> EINVAL" "err EINVAL" D exec /etc/hostname - -- true

# ---- delete --------------------------------------------------------------
expect "link delete" "ok 0" D delete "$VH"
expect "host end gone" "ok 0" D exists "$VH"
lacks "peer gone with it" "eth0" ip -n "$SB" -o link
expect "link delete missing -> ok" "ok 0" D delete "$VH"
expect "netns delete" "ok 0" D netns-delete "$SB"
lacks "ip netns list no longer shows it" "^$SB( |\$)" ip netns list
check "netns file removed" test ! -e "/run/netns/$SB"
expect "netns delete missing -> ok" "ok 0" D netns-delete "$SB"
expect "netns delete (v6 off)" "ok 0" D netns-delete "$SB2"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
