#!/usr/bin/env bash
# netd-docker, Docker's network driver for netd, with a real dockerd in the
# world (tests/integ/lib_docker.sh) and the two commands a Docker user knows:
#   docker network create -d netd -o netd.policy=web80 agents
#   docker run --network agents ...
# The container gets exactly its policy's egress, with DNS through netd's
# proxy (Docker's embedded DNS forwards from the container's netns, and
# netd answers whatever resolver it asks), and keeps it across docker
# restart, docker stop + start, a netd restart (and netd down while a
# container stops: the tombstone) and a netd-docker restart; docker rm
# leaves nothing (sandbox, links, nft elements, state files of netd and of
# the driver).  Two networks with different policies; a per-container
# policy through --driver-opt; a --ipv6 network; -p refused; a broken
# request on the plugin socket gets a JSON error; netd verify proves a
# Docker sandbox.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh
. tests/integ/lib_docker.sh

DK_BIN=${DK_BIN:-$PWD/build/asan/netd-docker}
world_up "ndr$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
trap 'docker_unmount; world_down' EXIT
cni_policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
docker_up || { netd_down >/dev/null; echo "0 passed, 1 failed"; exit 1; }
PLUGIN_SOCK=$D/run-docker/plugins/netd.sock	# dockerd's /run/docker/plugins/netd.sock
DK_STATE=$WORLD_DIR/dk-state
DK_LOG=$WORLD_DIR/netd-docker.log

# dk_up - start netd-docker (its default is Docker's plugin dir; here dockerd's, grafted).
dk_up() {
	local i
	world_spawn host "$DK_LOG.$((++DK_RUNS))" "$DK_BIN" --socket "$PLUGIN_SOCK" \
		--netd-socket "$NETD_SOCKET" --state-dir "$DK_STATE" \
		--tombstone-dir "$WORLD_DIR/state/tombstones"
	DK_PID=$WORLD_LAST_PID
	for ((i = 0; i < 100; i++)); do
		[ -S "$PLUGIN_SOCK" ] && return 0
		kill -0 "$DK_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$DK_LOG.$DK_RUNS"
	return 1
}
# dk_down - SIGTERM netd-docker by PID; it removes its socket.
dk_down() {
	local i
	kill -TERM "$DK_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do world__alive "$DK_PID" || break; sleep 0.1; done
	wait "$DK_PID" 2>/dev/null
}
DK_RUNS=0
# (not through ok: its PID must reach this shell)
dk_up && t_pass "netd-docker starts" || t_fail "netd-docker starts"

# plugin CALL [BODY] [METHOD] - a raw request on the plugin socket: its body.
# plugin_code CALL [BODY] [METHOD] - its HTTP status.
plugin() {
	curl -s --unix-socket "$PLUGIN_SOCK" -X "${3:-POST}" ${2:+--data-binary "$2"} "http://plugin/$1"
}
plugin_code() {
	curl -s -o /dev/null --unix-socket "$PLUGIN_SOCK" -X "${3:-POST}" ${2:+--data-binary "$2"} \
		-w '%{http_code}' "http://plugin/$1"
}
# sb_of C [NET] - netd's sandbox of container C on network NET (default agents).
sb_of() {
	local eid
	eid=$(dk inspect -f "{{(index .NetworkSettings.Networks \"${2:-agents}\").EndpointID}}" "$1") || return 1
	[ -n "$eid" ] && echo "dk-${eid:0:12}"
}
dk_sandboxes() { netd sandbox list --json | jq -r '.[].name | select(startswith("dk-"))' | sort; }
resolves() { cx "$1" nslookup "$2" 2>&1 | grep -q "Address.*$3"; }
web() { http_get "$1" 198.51.100.10 pypi.org; }

# ---- the two commands --------------------------------------------------------------
ok "docker network create -d netd -o netd.policy=web80 agents" \
	dk network create -d netd -o netd.policy=web80 agents
