#!/usr/bin/env bash
# End to end: a sandbox created through the CLI, its DNS through netd's
# proxy, its egress through netd's nftables table, against a real resolver
# (unbound -> knot) and real web servers in a private world.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nde$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
SB2=$(sb_name sb2)

# ---- create ----------------------------------------------------------------
ok "sandbox create" sb_create sb1 python-dev
has "netns visible to ip netns" "$SB1" "$(ip netns list)"
has "resolv.conf names the proxy" "nameserver 10.87." "$(cat "/etc/netns/$SB1/resolv.conf" 2>&1)"
ruleset=$(world_exec host nft list table inet netd 2>&1)
has "its policy's chain in the table" "chain pe-python-dev" "$ruleset"
eq "its interface jumps to its policy's chain" "pe-python-dev" "$(sb_jump "$(sb_field "$SB1" host_ifname)")"
hasnt "no chain of its own" "chain sb-" "$ruleset"
list=$(netd sandbox list --json)
has "sandbox list --json shows it" "\"name\": \"$SB1\"" "$list"
SB1_IP=$(netd sandbox show "$SB1" | sed -n 's/.*"ipv4": "\(.*\)".*/\1/p')
SB1_GW=$(sb_field "$SB1" gateway4)
eq "sandbox address from the pool" "10.87." "${SB1_IP:0:6}"
# Both ends know each other permanently: a talking sandbox takes no learned
# neighbour entry (the machine's table is one, capped by gc_thresh3).
SB1_HOSTIF=$(sb_field "$SB1" host_ifname)
SB1_IP6=$(sb_field "$SB1" ipv6)
SB1_GW6=$(sb_field "$SB1" gateway6)
neigh_host=$(world_exec host ip neigh show dev "$SB1_HOSTIF" nud permanent)
has "host: the sandbox's IPv4 address is a permanent neighbour" "$SB1_IP lladdr" "$neigh_host"
has "host: ... and its IPv6 address" "$SB1_IP6 lladdr" "$neigh_host"
neigh_sb=$(ip netns exec "$SB1" ip neigh show dev eth0 nud permanent)
has "sandbox: its IPv4 gateway is a permanent neighbour" "$SB1_GW lladdr" "$neigh_sb"
has "sandbox: ... and its IPv6 gateway" "$SB1_GW6 lladdr" "$neigh_sb"
eq "the sandbox's neighbour entry has the MAC of its eth0" \
	"$(ip netns exec "$SB1" cat /sys/class/net/eth0/address)" \
	"$(awk -v a="$SB1_IP" '$1 == a {print $3}' <<<"$neigh_host")"
# The host end carries no IPv6 link-local (each one slowed every later create).
eq "host end: no IPv6 link-local address" "" \
	"$(world_exec host ip -6 -o addr show dev "$SB1_HOSTIF" scope link)"
has "host end: its IPv6 gateway address" "$SB1_GW6/" \
	"$(world_exec host ip -6 -o addr show dev "$SB1_HOSTIF" scope global)"
fail "a second sandbox of the same name is refused" sb_create sb1 python-dev
fail "an unknown policy is refused" sb_create sbx no-such-policy
out=$(sb_create sbx no-such-policy 2>&1)
eq "... in the CLI's words, no HTTP code" \
	'netd: unknown policy "no-such-policy": not among those loaded from policy_dir (netd policy list)' "$out"
fail "an invalid name is refused" netd sandbox create 'bad/name' --policy python-dev

# ---- allowed DNS and connections ---------------------------------------------
eq "pypi.org A over udp" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "pypi.org A over tcp" "198.51.100.10" "$(sb_dig sb1 +tcp +short pypi.org A)"
chain=$(sb_dig sb1 +short files.pythonhosted.org A)
has "CNAME chain resolved: the CDN name" "fastly.net." "$chain"
has "CNAME chain resolved: the addresses" "198.51.100.21" "$chain"
eq "AAAA at the end of the CNAME chain" "2001:db8:20::20" "$(sb_dig sb1 +short files.pythonhosted.org AAAA | grep -v '\.$')"
set_dump=$(world_exec host nft list table inet netd 2>&1)
has "pin for pypi.org in the kernel before the answer" "198.51.100.10" "$set_dump"
has "pins for every CDN address" "198.51.100.22" "$set_dump"
has "IPv6 pin" "2001:db8:20::20" "$set_dump"
eq "curl https://pypi.org/simple/" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
eq "curl over the CNAME chain" "files.pythonhosted.org ok" "$(sb_curl sb1 -4 https://files.pythonhosted.org/)"
eq "curl over IPv6 to an AAAA pin" "files.pythonhosted.org ok" "$(sb_curl sb1 -6 https://files.pythonhosted.org/)"
eq "wildcard rule: api.openai.com" "api.openai.com ok" "$(sb_curl sb1 https://api.openai.com/)"
eq "TTL 0 answer still connects (min_ttl clamp)" "ttl0.openai.com ok" "$(sb_curl sb1 https://ttl0.openai.com/ 2>&1 | head -1)"
eq "CIDR rule 198.51.100.7:8080 needs no DNS" "cidr-host ok" "$(sb_curl sb1 http://198.51.100.7:8080/)"

