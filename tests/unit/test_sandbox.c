/* Unit tests for netd/sandbox.c: pool slots, addresses, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "netd/sandbox.h"

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
		cmocka_unit_test(test_bad_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
