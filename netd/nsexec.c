/*
 * nsexec - `ip netns exec` without ip(8): enter a netns, give the command a
 * private mount namespace with a /sys and /etc that match the sandbox, and
 * exec it.  It is the only code in netd that changes the process's own
 * namespaces, which is why it ends in exec and never returns to the caller.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "netd/link.h"
#include "netd/nsexec.h"

#define NETNS_ETC_DIR "/etc/netns"

/* Bind /etc/netns/NAME/FILE over /etc/FILE for each FILE (ip-netns(8)). */
static int bind_etc(const char *name)
{
	char dir[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n, r = 0;

	n = snprintf(dir, sizeof(dir), "%s/%s", NETNS_ETC_DIR, name);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((errno = 0, e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n = snprintf(src, sizeof(src), "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n >= sizeof(src))
			continue;
		n = snprintf(dst, sizeof(dst), "/etc/%s", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(dst))
			continue;
		if (mount(src, dst, "none", MS_BIND, NULL) < 0) {
			/* No /etc/FILE to cover: ip(8) warns and goes on. */
			if (errno == ENOENT)
				continue;
			r = -errno;
			break;
		}
	}
	if (r == 0 && errno != 0)
		r = -errno;
	closedir(d);
	return r;
}

/* A /sys whose sysfs instance belongs to the netns we are now in. */
static int remount_sys(void)
{
	unsigned long flags = 0;
	struct statvfs sv;

	if (umount2("/sys", MNT_DETACH) < 0) {
		/* Not mounted, or busy: overlay it, read-only if it was. */
		if (statvfs("/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY))
			flags = MS_RDONLY;
	}
	if (mount("sysfs", "/sys", "sysfs", flags, NULL) < 0)
		return -errno;
	return 0;
}

int nsexec_run(const char *netns_path, const char *netns_name, char *const argv[])
{
	int fd, r;

	if (!netns_path || !argv || !argv[0])
		return -EINVAL;
	if (netns_name && (!*netns_name || strchr(netns_name, '/') ||
			   strcmp(netns_name, ".") == 0 ||
			   strcmp(netns_name, "..") == 0))
		return -EINVAL;

	fd = link_netns_open(netns_path);
	if (fd < 0)
		return fd;
	if (setns(fd, CLONE_NEWNET) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	close(fd);

	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* Our /sys and /etc mounts must never propagate back to the host. */
	if (mount("", "/", "none", MS_SLAVE | MS_REC, NULL) < 0)
		return -errno;
	r = remount_sys();
	if (r < 0)
		return r;
	if (netns_name) {
		r = bind_etc(netns_name);
		if (r < 0)
			return r;
	}
	execvp(argv[0], argv);
	return -errno;
}
