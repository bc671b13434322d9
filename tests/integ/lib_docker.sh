# shellcheck shell=bash
#
# lib_docker.sh - a real dockerd inside the private world, for the Docker
# tests (cni_docker.sh: the attach pattern; docker_driver.sh: netd-docker).
# Source after world.sh, lib_netd.sh and lib_cni.sh:
#
#     docker_up || exit 1        # dockerd in the world's host netns; sets D,
#                                # DOCKER_HOST, DOCKERD_PID; image ndtest/busybox:1
#     dk run ...                 # docker, bounded in time
#     docker_down                # dockerd stopped by its PID; checks below
#
# dockerd runs in the world's host netns and a mount namespace of its own,
# with its own data root, exec root, pidfile and socket, no bridge and no
# iptables.  It writes /run/docker/plugins, /etc/docker/key.json and its
# containerd's shims /run/containerd/s whatever the flags say: in its mount
# namespace the test's own dirs are grafted over those
# (tests/integ/lib_mntns.sh), so a fresh machine needs none of them and no
# path appears on the machine.  Network plugins are found in
# $D/run-docker/plugins (dockerd's /run/docker/plugins).
#
# The exec root ($D/exec) is a mount shared both ways with dockerd's
# namespace (lib_mntns.sh --share): the netns files Docker bind-mounts there
# (a container's SandboxKey) are seen by netd and the test, as they are on a
# host where dockerd runs in the host's mount namespace.  docker_down
# unmounts it again.

# dk ARGS... - the docker client, against the world's dockerd, bounded in time.
dk() { timeout 60 docker "$@"; }

# docker_up - start dockerd and import the busybox image (tests/integ/lib_cni.sh's
# rootfs).  Prints why and fails if dockerd cannot run here (the caller
# counts that as a failure: make deps installs docker.io).
docker_up() {
	local i up=0
	if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
		skip_loud "docker.io is not installed (make deps)"
		return 1
	fi
	D=$WORLD_DIR/docker
	mkdir -p "$D/run-docker/plugins" "$D/run-containerd" "$D/etc-docker" "$D/stage" "$D/exec"
	echo '{}' >"$D/daemon.json"
	export DOCKER_HOST=unix://$D/docker.sock
	# A mount of its own, in a peer group of its own, before dockerd's
	# namespace copies it: then the two stay peers.
	mount --bind "$D/exec" "$D/exec" && mount --make-private "$D/exec" &&
		mount --make-shared "$D/exec" || { echo "docker_up: cannot share $D/exec" >&2; return 1; }
	DOCKER_EXEC_MOUNTED=1
	DOCKER_PATHS_BEFORE=$(host_paths)
	world_spawn host "$D/dockerd.log" unshare -m --propagation unchanged -- \
		"$PWD/tests/integ/lib_mntns.sh" --share "$D/exec" "$D/stage" \
		"$D/run-docker=/run/docker" "$D/run-containerd=/run/containerd" \
		"$D/etc-docker=/etc/docker" -- \
		dockerd --config-file "$D/daemon.json" --data-root "$D/data" --exec-root "$D/exec" \
		--pidfile "$D/docker.pid" -H "$DOCKER_HOST" --group root \
		--bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
		--userland-proxy=false --storage-driver=vfs
	DOCKERD_PID=$WORLD_LAST_PID
	for ((i = 0; i < 300; i++)); do
		if docker info >/dev/null 2>&1; then up=1; break; fi
		kill -0 "$DOCKERD_PID" 2>/dev/null || break
		sleep 0.2
	done
	if [ "$up" != 1 ]; then
		skip_loud "dockerd cannot start on this machine; its log:"
		tail -n 20 "$D/dockerd.log"
		return 1
	fi
	cni_rootfs "$D/rootfs" || { echo "docker_up: busybox rootfs (busybox-static)" >&2; return 1; }
	tar -C "$D/rootfs" -cf "$D/rootfs.tar" .
	dk import "$D/rootfs.tar" ndtest/busybox:1 >/dev/null ||
		{ echo "docker_up: docker import of the busybox rootfs failed" >&2; return 1; }
}

# docker_down - stop dockerd (SIGTERM by PID, then wait), unmount the shared
# exec root, and check that no path appeared on the machine.  Idempotent.
docker_down() {
	local i
	if [ -n "${DOCKERD_PID:-}" ]; then
		kill -TERM "$DOCKERD_PID" 2>/dev/null
		for ((i = 0; i < 150; i++)); do world__alive "$DOCKERD_PID" || break; sleep 0.1; done
		fail "dockerd stopped" world__alive "$DOCKERD_PID"
		DOCKERD_PID=""
		eq "no path appeared on the machine (/run/docker, /run/containerd, /etc/docker/key.json)" \
			"$DOCKER_PATHS_BEFORE" "$(host_paths)"
	fi
	docker_unmount
}

# docker_unmount - the exec root's own mount (and any netns file still
# mounted under it), lazily; safe to call twice (world_down's trap calls it).
docker_unmount() {
	[ "${DOCKER_EXEC_MOUNTED:-0}" = 1 ] || return 0
	umount -R -l "$D/exec" 2>/dev/null
	DOCKER_EXEC_MOUNTED=0
}

# cid_pid NAME - the PID of container NAME's first process.
cpid() { dk inspect -f '{{.State.Pid}}' "$1"; }

# cx NAME CMD... - docker exec, bounded in time.
cx() { local c=$1; shift; timeout 30 docker exec "$c" "$@"; }

# http_get C ADDR HOST [PORT] - body of GET / from inside container C; fails
# if nothing answers.  If nc itself cannot run there (docker exec's 125-127)
# nothing was tried: it says so and succeeds with no output, so that neither
# a "does not connect" check nor an "answers" check can pass on it.
http_get() {
	local out rc=0
	out=$(printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' "$3" |
		timeout 30 docker exec -i "$1" nc -w 3 "$2" "${4:-80}") || rc=$?
	if [ "$rc" -ge 125 ] && [ "$rc" -le 127 ]; then
		echo "http_get: nc could not run in container $1 (exit $rc): nothing was tried" >&2
		return 0
	fi
	[ "$rc" = 0 ] && [ -n "$out" ] || return 1
	tail -n 1 <<<"$out"
}
