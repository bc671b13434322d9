#!/usr/bin/env bash
# Lifecycle: failures outside netd.  An upstream resolver that stops
# answering yields SERVFAIL (dig's own bounded wait, no wall-clock
# assertion) and recovery when it returns; a dead first upstream is skipped
# for the next one; an audit log on a full filesystem keeps enforcement
# working, counts the lost records (GET /v1/status) and resumes;
# a flood of control connections leaves the daemon alive and answering;
# netd in a mount namespace of its own says so, and netd exec says why it
# cannot enter a sandbox then.
# Throughout, a denied address is probed and must never be reachable.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndf$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
AUDIT_MNT=$WORLD_DIR/auditfs
cleanup() {
	mountpoint -q "$AUDIT_MNT" 2>/dev/null && umount -l "$AUDIT_MNT"
	world_down
}
trap cleanup EXIT
mkdir -p "$AUDIT_MNT"
mount -t tmpfs -o size=512k,mode=0755 netd-test-audit "$AUDIT_MNT" || { echo "0 passed, 1 failed"; exit 1; }

# netd_up, but with the audit log on the small tmpfs and upstreams $1.
netd_up_with() {
	netd_up || return 1
	netd_down >/dev/null
	sed -i "s#^upstream: .*#upstream: $1#; s#^audit_log: .*#audit_log: $AUDIT_MNT/audit.jsonl#" "$NETD_CONF"
	NETD_AUDIT=$AUDIT_MNT/audit.jsonl
	mv "$NETD_LOG" "$NETD_LOG.$RANDOM"
	world_spawn host "$NETD_LOG" "$NETD_BIN" run --config "$NETD_CONF"
	NETD_PID=$WORLD_LAST_PID
	for ((i = 0; i < 300; i++)); do
		"$NETD_BIN" status >/dev/null 2>&1 && return 0
		kill -0 "$NETD_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$NETD_LOG" >&2
	return 1
}
status_field() { netd status --json 2>/dev/null | tr -d ' \n' | grep -o "\"$1\":{[^}]*}" ; }
audit_count() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status | python3 -c "import json,sys; print(json.load(sys.stdin)['audit']['$1'])"; }

# The first upstream is a documentation address nobody answers on.
netd_up_with "[198.51.100.99, 192.0.2.53]" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1" sb_create sb1 python-dev

probe_start sb1

# ---- several upstreams, in order -------------------------------------------------
eq "a dead first upstream: the second answers" "198.51.100.10" "$(sb_dig sb1 +time=15 +short pypi.org A)"

# ---- the upstream stops answering -----------------------------------------------------
world_exec inet nft -f - <<-'NFT'
table inet ndtest_block {
	chain input {
		type filter hook input priority -10; policy accept;
		ip daddr 192.0.2.53 udp dport 53 drop
		ip daddr 192.0.2.53 tcp dport 53 drop
	}
}
NFT
st=$(sb_dig sb1 +time=20 +tries=1 api.openai.com A | grep -o 'status: [A-Z]*')
eq "upstream silent: SERVFAIL (not a hang)" "status: SERVFAIL" "$st"
# A burst of queries while it is down: every one gets an answer or is
# refused by the in-flight limit; the daemon stays up.
BURST=()
for i in $(seq 1 40); do
	sb_dig sb1 +time=20 +tries=1 "n$i.openai.com" A >"$WORLD_DIR/burst.$i" 2>&1 &
	BURST+=($!)
	world_pid_track $!
done
wait "${BURST[@]}"
n_servfail=$(cat "$WORLD_DIR"/burst.* | grep -c 'status: SERVFAIL\|status: REFUSED')
eq "burst while down: every query answered SERVFAIL/REFUSED" "40" "$n_servfail"
ok "netd alive after the burst" netd_alive
world_exec inet nft delete table inet ndtest_block
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ "$(sb_dig sb1 +time=10 +short api.openai.com A)" = "198.51.100.30" ] && { ok=1; break; }
	sleep 1
done
eq "recovers by itself when the upstream returns" "1" "$ok"
eq "and connects" "api.openai.com ok" "$(sb_curl sb1 https://api.openai.com/)"

# ---- audit log: disk full -------------------------------------------
dd if=/dev/zero of="$AUDIT_MNT/filler" bs=4k count=1000 2>/dev/null	# fills the 512k tmpfs
d0=$(audit_count dropped)
eq "disk full: allowed name still resolves" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "disk full: allowed name still connects" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
st=$(sb_dig sb1 example.com | grep -o 'status: [A-Z]*')
eq "disk full: denied name still denied" "status: NXDOMAIN" "$st"
fail "disk full: denied address still dropped" sb_curl sb1 --resolve example.com:443:203.0.113.66 https://example.com/
d1=$(audit_count dropped)
ok "disk full: lost records counted in /v1/status ($d0 -> $d1)" test "$d1" -gt "$d0"
rm -f "$AUDIT_MNT/filler"
w0=$(audit_count written)
sb_dig sb1 +short pypi.org A >/dev/null
w1=$(audit_count written)
ok "space back: writing resumes ($w0 -> $w1)" test "$w1" -gt "$w0"
has "space back: the record is in the file" '"qname":"pypi.org"' "$(tail -n 3 "$AUDIT_MNT/audit.jsonl")"

