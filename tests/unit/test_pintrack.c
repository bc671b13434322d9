/*
 * test_pintrack - the pin tracker: a later answer with a shorter TTL never
 * re-pins (the kernel's re-add would SET, i.e. shorten, the timeout); a
 * longer one does; re-pins the kernel already covers are skipped; the
 * per-sandbox limit; reset and expiry.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dnsproxy/pintrack.h"

static struct pin pin(const char *ip, uint16_t port, uint32_t timeout_ms)
{
	struct pin p;

	memset(&p, 0, sizeof(p));
	assert_int_equal(addr_parse(ip, &p.addr), 0);
	p.proto = IPPROTO_TCP;
	p.port = port;
	p.timeout_ms = timeout_ms;
	return p;
}

static void test_never_shorter(void **state)
{
	struct pintrack *pt;
	struct pin in[3], out[3];

	(void)state;
	assert_int_equal(pintrack_new(&pt), 0);
	in[0] = pin("192.0.2.1", 443, 600000);
	in[1] = pin("2001:db8::1", 443, 600000);
	assert_int_equal(pintrack_plan(pt, "sb", in, 2, 1000, 0, out), 2);
	assert_int_equal(pintrack_commit(pt, "sb", in, 2, 1000), 0);
	assert_int_equal(pintrack_live(pt, "sb"), 2);

	/* A later answer, TTL 5 s: the kernel already covers it. */
	in[0].timeout_ms = 5000;
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 2000, 0, out), 0);
	/* Same expiry exactly: skipped too. */
	in[0].timeout_ms = 599000;
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 2000, 0, out), 0);
	/* One millisecond later: re-pinned (extends). */
	in[0].timeout_ms = 599001;
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 2000, 0, out), 1);
	assert_int_equal(out[0].timeout_ms, 599001);
	assert_int_equal(pintrack_commit(pt, "sb", in, 1, 2000), 0);
	/* A commit with a shorter expiry never lowers the record. */
	in[0].timeout_ms = 1;
	assert_int_equal(pintrack_commit(pt, "sb", in, 1, 3000), 0);
	in[0].timeout_ms = 599000;
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 2000, 0, out), 0);

	/* Another port, another sandbox: separate elements. */
	in[0] = pin("192.0.2.1", 8443, 5000);
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 2000, 0, out), 1);
	in[0] = pin("192.0.2.1", 443, 5000);
	assert_int_equal(pintrack_plan(pt, "other", in, 1, 2000, 0, out), 1);

	/* Once expired, a re-pin goes to the kernel again. */
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 700000, 0, out), 1);
	assert_int_equal(pintrack_expire(pt, 700000), 2);
	assert_int_equal(pintrack_live(pt, "sb"), 0);
	assert_int_equal(pintrack_total(pt), 0);
	pintrack_free(pt);
}

static void test_limit_and_reset(void **state)
{
	struct pintrack *pt;
	struct pin in[4], out[4];

	(void)state;
	assert_int_equal(pintrack_new(&pt), 0);
	in[0] = pin("192.0.2.1", 443, 60000);
	in[1] = pin("192.0.2.2", 443, 60000);
	in[2] = pin("192.0.2.3", 443, 60000);
	assert_int_equal(pintrack_plan(pt, "sb", in, 3, 0, 2, out), -ENOSPC);
	assert_int_equal(pintrack_plan(pt, "sb", in, 2, 0, 2, out), 2);
	assert_int_equal(pintrack_commit(pt, "sb", in, 2, 0), 0);
	/* Re-pinning known elements never counts against the limit. */
	in[0].timeout_ms = 120000;
	assert_int_equal(pintrack_plan(pt, "sb", in, 2, 0, 2, out), 1);
	assert_int_equal(pintrack_plan(pt, "sb", &in[2], 1, 0, 2, out), -ENOSPC);
	/* Reset (sandbox recreated): nothing is known, every pin goes out. */
	pintrack_reset(pt, "sb");
	pintrack_reset(pt, "never-seen");
	assert_int_equal(pintrack_live(pt, "sb"), 0);
	in[0].timeout_ms = 1000;
	assert_int_equal(pintrack_plan(pt, "sb", in, 1, 0, 2, out), 1);
	pintrack_free(pt);
	pintrack_free(NULL);
}

