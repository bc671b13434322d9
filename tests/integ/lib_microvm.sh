# shellcheck shell=bash
#
# lib_microvm.sh - boot the real test guest (tests/microvm/) from an
# integration test and turn what it reports into the test's own results.
# Source after tests/integ/lib_netd.sh (for t_pass/t_fail):
#
#     mv_need                          # fails the test if the guest is not built
#     mv_boot NETNS LOG run.sh-ARGS... # boot in NETNS (a /run/netns name)
#     mv_results LOG "what"            # each "MVTEST ok/FAIL - X" -> t_pass/t_fail
#
# The guest's own checks use check/check_fail from its /lib/mvtest.sh.

MV_RUN=${MV_RUN:-$PWD/tests/microvm/run.sh}
MV_DIR=${MICROVM_DIR:-$PWD/build/microvm}
export MICROVM_DIR=$MV_DIR

# mv_need - the guest exists (make microvm-guest builds it: make integ and
# make test depend on it).
mv_need() {
	local f
	for f in vmlinuz initrd.cpio.gz busybox; do
		if ! [ -r "$MV_DIR/$f" ]; then
			echo "FAIL - $MV_DIR/$f missing: run make microvm-guest"
			echo "0 passed, 1 failed"
			exit 1
		fi
	done
}

# mv_boot NETNS LOG ARGS... - tests/microvm/run.sh ARGS in netns NETNS
# (nsenter: the caller's mount namespace), console to LOG.  Returns run.sh's
# status (the guest script's).  QEMU runs in the foreground under run.sh's
# own timeout, so nothing is left running when this returns.
mv_boot() {
	local ns=$1 log=$2
	shift 2
	nsenter --net="/run/netns/$ns" -- "$MV_RUN" "$@" </dev/null >"$log" 2>&1
}

# mv_results LOG WHAT - one t_pass/t_fail per "MVTEST ok - X"/"MVTEST FAIL - X"
# line the guest printed, prefixed "WHAT: "; a guest that never reached its
# end ("MVTEST-END") fails with the console's tail.
mv_results() {
	local log=$1 what=$2 line n=0
	while IFS= read -r line; do
		case $line in
		"MVTEST ok - "*) t_pass "$what: ${line#MVTEST ok - }"; n=$((n + 1)) ;;
		"MVTEST FAIL - "*)
			t_fail "$what: ${line#MVTEST FAIL - }" \
				"$(sed -n "/^${line//\//\\/}\$/,/^MVTEST/p" "$log" | sed '1d;$d' | head -20)"
			n=$((n + 1)) ;;
		esac
	done <"$log"
	if ! grep -q '^MVTEST-END rc=' "$log"; then
		t_fail "$what: the guest ran to its end" "$(tail -n 30 "$log")"
	elif [ "$n" = 0 ]; then
		t_fail "$what: the guest reported checks" "$(tail -n 30 "$log")"
	fi
}
