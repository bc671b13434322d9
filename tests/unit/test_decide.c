/*
 * test_decide - the pure decision: which queries go upstream (through the
 * real policy parser and matcher), which pins an answer yields (on
 * hand-built policies, so cases the parser forbids are covered too), the
 * rebinding filter and the TTL clamp.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/special.h"
#include "dnsproxy/decide.h"
#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"

/* The decision's view of a netd policy, for a struct decide_ctx (lives
 * as long as the enclosing block). */
#define VIEW(pol) ((const struct decide_policy[]){ policy_dns_view(pol) })

static const char policy_yaml[] =
	"name: t\n"
	"egress:\n"
	"  - domains: [pypi.org, files.pythonhosted.org]\n"	/* rule 0 */
	"    ports: [443]\n"
	"  - domains: [\"*.openai.com\"]\n"	/* rule 1 */
	"    ports: [443, 80]\n"
	"  - cidrs: [198.51.100.7/32]\n"	/* rule 2 */
	"    ports: [8080]\n"
	"  - domains: [api.openai.com]\n"	/* rule 3 */
	"    ports: [53]\n"
	"    protocol: udp\n";

static struct wire_query query(const char *name, uint16_t qtype, uint16_t qclass)
{
	uint8_t b[300];
	size_t n = 0;
	struct wire_query q;

	memcpy(b, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	n = 12;
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		b[n++] = (uint8_t)l;
		memcpy(b + n, name, l);
		n += l;
		name += l + (dot ? 1 : 0);
	}
	b[n++] = 0;
	b[n++] = (uint8_t)(qtype >> 8);
	b[n++] = (uint8_t)qtype;
	b[n++] = (uint8_t)(qclass >> 8);
	b[n++] = (uint8_t)qclass;
	assert_int_equal(wire_parse_query(b, n, &q), 0);
	return q;
}

static int setup(void **state)
{
	struct policy *p = NULL;
	struct diag err;

	memset(&err, 0, sizeof(err));
	if (policy_parse(policy_yaml, strlen(policy_yaml), "t.yaml", &p, &err) < 0) {
		fprintf(stderr, "%s:%u:%u: %s\n", err.file, err.line, err.col, err.msg);
		return -1;
	}
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	policy_free(*state);
	return 0;
}

static void test_query_verdicts(void **state)
{
	const struct policy *p = *state;
	struct decide_ctx c = { .policy = VIEW(p), .min_ttl_s = 5, .max_ttl_s = 3600 };
	uint16_t rules[DECIDE_MAX_RULES];
	struct wire_query q;
	size_t n;

	q = query("PyPI.org", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_ALLOW);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0], 0);

	/* Wildcard covers names below, not the apex. */
	q = query("cdn.eu.openai.com", WIRE_TYPE_AAAA, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_ALLOW);
	assert_int_equal(n, 1);
	assert_int_equal(rules[0], 1);
	q = query("openai.com", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY);
	assert_int_equal(n, 0);

	/* Two rules match, ascending. */
	q = query("api.openai.com", WIRE_TYPE_HTTPS, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_ALLOW);
	assert_int_equal(n, 2);
	assert_int_equal(rules[0], 1);
	assert_int_equal(rules[1], 3);

	q = query("evil.example", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY);
	q = query("pypi.org.evil.example", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY);
	q = query("xpypi.org", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY);

	/* Class CH (version.bind-style) and odd bytes never match. */
	q = query("pypi.org", WIRE_TYPE_TXT, 3);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY_CLASS);
	q = query("py pi.org", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_false(q.qname_plain);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY_NAME);
	q = query("", WIRE_TYPE_NS, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY_NAME);

	/* No policy: deny. */
	c.policy = NULL;
	q = query("pypi.org", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_DENY);
}

