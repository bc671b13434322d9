#!/usr/bin/env bash
# Connections exported as IPFIX flows, and the audit in the journal
# (docs/flows.md), with real collectors in the world's internet, on
# documentation addresses (198.51.100.99, 2001:db8:99::99):
#   - Debian's nfcapd (udp 4739): after a download and an upload through a
#     sandbox, `nfdump -r` shows each flow with bytes equal to its conn
#     record (conn + conn_late) and to the server's count (nftables
#     counters in the internet's namespace, where the server is);
#   - tests/integ/ipfix_reader.py on udp 4740 and on tcp [v6]:4741, which
#     decodes the enterprise elements (sandbox, policy, domain, rule,
#     verdict), the times and a UDP flow's exact bytes;
#   - each reader stopped and started again: the UDP one is sent the
#     Templates in the first message it gets back and what it missed is
#     exactly its Sequence Numbers' gap; the TCP one gets a new session,
#     Templates first, and the connections made meanwhile;
#   - a burst of short connections (build/test/acct_burst: FLOW_BURST_RATE
#     per second per sandbox x 4 sandboxes x FLOW_BURST_SECONDS, default
#     50,000 in 10 s): as many flows at every collector as conn records,
#     none dropped;
#   - audit.journal: netd in a mount namespace whose /run/systemd/journal
#     is a systemd-journald this test starts (its own namespace
#     "netdtest", its files under WORLD_DIR; the host's journal is never
#     touched): `journalctl NETD_SANDBOX=...` finds the sandbox's records.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

BURST=$PWD/build/test/acct_burst	# built by make asan
for need in nfcapd nfdump journalctl; do
	command -v "$need" >/dev/null || { echo "missing $need (make deps)"; echo "0 passed, 1 failed"; exit 1; }
done
[ -x "$BURST" ] || { echo "missing $BURST: run make asan first"; echo "0 passed, 1 failed"; exit 1; }
RATE=${FLOW_BURST_RATE:-1250}
SECS=${FLOW_BURST_SECONDS:-10}
NSB=4

world_up "ndi$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
COL4=198.51.100.99
COL6=2001:db8:99::99
world_exec inet ip addr add "$COL4/32" dev lo
world_exec inet ip addr add "$COL6/128" dev lo nodad

mkdir -p "$WORLD_DIR/policies" "$WORLD_DIR/nfcapd"
cat >"$WORLD_DIR/policies/flows.yaml" <<'YAML'
name: flows
egress:
  - domains: [pypi.org]
    ports: [443]
  - cidrs: [198.51.100.7/32]
    ports: [8080, 9000]
  - cidrs: [198.51.100.7/32]
    ports: [9999]
    protocol: udp
YAML
NETD_POLICIES=$WORLD_DIR/policies
# Short conntrack timeouts in the world's host netns only: closed entries are
# destroyed (and any conn_late written) within seconds.  SYN_SENT/SYN_RECV
# outlast acct_burst's whole connect (its SYN retransmits at 1 and 3 s, it
# gives up at 3 s): with 2 s, a retransmit under load met an expired entry
# and made a second flow, a second conn record, for one connection.
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 \
	net.netfilter.nf_conntrack_tcp_timeout_syn_sent=5 \
	net.netfilter.nf_conntrack_tcp_timeout_syn_recv=5 \
	net.netfilter.nf_conntrack_tcp_timeout_established=30 \
	net.netfilter.nf_conntrack_udp_timeout=1 \
	net.netfilter.nf_conntrack_udp_timeout_stream=2 2>/dev/null

# The server's count: every IP byte to and from pypi.org:443, where the server is.
world_exec inet nft -f - <<'NFT'
table inet ipfixtest {
	counter to_server {
	}
	counter from_server {
	}
	chain in {
		type filter hook input priority 0; policy accept;
		ip daddr 198.51.100.10 tcp dport 443 counter name "to_server"
	}
	chain out {
		type filter hook output priority 0; policy accept;
		ip saddr 198.51.100.10 tcp sport 443 counter name "from_server"
	}
}
NFT
server_bytes() {
	world_exec inet nft -j list counter inet ipfixtest "$1" | jq -r '.nftables[] | select(.counter) | .counter.bytes'
}
server_reset() { world_exec inet nft reset counters table inet ipfixtest >/dev/null; }

