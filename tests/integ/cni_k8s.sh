#!/usr/bin/env bash
# netd-cni chained after a cluster's own CNI (Debian's bridge + host-local
# stand in for it), called exactly as kubelet + containerd 1.6 CRI call a
# conflist (shared/cni-notes.md §2): the whole environment plus CNI_*,
# CNI_CONTAINERID = the 64-hex sandbox id, CNI_NETNS =
# /var/run/netns/cni-<uuid>, CNI_ARGS = IgnoreUnknown + the K8S_POD_* keys in
# no fixed order, stdin re-marshalled with sorted keys, `capabilities`
# left in, runtimeConfig."io.kubernetes.cri.pod-annotations" = every pod
# annotation, prevResult from the plugin before; DEL on StopPodSandbox with
# the netns and the cached result, then on RemovePodSandbox with
# CNI_NETNS="" and no prevResult.
#
# The conflist is the one deploy/kubernetes installs ("optIn": true): only
# pods that opt in (annotation netd.io/policy, or a namespace listed in
# "namespaces") are enforced; every other pod - CoreDNS in kube-system here -
# gets prevResult back unchanged, with netd never asked, and keeps working
# while netd is down.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make asan)"; echo "0 passed, 1 failed"; exit 1; }
REF=/usr/lib/cni
if [ ! -x $REF/bridge ] || [ ! -x $REF/host-local ]; then
	echo "cni_k8s: FAILED: containernetworking-plugins is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
world_up "ndk$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETNSES=()
k8s_cleanup() {
	local n
	for n in "${NETNSES[@]}"; do
		ip netns pids "$n" 2>/dev/null | while read -r p; do kill -KILL "$p"; done
		ip netns del "$n" 2>/dev/null
	done
	world_down
}
trap k8s_cleanup EXIT
netd_up || { echo "0 passed, 1 failed"; exit 1; }

BIN=$WORLD_DIR/cnibin
mkdir -p "$BIN" "$WORLD_DIR/ipam"
ln -s $REF/bridge $REF/host-local "$BIN/"
ln -s "$CNI_BIN" "$BIN/netd-cni"
BR=k8sbr0
GW=10.88.0.1
# The pods' replies come back through the world's host netns.
world_exec inet ip route add 10.88.0.0/24 via 192.0.2.1

# The conflist the DaemonSet's installer writes: the cluster's own chain
# with deploy/kubernetes's netd-cni entry appended (socket and tombstones
# moved into the world).
NETD_ENTRY=$(python3 -c '
import json, sys, yaml
for d in yaml.safe_load_all(open("deploy/kubernetes/configmap.yaml")):
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "netd-cni-config":
        print(json.dumps(json.loads(d["data"]["netd-cni.json"])))' |
	jq -c --arg s "$NETD_SOCKET" --arg t "$WORLD_DIR/state/tombstones" \
		'.socket = $s | .tombstoneDir = $t')
[ -n "$NETD_ENTRY" ] || { t_fail "deploy/kubernetes/configmap.yaml has the netd-cni entry"; t_summary; exit 1; }
CONFLIST=$(jq -c --argjson netd "$NETD_ENTRY" '.plugins += [$netd]' <<-JSON
{ "cniVersion": "0.4.0", "name": "cbr0",
  "plugins": [
    { "type": "bridge", "bridge": "$BR", "isGateway": true, "ipMasq": false,
      "ipam": { "type": "host-local", "dataDir": "$WORLD_DIR/ipam",
                "ranges": [[{ "subnet": "10.88.0.0/24", "gateway": "$GW" }]],
                "routes": [{ "dst": "0.0.0.0/0" }] } }
  ] }
JSON
)
eq "the shipped entry is chained and opt-in" "chained true" \
	"$(jq -r '.plugins[1] | "\(.mode) \(.optIn)"' <<<"$CONFLIST")"

