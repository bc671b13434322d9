/*
 * link - named network namespaces, veth pairs, addresses, routes and
 * permanent neighbour entries over rtnetlink (libmnl, through rtnl.c), and
 * what the host has (interfaces, addresses, default routes).
 *
 * This is an edge module: it talks to the kernel and never logs; callers log
 * once.  It never execs ip(8).  Work inside another netns goes through an
 * rtnetlink socket opened there (rtnl_open()).
 *
 * Not here: nf_tables (fw/), running commands in a netns (nsexec.c), the
 * forwarding sysctls (forwarding.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "netd/link/link.h"
#include "netd/link/rtnl.h"
#include "common/log.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

/* `ip netns add` refuses longer names too (NAME_MAX would be the fs limit). */
#define LINK_NETNS_NAME_MAX 64


static int nl_link_up(struct rtnl *nl, int index)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	nlh = rtnl_link_req(buf, RTM_SETLINK, 0, index, NULL, &ifi);
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return rtnl_talk(nl, nlh, NULL, NULL);
}

/*
 * No IPv6 link-local address on @index (IN6_ADDR_GEN_MODE_NONE, before it
 * goes up).  Every address of a netns is walked by the kernel's address
 * lifetime check (addrconf_verify_rtnl(), under the RTNL) each time one is
 * added, so thousands of host veths with a link-local each made every
 * create slower; netd's host ends need none (the gateway's own address,
 * permanent neighbours, no router advertisements).  A host without IPv6
 * answers EAFNOSUPPORT: nothing to turn off.
 */
static int nl_link_no_ll6(struct rtnl *nl, int index)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlattr *spec, *inet6;
	struct nlmsghdr *nlh;
	int r;

	nlh = rtnl_link_req(buf, RTM_SETLINK, 0, index, NULL, NULL);
	spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	inet6 = mnl_attr_nest_start(nlh, AF_INET6);
	mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
	mnl_attr_nest_end(nlh, inet6);
	mnl_attr_nest_end(nlh, spec);
	r = rtnl_talk(nl, nlh, NULL, NULL);
	return r == -EAFNOSUPPORT ? 0 : r;
}

/*
 * @peer: NULL, or the far end of a point-to-point address (IFA_ADDRESS !=
 * IFA_LOCAL): the kernel then routes @peer (/32, /128) to this interface.
 */
static int nl_addr_add(struct rtnl *nl, int index, const struct prefix *p,
		       const struct addr *peer)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	size_t alen = addr_len(p->addr.family);
	uint32_t flags = 0;

	if (alen == 0 || p->plen > alen * 8)
		return -EINVAL;
	/* RFC 4862 5.4: skip DAD, so the address is usable (not tentative) at
	 * once; both ends are ours and the link is point-to-point. */
	if (p->addr.family == AF_INET6)
		flags = IFA_F_NODAD;

	nlh = rtnl_req(buf, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = p->addr.family;
	ifa->ifa_prefixlen = p->plen;
	ifa->ifa_flags = (uint8_t)flags;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (uint32_t)index;
	mnl_attr_put(nlh, IFA_LOCAL, alen, p->addr.a);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, peer ? peer->a : p->addr.a);
	mnl_attr_put_u32(nlh, IFA_FLAGS, flags);
	return rtnl_talk(nl, nlh, NULL, NULL);
}

/*
 * A permanent neighbour entry (ARP / NDP, RFC 4861 7.3.2 PERMANENT): @a is
 * at @mac on interface @index.  The kernel never ages it out and, unlike
 * learned entries, never counts it against gc_thresh3, the one neighbour
 * table limit all namespaces share.
 */
static int nl_neigh_add(struct rtnl *nl, int index, const struct addr *a, const uint8_t mac[6])
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	nlh = rtnl_req(buf, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (uint8_t)a->family;
	ndm->ndm_ifindex = index;
	ndm->ndm_state = NUD_PERMANENT;
	mnl_attr_put(nlh, NDA_DST, addr_len(a->family), a->a);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return rtnl_talk(nl, nlh, NULL, NULL);
}

