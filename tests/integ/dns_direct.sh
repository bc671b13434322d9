#!/usr/bin/env bash
# The proxy's own port 53 on each sandbox's gateway (proxy_listen_add() +
# fw_sandbox_set_dns()): a sandbox's UDP queries to its resolver arrive on
# a socket bound to its gateway address and interface, and neither they nor
# the answers get a conntrack entry (no redirect, no NAT); DNS to any other
# address, and over TCP, still takes the redirect.  The socket answers
# nothing that did not come in on the sandbox's own interface; it and its
# dns_local elements go with the sandbox, and come back after a crash.  A
# port 53 held by another program, or too few descriptors, keeps a sandbox
# on the redirect.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndj$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox d1 (python-dev)" sb_create d1 python-dev
ok "sandbox d2 (python-dev)" sb_create d2 python-dev
SB1=$(sb_name d1)
info=$(netd sandbox show "$SB1")
GW4=$(sb_field "$SB1" gateway4)
GW6=$(sb_field "$SB1" gateway6)
IF1=$(sb_field "$SB1" host_ifname)
ok "d1 has an IPv4 and an IPv6 gateway ($GW4, $GW6) on $IF1" test -n "$GW4" -a -n "$GW6" -a -n "$IF1"

set4() { world_exec host nft list set inet netd dns_local4 2>&1; }
set6() { world_exec host nft list set inet netd dns_local6 2>&1; }
# ct_dns DST - conntrack entries of UDP to DST port 53 in netd's netns
ct_dns() { world_exec host cat /proc/net/nf_conntrack 2>/dev/null | grep -F "udp" | grep -F "dst=$1 " | grep -c -F "dport=53 " || true; }
udp53() { world_exec host ss -Huln "sport = :53" 2>/dev/null; }

has "dns_local4 holds d1's interface . gateway" "\"$IF1\" . $GW4" "$(set4)"
has "dns_local6 holds d1's interface . gateway" "\"$IF1\" . $GW6" "$(set6)"
has "a UDP socket on d1's gateway :53, bound to its interface" "%$IF1:53" "$(udp53)"

# ---- the query to the gateway: answered, untracked ---------------------------------------
eq "d1 resolves through its gateway (UDP)" "198.51.100.10" "$(sb_dig d1 +short "@$GW4" pypi.org A)"
eq "over IPv6 too" "198.51.100.10" "$(sb_dig d1 +short "@$GW6" pypi.org A)"
eq "no conntrack entry for it" "0" "$(ct_dns "$GW4")"
eq "nor for the IPv6 one" "0" "$(world_exec host cat /proc/net/nf_conntrack 2>/dev/null | grep -F "dst=$GW6 " | grep -c -F "dport=53 " || true)"
has "the answer pinned as always" "198.51.100.10" "$(sb_pins "$SB1")"
has "and was audited" '"qname":"pypi.org"' "$(audit_grep "\"sandbox\":\"$SB1\"" '"transport":"udp"')"
# Denied names are denied the same way on this path.
st=$(sb_dig d1 "@$GW4" example.com A | grep -o 'status: [A-Z]*')
eq "a name outside the policy is denied on it (dns.deny_rcode)" "status: NXDOMAIN" "$st"
has "and audited as denied" '"verdict":"deny"' "$(audit_grep "\"sandbox\":\"$SB1\"" '"qname":"example.com"')"
hasnt "with no address pinned" "203.0.113.66" "$(sb_pins "$SB1")"

# A client that is gone when the answer comes: its "port unreachable" is
# about an untracked packet, so conntrack cannot call it related; it is
# dropped quietly, not recorded as a denied attempt on the host.
# (A cached answer can come back before bash has closed its socket, when the
# machine is busy: then nothing is unreachable.  So up to five tries.)
for ((try = 0; try < 5; try++)); do
	sb_exec d1 bash -c "printf '\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04pypi\x03org\x00\x00\x01\x00\x01' >/dev/udp/$GW4/53"
	for ((i = 0; i < 30; i++)); do	# the answer may wait for the upstream
		grep -qE "0x35 counter packets [1-9]" <<<"$(world_exec host nft list chain inet netd input)" && break 2
		sleep 0.1
	done
done
input=$(world_exec host nft list chain inet netd input)
ok "the answer to a closed port drew an ICMP error, dropped by its own rule ($try retries)" \
	grep -qE "0x35 counter packets [1-9]" <<<"$input"
sleep 4	# past the deny folding window: a record would have been written by now
hasnt "and no deny record for it" '"reason":"to-host"' "$(audit_grep "\"sandbox\":\"$SB1\"")"
# Only that: any other ICMP error a sandbox sends the host is a logged denial.
sb_exec d1 python3 -c '
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
# quoting a TCP packet of its own to a made-up address, 8 bytes of it
src = socket.inet_aton(sys.argv[2]); dst = socket.inet_aton("198.51.100.250")
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 64, 6, 0, src, dst)
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
inner = ip + struct.pack("!HHI", 40000, 443, 0)
msg = struct.pack("!BBHI", 3, 1, 0, 0) + inner
msg = msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]
socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).sendto(msg, (sys.argv[1], 0))
' "$GW4" "$(sed -n 's/.*"ipv4": "\([^"]*\)".*/\1/p' <<<"$info")"
has "a forged host-unreachable to the host is recorded as denied" '"icmp_type":3' \
	"$(audit_wait 10 "\"sandbox\":\"$SB1\"" '"reason":"to-host"')"

