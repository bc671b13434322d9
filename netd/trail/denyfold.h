/*
 * denyfold - denied packets of one attempt folded into one "deny" record.
 * A refused TCP connect sends its SYN again after 1 s, 3 s, 7 s ...; a UDP
 * client repeats its datagram.  Packets of one sandbox with the same
 * 5-tuple (proto, src, sport, dst, dport; ICMP: type/code) and reason,
 * each within DENYFOLD_GAP_MS of the previous one, are one attempt: one
 * record with "count" and the first and last packet's times, written once
 * the attempt has been quiet for DENYFOLD_GAP_MS (or has lasted
 * DENYFOLD_HOLD_MS).  Pure: memory only; the caller owns the clock, the
 * rate limit and the writing.
 *
 * Bounded: DENYFOLD_CAP attempts pending at once; a new one beyond that
 * pushes out the oldest pending attempt (written early, never lost).
 */
#ifndef NETD_DENYFOLD_H
#define NETD_DENYFOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "netd/trail/ctmsg.h"

#define DENYFOLD_GAP_MS  3000	/* SYN retransmits at +1 s, +2 s fold; the one at +4 s does not */
#define DENYFOLD_HOLD_MS 30000	/* an attempt is written after this long at most */
#define DENYFOLD_CAP     1024	/* pending attempts; a power of two */

struct denyfold;

/* One pending attempt, as handed back to be written. */
struct denyfold_rec {
	uint32_t slot;		/* sandbox slot */
	struct ct_logpkt pkt;	/* the first packet */
	char reason[32];
	uint64_t suppressed;	/* the rate limiter's count when the attempt began */
	struct ct_deny_span span;	/* count, first and last (CLOCK_REALTIME ns) */
	uint64_t first_ms, last_ms;	/* monotonic */
};

/* denyfold_new() - @ret: caller frees with denyfold_free().  Return: 0; -ENOMEM. */
int denyfold_new(struct denyfold **ret);

/* denyfold_free() - NULL-safe; pending attempts are dropped (take them first). */
void denyfold_free(struct denyfold *d);

/*
 * denyfold_join() - packet @p (@reason) of sandbox @slot at @now_ms
 * (monotonic) / @now_ns (realtime): if it continues a pending attempt it
 * is counted there.  Return: true (folded: nothing more to do); false (a
 * new attempt: the caller rate-limits it, then denyfold_add()s it).
 */
bool denyfold_join(struct denyfold *d, uint32_t slot, const struct ct_logpkt *p,
		   const char *reason, uint64_t now_ms, uint64_t now_ns);

/*
 * denyfold_add() - start a pending attempt with packet @p.  @suppressed:
 * what the rate limiter reports for the record.  If the table is full, the
 * oldest attempt is taken out into *@evicted (write it now).
 * Return: true if *@evicted was filled.
 */
bool denyfold_add(struct denyfold *d, uint32_t slot, const struct ct_logpkt *p,
		  const char *reason, uint64_t suppressed, uint64_t now_ms, uint64_t now_ns,
		  struct denyfold_rec *evicted);

/*
 * denyfold_take() - take out one attempt that is due at @now_ms (quiet
 * for DENYFOLD_GAP_MS, or older than DENYFOLD_HOLD_MS) into *@out; with
 * @slot >= 0, any attempt of that slot (its sandbox is going); with @all,
 * any (shutdown).  Return: true if *@out was filled.
 */
bool denyfold_take(struct denyfold *d, uint64_t now_ms, int64_t slot, bool all,
		   struct denyfold_rec *out);

/* denyfold_pending() - attempts pending. */
unsigned int denyfold_pending(const struct denyfold *d);

#endif
