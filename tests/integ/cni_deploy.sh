#!/usr/bin/env bash
# deploy/kubernetes/ checked without a cluster:
#   - every object against the Kubernetes API schema of Debian's
#     python3-kubernetes models: each field must exist in its model (no
#     typo is silently dropped), scalars must have the model's type, and the
#     model's deserializer (client-side validation on) must accept the dict,
#     so required fields are there;
#   - the objects reference each other (volumes, ConfigMaps, mounts, keys);
#   - what an operator relies on: chained + opt-in, no conflist of our own
#     taking over the node, a per-node pool, policy_watch, the node's
#     address from the downward API, the static plugin installed by
#     install-cni.sh;
#   - the ConfigMap's policies pass `netd policy check`, and netd-cni
#     accepts its entry (STATUS answers 50 only after
#     the config was parsed).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/integ/lib_netd.sh

CNI_BIN=${CNI_BIN:-$PWD/build/asan/netd-cni}
PY=/usr/bin/python3	# Debian's, where python3-kubernetes and python3-yaml live
T=$(mktemp -d /tmp/ndy.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! $PY -c 'import yaml, kubernetes' 2>/dev/null; then
	echo "python3-yaml / python3-kubernetes are missing (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- the schema check itself must catch what it is for -----------------------------
cat >"$T/bad.yaml" <<'YAML'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bad}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      hostNetwrok: true
      containers:
        - name: x
          image: y
          ports: [{containerPort: "http"}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - image: y
YAML

cat >"$T/schema.py" <<'PY'
"""Validate Kubernetes objects against python3-kubernetes' models."""
import re, sys, yaml
import kubernetes.client as k

cfg = k.Configuration()
cfg.client_side_validation = True
api = k.ApiClient(cfg)
KINDS = {("v1", "ConfigMap"): "V1ConfigMap", ("v1", "Pod"): "V1Pod",
         ("v1", "Namespace"): "V1Namespace", ("apps/v1", "DaemonSet"): "V1DaemonSet"}
PRIM = {"str": str, "int": int, "bool": bool, "float": (int, float)}
errors = []

def check(v, t, path):
    if v is None:
        return
    m = re.match(r"list\[(.*)\]$", t)
    if m:
        if not isinstance(v, list):
            errors.append(f"{path}: expected a list, got {type(v).__name__}")
            return
        for i, x in enumerate(v):
            check(x, m.group(1), f"{path}[{i}]")
        return
    m = re.match(r"dict\(str, (.*)\)$", t)
    if m:
        if not isinstance(v, dict):
            errors.append(f"{path}: expected a map, got {type(v).__name__}")
            return
        for kk, x in v.items():
            check(x, m.group(1), f"{path}.{kk}")
        return
    if t in PRIM:
        # bool is an int in Python: a YAML `true` is no port number.
        if not isinstance(v, PRIM[t]) or (t != "bool" and isinstance(v, bool)):
            errors.append(f"{path}: expected {t}, got {type(v).__name__} {v!r}")
        return
    if t == "object":
        return	# IntOrString, Quantity: free-form in the models
    cls = getattr(k, t)
    if not isinstance(v, dict):
        errors.append(f"{path}: expected {t} (a map), got {type(v).__name__}")
        return
    json_to_attr = {j: a for a, j in cls.attribute_map.items()}
    for kk, x in v.items():
        if kk not in json_to_attr:
            errors.append(f"{path}: unknown field {kk!r} in {t}")
            continue
        check(x, cls.openapi_types[json_to_attr[kk]], f"{path}.{kk}")

n = 0
for f in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(f)):
        if doc is None:
            continue
        n += 1
        where = f"{f}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        model = KINDS.get((doc.get("apiVersion"), doc.get("kind")))
        if not model:
            errors.append(f"{where}: no model for {doc.get('apiVersion')} {doc.get('kind')}")
            continue
        before = len(errors)
        check(doc, model, where)
        if len(errors) == before:
            try:	# required fields: the models' setters refuse None
                api._ApiClient__deserialize(doc, model)
            except (ValueError, TypeError) as e:
                errors.append(f"{where}: {e}")
for e in errors:
    print(e)
print(f"{n} objects, {len(errors)} errors")
sys.exit(1 if errors else 0)
PY
out=$($PY "$T/schema.py" "$T/bad.yaml" 2>&1)
has "control: the schema check finds a misspelt field" "unknown field 'hostNetwrok'" "$out"
has "control: ... a wrongly typed one" "containerPort: expected int, got str" "$out"
has "control: ... a missing required one" "Invalid value for \`name\`, must not be \`None\`" "$out"