# ---- everything else still takes the redirect ----------------------------------------------
eq "DNS to another address is redirected to the proxy" "198.51.100.10" \
	"$(sb_dig d1 +short @198.51.100.99 pypi.org A)"
ok "and is tracked (the redirect needs conntrack)" test "$(ct_dns 198.51.100.99)" -ge 1
eq "DNS over TCP to the gateway still works" "198.51.100.10" "$(sb_dig d1 +short +tcp "@$GW4" pypi.org A)"

# ---- nothing but the sandbox's own interface reaches the socket -------------------------
# The "internet" gets a route to d1's gateway through netd's host: a query
# from there to GW4:53 arrives on the uplink, where no socket listens.
world_exec inet ip route add "$GW4/32" via 192.0.2.1 2>/dev/null
out=$(world_exec inet dig +time=2 +tries=1 "@$GW4" pypi.org A 2>&1)
hasnt "a query from the uplink to the gateway's :53 gets no answer" "status:" "$out"
# d2 asking d1's gateway: its own interface is not d1's, so no listener of d1's answers
# it and anti-spoofing keeps it from posing as d1 (it is redirected to the proxy as d2).
eq "d2 asking d1's gateway is answered as d2 (redirected)" "198.51.100.10" \
	"$(sb_dig d2 +short "@$GW4" pypi.org A)"
has "audited as d2" '"qname":"pypi.org"' "$(audit_grep "\"sandbox\":\"$(sb_name d2)\"")"

# ---- gone with the sandbox; back after a crash -----------------------------------------------
ok "d1 deleted" netd sandbox delete "$SB1"
hasnt "its dns_local4 element is gone" "\"$IF1\"" "$(set4)"
hasnt "its dns_local6 element is gone" "\"$IF1\"" "$(set6)"
hasnt "its socket is closed" "%$IF1:" "$(udp53)"
SB2=$(sb_name d2)
IF2=$(sb_field "$SB2" host_ifname)
GW2=$(sb_field "$SB2" gateway4)
kill -9 "$NETD_PID"
wait "$NETD_PID" 2>/dev/null
NETD_PID=""
mv "$NETD_LOG" "$WORLD_DIR/netd-1.log"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
has "after a crash and restart: d2's element is back" "\"$IF2\" . $GW2" "$(set4)"
has "and its socket" "%$IF2:53" "$(udp53)"
before=$(ct_dns "$GW2")
eq "d2 resolves through its gateway" "198.51.100.10" "$(sb_dig d2 +short "@$GW2" pypi.org A)"
eq "untracked" "$before" "$(ct_dns "$GW2")"

# ---- what keeps a sandbox on the redirect ------------------------------------------------
# Another program holding port 53 on the host's wildcard address without
# SO_REUSEADDR: after a restart d2's gateway socket cannot bind, and its DNS
# to the gateway takes the redirect like all other DNS (still answered).
netd_down || fail "netd_down: ASan/UBSan report or unclean exit"
mv "$NETD_LOG" "$WORLD_DIR/netd-2.log"
world_spawn host "$WORLD_DIR/holder.log" "$WORLD_PYTHON" -c '
import socket, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 53))
time.sleep(120)'
HOLDER=$WORLD_LAST_PID
for _ in $(seq 50); do udp53 | grep -q ':53 ' && break; sleep 0.1; done
has "a program holds the wildcard :53 (no SO_REUSEADDR)" ":53 " "$(udp53)"
netd_up || { t_summary; exit 1; }
hasnt "after the restart d2 has no dns_local4 element" "\"$IF2\"" "$(set4)"
has "and netd says why" "sandbox $SB2: DNS to its gateway stays on the redirect (port 53 on $IF2: Address already in use)" \
	"$(cat "$NETD_LOG")"
before=$(ct_dns "$GW2")
eq "d2 still resolves through its gateway (redirected)" "198.51.100.10" "$(sb_dig d2 +short "@$GW2" pypi.org A)"
ok "with a conntrack entry this time" test "$(ct_dns "$GW2")" -gt "$before"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null

# Descriptors: a netd whose hard RLIMIT_NOFILE it may not raise (no
# CAP_SYS_RESOURCE) leaves 4096 descriptors to everything else; at 4097
# there is no room for a sandbox's two gateway sockets.
netd_down || fail "netd_down: ASan/UBSan report or unclean exit"
mv "$NETD_LOG" "$WORLD_DIR/netd-3.log"
NETD_REAL=$NETD_BIN
printf '#!/bin/sh\nexec prlimit --nofile=4097:4097 setpriv --bounding-set=-sys_resource -- "%s" "$@"\n' \
	"$NETD_REAL" >"$WORLD_DIR/netd-nofile.sh"
chmod +x "$WORLD_DIR/netd-nofile.sh"
NETD_BIN=$WORLD_DIR/netd-nofile.sh
netd_up || { t_summary; exit 1; }
eq "netd runs with 4097 descriptors" "4097" \
	"$(awk '/^Max open files/ {print $4}' "/proc/$NETD_PID/limits")"
hasnt "d2 has no dns_local4 element" "\"$IF2\"" "$(set4)"
has "and netd says why" "sandbox $SB2: DNS to its gateway stays on the redirect (4097 descriptors allowed" \
	"$(cat "$NETD_LOG")"
eq "d2 still resolves through its gateway (redirected)" "198.51.100.10" "$(sb_dig d2 +short "@$GW2" pypi.org A)"

netd_down || fail "netd_down: ASan/UBSan report or unclean exit"
NETD_BIN=$NETD_REAL
world_down
t_summary
