#!/usr/bin/env bash
# The command line as documented in netd(8): every command and subcommand
# answers --help (stdout, exit 0); the exit statuses 0 ok, 2 usage, 3 not
# found, 4 conflict, 5 daemon unreachable, 6 rejected; tables as wide as
# their content (a 29-byte CNI-style sandbox name stays in its column).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

# rc WANT DESC CMD... - CMD exits WANT.
rc() {
	local want=$1 desc=$2 out got
	shift 2
	out=$("$@" 2>&1)
	got=$?
	if [ "$got" = "$want" ]; then t_pass "$desc (exit $want)"; else t_fail "$desc" "want exit $want, got $got: $out"; fi
}

# ---- --help, no daemon needed ------------------------------------------------------
for words in "run" "sandbox" "sandbox create" "sandbox list" "sandbox show" "sandbox delete" \
	"exec" "policy" "policy check" "policy list" "policy show" "policy reload" "status" \
	"config" "config check" \
	"audit" "help"; do
	# shellcheck disable=SC2086
	out=$("$NETD_BIN" $words --help 2>/dev/null); got=$?
	if [ "$got" = 0 ] && grep -qF "usage: netd $words" <<<"$out" && grep -qF "Exit status:" <<<"$out"; then
		t_pass "netd $words --help: its usage on stdout, exit 0"
	else
		t_fail "netd $words --help" "exit $got: $out"
	fi
