/*
 * wire - the DNS message codec (RFC 1035 4.1, RFC 6891 EDNS0, RFC 6672
 * DNAME).  Pure: works on caller-provided buffers, never allocates, never
 * logs.  Every offset and length taken from a packet is checked against the
 * buffer before it is used; compression pointers must point strictly
 * backwards, so every name walk terminates; a name is at most 255 octets.
 *
 * It is not a general DNS library: it decodes what the proxy needs to decide
 * (the question of a query, the CNAME/DNAME chain and addresses of an
 * answer) and edits answers only in place (ID, TTLs).  The messages netd
 * writes itself are built in wire_build.c.
 */
#include "dnsproxy/wire.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define HDR_QR       0x8000
#define HDR_OPCODE(f) (((f) >> 11) & 0x0f)
#define HDR_TC       0x0200
#define HDR_RCODE(f) ((f) & 0x000f)

#define RR_FIXED_LEN     10	/* type, class, ttl, rdlength */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* A name in uncompressed wire form, lower-cased: labels then the root octet. */
struct wname {
	uint8_t b[WIRE_NAME_MAX];
	size_t len;		/* bytes used in b, including the root octet */
	unsigned int labels;
};

/* Is any of the @n octets at @pos a fixed field in @fixed (NULL: none)? */
static bool fixed_hit(const uint8_t *fixed, size_t pos, size_t n)
{
	for (size_t i = pos; fixed && i < pos + n; i++)
		if (fixed[i / 8] & (1u << (i % 8)))
			return true;
	return false;
}

/*
 * name_read() - decode the possibly compressed name at *@off (RFC 1035
 * 4.1.4).  On success *@off is just past the name where it started (past
 * the first pointer if any) and @n (may be NULL) holds it lower-cased.
 * Each pointer must point before the pointer itself, so the walk strictly
 * moves backwards and ends.  name_read_in() also refuses any octet marked
 * in @fixed (a bitmap of the message's non-name octets, see msg_check()).
 * Return: 0; -EBADMSG; -EMSGSIZE (> 255 octets).
 */
static int name_read_in(const uint8_t *buf, size_t len, size_t *off, struct wname *n,
			const uint8_t *fixed)
{
	size_t pos = *off, end = 0, total = 0, seg = *off;
	bool jumped = false;
	unsigned int labels = 0, jumps = 0;

	for (;;) {
		uint8_t l;

		if (pos >= len)
			return -EBADMSG;
		l = buf[pos];
		if ((l & 0xc0) == 0xc0) {
			size_t target;

			if (pos + 1 >= len || fixed_hit(fixed, pos, 2))
				return -EBADMSG;
			target = (size_t)(l & 0x3f) << 8 | buf[pos + 1];
			/* Only backwards, and each jump lands before the start
			 * of the piece it jumped from: the walk strictly moves
			 * to lower offsets, so no loop (RFC 1035 4.1.4: a
			 * pointer refers to a "prior occurrence"). */
			if (target >= seg)
				return -EBADMSG;
			/* A name has at most 127 labels, so a real one never
			 * needs more pointers; caps the cost of a hostile one. */
			if (++jumps > WIRE_NAME_MAX / 2)
				return -EBADMSG;
			seg = target;
			if (!jumped)
				end = pos + 2;
			jumped = true;
			pos = target;
			continue;
		}
		if (l & 0xc0)	/* 0x40 / 0x80: extended / reserved label types */
			return -EBADMSG;
		if (l == 0) {
			if (fixed_hit(fixed, pos, 1))
				return -EBADMSG;
			if (total + 1 > WIRE_NAME_MAX)
				return -EMSGSIZE;
			if (n) {
				n->b[total] = 0;
				n->len = total + 1;
				n->labels = labels;
			}
			*off = jumped ? end : pos + 1;
			return 0;
		}
		/* RFC 1035 3.1: labels <= 63 (guaranteed by the 0xc0 test),
		 * name <= 255 octets including length octets and the root. */
		if (total + 1 + l + 1 > WIRE_NAME_MAX)
			return -EMSGSIZE;
		if (pos + 1 + l > len)
			return -EBADMSG;
		/* Octets that are not names (msg_check()) read as one. */
		if (fixed_hit(fixed, pos, 1 + (size_t)l))
			return -EBADMSG;
		if (n) {
			n->b[total] = l;
			for (size_t i = 0; i < l; i++)
				n->b[total + 1 + i] = lower(buf[pos + 1 + i]);
		}
		total += 1 + (size_t)l;
		labels++;
		pos += 1 + (size_t)l;
	}
}

