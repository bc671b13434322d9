#!/usr/bin/env bash
# kernel_box.sh - the real daemon (build/asan/netd) on real kernel parts
# without root: run by tests/run.sh's unit stage through
# tests/userns_box.sh (nobody, a user namespace of its own, tmpfs over
# /run/netns and /etc/netns), it builds tests/world.sh's private world in
# that namespace (unbound -> knotd, the web servers) and drives netd through
# its CLI, its control API, netd-cni and real clients (dig, curl, python)
# in sandbox network namespaces:
#   create (veth and tap), DNS over UDP and TCP, an allowed connection (its
#   pin in the set, its conn record with bytes), denied ones (nflog deny
#   records), the SNI check (nfnetlink_queue: a mismatch reset and audited),
#   netd verify, the control API and /metrics on the socket and on a TCP
#   port, a reload that removes a name (the live connection cut through
#   conntrack), a clean restart over the kept table (reconcile, pins kept;
#   then conn_update records, IPFIX export and the idle grace),
#   netd exec, netd audit, an attached netns, CNI ADD/CHECK/DEL (interface
#   mode, and chained behind the reference bridge plugin), delete.
# Never run it outside the box: it refuses unless it is PID 1 of a user
# namespace's PID namespace (tests/userns_box.sh makes that).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
if [ "$$" != 1 ] || [ "$(awk '{print $3}' /proc/self/uid_map)" = 4294967295 ]; then
	echo "kernel_box.sh: run it as tests/userns_box.sh tests/unit/kernel_box.sh"
	echo "0 passed, 1 failed"
	exit 1
