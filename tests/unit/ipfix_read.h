/*
 * ipfix_read.h - a small IPFIX reader for the tests (test code, not product
 * code): RFC 7011 Messages, Template Sets (kept per reader, so a Data Set
 * of an earlier message's Template decodes) and Data Records, with every
 * length checked.  Written apart from netd/trail/ipfix.c, from the RFC, so
 * the encoder is checked against a second reading of the format rather
 * than against itself.  Header-only: tests/unit/test_ipfix*.c and
 * tests/fuzz/fuzz_ipfix_read.c include it.
 */
#ifndef NETD_TEST_IPFIX_READ_H
#define NETD_TEST_IPFIX_READ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define IPR_FIELDS    32	/* fields of one Template */
#define IPR_TEMPLATES 16	/* Templates a reader keeps */
#define IPR_RECORDS   256	/* Data Records of one message kept */

struct ipr_field {
	uint16_t id, len;	/* id without the E bit; len 65535: variable */
	uint32_t pen;		/* 0: IANA */
};

struct ipr_tpl {
	uint16_t id, n;
	struct ipr_field f[IPR_FIELDS];
};

struct ipr_val {
	uint32_t pen;
	uint16_t id, len;
	const uint8_t *p;	/* into the message */
};

struct ipr_rec {
	uint16_t tpl, n;
	struct ipr_val v[IPR_FIELDS];
};

struct ipr_reader {
	struct ipr_tpl t[IPR_TEMPLATES];
	size_t nt;
	uint64_t unknown_sets;	/* Data Sets of a Template not (yet) seen */
};

struct ipr_msg {
	uint16_t version, len;
	uint32_t export_s, seq, domain;
	size_t n_template_sets, n_templates, n_data_sets;
	size_t n_rec;		/* records decoded (the first IPR_RECORDS are in rec[]) */
	struct ipr_rec rec[IPR_RECORDS];
};

static inline uint16_t ipr_16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ipr_32(const uint8_t *p)
{
	return (uint32_t)ipr_16(p) << 16 | ipr_16(p + 2);
}

static inline uint64_t ipr_64(const uint8_t *p)
{
	return (uint64_t)ipr_32(p) << 32 | ipr_32(p + 4);
}

static inline struct ipr_tpl *ipr_find(struct ipr_reader *r, uint16_t id)
{
	for (size_t i = 0; i < r->nt; i++)
		if (r->t[i].id == id)
			return &r->t[i];
	return NULL;
}

/* A Template Set's records (RFC 7011 3.4.1): @p/@len the Set's body. */
static inline int ipr_templates(struct ipr_reader *r, struct ipr_msg *m, const uint8_t *p,
				size_t len)
{
	size_t off = 0;

	while (len - off >= 4) {
		struct ipr_tpl t = { .id = ipr_16(p + off), .n = ipr_16(p + off + 2) };
		struct ipr_tpl *slot;

		off += 4;
		if (t.id < 256 || t.n == 0 || t.n > IPR_FIELDS)
			return -EBADMSG;	/* (a withdrawal has n == 0: netd sends none) */
		for (uint16_t i = 0; i < t.n; i++) {
			uint16_t id;

			if (len - off < 4)
				return -EBADMSG;
			id = ipr_16(p + off);
			t.f[i].id = id & 0x7fff;
			t.f[i].len = ipr_16(p + off + 2);
			off += 4;
			if (id & 0x8000) {	/* the Enterprise Number follows (3.2) */
				if (len - off < 4)
					return -EBADMSG;
				t.f[i].pen = ipr_32(p + off);
				off += 4;
			}
		}
		slot = ipr_find(r, t.id);
		if (!slot) {
			if (r->nt == IPR_TEMPLATES)
				return -ENOSPC;
			slot = &r->t[r->nt++];
		}
		*slot = t;
		m->n_templates++;
	}
	return off == len ? 0 : -EBADMSG;	/* netd pads nothing */
}

