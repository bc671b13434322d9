/*
 * proxy - the DNS proxy's edge: UDP and TCP listeners on libevent in the
 * host netns (every sandbox's port 53 traffic is redirected here), upstream
 * resolution through c-ares, and the ordering invariant:
 *
 *     an answer is sent to the sandbox only after the kernel acknowledged
 *     its pins; if pinning fails the client gets SERVFAIL.
 *
 * The proxy knows sandboxes only through proxy_ops: it identifies the
 * client by source address (the ruleset drops spoofed sources before they
 * reach it) and asks the daemon for the sandbox and its policy, again when
 * the upstream answer arrives (the sandbox may be gone or its policy
 * reloaded by then).
 */
#ifndef NETD_DNSPROXY_PROXY_H
#define NETD_DNSPROXY_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "common/pin.h"
#include "dnsproxy/decide.h"	/* struct decide_policy */
#include "dnsproxy/proxy_config.h"

struct event_base;
struct proxy;

struct proxy_client {
	const char *sandbox;	/* borrowed until the ops callback returns */
	struct decide_policy policy;	/* its policy's view (netd: policy_dns_view());
					 * what it points to is borrowed, likewise */
	void *owner;		/* the caller's own handle for the sandbox, handed back
				 * in the proxy_event of this same call (opaque) */
	bool audit;		/* audit mode: a name the policy does not allow is
				 * resolved anyway, with nothing pinned for it, and
				 * its proxy_event says would_deny */
};

/* One DNS decision, for the audit log. Everything is borrowed for the call. */
struct proxy_event {
	const char *sandbox;
	const char *policy;
	const struct addr *client;
	const char *transport;	/* "udp" | "tcp" */
	const char *qname;	/* presentation form, lower-case */
	uint16_t qtype;
	bool allowed;
	const char *reason;	/* reason_dns_name() of an enum reason_dns
				 * (common/reason.h): "policy", "not-in-policy",
				 * "upstream-timeout" (also: the deadline
				 * passed), ... */
	uint8_t rcode;		/* the rcode sent to the client */
	const struct pin *pins;	/* distinct addresses pinned (ports folded) */
	size_t n_pins;
	const struct addr *answers;	/* addresses pinned, one per address */
	size_t n_answers;
	uint32_t ttl_s;		/* pin timeout in seconds (0 if none) */
	size_t n_rebind;	/* answer addresses refused as pointing inside */
	void *owner;		/* proxy_client.owner of the lookup this decision
				 * followed, in the same call: no second lookup */
	const char *would_deny;	/* audit mode: the reason enforce mode would have
				 * denied it (reason_dns_name(): "not-in-policy",
				 * "qname-too-long");
				 * NULL otherwise.  @answers are then the answer's
				 * addresses outside the never-pin table, unpinned */
	const char *detail;	/* a rule's dns: key refused it ("dns-budget",
				 * "dns-encoded"): why, as the client's Extended
				 * DNS Error text says it ("netd: refused as DNS
				 * tunnelling: a run of 57 characters looks
				 * base32-encoded"); NULL otherwise */
};

struct proxy_ops {
	/* Which sandbox sends from @src?  Return 0 (@out filled) or -ENOENT. */
	int (*lookup)(void *ctx, const struct addr *src, struct proxy_client *out);
	/*
	 * Commit pins for @sandbox synchronously; 0 once the kernel acked, or
	 * -errno.  The proxy sends no answer carrying these pins before this
	 * returns 0, and none at all if it fails (SERVFAIL instead).
	 */
	int (*pin)(void *ctx, const char *sandbox, const struct pin *pins, size_t n);
	/* One audit record per decision. */
	void (*audit)(void *ctx, const struct proxy_event *ev);
};

/* struct proxy_config: dnsproxy/proxy_config.h */

#define PROXY_PIN_HIST_US 2048	/* pin latency histogram: 1 us buckets, then overflow */

