#!/usr/bin/env bash
# ECH configs in HTTPS answers (issue 25, docs/dns.md "ECH"): knot serves
# HTTPS records carrying ech= (tests/world/zones/dt.example.zone); dig in
# the sandbox sees
#   - no ech under a rule that checks the SNI (tls.sni enforce or log, or
#     only http.host, which TLS falls back to), the rest of the record
#     as it was; an RR whose mandatory lists ech is gone, its RRset's
#     other RRs stay; AliasMode is passed as it is;
#   - the same under tls.ech: outer (it strips as strip does; what it
#     changes is the check's, tests/integ/sni_ech_browser.sh);
#   - the ech, byte for byte the upstream's answer, under a rule without
#     the check and under tls.ech: keep;
#   - a cache hit stripped for a checked sandbox, and the cache keeping
#     the upstream's answer for the next sandbox that may have the ech.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nde$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
names='[ech.dt.example, ech2.dt.example, echmand.dt.example, echalias.dt.example]'
policy() {
	printf 'name: %s\negress:\n  - domains: %s\n    ports: [443]\n' "$1" "$names"
	[ -n "${2:-}" ] && printf '    %s\n' "$2"
	return 0
}
policy ech-sni 'tls: { sni: enforce }' >"$NETD_POLICIES/ech-sni.yaml"
policy ech-log 'tls: { sni: log }' >"$NETD_POLICIES/ech-log.yaml"
policy ech-host 'http: { host: enforce }' >"$NETD_POLICIES/ech-host.yaml"
policy ech-keep 'tls: { sni: enforce, ech: keep }' >"$NETD_POLICIES/ech-keep.yaml"
policy ech-outer 'tls: { sni: enforce, ech: outer }' >"$NETD_POLICIES/ech-outer.yaml"
policy ech-none >"$NETD_POLICIES/ech-none.yaml"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
for sb in sni:ech-sni log:ech-log hh:ech-host keep:ech-keep outer:ech-outer none:ech-none; do
	ok "sandbox ${sb%%:*} (policy ${sb#*:})" sb_create "${sb%%:*}" "${sb#*:}"
done

stat() { netd status | tr -d ' \n' | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
# up NAME - the HTTPS RRset as the world's resolver gives it (sorted +short)
up() { world_exec host dig +time=4 +tries=2 @192.0.2.53 +short "$1" HTTPS | sort; }
# https SB NAME - the same through netd from sandbox SB
https() { sb_dig "$1" +short "$2" HTTPS | sort; }

want=$(up ech.dt.example)
has "the world serves an HTTPS record with ech=" "ech=AET+DQ" "$want"
s0=$(stat ech_stripped)

# ---- a rule without the check, or with ech: keep: the upstream's answer ----------------
eq "no check: the answer as the upstream gave it, ech included" "$want" "$(https none ech.dt.example)"
eq "tls.ech: keep: the ech passes" "$want" "$(https keep ech.dt.example)"

# ---- a rule that checks the SNI: no ech, the rest unchanged ------------------------------
# (ech.dt.example is in the cache now: these are cache hits, stripped per client)
h0=$(stat cache_hits)
out=$(https sni ech.dt.example)
hasnt "tls.sni enforce: no ech in the answer" "ech=" "$out"
eq "tls.sni enforce: the rest of the record unchanged" \
	"$(sed 's/ ech=[^ ]*//' <<<"$want")" "$out"
eq "that answer was a cache hit" "$((h0 + 1))" "$(stat cache_hits)"
hasnt "tls.sni log: no ech" "ech=" "$(https log ech.dt.example)"
hasnt "http.host only (TLS falls back to it): no ech" "ech=" "$(https hh ech.dt.example)"
out=$(https outer ech.dt.example)
hasnt "tls.ech: outer: no ech (stripped as under strip)" "ech=" "$out"
eq "tls.ech: outer: the rest of the record unchanged" \
	"$(sed 's/ ech=[^ ]*//' <<<"$want")" "$out"
eq "stripped answers are counted" "$((s0 + 4))" "$(stat ech_stripped)"
has "and exported" "netd_dns_ech_stripped_total $((s0 + 4))" \
	"$(world_exec host curl -sS --unix-socket "$NETD_SOCKET" http://netd/metrics)"

# ---- a fresh answer stripped; the cache keeps the upstream's for the next client -------------
want2=$(up ech2.dt.example)
out=$(https sni ech2.dt.example)
hasnt "a fresh answer (no cache entry yet) is stripped" "ech=" "$out"
has "and still carries its hint" "ipv4hint=198.51.100.41" "$out"
h0=$(stat cache_hits)
eq "the next sandbox without the check gets the ech from the cache" "$want2" "$(https none ech2.dt.example)"
eq "(a cache hit)" "$((h0 + 1))" "$(stat cache_hits)"
has "the stripped answer is NOERROR" "status: NOERROR" \
	"$(sb_dig sni +noall +comments ech2.dt.example HTTPS)"

# ---- mandatory=ech: that RR is dropped, the others stay -----------------------------------------
wantm=$(up echmand.dt.example)
has "the world serves mandatory=ech" "mandatory=ech" "$wantm"
out=$(https sni echmand.dt.example)
eq "an RR whose mandatory lists ech is dropped; the RRset keeps its other RR" \
	"$(grep -v mandatory=ech <<<"$wantm")" "$out"
eq "without the check both RRs pass" "$wantm" "$(https none echmand.dt.example)"

# ---- AliasMode: untouched -------------------------------------------------------------------------
eq "AliasMode passes as it is" "$(up echalias.dt.example)" "$(https sni echalias.dt.example)"

# ---- over TCP too -----------------------------------------------------------------------------------
hasnt "over TCP: no ech" "ech=" "$(sb_dig sni +tcp +short ech.dt.example HTTPS)"
has "over TCP without the check: the ech" "ech=" "$(sb_dig none +tcp +short ech.dt.example HTTPS)"

netd_down
t_summary
