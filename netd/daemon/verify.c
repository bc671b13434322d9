/*
 * verify - `netd verify` (POST /v1/verify) and `verify_interval`: probes
 * run from inside each sandbox's network namespace, judged by
 * verify_plan.c (pure), reported to the client, the metrics and the audit
 * log.  docs/verify.md.
 *
 * How the probes run, without blocking the event loop for long: a run
 * starts its sandboxes in chunks of VERIFY_CHUNK, one every VERIFY_STEP_US
 * (and at most socks_cap() probe sockets open at once).  Starting a sandbox
 * is synchronous and short: its kernel-side checks (a few nf_tables gets,
 * fw_sandbox_check()), then this thread setns()es into its netns for as
 * long as it takes to make its non-blocking sockets and start each probe
 * (a socket keeps the netns it was made in), and returns at once.  A
 * microVM's tap has no netns: its probes are frames written into the tap as
 * its guest's (sb_frames(), tap_inject(): only while no VMM holds it).  One
 * timer per sandbox ends its probes after VERIFY_WAIT_MS (a drop is a bounded
 * wait); a connection probe still pending is then looked up in conntrack (an
 * entry: the kernel accepted it) and all is judged.  foreign-forward: health.c.
 *
 * How probe traffic is told from the sandbox's own (so that the deny
 * counters, the audit's deny and dns records and so `netd policy suggest`
 * never see it): netd knows every probe's exact tuple before its first
 * packet leaves (it made the socket; ports read back with getsockname()),
 * and the trail hands every logged drop on a probing sandbox's interface
 * to verify_claim_deny() first (trail_set_probe()); a matching tuple is
 * claimed, recorded as the probe's evidence, and neither counted nor
 * written.  DNS probes ask for a name no sandbox can guess,
 * "pN-<16 random hex>.netd-verify.invalid", which dnsglue hands to
 * daemon_verify_dns() before it counts or records anything.  (A socket
 * mark would not do: the kernel clears skb->mark when a packet crosses
 * from the sandbox's netns over the veth.)
 */
#include "netd/daemon/internal.h"
#include "netd/daemon/verify_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "dnsproxy/wire.h"
#include "netd/common/metrics.h"
#include "netd/link/link.h"
#include "netd/link/tap.h"
#include "netd/trail/audit.h"
#include "netd/trail/trail.h"

#define VERIFY_CHUNK       8	/* sandboxes started per step (16 DNS-over-TCP probes: what
				 * the proxy accepts in one loop turn) ... */
#define VERIFY_STEP_US     2000	/* ... and a step this often: the proxy's listen queue and
				 * socket buffer drain between them (a burst of thousands of
				 * redirected queries at once overflowed them) */
#define VERIFY_SOCKS_MAX   16384	/* probe sockets open at once, all sandboxes (and at
				 * most a quarter of RLIMIT_NOFILE: DNS gateways need theirs) */
#define VERIFY_WAIT_MS     900	/* how long a probe waits for what will not come: under
				 * TCP's first SYN retransmission (RFC 6298's 1 s), so
				 * no retransmitted probe SYN arrives after its claim
				 * ended and is counted as the sandbox's deny */
#define VERIFY_ALLOWED_WAIT_MS 3000	/* --allowed: a real resolution and connection */
#define VERIFY_FAIL_ROWS   4096	/* (sandbox, probe) failure counters kept for /metrics */
#define VERIFY_AUDIT_FAILS 100	/* failures listed in one "verify" record */

struct vsb;

/* One probe's socket and what was seen of it. */
struct vsock {
	struct vsb *s;
	size_t i;		/* its probe in s->p[] */
	int fd;
	struct event *ev;
	struct addr src;	/* its source address and port, as the kernel sees them */
	uint16_t sport;
	uint16_t id;		/* DNS: the query's ID */
	uint8_t qbuf[2 + WIRE_HDR_LEN + WIRE_NAME_MAX + 4];	/* DNS: TCP's prefix, the query */
	size_t qlen;		/* the query's length, without the prefix */
	uint8_t rbuf[1500];	/* DNS over TCP: the answer being read */
	size_t rlen;
};

/* One sandbox of a run. */
struct vsb {
	struct vrun *run;
	char name[SANDBOX_NAME_MAX + 1];
	char policy[SANDBOX_NAME_MAX + 1];
	uint32_t slot;
	bool reject;
	int nsfd;		/* its netns while probes run; -1 */
	char token[17];		/* the random part of its DNS probes' names */
	struct verify_probe p[VERIFY_PROBES_MAX];
	struct verify_obs o[VERIFY_PROBES_MAX];
	char kernel[VERIFY_PROBES_MAX][160];
	struct vsock *k[VERIFY_PROBES_MAX];	/* NULL: no socket */
	size_t n;
	size_t n_socks;
	struct event *timer;
	bool started, done;
};

