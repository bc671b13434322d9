/*
 * proxy - the DNS proxy's edge: one UDP and one TCP listener on [::]:port
 * (IPv4 through v4-mapped addresses), both on libevent; upstream queries
 * through upstream.c (c-ares).  The decisions themselves are pure
 * (wire.c, decide.c); this file moves bytes, enforces the resource limits
 * and keeps the ordering invariant: a sandbox sees an answer only after the
 * kernel acknowledged that answer's pins.
 *
 * Not here: knowing which sandbox owns an address or committing pins; that
 * is proxy_ops (the daemon).
 */
#include "dnsproxy/proxy.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "dnsproxy/cache.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/pintrack.h"
#include "dnsproxy/upstream.h"
#include "dnsproxy/wire.h"

#define PROXY_MAX_OUTSTANDING   4096	/* upstream queries in flight, all clients */
#define PROXY_MAX_PER_CLIENT    256	/* ... per client address */
#define PROXY_MAX_CONNS         4096	/* TCP connections, all clients */
#define PROXY_MAX_CONNS_CLIENT  16	/* ... per client address */
#define PROXY_TCP_FRAME_S       5	/* a message must arrive whole within this */
#define PROXY_CONN_INFLIGHT     32	/* pipelined queries per connection */
#define PROXY_CONN_OUT_MAX      (256u * 1024)	/* unsent bytes before we stop reading */
#define PROXY_TCP_IDLE_S        10	/* RFC 7766 6.2.3 idle timeout */
#define PROXY_UDP_BATCH         64	/* datagrams per readiness event */
#define PROXY_UDP_VLEN          64	/* datagrams per recvmmsg() */
#define PROXY_UDP_RX            4096	/* bytes of one UDP query, at most */
#define PROXY_UDP_TX            4096	/* bytes of a queued UDP reply, at most */
#define PROXY_UDP_GSO_MAX       1200	/* replies up to this long may leave as one GSO send ... */
#define PROXY_UDP_GSO_HDR       48	/* ... if this much more fits the MTU (IPv6 + UDP headers) */
#define PROXY_UDP_GSO_SEGS      64	/* datagrams in one GSO send, at most (UDP_MAX_SEGMENTS) */
#define PROXY_UDP_GSO_BYTES     60000	/* ... and bytes (one IP datagram's payload) */
#define PROXY_MAX_ADDRS         128	/* addresses collected from one answer */
#define PROXY_MAX_PINS          1024	/* pins from one answer */
#define PROXY_CLIENT_BUCKETS    256
#define PROXY_SWEEP_S           5	/* forget expired pins this often */

/* Defaults for the abuse limits (proxy_config fields left 0). */
#define PROXY_DEF_PINS_PER_SANDBOX 16384	/* live pin elements per sandbox */
#define PROXY_DEF_ADDRS_PER_NAME   64	/* addresses one answer may pin */
#define PROXY_DEF_QPS              1000	/* queries/s per client address ... */
#define PROXY_DEF_BURST            2000	/* ... with this bucket depth */
#define PROXY_LONG_LABEL           40	/* tunnelling suspicion: label length ... */
#define PROXY_LONG_LABEL_DISTINCT  20	/* ... made of this many distinct characters */

/* Per client address counters (fairness limits). */
struct client_slot {
	struct client_slot *next;
	struct addr addr;
	unsigned int queries, conns;
	double tokens;		/* query rate token bucket */
	uint64_t tokens_ms;	/* when it was last refilled */
	uint64_t limited;	/* queries refused by the bucket, to log once per burst */
};

struct tcp_conn {
	struct tcp_conn *prev, *next;
	struct proxy *p;
	struct bufferevent *bev;	/* NULL once closed */
	struct addr client;
	unsigned int inflight;	/* queries sent upstream, not answered yet */
	unsigned int refs;	/* 1 while open + inflight */
	bool eof;		/* client shut down its side: close when done */
	uint64_t partial_since_ms;	/* monotonic ms a partial frame began; 0 = none */
};

/*
 * A UDP socket bound to one address's port 53 (proxy_listen_add()): a
 * sandbox's gateway, where its queries arrive untracked (fw.h
 * fw_sandbox_set_dns()).  Pending queries hold a reference, so one that
 * outlives its listener is dropped instead of answered from another socket.
 */
struct listener {
	struct proxy *p;
	struct listener *next;
	int id;
	int fd;			/* -1 once closed */
	struct event *ev;
	unsigned int refs;	/* pending queries that answer through it */
	bool no_gso;		/* the kernel has no UDP GSO (see udp_flush()) */
	char ifname[IFNAMSIZ];	/* the sandbox interface it is bound to */
	uint64_t gso_off_ms;	/* no grouping before this (a refused group) */
};

/* Where a reply goes. */
struct origin {
	bool tcp;
	struct addr client;
	struct sockaddr_in6 peer;	/* udp */
	struct in6_pktinfo local;	/* udp: the address the query came to */
	bool have_local;
	struct listener *l;	/* udp: the gateway socket it came to; NULL = the main one */
	struct tcp_conn *conn;	/* tcp; holds a reference while pending */
};

struct pending {
	struct pending *prev, *next;
	struct proxy *p;
	struct origin o;
	struct wire_query q;
	size_t qlen;
	uint8_t query[];	/* the client's query as received */
};

struct proxy {
	struct event_base *base;
	struct proxy_config cfg;
	const struct proxy_ops *ops;
	void *ctx;
	int udp_fd, tcp_fd;
	struct event *udp_ev, *tcp_ev;
	struct event *accept_pause;	/* re-arms tcp_ev after EMFILE */
	struct upstream *up;
	struct pintrack *pt;
	struct cache *cache;	/* NULL = no answer cache */
	struct event *sweep;
	struct proxy_stats stats;
	struct pending *pending;
	unsigned int n_pending;
	struct tcp_conn *conns;
	unsigned int n_conns;
	struct client_slot *slots[PROXY_CLIENT_BUCKETS];
	bool closing;
	uint64_t n_dropped;	/* replies we could not send, malformed drops */
	/* Scratch, single-threaded: the receive buffer and one answer. */
	uint8_t rx[WIRE_MSG_MAX + 1];
	uint8_t ans[WIRE_MSG_MAX];
	struct wire_addr addrs[PROXY_MAX_ADDRS];
	struct fw_pin pins[PROXY_MAX_PINS];
	struct fw_pin plan[PROXY_MAX_PINS];
	struct addr pinned[PROXY_MAX_ADDRS];
	/*
	 * Replies to the datagrams of one recvmmsg() round, sent together by
	 * one sendmmsg() at the end of the round (udp_flush()).  Each reply
	 * is queued only after its pins were acknowledged, so batching delays
	 * answers a little and never reorders pin and answer.
	 */
	struct listener *listeners;
	int next_listener_id;
	struct {
		bool on;	/* inside a round: queue instead of sending */
		struct listener *l;	/* the round's socket: a gateway listener's; NULL: udp_fd */
		unsigned int n;
		struct mmsghdr msgs[PROXY_UDP_VLEN];
		struct iovec iovs[PROXY_UDP_VLEN];
		struct sockaddr_in6 peers[PROXY_UDP_VLEN];
		union {
			char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
			struct cmsghdr align;
		} cbufs[PROXY_UDP_VLEN];
		uint8_t bufs[PROXY_UDP_VLEN][PROXY_UDP_TX];
		/* tx_group(): the queued replies of a gateway socket grouped
		 * into UDP GSO sends (gcount[g]: replies in send g). */
		struct mmsghdr gmsgs[PROXY_UDP_VLEN];
		struct iovec giovs[PROXY_UDP_VLEN];
		unsigned int gcount[PROXY_UDP_VLEN];
		union {
			char buf[CMSG_SPACE(sizeof(uint16_t))];
			struct cmsghdr align;
		} gcbufs[PROXY_UDP_VLEN];
	} tx;
};

