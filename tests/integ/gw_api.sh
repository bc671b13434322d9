#!/usr/bin/env bash
# The API gateway (issue 33, docs/gateway.md) end to end in the test world:
# real upstreams (nginx-light for HTTP/1.1 and HTTP/2, gw_stream.py for SSE
# and WebSocket: tests/integ/lib_gw.sh), real clients in the sandbox (curl
# over HTTP/1.1 and HTTP/2, python3 urllib and http.client, node fetch),
# trusting netd's CA.
#   - the server receives the real secret; the sandbox holds the placeholder
#     only, and no log, audit record, metric or status of netd carries it;
#   - the placeholder to another gateway name is refused (403
#     credential-misdirected); to a name without gateway: (end-to-end TLS,
#     the server's own certificate) it arrives as the useless placeholder;
#   - SNI api.gw with Host other.gw is 421; a method or path outside the
#     rule is 403; past the rate 429 with Retry-After, another sandbox
#     unaffected;
#   - SSE events come through one by one; a WebSocket upgrade passes;
#   - an upstream whose certificate nobody trusts is 502, audited;
#   - the worker killed: connections are refused, nothing reaches the server
#     directly, netd starts another;
#   - a reload rotates the secret; a reload removing gateway: returns the
#     name to end-to-end TLS.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_gw.sh

gw_world_up "ndgw$$"

SECRET=sk-real-$RANDOM$RANDOM-do-not-leak
SECRET2=sk-rotated-$RANDOM$RANDOM-do-not-leak
OTHER_SECRET=other-real-$RANDOM$RANDOM
PH=netd-placeholder-api-0000000001
PH_OTHER=netd-placeholder-other-000000001
mkdir -p "$WORLD_DIR/secrets" "$WORLD_DIR/policies"
chmod 0700 "$WORLD_DIR/secrets"
printf '%s\n' "$SECRET" >"$WORLD_DIR/secrets/api"
chmod 0600 "$WORLD_DIR/secrets/api"
write_policy() {
	cat >"$WORLD_DIR/policies/gw.yaml" <<-YAML
	name: gw
	egress:
	  - domains: [api.gw.dt.example]
	    ports: [443]
	    gateway:
	      credentials: [api]
	      rate: 4/s burst 6
	      methods: [GET, POST]
	      paths: ["/v1/*", /sse, /ws]
	  - domains: [other.gw.dt.example]
	    ports: [443]
	    gateway: { credentials: [other] }
	  - domains: [sse.gw.dt.example, badcert.gw.dt.example, silent.gw.dt.example]
	    ports: [443]
	    gateway: {}
	  - domains: [plain.gw.dt.example]
	    ports: [443]
	$1
	YAML
}
write_policy ""
NETD_POLICIES=$WORLD_DIR/policies
netd_up "$(gw_gateway_yaml "connect_timeout: 2"; cat <<-YAML
credentials:
  api:
    header: Authorization
    format: "Bearer {secret}"
    placeholder: $PH
    hosts: [api.gw.dt.example, sse.gw.dt.example]
    file: $WORLD_DIR/secrets/api
  other:
    header: X-Api-Key
    placeholder: $PH_OTHER
    hosts: [other.gw.dt.example]
    value: $OTHER_SECRET
YAML
)" || { echo "0 passed, 1 failed"; exit 1; }

ok "sandbox create" sb_create g1 gw
ok "sandbox create (a second sandbox)" sb_create g2 gw
netd ca export --out "$WORLD_DIR/netd-ca.pem" >/dev/null
cat "$WORLD_CA" "$WORLD_DIR/netd-ca.pem" >"$WORLD_DIR/bundle.pem"
B=$WORLD_DIR/bundle.pem
status=$(netd status)
has "status: the gateway worker is up" '"worker_up": true' "$status"

