/*
 * test_audit_rec - the audit trail's record bodies and the kernel message
 * decoders behind them (netd/trail/ctmsg.c); the pinned-name lookup is
 * tests/unit/test_pinreg.c's.  Messages are built here with libmnl the way
 * the kernel lays them out.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nfnetlink_log.h>

#include "netd/trail/acct.h"
#include "netd/trail/ctmsg.h"
#include "netd/fw.h"

static char buf[4096];

static struct nlmsghdr *ct_msg(uint16_t type, uint8_t proto, uint32_t mark, bool counters)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *tuple, *ip, *pr, *c, *ts;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, inet_addr("10.87.0.2"));
	mnl_attr_put_u32(nlh, CTA_IP_V4_DST, inet_addr("198.51.100.10"));
	mnl_attr_nest_end(nlh, ip);
	pr = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	if (proto == IPPROTO_ICMP) {
		mnl_attr_put_u16(nlh, CTA_PROTO_ICMP_ID, htons(77));
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_TYPE, 8);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_CODE, 0);
	} else {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(40000));
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(443));
	}
	mnl_attr_nest_end(nlh, pr);
	mnl_attr_nest_end(nlh, tuple);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(mark));
	mnl_attr_put_u32(nlh, CTA_ID, htonl(1234));
	if (counters) {
		c = mnl_attr_nest_start(nlh, CTA_COUNTERS_ORIG);
		mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(10));
		mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(1000));
		mnl_attr_nest_end(nlh, c);
		c = mnl_attr_nest_start(nlh, CTA_COUNTERS_REPLY);
		mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(20));
		mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(1048576));
		mnl_attr_nest_end(nlh, c);
	}
	ts = mnl_attr_nest_start(nlh, CTA_TIMESTAMP);
	mnl_attr_put_u64(nlh, CTA_TIMESTAMP_START, htobe64(1764480000123000000ull));
	mnl_attr_put_u64(nlh, CTA_TIMESTAMP_STOP, htobe64(1764480002623000000ull));
	mnl_attr_nest_end(nlh, ts);
	return nlh;
}

static void test_ct_destroy(void **state)
{
	struct nlmsghdr *nlh = ct_msg(IPCTNL_MSG_CT_DELETE, IPPROTO_TCP, ACCT_MARK(3), true);
	struct ct_flow f;

	(void)state;
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &f), CT_EV_DESTROY);
	assert_int_equal(f.proto, IPPROTO_TCP);
	assert_int_equal(f.sport, 40000);
	assert_int_equal(f.dport, 443);
	assert_int_equal(f.mark, ACCT_MARK(3));
	assert_int_equal(ACCT_MARK_SLOT(f.mark), 3);
	assert_int_equal(f.id, 1234);
	assert_true(f.has_counters);
	assert_int_equal(f.bytes_out, 1000);
	assert_int_equal(f.packets_out, 10);
	assert_int_equal(f.bytes_in, 1048576);
	assert_int_equal(f.packets_in, 20);
	assert_int_equal(f.src.family, AF_INET);
	assert_memory_equal(f.dst.a, "\xc6\x33\x64\x0a", 4);
}

static void test_ct_truncated(void **state)
{
	struct nlmsghdr *nlh = ct_msg(IPCTNL_MSG_CT_DELETE, IPPROTO_TCP, ACCT_MARK(3), true);
	uint32_t full = nlh->nlmsg_len;
	struct ct_flow f;

	(void)state;
	/* Every prefix of the message is refused or parsed, never overread (ASan). */
	for (uint32_t n = 0; n < full; n++) {
		nlh->nlmsg_len = n;
		assert_true(ct_parse(nlh, n, &f) < 0 || n >= 20);
	}
	/* A length field larger than the buffer. */
	nlh->nlmsg_len = full + 100;
	assert_int_equal(ct_parse(nlh, full, &f), -EBADMSG);
	/* Another subsystem. */
	nlh->nlmsg_len = full;
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | IPCTNL_MSG_CT_DELETE;
	assert_int_equal(ct_parse(nlh, full, &f), -EPROTONOSUPPORT);
}

static void test_mark_slot(void **state)
{
	(void)state;
	assert_int_equal(ACCT_MARK_SLOT(ACCT_MARK(0)), 0);
	assert_int_equal(ACCT_MARK_SLOT(ACCT_MARK(16383)), 16383);
	/* the SNI check's done bit (fw.h) is not part of the slot */
	assert_int_equal(ACCT_MARK_SLOT(ACCT_MARK(3) | 0x8000u), 3);
	assert_int_equal(ACCT_MARK_SLOT(ACCT_MARK(16383) | 0x8000u), 16383);
	assert_int_equal(ACCT_MARK_SLOT(0u), -1);
	assert_int_equal(ACCT_MARK_SLOT(0x12340005u), -1);	/* someone else's mark */
	assert_int_equal(ACCT_MARK_SLOT(ACCT_MARK_BASE), -1);	/* no slot */
}

