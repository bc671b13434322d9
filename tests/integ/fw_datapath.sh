#!/bin/bash
# fw_datapath.sh - real traffic through the ruleset netd/fw.c installs.
#
# A private world of throwaway namespaces: ndfwh-PID ("host", where the fw
# driver runs), ndfwa-PID and ndfwb-PID (two sandboxes, each on its own
# veth) and ndfwi-PID ("internet": 198.51.100.7/.8 and 2001:db8::7 with small
# TCP servers).  tests/golden/fw_golden.c is the driver (fw_open, fw_sandbox_add,
# fw_pin, fw_pin_lookup, fw_sandbox_del), fed one command per line as a
# coprocess.  Timing is never asserted: pins are short and we poll nft.
# Every PID started here is killed by PID and every namespace deleted in
# the EXIT trap.  Needs root, ip, nft, python3.
# Ends with "N passed, N failed"; exit status non-zero if any failed.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/asan/golden
DRV=$OUT/fw_golden	# built by make asan / make integ

H=ndfwh-$$
A=ndfwa-$$
B=ndfwb-$$
I=ndfwi-$$
TMP=$(mktemp -d)
PIDS=()
pass=0
fail=0

cleanup() {
	local p n
	if [ -n "${FW_PID:-}" ]; then
		exec 7>&- 8<&- 2>/dev/null
		kill "$FW_PID" 2>/dev/null
	fi
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}" ${FW_PID:+"$FW_PID"}; do
		wait "$p" 2>/dev/null
	done
	for n in "$A" "$B" "$I" "$H"; do
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "ok   - $*"; }
ko() { fail=$((fail + 1)); echo "FAIL - $*"; }
check() {
	local desc=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$desc"; else ko "$desc"; fi
}
check_not() {
	local desc=$1; shift
	if "$@" >/dev/null 2>&1; then ko "$desc"; else ok "$desc"; fi
}

# ---- the driver (the Makefile builds it) ----------------------------------
[ -x "$DRV" ] || { echo "missing $DRV: run make asan first"; echo "0 passed, 1 failed"; exit 1; }

# ---- the world ------------------------------------------------------------
set -e
for n in "$H" "$A" "$B" "$I"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
done
ip netns exec "$H" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

ip -n "$H" link add veth-a type veth peer name eth0 netns "$A"
ip -n "$H" link add veth-b type veth peer name eth0 netns "$B"
ip -n "$H" link add eth-up type veth peer name eth0 netns "$I"

ip -n "$H" addr add 10.87.1.1/24 dev veth-a
ip -n "$H" addr add fd00:87:0:1::1/64 dev veth-a nodad
ip -n "$H" addr add 10.87.2.1/24 dev veth-b
ip -n "$H" addr add 198.51.100.1/24 dev eth-up
ip -n "$H" addr add 2001:db8::1/64 dev eth-up nodad
ip -n "$A" addr add 10.87.1.2/24 dev eth0
ip -n "$A" addr add 10.87.1.99/24 dev eth0	# spoof source: not this sandbox's address
ip -n "$A" addr add fd00:87:0:1::2/64 dev eth0 nodad
ip -n "$B" addr add 10.87.2.2/24 dev eth0
ip -n "$I" addr add 198.51.100.7/24 dev eth0
ip -n "$I" addr add 198.51.100.8/24 dev eth0
ip -n "$I" addr add 2001:db8::7/64 dev eth0 nodad
for n in "$H" "$A" "$B" "$I"; do
	for l in $(ip -n "$n" -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'); do
		ip -n "$n" link set "$l" up
	done
done
ip -n "$A" route add default via 10.87.1.1
ip -n "$A" -6 route add default via fd00:87:0:1::1
ip -n "$B" route add default via 10.87.2.1
set +e

# ---- servers: "hi" on every listed addr:port -------------------------------
cat > "$TMP/srv.py" <<'PY'
import socket, selectors, sys
sel = selectors.DefaultSelector()
for spec in sys.argv[1:]:
    host, port = spec.rsplit(":", 1)
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host.strip("[]"), int(port)))
    s.listen(16)
    sel.register(s, selectors.EVENT_READ)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        c, _ = key.fileobj.accept()
        c.sendall(b"hi\n")
        c.close()
PY
# UDP "pong" server: stands in for the DNS proxy on the host.
cat > "$TMP/udp.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
print("ready", flush=True)
while True:
    d, a = s.recvfrom(512)
    s.sendto(b"pong", a)