# gcurl SHORT ARGS... - curl in the sandbox trusting netd's CA (and the world's).
gcurl() {
	local n=$1
	shift
	sb_exec "$n" env CURL_CA_BUNDLE="$B" curl -sS --connect-timeout 3 --max-time 15 "$@"
}
# header NAME - the value of response header NAME in curl -i output on stdin.
header() { tr -d '\r' | sed -n "s/^$1: //Ip" | head -1; }
nginx_saw() { grep -F -- "$1" "$GW_NGINX_LOG" | tail -1; }

eq "g1: api.gw resolves" 198.51.100.60 "$(sb_dig g1 +short api.gw.dt.example)"

# ---- the secret goes where it belongs ------------------------------------------
# Every packet in the sandbox's netns while it calls the API (AF_PACKET, all
# interfaces): the secret must not be in any of them.
ip netns exec "$(sb_name g1)" "$WORLD_PYTHON" -c "
import socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.settimeout(0.2)
open('$WORLD_DIR/cap.ready', 'w').close()
end = time.time() + 8
with open('$WORLD_DIR/cap.bin', 'wb') as f:
    while time.time() < end:
        try: f.write(s.recv(65535))
        except socket.timeout: pass
" &
cap=$!
for i in $(seq 1 50); do [ -e "$WORLD_DIR/cap.ready" ] && break; sleep 0.1; done
out=$(gcurl g1 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/models)
has "curl HTTP/1.1: 200 through the gateway" '"path":"/v1/models"' "$out"
wait "$cap"
ok "the capture inside the sandbox saw the connection (its ClientHello's name)" \
	grep -qa "api.gw.dt.example" "$WORLD_DIR/cap.bin"
