/*
 * netd/sni/ - the SNI/Host check: the parser (sni.c), the match
 * (sni_match.c), the per-connection table (flow.c), all pure, and the
 * kernel edge, nfnetlink_queue (queue.c).
 */
/*
 * sniflow - the SNI check's per-connection table.  See flow.h.  A chained
 * hash over the 4-tuple; settled flows also sit on a list, oldest first,
 * from which the table takes room when it is full.  The 16 KiB stream
 * buffer exists only while a flow is under check.
 */
#include "netd/sni/flow.h"

#include <errno.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "netd/sni/ftab.h"

#define SNIFLOW_BUCKETS 4096u
#define SNIFLOW_EXT_MAX 8	/* IPv6 extension headers walked */

/*
 * F_OPEN: reading the stream; F_CONFIRM: accepted, waiting until the server
 * acknowledged the bytes read (isn + 1 + st->len); F_ACCEPTED, F_REJECTED:
 * settled.
 */
enum fstate { F_OPEN, F_CONFIRM, F_ACCEPTED, F_REJECTED };

struct flow {
	struct fentry e;	/* the tuple, owner, start (the SYN, or when settled) */
	enum fstate state;
	uint32_t isn, next_seq;
	uint32_t pass_end;	/* the end of the bytes let through in order */
	uint32_t last_from;	/* pass_end before the last segment */
	bool seen_syn;		/* isn, next_seq, pass_end and last_from are known */
	unsigned int n_pkts;
	uint8_t tag[2];
	bool tagged;
	struct sni_stream *st;	/* F_OPEN, F_CONFIRM: every byte read */
};

struct sniflow_tab {
	struct ftab ft;
};

static bool is_open(const struct flow *f)
{
	return f->state == F_OPEN || f->state == F_CONFIRM;
}

static struct flow *flow_of(struct fentry *e)
{
	return e ? ftab_entry(e, struct flow, e) : NULL;
}

/* @p's flow key: its addresses and ports as sent. */
static struct ftuple key_of(const struct sniflow_pkt *p)
{
	return (struct ftuple){ p->src, p->dst, p->sport, p->dport };
}

static struct fentry **find(struct sniflow_tab *t, const struct sniflow_pkt *p)
{
	const struct ftuple k = key_of(p);

	return ftab_find(&t->ft, &k);
}

/*
 * Move @f to state @s, keeping the owner counts and the settled list right
 * (ftab_set_open()); a settled flow has no stream buffer.
 */
static void set_state(struct sniflow_tab *t, struct flow *f, enum fstate s)
{
	f->state = s;
	ftab_set_open(&t->ft, &f->e, is_open(f));
	if (!is_open(f)) {
		free(f->st);
		f->st = NULL;
	}
}

/* The table's free_entry. */
static void flow_free(struct fentry *e)
{
	struct flow *f = flow_of(e);

	free(f->st);
	free(f);
}

/*
 * A new flow in slot @pp (empty, of @p's tuple), settled as @s (F_ACCEPTED
 * or F_REJECTED); flow_start() opens it.  The caller made room.
 */
static struct flow *flow_add(struct sniflow_tab *t, struct fentry **pp,
			     const struct sniflow_pkt *p, enum fstate s)
{
	struct flow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->e.key = key_of(p);
	f->e.owner = UINT32_MAX;	/* nobody's share until opened */
	f->state = s;
	ftab_link(&t->ft, pp, &f->e);
	return f;
}

/* The TCP options (RFC 9293 3.1): note TCP-MD5 (19), TCP-AO (29) and lists that do not parse. */
static bool odd_options(const uint8_t *o, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (o[i] == 0)
			return false;	/* end of option list */
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2 || o[i + 1] > len - i)
			return true;
		if (o[i] == 19 || o[i] == 29)
			return true;
		i += o[i + 1];
	}
	return false;
}

/*
 * The IPv6 extension headers (RFC 8200 4) from @*nh at @ip[@*hl]: on return
 * *@nh is the upper-layer protocol and *@hl where it starts.  Return: 0;
 * -EPROTO (a fragment, ESP, no next header, too many); -EBADMSG (short).
 */
