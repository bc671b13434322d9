#!/usr/bin/env bash
# gateway.sh - the API gateway's section of `make bench` (issue 33;
# BENCH_SECTIONS=gateway tests/bench/run.sh runs only this): the same HTTPS
# server reached straight, through netd's gateway, through squid's ssl_bump
# and through mitmproxy, side by side, one run, on this machine.
#
# Private world only (tests/world.sh, tests/integ/lib_gw.sh): nginx-light on
# api.gw.dt.example (198.51.100.60, HTTP/1.1 and HTTP/2) and gw_stream.py on
# sse.gw.dt.example (198.51.100.63, SSE) in the world's "internet".
#   netd        sandbox g, policy gwb: both names with gateway: and a
#               credential whose placeholder every request carries (so each
#               request is checked and its header rewritten); the client
#               trusts netd's CA.  Its baseline: sandbox d, policy direct,
#               the same names without gateway: (end-to-end TLS, netd's
#               ruleset on the path).
#   squid       Debian's squid-openssl, `https_port ... intercept ssl-bump`
#               (peek at step 1, then bump), leaves from its own CA by
#               security_file_certgen (a db in the world's dir), no cache,
#               no access log, `-N`, by PID; in netns PREFIX-px, whose nft
#               redirects client netns PREFIX-cq's port 443 to it.
#   mitmproxy   Debian's mitmdump --mode transparent, its own confdir (CA)
#               in the world's dir, stream_large_bodies=1 (streams SSE), -q;
#               PREFIX-px redirects PREFIX-cm's port 443 to it.
#   Their baseline: client netns PREFIX-cs routed through PREFIX-px
#               with no redirect.
# Every client is in a netns of its own behind a veth, resolving the names
# through the world's resolver (netd's sandboxes: through netd).
#
# Figures (h2load from nghttp2-client; tests/bench/gw_client.py):
#   h1 req/s    HTTP/1.1, BENCH_GW_CONNS (16) kept-alive connections, one
#               request at a time each, BENCH_GW_SECONDS (10) s
#   h2 req/s    HTTP/2, 4 connections x 16 streams (squid speaks no h2: n/a)
#   p50/p99     one kept-alive connection, one request at a time,
#               BENCH_GW_N (3000) requests (h2load --log-file: each
#               request's time); "+p50"/"+p99": above the path's baseline
#   conn/s      new TLS connections, one request each (Connection: close),
#               8 at a time, BENCH_GW_NEWCONN (1000) connections
#   ttfb        an SSE request on a kept-alive connection: request written
#               -> first event read, p50/p99; "ev" the later events' delay
#               from the server's send to the client's read
#   RSS         the proxy's VmRSS (netd: the gateway worker's) at start and
#               with BENCH_GW_HOLD (1000) kept-alive connections open
# The machine's 2 cores are shared by client, proxy, server and kernel:
# req/s is the whole path's, not the proxy's alone.  Prints figures, asserts
# nothing about time; a path that does not start or answer fails the bench
# (exit 1, the reason on stderr), never a zero row.
#   BENCH_GW_SECONDS=10 tests/bench/gateway.sh        (root; build/netd first)
set -uo pipefail
cd "$(dirname "$0")/../.."
NETD_BIN=${NETD_BIN:-$PWD/build/netd}
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_gw.sh
. tests/bench/lib_ns.sh

SECS=${BENCH_GW_SECONDS:-10}
CONNS=${BENCH_GW_CONNS:-16}
N=${BENCH_GW_N:-3000}
NEWCONN=${BENCH_GW_NEWCONN:-1000}
HOLD=${BENCH_GW_HOLD:-1000}
CERTGEN=/usr/lib/squid/security_file_certgen

die() { echo "bench gateway: $*" >&2; exit 1; }
for t in h2load nginx squid mitmdump nft curl; do
	command -v "$t" >/dev/null || die "$t is not installed (make deps)"
done
[ -x "$CERTGEN" ] || die "$CERTGEN is missing (squid-openssl)"
[ -x "$NETD_BIN" ] || die "build $NETD_BIN first"
# Every server and client here holds a connection per open one; 1,000 of
# them and their upstreams pass the usual 1,024 (netd raises its own).
ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((4 * HOLD + 256)) ] ||
	die "RLIMIT_NOFILE $(ulimit -n) is too low for $HOLD connections (hard limit $(ulimit -Hn))"

