#!/usr/bin/env bash
# make demo - netd's main job on an embedded world, step by step:
# a sandbox under policies/python-dev.yaml, a real authoritative DNS server
# (knot) behind a real resolver (unbound) in a namespace that plays the
# internet, web servers on documentation addresses, real dig and curl.
# Everything lives in throwaway namespaces and is torn down at the end;
# DEMO_HOLD=1 keeps the world, netd and a sandbox up afterwards to try
# your own policies in (it says how), until Enter or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "make demo needs root (it creates network namespaces)" >&2
	exit 1
fi
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh

bold=$'\e[1m' green=$'\e[32m' red=$'\e[31m' off=$'\e[0m'
[ -t 1 ] || bold="" green="" red="" off=""
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$off"; }
show() { printf '%s$ %s%s\n' "$bold" "$*" "$off"; }
good() { printf '%s    [allowed] %s%s\n' "$green" "$*" "$off"; }
bad()  { printf '%s    [blocked] %s%s\n' "$red" "$*" "$off"; }
# hold_world - DEMO_HOLD=1: a sandbox again, how to use the world, and wait.
hold_world() {
	netd sandbox create "$SB" --policy python-dev >/dev/null || demo_fail "sandbox create $SB"
	step "The world stays up (DEMO_HOLD=1); in another terminal, as root:"
	cat <<-HOLD
	    export NETD_SOCKET=$NETD_SOCKET NETD_AUDIT_LOG=$NETD_AUDIT
	    $NETD_BIN sandbox list
	    $NETD_BIN exec $SB -- dig +short pypi.org
	    $NETD_BIN exec $SB -- curl --cacert $WORLD_CA https://pypi.org/simple/
	    $NETD_BIN audit -f    # follow the audit log
	  Your own policy: write it to $NETD_POLICIES/NAME.yaml, then
	    $NETD_BIN policy check $NETD_POLICIES/NAME.yaml && $NETD_BIN policy reload
	    $NETD_BIN sandbox create try1 --policy NAME
	  The names the world answers: tests/world/zones/ (pypi.org, *.openai.com, dt.example, ...).
	HOLD
	printf '%sPress Enter (or Ctrl-C) to tear it all down.%s\n' "$bold" "$off"
	trap 'echo' INT
	read -r _ || true
	trap - INT
	netd sandbox delete "$SB" >/dev/null 2>&1 || true
}
demo_fail() { echo "DEMO FAILED: $*" >&2; echo "--- netd log:" >&2; tail -n 30 "$NETD_LOG" >&2; exit 1; }

step "Building a private world (namespaces ${bold}nd$$-host${off}, ${bold}nd$$-inet${off}; nothing touches this machine's network)"
world_up "nd$$" >/dev/null
echo "    resolver: unbound on 192.0.2.53 -> knot (authoritative) on 192.0.2.54"
echo "    web: pypi.org 198.51.100.10, CDN 198.51.100.20-22 + 2001:db8:20::20, example.com 203.0.113.66"

