/*
 * test_grace - the idle grace's pure parts: which grace a closed flow gets
 * (netd/trail/grace.c), the served-id table, the closing TCP states (acct.c)
 * and the TCP state ctmsg.c decodes from a conntrack message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "netd/trail/acct.h"
#include "netd/trail/ctmsg.h"
#include "netd/trail/grace.h"
#include "netd/model/policy.h"

static struct policy *parse(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	return p;
}

static struct addr v4(const char *s)
{
	struct addr a = { 0 };

	a.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, s, a.a), 1);
	return a;
}

/* A name a gateway rule matches on that port: its grace pin is a gateway pin (never pin4/6). */
static void test_gateway(void **state)
{
	struct policy *p = parse("name: t\negress:\n"
				 "  - domains: [api.corp.example]\n    ports: [443]\n"
				 "  - domains: [\"*.corp.example\"]\n    ports: [443, 80]\n");

	(void)state;
	assert_false(grace_gateway(p, "api.corp.example", IPPROTO_TCP, 443));
	p->rules[0].gateway = calloc(1, sizeof(*p->rules[0].gateway));
	assert_non_null(p->rules[0].gateway);
	/* Matched by both rules on 443: steered, so a gateway pin. */
	assert_true(grace_gateway(p, "api.corp.example", IPPROTO_TCP, 443));
	assert_false(grace_gateway(p, "api.corp.example", IPPROTO_TCP, 80));
	assert_false(grace_gateway(p, "www.corp.example", IPPROTO_TCP, 443));
	assert_false(grace_gateway(p, "api.corp.example", IPPROTO_UDP, 443));
	assert_false(grace_gateway(NULL, "api.corp.example", IPPROTO_TCP, 443));
	policy_free(p);
}

static void test_timeout(void **state)
{
	struct policy *p = parse("name: t\negress:\n"
				 "  - domains: [a.test]\n    ports: [443]\n"
				 "  - domains: [\"*.cdn.test\"]\n    ports: [443, 80]\n    idle_grace: 90\n"
				 "  - domains: [off.test]\n    ports: [443]\n    idle_grace: 0\n"
				 "  - domains: [u.test]\n    ports: [53]\n    protocol: udp\n"
				 "  - domains: [both.test]\n    ports: [443]\n    idle_grace: 10\n"
				 "  - domains: [both.test]\n    ports: [443]\n    idle_grace: 20\n"
				 "  - domains: [c.test]\n    ports: [443]\n"
				 "  - cidrs: [198.51.100.7/32]\n    ports: [443]\n");
	struct addr d = v4("203.0.113.9"), cidr = v4("198.51.100.7");

	(void)state;
	/* The global grace for a plain rule; nothing for other ports or protocols. */
	assert_int_equal(grace_timeout_s(p, "a.test", &d, IPPROTO_TCP, 443, 30), 30);
	assert_int_equal(grace_timeout_s(p, "a.test", &d, IPPROTO_TCP, 80, 30), 0);
	assert_int_equal(grace_timeout_s(p, "a.test", &d, IPPROTO_UDP, 443, 30), 0);
	assert_int_equal(grace_timeout_s(p, "a.test", &d, IPPROTO_ICMP, 0, 30), 0);
	assert_int_equal(grace_timeout_s(p, "a.test", &d, IPPROTO_TCP, 443, 0), 0);
	/* A rule's own value overrides the global one, also when it is 0. */
	assert_int_equal(grace_timeout_s(p, "x.cdn.test", &d, IPPROTO_TCP, 80, 30), 90);
	assert_int_equal(grace_timeout_s(p, "x.y.cdn.test", &d, IPPROTO_TCP, 443, 0), 90);
	assert_int_equal(grace_timeout_s(p, "cdn.test", &d, IPPROTO_TCP, 443, 30), 0);
	assert_int_equal(grace_timeout_s(p, "off.test", &d, IPPROTO_TCP, 443, 30), 0);
	assert_int_equal(grace_timeout_s(p, "u.test", &d, IPPROTO_UDP, 53, 5), 5);
	/* Several rules: the largest grace. */
	assert_int_equal(grace_timeout_s(p, "both.test", &d, IPPROTO_TCP, 443, 0), 20);
	/* Names the policy does not (or no longer) allow get nothing. */
	assert_int_equal(grace_timeout_s(p, "gone.test", &d, IPPROTO_TCP, 443, 30), 0);
	/* Traffic a CIDR rule allows: never, even if a name pinned the address. */
	assert_int_equal(grace_timeout_s(p, "c.test", &cidr, IPPROTO_TCP, 443, 30), 0);
	assert_int_equal(grace_timeout_s(p, "c.test", &d, IPPROTO_TCP, 443, 30), 30);
	/* No policy (its file was removed) or no name: nothing. */
	assert_int_equal(grace_timeout_s(NULL, "a.test", &d, IPPROTO_TCP, 443, 30), 0);
	assert_int_equal(grace_timeout_s(p, NULL, &d, IPPROTO_TCP, 443, 30), 0);
	policy_free(p);
}

