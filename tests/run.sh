#!/usr/bin/env bash
# The whole suite, as `make test` runs it (after building build/asan/):
#   1. unit tests (cmocka, one binary per pure module), and tests/docs_check.sh
#   2. every fuzz target's seed corpus and crash reproducers, replayed
#   3. golden ruleset tests (rendered with libnftnl's printers, as an ordinary
#      user; and, as root, the kernel round trip in a throwaway netns)
#   4. integration tests in private worlds (tests/integ/*.sh)
# Needs root for 4 (and the kernel half of 3).  Ends with "total: N passed, N failed".
#   tests/run.sh                     every stage (what `make test` runs)
#   tests/run.sh FILTER              only integration scripts whose name contains FILTER
#   tests/run.sh --stage S[,S] [FILTER]
#                                    only stages S (unit, replay, golden, integ; what
#                                    `make unit`, ... run); FILTER narrows each to the
#                                    tests whose name contains it
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
	echo "usage: tests/run.sh [--stage unit|replay|golden|integ[,...]] [FILTER]" >&2
	exit 2
}
stages=
while [ $# -gt 0 ]; do
	case $1 in
	--stage) [ $# -ge 2 ] || usage; stages=$2; shift 2 ;;
	--stage=*) stages=${1#--stage=}; shift ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || usage
filter=${1:-}
if [ -z "$stages" ]; then
	# As before: a FILTER alone selects integration scripts only.
	if [ -n "$filter" ]; then stages=integ; else stages=unit,replay,golden,integ; fi
fi
for s in ${stages//,/ }; do
	case $s in unit | replay | golden | integ) ;; *) echo "tests/run.sh: unknown stage '$s'" >&2; usage ;; esac
done
# stage NAME: is stage NAME selected?
stage() { [[ ",$stages," == *",$1,"* ]]; }
# want NAME: does test NAME pass the filter?
want() { [ -z "$filter" ] || [[ "$1" == *"$filter"* ]]; }
passed=0
failed=0
failures=()
# No user namespace for root, whose root is not init's (or init's cannot be
# read): a chroot, in which the kernel refuses them; the rootless tests and
# the container runtimes (runc) need them and will fail: this says why.
chroot_note=""
if [ "$(id -u)" = 0 ] && ! unshare -U true 2>/dev/null &&
	[ "$(stat -c %d:%i / 2>/dev/null)" != "$(stat -c %d:%i /proc/1/root/. 2>/dev/null)" ]; then
	chroot_note="this is a chroot: the kernel refuses user namespaces here, so the rootless
tests (test_userns_link, kernel_box) and the container runtimes' (cni_containerd,
cni_docker, docker_driver) fail; enter the root with unshare -m and pivot_root instead"
	echo "tests/run.sh: $chroot_note" >&2
fi
# No cgroup file system mounted (a root made by hand with a bare sysfs): the
# container runtimes (runc, dockerd, podman) refuse to start containers.
if ! grep -qE ' - cgroup2? ' /proc/self/mountinfo 2>/dev/null; then
	note="no cgroup file system is mounted (/sys/fs/cgroup): runc, dockerd and podman
cannot start containers, so cni_containerd, cni_docker, cni_image, cni_podman and
docker_driver fail; mount one first (mount -t cgroup2 none /sys/fs/cgroup)"
	chroot_note=${chroot_note:+$chroot_note; }$note
	echo "tests/run.sh: $note" >&2
fi

