/*
 * fuzz_ech - wire_ech_strip() (dnsproxy/wire_ech.c) on any upstream answer.
 * Beyond the sanitizers:
 *   - 0 (nothing to strip) writes nothing; an error leaves no result;
 *   - a result is shorter, keeps the header but AD and the counts, and
 *     parses: stripped again it has nothing left to strip (no ech in any
 *     ServiceMode RR); if wire.c's checks took the input (wire_cap_ttls(),
 *     wire_walk_answer() against its own question) they take the result,
 *     and its addresses are among the input's;
 *   - against a reference decoder independent of wire_ech.c (names
 *     expanded, pointers followed anywhere): the result's question and
 *     RRs are the input's, in order, less the ech SvcParams, the RRs whose
 *     mandatory lists ech and the RRSIGs over a changed RRset, and nothing
 *     else changed: every name after the cut still reads the same.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REF_SETS_MAX 16		/* wire_ech.c's SETS_MAX: past it every SVCB/HTTPS RRSIG goes */

static uint16_t g16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- the reference: canonical bytes of each RR ------------------------------ */

struct dump {
	uint8_t *b;
	size_t cap, len;
	bool bad;
};

static void d_init(struct dump *d, uint8_t *b, size_t cap)
{
	d->b = b;
	d->cap = cap;
	d->len = 0;
	d->bad = false;
}

static void d_put(struct dump *d, const void *p, size_t n)
{
	if (d->bad || n > d->cap - d->len) {
		d->bad = true;
		return;
	}
	memcpy(d->b + d->len, p, n);
	d->len += n;
}

/* The name at *@off (labels within @end), pointers followed anywhere in
 * @len, at most 256 hops; appended expanded, lower-cased if @lc. */
static int ref_name(const uint8_t *b, size_t len, size_t end, size_t *off, struct dump *d,
		    bool lc)
{
	size_t pos = *off;
	bool jumped = false;
	int hops = 0;

	for (;;) {
		size_t lim = jumped ? len : end;
		uint8_t l;

		if (pos >= lim)
			return -1;
		l = b[pos];
		if ((l & 0xc0) == 0xc0) {
			if (pos + 1 >= lim || ++hops > 256)
				return -1;
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			pos = (size_t)(l & 0x3f) << 8 | b[pos + 1];
			continue;
		}
		if ((l & 0xc0) || lim - pos < 1u + l)
			return -1;
		for (size_t i = 0; i <= l; i++) {
			uint8_t c = b[pos + i];

			if (lc && i && c >= 'A' && c <= 'Z')
				c = (uint8_t)(c + 32);
			d_put(d, &c, 1);
		}
		pos += 1u + l;
		if (l == 0)
			break;
	}
	if (!jumped)
		*off = pos;
	return 0;
}

struct rr {
	size_t owner, rdata;
	uint16_t type, rdlen;
};

/* RR @i's owner and fixed fields; *@off past it.  Return: 0; -1. */
static int ref_rr(const uint8_t *b, size_t len, size_t *off, struct rr *rr)
{
	static uint8_t buf[2048];
	struct dump scratch;

	d_init(&scratch, buf, sizeof(buf));
	rr->owner = *off;
	if (ref_name(b, len, len, off, &scratch, false) < 0 || len - *off < 10)
		return -1;
	rr->type = g16(b + *off);
	rr->rdlen = g16(b + *off + 8);
	rr->rdata = *off + 10;
	if (len - rr->rdata < rr->rdlen)
		return -1;
	*off = rr->rdata + rr->rdlen;
	return 0;
}

/* @rr's canonical bytes: owner, type, class, TTL, RDATA with its names
 * expanded, the RDATA's other bytes as they are, less [@skip, +@n). */
static int ref_put(const uint8_t *b, size_t len, const struct rr *rr, size_t skip, size_t n,
		   struct dump *d)
{
	size_t off = rr->owner, first, pos, end = rr->rdata + rr->rdlen;
	unsigned int names;

