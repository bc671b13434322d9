#!/usr/bin/env bash
# Docker (no CNI): docs/docker.md's attach pattern, for real.  dockerd runs in
# the world's host netns and a private mount namespace, with its own
# data-root, exec-root, pidfile and socket, no bridge and no iptables; the
# image is a busybox rootfs the test builds and `docker import`s.  Then
#   docker run --network none ... ; netd sandbox create --pid PID ; ... ;
#   netd sandbox delete ; docker rm -f
# and the container gets exactly its policy's egress.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
	skip_loud "docker.io is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
world_up "ndk$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
cni_policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }

D=$WORLD_DIR/docker
mkdir -p "$D"
echo '{}' >"$D/daemon.json"
export DOCKER_HOST=unix://$D/docker.sock
dk() { timeout 60 docker "$@"; }

# dockerd writes /run/docker/plugins and /etc/docker/key.json, and its
# containerd's shims /run/containerd/s, whatever the flags say: in its
# private mount namespace the test's own dirs are grafted over those
# (tests/integ/lib_mntns.sh), so a fresh machine needs none of them and no
# path appears on the machine.
mkdir -p "$D/run-docker" "$D/run-containerd" "$D/etc-docker" "$D/stage"
paths_before=$(host_paths)
world_spawn host "$D/dockerd.log" unshare -m --propagation private -- \
	"$PWD/tests/integ/lib_mntns.sh" "$D/stage" "$D/run-docker=/run/docker" \
	"$D/run-containerd=/run/containerd" "$D/etc-docker=/etc/docker" -- \
	dockerd --config-file "$D/daemon.json" --data-root "$D/data" --exec-root "$D/exec" \
	--pidfile "$D/docker.pid" -H "$DOCKER_HOST" --group root \
	--bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
	--userland-proxy=false --storage-driver=vfs
DOCKERD_PID=$WORLD_LAST_PID
up=0
for ((i = 0; i < 300; i++)); do
	if docker info >/dev/null 2>&1; then up=1; break; fi
	kill -0 "$DOCKERD_PID" 2>/dev/null || break
	sleep 0.2
done
if [ "$up" != 1 ]; then
	skip_loud "dockerd cannot start on this machine; its log:"
	tail -n 20 "$D/dockerd.log"
	netd_down >/dev/null
	echo "0 passed, 1 failed"
	exit 1
fi
t_pass "dockerd runs in the world's host netns with private dirs"

# The machine's own namespace is untouched: no docker0, no iptables chains.
eq "no docker0 bridge in the root netns" 0 "$(ip link show docker0 2>/dev/null | wc -l)"

cni_rootfs "$D/rootfs" || { t_fail "busybox rootfs (busybox-static)"; t_summary; exit 1; }
tar -C "$D/rootfs" -cf "$D/rootfs.tar" .
ok "docker import of the busybox rootfs" dk import "$D/rootfs.tar" ndtest/busybox:1

# run_c NAME [v4only] - a container with no network and a resolv.conf we
# fill later.  Docker turns IPv6 off in a --network none container: netd
# then attaches it IPv4 only; without "v4only" the container turns IPv6 back
# on (docs/docker.md shows both) and gets netd's IPv6 address too.
run_c() {
	local v6=(--sysctl net.ipv6.conf.all.disable_ipv6=0 --sysctl net.ipv6.conf.default.disable_ipv6=0)
	[ "${2:-}" = v4only ] && v6=()
	: >"$D/$1.resolv"
	dk run -d --network none --name "$1" -v "$D/$1.resolv:/etc/resolv.conf:ro" \
		"${v6[@]}" ndtest/busybox:1 /bin/sleep 600 >/dev/null
}
cpid() { dk inspect -f '{{.State.Pid}}' "$1"; }
cx() { local c=$1; shift; timeout 30 docker exec "$c" "$@"; }
# http_get C ADDR HOST [PORT] - body of GET / from inside container C; fails
# if nothing answers.  If nc itself cannot run there (docker exec's 125-127)
# nothing was tried: it says so and succeeds with no output, so that neither
# a "does not connect" check nor an "answers" check can pass on it.
http_get() {
	local out rc=0
	out=$(printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' "$3" |
		timeout 30 docker exec -i "$1" nc -w 3 "$2" "${4:-80}") || rc=$?
	if [ "$rc" -ge 125 ] && [ "$rc" -le 127 ]; then
		echo "http_get: nc could not run in container $1 (exit $rc): nothing was tried" >&2
		return 0
	fi
	[ "$rc" = 0 ] && [ -n "$out" ] || return 1
	tail -n 1 <<<"$out"
}

