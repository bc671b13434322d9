#!/usr/bin/env bash
# gw_connlimit.sh - limits.connections counts a sandbox's connections
# through the API gateway too (fw/gwsteer.c, sb_gwlim; fw/pchain.c, the
# policy chain's twin ge-POLICY): a steered connection never reaches
# forward, where the conn-limit rule is, so before this a sandbox could open
# as many connections to the gateway as it liked, each one an upstream
# connection of the worker's.  With real nginx behind the gateway and
# python's sockets in the sandboxes (each held open while the next is
# tried, then all reset):
#   limit 3: three steered connections open, the fourth is dropped, with a
#            deny record "conn-limit"; a direct connection then is dropped
#            too (one count for both kinds); two direct and one steered fill
#            it the same way; once they close, the sandbox connects again;
#            a request through the gateway still works under the limit;
#   no policy limit (netd.yaml's 4096): six steered connections open;
#   a reload to limit 4 moves the twin to the new set, one to audit mode
#   to the audit chain's twin (which keeps the limit); a delete takes the
#   sandbox's sb_gwlim element and, with its policy's chain, the twin;
#   a restart keeps the limit; a restart without the gateway removes
#   sb_gwlim and the twins, and the sandbox stays.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_gw.sh

gw_world_up "ndgc$$"

PH=netd-placeholder-api-0000000001
GW=198.51.100.60	# api.gw.dt.example: steered (a gateway rule)
DIRECT=198.51.100.62	# plain.gw.dt.example: forwarded (nginx there too)
mkdir -p "$WORLD_DIR/policies"
for m in lim free; do
	{
		printf 'name: gc-%s\negress:\n' "$m"
		printf '  - domains: [api.gw.dt.example]\n    ports: [443]\n'
		printf '    gateway: { credentials: [api] }\n'
		printf '  - domains: [plain.gw.dt.example]\n    ports: [443]\n'
		printf '  - domains: [sse.gw.dt.example]\n    ports: [443]\n    gateway: {}\n'
		[ "$m" = free ] || printf 'limits: { connections: 3 }\n'
	} >"$WORLD_DIR/policies/gc-$m.yaml"
done
NETD_POLICIES=$WORLD_DIR/policies
GWCONF="$(gw_gateway_yaml; gw_api_cred_yaml "$PH" "value: sk-connlimit-test-0123456789"
	echo "audit: { conn_update_interval: 0 }")"
netd_up "$GWCONF" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (limit 3)" sb_create l1 gc-lim
ok "sandbox create (no policy limit)" sb_create f1 gc-free
L1=$(sb_name l1)
F1=$(sb_name f1)
netd ca export --out "$WORLD_DIR/netd-ca.pem" >/dev/null
cat "$WORLD_CA" "$WORLD_DIR/netd-ca.pem" >"$WORLD_DIR/bundle.pem"

# The client: connects to each ADDR in turn (2 s each), every connection
# held open while the next is tried; prints "ok" or "fail" for each, then
# resets them all (SO_LINGER 0: conntrack's CLOSE, which the count skips).
cat >"$WORLD_DIR/hold.py" <<'PY'
import socket, struct, sys
held, out = [], []
for a in sys.argv[1:]:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((a, 443))
        held.append(s)
        out.append("ok")
    except OSError:
        s.close()
        out.append("fail")
print(" ".join(out))
for s in held:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
PY
# hold SHORT ADDR... - the client in sandbox SHORT.
hold() {
	local sb=$1
	shift
	sb_exec "$sb" python3 "$WORLD_DIR/hold.py" "$@" 2>/dev/null
}
# hold_until SHORT WANT ADDR... - hold, again for up to 5 s until it prints WANT
# (the reset connections of the run before leave the count at their next add).
hold_until() {
	local sb=$1 want=$2 i got
	shift 2
	for ((i = 0; i < 10; i++)); do
		got=$(hold "$sb" "$@")
		[ "$got" = "$want" ] && break
		sleep 0.5
	done
	echo "$got"
}
gwlim() { world_exec host nft list map inet netd sb_gwlim 2>&1; }
table() { world_exec host nft list table inet netd; }
# mark SANDBOX - its ct mark as nft prints it.
mark() { printf '0x%08x' "$(sb_mark "$(sb_field "$1" ipv4)")"; }

