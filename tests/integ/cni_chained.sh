#!/usr/bin/env bash
# netd-cni in chained mode behind Debian's reference `bridge` + `host-local`
# plugins, driven as a runtime drives a conflist: ADD each plugin in order
# (passing the previous result as prevResult), DEL in reverse.  Two
# containers on one bridge with different policies: each gets exactly its
# policy's egress, they cannot reach each other, a spoofed source is
# dropped, and DEL leaves nothing of netd behind.  Everything runs in the
# world's host netns (the bridge plugin sets ip_forward where it runs).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make build/asan/netd-cni)"; echo "0 passed, 1 failed"; exit 1; }
REF=/usr/lib/cni
if [ ! -x $REF/bridge ] || [ ! -x $REF/host-local ]; then
	echo "##################################################################"
	echo "## cni_chained: FAILED: Debian's containernetworking-plugins is not"
	echo "## installed ($REF/bridge, $REF/host-local): make deps"
	echo "##################################################################"
	echo "0 passed, 1 failed"
	exit 1
fi
world_up "ndh$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }

BIN=$WORLD_DIR/cnibin
mkdir -p "$BIN" "$WORLD_DIR/ipam"
ln -s $REF/bridge $REF/host-local "$BIN/"
ln -s "$CNI_BIN" "$BIN/netd-cni"
BR=cnibr0
GW=10.88.0.1
GW6=fd00:88::1

# The conflist a user writes (docs/cni.md, "Chained mode").
CONFLIST=$(cat <<-JSON
{ "cniVersion": "1.0.0", "name": "chaintest",
  "plugins": [
    { "type": "bridge", "bridge": "$BR", "isGateway": true, "ipMasq": false,
      "ipam": { "type": "host-local", "dataDir": "$WORLD_DIR/ipam",
                "ranges": [[{ "subnet": "10.88.0.0/24", "gateway": "$GW" }],
                           [{ "subnet": "fd00:88::/64", "gateway": "$GW6" }]],
                "routes": [{ "dst": "0.0.0.0/0" }, { "dst": "::/0" }] } },
    { "type": "netd-cni", "mode": "chained", "socket": "$NETD_SOCKET",
      "tombstoneDir": "$WORLD_DIR/state/tombstones", "defaultPolicy": "deny-all" }
  ] }
JSON
)

# plugin_conf I [PREV] - plugin I of the conflist as libcni derives its
# config: cniVersion and name added, prevResult if given.
plugin_conf() {
	jq -c --argjson i "$1" --argjson prev "${2:-null}" \
		'.plugins[$i] + {cniVersion: .cniVersion, name: .name} +
		 (if $prev == null then {} else {prevResult: $prev} end)' <<<"$CONFLIST"
}

# run_plugin CMD I CID NETNS [CNI_ARGS] [PREV] - one plugin, in the world's
# host netns; stdout -> $OUT, status -> $RC.
run_plugin() {
	local type
	type=$(jq -r ".plugins[$2].type" <<<"$CONFLIST")
	OUT=$(plugin_conf "$2" "${6:-}" | nsenter --net="$WORLD_HOST_NETNS" -- env \
		CNI_COMMAND="$1" CNI_CONTAINERID="$3" CNI_NETNS="$4" CNI_IFNAME=eth0 \
		CNI_ARGS="${5:-}" CNI_PATH="$BIN" timeout 60 "$BIN/$type" 2>>"$WORLD_DIR/cni.err")
	RC=$?
}

ns() { echo "$WORLD_PREFIX-$1"; }
cexec() { local n=$1; shift; timeout 30 ip netns exec "$(ns "$n")" "$@"; }
hexec() { timeout 30 ip netns exec "$WORLD_HOST_NS" "$@"; }
cdig() { local n=$1; shift; cexec "$n" dig +time=2 +tries=1 "$@"; }
ccurl() {
	local n=$1; shift
	cexec "$n" curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 8 "$@"
}
sb_json() { "$NETD_BIN" sandbox list --json 2>/dev/null || curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/sandboxes; }
sandboxes() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/sandboxes; }

