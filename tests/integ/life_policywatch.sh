#!/usr/bin/env bash
# policy_watch: true - netd reloads when policy_dir changes, with no SIGHUP
# and no API call.  policy_dir is laid out the way kubelet lays out a
# ConfigMap volume (NAME.yaml -> ..data/NAME.yaml, ..data -> ..TIMESTAMP)
# and updated the way kubelet's atomic writer does it: a new ..TIMESTAMP
# directory, a ..data_tmp symlink renamed over ..data, the old directory
# removed.  A new policy takes effect for a running sandbox; a broken one
# is rejected and the last good policies stay; a plain edit of a file (a
# host without Kubernetes) is picked up too; without policy_watch nothing
# reloads.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndw$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
P=$WORLD_DIR/policies
mkdir -p "$P"

# cm_write TS FILE... - kubelet's AtomicWriter: the payload into ..TS, then
# ..data swapped by rename, user-visible names as symlinks into ..data.
cm_write() {
	local ts=..$1 old f
	shift
	mkdir "$P/$ts"
	for f in "$@"; do cp "$f" "$P/$ts/"; done
	old=$(readlink "$P/..data" 2>/dev/null || true)
	ln -s "$ts" "$P/..data_tmp"
	mv -T "$P/..data_tmp" "$P/..data"
	for f in "$@"; do
		[ -L "$P/$(basename "$f")" ] || ln -s "..data/$(basename "$f")" "$P/$(basename "$f")"
	done
	[ -z "$old" ] || rm -rf "${P:?}/$old"
}

S=$WORLD_DIR/src
mkdir -p "$S/v1" "$S/v2" "$S/v3"
cat >"$S/v1/swap.yaml" <<'YAML'
name: swap
egress:
  - domains: [pypi.org]
    ports: [443]
YAML
cat >"$S/v2/swap.yaml" <<'YAML'
name: swap
egress:
  - domains: [example.com]
    ports: [443]
YAML
cat >"$S/v3/swap.yaml" <<'YAML'
name: swap
egress:
  - domains: [pypi.org
YAML
cp policies/deny-all.yaml "$S/v1/"
cp policies/deny-all.yaml "$S/v2/"
cp policies/deny-all.yaml "$S/v3/"
cm_write 2024_05_01_10_00_00.000000001 "$S/v1/swap.yaml" "$S/v1/deny-all.yaml"

reloads() { grep -c "policy reload: " "$NETD_LOG"; }
# wait_for CMD... - poll (bounded) until CMD succeeds; the reload is asynchronous.
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
resolves() { [ "$(sb_dig w1 +short "$1" A)" = "$2" ]; }

# ---- without policy_watch: a ConfigMap update changes nothing ---------------------------
NETD_POLICIES=$P netd_up || { echo "0 passed, 1 failed"; exit 1; }
sb_create w1 swap >/dev/null
eq "control: pypi.org resolves under swap v1" 198.51.100.10 "$(sb_dig w1 +short pypi.org A)"
cm_write 2024_05_01_10_01_00.000000001 "$S/v2/swap.yaml" "$S/v2/deny-all.yaml"
sleep 1	# nothing is expected to happen: give it the chance to happen wrongly
eq "control: without policy_watch, no reload ran" 0 "$(reloads)"
eq "control: ... and v1 is still in force" 198.51.100.10 "$(sb_dig w1 +short pypi.org A)"
netd_down

# ---- with policy_watch ----------------------------------------------------------------------
cm_write 2024_05_01_10_02_00.000000001 "$S/v1/swap.yaml" "$S/v1/deny-all.yaml"
NETD_POLICIES=$P netd_up "policy_watch: true" || { t_fail "netd starts with policy_watch"; t_summary; exit 1; }
has "netd says it watches policy_dir" "policy_watch: watching $P" "$(cat "$NETD_LOG")"
eq "the restored sandbox resolves pypi.org under v1" 198.51.100.10 "$(sb_dig w1 +short pypi.org A)"
cm_write 2024_05_01_10_03_00.000000001 "$S/v2/swap.yaml" "$S/v2/deny-all.yaml"
ok "after kubelet's ..data swap, example.com resolves (v2 in force)" wait_for resolves example.com 203.0.113.66
has "... and pypi.org no longer does" NXDOMAIN "$(sb_dig w1 pypi.org A)"
has "the reload was the watch's" "policy_watch: $P changed: reloading" "$(cat "$NETD_LOG")"
n_ok=$(reloads)

cm_write 2024_05_01_10_04_00.000000001 "$S/v3/swap.yaml" "$S/v3/deny-all.yaml"
ok "a broken policy is rejected" wait_for grep -q "policy reload rejected" "$NETD_LOG"
ok "... (the log says so, with file:line)" grep -q "policy reload rejected.*swap.yaml:" "$NETD_LOG"
eq "... and the last good policy (v2) stays: example.com resolves" 203.0.113.66 \
	"$(sb_dig w1 +short example.com A)"
has "... pypi.org still NXDOMAIN" NXDOMAIN "$(sb_dig w1 pypi.org A)"
eq "... no reload was applied" "$n_ok" "$(reloads)"

# A plain host: the admin edits the file itself (no symlinks).
rm -rf "${P:?}"/* "$P"/..?*
cp "$S/v1/swap.yaml" "$S/v1/deny-all.yaml" "$P/"
ok "a plain file edit is picked up: pypi.org resolves again (v1)" wait_for resolves pypi.org 198.51.100.10
has "... example.com NXDOMAIN" NXDOMAIN "$(sb_dig w1 example.com A)"
ok "netd is still up" netd_alive
"$NETD_BIN" sandbox delete "$(sb_name w1)" >/dev/null
netd_down
t_summary
