#!/usr/bin/env bash
# Interim conn_update records: with audit.conn_update_interval: 1, a
# connection that stays open ~4 s shows up while it is open, with the same
# 5-tuple as its final conn record and byte counts that never exceed it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndu$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 2>/dev/null

netd_up "audit: { conn_update_interval: 1 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)

field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# A connection held open: connect, send a request, wait 4 s (the interim
# records are written meanwhile), then read the answer.  Prints the local port.
sport=$(sb_exec sb1 python3 -c '
import socket, sys, time
s = socket.create_connection(("198.51.100.7", 8080), timeout=10)
print(s.getsockname()[1], flush=True)
s.sendall(b"GET /bytes/2000 HTTP/1.0\r\nHost: x\r\n\r\n")
time.sleep(4)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
s.close()
sys.stderr.write("got %d bytes\n" % len(data))
')
ok "long connection made (sport $sport)" test -n "$sport"

tuple=("\"sandbox\":\"$SB1\"" '"dst":"198.51.100.7"' '"dport":8080' "\"sport\":$sport")
for ((i = 0; i < 100; i++)); do
	[ -n "$(audit_grep '"event":"conn"' "${tuple[@]}")" ] && break
	sleep 0.1
done
updates=$(audit_grep '"event":"conn_update"' "${tuple[@]}")
final=$(audit_grep '"event":"conn"' "${tuple[@]}")
n_up=$(grep -c . <<<"$updates")
ok "interim conn_update records while open ($n_up)" test "$n_up" -ge 2
eq "exactly one final conn record" "1" "$(grep -c . <<<"$final")"
if [ -n "$final" ] && [ "$n_up" -ge 1 ]; then
	last=$(tail -1 <<<"$updates")
	eq "conn_update: proto" "tcp" "$(field "$last" proto)"
	eq "conn_update: domain is the CIDR rule" "198.51.100.7/32" "$(field "$last" domain)"
	eq "conn_update: same start as the final record" "$(field "$final" start)" "$(field "$last" start)"
	ok "conn_update: bytes_out <= final bytes_out" \
		test "$(field "$last" bytes_out)" -le "$(field "$final" bytes_out)"
	ok "conn_update: bytes_out counts the request already sent" \
		test "$(field "$last" bytes_out)" -gt 40
	ok "final conn: bytes_in includes the 2000-byte answer" \
		test "$(field "$final" bytes_in)" -ge 2000
	# Every conn_update line is written before the conn line.
	lu=$(grep -nF "\"sport\":$sport" "$NETD_AUDIT" | grep conn_update | tail -1 | cut -d: -f1)
	lf=$(grep -nF "\"sport\":$sport" "$NETD_AUDIT" | grep '"event":"conn"' | cut -d: -f1)
	ok "conn_update lines come before the final conn line" test "$lu" -lt "$lf"
else
	t_fail "conn_update / conn records present" "$(cat "$NETD_AUDIT")"
fi
ok "netd alive" netd_alive
netd_down
t_summary
