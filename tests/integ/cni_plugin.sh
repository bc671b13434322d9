#!/usr/bin/env bash
# netd-cni driven exactly as a runtime drives it (CNI_* env + the network
# config on stdin, run in the namespace that plays the host) against netd in
# a private world: every verb, every version, every error path, and the
# traffic a container then has; the container and pod netd records for it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make build/asan/netd-cni)"; echo "0 passed, 1 failed"; exit 1; }
world_up "ndc$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
TOMB=$WORLD_DIR/state/tombstones

# conf [VERSION] [EXTRA_JSON_MEMBERS] - a network config as libcni derives it.
conf() {
	local v=${1:-1.0.0} extra=${2:-}
	printf '{"cniVersion":"%s","name":"netdtest","type":"netd-cni","socket":"%s","tombstoneDir":"%s","capabilities":{"io.kubernetes.cri.pod-annotations":true}%s}' \
		"$v" "$NETD_SOCKET" "$TOMB" "$extra"
}

# cni CMD CID NETNS IFNAME [CNI_ARGS] - run the plugin; stdin is the config.
# stdout -> $OUT, exit status -> $RC.
cni() {
	OUT=$(nsenter --net="$WORLD_HOST_NETNS" -- env CNI_COMMAND="$1" CNI_CONTAINERID="$2" \
		CNI_NETNS="$3" CNI_IFNAME="$4" CNI_ARGS="${5:-}" CNI_PATH=/nonexistent \
		timeout 60 "$CNI_BIN" 2>"$WORLD_DIR/cni.err")
	RC=$?
}

# ns_add SHORT - a container netns, as a runtime makes it before ADD.
ns_add() { ip netns add "$WORLD_PREFIX-$1"; }
nsp() { echo "/run/netns/$WORLD_PREFIX-$1"; }
cexec() { local n=$1; shift; timeout 30 ip netns exec "$WORLD_PREFIX-$n" "$@"; }
jqo() { jq -r "$1" <<<"$OUT" 2>&1; }
code() { jq -r '.code' <<<"$OUT" 2>/dev/null; }

# schema VERSION - the result in $OUT against spec §5 "ADD Success" for VERSION.
schema() {
	python3 - "$1" "$OUT" <<-'PY'
	import ipaddress, json, sys
	want, text = sys.argv[1], sys.argv[2]
	r = json.loads(text)
	assert r["cniVersion"] == want, r["cniVersion"]
	assert set(r) <= {"cniVersion", "interfaces", "ips", "routes", "dns"}, set(r)
	ifs = r["interfaces"]
	for i in ifs:
	    assert set(i) <= {"name", "mac", "sandbox", "mtu", "socketPath", "pciID"}, i
	    assert isinstance(i["name"], str) and 0 < len(i["name"]) <= 15
	for ip in r["ips"]:
	    allowed = {"address", "gateway", "interface"} | ({"version"} if want.startswith("0.") else set())
	    assert set(ip) <= allowed, ip
	    net = ipaddress.ip_interface(ip["address"])
	    if want.startswith("0."):
	        assert ip["version"] == str(net.version), ip
	    assert 0 <= ip["interface"] < len(ifs), ip
	    assert ifs[ip["interface"]].get("sandbox"), "ips[].interface must be the container side"
	    if "gateway" in ip:
	        ipaddress.ip_address(ip["gateway"])
	for rt in r["routes"]:
	    ipaddress.ip_network(rt["dst"])
	    assert set(rt) <= {"dst", "gw"}, rt
	for ns in r["dns"].get("nameservers", []):
	    ipaddress.ip_address(ns)
	PY
}

C1=$(nsp c1)
ns_add c1

# ---- VERSION ----------------------------------------------------------------
cni VERSION "" dummy dummy <<<'{"cniVersion":"1.0.0"}'
eq "VERSION exits 0" 0 "$RC"
eq "VERSION echoes the asked version" 1.0.0 "$(jqo .cniVersion)"
eq "VERSION lists every supported version" '["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]' "$(jq -c .supportedVersions <<<"$OUT")"
cni VERSION "" "" "" </dev/null
eq "VERSION with empty stdin answers 1.1.0" 1.1.0 "$(jqo .cniVersion)"