world_up "ndgb$$" >/dev/null || die "world_up failed"
trap 'netd_down >/dev/null; world_down' EXIT
gw_upstreams_up || die "the upstreams (nginx, gw_stream.py) did not start"
API=api.gw.dt.example
SSE=sse.gw.dt.example
PH=netd-placeholder-bench-00000001
HDR="Authorization: Bearer $PH"

# ---- netd: sandbox g through the gateway, sandbox d straight ----------------------------
mkdir -p "$WORLD_DIR/policies"
cat >"$WORLD_DIR/policies/gwb.yaml" <<YAML
name: gwb
egress:
  - domains: [$API, $SSE]
    ports: [443]
    gateway: { credentials: [api] }
YAML
cat >"$WORLD_DIR/policies/direct.yaml" <<YAML
name: direct
egress:
  - domains: [$API, $SSE]
    ports: [443]
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up "$(cat <<YAML
gateway:
  port: 15443
  user: nobody
  upstream_ca_file: $WORLD_CA
credentials:
  api:
    header: Authorization
    format: "Bearer {secret}"
    placeholder: $PH
    hosts: [$API, $SSE]
    value: sk-bench-secret-$RANDOM$RANDOM
YAML
)" >/dev/null || die "netd did not start (log above)"
sb_create g gwb >/dev/null || die "sandbox g: creation failed"
sb_create d direct >/dev/null || die "sandbox d: creation failed"
"$NETD_BIN" ca export --out "$WORLD_DIR/netd-ca.pem" >/dev/null || die "netd ca export failed"
GW_PID=$("$NETD_BIN" status | tr -d '\n ' | sed -n 's/.*"gateway":{[^}]*"worker_pid":\([0-9]*\).*/\1/p')
[ -n "$GW_PID" ] && [ "$GW_PID" -gt 0 ] && [ -e "/proc/$GW_PID" ] || die "no gateway worker (netd status: $("$NETD_BIN" status | tr -d '\n'))"

# ---- the peers' host: PREFIX-px, linked to the internet; clients cs, cq, cm behind it ----
PX=$WORLD_PREFIX-px
uplink_ns "$PX" up0 gbi0 210
ip netns exec "$PX" sysctl -qw net.ipv4.ip_forward=1	# this netns only
for c in cs:1:gbs0 cq:2:gbq0 cm:3:gbm0; do
	IFS=: read -r cn i hif <<<"$c"
	client_ns "$WORLD_PREFIX-$cn" "${cn}0" "$PX" "$hif" "10.96.$i.2/30" "10.96.$i.1/30"
	ip -n "$WORLD_PREFIX-$cn" route add default via "10.96.$i.1"
	world__resolv_conf "$WORLD_PREFIX-$cn" || die "resolv.conf for $cn"
done
world_exec inet ip route add 10.96.0.0/16 via 203.0.113.210
world__resolv_conf "$PX" || die "resolv.conf for px"
ip netns exec "$PX" nft -f - <<'NFT' || die "nft in the peers' host failed"
table ip gwbench {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "gbq0" tcp dport 443 redirect to :3129
		iifname "gbm0" tcp dport 443 redirect to :8443
	}
}
NFT

# ---- squid-openssl, ssl_bump -----------------------------------------------------------
SQ=$WORLD_DIR/squid
mkdir -p "$SQ"
openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$SQ/ca.key" -out "$SQ/ca.pem" -days 2 \
	-subj "/CN=squid bench CA" -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign 2>"$SQ/openssl.err" || die "squid CA: $(cat "$SQ/openssl.err")"
