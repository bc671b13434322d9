# shellcheck shell=bash
#
# scale.sh - the scale section of `make bench` (tests/bench/run.sh sources
# it; BENCH_SECTIONS=scale runs only this).  bench_scale() builds, for each
# size in BENCH_SCALE_SIZES (default "1000"; the issue-12 figures are
# "1000 5000"), a private world (tests/world.sh) with netd (the optimized
# build) and that many sandboxes on one shared policy, each of which
# resolves a name (one pin each), and prints:
#
#   create p50/p99   API: curl, many requests per connection, curl's
#                    time_total per request; CLI: `netd sandbox create`
#                    end to end (process start to exit), every 10th sandbox
#   kernel/sandbox   /proc/meminfo (Slab, Percpu, VmallocUsed) before and
#                    after the creates, divided by the count: netns + veth
#                    pair + netd's rules and sets.  The kernel is shared with
#                    whatever else runs on the machine, so this is noisy.
#   pins/s           one lookup from every sandbox (tests/bench/scale_dns.py:
#                    one process, a socket inside each sandbox's netns,
#                    BENCH_SCALE_PAR in flight, default 64): pins committed
#                    per second, netd's CPU for them, and netd's own pin
#                    latency (answer -> kernel ack) p50/p99
#   RSS              VmRSS of netd after the creates and lookups, and after
#                    the restart
#   reload           `netd policy reload` end to end, one CIDR rule added to
#                    the policy every sandbox shares
#   restart          SIGTERM, then from the new process's spawn to the first
#                    DNS answer in a sandbox (a socket in sandbox s0 asking
#                    every 10 ms; the cache died with the old process, so a
#                    fresh upstream lookup and pin); and to the control
#                    socket's first status
#   cleanup          netd stopped, then every namespace of the world's
#                    prefix deleted (world_down)
#
# BENCH_SCALE_BW="{ egress: 20mbit, ingress: 100mbit }": the shared policy
# has those limits.bandwidth, so every sandbox is shaped both ways (an HTB
# on its veth, an IFB with another): the create, memory and restart figures
# then include them.
#
# Prints figures only; asserts nothing about time.  Root; build/netd first.

# bench_scale_pct P FILE - the P-th percentile of the numbers in FILE (one a line).
bench_scale_pct() {
	sort -g "$2" | awk -v p="$1" '{a[NR] = $1} END {if (!NR) {print "-"; exit}
		i = int(NR * p / 100); if (i < NR * p / 100) i++; if (i < 1) i = 1; printf "%.1f", a[i]}'
}

bench_scale_ms() { echo $(($(date +%s%N) / 1000000)); }

# Slab + Percpu + VmallocUsed from /proc/meminfo, kB: "SLAB PERCPU VMALLOC".
bench_scale_kmem() {
	awk '/^Slab:/ {s = $2} /^Percpu:/ {p = $2} /^VmallocUsed:/ {v = $2} END {print s, p, v}' /proc/meminfo
}

bench_scale_status() { curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status | tr -d '\n '; }
bench_scale_num() { grep -o "\"$1\":[0-9]*" <<<"$2" | head -1 | cut -d: -f2; }
bench_scale_cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# bench_scale_api_create FROM TO - sandboxes sFROM..sTO-1 through the API on
# one connection; appends "CODE SECONDS" per request to $WORLD_DIR/api.out.
bench_scale_api_create() {
	local i cfg=$WORLD_DIR/create.curl
	: >"$cfg"
	for ((i = $1; i < $2; i++)); do
		[ "$i" != "$1" ] && echo "next" >>"$cfg"
		printf 'unix-socket = "%s"\nurl = "http://netd/v1/sandboxes"\nrequest = "POST"\nheader = "Content-Type: application/json"\ndata = "{\\"name\\": \\"%s\\", \\"policy\\": \\"scale\\"}"\noutput = "/dev/null"\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' \
			"$NETD_SOCKET" "$(sb_name "s$i")" >>"$cfg"
	done
	curl -s -K "$cfg" >>"$WORLD_DIR/api.out"
}