# ---- STATUS ----------------------------------------------------------------------
cni STATUS "" "" "" <<<"$(conf 1.1.0)"
eq "STATUS with netd up: exit 0" 0 "$RC"
eq "STATUS prints nothing on success" "" "$OUT"

# ---- ADD, interface mode, 1.0.0 -------------------------------------------------------
cni ADD c1id "$C1" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "ADD exits 0" 0 "$RC"
ok "ADD result matches the 1.0.0 schema" schema 1.0.0
eq "interfaces[1] is CNI_IFNAME in CNI_NETNS" "eth0 $C1" "$(jqo '.interfaces[1].name + " " + .interfaces[1].sandbox')"
eq "host-side interface has no sandbox" "null" "$(jqo '.interfaces[0].sandbox')"
has "host-side interface is one netd made" '"name":"nd' "$(jq -c '.interfaces[0]' <<<"$OUT")"
eq "ips[].interface points at eth0" "1" "$(jqo '.ips[0].interface')"
eq "1.0.0 ips carry no version" "null" "$(jqo '.ips[0].version')"
GW=$(jqo '.ips[0].gateway')
eq "dns.nameservers[0] is netd's proxy (the gateway)" "$GW" "$(jqo '.dns.nameservers[0]')"
eq "default route via the gateway" "0.0.0.0/0 $GW" "$(jqo '.routes[0].dst + " " + .routes[0].gw')"
C1_IP=$(jqo '.ips[0].address' | cut -d/ -f1)
has "eth0 in the container has the result's address" "$C1_IP" "$(cexec c1 ip -4 addr show eth0)"
has "mac of eth0 reported" ":" "$(jqo '.interfaces[1].mac')"
SB_C1=$(netd sandbox list --json | jq -r --arg ip "$C1_IP" '.. | objects | select(.ipv4? == $ip) | .name')
has "netd sandbox named from the attachment key" "cni-" "$SB_C1"
eq "netd sandbox runs the config's policy" python-dev "$(netd sandbox show "$SB_C1" | jq -r .policy)"
eq "sandbox show names the container; no pod without CNI_ARGS" "c1id null" \
	"$(netd sandbox show "$SB_C1" | jq -r '.container_id + " " + (.pod_name | tostring)')"
eq "its interface jumps to its policy's chain" "pe-python-dev" \
	"$(sb_jump "$(netd sandbox show "$SB_C1" | jq -r .host_ifname)")"

# The runtime writes resolv.conf from dns.nameservers.
mkdir -p "/etc/netns/$WORLD_PREFIX-c1"
echo "nameserver $GW" >"/etc/netns/$WORLD_PREFIX-c1/resolv.conf"
eq "container: allowed name resolves" 198.51.100.10 "$(cexec c1 dig +time=2 +tries=1 +short pypi.org A)"
eq "container: allowed name connects" "pypi.org ok" "$(cexec c1 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
eq "container: denied name is NXDOMAIN" "status: NXDOMAIN" "$(cexec c1 dig +time=2 +tries=1 example.com | grep -o 'status: [A-Z]*')"
fail "container: denied address does not connect" cexec c1 curl -sS --cacert "$WORLD_CA" --connect-timeout 3 --resolve example.com:443:203.0.113.66 https://example.com/

# ---- CHECK ----------------------------------------------------------------------------
cni CHECK c1id "$C1" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "CHECK of a live attachment: exit 0, no output" "0:" "$RC:$OUT"
cni CHECK c1id "$C1" eth0 <<<"$(conf 0.3.1 ',"policy":"python-dev"')"
eq "CHECK with a 0.3.1 config: code 1" "1" "$(code)"

# ---- repeated ADD -----------------------------------------------------------------------
cni ADD c1id "$C1" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "second ADD of the same attachment fails with code 101" "1:101" "$RC:$(code)"
eq "error JSON carries the config's version" 1.0.0 "$(jqo .cniVersion)"
has "error names what is wrong" "DEL it first" "$(jqo .details)"

