/*
 * test_tc - the traffic-control messages netd sends to shape a sandbox
 * (netd/link/tc.c), byte by byte: header, tcmsg, each attribute and the
 * structs inside, as the kernel's sch_htb.c, sch_fifo.c, sch_ingress.c,
 * cls_u32.c and act_mirred.c read them (and as iproute2's tc writes them);
 * the shaper's sizes; and the reply parser on good and broken replies.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "netd/link/tc.h"

static char buf[8192] __attribute__((aligned(4)));	/* MNL_SOCKET_BUFFER_SIZE at most */

static const struct tcmsg *tcm_of(const struct nlmsghdr *nlh)
{
	assert_true(nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct tcmsg)));
	return mnl_nlmsg_get_payload(nlh);
}

/* The attribute of @type among the top-level ones (after the tcmsg), or NULL. */
static const struct nlattr *top_attr(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg))
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static const struct nlattr *nested(const struct nlattr *nest, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static size_t count_top(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;
	size_t n = 0;

	mnl_attr_for_each(a, nlh, sizeof(struct tcmsg))
		n++;
	return n;
}

static void header(const struct nlmsghdr *nlh, uint16_t type, uint16_t flags, int ifindex,
		   uint32_t parent, uint32_t handle, uint32_t info)
{
	const struct tcmsg *t = tcm_of(nlh);

	assert_int_equal(nlh->nlmsg_type, type);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | flags);
	assert_int_equal(t->tcm_family, AF_UNSPEC);
	assert_int_equal(t->tcm_ifindex, ifindex);
	assert_int_equal(t->tcm_parent, parent);
	assert_int_equal(t->tcm_handle, handle);
	assert_int_equal(t->tcm_info, info);
	/* Every attribute lies inside the message and the message is what it says. */
	assert_true(mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len));
}

static void kind(const struct nlmsghdr *nlh, const char *want)
{
	const struct nlattr *k = top_attr(nlh, TCA_KIND);

	assert_non_null(k);
	assert_int_equal(mnl_attr_get_payload_len(k), strlen(want) + 1);
	assert_string_equal(mnl_attr_get_str(k), want);
}

static void test_shaper_sizes(void **state)
{
	struct tc_shaper s;

	(void)state;
	s = tc_shaper_for(7, 20000000);	/* 2.5 MB/s */
	assert_int_equal(s.ifindex, 7);
	assert_int_equal(s.burst, 50000);	/* 20 ms */
	assert_int_equal(s.queue, 250000);	/* 100 ms */
	s = tc_shaper_for(7, 8000);	/* 1 kB/s: the floors */
	assert_int_equal(s.burst, TC_BURST_MIN);
	assert_int_equal(s.queue, TC_QUEUE_MIN);
	s = tc_shaper_for(7, 100000000000ull);	/* 12.5 GB/s: the ceilings */
	assert_int_equal(s.burst, TC_BURST_MAX);
	assert_int_equal(s.queue, TC_QUEUE_MAX);
}

static void test_htb_qdisc(void **state)
{
	struct nlmsghdr *nlh = tc_htb_qdisc(buf, 7);
	const struct nlattr *opt, *init, *rate;
	struct tc_htb_glob g;
	struct tc_estimator e;

	(void)state;
	header(nlh, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, 7, TC_H_ROOT, 0x00010000, 0);
	kind(nlh, "htb");
	opt = top_attr(nlh, TCA_OPTIONS);
	assert_non_null(opt);
	init = nested(opt, TCA_HTB_INIT);
	assert_non_null(init);
	assert_int_equal(mnl_attr_get_payload_len(init), sizeof(g));
	memcpy(&g, mnl_attr_get_payload(init), sizeof(g));
	assert_int_equal(g.version, 3);
	assert_int_equal(g.rate2quantum, 10);
	assert_int_equal(g.defcls, 1);
	assert_int_equal(g.debug, 0);
	assert_int_equal(g.direct_pkts, 0);
	/* No direct queue: a packet that names the qdisc in its priority is dropped. */
	assert_non_null(nested(opt, TCA_HTB_DIRECT_QLEN));
	assert_int_equal(mnl_attr_get_u32(nested(opt, TCA_HTB_DIRECT_QLEN)), 0);
	rate = top_attr(nlh, TCA_RATE);
	assert_non_null(rate);
	assert_int_equal(mnl_attr_get_payload_len(rate), sizeof(e));
	memcpy(&e, mnl_attr_get_payload(rate), sizeof(e));
	assert_int_equal(e.interval, 0);
	assert_int_equal(e.ewma_log, 2);
	assert_int_equal(count_top(nlh), 3);
	/* 16 nlmsghdr + 20 tcmsg + 8 "htb" + (4 + 4 + 20 + 8) options + 8 estimator */
	assert_int_equal(nlh->nlmsg_len, 88);
}

