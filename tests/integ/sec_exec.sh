#!/usr/bin/env bash
# Issue 30, finding 4: what a command under `netd exec` can reach of netd
# itself, end to end in a private world.  Each attack is named by its
# mechanism and must fail:
#   - the policy file rewritten and `netd policy reload` sent through the
#     control socket, so that a refused destination answers: under
#     `--no-caps` alone (uid 0 owns the files), and under plain `netd exec`;
#   - netd's own network namespace entered, and its nftables rules listed:
#     through /proc/NETD_PID/ns/net, and through /run/netns/WORLD-host (where
#     the test world's netd runs; on a real host it is /proc/1/ns/net);
#   - netd's interfaces listed and deleted without entering its netns:
#     rtnetlink's IFLA_TARGET_NETNSID with the id the kernel gives the
#     sandbox's netns for its veth's peer (needs CAP_NET_ADMIN, which only
#     --net-admin gives);
#   - netd's config, state, policy directory and control socket read or
#     reached at the paths netd uses.
# Also checked: the sandbox still works from inside (DNS, an allowed
# connection, its own interfaces), and the exit status, stdin and signals
# pass through the PID namespace `netd exec` makes.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "nsx$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
# A copy of the policies: the attacks below write to policy_dir.
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES" && cp policies/*.yaml "$NETD_POLICIES/"
cp "$NETD_POLICIES/python-dev.yaml" "$WORLD_DIR/python-dev.orig"
netd_up || { echo "0 passed, 1 failed"; exit 1; }
SB1=$(sb_name sb1)
ok "sandbox create" sb_create sb1 python-dev

# example.com's address, which python-dev refuses.
refused() {
	sb_exec sb1 curl -sS --fail --cacert "$WORLD_CA" --connect-timeout 2 --max-time 5 \
		--resolve example.com:443:203.0.113.66 https://example.com/
}
# restore: put python-dev back and reload from outside (after an attack that
# worked, so the next one starts from the same state).
restore() {
	cp "$WORLD_DIR/python-dev.orig" "$NETD_POLICIES/python-dev.yaml"
	netd policy reload >/dev/null 2>&1
}
# The attack: open 203.0.113.66:443 in python-dev and have netd reload it.
ATTACK=(sh -c 'printf "  - cidrs: [203.0.113.66/32]\n    ports: [443]\n" >>"$1/python-dev.yaml" &&
	"$2" policy reload' attack "$NETD_POLICIES" "$NETD_BIN")

fail "before: python-dev refuses 203.0.113.66:443" refused

# ---- (a) the policy file and the control socket -----------------------------------
out=$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --no-caps "$SB1" -- "${ATTACK[@]}" 2>&1)
rc=$?
eq "--no-caps without --user is refused (usage error)" "2" "$rc"
has "--no-caps without --user says why" "--no-caps needs --user" "$out"
fail "--no-caps alone: policy rewrite + reload did not open the refused address" refused
restore
out=$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --user 0:0 --no-caps "$SB1" -- id -u 2>&1)
eq "--user 0 --no-caps is refused too (uid 0 owns the host's files)" "2" "$?"
has "--user 0 --no-caps says why" "non-root" "$out"

fail "plain exec: policy rewrite + reload through the control socket fails" \
	sb_exec sb1 "${ATTACK[@]}"
fail "plain exec: the refused address still refused after the attempt" refused
eq "plain exec: the policy file is unchanged" "" \
	"$(cmp "$WORLD_DIR/python-dev.orig" "$NETD_POLICIES/python-dev.yaml" 2>&1)"
restore

fail "--user nobody --no-caps: policy rewrite + reload fails" \
	timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody --no-caps "$SB1" -- "${ATTACK[@]}"
fail "--user nobody --no-caps: the refused address still refused" refused
restore

# What the command sees at netd's paths (plain exec: root, the default caps).
fail "plain exec: the control socket is not a socket there" sb_exec sb1 test -S "$NETD_SOCKET"
fail "plain exec: netd status cannot reach the daemon" sb_exec sb1 "$NETD_BIN" status
eq "plain exec: the config file reads empty" "" "$(sb_exec sb1 cat "$NETD_CONF" 2>/dev/null)"
eq "plain exec: policy_dir is empty" "" "$(sb_exec sb1 ls -A "$NETD_POLICIES" 2>&1)"
eq "plain exec: state_dir is empty" "" "$(sb_exec sb1 ls -A "$WORLD_DIR/state" 2>&1)"
fail "plain exec: policy_dir is read-only" sb_exec sb1 touch "$NETD_POLICIES/x.yaml"
fail "plain exec: the hiding cannot be unmounted (no CAP_SYS_ADMIN)" \
	sb_exec sb1 umount "$NETD_POLICIES"