/* What netd answers itself, for any name, before cache and policy. */
static void test_local(void **state)
{
	static const struct {
		uint16_t qtype, rcode;
	} cases[] = {
		{ 0, WIRE_RCODE_FORMERR }, { WIRE_TYPE_OPT, WIRE_RCODE_FORMERR },
		{ 128, WIRE_RCODE_FORMERR }, { 200, WIRE_RCODE_FORMERR },
		{ 248, WIRE_RCODE_FORMERR }, { WIRE_TYPE_TKEY, WIRE_RCODE_FORMERR },
		{ WIRE_TYPE_TSIG, WIRE_RCODE_FORMERR }, { 65535, WIRE_RCODE_FORMERR },
		{ WIRE_TYPE_IXFR, WIRE_RCODE_REFUSED }, { WIRE_TYPE_AXFR, WIRE_RCODE_REFUSED },
		{ WIRE_TYPE_MAILB, WIRE_RCODE_NOTIMP }, { WIRE_TYPE_MAILA, WIRE_RCODE_NOTIMP },
		{ WIRE_TYPE_MD, WIRE_RCODE_NOTIMP }, { WIRE_TYPE_MF, WIRE_RCODE_NOTIMP },
		/* forwarded: data types, unknown and private ones, ANY */
		{ WIRE_TYPE_A, 0 }, { WIRE_TYPE_AAAA, 0 }, { WIRE_TYPE_NS, 0 },
		{ WIRE_TYPE_CNAME, 0 }, { WIRE_TYPE_SOA, 0 }, { WIRE_TYPE_TXT, 0 },
		{ WIRE_TYPE_DNAME, 0 }, { WIRE_TYPE_HTTPS, 0 }, { 48, 0 }, { 127, 0 },
		{ WIRE_TYPE_ANY, 0 }, { 256, 0 }, { 666, 0 }, { 65280, 0 }, { 65534, 0 },
	};
	const char *reason;
	struct wire_query q;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		q = query("pypi.org", cases[i].qtype, WIRE_CLASS_IN);
		reason = NULL;
		if (decide_local(&q, &reason) != cases[i].rcode)
			fail_msg("qtype %u: want rcode %u", cases[i].qtype, cases[i].rcode);
		if (cases[i].rcode)
			assert_non_null(reason);
	}

	/* EDNS: version 0 goes on, any other is BADVERS whatever the qtype. */
	q = query("pypi.org", WIRE_TYPE_A, WIRE_CLASS_IN);
	q.has_opt = true;
	assert_int_equal(decide_local(&q, &reason), 0);
	q.edns_version = 1;
	assert_int_equal(decide_local(&q, &reason), WIRE_RCODE_BADVERS);
	assert_string_equal(reason, "badvers");
	q.qtype = WIRE_TYPE_AXFR;
	q.edns_version = 255;
	assert_int_equal(decide_local(&q, &reason), WIRE_RCODE_BADVERS);
	q.has_opt = false;	/* no OPT, no version */
	assert_int_equal(decide_local(&q, &reason), WIRE_RCODE_REFUSED);
}

static void test_query_many_rules(void **state)
{
	char yaml[8192];
	size_t o;
	struct policy *p = NULL;
	struct diag err;
	uint16_t rules[DECIDE_MAX_RULES];
	struct wire_query q;
	size_t n;

	o = (size_t)snprintf(yaml, sizeof(yaml), "name: many\negress:\n");
	for (int i = 0; i < DECIDE_MAX_RULES + 8; i++)
		o += (size_t)snprintf(yaml + o, sizeof(yaml) - o,
				      "  - domains: [a.test]\n    ports: [%d]\n", 1000 + i);
	memset(&err, 0, sizeof(err));
	assert_int_equal(policy_parse(yaml, o, "many.yaml", &p, &err), 0);
	{
		struct decide_ctx c = { .policy = VIEW(p), .min_ttl_s = 5, .max_ttl_s = 60 };

		q = query("a.test", WIRE_TYPE_A, WIRE_CLASS_IN);
		assert_int_equal(decide_query(&c, &q, rules, &n), DECIDE_ALLOW);
		assert_int_equal(n, DECIDE_MAX_RULES);
		assert_int_equal(rules[DECIDE_MAX_RULES - 1], DECIDE_MAX_RULES - 1);
	}
	policy_free(p);
}

/* A policy built by hand: rule 0 tcp 443+80, rule 1 udp 53 + a range
 * (which the parser would reject), rule 2 a cidr rule. */
