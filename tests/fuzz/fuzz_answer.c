/*
 * fuzz_answer - what an upstream may send back: wire_walk_answer() and
 * wire_cap_ttls() (on a copy, as the proxy does; wire_cap_ttls_walked()
 * after a walk that passed, which must cap alike) on arbitrary bytes, once
 * against a fixed query ("www.example.com" A) and once against a query
 * rebuilt from the input's own question, so mutated answers get past the
 * question check.  Checks the invariants the pinning relies on, and those
 * of the capped copy the client gets and the cache keeps: it parses, it
 * has the same names and records as the original (by a reference decoder
 * below that follows pointers anywhere, independent of wire.c), the walk
 * yields the same addresses, and capping (or aging) it again changes
 * nothing more than the TTLs, capping twice being capping once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dnsproxy/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- a reference decoder: everything but the TTLs, names expanded ---------- */

struct dump {
	uint8_t b[4 * WIRE_MSG_MAX];
	size_t len;
};

static int d_put(struct dump *d, const uint8_t *p, size_t n)
{
	if (n > sizeof(d->b) - d->len)
		return -1;
	memcpy(d->b + d->len, p, n);
	d->len += n;
	return 0;
}

/* A name at *@off (within @end), pointers followed anywhere before @len,
 * at most 256 hops; appended uncompressed (case kept) to @d. */
static int ref_name(const uint8_t *b, size_t len, size_t end, size_t *off, struct dump *d)
{
	size_t pos = *off, total = 0;
	int hops = 0;
	bool jumped = false;

	for (;;) {
		if (pos >= (jumped ? len : end))
			return -1;
		if ((b[pos] & 0xc0) == 0xc0) {
			if (pos + 1 >= (jumped ? len : end) || ++hops > 256)
				return -1;
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			pos = (size_t)(b[pos] & 0x3f) << 8 | b[pos + 1];
			continue;
		}
		if (b[pos] & 0xc0)
			return -1;
		if (pos + 1 + b[pos] > (jumped ? len : end) || (total += 1u + b[pos]) > 255)
			return -1;
		if (d_put(d, b + pos, 1u + b[pos]) < 0)
			return -1;
		if (b[pos] == 0) {
			if (!jumped)
				*off = pos + 1;
			return 0;
		}
		pos += 1u + b[pos];
	}
}

/* Octets before the names in RDATA, and how many names (as wire.c's table). */
static int ref_rdata_names(uint16_t type, size_t *skip)
{
	static const uint16_t t[][3] = {
		{ 2, 0, 1 }, { 3, 0, 1 }, { 4, 0, 1 }, { 5, 0, 1 }, { 6, 0, 2 }, { 7, 0, 1 },
		{ 8, 0, 1 }, { 9, 0, 1 }, { 12, 0, 1 }, { 14, 0, 2 }, { 15, 2, 1 }, { 17, 0, 2 },
		{ 18, 2, 1 }, { 21, 2, 1 }, { 24, 18, 1 }, { 26, 2, 2 }, { 30, 0, 1 },
		{ 33, 6, 1 }, { 36, 2, 1 }, { 39, 0, 1 }, { 46, 18, 1 }, { 64, 2, 1 },
		{ 65, 2, 1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i][0] == type) {
			*skip = t[i][1];
			return t[i][2];
		}
	}
	return 0;
}

/* The message without its TTLs: header but the ID, questions, and every
 * RR's owner, type, class and RDATA (its names expanded). */
static int ref_dump(const uint8_t *b, size_t len, struct dump *d)
{
	size_t off = WIRE_HDR_LEN;
	unsigned int qd, n_rr;

	d->len = 0;
	if (len < WIRE_HDR_LEN || d_put(d, b + 2, 10) < 0)
		return -1;
	qd = (unsigned int)b[4] << 8 | b[5];
	n_rr = ((unsigned int)b[6] << 8 | b[7]) + ((unsigned int)b[8] << 8 | b[9]) +
	       ((unsigned int)b[10] << 8 | b[11]);
	for (unsigned int i = 0; i < qd; i++) {
		if (ref_name(b, len, len, &off, d) < 0 || len - off < 4 || d_put(d, b + off, 4) < 0)
			return -1;
		off += 4;
	}
	for (unsigned int i = 0; i < n_rr; i++) {
		size_t rdlen, end, skip = 0;
		uint16_t type;
		int names;

		if (ref_name(b, len, len, &off, d) < 0 || len - off < 10)
			return -1;
		type = (uint16_t)(b[off] << 8 | b[off + 1]);
		rdlen = (size_t)b[off + 8] << 8 | b[off + 9];
		if (d_put(d, b + off, 4) < 0)	/* type, class; not TTL nor RDLENGTH */
			return -1;
		off += 10;
		if (len - off < rdlen)
			return -1;
		end = off + rdlen;
		names = ref_rdata_names(type, &skip);
		if (names && rdlen >= skip) {
			size_t p = off + skip;

			if (d_put(d, b + off, skip) < 0)
				return -1;
			for (int k = 0; k < names; k++)
				if (ref_name(b, len, end, &p, d) < 0)
					return -1;
			if (d_put(d, b + p, end - p) < 0)
				return -1;
		} else if (d_put(d, b + off, rdlen) < 0) {
			return -1;
		}
		off = end;
	}
	return off == len ? 0 : -1;
}

