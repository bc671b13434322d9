/*
 * trail - conn/deny records and their counters.  Ordering: a pin's name is
 * recorded (trail_pinned(), from the proxy's audit callback) before the
 * DNS answer leaves, so every connection made with that answer finds its
 * name here when it ends.
 */
#include "netd/trail.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>

#include "common/clock.h"
#include "common/log.h"
#include "netd/acct.h"
#include "netd/audit.h"
#include "netd/ctmsg.h"
#include "netd/grace.h"
#include "netd/nflog.h"
#include "netd/pinmap.h"

#define TRAIL_PINMAP_ENTRIES 16384
#define TRAIL_DOMAIN_SLOTS   8192	/* per (sandbox, domain) counters; power of two */
#define TRAIL_DOMAIN_OTHER   "(other)"	/* where counters go once the table is full */
#define TRAIL_IFCACHE        1024

struct totals {
	uint64_t conns, bytes_out, bytes_in, denied;
};

struct dom_ctr {
	bool used;
	uint32_t slot;
	char domain[PINMAP_NAME_MAX + 1];
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
	struct pinmap *pins;
	struct totals *per_slot;	/* SANDBOX_MAX */
	struct dom_ctr *dom;		/* TRAIL_DOMAIN_SLOTS */
	size_t n_dom;
	struct { uint32_t ifindex; int32_t slot; } ifcache[TRAIL_IFCACHE];
	uint64_t unattributed;	/* flows/denies whose sandbox was already gone */
	bool grace_on;		/* trail_set_grace() */
	int64_t gone_slot;	/* the slot trail_sandbox_gone() drains: no grace, -1 = none */
	struct grace_seen *seen;	/* TCP closes already served */
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

/* The sandbox in @slot, by its pool address (sandbox.h: .2 of the slot's /30). */
static struct sandbox *by_slot(const struct trail *t, int64_t slot)
{
	struct addr a = t->cfg.pool4.addr;
	struct sandbox *sb;

