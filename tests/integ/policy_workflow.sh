#!/usr/bin/env bash
# Issue 17 end to end in a private world: from an unknown agent to an
# enforced policy (docs/policy-workflow.md), and denials an agent
# understands.
#   1. audit mode: an agent-like workload (pip-like fetches from the
#      world's pypi.org and files.pythonhosted.org, an API call to
#      api.openai.com, two direct-IP probes) under a policy that allows
#      nothing but says `mode: audit`: nothing is blocked, `netd sandbox
#      list` says audit, the log marks would_deny on DNS and connections;
#   2. `netd policy suggest` from that log -> a policy that passes
#      `netd policy check`; installed over the audit policy and reloaded,
#      the sandbox is in enforce mode;
#   3. the same workload again: zero denials; a name outside it is denied;
#   4. on_deny: reject: a denied TCP connect fails with ECONNREFUSED, a
#      denied UDP send gets the ICMP error (EHOSTUNREACH), dig shows the
#      Extended DNS Error (only with EDNS); except: with a wildcard and an
#      exact name, and in `netd policy check`; policy check's warning
#      for a checked and an unchecked rule on one port (issue 30);
#   5. `sandbox create --mode audit` over an enforcing policy;
#   6. issue 30: three names resolved to one address and two connections
#      made to that address by its number: the suggestion lists the names
#      and no "*.dt.example", with or without --wildcards.
# Errnos are asserted, never times.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "npw$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
mkdir -p "$POL"
printf 'name: agent\ndescription: "an unknown agent: audit first"\nmode: audit\negress: []\n' \
	>"$POL/agent.yaml"
cat >"$POL/rj.yaml" <<'YAML'
name: rj
on_deny: reject
egress:
  - domains: ["*.openai.com"]
    except: [ttl0.openai.com]
    ports: [443]
  - domains: ["*.dt.example"]
    except: ["*.sub.dt.example"]
    ports: [80]
YAML
printf 'name: strict\negress:\n  - {domains: [pypi.org], ports: [443]}\n' >"$POL/strict.yaml"
printf 'name: probe\nmode: audit\negress: []\n' >"$POL/probe.yaml"
NETD_POLICIES=$POL netd_up || { echo "0 passed, 1 failed"; exit 1; }
AG=$(sb_name ag)

# The workload: what an agent installing a package and calling an API does.
workload() {
	sb_curl ag -o /dev/null https://pypi.org/simple/ &&
		sb_curl ag -o /dev/null https://files.pythonhosted.org/bytes/2000 &&
		sb_curl ag -o /dev/null https://api.openai.com/ &&
		sb_curl ag -o /dev/null http://198.51.100.7:8080/ &&
		sb_curl ag -o /dev/null http://203.0.113.66/
}
# denials SINCE_LINE - the sandbox's deny records and denied DNS answers after line SINCE_LINE.
denials() {
	tail -n +"$(($1 + 1))" "$NETD_AUDIT" | grep -F "\"sandbox\":\"$AG\"" |
		grep -E '"event":"deny"|"verdict":"deny"' | grep -v '"proto":"icmpv6"' || true
}
# settle - long enough for any deny record to be written: nflog is asynchronous and
# netd folds an attempt's packets, writing it after DENYFOLD_GAP_MS (3 s) of quiet.
settle() { sleep 4; }
# wait_for NEEDLE... - until a record with every NEEDLE is in the log (nflog is asynchronous).
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -n "$(audit_grep "$@")" ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- 1. audit mode ---------------------------------------------------------------
ok "sandbox create under an audit-mode policy that allows nothing" sb_create ag agent
has "sandbox list shows the mode" "audit" "$(netd sandbox list | grep -F "$AG")"
ok "the workload runs unblocked in audit mode" workload
ok "a DNS record marks pypi.org would_deny" \
	wait_for "\"sandbox\":\"$AG\"" '"qname":"pypi.org"' '"verdict":"allow"' '"would_deny":"not-in-policy"'
