/*
 * netns.h - what netd-cni looks at in the container's network namespace
 * and in prevResult: a link's MAC, the peer of CNI_IFNAME (for CHECK), and
 * the chained-mode view of prevResult (CNI spec 1.0 "Chained plugins").
 * Reads only; never changes a namespace.
 */
#ifndef NETD_CNI_NETNS_H
#define NETD_CNI_NETNS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cni-plugin/cni.h"

/*
 * link_mac() - the MAC of @ifname in the caller's netns, "aa:bb:cc:dd:ee:ff",
 * into @buf (@sz >= 18).  Return: 0; -errno (SIOCGIFHWADDR).
 */
int link_mac(const char *ifname, char *buf, size_t sz);

/*
 * in_netns() - run @fn(@arg) in the netns at @path (a forked child that
 * setns()es; the caller's namespaces are untouched; @arg is shared memory
 * for the result).  Return: @fn's return; -errno if the netns cannot be
 * entered.
 */
int in_netns(const char *path, int (*fn)(void *), void *arg);

/* What probe_peer() learns of ifname in the container's netns. */
struct peer_probe {
	const char *ifname;
	const char *want4;	/* address that must be on it, or NULL */
	char mac[18];
	bool has_mac, has_addr;
};

/* probe_peer() - for in_netns(): fill the struct peer_probe at @arg.  Return: 0; -errno. */
int probe_peer(void *arg);

/*
 * What a chained ADD needs from prevResult (CNI spec §4 "Chained plugins"):
 * the host-side interface (no "sandbox"; if several, e.g. bridge's bridge
 * and veth, the one whose ifindex is the IFLA_LINK peer of CNI_IFNAME in
 * the container's netns), the container's first IPv4/IPv6 address on
 * CNI_IFNAME and their gateways.
 */
struct chained_view {
	const char *host_ifname;
	char ipv4[INET_ADDRSTRLEN], ipv6[INET6_ADDRSTRLEN];
	const char *gateway4, *gateway6;
};

/*
 * chained_view() - the host-side interface and the container's addresses
 * a chained ADD needs, from @c's prevResult (@ifn: CNI_IFNAME, @ns:
 * CNI_NETNS, looked into when several host-side interfaces are listed).
 * Pointers in @v borrow from @c->prev_result.
 * Return: 0; -EINVAL with @err filled (CNI error 7, Invalid Configuration).
 */
int chained_view(const struct cni_conf *c, const char *ifn, const char *ns,
		 struct chained_view *v, struct cni_err *err);

/* cni_json_str() - the string member @key of @o, or NULL. */
const char *cni_json_str(json_t *o, const char *key);

#endif