static struct port_range r0_ports[] = { { 443, 443 }, { 80, 80 } };
static struct port_range r1_ports[] = { { 53, 53 }, { 9000, 9010 } };
static struct port_range r2_ports[] = { { 22, 22 } };
static char *r0_domains[] = { "a.test" };
static char *r1_domains[] = { "a.test" };
static struct policy_rule hand_rules[] = {
	{ .domains = r0_domains, .n_domains = 1, .ports = r0_ports, .n_ports = 2,
	  .proto = IPPROTO_TCP },
	{ .domains = r1_domains, .n_domains = 1, .ports = r1_ports, .n_ports = 2,
	  .proto = IPPROTO_UDP },
	{ .n_domains = 0, .ports = r2_ports, .n_ports = 1, .proto = IPPROTO_TCP },
};
static struct policy hand = { .name = "hand", .rules = hand_rules, .n_rules = 3 };

static struct wire_addr waddr(const char *ip, uint32_t ttl)
{
	struct wire_addr a;

	memset(&a, 0, sizeof(a));
	assert_int_equal(addr_parse(ip, &a.addr), 0);
	a.ttl_s = ttl;
	return a;
}

static void assert_pin(const struct pin *p, const char *ip, uint8_t proto, uint16_t port,
		       uint32_t timeout_ms)
{
	char buf[ADDR_STRLEN];

	assert_string_equal(addr_format(&p->addr, buf, sizeof(buf)), ip);
	assert_int_equal(p->proto, proto);
	assert_int_equal(p->port, port);
	assert_int_equal(p->timeout_ms, timeout_ms);
}

static void test_pins(void **state)
{
	struct prefix internal[SPECIAL_TABLE_MAX];
	struct decide_ctx c = { .policy = VIEW(&hand), .internal = internal, .min_ttl_s = 5,
				.max_ttl_s = 3600 };
	uint16_t rules[] = { 0, 1, 2, 99 };	/* 2: cidr rule, 99: out of range */
	struct wire_addr a[] = {
		waddr("192.0.2.1", 1),		/* clamped up to 5 s */
		waddr("2001:db8::1", 86400),	/* clamped down to 3600 s */
		waddr("10.1.2.3", 60),		/* RFC 1918: rebinding */
		waddr("::ffff:192.0.2.1", 60),	/* mapped: rebinding */
		waddr("192.0.2.1", 100),	/* same address again: longer wins */
	};
	struct pin pins[16];
	size_t rebind;
	int n;

	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	assert_int_equal(c.n_internal, special_table_n - 5);	/* no documentation blocks */

	n = decide_pins(&c, rules, 4, a, 5, pins, 16, &rebind);
	assert_int_equal(n, 6);
	assert_int_equal(rebind, 2);
	assert_pin(&pins[0], "192.0.2.1", IPPROTO_TCP, 443, 100000);
	assert_pin(&pins[1], "192.0.2.1", IPPROTO_TCP, 80, 100000);
	assert_pin(&pins[2], "192.0.2.1", IPPROTO_UDP, 53, 100000);
	assert_pin(&pins[3], "2001:db8::1", IPPROTO_TCP, 443, 3600000);
	assert_pin(&pins[4], "2001:db8::1", IPPROTO_TCP, 80, 3600000);
	assert_pin(&pins[5], "2001:db8::1", IPPROTO_UDP, 53, 3600000);

	/* Not enough room. */
	assert_int_equal(decide_pins(&c, rules, 4, a, 5, pins, 5, &rebind), -ENOBUFS);

	/* Only rule 1: its range is never pinned. */
	n = decide_pins(&c, &rules[1], 1, a, 1, pins, 16, &rebind);
	assert_int_equal(n, 1);
	assert_pin(&pins[0], "192.0.2.1", IPPROTO_UDP, 53, 5000);

	/* min_ttl 0 still gives a timeout > 0; max below min is raised. */
	c.min_ttl_s = 0;
	c.max_ttl_s = 0;
	a[0].ttl_s = 0;
	n = decide_pins(&c, &rules[1], 1, a, 1, pins, 16, &rebind);
	assert_int_equal(n, 1);
	assert_int_equal(pins[0].timeout_ms, 1000);

	/* Nothing to pin. */
	assert_int_equal(decide_pins(&c, rules, 0, a, 5, pins, 16, &rebind), 0);
}