# ---- DEL ----------------------------------------------------------------------------------
HOST_IF=$(netd sandbox show "$SB_C1" | jq -r .host_ifname)
cni DEL c1id "" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "DEL with empty CNI_NETNS and no prevResult: exit 0" 0 "$RC"
fail "netd record gone" netd sandbox show "$SB_C1"
eq "host-side veth gone" 0 "$(world_exec host ip link show "$HOST_IF" 2>/dev/null | wc -l)"
eq "its jump is gone from netd's table" "" "$(sb_jump "$HOST_IF")"
eq "its mark element is gone" "" "$(sb_mark "$C1_IP")"
hasnt "pins gone from netd's table" "198.51.100.10" "$(world_exec host nft list table inet netd)"
cni DEL c1id "$C1" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "DEL again: exit 0" 0 "$RC"
cni CHECK c1id "$C1" eth0 <<<"$(conf 1.0.0)"
eq "CHECK after DEL: code 102" "102" "$(code)"
fail "container lost eth0" cexec c1 ip link show eth0

# ---- versions -------------------------------------------------------------------------------
for v in 0.3.0 0.3.1 0.4.0 1.1.0; do
	cni ADD "v$v" "$C1" eth0 <<<"$(conf "$v")"
	eq "ADD $v exits 0" 0 "$RC"
	ok "ADD $v result matches its schema" schema "$v"
	if [ "${v:0:1}" = 0 ]; then
		eq "$v ips carry version 4" 4 "$(jqo '.ips[0].version')"
	fi
	cni DEL "v$v" "$C1" eth0 <<<"$(conf "$v")"
	eq "DEL $v exits 0" 0 "$RC"
done

# ---- policy selection ---------------------------------------------------------------------------
# sel CID CONF [CNI_ARGS] -> the policy netd got
sel() {
	local cid=$1 cf=$2 args=${3:-} name
	cni ADD "$cid" "$C1" eth0 "$args" <<<"$cf"
	[ "$RC" = 0 ] || { echo "ADD failed: $OUT"; return; }
	name=$(netd sandbox list --json | jq -r --arg ip "$(jqo '.ips[0].address' | cut -d/ -f1)" '.. | objects | select(.ipv4? == $ip) | .policy')
	echo "$name"
	cni DEL "$cid" "" eth0 <<<"$cf"
}
ANN=',"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"netd.io/policy":"openai-only","other":"x"}}'
eq "pod annotation wins over CNI_ARGS and config" openai-only \
	"$(sel p1 "$(conf 1.0.0 ",\"policy\":\"python-dev\"$ANN")" "IgnoreUnknown=1;NETD_POLICY=deny-all")"
eq "CNI_ARGS NETD_POLICY wins over config" openai-only \
	"$(sel p2 "$(conf 1.0.0 ',"policy":"python-dev"')" "IgnoreUnknown=1;K8S_POD_NAME=x;NETD_POLICY=openai-only")"
eq "config policy wins over defaultPolicy" python-dev \
	"$(sel p3 "$(conf 1.0.0 ',"policy":"python-dev","defaultPolicy":"openai-only"')")"
eq "defaultPolicy when nothing else" openai-only "$(sel p4 "$(conf 1.0.0 ',"defaultPolicy":"openai-only"')")"
eq "deny-all when no policy at all" deny-all "$(sel p5 "$(conf 1.0.0)")"
eq "runtimeConfig key casing does not matter" openai-only \
	"$(sel p6 "$(conf 1.0.0 ',"RuntimeConfig":{"IO.Kubernetes.CRI.Pod-Annotations":{"netd.io/policy":"openai-only"}}')")"
n_before=$(netd sandbox list --json | jq 'length')
cni ADD p7 "$C1" eth0 "NETD_POLICY=no-such-policy" <<<"$(conf 1.0.0)"
eq "unknown policy: ADD fails with code 104" "1:104" "$RC:$(code)"
has "the message names the policy and where it came from" 'no-such-policy" (from CNI_ARGS' "$(jqo .details)"
eq "unknown policy leaves nothing in netd" "$n_before" "$(netd sandbox list --json | jq 'length')"
fail "unknown policy leaves no eth0 in the container" cexec c1 ip link show eth0
cni ADD p8 "$C1" eth0 "NETD_POLICY=bad;name" <<<"$(conf 1.0.0)"
eq "NETD_POLICY with a bad name: ADD fails" 1 "$RC"
cni ADD p9 "$C1" eth0 "IgnoreUnknown=1;K8S_POD_NAMESPACE=team-a;K8S_POD_NAME=web 0" <<<"$(conf 1.0.0)"
eq "a bad K8S_POD_NAME: ADD fails with code 4" "1:4" "$RC:$(code)"
has "the message names the CNI_ARGS key" "CNI_ARGS K8S_POD_NAME" "$(jqo .details)"
eq "a bad K8S_POD_NAME leaves nothing in netd" "$n_before" "$(netd sandbox list --json | jq 'length')"