/* A Data Set's records of Template @t: @p/@len the Set's body. */
static inline int ipr_data(const struct ipr_tpl *t, struct ipr_msg *m, const uint8_t *p,
			   size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct ipr_rec rec = { .tpl = t->id, .n = t->n };
		size_t start = off;

		for (uint16_t i = 0; i < t->n; i++) {
			size_t fl = t->f[i].len;

			if (fl == 65535) {	/* variable length (RFC 7011 7) */
				if (len - off < 1)
					return -EBADMSG;
				fl = p[off++];
				if (fl == 255) {
					if (len - off < 2)
						return -EBADMSG;
					fl = ipr_16(p + off);
					off += 2;
				}
			}
			if (len - off < fl)
				return -EBADMSG;
			rec.v[i] = (struct ipr_val){ .pen = t->f[i].pen, .id = t->f[i].id,
						     .len = (uint16_t)fl, .p = p + off };
			off += fl;
		}
		if (off == start)
			return -EBADMSG;	/* a record of no octets would never end the Set */
		if (m->n_rec < IPR_RECORDS)
			m->rec[m->n_rec] = rec;
		m->n_rec++;
	}
	return 0;
}

/*
 * ipr_parse() - one IPFIX Message @buf/@len into @m (values point into
 * @buf), Templates into @r.  Return: 0; -EBADMSG; -EPROTO (not version 10).
 */
static inline int ipr_parse(struct ipr_reader *r, const uint8_t *buf, size_t len,
			    struct ipr_msg *m)
{
	size_t off = 16;
	int e;

	memset(m, 0, offsetof(struct ipr_msg, rec));
	if (len < 16)
		return -EBADMSG;
	m->version = ipr_16(buf);
	m->len = ipr_16(buf + 2);
	m->export_s = ipr_32(buf + 4);
	m->seq = ipr_32(buf + 8);
	m->domain = ipr_32(buf + 12);
	if (m->version != 10)
		return -EPROTO;
	if (m->len != len)
		return -EBADMSG;
	while (off < len) {
		uint16_t id, sl;

		if (len - off < 4)
			return -EBADMSG;
		id = ipr_16(buf + off);
		sl = ipr_16(buf + off + 2);
		if (sl < 4 || sl > len - off)
			return -EBADMSG;
		if (id == 2) {
			m->n_template_sets++;
			e = ipr_templates(r, m, buf + off + 4, sl - 4u);
		} else if (id >= 256) {
			const struct ipr_tpl *t = ipr_find(r, id);

			m->n_data_sets++;
			if (!t) {
				r->unknown_sets++;
				e = 0;
			} else {
				e = ipr_data(t, m, buf + off + 4, sl - 4u);
			}
		} else {
			e = -EBADMSG;	/* 3 (Options Templates) and the reserved IDs: netd sends none */
		}
		if (e < 0)
			return e;
		off += sl;
	}
	return 0;
}

/* ipr_get() - record @rec's value of element (@pen, @id), or NULL. */
static inline const struct ipr_val *ipr_get(const struct ipr_rec *rec, uint32_t pen, uint16_t id)
{
	for (uint16_t i = 0; i < rec->n; i++)
		if (rec->v[i].pen == pen && rec->v[i].id == id)
			return &rec->v[i];
	return NULL;
}

/* ipr_uint() - an unsigned element of 1, 2, 4 or 8 octets; 0 if absent. */
static inline uint64_t ipr_uint(const struct ipr_rec *rec, uint32_t pen, uint16_t id)
{
	const struct ipr_val *v = ipr_get(rec, pen, id);
	uint64_t x = 0;

	for (uint16_t i = 0; v && i < v->len && i < 8; i++)
		x = x << 8 | v->p[i];
	return x;
}

/* ipr_str() - a string element into @out (NUL-terminated, cut to @sz); "" if absent. */
static inline const char *ipr_str(const struct ipr_rec *rec, uint32_t pen, uint16_t id, char *out,
				  size_t sz)
{
	const struct ipr_val *v = ipr_get(rec, pen, id);
	size_t n = v ? v->len : 0;

	if (n >= sz)
		n = sz - 1;
	memcpy(out, v ? (const char *)v->p : "", n);
	out[n] = '\0';
	return out;
}

#endif
