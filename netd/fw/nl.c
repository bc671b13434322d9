/*
 * nl - fw's only speaker to nf_tables: the NETLINK_NETFILTER socket.
 *
 * A transaction is one batch (batch.c) sent in ONE sendmsg(): nfnetlink
 * takes one skb as one transaction and processes it synchronously inside
 * that call, so when sendmsg() returns every reply is already queued.
 *
 * Replies, and why they stay small at any batch size: the batch asks for
 * an acknowledgement of its last message only (fw_batch_close()); the kernel
 * reports every failing message whatever its flags, and only after the
 * whole batch was processed (and aborted).  So a batch that is applied
 * queues exactly one ack, and a batch that is rejected queues its errors.
 * Were every message acked (as before), a batch of tens of thousands of
 * messages overflowed the receive queue while being applied: the kernel
 * had committed, but the reader saw ENOBUFS and called it a failure.
 *
 * The receive buffer is still sized for the batch (SO_RCVBUFFORCE where
 * allowed), so that the errors of a rejected batch arrive too; if they do
 * overflow it, the batch was rejected all the same (an applied batch queues
 * one message), and that is what is reported.
 *
 * Also here: the get and dump requests (fw_pin_lookup(), the restart's
 * inventory), read until the ack or NLMSG_DONE.  Nothing here logs.
 */
#include "netd/fw/kernel.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <libnftnl/common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>

#include "common/nlbuf.h"

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define NL_ACK_WAIT_MS 2000
#define NL_RCVBUF_MIN  (1 * 1024 * 1024)	/* bytes */
#define NL_RCVBUF_MAX  (64 * 1024 * 1024)
#define NL_ERR_TRUESIZE 1024	/* what one queued error costs the receive buffer (skb truesize) */
#define NL_DUMP_BUF    32768	/* the kernel's largest dump skb (MNL_SOCKET_DUMP_SIZE) */

struct nl_kernel {
	struct fw_kernel k;
	struct mnl_socket *sk;
	uint32_t portid;
	uint32_t seq;		/* requests (talk); batches carry their own */
	int sndbuf, rcvbuf;	/* usable bytes as set */
	char *rbuf;		/* NL_DUMP_BUF */
};

/* setsockopt() @opt_force (root) or, failing that, @opt, to @bytes. */
static int sock_size(int fd, int opt_force, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof(bytes)) == 0 ||
	    setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) == 0)
		return 0;
	return -errno;
}

/* Read and drop whatever an abandoned exchange left queued (and a pending ENOBUFS). */
static void nl_drain(struct nl_kernel *nl)
{
	int fd = mnl_socket_get_fd(nl->sk);

	for (;;) {
		ssize_t n = nlbuf_recv(fd, nl->rbuf, NL_DUMP_BUF, MSG_DONTWAIT);

		if (n < 0 && n != -ENOBUFS && n != -EMSGSIZE)
			return;
	}
}

/* The outcome of reading a batch's replies. */
struct acks {
	uint32_t seq0, seq_last, seq_end;
	bool acked;		/* the last message's ack (error 0) was seen */
	bool overflow;		/* ENOBUFS: replies were dropped */
	int err;		/* the lowest-numbered failure, -errno */
	uint32_t err_seq;
};

static void acks_parse(struct acks *a, const char *buf, size_t len)
{
	int rem = (int)len;

	/* A length libmnl would misread (common/nlbuf.h): the batch's outcome is unknown. */
	if (nlbuf_check(buf, len) < 0) {
		if (!a->err)
			a->err = -EBADMSG;
		return;
	}

	for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, rem);
	     nlh = mnl_nlmsg_next(nlh, &rem)) {
		const struct nlmsgerr *e;

		if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
			continue;
		/* Not this batch's: an earlier, abandoned exchange. */
		if (nlh->nlmsg_seq < a->seq0 || nlh->nlmsg_seq > a->seq_end)
			continue;
		e = mnl_nlmsg_get_payload(nlh);
		if (e->error == 0) {
			if (nlh->nlmsg_seq == a->seq_last)
				a->acked = true;
		} else if (!a->err || nlh->nlmsg_seq < a->err_seq) {
			a->err = e->error < 0 ? e->error : -e->error;
			a->err_seq = nlh->nlmsg_seq;
		}
	}
}

