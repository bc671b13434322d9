/*
 * test_wire_ech - wire_ech_strip() (dnsproxy/wire_ech.c) on hand-built
 * answers: each case is built twice by the same function, once as the
 * upstream sends it and once as a client under a checked rule must get it
 * (no ech, the RRs and RRSIGs that go left out, every later offset where
 * the smaller message puts it), and the rewrite must give the second byte
 * for byte.  Then what must be refused, and what must be left alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dnsproxy/wire.h"

/* ---- a packet writer ------------------------------------------------------ */

struct pkt {
	uint8_t b[16384];
	size_t len;
};

static void p_u8(struct pkt *p, uint8_t v)
{
	assert_true(p->len < sizeof(p->b));
	p->b[p->len++] = v;
}

static void p_u16(struct pkt *p, uint16_t v)
{
	p_u8(p, (uint8_t)(v >> 8));
	p_u8(p, (uint8_t)v);
}

static void p_bytes(struct pkt *p, const void *v, size_t n)
{
	assert_true(p->len + n <= sizeof(p->b));
	memcpy(p->b + p->len, v, n);
	p->len += n;
}

static void p_set16(struct pkt *p, size_t at, uint16_t v)
{
	p->b[at] = (uint8_t)(v >> 8);
	p->b[at + 1] = (uint8_t)v;
}

/* Header: QR RD RA, and AD if @ad; counts filled by the caller. */
static void p_hdr(struct pkt *p, bool ad, uint16_t an, uint16_t ns, uint16_t ar)
{
	p->len = 0;
	p_u16(p, 0x1234);
	p_u16(p, (uint16_t)(0x8180 | (ad ? 0x0020 : 0)));
	p_u16(p, 1);
	p_u16(p, an);
	p_u16(p, ns);
	p_u16(p, ar);
}

/*
 * p_name() - "a.b" as labels, then a pointer to @ptr if it is not 0, else
 * the root.  Return: where it starts.
 */
static size_t p_name(struct pkt *p, const char *name, size_t ptr)
{
	size_t at = p->len;

	while (*name) {
		size_t l = strcspn(name, ".");

		p_u8(p, (uint8_t)l);
		p_bytes(p, name, l);
		name += l + (name[l] == '.');
	}
	if (ptr)
		p_u16(p, (uint16_t)(0xc000 | ptr));
	else
		p_u8(p, 0);
	return at;
}

/* The question @name/@type; Return: where its name is (12). */
static size_t p_question(struct pkt *p, const char *name, uint16_t type)
{
	size_t at = p_name(p, name, 0);

	p_u16(p, type);
	p_u16(p, 1);
	return at;
}

/* An RR header after its owner; Return: where RDLENGTH is (set by p_end()). */
static size_t p_rr(struct pkt *p, uint16_t type, uint32_t ttl)
{
	size_t at;

	p_u16(p, type);
	p_u16(p, 1);
	p_u16(p, (uint16_t)(ttl >> 16));
	p_u16(p, (uint16_t)ttl);
	at = p->len;
	p_u16(p, 0);
	return at;
}

static void p_end(struct pkt *p, size_t rdlen_at)
{
	p_set16(p, rdlen_at, (uint16_t)(p->len - rdlen_at - 2));
}

/* An ECHConfigList's worth of bytes (opaque to the rewrite). */
static const uint8_t ech_value[] = { 0x00, 0x0a, 0xfe, 0x0d, 0x00, 0x06, 0x42, 0x00, 0x20,
				     0x00, 0x01, 0x07 };

static void p_param(struct pkt *p, uint16_t key, const void *v, size_t n)
{
	p_u16(p, key);
	p_u16(p, (uint16_t)n);
	p_bytes(p, v, n);
}

/* An SVCB/HTTPS RDATA head: priority and an uncompressed target. */
static void p_svc_head(struct pkt *p, uint16_t prio, const char *target)
{
	p_u16(p, prio);
	p_name(p, target, 0);
}

static const uint8_t alpn_h2[] = { 2, 'h', '2' };
static const uint8_t hint4[] = { 198, 51, 100, 41 };
static const uint8_t hint6[] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x41 };

/* ---- running it ------------------------------------------------------------ */

static uint8_t out[65536];

/* strip() - wire_ech_strip() of @in; the output must walk as an answer. */
static int strip(const struct pkt *in, struct wire_ech_result *res)
{
	memset(out, 0xaa, sizeof(out));
	return wire_ech_strip(in->b, in->len, out, sizeof(out), res);
}

