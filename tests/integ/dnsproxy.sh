#!/bin/bash
# dnsproxy.sh - dnsproxy/proxy.c for real, alone: the proxy (through
# tests/integ/proxy_harness.c, fake lookup/pin/audit) in a throwaway netns
# against a real upstream (dnsmasq on 192.0.2.53), queried with dig over
# UDP and TCP.  Needs root.  Touches nothing outside its own netns; every
# process it starts is killed by PID and the netns removed on exit.
#
#   tests/integ/dnsproxy.sh            (from the repository root)
set -u
cd "$(dirname "$0")/../.."

NS=ndtest-dp-$$
TMP=$(mktemp -d /tmp/ndtest-dp.XXXXXX)
PIDS=()
PASS=0
FAIL=0
PORT=5300
SB=198.51.100.10	# the sandbox's address
HARNESS=build/asan/integ/proxy_harness

cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ -f "$TMP/dnsmasq.pid" ]; then
		kill "$(cat "$TMP/dnsmasq.pid")" 2>/dev/null
	fi
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
check() {	# check NAME CMD...: pass if CMD succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
nsx() { ip netns exec "$NS" "$@"; }
q() { nsx dig -p $PORT +time=3 +tries=1 "$@"; }

build_harness() {
	local srcs="tests/integ/proxy_harness.c dnsproxy/proxy.c dnsproxy/upstream.c dnsproxy/pintrack.c dnsproxy/cache.c
		dnsproxy/wire.c dnsproxy/wire_svcb.c dnsproxy/decide.c common/addr.c common/log.c common/diag.c
		common/yamlx.c netd/policy.c" objs="" s o
	for s in $srcs; do
		o=build/asan/obj/${s%.c}.o
		make -s "$o" || return 1
		objs="$objs $o"
	done
	mkdir -p build/asan/integ
	${CC:-gcc} -g -fsanitize=address,undefined -fno-sanitize-recover=all -o "$HARNESS" \
		$objs $(pkg-config --libs libcares libevent yaml-0.1)
}

start_harness() {	# start_harness LOGNAME [--pin-fail]
	local log=$TMP/$1
	shift
	# Not through nsx(): a backgrounded function is a subshell, and $!
	# would be its PID instead of the harness's.
	ip netns exec "$NS" "$HARNESS" $PORT 192.0.2.53 $SB "$TMP/policy.yaml" "$@" >"$log" 2>"$log.err" &
	HPID=$!
	PIDS+=("$HPID")
	for _ in $(seq 50); do
		grep -q READY "$log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "harness did not start:"; cat "$log.err"
	return 1
}

stop_harness() {
	kill -TERM "$HPID" 2>/dev/null
	wait "$HPID"
	local rc=$?
	grep -q '^EXIT' "$TMP/$1" || rc=1
	return $rc
}

build_harness || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

ip netns add "$NS" || exit 1
nsx ip link set lo up
for a in 192.0.2.53/32 $SB/32 203.0.113.1/32; do
	nsx ip addr add $a dev lo
done

BIG=$(printf 'x%.0s' $(seq 200))
ip netns exec "$NS" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
	--listen-address=192.0.2.53 --port=53 --user=root --pid-file="$TMP/dnsmasq.pid" \
	--log-queries --log-facility="$TMP/dnsmasq.log" --local-ttl=600 \
	--local=/example.com/ \
	--host-record=www.example.com,198.51.100.80,2001:db8::80 \
	--cname=alias.example.com,www.example.com \
	--host-record=rebind.example.com,10.0.0.5 \
	--host-record=other.example.com,198.51.100.81 \
	--txt-record=big.example.com,"a$BIG" --txt-record=big.example.com,"b$BIG" \
	--txt-record=big.example.com,"c$BIG" &
PIDS+=($!)

cat >"$TMP/policy.yaml" <<'EOF'
name: dptest
egress:
  - domains: [www.example.com, alias.example.com, rebind.example.com, big.example.com]
    ports: [443]
  - domains: [www.example.com]
    ports: [53]
    protocol: udp
EOF

for _ in $(seq 50); do
	nsx dig @192.0.2.53 +time=1 +tries=1 +short www.example.com >/dev/null 2>&1 && break
	sleep 0.1
done

start_harness h1.log || { echo "0 passed, 1 failed"; exit 1; }
H=$TMP/h1.log

# 1. UDP, allowed: the answer, pinned first, TTLs capped to max_ttl (300).
out=$(q @$SB -b $SB www.example.com A +noall +answer)
check "udp A answered" grep -q '198.51.100.80' <<<"$out"
check "udp A ttl capped" awk '$1=="www.example.com." && $2<=300 {f=1} END {exit !f}' <<<"$out"
check "udp A pinned tcp/443 300s" grep -q '^PIN sb1 198.51.100.80 tcp 443 300000$' "$H"
check "udp A pinned udp/53" grep -q '^PIN sb1 198.51.100.80 udp 53 300000$' "$H"
check "udp A audited" grep -q 'qname=www.example.com qtype=1 allowed=1 reason=policy rcode=0 pins=2 answers=1' "$H"

# 2. TCP, AAAA.
out=$(q @$SB -b $SB +tcp www.example.com AAAA +short)
check "tcp AAAA answered" grep -qx '2001:db8::80' <<<"$out"
check "tcp AAAA pinned" grep -q '^PIN sb1 2001:db8::80 tcp 443' "$H"
check "tcp audited" grep -q 'transport=tcp qname=www.example.com qtype=28 allowed=1' "$H"

# 3. CNAME chain: the target's address is pinned.
out=$(q @$SB -b $SB alias.example.com A +noall +answer)
check "cname answered" grep -q 'CNAME' <<<"$out"
check "cname target pinned" grep -q 'qname=alias.example.com qtype=1 allowed=1 reason=policy rcode=0 pins=1 answers=1' "$H"

# 4. Denied: NXDOMAIN, and nothing goes upstream.
out=$(q @$SB -b $SB other.example.com A)
check "denied NXDOMAIN" grep -q 'status: NXDOMAIN' <<<"$out"
check "denied audited" grep -q 'qname=other.example.com qtype=1 allowed=0 reason=not-in-policy rcode=3' "$H"
check "denied not forwarded" bash -c "grep -q 'query.*www.example.com' '$TMP/dnsmasq.log' && ! grep -q 'other.example.com' '$TMP/dnsmasq.log'"
check "denied not pinned" bash -c "! grep -q '198.51.100.81' '$H'"

# 5. Rebinding: an allowed name pointing inside is never pinned.
out=$(q @$SB -b $SB rebind.example.com A +short)
check "rebind not pinned" bash -c "! grep -q '^PIN sb1 10.0.0.5' '$H'"
check "rebind audited" grep -q 'qname=rebind.example.com qtype=1 allowed=1 reason=policy rcode=0 pins=0 answers=0 ttl=0 rebind=1' "$H"

# 6. Unknown source: REFUSED, no audit.
out=$(q @$SB -b 203.0.113.1 www.example.com A)
check "unknown source REFUSED" grep -q 'status: REFUSED' <<<"$out"
check "unknown source not audited" bash -c "! grep -q 'client=203.0.113.1' '$H'"

# 7. The reply comes from the address the query was sent to (IPV6_PKTINFO):
#    dig drops replies from any other source and would time out.
out=$(q @203.0.113.1 -b $SB www.example.com A +short)
check "udp reply from the queried address" grep -qx '198.51.100.80' <<<"$out"

# 8. Too big for 512 bytes: TC=1 over UDP, then the full answer over TCP.
out=$(q @$SB -b $SB +noedns +ignore big.example.com TXT)
check "udp TC=1 when too big" grep -qE 'flags:.* tc' <<<"$out"
check "udp TC=1 has no answer" grep -q 'ANSWER: 0' <<<"$out"
out=$(q @$SB -b $SB +noedns big.example.com TXT +short)
check "tcp retry gets all" test "$(wc -l <<<"$out")" -eq 3
out=$(q @$SB -b $SB +bufsize=4096 big.example.com TXT)
check "edns 4096 fits over udp" bash -c "grep -q 'ANSWER: 3' <<<'$out' && ! grep -qE 'flags:.* tc' <<<'$out'"

# 9. Several queries pipelined on one TCP connection.
out=$(q @$SB -b $SB +tcp +keepopen +short www.example.com A alias.example.com A www.example.com AAAA)
check "tcp pipelined" test "$(grep -c . <<<"$out")" -eq 4

# 10. Other opcodes: NOTIMP.  Malformed: FORMERR.  A response: dropped.
out=$(q @$SB -b $SB +opcode=2 +noedns www.example.com A)
check "opcode STATUS -> NOTIMP" grep -q 'status: NOTIMP' <<<"$out"
formerr=$(nsx python3 - $SB $PORT <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0)); s.settimeout(3)
# QDCOUNT=2 with one question
s.sendto(bytes.fromhex('abcd01000002000000000000') + b'\x03www\x07example\x03com\x00\x00\x01\x00\x01',
         (sys.argv[1], int(sys.argv[2])))
