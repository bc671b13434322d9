# shellcheck shell=bash
#
# world.sh - a private, throwaway "internet" for netd's demo and integration
# tests.  Source it from a bash script (set -euo pipefail friendly):
#
#     . tests/world.sh
#     world_up ndtest-$$            # namespaces, DNS, web servers; trap EXIT
#     world_exec host dig @192.0.2.53 pypi.org
#     world_spawn host "$WORLD_DIR/netd.log" build/asan/netd run --config ...
#     netd_pid=$WORLD_LAST_PID       # already tracked: world_down kills it
#     world_down                     # optional: the EXIT trap calls it too
#
# The world is two network namespaces joined by one veth pair; nothing is
# created in, routed to or changed in the machine's own namespace:
#
#   PREFIX-host  where netd runs.  eth0 192.0.2.1/24 2001:db8:1::1/64,
#                default routes via the inet side, forwarding on (here only).
#   PREFIX-inet  "the internet".  down0 192.0.2.254/24 2001:db8:1::254/64,
#                NO default route: no route leads anywhere but back to host.
#                Its lo carries the servers' addresses (no dummy links:
#                the kernel may lack them; lo answers on down0 just as well):
#     192.0.2.53  2001:db8:53::53   unbound (iterator; stubs for "." and every
#                                   test zone -> knotd), port 53
#     192.0.2.54  2001:db8:53::54   knotd, authoritative for tests/world/zones
#     198.51.100.10                 pypi.org
#     198.51.100.20-22 2001:db8:20::20  the CDN behind files.pythonhosted.org
#     198.51.100.30                 api.openai.com (and ttl0.openai.com)
#     198.51.100.31                 openai.com
#     203.0.113.66                  example.com, www.example.com, denied.example
#     198.51.100.7                  a host with no name (CIDR-only rules);
#                                   also plain HTTP on 8080
#   Every web address serves HTTP on 80 and HTTPS on 443 (tests/world/websrv.py:
#   GET -> "NAME ok\n", GET /bytes/N -> N octets, POST -> octets received).
#   HTTPS certificates chain to a CA made at world_up: $WORLD_CA.
#
# Exported after world_up: WORLD_PREFIX, WORLD_DIR (temp dir: logs, configs,
# certs), WORLD_CA, WORLD_HOST_NS / WORLD_INET_NS (netns names),
# WORLD_HOST_NETNS (/run/netns path, for nsenter), WORLD_UPLINK (eth0, the
# host netns's egress interface), WORLD_DNS4 / WORLD_DNS6 (the resolver).
# `ip netns exec` in either netns sees a resolv.conf naming the resolver.
#
# Traps: world_up installs `trap world_down EXIT` and makes INT/TERM exit
# (so EXIT runs).  A caller that sets its own EXIT trap afterwards replaces
# ours and must call world_down itself.  world_down is idempotent.
#
# Cleanup kills by PID only: every PID given to world_pid_track (newest
# first: TERM, then KILL after 5 s), then any
# process still inside one of the world's namespaces (`ip netns pids`), then
# deletes /run/netns/PREFIX-* (namespaces netd made under our prefix too) and
# /etc/netns/PREFIX-* and the /etc/netns/cni-* that appeared meanwhile
# (netd's CNI sandboxes), and removes WORLD_DIR.  WORLD_KEEP=1 keeps WORLD_DIR.

WORLD_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/world" && pwd)
WORLD_PYTHON=${WORLD_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
WORLD_PREFIX=""
WORLD_DIR=""
WORLD_PIDS=()
WORLD_LAST_PID=""
WORLD_TRIES=${WORLD_TRIES:-300}		# readiness polls, 0.1 s apart

# Web listeners: address, then the names its certificate and "NAME ok" use
# (the first is the default when the Host header names none of them).
WORLD_CDN_NAMES=files.pythonhosted.org,dualstack.python.map.fastly.net,dualstack.r.ssl.global.fastly.net
WORLD_WEB=(
	"198.51.100.10 pypi.org"
	"198.51.100.20 $WORLD_CDN_NAMES"
	"198.51.100.21 $WORLD_CDN_NAMES"
	"198.51.100.22 $WORLD_CDN_NAMES"
	"2001:db8:20::20 $WORLD_CDN_NAMES"
	"198.51.100.30 api.openai.com,ttl0.openai.com"
	"198.51.100.31 openai.com"
	"203.0.113.66 example.com,www.example.com,denied.example"
	"198.51.100.7 cidr-host"
	"198.51.100.40 www.dt.example,multi.dt.example"
	"198.51.100.41 svc.dt.example"
	"198.51.100.47 ttl0.dt.example"
)

world__err() { echo "world: $*" >&2; }

# world__alive PID - true while PID exists and is not a zombie.
world__alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st%% *}" != Z ]
}