/*
 * The clock of a receive round: on_udp() reads it once per recvmmsg()
 * round and everything the round does uses it (0 = outside a round: read
 * the clock).  It is never later than the real time, so a pin's tracked
 * expiry (pintrack) stays at or before the kernel's.
 */
static uint64_t round_ms;

static uint64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_ms(void)
{
	return round_ms ? round_ms : clock_ms();
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- per-client counters ------------------------------------------------ */

static unsigned int slot_hash(const struct addr *a)
{
	uint32_t h = 2166136261u;

	h = (h ^ a->family) * 16777619u;
	for (size_t i = 0; i < addr_len(a->family); i++)
		h = (h ^ a->a[i]) * 16777619u;
	return h % PROXY_CLIENT_BUCKETS;
}

static struct client_slot *slot_get(struct proxy *p, const struct addr *a, bool create)
{
	unsigned int h = slot_hash(a);
	struct client_slot *s;

	for (s = p->slots[h]; s; s = s->next)
		if (addr_equal(&s->addr, a))
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = *a;
	s->tokens = p->cfg.burst;
	s->tokens_ms = now_ms();
	s->next = p->slots[h];
	p->slots[h] = s;
	return s;
}

static void slot_put(struct proxy *p, const struct addr *a)
{
	unsigned int h = slot_hash(a);

	for (struct client_slot **pp = &p->slots[h]; *pp; pp = &(*pp)->next) {
		struct client_slot *s = *pp;

		if (!addr_equal(&s->addr, a))
			continue;
		/* Keep it while its rate bucket still remembers queries. */
		if (s->queries == 0 && s->conns == 0 &&
		    s->tokens + (double)(now_ms() - s->tokens_ms) * p->cfg.qps / 1000.0 >=
		    p->cfg.burst) {
			*pp = s->next;
			free(s);
		}
		return;
	}
}

/*
 * rate_ok() - take one token from @a's query bucket (qps per second, burst
 * deep).  Return: false if the client is over its rate.
 */
static bool rate_ok(struct proxy *p, const struct addr *a, uint64_t *ret_limited)
{
	struct client_slot *s = slot_get(p, a, true);
	uint64_t t = now_ms();
	bool ok;

	if (!s)
		return true;	/* out of memory: the outstanding limit still holds */
	s->tokens += (double)(t - s->tokens_ms) * p->cfg.qps / 1000.0;
	if (s->tokens > p->cfg.burst)
		s->tokens = p->cfg.burst;
	s->tokens_ms = t;
	ok = s->tokens >= 1.0;
	if (ok) {
		s->tokens -= 1.0;
		s->limited = 0;
	} else {
		s->limited++;
	}
	*ret_limited = s->limited;
	slot_put(p, a);
	return ok;
}

/* ---- replies ------------------------------------------------------------ */

static void conn_unref(struct tcp_conn *c);
static void conn_close(struct tcp_conn *c);
static void conn_update_read(struct tcp_conn *c);

/* The socket a round's replies leave from: where its queries came in. */
static int tx_fd(const struct proxy *p)
{
	return p->tx.l ? p->tx.l->fd : p->udp_fd;
}

/*
 * The longest reply @l may send as part of a GSO group, in bytes: each
 * datagram of a group must fit the interface's MTU whole (the kernel does
 * not fragment a GSO segment), so the MTU is read for every flush that
 * could group (one ioctl per round, not per reply).  An MTU lowered between
 * that read and the send makes the kernel refuse the group: tx_send() then
 * sends its replies one by one and groups nothing on the socket for a
 * second.  0: group nothing now.
 */
static size_t listener_gso_max(struct listener *l)
{
	struct ifreq ifr;
	size_t max;

	if (l->no_gso || now_ms() < l->gso_off_ms)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, l->ifname, sizeof(ifr.ifr_name));
	if (ioctl(l->fd, SIOCGIFMTU, &ifr) < 0 || ifr.ifr_mtu <= PROXY_UDP_GSO_HDR)
		return 0;
	max = (size_t)ifr.ifr_mtu - PROXY_UDP_GSO_HDR;
	return max < PROXY_UDP_GSO_MAX ? max : PROXY_UDP_GSO_MAX;
}

/*
 * Group the queued replies (a gateway socket's: no pktinfo, the socket is
 * bound to the address) into p->tx.gmsgs: replies to the same peer with the
 * same length, at most @gso_max bytes each, go into one send with a
 * UDP_SEGMENT control message.  Order within a peer is kept.
 * Return: the number of sends.
 */
static unsigned int tx_group(struct proxy *p, size_t gso_max)
{
	bool done[PROXY_UDP_VLEN] = { false };
	unsigned int ng = 0, k = 0;

	for (unsigned int i = 0; i < p->tx.n; i++) {
		size_t len = p->tx.iovs[i].iov_len;
		struct msghdr *gm = &p->tx.gmsgs[ng].msg_hdr;
		unsigned int cnt = 1, first = k;

		if (done[i])
			continue;
		p->tx.giovs[k++] = p->tx.iovs[i];
		for (unsigned int j = i + 1; len <= gso_max && j < p->tx.n; j++) {
			if (cnt == PROXY_UDP_GSO_SEGS || (cnt + 1) * len > PROXY_UDP_GSO_BYTES)
				break;	/* the rest start a group of their own */
			if (done[j] || p->tx.iovs[j].iov_len != len ||
			    memcmp(&p->tx.peers[i], &p->tx.peers[j], sizeof(p->tx.peers[i])) != 0)
				continue;
			done[j] = true;
			p->tx.giovs[k++] = p->tx.iovs[j];
			cnt++;
		}
		*gm = (struct msghdr){
			.msg_name = &p->tx.peers[i],
			.msg_namelen = sizeof(p->tx.peers[i]),
			.msg_iov = &p->tx.giovs[first],
			.msg_iovlen = cnt,
		};
		if (cnt > 1) {
			uint16_t seg = (uint16_t)len;
			struct cmsghdr *cm;

			gm->msg_control = p->tx.gcbufs[ng].buf;
			gm->msg_controllen = sizeof(p->tx.gcbufs[ng].buf);
			cm = CMSG_FIRSTHDR(gm);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		}
		p->tx.gmsgs[ng].msg_len = 0;
		p->tx.gcount[ng++] = cnt;
	}
	return ng;
}

