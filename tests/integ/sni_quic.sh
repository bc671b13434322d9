#!/usr/bin/env bash
# The SNI check for QUIC / HTTP/3 (docs/sni.md, issue 25) in the test world:
# example.com and denied.example share 203.0.113.66 (tests/world/zones),
# where Debian's ngtcp2 example server (gtlsserver, HTTP/3 over QUIC v1)
# listens on udp 443.  The policies allow example.com on tcp 443 with
# tls.sni and on udp 443 (the udp rule inherits the mode: it would have been
# refused at load before).  From the sandbox, ngtcp2's client (gtlsclient):
#   enforce: HTTP/3 to example.com works (the file arrives whole); SNI
#            denied.example on the same address is dropped (nothing
#            arrives) and audited (event sni, proto quic, action dropped);
#            a ClientHello split over two datagrams (quic_send) for it:
#            refused on the second, the flow's conntrack entry gets the
#            drop mark and the kernel drops the rest; a 1 MB
#            download adds only the handshake's packets to the queue;
#            a version the check cannot read (v2's draft number) is dropped
#            and audited (detail quic-version).
#   log:     denied.example passes and is audited (action logged).
#   ECH (quic_send with an encrypted_client_hello extension, as GREASE ECH):
#            under enforce dropped (status ech, "ech": true); under a tcp
#            rule's tls.ech: outer, which the udp rule inherits, example.com
#            passes (ech-outer, action passed) and denied.example is dropped
#            as a mismatch of its outer name.
#   netd down: the enforce queue fails closed.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

for bin in gtlsserver gtlsclient; do
	command -v "$bin" >/dev/null || { echo "$bin missing (make deps)"; echo "0 passed, 1 failed"; exit 1; }
done
world_up "ndqc$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies" "$WORLD_DIR/htdocs"
for mode in enforce log; do
	cat >"$WORLD_DIR/policies/quic-$mode.yaml" <<-YAML
	name: quic-$mode
	egress:
	  - domains: [example.com]
	    ports: [443]
	    tls: { sni: $mode }
	  - domains: [example.com]
	    ports: [443]
	    protocol: udp
	YAML
done
cat >"$WORLD_DIR/policies/quic-outer.yaml" <<-YAML
name: quic-outer
egress:
  - domains: [example.com]
    ports: [443]
    tls: { sni: enforce, ech: outer }
  - domains: [example.com]
    ports: [443]
    protocol: udp
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (enforce)" sb_create e1 quic-enforce
ok "sandbox create (log)" sb_create l1 quic-log
ok "sandbox create (enforce, tls.ech outer)" sb_create o1 quic-outer
eq "policy show: the udp rule inherited tls.ech outer" "outer" \
	"$(netd policy show quic-outer | jq -r '.egress[1].tls.ech')"
has "policy show: the udp rule inherited enforce" '"sni": "enforce"' \
	"$(netd policy show quic-enforce)"

A=203.0.113.66
echo "quic ok" >"$WORLD_DIR/htdocs/index.html"
head -c 1000000 /dev/zero | tr '\0' 'q' >"$WORLD_DIR/htdocs/big"
world_spawn inet "$WORLD_DIR/quic-server.log" gtlsserver -q -d "$WORLD_DIR/htdocs" \
	"$A" 443 "$WORLD_DIR/tls/$A.key" "$WORLD_DIR/tls/$A.pem"
world__wait "gtlsserver" "$WORLD_LAST_PID" "$WORLD_DIR/quic-server.log" \
	sh -c "ip netns exec $WORLD_INET_NS ss -Hlun | grep -q '$A:443'" ||
	fail "gtlsserver listens on $A:443"

