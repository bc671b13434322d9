/*
 * test_pinreg - netd/model/pinreg.c, the one pin registry.
 * fw's part (was test_ledger): a pin given twice is one entry with the
 * later expiry; IPv4 and IPv6 and each (proto, port) are distinct; the live
 * count (the per-sandbox limit) counts only unexpired given entries and new
 * keys; entries lapsed past the slack are swept, never live ones; thousands
 * of entries stay exact; retain keeps exactly one give's pins.
 * The names (was test_pinsrc): which pins a new policy keeps (by qname,
 * protocol and port), which it removes, remaining lifetimes, expiry,
 * per-sandbox separation; many sandboxes, each asked about alone, forgotten,
 * dropped and swept without touching the others; the SNI check's names.
 * The last name (was test_pinmap's): per sandbox and address, any port; the
 * last name wins; forgotten with its sandbox.
 * And the seam: fw's give then the answer's note is one entry, a pin fw
 * still holds outlives its sandbox's forget until fw retains nothing.
 * A note repeated in its millisecond (skipped: nothing would change) is
 * never mistaken for one that would change something: another name, sandbox
 * or timeout, or a forget, drop or other note between.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/model/pinreg.h"

static struct policy *pol(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	return p;
}

static struct pin pin(const char *ip, uint8_t proto, uint16_t port, uint32_t timeout_ms)
{
	struct pin p = { .proto = proto, .port = port, .timeout_ms = timeout_ms };

	assert_int_equal(addr_parse(ip, &p.addr), 0);
	return p;
}

static struct pin pin4(const char *a, uint16_t port, uint32_t t_ms)
{
	return pin(a, IPPROTO_TCP, port, t_ms);
}

/* Collects what pinreg_given_each() hands out. */
struct given {
	struct pin v[64];
	size_t n;
};

static void collect(void *arg, const struct pin *p)
{
	struct given *g = arg;

	if (g->n < 64)
		g->v[g->n++] = *p;
}

static bool has(const struct given *g, const struct pin *p)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].proto == p->proto && g->v[i].port == p->port &&
		    addr_equal(&g->v[i].addr, &p->addr))
			return true;
	return false;
}

/* ---- fw's part (test_ledger's assertions) --------------------------------- */

static void test_give_refresh(void **state)
{
	struct pinreg *r;
	struct pin a = pin("192.0.2.1", IPPROTO_TCP, 443, 1000);

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	assert_int_equal(pinreg_give(r, "s", &a, 1, 10000, NULL), 0);
	a.timeout_ms = 5000;
	assert_int_equal(pinreg_give(r, "s", &a, 1, 12000, NULL), 0);
	assert_int_equal(pinreg_given_count(r, "s"), 1);
	assert_int_equal(pinreg_count(r), 1);
	/* Expires at 17000: live at 16999, not at 17000. */
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 16999), 1);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 17000), 0);
	/* A shorter one later never shortens it. */
	a.timeout_ms = 1;
	assert_int_equal(pinreg_give(r, "s", &a, 1, 13000, NULL), 0);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 16999), 1);
	pinreg_free(r);
	pinreg_free(NULL);
}

static void test_distinct_keys(void **state)
{
	struct pinreg *r;
	struct given g = { .n = 0 };
	struct pin v[] = {
		pin("192.0.2.1", IPPROTO_TCP, 443, 1000), pin("192.0.2.1", IPPROTO_UDP, 443, 1000),
		pin("192.0.2.1", IPPROTO_TCP, 80, 1000),  pin("2001:db8::1", IPPROTO_TCP, 443, 1000),
		pin("192.0.2.2", IPPROTO_TCP, 443, 1000),
	};

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	assert_int_equal(pinreg_give(r, "s", v, 5, 0, NULL), 0);
	assert_int_equal(pinreg_given_count(r, "s"), 5);
	assert_int_equal(pinreg_given_each(r, "s", collect, &g), 5);
	for (int i = 0; i < 5; i++)
		assert_true(has(&g, &v[i]));
	/* Retaining nothing: all gone (none had a name), the sandbox too. */
	pinreg_retain(r, "s", 0);
	assert_int_equal(pinreg_given_count(r, "s"), 0);
	assert_int_equal(pinreg_count(r), 0);
	assert_int_equal(pinreg_given_total(r), 0);
	/* Giving again makes fresh entries. */
	assert_int_equal(pinreg_give(r, "s", v, 2, 0, NULL), 0);
	assert_int_equal(pinreg_given_count(r, "s"), 2);
	assert_int_equal(pinreg_given_total(r), 2);
	pinreg_free(r);
}

