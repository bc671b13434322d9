/*
 * tap - persistent tap devices for microVM sandboxes, and the guest's
 * static configuration.  See tap.h.
 *
 * The device side speaks /dev/net/tun ioctls (linux/if_tun.h) and, for
 * deleting, addressing and inspecting a tap, one rtnetlink request each
 * through rtnl.c (the conversation link.c uses too).
 */
#include "netd/link/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <arpa/inet.h>

#include "common/hash.h"
#include "common/hex.h"
#include "common/ifname.h"
#include "netd/link/rtnl.h"

#define TUN_DEV "/dev/net/tun"

/* NULL-safe ifname_valid() (common/ifname.h). */
static bool ifname_ok(const char *ifname)
{
	return ifname && strnlen(ifname, IFNAMSIZ) < IFNAMSIZ && ifname_valid(ifname);
}

static int set_mtu(const char *ifname, unsigned mtu)
{
	struct ifreq ifr = { 0 };
	int fd, r = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(fd, SIOCSIFMTU, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

int tap_create(const struct tap_spec *s)
{
	struct ifreq ifr = { 0 };
	int fd, r = 0;

	if (!s || !ifname_ok(s->ifname) || s->owner == (uid_t)-1 || s->queues < 1 ||
	    s->queues > TAP_QUEUES_MAX || (s->mtu && (s->mtu < TAP_MTU_MIN || s->mtu > TAP_MTU_MAX)))
		return -EINVAL;
	fd = open(TUN_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, s->ifname, strlen(s->ifname));
	/* IFF_TUN_EXCL: fail with EBUSY rather than attach to an existing
	 * device of that name, which may be someone else's. */
	/* ifr_flags is a short and IFF_TUN_EXCL is 0x8000: the bits, as such. */
	ifr.ifr_flags = (short)(uint16_t)(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_TUN_EXCL);
	if (s->queues > 1)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		r = -errno;
		/* EBUSY from IFF_TUN_EXCL, EINVAL when the name is a non-tun
		 * interface's: either way, the name is taken. */
		if (r == -EBUSY || (r == -EINVAL && if_nametoindex(s->ifname) != 0))
			r = -EEXIST;
		goto out;
	}
	/* Owner before persistence: until TUNSETPERSIST the device dies with
	 * this fd, so no ownerless persistent tap can exist, even briefly. */
	if (ioctl(fd, TUNSETOWNER, (unsigned long)s->owner) < 0) {
		r = -errno;
		goto out;
	}
	if (s->group != TAP_NO_GROUP && ioctl(fd, TUNSETGROUP, (unsigned long)s->group) < 0) {
		r = -errno;
		goto out;
	}
	if (s->mtu) {
		r = set_mtu(s->ifname, s->mtu);
		if (r < 0)
			goto out;
	}
	if (ioctl(fd, TUNSETPERSIST, 1UL) < 0)
		r = -errno;
out:
	close(fd);	/* not persistent yet on any failure: the device goes with it */
	return r;
}

/* ---- writing frames as the guest ------------------------------------- */

int tap_hwaddr(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int fd, r = 0;

	if (!ifname_ok(ifname))
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		r = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return r;
}

int tap_inject(const char *ifname, const uint8_t *const frames[], const size_t lens[], size_t n)
{
	uint8_t buf[TAP_INJECT_MAX + 64] = { 0 };
	struct ifreq ifr = { 0 };
	struct tap_info ti;
	size_t hdr = 0;
	int fd, vlen = 0, r;

	if (!ifname_ok(ifname) || (n && (!frames || !lens)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (lens[i] < 14 || lens[i] > TAP_INJECT_MAX)
			return -EINVAL;
	r = tap_query(ifname, &ti);
	if (r < 0)
		return r;
	if (!ti.is_tap)
		return -EMEDIUMTYPE;
	/* A VMM holds a queue: never join it (tap.h says why). */
	if (ti.attached)
		return -EBUSY;
	fd = open(TUN_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	/* tap_create()'s own flags (a queue must match the device's
	 * IFF_MULTI_QUEUE), without IFF_TUN_EXCL: attach, do not create.  A
	 * VMM attaching in between makes a single-queue tap's TUNSETIFF fail
	 * with EBUSY, which is the answer wanted. */
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR);
	if (ti.multi_queue)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	/* What the device takes now: a virtio-net header before each frame
	 * (zeroed: no checksum offload, no GSO, virtio 1.1 5.1.6), of the
	 * device's size. */
	if (ioctl(fd, TUNGETIFF, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	if (ifr.ifr_flags & IFF_VNET_HDR) {
		if (ioctl(fd, TUNGETVNETHDRSZ, &vlen) < 0) {
			r = -errno;
			goto out;
		}
		hdr = (size_t)vlen;
	}
	if (!(ifr.ifr_flags & IFF_NO_PI))
		hdr += 4;	/* struct tun_pi, zeroed: its proto is not looked at for a tap */
	if (hdr > 64) {
		r = -EPROTO;
		goto out;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		memset(buf, 0, hdr);
		memcpy(buf + hdr, frames[i], lens[i]);
		/* Synchronous: tun hands the frame to the stack (prerouting
		 * included) before write() returns. */
		if (write(fd, buf, hdr + lens[i]) != (ssize_t)(hdr + lens[i]))
			r = errno ? -errno : -EIO;
	}
out:
	close(fd);	/* the queue goes with it; the persistent tap stays */
	return r;
}

/* ---- rtnetlink: delete and inspect ------------------------------------ */

int tap_delete(const char *ifname)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct rtnl q;
	int r;

	if (!ifname_ok(ifname))
		return -EINVAL;
	r = rtnl_open(&q, -1);
	if (r < 0)
		return r;
	r = rtnl_talk(&q, rtnl_link_req(buf, RTM_DELLINK, NLM_F_ACK, 0, ifname, NULL), NULL, NULL);
	rtnl_close(&q);
	return r == -ENODEV ? 0 : r;
}

static int addr_add(struct rtnl *q, unsigned ifindex, const struct prefix *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_NEWADDR;
	/* REPLACE: a restart re-applies the same address without an error. */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = p->addr.family;
	ifa->ifa_prefixlen = p->plen;
	ifa->ifa_index = ifindex;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	if (p->addr.family == AF_INET6)
		ifa->ifa_flags = IFA_F_NODAD;	/* the only other node is the guest */
	mnl_attr_put(nlh, IFA_LOCAL, addr_len(p->addr.family), p->addr.a);
	mnl_attr_put(nlh, IFA_ADDRESS, addr_len(p->addr.family), p->addr.a);
	return rtnl_talk(q, nlh, NULL, NULL);
}

int tap_configure(const char *ifname, const struct prefix *host4, const struct prefix *host6)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	const struct prefix *p[2] = { host4, host6 };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct rtnl q;
	unsigned ifindex;
	int r = 0;

	if (!ifname_ok(ifname))
		return -EINVAL;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -errno;
	r = rtnl_open(&q, -1);
	if (r < 0)
		return r;
	for (int i = 0; i < 2 && r == 0; i++)
		if (p[i] && p[i]->addr.family)
			r = addr_add(&q, ifindex, p[i]);
	if (r == 0) {
		nlh = rtnl_link_req(buf, RTM_NEWLINK, NLM_F_ACK, (int)ifindex, NULL, &ifi);
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
		r = rtnl_talk(&q, nlh, NULL, NULL);
	}
	rtnl_close(&q);
	return r;
}

struct query_ctx {
	struct tap_info *info;
	bool found, is_tun;
};

static void parse_tun_data(const struct nlattr *data, struct tap_info *ti)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, data) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_TUN_TYPE:
			if (mnl_attr_validate(a, MNL_TYPE_U8) == 0)
				ti->is_tap = mnl_attr_get_u8(a) == (IFF_TAP & 0xff);
			break;
		case IFLA_TUN_OWNER:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0) {
				ti->owner = mnl_attr_get_u32(a);
				ti->has_owner = true;
			}
			break;
		case IFLA_TUN_GROUP:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0) {
				ti->group = mnl_attr_get_u32(a);
				ti->has_group = true;
			}
			break;
		case IFLA_TUN_PERSIST:
			if (mnl_attr_validate(a, MNL_TYPE_U8) == 0)
				ti->persist = mnl_attr_get_u8(a) != 0;
			break;
		case IFLA_TUN_MULTI_QUEUE:
			if (mnl_attr_validate(a, MNL_TYPE_U8) == 0)
				ti->multi_queue = mnl_attr_get_u8(a) != 0;
			break;
		case IFLA_TUN_VNET_HDR:
			if (mnl_attr_validate(a, MNL_TYPE_U8) == 0)
				ti->vnet_hdr = mnl_attr_get_u8(a) != 0;
			break;
		case IFLA_TUN_NUM_QUEUES:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				ti->attached = mnl_attr_get_u32(a);
			break;
		}
	}
}

