/*
 * rtnl - one rtnetlink conversation (libmnl) in the caller's netns or in
 * another one: open, send a request and read its replies, look up an
 * interface.  Shared by link.c (netns, veth, addresses, routes,
 * neighbours, and its host inspection calls) and tap.c (a tap's delete,
 * addresses, query).  Replies are read through nlbuf_recv_run() (nlbuf.h).
 * Never logs, never execs.
 *
 * A socket opened for another netns is made while the calling thread is
 * briefly setns()ed into it: a socket stays bound to the netns it was
 * created in, so the thread returns to its own netns at once and every
 * later request on the socket still lands in the target netns.
 */
#include "netd/link/rtnl.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "common/ifname.h"
#include "common/nlbuf.h"

/* Receive buffer: the kernel's largest dump skb (32 KiB), so none is cut. */
#define RTNL_RECV_SIZE 32768


void rtnl_close(struct rtnl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	nl->sk = NULL;
}

static int rtnl_open_here(struct rtnl *nl)
{
	int r;

	nl->sk = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl->sk)
		return -errno;
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		rtnl_close(nl);
		return r;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = (unsigned int)time(NULL);
	return 0;
}

int rtnl_netns_enter(int netns_fd)
{
	/* thread-self: setns() moves only this thread, so save this thread's. */
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), r;

	if (self < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET) < 0) {
		r = -errno;
		close(self);
		return r;
	}
	return self;
}

int rtnl_netns_return(int self)
{
	int r = setns(self, CLONE_NEWNET) < 0 ? -errno : 0;

	close(self);
	return r;
}

/*
 * Open an rtnetlink socket in @netns_fd (or in the caller's netns if < 0).
 * The thread's own netns is restored before returning, on every path.
 */
int rtnl_open(struct rtnl *nl, int netns_fd)
{
	int self, r, r2;

	memset(nl, 0, sizeof(*nl));
	if (netns_fd < 0)
		return rtnl_open_here(nl);

	self = rtnl_netns_enter(netns_fd);
	if (self < 0)
		return self;
	r = rtnl_open_here(nl);
	/* Back home before anything else; a failure here is fatal to the op. */
	r2 = rtnl_netns_return(self);
	if (r2 < 0) {
		rtnl_close(nl);
		return r2;
	}
	return r;
}

/*
 * Send @nlh and read replies until the ACK (or NLMSG_DONE for a dump),
 * passing data messages to @cb.  Return: 0; the kernel's -errno; -errno.
 */

int rtnl_talk(struct rtnl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[RTNL_RECV_SIZE] __attribute__((aligned(4)));
	unsigned int seq;
	int r;

	seq = ++nl->seq;
	nlh->nlmsg_seq = seq;
	/* A dump ends in NLMSG_DONE; anything else is asked to ACK. */
	if ((nlh->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* 1 until the ACK or DONE; -EBADMSG for a bad length, -EMSGSIZE for
	 * a datagram over RTNL_RECV_SIZE. */
	do
		r = nlbuf_recv_run(mnl_socket_get_fd(nl->sk), buf, sizeof(buf), 0, seq, nl->portid,
				   cb, data);
	while (r > 0);
	return r;
}

struct nlmsghdr *rtnl_req(char *buf, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	return nlh;
}

struct nlmsghdr *rtnl_link_req(char *buf, uint16_t type, uint16_t flags, int index,
			       const char *ifname, struct ifinfomsg **ret_ifi)
{
	struct nlmsghdr *nlh = rtnl_req(buf, type, flags);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = index;
	if (ifname)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	if (ret_ifi)
		*ret_ifi = ifi;
	return nlh;
}

int rtnl_ifname_check(const char *ifname)
{
	return ifname && strnlen(ifname, IFNAMSIZ) < IFNAMSIZ && ifname_valid(ifname) ? 0 : -EINVAL;
}

static int link_attr_cb(const struct nlattr *attr, void *data)
{
	struct rtnl_link *l = data;

	if (mnl_attr_get_type(attr) == IFLA_ADDRESS && mnl_attr_get_payload_len(attr) == 6) {
		memcpy(l->mac, mnl_attr_get_payload(attr), 6);
		l->has_mac = true;
	}
	return MNL_CB_OK;
}

static int link_id_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtnl_link *l = data;
	const struct ifinfomsg *ifi;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	l->index = ifi->ifi_index;
	return mnl_attr_parse(nlh, sizeof(*ifi), link_attr_cb, l) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

int rtnl_link_get(struct rtnl *nl, const char *ifname, struct rtnl_link *ret)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = rtnl_ifname_check(ifname);
	if (r < 0)
		return r;
	nlh = rtnl_link_req(buf, RTM_GETLINK, 0, 0, ifname, NULL);
	r = rtnl_talk(nl, nlh, link_id_cb, ret);
	if (r < 0)
		return r;
	return ret->index > 0 ? 0 : -ENODEV;
}

int rtnl_ifindex(struct rtnl *nl, const char *ifname)
{
	struct rtnl_link l;
	int r = rtnl_link_get(nl, ifname, &l);

	return r < 0 ? r : l.index;
}
