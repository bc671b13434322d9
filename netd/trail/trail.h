/*
 * trail - the audit trail's kernel side, as one object the daemon owns:
 * conntrack accounting (acct.c) -> "conn"/"conn_update" records, nflog
 * (nflog.c) -> rate-limited "deny" records, each with its "domain" (the
 * name the pin registry, netd/model/pinreg.h, noted last for the address),
 * and the per-sandbox and
 * per-rule counters behind GET /metrics and `netd sandbox list`.
 * TCP connections are recorded at their close (TIME_WAIT or RST), other
 * flows at conntrack DESTROY (their idle timeout); see acct.h, flowtab.h.
 *
 * It also starts the idle grace (netd/trail/grace.h): when a connection that
 * the registry attributes to a name closes (TCP: the first closing state;
 * other protocols: DESTROY), the daemon re-pins that (address, proto,
 * port) for the grace through cfg.grace_pin, if the sandbox's current
 * policy still allows the name there.
 */
#ifndef NETD_TRAIL_H
#define NETD_TRAIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/addr.h"
#include "netd/fw.h"
#include "netd/model/pinreg.h"
#include "netd/model/policy.h"
#include "netd/model/sandbox.h"

struct event_base;
struct audit;
struct trail;
struct ct_flow;

#define TRAIL_LOG_GROUP 6413	/* default nflog group of netd's deny rules */

struct trail_config {
	uint32_t update_interval_s;	/* conn_update lines; 0 = none */
	uint16_t log_group;		/* nflog group; 0 = no deny records */
	struct prefix pool4;		/* the sandbox pool (slot -> sandbox) */
	uint32_t rcvbuf_bytes;		/* conntrack event socket buffer; 0 = default */
	uint32_t idle_grace_s;		/* dns.idle_grace, seconds; rules may override */
	bool conn_open;			/* audit.conn_open: a conn_open record per new connection */
	uint16_t gw_port;		/* the API gateway's port: a deny record of a packet
					 * redirected there names its original destination; 0: none */
	bool close_at_destroy;		/* test knob: TCP conn records at DESTROY (as before) */
	bool no_kernel;			/* the daemon in a box (netd/daemon.h): no conntrack or
					 * nflog socket, so no conn or deny records */
	/*
	 * Pin @pin (timeout = the grace) for sandbox @sandbox unless a pin at
	 * least that long is already there; synchronous.  @ctx is trail_new()'s.
	 * Return: 1 pinned; 0 already covered; -errno.  NULL = no grace ever.
	 */
	int (*grace_pin)(void *ctx, const char *sandbox, const struct pin *pin);
	/* The pin registry the records' names come from; borrowed, outlives the trail. */
	const struct pinreg *pins;
	/*
	 * @bytes more bytes (both ways, as conntrack counts them) of flow @f
	 * of @sb, opened under @domain (the name, a CIDR rule's prefix, or
	 * NULL), as they are folded into the counters: each byte once.  Called
	 * only for a sandbox with budgets (sb->budgets); @ctx is trail_new()'s.
	 * NULL = none.
	 */
	void (*budget_bytes)(void *ctx, const struct sandbox *sb, const struct ct_flow *f,
			     const char *domain, uint64_t bytes);
};

/* Policy by name; borrowed until the next reload. */
typedef const struct policy *(*trail_policy_fn)(void *ctx, const char *name);

/*
 * trail_new() - enable conntrack accounting (sysctl), subscribe to
 * conntrack and nflog on @base.  @audit, @sbs borrowed for the lifetime.
 * Return: 0; -errno (the caller decides whether that is fatal).
 */
int trail_new(struct event_base *base, const struct trail_config *cfg, struct audit *audit,
	      struct sandbox_table *sbs, trail_policy_fn policy, void *ctx, struct trail **ret);

/* trail_free() - NULL-safe; pending destroy events are read first. */
void trail_free(struct trail *t);

/*
 * trail_set_grace() - @on: start idle graces at connection closes; !@on:
 * stop.  The daemon turns it on when dns.idle_grace or any policy rule's
 * idle_grace is non-zero.  Return: 0; -EINVAL (@t NULL).
 */
int trail_set_grace(struct trail *t, bool on);

/*
 * trail_dns_decided() - count one DNS decision for @sb: @allowed, @reason
 * (the audit record's "reason"; unknown ones count as "other"), @rcode
 * (RFC 1035 4.1.1; above 5 counts as "OTHER").  Behind
 * netd_dns_queries_total{sandbox,verdict,reason,rcode}.
 */
void trail_dns_decided(struct trail *t, const struct sandbox *sb, bool allowed,
		       const char *reason, uint8_t rcode);

/*
 * A dropped packet netd sent itself (`netd verify`'s probes): @sb's
 * interface, the packet's tuple (host byte order ports) and the deny
 * reason its rule logged.  Return true to claim it: it is then neither
 * counted nor recorded as the sandbox's own.
 */
typedef bool (*trail_probe_fn)(void *ctx, const struct sandbox *sb, uint8_t proto,
			       const struct addr *src, uint16_t sport, const struct addr *dst,
			       uint16_t dport, const char *reason);

struct ipfixexp;

/*
 * trail_set_export() - from now on every conn and conn_late record is also
 * exported through @x (NULL: no more), each connection's bytes once: the
 * final record reports what interim records did not; with @interim_s,
 * connections live that long get an interim record at each conntrack dump
 * (every ACCT_FOLD_INTERVAL_S) that finds the interval passed since their
 * last.  @x borrowed until unset or trail_free().
 */
void trail_set_export(struct trail *t, struct ipfixexp *x, uint32_t interim_s);

/* trail_set_probe() - the claim of netd's own probes (NULL: none); @ctx borrowed. */
void trail_set_probe(struct trail *t, trail_probe_fn fn, void *ctx);

/*
 * trail_ct_lookup() - does conntrack hold an entry for this original
 * tuple now (acct_lookup())?  Return: 1; 0; -errno (-ENOTCONN: no
 * conntrack socket, as in the daemon in a box).
 */
int trail_ct_lookup(struct trail *t, uint8_t proto, const struct addr *src, uint16_t sport,
		    const struct addr *dst, uint16_t dport);

/* trail_sandbox_gone() - forget @sb's names, limiter and counters. */
void trail_sandbox_gone(struct trail *t, const struct sandbox *sb);

/* trail_sandbox_json() - {"conns", "bytes_out", "bytes_in", "denied"} for @sb (new ref). */
json_t *trail_sandbox_json(const struct trail *t, const struct sandbox *sb);

/* trail_stats_json() - acct/nflog counters for /v1/status (new ref). */
json_t *trail_stats_json(const struct trail *t);

/* trail_conn_stats_json() - conn_open/close/late and folding counters for
 * /v1/status "connections" (new ref). */
json_t *trail_conn_stats_json(const struct trail *t);

/*
 * trail_metrics() - write Prometheus text exposition format (0.0.4)
 * families (HELP, TYPE, samples) for the trail's counters to @out: per
 * sandbox, per sandbox and rule, DNS decisions, and the
 * conntrack/nflog/audit health counters (docs/metrics.md).
 */
void trail_metrics(const struct trail *t, FILE *out);

#endif
