#!/usr/bin/env bash
# The audit log itself: size-based rotation (no record lost across a
# rotation: the lines of all files add up to the records netd says it
# wrote), the kept-files limit, reopen on SIGUSR1 after an external move
# (logrotate), and an unwritable log (/dev/full): enforcement continues,
# drops are counted, one log line when writing starts failing and one when
# it recovers.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndl$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }

# status_audit KEY - a field of the "audit" object of `netd status`.
status_audit() {
	netd status 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["audit"][sys.argv[1]])' "$1"
}

# lines_total - lines in audit.jsonl and every rotated file.
lines_total() { cat "$NETD_AUDIT" "$NETD_AUDIT".* 2>/dev/null | wc -l; }

# stable_count - "WRITTEN LINES" read while no record arrives in between.
stable_count() {
	local w1 w2 l i
	for ((i = 0; i < 100; i++)); do
		w1=$(status_audit written)
		l=$(lines_total)
		w2=$(status_audit written)
		[ "$w1" = "$w2" ] && { echo "$w1 $l"; return 0; }
		sleep 0.1
	done
	echo "unstable"
}

# dns_records N - N allowed DNS queries from sb1 in one dig run: N records.
dns_records() {
	local i args=()
	for ((i = 0; i < $1; i++)); do args+=(pypi.org A); done
	sb_dig sb1 +short "${args[@]}" >/dev/null
}

# ---- rotation, nothing lost -------------------------------------------------
netd_up "audit: { rotate_size: 4096, keep: 50, conn_update_interval: 0 }" ||
	{ echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
dns_records 80
nfiles=$(ls "$NETD_AUDIT".* 2>/dev/null | wc -l)
ok "rotation produced several files ($nfiles)" test "$nfiles" -ge 3
big=$(find "$WORLD_DIR" -maxdepth 1 -name 'audit.jsonl*' -size +4096c | wc -l)
eq "no file exceeds rotate_size" "0" "$big"
read -r written lines <<<"$(stable_count)"
eq "lines across all files == records written" "$written" "$lines"
ok "records written > 80" test "$written" -gt 80
eq "rotations reported by status" "$nfiles" "$(status_audit rotations)"
bad=$(cat "$NETD_AUDIT" "$NETD_AUDIT".* | python3 -c '
import json, sys
n = 0
for l in sys.stdin:
    try:
        json.loads(l)
    except ValueError:
        n += 1
print(n)')
eq "every line of every file is one JSON record" "0" "$bad"
# .1 is the newest rotated file, the highest number the oldest.
first_new=$(head -1 "$NETD_AUDIT.1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ts"])')
first_old=$(head -1 "$NETD_AUDIT.$nfiles" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ts"])')
ok "audit.jsonl.1 is newer than audit.jsonl.$nfiles" test "$first_new" \> "$first_old" -o "$first_new" = "$first_old"

# ---- SIGUSR1 reopens after an external move (logrotate) ---------------------
for f in "$NETD_AUDIT".*; do rm -f "$f"; done
mv "$NETD_AUDIT" "$WORLD_DIR/moved.jsonl"
before=$(status_audit written)
kill -USR1 "$NETD_PID"
for ((i = 0; i < 100; i++)); do
	[ -e "$NETD_AUDIT" ] && break
	sleep 0.1
done
ok "SIGUSR1: a new audit.jsonl is created" test -e "$NETD_AUDIT"
has "SIGUSR1: logged" "audit log $NETD_AUDIT reopened" "$(cat "$NETD_LOG")"
dns_records 3
n_new=$(grep -c '"event":"dns"' "$NETD_AUDIT")
eq "SIGUSR1: new records go to the new file" "3" "$n_new"
moved_n=$(wc -l <"$WORLD_DIR/moved.jsonl")
after=$(status_audit written)
ok "SIGUSR1: nothing written to the moved file after the USR1" \
	test "$((moved_n + $(wc -l <"$NETD_AUDIT")))" -le "$after"
ok "netd still answers after SIGUSR1" netd_alive
netd_down
rm -f "$NETD_AUDIT" "$NETD_AUDIT".* "$WORLD_DIR/moved.jsonl"

# ---- keep: the oldest files are deleted -------------------------------------
netd_up "audit: { rotate_size: 2048, keep: 2, conn_update_interval: 0 }" ||
	{ echo "0 passed, 1 failed"; exit 1; }
dns_records 60
ok "keep 2: audit.jsonl.2 exists" test -e "$NETD_AUDIT.2"
ok "keep 2: no audit.jsonl.3" test ! -e "$NETD_AUDIT.3"
ok "keep 2: more rotations than kept files" test "$(status_audit rotations)" -gt 2
netd_down
rm -f "$NETD_AUDIT" "$NETD_AUDIT".*

# ---- disk full: enforcement continues, drops counted, recovery --------------
ln -s /dev/full "$NETD_AUDIT"
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "disk full: sandbox create still works" sb_create sb2 python-dev
eq "disk full: DNS still answered" "198.51.100.10" "$(sb_dig sb2 +short pypi.org A)"
eq "disk full: curl to an allowed host still works" "cidr-host ok" \
	"$(sb_curl sb2 http://198.51.100.7:8080/)"
fail "disk full: a denied address is still dropped" sb_curl sb2 --connect-timeout 1 http://203.0.113.66:80/
dropped=$(status_audit dropped)
ok "disk full: status counts dropped records ($dropped)" test "$dropped" -gt 0
eq "disk full: one log line when writing starts failing" "1" \
	"$(grep -c 'write failed' "$NETD_LOG")"
has "disk full: metrics count drops" "netd_audit_dropped_total $dropped" \
	"$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)"
# Space returns: the path becomes a writable file; the next write after the
# retry interval reopens it.
rm -f "$NETD_AUDIT"
: >"$NETD_AUDIT"
for ((i = 0; i < 50; i++)); do
	sb_dig sb2 +short pypi.org A >/dev/null
	grep -q '"event":"dns"' "$NETD_AUDIT" && break
	sleep 0.2
done
has "recovered: records are written again" '"event":"dns"' "$(cat "$NETD_AUDIT")"
eq "recovered: one log line" "1" "$(grep -c 'writing again' "$NETD_LOG")"
eq "still exactly one failure line" "1" "$(grep -c 'write failed' "$NETD_LOG")"
netd_down

t_summary