PY
start_srv() {	# NS SCRIPT ARGS...: start and wait for "ready"
	local ns=$1 log=$TMP/srv.$RANDOM; shift
	ip netns exec "$ns" python3 "$@" > "$log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do
		grep -q ready "$log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "server in $ns did not start:"; cat "$log"; exit 1
}
start_srv "$I" "$TMP/srv.py" 198.51.100.7:443 198.51.100.7:8443 198.51.100.7:9005 \
	198.51.100.7:9011 198.51.100.8:443 "[2001:db8::7]:443"
start_srv "$A" "$TMP/srv.py" 10.87.1.2:8080
start_srv "$H" "$TMP/udp.py" 5300

# reach NS ADDR PORT [SRC]: a TCP connection succeeds and reads "hi".
cat > "$TMP/cli.py" <<'PY'
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(1.5)
if len(sys.argv) > 3:
    s.bind((sys.argv[3], 0))
s.connect((host, port))
sys.exit(0 if s.recv(16) == b"hi\n" else 1)
PY
reach() { ip netns exec "$1" timeout 5 python3 "$TMP/cli.py" "$2" "$3" ${4:+"$4"}; }
# dns NS ADDR: a UDP datagram to ADDR:53 is answered (by the host's :5300).
dns() {
	ip netns exec "$1" timeout 5 python3 -c '
import socket, sys
s = socket.socket(); s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.5); s.sendto(b"ping", (sys.argv[1], 53))
d, a = s.recvfrom(512)
sys.exit(0 if d == b"pong" and a == (sys.argv[1], 53) else 1)' "$2"
}

# ---- the driver -------------------------------------------------------------
# Through two FIFOs (coproc descriptors would not reach $(...) subshells).
mkfifo "$TMP/drv.in" "$TMP/drv.out"
ip netns exec "$H" "$DRV" < "$TMP/drv.in" > "$TMP/drv.out" 2>"$TMP/drv.err" &
FW_PID=$!
exec 7>"$TMP/drv.in" 8<"$TMP/drv.out"
fw() {	# fw CMD...: one command, its one-line answer on stdout
	local line
	echo "$*" >&7
	if ! read -r -t 10 line <&8; then
		echo "driver died"; cat "$TMP/drv.err"
		return 1
	fi
	echo "$line"
}
fw_ok() {
	local desc=$1 got; shift
	got=$(fw "$@")
	if [ "$got" = ok ]; then ok "$desc"; else ko "$desc: $got"; fi
}
nft_h() { ip netns exec "$H" nft "$@"; }
# counter of the rule matching REGEX in chain CHAIN (packets)
counter() {
	nft_h list chain inet netd "$1" | grep -E -- "$2" | sed -nE 's/.*counter packets ([0-9]+).*/\1/p' | head -1
}

fw_ok "fw_open" open netd 5300 eth-up 10.87.0.0/16 fd00:87::/48 10.0.0.0/8 fc00::/7
fw_ok "sandbox a added" add a veth-a 10.87.1.2 fd00:87:0:1::2 tcp:198.51.100.7/32:9000-9010
fw_ok "sandbox b added" add b veth-b 10.87.2.2 -

# Default deny.
check_not "a: unpinned 198.51.100.7:443 unreachable" reach "$A" 198.51.100.7 443
check_not "a: unpinned 198.51.100.8:443 unreachable" reach "$A" 198.51.100.8 443
check "a: cidr rule 198.51.100.7:9005 reachable without a pin" reach "$A" 198.51.100.7 9005
check_not "a: 198.51.100.7:9011 outside the port range unreachable" reach "$A" 198.51.100.7 9011
check "a: DNS to any address is redirected to the host's proxy port" dns "$A" 198.51.100.7

# Pins.
fw_ok "pin a 198.51.100.7 tcp 443" pin a 198.51.100.7 tcp 443 60000
check "a: pinned 198.51.100.7:443 reachable" reach "$A" 198.51.100.7 443
check_not "a: other port 198.51.100.7:8443 still unreachable" reach "$A" 198.51.100.7 8443
check_not "a: other address 198.51.100.8:443 still unreachable" reach "$A" 198.51.100.8 443
check_not "b: a's pin does not open 198.51.100.7:443 for b" reach "$B" 198.51.100.7 443
check_not "a: pinned addr from spoofed source 10.87.1.99 dropped" reach "$A" 198.51.100.7 443 10.87.1.99
c=$(counter sandbox_raw 'meta nfproto ipv4 counter')
if [ "${c:-0}" -gt 0 ]; then ok "anti-spoof drop counter counted ($c)"; else ko "anti-spoof counter is ${c:-none}"; fi
# ... every packet of a flow, not only its first (5 datagrams, 5 drops).
c0=$(counter sandbox_raw 'meta nfproto ipv4 counter')
ip netns exec "$A" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.87.1.99", 40999))
for _ in range(5):
    s.sendto(b"x", ("198.51.100.7", 443)); time.sleep(0.02)' 2>/dev/null