# bench_scale_policy [EXTRA_CIDR] - the shared policy.
bench_scale_policy() {
	{
		echo "name: scale"
		echo "egress:"
		echo "  - domains: [www.dt.example]"
		echo "    ports: [443]"
		echo "  - cidrs: [198.51.100.7/32]"
		echo "    ports: [8080]"
		if [ -n "${1:-}" ]; then
			echo "  - cidrs: [$1]"
			echo "    ports: [443]"
		fi
		[ -z "${BENCH_SCALE_BW:-}" ] || echo "limits: { bandwidth: $BENCH_SCALE_BW }"
	} >"$NETD_POLICIES/scale.yaml"
}

# bench_scale_restart NETNS GW - stop netd, start it again; sets NETD_PID and
# R_DNS_MS R_API_MS R_STOP_MS (from the new process's spawn; the stop).
bench_scale_restart() {
	local ns=$1 gw=$2 t0 ts tapi="" i at waiter
	rm -f "$WORLD_DIR/go"
	"$WORLD_PYTHON" tests/bench/scale_dns.py wait "$ns" "$gw" www.dt.example 60 "$WORLD_DIR/go" \
		>"$WORLD_DIR/wait.out" &
	waiter=$!
	world_pid_track "$waiter"
	for ((i = 0; i < 500; i++)); do grep -q ready "$WORLD_DIR/wait.out" && break; sleep 0.01; done
	ts=$(bench_scale_ms)
	kill -TERM "$NETD_PID"
	while kill -0 "$NETD_PID" 2>/dev/null; do sleep 0.01; done
	wait "$NETD_PID" 2>/dev/null
	: >"$WORLD_DIR/go"	# the old process is gone: from now on an answer is the new one's
	t0=$(bench_scale_ms)
	# BENCH_SCALE_MASSIF=FILE: the restarted netd's heap profile (valgrind massif; slow).
	world_spawn host "$NETD_LOG.2" ${BENCH_SCALE_MASSIF:+valgrind --tool=massif \
		--massif-out-file="$BENCH_SCALE_MASSIF"} "$NETD_BIN" run --config "$NETD_CONF"
	NETD_PID=$WORLD_LAST_PID
	if [ -n "${BENCH_SCALE_PERF:-}" ]; then
		perf record -g -p "$NETD_PID" -o "$BENCH_SCALE_PERF/restart-$n.data" -- sleep 3 >/dev/null 2>&1 &
	fi
	for ((i = 0; i < 3000; i++)); do
		if "$NETD_BIN" status >/dev/null 2>&1; then
			tapi=$(bench_scale_ms)
			break
		fi
		kill -0 "$NETD_PID" 2>/dev/null || break
		sleep 0.01
	done
	wait "$waiter"
	at=$(sed -n 's/^at //p' "$WORLD_DIR/wait.out")
	R_DNS_MS=$(( ${at:-0} ? at - t0 : -1 ))
	R_API_MS=$(( ${tapi:-0} ? tapi - t0 : -1 ))
	R_STOP_MS=$((t0 - ts))
}

