#!/usr/bin/env bash
# Per-connection accounting and deny records: downloads and uploads of known
# sizes through curl, a UDP flow, denied attempts (unpinned address,
# sandbox-to-host, ICMP, sandbox-to-sandbox), each checked in the audit log
# by its fields and byte counts, then `netd audit` over the same log and
# GET /v1/metrics.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nda$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }

# Policies: the shipped ones plus one with a UDP rule.
mkdir -p "$WORLD_DIR/policies"
cp policies/*.yaml "$WORLD_DIR/policies/"
cat >"$WORLD_DIR/policies/acct-udp.yaml" <<'YAML'
name: acct-udp
egress:
  - domains: [pypi.org]
    ports: [443]
  - cidrs: [198.51.100.7/32]
    ports: [9999]
    protocol: udp
YAML
NETD_POLICIES=$WORLD_DIR/policies

# Short conntrack timeouts in the world's host netns only, so a closed
# connection's entry (TIME_WAIT, UDP) is destroyed soon after it ends.
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 \
	net.netfilter.nf_conntrack_udp_timeout=1 \
	net.netfilter.nf_conntrack_udp_timeout_stream=2 \
	net.netfilter.nf_conntrack_icmp_timeout=1 2>/dev/null

netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
eq "conntrack accounting switched on by netd" "1" "$(world_exec host cat /proc/sys/net/netfilter/nf_conntrack_acct)"
ok "sandbox create" sb_create sb1 python-dev
ok "sandbox create (udp policy)" sb_create sb2 acct-udp
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
SB1_IP=$(netd sandbox show "$SB1" | sed -n 's/.*"ipv4": "\(.*\)".*/\1/p')
SB1_GW=$(sb_field "$SB1" gateway4)
SB2_IP=$(netd sandbox show "$SB2" | sed -n 's/.*"ipv4": "\(.*\)".*/\1/p')

# wait_record N FILTER... - until N records match every FILTER (fixed strings);
# prints the matches.  Polls the log; the bound only stops a broken run.
wait_record() {
	local want=$1 i out
	shift
	for ((i = 0; i < 600; i++)); do
		out=$(audit_grep "$@")
		if [ -n "$out" ] && [ "$(wc -l <<<"$out")" -ge "$want" ]; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.1
	done
	printf '%s\n' "$out"
	return 1
}

# field JSON KEY - a top-level scalar of one JSON line.
field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# within LO HI V
within() { [ "$3" -ge "$1" ] && [ "$3" -le "$2" ]; }

# ---- a download of a known size --------------------------------------------
N_DOWN=1048576
got=$(sb_curl sb1 -o /dev/null -w '%{size_download}' "https://pypi.org/bytes/$N_DOWN")
eq "download of $N_DOWN bytes" "$N_DOWN" "$got"
rec=$(wait_record 1 '"event":"conn"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.10"' '"dport":443' | head -1)
if [ -z "$rec" ]; then
	t_fail "conn record for the download"
else
	t_pass "conn record for the download"
	eq "conn: proto" "tcp" "$(field "$rec" proto)"
	eq "conn: src is the sandbox" "$SB1_IP" "$(field "$rec" src)"
	eq "conn: domain is the pinned name" "pypi.org" "$(field "$rec" domain)"
	eq "conn: policy" "python-dev" "$(field "$rec" policy)"
	bin=$(field "$rec" bytes_in)
	bout=$(field "$rec" bytes_out)
	# IP + TCP headers (~5%) and the TLS handshake on top of the body.
	ok "conn: bytes_in $bin covers $N_DOWN and little more" within "$N_DOWN" $((N_DOWN * 130 / 100 + 20000)) "$bin"
	ok "conn: bytes_out $bout is requests and ACKs only" within 200 $((N_DOWN / 10)) "$bout"
	ok "conn: packets counted both ways" within 2 1000000 "$(field "$rec" packets_out)"
	has "conn: start is RFC 3339 UTC" "Z" "$(field "$rec" start)"
	has "conn: end is RFC 3339 UTC" "Z" "$(field "$rec" end)"
	ok "conn: sport is a port" within 1 65535 "$(field "$rec" sport)"
	has "conn: duration_s present" '"duration_s":' "$rec"
fi

