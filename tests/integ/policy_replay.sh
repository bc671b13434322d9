#!/usr/bin/env bash
# Issue 26, `netd policy replay` end to end in a private world
# (docs/policy-workflow.md, "Replaying a policy change"):
#   1. a sandbox under policy rp (a wildcard with an except, two ports for
#      pypi.org, a CIDR rule) makes a few allowed and denied names and
#      connections; the real audit log records them;
#   2. replaying rp itself changes nothing: replay decides as the daemon did;
#   3. a narrowed rp (pypi.org on 443 only, no CIDR rule): exactly the
#      pypi.org:80 and 198.51.100.7:8080 connections are newly denied, with
#      their counts and first/last times from the log; --fail-on statuses;
#      the log split in two files (rotation, oldest first) gives the same;
#   4. a widened rp (the except gone, example.com, a CIDR rule for
#      203.0.113.66:80): the names and the flow newly allowed, nothing denied;
#   5. the narrowed policy really loaded and the workload run again: what
#      the daemon then denied is what replay said, and replaying the narrowed
#      policy over that part of the log changes nothing.
# Times are read from the log and compared, never measured.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "npr$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
PROP=$WORLD_DIR/proposed
mkdir -p "$POL" "$PROP"
cat >"$POL/rp.yaml" <<'YAML'
name: rp
egress:
  - domains: ["*.openai.com"]
    except: [ttl0.openai.com]
    ports: [443]
  - domains: [pypi.org]
    ports: [443, 80]
  - cidrs: [198.51.100.7/32]
    ports: [8080]
YAML
cat >"$PROP/narrow.yaml" <<'YAML'
name: rp
egress:
  - domains: ["*.openai.com"]
    except: [ttl0.openai.com]
    ports: [443]
  - domains: [pypi.org]
    ports: [443]
YAML
cat >"$PROP/wide.yaml" <<'YAML'
name: rp
egress:
  - domains: ["*.openai.com"]
    ports: [443]
  - domains: [pypi.org, example.com]
    ports: [443, 80]
  - cidrs: [198.51.100.7/32]
    ports: [8080]
  - cidrs: [203.0.113.66/32]
    ports: [80]
YAML
NETD_POLICIES=$POL netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB=$(sb_name rp)

# replay ARGS... - `netd policy replay --json` over the audit log: the report in
# $REP, the exit status in $RC.
replay() {
	REP=$(netd policy replay --audit "$NETD_AUDIT" --json "$@" 2>"$WORLD_DIR/replay.err")
	RC=$?
}
# changes REPORT DIRECTION - "kind what count" a line, sorted, for the sandbox.
changes() {
	jq -r --arg sb "$SB" --arg dir "$2" '.groups[] | select(.sandbox == $sb) | .changes[] |
		select(.direction == $dir) |
		"\(.kind) \(if .kind == "dns" then .qname else "\(.proto) \(.dst):\(.dport)" end) \(.count)"' \
		<<<"$1" | sort
}
# change_field REPORT DIRECTION DST:PORT FIELD - one flow change's field.
change_field() {
	jq -r --arg sb "$SB" --arg dir "$2" --arg w "$3" --arg f "$4" '.groups[] |
		select(.sandbox == $sb) | .changes[] | select(.direction == $dir and .kind == "flow" and
		"\(.dst):\(.dport)" == $w) | .[$f]' <<<"$1"
}
# when DST PORT - the start of the sandbox's conn_open to DST:PORT in the log.
when() {
	jq -r --arg sb "$SB" --arg d "$1" --argjson p "$2" 'select(.event == "conn_open" and
		.sandbox == $sb and .dst == $d and .dport == $p) | .start' "$NETD_AUDIT" | head -1
}
settle() { sleep 4; }	# deny records are written after 3 s of quiet (docs/audit.md)

# The workload: allowed and denied names and connections, each once.
workload() {
	sb_curl rp -o /dev/null https://api.openai.com/
	sb_curl rp -o /dev/null https://pypi.org/
	sb_curl rp -o /dev/null http://pypi.org/
	sb_curl rp -o /dev/null http://198.51.100.7:8080/
	sb_curl rp -o /dev/null https://ttl0.openai.com/	# except: NXDOMAIN
	sb_curl rp -o /dev/null https://example.com/	# not in the policy: NXDOMAIN
	sb_curl rp -o /dev/null http://203.0.113.66/	# no name: dropped
	return 0
}

# ---- 1. record --------------------------------------------------------------------
ok "sandbox create under rp" sb_create rp rp
ok "an allowed name, allowed port" sb_curl rp -o /dev/null https://api.openai.com/
workload >/dev/null 2>&1
settle
has "the log has the denied except" '"verdict":"deny"' "$(audit_grep "\"sandbox\":\"$SB\"" '"qname":"ttl0.openai.com"')"
has "the log has the dropped direct connection" '"reason":"not-pinned"' \
	"$(audit_grep '"event":"deny"' "\"sandbox\":\"$SB\"" '"dst":"203.0.113.66"')"
has "the log has pypi.org on port 80" '"domain":"pypi.org"' \
	"$(audit_grep '"event":"conn_open"' "\"sandbox\":\"$SB\"" '"dport":80')"
mark=$(wc -l <"$NETD_AUDIT")