static int query_cb(const struct nlmsghdr *nlh, void *data)
{
	struct query_ctx *c = data;
	const struct nlattr *a, *li;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	c->found = true;
	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg)) {
		if (mnl_attr_get_type(a) == IFLA_MTU && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			c->info->mtu = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) != IFLA_LINKINFO)
			continue;
		mnl_attr_for_each_nested(li, a) {
			if (mnl_attr_get_type(li) == IFLA_INFO_KIND &&
			    mnl_attr_validate(li, MNL_TYPE_NUL_STRING) == 0)
				c->is_tun = strcmp(mnl_attr_get_str(li), "tun") == 0;
			else if (mnl_attr_get_type(li) == IFLA_INFO_DATA)
				parse_tun_data(li, c->info);
		}
	}
	return MNL_CB_OK;
}

int tap_query(const char *ifname, struct tap_info *ret)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct query_ctx c = { .info = ret };
	struct rtnl q;
	int r;

	if (!ifname_ok(ifname) || !ret)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	r = rtnl_open(&q, -1);
	if (r < 0)
		return r;
	r = rtnl_talk(&q, rtnl_link_req(buf, RTM_GETLINK, NLM_F_ACK, 0, ifname, NULL), query_cb, &c);
	rtnl_close(&q);
	if (r < 0)
		return r;
	if (!c.found)
		return -ENODEV;
	if (!c.is_tun) {
		ret->is_tap = false;
		return -EMEDIUMTYPE;
	}
	return 0;
}

