/*
 * sniflow - the SNI check's per-connection table.  See flow.h.  A chained
 * hash over the 4-tuple; the 16 KiB stream buffer exists only while a flow
 * is undecided.
 */
#include "netd/sni/flow.h"

#include <errno.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define SNIFLOW_BUCKETS 4096u

enum fstate { F_OPEN, F_ACCEPTED, F_REJECTED };

struct flow {
	struct flow *next;
	struct addr src, dst;
	uint16_t sport, dport;
	enum fstate state;
	uint32_t isn, next_seq;
	uint64_t start_ms;	/* the SYN, or when it was settled */
	unsigned int n_pkts;
	uint8_t tag[2];
	bool tagged;
	struct sni_stream *st;	/* F_OPEN only */
};

struct sniflow_tab {
	struct flow *b[SNIFLOW_BUCKETS];
	size_t n;
};

/* Not keyed: a sandbox choosing its ports can lengthen one chain, but never
 * beyond SNIFLOW_MAX entries in all. */
static uint32_t bucket(const struct sniflow_pkt *p)
{
	uint32_t h = FNV32_INIT;

	h = fnv32_add(h, p->src.a, addr_len(p->src.family));
	h = fnv32_add(h, p->dst.a, addr_len(p->dst.family));
	h = fnv32_add(h, &p->sport, sizeof(p->sport));
	h = fnv32_add(h, &p->dport, sizeof(p->dport));
	return h & (SNIFLOW_BUCKETS - 1);
}

static struct flow **find(struct sniflow_tab *t, const struct sniflow_pkt *p)
{
	struct flow **pp = &t->b[bucket(p)];

	for (; *pp; pp = &(*pp)->next) {
		const struct flow *f = *pp;

		if (f->sport == p->sport && f->dport == p->dport && addr_equal(&f->src, &p->src) &&
		    addr_equal(&f->dst, &p->dst))
			break;
	}
	return pp;
}

static void flow_unlink(struct sniflow_tab *t, struct flow **pp)
{
	struct flow *f = *pp;

	*pp = f->next;
	free(f->st);
	free(f);
	t->n--;
}

int sniflow_pkt_parse(const uint8_t *ip, size_t len, struct sniflow_pkt *out)
{
	size_t hl, tot;
	const uint8_t *th;

	memset(out, 0, sizeof(*out));
	if (len < 1)
		return -EBADMSG;
	if (ip[0] >> 4 == 4) {
		if (len < 20 || (hl = (size_t)(ip[0] & 0xf) * 4) < 20 || hl > len)
			return -EBADMSG;
		tot = (size_t)ip[2] << 8 | ip[3];
		if (tot < hl || tot > len)
			return -EBADMSG;
		if (ip[9] != 6 || (ip[6] & 0x3f) || ip[7])
			return -EPROTO;	/* not TCP, or a fragment (MF or an offset) */
		out->src.family = out->dst.family = AF_INET;
		memcpy(out->src.a, ip + 12, 4);
		memcpy(out->dst.a, ip + 16, 4);
	} else if (ip[0] >> 4 == 6) {
		if (len < 40)
			return -EBADMSG;
		hl = 40;
		tot = 40 + ((size_t)ip[4] << 8 | ip[5]);
		if (tot > len)
			return -EBADMSG;
		if (ip[6] != 6)
			return -EPROTO;	/* an extension header, or not TCP */
		out->src.family = out->dst.family = AF_INET6;
		memcpy(out->src.a, ip + 8, 16);
		memcpy(out->dst.a, ip + 24, 16);
	} else {
		return -EBADMSG;
	}
	th = ip + hl;
	if (tot - hl < 20 || (size_t)(th[12] >> 4) * 4 < 20 || (size_t)(th[12] >> 4) * 4 > tot - hl)
		return -EBADMSG;
	out->sport = (uint16_t)(th[0] << 8 | th[1]);
	out->dport = (uint16_t)(th[2] << 8 | th[3]);
	out->seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	out->fin = th[13] & 0x01;
	out->syn = th[13] & 0x02;
	out->rst = th[13] & 0x04;
	out->ack = th[13] & 0x10;
	out->payload = th + (th[12] >> 4) * 4;
	out->len = tot - hl - (size_t)(th[12] >> 4) * 4;
	return 0;
}

int sniflow_new(struct sniflow_tab **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void sniflow_free(struct sniflow_tab *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < SNIFLOW_BUCKETS; i++)
		while (t->b[i])
			flow_unlink(t, &t->b[i]);
	free(t);
}

/* A SYN: start @pp's flow (new, or a settled one reused by a new connection). */
static enum sniflow_step on_syn(struct sniflow_tab *t, struct flow **pp,
				const struct sniflow_pkt *p, uint64_t now_ms)
{
	struct flow *f = *pp;

	if (f && f->state == F_REJECTED)
		return SNIFLOW_REJECTED;	/* a reset flow stays reset until forgotten */
	if (f && f->state == F_OPEN && f->isn != p->seq) {
		/* Another ISN mid-check: bytes of the first one may have reached the
		 * server already, so the new start would not be where the server
		 * reads from.  No real client does this. */
		free(f->st);
		f->st = NULL;
		f->state = F_REJECTED;
		f->start_ms = now_ms;
		return SNIFLOW_REJECTED;
	}
	if (f && f->state == F_OPEN)
		return SNIFLOW_ACCEPT;	/* a retransmitted SYN */
	if (!f) {
		if (t->n >= SNIFLOW_MAX)
			return SNIFLOW_UNKNOWN;
		f = calloc(1, sizeof(*f));
		if (!f)
			return SNIFLOW_UNKNOWN;
		f->src = p->src;
		f->dst = p->dst;
		f->sport = p->sport;
		f->dport = p->dport;
		f->next = NULL;
		*pp = f;
		t->n++;
	}
	free(f->st);	/* the 16 KiB buffer comes with the first payload byte */
	f->st = NULL;
	f->state = F_OPEN;
	f->isn = p->seq;
	f->next_seq = p->seq + 1;	/* the SYN takes one sequence number */
	f->start_ms = now_ms;
	f->n_pkts = 0;
	f->tagged = false;
	return SNIFLOW_ACCEPT;
}