"$CERTGEN" -c -s "$SQ/ssl_db" -M 16MB >"$SQ/certgen.out" 2>&1 || die "security_file_certgen -c: $(cat "$SQ/certgen.out")"
cat >"$SQ/squid.conf" <<EOF
# squid-openssl as a TLS-intercepting egress proxy (tests/bench/gateway.sh)
http_port 127.0.0.1:3128
https_port 3129 intercept ssl-bump tls-cert=$SQ/ca.pem tls-key=$SQ/ca.key generate-host-certificates=on dynamic_cert_mem_cache_size=16MB
sslcrtd_program $CERTGEN -s $SQ/ssl_db -M 16MB
sslcrtd_children 4 startup=1 idle=1
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
tls_outgoing_options cafile=$WORLD_CA
http_access allow all
cache deny all
access_log none
cache_log $SQ/cache.log
pid_filename $SQ/squid.pid
coredump_dir $SQ
netdb_filename none
pinger_enable off
dns_nameservers 192.0.2.53
max_filedescriptors 65536
shutdown_lifetime 0 seconds
workers 1
EOF
chown -R proxy:proxy "$SQ"
ip netns exec "$PX" squid -N -f "$SQ/squid.conf" </dev/null >"$SQ/squid.out" 2>&1 &
SQUID_PID=$!
world_pid_track "$SQUID_PID"

# ---- mitmproxy -------------------------------------------------------------------------
MI=$WORLD_DIR/mitm
mkdir -p "$MI"
ip netns exec "$PX" mitmdump -q --mode transparent --listen-port 8443 --set confdir="$MI" \
	--set ssl_verify_upstream_trusted_ca="$WORLD_CA" --set stream_large_bodies=1 \
	</dev/null >"$MI/mitmdump.out" 2>&1 &
MITM_PID=$!
world_pid_track "$MITM_PID"

# ---- every path answers before anything is measured ----------------------------------------
# ready LABEL NS CA PID LOG - a curl GET through the path until it answers
# 200 (30 s); dies with the log's tail if PID exits or it never does.
ready() {
	local label=$1 ns=$2 ca=$3 pid=$4 log=$5 i
	for ((i = 0; i < 150; i++)); do
		if [ -s "$ca" ] && [ "$(ip netns exec "$ns" curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" \
			--connect-timeout 2 --max-time 5 -H "$HDR" "https://$API/")" = 200 ]; then
			return 0
		fi
		if [ -n "$pid" ] && ! world__alive "$pid"; then
			die "$label exited during startup; $log says: $(tail -n 15 "$log")"
		fi
		sleep 0.2
	done
	die "$label does not answer https://$API/ from $ns; ${log:+$log says: $(tail -n 15 "$log")}"
}
cat "$WORLD_CA" "$WORLD_DIR/netd-ca.pem" >"$WORLD_DIR/ca-netd.pem"
cat "$WORLD_CA" "$SQ/ca.pem" >"$WORLD_DIR/ca-squid.pem"
ready "server (sandbox, no gateway)" "$(sb_name d)" "$WORLD_CA" "" "$NETD_LOG"
ready "netd gateway" "$(sb_name g)" "$WORLD_DIR/ca-netd.pem" "$GW_PID" "$NETD_LOG"
ready "server (straight)" "$WORLD_PREFIX-cs" "$WORLD_CA" "" ""
ready "squid ssl_bump" "$WORLD_PREFIX-cq" "$WORLD_DIR/ca-squid.pem" "$SQUID_PID" "$SQ/cache.log"
ready "mitmproxy" "$WORLD_PREFIX-cm" "$MI/mitmproxy-ca-cert.pem" "$MITM_PID" "$MI/mitmdump.out"
cat "$WORLD_CA" "$MI/mitmproxy-ca-cert.pem" >"$WORLD_DIR/ca-mitm.pem"

# label|netns|CA bundle|PID whose RSS counts|baseline row|h2
PATHS=("server (straight)|$WORLD_PREFIX-cs|$WORLD_CA|||h2"
	"server (sandbox, no gw)|$(sb_name d)|$WORLD_CA|||h2"
	"netd gateway|$(sb_name g)|$WORLD_DIR/ca-netd.pem|$GW_PID|server (sandbox, no gw)|h2"
	"squid ssl_bump|$WORLD_PREFIX-cq|$WORLD_DIR/ca-squid.pem|$SQUID_PID|server (straight)|-"
	"mitmproxy|$WORLD_PREFIX-cm|$WORLD_DIR/ca-mitm.pem|$MITM_PID|server (straight)|h2")

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null; }
declare -A RSS0
for e in "${PATHS[@]}"; do
	IFS='|' read -r label ns ca pid base h2 <<<"$e"
	[ -n "$pid" ] && RSS0[$label]=$(rss_kb "$pid")
