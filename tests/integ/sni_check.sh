#!/usr/bin/env bash
# The SNI/Host check (docs/sni.md, issue 18) in the test world.  example.com
# and denied.example share 203.0.113.66 (tests/world/zones); the policies
# allow example.com only.  After example.com pinned the address:
#   enforce: a TLS connection there with SNI denied.example is reset and
#            audited (reason sni-mismatch, the name seen); SNI example.com
#            passes, also with the ClientHello split over TCP segments;
#            no SNI, a plain-HTTP Host mismatch and garbage are reset; the
#            matching Host passes.
#   log:     the same mismatches pass and are audited (action "logged").
#   audit mode (sandbox create --mode audit, enforce policy): enforce acts as
#            log - the mismatch passes, audited "logged" with would_deny.
#   a reload that adds or removes only tls.sni turns the check on or off.
#   netd down: the enforce queue fails closed, the log queue passes.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndsn$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
for mode in enforce log; do
	cat >"$WORLD_DIR/policies/sni-$mode.yaml" <<-YAML
	name: sni-$mode
	egress:
	  - domains: [example.com]
	    ports: [443, 80]
	    tls: { sni: $mode }
	    http: { host: $mode }
	YAML
done
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (enforce)" sb_create e1 sni-enforce
ok "sandbox create (log)" sb_create l1 sni-log
ok "sandbox create (enforce policy, audit mode)" sb_create a1 sni-enforce --mode audit
hasnt "the queues are bound" "SNI check: cannot bind" "$(cat "$NETD_LOG")"

A=203.0.113.66
# conn SHORT PORT MODE [NAME] - one connection (sni_client.py) from the
# sandbox's netns (ip netns exec: works with netd down too).
conn() {
	timeout 20 ip netns exec "$(sb_name "$1")" "$WORLD_PYTHON" tests/integ/sni_client.py \
		"$A" "${@:2}"
}
# queued N - packets queue N has seen so far: its last packet id (id_sequence,
# the 8th column of /proc/net/netfilter/nfnetlink_queue; the 7th counts
# what userspace dropped).
queued() { world_exec host awk -v q="$1" '$1 == q { print $8 }' /proc/net/netfilter/nfnetlink_queue; }


for sb in e1 l1 a1; do
	eq "$sb: example.com pins $A" "$A" "$(sb_dig "$sb" +short example.com)"
done

# ---- enforce ---------------------------------------------------------------
has "enforce: SNI example.com passes" "ok HTTP/1.1 200" "$(conn e1 443 tls example.com)"
has "enforce: curl to https://example.com/ passes" "example.com ok" \
	"$(sb_curl e1 https://example.com/)"
