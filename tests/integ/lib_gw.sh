# lib_gw.sh - the API gateway's upstreams in the test world (sourced after
# tests/world.sh and lib_netd.sh, once world_up ran).
#
# gw_upstreams_up - in the internet netns, on documentation addresses the
# world's dt.example zone names (tests/world/zones/dt.example.zone):
#   198.51.100.60 api.gw.dt.example      nginx-light, HTTP/1.1 and HTTP/2
#   198.51.100.61 other.gw.dt.example    nginx-light
#   198.51.100.62 plain.gw.dt.example    nginx-light
#   198.51.100.63 sse.gw.dt.example      tests/integ/gw_stream.py (SSE, WebSocket)
#   198.51.100.64 badcert.gw.dt.example  nginx-light with a certificate of a CA
#                                        nobody trusts
#   198.51.100.65 silent.gw.dt.example   takes TCP connections and never answers
# Certificates chain to $WORLD_CA except badcert's.  nginx answers
# {"host", "path", "proto"} in JSON and logs each request's Authorization
# and X-Api-Key to $GW_NGINX_LOG; gw_stream.py logs to $GW_STREAM_LOG.
# Everything started here is tracked by the world and ends in world_down.

GW_ADDRS=(198.51.100.60 198.51.100.61 198.51.100.62 198.51.100.63 198.51.100.64)
GW_NAMES=(api.gw.dt.example other.gw.dt.example plain.gw.dt.example sse.gw.dt.example
	badcert.gw.dt.example)

# gw__cert NAME ADDR CA_PEM CA_KEY - a leaf for NAME under the given CA.
gw__cert() {
	local name=$1 addr=$2 ca=$3 cakey=$4 d=$WORLD_DIR/gw
	printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
		"extendedKeyUsage=serverAuth" "subjectAltName=DNS:$name" >"$d/$addr.ext"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$d/$addr.key" -out "$d/$addr.csr" -subj "/CN=$name" 2>>"$d/openssl.err" &&
		openssl x509 -req -in "$d/$addr.csr" -CA "$ca" -CAkey "$cakey" -set_serial "0x$RANDOM$RANDOM" \
			-days 2 -extfile "$d/$addr.ext" -out "$d/$addr.pem" 2>>"$d/openssl.err"
}

