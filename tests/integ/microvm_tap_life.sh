#!/usr/bin/env bash
# microvm_tap_life - a tap sandbox's life beside a veth one: the API's
# refusals, a named multi-queue tap, `sandbox list` with both kinds, `netd
# exec` refused, a restart (the tap, its owner and its rules kept), a tap
# deleted while netd was down (made again on start, owner and addresses
# back), an orphaned tap removed at start, a policy reload, then a real guest booted on the restarted,
# reloaded sandbox, and delete.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh
. tests/integ/lib_microvm.sh
mv_need

world_up "nml$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$WORLD_DIR/policies"
cp policies/*.yaml "$WORLD_DIR/policies/"
cat >"$WORLD_DIR/policies/mv-http.yaml" <<'YAML'
name: mv-http
egress:
  - domains: [pypi.org, files.pythonhosted.org]
    ports: [80]
YAML
NETD_POLICIES=$WORLD_DIR/policies
netd_up || { echo "0 passed, 1 failed"; exit 1; }

vmm_uid=64301
VM1=$(sb_name vm1) VM2=$(sb_name vm2) SB1=$(sb_name sb1)
api() { curl -s --unix-socket "$NETD_SOCKET" -o /dev/null -w '%{http_code}' "$@"; }
api_body() { curl -s --unix-socket "$NETD_SOCKET" "$@"; }

# ---- refusals -------------------------------------------------------------------
eq "API: a tap without an owner is refused (400)" 400 \
	"$(api -X POST -d "{\"name\":\"$VM1\",\"policy\":\"mv-http\",\"kind\":\"tap\"}" http://netd/v1/sandboxes)"
has "... saying why" "never ownerless" \
	"$(api_body -X POST -d "{\"name\":\"$VM1\",\"policy\":\"mv-http\",\"kind\":\"tap\",\"tap\":{}}" http://netd/v1/sandboxes)"
eq "API: a tap with a netns is refused (400)" 400 \
	"$(api -X POST -d "{\"name\":\"$VM1\",\"policy\":\"mv-http\",\"kind\":\"tap\",\"netns\":\"/proc/1/ns/net\",\"tap\":{\"owner\":1}}" http://netd/v1/sandboxes)"
eq "API: the egress interface's name is refused (400)" 400 \
	"$(api -X POST -d "{\"name\":\"$VM1\",\"policy\":\"mv-http\",\"kind\":\"tap\",\"tap\":{\"owner\":1,\"name\":\"eth0\"}}" http://netd/v1/sandboxes)"
fail "CLI: --tap-queues 0 is refused" netd sandbox create "$VM1" --policy mv-http --tap --tap-queues 0
fail "CLI: --tap-name without --tap is refused" netd sandbox create "$VM1" --policy mv-http --tap-name x
eq "nothing was created" "" "$(netd sandbox list --json | jq -r '.[].name')"

# ---- both kinds ------------------------------------------------------------------
ok "a veth sandbox" sb_create sb1 mv-http
ok "a tap sandbox" netd sandbox create "$VM1" --policy mv-http --tap --tap-owner "$vmm_uid"
ok "a named multi-queue tap sandbox" netd sandbox create "$VM2" --policy mv-http --tap \
	--tap-name mvq0 --tap-owner "$vmm_uid:$vmm_uid" --tap-queues 4
TAP1=$(netd sandbox show "$VM1" | jq -r .tap)
has "the multi-queue tap is multi-queue, owner and group set" "multi_queue" \
	"$(world_exec host ip -d link show mvq0)"
eq "API: a tap of an existing sandbox interface's name is refused (409)" 409 \
	"$(api -X POST -d "{\"name\":\"x1\",\"policy\":\"mv-http\",\"kind\":\"tap\",\"tap\":{\"owner\":1,\"name\":\"$(sb_field "$SB1" host_ifname)\"}}" http://netd/v1/sandboxes)"
list=$(netd sandbox list)
# (the KIND column is not the last since CONTAINER joined it: read the JSON)
kind_of() { netd sandbox list --json | jq -r --arg n "$1" '.[] | select(.name == $n) | .kind'; }
eq "list: the veth, kind interface" interface "$(kind_of "$SB1")"
eq "list: the tap, kind tap" tap "$(kind_of "$VM1")"
has "list: the named tap" "mvq0" "$(grep -F "$VM2" <<<"$list")"
out=$(netd exec "$VM1" -- true 2>&1)
has "netd exec on a tap says why not" "no namespace" "$out"
eq "the MACs of two taps differ" 2 "$(netd sandbox list --json | jq -r '.[] | select(.kind == "tap") | .mac' | sort -u | wc -l)"

# ---- restart ---------------------------------------------------------------------
mac1=$(netd sandbox show "$VM1" | jq -r .mac)
netd_down
ok "the tap outlives netd" world_exec host ip link show "$TAP1"
netd_up || { t_summary; exit 1; }
eq "after a restart: the same tap" "$TAP1" "$(netd sandbox show "$VM1" | jq -r .tap)"
eq "... the same MAC" "$mac1" "$(netd sandbox show "$VM1" | jq -r .mac)"
has "... still owned by the VMM's user" "user $vmm_uid" "$(world_exec host ip -d link show "$TAP1")"
has "... its MAC still enforced" "\"$TAP1\" . $mac1" "$(world_exec host nft list set inet netd tap_mac)"
has "... and in the arp table" "\"$TAP1\" . $mac1 . $mac1" "$(world_exec host nft list set arp netd tap_arp)"

# ---- a tap gone while netd was down ----------------------------------------------
netd_down
world_exec host ip link del "$TAP1"
# Leftovers from a crash between steps: a tap of netd's naming no sandbox
# owns goes; a veth pair of the same naming that is no tap stays.
world_exec host build/asan/integ/tap_driver create ndt0fff "$vmm_uid" 1 0 >/dev/null
world_exec host ip link add ndt0ffe type veth peer name mvlq0
netd_up || { t_summary; exit 1; }
fail "an orphaned netd tap is deleted at start" world_exec host ip link show ndt0fff
has "... and logged" "ndt0fff looks like a sandbox tap" "$(cat "$NETD_LOG")"
ok "an interface of that naming that is no tap is left alone" world_exec host ip link show ndt0ffe
world_exec host ip link del ndt0ffe
has "a tap deleted while netd was down is made again" "created it again" "$(cat "$NETD_LOG")"
link=$(world_exec host ip -d link show "$TAP1" 2>&1)
has "... persistent, with its owner" "persist on user $vmm_uid" "$link"
has "... up, with its gateway address" "inet $(netd sandbox show "$VM1" | jq -r .gateway_ipv4)/30" \
	"$(world_exec host ip addr show dev "$TAP1")"

# ---- reload ------------------------------------------------------------------------
cat >"$WORLD_DIR/policies/mv-http.yaml" <<'YAML'
name: mv-http
egress:
  - domains: [files.pythonhosted.org]
    ports: [80]
YAML
ok "policy reload" netd policy reload

# ---- a guest on the restarted, reloaded sandbox -------------------------------------
j=$(netd sandbox show "$VM1")
cat >"$WORLD_DIR/guest.sh" <<'GUEST'
. /lib/mvtest.sh
check "a name the reloaded policy allows resolves" retry 3 sh -c 'nslookup -type=a files.pythonhosted.org | grep -q "Address: 198.51.100.2"'
check "... and an HTTP fetch works" sh -c 'timeout 20 wget -q -O - http://files.pythonhosted.org/ | grep -q ok'
check "a name the reload removed gets NXDOMAIN" sh -c 'nslookup -type=a pypi.org 2>&1 | grep -q NXDOMAIN'
check_fail "... and its address does not connect" mvnet tcp 198.51.100.10 80
exit $MVTEST_FAILS
GUEST
rc=0
mv_boot "$WORLD_HOST_NS" "$WORLD_DIR/console" --tap "$TAP1" --mac "$(jq -r .mac <<<"$j")" \
	--ip "$(jq -r .kernel_ip_arg <<<"$j")" --as "$vmm_uid:$vmm_uid" \
	--script "$WORLD_DIR/guest.sh" --timeout 170 || rc=$?
mv_results "$WORLD_DIR/console" "guest"
eq "the guest's checks all passed" 0 "$rc"

# ---- delete ---------------------------------------------------------------------------
ok "delete the named tap's sandbox" netd sandbox delete "$VM2"
fail "... its tap is gone" world_exec host ip link show mvq0
ok "delete the tap sandbox" netd sandbox delete "$VM1"
fail "... its tap is gone" world_exec host ip link show "$TAP1"
hasnt "... and its MAC elements" "$TAP1" "$(world_exec host nft list set inet netd tap_mac)"
hasnt "... in the arp table too" "$TAP1" "$(world_exec host nft list set arp netd tap_arp)"
ok "the veth sandbox is untouched" netd sandbox show "$SB1"
netd_down
t_summary
