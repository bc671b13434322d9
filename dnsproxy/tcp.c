/*
 * tcp - the proxy's TCP side (RFC 1035 4.2.2, RFC 7766): accept with
 * per-client and total connection limits, two-octet length framing,
 * pipelining up to PROXY_CONN_INFLIGHT queries, bounded output, idle and
 * slow-frame timeouts, half-close.  Not here: what a query means (query.c).
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dnsproxy/proxy_int.h"

static void conn_update_read(struct tcp_conn *c);

/* conn_unref() - drop a reference; the last one frees @c. */
static void conn_unref(struct tcp_conn *c)
{
	if (--c->refs == 0)
		free(c);
}

/* conn_close() - close @c's socket now; pending queries keep its memory. */
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

/* tcp_reply() - queue @msg with its RFC 1035 4.2.2 length prefix. */
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

static int tcp_send(struct proxy *p, const struct origin *o, const uint8_t *msg, size_t len)
{
	return tcp_reply(o->conn, msg, len);
}

static void tcp_hold(struct origin *o)
{
	o->conn->inflight++;
	o->conn->refs++;
}

static void tcp_release(struct origin *o)
{
	struct tcp_conn *c = o->conn;

	c->inflight--;
	conn_update_read(c);
	conn_unref(c);
}

static bool tcp_gone(const struct origin *o)
{
	return !o->conn->bev;
}

const struct transport tcp_transport = {
	.name = "tcp",
	.stream = true,
	.send = tcp_send,
	.hold = tcp_hold,
	.release = tcp_release,
	.gone = tcp_gone,
};

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
		o.t = &tcp_transport;
		o.client = c->client;
		o.conn = c;
		query_in(c->p, c->p->rx, mlen, &o);
	}
	/*
	 * Slowloris: a byte now and then resets the idle timer, so a message
	 * that has started must also complete within PROXY_TCP_FRAME_S.
	 */
	if (c->bev && evbuffer_get_length(in) > 0 && !conn_has_frame(c)) {
		uint64_t now = proxy_now_ms(c->p);

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

void on_accept(evutil_socket_t fd, short what, void *arg)
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

void on_accept_pause(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;

	event_add(p->tcp_ev, NULL);
}

void conns_close(struct proxy *p)
{
	while (p->conns)
		conn_close(p->conns);
}
