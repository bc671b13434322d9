#!/bin/bash
# Golden ruleset test: fw_open() + two fw_sandbox_add() with hand-built
# policies, inside a throwaway netns; `nft list table inet netd` must equal
# tests/golden/ruleset.nft.  UPDATE=1 rewrites the golden file instead.
# Needs root; never touches the caller's netns.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/asan/golden
bin=$out/fw_golden
ns=ndgolden-$$
tmp=$(mktemp -d)

cleanup() {
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$out"
CC=${CC:-gcc}
# shellcheck disable=SC2046
$CC -std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Wno-unused-parameter -D_GNU_SOURCE -g -O1 \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	-I"$root" $(pkg-config --cflags libnftnl libmnl) \
	-o "$bin" "$root/tests/golden/fw_golden.c" "$root"/netd/fw/*.c "$root/netd/ruleset.c" \
	"$root/common/addr.c" $(pkg-config --libs libnftnl libmnl) || { echo "golden: build failed"; exit 1; }

ip netns add "$ns" || exit 1

# run_case NAME GOLDEN: feed $tmp/NAME.cmds to the driver in a fresh table,
# every command must answer "ok", then diff the listing against GOLDEN.
fails=0
run_case() {
	local name=$1 golden=$here/$2 res
	res=$(ip netns exec "$ns" "$bin" < "$tmp/$name.cmds")
	if [ -n "$(printf '%s\n' "$res" | grep -v '^ok$')" ]; then
		echo "golden[$name]: driver failed:"; echo "$res"; fails=$((fails + 1)); return
	fi
	ip netns exec "$ns" nft list table inet netd | python3 "$here/normalize.py" > "$tmp/$name.actual"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$tmp/$name.actual" "$golden"
		echo "golden[$name]: updated $golden"
	elif ! diff -u "$golden" "$tmp/$name.actual"; then
		echo "golden[$name]: ruleset differs from $golden (UPDATE=1 to accept)"
		fails=$((fails + 1))
	else
		echo "golden[$name]: ruleset matches"
	fi
}

# Two sandboxes; alpha has overlapping CIDR rules (must be merged), a port
# range, IPv6 and a domain rule (never rendered).  Along the way: beta is
# first added on another interface and replaced, gamma is added and
# deleted, alpha is added twice, the proxy's own :53 addresses
# (dns_local4/6) are set, replaced and dropped with their sandbox - none
# of which may leave anything behind.
cat > "$tmp/full.cmds" <<'CMDS'
open netd 5300 eth0 10.87.0.0/16 fd00:87::/48 10.0.0.0/8 10.1.0.0/16 172.16.0.0/12 192.168.0.0/16 169.254.0.0/16 fc00::/7 fe80::/10
add beta veth-old 10.87.0.9 fd00:87::9 udp:192.0.2.1/32:-
dns beta 10.87.0.10 -
add alpha veth-alpha 10.87.0.2 fd00:87::2 tcp:198.51.100.7/32,198.51.100.0/24:443,8080 tcp:198.51.100.7/32:9000-9010 udp:@pypi.org:443 tcp:2001:db8:1::/48:443
dns alpha 10.87.0.99 fd00:87::99
dns alpha 10.87.0.1 fd00:87::1
add gamma veth-gamma 10.87.0.4 fd00:87::4 tcp:192.0.2.0/24:-
dns gamma 10.87.0.5 fd00:87::5
add alpha veth-alpha 10.87.0.2 fd00:87::2 tcp:198.51.100.7/32,198.51.100.0/24:443,8080 tcp:198.51.100.7/32:9000-9010 udp:@pypi.org:443 tcp:2001:db8:1::/48:443
dns alpha 10.87.0.1 fd00:87::1
add beta veth-beta 10.87.0.3 - udp:203.0.113.0/25:53,123
del gamma veth-gamma 10.87.0.4 fd00:87::4
CMDS
run_case full ruleset.nft

# IPv6 disabled, no egress interface (masquerade out of any non-sandbox one).
cat > "$tmp/nov6.cmds" <<'CMDS'
open netd 53535 - 10.87.0.0/16 - 10.0.0.0/8
add solo veth-solo 10.87.0.5 - tcp:0.0.0.0/0:80
dns solo 10.87.0.6 fd00::6
CMDS
run_case nov6 ruleset-nov6.nft
exit $((fails > 0))