# cri_conf I ANNOTATIONS PREV - plugin I's stdin as libcni 1.1 builds it:
# name and cniVersion injected, runtimeConfig = declared capabilities the
# runtime has values for (containerd always has the pod's annotations),
# prevResult when given, every map re-marshalled with sorted keys.
cri_conf() {
	jq -S -c --argjson i "$1" --argjson ann "$2" --argjson prev "${3:-null}" '
		.plugins[$i] as $p
		| $p + {cniVersion: .cniVersion, name: .name}
		+ (if ($p.capabilities // {})["io.kubernetes.cri.pod-annotations"]
		   then {runtimeConfig: {"io.kubernetes.cri.pod-annotations": $ann}} else {} end)
		+ (if $prev == null then {} else {prevResult: $prev} end)' <<<"$CONFLIST"
}

# cri CMD I POD NETNS [PREV] - one plugin, as containerd execs it; stdout ->
# $OUT, status -> $RC.  POD is the key of the pod tables below.
cri() {
	local type ann
	type=$(jq -r ".plugins[$2].type" <<<"$CONFLIST")
	ann=${ANN[$3]}
	OUT=$(cri_conf "$2" "$ann" "${5:-}" | nsenter --net="$WORLD_HOST_NETNS" -- env \
		PATH="/opt/cni/bin:$PATH" \
		CNI_COMMAND="$1" CNI_CONTAINERID="${SID[$3]}" CNI_NETNS="$4" CNI_IFNAME=eth0 \
		CNI_ARGS="K8S_POD_UID=${UID_[$3]};IgnoreUnknown=1;K8S_POD_NAMESPACE=${NS[$3]};K8S_POD_INFRA_CONTAINER_ID=${SID[$3]};K8S_POD_NAME=$3" \
		CNI_PATH="$BIN" timeout 60 "$BIN/$type" 2>>"$WORLD_DIR/cni.err")
	RC=$?
}

declare -A NS ANN SID UID_ NETNS RES FINAL
# pod NAME NAMESPACE ANNOTATIONS-JSON
pod() {
	local u
	u=$(cat /proc/sys/kernel/random/uuid)
	NS[$1]=$2
	ANN[$1]=$(jq -c '. + {"kubernetes.io/config.seen": "2024-05-01T10:00:00Z",
		"kubernetes.io/config.source": "api"}' <<<"$3")
	SID[$1]=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	UID_[$1]=$u
	NETNS[$1]=cni-$u
	NETNSES+=("cni-$u")
	ip netns add "cni-$u"
}
# run_pod NAME - RunPodSandbox: the chain's ADDs in order.
run_pod() {
	local p=$1
	cri ADD 0 "$p" "/var/run/netns/${NETNS[$p]}"
	RES[$p]=$OUT
	eq "$p: bridge ADD exits 0" 0 "$RC"
	cri ADD 1 "$p" "/var/run/netns/${NETNS[$p]}" "${RES[$p]}"
	FINAL[$p]=$OUT
	FINAL_RC=$RC
}
pexec() { local p=$1; shift; timeout 30 ip netns exec "${NETNS[$p]}" "$@"; }
pdig() { local p=$1; shift; pexec "$p" dig +time=2 +tries=1 "$@"; }
pcurl() { local p=$1; shift; pexec "$p" curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 8 "$@"; }
sandboxes() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/sandboxes; }
n_sandboxes() { sandboxes | jq '.sandboxes | length'; }
policy_of() {
	sandboxes | jq -r --arg ip "$(jq -r '.ips[0].address | split("/")[0]' <<<"${RES[$1]}")" \
		'.sandboxes[] | select(.ipv4 == $ip) | .policy'
}

pod agent default '{"netd.io/policy": "python-dev"}'
pod coredns kube-system '{}'
pod other default '{"example.com/owner": "team-a"}'
pod sbx agents '{}'
pod sbxweak agents '{"netd.io/policy": "openai-only"}'

# ---- opt-in: enforced -----------------------------------------------------------
run_pod agent
eq "agent (annotated): netd-cni ADD exits 0" 0 "$FINAL_RC"
eq "agent: netd enforces python-dev" python-dev "$(policy_of agent)"
eq "agent: the result is prevResult, nameservers = the gateway" \
	"$(jq -S -c '.dns = {nameservers: ["'$GW'"]}' <<<"${RES[agent]}")" "$(jq -S -c . <<<"${FINAL[agent]}")"
eq "agent: pypi.org resolves through netd" 198.51.100.10 "$(pdig agent @192.0.2.53 +short pypi.org A)"
has "agent: pypi.org connects" "pypi.org ok" "$(pcurl agent https://pypi.org/ 2>&1)"
has "agent: example.com is NXDOMAIN" NXDOMAIN "$(pdig agent @192.0.2.53 example.com A)"
fail "agent: example.com's address is dropped" pcurl agent https://example.com/ --resolve example.com:443:203.0.113.66