/* Per-rule keys: min_ttl raises the pin floor, max_qname_length caps names. */
static void test_rule_keys(void **state)
{
	static const char yaml[] =
		"name: k\n"
		"egress:\n"
		"  - domains: [\"*.cdn.test\"]\n"	/* rule 0 */
		"    ports: [443]\n"
		"    min_ttl: 600\n"
		"    max_qname_length: 20\n"
		"  - domains: [\"*.cdn.test\"]\n"	/* rule 1: no cap, port 8443 */
		"    ports: [8443]\n"
		"  - domains: [\"*.tun.test\"]\n"	/* rule 2 */
		"    ports: [443]\n"
		"    max_qname_length: 12\n";
	struct policy *p = NULL;
	struct diag err;
	struct decide_ctx c = { .min_ttl_s = 5, .max_ttl_s = 3600 };
	struct wire_query q;
	struct wire_addr a[] = { waddr("192.0.2.9", 30) };
	struct pin pins[8];
	uint16_t rules[DECIDE_MAX_RULES];
	size_t n_rules, rebind;
	int n;

	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(policy_parse(yaml, strlen(yaml), "k.yaml", &p, &err), 0);
	c.policy = VIEW(p);

	q = query("a.cdn.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	assert_int_equal(n_rules, 2);
	n = decide_pins(&c, rules, n_rules, a, 1, pins, 8, &rebind);
	assert_int_equal(n, 2);
	assert_pin(&pins[0], "192.0.2.9", IPPROTO_TCP, 443, 600000);	/* rule min_ttl */
	assert_pin(&pins[1], "192.0.2.9", IPPROTO_TCP, 8443, 30000);	/* the TTL */

	/* Longer than rule 0's cap: only rule 1 matches (no 443 pin). */
	q = query("abcdefghijklmno.cdn.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	assert_int_equal(n_rules, 1);
	assert_int_equal(rules[0], 1);

	/* Every matching rule capped: denied as too long. */
	q = query("ab.tun.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	q = query("abcdef.tun.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_DENY_LONG);
	assert_int_equal(n_rules, 0);
	q = query("x.other.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_DENY);

	/* A min_ttl above max_ttl still wins for the pin. */
	c.max_ttl_s = 60;
	q = query("a.cdn.test", WIRE_TYPE_A, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	n = decide_pins(&c, rules, n_rules, a, 1, pins, 8, &rebind);
	assert_int_equal(n, 2);
	assert_int_equal(pins[0].timeout_ms, 600000);
	policy_free(p);
}

static void test_internal_default(void **state)
{
	static const char *const inside[] = {
		"0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.255", "127.0.0.1",
		"169.254.169.254", "172.16.0.1", "172.31.255.255", "192.168.1.1", "192.0.0.8",
		"198.18.0.1", "198.19.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
		"255.255.255.255", "::", "::1", "::ffff:127.0.0.1", "64:ff9b::a00:1",
		"64:ff9b:1::1", "2002:a00:1::1", "fc00::1", "fd12::1", "fe80::1", "ff02::1",
		"100::1", "::169.254.169.254", "::ffff:0:a9fe:a9fe", "fec0::1",
		/* issue 13: pinned and reachable on main */
		"168.63.129.16", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1",
		"100:0:0:1::1", "5f00::1", "3fff::1" /* documentation, with the flag */,
		"192.88.99.1", "192.31.196.1", "2620:4f:8000::1", "fd00:ec2::254",
	};
	static const char *const outside[] = {
		"1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "198.17.255.255",
		"198.20.0.0", "223.255.255.255", "11.0.0.1", "2606:4700::1111", "64:ff9b:2::1",
		"::1:0:0:1", "168.63.129.17", "2001:200::1",
	};
	static const char *const doc[] = { "192.0.2.1", "198.51.100.1", "203.0.113.5",
					   "2001:db8::1", "3fff::1" };
	struct prefix internal[SPECIAL_TABLE_MAX];
	struct decide_ctx c = { .internal = internal };
	struct addr a;

	(void)state;
	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, SPECIAL_WITH_DOC);
	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
		assert_int_equal(addr_parse(inside[i], &a), 0);
		if (!decide_never_pin(&c, &a))
			fail_msg("%s should be internal", inside[i]);
	}
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		assert_int_equal(addr_parse(outside[i], &a), 0);
		if (decide_never_pin(&c, &a))
			fail_msg("%s should not be internal", outside[i]);
	}
	/* Documentation blocks: never pinned only when the config says so
	 * (the test world serves on them). */
	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
		assert_int_equal(addr_parse(doc[i], &a), 0);
		assert_false(decide_never_pin(&c, &a));
	}
}

