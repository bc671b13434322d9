/*
 * clock.h - the monotonic clock (CLOCK_MONOTONIC) in the units netd uses.
 * Header-only; never goes backwards, unaffected by settimeofday().
 */
#ifndef NETD_COMMON_CLOCK_H
#define NETD_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clock_mono_us() - monotonic time in microseconds. */
static inline uint64_t clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* clock_mono_ms() - monotonic time in milliseconds. */
static inline uint64_t clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* clock_mono_s() - monotonic time in whole seconds. */
static inline time_t clock_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

#endif
