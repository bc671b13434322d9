/*
 * tc - traffic-control messages for shaping, built into memory; see tc.h.
 * The layout follows what iproute2's tc sends for the same commands
 * (q_htb.c, q_fifo.c, q_ingress.c, f_u32.c, m_mirred.c), without the rate
 * tables: the ratespecs say TC_LINKLAYER_ETHERNET, so the kernel computes
 * transmit times itself (psched_ratecfg_precompute()).
 */
#include "netd/link/tc.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <arpa/inet.h>

#define TC_QUANTUM 200000u	/* one class: its DRR quantum never matters; the kernel's cap */

static uint64_t clamp64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

struct tc_shaper tc_shaper_for(int ifindex, uint64_t rate_bps)
{
	uint64_t bytes_ps = rate_bps / 8;

	return (struct tc_shaper){
		.ifindex = ifindex,
		.rate_bps = rate_bps,
		.burst = (uint32_t)clamp64(bytes_ps * TC_BURST_MS / 1000, TC_BURST_MIN, TC_BURST_MAX),
		.queue = (uint32_t)clamp64(bytes_ps * TC_QUEUE_MS / 1000, TC_QUEUE_MIN, TC_QUEUE_MAX),
	};
}

/* A tc request: the header and its tcmsg. */
static struct nlmsghdr *tc_msg(char *buf, uint16_t type, uint16_t flags, int ifindex,
			       uint32_t parent, uint32_t handle, uint32_t info)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *t;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = parent;
	t->tcm_handle = handle;
	t->tcm_info = info;
	return nlh;
}

struct nlmsghdr *tc_htb_qdisc(char *buf, int ifindex)
{
	struct nlmsghdr *nlh = tc_msg(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex,
				      TC_H_ROOT, TC_HTB_HANDLE, 0);
	/* version 3 is what HTB's kernel side checks for (iproute2 sends it). */
	struct tc_htb_glob g = { .version = 3, .rate2quantum = 10,
				 .defcls = TC_H_MIN(TC_HTB_CLASS) };
	/* "est 1sec 4sec": interval 2^(0+2) quarters of a second, average 2^2 intervals. */
	struct tc_estimator est = { .interval = 0, .ewma_log = 2 };
	struct nlattr *opt;

	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_INIT, sizeof(g), &g);
	/*
	 * No direct queue: HTB sends a packet whose skb->priority names the
	 * qdisc itself (1:0) past every class, unshaped; with a direct queue
	 * of 0 such a packet is dropped instead.  A sandbox with
	 * CAP_NET_ADMIN in its netns can set SO_PRIORITY to anything.
	 */
	mnl_attr_put_u32(nlh, TCA_HTB_DIRECT_QLEN, 0);
	mnl_attr_nest_end(nlh, opt);
	mnl_attr_put(nlh, TCA_RATE, sizeof(est), &est);
	return nlh;
}

/* @burst bytes at @bytes_ps, in psched ticks (PSCHED_SHIFT 6: 64 ns each). */
static uint32_t ticks(uint64_t burst, uint64_t bytes_ps)
{
	uint64_t ns = bytes_ps ? burst * 1000000000ull / bytes_ps : 0;

	return (uint32_t)clamp64(ns >> 6, 1, UINT32_MAX);
}

struct nlmsghdr *tc_htb_class(char *buf, const struct tc_shaper *s)
{
	struct nlmsghdr *nlh = tc_msg(buf, RTM_NEWTCLASS, NLM_F_CREATE, s->ifindex, TC_HTB_HANDLE,
				      TC_HTB_CLASS, 0);
	uint64_t bytes_ps = s->rate_bps / 8;
	struct tc_htb_opt o;
	struct nlattr *opt;

	memset(&o, 0, sizeof(o));
	o.rate.linklayer = TC_LINKLAYER_ETHERNET;
	o.rate.rate = bytes_ps >= (1ull << 32) ? ~0u : (uint32_t)bytes_ps;
	o.ceil = o.rate;
	o.buffer = o.cbuffer = ticks(s->burst, bytes_ps);
	o.quantum = TC_QUANTUM;
	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_PARMS, sizeof(o), &o);
	if (bytes_ps >= (1ull << 32)) {
		mnl_attr_put_u64(nlh, TCA_HTB_RATE64, bytes_ps);
		mnl_attr_put_u64(nlh, TCA_HTB_CEIL64, bytes_ps);
	}
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

struct nlmsghdr *tc_leaf_qdisc(char *buf, const struct tc_shaper *s)
{
	struct nlmsghdr *nlh = tc_msg(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
				      s->ifindex, TC_HTB_CLASS, TC_LEAF_HANDLE, 0);
	struct tc_fifo_qopt q = { .limit = s->queue };

	mnl_attr_put_strz(nlh, TCA_KIND, "bfifo");
	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(q), &q);	/* fifo options are not nested */
	return nlh;
}

struct nlmsghdr *tc_root_del(char *buf, int ifindex)
{
	return tc_msg(buf, RTM_DELQDISC, 0, ifindex, TC_H_ROOT, 0, 0);
}

struct nlmsghdr *tc_root_get(char *buf, int ifindex)
{
	/* The kernel answers a qdisc get to the asker only if it asks for the echo. */
	return tc_msg(buf, RTM_GETQDISC, NLM_F_ECHO, ifindex, TC_H_ROOT, 0, 0);
}

struct nlmsghdr *tc_qdisc_dump(char *buf)
{
	return tc_msg(buf, RTM_GETQDISC, NLM_F_DUMP, 0, 0, 0, 0);
}