	if (ref_name(b, len, len, &off, d, false) < 0)
		return -1;
	d_put(d, b + rr->rdata - 10, 8);
	if (wire_rdata_names(rr->type, b + rr->rdata, rr->rdlen, &first, &names) < 0)
		return -1;
	d_put(d, b + rr->rdata, first);
	pos = rr->rdata + first;
	for (unsigned int i = 0; i < names; i++)
		if (ref_name(b, len, end, &pos, d, false) < 0)
			return -1;
	if (n) {
		d_put(d, b + pos, skip - pos);
		pos = skip + n;
	}
	d_put(d, b + pos, end - pos);
	d_put(d, "|", 1);
	return 0;
}

/* An SVCB/HTTPS RR's ech SvcParam ([*@p, +*@n)) and whether mandatory
 * lists it, by a walk of its own.  Return: 1; 0 none or AliasMode; -1. */
static int ref_ech(const uint8_t *b, const struct rr *rr, size_t *p, size_t *n, bool *mand)
{
	size_t pos = rr->rdata + 2, end = rr->rdata + rr->rdlen;
	int found = 0;

	*mand = false;
	if (rr->rdlen < 3)
		return -1;
	while (pos < end && b[pos])
		pos += 1u + b[pos];
	if (pos >= end)
		return -1;
	if (g16(b + rr->rdata) == 0)
		return 0;
	for (pos++; end - pos >= 4; pos += 4u + g16(b + pos + 2)) {
		uint16_t key = g16(b + pos), vlen = g16(b + pos + 2);

		if (end - pos - 4 < vlen)
			return -1;
		if (key == WIRE_SVC_ECH) {
			*p = pos;
			*n = 4u + vlen;
			found = 1;
		}
		for (size_t i = 0; key == 0 && i + 1 < vlen; i += 2)
			*mand |= g16(b + pos + 4 + i) == WIRE_SVC_ECH;
	}
	return found;
}

static bool is_svc(uint16_t t)
{
	return t == WIRE_TYPE_SVCB || t == WIRE_TYPE_HTTPS;
}

struct sets {
	uint8_t owner[REF_SETS_MAX][WIRE_NAME_MAX + 1];
	size_t len[REF_SETS_MAX];
	uint16_t type[REF_SETS_MAX];
	size_t n;
	bool full;
};

static bool sets_has(const struct sets *s, const struct dump *o, uint16_t type)
{
	if (s->full)
		return true;
	for (size_t i = 0; i < s->n; i++)
		if (s->type[i] == type && s->len[i] == o->len &&
		    memcmp(s->owner[i], o->b, o->len) == 0)
			return true;
	return false;
}

/*
 * ref_dump() - the question and every RR of @b in canonical bytes; with
 * @expect, as wire_ech_strip() must leave them.  Return: RRs kept; -1.
 */
static long ref_dump(const uint8_t *b, size_t len, bool expect, struct sets *s, struct dump *d)
{
	static uint8_t ob[2048];
	struct dump o;
	unsigned int n_rr = (unsigned int)g16(b + 6) + g16(b + 8) + g16(b + 10);
	size_t off = 12, q_end;
	long kept = 0;

	for (unsigned int i = 0; i < g16(b + 4); i++) {
		if (ref_name(b, len, len, &off, d, false) < 0 || len - off < 4)
			return -1;
		d_put(d, b + off, 4);
		off += 4;
	}
	q_end = off;
	for (int pass = expect ? 0 : 1; pass < 2; pass++) {
		off = q_end;
		for (unsigned int i = 0; i < n_rr; i++) {
			size_t p = 0, n = 0, at;
			struct rr rr;
			bool mand = false, drop = false;
			int e = 0;

			if (ref_rr(b, len, &off, &rr) < 0)
				return -1;
			if (expect && is_svc(rr.type) && (e = ref_ech(b, &rr, &p, &n, &mand)) < 0)
				return -1;
			d_init(&o, ob, sizeof(ob));
			at = rr.owner;
			if (ref_name(b, len, len, &at, &o, true) < 0 || o.bad ||
			    o.len > WIRE_NAME_MAX)
				return -1;
			if (pass == 0 && e == 1 && !sets_has(s, &o, rr.type)) {
				if (s->n == REF_SETS_MAX) {
					s->full = true;
				} else {
					memcpy(s->owner[s->n], o.b, o.len);
					s->len[s->n] = o.len;
					s->type[s->n++] = rr.type;
				}
			}
			if (pass == 0)
				continue;
			if (e == 1 && mand)
				drop = true;
			if (expect && rr.type == 46 && rr.rdlen >= 2 && is_svc(g16(b + rr.rdata)) &&
			    sets_has(s, &o, g16(b + rr.rdata)))
				drop = true;
			if (drop)
				continue;
			if (ref_put(b, len, &rr, e == 1 ? p : 0, e == 1 ? n : 0, d) < 0)
				return -1;
			kept++;
		}
	}
	return d->bad ? -1 : kept;
}