out=$($PY "$T/schema.py" deploy/kubernetes/*.yaml 2>&1)
rc=$?
echo "$out" | tail -5
eq "every manifest matches the Kubernetes API schema" 0 "$rc"

# ---- how the objects fit together ----------------------------------------------------
out=$($PY - deploy/kubernetes "$T" <<'PY' 2>&1
import glob, json, os, sys, yaml
d, t = sys.argv[1], sys.argv[2]
docs = [x for f in sorted(glob.glob(os.path.join(d, "*.yaml"))) for x in yaml.safe_load_all(open(f)) if x]
by = {(x["kind"], x["metadata"]["name"]): x for x in docs}
cms = {n: x for (k, n), x in by.items() if k == "ConfigMap"}
ds = by[("DaemonSet", "netd")]
spec = ds["spec"]["template"]["spec"]
sel = ds["spec"]["selector"]["matchLabels"]
labels = ds["spec"]["template"]["metadata"]["labels"]
assert all(labels.get(k) == v for k, v in sel.items()), "selector does not match the template"
assert spec["hostNetwork"] is True, "netd must run in the node's netns"
assert spec.get("automountServiceAccountToken") is False, "netd needs no API token"
vols = {v["name"]: v for v in spec["volumes"]}
conts = {c["name"]: c for c in spec.get("initContainers", []) + spec["containers"]}
for c in conts.values():
    for m in c.get("volumeMounts", []):
        assert m["name"] in vols, f"{c['name']}: mount of undefined volume {m['name']}"
    assert c.get("image"), c["name"]
for v in vols.values():
    if "configMap" in v:
        assert v["configMap"]["name"] in cms, f"volume {v['name']}: no ConfigMap {v['configMap']['name']}"
netd = conts["netd"]
assert netd["securityContext"]["privileged"] is True
env = {e["name"]: e for e in netd.get("env", [])}
assert env["NETD_NODE_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.hostIP", \
    "the per-node pool needs the node's address"
mounts = {m["mountPath"]: m for m in netd["volumeMounts"]}
cfg = yaml.safe_load(cms["netd-config"]["data"]["netd.yaml"])
open(os.path.join(t, "netd.yaml"), "w").write(cms["netd-config"]["data"]["netd.yaml"])
assert cfg["policy_dir"] in mounts, "policy_dir is not mounted"
assert cfg.get("policy_watch") is True, "ConfigMap changes must reload netd"
assert "subPath" not in mounts[cfg["policy_dir"]], "a subPath mount never sees ConfigMap updates"
assert cfg["pool"].get("node_block4") and cfg["pool"].get("node_block6"), "one pool for every node"
assert os.path.dirname(cfg["socket"]) in mounts, "socket dir is not mounted"
assert cfg["state_dir"] in mounts, "state_dir is not mounted"
vol_of = lambda p: vols[mounts[p]["name"]]
assert vol_of(cfg["policy_dir"])["configMap"]["name"] == "netd-policies"
assert "hostPath" in vol_of(os.path.dirname(cfg["socket"])), "the socket must be on the host for netd-cni"
assert "hostPath" in vol_of(cfg["state_dir"]), "tombstones must be on the host"
cni = cms["netd-cni-config"]["data"]
assert not [k for k in cni if k.endswith((".conf", ".conflist"))], \
    "no conflist of our own: netd-cni chains after the cluster's"
p = json.loads(cni["netd-cni.json"])
assert p["type"] == "netd-cni" and p["mode"] == "chained" and p["optIn"] is True
assert "defaultPolicy" not in p and "policy" not in p, "a default would opt every pod in"
assert p["socket"] == cfg["socket"], "entry socket != netd socket"
assert p["tombstoneDir"] == cfg["state_dir"] + "/tombstones", "tombstoneDir must be state_dir/tombstones"
assert p["capabilities"]["io.kubernetes.cri.pod-annotations"] is True
inst = conts["install-cni"]
assert inst["command"][-1] == "/usr/lib/netd/install-cni.sh", "install-cni runs the install script"
assert conts["cni-keeper"]["command"][1:3] == ["/usr/lib/netd/install-cni.sh", "--watch"]
pol = os.path.join(t, "policies"); os.makedirs(pol)
for k, v in cms["netd-policies"]["data"].items():
    open(os.path.join(pol, k), "w").write(v)
names = {k[:-5] for k in cms["netd-policies"]["data"]}
for ns, pname in p.get("namespaces", {}).items():
    assert pname in names, f"namespaces: {ns} -> {pname}: no such policy shipped"
for dd in docs:
    if dd["kind"] == "Pod":
        a = (dd["metadata"].get("annotations") or {}).get("netd.io/policy")
        ns = dd["metadata"].get("namespace", "default")
        assert a or ns in p.get("namespaces", {}), f"example pod {dd['metadata']['name']} does not opt in"
        assert not a or a in names, f"pod annotation names unknown policy {a}"
plug = dict(p, cniVersion="1.0.0", name="cbr0", socket=t + "/none.sock",
            prevResult={"cniVersion": "1.0.0", "interfaces": [], "ips": []})
open(os.path.join(t, "plugin.json"), "w").write(json.dumps(plug))
print("structure ok:", len(docs), "objects")
PY
)
rc=$?
echo "$out"
eq "manifests reference each other consistently and opt in" 0 "$rc"
ok "ConfigMap policies pass netd policy check" "$NETD_BIN" policy check "$T"/policies/*.yaml
code=$(CNI_COMMAND=STATUS "$CNI_BIN" <"$T/plugin.json" 2>/dev/null | jq -r .code)
eq "netd-cni accepts the shipped entry (STATUS reaches the socket)" 50 "$code"
ok "the install script is POSIX sh (busybox sh -n)" /bin/busybox sh -n deploy/kubernetes/install-cni.sh
t_summary
