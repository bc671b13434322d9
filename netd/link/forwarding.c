/*
 * netd/link/ - links: one rtnetlink conversation (rtnl.c); netns, veths,
 * addresses, routes (link.c); microVM taps (tap.c); link events
 * (linkwatch.c); the forwarding sysctls (forwarding.c); `netd exec` in a
 * sandbox's netns (nsexec.c).
 */
/*
 * forwarding.c - see forwarding.h.
 */
#include "netd/link/forwarding.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int sysctl_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int forwarding_enable(int ipv6)
{
	int r;

	/*
	 * /proc/sys/net is per netns: this is the caller's netns only.  One
	 * byte, no newline: some 6.1 kernels (Debian's 6.1.0-50, seen in the
	 * microVM guest) answer a write to ipv6 .../forwarding with 1 however
	 * long it was, so "1\n" read as a short write.
	 */
	r = sysctl_write("/proc/sys/net/ipv4/ip_forward", "1");
	if (r < 0 || !ipv6)
		return r;
	return sysctl_write("/proc/sys/net/ipv6/conf/all/forwarding", "1");
}
