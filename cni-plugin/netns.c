/*
 * netns.c - see netns.h.
 */
#include "cni-plugin/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "common/nlbuf.h"

const char *cni_json_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* MAC of @ifname in the caller's netns as "aa:bb:..", into @buf (>= 18). */
int link_mac(const char *ifname, char *buf, size_t sz)
{
	struct ifreq ifr = { 0 };
	const unsigned char *m;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	m = (const unsigned char *)ifr.ifr_hwaddr.sa_data;
	snprintf(buf, sz, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return 0;
}

/*
 * Run @fn in the netns at @path and come back (this process is
 * single-threaded, so setns() is safe).  Return: @fn's result; -errno.
 */
int in_netns(const char *path, int (*fn)(void *), void *arg)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), target, r;

	if (self < 0)
		return -errno;
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		r = -errno;
		close(self);
		return r;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		r = -errno;
	} else {
		r = fn(arg);
		if (setns(self, CLONE_NEWNET) < 0) {
			/* Cannot happen with the fd we opened; never keep running elsewhere. */
			fprintf(stderr, "netd-cni: cannot return to the host netns: %s\n",
				strerror(errno));
			_exit(70);
		}
	}
	close(target);
	close(self);
	return r;
}


int probe_peer(void *arg)
{
	struct peer_probe *p = arg;
	struct ifaddrs *ifa, *i;

	if (if_nametoindex(p->ifname) == 0)
		return -ENODEV;
	p->has_mac = link_mac(p->ifname, p->mac, sizeof(p->mac)) == 0;
	if (!p->want4)
		return 0;
	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		char buf[INET_ADDRSTRLEN];

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    strcmp(i->ifa_name, p->ifname) != 0)
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
			  sizeof(buf));
		if (strcmp(buf, p->want4) == 0)
			p->has_addr = true;
	}
	freeifaddrs(ifa);
	return 0;
}


/*
 * IFLA_LINK of @ifname in the caller's netns: for a veth, the ifindex of
 * its peer (in the peer's netns).  One RTM_GETLINK over rtnetlink.
 */
struct link_peer {
	const char *ifname;
	int peer_index;
};

static int probe_link_peer(void *arg)
{
	struct link_peer *p = arg;
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = { 0 };
	char buf[8192] __attribute__((aligned(4)));
	struct rtattr *rta;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	size_t nlen = strlen(p->ifname) + 1;
	int fd, r = -ENOENT;
	ssize_t n;

	if (nlen > IFNAMSIZ)
		return -EINVAL;
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(sizeof(req.nh) + sizeof(req.ifi)));
	rta->rta_type = IFLA_IFNAME;
	rta->rta_len = (unsigned short)RTA_LENGTH(nlen);
	memcpy(RTA_DATA(rta), p->ifname, nlen);
	req.nh.nlmsg_len = (uint32_t)(NLMSG_ALIGN(sizeof(req.nh) + sizeof(req.ifi)) +
				      RTA_ALIGN(rta->rta_len));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	/* One datagram, whole (-EMSGSIZE), every length in it checked. */
	n = nlbuf_recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		r = (int)n;
		goto out;
	}
	if (nlbuf_check(buf, (size_t)n) < 0) {
		r = -EBADMSG;
		goto out;
	}
	for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n)) {
		struct ifinfomsg *ifi;
		int alen;

		if (nh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
				r = -EBADMSG;
				break;
			}
			r = e->error ? e->error : -ENOENT;
			break;
		}
		if (nh->nlmsg_type != RTM_NEWLINK)
			continue;
		ifi = NLMSG_DATA(nh);
		alen = (int)IFLA_PAYLOAD(nh);
		for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == IFLA_LINK && RTA_PAYLOAD(a) >= 4) {
				memcpy(&p->peer_index, RTA_DATA(a), 4);
				r = 0;
			}
		break;
	}
out:
	close(fd);
	return r;
}

/* "10.88.0.5/16" -> "10.88.0.5" in @out; false if not an address of @family. */
static bool cidr_addr(const char *cidr, int family, char *out, size_t sz)
{
	unsigned char bin[16];
	const char *slash = cidr ? strchr(cidr, '/') : NULL;
	size_t n = slash ? (size_t)(slash - cidr) : (cidr ? strlen(cidr) : 0);

	if (!cidr || n == 0 || n >= sz)
		return false;
	memcpy(out, cidr, n);
	out[n] = '\0';
	return inet_pton(family, out, bin) == 1;
}


int chained_view(const struct cni_conf *c, const char *ifn, const char *ns,
			struct chained_view *v, struct cni_err *err)
{
	json_t *ifs = json_object_get(c->prev_result, "interfaces"),
	       *ips = json_object_get(c->prev_result, "ips"), *it;
	const char *cand[16];
	size_t i, n_cand = 0;
	long cidx = -1;

	memset(v, 0, sizeof(*v));
	json_array_foreach(ifs, i, it) {
		const char *name = cni_json_str(it, "name"), *sb = cni_json_str(it, "sandbox");

		if (!name)
			continue;
		if (sb && sb[0]) {
			if (strcmp(name, ifn) == 0)
				cidx = (long)i;
		} else if (n_cand < 16 && if_nametoindex(name) != 0) {
			cand[n_cand++] = name;
		}
	}
	if (n_cand == 1) {
		v->host_ifname = cand[0];
	} else if (n_cand > 1) {
		struct link_peer lp = { .ifname = ifn };

		if (in_netns(ns, probe_link_peer, &lp) == 0 && lp.peer_index > 0)
			for (i = 0; i < n_cand; i++)
				if ((int)if_nametoindex(cand[i]) == lp.peer_index)
					v->host_ifname = cand[i];
	}
	if (!v->host_ifname)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "prevResult has no host-side interface of %s in this netns (chained "
				   "mode needs a veth-based plugin such as bridge or ptp before netd-cni)",
				   ifn);
	json_array_foreach(ips, i, it) {
		json_t *idx = json_object_get(it, "interface");
		const char *addr = cni_json_str(it, "address");

		/* An address of another interface is not the container's. */
		if (json_is_integer(idx) && cidx >= 0 && json_integer_value(idx) != cidx)
			continue;
		if (!v->ipv4[0] && cidr_addr(addr, AF_INET, v->ipv4, sizeof(v->ipv4)))
			v->gateway4 = cni_json_str(it, "gateway");
		else if (!v->ipv6[0] && cidr_addr(addr, AF_INET6, v->ipv6, sizeof(v->ipv6)))
			v->gateway6 = cni_json_str(it, "gateway");
	}
	if (!v->ipv4[0] && !v->ipv6[0])
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "prevResult has no IP address for %s: chained mode needs an IPAM "
				   "plugin (host-local, ...) before netd-cni", ifn);
	return 0;
}