# world__kill PID - TERM, up to 5 s, then KILL; reap it if it is our child.
world__kill() {
	local pid=$1 i
	if world__alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			world__alive "$pid" || break
			sleep 0.1
		done
		if world__alive "$pid"; then
			world__err "PID $pid ignored SIGTERM; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null
			for ((i = 0; i < 50; i++)); do
				world__alive "$pid" || break
				sleep 0.1
			done
		fi
	fi
	wait "$pid" 2>/dev/null
	return 0
}

# world__wait DESC PID LOG CMD... - poll CMD until it succeeds; fail early
# (with LOG's tail) if PID exits, or after WORLD_TRIES polls.
world__wait() {
	local desc=$1 pid=$2 log=$3 i
	shift 3
	for ((i = 0; i < WORLD_TRIES; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if ! world__alive "$pid"; then
			world__err "$desc exited during startup; $log says:"
			tail -n 20 "$log" >&2 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
	world__err "$desc not ready after $WORLD_TRIES polls; $log says:"
	tail -n 20 "$log" >&2 2>/dev/null
	return 1
}

# world_exec NS CMD... - run CMD in the world's netns NS ("host", "inet").
world_exec() {
	local ns=$1
	shift
	ip netns exec "$WORLD_PREFIX-$ns" "$@"
}

# world_nsenter NS CMD... - run CMD in netns NS but in the caller's mount
# namespace (unlike ip netns exec), so netns files CMD bind-mounts under
# /run/netns stay visible to the test.  Use it to start netd.
world_nsenter() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$WORLD_PREFIX-$ns" -- "$@"
}

# world_spawn NS LOG CMD... - start CMD in the background in netns NS the
# way world_nsenter does (so netd sees and makes /run/netns entries in the
# caller's mount namespace), stdout+stderr to LOG.  Sets WORLD_LAST_PID to
# CMD's own PID (nsenter execs CMD) and tracks it for world_down.  Prefer it
# to `world_nsenter ... &`, whose $! is a subshell's PID, not CMD's.
world_spawn() {
	local ns=$1 log=$2
	shift 2
	nsenter --net="/run/netns/$WORLD_PREFIX-$ns" -- "$@" </dev/null >"$log" 2>&1 &
	WORLD_LAST_PID=$!
	world_pid_track "$WORLD_LAST_PID"
}

# world_pid_track PID... - world_down kills these (by PID).
world_pid_track() {
	local pid
	for pid in "$@"; do
		case $pid in
		'' | *[!0-9]*) world__err "world_pid_track: not a PID: '$pid'"; return 1 ;;
		esac
		WORLD_PIDS+=("$pid")
	done
}

# world__start NS NAME CMD... - start CMD in the background inside NS, log
# to WORLD_DIR/NAME.out, track its PID (ip netns exec execs CMD: same PID).
world__start() {
	local ns=$1 name=$2
	shift 2
	# A simple command, not world_exec: the background child execs ip,
	# which execs CMD, so $! is CMD's own PID.
	ip netns exec "$WORLD_PREFIX-$ns" "$@" </dev/null >"$WORLD_DIR/$name.out" 2>&1 &
	world_pid_track $!
}

