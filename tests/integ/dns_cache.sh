#!/usr/bin/env bash
# The proxy's answer cache (dnsproxy/cache.c) against a real authoritative
# server: a hit is served with aged TTLs, the client's ID and 0x20 case,
# and goes through the same decision and pin path as a fresh answer: every
# answer delivered, including one from the cache, is covered by a pin
# lasting at least the TTL handed out - for another sandbox, and for a
# sandbox whose pins are gone (deleted and re-created) while the entry
# lives; a denied name is never served from it; nothing past its TTL;
# dns.cache_size: 0 turns it off.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndc$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/dc.yaml" <<'YAML'
name: dc
egress:
  - domains: [cache.dt.example, cachepin.dt.example, short.dt.example, nx.dt.example]
    ports: [443]
YAML
cat >"$NETD_POLICIES/dc-none.yaml" <<'YAML'
name: dc-none
egress:
  - domains: [www.dt.example]
    ports: [443]
YAML
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox c1 (policy dc)" sb_create c1 dc
ok "sandbox c2 (policy dc)" sb_create c2 dc
ok "sandbox c3 (policy dc-none)" sb_create c3 dc-none

pins() { sb_pins "$(sb_name "$1")" 2>&1; }
# elem SB ADDR - the set element line for ADDR . tcp . 443
elem() { pins "$1" | tr ',{}' '\n\n\n' | grep -F "$2 . tcp . 443 " || true; }
stat() { netd status | tr -d ' \n' | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
# ttl_of SB NAME - the TTL of the first answer RR handed to SB
ttl_of() { sb_dig "$1" +noall +answer "$2" A | awk 'NR == 1 { print $2 }'; }

# ---- a miss fills the cache, a hit is served from it ------------------------------
h0=$(stat cache_hits)
eq "first answer (a miss)" "198.51.100.40" "$(sb_dig c1 +short cache.dt.example A)"
has "c1 pinned" "198.51.100.40 . tcp . 443" "$(elem c1 198.51.100.40)"
eq "the cache holds the answer" "1" "$([ "$(stat cache_entries)" -ge 1 ] && echo 1)"
sleep 2
q=$(sb_dig c1 +noall +question +answer +comments CaChE.dT.eXaMpLe A)
eq "a second query is a cache hit" "$((h0 + 1))" "$(stat cache_hits)"
has "0x20: the client's case comes back in the question" "CaChE.dT.eXaMpLe." "$q"
has "the hit carries the address" "198.51.100.40" "$q"
t=$(awk '/IN[[:space:]]+A[[:space:]]+198/ { print $2; exit }' <<<"$q")
ok "the hit's TTL is aged (30 -> $t)" test "${t:-99}" -le 28
ok "and never raised above the record's" test "${t:-99}" -ge 1

# ---- another sandbox: the hit pins for it, with the TTL it was handed -----------------
hasnt "c2 holds no pin yet" "198.51.100.40" "$(pins c2)"
t=$(ttl_of c2 cache.dt.example)
eq "c2's answer came from the cache" "$((h0 + 2))" "$(stat cache_hits)"
e=$(elem c2 198.51.100.40)
has "a cache hit pins for the asking sandbox" "198.51.100.40 . tcp . 443" "$e"
to=$(grep -o 'timeout [0-9]*s' <<<"$e" | grep -o '[0-9]*')
ok "c2's pin lasts at least the TTL handed out (pin ${to:-?}s >= TTL ${t:-?}s)" \
	test "${to:-0}" -ge "${t:-99}"
# (198.51.100.40 is the world's HTTPS server for www.dt.example.)
eq "c2 can connect to the cached answer's address" "www.dt.example ok" \
	"$(sb_curl c2 -4 --resolve www.dt.example:443:198.51.100.40 https://www.dt.example/ 2>&1 || true)"
fail "c3 (no pin) cannot" sb_curl c3 -4 --resolve www.dt.example:443:198.51.100.40 https://www.dt.example/

# ---- the pin is gone, the entry is not: the hit re-pins ------------------------------------
ok "delete c1 (its sets and pins go)" netd sandbox delete "$(sb_name c1)"
ok "re-create c1" sb_create c1 dc
hasnt "the new c1 holds no pin" "198.51.100.40" "$(pins c1)"
h=$(stat cache_hits)
t=$(ttl_of c1 cache.dt.example)
eq "served from the cache" "$((h + 1))" "$(stat cache_hits)"
e=$(elem c1 198.51.100.40)
has "the cached answer re-pinned after the pin was gone" "198.51.100.40 . tcp . 443" "$e"
to=$(grep -o 'timeout [0-9]*s' <<<"$e" | grep -o '[0-9]*')
ok "for at least the TTL handed out (pin ${to:-?}s >= TTL ${t:-?}s)" test "${to:-0}" -ge "${t:-99}"

# ---- a denied name is never served from the cache ---------------------------------------
h=$(stat cache_hits)
eq "c3's policy does not allow it: NXDOMAIN" "status: NXDOMAIN" \
	"$(sb_dig c3 cache.dt.example A | grep -o 'status: [A-Z]*')"
eq "no cache hit for a denied name" "$h" "$(stat cache_hits)"
hasnt "and no pin for c3" "198.51.100.40" "$(pins c3)"

# ---- never past the TTL ---------------------------------------------------------------
eq "short-TTL record" "198.51.100.50" "$(sb_dig c1 +short short.dt.example A)"
sleep 4
m=$(stat cache_misses)
t=$(ttl_of c1 short.dt.example)
eq "after its TTL the entry is not served (a miss)" "$((m + 1))" "$(stat cache_misses)"
ok "the fresh answer's TTL is the record's (${t:-?} <= 3)" test "${t:-99}" -le 3

# ---- negative answers (RFC 2308): cached too ------------------------------------------------
eq "NXDOMAIN for an allowed, nonexistent name" "status: NXDOMAIN" \
	"$(sb_dig c1 nx.dt.example A | grep -o 'status: [A-Z]*')"
h=$(stat cache_hits)
q=$(sb_dig c2 nx.dt.example A)
eq "NXDOMAIN again" "status: NXDOMAIN" "$(grep -o 'status: [A-Z]*' <<<"$q")"
eq "... from the cache" "$((h + 1))" "$(stat cache_hits)"
has "with the zone's SOA (negative TTL <= SOA minimum 60)" "SOA" "$q"

ok "netd still alive" netd_alive
netd_down

# ---- dns.cache_size: 0 turns the cache off ----------------------------------------------
NETD_DNS_EXTRA='  cache_size: 0'
netd_up || { echo "0 passed, 1 failed"; world_down; exit 1; }
sb_create c1 dc >/dev/null 2>&1 || true
sb_dig c1 +short cache.dt.example A >/dev/null
eq "cache off: a repeat query" "198.51.100.40" "$(sb_dig c1 +short cache.dt.example A)"
eq "cache off: no hits" "0" "$(stat cache_hits)"
eq "cache off: no entries" "0" "$(stat cache_entries)"
netd_down

# ---- a hit whose pin cannot be committed is SERVFAIL, never the answer ---------------------
NETD_DNS_EXTRA='  max_pins: 1'
netd_up || { echo "0 passed, 1 failed"; world_down; exit 1; }
sb_create c2 dc >/dev/null 2>&1 || true
ok "a fresh sandbox c4 (policy dc)" sb_create c4 dc
eq "c4 fills its one pin" "198.51.100.50" "$(sb_dig c4 +short short.dt.example A)"
# A name no earlier step asked: the world's resolver answers it with its
# whole TTL (300 s), so the entry is still fresh when c4 asks on a slow
# machine (cache.dt.example, 30 s and asked above, once was not).
eq "c2 caches cachepin.dt.example" "198.51.100.40" "$(sb_dig c2 +short cachepin.dt.example A)"
h=$(stat cache_hits)
q=$(sb_dig c4 cachepin.dt.example A)
eq "c4's hit cannot be pinned (pin limit): SERVFAIL" "status: SERVFAIL" "$(grep -o 'status: [A-Z]*' <<<"$q")"
hasnt "and no address is handed out" "198.51.100.40" "$(grep -v '^;' <<<"$q")"
eq "it was a cache hit" "$((h + 1))" "$(stat cache_hits)"
hasnt "c4 holds no pin for it" "198.51.100.40" "$(pins c4)"
netd_down
world_down
t_summary
