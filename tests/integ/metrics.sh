#!/usr/bin/env bash
# Prometheus metrics: `promtool check metrics` passes on /metrics from the
# unix socket and from the metrics_listen TCP port; the families the issue
# names are there with their labels (denials by reason, DNS decisions by
# verdict/reason/rcode, per-rule domains, build_info, sandboxes, process_*,
# the pin latency histogram); a 10 s upload's bytes grow while it runs;
# the TCP port answers GET/HEAD /metrics only (404, 405), bounds its
# connections and times idle ones out.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndm$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
PORT=9153
netd_up "metrics_listen: 127.0.0.1:$PORT
audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox create" sb_create sb1 python-dev
SB1=$(sb_name sb1)

unix_metrics() { world_exec host curl -sS --unix-socket "$NETD_SOCKET" "http://netd$1"; }
tcp() { world_exec host curl -sS -o /dev/null -w '%{http_code}' "$@"; }
# metric TEXT NAME{LABELS} - the value of one sample (exact name and labels).
metric() { awk -v k="$2" '$1 == k {print $2}' <<<"$1"; }

# Some traffic for the families: an allowed and a denied name, a connection,
# a denied connect.
ok "an allowed name" sb_dig sb1 +short pypi.org
sb_dig sb1 +short example.com >/dev/null
eq "a connection through a wildcard rule" "api.openai.com ok" "$(sb_curl sb1 https://api.openai.com/)"
fail "a denied connect" sb_curl sb1 --connect-timeout 1 http://203.0.113.66:80/

# ---- promtool, both ways ---------------------------------------------------------------
m=$(unix_metrics /metrics)
out=$(promtool check metrics <<<"$m" 2>&1); rc=$?
eq "promtool check metrics: /metrics on the unix socket" "0 " "$rc $out"
eq "/v1/metrics is the same exposition" "$(grep -c '^# TYPE' <<<"$m")" "$(unix_metrics /v1/metrics | grep -c '^# TYPE')"
t=$(world_exec host curl -sS "http://127.0.0.1:$PORT/metrics")
out=$(promtool check metrics <<<"$t" 2>&1); rc=$?
eq "promtool check metrics: GET /metrics on metrics_listen" "0 " "$rc $out"
types=$(grep -c '^# TYPE' <<<"$t")
helps=$(grep -c '^# HELP' <<<"$t")
eq "every family has HELP and TYPE ($types)" "$types" "$helps"

has "netd_build_info with the version" 'netd_build_info{version="' "$t"
eq "netd_sandboxes" "1" "$(metric "$t" netd_sandboxes)"
for f in process_cpu_seconds_total process_resident_memory_bytes process_open_fds \
	process_max_fds process_start_time_seconds; do
	ok "$f present" test -n "$(metric "$t" "$f")"
done
ok "process_start_time_seconds is netd's start (after boot, before now)" python3 -c "
import sys, time
v = float(sys.argv[1]); sys.exit(0 if time.time() - 3600 < v <= time.time() else 1)" "$(metric "$t" process_start_time_seconds)"
hasnt "no pin latency quantile gauges" "netd_dns_pin_latency_" "$t"
has "pin latency histogram in seconds" 'netd_dns_pin_duration_seconds_bucket{le="+Inf"}' "$t"
ok "histogram count = pin batches" test "$(metric "$t" netd_dns_pin_duration_seconds_count)" = \
	"$(metric "$t" netd_dns_pin_batches_total)"
ok "DNS: the allowed query, by sandbox/verdict/reason/rcode" test "$(metric "$t" \
	"netd_dns_queries_total{sandbox=\"$SB1\",verdict=\"allow\",reason=\"policy\",rcode=\"NOERROR\"}")" -ge 1
ok "DNS: the denied query" test "$(metric "$t" \
	"netd_dns_queries_total{sandbox=\"$SB1\",verdict=\"deny\",reason=\"not-in-policy\",rcode=\"NXDOMAIN\"}")" -ge 1
ok "denials by sandbox and reason" test "$(metric "$t" \
	"netd_sandbox_denied_total{sandbox=\"$SB1\",reason=\"not-pinned\"}")" -ge 1
