#!/usr/bin/env bash
# Lifecycle: policy reload (CLI, API, SIGHUP).  A reload with one broken
# file changes nothing (400 with FILE:LINE:COL); a reload that removes a
# name removes its pins, blocks new connections and cuts a live one (or
# keeps it with reload.cut_removed: false) while a connection the new
# policy still allows keeps flowing byte-exact; a removed policy file
# leaves its sandboxes denied; a denied address is never reachable while
# reloads happen.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndl$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
mkdir -p "$POL"
export NETD_POLICIES=$POL
pol_both() {
	cat >"$POL/rl.yaml" <<-'YAML'
	name: rl
	egress:
	  - domains: [pypi.org]
	    ports: [443]
	  - domains: ["*.openai.com"]
	    ports: [443]
	YAML
}
pol_openai_only() {
	cat >"$POL/rl.yaml" <<-'YAML'
	name: rl
	egress:
	  - domains: ["*.openai.com"]
	    ports: [443]
	YAML
}
pol_both
cat >"$POL/other.yaml" <<-'YAML'
name: other
egress:
  - domains: [pypi.org]
    ports: [443]
YAML
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
N=4000000

ok "sandbox sb1 (policy rl)" sb_create sb1 rl
ok "sandbox sb2 (policy other)" sb_create sb2 other
eq "sb1 resolves pypi.org" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "sb1 resolves api.openai.com" "198.51.100.30" "$(sb_dig sb1 +short api.openai.com A)"
eq "sb2 resolves pypi.org" "198.51.100.10" "$(sb_dig sb2 +short pypi.org A)"

# Probe a denied address from sb1 during everything below.
probe_start sb1

# download SHORT URL OUT - a rate-limited background download; sets DL_PID.
download() {
	# Paced by the server (?rate=): a client-side limit lets the kernel
	# buffer the whole body at once, and then there is nothing left to cut.
	T_TIMEOUT=60 sb_exec "$1" curl -sS --fail --cacert "$WORLD_CA" \
		--speed-limit 1 --speed-time 6 -o "$3" "$2?rate=409600" >"$3.log" 2>&1 &
	DL_PID=$!
	world_pid_track "$DL_PID"
	for ((i = 0; i < 100; i++)); do
		[ -s "$3" ] && break
		sleep 0.1
	done
}
exact() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$N" ] && [ "$(tr -d x <"$1" | wc -c)" = 0 ]; }
# table: the ruleset, less what traffic changes (counters, expiries, the
# per-sandbox elements the packet path adds to the dynamic sets).
table() {
	world_exec host nft list table inet netd |
		sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/; s/ expires [0-9hms.]+//' |
		grep -vE '^\s+(elements = \{ )?0x[0-9a-f]{8} (ct count over|limit rate)'
}

