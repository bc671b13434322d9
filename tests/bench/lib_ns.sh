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
