/*
 * proxy_int - the DNS proxy's internals, shared by its files and by no one
 * else (include dnsproxy/proxy.h or dnsproxy/replay.h instead):
 *
 *   proxy.c    setup and teardown, the public calls (stats, pin_extend),
 *              the sweep and deadline timers, the clock
 *   query.c    the query and answer path: decide, forward, pin, answer;
 *              no socket in it (a transport sends, an upstream resolves)
 *   udp.c      UDP: recvmmsg() rounds, queued replies, GSO sends, the
 *              gateway listeners
 *   tcp.c      TCP (RFC 1035 4.2.2, RFC 7766): accept, framing, limits
 *   limits.c   per client address: the query-rate bucket, counters; the
 *              encoded-label score (dnsproxy/budget.h)
 *   budget.c   the name budget per sandbox and rule (dnsproxy/budget.h)
 *   replay.c   the replay seam: the same path driven by a test, no socket
 */
#ifndef NETD_DNSPROXY_PROXY_INT_H
#define NETD_DNSPROXY_PROXY_INT_H

#include <event2/util.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/tbucket.h"
#include "dnsproxy/budget.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/proxy.h"
#include "dnsproxy/refuselog.h"
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
#define PROXY_UDP_BATCH         256	/* datagrams per readiness event */
#define PROXY_UDP_VLEN          64	/* datagrams per recvmmsg() */
#define PROXY_UDP_RX            4096	/* bytes of one UDP query, at most */
#define PROXY_UDP_TX            4096	/* bytes of a queued UDP reply, at most */
#define PROXY_UDP_GSO_MAX       1200	/* replies up to this long may leave as one GSO send ... */
#define PROXY_UDP_GSO_HDR       48	/* ... if this much more fits the MTU (IPv6 + UDP headers) */
#define PROXY_UDP_GSO_SEGS      64	/* datagrams in one GSO send, at most (UDP_MAX_SEGMENTS) */
#define PROXY_UDP_GSO_BYTES     60000	/* ... and bytes (one IP datagram's payload) */
#define PROXY_MAX_ADDRS         128	/* addresses collected from one answer */
#define PROXY_MAX_PINS          1024	/* pins from one answer */
#define PROXY_WALK_MEMO_N       16	/* answers whose walk is remembered (query.c) */
#define PROXY_CLIENT_BUCKETS    256
#define PROXY_SWEEP_S           5	/* forget expired pins this often */
#define PROXY_SANDBOX_NAME_MAX  128	/* bytes of a sandbox name copied, with its NUL */

/* Defaults for the abuse limits (proxy_config fields left 0). */
#define PROXY_DEF_PINS_PER_SANDBOX 16384	/* live pin elements per sandbox */
#define PROXY_DEF_ADDRS_PER_NAME   64	/* addresses one answer may pin */
#define PROXY_DEF_QPS              1000	/* queries/s per client address ... */
#define PROXY_DEF_BURST            2000	/* ... with this bucket depth */

struct proxy;
struct origin;