/*
 * The gateway flag is part of the key: a plain and a gateway pin of one
 * (address, port) are two elements (pin4 and gw4), each with its own
 * expiry, each counted against the limit (dns.max_pins), each reset.
 */
static void test_gateway_key(void **state)
{
	struct pintrack *pt;
	struct pin in[2], out[2];

	(void)state;
	assert_int_equal(pintrack_new(&pt), 0);
	in[0] = pin("198.51.100.10", 443, 60000);
	in[1] = in[0];
	in[1].gateway = true;
	in[1].timeout_ms = 10000;
	/* Two new elements: over a limit of 1. */
	assert_int_equal(pintrack_plan(pt, "sb", in, 2, 0, 1, out), -ENOSPC);
	assert_int_equal(pintrack_plan(pt, "sb", in, 2, 0, 2, out), 2);
	assert_true(out[1].gateway);
	assert_int_equal(pintrack_commit(pt, "sb", in, 2, 0), 0);
	assert_int_equal(pintrack_live(pt, "sb"), 2);

	/* The plain pin's long expiry does not cover the gateway pin's. */
	in[1].timeout_ms = 30000;
	assert_int_equal(pintrack_plan(pt, "sb", &in[1], 1, 0, 2, out), 1);
	assert_true(out[0].gateway);
	assert_int_equal(pintrack_commit(pt, "sb", &in[1], 1, 0), 0);
	/* ... and the gateway pin's does not cover the plain one's. */
	in[0].timeout_ms = 45000;
	assert_int_equal(pintrack_plan(pt, "sb", &in[0], 1, 40000, 2, out), 1);
	assert_false(out[0].gateway);
	assert_int_equal(pintrack_live(pt, "sb"), 2);

	/* Each expires on its own. */
	assert_int_equal(pintrack_expire(pt, 30000), 1);
	assert_int_equal(pintrack_live(pt, "sb"), 1);
	in[1].timeout_ms = 1000;
	assert_int_equal(pintrack_plan(pt, "sb", &in[1], 1, 30000, 1, out), -ENOSPC);
	pintrack_reset(pt, "sb");
	assert_int_equal(pintrack_total(pt), 0);
	pintrack_free(pt);
}

static void test_many(void **state)
{
	struct pintrack *pt;
	struct pin p, out[1];

	(void)state;
	assert_int_equal(pintrack_new(&pt), 0);
	/* Enough to make the table grow several times. */
	for (uint32_t i = 0; i < 20000; i++) {
		p = pin("2001:db8::", 443, 1000 + i);
		p.addr.a[12] = (uint8_t)(i >> 24);
		p.addr.a[13] = (uint8_t)(i >> 16);
		p.addr.a[14] = (uint8_t)(i >> 8);
		p.addr.a[15] = (uint8_t)i;
		assert_int_equal(pintrack_commit(pt, i & 1 ? "a" : "b", &p, 1, 0), 0);
	}
	assert_int_equal(pintrack_total(pt), 20000);
	assert_int_equal(pintrack_live(pt, "a"), 10000);
	p.timeout_ms = 1;
	assert_int_equal(pintrack_plan(pt, "b", &p, 1, 0, 0, out), 1);	/* it is a's */
	assert_int_equal(pintrack_plan(pt, "a", &p, 1, 0, 0, out), 0);
	assert_int_equal(pintrack_expire(pt, 1000 + 9999), 10000);
	pintrack_free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_shorter),
		cmocka_unit_test(test_limit_and_reset),
		cmocka_unit_test(test_gateway_key),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
