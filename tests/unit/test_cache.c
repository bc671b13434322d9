/*
 * test_cache - the answer cache: keys (case, qtype, EDNS/DO/CD bits),
 * TTLs aged on every hit and never served past expiry, LRU eviction under
 * the entry and byte bounds; and the wire helpers it relies on
 * (wire_cache_ttl: smallest TTL, RFC 2308 negative TTL from the SOA).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dnsproxy/cache.h"
#include "dnsproxy/wire.h"

struct msgb {
	uint8_t b[1024];
	size_t len;
};

static void put16(struct msgb *m, uint16_t v)
{
	m->b[m->len++] = (uint8_t)(v >> 8);
	m->b[m->len++] = (uint8_t)v;
}

static void put32(struct msgb *m, uint32_t v)
{
	put16(m, (uint16_t)(v >> 16));
	put16(m, (uint16_t)v);
}

/* A response header + question "www.dt.example A IN". */
static void msg_start(struct msgb *m, uint16_t flags, uint16_t an, uint16_t ns, uint16_t ar)
{
	static const uint8_t qname[] = "\3www\2dt\7example";

	m->len = 0;
	put16(m, 0x1234);
	put16(m, flags);
	put16(m, 1);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
	memcpy(m->b + m->len, qname, sizeof(qname));
	m->len += sizeof(qname);
	put16(m, WIRE_TYPE_A);
	put16(m, WIRE_CLASS_IN);
}

static void rr_a(struct msgb *m, uint32_t ttl, uint8_t last)
{
	put16(m, 0xc00c);
	put16(m, WIRE_TYPE_A);
	put16(m, WIRE_CLASS_IN);
	put32(m, ttl);
	put16(m, 4);
	m->b[m->len++] = 192;
	m->b[m->len++] = 0;
	m->b[m->len++] = 2;
	m->b[m->len++] = last;
}

static void rr_soa(struct msgb *m, uint32_t ttl, uint32_t minimum)
{
	put16(m, 0xc00c);
	put16(m, WIRE_TYPE_SOA);
	put16(m, WIRE_CLASS_IN);
	put32(m, ttl);
	put16(m, 2 + 2 + 20);
	put16(m, 0xc00c);	/* mname */
	put16(m, 0xc00c);	/* rname */
	for (int i = 0; i < 4; i++)
		put32(m, 1);
	put32(m, minimum);
}

static void rr_opt(struct msgb *m)
{
	m->b[m->len++] = 0;
	put16(m, WIRE_TYPE_OPT);
	put16(m, 1232);
	put32(m, 0x8000);	/* DO */
	put16(m, 0);
}

static uint32_t ttl_at(const uint8_t *b, size_t off)
{
	return (uint32_t)b[off] << 24 | (uint32_t)b[off + 1] << 16 | (uint32_t)b[off + 2] << 8 |
	       b[off + 3];
}

#define Q_END (12 + 16 + 4)	/* header + "www.dt.example" + type + class */
#define RR_TTL(i) (Q_END + (i) * 16 + 6)	/* TTL of the i-th compressed A RR */

static struct cache_key key(const char *qname, uint16_t qtype, uint8_t flags)
{
	struct cache_key k = { .qname = qname, .qtype = qtype, .qclass = WIRE_CLASS_IN,
			       .flags = flags };
	return k;
}

static void test_cache_ttl(void **state)
{
	struct msgb m;
	uint32_t ttl;

	(void)state;
	/* Positive: the smallest TTL, OPT ignored. */
	msg_start(&m, 0x8180, 2, 0, 1);
	rr_a(&m, 300, 1);
	rr_a(&m, 30, 2);
	rr_opt(&m);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), 0);
	assert_int_equal(ttl, 30);
	/* A top-bit TTL counts as 0 (RFC 2181 8). */
	msg_start(&m, 0x8180, 1, 0, 0);
	rr_a(&m, 0x80000001u, 1);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), 0);
	assert_int_equal(ttl, 0);
	/* NXDOMAIN: min(SOA TTL, MINIMUM), capped (RFC 2308 5). */
	msg_start(&m, 0x8183, 0, 1, 0);
	rr_soa(&m, 3600, 60);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), 0);
	assert_int_equal(ttl, 60);
	msg_start(&m, 0x8183, 0, 1, 0);
	rr_soa(&m, 3600, 86400);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), 0);
	assert_int_equal(ttl, 300);
	/* NODATA likewise; without an SOA neither is cacheable. */
	msg_start(&m, 0x8180, 0, 1, 0);
	rr_soa(&m, 20, 900);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), 0);
	assert_int_equal(ttl, 20);
	msg_start(&m, 0x8183, 0, 0, 0);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), -ENOENT);
	/* SERVFAIL, TC=1, a query: never. */
	msg_start(&m, 0x8182, 0, 0, 0);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), -ENOENT);
	msg_start(&m, 0x8380, 1, 0, 0);
	rr_a(&m, 30, 1);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), -ENOENT);
	msg_start(&m, 0x0100, 0, 0, 0);
	assert_int_equal(wire_cache_ttl(m.b, m.len, 300, &ttl), -ENOENT);
	/* Malformed: a truncated RR, trailing junk. */
	msg_start(&m, 0x8180, 1, 0, 0);
	rr_a(&m, 30, 1);
	assert_int_equal(wire_cache_ttl(m.b, m.len - 1, 300, &ttl), -EBADMSG);
	assert_int_equal(wire_cache_ttl(m.b, m.len + 1, 300, &ttl), -EBADMSG);
	assert_int_equal(wire_question_end(m.b, m.len), Q_END);
}

