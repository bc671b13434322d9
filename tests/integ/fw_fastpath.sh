#!/usr/bin/env bash
# The fast path (dataplane.fast_path, on by default): an established packet
# of a sandbox without an egress quota is accepted by the first rule of
# forward and never walks its policy's chain (shown by nftables' own
# trace), while a sandbox with a quota still has every packet counted by
# its policy's chain.  A flow in the fast path is still cut when its sandbox is
# deleted and when a reload removes its rule; its conn record counts the
# bytes sent.  A sandbox is kept off the fast path by the packet mark its
# raw_ifs element's chain (metered_raw) sets: a reload that gives it a
# quota moves its flows already under way off the fast path, one that
# takes the quota moves them on; a restart over the kept table keeps the
# right element and removes an older netd's metered_ifs set.  With
# dataplane.fast_path: false the rule is not there.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndf$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
mkdir -p "$POL"
export NETD_POLICIES=$POL
pol_fp() {	# pol_fp [NAME...] - CIDR 198.51.100.7:8080, and the names given on 443
	{
		echo "name: fp"
		echo "egress:"
		echo "  - cidrs: [198.51.100.7/32]"
		echo "    ports: [8080]"
		[ $# = 0 ] || { echo "  - domains: [$(IFS=,; echo "$*")]"; echo "    ports: [443]"; }
	} >"$POL/fp.yaml"
}
pol_fp www.dt.example
cat >"$POL/fn.yaml" <<'YAML'
name: fn
egress:
  - cidrs: [203.0.113.9/32]
    ports: [1]
YAML
cat >"$POL/fq.yaml" <<'YAML'
name: fq
egress:
  - cidrs: [198.51.100.7/32]
    ports: [8080]
limits: { egress_bytes: 100M, on_exceed: cut }
YAML
# Short closing timeouts in the world's host netns only: a closed connection's
# entry is destroyed (and its conn record written) soon after it ends.
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 2>/dev/null
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1 (no quota)" sb_create sb1 fp
ok "sandbox sb2 (a quota)" sb_create sb2 fq
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
A1=$(netd sandbox show "$SB1" | sed -n 's/.*"ipv4": "\([^"]*\)".*/\1/p')
A2=$(netd sandbox show "$SB2" | sed -n 's/.*"ipv4": "\([^"]*\)".*/\1/p')
FAST='inet netd forward rule ct state established meta mark & 0x00a00000 == 0x00000000 accept (verdict accept)'
N=4000000
# raw_chain SB - the chain sandbox SB's raw_ifs element goes to
raw_chain() {
	world_exec host nft list map inet netd raw_ifs |
		sed -n "s/.*\"$(sb_field "$1" host_ifname)\" : goto \([a-z_]*\).*/\1/p"
}

has "forward starts with the fast-path rule (after the SNI reply jump; the pool drops are in prerouting_raw)" \
	"meta mark & 0x00a00000 == 0x00000000 accept" \
	"$(world_exec host nft list chain inet netd forward | sed -n 4,7p)"
eq "the quota sandbox is metered: raw_ifs sends it to metered_raw" metered_raw "$(raw_chain "$SB2")"
eq "the other is not: sandbox_raw" sandbox_raw "$(raw_chain "$SB1")"
has "metered_raw sets the mark, then the same checks" \
	"meta mark set meta mark | 0x00200000 goto sandbox_raw" \
	"$(world_exec host nft list chain inet netd metered_raw)"

# download SHORT URL OUT - a server-paced background download; sets DL_PID.
download() {
	T_TIMEOUT=60 sb_exec "$1" curl -sS --fail --cacert "$WORLD_CA" \
		--speed-limit 1 --speed-time 4 -o "$3" "$2?rate=409600" >"$3.log" 2>&1 &
	DL_PID=$!
	world_pid_track "$DL_PID"
	for ((i = 0; i < 100; i++)); do
		[ -s "$3" ] && break
		sleep 0.1
	done
}
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# conn_field SB DPORT FIELD - FIELD of the first conn record of sandbox SB
# to DPORT (waits up to 60 s for it); empty if none came.
conn_field() {
	local rec i
	for ((i = 0; i < 600; i++)); do
		rec=$(audit_grep '"event":"conn"' "\"sandbox\":\"$1\"" "\"dport\":$2" | head -1)
		[ -n "$rec" ] && break
		sleep 0.1
	done
	[ -n "$rec" ] && python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$rec" "$3"
}

# trace ADDR - one second of nftables' trace of the packets from ADDR (a
# throwaway table in the world's host netns marks them for tracing).
trace() {
	world_exec host nft -f - <<-NFT
	table ip ndtrace {
		chain pre { type filter hook prerouting priority -350; ip saddr $1 meta nftrace set 1; }
	}
	NFT
	world_exec host timeout 1.5 nft monitor trace 2>/dev/null
	world_exec host nft delete table ip ndtrace
}

# ---- no quota: established packets take the fast path ----------------------------
download sb1 "http://198.51.100.7:8080/bytes/$N" "$WORLD_DIR/a.bin"
ok "download under way" test -s "$WORLD_DIR/a.bin"
tr=$(trace "$A1")
has "sb1's established packets are accepted by the fast-path rule" "$FAST" "$tr"
hasnt "... and do not walk its policy's chain" "inet netd pe-fp " "$tr"
wait "$DL_PID"
eq "the download completes" "$N" "$(size "$WORLD_DIR/a.bin")"
bin=$(conn_field "$SB1" 8080 bytes_in)
ok "conn record: bytes_in ${bin:-none} counts the $N bytes (plus TCP/IP headers, < 5%)" \
	test "${bin:-0}" -ge "$N" -a "${bin:-0}" -le $((N * 105 / 100))

# off_fast_path MSG - sb2's established packets walk its policy's chain (the
# quota rule, first in the chain, does not match under the quota: the trace
# shows the rule after it accepting), not the fast-path rule.
off_fast_path() {
	local tr
	tr=$(trace "$A2")
	has "$1" "inet netd pe-fq rule ct state established accept (verdict accept)" "$tr"
	hasnt "... not the fast-path rule" "$FAST" "$tr"
}

# ---- a quota: every packet it sends still meets its quota rule --------------------
download sb2 "http://198.51.100.7:8080/bytes/$N" "$WORLD_DIR/q.bin"
off_fast_path "sb2's established packets go on to its policy's chain"
wait "$DL_PID"
eq "sb2's download completes" "$N" "$(size "$WORLD_DIR/q.bin")"
# Its one connection: what the quota counted is what conntrack counted
# (read once the record is written: the connection is over).
bout=$(conn_field "$SB2" 8080 bytes_out)
used=$(quota_used sb2)
eq "sb2's quota counted every byte sb2 sent (the conn record's bytes_out)" "$bout" "$used"

# ---- a reload that takes the quota: sb2's flow under way moves to the fast path ----
download sb2 "http://198.51.100.7:8080/bytes/$N" "$WORLD_DIR/q2.bin"
off_fast_path "under the quota, sb2's flow is off the fast path"
sed -i '/^limits:/d' "$POL/fq.yaml"
out=$(reload_json 2>&1)
has "reload: sb2's quota went" "$SB2" "$out"
eq "raw_ifs sends sb2 to sandbox_raw" sandbox_raw "$(raw_chain "$SB2")"
tr=$(trace "$A2")
has "the same flow's packets now take the fast path" "$FAST" "$tr"
# ... and a reload that gives it back moves the same flow off it again
echo "limits: { egress_bytes: 100M, on_exceed: cut }" >>"$POL/fq.yaml"
out=$(reload_json 2>&1)
eq "raw_ifs sends sb2 to metered_raw again" metered_raw "$(raw_chain "$SB2")"
off_fast_path "the same flow's packets meet its policy's chain again"
wait "$DL_PID"
eq "sb2's download completes across both reloads" "$N" "$(size "$WORLD_DIR/q2.bin")"

# ---- an ICMP error naming another sandbox's connection does not leave -----------
# sb3 may reach nothing of use; an ICMP error from its own address whose
# inner header is sb1's connection is "related" to that connection for
# conntrack (and NATed by it): a way out around sb3's policy and its quota.
# A sandbox's related packets are never accepted (fast path: established
# only; its policy's chain likewise).
ok "sandbox sb3 (reaches nothing of use)" sb_create sb3 fn
download sb1 "http://198.51.100.7:8080/bytes/$N" "$WORLD_DIR/i.bin"
SP=$(world_exec host conntrack -L -p tcp -s "$A1" --dport 8080 2>/dev/null |
	sed -n 's/.* sport=\([0-9]*\) dport=8080 .*/\1/p' | head -1)
ok "sb1's connection is tracked (sport ${SP:-none})" test -n "$SP"
world_exec inet python3 tests/integ/icmp_error.py sniff 10 RIDE-sb1 >"$WORLD_DIR/ride.out" &
SNIFF=$!
world_pid_track "$SNIFF"
sleep 0.5
ok "sb3 sends them" sb_exec sb3 python3 tests/integ/icmp_error.py send 198.51.100.7 "$A1" "${SP:-1}" 8080 RIDE-sb1
wait "$SNIFF"
eq "sb3's ICMP errors riding sb1's connection never reach the server" "" "$(cat "$WORLD_DIR/ride.out")"
wait "$DL_PID"
eq "sb1's download completes" "$N" "$(size "$WORLD_DIR/i.bin")"

# ---- a reload that removes the name cuts the flow in the fast path ---------------
eq "sb1 resolves www.dt.example" "198.51.100.40" "$(sb_dig sb1 +short www.dt.example A)"
download sb1 "https://www.dt.example/bytes/$N" "$WORLD_DIR/r.bin"
tr=$(trace "$A1")
has "the HTTPS flow is in the fast path" "$FAST" "$tr"
pol_fp
out=$(reload_json 2>&1)
has "reload: a connection cut" '"connections_cut":1' "$out"
wait "$DL_PID"
rc=$?
ok "the flow was cut (curl rc $rc, $(size "$WORLD_DIR/r.bin") of $N bytes)" \
	test "$rc" != 0 -a "$(size "$WORLD_DIR/r.bin")" -lt "$N"
fail "a new connection to the removed name's address is dropped" \
	sb_curl sb1 --connect-timeout 2 --resolve www.dt.example:443:198.51.100.40 https://www.dt.example/

# ---- deleting the sandbox cuts the flow in the fast path -------------------------
download sb1 "http://198.51.100.7:8080/bytes/$N" "$WORLD_DIR/d.bin"
tr=$(trace "$A1")
has "the flow is in the fast path" "$FAST" "$tr"
ok "conntrack has the flow" test -n "$(world_exec host conntrack -L -s "$A1" 2>/dev/null)"
ok "sandbox delete" netd sandbox delete "$SB1"
wait "$DL_PID"
rc=$?
ok "the flow was cut (curl rc $rc, $(size "$WORLD_DIR/d.bin") of $N bytes)" \
	test "$rc" != 0 -a "$(size "$WORLD_DIR/d.bin")" -lt "$N"
eq "no conntrack entry from its address is left" "" "$(world_exec host conntrack -L -s "$A1" 2>/dev/null)"

# ---- a restart over the kept table; dataplane.fast_path: false -------------------
netd_down
# What an older netd had: its metered_ifs set, which this one retires.
world_exec host nft add set inet netd metered_ifs '{ type ifname; }'
netd_up $'audit: { conn_update_interval: 0 }\ndataplane: { fast_path: false }' ||
	{ echo "0 passed, 1 failed"; exit 1; }
hasnt "fast_path: false: no fast-path rule" "meta mark & 0x00a00000 == 0x00000000 accept" \
	"$(world_exec host nft list chain inet netd forward)"
eq "after the restart raw_ifs still sends sb2 to metered_raw" metered_raw "$(raw_chain "$SB2")"
fail "an older netd's metered_ifs set is gone" world_exec host nft list set inet netd metered_ifs
ok "sb2 still downloads" test "$(sb_curl sb2 -o /dev/null -w '%{size_download}' \
	"http://198.51.100.7:8080/bytes/100000")" = 100000
netd_down
t_summary
