/*
 * replay - the replay seam: the proxy's whole data path (query -> decision
 * -> pin -> answer, the cache, the limits, the upstream deadline) driven
 * from scripted inputs, without sockets, libevent, c-ares or root.  The
 * same code as the daemon's path (dnsproxy/query.c); only the edges are
 * the test's: queries come from replay_query(), replies go to
 * replay_ops.reply(), upstream queries go to replay_ops.upstream() and are
 * answered (or failed) by replay_answer(), pins go to proxy_ops.pin()
 * (synchronous, as the daemon's: its return value is the kernel's ack),
 * and the clock is replay_set_clock()'s.  For tests (tests/unit/
 * test_replay.c), as Unbound's testbound replays its scenarios.
 */
#ifndef NETD_DNSPROXY_REPLAY_H
#define NETD_DNSPROXY_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsproxy/proxy.h"

#define REPLAY_MAX_UPSTREAM 1024	/* upstream queries outstanding at once */

struct replay_ops {
	/*
	 * reply() - the proxy sent @msg/@len (a complete DNS message with the
	 * client's ID; borrowed for the call) to the client of query @tag
	 * (replay_query()'s), over TCP if @tcp (no truncation) else UDP.
	 */
	void (*reply)(void *ctx, uint64_t tag, bool tcp, const uint8_t *msg, size_t len);
	/*
	 * upstream() - query @id went upstream: @msg/@len as it would leave
	 * (borrowed for the call).  Answer it with replay_answer(); NULL:
	 * not told.
	 */
	void (*upstream)(void *ctx, unsigned int id, const uint8_t *msg, size_t len);
};

/*
 * replay_new() - a proxy with the seam's edges (@rops/@rctx borrowed for
 * its lifetime) and @cfg/@ops/@ctx as proxy_new() takes them (cfg->port
 * and cfg->upstream are not used).  The clock starts at 1000 ms.
 * @ret: caller frees with proxy_free() (outstanding upstream queries are
 * cancelled).  Return: 0; -EINVAL; -ENOMEM.
 */
int replay_new(const struct proxy_config *cfg, const struct proxy_ops *ops, void *ctx,
	       const struct replay_ops *rops, void *rctx, struct proxy **ret);

/* replay_set_clock() - the proxy's monotonic clock is now @now_ms (never backwards). */
void replay_set_clock(struct proxy *p, uint64_t now_ms);

/*
 * replay_query() - a datagram (@tcp: a framed TCP message, without its
 * length prefix) @msg/@len from @client arrived; @tag names its replies.
 * Everything the proxy can do at once (refuse, deny, a cache hit, pins and
 * the reply) happens before this returns.
 */
void replay_query(struct proxy *p, const struct addr *client, bool tcp, const uint8_t *msg,
		  size_t len, uint64_t tag);

/*
 * replay_answer() - upstream query @id resolved: @err 0 with @ans/@len
 * (any ID: the proxy puts the client's back), or -ETIMEDOUT / -EIO as
 * c-ares reports them.  Return: 0; -ENOENT (no such query outstanding).
 */
int replay_answer(struct proxy *p, unsigned int id, int err, const uint8_t *ans, size_t len);

/* replay_outstanding() - upstream queries not answered by replay_answer() yet. */
size_t replay_outstanding(const struct proxy *p);

/*
 * replay_tick() - run what is due at the clock: upstream deadlines
 * (SERVFAIL), then the pin and cache sweep.
 */
void replay_tick(struct proxy *p);

#endif
