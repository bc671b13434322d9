/*
 * hostcheck - requested addresses and interfaces against the host's own.
 * Pure; the reasons are for an HTTP 400 body.
 */
#include "netd/daemon/hostcheck.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool in_list(const struct addr *a, const struct addr *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (addr_equal(a, &list[i]))
			return true;
	return false;
}

/* A class of address no sandbox may have, whatever the host: NULL if none. */
static const char *special(const struct addr *a)
{
	static const uint8_t zero[16];
	size_t len = addr_len(a->family);

	if (!len)
		return "has no address family";
	if (memcmp(a->a, zero, len) == 0)
		return "is the unspecified address";
	if (a->family == AF_INET) {
		if (a->a[0] == 127)
			return "is a loopback address (127.0.0.0/8)";
		if ((a->a[0] & 0xf0) == 0xe0)
			return "is a multicast address";
		if (a->a[0] == 255 && a->a[1] == 255 && a->a[2] == 255 && a->a[3] == 255)
			return "is the broadcast address";
		return NULL;
	}
	if (memcmp(a->a, zero, 15) == 0 && a->a[15] == 1)
		return "is the loopback address (::1)";
	if (a->a[0] == 0xff)
		return "is a multicast address";
	/* IPv4-mapped (::ffff:0:0/96): the IPv4 rules of the embedded address. */
	if (memcmp(a->a, zero, 10) == 0 && a->a[10] == 0xff && a->a[11] == 0xff)
		return "is an IPv4-mapped address";
	return NULL;
}

int hostcheck_addr(const struct hostcheck_facts *h, const struct addr *a,
		   enum hostcheck_role role, bool shared_gateway, char *why, size_t sz)
{
	const char *s = special(a);

	if (!s && in_list(a, h->upstreams, h->n_upstreams))
		s = "is netd's upstream resolver";
	if (!s && in_list(a, h->routers, h->n_routers))
		s = "is the host's router (a default route's gateway)";
	if (!s && !(role == HOSTCHECK_GATEWAY && shared_gateway)) {
		for (size_t i = 0; i < h->n_local && !s; i++)
			if (addr_equal(a, &h->local[i].addr))
				s = "is one of the host's own addresses";
	}
	if (!s)
		return 0;
	snprintf(why, sz, "%s", s);
	return -EINVAL;
}

int hostcheck_ifname(const struct hostcheck_facts *h, const char *ifname, char *why, size_t sz)
{
	if (strcmp(ifname, "lo") == 0) {
		snprintf(why, sz, "is the loopback interface");
		return -EINVAL;
	}
	if (h->egress_ifname && h->egress_ifname[0] && strcmp(ifname, h->egress_ifname) == 0) {
		snprintf(why, sz, "is netd's egress interface");
		return -EINVAL;
	}
	return 0;
}
