#!/usr/bin/env bash
# docs_check.sh - the architecture page and the configuration reference
# against the tree, and the dependency rules docs/architecture.md states.
# No root, no build, no network: reads files only.  Checks:
#   files     every *.c/*.h under netd/ dnsproxy/ common/ cni-plugin/ docker-plugin/ is named
#             (by its path) in docs/architecture.md
#   paths     every path docs/architecture.md names exists
#   dnsproxy  no #include "netd/..." under dnsproxy/
#   common    common/ includes only common/ headers (and system ones)
#   ctl       netd/ctl.[ch] and netd/ctlreq.[ch] include nothing of the daemon
#             (they reach it only through struct ctl_ops)
#   cycles    no include cycle between modules (a module: netd/daemon.[ch] +
#             netd/daemon/, netd/fw.h + netd/fw/, each other netd/DIR/STEM.[ch],
#             dnsproxy/, common/, cni-plugin/, docker-plugin/)
#   internal  netd/daemon/internal.h is included only by the daemon's files;
#             dnsproxy/proxy_int.h only by the proxy's own .c files;
#             netd/fw/ internals only inside netd/fw/ (tests aside)
#   nftables  netd/fw/nl.c is the only file that opens a netlink socket among
#             the files that speak nf_tables (NFT_MSG_*), and no file outside
#             netd/fw/ builds nf_tables messages
#   layers    no #include points up the layers docs/architecture.md's
#             "**Layers**" list draws (across one or down is fine); every
#             product file is in a layer
#   pure      the files the "Pure modules" line of docs/architecture.md lists
#             open no file or socket, log nothing, read no clock, use no event loop
#   config    the keys netd/model/config.c, config_gw.c and config_ipfix.c accept (their names[] arrays) are exactly
#             the keys of docs/configuration.md's table, and docs/man/netd.yaml.5's entries
#   front     README.md is at most 300 lines with `make deps` and `make test`
#             in its first 25; docs/README.md links every docs/*.md page
#   reasons   the DNS, the deny and the gateway reasons of common/reason.c
#             (but "other", a metrics label or lookup answer only) are
#             exactly those of docs/audit.md's three reason tables
#   events    every event a product file writes to the audit log (the
#             literal EVENT of audit_write(A, "EVENT", ...),
#             audit_write_members(), trail.c's write_conn()) is a word of
#             CLI_AUDIT_EVENTS (netd/cli/cli_help.h: what `netd audit
#             --event` takes and its help lists) and a row of docs/audit.md's
#             event table; and each of those words is written somewhere;
#             deploy/bash-completion/netd completes --event with the same words
# Ends with "N passed, N failed"; exit 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

exec python3 - "$@" <<'PY'
import glob
import os
import re
import sys

passed = failed = 0


def check(name, problems):
    global passed, failed
    if problems:
        failed += 1
        print(f"FAIL {name}:")
        for p in problems:
            print(f"  {p}")
    else:
        passed += 1
        print(f"ok   {name}")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


ARCH = "docs/architecture.md"
CONF = "docs/configuration.md"
arch = read(ARCH)
product = sorted(f for d in ("netd", "dnsproxy", "common", "cni-plugin", "docker-plugin")
                 for f in glob.glob(d + "/**/*.[ch]", recursive=True))
includes = {f: re.findall(r'^\s*#\s*include\s+"([^"]+)"', read(f), re.M) for f in product}

# -- files: every product file named by its path
named = set(re.findall(r"[A-Za-z0-9_./+-]+", arch))
check("files: every product file is named in " + ARCH,
      [f"{f} is not named" for f in product if f not in named])

# -- paths: every path the page names exists.  A path: `...` or a bare word
# starting with a top-level folder; NAME/PID placeholders, globs and
# build/ outputs are not paths of the tree.
TOP = ("netd/", "dnsproxy/", "common/", "cni-plugin/", "docker-plugin/", "policies/", "deploy/",
       "tests/", "docs/", ".ci/")
missing = []
for tok in sorted(set(re.findall(r"(?<![A-Za-z0-9_./-])((?:%s)[A-Za-z0-9_./+-]*)" %
                                 "|".join(re.escape(t) for t in TOP), arch))):
    tok = tok.rstrip(".,:;)")
    if re.search(r"[*]|NAME|PID|\.\.\.|X$", tok):
        continue
    m = re.fullmatch(r"(.*)\.\[([a-z]+)\]", tok)	# netd/ctl.[ch]
    cands = [m.group(1) + "." + c for c in m.group(2)] if m else [tok]
    for c in cands:
        if not os.path.exists(c):
            missing.append(f"{ARCH} names {c}, which does not exist")
check("paths: every path " + ARCH + " names exists", missing)