c=$(counter sandbox_raw 'meta nfproto ipv4 counter')
if [ "${c:-0}" -ge $((${c0:-0} + 5)) ]; then ok "every spoofed upload packet dropped in sandbox_raw ($c0 -> $c)"
else ko "spoofed upload packets: counter $c0 -> $c"; fi
# A pool source from outside (the uplink): dropped in prerouting_raw before
# conntrack, whether it aims at the host or through it at a sandbox.
ip -n "$I" addr add 10.87.2.2/32 dev lo
ip -n "$I" route add 10.87.0.0/16 via 198.51.100.1 2>/dev/null
ip -n "$I" route add 198.51.100.1/32 dev eth0 src 10.87.2.2 2>/dev/null
c0=$(counter prerouting_raw 'ip saddr 10.87.0.0/16')
check_not "outside: a packet with sandbox b's source from the uplink reaches no sandbox" \
	reach "$I" 10.87.1.2 8080 10.87.2.2
check_not "outside: nor the host's proxy port" dns "$I" 198.51.100.1
c=$(counter prerouting_raw 'ip saddr 10.87.0.0/16')
if [ "${c:-0}" -gt "${c0:-0}" ]; then ok "outside pool-source drop counted in prerouting_raw ($c0 -> $c)"
else ko "prerouting_raw pool drop counter $c0 -> $c"; fi
ip -n "$I" route del 198.51.100.1/32 dev eth0 src 10.87.2.2 2>/dev/null
ip -n "$I" route del 10.87.0.0/16 via 198.51.100.1 2>/dev/null
ip -n "$I" addr del 10.87.2.2/32 dev lo

fw_ok "pin a 2001:db8::7 tcp 443" pin a 2001:db8::7 tcp 443 60000
check "a: pinned [2001:db8::7]:443 reachable over IPv6" reach "$A" 2001:db8::7 443

# Sandbox isolation: even with a pin for it, b cannot open a connection to a.
check "host itself reaches a's server (control)" reach "$H" 10.87.1.2 8080
fw_ok "pin b 10.87.1.2 tcp 8080" pin b 10.87.1.2 tcp 8080 60000
check_not "b cannot reach sandbox a" reach "$B" 10.87.1.2 8080

# Re-pin refreshes the timeout: wait (by polling) until the remaining time
# dropped below 2.5 s, re-pin with 3 s, the remaining time must be back above.
fw_ok "pin a 198.51.100.8 tcp 443 (3 s)" pin a 198.51.100.8 tcp 443 3000
exp=3000
for _ in $(seq 100); do
	exp=$(fw lookup a 198.51.100.8 tcp 443 | awk '$1 == "found" {print $2}')
	[ -n "$exp" ] && [ "$exp" -lt 2500 ] && break
	sleep 0.05
done
fw_ok "re-pin a 198.51.100.8 tcp 443 (3 s)" pin a 198.51.100.8 tcp 443 3000
exp2=$(fw lookup a 198.51.100.8 tcp 443 | awk '$1 == "found" {print $2}')
if [ -n "$exp" ] && [ -n "$exp2" ] && [ "$exp2" -gt 2500 ] && [ "$exp2" -gt "$exp" ]; then
	ok "re-pin extended the pin ($exp ms -> $exp2 ms left)"
else
	ko "re-pin did not extend: before '$exp', after '$exp2'"
fi

# Expiry: a short pin works, then lapses, then new connections fail.
fw_ok "pin a 198.51.100.8 tcp 443 (1.5 s)" pin a 198.51.100.8 tcp 443 1500
check "a: 198.51.100.8:443 reachable while pinned" reach "$A" 198.51.100.8 443
gone=0
for _ in $(seq 100); do
	if [ "$(fw lookup a 198.51.100.8 tcp 443)" = notfound ]; then gone=1; break; fi
	sleep 0.1
done
if [ $gone = 1 ]; then ok "pin expired (fw_pin_lookup: notfound)"; else ko "pin never expired"; fi
check_not "a: 198.51.100.8:443 unreachable after expiry" reach "$A" 198.51.100.8 443
check "a: 198.51.100.7:443 (long pin) still reachable" reach "$A" 198.51.100.7 443

