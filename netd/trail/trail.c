/*
 * trail - conn/deny records and their counters.  Ordering: a pin's name is
 * recorded in the pin registry (pinreg_note(), from the proxy's audit
 * callback) before the DNS answer leaves, so every connection made with
 * that answer finds its name there when it opens and when it ends.  Counters: every byte the
 * kernel counts for a flow is folded into the sandbox's and the rule's
 * counters exactly once (flowtab.h), so they grow while flows are live
 * and agree with the records.
 */
#include "netd/trail/trail.h"

#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/reason.h"
#include "netd/trail/acct.h"
#include "netd/trail/attrib.h"
#include "netd/trail/audit.h"
#include "netd/trail/ctmsg.h"
#include "netd/trail/denyfold.h"
#include "netd/trail/flowtab.h"
#include "netd/trail/nametab.h"
#include "netd/trail/grace.h"
#include "netd/trail/ipfixexp.h"
#include "netd/common/metrics.h"
#include "netd/trail/nflog.h"
#include "netd/model/pinreg.h"

#include <event2/event.h>

#define TRAIL_DOMAIN_SLOTS   8192	/* per (sandbox, domain) counters; power of two */
#define TRAIL_DOMAIN_OTHER   "(other)"	/* where counters go once the table is full */
#define TRAIL_FLOWS          65536	/* flows tracked for folding (flowtab.h) */
#define TRAIL_DENY_TICK_MS   500	/* pending deny records are checked this often */

static const char *const dns_rcodes[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
	"NOTIMP", "REFUSED", "OTHER" };
#define N_DNS_RCODES (sizeof(dns_rcodes) / sizeof(dns_rcodes[0]))

struct totals {
	uint64_t conns, bytes_out, bytes_in;
	uint64_t denied[N_REASON_DENY];	/* packets, by reason */
};

/* A sandbox's DNS decisions, [allowed][reason][rcode]; allocated on its first. */
struct dns_ctr {
	uint64_t n[2][N_REASON_DNS][N_DNS_RCODES];
};

struct dom_ctr {
	bool used;
	uint32_t slot;
	char domain[PINREG_QNAME_MAX + 1];
	struct totals t;
};

