#!/usr/bin/env bash
# coverage.sh - how much of the product runs without root, and how much
# only under the root integration tests (docs/architecture.md, "How much
# runs without root").  Measured with gcov on a copy of the tree, never in
# the tree itself (its build/ stays the sanitizer build):
#
#   1. the tree (without build/) is copied to COVER_DIR/tree and its
#      sanitizer targets are built with --coverage instead of ASan
#      (`make SAN=--coverage asan`: build/asan/ then holds .gcno files;
#      the copy's build/ is kept from run to run, only changes rebuilt);
#   2. the rootless stages (`tests/run.sh --stage unit,replay,golden`) run
#      with GCOV_PREFIX=COVER_DIR/rootless, as nobody when started as root
#      (what needs a kernel then runs in a user namespace of its own, or
#      is skipped: never as root);
#   3. with --integ, the integration stage (`tests/run.sh --stage integ`,
#      root, about 25 minutes) runs once with GCOV_PREFIX=COVER_DIR/integ;
#   4. `gcov -t` on every product .c file (netd/, dnsproxy/, common/,
#      cni-plugin/, docker-plugin/; not the test seam dnsproxy/replay.c) against each run's
#      counts: a line is executable if gcov counts it (product headers'
#      inline code included), reached if its count is not zero.
#
#   tests/coverage.sh            rootless only (about 10 minutes on 2 cores;
#                                less when COVER_DIR/tree was built before)
#   tests/coverage.sh --integ    and the integration stage (root)
#   tests/coverage.sh --integ-from DIR
#                                rootless, with the integration counts of an
#                                earlier --integ run (its COVER_DIR/integ,
#                                or a copy); refused unless the product
#                                sources are the same as then
#   --rev REV                    measure commit REV's tree (git archive), not
#                                the working tree: the tests of before a
#                                change, against the same integration counts
#
# Leaves COVER_DIR/summary.txt (printed at the end) and COVER_DIR/lines.tsv
# (file, line, reached rootless 0/1, reached by integ 0/1 or -).
#   COVER_DIR     default /var/tmp/netd-cover (every user writes counts there)
#   MICROVM_DEBS  a build/microvm/debs to copy (the guest's kernel and
#                 busybox packages), so --integ downloads nothing
#   JOBS          make -j (default 2)
# What cannot be counted: a process killed by a signal (gcov writes at
# exit), and the netd inside the microVM guest (its counts stay in the guest).
# In the copy, unit/docs_check_layers fails (it lists files with git, and
# the copy is no checkout); it runs no product code.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cover=${COVER_DIR:-/var/tmp/netd-cover}
jobs=${JOBS:-2}
integ=0
integ_from=
rev=
usage() { echo "usage: tests/coverage.sh [--integ | --integ-from DIR] [--rev REV]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--integ) integ=1; shift ;;
	--integ-from) [ $# -ge 2 ] || usage; integ_from=$(cd "$2" && pwd); shift 2 ;;
	--rev) [ $# -ge 2 ] || usage; rev=$2; shift 2 ;;
	*) usage ;;
	esac
done
[ -z "$integ_from" ] || [ "$integ" = 0 ] || usage
[ "$integ" = 0 ] || [ "$(id -u)" = 0 ] || { echo "coverage: --integ needs root" >&2; exit 2; }
say() { echo "coverage: $*" >&2; }