fail "plain exec: no new mounts (no CAP_SYS_ADMIN)" sb_exec sb1 mount -t tmpfs none /mnt
eq "plain exec: the audit log reads empty" "" "$(sb_exec sb1 cat "$NETD_AUDIT" 2>/dev/null)"
ok "the audit log itself is untouched (outside)" test -s "$NETD_AUDIT"
# The world's own CA in WORLD_DIR, next to the socket, stays readable.
ok "plain exec: other files beside netd's stay visible (the world's CA)" sb_exec sb1 test -s "$WORLD_CA"

# ---- (b) netd's own network namespace -------------------------------------------
netd_ns=$(readlink "/proc/$NETD_PID/ns/net")
# Each attempt prints the netns it ended up in and then the table, if any.
inns() { sb_exec sb1 nsenter --net="$1" -- sh -c 'readlink /proc/self/ns/net; nft list table inet netd' 2>&1; }
out=$(inns "/proc/$NETD_PID/ns/net")
hasnt "plain exec: nsenter via /proc/NETD_PID/ns/net does not reach netd's netns" "$netd_ns" "$out"
hasnt "plain exec: ... nor list netd's rules there" "table inet netd" "$out"
out=$(inns "$WORLD_HOST_NETNS")
hasnt "plain exec: nsenter via /run/netns/$WORLD_HOST_NS does not reach netd's netns" "$netd_ns" "$out"
hasnt "plain exec: ... nor list netd's rules there" "table inet netd" "$out"
eq "plain exec: /run/netns lists nothing" "" "$(sb_exec sb1 ls -A /run/netns 2>&1)"
fail "plain exec: netd's PID is not visible (own PID namespace)" sb_exec sb1 kill -0 "$NETD_PID"
eq "plain exec: the command is PID 2 under a small init" "2" "$(sb_exec sb1 sh -c 'echo $$')"
st=$(sb_exec sb1 cat /proc/self/status)
bnd=$(sed -n 's/^CapBnd:\t//p' <<<"$st")
eq "plain exec: CAP_SYS_ADMIN not in the bounding set" "0" "$(((0x$bnd >> 21) & 1))"
eq "plain exec: CAP_SYS_PTRACE not in the bounding set" "0" "$(((0x$bnd >> 19) & 1))"
eq "plain exec: CAP_DAC_READ_SEARCH not in the bounding set" "0" "$(((0x$bnd >> 2) & 1))"
eq "plain exec: CAP_NET_ADMIN not in the bounding set" "0" "$(((0x$bnd >> 12) & 1))"
eq "plain exec: CAP_NET_RAW kept" "1" "$(((0x$bnd >> 13) & 1))"
out=$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody --no-caps "$SB1" -- \
	nsenter --net="$WORLD_HOST_NETNS" -- nft list table inet netd 2>&1)
hasnt "--user nobody --no-caps: cannot list netd's rules via /run/netns" "table inet netd" "$out"

# rtnetlink on the netns id NSID: RTM_GETLINK dump (prints the names) or,
# with an ifindex, RTM_DELLINK (prints "ack"); "error N" if refused.
NSID_PY='
import socket, struct, sys
nsid = int(sys.argv[1]); idx = int(sys.argv[2]) if len(sys.argv) > 2 else 0
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
body = struct.pack("BxHiII", 0, 0, idx, 0, 0) + struct.pack("HHi", 8, 46, nsid)  # IFLA_TARGET_NETNSID
typ, flags = (17, 5) if idx else (18, 0x301)  # RTM_DELLINK + ACK, or RTM_GETLINK + DUMP
s.send(struct.pack("IHHII", 16 + len(body), typ, flags, 1, 0) + body)
names = []
while True:
    data = s.recv(65536); off = 0
    while off < len(data):
        ln, t = struct.unpack_from("IH", data, off)
        if t == 3: print(" ".join(names)); sys.exit(0)
        if t == 2:
            e = struct.unpack_from("i", data, off + 16)[0]
            print("ack" if e == 0 else "error %d" % e); sys.exit(0 if e == 0 else 1)
        a = off + 32
        while a + 4 <= off + ln:
            alen, at = struct.unpack_from("HH", data, a)
            if alen < 4: break
            if at == 3: names.append(data[a + 4:a + alen].rstrip(b"\0").decode())
            a += (alen + 3) & ~3
        off += (ln + 3) & ~3
