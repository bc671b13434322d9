/*
 * linkwatch - RTM_DELLINK events over libmnl, read on libevent.
 */
#include "netd/link/linkwatch.h"
#include "common/nlbuf.h"

#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#define LINKWATCH_RCVBUF (4u << 20)	/* bytes: a burst of deletions at scale */

struct linkwatch {
	struct mnl_socket *nl;
	struct event *ev;
	const struct linkwatch_ops *ops;
	void *ctx;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(attr, IFLA_MAX) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(attr) == IFLA_IFNAME && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return MNL_CB_OK;
	tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	struct linkwatch *w = data;
	char name[IF_NAMESIZE];
	const char *s;

	if (nlh->nlmsg_type != RTM_DELLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(struct ifinfomsg), attr_cb, tb);
	if (!tb[IFLA_IFNAME])
		return MNL_CB_OK;
	s = mnl_attr_get_str(tb[IFLA_IFNAME]);
	if (strlen(s) >= sizeof(name))
		return MNL_CB_OK;	/* no interface name is that long */
	memcpy(name, s, strlen(s) + 1);
	w->ops->deleted(w->ctx, name);
	return MNL_CB_OK;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct linkwatch *w = arg;
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(4)));

	(void)fd;
	(void)what;
	/* Bounded per wakeup, so a storm of events cannot starve the loop. */
	for (int i = 0; i < 64; i++) {
		ssize_t n = nlbuf_recv(mnl_socket_get_fd(w->nl), buf, sizeof(buf), MSG_DONTWAIT);

		/* ENOBUFS: overrun, the kernel dropped some; EMSGSIZE: one over
		 * the buffer is not read; EBADMSG: a buffer with a bad length is
		 * not walked.  Events lost either way: recheck, read on.
		 * Multicast notifications carry seq 0 and the kernel's portid 0. */
		if (n == -ENOBUFS || n == -EMSGSIZE ||
		    (n >= 0 && nlbuf_walk(buf, (size_t)n, 0, 0, msg_cb, w) == -EBADMSG)) {
			w->ops->lost(w->ctx);
			continue;
		}
		if (n < 0)
			return;	/* EAGAIN: drained */
	}
}

int linkwatch_new(struct event_base *base, const struct linkwatch_ops *ops, void *ctx,
		  struct linkwatch **ret)
{
	struct linkwatch *w = calloc(1, sizeof(*w));
	int fd, r, rcvbuf = (int)LINKWATCH_RCVBUF;

	if (!w)
		return -ENOMEM;
	w->ops = ops;
	w->ctx = ctx;
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!w->nl) {
		r = -errno;
		goto fail;
	}
	fd = mnl_socket_get_fd(w->nl);
	/* More than rmem_max as root (FORCE); the plain size otherwise. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &(int){ 0 }, sizeof(int));
	if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &(int){ RTNLGRP_LINK },
				  sizeof(int)) < 0) {
		r = -errno;
		goto fail;
	}
	w->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_readable, w);
	if (!w->ev || event_add(w->ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = w;
	return 0;
fail:
	linkwatch_free(w);
	return r;
}

void linkwatch_free(struct linkwatch *w)
{
	if (!w)
		return;
	if (w->ev)
		event_free(w->ev);
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w);
}
