/*
 * test_special - common/special.c, the never-pin table, entry by entry: for
 * every row an address inside it (the row itself is the most specific
 * match) and the addresses just below and just above it (not never-pin, or
 * the row named here covers them).  The list below is written by hand and
 * must name every row of the table, so a row added without a test fails.
 * Then every embedded-IPv4 form of every IPv4 row, the documentation flag,
 * and the overlap check `netd policy check` warns with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/special.h"

struct row_case {
	const char *cidr;	/* the table row */
	const char *in;		/* inside it; the row is the most specific match */
	const char *lo, *lo_is;	/* just below (NULL: none); lo_is: the row covering it, "" = none */
	const char *hi, *hi_is;	/* just above, likewise */
};

#define F4 "ffff:ffff:ffff:ffff"	/* helper for the /64 boundaries */

static const struct row_case rows[] = {
	/* IPv4 registry */
	{ "0.0.0.0/8", "0.1.2.3", NULL, NULL, "1.0.0.0", "" },
	{ "0.0.0.0/32", "0.0.0.0", NULL, NULL, "0.0.0.1", "0.0.0.0/8" },
	{ "10.0.0.0/8", "10.1.2.3", "9.255.255.255", "", "11.0.0.0", "" },
	{ "100.64.0.0/10", "100.127.255.255", "100.63.255.255", "", "100.128.0.0", "" },
	{ "127.0.0.0/8", "127.0.0.1", "126.255.255.255", "", "128.0.0.0", "" },
	{ "169.254.0.0/16", "169.254.1.1", "169.253.255.255", "", "169.255.0.0", "" },
	{ "172.16.0.0/12", "172.31.255.255", "172.15.255.255", "", "172.32.0.0", "" },
	{ "192.0.0.0/24", "192.0.0.100", "191.255.255.255", "", "192.0.1.0", "" },
	{ "192.0.0.0/29", "192.0.0.1", "191.255.255.255", "", "192.0.0.8", "192.0.0.8/32" },
	{ "192.0.0.8/32", "192.0.0.8", "192.0.0.7", "192.0.0.0/29", "192.0.0.9", "192.0.0.9/32" },
	{ "192.0.0.9/32", "192.0.0.9", "192.0.0.8", "192.0.0.8/32", "192.0.0.10", "192.0.0.10/32" },
	{ "192.0.0.10/32", "192.0.0.10", "192.0.0.9", "192.0.0.9/32", "192.0.0.11", "192.0.0.0/24" },
	{ "192.0.0.170/32", "192.0.0.170", "192.0.0.169", "192.0.0.0/24", "192.0.0.171",
	  "192.0.0.171/32" },
	{ "192.0.0.171/32", "192.0.0.171", "192.0.0.170", "192.0.0.170/32", "192.0.0.172",
	  "192.0.0.0/24" },
	{ "192.0.2.0/24", "192.0.2.1", "192.0.1.255", "", "192.0.3.0", "" },
	{ "192.31.196.0/24", "192.31.196.1", "192.31.195.255", "", "192.31.197.0", "" },
	{ "192.52.193.0/24", "192.52.193.1", "192.52.192.255", "", "192.52.194.0", "" },
	{ "192.88.99.0/24", "192.88.99.1", "192.88.98.255", "", "192.88.100.0", "" },
	{ "192.88.99.2/32", "192.88.99.2", "192.88.99.1", "192.88.99.0/24", "192.88.99.3",
	  "192.88.99.0/24" },
	{ "192.168.0.0/16", "192.168.1.1", "192.167.255.255", "", "192.169.0.0", "" },
	{ "192.175.48.0/24", "192.175.48.1", "192.175.47.255", "", "192.175.49.0", "" },
	{ "198.18.0.0/15", "198.19.255.255", "198.17.255.255", "", "198.20.0.0", "" },
	{ "198.51.100.0/24", "198.51.100.7", "198.51.99.255", "", "198.51.101.0", "" },
	{ "203.0.113.0/24", "203.0.113.5", "203.0.112.255", "", "203.0.114.0", "" },
	{ "240.0.0.0/4", "250.1.2.3", "239.255.255.255", "224.0.0.0/4", NULL, NULL },
	{ "255.255.255.255/32", "255.255.255.255", "255.255.255.254", "240.0.0.0/4", NULL, NULL },
	{ "224.0.0.0/4", "239.255.255.250", "223.255.255.255", "", "240.0.0.0", "240.0.0.0/4" },
	/* IPv4 cloud */
	{ "169.254.169.254/32", "169.254.169.254", "169.254.169.253", "169.254.169.253/32",
	  "169.254.169.255", "169.254.0.0/16" },
	{ "169.254.169.253/32", "169.254.169.253", "169.254.169.252", "169.254.0.0/16",
	  "169.254.169.254", "169.254.169.254/32" },
	{ "169.254.169.123/32", "169.254.169.123", "169.254.169.122", "169.254.0.0/16",
	  "169.254.169.124", "169.254.0.0/16" },
	{ "169.254.170.2/32", "169.254.170.2", "169.254.170.1", "169.254.0.0/16", "169.254.170.3",
	  "169.254.0.0/16" },
	{ "169.254.170.23/32", "169.254.170.23", "169.254.170.22", "169.254.0.0/16",
	  "169.254.170.24", "169.254.0.0/16" },
	{ "169.254.0.23/32", "169.254.0.23", "169.254.0.22", "169.254.0.0/16", "169.254.0.24",
	  "169.254.0.0/16" },
	{ "169.254.42.42/32", "169.254.42.42", "169.254.42.41", "169.254.0.0/16", "169.254.42.43",
	  "169.254.0.0/16" },
	{ "168.63.129.16/32", "168.63.129.16", "168.63.129.15", "", "168.63.129.17", "" },
	{ "192.0.0.192/32", "192.0.0.192", "192.0.0.191", "192.0.0.0/24", "192.0.0.193",
	  "192.0.0.0/24" },
	{ "100.100.100.200/32", "100.100.100.200", "100.100.100.199", "100.64.0.0/10",
	  "100.100.100.201", "100.64.0.0/10" },
	/* IPv6 registry */
	{ "::1/128", "::1", "::", "::/128", "::2", "0.0.0.0/8" },	/* ::2 embeds 0.0.0.2 */
	{ "::/128", "::", NULL, NULL, "::1", "::1/128" },
	{ "::ffff:0:0/96", "::ffff:1.2.3.4", "::fffe:ffff:ffff", "", "::1:0:0:0", "" },
	{ "64:ff9b::/96", "64:ff9b::1.2.3.4", "64:ff9a:ffff:ffff:" F4, "", "64:ff9b::1:0:0", "" },
	{ "64:ff9b:1::/48", "64:ff9b:1:abcd::1", "64:ff9b:0:ffff:" F4, "", "64:ff9b:2::", "" },
	{ "100::/64", "100::1", "ff:ffff:ffff:ffff:" F4, "", "100:0:0:1::", "100:0:0:1::/64" },
	{ "100:0:0:1::/64", "100:0:0:1::1", "100::" F4, "100::/64", "100:0:0:2::", "" },
	{ "2001::/23", "2001:100::1", "2000:ffff:ffff:ffff:" F4, "", "2001:200::", "" },
	{ "2001::/32", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "2000:ffff:ffff:ffff:" F4, "",
	  "2001:1::", "2001::/23" },
	{ "2001:1::1/128", "2001:1::1", "2001:1::", "2001::/23", "2001:1::2", "2001:1::2/128" },
	{ "2001:1::2/128", "2001:1::2", "2001:1::1", "2001:1::1/128", "2001:1::3", "2001:1::3/128" },
	{ "2001:1::3/128", "2001:1::3", "2001:1::2", "2001:1::2/128", "2001:1::4", "2001::/23" },
	{ "2001:2::/48", "2001:2::1", "2001:1:ffff:ffff:" F4, "2001::/23", "2001:2:1::", "2001::/23" },
	{ "2001:3::/32", "2001:3::1", "2001:2:ffff:ffff:" F4, "2001::/23", "2001:4::", "2001::/23" },
	{ "2001:4:112::/48", "2001:4:112::1", "2001:4:111:ffff:" F4, "2001::/23", "2001:4:113::",
	  "2001::/23" },
	{ "2001:10::/28", "2001:10::1", "2001:f:ffff:ffff:" F4, "2001::/23", "2001:20::",
	  "2001:20::/28" },
	{ "2001:20::/28", "2001:20::1", "2001:1f:ffff:ffff:" F4, "2001:10::/28", "2001:30::",
	  "2001:30::/28" },
	{ "2001:30::/28", "2001:30::1", "2001:2f:ffff:ffff:" F4, "2001:20::/28", "2001:40::",
	  "2001::/23" },
	{ "2001:db8::/32", "2001:db8::1", "2001:db7:ffff:ffff:" F4, "", "2001:db9::", "" },
	{ "2002::/16", "2002:102:304::1", "2001:ffff:ffff:ffff:" F4, "", "2003::", "" },
	{ "2620:4f:8000::/48", "2620:4f:8000::1", "2620:4f:7fff:ffff:" F4, "", "2620:4f:8001::", "" },
	{ "3fff::/20", "3fff::1", "3ffe:ffff:ffff:ffff:" F4, "", "3fff:1000::", "" },
	{ "5f00::/16", "5f00::1", "5eff:ffff:ffff:ffff:" F4, "", "5f01::", "" },
	{ "fc00::/7", "fd12:3456::1", "fbff:ffff:ffff:ffff:" F4, "", "fe00::", "" },
	{ "fe80::/10", "fe80::1", "fe7f:ffff:ffff:ffff:" F4, "", "fec0::", "fec0::/10" },
	{ "::/96", "::1.2.3.4", NULL, NULL, "::1:0:0", "" },
	{ "::ffff:0:0:0/96", "::ffff:0:102:304", "::fffe:ffff:ffff:ffff:ffff", "", "::ffff:1:0:0",
	  "" },
	{ "fec0::/10", "fec0::1", "febf:ffff:ffff:ffff:" F4, "fe80::/10", "ff00::", "ff00::/8" },
	{ "ff00::/8", "ff02::1", "feff:ffff:ffff:ffff:" F4, "fec0::/10", NULL, NULL },
	/* IPv6 cloud */
	{ "fd00:ec2::254/128", "fd00:ec2::254", "fd00:ec2::253", "fd00:ec2::253/128",
	  "fd00:ec2::255", "fc00::/7" },
	{ "fd00:ec2::253/128", "fd00:ec2::253", "fd00:ec2::252", "fc00::/7", "fd00:ec2::254",
	  "fd00:ec2::254/128" },
	{ "fd00:ec2::123/128", "fd00:ec2::123", "fd00:ec2::122", "fc00::/7", "fd00:ec2::124",
	  "fc00::/7" },
	{ "fd00:ec2::23/128", "fd00:ec2::23", "fd00:ec2::22", "fc00::/7", "fd00:ec2::24",
	  "fc00::/7" },
	{ "fd20:ce::254/128", "fd20:ce::254", "fd20:ce::253", "fc00::/7", "fd20:ce::255",
	  "fc00::/7" },
	{ "fd00:c1::a9fe:a9fe/128", "fd00:c1::a9fe:a9fe", "fd00:c1::a9fe:a9fd", "fc00::/7",
	  "fd00:c1::a9fe:a9ff", "fc00::/7" },
	{ "fd00:42::42/128", "fd00:42::42", "fd00:42::41", "fc00::/7", "fd00:42::43", "fc00::/7" },
	{ "fd00:a9fe:a9fe::1/128", "fd00:a9fe:a9fe::1", "fd00:a9fe:a9fe::", "fc00::/7",
	  "fd00:a9fe:a9fe::2", "fc00::/7" },
	{ "fe80::a9fe:a9fe/128", "fe80::a9fe:a9fe", "fe80::a9fe:a9fd", "fe80::/10",
	  "fe80::a9fe:a9ff", "fe80::/10" },
};

