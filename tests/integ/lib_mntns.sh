#!/usr/bin/env bash
# lib_mntns.sh [--share DIR] STAGE SRC=TARGET... -- CMD [ARG...]
#
# Run inside a private mount namespace (unshare -m --propagation private):
# make each TARGET show the directory SRC, then exec CMD.  Nothing is
# created on the machine's own filesystems: a TARGET that exists gets SRC
# bind-mounted over it; a TARGET that does not (a fresh machine has no
# /etc/cni/net.d, /var/lib/containers, /run/containerd) is made inside a
# writable overlay over its deepest existing ancestor, whose upper layer is
# a tmpfs on STAGE (an empty directory the caller owns and removes), with
# the ancestor's own submounts bound back in.  When the namespace's last
# process exits, every mount goes with it.
#
# --share DIR: DIR's mount stays in the caller's peer group, both ways
# (podman bind-mounts its containers' netns files under /run/netns, and
# netd, outside, must open them).  Start with `unshare -m --propagation
# unchanged`; every other mount is made private here before anything is
# mounted, so no graft reaches the caller.
set -euo pipefail

share=
if [ "${1:-}" = "--share" ]; then
	share=$2
	shift 2
fi
stage=$1
shift
grafts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	grafts+=("$1")
	shift
done
[ "${1:-}" = "--" ] || { echo "lib_mntns.sh: usage: STAGE SRC=TARGET... -- CMD" >&2; exit 2; }
shift
[ $# -gt 0 ] || { echo "lib_mntns.sh: no command" >&2; exit 2; }
# Refuse to run in the machine's own mount namespace: the mounts below
# would stay on the host.
# (unshare execs this script: the parent is the caller, outside.)
if [ "$(readlink /proc/self/ns/mnt)" = "$(readlink "/proc/$PPID/ns/mnt")" ]; then
	echo "lib_mntns.sh: not in a private mount namespace (use unshare -m --propagation private)" >&2
	exit 2
fi

if [ -n "$share" ]; then
	findmnt -no PROPAGATION --mountpoint "$share" | grep -q shared ||
		{ echo "lib_mntns.sh: $share is not a shared mount" >&2; exit 1; }
	while IFS= read -r t; do
		case $t in "$share" | "$share"/*) continue ;; esac
		# A mount gone since the listing (another test's netns deleted
		# meanwhile) is no error; one still there that stays shared is.
		mount --make-private "$t" 2>/dev/null ||
			[ -z "$(findmnt -rn -o TARGET --mountpoint "$t" 2>/dev/null)" ] ||
			{ echo "lib_mntns.sh: cannot make $t private" >&2; exit 1; }
	done < <(findmnt -rn -o TARGET | sed 's/\\x20/ /g')
else
	# started with --propagation private; make sure of it
	mount --make-rprivate /
fi
mount -t tmpfs -o mode=0700 in_mntns "$stage"
n=0

# overlay_at DIR - make DIR writable without writing to what is under it.
overlay_at() {
	local dir=$1 s=$stage/o$n sub rel done_=()
	n=$((n + 1))
	mkdir -p "$s/up" "$s/work" "$s/low"
	mount --rbind "$dir" "$s/low"		# keeps DIR's submounts reachable
	mount -t overlay in_mntns -o "lowerdir=$dir,upperdir=$s/up,workdir=$s/work" "$dir"
	# An overlay shows only DIR's own filesystem: bind its submounts back,
	# each outermost one recursively (findmnt lists parents first).
	while IFS= read -r sub; do
		[ "$sub" = "$s/low" ] && continue
		rel=${sub#"$s/low"/}
		for d in "${done_[@]}"; do
			case $rel in "$d"/*) continue 2 ;; esac
		done
		mount --rbind "$sub" "$dir/$rel"
		done_+=("$rel")
	done < <(findmnt -rn -o TARGET -R "$s/low" | sed 's/\\x20/ /g')
}

for g in "${grafts[@]}"; do
	src=${g%%=*}
	tgt=${g#*=}
	[ -d "$src" ] || { echo "lib_mntns.sh: $src is not a directory" >&2; exit 1; }
	if [ ! -d "$tgt" ]; then
		anc=$(dirname "$tgt")
		while [ ! -d "$anc" ]; do anc=$(dirname "$anc"); done
		[ "$anc" != / ] || { echo "lib_mntns.sh: will not overlay / for $tgt" >&2; exit 1; }
		overlay_at "$anc"
		mkdir -p "$tgt"
	fi
	mount --bind "$src" "$tgt"
done
exec "$@"
