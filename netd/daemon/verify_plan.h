/*
 * verify_plan - `netd verify`'s pure half: which probes a sandbox gets
 * (from its addresses, kind, mode and policy), how each probe's outcome
 * is judged from what was observed, and the report (JSON) built from the
 * rows.  No sockets, no clock, no logging: netd/daemon/verify.c runs the
 * probes and hands the observations here.  docs/verify.md.
 */
#ifndef NETD_VERIFY_PLAN_H
#define NETD_VERIFY_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/addr.h"
#include "netd/model/policy.h"

#define VERIFY_PROBES_MAX  40	/* probes of one sandbox, at most */
#define VERIFY_NAME_LEN    24	/* a probe's name, NUL included */
#define VERIFY_DETAIL_LEN  200	/* a row's detail, NUL included */
#define VERIFY_TOKEN_SUFFIX ".netd-verify.invalid"	/* RFC 6761 6.4: never resolves */
#define VERIFY_SPOOF_PORT  9	/* the spoof probe's destination port (discard) */
#define VERIFY_FRAME_MAX   128	/* verify_frame(): the largest frame it builds */

/* What a probe does. */
enum verify_kind {
	VK_DNS_UDP,	/* the token query over UDP to @dst:53: NXDOMAIN/REFUSED from netd */
	VK_DNS_TCP,	/* the same over TCP */
	VK_DROP,	/* a TCP connection to @dst:@dport that must not get through */
	VK_SPOOF,	/* a UDP datagram from @src (not the sandbox's): a logged spoof drop */
	VK_KERNEL,	/* a kernel-side check (fw_sandbox_check(), fw_base_check()) */
	VK_ALLOWED_DNS,	/* --allowed: @qname resolves (NOERROR, an address) */
	VK_ALLOWED_CONN,	/* --allowed: a TCP connection to its answer on @dport gets through */
	VK_FRAME_MAC,	/* a tap: a frame from another MAC (UDP @src -> @dst:@dport) is dropped as spoof */
	VK_FRAME_SPOOF,	/* a tap: a frame from the guest's MAC, forged source @src: dropped as spoof */
	VK_SKIP,	/* not run: the detail says why */
};

enum verify_verdict { VV_PASS = 0, VV_FAIL = 1, VV_SKIP = 2 };

struct verify_probe {
	char name[VERIFY_NAME_LEN];	/* "dns-deny", "unpinned6", "kernel-jump", ... */
	uint8_t kind;			/* enum verify_kind */
	uint8_t proto;			/* IPPROTO_TCP or IPPROTO_UDP */
	struct addr src;		/* VK_SPOOF, VK_FRAME_*: the frame's source; else family 0 */
	struct addr dst;
	uint16_t dport;			/* host byte order */
	uint8_t verdict;		/* enum verify_verdict, once judged */
	char detail[VERIFY_DETAIL_LEN];
};

/* What the planner is told about one sandbox. */
struct verify_facts {
	struct addr addr4, addr6, gw4, gw6;	/* family 0: none */
	bool tap;			/* a microVM's tap: no netns to enter; frames written into it */
	bool chained;			/* a chained CNI attachment */
	bool audit;			/* its mode is audit: denials pass by design */
	bool no_netns;			/* no netns path known (cannot enter it) */
	const struct policy *pol;	/* borrowed; may be NULL (policy gone) */
	struct addr other4, other6;	/* another sandbox's addresses; family 0: none */
	bool log_on;			/* the deny rules log to nflog (log_group != 0) */
	bool allowed;			/* --allowed: positive probes too */
};

/*
 * verify_plan() - the probes for a sandbox described by @f, in report
 * order, into @out (room for VERIFY_PROBES_MAX).  Probes whose family the
 * sandbox lacks are left out; ones that cannot run (a tap's socket probes,
 * an audit-mode sandbox's, a destination a CIDR rule of its policy opens on
 * purpose) are VK_SKIP with the reason in their detail.  A tap gets
 * VK_FRAME_MAC and VK_FRAME_SPOOF (per family) instead of socket probes.  Kernel checks are always
 * planned.  Pure.  Return: the number of probes.
 */