static int name_read(const uint8_t *buf, size_t len, size_t *off, struct wname *n)
{
	return name_read_in(buf, len, off, n, NULL);
}

static bool wname_equal(const struct wname *a, const struct wname *b)
{
	return a->len == b->len && memcmp(a->b, b->b, a->len) == 0;
}

static bool plain_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/*
 * wname_present() - presentation form of @n (already lower-case): labels
 * joined by '.', '.' in a label as "\.", other bytes outside [a-z0-9_-]
 * as \DDD; "." for the root.  @out must hold WIRE_NAME_STRLEN bytes, which
 * always suffices (at most 4 characters per octet).  Return: true if every
 * byte was plain.
 */
static bool wname_present(const struct wname *n, char *out)
{
	size_t o = 0, pos = 0;
	bool plain = true;

	if (n->len <= 1) {
		out[0] = '.';
		out[1] = '\0';
		return true;
	}
	while (pos < n->len && n->b[pos]) {
		uint8_t l = n->b[pos];

		if (o)
			out[o++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = n->b[pos + 1 + i];

			if (plain_byte(c)) {
				out[o++] = (char)c;
				continue;
			}
			plain = false;
			out[o++] = '\\';
			if (c == '.') {
				out[o++] = '.';
			} else {
				out[o++] = (char)('0' + c / 100);
				out[o++] = (char)('0' + c / 10 % 10);
				out[o++] = (char)('0' + c % 10);
			}
		}
		pos += 1 + (size_t)l;
	}
	out[o] = '\0';
	return plain;
}

/* One resource record's fixed fields and where its parts are (RFC 1035 4.1.3). */
struct rr {
	size_t owner_off;
	uint16_t type, class;
	uint32_t ttl;
	size_t ttl_off;
	uint16_t rdlen;
	size_t rdata_off;
};

/* rr_next() - decode the RR at *@off and advance past it. Return: 0; -EBADMSG. */
static int rr_next(const uint8_t *buf, size_t len, size_t *off, struct rr *rr)
{
	size_t pos = *off;
	int r;

	rr->owner_off = pos;
	r = name_read(buf, len, &pos, NULL);
	if (r < 0)
		return -EBADMSG;
	if (len - pos < RR_FIXED_LEN)
		return -EBADMSG;
	rr->type = get16(buf + pos);
	rr->class = get16(buf + pos + 2);
	rr->ttl_off = pos + 4;
	rr->ttl = get32(buf + pos + 4);
	rr->rdlen = get16(buf + pos + 8);
	pos += RR_FIXED_LEN;
	if (len - pos < rr->rdlen)
		return -EBADMSG;
	rr->rdata_off = pos;
	*off = pos + rr->rdlen;
	return 0;
}

/* RFC 6891 6.1.2: the OPT RR's option list must be well-formed TLVs. */
static int opt_check(const uint8_t *buf, const struct rr *rr)
{
	size_t pos = 0;

	while (pos < rr->rdlen) {
		uint16_t olen;

		if (rr->rdlen - pos < 4)
			return -EBADMSG;
		olen = get16(buf + rr->rdata_off + pos + 2);
		pos += 4;
		if (rr->rdlen - pos < olen)
			return -EBADMSG;
		pos += olen;
	}
	return 0;
}

/*
 * query_opt() - take the OPT RR @rr (RFC 6891 6.1.1-6.1.3) into @q.  Its
 * fields are recorded before its options are checked, so that even the
 * FORMERR for a bad one carries an OPT back.  Return: 0; -EBADMSG.
 */
static int query_opt(const uint8_t *buf, const struct rr *rr, struct wire_query *q)
{
	/* RFC 6891 6.1.1: one OPT at most, owner is the root. */
	if (q->has_opt || buf[rr->owner_off] != 0)
		return -EBADMSG;
	q->has_opt = true;
	/* RFC 6891 6.2.5: values below 512 are treated as 512. */
	q->udp_size = rr->class < WIRE_UDP_MIN ? WIRE_UDP_MIN : rr->class;
	q->edns_version = (uint8_t)(rr->ttl >> 16);
	q->do_bit = (rr->ttl & 0x8000) != 0;
	return opt_check(buf, rr);
}

