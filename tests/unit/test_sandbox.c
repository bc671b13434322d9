/* Unit tests for netd/model/sandbox.c: pool slots, addresses, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "netd/model/sandbox.h"

static struct sandbox_table *table(const char *p4, const char *p6)
{
	struct prefix pool4, pool6 = { 0 };
	struct sandbox_table *t;

	assert_int_equal(prefix_parse(p4, &pool4), 0);
	if (p6)
		assert_int_equal(prefix_parse(p6, &pool6), 0);
	assert_int_equal(sandbox_table_new(&pool4, &pool6, &t), 0);
	return t;
}

static void expect_addr(const struct addr *a, const char *want)
{
	char buf[ADDR_STRLEN];

	assert_string_equal(addr_format(a, buf, sizeof(buf)), want);
}

static void test_addresses(void **state)
{
	struct sandbox_table *t = table("10.87.0.0/16", "fd00:87::/48");
	struct sandbox *a, *b;

	(void)state;
	assert_int_equal(sandbox_alloc(t, "a", -1, &a), 0);
	sandbox_insert(t, a);
	assert_int_equal(sandbox_alloc(t, "b", -1, &b), 0);
	sandbox_insert(t, b);
	expect_addr(&a->gw4, "10.87.0.1");
	expect_addr(&a->addr4, "10.87.0.2");
	expect_addr(&b->gw4, "10.87.0.5");
	expect_addr(&b->addr4, "10.87.0.6");
	expect_addr(&b->addr6, "fd00:87::6");
	assert_string_equal(a->host_ifname, "nd00000");
	assert_string_equal(b->host_ifname, "nd00001");
	assert_true(strlen(b->host_ifname) <= 15);
	sandbox_table_free(t);
}

static void test_lookup(void **state)
{
	struct sandbox_table *t = table("10.87.0.0/16", "fd00:87::/48");
	struct sandbox *a, *b;
	struct addr x;

	(void)state;
	assert_int_equal(sandbox_alloc(t, "a", -1, &a), 0);
	sandbox_insert(t, a);
	assert_int_equal(sandbox_alloc(t, "b", -1, &b), 0);
	sandbox_insert(t, b);
	addr_parse("10.87.0.6", &x);
	assert_ptr_equal(sandbox_by_addr(t, &x), b);
	addr_parse("fd00:87::2", &x);
	assert_ptr_equal(sandbox_by_addr(t, &x), a);
	/* Gateways, other offsets, outside the pool, unused slots: nobody. */
	addr_parse("10.87.0.5", &x);
	assert_null(sandbox_by_addr(t, &x));
	addr_parse("10.87.0.10", &x);
	assert_null(sandbox_by_addr(t, &x));
	addr_parse("10.88.0.2", &x);
	assert_null(sandbox_by_addr(t, &x));
	addr_parse("fd00:88::2", &x);
	assert_null(sandbox_by_addr(t, &x));
	assert_ptr_equal(sandbox_find(t, "a"), a);
	assert_null(sandbox_find(t, "c"));
	assert_int_equal(sandbox_alloc(t, "a", -1, &b), -EEXIST);
	sandbox_table_free(t);
}

static void test_no_immediate_reuse(void **state)
{
	struct sandbox_table *t = table("10.87.0.0/28", NULL);	/* 4 slots */
	struct sandbox *s[4], *n;
	char name[16];

	(void)state;
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		assert_int_equal(sandbox_alloc(t, name, -1, &s[i]), 0);
		sandbox_insert(t, s[i]);
	}
	assert_int_equal(sandbox_alloc(t, "full", -1, &n), -ENOSPC);
	sandbox_remove(t, s[1]);
	assert_int_equal(sandbox_alloc(t, "new", -1, &n), 0);
	assert_int_equal(n->slot, 1);	/* the only free slot */
	assert_int_equal(n->addr6.family, 0);	/* no IPv6 pool */
	sandbox_release(t, n);
	sandbox_remove(t, s[3]);
	assert_int_equal(sandbox_alloc(t, "new2", -1, &n), 0);
	/* the cursor moved past slot 1; the next free one after it is 1 or 3:
	 * a freed slot is only reused when the cursor comes round. */
	assert_true(n->slot == 1 || n->slot == 3);
	sandbox_release(t, n);
	assert_int_equal(sandbox_count(t), 2);
	assert_int_equal(sandbox_alloc(t, "x", 2, &n), -EBUSY);
	assert_int_equal(sandbox_alloc(t, "x", 99, &n), -EBUSY);
	sandbox_table_free(t);
}