out=$(dk network create -d netd -o netd.policy=nope bad 2>&1)
has "an unknown policy is refused at create, by name" 'netd has no policy "nope"' "$out"
out=$(dk network create -d netd -o netd.polcy=web80 bad 2>&1)
has "a misspelt option is refused" 'unknown option "netd.polcy"' "$out"
out=$(dk network create -d netd -o policy=web80 bad2 2>&1)
has "an option without the netd. prefix is refused, with the right name" \
	"unknown option 'policy' (did you mean 'netd.policy'?)" "$out"
fail "  and no network bad2 is made (no silent deny-all)" dk network inspect bad2
ok "an option of another namespace still passes (com.docker.network.driver.mtu)" \
	dk network create -d netd -o netd.policy=web80 -o com.docker.network.driver.mtu=1400 other
ok "  (removed)" dk network rm other
ok "docker run --network agents" dk run -d --name a1 --network agents ndtest/busybox:1 sleep 600
A1=$(sb_of a1)
eq "netd made the container's sandbox" "$A1" "$(dk_sandboxes)"
sb=$(netd sandbox show "$A1")
eq "its policy is the network's" web80 "$(jq -r .policy <<<"$sb")"
eq "kind peer" peer "$(jq -r .kind <<<"$sb")"
eq "its netns is the container's SandboxKey" "$(dk inspect -f '{{.NetworkSettings.SandboxKey}}' a1)" \
	"$(jq -r .netns <<<"$sb")"
addr=$(jq -r .ipv4 <<<"$sb")
eq "the address Docker shows is netd's sandbox's" "$addr" \
	"$(dk inspect -f '{{.NetworkSettings.Networks.agents.IPAddress}}' a1)"
has "the container has eth0 with it" "inet $addr/" "$(cx a1 ip -4 addr show eth0)"
eq "and no other interface (no docker_gwbridge: DisableGatewayService)" "eth0 lo" \
	"$(cx a1 ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | xargs)"
has "its default route is via netd's gateway" "default via $(jq -r .gateway4 <<<"$sb")" \
	"$(cx a1 ip route)"
has "Docker's resolv.conf: the embedded DNS" "nameserver 127.0.0.11" "$(cx a1 cat /etc/resolv.conf)"
ok "an allowed name resolves (Docker's DNS, forwarded into netd's proxy)" resolves a1 pypi.org 198.51.100.10
eq "and connects" "pypi.org ok" "$(web a1)"
fail "a denied name does not resolve" resolves a1 example.com 203.0.113.66
fail "a denied address does not connect" http_get a1 203.0.113.66 example.com
fail "another port of the allowed name does not connect" http_get a1 198.51.100.10 pypi.org 443
has "the DNS went through netd: its audit record" '"qname":"pypi.org"' \
	"$(audit_wait 5 '"event":"dns"' "\"sandbox\":\"$A1\"")"
rep=$(netd verify "$A1" --json 2>/dev/null)
eq "netd verify proves it (its probes run in the container's netns)" "true " \
	"$(jq -r '.ok' <<<"$rep") $(jq -r '[.results[] | select(.verdict == "fail") | "\(.probe): \(.detail)"] | join("; ")' <<<"$rep")"
info=$(dk network inspect agents -f '{{json .Containers}}')
has "docker network inspect shows the container" "$addr/" "$info"
eq "netd-docker's EndpointOperInfo: the sandbox (docker inspect)" "$A1" \
	"$(plugin NetworkDriver.EndpointOperInfo "{\"NetworkID\":\"$(dk network inspect -f '{{.Id}}' agents)\",\"EndpointID\":\"$(dk inspect -f '{{.NetworkSettings.Networks.agents.EndpointID}}' a1)\"}" |
		jq -r '.Value["netd.sandbox"]')"