ok "a conn_open record marks the direct-IP probe would_deny" \
	wait_for '"event":"conn_open"' "\"sandbox\":\"$AG\"" '"dst":"203.0.113.66"' '"would_deny":"not-pinned"'
ok "a conn_open record names files.pythonhosted.org" \
	wait_for '"event":"conn_open"' "\"sandbox\":\"$AG\"" '"domain":"files.pythonhosted.org"' '"would_deny":"not-in-policy"'
settle
eq "audit mode denied nothing" "" "$(denials 0)"
eq "one conn_open for the direct-IP probe (one writer), not two" 1 \
	"$(audit_grep '"event":"conn_open"' "\"sandbox\":\"$AG\"" '"dst":"203.0.113.66"' | grep -c .)"
# A connection made by number (the workload's to 203.0.113.66:80, again, from
# port 47123), then a name that pins its address while it is open: its conn
# record names what it was opened under (nothing: not-pinned), as its
# conn_open does; and suggest still asks for the address (section 2): the
# name came later.  (A new user's conn record took the later name; suggest
# made it a name rule and the enforced workload was denied.)
mkfifo "$WORLD_DIR/hold.fifo"
exec 7<>"$WORLD_DIR/hold.fifo"	# a writer, so the reader never blocks opening it
sb_exec ag "$WORLD_PYTHON" -c 'import socket, sys
s = socket.create_connection(("203.0.113.66", 80), timeout=10, source_address=("0.0.0.0", 47123))
sys.stdin.readline()
s.close()' <"$WORLD_DIR/hold.fifo" &
HOLD_PID=$!
ok "held: its conn_open has no name" wait_for '"event":"conn_open"' "\"sandbox\":\"$AG\"" \
	'"sport":47123' '"dst":"203.0.113.66"' '"domain":null' '"would_deny":"not-pinned"'
eq "then example.com names that address" "203.0.113.66" "$(sb_dig ag +short example.com)"
echo >&7	# the held connection closes
wait "$HOLD_PID"
exec 7>&-
ok "its conn record: no name, not-pinned (as opened)" wait_for '"event":"conn"' \
	"\"sandbox\":\"$AG\"" '"sport":47123' '"domain":null' '"would_deny":"not-pinned"'
hasnt "... never example.com" '"domain":"example.com"' \
	"$(audit_grep '"event":"conn"' "\"sandbox\":\"$AG\"" '"sport":47123')"
fail "a never-pin address stays unreachable in audit mode" \
	sb_exec ag curl -s -o /dev/null --connect-timeout 2 http://169.254.169.254/
settle	# its deny record ("internal") lands before section 3's mark, not after

# ---- 2. suggest, check, install, reload -------------------------------------------
out=$(netd policy suggest --sandbox "$AG" --file "$NETD_AUDIT" --name agent 2>"$WORLD_DIR/suggest.err")
eq "policy suggest succeeds" "0" "$?"
printf '%s\n' "$out" >"$WORLD_DIR/suggested.yaml"
for want in '"pypi.org"' '"files.pythonhosted.org"' '"api.openai.com"' '"198.51.100.7/32"' \
	'"203.0.113.66/32"' 'ports: [443]' 'ports: [8080]' 'ports: [80]'; do
	has "the suggestion lists $want" "$want" "$out"
done
hasnt "the suggestion never lists a never-pin address as a rule" '"169.254.169.254/32"' "$out"
hasnt "the suggestion is in enforce mode" "mode: audit" "$out"
ok "the suggestion passes policy check" netd policy check "$WORLD_DIR/suggested.yaml"
eq "the same log gives the same bytes" "$out" \
	"$(netd policy suggest --sandbox "$AG" --file "$NETD_AUDIT" --name agent 2>/dev/null)"
cp "$WORLD_DIR/suggested.yaml" "$POL/agent.yaml"
ok "policy reload takes the suggestion" netd policy reload
has "sandbox list shows enforce after the reload" "enforce" "$(netd sandbox list | grep -F "$AG")"

