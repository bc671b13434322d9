#!/usr/bin/env bash
# netd-cni in interface mode delegating addresses to an IPAM plugin (CNI
# spec §4), driven as a runtime drives it: Debian's host-local from
# containernetworking-plugins with its own dataDir under the test dir.
# ADD takes an address from the IPAM range and netd enforces the policy on
# it; a failing netd create and DEL release it; a netd restart keeps it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
IPAM_DIR=/usr/lib/cni
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make build/asan/netd-cni)"; echo "0 passed, 1 failed"; exit 1; }
if [ ! -x "$IPAM_DIR/host-local" ]; then
	skip_loud "host-local missing: apt-get install containernetworking-plugins"
	echo "0 passed, 1 failed"
	exit 1
fi
world_up "ndi$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
TOMB=$WORLD_DIR/state/tombstones
DATA=$WORLD_DIR/ipam
# host-local's records: one file per address, named by it, holding the container ID.
leased() { ls "$DATA/ipamtest" 2>/dev/null | grep -v -e '^last_reserved' -e '^lock$' | sort | tr '\n' ' '; }

# host-local (1.1.1) speaks up to CNI 1.0.0.
conf() {
	printf '{"cniVersion":"1.0.0","name":"ipamtest","type":"netd-cni","socket":"%s","tombstoneDir":"%s","policy":"python-dev","ipam":{"type":"%s","dataDir":"%s","ranges":[[{"subnet":"10.89.0.0/24","rangeStart":"10.89.0.10","rangeEnd":"10.89.0.20"}]]}}' \
		"$NETD_SOCKET" "$TOMB" "${1:-host-local}" "$DATA"
}
cni() {
	OUT=$(nsenter --net="$WORLD_HOST_NETNS" -- env CNI_COMMAND="$1" CNI_CONTAINERID="$2" \
		CNI_NETNS="$3" CNI_IFNAME="$4" CNI_ARGS="" CNI_PATH="/nonexistent:$IPAM_DIR" \
		timeout 60 "$CNI_BIN" 2>"$WORLD_DIR/cni.err")
	RC=$?
}
ns_add() { ip netns add "$WORLD_PREFIX-$1"; }
nsp() { echo "/run/netns/$WORLD_PREFIX-$1"; }
cexec() { local n=$1; shift; timeout 30 ip netns exec "$WORLD_PREFIX-$n" "$@"; }
jqo() { jq -r "$1" <<<"$OUT" 2>&1; }

ns_add c1
C1=$(nsp c1)