# bench_scale_one N - one size, in its own world (run in a subshell).
bench_scale_one() {
	local n=$1 par=${BENCH_SCALE_PAR:-64} k0 k1 t0 t1 t2 i b st0 st1 c0 c1 pins gw ns0
	local rss1 rss2 r codes sk pk vk ans failed ms left cperf=
	world_up "ndsc$$" >/dev/null || { echo "bench scale: world_up failed" >&2; return 1; }
	NETD_POLICIES=$WORLD_DIR/policies
	mkdir -p "$NETD_POLICIES"
	bench_scale_policy
	# As an operator would run it, but with the per-address DNS limits out
	# of the way of one client asking for thousands of sandboxes.
	NETD_DNS_EXTRA=$'  qps: 1000000\n  burst: 1000000'
	netd_up >/dev/null || { echo "bench scale: netd_up failed" >&2; return 1; }
	# netd_up's config logs at debug; an operator's logs at info (one line
	# a sandbox, not a page): restart at 0 sandboxes with that.
	netd_down >/dev/null
	sed -i 's/^log_level: debug$/log_level: info/' "$NETD_CONF"
	world_spawn host "$NETD_LOG" "$NETD_BIN" run --config "$NETD_CONF"
	NETD_PID=$WORLD_LAST_PID
	for ((i = 0; i < 300; i++)); do "$NETD_BIN" status >/dev/null 2>&1 && break; sleep 0.1; done
	: >"$WORLD_DIR/api.out"
	: >"$WORLD_DIR/cli.ms"
	sync
	k0=$(bench_scale_kmem)
	t0=$(bench_scale_ms)
	# 90 of each 100 through the API (one curl, one connection), 10 through the CLI.
	for ((b = 0; b < n; b += 100)); do
		local e=$((b + 100 < n ? b + 100 : n)) m
		m=$((b + 90 < e ? b + 90 : e))
		# BENCH_SCALE_PERF: a profile of the last tenth of the creates.
		if [ -n "${BENCH_SCALE_PERF:-}" ] && [ "$b" -ge $((n * 9 / 10)) ] && [ -z "${cperf:-}" ]; then
			perf record -g -p "$NETD_PID" -o "$BENCH_SCALE_PERF/create-$n.data" >/dev/null 2>&1 &
			cperf=$!
		fi
		bench_scale_api_create "$b" "$m"
		for ((i = m; i < e; i++)); do
			local c0ms c1ms
			c0ms=$(date +%s%N)
			"$NETD_BIN" sandbox create "$(sb_name "s$i")" --policy scale >/dev/null 2>>"$WORLD_DIR/cli.err" ||
				echo "bench scale: CLI create s$i failed" >&2
			c1ms=$(date +%s%N)
			echo "$(((c1ms - c0ms) / 1000)) " | awk '{printf "%.3f\n", $1 / 1000}' >>"$WORLD_DIR/cli.ms"
		done
	done
	t1=$(bench_scale_ms)
	if [ -n "${cperf:-}" ]; then kill -INT "$cperf"; wait "$cperf"; cperf=; fi
	k1=$(bench_scale_kmem)
	codes=$(grep -c '^201 ' "$WORLD_DIR/api.out")
	awk '$1 == 201 {printf "%.3f\n", $2 * 1000}' "$WORLD_DIR/api.out" >"$WORLD_DIR/api.ms"
	r=$(netd sandbox list --json | grep -o '"name": *"[^"]*"' | grep -c "$WORLD_PREFIX-s")

	echo
	echo "== scale: $n sandboxes ($(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%d))" \
		"${BENCH_SCALE_BW:+, each shaped: $BENCH_SCALE_BW ($(world_exec host ip -o link show type ifb | wc -l) IFBs)}"
	echo "created: $r listed ($codes via the API with 201, $(wc -l <"$WORLD_DIR/cli.ms") via the CLI)" \
		"in $(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100)) s"
	echo "create API ms: p50 $(bench_scale_pct 50 "$WORLD_DIR/api.ms") p99 $(bench_scale_pct 99 "$WORLD_DIR/api.ms")" \
		"max $(bench_scale_pct 100 "$WORLD_DIR/api.ms")"
	echo "create CLI ms: p50 $(bench_scale_pct 50 "$WORLD_DIR/cli.ms") p99 $(bench_scale_pct 99 "$WORLD_DIR/cli.ms")" \
		"max $(bench_scale_pct 100 "$WORLD_DIR/cli.ms")"
	read -r sk pk vk <<<"$(awk -v a="$k0" -v b="$k1" -v n="$r" 'BEGIN {split(a, x, " "); split(b, y, " ");
		if (n > 0) printf "%.1f %.1f %.1f", (y[1] - x[1]) / n, (y[2] - x[2]) / n, (y[3] - x[3]) / n}')"
	echo "kernel memory per sandbox (netns + veth + rules; /proc/meminfo deltas / $r):" \
		"Slab $sk kB, Percpu $pk kB, VmallocUsed $vk kB"

	# ---- one lookup from every sandbox: its pin ----
	netd sandbox list --json | "$WORLD_PYTHON" -c 'import json, sys