static void test_htb_class(void **state)
{
	struct tc_shaper s = tc_shaper_for(7, 20000000);
	struct nlmsghdr *nlh = tc_htb_class(buf, &s);
	const struct nlattr *opt, *parms;
	struct tc_htb_opt o;
	/* The whole message for 20mbit on ifindex 7, as it must go to the kernel. */
	static const uint8_t want[] = {
		0x60, 0, 0, 0, 0x28, 0, 0x01, 0x04, 0, 0, 0, 0, 0, 0, 0, 0,	/* len 96, NEWTCLASS, REQUEST|CREATE */
		0, 0, 0, 0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0,	/* tcmsg: 7, 1:1, parent 1: */
		8, 0, 1, 0, 'h', 't', 'b', 0,					/* TCA_KIND */
	};

	(void)state;
	header(nlh, RTM_NEWTCLASS, NLM_F_CREATE, 7, 0x00010000, 0x00010001, 0);
	kind(nlh, "htb");
	assert_int_equal(nlh->nlmsg_len, 96);	/* + options: 4 + 4 + 44 */
	assert_memory_equal(nlh, want, sizeof(want));	/* header, tcmsg, kind */
	opt = top_attr(nlh, TCA_OPTIONS);
	assert_non_null(opt);
	parms = nested(opt, TCA_HTB_PARMS);
	assert_non_null(parms);
	assert_int_equal(mnl_attr_get_payload_len(parms), sizeof(o));
	memcpy(&o, mnl_attr_get_payload(parms), sizeof(o));
	assert_int_equal(o.rate.rate, 2500000);	/* bytes per second */
	assert_int_equal(o.rate.linklayer, TC_LINKLAYER_ETHERNET);
	assert_int_equal(o.rate.cell_log, 0);
	assert_int_equal(o.rate.overhead, 0);
	assert_int_equal(o.rate.mpu, 0);
	assert_memory_equal(&o.ceil, &o.rate, sizeof(o.rate));
	/* 50,000 bytes at 2.5 MB/s = 20 ms = 312,500 ticks of 64 ns */
	assert_int_equal(o.buffer, 312500);
	assert_int_equal(o.cbuffer, 312500);
	assert_int_equal(o.quantum, 200000);
	assert_int_equal(o.prio, 0);
	assert_null(nested(opt, TCA_HTB_RATE64));
	assert_null(nested(opt, TCA_HTB_RTAB));
}

/* At 2^32 bytes/s and over the 32-bit field says ~0 and RATE64/CEIL64 carry the rate. */
static void test_htb_class_64(void **state)
{
	struct tc_shaper s = tc_shaper_for(3, 100000000000ull);
	struct nlmsghdr *nlh = tc_htb_class(buf, &s);
	const struct nlattr *opt = top_attr(nlh, TCA_OPTIONS), *r64, *c64;
	struct tc_htb_opt o;

	(void)state;
	assert_non_null(opt);
	memcpy(&o, mnl_attr_get_payload(nested(opt, TCA_HTB_PARMS)), sizeof(o));
	assert_int_equal(o.rate.rate, 0xffffffffu);
	assert_int_equal(o.ceil.rate, 0xffffffffu);
	r64 = nested(opt, TCA_HTB_RATE64);
	c64 = nested(opt, TCA_HTB_CEIL64);
	assert_non_null(r64);
	assert_non_null(c64);
	assert_true(mnl_attr_get_u64(r64) == 12500000000ull);
	assert_true(mnl_attr_get_u64(c64) == 12500000000ull);
	/* 32 MiB at 12.5 GB/s: 2.68 ms, 41,943 ticks */
	assert_int_equal(o.buffer, 33554432ull * 1000000000ull / 12500000000ull / 64);
	/* Just under 2^32 bytes/s: no 64-bit attributes. */
	s = tc_shaper_for(3, 34359738360ull);
	nlh = tc_htb_class(buf, &s);
	assert_null(nested(top_attr(nlh, TCA_OPTIONS), TCA_HTB_RATE64));
}

