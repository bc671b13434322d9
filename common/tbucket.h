/*
 * tbucket.h - a token bucket: at most @rate_per_s events a second on
 * average, @burst at once.  Pure and header-only: the caller passes the
 * time (milliseconds, monotonic), so tests drive it without a clock.
 */
#ifndef NETD_COMMON_TBUCKET_H
#define NETD_COMMON_TBUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct tbucket {
	double tokens;		/* whole events that may pass now (fractional refill) */
	uint64_t last_ms;	/* when tokens was last refilled */
};

/* tbucket_init() - a full bucket (@burst tokens) as of @now_ms. */
static inline void tbucket_init(struct tbucket *b, uint32_t burst, uint64_t now_ms)
{
	b->tokens = burst;
	b->last_ms = now_ms;
}

/* tbucket_refill() - add what @rate_per_s earned since the last refill, capped at @burst. */
static inline void tbucket_refill(struct tbucket *b, uint32_t rate_per_s, uint32_t burst,
				  uint64_t now_ms)
{
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * rate_per_s / 1000.0;
		b->last_ms = now_ms;
	}
	if (b->tokens > burst)
		b->tokens = burst;
}

/*
 * tbucket_take() - refill, then take one token if there is one.
 * Return: true if the event may pass (a token was taken), false if not.
 */
static inline bool tbucket_take(struct tbucket *b, uint32_t rate_per_s, uint32_t burst,
				uint64_t now_ms)
{
	tbucket_refill(b, rate_per_s, burst, now_ms);
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* tbucket_would_pass() - whether tbucket_take() would pass at @now_ms, changing nothing. */
static inline bool tbucket_would_pass(const struct tbucket *b, uint32_t rate_per_s,
				      uint32_t burst, uint64_t now_ms)
{
	double t = b->tokens;

	if (now_ms > b->last_ms)
		t += (double)(now_ms - b->last_ms) * rate_per_s / 1000.0;
	return (t > burst ? burst : t) >= 1.0;
}

#endif
