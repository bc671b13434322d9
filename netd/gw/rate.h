/*
 * gw/rate - the gateway's per-(sandbox, rule) request rate: one token
 * bucket per key, at most a fixed number of keys (the least recently used
 * key goes when a new one needs room).  Pure: the caller passes the time
 * (milliseconds, monotonic); no clock, no logging.  One table per gateway
 * worker, shared by its connections; not thread-safe.
 *
 * Why not common/tbucket.h: it earns whole events per second (an integer
 * rate_per_s), and a policy's "5/m" is 83.333 milli-requests a second.
 * This bucket keeps micro-requests: a rate of rate_milli thousandths of a
 * request a second earns exactly rate_milli micro-requests a millisecond,
 * so N/m is as exact as N/s, in integers, as tbucket.h is.
 */
#ifndef NETD_GW_RATE_H
#define NETD_GW_RATE_H

#include <stddef.h>
#include <stdint.h>

#define GW_RATE_KEY_MAX 64		/* bytes of a sandbox name (SANDBOX_NAME_MAX) */
#define GW_RATE_BURST_MAX 1000000u	/* requests; a larger burst is taken as this */

struct gw_rate;

/*
 * gw_rate_new() - an empty table for at most @max_keys (sandbox, rule)
 * buckets (1..2^24).  All memory is allocated here; gw_rate_take() never
 * allocates.  Return: the table, caller frees with gw_rate_free(); NULL on
 * a bad @max_keys or no memory.
 */
struct gw_rate *gw_rate_new(size_t max_keys);

/* gw_rate_free() - free @r; NULL is a no-op. */
void gw_rate_free(struct gw_rate *r);

/*
 * gw_rate_take() - one request of @sandbox under its policy's gateway rule
 * @rule, at @now_ms: take a token from the key's bucket if it has one.
 * @rate_milli: requests per second x 1000 (0: no limit, always allowed,
 * no key made); @burst: requests at once (>= 1; capped at
 * GW_RATE_BURST_MAX).  A new key starts full.  A key whose rate or burst
 * changed (a reload) starts full again.  Time going backwards earns nothing.
 * When the table is full, the least recently used key is dropped for the
 * new one (it starts full when it comes back: a sandbox only ever has its
 * policy's few rules, so only a table too small for the host's sandboxes
 * loses state, never one sandbox flooding it).
 * @retry_after_s: when refused, the whole seconds until a token is earned,
 * rounded up, >= 1 (RFC 9110 10.2.3 Retry-After); untouched otherwise.
 * Return: 0 allowed; -EAGAIN refused; -EINVAL: @sandbox NULL or longer
 * than GW_RATE_KEY_MAX (the caller refuses the request).
 */
int gw_rate_take(struct gw_rate *r, const char *sandbox, int rule, uint32_t rate_milli,
		 uint32_t burst, uint64_t now_ms, uint32_t *retry_after_s);

/* gw_rate_count() - keys in @r now (<= max_keys). */
size_t gw_rate_count(const struct gw_rate *r);

#endif