static bool same_walk(int r1, const struct wire_answer *a1, const struct wire_addr *x1, int r2,
		      const struct wire_answer *a2, const struct wire_addr *x2)
{
	if (r1 != r2)
		return false;
	if (r1 != 0)
		return true;
	if (a1->n_addrs != a2->n_addrs || a1->chain_len != a2->chain_len ||
	    a1->n_dropped != a2->n_dropped || a1->n_hints != a2->n_hints || a1->rcode != a2->rcode)
		return false;
	for (size_t i = 0; i < a1->n_addrs; i++)
		if (!addr_equal(&x1[i].addr, &x2[i].addr) || x1[i].hint != x2[i].hint)
			return false;
	return true;
}

static void walk(const uint8_t *data, size_t size, const struct wire_query *q)
{
	static uint8_t copy[WIRE_MSG_MAX], copy2[WIRE_MSG_MAX];
	struct wire_addr addrs[64];
	struct wire_answer a, a0;
	bool walked;
	int r;

	r = wire_walk_answer(data, size, q, addrs, 64, &a);
	if (r == 0) {
		if (a.n_addrs > 64 || a.chain_len > WIRE_CHAIN_MAX)
			abort();
		for (size_t i = 0; i < a.n_addrs; i++) {
			if (addrs[i].addr.family != AF_INET && addrs[i].addr.family != AF_INET6)
				abort();
			if (addrs[i].ttl_s & 0x80000000u || addrs[i].ttl_s < a.min_ttl_s)
				abort();
		}
	} else if (r != -EBADMSG && r != -ELOOP && r != -ENOBUFS) {
		abort();
	}
	walked = r == 0;
	a0 = a;

	memcpy(copy, data, size);
	r = wire_cap_ttls(copy, size, 300);
	/* After a walk that passed, the capping that does not check the
	 * message again caps exactly as the one that does. */
	if (walked) {
		memcpy(copy2, data, size);
		if (wire_cap_ttls_walked(copy2, size, 300, &a0) != r || memcmp(copy, copy2, size) != 0)
			abort();
	}
	if (r == 0) {
		static struct dump d1, d2;
		struct wire_addr caddrs[64];
		struct wire_answer ca;
		int rw = wire_walk_answer(data, size, q, addrs, 64, &a);
		int rc = wire_walk_answer(copy, size, q, caddrs, 64, &ca);

		/* The walk sees the same answer, no TTL above the cap. */
		if (!same_walk(rw, &a, addrs, rc, &ca, caddrs))
			abort();
		for (size_t i = 0; rc == 0 && i < ca.n_addrs; i++)
			if (caddrs[i].ttl_s > 300)
				abort();
		/* Same names and records, by the reference decoder. */
		if (ref_dump(data, size, &d1) == 0 &&
		    (ref_dump(copy, size, &d2) != 0 || d1.len != d2.len ||
		     memcmp(d1.b, d2.b, d1.len) != 0))
			abort();
		/* Capping twice is capping once; aging changes no name either. */
		memcpy(copy2, copy, size);
		if (wire_cap_ttls(copy2, size, 300) != 0 || memcmp(copy, copy2, size) != 0)
			abort();
		if (wire_age_ttls(copy2, size, 7) != 0)
			abort();
		if (ref_dump(data, size, &d1) == 0 &&
		    (ref_dump(copy2, size, &d2) != 0 || d1.len != d2.len ||
		     memcmp(d1.b, d2.b, d1.len) != 0))
			abort();
	} else if (r != -EBADMSG) {
		abort();
	} else if (memcmp(copy, data, size) != 0) {
		abort();	/* refused, and left as it was */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t fixed[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
				       "\x03www\x07" "example\x03" "com\x00\x00\x01\x00\x01";
	static struct wire_query qfixed;
	static int have_fixed;
	struct wire_query q;
	uint8_t qbuf[WIRE_HDR_LEN + 2 * WIRE_NAME_MAX + 4];
	size_t n;

	if (size > WIRE_MSG_MAX)
		return 0;
	if (!have_fixed) {
		if (wire_parse_query(fixed, sizeof(fixed) - 1, &qfixed) != 0)
			abort();
		have_fixed = 1;
	}
	walk(data, size, &qfixed);

	/* A query from the input's question: header with QR=0 and counts
	 * 1/0/0/0, then the question bytes as far as they go. */
	if (size < WIRE_HDR_LEN)
		return 0;
	n = size < sizeof(qbuf) ? size : sizeof(qbuf);
	memcpy(qbuf, data, n);
	qbuf[2] &= 0x7f;
	qbuf[2] &= 0x87;	/* opcode QUERY */
	memcpy(qbuf + 4, "\x00\x01\x00\x00\x00\x00\x00\x00", 8);
	for (size_t len = WIRE_HDR_LEN + 5; len <= n; len++) {
		if (wire_parse_query(qbuf, len, &q) == 0) {
			walk(data, size, &q);
			break;
		}
	}
	return 0;
}