# Errors.
got=$(fw pin nosuch 198.51.100.7 tcp 443 1000)
case $got in "err -2 "*) ok "pin for unknown sandbox: -ENOENT" ;; *) ko "pin for unknown sandbox: $got" ;; esac
got=$(fw lookup nosuch 198.51.100.7 tcp 443)
case $got in "err -2 "*) ok "lookup for unknown sandbox: -ENOENT" ;; *) ko "lookup unknown sandbox: $got" ;; esac

# Replacing a sandbox drops its pins.  (From here a has a conntrack mark.)
fw_ok "opt ct_mark" opt ct_mark=0x40005
fw_ok "sandbox a replaced" add a veth-a 10.87.1.2 fd00:87:0:1::2 tcp:198.51.100.7/32:9000-9010
check_not "a: pins gone after replace" reach "$A" 198.51.100.7 443
check "a: cidr rule survives replace" reach "$A" 198.51.100.7 9005

# A record fw still has (its delete failed, say) must never hand its pins to
# a new sandbox given the same address: the add removes them in its batch.
fw_ok "pin a 198.51.100.9 tcp 443 again" pin a 198.51.100.9 tcp 443 60000
# (and its mark element for that address, which c's own would clash with)
fw_ok "opt ct_mark (c's)" opt ct_mark=0x40006
fw_ok "sandbox c added with a's address" add c veth-c 10.87.1.2 - tcp:192.0.2.0/24:80
n=$(nft_h -j list set inet netd pin4 | jq '[.nftables[] | select(.set) | .set.elem // [] | .[] |
	select(.elem.val.concat[0] == "10.87.1.2")] | length')
if [ "$n" = 0 ]; then ok "c inherits none of a's pins"; else ko "c inherits $n pins of a"; fi
m=$(nft_h -j list map inet netd sb_mark4 | jq -r '.nftables[] | select(.map) | .map.elem // [] | .[] |
	select(.[0] == "10.87.1.2") | .[1]')
if [ "$m" = $((0x40006)) ]; then ok "the address carries c's mark"; else ko "the address carries mark '$m', not c's"; fi
fw_ok "opt ct_mark 0" opt ct_mark=0
fw_ok "sandbox c deleted" del c veth-c 10.87.1.2 -

# Delete: chain, sets, map and set elements go; a second delete is fine.
fw_ok "sandbox a deleted" del a veth-a 10.87.1.2 fd00:87:0:1::2
check_not "pe-a chain gone with its last sandbox" nft_h list chain inet netd pe-a
if nft_h list table inet netd | grep -q 'pe-a\|pc-a-\|ce-a-'; then ko "pe-a chain or policy a's sets still there"; else ok "pe-a chain and its policy's sets gone"; fi
# Its pins, in the shared sets keyed by its source: none left.
n=$(for s in pin4 pin6; do nft_h -j list set inet netd $s; done |
	jq -s '[.[].nftables[] | select(.set) | .set.elem // [] | .[] |
		select(.elem.val.concat[0] == "10.87.1.2" or .elem.val.concat[0] == "fd00:87:0:1::2")] | length')
if [ "$n" = 0 ]; then ok "a's pins gone from pin4/pin6"; else ko "a's pins left in pin4/pin6: '$n'"; fi
if nft_h list set inet netd pin4 | grep -qF "10.87.2.2 . 10.87.1.2 . tcp . 8080"; then ok "b's pin kept"; else ko "b's pin gone with a"; fi
if nft_h list table inet netd | grep -q 'veth-a'; then ko "veth-a still referenced"; else ok "veth-a elements gone"; fi
check "pe-b chain untouched" nft_h list chain inet netd pe-b
fw_ok "deleting a again is not an error" del a veth-a 10.87.1.2 fd00:87:0:1::2
# A big policy: 2000 CIDRs x 2 ports = 4000 interval elements, a batch many
# times the initial buffer (it must grow, never overrun), added twice.
big=$(python3 -c 'print(",".join(f"198.{51 + i // 200}.{i % 200}.{(i * 2) % 250}/32" for i in range(2000)))')
fw_ok "big sandbox added" add big veth-big 10.87.9.2 - "tcp:$big:443,8443"
fw_ok "big sandbox replaced" add big veth-big 10.87.9.2 - "tcp:$big:443,8443"
n=$(nft_h list set inet netd pc-big-cidr4 | grep -o ' tcp ' | wc -l)
if [ "$n" = 4000 ]; then ok "big sandbox: 4000 CIDR elements"; else ko "big sandbox: $n CIDR elements"; fi
fw_ok "big sandbox deleted" del big veth-big 10.87.9.2 -
fw_ok "close" close

if [ -s "$TMP/drv.err" ]; then
	ko "driver wrote to stderr (sanitizer?)"
	cat "$TMP/drv.err"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
