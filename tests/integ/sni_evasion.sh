#!/usr/bin/env bash
# The SNI check under attack (issue 30, security review part three), in the
# test world.  example.com and denied.example share 203.0.113.66; the
# policies allow example.com only.  A recording server on 203.0.113.66:8443
# (tests/integ/sni_recorder.py) writes what it really received: the proof of
# each leak is denied.example's ClientHello reaching it.  Each attack is
# tests/integ/sni_forge.py, run in a sandbox's netns:
#   1 reuse (V0)    a new connection that reuses a conntrack entry the
#                   server reset is checked from its SYN (the ruleset clears
#                   the done bit on a SYN of an established entry)
#   2 md5 (V1)      a first segment with a TCP-MD5 option, which the server
#                   drops unread, ends the check (tcp-option); what decides
#                   is what the server acknowledged
#   3 tfo (V1)      SYN data the server did not take, then other bytes from
#                   the same sequence number: rewritten, reset
#   7 flood         one sandbox's connection attempts fill only its own
#                   share of the check's table: another's HTTPS passes
#   8 log mode      a Destination Options header on every IPv6 packet is
#                   walked (a record, not silence); with a full share the
#                   record still names the site; the packet bound says
#                   "packets", not "deadline"
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndse$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
for mode in enforce log; do
	cat >"$WORLD_DIR/policies/ev-$mode.yaml" <<-YAML
	name: ev-$mode
	egress:
	  - domains: [example.com]
	    ports: [443, 8443, 9443]
	    tls: { sni: $mode }
	    http: { host: $mode }
	  - domains: [files.pythonhosted.org]
	    ports: [443]
	    tls: { sni: $mode }
	YAML
done
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create e1 (enforce)" sb_create e1 ev-enforce
ok "sandbox create e2 (enforce)" sb_create e2 ev-enforce
ok "sandbox create l1 (log)" sb_create l1 ev-log

A=203.0.113.66
REC=$WORLD_DIR/recorded.log
world__start inet recorder "$WORLD_PYTHON" tests/integ/sni_recorder.py "$A" 8443 "$REC"
for ((i = 0; i < 100; i++)); do [ -e "$REC" ] && break; sleep 0.1; done

# forge SHORT MODE ARGS... - sni_forge.py in the sandbox's netns.
forge() {
	timeout "${FORGE_TIMEOUT:-30}" ip netns exec "$(sb_name "$1")" "$WORLD_PYTHON" tests/integ/sni_forge.py "${@:2}"
}
# leaked - connections whose bytes at the server named denied.example.
leaked() { grep -c 'denied.example' "$REC" || true; }
# no_kernel_rst SHORT - what root in the sandbox does to speak TCP by hand:
# its own kernel's resets to the test address are dropped.
no_kernel_rst() {
	ip netns exec "$(sb_name "$1")" nft -f - <<-NFT
	table ip forge {
		chain out { type filter hook output priority 0; ip daddr $A tcp flags rst drop; }
	}
	NFT
}

for sb in e1 e2 l1; do
	eq "$sb: example.com pins $A" "$A" "$(sb_dig "$sb" +short example.com)"
done

# ---- 1: a reused conntrack entry -------------------------------------------
out=$(forge e1 reuse "$A" 8443 45001 example.com denied.example)
has "reuse: the first connection reached the server" "example.com" "$(cat "$REC")"
eq "reuse: the second ClientHello (denied.example) never reached the server" 0 "$(leaked)"
rec=$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"sandbox":"'"$(sb_name e1)"'"' '"dport":8443')
has "reuse: the new connection was judged and reset ($out)" '"action":"reset"' "$rec"

# ---- 2: a first segment the server discards (TCP-MD5) -------------------------
ok "the sandbox's own resets are dropped (V1)" no_kernel_rst e1
out=$(forge e1 md5 "$A" 8443 example.com denied.example)
eq "md5: the connection is reset" "reset" "$out"
eq "md5: denied.example never reached the server" 0 "$(leaked)"
has "md5: audited: an option the check does not model" '"detail":"tcp-option"' \
	"$(audit_wait 10 '"event":"sni"' '"detail":"tcp-option"')"

