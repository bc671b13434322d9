/*
 * bwglue - a sandbox's bandwidth limits, the daemon's side: which rates it
 * should have (its own from create, else its policy's limits.bandwidth),
 * put on its interfaces through the link seam (netd/link/shape.h) at
 * create, after a reload, at a restore; taken off at delete; and shown in
 * the API and the metrics with the kernel's counters and rate estimates.
 * What is on its interfaces is kept in the sandbox (shaped_*, and its
 * state file), so nothing is sent for a sandbox whose rates did not
 * change, and a sandbox that never had a limit costs no message at all.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "netd/common/metrics.h"
#include "netd/link/kernel.h"

void daemon_bw_want(const struct daemon *d, const struct sandbox *sb, uint64_t *eg,
		    uint64_t *in)
{
	const struct policy *pol = daemon_policy_find(d, sb->policy);

	policy_bw_want(pol, sb->bw_egress_bps, sb->bw_ingress_bps, eg, in);
}

static void ifb_of(const struct sandbox *sb, char *buf, size_t sz)
{
	if (shape_ifb_name(sb->slot, buf, sz) < 0)
		buf[0] = '\0';
}

int daemon_bw_apply(struct daemon *d, struct sandbox *sb, bool force, char *err, size_t errsz)
{
	struct shape_req req;
	uint64_t eg, in;
	char ifb[16];
	int r;

	daemon_bw_want(d, sb, &eg, &in);
	if (eg == sb->shaped_egress_bps && in == sb->shaped_ingress_bps && (!force || (!eg && !in)))
		return 0;
	ifb_of(sb, ifb, sizeof(ifb));
	req = (struct shape_req){ .ifname = sb->host_ifname, .ifb = ifb, .ingress_bps = in,
				  .egress_bps = eg };
	r = d->lk->ops->shape_set(d->lk, &req);
	if (r < 0) {
		snprintf(err, errsz, "cannot shape %s (egress %llu, ingress %llu bit/s): %s",
			 sb->host_ifname, (unsigned long long)eg, (unsigned long long)in,
			 strerror(-r));
		/* An IFB this call made is no one's otherwise (the restart's sweep would find it). */
		if (eg && !sb->shaped_egress_bps)
			d->lk->ops->del(d->lk, ifb);
		return r;
	}
	sb->shaped_egress_bps = eg;
	sb->shaped_ingress_bps = in;
	sb->shape_ifindex = req.ifindex;
	sb->shape_ifb_index = req.ifb_index;
	return 1;
}

void daemon_bw_remove(struct daemon *d, struct sandbox *sb)
{
	char ifb[16];
	int r = 0;

	if (!sb->shaped_egress_bps && !sb->shaped_ingress_bps)
		return;
	ifb_of(sb, ifb, sizeof(ifb));
	if (sb->chained) {
		/* Another plugin's bridge port stays: our qdiscs and the IFB come off it. */
		struct shape_req req = { .ifname = sb->host_ifname, .ifb = ifb };

		r = d->lk->ops->shape_set(d->lk, &req);
		if (r == -ENODEV && sb->shaped_egress_bps)	/* the port is gone already */
			r = d->lk->ops->del(d->lk, ifb);
	} else if (sb->shaped_egress_bps) {
		/* Its veth or tap took its own qdiscs with it; the IFB is a device of its own. */
		r = d->lk->ops->del(d->lk, ifb);
	}
	if (r < 0 && r != -ENODEV)
		log_warn("sandbox %s: cannot remove its shaping (IFB %s): %s", sb->name, ifb,
			 strerror(-r));
	sb->shaped_egress_bps = sb->shaped_ingress_bps = 0;
	sb->shape_ifindex = sb->shape_ifb_index = 0;
}

static int dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct shape_dev *)a)->name, ((const struct shape_dev *)b)->name);
}

/*
 * After a restart: is what the kernel has (@dev, shape_survey()) what @sb's
 * state file says netd put on, and what it should have now?  Then nothing
 * need be sent; the indexes are noted for the metrics.
 */
