/*
 * rtnl - one rtnetlink conversation (see rtnl.c).  Used by netd/link/link.c and netd/link/tap.c.
 */
#ifndef NETD_RTNL_H
#define NETD_RTNL_H

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

struct ifinfomsg;

/* One rtnetlink conversation: a socket plus its sequence counter. */
struct rtnl {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
};

/*
 * A dump the kernel marks NLM_F_DUMP_INTR (the table changed while it was
 * read: sandboxes come and go) fails with EINTR; callers ask again this
 * many times before the error is returned.
 */
#define RTNL_DUMP_TRIES 10

/*
 * rtnl_open() - a socket in @netns_fd (or the caller's netns if < 0); the
 * thread's own netns is restored on every path.  Return: 0; -errno.
 */
int rtnl_open(struct rtnl *nl, int netns_fd);

/* rtnl_close() - close it; safe on a zeroed or closed @nl. */
void rtnl_close(struct rtnl *nl);

/*
 * rtnl_talk() - send @nlh (its sequence number set here) and read replies
 * until the ACK (or NLMSG_DONE for a dump), passing data messages to @cb
 * (may be NULL).  Return: 0; the kernel's -errno; -errno.
 */
int rtnl_talk(struct rtnl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

/* rtnl_req() - a request header of @type with NLM_F_REQUEST | @flags in @buf. */
struct nlmsghdr *rtnl_req(char *buf, uint16_t type, uint16_t flags);

/*
 * rtnl_link_req() - an RTM_*LINK request in @buf: rtnl_req(), then its
 * ifinfomsg (AF_UNSPEC, @index; 0: none) and, if @ifname, IFLA_IFNAME.
 * *@ret_ifi (may be NULL): the ifinfomsg, for flags.  Return: the header.
 */
struct nlmsghdr *rtnl_link_req(char *buf, uint16_t type, uint16_t flags, int index,
			       const char *ifname, struct ifinfomsg **ret_ifi);

/* rtnl_ifname_check() - 0 if @ifname can name an interface (common/ifname.h ifname_valid(): one rule for all of netd); -EINVAL. */
int rtnl_ifname_check(const char *ifname);

struct rtnl_link {
	int index;
	uint8_t mac[6];		/* IFLA_ADDRESS, if it has a 6-byte one */
	bool has_mac;
};

/* rtnl_link_get() - @ifname's index and MAC in @nl's netns.  Return: 0; -ENODEV; -errno. */
int rtnl_link_get(struct rtnl *nl, const char *ifname, struct rtnl_link *ret);

/* rtnl_ifindex() - @ifname's index.  Return: index > 0; -ENODEV; -errno. */
int rtnl_ifindex(struct rtnl *nl, const char *ifname);

/*
 * rtnl_netns_enter() - move the calling thread into netns @netns_fd; a
 * socket made there keeps it for life.  Return: an fd of the thread's own
 * netns for rtnl_netns_return(); -errno (nothing changed).
 */
int rtnl_netns_enter(int netns_fd);

/* rtnl_netns_return() - back into @self (closed either way).  Return: 0; -errno. */
int rtnl_netns_return(int self);

#endif
