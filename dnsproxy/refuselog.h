/*
 * refuselog - one log line per answer address the proxy refused to pin (the
 * never-pin table, the host's own addresses, the sandbox pools: DNS
 * rebinding), rate-limited so a hostile zone cannot flood the log.  An edge
 * helper: it logs; what it logs about is decided by decide_never_pin().
 */
#ifndef NETD_DNSPROXY_REFUSELOG_H
#define NETD_DNSPROXY_REFUSELOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/tbucket.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/wire.h"

#define REFUSELOG_RATE_PER_S 10	/* lines a second on average ... */
#define REFUSELOG_BURST      50	/* ... and at most this many at once */

/* Zero-initialised state (a member of the proxy); no _done needed. */
struct refuse_log {
	struct tbucket tb;
	bool started;		/* tb initialised */
	uint64_t suppressed;	/* refused addresses not logged since the last line */
	uint64_t total;		/* refused addresses, all time */
};

/*
 * refuse_log_answer() - log each address of @addrs[0..@n) that
 * decide_never_pin(@c) refuses, with the sandbox, the qname and what the
 * address is ("Azure WireServer ... (source)", "the 6to4 form of ..."),
 * while @rl's token bucket allows; the rest are counted and the count is
 * reported on the next line that passes.  @qname comes from the sandbox and
 * is quoted; @now_ms: monotonic milliseconds.
 * Return: how many addresses were refused (logged or not).
 */
size_t refuse_log_answer(struct refuse_log *rl, const struct decide_ctx *c, const char *sandbox,
			 const char *qname, const struct wire_addr *addrs, size_t n,
			 uint64_t now_ms);

/*
 * refuse_log_describe() - what @a is, for a log line: the never-pin table's
 * entry (and the embedding, for an IPv6 form of an IPv4 entry), else "the
 * host's own address or a sandbox pool" (naming the documentation block too
 * when @a is in one).  @buf/@sz: destination.
 * Return: @buf.
 */
char *refuse_log_describe(const struct addr *a, char *buf, size_t sz);

#endif