/* Read the replies of the batch just sent until it is decided. */
static int acks_read(struct nl_kernel *nl, struct acks *a)
{
	int fd = mnl_socket_get_fd(nl->sk);

	for (;;) {
		ssize_t n = nlbuf_recv(fd, nl->rbuf, NL_DUMP_BUF, MSG_DONTWAIT);

		if (n >= 0) {
			acks_parse(a, nl->rbuf, (size_t)n);
			continue;
		}
		if (n == -ENOBUFS) {
			a->overflow = true;	/* keep reading what did fit */
			continue;
		}
		if (n == -EMSGSIZE) {
			/* Replies not read: as a bad length, the outcome is unknown. */
			if (!a->err)
				a->err = -EMSGSIZE;
			continue;
		}
		if (n != -EAGAIN)
			return (int)n;
		/* Queue empty: decided once an error, an overflow or the ack was seen. */
		if (a->err || a->overflow || a->acked)
			return 0;
		{
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int r = poll(&p, 1, NL_ACK_WAIT_MS);

			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
		}
	}
}

/* Make the socket's buffers hold the batch (send) and its worst-case errors (receive). */
static int nl_size_for(struct nl_kernel *nl, size_t len, size_t n_msgs, char *err, size_t err_len)
{
	int fd = mnl_socket_get_fd(nl->sk), r;
	size_t want_rcv = (n_msgs + 2) * NL_ERR_TRUESIZE;

	if (len + 4096 > (size_t)nl->sndbuf) {
		/* A batch must reach the kernel in one sendmsg() to be one transaction. */
		if (len + 4096 > (size_t)(INT_MAX / 2)) {
			snprintf(err, err_len, "batch of %zu bytes: larger than a socket can send", len);
			return -E2BIG;
		}
		r = sock_size(fd, SO_SNDBUFFORCE, SO_SNDBUF, (int)(len + 4096));
		if (r < 0) {
			snprintf(err, err_len, "send buffer for a batch of %zu bytes: %s", len,
				 strerror(-r));
			return r;
		}
		nl->sndbuf = (int)(len + 4096);
	}
	if (want_rcv < NL_RCVBUF_MIN)
		want_rcv = NL_RCVBUF_MIN;
	if (want_rcv > NL_RCVBUF_MAX)
		want_rcv = NL_RCVBUF_MAX;
	/* Best effort: an overflow of errors is still read as a rejection. */
	if ((int)want_rcv > nl->rcvbuf &&
	    sock_size(fd, SO_RCVBUFFORCE, SO_RCVBUF, (int)want_rcv) == 0)
		nl->rcvbuf = (int)want_rcv;
	return 0;
}

static void describe(const struct fw_batch *b, const struct acks *a, char *err, size_t err_len)
{
	const struct fw_batch_msg *m = fw_batch_msg(b, a->err_seq);

	if (m)
		snprintf(err, err_len, "message %u of %zu (type %u, %s): %s",
			 m->seq - fw_batch_seq_begin(b), fw_batch_count(b), m->type, m->what,
			 strerror(-a->err));
	else
		snprintf(err, err_len, "batch of %zu messages: %s", fw_batch_count(b),
			 strerror(-a->err));
}

