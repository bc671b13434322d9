/*
 * sdnotify - the daemon's side of systemd's notify protocol
 * (sd_notify(3), systemd.service(5) Type=notify).  Only state changes are
 * sent; no watchdog.  Not for anything but the daemon's lifecycle.
 */
#include "netd/daemon/sdnotify.h"

#include <systemd/sd-daemon.h>

#include "common/clock.h"

int sdnotify_ready(const char *status)
{
	if (!status)
		return sd_notify(0, "READY=1");
	return sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

int sdnotify_reloading(void)
{
	return sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
			  (unsigned long long)clock_mono_us());
}

int sdnotify_stopping(void)
{
	return sd_notify(0, "STOPPING=1");
}