static void test_leaf(void **state)
{
	struct tc_shaper s = tc_shaper_for(9, 20000000);
	struct nlmsghdr *nlh = tc_leaf_qdisc(buf, &s);
	const struct nlattr *opt;
	struct tc_fifo_qopt q;

	(void)state;
	header(nlh, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, 9, 0x00010001, 0x000a0000, 0);
	kind(nlh, "bfifo");
	opt = top_attr(nlh, TCA_OPTIONS);
	assert_non_null(opt);
	/* Not nested: the bare struct, as sch_fifo.c's fifo_init() reads it. */
	assert_int_equal(mnl_attr_get_payload_len(opt), sizeof(q));
	memcpy(&q, mnl_attr_get_payload(opt), sizeof(q));
	assert_int_equal(q.limit, 250000);
	assert_int_equal(count_top(nlh), 2);
}

static void test_deletes_and_gets(void **state)
{
	struct nlmsghdr *nlh;

	(void)state;
	nlh = tc_root_del(buf, 5);
	header(nlh, RTM_DELQDISC, 0, 5, TC_H_ROOT, 0, 0);
	assert_int_equal(count_top(nlh), 0);
	nlh = tc_root_get(buf, 5);
	header(nlh, RTM_GETQDISC, NLM_F_ECHO, 5, TC_H_ROOT, 0, 0);
	nlh = tc_qdisc_dump(buf);
	header(nlh, RTM_GETQDISC, NLM_F_DUMP, 0, 0, 0, 0);
	nlh = tc_ingress_qdisc(buf, 5);
	header(nlh, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, 5, TC_H_INGRESS, 0xffff0000, 0);
	kind(nlh, "ingress");
	assert_int_equal(count_top(nlh), 1);
	nlh = tc_ingress_del(buf, 5);
	header(nlh, RTM_DELQDISC, 0, 5, TC_H_INGRESS, 0xffff0000, 0);
}

static void test_redirect_filter(void **state)
{
	struct nlmsghdr *nlh = tc_redirect_filter(buf, 5, 11);
	const struct nlattr *opt, *sel, *acts, *act, *akind, *aopt, *parms;
	struct tc_u32_sel s;
	struct tc_u32_key k;
	struct tc_mirred m;

	(void)state;
	header(nlh, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, 5, 0xffff0000, 0x80000800,
	       (1u << 16) | htons(ETH_P_ALL));
	kind(nlh, "u32");
	opt = top_attr(nlh, TCA_OPTIONS);
	assert_non_null(opt);
	sel = nested(opt, TCA_U32_SEL);
	assert_non_null(sel);
	assert_int_equal(mnl_attr_get_payload_len(sel), sizeof(s) + sizeof(k));
	memcpy(&s, mnl_attr_get_payload(sel), sizeof(s));
	memcpy(&k, (const uint8_t *)mnl_attr_get_payload(sel) + sizeof(s), sizeof(k));
	assert_int_equal(s.flags, TC_U32_TERMINAL);
	assert_int_equal(s.nkeys, 1);
	assert_int_equal(s.off, 0);
	assert_int_equal(s.hmask, 0);
	assert_int_equal(k.mask, 0);	/* matches every packet */
	assert_int_equal(k.val, 0);
	assert_int_equal(k.off, 0);
	acts = nested(opt, TCA_U32_ACT);
	assert_non_null(acts);
	act = nested(acts, 1);
	assert_non_null(act);
	akind = nested(act, TCA_ACT_KIND);
	assert_non_null(akind);
	assert_string_equal(mnl_attr_get_str(akind), "mirred");
	aopt = nested(act, TCA_ACT_OPTIONS);
	assert_non_null(aopt);
	parms = nested(aopt, TCA_MIRRED_PARMS);
	assert_non_null(parms);
	assert_int_equal(mnl_attr_get_payload_len(parms), sizeof(m));
	memcpy(&m, mnl_attr_get_payload(parms), sizeof(m));
	assert_int_equal(m.action, TC_ACT_STOLEN);
	assert_int_equal(m.eaction, TCA_EGRESS_REDIR);
	assert_int_equal(m.ifindex, 11);
	assert_int_equal(m.index, 0);
	assert_int_equal(m.refcnt, 0);
	assert_int_equal(m.bindcnt, 0);
}

