/*
 * tbucket.h - a token bucket: at most @rate_per_s events a second on
 * average, @burst at once.  Pure and header-only: the caller passes the
 * time (milliseconds, monotonic), so tests drive it without a clock.
 *
 * Kept in milli-tokens (thousandths of an event), integers only: a rate of
 * R events a second earns exactly R milli-tokens a millisecond, so the
 * count is exact however the refills fall (in floating point, ten refills
 * of 10 ms at 10/s summed to 0.9999999999999999 tokens and refused the
 * event they had earned).
 */
#ifndef NETD_COMMON_TBUCKET_H
#define NETD_COMMON_TBUCKET_H

#include <stdbool.h>
#include <stdint.h>

#define TBUCKET_MILLI 1000u	/* milli-tokens an event costs */

struct tbucket {
	uint64_t milli;		/* milli-tokens available now (<= burst * 1000) */
	uint64_t last_ms;	/* when milli was last refilled */
};

/* tbucket_init() - a full bucket (@burst tokens) as of @now_ms. */
static inline void tbucket_init(struct tbucket *b, uint32_t burst, uint64_t now_ms)
{
	b->milli = (uint64_t)burst * TBUCKET_MILLI;
	b->last_ms = now_ms;
}

/* What @b holds at @now_ms: earned milli-tokens added, capped at @burst tokens. */
static inline uint64_t tbucket_level(const struct tbucket *b, uint32_t rate_per_s,
				     uint32_t burst, uint64_t now_ms)
{
	uint64_t cap = (uint64_t)burst * TBUCKET_MILLI, m = b->milli;

	if (now_ms > b->last_ms && rate_per_s) {
		uint64_t dt = now_ms - b->last_ms;

		/* rate_per_s events per 1000 ms = rate_per_s milli-tokens per ms;
		 * dt >= cap earns at least cap (rate >= 1), and bounds the product. */
		m = dt >= cap ? cap : m + dt * rate_per_s;
	}
	return m > cap ? cap : m;
}

/* tbucket_refill() - add what @rate_per_s earned since the last refill, capped at @burst. */
static inline void tbucket_refill(struct tbucket *b, uint32_t rate_per_s, uint32_t burst,
				  uint64_t now_ms)
{
	b->milli = tbucket_level(b, rate_per_s, burst, now_ms);
	if (now_ms > b->last_ms)
		b->last_ms = now_ms;
}

/*
 * tbucket_take() - refill, then take one token if there is one.
 * Return: true if the event may pass (a token was taken), false if not.
 */
static inline bool tbucket_take(struct tbucket *b, uint32_t rate_per_s, uint32_t burst,
				uint64_t now_ms)
{
	tbucket_refill(b, rate_per_s, burst, now_ms);
	if (b->milli < TBUCKET_MILLI)
		return false;
	b->milli -= TBUCKET_MILLI;
	return true;
}

/* tbucket_would_pass() - whether tbucket_take() would pass at @now_ms, changing nothing. */
static inline bool tbucket_would_pass(const struct tbucket *b, uint32_t rate_per_s,
				      uint32_t burst, uint64_t now_ms)
{
	return tbucket_level(b, rate_per_s, burst, now_ms) >= TBUCKET_MILLI;
}

/* tbucket_full() - whether @b holds its whole @burst (as of its last refill). */
static inline bool tbucket_full(const struct tbucket *b, uint32_t burst)
{
	return b->milli >= (uint64_t)burst * TBUCKET_MILLI;
}

#endif