eq "no denials for an unseen reason" "0" "$(metric "$t" "netd_sandbox_denied_total{sandbox=\"$SB1\",reason=\"quota\"}")"
# api.openai.com came through the "*.openai.com" rule: the series is the rule's.
for ((i = 0; i < 50; i++)); do
	t=$(unix_metrics /metrics)
	[ -n "$(metric "$t" "netd_domain_conns_total{sandbox=\"$SB1\",domain=\"*.openai.com\"}")" ] && break
	sleep 0.2
done
eq "per-domain series keyed by the rule pattern" "1" \
	"$(metric "$t" "netd_domain_conns_total{sandbox=\"$SB1\",domain=\"*.openai.com\"}")"
hasnt "not by the queried name" 'domain="api.openai.com"' "$t"

# ---- bytes grow while a 10 s upload runs ---------------------------------------------
UPLOAD='
import socket, time
s = socket.create_connection(("198.51.100.7", 8080), timeout=30)
n = 1300000
s.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % n)
chunk = b"u" * 13000
for i in range(100):              # 100 x 13000 bytes over 10 s
    s.sendall(chunk)
    time.sleep(0.1)
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print(data.split(b"\r\n")[-1].decode().strip())
s.close()
'
before=$(metric "$(unix_metrics /metrics)" "netd_sandbox_bytes_out_total{sandbox=\"$SB1\"}")
sb_exec sb1 python3 -c "$UPLOAD" >"$WORLD_DIR/upload.out" 2>&1 &
UP_PID=$!
world_pid_track "$UP_PID"
samples=()
while kill -0 "$UP_PID" 2>/dev/null; do
	samples+=("$(metric "$(unix_metrics /metrics)" "netd_sandbox_bytes_out_total{sandbox=\"$SB1\"}")")
	sleep 1
done
wait "$UP_PID"
eq "upload: the server got 1300000 bytes" "1300000" "$(tail -1 "$WORLD_DIR/upload.out")"
grown=$(python3 -c '
import sys
v = [int(x) for x in sys.argv[2:]]
b = int(sys.argv[1])
mono = all(x <= y for x, y in zip(v, v[1:]))
rises = sum(1 for x, y in zip([b] + v, v) if y > x)
print("monotonic" if mono else "NOT monotonic", rises >= 2 and v[-1] - b > 300000)' "$before" "${samples[@]}")
eq "bytes_out grew while the upload ran, more than once, never down (${samples[*]})" "monotonic True" "$grown"

# ---- the TCP port: nothing but GET /metrics ---------------------------------------------
eq "GET /metrics: 200" "200" "$(tcp "http://127.0.0.1:$PORT/metrics")"
has "content type of the exposition format" "text/plain; version=0.0.4" \
	"$(world_exec host curl -sS -D - -o /dev/null "http://127.0.0.1:$PORT/metrics")"
eq "HEAD /metrics: 200, no body" "200 0" "$(world_exec host curl -sS -I -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$PORT/metrics")"
eq "GET /: 404" "404" "$(tcp "http://127.0.0.1:$PORT/")"
eq "GET /v1/status: 404 (no control API here)" "404" "$(tcp "http://127.0.0.1:$PORT/v1/status")"
eq "GET /v1/sandboxes: 404" "404" "$(tcp "http://127.0.0.1:$PORT/v1/sandboxes")"
eq "POST /metrics: 405" "405" "$(tcp -X POST -d x "http://127.0.0.1:$PORT/metrics")"
eq "DELETE /v1/sandboxes/X: 405" "405" "$(tcp -X DELETE "http://127.0.0.1:$PORT/v1/sandboxes/$SB1")"
has "405 says Allow: GET, HEAD" "Allow: GET, HEAD" \
	"$(world_exec host curl -sS -X PUT -D - -o /dev/null "http://127.0.0.1:$PORT/metrics")"
ok "the sandbox is still there" netd sandbox show "$SB1"

LIMITS='
import socket, sys, time
port = int(sys.argv[1])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
time.sleep(0.3)
extra = socket.create_connection(("127.0.0.1", port))
extra.settimeout(3)
try:
    d = extra.recv(10)
    print("17th closed" if d == b"" else "17th answered")
except ConnectionResetError:
    print("17th closed")
except socket.timeout:
    print("17th kept")
# Idle connections are closed after the read timeout.
idle[0].settimeout(15)
t0 = time.monotonic()
try:
    gone = idle[0].recv(10) == b""
except ConnectionResetError:
    gone = True
print("idle closed" if gone and time.monotonic() - t0 < 12 else "idle kept")
for s in idle:
    s.close()
'
out=$(world_exec host python3 -c "$LIMITS" "$PORT")
has "a 17th connection is closed at once (16 at most)" "17th closed" "$out"
has "an idle connection is closed by the read timeout" "idle closed" "$out"
sleep 0.5
eq "afterwards GET /metrics works again" "200" "$(tcp "http://127.0.0.1:$PORT/metrics")"
ok "netd alive" netd_alive
netd_down
t_summary