# ---- 3. the same workload, enforced ------------------------------------------------
mark=$(wc -l <"$NETD_AUDIT")
ok "the same workload runs under the suggested policy" workload
settle
eq "zero denials under the suggested policy" "" "$(denials "$mark")"
fail "a name outside the suggestion is denied" sb_curl ag -o /dev/null https://openai.com/
has "its DNS answer was denied" '"verdict":"deny"' "$(audit_grep "\"sandbox\":\"$AG\"" '"qname":"openai.com"')"

# ---- 4. on_deny: reject, EDE, except ------------------------------------------------
ok "sandbox create under on_deny: reject" sb_create rj rj
PYCONN='import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(20)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))'
PYUDP='import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(20)
s.connect((sys.argv[1], int(sys.argv[2])))
try:
    s.send(b"x")
    s.recv(100)
    print("answered")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))'
eq "a denied TCP connect fails with ECONNREFUSED (a TCP reset)" "ECONNREFUSED" \
	"$(sb_exec rj "$WORLD_PYTHON" -c "$PYCONN" 203.0.113.66 443 2>&1)"
eq "a denied UDP send gets ICMP admin-prohibited (EHOSTUNREACH)" "EHOSTUNREACH" \
	"$(sb_exec rj "$WORLD_PYTHON" -c "$PYUDP" 203.0.113.66 9999 2>&1)"
eq "an allowed name still connects under reject" "api.openai.com ok" \
	"$(sb_exec rj curl -sS --cacert "$WORLD_CA" https://api.openai.com/ 2>&1)"
ok "the rejected connect is audited as a deny, as under drop" \
	wait_for '"event":"deny"' "\"sandbox\":\"$(sb_name rj)\"" '"dst":"203.0.113.66"' '"reason":"not-pinned"'
# The reject rate is each sandbox's own: rj spends its whole rate on denied
# connects, for 4 s without a pause; rj2, under the same policy, is still
# refused meanwhile (a rate shared by the policy would leave it nothing).
ok "second sandbox under on_deny: reject" sb_create rj2 rj
PYFLOOD='import socket, sys, time
n, end = 0, time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    socks = []
    for i in range(100):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((sys.argv[1], int(sys.argv[2])))
        socks.append(s)
        n += 1
    for s in socks:
        s.close()
print("flooded" if n > 1000 else n)'
sb_exec rj "$WORLD_PYTHON" -c "$PYFLOOD" 203.0.113.66 443 4 >"$WORLD_DIR/flood.out" 2>&1 &
FLOOD_PID=$!
world_pid_track "$FLOOD_PID"
sleep 1.5
# (within a second: its SYN is answered, not left for a retransmit after the flood)
eq "rj2's denied connect is refused while rj floods (its own rate)" "ECONNREFUSED" \
	"$(sb_exec rj2 "$WORLD_PYTHON" -c "${PYCONN/settimeout(20)/settimeout(1)}" 203.0.113.66 443 2>&1)"
wait "$FLOOD_PID"
eq "rj flooded denied connects for 4 s" "flooded" "$(cat "$WORLD_DIR/flood.out")"
ok "sandbox rj2 deleted" netd sandbox delete "$(sb_name rj2)"
d=$(sb_dig rj denied.example A)
has "dig: a denied name is NXDOMAIN" "status: NXDOMAIN" "$d"
has "dig shows the Extended DNS Error with the reason" \
	"EDE: 15 (Blocked): (netd: blocked by the sandbox's policy: not in policy)" "$d"
hasnt "the Extended DNS Error does not name the policy (the sandbox need not learn it)" "rj" \
	"$(grep EDE <<<"$d")"
