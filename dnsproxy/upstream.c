/*
 * upstream - c-ares driven by libevent.  c-ares reports the sockets it
 * wants watched through ARES_OPT_SOCK_STATE_CB; each gets one persistent
 * libevent event, and one timer follows ares_timeout() so retries and
 * timeouts fire without polling.  Not here: any DNS policy (see proxy.c).
 */
#include "dnsproxy/upstream.h"

#include <arpa/inet.h>
#include <ares.h>
#include <errno.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/addr.h"
#include "common/clock.h"

struct sock_watch {
	struct sock_watch *next;
	ares_socket_t fd;
	struct event *ev;
};

struct upstream {
	struct event_base *base;
	ares_channel ch;
	bool ch_ok;
	struct event *timer;
	struct sock_watch *watches;
	upstream_turn_fn turn;	/* around each ares_process_fd(); NULL: none */
	void *turn_arg;
	uint32_t try_ms;	/* c-ares's timeout of a first try */
	uint64_t timer_at_ms;	/* monotonic ms the timer is due; 0: not armed */
};

struct send_ctx {
	upstream_cb cb;
	void *arg;
};

/*
 * timer_update() - the timer at c-ares's next timeout.  ares_timeout()
 * walks every query in flight (c-ares 1.18), so this is not done per query:
 * timer_settle() skips it while the timer is due no later than any query
 * added now could time out (its first try: u->try_ms), and an early firing
 * only processes nothing and lands here.
 */
static void timer_update(struct upstream *u)
{
	struct timeval tv, *t;

	t = ares_timeout(u->ch, NULL, &tv);
	if (!t) {
		evtimer_del(u->timer);
		u->timer_at_ms = 0;
		return;
	}
	evtimer_add(u->timer, t);
	u->timer_at_ms = clock_mono_ms() + (uint64_t)t->tv_sec * 1000 + (uint64_t)t->tv_usec / 1000;
}

/* timer_settle() - after queries were added or answered: see timer_update(). */
static void timer_settle(struct upstream *u)
{
	if (u->timer_at_ms && evtimer_pending(u->timer, NULL) &&
	    u->timer_at_ms <= clock_mono_ms() + u->try_ms)
		return;
	timer_update(u);
}

/* process() - one turn of c-ares: what @rfd/@wfd have (a UDP socket: every
 * datagram waiting, read until EAGAIN), then its timeouts. */