# ---- ADD ------------------------------------------------------------------------
cni ADD c1id "$C1" eth0 <<<"$(conf)"
eq "ADD with ipam exits 0" 0 "$RC" || cat "$WORLD_DIR/cni.err"
ADDR=$(jqo '.ips[0].address')
IP=${ADDR%/*}
eq "address comes from the IPAM range, with its prefix length" "10.89.0.10/24" "$ADDR"
eq "gateway is the IPAM gateway" "10.89.0.1" "$(jqo '.ips[0].gateway')"
eq "ips[0].interface points at eth0 in the netns" "eth0 $C1" "$(jqo '.interfaces[.ips[0].interface].name + " " + .interfaces[.ips[0].interface].sandbox')"
eq "dns.nameservers is the gateway" "10.89.0.1" "$(jqo '.dns.nameservers[0]')"
eq "default route via the gateway" "0.0.0.0/0 10.89.0.1" "$(jqo '.routes[0].dst + " " + .routes[0].gw')"
eq "host-local recorded the lease" "10.89.0.10 " "$(leased)"
has "eth0 has the IPAM address and prefix" "inet 10.89.0.10/24" "$(cexec c1 ip -4 addr show eth0)"
has "container default route via the gateway" "default via 10.89.0.1" "$(cexec c1 ip -4 route)"
SB=$(netd sandbox list --json | jq -r '.. | objects | select(.ipv4? == "10.89.0.10") | .name')
has "netd sandbox holds the IPAM address" "cni-" "$SB"
HOST_IF=$(netd sandbox show "$SB" | jq -r .host_ifname)
has "host end of the veth has the gateway, point-to-point" "inet 10.89.0.1 peer 10.89.0.10/32" "$(world_exec host ip -4 addr show "$HOST_IF")"
has "anti-spoof set has the IPAM address" "$HOST_IF\" . 10.89.0.10" "$(world_exec host nft list set inet netd sandbox_src4)"

mkdir -p "/etc/netns/$WORLD_PREFIX-c1"
echo "nameserver 10.89.0.1" >"/etc/netns/$WORLD_PREFIX-c1/resolv.conf"
eq "container: allowed name resolves" 198.51.100.10 "$(cexec c1 dig +time=2 +tries=1 +short pypi.org A)"
eq "container: allowed name connects (masqueraded)" "pypi.org ok" "$(cexec c1 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
eq "container: denied name is NXDOMAIN" "status: NXDOMAIN" "$(cexec c1 dig +time=2 +tries=1 example.com | grep -o 'status: [A-Z]*')"
fail "container: denied address does not connect" cexec c1 curl -sS --cacert "$WORLD_CA" --connect-timeout 3 --resolve example.com:443:203.0.113.66 https://example.com/
fail "container: a spoofed source does not get out" cexec c1 curl -sS --interface 10.89.0.99 --cacert "$WORLD_CA" --connect-timeout 3 --resolve pypi.org:443:198.51.100.10 https://pypi.org/simple/

# ---- CHECK ------------------------------------------------------------------------
cni CHECK c1id "$C1" eth0 <<<"$(conf)"
eq "CHECK (netd and host-local) exits 0" "0:" "$RC:$OUT"
cni CHECK c9id "$C1" eth0 <<<"$(conf)"
has "CHECK of an unknown attachment fails" '"code"' "$OUT"

# ---- a second container gets the next address; both work ----------------------------
ns_add c2
C2=$(nsp c2)
cni ADD c2id "$C2" eth0 <<<"$(conf)"
eq "second ADD: next address of the range" "0 10.89.0.11/24" "$RC $(jqo '.ips[0].address')"
mkdir -p "/etc/netns/$WORLD_PREFIX-c2"
echo "nameserver 10.89.0.1" >"/etc/netns/$WORLD_PREFIX-c2/resolv.conf"
eq "container 2 reaches an allowed host" "pypi.org ok" "$(cexec c2 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
eq "container 1 still reaches it" "pypi.org ok" "$(cexec c1 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"

# ---- netd refuses the create: the IPAM address is released -----------------------------
ns_add bad
ip -n "$WORLD_PREFIX-bad" link add extra0 type veth peer name extra1
cni ADD badid "$(nsp bad)" eth0 <<<"$(conf)"
eq "ADD into a netns with another interface fails (netd refuses)" "1 101" "$RC $(jqo .code)"
has "... saying why" "already has interface" "$(jqo .details)"
eq "the failed ADD released its IPAM address" "10.89.0.10 10.89.0.11 " "$(leased)"

# ---- an unknown IPAM plugin, and a '/' in its type --------------------------------------
cni ADD c3id "$C2" eth0 <<<"$(conf no-such-ipam)"
eq "unknown IPAM plugin: code 7" "7" "$(jqo .code)"
has "message names the plugin" "no-such-ipam" "$(jqo .details)"
cni ADD c3id "$C2" eth0 <<<"$(conf ../../bin/sh)"
eq "IPAM type with '/': code 7" "7" "$(jqo .code)"

# ---- netd restart keeps the sandbox with its IPAM address ----------------------------------
netd_down
netd_up || { t_fail "netd restarts"; t_summary; exit 1; }
eq "restored sandbox keeps its IPAM address" "10.89.0.10 10.89.0.1" "$(netd sandbox show "$SB" | jq -r '.ipv4 + " " + .gateway4')"
eq "container: allowed name connects after the restart" "pypi.org ok" "$(cexec c1 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
fail "container: denied address still does not connect" cexec c1 curl -sS --cacert "$WORLD_CA" --connect-timeout 3 --resolve example.com:443:203.0.113.66 https://example.com/
cni CHECK c1id "$C1" eth0 <<<"$(conf)"
eq "CHECK after the restart exits 0" "0:" "$RC:$OUT"

# ---- DEL releases the address, also with an empty CNI_NETNS --------------------------------
cni DEL c1id "$C1" eth0 <<<"$(conf)"
eq "DEL exits 0" "0:" "$RC:$OUT"
eq "DEL released the address in host-local" "10.89.0.11 " "$(leased)"
fail "netd forgot the sandbox" netd sandbox show "$SB"
eq "its jump is gone" "" "$(sb_jump "$HOST_IF")"
eq "its mark element is gone" "" "$(sb_mark 10.89.0.10)"
cni DEL c2id "" eth0 <<<"$(conf)"
eq "DEL with empty CNI_NETNS exits 0" "0:" "$RC:$OUT"
eq "... and released the address" "" "$(leased)"
cni DEL c2id "" eth0 <<<"$(conf)"
eq "repeated DEL exits 0" "0:" "$RC:$OUT"

netd_down
t_summary