struct vrun {
	struct daemon *d;
	struct vsb *sbs;
	size_t n, next, n_done;
	bool allowed;
	const char *trigger;	/* "api" | "interval" */
	uint64_t t0_ms;
	struct event *step;
	struct fw_base_check base;
	int base_r;
	json_t *rows;
	daemon_verify_done_fn *done;	/* NULL: nobody waits (interval, or the client left) */
	void *arg;
};

struct vfail {
	char sandbox[SANDBOX_NAME_MAX + 1];
	char probe[VERIFY_NAME_LEN];
	uint64_t n;
};

struct verify {
	struct vsb **by_slot;	/* SANDBOX_MAX: the sandbox being probed in that slot */
	struct vrun *run;	/* at most one at a time */
	size_t socks_open;
	struct event *interval;
	struct vfail *fails;
	size_t n_fails;
	uint64_t runs, runs_failed, last_ts, last_failed, last_duration_ms, last_probes;
	uint64_t claimed;	/* probe packets the trail handed back */
};

static void run_step(evutil_socket_t fd, short what, void *arg);

/* The next chunk of sandboxes, after VERIFY_STEP_US (once, however often asked). */
static void step_later(struct vrun *run)
{
	struct timeval tv = { 0, VERIFY_STEP_US };

	if (!evtimer_pending(run->step, NULL))
		evtimer_add(run->step, &tv);
}

static struct verify *vstate(struct daemon *d)
{
	if (!d->verify) {
		struct verify *v = calloc(1, sizeof(*v));

		if (!v)
			return NULL;
		v->by_slot = calloc(SANDBOX_MAX, sizeof(*v->by_slot));
		if (!v->by_slot) {
			free(v);
			return NULL;
		}
		d->verify = v;
	}
	return d->verify;
}

/* ---- DNS answers ---- */

/*
 * The answer @b/@len to @k's query, read as the proxy reads its upstream's
 * (wire_walk_answer(): well-formed, to exactly this question; addresses on
 * the qname's CNAME chain, at most 128 as the proxy): its RCODE, how many
 * addresses, the first (@first may be NULL).  Return: the RCODE; -1 (not one).
 */
static int dns_answer(const struct vsock *k, const uint8_t *b, size_t len, struct addr *first,
		      int *n_addrs)
{
	struct wire_addr addrs[128];
	struct wire_answer wa;
	struct wire_query q;

	*n_addrs = 0;
	/* The question as wire.c reads it: parsed from the query that was sent. */
	if (wire_parse_query(k->qbuf + 2, k->qlen, &q) < 0 ||
	    wire_walk_answer(b, len, &q, addrs, 128, &wa) < 0 || wa.id != k->id)
		return -1;
	if (first && wa.n_addrs)
		*first = addrs[0].addr;
	*n_addrs = (int)wa.n_addrs;
	return wa.rcode;
}

/* ---- sockets ---- */

static void to_sockaddr(const struct addr *a, uint16_t port, struct sockaddr_storage *ss,
			socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a->a, 4);
		*len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, a->a, 16);
		*len = sizeof(*s6);
	}
}

