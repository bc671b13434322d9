#!/usr/bin/env bash
# DNS idle grace (issue 3): with dns.idle_grace N, an address pinned
# through a name is pinned again for N seconds when a connection to it
# closes, so a reconnect without a new DNS query still works for a while.
#   (a) after a connection outlived its pin and closed, a new connection to
#       the same address without DNS succeeds (the kernel's element is back,
#       timeout N s);
#   (b) once the grace is over it fails (and the element is gone);
#   (c) control: without idle_grace a reconnect right after the close fails;
#       a rule's own idle_grace turns it on for that rule only;
#   (d) after a reload that removed the name, a close gives no grace;
#   CIDR-rule traffic never gets a pin.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndg$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
POL=$WORLD_DIR/policies
mkdir -p "$POL"
export NETD_POLICIES=$POL
GRACE=6
ADDR=198.51.100.47	# ttl0.dt.example: TTL 0, so its pin lasts dns.min_ttl (5 s)
NAME=ttl0.dt.example

pol() {	# pol FILE NAME [RULE_EXTRA] - a policy with ttl0.dt.example:443 and a CIDR rule
	cat >"$POL/$1.yaml" <<-YAML
	name: $2
	egress:
	  - domains: [$NAME]
	    ports: [443]
	    ${3:-}
	  - cidrs: [198.51.100.7/32]
	    ports: [8080]
	YAML
}
pol_without_name() {
	cat >"$POL/$1.yaml" <<-YAML
	name: $2
	egress:
	  - cidrs: [198.51.100.7/32]
	    ports: [8080]
	YAML
}

# elem SHORT ADDR PORT - the pin4 element for ADDR . tcp . PORT as "timeout expires", or "".
elem() {
	sb_pins "$(sb_name "$1")" | awk -v a="$2" -v p="$3" \
		'$1 == a && $3 == "tcp" && $5 == p { sub("s$", "", $7); sub("s$", "", $9); print $7, $9 }'
}
# gone SHORT ADDR PORT SECS - wait up to SECS for the element to disappear.
gone() {
	for ((i = 0; i < $4 * 10; i++)); do
		[ -z "$(elem "$1" "$2" "$3")" ] && return 0
		sleep 0.1
	done
	return 1
}
# present SHORT ADDR PORT - wait up to 3 s for the element (netd handles the
# close event asynchronously); prints it like elem.
present() {
	local e
	for ((i = 0; i < 30; i++)); do
		e=$(elem "$1" "$2" "$3")
		[ -n "$e" ] && break
		sleep 0.1
	done
	printf '%s' "$e"
}
# download SHORT OUT - resolve and fetch 80,000 bytes paced at 10,000/s (about
# 8 s: longer than the 5 s pin), in the background; sets DL_PID.
download() {
	T_TIMEOUT=60 sb_exec "$1" curl -sS --fail --cacert "$WORLD_CA" -o "$2" \
		"https://$NAME/bytes/80000?rate=10000" >"$2.log" 2>&1 &
	DL_PID=$!
	world_pid_track "$DL_PID"
	for ((i = 0; i < 100; i++)); do
		[ -s "$2" ] && break
		sleep 0.1
	done
}
# again SHORT - a new connection to the address with no DNS query (curl --resolve).
again() {
	sb_curl "$1" -o /dev/null --resolve "$NAME:443:$ADDR" "https://$NAME/"
}
status_grace() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status | jq -r ".accounting.idle_grace.$1"; }
dns_queries() { audit_grep '"event":"dns"' "\"qname\":\"$NAME\"" "$(sb_name "$1")" | wc -l; }

# ==== run 1: dns.idle_grace 6, reload.cut_removed false ==========================
pol gr gr
NETD_DNS_EXTRA="  idle_grace: $GRACE" netd_up "reload: { cut_removed: false }" ||
	{ echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1" sb_create sb1 gr
eq "idle grace is on" "true" "$(status_grace on)"

download sb1 "$WORLD_DIR/d1.bin"
ok "download under way" test -s "$WORLD_DIR/d1.bin"
ok "the 5 s pin expires while the connection is live" gone sb1 $ADDR 443 8
ok "... and the connection keeps flowing" kill -0 "$DL_PID"
wait "$DL_PID"
eq "download finished" "0" "$?"
eq "... complete" "80000" "$(stat -c %s "$WORLD_DIR/d1.bin")"
e=$(present sb1 $ADDR 443)
eq "(a) after the close the kernel has the element again, timeout $GRACE s" "$GRACE" "${e%% *}"
q0=$(dns_queries sb1)
ok "(a) a new connection without DNS succeeds within the grace" again sb1
eq "(a) ... and no DNS query was made for it" "$q0" "$(dns_queries sb1)"
ok "the grace re-pins are counted" test "$(status_grace repinned)" -ge 2
has "metrics: netd_idle_grace_repins_total" "netd_idle_grace_repins_total" \
	"$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)"
ok "(b) the element goes away when the grace is over" gone sb1 $ADDR 443 $((GRACE + 3))
fail "(b) a new connection without DNS then fails" again sb1

# CIDR-rule traffic: allowed, never pinned.
ok "CIDR rule: 198.51.100.7:8080 connects" sb_curl sb1 -o /dev/null http://198.51.100.7:8080/
sleep 0.5
eq "CIDR rule: no pin after its close" "" "$(elem sb1 198.51.100.7 8080)"

# (d) a reload removes the name while a connection to it is live.
download sb1 "$WORLD_DIR/d2.bin"
ok "(d) download under way" test -s "$WORLD_DIR/d2.bin"
nograce0=$(status_grace no_grace)
pol_without_name gr gr
out=$(reload_json 2>&1)
has "(d) reload removed the name" "\"removed\":[\"$NAME tcp/443\"]" "$out"
wait "$DL_PID"
eq "(d) the live download survived the reload (cut_removed: false)" "0" "$?"
sleep 0.5
eq "(d) no grace element after its close" "" "$(elem sb1 $ADDR 443)"
fail "(d) a new connection without DNS fails" again sb1
ok "(d) the refusal is counted (no_grace)" test "$(status_grace no_grace)" -gt "$nograce0"
netd_down

# ==== run 2: no dns.idle_grace (control); a rule's idle_grace ====================
mv "$NETD_LOG" "$WORLD_DIR/netd-1.log"
pol gr gr
pol gr2 gr2 "idle_grace: $GRACE"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb2 (no grace)" sb_create sb2 gr
ok "sandbox sb3 (rule idle_grace)" sb_create sb3 gr2
download sb2 "$WORLD_DIR/d3.bin"
D3=$DL_PID
download sb3 "$WORLD_DIR/d4.bin"
D4=$DL_PID
wait "$D3"
eq "(c) download finished" "0" "$?"
wait "$D4"
eq "rule idle_grace: download finished" "0" "$?"
sleep 0.3
eq "(c) no element after the close without idle_grace" "" "$(elem sb2 $ADDR 443)"
# sb3's grace (GRACE s from its close) is checked before sb2's failing
# connection, which waits out curl's 3-s timeout: on a loaded machine the
# two together could outlast the grace.
e=$(present sb3 $ADDR 443)
eq "rule idle_grace: the element is back, timeout $GRACE s" "$GRACE" "${e%% *}"
ok "rule idle_grace: a new connection without DNS succeeds" again sb3
fail "(c) a new connection without DNS fails right after the close" again sb2
netd_down

world_down
t_summary