static int ipv6_skip_ext(const uint8_t *ip, size_t tot, uint8_t *nh, size_t *hl)
{
	for (int i = 0; i < SNIFLOW_EXT_MAX; i++) {
		const uint8_t *h = ip + *hl;
		size_t el;

		switch (*nh) {
		case 0:		/* hop-by-hop options */
		case 43:	/* routing */
		case 60:	/* destination options */
			if (tot - *hl < 8)
				return -EBADMSG;
			el = ((size_t)h[1] + 1) * 8;
			break;
		case 51:	/* AH (RFC 4302 2.2): 4-octet units, minus 2 */
			if (tot - *hl < 8)
				return -EBADMSG;
			el = ((size_t)h[1] + 2) * 4;
			break;
		case 44:	/* fragment: only a whole packet's (offset 0, no M) */
			if (tot - *hl < 8)
				return -EBADMSG;
			if ((h[2] << 8 | h[3]) != 0)
				return -EPROTO;
			el = 8;
			break;
		default:
			return 0;
		}
		if (el > tot - *hl)
			return -EBADMSG;
		*nh = h[0];
		*hl += el;
	}
	return -EPROTO;
}

int sniflow_ip_parse(const uint8_t *ip, size_t len, struct sniflow_ip *out)
{
	size_t hl, tot;
	uint8_t nh;
	int r;

	memset(out, 0, sizeof(*out));
	if (len < 1)
		return -EBADMSG;
	if (ip[0] >> 4 == 4) {
		if (len < 20 || (hl = (size_t)(ip[0] & 0xf) * 4) < 20 || hl > len)
			return -EBADMSG;
		tot = (size_t)ip[2] << 8 | ip[3];
		if (tot < hl || tot > len)
			return -EBADMSG;
		if ((ip[6] & 0x3f) || ip[7])
			return -EPROTO;	/* a fragment (MF or an offset) */
		out->proto = ip[9];
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
		nh = ip[6];
		if ((r = ipv6_skip_ext(ip, tot, &nh, &hl)) < 0)
			return r;
		out->proto = nh;
		out->src.family = out->dst.family = AF_INET6;
		memcpy(out->src.a, ip + 8, 16);
		memcpy(out->dst.a, ip + 24, 16);
	} else {
		return -EBADMSG;
	}
	out->l4_off = hl;
	out->l4_len = tot - hl;
	return 0;
}

int sniflow_pkt_parse(const uint8_t *ip, size_t len, struct sniflow_pkt *out)
{
	struct sniflow_ip l3;
	size_t thl;
	const uint8_t *th;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = sniflow_ip_parse(ip, len, &l3)) < 0)
		return r;
	if (l3.proto != 6)
		return -EPROTO;
	out->src = l3.src;
	out->dst = l3.dst;
	th = ip + l3.l4_off;
	if (l3.l4_len < 20)
		return -EBADMSG;
	thl = (size_t)(th[12] >> 4) * 4;
	if (thl < 20 || thl > l3.l4_len)
		return -EBADMSG;
	out->sport = (uint16_t)(th[0] << 8 | th[1]);
	out->dport = (uint16_t)(th[2] << 8 | th[3]);
	out->seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	out->ack_seq = (uint32_t)th[8] << 24 | (uint32_t)th[9] << 16 | (uint32_t)th[10] << 8 | th[11];
	out->fin = th[13] & 0x01;
	out->syn = th[13] & 0x02;
	out->rst = th[13] & 0x04;
	out->ack = th[13] & 0x10;
	out->urg = th[13] & 0x20;
	out->odd_opt = odd_options(th + 20, thl - 20);
	out->payload = th + thl;
	out->len = l3.l4_len - thl;
	return 0;
}

