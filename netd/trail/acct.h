/*
 * acct - per-connection byte accounting from conntrack (ctnetlink over
 * libmnl), on the daemon's libevent loop.  The edge only: ctmsg.c decodes,
 * the daemon turns flows into audit records.
 *
 * Which entries: netd's policy chains set a conntrack mark
 * ACCT_MARK(slot) on every new connection of a sandbox (from sb_mark4/6
 * by its source address; fw.h), so an entry carries
 * its sandbox from the first packet on; entries without netd's mark
 * (the host's own traffic, DNS redirected to the proxy) are ignored.
 *
 * Two event sockets:
 *  - DESTROY, with NETLINK_BROADCAST_ERROR set, which makes the kernel's
 *    destroy events reliable: if the message cannot be queued to us
 *    (receive buffer full) the kernel keeps the entry on its dying list
 *    and re-sends the event later, instead of losing it.  A receive-buffer
 *    overrun (ENOBUFS) is still detected, counted, logged and followed by a
 *    resync dump of the live entries.
 *  - NEW and UPDATE, best effort (no NETLINK_BROADCAST_ERROR: an overrun
 *    there loses events, is counted, and never stalls or resyncs the
 *    DESTROY socket).  NEW: a sandbox's connection was confirmed, i.e.
 *    allowed (ACCT_OPEN; denied packets never make a confirmed entry).
 *    UPDATE: a marked TCP entry changed state; closing states go to
 *    ops->closing (the idle grace, trail.c), and TIME_WAIT or CLOSE - the
 *    connection is over: both FINs acknowledged, or a RST - make a GET of
 *    the entry (update events carry no counters) ACCT_SETTLE_MS later (so
 *    a retransmitted FIN or the RST answering it is still counted) whose
 *    counters are reported as ACCT_CLOSE with stop_ns = when the closing
 *    event was read: the connection's end.
 *    DESTROY comes only after TIME_WAIT (120 s by default), far too late
 *    for a record of a finished connection.  If the update is lost or the
 *    entry is already gone, DESTROY still reports it (late, never lost).
 * Interim counters come from a periodic dump every ACCT_FOLD_INTERVAL_S
 * (or update_interval_s if shorter): every live marked entry as
 * ACCT_LIVE, and those older than update_interval_s as ACCT_UPDATE once
 * per update_interval_s.
 */
#ifndef NETD_ACCT_H
#define NETD_ACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "netd/trail/ctmsg.h"

struct event_base;
struct acct;

#define ACCT_MARK_BASE 0x6e640000u	/* "nd" in the upper 16 bits */
#define ACCT_MARK_MASK 0xfffc0000u
/* Bit 15 is the SNI check's "done" bit (fw.h FW_SNI_DONE_CTMARK), not the
 * slot's; bits 16 and 17 its "watched" bits (FW_SNI_WATCH_*), which is why
 * the mask leaves them out ("nd" has them clear). */
#define ACCT_MARK_SLOT_BITS 0x7fffu
/* The mark of sandbox slot @slot (slot < SANDBOX_MAX = 16384 < 0x7fff). */
#define ACCT_MARK(slot) (ACCT_MARK_BASE | (((uint32_t)(slot) + 1) & ACCT_MARK_SLOT_BITS))
/* The slot of a mark made by ACCT_MARK(), or -1. */
#define ACCT_MARK_SLOT(mark) \
	((((mark) & ACCT_MARK_MASK) == ACCT_MARK_BASE && ((mark) & ACCT_MARK_SLOT_BITS)) ? \
		 (int64_t)((mark) & ACCT_MARK_SLOT_BITS) - 1 : (int64_t)-1)

#define ACCT_FOLD_INTERVAL_S 5	/* live counters are dumped at least this often */
#define ACCT_SETTLE_MS       500	/* a close's counters are read this long after it */

enum acct_kind {
	ACCT_END = 1,		/* the entry was destroyed: final counters, stop_ns */
	ACCT_UPDATE,		/* live, older than update_interval_s: a conn_update is due */
	ACCT_LIVE,		/* live: interim counters, for the metrics only */
	ACCT_CLOSE,		/* TCP reached TIME_WAIT or CLOSE: counters as of then, stop_ns */
	ACCT_OPEN,		/* a new entry was confirmed: no counters; start_ns = now */
};

