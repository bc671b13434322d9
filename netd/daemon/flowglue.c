/*
 * flowglue - the daemon's side of the flowtable fast path (netd/fw.h,
 * docs/architecture.md "The flowtable"): when a sandbox's interface joins
 * its shard, when every shard is squared with the sandboxes, and what is
 * said and counted when nf_tables refuses.  A refusal costs speed, never
 * safety: every packet of an interface outside the flowtable still meets
 * the rules.
 */
#include "netd/daemon/internal.h"

#include <string.h>

#include "common/log.h"
#include "netd/fw.h"

void daemon_flowtable_attach(struct daemon *d, const struct sandbox *sb)
{
	int r;

	if (!fw_flowtable_state(d->fw, NULL))
		return;
	r = fw_flowtable_attach(d->fw, sb->name);
	if (r < 0) {
		d->ft_failures++;
		log_warn("sandbox %s: %s stays out of the flowtable (its packets take the rules' "
			 "path): %s", sb->name, sb->host_ifname, fw_last_error(d->fw)[0] ?
			 fw_last_error(d->fw) : strerror(-r));
	}
}

void daemon_flowtable_sync(struct daemon *d)
{
	int r;

	if (!fw_flowtable_state(d->fw, NULL))
		return;
	r = fw_flowtable_sync(d->fw);
	if (r < 0) {
		d->ft_failures++;
		log_warn("flowtable devices: %s", fw_last_error(d->fw)[0] ? fw_last_error(d->fw) :
			 strerror(-r));
	}
}
