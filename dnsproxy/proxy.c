/*
 * proxy - the DNS proxy's setup and its public calls: one UDP and one TCP
 * listener on [::]:port (IPv4 through v4-mapped addresses) on libevent,
 * upstream queries through upstream.c (c-ares), the timers (pin sweep,
 * upstream deadline) and the counters.  The path a query takes is
 * query.c; the sockets are udp.c and tcp.c; the per-client limits are
 * limits.c (file map: dnsproxy/proxy_int.h).
 *
 * Not here: knowing which sandbox owns an address or committing pins; that
 * is proxy_ops (the daemon).
 */
#include "dnsproxy/proxy.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "dnsproxy/budget.h"
#include "dnsproxy/cache.h"
#include "dnsproxy/pintrack.h"
#include "dnsproxy/proxy_int.h"

_Static_assert(PROXY_CACHE_MAX_ENTRIES == CACHE_MAX_ENTRIES &&
	       PROXY_CACHE_DEFAULT_ENTRIES == CACHE_DEFAULT_ENTRIES,
	       "dnsproxy/proxy_config.h and dnsproxy/cache.h disagree on the cache size");

static uint64_t clock_real_ms(void *unused)
{
	return clock_mono_ms();
}

uint64_t proxy_now_ms(const struct proxy *p)
{
	return p->round_ms ? p->round_ms : p->clock_ms(p->clock_ctx);
}

/* ---- stats -------------------------------------------------------------- */

void proxy_stats_pin(struct proxy_stats *st, uint64_t us)
{
	st->pins_sent++;
	st->pin_hist[us < PROXY_PIN_HIST_US ? us : PROXY_PIN_HIST_US]++;
	st->pin_sum_us += us;
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
	p->stats.budget_names = budget_names(p->budget);
	return &p->stats;
}

void proxy_sandbox_reset(struct proxy *p, const char *sandbox)
{
	if (!p)
		return;
	pintrack_reset(p->pt, sandbox);
	/* Its name budgets too: the counts are kept by its policy's rule
	 * indexes, which a change of policy may move (docs/dns.md). */
	budget_reset(p->budget, sandbox);
}