struct trail {
	struct trail_config cfg;
	struct audit *audit;
	struct sandbox_table *sbs;
	trail_policy_fn policy;
	void *ctx;
	struct acct *acct;
	struct nflog *nflog;
	struct totals *per_slot;	/* SANDBOX_MAX */
	struct dns_ctr **dns;		/* SANDBOX_MAX, each NULL until used */
	struct flowtab *flows;		/* what each live flow has been counted as */
	struct nametab *names;		/* the names flows were opened under (flowtab_open()) */
	struct denyfold *denies;	/* deny records being folded */
	struct event *deny_tick;
	uint64_t conn_late;		/* conn_late records: packets after a close */
	struct dom_ctr *dom;		/* TRAIL_DOMAIN_SLOTS */
	size_t n_dom;
	struct attrib *attrib;	/* a deny's sandbox */
	uint64_t unattributed;	/* flows/denies whose sandbox was already gone */
	bool grace_on;		/* trail_set_grace() */
	trail_probe_fn probe;	/* trail_set_probe(): netd's own probes, claimed */
	void *probe_ctx;
	int64_t gone_slot;	/* the slot trail_sandbox_gone() drains: no grace, -1 = none */
	struct grace_seen *seen;	/* TCP closes already served */
	struct ipfixexp *exp;	/* trail_set_export(): IPFIX export of the records; NULL: none */
	uint64_t interim_ns;	/* ... and of live connections this often; 0: none */
	struct {
		uint64_t repinned;	/* grace pins sent to the kernel */
		uint64_t covered;	/* a longer pin was already there */
		uint64_t none;		/* closed with a name but no grace (policy, rule) */
		uint64_t failed;	/* the pin batch failed */
	} grace;
};

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The sandbox of slot @slot (a ct mark's, an interface's), by the slot
 * itself: one with its own addresses (an IPAM's, a chained attachment's,
 * a Docker endpoint's) has none at the slot's pool address.
 */
static struct sandbox *by_slot(const struct trail *t, int64_t slot)
{
	if (slot < 0 || slot >= SANDBOX_MAX)
		return NULL;
	return sandbox_by_slot(t->sbs, (uint32_t)slot);
}

/* "the name the address was pinned for in that sandbox; the CIDR rule if none" */
static const char *domain_of(const struct trail *t, const struct sandbox *sb,
			     const struct addr *dst, char *buf, size_t sz)
{
	const char *name = pinreg_last_name(t->cfg.pins, sb->name, dst);
	const struct policy *p;

	if (name)
		return name;
	p = t->policy(t->ctx, sb->policy);
	for (size_t i = 0; p && i < p->n_rules; i++)
		for (size_t j = 0; j < p->rules[i].n_cidrs; j++)
			if (p->rules[i].cidrs[j].addr.family == dst->family &&
			    prefix_contains(&p->rules[i].cidrs[j], dst))
				return prefix_format(&p->rules[i].cidrs[j], buf, sz);
	return NULL;
}

static struct totals *dom_ctr(struct trail *t, uint32_t slot, const char *domain)
{
	uint64_t h = fnv64_add(fnv64_add(FNV64_INIT, domain, strlen(domain)), &slot, sizeof(slot));
	for (size_t i = 0; i < TRAIL_DOMAIN_SLOTS; i++) {
		struct dom_ctr *c = &t->dom[(h + i) & (TRAIL_DOMAIN_SLOTS - 1)];

		if (c->used && c->slot == slot && strcmp(c->domain, domain) == 0)
			return &c->t;
		if (!c->used) {
			/* Keep room for every sandbox's "(other)". */
			if (t->n_dom >= TRAIL_DOMAIN_SLOTS * 3 / 4 &&
			    strcmp(domain, TRAIL_DOMAIN_OTHER) != 0)
				return dom_ctr(t, slot, TRAIL_DOMAIN_OTHER);
			if (t->n_dom >= TRAIL_DOMAIN_SLOTS - 1)
				return NULL;
			c->used = true;
			c->slot = slot;
			snprintf(c->domain, sizeof(c->domain), "%s", domain);
			t->n_dom++;
			return &c->t;
		}
	}
	return NULL;
}

/*
 * A connection of @sb closed: re-pin its (dst, proto, dport) for the
 * grace if it was opened under a name (@domain, not a CIDR rule's) and the
 * current policy still allows that name there (netd/trail/grace.h).  Only flows the kernel accepted end, so
 * only addresses a connection was really using get a grace: a deny never
 * becomes an allow here.
 */
static void grace_flow(struct trail *t, const struct sandbox *sb, const struct ct_flow *f,
		       const char *domain)
{
	char name[PINREG_QNAME_MAX + 1];	/* a copy: the re-pin changes the registry */
	const struct policy *pol;
	uint32_t g;
	struct pin pin;
	char abuf[ADDR_STRLEN];
	int r;

	if (!t->grace_on || !t->cfg.grace_pin || (int64_t)sb->slot == t->gone_slot ||
	    (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP))
		return;
	if (!domain || strchr(domain, '/'))
		return;		/* not reached through a name (by address, a CIDR rule, forgotten) */
	snprintf(name, sizeof(name), "%s", domain);
	pol = t->policy(t->ctx, sb->policy);
	g = grace_timeout_s(pol, name, &f->dst, f->proto, f->dport, t->cfg.idle_grace_s);
	if (!g) {
		t->grace.none++;
		return;
	}
	/* A steered connection's grace steers too: never a direct path (grace.h). */
	pin = (struct pin){ .addr = f->dst, .proto = f->proto, .port = f->dport,
			       .timeout_ms = g * 1000u,
			       .gateway = grace_gateway(pol, name, f->proto, f->dport) };
	r = t->cfg.grace_pin(t->ctx, sb->name, &pin);
	if (r < 0) {
		t->grace.failed++;
		log_warn("idle grace: pinning %s %s/%u for sandbox %s failed: %s",
			 addr_format(&f->dst, abuf, sizeof(abuf)),
			 f->proto == IPPROTO_TCP ? "tcp" : "udp", f->dport, sb->name, strerror(-r));
	} else if (r > 0) {
		t->grace.repinned++;
		log_debug("idle grace: %s %s/%u (%s) pinned %u s for sandbox %s",
			  addr_format(&f->dst, abuf, sizeof(abuf)),
			  f->proto == IPPROTO_TCP ? "tcp" : "udp", f->dport, name, g, sb->name);
	} else {
		t->grace.covered++;
	}
}

/* A marked TCP entry reached a closing state (acct.h): its first one starts the grace. */
static void on_closing(void *ctx, const struct ct_flow *f)
{
	struct trail *t = ctx;
	struct sandbox *sb = by_slot(t, ACCT_MARK_SLOT(f->mark));
	char cbuf[PREFIX_STRLEN];
	uint32_t name;

	if (!sb || !t->grace_on || grace_seen_has(t->seen, f->id))
		return;
	grace_seen_mark(t->seen, f->id);
	grace_flow(t, sb, f, flowtab_name(t->flows, f, &name) ?
				     nametab_str(t->names, name) :
				     domain_of(t, sb, &f->dst, cbuf, sizeof(cbuf)));
}

/*
 * Audit mode (netd/fw.h fw_mode_audit()): what enforce mode would have done
 * to a connection of @sb to @dst, as the policy stands now.  A name the
 * policy does not list: "not-in-policy"; a name it lists, or a CIDR rule's
 * address, on a port no rule gives it: "port-not-allowed"; no name and no
 * CIDR rule: "not-pinned" (the reason a "deny" record would say).
 * Return: that reason; NULL in enforce mode, or when the policy allows it.
 */
static const char *would_deny(const struct trail *t, const struct sandbox *sb,
			      const struct addr *dst, uint8_t proto, uint16_t dport,
			      const char *domain)
{
	const struct policy *p = t->policy(t->ctx, sb->policy);
	const char *name = domain && !strchr(domain, '/') ? domain : NULL;
	uint16_t idx[1];

	if (!fw_mode_audit(sb->mode, p) || policy_allows(p, name, dst, proto, dport))
		return NULL;
	if (policy_port_refused(p, name, dst, proto, dport))
		return reason_deny_name(REASON_DENY_PORT_NOT_ALLOWED);
	return name && !policy_match(p, name, idx, 1) ? reason_dns_name(REASON_DNS_NOT_IN_POLICY) :
							 reason_deny_name(REASON_DENY_NOT_PINNED);
}

/* would_deny() as @rec's "would_deny" member.  Return: true if @rec was marked. */
static bool mark_would_deny(const struct trail *t, const struct sandbox *sb,
			    const struct addr *dst, uint8_t proto, uint16_t dport,
			    const char *domain, json_t *rec)
{
	const char *why = rec ? would_deny(t, sb, dst, proto, dport, domain) : NULL;

	if (!why)
		return false;
	json_object_set_new(rec, "would_deny", json_string(why));
	return true;
}

/* What a flow's records name: its domain, and the rule that allowed it (found once, when asked). */
struct names {
	const char *domain;	/* domain_of(), or what it was opened under; NULL: none */
	const char *rule;	/* rule_of(); NULL until asked */
};

/*
 * The rule that allowed a flow of @sb whose domain is @n->domain: the
 * per-domain counters' key and the IPFIX "rule" element.
 */
static const char *rule_of(const struct trail *t, const struct sandbox *sb,
			   const struct ct_flow *f, struct names *n)
{
	if (n->rule)
		return n->rule;
	if (!n->domain)
		n->rule = "";
	else if (strchr(n->domain, '/'))
		n->rule = n->domain;	/* a CIDR rule, already a pattern */
	else
		n->rule = policy_rule_pattern(t->policy(t->ctx, sb->policy), n->domain, f->proto,
					      f->dport);
	if (!n->rule)
		n->rule = TRAIL_DOMAIN_OTHER;	/* no rule allows it any more (a reload) */
	return n->rule;
}

/* Add @c to @sb's counters and its rule's; @ended: one more connection. */
static void fold(struct trail *t, const struct sandbox *sb, const struct ct_flow *f,
		 struct names *n, const struct flow_ctr *c, bool ended)
{
	struct totals *s = &t->per_slot[sb->slot], *d;

	if (flowtab_ctr_zero(c) && !ended)
		return;
	s->conns += ended;
	s->bytes_out += c->bytes_out;
	s->bytes_in += c->bytes_in;
	d = dom_ctr(t, sb->slot, rule_of(t, sb, f, n));
	if (d) {
		d->conns += ended;
		d->bytes_out += c->bytes_out;
		d->bytes_in += c->bytes_in;
	}
	/* The same bytes against the budget of the rule that allowed the flow. */
	if (sb->budgets && t->cfg.budget_bytes && (c->bytes_out || c->bytes_in))
		t->cfg.budget_bytes(t->ctx, sb, f, n->domain, c->bytes_out + c->bytes_in);
}

/*
 * A flow's record in IPFIX (ipfixexp.h): @c, what it counted from @since_ns
 * to @end_ns (CLOCK_REALTIME), ended for @reason; @why: would_deny().
 */
static void export_flow(struct trail *t, const struct sandbox *sb, const struct ct_flow *f,
			struct names *n, const struct flow_ctr *c, uint64_t since_ns,
			uint64_t end_ns, enum ipfix_end reason, const char *why)
{
	char verdict[48];
	bool icmp = f->proto == IPPROTO_ICMP || f->proto == IPPROTO_ICMPV6;
	struct ipfix_flow x = {
		.src = f->src, .dst = f->dst, .proto = f->proto, .end_reason = (uint8_t)reason,
		/* ICMP: no ports; type * 256 + code where NetFlow collectors look for it */
		.sport = icmp ? 0 : f->sport, .dport = f->dport,
		.start_ms = since_ns / 1000000u, .end_ms = end_ns / 1000000u,
		.octets_out = c->bytes_out, .packets_out = c->packets_out,
		.octets_in = c->bytes_in, .packets_in = c->packets_in,
		.sandbox = sb->name, .policy = sb->policy, .domain = n->domain,
		.rule = rule_of(t, sb, f, n), .verdict = "allow",
	};

	if (ct_flow_sni_refused(f)) {
		x.verdict = "deny:sni-check";
	} else if (why) {
		snprintf(verdict, sizeof(verdict), "would-deny:%s", why);
		x.verdict = verdict;
	}
	ipfixexp_add(t->exp, &x);
}

/*
 * The record of a flow, in the audit log as @event and, unless @x is NULL,
 * in IPFIX: @c, the counters the record reports (NULL: @f's own); @x, the
 * part of them IPFIX has not reported yet (interim records) and since when
 * (@x_since_ns; 0: the flow's start).  An audit-mode sandbox's records of a
 * flow enforce mode would have dropped carry would_deny.
 */
static void write_conn(struct trail *t, const char *event, const struct sandbox *sb,
		       const struct ct_flow *f, struct names *n, const struct flow_ctr *c,
		       const struct flow_ctr *x, uint64_t x_since_ns, enum ipfix_end reason)
{
	struct ct_flow g = *f;
	uint64_t now = real_ns(), start, end;
	const char *why = would_deny(t, sb, &f->dst, f->proto, f->dport, n->domain);
	json_t *rec;

	if (c) {
		g.bytes_out = c->bytes_out;
		g.bytes_in = c->bytes_in;
		g.packets_out = c->packets_out;
		g.packets_in = c->packets_in;
	}
	rec = ct_conn_json(&g, sb->name, sb->policy, n->domain, now);
	if (rec && why)
		json_object_set_new(rec, "would_deny", json_string(why));
	audit_write(t->audit, event, rec);
	if (!t->exp || !x)
		return;
	ct_flow_span(&g, now, &start, &end);	/* the span the audit record says */
	export_flow(t, sb, f, n, x, x_since_ns ? x_since_ns : start, end, reason, why);
}

/*
 * A connection conntrack confirmed: its one conn_open record, if
 * audit.conn_open asks for them - and always when it is one an audit-mode
 * sandbox's enforce mode would have dropped, marked would_deny (the chain
 * accepted it without logging: this is the record of it, in place of the
 * deny record enforce mode would have written).
 */
static void write_open(struct trail *t, const struct sandbox *sb, const struct ct_flow *f,
		       const char *domain)
{
	json_t *rec = ct_open_json(f, sb->name, sb->policy, domain, f->start_ns);

	if (!mark_would_deny(t, sb, &f->dst, f->proto, f->dport, domain, rec) &&
	    !t->cfg.conn_open) {
		json_decref(rec);
		return;
	}
	audit_write(t->audit, "conn_open", rec);
}

/*
 * A connection conntrack confirmed: named now (domain_of()), remembered
 * with that name in the flow table, and its conn_open record written.
 */
static void open_flow(struct trail *t, const struct sandbox *sb, const struct ct_flow *f)
{
	char cbuf[PREFIX_STRLEN];
	const char *domain = domain_of(t, sb, &f->dst, cbuf, sizeof(cbuf));
	uint32_t name = nametab_get(t->names, domain);

	/* No room for the name: not remembered at all, so its close names it. */
	if ((!domain || name) && flowtab_open(t->flows, f, name) != 1)
		nametab_put(t->names, name);
	write_open(t, sb, f, domain);
}

/*
 * A flow event (acct.h).  Every byte is folded once (flowtab.h): live
 * dumps fold what grew, the close folds the rest and writes `conn`, and
 * the DESTROY folds what came after and writes `conn` only if the close
 * did not (UDP, ICMP, a lost update, a full table) - or `conn_late` with
 * the packets after the close if there were any.
 */
static void on_flow(void *ctx, enum acct_kind kind, const struct ct_flow *f)
{
	struct trail *t = ctx;
	struct sandbox *sb = by_slot(t, ACCT_MARK_SLOT(f->mark));
	struct flow_ctr c = { 0 }, late = { 0 }, x = { 0 }, all = flowtab_ctr(f);
	char cbuf[PREFIX_STRLEN];
	struct names n = { 0 };
	bool recorded = false, opened = false;
	uint64_t x_since = 0;
	uint32_t name = 0;
	int r = 0;

	/* What it was opened under, before the table may forget it (its end). */
	if (kind != ACCT_OPEN)
		opened = flowtab_name(t->flows, f, &name);
	/* What IPFIX reported of it in interim records: the final one reports the rest. */
	if (t->exp && (kind == ACCT_CLOSE || kind == ACCT_END)) {
		struct flow_ctr done = flowtab_exported(t->flows, f, &x_since);

		x = flowtab_ctr_sub(&all, &done);
	}
	/* The table first: it must forget a flow even if its sandbox is gone. */
	if (kind == ACCT_LIVE || kind == ACCT_UPDATE)
		r = flowtab_live(t->flows, f, &c);
	else if (kind == ACCT_CLOSE)
		r = flowtab_close(t->flows, f, &c);
	else if (kind == ACCT_END)
		recorded = flowtab_end(t->flows, f, &c, &late);
	if (!sb) {
		/* Deleted before its last connection ended: nothing to name it by. */
		if (kind == ACCT_END) {
			t->unattributed++;
			nametab_put(t->names, name);
		}
		return;
	}
	if (kind == ACCT_OPEN) {
		open_flow(t, sb, f);
		return;
	}
	/*
	 * Named as it was opened: the name that pinned its address then (a
	 * connection made by address before any name pinned it stays without
	 * one, whatever names pin the address later).  A flow whose open was
	 * not seen is named now, as best one can.
	 */
	n.domain = opened ? nametab_str(t->names, name) :
			    domain_of(t, sb, &f->dst, cbuf, sizeof(cbuf));
	switch (kind) {
	case ACCT_OPEN:
		return;
	case ACCT_LIVE:
	case ACCT_UPDATE:
		fold(t, sb, f, &n, &c, false);
		/* No interim record after the final one (a TIME_WAIT entry). */
		if (kind == ACCT_UPDATE && r != 2)
			write_conn(t, "conn_update", sb, f, &n, NULL, NULL, 0, 0);
		/* IPFIX's interim records: what grew since the last one (ipfix.interim_interval). */
		if (t->exp && r == 1 && flowtab_interim(t->flows, f, real_ns(), t->interim_ns, &x,
							&x_since))
			export_flow(t, sb, f, &n, &x, x_since, real_ns(), IPFIX_END_ACTIVE,
				    would_deny(t, sb, &f->dst, f->proto, f->dport, n.domain));
		return;
	case ACCT_CLOSE:
		if (r < 0)
			return;	/* table full: the DESTROY writes it */
		fold(t, sb, f, &n, &c, r == 1);
		if (r == 1)
			write_conn(t, "conn", sb, f, &n, NULL, &x, x_since, IPFIX_END_FLOW);
		return;
	case ACCT_END:
		fold(t, sb, f, &n, &c, !recorded);
		if (!recorded) {
			/* TCP ended long ago (its close was not seen); others timed out idle. */
			write_conn(t, "conn", sb, f, &n, NULL, &x, x_since,
				   f->proto == IPPROTO_TCP ? IPFIX_END_FLOW : IPFIX_END_IDLE);
		} else if (!flowtab_ctr_zero(&late)) {
			t->conn_late++;
			write_conn(t, "conn_late", sb, f, &n, &late, &late, 0, IPFIX_END_FLOW);
		}
		/* TCP: the grace began at its close, unless that update was lost
		 * (then it begins now, late rather than never). */
		if (t->grace_on && !(f->proto == IPPROTO_TCP && grace_seen_take(t->seen, f->id)))
			grace_flow(t, sb, f, n.domain);
		nametab_put(t->names, name);	/* the entry that held it is gone */
		return;
	}
}

/* Write one folded deny record (denyfold.h); its sandbox may be gone. */
static void write_deny(struct trail *t, const struct denyfold_rec *r)
{
	struct sandbox *sb = by_slot(t, r->slot);
	struct ct_logpkt p = r->pkt;
	char cbuf[PREFIX_STRLEN];

	if (!sb) {
		t->unattributed++;
		return;
	}
	/* A quota cut after netd's redirect to the gateway: where it went (the entry's). */
	if (t->cfg.gw_port && p.dport == t->cfg.gw_port &&
	    strcmp(r->reason, reason_deny_name(REASON_DENY_QUOTA)) == 0)
		acct_original(t->acct, p.proto, &p.dst, &p.dport, &p.src, p.sport);
	audit_write(t->audit, "deny",
		    ct_deny_json(&p, sb->name, sb->policy, domain_of(t, sb, &p.dst, cbuf, sizeof(cbuf)),
				 r->reason, r->suppressed, &r->span));
}

/* Write the pending deny records that are due (@slot >= 0: all of that slot; @all: all). */
static void deny_flush(struct trail *t, int64_t slot, bool all)
{
	struct denyfold_rec r;

	while (t->denies && denyfold_take(t->denies, clock_mono_ms(), slot, all, &r))
		write_deny(t, &r);
}

static void on_deny_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	deny_flush(arg, -1, false);
}