static void test_live(void **state)
{
	struct pinreg *r;
	struct pin a = pin("192.0.2.1", IPPROTO_TCP, 443, 1000),
		   b = pin("192.0.2.2", IPPROTO_TCP, 443, 5000),
		   c = pin("192.0.2.3", IPPROTO_TCP, 443, 5000);

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	assert_int_equal(pinreg_given_live(r, "s", &a, 1, 0), 1);	/* nothing yet: the new one */
	assert_int_equal(pinreg_give(r, "s", &a, 1, 0, NULL), 0);
	assert_int_equal(pinreg_give(r, "s", &b, 1, 0, NULL), 0);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 500), 2);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 1000), 1);	/* a lapsed at 1000 */
	assert_int_equal(pinreg_given_live(r, "s", &b, 1, 500), 2);	/* b already counted */
	assert_int_equal(pinreg_given_live(r, "s", &c, 1, 500), 3);
	assert_int_equal(pinreg_given_live(r, "s", &a, 1, 2000), 2);	/* a again: new, b live */
	/* Another sandbox's pins and names alone count for nothing. */
	assert_int_equal(pinreg_give(r, "t", &c, 1, 0, NULL), 0);
	assert_int_equal(pinreg_note(r, "s", "c.example", &c, 1, 0), 0);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 500), 2);
	assert_int_equal(pinreg_given_live(r, "s", &c, 1, 500), 3);	/* named, not given */
	pinreg_free(r);
}

static void test_sweep_only_lapsed(void **state)
{
	struct pinreg *r;
	struct given g = { .n = 0 };
	struct pin p;
	char ip[32];

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	for (int i = 0; i < 16; i++) {
		snprintf(ip, sizeof(ip), "198.51.100.%d", i);
		p = pin(ip, IPPROTO_TCP, 443, 100);
		assert_int_equal(pinreg_give(r, "s", &p, 1, 0, NULL), 0);
	}
	p = pin("203.0.113.1", IPPROTO_TCP, 443, 100000);
	assert_int_equal(pinreg_give(r, "s", &p, 1, 100 + PINREG_SLACK_MS, NULL), 0);
	/* Within the slack: nothing dropped yet. */
	assert_int_equal(pinreg_sweep(r, 100 + PINREG_SLACK_MS), 0);
	assert_int_equal(pinreg_given_count(r, "s"), 17);
	/* Past it: the 16 go, the long one stays. */
	assert_int_equal(pinreg_sweep(r, 101 + PINREG_SLACK_MS), 16);
	assert_int_equal(pinreg_given_count(r, "s"), 1);
	assert_int_equal(pinreg_given_total(r), 1);
	assert_int_equal(pinreg_given_each(r, "s", collect, &g), 1);
	assert_true(has(&g, &p));
	/* The index still finds it: giving it again refreshes, adds nothing. */
	p.timeout_ms = 1;
	assert_int_equal(pinreg_give(r, "s", &p, 1, 300 + PINREG_SLACK_MS, NULL), 0);
	assert_int_equal(pinreg_count(r), 1);
	pinreg_free(r);
}

static void test_many(void **state)
{
	struct pinreg *r;
	struct pin p;
	char ip[64];

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 20000; i++) {
			snprintf(ip, sizeof(ip), "2001:db8::%x:%x", i / 65536, i % 65536);
			p = pin(ip, IPPROTO_TCP, 443, 60000);
			assert_int_equal(pinreg_give(r, "s", &p, 1, 0, NULL), 0);
		}
	assert_int_equal(pinreg_given_count(r, "s"), 20000);
	assert_int_equal(pinreg_given_live(r, "s", NULL, 0, 1), 20000);
	pinreg_free(r);
}