/* Per client address counters (fairness limits; limits.c). */
struct client_slot {
	struct client_slot *next;
	struct addr addr;
	unsigned int queries, conns;
	struct tbucket rate;	/* query rate: cfg.qps a second, cfg.burst deep */
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
 * sandbox's gateway, where its queries arrive untracked (netd's
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

/*
 * How a reply reaches the client a query came from: UDP (udp.c), TCP
 * (tcp.c) or the replay seam (replay.c).  query.c knows nothing else.
 */
struct transport {
	const char *name;	/* "udp" | "tcp": the audit's transport */
	bool stream;		/* no size limit: never truncated to TC=1 */
	/* send() - @msg/@len (complete, the client's ID) to @o.  Return: 0; -errno. */
	int (*send)(struct proxy *p, const struct origin *o, const uint8_t *msg, size_t len);
	/* hold()/release() - a pending query keeps @o's socket or connection. */
	void (*hold)(struct origin *o);
	void (*release)(struct origin *o);
	/* gone() - the client hung up: no reply is possible (NULL: never). */
	bool (*gone)(const struct origin *o);
};

/* Where a reply goes. */
struct origin {
	const struct transport *t;
	struct addr client;
	struct sockaddr_in6 peer;	/* udp */
	struct in6_pktinfo local;	/* udp: the address the query came to */
	bool have_local;
	struct listener *l;	/* udp: the gateway socket it came to; NULL = the main one */
	struct tcp_conn *conn;	/* tcp; holds a reference while pending */
	uint64_t tag;		/* replay: the test's name for the query */
};

/* A query as received, with where its reply goes. Borrowed for a call. */
struct request {
	const struct origin *o;
	const uint8_t *msg;	/* the client's query, byte for byte */
	size_t len;
	const struct wire_query *q;
};

/* A query upstream.  On p->pending (oldest first) until it is answered. */
struct pending {
	struct pending *prev, *next;
	struct proxy *p;
	struct origin o;
	struct wire_query q;
	uint64_t deadline_ms;	/* the client gets SERVFAIL at this time at the latest */
	bool answered;		/* the deadline passed: replied, off p->pending; freed
				 * when the upstream reports back */
	size_t qlen;
	uint8_t query[];	/* the client's query as received */
};

/*
 * The upstream side of the path: c-ares (upstream.c) in the daemon, the
 * test's script under the replay seam.  send() calls @cb exactly once,
 * possibly before it returns; free() cancels what is pending (each @cb
 * with -ECANCELED).
 */
struct proxy_upstream {
	void (*send)(void *impl, const uint8_t *q, size_t len, upstream_cb cb, void *arg);
	void (*free)(void *impl);
	void *impl;
};

struct proxy {
	struct event_base *base;	/* NULL under the replay seam */
	struct proxy_config cfg;
	const struct proxy_ops *ops;
	void *ctx;
	struct proxy_upstream up;
	uint64_t (*clock_ms)(void *clock_ctx);	/* monotonic ms */
	void *clock_ctx;
	/*
	 * The clock of a receive round: udp_rounds() reads it once per
	 * recvmmsg() round and everything the round does uses it, as does a
	 * turn of upstream answers (0 = outside both: read the clock).  Never
	 * later than the real time, so a pin's tracked expiry (pintrack)
	 * stays at or before the kernel's.
	 */
	uint64_t round_ms;
	int udp_fd, tcp_fd;
	struct event *udp_ev, *tcp_ev;
	struct event *accept_pause;	/* re-arms tcp_ev after EMFILE */
	struct event *deadline_ev;	/* the oldest pending query's deadline */
	struct pintrack *pt;
	struct budget *budget;	/* the rules' name budgets (dnsproxy/budget.h) */
	struct cache *cache;	/* NULL = no answer cache */
	struct event *sweep;
	struct proxy_stats stats;
	struct pending *pending, *pending_tail;	/* awaiting an answer, oldest first */
	unsigned int n_pending;	/* upstream queries in flight (answered ones too) */
	struct tcp_conn *conns;
	unsigned int n_conns;
	struct client_slot *slots[PROXY_CLIENT_BUCKETS];
	bool closing;
	uint64_t n_dropped;	/* replies we could not send, malformed drops */
	struct refuse_log refused;	/* answer addresses never pinned, logged (rate-limited) */
	struct tbucket tunnel_log;	/* names an encoded: log rule let through and
					 * refusals of a full budget, logged: 1 a
					 * second, bursts of 10 */
	struct replay *replay;	/* the replay seam's state; NULL in the daemon */
	/* Scratch, single-threaded: the receive buffer and one answer. */
	uint8_t rx[WIRE_MSG_MAX + 1];
	uint8_t ans[WIRE_MSG_MAX];
	uint8_t ech[WIRE_MSG_MAX];	/* p->ans without its ECH configs (query.c answer_ech()) */
	struct wire_addr addrs[PROXY_MAX_ADDRS];
	struct decide_internal_ix internal_ix;	/* of cfg.internal (proxy_init()) */
	struct walk_memo *walks;	/* PROXY_WALK_MEMO_N answers walked (query.c); NULL: none */
	struct pin pins[PROXY_MAX_PINS];
	struct pin plan[PROXY_MAX_PINS];
	struct addr pinned[PROXY_MAX_ADDRS];
	struct listener *listeners;
	int next_listener_id;
	/*
	 * Replies to the datagrams of one recvmmsg() round, or to the
	 * upstream answers of one turn, sent together by one sendmmsg() at
	 * its end (udp_flush()).  Each reply is queued only after its pins
	 * were acknowledged, so batching delays answers a little and never
	 * reorders pin and answer.
	 */
	struct {
		bool on;	/* inside a round or turn: queue instead of sending */
		struct listener *l;	/* the queue's socket: a gateway listener's; NULL:
					 * udp_fd; a reply from another sends the queue
					 * and takes it over */
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

/* ---- proxy.c ---- */

/* proxy_now_ms() - the round's clock inside a receive round, else p->clock_ms. */
uint64_t proxy_now_ms(const struct proxy *p);

/* proxy_init() - defaults into @p->cfg, the pin tracker and cache.  Return: 0; -errno. */
int proxy_init(struct proxy *p, const struct proxy_config *cfg, const struct proxy_ops *ops,
	       void *ctx);

/* proxy_sweep() - forget pins and cache entries expired by now. */
void proxy_sweep(struct proxy *p);

/* proxy_deadline_arm() - (re)arm the deadline timer for the oldest pending query. */
void proxy_deadline_arm(struct proxy *p);

/* ---- query.c ---- */

/*
 * query_in() - one query from either transport (or the seam): @buf/@len as
 * received (copied if it goes upstream), @o where the reply goes (copied).
 * Answers now (refused, denied, cached, limited) or forwards it upstream.
 */
void query_in(struct proxy *p, const uint8_t *buf, size_t len, const struct origin *o);

/*
 * query_expire() - SERVFAIL every pending query whose deadline is at or
 * before @now_ms.  Return: the next deadline (ms), 0 if none is pending.
 */
uint64_t query_expire(struct proxy *p, uint64_t now_ms);

/* query_drop_all() - free every pending query without a reply (teardown). */
void query_drop_all(struct proxy *p);

/* ---- limits.c ---- */

/* slot_get() - @a's counters (@create: make them).  NULL if none / no memory. */
struct client_slot *slot_get(struct proxy *p, const struct addr *a, bool create);

/* slot_put() - forget @a's counters once nothing counts and its bucket is full. */
void slot_put(struct proxy *p, const struct addr *a);

/*
 * rate_ok() - take one token from @a's query bucket (qps per second, burst
 * deep).  *@ret_limited: refusals in this run (1 = the first).
 * Return: false if the client is over its rate.
 */
bool rate_ok(struct proxy *p, const struct addr *a, uint64_t *ret_limited);

/* slots_free() - every client's counters (teardown). */
void slots_free(struct proxy *p);

/* The encoded-label score, tunnel_score(), is limits.c's too: dnsproxy/budget.h. */

/* ---- udp.c ---- */

extern const struct transport udp_transport;

/* on_udp() - the main socket (udp_fd) is readable. */
void on_udp(evutil_socket_t fd, short what, void *arg);

/*
 * udp_answers_turn() - @begin true: the upstream's answers of one turn
 * follow (upstream_turn_fn), their UDP replies are queued as a receive
 * round's are, whichever socket each leaves from; false: send them
 * (udp_flush(), grouped per client as a round's).  Called from the event
 * loop only, never inside a receive round.
 */
void udp_answers_turn(struct proxy *p, bool begin);

/* udp_listen_socket() / listeners_close(): setup and teardown. */
int udp_listen_socket(int type, uint16_t port);
void listeners_close(struct proxy *p);

/* ---- tcp.c ---- */

extern const struct transport tcp_transport;

/* on_accept() / on_accept_pause() - the TCP listener (tcp_fd). */
void on_accept(evutil_socket_t fd, short what, void *arg);
void on_accept_pause(evutil_socket_t fd, short what, void *arg);

/* conns_close() - close every connection (teardown). */
void conns_close(struct proxy *p);

#endif