static struct addr A(const char *s)
{
	struct addr a;

	if (addr_parse(s, &a) < 0)
		fail_msg("bad address in the test: %s", s);
	return a;
}

/* What special_find(@s, with documentation) reports: the row's CIDR or "". */
static const char *covering(const char *s)
{
	struct special_hit h;
	struct addr a = A(s);

	if (!special_find(&a, SPECIAL_WITH_DOC, &h))
		return "";
	assert_non_null(h.entry);
	return h.entry->cidr;
}

static void test_every_row(void **state)
{
	(void)state;
	/* Every row of the table is in the list above, and nothing else is. */
	assert_int_equal(special_table_n, sizeof(rows) / sizeof(rows[0]));
	for (size_t i = 0; i < special_table_n; i++) {
		const struct special_entry *e = &special_table[i];
		struct prefix p;
		size_t k;

		assert_int_equal(prefix_parse(e->cidr, &p), 0);
		assert_non_null(e->what);
		assert_non_null(e->source);
		assert_true(strlen(e->what) > 0 && strlen(e->source) > 0);
		for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
			if (strcmp(rows[k].cidr, e->cidr) == 0)
				break;
		if (k == sizeof(rows) / sizeof(rows[0]))
			fail_msg("table row %s has no test case", e->cidr);
	}
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row_case *c = &rows[k];
		struct prefix p;
		struct addr in = A(c->in);

		assert_int_equal(prefix_parse(c->cidr, &p), 0);
		if (!prefix_contains(&p, &in))
			fail_msg("%s: test address %s is not inside", c->cidr, c->in);
		if (strcmp(covering(c->in), c->cidr) != 0)
			fail_msg("%s: %s found as '%s'", c->cidr, c->in, covering(c->in));
		if (c->lo && strcmp(covering(c->lo), c->lo_is) != 0)
			fail_msg("%s: just below, %s is '%s', want '%s'", c->cidr, c->lo,
				 covering(c->lo), c->lo_is);
		if (c->hi && strcmp(covering(c->hi), c->hi_is) != 0)
			fail_msg("%s: just above, %s is '%s', want '%s'", c->cidr, c->hi,
				 covering(c->hi), c->hi_is);
		/* The outside addresses really are outside the row. */
		if (c->lo) {
			struct addr lo = A(c->lo);

			assert_false(prefix_contains(&p, &lo));
		}
		if (c->hi) {
			struct addr hi = A(c->hi);

			assert_false(prefix_contains(&p, &hi));
		}
	}
}