# ---- error paths ---------------------------------------------------------------------------------
cni ADD "" "$C1" eth0 <<<"$(conf)"
eq "missing CNI_CONTAINERID: code 4" 4 "$(code)"
has "message names the variable" CNI_CONTAINERID "$(jqo .details)"
cni ADD 'bad/id' "$C1" eth0 <<<"$(conf)"
eq "invalid CNI_CONTAINERID: code 4" 4 "$(code)"
cni ADD c9 "$C1" 'eth0:1' <<<"$(conf)"
eq "invalid CNI_IFNAME: code 4" 4 "$(code)"
cni ADD c9 "$C1" averyveryverylongifname <<<"$(conf)"
eq "CNI_IFNAME over 15 bytes: code 4" 4 "$(code)"
cni ADD c9 "" eth0 <<<"$(conf)"
eq "ADD without CNI_NETNS: code 4" 4 "$(code)"
cni ADD c9 /nonexistent/netns eth0 <<<"$(conf)"
eq "ADD with a missing netns: code 4" "1:4" "$RC:$(code)"
cni ADD c9 "$C1" eth0 <<<'{"cniVersion":"1.0.0","name":'
eq "truncated JSON: code 6" 6 "$(code)"
cni ADD c9 "$C1" eth0 <<<'[1,2]'
eq "JSON that is not an object: code 6" 6 "$(code)"
cni ADD c9 "$C1" eth0 <<<'{"cniVersion":"1.0.0","type":"netd-cni"}'
eq "missing name: code 7" 7 "$(code)"
cni ADD c9 "$C1" eth0 <<<'{"cniVersion":"1.0.0","name":"-bad","type":"netd-cni"}'
eq "invalid name: code 7" 7 "$(code)"
cni ADD c9 "$C1" eth0 <<<"$(conf 9.9.9)"
eq "unknown cniVersion: code 1" 1 "$(code)"
cni ADD c9 "$C1" eth0 <<<"$(conf 1.0.0 ',"mode":"bogus"')"
eq "bad mode: code 7" 7 "$(code)"
cni ADD c9 "$C1" eth0 <<<"$(conf 1.0.0 ',"policy":7')"
eq "policy of the wrong type: code 7" 7 "$(code)"
cni BOGUS c9 "$C1" eth0 <<<"$(conf)"
eq "unknown CNI_COMMAND: code 4" 4 "$(code)"
OUT=$(nsenter --net="$WORLD_HOST_NETNS" -- env -u CNI_COMMAND "$CNI_BIN" </dev/null 2>/dev/null)
eq "no CNI_COMMAND: code 4" 4 "$(code)"
eq "errors are on stdout as one JSON object with msg" "true" "$(jq -c 'has("code") and has("msg") and has("cniVersion")' <<<"$OUT")"
ip -n "$WORLD_PREFIX-c1" link add eth0 type veth peer name eth0p
cni ADD c10 "$C1" eth0 <<<"$(conf)"
eq "ADD when CNI_IFNAME already exists in the container fails" 1 "$RC"
eq "and leaves no netd record behind" "$n_before" "$(netd sandbox list --json | jq 'length')"
ip -n "$WORLD_PREFIX-c1" link del eth0

# ---- DEL when everything is already gone ------------------------------------------------------------
ns_add c2
cni ADD c2id "$(nsp c2)" eth0 <<<"$(conf)"
eq "ADD c2" 0 "$RC"
ip netns delete "$WORLD_PREFIX-c2"
cni DEL c2id "$(nsp c2)" eth0 <<<"$(conf)"
eq "DEL after the netns is gone: exit 0" 0 "$RC"
cni DEL never-added "" eth0 <<<"$(conf)"
eq "DEL of an attachment netd never had: exit 0" 0 "$RC"

