#!/usr/bin/env bash
# The API gateway at scale (issue 33): 1,000 sandboxes under one policy
# with a gateway rule.  Every one is created (through the API, as
# scale_netlink.sh does); a spread of them resolve the gateway name and get
# a request through (their own leaf, their own credential swap); one
# sandbox holds 1,000 kept-alive connections open through the gateway at
# once, all of which still answer; then netd's and the worker's resident
# memory must be within docs/performance.md's targets (netd <= 100 MiB at
# 5,000 sandboxes, the worker < 50 MiB with 1,000 open connections).  The
# create latencies are printed, not asserted (make bench compares them).
# GW_SCALE_N=N for another size.  It runs the release build (build/netd,
# which make test builds too): under ASan, shadow memory and the free
# quarantine make resident memory say nothing about netd's.
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${GW_SCALE_NETD:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_gw.sh

N=${GW_SCALE_N:-1000}
gw_world_up "ndgs$$"
PH=netd-placeholder-api-0000000001
SECRET=sk-scale-$RANDOM$RANDOM
mkdir -p "$WORLD_DIR/policies" "$WORLD_DIR/secrets"
printf '%s\n' "$SECRET" >"$WORLD_DIR/secrets/api"
chmod 0600 "$WORLD_DIR/secrets/api"
cat >"$WORLD_DIR/policies/gs.yaml" <<-YAML
name: gs
egress:
  - domains: [api.gw.dt.example]
    ports: [443]
    gateway: { credentials: [api] }
  - domains: [pypi.org]
    ports: [443]
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up "$(gw_gateway_yaml; gw_api_cred_yaml "$PH" "file: $WORLD_DIR/secrets/api")" ||
	{ echo "0 passed, 1 failed"; exit 1; }
netd ca export --out "$WORLD_DIR/netd-ca.pem" >/dev/null
B=$WORLD_DIR/netd-ca.pem

# ---- N sandboxes, through the API ---------------------------------------------------
mkdir -p "$WORLD_DIR/create"
create() {
	local i cfg=$WORLD_DIR/create.curl
	: >"$cfg"
	for ((i = $1; i < $2; i++)); do
		[ "$i" != "$1" ] && echo "next" >>"$cfg"
		printf 'unix-socket = "%s"\nurl = "http://netd/v1/sandboxes"\nrequest = "POST"\nheader = "Content-Type: application/json"\ndata = "{\\"name\\": \\"%s\\", \\"policy\\": \\"gs\\"}"\noutput = "%s"\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' \
			"$NETD_SOCKET" "$(sb_name "s$i")" "$WORLD_DIR/create/s$i" >>"$cfg"
	done
	curl -s -K "$cfg"
}
out=$(for ((b = 0; b < N; b += 100)); do create "$b" $((b + 100 < N ? b + 100 : N)); done)
eq "$N sandboxes with a gateway rule created" "$N" "$(grep -c '^201 ' <<<"$out")"
p50=$(awk '{print $2}' <<<"$out" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int(NR*0.5)]*1000}')
p99=$(awk '{print $2}' <<<"$out" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int(NR*0.99)]*1000}')
echo "# create through the API: p50 $p50 ms, p99 $p99 ms"

# ---- a spread of them through the gateway -----------------------------------------
through=0
for ((i = 0; i < N; i += N / 20)); do
	o=$(timeout 20 "$NETD_BIN" exec "$(sb_name "s$i")" -- env CURL_CA_BUNDLE="$B" curl -sS --max-time 10 \
		-H "Authorization: Bearer $PH" "https://api.gw.dt.example/v1/s$i" 2>&1)
	grep -q "\"path\":\"/v1/s$i\"" <<<"$o" && through=$((through + 1))
done
eq "20 sandboxes spread over the $N got a request through the gateway" 20 "$through"
eq "... the server got the secret for each" 20 "$(grep -c "auth=Bearer $SECRET" "$GW_NGINX_LOG")"

# ---- 1,000 open connections through the gateway ---------------------------------------
wpid=$(netd status | jq -r .gateway.worker_pid)
timeout 180 "$NETD_BIN" exec "$(sb_name s0)" -- env SSL_CERT_FILE="$B" "$WORLD_PYTHON" -c "
import resource, socket, ssl, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
ctx = ssl.create_default_context()
ss = [ctx.wrap_socket(socket.create_connection(('api.gw.dt.example', 443), timeout=30),
                      server_hostname='api.gw.dt.example') for i in range(1000)]
for s in ss:
    s.sendall(b'GET /v1/held HTTP/1.1\\r\\nHost: api.gw.dt.example\\r\\n\\r\\n')
print(sum(1 for s in ss if b' 200 ' in s.recv(4096)), flush=True)
time.sleep(4)   # all 1,000 still open while the worker's memory is read
" >"$WORLD_DIR/held.out" 2>&1 &
held=$!
rss_max=0 fds_max=0
while kill -0 "$held" 2>/dev/null; do
	r=$(awk '/^VmRSS:/ {print $2}' "/proc/$wpid/status" 2>/dev/null)
	f=$(ls "/proc/$wpid/fd" 2>/dev/null | wc -l)
	[ "${r:-0}" -gt "$rss_max" ] && rss_max=$r
	[ "$f" -gt "$fds_max" ] && fds_max=$f
	sleep 0.2
done
wait "$held"
eq "1,000 kept-alive connections open through the gateway at once, each answered" 1000 \
	"$(head -1 "$WORLD_DIR/held.out")"
ok "... the worker held them all at once ($fds_max fds)" test "$fds_max" -ge 2000
echo "# gateway worker: RSS peak $((rss_max / 1024)) MiB with 1,000 open connections"
ok "the worker's RSS with 1,000 open connections stays under 50 MiB ($((rss_max / 1024)) MiB)" \
	test "$rss_max" -lt $((50 * 1024))
nrss=$(awk '/^VmRSS:/ {print $2}' "/proc/$NETD_PID/status")
echo "# netd RSS with $N sandboxes: $((nrss / 1024)) MiB"
ok "netd's RSS with $N gateway sandboxes stays under 100 MiB ($((nrss / 1024)) MiB)" test "$nrss" -lt $((100 * 1024))
ok "netd and the worker still answer" netd_alive
eq "... the same worker" "$wpid" "$(netd status | jq -r .gateway.worker_pid)"

netd_down
t_summary
