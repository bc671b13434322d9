#!/usr/bin/env bash
# gw_quota.sh - limits.egress_bytes counts what a sandbox sends through the
# API gateway too (fw/gwsteer.c): a steered connection never reaches
# forward, where the quota rule is, so before this every byte uploaded
# through the gateway was free.  With real nginx behind the gateway and
# curl in the sandboxes:
#   finish: a 40K upload is counted by the sandbox's quota object; an upload
#           that crosses the quota completes; then a new connection to the
#           gateway is refused, with a deny record "quota";
#   cut:    the crossing upload is stopped, a new connection refused;
#   no limit: the same uploads pass, again and again;
#   a reload from finish to cut moves the sandbox into sb_gwq_cut, a restart
#   keeps the spent quota refusing, a delete removes its element.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_gw.sh

gw_world_up "ndgq$$"

PH=netd-placeholder-api-0000000001
mkdir -p "$WORLD_DIR/policies"
for m in finish cut none; do
	{
		printf 'name: gq-%s\negress:\n' "$m"
		printf '  - domains: [api.gw.dt.example]\n    ports: [443]\n'
		printf '    gateway: { credentials: [api] }\n'
		[ "$m" = none ] || printf 'limits: { egress_bytes: 100K, on_exceed: %s }\n' "$m"
	} >"$WORLD_DIR/policies/gq-$m.yaml"
done
NETD_POLICIES=$WORLD_DIR/policies
CONF="$(gw_gateway_yaml; gw_api_cred_yaml "$PH" "value: sk-quota-test-0123456789"
	echo "audit: { conn_update_interval: 0 }")"
netd_up "$CONF" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (finish)" sb_create q1 gq-finish
ok "sandbox create (cut)" sb_create q2 gq-cut
ok "sandbox create (no limit)" sb_create q3 gq-none
Q1=$(sb_name q1)
Q2=$(sb_name q2)
netd ca export --out "$WORLD_DIR/netd-ca.pem" >/dev/null
cat "$WORLD_CA" "$WORLD_DIR/netd-ca.pem" >"$WORLD_DIR/bundle.pem"
head -c 40000 /dev/urandom >"$WORLD_DIR/40k.bin"
head -c 300000 /dev/urandom >"$WORLD_DIR/300k.bin"
URL=https://api.gw.dt.example/v1/upload

# up SHORT FILE - POST FILE through the gateway to nginx, which reads it
# whole before answering "stored N" (lib_gw.sh); nothing if it failed.
up() {
	sb_exec "$1" env CURL_CA_BUNDLE="$WORLD_DIR/bundle.pem" curl -sS --connect-timeout 2 \
		--max-time 8 -H "Authorization: Bearer $PH" --data-binary "@$2" "$URL" 2>/dev/null
}
# cut_marks - how many marks sb_gwq_cut holds.
cut_marks() {
	world_exec host nft list set inet netd sb_gwq_cut | grep -o '0x[0-9a-f]*' | sort -u | wc -l
}
deny_quota() { audit_wait 5 '"event":"deny"' "\"sandbox\":\"$1\"" '"reason":"quota"' | head -1; }

eq "q1 resolves the gateway's name" 198.51.100.60 "$(sb_dig q1 +short api.gw.dt.example)"
eq "only the cut sandbox's mark is in sb_gwq_cut" 1 "$(cut_marks)"

# ---- finish ------------------------------------------------------------------
eq "finish: a 40K upload through the gateway" "stored 40000" "$(up q1 "$WORLD_DIR/40k.bin")"
# Each packet counted once (the first in prerouting_nat, the rest in input):
# the quota's bytes are conntrack's bytes out of that one connection, exactly
# (its conn record, written half a second after the last FIN).
out=$(audit_wait 5 '"event":"conn"' "\"sandbox\":\"$Q1\"" | jq -r '.bytes_out // empty' | head -1)
used=$(quota_used q1)
eq "finish: the quota's bytes are the connection's bytes out, exactly" "${out:-no conn record}" "$used"
ok "finish: the quota counted it ($used bytes: the body and TLS)" \
	test "${used:-0}" -ge 40000 -a "${used:-0}" -le 70000
eq "finish: an upload that crosses the quota completes" "stored 300000" "$(up q1 "$WORLD_DIR/300k.bin")"
eq "finish: over the quota, a new connection is refused" "" "$(up q1 "$WORLD_DIR/40k.bin")"
rec=$(deny_quota "$Q1")
has "finish: a deny record says quota" '"reason":"quota"' "$rec"
# (refused before the redirect: the destination asked for, not the gateway's port)
has "finish: ... and names the destination asked for" '"dst":"198.51.100.60","dport":443' "$rec"

# ---- cut ---------------------------------------------------------------------
eq "cut: a 40K upload through the gateway" "stored 40000" "$(up q2 "$WORLD_DIR/40k.bin")"
eq "cut: an upload that crosses the quota is stopped" "" "$(up q2 "$WORLD_DIR/300k.bin")"
eq "cut: then a new connection is refused" "" "$(up q2 "$WORLD_DIR/40k.bin")"
rec=$(deny_quota "$Q2")
has "cut: a deny record says quota" '"reason":"quota"' "$rec"
# (the crossing upload's later packets, dropped after the redirect: the
# record takes the destination from the connection's conntrack entry)
has "cut: ... and names the destination asked for" '"dst":"198.51.100.60","dport":443' "$rec"
hasnt "cut: no record names the gateway's port" '"dport":15443' \
	"$(audit_grep '"event":"deny"' "\"sandbox\":\"$Q2\"")"

# ---- no limit ------------------------------------------------------------------
for i in 1 2; do
	eq "no limit: a 300K upload ($i)" "stored 300000" "$(up q3 "$WORLD_DIR/300k.bin")"
done
fail "no limit: no quota object" world_exec host nft list quota inet netd "q-$(sb_name q3)"

# ---- reload, restart, delete ------------------------------------------------------
sed -i 's/on_exceed: finish/on_exceed: cut/' "$WORLD_DIR/policies/gq-finish.yaml"
ok "policy reload (q1's policy: finish -> cut)" netd policy reload
eq "reload: both sandboxes' marks in sb_gwq_cut" 2 "$(cut_marks)"
netd_down
netd_up "$CONF" || { echo "0 passed, 1 failed"; exit 1; }
eq "after a restart the spent quota still refuses" "" "$(up q1 "$WORLD_DIR/40k.bin")"
eq "... and sb_gwq_cut was refilled" 2 "$(cut_marks)"
ok "sandbox delete (q2)" netd sandbox delete "$Q2"
eq "delete: its element left sb_gwq_cut" 1 "$(cut_marks)"
netd_down
t_summary
