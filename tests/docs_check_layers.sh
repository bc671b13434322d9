#!/usr/bin/env bash
# docs_check_layers.sh - shows that tests/docs_check.sh's "layers" rule bites.
# In a temporary copy of the tree (the real one is never touched): the copy
# passes; an include across a layer (netd/trail/ -> netd/link/) and one down
# (netd/trail/ -> netd/model/) still pass; an include that points up
# (netd/model/ -> netd/trail/, no cycle, no other rule broken) fails the
# "layers" check and only it; a product file in no layer fails it too.
# No root, no build.  Ends with "N passed, N failed"; exit 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok()  { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# the tree as docs_check reads it: tracked and new files, not build/
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$tmp"

# add_include FILE HEADER: an #include "HEADER" after FILE's first #include
add_include() {
	sed -i "0,/^#include/s|^#include.*|&\n#include \"$2\"|" "$tmp/$1"
	grep -q "^#include \"$2\"" "$tmp/$1" || { echo "could not edit $1" >&2; exit 1; }
}
reset() { cp "$1" "$tmp/$1"; }

out=$(bash "$tmp/tests/docs_check.sh" 2>&1)
if [ $? -eq 0 ]; then ok "the copy passes docs_check"; else bad "the copy fails docs_check:"; echo "$out"; fi

# across a layer (3 -> 3) and down (3 -> 5): allowed
add_include netd/trail/audit.c netd/link/forwarding.h
add_include netd/trail/audit.c netd/model/sandbox.h
out=$(bash "$tmp/tests/docs_check.sh" 2>&1)
if [ $? -eq 0 ]; then ok "an include across a layer or down passes"
else bad "an include across a layer or down fails:"; echo "$out"; fi
reset netd/trail/audit.c

# up (5 -> 3): netd/trail/nametab.h includes only common/, so no cycle
add_include netd/model/policy.c netd/trail/nametab.h
out=$(bash "$tmp/tests/docs_check.sh" 2>&1)
rc=$?
fails=$(grep -c '^FAIL' <<<"$out")
if [ $rc -ne 0 ] && [ "$fails" -eq 1 ] &&
	grep -q '^FAIL layers:' <<<"$out" &&
	grep -q 'netd/model/policy.c (layer 5) includes netd/trail/nametab.h (layer 3)' <<<"$out"; then
	ok "an include that points up fails docs_check (layers, and only layers)"
else
	bad "an include that points up: docs_check exit $rc, $fails checks failed:"; echo "$out"
fi
reset netd/model/policy.c

# a product file in a folder the Layers list does not name
mkdir -p "$tmp/netd/attic"
printf '/* attic: nothing */\n' >"$tmp/netd/attic/x.h"
out=$(bash "$tmp/tests/docs_check.sh" 2>&1)
if [ $? -ne 0 ] && grep -q 'netd/attic/x.h is in no layer' <<<"$out"; then
	ok "a file in no layer fails docs_check"
else
	bad "a file in no layer: docs_check did not say so:"; echo "$out"
fi

echo "docs_check_layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
