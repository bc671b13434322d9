#!/usr/bin/env bash
# The DNS proxy's abuse limits, configured small in netd.yaml's dns:
# section: addresses per answer (max_pins_per_name), live pins per sandbox
# (max_pins), queries per second (qps/burst).  Each is logged when hit.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/world.sh
. tests/integ/lib_netd.sh

world_up "ndl$$" >/dev/null || { echo "world_up failed"; echo "0 passed, 1 failed"; exit 1; }
NETD_POLICIES=$WORLD_DIR/policies
mkdir -p "$NETD_POLICIES"
cat >"$NETD_POLICIES/lim.yaml" <<'YAML'
name: lim
egress:
  - domains: [www.dt.example, svc.dt.example, keep.dt.example, big.openai.com]
    ports: [443]
YAML
NETD_DNS_EXTRA=$'  max_pins: 3\n  max_pins_per_name: 30\n  qps: 2\n  burst: 10'
netd_up || { echo "0 passed, 1 failed"; exit 1; }
ok "sandbox sb1" sb_create sb1 lim

st() { grep -o 'status: [A-Z]*' <<<"$1"; }

# ---- addresses per answer ----------------------------------------------------------
eq "40 addresses in one answer, 30 allowed per name: SERVFAIL" "status: SERVFAIL" \
	"$(st "$(sb_dig sb1 +bufsize=4096 big.openai.com)")"
has "audited as name-pin-limit" '"reason":"name-pin-limit"' "$(audit_grep '"qname":"big.openai.com"')"
hasnt "nothing of it pinned" "198.51.100.1" "$(sb_pins "$(sb_name sb1)")"
has "logged" "allowed per name" "$(cat "$NETD_LOG")"

# ---- live pins per sandbox ------------------------------------------------------------
eq "1st pin" "198.51.100.40" "$(sb_dig sb1 +short www.dt.example)"
has "2 more (HTTPS hints): 3 live pins" "ipv4hint" "$(sb_dig sb1 +short svc.dt.example HTTPS)"
eq "a 4th address: SERVFAIL" "status: SERVFAIL" "$(st "$(sb_dig sb1 keep.dt.example)")"
has "audited as pin-limit" '"reason":"pin-limit"' "$(audit_grep '"qname":"keep.dt.example"')"
has "logged" "the most allowed (3)" "$(cat "$NETD_LOG")"
eq "re-resolving a pinned name still works" "198.51.100.40" "$(sb_dig sb1 +short www.dt.example)"

# ---- queries per second ------------------------------------------------------------------
for i in $(seq 1 40); do echo "www.dt.example A"; done >"$WORLD_DIR/batch"
out=$(sb_exec sb1 dig +time=2 +tries=1 -f "$WORLD_DIR/batch" 2>&1)
n_ok=$(grep -c 'status: NOERROR' <<<"$out")
n_ref=$(grep -c 'status: REFUSED' <<<"$out")
ok "a burst of 40 queries at 2/s (burst 10): some refused ($n_ref)" test "$n_ref" -ge 1
ok "... and not all ($n_ok answered)" test "$n_ok" -ge 1
has "rate limit logged" "over its query rate" "$(cat "$NETD_LOG")"
has "rate limit audited" '"reason":"rate-limit"' "$(audit_grep '"qname":"www.dt.example"')"
st=$(curl -s --unix-socket "$NETD_SOCKET" http://netd/v1/status)
has "status counts the refusals" '"rate_limited"' "$st"

ok "netd still alive" netd_alive
netd_down
world_down
t_summary
