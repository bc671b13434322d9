#!/usr/bin/env bash
# userns_box.sh - run CMD as an ordinary user inside a user namespace of its
# own, with real kernel parts and no root:
#
#   tests/userns_box.sh CMD...
#
#   1. as root, it first becomes nobody (setpriv; NETD_BOX_AS_ROOT=1 keeps
#      root, as test_userns_link.c does): the box never runs as the machine's
#      root, so it cannot touch the machine's network whatever CMD does;
#   2. `unshare -Urnm --pid --fork --mount-proc`: a user namespace whose
#      root is the caller, a network namespace, a private mount namespace
#      (propagation private) and a PID namespace (CMD is its PID 1: when CMD
#      ends, the kernel ends whatever it left running);
#   3. tmpfs over /run/netns and /etc/netns (so `ip netns add`, netd's
#      sandbox netns and their resolv.conf files live in the box and vanish
#      with it), lo up, then CMD (as the namespace's root, from the tree).
#      /etc/netns is mounted inside a read-only overlay of /etc (whose top
#      layer holds an empty netns/), never on the machine's own /etc/netns:
#      a root test's world_down rmdirs that when empty, and the kernel then
#      detaches the mounts on it in every mount namespace (ours too); and
#      /etc/netns need not exist on the machine.
#
# Everything CMD makes (network namespaces, veths, taps, nftables tables,
# conntrack entries, mounts) belongs to the box's namespaces: when the
# last process in them exits, the kernel frees it all.  Files CMD writes
# outside the tmpfs mounts are written as nobody (world.sh's WORLD_DIR in
# /tmp, which world_down removes).
#
# What a user namespace's root may not do on Linux 6.x is in
# docs/architecture.md ("How much runs without root").
# Exit status: CMD's; 77 if this kernel or machine gives no user
# namespace (tests/run.sh counts that a failure, saying why).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${USERNS_BOX_INNER:-}" = 1 ]; then
	# The overlay's top layer on a tmpfs that is then detached (the
	# overlay keeps it) for a fresh one: /run/netns lists netns only.
	mount -t tmpfs -o mode=755 netd-box /run/netns
	mkdir -p /run/netns/top/netns
	mount -t overlay netd-box -o lowerdir=/run/netns/top:/etc /etc
	umount -l /run/netns
	mount -t tmpfs -o mode=755 netd-box /run/netns
	mount -t tmpfs -o mode=755 netd-box /etc/netns
	ip link set lo up
	cd "$top"
	exec "$@"
fi

[ $# -gt 0 ] || { echo "usage: tests/userns_box.sh CMD..." >&2; exit 2; }
as_user=()
if [ "$(id -u)" = 0 ] && [ "${NETD_BOX_AS_ROOT:-}" != 1 ]; then
	# root's PATH may name directories nobody cannot search (execvp then
	# says EACCES, not ENOENT): the usual ones instead.
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
	# A tree nobody cannot reach (a clone under root's 0700 home): a mount
	# namespace of root's own with a tmpfs on /mnt and the tree bound at
	# /mnt/netd, then this script again from there.  Nothing on the
	# machine changes; the mounts go with the namespace.
	if [ "${USERNS_BOX_BOUND:-}" != 1 ] && ! "${as_user[@]}" test -r "$top/tests/userns_box.sh"; then
		exec unshare --mount --propagation private env USERNS_BOX_BOUND=1 bash -c '
			set -e
			mount -t tmpfs -o mode=755 netd-box-tree /mnt
			mkdir /mnt/netd
			mount --bind "$1" /mnt/netd
			shift
			exec /mnt/netd/tests/userns_box.sh "$@"' _ "$top" "$@"
	fi
fi
if ! "${as_user[@]}" unshare -Urnm --pid --fork --mount-proc true 2>/dev/null; then
	echo "userns_box: no user namespace here (unshare -Urnm --pid failed): skipped" >&2
	exit 77
fi
# The box mounts over /run/netns: as root, make it if a fresh machine has
# none yet (and remove it after, if still empty); an ordinary user cannot.
made_netns=0
if [ ! -d /run/netns ]; then
	if [ "$(id -u)" = 0 ] && mkdir -m 755 /run/netns 2>/dev/null; then
		made_netns=1
	else
		echo "userns_box: /run/netns is missing (the box mounts over it; root makes it)" >&2
		exit 77
	fi
fi
if [ "$made_netns" = 0 ]; then
	exec "${as_user[@]}" env USERNS_BOX_INNER=1 unshare -Urnm --propagation private --pid --fork --mount-proc "$0" "$@"
fi
rc=0
"${as_user[@]}" env USERNS_BOX_INNER=1 unshare -Urnm --propagation private --pid --fork --mount-proc "$0" "$@" || rc=$?
rmdir /run/netns 2>/dev/null || true
exit "$rc"
