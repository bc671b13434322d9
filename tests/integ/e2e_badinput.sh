#!/usr/bin/env bash
# Bad input never crashes netd or changes its state: malformed DNS messages
# from a sandbox, malformed control API requests, malformed policies.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndb$$" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)
GW=$(sb_field "$SB1" gateway4)
raw() { ip netns exec "$SB1" "$WORLD_PYTHON" tests/integ/dnsraw.py "$@"; }

# ---- DNS ---------------------------------------------------------------------
eq "a well-formed query is answered" "rcode=0" "$(raw "$GW" 53 udp good | cut -d' ' -f1)"
for kind in empty short response; do
	eq "udp $kind: dropped" "noreply" "$(raw "$GW" 53 udp $kind)"
done
out=$(raw "$GW" 53 udp huge)
if [ "$out" = noreply ] || [ "${out%% *}" = rcode=1 ]; then t_pass "udp 64 KiB junk: dropped or FORMERR"; else t_fail "udp 64 KiB junk: dropped or FORMERR" "$out"; fi
for kind in header-only qdcount0 qdcount2 truncated-name label-overrun compression-loop pointer-forward long-name no-qtype trailing-junk bad-label-type opt-bad; do
	eq "udp $kind: FORMERR" "rcode=1" "$(raw "$GW" 53 udp $kind | cut -d' ' -f1)"
done
eq "udp opcode STATUS: NOTIMP" "rcode=4" "$(raw "$GW" 53 udp opcode-status | cut -d' ' -f1)"
eq "a dot inside a label never matches pypi.org" "rcode=3" "$(raw "$GW" 53 udp dot-in-label | cut -d' ' -f1)"
eq "a NUL inside a label never matches pypi.org" "rcode=3" "$(raw "$GW" 53 udp nul-in-label | cut -d' ' -f1)"
has "class CHAOS is refused or denied" "rcode=" "$(raw "$GW" 53 udp class-chaos)"
eq "tcp good" "rcode=0" "$(raw "$GW" 53 tcp good | cut -d' ' -f1)"
eq "tcp compression loop: FORMERR" "rcode=1" "$(raw "$GW" 53 tcp compression-loop | cut -d' ' -f1)"
for kind in tcp-bigframe tcp-zeroframe tcp-halfheader; do
	out=$(raw "$GW" 53 tcp $kind)
	hasnt "tcp $kind: no answer to garbage" "rcode=0" "$out"
done
eq "tcp slowloris (a frame trickling in) is cut off" "closed" "$(raw "$GW" 53 tcp tcp-trickle)"
eq "tcp pipelined queries all answered" "answers=3 rcode=0 id=4660 qd=1 an=1 tc=0" "$(raw "$GW" 53 tcp tcp-pipelined)"
ok "netd alive after malformed DNS" netd_alive

