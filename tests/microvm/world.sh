#!/usr/bin/env bash
# world.sh - a second initramfs for the microVM test guest that holds a
# whole netd test world: the guest kernel's netfilter modules (with
# modules.dep and modules.alias, so the kernel's module autoloading works
# as on a host), and netd with the tools its tests use, each with the
# shared libraries it needs, copied from this machine.  The guest then
# runs netd and a private world of network namespaces on Debian's own
# kernel, which has what this machine's kernel may lack (nftables
# flowtables: CONFIG_NF_FLOW_TABLE_INET).  tests/microvm/run.sh --extra
# appends it; the tools are under /opt/w (bin, and the libraries at their
# usual paths, which the dynamic loader searches).
#
#   tests/microvm/world.sh OUTDIR NETD [PROGRAM...]
#
# OUTDIR is build/microvm (tests/microvm/build.sh made the kernel there);
# NETD the netd binary to put in (make's: the ASan+UBSan build, as every
# test runs it); PROGRAMs more of the project's own (the fw driver).  Leaves
# OUTDIR/world.cpio.gz; rebuilt only when an input changed.
set -euo pipefail
out=${1:?OUTDIR}
netd_bin=${2:?NETD}
shift 2
die() { echo "microvm/world: $*" >&2; exit 1; }
[ -d "$out" ] && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
[ -r "$out/kernel-release" ] && [ -x "$out/busybox" ] || die "$out has no guest: run make microvm-guest"
[ -x "$netd_bin" ] || die "$netd_bin: no such program (make)"
krel=$(cat "$out/kernel-release")
kdeb=$(ls "$out/debs"/linux-image-"$krel"_*.deb 2>/dev/null | head -n 1)
[ -n "$kdeb" ] || die "no kernel package for $krel in $out/debs"

tools=(bash ip nft conntrack iperf3 dnsmasq)
paths=()
for t in "${tools[@]}"; do
	p=$(command -v "$t") || die "$t is not installed (make deps)"
	paths+=("$(readlink -f "$p")")
done
paths+=("$(readlink -f "$netd_bin")")
for p in "$@"; do
	[ -x "$p" ] || die "$p: no such program"
	paths+=("$(readlink -f "$p")")
done

stamp="$kdeb $(sha256sum "$0" "$here/guest-netd.sh" "${paths[@]}" | cut -c1-16 | tr '\n' ' ')"
if [ -e "$out/world.cpio.gz" ] && [ "$(cat "$out/world.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "microvm/world: $out/world.cpio.gz up to date"
	exit 0
fi

tmp=$(mktemp -d "$out/world.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
r=$tmp/root
mkdir -p "$r/opt/w/bin" "$r/lib/modules" "$r/lib64" "$r/run/netns" "$r/var" "$r/etc"
ln -s ../run "$r/var/run"

# The modules: netfilter and the rest of net/, what they need from lib/
# and crypto/ (libcrc32c, ...), veth, tun and dummy; then the kernel's
# request_module() finds them through busybox modprobe.
dpkg -x "$kdeb" "$tmp/k"
km=$tmp/k/lib/modules/$krel
mkdir -p "$r/lib/modules/$krel/kernel/drivers/net"
cp -a "$km/kernel/net" "$km/kernel/lib" "$km/kernel/crypto" "$r/lib/modules/$krel/kernel/"
for m in veth tun dummy; do
	f=$(find "$km/kernel/drivers/net" -maxdepth 1 -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || die "no $m module in $kdeb"
	cp "$f" "$r/lib/modules/$krel/kernel/drivers/net/"
done
cp "$km"/modules.builtin* "$km/modules.order" "$r/lib/modules/$krel/"
"$out/busybox" depmod -b "$r" "$krel" || die "depmod failed"

# The programs and their libraries (ldd: each resolved path once).
for p in "${paths[@]}"; do
	cp "$p" "$r/opt/w/bin/$(basename "$p")"
done
ldd "${paths[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' |
	sort -u | while read -r lib; do
	real=$(readlink -f "$lib")
	case $lib in
	*/ld-linux*) cp "$real" "$r/lib64/$(basename "$lib")" ;;
	*) mkdir -p "$r/usr/lib/x86_64-linux-gnu"
	   cp "$real" "$r/usr/lib/x86_64-linux-gnu/$(basename "$lib")" ;;
	esac
done
[ -e "$r/lib64/ld-linux-x86-64.so.2" ] || die "no dynamic loader found by ldd"
# What the guest scripts share (netd's config and start).
mkdir -p "$r/opt/w/lib"
cp "$here/guest-netd.sh" "$r/opt/w/lib/netd.sh"
# Names netd and the tools look up.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
printf 'tcp\t6\tTCP\nudp\t17\tUDP\nicmp\t1\tICMP\nipv6-icmp\t58\tIPv6-ICMP\n' >"$r/etc/protocols"

(cd "$r" && find . | LC_ALL=C sort | "$out/busybox" cpio -o -H newc 2>/dev/null) | gzip -1n >"$tmp/world.cpio.gz"
mv "$tmp/world.cpio.gz" "$out/world.cpio.gz"
echo "$stamp" >"$out/world.stamp"
echo "microvm/world: $out/world.cpio.gz ($(du -k "$out/world.cpio.gz" | cut -f1) KiB)"
