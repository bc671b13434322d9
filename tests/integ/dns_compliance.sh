#!/usr/bin/env bash
# The DNS proxy as a forwarder under the checks of ISC's DNS compliance
# tester (genreport) and RFC 8906 section 8, written here with dig against
# netd -> unbound -> knot (zone dt.example): plain, unknown type, header
# bits (zflag, ad, cd), unknown opcode, tcp, edns, edns1, ednsopt,
# edns1opt, ednsflags, edns@512, do, optlist, ednstcp; EDNS versions netd
# does not implement answered BADVERS before cache and policy; and the
# qtypes that are answered locally and never forwarded (docs/dns.md, Hardening).
# The expectations are a recursive server's (RFC 8906 8: RD echoed, AA=0).
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
  - domains: [dt.example, www.dt.example, cache.dt.example]
    ports: [443]
YAML
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1 (policy dc)" sb_create sb1 dc

Z=dt.example
d() { sb_dig sb1 +nocookie "$@"; }
status() { grep -o 'status: [A-Z]*' <<<"$1" | head -1; }
flags() { grep '^;; flags:' <<<"$1" | head -1; }
ednsline() { grep '^; EDNS:' <<<"$1" | head -1; }
ancount() { grep -o 'ANSWER: [0-9]*' <<<"$1" | head -1; }
has_soa() { grep -qE "^$1\.[[:space:]]+[0-9]+[[:space:]]+IN[[:space:]]+SOA" <<<"$2"; }

# check NAME OUT WANT_STATUS [soa|nosoa] [edns0|noedns]
check() {
	local n=$1 out=$2 st=$3 soa=${4:-} edns=${5:-}
	eq "$n: $st" "status: $st" "$(status "$out")"
	case $soa in
	soa) if has_soa "$Z" "$out"; then t_pass "$n: SOA in the answer"; else t_fail "$n: SOA in the answer" "$out"; fi ;;
	nosoa) eq "$n: empty answer section" "ANSWER: 0" "$(ancount "$out")" ;;
	esac
	case $edns in
	edns0) has "$n: OPT with EDNS version 0" "; EDNS: version: 0," "$out" ;;
	noedns) hasnt "$n: no OPT in the reply" "OPT PSEUDOSECTION" "$out" ;;
	esac
}

# ---- RFC 8906 8.1: plain DNS --------------------------------------------------------
out=$(d +noedns SOA $Z)
check "plain" "$out" NOERROR soa noedns
hasnt "plain: AA not set by a forwarder" " aa" "$(flags "$out")"
has "plain: RA set" " ra" "$(flags "$out")"
out=$(d +noedns TYPE666 www.$Z)
check "type666 (unknown type is forwarded)" "$out" NOERROR nosoa noedns
out=$(d +noedns +zflag SOA $Z)
check "zflag" "$out" NOERROR soa noedns
hasnt "zflag: Z (MBZ) not echoed" "MBZ" "$(flags "$out")"
out=$(d +noedns +adflag SOA $Z)
check "ad" "$out" NOERROR soa noedns
hasnt "ad: AD not set (nothing validated)" " ad" "$(flags "$out")"
out=$(d +noedns +cdflag SOA $Z)
check "cd" "$out" NOERROR soa noedns
out=$(d +noedns +opcode=15 +header-only $Z)
eq "opcode 15: NOTIMP" "status: NOTIMP" "$(status "$out")"
f=$(flags "$out")
for b in aa tc ra ad cd; do hasnt "opcode 15: no $b flag" " $b" "$f"; done
out=$(d +edns=0 +opcode=15 +header-only $Z)
eq "opcode 15 with EDNS: NOTIMP" "status: NOTIMP" "$(status "$out")"
has "opcode 15 with EDNS: OPT in the reply" "; EDNS: version: 0," "$out"
out=$(d +noedns +tcp SOA $Z)
check "tcp" "$out" NOERROR soa noedns

# ---- RFC 8906 8.2: EDNS ---------------------------------------------------------------
out=$(d +edns=0 SOA $Z)
check "edns" "$out" NOERROR soa edns0
out=$(d +edns=1 +noednsneg SOA $Z)
check "edns1" "$out" BADVERS nosoa edns0
out=$(d +edns=0 +ednsopt=100 SOA $Z)
check "ednsopt" "$out" NOERROR soa edns0
hasnt "ednsopt: option 100 not echoed" "OPT=100" "$out"
out=$(d +edns=1 +noednsneg +ednsopt=100 SOA $Z)
check "edns1opt" "$out" BADVERS nosoa edns0
hasnt "edns1opt: option 100 not echoed" "OPT=100" "$out"
out=$(d +edns=0 +ednsflags=0x80 SOA $Z)
check "ednsflags" "$out" NOERROR soa edns0
hasnt "ednsflags: undefined flag not echoed" "MBZ" "$(ednsline "$out")"
out=$(d +edns=0 +dnssec +bufsize=512 +ignore DNSKEY $Z)
eq "edns@512: NOERROR" "status: NOERROR" "$(status "$out")"
has "edns@512: OPT with EDNS version 0" "; EDNS: version: 0," "$out"
size=$(sed -n 's/^;; MSG SIZE  rcvd: \([0-9]*\)$/\1/p' <<<"$out")
if grep -q ' tc' <<<"$(flags "$out")" || { [ -n "$size" ] && [ "$size" -le 512 ]; }; then
	t_pass "edns@512: TC=1 or at most 512 bytes ($size)"