# ---- an upload of a known size ----------------------------------------------
N_UP=300000
head -c "$N_UP" /dev/zero >"$WORLD_DIR/up.bin"
eq "upload of $N_UP bytes" "$N_UP" "$(sb_curl sb1 --data-binary "@$WORLD_DIR/up.bin" https://pypi.org/upload)"
rec=$(wait_record 2 '"event":"conn"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.10"' '"dport":443' | tail -1)
bout=$(field "$rec" bytes_out 2>/dev/null || echo 0)
# (headers, TLS records and any retransmissions are the kernel's count too)
ok "upload conn: bytes_out $bout covers $N_UP and little more" within "$N_UP" $((N_UP * 130 / 100 + 20000)) "$bout"
bin=$(field "$rec" bytes_in 2>/dev/null || echo 0)
ok "upload conn: bytes_in $bin is small" within 200 $((N_UP / 10)) "$bin"

# ---- a CIDR rule: the domain is the rule ---------------------------------------
eq "CIDR host" "cidr-host ok" "$(sb_curl sb1 http://198.51.100.7:8080/)"
rec=$(wait_record 1 '"event":"conn"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.7"' '"dport":8080' | head -1)
eq "conn via a CIDR rule: domain is the rule" "198.51.100.7/32" "$(field "$rec" domain 2>&1)"

# ---- a UDP flow ---------------------------------------------------------------------
world__start inet udpecho "$WORLD_PYTHON" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.7", 9999))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
'
sleep 0.5
udp_client='
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.bind(("0.0.0.0", 40999))
n = 0
for i in range(3):
    s.sendto(b"x" * 100, ("198.51.100.7", 9999))
    n += len(s.recv(2048))
print(n)
'
eq "UDP flow: 3 x 100 bytes echoed" "300" "$(sb_exec sb2 python3 -c "$udp_client")"
rec=$(wait_record 1 '"event":"conn"' "\"sandbox\":\"$SB2\"" '"proto":"udp"' '"dport":9999' | head -1)
eq "UDP conn: sport" "40999" "$(field "$rec" sport 2>&1)"
eq "UDP conn: bytes_out = 3 x (100 + 28)" "384" "$(field "$rec" bytes_out 2>&1)"
eq "UDP conn: bytes_in = 3 x (100 + 28)" "384" "$(field "$rec" bytes_in 2>&1)"
eq "UDP conn: packets_out" "3" "$(field "$rec" packets_out 2>&1)"
eq "UDP conn: packets_in" "3" "$(field "$rec" packets_in 2>&1)"
eq "UDP conn: domain is the CIDR rule" "198.51.100.7/32" "$(field "$rec" domain 2>&1)"
eq "UDP conn: policy" "acct-udp" "$(field "$rec" policy 2>&1)"

# ---- denied attempts ------------------------------------------------------------------
fail "unpinned address is dropped" sb_curl sb1 --connect-timeout 1 http://203.0.113.66:80/
rec=$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dst":"203.0.113.66"' '"dport":80' | head -1)
eq "deny: reason" "not-pinned" "$(field "$rec" reason 2>&1)"
eq "deny: proto" "tcp" "$(field "$rec" proto 2>&1)"
eq "deny: src" "$SB1_IP" "$(field "$rec" src 2>&1)"
fail "pinned address on another port is dropped" sb_curl sb1 --connect-timeout 1 http://pypi.org:80/
rec=$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"dst":"198.51.100.10"' '"dport":80' | head -1)
eq "deny on a pinned address: domain is the pinned name" "pypi.org" "$(field "$rec" domain 2>&1)"
eq "deny on a pinned address, a port its rule does not give: port-not-allowed" \
	"port-not-allowed" "$(field "$rec" reason 2>&1)"
fail "ICMP is dropped" sb_exec sb1 ping -c 1 -W 1 198.51.100.10
rec=$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"proto":"icmp"' | head -1)
eq "deny: ICMP echo request (type 8)" "8" "$(field "$rec" icmp_type 2>&1)"
fail "the host is unreachable" sb_exec sb1 curl -sS --connect-timeout 1 "http://$SB1_GW:22/"
rec=$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"reason":"to-host"' | head -1)
eq "deny to the host: dport" "22" "$(field "$rec" dport 2>&1)"
fail "another sandbox is unreachable" sb_exec sb1 curl -sS --connect-timeout 1 "http://$SB2_IP:80/"
rec=$(wait_record 1 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"reason":"sandbox-to-sandbox"' | head -1)
eq "deny sandbox-to-sandbox: dst" "$SB2_IP" "$(field "$rec" dst 2>&1)"

# ---- rate limit: a flood is recorded in part, and the rest counted ---------------------
flood='
import socket
for i in range(500):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("203.0.113.66", 7000 + i))
    s.close()
