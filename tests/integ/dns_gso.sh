#!/usr/bin/env bash
# UDP GSO replies on the direct path (udp_flush() in dnsproxy/udp.c):
# replies of one receive round to the same client socket, of the same
# length, leave the gateway socket as one UDP_SEGMENT send, and the kernel
# cuts them back into the datagrams the client asked for.  Asserted from the
# client's side: a burst of queries from one socket gets one well-formed
# reply per query, each its own datagram with its own ID, while netd's
# counters show grouped sends.  The redirected path (any other resolver
# address: conntrack un-NATs its replies) never groups, nor does a gateway
# whose interface MTU is too small for a whole reply, nor a netd configured
# with dns.udp_gso: false.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ngs$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
# pypi.org for the bursts, the world's wildcard for new names
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/gso.yaml" <<'YAML'
name: gso
egress:
  - domains: [pypi.org, "*.tun.dt.example"]
    ports: [443]
YAML
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox g1 (policy gso)" sb_create g1 gso
SB=$(sb_name g1)
GW4=$(sb_field "$SB" gateway4)
GW6=$(sb_field "$SB" gateway6)
IF=$(sb_field "$SB" host_ifname)
ok "g1 has an IPv4 and an IPv6 gateway ($GW4, $GW6) on $IF" test -n "$GW4" -a -n "$GW6" -a -n "$IF"
stat() { netd status | tr -d ' \n' | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }

# burst DST N [NAME ADDR]: N queries for pypi.org A (IDs 1..N) sent back to
# back from one socket, then every datagram read until N arrived or 3 s of
# silence.  Prints "replies R sizes S ids I answers A": R datagrams, S
# distinct lengths, I distinct IDs among the sent ones, A datagrams that are
# exactly one DNS response (QR set, one question, one A record for
# 198.51.100.10, nothing after it).  NAME: a Python format of the name of
# query i ("{i:03d}.x.example"), each answered with ADDR.
cat >"$WORLD_DIR/burst.py" <<'PY'
import socket, struct, sys
dst, n = sys.argv[1], int(sys.argv[2])
tmpl = sys.argv[3] if len(sys.argv) > 3 else "pypi.org"
want = sys.argv[4] if len(sys.argv) > 4 else "198.51.100.10"
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
def question(i):
    labels = tmpl.format(i=i).encode().split(b".")
    return b"".join(bytes([len(l)]) + l for l in labels) + b"\0" + struct.pack("!HH", 1, 1)
for i in range(1, n + 1):
    s.sendto(struct.pack("!HHHHHH", i, 0x0100, 1, 0, 0, 0) + question(i), (dst, 53))
s.settimeout(3)
got = []
while len(got) < n:
    try:
        got.append(s.recv(65535))
    except socket.timeout:
        break
def one_answer(m):
    if len(m) < 12:
        return False
    qid, fl, qd, an, ns, ar = struct.unpack("!HHHHHH", m[:12])
    if not fl & 0x8000 or qd != 1 or an != 1 or ns or ar or not 1 <= qid <= n:
        return False
    q = question(qid)
    o = 12 + len(q)
    if m[12:o].lower() != q:
        return False
    # the answer: a pointer to the question's name, A, IN, TTL, RDLENGTH 4
    if len(m) != o + 16 or m[o:o + 2] != b"\xc0\x0c":
        return False
    t, c, ttl, rdl = struct.unpack("!HHIH", m[o + 2:o + 12])
    return t == 1 and c == 1 and rdl == 4 and socket.inet_ntoa(m[o + 12:o + 16]) == want
ids = {struct.unpack("!H", m[:2])[0] for m in got if len(m) >= 2}
print("replies %d sizes %d ids %d answers %d" % (len(got), len({len(m) for m in got}),
      len(ids & set(range(1, n + 1))), sum(one_answer(m) for m in got)))
PY
burst() { sb_exec g1 "$WORLD_PYTHON" "$WORLD_DIR/burst.py" "$@" 2>&1; }

# grouped DST - run bursts of 64 until one of them was (partly) sent grouped
# (at most 5 tries: whether queries queue up for one round is up to the
# scheduler); sets G_OUT to the last burst's result and G_REPLIES to the
# grouped replies netd counted during it.
grouped() {
	local r0
	for _ in 1 2 3 4 5; do
		r0=$(stat udp_gso_replies)
		G_OUT=$(burst "$1" 64)
		G_REPLIES=$(($(stat udp_gso_replies) - r0))
		[ "$G_REPLIES" -gt 0 ] && break
	done
}

eq "a single query is answered through the gateway" "198.51.100.10" "$(sb_dig g1 +short "@$GW4" pypi.org A)"
eq "no grouped send for one reply" "0" "$(stat udp_gso_sends)"

grouped "$GW4"
ok "a burst of 64 to the IPv4 gateway: some replies left grouped ($G_REPLIES)" test "$G_REPLIES" -gt 1
eq "the client read 64 datagrams, one per query, all answers" "replies 64 sizes 1 ids 64 answers 64" "$G_OUT"
grouped "$GW6"
ok "to the IPv6 gateway: grouped too ($G_REPLIES)" test "$G_REPLIES" -gt 1
eq "64 datagrams, each one answer" "replies 64 sizes 1 ids 64 answers 64" "$G_OUT"

