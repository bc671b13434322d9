#!/usr/bin/env bash
# containerd's `ctr run --cni` with a conflist that uses netd-cni.
# containerd runs in the world's host netns and a private mount namespace
# with its own config, root, state and socket, where the test's own dirs
# are grafted over the paths it and ctr use whatever the flags say
# (/etc/cni/net.d and /opt/cni/bin, where ctr looks for CNI plugins;
# /run/containerd, its shims' fifos and sockets; /var/lib/cni, libcni's
# cache).  A fresh machine has none of them: tests/integ/lib_mntns.sh makes
# them inside the namespace only.  ctr runs in the same mount namespace
# (nsenter), so both see one /run/containerd.  Inside the container an
# allowed name resolves and connects, a denied one does not; after the
# container exits nothing is left, and no path appeared on the machine.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null || ! command -v runc >/dev/null; then
	skip_loud "containerd/runc are not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
world_up "ndr$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
cni_policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }

CD=$WORLD_DIR/ctd
mkdir -p "$CD/net.d" "$CD/cnibin" "$CD/run" "$CD/cnicache" "$CD/stage"
cp "$CNI_BIN" "$CD/cnibin/netd-cni"
paths_before=$(host_paths)
cat >"$CD/net.d/10-netd.conflist" <<-JSON
{
  "cniVersion": "1.0.0",
  "name": "netd-ctr",
  "plugins": [
    { "type": "netd-cni", "socket": "$NETD_SOCKET", "tombstoneDir": "$WORLD_DIR/state/tombstones",
      "policy": "web80" }
  ]
}
JSON
cat >"$CD/config.toml" <<-TOML
version = 2
root = "$CD/root"
state = "$CD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CD/c.sock"
[ttrpc]
  address = "$CD/c.sock.ttrpc"
TOML
world_spawn host "$CD/containerd.log" unshare -m --propagation private -- \
	"$PWD/tests/integ/lib_mntns.sh" "$CD/stage" "$CD/net.d=/etc/cni/net.d" \
	"$CD/cnibin=/opt/cni/bin" "$CD/run=/run/containerd" "$CD/cnicache=/var/lib/cni" -- \
	containerd -c "$CD/config.toml"
CTD_PID=$WORLD_LAST_PID
# ctx CMD... - CMD in containerd's net and mount namespaces.
ctx() { nsenter --net="$WORLD_HOST_NETNS" --mount="/proc/$CTD_PID/ns/mnt" -- "$@"; }
up=0
for ((i = 0; i < 200; i++)); do
	# ctr dials for ~10 s when the socket is not there: 2 s a try bounds the wait
	if ctx timeout 2 ctr -a "$CD/c.sock" version >/dev/null 2>&1; then up=1; break; fi
	kill -0 "$CTD_PID" 2>/dev/null || break
	sleep 0.1
done
if [ "$up" != 1 ]; then
	skip_loud "containerd cannot start on this machine; its log:"
	tail -n 20 "$CD/containerd.log"
	netd_down >/dev/null
	echo "0 passed, 1 failed"
	exit 1
fi
t_pass "containerd runs in the world's host netns with private dirs"
cni_rootfs "$CD/rootfs" || { t_fail "busybox rootfs (busybox-static)"; t_summary; exit 1; }

# ctr_run ID CMD... - `ctr run --cni --rm` in containerd's namespaces,
# where /etc/cni/net.d and /opt/cni/bin are the test's own.
ctr_run() {
	local id=$1
	shift
	ctx timeout 120 ctr -a "$CD/c.sock" run --cni --rm --runc-root "$CD/runc" \
		--rootfs "$CD/rootfs" "$id" "$@"
}

# Inside: the address, DNS through netd (any server address lands on its
# proxy), an allowed and a denied connection.  Markers say what happened.
script='
ip -4 addr show eth0
nslookup pypi.org 192.0.2.53 && echo MARK-ALLOWED-RESOLVED
nslookup example.com 192.0.2.53 || echo MARK-DENIED-NOT-RESOLVED
printf "GET / HTTP/1.0\r\nHost: pypi.org\r\n\r\n" | nc -w 3 198.51.100.10 80
printf "GET / HTTP/1.0\r\nHost: example.com\r\n\r\n" | nc -w 3 203.0.113.66 80 || echo MARK-DENIED-NOT-CONNECTED
printf "GET / HTTP/1.0\r\nHost: pypi.org\r\n\r\n" | nc -w 3 198.51.100.10 443 || echo MARK-OTHER-PORT-NOT-CONNECTED
'
out=$(ctr_run "c1-$$" /bin/sh -c "$script" 2>&1)
echo "$out" | sed 's/^/    | /'
has "the container got eth0 with netd's address" "inet 10.87." "$out"
has "allowed name resolves" "MARK-ALLOWED-RESOLVED" "$out"
has "allowed name connects" "pypi.org ok" "$out"
has "denied name does not resolve" "MARK-DENIED-NOT-RESOLVED" "$out"
has "denied address does not connect" "MARK-DENIED-NOT-CONNECTED" "$out"
has "allowed name on another port does not connect" "MARK-OTHER-PORT-NOT-CONNECTED" "$out"
has "the policy came from the conflist" '"policy":"web80"' "$(cat "$NETD_AUDIT")"

# After the container exits, ctr sent DEL (with an empty CNI_NETNS).
eq "netd has no record left" 0 "$(netd sandbox list --json | jq length)"
eq "no host veth left" 0 "$(world_exec host ip -o link show | grep -c ' nd[0-9a-f]*@')"
eq "no policy chain left (gone with its last sandbox)" "" "$(policy_chains)"
hasnt "no pins left" "198.51.100.10" "$(world_exec host nft list table inet netd)"

# ctr_gone ID - a container whose task never started (the CNI ADD failed)
# is left created: runc's init waits in the container's own netns, where the
# world's sweep does not look, and its fifos stay under /run/containerd
# (the test's $CD/run).
# Delete it by runc's own state (its init PID), then containerd's record.
ctr_gone() {
	local id=$1 st="$CD/runc/default/$1/state.json" pid=""
	[ -f "$st" ] && pid=$(jq -r '.init_process_pid // empty' "$st" 2>/dev/null)
	runc --root "$CD/runc/default" delete --force "$id" >/dev/null 2>&1
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
	fi
	ctx ctr -a "$CD/c.sock" containers delete "$id" >/dev/null 2>&1
	rm -f "$CD"/run/fifo/*/"$id"-* 2>/dev/null
	rmdir "$CD"/run/fifo/* 2>/dev/null	# only the ones left empty
	if [ -n "$pid" ]; then
		for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		fail "the never-started container's init ($pid) is gone" kill -0 "$pid"
	fi
}

# netd down: ADD fails closed with code 11 and the container never runs.
netd_down
out=$(ctr_run "c2-$$" /bin/sh -c 'echo MARK-RAN' 2>&1)
hasnt "with netd down the container does not run" "MARK-RAN" "$out"
has "ctr reports netd-cni's try-again-later error" "netd is not reachable" "$out"
ctr_gone "c2-$$"

# Stop containerd by PID (world_down sweeps the netns afterwards anyway).
kill -TERM "$CTD_PID" 2>/dev/null
for ((i = 0; i < 100; i++)); do world__alive "$CTD_PID" || break; sleep 0.1; done
fail "containerd stopped" world__alive "$CTD_PID"
eq "no path appeared on the machine (/etc/cni, /opt/cni, /run/containerd, ...)" \
	"$paths_before" "$(host_paths)"
t_summary