/* A reload: give the kept pins, then retain exactly that give's. */
static void test_retain(void **state)
{
	struct pinreg *r;
	struct given g = { .n = 0 };
	struct pin old[] = { pin4("192.0.2.1", 443, 10000), pin4("192.0.2.2", 443, 10000),
			     pin4("192.0.2.3", 443, 10000) };
	uint64_t gen;

	(void)state;
	assert_int_equal(pinreg_new(&r), 0);
	assert_int_equal(pinreg_give(r, "s", old, 3, 0, NULL), 0);
	assert_int_equal(pinreg_note(r, "s", "b.example", &old[1], 1, 0), 0);
	assert_int_equal(pinreg_give(r, "s", &old[2], 1, 100, &gen), 0);
	pinreg_retain(r, "s", gen);
	assert_int_equal(pinreg_given_count(r, "s"), 1);
	assert_int_equal(pinreg_given_each(r, "s", collect, &g), 1);
	assert_true(has(&g, &old[2]));
	/* The named one stays (not given), the bare one went. */
	assert_int_equal(pinreg_count_of(r, "s"), 2);
	assert_string_equal(pinreg_last_name(r, "s", &old[1].addr), "b.example");
	assert_null(pinreg_last_name(r, "s", &old[0].addr));
	pinreg_free(r);
}

/* ---- the names (test_pinsrc's assertions) --------------------------------- */