/*
 * The question is decoded only from a well-formed QUERY header (opcode 0,
 * QDCOUNT 1, ANCOUNT = NSCOUNT = 0); whatever the header, every section is
 * walked to find an OPT RR, so that the FORMERR or NOTIMP an EDNS query
 * gets carries one too (RFC 6891 7).  The first error found is returned.
 */
int wire_parse_query(const uint8_t *buf, size_t len, struct wire_query *q)
{
	uint16_t qdcount, ancount, nscount, arcount;
	int err = 0, r;
	struct wname n;
	size_t off;

	memset(q, 0, sizeof(*q));
	q->question_end = WIRE_HDR_LEN;
	q->udp_size = WIRE_UDP_MIN;
	q->qname[0] = '\0';
	if (len < WIRE_HDR_LEN)
		return -EPROTO;
	q->id = get16(buf);
	q->flags = get16(buf + 2);
	q->opcode = (uint8_t)HDR_OPCODE(q->flags);
	if (q->flags & HDR_QR)
		return -EPROTO;
	if (len > WIRE_MSG_MAX)
		return -EBADMSG;
	qdcount = get16(buf + 4);
	ancount = get16(buf + 6);
	nscount = get16(buf + 8);
	arcount = get16(buf + 10);
	if (q->opcode != 0)	/* only QUERY; RFC 1035 4.1.1: NOTIMP */
		err = -EOPNOTSUPP;
	/* Exactly one question: RFC 9619 makes QDCOUNT > 1 FORMERR. */
	else if (qdcount != 1 || ancount != 0 || nscount != 0)
		err = -EBADMSG;

	off = WIRE_HDR_LEN;
	for (unsigned int i = 0; i < qdcount; i++) {
		r = name_read(buf, len, &off, &n);
		if (r < 0)
			return err ? err : r;
		if (len - off < 4)
			return err ? err : -EBADMSG;
		if (err == 0) {
			q->qtype = get16(buf + off);
			q->qclass = get16(buf + off + 2);
			q->qname_plain = wname_present(&n, q->qname);
			q->qname_labels = n.labels;
			q->question_end = off + 4;
		}
		off += 4;
	}
	for (unsigned int i = 0; i < (unsigned int)ancount + nscount + arcount; i++) {
		struct rr rr;

		if (rr_next(buf, len, &off, &rr) < 0)
			return err ? err : -EBADMSG;
		/* Others (e.g. TSIG) are not forwarded (wire_build_upstream_query()). */
		if (rr.type != WIRE_TYPE_OPT || i < (unsigned int)ancount + nscount)
			continue;
		r = query_opt(buf, &rr, q);
		if (r < 0)
			return err ? err : r;
	}
	if (off != len)		/* trailing junk */
		return err ? err : -EBADMSG;
	return err;
}

void wire_set_id(uint8_t *buf, uint16_t id)
{
	put16(buf, id);
}

/* RFC 2181 8: a TTL with the top bit set is to be treated as zero. */
static uint32_t ttl_sane(uint32_t ttl)
{
	return ttl & 0x80000000u ? 0 : ttl;
}

/* is @n a proper subdomain of @anc?  (both lower-cased wire form) */
static bool wname_below(const struct wname *n, const struct wname *anc, size_t *ret_prefix)
{
	size_t pos = 0;

	if (anc->len >= n->len)
		return false;
	/* Walk label boundaries of @n until the remaining suffix has @anc's length. */
	while (pos < n->len && n->b[pos]) {
		pos += 1 + (size_t)n->b[pos];
		if (n->len - pos == anc->len) {
			if (memcmp(n->b + pos, anc->b, anc->len) != 0)
				return false;
			*ret_prefix = pos;
			return true;
		}
		if (n->len - pos < anc->len)
			return false;
	}
	return false;
}

/* Decoded answer header and section bounds, shared by walk and cap. */
struct msg {
	uint16_t flags;
	uint16_t qdcount, ancount, nscount, arcount;
	size_t question_off, answer_off;
};

static int msg_open(const uint8_t *buf, size_t len, struct msg *m)
{
	size_t off;

	if (len < WIRE_HDR_LEN || len > WIRE_MSG_MAX)
		return -EBADMSG;
	m->flags = get16(buf + 2);
	m->qdcount = get16(buf + 4);
	m->ancount = get16(buf + 6);
	m->nscount = get16(buf + 8);
	m->arcount = get16(buf + 10);
	m->question_off = off = WIRE_HDR_LEN;
	for (unsigned int i = 0; i < m->qdcount; i++) {
		if (name_read(buf, len, &off, NULL) < 0 || len - off < 4)
			return -EBADMSG;
		off += 4;
	}
	m->answer_off = off;
	return 0;
}