# ---- audit log: a read-only path -------------------------------------------
# Swap a read-only filesystem in under the path, then SIGUSR1 (what logrotate
# does): the reopen fails, so every record is lost, and enforcement goes on.
umount -l "$AUDIT_MNT"
mount -t tmpfs -o size=64k,mode=0755,ro netd-test-audit-ro "$AUDIT_MNT"
kill -USR1 "$NETD_PID"
sleep 0.5
d0=$(audit_count dropped)
eq "read-only audit path: allowed name still resolves" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "read-only audit path: allowed name still connects" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
fail "read-only audit path: denied address still dropped" sb_curl sb1 --resolve example.com:443:203.0.113.66 https://example.com/
d1=$(audit_count dropped)
ok "read-only audit path: lost records counted ($d0 -> $d1)" test "$d1" -gt "$d0"
has "read-only audit path: netd's log says so" "audit log $AUDIT_MNT/audit.jsonl: cannot reopen" "$(cat "$NETD_LOG")"
umount -l "$AUDIT_MNT"
mount -t tmpfs -o size=512k,mode=0755 netd-test-audit "$AUDIT_MNT"
kill -USR1 "$NETD_PID"
sleep 0.5
sb_dig sb1 +short pypi.org A >/dev/null
has "writable again after SIGUSR1: records are written" '"qname":"pypi.org"' "$(cat "$AUDIT_MNT/audit.jsonl" 2>&1)"

# ---- a flood of control connections ----------------------------------------------------
python3 - "$NETD_SOCKET" 3000 >"$WORLD_DIR/flood.log" 2>&1 <<-'PY' &
	import socket, sys, time
	path, n = sys.argv[1], int(sys.argv[2])
	held = []
	for i in range(n):
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.settimeout(1)
	    try:
	        s.connect(path)
	        s.send(b"GET /v1/status HTTP/1.1\r\nHost: x\r\n")  # never finished
	        held.append(s)
	    except OSError:
	        s.close()
	print("held", len(held))
	time.sleep(4)
PY
FLOOD_PID=$!
world_pid_track "$FLOOD_PID"
sleep 2
eq "during the flood: DNS still served" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
fail "during the flood: denied address still dropped" sb_curl sb1 --resolve example.com:443:203.0.113.66 https://example.com/
wait "$FLOOD_PID"
ok "the flood ran" grep -q held "$WORLD_DIR/flood.log"
ok=0
for i in $(seq 1 30); do
	netd_alive 2>/dev/null && { ok=1; break; }
	sleep 0.5
done
eq "after the flood: the daemon survives and answers" "1" "$ok"
ok "after the flood: sandbox create works" sb_create sb2 python-dev
eq "after the flood: sb2 resolves" "198.51.100.10" "$(sb_dig sb2 +short pypi.org A)"

probe_stop ""

# ---- nf_tables refuses a pin: fail closed ------------------------------------------
# Take the shared IPv4 pin set away behind netd's back (the policy chains
# first, which reference it): the next pin batch fails in the kernel.
SB1=$(sb_name sb1)
for c in $(world_exec host nft -j list table inet netd | jq -r '.nftables[] | select(.chain) | .chain.name' | grep '^p[ea]-'); do
	world_exec host nft flush chain inet netd "$c"
done
ok "setup: the shared set pin4 deleted behind netd's back" world_exec host nft delete set inet netd pin4
# (A name sb1 never resolved: one it had would be known as pinned already.)
st=$(sb_dig sb1 files.pythonhosted.org A | grep -o 'status: [A-Z]*')
eq "a pin the kernel refuses: SERVFAIL, no answer" "status: SERVFAIL" "$st"
fail "a pin the kernel refuses: the name's address is not reachable" \
	sb_curl sb1 --resolve files.pythonhosted.org:443:198.51.100.20 https://files.pythonhosted.org/
has "a pin the kernel refuses: logged" "pinning" "$(cat "$NETD_LOG")"
ok "a pin the kernel refuses: the daemon keeps running" netd_alive
# (Every sandbox's pins are refused now; what netd answers itself is not.)
eq "a pin the kernel refuses: a denied name is still answered NXDOMAIN" "status: NXDOMAIN" \
	"$(sb_dig sb2 denied.example.org A | grep -o 'status: [A-Z]*')"
netd_down

# ---- netd in a mount namespace of its own ----------------------------------------
# (`ip netns exec NS netd run` gives it one: a new user found `netd exec`
# then failed with a bare "Invalid argument".)  Its /run/netns bind mounts
# are seen by nobody else: said at start, and netd exec says why.
printf '#!/bin/sh\nexec unshare --mount --propagation private "%s" "$@"\n' "$NETD_BIN" \
	>"$WORLD_DIR/netd-own-mnt"
chmod 755 "$WORLD_DIR/netd-own-mnt"
REAL_BIN=$NETD_BIN
NETD_BIN=$WORLD_DIR/netd-own-mnt
mv "$NETD_LOG" "$NETD_LOG.before-mntns"
hasnt "started with nsenter --net: no word of mount namespaces" "mount namespace" \
	"$(cat "$NETD_LOG.before-mntns")"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
NETD_BIN=$REAL_BIN
has "own mount namespace: said at start" "a mount namespace of its own" "$(cat "$NETD_LOG")"
ok "own mount namespace: sandbox create" sb_create m1 python-dev
out=$(netd exec "$(sb_name m1)" -- true 2>&1)
eq "own mount namespace: netd exec exits 126" "126" "$?"
has "own mount namespace: netd exec says why" "not visible in this mount namespace" "$out"
netd_down

cleanup
trap - EXIT
t_summary
