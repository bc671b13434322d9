# shellcheck shell=bash
#
# lib_netd.sh - netd in a private world, and a tiny assertion kit, for the
# integration tests.  Source after tests/world.sh:
#
#     . tests/world.sh; . tests/integ/lib_netd.sh
#     world_up "nd$$"; netd_up
#     sb_create sb1 python-dev
#     ok   "pypi.org resolves" sb_dig sb1 +short pypi.org
#     fail "example.com does not connect" sb_curl sb1 https://example.com/
#     t_summary                       # prints "N passed, N failed"; exit status
#
# Sandbox names given to these helpers are short (sb1); the real name is
# "$WORLD_PREFIX-sb1", so world_down removes its netns even if netd did not.

NETD_BIN=${NETD_BIN:-$PWD/build/asan/netd}
T_PASS=0
T_FAIL=0
T_FAILED=()

t_pass() { T_PASS=$((T_PASS + 1)); echo "ok   - $1"; }
t_fail() { T_FAIL=$((T_FAIL + 1)); T_FAILED+=("$1"); echo "FAIL - $1"; [ -n "${2:-}" ] && sed 's/^/       /' <<<"$2"; return 0; }

# ok DESC CMD... - CMD must succeed.
ok() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then t_pass "$desc"; else t_fail "$desc" "$out"; fi
}

# fail DESC CMD... - CMD must fail.
fail() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then t_fail "$desc (unexpectedly succeeded)" "$out"; else t_pass "$desc"; fi
}

# eq DESC WANT GOT
eq() {
	if [ "$2" = "$3" ]; then t_pass "$1"; else t_fail "$1" "want: $2"$'\n'"got:  $3"; fi
}

# has DESC NEEDLE HAYSTACK
has() {
	if grep -qF -- "$2" <<<"$3"; then t_pass "$1"; else t_fail "$1" "missing: $2"$'\n'"in: $3"; fi
}

# hasnt DESC NEEDLE HAYSTACK
hasnt() {
	if grep -qF -- "$2" <<<"$3"; then t_fail "$1" "unexpected: $2"$'\n'"in: $3"; else t_pass "$1"; fi
}

