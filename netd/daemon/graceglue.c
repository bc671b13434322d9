/*
 * graceglue - the daemon's side of the idle grace (netd/trail/grace.h,
 * netd/trail/trail.h): which policy a sandbox runs under, and the pin itself,
 * which goes through the proxy's pin tracking.  No policy of its own.
 */
#include "netd/daemon/internal.h"

#include <string.h>

#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "netd/fw.h"
#include "netd/trail/grace.h"
#include "netd/trail/trail.h"

const struct policy *daemon_trail_policy(void *ctx, const char *name)
{
	return daemon_policy_find(ctx, name);
}

/*
 * The idle grace's pin (trail.h, netd/trail/grace.h): the kernel's own element
 * is asked first (it may hold more than the proxy tracked, after a
 * restart), then the pin goes through the proxy's pin tracking, so a grace
 * never shortens a longer pin (an add SETS the timeout), a later shorter
 * answer never shortens the grace, and dns.max_pins holds.  One loop, one
 * thread: nothing pins between lookup and add.
 */
int daemon_trail_grace_pin(void *ctx, const char *sandbox, const struct pin *pin)
{
	struct daemon *d = ctx;
	uint64_t left_ms = 0;
	int r = fw_pin_lookup(d->fw, sandbox, &pin->addr, pin->proto, pin->port, &left_ms);

	if (r < 0)
		return r;
	if (r == 1 && left_ms >= pin->timeout_ms)
		return 0;
	r = proxy_pin_extend(d->proxy, sandbox, pin, 1);
	return r < 0 ? r : 1;
}

/* Idle graces on iff dns.idle_grace or some loaded rule's idle_grace is non-zero. */
void daemon_grace_update(struct daemon *d)
{
	bool want = false;
	int r;

	for (size_t i = 0; i < d->n_policies && !want; i++)
		want = grace_policy_wants(d->policies[i], d->cfg.dns_idle_grace_s);
	r = trail_set_grace(d->trail, want);
	if (r < 0)
		log_warn("idle grace: cannot watch closing connections: %s", strerror(-r));
}

