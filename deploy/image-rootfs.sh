#!/bin/sh
# image-rootfs.sh OUT - lay out OUT/rootfs for deploy/Dockerfile (FROM
# scratch: nothing is downloaded).  `make image-rootfs` runs it after the
# release build; then: docker build -f deploy/Dockerfile -t netd OUT
#
#   /usr/sbin/netd            the daemon, with exactly the shared libraries
#                             ldd lists (and the loader) at their paths
#   /usr/lib/netd/netd-cni    the static CNI plugin install-cni.sh copies
#                             onto the node (it must run without our libs)
#   /usr/lib/netd/install-cni.sh
#   /bin/busybox + links      Debian's busybox-static: sh, cp, mv, ... for
#                             the installer and kubectl exec
#   /etc/netd/policies/       the shipped policies (a ConfigMap replaces them)
set -eu
out=${1:?usage: image-rootfs.sh OUT}
top=$(cd "$(dirname "$0")/.." && pwd)
netd=$top/build/netd
cni=$top/build/static/netd-cni
for f in "$netd" "$cni" /bin/busybox; do
	[ -x "$f" ] || { echo "image-rootfs: missing $f (make; make build/static/netd-cni; busybox-static)" >&2; exit 1; }
done
case $(LC_ALL=C ldd "$cni" 2>&1) in
*"not a dynamic executable"*) ;;
*) echo "image-rootfs: $cni is dynamically linked" >&2; exit 1 ;;
esac
case $(LC_ALL=C ldd /bin/busybox 2>&1) in
*"not a dynamic executable"*) ;;
*) echo "image-rootfs: /bin/busybox is not busybox-static" >&2; exit 1 ;;
esac
r=$out/rootfs
rm -rf "$r"
mkdir -p "$r/usr/sbin" "$r/usr/lib/netd" "$r/bin" "$r/etc/netd/policies" "$r/tmp" \
	"$r/run" "$r/var/lib/netd" "$r/var/log/netd" "$r/proc" "$r/sys" "$r/dev"
chmod 1777 "$r/tmp"
cp "$netd" "$r/usr/sbin/netd"
# Every library ldd resolves, plus the loader (the line without "=>").
LC_ALL=C ldd "$netd" | awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]*ld-linux/ { print $1 }' |
while read -r lib; do
	mkdir -p "$r$(dirname "$lib")"
	cp -L "$lib" "$r$lib"
done
cp "$cni" "$r/usr/lib/netd/netd-cni"
cp "$top/deploy/kubernetes/install-cni.sh" "$r/usr/lib/netd/install-cni.sh"
chmod 755 "$r/usr/lib/netd/install-cni.sh"
cp /bin/busybox "$r/bin/busybox"
for a in sh cat cmp cp ls mkdir mv rm sleep chmod echo test true false; do
	ln -s busybox "$r/bin/$a"
done
cp "$top"/policies/*.yaml "$r/etc/netd/policies/"
cp "$top/deploy/Dockerfile" "$out/Dockerfile"
echo "image-rootfs: $r ($(du -sh "$r" | cut -f1))"