static void test_conn_json(void **state)
{
	struct nlmsghdr *nlh = ct_msg(IPCTNL_MSG_CT_DELETE, IPPROTO_TCP, ACCT_MARK(3), true);
	struct ct_flow f;
	json_t *o;
	char *s;

	(void)state;
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &f), CT_EV_DESTROY);
	o = ct_conn_json(&f, "sb1", "python-dev", "pypi.org", 0);
	assert_non_null(o);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	assert_string_equal(s,
			    "{\"sandbox\":\"sb1\",\"policy\":\"python-dev\",\"proto\":\"tcp\","
			    "\"src\":\"10.87.0.2\",\"sport\":40000,\"dst\":\"198.51.100.10\","
			    "\"dport\":443,\"domain\":\"pypi.org\",\"bytes_out\":1000,"
			    "\"bytes_in\":1048576,\"packets_out\":10,\"packets_in\":20,"
			    "\"start\":\"2025-11-30T05:20:00.123Z\",\"end\":\"2025-11-30T05:20:02.623Z\","
			    "\"duration_s\":2.5}");
	free(s);
	json_decref(o);
}

/*
 * A connection the SNI/Host check refused (its entry's ct mark has
 * FW_SNI_DROP_CTMARK under the check's bits, the slot kept): its conn record
 * says verdict deny, reason sni-check; a watched, done or unwatched one has
 * neither.
 */
static void test_conn_json_sni_refused(void **state)
{
	static const struct {
		uint32_t bits;
		bool refused;
	} cases[] = {
		{ FW_SNI_DROP_CTMARK, true },
		{ FW_SNI_DROP_CTMARK | FW_SNI_DONE_CTMARK, false },	/* not a value netd sets */
		{ FW_SNI_WATCH_ENFORCE, false },
		{ FW_SNI_WATCH_LOG, false },
		{ FW_SNI_DONE_CTMARK, false },
		{ 0, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nlmsghdr *nlh = ct_msg(IPCTNL_MSG_CT_DELETE, IPPROTO_TCP,
					      ACCT_MARK(3) | cases[i].bits, true);
		struct ct_flow f;
		json_t *o;

		assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &f), CT_EV_DESTROY);
		assert_int_equal(ACCT_MARK_SLOT(f.mark), 3);
		assert_int_equal(ct_flow_sni_refused(&f), cases[i].refused);
		o = ct_conn_json(&f, "sb1", "p", "example.com", 0);
		assert_non_null(o);
		if (cases[i].refused) {
			assert_string_equal(json_string_value(json_object_get(o, "verdict")), "deny");
			assert_string_equal(json_string_value(json_object_get(o, "reason")), "sni-check");
		} else {
			assert_null(json_object_get(o, "verdict"));
			assert_null(json_object_get(o, "reason"));
		}
		json_decref(o);
	}
}

static void test_conn_json_icmp_update(void **state)
{
	struct nlmsghdr *nlh = ct_msg(IPCTNL_MSG_CT_NEW, IPPROTO_ICMP, ACCT_MARK(0), false);
	struct ct_flow f;
	json_t *o;

	(void)state;
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &f), CT_EV_NEW);
	assert_false(f.has_counters);
	f.stop_ns = 0;	/* live: "end" is now */
	o = ct_conn_json(&f, "sb1", "p", NULL, 1764480003123000000ull);
	assert_true(json_is_null(json_object_get(o, "sport")));
	assert_true(json_is_null(json_object_get(o, "domain")));
	assert_int_equal(json_integer_value(json_object_get(o, "icmp_type")), 8);
	assert_string_equal(json_string_value(json_object_get(o, "end")), "2025-11-30T05:20:03.123Z");
	assert_true(json_real_value(json_object_get(o, "duration_s")) == 3.0);
	json_decref(o);
}

static struct nlmsghdr *log_msg(const uint8_t *pkt, size_t n, const char *prefix)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	mnl_attr_put_strz(nlh, NFULA_PREFIX, prefix);
	mnl_attr_put_u32(nlh, NFULA_IFINDEX_INDEV, htonl(7));
	mnl_attr_put(nlh, NFULA_PAYLOAD, n, pkt);
	return nlh;
}