int proxy_pin_extend(struct proxy *p, const char *sandbox, const struct pin *pins, size_t n)
{
	uint64_t t0 = proxy_now_ms(p);	/* before the batch: see answer_commit() */
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

void proxy_sweep(struct proxy *p)
{
	uint64_t now = proxy_now_ms(p);

	pintrack_expire(p->pt, now);
	budget_expire(p->budget, now);
	if (p->cache)
		cache_expire(p->cache, now);
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	proxy_sweep(arg);
}

/* ---- the upstream deadline ----------------------------------------------------- */

static void deadline_add(struct proxy *p, uint64_t at_ms)
{
	uint64_t now = proxy_now_ms(p), ms = at_ms > now ? at_ms - now : 0;
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	evtimer_add(p->deadline_ev, &tv);
}

void proxy_deadline_arm(struct proxy *p)
{
	/* Already armed for an earlier (or the same) deadline: on_deadline()
	 * re-arms for the next one.  Under the replay seam replay_tick() runs
	 * query_expire() itself. */
	if (!p->deadline_ev || !p->pending || evtimer_pending(p->deadline_ev, NULL))
		return;
	deadline_add(p, p->pending->deadline_ms);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct proxy *p = arg;
	uint64_t next = query_expire(p, proxy_now_ms(p));

	if (next)
		deadline_add(p, next);
}

/* ---- setup ---------------------------------------------------------------- */

/* listen_socket() - [::]:@port, v4-mapped too; UDP with IPV6_RECVPKTINFO.  Return: fd; -errno. */
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

int proxy_init(struct proxy *p, const struct proxy_config *cfg, const struct proxy_ops *ops,
	       void *ctx)
{
	uint8_t key[BUDGET_KEY_LEN];
	int r;

	p->cfg = *cfg;
	decide_internal_index(p->cfg.internal, p->cfg.n_internal, &p->internal_ix);
	p->ops = ops;
	p->ctx = ctx;
	p->udp_fd = p->tcp_fd = -1;
	p->clock_ms = clock_real_ms;
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
	if (p->cfg.upstream_deadline_ms == 0)
		p->cfg.upstream_deadline_ms = PROXY_DEADLINE_DEFAULT_MS;
	r = pintrack_new(&p->pt);
	if (r < 0)
		return r;
	/* The budget's SipHash key: a sandbox must not be able to compute
	 * names that collide with the ones it already spent. */
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		return errno ? -errno : -EIO;
	r = budget_new(key, &p->budget);
	if (r < 0)
		return r;
	tbucket_init(&p->tunnel_log, 10, 0);	/* full from the clock's start */
	if (p->cfg.cache_size > 0) {
		r = cache_new(p->cfg.cache_size, (size_t)p->cfg.cache_size * CACHE_BYTES_PER_ENTRY,
			      &p->cache);
		if (r < 0)
			return r;
	}
	return 0;
}

static void up_send(void *impl, const uint8_t *q, size_t len, upstream_cb cb, void *arg)
{
	upstream_send(impl, q, len, cb, arg);
}

static void up_free(void *impl)
{
	upstream_free(impl);
}

/* The answers c-ares reports in one turn: their UDP replies leave together. */
static void on_answers_turn(void *arg, bool begin)
{
	udp_answers_turn(arg, begin);
}

/* proxy_events() - the listeners' and timers' events on @p->base. Return: 0; -ENOMEM. */
static int proxy_events(struct proxy *p)
{
	struct event_base *base = p->base;

	p->udp_ev = event_new(base, p->udp_fd, EV_READ | EV_PERSIST, on_udp, p);
	p->tcp_ev = event_new(base, p->tcp_fd, EV_READ | EV_PERSIST, on_accept, p);
	p->accept_pause = evtimer_new(base, on_accept_pause, p);
	p->sweep = event_new(base, -1, EV_PERSIST, on_sweep, p);
	p->deadline_ev = evtimer_new(base, on_deadline, p);
	if (!p->udp_ev || !p->tcp_ev || !p->accept_pause || !p->sweep || !p->deadline_ev ||
	    event_add(p->udp_ev, NULL) < 0 || event_add(p->tcp_ev, NULL) < 0 ||
	    event_add(p->sweep, &(struct timeval){ .tv_sec = PROXY_SWEEP_S }) < 0)
		return -ENOMEM;
	return 0;
}

int proxy_new(struct event_base *base, const struct proxy_config *cfg,
	      const struct proxy_ops *ops, void *ctx, struct proxy **ret)
{
	struct upstream *u;
	struct proxy *p;
	int r;

	*ret = NULL;
	if (!ops || !ops->lookup || !ops->pin)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->base = base;
	r = proxy_init(p, cfg, ops, ctx);
	if (r < 0)
		goto fail;
	r = upstream_new(base, cfg->upstream, cfg->n_upstream, cfg->upstream_timeout_ms, &u);
	if (r < 0)
		goto fail;
	p->up = (struct proxy_upstream){ .send = up_send, .free = up_free, .impl = u };
	upstream_set_turn(u, on_answers_turn, p);
	r = p->udp_fd = listen_socket(SOCK_DGRAM, cfg->port);
	if (r < 0)
		goto fail;
	r = p->tcp_fd = listen_socket(SOCK_STREAM, cfg->port);
	if (r < 0)
		goto fail;
	r = proxy_events(p);
	if (r < 0)
		goto fail;
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
	/* Cancels every pending query: each callback frees its own (the
	 * replay seam's upstream frees its own state too). */
	if (p->up.free)
		p->up.free(p->up.impl);
	p->up = (struct proxy_upstream){ 0 };
	p->replay = NULL;
	conns_close(p);
	if (p->udp_ev)
		event_free(p->udp_ev);
	if (p->tcp_ev)
		event_free(p->tcp_ev);
	listeners_close(p);
	if (p->accept_pause)
		event_free(p->accept_pause);
	if (p->sweep)
		event_free(p->sweep);
	if (p->deadline_ev)
		event_free(p->deadline_ev);
	pintrack_free(p->pt);
	budget_free(p->budget);
	cache_free(p->cache);
	free(p->walks);
	if (p->udp_fd >= 0)
		close(p->udp_fd);
	if (p->tcp_fd >= 0)
		close(p->tcp_fd);
	slots_free(p);
	free(p);
}
