#!/usr/bin/env bash
# A burst of short connections from several sandboxes: every connection
# made produces exactly one conn record (counted per sandbox), first with
# the default conntrack event buffer, then with a tiny one
# (audit.conntrack_rcvbuf) so the event socket overruns (ENOBUFS): the
# overruns are counted, a resync dump runs, and the kernel's reliable
# destroy-event delivery still yields exactly one record per connection.
# BURST_RATE (connections/s per sandbox, default 1250 x 4 sandboxes = 5000/s)
# and BURST_SECONDS (default 2) size the burst.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

RATE=${BURST_RATE:-1250}
SECS=${BURST_SECONDS:-2}
NSB=4
world_up "ndb$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
cat >"$WORLD_DIR/policies/burst.yaml" <<'YAML'
name: burst
egress:
  - cidrs: [198.51.100.7/32]
    ports: [9000]
YAML
NETD_POLICIES=$WORLD_DIR/policies
# Short conntrack timeouts in the world's host netns only: closed entries
# (and any unanswered SYN) are destroyed within seconds.
world_exec host sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_fin_wait=1 \
	net.netfilter.nf_conntrack_tcp_timeout_last_ack=1 \
	net.netfilter.nf_conntrack_tcp_timeout_syn_sent=2 \
	net.netfilter.nf_conntrack_tcp_timeout_syn_recv=2 2>/dev/null

BIN=$WORLD_DIR/acct_burst
if ! cc -O2 -Wall -o "$BIN" tests/integ/acct_burst.c; then
	echo "cannot build the load generator"; echo "0 passed, 1 failed"; exit 1
fi
world_spawn inet "$WORLD_DIR/burst-server.log" "$BIN" server 198.51.100.7 9000
for ((i = 0; i < 50; i++)); do grep -q listening "$WORLD_DIR/burst-server.log" && break; sleep 0.1; done

# count_records SB - conn records of SB to the burst server.
count_records() {
	grep -F '"event":"conn"' "$NETD_AUDIT" | grep -F "\"sandbox\":\"$1\"" |
		grep -cF '"dport":9000'
}
acct_stat() {
	netd status | python3 -c 'import json,sys; print(json.load(sys.stdin)["accounting"]["conntrack"][sys.argv[1]])' "$1"
}

# burst LABEL - run the clients at once, then compare per sandbox.
burst() {
	local label=$1 s i pids=() total=0 got tot_got=0 want
	for ((s = 1; s <= NSB; s++)); do
		sb_exec "b$s" "$BIN" client 198.51.100.7 9000 "$RATE" "$SECS" >"$WORLD_DIR/client$s.out" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	for ((s = 1; s <= NSB; s++)); do
		read -r _ a _ o _ f _ <"$WORLD_DIR/client$s.out"
		echo "  $label client $s: attempts $a ok $o failed $f"
		total=$((total + a))
	done
	# Wait until every entry is destroyed and reported (bounded; the count
	# is what is asserted, not the time).
	for ((i = 0; i < 300; i++)); do
		tot_got=0
		for ((s = 1; s <= NSB; s++)); do
			tot_got=$((tot_got + $(count_records "$(sb_name "b$s")")))
		done
		[ "$tot_got" -ge "$total" ] && [ "$(world_exec host conntrack -C 2>/dev/null || echo 0)" -le 2 ] && break
		sleep 0.2
	done
	sleep 1
	for ((s = 1; s <= NSB; s++)); do
		read -r _ a _ o _ f _ <"$WORLD_DIR/client$s.out"
		got=$(count_records "$(sb_name "b$s")")
		eq "$label: sandbox b$s: one conn record per connection attempt ($a)" "$a" "$got"
	done
	echo "  $label: $total connections, $tot_got records"
	cp "$NETD_AUDIT" "/tmp/ndburst-${label// /_}.jsonl"
}

netd_up "audit: { conn_update_interval: 0 }" || { echo "0 passed, 1 failed"; exit 1; }
for ((s = 1; s <= NSB; s++)); do ok "sandbox create b$s" sb_create "b$s" burst; done
burst "default buffer"
netd_down
: >"$NETD_AUDIT"

netd_up "audit: { conn_update_interval: 0, conntrack_rcvbuf: 4096 }" || { echo "0 passed, 1 failed"; exit 1; }
burst "4 KiB buffer"
enobufs=$(acct_stat enobufs)
resyncs=$(acct_stat resyncs)
echo "  enobufs $enobufs resyncs $resyncs"
ok "tiny buffer: overruns were detected ($enobufs)" test "$enobufs" -gt 0
eq "tiny buffer: one resync per overrun" "$enobufs" "$resyncs"
has "tiny buffer: overrun logged" "ENOBUFS" "$(cat "$NETD_LOG")"
netd_down
t_summary
