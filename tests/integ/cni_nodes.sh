#!/usr/bin/env bash
# Two "nodes" in one private world: the world's host netns (node A,
# 192.0.2.1) and a second host netns (node B, 192.0.2.130 on its own link to
# the inet side).  Each runs its own netd with the pool section of
# deploy/kubernetes's netd.yaml and its own NETD_NODE_IP, as the DaemonSet
# sets it from status.hostIP; two pods on each node attach in interface mode
# (netd's own pool).  Control first: with the old one-pool-for-all config,
# the nodes hand out the same address.  Then: every pod address is
# distinct, inside its node's block, and each pod's DNS goes through its own
# node's netd.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make asan)"; echo "0 passed, 1 failed"; exit 1; }
world_up "ndn$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }

# Node B: PREFIX-host2, so world_down removes it with the rest.
H2=$WORLD_PREFIX-host2
ip netns add "$H2"
ip -n "$H2" link set lo up
ip -n "$H2" link add eth0 type veth peer name down1 netns "$WORLD_INET_NS"
ip -n "$H2" addr add 192.0.2.130/30 dev eth0
ip -n "$H2" link set eth0 up
ip -n "$H2" route add default via 192.0.2.129
ip -n "$WORLD_INET_NS" addr add 192.0.2.129/30 dev down1
ip -n "$WORLD_INET_NS" link set down1 up
ip netns exec "$H2" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
mkdir -p "/etc/netns/$H2"
cp "/etc/netns/$WORLD_HOST_NS/resolv.conf" "/etc/netns/$H2/resolv.conf" 2>/dev/null ||
	echo "nameserver 192.0.2.53" >"/etc/netns/$H2/resolv.conf"