static void test_log_tcp(void **state)
{
	/* IPv4, IHL 5, TCP, 10.87.0.2 -> 203.0.113.66, 40000 -> 80 (RFC 791, RFC 793). */
	static const uint8_t pkt[] = {
		0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 87, 0, 2, 203, 0, 113, 66,
		0x9c, 0x40, 0, 80, 0, 0, 0, 0,
	};
	struct nlmsghdr *nlh = log_msg(pkt, sizeof(pkt), "netd:not-pinned");
	struct ct_logpkt p;
	json_t *o;
	char *s;

	(void)state;
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), 0);
	assert_string_equal(p.prefix, "netd:not-pinned");
	assert_int_equal(p.indev, 7);
	assert_int_equal(p.proto, IPPROTO_TCP);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 80);
	assert_int_equal(p.len, 60);
	assert_int_equal(p.mark, 0);	/* no NFULA_MARK: no mark */
	/* The packet mark (a chained container's bridge-checked bit, netd/fw.h). */
	mnl_attr_put_u32(nlh, NFULA_MARK, htonl(0x00800001));
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), 0);
	assert_int_equal(p.mark, 0x00800001);
	nlh = log_msg(pkt, sizeof(pkt), "netd:not-pinned");
	mnl_attr_put_u16(nlh, NFULA_MARK, htons(1));	/* not 4 bytes: no mark */
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), 0);
	assert_int_equal(p.mark, 0);
	o = ct_deny_json(&p, "sb1", "python-dev", NULL, "not-pinned", 4, NULL);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(s, "{\"sandbox\":\"sb1\",\"policy\":\"python-dev\",\"proto\":\"tcp\","
			       "\"src\":\"10.87.0.2\",\"sport\":40000,\"dst\":\"203.0.113.66\","
			       "\"dport\":80,\"domain\":null,\"reason\":\"not-pinned\","
			       "\"count\":1,\"suppressed\":4}");
	free(s);
	json_decref(o);
	{	/* three SYNs of one attempt, folded into one record */
		struct ct_deny_span sp = { .count = 3, .first_ns = 1764480003123000000ull,
					   .last_ns = 1764480006125000000ull };

		o = ct_deny_json(&p, "sb1", "python-dev", "pypi.org", "not-pinned", 0, &sp);
		s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		assert_non_null(strstr(s, "\"reason\":\"not-pinned\",\"count\":3,"
					  "\"first\":\"2025-11-30T05:20:03.123Z\","
					  "\"last\":\"2025-11-30T05:20:06.125Z\",\"suppressed\":0}"));
		free(s);
		json_decref(o);
	}
}

/* @f: a TCP/IPv4 flow @src:@sport -> @dst:@dport, everything else zero. */
static void tcp4(struct ct_flow *f, const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	memset(f, 0, sizeof(*f));
	f->src.family = f->dst.family = AF_INET;
	inet_pton(AF_INET, src, f->src.a);
	inet_pton(AF_INET, dst, f->dst.a);
	f->proto = IPPROTO_TCP;
	f->sport = sport;
	f->dport = dport;
}

/* ct_put_get(): the tuple and id it sends decode back (as an entry would). */
static void test_put_get(void **state)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct ct_flow f = { 0 }, g;
	struct nlmsghdr *nlh;

	(void)state;
	tcp4(&f, "10.87.0.2", 40000, "198.51.100.10", 443);
	f.id = 0x12345678;
	nlh = ct_put_get(req, &f, 9);
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(nlh->nlmsg_seq, 9);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &g), CT_EV_NEW);
	assert_true(addr_equal(&g.src, &f.src));
	assert_true(addr_equal(&g.dst, &f.dst));
	assert_int_equal(g.sport, 40000);
	assert_int_equal(g.dport, 443);
	assert_int_equal(g.proto, IPPROTO_TCP);
	assert_int_equal(g.id, 0x12345678);
}

/*
 * ct_put_get_reply(): the same request by reply tuple: its one tuple is
 * CTA_TUPLE_REPLY (an entry message needs the original, so ct_parse()
 * refuses it as it is), whose values decode back once it is called original.
 */
static void test_put_get_reply(void **state)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct ct_flow f = { 0 }, g;
	struct nlmsghdr *nlh;
	struct nlattr *at;
	int n = 0;

	(void)state;
	tcp4(&f, "10.87.0.1", 15443, "10.87.0.2", 40000);
	nlh = ct_put_get_reply(req, &f, 10);
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET);
	assert_int_equal(nlh->nlmsg_seq, 10);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &g), -EBADMSG);
	mnl_attr_for_each(at, nlh, sizeof(struct nfgenmsg)) {
		assert_int_equal(mnl_attr_get_type(at), CTA_TUPLE_REPLY);
		at->nla_type = (at->nla_type & ~NLA_TYPE_MASK) | CTA_TUPLE_ORIG;
		n++;
	}
	assert_int_equal(n, 1);
	assert_int_equal(ct_parse(nlh, nlh->nlmsg_len, &g), CT_EV_NEW);
	assert_true(addr_equal(&g.src, &f.src));
	assert_true(addr_equal(&g.dst, &f.dst));
	assert_int_equal(g.sport, 15443);
	assert_int_equal(g.dport, 40000);
	assert_int_equal(g.proto, IPPROTO_TCP);
}

