/*
 * Unit tests for netd/fw/ruleset.c: the interval arithmetic behind fw's
 * CIDR and internal sets (disjoint, merged, bounded).
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
#include <malloc.h>

#include "netd/fw/ruleset.h"

static struct prefix P(const char *s)
{
	struct prefix p;

	assert_int_equal(prefix_parse(s, &p), 0);
	return p;
}

static void assert_addr(const uint8_t *a, const char *want)
{
	struct addr x;

	assert_int_equal(addr_parse(want, &x), 0);
	assert_memory_equal(a, x.a, addr_len(x.family));
}

static void test_merge_prefixes(void **state)
{
	struct prefix in[] = { P("192.168.0.0/16"), P("10.1.0.0/16"), P("10.0.0.0/8"),
			       P("11.0.0.0/8"), P("fc00::/7"), P("255.255.255.255/32"),
			       P("13.0.0.0/8") };
	struct ruleset_range out[8];
	int n;

	(void)state;
	n = ruleset_merge_prefixes(AF_INET, in, 7, out, 8);
	assert_int_equal(n, 4);
	/* 10/8 swallows 10.1/16 and touches 11/8: one range. */
	assert_addr(out[0].lo, "10.0.0.0");
	assert_addr(out[0].hi, "11.255.255.255");
	assert_addr(out[1].lo, "13.0.0.0");
	assert_addr(out[2].lo, "192.168.0.0");
	assert_addr(out[2].hi, "192.168.255.255");
	assert_addr(out[3].lo, "255.255.255.255");
	assert_addr(out[3].hi, "255.255.255.255");

	n = ruleset_merge_prefixes(AF_INET6, in, 7, out, 8);
	assert_int_equal(n, 1);
	assert_addr(out[0].lo, "fc00::");
	assert_addr(out[0].hi, "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

	assert_int_equal(ruleset_merge_prefixes(AF_INET, in, 7, out, 3), -E2BIG);
	assert_int_equal(ruleset_merge_prefixes(AF_INET, in, 0, out, 8), 0);
}

/*
 * The host's own addresses at size (issue 12): each sandbox's host veth adds
 * three (IPv4, IPv6, link-local), so 5,000 sandboxes give 15,000 prefixes,
 * far more than RULESET_ELEMS_MAX - but they merge into the pools' ranges.
 * The input is sized from what it holds; only the output is bounded.
 */
static void test_merge_prefixes_many(void **state)
{
	size_t n = 3 * 5000 + 2, k = 0;
	struct prefix *in = calloc(n, sizeof(*in));
	struct ruleset_range out[4];
	char buf[64];

	(void)state;
	assert_non_null(in);
	in[k++] = P("10.87.0.0/16");
	in[k++] = P("fd00:87::/48");
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "10.87.%d.%d/32", i / 64, (i % 64) * 4 + 1);
		in[k++] = P(buf);
		snprintf(buf, sizeof(buf), "fd00:87:0:%x::1/128", i);
		in[k++] = P(buf);
		snprintf(buf, sizeof(buf), "fe80::%x:1/128", i + 1);	/* not adjacent */
		in[k++] = P(buf);
	}
	assert_int_equal(ruleset_merge_prefixes(AF_INET, in, n, out, 4), 1);
	assert_addr(out[0].lo, "10.87.0.0");
	assert_addr(out[0].hi, "10.87.255.255");
	/* IPv6: the pool, and 5,000 link-locals that do not merge: over @max. */
	assert_int_equal(ruleset_merge_prefixes(AF_INET6, in, n, out, 4), -E2BIG);
	in[k - 1] = P("fe80::/10");	/* (fe80::/10 is among the built-in internal ranges) */
	assert_int_equal(ruleset_merge_prefixes(AF_INET6, in, n, out, 4), 2);
	free(in);
}