/*
 * A dropped packet.  Counted at once (metrics); recorded folded: a packet
 * that continues a pending attempt only raises its count, and only a new
 * attempt passes the rate limit (so "count" + "suppressed" over the
 * records add up to the packets, as before folding).
 */
static void on_deny(void *ctx, const struct ct_logpkt *p, const char *reason)
{
	struct trail *t = ctx;
	struct sandbox *sb = attrib_sandbox(t->attrib, p);
	uint64_t suppressed = 0, now = clock_mono_ms(), now_r = real_ns();
	const char *why = reason;
	struct denyfold_rec ev;

	if (!sb) {
		t->unattributed++;
		return;
	}
	/* Dropped on its way into another sandbox. */
	if (strcmp(reason, "to-sandbox") == 0)
		why = reason_deny_name(REASON_DENY_SANDBOX_TO_SANDBOX);
	/* Not in the pin set (address . protocol . port): an address pinned for a
	 * name (or in a CIDR rule) the policy gives other ports only says so. */
	if (strcmp(why, reason_deny_name(REASON_DENY_NOT_PINNED)) == 0) {
		char cbuf[PREFIX_STRLEN];
		const char *dom = domain_of(t, sb, &p->dst, cbuf, sizeof(cbuf));

		if (policy_port_refused(t->policy(t->ctx, sb->policy),
					dom && !strchr(dom, '/') ? dom : NULL, &p->dst, p->proto,
					p->dport))
			why = reason_deny_name(REASON_DENY_PORT_NOT_ALLOWED);
	}
	/* `netd verify`'s own probe: neither counted nor recorded as the sandbox's. */
	if (t->probe && t->probe(t->probe_ctx, sb, p->proto, &p->src, p->sport, &p->dst, p->dport,
				 why))
		return;
	t->per_slot[sb->slot].denied[reason_deny_of(why)]++;
	if (denyfold_join(t->denies, sb->slot, p, why, now, now_r))
		return;
	if (!nflog_admit(t->nflog, sb->slot, now, &suppressed))
		return;
	if (denyfold_add(t->denies, sb->slot, p, why, suppressed, now, now_r, &ev))
		write_deny(t, &ev);
}

