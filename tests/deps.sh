#!/usr/bin/env bash
# deps.sh - install the Debian 12 packages netd, its tests and its demo need
# (`make deps`, .ci/run).  Idempotent: when everything is installed it only
# says so.  Installing knot/unbound/dnsmasq must not leave a daemon running
# on this machine, so a policy-rc.d denies every service start for the
# duration of the install (the tests start their own servers in private
# namespaces); a policy-rc.d that was already there is put back afterwards,
# and the services the install enabled for the next boot are disabled.
set -euo pipefail

pkgs=(
	build-essential pkg-config clang libclang-rt-14-dev
	libnftnl-dev libmnl-dev libc-ares-dev libevent-dev libyaml-dev libjansson-dev
	libcmocka-dev libnetfilter-conntrack-dev libnetfilter-queue-dev
	# Go crypto/tls for the SNI test captures (tests/unit/sni/capture.sh)
	golang-go
	nftables iproute2 util-linux procps
	knot knot-dnsutils unbound dnsmasq-base dnsperf dnsutils
	curl openssl python3 iputils-ping conntrack
	# container runtime tests (tests/integ/cni_*.sh, docker_driver.sh)
	jq python3-yaml busybox-static runc containerd docker.io
	# another table's forward chain that drops (fw_foreign.sh: iptables-nft, ip6tables);
	# docker.io pulls it in too, but the test uses it itself
	iptables
	containernetworking-plugins podman uidmap
	# deploy/kubernetes manifests checked against the API schema (cni_deploy)
	python3-kubernetes
	# public-suffix checks of policy wildcards (libpsl + Debian's list)
	libpsl-dev publicsuffix
	# the API gateway (netd/gw/): OpenSSL 3 (CA, leaves, TLS), HTTP/1 framing
	# (http-parser), HTTP/2 (nghttp2), the worker's seccomp filter; its tests'
	# servers and the bench's peers
	libssl-dev libhttp-parser-dev libnghttp2-dev libseccomp-dev
	nginx-light squid-openssl mitmproxy
	# the gateway's clients in the sandbox: node's fetch (tests/integ/gw_api.sh)
	nodejs
	# gw_record.py decodes the HTTP/2 it records (gw_attack.sh)
	python3-h2
	# the gateway bench's load generator (h2load: HTTP/1.1 and HTTP/2 over TLS)
	nghttp2-client
	# HTTP/3 over QUIC through the SNI check (tests/integ/sni_quic.sh):
	# ngtcp2's example server and client (gtlsserver, gtlsclient)
	ngtcp2-server ngtcp2-client
	# a real DNS tunnel through an allowed wildcard (tests/integ/dns_tunnel.sh)
	iodine
	# a browser through the SNI check: its GREASE ECH (tests/integ/sni_ech_browser.sh,
	# tests/unit/sni/capture.sh)
	chromium
	# sd_notify and sd_journal_sendv, `systemd-analyze verify` of the unit, man
	# pages; systemd-journald and journalctl for flow_ipfix.sh's private journal
	libsystemd-dev systemd man-db
	# IPFIX collectors for tests/integ/flow_ipfix.sh (nfcapd, nfdump)
	nfdump
	# promtool (metrics format check), iperf3 (data-plane bench)
	prometheus iperf3
	# the DNS bench's instruction counts and profiles (tests/bench/callgrind.sh:
	# callgrind, perf stat; BENCH_PERF)
	valgrind linux-perf
	# the microVM tests (tests/microvm/): QEMU -M microvm; the guest's kernel
	# and busybox come from `apt-get download` at build time, not from here;
	# xz-utils/zstd unpack compressed kernel modules, if a kernel has them
	qemu-system-x86 xz-utils zstd
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages installed"
	exit 0
fi
echo "deps: installing ${missing[*]}"

sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive

rc_d=/usr/sbin/policy-rc.d
saved=""
restore() {
	if [ -n "$saved" ]; then
		"${sudo[@]}" mv -f "$saved" "$rc_d"
	else
		"${sudo[@]}" rm -f "$rc_d"
	fi
}
if [ -e "$rc_d" ]; then
	saved=$("${sudo[@]}" mktemp /usr/sbin/policy-rc.d.saved.XXXXXX)
	"${sudo[@]}" cp -p "$rc_d" "$saved"
fi
trap restore EXIT
# 101: "action forbidden by policy" (invoke-rc.d(8)); deb-systemd-invoke
# honours it as well.
printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$rc_d" >/dev/null
"${sudo[@]}" chmod 755 "$rc_d"

# enabled_units - the unit files enabled for the next boot, sorted.
enabled_units() {
	command -v systemctl >/dev/null || return 0
	{ systemctl list-unit-files --state=enabled --no-legend --no-pager 2>/dev/null || true; } |
		awk '{ print $1 }' | sort
}
before=$(enabled_units)
pkgs_before=$(dpkg-query -W -f '${Package} ' 2>/dev/null || true)
apt=("${sudo[@]}" apt-get -q -o Dpkg::Use-Pty=0)
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The daemons among them (nginx, squid, prometheus, nfcapd, knot, unbound,
# iodined, docker, containerd, podman's socket, ngtcp2d, and what they pull
# in, cron among them) are enabled for the next boot by their packages;
# the tests start their own in private namespaces, so every unit this
# install enabled is disabled again (one enabled before is left be).
# Where systemd itself came with this install (a fresh root), the units of
# the packages that were there before it (apt's, util-linux's) and its own
# (getty@, remote-fs.target) are the system's, not a server's: those stay.
unit_pkg() {
	local d
	for d in /lib/systemd/system /usr/lib/systemd/system; do
		[ -e "$d/$1" ] && { dpkg -S "$d/$1" 2>/dev/null | cut -d: -f1; return; }
	done
}
added=()
kept=()
while read -r u; do
	[ -n "$u" ] || continue
	pkg=$(unit_pkg "$u")
	case " $pkgs_before systemd systemd-sysv systemd-timesyncd udev " in
	*" ${pkg:-?} "*) kept+=("$u") ;;
	*) added+=("$u") ;;
	esac
done < <(comm -13 <(printf '%s\n' "$before") <(enabled_units))
if [ "${#added[@]}" -gt 0 ]; then
	"${sudo[@]}" systemctl disable --quiet "${added[@]}" 2>/dev/null || true
	echo "deps: the services this install enabled for the next boot are disabled again" \
		"(the tests start their own in private namespaces): ${added[*]}"
fi
[ "${#kept[@]}" -eq 0 ] || echo "deps: left enabled, the system's own (systemd came with this install): ${kept[*]}"
echo "deps: done"