static int nl_commit(struct fw_kernel *k, const struct fw_batch *b, char *err, size_t err_len)
{
	struct nl_kernel *nl = (struct nl_kernel *)k;
	struct acks a = { .seq0 = fw_batch_seq_begin(b), .seq_last = fw_batch_seq_last(b),
			  .seq_end = fw_batch_seq_end(b) };
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
	struct msghdr msg = { .msg_name = &snl, .msg_namelen = sizeof(snl) };
	size_t n_iov, len;
	struct iovec *iov;
	ssize_t sent;
	int r;

	if (fw_batch_count(b) == 0)
		return 0;	/* BEGIN + END alone change nothing */
	iov = fw_batch_iov(b, &n_iov);
	if (!iov)
		return -ENOMEM;
	len = 0;
	for (size_t i = 0; i < n_iov; i++)
		len += iov[i].iov_len;
	r = nl_size_for(nl, len, fw_batch_count(b), err, err_len);
	if (r < 0)
		goto out;
	nl_drain(nl);
	msg.msg_iov = iov;
	msg.msg_iovlen = n_iov;
	sent = sendmsg(mnl_socket_get_fd(nl->sk), &msg, 0);
	if (sent < 0 || (size_t)sent != len) {
		r = sent < 0 ? -errno : -EIO;
		snprintf(err, err_len, "sending a batch of %zu bytes (%zu messages): %s", len,
			 fw_batch_count(b), strerror(-r));
		goto out;
	}
	r = acks_read(nl, &a);
	if (r == -ETIMEDOUT) {
		snprintf(err, err_len, "no acknowledgement of a batch of %zu messages within %d ms: "
			 "whether the kernel applied it is unknown", fw_batch_count(b), NL_ACK_WAIT_MS);
	} else if (r < 0) {
		snprintf(err, err_len, "reading the acknowledgements of a batch of %zu messages: %s",
			 fw_batch_count(b), strerror(-r));
	} else if (a.err) {
		r = a.err;
		describe(b, &a, err, err_len);
	} else if (a.overflow) {
		/* Only a rejected batch queues more than one reply (see the top). */
		r = -ENOBUFS;
		snprintf(err, err_len, "batch of %zu messages rejected; its error reports overflowed "
			 "the receive buffer (%d bytes), the first lost", fw_batch_count(b), nl->rcvbuf);
	}
out:
	free(iov);
	return r;
}

static int nl_talk(struct fw_kernel *k, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	struct nl_kernel *nl = (struct nl_kernel *)k;
	int fd = mnl_socket_get_fd(nl->sk), r;
	uint32_t seq = ++nl->seq;

	/* Keep request numbers clear of batches' (which count up from 1). */
	seq |= 0x80000000u;
	req->nlmsg_seq = seq;
	if (!(req->nlmsg_flags & NLM_F_DUMP))
		req->nlmsg_flags |= NLM_F_ACK;
	nl_drain(nl);
	if (mnl_socket_sendto(nl->sk, req, req->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, NL_ACK_WAIT_MS) <= 0)
			return -ETIMEDOUT;
		/* -ENOBUFS in a dump: never a partial answer. */
		r = nlbuf_recv_run(fd, nl->rbuf, NL_DUMP_BUF, 0, seq, nl->portid, cb, data);
		if (r <= 0)
			return r;
	}
}

static void nl_free(struct fw_kernel *k)
{
	struct nl_kernel *nl = (struct nl_kernel *)k;

	if (!nl)
		return;
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->rbuf);
	free(nl);
}

static const struct fw_kernel_ops nl_ops = {
	.commit = nl_commit,
	.talk = nl_talk,
	.free = nl_free,
};

int fw_nl_new(struct fw_kernel **ret)
{
	struct nl_kernel *nl = calloc(1, sizeof(*nl));
	socklen_t sl = sizeof(int);
	int one = 1, r, fd;

	*ret = NULL;
	if (!nl)
		return -ENOMEM;
	nl->k.ops = &nl_ops;
	nl->rbuf = malloc(NL_DUMP_BUF);
	nl->sk = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl->rbuf || !nl->sk) {
		r = nl->rbuf ? -errno : -ENOMEM;
		goto fail;
	}
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto fail;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	fd = mnl_socket_get_fd(nl->sk);
	/* Errors without a copy of the request: small, so many fit the queue. */
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));
	if (sock_size(fd, SO_RCVBUFFORCE, SO_RCVBUF, NL_RCVBUF_MIN) == 0)
		nl->rcvbuf = NL_RCVBUF_MIN;
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &nl->sndbuf, &sl) < 0)
		nl->sndbuf = 0;
	nl->sndbuf /= 2;	/* the kernel reports double the usable size */
	*ret = &nl->k;
	return 0;
fail:
	nl_free(&nl->k);
	return r;
}