void trail_set_export(struct trail *t, struct ipfixexp *x, uint32_t interim_s)
{
	if (!t)
		return;
	t->exp = x;
	t->interim_ns = (uint64_t)interim_s * 1000000000u;
}

void trail_set_probe(struct trail *t, trail_probe_fn fn, void *ctx)
{
	if (!t)
		return;
	t->probe = fn;
	t->probe_ctx = ctx;
}

int trail_ct_lookup(struct trail *t, uint8_t proto, const struct addr *src, uint16_t sport,
		    const struct addr *dst, uint16_t dport)
{
	struct ct_flow f = { .src = *src, .dst = *dst, .proto = proto, .sport = sport,
			     .dport = dport };

	if (!t || !t->acct)
		return -ENOTCONN;
	return acct_lookup(t->acct, &f);
}

static void on_suppressed(void *ctx, uint32_t slot, uint64_t n)
{
	struct trail *t = ctx;
	struct sandbox *sb = by_slot(t, slot);

	if (!sb)
		return;
	audit_write(t->audit, "deny_suppressed",
		    json_pack("{s:s, s:s, s:I}", "sandbox", sb->name, "policy", sb->policy,
			      "suppressed", (json_int_t)n));
}

static const struct acct_ops trail_acct_ops = { .flow = on_flow, .closing = on_closing };
static const struct nflog_ops trail_nflog_ops = { .packet = on_deny,
						  .suppressed = on_suppressed };

