#!/usr/bin/env bash
# `netd audit` on a live log: a denied connect whose SYN is retransmitted
# is one deny record with a count; -f starts at the end (like tail -f) and
# --from-start replays; --last N; the filters --verdict, --reason, --dst
# (address and CIDR), --port; QTYPE and RCODE columns; --json keeps the
# records as written.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndl$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)
A=("$NETD_BIN" audit --file "$NETD_AUDIT")	# the binary: a function run with & would leave its child behind
field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# ---- one denied attempt, its retransmitted SYNs: one record ------------------------------
# A connect that waits 4 s: the SYN at 0 and its retransmits at +1 s and +3 s.
sport=$(sb_exec sb1 python3 -c '
import socket
s = socket.socket()
s.settimeout(4.5)
s.bind(("0.0.0.0", 0))
print(s.getsockname()[1], flush=True)
try:
    s.connect(("203.0.113.66", 80))
except OSError:
    pass
')
for ((i = 0; i < 100; i++)); do
	rec=$(audit_grep '"event":"deny"' "\"sport\":$sport")
	[ -n "$rec" ] && break
	sleep 0.1
done
sleep 4	# a second record would come within the fold window
rec=$(audit_grep '"event":"deny"' "\"sport\":$sport")
eq "one deny record for the attempt" "1" "$(grep -c . <<<"$rec")"
# (how many SYNs: 3 with exponential backoff, 5 with tcp_syn_linear_timeouts)
count=$(field "$rec" count 2>&1)
ok "its count is the SYN and its retransmits ($count)" test "$count" -ge 3
ok "first and last packet times" test "$(field "$rec" first 2>&1)" '<' "$(field "$rec" last 2>&1)"
m=$(world_exec host curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics)
eq "the metric counts the same packets" "$count" \
	"$(awk -v k="netd_sandbox_denied_total{sandbox=\"$SB1\",reason=\"not-pinned\"}" '$1 == k {print $2}' <<<"$m")"
has "the table shows the count" "not-pinned x$count" "$("${A[@]}" --event deny)"

# ---- some records for the filters ------------------------------------------------------------
ok "A query" sb_dig sb1 +short pypi.org A
sb_dig sb1 +short pypi.org AAAA >/dev/null
sb_dig sb1 +short example.com >/dev/null
eq "a connection" "cidr-host ok" "$(sb_curl sb1 http://198.51.100.7:8080/)"
fail "to the host" sb_exec sb1 curl -sS --connect-timeout 1 "http://$(sb_field "$SB1" gateway4):22/"
for ((i = 0; i < 100; i++)); do
	[ -n "$(audit_grep '"event":"deny"' '"reason":"to-host"')" ] && \
		[ -n "$(audit_grep '"event":"conn_open"' '"dport":8080')" ] && break
	sleep 0.1
done

tab=$("${A[@]}" --event dns --sandbox "$SB1")
has "table: QTYPE column" "QTYPE" "$(head -1 <<<"$tab")"
has "table: RCODE column" "RCODE" "$(head -1 <<<"$tab")"
ok "table: the A and the AAAA query are told apart" \
	test "$(grep pypi.org <<<"$tab" | awk '{print $7}' | sort -u | tr '\n' ' ')" = "A AAAA "
has "table: NXDOMAIN for the denied name" "NXDOMAIN" "$(grep example.com <<<"$tab")"

out=$("${A[@]}" --json --verdict deny)
ok "--verdict deny: only denials" python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines()]
ok = recs and all(r.get("verdict") == "deny" or r["event"] in ("deny", "deny_suppressed") for r in recs)
sys.exit(0 if ok and any(r["event"] == "dns" for r in recs) and any(r["event"] == "deny" for r in recs) else 1)' "$out"
out=$("${A[@]}" --json --verdict allow --event conn_open)
has "--verdict allow: the conn_open of the allowed connection" '"dport":8080' "$out"
out=$("${A[@]}" --json --reason to-host)
eq "--reason to-host: the one denial to the host" "to-host" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["reason"] for l in sys.argv[1].splitlines()})))' "$out")"
out=$("${A[@]}" --json --dst 203.0.113.66)
ok "--dst ADDR: only that destination" test -n "$out" -a -z "$(grep -v '203.0.113.66' <<<"$out")"
out=$("${A[@]}" --json --dst 198.51.100.0/24 --event dns)
has "--dst CIDR: DNS records by their answers" '"qname":"pypi.org"' "$out"
hasnt "--dst CIDR: not the denied name" "example.com" "$out"
out=$("${A[@]}" --json --port 8080)
ok "--port 8080: conn_open and conn of that connection only" python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines()]
sys.exit(0 if recs and all(r["dport"] == 8080 for r in recs) and {r["event"] for r in recs} >= {"conn_open"} else 1)' "$out"
eq "--last 2: two records" "2" "$("${A[@]}" --json --last 2 | grep -c .)"
eq "--last 2: the last two of the log" "$(tail -2 "$NETD_AUDIT")" "$("${A[@]}" --json --last 2)"
fail "--last 0 is a usage error" "${A[@]}" --last 0
fail "--dst garbage is a usage error" "${A[@]}" --dst nowhere
fail "--verdict maybe is a usage error" "${A[@]}" --verdict maybe
eq "--json emits the records themselves" "$(grep '"event":"deny"' "$NETD_AUDIT")" "$("${A[@]}" --json --event deny)"

