#!/usr/bin/env bash
# The control API and the daemon's lifecycle at their edges (issue 12):
# strict path decoding (%00, %2F, "..", over-long: 400, nothing changes);
# addresses and interfaces that collide with the host refused with the
# reason and nothing created; a client trickling one byte every 2 s is cut
# off; connections held past the cap and past the descriptor limit leave
# netd answering afterwards, with accept paused (no log storm); a sandbox
# whose netns vanishes is retired while netd runs; "netd" start/stop
# records in the audit log.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndl$$" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
trap world_down EXIT
netd_up || { echo "0 passed, 1 failed"; exit 1; }

api() {		# api METHOD PATH [BODY] -> "STATUS BODY"
	local m=$1 p=$2 b=${3:-}
	curl -sS --path-as-is --unix-socket "$NETD_SOCKET" -X "$m" -H 'Content-Type: application/json' \
		${b:+--data-binary "$b"} -w '\n%{http_code}' "http://netd$p" | tr -d '\n' | sed -E 's/(.*)([0-9]{3})$/\2 \1/'
}
n_sandboxes() { netd sandbox list --json | grep -c '"name": '; }
status_json() { curl -s --max-time 60 --unix-socket "$NETD_SOCKET" http://netd/v1/status; }
jfield() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }

# ---- audit: start ------------------------------------------------------------------
has "audit: a netd start record with the version" '"event":"netd","action":"start","version":"' "$(cat "$NETD_AUDIT")"
has "audit: the start says what was restored" '"restored":0' "$(audit_grep '"action":"start"')"

# ---- paths decoded strictly ---------------------------------------------------------
ok "sandbox sb1" sb_create sb1 deny-all
SB1=$(sb_name sb1)
out=$(api DELETE "/v1/sandboxes/$SB1%00x")
eq "DELETE NAME%00x: 400" "400" "${out%% *}"
has "DELETE NAME%00x: says why" "NUL" "$out"
ok "and sb1 still exists" netd sandbox show "$SB1"
for p in "/v1/sandboxes/a%2Fb" "/v1/sandboxes/%2e%2e" "/v1/sandboxes/.." "/v1/sandboxes/a%0ab" "/v1/sandboxes/a%zz" \
	"/v1/sandboxes/$(printf 'a%.0s' {1..65})" "/v1/policies/%00"; do
	eq "GET $p: 400" "400" "$(api GET "$p" | cut -d' ' -f1)"
done
eq "a 64-byte name is still just unknown: 404" "404" "$(api GET "/v1/sandboxes/$(printf 'a%.0s' {1..64})" | cut -d' ' -f1)"
eq "sandbox count unchanged" "1" "$(n_sandboxes)"