int trail_new(struct event_base *base, const struct trail_config *cfg, struct audit *audit,
	      struct sandbox_table *sbs, trail_policy_fn policy, void *ctx, struct trail **ret)
{
	struct trail *t = calloc(1, sizeof(*t));
	struct acct_config ac = { .update_interval_s = cfg->update_interval_s,
				  .rcvbuf_bytes = cfg->rcvbuf_bytes,
				  .no_close = cfg->close_at_destroy };
	int r;

	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	t->gone_slot = -1;
	t->audit = audit;
	t->sbs = sbs;
	t->policy = policy;
	t->ctx = ctx;
	t->per_slot = calloc(SANDBOX_MAX, sizeof(*t->per_slot));
	t->dom = calloc(TRAIL_DOMAIN_SLOTS, sizeof(*t->dom));
	r = -ENOMEM;
	t->seen = calloc(1, sizeof(*t->seen));
	t->dns = calloc(SANDBOX_MAX, sizeof(*t->dns));
	if (!t->per_slot || !t->dom || !t->seen || !t->dns ||
	    flowtab_new(TRAIL_FLOWS, &t->flows) < 0 || nametab_new(TRAIL_FLOWS, &t->names) < 0 ||
	    denyfold_new(&t->denies) < 0 || attrib_new(sbs, &t->attrib) < 0)
		goto fail;
	{
		struct timeval tv = { .tv_usec = TRAIL_DENY_TICK_MS * 1000 };

		t->deny_tick = event_new(base, -1, EV_PERSIST, on_deny_tick, t);
		if (!t->deny_tick || event_add(t->deny_tick, &tv) < 0)
			goto fail;
	}
	if (cfg->no_kernel) {	/* a box: the records' other half stays, unfed */
		*ret = t;
		return 0;
	}
	/* Counters exist only for entries created after this. */
	r = acct_sysctl_enable();
	if (r < 0) {
		log_err("conntrack: cannot enable accounting (nf_conntrack_acct): %s", strerror(-r));
		goto fail;
	}
	r = acct_new(base, &ac, &trail_acct_ops, t, &t->acct);
	if (r < 0) {
		log_err("conntrack: cannot subscribe to events: %s", strerror(-r));
		goto fail;
	}
	if (cfg->log_group) {
		struct nflog_config nc = { .group = cfg->log_group };

		r = nflog_new(base, &nc, &trail_nflog_ops, t, &t->nflog);
		if (r < 0) {
			log_err("nflog group %u: %s", cfg->log_group,
				r == -EBUSY ? "another listener has it" : strerror(-r));
			goto fail;
		}
	}
	*ret = t;
	return 0;
fail:
	trail_free(t);
	return r;
}