# ---- docker restart, stop + start ----------------------------------------------------
ok "docker restart" dk restart -t 1 a1
A1b=$(sb_of a1)
eq "a new endpoint, a new sandbox; the old one is gone" "$A1b" "$(dk_sandboxes)"
ok "after the restart: resolves" resolves a1 pypi.org 198.51.100.10
eq "after the restart: connects" "pypi.org ok" "$(web a1)"
fail "after the restart: a denied name still does not resolve" resolves a1 example.com 203.0.113.66
ok "docker stop" dk stop -t 1 a1
eq "stopped: no sandbox" "" "$(dk_sandboxes)"
eq "stopped: no endpoint record in netd-docker's state" 0 "$(ls "$DK_STATE/endpoints" | wc -l)"
ok "docker start" dk start a1
ok "after stop + start: resolves" resolves a1 pypi.org 198.51.100.10
eq "after stop + start: connects" "pypi.org ok" "$(web a1)"

# ---- netd restarted under it ------------------------------------------------------------
A1c=$(sb_of a1)
netd_down
netd_up && t_pass "netd back" || t_fail "netd back"
eq "netd restored the sandbox" "$A1c" "$(dk_sandboxes)"
ok "after netd's restart: resolves" resolves a1 pypi.org 198.51.100.10
eq "after netd's restart: connects" "pypi.org ok" "$(web a1)"

# ---- netd down while a container stops: the tombstone -----------------------------------
netd_down
ok "docker stop while netd is down (DeleteEndpoint succeeds)" dk stop -t 1 a1
ok "netd-docker wrote the tombstone" test -e "$WORLD_DIR/state/tombstones/$A1c"
netd_up && t_pass "netd back" || t_fail "netd back"
eq "netd honoured it: no sandbox" "" "$(dk_sandboxes)"
fail "the tombstone is gone" test -e "$WORLD_DIR/state/tombstones/$A1c"
ok "docker start" dk start a1
eq "and it works again" "pypi.org ok" "$(resolves a1 pypi.org 198.51.100.10 && web a1)"

# ---- netd-docker restarted: its networks are on disk --------------------------------------
dk_down
fail "netd-docker removed its socket" test -e "$PLUGIN_SOCK"
dk_up && t_pass "netd-docker back" || t_fail "netd-docker back"
ok "a new container on the same network" dk run -d --name a2 --network agents ndtest/busybox:1 sleep 600
eq "it connects" "pypi.org ok" "$(resolves a2 pypi.org 198.51.100.10 && web a2)"

# ---- netd hung (SIGSTOP): the driver answers Docker in time, saying why ------------------
kill -STOP "$NETD_PID"
t0=$SECONDS
out=$(dk run -d --name h1 --network agents ndtest/busybox:1 sleep 600 2>&1)
took=$((SECONDS - t0))
kill -CONT "$NETD_PID"
has "netd hung at Join: Docker shows the driver's error, not EOF" \
	"remote: netd is not reachable at $NETD_SOCKET: timed out" "$out"
hasnt "  (no EOF)" "EOF" "$out"
ok "  and docker run gives up in under 30 s (took ${took} s), before Docker's plugin timeout" \
	test "$took" -lt 30
dk rm -f h1 >/dev/null 2>&1
ok "netd answers again after SIGCONT" netd status
ok "netd-docker still serves after it" dk run -d --name h2 --network agents ndtest/busybox:1 sleep 600
eq "  and it connects" "pypi.org ok" "$(resolves h2 pypi.org 198.51.100.10 && web h2)"
dk rm -f h2 >/dev/null 2>&1
for ((i = 0; i < 50; i++)); do [ "$(dk_sandboxes)" = "$( (sb_of a1; sb_of a2) | sort)" ] && break; sleep 0.2; done
eq "  no sandbox of the hung run is left" "$( (sb_of a1; sb_of a2) | sort)" "$(dk_sandboxes)"