/* The socket's own address and port, as its packets carry them. */
static void note_local(struct vsock *k)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(k->fd, (struct sockaddr *)&ss, &len) == 0 &&
	    addr_from_sockaddr((struct sockaddr *)&ss, &k->src) == 0)
		k->sport = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
				 ((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void vsock_close(struct vsb *s, size_t i)
{
	struct vsock *k = s->k[i];

	if (!k)
		return;
	if (k->ev)
		event_free(k->ev);
	if (k->fd >= 0) {
		close(k->fd);
		s->run->d->verify->socks_open--;
	}
	free(k);
	s->k[i] = NULL;
}

static void on_sock(evutil_socket_t fd, short what, void *arg);

/* DNS probe @i's qname (the token query; --allowed: the policy's name). */
static void probe_qname(const struct vsb *s, size_t i, char *buf, size_t sz)
{
	snprintf(buf, sz, "p%zu-%s" VERIFY_TOKEN_SUFFIX, i, s->token);
}

/*
 * Make probe @i's socket and start it (connect, or send), in whatever
 * netns the thread is in now (the sandbox's).  Errors go to its
 * observation's send_err.
 */
static void probe_start(struct vsb *s, size_t i, const char *allowed_qname)
{
	struct verify *v = s->run->d->verify;
	struct verify_probe *p = &s->p[i];
	struct verify_obs *o = &s->o[i];
	struct sockaddr_storage ss;
	socklen_t sl;
	struct vsock *k;
	bool tcp = p->proto == IPPROTO_TCP;
	int af = p->dst.family, one = 1, r;
	short evw = EV_READ;

	k = calloc(1, sizeof(*k));
	if (!k) {
		o->send_err = -ENOMEM;
		return;
	}
	k->s = s;
	k->i = i;
	k->fd = socket(af, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (k->fd < 0) {
		o->send_err = -errno;
		free(k);
		return;
	}
	s->k[i] = k;
	v->socks_open++;
	s->n_socks++;
	if (p->kind == VK_SPOOF) {
		/* A source that is not the sandbox's: IP(V6)_TRANSPARENT lets it be bound and sent from. */
		r = af == AF_INET ? setsockopt(k->fd, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)) :
				    setsockopt(k->fd, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof(one));
		to_sockaddr(&p->src, 0, &ss, &sl);
		if (r < 0 || bind(k->fd, (struct sockaddr *)&ss, sl) < 0) {
			o->send_err = -errno;
			return;
		}
	}
	to_sockaddr(&p->dst, p->dport, &ss, &sl);
	if (connect(k->fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		o->send_err = -errno;
		return;
	}
	/* Its tuple is known before any packet of it is logged (the loop reads nflog later). */
	note_local(k);
	if (p->kind == VK_DNS_UDP || p->kind == VK_DNS_TCP || p->kind == VK_ALLOWED_DNS) {
		char qname[128];

		if (p->kind == VK_ALLOWED_DNS)
			snprintf(qname, sizeof(qname), "%s", allowed_qname);
		else
			probe_qname(s, i, qname, sizeof(qname));
		if (getrandom(&k->id, sizeof(k->id), GRND_NONBLOCK) != sizeof(k->id))
			k->id = (uint16_t)(clock_mono_ms() ^ i);
		r = wire_build_query(k->qbuf + 2, sizeof(k->qbuf) - 2, k->id, qname,
				     p->kind == VK_ALLOWED_DNS && af == AF_INET6 ? WIRE_TYPE_AAAA :
									  WIRE_TYPE_A);
		if (r < 0) {
			o->send_err = r;
			return;
		}
		k->qlen = (size_t)r;
		if (tcp) {
			k->qbuf[0] = (uint8_t)(k->qlen >> 8);
			k->qbuf[1] = (uint8_t)k->qlen;
			evw = EV_WRITE;
		} else if (send(k->fd, k->qbuf + 2, k->qlen, 0) < 0) {
			o->send_err = -errno;
			return;
		}
	} else if (p->kind == VK_SPOOF) {
		if (send(k->fd, "netd-verify", 11, 0) < 0)
			o->send_err = -errno;
		return;	/* nothing to wait for: its evidence is the deny log */
	} else {
		evw = EV_WRITE;	/* the connection's outcome */
	}
	k->ev = event_new(s->run->d->base, k->fd, evw, on_sock, k);
	if (!k->ev || event_add(k->ev, NULL) < 0)
		o->send_err = -ENOMEM;
}

/* --allowed: the name resolved; connect to its first address (in its netns again). */
static void allowed_connect(struct vsb *s, const struct addr *a)
{
	for (size_t i = 0; i < s->n; i++) {
		int self;

		if (s->p[i].kind != VK_ALLOWED_CONN || s->k[i] || s->o[i].send_err)
			continue;
		s->p[i].dst = *a;
		self = link_netns_enter(s->nsfd);
		if (self < 0) {
			s->o[i].send_err = self;
			return;
		}
		probe_start(s, i, NULL);
		link_netns_leave(self);
	}
}

static void on_sock(evutil_socket_t fd, short what, void *arg)
{
	struct vsock *k = arg;
	struct vsb *s = k->s;
	struct verify_probe *p = &s->p[k->i];
	struct verify_obs *o = &s->o[k->i];
	struct addr first;
	int err = 0;
	socklen_t el = sizeof(err);
	size_t flen;
	ssize_t n;

	if (p->kind == VK_DROP || p->kind == VK_ALLOWED_CONN) {
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		o->sock_err = err;
		o->connected = err == 0;
		return;	/* one-shot */
	}
	if (p->kind == VK_DNS_TCP && (what & EV_WRITE)) {
		/* Connected (its first event): the query with its length prefix. */
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err || send(fd, k->qbuf, k->qlen + 2, MSG_NOSIGNAL) != (ssize_t)k->qlen + 2) {
			o->send_err = -(err ? err : errno ? errno : EIO);
			return;
		}
		event_free(k->ev);
		k->ev = event_new(s->run->d->base, fd, EV_READ | EV_PERSIST, on_sock, k);
		if (!k->ev || event_add(k->ev, NULL) < 0)
			o->send_err = -ENOMEM;
		return;
	}
	if (p->kind == VK_DNS_TCP) {
		n = recv(fd, k->rbuf + k->rlen, sizeof(k->rbuf) - k->rlen, 0);
		if (n <= 0) {
			event_del(k->ev);
			return;
		}
		k->rlen += (size_t)n;
		flen = (size_t)(k->rbuf[0] << 8 | k->rbuf[1]);	/* RFC 1035 4.2.2 */
		if (k->rlen >= 2 && k->rlen >= 2 + flen) {
			o->rcode = dns_answer(k, k->rbuf + 2, flen, NULL, &o->n_addrs);
			event_del(k->ev);
		}
		return;
	}
	/* UDP DNS: one answer (a connected socket: only from where it was sent). */
	n = recv(fd, k->rbuf, sizeof(k->rbuf), 0);
	if (n < 0) {
		event_add(k->ev, NULL);
		return;
	}
	o->rcode = dns_answer(k, k->rbuf, (size_t)n, &first, &o->n_addrs);
	if (o->rcode < 0) {
		event_add(k->ev, NULL);	/* not its answer: keep waiting */
		return;
	}
	if (p->kind == VK_ALLOWED_DNS && o->rcode == 0 && o->n_addrs > 0)
		allowed_connect(s, &first);
}

/* ---- claims: the trail's and the DNS proxy's ---- */

static bool claim_deny(void *ctx, const struct sandbox *sb, uint8_t proto, const struct addr *src,
		       uint16_t sport, const struct addr *dst, uint16_t dport, const char *reason)
{
	struct daemon *d = ctx;
	struct vsb *s = d->verify ? d->verify->by_slot[sb->slot] : NULL;

	if (!s || strcmp(s->name, sb->name) != 0)
		return false;
	for (size_t i = 0; i < s->n; i++) {
		const struct vsock *k = s->k[i];

		if (!k || s->p[i].proto != proto || k->sport != sport || s->p[i].dport != dport ||
		    !addr_equal(&s->p[i].dst, dst) || !addr_equal(&k->src, src))
			continue;
		snprintf(s->o[i].denied, sizeof(s->o[i].denied), "%s", reason);
		d->verify->claimed++;
		return true;
	}
	return false;
}

bool daemon_verify_dns(struct daemon *d, const struct sandbox *sb, const struct proxy_event *ev)
{
	size_t sl = strlen(VERIFY_TOKEN_SUFFIX), ql;
	struct vsb *s;
	char want[128];

	if (!ev->qname || (ql = strlen(ev->qname)) <= sl ||
	    strcasecmp(ev->qname + ql - sl, VERIFY_TOKEN_SUFFIX) != 0)
		return false;
	s = d->verify ? d->verify->by_slot[sb->slot] : NULL;
	if (!s || strcmp(s->name, sb->name) != 0)
		return false;
	for (size_t i = 0; i < s->n; i++) {
		if (s->p[i].kind != VK_DNS_UDP && s->p[i].kind != VK_DNS_TCP)
			continue;
		probe_qname(s, i, want, sizeof(want));
		if (strcasecmp(want, ev->qname) != 0)
			continue;
		s->o[i].seen = true;
		s->o[i].seen_allowed = ev->allowed;
		snprintf(s->o[i].seen_reason, sizeof(s->o[i].seen_reason), "%s",
			 ev->reason ? ev->reason : "");
		d->verify->claimed++;
		return true;
	}
	return false;
}

/* ---- one sandbox ---- */

static void fail_count(struct verify *v, const char *sandbox, const char *probe)
{
	for (size_t i = 0; i < v->n_fails; i++)
		if (strcmp(v->fails[i].sandbox, sandbox) == 0 && strcmp(v->fails[i].probe, probe) == 0) {
			v->fails[i].n++;
			return;
		}
	if (v->n_fails >= VERIFY_FAIL_ROWS)
		return;	/* bounded; the run's own report and record still say it */
	if (!v->fails) {
		v->fails = calloc(VERIFY_FAIL_ROWS, sizeof(*v->fails));
		if (!v->fails)
			return;
	}
	snprintf(v->fails[v->n_fails].sandbox, sizeof(v->fails[0].sandbox), "%s", sandbox);
	snprintf(v->fails[v->n_fails].probe, sizeof(v->fails[0].probe), "%s", probe);
	v->fails[v->n_fails++].n = 1;
}

static void run_finish(struct vrun *run);

/* The wait is over: look up what is pending, judge, report, close. */
static void sb_finish(struct vsb *s)
{
	struct vrun *run = s->run;
	struct verify *v = run->d->verify;

	if (s->done)
		return;
	s->done = true;
	for (size_t i = 0; i < s->n; i++) {
		struct verify_probe *p = &s->p[i];
		struct verify_obs *o = &s->o[i];
		const struct vsock *k = s->k[i];

		/* Conntrack confirms only a packet the filter hooks accepted. */
		if ((p->kind == VK_DROP || p->kind == VK_FRAME_MAC || p->kind == VK_FRAME_SPOOF) &&
		    k && !o->connected && !o->send_err)
			o->ct = trail_ct_lookup(run->d->trail, p->proto, &k->src, k->sport, &p->dst,
						p->dport);
		verify_judge(p, o, s->reject);
		vsock_close(s, i);
		if (p->verdict == VV_FAIL)
			fail_count(v, s->name, p->name);
		json_array_append_new(run->rows, verify_row_json(s->name, p));
	}
	if (s->timer)
		event_free(s->timer);
	s->timer = NULL;
	if (s->nsfd >= 0)
		close(s->nsfd);
	s->nsfd = -1;
	if (v->by_slot[s->slot] == s)
		v->by_slot[s->slot] = NULL;
	run->n_done++;
	if (run->n_done == run->n)
		run_finish(run);
	else if (run->next < run->n)
		step_later(run);	/* sockets were freed: start more */
}

static void on_sb_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sb_finish(arg);
}

/* Another sandbox's addresses, for the "another sandbox is unreachable" probes. */
static void other_addrs(const struct daemon *d, const struct sandbox *self, struct addr *o4,
			struct addr *o6)
{
	uint32_t cur = 0;
	struct sandbox *sb;

	memset(o4, 0, sizeof(*o4));
	memset(o6, 0, sizeof(*o6));
	while ((sb = sandbox_next(d->sandboxes, &cur)) && (!o4->family || !o6->family)) {
		if (sb == self)
			continue;
		if (!o4->family && sb->addr4.family)
			*o4 = sb->addr4;
		if (!o6->family && sb->addr6.family)
			*o6 = sb->addr6;
	}
}

/* The kernel checks' observations for @s (fw_sandbox_check(), the run's fw_base_check()). */
static void sb_kernel(struct vsb *s, const struct sandbox *sb)
{
	struct vrun *run = s->run;
	struct fw_sb_check c;
	int r = fw_sandbox_check(run->d->fw, sb->name, &c);

	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->p[i].name, *what = "";
		char *out = s->kernel[i];

		if (s->p[i].kind != VK_KERNEL)
			continue;
		if (r < 0)
			what = r == -ENOENT ? "netd's nf_tables record has no such sandbox" :
					      strerror(-r);
		else if (strcmp(name, "kernel-jump") == 0)
			what = c.jump[0] ? c.jump : c.ifs;
		else if (strcmp(name, "kernel-src") == 0)
			what = c.src;
		else if (strcmp(name, "kernel-mark") == 0)
			what = c.mark_set ? c.mark : "";
		else if (strcmp(name, "kernel-tap-mac") == 0)
			what = c.tap[0] ? c.tap : run->base_r < 0 ? strerror(-run->base_r) :
						  run->base.tap_mac;
		else if (strcmp(name, "kernel-dns-redirect") == 0)
			what = run->base_r < 0 ? strerror(-run->base_r) : run->base.redirect;
		else if (strcmp(name, "kernel-anti-spoof") == 0)
			what = run->base_r < 0 ? strerror(-run->base_r) : run->base.spoof;
		else if (strcmp(name, "foreign-forward") == 0)
			what = daemon_health_forward(run->d, false);
		snprintf(out, sizeof(s->kernel[0]), "%s", what);
		s->o[i].kernel = out;
	}
}

