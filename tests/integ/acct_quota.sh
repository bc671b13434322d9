#!/usr/bin/env bash
# Egress byte quota (policy limits.egress_bytes), enforced by an nftables
# quota object per sandbox: uploads through websrv POST until the quota is
# spent; then new connections are refused with a deny record (reason
# "quota"); with on_exceed: finish a connection that crosses the quota
# completes, with on_exceed: cut it is stopped.  A sandbox without limits
# is unaffected.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndq$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
for m in finish cut; do
	cat >"$WORLD_DIR/policies/q-$m.yaml" <<-YAML
	name: q-$m
	egress:
	  - cidrs: [198.51.100.7/32]
	    ports: [8080]
	limits: { egress_bytes: 100K, on_exceed: $m }
	YAML
done
cat >"$WORLD_DIR/policies/q-none.yaml" <<'YAML'
name: q-none
egress:
  - cidrs: [198.51.100.7/32]
    ports: [8080]
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (finish)" sb_create sb1 q-finish
ok "sandbox create (cut)" sb_create sb2 q-cut
ok "sandbox create (no limit)" sb_create sb3 q-none
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)
head -c 40000 /dev/urandom >"$WORLD_DIR/40k.bin"
head -c 300000 /dev/urandom >"$WORLD_DIR/300k.bin"
URL=http://198.51.100.7:8080/upload

eq "quota object: the limit is 100K" "102400" "$(world_exec host nft -j list quota inet netd "q-$SB1" |
	python3 -c 'import json,sys
print([o["quota"]["bytes"] for o in json.load(sys.stdin)["nftables"] if "quota" in o][0])')"
fail "no quota object for a policy without limits" world_exec host nft list quota inet netd "q-$(sb_name sb3)"

# ---- finish: under, crossing, over ------------------------------------------
eq "finish: 40K upload under the quota" "40000" "$(sb_curl sb1 --data-binary "@$WORLD_DIR/40k.bin" "$URL")"
used=$(quota_used sb1)
ok "finish: quota counted the upload ($used bytes)" test "$used" -ge 40000 -a "$used" -le 60000
eq "finish: a 300K upload that crosses the quota completes" "300000" \
	"$(sb_curl sb1 --data-binary "@$WORLD_DIR/300k.bin" "$URL")"
fail "finish: over the quota, a new connection is refused" sb_curl sb1 --connect-timeout 1 "$URL"
rec=$(audit_wait 5 '"event":"deny"' "\"sandbox\":\"$SB1\"" '"reason":"quota"' | head -1)
has "finish: deny record with reason quota" '"dst":"198.51.100.7"' "$rec"
has "finish: deny record has the port" '"dport":8080' "$rec"

# ---- cut ---------------------------------------------------------------------
eq "cut: 40K upload under the quota" "40000" "$(sb_curl sb2 --data-binary "@$WORLD_DIR/40k.bin" "$URL")"
fail "cut: a 300K upload is stopped at the quota" \
	sb_curl sb2 --max-time 4 --data-binary "@$WORLD_DIR/300k.bin" "$URL"
fail "cut: a new connection is refused" sb_curl sb2 --connect-timeout 1 "$URL"
has "cut: deny record with reason quota" '"reason":"quota"' \
	"$(audit_wait 5 '"event":"deny"' "\"sandbox\":\"$SB2\"" '"reason":"quota"' | head -1)"

# ---- no limit: unaffected ------------------------------------------------------
eq "no limit: 300K upload" "300000" "$(sb_curl sb3 --data-binary "@$WORLD_DIR/300k.bin" "$URL")"
eq "no limit: 300K upload again" "300000" "$(sb_curl sb3 --data-binary "@$WORLD_DIR/300k.bin" "$URL")"

# ---- a reload that raises the limit keeps what was consumed ---------------------
used_before=$(quota_used sb1)
sed -i 's/egress_bytes: 100K/egress_bytes: 200K/' "$WORLD_DIR/policies/q-finish.yaml"
ok "policy reload (limit 100K -> 200K)" netd policy reload
eq "reload: the new limit is in the kernel" "204800" "$(world_exec host nft -j list quota inet netd "q-$SB1" |
	python3 -c 'import json,sys
print([o["quota"]["bytes"] for o in json.load(sys.stdin)["nftables"] if "quota" in o][0])')"
# (The kernel reports "used" capped at the limit, so over it used == limit.)
used_after=$(quota_used sb1)
ok "reload: consumed bytes kept ($used_before -> $used_after)" test "$used_after" -ge "$used_before"
fail "reload: still over the raised limit, new connections refused" sb_curl sb1 --connect-timeout 1 "$URL"

# ---- restart keeps the spent quota; delete removes the object -----------------
netd_down
netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
fail "after a netd restart the spent quota still refuses" sb_curl sb1 --connect-timeout 1 "$URL"
ok "sandbox delete" netd sandbox delete "$SB1"
fail "sandbox delete removes its quota object" world_exec host nft list quota inet netd "q-$SB1"
netd_down
t_summary
