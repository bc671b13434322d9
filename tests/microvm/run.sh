#!/usr/bin/env bash
# run.sh - boot the test guest (tests/microvm/build.sh) on a tap device with
# QEMU's microvm machine, run a test script inside it, and end.
#
#   tests/microvm/run.sh --tap TAP --script FILE [--ip IP_ARG] [--mac MAC]
#                        [--append 'ARGS'] [--as UID:GID] [--timeout S]
#                        [--extra CPIO] [--mem MB]
#
#   --tap TAP      the tap device, in the caller's netns (QEMU opens it by name
#                  through /dev/net/tun: -netdev tap,ifname=TAP,script=no);
#                  "none": no NIC at all (a guest whose world is its own)
#   --extra CPIO   one more initramfs appended (tests/microvm/world.sh)
#   --mem MB       the guest's memory (default 256)
#   --script FILE  the guest's test script (busybox sh), packed as /test.sh in
#                  a second cpio appended to the initramfs
#   --ip IP_ARG    "ip=GUEST::GW:MASK::eth0:off" (netd's kernel_ip_arg): the
#                  guest's init configures eth0 from it (the kernel has no
#                  IP_PNP); --append adds netd.ip6=, netd.gw6=, netd.mtu=
#   --mac MAC      the NIC's address (default: QEMU's 52:54:00:12:34:56)
#   --as UID:GID   run QEMU as that user, the way a real unprivileged VMM
#                  runs: in a private mount namespace whose /dev/net/tun is a
#                  0666 node (the machine's is 0600 root), so the tap's owner,
#                  not the device node, decides who may attach
#   --timeout S    QEMU is killed after S seconds (default 180; TCG is slow
#                  and the machine is shared); under KVM it can hang instead
#                  of exiting on an emulation error, so it always runs under
#                  timeout
# The serial console goes to stdout.  Exit status: the test script's
# (from the guest's "MVTEST-END rc=N" line); 124 if QEMU timed out; 98 if it
# ended without that line (e.g. QEMU could not open the tap).
#   MICROVM_DIR    the built guest (default build/microvm)
#   MICROVM_ACCEL  kvm, tcg or auto (default: kvm only where the CPU has
#                  vmx/svm and /dev/kvm opens; this machine's kvm_pvm
#                  cannot run the guest kernel, see microvm-notes.md)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gdir=${MICROVM_DIR:-$here/../../build/microvm}
tap="" script="" ipa="" mac="" append="" as="" tmo=180 extra="" mem=256

die() { echo "microvm/run: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value"
	case $1 in
	--tap) tap=$2 ;;
	--script) script=$2 ;;
	--ip) ipa=$2 ;;
	--mac) mac=$2 ;;
	--append) append=$2 ;;
	--as) as=$2 ;;
	--timeout) tmo=$2 ;;
	--extra) extra=$2 ;;
	--mem) mem=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ -n "$tap" ] || die "--tap TAP is required"
[ -n "$script" ] && [ -r "$script" ] || die "--script FILE is required (readable)"
for f in vmlinuz initrd.cpio.gz busybox; do
	[ -r "$gdir/$f" ] || die "$gdir/$f missing: run make microvm-guest"
done
[[ $tmo =~ ^[0-9]+$ ]] || die "bad --timeout '$tmo'"
[[ $mem =~ ^[0-9]+$ ]] || die "bad --mem '$mem'"
[ -z "$extra" ] || [ -r "$extra" ] || die "--extra $extra: not readable"
case $ipa in '' | ip=*) ;; *) die "--ip takes the whole ip=... argument" ;; esac

accel=${MICROVM_ACCEL:-auto}
if [ "$accel" = auto ]; then
	accel=tcg
	if grep -qwE 'vmx|svm' /proc/cpuinfo && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		accel=kvm
	fi
fi