# ---- requested addresses and interfaces vs the host ---------------------------------
# The world's host: 192.0.2.1 on eth0 (egress), router 192.0.2.254, upstream 192.0.2.53.
ipam() { printf '{"name":"%s","policy":"deny-all","addresses":{"ipv4":"%s","gateway4":"%s"}}' "$WORLD_PREFIX-$1" "$2" "$3"; }
attach() { printf '{"name":"%s","policy":"deny-all","attach":{"host_ifname":"%s","ipv4":"%s"}}' "$WORLD_PREFIX-$1" "$2" "$3"; }
check_refused() {	# DESC BODY REASON
	local out
	out=$(api POST /v1/sandboxes "$2")
	eq "$1: 400" "400" "${out%% *}"
	has "$1: the reason" "$3" "$out"
}
check_refused "gateway = netd's upstream" "$(ipam r1 192.0.2.60/24 192.0.2.53)" "upstream resolver"
check_refused "gateway = the host's own address" "$(ipam r2 192.0.2.60/24 192.0.2.1)" "host's own addresses"
check_refused "gateway = the host's router" "$(ipam r3 192.0.2.60/24 192.0.2.254)" "router"
check_refused "gateway in 127.0.0.0/8" "$(ipam r4 127.0.0.2/8 127.0.0.1)" "loopback"
check_refused "sandbox address = the host's own" "$(ipam r5 192.0.2.1/24 192.0.2.70)" "host's own addresses"
check_refused "attach: host_ifname = the egress interface" "$(attach r6 eth0 10.99.0.5)" "egress interface"
check_refused "attach: host_ifname = lo" "$(attach r7 lo 10.99.0.5)" "loopback interface"
check_refused "attach: address = the upstream" "$(attach r8 nosuch0 192.0.2.53)" "upstream resolver"
eq "nothing created by refused requests" "1" "$(n_sandboxes)"
hasnt "no netns left by refused requests" "$WORLD_PREFIX-r" "$(ip netns list)"
eq "no veth left by refused requests (only sb1's)" "1" "$(world_exec host ip -o link show | grep -cE '^[0-9]+: nd[0-9a-f]{5}[@:]')"
created() { api POST /v1/sandboxes "$1" | grep -q '^201'; }
ok "a sane IPAM request still works" created "$(ipam g1 10.77.0.10/24 10.77.0.1)"
eq "IPAM sandbox g1 exists" "10.77.0.10" "$(sb_field "$WORLD_PREFIX-g1" ipv4)"
ok "a second sandbox may share the IPAM gateway" created "$(ipam g2 10.77.0.11/24 10.77.0.1)"
check_refused "gateway = another sandbox's address" "$(ipam g3 10.77.0.12/24 10.77.0.10)" "is sandbox $WORLD_PREFIX-g1's address"

# ---- a slow client is cut off -----------------------------------------------------------
out=$(timeout 120 python3 - "$NETD_SOCKET" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
req = b"GET /v1/status HTTP/1.1\r\nHost: netd\r\nX-Pad: " + b"a" * 40 + b"\r\n\r\n"
for b in req:
    try:
        s.send(bytes([b]))
        if s.recv(1, socket.MSG_DONTWAIT) == b"":
            print("closed"); sys.exit()
    except BlockingIOError:
        pass
    except (BrokenPipeError, ConnectionResetError):
        print("closed"); sys.exit()
    time.sleep(2)
print("never cut off")
PY
)
eq "a client sending one byte every 2 s is cut off" "closed" "$out"
ge1() { [ "$1" -ge 1 ]; }
ok "status counts it as timed out" ge1 "$(status_json | jfield "['control']['timed_out']")"

# ---- held connections: the cap -------------------------------------------------------------
ctl_hold 300
HOLD=$HOLD_PID
st=$(status_json)
ok "with 300 idle connections held, status is answered (idle ones are cut at the deadline)" test -n "$st"
le_cap() { [ "$1" -le 256 ]; }
ok "never more than 256 connections served at once" le_cap "$(jfield "['control']['connections']" <<<"$st")"
ok "the cap was reached" ge1 "$(jfield "['control']['at_cap']" <<<"$st")"
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
# Until netd has closed them all (the backlog's too): only then does its
# descriptor count say what it needs when idle.
for ((i = 0; i < 200; i++)); do
	[ "$(status_json | jfield "['control']['connections']")" -le 1 ] 2>/dev/null && break
	sleep 0.1
done

# ---- past the descriptor limit: accept pauses, no log storm -----------------------------------
nfd=$(ls "/proc/$NETD_PID/fd" | wc -l)
lim=$((nfd + 20))
old_soft=$(prlimit --pid "$NETD_PID" --nofile --raw --noheadings -o SOFT)
prlimit --pid "$NETD_PID" --nofile="$lim:"	# the soft limit only: netd itself may raise it back
log_before=$(wc -l <"$NETD_LOG")
python3 - "$NETD_SOCKET" 60 "$WORLD_DIR/hold2.done" "$WORLD_DIR/hold2.release" <<'PY' &
import os, socket, sys, time
socks = []
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX); s.setblocking(False)
    try: s.connect(sys.argv[1])
    except (BlockingIOError, OSError): pass
    socks.append(s)