static void test_hit_ages_ttls(void **state)
{
	struct cache *c;
	struct cache_key k = key("www.dt.example", WIRE_TYPE_A, 0);
	uint8_t out[1024];
	struct msgb m;

	(void)state;
	msg_start(&m, 0x8180, 2, 0, 1);
	rr_a(&m, 10, 1);
	rr_a(&m, 300, 2);
	rr_opt(&m);
	assert_int_equal(cache_new(10, 100000, &c), 0);
	assert_int_equal(cache_get(c, &k, 1000, out, sizeof(out)), -ENOENT);
	assert_int_equal(cache_put(c, &k, m.b, m.len, 10, 1000), 0);
	assert_int_equal(cache_count(c), 1);

	/* Same instant: the TTLs as received. */
	assert_int_equal(cache_get(c, &k, 1000, out, sizeof(out)), (int)m.len);
	assert_memory_equal(out, m.b, m.len);
	/* 1 ms later counts as a whole second: never past the expiry. */
	assert_int_equal(cache_get(c, &k, 1001, out, sizeof(out)), (int)m.len);
	assert_int_equal(ttl_at(out, RR_TTL(0)), 9);
	assert_int_equal(ttl_at(out, RR_TTL(1)), 299);
	/* The OPT's "TTL" (EDNS flags, DO) is untouched. */
	assert_int_equal(ttl_at(out, RR_TTL(2) - 6 + 1 + 4), 0x8000);
	/* Hits within the same second of age are aged once, not per hit. */
	assert_int_equal(cache_get(c, &k, 1500, out, sizeof(out)), (int)m.len);
	assert_int_equal(ttl_at(out, RR_TTL(0)), 9);
	assert_int_equal(ttl_at(out, RR_TTL(1)), 299);
	/* A clock read a little earlier (an older round's) never raises them. */
	assert_int_equal(cache_get(c, &k, 1000, out, sizeof(out)), (int)m.len);
	assert_int_equal(ttl_at(out, RR_TTL(0)), 9);
	assert_int_equal(cache_get(c, &k, 1000 + 8500, out, sizeof(out)), (int)m.len);
	assert_int_equal(ttl_at(out, RR_TTL(0)), 1);
	assert_int_equal(ttl_at(out, RR_TTL(1)), 291);
	assert_int_equal(cache_get(c, &k, 1000 + 8500, out, sizeof(out)), (int)m.len);
	assert_int_equal(ttl_at(out, RR_TTL(1)), 291);
	/* At the expiry: gone, and dropped. */
	assert_int_equal(cache_get(c, &k, 1000 + 9001, out, sizeof(out)), -ENOENT);
	assert_int_equal(cache_count(c), 0);
	/* A TTL of 0 is never stored. */
	assert_int_equal(cache_put(c, &k, m.b, m.len, 0, 1000), -EINVAL);
	/* Too small an output buffer. */
	assert_int_equal(cache_put(c, &k, m.b, m.len, 10, 1000), 0);
	assert_int_equal(cache_get(c, &k, 1000, out, m.len - 1), -ENOBUFS);
	/* cache_expire drops what is due, keeps the rest. */
	assert_int_equal(cache_expire(c, 5000), 0);
	assert_int_equal(cache_expire(c, 11000), 1);
	assert_int_equal(cache_count(c), 0);
	assert_int_equal(cache_bytes(c), 0);
	cache_free(c);
}

