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
#include "netd/config.h"
#include "netd/fw.h"
#include "netd/policy.h"

struct event_base;
struct proxy;

struct proxy_client {
	const char *sandbox;	/* borrowed until the ops callback returns */
	const struct policy *policy;	/* borrowed, likewise */
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
	const char *reason;	/* "policy", "not-in-policy", "upstream-failure", "pin-failed", "formerr", ... */
	uint8_t rcode;		/* the rcode sent to the client */
	const struct fw_pin *pins;	/* distinct addresses pinned (ports folded) */
	size_t n_pins;
	const struct addr *answers;	/* addresses pinned, one per address */
	size_t n_answers;
	uint32_t ttl_s;		/* pin timeout in seconds (0 if none) */
	size_t n_rebind;	/* answer addresses refused as pointing inside */
};

struct proxy_ops {
	/* Which sandbox sends from @src?  Return 0 (@out filled) or -ENOENT. */
	int (*lookup)(void *ctx, const struct addr *src, struct proxy_client *out);
	/* Commit pins for @sandbox synchronously; 0 once the kernel acked, or -errno. */
	int (*pin)(void *ctx, const char *sandbox, const struct fw_pin *pins, size_t n);
	/* One audit record per decision. */
	void (*audit)(void *ctx, const struct proxy_event *ev);
};

struct proxy_config {
	uint16_t port;		/* listen on [::]:port (v4-mapped too), udp+tcp */
	const struct upstream_server *upstream;	/* borrowed for the proxy's lifetime */
	size_t n_upstream;
	uint32_t min_ttl_s, max_ttl_s;
	uint8_t deny_rcode;	/* NXDOMAIN or REFUSED */
	const struct prefix *internal;	/* borrowed for the proxy's lifetime */
	size_t n_internal;
	uint32_t upstream_timeout_ms;	/* per try; default 2000 */
};

/*
 * proxy_new() - bind the listeners and set up the c-ares channel on @base.
 * @ret: caller frees with proxy_free().  Return: 0; -errno (bind failed...).
 */
int proxy_new(struct event_base *base, const struct proxy_config *cfg,
	      const struct proxy_ops *ops, void *ctx, struct proxy **ret);

/* proxy_free() - close everything; pending queries are dropped. NULL-safe. */
void proxy_free(struct proxy *p);

#endif