declare -A PREV BR_RES
# add_bridge N - the first plugin of the chain for container N.
add_bridge() {
	ip netns add "$(ns "$1")"
	mkdir -p "/etc/netns/$(ns "$1")"
	echo "nameserver $GW" >"/etc/netns/$(ns "$1")/resolv.conf"
	run_plugin ADD 0 "cid-$1" "/run/netns/$(ns "$1")"
	BR_RES[$1]=$OUT
	eq "bridge ADD for $1 exits 0" 0 "$RC"
}
# add_netd N POLICY - the second plugin, with the bridge's result as prevResult.
add_netd() {
	run_plugin ADD 1 "cid-$1" "/run/netns/$(ns "$1")" "IgnoreUnknown=1;NETD_POLICY=$2" \
		"${BR_RES[$1]}"
	PREV[$1]=$OUT
	eq "netd-cni chained ADD for $1 exits 0" 0 "$RC"
}
ip_of() { jq -r '.ips[0].address | split("/")[0]' <<<"${BR_RES[$1]}"; }

# ---- errors --------------------------------------------------------------------
ip netns add "$(ns c0)"
run_plugin ADD 1 cid-c0 "/run/netns/$(ns c0)"
eq "chained ADD without prevResult: exit 1" 1 "$RC"
eq "chained ADD without prevResult: code 7" 7 "$(jq -r .code <<<"$OUT")"
has "the message says what is missing" prevResult "$OUT"
run_plugin ADD 1 cid-c0 "/run/netns/$(ns c0)" "" \
	'{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/x"}],"ips":[]}'
eq "chained ADD with no host interface in prevResult: code 7" 7 "$(jq -r .code <<<"$OUT")"
eq "nothing was registered" 0 "$(sandboxes | jq '.sandboxes | length')"

# ---- ADD: two containers on one bridge -------------------------------------------
add_bridge c1
add_bridge c2
C1=$(ip_of c1)
C2=$(ip_of c2)
ok "the two containers got addresses from host-local" test -n "$C1" -a -n "$C2" -a "$C1" != "$C2"
# Control: before netd-cni, the bridge lets them talk (so the isolation check can fail).
ok "control: before netd-cni, c1 reaches c2 over the bridge" cexec c1 ping -c1 -W2 "$C2"

hasnt "no chained attachment yet: prerouting_raw's gate to the chained checks is shut" ipv4 \
	"$(hexec nft list set inet netd chained_fams)"
add_netd c1 python-dev
has "the first chained attachment opens the gate" ipv4 "$(hexec nft list set inet netd chained_fams)"
add_netd c2 openai-only
eq "the result is prevResult passed through, nameservers = the gateways" \
	"$(jq -c '.dns = {nameservers: ["'$GW'", "'$GW6'"]}' <<<"${BR_RES[c1]}")" "$(jq -c . <<<"${PREV[c1]}")"
eq "the result keeps the requested cniVersion" 1.0.0 "$(jq -r .cniVersion <<<"${PREV[c1]}")"
list=$(sandboxes)
eq "netd has two chained sandboxes" "chained chained" \
	"$(jq -r '[.sandboxes[].kind] | join(" ")' <<<"$list")"
has "netd knows c1's address" "\"$C1\"" "$list"
HOST1=$(jq -r --arg ip "$C1" '.sandboxes[] | select(.ipv4 == $ip) | .host_ifname' <<<"$list")
BRVETH1=$(jq -r '.interfaces[] | select(.sandbox == null and .name != "'$BR'") | .name' <<<"${BR_RES[c1]}")
eq "c1's host_ifname is bridge's veth (not the bridge)" "$BRVETH1" "$HOST1"

# ---- egress per policy -------------------------------------------------------------
eq "c1 (python-dev): pypi.org resolves through netd" 198.51.100.10 "$(cdig c1 +short pypi.org A)"
has "c1: pypi.org connects" "pypi.org ok" "$(ccurl c1 https://pypi.org/ 2>&1)"
has "c1: example.com is NXDOMAIN" NXDOMAIN "$(cdig c1 example.com A)"
has "c1: a query to another server is redirected to netd (NXDOMAIN)" NXDOMAIN \
	"$(cdig c1 @192.0.2.53 example.com A)"