static void test_split_by_name_and_port(void **state)
{
	struct policy *nw = pol("name: p\negress:\n  - domains: [a.example]\n    ports: [443, 80]\n");
	struct pinreg *m;
	struct pin keep[8], pa = pin4("192.0.2.1", 443, 10000), pb = pin4("192.0.2.2", 443, 10000);
	struct pinreg_cut cut[8];
	size_t nk, nc;

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	assert_int_equal(pinreg_note(m, "sb1", "a.example", &pa, 1, 1000), 0);
	assert_int_equal(pinreg_note(m, "sb1", "b.example", &pb, 1, 1000), 0);
	assert_int_equal(pinreg_note(m, "sb2", "b.example", &pb, 1, 1000), 0);
	assert_int_equal(pinreg_count(m), 3);
	assert_int_equal(pinreg_split(m, "sb1", nw, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 1);
	assert_int_equal(nc, 1);
	assert_true(addr_equal(&keep[0].addr, &pa.addr));
	assert_int_equal(keep[0].timeout_ms, 7000);	/* what is left of it */
	assert_true(addr_equal(&cut[0].addr, &pb.addr));
	assert_string_equal(cut[0].qname, "b.example");
	/* Nothing changes until the drop. */
	assert_int_equal(pinreg_count(m), 3);
	pinreg_drop(m, "sb1", cut, nc);
	/* Dropped: no longer split (kept nor cut), sb2's entry stays; the
	 * address keeps its last name for the records. */
	assert_int_equal(pinreg_split(m, "sb1", nw, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk + nc, 1);
	assert_string_equal(pinreg_last_name(m, "sb1", &pb.addr), "b.example");
	assert_int_equal(pinreg_split(m, "sb2", NULL, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nc, 1);
	/* A NULL policy (deny all) keeps nothing. */
	assert_int_equal(pinreg_split(m, "sb1", NULL, 4000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 0);
	assert_int_equal(nc, 1);
	pinreg_forget(m, "sb2");
	assert_int_equal(pinreg_count(m), 2);	/* sb1's two */
	pinreg_free(m);
	policy_free(nw);
}

static void test_shared_address_and_port(void **state)
{
	/* Two names on one address: the pin stays while either is allowed. */
	struct policy *nw = pol("name: p\negress:\n  - domains: [\"*.cdn.example\"]\n    ports: [443]\n");
	struct pinreg *m;
	struct pin keep[4], p = pin4("192.0.2.9", 443, 5000), p80 = pin4("192.0.2.9", 80, 5000);
	struct pinreg_cut cut[4];
	size_t nk, nc;

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	assert_int_equal(pinreg_note(m, "s", "gone.example", &p, 1, 0), 0);
	assert_int_equal(pinreg_note(m, "s", "x.cdn.example", &p, 1, 0), 0);
	assert_int_equal(pinreg_note(m, "s", "x.cdn.example", &p80, 1, 0), 0);
	assert_int_equal(pinreg_split(m, "s", nw, 100, keep, 4, &nk, cut, 4, &nc), 0);
	assert_int_equal(nk, 1);
	assert_int_equal(keep[0].port, 443);
	assert_int_equal(nc, 1);
	assert_int_equal(cut[0].port, 80);	/* the name stays, that port does not */
	/* Expired entries are neither kept nor cut. */
	assert_int_equal(pinreg_split(m, "s", nw, 5000, keep, 4, &nk, cut, 4, &nc), 0);
	assert_int_equal(nk + nc, 0);
	/* Too small an array is an error, not a silent truncation. */
	assert_int_equal(pinreg_split(m, "s", NULL, 100, keep, 4, &nk, cut, 1, &nc), -E2BIG);
	/* Pins fw alone gave (a restart found them) are in neither list. */
	p = pin4("192.0.2.10", 443, 5000);
	assert_int_equal(pinreg_give(m, "s", &p, 1, 0, NULL), 0);
	assert_int_equal(pinreg_split(m, "s", NULL, 100, keep, 4, &nk, cut, 4, &nc), 0);
	assert_int_equal(nk, 0);
	assert_int_equal(nc, 2);
	pinreg_free(m);
	policy_free(nw);
}

/*
 * The gateway flag is part of an entry's key: the plain and the gateway pin
 * of one (address, port) are two entries, given, counted, named, expiring,
 * split and removed on their own; pinreg_names_gw() answers the gateway's
 * question for each.
 */
static void test_gateway_entries(void **state)
{
	/* api.corp.example through the gateway on 443; *.corp.example plainly on 443 and 80. */
	struct policy *nw = pol("name: p\negress:\n  - domains: [api.corp.example]\n    ports: [443]\n"
				"  - domains: [\"*.corp.example\"]\n    ports: [443, 80]\n");
	struct pin plain = pin4("198.51.100.10", 443, 20000), gw = plain, keep[8];
	struct pinreg_cut cut[8];
	const char *names[PINREG_NAMES_MAX];
	struct given g = { .n = 0 };
	struct pinreg *m;
	size_t nk, nc;

	(void)state;
	nw->rules[0].gateway = calloc(1, sizeof(*nw->rules[0].gateway));
	assert_non_null(nw->rules[0].gateway);
	gw.gateway = true;
	gw.timeout_ms = 5000;
	assert_int_equal(pinreg_new(&m), 0);
	/* fw gives both (one answer: a gateway rule and a plain rule matched). */
	assert_int_equal(pinreg_give(m, "sb", (const struct pin[]){ gw, plain }, 2, 0, NULL), 0);
	assert_int_equal(pinreg_given_count(m, "sb"), 2);
	assert_int_equal(pinreg_given_live(m, "sb", &gw, 1, 1000), 2);
	assert_int_equal(pinreg_note(m, "sb", "api.corp.example",
				     (const struct pin[]){ gw, plain }, 2, 0), 0);
	assert_int_equal(pinreg_count(m), 2);
	/* pinreg_given_each() hands out each with its flag. */
	assert_int_equal(pinreg_given_each(m, "sb", collect, &g), 2);
	assert_true(g.v[0].gateway != g.v[1].gateway);

	/* The gateway's question, both ways. */
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, true, 1000, names), 1);
	assert_string_equal(names[0], "api.corp.example");
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, false, 1000, names),
			 1);
	/* Another name pinned plainly on that address: only the plain entry has it. */
	assert_int_equal(pinreg_note(m, "sb", "www.corp.example", &plain, 1, 1000), 0);
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, true, 1000, names), 1);
	assert_int_equal(pinreg_names(m, "sb", &gw.addr, IPPROTO_TCP, 443, 1000, names), 2);
	assert_string_equal(names[1], "www.corp.example");
	/* Own expiries: the gateway pin lapses first. */
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, true, 6000, names), 0);
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, false, 6000, names),
			 2);
	assert_int_equal(pinreg_given_live(m, "sb", NULL, 0, 6000), 1);
	/* No such port, no such sandbox. */
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 80, true, 1000, names), 0);
	assert_int_equal(pinreg_names_gw(m, "nope", &gw.addr, IPPROTO_TCP, 443, true, 1000, names),
			 0);
	assert_int_equal(pinreg_names_gw(NULL, "sb", &gw.addr, IPPROTO_TCP, 443, true, 1000, names),
			 0);

	/* A reload: each kept by a rule of its own kind. */
	assert_int_equal(pinreg_split(m, "sb", nw, 1000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 2);
	assert_int_equal(nc, 0);
	assert_true(keep[0].gateway != keep[1].gateway);
	/* The rule loses gateway: the gateway pin is cut (never made plain), the plain one stays. */
	policy_gateway_free(nw->rules[0].gateway);
	nw->rules[0].gateway = NULL;
	assert_int_equal(pinreg_split(m, "sb", nw, 1000, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 1);
	assert_false(keep[0].gateway);
	assert_int_equal(nc, 1);
	assert_true(cut[0].gateway);
	assert_int_equal(cut[0].port, 443);
	pinreg_drop(m, "sb", cut, nc);
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, true, 1000, names), 0);
	assert_int_equal(pinreg_names_gw(m, "sb", &gw.addr, IPPROTO_TCP, 443, false, 1000, names),
			 2);
	/* fw removed both (a delete): retain nothing; the sandbox forgotten. */
	pinreg_retain(m, "sb", 0);
	assert_int_equal(pinreg_given_count(m, "sb"), 0);
	pinreg_forget(m, "sb");
	assert_int_equal(pinreg_count(m), 0);
	pinreg_free(m);
	policy_free(nw);
}