/* Does @n bytes of out equal @want, but for the AD bit wire_ech_strip() clears? */
static void assert_out(int n, const struct pkt *want)
{
	uint8_t w[sizeof(want->b)];

	assert_int_equal(n, (int)want->len);
	memcpy(w, want->b, want->len);
	w[3] &= (uint8_t)~0x20;
	assert_memory_equal(out, w, want->len);
}

/* The result as an answer to @qname/@qtype: it must walk (wire.c). */
static void assert_walks(int n, const char *qname, uint16_t qtype, size_t want_addrs)
{
	struct wire_query q = { .qtype = qtype, .qclass = 1 };
	struct wire_addr addrs[16];
	struct wire_answer wa;

	snprintf(q.qname, sizeof(q.qname), "%s", qname);
	assert_int_equal(wire_walk_answer(out, (size_t)n, &q, addrs, 16, &wa), 0);
	assert_int_equal(wa.n_addrs, want_addrs);
	assert_int_equal(wire_cap_ttls(out, (size_t)n, 3600), 0);
}

/* ---- the cases ---------------------------------------------------------------- */

/*
 * One HTTPS RR: alpn, ipv4hint, ech, ipv6hint; its RDLENGTH shrinks by the
 * ech's 4 + 12 octets, everything else as it was; the hints are still pinned.
 */