# h3 SHORT NAME PATH [OPTS...] - one HTTP/3 GET from the sandbox's netns to
# https://NAME/PATH at $A:443; prints what arrived (the file, or nothing).
# gtlsclient sends the host it connects to as the SNI (an address: no
# SNI), so NAME is made to resolve to $A by a hosts file bound over
# /etc/hosts in the mount namespace `ip netns exec` makes for the command.
# (example.com was pinned through netd's DNS before.)
echo "$A example.com denied.example" >"$WORLD_DIR/hosts"
h3() {
	local sb=$1 name=$2 path=$3 dir
	shift 3
	dir=$(mktemp -d "$WORLD_DIR/dl.XXXXXX")
	timeout 15 ip netns exec "$(sb_name "$sb")" sh -c \
		'mount --bind "$0" /etc/hosts && exec "$@"' "$WORLD_DIR/hosts" \
		gtlsclient -q --timeout=4s --exit-on-all-streams-close --download="$dir" "$@" \
		"$name" 443 "https://$name$path" >/dev/null 2>&1
	cat "$dir"/* 2>/dev/null
}
# queued N - the last packet id queue N gave out (the id_sequence column).
queued() { world_exec host awk -v q="$1" '$1 == q { print $8 }' /proc/net/netfilter/nfnetlink_queue; }

for sb in e1 l1 o1; do
	eq "$sb: example.com pins $A" "$A" "$(sb_dig "$sb" +short example.com)"
done

# ---- enforce -----------------------------------------------------------------
eq "enforce: HTTP/3 with SNI example.com works" "quic ok" "$(h3 e1 example.com /index.html)"
eq "enforce: HTTP/3 with SNI denied.example is dropped" "" "$(h3 e1 denied.example /index.html)"
rec=$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"name":"denied.example"' \
	'"sandbox":"'"$(sb_name e1)"'"')
has "enforce: audited as sni-mismatch" '"reason":"sni-mismatch"' "$rec"
has "enforce: audited as dropped" '"action":"dropped"' "$rec"
has "enforce: audit names who pinned it" '"pinned_by":["example.com"]' "$rec"
drop_marks() {
	local m n=0
	for m in $(world_exec host conntrack -L -p udp --dport 443 2>/dev/null |
		grep -o 'mark=[0-9]*' | cut -d= -f2); do
		[ $((m & 0x38000)) = $((0x30000)) ] && n=$((n + 1))
	done
	echo "$n"
}
# A ClientHello split over two datagrams (quic_send): the first passes
# undecided, so conntrack keeps the flow; the second decides, and the
# refusal marks the entry: the retransmissions that follow are dropped by
# the kernel's rule, never queued again.
ok "enforce: a split ClientHello for denied.example is sent" \
	ip netns exec "$(sb_name e1)" build/asan/integ/quic_send "$A" 443 denied.example
has "enforce: ... refused on its second datagram, audited" '"action":"dropped"' \
	"$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"name":"denied.example"' '"status":"name"')"
ok "enforce: the refused flow's conntrack entry has the drop mark" test "$(drop_marks)" -gt 0
drops=$(world_exec host nft list chain inet netd pe-quic-enforce 2>/dev/null |
	sed -n 's/.*0x00030000 counter packets \([0-9]*\).*/\1/p')
ok "enforce: its retransmissions met the kernel's drop rule ($drops)" test "${drops:-0}" -gt 0
eq "enforce: a QUIC version the check cannot read is dropped" "" \
	"$(h3 e1 example.com /index.html -v v2draft)"
has "enforce: ... and audited" '"detail":"quic-version"' \
	"$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"detail":"quic-version"')"
before=$(queued 4100)
got=$(h3 e1 example.com /big | wc -c)
after=$(queued 4100)
eq "enforce: a 1 MB HTTP/3 download is whole" 1000000 "$got"
ok "enforce: only its first packets were queued ($before -> $after)" test $((after - before)) -lt 40
eq "enforce: after all that, example.com still works" "quic ok" "$(h3 e1 example.com /index.html)"

# ---- log -----------------------------------------------------------------------
eq "log: HTTP/3 with SNI denied.example passes" "quic ok" "$(h3 l1 denied.example /index.html)"
rec=$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"name":"denied.example"' \
	'"sandbox":"'"$(sb_name l1)"'"')
has "log: audited as logged" '"action":"logged"' "$rec"
eq "log: example.com works" "quic ok" "$(h3 l1 example.com /index.html)"
hasnt "log: nothing matching was audited" '"name":"example.com"' \
	"$(audit_grep '"event":"sni"' '"proto":"quic"')"

# ---- ECH (a hello with encrypted_client_hello, as GREASE ECH sends) ---------------
# quic_send ... ech: its ClientHello over two datagrams carries the ECH type.
qsend() { ip netns exec "$(sb_name "$1")" build/asan/integ/quic_send "$A" 443 "$2" ech; }
ok "enforce: a QUIC hello with ECH for example.com is sent" qsend e1 example.com
rec=$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"status":"ech"' \
	'"sandbox":"'"$(sb_name e1)"'"')
has "enforce: ... dropped" '"action":"dropped"' "$rec"
has "enforce: ... with the ECH mark" '"ech":true' "$rec"
ok "ech outer: a QUIC hello with ECH for example.com is sent" qsend o1 example.com
rec=$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"sandbox":"'"$(sb_name o1)"'"' \
	'"name":"example.com"')
has "ech outer: ... passes on its outer name" '"reason":"ech-outer"' "$rec"
has "ech outer: ... action passed" '"action":"passed"' "$rec"
has "ech outer: ... with the ECH mark" '"ech":true' "$rec"
ok "ech outer: a QUIC hello with ECH for denied.example is sent" qsend o1 denied.example
rec=$(audit_wait 10 '"event":"sni"' '"proto":"quic"' '"sandbox":"'"$(sb_name o1)"'"' \
	'"name":"denied.example"')
has "ech outer: denied.example is dropped" '"action":"dropped"' "$rec"
has "ech outer: ... as a mismatch of its outer name" '"reason":"sni-mismatch","action":"dropped","mode":"enforce","proto":"quic","status":"name"' "$rec"
has "ech outer: ... with the ECH mark" '"ech":true' "$rec"

# ---- netd down -------------------------------------------------------------------
netd_down
eq "netd down, enforce rule: HTTP/3 does not pass" "" "$(h3 e1 example.com /index.html)"
t_summary
