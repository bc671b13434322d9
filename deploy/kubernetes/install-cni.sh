#!/bin/sh
# install-cni.sh - put netd-cni on this node (runs in the DaemonSet's
# install-cni init container and again, with --watch, in its cni-keeper
# container).  POSIX sh: the image's shell is busybox.
#
#   install-cni.sh               install once
#   install-cni.sh --watch SECS  install, then re-check every SECS seconds
#                                (the cluster's CNI may rewrite its conflist)
#   install-cni.sh --uninstall   take netd-cni out of the conflist, remove it
#
# Environment (defaults are the DaemonSet's mounts):
#   CNI_BIN_DIR      /host/opt/cni/bin      where the runtime finds plugins
#   CNI_CONF_DIR     /host/etc/cni/net.d    where the runtime finds configs
#   NETD_CNI_SRC     /usr/lib/netd/netd-cni the static plugin in the image
#   CNI_MODE         chained | interface
#   NETD_CNI_ENTRY   /etc/netd/cni/netd-cni.json  (chained) the plugin entry
#                    appended to the first conflist in CNI_CONF_DIR
#   NETD_CNI_CONFLIST /etc/netd/cni/05-netd.conflist  (interface) installed
#                    as its own file
# Every file is written to a temp file in its final directory and renamed
# into place, so the runtime never executes or reads a partial file.
set -eu
bin_dir=${CNI_BIN_DIR:-/host/opt/cni/bin}
conf_dir=${CNI_CONF_DIR:-/host/etc/cni/net.d}
src=${NETD_CNI_SRC:-/usr/lib/netd/netd-cni}
mode=${CNI_MODE:-chained}
entry=${NETD_CNI_ENTRY:-/etc/netd/cni/netd-cni.json}
conflist=${NETD_CNI_CONFLIST:-/etc/netd/cni/05-netd.conflist}

say() { echo "install-cni: $*"; }

# put SRC DIR NAME MODE - atomically replace DIR/NAME by SRC if they differ.
put() {
	if cmp -s "$1" "$2/$3"; then
		return 0
	fi
	tmp="$2/.$3.$$.tmp"
	cp "$1" "$tmp" && chmod "$4" "$tmp" && mv -f "$tmp" "$2/$3" || {
		rm -f "$tmp"
		return 1
	}
	say "installed $2/$3"
}

install_once() {
	mkdir -p "$bin_dir" "$conf_dir"
	put "$src" "$bin_dir" netd-cni 755
	case $mode in
	chained) "$bin_dir/netd-cni" chain "$conf_dir" "$entry" ;;
	interface) put "$conflist" "$conf_dir" "$(basename "$conflist")" 644 ;;
	*) say "CNI_MODE must be chained or interface, not '$mode'" >&2; return 2 ;;
	esac
}

case ${1:-} in
"")
	install_once
	;;
--watch)
	secs=${2:?--watch needs seconds}
	while :; do
		install_once || say "will retry in $secs s" >&2
		sleep "$secs"
	done
	;;
--uninstall)
	case $mode in
	chained) [ ! -x "$bin_dir/netd-cni" ] || "$bin_dir/netd-cni" unchain "$conf_dir" ;;
	interface) rm -f "$conf_dir/$(basename "$conflist")" ;;
	esac
	rm -f "$bin_dir/netd-cni"
	say "removed netd-cni"
	;;
*)
	echo "usage: install-cni.sh [--watch SECS | --uninstall]" >&2
	exit 2
	;;
esac