/* Counters for GET /v1/status.  Plain numbers, owned by the proxy. */
struct proxy_stats {
	uint64_t pins_sent;	/* pin batches sent to the kernel */
	uint64_t pins_skipped;	/* answers whose pins the kernel already covered */
	uint64_t pin_hist[PROXY_PIN_HIST_US + 1];	/* batch latency, us; last = more */
	uint64_t pin_max_us;
	uint64_t pin_sum_us;	/* all batches together (the histogram's _sum) */
	uint64_t limit_qps, limit_outstanding, limit_pins, limit_name;	/* refusals */
	uint64_t tunnel_suspect;	/* queries whose name the encoded-label score flags
					 * under a rule that scores it (refused or logged) */
	uint64_t encoded_refused;	/* ... refused for it (dns.encoded: refuse) */
	uint64_t budget_refused;	/* queries refused over a rule's name budget */
	uint64_t budget_full;	/* ... refused at a sandbox's BUDGET_NAMES_MAX */
	uint64_t budget_names;	/* names held in budget windows, all sandboxes */
	uint64_t ech_stripped;	/* answers handed out without their ECH configs */
	uint64_t pins_tracked;	/* live pin elements over all sandboxes */
	uint64_t cache_hits, cache_misses;	/* allowed queries answered from / not in the cache */
	uint64_t cache_entries;	/* entries held */
	uint64_t udp_gso_sends;	/* UDP GSO sends: replies to one client, one send */
	uint64_t udp_gso_replies;	/* replies that left in them */
	uint64_t udp_gso_refused;	/* GSO sends the kernel refused (replies went one by one) */
};

/*
 * proxy_stats_pin() - account one pin batch that took @us microseconds
 * (upstream answer parsed -> kernel acknowledgement).
 */
void proxy_stats_pin(struct proxy_stats *st, uint64_t us);

/*
 * proxy_stats_quantile() - the @q quantile (0 < q <= 1) of the pin
 * latency histogram in microseconds (bucket upper bound; pin_max_us for
 * the overflow bucket); 0 if empty.
 */
uint64_t proxy_stats_quantile(const struct proxy_stats *st, double q);

/* proxy_get_stats() - borrowed until the next event loop iteration. */
const struct proxy_stats *proxy_get_stats(struct proxy *p);

/*
 * proxy_sandbox_reset() - forget the pins tracked for @sandbox: call it
 * whenever its sets are (re)created or deleted, so a later answer pins
 * again instead of trusting elements that are gone.  Its name budgets
 * (dnsproxy/budget.h) start afresh too.  NULL-safe.
 */
void proxy_sandbox_reset(struct proxy *p, const char *sandbox);

/*
 * proxy_listen_add() - also answer UDP queries sent to @local's port 53 on
 * interface @ifname, on a socket bound to both (a sandbox's gateway address
 * on its host interface, which must exist; fw.h fw_sandbox_set_dns() then
 * lets them skip conntrack).  IPv6 link-local addresses are refused (they
 * would need a scope).
 * Return: the listener's id (> 0) for proxy_listen_del(); -EADDRINUSE
 * (something else holds that port there: keep the redirect); -EINVAL;
 * -errno.
 */
int proxy_listen_add(struct proxy *p, const struct addr *local, const char *ifname);

/*
 * proxy_listen_del() - close listener @id (unknown ids are ignored).
 * Queries it received that are still upstream get no answer.
 */
void proxy_listen_del(struct proxy *p, int id);

/*
 * proxy_pin_extend() - pin @pins (@n <= 64) for @sandbox outside any DNS
 * answer (the idle grace, netd/trail/grace.h), through the same tracking as an
 * answer's pins: only pins that would last longer than what is already
 * committed go to the kernel (ops->pin, synchronous), so a pin is never
 * shortened, and the sandbox's pin limit (dns.max_pins) holds.
 * Return: number of pins sent (0: all already covered); -ENOSPC (over the
 * pin limit); -E2BIG; -errno from ops->pin (nothing recorded).
 */
int proxy_pin_extend(struct proxy *p, const char *sandbox, const struct pin *pins, size_t n);

/*
 * proxy_new() - bind the listeners and set up the c-ares channel on @base.
 * @ret: caller frees with proxy_free().  Return: 0; -errno (bind failed...).
 */
int proxy_new(struct event_base *base, const struct proxy_config *cfg,
	      const struct proxy_ops *ops, void *ctx, struct proxy **ret);

/* proxy_free() - close everything; pending queries are dropped. NULL-safe. */
void proxy_free(struct proxy *p);

#endif