/* One rule: proto, cidrs, ports ("lo-hi" pairs as numbers; 0 pairs = none). */
static struct policy_rule R(uint8_t proto, const char *c1, const char *c2, uint16_t lo1,
			    uint16_t hi1, uint16_t lo2, uint16_t hi2)
{
	struct policy_rule r = { 0 };

	r.proto = proto;
	r.cidrs = calloc(2, sizeof(*r.cidrs));
	r.cidrs[r.n_cidrs++] = P(c1);
	if (c2)
		r.cidrs[r.n_cidrs++] = P(c2);
	r.ports = calloc(2, sizeof(*r.ports));
	if (lo1 || hi1)
		r.ports[r.n_ports++] = (struct port_range){ lo1, hi1 };
	if (lo2 || hi2)
		r.ports[r.n_ports++] = (struct port_range){ lo2, hi2 };
	return r;
}

static void free_rules(struct policy_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].cidrs);
		free(r[i].ports);
	}
}

/* Every point of the union is covered exactly once. */
static void assert_disjoint(const struct ruleset_box *b, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			bool addr_overlap = memcmp(b[i].lo, b[j].hi, 16) <= 0 &&
					    memcmp(b[j].lo, b[i].hi, 16) <= 0;
			bool port_overlap = b[i].port_lo <= b[j].port_hi &&
					    b[j].port_lo <= b[i].port_hi;

			assert_false(b[i].proto == b[j].proto && addr_overlap && port_overlap);
		}
}

static void test_cidr_boxes_overlap(void **state)
{
	struct policy_rule rules[4];
	struct policy pol = { .rules = rules, .n_rules = 4 };
	struct ruleset_box *b;
	int n;

	(void)state;
	rules[0] = R(IPPROTO_TCP, "10.0.0.0/8", NULL, 443, 443, 0, 0);
	rules[1] = R(IPPROTO_TCP, "10.1.0.0/16", "198.51.100.7/32", 443, 444, 0, 0);
	rules[2] = R(IPPROTO_TCP, "10.0.0.0/8", NULL, 443, 443, 0, 0);	/* duplicate */
	rules[3] = R(IPPROTO_UDP, "10.0.0.0/8", NULL, 0, 0, 0, 0);	/* no ports: all */
	n = ruleset_cidr_boxes(&pol, AF_INET, &b);
	assert_true(n > 0);
	assert_disjoint(b, n);
	/*
	 * tcp: 10.0.0.0-10.0.255.255:443, 10.1/16:443-444,
	 *      10.2.0.0-10.255.255.255:443, 198.51.100.7:443-444; udp 10/8:0-65535.
	 * Sorted by (proto, ports, addr) and merged where touching.
	 */
	assert_int_equal(n, 5);
	assert_int_equal(b[0].proto, IPPROTO_TCP);
	assert_int_equal(b[0].port_lo, 443);
	assert_int_equal(b[0].port_hi, 443);
	assert_addr(b[0].lo, "10.0.0.0");
	assert_addr(b[0].hi, "10.0.255.255");
	assert_addr(b[1].lo, "10.2.0.0");
	assert_addr(b[1].hi, "10.255.255.255");
	assert_int_equal(b[2].port_hi, 444);
	assert_addr(b[2].lo, "10.1.0.0");
	assert_addr(b[2].hi, "10.1.255.255");
	assert_addr(b[3].lo, "198.51.100.7");
	assert_addr(b[3].hi, "198.51.100.7");
	assert_int_equal(b[4].proto, IPPROTO_UDP);
	assert_int_equal(b[4].port_lo, 0);
	assert_int_equal(b[4].port_hi, 65535);
	free(b);

	/* No IPv6 cidrs: nothing, and no allocation. */
	assert_int_equal(ruleset_cidr_boxes(&pol, AF_INET6, &b), 0);
	assert_null(b);
	free_rules(rules, 4);
}