/* The findings of the review, and addresses that must stay pinnable. */
static void test_findings(void **state)
{
	static const char *const never[] = {
		"168.63.129.16",		/* Azure WireServer: pinned on main */
		"2001:0:4136:e378:8000:63bf:3fff:fdd2",	/* Teredo: pinned on main */
		"2001::1", "192.0.0.192", "100.100.100.200", "fd00:ec2::254", "fd20:ce::254",
		"169.254.169.254", "::ffff:168.63.129.16", "64:ff9b::a83f:8110",
		"2002:a83f:8110::1", "192.88.99.1", "2001:db8::1" /* with documentation */,
	};
	static const char *const pinnable[] = {
		"1.1.1.1", "8.8.8.8", "168.63.129.15", "2606:4700::1111", "2a00:1450::1",
		"64:ff9b:2::1", "2001:200::1", "::1:0:0:1",
	};
	struct addr a;

	(void)state;
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		a = A(never[i]);
		if (!special_find(&a, SPECIAL_WITH_DOC, NULL))
			fail_msg("%s must never be pinned", never[i]);
	}
	for (size_t i = 0; i < sizeof(pinnable) / sizeof(pinnable[0]); i++) {
		a = A(pinnable[i]);
		if (special_find(&a, SPECIAL_WITH_DOC, NULL))
			fail_msg("%s is an ordinary address", pinnable[i]);
	}
}

