/*
 * qflow - the QUIC side of the SNI check's flow table.  See qflow.h.  A
 * chained hash over the UDP 4-tuple; settled flows also sit on a list,
 * oldest first, from which the table takes room when it is full.  An
 * undecided flow owns a struct quic_hello (18 KiB); an accepted one only
 * the ClientHello bytes it read.
 */
#include "netd/sni/qflow.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "netd/sni/flow.h"
#include "netd/sni/ftab.h"
#include "netd/sni/quic.h"

#define QFLOW_BUCKETS 1024u

enum qstate { Q_OPEN, Q_ACCEPTED, Q_REJECTED };

struct qf {
	struct fentry e;	/* the tuple, owner, start (the first datagram, or when settled) */
	enum qstate state;
	unsigned int n_dgrams;
	uint8_t tag[2];
	bool tagged;
	struct quic_conn conn;
	struct quic_hello *qh;			/* Q_OPEN */
	uint8_t *seen;				/* Q_ACCEPTED: the bytes read */
	size_t seen_len;
	struct qflow_tab *t;
};

struct qflow_tab {
	struct ftab ft;
	uint64_t now_ms;	/* of the datagram being read (on_reset()) */
};

int qflow_pkt_parse(const uint8_t *ip, size_t len, struct qflow_pkt *out)
{
	struct sniflow_ip l3;
	const uint8_t *uh;
	size_t ul;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = sniflow_ip_parse(ip, len, &l3)) < 0)
		return r;
	if (l3.proto != IPPROTO_UDP)
		return -EPROTO;
	uh = ip + l3.l4_off;
	if (l3.l4_len < 8)
		return -EBADMSG;
	ul = (size_t)uh[4] << 8 | uh[5];	/* RFC 768: header and data */
	if (ul < 8 || ul > l3.l4_len)
		return -EBADMSG;
	out->src = l3.src;
	out->dst = l3.dst;
	out->sport = (uint16_t)(uh[0] << 8 | uh[1]);
	out->dport = (uint16_t)(uh[2] << 8 | uh[3]);
	out->payload = uh + 8;
	out->len = ul - 8;
	return 0;
}

static struct qf *qf_of(struct fentry *e)
{
	return e ? ftab_entry(e, struct qf, e) : NULL;
}

/* @p's flow key: its addresses and ports as sent. */
static struct ftuple key_of(const struct qflow_pkt *p)
{
	return (struct ftuple){ p->src, p->dst, p->sport, p->dport };
}

static struct fentry **find(struct qflow_tab *t, const struct qflow_pkt *p)
{
	const struct ftuple k = key_of(p);

	return ftab_find(&t->ft, &k);
}

/*
 * Move @f to @s: an open flow counts against its owner's share and owns a
 * reassembly buffer (allocated by the caller); a settled one sits on the
 * list (ftab_set_open()).  Opening frees what an accepted flow kept.
 */
static void set_state(struct qflow_tab *t, struct qf *f, enum qstate s)
{
	bool was_open = f->state == Q_OPEN;

	f->state = s;
	ftab_set_open(&t->ft, &f->e, s == Q_OPEN);
	if (was_open && s != Q_OPEN) {
		free(f->qh);
		f->qh = NULL;
	} else if (!was_open && s == Q_OPEN) {
		free(f->seen);
		f->seen = NULL;
		f->seen_len = 0;
	}
}

/* The table's free_entry. */
static void qf_free(struct fentry *e)
{
	struct qf *f = qf_of(e);

	free(f->qh);
	free(f->seen);
	free(f);
}

