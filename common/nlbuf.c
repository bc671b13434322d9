/*
 * nlbuf - the read of netd's one netlink receive path (see nlbuf.h): one
 * datagram, whole or reported as too long.  No libmnl here (nlbuf.h).
 */
#include "common/nlbuf.h"

#include <string.h>
#include <sys/socket.h>

ssize_t nlbuf_recv(int fd, void *buf, size_t size, int flags)
{
	ssize_t n;
	size_t end;

	/* MSG_TRUNC: the datagram's real length, so a cut one is seen
	 * (netlink honours it on receive, as UDP and AF_UNIX do). */
	do
		n = recv(fd, buf, size, flags | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n > size)
		return -EMSGSIZE;
	/* libmnl walks a message's attributes to its aligned end
	 * (mnl_nlmsg_get_payload_tail()): after a last message whose length
	 * is not a multiple of 4 it reads what is left of the buffer from an
	 * earlier datagram.  Zeros there instead (found by fuzz_sniq). */
	end = NLMSG_ALIGN((size_t)n) < size ? NLMSG_ALIGN((size_t)n) : size;
	memset((uint8_t *)buf + n, 0, end - (size_t)n);
	return n;
}