'
sb_exec sb2 python3 -c "$flood"
# Every packet is accounted for: written as a deny record, or counted as suppressed.
tot=0
for ((i = 0; i < 300; i++)); do
	recs=$(audit_grep "\"sandbox\":\"$SB2\"" '"dst":"203.0.113.66"' '"event":"deny"')
	n=$(grep -c . <<<"$recs")
	sup=$(audit_grep "\"sandbox\":\"$SB2\"" '"suppressed":' | python3 -c '
import json, sys
print(sum(json.loads(l)["suppressed"] for l in sys.stdin if l.strip()))')
	tot=$((n + sup))
	[ "$tot" -ge 500 ] && break
	sleep 0.1
done
ok "flood: fewer than 500 deny records written ($n)" within 1 499 "$n"
eq "flood: records + suppressed = packets sent" "500" "$tot"

# ---- counters ------------------------------------------------------------------------------
show=$(netd sandbox show "$SB1")
has "sandbox show has traffic counters" '"bytes_in":' "$show"
metrics=$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)
has "metrics: per-sandbox bytes" "netd_sandbox_bytes_in_total{sandbox=\"$SB1\"}" "$metrics"
has "metrics: per-domain bytes" "netd_domain_bytes_out_total{sandbox=\"$SB1\",domain=\"pypi.org\"}" "$metrics"
has "metrics: audit drops" "netd_audit_dropped_total 0" "$metrics"
# The table: the sandbox's BYTES-IN column holds at least the 1 MiB downloaded.
bin=$(netd sandbox list | awk -v n="$SB1" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "BYTES-IN") c = i}
	$1 == n {print $c}')
ok "sandbox list shows the bytes received ($bin)" test "${bin:-0}" -ge 1048576

# ---- netd audit ----------------------------------------------------------------------------
A=(netd audit --file "$NETD_AUDIT")
out=$("${A[@]}" --event bogus 2>&1); rc=$?
eq "audit --event with an unknown event: usage error" "2" "$rc"
has "audit --event with an unknown event: lists the events" "conn_update" "$out"
out=$("${A[@]}" --json --sandbox "$SB1" --event conn --domain pypi.org)
eq "audit --json filters: 2 pypi.org conns of sb1" "2" "$(grep -c . <<<"$out")"
hasnt "audit --sandbox leaves other sandboxes out" "\"sandbox\":\"$SB2\"" "$out"
out=$("${A[@]}" --json --event deny --sandbox "$SB1" --domain '*.org')
has "audit --domain '*.org' finds the deny on pypi.org:80" '"dport":80' "$out"
eq "audit --until before everything: nothing" "" "$("${A[@]}" --json --until 2000-01-01)"
eq "audit --since the future: nothing" "" "$("${A[@]}" --json --since 2999-01-01T00:00:00Z)"
n_all=$("${A[@]}" --json --since 1h | grep -c .)
eq "audit --since 1h: every record" "$(grep -c . "$NETD_AUDIT")" "$n_all"
sum=$("${A[@]}" --summary --json --sandbox "$SB1")
row=$(grep '"domain":"pypi.org"' <<<"$sum")
eq "summary: pypi.org conns" "2" "$(field "$row" conns 2>&1)"
want_in=$(audit_grep '"event":"conn"' "\"sandbox\":\"$SB1\"" '"domain":"pypi.org"' | python3 -c '
import json, sys
print(sum(json.loads(l)["bytes_in"] for l in sys.stdin if l.strip()))')
eq "summary: pypi.org bytes_in is the sum of its conn records" "$want_in" "$(field "$row" bytes_in 2>&1)"
has "summary table" "pypi.org" "$("${A[@]}" --summary)"
out=$("${A[@]}" --summary --sandbox no-such-sandbox 2>&1); rc=$?
eq "summary of nothing (no conn or deny record matches): the empty table, exit 0" "0 SANDBOX" \
	"$rc $(head -c 7 <<<"$out")"
hasnt "and no sanitizer report" "runtime error" "$out"
has "table output has a header" "BYTES_OUT" "$("${A[@]}" --event conn)"
fail "audit: a bad time is a usage error" "${A[@]}" --since yesterday

netd_down
t_summary
