/*
 * sniflow - per-connection state of the SNI/Host check: from the SYN on,
 * the client's first payload bytes in sequence order, until sni.h decides.
 * Pure bookkeeping over memory: the caller hands in packets (already
 * parsed from the queue), gets back what to do with each; no I/O, no
 * logging.  Times are caller-supplied monotonic milliseconds.
 *
 * Why from the SYN: the server reads the stream from its first byte, so
 * the check must too.  A flow whose SYN netd did not see (netd restarted,
 * the table was full or swept, a picked-up connection) has an unknown
 * start and is reported SNIFLOW_UNKNOWN: the caller fails it closed under
 * enforce.  A segment beyond a gap is dropped (the client retransmits in
 * order); bytes already seen are not looked at again.
 */
#ifndef NETD_SNI_FLOW_H
#define NETD_SNI_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/sni/sni.h"

#define SNIFLOW_MAX        4096	/* undecided and recently decided flows */
#define SNIFLOW_PACKETS_MAX 64	/* queued packets per flow before it is "too long" */
#define SNIFLOW_KEEP_MS    60000	/* a settled flow is remembered this long */

/* One TCP segment from the sandbox, as the queue saw it (borrowed). */
struct sniflow_pkt {
	struct addr src, dst;
	uint16_t sport, dport;	/* host byte order */
	uint32_t seq;		/* host byte order */
	bool syn, fin, rst, ack;
	const uint8_t *payload;
	size_t len;
};

/*
 * sniflow_pkt_parse() - an IPv4 (RFC 791) or IPv6 (RFC 8200) packet carrying
 * TCP (RFC 9293 3.1) into *@out (payload points into @ip).  IP fragments,
 * IPv6 extension headers and anything but TCP are -EPROTO (the caller
 * fails them closed under enforce); short or inconsistent lengths -EBADMSG.
 */
int sniflow_pkt_parse(const uint8_t *ip, size_t len, struct sniflow_pkt *out);

enum sniflow_step {
	SNIFLOW_ACCEPT,		/* pass this one; keep watching the flow */
	SNIFLOW_DROP,		/* out of order: drop it, the client sends it again */
	SNIFLOW_DECIDED,	/* the stream just decided (*res): caller judges,
				 * then sniflow_settle() */
	SNIFLOW_LATE,		/* undecided at the deadline or after
				 * SNIFLOW_PACKETS_MAX packets (*res: so far) */
	SNIFLOW_UNKNOWN,	/* no SYN seen for it, or no room for it */
	SNIFLOW_ACCEPTED,	/* settled before as accepted */
	SNIFLOW_REJECTED,	/* settled before as rejected: reset again */
};

struct sniflow_tab;

/* What the caller attached to a flow (sniflow_tag()), and when its SYN came. */
struct sniflow_meta {
	uint64_t start_ms;	/* the SYN */
	uint8_t tag[2];		/* 0 until tagged */
	bool tagged;
};

/* sniflow_new() - an empty table; caller frees with sniflow_free().  Return: 0; -ENOMEM. */
int sniflow_new(struct sniflow_tab **ret);

/* sniflow_free() - NULL-safe. */
void sniflow_free(struct sniflow_tab *t);

/*
 * sniflow_packet() - one segment at @now_ms; @deadline_ms after its SYN a
 * flow must have decided.  @res is filled for SNIFLOW_DECIDED and
 * SNIFLOW_LATE.  A SYN starts (or restarts) the flow's state; a RST ends it.
 */
enum sniflow_step sniflow_packet(struct sniflow_tab *t, const struct sniflow_pkt *p,
				 uint64_t now_ms, uint32_t deadline_ms, struct sni_result *res);

/*
 * sniflow_meta() - @p's flow's meta data into *@ret.  Return: false if the
 * table has no flow for it.
 */
bool sniflow_meta(struct sniflow_tab *t, const struct sniflow_pkt *p, struct sniflow_meta *ret);

/* sniflow_tag() - remember @a, @b with @p's flow (the check's modes at its SYN). */
void sniflow_tag(struct sniflow_tab *t, const struct sniflow_pkt *p, uint8_t a, uint8_t b);

/*
 * sniflow_settle() - the caller's verdict on @p's flow after SNIFLOW_DECIDED,
 * SNIFLOW_LATE or SNIFLOW_UNKNOWN: later packets of it (already queued when
 * the verdict went out) get SNIFLOW_ACCEPTED / SNIFLOW_REJECTED for
 * SNIFLOW_KEEP_MS.  Its stream buffer is freed.
 */
void sniflow_settle(struct sniflow_tab *t, const struct sniflow_pkt *p, bool accepted,
		    uint64_t now_ms);

/*
 * sniflow_sweep() - forget settled flows older than SNIFLOW_KEEP_MS and
 * undecided ones older than @deadline_ms (their next packet is then
 * SNIFLOW_UNKNOWN, which fails closed).  Return: how many were dropped.
 * Memory: a flow's 16 KiB stream buffer exists only from its first payload
 * byte until it is decided or swept.
 */
size_t sniflow_sweep(struct sniflow_tab *t, uint64_t now_ms, uint32_t deadline_ms);

/* sniflow_count() - flows held. */
size_t sniflow_count(const struct sniflow_tab *t);

#endif