static void build_one(struct pkt *p, bool ech, bool ad)
{
	size_t q, rd;

	p_hdr(p, ad, 1, 0, 0);
	q = p_question(p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(p, "", q);
	rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(p, 1, "");
	p_param(p, 1, alpn_h2, sizeof(alpn_h2));
	p_param(p, 4, hint4, sizeof(hint4));
	if (ech)
		p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_param(p, 6, hint6, sizeof(hint6));
	p_end(p, rd);
}

static void test_one_rr(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_one(&in, true, true);
	build_one(&want, false, false);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(res.params, 1);
	assert_int_equal(res.rrs, 0);
	assert_int_equal(res.sigs, 0);
	assert_int_equal(out[3] & 0x20, 0);	/* AD cleared */
	assert_walks(n, "svc.example", WIRE_TYPE_HTTPS, 2);
	/* Stripping what was stripped: nothing left to do. */
	memcpy(in.b, out, (size_t)n);
	in.len = (size_t)n;
	assert_int_equal(strip(&in, &res), 0);
	assert_int_equal(out[0], 0xaa);	/* nothing written */
}

/* ech as the last SvcParam, and in an SVCB (64) RR with a TargetName. */
static void build_last(struct pkt *p, bool ech)
{
	size_t q, rd;

	p_hdr(p, false, 1, 0, 0);
	q = p_question(p, "_dns.resolver.example", WIRE_TYPE_SVCB);
	p_name(p, "", q);
	rd = p_rr(p, WIRE_TYPE_SVCB, 300);
	p_svc_head(p, 1, "dot.resolver.example");
	p_param(p, 1, alpn_h2, sizeof(alpn_h2));
	p_param(p, 3, "\x03\x55", 2);
	if (ech)
		p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_end(p, rd);
}

static void test_svcb_last_param(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_last(&in, true);
	build_last(&want, false);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_walks(n, "_dns.resolver.example", WIRE_TYPE_SVCB, 0);
}

/*
 * Compression after the cut: names after the ech that point at names also
 * after it (an owner, an NS target, a CNAME target and an MX exchange,
 * a pointer to a pointer), and names that point before it (unchanged).
 * Every pointer must land on its name in the smaller message.
 */
static void build_compress(struct pkt *p, bool ech)
{
	size_t q, rd, pool, ns;

	p_hdr(p, false, 2, 1, 3);
	q = p_question(p, "www.example", WIRE_TYPE_HTTPS);
	/* answer: www CNAME svc.example; svc HTTPS 1 . alpn ech hint */
	p_name(p, "", q);
	rd = p_rr(p, WIRE_TYPE_CNAME, 60);
	p_name(p, "svc", q + 4);	/* svc.example: "example" of the question */
	p_end(p, rd);
	p_name(p, "svc", q + 4);
	rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(p, 1, "pool.example");
	p_param(p, 1, alpn_h2, sizeof(alpn_h2));
	p_param(p, 4, hint4, sizeof(hint4));
	if (ech)
		p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_param(p, 6, hint6, sizeof(hint6));
	p_end(p, rd);
	/* authority: example NS ns1.pool.example (written here, after the cut) */
	p_name(p, "", q + 4);
	rd = p_rr(p, WIRE_TYPE_NS, 300);
	ns = p_name(p, "ns1.pool", q + 4);
	p_end(p, rd);
	/* additional: pool.example A (a pointer into the NS target), ns1 A
	 * (a pointer to it), MX of pool pointing at ns1 */
	pool = p->len;
	p_name(p, "", ns + 4);
	rd = p_rr(p, WIRE_TYPE_A, 300);
	p_bytes(p, hint4, 4);
	p_end(p, rd);
	p_name(p, "", ns);
	rd = p_rr(p, WIRE_TYPE_A, 300);
	p_bytes(p, hint4, 4);
	p_end(p, rd);
	p_name(p, "", pool);
	rd = p_rr(p, WIRE_TYPE_MX, 300);
	p_u16(p, 10);
	p_name(p, "mx", ns);
	p_end(p, rd);
}

static void test_compression_after_cut(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_compress(&in, true);
	build_compress(&want, false);
	assert_true(memcmp(in.b, want.b, 40) == 0);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(res.params, 1);
	assert_walks(n, "www.example", WIRE_TYPE_HTTPS, 2);
}

/*
 * mandatory=ech: the RR goes whole (its RRset keeps its other RR), and
 * the answer count says so; names after it still land.
 */
static void build_mandatory(struct pkt *p, bool ech, bool only)
{
	static const uint8_t mand[] = { 0, WIRE_SVC_ECH };
	size_t q, rd;

	p_hdr(p, false, (uint16_t)(ech ? 2 : 1) - only, 0, 1);
	q = p_question(p, "svc.example", WIRE_TYPE_HTTPS);
	if (ech) {
		p_name(p, "", q);
		rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
		p_svc_head(p, 1, "");
		p_param(p, 0, mand, sizeof(mand));
		p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
		p_end(p, rd);
	}
	if (!only) {
		p_name(p, "", q);
		rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
		p_svc_head(p, 2, "");
		p_param(p, 4, hint4, sizeof(hint4));
		p_end(p, rd);
	}
	/* additional: an OPT RR */
	p_u8(p, 0);
	p_u16(p, WIRE_TYPE_OPT);
	p_u16(p, 1232);
	p_u16(p, 0);
	p_u16(p, 0);
	p_u16(p, 0);
}

static void test_mandatory_drops_rr(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_mandatory(&in, true, false);
	build_mandatory(&want, false, false);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(res.params, 0);
	assert_int_equal(res.rrs, 1);
	assert_walks(n, "svc.example", WIRE_TYPE_HTTPS, 1);
}

/* The RRset's only RR goes: a NOERROR answer with nothing in it (NODATA). */
static void test_rrset_becomes_empty(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_mandatory(&in, true, true);
	build_mandatory(&want, false, true);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(out[7], 0);	/* ANCOUNT 0 */
	assert_int_equal(out[3] & 0x0f, 0);	/* NOERROR */
	assert_walks(n, "svc.example", WIRE_TYPE_HTTPS, 0);
}

/*
 * DNSSEC: the RRSIG over the changed HTTPS RRset goes (its owner written
 * in another case); those over the A RRset and over another owner's
 * HTTPS RRset (no ech) stay.
 */
static void p_rrsig(struct pkt *p, size_t owner_ptr, const char *owner, uint16_t covered)
{
	static const uint8_t fixed[16] = { 13, 2, 0, 0, 1, 44, 0x65, 0, 0, 0, 0x64, 0, 0, 0,
					   0x30, 0x39 };
	static const uint8_t sig[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t rd;

	p_name(p, owner, owner_ptr);
	rd = p_rr(p, 46, 300);
	p_u16(p, covered);
	p_bytes(p, fixed, sizeof(fixed));
	p_name(p, "example", 0);	/* signer, uncompressed (RFC 4034 3.1.7) */
	p_bytes(p, sig, sizeof(sig));
	p_end(p, rd);
}

static void build_signed(struct pkt *p, bool ech)
{
	size_t q, rd, other;

	p_hdr(p, true, ech ? 4 : 3, 0, 2);
	q = p_question(p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(p, "", q);
	rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(p, 1, "");
	p_param(p, 4, hint4, sizeof(hint4));
	if (ech)
		p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_end(p, rd);
	if (ech)
		p_rrsig(p, 0, "SVC.Example", WIRE_TYPE_HTTPS);
	p_name(p, "", q);
	rd = p_rr(p, WIRE_TYPE_A, 300);
	p_bytes(p, "\xc6\x33\x64\x2a", 4);	/* 198.51.100.42 */
	p_end(p, rd);
	p_rrsig(p, q, "", WIRE_TYPE_A);
	/* additional: another owner's HTTPS RRset, signed, no ech */
	other = p_name(p, "other", q + 4);
	rd = p_rr(p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(p, 1, "");
	p_param(p, 4, hint4, sizeof(hint4));
	p_end(p, rd);
	p_rrsig(p, other, "", WIRE_TYPE_HTTPS);
}

static void test_rrsig_dropped(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_signed(&in, true);
	build_signed(&want, false);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(res.params, 1);
	assert_int_equal(res.sigs, 1);
	assert_walks(n, "svc.example", WIRE_TYPE_HTTPS, 2);
}

/* ech in every section goes, not only in the answer. */
static void build_sections(struct pkt *p, bool ech)
{
	size_t q, rd;

	p_hdr(p, false, 0, 1, 1);
	q = p_question(p, "svc.example", WIRE_TYPE_A);
	for (int i = 0; i < 2; i++) {
		p_name(p, i ? "b" : "a", q + 4);
		rd = p_rr(p, i ? WIRE_TYPE_SVCB : WIRE_TYPE_HTTPS, 300);
		p_svc_head(p, 3, "");
		if (ech)
			p_param(p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
		p_end(p, rd);
	}
}

static void test_every_section(void **state)
{
	struct pkt in, want;
	struct wire_ech_result res;
	int n;

	(void)state;
	build_sections(&in, true);
	build_sections(&want, false);
	n = strip(&in, &res);
	assert_out(n, &want);
	assert_int_equal(res.params, 2);
}

/* Left alone (0, nothing written): no SVCB at all, SVCB without ech,
 * AliasMode with an ech (its SvcParams are ignored, RFC 9460 2.4.2). */
static void test_untouched(void **state)
{
	struct wire_ech_result res;
	struct pkt p;
	size_t q, rd;

	(void)state;
	build_one(&p, false, true);
	assert_int_equal(strip(&p, &res), 0);
	assert_int_equal(out[0], 0xaa);
	p_hdr(&p, true, 1, 0, 0);
	q = p_question(&p, "svc.example", WIRE_TYPE_A);
	p_name(&p, "", q);
	rd = p_rr(&p, WIRE_TYPE_A, 300);
	p_bytes(&p, hint4, 4);
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), 0);
	p_hdr(&p, false, 1, 0, 0);
	q = p_question(&p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(&p, "", q);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 0, "pool.example");
	p_param(&p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), 0);
	assert_int_equal(res.params + res.rrs + res.sigs, 0);
}

/* ---- refused: never an ech passed on ------------------------------------------ */

static void test_refused(void **state)
{
	static const uint8_t mand[] = { 0, WIRE_SVC_ECH };
	struct wire_ech_result res;
	struct pkt p;
	size_t q, rd, ech_at, first;

	(void)state;
	/* Truncated, and a header alone with counts. */
	build_one(&p, true, false);
	p.len -= 3;
	assert_int_equal(strip(&p, &res), -EBADMSG);
	p.len = 11;
	assert_int_equal(strip(&p, &res), -EBADMSG);
	/* Trailing junk. */
	build_one(&p, true, false);
	p_u8(&p, 0);
	assert_int_equal(strip(&p, &res), -EBADMSG);
	/* SvcParamKeys out of order (RFC 9460 2.2): malformed, ech or not. */
	p_hdr(&p, false, 1, 0, 0);
	q = p_question(&p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(&p, "", q);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 1, "");
	p_param(&p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_param(&p, 1, alpn_h2, sizeof(alpn_h2));
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), -EBADMSG);
	/* A name after the cut that reads the ech's bytes: cannot be moved. */
	p_hdr(&p, false, 1, 0, 1);
	q = p_question(&p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(&p, "", q);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 1, "");
	ech_at = p.len + 4;
	p_param(&p, WIRE_SVC_ECH, "\x01x\xc0\x0c", 4);	/* a "name" x.svc.example */
	p_end(&p, rd);
	p_name(&p, "", ech_at);
	rd = p_rr(&p, WIRE_TYPE_A, 300);
	p_bytes(&p, hint4, 4);
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), -EBADMSG);
	assert_int_equal(res.params, 0);
	/* A name that points into an RR dropped whole (mandatory=ech). */
	p_hdr(&p, false, 2, 0, 0);
	q = p_question(&p, "svc.example", WIRE_TYPE_HTTPS);
	first = p_name(&p, "alt", q + 4);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 1, "");
	p_param(&p, 0, mand, sizeof(mand));
	p_param(&p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_end(&p, rd);
	p_name(&p, "", first);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 2, "");
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), -EBADMSG);
	/* A pointer forwards (no loop may be followed). */
	p_hdr(&p, false, 1, 0, 0);
	q = p_question(&p, "svc.example", WIRE_TYPE_HTTPS);
	p_name(&p, "", q + 40);
	rd = p_rr(&p, WIRE_TYPE_HTTPS, 300);
	p_svc_head(&p, 1, "");
	p_param(&p, WIRE_SVC_ECH, ech_value, sizeof(ech_value));
	p_end(&p, rd);
	assert_int_equal(strip(&p, &res), -EBADMSG);
	/* Not enough room for the result. */
	build_one(&p, true, false);
	assert_int_equal(wire_ech_strip(p.b, p.len, out, p.len - 17, &res), -ENOBUFS);
	assert_int_equal(wire_ech_strip(p.b, p.len, out, p.len - 16, &res), (int)p.len - 16);
}