static int nl_default_route_add(struct rtnl *nl, int index, const struct addr *gw)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	size_t alen = addr_len(gw->family);

	if (alen == 0)
		return -EINVAL;
	nlh = rtnl_req(buf, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = gw->family;
	rtm->rtm_dst_len = 0;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_GATEWAY, alen, gw->a);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)index);
	return rtnl_talk(nl, nlh, NULL, NULL);
}

static int nl_link_delete(struct rtnl *nl, const char *ifname)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int r;

	nlh = rtnl_link_req(buf, RTM_DELLINK, 0, 0, ifname, NULL);
	r = rtnl_talk(nl, nlh, NULL, NULL);
	return r == -ENODEV ? 0 : r;
}

/* ---- named netns ------------------------------------------------------ */

static int netns_path(const char *name, char *buf, size_t sz)
{
	size_t len;
	int n;

	if (!name)
		return -EINVAL;
	len = strnlen(name, LINK_NETNS_NAME_MAX + 1);
	if (len == 0 || len > LINK_NETNS_NAME_MAX || strchr(name, '/') ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	n = snprintf(buf, sz, "%s/%s", NETNS_RUN_DIR, name);
	if (n < 0 || (size_t)n >= sz)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Make NETNS_RUN_DIR a shared mount point, as iproute2 does, so a netns
 * bind mount made under it propagates to every mount namespace that was
 * cloned from this one (e.g. by `ip netns exec` or a container runtime).
 */
static int netns_run_dir_prepare(void)
{
	bool bound = false;

	if (mkdir("/run", 0755) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(NETNS_RUN_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	while (mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL) < 0) {
		/* EINVAL: not a mount point yet; bind it on itself, retry once. */
		if (errno != EINVAL || bound)
			return -errno;
		if (mount(NETNS_RUN_DIR, NETNS_RUN_DIR, "none", MS_BIND | MS_REC,
			  NULL) < 0)
			return -errno;
		bound = true;
	}
	return 0;
}

int link_netns_create(const char *name)
{
	char path[PATH_MAX];
	int fd, r, status;
	pid_t pid;

	r = netns_path(name, path, sizeof(path));
	if (r < 0)
		return r;
	r = netns_run_dir_prepare();
	if (r < 0)
		return r;

	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);

	/*
	 * A child makes the netns so the caller's threads never change netns.
	 * Only async-signal-safe calls between fork() and _exit(); the child
	 * reports errno as its exit status.
	 */
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto fail;
	}
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0)
			_exit(errno & 0xff ? errno & 0xff : EIO);
		if (mount("/proc/self/ns/net", path, "none", MS_BIND, NULL) < 0)
			_exit(errno & 0xff ? errno & 0xff : EIO);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			r = -errno;
			goto fail;
		}
	}
	if (!WIFEXITED(status)) {
		r = -ECHILD;
		goto fail;
	}
	if (WEXITSTATUS(status) != 0) {
		r = -WEXITSTATUS(status);
		goto fail;
	}
	return 0;

fail:
	(void)umount2(path, MNT_DETACH);
	(void)unlink(path);
	return r;
}