# -- dnsproxy: never includes netd/
check("dnsproxy: no #include \"netd/...\" under dnsproxy/",
      [f"{f} includes {h}" for f, hs in includes.items() if f.startswith("dnsproxy/")
       for h in hs if h.startswith("netd/")])

# -- common: includes nothing above it
check("common: common/ includes only common/ headers",
      [f"{f} includes {h}" for f, hs in includes.items() if f.startswith("common/")
       for h in hs if not h.startswith("common/")])

# -- ctl: the control API reaches the daemon only through struct ctl_ops
CTL = ("netd/api/ctl.c", "netd/api/ctl.h", "netd/api/ctlreq.c", "netd/api/ctlreq.h")
check("ctl: netd/api/ctl* include nothing of netd/daemon*",
      [f"{f} includes {h}" for f in CTL for h in includes.get(f, [])
       if h.startswith("netd/daemon")])


# -- cycles between modules
def module(f):
    if f.startswith(("netd/daemon/", "netd/daemon.")):
        return "netd/daemon"
    if f.startswith(("netd/fw/", "netd/fw.")):
        return "netd/fw"
    if f.startswith("netd/"):
        return os.path.splitext(f)[0]
    return f.split("/")[0]


graph = {}
for f, hs in includes.items():
    for h in hs:
        if module(h) != module(f):
            graph.setdefault(module(f), {}).setdefault(module(h), f"{f} includes {h}")


def cycles():
    found, color, stack = [], {}, []

    def visit(v):
        color[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, {})):
            if color.get(w) == 1:
                ring = stack[stack.index(w):] + [w]
                found.append(" -> ".join(ring) + "  (" +
                             "; ".join(graph[a][b] for a, b in zip(ring, ring[1:])) + ")")
            elif not color.get(w):
                visit(w)
        stack.pop()
        color[v] = 2

    for v in sorted(graph):
        if not color.get(v):
            visit(v)
    return found


check("cycles: no include cycle between modules (netd/ctl <-> netd/daemon among them)", cycles())

# -- layers: an include points across its layer or down, never up
def parse_layers(text):
    m = re.search(r"^\*\*Layers\*\*.*?\n\n((?:\d+\. [^\n]*\n)+)", text, re.M | re.S)
    if not m:
        return []
    return [re.findall(r"`([^`]+)`", line) for line in m.group(1).splitlines()]


def layer_of(path, layers):
    best, depth = None, -1		# the longest prefix names the layer
    for i, prefixes in enumerate(layers):
        for p in prefixes:
            hit = path.startswith(p) if p.endswith("/") else path == p
            if hit and len(p) > depth:
                best, depth = i, len(p)
    return best


layers = parse_layers(arch)
bad = [] if layers else [f"{ARCH} has no \"**Layers**\" list (1. `folder/` ...)"]
for f in product if layers else []:
    lf = layer_of(f, layers)
    if lf is None:
        bad.append(f"{f} is in no layer of {ARCH}'s **Layers** list")
        continue
    for h in includes[f]:
        lh = layer_of(h, layers)
        if lh is None:
            bad.append(f"{f} includes {h}, which is in no layer")
        elif lh < lf:
            bad.append(f"{f} (layer {lf + 1}) includes {h} (layer {lh + 1}): "
                       "an include may not point up the layers")
check("layers: no include points up the layers of " + ARCH, bad)

# -- internal headers stay inside their module
bad = []
for f, hs in includes.items():
    for h in hs:
        if h == "netd/daemon/internal.h" and module(f) != "netd/daemon":
            bad.append(f"{f} includes {h}")
        if h == "dnsproxy/proxy_int.h" and not f.startswith("dnsproxy/"):
            bad.append(f"{f} includes {h}")
        if h.startswith("netd/fw/") and not f.startswith("netd/fw/"):
            bad.append(f"{f} includes {h}")
check("internal: daemon/internal.h, proxy_int.h, netd/fw/*.h stay in their module", bad)

# -- nftables: one socket, one folder
bad = []
for f in product:
    text = read(f)
    speaks = re.search(r"\bNFT_MSG_|nftnl_batch|NFNL_SUBSYS_NFTABLES", text)
    if speaks and not f.startswith("netd/fw/") and f != "netd/fw.h":
        bad.append(f"{f} builds nf_tables messages outside netd/fw/")
    if f.startswith("netd/fw/") and f != "netd/fw/nl.c" and \
            re.search(r"\bmnl_socket_open2?\s*\(|\bsocket\s*\(", text):
        bad.append(f"{f} opens a socket (only netd/fw/nl.c may)")
check("nftables: netd/fw/nl.c is the only nf_tables socket", bad)

