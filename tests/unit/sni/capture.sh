#!/usr/bin/env bash
# capture.sh - record the first bytes real clients send, as test vectors for
# test_sni (root; run by hand, the results are committed):
#   tests/unit/sni/capture.sh        -> tests/unit/sni/*.bin, then gen_vectors.sh
#   tests/unit/sni/capture.sh NAME.. -> only those captures (the others' .bin
#                                       stay as committed: every run differs)
# Everything happens in a private netns (sni-cap-PID) with the documentation
# address 192.0.2.10 on its loopback: an openssl s_server (TLS) and a python
# http.server (plain HTTP), each behind recorder.py, which saves what the
# client sent first and relays the rest, so every handshake is a real one.
# Clients: curl, python ssl, openssl s_client, Go crypto/tls (golang-go),
# Chromium (headless, GREASE ECH: docs/sni.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns=sni-cap-$$
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
A=192.0.2.10
N=allowed.example.com
ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
# The servers are started with ip netns exec itself, not nsx: a function
# run with & is a subshell, whose PID ($!) is not the server's, and the
# cleanup then left the servers running.
nsx ip link set lo up
nsx ip addr add $A/32 dev lo

openssl req -x509 -newkey rsa:2048 -nodes -subj "/CN=$N" -days 1 \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
ip netns exec "$ns" openssl s_server -accept $A:4434 -cert "$tmp/cert.pem" -key "$tmp/key.pem" -www -quiet \
	</dev/null >/dev/null 2>&1 &
pids+=($!)
mkdir -p "$tmp/www" "$tmp/tls" "$tmp/http"
echo hello >"$tmp/www/index.html"
ip netns exec "$ns" python3 -m http.server --bind $A --directory "$tmp/www" 8081 >/dev/null 2>&1 &
pids+=($!)
ip netns exec "$ns" python3 "$here/recorder.py" $A 4433 4434 "$tmp/tls" &
pids+=($!)
ip netns exec "$ns" python3 "$here/recorder.py" $A 8080 8081 "$tmp/http" &
pids+=($!)
(cd "$tmp" && cp "$here/go_client.go" . && GOCACHE=$tmp/gocache GOFLAGS=-mod=mod \
	go build -o go_client go_client.go)
sleep 1

only=" $* "
# take tls|http NAME CMD...: run one client, save what it sent as NAME.bin
# (only the NAMEs given, if any were).
take() {
	local dir=$tmp/$1 name=$2 f n
	shift 2
	[ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
	n=$(($(ls "$dir" | wc -l) + 1))
	nsx timeout 10 "$@" </dev/null >/dev/null 2>&1 || true
	f=$dir/conn-$n.bin
	for _ in $(seq 50); do [ -s "$f" ] && break; sleep 0.1; done
	[ -s "$f" ] || { echo "capture: $name sent nothing" >&2; exit 1; }
	cp "$f" "$here/$name.bin"
	echo "  $name: $(stat -c %s "$f") bytes"
}
py_tls='import socket, ssl, sys
c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
s = c.wrap_socket(socket.create_connection(("'$A'", 4433)), server_hostname=sys.argv[1] or None)
s.close()'
take tls curl_tls curl -sk --resolve $N:4433:$A https://$N:4433/
take http curl_http curl -s --resolve $N:8080:$A http://$N:8080/
take http curl_h2c curl -s --http2-prior-knowledge --resolve $N:8080:$A http://$N:8080/
take tls python_tls python3 -c "$py_tls" $N
take tls python_nosni python3 -c "$py_tls" ""
take tls openssl_tls openssl s_client -connect $A:4433 -servername $N
take tls openssl_tls12 openssl s_client -connect $A:4433 -servername $N -tls1_2
# 512 is the smallest -max_send_frag; a name of 230 bytes makes the hello
# longer than that, so it goes out in two handshake records.
L=$(printf 'l%.0s' $(seq 56))
take tls openssl_frag openssl s_client -connect $A:4433 -servername $L.$L.$L.$L.example.com -max_send_frag 512
take tls openssl_nosni openssl s_client -connect $A:4433 -noservername
take tls go_tls "$tmp/go_client" $A:4433 $N
take http python_http python3 -c 'import http.client, sys
c = http.client.HTTPConnection("'$A'", 8080); c.request("GET", "/", headers={"Host": "'$N'"}); c.getresponse()'
# Chromium's first connection (it may open a second: last in the list).
# Root needs --no-sandbox; its profile is thrown away with $tmp.
take tls chromium_tls chromium --headless=new --no-sandbox --ignore-certificate-errors \
	--user-data-dir="$tmp/chromium" --no-first-run --disable-background-networking \
	--disable-component-update --host-resolver-rules="MAP $N $A" \
	--dump-dom https://$N:4433/
"$here/gen_vectors.sh"
