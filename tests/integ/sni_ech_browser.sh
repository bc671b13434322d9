#!/usr/bin/env bash
# A real browser through the SNI check (docs/sni.md, "ECH and browsers"):
# Debian's Chromium, headless, loads https://example.com/ from a sandbox.
# Chromium sends a GREASE encrypted_client_hello extension in every
# ClientHello when it has no ECH config (its real name stays in the plain
# SNI).  example.com and denied.example share 203.0.113.66 in the test world.
#   tls.sni: enforce (tls.ech default, strip): the page does not load; the
#            hellos are reset and audited (status ech, "ech": true, the
#            outer name example.com).
#   ... with Chrome's policy EncryptedClientHelloEnabled: false (a managed
#            policy file, bound over /etc/chromium in the command's own mount
#            namespace): no ECH extension, the page loads, nothing audited.
#   tls.ech: outer: the page loads; its connections are audited as
#            reason ech-outer, action passed, "ech": true; denied.example on
#            the same address (Chromium told to connect there, its GREASE
#            ECH hello naming denied.example outside) is still reset,
#            audited as a mismatch with "ech": true.
# Measured and printed, not asserted: --disable-features=EncryptedClientHello
# (the switch of Chrome 117's launch) changes nothing on this Chromium.
# Chromium runs as root with --no-sandbox and a throwaway --user-data-dir,
# under timeout; whatever of it is left in a sandbox's netns is ended by PID.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

command -v chromium >/dev/null || { echo "chromium missing (make deps)"; echo "0 passed, 1 failed"; exit 1; }
world_up "ndcr$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
policy() {
	printf 'name: %s\negress:\n  - domains: [example.com]\n    ports: [443]\n    tls: %s\n' \
		"$1" "$2" >"$WORLD_DIR/policies/$1.yaml"
}
policy br-enforce '{ sni: enforce }'
policy br-outer '{ sni: enforce, ech: outer }'
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create (enforce)" sb_create e1 br-enforce
ok "sandbox create (enforce, ech: outer)" sb_create o1 br-outer
has "policy show: tls.ech outer" '"ech": "outer"' "$(netd policy show br-outer)"

A=203.0.113.66
# A managed policy for Chromium (Linux reads /etc/chromium/policies/managed/),
# seen only by the chromium runs that bind this directory over /etc/chromium.
mkdir -p "$WORLD_DIR/etc-chromium/policies/managed"
cp -p /etc/chromium/* "$WORLD_DIR/etc-chromium/" 2>/dev/null
echo '{ "EncryptedClientHelloEnabled": false }' \
	>"$WORLD_DIR/etc-chromium/policies/managed/netd-test.json"

# chrome SHORT URL [ETC_DIR] [ARGS...] - Chromium in sandbox SHORT's netns
# (ip netns exec: the sandbox's resolv.conf, a mount namespace of its own),
# loading URL; prints the DOM it dumps (nothing when the load failed).
# ETC_DIR ("-": none) is bound over /etc/chromium first.
chrome() {
	local sb=$1 url=$2 etc=${3:--} ud pid
	shift 3
	ud=$(mktemp -d "$WORLD_DIR/chromium.XXXXXX")
	timeout 60 ip netns exec "$(sb_name "$sb")" sh -c \
		'[ "$0" = - ] || mount --bind "$0" /etc/chromium || exit 1; exec "$@"' "$etc" \
		chromium --headless=new --no-sandbox --ignore-certificate-errors \
		--user-data-dir="$ud" --no-first-run --no-default-browser-check \
		--disable-background-networking --disable-component-update --disable-sync \
		"$@" --dump-dom "$url" 2>"$ud.log"
	# Its helpers exit with it; any still in the netns was ours: by PID.
	for pid in $(ip netns pids "$(sb_name "$sb")" 2>/dev/null); do
		echo "chromium left PID $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80)" >&2
		kill "$pid" 2>/dev/null
	done
}
# sni_count SHORT - sni records of sandbox SHORT so far.
sni_count() { audit_grep '"event":"sni"' '"sandbox":"'"$(sb_name "$1")"'"' | grep -c .; }

for sb in e1 o1; do
	eq "$sb: example.com pins $A" "$A" "$(sb_dig "$sb" +short example.com)"
done

# ---- tls.sni: enforce, ech by default (strip): GREASE ECH is reset ------------------
hasnt "enforce: Chromium does not load the page" "example.com ok" \
	"$(chrome e1 https://example.com/ -)"
rec=$(audit_wait 10 '"event":"sni"' '"sandbox":"'"$(sb_name e1)"'"' '"status":"ech"')
has "enforce: its hello is reset" '"action":"reset"' "$rec"
has "enforce: audited as ECH, the outer name the real one" '"name":"example.com"' "$rec"
has "enforce: the record says ech" '"ech":true' "$rec"
hasnt "enforce: not as ech-outer" '"reason":"ech-outer"' "$(audit_grep '"sandbox":"'"$(sb_name e1)"'"')"

n0=$(sni_count e1)
out=$(chrome e1 https://example.com/ - --disable-features=EncryptedClientHello)
sleep 1
if grep -qF "example.com ok" <<<"$out"; then
	echo "# measured: --disable-features=EncryptedClientHello: the page loads"
else
	echo "# measured: --disable-features=EncryptedClientHello: still reset," \
		"$(($(sni_count e1) - n0)) more sni records ($(chromium --version 2>/dev/null | head -1))"
fi

n0=$(sni_count e1)
has "enforce, EncryptedClientHelloEnabled false: the page loads" "example.com ok" \
	"$(chrome e1 https://example.com/ "$WORLD_DIR/etc-chromium")"
sleep 1
eq "enforce, EncryptedClientHelloEnabled false: no sni record" "$n0" "$(sni_count e1)"

# ---- tls.ech: outer: judged by the outer SNI ---------------------------------------------
has "ech outer: Chromium loads the page" "example.com ok" "$(chrome o1 https://example.com/ -)"
rec=$(audit_wait 10 '"event":"sni"' '"sandbox":"'"$(sb_name o1)"'"' '"reason":"ech-outer"')
has "ech outer: audited as passed" '"action":"passed"' "$rec"
has "ech outer: the record says ech" '"ech":true' "$rec"
has "ech outer: judged by its name" '"status":"name","name":"example.com"' "$rec"
hasnt "ech outer: no mismatch for example.com" '"reason":"sni-mismatch"' \
	"$(audit_grep '"sandbox":"'"$(sb_name o1)"'"' '"name":"example.com"')"

# Another site on the allowed name's address: Chromium resolves denied.example
# to example.com's pinned address (a host-resolver rule; netd's DNS denies
# it), so its outer SNI says denied.example.
hasnt "ech outer: denied.example on the same address does not load" "denied.example ok" \
	"$(chrome o1 https://denied.example/ - --host-resolver-rules="MAP denied.example $A")"
rec=$(audit_wait 10 '"event":"sni"' '"sandbox":"'"$(sb_name o1)"'"' '"name":"denied.example"')
has "ech outer: denied.example is reset" '"action":"reset"' "$rec"
has "ech outer: ... as a mismatch" '"reason":"sni-mismatch"' "$rec"
has "ech outer: ... of its outer name" '"status":"name"' "$rec"
has "ech outer: ... with the ECH mark" '"ech":true' "$rec"
has "ech outer: example.com still loads after that" "example.com ok" \
	"$(chrome o1 https://example.com/ -)"

netd_down
t_summary