POOL_SHIPPED=$(python3 -c '
import yaml
for d in yaml.safe_load_all(open("deploy/kubernetes/configmap.yaml")):
    if d and d["metadata"]["name"] == "netd-config":
        c = yaml.safe_load(d["data"]["netd.yaml"])
        print(yaml.safe_dump({"pool": c["pool"]}).strip())')
has "the shipped config carves per node" node_block4 "$POOL_SHIPPED"

declare -A SOCK PID LOG
# node_up NODE NETNS NODE_IP POOL_YAML - one netd per node, own state.
node_up() {
	local n=$1 d=$WORLD_DIR/$1 i
	mkdir -p "$d"
	SOCK[$n]=$d/netd.sock
	LOG[$n]=$d/netd.log
	{
		echo "socket: $d/netd.sock"
		echo "state_dir: $d/state"
		echo "policy_dir: $PWD/policies"
		echo "audit_log: $d/audit.jsonl"
		echo "upstream: [192.0.2.53]"
		echo "egress_interface: eth0"
		echo "$4"
	} >"$d/netd.yaml"
	NETD_NODE_IP=$3 nsenter --net="/run/netns/$2" -- env NETD_NODE_IP="$3" \
		"$NETD_BIN" run --config "$d/netd.yaml" </dev/null >"${LOG[$n]}" 2>&1 &
	PID[$n]=$!
	world_pid_track "${PID[$n]}"
	for ((i = 0; i < 300; i++)); do
		NETD_SOCKET="${SOCK[$n]}" "$NETD_BIN" status >/dev/null 2>&1 && return 0
		kill -0 "${PID[$n]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "${LOG[$n]}" >&2
	return 1
}
node_down() {
	local n=$1 i
	kill -TERM "${PID[$n]}" 2>/dev/null
	for ((i = 0; i < 100; i++)); do kill -0 "${PID[$n]}" 2>/dev/null || break; sleep 0.1; done
	wait "${PID[$n]}" 2>/dev/null
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "${LOG[$n]}"; then
		t_fail "netd on $n ran clean under ASan/UBSan" "$(grep -A20 -E 'ERROR: |runtime error:' "${LOG[$n]}" | head -40)"
	else
		t_pass "netd on $n ran clean under ASan/UBSan"
	fi
}
declare -A NODE_NS=([a]=$WORLD_HOST_NS [b]=$H2) NODE_IP=([a]=192.0.2.1 [b]=192.0.2.130)

# add_pod NODE POD - interface-mode ADD on NODE (netd's pool), kubelet-style env.
declare -A POD_IP POD_NS
add_pod() {
	local node=$1 pod=$2 ns=$WORLD_PREFIX-$1-$2 out
	ip netns add "$ns"
	POD_NS[$pod]=$ns
	out=$(jq -n -c --arg s "${SOCK[$node]}" --arg t "$WORLD_DIR/$node/state/tombstones" \
		'{cniVersion: "1.0.0", name: "netd", type: "netd-cni", mode: "interface",
		  socket: $s, tombstoneDir: $t, defaultPolicy: "python-dev"}' |
		nsenter --net="/run/netns/${NODE_NS[$node]}" -- env CNI_COMMAND=ADD \
		CNI_CONTAINERID="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
		CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 CNI_PATH=/opt/cni/bin \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$pod" \
		timeout 60 "$CNI_BIN" 2>>"$WORLD_DIR/cni.err")
	POD_IP[$pod]=$(jq -r '.ips[] | select(.address | contains(".")) | .address | split("/")[0]' <<<"$out")
	POD_IP6[$pod]=$(jq -r '.ips[] | select(.address | contains(":")) | .address | split("/")[0]' <<<"$out")
}
declare -A POD_IP6

# ---- control: the old manifests' one pool for every node -----------------------------------
OLD=$'pool:\n  ipv4: 10.87.0.0/16'
node_up a "$WORLD_HOST_NS" 192.0.2.1 "$OLD" || { t_fail "node a netd starts (old pool)"; t_summary; exit 1; }
node_up b "$H2" 192.0.2.130 "$OLD" || { t_fail "node b netd starts (old pool)"; t_summary; exit 1; }
add_pod a old1
add_pod b old2
ok "control: both nodes attached a pod" test -n "${POD_IP[old1]}" -a -n "${POD_IP[old2]}"
eq "control: with one pool for all, node b's pod gets node a's pod's address (the bug)" \
	"${POD_IP[old1]}" "${POD_IP[old2]}"
node_down a
node_down b
for p in old1 old2; do ip netns del "${POD_NS[$p]}"; done
rm -rf "$WORLD_DIR/a" "$WORLD_DIR/b"

# ---- the shipped pool: one block per node --------------------------------------------------
node_up a "$WORLD_HOST_NS" 192.0.2.1 "$POOL_SHIPPED" || { t_fail "node a netd starts"; t_summary; exit 1; }
node_up b "$H2" 192.0.2.130 "$POOL_SHIPPED" || { t_fail "node b netd starts"; t_summary; exit 1; }
add_pod a a1
add_pod a a2
add_pod b b1
add_pod b b2
all="${POD_IP[a1]} ${POD_IP[a2]} ${POD_IP[b1]} ${POD_IP[b2]}"
eq "four pods got an IPv4 address" 4 "$(wc -w <<<"$all")"
eq "no two pods share an IPv4 address" 4 "$(tr ' ' '\n' <<<"$all" | sort -u | wc -l)"
all6="${POD_IP6[a1]} ${POD_IP6[a2]} ${POD_IP6[b1]} ${POD_IP6[b2]}"
eq "four pods got an IPv6 address" 4 "$(tr ' ' '\n' <<<"$all6" | grep -c . | tr -d ' ')"
eq "no two pods share an IPv6 address" 4 "$(tr ' ' '\n' <<<"$all6" | sort -u | grep -c .)"
for p in a1 a2; do has "$p is in node a's block 10.87.1.0/24" "10.87.1." "${POD_IP[$p]}"; done
for p in b1 b2; do has "$p is in node b's block 10.87.130.0/24" "10.87.130." "${POD_IP[$p]}"; done
has "node a's pods are in fd00:87:0:201::/64" "fd00:87:0:201:" "${POD_IP6[a1]}"
has "node b's pods are in fd00:87:0:282::/64" "fd00:87:0:282:" "${POD_IP6[b1]}"
for p in a1 b1; do
	eq "$p: pypi.org resolves through its node's netd" 198.51.100.10 \
		"$(ip netns exec "${POD_NS[$p]}" dig +time=2 +tries=1 @192.0.2.53 +short pypi.org A)"
	has "$p: example.com is NXDOMAIN" NXDOMAIN \
		"$(ip netns exec "${POD_NS[$p]}" dig +time=2 +tries=1 @192.0.2.53 example.com A)"
done
eq "node a's netd knows only its own two pods" 2 \
	"$(curl -s --unix-socket "${SOCK[a]}" http://netd/v1/sandboxes | jq '.sandboxes | length')"
eq "node b's netd knows only its own two pods" 2 \
	"$(curl -s --unix-socket "${SOCK[b]}" http://netd/v1/sandboxes | jq '.sandboxes | length')"

# ---- a node without its address refuses to start (fail closed) -----------------------------
out=$(nsenter --net="/run/netns/$H2" -- env -u NETD_NODE_IP "$NETD_BIN" run --config "$WORLD_DIR/b/netd.yaml" 2>&1)
has "without NETD_NODE_IP, netd with node_block4 refuses to start" "NETD_NODE_IP" "$out"

node_down a
node_down b
t_summary