# count OUTPUT_FILE NAME RC: add the script's own "N passed, N failed" line,
# or count the script as one test by its exit code.
count() {
	local out=$1 name=$2 rc=$3 line p f
	line=$(grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1 || true)
	if [ -z "$line" ] && grep -qE '^\[==========\] [0-9]+ test\(s\) run' "$out"; then
		# cmocka: "[==========] N test(s) run." and "[  FAILED  ] N test(s)..."
		p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$out" | grep -oE '[0-9]+' | head -1)
		f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$out" | grep -oE '[0-9]+' | head -1)
		line="cmocka"
		p=${p:-0} f=${f:-0}
	elif [ -n "$line" ]; then
		p=$(sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	elif [ "$rc" = 0 ]; then
		p=1 f=0
	else
		p=0 f=1
	fi
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1		# a crash after the summary line still fails
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" != 0 ]; then
		failures+=("$name")
	fi
}

# leftovers SID - the processes of session SID still alive (a test's own
# session: setsid in run_integ), zombies aside.
leftovers() { ps -eo pid=,sid=,stat= | awk -v s="$1" '$2 == s && $3 !~ /^Z/ {print $1}'; }

# run_integ NAME CMD... - run() CMD (a script) in a session of its own; whatever
# of that session outlives it is a leak: listed, ended by its PID, and a
# failure of the test (a test must end every process it started).
run_integ() {
	local name=$1 sid pids sid_file
	shift
	sid_file=$(mktemp)
	run "$name" setsid -w bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$sid_file" "$@"
	sid=$(cat "$sid_file")
	rm -f "$sid_file"
	[ -n "$sid" ] || return 0
	pids=$(leftovers "$sid")
	[ -z "$pids" ] || { sleep 2; pids=$(leftovers "$sid"); }
	[ -z "$pids" ] && return 0
	echo "FAIL - $name left processes running:"
	ps -o pid=,cmd= -p "$(echo $pids | tr ' ' ',')" | sed 's/^/       /'
	kill $pids 2>/dev/null
	failed=$((failed + 1))
	failures+=("$name (left processes)")
}

run() {			# run NAME CMD...
	local name=$1 out rc
	shift
	out=$(mktemp)
	echo "=== $name"
	"$@" >"$out" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		cat "$out"
	else
		tail -n 3 "$out"
	fi
	count "$out" "$name" "$rc"
	rm -f "$out"
}

# missing NAME PATH - a test whose binary was not built: a failure, with the fix.
missing() {
	echo "=== $1: $2 is not built: run make asan (or make unit / make replay) first"
	failed=$((failed + 1))
	failures+=("$1 (not built)")
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if stage unit; then
	# Every test's source has its binary, or the stage fails saying so: a
	# fresh clone without `make asan` must not look green.
	for src in tests/unit/test_*.c; do
		t=build/asan/unit/$(basename "$src" .c)
		want "$(basename "$t")" || continue
		if [ ! -x "$t" ]; then
			missing "unit/$(basename "$t")" "$t"
			continue
		fi
		run "unit/$(basename "$t")" "$t"
	done
	# The real daemon on real kernel parts, without root: a user namespace
	# of its own (tests/userns_box.sh; as root, it first becomes nobody).
	if want kernel_box; then
		if [ ! -x build/asan/netd ] || [ ! -x build/asan/netd-cni ]; then
			missing unit/kernel_box build/asan/netd
		elif tests/userns_box.sh true 2>/dev/null; [ $? = 77 ]; then
			# A skip would hide the rootless daemon's coverage: a failure,
			# with what the machine lacks.
			echo "=== unit/kernel_box: no user namespace here (tests/userns_box.sh:" \
				"unprivileged user namespaces are off: sysctl kernel.unprivileged_userns_clone," \
				"user.max_user_namespaces or an AppArmor restriction)"
			failed=$((failed + 1))
			failures+=("unit/kernel_box (no user namespace)")
		else
			run_integ unit/kernel_box tests/userns_box.sh tests/unit/kernel_box.sh
		fi
	fi
	# The docs against the tree, and the include rules (no build, no root).
	if want docs_check; then
		run unit/docs_check tests/docs_check.sh
	fi
	# ... and that its layers rule fails an upward include (in a copy).
	if want docs_check_layers; then
		run unit/docs_check_layers tests/docs_check_layers.sh
	fi
	# The shipped daemon carries no test seam (replay_* symbols).
	if want ship_check; then
		run unit/ship_check tests/ship_check.sh
	fi
fi
if stage replay; then
	for src in tests/fuzz/fuzz_*.c; do
		n=$(basename "$src" .c)
		t=build/asan/replay/$n
		want "$n" || continue
		if [ ! -x "$t" ]; then
			missing "fuzz-replay/$n" "$t"
			continue
		fi
		dirs=()
		for d in "tests/fuzz/corpus/$n" "tests/fuzz/crashes/$n"; do
			[ -d "$d" ] && dirs+=("$d")
		done
		[ ${#dirs[@]} -gt 0 ] || { echo "=== fuzz/$n: no corpus"; failed=$((failed + 1)); failures+=("fuzz/$n (no corpus)"); continue; }
		run "fuzz-replay/$n" "$t" "${dirs[@]}"
	done
fi

# Golden: the rendered half needs no root; the script skips its kernel half without.
if stage golden && want golden && [ -x tests/golden/run.sh ]; then
	run golden tests/golden/run.sh
fi

if ! stage integ; then
	:
elif [ "$(id -u)" != 0 ]; then
	echo "=== integration tests need root: FAILED to run them"
	failed=$((failed + 1))
	failures+=("not root")
else
	for t in tests/integ/*.sh; do
		[ -x "$t" ] || continue
		case "$(basename "$t")" in lib*.sh) continue ;; esac
		want "$t" || continue	# the path, as before: "dns_gso.sh" works
		run_integ "integ/$(basename "$t" .sh)" "$t"
	done
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
	[ -z "$chroot_note" ] || echo "($chroot_note)"
fi
echo "=== total of every test above (stages $stages)"
echo "total: $passed passed, $failed failed"
[ "$failed" = 0 ]