int sniflow_new(uint32_t n_owners, struct sniflow_tab **ret)
{
	struct sniflow_tab *t = calloc(1, sizeof(*t));

	*ret = NULL;
	if (!t)
		return -ENOMEM;
	if (ftab_init(&t->ft, SNIFLOW_BUCKETS, SNIFLOW_MAX, SNIFLOW_OPEN_PER_OWNER, n_owners,
		      flow_free) < 0) {
		free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

void sniflow_free(struct sniflow_tab *t)
{
	if (!t)
		return;
	ftab_fini(&t->ft);
	free(t);
}

/* (Re)start flow @f at the SYN @p: a new connection, or one that reuses a settled flow's tuple. */
static void flow_start(struct sniflow_tab *t, struct flow *f, const struct sniflow_pkt *p,
		       uint32_t owner, uint64_t now_ms)
{
	if (is_open(f))
		set_state(t, f, F_REJECTED);	/* off its old owner's share, buffer freed */
	f->e.owner = owner;
	set_state(t, f, F_OPEN);	/* the 16 KiB buffer comes with the first payload byte */
	f->isn = p->seq;
	f->next_seq = p->seq + 1;	/* the SYN takes one sequence number */
	f->pass_end = f->last_from = f->next_seq;
	f->seen_syn = true;
	f->e.start_ms = now_ms;
	f->n_pkts = 0;
	f->tagged = false;
}

/* A SYN: start @pp's flow (new, or a settled one reused by a new connection). */
static enum sniflow_step on_syn(struct sniflow_tab *t, struct fentry **pp,
				const struct sniflow_pkt *p, uint32_t owner, uint64_t now_ms)
{
	struct flow *f = flow_of(*pp);

	if (f && f->state == F_REJECTED)
		return SNIFLOW_REJECTED;	/* a reset flow stays reset until forgotten */
	if (f && f->state == F_OPEN && f->isn != p->seq) {
		/* Another ISN mid-check: bytes of the first one may have reached the
		 * server already, so the new start would not be where the server
		 * reads from.  No real client does this. */
		set_state(t, f, F_REJECTED);
		f->e.start_ms = now_ms;
		return SNIFLOW_REJECTED;
	}
	if (f && is_open(f) && f->isn == p->seq)
		return SNIFLOW_ACCEPT;	/* a retransmitted SYN (its data is compared) */
	if ((!f || !is_open(f) || f->e.owner != owner) && ftab_share_full(&t->ft, owner))
		return SNIFLOW_FULL;	/* its share: another sandbox's stays free */
	if (!f) {
		if (!ftab_make_room(&t->ft))
			return SNIFLOW_FULL;
		pp = find(t, p);	/* room made may have changed this chain */
		if (!(f = flow_add(t, pp, p, F_REJECTED)))
			return SNIFLOW_FULL;
	}
	/* F_ACCEPTED or F_CONFIRM with a new ISN: a new connection on the same
	 * tuple (conntrack reuses an entry the server reset); checked afresh. */
	flow_start(t, f, p, owner, now_ms);
	return SNIFLOW_ACCEPT;
}

bool sniflow_meta(struct sniflow_tab *t, const struct sniflow_pkt *p, struct sniflow_meta *ret)
{
	const struct flow *f = flow_of(*find(t, p));

	if (!f)
		return false;
	ret->start_ms = f->e.start_ms;
	ret->tag[0] = f->tag[0];
	ret->tag[1] = f->tag[1];
	ret->tagged = f->tagged;
	ret->rcv_nxt = f->last_from;
	ret->rcv_nxt_known = f->seen_syn;
	return true;
}

void sniflow_tag(struct sniflow_tab *t, const struct sniflow_pkt *p, uint8_t a, uint8_t b)
{
	struct flow *f = flow_of(*find(t, p));

	if (f) {
		f->tag[0] = a;
		f->tag[1] = b;
		f->tagged = true;
	}
}

/*
 * Do @p's bytes that the check already read (stream offsets below
 * st->len) equal what it read?  Offsets are from isn + 1; a SYN's data
 * starts there.
 */
static bool same_bytes(const struct flow *f, const struct sniflow_pkt *p)
{
	int32_t off = (int32_t)((p->syn ? p->seq + 1 : p->seq) - (f->isn + 1));
	size_t from = 0, n;

	if (!f->st || !p->len)
		return true;
	if (off < 0) {
		/* Starts before the stream: the server trims what precedes it. */
		if ((size_t)-(int64_t)off >= p->len)
			return true;
		from = (size_t)-(int64_t)off;
		off = 0;
	}
	if ((size_t)off >= f->st->len)
		return true;
	n = p->len - from;
	if (n > f->st->len - (size_t)off)
		n = f->st->len - (size_t)off;
	return memcmp(p->payload + from, f->st->buf + off, n) == 0;
}

static void result_so_far(const struct flow *f, struct sni_result *res)
{
	if (f->st)
		*res = f->st->res;
	else
		*res = (struct sni_result){ .status = SNI_MORE };
}

/* A segment of a flow under check (F_OPEN or F_CONFIRM). */
static enum sniflow_step on_segment(struct sniflow_tab *t, struct fentry **pp,
				    const struct sniflow_pkt *p, uint64_t now_ms,
				    uint32_t deadline_ms, struct sni_result *res)
{
	struct flow *f = flow_of(*pp);
	int32_t off;
	size_t skip;

	if (p->rst) {
		ftab_unlink(&t->ft, pp);	/* the client gave up; nothing reached a verdict */
		return SNIFLOW_ACCEPT;
	}
	/* Every segment before this one that was let through was in order
	 * (gaps are dropped): if this one is refused, the server stands here. */
	f->last_from = f->pass_end;
	if (now_ms >= f->e.start_ms + (f->state == F_CONFIRM ? SNIFLOW_CONFIRM_MS : deadline_ms)) {
		result_so_far(f, res);
		return SNIFLOW_LATE;
	}
	if (!same_bytes(f, p)) {
		result_so_far(f, res);
		return SNIFLOW_REWRITTEN;
	}
	if (p->urg || p->odd_opt) {
		result_so_far(f, res);
		return SNIFLOW_UNMODELLED;
	}
	if (f->state == F_CONFIRM) {
		/* What follows what decided is not looked at, only counted. */
		off = (int32_t)((p->syn ? p->seq + 1 : p->seq) - f->pass_end);
		if (off <= 0 && (int64_t)p->len + off > 0)
			f->pass_end += (uint32_t)((int64_t)p->len + off);
		return SNIFLOW_ACCEPT;
	}
	if (++f->n_pkts > SNIFLOW_PACKETS_MAX) {
		result_so_far(f, res);
		return SNIFLOW_TOO_MANY;
	}
	if (!p->len)
		return SNIFLOW_ACCEPT;
	off = (int32_t)((p->syn ? p->seq + 1 : p->seq) - f->next_seq);
	if (off > 0)
		return SNIFLOW_DROP;	/* a gap: the server must not see bytes we did not */
	skip = (size_t)-(int64_t)off;
	if (skip >= p->len)
		return SNIFLOW_ACCEPT;	/* a retransmission of bytes already read (the same) */
	if (!f->st) {
		f->st = malloc(sizeof(*f->st));
		if (!f->st)
			return SNIFLOW_FULL;	/* out of memory: the caller fails it closed */
		sni_stream_init(f->st);
	}
	/* The stream keeps SNI_STREAM_MAX bytes; one that fills it has decided
	 * (too long), so what it kept is all the server needed to be checked. */
	f->next_seq += (uint32_t)(p->len - skip);
	f->pass_end = f->next_seq;
	if (sni_stream_feed(f->st, p->payload + skip, p->len - skip, res) == SNI_MORE)
		return SNIFLOW_ACCEPT;
	return SNIFLOW_DECIDED;
}

/*
 * Why a segment has no flow: its SYN found no room (its owner is still at
 * its share, or the table is full of flows under check), or netd never saw
 * its SYN.
 */
static enum sniflow_step no_flow(const struct sniflow_tab *t, uint32_t owner)
{
	if (ftab_share_full(&t->ft, owner) || ftab_full(&t->ft))
		return SNIFLOW_FULL;
	return SNIFLOW_UNKNOWN;
}

enum sniflow_step sniflow_packet(struct sniflow_tab *t, const struct sniflow_pkt *p,
				 uint32_t owner, uint64_t now_ms, uint32_t deadline_ms,
				 struct sni_result *res)
{
	struct fentry **pp = find(t, p);
	enum sniflow_step s;
	struct flow *f;

	if (p->syn && !p->ack) {
		s = on_syn(t, pp, p, owner, now_ms);
		if (s != SNIFLOW_ACCEPT || !p->len)
			return s;
		pp = find(t, p);
		/* TCP Fast Open: data in the SYN is the stream's first bytes; the
		 * server may not take them, so they count only once acknowledged. */
	}
	f = flow_of(*pp);
	if (!f)
		return no_flow(t, owner);
	if (!is_open(f))
		return f->state == F_ACCEPTED ? SNIFLOW_ACCEPTED : SNIFLOW_REJECTED;
	return on_segment(t, pp, p, now_ms, deadline_ms, res);
}

enum sniflow_step sniflow_reply(struct sniflow_tab *t, const struct sniflow_pkt *p,
				uint64_t now_ms)
{
	const struct ftuple back = { p->dst, p->src, p->dport, p->sport };	/* the flow's */
	struct flow *f = flow_of(*ftab_find(&t->ft, &back));

	if (!f)
		return SNIFLOW_ACCEPT;
	if (f->state == F_ACCEPTED)
		return SNIFLOW_ACCEPTED;
	if (f->state != F_CONFIRM || !p->ack || !f->st)
		return SNIFLOW_ACCEPT;
	/* Every byte read is below isn + 1 + st->len (mod 2^32). */
	if ((int32_t)(p->ack_seq - (f->isn + 1 + (uint32_t)f->st->len)) < 0)
		return SNIFLOW_ACCEPT;
	set_state(t, f, F_ACCEPTED);
	f->e.start_ms = now_ms;
	return SNIFLOW_CONFIRMED;
}

bool sniflow_settle(struct sniflow_tab *t, const struct sniflow_pkt *p, bool accepted,
		    uint64_t now_ms)
{
	struct flow *f = flow_of(*find(t, p));

	if (!f) {
		if (!ftab_make_room(&t->ft))
			return false;	/* its next packet is SNIFLOW_UNKNOWN again: same verdict */
		if ((f = flow_add(t, find(t, p), p, accepted ? F_ACCEPTED : F_REJECTED)))
			f->e.start_ms = now_ms;
		return false;
	}
	f->e.start_ms = now_ms;
	/* A rejected flow is never turned into an accepted one. */
	if (f->state == F_REJECTED)
		return false;
	if (accepted && f->state == F_OPEN && f->st && f->st->len) {
		f->state = F_CONFIRM;	/* still open: it keeps its share and its bytes */
		return true;
	}
	if (accepted && f->state == F_CONFIRM)
		return true;
	set_state(t, f, accepted ? F_ACCEPTED : F_REJECTED);
	return false;
}

/*
 * How long the sweep keeps a flow: an unsettled flow past its deadline goes
 * too (its memory is what a sandbox opening connections and sending
 * nothing would pin): its next packet is SNIFLOW_UNKNOWN, which the caller
 * fails closed like SNIFLOW_LATE.  @ctx: the deadline (uint32_t ms).
 */
static uint64_t keep_ms(const struct fentry *e, const void *ctx)
{
	const struct flow *f = ftab_entry(e, const struct flow, e);

	return f->state == F_OPEN    ? *(const uint32_t *)ctx :
	       f->state == F_CONFIRM ? SNIFLOW_CONFIRM_MS :
				       SNIFLOW_KEEP_MS;
}

size_t sniflow_sweep(struct sniflow_tab *t, uint64_t now_ms, uint32_t deadline_ms)
{
	return ftab_sweep(&t->ft, now_ms, keep_ms, &deadline_ms);
}

size_t sniflow_count(const struct sniflow_tab *t)
{
	return t ? t->ft.n : 0;
}

size_t sniflow_open_count(const struct sniflow_tab *t, uint32_t owner)
{
	return t ? ftab_open_count(&t->ft, owner) : 0;
}
