/*
 * flowglue - the daemon's side of the flowtable fast path (netd/fw.h,
 * docs/architecture.md "The flowtable"): what start-up says about it, and
 * the egress interface put back among its devices at each reload.  A
 * refusal costs speed, never safety: only replies take the flowtable, and
 * without it they take the rules' path.
 */
#include "netd/daemon/internal.h"

#include <net/if.h>
#include <string.h>

#include "common/log.h"
#include "netd/fw.h"

void daemon_flowtable_report(const struct daemon *d)
{
	const char *why;

	if (!fw_flowtable_state(d->fw, &why))
		log_info("flowtable fast path: off, %s", why);
	else if (if_nametoindex(d->egress_ifname) == 0)
		log_warn("flowtable fast path: on, but egress interface %s does not exist (yet): "
			 "it joins the flowtable at the next reload", d->egress_ifname);
	else
		log_info("flowtable fast path: on (replies arriving on %s)", d->egress_ifname);
}

void daemon_flowtable_refresh(struct daemon *d)
{
	int r = fw_flowtable_refresh(d->fw);

	if (r < 0) {
		d->ft_failures++;
		log_warn("flowtable: cannot add egress interface %s: %s", d->egress_ifname,
			 fw_last_error(d->fw)[0] ? fw_last_error(d->fw) : strerror(-r));
	}
}