# ---- replies to upstream answers: those one read brings leave together ----
# 64 new names at once (each a cache miss, asked upstream; the world's
# resolver has them first, so their answers come back close together):
# the answers c-ares reads in one turn are replied to in one send, as a
# receive round's are (udp_answers_turn()).  Up to 5 bursts of new names.
for t in 1 2 3 4 5; do
	tmpl="f$t-{i:03d}.tun.dt.example"
	"$WORLD_PYTHON" -c "for i in range(1, 65): print('$tmpl'.format(i=i) + ' A')" >"$WORLD_DIR/fresh$t.txt"
	world_exec inet dnsperf -s 192.0.2.53 -d "$WORLD_DIR/fresh$t.txt" -n 1 >/dev/null 2>&1
	m0=$(stat cache_misses)
	r0=$(stat udp_gso_replies)
	F_OUT=$(burst "$GW4" 64 "$tmpl" 198.51.100.48)
	F_REPLIES=$(($(stat udp_gso_replies) - r0))
	F_MISSES=$(($(stat cache_misses) - m0))
	[ "$F_REPLIES" -gt 0 ] && break
done
eq "64 new names at once: 64 datagrams, each its name's answer" "replies 64 sizes 1 ids 64 answers 64" "$F_OUT"
eq "all 64 asked upstream (cache misses)" "64" "$F_MISSES"
ok "and replies to answers of one upstream read left grouped ($F_REPLIES)" test "$F_REPLIES" -gt 1

# dnsperf from one socket: hundreds of replies, none lost or garbled.
for i in $(seq 300); do echo "pypi.org A"; done >"$WORLD_DIR/q300.txt"
s0=$(stat udp_gso_sends)
out=$(sb_exec g1 dnsperf -s "$GW4" -d "$WORLD_DIR/q300.txt" -n 1 -c 1 -q 100 -t 3 2>&1)
has "dnsperf: 300 queries, all completed" "Queries completed:    300 (100.00%)" "$out"
has "none lost" "Queries lost:         0 (0.00%)" "$out"
has "all NOERROR" "NOERROR 300 (100.00%)" "$out"
ok "and grouped sends carried them ($(($(stat udp_gso_sends) - s0)))" test "$(stat udp_gso_sends)" -gt "$s0"
eq "the kernel refused none" "0" "$(stat udp_gso_refused)"
metrics=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)
has "GET /v1/metrics has the same grouped sends" "netd_dns_udp_gso_sends_total $(stat udp_gso_sends)" "$metrics"
has "and the proxy's other counters (cache hits)" "netd_dns_cache_hits_total $(stat cache_hits)" "$metrics"

# ---- never on the redirected path --------------------------------------------------------
s0=$(stat udp_gso_sends)
eq "a burst to another resolver address (redirected) is answered whole" \
	"replies 64 sizes 1 ids 64 answers 64" "$(burst 203.0.113.77 64)"
eq "over IPv6 too" "replies 64 sizes 1 ids 64 answers 64" "$(burst 2001:db8::77 64)"
eq "with no grouped send" "$s0" "$(stat udp_gso_sends)"

# ---- an MTU too small for a whole reply: no grouping ----------------------------------------
# (IPv4's minimum, 68: the replies leave fragmented, as without GSO.  Below
# 1280 the kernel also takes the interface's IPv6 addresses away, so only
# IPv4 from here on.)  The proxy reads the MTU for every round that could
# group, so a burst right after the change is already sent ungrouped.
grouped "$GW4"
ok "MTU 68 on both ends of g1's veth" bash -c "ip -n '$WORLD_HOST_NS' link set '$IF' mtu 68 && ip -n '$SB' link set eth0 mtu 68"
s0=$(stat udp_gso_sends)
r0=$(stat udp_gso_refused)
eq "a burst at once is answered whole (fragmented replies)" "replies 64 sizes 1 ids 64 answers 64" "$(burst "$GW4" 64)"
eq "with no grouped send" "$s0" "$(stat udp_gso_sends)"
eq "and none refused by the kernel" "$r0" "$(stat udp_gso_refused)"
eq "a single query is answered" "198.51.100.10" "$(sb_dig g1 +short "@$GW4" pypi.org A)"
ok "MTU 1500 again" bash -c "ip -n '$WORLD_HOST_NS' link set '$IF' mtu 1500 && ip -n '$SB' link set eth0 mtu 1500"
grouped "$GW4"
ok "grouping resumes at once ($G_REPLIES)" test "$G_REPLIES" -gt 1
eq "64 datagrams, each one answer" "replies 64 sizes 1 ids 64 answers 64" "$G_OUT"

# ---- dns.udp_gso: false turns it off ------------------------------------------------------
netd_down || fail "netd_down: ASan/UBSan report or unclean exit"
mv "$NETD_LOG" "$WORLD_DIR/netd-1.log"
NETD_DNS_EXTRA='  udp_gso: false'
netd_up || { t_summary; exit 1; }
eq "restarted with dns.udp_gso: false, g1 still resolves through its gateway" "198.51.100.10" \
	"$(sb_dig g1 +short "@$GW4" pypi.org A)"
G_OUT=$(burst "$GW4" 64)
G_OUT2=$(burst "$GW4" 64)
eq "bursts are answered whole" "replies 64 sizes 1 ids 64 answers 64|replies 64 sizes 1 ids 64 answers 64" "$G_OUT|$G_OUT2"
eq "and nothing is grouped" "0 0" "$(stat udp_gso_sends) $(stat udp_gso_replies)"
has "netd's log says so at start" "replies are never grouped (dns.udp_gso: false)" "$(cat "$NETD_LOG")"

netd_down || fail "netd_down: ASan/UBSan report or unclean exit"
world_down
t_summary
