#!/usr/bin/env bash
# `netd verify`: every probe holds on a correct setup, and each probe fails
# when its mechanism is broken by hand (nft, in the world's host netns only),
# one mutation at a time, restored in between: the sandbox's jump removed,
# the DNS redirection removed, an accept rule inserted, a pin added by hand,
# the anti-spoofing rule removed, a tap's MAC rule removed (a tap with no VMM:
# netd writes frames into it as its guest's).  verify_interval: the daemon's
# own runs reach the audit log and the metrics, and count a failure.  Also: --json fields, exit statuses, the
# probes' traffic not counted or recorded as the sandbox's own, the metrics
# and the audit record.  (No timing is asserted: a dropped probe waits a
# fixed, bounded time inside netd.)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndv$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
ok "sandbox create sb1" sb_create sb1 python-dev
ok "sandbox create sb2" sb_create sb2 python-dev
IF1=$(sb_field "$SB1" host_ifname)
IP1=$(sb_field "$SB1" ipv4)
nftx() { world_exec host nft "$@"; }
# rules_cut CHAIN PATTERN - delete the rules of CHAIN matching PATTERN; prints them (to put back).
rules_cut() {
	local rules h
	rules=$(nftx -a list chain inet netd "$1" | grep -E -- "$2")
	for h in $(sed -n 's/.*# handle \([0-9]*\)$/\1/p' <<<"$rules"); do
		nftx delete rule inet netd "$1" handle "$h"
	done
	printf '%s' "$rules"
}
# rules_put CHAIN RULES - add back what rules_cut printed (at the chain's end: order does not matter for these).
rules_put() {
	local rule
	while read -r rule; do
		[ -n "$rule" ] && nftx add rule inet netd "$1" ${rule%% # handle*}
	done <<<"$2"
}

# verify_json ARGS... - the report of `netd verify ARGS --json` into rep, its exit status into VRC.
verify_json() {
	rep=$(netd verify "$@" --json 2>"$WORLD_DIR/verify.err")
	VRC=$?
}
# verdict REPORT SANDBOX PROBE - that row's verdict.
verdict() { jq -r --arg s "$2" --arg p "$3" '.results[] | select(.sandbox == $s and .probe == $p) | .verdict' <<<"$1"; }
detail() { jq -r --arg s "$2" --arg p "$3" '.results[] | select(.sandbox == $s and .probe == $p) | .detail' <<<"$1"; }
failed_probes() { jq -r --arg s "$2" '[.results[] | select(.sandbox == $s and .verdict == "fail") | .probe] | sort | join(" ")' <<<"$1"; }

# ---- a correct setup -----------------------------------------------------------
verify_json --all
eq "verify --all: exit status 0" 0 "$VRC"
eq "--json: ok" true "$(jq -r .ok <<<"$rep")"
eq "--json: sandboxes" 2 "$(jq -r .sandboxes <<<"$rep")"
eq "--json: nothing failed" 0 "$(jq -r .failed <<<"$rep")"
eq "--json: probes = passed + skipped" "$(jq -r .probes <<<"$rep")" "$(jq -r '.passed + .skipped' <<<"$rep")"
eq "--json: every row has sandbox, probe, verdict, target, detail" 0 \
	"$(jq '[.results[] | select((.sandbox and .probe and .verdict and .target and .detail) | not)] | length' <<<"$rep")"
for p in dns-deny dns-other dns-tcp unpinned metadata metadata-azure host sandbox dot spoof \
	dns-deny6 dns-other6 dns-tcp6 unpinned6 metadata6 host6 sandbox6 dot6 spoof6 \
	kernel-jump kernel-src kernel-mark kernel-dns-redirect kernel-anti-spoof; do
	eq "sb1 $p: pass" pass "$(verdict "$rep" "$SB1" "$p")"
done
has "dns-deny: NXDOMAIN from netd, not forwarded" "not forwarded upstream" "$(detail "$rep" "$SB1" dns-deny)"
has "metadata: dropped by the internal rule" "internal" "$(detail "$rep" "$SB1" metadata)"
eq "unpinned: a documentation address on the policy's port" "192.0.2.201:443" \
	"$(jq -r --arg s "$SB1" '.results[] | select(.sandbox == $s and .probe == "unpinned") | .target' <<<"$rep")"
out=$(netd verify "$SB1")
has "the table: a row per probe" "kernel-anti-spoof" "$out"
has "the table: a summary line" "held: 1 sandboxes" "$out"

# The probes' traffic is netd's, not the sandbox's: no deny counted, nothing recorded.
eq "sb1's deny counter is untouched" 0 "$(netd sandbox show "$SB1" | jq -r .traffic.denied)"
eq "sb1's DNS deny counter is untouched" 0 "$(netd sandbox show "$SB1" | jq -r .dns_queries.denied)"
sleep 3	# deny records are folded and written a few seconds later (docs/audit.md)
eq "no deny record for a probe" "" "$(audit_grep '"event":"deny"' "\"sandbox\":\"$SB1\"")"
eq "no dns record for a probe's name" "" "$(audit_grep netd-verify.invalid)"
has "a verify audit record" '"trigger":"api"' "$(audit_grep '"event":"verify"')"
has "netd audit --event verify" '"event":"verify"' "$(netd audit --file "$NETD_AUDIT" --event verify --json)"
m=$(netd status >/dev/null; curl -s --unix-socket "$NETD_SOCKET" http://x/metrics)
has "metrics: the last run's gauge" "netd_verify_last_run_timestamp_seconds" "$m"
has "metrics: probe packets recognised" "netd_verify_probe_packets_total" "$m"

# ---- --allowed -------------------------------------------------------------------
verify_json --allowed "$SB1"
eq "--allowed: exit status 0" 0 "$VRC"
eq "--allowed: the allowed name resolves" pass "$(verdict "$rep" "$SB1" allowed-dns)"
eq "--allowed: and connects" pass "$(verdict "$rep" "$SB1" allowed-conn)"

# ---- exit statuses -------------------------------------------------------------
netd verify no-such-sandbox >/dev/null 2>&1
eq "an unknown sandbox: exit 3" 3 "$?"
netd verify >/dev/null 2>&1
eq "no sandbox and no --all: exit 2" 2 "$?"
netd verify --all "$SB1" >/dev/null 2>&1
eq "names and --all: exit 2" 2 "$?"

# ---- mutation 1: the sandbox's jump removed -----------------------------------------
nftx delete element inet netd sandbox_fwd "{ $IF1 }"
verify_json "$SB1"
eq "jump removed: exit status 7" 7 "$VRC"
eq "jump removed: kernel-jump fails" fail "$(verdict "$rep" "$SB1" kernel-jump)"
has "... saying so" "sandbox_fwd" "$(detail "$rep" "$SB1" kernel-jump)"
eq "jump removed: the rest still holds (forward fails closed)" "kernel-jump" "$(failed_probes "$rep" "$SB1")"
m=$(curl -s --unix-socket "$NETD_SOCKET" http://x/metrics)
has "metrics: the failure counted by sandbox and probe" \
	"netd_verify_failures_total{sandbox=\"$SB1\",probe=\"kernel-jump\"} 1" "$m"
nftx add element inet netd sandbox_fwd "{ $IF1 : jump pe-python-dev }"
verify_json "$SB1"
eq "jump restored: verify holds again" 0 "$VRC"

# ---- mutation 2: the DNS redirection removed ----------------------------------------
redir=$(rules_cut prerouting_nat 'iifname @sandbox_ifs .*redirect')
verify_json "$SB1"
eq "redirect removed: exit status 7" 7 "$VRC"
eq "redirect removed: another resolver is no longer netd" fail "$(verdict "$rep" "$SB1" dns-other)"
eq "... over IPv6 too" fail "$(verdict "$rep" "$SB1" dns-other6)"
eq "... nor DNS over TCP" fail "$(verdict "$rep" "$SB1" dns-tcp)"
eq "... and the kernel check says so" fail "$(verdict "$rep" "$SB1" kernel-dns-redirect)"
eq "... while UDP to the gateway (netd's own socket) still holds" pass "$(verdict "$rep" "$SB1" dns-deny)"
rules_put prerouting_nat "$redir"
verify_json "$SB1"
eq "redirect restored: verify holds again" 0 "$VRC"

# ---- mutation 3: an accept rule inserted -----------------------------------------------
nftx insert rule inet netd forward iifname "$IF1" accept
h=$(nftx -a list chain inet netd forward | sed -n "s/.*iifname \"$IF1\" accept # handle \([0-9]*\)$/\1/p")
verify_json "$SB1"
eq "accept inserted: exit status 7" 7 "$VRC"
for p in unpinned metadata metadata-azure dot unpinned6 metadata6 dot6; do
	eq "accept inserted: $p fails" fail "$(verdict "$rep" "$SB1" "$p")"
done
has "... conntrack showed it through" "conntrack" "$(detail "$rep" "$SB1" unpinned)"
nftx delete rule inet netd forward handle "$h"
verify_json "$SB1"
eq "accept removed: verify holds again" 0 "$VRC"

# ---- mutation 4: a pin added by hand ---------------------------------------------------------
nftx add element inet netd pin4 "{ $IP1 . 192.0.2.201 . tcp . 443 timeout 5m }"
verify_json "$SB1"
eq "hand pin: exit status 7" 7 "$VRC"
eq "hand pin: only the unpinned probe fails" "unpinned" "$(failed_probes "$rep" "$SB1")"
nftx delete element inet netd pin4 "{ $IP1 . 192.0.2.201 . tcp . 443 }"
verify_json "$SB1"
eq "hand pin removed: verify holds again" 0 "$VRC"

# ---- mutation 5: the anti-spoofing rule removed ----------------------------------------------
spoof=$(rules_cut sandbox_raw 'meta nfproto ipv[46] .*drop')
verify_json "$SB1"
eq "anti-spoofing removed: exit status 7" 7 "$VRC"
eq "anti-spoofing removed: spoof fails" fail "$(verdict "$rep" "$SB1" spoof)"
eq "... spoof6 too" fail "$(verdict "$rep" "$SB1" spoof6)"
eq "... and the kernel check says so" fail "$(verdict "$rep" "$SB1" kernel-anti-spoof)"
# Back where they were: each family's drop right after the accept of its
# sandboxes' own sources (IPv4's before the IPv6 rules).
while read -r rule; do
	[ -n "$rule" ] || continue
	rule=${rule%% # handle*}
	fam=ip
	[[ $rule == *"nfproto ipv6"* ]] && fam=ip6
	h=$(nftx -a list chain inet netd sandbox_raw |
		sed -n "s/.*iifname . $fam saddr @sandbox_src[46] accept # handle \([0-9]*\)$/\1/p")
	nftx add rule inet netd sandbox_raw position "$h" $rule
done <<<"$spoof"
verify_json "$SB1"
eq "anti-spoofing restored: verify holds again" 0 "$VRC"
has "restored: spoof holds" pass "$(verdict "$rep" "$SB1" spoof)"

# ---- mutation 5b: an accept where netd renders none, ahead of the checks -------------------
# (the kernel check alone is what stands where live probes do not run)
for m in "metered_raw accept" "sandbox_raw meta nfproto ipv4 accept" \
	"prerouting_raw meta nfproto ipv4 accept"; do
	chain=${m%% *}
	nftx insert rule inet netd $m
	verify_json "$SB1"
	eq "an accept inserted at the top of $chain: kernel-anti-spoof fails" fail \
		"$(verdict "$rep" "$SB1" kernel-anti-spoof)"
	h=$(nftx -a list chain inet netd "$chain" | grep -F -- "${m#* } # handle" | sed 's/.*# handle //' | head -1)
	nftx delete rule inet netd "$chain" handle "$h"
done
verify_json "$SB1"
eq "the accepts removed: verify holds again" 0 "$VRC"

# ---- a tap (no VMM attached): frames written into it as its guest's ---------------------------
TAPSB=$(sb_name tap1)
ok "sandbox create tap1 (a tap; no VMM)" sb_create tap1 python-dev --tap --tap-owner 65534:65534
verify_json "$TAPSB"
eq "tap: exit status 0" 0 "$VRC"
for p in tap-mac tap-spoof tap-mac6 tap-spoof6 kernel-tap-mac kernel-jump kernel-anti-spoof; do
	eq "tap $p: pass" pass "$(verdict "$rep" "$TAPSB" "$p")"
done
has "tap-mac: another MAC, dropped as spoof" "logged as spoof" "$(detail "$rep" "$TAPSB" tap-mac)"
eq "tap: its socket probes are skipped, said why" skip "$(verdict "$rep" "$TAPSB" live)"
eq "tap: the frames are not counted as the guest's denials" 0 \
	"$(netd sandbox show "$TAPSB" | jq -r .traffic.denied)"
TAPIF=$(sb_field "$TAPSB" host_ifname)
has "tap: still there, with no queue attached (netd's closed with the probe)" "NO-CARRIER" \
	"$(world_exec host ip link show "$TAPIF")"

# ---- mutation 6: a tap's MAC rule removed --------------------------------------------------
macrule=$(rules_cut tap_raw '@tap_mac')
verify_json "$TAPSB"
eq "MAC rule removed: exit status 7" 7 "$VRC"
eq "MAC rule removed: tap-mac fails" fail "$(verdict "$rep" "$TAPSB" tap-mac)"
eq "... tap-mac6 too" fail "$(verdict "$rep" "$TAPSB" tap-mac6)"
has "... saying the frame passed the MAC rule" "passed the MAC rule" "$(detail "$rep" "$TAPSB" tap-mac)"
eq "... and the kernel check says so" fail "$(verdict "$rep" "$TAPSB" kernel-tap-mac)"
eq "... while a forged source is still dropped" pass "$(verdict "$rep" "$TAPSB" tap-spoof)"
# nft lists the concatenation's MAC as raw payload (@ll,48,48), which it does not parse back.
macrule=${macrule//@ll,48,48/ether saddr}
nftx insert rule inet netd tap_raw ${macrule%% # handle*}	# before tap_raw's goto
verify_json "$TAPSB"
eq "MAC rule restored: verify holds again" 0 "$VRC"

# ---- audit mode: skipped, said why ------------------------------------------------------------
ok "sandbox create sb3 in audit mode" sb_create sb3 python-dev --mode audit
verify_json "$(sb_name sb3)"
eq "audit mode: its live probes are skipped" skip "$(verdict "$rep" "$(sb_name sb3)" live)"
has "... saying why" "audit mode" "$(detail "$rep" "$(sb_name sb3)" live)"
eq "audit mode: its kernel side is still checked" pass "$(verdict "$rep" "$(sb_name sb3)" kernel-jump)"

ok "netd still answers" netd_alive
netd_down

# ---- verify_interval: the daemon runs verify itself ------------------------------------------
# metric NAME_AND_LABELS - its value in /metrics ("" if absent).
metric() {
	curl -s --unix-socket "$NETD_SOCKET" http://x/metrics | awk -v n="$1" '$1 == n {print $2}'
}
# metric_wait SECONDS NAME_AND_LABELS MIN - poll until the metric is at least MIN; prints its value.
metric_wait() {
	local i v=""
	for ((i = 0; i < $1 * 10; i++)); do
		v=$(metric "$2")
		[ -n "$v" ] && [ "$v" -ge "$3" ] 2>/dev/null && break
		sleep 0.1
	done
	printf '%s' "$v"
}
netd_up "verify_interval: 2" || { t_fail "netd_up with verify_interval"; world_down; t_summary; exit 1; }
has "interval: a verify audit record from the timer" '"trigger":"interval"' \
	"$(audit_wait 20 '"event":"verify"' '"trigger":"interval"')"
ok "interval: netd_verify_runs_total counts it" test "$(metric_wait 10 netd_verify_runs_total 1)" -ge 1
ok "interval: the last run's timestamp is set" test "$(metric netd_verify_last_run_timestamp_seconds)" -gt 0
eq "interval: the sandboxes (restored) hold" '"ok":true' \
	"$(audit_grep '"trigger":"interval"' | tail -1 | grep -o '"ok":true')"
nftx delete element inet netd sandbox_fwd "{ $IF1 }"
fm="netd_verify_failures_total{sandbox=\"$SB1\",probe=\"kernel-jump\"}"
v1=$(metric_wait 20 "$fm" 1)
ok "interval, jump removed: the periodic run counts the failure" test "${v1:-0}" -ge 1
v2=$(metric_wait 20 "$fm" $((${v1:-0} + 1)))
ok "... and the next run again (the counter grows)" test "${v2:-0}" -gt "${v1:-0}"
has "... its audit record says which" '"probe":"kernel-jump"' \
	"$(audit_grep '"trigger":"interval"' '"ok":false')"
ok "... and a warning in the log" grep -q "verify: .* probes failed" "$NETD_LOG"
nftx add element inet netd sandbox_fwd "{ $IF1 : jump pe-python-dev }"
ok "netd still answers" netd_alive
netd_down
world_down
t_summary