/* pinreg_names(): the SNI check's view of one pin. */
static void test_names(void **state)
{
	struct pinreg *m;
	struct pin pa = pin4("192.0.2.50", 443, 10000), p80 = pin4("192.0.2.50", 80, 10000);
	const char *names[PINREG_NAMES_MAX];

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	assert_int_equal(pinreg_note(m, "sb1", "allowed.example.com", &pa, 1, 1000), 0);
	assert_int_equal(pinreg_note(m, "sb1", "www.allowed.example.com", &pa, 1, 2000), 0);
	assert_int_equal(pinreg_note(m, "sb2", "other.example", &pa, 1, 1000), 0);
	assert_int_equal(pinreg_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 3000, names), 2);
	assert_string_equal(names[0], "allowed.example.com");
	assert_string_equal(names[1], "www.allowed.example.com");
	assert_int_equal(pinreg_names(m, "sb2", &pa.addr, IPPROTO_TCP, 443, 3000, names), 1);
	assert_string_equal(names[0], "other.example");
	/* other port, protocol, sandbox; expired */
	assert_int_equal(pinreg_names(m, "sb1", &p80.addr, IPPROTO_TCP, 80, 3000, names), 0);
	assert_int_equal(pinreg_names(m, "sb1", &pa.addr, IPPROTO_UDP, 443, 3000, names), 0);
	assert_int_equal(pinreg_names(m, "sb3", &pa.addr, IPPROTO_TCP, 443, 3000, names), 0);
	assert_int_equal(pinreg_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 12000, names), 0);
	/* Re-pinned after it lapsed: the old names no longer hold it. */
	assert_int_equal(pinreg_note(m, "sb1", "new.example", &pa, 1, 13000), 0);
	assert_int_equal(pinreg_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 14000, names), 1);
	assert_string_equal(names[0], "new.example");
	/* At most PINREG_NAMES_MAX, the oldest replaced. */
	for (int i = 0; i < PINREG_NAMES_MAX + 2; i++) {
		char q[32];

		snprintf(q, sizeof(q), "n%d.example", i);
		assert_int_equal(pinreg_note(m, "sb1", q, &pa, 1, 14000), 0);
	}
	assert_int_equal(pinreg_names(m, "sb1", &pa.addr, IPPROTO_TCP, 443, 14000, names),
			 PINREG_NAMES_MAX);
	for (int i = 0; i < PINREG_NAMES_MAX; i++)
		assert_string_not_equal(names[i], "new.example");
	assert_string_equal(pinreg_last_name(m, "sb1", &pa.addr), "n9.example");
	pinreg_free(m);
}