ok "docker run --network none (web80 container)" run_c dweb
ok "docker run --network none (deny-all container, IPv6 left off)" run_c ddeny v4only
fail "before attaching, the container has no way out" http_get dweb 198.51.100.10 pypi.org

# ---- attach: docs/docker.md's pattern -----------------------------------
ok "netd sandbox create --pid (web80)" sb_create dweb web80 --pid "$(cpid dweb)"
ok "netd sandbox create --pid (deny-all)" sb_create ddeny deny-all --pid "$(cpid ddeny)"
for c in dweb ddeny; do
	gw=$(netd sandbox show "$(sb_name $c)" | jq -r .gateway4)
	echo "nameserver $gw" >"$D/$c.resolv"	# same inode: the bind mount sees it
done

has "the container has eth0 with netd's address" "inet 10.87." "$(cx dweb ip -4 addr show eth0)"
has "with IPv6 on, it has netd's IPv6 address too" "inet6 fd00:87:" "$(cx dweb ip -6 addr show eth0)"
has "IPv6 off (Docker's default): attached IPv4 only" "inet 10.87." "$(cx ddeny ip -4 addr show eth0)"
eq "IPv6 off: netd records no IPv6 address" null "$(netd sandbox show "$(sb_name ddeny)" | jq -r .ipv6)"
has "allowed name resolves in the container" "198.51.100.10" "$(cx dweb nslookup pypi.org 2>&1)"
# busybox-static's wget crashes in static glibc's resolver, so the name is
# resolved by nslookup above (which pinned its address) and nc connects to
# that address with the name in the Host header.
eq "allowed name connects after its lookup (web80)" "pypi.org ok" "$(http_get dweb 198.51.100.10 pypi.org)"
fail "denied name does not resolve" cx dweb nslookup example.com
fail "denied address does not connect" http_get dweb 203.0.113.66 example.com
fail "allowed name on another port does not connect" http_get dweb 198.51.100.10 pypi.org 443
fail "deny-all container: pypi.org does not resolve" cx ddeny nslookup pypi.org
fail "deny-all container: nothing connects" http_get ddeny 198.51.100.10 pypi.org

# ---- detach: delete before docker rm ------------------------------------------
HOST_IF=$(netd sandbox show "$(sb_name dweb)" | jq -r .host_ifname)
ok "netd sandbox delete (web80)" netd sandbox delete "$(sb_name dweb)"
ok "netd sandbox delete (deny-all)" netd sandbox delete "$(sb_name ddeny)"
fail "detached container lost eth0" cx dweb ip link show eth0
ok "docker rm -f" dk rm -f dweb ddeny
eq "no host veth left" 0 "$(world_exec host ip link show "$HOST_IF" 2>/dev/null | wc -l)"
eq "no policy chain left (gone with its last sandbox)" "" "$(policy_chains)"
hasnt "no pins left" "198.51.100.10" "$(world_exec host nft list table inet netd)"
eq "netd has no sandboxes" 0 "$(netd sandbox list --json | jq length)"

# ---- stop dockerd (by PID); world_down sweeps anything left in the netns ----------
kill -TERM "$DOCKERD_PID" 2>/dev/null
for ((i = 0; i < 150; i++)); do world__alive "$DOCKERD_PID" || break; sleep 0.1; done
fail "dockerd stopped" world__alive "$DOCKERD_PID"
eq "no path appeared on the machine (/run/docker, /run/containerd, /etc/docker/key.json)" \
	"$paths_before" "$(host_paths)"
netd_down
t_summary
