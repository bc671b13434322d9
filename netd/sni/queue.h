/*
 * sniq - the SNI check's netfilter queue (nfnetlink_queue over libmnl, with
 * libnetfilter_queue's message builders): packets the ruleset queues (fw.h,
 * "SNI check") in, one verdict per packet out.  The edge only: no policy,
 * no parsing of what the packets carry, no logging (the caller logs).
 *
 * Verdicts: accept; accept and set the conntrack mark bit
 * FW_SNI_DONE_CTMARK (the ruleset stops queueing the connection: the rest
 * of it stays in the kernel; set through ctnetlink on a second socket
 * before the verdict goes out, since setting it with the verdict needs
 * CONFIG_NETFILTER_NETLINK_GLUE_CT, which not every kernel has); drop; reset (NF_REPEAT with the packet mark
 * bit FW_SNI_RESET_MARK: the policy chain's first rule then answers it
 * with a TCP reset); accept with the packet replaced (netd's reset of the
 * server's side, netd/sni/rst.h); for a refused QUIC flow, drop and set
 * FW_SNI_DROP_CTMARK, which the chain's first rules drop.
 */
#ifndef NETD_SNI_QUEUE_H
#define NETD_SNI_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

struct sniq;

/* One queued packet; everything borrowed for the callback only. */
struct sniq_packet {
	uint32_t id;		/* the kernel's packet id (host byte order) */
	uint32_t mark;		/* its packet mark (0 if none) */
	const uint8_t *ip;	/* the IP packet */
	size_t len;
};

/* The connection's original-direction tuple, for SNIQ_ACCEPT_DONE and SNIQ_DROP_MARK. */
struct sniq_tuple {
	struct addr src, dst;
	uint16_t sport, dport;	/* host byte order */
	uint8_t proto;		/* IPPROTO_UDP for a QUIC flow; 0 or IPPROTO_TCP: TCP */
};

enum sniq_verdict {
	SNIQ_ACCEPT,
	SNIQ_ACCEPT_DONE,
	SNIQ_DROP,
	SNIQ_RESET,
	SNIQ_DROP_MARK,		/* drop, and mark the flow's entry FW_SNI_DROP_CTMARK (QUIC) */
};

/*
 * sniq_open() - bind queue @num in the caller's netns (copy whole
 * packets, at most @maxlen waiting).  @fail_open:
 * when the queue is full the kernel accepts instead of dropping
 * (NFQA_CFG_F_FAIL_OPEN; for `log` rules).  The socket is non-blocking.
 * @ret: caller frees with sniq_close().  Return: 0; -errno (-EBUSY: another
 * process has the queue).
 */
int sniq_open(uint16_t num, uint32_t maxlen, bool fail_open, struct sniq **ret);

/* sniq_close() - unbind and close; NULL-safe.  Waiting packets get the
 * kernel's default (dropped; for bypass rules, the rule lets later ones pass). */
void sniq_close(struct sniq *q);

/* sniq_fd() - the socket, for the event loop. */
int sniq_fd(const struct sniq *q);

/*
 * sniq_receive() - read what is waiting (up to @max_msgs messages) and call
 * @cb for each packet; @cb must give a verdict (sniq_verdict()) before it
 * returns.  Return: messages read (0: nothing waiting); -ENOBUFS (the
 * socket overran: packets were lost to the kernel's default); -errno.
 */
int sniq_receive(struct sniq *q, unsigned int max_msgs,
		 void (*cb)(void *ctx, struct sniq *q, const struct sniq_packet *p), void *ctx);

/*
 * sniq_verdict() - the verdict on @p.  @t: its connection (needed for
 * SNIQ_ACCEPT_DONE; may be NULL otherwise).  If the mark cannot be set the
 * packet is still accepted (its connection just stays queued: each later
 * packet is judged again) and -errno returned.  SNIQ_RESET marks @t's entry
 * refused (FW_SNI_DROP_CTMARK, as SNIQ_DROP_MARK does: its conn records
 * say so) before the reset; -ENOENT if it has no entry yet or any more,
 * the reset all the same.  Return: 0; -errno.
 */
int sniq_verdict(struct sniq *q, const struct sniq_packet *p, enum sniq_verdict v,
		 const struct sniq_tuple *t);

/*
 * sniq_verdict_replace() - a refusal's verdict: accept @p with its bytes
 * replaced by @ip (@len bytes, a whole IP packet; at most SNIQ_REPLACE_MAX;
 * copied): the replacement goes on through the hook and the connection's
 * NAT in @p's place (NFQA_PAYLOAD with the verdict), @p's own bytes go
 * nowhere.  The caller vouches for the replacement (its addresses, ports
 * and checksums).  @t's entry is marked refused first, as by SNIQ_RESET.
 * Return: 0; -EMSGSIZE; -ENOENT (no entry to mark; the verdict is given);
 * -errno.
 */
#define SNIQ_REPLACE_MAX 256
int sniq_verdict_replace(struct sniq *q, const struct sniq_packet *p, const uint8_t *ip,
			 size_t len, const struct sniq_tuple *t);

#endif