# product_sum: one hash over the product's sources; integration counts are
# reused only for the same sources (line numbers must mean the same lines).
product_sum() {
	(cd "$1" && find netd dnsproxy common cni-plugin docker-plugin -name '*.[ch]' -print0 | sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# sums: every file of the copy but build/, with its checksum.
sums() { (cd "$tree" && find . -path ./build -prune -o -type f -print0 | sort -z | xargs -0 -r sha256sum); }

# The copy keeps its build/ from an earlier run: only what changed is
# rebuilt (the product's .gcno stay those its counts were written with).
# Files whose content changed are touched, as tar keeps the source's
# mtimes; test programs whose source is gone are removed.
mkdir -p "$cover"
tree=$cover/tree
say "copying ${rev:-the working tree} to $tree"
rm -rf "$cover/rootless" "$cover/summary.txt" "$cover/lines.tsv"
[ "$integ" = 0 ] || rm -rf "$cover/integ"
mkdir -p "$tree"
sums >"$cover/sums.old"
find "$tree" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
if [ -n "$rev" ]; then
	git -C "$src" archive "$rev" | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$tree" -xf -
fi
sums >"$cover/sums.new"
comm -13 <(sort "$cover/sums.old") <(sort "$cover/sums.new") | cut -c67- | (cd "$tree" && xargs -r -d '\n' touch)
for b in "$tree"/build/asan/unit/test_* "$tree"/build/asan/replay/fuzz_*; do
	[ -e "$b" ] || continue
	case $b in */unit/*) s=tests/unit ;; *) s=tests/fuzz ;; esac
	[ -e "$tree/$s/$(basename "$b").c" ] || rm -f "$b"
done
targets=(asan)
if [ "$integ" = 1 ]; then
	mkdir -p "$tree/build/microvm"
	debs=${MICROVM_DEBS:-$src/build/microvm/debs}
	[ -d "$debs" ] && cp -a "$debs" "$tree/build/microvm/"
	targets+=(microvm-world)
fi
say "building ${targets[*]} with --coverage (make -j$jobs)"
make -C "$tree" -j"$jobs" SAN=--coverage "${targets[@]}" >"$cover/build.log" 2>&1 ||
	{ tail -n 30 "$cover/build.log"; say "build failed ($cover/build.log)"; exit 1; }
chmod -R a+rX "$cover"

# run_stage DIR STAGES [UID]: tests/run.sh --stage STAGES in the copy,
# counts under DIR (made writable by every user: the box's daemon and the
# golden driver drop to nobody).
run_stage() {
	local dir=$1 stages=$2 user=${3:-} rc=0
	mkdir -p "$dir"
	chmod 1777 "$dir"
	say "tests/run.sh --stage $stages${user:+ as $user} (counts in $dir)"
	if [ -n "$user" ]; then
		(cd "$tree" && umask 000 && GCOV_PREFIX=$dir setpriv --reuid="$user" --regid="$user" \
			--clear-groups env HOME=/tmp tests/run.sh --stage "$stages") >"$dir.log" 2>&1 || rc=$?
	else
		(cd "$tree" && umask 000 && GCOV_PREFIX=$dir tests/run.sh --stage "$stages") >"$dir.log" 2>&1 || rc=$?
	fi
	tail -n 2 "$dir.log" >&2
	[ "$rc" = 0 ] || say "$stages: some tests failed ($dir.log); counted all the same"
}

if [ "$(id -u)" = 0 ]; then
	run_stage "$cover/rootless" unit,replay,golden 65534
else
	run_stage "$cover/rootless" unit,replay,golden
fi
if [ "$integ" = 1 ]; then
	run_stage "$cover/integ" integ
	product_sum "$tree" >"$cover/integ/product.sum"
	echo "$tree" >"$cover/integ/tree.path"
	integ_dir=$cover/integ
elif [ -n "$integ_from" ]; then
	[ "$(cat "$integ_from/product.sum" 2>/dev/null)" = "$(product_sum "$tree")" ] ||
		{ say "$integ_from: counted on other product sources; run --integ again"; exit 1; }
	integ_dir=$integ_from
else
	integ_dir=
fi

# gcov_run DIR [TREE]: `gcov -t` of every product .c file against the
# counts under DIR (written by a build in TREE, default this one), each
# .gcno copied beside its counts the first time: counts kept for
# --integ-from stay with the notes of the build that wrote them (gcov
# refuses counts whose stamp is not their notes').
gcov_run() {
	local dir=$1 at=${2:-$tree} f obj
	(cd "$tree" && find netd dnsproxy common cni-plugin docker-plugin -name '*.c' ! -path dnsproxy/replay.c | sort |
		while read -r f; do
			obj=$dir$at/build/asan/obj/$(dirname "$f")
			mkdir -p "$obj"
			[ -e "$obj/$(basename "${f%.c}").gcno" ] ||
				cp "build/asan/obj/${f%.c}.gcno" "$obj/" 2>/dev/null || { echo "NOGCNO $f"; continue; }
			gcov -t -o "$obj" "$f" 2>/dev/null
		done)
}
gcov_run "$cover/rootless" >"$cover/rootless.gcov"
[ -z "$integ_dir" ] || gcov_run "$integ_dir" "$(cat "$integ_dir/tree.path")" >"$cover/integ.gcov"

python3 - "$cover" "$integ_dir" <<'EOF'
import os, re, sys
from collections import defaultdict

cover, integ = sys.argv[1], sys.argv[2]
PRODUCT = ("netd/", "dnsproxy/", "common/", "cni-plugin/", "docker-plugin/")

def read(path):
    """{(file, line): reached} over every product source gcov printed."""
    lines, src = {}, None
    for raw in open(path, errors="replace"):
        if raw.startswith("NOGCNO "):
            sys.exit("coverage: no .gcno for " + raw.split()[1])
        m = re.match(r"\s*([^:]+):\s*(\d+):(.*)$", raw.rstrip("\n"))
        if not m:
            continue
        count, num = m.group(1).strip(), int(m.group(2))
        if num == 0:
            if m.group(3).startswith("Source:"):
                src = os.path.normpath(m.group(3)[len("Source:"):])
            continue
        if not src or not src.startswith(PRODUCT) or count == "-":
            continue
        reached = count.rstrip("*") not in ("#####", "=====", "0")
        lines[(src, num)] = lines.get((src, num), False) or reached
    return lines

root = read(os.path.join(cover, "rootless.gcov"))
ints = read(os.path.join(cover, "integ.gcov")) if integ else None
exe = set(root)
files = sorted({f for f, _ in exe})
per = defaultdict(lambda: [0, 0, 0, 0])	# executable, rootless, integ, integ only
for key in exe:
    p = per[key[0]]
    r, i = root[key], bool(ints and ints.get(key))
    p[0] += 1; p[1] += r; p[2] += i; p[3] += i and not r

def pct(n, d):
    return f"{n:,} of {d:,} ({100.0 * n / d:.1f}%)"

E = len(exe)
R = sum(p[1] for p in per.values())
out = [f"executable product lines: {E:,} in {len(files)} files",
       f"reached by the rootless stages: {pct(R, E)}"]
if ints is not None:
    I = sum(p[2] for p in per.values())
    O = sum(p[3] for p in per.values())
    both = sum(1 for k in exe if root[k] or ints.get(k))
    out += [f"reached by the integration stage: {pct(I, E)}",
            f"reached by either: {pct(both, E)}",
            f"reached ONLY by the integration stage (root): {pct(O, E)}",
            "", "files by lines reached only as root (integ-only / executable, rootless %):"]
    for f in sorted(files, key=lambda f: -per[f][3]):
        if per[f][3]:
            e, r, i, o = per[f]
            out.append(f"  {o:5d} / {e:5d}  {100.0 * r / e:5.1f}%  {f}")
untouched = [f for f in files if per[f][1] == 0]
out += ["", f"files no rootless stage enters: {len(untouched)}"] + ["  " + f for f in untouched]
text = "\n".join(out) + "\n"
open(os.path.join(cover, "summary.txt"), "w").write(text)
with open(os.path.join(cover, "lines.tsv"), "w") as t:
    for f, n in sorted(exe):
        i = "-" if ints is None else int(bool(ints.get((f, n))))
        t.write(f"{f}\t{n}\t{int(root[(f, n)])}\t{i}\n")
print(text, end="")
EOF