# ---- not opted in: passed through, untouched --------------------------------------
run_pod coredns
eq "coredns (kube-system, no annotation): ADD exits 0" 0 "$FINAL_RC"
eq "coredns: the result is prevResult byte for byte (as JSON)" \
	"$(jq -S -c . <<<"${RES[coredns]}")" "$(jq -S -c . <<<"${FINAL[coredns]}")"
eq "coredns: netd has no sandbox for it" 1 "$(n_sandboxes)"
has "coredns: its own DNS queries reach the resolver (no redirect)" "203.0.113.66" \
	"$(pdig coredns @192.0.2.53 +short example.com A)"
has "coredns: example.com connects (no policy)" "example.com ok" \
	"$(pcurl coredns https://example.com/ --resolve example.com:443:203.0.113.66 2>&1)"
run_pod other
eq "a pod with other annotations only: passed through" \
	"$(jq -S -c . <<<"${RES[other]}")" "$(jq -S -c . <<<"${FINAL[other]}")"
eq "still one sandbox in netd" 1 "$(n_sandboxes)"

# ---- opt-in by namespace (the shipped entry lists "agents": python-dev) -----------------
run_pod sbx
eq "sbx (namespace agents, no annotation): ADD exits 0" 0 "$FINAL_RC"
eq "sbx: the namespace's policy python-dev" python-dev "$(policy_of sbx)"
has "sbx: example.com is NXDOMAIN" NXDOMAIN "$(pdig sbx @192.0.2.53 example.com A)"
eq "sbx: pypi.org resolves" 198.51.100.10 "$(pdig sbx @192.0.2.53 +short pypi.org A)"
run_pod sbxweak
eq "sbxweak: a pod annotation does not override its namespace's policy" python-dev \
	"$(policy_of sbxweak)"

# ---- CHECK ----------------------------------------------------------------------------
cri CHECK 1 agent "/var/run/netns/${NETNS[agent]}" "${FINAL[agent]}"
eq "agent: CHECK exits 0" 0 "$RC"

# ---- netd down: pods that did not opt in do not care ----------------------------------
netd_down
pod late kube-system '{}'
run_pod late
eq "netd down: a pod that does not opt in still starts" 0 "$FINAL_RC"
eq "netd down: ... with prevResult unchanged" \
	"$(jq -S -c . <<<"${RES[late]}")" "$(jq -S -c . <<<"${FINAL[late]}")"
cri CHECK 1 coredns "/var/run/netns/${NETNS[coredns]}" "${FINAL[coredns]}"
eq "netd down: CHECK of a passed-through pod exits 0" 0 "$RC"
pod late2 default '{"netd.io/policy": "python-dev"}'
run_pod late2
eq "netd down: an opted-in pod fails closed (exit 1)" 1 "$FINAL_RC"
eq "netd down: ... with code 11 (try again later)" 11 "$(jq -r .code <<<"${FINAL[late2]}")"
cri DEL 0 late2 "/var/run/netns/${NETNS[late2]}" "${RES[late2]}"
cri DEL 1 late "" ""
eq "netd down: DEL of a passed-through pod exits 0" 0 "$RC"
hasnt "netd down: ... and writes no tombstone for it" "cni-" \
	"$(ls "$WORLD_DIR/state/tombstones" 2>/dev/null)"
cri DEL 0 late "" ""
netd_up || { t_fail "netd restarts"; t_summary; exit 1; }

# ---- StopPodSandbox then RemovePodSandbox, for every pod -------------------------------
for p in agent coredns other sbx sbxweak; do
	cri DEL 1 "$p" "/var/run/netns/${NETNS[$p]}" "${FINAL[$p]}"
	eq "$p: StopPodSandbox DEL of netd-cni exits 0" 0 "$RC"
	cri DEL 0 "$p" "/var/run/netns/${NETNS[$p]}" "${FINAL[$p]}"
	cri DEL 1 "$p" "" ""
	eq "$p: RemovePodSandbox DEL (no netns, no prevResult) exits 0" 0 "$RC"
	cri DEL 0 "$p" "" ""
done
eq "netd has no record left" 0 "$(n_sandboxes)"
hasnt "no pod address left in netd's table" "10.88.0." \
	"$(timeout 30 ip netns exec "$WORLD_HOST_NS" nft list table inet netd)"
world_exec inet ip route del 10.88.0.0/24 via 192.0.2.1
netd_down
t_summary
