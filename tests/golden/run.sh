#!/bin/bash
# Golden ruleset tests.  Each case tests/golden/NAME.cmds is a command script
# for the fw driver (tests/golden/fw_golden.c: fw_open, fw_sandbox_add, ...):
#
#   1. rendered, no root: the driver runs on tests/golden/fake_nft.c (the
#      batches fw would send, parsed back by libnftnl and applied to a
#      model), printed with libnftnl's own printers; both tables must equal
#      NAME.libnftnl.  Run as an ordinary user (nobody, when started as root).
#   2. kernel round trip: the same script in a throwaway netns;
#      `nft list table inet netd` + `... bridge netd` + `... arp netd` must equal
#      NAME.nft.  As root the netns is `ip netns add`'s; as an ordinary user
#      it is that of a user namespace of its own (`unshare -Urn`, where the
#      user holds CAP_NET_ADMIN over a private stack), where the kernel
#      allows one; otherwise skipped, and said so.  In a user namespace a
#      driver error is a skip, said with its output (the kernel may refuse
#      there what it allows root: loading a module); a listing that differs
#      is a failure.
#
# UPDATE=1 rewrites the golden files instead.  Never touches the caller's netns.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/asan/golden
bin=$out/fw_golden	# built by make asan / make golden
ns=ndgolden-$$
tmp=$(mktemp -d)

cleanup() {
	[ "$(id -u)" = 0 ] && ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$bin" ] || { echo "golden: missing $bin: run make asan (or make golden) first"; exit 1; }
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/user"	# where the ordinary user writes
# The ordinary user runs a copy: the checkout may sit where it cannot read
# (a clone in /root, mode 0700).
if [ "$(id -u)" = 0 ]; then
	install -m 755 "$bin" "$tmp/fw_golden"
	user_bin=$tmp/fw_golden
else
	user_bin=$bin
fi

# as_user CMD...: run CMD as an ordinary user (nobody) if we are root.
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}

# The kernel half: in whose netns, run how (KERNEL_RUN CMD... runs CMD there).
if [ "$(id -u)" = 0 ]; then
	kernel=netns
	kernel_run=(ip netns exec "$ns")
elif command -v nft >/dev/null && unshare -Urn true 2>/dev/null; then
	kernel=userns
	kernel_run=(unshare -Urn)
else
	kernel=
fi
# In that netns: the driver's answers to OUT.res, the three tables to OUT.raw.
# shellcheck disable=SC2016
kernel_script='"$1" <"$2" >"$3.res"
{ nft list table inet netd; nft list table bridge netd; nft list table arp netd; } >"$3.raw"'

passed=0
fails=0
# check NAME KIND ACTUAL GOLDEN: diff, or with UPDATE=1 copy.
check() {
	local name=$1 kind=$2 actual=$3 golden=$4
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$actual" "$golden"
		echo "golden[$name/$kind]: updated $golden"
	elif ! diff -u "$golden" "$actual"; then
		echo "golden[$name/$kind]: differs from $golden (UPDATE=1 to accept)"
		fails=$((fails + 1))
	else
		echo "golden[$name/$kind]: matches"
		passed=$((passed + 1))
	fi
}

# driver_ok NAME RESULT: every command must have answered "ok".
driver_ok() {
	if [ -n "$(printf '%s\n' "$2" | grep -v '^ok$')" ]; then
		echo "golden[$1]: driver failed:"
		echo "$2"
		fails=$((fails + 1))
		return 1
	fi
}

for cmds in "$here"/*.cmds; do
	name=$(basename "$cmds" .cmds)
	res=$(as_user env ASAN_OPTIONS="${ASAN_OPTIONS:-}" "$user_bin" --fake "$tmp/user/$name.libnftnl" <"$cmds")
	driver_ok "$name/rendered" "$res" &&
		check "$name" rendered "$tmp/user/$name.libnftnl" "$here/$name.libnftnl"

	if [ -z "$kernel" ]; then
		echo "golden[$name/kernel]: skipped (needs root, or a user namespace, for a netns)"
		continue
	fi
	[ "$kernel" = userns ] || ip netns add "$ns" || exit 1
	"${kernel_run[@]}" sh -c "$kernel_script" _ "$bin" "$cmds" "$tmp/k-$name"
	res=$(cat "$tmp/k-$name.res")
	if [ "$kernel" = userns ] && [ -n "$(printf '%s\n' "$res" | grep -v '^ok$')" ]; then
		echo "golden[$name/kernel]: skipped: in a user namespace the kernel refused:"
		echo "$res"
	elif driver_ok "$name/kernel" "$res"; then
		python3 "$here/normalize.py" <"$tmp/k-$name.raw" >"$tmp/$name.nft"
		check "$name" kernel "$tmp/$name.nft" "$here/$name.nft"
	fi
	[ "$kernel" = userns ] || ip netns del "$ns"
done
echo "$passed passed, $fails failed"
exit $((fails > 0))