/*
 * A tap's frame probes: each frame's tuple is recorded (a socketless
 * vsock, a random source port) before it is written, then all are written
 * into the tap in one tap_inject() (tap.h: only while no VMM holds it).
 * The tap's rules drop them in raw prerouting, synchronously inside that
 * write; their deny log comes to claim_deny() on a later loop turn.
 */
static void sb_frames(struct vsb *s, const struct sandbox *sb)
{
	uint8_t bufs[4][VERIFY_FRAME_MAX], hw[6], foreign[6];
	const uint8_t *frames[4];
	size_t lens[4], idx[4], n = 0;
	int r = tap_hwaddr(sb->host_ifname, hw);

	verify_foreign_mac(sb->mac, foreign);
	for (size_t i = 0; i < s->n && n < 4; i++) {
		struct verify_probe *p = &s->p[i];
		struct vsock *k;
		uint16_t port;

		if (p->kind != VK_FRAME_MAC && p->kind != VK_FRAME_SPOOF)
			continue;
		if (r < 0) {
			s->o[i].send_err = r;
			continue;
		}
		k = calloc(1, sizeof(*k));
		if (!k) {
			s->o[i].send_err = -ENOMEM;
			continue;
		}
		if (getrandom(&port, sizeof(port), GRND_NONBLOCK) != sizeof(port))
			port = (uint16_t)(clock_mono_ms() ^ i);
		k->s = s;
		k->i = i;
		k->fd = -1;	/* no socket: the tuple is the frame's */
		k->src = p->src;
		k->sport = (uint16_t)(49152 + port % 16384);	/* RFC 6335 dynamic ports */
		lens[n] = verify_frame(bufs[n], sizeof(bufs[n]), hw,
				       p->kind == VK_FRAME_MAC ? foreign : sb->mac, &p->src, k->sport,
				       &p->dst, p->dport);
		if (!lens[n]) {
			free(k);
			s->o[i].send_err = -EINVAL;
			continue;
		}
		s->k[i] = k;
		frames[n] = bufs[n];
		idx[n++] = i;
	}
	if (!n)
		return;
	r = tap_inject(sb->host_ifname, frames, lens, n);
	for (size_t j = 0; r < 0 && j < n; j++)
		s->o[idx[j]].send_err = r;
}

