/*
 * wire_ech - an answer without its ECH configurations (issue 25): the ech
 * SvcParam (RFC 9460 14.3.2, RFC 9848) cut out of every ServiceMode
 * SVCB/HTTPS RR of a DNS message, so a client that would hide the name it
 * connects to sends it in plain SNI instead, where netd checks it.  Pure:
 * caller's buffers, no allocation, no logging.
 *
 * How: the message is walked three times over the input, never edited in
 * place.  (1) Which RRsets carry an ech.  (2) The byte ranges to cut, in
 * message order: the ech SvcParam of an RR that stays, the whole RR where
 * its mandatory key lists ech, the RRSIGs over an RRset that changed.
 * (3) Every name of what stays, followed through its pointers: a pointer
 * is moved with its target; a name that reads a byte the cut removes is
 * refused, and so is one that reads as text an octet the rewrite patches.
 * Then the kept bytes are copied and the RDLENGTHs, counts and pointers
 * patched.  Names are never decompressed or re-encoded, so what
 * the cut does not touch is byte for byte the upstream's.
 *
 * Not here: whether an answer is stripped (decide_ech_strip()), or the
 * checks the rest of the message gets (wire_walk_answer() runs on the
 * result).
 */
#include "dnsproxy/wire.h"

#include <errno.h>
#include <string.h>

#define RR_FIXED_LEN  10	/* type, class, TTL, RDLENGTH (RFC 1035 4.1.3) */
#define TYPE_RRSIG    46	/* RFC 4034 3 */
#define HDR_AD        0x20	/* in octet 3 (RFC 4035 3.2.3) */
#define SVC_MANDATORY 0		/* RFC 9460 8 */
#define SETS_MAX      16	/* changed RRsets remembered; more: every SVCB/HTTPS RRSIG goes */

/* A range [off, end) of the input removed; @before: bytes removed ahead of
 * it.  @rdlen_at: where the RDLENGTH of the RR it shrinks is (0: it removes
 * whole RRs). */
struct cut {
	uint16_t off, end, before, rdlen_at;
};

/* An RRset that changed: its owner (lower-cased wire form) and type. */
struct set {
	uint8_t owner[WIRE_NAME_MAX];
	size_t len;
	uint16_t type;
};

struct ech {
	const uint8_t *b;
	size_t len;
	struct cut cuts[WIRE_ECH_MAX_CUTS];
	size_t n_cuts;
	size_t removed;		/* bytes in all the cuts */
	struct set sets[SETS_MAX];
	size_t n_sets;
	bool sets_full;		/* more RRsets changed than SETS_MAX */
	uint16_t counts[4];	/* QD, AN, NS, AR as they will be */
	struct wire_ech_result *res;
	uint8_t ptrs[WIRE_MSG_MAX / 8 + 1];	/* pointers to move, by position */
	uint8_t labels[WIRE_MSG_MAX / 8 + 1];	/* octets a kept name reads as a label */
	uint8_t inplace[WIRE_MSG_MAX / 8 + 1];	/* octets of kept names where they start,
						 * up to their first pointer (included) */
};

/* One RR of the input. */
struct rec {
	size_t owner, rdata, end;	/* offsets: owner name, RDATA, just past it */
	uint16_t type, rdlen;
	unsigned int section;	/* 1 answer, 2 authority, 3 additional */
};

static bool bit(const uint8_t *map, size_t i)
{
	return map[i / 8] & (1u << (i % 8));
}