world__certs() {
	local d=$WORLD_DIR/tls entry addr names san n serial=1
	mkdir -p "$d" || return 1
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$d/ca.key" -out "$d/ca.pem" -days 7 -subj "/CN=netd test world CA" \
		2>"$d/openssl.err" || { cat "$d/openssl.err" >&2; return 1; }
	for entry in "${WORLD_WEB[@]}"; do
		read -r addr names <<<"$entry"
		san=""
		for n in ${names//,/ }; do san+="DNS:$n,"; done
		san+="IP:$addr"
		serial=$((serial + 1))
		printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
			"extendedKeyUsage=serverAuth" "subjectAltName=$san" \
			"subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"$d/$addr.ext"
		if ! openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$d/$addr.key" -out "$d/$addr.csr" -subj "/CN=${names%%,*}" \
			2>>"$d/openssl.err" ||
			! openssl x509 -req -in "$d/$addr.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
				-set_serial "$serial" -days 7 -extfile "$d/$addr.ext" \
				-out "$d/$addr.pem" 2>>"$d/openssl.err"; then
			cat "$d/openssl.err" >&2
			return 1
		fi
	done
	WORLD_CA=$d/ca.pem
}

world__configs() {
	local f zone zones=() z
	for f in "$WORLD_SRC"/zones/*.zone; do
		zone=${f##*/}
		zone=${zone%.zone}
		[ "$zone" = root ] && zone=.
		zones+=("$zone")
	done
	mkdir -p "$WORLD_DIR/knot" || return 1
	{
		sed -e "s|@WORLD_DIR@|$WORLD_DIR|g" -e "s|@ZONES_DIR@|$WORLD_SRC/zones|g" \
			"$WORLD_SRC/knot.conf.in"
		for z in "${zones[@]}"; do
			if [ "$z" = . ]; then f=root.zone; else f=$z.zone; fi
			printf '  - domain: "%s"\n    file: "%s"\n' "$z" "$f"
		done
	} >"$WORLD_DIR/knot.conf" || return 1
	{
		sed -e "s|@WORLD_DIR@|$WORLD_DIR|g" "$WORLD_SRC/unbound.conf.in"
		for z in "${zones[@]}"; do
			printf 'stub-zone:\n    name: "%s"\n    stub-addr: 192.0.2.54\n\n' "$z"
		done
	} >"$WORLD_DIR/unbound.conf" || return 1
	{
		echo "# ADDR PORT CERT KEY NAMES  (generated by world.sh)"
		local entry addr names
		for entry in "${WORLD_WEB[@]}"; do
			read -r addr names <<<"$entry"
			echo "$addr 80 - - $names"
			echo "$addr 443 $WORLD_DIR/tls/$addr.pem $WORLD_DIR/tls/$addr.key $names"
		done
		echo "198.51.100.7 8080 - - cidr-host"
	} >"$WORLD_DIR/websrv.listeners"
}

# world__resolv_conf NS - what `ip netns exec NS` shows as /etc/resolv.conf.
# Retried: another world's world_down may rmdir an empty /etc/netns between
# our mkdir and write.
world__resolv_conf() {
	local i
	for i in 1 2 3; do
		mkdir -p "/etc/netns/$1" 2>/dev/null &&
			printf 'nameserver 192.0.2.53\nnameserver 2001:db8:53::53\n' \
				>"/etc/netns/$1/resolv.conf" 2>/dev/null && return 0
	done
	world__err "cannot write /etc/netns/$1/resolv.conf"
	return 1
}

world__net() {
	local h=$WORLD_PREFIX-host i=$WORLD_PREFIX-inet entry addr ns
	ip netns add "$h" || return 1
	ip netns add "$i" || return 1
	for ns in "$h" "$i"; do
		world__resolv_conf "$ns" || return 1
		ip -n "$ns" link set lo up || return 1
	done
	# Created inside the host netns, peer born in inet: the pair never
	# exists in the machine's own namespace.
	ip -n "$h" link add eth0 type veth peer name down0 netns "$i" || return 1
	ip -n "$h" addr add 192.0.2.1/24 dev eth0 &&
		ip -n "$h" addr add 2001:db8:1::1/64 dev eth0 nodad &&
		ip -n "$h" link set eth0 up &&
		ip -n "$h" route add default via 192.0.2.254 &&
		ip -n "$h" -6 route add default via 2001:db8:1::254 || return 1
	ip -n "$i" addr add 192.0.2.254/24 dev down0 &&
		ip -n "$i" addr add 2001:db8:1::254/64 dev down0 nodad &&
		ip -n "$i" link set down0 up || return 1
	for entry in 192.0.2.53 192.0.2.54 2001:db8:53::53 2001:db8:53::54 "${WORLD_WEB[@]}"; do
		read -r addr _ <<<"$entry"
		case $addr in
		*:*) ip -n "$i" addr add "$addr/128" dev lo nodad ;;
		*) ip -n "$i" addr add "$addr/32" dev lo ;;
		esac || return 1
	done
	# Forwarding only in the host netns (netd routes sandboxes through it);
	# never in the machine's own namespace.
	world_exec host sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

world__knot_ready() {
	[ -n "$(world_exec inet dig @192.0.2.54 pypi.org SOA +norec +short +time=1 +tries=1)" ]
}

world__dns_ready() {
	[ "$(world_exec inet dig @192.0.2.53 pypi.org A +short +time=1 +tries=1)" = 198.51.100.10 ]
}

