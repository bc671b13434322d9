#!/usr/bin/env bash
# world_selftest - the test world (tests/world.sh) does what the other
# integration tests assume, seen from the host netns where netd will run:
# DNS through the resolver (CNAME chain, AAAA, TTL 0, truncation, NXDOMAIN),
# HTTPS/HTTP to every web address with the world's CA, exact byte counts;
# then world_down leaves no namespace, process, file or link behind.
# Needs root.  Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1"; }
# check DESC CMD... - CMD's status decides.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else nok "$desc"; fi
}
# eq DESC WANT GOT
eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else nok "$1: want '$2', got '$3'"; fi
}

H() { world_exec host "$@"; }
# dig from the host netns through the world's resolver; extra args pass on.
q() { H dig @192.0.2.53 +time=2 +tries=1 "$@"; }
# rdata NAME QTYPE [RRTYPE] - sorted data of the answer's RRTYPE (default
# QTYPE) records for a QTYPE query
rdata() { q "$1" "$2" +noall +answer | awk -v t="${3:-$2}" '$4 == t {print $5}' | sort | paste -sd' '; }
# nrr NAME QTYPE DIG-ARGS... - how many QTYPE records the answer holds
nrr() { local n=$1 t=$2; shift 2; q "$n" "$t" "$@" +noall +answer | awk -v t="$t" '$4 == t' | wc -l; }
ttl_of() { q "$1" "$2" +noall +answer | awk -v t="$2" '$4 == t {print $2; exit}'; }
get() { H curl -sS --max-time 10 --cacert "$WORLD_CA" "$@"; }

root_links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)
root_fwd_before=$(cat /proc/sys/net/ipv4/ip_forward)
root_nft_before=$(nft list tables 2>/dev/null || true)

prefix=ndtest-ws$$
world_up "$prefix"
dir=$WORLD_DIR

# world_spawn tracks the command's own PID, in the host netns.
world_spawn host "$dir/sleep.log" sleep 300
for ((i = 0; i < 50; i++)); do	# until nsenter has exec'd sleep
	[ "$(cat "/proc/$WORLD_LAST_PID/comm")" = sleep ] && break
	sleep 0.1
done
eq "world_spawn: WORLD_LAST_PID is the command" sleep "$(cat "/proc/$WORLD_LAST_PID/comm")"
eq "world_spawn: runs in the host netns" "$(stat -L -c %i "$WORLD_HOST_NETNS")" \
	"$(stat -L -c %i "/proc/$WORLD_LAST_PID/ns/net")"
# An untracked process inside the world is still killed by world_down.
world_exec inet sleep 301 &
untracked=$!
pids=("${WORLD_PIDS[@]}" "$untracked")

# ---- the world's shape ----
eq "host netns: default route via inet" "default via 192.0.2.254 dev eth0" \
	"$(H ip -4 route show default | sed 's/ *$//')"
eq "inet netns: no default route (IPv4)" "" "$(world_exec inet ip -4 route show default)"
eq "inet netns: no default route (IPv6)" "" "$(world_exec inet ip -6 route show default)"
eq "forwarding on in the host netns" 1 "$(H cat /proc/sys/net/ipv4/ip_forward)"
eq "root netns forwarding untouched" "$root_fwd_before" "$(cat /proc/sys/net/ipv4/ip_forward)"
eq "no veth in the root netns" "$root_links_before" "$(ip -o link show | awk -F': ' '{print $2}' | sort)"
check "WORLD_CA readable" test -r "$WORLD_CA"

# ---- DNS through unbound ----
eq "pypi.org A" 198.51.100.10 "$(rdata pypi.org A)"
ttl=$(ttl_of pypi.org A)
check "pypi.org TTL in 1..300 (got $ttl)" test "$ttl" -ge 1 -a "$ttl" -le 300
eq "files.pythonhosted.org CNAME chain" \
	"dualstack.python.map.fastly.net. dualstack.r.ssl.global.fastly.net." \
	"$(rdata files.pythonhosted.org A CNAME)"
eq "files.pythonhosted.org A via 2 CNAMEs" "198.51.100.20 198.51.100.21 198.51.100.22" \
	"$(rdata files.pythonhosted.org A)"
eq "files.pythonhosted.org AAAA" 2001:db8:20::20 "$(rdata files.pythonhosted.org AAAA)"
ttl=$(ttl_of files.pythonhosted.org A)
check "CDN A TTL in 1..60 (got $ttl)" test "$ttl" -ge 1 -a "$ttl" -le 60
eq "AAAA over IPv6 transport" 2001:db8:20::20 \
	"$(H dig @2001:db8:53::53 +time=2 +tries=1 +short dualstack.r.ssl.global.fastly.net AAAA)"
