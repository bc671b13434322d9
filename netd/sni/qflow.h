/*
 * qflow - per-flow state of the SNI check for QUIC (docs/sni.md, issue 25):
 * a UDP flow (addresses and ports) to a checked port, from its first
 * datagram until quic.h read a ClientHello out of its Initial packets.
 * Pure bookkeeping over memory, like flow.h for TCP: the caller hands in
 * datagrams (parsed from the queue), gets back what to do with each; no
 * I/O, no logging; times are caller-supplied monotonic milliseconds.
 *
 * While undecided, a datagram that holds only Initial packets passes (the
 * server cannot finish a handshake without the rest of the ClientHello,
 * which is still to come through here); one that holds a 0-RTT, Handshake
 * or short-header packet is dropped (its keys come from a handshake not
 * yet allowed), as is one with an Initial in a datagram under 1200 bytes
 * (a server discards that Initial: RFC 9000 14.1, so it must not be read
 * either; once accepted, such a datagram passes unread).  The
 * datagram that completes the ClientHello waits for the caller's verdict.
 *
 * What decides is what the server reads.  An accepted flow keeps the
 * ClientHello bytes it read and its keys: a later Initial of the same
 * connection whose CRYPTO data differs where it overlaps them is
 * QFLOW_REWRITTEN (RFC 9000 2.2: the data at an offset must not change; a
 * server keeps the first it got, which may be a copy netd passed while
 * the other was lost); an Initial that opens only with keys from a new
 * Destination Connection ID is a new connection (after a Retry or a
 * Version Negotiation, or a second connection on the same addresses and
 * ports) and is checked afresh.  A flow settled as rejected stays
 * rejected until it is forgotten.
 *
 * Shares: each owner (a sandbox slot) holds at most QFLOW_OPEN_PER_OWNER
 * flows under check; settled flows are remembered while there is room,
 * the oldest forgotten first.
 */
#ifndef NETD_SNI_QFLOW_H
#define NETD_SNI_QFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/sni/sni.h"

#define QFLOW_MAX            4096	/* flows held, under check and settled */
#define QFLOW_OPEN_PER_OWNER 64		/* flows one owner has under check */
#define QFLOW_DGRAMS_MAX     32		/* datagrams of an undecided flow */
#define QFLOW_KEEP_MS        60000	/* a settled flow is remembered at most this long */

/* One UDP datagram, as the queue saw it (borrowed). */
struct qflow_pkt {
	struct addr src, dst;
	uint16_t sport, dport;	/* host byte order */
	const uint8_t *payload;	/* the UDP payload */
	size_t len;
};

/*
 * qflow_pkt_parse() - an IPv4 or IPv6 packet carrying UDP (RFC 768) into
 * *@out (payload points into @ip); the IP header as sniflow_ip_parse().
 * Return: 0; -EPROTO (not UDP, a fragment, ESP); -EBADMSG (short, or a
 * UDP length that disagrees with the packet's).
 */
int qflow_pkt_parse(const uint8_t *ip, size_t len, struct qflow_pkt *out);

enum qflow_step {
	QFLOW_PASS,		/* undecided: this datagram passes */
	QFLOW_DROP,		/* drop this datagram only (see above) */
	QFLOW_DECIDED,		/* the ClientHello just decided (*res): the caller
				 * judges, then qflow_settle() */
	QFLOW_VERSION,		/* a QUIC version this check cannot read (*res:
				 * SNI_GARBAGE): judged like a decision */
	QFLOW_LATE,		/* undecided at the deadline (*res: so far) */
	QFLOW_TOO_MANY,		/* undecided after QFLOW_DGRAMS_MAX datagrams */
	QFLOW_REWRITTEN,	/* CRYPTO data read before came again, different */
	QFLOW_FULL,		/* no room: the owner's share (or the table) is full */
	QFLOW_ACCEPTED,		/* settled before as accepted: pass */
	QFLOW_REJECTED,		/* settled before as rejected: drop */
};

struct qflow_tab;

/* qflow_new() - an empty table for owners 0..@n_owners-1; qflow_free() frees it.  Return: 0; -ENOMEM. */
int qflow_new(uint32_t n_owners, struct qflow_tab **ret);

/* qflow_free() - NULL-safe. */
void qflow_free(struct qflow_tab *t);

/*
 * qflow_packet() - one datagram from the sandbox (@owner's) at @now_ms; a
 * flow must decide within @deadline_ms of its first datagram.  @res is
 * filled for QFLOW_DECIDED, _VERSION, _LATE, _TOO_MANY and _REWRITTEN.
 * The first datagram of a flow starts it.
 */
enum qflow_step qflow_packet(struct qflow_tab *t, const struct qflow_pkt *p, uint32_t owner,
			     uint64_t now_ms, uint32_t deadline_ms, struct sni_result *res);

/*
 * qflow_settle() - the caller's verdict on @p's flow after any step that
 * ends a check: accepted, it keeps the ClientHello bytes it read (to
 * compare later Initials with); rejected, its datagrams are
 * QFLOW_REJECTED while it is remembered.  A flow the table has no room for
 * is not remembered.
 */
void qflow_settle(struct qflow_tab *t, const struct qflow_pkt *p, bool accepted, uint64_t now_ms);

/*
 * qflow_tag() / qflow_tagged() - remember @a, @b with @p's flow (the modes
 * at its start); read them back with the flow's start (monotonic ms).
 * qflow_tagged() returns false when the table holds no flow of @p or it was
 * never tagged (then nothing is written).
 */
void qflow_tag(struct qflow_tab *t, const struct qflow_pkt *p, uint8_t a, uint8_t b);
bool qflow_tagged(struct qflow_tab *t, const struct qflow_pkt *p, uint8_t *a, uint8_t *b,
		  uint64_t *start_ms);

/*
 * qflow_sweep() - forget settled flows older than QFLOW_KEEP_MS and
 * undecided ones older than @deadline_ms (their next datagram starts a new
 * flow).  Return: how many.  Memory: an undecided flow holds an 18 KiB
 * reassembly buffer, an accepted one the ClientHello it read.
 */
size_t qflow_sweep(struct qflow_tab *t, uint64_t now_ms, uint32_t deadline_ms);

/* qflow_count() - flows held; qflow_open_count() - flows @owner has under check. */
size_t qflow_count(const struct qflow_tab *t);
size_t qflow_open_count(const struct qflow_tab *t, uint32_t owner);

#endif
