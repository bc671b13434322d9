/*
 * netd/trail/ - what happened, and the record of it: conntrack events
 * (acct.c) and nflog denials (nflog.c), decoded by ctmsg.c (pure); live
 * flows (flowtab.c), folded denials (denyfold.c), the names behind pins
 * (netd/model/pinreg.c), the idle grace (grace.c), a reload's cuts
 * (ctcut.c); the records and counters (trail.c) and the audit log writer
 * (audit.c).
 */
/*
 * acct - conntrack events and dumps over ctnetlink (libmnl), on libevent.
 * Decoding is ctmsg.c's; what a flow means is the trail's.  See acct.h
 * for why DESTROY events are not lost, what a resync does and where
 * ACCT_CLOSE comes from.
 */
#include "netd/trail/acct.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/nlbuf.h"

#define ACCT_RCVBUF_DEFAULT (8u << 20)	/* bytes */
#define ACCT_DUMP_TIMEOUT_S 5
#define ACCT_POLL_BATCH     4096	/* messages per read callback, then yield */
#define ACCT_UPD_RCVBUF     (4u << 20)	/* bytes: the best-effort UPDATE socket */
#define ACCT_SETTLE_MAX     8192	/* closes waiting for their settle time */

/* A TCP close waiting ACCT_SETTLE_MS before its counters are read. */
struct settle {
	struct ct_flow f;
	uint64_t when_ns;	/* the close (realtime): the record's end */
	uint64_t due_ms;	/* monotonic */
};

struct acct {
	struct event_base *base;
	struct acct_config cfg;
	const struct acct_ops *ops;
	void *ctx;
	struct mnl_socket *ev;	/* DESTROY events */
	struct mnl_socket *dump;	/* GET dumps, blocking with a timeout */
	uint32_t dump_portid, seq;
	struct event *ev_read, *ev_timer;
	struct mnl_socket *upd;	/* NEW and UPDATE events, best effort */
	struct event *ev_upd;
	uint64_t next_update_ns;	/* the next dump that reports ACCT_UPDATE */
	struct settle *settle;	/* ring of ACCT_SETTLE_MAX, FIFO = due order */
	size_t settle_head, settle_n;
	struct event *ev_settle;
	struct acct_stats st;
	char buf[1 << 16];	/* DESTROY events, dumps, GET replies */
	char ubuf[1 << 16];	/* NEW/UPDATE events (a GET happens while one is walked) */
};

static int write_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		r = -errno;
	else if ((size_t)n != strlen(val))
		r = -EIO;
	close(fd);
	return r;
}

