#!/usr/bin/env bash
# deploy/kubernetes/ checked without a cluster: every manifest parses, the
# objects reference each other consistently (volumes, ConfigMaps, keys), the
# policies in the ConfigMap pass `netd policy check`, and the conflist is
# accepted by netd-cni's own config parser (STATUS answers 50 "netd not
# available" only after the config was accepted).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
T=$(mktemp -d /tmp/ndy.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "python3-yaml is missing (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi

out=$(python3 - deploy/kubernetes "$T" <<'PY' 2>&1
import glob, json, os, sys, yaml
d, t = sys.argv[1], sys.argv[2]
docs = []
for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
    for doc in yaml.safe_load_all(open(f)):
        if doc is None:
            continue
        for k in ("apiVersion", "kind", "metadata"):
            assert k in doc, f"{f}: {k} missing"
        assert doc["metadata"].get("name"), f"{f}: metadata.name missing"
        docs.append(doc)
by = {(x["kind"], x["metadata"]["name"]): x for x in docs}
cms = {n: x for (k, n), x in by.items() if k == "ConfigMap"}
ds = by[("DaemonSet", "netd")]
spec = ds["spec"]["template"]["spec"]
assert ds["apiVersion"] == "apps/v1"
sel = ds["spec"]["selector"]["matchLabels"]
labels = ds["spec"]["template"]["metadata"]["labels"]
assert all(labels.get(k) == v for k, v in sel.items()), "selector does not match the template"
assert spec["hostNetwork"] is True, "netd must run in the node's netns"
vols = {v["name"]: v for v in spec["volumes"]}
for c in spec.get("initContainers", []) + spec["containers"]:
    for m in c.get("volumeMounts", []):
        assert m["name"] in vols, f"{c['name']}: mount of undefined volume {m['name']}"
    assert c.get("image"), c["name"]
for v in vols.values():
    if "configMap" in v:
        assert v["configMap"]["name"] in cms, f"volume {v['name']}: no ConfigMap {v['configMap']['name']}"
netd = [c for c in spec["containers"] if c["name"] == "netd"][0]
assert netd["securityContext"]["privileged"] is True
mounts = {m["mountPath"]: m for m in netd["volumeMounts"]}
cfg = yaml.safe_load(cms["netd-config"]["data"]["netd.yaml"])
assert cfg["policy_dir"] in mounts, "policy_dir is not mounted"
assert os.path.dirname(cfg["socket"]) in mounts, "socket dir is not mounted"
assert cfg["state_dir"] in mounts, "state_dir is not mounted"
vol_of = lambda p: vols[mounts[p]["name"]]
assert vol_of(cfg["policy_dir"])["configMap"]["name"] == "netd-policies"
assert "hostPath" in vol_of(os.path.dirname(cfg["socket"])), "the socket must be on the host for netd-cni"
assert "hostPath" in vol_of(cfg["state_dir"]), "tombstones must be on the host"
conf = json.loads(cms["netd-cni-config"]["data"]["05-netd.conflist"])
p = conf["plugins"][0]
assert p["type"] == "netd-cni"
assert p["socket"] == cfg["socket"], "conflist socket != netd socket"
assert p["tombstoneDir"] == cfg["state_dir"] + "/tombstones", "tombstoneDir must be state_dir/tombstones"
assert p["capabilities"]["io.kubernetes.cri.pod-annotations"] is True
pol = os.path.join(t, "policies"); os.makedirs(pol)
for k, v in cms["netd-policies"]["data"].items():
    open(os.path.join(pol, k), "w").write(v)
assert p.get("defaultPolicy", "deny-all") + ".yaml" in cms["netd-policies"]["data"], "defaultPolicy not shipped"
for dd in docs:
    if dd["kind"] == "Pod":
        assert dd["metadata"]["annotations"]["netd.io/policy"] + ".yaml" in cms["netd-policies"]["data"]
plug = dict(p, cniVersion=conf["cniVersion"], name=conf["name"], socket=t + "/none.sock")
open(os.path.join(t, "plugin.json"), "w").write(json.dumps(plug))
print("structure ok:", len(docs), "objects")
PY
)
rc=$?
echo "$out"
eq "manifests parse and reference each other consistently" 0 "$rc"
ok "ConfigMap policies pass netd policy check" "$NETD_BIN" policy check "$T"/policies/*.yaml
code=$(CNI_COMMAND=STATUS "$CNI_BIN" <"$T/plugin.json" 2>/dev/null | jq -r .code)
eq "netd-cni accepts the conflist's plugin config (STATUS reaches the socket)" 50 "$code"
t_summary