static bool as_surveyed(struct sandbox *sb, uint64_t eg, uint64_t in,
			const struct shape_dev *dev, size_t n)
{
	struct shape_dev key = { 0 };
	const struct shape_dev *h, *b = NULL;

	if (eg != sb->shaped_egress_bps || in != sb->shaped_ingress_bps)
		return false;
	snprintf(key.name, sizeof(key.name), "%s", sb->host_ifname);
	h = bsearch(&key, dev, n, sizeof(*dev), dev_cmp);
	if (eg) {
		ifb_of(sb, key.name, sizeof(key.name));
		b = bsearch(&key, dev, n, sizeof(*dev), dev_cmp);
	}
	if (!h || h->htb_root != (in != 0) || h->ingress != (eg != 0) ||
	    (eg && (!b || !b->htb_root)))
		return false;
	sb->shape_ifindex = h->ifindex;
	sb->shape_ifb_index = b ? b->ifindex : 0;
	return true;
}

void daemon_bw_sync_all(struct daemon *d, bool force)
{
	struct shape_dev *dev = NULL;
	uint32_t cur = 0;
	struct sandbox *sb;
	int n = -1;

	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		uint64_t was_eg = sb->shaped_egress_bps, was_in = sb->shaped_ingress_bps, eg, in;
		char err[256], a[POLICY_RATE_STRLEN], b[POLICY_RATE_STRLEN];
		int r;

		daemon_bw_want(d, sb, &eg, &in);
		/* A restart: one survey of the host for all (two dumps), asked only if needed. */
		if (force && (eg || in || was_eg || was_in) && n == -1 &&
		    (n = d->lk->ops->shape_survey(d->lk, &dev)) < 0)
			log_warn("cannot survey the host's qdiscs (%s): every shaped sandbox's "
				 "rates are put on again", strerror(-n));
		if (force && n > 0 && as_surveyed(sb, eg, in, dev, (size_t)n))
			continue;
		r = daemon_bw_apply(d, sb, force, err, sizeof(err));
		if (r < 0) {
			log_err("sandbox %s: %s; its rates are left as they were", sb->name, err);
			continue;
		}
		if (r == 0)
			continue;
		if (was_eg != sb->shaped_egress_bps || was_in != sb->shaped_ingress_bps)
			log_info("sandbox %s: bandwidth egress %s, ingress %s", sb->name,
				 sb->shaped_egress_bps ? policy_rate_format(sb->shaped_egress_bps, a,
									    sizeof(a)) : "unlimited",
				 sb->shaped_ingress_bps ? policy_rate_format(sb->shaped_ingress_bps, b,
									     sizeof(b)) : "unlimited");
		/* What is on its interfaces is in its state file: a restart must know. */
		if ((r = daemon_state_save(d, sb)) < 0)
			log_warn("sandbox %s: cannot save its state: %s", sb->name, strerror(-r));
	}
	free(dev);
}

/* One direction's object: {"limit", "limit_bps", "from"} (+ the kernel's counters), or null. */
static json_t *dir_json(uint64_t bps, bool own, const struct tc_qstats *q)
{
	char buf[POLICY_RATE_STRLEN];
	json_t *o;

	if (!bps)
		return json_null();
	o = json_pack("{s:s, s:I, s:s}", "limit", policy_rate_format(bps, buf, sizeof(buf)),
		      "limit_bps", (json_int_t)bps, "from", own ? "sandbox" : "policy");
	if (o && q)
		json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:I, s:I}", "rate_bps",
						    (json_int_t)q->rate_bps, "bytes",
						    (json_int_t)q->bytes, "packets",
						    (json_int_t)q->packets, "drops",
						    (json_int_t)q->drops, "backlog_bytes",
						    (json_int_t)q->backlog));
	return o;
}