int acct_sysctl_enable(void)
{
	int r = write_sysctl("/proc/sys/net/netfilter/nf_conntrack_acct", "1");

	if (r < 0)
		return r;
	return write_sysctl("/proc/sys/net/netfilter/nf_conntrack_timestamp", "1");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- events --------------------------------------------------------------- */

struct run_arg {
	struct acct *a;
	enum acct_kind kind;	/* ACCT_END for events; dumps decide per entry */
	bool report;		/* a dump: report entries (ACCT_LIVE / ACCT_UPDATE) */
	bool update_due;	/* ... and ACCT_UPDATE for the old ones */
	uint64_t now_ns;
	uint64_t live;
};

static void msg_cb(const void *msg, size_t len, void *data)
{
	struct run_arg *ra = data;
	struct acct *a = ra->a;
	struct ct_flow f;
	int t = ct_parse(msg, len, &f);

	if (t < 0) {
		if (t == -EBADMSG)
			a->st.bad++;
		return;
	}
	if (ACCT_MARK_SLOT(f.mark) < 0)
		return;
	if (ra->kind == ACCT_END) {
		if (t != CT_EV_DESTROY)
			return;
		a->st.ended++;
		a->ops->flow(a->ctx, ACCT_END, &f);
		return;
	}
	/* A dump entry: live.  An update is due if it is older than the interval. */
	ra->live++;
	if (!ra->report)
		return;
	if (ra->update_due && a->cfg.update_interval_s && f.start_ns &&
	    ra->now_ns - f.start_ns >= (uint64_t)a->cfg.update_interval_s * 1000000000u) {
		a->st.updates++;
		a->ops->flow(a->ctx, ACCT_UPDATE, &f);
	} else {
		a->ops->flow(a->ctx, ACCT_LIVE, &f);
	}
}

/*
 * Dump the live entries carrying netd's mark (the kernel filters by
 * CTA_MARK/CTA_MARK_MASK).  @report: pass them to the caller (ACCT_LIVE,
 * or ACCT_UPDATE for old ones if @update_due).
 */
static int dump_live(struct acct *a, bool report, bool update_due, uint64_t *ret_live)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct run_arg ra = { .a = a, .kind = ACCT_UPDATE, .report = report,
			      .update_due = update_due, .now_ns = now_ns() };
	uint32_t seq = ++a->seq;
	struct nlmsghdr *nlh = ct_put_request(req, IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC, seq);
	ssize_t n;
	int r = 0;

	mnl_attr_put_u32(nlh, CTA_MARK, htonl(ACCT_MARK_BASE));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(ACCT_MARK_MASK));
	if (mnl_socket_sendto(a->dump, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = nlbuf_recv(mnl_socket_get_fd(a->dump), a->buf, sizeof(a->buf), 0);
		if (n < 0) {
			r = (int)n;
			break;
		}
		r = ct_walk(a->buf, (size_t)n, seq, msg_cb, &ra);
		if (r != 0) {
			r = r < 0 ? r : 0;
			break;
		}
	}
	if (ret_live)
		*ret_live = ra.live;
	return r;
}

static void resync(struct acct *a)
{
	uint64_t live = 0;
	int r = dump_live(a, false, false, &live);

	a->st.resyncs++;
	if (r < 0) {
		log_err("conntrack: resync dump failed: %s", strerror(-r));
		return;
	}
	a->st.live_at_resync = live;
	log_warn("conntrack: resync done: %llu live connections of sandboxes; destroy events "
		 "for them are re-sent by the kernel (reliable delivery)",
		 (unsigned long long)live);
}

int acct_poll(struct acct *a)
{
	struct run_arg ra = { .a = a, .kind = ACCT_END };
	int handled = 0;

	for (int i = 0; i < ACCT_POLL_BATCH; i++) {
		ssize_t n = nlbuf_recv(mnl_socket_get_fd(a->ev), a->buf, sizeof(a->buf), MSG_DONTWAIT);

		if (n == -EMSGSIZE) {
			a->st.bad++;	/* not read, as a bad length is not walked */
			continue;
		}
		if (n < 0) {
			if (n == -EAGAIN || n == -EWOULDBLOCK)
				break;
			if (n == -ENOBUFS) {
				/* The kernel could not queue an event to us. */
				a->st.enobufs++;
				log_warn("conntrack: event receive buffer overrun (ENOBUFS, %llu so far); resyncing",
					 (unsigned long long)a->st.enobufs);
				resync(a);
				continue;
			}
			return (int)n;
		}
		/* Events are not replies: seq 0, portid 0 (the kernel). */
		if (ct_walk(a->buf, (size_t)n, 0, msg_cb, &ra) == -EBADMSG)
			a->st.bad++;
		handled++;
	}
	return handled;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct acct *a = arg;
	int r = acct_poll(a);

	(void)fd;
	(void)what;
	if (r < 0)
		log_err("conntrack: receive failed: %s", strerror(-r));
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct acct *a = arg;
	uint64_t now = now_ns();
	bool due = a->cfg.update_interval_s && now >= a->next_update_ns;
	int r;

	(void)fd;
	(void)what;
	/* Pending ends first, so an ended flow is not also reported as live. */
	acct_poll(a);
	if (due)	/* (less half a tick: timer jitter must not skip a turn) */
		a->next_update_ns = now + (uint64_t)a->cfg.update_interval_s * 1000000000u -
				    500000000u;
	r = dump_live(a, true, due, NULL);
	if (r < 0)
		log_warn("conntrack: update dump failed: %s", strerror(-r));
}