/*
 * decide_internal_index(): the same answer with the index as without, for
 * every address of test_internal_default's lists, for the first and last
 * address of every prefix and its neighbours, and for random addresses
 * (seeded: repeatable), with and without the documentation blocks and a
 * host prefix shorter than 16 bits.
 */
static void test_internal_index_same(void **state)
{
	static struct decide_internal_ix ix;
	struct prefix internal[SPECIAL_TABLE_MAX + 2];
	struct decide_ctx plain = { .internal = internal }, fast;
	unsigned int seed = 31;

	(void)state;
	for (int with_doc = 0; with_doc < 2; with_doc++) {
		plain.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX,
						    with_doc ? SPECIAL_WITH_DOC : 0);
		assert_int_equal(prefix_parse("44.0.0.0/7", &internal[plain.n_internal++]), 0);
		assert_int_equal(prefix_parse("2a00::/12", &internal[plain.n_internal++]), 0);
		decide_internal_index(internal, plain.n_internal, &ix);
		fast = plain;
		fast.internal_ix = &ix;
		for (size_t i = 0; i < plain.n_internal; i++) {
			for (int d = -1; d <= 1; d++) {
				struct addr a = internal[i].addr, b;
				size_t len = a.family == AF_INET ? 4 : 16;

				/* The prefix's first address, and one below it
				 * and above its last (the byte after the prefix
				 * bits flipped). */
				if (d < 0 && a.a[len - 1]-- == 0)
					continue;
				if (d > 0)
					for (size_t k = internal[i].plen / 8; k < len; k++)
						a.a[k] = 0xff;
				b = a;
				assert_int_equal(decide_never_pin(&fast, &b), decide_never_pin(&plain, &a));
			}
		}
		for (int i = 0; i < 200000; i++) {
			struct addr a = { .family = i % 2 ? AF_INET6 : AF_INET };

			for (size_t k = 0; k < 16; k++)
				a.a[k] = (uint8_t)(rand_r(&seed) >> 7);
			if (i % 7 == 0)	/* often inside the small blocks */
				a.a[1] = 0;
			if (decide_never_pin(&fast, &a) != decide_never_pin(&plain, &a)) {
				char buf[ADDR_STRLEN];

				fail_msg("%s: index and scan differ", addr_format(&a, buf, sizeof(buf)));
			}
		}
	}
}

/*
 * The findings: an allowed name answered with Azure's WireServer address or
 * a Teredo address got a pin on main.  And the embedded check: a host
 * address (runtime data, not a special block) reached through an IPv6 form
 * that carries it is refused even by a context that lists only the host.
 */
