/*
 * ipfixexp - IPFIX export to collectors over UDP and TCP (see ipfixexp.h).
 * Each collector has a FIFO of encoded records (and of gaps: records
 * dropped while its session was up, which advance the Sequence Number
 * where they happened), one Message being sent at a time, and its timers.
 * Non-blocking sockets only: a write that would block waits for EV_WRITE,
 * and the FIFO's bound decides what is kept meanwhile.
 */
#include "netd/trail/ipfixexp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "netd/common/metrics.h"

#define CONNECT_TIMEOUT_S 10	/* a TCP connect that takes longer failed */
#define BACKOFF_MAX 16		/* the reconnect wait grows to 16 x reconnect_interval */
#define GAP 0			/* a FIFO entry's template id for "records dropped here" */

/*
 * The queue: entries of a 4-byte header (template id, length) and the
 * bytes; a gap's bytes are its count and the session it belongs to.
 */
struct fifo {
	uint8_t *buf;
	size_t head, tail, cap;
	size_t last;		/* offset of the newest entry; SIZE_MAX: none */
};

enum cstate { C_DOWN, C_CONNECTING, C_UP };

struct collector {
	struct ipfixexp *x;
	struct config_ipfix_collector cfg;
	int fd;
	enum cstate state;
	struct event *ev_read, *ev_write, *ev_timer, *ev_refresh;
	struct fifo q;
	uint32_t seq;		/* Data Records of this session before the next message */
	uint32_t session;	/* which session gaps belong to */
	bool tpl_due;		/* the next message carries the Template Set */
	bool tpl_with_data;	/* ... but only one that has records (after a refusal) */
	bool failing;		/* logged as failing; log when it works again */
	uint8_t *out;		/* the message being sent */
	size_t out_len, out_off;
	uint32_t out_records;
	bool out_tpl;
	uint64_t attempt_ms, up_ms;	/* monotonic: the last connect attempt; up since */
	uint32_t backoff_s;
	struct ipfixexp_stats st;
};

struct ipfixexp {
	struct event_base *base;
	struct config_ipfix cfg;
	struct collector *c;
	size_t n;
	struct event *flush_ev;
	uint8_t tset[IPFIX_TEMPLATE_SET_MAX];
	size_t tset_len;
};