/* Chained attachments: their own addresses, found through the hash. */
static void test_own_addrs(void **state)
{
	struct sandbox_table *t = table("10.87.0.0/16", "fd00:87::/48");
	struct sandbox *a, *c1, *c2, *c3;
	struct addr x4, x6, none = { 0 }, in_pool, y4;

	(void)state;
	assert_int_equal(sandbox_alloc(t, "a", -1, &a), 0);
	sandbox_insert(t, a);
	assert_int_equal(sandbox_alloc(t, "c1", -1, &c1), 0);
	addr_parse("10.88.0.2", &x4);
	addr_parse("2001:db8:88::2", &x6);
	assert_int_equal(sandbox_set_addrs(t, c1, &none, &none), -EINVAL);
	assert_int_equal(sandbox_set_addrs(t, c1, &x6, &none), -EINVAL);
	addr_parse("10.87.0.10", &in_pool);
	assert_int_equal(sandbox_set_addrs(t, c1, &in_pool, &none), -EINVAL);
	assert_int_equal(sandbox_set_addrs(t, c1, &x4, &x6), 0);
	assert_true(c1->own_addrs);
	assert_int_equal(c1->gw4.family, 0);
	/* Not visible before it is inserted. */
	assert_null(sandbox_by_addr(t, &x4));
	sandbox_insert(t, c1);
	assert_ptr_equal(sandbox_by_addr(t, &x4), c1);
	assert_ptr_equal(sandbox_by_addr(t, &x6), c1);
	/* Its slot's pool address is not its address; its slot still finds it
	 * (the trail's way from a ct mark or an interface name to it). */
	addr_parse("10.87.0.6", &in_pool);
	assert_null(sandbox_by_addr(t, &in_pool));
	assert_ptr_equal(sandbox_by_slot(t, c1->slot), c1);
	assert_ptr_equal(sandbox_by_slot(t, a->slot), a);
	assert_null(sandbox_by_slot(t, 1000000));
	addr_parse("10.88.0.3", &y4);
	assert_null(sandbox_by_addr(t, &y4));
	/* The same address twice is refused. */
	assert_int_equal(sandbox_alloc(t, "c2", -1, &c2), 0);
	assert_int_equal(sandbox_set_addrs(t, c2, &x4, &none), -EADDRINUSE);
	assert_int_equal(sandbox_set_addrs(t, c2, &y4, &none), 0);
	sandbox_insert(t, c2);
	assert_ptr_equal(sandbox_by_addr(t, &y4), c2);
	/* Many in one bucket's worth of table: each still found, removal unlinks. */
	for (int i = 0; i < 3000; i++) {
		char name[16];
		struct addr z;

		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(sandbox_alloc(t, name, -1, &c3), 0);
		z = x4;
		z.a[1] = 99;
		z.a[2] = (uint8_t)(i >> 8);
		z.a[3] = (uint8_t)i;
		assert_int_equal(sandbox_set_addrs(t, c3, &z, &none), 0);
		sandbox_insert(t, c3);
	}
	for (int i = 0; i < 3000; i += 7) {
		struct addr z = x4;

		z.a[1] = 99;
		z.a[2] = (uint8_t)(i >> 8);
		z.a[3] = (uint8_t)i;
		c3 = sandbox_by_addr(t, &z);
		assert_non_null(c3);
		sandbox_remove(t, c3);
		assert_null(sandbox_by_addr(t, &z));
	}
	sandbox_remove(t, c1);
	assert_null(sandbox_by_addr(t, &x4));
	assert_null(sandbox_by_addr(t, &x6));
	assert_ptr_equal(sandbox_by_addr(t, &y4), c2);
	/* Freed address is free again. */
	assert_int_equal(sandbox_alloc(t, "c4", -1, &c3), 0);
	assert_int_equal(sandbox_set_addrs(t, c3, &x4, &none), 0);
	sandbox_release(t, c3);
	sandbox_table_free(t);
}

static void test_bad_pool(void **state)
{
	struct prefix p4, p6 = { 0 };
	struct sandbox_table *t;

	(void)state;
	assert_int_equal(prefix_parse("10.0.0.0/31", &p4), 0);
	assert_int_equal(sandbox_table_new(&p4, &p6, &t), -EINVAL);
	assert_int_equal(prefix_parse("fd00::/64", &p4), 0);
	assert_int_equal(sandbox_table_new(&p4, &p6, &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_no_immediate_reuse),
		cmocka_unit_test(test_own_addrs),
		cmocka_unit_test(test_bad_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