int link_netns_delete(const char *name)
{
	char path[PATH_MAX];
	int r;

	r = netns_path(name, path, sizeof(path));
	if (r < 0)
		return r;
	/* EINVAL: not mounted (a half-made entry); still remove the file. */
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		return -errno;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int link_netns_enter(int netns_fd)
{
	return rtnl_netns_enter(netns_fd);
}

void link_netns_leave(int self_fd)
{
	int r = rtnl_netns_return(self_fd);

	if (r < 0) {
		log_err("cannot return to netd's own netns: %s; stopping", strerror(-r));
		abort();
	}
}

int link_netns_open(const char *path)
{
	struct statfs sfs;
	int fd, r;

	if (!path)
		return -EINVAL;
	/*
	 * The path comes from an API client: look before opening, so a FIFO
	 * never blocks the event loop and a device node is never opened as
	 * root.  O_NONBLOCK covers a swap between the look and the open.
	 */
	if (statfs(path, &sfs) < 0)
		return -errno;
	if ((unsigned long)sfs.f_type != (unsigned long)NSFS_MAGIC)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* A /run/netns file whose bind mount is gone is a plain empty file. */
	if ((unsigned long)sfs.f_type != (unsigned long)NSFS_MAGIC) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

bool link_mntns_own(void)
{
	struct stat self, parent;
	char path[64];
	pid_t ppid = getppid();

	if (ppid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)ppid);
	if (stat("/proc/self/ns/mnt", &self) < 0 || stat(path, &parent) < 0)
		return false;
	return self.st_ino != parent.st_ino || self.st_dev != parent.st_dev;
}

/* ---- veth ------------------------------------------------------------- */

static int veth_create(struct rtnl *nl, const struct link_veth *v)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *peer;
	struct nlattr *linkinfo, *data, *peer_nest;

	nlh = rtnl_link_req(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, v->host_ifname, NULL);

	linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	/* VETH_INFO_PEER carries a whole ifinfomsg, then the peer's attrs. */
	peer_nest = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	peer = mnl_nlmsg_put_extra_header(nlh, sizeof(*peer));
	memset(peer, 0, sizeof(*peer));
	peer->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, v->peer_ifname);
	if (v->peer_mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, v->peer_mac);
	if (!v->peer_here)	/* else it stays here, for its owner to move */
		mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)v->netns_fd);
	mnl_attr_nest_end(nlh, peer_nest);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, linkinfo);
	return rtnl_talk(nl, nlh, NULL, NULL);
}

static bool prefix_given(const struct prefix *p)
{
	return p->addr.family != 0;
}

static int prefix_check(const struct prefix *p, int family)
{
	if (!prefix_given(p))
		return 0;
	if (p->addr.family != family || p->plen > addr_len(family) * 8)
		return -EINVAL;
	return 0;
}

/*
 * Each end's address, of each family given, as a permanent neighbour on the
 * other end: a sandbox that talks takes no learned neighbour entry on
 * either side, however many sandboxes a host runs (with learned ones, past
 * about 500 talking sandboxes the machine's table overflowed).
 */
static int veth_neighbours(struct rtnl *host, struct rtnl *ns, const struct link_veth *v,
			   int host_idx, int peer_idx)
{
	const struct prefix *far[2][2] = { { &v->peer4, &v->peer6 }, { &v->host4, &v->host6 } };
	struct rtnl_link hl, pl;
	int r;

	if ((r = rtnl_link_get(host, v->host_ifname, &hl)) < 0 ||
	    (r = rtnl_link_get(ns, v->peer_ifname, &pl)) < 0)
		return r;
	if (!hl.has_mac || !pl.has_mac)
		return 0;	/* no Ethernet addresses: nothing to resolve */
	for (int f = 0; f < 2; f++) {
		if (prefix_given(far[0][f]) && prefix_given(far[1][f]) &&
		    ((r = nl_neigh_add(host, host_idx, &far[0][f]->addr, pl.mac)) < 0 ||
		     (r = nl_neigh_add(ns, peer_idx, &far[1][f]->addr, hl.mac)) < 0))
			return r;
	}
	return 0;
}

/*
 * The host end of a pair whose peer stays here (@v->peer_here): its
 * addresses (point-to-point to the peer's), no IPv6 link-local, up, and
 * the peer's addresses as permanent neighbours at the peer's MAC.  The peer
 * is left down and bare: who moves it configures it.
 */
