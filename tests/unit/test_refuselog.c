/*
 * test_refuselog - dnsproxy/refuselog.c: each refused answer address is
 * logged with the sandbox, the quoted qname and what the address is; past
 * the token bucket the rest are counted and the count is logged later.
 * The log goes to stderr, which the test points at a temporary file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/special.h"
#include "dnsproxy/refuselog.h"

static FILE *capture;
static int saved_fd = -1;

static void start(void)
{
	fflush(stderr);
	capture = tmpfile();
	assert_non_null(capture);
	saved_fd = dup(2);
	assert_true(dup2(fileno(capture), 2) >= 0);
}

/* Stop capturing; Return: what was logged (caller frees). */
static char *stop(void)
{
	long n;
	char *s;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	n = ftell(capture);
	s = calloc(1, (size_t)n + 1);
	rewind(capture);
	assert_int_equal(fread(s, 1, (size_t)n, capture), (size_t)n);
	fclose(capture);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static struct wire_addr waddr(const char *ip)
{
	struct wire_addr a;

	memset(&a, 0, sizeof(a));
	assert_int_equal(addr_parse(ip, &a.addr), 0);
	a.ttl_s = 60;
	return a;
}

static void test_lines(void **state)
{
	struct prefix internal[SPECIAL_TABLE_MAX + 1];
	struct decide_ctx c = { .internal = internal };
	struct refuse_log rl = { 0 };
	struct wire_addr a[] = {
		waddr("168.63.129.16"), waddr("198.51.100.10"),
		waddr("2002:a9fe:a9fe::1"), waddr("198.51.100.77"),
	};
	char *out;

	(void)state;
	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	assert_int_equal(prefix_parse("198.51.100.77/32", &internal[c.n_internal++]), 0);
	start();
	assert_int_equal(refuse_log_answer(&rl, &c, "sb1", "a\"b.example", a, 4, 1000), 3);
	out = stop();
	assert_int_equal(count(out, "dns: not pinning "), 3);
	assert_non_null(strstr(out, "not pinning 168.63.129.16 for \"a\\x22b.example\" (sandbox sb1): "
				    "Azure WireServer"));
	assert_non_null(strstr(out, "not pinning 2002:a9fe:a9fe::1 for"));
	assert_non_null(strstr(out, "the 6to4 form of 169.254.169.254, instance metadata service"));
	assert_non_null(strstr(out, "not pinning 198.51.100.77 for"));
	assert_non_null(strstr(out, "the host's own address or a sandbox pool"));
	assert_null(strstr(out, "198.51.100.10 "));
	free(out);
}

static void test_rate_limit(void **state)
{
	struct prefix internal[SPECIAL_TABLE_MAX];
	struct decide_ctx c = { .internal = internal };
	struct refuse_log rl = { 0 };
	struct wire_addr a[REFUSELOG_BURST + 10];
	char *out;

	(void)state;
	c.n_internal = special_prefixes(internal, SPECIAL_TABLE_MAX, 0);
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		a[i] = waddr("127.0.0.1");
	start();
	assert_int_equal(refuse_log_answer(&rl, &c, "sb1", "x.example", a, REFUSELOG_BURST + 10, 5000),
			 REFUSELOG_BURST + 10);
	out = stop();
	assert_int_equal(count(out, "dns: not pinning "), REFUSELOG_BURST);
	assert_int_equal(rl.suppressed, 10);
	free(out);

	/* A second later the bucket has refilled a little: the next line
	 * passes and reports what was not logged. */
	start();
	assert_int_equal(refuse_log_answer(&rl, &c, "sb1", "x.example", a, 1, 6000), 1);
	out = stop();
	assert_int_equal(count(out, "dns: not pinning 127.0.0.1"), 1);
	assert_non_null(strstr(out, "10 refused answer addresses not logged"));
	assert_int_equal(rl.suppressed, 0);
	assert_int_equal(rl.total, REFUSELOG_BURST + 11);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_rate_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