/* Send group @g's replies one by one (the kernel refused it as one). */
static void tx_send_each(struct proxy *p, unsigned int g)
{
	struct msghdr mh = p->tx.gmsgs[g].msg_hdr;
	const struct iovec *iov = mh.msg_iov;

	mh.msg_iovlen = 1;
	mh.msg_control = NULL;	/* without its UDP_SEGMENT */
	mh.msg_controllen = 0;
	for (unsigned int k = 0; k < p->tx.gcount[g]; k++) {
		mh.msg_iov = (struct iovec *)&iov[k];
		if (sendmsg(tx_fd(p), &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			p->n_dropped++;
	}
}

/*
 * udp_flush() - send the queued replies (p->tx) with sendmmsg().
 *
 * On a gateway socket (the direct path), replies of the round that go to
 * the same peer with the same length leave as one UDP GSO send
 * (UDP_SEGMENT, Linux 4.18; udp(7)): the stack routes the group, runs
 * the hooks and crosses the veth once, and the kernel cuts it back into
 * the same datagrams before the sandbox's socket reads them (a capture on
 * the sandbox's interface shows the group as one large datagram, as it
 * shows TCP segments coalesced by GSO/GRO).  The redirected path (udp_fd)
 * sends datagrams one by one: its replies are un-NATed by conntrack, and
 * a GSO send through NAT out of a device without checksum offload
 * reaches the client with bad checksums.  A client socket that enabled
 * UDP_GRO asked for such groups whole, and gets them (udp(7)).
 */
static void udp_flush(struct proxy *p)
{
	struct listener *l = p->tx.l;
	size_t gso_max = l && p->tx.n > 1 ? listener_gso_max(l) : 0;
	struct mmsghdr *msgs = p->tx.msgs;
	unsigned int n = p->tx.n, off = 0;
	bool refused = false;

	if (gso_max) {
		n = tx_group(p, gso_max);
		msgs = p->tx.gmsgs;
	}
	while (off < n) {
		unsigned int cnt = gso_max ? p->tx.gcount[off] : 1;
		int r;

		if (refused && cnt > 1) {
			/* Grouped before the refusal: no second try this round. */
			tx_send_each(p, off++);
			continue;
		}
		r = sendmmsg(tx_fd(p), msgs + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (cnt > 1 &&
			    (errno == EIO || errno == EINVAL || errno == EMSGSIZE || errno == ENOPROTOOPT)) {
				/* The kernel refused the group (an MTU lowered
				 * since it was read, no checksum offload on an
				 * older kernel): its replies one by one, and no
				 * grouping on this socket for a second. */
				refused = true;
				l->gso_off_ms = now_ms() + 1000;
				p->stats.udp_gso_refused++;
				tx_send_each(p, off);
			} else {
				/* This reply (group) could not go; the rest may. */
				p->n_dropped += cnt;
			}
			off++;
			continue;
		}
		for (int g = 0; gso_max && g < r; g++) {
			if (p->tx.gcount[off + g] > 1) {
				p->stats.udp_gso_sends++;
				p->stats.udp_gso_replies += p->tx.gcount[off + g];
			}
		}
		off += (unsigned int)r;
	}
	p->tx.n = 0;
}

static int udp_reply(struct proxy *p, const struct origin *o, const uint8_t *msg, size_t len)
{
	int fd = o->l ? o->l->fd : p->udp_fd;
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = {
		.msg_name = (void *)&o->peer,
		.msg_namelen = sizeof(o->peer),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	if (o->have_local) {
		struct cmsghdr *cm;

		/* Reply from the exact address the query was sent to (after the
		 * sandbox's :53 was redirected here): conntrack un-NATs the
		 * reply to the address the sandbox asked only if it matches. */
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
		memcpy(CMSG_DATA(cm), &o->local, sizeof(o->local));
	}
	if (fd < 0) {
		/* Its gateway socket closed (the sandbox was deleted) while the
		 * query was upstream: nobody to answer. */
		p->n_dropped++;
		return -ENOTCONN;
	}
	if (p->tx.on && o->l == p->tx.l && len <= PROXY_UDP_TX) {
		/* Inside a receive round: queue a copy; udp_flush() sends it. */
		unsigned int i = p->tx.n++;

		memcpy(p->tx.bufs[i], msg, len);
		memcpy(&p->tx.peers[i], &o->peer, sizeof(o->peer));
		p->tx.iovs[i] = (struct iovec){ .iov_base = p->tx.bufs[i], .iov_len = len };
		p->tx.msgs[i].msg_len = 0;
		p->tx.msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &p->tx.peers[i],
			.msg_namelen = sizeof(p->tx.peers[i]),
			.msg_iov = &p->tx.iovs[i],
			.msg_iovlen = 1,
		};
		if (mh.msg_control) {
			memcpy(p->tx.cbufs[i].buf, cbuf.buf, sizeof(cbuf.buf));
			p->tx.msgs[i].msg_hdr.msg_control = p->tx.cbufs[i].buf;
			p->tx.msgs[i].msg_hdr.msg_controllen = sizeof(p->tx.cbufs[i].buf);
		}
		if (p->tx.n == PROXY_UDP_VLEN)
			udp_flush(p);
		return 0;
	}
	if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		p->n_dropped++;
		return -errno;
	}
	return 0;
}

static int tcp_reply(struct tcp_conn *c, const uint8_t *msg, size_t len)
{
	uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
	struct evbuffer *out;

	if (!c->bev || len > WIRE_MSG_MAX)
		return -ENOTCONN;
	out = bufferevent_get_output(c->bev);
	/* RFC 1035 4.2.2: two-octet length, then the message. */
	if (evbuffer_add(out, hdr, 2) < 0 || evbuffer_add(out, msg, len) < 0) {
		c->p->n_dropped++;
		return -ENOMEM;
	}
	return 0;
}

/*
 * reply() - send @msg (a complete response with the client's ID) to @o.
 * Over UDP an answer longer than the client's buffer (512, or its EDNS0
 * size) becomes a TC=1 response with just the question (+OPT), so the
 * client retries over TCP (RFC 1035 4.2.1, RFC 6891 6.2.5, RFC 7766 5).
 */
static int reply(struct proxy *p, const struct origin *o, const uint8_t *query, size_t qlen,
		 const struct wire_query *q, const uint8_t *msg, size_t len)
{
	if (o->tcp)
		return tcp_reply(o->conn, msg, len);
	if (len > q->udp_size) {
		uint8_t tc[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
		int n = wire_build_response(query, qlen, q, WIRE_RCODE_NOERROR, true, tc,
					    sizeof(tc));

		if (n < 0)
			return n;
		return udp_reply(p, o, tc, (size_t)n);
	}
	return udp_reply(p, o, msg, len);
}

/* reply_rcode() - an answerless response with @rcode.  Return: as reply(). */
static int reply_rcode(struct proxy *p, const struct origin *o, const uint8_t *query,
		       size_t qlen, const struct wire_query *q, uint8_t rcode)
{
	uint8_t msg[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
	int n = wire_build_response(query, qlen, q, rcode, false, msg, sizeof(msg));

	if (n < 0) {
		p->n_dropped++;
		return n;
	}
	return reply(p, o, query, qlen, q, msg, (size_t)n);
}

/* ---- audit -------------------------------------------------------------- */

struct verdict {
	const char *sandbox, *policy;
	bool allowed;
	const char *reason;
	uint8_t rcode;
	const struct fw_pin *pins;
	size_t n_pins;
	const struct addr *answers;
	size_t n_answers;
	uint32_t ttl_s;
	size_t n_rebind;
	void *owner;		/* proxy_client.owner */
};

static void audit(struct proxy *p, const struct origin *o, const struct wire_query *q,
		  const struct verdict *v)
{
	struct proxy_event ev = {
		.sandbox = v->sandbox,
		.policy = v->policy,
		.client = &o->client,
		.transport = o->tcp ? "tcp" : "udp",
		.qname = q->qname,
		.qtype = q->qtype,
		.allowed = v->allowed,
		.reason = v->reason,
		.rcode = v->rcode,
		.pins = v->pins,
		.n_pins = v->n_pins,
		.answers = v->answers,
		.n_answers = v->n_answers,
		.ttl_s = v->ttl_s,
		.n_rebind = v->n_rebind,
		.owner = v->owner,
	};

	if (p->ops->audit)
		p->ops->audit(p->ctx, &ev);
}

static void decide_ctx_init(const struct proxy *p, const struct policy *pol,
			    struct decide_ctx *dc)
{
	memset(dc, 0, sizeof(*dc));
	dc->policy = pol;
	dc->internal = p->cfg.internal;
	dc->n_internal = p->cfg.n_internal;
	dc->min_ttl_s = p->cfg.min_ttl_s;
	dc->max_ttl_s = p->cfg.max_ttl_s;
}

static const char *deny_reason(enum decide_verdict v)
{
	switch (v) {
	case DECIDE_DENY_NAME:
		return "bad-name";
	case DECIDE_DENY_CLASS:
		return "bad-class";
	case DECIDE_DENY_LONG:
		return "qname-too-long";
	default:
		return "not-in-policy";
	}
}

/* ---- the upstream answer ------------------------------------------------ */

/* Free @l once it is closed and no pending query refers to it. */
static void listener_unref(struct listener *l)
{
	if (l->refs)
		l->refs--;
	if (l->fd < 0 && l->refs == 0)
		free(l);
}

static void pending_free(struct pending *pq)
{
	struct proxy *p = pq->p;
	struct client_slot *s;

	if (pq->prev)
		pq->prev->next = pq->next;
	else
		p->pending = pq->next;
	if (pq->next)
		pq->next->prev = pq->prev;
	p->n_pending--;
	s = slot_get(p, &pq->o.client, false);
	if (s && s->queries)
		s->queries--;
	slot_put(p, &pq->o.client);
	if (pq->o.tcp) {
		struct tcp_conn *c = pq->o.conn;

		c->inflight--;
		conn_update_read(c);
		conn_unref(c);
	}
	if (pq->o.l)
		listener_unref(pq->o.l);
	free(pq);
}

/*
 * answer_pass() - an allowed query's answer (in p->ans, @len bytes, ID and
 * question already the client's): pin, then send.  The same path for a
 * fresh upstream answer and for a cache hit (@cached): the policy is
 * checked again, the pins are the ones of the TTLs actually handed out,
 * and nothing is sent before the kernel acknowledged them.  A fresh
 * answer that was delivered is stored in the cache (received at @rx_ms).
 * @allow_rules/@n_allow: the matching rules if the query was decided in
 * this same call stack against cl->policy (a cache hit); NULL to decide.
 */
static void answer_pass(struct proxy *p, const struct origin *o, const uint8_t *query,
			size_t qlen, const struct wire_query *q, const struct proxy_client *cl,
			size_t len, bool cached, uint64_t rx_ms, const uint16_t *allow_rules,
			size_t n_allow)
{
	struct verdict v = { .sandbox = cl->sandbox, .policy = cl->policy->name, .owner = cl->owner };
	uint16_t rules[DECIDE_MAX_RULES];
	struct wire_answer wa;
	struct decide_ctx dc;
	size_t n_rules, n_rebind = 0;
	enum decide_verdict dv;
	int n_pins = 0, r;

	decide_ctx_init(p, cl->policy, &dc);
	if (allow_rules && n_allow <= DECIDE_MAX_RULES) {
		/* Decided a moment ago, synchronously, against this very policy. */
		memcpy(rules, allow_rules, n_allow * sizeof(rules[0]));
		n_rules = n_allow;
		dv = DECIDE_ALLOW;
	} else {
		/* The policy may have been reloaded while the query was upstream. */
		dv = decide_query(&dc, q, rules, &n_rules);
	}
	if (dv != DECIDE_ALLOW) {
		v.reason = deny_reason(dv);
		v.rcode = p->cfg.deny_rcode;
		reply_rcode(p, o, query, qlen, q, v.rcode);
		audit(p, o, q, &v);
		return;
	}
	v.allowed = true;

	r = wire_walk_answer(p->ans, len, q, p->addrs, PROXY_MAX_ADDRS, &wa);
	if (r < 0) {
		v.reason = r == -ELOOP ? "answer-loop" : r == -ENOBUFS ? "answer-too-large"
									: "bad-answer";
		goto servfail;
	}
	/*
	 * Only a NOERROR answer carries addresses a client will use; records a
	 * hostile upstream tucks into an NXDOMAIN or REFUSED are not pinned.
	 */
	if (wa.rcode != WIRE_RCODE_NOERROR)
		wa.n_addrs = 0;
	n_pins = decide_pins(&dc, rules, n_rules, p->addrs, wa.n_addrs, p->pins, PROXY_MAX_PINS,
			     &n_rebind);
	if (n_pins < 0) {
		v.reason = "too-many-pins";
		n_pins = 0;
		goto servfail;
	}
	v.n_rebind = n_rebind;
	v.pins = p->pins;
	v.n_pins = (size_t)n_pins;
	for (int i = 0; i < n_pins; i++) {
		bool seen = false;

		for (size_t k = 0; k < v.n_answers && !seen; k++)
			seen = addr_equal(&p->pinned[k], &p->pins[i].addr);
		if (!seen && v.n_answers < PROXY_MAX_ADDRS)
			p->pinned[v.n_answers++] = p->pins[i].addr;
		if (p->pins[i].timeout_ms / 1000 > v.ttl_s)
			v.ttl_s = p->pins[i].timeout_ms / 1000;
	}
	v.answers = p->pinned;

	/* Per name: one answer may not pin more than this many addresses. */
	if (v.n_answers > p->cfg.max_addrs_per_name) {
		log_warn("dns: %s (sandbox %s) answered %zu addresses, more than the %u "
			 "allowed per name: SERVFAIL", q->qname, cl->sandbox, v.n_answers,
			 p->cfg.max_addrs_per_name);
		p->stats.limit_name++;
		v.reason = "name-pin-limit";
		goto servfail;
	}
	if (n_pins > 0) {
		/* Only what the kernel does not cover yet: a re-add SETS the
		 * timeout, so re-pinning with a shorter TTL would shorten a pin
		 * an earlier answer handed out.  @t0 is taken before the batch,
		 * so the tracked expiry is never later than the kernel's. */
		uint64_t t0 = now_ms();
		int n_plan = pintrack_plan(p->pt, cl->sandbox, p->pins, (size_t)n_pins, t0,
					   p->cfg.max_pins_per_sandbox, p->plan);

		if (n_plan == -ENOSPC) {
			log_warn("dns: sandbox %s holds %zu pins, the most allowed (%u): %s: "
				 "SERVFAIL", cl->sandbox, pintrack_live(p->pt, cl->sandbox),
				 p->cfg.max_pins_per_sandbox, q->qname);
			p->stats.limit_pins++;
			v.reason = "pin-limit";
			goto servfail;
		}
		if (n_plan > 0) {
			uint64_t us = now_us();

			/* Synchronous: returns once the kernel acknowledged the batch. */
			r = p->ops->pin(p->ctx, cl->sandbox, p->plan, (size_t)n_plan);
			if (r < 0) {
				log_warn("dns: pinning %d addresses for %s (sandbox %s) failed: %s",
					 n_plan, q->qname, cl->sandbox, strerror(-r));
				v.reason = "pin-failed";
				goto servfail;
			}
			proxy_stats_pin(&p->stats, now_us() - us);
			if (pintrack_commit(p->pt, cl->sandbox, p->plan, (size_t)n_plan, t0) < 0)
				log_warn("dns: out of memory tracking pins of sandbox %s",
					 cl->sandbox);
		} else {
			p->stats.pins_skipped++;
		}
	}

	/* No client may cache the answer longer than its pins last (a cached
	 * answer was stored capped, and aging only lowers its TTLs). */
	if (!cached && wire_cap_ttls(p->ans, len, p->cfg.max_ttl_s) < 0) {
		v.reason = "bad-answer";
		goto servfail;
	}
	/*
	 * ORDERING INVARIANT: this is the only place an upstream answer is
	 * sent, and it is reached only after ops->pin() above returned 0,
	 * i.e. after the kernel acknowledged every pin of this answer (or the
	 * answer carries nothing to pin).  Never move it before the pin.
	 */
	reply(p, o, query, qlen, q, p->ans, len);
	v.reason = "policy";
	if (!cached && p->cache) {
		struct cache_key k;
		uint32_t ttl_s;

		/* Stored as delivered (TTLs capped at max_ttl), for at most
		 * its smallest TTL; negative answers per RFC 2308. */
		cache_key_from_query(q, &k);
		if (wire_cache_ttl(p->ans, len, CACHE_NEG_MAX_S, &ttl_s) == 0 && ttl_s > 0)
			cache_put(p->cache, &k, p->ans, len, ttl_s, rx_ms);
	}
	v.rcode = wa.rcode;
	audit(p, o, q, &v);
	return;

servfail:
	v.pins = NULL;
	v.n_pins = 0;
	v.answers = NULL;
	v.n_answers = 0;
	v.ttl_s = 0;
	v.rcode = WIRE_RCODE_SERVFAIL;
	reply_rcode(p, o, query, qlen, q, v.rcode);
	audit(p, o, q, &v);
}

static void on_upstream(void *arg, int err, const uint8_t *ans, size_t len)
{
	struct pending *pq = arg;
	struct proxy *p = pq->p;
	struct proxy_client cl = { 0 };
	char sandbox[128];

	if (err == -ECANCELED || p->closing)
		goto out;
	/* The sandbox may be gone (its address even reused) by now: ask again
	 * by the client's address and drop the answer if nobody owns it. */
	if (p->ops->lookup(p->ctx, &pq->o.client, &cl) < 0 || !cl.sandbox || !cl.policy)
		goto out;
	{
		/* A copy: the name must outlive a reload during this call. */
		size_t sl = strnlen(cl.sandbox, sizeof(sandbox) - 1);

		memcpy(sandbox, cl.sandbox, sl);
		sandbox[sl] = '\0';
	}
	cl.sandbox = sandbox;
	if (pq->o.tcp && !pq->o.conn->bev)
		goto out;	/* the client hung up */

	if (err < 0 || len > sizeof(p->ans)) {
		struct verdict v = {
			.sandbox = cl.sandbox, .policy = cl.policy->name, .owner = cl.owner,
			.allowed = true,
			.reason = err == -ETIMEDOUT ? "upstream-timeout" : "upstream-failure",
			.rcode = WIRE_RCODE_SERVFAIL,
		};

		reply_rcode(p, &pq->o, pq->query, pq->qlen, &pq->q, v.rcode);
		audit(p, &pq->o, &pq->q, &v);
		goto out;
	}
	memcpy(p->ans, ans, len);
	/* c-ares put its own ID on the wire; the client gets its own back. */
	wire_set_id(p->ans, pq->q.id);
	answer_pass(p, &pq->o, pq->query, pq->qlen, &pq->q, &cl, len, false, now_ms(), NULL, 0);
out:
	pending_free(pq);
}

/* ---- stats -------------------------------------------------------------- */

void proxy_stats_pin(struct proxy_stats *st, uint64_t us)
{
	st->pins_sent++;
	st->pin_hist[us < PROXY_PIN_HIST_US ? us : PROXY_PIN_HIST_US]++;
	if (us > st->pin_max_us)
		st->pin_max_us = us;
}

uint64_t proxy_stats_quantile(const struct proxy_stats *st, double q)
{
	uint64_t total = 0, seen = 0, want;

	for (size_t i = 0; i <= PROXY_PIN_HIST_US; i++)
		total += st->pin_hist[i];
	if (total == 0)
		return 0;
	want = (uint64_t)(q * (double)total);
	if (want == 0)
		want = 1;
	for (size_t i = 0; i < PROXY_PIN_HIST_US; i++) {
		seen += st->pin_hist[i];
		if (seen >= want)
			return i + 1;
	}
	return st->pin_max_us;
}

const struct proxy_stats *proxy_get_stats(struct proxy *p)
{
	p->stats.pins_tracked = pintrack_total(p->pt);
	p->stats.cache_entries = p->cache ? cache_count(p->cache) : 0;
	return &p->stats;
}

void proxy_sandbox_reset(struct proxy *p, const char *sandbox)
{
	if (p)
		pintrack_reset(p->pt, sandbox);
}

int proxy_pin_extend(struct proxy *p, const char *sandbox, const struct fw_pin *pins, size_t n)
{
	uint64_t t0 = now_ms();	/* before the batch: see answer_pass() */
	int n_plan, r;

	if (n > PROXY_MAX_PINS)
		return -E2BIG;
	n_plan = pintrack_plan(p->pt, sandbox, pins, n, t0, p->cfg.max_pins_per_sandbox, p->plan);
	if (n_plan <= 0)
		return n_plan;
	r = p->ops->pin(p->ctx, sandbox, p->plan, (size_t)n_plan);
	if (r < 0)
		return r;
	if (pintrack_commit(p->pt, sandbox, p->plan, (size_t)n_plan, t0) < 0)
		log_warn("dns: out of memory tracking pins of sandbox %s", sandbox);
	return n_plan;
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;

	pintrack_expire(p->pt, now_ms());
	if (p->cache)
		cache_expire(p->cache, now_ms());
}

/*
 * tunnel_suspect() - does @qname carry a label that looks like data (DNS
 * tunnelling through an allowed wildcard): at least PROXY_LONG_LABEL
 * characters drawn from PROXY_LONG_LABEL_DISTINCT or more distinct ones
 * (base32/hex/base64 encodings; host names repeat letters far more).
 */
static bool tunnel_suspect(const char *qname)
{
	const char *label = qname;

	while (*label) {
		size_t len = strcspn(label, ".");

		if (len >= PROXY_LONG_LABEL) {
			bool seen[256] = { false };
			unsigned int distinct = 0;

			for (size_t i = 0; i < len; i++) {
				if (!seen[(uint8_t)label[i]])
					distinct++;
				seen[(uint8_t)label[i]] = true;
			}
			if (distinct >= PROXY_LONG_LABEL_DISTINCT)
				return true;
		}
		label += len;
		if (*label == '.')
			label++;
	}
	return false;
}

/*
 * cache_hit() - answer allowed query @q (@buf/@len as received) from the
 * cache: the stored response with its TTLs aged, the client's ID, its RD
 * bit and its question bytes (0x20 case preserved), then answer_pass() as
 * for a fresh answer, with @rules/@n_rules that decide_query() just
 * matched for @q.  Return: true if answered (SERVFAIL included).
 */
static bool cache_hit(struct proxy *p, const struct origin *o, const uint8_t *buf, size_t len,
		      const struct wire_query *q, const struct proxy_client *cl,
		      const uint16_t *rules, size_t n_rules)
{
	struct cache_key k;
	int n;

	cache_key_from_query(q, &k);
	n = cache_get(p->cache, &k, now_ms(), p->ans, sizeof(p->ans));
	/* The question is copied byte for byte, so it must be as long. */
	if (n < 0 || wire_question_end(p->ans, (size_t)n) != (int)q->question_end) {
		p->stats.cache_misses++;
		return false;
	}
	p->stats.cache_hits++;
	wire_set_id(p->ans, q->id);
	p->ans[2] = (uint8_t)((p->ans[2] & ~0x01) | (buf[2] & 0x01));	/* RD */
	memcpy(p->ans + WIRE_HDR_LEN, buf + WIRE_HDR_LEN, q->question_end - WIRE_HDR_LEN);
	answer_pass(p, o, buf, len, q, cl, (size_t)n, true, 0, rules, n_rules);
	return true;
}

/* ---- a query, from either transport -------------------------------------- */

static void query_in(struct proxy *p, const uint8_t *buf, size_t len, const struct origin *o)
{
	struct proxy_client cl = { 0 };
	struct wire_query q;
	struct verdict v = { 0 };
	uint16_t rules[DECIDE_MAX_RULES];
	struct decide_ctx dc;
	struct client_slot *slot;
	struct pending *pq;
	size_t n_rules;
	enum decide_verdict dv;
	char sandbox[128];
	uint64_t limited = 0;
	int r;

	r = wire_parse_query(buf, len, &q);
	if (r == -EPROTO) {	/* a response, or not even a header: no reply */
		p->n_dropped++;
		return;
	}
	if (p->ops->lookup(p->ctx, &o->client, &cl) < 0 || !cl.sandbox || !cl.policy) {
		/* Not a sandbox we know: refuse, nothing to audit. */
		if (r < 0)
			q.question_end = WIRE_HDR_LEN;
		reply_rcode(p, o, buf, len, &q, WIRE_RCODE_REFUSED);
		return;
	}
	{
		/* A copy: the name must outlive a reload during this call. */
		size_t sl = strnlen(cl.sandbox, sizeof(sandbox) - 1);

		memcpy(sandbox, cl.sandbox, sl);
		sandbox[sl] = '\0';
	}
	cl.sandbox = sandbox;
	v.sandbox = sandbox;
	v.policy = cl.policy->name;
	v.owner = cl.owner;

	if (!rate_ok(p, &o->client, &limited)) {
		/* Over its query rate: REFUSED, nothing upstream.  Logged and
		 * audited for the first refusal of a run, counted always. */
		p->stats.limit_qps++;
		if (limited == 1) {
			log_warn("dns: sandbox %s is over its query rate (%u/s, burst %u): "
				 "refusing", sandbox, p->cfg.qps, p->cfg.burst);
			v.reason = "rate-limit";
			v.rcode = WIRE_RCODE_REFUSED;
			audit(p, o, &q, &v);
		}
		if (r < 0)
			q.question_end = WIRE_HDR_LEN;
		reply_rcode(p, o, buf, len, &q, WIRE_RCODE_REFUSED);
		return;
	}

	if (r < 0) {
		/* RFC 1035 4.1.1: FORMERR / NOTIMP, with the question only if
		 * it parsed (question_end stays 12 otherwise). */
		v.rcode = r == -EOPNOTSUPP ? WIRE_RCODE_NOTIMP : WIRE_RCODE_FORMERR;
		v.reason = r == -EOPNOTSUPP ? "notimp" : "formerr";
		if (r == -EOPNOTSUPP)
			q.question_end = WIRE_HDR_LEN;
		reply_rcode(p, o, buf, len, &q, v.rcode);
		audit(p, o, &q, &v);
		return;
	}

	/* EDNS versions and qtypes netd answers itself: before cache and policy. */
	v.rcode = (uint8_t)decide_local(&q, &v.reason);
	if (v.rcode) {
		reply_rcode(p, o, buf, len, &q, v.rcode);
		audit(p, o, &q, &v);
		return;
	}

	if (tunnel_suspect(q.qname)) {
		/* Counted and logged; a rule's max_qname_length is what caps it. */
		p->stats.tunnel_suspect++;
		log_warn("dns: sandbox %s asked \"%s\": a long high-entropy label (DNS "
			 "tunnelling?)", sandbox, q.qname);
	}

	decide_ctx_init(p, cl.policy, &dc);
	dv = decide_query(&dc, &q, rules, &n_rules);
	if (dv != DECIDE_ALLOW) {
		/* Denied: nothing goes upstream. */
		v.reason = deny_reason(dv);
		v.rcode = p->cfg.deny_rcode;
		reply_rcode(p, o, buf, len, &q, v.rcode);
		audit(p, o, &q, &v);
		return;
	}

	/* Allowed (decided first: a denied name is never served from the
	 * cache): a cached answer goes through the same pin path. */
	if (p->cache && cache_hit(p, o, buf, len, &q, &cl, rules, n_rules))
		return;

	slot = slot_get(p, &o->client, true);
	if (!slot || p->n_pending >= PROXY_MAX_OUTSTANDING ||
	    slot->queries >= p->cfg.max_outstanding) {
		if (slot && slot->queries >= p->cfg.max_outstanding) {
			p->stats.limit_outstanding++;
			log_warn("dns: sandbox %s has %u queries upstream, the most allowed: "
				 "SERVFAIL for %s", sandbox, slot->queries, q.qname);
		}
		v.allowed = true;
		v.reason = "overload";
		v.rcode = WIRE_RCODE_SERVFAIL;
		reply_rcode(p, o, buf, len, &q, v.rcode);
		audit(p, o, &q, &v);
		if (slot)
			slot_put(p, &o->client);
		return;
	}
	pq = malloc(sizeof(*pq) + len);
	if (!pq) {
		v.allowed = true;
		v.reason = "no-memory";
		v.rcode = WIRE_RCODE_SERVFAIL;
		reply_rcode(p, o, buf, len, &q, v.rcode);
		audit(p, o, &q, &v);
		slot_put(p, &o->client);
		return;
	}
	memset(pq, 0, sizeof(*pq));
	pq->p = p;
	pq->o = *o;
	pq->q = q;
	pq->qlen = len;
	memcpy(pq->query, buf, len);
	pq->next = p->pending;
	if (p->pending)
		p->pending->prev = pq;
	p->pending = pq;
	p->n_pending++;
	slot->queries++;
	if (o->tcp) {
		o->conn->inflight++;
		o->conn->refs++;
	}
	if (o->l)
		o->l->refs++;
	/*
	 * The question and EDNS basics as the client sent them, nothing else
	 * (wire_build_upstream_query()); may call back right away.
	 */
	{
		uint8_t up[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
		int n = wire_build_upstream_query(buf, len, &q, up, sizeof(up));

		if (n < 0) {
			/* Cannot happen for a parsed query; fail it like an upstream error. */
			on_upstream(pq, n, NULL, 0);
			return;
		}
		upstream_send(p->up, up, (size_t)n, on_upstream, pq);
	}
}

/* ---- UDP ---------------------------------------------------------------- */

static void udp_rounds(struct proxy *p, int fd, struct listener *l);

static void on_udp(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	udp_rounds(arg, fd, NULL);
}

static void on_udp_listener(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)what;
	udp_rounds(l->p, fd, l);
}

/* udp_rounds() - read and answer what waits on @fd (@l: a gateway socket). */
static void udp_rounds(struct proxy *p, int fd, struct listener *l)
{
	/*
	 * recvmmsg(): up to PROXY_UDP_VLEN datagrams per system call.  A query
	 * longer than PROXY_UDP_RX bytes is not a DNS query (one question, an
	 * OPT record): it arrives truncated and is dropped.
	 */
	static uint8_t bufs[PROXY_UDP_VLEN][PROXY_UDP_RX];
	static union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + 64];
		struct cmsghdr align;
	} cbufs[PROXY_UDP_VLEN];
	static struct sockaddr_in6 peers[PROXY_UDP_VLEN];
	struct mmsghdr msgs[PROXY_UDP_VLEN];
	struct iovec iovs[PROXY_UDP_VLEN];

	for (int round = 0; round < PROXY_UDP_BATCH / PROXY_UDP_VLEN; round++) {
		int got;

		for (int i = 0; i < PROXY_UDP_VLEN; i++) {
			iovs[i] = (struct iovec){ .iov_base = bufs[i], .iov_len = sizeof(bufs[i]) };
			msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &peers[i],
				.msg_namelen = sizeof(peers[i]),
				.msg_iov = &iovs[i],
				.msg_iovlen = 1,
				.msg_control = cbufs[i].buf,
				.msg_controllen = sizeof(cbufs[i].buf),
			};
			msgs[i].msg_len = 0;
		}
		got = recvmmsg(fd, msgs, PROXY_UDP_VLEN, MSG_DONTWAIT, NULL);
		if (got <= 0)
			return;	/* EAGAIN, or an ICMP error queued on the socket */
		p->tx.on = true;
		p->tx.l = l;
		round_ms = clock_ms();
		for (int i = 0; i < got; i++) {
			struct msghdr *mh = &msgs[i].msg_hdr;
			struct origin o;

			memset(&o, 0, sizeof(o));
			o.l = l;
			memcpy(&o.peer, &peers[i], sizeof(o.peer));
			if (mh->msg_flags & (MSG_TRUNC | MSG_CTRUNC) ||
			    mh->msg_namelen < sizeof(o.peer) ||
			    addr_from_sockaddr((struct sockaddr *)&o.peer, &o.client) < 0) {
				p->n_dropped++;
				continue;
			}
			for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
				if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO &&
				    cm->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
					memcpy(&o.local, CMSG_DATA(cm), sizeof(o.local));
					o.have_local = true;
				}
			}
			query_in(p, bufs[i], msgs[i].msg_len, &o);
		}
		p->tx.on = false;
		round_ms = 0;
		udp_flush(p);
		if (got < PROXY_UDP_VLEN)
			return;
	}
}