int qflow_new(uint32_t n_owners, struct qflow_tab **ret)
{
	struct qflow_tab *t = calloc(1, sizeof(*t));

	*ret = NULL;
	if (!t)
		return -ENOMEM;
	if (ftab_init(&t->ft, QFLOW_BUCKETS, QFLOW_MAX, QFLOW_OPEN_PER_OWNER, n_owners,
		      qf_free) < 0) {
		free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

void qflow_free(struct qflow_tab *t)
{
	if (!t)
		return;
	ftab_fini(&t->ft);
	free(t);
}

/* ---- reading a datagram into a flow ------------------------------------------ */

/* Open @f (again) for @owner at @now_ms with an empty ClientHello.  Return: false (no memory). */
static bool flow_open(struct qflow_tab *t, struct qf *f, uint32_t owner, uint64_t now_ms)
{
	struct quic_hello *qh = malloc(sizeof(*qh));

	if (!qh)
		return false;
	quic_hello_init(qh);
	if (f->state == Q_OPEN) {
		/* A new connection while the last one was read: the flow's
		 * deadline and datagram count go on (no way to stay undecided). */
		free(f->qh);
		f->qh = qh;
		return true;
	}
	f->e.owner = owner;
	set_state(t, f, Q_OPEN);
	f->qh = qh;
	f->e.start_ms = now_ms;
	f->n_dgrams = 0;
	return true;
}

/* CRYPTO data: reassembled while open; compared with what was read once accepted. */
static int on_crypto(void *ctx, uint64_t off, const uint8_t *d, size_t n)
{
	struct qf *f = ctx;
	int r;

	if (f->qh) {
		r = quic_hello_add(f->qh, off, d, n);
		return r == -EBADMSG ? -EILSEQ : r;
	}
	if (off >= f->seen_len)
		return 0;	/* past what decided: not looked at (as TCP) */
	if (n > f->seen_len - off)
		n = f->seen_len - (size_t)off;
	return memcmp(f->seen + off, d, n) ? -EILSEQ : 0;
}

/* A new connection on the flow's addresses and ports (or its first keys): read afresh. */
static void on_reset(void *ctx)
{
	struct qf *f = ctx;

	if (f->state == Q_REJECTED)
		return;
	/* No memory: the flow stays as it was; its new CRYPTO data is compared
	 * with what was read, and fails. */
	flow_open(f->t, f, f->e.owner, f->t->now_ms);
}

static void res_garbage(struct sni_result *res, enum sni_status s)
{
	*res = (struct sni_result){ .status = s, .proto = SNI_PROTO_QUIC };
}

/* What an open flow's datagram (read into f->qh) comes to. */
static enum qflow_step open_step(struct qf *f, const struct quic_dgram *dg, struct sni_result *res)
{
	if (!f->qh) {
		res_garbage(res, SNI_GARBAGE);	/* reopened without memory */
		return QFLOW_DECIDED;
	}
	if (quic_hello_parse(f->qh, res) != SNI_MORE)
		return QFLOW_DECIDED;	/* the whole datagram follows the verdict */
	if (dg->n_other || !dg->n_initial)
		return QFLOW_DROP;	/* 0-RTT, Handshake, 1-RTT before the name decided */
	return QFLOW_PASS;
}

static enum qflow_step read_dgram(struct qflow_tab *t, struct qf *f, const struct qflow_pkt *p,
				  uint64_t now_ms, uint32_t deadline_ms, struct sni_result *res)
{
	const struct quic_reader r = { on_crypto, on_reset, f };
	bool was_open = f->state == Q_OPEN;
	struct quic_dgram dg;

	if (was_open) {
		if (++f->n_dgrams > QFLOW_DGRAMS_MAX) {
			quic_hello_parse(f->qh, res);
			return QFLOW_TOO_MANY;
		}
		if (now_ms >= f->e.start_ms + deadline_ms) {
			quic_hello_parse(f->qh, res);
			return QFLOW_LATE;
		}
	}
	t->now_ms = now_ms;
	switch (quic_dgram_read(&f->conn, p->payload, p->len, &r, &dg)) {
	case QUIC_READ_SMALL:
		/* Its Initials were not read (the server discards them too): an
		 * accepted connection's other packets in it pass (ngtcp2 sends
		 * an Initial ACK with its Handshake Finished unpadded). */
		return f->state == Q_ACCEPTED ? QFLOW_ACCEPTED : QFLOW_DROP;
	case QUIC_READ_VERSION:
		res_garbage(res, SNI_GARBAGE);
		return QFLOW_VERSION;
	case QUIC_READ_GARBAGE:
		if (f->state == Q_ACCEPTED)
			return QFLOW_DROP;	/* not this connection's: no key opens it */
		res_garbage(res, SNI_GARBAGE);
		return QFLOW_DECIDED;
	case QUIC_READ_STOP:
		if (dg.cb_err == -EMSGSIZE) {
			res_garbage(res, SNI_TOO_LONG);
			return QFLOW_DECIDED;
		}
		if (f->qh)
			quic_hello_parse(f->qh, res);
		else
			res_garbage(res, SNI_NAME);	/* what was accepted, rewritten */
		return QFLOW_REWRITTEN;
	case QUIC_READ_OK:
		break;
	}
	if (f->state == Q_ACCEPTED)
		return QFLOW_ACCEPTED;	/* the same connection, the same bytes */
	return open_step(f, &dg, res);
}

/* A new flow for @p in @owner's share, open.  NULL: no room. */
static struct qf *flow_add(struct qflow_tab *t, const struct qflow_pkt *p, uint32_t owner,
			   uint64_t now_ms)
{
	struct qf *f;

	if (ftab_share_full(&t->ft, owner) || !ftab_make_room(&t->ft))
		return NULL;
	if (!(f = calloc(1, sizeof(*f))))
		return NULL;
	f->e.key = key_of(p);
	f->e.owner = owner;
	f->t = t;
	f->state = Q_REJECTED;	/* settled, off every share, until opened */
	ftab_link(&t->ft, find(t, p), &f->e);
	if (!flow_open(t, f, owner, now_ms)) {
		ftab_unlink(&t->ft, find(t, p));
		return NULL;
	}
	return f;
}

enum qflow_step qflow_packet(struct qflow_tab *t, const struct qflow_pkt *p, uint32_t owner,
			     uint64_t now_ms, uint32_t deadline_ms, struct sni_result *res)
{
	struct qf *f = qf_of(*find(t, p));

	*res = (struct sni_result){ .status = SNI_MORE, .proto = SNI_PROTO_QUIC };
	if (!f && !(f = flow_add(t, p, owner, now_ms)))
		return QFLOW_FULL;
	if (f->state == Q_REJECTED)
		return QFLOW_REJECTED;
	return read_dgram(t, f, p, now_ms, deadline_ms, res);
}

void qflow_settle(struct qflow_tab *t, const struct qflow_pkt *p, bool accepted, uint64_t now_ms)
{
	struct qf *f = qf_of(*find(t, p));

	if (!f)
		return;	/* no room was found for it: its next datagram is checked again */
	f->e.start_ms = now_ms;
	if (f->state == Q_REJECTED)
		return;	/* never turned into an accepted one */
	if (accepted && f->state == Q_OPEN) {
		size_t n = f->qh->prefix;

		/* What decided: the contiguous ClientHello (and what followed it). */
		f->seen = n ? malloc(n) : NULL;
		if (f->seen) {
			memcpy(f->seen, f->qh->buf, n);
			f->seen_len = n;
		}
	}
	if (f->state == Q_OPEN || !accepted)
		set_state(t, f, accepted ? Q_ACCEPTED : Q_REJECTED);
}

void qflow_tag(struct qflow_tab *t, const struct qflow_pkt *p, uint8_t a, uint8_t b)
{
	struct qf *f = qf_of(*find(t, p));

	if (f) {
		f->tag[0] = a;
		f->tag[1] = b;
		f->tagged = true;
	}
}

bool qflow_tagged(struct qflow_tab *t, const struct qflow_pkt *p, uint8_t *a, uint8_t *b,
		  uint64_t *start_ms)
{
	const struct qf *f = qf_of(*find(t, p));

	if (!f || !f->tagged)
		return false;
	*a = f->tag[0];
	*b = f->tag[1];
	*start_ms = f->e.start_ms;
	return true;
}

/* How long the sweep keeps a flow; @ctx: the deadline of an undecided one (uint32_t ms). */
static uint64_t keep_ms(const struct fentry *e, const void *ctx)
{
	const struct qf *f = ftab_entry(e, const struct qf, e);

	return f->state == Q_OPEN ? *(const uint32_t *)ctx : QFLOW_KEEP_MS;
}

size_t qflow_sweep(struct qflow_tab *t, uint64_t now_ms, uint32_t deadline_ms)
{
	return ftab_sweep(&t->ft, now_ms, keep_ms, &deadline_ms);
}

size_t qflow_count(const struct qflow_tab *t)
{
	return t ? t->ft.n : 0;
}

size_t qflow_open_count(const struct qflow_tab *t, uint32_t owner)
{
	return t ? ftab_open_count(&t->ft, owner) : 0;
}