static int veth_configure_host(struct rtnl *host, const struct link_veth *v)
{
	const struct prefix *peer[2] = { &v->peer4, &v->peer6 };
	const struct prefix *own[2] = { &v->host4, &v->host6 };
	int idx = rtnl_ifindex(host, v->host_ifname), r;

	if (idx < 0)
		return idx;
	for (int f = 0; f < 2; f++)
		if (prefix_given(own[f]) &&
		    (r = nl_addr_add(host, idx, own[f],
				     own[f]->plen == (f ? 128 : 32) && prefix_given(peer[f]) ?
					     &peer[f]->addr : NULL)) < 0)
			return r;
	if ((r = nl_link_no_ll6(host, idx)) < 0 || (r = nl_link_up(host, idx)) < 0)
		return r;
	for (int f = 0; f < 2; f++)
		if (prefix_given(own[f]) && prefix_given(peer[f]) &&
		    (r = nl_neigh_add(host, idx, &peer[f]->addr, v->peer_mac)) < 0)
			return r;
	return 0;
}

/* Everything after the pair exists; the caller deletes it on failure. */
static int veth_configure(struct rtnl *host, struct rtnl *ns,
			  const struct link_veth *v)
{
	int host_idx, peer_idx, lo_idx, r;

	host_idx = rtnl_ifindex(host, v->host_ifname);
	if (host_idx < 0)
		return host_idx;
	peer_idx = rtnl_ifindex(ns, v->peer_ifname);
	if (peer_idx < 0)
		return peer_idx;
	lo_idx = rtnl_ifindex(ns, "lo");
	if (lo_idx < 0)
		return lo_idx;

	/*
	 * A full-length host address (/32, /128) is point-to-point to the
	 * peer's address: an IPAM range shared by many sandboxes gives each
	 * one a host route through its own veth, not one on-link prefix.
	 */
	if (prefix_given(&v->host4) &&
	    (r = nl_addr_add(host, host_idx, &v->host4,
			     v->host4.plen == 32 && prefix_given(&v->peer4) ? &v->peer4.addr :
									      NULL)) < 0)
		return r;
	if (prefix_given(&v->host6) &&
	    (r = nl_addr_add(host, host_idx, &v->host6,
			     v->host6.plen == 128 && prefix_given(&v->peer6) ? &v->peer6.addr :
									       NULL)) < 0)
		return r;
	if (prefix_given(&v->peer4) && (r = nl_addr_add(ns, peer_idx, &v->peer4, NULL)) < 0)
		return r;
	if (prefix_given(&v->peer6) && (r = nl_addr_add(ns, peer_idx, &v->peer6, NULL)) < 0)
		return r;

	if ((r = nl_link_up(ns, lo_idx)) < 0)
		return r;
	if ((r = nl_link_no_ll6(host, host_idx)) < 0 || (r = nl_link_up(host, host_idx)) < 0)
		return r;
	if ((r = nl_link_up(ns, peer_idx)) < 0)
		return r;

	if ((r = veth_neighbours(host, ns, v, host_idx, peer_idx)) < 0)
		return r;
	/* Routes last: the gateway must already be on an up, on-link prefix. */
	if (prefix_given(&v->host4) && prefix_given(&v->peer4) &&
	    (r = nl_default_route_add(ns, peer_idx, &v->host4.addr)) < 0)
		return r;
	if (prefix_given(&v->host6) && prefix_given(&v->peer6) &&
	    (r = nl_default_route_add(ns, peer_idx, &v->host6.addr)) < 0)
		return r;
	return 0;
}

int link_veth_setup(const struct link_veth *v)
{
	struct rtnl host = { 0 }, ns = { 0 };
	int r;

	if (!v || (v->peer_here ? !v->peer_mac : v->netns_fd < 0))
		return -EINVAL;
	if ((r = rtnl_ifname_check(v->host_ifname)) < 0 ||
	    (r = rtnl_ifname_check(v->peer_ifname)) < 0)
		return r;
	if ((r = prefix_check(&v->host4, AF_INET)) < 0 ||
	    (r = prefix_check(&v->peer4, AF_INET)) < 0 ||
	    (r = prefix_check(&v->host6, AF_INET6)) < 0 ||
	    (r = prefix_check(&v->peer6, AF_INET6)) < 0)
		return r;

	r = rtnl_open(&host, -1);
	if (r < 0)
		return r;
	r = v->peer_here ? 0 : rtnl_open(&ns, v->netns_fd);
	if (r < 0)
		goto out;

	/* NLM_F_EXCL: -EEXIST if either name is taken; nothing made then. */
	r = veth_create(&host, v);
	if (r < 0)
		goto out;
	r = v->peer_here ? veth_configure_host(&host, v) : veth_configure(&host, &ns, v);
	if (r < 0)
		/* Deleting the host end takes the peer in the netns with it. */
		(void)nl_link_delete(&host, v->host_ifname);
out:
	rtnl_close(&ns);
	rtnl_close(&host);
	return r;
}

