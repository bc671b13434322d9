/*
 * acct - per-connection byte accounting from conntrack (ctnetlink over
 * libmnl), on the daemon's libevent loop.  The edge only: ctmsg.c decodes,
 * the daemon turns flows into audit records.
 *
 * Which entries: netd's sandbox chains set a conntrack mark
 * ACCT_MARK(slot) on every new connection they see, so an entry carries
 * its sandbox from the first packet on; entries without netd's mark
 * (the host's own traffic, DNS redirected to the proxy) are ignored.
 *
 * Events: the DESTROY group only, with NETLINK_BROADCAST_ERROR set, which
 * makes the kernel's destroy events reliable: if the message cannot be
 * queued to us (receive buffer full) the kernel keeps the entry on its
 * dying list and re-sends the event later, instead of losing it.  A
 * receive-buffer overrun (ENOBUFS) is still detected, counted, logged and
 * followed by a resync dump of the live entries, which re-counts what is
 * live.  Interim counters of long connections come from a periodic dump
 * (every update_interval_s), not from events.
 *
 * Closing TCP connections (for the idle grace, trail.c): only when asked
 * (acct_watch_closing()), a second event socket joins the UPDATE group and
 * reports marked TCP entries whose state became FIN_WAIT, CLOSE_WAIT,
 * LAST_ACK, TIME_WAIT or CLOSE - DESTROY comes only after TIME_WAIT
 * (120 s by default), far too late to start a grace.  That socket is
 * separate on purpose: it is best effort (no NETLINK_BROADCAST_ERROR, so
 * an overrun there loses updates, is counted, and never stalls or resyncs
 * the DESTROY socket), and accounting records never come from it.
 */
#ifndef NETD_ACCT_H
#define NETD_ACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "netd/ctmsg.h"

struct event_base;
struct acct;

#define ACCT_MARK_BASE 0x6e640000u	/* "nd" in the upper 16 bits */
#define ACCT_MARK_MASK 0xffff0000u
/* Bit 15 is the SNI check's "done" bit (fw.h FW_SNI_DONE_CTMARK), not the slot's. */
#define ACCT_MARK_SLOT_BITS 0x7fffu
/* The mark of sandbox slot @slot (slot < SANDBOX_MAX = 16384 < 0x7fff). */
#define ACCT_MARK(slot) (ACCT_MARK_BASE | (((uint32_t)(slot) + 1) & ACCT_MARK_SLOT_BITS))
/* The slot of a mark made by ACCT_MARK(), or -1. */
#define ACCT_MARK_SLOT(mark) \
	((((mark) & ACCT_MARK_MASK) == ACCT_MARK_BASE && ((mark) & ACCT_MARK_SLOT_BITS)) ? \
		 (int64_t)((mark) & ACCT_MARK_SLOT_BITS) - 1 : (int64_t)-1)

enum acct_kind {
	ACCT_END = 1,		/* the connection ended (DESTROY event) */
	ACCT_UPDATE,		/* interim counters of a live connection (periodic dump) */
};

struct acct_ops {
	/* One flow carrying netd's mark; @f borrowed for the call. */
	void (*flow)(void *ctx, enum acct_kind kind, const struct ct_flow *f);
	/* A marked TCP entry reached a closing state (acct_watch_closing());
	 * @f borrowed for the call; may be NULL when not watched.  Called once
	 * per state change, so several times per connection. */
	void (*closing)(void *ctx, const struct ct_flow *f);
};

struct acct_config {
	uint32_t update_interval_s;	/* interim lines for flows older than this; 0 = none */
	uint32_t rcvbuf_bytes;		/* event socket receive buffer; 0 = 8 MiB */
};

struct acct_stats {
	uint64_t ended;		/* DESTROY events with netd's mark */
	uint64_t updates;	/* interim flows reported */
	uint64_t enobufs;	/* receive-buffer overruns */
	uint64_t resyncs;	/* resync dumps done */
	uint64_t live_at_resync;	/* marked entries found by the last dump */
	uint64_t bad;		/* messages that did not parse */
	uint64_t closing;	/* closing-state updates reported (acct_watch_closing()) */
	uint64_t closing_lost;	/* update socket overruns (updates lost; DESTROY still comes) */
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
 * acct_new() - subscribe to conntrack DESTROY events in the caller's netns
 * and start the update timer on @base.  @ops, @ctx borrowed for the
 * lifetime.  @ret: caller frees with acct_free().  Return: 0; -errno.
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

/*
 * acct_watch_closing() - @on: subscribe a second, best-effort event
 * socket to conntrack UPDATE events and report closing TCP states to
 * ops->closing (see the top of this file); !@on: close it.  Idempotent.
 * Return: 0; -errno (nothing changed).
 */
int acct_watch_closing(struct acct *a, bool on);

/* acct_tcp_closing() - is @state (TCP_CONNTRACK_*) one where the
 * connection is closing or closed (FIN_WAIT .. CLOSE)?  Pure. */
bool acct_tcp_closing(uint8_t state);

/* acct_get_stats() - counters since acct_new(). */
void acct_get_stats(const struct acct *a, struct acct_stats *out);

#endif