# ---- two networks, two policies; a per-container policy -------------------------------
ok "docker network create -d netd -o netd.policy=deny-all locked" \
	dk network create -d netd -o netd.policy=deny-all locked
n_ep=$(ls "$DK_STATE/endpoints" | wc -l)
out=$(dk network connect locked a2 2>&1)
has "a second netd network for a container is refused at Join, naming the first" \
	"already on netd network $(dk network inspect -f '{{.Id}}' agents | cut -c1-12)" "$out"
# (docker inspect a2 still lists locked after the failed connect: Docker 20.10's own
# bookkeeping; the network has no endpoint of it.)
hasnt "  locked has no endpoint of a2" "\"a2\"" "$(dk network inspect locked -f '{{json .Containers}}')"
eq "  with its one sandbox" "$( (sb_of a1; sb_of a2) | sort)" "$(dk_sandboxes)"
eq "  and no endpoint record left of the refused one" "$n_ep" "$(ls "$DK_STATE/endpoints" | wc -l)"
eq "  and it still connects" "pypi.org ok" "$(web a2)"
ok "docker run --network locked" dk run -d --name b1 --network locked ndtest/busybox:1 sleep 600
eq "its sandbox has the locked network's policy" deny-all "$(netd sandbox show "$(sb_of b1 locked)" | jq -r .policy)"
fail "locked: pypi.org does not resolve" resolves b1 pypi.org 198.51.100.10
fail "locked: nothing connects" web b1
eq "agents beside it still connects" "pypi.org ok" "$(web a2)"
ok "docker create on agents" dk create --name c1 --network agents ndtest/busybox:1 sleep 600
ok "docker network disconnect (before its first start)" dk network disconnect agents c1
ok "docker network connect --driver-opt netd.policy=deny-all agents" \
	dk network connect --driver-opt netd.policy=deny-all agents c1
ok "docker start" dk start c1
eq "the container's own policy wins over the network's" deny-all "$(netd sandbox show "$(sb_of c1)" | jq -r .policy)"
fail "per-container deny-all: pypi.org does not resolve" resolves c1 pypi.org 198.51.100.10
ok "docker restart of it" dk restart -t 1 c1
eq "its policy survives the restart (Docker keeps the endpoint's options)" deny-all \
	"$(netd sandbox show "$(sb_of c1)" | jq -r .policy)"
out=$(dk network connect --driver-opt netd.mode=loud locked a2 2>&1)
has "a bad --driver-opt value is refused" "netd.mode must be audit or enforce" "$out"
out=$(dk run -d --name p1 --network agents -p 8080:80 ndtest/busybox:1 sleep 600 2>&1)
has "-p on a netd network is refused, saying why" "publishes no ports" "$out"
dk rm -f p1 >/dev/null 2>&1

# ---- IPv6: docker network create --ipv6 --------------------------------------------------
ok "docker network create -d netd --ipv6 --subnet fd00:dd::/64 dual" \
	dk network create -d netd --ipv6 --subnet fd00:dd::/64 -o netd.policy=web80 dual
ok "docker run --network dual" dk run -d --name d1 --network dual ndtest/busybox:1 sleep 600
sb=$(netd sandbox show "$(sb_of d1 dual)")
a6=$(jq -r .ipv6 <<<"$sb")
eq "netd's sandbox has the IPv6 address Docker's IPAM gave" "$(dk inspect -f '{{.NetworkSettings.Networks.dual.GlobalIPv6Address}}' d1)" "$a6"
has "the container has it on eth0" "inet6 $a6/64" "$(cx d1 ip -6 addr show eth0)"
has "its IPv6 default route is via netd's gateway6" "default via $(jq -r .gateway6 <<<"$sb")" "$(cx d1 ip -6 route)"
eq "and IPv4 beside it" "pypi.org ok" "$(resolves d1 pypi.org 198.51.100.10 && web d1)"
ok "docker rm -f, docker network rm dual" bash -c "timeout 60 docker rm -f d1 >/dev/null && timeout 60 docker network rm dual >/dev/null"