eq "l1 resolves the gateway's name" "$GW" "$(sb_dig l1 +short api.gw.dt.example)"
eq "l1 resolves the direct name" "$DIRECT" "$(sb_dig l1 +short plain.gw.dt.example)"
eq "l1 resolves the event stream's name" 198.51.100.63 "$(sb_dig l1 +short sse.gw.dt.example)"
eq "f1 resolves the gateway's name" "$GW" "$(sb_dig f1 +short api.gw.dt.example)"
has "the twin ge-gc-lim counts in the policy's set" \
	"add @ce-gc-lim-3 { ct mark & 0xfffc7fff ct count over 3 }" \
	"$(world_exec host nft list chain inet netd ge-gc-lim)"
has "sb_gwlim: l1's mark jumps to ge-gc-lim" "$(mark "$L1") : jump ge-gc-lim" "$(gwlim)"
has "sb_gwlim: f1's mark jumps to ge-gc-free" "$(mark "$F1") : jump ge-gc-free" "$(gwlim)"

# ---- limit 3 ----------------------------------------------------------------------
eq "limit 3: three steered connections open, the fourth is dropped" "ok ok ok fail" \
	"$(hold l1 $GW $GW $GW $GW)"
rec=$(audit_wait 5 '"event":"deny"' "\"sandbox\":\"$L1\"" '"reason":"conn-limit"' | head -1)
has "limit 3: a deny record, reason conn-limit" '"reason":"conn-limit"' "$rec"
# (decided before the redirect: the destination the sandbox asked for, and its name)
has "limit 3: the record names the destination asked for" "\"dst\":\"$GW\",\"dport\":443" "$rec"
has "limit 3: ... and its name" '"domain":"api.gw.dt.example"' "$rec"
eq "limit 3: three steered, then a direct one is dropped (one count)" "ok ok ok fail" \
	"$(hold_until l1 "ok ok ok fail" $GW $GW $GW $DIRECT)"
eq "limit 3: two direct and one steered, then a steered one is dropped" "ok ok ok fail" \
	"$(hold_until l1 "ok ok ok fail" $DIRECT $DIRECT $GW $GW)"
eq "limit 3: after they closed, three open again" "ok ok ok" "$(hold_until l1 "ok ok ok" $GW $DIRECT $GW)"
# A packet to the gateway's port itself, from the source port of a live
# steered connection (the same reply tuple): dropped as to-host, and its
# record must say so, not borrow the steered connection's destination.
HOSTGW=$(sb_field "$L1" gateway4)
sb_exec l1 python3 - "$GW" "$HOSTGW" <<'PY' >/dev/null 2>&1
import socket, struct, sys
a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); a.bind(("", 0))
port = a.getsockname()[1]; a.settimeout(2); a.connect((sys.argv[1], 443))
b = socket.socket(); b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); b.bind(("", port))
b.settimeout(1)
try:
    b.connect((sys.argv[2], 15443))
except OSError:
    pass
for s in (a, b):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); s.close()
PY
rec=$(audit_wait 5 '"event":"deny"' "\"sandbox\":\"$L1\"" '"reason":"to-host"' '"dport":15443' | head -1)
has "to the gateway's port from a steered connection's port: the record names the port" \
	"\"dst\":\"$HOSTGW\",\"dport\":15443" "$rec"
hasnt "... and never the steered connection's destination" "\"dst\":\"$GW\",\"dport\":443" \
	"$(audit_grep '"event":"deny"' "\"sandbox\":\"$L1\"" '"reason":"to-host"')"