void trail_free(struct trail *t)
{
	if (!t)
		return;
	acct_free(t->acct);
	deny_flush(t, -1, true);	/* pending attempts are written, not lost */
	nflog_free(t->nflog);
	if (t->deny_tick)
		event_free(t->deny_tick);
	denyfold_free(t->denies);
	attrib_free(t->attrib);
	flowtab_free(t->flows);
	nametab_free(t->names);
	for (size_t i = 0; t->dns && i < SANDBOX_MAX; i++)
		free(t->dns[i]);
	free(t->dns);
	free(t->per_slot);
	free(t->dom);
	free(t->seen);
	free(t);
}

int trail_set_grace(struct trail *t, bool on)
{
	if (!t)
		return -EINVAL;
	/* Closing states are always watched now (conn records at the close). */
	t->grace_on = on;
	return 0;
}

void trail_dns_decided(struct trail *t, const struct sandbox *sb, bool allowed,
		       const char *reason, uint8_t rcode)
{
	struct dns_ctr **c;

	if (!t || !sb || sb->slot >= SANDBOX_MAX)
		return;
	c = &t->dns[sb->slot];
	if (!*c && !(*c = calloc(1, sizeof(**c))))
		return;	/* out of memory: this query goes uncounted */
	(*c)->n[allowed][reason_dns_of(reason)][rcode < N_DNS_RCODES - 1 ? rcode :
						   N_DNS_RCODES - 1]++;
}