# A flood of denied queries must not flood the audit log.
before=$(grep -c '"qname":"denied.example"' "$NETD_AUDIT" || true)
ip netns exec "$SB1" "$WORLD_PYTHON" - "$GW" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
q = lambda i: struct.pack("!HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\x06denied\x07example\x00" + struct.pack("!HH", 1, 1)
for i in range(500):
    s.sendto(q(i), (sys.argv[1], 53))
    try:
        s.recv(512)
    except socket.timeout:
        pass
PY
sleep 1.5	# let the per-sandbox bucket refill, so the next denial writes the count
sb_dig sb1 denied.example >/dev/null
after=$(grep -c '"qname":"denied.example"' "$NETD_AUDIT" || true)
n=$((after - before))
if [ "$n" -gt 0 ] && [ "$n" -lt 400 ]; then t_pass "500 denied queries: $n audit records (rate limited)"; else t_fail "500 denied queries: rate limited audit records" "$n records"; fi
has "the suppressed count is recorded" '"event":"dns_suppressed"' "$(cat "$NETD_AUDIT")"
eq "and still resolving" "198.51.100.10" "$(sb_dig sb1 +short pypi.org)"

# ---- control API ----------------------------------------------------------------
api() {		# api METHOD PATH [BODY] -> "STATUS BODY"
	local m=$1 p=$2 b=${3:-}
	curl -sS --unix-socket "$NETD_SOCKET" -X "$m" -H 'Content-Type: application/json' \
		${b:+--data-binary "$b"} -w '\n%{http_code}' "http://netd$p" | tr -d '\n' | sed -E 's/(.*)([0-9]{3})$/\2 \1/'
}
check_api() {	# check_api DESC WANT_STATUS METHOD PATH [BODY]
	local desc=$1 want=$2 out
	shift 2
	out=$(api "$@")
	eq "API $desc: HTTP $want" "$want" "${out%% *}"
	if [ "${want:0:1}" = 4 ]; then
		has "API $desc: JSON error body" '"error"' "$out"
	fi
}
check_api "not JSON" 400 POST /v1/sandboxes '{"name": '
check_api "JSON but not an object" 400 POST /v1/sandboxes '[1,2,3]'
check_api "unknown key" 400 POST /v1/sandboxes '{"name":"x","policy":"deny-all","evil":1}'
check_api "wrong type" 400 POST /v1/sandboxes '{"name":42,"policy":"deny-all"}'
check_api "missing policy" 400 POST /v1/sandboxes '{"name":"x"}'
check_api "duplicate key" 400 POST /v1/sandboxes '{"name":"x","name":"y","policy":"deny-all"}'
check_api "bad name" 400 POST /v1/sandboxes '{"name":"../../etc","policy":"deny-all"}'
check_api "overlong name" 400 POST /v1/sandboxes "{\"name\":\"$(printf 'a%.0s' {1..300})\",\"policy\":\"deny-all\"}"
check_api "bad ifname" 400 POST /v1/sandboxes '{"name":"x","policy":"deny-all","ifname":"a b"}'
check_api "relative netns" 400 POST /v1/sandboxes '{"name":"x","policy":"deny-all","netns":"proc/1/ns/net"}'
check_api "netns that is not a netns" 400 POST /v1/sandboxes "{\"name\":\"$WORLD_PREFIX-x\",\"policy\":\"deny-all\",\"netns\":\"/etc/hostname\"}"
check_api "missing netns" 404 POST /v1/sandboxes "{\"name\":\"$WORLD_PREFIX-x\",\"policy\":\"deny-all\",\"netns\":\"/proc/999999999/ns/net\"}"
check_api "unknown policy" 404 POST /v1/sandboxes '{"name":"x","policy":"nope"}'
check_api "unknown path" 404 GET /v2/whatever
check_api "unknown sandbox" 404 GET /v1/sandboxes/nope
check_api "wrong method" 405 DELETE /v1/policies
check_api "nested path" 404 GET /v1/sandboxes/a/b
big=$(head -c 70000 /dev/zero | tr '\0' 'a')
out=$(curl -sS --unix-socket "$NETD_SOCKET" -X POST --data-binary "{\"name\":\"$big\"}" -o /dev/null -w '%{http_code}' http://netd/v1/sandboxes 2>&1)
eq "API oversized body refused" "413" "$out"
out=$("$WORLD_PYTHON" -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(b"GARBAGE\r\n\r\n")
try: print(s.recv(200).decode(errors="replace"))
except Exception as e: print("closed", e)' "$NETD_SOCKET" 2>&1)
ok "netd alive after malformed API requests" netd_alive
hasnt "no half-made sandbox after bad requests" "\"x\"" "$(netd sandbox list --json)"
eq "sandbox list unchanged" "1" "$(netd sandbox list --json | grep -c '"name": ')"

# ---- policies ----------------------------------------------------------------------
d=$WORLD_DIR/badpol
mkdir -p "$d"
printf 'name: p\negress:\n  - domains: [pypi.org]\n    ports: [443]\n    prot: tcp\n' >"$d/unknown-key.yaml"
printf 'name: p\negress:\n  - cidrs: [10.0.0.1/8]\n    ports: [443]\n' >"$d/host-bits.yaml"
printf 'name: p\nname: q\negress: []\n' >"$d/dup.yaml"
printf 'name: p\negress:\n  - domains: ["pypi.*.org"]\n    ports: [443]\n' >"$d/pattern.yaml"
for f in unknown-key host-bits dup pattern; do
	out=$(netd policy check "$d/$f.yaml" 2>&1); rc=$?
	eq "policy check $f: exit 6 (rejected)" "6" "$rc"
	if grep -qE "^$d/$f.yaml:[0-9]+:[0-9]+: " <<<"$out"; then t_pass "policy check $f: FILE:LINE:COL"; else t_fail "policy check $f: FILE:LINE:COL" "$out"; fi
done
ok "shipped policies pass policy check" netd policy check policies/*.yaml
out=$(netd help 2>/dev/null); rc=$?
eq "netd help: the usage on stdout, exit 0" "0 usage: netd" "$rc $(head -c 11 <<<"$out")"
out=$(netd no-such-command 2>&1 >/dev/null); rc=$?
eq "an unknown command: exit 2" "2" "$rc"
has "and says which" "netd: unknown command 'no-such-command'" "$out"

# ---- attaching namespaces: only safe ones -----------------------------------------
mkfifo "$WORLD_DIR/fifo"
out=$(timeout 10 "$NETD_BIN" sandbox create "$WORLD_PREFIX-ff" --policy deny-all --netns "$WORLD_DIR/fifo" 2>&1); rc=$?
eq "a FIFO as netns is refused at once (no hang), exit 6 (rejected)" "6" "$rc"
has "a FIFO as netns: says why" "not a network namespace" "$out"
ip netns add "$WORLD_PREFIX-two"
ip -n "$WORLD_PREFIX-two" link add dum0 type veth peer name dum1 2>/dev/null
out=$(netd sandbox create "$WORLD_PREFIX-t2" --policy deny-all --netns "/run/netns/$WORLD_PREFIX-two" 2>&1); rc=$?
eq "a netns with other interfaces is refused: exit 4 (conflict)" "4" "$rc"
has "a netns with other interfaces: says which" "already has interface dum" "$out"
ip -n "$WORLD_PREFIX-two" link del dum0
out=$(netd sandbox create "$WORLD_PREFIX-t3" --policy deny-all --netns "/run/netns/$SB1" 2>&1); rc=$?
eq "another sandbox's netns is refused: exit 4 (conflict)" "4" "$rc"
has "another sandbox's netns: says whose" "already sandbox $SB1" "$out"
ok "a clean netns attaches" netd sandbox create "$WORLD_PREFIX-t4" --policy deny-all --netns "/run/netns/$WORLD_PREFIX-two"
ok "and is deleted" netd sandbox delete "$WORLD_PREFIX-t4"
ip netns delete "$WORLD_PREFIX-two"

# ---- a deleted sandbox's flows die with it ------------------------------------------
SB1_IP=$(netd sandbox show "$SB1" | sed -n 's/.*"ipv4": "\(.*\)".*/\1/p')
eq "sb1 reaches its CIDR host" "cidr-host ok" "$(sb_curl sb1 http://198.51.100.7:8080/)"
has "conntrack has sb1's flows before delete" "src=$SB1_IP" "$(world_exec host conntrack -L -s "$SB1_IP" 2>/dev/null)"
ok "delete sb1" netd sandbox delete "$SB1"
hasnt "no conntrack entry from sb1's address after delete" "src=$SB1_IP " "$(world_exec host conntrack -L -s "$SB1_IP" 2>/dev/null)"
cp policies/python-dev.yaml "$d/copy.yaml"
out=$(netd policy check policies/python-dev.yaml "$d/copy.yaml" 2>&1); rc=$?
eq "policy check: one name in two files: exit 6 (rejected)" "6" "$rc"
has "policy check: one name in two files: FILE:LINE:COL" "$d/copy.yaml:" "$(grep -E "^$d/copy.yaml:[0-9]+:[0-9]+: name: policy name 'python-dev' is also used by" <<<"$out")"

ok "netd alive at the end" netd_alive
netd_down
world_down
t_summary