/*
 * Where a receiver finds names in RDATA (RFC 3597 4: the types of RFC 1035,
 * plus RP, AFSDB, RT, SIG, PX, NXT, SRV; DNAME, RRSIG, KX; SVCB/HTTPS's
 * TargetName): @skip octets, then @names names.  NAPTR is wire_rdata_names().
 */
static const struct {
	uint16_t type;
	uint8_t skip, names;
} rdata_names[] = {
	{ 2, 0, 1 }, { 3, 0, 1 }, { 4, 0, 1 }, { 5, 0, 1 }, { 6, 0, 2 }, { 7, 0, 1 },
	{ 8, 0, 1 }, { 9, 0, 1 }, { 12, 0, 1 }, { 14, 0, 2 }, { 15, 2, 1 }, { 17, 0, 2 },
	{ 18, 2, 1 }, { 21, 2, 1 }, { 24, 18, 1 }, { 26, 2, 2 }, { 30, 0, 1 }, { 33, 6, 1 },
	{ 36, 2, 1 }, { 39, 0, 1 }, { 46, 18, 1 }, { 64, 2, 1 }, { 65, 2, 1 },
};

#define WIRE_TYPE_NAPTR 35

int wire_rdata_names(uint16_t type, const uint8_t *rdata, size_t rdlen, size_t *ret_first,
		     unsigned int *ret_n)
{
	size_t pos = 0;

	*ret_first = 0;
	*ret_n = 0;
	if (type == WIRE_TYPE_NAPTR) {
		/* order, preference, flags, services, regexp, replacement */
		if (rdlen < 4)
			return -EBADMSG;
		pos = 4;
		for (int i = 0; i < 3; i++) {
			if (pos >= rdlen || rdlen - pos < 1u + rdata[pos])
				return -EBADMSG;
			pos += 1u + rdata[pos];
		}
		*ret_first = pos;
		*ret_n = 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(rdata_names) / sizeof(rdata_names[0]); i++) {
		if (rdata_names[i].type != type)
			continue;
		if (rdlen < rdata_names[i].skip)
			return -EBADMSG;
		*ret_first = rdata_names[i].skip;
		*ret_n = rdata_names[i].names;
		return 0;
	}
	return 0;
}

/*
 * rdata_names_at() - check the names in @rr's RDATA (wire_rdata_names())
 * against @fixed: each must end inside the RDATA and never read a fixed
 * field.  Other types' RDATA is opaque.  Return: 0; -EBADMSG.
 */
static int rdata_names_at(const uint8_t *buf, const struct rr *rr, const uint8_t *fixed)
{
	size_t end = rr->rdata_off + rr->rdlen, pos;
	unsigned int names;

	if (wire_rdata_names(rr->type, buf + rr->rdata_off, rr->rdlen, &pos, &names) < 0)
		return -EBADMSG;
	pos += rr->rdata_off;
	for (unsigned int i = 0; i < names; i++)
		if (name_read_in(buf, end, &pos, NULL, fixed) < 0)
			return -EBADMSG;
	return 0;
}

