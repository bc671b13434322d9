#!/usr/bin/env bash
# Docker (no CNI): docs/docker.md's attach pattern, for real.  dockerd runs in
# the world's host netns and a private mount namespace, with its own
# data-root, exec-root, pidfile and socket, no bridge and no iptables
# (tests/integ/lib_docker.sh); the image is a busybox rootfs the test builds
# and `docker import`s.  Then
#   docker run --network none ... ; netd sandbox create --pid PID ; ... ;
#   netd sandbox delete ; docker rm -f
# and the container gets exactly its policy's egress.  A container attached
# this way and restarted comes back with a new netns: netd does not follow
# it, and says so (audit log, netd status) instead of leaving it silently
# with only lo.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh
. tests/integ/lib_docker.sh

world_up "ndk$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
trap 'docker_unmount; world_down' EXIT
cni_policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
docker_up || { netd_down >/dev/null; echo "0 passed, 1 failed"; exit 1; }
t_pass "dockerd runs in the world's host netns with private dirs"

# The machine's own namespace is untouched: no docker0, no iptables chains.
eq "no docker0 bridge in the root netns" 0 "$(ip link show docker0 2>/dev/null | wc -l)"

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

# ---- docker restart: a new netns, which netd does not follow, and says so ----
ok "docker run --network none (restarted container)" run_c drst v4only
ok "netd sandbox create --pid (restarted container)" sb_create drst web80 --pid "$(cpid drst)"
RST=$(sb_name drst)
has "before the restart it has netd's eth0" "inet 10.87." "$(cx drst ip -4 addr show eth0)"
ok "docker restart" dk restart -t 1 drst
gone=0
for ((i = 0; i < 50; i++)); do
	netd sandbox show "$RST" >/dev/null 2>&1 || { gone=1; break; }
	sleep 0.1
done
eq "the restarted container's sandbox is retired (its netns is gone)" 1 "$gone"
fail "after the restart the container has no eth0: netd did not re-attach it" cx drst ip link show eth0
rec=$(audit_wait 5 "\"sandbox\":\"$RST\"" '"action":"vanished"')
has "audit: the vanished record says it was not re-attached" '"reattached":false' "$rec"
has "audit: and why" 'not re-attached' "$rec"
st=$(netd status)
eq "netd status: degraded, not ok" degraded "$(jq -r .status <<<"$st")"
has "netd status: a warning names the sandbox and says it was not re-attached" \
	"$RST" "$(jq -r '.warnings[]?' <<<"$st" | grep 'not re-attached')"
eq "netd status: the vanished sandbox is listed with its netns" "/proc/" \
	"$(jq -r --arg n "$RST" '.vanished[]? | select(.sandbox == $n) | .netns[0:6]' <<<"$st")"
ok "a new attach of the restarted container clears the warning" \
	sb_create drst web80 --pid "$(cpid drst)"
eq "netd status: ok again" ok "$(netd status | jq -r .status)"
ok "netd sandbox delete (restarted container)" netd sandbox delete "$RST"
ok "docker rm -f (restarted container)" dk rm -f drst

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

docker_down
netd_down
t_summary