/* Every embedded form of every IPv4 row's inside address is found, as that row. */
static void test_embedded(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct addr v4 = A(rows[k].in);
		const uint8_t *b = v4.a;
		char forms[7][64];

		if (v4.family != AF_INET)
			continue;
		snprintf(forms[0], 64, "::ffff:%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		snprintf(forms[1], 64, "::%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		snprintf(forms[2], 64, "::ffff:0:%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		snprintf(forms[3], 64, "64:ff9b::%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		snprintf(forms[4], 64, "2002:%02x%02x:%02x%02x:1::1", b[0], b[1], b[2], b[3]);
		/* Teredo: server in bits 32-63, client inverted in bits 96-127. */
		snprintf(forms[5], 64, "2001:0:%02x%02x:%02x%02x:0:f227:a2a3:b4b5", b[0], b[1],
			 b[2], b[3]);
		snprintf(forms[6], 64, "2001:0:5ef5:79fd:0:f227:%02x%02x:%02x%02x",
			 (uint8_t)~b[0], (uint8_t)~b[1], (uint8_t)~b[2], (uint8_t)~b[3]);
		for (int f = 0; f < 7; f++) {
			struct addr a = A(forms[f]);
			struct special_hit h;

			if (!special_find(&a, SPECIAL_WITH_DOC, &h))
				fail_msg("%s (embeds %s) not found", forms[f], rows[k].in);
			/* "::0.0.0.0" is :: itself, ::/128's own row. */
			if (f == 1 && (b[0] | b[1] | b[2]) == 0 && b[3] <= 1)
				continue;
			if (!h.form || strcmp(h.entry->cidr, rows[k].cidr) != 0)
				fail_msg("%s: found as %s via %s, want %s", forms[f], h.entry->cidr,
					 h.form ? h.form : "(direct)", rows[k].cidr);
			assert_true(addr_equal(&h.v4, &v4));
		}
	}
}

static void test_embedded_forms(void **state)
{
	struct special_v4 v[2];
	struct addr a;
	char buf[ADDR_STRLEN];

	(void)state;
	/* RFC 4380 5.2.1's example: server 65.54.227.120, client 192.0.2.45 (inverted). */
	a = A("2001:0:4136:e378:8000:63bf:3fff:fdd2");
	assert_int_equal(special_embedded_v4(&a, v), 2);
	assert_string_equal(addr_format(&v[0].v4, buf, sizeof(buf)), "65.54.227.120");
	assert_string_equal(v[0].form, "Teredo server");
	assert_string_equal(addr_format(&v[1].v4, buf, sizeof(buf)), "192.0.2.45");
	assert_string_equal(v[1].form, "Teredo client");
	a = A("2002:c000:22d::1");
	assert_int_equal(special_embedded_v4(&a, v), 1);
	assert_string_equal(addr_format(&v[0].v4, buf, sizeof(buf)), "192.0.2.45");
	a = A("2001:1::1");	/* not Teredo: 2001:0::/32 only */
	assert_int_equal(special_embedded_v4(&a, v), 0);
	a = A("64:ff9b:0:0:1::1");	/* not the /96 form */
	assert_int_equal(special_embedded_v4(&a, v), 0);
	a = A("2a00:1450::1");
	assert_int_equal(special_embedded_v4(&a, v), 0);
	a = A("192.0.2.1");
	assert_int_equal(special_embedded_v4(&a, v), 0);
}

static void test_documentation_flag(void **state)
{
	struct prefix all[SPECIAL_TABLE_MAX], some[SPECIAL_TABLE_MAX];
	size_t n_all = special_prefixes(all, SPECIAL_TABLE_MAX, SPECIAL_WITH_DOC);
	size_t n_some = special_prefixes(some, SPECIAL_TABLE_MAX, 0);
	static const char *const doc[] = { "192.0.2.1", "198.51.100.7", "203.0.113.5",
					   "2001:db8::1", "3fff::1", "::ffff:192.0.2.1",
					   "2002:c000:201::1" };

	(void)state;
	assert_int_equal(n_all, special_table_n);
	assert_int_equal(n_some, special_table_n - 5);	/* three IPv4, two IPv6 blocks */
	assert_int_equal(special_prefixes(all, 3, 0), 3);
	for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
		struct addr a = A(doc[i]);
		bool direct = false;

		assert_true(special_find(&a, SPECIAL_WITH_DOC, NULL));
		for (size_t k = 0; k < n_some; k++)
			direct = direct || prefix_contains(&some[k], &a);
		/* Without the flag: the bare documentation address is pinnable (the
		 * test world serves there); its mapped and 6to4 forms still are not,
		 * as their own blocks are listed. */
		if (i < 5) {
			assert_false(special_find(&a, 0, NULL));
			assert_false(direct);
		} else {
			assert_true(special_find(&a, 0, NULL));
		}
	}
}