'
HOST_IF=$(sb_field "$SB1" host_ifname)
nsid=$(sb_exec sb1 ip -o link show eth0 | sed -n 's/.* link-netnsid \([0-9]*\).*/\1/p')
peer=$(ip -n "$WORLD_HOST_NS" -o link show "$HOST_IF" | cut -d: -f1)
ok "the sandbox's netns has an id for netd's (its veth's peer)" test -n "$nsid"
ok "the sandbox's host-side interface is known" test -n "$peer"
out=$(sb_exec sb1 "$WORLD_PYTHON" -c "$NSID_PY" "$nsid" 2>&1)
hasnt "plain exec: netd's interfaces not listed through IFLA_TARGET_NETNSID" "$HOST_IF" "$out"
out=$(sb_exec sb1 "$WORLD_PYTHON" -c "$NSID_PY" "$nsid" "$peer" 2>&1)
hasnt "plain exec: netd's interface not deleted through IFLA_TARGET_NETNSID" "ack" "$out"
ok "the sandbox's host-side interface is still there" ip -n "$WORLD_HOST_NS" link show "$HOST_IF"
out=$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --user nobody --no-caps "$SB1" -- \
	"$WORLD_PYTHON" -c "$NSID_PY" "$nsid" 2>&1)
hasnt "--user nobody --no-caps: netd's interfaces not listed either" "$HOST_IF" "$out"
# What --net-admin gives, and why it is not the default (docs/security.md).
out=$(timeout "$T_TIMEOUT" "$NETD_BIN" exec --net-admin "$SB1" -- "$WORLD_PYTHON" -c "$NSID_PY" "$nsid" 2>&1)
has "--net-admin: netd's interfaces are listed (the documented limit)" "$HOST_IF" "$out"
out=$("$NETD_BIN" exec --user nobody --no-caps --net-admin "$SB1" -- true 2>&1)
eq "--net-admin with --no-caps: usage error" "2" "$?"

# ---- the sandbox still works, and the process plumbing -------------------------
eq "plain exec: DNS through netd" "198.51.100.10" "$(sb_dig sb1 +short pypi.org A)"
eq "plain exec: an allowed connection" "pypi.org ok" "$(sb_curl sb1 https://pypi.org/simple/)"
fail "plain exec: its own interfaces cannot be changed (no CAP_NET_ADMIN)" \
	sb_exec sb1 ip link set lo mtu 65000
ok "--net-admin: its own interfaces can be changed" \
	timeout "$T_TIMEOUT" "$NETD_BIN" exec --net-admin "$SB1" -- ip link set lo mtu 65000
ok "restore lo's mtu" ip -n "$SB1" link set lo mtu 65536
has "plain exec: /sys is the sandbox's" "eth0" "$(sb_exec sb1 ls /sys/class/net)"
sb_exec sb1 sh -c 'exit 7'
eq "the command's exit status passes through" "7" "$?"
sb_exec sb1 sh -c 'kill -TERM $$'
eq "a command killed by SIGTERM: 128+15" "143" "$?"
eq "stdin passes through" "hello" "$(echo hello | sb_exec sb1 cat)"
sb_exec sb1 no-such-command-xyz 2>/dev/null
eq "a command that does not exist: 127" "127" "$?"
# term_ends DESC EXEC_ARGS...: SIGTERM to a backgrounded netd exec ends its command, 128+15.
term_ends() {
	local desc=$1 xpid i
	shift
	"$NETD_BIN" exec "$@" -- sleep 60 &
	xpid=$!
	world_pid_track "$xpid"
	for ((i = 0; i < 100; i++)); do
		[ -n "$(ip netns pids "$SB1" 2>/dev/null)" ] && break
		sleep 0.1
	done
	kill -TERM "$xpid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$xpid" 2>/dev/null || break
		sleep 0.1
	done
	fail "$desc: SIGTERM to netd exec ends the command" kill -0 "$xpid"
	wait "$xpid" 2>/dev/null
	eq "$desc: ... with 128+15" "143" "$?"
}
term_ends "plain exec" "$SB1"
term_ends "--user nobody --no-caps" --user nobody --no-caps "$SB1"
eq "a signal the caller ignores stays ignored (nohup)" "alive" \
	"$(trap '' HUP; "$NETD_BIN" exec "$SB1" -- sh -c 'kill -HUP $$; echo alive' 2>&1)"
eq "nothing left in the sandbox's netns" "" "$(ip netns pids "$SB1" 2>/dev/null)"

ok "sandbox delete" netd sandbox delete "$SB1"
netd_down
t_summary