/* @ifname checked, then an rtnetlink conversation in netd's own netns about it. */
static int open_about(struct rtnl *nl, const char *ifname)
{
	int r = rtnl_ifname_check(ifname);

	return r < 0 ? r : rtnl_open(nl, -1);
}

int link_delete(const char *ifname)
{
	struct rtnl nl;
	int r = open_about(&nl, ifname);

	if (r < 0)
		return r;
	r = nl_link_delete(&nl, ifname);
	rtnl_close(&nl);
	return r;
}

int link_exists(const char *ifname)
{
	struct rtnl nl;
	int r = open_about(&nl, ifname);

	if (r < 0)
		return r;
	r = rtnl_ifindex(&nl, ifname);
	rtnl_close(&nl);
	if (r == -ENODEV)
		return 0;
	return r < 0 ? r : 1;
}

/* ---- dumps ------------------------------------------------------------ */

/* Interface names of a dump: all of them (@grow), or the first @max and a count. */
struct name_list {
	char (*names)[IFNAMSIZ];
	size_t max, n;		/* n counts past max unless @grow */
	bool skip_lo, grow;
	int err;		/* -ENOMEM while growing */
};

/* Make room for one more element in *@arr (@n used of *@cap, @size bytes each). */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr, *np;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? 2 * *cap : 64;
	np = realloc(*p, nc * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static int name_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct name_list *nl = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (nl->skip_lo && (ifi->ifi_flags & IFF_LOOPBACK))
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(attr) != IFLA_IFNAME ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			continue;
		if (nl->grow && !nl->err)
			nl->err = grow(&nl->names, &nl->max, nl->n, sizeof(*nl->names));
		if (nl->n < nl->max && !nl->err)
			snprintf(nl->names[nl->n], IFNAMSIZ, "%s", mnl_attr_get_str(attr));
		nl->n++;
	}
	return MNL_CB_OK;
}

/* Dump the interface names of @netns_fd (-1: the caller's netns) into @list. */
static int dump_links(int netns_fd, struct name_list *list)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtgenmsg *rt;
	struct rtnl nl;
	int r;

	r = rtnl_open(&nl, netns_fd);
	if (r < 0)
		return r;
	nlh = rtnl_req(buf, RTM_GETLINK, NLM_F_DUMP);
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtgen_family = AF_UNSPEC;
	r = rtnl_talk(&nl, nlh, name_list_cb, list);
	rtnl_close(&nl);
	return r;
}

static int link_names_once(char (**ret)[IFNAMSIZ])
{
	struct name_list list = { .grow = true };
	int r = dump_links(-1, &list);

	*ret = NULL;
	if (r == 0)
		r = list.err;
	if (r == 0 && list.n > INT_MAX)
		r = -EOVERFLOW;
	if (r < 0) {
		free(list.names);
		return r;
	}
	*ret = list.names;
	return (int)list.n;
}

int link_names(char (**ret)[IFNAMSIZ])
{
	int r;

	/* A dump the kernel interrupted (the list changed meanwhile) is asked again. */
	for (int t = 0; t < RTNL_DUMP_TRIES; t++) {
		r = link_names_once(ret);
		if (r != -EINTR)
			break;
	}
	return r;
}

