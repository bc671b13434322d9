/*
 * pintrack - what the proxy has pinned, per sandbox, and until when.  Pure
 * (memory only, no I/O, no logging; the clock is the caller's).
 *
 * The kernel's "add element with timeout" SETS the timeout: re-pinning an
 * address with a shorter TTL would shorten a pin an earlier answer handed
 * out.  So every pin goes through here: only (address, proto, port,
 * gateway: struct pin) whose new expiry is later than the one already
 * committed are sent to the kernel (which also skips re-pins the kernel already covers), and the
 * per-sandbox count of live elements enforces the "pins per sandbox" limit
 * (dns.max_pins: gateway pins count as any other).
 *
 * Conservative by construction: the caller takes @now_ms BEFORE the pin
 * batch is sent, so the kernel's element always expires at or after the
 * expiry recorded here.
 */
#ifndef NETD_DNSPROXY_PINTRACK_H
#define NETD_DNSPROXY_PINTRACK_H

#include <stddef.h>
#include <stdint.h>

#include "common/pin.h"

struct pintrack;

/* pintrack_new() - an empty tracker.  Caller frees with pintrack_free().
 * Return: 0; -ENOMEM. */
int pintrack_new(struct pintrack **ret);

/* pintrack_free() - NULL-safe. */
void pintrack_free(struct pintrack *pt);

/*
 * pintrack_plan() - which of @pins (for @sandbox, timeouts in ms) must go
 * to the kernel: those not tracked or tracked with an earlier expiry than
 * @now_ms + timeout_ms.  They are copied to @out (room for @n).
 * @max_live: the sandbox may hold at most this many live elements (0 = no
 * limit); new elements beyond it -> -ENOSPC and nothing is planned.
 * Return: number of pins in @out; -ENOSPC.
 */
int pintrack_plan(const struct pintrack *pt, const char *sandbox, const struct pin *pins,
		  size_t n, uint64_t now_ms, size_t max_live, struct pin *out);

/*
 * pintrack_commit() - record @pins as acknowledged by the kernel at
 * @now_ms (the time taken before the batch was sent); an entry's expiry
 * only ever grows.  Return: 0; -ENOMEM (the entries recorded so far stay).
 */
int pintrack_commit(struct pintrack *pt, const char *sandbox, const struct pin *pins,
		    size_t n, uint64_t now_ms);

/* pintrack_reset() - forget everything about @sandbox (its sets were
 * recreated or deleted). */
void pintrack_reset(struct pintrack *pt, const char *sandbox);

/* pintrack_expire() - drop entries expired at @now_ms.  Return: dropped. */
size_t pintrack_expire(struct pintrack *pt, uint64_t now_ms);

/* pintrack_live() - live entries of @sandbox (as of the last expire). */
size_t pintrack_live(const struct pintrack *pt, const char *sandbox);

/* pintrack_total() - entries over all sandboxes. */
size_t pintrack_total(const struct pintrack *pt);

#endif
