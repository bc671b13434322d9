#!/usr/bin/env bash
# deploy/kubernetes/install-cni.sh as the DaemonSet runs it, on the real
# paths /opt/cni/bin and /etc/cni/net.d - each a tmpfs in a private mount
# namespace (unshare -m), so the machine's own CNI directories are never
# read or written - and with busybox as the only userland, as in the image.
#   - netd-cni lands static ("not a dynamic executable") and byte-identical;
#   - its entry is appended to the first conflist (the cluster's), whose own
#     plugins stay as they were; later conflists are not touched;
#   - every write is a rename of a temp file in the same directory: the
#     conflist and the binary get new inodes, no temp file stays behind;
#   - a second run changes nothing (same inode); --uninstall restores the
#     cluster's conflist exactly;
#   - no conflist yet, a single-plugin .conf, or an old netd-only conflist
#     first: a clear error and nothing written.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${CNI_INSTALL_INNER:-}" ]; then
	CNI_STATIC=${CNI_STATIC:-$PWD/build/static/netd-cni}
	[ -x "$CNI_STATIC" ] || make -s build/static/netd-cni >/dev/null || {
		echo "cannot build build/static/netd-cni"; echo "0 passed, 1 failed"; exit 1; }
	[ -x /bin/busybox ] || { echo "busybox-static is missing (make deps)"; echo "0 passed, 1 failed"; exit 1; }
	# /etc/cni may not exist on a fresh machine: then it is made here for the
	# mount point only, and removed again.
	made=""
	if [ ! -d /etc/cni ]; then mkdir /etc/cni && made=/etc/cni; fi
	CNI_INSTALL_INNER=1 CNI_STATIC=$CNI_STATIC unshare -m --propagation private -- "$0"
	rc=$?
	[ -z "$made" ] || rmdir "$made"
	exit $rc
fi

