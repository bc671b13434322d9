#!/usr/bin/env bash
# Issue 13, the never-pin table and `netd exec`'s credentials, end to end in
# a private world: an allowed name answered with Azure's WireServer, a
# Teredo address or the 6to4 form of the metadata service is answered but
# never pinned, and each refused address is logged with name and address;
# `netd policy check` warns about a CIDR rule over never-pin space; a
# command under `netd exec --user nobody --no-caps` / `--user` cannot
# reconfigure the sandbox's interfaces or open a raw socket (and still
# resolves and connects through netd); `--no-caps` for uid 0 is refused
# (tests/integ/sec_exec.sh has why).  No traffic is sent to any refused address.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nnp$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
ok "sandbox create" sb_create sb1 python-dev

# ---- never pinned, but logged ---------------------------------------------------
eq "wire.openai.com is answered (the client sees the record)" "168.63.129.16" \
	"$(sb_dig sb1 +short wire.openai.com A)"
eq "teredo.openai.com is answered" "2001:0:4136:e378:8000:63bf:3fff:fdd2" \
	"$(sb_dig sb1 +short teredo.openai.com AAAA)"
eq "sixtofour.openai.com is answered" "2002:a9fe:a9fe::1" \
	"$(sb_dig sb1 +short sixtofour.openai.com AAAA)"
# The pin sets only: the table's internal sets list these blocks on purpose.
dump=$(world_exec host nft list set inet netd pin4; world_exec host nft list set inet netd pin6)
has "the pin sets were read" "set pin6" "$dump"
hasnt "Azure WireServer 168.63.129.16 never pinned" "168.63.129.16" "$dump"
hasnt "Teredo address never pinned" "2001:0:4136:e378" "$dump"
hasnt "6to4 form of 169.254.169.254 never pinned" "2002:a9fe:a9fe" "$dump"
has "the internal set holds the WireServer (dropped even if pinned)" "168.63.129.16" \
	"$(world_exec host nft list set inet netd internal4)"
has "the refusal is in the audit log" '"qname":"wire.openai.com"' "$(audit_grep '"rebind":1')"
log=$(cat "$NETD_LOG")
has "log: the WireServer refusal names the address, the name, the sandbox, the entry" \
	"not pinning 168.63.129.16 for \"wire.openai.com\" (sandbox $SB1): Azure WireServer" "$log"
has "log: the Teredo refusal names its entry" \
	"not pinning 2001:0:4136:e378:8000:63bf:3fff:fdd2 for \"teredo.openai.com\"" "$log"
has "log: the 6to4 refusal names the embedded metadata address" \
	"the 6to4 form of 169.254.169.254, instance metadata service" "$log"
eq "an ordinary allowed name still pins and connects" "api.openai.com ok" \
	"$(sb_curl sb1 https://api.openai.com/)"

# ---- policy check warns about CIDR rules over never-pin space ---------------------
printf 'name: w\negress:\n  - cidrs: [168.63.129.16/32, 198.51.100.0/24]\n    ports: [80]\n' \
	>"$WORLD_DIR/w.yaml"
out=$(netd policy check "$WORLD_DIR/w.yaml" 2>&1)
rc=$?
eq "policy check still accepts it" "0" "$rc"
has "policy check warns with FILE:LINE:COL about the WireServer" \
	"$WORLD_DIR/w.yaml:3:5: warning: egress[0].cidrs[0] 168.63.129.16/32 opens 168.63.129.16/32 Azure WireServer" "$out"
hasnt "no warning for a documentation block (off by default)" "cidrs[1]" "$out"

# ---- netd exec: capabilities ----------------------------------------------------
nocaps() { timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody --no-caps "$SB1" -- "$@"; }
asuser() { timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody "$SB1" -- "$@"; }
RAW=("$WORLD_PYTHON" -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("raw ok")')

fail "plain exec: root in the sandbox cannot change a link (no CAP_NET_ADMIN)" \
	sb_exec sb1 ip link set lo mtu 60000
ok "--net-admin: root in the sandbox can change a link (what --no-caps takes away)" \
	timeout "$T_TIMEOUT" "$NETD_BIN" exec --net-admin "$SB1" -- ip link set lo mtu 65000
eq "plain exec: root can open a raw socket" "raw ok" "$(sb_exec sb1 "${RAW[@]}" 2>&1)"
fail "--no-caps: ip link set is refused" nocaps ip link set lo mtu 60000
fail "--no-caps: ip addr add is refused" nocaps ip addr add 10.87.250.9/32 dev eth0
fail "--no-caps: a raw socket is refused" nocaps "${RAW[@]}"
st=$(nocaps cat /proc/self/status)
has "--no-caps: no effective capability" "CapEff:	0000000000000000" "$st"
has "--no-caps: no permitted capability" "CapPrm:	0000000000000000" "$st"
has "--no-caps: empty bounding set" "CapBnd:	0000000000000000" "$st"
has "--no-caps: no_new_privs" "NoNewPrivs:	1" "$st"
eq "--no-caps: runs as the --user" "$(id -u nobody)" "$(nocaps id -u)"
fail "--no-caps without --user: refused" "$NETD_BIN" exec --no-caps "$SB1" -- true
eq "--no-caps: DNS through netd still works" "198.51.100.10" "$(nocaps dig +time=4 +tries=2 +short pypi.org A)"
eq "--no-caps: allowed connection still works" "pypi.org ok" \
	"$(nocaps curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 3 --max-time 10 https://pypi.org/simple/)"
eq "link mtu unchanged by the refused commands" "65000" \
	"$(ip -n "$SB1" -o link show lo | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
hasnt "address not added by the refused command" "10.87.250.9" "$(ip -n "$SB1" addr show dev eth0)"

eq "--user nobody: runs as nobody" "$(id -u nobody)" "$(asuser id -u)"
eq "--user nobody: its primary group" "$(id -g nobody)" "$(asuser id -g)"
fail "--user nobody: ip link set is refused" asuser ip link set lo mtu 60000
fail "--user nobody: a raw socket is refused" asuser "${RAW[@]}"
has "--user nobody: no effective capability" "CapEff:	0000000000000000" "$(asuser cat /proc/self/status)"
eq "--user nobody:root sets the group" "0" \
	"$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody:root --no-caps "$SB1" -- id -g)"
eq "--user 65534:65534 --no-caps: numeric ids" "65534 65534" \
	"$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --user 65534:65534 --no-caps "$SB1" -- sh -c 'echo $(id -u) $(id -g)')"
fail "--user 0:0 --no-caps: refused (uid 0)" "$NETD_BIN" exec --user 0:0 --no-caps "$SB1" -- true
out=$("$NETD_BIN" exec --user no-such-user-xyz "$SB1" -- true 2>&1)
rc=$?
eq "--user with an unknown user: usage error" "2" "$rc"
has "--user with an unknown user: says so" "no such user or group" "$out"
"$NETD_BIN" exec --no-caps 2>/dev/null
eq "exec --no-caps without NAME: usage error" "2" "$?"
ok "restore lo's mtu" ip -n "$SB1" link set lo mtu 65536

ok "sandbox delete" netd sandbox delete "$SB1"
netd_down
t_summary