# world_up [PREFIX] - build the world (see the top of this file).  PREFIX:
# letters, digits, '-', at most 24 characters; default ndtest-PID.
# Return: 0; 1 with a message on stderr (whatever was built is torn down by
# world_down, which the EXIT trap runs).
world_up() {
	local prefix=${1:-ndtest-$$}
	if [ -n "$WORLD_PREFIX" ]; then
		world__err "a world ($WORLD_PREFIX) is already up in this shell"
		return 1
	fi
	if ! [[ $prefix =~ ^[A-Za-z][A-Za-z0-9-]{0,23}$ ]]; then
		world__err "bad prefix '$prefix'"
		return 1
	fi
	if [ -e "/run/netns/$prefix-host" ] || [ -e "/run/netns/$prefix-inet" ]; then
		world__err "namespaces for prefix '$prefix' already exist"
		return 1
	fi
	if [ "$(id -u)" != 0 ]; then
		world__err "needs root (network namespaces)"
		return 1
	fi
	trap world_down EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	WORLD_PREFIX=$prefix
	WORLD_DIR=$(mktemp -d "/tmp/$prefix.XXXXXX") || return 1
	chmod 755 "$WORLD_DIR"
	# What /etc/netns held before: netd writes NAME/resolv.conf for every
	# sandbox, and a CNI sandbox's NAME (cni-...) has no world prefix.
	ls -1 /etc/netns >"$WORLD_DIR/etc-netns.before" 2>/dev/null || true	# (set -e callers)
	export WORLD_PREFIX WORLD_DIR
	export WORLD_HOST_NS=$prefix-host WORLD_INET_NS=$prefix-inet
	export WORLD_HOST_NETNS=/run/netns/$prefix-host
	export WORLD_UPLINK=eth0 WORLD_DNS4=192.0.2.53 WORLD_DNS6=2001:db8:53::53

	world__net || { world__err "network setup failed"; return 1; }
	world__certs || { world__err "certificates failed"; return 1; }
	export WORLD_CA
	world__configs || { world__err "configs failed"; return 1; }

	local knot_pid web_pid
	world__start inet knotd knotd -c "$WORLD_DIR/knot.conf"
	knot_pid=${WORLD_PIDS[-1]}
	world__start inet websrv "$WORLD_PYTHON" "$WORLD_SRC/websrv.py" \
		--listeners "$WORLD_DIR/websrv.listeners" --ready "$WORLD_DIR/websrv.ready"
	web_pid=${WORLD_PIDS[-1]}
	world__wait knotd "$knot_pid" "$WORLD_DIR/knot.log" world__knot_ready || return 1
	# unbound after knotd, so its first lookups find the authority up.
	world__start inet unbound unbound -d -c "$WORLD_DIR/unbound.conf"
	world__wait unbound "${WORLD_PIDS[-1]}" "$WORLD_DIR/unbound.log" world__dns_ready || return 1
	world__wait websrv "$web_pid" "$WORLD_DIR/websrv.out" test -e "$WORLD_DIR/websrv.ready" || return 1
	return 0
}

# world_down - tear the world down (see the top of this file).  Idempotent;
# never fails.
world_down() {
	local - pid f ns i
	set +e
	[ -n "${WORLD_PREFIX:-}" ] || return 0
	# Newest first: netd and the test's clients stop while the servers
	# they may still talk to during shutdown are up.
	for ((i = ${#WORLD_PIDS[@]} - 1; i >= 0; i--)); do
		world__kill "${WORLD_PIDS[i]}"
	done
	WORLD_PIDS=()
	for f in "/run/netns/$WORLD_PREFIX"-*; do
		[ -e "$f" ] || continue
		ns=${f##*/}
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			world__err "untracked PID $pid still in netns $ns; killing it"
			world__kill "$pid"
		done
		ip netns delete "$ns" 2>/dev/null || {
			umount "$f" 2>/dev/null
			rm -f "$f"
		}
	done
	for f in "/etc/netns/$WORLD_PREFIX"-*; do
		[ -e "$f" ] && rm -rf "$f"
	done
	# CNI sandboxes netd made in this world and the test left (their
	# containers outlived netd): the cni-* entries that were not there before.
	if [ -n "$WORLD_DIR" ] && [ -f "$WORLD_DIR/etc-netns.before" ]; then
		for f in /etc/netns/cni-*; do
			[ -e "$f" ] || continue
			grep -qxF "${f##*/}" "$WORLD_DIR/etc-netns.before" || rm -rf "$f"
		done
	fi
	rmdir /etc/netns 2>/dev/null
	if [ -n "$WORLD_DIR" ] && [ -d "$WORLD_DIR" ]; then
		if [ "${WORLD_KEEP:-0}" = 1 ]; then
			world__err "kept $WORLD_DIR"
		else
			rm -rf "$WORLD_DIR"
		fi
	fi
	WORLD_PREFIX=""
	WORLD_DIR=""
	return 0
}
