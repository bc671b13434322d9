# shellcheck shell=bash
#
# lib_cni.sh - shared pieces of the container-runtime tests (cni_*.sh):
# a busybox root filesystem built from Debian's busybox-static (no
# registry), a policy directory with a plain-HTTP policy busybox's wget can
# exercise, and helpers to run a runtime daemon inside the world's host
# netns with private state.  Source after world.sh and lib_netd.sh.

# cni_policies - NETD_POLICIES = the shipped policies + "web80" (pypi.org
# over plain HTTP).  Call before netd_up.
cni_policies() {
	NETD_POLICIES=$WORLD_DIR/policies
	mkdir -p "$NETD_POLICIES"
	cp policies/*.yaml "$NETD_POLICIES/"
	cat >"$NETD_POLICIES/web80.yaml" <<-'YAML'
	name: web80
	description: "plain HTTP to pypi.org only (tests)"
	egress:
	  - domains: [pypi.org]
	    ports: [80]
	    protocol: tcp
	YAML
}

# cni_rootfs DIR - a busybox root filesystem in DIR (/bin/busybox + applet
# links, /etc files a runtime bind-mounts over).  Prints nothing; fails if
# busybox-static is missing.
cni_rootfs() {
	local d=$1 a
	[ -x /bin/busybox ] && file_static /bin/busybox || return 1
	mkdir -p "$d"/{bin,etc,proc,sys,dev,tmp,root}
	cp /bin/busybox "$d/bin/busybox"
	for a in sh ash sleep cat echo nc nslookup ip ls ps true false hostname grep tail; do
		ln -sf busybox "$d/bin/$a"
	done
	: >"$d/etc/resolv.conf"
	: >"$d/etc/hosts"
	echo "root:x:0:0:root:/root:/bin/sh" >"$d/etc/passwd"
	echo "root:x:0:" >"$d/etc/group"
}

# file_static BIN - BIN is statically linked (busybox-static's busybox).
file_static() {
	local out
	out=$(LC_ALL=C ldd "$1" 2>&1)
	[[ $out == *"not a dynamic executable"* ]]
}

# skip_loud WHY - the runtime cannot run here: say so loudly.  The caller
# counts it as a failure: `make deps` installs every runtime the suite
# uses, so a runtime missing or unable to run is a defect, not a skip.
skip_loud() {
	echo "##################################################################"
	echo "## NOT RUN (a failure): $*"
	echo "##################################################################"
}

# Paths a container runtime writes to whatever its flags say (cni-notes).
# A test grafts its own directories over them (cni_mntns) and checks that
# none appeared on the machine (host_paths).
CNI_HOST_PATHS=(/etc/cni /etc/cni/net.d /opt/cni /opt/cni/bin /var/lib/cni /var/lib/containers
	/run/containerd /run/containers /run/docker /etc/containers /etc/docker/key.json)

# host_paths - which of CNI_HOST_PATHS exist, one a line, seen from the
# test's own mount namespace (grafts live only in the runtimes' own).
host_paths() {
	local p
	for p in "${CNI_HOST_PATHS[@]}"; do
		[ -e "$p" ] && echo "$p"
	done
	return 0
}

# cni_mntns STAGE SRC=TARGET... -- CMD... - CMD in a new private mount
# namespace where each TARGET shows SRC (tests/integ/lib_mntns.sh).
cni_mntns() {
	unshare -m --propagation private -- "$PWD/tests/integ/lib_mntns.sh" "$@"
}