# ---- a netns with IPv6 disabled (Docker's --network none): IPv4 only -------------------------------------
ns_add v4
ip netns exec "$WORLD_PREFIX-v4" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
# As containerd's CRI sends it (random order), so netd also records the pod.
POD_ARGS="K8S_POD_UID=3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e;IgnoreUnknown=1;K8S_POD_NAMESPACE=team-a;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=v4id"
cni ADD v4id "$(nsp v4)" eth0 "$POD_ARGS" <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "ADD into a netns with IPv6 disabled: exit 0" 0 "$RC"
ok "its result matches the 1.0.0 schema" schema 1.0.0
eq "the result has only an IPv4 address" "4" "$(jqo '[.ips[].address | if test(":") then "6" else "4" end] | join(",")')"
V4_IP=$(jqo '.ips[0].address' | cut -d/ -f1)
SB_V4=$(netd sandbox list --json | jq -r --arg ip "$V4_IP" '.[] | select(.ipv4 == $ip) | .name')
eq "netd records no IPv6 address for it" "null" "$(netd sandbox show "$SB_V4" | jq -r .ipv6)"
POD_SHOW='[.container_id, .pod_namespace, .pod_name, .pod_uid] | join(" ")'
POD_WANT="v4id team-a web-0 3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e"
eq "sandbox show names the container and the pod from CNI_ARGS" "$POD_WANT" \
	"$(netd sandbox show "$SB_V4" | jq -r "$POD_SHOW")"
has "sandbox list's CONTAINER column shows NAMESPACE/POD" "team-a/web-0" \
	"$(netd sandbox list | grep -F "$SB_V4")"
has "its create audit record names the pod" '"pod_name":"web-0"' \
	"$(audit_grep '"event":"sandbox"' '"action":"create"' "\"sandbox\":\"$SB_V4\"")"
has "netd_sandbox_info names the pod" \
	"netd_sandbox_info{sandbox=\"$SB_V4\",container_id=\"v4id\",pod_namespace=\"team-a\",pod_name=\"web-0\"" \
	"$(world_exec host curl -sS --unix-socket "$NETD_SOCKET" http://netd/metrics)"
HOST_V4=$(netd sandbox show "$SB_V4" | jq -r .host_ifname)
NFT=$(world_exec host nft list table inet netd)
has "its IPv4 anti-spoofing element is in place" "$HOST_V4\" . $V4_IP" "$NFT"
hasnt "no IPv6 anti-spoofing element for it: its IPv6 is dropped" "$HOST_V4\" . fd00" "$NFT"
eq "it jumps to its policy's chain" "pe-python-dev" "$(sb_jump "$HOST_V4")"
mkdir -p "/etc/netns/$WORLD_PREFIX-v4"
echo "nameserver $(jqo '.dns.nameservers[0]')" >"/etc/netns/$WORLD_PREFIX-v4/resolv.conf"
eq "IPv4-only container: allowed name connects" "pypi.org ok" "$(cexec v4 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
fail "IPv4-only container: denied address does not connect" cexec v4 curl -sS --cacert "$WORLD_CA" --connect-timeout 3 --resolve example.com:443:203.0.113.66 https://example.com/
# (It stays attached across the netd restart below, then is deleted.)

# ---- concurrency: different containers at once ---------------------------------------------------------
pids=()
for i in 1 2 3 4 5 6; do
	ns_add "k$i"
	( cni ADD "k${i}id" "$(nsp "k$i")" eth0 <<<"$(conf)"; echo "$RC" >"$WORLD_DIR/k$i.rc"; echo "$OUT" >"$WORLD_DIR/k$i.out" ) &
	pids+=($!)
done
wait "${pids[@]}"
eq "6 concurrent ADDs all succeed" "000000" "$(cat "$WORLD_DIR"/k?.rc | tr -d '\n')"
eq "6 distinct addresses" 6 "$(cat "$WORLD_DIR"/k?.out | jq -r '.ips[0].address' | sort -u | wc -l)"

