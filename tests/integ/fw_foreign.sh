#!/usr/bin/env bash
# Another table's forward-hook chain that drops what netd accepted: Docker's
# `iptables -P FORWARD DROP` (iptables-nft, in the world's host netns only),
# a plain nft table with a drop policy, ip6tables.  Names still resolve (the
# DNS proxy is local) but nothing connects; `netd status`, the metrics and
# `netd verify` must say so, with the fix (DOCKER-USER) in the message, and
# stop saying so once the fix is in.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndf$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create sb1" sb_create sb1 python-dev
SB1=$(sb_name sb1)
ipt() { world_exec host iptables "$@"; }
ip6t() { world_exec host ip6tables "$@"; }
nftx() { world_exec host nft "$@"; }
connects() { sb_curl sb1 -o /dev/null https://pypi.org/; }
metric() { curl -s --unix-socket "$NETD_SOCKET" http://netd/metrics | grep -E "^$1(\{|$| )" || true; }
blockers() { netd status | jq -c '[.forward_blockers[]? | {family, table, chain, verdict}]'; }

# ---- nothing in the way -----------------------------------------------------------
ok "no other table: pypi.org connects" connects
eq "netd status: ok" ok "$(netd status | jq -r .status)"
eq "netd status: no forward blockers" "[]" "$(blockers)"
eq "metric: netd_forward_blockers 0" "netd_forward_blockers 0" "$(metric netd_forward_blockers)"

# ---- Docker's FORWARD policy DROP (iptables-nft) ------------------------------------
ok "iptables -P FORWARD DROP (as dockerd does)" ipt -P FORWARD DROP
ok "the name still resolves" sb_dig sb1 +short pypi.org
fail "but nothing connects" connects
st=$(netd status)
eq "netd status: degraded" degraded "$(jq -r .status <<<"$st")"
eq "netd status: the blocker, exactly" '[{"family":"ip","table":"filter","chain":"FORWARD","verdict":"drops"}]' "$(blockers)"
has "the warning names the chain" "ip filter FORWARD" "$(jq -r '.warnings[]?' <<<"$st")"
has "the warning gives Docker's fix" "iptables -I DOCKER-USER -i nd+ -j ACCEPT" "$(jq -r '.warnings[]?' <<<"$st")"
has "netd status says it on stderr too" "netd: warning: forward chain ip filter FORWARD" "$(netd status 2>&1 >/dev/null)"
eq "metric: netd_forward_blockers 1" "netd_forward_blockers 1" "$(metric netd_forward_blockers)"
has "metric: the chain's series" 'netd_forward_blocker{family="ip",table="filter",chain="FORWARD",verdict="drops"} 1' \
	"$(metric netd_forward_blocker)"
rep=$(netd verify --all --json 2>/dev/null)
eq "netd verify: the forward-hook probe fails" fail \
	"$(jq -r --arg s "$SB1" '.results[] | select(.sandbox == $s and .probe == "foreign-forward") | .verdict' <<<"$rep")"
has "netd log: the blocker is logged once" "ip filter FORWARD" "$(grep -F 'forward' "$NETD_LOG" | grep -F 'drops')"

# ---- the fix: DOCKER-USER accepts netd's veths --------------------------------------
ok "iptables -N DOCKER-USER" ipt -N DOCKER-USER
ok "FORWARD jumps to DOCKER-USER first" ipt -I FORWARD -j DOCKER-USER
ok "DOCKER-USER: -i nd+ -j ACCEPT" ipt -I DOCKER-USER -i nd+ -j ACCEPT
eq "half the fix (replies still dropped): still a blocker" '[{"family":"ip","table":"filter","chain":"FORWARD","verdict":"drops"}]' "$(blockers)"
ok "DOCKER-USER: -o nd+ -j ACCEPT" ipt -I DOCKER-USER -o nd+ -j ACCEPT
ok "with the fix, pypi.org connects" connects
eq "netd status: ok again" ok "$(netd status | jq -r .status)"
eq "netd status: no blockers" "[]" "$(blockers)"
eq "metric: netd_forward_blockers 0 again" "netd_forward_blockers 0" "$(metric netd_forward_blockers)"
rep=$(netd verify --all --json 2>/dev/null)
eq "netd verify: the forward-hook probe passes" pass \
	"$(jq -r --arg s "$SB1" '.results[] | select(.sandbox == $s and .probe == "foreign-forward") | .verdict' <<<"$rep")"
ok "iptables flushed and back to ACCEPT" bash -c "ip netns exec $WORLD_PREFIX-host iptables -F && ip netns exec $WORLD_PREFIX-host iptables -X && ip netns exec $WORLD_PREFIX-host iptables -P FORWARD ACCEPT"
nftx delete table ip filter 2>/dev/null

# ---- a plain nft table: a drop policy the rules before it may or may not undo ---------
ok "nft: table inet other, forward chain, policy drop, ct state established accept" \
	nftx -f - <<-'NFT'
	table inet other {
		chain fchain {
			type filter hook forward priority 10; policy drop;
			ct state established,related accept
		}
	}
	NFT
fail "nothing connects" connects
eq "netd status: it may drop (netd cannot tell what ct state decides)" \
	'[{"family":"inet","table":"other","chain":"fchain","verdict":"may-drop"}]' "$(blockers)"
ok "nft: iifname \"nd*\" accept, oifname \"nd*\" accept" \
	bash -c "ip netns exec $WORLD_PREFIX-host nft insert rule inet other fchain iifname 'nd*' accept &&
		 ip netns exec $WORLD_PREFIX-host nft insert rule inet other fchain oifname 'nd*' accept"
ok "connects" connects
eq "netd status: no blockers" "[]" "$(blockers)"
ok "nft: a rule dropping netd's veths outright" nftx insert rule inet other fchain iifname "nd*" drop
eq "netd status: it drops" '[{"family":"inet","table":"other","chain":"fchain","verdict":"drops"}]' "$(blockers)"
nftx delete table inet other

# ---- IPv6: ip6tables -----------------------------------------------------------------
ok "ip6tables -P FORWARD DROP" ip6t -P FORWARD DROP
eq "netd status: the ip6 blocker" '[{"family":"ip6","table":"filter","chain":"FORWARD","verdict":"drops"}]' "$(blockers)"
has "its message says IPv6 and ip6tables" "ip6tables -I DOCKER-USER -i nd+ -j ACCEPT" "$(netd status | jq -r '.warnings[]?')"
ok "ip6tables -P FORWARD ACCEPT" ip6t -P FORWARD ACCEPT
nftx delete table ip6 filter 2>/dev/null
eq "netd status: ok at the end" ok "$(netd status | jq -r .status)"

netd_down
t_summary