static void fixed_mark(uint8_t *fixed, size_t pos, size_t n)
{
	for (size_t i = pos; i < pos + n; i++)
		fixed[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * msg_check() - msg_open(), then the whole message must be well-formed
 * RRs and no name may read octets that are not names: the header, a
 * question's type and class, an RR's type, class, TTL and RDLENGTH.  A
 * pointer into a TTL (or a label running over one) would make a name
 * change when the TTL is capped or aged, and a pointer into the header one
 * that changes with the ID; no encoder produces them (RFC 1035 4.1.4
 * points to a prior occurrence of a name), so such a message is malformed
 * and every edit wire.c makes in place (ID, TTLs) leaves every name as it
 * was.  Names checked: question, owners, and those of rdata_names[].
 * Return: 0; -EBADMSG.
 */
static int msg_check(const uint8_t *buf, size_t len, struct msg *m)
{
	uint8_t fixed[WIRE_MSG_MAX / 8 + 1];
	unsigned int n_rr;
	size_t off;

	if (msg_open(buf, len, m) < 0)
		return -EBADMSG;
	n_rr = (unsigned int)m->ancount + m->nscount + m->arcount;
	memset(fixed, 0, len / 8 + 1);
	fixed_mark(fixed, 0, WIRE_HDR_LEN);
	/* Pass 1: where the fixed fields are (names point backwards, but a
	 * label read through a pointer runs forwards, into any later RR). */
	off = m->question_off;
	for (unsigned int i = 0; i < m->qdcount; i++) {
		if (name_read(buf, len, &off, NULL) < 0)
			return -EBADMSG;
		fixed_mark(fixed, off, 4);
		off += 4;
	}
	for (unsigned int i = 0; i < n_rr; i++) {
		struct rr rr;

		if (rr_next(buf, len, &off, &rr) < 0)
			return -EBADMSG;
		fixed_mark(fixed, rr.ttl_off - 4, RR_FIXED_LEN);
	}
	if (off != len)
		return -EBADMSG;
	/* Pass 2: every name against that map. */
	off = m->question_off;
	for (unsigned int i = 0; i < m->qdcount; i++) {
		if (name_read_in(buf, len, &off, NULL, fixed) < 0)
			return -EBADMSG;
		off += 4;
	}
	for (unsigned int i = 0; i < n_rr; i++) {
		struct rr rr;
		size_t p = off;

		if (rr_next(buf, len, &off, &rr) < 0 || name_read_in(buf, len, &p, NULL, fixed) < 0 ||
		    rdata_names_at(buf, &rr, fixed) < 0)
			return -EBADMSG;
	}
	return 0;
}

/*
 * chain_next() - one hop of the chain from @cur: a CNAME owned by @cur, else
 * a DNAME owning an ancestor of @cur, whose target is synthesized (RFC 6672
 * 2.2).  The answer must be consistent about the hop, or it is malformed:
 * every CNAME owned by @cur has the same target (RFC 2181 10.1: one CNAME
 * per name), every DNAME above @cur synthesizes the same name, and a CNAME
 * next to such a DNAME is that very substitution (RFC 6672 2.2, 3: the
 * server synthesizes it; any other target did not come from the DNAME).
 * Return: 1 (@next, @ttl filled); 0 none; -EBADMSG.
 */
static int chain_next(const uint8_t *buf, size_t len, const struct msg *m,
		      const struct wname *cur, struct wname *next, uint32_t *ttl)
{
	bool have_dname = false, have_cname = false;
	struct wname dn_next, cn_next;
	uint32_t dn_ttl = 0, cn_ttl = 0;
	size_t off = m->answer_off;

	for (unsigned int i = 0; i < m->ancount; i++) {
		struct wname owner, target, syn;
		struct rr rr;
		size_t p, prefix = 0;

		if (rr_next(buf, len, &off, &rr) < 0)
			return -EBADMSG;
		if (rr.class != WIRE_CLASS_IN ||
		    (rr.type != WIRE_TYPE_CNAME && rr.type != WIRE_TYPE_DNAME))
			continue;
		p = rr.owner_off;
		if (name_read(buf, len, &p, &owner) < 0)
			return -EBADMSG;
		if (rr.type == WIRE_TYPE_CNAME && !wname_equal(&owner, cur))
			continue;
		if (rr.type == WIRE_TYPE_DNAME && !wname_below(cur, &owner, &prefix))
			continue;
		/* The target must fill the RDATA exactly. */
		p = rr.rdata_off;
		if (name_read(buf, rr.rdata_off + rr.rdlen, &p, &target) < 0 ||
		    p != rr.rdata_off + rr.rdlen)
			return -EBADMSG;
		if (rr.type == WIRE_TYPE_CNAME) {
			if (have_cname && !wname_equal(&cn_next, &target))
				return -EBADMSG;
			if (!have_cname || ttl_sane(rr.ttl) < cn_ttl)
				cn_ttl = ttl_sane(rr.ttl);
			cn_next = target;
			have_cname = true;
			continue;
		}
		/* DNAME: cur = prefix labels + owner -> prefix labels + target.
		 * Too long a result is YXDOMAIN (RFC 6672 2.2): no hop. */
		if (prefix + target.len > WIRE_NAME_MAX)
			continue;
		memcpy(syn.b, cur->b, prefix);
		memcpy(syn.b + prefix, target.b, target.len);
		syn.len = prefix + target.len;
		syn.labels = 0;
		if (have_dname && !wname_equal(&dn_next, &syn))
			return -EBADMSG;
		if (!have_dname || ttl_sane(rr.ttl) < dn_ttl)
			dn_ttl = ttl_sane(rr.ttl);
		dn_next = syn;
		have_dname = true;
	}
	if (have_cname && have_dname && !wname_equal(&cn_next, &dn_next))
		return -EBADMSG;	/* a "synthesized" CNAME the DNAME does not make */
	if (!have_cname && !have_dname)
		return 0;
	*next = have_cname ? cn_next : dn_next;
	*ttl = have_cname ? cn_ttl : dn_ttl;
	return 1;
}

static void min_ttl(struct wire_answer *ret, uint32_t ttl, bool *any)
{
	if (!*any || ttl < ret->min_ttl_s)
		ret->min_ttl_s = ttl;
	*any = true;
}

/*
 * add_addr() - store @a in @out unless it is there already (then keep the
 * smaller TTL: the pin must not outlast the shortest record).
 * Return: 0; -ENOBUFS.
 */
static int add_addr(struct wire_addr *out, size_t max, struct wire_answer *ret,
		    const struct wire_addr *a)
{
	for (size_t k = 0; k < ret->n_addrs; k++) {
		if (addr_equal(&out[k].addr, &a->addr)) {
			if (a->ttl_s < out[k].ttl_s)
				out[k].ttl_s = a->ttl_s;
			return 0;
		}
	}
	if (ret->n_addrs >= max)
		return -ENOBUFS;
	out[ret->n_addrs++] = *a;
	return 0;
}

/*
 * svcb_hints() - validate one SVCB/HTTPS RR (wire_svcb_check(), RFC 9460
 * 2.2) and, if @collect, take its ipv4hint/ipv6hint addresses (7.3).  In
 * AliasMode (SvcPriority 0) SvcParams are to be ignored (2.4.2): validated,
 * never collected.  Return: 0; -EBADMSG; -ENOBUFS.
 */
static int svcb_hints(const uint8_t *buf, const struct rr *rr, bool collect,
		      struct wire_addr *out, size_t max, struct wire_answer *ret)
{
	const uint8_t *rd = buf + rr->rdata_off;
	int params = wire_svcb_check(rd, rr->rdlen), r;

	if (params < 0)
		return -EBADMSG;
	if (!collect || get16(rd) == 0)
		return 0;
	for (size_t pos = (size_t)params; pos < rr->rdlen; pos += 4u + get16(rd + pos + 2)) {
		uint16_t key = get16(rd + pos), vlen = get16(rd + pos + 2);
		size_t alen = key == WIRE_SVC_IPV4HINT ? 4 : 16;

		if (key != WIRE_SVC_IPV4HINT && key != WIRE_SVC_IPV6HINT)
			continue;
		for (size_t i = 0; i < vlen; i += alen) {
			struct wire_addr a;

			memset(&a, 0, sizeof(a));
			a.addr.family = alen == 4 ? AF_INET : AF_INET6;
			memcpy(a.addr.a, rd + pos + 4 + i, alen);
			a.ttl_s = ttl_sane(rr->ttl);
			a.hint = true;
			r = add_addr(out, max, ret, &a);
			if (r < 0)
				return r;
			ret->n_hints++;
		}
	}
	return 0;
}

int wire_walk_answer(const uint8_t *buf, size_t len, const struct wire_query *q,
		     struct wire_addr *out, size_t max, struct wire_answer *ret)
{
	struct wname chain[WIRE_CHAIN_MAX + 1];
	char qpres[WIRE_NAME_STRLEN];
	unsigned int n_chain = 1;
	bool any_ttl = false;
	struct msg m;
	size_t off;
	int r;

	memset(ret, 0, sizeof(*ret));
	/* Names only from name octets: the TTL capping that follows cannot
	 * change what is decided here (msg_check()). */
	if (msg_check(buf, len, &m) < 0)
		return -EBADMSG;
	ret->id = get16(buf);
	ret->rcode = (uint8_t)HDR_RCODE(m.flags);
	ret->tc = (m.flags & HDR_TC) != 0;
	if (!(m.flags & HDR_QR) || m.qdcount != 1)
		return -EBADMSG;

	/* The question must be the one we asked (case-insensitively). */
	off = m.question_off;
	if (name_read(buf, len, &off, &chain[0]) < 0)
		return -EBADMSG;
	wname_present(&chain[0], qpres);
	if (strcmp(qpres, q->qname) != 0 || get16(buf + off) != q->qtype ||
	    get16(buf + off + 2) != q->qclass)
		return -EBADMSG;

	/* Follow the chain: one pass over the answer section per hop, so
	 * the records may come in any order. */
	for (;;) {
		struct wname next;
		uint32_t ttl;

		r = chain_next(buf, len, &m, &chain[n_chain - 1], &next, &ttl);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		for (unsigned int i = 0; i < n_chain; i++)
			if (wname_equal(&chain[i], &next))
				return -ELOOP;
		if (n_chain > WIRE_CHAIN_MAX)
			return -ELOOP;
		chain[n_chain++] = next;
		min_ttl(ret, ttl, &any_ttl);
	}
	ret->chain_len = n_chain - 1;

	/* Collect A/AAAA owned by a chain name; also validates the rest. */
	off = m.answer_off;
	for (unsigned int i = 0; i < (unsigned int)m.ancount + m.nscount + m.arcount; i++) {
		struct wire_addr a;
		struct wname owner;
		bool on_chain = false, svc;
		size_t alen, p;
		struct rr rr;

		if (rr_next(buf, len, &off, &rr) < 0)
			return -EBADMSG;
		svc = rr.type == WIRE_TYPE_SVCB || rr.type == WIRE_TYPE_HTTPS;
		if (rr.type != WIRE_TYPE_A && rr.type != WIRE_TYPE_AAAA && !svc)
			continue;
		if (rr.class != WIRE_CLASS_IN) {
			ret->n_dropped++;
			continue;
		}
		alen = rr.type == WIRE_TYPE_A ? 4 : 16;
		if (!svc && rr.rdlen != alen)
			return -EBADMSG;
		p = rr.owner_off;
		if (name_read(buf, len, &p, &owner) < 0)
			return -EBADMSG;
		/* Authority / additional: never pinned. */
		for (unsigned int c = 0; c < n_chain && !on_chain && i < m.ancount; c++)
			on_chain = wname_equal(&owner, &chain[c]);
		if (svc) {
			/* The hints are addresses the client may connect to
			 * without another lookup: pinned like A/AAAA of the
			 * same owner (RFC 9460 7.3), or not handed out at all.
			 * Every SVCB/HTTPS RR must be well-formed, pinned or not. */
			r = svcb_hints(buf, &rr, on_chain, out, max, ret);
			if (r < 0)
				return r;
			if (on_chain)
				min_ttl(ret, ttl_sane(rr.ttl), &any_ttl);
			else
				ret->n_dropped++;
			continue;
		}
		if (!on_chain) {
			ret->n_dropped++;
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.addr.family = rr.type == WIRE_TYPE_A ? AF_INET : AF_INET6;
		memcpy(a.addr.a, buf + rr.rdata_off, alen);
		a.ttl_s = ttl_sane(rr.ttl);
		min_ttl(ret, a.ttl_s, &any_ttl);
		r = add_addr(out, max, ret, &a);
		if (r < 0)
			return r;
	}
	if (off != len)
		return -EBADMSG;
	ret->len = len;
	ret->rr_off = m.answer_off;
	ret->counts[0] = m.ancount;
	ret->counts[1] = m.nscount;
	ret->counts[2] = m.arcount;
	return 0;
}

/*
 * Every RR TTL but OPT's (its "TTL" is EDNS flags): min(TTL - @age_s, @max_s),
 * never below 0, in place.  The one walk behind wire_cap_ttls() and
 * wire_age_ttls().
 */
/* A walk over the RRs after the question that carry a TTL (ttl_next()). */
struct ttl_walk {
	const struct msg *m;
	size_t off;		/* the next RR */
	unsigned int i;		/* RRs walked, answers first: rr is number i - 1 */
	struct rr rr;		/* the current RR */
	uint32_t ttl;		/* its TTL, made sane */
};

/*
 * ttl_next() - the next RR of @w->m after the question that carries a TTL
 * (OPT's "TTL" is EDNS flags: skipped).  Start with @w = { .m = &m,
 * .off = m.answer_off }.  Return: 1 (@w->rr, @w->ttl); 0 when none is
 * left and nothing follows the last RR; -EBADMSG.
 */
static int ttl_next(const uint8_t *buf, size_t len, struct ttl_walk *w)
{
	while (w->i < (unsigned int)w->m->ancount + w->m->nscount + w->m->arcount) {
		w->i++;
		if (rr_next(buf, len, &w->off, &w->rr) < 0)
			return -EBADMSG;
		if (w->rr.type != WIRE_TYPE_OPT) {
			w->ttl = ttl_sane(w->rr.ttl);
			return 1;
		}
	}
	return w->off == len ? 0 : -EBADMSG;
}

/* ttls_lower() - that rewrite, of a message @m that msg_check() passed. */
static int ttls_lower(uint8_t *buf, size_t len, const struct msg *m, uint32_t age_s,
		      uint32_t max_s)
{
	struct ttl_walk w = { 0 };
	int r;

	w.m = m;
	w.off = m->answer_off;
	while ((r = ttl_next(buf, len, &w)) > 0) {
		uint32_t ttl = w.ttl > age_s ? w.ttl - age_s : 0;

		if (ttl > max_s)
			ttl = max_s;
		if (ttl != w.rr.ttl)
			put32(buf + w.rr.ttl_off, ttl);
	}
	return r;
}

static int ttls_rewrite(uint8_t *buf, size_t len, uint32_t age_s, uint32_t max_s)
{
	struct msg m;

	/* Refuse messages where a TTL is part of a name: rewriting it would
	 * change the name, and a second rewrite would see another message. */
	if (msg_check(buf, len, &m) < 0)
		return -EBADMSG;
	return ttls_lower(buf, len, &m, age_s, max_s);
}

int wire_cap_ttls(uint8_t *buf, size_t len, uint32_t max_ttl_s)
{
	return ttls_rewrite(buf, len, 0, max_ttl_s);
}

int wire_cap_ttls_walked(uint8_t *buf, size_t len, uint32_t max_ttl_s,
			 const struct wire_answer *wa)
{
	struct msg m;

	if (msg_open(buf, len, &m) < 0 || len != wa->len || m.answer_off != wa->rr_off ||
	    m.ancount != wa->counts[0] || m.nscount != wa->counts[1] ||
	    m.arcount != wa->counts[2])
		return wire_cap_ttls(buf, len, max_ttl_s);
	return ttls_lower(buf, len, &m, 0, max_ttl_s);
}

int wire_cache_ttl(const uint8_t *buf, size_t len, uint32_t max_neg_s, uint32_t *ttl_s)
{
	uint32_t min_ttl = UINT32_MAX, soa_ttl = 0;
	bool have_soa = false, negative;
	struct ttl_walk w = { 0 };
	uint8_t rcode;
	struct msg m;
	int r;

	if (msg_open(buf, len, &m) < 0)
		return -EBADMSG;
	if (!(m.flags & 0x8000) || (m.flags & 0x0200))	/* not a response, or TC=1 */
		return -ENOENT;
	rcode = m.flags & 0x000f;
	if (rcode != WIRE_RCODE_NOERROR && rcode != WIRE_RCODE_NXDOMAIN)
		return -ENOENT;
	negative = rcode == WIRE_RCODE_NXDOMAIN || m.ancount == 0;
	w.m = &m;
	w.off = m.answer_off;
	while ((r = ttl_next(buf, len, &w)) > 0) {
		const struct rr *rr = &w.rr;

		if (w.ttl < min_ttl)
			min_ttl = w.ttl;
		/* RFC 2308 5: a negative answer lives min(SOA TTL, SOA MINIMUM);
		 * MINIMUM is the last 32 bits of the SOA RDATA (RFC 1035 3.3.13).
		 * Only in the authority section (RR number w.i - 1). */
		if (rr->type == WIRE_TYPE_SOA && w.i - 1 >= m.ancount &&
		    w.i - 1 < (unsigned int)m.ancount + m.nscount && rr->rdlen >= 22 && !have_soa) {
			uint32_t minimum = ttl_sane(get32(buf + rr->rdata_off + rr->rdlen - 4));

			soa_ttl = w.ttl < minimum ? w.ttl : minimum;
			have_soa = true;
		}
	}
	if (r < 0)
		return -EBADMSG;
	if (negative) {
		if (!have_soa)
			return -ENOENT;	/* RFC 2308 5: no SOA, no negative caching */
		if (soa_ttl < min_ttl)
			min_ttl = soa_ttl;
		if (min_ttl > max_neg_s)
			min_ttl = max_neg_s;
	}
	*ttl_s = min_ttl == UINT32_MAX ? 0 : min_ttl;
	return 0;
}

int wire_age_ttls(uint8_t *buf, size_t len, uint32_t age_s)
{
	return ttls_rewrite(buf, len, age_s, UINT32_MAX);
}

int wire_question_end(const uint8_t *buf, size_t len)
{
	struct msg m;

	if (msg_open(buf, len, &m) < 0)
		return -EBADMSG;
	return (int)m.answer_off;
}
