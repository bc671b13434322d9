/*
 * test_pinsrc - the pin-source map a policy reload uses: which pins the new
 * policy keeps (by qname, protocol and port), which it removes, remaining
 * lifetimes, expiry, per-sandbox separation and the entry limit; many
 * sandboxes, each asked about alone (its own list), forgotten, dropped and
 * swept without touching the others.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "netd/trail/pinsrc.h"

static struct policy *pol(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	return p;
}

static struct pin pin4(const char *a, uint16_t port, uint32_t t_ms)
{
	struct pin p = { .proto = IPPROTO_TCP, .port = port, .timeout_ms = t_ms };

	assert_int_equal(addr_parse(a, &p.addr), 0);
	return p;
}

static void test_split_by_name_and_port(void **state)
{
	struct policy *old = pol("name: p\negress:\n  - domains: [a.example, b.example]\n    ports: [443]\n");
	struct policy *nw = pol("name: p\negress:\n  - domains: [a.example]\n    ports: [443, 80]\n");
	struct pinsrc *m;
	struct pin keep[8], pa = pin4("192.0.2.1", 443, 10000), pb = pin4("192.0.2.2", 443, 10000);
	struct pinsrc_cut cut[8];
	size_t nk, nc;

	(void)state;
	(void)old;
	assert_int_equal(pinsrc_new(&m), 0);
	assert_int_equal(pinsrc_note(m, "sb1", "a.example", &pa, 1, 1000), 0);
	assert_int_equal(pinsrc_note(m, "sb1", "b.example", &pb, 1, 1000), 0);
	assert_int_equal(pinsrc_note(m, "sb2", "b.example", &pb, 1, 1000), 0);
	assert_int_equal(pinsrc_count(m), 3);
	assert_int_equal(pinsrc_split(m, "sb1", nw, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 1);
	assert_int_equal(nc, 1);
	assert_true(addr_equal(&keep[0].addr, &pa.addr));
	assert_int_equal(keep[0].timeout_ms, 7000);	/* what is left of it */
	assert_true(addr_equal(&cut[0].addr, &pb.addr));
	assert_string_equal(cut[0].qname, "b.example");
	/* Nothing changes until the drop. */
	assert_int_equal(pinsrc_count(m), 3);
	pinsrc_drop(m, "sb1", cut, nc);
	assert_int_equal(pinsrc_count(m), 2);	/* sb2's entry stays */
	/* A NULL policy (deny all) keeps nothing. */
	assert_int_equal(pinsrc_split(m, "sb1", NULL, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 0);
	assert_int_equal(nc, 1);
	pinsrc_forget(m, "sb2");
	assert_int_equal(pinsrc_count(m), 1);
	pinsrc_free(m);
	policy_free(old);
	policy_free(nw);
}

static void test_shared_address_and_port(void **state)
{
	/* Two names on one address: the pin stays while either is allowed. */
	struct policy *nw = pol("name: p\negress:\n  - domains: [\"*.cdn.example\"]\n    ports: [443]\n");
	struct pinsrc *m;
	struct pin keep[4], p = pin4("192.0.2.9", 443, 5000), p80 = pin4("192.0.2.9", 80, 5000);
	struct pinsrc_cut cut[4];
	size_t nk, nc;

	(void)state;
	assert_int_equal(pinsrc_new(&m), 0);
	assert_int_equal(pinsrc_note(m, "s", "gone.example", &p, 1, 0), 0);
	assert_int_equal(pinsrc_note(m, "s", "x.cdn.example", &p, 1, 0), 0);
	assert_int_equal(pinsrc_note(m, "s", "x.cdn.example", &p80, 1, 0), 0);
	assert_int_equal(pinsrc_split(m, "s", nw, 100, keep, 4, &nk, cut, 4, &nc), 0);
	assert_int_equal(nk, 1);
	assert_int_equal(keep[0].port, 443);
	assert_int_equal(nc, 1);
	assert_int_equal(cut[0].port, 80);	/* the name stays, that port does not */
	/* Expired entries are neither kept nor cut. */
	assert_int_equal(pinsrc_split(m, "s", nw, 5000, keep, 4, &nk, cut, 4, &nc), 0);
	assert_int_equal(nk + nc, 0);
	/* Too small an array is an error, not a silent truncation. */
	assert_int_equal(pinsrc_split(m, "s", NULL, 100, keep, 4, &nk, cut, 1, &nc), -E2BIG);
	pinsrc_free(m);
	policy_free(nw);
}

