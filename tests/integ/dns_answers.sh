#!/usr/bin/env bash
# The DNS proxy against crafted records served by a real authoritative
# server (knot, zone tests/world/zones/dt.example.zone, through unbound):
# HTTPS hints, DNAME, 0x20 case, IDN, EDNS0 and TC -> TCP, ANY, TTLs (the
# pin is never shortened; a rule's min_ttl), several rules for one name,
# pins per sandbox, rebinding forms, and the abuse limits.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndq$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/dt.yaml" <<'YAML'
name: dt
egress:
  - domains: [www.dt.example, svc.dt.example, svcreb.dt.example, www.dn.dt.example,
              xn--bcher-kva.dt.example, keep.dt.example, keep2.dt.example,
              ttl0.dt.example, "*.rb.dt.example", big.openai.com]
    ports: [443]
  - domains: [multi.dt.example]
    ports: [8443]
  - domains: [floor.dt.example]
    ports: [443]
    min_ttl: 900
  - domains: ["*.tun.dt.example"]
    ports: [443]
    max_qname_length: 40
YAML
cat >"$NETD_POLICIES/dt-narrow.yaml" <<'YAML'
name: dt-narrow
egress:
  - domains: [www.dt.example]
    ports: [80]
YAML
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
ok "sandbox sb1 (policy dt)" sb_create sb1 dt
ok "sandbox sb2 (policy dt-narrow)" sb_create sb2 dt-narrow

# pins SHORT 4|6 - its pins of that family, one per line.
pins() { sb_pins "$(sb_name "$1")" | if [ "$2" = 4 ]; then grep -v "^[^ ]*:"; else grep "^[^ ]*:"; fi; }
# elem SB FAMILY ADDR PORT - the set element line for ADDR . tcp . PORT
elem() { pins "$1" "$2" | tr ',' '\n' | grep -F "$3 . tcp . $4 " || true; }

# ---- HTTPS / SVCB hints: pinned under the same rule ------------------------------
out=$(sb_dig sb1 +short svc.dt.example HTTPS)
has "HTTPS answer delivered with its hints" "ipv4hint=198.51.100.41" "$out"
has "ipv4hint pinned" "198.51.100.41 . tcp . 443" "$(pins sb1 4)"
has "ipv6hint pinned" "2001:db8:40::41 . tcp . 443" "$(pins sb1 6)"
eq "connect to the hint address without an A lookup" "svc.dt.example ok" \
	"$(sb_curl sb1 -4 --resolve svc.dt.example:443:198.51.100.41 https://svc.dt.example/)"
fail "sb2 (other policy) cannot use the hint address" \
	sb_curl sb2 --resolve svc.dt.example:443:198.51.100.41 https://svc.dt.example/
sb_dig sb1 +short svcreb.dt.example HTTPS >/dev/null
p4=$(pins sb1 4)
has "a public hint next to an internal one is pinned" "198.51.100.42 . tcp . 443" "$p4"
hasnt "an RFC 1918 hint is never pinned" "10.0.0.1 " "$p4"
hasnt "an IPv4-mapped hint is never pinned" "::ffff:" "$(pins sb1 6)"
has "the internal hints are logged as rebinding" '"qname":"svcreb.dt.example"' "$(audit_grep '"rebind":2')"

# ---- DNAME ------------------------------------------------------------------------
out=$(sb_dig sb1 +short www.dn.dt.example A)
has "DNAME answer resolves" "198.51.100.43" "$out"
has "DNAME target's address pinned" "198.51.100.43 . tcp . 443" "$(pins sb1 4)"

# ---- names --------------------------------------------------------------------------
q=$(sb_dig sb1 +noall +question +answer WwW.Dt.ExAmPlE A)
has "0x20: the question's case is preserved in the reply" "WwW.Dt.ExAmPlE." "$q"
has "mixed case answered" "198.51.100.40" "$q"
eq "trailing dot" "198.51.100.40" "$(sb_dig sb1 +short www.dt.example. A)"
eq "IDN in A-label form matches the policy's A-label" "198.51.100.44" "$(sb_dig sb1 +short xn--bcher-kva.dt.example A)"
# dig converts a Unicode name only under a UTF-8 locale; a CI container's
# empty environment has none, so say which (C.UTF-8 is in libc).
eq "IDN typed as Unicode is sent as its A-label (dig +idnin)" "198.51.100.44" \
	"$(LC_ALL=C.UTF-8 sb_dig sb1 +short +idnin "bücher.dt.example" A 2>/dev/null)"
eq "raw UTF-8 bytes never match" "status: NXDOMAIN" \
	"$(sb_dig sb1 +noidnin "bücher.dt.example" A | grep -o 'status: [A-Z]*')"
eq "an escaped dot never matches a pattern" "status: NXDOMAIN" \
	"$(sb_dig sb1 'www\.dt.example' A | grep -o 'status: [A-Z]*')"
eq "a wildcard does not cover its own apex" "status: NXDOMAIN" \
	"$(sb_dig sb1 tun.dt.example A | grep -o 'status: [A-Z]*')"
eq "an exact name does not cover names below it" "status: NXDOMAIN" \
	"$(sb_dig sb1 x.www.dt.example A | grep -o 'status: [A-Z]*')"

