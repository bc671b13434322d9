#!/usr/bin/env bash
# Lifecycle: restart and crash.  netd is killed with SIGKILL in the middle of
# a rate-limited download through a pinned address; the download must finish
# byte-exact, the pin must survive, a sandbox that never resolved before must
# resolve afterwards, a denied address must never become reachable (probed
# while netd is down and while it starts), a sandbox whose netns vanished
# while netd was down is cleaned up (its elements and its pins in the shared
# set), a second instance is refused, and a restart keeps pins made under
# the rules a reload applied but drops those of a policy edited while netd
# was down (the policy digest files, STATE_DIR/policies/NAME.digest).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndr$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES" && cp policies/*.yaml "$NETD_POLICIES/"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
SB3=$(sb_name sb3)
N=6000000	# bytes; at 1 MB/s the download spans the restart

ok "sandbox sb1" sb_create sb1 python-dev
ok "sandbox sb2 (never resolves before the restart)" sb_create sb2 python-dev
ok "sandbox sb3 (its netns will vanish)" sb_create sb3 python-dev
eq "sb1 resolves pypi.org" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
has "pin in the kernel" "198.51.100.10" "$(sb_pins "$SB1")"
eq "sb3 resolves api.openai.com" "198.51.100.30" "$(sb_dig sb3 +short api.openai.com A)"
SB3_A4=$(sb_field "$SB3" ipv4)
SB3_IF=$(sb_field "$SB3" host_ifname)
ok "sb3 has its mark" test -n "$(sb_mark "$SB3_A4")"
has "sb3's pin in the shared set" "198.51.100.30" "$(sb_pins "$SB3" "$SB3_A4" "")"
# objects: chain and set names of a listing; chain_of NAME: that chain's body.
objects() { grep -oE '^\s*(chain|set|map) [^ ]+' | sort; }
chain_of() { awk -v c="$1" '$1 == "chain" && $2 == c { on = 1 } on { print } on && /^\t}/ { exit }'; }
ruleset_before=$(world_exec host nft list table inet netd | sed -E "s/counter packets [0-9]+ bytes [0-9]+/counter/; s/ expires [0-9hms.]+//")

# The download: curl with the name pinned above, at 1 MB/s.
dl=$WORLD_DIR/dl.bin
# The server paces it (?rate=): a client-side limit would let the kernel
# buffer the whole body before the crash and prove nothing.
T_TIMEOUT=60 sb_exec sb1 curl -sS --fail --cacert "$WORLD_CA" \
	-o "$dl" "https://pypi.org/bytes/$N?rate=1000000" >"$WORLD_DIR/dl.log" 2>&1 &
DL_PID=$!
world_pid_track "$DL_PID"

# Probes: a denied address (example.com's) from sb1, over and over while
# netd is down and while it comes back.  Any success is a failure.
probe_start sb1

for ((i = 0; i < 100; i++)); do
	[ -s "$dl" ] && break
	sleep 0.1
done
ok "download under way before the crash" test -s "$dl"

kill -9 "$NETD_PID"
wait "$NETD_PID" 2>/dev/null
NETD_PID=""
has "table still there while netd is down" "chain pe-python-dev" "$(world_exec host nft list table inet netd)"
# Down: nothing answers DNS, so no new name opens.
st=$(sb_dig sb2 pypi.org A 2>&1 | grep -o 'status: [A-Z]*\|timed out\|no servers' | head -1)
hasnt "no DNS answer while netd is down" "NOERROR" "$st"

# A netns that vanishes while netd is down.
ip netns del "$SB3"
sleep 1
mv "$NETD_LOG" "$WORLD_DIR/netd-1.log"
netd_up || { echo "0 passed, 1 failed"; exit 1; }

got=$(stat -c %s "$dl" 2>/dev/null || echo 0)
ok "the download was still on the wire when netd came back ($got of $N bytes)" test "$got" -lt "$N"