void trail_sandbox_gone(struct trail *t, const struct sandbox *sb)
{
	if (!t || !sb || sb->slot >= SANDBOX_MAX)
		return;
	/* Its connections still end later: read what the kernel has now
	 * (records only: its pins are gone, so no grace). */
	t->gone_slot = sb->slot;
	if (t->acct)
		acct_poll(t->acct);
	t->gone_slot = -1;
	deny_flush(t, sb->slot, false);	/* while it still has a name */
	free(t->dns[sb->slot]);
	t->dns[sb->slot] = NULL;
	nflog_forget(t->nflog, sb->slot);
	memset(&t->per_slot[sb->slot], 0, sizeof(t->per_slot[sb->slot]));
	for (size_t i = 0; i < TRAIL_DOMAIN_SLOTS; i++)
		if (t->dom[i].used && t->dom[i].slot == sb->slot) {
			/* Tombstone-free: linear probing stays valid with a zeroed, used entry. */
			memset(&t->dom[i].t, 0, sizeof(t->dom[i].t));
			t->dom[i].slot = UINT32_MAX;
		}
	attrib_forget(t->attrib);
}

json_t *trail_sandbox_json(const struct trail *t, const struct sandbox *sb)
{
	const struct totals *s;

	if (!t || sb->slot >= SANDBOX_MAX)
		return json_object();
	s = &t->per_slot[sb->slot];
	{
		uint64_t denied = 0;

		for (size_t i = 0; i < N_REASON_DENY; i++)
			denied += s->denied[i];
		return json_pack("{s:I, s:I, s:I, s:I}", "conns", (json_int_t)s->conns,
				 "bytes_out", (json_int_t)s->bytes_out, "bytes_in",
				 (json_int_t)s->bytes_in, "denied", (json_int_t)denied);
	}
}

json_t *trail_stats_json(const struct trail *t)
{
	struct acct_stats a;
	struct nflog_stats n;

	acct_get_stats(t ? t->acct : NULL, &a);
	nflog_get_stats(t ? t->nflog : NULL, &n);
	return json_pack("{s:{s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, "
			 "s:{s:b, s:I, s:I, s:I, s:I, s:I, s:I}}", "conntrack",
			 "ended", (json_int_t)a.ended, "updates", (json_int_t)a.updates,
			 "enobufs", (json_int_t)a.enobufs, "resyncs", (json_int_t)a.resyncs,
			 "bad", (json_int_t)a.bad, "nflog", "packets", (json_int_t)n.packets,
			 "suppressed", (json_int_t)n.suppressed, "enobufs",
			 (json_int_t)n.enobufs, "unattributed",
			 (json_int_t)(t ? t->unattributed : 0), "idle_grace",
			 "on", t && t->grace_on,
			 "repinned", (json_int_t)(t ? t->grace.repinned : 0),
			 "covered", (json_int_t)(t ? t->grace.covered : 0),
			 "no_grace", (json_int_t)(t ? t->grace.none : 0),
			 "failed", (json_int_t)(t ? t->grace.failed : 0),
			 "closing_events", (json_int_t)a.closing,
			 "closing_lost", (json_int_t)a.closing_lost);
}

json_t *trail_conn_stats_json(const struct trail *t)
{
	struct acct_stats a;

	acct_get_stats(t ? t->acct : NULL, &a);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "opened", (json_int_t)a.opened,
			 "closed", (json_int_t)a.closed, "close_gone", (json_int_t)a.close_gone,
			 "conn_late", (json_int_t)(t ? t->conn_late : 0), "flows_tracked",
			 (json_int_t)(t ? flowtab_count(t->flows) : 0), "deny_pending",
			 (json_int_t)(t ? denyfold_pending(t->denies) : 0));
}

/* One per-sandbox counter family: @field of struct totals. */
/* The rows of one per-sandbox family for @sb; @arg: what the family was given. */
typedef void sandbox_rows_fn(const struct trail *t, FILE *out, const char *name,
			     const struct sandbox *sb, size_t arg);

/* One counter family with rows for every sandbox, in the registry's order. */
static void sandbox_family(const struct trail *t, FILE *out, const char *name, const char *help,
			   sandbox_rows_fn *rows, size_t arg)
{
	uint32_t cur = 0;
	struct sandbox *sb;

	metrics_family(out, name, "counter", help);
	while ((sb = sandbox_next(t->sbs, &cur)))
		rows(t, out, name, sb, arg);
}

/* @field (an offset) of the sandbox's struct totals. */
static void totals_rows(const struct trail *t, FILE *out, const char *name,
			const struct sandbox *sb, size_t field)
{
	const char *l[] = { "sandbox", sb->name, NULL };
	uint64_t v;

	memcpy(&v, (const char *)&t->per_slot[sb->slot] + field, sizeof(v));
	metrics_u64(out, name, l, v);
}

/* Dropped packets, by reason (all of them, seen or not). */
static void denied_rows(const struct trail *t, FILE *out, const char *name,
			const struct sandbox *sb, size_t arg)
{
	(void)arg;
	for (size_t i = 0; i < N_REASON_DENY; i++) {
		const char *l[] = { "sandbox", sb->name, "reason", reason_deny_name(i), NULL };

		metrics_u64(out, name, l, t->per_slot[sb->slot].denied[i]);
	}
}