open(sys.argv[3], "w").close()
# Held until the test has seen netd run out of descriptors (at most 30 s).
for _ in range(300):
    if os.path.exists(sys.argv[4]): break
    time.sleep(0.1)
PY
HOLD=$!
world_pid_track "$HOLD"
# However loaded the machine, wait until netd really holds its limit of
# descriptors (so its next accept() fails), then a little for it to try.
for ((i = 0; i < 200; i++)); do
	[ "$(ls "/proc/$NETD_PID/fd" 2>/dev/null | wc -l)" -ge "$lim" ] && break
	sleep 0.1
done
sleep 1
touch "$WORLD_DIR/hold2.release"
wait "$HOLD" 2>/dev/null
prlimit --pid "$NETD_PID" --nofile="$old_soft:"
st=$(status_json)
ok "after the descriptors ran out, netd answers again" test -n "$st"
ok "accept() failures were counted" ge1 "$(jfield "['control']['accept_errors']" <<<"$st")"
new_log=$(tail -n +"$((log_before + 1))" "$NETD_LOG")
hasnt "libevent's own accept() error is never logged" "Error from accept() call" "$new_log"
lines=$(grep -c "accept: " <<<"$new_log" || true)
few() { [ "$1" -le 20 ]; }
ok "accept failures logged rate-limited ($lines lines)" few "$lines"

# ---- a vanished netns is noticed while netd runs ------------------------------------------------
ip netns add "$WORLD_PREFIX-v1"
ok "sandbox v1 in an attached netns" netd sandbox create "$WORLD_PREFIX-v1" --policy deny-all --netns "/run/netns/$WORLD_PREFIX-v1"
V1_IF=$(sb_field "$WORLD_PREFIX-v1" host_ifname)
V1_A4=$(sb_field "$WORLD_PREFIX-v1" ipv4)
eq "it jumps to its policy's chain" "pe-deny-all" "$(sb_jump "$V1_IF")"
ok "it has its mark" test -n "$(sb_mark "$V1_A4")"
ip netns delete "$WORLD_PREFIX-v1"	# the netns dies, its veth with it
gone=0
for i in $(seq 1 100); do
	netd sandbox show "$WORLD_PREFIX-v1" >/dev/null 2>&1 || { gone=1; break; }
	sleep 0.1
done
eq "the vanished sandbox is retired while netd runs" "1" "$gone"
has "audit: action vanished" '"action":"vanished"' "$(audit_grep "\"sandbox\":\"$WORLD_PREFIX-v1\"")"
eq "its jump is gone" "" "$(sb_jump "$V1_IF")"
eq "its mark is gone" "" "$(sb_mark "$V1_A4")"
hasnt "its interface is in no set" "$V1_IF" "$(world_exec host nft list table inet netd)"
ok "its state file is gone" test ! -e "$WORLD_DIR/state/sandboxes/$WORLD_PREFIX-v1.json"
hasnt "its interface is gone" "$V1_IF" "$(world_exec host ip -o link show)"
ok "sb1 was left alone" netd sandbox show "$SB1"

# ---- audit: stop, and a restart's counts ---------------------------------------------------------
ok "netd alive at the end" netd_alive
netd_down
has "audit: a netd stop record" '"event":"netd","action":"stop"' "$(cat "$NETD_AUDIT")"
NETD_LOG=$NETD_LOG.2
world_spawn host "$NETD_LOG" "$NETD_BIN" run --config "$NETD_CONF"
NETD_PID=$WORLD_LAST_PID
for i in $(seq 1 300); do netd status >/dev/null 2>&1 && break; sleep 0.1; done
has "audit: the restart says 3 sandboxes restored" '"restored":3' "$(audit_grep '"action":"start"' | tail -n 1)"
netd_down
t_summary