ok "... and the secret in none of its packets" bash -c "! grep -qaF -- '$SECRET' '$WORLD_DIR/cap.bin'"
hasnt "the sandbox's environment holds no secret" "$SECRET" "$(sb_exec g1 env)"
has "nginx received the real secret" "auth=Bearer $SECRET" "$(nginx_saw 'GET /v1/models')"
hasnt "the response holds no secret" "$SECRET" "$out"
out=$(gcurl g1 --http2 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/h2)
has "curl HTTP/2: 200 through the gateway" '"proto":"HTTP/2.0"' "$out"
has "nginx received the real secret over HTTP/2" "auth=Bearer $SECRET" "$(nginx_saw 'GET /v1/h2')"
# An upstream that shows the credential back (nginx's /v1/echo-auth: a header
# and the body): the sandbox gets it masked byte for byte, both protocols
# (from g2: g1's requests here are counted against its rate below).
mask=$(printf '%*s' ${#SECRET} '' | tr ' ' '*')
for v in --http1.1 --http2; do
	out=$(gcurl g2 "$v" -i -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/echo-auth)
	has "an upstream that echoes the credential ($v): the body's secret masked" \
		"auth=Bearer $mask" "$out"
	has "... and the header's" "Bearer $mask" "$(grep -i '^x-echo:' <<<"$out")"
	hasnt "... the secret in neither" "$SECRET" "$out"
done
has "... while nginx received the real secret" "auth=Bearer $SECRET" "$(nginx_saw 'GET /v1/echo-auth')"
# The same echo compressed (gzip, which the masking cannot read): a request
# that carries a secret asks for no content coding (Accept-Encoding:
# identity, whatever the sandbox asked), so the echo comes back as bytes and
# masked; a request without one keeps its Accept-Encoding.
for v in --http1.1 --http2; do
	out=$(gcurl g2 "$v" --compressed -i -H "Authorization: Bearer $PH" \
		https://api.gw.dt.example/v1/echo-auth-gz"${v#--}")
	hasnt "a compressing upstream that echoes the credential ($v): the secret never comes back" \
		"$SECRET" "$out"
	has "... the body's masked" "auth=Bearer $mask" "$out"
	has "... nginx was asked for identity, not what curl asked" "ae=identity" \
		"$(nginx_saw "GET /v1/echo-auth-gz${v#--}")"
done
out=$(gcurl g2 --compressed -i https://api.gw.dt.example/v1/echo-auth-gz-plain)
has "a request without a secret keeps its Accept-Encoding" "ae=deflate, gzip" \
	"$(nginx_saw "GET /v1/echo-auth-gz-plain")"
# A WebSocket upgrade with a secret offers no compression either
# (permessage-deflate); nginx answers 200, so HTTP goes on.  (g2's rate
# is 4/s burst 6: a pause to refill it.)
sleep 1.5
wsx=(-H "Upgrade: websocket" -H "Connection: Upgrade" -H "Sec-WebSocket-Version: 13"
	-H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" -H "Sec-WebSocket-Extensions: permessage-deflate")
gcurl g2 --http1.1 "${wsx[@]}" -H "Authorization: Bearer $PH" "https://api.gw.dt.example/ws?secret" >/dev/null
has "a WebSocket upgrade with a secret: no Sec-WebSocket-Extensions upstream" "wsx=- " \
	"$(nginx_saw "GET /ws?secret") "
gcurl g2 --http1.1 "${wsx[@]}" "https://api.gw.dt.example/ws?plain" >/dev/null
has "... one without keeps it" "wsx=permessage-deflate" "$(nginx_saw "GET /ws?plain")"
out=$(gcurl g1 --http1.1 -X POST --data-binary @/etc/os-release -H "Authorization: Bearer $PH" \
	https://api.gw.dt.example/v1/post)
has "curl POST with a body" '"method":"POST"' "$out"
issuer=$(sb_exec g1 sh -c "openssl s_client -connect 198.51.100.60:443 -servername api.gw.dt.example </dev/null 2>/dev/null | openssl x509 -noout -issuer")
has "the sandbox sees netd's leaf for api.gw" "netd gateway CA" "$issuer"

py=$(sb_exec g1 env SSL_CERT_FILE="$B" "$WORLD_PYTHON" -c "
import urllib.request, http.client, ssl
r = urllib.request.urlopen(urllib.request.Request('https://api.gw.dt.example/v1/py-urllib',
    headers={'Authorization': 'Bearer $PH'}), timeout=10)
print(r.status, r.read().decode())
c = http.client.HTTPSConnection('api.gw.dt.example', 443, timeout=10, context=ssl.create_default_context())
for i in range(3):
    c.request('GET', '/v1/py-keepalive', headers={'Authorization': 'Bearer $PH'})
    r = c.getresponse(); print(r.status, r.read().decode())
" 2>&1)
has "python urllib" '200 {"host":"api.gw.dt.example","path":"/v1/py-urllib"' "$py"
eq "python http.client: three requests on one kept-alive connection" 3 \
	"$(grep -c '^200 .*py-keepalive' <<<"$py")"
has "nginx received the secret from python" "auth=Bearer $SECRET" "$(nginx_saw 'GET /v1/py-keepalive')"
node=$(sb_exec g1 env NODE_EXTRA_CA_CERTS="$B" node -e "
fetch('https://api.gw.dt.example/v1/node', {headers: {Authorization: 'Bearer $PH'}})
  .then(r => r.text().then(t => console.log(r.status, t))).catch(e => console.log('ERR', e.cause || e))
" 2>&1)
has "node fetch" '200 {"host":"api.gw.dt.example","path":"/v1/node"' "$node"
has "nginx received the secret from node" "auth=Bearer $SECRET" "$(nginx_saw 'GET /v1/node')"

# ---- the placeholder anywhere else ----------------------------------------------
out=$(gcurl g1 -i --http1.1 -H "Authorization: Bearer $PH" https://other.gw.dt.example/v1/steal)
has "placeholder to another credential's name: 403" "HTTP/1.1 403" "$out"
eq "... X-Netd-Reason credential-misdirected" credential-misdirected "$(header X-Netd-Reason <<<"$out")"
has "... the body says where it may go" "to api.gw.dt.example" "$out"
hasnt "... never reached the server" "/v1/steal" "$(cat "$GW_NGINX_LOG")"
out=$(gcurl g1 -H "X-Api-Key: $PH_OTHER" https://other.gw.dt.example/v1/other)
has "other.gw with its own placeholder: 200" '"path":"/v1/other"' "$out"
has "... the server got other's secret" "key=$OTHER_SECRET" "$(nginx_saw 'GET /v1/other')"
out=$(gcurl g1 -H "Authorization: Bearer $PH" https://plain.gw.dt.example/v1/plain)
has "a name without gateway: answered by the server itself" '"path":"/v1/plain"' "$out"
has "... which got only the useless placeholder" "auth=Bearer $PH" "$(nginx_saw 'GET /v1/plain')"
issuer=$(sb_exec g1 sh -c "openssl s_client -connect 198.51.100.62:443 -servername plain.gw.dt.example </dev/null 2>/dev/null | openssl x509 -noout -issuer")
has "... over end-to-end TLS (the server's own certificate)" "netd test world CA" "$issuer"

# ---- checks on each request -------------------------------------------------------
out=$(gcurl g1 -i --http1.1 -H "Host: other.gw.dt.example" https://api.gw.dt.example/v1/front)
has "SNI api.gw, Host other.gw: 421" "HTTP/1.1 421" "$out"
out=$(gcurl g1 -i --http2 -H "Host: other.gw.dt.example" https://api.gw.dt.example/v1/front2)
has "... over HTTP/2 too" "HTTP/2 421" "$out"
out=$(gcurl g1 -i --http1.1 -X DELETE https://api.gw.dt.example/v1/models)
has "DELETE is not in methods: 403" "HTTP/1.1 403" "$out"
eq "... method-denied" method-denied "$(header X-Netd-Reason <<<"$out")"
has "... the body says so, as JSON" '"error":"method-denied"' "$out"
out=$(gcurl g1 -i https://api.gw.dt.example/v2/models)
eq "/v2 is not in paths: 403 path-denied" path-denied "$(header X-Netd-Reason <<<"$out")"
# 20 requests over one kept-alive connection: quicker than the rate refills
heads=$(gcurl g1 -D - $(printf 'https://api.gw.dt.example/v1/rate %.0s' $(seq 1 20)))
codes=$(grep -o '^HTTP/[0-9.]* [0-9]*' <<<"$heads" | awk '{print $2}')
ok "past the rate: 429s ($(sort <<<"$codes" | uniq -c | tr '\n' ' '))" grep -q '^429$' <<<"$codes"
ok "... with Retry-After" test -n "$(header Retry-After <<<"$heads")"
has "another sandbox is not limited by g1's rate" '"path":"/v1/other-sandbox"' \
	"$(gcurl g2 https://api.gw.dt.example/v1/other-sandbox)"

# ---- streams ------------------------------------------------------------------------
sse=$(sb_exec g1 env SSL_CERT_FILE="$B" "$WORLD_PYTHON" -c "
import http.client, json, ssl, time
c = http.client.HTTPSConnection('sse.gw.dt.example', 443, timeout=10, context=ssl.create_default_context())
c.request('GET', '/sse?n=5&gap=300')
r = c.getresponse()
got = []
while len(got) < 5:
    line = r.fp.readline()
    if not line: break
    if line.startswith(b'data: '):
        got.append((json.loads(line[6:]), time.time()))
ok = all(got[i][1] < got[i + 1][0]['sent'] for i in range(len(got) - 1))
print(len(got), 'streamed' if ok else 'bunched')
" 2>&1)
eq "SSE: five events, each received before the next was sent" "5 streamed" "$sse"
ws=$(sb_exec g1 env SSL_CERT_FILE="$B" "$WORLD_PYTHON" -c "
import socket, ssl, base64, os
s = ssl.create_default_context().wrap_socket(socket.create_connection(('sse.gw.dt.example', 443), timeout=10), server_hostname='sse.gw.dt.example')
k = base64.b64encode(os.urandom(16)).decode()
s.sendall(('GET /ws HTTP/1.1\r\nHost: sse.gw.dt.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n' % k).encode())
head = b''
while b'\r\n\r\n' not in head: head += s.recv(1)
m = os.urandom(4); p = b'hello'
s.sendall(bytes([0x81, 0x80 | len(p)]) + m + bytes(b ^ m[i % 4] for i, b in enumerate(p)))
f = s.recv(64)
print(head.split(b'\r\n')[0].decode(), f[2:].decode())
" 2>&1)
eq "WebSocket: upgraded and echoed through the gateway" "HTTP/1.1 101 Switching Protocols echo: hello" "$ws"

# ---- upstream failure -------------------------------------------------------------------
out=$(gcurl g1 -i --http1.1 https://badcert.gw.dt.example/v1/x)
has "an upstream nobody trusts: 502" "HTTP/1.1 502" "$out"
eq "... upstream-untrusted" upstream-untrusted "$(header X-Netd-Reason <<<"$out")"
has "... audited" '"reason":"upstream-untrusted"' \
	"$(audit_wait 5 '"event":"http"' '"host":"badcert.gw.dt.example"')"

out=$(gcurl g1 -i --http1.1 https://silent.gw.dt.example/v1/x)
has "an upstream that never answers: 504" "HTTP/1.1 504" "$out"
eq "... upstream-timeout" upstream-timeout "$(header X-Netd-Reason <<<"$out")"

# ---- records --------------------------------------------------------------------------------
rec=$(audit_wait 5 '"event":"http"' '"path":"/v1/models"' '"status":200')
has "http record: sandbox" "\"sandbox\":\"$(sb_name g1)\"" "$rec"
has "http record: credential by name" '"credential":"api"' "$rec"
has "http record: upstream address" '"upstream":"198.51.100.60:443"' "$rec"
has "http record for the misdirected placeholder" '"reason":"credential-misdirected"' \
	"$(audit_wait 5 '"event":"http"' '"path":"/v1/steal"')"
hasnt "no query string in records" "?n=5" "$(audit_grep '"event":"http"')"
out=$(netd audit --file "$NETD_AUDIT" --event http --sandbox "$(sb_name g1)" 2>&1)
has "netd audit --event http shows them" "GET /v1/models 200" "$out"
has "... refusals with their reason" "421 host-mismatch" "$out"
has "conn records still account the steered connections" '"dport":443' \
	"$(audit_wait 10 '"event":"conn"' '"dst":"198.51.100.60"')"
for where in "$NETD_AUDIT" "$NETD_LOG"; do
	hasnt "the secret is not in ${where##*/}" "$SECRET" "$(cat "$where")"
	hasnt "other's secret is not in ${where##*/}" "$OTHER_SECRET" "$(cat "$where")"
done
hasnt "the secret is not in netd status" "$SECRET" "$(netd status)"
metrics=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/metrics)
has "metrics: requests by sandbox, host and status" \
	"netd_gateway_requests_total{sandbox=\"$(sb_name g1)\",host=\"api.gw.dt.example\",status=\"200\"}" "$metrics"
has "metrics: the latency histogram" "netd_gateway_request_duration_seconds_bucket" "$metrics"
hasnt "the secret is not in the metrics" "$SECRET" "$metrics"
hasnt "metrics label hosts by the connection's name, never a Host the sandbox made up" \
	'host="other.gw.dt.example",status="421"' "$metrics"

# ---- the worker dies ------------------------------------------------------------------------
wpid=$(netd status | jq -r .gateway.worker_pid)
ok "the worker runs as an unprivileged user" test "$(stat -c %U /proc/"$wpid")" = nobody
has "... with no capabilities" "CapEff:	0000000000000000" "$(cat /proc/"$wpid"/status)"
has "... under seccomp" "Seccomp:	2" "$(cat /proc/"$wpid"/status)"
# A worker that hangs: steered connections wait and fail, none goes around it.
kill -STOP "$wpid"
out=$(gcurl g1 --max-time 3 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/while-stopped 2>&1)
hasnt "with the worker stopped, nothing reaches the server" "/v1/while-stopped" "$(cat "$GW_NGINX_LOG")"
kill -CONT "$wpid"
# A worker that dies: refused until netd starts another (netd is held
# stopped meanwhile, so the window cannot close before we look).
kill -STOP "$NETD_PID"
kill -KILL "$wpid"
for i in $(seq 1 50); do [ -e "/proc/$wpid/status" ] && grep -q '^State:.*Z' "/proc/$wpid/status" && break; sleep 0.02; done
if ip netns exec "$(sb_name g1)" bash -c 'exec 3<>/dev/tcp/198.51.100.60/443' 2>/dev/null; then
	refused=connected
else
	refused=refused
fi
kill -CONT "$NETD_PID"
eq "with the worker dead, a steered connection is refused" refused "$refused"
gcurl g1 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/while-dead >/dev/null 2>&1
hasnt "... and nothing reached the server without the gateway" \
	"/v1/while-dead HTTP/2.0 host=api.gw.dt.example auth=Bearer $PH" "$(cat "$GW_NGINX_LOG")"
states=""
for i in $(seq 1 50); do
	read -r n st < <(netd status | jq -r '"\(.gateway.worker_pid) \(.gateway.worker)"')
	states="$states $st"
	[ "$n" != 0 ] && [ "$n" != "$wpid" ] && break
	sleep 0.1
done
ok "netd started another worker ($wpid -> $n)" test "$n" != 0 -a "$n" != "$wpid"
eq "... status said restarting, then running, never failed ($states)" "" \
	"$(tr ' ' '\n' <<<"$states" | grep -vxE 'restarting|running|' )"
eq "... running at the end" running "$st"
has "... which serves again" '"path":"/v1/after"' \
	"$(gcurl g1 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/after)"

# A worker that keeps ending: each one killed as soon as it is there (the
# pause doubles: 200, 400, 800, then 1,600 ms); while it is down, status is
# degraded and says so; once one runs again, ok.  (`netd status` prints a
# degraded status's warnings on stderr too.)
for k in 1 2 3 4; do
	kill -KILL "$n"
	last=$n
	[ "$k" = 4 ] && break
	for i in $(seq 1 100); do
		n=$(netd status 2>/dev/null | jq -r .gateway.worker_pid)
		[ "$n" != 0 ] && [ "$n" != "$last" ] && break
		sleep 0.05
	done
done
seen=""
for i in $(seq 1 40); do
	seen=$(netd status 2>/dev/null |
		jq -r 'select(.gateway.worker_pid == 0) | "\(.status) \(.gateway.worker) \(.warnings | join("|"))"')
	[ -n "$seen" ] && break
	sleep 0.02
done
has "a worker that keeps ending: status is degraded while it is down" \
	"degraded restarting the gateway worker keeps ending" "$seen"
for i in $(seq 1 100); do
	[ "$(netd status 2>/dev/null | jq -r .gateway.worker)" = running ] && break
	sleep 0.05
done
eq "... and ok once one runs again" "running ok []" "$(netd status | jq -c -r '"\(.gateway.worker) \(.status) \(.warnings)"')"

# ---- reloads ---------------------------------------------------------------------------------
# A connection kept alive across the rotation: its next request has the new
# key (a new user found a busy connection kept the revoked one for ever).
rm -f "$WORLD_DIR/held.1" "$WORLD_DIR/held.go"
sb_exec g1 env SSL_CERT_FILE="$B" "$WORLD_PYTHON" -c "
import http.client, os, ssl, time
c = http.client.HTTPSConnection('api.gw.dt.example', 443, timeout=20, context=ssl.create_default_context())
c.request('GET', '/v1/held-before', headers={'Authorization': 'Bearer $PH'}); c.getresponse().read()
open('$WORLD_DIR/held.1', 'w').close()
while not os.path.exists('$WORLD_DIR/held.go'): time.sleep(0.05)
c.request('GET', '/v1/held-after', headers={'Authorization': 'Bearer $PH'}); print(c.getresponse().status)
" >"$WORLD_DIR/held.out" 2>&1 &
held=$!
for i in $(seq 1 100); do [ -e "$WORLD_DIR/held.1" ] && break; sleep 0.1; done
printf '%s\n' "$SECRET2" >"$WORLD_DIR/secrets/api"
out=$(netd policy reload --json)
eq "policy reload: two credentials read again, one changed" "2 1" \
	"$(jq -r '"\(.credentials_read) \(.credentials_changed)"' <<<"$out")"
touch "$WORLD_DIR/held.go"
wait "$held"
has "the kept-alive connection's next request carries the rotated secret" \
	"auth=Bearer $SECRET2" "$(nginx_saw 'GET /v1/held-after')"
gcurl g1 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/rotated >/dev/null
has "a new connection too" "auth=Bearer $SECRET2" "$(nginx_saw 'GET /v1/rotated')"
# A wildcard that names api.gw too, with a long min_ttl: api.gw's address
# and port still go through the gateway only (one element, in gw4, for the
# wildcard's longer timeout), never a pin in pin4 that would outlive the
# gateway's and let the sandbox past its checks and records.
write_policy '  - domains: ["*.gw.dt.example"]
    ports: [443]
    min_ttl: 3600'
ok "policy reload (a wildcard over the gateway's names, min_ttl 3600)" netd policy reload
eq "... g2: api.gw resolves" 198.51.100.60 "$(sb_dig g2 +short api.gw.dt.example)"
eq "... no plain pin for api.gw's address and port" "" \
	"$(sb_pins "$(sb_name g2)" | grep '^198\.51\.100\.60 \. tcp \. 443 ')"
sb_dig g2 +short plain.gw.dt.example >/dev/null
has "... while plain.gw, which no gateway rule names, has its plain pin, for 3600 s" \
	"198.51.100.62 . tcp . 443 timeout 3600s" "$(sb_pins "$(sb_name g2)")"
gwel=$(world_exec host nft -j list set inet netd gw4 | jq -r --arg a "$(sb_field "$(sb_name g2)" ipv4)" \
	'.nftables[] | select(.set) | .set.elem // [] | .[] | select(.elem.val.concat[0] == $a and
	 .elem.val.concat[1] == "198.51.100.60" and .elem.val.concat[2] == 443) | .elem.timeout')
eq "... the gateway's element for it, with the wildcard's 3600 s" 3600 "$gwel"
has "... and a request still goes through the gateway, its secret swapped in" '"path":"/v1/wild"' \
	"$(gcurl g2 -H "Authorization: Bearer $PH" https://api.gw.dt.example/v1/wild)"
has "... nginx got the secret" "auth=Bearer $SECRET2" "$(nginx_saw 'GET /v1/wild')"
cat >"$WORLD_DIR/policies/gw.yaml" <<-YAML
name: gw
egress:
  - domains: [api.gw.dt.example, plain.gw.dt.example]
    ports: [443]
YAML
ok "policy reload (gateway: removed)" netd policy reload
sb_dig g1 +short api.gw.dt.example >/dev/null
issuer=$(sb_exec g1 sh -c "openssl s_client -connect 198.51.100.60:443 -servername api.gw.dt.example </dev/null 2>/dev/null | openssl x509 -noout -issuer")
has "without gateway: api.gw is end-to-end TLS again" "netd test world CA" "$issuer"

netd_down
t_summary