# ---- the collectors ------------------------------------------------------------
world__start inet nfcapd nfcapd -b "$COL4" -p 4739 -w "$WORLD_DIR/nfcapd" -t 3600 -B 8388608
NFCAPD_PID=${WORLD_PIDS[-1]}
# reader udp|tcp - start (again) the Python collector; its output accumulates.
reader() {
	local kind=$1 addr port
	if [ "$kind" = udp ]; then addr=$COL4 port=4740; else addr=$COL6 port=4741; fi
	rm -f "$WORLD_DIR/$kind.ready"
	world__start inet "reader-$kind" "$WORLD_PYTHON" tests/integ/ipfix_reader.py "--$kind" \
		"$addr" "$port" --out "$WORLD_DIR/$kind.jsonl" --ready "$WORLD_DIR/$kind.ready"
	eval "READER_${kind^^}=${WORLD_PIDS[-1]}"
	for ((i = 0; i < 100; i++)); do [ -e "$WORLD_DIR/$kind.ready" ] && break; sleep 0.1; done
}
reader udp
reader tcp
sleep 0.3

UDP_COL="udp://$COL4:4740"
TCP_COL="tcp://[$COL6]:4741"
netd_up "audit: { conn_update_interval: 0 }
ipfix:
  collectors: [\"udp://$COL4:4739\", \"$UDP_COL\", \"$TCP_COL\"]
  observation_domain: 77
  reconnect_interval: 1" || { echo "0 passed, 1 failed"; exit 1; }
has "netd says it exports" "ipfix: exporting connections to 3 collector(s)" "$(cat "$NETD_LOG")"
has "netd config check: a note on the documentation enterprise number" \
	"note: ipfix.enterprise is 32473, RFC 5612's number" "$(netd config check "$NETD_CONF" 2>&1)"
ok "sandbox create" sb_create f1 flows
SB1=$(sb_name f1)

field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# conn_sum SPORT DPORT - "bytes_out bytes_in packets_out packets_in" of the
# sandbox's conn and conn_late records of that flow, added up.
conn_sum() {
	python3 - "$NETD_AUDIT" "$SB1" "$1" "$2" <<-'PY'
	import json, sys
	t = [0, 0, 0, 0]
	for l in open(sys.argv[1]):
	    r = json.loads(l)
	    if r["event"] in ("conn", "conn_late") and r.get("sandbox") == sys.argv[2] and \
	       str(r.get("sport")) == sys.argv[3] and str(r.get("dport")) == sys.argv[4]:
	        for i, k in enumerate(("bytes_out", "bytes_in", "packets_out", "packets_in")):
	            t[i] += r[k]
	print(*t)
	PY
}
# ipfix_sum FILE SPORT DPORT - the same, from a reader's records.
ipfix_sum() {
	python3 - "$@" <<-'PY'
	import json, sys
	t = [0, 0, 0, 0]
	for l in open(sys.argv[1]):
	    r = json.loads(l)
	    if r["kind"] == "record" and str(r.get("sport")) == sys.argv[2] and str(r.get("dport")) == sys.argv[3]:
	        for i, k in enumerate(("octets_out", "octets_in", "packets_out", "packets_in")):
	            t[i] += r[k]
	print(*t)
	PY
}
# ipfix_rec FILE SPORT DPORT - the first record of that flow, as JSON.
ipfix_rec() {
	python3 - "$@" <<-'PY'
	import json, sys
	for l in open(sys.argv[1]):
	    r = json.loads(l)
	    if r["kind"] == "record" and str(r.get("sport")) == sys.argv[2] and str(r.get("dport")) == sys.argv[3]:
	        print(json.dumps(r)); break
	PY
}
# wait_for SECONDS CMD... - until CMD prints something non-empty and not "0 0 0 0"
# (then that); "" if it never does.
wait_for() {
	local secs=$1 out i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		out=$("$@" 2>/dev/null)
		if [ -n "$out" ] && [ "$out" != "0 0 0 0" ]; then
			printf '%s' "$out"
			return 0
		fi
		sleep 0.1
	done
	return 1
}
# settled SPORT DPORT - the flow's records are final: wait until conntrack has
# forgotten it (then any conn_late is written), with a bound.
settled() {
	local i
	for ((i = 0; i < 100; i++)); do
		world_exec host conntrack -L -p "${3:-tcp}" --orig-port-src "$1" --orig-port-dst "$2" 2>/dev/null |
			grep -q . || { sleep 0.5; return 0; }
		sleep 0.2
	done
}
metric() {
	world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics |
		awk -v k="$1" '$1 == k {print $2}'
}
ms_of() { python3 -c 'import datetime,sys; print(int(datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5))' "$1"; }

# ---- a download and an upload: bytes equal at netd, the collectors, the server ----
declare -A SPORTS
transfer() {
	local label=$1 sport rec ours want srv
	shift
	server_reset
	sport=$(sb_curl f1 -o /dev/null -w '%{local_port}' "$@")
	ok "$label: done" test -n "$sport"
	SPORTS[$label]=$sport
	rec=$(audit_wait 20 '"event":"conn"' "\"sport\":$sport," '"dport":443,')
	ok "$label: its conn record" test -n "$rec"
	settled "$sport" 443
	ours=$(conn_sum "$sport" 443)
	srv="$(server_bytes to_server) $(server_bytes from_server)"
	eq "$label: the server counted what netd's records say (bytes out, in)" "$srv" "${ours% * *}"
	for f in udp tcp; do
		want=$(wait_for 20 ipfix_sum "$WORLD_DIR/$f.jsonl" "$sport" 443)
		eq "$label: $f reader: octets and packets both ways = the conn records'" "$ours" "$want"
	done
	rec=$(ipfix_rec "$WORLD_DIR/udp.jsonl" "$sport" 443)
	eq "$label: sandbox element" "$SB1" "$(field "$rec" sandbox)"
	eq "$label: policy element" "flows" "$(field "$rec" policy)"
	eq "$label: domain element" "pypi.org" "$(field "$rec" domain)"
	eq "$label: rule element" "pypi.org" "$(field "$rec" rule)"
	eq "$label: verdict element" "allow" "$(field "$rec" verdict)"
	eq "$label: protocol 6, end of flow (3)" "6 3" "$(field "$rec" proto) $(field "$rec" end_reason)"
	eq "$label: the sandbox is the source, the server the destination" \
		"$(sb_field "$SB1" ipv4) 198.51.100.10" "$(field "$rec" src) $(field "$rec" dst)"
	conn=$(audit_grep '"event":"conn"' "\"sport\":$sport," '"dport":443,' | head -1)
	eq "$label: flowStart/End = the conn record's start and end" \
		"$(ms_of "$(field "$conn" start)") $(ms_of "$(field "$conn" end)")" \
		"$(field "$rec" start_ms) $(field "$rec" end_ms)"
}
N_DOWN=1048576
N_UP=300000
transfer download "https://pypi.org/bytes/$N_DOWN"
head -c "$N_UP" /dev/zero >"$WORLD_DIR/up.bin"
transfer upload --data-binary "@$WORLD_DIR/up.bin" https://pypi.org/upload

# ---- a UDP flow through a CIDR rule: its exact bytes, its rule -------------------
world__start inet udpecho "$WORLD_PYTHON" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.7", 9999))
while True:
    d, a = s.recvfrom(2048)
    s.sendto(d, a)
'
sleep 0.5
eq "UDP flow: 3 x 100 bytes echoed" "300" "$(sb_exec f1 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.bind(("0.0.0.0", 40999))
n = 0
for i in range(3):
    s.sendto(b"x" * 100, ("198.51.100.7", 9999))
    n += len(s.recv(2048))
print(n)
')"
eq "UDP flow: IPFIX octets and packets = 3 x 128 each way" "384 384 3 3" \
	"$(wait_for 30 ipfix_sum "$WORLD_DIR/tcp.jsonl" 40999 9999)"
rec=$(ipfix_rec "$WORLD_DIR/tcp.jsonl" 40999 9999)
eq "UDP flow: domain and rule are the CIDR rule" "198.51.100.7/32 198.51.100.7/32" \
	"$(field "$rec" domain) $(field "$rec" rule)"
eq "UDP flow: protocol 17, idle timeout (1)" "17 1" "$(field "$rec" proto) $(field "$rec" end_reason)"
has "messages carry observation domain 77" '"domain":77' "$(grep -m1 '"kind":"message"' "$WORLD_DIR/udp.jsonl")"
eq "no Data Set ever came before its Template" "0" \
	"$(cat "$WORLD_DIR"/{udp,tcp}.jsonl | grep '"kind":"message"' | grep -vc '"unknown_sets":0')"

# ---- a collector that goes away and comes back ----------------------------------
cidr_conn() { sb_curl f1 -o /dev/null -w '%{local_port}' http://198.51.100.7:8080/; }
world__kill "$READER_UDP"
world__kill "$READER_TCP"
gone=()
for i in 1 2 3; do
	gone+=("$(cidr_conn)")
	audit_wait 20 '"event":"conn"' "\"sport\":${gone[-1]}," >/dev/null
	sleep 0.3	# one message each: the ICMP of one is the next one's refusal
done
ok "UDP collector down: netd counts what it could not send" \
	test "$(metric "netd_ipfix_records_dropped_total{collector=\"$UDP_COL\"}")" -ge 1
eq "TCP collector down: netd knows" "0" "$(metric "netd_ipfix_collector_up{collector=\"$TCP_COL\"}")"
ok "TCP collector down: its records wait in the queue" \
	test "$(metric "netd_ipfix_queued_records{collector=\"$TCP_COL\"}")" -ge 1
tcp_sessions=$(grep -c '"kind":"session"' "$WORLD_DIR/tcp.jsonl")
reader udp
reader tcp
# The first message after it is back may still be refused (the ICMP of the
# one before it is pending on netd's socket: lost and counted); the next goes.
for try in 1 2 3; do
	back=$(cidr_conn)
	want=$(wait_for 5 ipfix_sum "$WORLD_DIR/udp.jsonl" "$back" 8080) && break
done
ok "UDP collector back: the next connections reach it (after $try)" test -n "$want"
first=$(awk '/"kind":"session"/ {n++} n == 2 && /"kind":"message"/ {print; exit}' "$WORLD_DIR/udp.jsonl")
ok "UDP collector back: the first message it gets carries the Templates" \
	test "$(field "$first" templates)" -ge 2
eq "UDP collector back: ... before any Data Set (none unknown)" "0" "$(field "$first" unknown_sets)"
for s in "${gone[@]}"; do
	ok "TCP collector back: the connection made while it was away (sport $s) arrives" \
		test -n "$(wait_for 20 ipfix_sum "$WORLD_DIR/tcp.jsonl" "$s" 8080)"
done
eq "TCP collector back: a new session" "$((tcp_sessions + 1))" "$(grep -c '"kind":"session"' "$WORLD_DIR/tcp.jsonl")"
first=$(awk -v n0="$tcp_sessions" '/"kind":"session"/ {n++} n == n0 + 1 && /"kind":"message"/ {print; exit}' "$WORLD_DIR/tcp.jsonl")
eq "TCP collector back: the session opens with the Templates, Sequence Number 0" "2 0" \
	"$(field "$first" templates) $(field "$first" seq)"

# exported_vs_seen FILE - "records exported to it (the audit's conn and conn_late
# records), records it decoded, records its Sequence Numbers say it missed".
exported_vs_seen() {
	python3 - "$NETD_AUDIT" "$1" <<-'PY'
	import json, sys
	exported = sum(1 for l in open(sys.argv[1]) if json.loads(l)["event"] in ("conn", "conn_late"))
	seen = gap = 0
	nxt = None
	for l in open(sys.argv[2]):
	    r = json.loads(l)
	    if r["kind"] != "message":
	        continue
	    if nxt is not None and r["seq"] > nxt:
	        gap += r["seq"] - nxt
	    seen += r["records"]
	    nxt = r["seq"] + r["records"]
	print(exported, seen, gap)
	PY
}
read -r exp seen gap <<<"$(exported_vs_seen "$WORLD_DIR/udp.jsonl")"
eq "UDP: what it missed is exactly its Sequence Numbers' gap ($gap)" "$exp" "$((seen + gap))"
ok "UDP: netd counted no more than it missed" \
	test "$(metric "netd_ipfix_records_dropped_total{collector=\"$UDP_COL\"}")" -le "$gap"

m=$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics)
out=$(promtool check metrics <<<"$m" 2>&1); rc=$?
eq "promtool check metrics: the netd_ipfix_* families too" "0 " "$rc $out"
has "metrics: a series per collector" "netd_ipfix_records_sent_total{collector=\"$TCP_COL\"}" "$m"

# ---- a burst: every connection a flow at every collector ------------------------
world_spawn inet "$WORLD_DIR/burst-server.log" "$BURST" server 198.51.100.7 9000
for ((i = 0; i < 50; i++)); do grep -q listening "$WORLD_DIR/burst-server.log" && break; sleep 0.1; done
for ((s = 1; s <= NSB; s++)); do ok "sandbox create b$s" sb_create "b$s" flows; done
# burst_records FILE - audit records (conn, conn_late) or decoded flows to port 9000.
burst_records() {
	python3 - "$1" <<-'PY'
	import json, sys
	n = 0
	for l in open(sys.argv[1]):
	    r = json.loads(l)
	    if r.get("dport") == 9000 and (r.get("event") in ("conn", "conn_late") or r.get("kind") == "record"):
	        n += 1
	print(n)
	PY
}
udp_dropped=$(metric "netd_ipfix_records_dropped_total{collector=\"$UDP_COL\"}")
pids=()
for ((s = 1; s <= NSB; s++)); do
	ns=$(sb_field "$(sb_name "b$s")" netns)
	timeout 120 nsenter --net="$ns" -- "$BURST" client 198.51.100.7 9000 "$RATE" "$SECS" \
		>"$WORLD_DIR/client$s.out" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
total=0
for ((s = 1; s <= NSB; s++)); do
	read -r _ a _ _ _ _ _ ms <"$WORLD_DIR/client$s.out"
	total=$((total + a))
done
echo "  burst: $total connections in $SECS s"
for ((i = 0; i < 900; i++)); do
	n=$(grep -cF '"event":"conn","sandbox":"'"$WORLD_PREFIX"'-b' "$NETD_AUDIT")
	[ "$n" -ge "$total" ] && break
	sleep 0.2
done
eq "burst: a conn record per connection" "$total" "$n"
sleep 3	# TIME_WAIT (1 s) ends: any conn_late is written
want=$(burst_records "$NETD_AUDIT")
echo "  burst: $want records (conn and conn_late)"
for f in udp tcp; do
	for ((i = 0; i < 300; i++)); do
		got=$(burst_records "$WORLD_DIR/$f.jsonl")
		[ "$got" -ge "$want" ] && break
		sleep 0.2
	done
	eq "burst: the $f reader decoded a flow per record" "$want" "$got"
done
eq "burst: nothing more dropped for the UDP reader" "$udp_dropped" \
	"$(metric "netd_ipfix_records_dropped_total{collector=\"$UDP_COL\"}")"
eq "burst: nothing dropped for the TCP reader" "0" \
	"$(metric "netd_ipfix_records_dropped_total{collector=\"$TCP_COL\"}")"
read -r exp seen gap <<<"$(exported_vs_seen "$WORLD_DIR/tcp.jsonl")"
eq "TCP: every record exported was seen, no gap" "$exp $exp 0" "$exp $seen $gap"

# ---- nfdump: nfcapd's file ------------------------------------------------------
world__kill "$NFCAPD_PID"	# it writes its last file on SIGTERM
ok "nfcapd wrote its files" test -n "$(ls "$WORLD_DIR"/nfcapd/nfcapd.2* 2>/dev/null)"
# -R: every file of the directory (nfcapd starts a new one on the hour).
NFD=$(nfdump -R "$WORLD_DIR/nfcapd" -q -N -o "fmt:%pr %sa %sp %da %dp %ibyt %obyt %ipkt %opkt" 2>&1)
has "nfcapd saw no sequence error" "Sequence Errors: 0" "$(cat "$WORLD_DIR/nfcapd.out")"
for label in download upload; do
	sport=${SPORTS[$label]}
	got=$(awk -v p="$sport" '$3 == p && $5 == 443 {o += $6; i += $7; po += $8; pi += $9} END {print o + 0, i + 0, po + 0, pi + 0}' <<<"$NFD")
	eq "nfdump: the $label's flow: in/out bytes and packets = its conn records" \
		"$(conn_sum "$sport" 443)" "$got"
done
eq "nfdump: a flow per burst record" "$want" "$(awk '$5 == 9000' <<<"$NFD" | wc -l)"
netd_down

# ---- audit.journal: netd's records in a journald of this test's own ---------------
J=$WORLD_DIR/journal
mkdir -p "$J/run" "$J/runlog" "$J/varlog" "$J/stage1" "$J/stage2"
# journald in namespace "netdtest" (journalctl --namespace): its sockets under
# /run/systemd/journal.netdtest, its files under /var/log/journal, both
# directories of this test, in a mount namespace of its own.
unshare -m --propagation private tests/integ/lib_mntns.sh "$J/stage1" "$J/run=/run/systemd" \
	"$J/runlog=/run/log/journal" "$J/varlog=/var/log/journal" -- \
	env SYSTEMD_LOG_TARGET=console /lib/systemd/systemd-journald netdtest \
	</dev/null >"$WORLD_DIR/journald.log" 2>&1 &
world_pid_track $!
for ((i = 0; i < 100; i++)); do [ -S "$J/run/journal.netdtest/socket" ] && break; sleep 0.1; done
ok "a journald of the test's own listens" test -S "$J/run/journal.netdtest/socket"
# netd sees that socket at /run/systemd/journal/socket, in a mount namespace
# of its own where /run/netns stays shared, so its sandboxes are visible here.
NETD_WRAP=(unshare -m --propagation unchanged tests/integ/lib_mntns.sh --share /run/netns
	"$J/stage2" "$J/run/journal.netdtest=/run/systemd/journal" --)
# (and IPFIX to the TCP reader with interim records every 5 s: below)
netd_up "audit: { conn_update_interval: 0, journal: true }
ipfix: { collectors: [\"$TCP_COL\"], interim_interval: 5, reconnect_interval: 1 }" ||
	{ echo "0 passed, 1 failed"; exit 1; }
unset NETD_WRAP
hasnt "netd found the journal" "no journald here" "$(cat "$NETD_LOG")"
ok "sandbox create" sb_create j1 flows
SBJ=$(sb_name j1)
sport=$(sb_curl j1 -o /dev/null -w '%{local_port}' "https://pypi.org/bytes/4096")
rec=$(audit_wait 20 '"event":"conn"' "\"sandbox\":\"$SBJ\"" "\"sport\":$sport,")
ok "its conn record in the file" test -n "$rec"
jctl() { journalctl --directory="$(dirname "$(find "$J/varlog" "$J/runlog" -name '*.journal' | head -1)")" "$@"; }
for ((i = 0; i < 50; i++)); do
	jrec=$(jctl -o json NETD_SANDBOX="$SBJ" NETD_EVENT=conn 2>/dev/null | head -1)
	[ -n "$jrec" ] && break
	sleep 0.2
done
ok "journalctl NETD_SANDBOX=$SBJ NETD_EVENT=conn finds it" test -n "$jrec"
eq "journal: the same bytes as the file's record" \
	"$(field "$rec" bytes_out) $(field "$rec" bytes_in) $(field "$rec" domain)" \
	"$(field "$jrec" NETD_BYTES_OUT) $(field "$jrec" NETD_BYTES_IN) $(field "$jrec" NETD_DOMAIN)"
eq "journal: SYSLOG_IDENTIFIER, PRIORITY" "netd-audit 6" \
	"$(field "$jrec" SYSLOG_IDENTIFIER) $(field "$jrec" PRIORITY)"
has "journal: a one-line MESSAGE" "conn sandbox=$SBJ" "$(field "$jrec" MESSAGE)"
ok "journal: the sandbox's DNS query too" test -n "$(jctl -o json NETD_SANDBOX="$SBJ" NETD_EVENT=dns NETD_QNAME=pypi.org)"
ok "journal: the sandbox's create" test -n "$(jctl -o json NETD_SANDBOX="$SBJ" NETD_EVENT=sandbox NETD_ACTION=create)"
fail "journal: another sandbox has nothing" test -n "$(jctl -o json NETD_SANDBOX=no-such-sandbox)"
eq "metrics: the journal took every record, dropped none" "0" "$(metric netd_audit_journal_dropped_total)"
out=$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics | promtool check metrics 2>&1); rc=$?
eq "promtool check metrics: with netd_audit_journal_*" "0 " "$rc $out"

# ---- interim records: a long download, exported in stretches that add up ------------
SB1=$SBJ	# conn_sum's sandbox
# 16 s at 250 kB/s: an interim record is due 5 s in and goes at conntrack's
# next 5-s dump (5-10 s in), so at least one comes before the end even on a
# slow machine (8 s, as before, could end first: one run saw only the end).
sport=$(sb_curl j1 --max-time 40 -o /dev/null -w '%{local_port}' "https://pypi.org/bytes/4000000?rate=250000")
rec=$(audit_wait 40 '"event":"conn"' "\"sandbox\":\"$SBJ\"" "\"sport\":$sport,")
ok "the long download's conn record" test -n "$rec"
settled "$sport" 443
ours=$(conn_sum "$sport" 443)
eq "interim: the stretches add up to the conn records" "$ours" \
	"$(wait_for 20 ipfix_sum "$WORLD_DIR/tcp.jsonl" "$sport" 443)"
python3 - "$WORLD_DIR/tcp.jsonl" "$sport" "$(ms_of "$(field "$rec" start)")" \
	"$(ms_of "$(field "$rec" end)")" >"$WORLD_DIR/interim.out" <<-'PY'
	import json, sys
	rs = [r for r in map(json.loads, open(sys.argv[1]))
	      if r["kind"] == "record" and r.get("sport") == int(sys.argv[2]) and r.get("dport") == 443]
	reasons = [r["end_reason"] for r in rs]
	tiled = all(a["end_ms"] == b["start_ms"] for a, b in zip(rs, rs[1:]))
	print(len(rs) >= 2 and reasons[:-1] == [2] * (len(rs) - 1) and reasons[-1] == 3,
	      tiled, rs[0]["start_ms"] == int(sys.argv[3]), rs[-1]["end_ms"] == int(sys.argv[4]), reasons)
	PY
read -r shape tiled first last _ <"$WORLD_DIR/interim.out"
echo "  interim: end reasons $(cut -d' ' -f5- "$WORLD_DIR/interim.out")"
eq "interim: active-timeout records (2), then the end of the flow (3)" "True" "$shape"
eq "interim: each stretch starts where the last ended; the first at the start, the last at the end" \
	"True True True" "$tiled $first $last"
netd_down
t_summary