# -- pure modules
m = re.search(r"^\*\*Pure modules\*\*(.*?)(?:\n\n)", arch, re.M | re.S)
pure = re.findall(r"`([a-z-]+/[A-Za-z0-9_./-]+\.[ch])`", m.group(1)) if m else []
bad = [] if pure else [f"{ARCH} has no \"**Pure modules**\" paragraph naming files"]
FORBIDDEN = [
    (r'#\s*include\s*<(event2/|ares\.h|fcntl\.h|unistd\.h|dirent\.h|sys/stat\.h|sys/inotify\.h)',
     "includes an I/O or event header"),
    (r'#\s*include\s*"common/(clock|fsutil|httpc)\.h"', "includes a clock, file or socket helper"),
    (r"\b(socket|open|openat|fopen|opendir|read|write|recv|recvmsg|send|sendmsg|sendto|"
     r"mnl_socket_open2?|clock_gettime|gettimeofday)\s*\(", "calls"),
    (r"\blog_(err|warn|info|debug)\s*\(", "logs:"),
]
for f in pure:
    if not os.path.exists(f):
        continue	# reported by "paths"
    text = re.sub(r"/\*.*?\*/", "", read(f), flags=re.S)	# not in comments
    for rx, what in FORBIDDEN:
        for hit in sorted(set(mm.group(0) for mm in re.finditer(rx, text))):
            bad.append(f"{f} {what} {hit.strip()}")
check("pure: the pure modules do no I/O, logging or clock reads", bad)

# -- config keys: netd/model/config.c's names[] (and config_gw.c's: gateway:, config_ipfix.c's: ipfix:) vs docs/configuration.md's table
src = read("netd/model/config.c") + read("netd/model/config_gw.c") + read("netd/model/config_ipfix.c")
accepted = set()
sections = {}
for fn, body in re.findall(r"^static int (parse_\w+)\([^)]*\)\s*\{(.*?)^\}", src, re.M | re.S):
    nm = re.search(r"names\[\]\s*=\s*\{(.*?)\}", body, re.S)
    if nm:
        sections[fn[len("parse_"):]] = re.findall(r'"([a-z0-9_]+)"', nm.group(1))
top = sections.pop("doc", [])
for key in top:
    if key in sections:
        accepted.update(f"{key}.{k}" for k in sections[key])
    else:
        accepted.add(key)
conf = read(CONF)
documented = set()
for line in conf.splitlines():
    if line.startswith("| `"):
        first = line.split("|")[1]
        documented.update(re.findall(r"`([a-z0-9_.]+)`", first))
bad = [] if top else ["found no names[] in netd/model/config.c's parse_doc()"]
bad += [f"{k}: accepted by netd/model/config.c, not in {CONF}'s table" for k in sorted(accepted - documented)]
bad += [f"{k}: in {CONF}'s table, not accepted by netd/model/config.c" for k in sorted(documented - accepted)]
check(f"config: netd/model/config.c's keys = {CONF}'s table ({len(accepted)} keys)", bad)

# -- the example config names every key (commented out, with its default)
EXAMPLE = "deploy/netd.yaml.example"
ex = read(EXAMPLE)
seen = set()
section = None
for line in ex.splitlines():
    mm = re.match(r"^(\s*)#?\s*([a-z0-9_]+):", line)
    if not mm or line.lstrip().startswith("# "):
        continue
    indent, key = mm.group(1), mm.group(2)
    if not indent:
        section = key if key in sections else None
        seen.add(key)
    elif section:
        seen.add(f"{section}.{key}")
bad = [f"{k}: accepted by netd/model/config.c, not in {EXAMPLE}" for k in sorted(accepted - seen)]
check(f"example: {EXAMPLE} shows every key netd/model/config.c accepts", bad)

