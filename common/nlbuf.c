/*
 * nlbuf - the read of netd's one netlink receive path (see nlbuf.h): one
 * datagram, whole or reported as too long.  No libmnl here (nlbuf.h).
 */
#include "common/nlbuf.h"

#include <sys/socket.h>

ssize_t nlbuf_recv(int fd, void *buf, size_t size, int flags)
{
	ssize_t n;

	/* MSG_TRUNC: the datagram's real length, so a cut one is seen
	 * (netlink honours it on receive, as UDP and AF_UNIX do). */
	do
		n = recv(fd, buf, size, flags | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n > size)
		return -EMSGSIZE;
	return n;
}