/* ---- pure helpers ------------------------------------------------------ */

int tap_ifname(uint32_t slot, char *buf, size_t sz)
{
	int n;

	if (slot > 0xffff)
		return -ERANGE;
	n = snprintf(buf, sz, TAP_IFNAME_PREFIX "%04" PRIx32, slot);
	return n < 0 || (size_t)n >= sz ? -ENOSPC : 0;
}

void tap_mac_from_name(const char *name, uint8_t mac[6])
{
	uint64_t h = fnv64_str(FNV64_INIT, name);

	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * i));
	/* IEEE 802: bit 0 of the first octet is I/G (clear: unicast), bit 1
	 * is U/L (set: locally administered, never a vendor's address). */
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);
}

void tap_mac_format(const uint8_t mac[6], char buf[TAP_MAC_STRLEN])
{
	snprintf(buf, TAP_MAC_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}

int tap_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];
	int hi, lo, any = 0;

	if (!s || strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		hi = hex_digit(s[3 * i]);
		lo = hex_digit(s[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
		any |= m[i];
	}
	if (!any || (m[0] & 0x01))	/* all zeros; group (multicast/broadcast) bit */
		return -EINVAL;
	memcpy(mac, m, 6);
	return 0;
}

int tap_kernel_ip_arg(const struct addr *guest4, const struct addr *gw4, unsigned plen4,
		      char *buf, size_t sz)
{
	char g[INET_ADDRSTRLEN], w[INET_ADDRSTRLEN], m[INET_ADDRSTRLEN];
	uint32_t mask_be;
	int n;

	if (!guest4 || !gw4 || guest4->family != AF_INET || gw4->family != AF_INET ||
	    plen4 < 1 || plen4 > 32)
		return -EINVAL;
	mask_be = htonl(plen4 == 32 ? 0xffffffffu : ~(0xffffffffu >> plen4));
	if (!inet_ntop(AF_INET, guest4->a, g, sizeof(g)) || !inet_ntop(AF_INET, gw4->a, w, sizeof(w)) ||
	    !inet_ntop(AF_INET, &mask_be, m, sizeof(m)))
		return -EINVAL;
	/* client-ip:server-ip:gw-ip:netmask:hostname:device:autoconf */
	n = snprintf(buf, sz, "ip=%s::%s:%s::eth0:off", g, w, m);
	if (n < 0 || (size_t)n >= sz)
		return -ENOSPC;
	return n;
}

int tap_mtu(unsigned want, unsigned uplink_mtu)
{
	if (want)
		return want >= TAP_MTU_MIN && want <= TAP_MTU_MAX ? (int)want : -ERANGE;
	if (uplink_mtu && uplink_mtu < TAP_MTU_DEFAULT)
		return uplink_mtu < TAP_MTU_MIN ? TAP_MTU_MIN : (int)uplink_mtu;
	return TAP_MTU_DEFAULT;
}

static int parse_id(const char *s, size_t len, unsigned long *ret)
{
	unsigned long v = 0;

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	/* (uid_t)-1 and (gid_t)-1 mean "none" to the kernel and to chown(2). */
	if (v >= UINT32_MAX)
		return -EINVAL;
	*ret = v;
	return 0;
}

int tap_owner_parse(const char *s, uid_t *uid, gid_t *gid)
{
	const char *colon;
	unsigned long u, g;

	if (!s)
		return -EINVAL;
	colon = strchr(s, ':');
	if (parse_id(s, colon ? (size_t)(colon - s) : strlen(s), &u) < 0)
		return -EINVAL;
	if (colon) {
		if (parse_id(colon + 1, strlen(colon + 1), &g) < 0)
			return -EINVAL;
	} else {
		g = TAP_NO_GROUP;
	}
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}