static void test_keys(void **state)
{
	struct cache *c;
	uint8_t out[1024];
	struct msgb m;
	struct cache_key k;

	(void)state;
	msg_start(&m, 0x8180, 1, 0, 0);
	rr_a(&m, 60, 1);
	assert_int_equal(cache_new(10, 100000, &c), 0);
	k = key("www.dt.example", WIRE_TYPE_A, CACHE_F_EDNS | CACHE_F_DO);
	assert_int_equal(cache_put(c, &k, m.b, m.len, 60, 0), 0);
	/* Another qtype, another name, other EDNS/DO/CD bits: misses. */
	k = key("www.dt.example", WIRE_TYPE_AAAA, CACHE_F_EDNS | CACHE_F_DO);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k = key("www.dt.example.evil", WIRE_TYPE_A, CACHE_F_EDNS | CACHE_F_DO);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k = key("www.dt.example", WIRE_TYPE_A, CACHE_F_EDNS);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k = key("www.dt.example", WIRE_TYPE_A, 0);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k = key("www.dt.example", WIRE_TYPE_A, CACHE_F_EDNS | CACHE_F_DO | CACHE_F_CD);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k = key("www.dt.example", WIRE_TYPE_A, CACHE_F_EDNS | CACHE_F_DO);
	k.qclass = 3;
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
	k.qclass = WIRE_CLASS_IN;
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), (int)m.len);
	/* The key follows the parsed query: case-folded name, bits. */
	{
		struct wire_query q;

		memset(&q, 0, sizeof(q));
		strcpy(q.qname, "www.dt.example");
		q.qtype = WIRE_TYPE_A;
		q.qclass = WIRE_CLASS_IN;
		q.has_opt = true;
		q.do_bit = true;
		cache_key_from_query(&q, &k);
		assert_int_equal(k.flags, CACHE_F_EDNS | CACHE_F_DO);
		assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), (int)m.len);
		q.flags = 0x0010;	/* CD */
		cache_key_from_query(&q, &k);
		assert_int_equal(k.flags, CACHE_F_EDNS | CACHE_F_DO | CACHE_F_CD);
		/* An EDNS 1 query never gets the EDNS 0 answer (RFC 6891 6.1.3). */
		q.flags = 0;
		q.edns_version = 1;
		cache_key_from_query(&q, &k);
		assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), -ENOENT);
		q.edns_version = 0;
		cache_key_from_query(&q, &k);
		assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), (int)m.len);
	}
	/* A put under the same key replaces. */
	k = key("www.dt.example", WIRE_TYPE_A, CACHE_F_EDNS | CACHE_F_DO);
	m.b[m.len - 1] = 9;
	assert_int_equal(cache_put(c, &k, m.b, m.len, 60, 0), 0);
	assert_int_equal(cache_count(c), 1);
	assert_int_equal(cache_get(c, &k, 0, out, sizeof(out)), (int)m.len);
	assert_int_equal(out[m.len - 1], 9);
	cache_free(c);
}

static void test_lru_bounds(void **state)
{
	struct cache *c;
	uint8_t out[1024];
	struct msgb m;
	char names[5][32];
	struct cache_key k[5];

	(void)state;
	msg_start(&m, 0x8180, 1, 0, 0);
	rr_a(&m, 60, 1);
	assert_int_equal(cache_new(3, 1000000, &c), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d.dt.example", i);
		k[i] = key(names[i], WIRE_TYPE_A, 0);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(cache_put(c, &k[i], m.b, m.len, 60, 0), 0);
	/* Touch n0: n1 is now the least recently used and goes first. */
	assert_int_equal(cache_get(c, &k[0], 0, out, sizeof(out)), (int)m.len);
	assert_int_equal(cache_put(c, &k[3], m.b, m.len, 60, 0), 0);
	assert_int_equal(cache_count(c), 3);
	assert_int_equal(cache_get(c, &k[1], 0, out, sizeof(out)), -ENOENT);
	assert_int_equal(cache_get(c, &k[0], 0, out, sizeof(out)), (int)m.len);
	assert_int_equal(cache_get(c, &k[2], 0, out, sizeof(out)), (int)m.len);
	assert_int_equal(cache_get(c, &k[3], 0, out, sizeof(out)), (int)m.len);
	cache_free(c);

	/* The byte bound: room for about two entries. */
	assert_int_equal(cache_new(100, 300, &c), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(cache_put(c, &k[i], m.b, m.len, 60, 0), 0);
	assert_true(cache_count(c) >= 1 && cache_count(c) <= 2);
	assert_true(cache_bytes(c) <= 300);
	assert_int_equal(cache_get(c, &k[4], 0, out, sizeof(out)), (int)m.len);
	assert_int_equal(cache_get(c, &k[0], 0, out, sizeof(out)), -ENOENT);
	/* One message bigger than the whole bound is refused. */
	assert_int_equal(cache_put(c, &k[0], m.b, sizeof(m.b), 60, 0), -EINVAL);
	cache_free(c);
	assert_int_equal(cache_new(0, 100, &c), -EINVAL);
	cache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_ttl),
		cmocka_unit_test(test_hit_ages_ttls),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_lru_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
