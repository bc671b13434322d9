#!/usr/bin/env bash
# build.sh - the real guest the microVM tests boot: Debian's cloud kernel and
# a busybox initramfs, from Debian packages (`apt-get download` + `dpkg -x`,
# nothing installed on this machine).  What boots and why is in
# /work/shared/microvm-notes.md; in short: QEMU -M microvm under TCG boots
# linux-image-*-cloud-amd64; its virtio drivers are modules, so the initramfs
# loads them (tests/microvm/init); IP_PNP is off, so init configures eth0.
#
#   tests/microvm/build.sh [OUTDIR]        (default build/microvm; `make microvm-guest`)
#
# Leaves OUTDIR/vmlinuz, OUTDIR/initrd.cpio.gz and OUTDIR/kernel-release.
# The .debs are cached in OUTDIR/debs: a second run downloads nothing.
#   MICROVM_KERNEL_PKG  the kernel package (default: what the metapackage
#                       linux-image-cloud-amd64 depends on now)
# Needs no root (apt-get download works as any user).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/microvm}
mkdir -p "$out/debs"
out=$(cd "$out" && pwd)

die() { echo "microvm/build: $*" >&2; exit 1; }

# The kernel package: the one the metapackage names (the cache keeps
# whichever one was fetched first, so a newer point release does not force
# a download; delete build/microvm/debs to move on).
kpkg=${MICROVM_KERNEL_PKG:-}
if [ -z "$kpkg" ]; then
	cached=$(ls "$out/debs"/linux-image-*-cloud-amd64_*.deb 2>/dev/null | head -n 1 || true)
	if [ -n "$cached" ]; then
		kpkg=$(basename "$cached")
		kpkg=${kpkg%%_*}
	else
		kpkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9.-]*-cloud-amd64\)$/\1/p' | head -n 1)
		[ -n "$kpkg" ] || die "no linux-image-cloud-amd64 in the apt lists (apt-get update?)"
	fi
fi
[[ $kpkg =~ ^linux-image-[0-9][0-9.]*-[0-9]+-cloud-amd64$ ]] || die "not a cloud kernel package: '$kpkg'"

fetch() {		# fetch PKG: its .deb into debs/ unless one is there
	local pkg=$1
	ls "$out/debs/${pkg}"_*.deb >/dev/null 2>&1 && return 0
	echo "microvm/build: apt-get download $pkg"
	# apt-get download writes to the current directory; as root, apt's
	# _apt sandbox user cannot write there, which it says and works around.
	(cd "$out/debs" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		die "apt-get download $pkg failed"
	ls "$out/debs/${pkg}"_*.deb >/dev/null 2>&1 || die "apt-get download $pkg left no .deb"
}
fetch "$kpkg"
fetch busybox-static
kdeb=$(ls "$out/debs/${kpkg}"_*.deb | head -n 1)
bdeb=$(ls "$out/debs"/busybox-static_*.deb | head -n 1)

# Rebuild only when an input changed.
stamp="$kdeb $bdeb $(sha256sum "$here/init" "$here/mvnet.c" "$0" | cut -c1-16 | tr '\n' ' ')"
if [ -e "$out/initrd.cpio.gz" ] && [ -e "$out/vmlinuz" ] &&
	[ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "microvm/build: $out up to date ($(cat "$out/kernel-release"))"
	exit 0
fi

tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg -x "$kdeb" "$tmp/k"
dpkg -x "$bdeb" "$tmp/b"
krel=$(ls "$tmp/k/lib/modules")
[ "$(wc -w <<<"$krel")" = 1 ] || die "expected one kernel release in $kdeb, got: $krel"
cp "$tmp/k/boot/vmlinuz-$krel" "$tmp/vmlinuz"

# The initramfs: busybox, the six modules in load order, init.
r=$tmp/root
mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,etc,run,modules,usr/bin,usr/sbin}
cp "$tmp/b/bin/busybox" "$r/bin/busybox"
mods=(virtio_ring virtio virtio_mmio failover net_failover virtio_net)
for m in "${mods[@]}"; do
	f=$(find "$tmp/k/lib/modules/$krel" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n 1)
	[ -n "$f" ] || die "module $m not in $kdeb"
	case $f in
	*.xz) xz -dc "$f" >"$r/modules/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$r/modules/$m.ko" ;;
	*) cp "$f" "$r/modules/$m.ko" ;;
	esac
done
printf '%s\n' "${mods[@]}" >"$r/modules/order"
install -m 755 "$here/init" "$r/init"
# mvnet: a chosen source address and exact-size UDP, which busybox lacks
# (tests/microvm/mvnet.c); static, so the initramfs needs no libc.
${CC:-cc} -static -Os -Wall -o "$r/bin/mvnet" "$here/mvnet.c" || die "cannot build mvnet"
strip "$r/bin/mvnet" 2>/dev/null || true
echo "$krel" >"$r/etc/kernel-release"
# busybox creates its applet links at boot (busybox --install -s in init);
# the sh link has to exist for init's #! line.
ln -s busybox "$r/bin/sh"
# The archive is written by the packaged busybox itself, so no cpio package
# is needed on this machine.
(cd "$r" && find . | LC_ALL=C sort | "$tmp/b/bin/busybox" cpio -o -H newc 2>/dev/null) |
	gzip -9n >"$tmp/initrd.cpio.gz"

mv "$tmp/vmlinuz" "$out/vmlinuz"
mv "$tmp/initrd.cpio.gz" "$out/initrd.cpio.gz"
cp "$tmp/b/bin/busybox" "$out/busybox"	# run.sh packs test scripts with it
echo "$krel" >"$out/kernel-release"
echo "$stamp" >"$out/stamp"
echo "microvm/build: $out/vmlinuz + initrd.cpio.gz ($krel, $(du -k "$out/initrd.cpio.gz" | cut -f1) KiB)"