/* ---- the target --------------------------------------------------------------- */

static uint8_t out[WIRE_MSG_MAX], again[WIRE_MSG_MAX], copy[WIRE_MSG_MAX];
static uint8_t want_b[8 * WIRE_MSG_MAX], got_b[8 * WIRE_MSG_MAX];
static struct sets sets;

/* A query for the question of @b, for wire_walk_answer().  Return: 0; -1. */
static int question_of(const uint8_t *b, size_t len, struct wire_query *q)
{
	uint8_t qb[WIRE_HDR_LEN + WIRE_NAME_MAX + 4];
	int end = wire_question_end(b, len);

	if (end < 0 || g16(b + 4) != 1 || (size_t)end > sizeof(qb))
		return -1;
	memcpy(qb, b, (size_t)end);
	qb[2] &= 0x7f;	/* QR=0 */
	memset(qb + 6, 0, 6);
	return wire_parse_query(qb, (size_t)end, q) == 0 ? 0 : -1;
}

static void check_walks(const uint8_t *in, size_t len, int n)
{
	static struct wire_addr a_in[64], a_out[64];
	struct wire_answer w_in, w_out;
	struct wire_query q;

	memcpy(copy, in, len);
	if (wire_cap_ttls(copy, len, 3600) == 0) {
		memcpy(again, out, (size_t)n);
		if (wire_cap_ttls(again, (size_t)n, 3600) != 0)
			abort();	/* wire.c took the input but not the result */
	}
	if (question_of(in, len, &q) < 0 || wire_walk_answer(in, len, &q, a_in, 64, &w_in) < 0)
		return;
	if (wire_walk_answer(out, (size_t)n, &q, a_out, 64, &w_out) < 0)
		abort();
	for (size_t i = 0; i < w_out.n_addrs; i++) {
		bool seen = false;

		for (size_t k = 0; k < w_in.n_addrs && !seen; k++)
			seen = addr_equal(&a_out[i].addr, &a_in[k].addr);
		if (!seen)
			abort();	/* an address the upstream never gave */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_ech_result res, res2;
	struct dump want, got;
	long kept;
	int n;

	if (size > WIRE_MSG_MAX)
		return 0;
	memset(out, 0x5a, size);
	n = wire_ech_strip(data, size, out, sizeof(out), &res);
	if (n <= 0) {
		for (size_t i = 0; n == 0 && i < size; i++)
			if (out[i] != 0x5a)
				abort();	/* 0 writes nothing */
		if (res.params || res.rrs || res.sigs)
			abort();
		if (n < 0 && n != -EBADMSG && n != -E2BIG)
			abort();
		return 0;
	}
	if ((size_t)n >= size || res.params + res.rrs == 0 || (out[3] & 0x20) ||
	    memcmp(out, data, 3) != 0 || (out[3] | 0x20) != (data[3] | 0x20) ||
	    g16(out + 4) != g16(data + 4) ||
	    (unsigned int)g16(out + 6) + g16(out + 8) + g16(out + 10) + res.rrs + res.sigs !=
		    (unsigned int)g16(data + 6) + g16(data + 8) + g16(data + 10))
		abort();
	/* Nothing left to strip: no ech in a ServiceMode RR. */
	if (wire_ech_strip(out, (size_t)n, again, sizeof(again), &res2) != 0)
		abort();
	check_walks(data, size, n);
	/* The reference: same question and RRs, less what had to go. */
	d_init(&want, want_b, sizeof(want_b));
	d_init(&got, got_b, sizeof(got_b));
	memset(&sets, 0, sizeof(sets));
	kept = ref_dump(data, size, true, &sets, &want);
	if (kept < 0)
		return 0;	/* names the reference cannot read (wire_ech.c read those it kept) */
	if (ref_dump(out, (size_t)n, false, &sets, &got) != kept || got.len != want.len ||
	    memcmp(got.b, want.b, want.len) != 0)
		abort();
	return 0;
}