static void process(struct upstream *u, ares_socket_t rfd, ares_socket_t wfd)
{
	if (u->turn)
		u->turn(u->turn_arg, true);
	ares_process_fd(u->ch, rfd, wfd);
	if (u->turn)
		u->turn(u->turn_arg, false);
	timer_settle(u);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct upstream *u = arg;

	u->timer_at_ms = 0;	/* fired: timer_settle() recomputes */
	process(u, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

static void on_sock(evutil_socket_t fd, short what, void *arg)
{
	/* May close @fd and free this very event through sock_state(). */
	process(arg, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
		(what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
}

static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct upstream *u = data;
	struct sock_watch **pp, *w = NULL;
	short what;

	for (pp = &u->watches; *pp; pp = &(*pp)->next) {
		if ((*pp)->fd == fd) {
			w = *pp;
			break;
		}
	}
	if (w) {
		event_free(w->ev);
		w->ev = NULL;
	}
	if (!readable && !writable) {
		if (w) {
			*pp = w->next;
			free(w);
		}
		return;
	}
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return;	/* the query times out: c-ares still has its timer */
		w->fd = fd;
		w->next = u->watches;
		u->watches = w;
	}
	what = EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	w->ev = event_new(u->base, fd, what, on_sock, u);
	if (w->ev)
		event_add(w->ev, NULL);
}

int upstream_new(struct event_base *base, const struct upstream_server *servers, size_t n,
		 uint32_t timeout_ms, struct upstream **ret)
{
	struct ares_addr_port_node *nodes = NULL;
	struct ares_options opts;
	struct upstream *u;
	int optmask, r;

	*ret = NULL;
	if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
		return -ENOMEM;
	u = calloc(1, sizeof(*u));
	if (!u) {
		ares_library_cleanup();
		return -ENOMEM;
	}
	u->base = base;
	u->timer = evtimer_new(base, on_timer, u);
	if (!u->timer) {
		r = -ENOMEM;
		goto fail;
	}

	memset(&opts, 0, sizeof(opts));
	/* NOCHECKRESP: SERVFAIL/REFUSED/NOTIMP answers reach the client
	 * as they are instead of being retried elsewhere and turned into
	 * an error by c-ares. */
	opts.flags = ARES_FLAG_NOCHECKRESP;
	u->try_ms = timeout_ms ? timeout_ms : 2000;
	opts.timeout = (int)u->try_ms;
	opts.tries = 2;
	opts.sock_state_cb = sock_state;
	opts.sock_state_cb_data = u;
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB;
	if (ares_init_options(&u->ch, &opts, optmask) != ARES_SUCCESS) {
		r = -ENOMEM;
		goto fail;
	}
	u->ch_ok = true;

	if (n) {
		nodes = calloc(n, sizeof(*nodes));
		if (!nodes) {
			r = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			nodes[i].next = i + 1 < n ? &nodes[i + 1] : NULL;
			nodes[i].family = servers[i].addr.family;
			if (servers[i].addr.family == AF_INET)
				memcpy(&nodes[i].addr.addr4, servers[i].addr.a, 4);
			else if (servers[i].addr.family == AF_INET6)
				memcpy(&nodes[i].addr.addr6, servers[i].addr.a, 16);
			else {
				r = -EINVAL;
				goto fail;
			}
			nodes[i].udp_port = servers[i].port ? servers[i].port : 53;
			nodes[i].tcp_port = nodes[i].udp_port;
		}
		if (ares_set_servers_ports(u->ch, nodes) != ARES_SUCCESS) {
			r = -EINVAL;
			goto fail;
		}
		free(nodes);
		nodes = NULL;
	}
	*ret = u;
	return 0;
fail:
	free(nodes);
	upstream_free(u);
	return r;
}

static void on_answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct send_ctx *s = arg;
	upstream_cb cb = s->cb;
	void *cb_arg = s->arg;
	int err;

	free(s);
	if (status == ARES_SUCCESS && abuf && alen >= 12)
		err = 0;
	else if (status == ARES_ETIMEOUT)
		err = -ETIMEDOUT;
	else if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED)
		err = -ECANCELED;
	else
		err = -EIO;
	cb(cb_arg, err, err ? NULL : abuf, err ? 0 : (size_t)alen);
}

void upstream_send(struct upstream *u, const uint8_t *query, size_t len, upstream_cb cb,
		   void *arg)
{
	struct send_ctx *s = malloc(sizeof(*s));

	if (!s) {
		cb(arg, -EIO, NULL, 0);
		return;
	}
	s->cb = cb;
	s->arg = arg;
	/* c-ares copies the query and replaces only its ID; on a TC=1
	 * answer it asks again over TCP (ARES_FLAG_IGNTC is not set). */
	ares_send(u->ch, query, (int)len, on_answer, s);
	timer_settle(u);
}

void upstream_set_turn(struct upstream *u, upstream_turn_fn fn, void *arg)
{
	u->turn = fn;
	u->turn_arg = arg;
}

void upstream_free(struct upstream *u)
{
	if (!u)
		return;
	if (u->ch_ok)
		ares_destroy(u->ch);	/* pending callbacks run with -ECANCELED */
	while (u->watches) {
		struct sock_watch *w = u->watches;

		u->watches = w->next;
		if (w->ev)
			event_free(w->ev);
		free(w);
	}
	if (u->timer)
		event_free(u->timer);
	free(u);
	ares_library_cleanup();	/* pairs with upstream_new()'s init */
}