eq "enforce: SNI denied.example is reset" "reset" "$(conn e1 443 tls denied.example)"
rec=$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"sandbox":"'"$(sb_name e1)"'"')
has "enforce: audited as sni-mismatch" '"reason":"sni-mismatch"' "$rec"
has "enforce: audited as reset" '"action":"reset"' "$rec"
has "enforce: audit names who pinned it" '"pinned_by":["example.com"]' "$rec"
out=$(sb_exec e1 curl -sS -k --connect-timeout 3 --max-time 10 \
	--resolve denied.example:443:$A https://denied.example/ 2>&1)
has "enforce: curl with SNI denied.example is reset" "reset" "$out"
has "enforce: split ClientHello with SNI example.com passes" "ok HTTP/1.1 200" \
	"$(conn e1 443 split example.com)"
eq "enforce: split ClientHello with SNI denied.example is reset" "reset" \
	"$(conn e1 443 split denied.example)"
eq "enforce: no SNI is reset" "reset" "$(conn e1 443 nosni)"
has "enforce: no SNI audited" '"status":"no-name"' \
	"$(audit_wait 10 '"event":"sni"' '"status":"no-name"' '"action":"reset"')"
has "enforce: HTTP Host example.com passes" "example.com ok" "$(conn e1 80 http example.com)"
eq "enforce: HTTP Host denied.example is reset" "reset" "$(conn e1 80 http denied.example)"
has "enforce: HTTP mismatch audited" '"proto":"http"' \
	"$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"proto":"http"' '"action":"reset"')"
eq "enforce: garbage is reset" "reset" "$(conn e1 443 garbage)"
has "enforce: garbage audited" '"status":"garbage"' \
	"$(audit_wait 10 '"event":"sni"' '"status":"garbage"' '"action":"reset"')"
has "enforce: after all that, example.com still passes" "ok HTTP/1.1 200" \
	"$(conn e1 443 tls example.com)"

# Each connection the check reset has a conn record that says so (netd marks
# its conntrack entry before the reset: ct_flow_sni_refused()); the ones that
# passed have none, and `netd audit --verdict deny` finds the reset ones.
e1=$(sb_name e1)
n_reset=$(audit_grep '"event":"sni"' '"sandbox":"'"$e1"'"' '"action":"reset"' | grep -c .)
for ((i = 0; i < 100; i++)); do
	n_deny=$(audit_grep '"event":"conn"' '"sandbox":"'"$e1"'"' '"verdict":"deny"' | grep -c .)
	[ "$n_deny" -ge "$n_reset" ] && break
	sleep 0.1
done
ok "enforce: six connections were reset ($n_reset sni records)" test "$n_reset" -ge 6
eq "enforce: each reset connection's conn record says deny" "$n_reset" "$n_deny"
eq "enforce: ... for the reason sni-check" "$n_deny" \
	"$(audit_grep '"event":"conn"' '"sandbox":"'"$e1"'"' '"verdict":"deny","reason":"sni-check"' | grep -c .)"
ok "enforce: the connections that passed have conn records without a verdict" \
	test "$(audit_grep '"event":"conn"' '"sandbox":"'"$e1"'"' | grep -vc '"verdict"')" -ge 4
eq "enforce: netd audit --event conn --verdict deny lists the reset ones" "$n_deny" \
	"$(netd audit --file "$NETD_AUDIT" --sandbox "$e1" --event conn --verdict deny --json | grep -c .)"

# Once the name matched, the connection stays in the kernel: a 2 MB download
# (hundreds of ACKs from the sandbox) adds only its first packets to the
# queue, and its conntrack entry carries the done bit (fw.h FW_SNI_DONE_CTMARK).
before=$(queued 4100)
got=$(sb_exec e1 curl -sS --cacert "$WORLD_CA" --max-time 20 https://example.com/bytes/2000000 | wc -c)
after=$(queued 4100)
eq "enforce: the download is whole" 2000000 "$got"
ok "enforce: the first packets were queued, and only those ($before -> $after)" \
	test $((after - before)) -gt 0 -a $((after - before)) -lt 20
# done_marks: conntrack entries to :443 whose mark has the done bit.
done_marks() {
	local m n=0
	for m in $(ip netns exec "$WORLD_HOST_NS" conntrack -L -p tcp --dport 443 2>/dev/null |
		grep -o 'mark=[0-9]*' | cut -d= -f2); do
		[ $((m & 0x8000)) != 0 ] && n=$((n + 1))
	done
	echo "$n"
}
ok "enforce: checked connections' conntrack marks have the done bit" test "$(done_marks)" -gt 0

# ---- log ---------------------------------------------------------------------
has "log: SNI denied.example passes" "ok HTTP/1.1 200" "$(conn l1 443 tls denied.example)"
rec=$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"sandbox":"'"$(sb_name l1)"'"')
has "log: audited as sni-mismatch" '"reason":"sni-mismatch"' "$rec"
has "log: audited as logged" '"action":"logged"' "$rec"
has "log: HTTP Host denied.example passes" "denied.example ok" "$(conn l1 80 http denied.example)"
has "log: garbage passes (the web server answers it)" "Error code: 400" "$(conn l1 80 garbage)"
hasnt "log: nothing matching was audited" '"name":"example.com"' "$(audit_grep '"event":"sni"')"

# ---- audit mode ----------------------------------------------------------------
has "audit mode: SNI denied.example passes under tls.sni enforce" "ok HTTP/1.1 200" \
	"$(conn a1 443 tls denied.example)"
rec=$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"sandbox":"'"$(sb_name a1)"'"')
has "audit mode: audited as logged" '"action":"logged"' "$rec"
has "audit mode: the rule's mode is enforce" '"mode":"enforce"' "$rec"
has "audit mode: marked would_deny sni-mismatch" '"would_deny":"sni-mismatch"' "$rec"
has "audit mode: SNI example.com passes" "ok HTTP/1.1 200" "$(conn a1 443 tls example.com)"

# ---- a reload that changes only tls/http ----------------------------------------
# (A new user found the reload ignored it: the change detection did not see
# tls/http, so the ruleset kept the old rules until a restart.)
cat >"$WORLD_DIR/policies/sni-later.yaml" <<-YAML
name: sni-later
egress:
  - domains: [example.com]
    ports: [443, 80]
YAML
ok "policy reload (sni-later, no check)" netd policy reload
ok "sandbox create (sni-later)" sb_create r1 sni-later
eq "r1: example.com pins $A" "$A" "$(sb_dig r1 +short example.com)"
has "no check yet: SNI denied.example passes" "ok HTTP/1.1 200" "$(conn r1 443 tls denied.example)"
cat >>"$WORLD_DIR/policies/sni-later.yaml" <<-YAML
    tls: { sni: enforce }
YAML
out=$(netd policy reload 2>&1)
hasnt "reload: the policy changed" "no sandbox changed" "$out"
has "policy show: the rule's tls.sni" '"sni": "enforce"' "$(netd policy show sni-later)"
eq "reload turned it on: SNI denied.example is reset" "reset" "$(conn r1 443 tls denied.example)"
has "... SNI example.com passes" "ok HTTP/1.1 200" "$(conn r1 443 tls example.com)"
sed -i '/tls: { sni: enforce }/d' "$WORLD_DIR/policies/sni-later.yaml"
ok "policy reload (check off again)" netd policy reload
has "reload turned it off: SNI denied.example passes" "ok HTTP/1.1 200" \
	"$(conn r1 443 tls denied.example)"

# ---- netd down -----------------------------------------------------------------
netd_down
has "netd down, log rule: the queue is bypassed" "ok HTTP/1.1 200" "$(conn l1 443 tls example.com)"
out=$(conn e1 443 tls example.com)
hasnt "netd down, enforce rule: nothing passes" "ok" "$out"
t_summary