gw_upstreams_up() {
	local d=$WORLD_DIR/gw i addr name
	mkdir -p "$d/nginx" || return 1
	GW_NGINX_LOG=$d/nginx.access.log
	GW_STREAM_LOG=$d/stream.log
	: >"$GW_STREAM_LOG"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$d/rogue-ca.key" -out "$d/rogue-ca.pem" -days 2 -subj "/CN=untrusted CA" \
		2>"$d/openssl.err" || { cat "$d/openssl.err" >&2; return 1; }
	for i in "${!GW_ADDRS[@]}"; do
		addr=${GW_ADDRS[$i]}
		name=${GW_NAMES[$i]}
		world_exec inet ip addr add "$addr/32" dev lo || return 1
		if [ "$addr" = 198.51.100.64 ]; then
			gw__cert "$name" "$addr" "$d/rogue-ca.pem" "$d/rogue-ca.key"
		else
			gw__cert "$name" "$addr" "$WORLD_CA" "${WORLD_CA%/*}/ca.key"
		fi || { cat "$d/openssl.err" >&2; return 1; }
	done
	{
		cat <<-NGINX
		daemon off;
		master_process off;
		worker_processes 1;
		pid $d/nginx.pid;
		error_log $d/nginx.error.log;
		events { worker_connections 4096; }
		http {
		  access_log off;
		  log_format gw '\$request_method \$request_uri \$server_protocol host=\$host auth=\$http_authorization key=\$http_x_api_key ae=\$http_accept_encoding wsx=\$http_sec_websocket_extensions';
		  client_body_temp_path $d/nginx/body;
		  proxy_temp_path $d/nginx/proxy;
		  fastcgi_temp_path $d/nginx/fastcgi;
		  uwsgi_temp_path $d/nginx/uwsgi;
		  scgi_temp_path $d/nginx/scgi;
		  keepalive_requests 100000;
		NGINX
		for i in 0 1 2 4; do
			addr=${GW_ADDRS[$i]}
			cat <<-NGINX
			  server {
			    listen $addr:443 ssl http2;
			    server_name ${GW_NAMES[$i]};
			    ssl_certificate $d/$addr.pem;
			    ssl_certificate_key $d/$addr.key;
			    access_log $GW_NGINX_LOG gw;
			    default_type application/json;
			    location / { return 200 '{"host":"\$host","path":"\$uri","proto":"\$server_protocol","method":"\$request_method"}\n'; }
			    # an upstream that shows the request's credential back (gw_api: masked)
			    location = /v1/echo-auth { add_header X-Echo "\$http_authorization" always; return 200 'auth=\$http_authorization\n'; }
			    # ... and compresses what it shows when asked to (gw_api: asked for identity)
			    location ^~ /v1/echo-auth-gz { gzip on; gzip_min_length 1; gzip_types application/json; return 200 'auth=\$http_authorization\n'; }
			    # the whole body read before the answer (proxy_request_buffering; gw_quota)
			    location = /v1/upload { proxy_pass http://127.0.0.1:8099/; }
			  }
			NGINX
		done
		cat <<-NGINX
		  server {
		    listen 127.0.0.1:8099;
		    access_log off;
		    location / { return 200 'stored \$content_length\n'; }
		  }
		NGINX
		echo "}"
	} >"$d/nginx.conf"
	: >"$GW_NGINX_LOG"
	world_spawn inet "$WORLD_DIR/gw-nginx.out" nginx -c "$d/nginx.conf" -p "$d/nginx"
	local npid=$WORLD_LAST_PID
	world_spawn inet "$WORLD_DIR/gw-stream.out" "$WORLD_PYTHON" tests/integ/gw_stream.py 198.51.100.63 \
		"$d/198.51.100.63.pem" "$d/198.51.100.63.key" "$GW_STREAM_LOG" "$d/stream.ready"
	local spid=$WORLD_LAST_PID
	world__wait gw-nginx "$npid" "$WORLD_DIR/gw-nginx.out" \
		world_exec inet bash -c "exec 3<>/dev/tcp/198.51.100.60/443" || return 1
	world_exec inet ip addr add 198.51.100.65/32 dev lo || return 1
	world_spawn inet "$WORLD_DIR/gw-silent.out" "$WORLD_PYTHON" -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.51.100.65", 443)); s.listen(64); held = []
while True: held.append(s.accept()[0])'
	world__wait gw-stream "$spid" "$WORLD_DIR/gw-stream.out" test -e "$d/stream.ready"
}

# gw_world_up PREFIX - the world (world_up PREFIX), its teardown on exit
# (netd_down, world_down) and the upstreams above; a test that cannot have
# them says so and ends as failed.
gw_world_up() {
	world_up "$1" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
	trap 'netd_down >/dev/null; world_down' EXIT
	gw_upstreams_up || { echo "gateway upstreams did not start"; echo "0 passed, 1 failed"; exit 1; }
}

# gw_api_cred_yaml PLACEHOLDER SOURCE - netd.yaml's credentials: section with
# one credential "api" for api.gw.dt.example ("Bearer {secret}" in
# Authorization), its secret from SOURCE ("file: PATH" or "value: SECRET").
gw_api_cred_yaml() {
	printf 'credentials:\n  api:\n    header: Authorization\n    format: "Bearer {secret}"\n'
	printf '    placeholder: %s\n    hosts: [api.gw.dt.example]\n    %s\n' "$1" "$2"
}

# gw_gateway_yaml [LINE...] - netd.yaml's gateway: section for these
# upstreams (port 15443, the worker as nobody, the world's CA trusted for
# upstreams), each LINE added under it (e.g. "connect_timeout: 2").
gw_gateway_yaml() {
	local l
	printf 'gateway:\n  port: 15443\n  user: nobody\n  upstream_ca_file: %s\n' "$WORLD_CA"
	for l in "$@"; do printf '  %s\n' "$l"; done
}
