#!/usr/bin/env bash
# Per-sandbox connection limit (policy limits.connections, netd.yaml
# limits.connections; nftables "ct count over N" in the policy's chain, one
# count per sandbox by its mark).
# Sandbox A (limit 100) floods connection attempts to a pinned address
# that never answers: keep.dt.example (198.51.100.46, pinned through a real
# DNS answer) is blackholed by an nft drop rule in the world's *inet*
# namespace (a table this test makes there; never the machine's).  Every
# accepted SYN leaves a SYN_SENT entry in the host netns's conntrack table
# for 120 s, so without the limit A's entries grow with the flood.
# Asserted: A's entries never exceed its limit (sampled during the flood)
# and reach it; A's further connects fail with deny records reason
# "conn-limit"; A's DNS, and sandbox B's DNS and connects (netd.yaml's
# default limit) still work; a reload changes A's limit in the kernel.
# CONNLIMIT_RATE (attempts/s, default 400) and CONNLIMIT_SECONDS (default 3)
# size the flood.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

BIN=$PWD/build/test/acct_burst	# the load generator, built by make asan / make integ
if [ ! -x "$BIN" ]; then
	echo "missing $BIN (the load generator): run make asan first"; echo "0 passed, 1 failed"; exit 1
fi
RATE=${CONNLIMIT_RATE:-400}
SECS=${CONNLIMIT_SECONDS:-3}
LIMIT=100
BLACKHOLE=198.51.100.46	# keep.dt.example, TTL 600; nothing serves it

world_up "ndcl$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
# The blackhole: in the world's inet netns only, before routing (no ICMP back).
world_exec inet nft -f - <<NFT || { echo "blackhole setup failed"; echo "0 passed, 1 failed"; exit 1; }
table inet ndtest_blackhole {
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		ip daddr $BLACKHOLE drop
	}
}
NFT
mkdir -p "$WORLD_DIR/policies"
cat >"$WORLD_DIR/policies/capped.yaml" <<YAML
name: capped
egress:
  - domains: [keep.dt.example, www.dt.example]
    ports: [443]
  - cidrs: [198.51.100.7/32]
    ports: [8080]
limits: { connections: $LIMIT }
YAML
cat >"$WORLD_DIR/policies/plain.yaml" <<'YAML'
name: plain
egress:
  - domains: [pypi.org]
    ports: [443]
  - cidrs: [198.51.100.7/32]
    ports: [8080]
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create A (limit $LIMIT)" sb_create a capped
ok "sandbox create B (netd.yaml default)" sb_create b plain
A=$(sb_name a)
B=$(sb_name b)
A4=$(sb_field "$A" ipv4)
ok "A has an IPv4 address ($A4)" test -n "$A4"

eq "A jumps to its policy's chain" "pe-capped" "$(sb_jump "$(sb_field "$A" host_ifname)")"
has "A's policy chain: ct count over $LIMIT, per sandbox (by mark)" \
	"add @ce-capped-$LIMIT { ct mark & 0xfffc7fff ct count over $LIMIT }" \
	"$(world_exec host nft list chain inet netd pe-capped)"
has "B's policy chain: the default, ct count over 4096" "ct count over 4096 " \
	"$(world_exec host nft list chain inet netd pe-plain)"
ok "A has a mark" test -n "$(sb_mark "$A4")"
eq "A: keep.dt.example resolves (and is pinned)" "$BLACKHOLE" "$(sb_dig a +short keep.dt.example A)"
eq "A: under the limit, a connect works" "cidr-host ok" "$(sb_curl a http://198.51.100.7:8080/)"

# a_entries - A's conntrack entries to the blackhole in the host netns.
a_entries() {
	world_exec host cat /proc/net/nf_conntrack | grep -F " src=$A4 dst=$BLACKHOLE " | grep -c 'dport=443 '
}
eq "before the flood: no entries to the blackhole" "0" "$(a_entries)"

# ---- the flood --------------------------------------------------------------
sb_exec a "$BIN" client "$BLACKHOLE" 443 "$RATE" "$SECS" >"$WORLD_DIR/flood.out" 2>&1 &
flood=$!
world_pid_track "$flood"
max=0
samples=0
while kill -0 "$flood" 2>/dev/null; do
	n=$(a_entries)
	samples=$((samples + 1))
	[ "$n" -gt "$max" ] && max=$n
	sleep 0.2
done
wait "$flood"
read -r _ attempts _ okc _ failed _ <"$WORLD_DIR/flood.out"
echo "  flood: attempts $attempts ok $okc failed $failed; $samples samples, max entries $max"
ok "the flood made more attempts than the limit ($attempts > $LIMIT)" test "${attempts:-0}" -gt $((LIMIT * 3))
eq "the blackhole never answered" "0" "${okc:-x}"
n=$(a_entries)
ok "A's entries never exceeded its limit during the flood (max $max <= $LIMIT)" test "$max" -le "$LIMIT"
ok "A's entries after the flood: $n <= $LIMIT" test "$n" -le "$LIMIT"
# The limit was reached (not just never approached): most of it is held.
ok "A's entries reached the limit ($n >= $((LIMIT * 9 / 10)))" test "$n" -ge $((LIMIT * 9 / 10))

# ---- A at its limit: new connections dropped and recorded; DNS works ---------
fail "A at its limit: a new connect fails" sb_curl a --connect-timeout 2 http://198.51.100.7:8080/
rec=$(audit_wait 5 '"event":"deny"' "\"sandbox\":\"$A\"" '"reason":"conn-limit"' | head -1)
has "A: deny record with reason conn-limit" '"reason":"conn-limit"' "$rec"
has "A: the record names the blackhole or the CIDR host" '"dst":"198.51.100.' "$rec"
hasnt "B: no conn-limit record" "\"sandbox\":\"$B\"" \
	"$(audit_grep '"event":"deny"' '"reason":"conn-limit"')"
# (www.dt.example was never asked before: this answer comes from upstream.)
eq "A at its limit: DNS still answers" "198.51.100.40" "$(sb_dig a +short www.dt.example A)"

# ---- B is unaffected ---------------------------------------------------------
eq "B: DNS answers" "198.51.100.10" "$(sb_dig b +short pypi.org A)"
eq "B: HTTPS to pypi.org works" "pypi.org ok" "$(sb_curl b https://pypi.org/)"
eq "B: the CIDR host works" "cidr-host ok" "$(sb_curl b http://198.51.100.7:8080/)"
for ((i = 0; i < 20; i++)); do
	curl_out=$(sb_curl b https://pypi.org/ 2>&1) || break
done
eq "B: 20 more connects work" "20" "$i"

# ---- a reload changes the limit in the kernel ---------------------------------
sed -i "s/connections: $LIMIT/connections: 300/" "$WORLD_DIR/policies/capped.yaml"
ok "policy reload (limit $LIMIT -> 300)" netd policy reload
has "after the reload: A's policy chain has ct count over 300, in a new set" \
	"add @ce-capped-300 { ct mark & 0xfffc7fff ct count over 300 }" \
	"$(world_exec host nft list chain inet netd pe-capped)"
fail "... the set of the old limit is gone" world_exec host nft list set inet netd "ce-capped-$LIMIT"
has "after the reload: B's policy chain still has the default" "ct count over 4096 " \
	"$(world_exec host nft list chain inet netd pe-plain)"
ok "netd still answers" netd_alive
netd_down
t_summary