/* ct_open_json(): the conn_open record body. */
static void test_open_json(void **state)
{
	struct ct_flow f = { 0 };
	json_t *o;
	char *s;

	(void)state;
	tcp4(&f, "10.87.0.2", 40000, "198.51.100.10", 443);
	o = ct_open_json(&f, "sb1", "python-dev", "pypi.org", 1764480003123000000ull);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(s, "{\"sandbox\":\"sb1\",\"policy\":\"python-dev\",\"proto\":\"tcp\","
			       "\"src\":\"10.87.0.2\",\"sport\":40000,\"dst\":\"198.51.100.10\","
			       "\"dport\":443,\"domain\":\"pypi.org\","
			       "\"start\":\"2025-11-30T05:20:03.123Z\"}");
	free(s);
	json_decref(o);
}

static void test_log_bad_payloads(void **state)
{
	static const uint8_t short4[] = { 0x45, 0, 0, 20 };
	static const uint8_t bad_ihl[20] = { 0x41 };
	static const uint8_t v5[40] = { 0x50 };
	/* A non-first fragment: no ports read from its payload. */
	static const uint8_t frag[] = {
		0x45, 0, 0, 28, 0, 0, 0x00, 0x10, 64, 17, 0, 0, 10, 87, 0, 2, 203, 0, 113, 66,
		1, 2, 3, 4, 5, 6, 7, 8,
	};
	struct nlmsghdr *nlh;
	struct ct_logpkt p;

	(void)state;
	nlh = log_msg(short4, sizeof(short4), "netd:x");
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), -EBADMSG);
	nlh = log_msg(bad_ihl, sizeof(bad_ihl), "netd:x");
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), -EBADMSG);
	nlh = log_msg(v5, sizeof(v5), "netd:x");
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), -EPROTONOSUPPORT);
	nlh = log_msg(frag, sizeof(frag), "netd:x");
	assert_int_equal(ct_parse_log(nlh, nlh->nlmsg_len, &p), 0);
	assert_int_equal(p.proto, IPPROTO_UDP);
	assert_int_equal(p.sport, 0);
	assert_int_equal(p.dport, 0);
}

static int walked;

static void count_cb(const void *msg, size_t len, void *arg)
{
	(void)msg;
	(void)len;
	(void)arg;
	walked++;
}

/* A fuzz find: nlmsg_len 0xfd000058 passed mnl_nlmsg_ok() as negative. */
static void test_walk_huge_len(void **state)
{
	uint32_t m[8] = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)m;

	(void)state;
	nlh->nlmsg_len = 0xfd000058u;
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	walked = 0;
	assert_int_equal(ct_walk(m, sizeof(m), 0, count_cb, NULL), -EBADMSG);
	assert_int_equal(walked, 0);
	/* Two good messages, then NLMSG_DONE. */
	memset(m, 0, sizeof(m));
	m[0] = 16;
	m[1] = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	m[4] = 16;
	m[5] = NLMSG_DONE;
	assert_int_equal(ct_walk(m, 32, 0, count_cb, NULL), 1);
	assert_int_equal(walked, 1);
}

/* ct_put_request(): the header ctnetlink expects, attributes after it. */
static void test_put_request(void **state)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = ct_put_request(req, IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET6, 77);
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);

	(void)state;
	assert_ptr_equal(nlh, req);
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(nlh->nlmsg_seq, 77);
	assert_int_equal(nlh->nlmsg_len, MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*g)));
	assert_int_equal(g->nfgen_family, AF_INET6);
	assert_int_equal(g->version, NFNETLINK_V0);
	assert_int_equal(g->res_id, 0);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(1));
	assert_int_equal(nlh->nlmsg_len, MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*g)) + 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ct_destroy),
		cmocka_unit_test(test_ct_truncated),
		cmocka_unit_test(test_mark_slot),
		cmocka_unit_test(test_conn_json),
		cmocka_unit_test(test_conn_json_icmp_update),
		cmocka_unit_test(test_conn_json_sni_refused),
		cmocka_unit_test(test_log_tcp),
		cmocka_unit_test(test_log_bad_payloads),
		cmocka_unit_test(test_walk_huge_len),
		cmocka_unit_test(test_put_request),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_put_get_reply),
		cmocka_unit_test(test_open_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
