/*
 * statefile - one sandbox's state file (STATE_DIR/sandboxes/NAME.json),
 * parsed and formatted.  Pure: text in, a struct out, and back; no daemon
 * state, no I/O, no logging; fuzzed (tests/fuzz/fuzz_state).  What the
 * values mean to the registry (a free slot, an address not taken) is the
 * restore's to check (state.c).
 *
 * The file is a JSON object:
 *   {"name", "policy", "netns", "netns_owned", "ifname", "slot",
 *    "created"?, "policy_digest"?, "ipv6"?,
 *    IPAM:    "ipv4_addr", "gateway4", "plen4", "ipv6_addr", "gateway6", "plen6"
 *    peer:    "kind": "peer", "mac", and IPAM's keys (the peer left for its
 *             owner to move: a Docker endpoint)
 *    chained: "kind": "chained", "host_ifname", "ipv4_addr", "ipv6_addr"
 *    tap:     "kind": "tap", "host_ifname", "tap_owner", "tap_group" (or null),
 *             "tap_queues", "mtu"
 *    any:     "container_id"?, "pod_namespace"?, "pod_name"?, "pod_uid"?,
 *             "bandwidth"?: {"egress"?, "ingress"?}   its own rates, bit/s
 *             "shaped"?: {"egress"?, "ingress"?}      what netd put on its interfaces
 *             "budgets"?: [{"rule", "period", "window", "used"}]}
 * (Each only where known or set; files from before them load with none.)
 * Unknown keys are ignored (a newer netd may add some).
 */
#ifndef NETD_DAEMON_STATEFILE_H
#define NETD_DAEMON_STATEFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/model/policy.h"
#include "netd/model/sandbox.h"

#define STATEFILE_MAX_LEN 65536	/* bytes: a state file is a few hundred */

enum statefile_kind {
	STATEFILE_POOL,		/* netd's veth, the pool's addresses */
	STATEFILE_IPAM,		/* netd's veth, an IPAM plugin's addresses */
	STATEFILE_CHAINED,	/* another plugin's bridge port, the container's addresses */
	STATEFILE_TAP,		/* netd's tap (a microVM's), the pool's addresses */
	STATEFILE_PEER,		/* netd's veth, its peer moved by its owner (Docker), the owner's addresses */
};

struct statefile {
	char name[SANDBOX_NAME_MAX + 1];
	char policy[SANDBOX_NAME_MAX + 1];
	char netns[PATH_MAX];
	bool netns_owned;
	char ifname[16];	/* inside the sandbox */
	uint8_t mode;		/* "mode": sandbox.mode (FW_MODE_*); absent = 0 */
	uint32_t slot;		/* < SANDBOX_MAX */
	int64_t created;	/* seconds since the epoch; 0 if absent */
	char digest[24];	/* policy digest (policyview.h); "" if absent */
	bool ipv6;		/* false: created IPv4 only (absent: true) */
	enum statefile_kind kind;
	char host_ifname[16];	/* STATEFILE_CHAINED and STATEFILE_TAP */
	uint32_t tap_owner;	/* STATEFILE_TAP: UID, < UINT32_MAX */
	uint32_t tap_group;	/* STATEFILE_TAP: GID, UINT32_MAX for none */
	uint16_t tap_queues;	/* STATEFILE_TAP: 1..256 */
	uint16_t mtu;		/* STATEFILE_TAP: 1280..65521 */
	struct addr addr4, gw4;	/* IPAM (both) and chained (addr only); family 0 = none */
	struct addr addr6, gw6;
	uint8_t plen4, plen6;	/* IPAM, peer: 1..31 and 1..127 where the address is set */
	uint8_t mac[6];		/* STATEFILE_PEER: the peer's MAC */
	struct workload workload;	/* each "" if absent */
	uint64_t bw_egress_bps, bw_ingress_bps;	/* "bandwidth": its own rates; 0 = absent */
	uint64_t shaped_egress_bps, shaped_ingress_bps;	/* "shaped"; 0 = absent */
	size_t n_budgets;	/* "budgets": its rules' counters (netd/model/rbudget.h) */
	struct statefile_budget {
		char rule[POLICY_RULE_KEY_MAX];	/* policy_rule_key() */
		uint32_t period_s;	/* 3600 or 86400 */
		int64_t window_s;	/* >= 0, a multiple of period_s */
		uint64_t used;		/* bytes */
	} budgets[POLICY_BUDGET_RULES];
};

/*
 * statefile_parse() - decode @text/@len (not NUL-terminated, at most
 * STATEFILE_MAX_LEN bytes) into @out (zeroed first).  Strings must not hold
 * NUL and must fit their fields; "name" and "policy" are valid names
 * (policy_name_valid()), "netns" an absolute path, interface names 1-15
 * bytes without '/', ':' or spaces; addresses of the family their key
 * says; the workload's fields pass workload_set().  @err/@errsz: on failure, what was wrong (no file name: the caller
 * adds it).  Return: 0; -EINVAL; -EMSGSIZE (over the limit); -ENOMEM.
 */
int statefile_parse(const char *text, size_t len, struct statefile *out, char *err,
		    size_t errsz);

/*
 * statefile_format() - @sf as the file's text (JSON, two-space indent, no
 * trailing newline), which statefile_parse() reads back as @sf.
 * Return: a new string, caller frees; NULL on out of memory.
 */
char *statefile_format(const struct statefile *sf);

#endif