eq "api.openai.com A" 198.51.100.30 "$(rdata api.openai.com A)"
eq "openai.com A" 198.51.100.31 "$(rdata openai.com A)"
eq "example.com A" 203.0.113.66 "$(rdata example.com A)"
eq "denied.example A" 203.0.113.66 "$(rdata denied.example A)"
eq "rebind.openai.com A" 169.254.169.254 "$(rdata rebind.openai.com A)"
eq "loop.openai.com A" 127.0.0.1 "$(rdata loop.openai.com A)"
eq "ttl0.openai.com A" 198.51.100.30 "$(rdata ttl0.openai.com A)"
eq "ttl0.openai.com TTL 0" 0 "$(ttl_of ttl0.openai.com A)"
eq "big.openai.com: 40 A over EDNS" 40 "$(nrr big.openai.com A)"
check "big.openai.com: TC without EDNS" \
	bash -c "ip netns exec $prefix-host dig @192.0.2.53 +time=2 +tries=1 +noedns +ignore big.openai.com | grep -q 'flags:.* tc'"
eq "big.openai.com: 40 A over TCP" 40 "$(nrr big.openai.com A +tcp)"
eq "nosuch.pypi.org NXDOMAIN" NXDOMAIN "$(q nosuch.pypi.org A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
eq "name outside the test zones NXDOMAIN (root stub)" NXDOMAIN \
	"$(q www.google.com A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
check "knotd authoritative (aa) on 192.0.2.54" \
	bash -c "ip netns exec $prefix-host dig @192.0.2.54 +norec +time=2 +tries=1 pypi.org | grep -q 'flags: qr aa'"
check "resolv.conf in the host netns names the resolver" \
	grep -q '^nameserver 192.0.2.53$' "/etc/netns/$prefix-host/resolv.conf"

# ---- web servers, HTTPS verified against WORLD_CA ----
web=(
	"pypi.org 198.51.100.10"
	"files.pythonhosted.org 198.51.100.20"
	"files.pythonhosted.org 198.51.100.21"
	"files.pythonhosted.org 198.51.100.22"
	"files.pythonhosted.org [2001:db8:20::20]"
	"api.openai.com 198.51.100.30"
	"openai.com 198.51.100.31"
	"example.com 203.0.113.66"
	"denied.example 203.0.113.66"
)
for e in "${web[@]}"; do
	read -r name ip <<<"$e"
	eq "https://$name/ at $ip" "$name ok" \
		"$(get --resolve "$name:443:$ip" "https://$name/simple/" 2>&1)"
	eq "http://$name/ at $ip" "$name ok" \
		"$(get --resolve "$name:80:$ip" "http://$name/" 2>&1)"
done
eq "https by name through the world's resolv.conf" "pypi.org ok" "$(get https://pypi.org/simple/ 2>&1)"
eq "CIDR-only host https by IP" "cidr-host ok" "$(get https://198.51.100.7/ 2>&1)"
eq "CIDR-only host http :8080" "cidr-host ok" "$(get http://198.51.100.7:8080/ 2>&1)"
# curl exit 60: the peer certificate cannot be authenticated.
rc=0; H curl -sS --max-time 5 --cacert "$WORLD_CA" --resolve openai.com:443:198.51.100.10 \
	https://openai.com/ >/dev/null 2>&1 || rc=$?
eq "TLS is verified: a name not in the certificate fails" 60 "$rc"
rc=0; H curl -sS --max-time 5 https://198.51.100.7/ >/dev/null 2>&1 || rc=$?
eq "TLS is verified: without the world CA it fails" 60 "$rc"
for n in 0 1 1500 1048577; do
	eq "GET /bytes/$n is $n octets" "$n" \
		"$(get --resolve pypi.org:443:198.51.100.10 -o /dev/null -w '%{size_download}' "https://pypi.org/bytes/$n")"
done
head -c 300001 /dev/zero >"$dir/post.bin"
eq "POST counts 300001 octets" 300001 \
	"$(get --resolve api.openai.com:443:198.51.100.30 --data-binary @"$dir/post.bin" https://api.openai.com/v1/x)"
eq "chunked POST counts 300001 octets" 300001 \
	"$(get -H 'Transfer-Encoding: chunked' --data-binary @"$dir/post.bin" http://198.51.100.7:8080/)"

# ---- teardown leaves nothing ----
world_down
eq "no namespace left" "" "$(ip netns list | awk '{print $1}' | grep -- "^$prefix-" || true)"
left=""
for f in "/run/netns/$prefix"-* "/etc/netns/$prefix"-*; do [ -e "$f" ] && left+=" $f"; done
eq "no /run/netns or /etc/netns entry left" "" "$left"
left=""
for p in "${pids[@]}"; do [ -e "/proc/$p" ] && left+=" $p"; done
eq "no world process left (${pids[*]})" "" "$left"
check "world dir removed" test ! -e "$dir"
eq "root netns links unchanged" "$root_links_before" "$(ip -o link show | awk -F': ' '{print $2}' | sort)"
eq "root netns nft tables unchanged" "$root_nft_before" "$(nft list tables 2>/dev/null || true)"
world_down
ok "world_down is idempotent"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