/*
 * More ranges to cut than WIRE_ECH_MAX_CUTS: refused, not half done; one
 * fewer is cut.  Each RR: owner pointer, HTTPS 1 . ech="" (19 octets).
 */
static void test_too_many_cuts(void **state)
{
	static const uint8_t head[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0,
					1, 's', 1, 'e', 0, 0, 65, 0, 1 };
	static const uint8_t rr[] = { 0xc0, 12, 0, 65, 0, 1, 0, 0, 1, 44, 0, 7,
				      0, 1, 0, 0, WIRE_SVC_ECH, 0, 0 };
	static uint8_t big[65536];
	struct wire_ech_result res;
	unsigned int n = WIRE_ECH_MAX_CUTS + 1;
	size_t len = sizeof(head);

	(void)state;
	memcpy(big, head, sizeof(head));
	for (unsigned int i = 0; i < n; i++, len += sizeof(rr))
		memcpy(big + len, rr, sizeof(rr));
	big[6] = (uint8_t)(n >> 8);
	big[7] = (uint8_t)n;
	assert_int_equal(wire_ech_strip(big, len, out, sizeof(out), &res), -E2BIG);
	assert_int_equal(res.params, 0);
	n--;
	big[6] = (uint8_t)(n >> 8);
	big[7] = (uint8_t)n;
	len -= sizeof(rr);
	assert_int_equal(wire_ech_strip(big, len, out, sizeof(out), &res), (int)(len - 4 * n));
	assert_int_equal(res.params, n);
}