static void test_bad_input(void **state)
{
	struct pinreg *m;
	char longname[300];
	struct pin p = pin4("192.0.2.1", 1, 1);

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(pinreg_new(&m), 0);
	assert_int_equal(pinreg_note(m, "s", longname, &p, 1, 0), -EINVAL);
	assert_int_equal(pinreg_note(m, longname, "a", &p, 1, 0), -EINVAL);
	assert_int_equal(pinreg_note(m, "s", "a", NULL, 1, 0), -EINVAL);
	assert_int_equal(pinreg_give(m, longname, &p, 1, 0, NULL), -EINVAL);
	assert_int_equal(pinreg_name(m, "s", longname, &p.addr, 1, 0), -EINVAL);
	assert_int_equal(pinreg_count(m), 0);
	assert_null(pinreg_last_name(m, longname, &p.addr));
	pinreg_free(m);
}

static void test_many_sandboxes(void **state)
{
	struct policy *p = pol("name: p\negress:\n  - domains: [a.example]\n    ports: [443]\n");
	struct pinreg *m;
	struct pin keep[8], pins[3];
	struct pinreg_cut cut[8];
	char name[32];
	size_t nk, nc;
	/* Past the third pin's expiry and its slack, not the others'. */
	const uint64_t later = 100 + PINREG_SLACK_MS + 1;

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	pins[0] = pin4("192.0.2.1", 443, 10000 + PINREG_SLACK_MS);
	pins[1] = pin4("192.0.2.2", 443, 10000 + PINREG_SLACK_MS);
	pins[2] = pin4("192.0.2.3", 443, 100);	/* expires early */
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "sb%d", i);
		assert_int_equal(pinreg_note(m, name, "a.example", pins, 3, 0), 0);
	}
	assert_int_equal(pinreg_count(m), 1500);
	assert_int_equal(pinreg_count_of(m, "sb7"), 3);
	pinreg_forget(m, "sb7");
	assert_int_equal(pinreg_count(m), 1497);
	assert_int_equal(pinreg_count_of(m, "sb7"), 0);
	assert_int_equal(pinreg_count_of(m, "sb8"), 3);
	assert_int_equal(pinreg_split(m, "sb7", p, 50, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk + nc, 0);
	assert_int_equal(pinreg_split(m, "sb8", p, 50, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 3);
	/* After 192.0.2.3 expired: two each; a drop takes one of sb9's only. */
	assert_int_equal(pinreg_split(m, "sb9", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 2);
	assert_int_equal(nc, 0);
	cut[0] = (struct pinreg_cut){ .addr = pins[0].addr, .proto = IPPROTO_TCP, .port = 443 };
	pinreg_drop(m, "sb9", cut, 1);
	assert_int_equal(pinreg_count_of(m, "sb9"), 3);	/* named still, until swept */
	assert_int_equal(pinreg_split(m, "sb9", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 1);
	assert_true(addr_equal(&keep[0].addr, &pins[1].addr));
	assert_int_equal(pinreg_split(m, "sb10", p, 200, keep, 8, &nk, cut, 8, &nc), 0);
	assert_int_equal(nk, 2);
	/* Sweeping (notes) frees what lapsed past the slack, lists and all (ASan sees leaks). */
	for (int i = 0; i < (1 << 18) / 8 + 1; i++)
		assert_int_equal(pinreg_note(m, "sweeper", "a.example", pins, 1, later), 0);
	assert_int_equal(pinreg_count(m), 2 * 498 + 1 + 1);	/* sb9 has one, the sweeper one */
	assert_int_equal(pinreg_count_of(m, "sb10"), 2);
	assert_int_equal(pinreg_count_of(m, "sb9"), 1);	/* the dropped one swept too */
	pinreg_forget(m, "sweeper");
	assert_int_equal(pinreg_count(m), 2 * 498 + 1);
	pinreg_free(m);
	policy_free(p);
}

/* ---- the last name (test_pinmap's assertions) ----------------------------- */

static void test_last_name(void **state)
{
	struct pinreg *m;
	struct pin a = pin4("198.51.100.10", 443, 1000), a80 = pin4("198.51.100.10", 80, 1000);
	struct addr b;
	char name[300];

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	addr_parse("2001:db8::1", &b);
	assert_null(pinreg_last_name(m, "sb1", &a.addr));
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 0), 0);
	assert_int_equal(pinreg_note(m, "sb2", "other.example", &a, 1, 0), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "pypi.org");
	assert_string_equal(pinreg_last_name(m, "sb2", &a.addr), "other.example");
	/* The last name that pinned it wins, on any port. */
	assert_int_equal(pinreg_note(m, "sb1", "files.pythonhosted.org", &a80, 1, 0), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "files.pythonhosted.org");
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 0), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "pypi.org");
	assert_null(pinreg_last_name(m, "sb1", &b));
	/* Lapsed, it still names the address (a connection outlives its pin). */
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "pypi.org");
	/* Named without a pin (audit mode): named, yet no pin to keep or check. */
	assert_int_equal(pinreg_name(m, "sb3", "audit.example", &b, 1, 0), 0);
	assert_string_equal(pinreg_last_name(m, "sb3", &b), "audit.example");
	assert_int_equal(pinreg_given_live(m, "sb3", NULL, 0, 0), 0);
	{
		struct pin keep[2];
		struct pinreg_cut cut[2];
		size_t nk, nc;

		assert_int_equal(pinreg_split(m, "sb3", NULL, 0, keep, 2, &nk, cut, 2, &nc), 0);
		assert_int_equal(nk + nc, 0);
	}
	assert_int_equal(pinreg_name(m, "sb3", "later.example", &b, 1, 5), 0);
	assert_string_equal(pinreg_last_name(m, "sb3", &b), "later.example");
	assert_int_equal(pinreg_count_of(m, "sb3"), 1);
	/* A name too long is refused, never truncated into another name. */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(pinreg_name(m, "sb3", name, &b, 1, 0), -EINVAL);
	name[PINREG_QNAME_MAX] = '\0';
	assert_int_equal(pinreg_name(m, "sb3", name, &b, 1, 0), 0);
	assert_int_equal(strlen(pinreg_last_name(m, "sb3", &b)), PINREG_QNAME_MAX);
	/* Forgotten with its sandbox. */
	pinreg_forget(m, "sb1");
	assert_null(pinreg_last_name(m, "sb1", &a.addr));
	assert_string_equal(pinreg_last_name(m, "sb2", &a.addr), "other.example");
	pinreg_free(m);
}