# ---- GC -----------------------------------------------------------------------------------------
sb_create other deny-all >/dev/null
VALID='[{"containerID":"k1id","ifname":"eth0"},{"containerID":"k2id","ifname":"eth0"},{"containerID":"v4id","ifname":"eth0"}]'
cni GC "" "" "" <<<"$(conf 1.1.0 ",\"cni.dev/valid-attachments\":$VALID,\"cni.dev/attachments\":$VALID")"
eq "GC exits 0 with no output" "0:" "$RC:$OUT"
left=$(netd sandbox list --json | jq -r '.[].name')
eq "GC keeps exactly the valid attachments of this network" 3 "$(grep -c '^cni-' <<<"$left")"
has "GC leaves sandboxes that are not CNI attachments" "$(sb_name other)" "$left"
cni CHECK k1id "$(nsp k1)" eth0 <<<"$(conf)"
eq "a kept attachment still passes CHECK" 0 "$RC"
cni CHECK k3id "$(nsp k3)" eth0 <<<"$(conf)"
eq "a collected attachment fails CHECK with 102" 102 "$(code)"
cni GC "" "" "" <<<"$(conf 1.1.0 ',"cni.dev/attachments":[{"containerID":"k1id"}]')"
eq "GC with a malformed attachment list: code 6" 6 "$(code)"
cni DEL k2id "" eth0 <<<"$(conf)"

# ---- netd down: ADD fails closed, DEL leaves a tombstone, restart cleans up ------------------------------
SB_K1=$(netd sandbox list --json | jq -r '.[].name' | grep '^cni-' | grep -vx "$SB_V4")
HOST_K1=$(netd sandbox show "$SB_K1" | jq -r .host_ifname)
netd_down
cni STATUS "" "" "" <<<"$(conf 1.1.0)"
eq "STATUS with netd down: code 50" "1:50" "$RC:$(code)"
cni ADD k4id "$(nsp k4)" eth0 <<<"$(conf)"
eq "ADD with netd down: code 11 (try again later)" "1:11" "$RC:$(code)"
has "the message says netd is not reachable" "not reachable" "$(jqo .msg)"
fail "ADD with netd down creates no interface in the container" cexec k4 ip link show eth0
cni DEL k1id "$(nsp k1)" eth0 <<<"$(conf)"
eq "DEL with netd down still succeeds" 0 "$RC"
ok "and leaves a tombstone" test -f "$TOMB/$SB_K1"
netd_up || { t_fail "netd restarts"; t_summary; exit 1; }
fail "restarted netd dropped the tombstoned attachment" netd sandbox show "$SB_K1"
ok "tombstone removed" test ! -e "$TOMB/$SB_K1"
eq "its host veth is gone" 0 "$(world_exec host ip link show "$HOST_K1" 2>/dev/null | wc -l)"
eq "its jump is gone" "" "$(sb_jump "$HOST_K1")"
fail "the container lost eth0" cexec k1 ip link show eth0
eq "restarted netd kept the other sandbox and the IPv4-only one" 2 "$(netd sandbox list --json | jq 'length')"
eq "the IPv4-only sandbox was restored without IPv6" "$V4_IP null" "$(netd sandbox show "$SB_V4" | jq -r '.ipv4 + " " + (.ipv6 | tostring)')"
eq "and with its container and pod" "$POD_WANT" "$(netd sandbox show "$SB_V4" | jq -r "$POD_SHOW")"
NFT=$(world_exec host nft list table inet netd)
has "its IPv4 anti-spoofing element is still there" "$HOST_V4\" . $V4_IP" "$NFT"
hasnt "and still no IPv6 one" "$HOST_V4\" . fd00" "$NFT"
eq "IPv4-only container still connects after the restart" "pypi.org ok" "$(cexec v4 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/ 2>&1)"
cni DEL v4id "" eth0 <<<"$(conf 1.0.0 ',"policy":"python-dev"')"
eq "DEL of the IPv4-only attachment: exit 0" 0 "$RC"
fail "its netd record is gone" netd sandbox show "$SB_V4"
rm -rf "/etc/netns/$WORLD_PREFIX-v4"

netd_down
t_summary
