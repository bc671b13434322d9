#!/usr/bin/env bash
# Signals as operators know them, and systemd's notify protocol:
#   SIGUSR1 reopens the audit log and does nothing else (logrotate's
#           postrotate must never apply a half-edited policy);
#   SIGHUP  reloads policy_dir and does not touch the audit log;
#   READY=1 once serving, RELOADING=1 then READY=1 around a SIGHUP reload,
#   STOPPING=1 on SIGTERM, sent to $NOTIFY_SOCKET (sd_notify(3)).
# Also `netd audit` with no --file finds the running daemon's log.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nds$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cp policies/*.yaml "$NETD_POLICIES/"

# A stand-in for systemd's notify socket: one line per datagram.
NOTIFY_LOG=$WORLD_DIR/notify.log
export NOTIFY_SOCKET=$WORLD_DIR/notify.sock
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        f.flush()' "$NOTIFY_SOCKET" "$NOTIFY_LOG" &
world_pid_track $!
for ((i = 0; i < 50; i++)); do [ -S "$NOTIFY_SOCKET" ] && break; sleep 0.1; done

netd_up || { echo "0 passed, 1 failed"; exit 1; }
unset NOTIFY_SOCKET	# only netd gets it
has "READY=1 once serving" "READY=1" "$(cat "$NOTIFY_LOG")"
sb_create sb1 python-dev >/dev/null || t_fail "sandbox sb1"

# wait_log TEXT - until netd's log has TEXT (at most 10 s).
wait_log() {
	for ((i = 0; i < 100; i++)); do grep -qF -- "$1" "$NETD_LOG" && return 0; sleep 0.1; done
	return 1
}
policies() { netd status | jq .policies; }
dns_records() { sb_dig sb1 +short pypi.org A >/dev/null; sb_dig sb1 +short pypi.org AAAA >/dev/null; }

# ---- SIGUSR1: reopen only --------------------------------------------------------
# An edit lands in policy_dir (here a whole new file) while logrotate runs.
cat >"$NETD_POLICIES/zz-new.yaml" <<-'YAML'
name: zz-new
egress:
  - domains: [pypi.org]
    ports: [443]
YAML
n0=$(policies)
mv "$NETD_AUDIT" "$WORLD_DIR/moved1.jsonl"
kill -USR1 "$NETD_PID"
ok "SIGUSR1: logged" wait_log "SIGUSR1: audit log $NETD_AUDIT reopened"
ok "SIGUSR1: a new audit log is created" test -e "$NETD_AUDIT"
dns_records
has "SIGUSR1: new records go to the new file" '"qname":"pypi.org"' "$(cat "$NETD_AUDIT" 2>&1)"
eq "SIGUSR1: the policies were not reloaded" "$n0" "$(policies)"
hasnt "SIGUSR1: no reload logged" "reloading policies" "$(cat "$NETD_LOG")"
out=$(netd policy show zz-new 2>&1); rc=$?
eq "SIGUSR1: the new file is not loaded (policy show: 3, not found)" 3 "$rc"
hasnt "SIGUSR1: no RELOADING=1" "RELOADING=1" "$(cat "$NOTIFY_LOG")"

# ---- SIGHUP: reload only -----------------------------------------------------------
mv "$NETD_AUDIT" "$WORLD_DIR/moved2.jsonl"
kill -HUP "$NETD_PID"
ok "SIGHUP: the reload is logged" wait_log "policy reload: $((n0 + 1)) policies"
eq "SIGHUP: the new policy is loaded" "$((n0 + 1))" "$(policies)"
ok "SIGHUP: policy show finds it" netd policy show zz-new
dns_records
fail "SIGHUP: no new audit log (the log is not reopened)" test -e "$NETD_AUDIT"
has "SIGHUP: records still go to the open (moved) file" '"qname":"pypi.org"' \
	"$(tail -n 4 "$WORLD_DIR/moved2.jsonl")"
hasnt "SIGHUP: no reopen logged after the one SIGUSR1" "reopened" \
	"$(grep -v "SIGUSR1" "$NETD_LOG")"
ok "systemd heard RELOADING=1, then READY=1" \
	grep -qzE 'RELOADING=1 MONOTONIC_USEC=[0-9]+ *'$'\n''READY=1' "$NOTIFY_LOG"
# A rejected reload: the old policies stay, and netd says READY again.
echo "name: [broken" >"$NETD_POLICIES/zz-broken.yaml"
kill -HUP "$NETD_PID"
ok "SIGHUP with a broken file: rejected and logged" wait_log "policy reload rejected"
eq "... the policies stay" "$((n0 + 1))" "$(policies)"
eq "... and netd is READY again (startup + 2 reloads)" 3 "$(grep -c '^READY=1' "$NOTIFY_LOG")"
rm -f "$NETD_POLICIES/zz-broken.yaml"
mv "$WORLD_DIR/moved2.jsonl" "$NETD_AUDIT"
kill -USR1 "$NETD_PID"
wait_log "reopened" >/dev/null

# ---- netd audit finds the daemon's log -----------------------------------------------
out=$(env -u NETD_AUDIT_LOG "$NETD_BIN" audit --event dns --sandbox "$(sb_name sb1)" 2>&1); rc=$?
eq "netd audit (no --file): exit 0" 0 "$rc"
has "netd audit (no --file): reads the daemon's $NETD_AUDIT" "pypi.org" "$out"
eq "netd status names the audit log" "$NETD_AUDIT" "$(netd status | jq -r .audit.file)"

# ---- SIGTERM: STOPPING=1 ------------------------------------------------------------
netd sandbox delete "$(sb_name sb1)" >/dev/null
netd_down
has "STOPPING=1 on SIGTERM" "STOPPING=1" "$(cat "$NOTIFY_LOG")"
# With no daemon: the config's audit_log (an /etc/netd of our own, grafted in
# a private mount namespace), else the default, which is reported missing.
mkdir -p "$WORLD_DIR/etc-netd" "$WORLD_DIR/stage"
echo "audit_log: $NETD_AUDIT" >"$WORLD_DIR/etc-netd/netd.yaml"
out=$(env -u NETD_AUDIT_LOG unshare -m --propagation private -- tests/integ/lib_mntns.sh \
	"$WORLD_DIR/stage" "$WORLD_DIR/etc-netd=/etc/netd" -- "$NETD_BIN" audit --event dns 2>&1); rc=$?
eq "netd audit, daemon down: the config's audit_log (exit 0)" 0 "$rc"
has "netd audit, daemon down: records from the config's file" "pypi.org" "$out"
if [ ! -e /etc/netd/netd.yaml ] && [ ! -e /var/log/netd/audit.jsonl ]; then
	out=$(env -u NETD_AUDIT_LOG "$NETD_BIN" audit 2>&1); rc=$?
	eq "netd audit, nothing to find: exit 3 (not found)" 3 "$rc"
	has "... and says where it looked" "no daemon answered and no config names another" "$out"
fi
t_summary
