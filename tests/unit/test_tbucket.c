/* Unit tests for common/tbucket.h: exact milli-token arithmetic, burst cap, no clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/tbucket.h"

/* A full bucket passes @burst events at once, then none until one is earned. */
static void test_burst_then_rate(void **state)
{
	struct tbucket b;

	(void)state;
	tbucket_init(&b, 3, 1000);
	for (int i = 0; i < 3; i++)
		assert_true(tbucket_take(&b, 10, 3, 1000));
	assert_false(tbucket_take(&b, 10, 3, 1000));
	assert_false(tbucket_take(&b, 10, 3, 1099));	/* 10/s: one per 100 ms */
	assert_true(tbucket_take(&b, 10, 3, 1100));
	assert_false(tbucket_take(&b, 10, 3, 1100));
}

/* Refills in small steps add up exactly (floating point fell short here). */
static void test_small_steps_exact(void **state)
{
	struct tbucket b;
	uint64_t t = 0;

	(void)state;
	tbucket_init(&b, 1, t);
	assert_true(tbucket_take(&b, 10, 1, t));
	for (int i = 0; i < 9; i++) {
		t += 10;
		assert_false(tbucket_take(&b, 10, 1, t));
	}
	t += 10;	/* 100 ms at 10/s: exactly one event earned */
	assert_true(tbucket_take(&b, 10, 1, t));

	tbucket_init(&b, 1, 0);
	assert_true(tbucket_take(&b, 20, 1, 0));
	for (t = 5; t < 50; t += 5)
		assert_false(tbucket_take(&b, 20, 1, t));
	assert_true(tbucket_take(&b, 20, 1, 50));
}

/* The cap holds however long the bucket rested, and a clock going back earns nothing. */
static void test_cap_and_backwards(void **state)
{
	struct tbucket b;

	(void)state;
	tbucket_init(&b, 2, 0);
	assert_true(tbucket_full(&b, 2));
	assert_true(tbucket_take(&b, 1000000, 2, UINT64_MAX / 2));
	assert_true(tbucket_take(&b, 1000000, 2, UINT64_MAX / 2));
	assert_false(tbucket_take(&b, 1000000, 2, UINT64_MAX / 2));
	assert_false(tbucket_full(&b, 2));
	assert_false(tbucket_take(&b, 1000000, 2, 5));	/* earlier than last: nothing */

	tbucket_init(&b, 1, 100);
	assert_true(tbucket_take(&b, 1, 1, 100));
	assert_false(tbucket_would_pass(&b, 1, 1, 1099));
	assert_true(tbucket_would_pass(&b, 1, 1, 1100));
	assert_false(tbucket_take(&b, 1, 1, 1099));	/* would_pass changed nothing */
	assert_true(tbucket_take(&b, 1, 1, 1100));
	tbucket_refill(&b, 1, 1, 100000);
	assert_true(tbucket_full(&b, 1));
}

/* A zeroed bucket (sandbox.h's audit_bucket) is full at its first use. */
static void test_zeroed(void **state)
{
	struct tbucket b = { 0 };

	(void)state;
	assert_true(tbucket_take(&b, 5, 10, 60000));
	tbucket_refill(&b, 5, 10, 60000);
	assert_int_equal(b.milli, 9 * TBUCKET_MILLI);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_small_steps_exact),
		cmocka_unit_test(test_cap_and_backwards),
		cmocka_unit_test(test_zeroed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