json_t *daemon_bw_json(struct daemon *d, const struct sandbox *sb, bool live)
{
	struct shape_stats st = { 0 };
	uint64_t eg, in;
	char ifb[16];

	daemon_bw_want(d, sb, &eg, &in);
	ifb_of(sb, ifb, sizeof(ifb));
	/* The kernel's own counters: a get of each root qdisc (2 messages). */
	if (live && (sb->shaped_egress_bps || sb->shaped_ingress_bps) &&
	    d->lk->ops->shape_get(d->lk, sb->host_ifname, sb->shaped_egress_bps ? ifb : NULL,
				  &st) < 0)
		memset(&st, 0, sizeof(st));
	return json_pack("{s:o, s:o}",
			 "egress", dir_json(eg, sb->bw_egress_bps != 0,
					    live && st.has_egress ? &st.egress : NULL),
			 "ingress", dir_json(in, sb->bw_ingress_bps != 0,
					     live && st.has_ingress ? &st.ingress : NULL));
}

/* The metrics' view of one shaped interface: whose, which way, its counters. */
struct bw_row {
	int ifindex;
	const struct sandbox *sb;
	bool egress;
	bool seen;
	struct tc_qstats q;
};

static int row_cmp(const void *a, const void *b)
{
	const struct bw_row *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

static void on_qdisc(void *ctx, const struct tc_qstats *q)
{
	struct { struct bw_row *rows; size_t n; } *c = ctx;
	struct bw_row key = { .ifindex = q->ifindex }, *r;

	r = bsearch(&key, c->rows, c->n, sizeof(*c->rows), row_cmp);
	if (r) {
		r->q = *q;
		r->seen = true;
	}
}

void daemon_bw_metrics(struct daemon *d, FILE *out)
{
	static const char *const fam[][3] = {
		{ "netd_sandbox_bandwidth_limit_bytes_per_second", "gauge",
		  "The sandbox's rate limit (limits.bandwidth, or its own), bytes per second." },
		{ "netd_sandbox_bandwidth_rate_bytes_per_second", "gauge",
		  "What its shaper passes now: the kernel's rate estimate (1 s, averaged over 4 s)." },
		{ "netd_sandbox_bandwidth_bytes_total", "counter",
		  "Bytes its shaper passed (IP packets with their Ethernet header)." },
		{ "netd_sandbox_bandwidth_dropped_total", "counter",
		  "Packets its shaper's queue dropped (over about 100 ms at the rate)." },
	};
	struct { struct bw_row *rows; size_t n; } c = { NULL, 0 };
	size_t cap = 0;
	uint32_t cur = 0;
	struct sandbox *sb;

	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		for (int e = 0; e < 2; e++) {
			int idx = e ? sb->shape_ifb_index : sb->shape_ifindex;

			if (!(e ? sb->shaped_egress_bps : sb->shaped_ingress_bps) || idx <= 0)
				continue;
			if (c.n == cap) {
				struct bw_row *nr = reallocarray(c.rows, cap = cap ? 2 * cap : 64,
								 sizeof(*nr));

				if (!nr)
					goto out;
				c.rows = nr;
			}
			c.rows[c.n++] = (struct bw_row){ .ifindex = idx, .sb = sb, .egress = e };
		}
	}
	if (c.n) {
		qsort(c.rows, c.n, sizeof(*c.rows), row_cmp);
		/* One dump for every sandbox's counters (netd/link/shape.h). */
		if (d->lk->ops->shape_dump(d->lk, on_qdisc, &c) < 0)
			log_debug("metrics: cannot read the shapers' counters");
	}
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		metrics_family(out, fam[f][0], fam[f][1], fam[f][2]);
		for (size_t i = 0; i < c.n; i++) {
			const struct bw_row *r = &c.rows[i];
			const char *l[] = { "sandbox", r->sb->name, "direction",
					    r->egress ? "egress" : "ingress", NULL };
			uint64_t v = f == 0 ? (r->egress ? r->sb->shaped_egress_bps :
						       r->sb->shaped_ingress_bps) / 8 :
				     f == 1 ? r->q.rate_bps / 8 : f == 2 ? r->q.bytes : r->q.drops;

			if (f == 0 || r->seen)
				metrics_u64(out, fam[f][0], l, v);
		}
	}
out:
	free(c.rows);
}