/* pinsrc_names(): the SNI check's view of one pin. */
static void test_names(void **state)
{
	struct pinsrc *m;
	struct pin pa = pin4("192.0.2.50", 443, 10000), p80 = pin4("192.0.2.50", 80, 10000);
	const char *names[PINSRC_NAMES_MAX];

	(void)state;
	assert_int_equal(pinsrc_new(&m), 0);
	assert_int_equal(pinsrc_note(m, "sb1", "allowed.example.com", &pa, 1, 1000), 0);
	assert_int_equal(pinsrc_note(m, "sb1", "www.allowed.example.com", &pa, 1, 2000), 0);
	assert_int_equal(pinsrc_note(m, "sb2", "other.example", &pa, 1, 1000), 0);
	assert_int_equal(pinsrc_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 3000, names), 2);
	assert_string_equal(names[0], "allowed.example.com");
	assert_string_equal(names[1], "www.allowed.example.com");
	assert_int_equal(pinsrc_names(m, "sb2", &pa.addr, IPPROTO_TCP, 443, 3000, names), 1);
	assert_string_equal(names[0], "other.example");
	/* other port, protocol, sandbox; expired */
	assert_int_equal(pinsrc_names(m, "sb1", &p80.addr, IPPROTO_TCP, 80, 3000, names), 0);
	assert_int_equal(pinsrc_names(m, "sb1", &pa.addr, IPPROTO_UDP, 443, 3000, names), 0);
	assert_int_equal(pinsrc_names(m, "sb3", &pa.addr, IPPROTO_TCP, 443, 3000, names), 0);
	assert_int_equal(pinsrc_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 12000, names), 0);
	pinsrc_free(m);
}

static void test_bad_input(void **state)
{
	struct pinsrc *m;
	char longname[300];
	struct pin p = pin4("192.0.2.1", 1, 1);

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(pinsrc_new(&m), 0);
	assert_int_equal(pinsrc_note(m, "s", longname, &p, 1, 0), -EINVAL);
	assert_int_equal(pinsrc_note(m, longname, "a", &p, 1, 0), -EINVAL);
	assert_int_equal(pinsrc_note(m, "s", "a", NULL, 1, 0), -EINVAL);
	pinsrc_free(m);
	pinsrc_free(NULL);
}

static void test_many_sandboxes(void **state)
{
	struct policy *p = pol("name: p\negress:\n  - domains: [a.example]\n    ports: [443]\n");
	struct pinsrc *m;
	struct pin keep[8], pins[3];
	struct pinsrc_cut cut[8];
	char name[32];
	size_t nk, nc;

	(void)state;
	assert_int_equal(pinsrc_new(&m), 0);
	pins[0] = pin4("192.0.2.1", 443, 10000);
	pins[1] = pin4("192.0.2.2", 443, 10000);
	pins[2] = pin4("192.0.2.3", 443, 100);	/* expires early */
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "sb%d", i);
		assert_int_equal(pinsrc_note(m, name, "a.example", pins, 3, 0), 0);
	}
	assert_int_equal(pinsrc_count(m), 1500);
	assert_int_equal(pinsrc_count_of(m, "sb7"), 3);
	pinsrc_forget(m, "sb7");
	assert_int_equal(pinsrc_count(m), 1497);
	assert_int_equal(pinsrc_count_of(m, "sb7"), 0);
	assert_int_equal(pinsrc_count_of(m, "sb8"), 3);
	assert_int_equal(pinsrc_split(m, "sb7", p, 50, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk + nc, 0);
	assert_int_equal(pinsrc_split(m, "sb8", p, 50, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 3);
	/* After 192.0.2.3 expired: two each; a drop takes one of sb9's only. */
	assert_int_equal(pinsrc_split(m, "sb9", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 2);
	assert_int_equal(nc, 0);
	cut[0] = (struct pinsrc_cut){ .addr = pins[0].addr, .proto = IPPROTO_TCP, .port = 443 };
	pinsrc_drop(m, "sb9", cut, 1);
	assert_int_equal(pinsrc_count_of(m, "sb9"), 2);
	assert_int_equal(pinsrc_split(m, "sb9", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 1);
	assert_true(addr_equal(&keep[0].addr, &pins[1].addr));
	assert_int_equal(pinsrc_split(m, "sb10", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 2);
	/* Sweeping (notes) frees what expired, lists and all (ASan sees leaks). */
	for (int i = 0; i < 65536 / 8 + 1; i++)
		assert_int_equal(pinsrc_note(m, "sweeper", "a.example", pins, 1, 20000), 0);
	assert_int_equal(pinsrc_count(m), 1);
	pinsrc_forget(m, "sweeper");
	assert_int_equal(pinsrc_count(m), 0);
	pinsrc_free(m);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_by_name_and_port),
		cmocka_unit_test(test_shared_address_and_port),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_many_sandboxes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