ruleset_after=$(world_exec host nft list table inet netd | sed -E "s/counter packets [0-9]+ bytes [0-9]+/counter/; s/ expires [0-9hms.]+//")
has "pin survived the crash" "198.51.100.10" "$(sb_pins "$SB1")"
eq "same chains and sets after the restart" \
	"$(objects <<<"$ruleset_before")" "$(objects <<<"$ruleset_after")"
eq "the policy's chain re-rendered identically" "$(chain_of pe-python-dev <<<"$ruleset_before")" \
	"$(chain_of pe-python-dev <<<"$ruleset_after")"
for c in prerouting_raw sandbox_raw tap_raw chained_raw prerouting_nat input forward postrouting_nat; do
	eq "base chain $c identical" "$(chain_of "$c" <<<"$ruleset_before")" "$(chain_of "$c" <<<"$ruleset_after")"
done
eq "vanished sandbox's jump removed" "" "$(sb_jump "$SB3_IF")"
eq "vanished sandbox's mark removed" "" "$(sb_mark "$SB3_A4")"
eq "sb1 still jumps to its policy's chain" "pe-python-dev" "$(sb_jump "$(sb_field "$SB1" host_ifname)")"
eq "vanished sandbox's pins removed from the shared set" "" "$(sb_pins "$SB3" "$SB3_A4" "")"
has "vanished sandbox logged" "sandbox $SB3: its interface" "$(cat "$NETD_LOG")"
hasnt "vanished sandbox forgotten" "$SB3" "$(netd sandbox list 2>&1)"
ok "vanished sandbox's state file removed" test ! -e "$WORLD_DIR/state/sandboxes/$SB3.json"
has "restored sandboxes logged" "sandbox $SB1 restored (policy python-dev, pins kept)" "$(cat "$NETD_LOG")"

eq "sb2 (never resolved before) resolves after the restart" "198.51.100.10" "$(sb_dig sb2 +short pypi.org A)"
eq "sb2 connects after the restart" "pypi.org ok" "$(sb_curl sb2 https://pypi.org/simple/)"
eq "sb1 resolves after the restart" "api.openai.com ok" "$(sb_curl sb1 https://api.openai.com/)"

wait "$DL_PID"
dl_rc=$?
eq "download finished" "0" "$dl_rc"
eq "download byte count exact" "$N" "$(stat -c %s "$dl" 2>/dev/null)"
eq "download content exact" "0" "$(tr -d x <"$dl" | wc -c)"

probe_stop "during the restart"
fail "denied name still denied" sb_curl sb1 https://example.com/

# ---- a second instance -------------------------------------------------------
out=$(world_exec host "$NETD_BIN" run --config "$NETD_CONF" 2>&1)
rc=$?
eq "second netd on the same state dir exits 1" "1" "$rc"
has "second netd says why" "another netd is already running on state_dir" "$out"
sed "s#state_dir: .*#state_dir: $WORLD_DIR/state2#" "$NETD_CONF" >"$WORLD_DIR/netd2.yaml"
out=$(world_exec host "$NETD_BIN" run --config "$WORLD_DIR/netd2.yaml" 2>&1)
rc=$?
eq "second netd on the same socket exits 1" "1" "$rc"
has "second netd on the socket says why" "another netd is already running in this network namespace" "$out"
# Everything different but the netns: still refused, before nf_tables is touched.
sed -e "s#state_dir: .*#state_dir: $WORLD_DIR/state3#" -e "s#socket: .*#socket: $WORLD_DIR/netd3.sock#" \
	-e "s#port: 5300#port: 5301#" -e "s#10.87.0.0/16#10.88.0.0/16#" "$NETD_CONF" >"$WORLD_DIR/netd3.yaml"
