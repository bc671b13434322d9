/*
 * nflog - deny events: the packets netd's drop rules log to nfnetlink_log
 * group N ("log group N prefix netd:REASON", see fw.c), read over libmnl on
 * the daemon's libevent loop, with a per-sandbox rate limit so a flood of
 * dropped packets cannot fill the disk.  What is not recorded is counted
 * and reported: with the sandbox's next deny record ("suppressed": N), or,
 * if none follows, by the periodic flush (ops->suppressed).
 * Decoding is ctmsg.c's (ct_parse_log()).
 */
#ifndef NETD_NFLOG_H
#define NETD_NFLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "netd/trail/ctmsg.h"

struct event_base;
struct nflog;

#define NFLOG_PREFIX "netd:"	/* every prefix netd's rules log with */
#define NFLOG_MAX_SLOTS 65536	/* rate-limit state per sandbox slot */

struct nflog_ops {
	/* One logged packet; @p borrowed for the call; reason = prefix after "netd:". */
	void (*packet)(void *ctx, const struct ct_logpkt *p, const char *reason);
	/* @n packets of sandbox @slot were suppressed and not reported since. */
	void (*suppressed)(void *ctx, uint32_t slot, uint64_t n);
};

struct nflog_config {
	uint16_t group;		/* nflog group; != 0 */
	uint32_t rate_per_s;	/* deny records per sandbox per second; 0 = 20 */
	uint32_t burst;		/* bucket depth; 0 = 50 */
	uint32_t flush_s;	/* report pending suppressed counts this often; 0 = 10 */
};

struct nflog_stats {
	uint64_t packets;	/* packets received with netd's prefix */
	uint64_t suppressed;	/* ... of which not recorded (rate limit) */
	uint64_t enobufs;	/* receive-buffer overruns (packets lost before us) */
	uint64_t bad;		/* messages that did not parse */
};

/*
 * nflog_new() - bind nfnetlink_log group @cfg->group in the caller's netns
 * (copy the first 128 bytes of each packet) on @base.  @ops/@ctx borrowed.
 * @ret: caller frees with nflog_free().  Return: 0; -EBUSY (another
 * listener has the group); -errno.
 */
int nflog_new(struct event_base *base, const struct nflog_config *cfg,
	      const struct nflog_ops *ops, void *ctx, struct nflog **ret);

/* nflog_free() - unbind and close; NULL-safe. */
void nflog_free(struct nflog *n);

/*
 * nflog_admit() - rate limit for sandbox @slot at @now_ms (monotonic): true
 * if a record may be written now; then *@ret_suppressed is how many were
 * suppressed before it (and the count restarts).  False: counted.
 */
bool nflog_admit(struct nflog *n, uint32_t slot, uint64_t now_ms, uint64_t *ret_suppressed);

/* nflog_forget() - reset @slot's limiter (the sandbox is gone). */
void nflog_forget(struct nflog *n, uint32_t slot);

/* nflog_get_stats() - counters since nflog_new(). */
void nflog_get_stats(const struct nflog *n, struct nflog_stats *out);

#endif
