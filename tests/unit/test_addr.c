/* test_addr.c - common/addr.c: parsing and formatting of addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "common/addr.h"

/* addr_format()'s own IPv4 path must print exactly what inet_ntop() does. */
static void test_format_v4(void **state)
{
	static const uint8_t cases[][4] = {
		{ 0, 0, 0, 0 },       { 255, 255, 255, 255 }, { 10, 0, 100, 9 },
		{ 192, 0, 2, 53 },    { 1, 10, 99, 100 },     { 198, 51, 100, 255 },
		{ 9, 90, 109, 200 },
	};
	char buf[ADDR_STRLEN], want[INET_ADDRSTRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct addr a = { .family = AF_INET };

		memcpy(a.a, cases[i], 4);
		assert_non_null(inet_ntop(AF_INET, cases[i], want, sizeof(want)));
		assert_string_equal(addr_format(&a, buf, sizeof(buf)), want);
	}
	/* Every octet value, in every position. */
	for (unsigned int v = 0; v < 256; v++) {
		struct addr a = { .family = AF_INET, .a = { (uint8_t)v, (uint8_t)(255 - v), 7, (uint8_t)v } };

		inet_ntop(AF_INET, a.a, want, sizeof(want));
		assert_string_equal(addr_format(&a, buf, sizeof(buf)), want);
	}
}

static void test_format_v6(void **state)
{
	struct addr a;
	char buf[ADDR_STRLEN];

	(void)state;
	assert_int_equal(addr_parse("2001:db8::53", &a), 0);
	assert_string_equal(addr_format(&a, buf, sizeof(buf)), "2001:db8::53");
	assert_int_equal(addr_parse("::ffff:192.0.2.1", &a), 0);
	assert_string_equal(addr_format(&a, buf, sizeof(buf)), "::ffff:192.0.2.1");
	assert_int_equal(addr_parse("198.51.100.7", &a), 0);
	assert_string_equal(addr_format(&a, buf, sizeof(buf)), "198.51.100.7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_v4),
		cmocka_unit_test(test_format_v6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
