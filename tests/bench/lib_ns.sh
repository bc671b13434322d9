# shellcheck shell=bash
#
# lib_ns.sh - the bench's peer namespaces (sourced by tests/bench/run.sh
# and gateway.sh after tests/world.sh, once world_up ran): a netns linked
# to the world's "internet", and client namespaces behind it.  Names must
# carry $WORLD_PREFIX so world_down removes them.

# uplink_ns NS IF INET_IF A - a new netns NS linked to the world's "internet"
# by a veth (IF in NS has 203.0.113.A/30, INET_IF in inet has A-1), default
# route through it.
uplink_ns() {
	local ns=$1 ifn=$2 inet_if=$3 a=$4
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip link add "$ifn" netns "$ns" type veth peer name "$inet_if" netns "$WORLD_INET_NS"
	ip -n "$ns" addr add "203.0.113.$a/30" dev "$ifn"
	ip -n "$ns" link set "$ifn" up
	ip -n "$WORLD_INET_NS" addr add "203.0.113.$((a - 1))/30" dev "$inet_if"
	ip -n "$WORLD_INET_NS" link set "$inet_if" up
	ip -n "$ns" route add default via "203.0.113.$((a - 1))"
}

# client_ns NS IF HOST_NS HOST_IF ADDR/PLEN HOST_ADDR/PLEN... - a new netns NS
# (a peer's client) linked by a veth to HOST_NS (IF in NS has ADDR, HOST_IF
# in HOST_NS each HOST_ADDR), both ends up.
client_ns() {
	local ns=$1 ifn=$2 hns=$3 hif=$4 addr=$5 a
	shift 5
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip link add "$ifn" netns "$ns" type veth peer name "$hif" netns "$hns"
	ip -n "$ns" addr add "$addr" dev "$ifn"
	ip -n "$ns" link set "$ifn" up
	for a in "$@"; do ip -n "$hns" addr add "$a" dev "$hif"; done
	ip -n "$hns" link set "$hif" up
}

# unbound_fwd_conf FILE - unbound as a plain forwarder (the DNS bench's
# peer: run.sh, callgrind.sh) on 10.99.0.3 port 5353, for clients in
# 10.99.0.0/24, forwarding everything to the world's resolver; one thread,
# in the foreground, its files in WORLD_DIR.
unbound_fwd_conf() {
	cat >"$1" <<EOF2
server:
    interface: 10.99.0.3
    port: 5353
    access-control: 10.99.0.0/24 allow
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "$WORLD_DIR"
    pidfile: ""
    use-syslog: no
    do-not-query-localhost: no
    num-threads: 1
forward-zone:
    name: "."
    forward-addr: 192.0.2.53
EOF2
}

# bench_netd_policy - NETD_POLICIES (WORLD_DIR/policies) with the DNS bench's
# policy "bench" (www.dt.example and *.tun.dt.example on 443), and
# NETD_DNS_EXTRA with the abuse limits raised: the bench asks 10,000
# distinct names below *.tun.dt.example, so the name budget (500 per 10
# minutes by default, docs/dns.md), which would refuse all but 500, is off;
# BENCH_DNS_EXTRA adds lines of its own.
bench_netd_policy() {
	NETD_POLICIES=$WORLD_DIR/policies
	mkdir -p "$NETD_POLICIES"
	cat >"$NETD_POLICIES/bench.yaml" <<'YAML'
name: bench
egress:
  - domains: [www.dt.example, "*.tun.dt.example"]
    ports: [443]
    dns: { budget: off }
YAML
	NETD_DNS_EXTRA=$'  qps: 1000000\n  burst: 1000000\n  max_outstanding: 4096\n  max_pins: 1000000'
	# BENCH_DNS_EXTRA: more dns: lines to compare ("  udp_gso: false")
	[ -n "${BENCH_DNS_EXTRA:-}" ] && NETD_DNS_EXTRA+=$'\n'"$BENCH_DNS_EXTRA"
	return 0
}

# iperf_world NAME - the iperf3 benches' world (tests/bench/dataplane.sh,
# bandwidth.sh): iperf3 -s on SRV (198.51.100.60) in the internet, and
# NETD_POLICIES with policy NAME allowing it on 5201, tcp and udp.
iperf_world() {
	world_exec inet ip addr add "$SRV/32" dev lo
	world_spawn inet "$WORLD_DIR/iperf3.log" iperf3 -s -B "$SRV"
	NETD_POLICIES=$WORLD_DIR/policies
	mkdir -p "$NETD_POLICIES"
	cat >"$NETD_POLICIES/$1.yaml" <<YAML
name: $1
egress:
  - cidrs: [$SRV/32]
    ports: [5201]
  - cidrs: [$SRV/32]
    ports: [5201]
    protocol: udp
YAML
}

# bench_need TOOL... - exit 1 unless every TOOL is installed and NETD_BIN
# is built, saying which (make deps installs them all).
bench_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "bench: $t is not installed (make deps)" >&2; exit 1; }
	done
	[ -x "$NETD_BIN" ] || { echo "bench: build $NETD_BIN first" >&2; exit 1; }
}
