/*
 * test_ledger - netd/fw/ledger.c, the record of the pins fw sent for one
 * sandbox: a pin noted twice is one entry with the later expiry; IPv4 and
 * IPv6 and each (proto, port) are distinct; the live count (the
 * per-sandbox limit) counts only unexpired entries and new keys; entries
 * lapsed past the slack are dropped when the ledger grows, never live
 * ones; thousands of entries stay exact.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "netd/fw/ledger.h"

static struct pin pin(const char *ip, uint8_t proto, uint16_t port, uint32_t timeout_ms)
{
	struct pin p;

	memset(&p, 0, sizeof(p));
	assert_int_equal(addr_parse(ip, &p.addr), 0);
	p.proto = proto;
	p.port = port;
	p.timeout_ms = timeout_ms;
	return p;
}

/* The entry for @p, or NULL. */
static const struct fw_ledger_pin *find(const struct fw_ledger *l, const struct pin *p)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].p.addr.family == p->addr.family && l->v[i].p.proto == p->proto &&
		    l->v[i].p.port == p->port &&
		    memcmp(l->v[i].p.addr.a, p->addr.a, addr_len(p->addr.family)) == 0)
			return &l->v[i];
	return NULL;
}

static void test_note_refresh(void **state)
{
	struct fw_ledger l = { 0 };
	struct pin a = pin("192.0.2.1", IPPROTO_TCP, 443, 1000);

	(void)state;
	assert_int_equal(fw_ledger_note(&l, &a, 1, 10000), 0);
	a.timeout_ms = 5000;
	assert_int_equal(fw_ledger_note(&l, &a, 1, 12000), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(find(&l, &a)->expires_ms, 17000);
	fw_ledger_free(&l);
	assert_null(l.v);
	fw_ledger_free(NULL);
}

static void test_distinct_keys(void **state)
{
	struct fw_ledger l = { 0 };
	struct pin v[] = {
		pin("192.0.2.1", IPPROTO_TCP, 443, 1000), pin("192.0.2.1", IPPROTO_UDP, 443, 1000),
		pin("192.0.2.1", IPPROTO_TCP, 80, 1000),  pin("2001:db8::1", IPPROTO_TCP, 443, 1000),
		pin("192.0.2.2", IPPROTO_TCP, 443, 1000),
	};

	(void)state;
	assert_int_equal(fw_ledger_note(&l, v, 5, 0), 0);
	assert_int_equal(l.n, 5);
	for (int i = 0; i < 5; i++)
		assert_non_null(find(&l, &v[i]));
	fw_ledger_clear(&l);
	assert_int_equal(l.n, 0);
	/* Cleared, the index is too: noting again makes fresh entries. */
	assert_int_equal(fw_ledger_note(&l, v, 2, 0), 0);
	assert_int_equal(l.n, 2);
	fw_ledger_free(&l);
}

static void test_live(void **state)
{
	struct fw_ledger l = { 0 };
	struct pin a = pin("192.0.2.1", IPPROTO_TCP, 443, 1000),
		      b = pin("192.0.2.2", IPPROTO_TCP, 443, 5000),
		      c = pin("192.0.2.3", IPPROTO_TCP, 443, 5000);

	(void)state;
	assert_int_equal(fw_ledger_live(&l, &a, 1, 0), 1);	/* empty ledger: the new one */
	assert_int_equal(fw_ledger_note(&l, &a, 1, 0), 0);
	assert_int_equal(fw_ledger_note(&l, &b, 1, 0), 0);
	assert_int_equal(fw_ledger_live(&l, NULL, 0, 500), 2);
	assert_int_equal(fw_ledger_live(&l, NULL, 0, 1000), 1);	/* a lapsed at 1000 */
	assert_int_equal(fw_ledger_live(&l, &b, 1, 500), 2);	/* b already counted */
	assert_int_equal(fw_ledger_live(&l, &c, 1, 500), 3);
	assert_int_equal(fw_ledger_live(&l, &a, 1, 2000), 2);	/* a again: new, b live */
	fw_ledger_free(&l);
}

static void test_prune_only_lapsed(void **state)
{
	struct fw_ledger l = { 0 };
	struct pin p;
	char ip[32];

	(void)state;
	/* 16 short pins (the first allocation), then the ledger must grow. */
	for (int i = 0; i < 16; i++) {
		snprintf(ip, sizeof(ip), "198.51.100.%d", i);
		p = pin(ip, IPPROTO_TCP, 443, 100);
		assert_int_equal(fw_ledger_note(&l, &p, 1, 0), 0);
	}
	p = pin("203.0.113.1", IPPROTO_TCP, 443, 100000);
	/* Within the slack: nothing dropped yet. */
	assert_int_equal(fw_ledger_note(&l, &p, 1, 100 + FW_LEDGER_SLACK_MS), 0);
	assert_int_equal(l.n, 17);
	/* Past it: the 16 go when the ledger would grow, the long one stays. */
	for (int i = 0; i < 16; i++) {
		snprintf(ip, sizeof(ip), "192.0.2.%d", i);
		p = pin(ip, IPPROTO_UDP, 53, 100000);
		assert_int_equal(fw_ledger_note(&l, &p, 1, 200 + FW_LEDGER_SLACK_MS), 0);
	}
	assert_int_equal(l.n, 17);
	p = pin("203.0.113.1", IPPROTO_TCP, 443, 0);
	assert_non_null(find(&l, &p));
	p = pin("198.51.100.3", IPPROTO_TCP, 443, 0);
	assert_null(find(&l, &p));
	/* The index still finds every entry after the prune: a re-note refreshes. */
	p = pin("192.0.2.7", IPPROTO_UDP, 53, 1);
	assert_int_equal(fw_ledger_note(&l, &p, 1, 300 + FW_LEDGER_SLACK_MS), 0);
	assert_int_equal(l.n, 17);
	fw_ledger_free(&l);
}

static void test_many(void **state)
{
	struct fw_ledger l = { 0 };
	struct pin p;
	char ip[64];

	(void)state;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 20000; i++) {
			snprintf(ip, sizeof(ip), "2001:db8::%x:%x", i / 65536, i % 65536);
			p = pin(ip, IPPROTO_TCP, 443, 60000);
			assert_int_equal(fw_ledger_note(&l, &p, 1, 0), 0);
		}
	assert_int_equal(l.n, 20000);
	assert_int_equal(fw_ledger_live(&l, NULL, 0, 1), 20000);
	fw_ledger_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_note_refresh),
		cmocka_unit_test(test_distinct_keys),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_prune_only_lapsed),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