/* Plan, check the kernel side, start every live probe from inside its netns. */
static void sb_start(struct vsb *s)
{
	struct vrun *run = s->run;
	struct daemon *d = run->d;
	struct sandbox *sb = sandbox_find(d->sandboxes, s->name);
	const struct policy *pol = sb ? daemon_policy_find(d, sb->policy) : NULL;
	struct verify_facts f = { 0 };
	struct timeval tv;
	const char *aname = NULL;
	uint16_t aport = 0;
	bool live = false;
	uint8_t rnd[8];
	int self;

	s->started = true;
	s->nsfd = -1;
	if (!sb) {
		struct verify_probe gone = { .kind = VK_SKIP, .verdict = VV_FAIL };

		snprintf(gone.name, sizeof(gone.name), "sandbox");
		snprintf(gone.detail, sizeof(gone.detail), "deleted while the run waited");
		s->p[0] = gone;
		s->n = 1;
		sb_finish(s);
		return;
	}
	snprintf(s->policy, sizeof(s->policy), "%s", sb->policy);
	s->slot = sb->slot;
	s->reject = pol && pol->reject;
	f.addr4 = sb->addr4;
	f.addr6 = sb->addr6;
	f.gw4 = sb->gw4;
	f.gw6 = sb->gw6;
	f.tap = sb->tap;
	f.chained = sb->chained;
	f.audit = fw_mode_audit(sb->mode, pol);
	f.no_netns = !sb->netns_path[0];
	f.pol = pol;
	f.log_on = d->trail && !d->box;	/* the deny rules log to TRAIL_LOG_GROUP */
	f.allowed = run->allowed;
	other_addrs(d, sb, &f.other4, &f.other6);
	s->n = verify_plan(&f, s->p);
	for (size_t i = 0; i < s->n; i++) {
		s->o[i].rcode = -1;
		s->o[i].wait_ms = run->allowed ? VERIFY_ALLOWED_WAIT_MS : VERIFY_WAIT_MS;
		if (s->p[i].kind != VK_SKIP && s->p[i].kind != VK_KERNEL)
			live = true;
	}
	sb_kernel(s, sb);
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		uint64_t t = clock_mono_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)s;

		memcpy(rnd, &t, sizeof(rnd));
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(s->token + 2 * i, 3, "%02x", rnd[i]);
	if (live && sb->tap) {
		d->verify->by_slot[s->slot] = s;	/* claims find it from the first frame on */
		sb_frames(s, sb);
	} else if (live) {
		s->nsfd = link_netns_open(sb->netns_path);
		self = s->nsfd < 0 ? s->nsfd : link_netns_enter(s->nsfd);
		if (self < 0) {
			for (size_t i = 0; i < s->n; i++)
				if (s->p[i].kind != VK_SKIP && s->p[i].kind != VK_KERNEL)
					s->o[i].send_err = self;
		} else {
			/* Claims find it from the first packet on. */
			d->verify->by_slot[s->slot] = s;
			verify_allowed_target(pol, &aname, &aport);
			for (size_t i = 0; i < s->n; i++)
				if (s->p[i].kind != VK_SKIP && s->p[i].kind != VK_KERNEL &&
				    s->p[i].kind != VK_ALLOWED_CONN)
					probe_start(s, i, aname);
			link_netns_leave(self);
		}
	}
	s->timer = evtimer_new(d->base, on_sb_timer, s);
	tv.tv_sec = 0;
	tv.tv_usec = live ? (run->allowed ? VERIFY_ALLOWED_WAIT_MS : VERIFY_WAIT_MS) * 1000 : 0;
	if (tv.tv_usec >= 1000000) {
		tv.tv_sec = tv.tv_usec / 1000000;
		tv.tv_usec %= 1000000;
	}
	if (!s->timer || evtimer_add(s->timer, &tv) < 0)
		sb_finish(s);
}