/* DNS decisions, by verdict, reason and rcode (only the combinations seen). */
static void dns_rows(const struct trail *t, FILE *out, const char *name,
		     const struct sandbox *sb, size_t arg)
{
	const struct dns_ctr *c = t->dns[sb->slot];

	(void)arg;
	for (int v = 0; c && v < 2; v++)
		for (size_t r = 0; r < N_REASON_DNS; r++)
			for (size_t k = 0; k < N_DNS_RCODES; k++) {
				const char *l[] = { "sandbox", sb->name, "verdict",
						    v ? "allow" : "deny", "reason",
						    reason_dns_name(r), "rcode", dns_rcodes[k],
						    NULL };

				if (c->n[v][r][k])
					metrics_u64(out, name, l, c->n[v][r][k]);
			}
}

static void domain_family(const struct trail *t, FILE *out, const char *name, const char *help,
			  size_t field)
{
	metrics_family(out, name, "counter", help);
	for (size_t i = 0; i < TRAIL_DOMAIN_SLOTS; i++) {
		const struct dom_ctr *c = &t->dom[i];
		struct sandbox *sb = c->used ? by_slot(t, c->slot) : NULL;
		const char *l[] = { "sandbox", sb ? sb->name : "", "domain", c->domain, NULL };
		uint64_t v;

		if (!sb)
			continue;
		memcpy(&v, (const char *)&c->t + field, sizeof(v));
		metrics_u64(out, name, l, v);
	}
}

static void counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	metrics_family(out, name, "counter", help);
	metrics_u64(out, name, NULL, v);
}

static void gauge(FILE *out, const char *name, const char *help, uint64_t v)
{
	metrics_family(out, name, "gauge", help);
	metrics_u64(out, name, NULL, v);
}

/* The counters of struct totals, each as a per-sandbox and a per-rule family. */
static const struct {
	size_t field;
	const char *sb_name, *sb_help, *dom_name, *dom_help;
} totals_families[] = {
	{ offsetof(struct totals, conns), "netd_sandbox_conns_total",
	  "Connections of the sandbox that ended (one conn record each).",
	  "netd_domain_conns_total",
	  "Connections that ended, by sandbox and the policy rule (domain pattern or CIDR) that allowed them." },
	{ offsetof(struct totals, bytes_out), "netd_sandbox_bytes_out_total",
	  "Bytes the sandbox sent (IP packets, headers included), live connections included.",
	  "netd_domain_bytes_out_total",
	  "Bytes sent, by sandbox and the policy rule (domain pattern or CIDR) that allowed them." },
	{ offsetof(struct totals, bytes_in), "netd_sandbox_bytes_in_total",
	  "Bytes the sandbox received (IP packets, headers included), live connections included.",
	  "netd_domain_bytes_in_total",
	  "Bytes received, by sandbox and the policy rule (domain pattern or CIDR) that allowed them." },
};

void trail_metrics(const struct trail *t, FILE *out)
{
	struct acct_stats a;
	struct nflog_stats n;

	if (!t)
		return;
	for (size_t i = 0; i < sizeof(totals_families) / sizeof(totals_families[0]); i++)
		sandbox_family(t, out, totals_families[i].sb_name, totals_families[i].sb_help,
			       totals_rows, totals_families[i].field);
	sandbox_family(t, out, "netd_sandbox_denied_total",
		       "Packets of the sandbox that netd's rules dropped, by reason.", denied_rows, 0);
	for (size_t i = 0; i < sizeof(totals_families) / sizeof(totals_families[0]); i++)
		domain_family(t, out, totals_families[i].dom_name, totals_families[i].dom_help,
			      totals_families[i].field);
	sandbox_family(t, out, "netd_dns_queries_total",
		       "DNS queries of the sandbox decided by the proxy, by verdict, reason and rcode.",
		       dns_rows, 0);
	acct_get_stats(t->acct, &a);
	nflog_get_stats(t->nflog, &n);
	counter(out, "netd_conntrack_enobufs_total",
		"Conntrack DESTROY event socket overruns (each followed by a resync).", a.enobufs);
	counter(out, "netd_conntrack_resyncs_total", "Conntrack resync dumps done.", a.resyncs);
	counter(out, "netd_conntrack_closing_lost_total",
		"Overruns of the best-effort NEW/UPDATE event socket (those records come at DESTROY).",
		a.closing_lost);
	counter(out, "netd_conn_late_total",
		"conn_late records: packets counted after a connection's conn record.", t->conn_late);
	gauge(out, "netd_conntrack_flows_tracked", "Live flows whose counters are being folded.",
	      flowtab_count(t->flows));
	counter(out, "netd_idle_grace_repins_total", "Idle-grace pins sent to the kernel.",
		t->grace.repinned);
	counter(out, "netd_deny_suppressed_total",
		"Dropped packets left out of the audit log by the deny record rate limit.",
		n.suppressed);
	counter(out, "netd_nflog_enobufs_total",
		"nflog socket overruns (dropped packets not seen by netd).", n.enobufs);
	counter(out, "netd_audit_written_total", "Audit records written.", audit_written(t->audit));
	counter(out, "netd_audit_dropped_total", "Audit records that could not be written.",
		audit_dropped(t->audit));
}
