# shellcheck shell=bash
# guest-netd.sh - netd in the microVM guest's world, for the guest scripts
# (tests/microvm/flowtable-guest.sh, bench-guest.sh); tests/microvm/world.sh
# packs it as /opt/w/lib/netd.sh.  Source it from bash with W set (the
# world's directory, which has policies/).
#
#   guest_netd_config LOG_LEVEL   write $W/netd.yaml: netd's host is netns
#                                 "host", eth0 its egress, upstream
#                                 192.0.2.2, dataplane.flowtable: true
#   guest_netd_start              start it (nsenter: its netns mounts stay
#                                 visible here), wait for its socket; NETD
#   netd ARGS...                  the CLI

guest_netd_config() {
	{
		echo "socket: $W/netd.sock"
		echo "state_dir: $W/state"
		echo "policy_dir: $W/policies"
		echo "audit_log: $W/audit.jsonl"
		echo "upstream: [192.0.2.2]"
		echo "egress_interface: eth0"
		echo "pool: { ipv4: 10.87.0.0/16, ipv6: \"fd00:87::/48\" }"
		echo "log_level: $1"
		echo "audit: { conn_update_interval: 1 }"
		echo "dataplane: { flowtable: true }"
	} >"$W/netd.yaml"
	export NETD_SOCKET=$W/netd.sock
}

netd() { ip netns exec host /opt/w/bin/netd "$@"; }

guest_netd_start() {
	local i
	nsenter --net=/run/netns/host /opt/w/bin/netd run --config "$W/netd.yaml" \
		</dev/null >>"$W/netd.log" 2>&1 &
	NETD=$!
	for i in $(seq 300); do netd status >/dev/null 2>&1 && break; sleep 0.1; done
}