# ---- a broken file rejects the whole reload --------------------------------------
before=$(table)
pol_openai_only
printf 'name: broken\negress:\n  - domains: [pypi.org]\n    portz: [443]\n' >"$POL/broken.yaml"
out=$(netd policy reload 2>&1)
rc=$?
eq "reload with a broken file fails: exit 6 (rejected)" "6" "$rc"
has "the error names FILE:LINE:COL" "broken.yaml:4:5" "$out"
status=$(curl -s -o "$WORLD_DIR/api.out" -w '%{http_code}' --unix-socket "$NETD_SOCKET" -X POST http://netd/v1/policies/reload)
eq "API: 400" "400" "$status"
has "API: FILE:LINE:COL in the error" "broken.yaml:4:5" "$(cat "$WORLD_DIR/api.out")"
eq "nothing changed in the kernel" "$before" "$(table)"
has "old policy still in force: pin for pypi.org" "198.51.100.10" "$(sb_pins "$SB1")"
eq "old policy still in force: DNS" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
hasnt "the broken policy is not loaded" "broken" "$(netd policy list)"
rm -f "$POL/broken.yaml"
pol_both

# ---- removing a name cuts a live connection (default) ------------------------------
download sb1 "https://pypi.org/bytes/$N" "$WORLD_DIR/cut.bin"
PYPI_DL=$DL_PID
download sb1 "https://api.openai.com/bytes/$N" "$WORLD_DIR/keep.bin"
OPENAI_DL=$DL_PID
ok "both downloads under way" test -s "$WORLD_DIR/cut.bin" -a -s "$WORLD_DIR/keep.bin"
pol_openai_only
said=$(netd policy reload 2>&1)
eq "reload removing pypi.org succeeds" "0" "$?"
has "said for people: a line per sandbox" "$SB1 (policy rl): added -; removed pypi.org tcp/443; pins kept" "$said"
has "... with the connections cut" "connections cut 1" "$said"
hasnt "only rl's sandbox changed" "$SB2" "$said"
# the same report, as the audit log's policy_reload record (the fields of --json)
out=$(audit_wait 10 '"event":"policy_reload"' "\"sandbox\":\"$SB1\"")
has "report: pypi.org removed" '"removed":["pypi.org tcp/443"]' "$out"
has "report: the pin removed" 'pypi.org 198.51.100.10 tcp/443' "$out"
has "report: a connection cut" '"connections_cut":1' "$out"
hasnt "pin for pypi.org gone" "198.51.100.10" "$(sb_pins "$SB1")"
has "pin for api.openai.com kept" "198.51.100.30" "$(sb_pins "$SB1")"
has "audit: policy_reload event" '"event":"policy_reload"' "$(audit_grep policy_reload "$SB1")"
wait "$PYPI_DL"
rc=$?
ok "the live download from pypi.org was cut" test "$rc" != 0 -o "$(stat -c %s "$WORLD_DIR/cut.bin")" != "$N"
wait "$OPENAI_DL"
eq "the download the new policy allows finished" "0" "$?"
ok "... byte-exact" exact "$WORLD_DIR/keep.bin"
st=$(sb_dig sb1 pypi.org | grep -o 'status: [A-Z]*')
eq "pypi.org now denied" "status: NXDOMAIN" "$st"
fail "a new connection to pypi.org's address is dropped" sb_curl sb1 --resolve pypi.org:443:198.51.100.10 https://pypi.org/
eq "sb2 (policy other, unchanged) still connects" "pypi.org ok" "$(sb_curl sb2 https://pypi.org/simple/)"
has "sb2's pin untouched" "198.51.100.10" "$(sb_pins "$SB2")"

# ---- SIGHUP, and adding the name back ----------------------------------------------
pol_both
kill -HUP "$NETD_PID"
for ((i = 0; i < 50; i++)); do
	grep -q "reload: sandbox $SB1 (policy rl): added \[\"pypi.org tcp/443\"\]" "$NETD_LOG" && break
	sleep 0.1
done
has "SIGHUP reloaded and logged what was added" "reload: sandbox $SB1 (policy rl): added [\"pypi.org tcp/443\"]" "$(cat "$NETD_LOG")"
eq "pypi.org allowed again" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"

# ---- a removed policy file: its sandboxes are denied -----------------------------
rm -f "$POL/other.yaml"
out=$(netd policy reload 2>&1)
has "said for people: sb2 denied all" "$SB2 (policy other): the policy is gone: denied all egress" "$out"
out=$(audit_wait 10 '"event":"policy_reload"' "\"sandbox\":\"$SB2\"" '"deny_all":true')
has "report: sb2 denied all" "\"sandbox\":\"$SB2\",\"policy\":\"other\",\"deny_all\":true" "$out"
has "logged" "policy other is gone" "$(cat "$NETD_LOG")"
st=$(sb_dig sb2 pypi.org | grep -o 'status: [A-Z]*')
eq "sb2's names now denied" "status: NXDOMAIN" "$st"
fail "sb2 cannot connect to its old pin" sb_curl sb2 --resolve pypi.org:443:198.51.100.10 https://pypi.org/
ok "sb2 still exists" netd sandbox show "$SB2"

probe_stop "during the reloads"
netd_down

# ---- reload.cut_removed: false keeps the live connection ---------------------------
mv "$NETD_LOG" "$WORLD_DIR/netd-1.log"
: >"$NETD_AUDIT"
netd_up "reload: { cut_removed: false }" || { echo "0 passed, 1 failed"; exit 1; }
eq "sb1 resolves pypi.org" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
download sb1 "https://pypi.org/bytes/$N" "$WORLD_DIR/kept.bin"
PYPI_DL=$DL_PID
pol_openai_only
out=$(reload_json 2>&1)
has "report: pypi.org removed" '"removed":["pypi.org tcp/443"]' "$out"
has "report: no connection cut" '"connections_cut":0' "$out"
hasnt "pin for pypi.org gone" "198.51.100.10" "$(sb_pins "$SB1")"
fail "a new connection to pypi.org's address is dropped" sb_curl sb1 --resolve pypi.org:443:198.51.100.10 https://pypi.org/
wait "$PYPI_DL"
eq "the live download survived the reload" "0" "$?"
ok "... byte-exact" exact "$WORLD_DIR/kept.bin"
netd_down

world_down
t_summary