else
	t_fail "edns@512: TC=1 or at most 512 bytes" "$out"
fi
out=$(d +edns=0 +dnssec SOA $Z)
check "do" "$out" NOERROR soa edns0
has "do: DO echoed" "flags: do;" "$(ednsline "$out")"
out=$(sb_dig sb1 +edns=0 +nsid +subnet=0.0.0.0/0 +expire +cookie SOA $Z)
check "optlist" "$out" NOERROR soa edns0
out=$(d +edns=0 +tcp SOA $Z)
check "ednstcp" "$out" NOERROR soa edns0
out=$(d +edns=2 +noednsneg +tcp SOA $Z)
check "edns2 over tcp" "$out" BADVERS nosoa edns0

# BADVERS comes before the cache: an EDNS 0 answer cached for the name must
# not be handed to an EDNS 1 query (the issue's 7 failed genreport tests).
d +edns=0 A cache.$Z >/dev/null
d +edns=0 A cache.$Z >/dev/null
out=$(d +edns=1 +noednsneg A cache.$Z)
check "edns1 after a cached edns0 answer" "$out" BADVERS nosoa edns0
# ... and before the policy: a denied name gets BADVERS, not NXDOMAIN v0.
out=$(d +edns=1 +noednsneg A denied.example)
check "edns1 for a denied name" "$out" BADVERS nosoa edns0
out=$(d +edns=0 A denied.example)
check "edns0 for a denied name: the deny rcode, with OPT" "$out" NXDOMAIN nosoa edns0

# ---- qtypes answered locally (never forwarded) ------------------------------------------
# qtype EXPECTED-RCODE: meta-types and reserved values FORMERR, zone
# transfers REFUSED, obsolete mail qtypes NOTIMP.
# dig turns AXFR/IXFR into transfers over TCP: those go out by hand, over UDP.
GW=$(sb_field "$(sb_name sb1)" gateway4)
# rawq QTYPE EDNS(0|1) - one UDP query for www.dt.example; prints
# "rcode=N ra=N opt=N" (opt: an OPT RR in the reply's additional section).
rawq() {
	ip netns exec "$(sb_name sb1)" "$WORLD_PYTHON" - "$GW" "$1" "$2" <<'PY'
import socket, struct, sys
gw, qtype, edns = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 1 if edns else 0)
q += b"\x03www\x02dt\x07example\x00" + struct.pack("!HH", qtype, 1)
if edns:
    q += b"\x00" + struct.pack("!HHIH", 41, 1232, 0, 0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(4)
s.sendto(q, (gw, 53))
try:
    r = s.recv(65535)
except socket.timeout:
    print("noreply")
    sys.exit(0)
fl = struct.unpack("!H", r[2:4])[0]
print("rcode=%d ra=%d opt=%d" % (fl & 15, (fl >> 7) & 1, int(r[11] > 0 and r[-11:-8] == b"\x00\x00\x29")))
PY
}
# qtype(number):EXPECTED: meta-types and reserved values FORMERR, zone
# transfers REFUSED, obsolete mail qtypes NOTIMP (without RA, as for an
# unknown opcode: RFC 8906 8.1.4); RA=1 on the others (netd recurses).
for pair in 0:1:1 41:1:1 128:1:1 200:1:1 248:1:1 249:1:1 250:1:1 65535:1:1 \
	251:5:1 252:5:1 253:4:0 254:4:0 3:4:0 4:4:0; do
	IFS=: read -r t rc ra <<<"$pair"
	eq "qtype $t: rcode $rc" "rcode=$rc ra=$ra opt=0" "$(rawq "$t" 0)"
	eq "qtype $t with EDNS: rcode $rc and an OPT" "rcode=$rc ra=$ra opt=1" "$(rawq "$t" 1)"
done
for t in TYPE0 OPT TKEY MAILA; do
	eq "dig qtype $t: answered locally" "status: $([ $t = MAILA ] && echo NOTIMP || echo FORMERR)" \
		"$(status "$(d +edns=0 "$t" www.$Z)")"
done
out=$(d +tcp AXFR $Z)
hasnt "AXFR over TCP: no zone transferred" "198.51.100.40" "$out"
has "AXFR audited as refused" '"qtype":"TYPE252"' "$(audit_grep '"reason":"qtype-zone-transfer"')"
eq "ANY is forwarded (RFC 8482 is the upstream's business)" "status: NOERROR" \
	"$(status "$(d +noedns ANY www.$Z)")"

# What unbound saw: none of them (log-queries: yes logs every query it got).
sleep 0.5
got=$(grep -E "www\.dt\.example\. (TYPE0|OPT|TYPE128|TYPE200|TYPE248|TKEY|TSIG|TYPE65535|IXFR|AXFR|MAILB|MAILA|MD|MF) " \
	"$WORLD_DIR/unbound.log" || true)
eq "no meta/obsolete qtype reached the upstream" "" "$got"
has "... while a forwarded qtype did (the check can see queries)" "www.dt.example. TYPE666 IN" \
	"$(cat "$WORLD_DIR/unbound.log")"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