done

# h2l LABEL NS ARGS... - h2load in NS; its output in $H2L_OUT.  Dies unless
# every request succeeded with a 2xx: a path that answers nothing (or
# errors) must not print a figure.
h2l() {
	local label=$1 ns=$2 ok bad non2xx
	shift 2
	H2L_OUT=$(ip netns exec "$ns" h2load -t 1 -H "$HDR" "$@" 2>&1)
	# "requests: T total, S started, D done, OK succeeded, F failed, E errored, TO timeout"
	read -r ok bad < <(sed -n 's/^requests: .* \([0-9]*\) succeeded, \([0-9]*\) failed, \([0-9]*\) errored, \([0-9]*\) timeout.*/\1 \2+\3+\4/p' <<<"$H2L_OUT")
	# "status codes: A 2xx, B 3xx, C 4xx, D 5xx"
	non2xx=$(sed -n 's/^status codes: [0-9]* 2xx, \([0-9]*\) 3xx, \([0-9]*\) 4xx, \([0-9]*\) 5xx.*/\1+\2+\3/p' <<<"$H2L_OUT")
	if [ -z "${ok:-}" ] || [ "$ok" = 0 ] || [ $((bad)) != 0 ] || [ $((${non2xx:-1})) != 0 ]; then
		die "$label: h2load $* did not succeed throughout:"$'\n'"$(grep -v -e NPN/ALPN -e 'No protocol negotiated' <<<"$H2L_OUT")"
	fi
}
reqps() { sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$H2L_OUT"; }
# pcts FILE - "p50_ms p99_ms" of h2load --log-file's durations (3rd column, us)
pcts() {
	awk '{print $3}' "$1" | sort -n | awk '{a[NR] = $1} END {if (!NR) {print "- -"; exit}
		i = int(NR * 0.5); if (i < 1) i = 1; j = int(NR * 0.99); if (j < 1) j = 1
		printf "%.3f %.3f\n", a[i] / 1000, a[j] / 1000}'
}

declare -A H1 H2 P50 P99 H2P50 CPS TTFB
echo
echo "API gateway benchmark: $(nproc) CPUs, $(uname -r), h2load $(h2load --version | sed -n 's/.*nghttp2\/\([0-9.]*\).*/\1/p'), nginx-light," \
	"squid $(squid -v | sed -n 's/.*Version \([^ ]*\).*/\1/p'), mitmproxy $(mitmdump --version 2>/dev/null | sed -n 's/^Mitmproxy: //p')," \
	"${SECS}s per throughput run, one run"
for e in "${PATHS[@]}"; do
	IFS='|' read -r label ns ca pid base h2 <<<"$e"
	url=https://$API/v1/bench
	# latency: one connection, one request at a time
	# (h2load appends to its --log-file: a new file for every run)
	rm -f "$WORLD_DIR/lat.log"
	h2l "$label" "$ns" --h1 -c 1 -n "$N" --log-file="$WORLD_DIR/lat.log" "$url"
	read -r a b < <(pcts "$WORLD_DIR/lat.log")
	P50[$label]=$a
	P99[$label]=$b
	# throughput, HTTP/1.1 kept alive
	h2l "$label" "$ns" --h1 -c "$CONNS" -D "$SECS" --warm-up-time=1 "$url"
	H1[$label]=$(reqps)
	if [ "$h2" = h2 ]; then
		h2l "$label" "$ns" -c 4 -m 16 -D "$SECS" --warm-up-time=1 "$url"
		H2[$label]=$(reqps)
		rm -f "$WORLD_DIR/lat.log"
		h2l "$label" "$ns" -c 1 -n "$N" --log-file="$WORLD_DIR/lat.log" "$url"
		read -r a _ < <(pcts "$WORLD_DIR/lat.log")
		H2P50[$label]=$a
	else
		H2[$label]=n/a
		H2P50[$label]=n/a
	fi
	# new TLS connections, one request each
	h2l "$label" "$ns" --h1 -H "Connection: close" -c 8 -n "$NEWCONN" "$url"
	CPS[$label]=$(reqps)
	# streaming
	TTFB[$label]=$(ip netns exec "$ns" "$WORLD_PYTHON" tests/bench/gw_client.py ttfb "$SSE" "$ca" "$HDR" 100 2>&1) ||
		die "$label: the SSE client failed: ${TTFB[$label]}"