/* ---- a run ---- */

static void run_free(struct vrun *run)
{
	if (run->step)
		event_free(run->step);
	json_decref(run->rows);
	free(run->sbs);
	free(run);
}

static void run_audit(struct vrun *run, const json_t *report)
{
	json_t *fails = json_array(), *row;
	size_t i;

	json_array_foreach(json_object_get(report, "results"), i, row) {
		const char *v = json_string_value(json_object_get(row, "verdict"));

		if (fails && v && strcmp(v, "fail") == 0 && json_array_size(fails) < VERIFY_AUDIT_FAILS)
			json_array_append(fails, row);
	}
	audit_write(run->d->audit, "verify",
		    json_pack("{s:s, s:b, s:O, s:O, s:O, s:O, s:O, s:O, s:o}", "trigger", run->trigger,
			      "ok", json_is_true(json_object_get(report, "ok")),
			      "sandboxes", json_object_get(report, "sandboxes"),
			      "probes", json_object_get(report, "probes"),
			      "passed", json_object_get(report, "passed"),
			      "failed", json_object_get(report, "failed"),
			      "skipped", json_object_get(report, "skipped"),
			      "duration_ms", json_object_get(report, "duration_ms"),
			      "failures", fails ? fails : json_array()));
}

static void run_finish(struct vrun *run)
{
	struct daemon *d = run->d;
	struct verify *v = d->verify;
	uint64_t ms = clock_mono_ms() - run->t0_ms;
	json_t *report = verify_report(run->rows, run->n, ms);
	json_int_t failed = json_integer_value(json_object_get(report, "failed"));

	run->rows = NULL;	/* the report's now */
	v->runs++;
	if (failed)
		v->runs_failed++;
	v->last_ts = (uint64_t)time(NULL);
	v->last_failed = (uint64_t)failed;
	v->last_duration_ms = ms;
	v->last_probes = (uint64_t)json_integer_value(json_object_get(report, "probes"));
	if (report)
		run_audit(run, report);
	if (failed)
		log_warn("verify: %lld of %llu probes failed over %zu sandboxes (netd verify --all)",
			 (long long)failed, (unsigned long long)v->last_probes, run->n);
	v->run = NULL;
	if (run->done)
		run->done(run->arg, report);	/* takes @report */
	else
		json_decref(report);
	run_free(run);
}