static void test_overlaps(void **state)
{
	const struct special_entry *e[8];
	struct prefix p;

	(void)state;
	assert_int_equal(prefix_parse("10.0.0.0/8", &p), 0);
	assert_int_equal(special_overlaps(&p, 0, e, 8), 1);
	assert_string_equal(e[0]->cidr, "10.0.0.0/8");
	assert_int_equal(prefix_parse("10.1.0.0/16", &p), 0);
	assert_int_equal(special_overlaps(&p, 0, e, 8), 1);
	assert_int_equal(prefix_parse("168.63.128.0/17", &p), 0);
	assert_int_equal(special_overlaps(&p, 0, e, 8), 1);
	assert_string_equal(e[0]->cidr, "168.63.129.16/32");
	assert_int_equal(prefix_parse("169.254.169.254/32", &p), 0);
	assert_int_equal(special_overlaps(&p, 0, e, 8), 2);	/* the /16 and the /32 */
	assert_int_equal(prefix_parse("198.51.100.0/24", &p), 0);
	assert_int_equal(special_overlaps(&p, 0, e, 8), 0);
	assert_int_equal(special_overlaps(&p, SPECIAL_WITH_DOC, e, 8), 1);
	assert_int_equal(prefix_parse("8.8.8.0/24", &p), 0);
	assert_int_equal(special_overlaps(&p, SPECIAL_WITH_DOC, e, 8), 0);
	assert_int_equal(prefix_parse("2000::/3", &p), 0);
	assert_true(special_overlaps(&p, 0, e, 1) > 5);	/* 2001::/23 and more; count exceeds max */
	assert_int_equal(prefix_parse("0.0.0.0/0", &p), 0);
	assert_true(special_overlaps(&p, 0, e, 8) >= 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_embedded),
		cmocka_unit_test(test_embedded_forms),
		cmocka_unit_test(test_documentation_flag),
		cmocka_unit_test(test_overlaps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