size_t verify_plan(const struct verify_facts *f, struct verify_probe *out);

/*
 * verify_allowed_target() - the name and TCP port an --allowed probe uses:
 * the first exact (non-wildcard) domain of a TCP rule of @pol, and that
 * rule's first port.  @name: borrowed from @pol.  Return: true; false (no
 * such rule: the positive probes are skipped).  Pure.
 */
bool verify_allowed_target(const struct policy *pol, const char **name, uint16_t *port);

/*
 * verify_frame() - the Ethernet frame of a VK_FRAME_* probe, as the guest
 * would write it: Ethernet II (@dst_mac, @src_mac, 6 octets each), IPv4
 * (RFC 791, TTL 64, DF, header checksum) or IPv6 (RFC 8200, hop limit 64)
 * from @src to @dst (same family), UDP (RFC 768) @sport -> @dport (host
 * byte order) with its checksum over the pseudo-header (RFC 768; RFC 8200
 * 8.1) and an 11-byte payload "netd-verify".  Checksums are right, so
 * that nothing but the rules under test drops it.  Into @buf (@sz >=
 * VERIFY_FRAME_MAX).  Pure.  Return: its length; 0 (families differ or
 * no room).
 */
size_t verify_frame(uint8_t *buf, size_t sz, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		    const struct addr *src, uint16_t sport, const struct addr *dst, uint16_t dport);

/*
 * verify_foreign_mac() - a MAC that is not @guest, for VK_FRAME_MAC:
 * 02:6e:64:76:66:79 (locally administered unicast, IEEE 802 U/L and I/G
 * bits), or the same with its last octet flipped if that is @guest's.
 * Pure.  @out: 6 octets.
 */
void verify_foreign_mac(const uint8_t guest[6], uint8_t out[6]);

/* What was observed of one probe (verify.c fills it). */
struct verify_obs {
	bool connected;		/* TCP: the connection was established */
	int sock_err;		/* TCP: connect()'s error (ECONNREFUSED, ...); 0: none / pending */
	int rcode;		/* DNS: the answer's RCODE; -1: no answer (within the wait) */
	int n_addrs;		/* --allowed DNS: addresses in the answer */
	bool seen;		/* DNS: netd's proxy decided the token query */
	bool seen_allowed;	/* ... and let it through (forwarded upstream) */
	char seen_reason[32];	/* ... its decision's reason */
	char denied[32];	/* the deny log claimed for it: its reason; "" none */
	int ct;			/* a conntrack entry for it: 1 yes, 0 no, -errno unknown */
	int send_err;		/* the probe could not be sent: -errno; 0 sent */
	uint32_t wait_ms;	/* how long it was given */
	const char *kernel;	/* VK_KERNEL: "" held, else what is missing */
};

/*
 * verify_judge() - set @p->verdict and @p->detail from @o (VK_SKIP probes
 * keep theirs).  @reject: the policy answers denials with a reject
 * (on_deny: reject), so a refused connection is its expected outcome.
 * A VK_FRAME_* probe whose send_err is -EBUSY (a VMM holds the tap) is a
 * skip, not a failure.  Pure.
 */
void verify_judge(struct verify_probe *p, const struct verify_obs *o, bool reject);

/*
 * verify_row_json() - one report row {"sandbox", "probe", "verdict"
 * ("pass" | "fail" | "skip"), "target" ("ADDR:PORT", "[ADDR6]:PORT" or ""),
 * "detail"} (new reference; NULL on ENOMEM).
 */
json_t *verify_row_json(const char *sandbox, const struct verify_probe *p);

/* verify_verdict_name() - "pass", "fail" or "skip". */
const char *verify_verdict_name(uint8_t v);

/*
 * verify_report() - the whole report: {"ok", "sandboxes", "probes",
 * "passed", "failed", "skipped", "duration_ms", "results": @rows}.  Takes
 * ownership of @rows (a JSON array of verify_row_json() objects); "ok" is
 * true only when no row failed.  Return: a new object; NULL on ENOMEM.
 */
json_t *verify_report(json_t *rows, size_t n_sandboxes, uint64_t duration_ms);

#endif
