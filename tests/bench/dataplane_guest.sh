#!/usr/bin/env bash
# dataplane_guest.sh - the flowtable's figures (run.sh calls it; it also
# runs alone, root): boots the microVM test guest with its netd world
# (make microvm-world) and runs tests/microvm/bench-guest.sh there, on
# Debian's kernel, which has nftables flowtables.  The guest has no NIC.
#
#   BENCH_DPG_ROUNDS=3 BENCH_DPG_SECONDS=3 tests/bench/dataplane_guest.sh
#
# Prints the guest's table; asserts nothing about time.
set -uo pipefail
cd "$(dirname "$0")/../.."
MV=${MICROVM_DIR:-$PWD/build/microvm}
[ -r "$MV/world.cpio.gz" ] || { echo "bench: $MV/world.cpio.gz missing: make microvm-world" >&2; exit 1; }
rounds=${BENCH_DPG_ROUNDS:-3} secs=${BENCH_DPG_SECONDS:-3}
ns=ndpg$$
log=$(mktemp /tmp/ndpg.XXXXXX)
trap 'ip netns del "$ns" 2>/dev/null; rm -f "$log"' EXIT
ip netns add "$ns"
echo
echo "Flowtable data plane (microVM guest, Debian's kernel; tests/microvm/bench-guest.sh):"
nsenter --net="/run/netns/$ns" -- tests/microvm/run.sh --tap none \
	--script tests/microvm/bench-guest.sh --extra "$MV/world.cpio.gz" --mem 1024 \
	--append "netd.rounds=$rounds netd.secs=$secs" --timeout $((120 + rounds * secs * 12 * 2)) \
	</dev/null >"$log" 2>&1
rc=$?
sed -n 's/^BENCH /  /p' "$log"
[ "$rc" = 0 ] || { echo "bench: the guest ended with $rc:"; tail -n 20 "$log"; }