fi
. tests/world.sh
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
world_up "ndk$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
mkdir -p "$POL"
cp policies/*.yaml "$POL/"
pol_box() {	# pol_box [with_pypi]: policy "box"; pypi.org only when asked
	{
		printf 'name: box\negress:\n'
		printf '  - domains: ["*.openai.com"]\n    ports: [443]\n'
		printf '  - domains: [example.com]\n    ports: [443]\n    tls: { sni: enforce }\n'
		[ -z "${1:-}" ] || printf '  - domains: [pypi.org]\n    ports: [443]\n'
	} >"$POL/box.yaml"
}
pol_box with_pypi
NETD_POLICIES=$POL
PORT=9154
netd_up "metrics_listen: 127.0.0.1:$PORT
audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
field() { jq -r ".$2 // empty" <<<"$1" 2>/dev/null; }
# record N FILTER... - the first record matching every FILTER, polled up to N s.
record() { local n=$1; shift; audit_wait "$n" "$@" | head -1; }

# ---- create, DNS, an allowed connection --------------------------------------
ok "sandbox create (veth)" sb_create sb1 box
ok "second sandbox" sb_create sb2 python-dev
has "its netns is in the box's /run/netns" "$SB1" "$(ip netns list)"
has "its chain is in netd's table" "chain pe-box" "$(world_exec host nft list table inet netd)"
SB2_IP=$(sb_field "$SB2" ipv4)
eq "DNS over UDP through the proxy" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "DNS over TCP through the proxy" "198.51.100.30" "$(sb_dig sb1 +tcp +short api.openai.com A)"
has "a denied name: NXDOMAIN" "NXDOMAIN" "$(sb_dig sb1 files.pythonhosted.org A)"
has "the answer is pinned in the set" "198.51.100.10" "$(sb_pins "$SB1")"
head -c 200000 /dev/zero >"$WORLD_DIR/up.bin"
eq "an allowed connection (upload)" "200000" "$(sb_curl sb1 --data-binary "@$WORLD_DIR/up.bin" https://pypi.org/upload)"
rec=$(record 20 '"event":"conn"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.10"')
eq "conn record: the pinned name" "pypi.org" "$(field "$rec" domain)"
ok "conn record: bytes_out covers the upload" test "$(field "$rec" bytes_out)" -ge 200000
rec=$(record 10 '"event":"dns"' "\"sandbox\":\"$SB1\"" '"qname":"files.pythonhosted.org')
has "dns deny record" '"verdict":"deny"' "$rec"

# ---- denied connections: nflog deny records ---------------------------------------
fail "an unpinned address is dropped" sb_curl sb1 --connect-timeout 1 http://203.0.113.66:80/
rec=$(record 20 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dst":"203.0.113.66"')
eq "deny record: not-pinned" "not-pinned" "$(field "$rec" reason)"
fail "another sandbox is unreachable" sb_exec sb1 curl -sS --connect-timeout 1 "http://$SB2_IP:80/"
rec=$(record 20 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"reason":"sandbox-to-sandbox"')
eq "deny record: sandbox-to-sandbox" "$SB2_IP" "$(field "$rec" dst)"

# ---- the SNI check (nfnetlink_queue through nft_compat's NFQUEUE) -----------------
eq "example.com pins 203.0.113.66" "203.0.113.66" "$(sb_dig sb1 +short example.com)"
sni() { timeout 20 ip netns exec "$SB1" "$WORLD_PYTHON" tests/integ/sni_client.py 203.0.113.66 443 tls "$1"; }
has "SNI example.com passes" "ok HTTP/1.1 200" "$(sni example.com)"
eq "SNI denied.example is reset" "reset" "$(sni denied.example)"
rec=$(record 20 "\"sandbox\":\"$SB1\"" '"reason":"sni-mismatch"')
has "the mismatch is audited with the name seen" "denied.example" "$rec"

# ---- netd verify: probes from inside the sandboxes, the kernel's elements read back --
rep=$(netd verify --all --json 2>"$WORLD_DIR/verify.err")
eq "verify --all: exit 0" "0" "$?"
eq "verify: ok, nothing failed" "true 0" "$(jq -r '"\(.ok) \(.failed)"' <<<"$rep" 2>&1)"
for p in dns-deny unpinned host sandbox spoof kernel-jump kernel-mark kernel-dns-redirect; do
	eq "verify sb1 $p: pass" pass "$(jq -r --arg s "$SB1" --arg p "$p" \
		'.results[] | select(.sandbox == $s and .probe == $p) | .verdict' <<<"$rep" 2>&1)"
done
has "verify, the table" "held: 1 sandboxes" "$(netd verify "$SB2" 2>&1)"
# vrun PROBE - "STATUS VERDICT": netd verify sb1's exit status, and PROBE's verdict.
vrun() {
	local rep rc
	rep=$(netd verify "$SB1" --json 2>/dev/null)
	rc=$?
	echo "$rc $(jq -r --arg s "$SB1" --arg p "$1" \
		'.results[] | select(.sandbox == $s and .probe == $p) | .verdict' <<<"$rep" 2>&1)"
}
IF1=$(sb_field "$SB1" host_ifname)
world_exec host nft delete element inet netd sandbox_fwd "{ $IF1 }"
eq "verify, the jump removed by hand: exit 7, kernel-jump fails" "7 fail" "$(vrun kernel-jump)"
world_exec host nft add element inet netd sandbox_fwd "{ $IF1 : jump pe-box }"
world_exec host nft insert rule inet netd forward iifname "$IF1" accept
eq "verify, an accept rule inserted: exit 7, unpinned fails" "7 fail" "$(vrun unpinned)"
h=$(world_exec host nft -a list chain inet netd forward | sed -n "s/.*iifname \"$IF1\" accept # handle \([0-9]*\)$/\1/p")
world_exec host nft delete rule inet netd forward handle "$h"
eq "verify holds again" "0 pass" "$(vrun unpinned)"

# ---- another table's forward chain that drops (as dockerd's iptables-nft) -----------
blockers() { netd status | jq -c '[.forward_blockers[]? | {family, table, chain, verdict}]'; }
eq "no forward blockers" "[]" "$(blockers)"
ok "iptables -P FORWARD DROP" world_exec host iptables -P FORWARD DROP
st=$(netd status 2>/dev/null)
eq "netd status: degraded" degraded "$(jq -r .status <<<"$st")"
eq "netd status: the blocker" '[{"family":"ip","table":"filter","chain":"FORWARD","verdict":"drops"}]' "$(blockers)"
has "the warning gives Docker's fix" "DOCKER-USER" "$(jq -r '.warnings[]?' <<<"$st")"
fail "nothing connects past it" sb_curl sb1 -o /dev/null --max-time 3 https://api.openai.com/
world_exec host nft add table inet other
ok "a plain nft table with a drop policy too" world_exec host nft add chain inet other block \
	'{ type filter hook forward priority 10; policy drop; }'
has "... is a blocker" '"table":"other"' "$(blockers)"
world_exec host nft delete table inet other
world_exec host iptables -P FORWARD ACCEPT
eq "both gone: no blockers" "[]" "$(blockers)"

# ---- the control API and the metrics endpoint ---------------------------------------
api() { curl -sS --unix-socket "$NETD_SOCKET" "http://netd$1"; }
has "API: GET /v1/sandboxes" "\"$SB1\"" "$(api /v1/sandboxes)"
has "API: GET /v1/status" "sandboxes" "$(api /v1/status)"
m=$(api /metrics)
has "metrics (socket): sandboxes" "netd_sandboxes" "$m"
has "metrics (socket): denials by reason" 'reason="not-pinned"' "$m"
m=$(world_exec host curl -sS "http://127.0.0.1:$PORT/metrics")
has "metrics (TCP port): build_info" "netd_build_info" "$m"
eq "metrics (TCP port): other paths 404" "404" \
	"$(world_exec host curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope")"

# ---- the control socket's cap and deadline: 300 idle connections held -----------------
ctl_hold 300
st=$(curl -sS --max-time 25 --unix-socket "$NETD_SOCKET" http://netd/v1/status)
ok "held past the cap: status is still answered (idle ones cut at the deadline)" test -n "$st"
ok "the cap was reached" test "$(jq -r .control.at_cap <<<"$st" 2>/dev/null)" -ge 1
ok "never more than 256 served at once" test "$(jq -r .control.connections <<<"$st" 2>/dev/null)" -le 256
has "the cap is logged" "connections open; new ones wait" "$(cat "$NETD_LOG")"
kill "$HOLD_PID" 2>/dev/null
wait "$HOLD_PID" 2>/dev/null

# ---- a burst of UDP queries from one socket (the proxy's batched, GSO replies) --------
for i in $(seq 300); do echo "pypi.org A"; done >"$WORLD_DIR/q300.txt"
out=$(sb_exec sb1 dnsperf -s "$(sb_field "$SB1" gateway4)" -d "$WORLD_DIR/q300.txt" -n 1 -c 1 -q 100 -t 3 2>&1)
has "dnsperf: 300 queries, all completed" "Queries completed:    300 (100.00%)" "$out"
has "... all NOERROR" "NOERROR 300 (100.00%)" "$out"

# ---- reload: a removed name cuts its live connection (conntrack) --------------------
T_TIMEOUT=60 sb_exec sb1 curl -sS --fail --cacert "$WORLD_CA" --speed-limit 1 --speed-time 6 \
	-o "$WORLD_DIR/cut.bin" "https://pypi.org/bytes/4000000?rate=409600" >/dev/null 2>&1 &
DL=$!
world_pid_track "$DL"
for ((i = 0; i < 100; i++)); do [ -s "$WORLD_DIR/cut.bin" ] && break; sleep 0.1; done
ok "a download under way" test -s "$WORLD_DIR/cut.bin"
pol_box
said=$(netd policy reload 2>&1)
has "reload removes pypi.org" "removed pypi.org tcp/443" "$said"
ok "... and cuts the live connection" grep -qE "connections cut [1-9]" <<<"$said"
wait "$DL"
ok "the download was cut" test "$(stat -c %s "$WORLD_DIR/cut.bin")" != 4000000
hasnt "its pin is gone" "198.51.100.10" "$(sb_pins "$SB1")"

# ---- attach an existing netns (IPv6 off there), and what attach refuses -----------------
EXT=$(sb_name ext)
ip netns add "$EXT"
ip netns exec "$EXT" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ok "attach an existing netns (--netns)" netd sandbox create "$EXT" --policy openai-only --netns "/run/netns/$EXT"
has "IPv6 off in it: IPv4 only" "IPv6 is disabled in" "$(cat "$NETD_LOG")"
eq "attached: its policy's name resolves" "198.51.100.30" \
	"$(ip netns exec "$EXT" dig +time=4 +tries=2 @198.51.100.53 +short api.openai.com)"
ok "delete the attached sandbox" netd sandbox delete "$EXT"
has "the attached netns is left to its owner" "$EXT" "$(ip netns list)"
ip netns delete "$EXT"
has "attaching netd's own netns is refused" "netd's own network namespace" \
	"$(netd sandbox create "$(sb_name own)" --policy deny-all --pid "$NETD_PID" 2>&1)"
has "attaching a file that is no netns is refused" "not a network namespace" \
	"$(netd sandbox create "$(sb_name file)" --policy deny-all --netns "$NETD_CONF" 2>&1)"

# ---- a tap sandbox (/dev/net/tun) ------------------------------------------------------
out=$(netd sandbox create "$(sb_name tp)" --policy box --tap --json 2>&1)
TAP=$(jq -r .tap <<<"$out" 2>/dev/null)
eq "tap sandbox: kind tap" "tap" "$(jq -r .kind <<<"$out" 2>/dev/null)"
has "the tap exists, persistent" "persist on" "$(world_exec host ip -d link show "$TAP" 2>&1)"

# ---- a clean restart over the kept table ----------------------------------------------
eq "api.openai.com pinned before the restart" "198.51.100.30" "$(sb_dig sb1 +short api.openai.com A)"
netd_down
# Restarted with conn_update records every second, a 60 s idle grace and
# IPFIX export (interim records every second) to a collector over TCP.
world__start inet ipfix "$WORLD_PYTHON" tests/integ/ipfix_reader.py --tcp 192.0.2.254 4741 \
	--out "$WORLD_DIR/ipfix.jsonl" --ready "$WORLD_DIR/ipfix.ready"
for ((i = 0; i < 100; i++)); do [ -e "$WORLD_DIR/ipfix.ready" ] && break; sleep 0.1; done
NETD_DNS_EXTRA="  idle_grace: 60" netd_up "metrics_listen: 127.0.0.1:$PORT
audit: { conn_update_interval: 1 }
ipfix: { collectors: [\"tcp://192.0.2.254:4741\"], interim_interval: 1 }" ||
	{ echo "0 passed, 1 failed"; exit 1; }
has "the pin survived the restart" "198.51.100.30" "$(sb_pins "$SB1")"
eq "sb1 connects after the restart" "api.openai.com ok" "$(sb_curl sb1 https://api.openai.com/)"
eq "a 3 s download (server-paced)" 1200000 "$(sb_curl sb1 -o /dev/null -w '%{size_download}' \
	"https://api.openai.com/bytes/1200000?rate=409600")"
rec=$(record 20 '"event":"conn_update"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.30"')
ok "conn_update records while it ran" test -n "$rec"
has "netd config check: the running config is ok" "$NETD_CONF: ok" "$(netd config check "$NETD_CONF" 2>&1)"
has "... with a note on the IPFIX enterprise number" "RFC 5612" "$(netd config check "$NETD_CONF" 2>&1)"
netd config check "$WORLD_DIR/none.yaml" >/dev/null 2>&1
eq "netd config check of a missing file: exit 3" 3 "$?"
for ((i = 0; i < 100; i++)); do grep -q '"domain":"api.openai.com"' "$WORLD_DIR/ipfix.jsonl" 2>/dev/null && break; sleep 0.2; done
has "IPFIX: the collector decoded its flow records" "\"sandbox\":\"$SB1\",\"policy\":\"box\",\"domain\":\"api.openai.com\"" "$(grep '"kind": *"record"' "$WORLD_DIR/ipfix.jsonl" 2>&1)"
eq "idle grace is on" true "$(api /v1/status | jq -r .accounting.idle_grace.on)"
has "the tap sandbox is back" "$(sb_name tp)" "$(netd sandbox list)"
ok "netd exec runs in the sandbox" sb_exec sb1 true
sb_exec sb1 sh -c 'exit 7'
eq "netd exec: the command's exit status" 7 "$?"
# (a PATH nobody may search: root's own directories in it give EACCES, 126)
PATH=/usr/sbin:/usr/bin:/sbin:/bin sb_exec sb1 no-such-command-here 2>/dev/null
eq "netd exec: not found is 127" 127 "$?"
sb_exec sb1 sh -c 'kill -TERM $$'
eq "netd exec: a command ended by SIGTERM is 143" 143 "$?"
eq "netd exec: its own PID namespace (the command is PID 2)" 2 "$(sb_exec sb1 sh -c 'echo $$')"
fail "netd exec: netd's socket is hidden" sb_exec sb1 test -S "$NETD_SOCKET"
has "netd exec: the sandbox's resolv.conf" "nameserver 10.87." "$(sb_exec sb1 cat /etc/resolv.conf)"
has "netd exec --net-admin: sees its eth0" "eth0" "$(timeout 20 "$NETD_BIN" exec --net-admin "$SB1" -- ip -o link show)"
has "netd audit reads the log" "$SB1" "$(netd audit --file "$NETD_AUDIT" --sandbox "$SB1" --summary 2>&1)"
has "netd audit --event deny --json" '"reason":"not-pinned"' \
	"$(netd audit --file "$NETD_AUDIT" --event deny --reason not-pinned --json 2>&1)"
eq "netd audit --last 1" 1 "$(netd audit --file "$NETD_AUDIT" --event conn --last 1 --json 2>/dev/null | wc -l)"
has "netd audit -f --from-start follows the log" "$SB1" \
	"$(timeout 3 "$NETD_BIN" audit --file "$NETD_AUDIT" -f --from-start --sandbox "$SB1" 2>&1)"

# ---- CNI: ADD, CHECK, DEL ---------------------------------------------------------------
conf() {
	printf '{"cniVersion":"1.0.0","name":"box","type":"netd-cni","socket":"%s","tombstoneDir":"%s","policy":"python-dev"}' \
		"$NETD_SOCKET" "$WORLD_DIR/state/tombstones"
}
cni() {
	OUT=$(conf | nsenter --net="$WORLD_HOST_NETNS" -- env CNI_COMMAND="$1" CNI_CONTAINERID=c1box \
		CNI_NETNS="$2" CNI_IFNAME=eth0 CNI_PATH=/nonexistent timeout 60 "$CNI_BIN" 2>"$WORLD_DIR/cni.err")
	RC=$?
}
ip netns add "$WORLD_PREFIX-c1"
C1=/run/netns/$WORLD_PREFIX-c1
cni ADD "$C1"
eq "CNI ADD: exit 0" 0 "$RC"
has "CNI ADD: an address from the pool" '"address": "10.87.' "$(jq . <<<"$OUT" 2>&1)"
eq "the container resolves through netd" "198.51.100.10" \
	"$(timeout 20 ip netns exec "$WORLD_PREFIX-c1" dig +time=4 +tries=2 +short pypi.org A)"
cni CHECK "$C1"
eq "CNI CHECK: exit 0, no output" "0:" "$RC:$OUT"
cni DEL "$C1"
eq "CNI DEL: exit 0" 0 "$RC"
cni CHECK "$C1"
eq "CNI CHECK after DEL: code 102" "102" "$(jq -r .code <<<"$OUT" 2>/dev/null)"

# ---- CNI chained mode, behind the reference bridge + host-local plugins ---------------------
REF=/usr/lib/cni
if [ -x $REF/bridge ] && [ -x $REF/host-local ]; then
	BIN=$WORLD_DIR/cnibin
	mkdir -p "$BIN" "$WORLD_DIR/ipam"
	ln -s $REF/bridge $REF/host-local "$BIN/"
	ln -s "$CNI_BIN" "$BIN/netd-cni"
	BRIDGE=$(printf '{"cniVersion":"1.0.0","name":"chain","type":"bridge","bridge":"cnibr0","isGateway":true,"ipMasq":false,"ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"10.88.0.0/24","gateway":"10.88.0.1"}]],"routes":[{"dst":"0.0.0.0/0"}]}}' "$WORLD_DIR/ipam")
	CHAINED=$(printf '{"cniVersion":"1.0.0","name":"chain","type":"netd-cni","mode":"chained","socket":"%s","tombstoneDir":"%s","defaultPolicy":"deny-all"}' \
		"$NETD_SOCKET" "$WORLD_DIR/state/tombstones")
	# plugin CMD TYPE CONF [PREV] - one plugin of the chain; stdout -> $OUT, status -> $RC.
	plugin() {
		local conf=$3
		[ -z "${4:-}" ] || conf=$(jq -c --argjson p "$4" '. + {prevResult: $p}' <<<"$conf")
		OUT=$(nsenter --net="$WORLD_HOST_NETNS" -- env CNI_COMMAND="$1" CNI_CONTAINERID=c2box \
			CNI_NETNS="/run/netns/$WORLD_PREFIX-c2" CNI_IFNAME=eth0 CNI_PATH="$BIN" \
			CNI_ARGS="IgnoreUnknown=1;NETD_POLICY=openai-only" timeout 60 "$BIN/$2" <<<"$conf" 2>>"$WORLD_DIR/cni.err")
		RC=$?
	}
	ip netns add "$WORLD_PREFIX-c2"
	plugin ADD bridge "$BRIDGE"
	BR_RES=$OUT
	eq "bridge ADD: exit 0" 0 "$RC"
	plugin ADD netd-cni "$CHAINED"
	eq "chained ADD without prevResult: code 7" 7 "$(jq -r .code <<<"$OUT" 2>/dev/null)"
	plugin ADD netd-cni "$CHAINED" "$BR_RES"
	eq "chained ADD: exit 0" 0 "$RC"
	has "netd has a chained sandbox" chained "$(netd sandbox list --json | jq -r '.[].kind')"
	eq "the chained container resolves through netd" "198.51.100.30" \
		"$(timeout 20 ip netns exec "$WORLD_PREFIX-c2" dig +time=4 +tries=2 @10.88.0.1 +short api.openai.com)"
	plugin CHECK netd-cni "$CHAINED" "$OUT"
	eq "chained CHECK: exit 0" 0 "$RC"
	plugin DEL netd-cni "$CHAINED" "$BR_RES"
	eq "chained DEL: exit 0" 0 "$RC"
	plugin DEL bridge "$BRIDGE"
	hasnt "no chained sandbox left" chained "$(netd sandbox list --json | jq -r '.[].kind')"
	ip netns delete "$WORLD_PREFIX-c2"
else
	t_fail "CNI chained mode: $REF/bridge and host-local are missing (make deps)"
fi

# ---- delete --------------------------------------------------------------------------------
for s in sb1 sb2 tp; do ok "delete $s" netd sandbox delete "$(sb_name "$s")"; done
hasnt "their netns are gone" "$SB1" "$(ip netns list)"
fail "the tap is gone" world_exec host ip link show "$TAP"
eq "no sandbox left" "[]" "$(netd sandbox list --json | jq -c .)"
ok "netd alive" netd_alive
netd_down
t_summary