# ---- 2. the policy in force: nothing changes -----------------------------------------
replay "$POL/rp.yaml" --fail-on newly-denied --fail-on newly-allowed
rep=$REP
eq "replaying the policy in force exits 0 even with --fail-on" 0 "$RC"
eq "... and changes nothing" "0 0" "$(jq -r '"\(.newly_denied) \(.newly_allowed)"' <<<"$rep")"
eq "every DNS record of the sandbox was replayed" \
	"$(audit_grep '"event":"dns"' "\"sandbox\":\"$SB\"" | grep -c .)" \
	"$(jq -r --arg sb "$SB" '.groups[] | select(.sandbox == $sb) | .dns.replayed' <<<"$rep")"
eq "every connection (conn_open) and denied attempt was replayed" \
	"$(audit_grep "\"sandbox\":\"$SB\"" | grep -cE '"event":"(conn_open|deny)"')" \
	"$(jq -r --arg sb "$SB" '.groups[] | select(.sandbox == $sb) | .flows.replayed' <<<"$rep")"

# ---- 3. narrowed ------------------------------------------------------------------------
replay --fail-on newly-denied "$PROP/narrow.yaml"
rep=$REP
eq "narrowed, --fail-on newly-denied: exit 7" 7 "$RC"
eq "narrowed: pypi.org:80 and the CIDR host's 8080 newly denied, once each" \
	"$(printf 'flow tcp 198.51.100.10:80 1\nflow tcp 198.51.100.7:8080 1')" \
	"$(changes "$rep" newly-denied)"
eq "narrowed: nothing newly allowed" "" "$(changes "$rep" newly-allowed)"
eq "narrowed: pypi.org:80 for the port" "port" "$(change_field "$rep" newly-denied 198.51.100.10:80 why)"
eq "narrowed: 8080 for want of a CIDR rule" "not-pinned" \
	"$(change_field "$rep" newly-denied 198.51.100.7:8080 why)"
eq "narrowed: its first time is the connection's start in the log" "$(when 198.51.100.10 80)" \
	"$(change_field "$rep" newly-denied 198.51.100.10:80 first)"
replay --fail-on newly-allowed "$PROP/narrow.yaml"
eq "narrowed, --fail-on newly-allowed: exit 0" 0 "$RC"
head -n 5 "$NETD_AUDIT" >"$WORLD_DIR/audit.jsonl.1"
tail -n +6 "$NETD_AUDIT" >"$WORLD_DIR/audit.jsonl.0"
eq "two files, oldest first, give the same report" "$(jq -cS . <<<"$rep")" \
	"$(netd policy replay --audit "$WORLD_DIR/audit.jsonl.1" --audit "$WORLD_DIR/audit.jsonl.0" \
		--json --fail-on newly-denied "$PROP/narrow.yaml" 2>/dev/null | jq -cS .)"
out=$(netd policy replay --audit "$NETD_AUDIT" "$PROP/narrow.yaml" 2>&1)
has "the table names the change" "newly-denied" "$out"
has "... and the totals" "2 newly denied, 0 newly allowed" "$out"

# ---- 4. widened -------------------------------------------------------------------------
replay --fail-on newly-denied "$PROP/wide.yaml"
rep=$REP
eq "widened, --fail-on newly-denied: exit 0" 0 "$RC"
eq "widened: nothing newly denied" "" "$(changes "$rep" newly-denied)"
got=$(changes "$rep" newly-allowed)
has "widened: the except's name newly allowed" "dns ttl0.openai.com " "$got"
has "widened: example.com newly allowed" "dns example.com " "$got"
has "widened: the direct connection newly allowed by the CIDR rule" "flow tcp 203.0.113.66:80 " "$got"
eq "widened: only those" 3 "$(cut -d' ' -f1,2 <<<"$got" | sort -u | grep -c .)"
eq "widened: by egress[3]" 3 "$(change_field "$rep" newly-allowed 203.0.113.66:80 rule)"
replay --fail-on newly-allowed "$PROP/wide.yaml"
eq "widened, --fail-on newly-allowed: exit 7" 7 "$RC"

# ---- 5. what replay said, really done -------------------------------------------------
cp "$PROP/narrow.yaml" "$POL/rp.yaml"
ok "the narrowed policy loads" netd policy reload
workload >/dev/null 2>&1
settle
new=$(tail -n +"$((mark + 1))" "$NETD_AUDIT" | grep -F "\"sandbox\":\"$SB\"")
has "pypi.org:80 is now really dropped" '"dport":80' "$(grep -F '"event":"deny"' <<<"$new" | grep -F '"dst":"198.51.100.10"')"
has "198.51.100.7:8080 is now really dropped" '"dport":8080' "$(grep -F '"event":"deny"' <<<"$new" | grep -F '"dst":"198.51.100.7"')"
eq "no other allowed connection became a denial" "" \
	"$(grep -F '"event":"deny"' <<<"$new" | grep -vF -e '"dst":"198.51.100.10","dport":80' \
		-e '"dst":"198.51.100.7","dport":8080' -e '"dst":"203.0.113.66"' -e '"proto":"icmp')"
mark_ts=$(sed -n "$((mark + 1))p" "$NETD_AUDIT" | jq -r .ts)	# the first record after the reload
replay --since "$mark_ts" --fail-on newly-denied --fail-on newly-allowed "$PROP/narrow.yaml"
rep=$REP
eq "replaying the narrowed policy over its own records changes nothing" "0 0 0" \
	"$RC $(jq -r '"\(.newly_denied) \(.newly_allowed)"' <<<"$rep")"

netd_down
t_summary
