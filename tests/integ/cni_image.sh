#!/usr/bin/env bash
# The DaemonSet's image, built the way deploy/Dockerfile says: the release
# build, deploy/image-rootfs.sh, `docker build` FROM scratch (nothing
# downloaded).  dockerd runs in a private world - the world's host netns, a
# private mount namespace, its own data-root, exec-root, pidfile and
# socket, no bridge, no iptables - and is stopped by PID.  Then the image:
#   - holds netd, the static netd-cni, install-cni.sh, busybox, policies;
#   - netd runs in it (its libraries came along): `netd policy check`;
#   - netd-cni runs in it and answers VERSION;
#   - install-cni.sh run in it, with the host's CNI dirs as volumes, leaves
#     a static netd-cni and the chained conflist on the "host".
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_cni.sh

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
	echo "docker.io is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
make -s build/netd build/static/netd-cni >/dev/null 2>&1 ||
	{ echo "release build failed"; echo "0 passed, 1 failed"; exit 1; }
world_up "ndi$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }

D=$WORLD_DIR/docker
IMG=$WORLD_DIR/image
TAG=netd-test:$$
mkdir -p "$D"
echo '{}' >"$D/daemon.json"
export DOCKER_HOST=unix://$D/docker.sock DOCKER_BUILDKIT=0
dk() { timeout 120 docker "$@"; }

out=$(deploy/image-rootfs.sh "$IMG" 2>&1)
eq "image-rootfs.sh lays out the rootfs" 0 "$?"
ok "the Dockerfile is FROM scratch" grep -qx "FROM scratch" "$IMG/Dockerfile"

# dockerd writes these whatever the flags say; removed afterwards if made here.
[ -e /run/docker ] || RUN_DOCKER_MADE=1
[ -e /run/containerd ] || RUN_CTD_MADE=1
[ -e /etc/docker/key.json ] || KEY_JSON_MADE=1
world_spawn host "$D/dockerd.log" unshare -m --propagation private \
	dockerd --config-file "$D/daemon.json" --data-root "$D/data" --exec-root "$D/exec" \
	--pidfile "$D/docker.pid" -H "$DOCKER_HOST" --group root \
	--bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
	--userland-proxy=false --storage-driver=vfs
DOCKERD_PID=$WORLD_LAST_PID
up=0
for ((i = 0; i < 300; i++)); do
	if docker info >/dev/null 2>&1; then up=1; break; fi
	kill -0 "$DOCKERD_PID" 2>/dev/null || break
	sleep 0.2
done
if [ "$up" != 1 ]; then
	t_fail "dockerd starts in the private world" "$(tail -n 20 "$D/dockerd.log")"
	t_summary
	exit 1
fi

out=$(dk build -q -f "$IMG/Dockerfile" -t "$TAG" "$IMG" 2>&1)
eq "docker build succeeds with no registry" 0 "$?"
eq "the image has no parent layers (scratch)" 1 \
	"$(dk image inspect -f '{{len .RootFS.Layers}}' "$TAG" 2>&1)"
files=$(dk create --name "img$$" "$TAG" >/dev/null && dk export "img$$" | tar -t; dk rm "img$$" >/dev/null)
for f in usr/sbin/netd usr/lib/netd/netd-cni usr/lib/netd/install-cni.sh bin/busybox \
	bin/sh etc/netd/policies/deny-all.yaml; do
	has "the image has /$f" "$f" "$files"
done

run() { dk run --rm --network none "$@"; }
out=$(run --entrypoint /bin/sh "$TAG" -c '/usr/sbin/netd policy check /etc/netd/policies/*.yaml' 2>&1)
eq "netd runs in the image (its libraries are there): policy check exits 0" 0 "$?"
out=$(run -e CNI_COMMAND=VERSION --entrypoint /usr/lib/netd/netd-cni "$TAG" </dev/null 2>&1)
has "netd-cni runs in the image and answers VERSION" '"supportedVersions"' "$out"

H=$WORLD_DIR/host
mkdir -p "$H/bin" "$H/net.d" "$H/cni"
echo '{"cniVersion":"0.3.1","name":"cbr0","plugins":[{"type":"flannel"}]}' >"$H/net.d/10-flannel.conflist"
python3 -c '
import yaml
for d in yaml.safe_load_all(open("deploy/kubernetes/configmap.yaml")):
    if d and d["metadata"]["name"] == "netd-cni-config":
        print(d["data"]["netd-cni.json"])' >"$H/cni/netd-cni.json"
out=$(run -v "$H/bin:/host/opt/cni/bin" -v "$H/net.d:/host/etc/cni/net.d" -v "$H/cni:/etc/netd/cni:ro" \
	--entrypoint /bin/sh "$TAG" /usr/lib/netd/install-cni.sh 2>&1)
eq "install-cni.sh runs in the image (the DaemonSet's init container)" 0 "$?"
has "... and leaves a static netd-cni on the host" "not a dynamic executable" \
	"$(LC_ALL=C ldd "$H/bin/netd-cni" 2>&1)"
eq "... and chains it after the cluster's plugin" "flannel netd-cni" \
	"$(jq -r '[.plugins[].type] | join(" ")' "$H/net.d/10-flannel.conflist")"

dk rmi -f "$TAG" >/dev/null 2>&1
kill -TERM "$DOCKERD_PID" 2>/dev/null
for ((i = 0; i < 150; i++)); do world__alive "$DOCKERD_PID" || break; sleep 0.1; done
fail "dockerd stopped" world__alive "$DOCKERD_PID"
[ -n "${RUN_DOCKER_MADE:-}" ] && rm -rf /run/docker
[ -n "${RUN_CTD_MADE:-}" ] && rm -rf /run/containerd
[ -n "${KEY_JSON_MADE:-}" ] && rm -f /etc/docker/key.json
t_summary