# ---- EDNS0, TC=1 and the TCP retry ----------------------------------------------------
out=$(sb_dig sb1 +noedns +ignore big.openai.com A)
has "40 A records without EDNS: TC=1 over UDP" " tc" "$(grep flags: <<<"$out")"
eq "dig retries over TCP and gets all 40" "40" "$(sb_dig sb1 +noedns +short big.openai.com A | wc -l)"
out=$(sb_dig sb1 +bufsize=4096 big.openai.com A)
has "EDNS0 4096: all 40 over UDP, OPT passed back" "; EDNS: version: 0" "$out"
hasnt "EDNS0 4096: not truncated" " tc" "$(grep flags: <<<"$out")"
eq "all 40 pinned" "40" "$(pins sb1 4 | tr ',' '\n' | grep -c '198.51.100.1[0-3][0-9] . tcp . 443')"
eq "pipelined TCP queries on one connection" "2" \
	"$(sb_dig sb1 +tcp +keepopen +short www.dt.example A multi.dt.example A | grep -c 198.51.100.40)"

# ---- ANY -------------------------------------------------------------------------------
sb_dig sb1 www.dt.example ANY >/dev/null
eq "ANY pins no more than A would" "" "$(elem sb1 4 198.51.100.40 80)"

# ---- several rules, per sandbox ---------------------------------------------------------
sb_dig sb1 +short multi.dt.example A >/dev/null
has "a name under two rules: port 443 pinned" "198.51.100.40 . tcp . 443" "$(pins sb1 4)"
has "... and port 8443" "198.51.100.40 . tcp . 8443" "$(pins sb1 4)"
eq "sb2 resolves www.dt.example" "198.51.100.40" "$(sb_dig sb2 +short www.dt.example A)"
has "sb2's pin is on its own port 80" "198.51.100.40 . tcp . 80" "$(pins sb2 4)"
hasnt "sb2 has no 443 pin" "198.51.100.40 . tcp . 443" "$(pins sb2 4)"
fail "sb2 cannot reach 443 where sb1 can" sb_curl sb2 https://www.dt.example/
eq "sb1 reaches www.dt.example on 443" "www.dt.example ok" "$(sb_curl sb1 https://www.dt.example/)"

# ---- TTLs ---------------------------------------------------------------------------------
sb_dig sb1 +short keep.dt.example A >/dev/null
has "TTL 600 answer: pin timeout 10m" "timeout 600s" "$(elem sb1 4 198.51.100.46 443)"
sb_dig sb1 +short keep2.dt.example A >/dev/null
e=$(elem sb1 4 198.51.100.46 443)
has "a later TTL 10 answer for the same address does not shorten the pin" "timeout 600s" "$e"
hasnt "... (not set to 10s)" "timeout 10s" "$e"
sb_dig sb1 +short floor.dt.example A >/dev/null
has "a rule's min_ttl 900 raises a TTL 60 pin" "timeout 900s" "$(elem sb1 4 198.51.100.45 443)"
ttl=$(sb_dig sb1 +noall +answer floor.dt.example A | awk '{print $2}')
ok "... while the client still gets TTL <= 60 ($ttl)" test "$ttl" -le 60
eq "TTL 0 still connects (min clamp)" "ttl0.dt.example ok" "$(sb_curl sb1 https://ttl0.dt.example/)"
has "TTL 0 pinned for dns.min_ttl (5 s)" "timeout 5s" "$(elem sb1 4 198.51.100.47 443)"

# ---- rebinding forms -------------------------------------------------------------------------
for n in rb4 rb6a rb6b rb6c; do
	t=A; [ "$n" = rb4 ] || t=AAAA
	sb_dig sb1 +short "$n.rb.dt.example" "$t" >/dev/null
	has "rebinding $n.rb.dt.example logged" "\"qname\":\"$n.rb.dt.example\"" "$(audit_grep '"rebind":1')"
done
all=$(pins sb1 4; pins sb1 6)
for a in 10.1.2.3 "::ffff:" "64:ff9b::" "2002:a00:1::1"; do
	hasnt "rebinding address $a never pinned" "$a" "$all"
done

# ---- qname length cap, and an encoded label (the rest: dns_tunnel.sh) -------------------------
eq "a short name under the capped wildcard" "198.51.100.48" "$(sb_dig sb1 +short a.tun.dt.example A)"
long=k7f3q9z2x8w4v6b1n5m0c3l9j2h7g4f8d1s6a5p0
st=$(sb_dig sb1 "$long.tun.dt.example" A | grep -o 'status: [A-Z]*')
eq "longer than the rule's max_qname_length: denied" "status: NXDOMAIN" "$st"
has "audited as qname-too-long" '"reason":"qname-too-long"' "$(audit_grep "\"qname\":\"$long.tun.dt.example\"")"
enc=k7f3q9z2x8w4v6b1n5m0c3l9j2h7g4f8d.rb.dt.example
eq "a 33-character random label under a wildcard: refused as encoded" "status: REFUSED" \
	"$(sb_dig sb1 "$enc" A | grep -o 'status: [A-Z]*')"
has "audited as dns-encoded" '"reason":"dns-encoded"' "$(audit_grep "\"qname\":\"$enc\"")"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
