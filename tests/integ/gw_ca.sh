#!/usr/bin/env bash
# The gateway's CA through the real daemon (docs/gateway.md): no CA on
# disk until someone asks; `netd ca export` then prints a PEM that openssl
# reads as a CA (CA:TRUE, pathlen 0, ECDSA P-256), with ca.key 0600 in
# STATE_DIR/gateway-ca/; --out writes the same bytes; a restart gives the
# same certificate; a key others may read is refused (exit 1, the daemon
# says why and keeps running) until it is 0600 again; half a CA is
# refused; usage and unreachable daemon exit statuses.  (Leaves are the
# gateway's own, checked in tests/unit/test_gw_ca.c.)
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

# status CMD... - CMD's exit status (its output dropped).
status() { "$@" >/dev/null 2>&1; echo $?; }

# ---- no daemon needed ---------------------------------------------------------------
for words in "ca" "ca export"; do
	# shellcheck disable=SC2086
	out=$("$NETD_BIN" $words --help 2>/dev/null); got=$?
	if [ "$got" = 0 ] && grep -qF "usage: netd ca export" <<<"$out"; then
		t_pass "netd $words --help: its usage on stdout, exit 0"
	else
		t_fail "netd $words --help" "exit $got: $out"
	fi
done
eq "netd ca without a subcommand: exit 2" 2 "$(status "$NETD_BIN" ca)"
eq "netd ca bogus: exit 2" 2 "$(status "$NETD_BIN" ca bogus)"
eq "netd ca export with an extra word: exit 2" 2 "$(status "$NETD_BIN" ca export extra)"
eq "netd ca export --out without a file: exit 2" 2 "$(status "$NETD_BIN" ca export --out)"
eq "netd ca export with no daemon: exit 5" 5 "$(status "$NETD_BIN" --socket /nonexistent/netd.sock ca export)"

world_up "ndg$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
CADIR=$WORLD_DIR/state/gateway-ca
# The world's policies have no gateway: rule: no worker, and status says why.
eq "no policy has gateway:: status says the worker is idle and why" \
	"true idle: no policy has a gateway: rule 0" \
	"$(netd status | jq -r '"\(.gateway.enabled) \(.gateway.worker) \(.gateway.worker_pid)"')"
eq "... metrics: not wanted, not up" "netd_gateway_worker_wanted 0 netd_gateway_worker_up 0 " \
	"$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics |
		grep -E '^netd_gateway_worker_(wanted|up) ' | sort -r | tr '\n' ' ')"

fail "no CA on disk before anyone asks for it" test -e "$CADIR"
out=$(netd ca export 2>&1); got=$?
eq "netd ca export exits 0" 0 "$got"
printf '%s\n' "$out" >"$WORLD_DIR/ca1.pem"
text=$(openssl x509 -in "$WORLD_DIR/ca1.pem" -noout -text 2>&1)
has "openssl reads it: CA:TRUE, pathlen 0" "CA:TRUE, pathlen:0" "$text"
has "keyCertSign, cRLSign" "Certificate Sign, CRL Sign" "$text"
has "ECDSA P-256" "NIST CURVE: P-256" "$text"
has "named after netd" "O = netd, CN = netd gateway CA (" "$text"
eq "ca.key is 0600" 600 "$(stat -c %a "$CADIR/ca.key")"
eq "ca.pem is 0644" 644 "$(stat -c %a "$CADIR/ca.pem")"
eq "the directory is 0700" 700 "$(stat -c %a "$CADIR")"
ok "what it printed is ca.pem" cmp "$WORLD_DIR/ca1.pem" "$CADIR/ca.pem"
ok "ca.key holds the certificate's key" test "$(openssl pkey -in "$CADIR/ca.key" -pubout)" = \
	"$(openssl x509 -in "$WORLD_DIR/ca1.pem" -noout -pubkey)"
ok "openssl verifies it as a self-signed CA" openssl verify -CAfile "$WORLD_DIR/ca1.pem" "$WORLD_DIR/ca1.pem"
ok "netd ca export --out FILE" netd ca export --out "$WORLD_DIR/out.pem"
ok "--out wrote the same bytes" cmp "$WORLD_DIR/ca1.pem" "$WORLD_DIR/out.pem"
eq "--out's file is 0644" 644 "$(stat -c %a "$WORLD_DIR/out.pem")"
hasnt "no key material in netd's log" "PRIVATE KEY" "$(cat "$NETD_LOG")"
has "netd logs that it made the CA" "gateway CA: made $CADIR/ca.pem" "$(cat "$NETD_LOG")"

# A restart: the same CA, loaded.
netd_down
netd_up || { echo "netd did not come back"; t_summary; exit 1; }
ok "after a restart: the same certificate" cmp "$WORLD_DIR/ca1.pem" <(netd ca export)
has "netd logs that it loaded the CA" "gateway CA: loaded $CADIR/ca.pem" "$(cat "$NETD_LOG")"

# A key others may read: refused on the next start's first request; the daemon stays.
netd_down
chmod 0644 "$CADIR/ca.key"
netd_up || { echo "netd did not come back"; t_summary; exit 1; }
out=$(netd ca export 2>&1); got=$?
eq "a key readable by others: exit 1" 1 "$got"
has "the daemon says why" "mode 0644" "$out"
hasnt "and prints no certificate" "BEGIN CERTIFICATE" "$out"
ok "netd keeps running" netd_alive
chmod 0600 "$CADIR/ca.key"
ok "0600 again: the same CA" cmp "$WORLD_DIR/ca1.pem" <(netd ca export)

# Half a CA: the certificate without its key.
netd_down
mv "$CADIR/ca.key" "$WORLD_DIR/ca.key.saved"
netd_up || { echo "netd did not come back"; t_summary; exit 1; }
out=$(netd ca export 2>&1); got=$?
eq "half a CA: exit 1" 1 "$got"
has "the daemon says so" "half a CA" "$out"
fail "no new key was made beside the old certificate" test -e "$CADIR/ca.key"
netd_down

t_summary