/* ---- a note repeated within its millisecond ------------------------------- */

static void test_note_repeat(void **state)
{
	struct pinreg *m;
	struct pin a = pin4("198.51.100.10", 443, 1000), a5 = pin4("198.51.100.10", 443, 5000);
	const char *names[PINREG_NAMES_MAX];
	struct pinreg_cut cut = { .addr = a.addr, .proto = IPPROTO_TCP, .port = 443 };

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	assert_int_equal(pinreg_count(m), 1);
	/* Another note between: the repeat names the address last again. */
	assert_int_equal(pinreg_note(m, "sb1", "mirror.example", &a, 1, 7), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "mirror.example");
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "pypi.org");
	/* Another sandbox, the same everything else: its own entry. */
	assert_int_equal(pinreg_note(m, "sb2", "pypi.org", &a, 1, 7), 0);
	assert_int_equal(pinreg_count_of(m, "sb2"), 1);
	assert_string_equal(pinreg_last_name(m, "sb2", &a.addr), "pypi.org");
	/* A longer timeout is not a repeat: the names hold longer. */
	assert_int_equal(pinreg_note(m, "sb2", "pypi.org", &a5, 1, 7), 0);
	assert_int_equal(pinreg_names(m, "sb2", &a.addr, IPPROTO_TCP, 443, 3000, names), 1);
	/* A drop between (a budget closed the rule): the repeat names it again. */
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	pinreg_drop(m, "sb1", &cut, 1);
	assert_int_equal(pinreg_names(m, "sb1", &a.addr, IPPROTO_TCP, 443, 8, names), 0);
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	assert_int_equal(pinreg_names(m, "sb1", &a.addr, IPPROTO_TCP, 443, 8, names), 1);
	/* A forget between (the sandbox deleted and made again): named again. */
	pinreg_forget(m, "sb1");
	assert_null(pinreg_last_name(m, "sb1", &a.addr));
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 7), 0);
	assert_string_equal(pinreg_last_name(m, "sb1", &a.addr), "pypi.org");
	/* The next millisecond is not a repeat: the expiry moves on. */
	assert_int_equal(pinreg_note(m, "sb1", "pypi.org", &a, 1, 900), 0);
	assert_int_equal(pinreg_names(m, "sb1", &a.addr, IPPROTO_TCP, 443, 1500, names), 1);
	pinreg_free(m);
}