/* Probe sockets a run may hold open at once. */
static size_t socks_cap(const struct daemon *d)
{
	size_t cap = d->fd_limit / 4;

	return cap < 1024 ? 1024 : cap > VERIFY_SOCKS_MAX ? VERIFY_SOCKS_MAX : cap;
}

static void run_step(evutil_socket_t fd, short what, void *arg)
{
	struct vrun *run = arg;
	struct verify *v = run->d->verify;
	size_t started = 0;

	(void)fd;
	(void)what;
	if (run->n == 0) {
		run_finish(run);
		return;
	}
	while (run->next < run->n && started < VERIFY_CHUNK &&
	       v->socks_open + VERIFY_PROBES_MAX <= socks_cap(run->d)) {
		sb_start(&run->sbs[run->next++]);
		started++;
		if (!v->run)
			return;	/* the last one finished the run (and freed it) */
	}
	if (run->next < run->n && started == VERIFY_CHUNK)
		step_later(run);	/* the rest a step later */
}

int daemon_verify_start(struct daemon *d, const struct verify_request *req, const char *trigger,
			daemon_verify_done_fn *done, void *arg, char *err, size_t errsz)
{
	struct verify *v = vstate(d);
	struct vrun *run;
	size_t n = 0, i;
	json_t *name;

	if (!v)
		return -ENOMEM;
	if (v->run) {
		snprintf(err, errsz, "a verify run is already under way");
		return -EBUSY;
	}
	if (!d->fw) {
		snprintf(err, errsz, "nf_tables is not open");
		return -EIO;
	}
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	run->d = d;
	run->allowed = req->allowed;
	run->trigger = trigger;
	run->done = done;
	run->arg = arg;
	run->t0_ms = clock_mono_ms();
	run->rows = json_array();
	n = req->all ? sandbox_count(d->sandboxes) : json_array_size(req->names);
	run->sbs = calloc(n ? n : 1, sizeof(*run->sbs));
	run->step = event_new(d->base, -1, 0, run_step, run);
	if (!run->rows || !run->sbs || !run->step) {
		run_free(run);
		return -ENOMEM;
	}
	if (req->all) {
		uint32_t cur = 0;
		struct sandbox *sb;

		while ((sb = sandbox_next(d->sandboxes, &cur)) && run->n < n)
			snprintf(run->sbs[run->n++].name, sizeof(run->sbs[0].name), "%s", sb->name);
	} else {
		json_array_foreach(req->names, i, name) {
			const char *s = json_string_value(name);

			if (!sandbox_find(d->sandboxes, s)) {
				snprintf(err, errsz, "no sandbox \"%.64s\"", s);
				run_free(run);
				return -ENOENT;
			}
			snprintf(run->sbs[run->n++].name, sizeof(run->sbs[0].name), "%s", s);
		}
	}
	for (i = 0; i < run->n; i++) {
		run->sbs[i].run = run;
		run->sbs[i].nsfd = -1;
	}
	run->base_r = fw_base_check(d->fw, &run->base);
	daemon_health_forward(d, true);
	trail_set_probe(d->trail, claim_deny, d);
	v->run = run;
	/* Never from here: the report comes on a later loop turn, even an empty one. */
	event_active(run->step, 0, 0);
	return 0;
}

