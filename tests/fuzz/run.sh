#!/usr/bin/env bash
# make fuzz: run each libFuzzer target for SECONDS, seeded from
# tests/fuzz/corpus/NAME (read only: new inputs go to build/fuzz/work/NAME),
# with the dictionary tests/fuzz/NAME.dict if there is one.
# A crash leaves its reproducer in build/fuzz/crashes/NAME/; copy it to
# tests/fuzz/crashes/NAME/ (replayed by `make test`) once it is fixed.
#   tests/fuzz/run.sh SECONDS BINARY...
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=$1
shift
bad=0
for bin in "$@"; do
	name=$(basename "$bin")
	work=build/fuzz/work/$name
	crashes=build/fuzz/crashes/$name
	mkdir -p "$work" "$crashes"
	seeds=()
	for d in "tests/fuzz/corpus/$name" "tests/fuzz/crashes/$name"; do
		[ -d "$d" ] && seeds+=("$d")
	done
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	echo "=== $name: ${secs}s${dict:+ (dictionary $name.dict)}"
	if "$bin" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$work" "${seeds[@]}" >"build/fuzz/$name.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "build/fuzz/$name.log" | tail -n 2
		echo "$name: clean"
	else
		bad=$((bad + 1))
		tail -n 40 "build/fuzz/$name.log"
		echo "$name: FAILED (reproducer in $crashes/)"
	fi
done
echo "$(( $# - bad )) passed, $bad failed"
[ "$bad" = 0 ]
