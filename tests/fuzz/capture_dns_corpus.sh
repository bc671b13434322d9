#!/bin/bash
# capture_dns_corpus.sh - (re)capture the seed corpora of fuzz_query and
# fuzz_answer as real bytes: dig queries a real authoritative server (Knot
# DNS, with CNAME chains, a DNAME, many addresses, TXT) through a small
# UDP relay that writes every datagram to a file.  Needs root; runs in a
# throwaway netns which it deletes, and kills what it started by PID.
#
#   tests/fuzz/capture_dns_corpus.sh      (from the repository root)
set -eu
cd "$(dirname "$0")/../.."
NS=ndtest-dpcap-$$
TMP=$(mktemp -d /tmp/ndtest-dpcap.XXXXXX)
QDIR=tests/fuzz/corpus/fuzz_query
ADIR=tests/fuzz/corpus/fuzz_answer
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

ip netns add "$NS"
ip netns exec "$NS" ip link set lo up
ip netns exec "$NS" ip addr add 192.0.2.53/32 dev lo
ip netns exec "$NS" ip addr add 192.0.2.54/32 dev lo

mkdir -p "$TMP/zones" "$TMP/run" "$TMP/db" "$QDIR" "$ADIR"
BIG=$(printf 'x%.0s' $(seq 200))
{
	echo '$ORIGIN example.com.'
	echo '$TTL 600'
	echo '@ SOA ns hostmaster 1 3600 600 86400 60'
	echo '@ NS ns'
	echo 'ns A 192.0.2.53'
	echo 'www A 198.51.100.80'
	echo 'www AAAA 2001:db8::80'
	echo 'alias CNAME edge.cdn'
	echo 'edge.cdn CNAME e1.cdn'
	echo 'e1.cdn A 203.0.113.10'
	echo 'e1.cdn AAAA 2001:db8::10'
	echo 'old DNAME new.example.com.'
	echo 'www.new A 198.51.100.90'
	echo 'loop1 CNAME loop2'
	echo 'loop2 CNAME loop1'
	echo 'rebind A 10.0.0.5'
	echo 'mx MX 10 www'
	echo "big TXT \"a$BIG\""
	echo "big TXT \"b$BIG\""
	echo "big TXT \"c$BIG\""
	for i in $(seq 1 40); do echo "many A 198.51.100.$i"; done
	echo '_svc._tcp SRV 0 5 443 www'
	echo 'h HTTPS 1 . alpn=h2'
} >"$TMP/zones/example.com.zone"
cat >"$TMP/knot.conf" <<EOF
server:
    rundir: "$TMP/run"
    listen: 192.0.2.53@53
database:
    storage: "$TMP/db"
zone:
  - domain: example.com
    storage: "$TMP/zones"
    file: example.com.zone
log:
  - target: stderr
    any: warning
EOF
ip netns exec "$NS" knotd -c "$TMP/knot.conf" 2>"$TMP/knot.err" &
PIDS+=($!)

# The relay: 192.0.2.54:53 -> 192.0.2.53:53, every datagram saved.
cat >"$TMP/relay.py" <<'EOF'
import socket, sys, os
qdir, adir = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('192.0.2.54', 53))
n = 0
while True:
    q, peer = s.recvfrom(65535)
    n += 1
    open(os.path.join(qdir, 'dig-%03d' % n), 'wb').write(q)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(2)
    u.sendto(q, ('192.0.2.53', 53))
    try:
        a, _ = u.recvfrom(65535)
    except socket.timeout:
        continue
    open(os.path.join(adir, 'knot-%03d' % n), 'wb').write(a)
    s.sendto(a, peer)
EOF
ip netns exec "$NS" python3 "$TMP/relay.py" "$QDIR" "$ADIR" &
PIDS+=($!)
sleep 1

d() { ip netns exec "$NS" dig @192.0.2.54 +time=2 +tries=1 +ignore "$@" >/dev/null || true; }
d www.example.com A
d WWW.Example.COM AAAA +noedns
d alias.example.com A
d alias.example.com AAAA +dnssec
d www.old.example.com A
d loop1.example.com A
d rebind.example.com A
d many.example.com A +bufsize=4096
d many.example.com A +noedns
d big.example.com TXT +bufsize=1232
d mx.example.com MX
d example.com ANY
d example.com NS +nsid
d example.com SOA +cookie
d _svc._tcp.example.com SRV +subnet=198.51.100.0/24
d h.example.com HTTPS
d nonexistent.example.com A
d . NS +norecurse
d 'a\.b.example.com' A
d '\000.example.com' TXT
d www.example.com A +opcode=2
d version.bind TXT CH
ip netns exec "$NS" python3 - <<'EOF' || true
# Two queries dig will not send: QDCOUNT=2 and a compression pointer.
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
for m in [bytes.fromhex('abcd01000002000000000000') + b'\x01a\x04test\x00\x00\x01\x00\x01' * 2,
          bytes.fromhex('abce01000001000000000000') + b'\x01b\xc0\x0e\x00\x01\x00\x01']:
    s.sendto(m, ('192.0.2.54', 53))
    try: s.recvfrom(65535)
    except socket.timeout: pass
EOF
sleep 0.5
echo "captured $(ls "$QDIR" | wc -l) queries, $(ls "$ADIR" | wc -l) answers"