# ---- the plugin socket: bad requests get clean JSON errors --------------------------------
eq "not JSON: 400" 400 "$(plugin_code NetworkDriver.Join '{not json')"
has "  and a JSON error saying why" "is not JSON" "$(plugin NetworkDriver.Join '{not json' | jq -r .Err)"
eq "a bad ID: 400" 400 "$(plugin_code NetworkDriver.CreateEndpoint '{"NetworkID":"../x","EndpointID":"y"}')"
has "  naming the member" "NetworkID" "$(plugin NetworkDriver.CreateEndpoint '{"NetworkID":"../x"}' | jq -r .Err)"
eq "a wrong type: 400" 400 "$(plugin_code NetworkDriver.CreateNetwork '{"NetworkID":1}')"
eq "an unknown call: 404 (Docker's sign of a call not implemented)" 404 "$(plugin_code NetworkDriver.Nope '{}')"
eq "  in JSON" 'netd-docker implements no call "/NetworkDriver.Nope"' "$(plugin NetworkDriver.Nope '{}' | jq -r .Err)"
eq "GET: 405" 405 "$(plugin_code NetworkDriver.Join '' GET)"
eq "  in JSON" 'the plugin protocol takes POST only' "$(plugin NetworkDriver.Join '' GET | jq -r .Err)"
eq "a Join for an endpoint it never created: a JSON error" \
	"netd-docker has no record of endpoint 000000000000 (No such file or directory)" \
	"$(plugin NetworkDriver.Join "{\"NetworkID\":\"$(printf '0%.0s' {1..64})\",\"EndpointID\":\"$(printf '0%.0s' {1..64})\",\"SandboxKey\":\"/x\"}" | jq -r .Err)"
eq "a body over 64 KiB: refused by libevent (413)" 413 \
	"$(plugin_code NetworkDriver.Join "$(head -c 70000 /dev/zero | tr '\0' x)")"
raw=$(python3 - "$PLUGIN_SOCK" <<-'PY'
	import socket, sys
	s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5)
	s.sendall(b"\x00\x01garbage\r\n\r\n")
	try: print(s.recv(4096).split(b"\r\n")[0].decode())
	except Exception as e: print("no answer:", e)
	PY
)
has "garbage instead of HTTP: libevent's 400" "400" "$raw"
ok "netd-docker still serves after all that" dk run -d --name a3 --network agents ndtest/busybox:1 sleep 600

# ---- docker rm: nothing left --------------------------------------------------------------
ok "docker rm -f every container" dk rm -f a1 a2 a3 b1 c1
eq "no sandbox left" "" "$(dk_sandboxes)"
eq "no netd state file of them" "" "$(ls "$WORLD_DIR/state/sandboxes" | grep '^dk-' || true)"
eq "no endpoint record of netd-docker's" 0 "$(ls "$DK_STATE/endpoints" | wc -l)"
eq "no netd veth or peer in the host netns" "" \
	"$(world_exec host ip -o link show | awk -F': ' '{print $2}' | grep -E '^ndp?[0-9a-f]{5}' || true)"
eq "no policy chain left" "" "$(policy_chains)"
hasnt "no element of a container's address in netd's table" "$addr" "$(world_exec host nft list table inet netd 2>/dev/null)"
ok "docker network rm" dk network rm agents locked
eq "no network record of netd-docker's" 0 "$(ls "$DK_STATE/networks" | wc -l)"

dk_down
for f in "$DK_LOG".*; do
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f"; then
		t_fail "netd-docker ran clean under ASan/UBSan ($f)" "$(grep -A20 -E 'ERROR: |runtime error:' "$f" | head -40)"
	else
		t_pass "netd-docker ran clean under ASan/UBSan ($(basename "$f"))"
	fi
done
docker_down
netd_down
t_summary
