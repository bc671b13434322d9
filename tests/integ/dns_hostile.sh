#!/usr/bin/env bash
# The DNS proxy against a hostile upstream: netd's only upstream is
# tests/integ/dnsevil.py (192.0.2.55 in the world's inet netns), which
# answers names under ev.example with records no honest server sends.  An
# inconsistent or malformed answer is SERVFAIL and pins nothing: a DNAME
# whose "synthesized" CNAME is not the substitution (RFC 6672), two CNAMEs
# for one name (RFC 2181 10.1), SVCB/HTTPS SvcParams out of order or
# repeated (RFC 9460 2.2), a compression pointer into a TTL (capping the TTL
# would rewrite a name).  AliasMode hints are ignored (RFC 9460 2.4.2).  And
# what never reaches the upstream: the meta/obsolete qtypes and EDNS
# versions netd answers itself (the server logs every query it gets).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndh$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
EVIL=192.0.2.55
EVIL_LOG=$WORLD_DIR/dnsevil.queries
world_exec inet ip addr add "$EVIL/32" dev lo || { echo "0 passed, 1 failed"; exit 1; }
ip netns exec "$WORLD_PREFIX-inet" "$WORLD_PYTHON" tests/integ/dnsevil.py "$EVIL" 53 "$EVIL_LOG" \
	"$WORLD_DIR/dnsevil.ready" </dev/null >"$WORLD_DIR/dnsevil.out" 2>&1 &
world_pid_track $!
for ((i = 0; i < 100; i++)); do [ -e "$WORLD_DIR/dnsevil.ready" ] && break; sleep 0.1; done
ok "hostile upstream up" test -e "$WORLD_DIR/dnsevil.ready"

NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/ev.yaml" <<'YAML'
name: ev
egress:
  - domains: [ev.example, "*.ev.example"]
    ports: [443]
YAML
NETD_UPSTREAM=$EVIL netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1 (policy ev)" sb_create sb1 ev

# pins 4|6 - sb1's pins of that family, one per line.
pins() { sb_pins "$(sb_name sb1)" | if [ "$1" = 4 ]; then grep -v "^[^ ]*:"; else grep "^[^ ]*:"; fi; }
status() { grep -o 'status: [A-Z]*' <<<"$1" | head -1; }
d() { sb_dig sb1 +nocookie "$@"; }

# ---- the controls: consistent answers are delivered and pinned ----------------------
out=$(d www.dok.ev.example A)
eq "consistent DNAME + CNAME: NOERROR" "status: NOERROR" "$(status "$out")"
has "... its target's address pinned" "198.51.100.67 . tcp . 443" "$(pins 4)"
out=$(d svcok.ev.example HTTPS)
eq "well-formed HTTPS: NOERROR" "status: NOERROR" "$(status "$out")"
has "... its ipv4hint pinned" "198.51.100.69 . tcp . 443" "$(pins 4)"

# ---- inconsistent or malformed: SERVFAIL, nothing pinned -----------------------------------
eq "DNAME with a CNAME that is not its substitution: SERVFAIL" "status: SERVFAIL" \
	"$(status "$(d www.dn.ev.example A)")"
hasnt "... the CNAME's target is not pinned" "198.51.100.66 " "$(pins 4)"
eq "two CNAMEs for one owner: SERVFAIL" "status: SERVFAIL" "$(status "$(d twocname.ev.example A)")"
hasnt "... neither target pinned (a)" "198.51.100.73 " "$(pins 4)"
hasnt "... neither target pinned (b)" "198.51.100.74 " "$(pins 4)"
eq "HTTPS with SvcParamKeys out of order: SERVFAIL" "status: SERVFAIL" \
	"$(status "$(d svc.ev.example HTTPS)")"
hasnt "... its ipv4hint is not pinned" "198.51.100.68 " "$(pins 4)"
hasnt "... nor its ipv6hint" "2001:db8:40::68 " "$(pins 6)"
eq "HTTPS with a SvcParamKey twice: SERVFAIL" "status: SERVFAIL" \
	"$(status "$(d svcdup.ev.example HTTPS)")"
hasnt "... no hint pinned" "198.51.100.75 " "$(pins 4)"
out=$(d svcalias.ev.example HTTPS)
eq "AliasMode HTTPS with an ipv4hint: passed on" "status: NOERROR" "$(status "$out")"
hasnt "... the AliasMode hint is ignored, not pinned (RFC 9460 2.4.2)" "198.51.100.70 " "$(pins 4)"
eq "a compression pointer into a TTL: SERVFAIL" "status: SERVFAIL" \
	"$(status "$(d ttlptr.ev.example A)")"
hasnt "... its address is not pinned" "198.51.100.71 " "$(pins 4)"
has "the refusals are audited as bad answers" '"qname":"ttlptr.ev.example"' \
	"$(audit_grep '"reason":"bad-answer"')"

# ---- "signed": DO=1 and the upstream's RRSIG reach the client unchanged ---------------------
out=$(d +edns=0 +dnssec SOA ev.example)
eq "signed: NOERROR" "status: NOERROR" "$(status "$out")"
has "signed: the RRSIG is passed on" "RRSIG" "$(grep -v '^;' <<<"$out")"
has "signed: DO echoed" "flags: do;" "$(grep '^; EDNS:' <<<"$out")"

# ---- never forwarded ------------------------------------------------------------------
for t in TYPE0 OPT TKEY TSIG AXFR MAILB MAILA MD MF TYPE128 TYPE255; do
	d +notcp "$t" www.ev.example >/dev/null
done
d +edns=1 +noednsneg A www.ev.example >/dev/null
d +edns=0 A www.ev.example >/dev/null
sleep 0.3
got=$(awk '$1 == "www.ev.example" { print $2 }' "$EVIL_LOG" | sort -n | tr '\n' ' ')
eq "the upstream saw only ANY (255) and A (1, once: the EDNS 1 query never left)" "1 255 " "$got"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