eq "limit 3: a request through the gateway is answered" '"host":"api.gw.dt.example"' \
	"$(sb_exec l1 env CURL_CA_BUNDLE="$WORLD_DIR/bundle.pem" curl -sS --max-time 8 \
		-H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/models 2>&1 | grep -o '"host":"[^"]*"')"

# ---- an abandoned stream's upstream connection goes with it ------------------------
# (the sandbox's close_notify stopped the worker's writing to it, and the
# upstream kept it alive; each was an upstream connection the limit missed)
upstreams() {
	world_exec host ss -Htn state established dst 198.51.100.63 dport = :443 2>/dev/null | grep -c .
}
for i in 1 2 3 4 5; do
	sb_exec l1 env CURL_CA_BUNDLE="$WORLD_DIR/bundle.pem" curl -sS --max-time 1 \
		'https://sse.gw.dt.example/sse?n=1000&gap=200' >/dev/null 2>&1
done
for ((i = 0; i < 30; i++)); do
	[ "$(upstreams)" = 0 ] && break
	sleep 0.1
done
eq "five abandoned event streams: no upstream connection left" 0 "$(upstreams)"

# ---- netd verify reads the element back -------------------------------------------
world_exec host nft delete element inet netd sb_gwlim "{ $(mark "$L1") }"
has "verify: l1's missing sb_gwlim element is a failed kernel-jump" "no element in sb_gwlim" \
	"$(netd verify "$L1" 2>&1 | grep kernel-jump)"
world_exec host nft add element inet netd sb_gwlim "{ $(mark "$L1") : jump ge-gc-lim }"
has "verify: with it back, kernel-jump passes" "pass" "$(netd verify "$L1" 2>&1 | grep kernel-jump)"

# ---- no policy limit --------------------------------------------------------------
eq "no policy limit: six steered connections open" "ok ok ok ok ok ok" \
	"$(hold f1 $GW $GW $GW $GW $GW $GW)"
hasnt "no conn-limit record for f1" "\"sandbox\":\"$F1\"" "$(audit_grep '"event":"deny"' '"reason":"conn-limit"')"

# ---- reload, delete ---------------------------------------------------------------
sed -i 's/connections: 3/connections: 4/' "$WORLD_DIR/policies/gc-lim.yaml"
ok "policy reload (limit 3 -> 4)" netd policy reload
has "reload: the twin counts to 4, in the new set" \
	"add @ce-gc-lim-4 { ct mark & 0xfffc7fff ct count over 4 }" \
	"$(world_exec host nft list chain inet netd ge-gc-lim)"
eq "reload: four steered connections open, the fifth is dropped" "ok ok ok ok fail" \
	"$(hold_until l1 "ok ok ok ok fail" $GW $GW $GW $GW $GW)"
echo 'mode: audit' >>"$WORLD_DIR/policies/gc-lim.yaml"
ok "policy reload (gc-lim to audit mode)" netd policy reload
has "audit mode: l1's mark jumps to the audit chain's twin" "$(mark "$L1") : jump ga-gc-lim" "$(gwlim)"
hasnt "audit mode: the enforce chain's twin went with it" "chain ge-gc-lim" "$(table)"
eq "audit mode keeps the limit (a host protection)" "ok ok ok ok fail" \
	"$(hold_until l1 "ok ok ok ok fail" $GW $GW $GW $GW $GW)"
sed -i '/^mode: audit$/d' "$WORLD_DIR/policies/gc-lim.yaml"
ok "policy reload (back to enforce)" netd policy reload
has "enforce again: l1's mark jumps to ge-gc-lim" "$(mark "$L1") : jump ge-gc-lim" "$(gwlim)"
ok "sandbox delete (f1)" netd sandbox delete "$F1"
hasnt "delete: f1's element left sb_gwlim" "jump ge-gc-free" "$(gwlim)"
hasnt "delete: its policy's twin went with its chain" "ge-gc-free" "$(table)"

# ---- restarts ---------------------------------------------------------------------
netd_down
netd_up "$GWCONF" || { echo "0 passed, 1 failed"; exit 1; }
has "after a restart: l1's element in sb_gwlim" ": jump ge-gc-lim" "$(gwlim)"
eq "after a restart: the limit holds for steered connections" "ok ok ok ok fail" \
	"$(hold_until l1 "ok ok ok ok fail" $GW $GW $GW $GW $GW)"
netd_down
# (port 0: no gateway; a gateway rule needs one: l1's policy loses it, the other goes)
printf 'name: gc-lim\negress:\n  - domains: [plain.gw.dt.example]\n    ports: [443]\n%s\n' \
	'limits: { connections: 4 }' >"$WORLD_DIR/policies/gc-lim.yaml"
rm -f "$WORLD_DIR/policies/gc-free.yaml"
netd_up "$(printf 'gateway: { port: 0 }\naudit: { conn_update_interval: 0 }')" ||
	{ echo "0 passed, 1 failed"; exit 1; }
chains=$(table)
hasnt "without the gateway: no twin chain" "chain ge-" "$chains"
hasnt "without the gateway: no gateway pin set either" "set gw4" "$chains"
has "without the gateway: the policy chains stay" "chain pe-gc-lim" "$chains"
has "without the gateway: no sb_gwlim" "No such file" "$(gwlim)"
ok "without the gateway: the sandbox kept" test -n "$(sb_field "$L1" ipv4)"
eq "without the gateway: l1 resolves, the limit holds for direct connections" "ok ok ok ok fail" \
	"$(sb_dig l1 +short plain.gw.dt.example >/dev/null
	hold_until l1 "ok ok ok ok fail" $DIRECT $DIRECT $DIRECT $DIRECT $DIRECT)"
netd_down
t_summary