static void test_cidr_boxes_ports_merge(void **state)
{
	struct policy_rule rules[2];
	struct policy pol = { .rules = rules, .n_rules = 2 };
	struct ruleset_box *b;
	int n;

	(void)state;
	/* 80-90 and 85-100 overlap, 101 touches: one port range 80-101. */
	rules[0] = R(IPPROTO_TCP, "2001:db8::/32", NULL, 80, 90, 101, 101);
	rules[1] = R(IPPROTO_TCP, "2001:db8::/32", NULL, 85, 100, 0, 0);
	n = ruleset_cidr_boxes(&pol, AF_INET6, &b);
	assert_int_equal(n, 1);
	assert_int_equal(b[0].port_lo, 80);
	assert_int_equal(b[0].port_hi, 101);
	assert_addr(b[0].lo, "2001:db8::");
	assert_addr(b[0].hi, "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
	free(b);
	free_rules(rules, 2);
}

static void test_cidr_boxes_full_space(void **state)
{
	struct policy_rule rules[2];
	struct policy pol = { .rules = rules, .n_rules = 2 };
	struct ruleset_box *b;
	int n;

	(void)state;
	rules[0] = R(IPPROTO_TCP, "0.0.0.0/0", NULL, 65535, 65535, 0, 0);
	rules[1] = R(IPPROTO_TCP, "255.255.255.255/32", NULL, 1, 65535, 0, 0);
	n = ruleset_cidr_boxes(&pol, AF_INET, &b);
	assert_true(n > 0);
	assert_disjoint(b, n);
	/* 0.0.0.0-255.255.255.254:65535 and 255.255.255.255:1-65535 */
	assert_int_equal(n, 2);
	assert_addr(b[0].lo, "255.255.255.255");
	assert_int_equal(b[0].port_lo, 1);
	assert_addr(b[1].lo, "0.0.0.0");
	assert_addr(b[1].hi, "255.255.255.254");
	assert_int_equal(b[1].port_lo, 65535);
	free(b);
	free_rules(rules, 2);
}

static void test_cidr_boxes_limits(void **state)
{
	struct policy_rule r = { .proto = IPPROTO_TCP };
	struct policy pol = { .rules = &r, .n_rules = 1 };
	struct ruleset_box *b = NULL;

	(void)state;
	r.n_cidrs = 100;
	r.cidrs = calloc(r.n_cidrs, sizeof(*r.cidrs));
	for (size_t i = 0; i < r.n_cidrs; i++)
		r.cidrs[i] = P("192.0.2.0/24");
	r.n_ports = 64;
	r.ports = calloc(r.n_ports, sizeof(*r.ports));
	for (size_t i = 0; i < r.n_ports; i++)
		r.ports[i] = (struct port_range){ (uint16_t)(1000 + 2 * i), (uint16_t)(1000 + 2 * i) };
	/* 6400 raw boxes > RULESET_ELEMS_MAX */
	assert_int_equal(ruleset_cidr_boxes(&pol, AF_INET, &b), -E2BIG);
	assert_null(b);
	r.n_cidrs = 10;	/* 640 raw boxes, all the same address: 64 out */
	assert_int_equal(ruleset_cidr_boxes(&pol, AF_INET, &b), 64);
	free(b);
	r.ports[0] = (struct port_range){ 10, 9 };
	assert_int_equal(ruleset_cidr_boxes(&pol, AF_INET, &b), -EINVAL);
	free(r.cidrs);
	free(r.ports);
}

/*
 * The result is sized from what it holds: every sandbox's boxes are held
 * at once during a restart or reload, and a 16,384-box scratch array
 * returned as the result (~640 KB a family, a sandbox) took netd's heap
 * past 120 MB at restart with 200 sandboxes (3 GB at 5,000).
 */
static void test_cidr_boxes_sized(void **state)
{
	struct policy_rule rules[1];
	struct policy pol = { .rules = rules, .n_rules = 1 };
	struct ruleset_box *b;

	(void)state;
	rules[0] = R(IPPROTO_TCP, "198.51.100.7/32", NULL, 8080, 8080, 0, 0);
	assert_int_equal(ruleset_cidr_boxes(&pol, AF_INET, &b), 1);
	assert_true(malloc_usable_size(b) < 64 * sizeof(*b));
	free(b);
	free_rules(rules, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_prefixes),
		cmocka_unit_test(test_cidr_boxes_sized),
		cmocka_unit_test(test_merge_prefixes_many),
		cmocka_unit_test(test_cidr_boxes_overlap),
		cmocka_unit_test(test_cidr_boxes_ports_merge),
		cmocka_unit_test(test_cidr_boxes_full_space),
		cmocka_unit_test(test_cidr_boxes_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
