#!/usr/bin/env bash
# conn records at the connection's close, not at conntrack's DESTROY: with
# the kernel's default TIME_WAIT (120 s) a download's and an upload's `conn`
# records arrive within 2 s of the client's close, their duration_s is the
# connection's (measured by the client, within 0.5 s) and their byte counts
# are exactly the kernel's (conntrack -L of the entry in TIME_WAIT).  An
# allowed connection's start is a `conn_open` record with its domain.  Then,
# with TIME_WAIT shortened, the late DESTROY adds no second record and the
# metrics agree with the records to the byte.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndc$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)

field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }
# fle A B - float A <= float B
fle() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }

# One TLS exchange with pypi.org:443 from the sandbox, paced so that it lasts
# a while.  MODE: down (GET N bytes) or up (POST N bytes).  Prints
# "SPORT T_CONNECT T_CLOSED GOT" (wall clock, seconds) - the connection's real
# life as the client saw it: from before connect() to after close().
CLIENT='
import socket, ssl, sys, time
mode, n, ca, tls_close = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
ctx = ssl.create_default_context(cafile=ca)
addr = socket.getaddrinfo("pypi.org", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4]
t0 = time.time()
raw = socket.create_connection(addr, timeout=20)
s = ctx.wrap_socket(raw, server_hostname="pypi.org")
sport = s.getsockname()[1]
if mode == "down":
    s.sendall(b"GET /bytes/%d?rate=700000 HTTP/1.1\r\nHost: pypi.org\r\nConnection: close\r\n\r\n" % n)
else:
    s.sendall(b"POST /upload HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % n)
    chunk = b"u" * 16384
    left = n
    while left:
        k = min(left, len(chunk))
        s.sendall(chunk[:k])
        left -= k
        time.sleep(0.02)
got = 0
while True:
    b = s.recv(65536)
    if not b:
        break
    got += len(b)
if tls_close:
    # TLS close_notify after the server closed: the server answers with a RST
    # after the connection reached TIME_WAIT - packets after the conn record.
    try:
        s.unwrap()
    except Exception:
        pass
s.close()
t1 = time.time()
print(sport, "%.3f" % t0, "%.3f" % t1, got)
'

# wait_conn SPORT T_CLOSED - the conn record of SPORT, polled until 2 s after
# the close; prints it and the seconds it took after the close.
wait_conn() {
	local sport=$1 t1=$2 rec now
	for ((i = 0; i < 30; i++)); do
		rec=$(audit_grep '"event":"conn"' "\"sandbox\":\"$SB1\"" "\"sport\":$sport" | head -1)
		[ -n "$rec" ] && break
		sleep 0.1
	done
	now=$(date +%s.%N)
	printf '%s\n%s\n' "$rec" "$(python3 -c "print('%.3f' % ($now - $2))")"
}

# kernel_counters SPORT - "BYTES_OUT BYTES_IN" of the conntrack entry (TIME_WAIT).
kernel_counters() {
	world_exec host conntrack -L -p tcp --orig-port-src "$1" 2>/dev/null |
		sed -n 's/.*bytes=\([0-9]*\).*bytes=\([0-9]*\).*/\1 \2/p' | head -1
}

# check_close WHAT MODE N [TLS_CLOSE]
check_close() {
	local what=$1 mode=$2 n=$3 tls=${4:-0} out sport t0 t1 got rec lag kb dur real
	out=$(sb_exec sb1 python3 -c "$CLIENT" "$mode" "$n" "$WORLD_CA" "$tls")
	read -r sport t0 t1 got <<<"$out"
	ok "$what: exchange done (sport ${sport:-none}, $got bytes back)" test -n "$t1"
	[ -n "$t1" ] || return
	{ read -r rec; read -r lag; } < <(wait_conn "$sport" "$t1")
	if [ -z "$rec" ]; then
		t_fail "$what: conn record within 2 s of the close (TIME_WAIT is 120 s)" \
			"$(audit_grep "\"sport\":$sport")"
		return
	fi
	t_pass "$what: conn record ${lag}s after the close (TIME_WAIT is 120 s)"
	kb=$(kernel_counters "$sport")
	KERNEL=$kb
	[ "$tls" = 1 ] ||	# (with TLS_CLOSE, packets follow the record: see below)
		eq "$what: bytes_out bytes_in are the kernel's" "$kb" "$(field "$rec" bytes_out) $(field "$rec" bytes_in)"
	dur=$(field "$rec" duration_s)
	real=$(python3 -c "print('%.3f' % ($t1 - $t0))")
	ok "$what: duration_s $dur is the connection's ($real s), within 0.5 s" \
		python3 -c "import sys; sys.exit(0 if abs($dur - $real) <= 0.5 else 1)"
	if [ "$mode" = down ]; then
		ok "$what: bytes_in covers the $n bytes" test "$(field "$rec" bytes_in)" -ge "$n"
	else
		ok "$what: bytes_out covers the $n bytes" test "$(field "$rec" bytes_out)" -ge "$n"
	fi
	eq "$what: domain" "pypi.org" "$(field "$rec" domain)"
	open=$(audit_grep '"event":"conn_open"' "\"sandbox\":\"$SB1\"" "\"sport\":$sport")
	eq "$what: one conn_open record" "1" "$(grep -c . <<<"$open")"
	eq "$what: conn_open names the domain that allowed it" "pypi.org" "$(field "$open" domain 2>&1)"
	# (conn_open's start is when netd read the NEW event; conn's is the kernel's)
	ok "$what: conn_open start within 0.5 s of conn start" python3 -c '
import sys, datetime
f = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
sys.exit(0 if abs(f(sys.argv[1]) - f(sys.argv[2])) <= 0.5 else 1)' "$(field "$rec" start)" "$(field "$open" start 2>&1)"
	LAST_SPORT=$sport
}
LAST_SPORT=