static void test_never_pin_findings(void **state)
{
	struct prefix internal[SPECIAL_TABLE_MAX + 1];
	struct decide_ctx c = { .policy = VIEW(&hand), .internal = internal, .min_ttl_s = 5,
				.max_ttl_s = 3600 };
	uint16_t rules[] = { 0 };
	struct wire_addr a[] = {
		waddr("168.63.129.16", 60),			/* Azure WireServer */
		waddr("2001:0:4136:e378:8000:63bf:3fff:fdd2", 60),	/* Teredo */
		waddr("::ffff:168.63.129.16", 60),
		waddr("2002:a83f:8110::1", 60),			/* 6to4 of the WireServer */
		waddr("100.100.100.200", 60),			/* Alibaba metadata */
		waddr("fd00:ec2::254", 60),			/* AWS IMDS, IPv6 */
		waddr("192.0.2.1", 60),				/* documentation: pinned */
	};
	struct pin pins[16];
	size_t rebind;
	int n;

	(void)state;
	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	n = decide_pins(&c, rules, 1, a, sizeof(a) / sizeof(a[0]), pins, 16, &rebind);
	assert_int_equal(rebind, 6);
	assert_int_equal(n, 2);		/* rule 0: ports 443 and 80 */
	assert_pin(&pins[0], "192.0.2.1", IPPROTO_TCP, 443, 60000);
	assert_pin(&pins[1], "192.0.2.1", IPPROTO_TCP, 80, 60000);

	/* Only the host's own 203.0.113.9 listed: its embedded forms are refused. */
	{
		struct wire_addr e[] = {
			waddr("203.0.113.9", 60),
			waddr("64:ff9b::cb00:7109", 60),	/* NAT64 */
			waddr("2002:cb00:7109::1", 60),		/* 6to4 */
			waddr("2001:0:cb00:7109::1", 60),	/* Teredo server */
			waddr("2001:0:5ef5:79fd:0:f227:34ff:8ef6", 60),	/* Teredo client, inverted */
			waddr("::ffff:0:cb00:7109", 60),	/* IPv4-translated */
			waddr("2001:db8::cb00:7109", 60),	/* no embedding: pinned */
		};

		assert_int_equal(prefix_parse("203.0.113.9/32", &internal[0]), 0);
		c.n_internal = 1;
		n = decide_pins(&c, rules, 1, e, sizeof(e) / sizeof(e[0]), pins, 16, &rebind);
		assert_int_equal(rebind, 6);
		assert_int_equal(n, 2);
		assert_pin(&pins[0], "2001:db8::cb00:7109", IPPROTO_TCP, 443, 60000);
	}
}

/*
 * A name matched by a rule with gateway: and a plain rule: the gateway
 * rule's pins are flagged, the plain rule's are not, and a port both rules
 * name gets the gateway pin only (one element, in gw4), with the longer
 * timeout of the two (the plain rule's min_ttl here): two elements would
 * lapse apart, and the plain one would let the sandbox past the gateway.
 * Through policy_dns_view(), so the view carries the flag.
 */
static struct port_range gw_ports[] = { { 443, 443 } };
static struct port_range gw_plain_ports[] = { { 443, 443 }, { 80, 80 } };
static char *gw_domains[] = { "api.test" };
static char *gw_plain_domains[] = { "*.test" };
static struct policy_gateway gw_block = { .line = 1 };
static struct policy_rule gw_rules[] = {
	{ .domains = gw_domains, .n_domains = 1, .ports = gw_ports, .n_ports = 1,
	  .proto = IPPROTO_TCP, .gateway = &gw_block },
	{ .domains = gw_plain_domains, .n_domains = 1, .ports = gw_plain_ports, .n_ports = 2,
	  .proto = IPPROTO_TCP, .min_ttl_s = 300 },
};
static struct policy gw_pol = { .name = "gw", .rules = gw_rules, .n_rules = 2 };

static void test_pins_gateway(void **state)
{
	struct decide_ctx c = { .policy = VIEW(&gw_pol), .min_ttl_s = 5, .max_ttl_s = 3600 };
	uint16_t rules[4] = { 0, 1 };
	struct wire_addr a[] = { waddr("198.51.100.10", 60), waddr("198.51.100.10", 90) };
	struct decide_rule view;
	struct pin pins[8];
	size_t rebind;
	int n;

	(void)state;
	assert_int_equal(c.policy->ops->rule(c.policy->pol, 0, &view), 0);
	assert_true(view.gateway);
	assert_int_equal(c.policy->ops->rule(c.policy->pol, 1, &view), 0);
	assert_false(view.gateway);

	/* Only the gateway rule: one gateway pin (the repeated address folded, longest TTL). */
	n = decide_pins(&c, rules, 1, a, 2, pins, 8, &rebind);
	assert_int_equal(n, 1);
	assert_pin(&pins[0], "198.51.100.10", IPPROTO_TCP, 443, 90000);
	assert_true(pins[0].gateway);

	/* Both rules: 443 through the gateway only, for the plain rule's min_ttl; 80 plain. */
	n = decide_pins(&c, rules, 2, a, 2, pins, 8, &rebind);
	assert_int_equal(n, 2);
	assert_pin(&pins[0], "198.51.100.10", IPPROTO_TCP, 443, 300000);
	assert_true(pins[0].gateway);
	assert_pin(&pins[1], "198.51.100.10", IPPROTO_TCP, 80, 300000);
	assert_false(pins[1].gateway);
	/* ... in either order of the rules */
	rules[0] = 1;
	rules[1] = 0;
	n = decide_pins(&c, rules, 2, a, 2, pins, 8, &rebind);
	assert_int_equal(n, 2);
	assert_pin(&pins[0], "198.51.100.10", IPPROTO_TCP, 80, 300000);
	assert_false(pins[0].gateway);
	assert_pin(&pins[1], "198.51.100.10", IPPROTO_TCP, 443, 300000);
	assert_true(pins[1].gateway);
	/* ... and another address of the answer keeps its own pins */
	{
		struct wire_addr b[] = { waddr("198.51.100.10", 60), waddr("198.51.100.11", 60) };

		n = decide_pins(&c, rules, 2, b, 2, pins, 8, &rebind);
		assert_int_equal(n, 4);
		assert_pin(&pins[2], "198.51.100.11", IPPROTO_TCP, 80, 300000);
		assert_false(pins[2].gateway);
		assert_pin(&pins[3], "198.51.100.11", IPPROTO_TCP, 443, 300000);
		assert_true(pins[3].gateway);
	}
	rules[0] = 0;
	rules[1] = 1;

	/* Only the plain rule: nothing flagged. */
	n = decide_pins(&c, &rules[1], 1, a, 1, pins, 8, &rebind);
	assert_int_equal(n, 2);
	assert_false(pins[0].gateway);
	assert_false(pins[1].gateway);
}