/* ---- the seam: fw's give, then the answer's note -------------------------- */

static void test_give_then_note(void **state)
{
	struct pinreg *m;
	struct pin v[] = { pin4("192.0.2.1", 443, 5000), pin4("192.0.2.2", 443, 5000),
			   pin4("192.0.2.3", 443, 5000) };
	const char *names[PINREG_NAMES_MAX];
	struct given g = { .n = 0 };

	(void)state;
	assert_int_equal(pinreg_new(&m), 0);
	/* fw sent the second only (the proxy had the others); the note names all three. */
	assert_int_equal(pinreg_give(m, "s", &v[1], 1, 0, NULL), 0);
	assert_int_equal(pinreg_note(m, "s", "a.example", v, 3, 1), 0);
	assert_int_equal(pinreg_count(m), 3);
	assert_int_equal(pinreg_given_count(m, "s"), 1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pinreg_names(m, "s", &v[i].addr, IPPROTO_TCP, 443, 2, names), 1);
		assert_string_equal(names[0], "a.example");
	}
	/* Lapsed, then fw alone gives it again (an idle grace): the address
	 * keeps its last name, but the old answer's names no longer hold it. */
	assert_int_equal(pinreg_give(m, "s", &v[1], 1, 6000, NULL), 0);
	assert_string_equal(pinreg_last_name(m, "s", &v[1].addr), "a.example");
	assert_int_equal(pinreg_names(m, "s", &v[1].addr, IPPROTO_TCP, 443, 6001, names), 0);
	assert_int_equal(pinreg_given_live(m, "s", NULL, 0, 6001), 1);
	/* Deleted while fw could not remove its pins: names go, the given pin stays. */
	pinreg_forget(m, "s");
	assert_int_equal(pinreg_count_of(m, "s"), 1);
	assert_null(pinreg_last_name(m, "s", &v[1].addr));
	assert_int_equal(pinreg_given_each(m, "s", collect, &g), 1);
	assert_true(has(&g, &v[1]));
	/* fw removed it at last: nothing is left. */
	pinreg_retain(m, "s", 0);
	assert_int_equal(pinreg_count(m), 0);
	pinreg_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_give_refresh),
		cmocka_unit_test(test_distinct_keys),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_sweep_only_lapsed),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_retain),
		cmocka_unit_test(test_split_by_name_and_port),
		cmocka_unit_test(test_shared_address_and_port),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_gateway_entries),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_many_sandboxes),
		cmocka_unit_test(test_last_name),
		cmocka_unit_test(test_give_then_note),
		cmocka_unit_test(test_note_repeat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