# ---- inside the private mount namespace ----------------------------------------
. tests/integ/lib_netd.sh
mount -t tmpfs -o size=64m netd-opt /opt || { echo "tmpfs on /opt failed"; echo "0 passed, 1 failed"; exit 1; }
mount -t tmpfs -o size=16m netd-cni /etc/cni || { echo "tmpfs on /etc/cni failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p /opt/cni/bin /etc/cni/net.d /opt/img/bin /opt/img/cni
BIN=/opt/cni/bin
CONF=/etc/cni/net.d
# The image's userland: busybox only.
cp /bin/busybox /opt/img/bin/busybox
for a in sh cat cmp cp ls mkdir mv rm sleep chmod echo basename; do ln -s busybox "/opt/img/bin/$a"; done
cp "$CNI_STATIC" /opt/img/netd-cni
cp deploy/kubernetes/install-cni.sh /opt/img/install-cni.sh
python3 -c '
import json, yaml
for d in yaml.safe_load_all(open("deploy/kubernetes/configmap.yaml")):
    if d and d["metadata"]["name"] == "netd-cni-config":
        print(d["data"]["netd-cni.json"])' >/opt/img/cni/netd-cni.json
ENTRY=$(jq -c . /opt/img/cni/netd-cni.json)
eq "the shipped entry is chained netd-cni" "netd-cni chained" "$(jq -r '"\(.type) \(.mode)"' <<<"$ENTRY")"

INSTALL_CNI=(env -i PATH=/opt/img/bin CNI_BIN_DIR=$BIN CNI_CONF_DIR=$CONF NETD_CNI_SRC=/opt/img/netd-cni
	NETD_CNI_ENTRY=/opt/img/cni/netd-cni.json CNI_MODE=chained
	/opt/img/bin/sh /opt/img/install-cni.sh)
install_cni() { "${INSTALL_CNI[@]}" "$@"; }
ino() { stat -c %i "$1"; }
tmp_left() { ls -A "$CONF" "$BIN" | grep -c '\.tmp$'; }

# ---- no cluster CNI yet ------------------------------------------------------------
out=$(install_cni 2>&1); rc=$?
eq "no conflist yet: install-cni fails (the init container is retried)" 1 "$rc"
has "... saying why" "no network config in $CONF yet" "$out"
ok "netd-cni is installed even so" test -x $BIN/netd-cni
has "the installed netd-cni is static" "not a dynamic executable" "$(LC_ALL=C ldd $BIN/netd-cni 2>&1)"
ok "... and the image's file byte for byte" cmp /opt/img/netd-cni $BIN/netd-cni

# ---- the cluster's conflist -----------------------------------------------------------
cat >$CONF/10-flannel.conflist <<'JSON'
{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    { "type": "flannel", "delegate": { "hairpinMode": true, "isDefaultGateway": true } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
chmod 0640 $CONF/10-flannel.conflist
echo '{"cniVersion":"0.4.0","name":"other","plugins":[{"type":"bridge"}]}' >$CONF/99-other.conflist
ORIG=$(jq -c . $CONF/10-flannel.conflist)
OTHER=$(cat $CONF/99-other.conflist)
i0=$(ino $CONF/10-flannel.conflist)
b0=$(ino $BIN/netd-cni)
out=$(install_cni 2>&1); rc=$?
eq "install-cni exits 0" 0 "$rc"
has "it says what it did" "netd-cni chained" "$out"
got=$(jq -c . $CONF/10-flannel.conflist)
eq "netd-cni's entry is appended last" "$ENTRY" "$(jq -c '.plugins[-1]' <<<"$got")"
eq "the cluster's own plugins and keys are unchanged" "$ORIG" "$(jq -c '.plugins |= .[:-1]' <<<"$got")"
eq "the key order is kept (name first, as the cluster wrote it)" name "$(jq -r 'keys_unsorted[0]' <<<"$got")"
ok "the conflist was replaced by a rename (new inode)" test "$(ino $CONF/10-flannel.conflist)" != "$i0"
eq "... with the cluster's file mode" 640 "$(stat -c %a $CONF/10-flannel.conflist)"
eq "the later conflist is untouched" "$OTHER" "$(cat $CONF/99-other.conflist)"
eq "the binary was not rewritten (unchanged)" "$b0" "$(ino $BIN/netd-cni)"
eq "no temp file is left" 0 "$(tmp_left)"

# ---- idempotent -------------------------------------------------------------------------
i1=$(ino $CONF/10-flannel.conflist)
out=$(install_cni 2>&1)
has "a second run finds it chained" "already chained" "$out"
eq "... and does not rewrite the conflist" "$i1" "$(ino $CONF/10-flannel.conflist)"

# ---- a new image: the binary and the entry change --------------------------------------
printf '\n' >>/opt/img/netd-cni
jq -c '.namespaces = {"agents": "python-dev", "ci": "deny-all"}' /opt/img/cni/netd-cni.json >/opt/img/cni/e &&
	mv /opt/img/cni/e /opt/img/cni/netd-cni.json
out=$(install_cni 2>&1)
ok "a changed netd-cni is swapped in by rename (new inode)" test "$(ino $BIN/netd-cni)" != "$b0"
ok "... with the new bytes" cmp /opt/img/netd-cni $BIN/netd-cni
eq "a changed entry replaces the old one in place (still one netd-cni)" 1 \
	"$(jq '[.plugins[] | select(.type == "netd-cni")] | length' $CONF/10-flannel.conflist)"
eq "... with the new namespaces" deny-all "$(jq -r '.plugins[-1].namespaces.ci' $CONF/10-flannel.conflist)"
eq "no temp file is left" 0 "$(tmp_left)"

# ---- the cluster's CNI rewrites its conflist: --watch puts netd-cni back ---------------
echo "$ORIG" >$CONF/.x && mv $CONF/.x $CONF/10-flannel.conflist
# Not through the function: $! must be the watcher itself, not a subshell
# that a kill would end while the watcher lives on.
"${INSTALL_CNI[@]}" --watch 1 >/opt/watch.log 2>&1 &
wpid=$!
for _ in $(seq 100); do
	jq -e '.plugins[-1].type == "netd-cni"' $CONF/10-flannel.conflist >/dev/null 2>&1 && break
	sleep 0.1
done
kill "$wpid"; wait "$wpid" 2>/dev/null
eq "--watch re-chains a rewritten conflist" netd-cni "$(jq -r '.plugins[-1].type' $CONF/10-flannel.conflist)"

# ---- uninstall ----------------------------------------------------------------------------
out=$(install_cni --uninstall 2>&1); rc=$?
eq "--uninstall exits 0" 0 "$rc"
eq "the cluster's conflist is as it was" "$ORIG" "$(jq -c . $CONF/10-flannel.conflist)"
fail "netd-cni is gone from the bin dir" test -e $BIN/netd-cni

# ---- what it refuses ----------------------------------------------------------------------
echo '{"cniVersion":"1.0.0","name":"netd","plugins":[{"type":"netd-cni","mode":"interface"}]}' \
	>$CONF/05-netd.conflist
before=$(cat $CONF/05-netd.conflist)
out=$(install_cni 2>&1); rc=$?
eq "an old netd-only conflist first: exit 1" 1 "$rc"
has "... saying netd-cni would be first" "netd-cni is the first plugin" "$out"
eq "... and it is left alone" "$before" "$(cat $CONF/05-netd.conflist)"
rm $CONF/05-netd.conflist
echo '{"cniVersion":"0.3.1","name":"x","type":"bridge"}' >$CONF/00-single.conf
out=$(install_cni 2>&1); rc=$?
eq "a single-plugin .conf first: exit 1" 1 "$rc"
has "... saying to convert it" "convert it to a .conflist" "$out"
eq "nothing was written to 10-flannel.conflist" "$ORIG" "$(jq -c . $CONF/10-flannel.conflist)"
eq "no temp file is left" 0 "$(tmp_left)"
out=$(env -i PATH=/opt/img/bin $BIN/netd-cni 2>&1 </dev/null || true)
has "netd-cni with neither arguments nor CNI_COMMAND is still a CNI plugin (code 4)" '"code":4' "$out"
t_summary