out=$(world_exec host "$NETD_BIN" run --config "$WORLD_DIR/netd3.yaml" 2>&1)
rc=$?
eq "second netd with its own state dir, socket, port and pool exits 1" "1" "$rc"
has "second netd in the same netns says why" "another netd is already running in this network namespace" "$out"
hasnt "the first netd's redirect port is untouched" "5301" "$(world_exec host nft list table inet netd)"
has "the first netd's table is untouched" "chain pe-python-dev" "$(world_exec host nft list table inet netd)"
ok "first netd still answers" netd_alive

# ---- a clean restart keeps everything too --------------------------------------
# ... and clears what an older netd (a chain per sandbox) or a sandbox no
# longer in the state dir left: made here by hand while netd is down.
netd_down
mv "$NETD_LOG" "$WORLD_DIR/netd-2.log"
world_exec host nft add quota inet netd q-gone "{ over 1 mbytes }"
world_exec host nft add chain inet netd "sb-$SB1"
world_exec host nft add rule inet netd "sb-$SB1" quota name q-gone drop
world_exec host nft add chain inet netd pe-gone-policy
world_exec host nft add set inet netd ce-gone-policy-7 "{ type mark; flags dynamic; }"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
has "pin survived a clean restart" "198.51.100.10" "$(sb_pins "$SB1")"
eq "sb1 connects after the clean restart" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
after=$(world_exec host nft list table inet netd)
hasnt "an older netd's sandbox chain is removed" "chain sb-" "$after"
hasnt "the quota of a sandbox no longer there is removed" "q-gone" "$after"
hasnt "a policy chain no sandbox uses is removed" "pe-gone-policy" "$after"
hasnt "a conn-limit set no chain uses is removed" "ce-gone-policy-7" "$after"
has "sb1's policy chain stays" "chain pe-python-dev" "$after"
has "restart logged what it removed" "removed the rules of 1 sandbox(es) no longer in" "$(cat "$NETD_LOG")"

# ---- the policy digest: what a restart compares the pins' rules with -----------
ok "python-dev's digest file" test -s "$WORLD_DIR/state/policies/python-dev.digest"
hasnt "the sandbox's state file holds no digest" "policy_digest" \
	"$(cat "$WORLD_DIR/state/sandboxes/$SB1.json")"
# A reload that changes python-dev but still allows pypi.org: its state files are
# not rewritten, its digest file is, and a restart keeps the pin.
digest0=$(cat "$WORLD_DIR/state/policies/python-dev.digest")
printf '  - cidrs: [203.0.113.99/32]\n    ports: [9999]\n' >>"$NETD_POLICIES/python-dev.yaml"
ok "reload with a rule added" netd policy reload
digest1=$(cat "$WORLD_DIR/state/policies/python-dev.digest")
ok "the reload rewrote the digest file ($digest0 -> $digest1)" test "$digest0" != "$digest1"
netd_down
mv "$NETD_LOG" "$WORLD_DIR/netd-3.log"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
has "after a reload and a restart: pins kept" "sandbox $SB1 restored (policy python-dev, pins kept)" \
	"$(cat "$NETD_LOG")"
has "the pin is still in the kernel" "198.51.100.10" "$(sb_pins "$SB1")"
# Edited while netd is down: the pins were made under other rules.
netd_down
mv "$NETD_LOG" "$WORLD_DIR/netd-4.log"
printf '  - cidrs: [203.0.113.98/32]\n    ports: [9998]\n' >>"$NETD_POLICIES/python-dev.yaml"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
has "edited while down: pins dropped" \
	"sandbox $SB1 restored (policy python-dev, pins dropped: the policy changed while netd was down)" \
	"$(cat "$NETD_LOG")"
hasnt "the pin is gone from the kernel" "198.51.100.10" "$(sb_pins "$SB1")"
ok "the digest file names the edited policy" test "$(cat "$WORLD_DIR/state/policies/python-dev.digest")" != "$digest1"
eq "sb1 resolves and connects again" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
netd_down

world_down
t_summary
