/*
 * udp - the proxy's UDP side: the main socket on [::]:port (queries a
 * sandbox sent to any address, redirected here) and one socket per
 * sandbox gateway (proxy_listen_add()), each read in recvmmsg() rounds
 * whose replies leave together (sendmmsg(), UDP GSO on gateway sockets).
 * Not here: what a query means (query.c).
 */
#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/log.h"
#include "dnsproxy/proxy_int.h"

/* ---- replies ------------------------------------------------------------ */

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

	if (l->no_gso || proxy_now_ms(l->p) < l->gso_off_ms)
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
				l->gso_off_ms = proxy_now_ms(p) + 1000;
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
	if (p->tx.on && len <= PROXY_UDP_TX) {
		/* Inside a round or a turn: queue a copy; udp_flush() sends it.
		 * The queue is one socket's: a reply from another sends it first. */
		unsigned int i;

		if (o->l != p->tx.l) {
			udp_flush(p);
			p->tx.l = o->l;
		}
		i = p->tx.n++;
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

void udp_answers_turn(struct proxy *p, bool begin)
{
	if (begin) {
		p->tx.on = true;
		p->tx.l = NULL;
		p->round_ms = p->clock_ms(p->clock_ctx);
		return;
	}
	p->tx.on = false;
	p->round_ms = 0;
	udp_flush(p);
}

/* Free @l once it is closed and no pending query refers to it. */
static void listener_unref(struct listener *l)
{
	if (l->refs)
		l->refs--;
	if (l->fd < 0 && l->refs == 0)
		free(l);
}

static void udp_hold(struct origin *o)
{
	if (o->l)
		o->l->refs++;
}

static void udp_release(struct origin *o)
{
	if (o->l)
		listener_unref(o->l);
}

const struct transport udp_transport = {
	.name = "udp",
	.stream = false,
	.send = udp_reply,
	.hold = udp_hold,
	.release = udp_release,
};

/* ---- receive rounds ----------------------------------------------------- */

static void udp_rounds(struct proxy *p, int fd, struct listener *l);

void on_udp(evutil_socket_t fd, short what, void *arg)
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

/*
 * udp_origin() - where the reply to datagram @mh (from @peer, to socket
 * @l) goes, with the address it was sent to (IPV6_PKTINFO).
 * Return: 0; -EBADMSG (truncated, or not from an IP address).
 */
static int udp_origin(struct msghdr *mh, const struct sockaddr_in6 *peer, struct listener *l,
		      struct origin *o)
{
	memset(o, 0, sizeof(*o));
	o->t = &udp_transport;
	o->l = l;
	memcpy(&o->peer, peer, sizeof(o->peer));
	if (mh->msg_flags & (MSG_TRUNC | MSG_CTRUNC) || mh->msg_namelen < sizeof(o->peer) ||
	    addr_from_sockaddr((struct sockaddr *)&o->peer, &o->client) < 0)
		return -EBADMSG;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
			memcpy(&o->local, CMSG_DATA(cm), sizeof(o->local));
			o->have_local = true;
		}
	}
	return 0;
}

/*
 * The receive side of udp_rounds(): PROXY_UDP_VLEN buffers and the headers
 * recvmmsg() fills.  A query longer than PROXY_UDP_RX bytes is not a DNS
 * query (one question, an OPT record): it arrives truncated and is dropped.
 * One set for the process (the loop is single-threaded and a round ends
 * before the next begins).
 */
static struct {
	uint8_t bufs[PROXY_UDP_VLEN][PROXY_UDP_RX];
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + 64];
		struct cmsghdr align;
	} cbufs[PROXY_UDP_VLEN];
	struct sockaddr_in6 peers[PROXY_UDP_VLEN];
	struct mmsghdr msgs[PROXY_UDP_VLEN];
	struct iovec iovs[PROXY_UDP_VLEN];
	int armed;		/* msgs[0..armed) are ready for recvmmsg() */
} rx;

/*
 * Make rx.msgs[0..@n) ready for the next recvmmsg() again: the kernel wrote
 * the lengths and flags of those it filled and left the others as they
 * were, so a round that read 3 datagrams costs 3 headers, not PROXY_UDP_VLEN.
 */
static void rx_arm(int n)
{
	for (int i = 0; i < n; i++) {
		rx.iovs[i] = (struct iovec){ .iov_base = rx.bufs[i], .iov_len = sizeof(rx.bufs[i]) };
		rx.msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &rx.peers[i],
			.msg_namelen = sizeof(rx.peers[i]),
			.msg_iov = &rx.iovs[i],
			.msg_iovlen = 1,
			.msg_control = rx.cbufs[i].buf,
			.msg_controllen = sizeof(rx.cbufs[i].buf),
		};
		rx.msgs[i].msg_len = 0;
	}
}

/* udp_rounds() - read and answer what waits on @fd (@l: a gateway socket). */
static void udp_rounds(struct proxy *p, int fd, struct listener *l)
{
	if (rx.armed < PROXY_UDP_VLEN) {
		rx_arm(PROXY_UDP_VLEN);
		rx.armed = PROXY_UDP_VLEN;
	}
	for (int round = 0; round < PROXY_UDP_BATCH / PROXY_UDP_VLEN; round++) {
		int got = recvmmsg(fd, rx.msgs, PROXY_UDP_VLEN, MSG_DONTWAIT, NULL);

		if (got <= 0)
			return;	/* EAGAIN, or an ICMP error queued on the socket */
		p->tx.on = true;
		p->tx.l = l;
		p->round_ms = p->clock_ms(p->clock_ctx);
		for (int i = 0; i < got; i++) {
			struct origin o;

			if (udp_origin(&rx.msgs[i].msg_hdr, &rx.peers[i], l, &o) < 0) {
				p->n_dropped++;
				continue;
			}
			query_in(p, rx.bufs[i], rx.msgs[i].msg_len, &o);
		}
		rx_arm(got);
		p->tx.on = false;
		p->round_ms = 0;
		udp_flush(p);
		if (got < PROXY_UDP_VLEN)
			return;
	}
}

/* ---- gateway listeners ------------------------------------------------------ */

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

/* listeners_close() - close every gateway listener (teardown: no pending
 * query is left to hold one). */
void listeners_close(struct proxy *p)
{
	while (p->listeners) {
		struct listener *l = p->listeners;

		p->listeners = l->next;
		listener_close(l);
	}
}
