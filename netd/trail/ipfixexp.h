/*
 * ipfixexp - the IPFIX exporter (RFC 7011): netd's connection records,
 * encoded once by ipfix.c, sent to each configured collector over UDP or
 * TCP on the daemon's libevent loop, never blocking it.  The edge: sockets,
 * timers, the clock, log lines.
 *
 * Per collector: a queue of encoded records bounded by buffer_size bytes.
 * Records are taken from it into Messages of at most message_size bytes
 * when the loop turn that produced them ends (and when the socket can take
 * more).  What does not fit the bound is dropped and counted, so a
 * collector that is down or slow costs at most that memory and never holds
 * up enforcement or the audit log; a drop while the Transport Session is up
 * also advances the Message Header's Sequence Number, so the collector sees
 * the gap (RFC 7011 10.2.2, 10.4.1).
 *
 * Templates (RFC 7011 8): over TCP at the start of every connection, before
 * any Data Set; over UDP at start, every template_refresh seconds (8.4) and
 * in the first message after the collector refused one (an ICMP port
 * unreachable seen as ECONNREFUSED on the connected socket: the collector
 * was down, and may have come back without them).  TCP reconnects no more
 * often than reconnect_interval (RFC 7011 10.4.4: once a minute by
 * default), doubling the wait after each failure up to 16 times it; a
 * connection that lasted one interval resets it.  No Template Withdrawal
 * is ever sent (8.4: never over UDP; over TCP the templates never change).
 */
#ifndef NETD_IPFIXEXP_H
#define NETD_IPFIXEXP_H

#include <stdio.h>

#include <jansson.h>

#include "netd/model/config.h"
#include "netd/trail/ipfix.h"

struct event_base;
struct ipfixexp;

/*
 * ipfixexp_new() - an exporter to @cfg's collectors on @base (UDP sockets
 * opened and TCP connections started now; one that fails is retried).
 * @cfg is copied.  @ret: caller frees with ipfixexp_free().
 * Return: 0; -EINVAL (no collector); -ENOMEM.
 */
int ipfixexp_new(struct event_base *base, const struct config_ipfix *cfg, struct ipfixexp **ret);

/*
 * ipfixexp_free() - send what the sockets take now without waiting, count
 * the rest as dropped, close; NULL-safe.
 */
void ipfixexp_free(struct ipfixexp *x);

/*
 * ipfixexp_add() - export @f (borrowed for the call) to every collector:
 * encoded once, queued, sent when this loop turn ends.  Never blocks.
 * A collector whose queue is full drops it (counted).
 */
void ipfixexp_add(struct ipfixexp *x, const struct ipfix_flow *f);

/*
 * ipfixexp_flush() - build and send what the queues hold now, as the end of
 * the loop turn would (for shutdown and tests).  Never blocks.
 */
void ipfixexp_flush(struct ipfixexp *x);

/* Counters of one collector since start (ipfixexp_stats()). */
struct ipfixexp_stats {
	char name[CONFIG_IPFIX_URL_MAX];	/* "udp://192.0.2.9:4739" */
	bool up;		/* TCP: connected; UDP: the last send was not refused */
	uint64_t records_sent;	/* Data Records handed whole to the kernel */
	uint64_t records_dropped;	/* queue full, refused, or cut by a lost connection */
	uint64_t messages_sent;
	uint64_t templates_sent;	/* messages that carried the Template Set */
	uint64_t sessions;	/* TCP connections made; UDP sockets opened */
	uint64_t queued_records, queued_bytes;	/* waiting now */
};

/*
 * ipfixexp_stats() - collector @i's counters into @out.
 * Return: 0; -ENOENT (no such collector).
 */
int ipfixexp_stats(const struct ipfixexp *x, size_t i, struct ipfixexp_stats *out);

/*
 * ipfixexp_metrics() - the netd_ipfix_* families (docs/metrics.md), one
 * series per collector, labelled collector="udp://ADDR:PORT".  NULL-safe
 * (then the families have no samples).
 */
void ipfixexp_metrics(const struct ipfixexp *x, FILE *out);

/* ipfixexp_status_json() - [{collector, up, sent, dropped, queued, sessions}, ...] (new ref). */
json_t *ipfixexp_status_json(const struct ipfixexp *x);

#endif