for s in json.load(sys.stdin):
    if s["name"].startswith(sys.argv[1]): print(s["netns"], s["gateway4"])' "$WORLD_PREFIX-s" >"$WORLD_DIR/sb.list"
	read -r ns0 gw <"$WORLD_DIR/sb.list"
	# Every sandbox asks (netd's veths carry permanent neighbour entries on
	# both ends, which the machine-wide gc_thresh3 does not count; before
	# them, a talking sandbox took two learned entries and the bench could
	# ask from only about 380 of them).
	st0=$(bench_scale_status)
	c0=$(bench_scale_cpu_ticks "$NETD_PID")
	"$WORLD_PYTHON" tests/bench/scale_dns.py burst "$WORLD_DIR/sb.list" www.dt.example "$par" >"$WORLD_DIR/burst.out"
	c1=$(bench_scale_cpu_ticks "$NETD_PID")
	st1=$(bench_scale_status)
	read -r _ ans _ failed _ ms <"$WORLD_DIR/burst.out"
	pins=$(($(bench_scale_num pins_tracked "$st1") - $(bench_scale_num pins_tracked "$st0")))
	echo "pins: $pins committed by $(wc -l <"$WORLD_DIR/sb.list") lookups ($ans answered, $failed failed; $par in flight, one client" \
		"process) in $ms ms: $(awk -v p="$pins" -v ms="$ms" 'BEGIN {if (ms > 0) printf "%.0f", p * 1000 / ms}') pins/s," \
		"netd CPU $(((c1 - c0) * 10)) ms; pin latency (answer -> kernel ack) p50" \
		"$(bench_scale_num pin_p50_us "$st1") us, p99 $(bench_scale_num pin_p99_us "$st1") us"
	rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$NETD_PID/status")
	echo "netd RSS: $((rss1 / 1024)) MiB ($rss1 kB) with $r sandboxes and $(bench_scale_num pins_tracked "$st1") pins"

	# ---- reload: one rule added to the shared policy ----
	bench_scale_policy 203.0.113.0/24
	local perf=""
	if [ -n "${BENCH_SCALE_PERF:-}" ]; then	# BENCH_SCALE_PERF=DIR: perf profiles of reload and restart
		perf record -g -p "$NETD_PID" -o "$BENCH_SCALE_PERF/reload-$n.data" >/dev/null 2>&1 &
		perf=$!
		sleep 1
	fi
	t1=$(date +%s%N)
	netd policy reload >"$WORLD_DIR/reload.out" 2>&1 || echo "bench scale: reload failed: $(cat "$WORLD_DIR/reload.out")" >&2
	t2=$(date +%s%N)
	[ -n "$perf" ] && { kill -INT "$perf"; wait "$perf"; }
	echo "reload (one CIDR rule added to the policy of all $r): $(((t2 - t1) / 1000000)) ms"

	# ---- restart ----
	bench_scale_restart "$ns0" "$gw"
	echo "restart: stop took $R_STOP_MS ms; from spawn to the first DNS answer in a sandbox" \
		"$R_DNS_MS ms, to the control socket's first status $R_API_MS ms"
	rss2=$(awk '/^VmRSS/ {print $2}' "/proc/$NETD_PID/status" 2>/dev/null)
	echo "netd RSS after the restart: $((${rss2:-0} / 1024)) MiB (${rss2:-0} kB)"
	if [ -n "${BENCH_SCALE_PERF:-}" ]; then
		cp "/proc/$NETD_PID/smaps" "$BENCH_SCALE_PERF/smaps-$n"
		cp "$NETD_LOG.2" "$BENCH_SCALE_PERF/netd-restart-$n.log"
	fi

	# ---- cleanup ----
	t1=$(bench_scale_ms)
	netd_down >/dev/null
	world_down
	t2=$(bench_scale_ms)
	echo "cleanup (netd stopped, $r namespaces deleted): $(((t2 - t1) / 1000)) s"
	left=$(ls /run/netns 2>/dev/null | grep -c "^ndsc$$-")
	[ "$left" = 0 ] || echo "bench scale: $left namespaces of ndsc$$- left behind" >&2
}

# bench_scale - every size of BENCH_SCALE_SIZES, each in a world of its own.
bench_scale() {
	local n
	for n in ${BENCH_SCALE_SIZES:-1000}; do
		(bench_scale_one "$n")
	done
}