r, _ = s.recvfrom(4096)
print(r[:2].hex(), r[3] & 0x0f, r[2] >> 7)
# A response (QR=1) gets no answer at all
s.sendto(bytes.fromhex('abce81000001000000000000') + b'\x03www\x07example\x03com\x00\x00\x01\x00\x01',
         (sys.argv[1], int(sys.argv[2])))
try:
    s.recvfrom(4096); print('answered')
except socket.timeout:
    print('dropped')
EOF
)
check "qdcount=2 -> FORMERR" grep -q '^abcd 1 1$' <<<"$formerr"
check "QR=1 dropped" grep -q '^dropped$' <<<"$formerr"

# 11. TCP: pipelined queries then a half-close are all answered, each
#     with its own ID; a frame shorter than a header closes the stream.
tcp=$(nsx python3 - $SB $PORT <<'EOF'
import socket, struct, sys
def q(i, name):
    b = struct.pack('>HHHHHH', 0x1000 + i, 0x0100, 1, 0, 0, 0)
    for l in name.split('.'):
        b += bytes([len(l)]) + l.encode()
    return b + b'\x00\x00\x01\x00\x01'
def recvn(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise EOFError
        b += c
    return b
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5,
                             source_address=(sys.argv[1], 0))
msgs = [q(i, n) for i, n in enumerate(['www.example.com', 'other.example.com',
                                        'alias.example.com', 'www.example.com'])]
s.sendall(b''.join(struct.pack('>H', len(m)) + m for m in msgs))
s.shutdown(socket.SHUT_WR)
got = []
for _ in msgs:
    n, = struct.unpack('>H', recvn(s, 2))
    r = recvn(s, n)
    got.append('%04x/%d' % (struct.unpack('>H', r[:2])[0], r[3] & 15))
print(' '.join(sorted(got)))
print('closed' if s.recv(1) == b'' else 'open')
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5,
                             source_address=(sys.argv[1], 0))