static void bit_set(uint8_t *map, size_t i)
{
	map[i / 8] |= (uint8_t)(1u << (i % 8));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- the cut ---------------------------------------------------------- */

/* The last cut starting at or before @off, or NULL. */
static const struct cut *cut_at(const struct ech *e, size_t off)
{
	size_t lo = 0, hi = e->n_cuts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->cuts[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &e->cuts[lo - 1] : NULL;
}

/* Does [@off, @off + @n) keep every byte (no cut inside it)? */
static bool kept(const struct ech *e, size_t off, size_t n)
{
	const struct cut *c = cut_at(e, off + n - 1);

	return !c || c->end <= off;
}

/* Where kept byte @off of the input is in the output. */
static size_t moved(const struct ech *e, size_t off)
{
	const struct cut *c = cut_at(e, off);

	return c ? off - c->before - (size_t)(c->end - c->off) : off;
}

/* Is @rr dropped whole? */
static bool dropped(const struct ech *e, const struct rec *rr)
{
	const struct cut *c = cut_at(e, rr->owner);

	return c && c->end >= rr->end;
}

/*
 * cut_add() - remove [@off, @end) (after every earlier cut: the walk goes
 * in message order); joins a cut it touches.  Return: 0; -E2BIG.
 */
static int cut_add(struct ech *e, size_t off, size_t end, size_t rdlen_at)
{
	struct cut *last = e->n_cuts ? &e->cuts[e->n_cuts - 1] : NULL;

	if (last && last->end == off && !rdlen_at && !last->rdlen_at) {
		last->end = (uint16_t)end;
	} else {
		if (e->n_cuts == WIRE_ECH_MAX_CUTS)
			return -E2BIG;
		e->cuts[e->n_cuts++] = (struct cut){
			.off = (uint16_t)off, .end = (uint16_t)end, .before = (uint16_t)e->removed,
			.rdlen_at = (uint16_t)rdlen_at,
		};
	}
	e->removed += end - off;
	return 0;
}

/* ---- names and RRs ------------------------------------------------------ */

/*
 * name_walk() - the name at *@off, to its end (RFC 1035 4.1.4): *@off is
 * left just past its bytes in place; no byte at or past @end is read.
 * Each pointer must point before the piece it ends (so the walk ends),
 * at most WIRE_NAME_MAX / 2 pointers are followed (as wire.c's reader),
 * the name is at most 255 octets and 0x40/0x80 label types are refused.
 * @lc (WIRE_NAME_MAX bytes, may be NULL): the name lower-cased, its length
 * in *@lc_len.  @mark: every byte read must stay after the cut, and each
 * pointer read is noted in e->ptrs, to be moved with its target.
 * Return: 0; -EBADMSG.
 */
static int name_walk(struct ech *e, size_t *off, size_t end, uint8_t *lc, size_t *lc_len,
		     bool mark)
{
	size_t pos = *off, seg = *off, total = 0;
	unsigned int jumps = 0;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (pos >= end)
			return -EBADMSG;
		l = e->b[pos];
		if ((l & 0xc0) == 0xc0) {
			size_t target;

			if (end - pos < 2 || (mark && !kept(e, pos, 2)))
				return -EBADMSG;
			target = (size_t)(l & 0x3f) << 8 | e->b[pos + 1];
			if (target >= seg)	/* only backwards: the walk ends */
				return -EBADMSG;
			/* As wire.c's reader: a real name needs no more pointers
			 * than it has labels; caps a hostile chain's cost. */
			if (++jumps > WIRE_NAME_MAX / 2)
				return -EBADMSG;
			if (mark) {
				bit_set(e->ptrs, pos);
				if (!jumped) {
					bit_set(e->inplace, pos);
					bit_set(e->inplace, pos + 1);
				}
			}
			if (!jumped)
				*off = pos + 2;
			jumped = true;
			seg = pos = target;
			continue;
		}
		if (l & 0xc0)
			return -EBADMSG;
		if (end - pos < 1u + l || total + 1u + l > WIRE_NAME_MAX ||
		    (mark && !kept(e, pos, 1u + l)))
			return -EBADMSG;
		for (size_t i = 0; lc && i <= l; i++) {
			uint8_t c = e->b[pos + i];

			lc[total + i] = i && c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
		}
		for (size_t i = 0; mark && i <= l; i++) {
			bit_set(e->labels, pos + i);
			if (!jumped)
				bit_set(e->inplace, pos + i);
		}
		total += 1u + l;
		pos += 1u + l;
		if (l == 0)
			break;
	}
	if (!jumped)
		*off = pos;
	if (lc_len)
		*lc_len = total;
	return 0;
}

/* rec_next() - the RR at *@off into @r, *@off past it.  Return: 0; -EBADMSG. */
static int rec_next(struct ech *e, size_t *off, struct rec *r)
{
	size_t pos = *off;

	r->owner = pos;
	if (name_walk(e, &pos, e->len, NULL, NULL, false) < 0 || e->len - pos < RR_FIXED_LEN)
		return -EBADMSG;
	r->type = get16(e->b + pos);
	r->rdlen = get16(e->b + pos + 8);
	r->rdata = pos + RR_FIXED_LEN;
	if (e->len - r->rdata < r->rdlen)
		return -EBADMSG;
	r->end = r->rdata + r->rdlen;
	*off = r->end;
	return 0;
}

/*
 * rr_walk() - call @fn on each RR after the question, in order, with its
 * section; the question's names are walked (and marked if @mark_q).  The
 * message must end with its last RR.  Return: 0; -EBADMSG; @fn's error.
 */
static int rr_walk(struct ech *e, bool mark_q, int (*fn)(struct ech *, const struct rec *))
{
	size_t off = WIRE_HDR_LEN;
	unsigned int n[4];
	int r;

	for (int s = 0; s < 4; s++)
		n[s] = get16(e->b + 4 + 2 * s);
	for (unsigned int i = 0; i < n[0]; i++) {
		if (name_walk(e, &off, e->len, NULL, NULL, mark_q) < 0 || e->len - off < 4)
			return -EBADMSG;
		off += 4;
	}
	for (unsigned int s = 1; s < 4; s++)
		for (unsigned int i = 0; i < n[s]; i++) {
			struct rec rr;

			if (rec_next(e, &off, &rr) < 0)
				return -EBADMSG;
			rr.section = s;
			if ((r = fn(e, &rr)) < 0)
				return r;
		}
	return off == e->len ? 0 : -EBADMSG;
}

/* ---- SVCB/HTTPS ------------------------------------------------------------ */

/* Where @rr's ech SvcParam is ([*@p, *@p + *@n) of the input) and whether
 * its mandatory lists it.  Return: 1 found; 0 none (AliasMode included);
 * -EBADMSG (wire_svcb_check() refuses the RDATA). */
static int svc_ech(const struct ech *e, const struct rec *rr, size_t *p, size_t *n,
		   bool *mandatory)
{
	const uint8_t *rd = e->b + rr->rdata;
	int params = wire_svcb_check(rd, rr->rdlen);
	bool found = false;

	if (params < 0)
		return -EBADMSG;
	*mandatory = false;
	if (get16(rd) == 0)	/* AliasMode: SvcParams ignored (RFC 9460 2.4.2) */
		return 0;
	for (size_t pos = (size_t)params; pos < rr->rdlen; pos += 4u + get16(rd + pos + 2)) {
		uint16_t key = get16(rd + pos), vlen = get16(rd + pos + 2);

		if (key == WIRE_SVC_ECH) {
			*p = rr->rdata + pos;
			*n = 4u + vlen;
			found = true;
		}
		/* Checked: the keys it lists are present and increasing. */
		for (size_t i = 0; key == SVC_MANDATORY && i < vlen; i += 2)
			if (get16(rd + pos + 4 + i) == WIRE_SVC_ECH)
				*mandatory = true;
	}
	return found;
}

static bool is_svc(uint16_t type)
{
	return type == WIRE_TYPE_SVCB || type == WIRE_TYPE_HTTPS;
}

/* Is (@owner, @type) an RRset that changed? */
static bool set_has(const struct ech *e, const uint8_t *owner, size_t len, uint16_t type)
{
	if (e->sets_full)
		return true;
	for (size_t i = 0; i < e->n_sets; i++)
		if (e->sets[i].type == type && e->sets[i].len == len &&
		    memcmp(e->sets[i].owner, owner, len) == 0)
			return true;
	return false;
}

/* Pass 1: note each RRset (owner, type) with an ech to cut. */
static int find_sets(struct ech *e, const struct rec *rr)
{
	uint8_t owner[WIRE_NAME_MAX];
	size_t p, n, len, off = rr->owner;
	bool mandatory;
	int r;

	if (!is_svc(rr->type))
		return 0;
	r = svc_ech(e, rr, &p, &n, &mandatory);
	if (r <= 0)
		return r;
	if (name_walk(e, &off, e->len, owner, &len, false) < 0)
		return -EBADMSG;
	if (set_has(e, owner, len, rr->type))
		return 0;
	if (e->n_sets == SETS_MAX) {
		e->sets_full = true;
		return 0;
	}
	memcpy(e->sets[e->n_sets].owner, owner, len);
	e->sets[e->n_sets].len = len;
	e->sets[e->n_sets++].type = rr->type;
	return 0;
}

/* Pass 2: the cuts, in message order (see the top of the file). */
static int find_cuts(struct ech *e, const struct rec *rr)
{
	uint8_t owner[WIRE_NAME_MAX];
	size_t p, n, len, off = rr->owner;
	bool mandatory;
	int r;

	if (is_svc(rr->type)) {
		r = svc_ech(e, rr, &p, &n, &mandatory);
		if (r <= 0)
			return r;
		if (!mandatory) {	/* the RR works without it: only the ech goes */
			e->res->params++;
			return cut_add(e, p, p + n, rr->rdata - 2);
		}
		/* RFC 9460 8: not "compatible" without a mandatory key. */
		e->res->rrs++;
		e->counts[rr->section]--;
		return cut_add(e, rr->owner, rr->end, 0);
	}
	/* RFC 4034 3.1.1: Type Covered, the first two octets. */
	if (rr->type != TYPE_RRSIG || rr->rdlen < 2 || !is_svc(get16(e->b + rr->rdata)))
		return 0;
	if (name_walk(e, &off, e->len, owner, &len, false) < 0)
		return -EBADMSG;
	if (!set_has(e, owner, len, get16(e->b + rr->rdata)))
		return 0;
	e->res->sigs++;
	e->counts[rr->section]--;
	return cut_add(e, rr->owner, rr->end, 0);
}

/* Pass 3: every name of an RR that stays, its pointers noted (name_walk()). */
static int mark_names(struct ech *e, const struct rec *rr)
{
	size_t off = rr->owner, first;
	unsigned int n;

	if (dropped(e, rr))
		return 0;
	if (name_walk(e, &off, e->len, NULL, NULL, true) < 0 ||
	    wire_rdata_names(rr->type, e->b + rr->rdata, rr->rdlen, &first, &n) < 0)
		return -EBADMSG;
	off = rr->rdata + first;
	for (unsigned int i = 0; i < n; i++)
		if (name_walk(e, &off, rr->end, NULL, NULL, true) < 0)
			return -EBADMSG;
	return 0;
}

/*
 * What the rewrite patches must change nothing else: no kept name may read
 * as a label an octet it patches (the header's counts and AD, an RDLENGTH
 * it lowers, a pointer it moves), and a pointer it moves must be part of
 * a name where that name is written, not octets of opaque RDATA that a
 * name happens to read through (a TXT's bytes would change).  No encoder
 * writes such messages (RFC 1035 4.1.4: a pointer refers to a prior name);
 * wire.c refuses most of them too (msg_check()).  Return: 0; -EBADMSG.
 */
static int check_patches(const struct ech *e)
{
	for (size_t i = 0; i < WIRE_HDR_LEN; i++)
		if (bit(e->labels, i))
			return -EBADMSG;
	for (size_t i = 0; i < e->n_cuts; i++)
		if (e->cuts[i].rdlen_at &&
		    (bit(e->labels, e->cuts[i].rdlen_at) || bit(e->labels, e->cuts[i].rdlen_at + 1u)))
			return -EBADMSG;
	for (size_t pos = 0; pos + 1 < e->len; pos++) {
		size_t target;

		if (!e->ptrs[pos / 8]) {
			pos |= 7;
			continue;
		}
		if (!bit(e->ptrs, pos))
			continue;
		target = (size_t)(e->b[pos] & 0x3f) << 8 | e->b[pos + 1];
		if (moved(e, target) != target &&
		    (bit(e->labels, pos) || bit(e->labels, pos + 1) || !bit(e->inplace, pos) ||
		     !bit(e->inplace, pos + 1)))
			return -EBADMSG;
	}
	return 0;
}

/* The output: the kept bytes, then the counts, RDLENGTHs and pointers patched. */
static void emit(const struct ech *e, uint8_t *out)
{
	size_t from = 0, o = 0;

	for (size_t i = 0; i < e->n_cuts; i++) {
		memcpy(out + o, e->b + from, e->cuts[i].off - from);
		o += e->cuts[i].off - from;
		from = e->cuts[i].end;
	}
	memcpy(out + o, e->b + from, e->len - from);
	for (int s = 1; s < 4; s++)	/* the header is never cut */
		put16(out + 4 + 2 * s, e->counts[s]);
	out[3] &= (uint8_t)~HDR_AD;	/* what was validated is no longer what is sent */
	for (size_t i = 0; i < e->n_cuts; i++) {
		const struct cut *c = &e->cuts[i];

		if (c->rdlen_at)
			put16(out + moved(e, c->rdlen_at),
			      (uint16_t)(get16(e->b + c->rdlen_at) - (c->end - c->off)));
	}
	for (size_t pos = 0; pos < e->len; pos++) {
		size_t target;

		if (!e->ptrs[pos / 8]) {
			pos |= 7;	/* none in this octet of the map */
			continue;
		}
		if (!bit(e->ptrs, pos))
			continue;
		target = moved(e, (size_t)(e->b[pos] & 0x3f) << 8 | e->b[pos + 1]);
		put16(out + moved(e, pos), (uint16_t)(0xc000 | target));
	}
}

int wire_ech_strip(const uint8_t *in, size_t len, uint8_t *out, size_t outmax,
		   struct wire_ech_result *res)
{
	struct ech e;
	int r;

	memset(res, 0, sizeof(*res));
	if (len < WIRE_HDR_LEN || len > WIRE_MSG_MAX)
		return -EBADMSG;
	/* Only what the walks read before they write it: most answers carry
	 * no ech, and clearing ~40 KiB for them would cost more than the walk. */
	e.b = in;
	e.len = len;
	e.res = res;
	e.n_cuts = e.removed = e.n_sets = 0;
	e.sets_full = false;
	for (int s = 0; s < 4; s++)
		e.counts[s] = get16(in + 4 + 2 * s);
	r = rr_walk(&e, false, find_sets);
	if (r == 0 && !e.n_sets && !e.sets_full)
		return 0;	/* no ech anywhere */
	if (r == 0)
		r = rr_walk(&e, false, find_cuts);
	if (r == 0) {
		memset(e.ptrs, 0, len / 8 + 1);
		memset(e.labels, 0, len / 8 + 1);
		memset(e.inplace, 0, len / 8 + 1);
		r = rr_walk(&e, true, mark_names);
	}
	if (r == 0)
		r = check_patches(&e);
	if (r == 0 && outmax < len - e.removed)
		r = -ENOBUFS;
	if (r < 0) {
		memset(res, 0, sizeof(*res));
		return r;
	}
	emit(&e, out);
	return (int)(len - e.removed);
}