static int link_netns_other_links_once(int netns_fd, char *first, size_t sz)
{
	char names[1][IFNAMSIZ];
	struct name_list list = { .names = names, .max = 1, .skip_lo = true };
	int r = dump_links(netns_fd, &list);

	if (sz)
		first[0] = '\0';
	if (r < 0)
		return r;
	if (list.n && sz)
		snprintf(first, sz, "%s", names[0]);
	return (int)list.n;
}

int link_netns_other_links(int netns_fd, char *first, size_t sz)
{
	int r;

	/* A dump the kernel interrupted (the list changed meanwhile) is asked again. */
	for (int t = 0; t < RTNL_DUMP_TRIES; t++) {
		r = link_netns_other_links_once(netns_fd, first, sz);
		if (r != -EINTR)
			break;
	}
	return r;
}

struct route_pick {
	int oif;
	uint32_t prio;
	bool found;
};

static int route_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, RTA_MAX) < 0)
		return MNL_CB_OK;
	switch (type) {
	case RTA_OIF:
	case RTA_PRIORITY:
	case RTA_TABLE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_OK;
		break;
	case RTA_MULTIPATH:
		if (mnl_attr_get_payload_len(attr) < sizeof(struct rtnexthop))
			return MNL_CB_OK;
		break;
	default:
		break;
	}
	tb[type] = attr;
	return MNL_CB_OK;
}

static int default_route_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { 0 };
	struct route_pick *pick = data;
	const struct rtmsg *rtm;
	uint32_t table, prio = 0;
	int oif = 0;

	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_family != AF_INET || rtm->rtm_dst_len != 0 ||
	    rtm->rtm_type != RTN_UNICAST)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, tb);
	table = tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	if (table != RT_TABLE_MAIN)
		return MNL_CB_OK;
	if (tb[RTA_OIF]) {
		oif = (int)mnl_attr_get_u32(tb[RTA_OIF]);
	} else if (tb[RTA_MULTIPATH]) {
		/* ECMP default: report the first hop's interface. */
		const struct rtnexthop *nh = mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		oif = nh->rtnh_ifindex;
	}
	if (oif <= 0)
		return MNL_CB_OK;
	if (tb[RTA_PRIORITY])
		prio = mnl_attr_get_u32(tb[RTA_PRIORITY]);
	/* Lowest metric wins, as in the kernel's lookup. */
	if (!pick->found || prio < pick->prio) {
		pick->found = true;
		pick->prio = prio;
		pick->oif = oif;
	}
	return MNL_CB_OK;
}

int link_default_route_ifname(char *buf, size_t sz)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct route_pick pick = { 0 };
	char name[IF_NAMESIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct rtnl nl;
	int r;

	if (!buf || sz < IF_NAMESIZE)
		return -EINVAL;
	r = rtnl_open(&nl, -1);
	if (r < 0)
		return r;
	nlh = rtnl_req(req, RTM_GETROUTE, NLM_F_DUMP);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	r = rtnl_talk(&nl, nlh, default_route_cb, &pick);
	rtnl_close(&nl);
	if (r < 0)
		return r;
	if (!pick.found)
		return -ENOENT;
	if (!if_indextoname((unsigned int)pick.oif, name))
		return -errno;
	snprintf(buf, sz, "%s", name);
	return 0;
}

/* ---- the host's routers (default routes' gateways) ------------------- */

struct gw_list {
	struct addr *out;
	size_t max, n;
};

static int default_gw_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { 0 };
	struct gw_list *l = data;
	const struct rtmsg *rtm;
	size_t alen;

	if (nlh->nlmsg_type != RTM_NEWROUTE || mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	rtm = mnl_nlmsg_get_payload(nlh);
	alen = addr_len(rtm->rtm_family);
	if (!alen || rtm->rtm_dst_len != 0 || rtm->rtm_type != RTN_UNICAST)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, tb);
	if (!tb[RTA_GATEWAY] || mnl_attr_get_payload_len(tb[RTA_GATEWAY]) != alen ||
	    l->n >= l->max)
		return MNL_CB_OK;
	memset(&l->out[l->n], 0, sizeof(l->out[0]));
	l->out[l->n].family = rtm->rtm_family;
	memcpy(l->out[l->n].a, mnl_attr_get_payload(tb[RTA_GATEWAY]), alen);
	l->n++;
	return MNL_CB_OK;
}