# A per-run initramfs: the built one plus a cpio holding /test.sh (the
# kernel unpacks concatenated archives in order).  World-readable, so a
# VMM running --as another user can read it.
work=$(mktemp -d /tmp/mvrun.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/add"
install -m 755 "$script" "$work/add/test.sh"
(cd "$work/add" && echo test.sh | "$gdir/busybox" cpio -o -H newc 2>/dev/null) | gzip -n >"$work/add.cpio.gz"
cat "$gdir/initrd.cpio.gz" ${extra:+"$extra"} "$work/add.cpio.gz" >"$work/initrd"
chmod 644 "$work/initrd"
# The kernel too: the checkout may sit where the VMM's user cannot read
# (a clone in /root, mode 0700).
install -m 644 "$gdir/vmlinuz" "$work/vmlinuz"

# microvm's legacy PIT/PIC/RTC are "auto", which leaves this QEMU (7.2)
# under TCG without them: the kernel then cannot calibrate the TSC and
# hangs before init ("tsc: Unable to calibrate against PIT").  They cost
# nothing measurable.
machine=microvm,pit=on,pic=on,rtc=on
# Under TCG the guest's TSC is the host's, but the kernel's PIT calibration
# of it fails whenever this shared machine is busy (the vCPU thread is
# descheduled mid-measurement), and without a TSC frequency it hangs.  So
# give it the host's (tsc_early_khz), and keep its clocksource watchdog from
# second-guessing the TSC later on (tsc=reliable).
clock=""
if [ "$accel" = tcg ]; then
	khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ -n "$khz" ] && [ "$khz" -gt 0 ] && clock="tsc_early_khz=$khz tsc=reliable"
fi
nic=virtio-net-device,netdev=n0
[ -n "$mac" ] && nic+=",mac=$mac"
cmdline="console=ttyS0 panic=-1 quiet loglevel=1 $clock $ipa $append"
[ "$tap" = none ] && cmdline+=" netd.nonet=1"	# init leaves the network alone
qemu=(qemu-system-x86_64 -M "$machine" -accel "$accel" -m "$mem" -smp 1
	-no-user-config -nodefaults -display none -serial stdio -monitor none
	-kernel "$work/vmlinuz" -initrd "$work/initrd" -append "$cmdline" -no-reboot)
[ "$tap" = none ] ||
	qemu+=(-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" -device "$nic")

log=$work/console
rc=0
if [ -n "$as" ]; then
	[[ $as =~ ^[0-9]+:[0-9]+$ ]] || die "--as takes UID:GID (numbers)"
	[ "$(id -u)" = 0 ] || die "--as needs root"
	# In a private mount namespace: a tmpfs with a 0666 tun node, bound over
	# /dev/net/tun; only this QEMU sees it.  setpriv drops every privilege
	# (no capabilities survive a non-zero UID without ambient caps).
	timeout -k 5 "$tmo" unshare --mount --propagation private -- sh -c '
		set -e
		mount -t tmpfs -o mode=755,size=64k mvtun "$1"
		mknod -m 0666 "$1/tun" c 10 200
		mount --bind "$1/tun" /dev/net/tun
		uid=${2%:*} gid=${2#*:}
		shift 2
		exec setpriv --reuid "$uid" --regid "$gid" --clear-groups --inh-caps=-all -- "$@"
	' mvrun "$work/add" "$as" "${qemu[@]}" </dev/null >"$log" 2>&1 || rc=$?
else
	timeout -k 5 "$tmo" "${qemu[@]}" </dev/null >"$log" 2>&1 || rc=$?
fi
# The console has CRs from the guest's tty; strip them for grep.
tr -d '\r' <"$log"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "microvm/run: QEMU timed out after ${tmo}s ($accel)" >&2
	exit 124
fi
end=$(tr -d '\r' <"$log" | sed -n 's/^MVTEST-END rc=\([0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$end" ]; then
	echo "microvm/run: the guest never reported (QEMU exit $rc)" >&2
	exit 98
fi
exit "$end"