	if (slot < 0 || slot >= SANDBOX_MAX || a.family != AF_INET)
		return NULL;
	{
		uint32_t v = (uint32_t)a.a[0] << 24 | (uint32_t)a.a[1] << 16 |
			     (uint32_t)a.a[2] << 8 | a.a[3];

		v += (uint32_t)slot * 4 + 2;
		a.a[0] = (uint8_t)(v >> 24);
		a.a[1] = (uint8_t)(v >> 16);
		a.a[2] = (uint8_t)(v >> 8);
		a.a[3] = (uint8_t)v;
	}
	sb = sandbox_by_addr(t->sbs, &a);
	return sb && sb->slot == (uint32_t)slot ? sb : NULL;
}

/* "the name the address was pinned for in that sandbox; the CIDR rule if none" */
static const char *domain_of(const struct trail *t, const struct sandbox *sb,
			     const struct addr *dst, char *buf, size_t sz)
{
	const char *name = pinmap_get(t->pins, sb->slot, dst);
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
	uint64_t h = 1469598103934665603ull;

	for (const char *p = domain; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	h = (h ^ slot) * 1099511628211ull;
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
 * grace if pinmap has a name for dst and the current policy still allows
 * that name there (netd/grace.h).  Only flows the kernel accepted end, so
 * only addresses a connection was really using get a grace: a deny never
 * becomes an allow here.
 */
static void grace_flow(struct trail *t, const struct sandbox *sb, const struct ct_flow *f)
{
	const char *name;
	uint32_t g;
	struct fw_pin pin;
	char abuf[ADDR_STRLEN];
	int r;

	if (!t->grace_on || !t->cfg.grace_pin || (int64_t)sb->slot == t->gone_slot ||
	    (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP))
		return;
	name = pinmap_get(t->pins, sb->slot, &f->dst);
	if (!name)
		return;		/* not reached through a name (CIDR rule, or forgotten) */
	g = grace_timeout_s(t->policy(t->ctx, sb->policy), name, &f->dst, f->proto, f->dport,
			    t->cfg.idle_grace_s);
	if (!g) {
		t->grace.none++;
		return;
	}
	pin = (struct fw_pin){ .addr = f->dst, .proto = f->proto, .port = f->dport,
			       .timeout_ms = g * 1000u };
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

	if (!sb || !t->grace_on || grace_seen_has(t->seen, f->id))
		return;
	grace_seen_mark(t->seen, f->id);
	grace_flow(t, sb, f);
}

/*
 * Audit mode (netd/fw.h fw_mode_audit()): mark @rec with what enforce mode
 * would have done to the connection, as the policy stands now.  A name the
 * policy does not list: "not-in-policy"; no name and no CIDR rule, or a
 * port no rule gives: "not-pinned" (the reason a "deny" record would say).
 */
static void mark_would_deny(const struct trail *t, const struct sandbox *sb,
			    const struct addr *dst, uint8_t proto, uint16_t dport,
			    const char *domain, bool always, json_t *rec)
{
	const struct policy *p = t->policy(t->ctx, sb->policy);
	const char *name = domain && !strchr(domain, '/') ? domain : NULL;
	uint16_t idx[1];

	if (!rec || (!always && (!fw_mode_audit(sb->mode, p) ||
				 policy_allows(p, name, dst, proto, dport))))
		return;
	json_object_set_new(rec, "would_deny", json_string(
		name && !policy_match(p, name, idx, 1) ? "not-in-policy" : "not-pinned"));
}

static void on_flow(void *ctx, enum acct_kind kind, const struct ct_flow *f)
{
	struct trail *t = ctx;
	struct sandbox *sb = by_slot(t, ACCT_MARK_SLOT(f->mark));
	char cbuf[PREFIX_STRLEN];
	const char *domain;

	if (!sb) {
		/* Deleted before its last connection ended: nothing to name it by. */
		t->unattributed++;
		return;
	}
	domain = domain_of(t, sb, &f->dst, cbuf, sizeof(cbuf));
	if (kind == ACCT_END) {
		struct totals *s = &t->per_slot[sb->slot], *d;

		s->conns++;
		s->bytes_out += f->bytes_out;
		s->bytes_in += f->bytes_in;
		d = dom_ctr(t, sb->slot, domain ? domain : "");
		if (d) {
			d->conns++;
			d->bytes_out += f->bytes_out;
			d->bytes_in += f->bytes_in;
		}
	}
	{
		json_t *rec = ct_conn_json(f, sb->name, sb->policy, domain, real_ns());

		mark_would_deny(t, sb, &f->dst, f->proto, f->dport, domain, false, rec);
		audit_write(t->audit, kind == ACCT_END ? "conn" : "conn_update", rec);
	}
	/* TCP: the grace began at its close, unless that update was lost
	 * (then it begins now, late rather than never). */
	if (kind == ACCT_END && t->grace_on &&
	    !(f->proto == IPPROTO_TCP && grace_seen_take(t->seen, f->id)))
		grace_flow(t, sb, f);
}

static int32_t slot_of_ifindex(struct trail *t, uint32_t ifindex)
{
	size_t i = ifindex % TRAIL_IFCACHE;
	char name[IF_NAMESIZE];
	unsigned int slot;
	char extra;

	if (!ifindex)
		return -1;
	if (t->ifcache[i].ifindex == ifindex)
		return t->ifcache[i].slot;
	if (!if_indextoname(ifindex, name))
		return -1;
	/* netd's host-side veths are "nd%05x" of the slot (sandbox.c). */
	if (strncmp(name, SANDBOX_IFNAME_PREFIX, strlen(SANDBOX_IFNAME_PREFIX)) != 0 ||
	    sscanf(name + strlen(SANDBOX_IFNAME_PREFIX), "%x%c", &slot, &extra) != 1 ||
	    slot >= SANDBOX_MAX)
		return -1;
	t->ifcache[i].ifindex = ifindex;
	t->ifcache[i].slot = (int32_t)slot;
	return (int32_t)slot;
}

static void on_deny(void *ctx, const struct ct_logpkt *p, const char *reason)
{
	struct trail *t = ctx;
	int32_t in = slot_of_ifindex(t, p->indev);
	struct sandbox *sb = by_slot(t, in);
	char cbuf[PREFIX_STRLEN];
	uint64_t suppressed = 0;
	const char *why = reason;

	if (!sb) {
		t->unattributed++;
		return;
	}
	/* Dropped on its way into another sandbox. */
	if (strcmp(reason, "to-sandbox") == 0)
		why = "sandbox-to-sandbox";
	/* Audit mode let it through (fw's "audit" log rule): not a denial. */
	if (strcmp(reason, "audit") == 0) {
		const char *dom = domain_of(t, sb, &p->dst, cbuf, sizeof(cbuf));
		json_t *rec;

		if (!nflog_admit(t->nflog, sb->slot, clock_mono_ms(), &suppressed))
			return;
		rec = ct_deny_json(p, sb->name, sb->policy, dom, "audit-mode", suppressed);
		if (rec)
			json_object_set_new(rec, "verdict", json_string("allow"));
		mark_would_deny(t, sb, &p->dst, p->proto, p->dport, dom, true, rec);
		audit_write(t->audit, "conn_open", rec);
		return;
	}
	t->per_slot[sb->slot].denied++;
	if (!nflog_admit(t->nflog, sb->slot, clock_mono_ms(), &suppressed))
		return;
	audit_write(t->audit, "deny",
		    ct_deny_json(p, sb->name, sb->policy,
				 domain_of(t, sb, &p->dst, cbuf, sizeof(cbuf)), why, suppressed));
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
				  .rcvbuf_bytes = cfg->rcvbuf_bytes };
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
	if (!t->per_slot || !t->dom || !t->seen || pinmap_new(TRAIL_PINMAP_ENTRIES, &t->pins) < 0)
		goto fail;
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
	nflog_free(t->nflog);
	pinmap_free(t->pins);
	free(t->per_slot);
	free(t->dom);
	free(t->seen);
	free(t);
}

void trail_pinned(struct trail *t, const struct sandbox *sb, const char *qname,
		  const struct addr *addrs, size_t n)
{
	if (!t || !sb || !qname)
		return;
	for (size_t i = 0; i < n; i++)
		pinmap_set(t->pins, sb->slot, &addrs[i], qname);
}

int trail_set_grace(struct trail *t, bool on)
{
	int r;

	if (!t)
		return -EINVAL;
	if (on == t->grace_on)
		return 0;
	r = acct_watch_closing(t->acct, on);
	if (r < 0)
		return r;
	t->grace_on = on;
	return 0;
}

void trail_sandbox_gone(struct trail *t, const struct sandbox *sb)
{
	if (!t || !sb || sb->slot >= SANDBOX_MAX)
		return;
	/* Its connections still end later: read what the kernel has now
	 * (records only: its sets are gone, so no grace). */
	t->gone_slot = sb->slot;
	if (t->acct)
		acct_poll(t->acct);
	t->gone_slot = -1;
	pinmap_forget(t->pins, sb->slot);
	nflog_forget(t->nflog, sb->slot);
	memset(&t->per_slot[sb->slot], 0, sizeof(t->per_slot[sb->slot]));
	for (size_t i = 0; i < TRAIL_DOMAIN_SLOTS; i++)
		if (t->dom[i].used && t->dom[i].slot == sb->slot) {
			/* Tombstone-free: linear probing stays valid with a zeroed, used entry. */
			memset(&t->dom[i].t, 0, sizeof(t->dom[i].t));
			t->dom[i].slot = UINT32_MAX;
		}
	memset(t->ifcache, 0, sizeof(t->ifcache));
}

json_t *trail_sandbox_json(const struct trail *t, const struct sandbox *sb)
{
	const struct totals *s;

	if (!t || sb->slot >= SANDBOX_MAX)
		return json_object();
	s = &t->per_slot[sb->slot];
	return json_pack("{s:I, s:I, s:I, s:I}", "conns", (json_int_t)s->conns, "bytes_out",
			 (json_int_t)s->bytes_out, "bytes_in", (json_int_t)s->bytes_in, "denied",
			 (json_int_t)s->denied);
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

/* A label value: backslash, double quote and newline escaped (exposition format). */
static void label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

void trail_metrics(const struct trail *t, FILE *out)
{
	static const char *const names[] = { "conns", "bytes_out", "bytes_in", "denied" };
	struct acct_stats a;
	struct nflog_stats n;
	uint32_t cur;
	struct sandbox *sb;

	if (!t)
		return;
	for (int k = 0; k < 4; k++) {
		fprintf(out, "# TYPE netd_sandbox_%s_total counter\n", names[k]);
		cur = 0;
		while ((sb = sandbox_next(t->sbs, &cur))) {
			const struct totals *s = &t->per_slot[sb->slot];
			uint64_t v = k == 0 ? s->conns : k == 1 ? s->bytes_out :
				     k == 2 ? s->bytes_in : s->denied;

			fprintf(out, "netd_sandbox_%s_total{sandbox=\"", names[k]);
			label(out, sb->name);
			fprintf(out, "\"} %llu\n", (unsigned long long)v);
		}
	}
	for (int k = 0; k < 3; k++) {
		fprintf(out, "# TYPE netd_domain_%s_total counter\n", names[k]);
		for (size_t i = 0; i < TRAIL_DOMAIN_SLOTS; i++) {
			const struct dom_ctr *c = &t->dom[i];
			uint64_t v = k == 0 ? c->t.conns : k == 1 ? c->t.bytes_out : c->t.bytes_in;

			sb = c->used ? by_slot(t, c->slot) : NULL;
			if (!sb)
				continue;
			fprintf(out, "netd_domain_%s_total{sandbox=\"", names[k]);
			label(out, sb->name);
			fputs("\",domain=\"", out);
			label(out, c->domain);
			fprintf(out, "\"} %llu\n", (unsigned long long)v);
		}
	}
	acct_get_stats(t->acct, &a);
	nflog_get_stats(t->nflog, &n);
	fprintf(out, "# TYPE netd_conntrack_enobufs_total counter\nnetd_conntrack_enobufs_total %llu\n",
		(unsigned long long)a.enobufs);
	fprintf(out, "# TYPE netd_conntrack_resyncs_total counter\nnetd_conntrack_resyncs_total %llu\n",
		(unsigned long long)a.resyncs);
	fprintf(out, "# TYPE netd_idle_grace_repins_total counter\nnetd_idle_grace_repins_total %llu\n",
		(unsigned long long)t->grace.repinned);
	fprintf(out, "# TYPE netd_conntrack_closing_lost_total counter\n"
		"netd_conntrack_closing_lost_total %llu\n", (unsigned long long)a.closing_lost);
	fprintf(out, "# TYPE netd_deny_suppressed_total counter\nnetd_deny_suppressed_total %llu\n",
		(unsigned long long)n.suppressed);
	fprintf(out, "# TYPE netd_nflog_enobufs_total counter\nnetd_nflog_enobufs_total %llu\n",
		(unsigned long long)n.enobufs);
	fprintf(out, "# TYPE netd_audit_written_total counter\nnetd_audit_written_total %llu\n",
		(unsigned long long)audit_written(t->audit));
	fprintf(out, "# TYPE netd_audit_dropped_total counter\nnetd_audit_dropped_total %llu\n",
		(unsigned long long)audit_dropped(t->audit));
}