# -- the man page netd.yaml(5) has an entry (a .TP item ".BR key ...") for every key
MAN5 = "docs/man/netd.yaml.5"
# an item's bold words before its default are its keys ('.BR dns.qps ", " dns.burst " ("
# 1000 ...'); the
# items between .RS and .RE (a credential's own keys) are a key's parts, not keys
man5 = re.sub(r"^\.RS\n.*?^\.RE\n", "", read(MAN5), flags=re.M | re.S)
man_keys = set()
for item in re.findall(r"^\.TP\n\.BR? (.*)$", man5, re.M):
    item = item.split("(")[0]	# the default in parentheses follows the keys
    man_keys.update(w for w in re.sub(r'"[^"]*"', " ", item).split()
                    if re.fullmatch(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)?", w))
bad = [f"{k}: accepted by netd/model/config.c, no entry in {MAN5}" for k in sorted(accepted - man_keys)]
bad += [f"{k}: an entry in {MAN5}, not accepted by netd/model/config.c" for k in sorted(man_keys - accepted)]
check(f"man: {MAN5} has an entry for every key netd/model/config.c accepts", bad)

# -- the front door and the table of contents
readme = read("README.md").splitlines()
bad = [f"README.md has {len(readme)} lines (at most 300)"] if len(readme) > 300 else []
first = "\n".join(readme[:25])
bad += [f"README.md's first screen (25 lines) lacks `{c}`" for c in ("make deps", "make test")
        if c not in first]
toc = read("docs/README.md")
bad += [f"docs/README.md does not list {os.path.basename(p)}"
        for p in sorted(glob.glob("docs/*.md"))
        if p != "docs/README.md" and f"]({os.path.basename(p)})" not in toc]
check("front door: README.md <= 300 lines, two commands first; docs/README.md lists every page",
      bad)

# -- the audit log's reason words: common/reason.c's tables vs docs/audit.md's
rsrc = read("common/reason.c")
adoc = read("docs/audit.md")
bad = []
for table, kind, head in (("dns_names", "DNS", "| reason | when |"),
                          ("deny_names", "deny", "| reason | what was dropped |"),
                          ("gw_names", "gateway", "| reason | answer, and why |")):
    mt = re.search(table + r"\[[A-Z_]+\] = \{(.*?)\};", rsrc, re.S)
    code = re.findall(r'\] = "([a-z0-9-]+)"', mt.group(1)) if mt else []
    code = [w for w in code if w != "other"]
    if not code:
        bad.append(f"found no {table}[] in common/reason.c")
    i = adoc.find("\n" + head + "\n")
    doc = []
    if i < 0:
        bad.append(f"docs/audit.md has no {kind} reason table ({head})")
    else:
        for line in adoc[i + 1:].splitlines()[2:]:
            if not line.startswith("| `"):
                break
            doc += re.findall(r"^\| `([^`]+)` \|", line)
    bad += [f"{kind} reason {w}: in common/reason.c, not in docs/audit.md's table"
            for w in code if w not in doc]
    bad += [f"{kind} reason {w}: in docs/audit.md's table, not in common/reason.c"
            for w in doc if w not in code]
    bad += [f"{kind} reason {w}: twice in docs/audit.md's table" for w in set(doc) if doc.count(w) > 1]
check("reasons: common/reason.c's DNS, deny and gateway reasons = docs/audit.md's reason tables",
      bad)

# -- the audit log's events: its writers vs `netd audit --event` and docs/audit.md
written = {}
for f in product:
    for m in re.finditer(r'\b(?:audit_write|audit_write_members|write_conn)\(\s*[^,()]+(?:->[a-z_]+)?,'
                         r'\s*"([a-z_]+)"', read(f)):
        written.setdefault(m.group(1), f)
mh = re.search(r'#define CLI_AUDIT_EVENTS((?:[^\n]*\\\n)*[^\n]*)', read("netd/cli/cli_help.h"))
cli = re.findall(r"[a-z_]+", " ".join(re.findall(r'"([^"]*)"', mh.group(1))).replace("\\n", " ")) \
    if mh else []
i = adoc.find("\n| `event` | written when |\n")
doc = []
if i >= 0:
    for line in adoc[i + 1:].splitlines()[2:]:
        if not line.startswith("| `"):
            break
        doc += re.findall(r"^\| `([^`]+)` \|", line)
bad = [] if cli else ["found no CLI_AUDIT_EVENTS in netd/cli/cli_help.h"]
bad += [] if doc else ["docs/audit.md has no event table (| `event` | written when |)"]
bad += [f"{e}: written by {f}, not in CLI_AUDIT_EVENTS (netd/cli/cli_help.h): "
        f"`netd audit --event {e}` refuses it" for e, f in sorted(written.items()) if e not in cli]
bad += [f"{e}: written by {f}, not in docs/audit.md's event table"
        for e, f in sorted(written.items()) if e not in doc]
bad += [f"{e}: in CLI_AUDIT_EVENTS, written by no product file" for e in cli if e not in written]
mc = re.search(r'--event\)\n\s*COMPREPLY=\(\$\(compgen -W "([^"]*)"', read("deploy/bash-completion/netd"))
comp = mc.group(1).split() if mc else []
if sorted(comp) != sorted(cli):
    bad.append(f"deploy/bash-completion/netd completes --event with {' '.join(comp) or 'nothing'}, "
               f"not CLI_AUDIT_EVENTS's {' '.join(cli)}")
bad += [f"{e}: in docs/audit.md's event table, written by no product file"
        for e in doc if e not in written]
check(f"events: the {len(written)} events written to the audit log = `netd audit --event`'s "
      "list = docs/audit.md's event table", bad)

print(f"docs_check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