bool sniflow_meta(struct sniflow_tab *t, const struct sniflow_pkt *p, struct sniflow_meta *ret)
{
	const struct flow *f = *find(t, p);

	if (!f)
		return false;
	ret->start_ms = f->start_ms;
	ret->tag[0] = f->tag[0];
	ret->tag[1] = f->tag[1];
	ret->tagged = f->tagged;
	return true;
}

void sniflow_tag(struct sniflow_tab *t, const struct sniflow_pkt *p, uint8_t a, uint8_t b)
{
	struct flow *f = *find(t, p);

	if (f) {
		f->tag[0] = a;
		f->tag[1] = b;
		f->tagged = true;
	}
}

enum sniflow_step sniflow_packet(struct sniflow_tab *t, const struct sniflow_pkt *p,
				 uint64_t now_ms, uint32_t deadline_ms, struct sni_result *res)
{
	struct flow **pp = find(t, p), *f;
	enum sniflow_step s;
	int32_t off;
	size_t skip;

	if (p->syn && !p->ack) {
		s = on_syn(t, pp, p, now_ms);
		if (s != SNIFLOW_ACCEPT || !p->len)
			return s;
		/* TCP Fast Open: data in the SYN is the stream's first bytes. */
	}
	f = *pp;
	if (!f)
		return SNIFLOW_UNKNOWN;
	if (f->state != F_OPEN)
		return f->state == F_ACCEPTED ? SNIFLOW_ACCEPTED : SNIFLOW_REJECTED;
	if (++f->n_pkts > SNIFLOW_PACKETS_MAX || now_ms >= f->start_ms + deadline_ms) {
		if (f->st)
			*res = f->st->res;
		else
			*res = (struct sni_result){ .status = SNI_MORE };
		return SNIFLOW_LATE;
	}
	if (p->rst) {
		flow_unlink(t, pp);	/* the client gave up; nothing reached a verdict */
		return SNIFLOW_ACCEPT;
	}
	if (!p->len)
		return SNIFLOW_ACCEPT;
	off = (int32_t)((p->syn ? p->seq + 1 : p->seq) - f->next_seq);
	if (off > 0)
		return SNIFLOW_DROP;	/* a gap: the server must not see bytes we did not */
	skip = (size_t)-(int64_t)off;
	if (skip >= p->len)
		return SNIFLOW_ACCEPT;	/* a retransmission of bytes already read */
	if (!f->st) {
		f->st = malloc(sizeof(*f->st));
		if (!f->st)
			return SNIFLOW_UNKNOWN;	/* out of memory: the caller fails it closed */
		sni_stream_init(f->st);
	}
	f->next_seq += (uint32_t)(p->len - skip);
	if (sni_stream_feed(f->st, p->payload + skip, p->len - skip, res) == SNI_MORE)
		return SNIFLOW_ACCEPT;
	return SNIFLOW_DECIDED;
}

void sniflow_settle(struct sniflow_tab *t, const struct sniflow_pkt *p, bool accepted,
		    uint64_t now_ms)
{
	struct flow **pp = find(t, p), *f = *pp;

	if (!f) {
		if (t->n >= SNIFLOW_MAX || !(f = calloc(1, sizeof(*f))))
			return;	/* its next packet is SNIFLOW_UNKNOWN again: same verdict */
		f->src = p->src;
		f->dst = p->dst;
		f->sport = p->sport;
		f->dport = p->dport;
		*pp = f;
		t->n++;
	}
	free(f->st);
	f->st = NULL;
	/* A rejected flow is never turned into an accepted one. */
	if (f->state != F_REJECTED)
		f->state = accepted ? F_ACCEPTED : F_REJECTED;
	f->start_ms = now_ms;
}

size_t sniflow_sweep(struct sniflow_tab *t, uint64_t now_ms, uint32_t deadline_ms)
{
	size_t n = 0;

	for (uint32_t i = 0; i < SNIFLOW_BUCKETS; i++)
		for (struct flow **pp = &t->b[i]; *pp;) {
			/* An undecided flow past its deadline goes too (its memory
			 * is what a sandbox opening connections and sending
			 * nothing would pin): its next packet is SNIFLOW_UNKNOWN,
			 * which the caller fails closed like SNIFLOW_LATE. */
			uint64_t keep = (*pp)->state == F_OPEN ? deadline_ms : SNIFLOW_KEEP_MS;

			if (now_ms >= (*pp)->start_ms + keep) {
				flow_unlink(t, pp);
				n++;
			} else {
				pp = &(*pp)->next;
			}
		}
	return n;
}

size_t sniflow_count(const struct sniflow_tab *t)
{
	return t ? t->n : 0;
}
