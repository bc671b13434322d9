/*
 * resolv - /etc/netns/NAME/resolv.conf for the sandboxes netd names, so
 * `ip netns exec NAME` and `netd exec` send DNS to the sandbox's gateway,
 * which is netd's proxy.  Best effort: the redirect catches DNS anyway.
 */
#include "netd/daemon/internal.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "netd/daemon.h"

/* /etc/netns, or a box's own (netd/daemon.h). */
static const char *etc_dir(const struct daemon *d)
{
	return d->box && d->box->etc_netns_dir ? d->box->etc_netns_dir : NETNS_ETC_DIR;
}

int daemon_resolv_conf_write(const struct daemon *d, const struct sandbox *sb)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], text[256], a4[ADDR_STRLEN], a6[ADDR_STRLEN];
	int n, r;

	snprintf(dir, sizeof(dir), "%s/%s", etc_dir(d), sb->name);
	r = fs_mkdir_p(dir, 0755);
	if (r < 0)
		return r;
	n = snprintf(text, sizeof(text),
		     "# written by netd for sandbox %s: every DNS query goes to netd's proxy\n"
		     "nameserver %s\n",
		     sb->name, addr_format(&sb->gw4, a4, sizeof(a4)));
	if (sb->gw6.family)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "nameserver %s\n",
			      addr_format(&sb->gw6, a6, sizeof(a6)));
	snprintf(path, sizeof(path), "%s/resolv.conf", dir);
	return fs_write_atomic(path, text, (size_t)n, 0644);
}

void daemon_resolv_conf_remove(const struct daemon *d, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/resolv.conf", etc_dir(d), name);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", etc_dir(d), name);
	rmdir(path);
}