check_close "download" down 1048576
check_close "upload" up 1300000

# ---- a late DESTROY neither double-counts nor loses ------------------------------
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=3 2>/dev/null
# wait_gone SPORT - until conntrack has no entry for it (DESTROY).
wait_gone() {
	for ((i = 0; i < 100; i++)); do
		[ -z "$(kernel_counters "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
check_close "short TIME_WAIT" down 200000
sport=$LAST_SPORT
ok "the entry was destroyed" wait_gone "$sport"
sleep 0.5
eq "still exactly one conn record after DESTROY" "1" \
	"$(audit_grep '"event":"conn"' "\"sport\":$sport" | grep -c .)"
eq "no conn_late record (no packet after the close)" "" "$(audit_grep '"event":"conn_late"' "\"sport\":$sport")"

# TLS close_notify after the server's close: a retransmitted segment and the
# server's RST come after TIME_WAIT.  The record is read ACCT_SETTLE_MS
# after the close, so it normally has them; whatever comes later still is
# in a conn_late record at DESTROY: together exactly the kernel's final
# counters (tests/unit/test_flowtab.c covers conn_late on its own).
check_close "late packets" up 300000 1
sport=$LAST_SPORT
kb=$KERNEL
ok "late packets: the entry was destroyed" wait_gone "$sport"
sleep 0.5
eq "late packets: one conn record" "1" "$(audit_grep '"event":"conn"' "\"sport\":$sport" | grep -c .)"
sum=$(audit_grep "\"sport\":$sport" | python3 -c '
import json, sys
o = i = n = 0
for l in sys.stdin:
    r = json.loads(l)
    if r["event"] in ("conn", "conn_late"):
        o += r["bytes_out"]; i += r["bytes_in"]; n += r["event"] == "conn_late"
print(o, i)')
eq "late packets: conn + conn_late = the kernel's final counters" "$kb" "$sum"

metrics=$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics)
want=$(audit_grep "\"sandbox\":\"$SB1\"" '"event":"conn' | python3 -c '
import json, sys
o = i = 0
for l in sys.stdin:
    r = json.loads(l)
    if r["event"] in ("conn", "conn_late"):
        o += r["bytes_out"]; i += r["bytes_in"]
print(o, i)')
got=$(python3 -c '
import sys
v = {}
for l in sys.stdin:
    if l.startswith("netd_sandbox_bytes_") and "sandbox=\"%s\"" % sys.argv[1] in l:
        v[l.split("{")[0]] = int(float(l.split()[-1]))
print(v.get("netd_sandbox_bytes_out_total"), v.get("netd_sandbox_bytes_in_total"))' "$SB1" <<<"$metrics")
eq "metrics bytes out/in = the sum of the conn records" "$want" "$got"
ok "netd alive" netd_alive
netd_down
t_summary
