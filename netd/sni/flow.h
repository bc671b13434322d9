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
 * order).
 *
 * Why until the server acknowledged: what decides is what the server read,
 * not what netd read.  A segment the server discards (a TCP-MD5 or TCP-AO
 * option it has no key for, an old timestamp, a hop limit that ends on the
 * way, data in a SYN it does not take) can name an allowed site while its
 * retransmission names another.  So every byte the check read is kept, a
 * segment that covers read bytes must carry the same bytes
 * (SNIFLOW_REWRITTEN otherwise), and an accepted flow stays watched
 * (sniflow_settle() says so) until a reply from the server acknowledges
 * every byte that was read (sniflow_reply(): SNIFLOW_CONFIRMED).  Urgent
 * data (which the server's socket takes out of the stream) and options the
 * check does not model are SNIFLOW_UNMODELLED.
 *
 * Shares: each sandbox (an "owner", a small integer the caller picks) holds
 * at most SNIFLOW_OPEN_PER_OWNER flows still being checked; settled flows
 * are remembered only while there is room (the oldest goes first), so one
 * sandbox can never take the table from another.
 */
#ifndef NETD_SNI_FLOW_H
#define NETD_SNI_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/sni/sni.h"

#define SNIFLOW_MAX        16384	/* flows held, checked and settled */
#define SNIFLOW_OPEN_PER_OWNER 256	/* flows one owner has under check at a time */
#define SNIFLOW_PACKETS_MAX 64	/* queued packets per flow before it is "too long" */
#define SNIFLOW_KEEP_MS    60000	/* a settled flow is remembered at most this long */
#define SNIFLOW_CONFIRM_MS 30000	/* from the decision to the server's acknowledgment
				 * (a lossy path's retransmissions take seconds) */

/* One TCP segment, as the queue saw it (borrowed). */
struct sniflow_pkt {
	struct addr src, dst;
	uint16_t sport, dport;	/* host byte order */
	uint32_t seq;		/* host byte order */
	uint32_t ack_seq;	/* the acknowledgment number, host byte order (if ack) */
	bool syn, fin, rst, ack;
	bool urg;		/* URG: urgent data, which leaves the server's byte stream */
	bool odd_opt;		/* a TCP option the check does not model: TCP-MD5
				 * (RFC 2385, kind 19), TCP-AO (RFC 5925, kind 29),
				 * or an option list that does not parse */
	const uint8_t *payload;
	size_t len;
};

/*
 * sniflow_pkt_parse() - an IPv4 (RFC 791) or IPv6 (RFC 8200) packet carrying
 * TCP (RFC 9293 3.1) into *@out (payload points into @ip).  IPv6 extension
 * headers are walked as the kernel does (hop-by-hop, routing, destination
 * options, AH; a fragment header of a whole packet), at most 8 of them.
 * IP fragments, ESP, "no next header" and anything but TCP are -EPROTO (the
 * caller fails them closed under enforce); short or inconsistent lengths
 * -EBADMSG.
 */
int sniflow_pkt_parse(const uint8_t *ip, size_t len, struct sniflow_pkt *out);

/* An IP packet's addresses and where its upper-layer header starts. */
struct sniflow_ip {
	struct addr src, dst;
	uint8_t proto;		/* the upper-layer protocol (IPPROTO_TCP, IPPROTO_UDP, ...) */
	size_t l4_off, l4_len;	/* its header's offset in the packet, and its length to the end */
};

/*
 * sniflow_ip_parse() - the IPv4 or IPv6 header of @ip (extension headers
 * walked as sniflow_pkt_parse() does) into *@out, for any upper-layer
 * protocol (the QUIC check's UDP, qflow.h).  Return: 0; -EPROTO (a
 * fragment, ESP, no next header, too many extension headers); -EBADMSG.
 */
int sniflow_ip_parse(const uint8_t *ip, size_t len, struct sniflow_ip *out);

enum sniflow_step {
	SNIFLOW_ACCEPT,		/* pass this one; keep watching the flow */
	SNIFLOW_DROP,		/* out of order: drop it, the client sends it again */
	SNIFLOW_DECIDED,	/* the stream just decided (*res): caller judges,
				 * then sniflow_settle() */
	SNIFLOW_LATE,		/* undecided (or unacknowledged) at the deadline
				 * (*res: so far) */
	SNIFLOW_TOO_MANY,	/* undecided after SNIFLOW_PACKETS_MAX packets (*res: so far) */
	SNIFLOW_REWRITTEN,	/* bytes the check read came again, different
				 * (*res: as read) */
	SNIFLOW_UNMODELLED,	/* urgent data or an option the check does not
				 * model (p->urg, p->odd_opt) before the server
				 * acknowledged (*res: as read) */
	SNIFLOW_UNKNOWN,	/* no SYN seen for it */
	SNIFLOW_FULL,		/* no room: its owner's share (or the table) is full */
	SNIFLOW_ACCEPTED,	/* settled before as accepted */
	SNIFLOW_REJECTED,	/* settled before as rejected: reset again */
	SNIFLOW_CONFIRMED,	/* sniflow_reply(): the server acknowledged every
				 * byte read; the flow is settled as accepted */
};

struct sniflow_tab;

/* What the caller attached to a flow (sniflow_tag()), and when its SYN came. */
struct sniflow_meta {
	uint64_t start_ms;	/* the SYN */
	uint8_t tag[2];		/* 0 until tagged */
	bool tagged;
	/* Where the server's stream stands by the check's count if the last
	 * segment given to sniflow_packet() does not reach it: the sequence
	 * number after the last byte let through before that segment (host
	 * byte order), i.e. the server's RCV.NXT; known only for a flow whose
	 * SYN was seen. */
	uint32_t rcv_nxt;
	bool rcv_nxt_known;
};

/*
 * sniflow_new() - an empty table for owners 0..@n_owners-1; caller frees
 * with sniflow_free().  Return: 0; -ENOMEM.
 */
int sniflow_new(uint32_t n_owners, struct sniflow_tab **ret);

/* sniflow_free() - NULL-safe. */
void sniflow_free(struct sniflow_tab *t);

/*
 * sniflow_packet() - one segment from the sandbox (@owner's) at @now_ms;
 * @deadline_ms after its SYN a flow must have decided, and
 * SNIFLOW_CONFIRM_MS after that the server must have acknowledged it
 * (SNIFLOW_LATE otherwise).  @res is filled for SNIFLOW_DECIDED, _LATE, _TOO_MANY,
 * _REWRITTEN and _UNMODELLED.  A SYN starts (or restarts) the flow's
 * state - also the SYN of a new connection that reuses a settled flow's
 * tuple; a RST ends it.
 */
enum sniflow_step sniflow_packet(struct sniflow_tab *t, const struct sniflow_pkt *p,
				 uint32_t owner, uint64_t now_ms, uint32_t deadline_ms,
				 struct sni_result *res);

/*
 * sniflow_reply() - one segment from the server to the sandbox (its source
 * is the flow's destination).  Return: SNIFLOW_CONFIRMED if it
 * acknowledges every byte the check read of an accepted flow (the caller
 * stops watching the connection), SNIFLOW_ACCEPTED for a flow settled as
 * accepted before, SNIFLOW_ACCEPT otherwise (pass it).
 */
enum sniflow_step sniflow_reply(struct sniflow_tab *t, const struct sniflow_pkt *p,
				uint64_t now_ms);

/*
 * sniflow_meta() - @p's flow's meta data into *@ret.  Return: false if the
 * table has no flow for it.
 */
bool sniflow_meta(struct sniflow_tab *t, const struct sniflow_pkt *p, struct sniflow_meta *ret);

/* sniflow_tag() - remember @a, @b with @p's flow (the check's modes at its SYN). */
void sniflow_tag(struct sniflow_tab *t, const struct sniflow_pkt *p, uint8_t a, uint8_t b);

/*
 * sniflow_settle() - the caller's verdict on @p's flow after SNIFLOW_DECIDED
 * (or any step that ends a check): later packets of it (already queued
 * when the verdict went out) get SNIFLOW_ACCEPTED / SNIFLOW_REJECTED while
 * it is remembered.  An accepted flow whose bytes were read stays watched
 * until the server acknowledged them (sniflow_reply()); its bytes are kept
 * until then, otherwise its stream buffer is freed.
 * Return: true if the flow waits for that acknowledgment (the caller must
 * keep the connection queued), false if it is settled.
 */
bool sniflow_settle(struct sniflow_tab *t, const struct sniflow_pkt *p, bool accepted,
		    uint64_t now_ms);

/*
 * sniflow_sweep() - forget settled flows older than SNIFLOW_KEEP_MS,
 * undecided ones older than @deadline_ms and accepted ones still waiting
 * for the server's acknowledgment after SNIFLOW_CONFIRM_MS (their next
 * packet is then SNIFLOW_UNKNOWN, which fails closed).  Return: how many were dropped.
 * Memory: a flow's 16 KiB stream buffer exists only from its first payload
 * byte until the server acknowledged what was read, or it is swept; at
 * most SNIFLOW_OPEN_PER_OWNER per owner.
 */
size_t sniflow_sweep(struct sniflow_tab *t, uint64_t now_ms, uint32_t deadline_ms);

/* sniflow_count() - flows held. */
size_t sniflow_count(const struct sniflow_tab *t);

/* sniflow_open_count() - flows @owner has under check (not settled). */
size_t sniflow_open_count(const struct sniflow_tab *t, uint32_t owner);

#endif