s.sendall(b'\x00\x05hello')
try:
    print('short-frame', 'closed' if s.recv(1) == b'' else 'open')
except ConnectionResetError:
    print('short-frame closed')
EOF
)
check "tcp half-close: all answered" grep -qx '1000/0 1001/3 1002/0 1003/0' <<<"$tcp"
check "tcp half-close: then closed" grep -qx 'closed' <<<"$tcp"
check "tcp short frame closes" grep -qx 'short-frame closed' <<<"$tcp"

stop_harness h1.log
check "harness exits cleanly (no ASan report)" test $? -eq 0

# 12. Pin failure: SERVFAIL, never the answer.
start_harness h2.log --pin-fail || exit 1
out=$(q @$SB -b $SB www.example.com A)
check "pin failure -> SERVFAIL" grep -q 'status: SERVFAIL' <<<"$out"
check "pin failure: no address leaked" bash -c "! grep -q '^www.example.com.*198.51.100.80' <<<'$out'"
check "pin failure audited" grep -q 'reason=pin-failed rcode=2' "$TMP/h2.log"

# 13. Upstream gone: SERVFAIL after the timeout.
kill "$(cat "$TMP/dnsmasq.pid")"
sleep 0.2
out=$(nsx dig -p $PORT +time=8 +tries=1 @$SB -b $SB www.example.com A)
check "upstream down -> SERVFAIL" grep -q 'status: SERVFAIL' <<<"$out"
check "upstream down audited" grep -qE 'reason=upstream-(timeout|failure) rcode=2' "$TMP/h2.log"
stop_harness h2.log
check "harness 2 exits cleanly" test $? -eq 0

if [ "$FAIL" -ne 0 ]; then
	echo "--- harness logs"; cat "$TMP"/h*.log "$TMP"/h*.log.err
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