/* ---- TCP (RFC 1035 4.2.2, RFC 7766) --------------------------------------- */

static void conn_unref(struct tcp_conn *c)
{
	if (--c->refs == 0)
		free(c);
}

static void conn_close(struct tcp_conn *c)
{
	struct proxy *p = c->p;
	struct client_slot *s;

	if (!c->bev)
		return;
	bufferevent_free(c->bev);	/* closes the socket */
	c->bev = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->n_conns--;
	s = slot_get(p, &c->client, false);
	if (s && s->conns)
		s->conns--;
	slot_put(p, &c->client);
	conn_unref(c);	/* pending queries still hold theirs */
}

/* conn_has_frame() - is a complete length-prefixed message buffered? */
static bool conn_has_frame(struct tcp_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	uint8_t hdr[2];

	if (evbuffer_copyout(in, hdr, 2) < 2)
		return false;
	return evbuffer_get_length(in) >= 2 + ((size_t)hdr[0] << 8 | hdr[1]);
}

/*
 * conn_update_read() - read only while the client is within its pipelining
 * and output limits; when room opens up, process messages that are already
 * buffered (deferred, so this never recurses into query_in()).  After the
 * client's EOF, close once everything is answered and flushed.
 */
static void conn_update_read(struct tcp_conn *c)
{
	bool room, frame;

	if (!c->bev)
		return;
	room = c->inflight < PROXY_CONN_INFLIGHT &&
	       evbuffer_get_length(bufferevent_get_output(c->bev)) <= PROXY_CONN_OUT_MAX;
	frame = conn_has_frame(c);
	if (c->eof) {
		if (frame && room)
			bufferevent_trigger(c->bev, EV_READ,
					    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
		else if (!frame && c->inflight == 0 &&
			 evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
			conn_close(c);
		return;
	}
	if (!room) {
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	bufferevent_enable(c->bev, EV_READ);
	if (frame)
		bufferevent_trigger(c->bev, EV_READ,
				    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

static void on_tcp_read(struct bufferevent *bev, void *arg)
{
	struct tcp_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	/* Hold a reference: a synchronous upstream failure may close @c. */
	c->refs++;
	while (c->bev && c->inflight < PROXY_CONN_INFLIGHT &&
	       evbuffer_get_length(bufferevent_get_output(c->bev)) <= PROXY_CONN_OUT_MAX) {
		uint8_t hdr[2];
		struct origin o;
		size_t mlen;

		if (evbuffer_copyout(in, hdr, 2) < 2)
			break;
		mlen = (size_t)hdr[0] << 8 | hdr[1];
		if (mlen < WIRE_HDR_LEN) {	/* not a message: give up on the stream */
			conn_close(c);
			break;
		}
		if (evbuffer_get_length(in) < 2 + mlen)
			break;
		evbuffer_drain(in, 2);
		if (evbuffer_remove(in, c->p->rx, mlen) != (int)mlen) {
			conn_close(c);
			break;
		}
		memset(&o, 0, sizeof(o));
		o.tcp = true;
		o.client = c->client;
		o.conn = c;
		query_in(c->p, c->p->rx, mlen, &o);
	}
	/*
	 * Slowloris: a byte now and then resets the idle timer, so a message
	 * that has started must also complete within PROXY_TCP_FRAME_S.
	 */
	if (c->bev && evbuffer_get_length(in) > 0 && !conn_has_frame(c)) {
		uint64_t now = now_ms();

		if (!c->partial_since_ms)
			c->partial_since_ms = now;
		else if (now - c->partial_since_ms > PROXY_TCP_FRAME_S * 1000) {
			conn_close(c);
			conn_unref(c);
			return;
		}
	} else {
		c->partial_since_ms = 0;
	}
	conn_update_read(c);
	conn_unref(c);
}

static void on_tcp_write(struct bufferevent *bev, void *arg)
{
	conn_update_read(arg);	/* output drained below the limit */
}

static void on_tcp_event(struct bufferevent *bev, short what, void *arg)
{
	struct tcp_conn *c = arg;

	if (what & BEV_EVENT_TIMEOUT) {
		/* Idle means no query in flight either (RFC 7766 6.2.3). */
		if (c->inflight > 0 && !(what & BEV_EVENT_WRITING)) {
			conn_update_read(c);
			return;
		}
		conn_close(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* Half-close: answer what is in flight, then close. */
		c->eof = true;
		conn_update_read(c);
		return;
	}
	conn_close(c);
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;

	for (int i = 0; i < 16; i++) {
		struct timeval idle = { .tv_sec = PROXY_TCP_IDLE_S };
		struct sockaddr_in6 peer;
		socklen_t plen = sizeof(peer);
		struct client_slot *s;
		struct tcp_conn *c;
		struct addr client;
		int cfd;

		cfd = accept4(fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			/* Out of descriptors: the listener stays readable, so
			 * stop watching it for a second instead of spinning. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				struct timeval pause = { .tv_sec = 1 };

				event_del(p->tcp_ev);
				evtimer_add(p->accept_pause, &pause);
			}
			return;
		}
		if (addr_from_sockaddr((struct sockaddr *)&peer, &client) < 0 ||
		    p->n_conns >= PROXY_MAX_CONNS) {
			close(cfd);
			continue;
		}
		s = slot_get(p, &client, true);
		if (!s || s->conns >= PROXY_MAX_CONNS_CLIENT) {
			close(cfd);
			if (s)
				slot_put(p, &client);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c || !(c->bev = bufferevent_socket_new(p->base, cfd, BEV_OPT_CLOSE_ON_FREE))) {
			free(c);
			close(cfd);
			slot_put(p, &client);
			continue;
		}
		c->p = p;
		c->client = client;
		c->refs = 1;
		s->conns++;
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->n_conns++;
		bufferevent_setcb(c->bev, on_tcp_read, on_tcp_write, on_tcp_event, c);
		/* Bounded input: at most one maximal message plus its length. */
		bufferevent_setwatermark(c->bev, EV_READ, 0, 2 + WIRE_MSG_MAX);
		bufferevent_set_timeouts(c->bev, &idle, &idle);
		bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	}
}

static void on_accept_pause(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;

	event_add(p->tcp_ev, NULL);
}

/* ---- setup ---------------------------------------------------------------- */

static int listen_socket(int type, uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd, one = 1, zero = 0, r;

	fd = socket(AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	if (type == SOCK_DGRAM &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	if (type == SOCK_STREAM && listen(fd, 128) < 0)
		goto fail;
	return fd;
fail:
	r = -errno;
	close(fd);
	return r;
}

/*
 * A UDP socket bound to @local's port 53 on interface @ifname.  IPv4 as an
 * IPv4-mapped address of an AF_INET6 socket, like the main socket;
 * FREEBIND: the address may not be configured yet.  Bound to the device:
 * only what arrives on the sandbox's own interface (whose sources
 * prerouting_raw checked) reaches it, never a packet from the uplink, and
 * sandboxes that share a gateway address each get their own.  SO_REUSEADDR,
 * so a host DNS server that sets it too can still bind the wildcard address
 * later (the kernel hands a sandbox's query to the better match: this
 * socket, bound to the address and the device); one that holds the port
 * without it makes the bind fail, and the caller keeps the redirect.
 */
static int listener_socket(const struct addr *local, const char *ifname)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(53) };
	int fd, one = 1, v6only = local->family == AF_INET6, r;

	if (local->family == AF_INET) {
		sa.sin6_addr.s6_addr[10] = 0xff;
		sa.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sa.sin6_addr.s6_addr[12], local->a, 4);
	} else if (local->family == AF_INET6) {
		memcpy(&sa.sin6_addr, local->a, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&sa.sin6_addr))
			return -EINVAL;	/* would need a scope: stays on the redirect */
	} else {
		return -EAFNOSUPPORT;
	}
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int proxy_listen_add(struct proxy *p, const struct addr *local, const char *ifname)
{
	struct listener *l;
	int fd;

	if (!p || !local || !ifname || !ifname[0] || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	fd = listener_socket(local, ifname);
	if (fd < 0)
		return fd;
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->p = p;
	l->fd = fd;
	/* A kernel that does not know UDP_SEGMENT would ignore the control
	 * message and send a group as one datagram: ask it first (never
	 * group on it if it does not). */
	l->no_gso = p->cfg.no_udp_gso;
	if (!l->no_gso && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &(int){ 0 }, sizeof(int)) < 0) {
		static bool said;

		l->no_gso = true;
		if (!said)
			log_warn("dns: the kernel refuses UDP_SEGMENT (%s): replies are never grouped",
				 strerror(errno));
		said = true;
	}
	snprintf(l->ifname, sizeof(l->ifname), "%s", ifname);
	l->ev = event_new(p->base, fd, EV_READ | EV_PERSIST, on_udp_listener, l);
	if (!l->ev || event_add(l->ev, NULL) < 0) {
		if (l->ev)
			event_free(l->ev);
		close(fd);
		free(l);
		return -ENOMEM;
	}
	if (p->next_listener_id <= 0 || p->next_listener_id == INT_MAX)
		p->next_listener_id = 1;
	l->id = p->next_listener_id++;
	l->next = p->listeners;
	p->listeners = l;
	return l->id;
}

/* Close @l (its socket and event now, its memory with its last reference). */
static void listener_close(struct listener *l)
{
	event_free(l->ev);
	l->ev = NULL;
	close(l->fd);
	l->fd = -1;
	l->refs++;
	listener_unref(l);
}

void proxy_listen_del(struct proxy *p, int id)
{
	for (struct listener **pp = p ? &p->listeners : NULL; pp && *pp; pp = &(*pp)->next) {
		struct listener *l = *pp;

		if (l->id != id)
			continue;
		*pp = l->next;
		listener_close(l);
		return;
	}
}

int proxy_new(struct event_base *base, const struct proxy_config *cfg,
	      const struct proxy_ops *ops, void *ctx, struct proxy **ret)
{
	struct proxy *p;
	int r;

	*ret = NULL;
	if (!ops || !ops->lookup || !ops->pin)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->base = base;
	p->cfg = *cfg;
	p->ops = ops;
	p->ctx = ctx;
	p->udp_fd = p->tcp_fd = -1;
	if (p->cfg.deny_rcode != WIRE_RCODE_REFUSED)
		p->cfg.deny_rcode = WIRE_RCODE_NXDOMAIN;
	if (p->cfg.max_ttl_s == 0)
		p->cfg.max_ttl_s = 3600;
	if (p->cfg.qps == 0)
		p->cfg.qps = PROXY_DEF_QPS;
	if (p->cfg.burst == 0)
		p->cfg.burst = p->cfg.qps > PROXY_DEF_BURST ? p->cfg.qps : PROXY_DEF_BURST;
	if (p->cfg.max_outstanding == 0)
		p->cfg.max_outstanding = PROXY_MAX_PER_CLIENT;
	if (p->cfg.max_pins_per_sandbox == 0)
		p->cfg.max_pins_per_sandbox = PROXY_DEF_PINS_PER_SANDBOX;
	if (p->cfg.max_addrs_per_name == 0)
		p->cfg.max_addrs_per_name = PROXY_DEF_ADDRS_PER_NAME;
	r = pintrack_new(&p->pt);
	if (r < 0)
		goto fail;
	if (p->cfg.cache_size > 0) {
		r = cache_new(p->cfg.cache_size, (size_t)p->cfg.cache_size * CACHE_BYTES_PER_ENTRY,
			      &p->cache);
		if (r < 0)
			goto fail;
	}

	r = upstream_new(base, cfg->upstream, cfg->n_upstream, cfg->upstream_timeout_ms, &p->up);
	if (r < 0)
		goto fail;
	r = p->udp_fd = listen_socket(SOCK_DGRAM, cfg->port);
	if (r < 0)
		goto fail;
	r = p->tcp_fd = listen_socket(SOCK_STREAM, cfg->port);
	if (r < 0)
		goto fail;
	p->udp_ev = event_new(base, p->udp_fd, EV_READ | EV_PERSIST, on_udp, p);
	p->tcp_ev = event_new(base, p->tcp_fd, EV_READ | EV_PERSIST, on_accept, p);
	p->accept_pause = evtimer_new(base, on_accept_pause, p);
	p->sweep = event_new(base, -1, EV_PERSIST, on_sweep, p);
	if (!p->udp_ev || !p->tcp_ev || !p->accept_pause || !p->sweep ||
	    event_add(p->udp_ev, NULL) < 0 || event_add(p->tcp_ev, NULL) < 0 ||
	    event_add(p->sweep, &(struct timeval){ .tv_sec = PROXY_SWEEP_S }) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	proxy_free(p);
	return r;
}

void proxy_free(struct proxy *p)
{
	if (!p)
		return;
	p->closing = true;
	/* Cancels every pending query: each callback frees its own. */
	upstream_free(p->up);
	p->up = NULL;
	while (p->conns)
		conn_close(p->conns);
	if (p->udp_ev)
		event_free(p->udp_ev);
	if (p->tcp_ev)
		event_free(p->tcp_ev);
	while (p->listeners) {
		struct listener *l = p->listeners;

		p->listeners = l->next;
		listener_close(l);	/* no pending query is left to hold it */
	}
	if (p->accept_pause)
		event_free(p->accept_pause);
	if (p->sweep)
		event_free(p->sweep);
	pintrack_free(p->pt);
	cache_free(p->cache);
	if (p->udp_fd >= 0)
		close(p->udp_fd);
	if (p->tcp_fd >= 0)
		close(p->tcp_fd);
	for (size_t i = 0; i < PROXY_CLIENT_BUCKETS; i++) {
		while (p->slots[i]) {
			struct client_slot *s = p->slots[i];

			p->slots[i] = s->next;
			free(s);
		}
	}
	free(p);
}
