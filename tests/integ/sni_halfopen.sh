#!/usr/bin/env bash
# The SNI check resets the server's side too (issue 32), in the test world.
# example.com and denied.example share 203.0.113.66, files.pythonhosted.org's
# CDN is 2001:db8:20::20; the policy allows example.com and
# files.pythonhosted.org under tls.sni/http.host enforce.  A server that
# handles one connection at a time in its accept loop and blocks reading the
# client's first bytes (tests/integ/sni_serial.py; a TLS server doing its
# handshake in the accept loop) listens on each address:
#   a sandbox connects with SNI denied.example: the sandbox sees a reset,
#   the server sees one too (ECONNRESET) and goes back to accept, having
#   received none of the ClientHello; then a client with the allowed SNI is
#   served.  With the server left half-open (before issue 32) it stays
#   blocked on the first connection and the second is never served.
# The same over IPv6, and for an HTTP Host mismatch.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndsh$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
cat >"$WORLD_DIR/policies/ho.yaml" <<-YAML
name: ho
egress:
  - domains: [example.com, files.pythonhosted.org]
    ports: [7443]
    tls: { sni: enforce }
    http: { host: enforce }
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create e1 (enforce)" sb_create e1 ho

A4=203.0.113.66
A6=2001:db8:20::20
for a in "$A4" "$A6"; do
	world__start inet "serial-$a" "$WORLD_PYTHON" tests/integ/sni_serial.py "$a" 7443 \
		"$WORLD_DIR/serial-$a.log"
	for ((i = 0; i < 100; i++)); do [ -e "$WORLD_DIR/serial-$a.log" ] && break; sleep 0.1; done
done

# conn ADDR MODE NAME - one connection (sni_client.py) from e1 to ADDR:7443.
conn() {
	timeout 20 ip netns exec "$(sb_name e1)" "$WORLD_PYTHON" tests/integ/sni_client.py \
		"$1" 7443 "$2" "$3"
}
# served_wait ADDR N - the server's log once it has N lines (at most 10 s).
served_wait() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(wc -l <"$WORLD_DIR/serial-$1.log")" -ge "$2" ] && break
		sleep 0.1
	done
	cat "$WORLD_DIR/serial-$1.log"
}

# round ADDR MODE DENIED ALLOWED N - ALLOWED pins ADDR (its answer's TTL is
# short: each round asks again), the denied connection, then the allowed one.
round() {
	local a=$1 mode=$2 denied=$3 allowed=$4 n=$5 log qtype=A
	[[ $a == *:* ]] && qtype=AAAA
	eq "$allowed pins $a" "$a" "$(sb_dig e1 +short "$qtype" "$allowed" | tail -n 1)"
	eq "$a $mode: $denied: the sandbox sees a reset" "reset" "$(conn "$a" "$mode" "$denied")"
	log=$(served_wait "$a" "$n")
	eq "$a $mode: $denied: the server saw the connection reset (ECONNRESET)" "reset" \
		"$(sed -n "${n}p" <<<"$log" | cut -d' ' -f2)"
	conn "$a" "$mode" "$allowed" >/dev/null
	log=$(served_wait "$a" $((n + 1)))
	has "$a $mode: $allowed: then the server took the next client" "$allowed" \
		"$(sed -n "$((n + 1))p" <<<"$log")"
	hasnt "$a $mode: the server never received $denied's bytes" "$denied" "$log"
}
round "$A4" tls denied.example example.com 1
round "$A4" http denied.example example.com 3
round "$A6" tls denied.example files.pythonhosted.org 1

rec=$(audit_wait 10 '"event":"sni"' '"name":"denied.example"' '"dst":"'"$A6"'"')
has "the refusals are audited as before (action reset)" '"action":"reset"' "$rec"
hasnt "netd logged no verdict errors" "verdict on packet" "$(cat "$NETD_LOG")"
t_summary