static int link_default_gateways_once(struct addr *out, size_t max)
{
	static const int families[] = { AF_INET, AF_INET6 };
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct gw_list l = { .out = out, .max = max };
	struct rtnl nl;
	int r = 0;

	for (size_t i = 0; r == 0 && i < 2; i++) {
		struct nlmsghdr *nlh;
		struct rtmsg *rtm;

		r = rtnl_open(&nl, -1);
		if (r < 0)
			return r;
		nlh = rtnl_req(req, RTM_GETROUTE, NLM_F_DUMP);
		rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = (unsigned char)families[i];
		r = rtnl_talk(&nl, nlh, default_gw_cb, &l);
		rtnl_close(&nl);
	}
	return r < 0 ? r : (int)l.n;
}

int link_default_gateways(struct addr *out, size_t max)
{
	int r;

	/* A dump the kernel interrupted (the list changed meanwhile) is asked again. */
	for (int t = 0; t < RTNL_DUMP_TRIES; t++) {
		r = link_default_gateways_once(out, max);
		if (r != -EINTR)
			break;
	}
	return r;
}

/* Addresses of a dump, growing as they come. */
struct addr_list {
	struct prefix *out;
	size_t cap, n;
	int err;		/* -ENOMEM */
};

static int addr_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(attr, IFA_MAX) < 0)
		return MNL_CB_OK;
	tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

static int local_addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFA_MAX + 1] = { 0 };
	struct addr_list *l = data;
	const struct ifaddrmsg *ifa;
	const struct nlattr *a;
	struct prefix *p;
	size_t alen;

	if (nlh->nlmsg_type != RTM_NEWADDR ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifa))
		return MNL_CB_OK;
	ifa = mnl_nlmsg_get_payload(nlh);
	alen = addr_len(ifa->ifa_family);
	if (alen == 0)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifa), addr_attr_cb, tb);
	/* IFA_LOCAL is our end; on a point-to-point link IFA_ADDRESS is the peer. */
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!a || mnl_attr_get_payload_len(a) != alen)
		return MNL_CB_OK;
	if (l->err || (l->err = grow(&l->out, &l->cap, l->n, sizeof(*l->out))) < 0)
		return MNL_CB_OK;	/* keep reading: the dump must be drained */
	p = &l->out[l->n++];
	memset(p, 0, sizeof(*p));
	p->addr.family = ifa->ifa_family;
	memcpy(p->addr.a, mnl_attr_get_payload(a), alen);
	p->plen = (uint8_t)(alen * 8);
	return MNL_CB_OK;
}

static int link_local_addrs_once(struct prefix **ret)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct addr_list l = { 0 };
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	struct rtnl nl;
	int r;

	*ret = NULL;
	r = rtnl_open(&nl, -1);
	if (r < 0)
		return r;
	nlh = rtnl_req(req, RTM_GETADDR, NLM_F_DUMP);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_UNSPEC;
	r = rtnl_talk(&nl, nlh, local_addr_cb, &l);
	rtnl_close(&nl);
	/* A partial list would let the host's own address be pinned: refuse. */
	if (r == 0)
		r = l.err;
	if (r == 0 && l.n > INT_MAX)
		r = -EOVERFLOW;
	if (r < 0) {
		free(l.out);
		return r;
	}
	*ret = l.out;
	return (int)l.n;
}

int link_local_addrs(struct prefix **ret)
{
	int r;

	/* A dump the kernel interrupted (the list changed meanwhile) is asked again. */
	for (int t = 0; t < RTNL_DUMP_TRIES; t++) {
		r = link_local_addrs_once(ret);
		if (r != -EINTR)
			break;
	}
	return r;
}
