/*
 * nlbuf - netd's one netlink receive path: read one datagram whole
 * (nlbuf_recv()), check every length in it (nlbuf_check()), then walk its
 * messages (nlbuf_walk()); nlbuf_recv_run() does the three.  Every netlink
 * socket of the product reads through here.
 *
 * Why a check before libmnl: its mnl_nlmsg_ok() compares nlmsg_len with
 * what is left as an int, so a length over INT_MAX passes as negative and
 * mnl_cb_run()/mnl_nlmsg_next() step far outside the buffer (found by
 * fuzz_link and fuzz_ctcut), and a length past the end or below a header
 * is skipped silently, as if more were to come.  ct_walk() in ctmsg.c
 * walks with the same check (nlbuf_step()).  nlbuf_step(), nlbuf_check()
 * and nlbuf_walk() are pure; nlbuf_recv() is the only I/O.  No logging.  In common/ because netd-cni
 * reads rtnetlink too (cni-plugin/netns.c); the libmnl parts are inline
 * here so the static netd-cni, which has no libmnl, links nlbuf.c alone.
 */
#ifndef COMMON_NLBUF_H
#define COMMON_NLBUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

/* The largest errno the kernel returns (its MAX_ERRNO). */
#define NLBUF_ERRNO_MAX 4095

/*
 * nlbuf_step() - one step of a walk over a recv() buffer (4-byte aligned):
 * check the length of the message at *@p, of the *@len bytes left, and
 * move *@p and *@len past it.  A tail shorter than a header is the end, as
 * mnl_cb_run() ignores it.  The message stays at the old *@p.
 * Return: its nlmsg_len (at least a header, at most what was left); 0 at
 * the end; -EBADMSG if its nlmsg_len is out of bounds (nothing moved).
 */
static inline ssize_t nlbuf_step(const uint8_t **p, size_t *len)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)*p;
	size_t n, step;

	if (*len < sizeof(*nlh))
		return 0;
	n = nlh->nlmsg_len;
	if (n < sizeof(*nlh) || n > *len)
		return -EBADMSG;
	step = NLMSG_ALIGN(n) < *len ? NLMSG_ALIGN(n) : *len;
	*p += step;
	*len -= step;
	return (ssize_t)n;
}

/*
 * nlbuf_check() - are the @len bytes at @buf (a recv() buffer, 4-byte
 * aligned) whole netlink messages: every nlmsg_len at least a header and
 * at most what is left?  A tail shorter than a header is ignored, as
 * mnl_cb_run() ignores it.  Return: 0; -EBADMSG.
 */
static inline int nlbuf_check(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while ((n = nlbuf_step(&p, &len)) > 0)
		;
	return n < 0 ? -EBADMSG : 0;
}

/*
 * nlbuf_recv() - read one datagram from netlink socket @fd into @buf
 * (@size bytes, 4-byte aligned) with MSG_TRUNC, so a longer one is
 * reported rather than cut.  @flags: more recv() flags (MSG_DONTWAIT).
 * The bytes after a datagram whose length is not a multiple of 4, up to
 * the next multiple (within @size), are zeroed: libmnl reads a last
 * message's attributes up to its aligned end, which is then its padding,
 * never an earlier datagram's bytes.
 * Return: the bytes read; -EMSGSIZE if the datagram was longer than @size
 * (it is consumed: the next call reads the next one); -errno from recv()
 * (-EAGAIN: none queued; -ENOBUFS: the kernel dropped messages for us).
 */
ssize_t nlbuf_recv(int fd, void *buf, size_t size, int flags);

/*
 * nlbuf_walk() - mnl_cb_run() over one recv() buffer that nlbuf_check()
 * accepted: @cb (may be NULL) for each data message; NLMSG_ERROR, DONE
 * and NLM_F_DUMP_INTR as libmnl reads them.  @seq, @portid: the request's
 * (0: take any, as for multicast events); a message of another is an
 * error.  @buf, @len: borrowed for the call.
 * Return: 1 if more replies are to come; 0 when done (the ACK, NLMSG_DONE
 * or @cb's MNL_CB_STOP); -EBADMSG if a length is out of bounds or an
 * NLMSG_ERROR is cut short or its error is no errno (not 1..4095 either
 * sign); -ESRCH for another port id, -EPROTO for
 * another sequence number (libmnl's codes); -EINTR for a dump the kernel
 * marked interrupted; the kernel's -errno from NLMSG_ERROR; the errno @cb
 * set with MNL_CB_ERROR (-EIO if none).
 */
static inline int nlbuf_walk(const void *buf, size_t len, uint32_t seq, uint32_t portid,
			     mnl_cb_t cb, void *data)
{
	int r;

	if (nlbuf_check(buf, len) < 0)
		return -EBADMSG;
	errno = 0;
	r = mnl_cb_run(buf, len, seq, portid, cb, data);
	if (r < 0 && errno == 0)
		return -EIO;
	/* libmnl sets errno from an NLMSG_ERROR's error as it stands; one
	 * that is no errno (the kernel's are 1..4095) is a malformed reply. */
	if (r < 0)
		return errno > 0 && errno <= NLBUF_ERRNO_MAX ? -errno : -EBADMSG;
	return r == MNL_CB_STOP ? 0 : 1;
}

/*
 * nlbuf_recv_run() - nlbuf_recv() one datagram, then nlbuf_walk() it.
 * Return: as nlbuf_walk(); or nlbuf_recv()'s -errno (-EMSGSIZE, -EAGAIN,
 * -ENOBUFS, ...).  Callers loop while it returns 1.
 */
static inline int nlbuf_recv_run(int fd, void *buf, size_t size, int flags, uint32_t seq,
				 uint32_t portid, mnl_cb_t cb, void *data)
{
	ssize_t n = nlbuf_recv(fd, buf, size, flags);

	if (n < 0)
		return (int)n;
	return nlbuf_walk(buf, (size_t)n, seq, portid, cb, data);
}

#endif