/* An RTM_NEWQDISC as the kernel answers a get: kind, TCA_STATS2 and its members. */
static struct nlmsghdr *reply(bool rate64, bool short_basic)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	struct gnet_stats_basic b = { .bytes = 123456789012ull, .packets = 4242 };
	struct gnet_stats_queue q = { .qlen = 3, .backlog = 4500, .drops = 17 };
	struct gnet_stats_rate_est e = { .bps = 2500000, .pps = 1000 };
	struct gnet_stats_rate_est64 e64 = { .bps = 12500000000ull, .pps = 1 };
	struct nlattr *st;

	nlh->nlmsg_type = RTM_NEWQDISC;
	t->tcm_ifindex = 7;
	t->tcm_handle = 0x00010000;
	t->tcm_parent = TC_H_ROOT;
	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	st = mnl_attr_nest_start(nlh, TCA_STATS2);
	mnl_attr_put(nlh, TCA_STATS_BASIC, short_basic ? 8 : sizeof(b), &b);
	mnl_attr_put(nlh, TCA_STATS_RATE_EST, sizeof(e), &e);
	if (rate64)
		mnl_attr_put(nlh, TCA_STATS_RATE_EST64, sizeof(e64), &e64);
	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	mnl_attr_nest_end(nlh, st);
	return nlh;
}

static void test_parse(void **state)
{
	struct tc_qstats q;
	struct nlmsghdr *nlh;

	(void)state;
	assert_int_equal(tc_qdisc_parse(reply(false, false), &q), 0);
	assert_int_equal(q.ifindex, 7);
	assert_int_equal(q.handle, 0x00010000);
	assert_int_equal(q.parent, TC_H_ROOT);
	assert_string_equal(q.kind, "htb");
	assert_true(q.bytes == 123456789012ull);
	assert_true(q.packets == 4242);
	assert_true(q.has_rate);
	assert_true(q.rate_bps == 20000000);	/* bytes/s x 8 */
	assert_int_equal(q.drops, 17);
	assert_int_equal(q.backlog, 4500);
	assert_int_equal(q.qlen, 3);
	assert_int_equal(tc_qdisc_parse(reply(true, false), &q), 0);
	assert_true(q.rate_bps == 100000000000ull);	/* the 64-bit estimate wins */
	/* A basic block too short to hold its counters is a broken reply. */
	assert_int_equal(tc_qdisc_parse(reply(false, true), &q), -EBADMSG);
	assert_int_equal(q.bytes, 0);
	/* Another message type; a message too short for its tcmsg. */
	nlh = reply(false, false);
	nlh->nlmsg_type = RTM_NEWTCLASS;
	assert_int_equal(tc_qdisc_parse(nlh, &q), -ENOMSG);
	nlh->nlmsg_type = RTM_NEWQDISC;
	nlh->nlmsg_len = sizeof(*nlh) + 4;
	assert_int_equal(tc_qdisc_parse(nlh, &q), -EBADMSG);
	/* A kind without its NUL, or longer than any kind, is refused. */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWQDISC;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct tcmsg));
	mnl_attr_put(nlh, TCA_KIND, 3, "htb");
	assert_int_equal(tc_qdisc_parse(nlh, &q), -EBADMSG);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWQDISC;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct tcmsg));
	mnl_attr_put_strz(nlh, TCA_KIND, "a-kind-of-twenty-bytes");
	assert_int_equal(tc_qdisc_parse(nlh, &q), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shaper_sizes),
		cmocka_unit_test(test_htb_qdisc),
		cmocka_unit_test(test_htb_class),
		cmocka_unit_test(test_htb_class_64),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_deletes_and_gets),
		cmocka_unit_test(test_redirect_filter),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