HOLD=${DEMO_HOLD:-0}
if [ "$HOLD" = 1 ]; then
	# Your policies go into a copy, not into the source tree.
	NETD_POLICIES=$WORLD_DIR/policies
	mkdir -p "$NETD_POLICIES"
	cp policies/*.yaml "$NETD_POLICIES/"
fi
step "Starting netd in the host namespace"
netd_up >/dev/null
show "netd status | jq '{status, warnings, sandboxes, policies, dataplane, gateway}'   (the whole of it: every counter)"
netd status | jq '{status, warnings, sandboxes, policies, dataplane, gateway}' | sed 's/^/    /'
echo "    (flowtable false: an optional fast path this kernel lacks, the rules path is used;"
echo "     the gateway's worker idle: no policy here sends anything through the API gateway)"

SB=$(sb_name sb1)
step "Creating sandbox $SB under policy python-dev"
sed 's/^/    /' policies/python-dev.yaml
show "netd sandbox create $SB --policy python-dev"
netd sandbox create "$SB" --policy python-dev
show "netd sandbox list"; netd sandbox list | sed 's/^/    /'

step "An allowed name resolves (the answer is pinned before it is sent)"
show "netd exec $SB -- dig +short pypi.org"
out=$(sb_dig sb1 +short pypi.org) || demo_fail "dig pypi.org"
echo "$out" | sed 's/^/    /'; [ -n "$out" ] || demo_fail "pypi.org did not resolve"
good "pypi.org -> $out"
show "netd exec $SB -- dig +short files.pythonhosted.org   (a CNAME chain to a CDN)"
sb_dig sb1 +short files.pythonhosted.org | sed 's/^/    /'

step "... and curl fetches a page over HTTPS"
show "netd exec $SB -- curl --cacert $WORLD_CA https://pypi.org/simple/   (the world's test CA)"
out=$(sb_curl sb1 https://pypi.org/simple/) || demo_fail "curl https://pypi.org/simple/"
good "$out"
show "netd exec $SB -- curl -6 --cacert $WORLD_CA https://files.pythonhosted.org/"
out=$(sb_curl sb1 -6 https://files.pythonhosted.org/) || demo_fail "curl -6 files.pythonhosted.org"
good "over IPv6 too: $out"

step "A name outside the policy gets NXDOMAIN, and nothing is asked upstream"
show "netd exec $SB -- dig example.com"
out=$(sb_dig sb1 example.com | grep -E 'status:' || true)
echo "    $out"
grep -q NXDOMAIN <<<"$out" || demo_fail "example.com was not NXDOMAIN"
bad "example.com: NXDOMAIN"
if sb_curl sb1 https://example.com/ >/dev/null 2>&1; then demo_fail "curl example.com worked"; fi
bad "curl https://example.com/ fails: the name does not resolve"

step "A direct connection to an address no answer pinned is dropped"
show "netd exec $SB -- curl --resolve example.com:443:203.0.113.66 https://example.com/"
if sb_curl sb1 --resolve example.com:443:203.0.113.66 https://example.com/ >/dev/null 2>&1; then
	demo_fail "direct connection to 203.0.113.66 worked"
fi
bad "203.0.113.66:443 dropped (connect timeout)"
show "netd exec $SB -- curl http://pypi.org:80/   (pinned address, port not in the policy)"
if sb_curl sb1 http://pypi.org/ >/dev/null 2>&1; then demo_fail "pypi.org:80 worked"; fi
bad "pypi.org:80 dropped: the policy allows 443 only (deny reason port-not-allowed)"

step "Asking another resolver directly still lands on netd's proxy"
show "netd exec $SB -- dig @203.0.113.66 example.com"
out=$(sb_dig sb1 @203.0.113.66 example.com | grep -E 'status:' || true)
echo "    $out"
grep -q NXDOMAIN <<<"$out" || demo_fail "dig @203.0.113.66 was not answered by the proxy"
bad "the query was redirected to netd's proxy, which answered NXDOMAIN"
show "netd exec $SB -- dig @198.51.100.53 +short pypi.org   (an address no resolver listens on)"
out=$(sb_dig sb1 @198.51.100.53 +short pypi.org) || demo_fail "dig @198.51.100.53 pypi.org"
good "dig @198.51.100.53 pypi.org -> $out (no resolver there: netd answered)"

step "An allowed name that points inside (DNS rebinding) pins nothing"
show "netd exec $SB -- dig +short rebind.openai.com   (-> 169.254.169.254)"
sb_dig sb1 +short rebind.openai.com | sed 's/^/    /'
if sb_exec sb1 curl -s --connect-timeout 3 http://rebind.openai.com/ >/dev/null 2>&1; then
	demo_fail "169.254.169.254 was reachable through rebind.openai.com"
fi
bad "169.254.169.254 is never reachable through a name: netd hands the answer on but pins nothing
              (its dns record below: \"rebind\":1, \"answers\":[] - the answers it pinned)"

step "The audit trail (JSON Lines, $NETD_AUDIT)"
echo "    DNS decisions (the last six, and the denied example.com, in the order they happened):"
{
	grep -n '"event":"dns"' "$NETD_AUDIT" | grep -v '"qname":"example.com"' | tail -n 6
	grep -n '"event":"dns"' "$NETD_AUDIT" | grep '"qname":"example.com"' | head -n 1
} | sort -t: -k1,1n -u | cut -d: -f2- | sed 's/^/    /'
echo "    Dropped connections (deny records, from nftables via nflog):"
grep '"event":"deny"' "$NETD_AUDIT" | tail -n 3 | sed 's/^/    /'

step "Deleting the sandbox"
show "netd sandbox delete $SB"
netd sandbox delete "$SB"
if ip netns list | grep -qw "$SB"; then demo_fail "netns $SB still exists"; fi
echo "    netns, veth, its nftables elements, its pins, state: gone"

printf '\n%sDemo complete: the allowed path worked and every denied path was blocked.%s\n' "$bold" "$off"
[ "$HOLD" = 1 ] && hold_world
netd_down >/dev/null
world_down