void daemon_verify_cancel(struct daemon *d, void *arg)
{
	if (d->verify && d->verify->run && d->verify->run->arg == arg)
		d->verify->run->done = NULL;	/* the run goes on: metrics, audit */
}

/* ---- verify_interval ---- */

static void on_interval(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct verify_request req = { .all = true };
	char err[128];
	int r;

	(void)fd;
	(void)what;
	r = daemon_verify_start(d, &req, "interval", NULL, NULL, err, sizeof(err));
	if (r < 0 && r != -EBUSY)
		log_warn("verify_interval: %s", err[0] ? err : strerror(-r));
}

int daemon_verify_init(struct daemon *d)
{
	struct verify *v;
	struct timeval tv = { (time_t)d->cfg.verify_interval_s, 0 };

	if (!d->cfg.verify_interval_s)
		return 0;
	v = vstate(d);
	if (!v)
		return -ENOMEM;
	v->interval = event_new(d->base, -1, EV_PERSIST, on_interval, d);
	if (!v->interval || event_add(v->interval, &tv) < 0)
		return -ENOMEM;
	return 0;
}

void daemon_verify_free(struct daemon *d)
{
	struct verify *v = d->verify;

	if (!v)
		return;
	if (v->run) {
		struct vrun *run = v->run;

		/* Shutting down: close what is open; no report (the client goes with the socket). */
		for (size_t i = 0; i < run->n; i++) {
			struct vsb *s = &run->sbs[i];

			for (size_t k = 0; k < s->n; k++)
				vsock_close(s, k);
			if (s->timer)
				event_free(s->timer);
			if (s->nsfd >= 0)
				close(s->nsfd);
		}
		run_free(run);
	}
	trail_set_probe(d->trail, NULL, NULL);
	if (v->interval)
		event_free(v->interval);
	free(v->fails);
	free(v->by_slot);
	free(v);
	d->verify = NULL;
}

void daemon_verify_metrics(struct daemon *d, FILE *out)
{
	const struct verify *v = d->verify;

	metrics_family(out, "netd_verify_runs_total", "counter",
		       "netd verify runs (POST /v1/verify and verify_interval).");
	metrics_u64(out, "netd_verify_runs_total", NULL, v ? v->runs : 0);
	metrics_family(out, "netd_verify_last_run_timestamp_seconds", "gauge",
		       "When the last verify run ended (Unix time); 0: never.");
	metrics_u64(out, "netd_verify_last_run_timestamp_seconds", NULL, v ? v->last_ts : 0);
	metrics_family(out, "netd_verify_last_run_failed", "gauge",
		       "Probes that failed in the last verify run.");
	metrics_u64(out, "netd_verify_last_run_failed", NULL, v ? v->last_failed : 0);
	metrics_family(out, "netd_verify_last_run_duration_seconds", "gauge",
		       "How long the last verify run took.");
	metrics_f(out, "netd_verify_last_run_duration_seconds", NULL,
		  v ? (double)v->last_duration_ms / 1000.0 : 0.0);
	metrics_family(out, "netd_verify_failures_total", "counter",
		       "Verify probes that failed, by sandbox and probe.");
	for (size_t i = 0; v && i < v->n_fails; i++) {
		const char *l[] = { "sandbox", v->fails[i].sandbox, "probe", v->fails[i].probe, NULL };

		metrics_u64(out, "netd_verify_failures_total", l, v->fails[i].n);
	}
	metrics_family(out, "netd_verify_probe_packets_total", "counter",
		       "Probe packets and queries netd recognised as its own (not counted as a sandbox's).");
	metrics_u64(out, "netd_verify_probe_packets_total", NULL, v ? v->claimed : 0);
}
