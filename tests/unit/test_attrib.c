/*
 * Unit tests for netd/trail/attrib.c: whose sandbox a logged packet is.
 * The interface is "lo" (no sandbox's, until a tap sandbox takes its name);
 * a chained attachment is found by its source only with FW_CHAINED_MARK.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>

#include <cmocka.h>

#include "netd/fw.h"
#include "netd/model/sandbox.h"
#include "netd/trail/attrib.h"
#include "netd/trail/ctmsg.h"

static struct sandbox_table *table(void)
{
	struct prefix pool4, pool6 = { 0 };
	struct sandbox_table *t;

	assert_int_equal(prefix_parse("10.87.0.0/16", &pool4), 0);
	assert_int_equal(sandbox_table_new(&pool4, &pool6, &t), 0);
	return t;
}

/* A packet from @src that came in on "lo", with packet mark @mark. */
static struct ct_logpkt pkt(const char *src, uint32_t mark)
{
	struct ct_logpkt p = { .indev = if_nametoindex("lo"), .mark = mark };

	assert_true(p.indev > 0);
	assert_int_equal(addr_parse(src, &p.src), 0);
	assert_int_equal(addr_parse("203.0.113.66", &p.dst), 0);
	return p;
}

/* @name in the table; @own: its own address (a chained attachment's). */
static struct sandbox *add(struct sandbox_table *t, const char *name, const char *own)
{
	struct sandbox *sb;
	struct addr a4;

	assert_int_equal(sandbox_alloc(t, name, -1, &sb), 0);
	if (own) {
		assert_int_equal(addr_parse(own, &a4), 0);
		assert_int_equal(sandbox_set_addrs(t, sb, &a4, &(struct addr){ 0 }), 0);
		sb->chained = true;
		snprintf(sb->host_ifname, sizeof(sb->host_ifname), "veth%s", name);
	}
	sandbox_insert(t, sb);
	return sb;
}

/* Behind a bridge: by the source, only with the bridge table's mark, only a chained one's. */
static void test_chained_by_checked_source(void **state)
{
	struct sandbox_table *t = table();
	struct sandbox *pool = add(t, "pool", NULL), *c = add(t, "c", "10.88.0.5");
	struct attrib *a;
	struct ct_logpkt p;

	(void)state;
	assert_int_equal(attrib_new(t, &a), 0);
	p = pkt("10.88.0.5", 0);
	assert_null(attrib_sandbox(a, &p));	/* its address, not from its port */
	p = pkt("10.88.0.5", FW_CHAINED_MARK);
	assert_ptr_equal(attrib_sandbox(a, &p), c);
	p = pkt("10.88.0.5", FW_CHAINED_MARK | FW_SNI_RESET_MARK | 0x1);	/* other bits kept */
	assert_ptr_equal(attrib_sandbox(a, &p), c);
	p = pkt("10.88.0.5", 0xffffffffu & ~FW_CHAINED_MARK);
	assert_null(attrib_sandbox(a, &p));
	p = pkt("10.88.0.6", FW_CHAINED_MARK);	/* nobody's address */
	assert_null(attrib_sandbox(a, &p));
	/* A pool sandbox's address with the mark: not a chained attachment. */
	p = pkt("10.87.0.2", FW_CHAINED_MARK);
	assert_string_equal(pool->name, "pool");
	assert_null(attrib_sandbox(a, &p));
	attrib_free(a);
	sandbox_table_free(t);
}

/* An interface found to be nobody's is asked again once a sandbox was added (a tap). */
static void test_new_tap_not_hidden_by_cache(void **state)
{
	struct sandbox_table *t = table();
	struct attrib *a;
	struct ct_logpkt p = pkt("192.0.2.9", 0);
	struct sandbox *tap;

	(void)state;
	assert_int_equal(attrib_new(t, &a), 0);
	assert_null(attrib_sandbox(a, &p));
	assert_null(attrib_sandbox(a, &p));	/* from the cache */
	assert_int_equal(sandbox_alloc(t, "vm", -1, &tap), 0);
	tap->tap = true;
	strcpy(tap->host_ifname, "lo");
	sandbox_insert(t, tap);
	assert_ptr_equal(attrib_sandbox(a, &p), tap);
	sandbox_remove(t, tap);
	attrib_forget(a);	/* as trail_sandbox_gone() does */
	assert_null(attrib_sandbox(a, &p));
	attrib_free(a);
	sandbox_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chained_by_checked_source),
		cmocka_unit_test(test_new_tap_not_hidden_by_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