hasnt "no EDE without EDNS" "EDE" "$(sb_dig rj +noedns denied.example A)"
eq "except: api.openai.com is inside *.openai.com" "198.51.100.30" "$(sb_dig rj +short api.openai.com A)"
has "except: ttl0.openai.com (exact) is denied" "status: NXDOMAIN" "$(sb_dig rj ttl0.openai.com A)"
eq "except: www.dt.example is inside *.dt.example" "198.51.100.40" "$(sb_dig rj +short www.dt.example A)"
has "except: www.sub.dt.example (under *.sub.dt.example) is denied" "status: NXDOMAIN" \
	"$(sb_dig rj www.sub.dt.example A)"
out=$(netd policy check "$POL/rj.yaml" 2>&1)
has "policy check lists the excepts" "egress[0]: except ttl0.openai.com" "$out"
has "policy check lists the wildcard except" "egress[1]: except *.sub.dt.example" "$out"
printf 'name: typo\negress:\n  - domains: ["*.openai.com"]\n    except: [api.openai.org]\n    ports: [443]\n' \
	>"$WORLD_DIR/typo.yaml"
has "policy check: an except outside the rule's wildcards is an error at FILE:LINE:COL" \
	"$WORLD_DIR/typo.yaml:4:14: egress[0].except[0]: 'api.openai.org' is not inside any wildcard" \
	"$(netd policy check "$WORLD_DIR/typo.yaml" 2>&1)"

# Issue 30, finding 5: a rule without the SNI check beside a checked one on its port.
printf 'name: web\negress:\n  - domains: [www.example.com]\n    ports: [443]\n    tls: { sni: enforce }\n  - domains: [example.com]\n    ports: [443]\n' \
	>"$WORLD_DIR/web.yaml"
out=$(netd policy check "$WORLD_DIR/web.yaml" 2>&1)
eq "policy check: a checked and an unchecked rule that can pin one address: exit 0" "0" "$?"
has "... a warning at the unchecked domain's FILE:LINE:COL" \
	"$WORLD_DIR/web.yaml:6:15: warning: egress[1].domains[0] example.com (tls.sni off, http.host off)" "$out"
has "... naming the checked one at its FILE:LINE:COL" \
	"egress[0].domains[0] www.example.com at $WORLD_DIR/web.yaml:3:15 (tls.sni enforce, http.host off)" "$out"
has "... saying what decides and what to do" \
	"whichever rule's answer pinned it decides whether the check runs there; put the same tls/http check on both rules" "$out"

# ---- 5. --mode audit at create time -------------------------------------------------
ok "sandbox create --mode audit over an enforcing policy" sb_create sa strict --mode audit
has "sandbox list shows audit for it" "audit" "$(netd sandbox list | grep -F "$(sb_name sa)")"
ok "a name outside its policy resolves in audit mode" sb_curl sa -o /dev/null https://api.openai.com/
has "... and is marked would_deny" '"would_deny":"not-in-policy"' \
	"$(audit_grep "\"sandbox\":\"$(sb_name sa)\"" '"qname":"api.openai.com"')"

# ---- 6. connections by address never widen a suggestion (issue 30) ------------------
ok "sandbox create under a second audit policy" sb_create ad probe
for n in www multi cache; do	# all three are 198.51.100.40 in the world
	eq "$n.dt.example resolves in audit mode" "198.51.100.40" "$(sb_dig ad +short $n.dt.example A)"
done
ok "a connection by address" sb_curl ad -o /dev/null http://198.51.100.40/
ok "a second connection by address" sb_curl ad -o /dev/null http://198.51.100.40/
ok "their conn_open records are in the log" \
	wait_for '"event":"conn_open"' "\"sandbox\":\"$(sb_name ad)\"" '"dst":"198.51.100.40"'
for flag in "" --wildcards; do
	out=$(netd policy suggest --sandbox "$(sb_name ad)" --file "$NETD_AUDIT" --name probe $flag 2>&1)
	hasnt "suggest ${flag:-(default)}: no wildcard from connections by address" '"*.dt.example"' "$out"
	has "suggest ${flag:-(default)}: the names are listed exactly" '"multi.dt.example"' "$out"
done

netd_down
t_summary
