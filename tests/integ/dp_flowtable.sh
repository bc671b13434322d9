#!/usr/bin/env bash
# dp_flowtable - the flowtable fast path (dataplane.flowtable), on a kernel
# that has nftables flowtables: Debian's own cloud kernel, booted as the
# microVM test guest with a whole netd world inside it
# (tests/microvm/world.sh, tests/microvm/flowtable-guest.sh: netd, its
# sandboxes and the servers all run in the guest's namespaces; netd is the
# ASan+UBSan build).  There: one flowtable, its one device the egress
# interface; downloads (IPv4, IPv6), an upload's replies and UDP are
# offloaded ([OFFLOAD] in conntrack) and conn records count every byte
# that crossed; a spoofed copy of an offloaded flow from another sandbox
# does not ride it; a metered sandbox's quota counts every byte it sends
# and cuts; deleting a sandbox, and a reload that removes the name, cut an
# offloaded download while one still allowed runs on; a reload that gives a
# sandbox a quota does not cut it; a restart keeps the flowtable; the egress
# interface deleted and made again is put back by a reload; 1,100
# sandboxes leave the flowtable as it was.
#
# On this machine's kernel (it may have no flowtables): netd with
# dataplane.flowtable: auto says why it runs without, renders none, and
# with dataplane.flowtable: true refuses to start.  The guest has no NIC,
# so nothing of it reaches any network.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_microvm.sh
mv_need
[ "$(id -u)" = 0 ] || { echo "FAIL - needs root"; echo "0 passed, 1 failed"; exit 1; }
[ -r "$MV_DIR/world.cpio.gz" ] || { echo "FAIL - $MV_DIR/world.cpio.gz missing: run make microvm-world"; echo "0 passed, 1 failed"; exit 1; }

# ---- in the guest ------------------------------------------------------------
log=$(mktemp /tmp/dp_flowtable.XXXXXX)
ns=dpft-$$
cleanup() {
	set +e
	world_down 2>/dev/null
	ip netns delete "$ns" 2>/dev/null
	rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ip netns add "$ns"	# QEMU runs here: no NIC, but never in the machine's own netns
mv_boot "$ns" "$log" --tap none --script tests/microvm/flowtable-guest.sh \
	--extra "$MV_DIR/world.cpio.gz" --mem 1024 --timeout 600 || true
mv_results "$log" "guest (Debian $(cat "$MV_DIR/kernel-release"))"
ip netns delete "$ns"
rm -f "$log"

# ---- on this machine's kernel ----------------------------------------------------
world_up
trap cleanup EXIT	# world_up set its own (world_down): cleanup calls it, and more
netd_up
has_ft=$(world_exec host nft add table inet ftprobe-$$ 2>/dev/null &&
	world_exec host nft add flowtable inet ftprobe-$$ f '{ hook ingress priority 0; }' 2>/dev/null && echo yes || echo no)
world_exec host nft delete table inet ftprobe-$$ 2>/dev/null || true
if [ "$has_ft" = no ]; then
	has "auto, no flowtables here: netd says why it runs without" \
		"flowtable fast path: off, the kernel has no flowtables" "$(cat "$NETD_LOG")"
	has "status says so" '"flowtable": false' "$(netd status)"
	eq "... and why, in words (no netlink detail)" \
		"the kernel has no flowtables (CONFIG_NF_FLOW_TABLE_INET, CONFIG_NFT_FLOW_OFFLOAD): every packet takes the rules path" \
		"$(netd status | jq -r .dataplane.flowtable_off_because)"
	hasnt "no flowtable in the ruleset" "flowtable" "$(world_exec host nft list ruleset)"
	has "metrics: netd_flowtable_active 0" "netd_flowtable_active 0" \
		"$(world_exec host curl -sS --unix-socket "$NETD_SOCKET" http://netd/metrics)"
	sb_create s1 python-dev >/dev/null
	ok "a sandbox is made as before" sb_exec s1 true
	netd_down
	cp "$NETD_CONF" "$WORLD_DIR/ft-on.yaml"
	echo "dataplane: { flowtable: true }" >>"$WORLD_DIR/ft-on.yaml"
	rc=0
	out=$(world_exec host timeout 20 "$NETD_BIN" run --config "$WORLD_DIR/ft-on.yaml" 2>&1) || rc=$?
	[ "$rc" != 0 ] && t_pass "flowtable: true without kernel support: netd refuses to start (exit $rc)" ||
		t_fail "flowtable: true without kernel support: netd refuses to start"
	has "... and says what is missing" "dataplane.flowtable: true, but this kernel has no nftables flowtables" "$out"
else
	has "auto, the kernel has flowtables: netd uses them" "flowtable fast path: on" "$(cat "$NETD_LOG")"
	netd_down
fi
t_summary