/*
 * A pointer chain (RFC 1035 4.1.4) of more jumps than a name has labels:
 * refused, as wire.c's reader refuses it, so a hostile answer cannot make
 * each of its owner names walk thousands of pointers.  130 pointers in a
 * TXT record, each to the one before, the first to a root label; an A
 * record's owner points at the last.  127 would still be a name.
 */
static void test_pointer_chain(void **state)
{
	struct wire_ech_result res;
	struct pkt p;
	size_t q, rd, root, prev, n_ptrs;

	(void)state;
	for (n_ptrs = 126; n_ptrs <= 130; n_ptrs += 4) {
		p_hdr(&p, false, 2, 0, 0);
		q = p_question(&p, "svc.example", WIRE_TYPE_A);
		p_name(&p, "", q);
		rd = p_rr(&p, WIRE_TYPE_TXT, 300);
		root = p.len;
		p_u8(&p, 0);
		prev = root;
		for (size_t i = 0; i < n_ptrs; i++) {
			size_t at = p.len;

			p_u16(&p, (uint16_t)(0xc000 | prev));
			prev = at;
		}
		p_end(&p, rd);
		p_u16(&p, (uint16_t)(0xc000 | prev));	/* the A record's owner: the chain's end */
		rd = p_rr(&p, WIRE_TYPE_A, 300);
		p_bytes(&p, hint4, 4);
		p_end(&p, rd);
		/* the A owner walks n_ptrs + 1 pointers */
		if (n_ptrs + 1 > WIRE_NAME_MAX / 2)
			assert_int_equal(strip(&p, &res), -EBADMSG);
		else
			assert_true(strip(&p, &res) >= 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_rr),
		cmocka_unit_test(test_svcb_last_param),
		cmocka_unit_test(test_compression_after_cut),
		cmocka_unit_test(test_mandatory_drops_rr),
		cmocka_unit_test(test_rrset_becomes_empty),
		cmocka_unit_test(test_rrsig_dropped),
		cmocka_unit_test(test_every_section),
		cmocka_unit_test(test_untouched),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_too_many_cuts),
		cmocka_unit_test(test_pointer_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