t_summary() {
	echo
	[ ${#T_FAILED[@]} -gt 0 ] && printf 'failed: %s\n' "${T_FAILED[@]}"
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" = 0 ]
}

# netd_up [EXTRA_YAML] - write a config into WORLD_DIR and start netd in the
# host netns (nsenter: same mount namespace, so its /run/netns mounts are
# visible here).  NETD_DNS_EXTRA: more lines for the dns: section, each
# indented two spaces.  NETD_UPSTREAM: the resolver (default 192.0.2.53).
# NETD_WRAP: an array, a command netd runs under, which execs it (unshare,
# tests/integ/lib_mntns.sh: netd's PID stays the one recorded).  Waits for
# the control socket.  Sets NETD_SOCKET, NETD_PID,
# NETD_AUDIT, NETD_LOG, NETD_CONF.
netd_up() {
	local extra=${1:-} i
	NETD_CONF=$WORLD_DIR/netd.yaml
	NETD_SOCKET=$WORLD_DIR/netd.sock
	NETD_AUDIT=$WORLD_DIR/audit.jsonl
	NETD_LOG=$WORLD_DIR/netd.log
	NETD_POLICIES=${NETD_POLICIES:-$PWD/policies}
	export NETD_SOCKET
	cat >"$NETD_CONF" <<-YAML
	socket: $NETD_SOCKET
	state_dir: $WORLD_DIR/state
	policy_dir: $NETD_POLICIES
	audit_log: $NETD_AUDIT
	upstream: [${NETD_UPSTREAM:-192.0.2.53}]
	egress_interface: eth0
	pool:
	  ipv4: 10.87.0.0/16
	  ipv6: "fd00:87::/48"
	dns:
	  port: 5300
	  min_ttl: 5
	  max_ttl: 3600
	  deny_rcode: nxdomain
	${NETD_DNS_EXTRA:-}
	log_level: debug
	$extra
	YAML
	world_spawn host "$NETD_LOG" ${NETD_WRAP[@]+"${NETD_WRAP[@]}"} "$NETD_BIN" run --config "$NETD_CONF"
	NETD_PID=$WORLD_LAST_PID
	for ((i = 0; i < 300; i++)); do
		if [ -S "$NETD_SOCKET" ] && "$NETD_BIN" status >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$NETD_PID" 2>/dev/null; then
			echo "netd exited during startup:" >&2
			cat "$NETD_LOG" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "netd did not come up:" >&2
	cat "$NETD_LOG" >&2
	return 1
}

# netd_down - SIGTERM netd (by PID), wait, and fail the test if the
# sanitizers reported anything.
netd_down() {
	local i
	[ -n "${NETD_PID:-}" ] || return 0
	kill -TERM "$NETD_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$NETD_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$NETD_PID" 2>/dev/null
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$NETD_LOG"; then
		t_fail "netd ran clean under ASan/UBSan" "$(grep -A30 -E 'ERROR: |runtime error:' "$NETD_LOG" | head -60)"
	else
		t_pass "netd ran clean under ASan/UBSan"
	fi
	NETD_PID=""
}

# netd_alive - netd is still running and answering.
netd_alive() {
	kill -0 "$NETD_PID" && "$NETD_BIN" status >/dev/null
}

netd() { "$NETD_BIN" "$@"; }

sb_name() { echo "$WORLD_PREFIX-$1"; }

# reload_json - netd policy reload --json, a compact line per changed sandbox.
reload_json() { netd policy reload --json | jq -c '.changed[]'; }

# sb_field NAME FIELD - one string member of `netd sandbox show NAME` (the
# full name), e.g. gateway4, gateway6, host_ifname; empty if absent.
sb_field() { "$NETD_BIN" sandbox show "$1" | sed -n "s/.*\"$2\": \"\([^\"]*\)\".*/\1/p"; }

# sb_pins NAME [ADDR4 [ADDR6]] - the pins of sandbox NAME (the full name)
# in the shared sets pin4/pin6 (keyed by the sandbox's source address), one
# "DADDR . PROTO . PORT timeout Ts expires Es" line each (as nft writes the
# element, without the source).  ADDR4/ADDR6
# default to its addresses from `netd sandbox show`: give them when netd
# is down.
sb_pins() {
	local a4=${2-$(sb_field "$1" ipv4)} a6=${3-$(sb_field "$1" ipv6)} s
	for s in pin4 pin6; do
		world_exec host nft -j list set inet netd "$s" 2>/dev/null
	done | jq -r --arg a4 "$a4" --arg a6 "$a6" '.nftables[] | select(.set) | .set.elem // [] |
		.[] | select(.elem.val.concat[0] as $s | ($a4 != "" and $s == $a4) or ($a6 != "" and $s == $a6)) |
		"\(.elem.val.concat[1]) . \(.elem.val.concat[2]) . \(.elem.val.concat[3]) timeout \(.elem.timeout)s expires \(.elem.expires)s"'
}

# sb_jump IFNAME - the policy chain (pe-/pa-POLICY) that sandbox_fwd sends
# the traffic of host interface IFNAME to; "" if none.
sb_jump() {
	world_exec host nft -j list map inet netd sandbox_fwd 2>/dev/null | jq -r --arg k "$1" \
		'.nftables[] | select(.map) | .map.elem // [] | .[] | select(.[0] == $k) | .[1].jump.target'
}

# sb_mark ADDR - the conntrack mark sb_mark4/6 give connections from source
# ADDR (a sandbox's address), as a number; "" if none.
sb_mark() {
	local m
	for m in sb_mark4 sb_mark6; do
		world_exec host nft -j list map inet netd "$m" 2>/dev/null
	done | jq -r --arg a "$1" '.nftables[] | select(.map) | .map.elem // [] | .[] | select(.[0] == $a) | .[1]'
}

# quota_used SHORT - bytes sandbox SHORT's quota object (q-NAME) has
# counted, from nft's JSON: the text listing rounds to kbytes/mbytes when
# the count is a multiple of 1024 ("used 1323 kbytes"), the JSON never does.
quota_used() {
	world_exec host nft -j list quota inet netd "q-$(sb_name "$1")" 2>/dev/null |
		jq -r '.nftables[] | select(.quota) | .quota.used'
}

# policy_chains - the policy chains in netd's table, one name a line.
policy_chains() { world_exec host nft list table inet netd | sed -n 's/^\s*chain \(p[ea]-[^ ]*\) {/\1/p'; }

# sb_create SHORT POLICY [ARGS...]
sb_create() {
	local n=$1 p=$2
	shift 2
	"$NETD_BIN" sandbox create "$(sb_name "$n")" --policy "$p" "$@"
}

# sb_exec SHORT CMD... - through `netd exec` (resolv.conf, /sys like ip
# netns exec); a command that hangs is killed after T_TIMEOUT seconds.
T_TIMEOUT=${T_TIMEOUT:-30}
sb_exec() {
	local n=$1
	shift
	timeout "$T_TIMEOUT" "$NETD_BIN" exec "$(sb_name "$n")" -- "$@"
}

# sb_dig SHORT ARGS... - dig inside the sandbox, quick timeouts.
sb_dig() {
	local n=$1
	shift
	sb_exec "$n" dig +time=4 +tries=2 "$@"
}

# sb_curl SHORT ARGS... - curl inside the sandbox with the world's CA, short
# connect timeout (a dropped SYN must not stall the suite).
sb_curl() {
	local n=$1
	shift
	sb_exec "$n" curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 "$@"
}

# audit_lines FILTER... - audit records matching every jq-less grep FILTER.
audit_grep() {
	local out
	out=$(cat "$NETD_AUDIT" 2>/dev/null)
	for f in "$@"; do
		out=$(grep -F -- "$f" <<<"$out" || true)
	done
	printf '%s' "$out"
}

# audit_wait SECONDS FILTER... - audit_grep, polled until it finds a record or
# SECONDS have passed (deny records of one attempt are folded and written
# some seconds after its last packet: docs/audit.md).
audit_wait() {
	local secs=$1 out i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		out=$(audit_grep "$@")
		[ -n "$out" ] && break
		sleep 0.1
	done
	printf '%s' "$out"
}

# probe_start SHORT - from sandbox SHORT, try a denied address (example.com's
# 203.0.113.66:443) over and over in the background until probe_stop.
# probe_stop WHEN - stop, and assert the probes ran and none ever connected.
probe_start() {
	local n=$1
	touch "$WORLD_DIR/probing"
	(
		while [ -e "$WORLD_DIR/probing" ]; do
			if sb_exec "$n" curl -s -o /dev/null --connect-timeout 1 --max-time 2 \
				--resolve example.com:443:203.0.113.66 -k https://example.com/ 2>/dev/null; then
				echo reached >>"$WORLD_DIR/probe.hits"
			fi
			echo x >>"$WORLD_DIR/probe.count"
		done
	) &
	PROBE_PID=$!
	world_pid_track "$PROBE_PID"
}

probe_stop() {
	rm -f "$WORLD_DIR/probing"
	wait "$PROBE_PID"
	ok "probes ran $1" test -s "$WORLD_DIR/probe.count"
	ok "the denied address was never reachable" test ! -e "$WORLD_DIR/probe.hits"
}

# ctl_hold N - hold N idle connections to netd's control socket (none sends
# a byte) for 30 s in the background; returns once they are open.  Sets
# HOLD_PID (tracked: world_down ends it).
ctl_hold() {
	local i
	rm -f "$WORLD_DIR/hold.done"
	python3 - "$NETD_SOCKET" "$1" "$WORLD_DIR/hold.done" <<-'PY' &
	import socket, sys, time
	socks = []
	for i in range(int(sys.argv[2])):
	    s = socket.socket(socket.AF_UNIX); s.setblocking(False)
	    try: s.connect(sys.argv[1])
	    except BlockingIOError: pass
	    socks.append(s)
	open(sys.argv[3], "w").close()
	time.sleep(30)
	PY
	HOLD_PID=$!
	world_pid_track "$HOLD_PID"
	for ((i = 0; i < 50; i++)); do [ -e "$WORLD_DIR/hold.done" ] && break; sleep 0.1; done
}