struct acct_ops {
	/* One flow carrying netd's mark; @f borrowed for the call. */
	void (*flow)(void *ctx, enum acct_kind kind, const struct ct_flow *f);
	/* A marked TCP entry reached a closing state (FIN_WAIT .. CLOSE);
	 * @f borrowed for the call; may be NULL.  Called once per state
	 * change, so several times per connection. */
	void (*closing)(void *ctx, const struct ct_flow *f);
};

struct acct_config {
	uint32_t update_interval_s;	/* interim lines for flows older than this; 0 = none */
	uint32_t rcvbuf_bytes;		/* event socket receive buffer; 0 = 8 MiB */
	bool no_close;			/* test knob: no ACCT_CLOSE (records at DESTROY only) */
};

struct acct_stats {
	uint64_t ended;		/* DESTROY events with netd's mark */
	uint64_t updates;	/* interim flows reported */
	uint64_t enobufs;	/* receive-buffer overruns */
	uint64_t resyncs;	/* resync dumps done */
	uint64_t live_at_resync;	/* marked entries found by the last dump */
	uint64_t bad;		/* messages that did not parse */
	uint64_t closing;	/* closing-state updates reported */
	uint64_t closing_lost;	/* update socket overruns (updates lost; DESTROY still comes) */
	uint64_t opened;	/* NEW events with netd's mark */
	uint64_t closed;	/* ACCT_CLOSE reported */
	uint64_t close_gone;	/* closing GETs that found the entry gone (DESTROY reports) */
};

/*
 * acct_sysctl_enable() - turn on conntrack byte accounting and timestamps
 * in the caller's network namespace (net.netfilter.nf_conntrack_acct=1,
 * nf_conntrack_timestamp=1 via /proc/sys).  Only entries created
 * afterwards carry counters.  Return: 0; -errno (e.g. -ENOENT: conntrack
 * not loaded).
 */
int acct_sysctl_enable(void);

/*
 * acct_new() - subscribe to conntrack DESTROY, NEW and UPDATE events in the
 * caller's netns and start the dump timer on @base.  @ops, @ctx borrowed
 * for the lifetime.  @ret: caller frees with acct_free().  Return: 0; -errno.
 */
int acct_new(struct event_base *base, const struct acct_config *cfg,
	     const struct acct_ops *ops, void *ctx, struct acct **ret);

/* acct_free() - drain pending events (reported), close; NULL-safe. */
void acct_free(struct acct *a);

/*
 * acct_poll() - read every event queued now, synchronously (also done by
 * the event loop).  For shutdown and tests.  Return: events handled; -errno.
 */
int acct_poll(struct acct *a);

/* acct_tcp_closing() - is @state (TCP_CONNTRACK_*) one where the
 * connection is closing or closed (FIN_WAIT .. CLOSE)?  Pure. */
bool acct_tcp_closing(uint8_t state);

/* acct_tcp_closed() - is @state one where the connection is over: TIME_WAIT
 * (both FINs acknowledged) or CLOSE (a RST)?  Half-closed states
 * (FIN_WAIT, CLOSE_WAIT, LAST_ACK) are not: data may still flow one way.
 * Pure. */
bool acct_tcp_closed(uint8_t state);

/*
 * acct_lookup() - is there a conntrack entry with @f's original tuple
 * (src, dst, proto, sport, dport; @f->id 0) now?  One synchronous
 * IPCTNL_MSG_CT_GET on the dump socket.  `netd verify` asks it of a probe
 * that should have been dropped: an entry means the kernel let it past
 * the filter hooks (conntrack confirms only accepted packets).
 * Return: 1 yes; 0 no; -errno.
 */
int acct_lookup(struct acct *a, const struct ct_flow *f);

/*
 * acct_original() - the destination a packet from @src:@sport to
 * @dst:@dport (@proto) was going to before a DNAT (netd's redirect of a
 * steered connection to the gateway): the original tuple of the conntrack
 * entry whose replies go @dst:@dport -> @src:@sport.  One synchronous
 * IPCTNL_MSG_CT_GET by reply tuple on the dump socket.  On 1, @dst and
 * @dport (host byte order) are replaced.
 * Return: 1 replaced; 0 no such entry (the packet's first, never
 * confirmed; or gone); -errno.
 */
int acct_original(struct acct *a, uint8_t proto, struct addr *dst, uint16_t *dport,
		  const struct addr *src, uint16_t sport);

/* acct_get_stats() - counters since acct_new(). */
void acct_get_stats(const struct acct *a, struct acct_stats *out);

#endif