done
out=$("$NETD_BIN" sandbox create NAME -h 2>&1); got=$?
eq "-h after other words works too" "0 yes" "$got $(grep -qF 'usage: netd sandbox create' <<<"$out" && echo yes)"
has "netd help sandbox create" "usage: netd sandbox create" "$("$NETD_BIN" help sandbox create)"
has "netd --help lists the exit statuses" "5  the daemon is unreachable" "$("$NETD_BIN" --help)"
rc 2 "netd help bogus" "$NETD_BIN" help bogus
rc 2 "no command" "$NETD_BIN"
rc 2 "unknown command" "$NETD_BIN" bogus
rc 2 "sandbox create without NAME" "$NETD_BIN" sandbox create --policy deny-all
rc 2 "sandbox create with an unknown option" "$NETD_BIN" sandbox create x --policy deny-all --bogus
rc 2 "sandbox list with a stray word" "$NETD_BIN" sandbox list extra
rc 2 "policy list with a stray word" "$NETD_BIN" policy list extra
out=$("$NETD_BIN" sandbox list --bogus 2>&1)
has "a usage error says what was not understood" "netd: not understood: sandbox list --bogus" "$out"
has "... and shows that command's usage, not all of them" "usage: netd sandbox list [--json]" "$out"
hasnt "... not the whole usage" "usage: netd [--socket PATH] COMMAND" "$out"
rc 2 "audit with a bad --since" "$NETD_BIN" audit --file /dev/null --since yesterday
rc 5 "status, no daemon on the socket" "$NETD_BIN" --socket /nonexistent/netd.sock status
rc 5 "sandbox list, no daemon" "$NETD_BIN" --socket /nonexistent/netd.sock sandbox list
rc 6 "sandbox show with an invalid name" "$NETD_BIN" --socket /nonexistent/netd.sock sandbox show 'bad/name'
rc 5 "exec, no daemon" "$NETD_BIN" --socket /nonexistent/netd.sock exec sb1 -- true
rc 6 "exec with an invalid name" "$NETD_BIN" --socket /nonexistent/netd.sock exec 'bad/name' -- true
T=$(mktemp -d /tmp/ndcli.XXXXXX)
printf 'name: [broken\n' >"$T/bad.yaml"
rc 6 "policy check of a broken file" "$NETD_BIN" policy check "$T/bad.yaml"
rc 0 "policy check of the shipped policies" "$NETD_BIN" policy check policies/*.yaml
# netd config check: netd.yaml without starting the daemon (issue 32).
printf 'dns:\n  prt: 53\n' >"$T/netd.yaml"
rc 6 "config check of a bad netd.yaml" "$NETD_BIN" config check "$T/netd.yaml"
eq "... says where and what" "$T/netd.yaml:2:3: dns: unknown key 'prt'; did you mean 'port'?" \
	"$("$NETD_BIN" config check "$T/netd.yaml" 2>&1 | cut -d'(' -f1 | sed 's/ $//')"
rc 0 "config check of the shipped example" "$NETD_BIN" config check deploy/netd.yaml.example
has "... says ok" "deploy/netd.yaml.example: ok" "$("$NETD_BIN" config check deploy/netd.yaml.example)"
rc 3 "config check of a missing file" "$NETD_BIN" config check "$T/none.yaml"
# No FILE and no /etc/netd/netd.yaml: what netd run does then, the defaults
# (exit 0).  The default file hidden behind an empty tmpfs if this host has one.
if [ -e /etc/netd ]; then
	out=$(unshare -m sh -c 'mount -t tmpfs none /etc/netd && exec "$0" config check' "$NETD_BIN" 2>&1)
else
	out=$("$NETD_BIN" config check 2>&1)
fi
eq "config check with no netd.yaml: netd run's defaults, exit 0" \
	"0 /etc/netd/netd.yaml: not present: netd run uses the built-in defaults (docs/configuration.md)" \
	"$? $out"
rc 2 "config with no subcommand" "$NETD_BIN" config
rm -rf "$T"

# ---- with a daemon ---------------------------------------------------------------------
world_up "ndc$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
netd_up || { echo "0 passed, 1 failed"; exit 1; }
rc 0 "status" netd status
rc 3 "sandbox show of a missing sandbox" netd sandbox show "$(sb_name nosuch)"
rc 3 "sandbox delete of a missing sandbox" netd sandbox delete "$(sb_name nosuch)"
rc 3 "exec in a missing sandbox" netd exec "$(sb_name nosuch)" -- true
rc 3 "policy show of a missing policy" netd policy show nosuch
rc 0 "sandbox create" netd sandbox create "$(sb_name a)" --policy deny-all
rc 4 "sandbox create of an existing name" netd sandbox create "$(sb_name a)" --policy deny-all
rc 6 "sandbox create attaching a file that is no netns" \
	netd sandbox create "$(sb_name b)" --policy deny-all --netns /etc/hostname
rc 0 "policy list" netd policy list

# A 29-byte name, as netd-cni makes them: columns grow to fit.
long=$(sb_name a)
long=$long-$(printf '%029d' 0)
long=${long:0:29}
rc 0 "sandbox create with a 29-byte name" netd sandbox create "$long" --policy python-dev
out=$(netd sandbox list)
echo "$out" | sed 's/^/    | /'
hdr=$(head -1 <<<"$out")
row=$(grep -F "$long " <<<"$out")
col_h=$(awk '{ print index($0, "POLICY") }' <<<"$hdr")
col_r=$(awk -v p=python-dev '{ print index($0, " " p " ") + 1 }' <<<"$row")
eq "sandbox list: the POLICY column starts where its header does" "$col_h" "$col_r"
col_h=$(awk '{ print index($0, "IPV4") }' <<<"$hdr")
col_r=$(awk '{ print index($0, " 10.87.") + 1 }' <<<"$row")
eq "sandbox list: so does IPV4" "$col_h" "$col_r"
out=$(netd audit --file "$NETD_AUDIT" --event sandbox)
hdr=$(head -1 <<<"$out")
row=$(grep -F "$long " <<<"$out" | head -1)
col_h=$(awk '{ print index($0, "PROTO") }' <<<"$hdr")
col_r=$(awk -v n="$long" '{ i = index($0, n); print i + length(n) + 1 }' <<<"$row")
eq "audit table: the column after SANDBOX starts after the 29-byte name" "$col_h" "$col_r"
rc 0 "sandbox delete" netd sandbox delete "$long"
rc 0 "sandbox delete" netd sandbox delete "$(sb_name a)"
netd_down
t_summary