# ---- denied --------------------------------------------------------------------
st=$(sb_dig sb1 example.com | grep -o 'status: [A-Z]*')
eq "a name outside the policy: NXDOMAIN" "status: NXDOMAIN" "$st"
st=$(sb_dig sb1 openai.com | grep -o 'status: [A-Z]*')
eq "*.openai.com does not cover openai.com" "status: NXDOMAIN" "$st"
fail "curl to a denied name fails" sb_curl sb1 https://example.com/
fail "direct connection to an unpinned address is dropped" sb_curl sb1 --resolve example.com:443:203.0.113.66 https://example.com/
fail "pinned address on a port outside the policy is dropped" sb_curl sb1 http://pypi.org/
fail "CIDR host on a port outside the rule is dropped" sb_curl sb1 http://198.51.100.7/
fail "unpinned IPv6 address is dropped" sb_curl sb1 -g "http://[2001:db8:53::53]:53/"
hasnt "nothing pinned for the denied name" "203.0.113.66" "$(world_exec host nft list table inet netd)"

# ---- DNS to any address lands on the proxy ---------------------------------------
st=$(sb_dig sb1 @198.51.100.53 example.com | grep -o 'status: [A-Z]*')
eq "dig @another address is answered by the proxy (denied name)" "status: NXDOMAIN" "$st"
eq "dig @another address, allowed name" "198.51.100.10" "$(sb_dig sb1 @198.51.100.53 +short pypi.org)"
eq "dig +tcp @another address" "198.51.100.10" "$(sb_dig sb1 +tcp @203.0.113.66 +short pypi.org)"
eq "dig @the real resolver still goes through the proxy" "status: NXDOMAIN" "$(sb_dig sb1 @192.0.2.53 example.com | grep -o 'status: [A-Z]*')"

# ---- rebinding ------------------------------------------------------------------
sb_dig sb1 +short rebind.openai.com >/dev/null
sb_dig sb1 +short loop.openai.com >/dev/null
dump=$(world_exec host nft list table inet netd)
hasnt "169.254.169.254 never pinned through a name" "169.254.169.254" "$dump"
hasnt "127.0.0.1 never pinned through a name" "127.0.0.1 " "$dump"
has "rebinding attempt is in the audit log" '"qname":"rebind.openai.com"' "$(audit_grep '"rebind":1')"

# ---- the host and other sandboxes ---------------------------------------------------
world__start host hostweb "$WORLD_PYTHON" -m http.server --bind 0.0.0.0 8081
sleep 0.5
fail "the host's other ports are unreachable from a sandbox (gateway)" sb_exec sb1 curl -sS --connect-timeout 2 "http://$SB1_GW:8081/"
fail "the host's uplink address is unreachable from a sandbox" sb_exec sb1 curl -sS --connect-timeout 2 "http://192.0.2.1:8081/"
ok "the proxy port itself is reachable" sb_exec sb1 dig +time=2 +tries=1 -p 5300 "@$SB1_GW" pypi.org
chain_handles() { world_exec host nft -a list chain inet netd pe-python-dev | grep -o 'handle [0-9]*' | tr '\n' ' '; }
h_before=$(chain_handles)
ok "second sandbox" sb_create sb2 python-dev
# Another sandbox of the policy adds elements only: its chain is not sent again.
eq "the policy's chain untouched by the second create (same rule handles)" "$h_before" "$(chain_handles)"
eq "both jump to it" "pe-python-dev pe-python-dev" \
	"$(sb_jump "$SB1_HOSTIF") $(sb_jump "$(sb_field "$SB2" host_ifname)")"
SB2_IP=$(netd sandbox show "$SB2" | sed -n 's/.*"ipv4": "\(.*\)".*/\1/p')
ip netns exec "$SB2" "$WORLD_PYTHON" -m http.server --bind 0.0.0.0 8080 >/dev/null 2>&1 &
world_pid_track $!
# Up when it answers (python's start-up takes its time on a loaded host).
for ((i = 0; i < 100; i++)); do
	ip netns exec "$SB2" curl -sS --max-time 1 -o /dev/null http://127.0.0.1:8080/ 2>/dev/null && break
	sleep 0.1
done
ok "sb2's server is up (from inside sb2)" ip netns exec "$SB2" curl -sS --max-time 3 http://127.0.0.1:8080/
fail "sandboxes cannot reach each other" sb_exec sb1 curl -sS --connect-timeout 2 "http://$SB2_IP:8080/"
eq "pins are per sandbox: sb2 did not resolve pypi.org, so it cannot reach it" "fail" \
	"$(sb_exec sb2 curl -sS --cacert "$WORLD_CA" --connect-timeout 2 --resolve pypi.org:443:198.51.100.10 https://pypi.org/ >/dev/null 2>&1 && echo ok || echo fail)"