static void test_wants(void **state)
{
	struct policy *plain = parse("name: t\negress:\n  - domains: [a.test]\n    ports: [443]\n");
	struct policy *rule = parse("name: t\negress:\n  - domains: [a.test]\n    ports: [443]\n"
				    "    idle_grace: 5\n");
	struct policy *zero = parse("name: t\negress:\n  - domains: [a.test]\n    ports: [443]\n"
				    "    idle_grace: 0\n");

	(void)state;
	assert_false(grace_policy_wants(plain, 0));
	assert_true(grace_policy_wants(plain, 1));
	assert_true(grace_policy_wants(rule, 0));
	assert_false(grace_policy_wants(zero, 0));
	assert_false(grace_policy_wants(NULL, 0));
	policy_free(plain);
	policy_free(rule);
	policy_free(zero);
}

static void test_seen(void **state)
{
	struct grace_seen *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	assert_false(grace_seen_has(s, 42));
	grace_seen_mark(s, 42);
	assert_true(grace_seen_has(s, 42));
	assert_true(grace_seen_has(s, 42));	/* has() does not forget */
	assert_false(grace_seen_has(s, 43));
	assert_true(grace_seen_take(s, 42));
	assert_false(grace_seen_take(s, 42));	/* take() does */
	grace_seen_mark(s, 0);			/* no id: never remembered */
	assert_false(grace_seen_has(s, 0));
	assert_false(grace_seen_take(s, 0));
	for (uint32_t id = 1; id <= 1000; id++)
		grace_seen_mark(s, id * 7919u);
	for (uint32_t id = 1; id <= 1000; id++)
		assert_true(grace_seen_take(s, id * 7919u));
	free(s);
}

static void test_tcp_closing(void **state)
{
	(void)state;
	assert_false(acct_tcp_closing(TCP_CONNTRACK_NONE));
	assert_false(acct_tcp_closing(TCP_CONNTRACK_SYN_SENT));
	assert_false(acct_tcp_closing(TCP_CONNTRACK_SYN_RECV));
	assert_false(acct_tcp_closing(TCP_CONNTRACK_ESTABLISHED));
	assert_true(acct_tcp_closing(TCP_CONNTRACK_FIN_WAIT));
	assert_true(acct_tcp_closing(TCP_CONNTRACK_CLOSE_WAIT));
	assert_true(acct_tcp_closing(TCP_CONNTRACK_LAST_ACK));
	assert_true(acct_tcp_closing(TCP_CONNTRACK_TIME_WAIT));
	assert_true(acct_tcp_closing(TCP_CONNTRACK_CLOSE));
	assert_false(acct_tcp_closing(TCP_CONNTRACK_SYN_SENT2));
	assert_false(acct_tcp_closing(200));
}

/* A conntrack update as the kernel sends it: tuple, mark, id, and
 * (if @state_len) CTA_PROTOINFO/TCP/STATE with @state_len bytes. */
static size_t ct_msg(char *buf, uint8_t proto, int state_len, uint8_t state)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *tuple, *ip, *pr, *pi, *tcp;
	uint32_t src = htonl(0x0a570002), dst = htonl(0xc6336432);

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	nfg->version = NFNETLINK_V0;
	tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, CTA_IP_V4_SRC, 4, &src);
	mnl_attr_put(nlh, CTA_IP_V4_DST, 4, &dst);
	mnl_attr_nest_end(nlh, ip);
	pr = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(40000));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(443));
	mnl_attr_nest_end(nlh, pr);
	mnl_attr_nest_end(nlh, tuple);
	if (state_len) {
		uint8_t st[2] = { state, 0 };

		pi = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
		tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_STATE, (size_t)state_len, st);
		mnl_attr_nest_end(nlh, tcp);
		mnl_attr_nest_end(nlh, pi);
	}
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(ACCT_MARK(3)));
	mnl_attr_put_u32(nlh, CTA_ID, htonl(77));
	return nlh->nlmsg_len;
}

static void test_ct_tcp_state(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ct_flow f;
	size_t n;

	(void)state;
	n = ct_msg(buf, IPPROTO_TCP, 1, TCP_CONNTRACK_FIN_WAIT);
	assert_int_equal(ct_parse(buf, n, &f), CT_EV_NEW);
	assert_true(f.has_tcp_state);
	assert_int_equal(f.tcp_state, TCP_CONNTRACK_FIN_WAIT);
	assert_int_equal(f.dport, 443);
	assert_int_equal(f.id, 77);
	assert_int_equal(ACCT_MARK_SLOT(f.mark), 3);
	/* No protoinfo (a status-only update): no state. */
	n = ct_msg(buf, IPPROTO_TCP, 0, 0);
	assert_int_equal(ct_parse(buf, n, &f), CT_EV_NEW);
	assert_false(f.has_tcp_state);
	/* A state of the wrong length is not believed; the entry still parses. */
	n = ct_msg(buf, IPPROTO_TCP, 2, TCP_CONNTRACK_CLOSE);
	assert_int_equal(ct_parse(buf, n, &f), CT_EV_NEW);
	assert_false(f.has_tcp_state);
	/* Only TCP has one. */
	n = ct_msg(buf, IPPROTO_UDP, 1, TCP_CONNTRACK_CLOSE);
	assert_int_equal(ct_parse(buf, n, &f), CT_EV_NEW);
	assert_false(f.has_tcp_state);
	/* Truncated inside the protoinfo: rejected as a whole, never read past. */
	n = ct_msg(buf, IPPROTO_TCP, 1, TCP_CONNTRACK_CLOSE);
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)(n - 20);
	ct_parse(buf, n - 20, &f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_gateway),
		cmocka_unit_test(test_wants),
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_tcp_closing),
		cmocka_unit_test(test_ct_tcp_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
