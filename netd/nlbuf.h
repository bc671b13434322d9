/*
 * nlbuf - the length check every netlink recv() buffer gets before libmnl
 * walks it.  libmnl's mnl_nlmsg_ok() compares nlmsg_len with what is left
 * as an int, so a length over INT_MAX passes as negative and
 * mnl_cb_run()/mnl_nlmsg_next() step far outside the buffer (found by
 * fuzz_link and fuzz_ctcut; ct_walk() in ctmsg.c has its own check).
 * Header only, pure: no I/O, no logging.
 */
#ifndef NETD_NLBUF_H
#define NETD_NLBUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

/*
 * nlbuf_check() - are the @len bytes at @buf (a recv() buffer, 4-byte
 * aligned) whole netlink messages: every nlmsg_len at least a header and
 * at most what is left?  A tail shorter than a header is ignored, as
 * mnl_cb_run() ignores it.  Return: 0; -EBADMSG.
 */
static inline int nlbuf_check(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)p;
		size_t n = nlh->nlmsg_len, step;

		if (n < sizeof(*nlh) || n > len)
			return -EBADMSG;
		step = NLMSG_ALIGN(n) < len ? NLMSG_ALIGN(n) : len;
		p += step;
		len -= step;
	}
	return 0;
}

/*
 * nlbuf_cb_run() - mnl_cb_run() on a buffer nlbuf_check() accepted.
 * Return: as mnl_cb_run() (MNL_CB_ERROR with errno set on failure),
 * MNL_CB_ERROR with errno EBADMSG if a length is out of bounds.
 */
static inline int nlbuf_cb_run(const void *buf, size_t len, unsigned int seq,
			       unsigned int portid, mnl_cb_t cb, void *data)
{
	if (nlbuf_check(buf, len) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return mnl_cb_run(buf, len, seq, portid, cb, data);
}

#endif
