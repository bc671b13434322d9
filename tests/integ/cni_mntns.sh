#!/usr/bin/env bash
# tests/integ/lib_mntns.sh, the runtime tests' grafts: a directory appears
# at a path the machine does not have (its missing parents made in an
# overlay, with the ancestor's contents and submounts still there) or over
# one it has, only inside the private mount namespace; afterwards nothing
# was created or written on the machine.  Needs root; touches no network.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/integ/lib_netd.sh

T=$(mktemp -d /tmp/ndmnt.XXXXXX)
MISSING=/etc/netd-graft-test-$$/a/b	# under /etc: its parents do not exist
cleanup() {
	[ -n "${T:-}" ] && rm -rf --one-file-system "$T"
}
trap cleanup EXIT
mkdir -p "$T/src" "$T/stage" "$T/exist" "$T/anc/sub"
echo graft >"$T/src/marker"
echo under >"$T/exist/old"

G=tests/integ/lib_mntns.sh
inns() { unshare -m --propagation private -- "$G" "$@"; }

# A missing path under /etc.
out=$(inns "$T/stage" "$T/src=$MISSING" -- cat "$MISSING/marker" 2>&1)
eq "a missing path shows the source inside" "graft" "$out"
ok "/etc's own files are still there inside" inns "$T/stage" "$T/src=$MISSING" -- test -s /etc/passwd
fail "nothing was created on the machine" test -e "/etc/netd-graft-test-$$"
inns "$T/stage" "$T/src=$MISSING" -- sh -c "touch /etc/netd-graft-test-$$/written-inside" >/dev/null 2>&1
fail "a write into the overlay stays inside" test -e "/etc/netd-graft-test-$$"

# An existing path: bound over, the original untouched.
eq "an existing path shows the source inside" "graft" \
	"$(inns "$T/stage" "$T/src=$T/exist" -- cat "$T/exist/marker" 2>&1)"
ok "outside, the existing path is as it was" test -e "$T/exist/old"
fail "outside, the source did not land there" test -e "$T/exist/marker"

# The overlaid ancestor's submounts are bound back.
out=$(unshare -m --propagation private -- sh -c '
	mount -t tmpfs sub "$1/anc/sub" && echo mounted >"$1/anc/sub/s" &&
	unshare -m --propagation private -- "$2" "$1/stage" "$1/src=$1/anc/new/dir" -- \
		cat "$1/anc/sub/s" "$1/anc/new/dir/marker"' _ "$T" "$PWD/$G" 2>&1)
eq "a submount of the overlaid ancestor is still there, beside the graft" \
	"mounted"$'\n'"graft" "$out"
fail "the ancestor got no new directory on the machine" test -e "$T/anc/new"

# Refuses to run in the caller's own mount namespace.
fail "refuses without a private mount namespace" "$G" "$T/stage" "$T/src=$MISSING" -- true
fail "nothing created by the refused run" test -e "/etc/netd-graft-test-$$"
t_summary