fail "c1: an unpinned address is dropped" ccurl c1 https://example.com/ --resolve example.com:443:203.0.113.66
eq "c2 (openai-only): api.openai.com resolves" 198.51.100.30 "$(cdig c2 +short api.openai.com A)"
has "c2: api.openai.com connects" "api.openai.com ok" "$(ccurl c2 https://api.openai.com/ 2>&1)"
has "c2: pypi.org is NXDOMAIN" NXDOMAIN "$(cdig c2 pypi.org A)"
fail "c2: pypi.org's address (pinned for c1 only) is dropped" \
	ccurl c2 https://pypi.org/ --resolve pypi.org:443:198.51.100.10
fail "c1: the host's other services are closed (ssh port)" \
	cexec c1 curl -s --connect-timeout 2 "http://$GW:22/"
# Their deny records name the container's sandbox, though the inet hooks see
# only the bridge (attributed by the source the bridge table checked).
SB1=$(sandboxes | jq -r --arg ip "$C1" '.sandboxes[] | select(.ipv4 == $ip) | .name')
rec=$(audit_wait 15 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dst":"203.0.113.66"' | head -1)
has "c1's unpinned address has a deny record naming c1" '"reason":"not-pinned"' "$rec"
has "... with c1's source" "\"src\":\"$C1\"" "$rec"
rec=$(audit_wait 15 '"event":"deny"' "\"sandbox\":\"$SB1\"" "\"dst\":\"$GW\"" '"dport":22' | head -1)
has "c1's packet to the host's ssh port has a deny record naming c1" '"reason":"to-host"' "$rec"
# IPv6: the container solicits its gateway from its global address (a
# chained source, so chained_in must take neighbour discovery), then leaves
# only to what its AAAA answers pinned.
C1V6=$(jq -r '.ips[] | select(.address | contains(":")) | .address | split("/")[0]' <<<"${BR_RES[c1]}")
has "c1: files.pythonhosted.org connects over IPv6" "files.pythonhosted.org ok" \
	"$(ccurl c1 -6 https://files.pythonhosted.org/ 2>&1)"
fail "c1: an unpinned IPv6 address is dropped" \
	ccurl c1 https://example.com/ --resolve "example.com:443:[2001:db8:20::99]"
rec=$(audit_wait 15 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dst":"2001:db8:20::99"' | head -1)
has "c1's unpinned IPv6 address has a deny record naming c1" '"reason":"not-pinned"' "$rec"
has "... with c1's IPv6 source" "\"src\":\"$C1V6\"" "$rec"
hasnt "no neighbour solicitation of c1's was dropped" '"icmp_type":135' \
	"$(audit_grep '"event":"deny"' "\"sandbox\":\"$SB1\"")"
m=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics)
ok "the metric counts c1's denied packets" test "$(awk -v k="netd_sandbox_denied_total{sandbox=\"$SB1\",reason=\"not-pinned\"}" \
	'$1 == k {print $2}' <<<"$m")" -ge 1

# ---- isolation and anti-spoofing ---------------------------------------------------
fail "c1 cannot reach c2 over the bridge" cexec c1 ping -c1 -W2 "$C2"
fail "c2 cannot reach c1 over the bridge" cexec c2 ping -c1 -W2 "$C1"
cexec c1 ip addr add 10.88.0.77/32 dev eth0
# Unknown to netd, 10.88.0.77 would meet no chained rule on the host: only
# the bridge table stops it (the host would answer this ping otherwise).
fail "a spoofed source from c1 is dropped" cexec c1 ping -c1 -W2 -I 10.88.0.77 "$GW"
# Posing as c2 would get c2's policy (api.openai.com) if the source were believed.
fail "c1 posing as c2 is dropped" sh -c "ip netns exec $(ns c1) ip addr add $C2/32 dev eth0 &&
	ip netns exec $(ns c1) dig +time=2 +tries=1 -b $C2 @$GW +short api.openai.com A | grep -qx 198.51.100.30"
has "the bridge table counted the spoofed frames" "counter packets" \
	"$(hexec nft list chain bridge netd prerouting | grep -v 'packets 0 ' | grep drop)"