/* ---- closing TCP states (UPDATE group, best effort) ---------------------------- */

bool acct_tcp_closing(uint8_t state)
{
	switch (state) {
	case TCP_CONNTRACK_FIN_WAIT:
	case TCP_CONNTRACK_CLOSE_WAIT:
	case TCP_CONNTRACK_LAST_ACK:
	case TCP_CONNTRACK_TIME_WAIT:
	case TCP_CONNTRACK_CLOSE:
		return true;
	default:
		return false;
	}
}

bool acct_tcp_closed(uint8_t state)
{
	return state == TCP_CONNTRACK_TIME_WAIT || state == TCP_CONNTRACK_CLOSE;
}

struct get_arg {
	struct ct_flow *out;
	bool found;
};

static void get_cb(const void *msg, size_t len, void *data)
{
	struct get_arg *ga = data;

	if (ct_parse(msg, len, ga->out) == CT_EV_NEW)
		ga->found = true;
}

/*
 * The entry with @f's tuple and id, as the kernel has it now (counters,
 * timestamps), into *@out.  Synchronous, on the dump socket; replies to
 * earlier requests that timed out are skipped by their sequence number.
 * Return: 0; -ENOENT (gone); -errno.
 */
static int get_entry_by(struct acct *a, const struct ct_flow *f, bool reply, struct ct_flow *out)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = ++a->seq;
	struct nlmsghdr *nlh = reply ? ct_put_get_reply(req, f, seq) : ct_put_get(req, f, seq);
	struct get_arg ga = { .out = out };

	if (mnl_socket_sendto(a->dump, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (int i = 0; i < 8 && !ga.found; i++) {
		ssize_t n = nlbuf_recv(mnl_socket_get_fd(a->dump), a->buf, sizeof(a->buf), 0);
		int r;

		if (n < 0)
			return (int)n;
		r = ct_walk(a->buf, (size_t)n, seq, get_cb, &ga);
		if (r < 0)
			return r;
	}
	return ga.found ? 0 : -EIO;
}

static int get_entry(struct acct *a, const struct ct_flow *f, struct ct_flow *out)
{
	return get_entry_by(a, f, false, out);
}

int acct_original(struct acct *a, uint8_t proto, struct addr *dst, uint16_t *dport,
		  const struct addr *src, uint16_t sport)
{
	/* The packet went src -> dst after the DNAT: the entry's replies go dst -> src. */
	struct ct_flow q = { .src = *dst, .dst = *src, .proto = proto, .sport = *dport,
			     .dport = sport }, out;
	int r;

	if (!a)
		return -EINVAL;
	r = get_entry_by(a, &q, true, &out);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (!addr_equal(&out.src, src) || out.sport != sport)
		return 0;	/* not this packet's connection */
	*dst = out.dst;
	*dport = out.dport;
	return 1;
}

int acct_lookup(struct acct *a, const struct ct_flow *f)
{
	struct ct_flow q = *f, out;
	int r;

	if (!a)
		return -EINVAL;
	q.id = 0;
	r = get_entry(a, &q, &out);
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : 1;
}

/* A marked TCP entry is over: report it with its counters as of now. */
static void tcp_closed(struct acct *a, const struct ct_flow *ev, uint64_t when_ns)
{
	struct ct_flow f;
	int r = get_entry(a, ev, &f);

	if (r < 0) {
		/* Gone already: its DESTROY (reliable) reports it. */
		a->st.close_gone++;
		return;
	}
	if (ACCT_MARK_SLOT(f.mark) < 0)
		return;
	f.stop_ns = when_ns;	/* the connection's end, not conntrack's */
	a->st.closed++;
	a->ops->flow(a->ctx, ACCT_CLOSE, &f);
}

/* Read the counters of the closes that are due (all of them if @all). */
static void settle_run(struct acct *a, bool all)
{
	uint64_t now = clock_mono_ms();

	while (a->settle_n) {
		struct settle *s = &a->settle[a->settle_head];

		if (!all && s->due_ms > now)
			break;
		a->settle_head = (a->settle_head + 1) % ACCT_SETTLE_MAX;
		a->settle_n--;
		tcp_closed(a, &s->f, s->when_ns);
	}
}

static void on_settle(evutil_socket_t fd, short what, void *arg)
{
	struct acct *a = arg;
	struct timeval tv = { .tv_usec = 100 * 1000 };

	(void)fd;
	(void)what;
	settle_run(a, false);
	if (a->settle_n)
		event_add(a->ev_settle, &tv);
}

/*
 * A TCP connection is over: read its counters ACCT_SETTLE_MS from now, so
 * the packets that still belong to its close (a retransmitted FIN, the
 * RST answering one) are in its record rather than in a conn_late.  With
 * no room left, now.
 */
static void settle_add(struct acct *a, const struct ct_flow *f, uint64_t when_ns)
{
	struct timeval tv = { .tv_usec = 100 * 1000 };
	struct settle *s;

	if (!a->settle || a->settle_n == ACCT_SETTLE_MAX) {
		tcp_closed(a, f, when_ns);
		return;
	}
	s = &a->settle[(a->settle_head + a->settle_n) % ACCT_SETTLE_MAX];
	s->f = *f;
	s->when_ns = when_ns;
	s->due_ms = clock_mono_ms() + ACCT_SETTLE_MS;
	if (a->settle_n++ == 0)
		event_add(a->ev_settle, &tv);
}

static void upd_cb(const void *msg, size_t len, void *data)
{
	struct acct *a = data;
	const struct nlmsghdr *nlh = msg;
	struct ct_flow f;

	/* New entries and updates both arrive as IPCTNL_MSG_CT_NEW; a new one
	 * has NLM_F_CREATE.  The TCP state is present only in updates that
	 * changed it. */
	if (ct_parse(msg, len, &f) != CT_EV_NEW || ACCT_MARK_SLOT(f.mark) < 0)
		return;
	if (nlh->nlmsg_flags & NLM_F_CREATE) {
		a->st.opened++;
		f.start_ns = now_ns();	/* NEW events carry no timestamps */
		a->ops->flow(a->ctx, ACCT_OPEN, &f);
		return;
	}
	if (f.proto != IPPROTO_TCP || !f.has_tcp_state || !acct_tcp_closing(f.tcp_state))
		return;
	a->st.closing++;
	if (a->ops->closing)
		a->ops->closing(a->ctx, &f);
	if (acct_tcp_closed(f.tcp_state) && !a->cfg.no_close)
		settle_add(a, &f, now_ns());
}

static void on_upd(evutil_socket_t fd, short what, void *arg)
{
	struct acct *a = arg;

	(void)what;
	for (int i = 0; i < ACCT_POLL_BATCH; i++) {
		ssize_t n = nlbuf_recv(fd, a->ubuf, sizeof(a->ubuf), MSG_DONTWAIT);

		if (n < 0) {
			if (n == -ENOBUFS || n == -EMSGSIZE) {
				/* Best effort: these events are gone; the DESTROY
				 * socket (reliable) still reports every end. */
				a->st.closing_lost++;
				continue;
			}
			break;
		}
		ct_walk(a->ubuf, (size_t)n, 0, upd_cb, a);
	}
}

/*
 * A non-blocking conntrack event socket bound to @groups, its receive
 * buffer @sz bytes (FORCE needs CAP_NET_ADMIN, which netd has; else the
 * capped size), @reliable: NETLINK_BROADCAST_ERROR.  *@ret is set as soon
 * as the socket exists, for the caller to close on error.
 * Return: 0; -errno.
 */
static int ct_event_socket(int sz, unsigned int groups, bool reliable, struct mnl_socket **ret)
{
	int one = 1, fd;

	*ret = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!*ret)
		return -errno;
	fd = mnl_socket_get_fd(*ret);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (reliable && mnl_socket_setsockopt(*ret, NETLINK_BROADCAST_ERROR, &one, sizeof(one)) < 0)
		return -errno;
	if (mnl_socket_bind(*ret, groups, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	return 0;
}

/* The NEW + UPDATE socket (best effort: no NETLINK_BROADCAST_ERROR, see acct.h). */
static int open_update_socket(struct acct *a)
{
	int r = ct_event_socket((int)ACCT_UPD_RCVBUF,
				NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE, false,
				&a->upd);

	if (r < 0)
		return r;
	a->ev_upd = event_new(a->base, mnl_socket_get_fd(a->upd), EV_READ | EV_PERSIST, on_upd, a);
	if (!a->ev_upd || event_add(a->ev_upd, NULL) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- setup ------------------------------------------------------------------ */

static int open_event_socket(struct acct *a)
{
	int sz = (int)(a->cfg.rcvbuf_bytes ? a->cfg.rcvbuf_bytes : ACCT_RCVBUF_DEFAULT);

	/* Reliable destroy events: see acct.h. */
	return ct_event_socket(sz, NF_NETLINK_CONNTRACK_DESTROY, true, &a->ev);
}

static int open_dump_socket(struct acct *a)
{
	struct timeval tv = { .tv_sec = ACCT_DUMP_TIMEOUT_S };
	int sz = 4 << 20;

	a->dump = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!a->dump)
		return -errno;
	setsockopt(mnl_socket_get_fd(a->dump), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	if (setsockopt(mnl_socket_get_fd(a->dump), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	if (mnl_socket_bind(a->dump, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	a->dump_portid = mnl_socket_get_portid(a->dump);
	return 0;
}

int acct_new(struct event_base *base, const struct acct_config *cfg,
	     const struct acct_ops *ops, void *ctx, struct acct **ret)
{
	struct acct *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->base = base;
	a->cfg = *cfg;
	a->ops = ops;
	a->ctx = ctx;
	a->seq = (uint32_t)time(NULL);
	r = open_event_socket(a);
	if (r == 0)
		r = open_dump_socket(a);
	if (r == 0)
		r = open_update_socket(a);
	if (r < 0)
		goto fail;
	a->settle = calloc(ACCT_SETTLE_MAX, sizeof(*a->settle));	/* NULL: no settling */
	a->ev_settle = event_new(base, -1, 0, on_settle, a);
	if (!a->ev_settle) {
		r = -ENOMEM;
		goto fail;
	}
	a->ev_read = event_new(base, mnl_socket_get_fd(a->ev), EV_READ | EV_PERSIST, on_read, a);
	if (!a->ev_read || event_add(a->ev_read, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	{
		uint32_t tick = cfg->update_interval_s && cfg->update_interval_s < ACCT_FOLD_INTERVAL_S ?
				cfg->update_interval_s : ACCT_FOLD_INTERVAL_S;
		struct timeval tv = { .tv_sec = tick };

		a->next_update_ns = now_ns() + (uint64_t)cfg->update_interval_s * 1000000000u;
		a->ev_timer = event_new(base, -1, EV_PERSIST, on_timer, a);
		if (!a->ev_timer || event_add(a->ev_timer, &tv) < 0) {
			r = -ENOMEM;
			goto fail;
		}
	}
	*ret = a;
	return 0;
fail:
	acct_free(a);
	return r;
}

void acct_free(struct acct *a)
{
	if (!a)
		return;
	if (a->ev_settle)
		settle_run(a, true);	/* closes are recorded, not lost */
	if (a->ev)
		acct_poll(a);
	if (a->ev_settle)
		event_free(a->ev_settle);
	free(a->settle);
	if (a->ev_upd)
		event_free(a->ev_upd);
	if (a->upd)
		mnl_socket_close(a->upd);
	if (a->ev_read)
		event_free(a->ev_read);
	if (a->ev_timer)
		event_free(a->ev_timer);
	if (a->ev)
		mnl_socket_close(a->ev);
	if (a->dump)
		mnl_socket_close(a->dump);
	free(a);
}

void acct_get_stats(const struct acct *a, struct acct_stats *out)
{
	if (a)
		*out = a->st;
	else
		memset(out, 0, sizeof(*out));
}
