#!/bin/bash
# fw_scale.sh - nf_tables transactions at size, through the fw driver
# (tests/golden/fw_golden.c) in a throwaway netns (ndfws-PID, nothing else):
# 1,000 sandboxes, then ONE reload batch for all of them (tens of thousands
# of messages) that adds a CIDR rule, one that removes it, and one the
# kernel rejects at its very end.  After each, the kernel must agree with
# what fw answered: applied means every sandbox has the new rule,
# rejected means none has, and the error names the message that failed.
# (Before the acks were reduced to one per batch, the first reload
# answered ENOBUFS although the kernel had applied it.)
# FW_DRV=path runs another build of the driver (e.g. one of an older fw).
# Needs root, ip, nft.  Ends with "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/asan/golden
DRV=${FW_DRV:-$OUT/fw_golden}
N=${FW_SCALE_N:-1000}
NS=ndfws-$$
TMP=$(mktemp -d)
pass=0
fail=0
cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok   - $*"; }
ko() { fail=$((fail + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && printf '      %s\n' "$2"; }
eq() { if [ "$2" = "$3" ]; then ok "$1"; else ko "$1" "want [$2] got [$3]"; fi; }

# The driver: the Makefile builds it (make asan); FW_DRV= runs another one.
[ -x "$DRV" ] || { echo "missing $DRV: run make asan first"; echo "0 passed, 1 failed"; exit 1; }
ip netns add "$NS" || { echo "0 passed, 1 failed"; exit 1; }

# The driver as a coprocess: one command in, one answer out.
coproc FW { ip netns exec "$NS" "$DRV"; }
fw() {
	echo "$*" >&"${FW[1]}"
	local line
	read -r -t 600 line <&"${FW[0]}" || line="(no answer)"
	echo "$line"
}
# The sandboxes share policy "many": its CIDR set pc-many-cidr4 is shared too.
listing() { ip netns exec "$NS" nft list set inet netd pc-many-cidr4; }
# jump_of I: the chain sandbox I's interface jumps to.
jump_of() {
	ip netns exec "$NS" nft list map inet netd sandbox_fwd |
		grep -oE "\"$(printf 'many%x' "$1")\" : jump [^ ,]+" | awk '{print $4}'
}
# with_rule CIDR: how many of sandboxes 0, N/2 and N-1 have CIDR in their
# CIDR set (the chain they jump to looks up pc-many-cidr4, and it holds CIDR).
with_rule() {
	local c=0 i set ch
	set=$(listing)
	for i in 0 $((N / 2)) $((N - 1)); do
		ch=$(jump_of "$i")
		grep -qF "$1" <<<"$set" && [ -n "$ch" ] &&
			ip netns exec "$NS" nft list chain inet netd "$ch" | grep -qF '@pc-many-cidr4' &&
			c=$((c + 1))
	done
	echo "$c"
}

eq "open" ok "$(fw open netd 5300 eth0 10.88.0.0/16 - 10.0.0.0/8)"
eq "$N sandboxes added" ok "$(fw addmany many "$N" tcp:192.0.2.0/24:443)"
eq "every interface jumps to the policy's one chain" "$N" \
	"$(ip netns exec "$NS" nft list map inet netd sandbox_fwd | grep -c ': jump pe-many')"
eq "no chain of a sandbox's own" 0 "$(ip netns exec "$NS" nft list table inet netd | grep -c '^\s*chain sb-')"

handles() { ip netns exec "$NS" nft -a list chain inet netd pe-many | grep -o 'handle [0-9]*' | tr '\n' ' '; }
h0=$(handles)
r=$(fw updatemany many "$N" tcp:192.0.2.0/24:443 tcp:203.0.113.0/24:8443)
eq "reload adding a CIDR rule to all $N sandboxes in one batch: applied" ok "$r"
eq "... and the kernel has it (first, middle, last sandbox)" 3 "$(with_rule 203.0.113.0/24)"
# Only the policy's shared CIDR set changed: the chains are not sent again.
eq "... the policy chain untouched (same rule handles)" "$h0" "$(handles)"

r=$(fw updatemany many "$N" tcp:192.0.2.0/24:443)
eq "reload removing it again: applied" ok "$r"
eq "... and the kernel no longer has it" 0 "$(with_rule 203.0.113.0/24)"

# A reload the kernel rejects at its end: the last sandbox's verdict map
# element is changed behind fw's back, so moving it clashes (EEXIST).
# (mode: audit moves every sandbox to the policy's audit chain, so every
# jump is sent again.)
last_if=$(printf 'many%x' $((N - 1)))
ip netns exec "$NS" nft add chain inet netd elsewhere
ip netns exec "$NS" nft delete element inet netd sandbox_fwd "{ \"$last_if\" }"
ip netns exec "$NS" nft add element inet netd sandbox_fwd "{ \"$last_if\" : jump elsewhere }"
fw opt audit=1 >/dev/null
r=$(fw updatemany many "$N" tcp:192.0.2.0/24:443 tcp:198.51.100.0/24:80)
case "$r" in
err\ -17*sandbox_fwd*) ok "reload the kernel rejects: EEXIST, naming the message ($r)" ;;
*) ko "reload the kernel rejects: EEXIST naming the message" "got: $r" ;;
esac
eq "... and nothing of it is in the kernel" 0 "$(with_rule 198.51.100.0/24)"
eq "... the policy chain as it was" "$h0" "$(handles)"
eq "... the first sandbox still jumps to it" "pe-many" "$(jump_of 0)"
# The element put back as fw had it: the same reload now moves every sandbox
# to the audit chain, and the last one out removes the enforce chain.
ip netns exec "$NS" nft delete element inet netd sandbox_fwd "{ \"$last_if\" }"
ip netns exec "$NS" nft add element inet netd sandbox_fwd "{ \"$last_if\" : jump pe-many }"
eq "reload moving all $N to mode audit: applied" ok \
	"$(fw updatemany many "$N" tcp:192.0.2.0/24:443 tcp:198.51.100.0/24:80)"
eq "... every interface jumps to the audit chain" "$N" \
	"$(ip netns exec "$NS" nft list map inet netd sandbox_fwd | grep -c ': jump pa-many')"
eq "... the enforce chain, left by all, is gone (only the audit chain is there)" "pa-many" \
	"$(ip netns exec "$NS" nft list table inet netd | sed -n 's/^\s*chain \(p[ea]-[^ ]*\) {/\1/p')"

exec {FW[1]}>&-
wait "$FW_PID" 2>/dev/null
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