cexec c1 ip addr del 10.88.0.77/32 dev eth0
cexec c1 ip addr del "$C2/32" dev eth0
# From the uplink with c1's address: not from c1's bridge port, so not c1.
world_exec inet ip addr add "$C1/32" dev lo
world_exec inet ip route add 10.88.0.0/16 via 192.0.2.1 2>/dev/null
world_exec inet dig +time=2 +tries=1 -b "$C1" @192.0.2.1 uplink-spoof.pypi.org A >/dev/null 2>&1
hasnt "a query from the uplink with c1's source is not taken as c1's" "uplink-spoof.pypi.org" \
	"$(cat "$NETD_AUDIT")"
n0=$(audit_grep '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dport":22' | grep -c .)
world_exec inet curl -s --connect-timeout 2 --interface "$C1" "http://$GW:22/" >/dev/null 2>&1
sleep 5	# an attempt's deny record is written 3 s after its last packet (docs/audit.md)
eq "... nor its packets' deny records (not bridge-checked): still $n0 naming c1 and port 22" "$n0" \
	"$(audit_grep '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dport":22' | grep -c .)"
has "the inet table counted it as a spoof" "counter packets" \
	"$(hexec nft list chain inet netd chained_raw | grep chained_src4 | grep -v 'packets 0 ')"
world_exec inet ip route del 10.88.0.0/16 via 192.0.2.1 2>/dev/null
world_exec inet ip addr del "$C1/32" dev lo
eq "c1's own address still works" 198.51.100.10 "$(cdig c1 +short pypi.org A)"

# ---- restart: state restore keeps the chained attachment ---------------------------
netd_down
netd_up || { t_fail "netd restarts"; t_summary; exit 1; }
eq "after a restart c1 is still chained" chained \
	"$(sandboxes | jq -r --arg ip "$C1" '.sandboxes[] | select(.ipv4 == $ip) | .kind')"
has "after a restart c1 still resolves its names" "pypi.org ok" "$(ccurl c1 https://pypi.org/ 2>&1)"
has "after a restart c1's denied name is still NXDOMAIN" NXDOMAIN "$(cdig c1 example.com A)"
fail "after a restart c1 still cannot reach c2" cexec c1 ping -c1 -W2 "$C2"
# Its policy chain emptied behind netd's back (it then returns): c1 is still
# denied, not forwarded; the next restart renders the chain again.
hexec nft flush chain inet netd pe-python-dev
fail "c1 with its policy chain emptied: its pinned name does not connect (fail closed)" \
	ccurl c1 https://pypi.org/ --resolve pypi.org:443:198.51.100.10
netd_down
netd_up || { t_fail "netd restarts"; t_summary; exit 1; }
has "after the next restart c1 connects again" "pypi.org ok" "$(ccurl c1 https://pypi.org/ 2>&1)"

# ---- CHECK, DEL (reverse order), GC --------------------------------------------------
run_plugin CHECK 1 cid-c1 "/run/netns/$(ns c1)" "" "${PREV[c1]}"
eq "chained CHECK for c1 exits 0" 0 "$RC"
for n in c1 c2; do
	run_plugin DEL 1 "cid-$n" "/run/netns/$(ns $n)" "" "${PREV[$n]}"
	eq "netd-cni DEL for $n exits 0" 0 "$RC"
	run_plugin DEL 1 "cid-$n" "/run/netns/$(ns $n)" "" "${PREV[$n]}"
	eq "netd-cni DEL for $n again (idempotent) exits 0" 0 "$RC"
	run_plugin DEL 0 "cid-$n" "/run/netns/$(ns $n)" "" "${BR_RES[$n]}"
	eq "bridge DEL for $n after netd-cni's exits 0" 0 "$RC"
done
eq "netd has no record left" 0 "$(sandboxes | jq '.sandboxes | length')"
rules=$(hexec nft list ruleset)
hasnt "no chained address left in table inet netd" "10.88.0." "$rules"
hasnt "no port left in table bridge netd" "veth" "$(hexec nft list table bridge netd)"
hasnt "no policy chain left (gone with its last sandbox)" "chain pe-" "$rules"
hasnt "no mark element left" "10.88.0." "$(hexec nft list map inet netd sb_mark4)"
eq "bridge deleted the veths" 0 "$(hexec ip -o link show master $BR 2>/dev/null | wc -l)"

netd_down
t_summary