# ---- -f starts at the end -----------------------------------------------------------------------
n_before=$(grep -c . "$NETD_AUDIT")
"${A[@]}" -f --json >"$WORLD_DIR/follow.out" 2>&1 &
F1=$!
world_pid_track "$F1"
"${A[@]}" -f --json --from-start >"$WORLD_DIR/follow-all.out" 2>&1 &
F2=$!
world_pid_track "$F2"
"${A[@]}" -f --json --last 1 --event dns >"$WORLD_DIR/follow-last.out" 2>&1 &
F3=$!
world_pid_track "$F3"
sleep 1
sb_dig sb1 +short files.pythonhosted.org >/dev/null
for ((i = 0; i < 50; i++)); do
	grep -q files.pythonhosted.org "$WORLD_DIR/follow.out" &&
		grep -q files.pythonhosted.org "$WORLD_DIR/follow-last.out" &&
		grep -q files.pythonhosted.org "$WORLD_DIR/follow-all.out" && break
	sleep 0.1
done
kill "$F1" "$F2" "$F3" 2>/dev/null
wait "$F1" "$F2" "$F3" 2>/dev/null
has "-f: follows new records" "files.pythonhosted.org" "$(cat "$WORLD_DIR/follow.out")"
hasnt "-f: nothing from before it started" "\"sport\":$sport" "$(cat "$WORLD_DIR/follow.out")"
ok "-f --from-start: the whole log, then the new ones" test "$(grep -c . "$WORLD_DIR/follow-all.out")" -gt "$n_before"
has "-f --from-start: the new record too" "files.pythonhosted.org" "$(cat "$WORLD_DIR/follow-all.out")"
eq "-f --last 1: the last dns record, then the new one" "2" "$(grep -c '"event":"dns"' "$WORLD_DIR/follow-last.out")"
ok "netd alive" netd_alive
netd_down
# A file whose last record has no newline (cut short, say): still read.
cut=$WORLD_DIR/cut.jsonl
head -n 2 "$NETD_AUDIT" >"$cut"
printf '%s' '{"event":"dns","sandbox":"cut-sb","qname":"last.example","verdict":"deny"}' >>"$cut"
has "a last line without its newline is read" "last.example" "$(netd audit --file "$cut" --json)"
eq "... once" "1" "$(netd audit --file "$cut" --json 2>&1 | grep -c last.example)"
# Audit mode: the table says what the JSON's would_deny says (a new user saw
# only "allow" and "-").
wd=$WORLD_DIR/would.jsonl
printf '%s\n' '{"ts":"2026-12-06T10:00:00.000Z","event":"dns","sandbox":"am","policy":"a","qname":"pypi.org","qtype":"A","verdict":"allow","reason":"audit-mode","would_deny":"not-in-policy","rcode":"NOERROR"}' \
	'{"ts":"2026-12-06T10:00:01.000Z","event":"conn","sandbox":"am","policy":"a","proto":"tcp","src":"10.87.0.2","sport":4000,"dst":"203.0.113.66","dport":80,"domain":null,"bytes_out":1,"bytes_in":2,"would_deny":"not-pinned"}' >"$wd"
out=$(netd audit --file "$wd")
has "table: a DNS answer audit mode passed" "allow, would deny: not-in-policy" "$out"
has "table: a connection audit mode passed" "allow, would deny: not-pinned" "$out"
# No log at the path: exit 3 (not found), for netd audit and policy suggest alike.
netd audit --file "$WORLD_DIR/none.jsonl" >/dev/null 2>&1
eq "netd audit: no log exits 3" "3" "$?"
netd policy suggest --sandbox x --file "$WORLD_DIR/none.jsonl" >/dev/null 2>&1
eq "policy suggest: no log exits 3" "3" "$?"
t_summary