struct nlmsghdr *tc_ingress_qdisc(char *buf, int ifindex)
{
	struct nlmsghdr *nlh = tc_msg(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex,
				      TC_H_INGRESS, TC_INGRESS_HANDLE, 0);

	mnl_attr_put_strz(nlh, TCA_KIND, "ingress");
	return nlh;
}

struct nlmsghdr *tc_ingress_del(char *buf, int ifindex)
{
	return tc_msg(buf, RTM_DELQDISC, 0, ifindex, TC_H_INGRESS, TC_INGRESS_HANDLE, 0);
}

struct nlmsghdr *tc_redirect_filter(char *buf, int ifindex, int to_ifindex)
{
	struct nlmsghdr *nlh = tc_msg(buf, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex,
				      TC_INGRESS_HANDLE, TC_FILTER_HANDLE,
				      TC_H_MAKE((uint32_t)TC_FILTER_PRIO << 16, htons(ETH_P_ALL)));
	/* A selector and its one key, as the kernel reads them: sel, then keys[]. */
	uint8_t m[sizeof(struct tc_u32_sel) + sizeof(struct tc_u32_key)];
	struct tc_u32_sel sel;
	struct tc_mirred mir;
	struct nlattr *opt, *acts, *act, *aopt;

	/* "match u32 0 0": one key whose mask is 0, so every packet matches. */
	memset(&sel, 0, sizeof(sel));
	sel.flags = TC_U32_TERMINAL;
	sel.nkeys = 1;
	memset(m, 0, sizeof(m));
	memcpy(m, &sel, sizeof(sel));
	memset(&mir, 0, sizeof(mir));
	mir.action = TC_ACT_STOLEN;	/* the redirect takes the packet */
	mir.eaction = TCA_EGRESS_REDIR;
	mir.ifindex = (uint32_t)to_ifindex;
	mnl_attr_put_strz(nlh, TCA_KIND, "u32");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_U32_SEL, sizeof(m), m);
	acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);
	act = mnl_attr_nest_start(nlh, 1);	/* the first action of the list */
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "mirred");
	aopt = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	mnl_attr_put(nlh, TCA_MIRRED_PARMS, sizeof(mir), &mir);
	mnl_attr_nest_end(nlh, aopt);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

static int stats2_cb(const struct nlattr *a, void *data)
{
	struct tc_qstats *q = data;
	size_t len = mnl_attr_get_payload_len(a);
	const uint8_t *p = mnl_attr_get_payload(a);

	switch (mnl_attr_get_type(a)) {
	case TCA_STATS_BASIC: {
		uint64_t bytes;
		uint32_t pkts;

		if (len < sizeof(bytes) + sizeof(pkts))
			return MNL_CB_ERROR;
		memcpy(&bytes, p, sizeof(bytes));
		memcpy(&pkts, p + sizeof(bytes), sizeof(pkts));
		q->bytes = bytes;
		if (!q->packets)
			q->packets = pkts;
		break;
	}
	case TCA_STATS_PKT64:
		if (len < sizeof(uint64_t))
			return MNL_CB_ERROR;
		memcpy(&q->packets, p, sizeof(q->packets));
		break;
	case TCA_STATS_RATE_EST: {
		struct gnet_stats_rate_est e;

		if (len < sizeof(e))
			return MNL_CB_ERROR;
		memcpy(&e, p, sizeof(e));
		if (!q->has_rate)
			q->rate_bps = (uint64_t)e.bps * 8;
		q->has_rate = true;
		break;
	}
	case TCA_STATS_RATE_EST64: {
		struct gnet_stats_rate_est64 e;

		if (len < sizeof(e))
			return MNL_CB_ERROR;
		memcpy(&e, p, sizeof(e));
		q->rate_bps = e.bps * 8;
		q->has_rate = true;
		break;
	}
	case TCA_STATS_QUEUE: {
		struct gnet_stats_queue s;

		if (len < sizeof(s))
			return MNL_CB_ERROR;
		memcpy(&s, p, sizeof(s));
		q->qlen = s.qlen;
		q->backlog = s.backlog;
		q->drops = s.drops;
		break;
	}
	}
	return MNL_CB_OK;
}

static int qdisc_cb(const struct nlattr *a, void *data)
{
	struct tc_qstats *q = data;
	size_t len = mnl_attr_get_payload_len(a);

	switch (mnl_attr_get_type(a)) {
	case TCA_KIND:
		if (len == 0 || len > sizeof(q->kind) || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		memcpy(q->kind, mnl_attr_get_payload(a), len);
		q->kind[sizeof(q->kind) - 1] = '\0';
		break;
	case TCA_STATS2:
		if (mnl_attr_parse_nested(a, stats2_cb, q) < 0)
			return MNL_CB_ERROR;
		break;
	}
	return MNL_CB_OK;
}

int tc_qdisc_parse(const struct nlmsghdr *nlh, struct tc_qstats *out)
{
	const struct tcmsg *t;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWQDISC)
		return -ENOMSG;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*t)))
		return -EBADMSG;
	t = mnl_nlmsg_get_payload(nlh);
	out->ifindex = t->tcm_ifindex;
	out->handle = t->tcm_handle;
	out->parent = t->tcm_parent;
	if (mnl_attr_parse(nlh, sizeof(*t), qdisc_cb, out) < 0) {
		memset(out, 0, sizeof(*out));
		return -EBADMSG;
	}
	return 0;
}