static void get16(const uint8_t *p, uint16_t *v)
{
	*v = (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Room for @need more bytes at the tail.  Return: 0; -ENOMEM. */
static int fifo_room(struct fifo *f, size_t need)
{
	size_t cap;
	uint8_t *nb;

	if (f->tail + need <= f->cap)
		return 0;
	if (f->head) {		/* slide the live bytes down first */
		memmove(f->buf, f->buf + f->head, f->tail - f->head);
		f->tail -= f->head;
		if (f->last != SIZE_MAX)
			f->last -= f->head;
		f->head = 0;
		if (f->tail + need <= f->cap)
			return 0;
	}
	cap = f->cap ? f->cap : 4096;
	while (cap < f->tail + need)
		cap *= 2;
	nb = realloc(f->buf, cap);
	if (!nb)
		return -ENOMEM;
	f->buf = nb;
	f->cap = cap;
	return 0;
}

static int fifo_push(struct fifo *f, uint16_t tpl, const uint8_t *data, size_t len)
{
	uint8_t *p;

	if (fifo_room(f, 4 + len) < 0)
		return -ENOMEM;
	p = f->buf + f->tail;
	p[0] = (uint8_t)(tpl >> 8);
	p[1] = (uint8_t)tpl;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + 4, data, len);
	f->last = f->tail;
	f->tail += 4 + len;
	return 0;
}

/* One more record dropped in @session: merged into the newest entry if it is that gap. */
static void fifo_gap(struct fifo *f, uint32_t session)
{
	uint8_t g[8];
	uint16_t tpl;

	if (f->last != SIZE_MAX && f->last >= f->head) {
		uint8_t *p = f->buf + f->last;

		get16(p, &tpl);
		if (tpl == GAP && get32(p + 8) == session) {
			set32(p + 4, get32(p + 4) + 1);
			return;
		}
	}
	set32(g, 1);
	set32(g + 4, session);
	fifo_push(f, GAP, g, sizeof(g));	/* out of memory: the gap goes unseen, still counted */
}

static bool fifo_empty(const struct fifo *f)
{
	return f->head == f->tail;
}

/* The oldest entry: its template id, bytes and length. */
static const uint8_t *fifo_peek(const struct fifo *f, uint16_t *tpl, uint16_t *len)
{
	const uint8_t *p = f->buf + f->head;

	get16(p, tpl);
	get16(p + 2, len);
	return p + 4;
}

static void fifo_pop(struct fifo *f)
{
	uint16_t len;

	get16(f->buf + f->head + 2, &len);
	f->head += 4 + len;
	if (f->head == f->tail) {
		f->head = f->tail = 0;
		f->last = SIZE_MAX;
	}
}

static void c_connect(struct collector *c);
static void pump(struct collector *c);
static void on_write(evutil_socket_t fd, short what, void *arg);
static void on_read(evutil_socket_t fd, short what, void *arg);

static const char *name_of(const struct collector *c)
{
	return c->st.name;
}

/* When the next connection attempt may start, after a failure now. */
static void schedule_retry(struct collector *c)
{
	uint32_t r = c->x->cfg.reconnect_s;
	uint64_t now = clock_mono_ms(), at;
	struct timeval tv;

	/* A session that lasted an interval starts the backoff over. */
	if (c->up_ms && now - c->up_ms >= (uint64_t)r * 1000)
		c->backoff_s = r;
	else
		c->backoff_s = c->backoff_s ? (c->backoff_s < r * (BACKOFF_MAX / 2) ?
					       c->backoff_s * 2 : r * BACKOFF_MAX) : r;
	/* RFC 7011 10.4.4: attempts at least an interval apart, from attempt to attempt. */
	at = c->attempt_ms + (uint64_t)c->backoff_s * 1000;
	at = at > now ? at - now : 0;
	tv.tv_sec = (time_t)(at / 1000);
	tv.tv_usec = (suseconds_t)(at % 1000) * 1000;
	evtimer_add(c->ev_timer, &tv);
}

/* The session ended (or never began): close, drop the message in flight, retry later. */
static void c_fail(struct collector *c, int err, const char *what)
{
	if (!c->failing)
		log_warn("ipfix: collector %s: %s: %s; retrying (records queue up to %llu bytes "
			 "meanwhile, then are dropped and counted)", name_of(c), what,
			 strerror(err), (unsigned long long)c->x->cfg.buffer_bytes);
	c->failing = true;
	c->st.up = false;
	if (c->fd >= 0) {
		event_del(c->ev_read);
		event_del(c->ev_write);
		event_del(c->ev_refresh);
		close(c->fd);
		c->fd = -1;
	}
	/* Part of a message may have left: the collector discards it, so it counts as lost. */
	c->st.records_dropped += c->out_records;
	c->out_len = c->out_off = 0;
	c->out_records = 0;
	c->state = C_DOWN;
	evtimer_del(c->ev_timer);
	schedule_retry(c);
	c->up_ms = 0;
}

/* A new Transport Session: Sequence Numbers from 0, Templates first (RFC 7011 8). */
static void c_up(struct collector *c)
{
	c->state = C_UP;
	c->seq = 0;
	c->session++;
	c->tpl_due = true;
	c->tpl_with_data = false;
	c->up_ms = clock_mono_ms();
	c->st.sessions++;
	c->st.up = true;
	evtimer_del(c->ev_timer);
	if (c->failing)
		log_info("ipfix: collector %s: %s", name_of(c),
			 c->cfg.tcp ? "connected" : "sending again");
	c->failing = false;
	if (c->cfg.tcp) {
		event_add(c->ev_read, NULL);
	} else {
		struct timeval tv = { .tv_sec = c->x->cfg.template_refresh_s };

		event_add(c->ev_refresh, &tv);
	}
	pump(c);
}

static socklen_t sockaddr_of(const struct config_ipfix_collector *cl, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (cl->addr.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(cl->port);
		memcpy(&s4->sin_addr, cl->addr.a, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(cl->port);
	memcpy(&s6->sin6_addr, cl->addr.a, 16);
	return sizeof(*s6);
}

static void c_connect(struct collector *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(&c->cfg, &ss);
	int type = (c->cfg.tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC;

	c->attempt_ms = clock_mono_ms();
	c->fd = socket(c->cfg.addr.family, type, 0);
	if (c->fd < 0) {
		c_fail(c, errno, "socket");
		return;
	}
	event_assign(c->ev_write, c->x->base, c->fd, EV_WRITE, on_write, c);
	event_assign(c->ev_read, c->x->base, c->fd, EV_READ | EV_PERSIST, on_read, c);
	/* UDP too: a connected socket hears the collector's ICMP refusals. */
	if (connect(c->fd, (struct sockaddr *)&ss, len) == 0) {
		c_up(c);
		return;
	}
	if (errno == EINPROGRESS && c->cfg.tcp) {
		struct timeval tv = { .tv_sec = CONNECT_TIMEOUT_S };

		c->state = C_CONNECTING;
		event_add(c->ev_write, NULL);
		evtimer_add(c->ev_timer, &tv);
		return;
	}
	c_fail(c, errno, "connect");
}

/* The message in flight went out whole. */
static void sent(struct collector *c)
{
	c->st.records_sent += c->out_records;
	c->st.messages_sent++;
	c->st.templates_sent += c->out_tpl;
	c->st.up = true;
	c->out_len = c->out_off = 0;
	c->out_records = 0;
	c->out_tpl = false;
}

/*
 * Send the message in flight.  Return: true to go on (sent, or lost and
 * counted); false to stop (waiting for EV_WRITE, or the session failed).
 */
static bool send_out(struct collector *c)
{
	ssize_t n;

	if (c->cfg.tcp)
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
	else
		n = send(c->fd, c->out, c->out_len, 0);
	if (n >= 0) {
		c->out_off += (size_t)n;
		if (!c->cfg.tcp || c->out_off == c->out_len)
			sent(c);
		return true;
	}
	if (errno == EINTR)
		return true;
	if (errno == EAGAIN || errno == EWOULDBLOCK || (!c->cfg.tcp && errno == ENOBUFS)) {
		event_add(c->ev_write, NULL);
		return false;
	}
	if (!c->cfg.tcp && errno == ECONNREFUSED) {
		/*
		 * An ICMP port unreachable for an earlier datagram: this one was
		 * not sent.  The collector is down, or was: its Templates go
		 * again in the next message, in case it came back without them.
		 */
		if (!c->failing)
			log_warn("ipfix: collector %s: refused (nothing listens?); its records are "
				 "dropped and counted until it answers", name_of(c));
		c->failing = true;
		c->st.up = false;
		c->st.records_dropped += c->out_records;
		c->out_len = c->out_off = 0;
		c->out_records = 0;
		c->out_tpl = false;
		/* Not alone: that would only draw the next refusal. */
		c->tpl_due = c->tpl_with_data = true;
		return true;
	}
	c_fail(c, errno, "send");
	return false;
}

/*
 * The next message from the queue into c->out: the Template Set if due,
 * then whole records while they fit; a gap of this session ends it.
 * Return: true if there is one to send.
 */
static bool build(struct collector *c)
{
	const struct config_ipfix *cfg = &c->x->cfg;
	struct ipfix_msg m;
	uint32_t seq;
	bool tpl = false;

	if (fifo_empty(&c->q) && (!c->tpl_due || c->tpl_with_data))
		return false;
	ipfix_msg_init(&m, c->out, cfg->message_size);
	if (c->tpl_due && ipfix_msg_add_set(&m, c->x->tset, c->x->tset_len) == 0) {
		tpl = true;
		c->tpl_due = c->tpl_with_data = false;
	}
	seq = c->seq;
	while (!fifo_empty(&c->q)) {
		uint16_t tid, len;
		const uint8_t *p = fifo_peek(&c->q, &tid, &len);

		if (tid == GAP) {
			if (get32(p + 4) != c->session) {	/* an earlier session's: moot */
				fifo_pop(&c->q);
				continue;
			}
			if (m.records)
				break;	/* the header's number must say where the gap is */
			c->seq += get32(p);
			seq = c->seq;
			fifo_pop(&c->q);
			continue;
		}
		if (ipfix_msg_add_record(&m, tid, p, len) < 0) {
			if (m.records || tpl)
				break;	/* the next message */
			c->st.records_dropped++;	/* cannot fit any message: lost, counted */
			seq = ++c->seq;
		}
		c->st.queued_records--;
		c->st.queued_bytes -= 4u + len;
		fifo_pop(&c->q);
	}
	if (ipfix_msg_empty(&m))
		return false;
	c->seq += m.records;
	c->out_len = ipfix_msg_finish(&m, (uint32_t)time(NULL), seq, cfg->observation_domain);
	c->out_off = 0;
	c->out_records = m.records;
	c->out_tpl = tpl;
	return true;
}

/* Send until the queue is empty or the socket is full. */
static void pump(struct collector *c)
{
	while (c->state == C_UP) {
		if (c->out_len) {
			if (!send_out(c))
				return;
			continue;
		}
		if (!build(c))
			return;
	}
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	struct collector *c = arg;
	int err = 0;
	socklen_t el = sizeof(err);

	(void)fd;
	(void)what;
	if (c->state == C_CONNECTING) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (err)
			c_fail(c, err, "connect");
		else
			c_up(c);
		return;
	}
	pump(c);
}

/* TCP: a collector sends nothing; end of stream or an error ends the session. */
static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct collector *c = arg;
	char buf[512];
	ssize_t n;

	(void)what;
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	c_fail(c, n == 0 ? ECONNRESET : errno, "connection lost");
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct collector *c = arg;

	(void)fd;
	(void)what;
	if (c->state == C_CONNECTING)
		c_fail(c, ETIMEDOUT, "connect");
	else if (c->state == C_DOWN)
		c_connect(c);
}

/* UDP: the Templates again on schedule (RFC 7011 8.4), with data or alone. */
static void on_refresh(evutil_socket_t fd, short what, void *arg)
{
	struct collector *c = arg;

	(void)fd;
	(void)what;
	c->tpl_due = true;
	c->tpl_with_data = false;
	pump(c);
}

void ipfixexp_flush(struct ipfixexp *x)
{
	for (size_t i = 0; x && i < x->n; i++)
		pump(&x->c[i]);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ipfixexp_flush(arg);
}

void ipfixexp_add(struct ipfixexp *x, const struct ipfix_flow *f)
{
	uint8_t rec[IPFIX_RECORD_MAX];
	uint16_t tid;
	int n;

	if (!x)
		return;
	n = ipfix_record(f, rec, sizeof(rec), &tid);
	for (size_t i = 0; i < x->n; i++) {
		struct collector *c = &x->c[i];

		if (n < 0 || c->st.queued_bytes + 4u + (size_t)n > x->cfg.buffer_bytes ||
		    fifo_push(&c->q, tid, rec, (size_t)n) < 0) {
			c->st.records_dropped++;
			if (c->state == C_UP)
				fifo_gap(&c->q, c->session);
			continue;
		}
		c->st.queued_records++;
		c->st.queued_bytes += 4u + (size_t)n;
	}
	/* Sent when this loop turn ends: a burst of closes shares messages. */
	event_active(x->flush_ev, 0, 0);
}

int ipfixexp_new(struct event_base *base, const struct config_ipfix *cfg, struct ipfixexp **ret)
{
	struct ipfixexp *x;
	int r;

	if (!cfg->n_collectors || cfg->n_collectors > CONFIG_IPFIX_MAX_COLLECTORS)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->base = base;
	x->cfg = *cfg;
	r = ipfix_template_set(cfg->enterprise, x->tset, sizeof(x->tset));
	x->tset_len = r > 0 ? (size_t)r : 0;
	x->c = calloc(cfg->n_collectors, sizeof(*x->c));
	x->flush_ev = event_new(base, -1, 0, on_flush, x);
	if (!x->c || !x->flush_ev || r < 0)
		goto oom;
	x->n = cfg->n_collectors;
	for (size_t i = 0; i < x->n; i++) {
		struct collector *c = &x->c[i];

		c->x = x;
		c->fd = -1;
		c->cfg = cfg->collectors[i];
		c->q.last = SIZE_MAX;
		config_ipfix_format(&c->cfg, c->st.name, sizeof(c->st.name));
		c->out = malloc(cfg->message_size);
		c->ev_read = event_new(base, -1, EV_READ | EV_PERSIST, on_read, c);
		c->ev_write = event_new(base, -1, EV_WRITE, on_write, c);
		c->ev_timer = evtimer_new(base, on_timer, c);
		c->ev_refresh = event_new(base, -1, EV_PERSIST, on_refresh, c);
		if (!c->out || !c->ev_read || !c->ev_write || !c->ev_timer || !c->ev_refresh)
			goto oom;
	}
	for (size_t i = 0; i < x->n; i++)
		c_connect(&x->c[i]);
	*ret = x;
	return 0;
oom:
	ipfixexp_free(x);
	return -ENOMEM;
}

void ipfixexp_free(struct ipfixexp *x)
{
	if (!x)
		return;
	for (size_t i = 0; x->c && i < x->n; i++) {
		struct collector *c = &x->c[i];

		pump(c);	/* what the socket takes now; nothing is waited for */
		c->st.records_dropped += c->st.queued_records + c->out_records;
		if (c->fd >= 0)
			close(c->fd);
		if (c->ev_read)
			event_free(c->ev_read);
		if (c->ev_write)
			event_free(c->ev_write);
		if (c->ev_timer)
			event_free(c->ev_timer);
		if (c->ev_refresh)
			event_free(c->ev_refresh);
		free(c->q.buf);
		free(c->out);
	}
	if (x->flush_ev)
		event_free(x->flush_ev);
	free(x->c);
	free(x);
}

int ipfixexp_stats(const struct ipfixexp *x, size_t i, struct ipfixexp_stats *out)
{
	if (!x || i >= x->n)
		return -ENOENT;
	*out = x->c[i].st;
	return 0;
}

json_t *ipfixexp_status_json(const struct ipfixexp *x)
{
	json_t *a = json_array();

	for (size_t i = 0; a && x && i < x->n; i++) {
		const struct ipfixexp_stats *s = &x->c[i].st;

		json_array_append_new(a, json_pack("{s:s, s:b, s:I, s:I, s:I, s:I}", "collector",
						   s->name, "up", s->up, "sent",
						   (json_int_t)s->records_sent, "dropped",
						   (json_int_t)s->records_dropped, "queued",
						   (json_int_t)s->queued_records, "sessions",
						   (json_int_t)s->sessions));
	}
	return a;
}

/* One family with a series per collector: the uint64_t at @off of its stats. */
static void family(const struct ipfixexp *x, FILE *out, const char *name, const char *type,
		   const char *help, size_t off, bool is_bool)
{
	metrics_family(out, name, type, help);
	for (size_t i = 0; x && i < x->n; i++) {
		const struct ipfixexp_stats *s = &x->c[i].st;
		const char *l[] = { "collector", s->name, NULL };
		uint64_t v = 0;

		if (is_bool)
			v = s->up;
		else
			memcpy(&v, (const char *)s + off, sizeof(v));
		metrics_u64(out, name, l, v);
	}
}

void ipfixexp_metrics(const struct ipfixexp *x, FILE *out)
{
	family(x, out, "netd_ipfix_records_sent_total", "counter",
	       "IPFIX Data Records (connections) sent to the collector.",
	       offsetof(struct ipfixexp_stats, records_sent), false);
	family(x, out, "netd_ipfix_records_dropped_total", "counter",
	       "IPFIX Data Records lost: the collector's queue was full, it refused them, or "
	       "its connection was lost with them in flight.",
	       offsetof(struct ipfixexp_stats, records_dropped), false);
	family(x, out, "netd_ipfix_messages_sent_total", "counter",
	       "IPFIX Messages sent to the collector.",
	       offsetof(struct ipfixexp_stats, messages_sent), false);
	family(x, out, "netd_ipfix_template_sends_total", "counter",
	       "IPFIX Messages that carried the Template Set.",
	       offsetof(struct ipfixexp_stats, templates_sent), false);
	family(x, out, "netd_ipfix_sessions_total", "counter",
	       "Transport Sessions started: TCP connections made, UDP sockets opened.",
	       offsetof(struct ipfixexp_stats, sessions), false);
	family(x, out, "netd_ipfix_queued_records", "gauge",
	       "IPFIX Data Records waiting for the collector.",
	       offsetof(struct ipfixexp_stats, queued_records), false);
	family(x, out, "netd_ipfix_queued_bytes", "gauge",
	       "Bytes of records waiting for the collector (at most ipfix.buffer_size).",
	       offsetof(struct ipfixexp_stats, queued_bytes), false);
	family(x, out, "netd_ipfix_collector_up", "gauge",
	       "1 if the collector is reachable: TCP connected, UDP not refusing.", 0, true);
}