done

# RSS with HOLD kept-alive connections open through each proxy
declare -A RSSH
for e in "${PATHS[@]}"; do
	IFS='|' read -r label ns ca pid base h2 <<<"$e"
	[ -n "$pid" ] || continue
	coproc HOLDER { ip netns exec "$ns" "$WORLD_PYTHON" tests/bench/gw_client.py hold "$API" "$ca" "$HDR" "$HOLD" 2>&1; }
	hold_pid=$HOLDER_PID
	world_pid_track "$hold_pid"
	read -r -t 300 line <&"${HOLDER[0]}"
	[ "$line" = "ready $HOLD" ] || die "$label: $HOLD kept-alive connections did not open: $line"
	sleep 1
	RSSH[$label]=$(rss_kb "$pid")
	eval "exec ${HOLDER[1]}>&-"
	wait "$hold_pid" 2>/dev/null
done

# d A B - A - B to 3 decimals (a latency above the baseline)
d() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.3f", a - b}'; }
echo "(latency in ms; +p50/+p99 above the path's baseline row; RSS in kB)"
printf '%-24s %9s %9s %8s %8s %8s %8s %8s %8s %8s %8s %8s %9s %9s\n' path "h1 req/s" "h2 req/s" \
	"p50" "p99" "+p50" "+p99" "h2 p50" "conn/s" "ttfb p50" "ttfb p99" "ev p50" "RSS" "RSS+$HOLD"
for e in "${PATHS[@]}"; do
	IFS='|' read -r label ns ca pid base h2 <<<"$e"
	if [ -n "$base" ]; then
		ap50=$(d "${P50[$label]}" "${P50[$base]}")
		ap99=$(d "${P99[$label]}" "${P99[$base]}")
	else
		ap50=-
		ap99=-
	fi
	read -r t50 t99 e50 _ <<<"${TTFB[$label]}"
	printf '%-24s %9.0f %9s %8s %8s %8s %8s %8s %8.0f %8s %8s %8s %9s %9s\n' "$label" "${H1[$label]}" \
		"$([ "${H2[$label]}" = n/a ] && echo n/a || printf '%.0f' "${H2[$label]}")" "${P50[$label]}" "${P99[$label]}" \
		"$ap50" "$ap99" "${H2P50[$label]}" "${CPS[$label]}" "$t50" "$t99" "$e50" \
		"${RSS0[$label]:--}" "${RSSH[$label]:--}"
done
echo
# The issue's targets, next to the figures (printed, not asserted).
g=netd\ gateway
s=squid\ ssl_bump
printf 'targets (issue 33): h1 req/s above squid ssl_bump: %.0f vs %.0f (%s)\n' "${H1[$g]}" "${H1[$s]}" \
	"$(awk -v a="${H1[$g]}" -v b="${H1[$s]}" 'BEGIN {print (a > b) ? "met" : "not met"}')"
printf '                    added p50 per kept-alive request under 0.3 ms: %s ms (%s)\n' \
	"$(d "${P50[$g]}" "${P50[server (sandbox, no gw)]}")" \
	"$(awk -v a="${P50[$g]}" -v b="${P50[server (sandbox, no gw)]}" 'BEGIN {print (a - b < 0.3) ? "met" : "not met"}')"
printf '                    gateway RSS under 50 MiB with %d connections: %.1f MiB (%s)\n' "$HOLD" \
	"$(awk -v k="${RSSH[$g]}" 'BEGIN {print k / 1024}')" \
	"$(awk -v k="${RSSH[$g]}" 'BEGIN {print (k < 50 * 1024) ? "met" : "not met"}')"