# ---- 3: TCP Fast Open data the server did not take ---------------------------
out=$(forge e1 tfo "$A" 8443 example.com denied.example)
eq "tfo: the connection is reset" "reset" "$out"
eq "tfo: denied.example never reached the server" 0 "$(leaked)"
has "tfo: audited: read bytes sent again, different" '"detail":"rewritten"' \
	"$(audit_wait 10 '"event":"sni"' '"detail":"rewritten"')"

# ---- 8: the packet bound -------------------------------------------------------
eq "dribble: 80 one-byte segments are reset" "reset" "$(forge e1 dribble "$A" 8443 80)"
has "dribble: audited as the packet bound, not the deadline" '"detail":"packets"' \
	"$(audit_wait 10 '"event":"sni"' '"detail":"packets"')"
hasnt "dribble: nothing was audited as the deadline" '"detail":"deadline"' "$(audit_grep '"event":"sni"')"

# ---- 7: one sandbox fills the table -------------------------------------------
# 4,200 attempts at once to a checked port where nothing listens: each is a
# flow under check until its deadline (5 s); the table held 4,096 in all.
# flood_start SHORT OUT - the flood in the background; back once all its
# SYNs are on their way.
flood_start() {
	forge "$1" flood "$A" 9443 4200 4 >"$2" 2>&1 &
	flood_pid=$!
	world_pid_track "$flood_pid"
	for ((i = 0; i < 200; i++)); do grep -q '^sent' "$2" && break; sleep 0.1; done
	sleep 0.3	# the last SYNs through netd's queue
}
flood_start e1 "$WORLD_DIR/flood.out"
has "flood: another sandbox's HTTPS to the checked name passes" "example.com ok" \
	"$(sb_curl e2 https://example.com/)"
wait "$flood_pid"
has "flood: it ran" "flooded 4200" "$(cat "$WORLD_DIR/flood.out")"
has "flood: the flooder's attempts past its share were refused and audited" '"detail":"table-full"' \
	"$(audit_wait 10 '"event":"sni"' '"detail":"table-full"' '"sandbox":"'"$(sb_name e1)"'"')"
has "flood: afterwards the flooder itself passes again" "example.com ok" \
	"$(sleep 6; sb_curl e1 https://example.com/)"

# ---- 8: log mode records ---------------------------------------------------------
eq "l1: files.pythonhosted.org pins 2001:db8:20::20" "2001:db8:20::20" \
	"$(sb_dig l1 +short AAAA files.pythonhosted.org | tail -n 1)"
out=$(forge l1 dstopt 2001:db8:20::20 443 denied.example)
eq "log, IPv6 Destination Options on every packet: passes" "answered" "$out"
rec=$(audit_wait 10 '"event":"sni"' '"sandbox":"'"$(sb_name l1)"'"' '"dst":"2001:db8:20::20"')
has "log, IPv6 Destination Options: audited with the name" '"name":"denied.example"' "$rec"

flood_start l1 "$WORLD_DIR/flood2.out"
out=$(timeout 20 ip netns exec "$(sb_name l1)" "$WORLD_PYTHON" tests/integ/sni_client.py "$A" 443 tls denied.example)
has "log, share full: SNI denied.example passes (log)" "ok HTTP/1.1 200" "$out"
rec=$(audit_wait 10 '"event":"sni"' '"sandbox":"'"$(sb_name l1)"'"' '"detail":"table-full"' '"dport":443')
has "log, share full: the record names the site" '"name":"denied.example"' "$rec"
wait "$flood_pid"

has "after all that, e1's own HTTPS passes" "example.com ok" "$(sb_curl e1 https://example.com/)"
hasnt "netd logged no verdict errors" "verdict on packet" "$(cat "$NETD_LOG")"
t_summary
