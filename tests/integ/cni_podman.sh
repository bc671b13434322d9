#!/usr/bin/env bash
# podman (Debian's 4.x, runc, CNI network backend) with a network whose
# conflist uses netd-cni.  podman runs in the world's host netns with its
# own --root/--runroot/--tmpdir and a CONTAINERS_CONF whose
# network_config_dir and cni_plugin_dirs are the test's own dirs; rlimits
# no higher than this machine allows (cni-notes §2.2).  The image is a
# busybox rootfs the test builds and `podman import`s (no registry).
# CNI_ARGS=NETD_POLICY=x (which podman passes through) selects the policy;
# without it the conflist's policy applies.  After the container exits
# nothing is left (no veth, no chain, no pins, no netd record).  podman
# runs in a private mount namespace where the test's own dirs are grafted
# over /var/lib/containers (its blob cache, whatever --root says),
# /var/lib/cni (libcni's cache) and /etc/containers (policy.json, which
# `podman import` reads; the test writes its own): a fresh machine need
# have none of them, and no path appears on the machine
# (tests/integ/lib_mntns.sh).  /run/netns stays shared with the test's
# namespace: podman mounts its containers' netns files there, and netd opens
# them.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	skip_loud "podman/runc are not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
[ -x "$CNI_BIN" ] || { echo "missing $CNI_BIN (make build/asan/netd-cni)"; echo "0 passed, 1 failed"; exit 1; }
world_up "ndp$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
cni_policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }

P=$WORLD_DIR/podman
mkdir -p "$P/net.d" "$P/bin" "$P/tmp" "$P/vlc" "$P/cnicache" "$P/stage" "$P/etc"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$P/etc/policy.json"
paths_before=$(host_paths)
cp "$CNI_BIN" "$P/bin/netd-cni"
cat >"$P/net.d/netd-pod.conflist" <<-JSON
{
  "cniVersion": "1.0.0",
  "name": "netd-pod",
  "plugins": [
    { "type": "netd-cni", "socket": "$NETD_SOCKET", "tombstoneDir": "$WORLD_DIR/state/tombstones",
      "policy": "deny-all" }
  ]
}
JSON
cat >"$P/containers.conf" <<-TOML
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
network_backend = "cni"
cni_plugin_dirs = ["$P/bin"]
network_config_dir = "$P/net.d"
TOML

# pm ARGS... - podman in the world's host netns with the test's state
# (runc's own state too: --runtime-flag root=), in its own mount namespace.
pm() {
	CONTAINERS_CONF=$P/containers.conf timeout 120 nsenter --net="$WORLD_HOST_NETNS" -- \
		unshare -m --propagation unchanged -- "$PWD/tests/integ/lib_mntns.sh" --share /run/netns "$P/stage" \
		"$P/vlc=/var/lib/containers" "$P/cnicache=/var/lib/cni" "$P/etc=/etc/containers" -- \
		podman --root "$P/root" --runroot "$P/runroot" --tmpdir "$P/tmp" \
		--runtime runc --runtime-flag "root=$P/runc" --network-backend cni \
		--cgroup-manager cgroupfs --events-backend file "$@"
}

cni_rootfs "$P/rootfs" || { t_fail "busybox rootfs (busybox-static)"; t_summary; exit 1; }
tar -C "$P/rootfs" -cf "$P/rootfs.tar" .
if ! pm import "$P/rootfs.tar" localhost/ndtest/busybox:1 >"$P/import.log" 2>&1 ||
	! pm run --rm --network none localhost/ndtest/busybox:1 /bin/true >"$P/probe.log" 2>&1; then
	skip_loud "podman cannot run a container on this machine; its output:"
	tail -n 20 "$P/import.log" "$P/probe.log"
	netd_down >/dev/null
	echo "0 passed, 1 failed"
	exit 1
fi
t_pass "podman runs a container with private state in the world's host netns"

script='
ip -4 addr show eth0
nslookup pypi.org 192.0.2.53 && echo MARK-ALLOWED-RESOLVED
nslookup example.com 192.0.2.53 || echo MARK-DENIED-NOT-RESOLVED
printf "GET / HTTP/1.0\r\nHost: pypi.org\r\n\r\n" | nc -w 3 198.51.100.10 80
printf "GET / HTTP/1.0\r\nHost: example.com\r\n\r\n" | nc -w 3 203.0.113.66 80 || echo MARK-DENIED-NOT-CONNECTED
printf "GET / HTTP/1.0\r\nHost: pypi.org\r\n\r\n" | nc -w 3 198.51.100.10 443 || echo MARK-OTHER-PORT-NOT-CONNECTED
'

# no_leftovers WHAT - nothing of a finished container is left anywhere.
no_leftovers() {
	eq "$1: netd has no record left" 0 "$(netd sandbox list --json | jq length)"
	eq "$1: no host veth left" 0 "$(world_exec host ip -o link show | grep -c ' nd[0-9a-f]*@')"
	eq "$1: no policy chain left (gone with its last sandbox)" "" "$(policy_chains)"
	hasnt "$1: no pins left" "198.51.100.10" "$(world_exec host nft list table inet netd)"
}

# ---- CNI_ARGS=NETD_POLICY=web80 ---------------------------------------------
out=$(CNI_ARGS="NETD_POLICY=web80" pm run --rm --name pweb --network netd-pod \
	localhost/ndtest/busybox:1 /bin/sh -c "$script" 2>&1)
echo "$out" | sed 's/^/    | /'
has "the container got eth0 with netd's address" "inet 10.87." "$out"
has "allowed name resolves" "MARK-ALLOWED-RESOLVED" "$out"
has "allowed name connects" "pypi.org ok" "$out"
has "denied name does not resolve" "MARK-DENIED-NOT-RESOLVED" "$out"
has "denied address does not connect" "MARK-DENIED-NOT-CONNECTED" "$out"
has "allowed name on another port does not connect" "MARK-OTHER-PORT-NOT-CONNECTED" "$out"
has "CNI_ARGS NETD_POLICY=web80 selected the policy" '"policy":"web80"' "$(grep '"sandbox"' "$NETD_AUDIT")"
no_leftovers "after podman run --rm (web80)"

# ---- no CNI_ARGS: the conflist's policy (deny-all) ---------------------------
out=$(pm run --rm --name pdeny --network netd-pod localhost/ndtest/busybox:1 /bin/sh -c "$script" 2>&1)
echo "$out" | sed 's/^/    | /'
has "deny-all container got eth0" "inet 10.87." "$out"
hasnt "deny-all container: pypi.org does not resolve" "MARK-ALLOWED-RESOLVED" "$out"
hasnt "deny-all container: nothing connects" "pypi.org ok" "$out"
has "the conflist's policy applied" '"policy":"deny-all"' "$(grep '"sandbox"' "$NETD_AUDIT")"
no_leftovers "after podman run --rm (deny-all)"

# ---- a detached container, then podman rm -f ----------------------------------
ok "podman run -d" pm run -d --name pdet --network netd-pod -e X=1 localhost/ndtest/busybox:1 /bin/sleep 600
eq "while it runs, netd has its record" 1 "$(netd sandbox list --json | jq length)"
ok "podman rm -f" pm rm -f -t 0 pdet
no_leftovers "after podman rm -f"

pm rm -a -f >/dev/null 2>&1
pm rmi -a -f >/dev/null 2>&1
eq "no path appeared on the machine (/var/lib/containers, /var/lib/cni, ...)" \
	"$paths_before" "$(host_paths)"
netd_down
t_summary
