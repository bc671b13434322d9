#!/usr/bin/env bash
# ship_check.sh - the daemon that ships carries no test seam: no replay_*
# symbol (dnsproxy/replay.c, the replay seam's edges, is linked into the
# unit tests only; see the Makefile's SEAM_SRC) in build/netd or
# build/asan/netd.  Needs at least one of them built; no root.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0
failed=0
for bin in build/netd build/asan/netd; do
	[ -x "$bin" ] || continue
	syms=$(nm "$bin" | awk '$3 ~ /^replay_/ {print $3}')
	if [ -n "$syms" ]; then
		echo "FAIL $bin has test seam symbols:" $syms
		failed=$((failed + 1))
	else
		echo "ok   $bin: no replay_* symbol"
		passed=$((passed + 1))
	fi
done
if [ $((passed + failed)) = 0 ]; then
	echo "FAIL no build/netd or build/asan/netd to check (make, or make asan)"
	failed=1
fi
echo "ship_check: $passed passed, $failed failed"
[ "$failed" = 0 ]