/*
 * decide_ech_strip(): an answer loses its ECH configs if any rule that
 * matched its name checks the SNI (one that keeps them does not outvote
 * it); cidr rules and no rules leave it alone.
 */
static void test_ech_strip(void **state)
{
	static const char yaml[] =
		"name: e\n"
		"egress:\n"
		"  - domains: [\"*.cdn.test\"]\n"	/* rule 0: checked, strips */
		"    ports: [443]\n"
		"    tls: { sni: enforce }\n"
		"  - domains: [\"*.cdn.test\", keep.test]\n"	/* rule 1: checked, keeps */
		"    ports: [443]\n"
		"    tls: { sni: log, ech: keep }\n"
		"  - domains: [plain.test]\n"	/* rule 2: no check */
		"    ports: [443]\n"
		"  - cidrs: [198.51.100.0/24]\n"	/* rule 3 */
		"    ports: [443]\n";
	struct policy *p = NULL;
	struct diag err;
	struct decide_ctx c = { .min_ttl_s = 5, .max_ttl_s = 3600 };
	struct decide_rule view;
	struct wire_query q;
	uint16_t rules[DECIDE_MAX_RULES];
	size_t n_rules;

	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(policy_parse(yaml, strlen(yaml), "e.yaml", &p, &err), 0);
	c.policy = VIEW(p);
	q = query("a.cdn.test", WIRE_TYPE_HTTPS, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	assert_int_equal(n_rules, 2);
	assert_true(decide_ech_strip(&c, rules, n_rules));	/* rule 0 wins over 1's keep */
	assert_false(decide_ech_strip(&c, &rules[1], 1));
	q = query("keep.test", WIRE_TYPE_HTTPS, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	assert_false(decide_ech_strip(&c, rules, n_rules));
	q = query("plain.test", WIRE_TYPE_HTTPS, WIRE_CLASS_IN);
	assert_int_equal(decide_query(&c, &q, rules, &n_rules), DECIDE_ALLOW);
	assert_false(decide_ech_strip(&c, rules, n_rules));
	assert_false(decide_ech_strip(&c, rules, 0));
	rules[0] = 3;
	assert_false(decide_ech_strip(&c, rules, 1));
	assert_int_equal(c.policy->ops->rule(c.policy->pol, 3, &view), 0);
	assert_false(view.ech_strip);
	rules[0] = 99;	/* no such rule (a reload): nothing to strip for */
	assert_false(decide_ech_strip(&c, rules, 1));
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_query_verdicts, setup, teardown),
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_query_many_rules),
		cmocka_unit_test(test_pins),
		cmocka_unit_test(test_rule_keys),
		cmocka_unit_test(test_pins_gateway),
		cmocka_unit_test(test_ech_strip),
		cmocka_unit_test(test_internal_default),
		cmocka_unit_test(test_never_pin_findings),
		cmocka_unit_test(test_internal_index_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