# ---- spoofing ---------------------------------------------------------------------
ip -n "$SB1" addr add 10.87.250.2/32 dev eth0
fail "a spoofed source address is dropped" sb_exec sb1 curl -sS --connect-timeout 2 --interface 10.87.250.2 http://198.51.100.7:8080/
fail "a DNS query from a spoofed source gets no answer" sb_exec sb1 dig +time=2 +tries=1 -b 10.87.250.2 "@$SB1_GW" pypi.org
ip -n "$SB1" addr del 10.87.250.2/32 dev eth0

# ---- the audit log ------------------------------------------------------------------
line=$(audit_grep '"event":"dns"' '"qname":"pypi.org"' '"verdict":"allow"' | head -1)
for f in '"ts":"' "\"sandbox\":\"$SB1\"" '"policy":"python-dev"' '"qtype":"A"' '"answers":["198.51.100.10"]' '"ttl":'; do
	has "audit dns allow record has $f" "$f" "$line"
done
has "audit records the denied query" '"verdict":"deny"' "$(audit_grep '"qname":"example.com"')"
if [ -n "$(audit_grep '"qname":"example.com"' '"verdict":"allow"')" ]; then t_fail "denied name never allowed"; else t_pass "denied name never allowed"; fi

# ---- attach an existing netns (--netns) and a process's netns (--pid) ------------------
EXT=$(sb_name ext)
ip netns add "$EXT"
ok "attach an existing netns with --netns" netd sandbox create "$EXT" --policy openai-only --netns "/run/netns/$EXT"
eq "attached sandbox: allowed name" "198.51.100.30" "$(ip netns exec "$EXT" dig +time=2 +tries=1 @198.51.100.53 +short api.openai.com)"
eq "attached sandbox: its policy, not python-dev" "status: NXDOMAIN" "$(ip netns exec "$EXT" dig +time=2 +tries=1 @198.51.100.53 pypi.org | grep -o 'status: [A-Z]*')"
has "attached sandbox: netd exec sees the proxy in resolv.conf" "nameserver 10.87." "$(sb_exec ext cat /etc/resolv.conf)"
ok "delete attached sandbox" netd sandbox delete "$EXT"
has "an attached netns is left to its owner" "$EXT" "$(ip netns list)"
eq "its interface is gone" "eth0 gone" "$(ip -n "$EXT" link show eth0 >/dev/null 2>&1 && echo present || echo 'eth0 gone')"
ip netns delete "$EXT"

unshare --net sleep 300 &
SLEEPER=$!
world_pid_track "$SLEEPER"
sleep 0.2
PIDSB=$(sb_name pid)
ok "attach a process's netns with --pid" netd sandbox create "$PIDSB" --policy deny-all --pid "$SLEEPER"
eq "deny-all: every name refused" "status: NXDOMAIN" "$(nsenter -t "$SLEEPER" -n dig +time=2 +tries=1 @198.51.100.53 pypi.org | grep -o 'status: [A-Z]*')"
fail "deny-all: no CIDR either" nsenter -t "$SLEEPER" -n curl -sS --connect-timeout 2 http://198.51.100.7:8080/
ok "delete the --pid sandbox" netd sandbox delete "$PIDSB"
kill "$SLEEPER"
out=$(netd sandbox create "$(sb_name own)" --policy deny-all --pid "$NETD_PID" 2>&1)
has "attaching netd's own netns is refused" "netd's own network namespace" "$out"
hasnt "nothing was created for it" "$(sb_name own)" "$(netd sandbox list --json)"
fail "--netns and --pid together are refused" netd sandbox create "$(sb_name both)" --policy deny-all --netns /run/netns/x --pid 1

# ---- delete -------------------------------------------------------------------
ok "sandbox delete" netd sandbox delete "$SB1"
hasnt "netns gone" "$SB1 " "$(ip netns list) "
eq "its jump is gone" "" "$(sb_jump "$SB1_HOSTIF")"
eq "its mark element is gone" "" "$(sb_mark "$SB1_IP")"
ok "resolv.conf dir gone" test ! -e "/etc/netns/$SB1"
ok "state file gone" test ! -e "$WORLD_DIR/state/sandboxes/$SB1.json"
hasnt "sandbox gone from the list" "\"$SB1\"" "$(netd sandbox list --json)"
fail "deleting again: not found" netd sandbox delete "$SB1"
ok "delete sb2" netd sandbox delete "$SB2"
eq "no sandbox interface left in the host netns" "" "$(world_exec host ip -o link | grep -oE '^[0-9]+: nd[0-9a-f]{5}[@:]' || true)"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
