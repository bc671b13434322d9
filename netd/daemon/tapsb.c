/*
 * tapsb - sandboxes that are microVMs: the sandbox's interface is a
 * persistent tap netd creates in its own netns (netd/link/tap.c) for the VMM to
 * open, instead of a veth into a netns.  Everything else is a veth
 * sandbox's: the same chain, sets, pins, redirect, accounting and quota
 * (fw.h: the tap is in sandbox_ifs like a veth), plus the guest's MAC
 * (tap_mac, table arp).  Order, as for a veth: rules first, then the
 * tap, then its addresses and link up.
 *
 * Also the guest's configuration as the API shows it, and the restart
 * half: a recorded tap that is gone (a reboot) is made again.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ifname.h"
#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "netd/fw.h"
#include "netd/link/kernel.h"

/* The MTU of @ifname in netd's netns, or 0 if it cannot be read. */
static unsigned link_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd, mtu = 0;

	if (!ifname[0] || strlen(ifname) >= IFNAMSIZ)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu > 0 ? (unsigned)mtu : 0;
}

/* The tap's own spec from @sb (what was asked for at create, or restored). */
static struct tap_spec spec_of(const struct sandbox *sb)
{
	return (struct tap_spec){ .ifname = sb->host_ifname, .owner = sb->tap_owner,
				  .group = sb->tap_group == UINT32_MAX ? TAP_NO_GROUP : sb->tap_group,
				  .queues = sb->tap_queues, .mtu = sb->mtu };
}

/* The gateway addresses on the tap: the slot's /30 and /126, as for a veth. */
static int configure(struct daemon *d, const struct sandbox *sb)
{
	struct prefix h4 = { 0 }, h6 = { 0 };

	if (sb->gw4.family)
		h4 = (struct prefix){ sb->gw4, 30 };
	if (sb->gw6.family)
		h6 = (struct prefix){ sb->gw6, 126 };
	return d->lk->ops->tap_configure(d->lk, sb->host_ifname, &h4, &h6);
}

/* Fill @sb's tap fields from @req; Return: 0; -errno with @err filled. */
static int tap_fields(struct daemon *d, struct sandbox *sb, const struct sandbox_request *req,
		      char *err, size_t errsz)
{
	struct sandbox *other;
	uint32_t cur = 0;
	char q[64];
	int r;

	if (req->tap_name) {
		if (!ifname_valid(req->tap_name) || strcmp(req->tap_name, "lo") == 0 ||
		    strcmp(req->tap_name, d->egress_ifname) == 0) {
			snprintf(err, errsz, "invalid tap name \"%s\"",
				 log_quote(req->tap_name, strlen(req->tap_name), q, sizeof(q)));
			return -EINVAL;
		}
		snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s", req->tap_name);
	} else if ((r = tap_ifname(sb->slot, sb->host_ifname, sizeof(sb->host_ifname))) < 0) {
		snprintf(err, errsz, "no tap name for slot %u", sb->slot);
		return r;
	}
	r = tap_mtu(req->tap_mtu, link_mtu(d->egress_ifname));
	if (r < 0) {
		snprintf(err, errsz, "tap MTU %u is outside %d..%d", req->tap_mtu, TAP_MTU_MIN,
			 TAP_MTU_MAX);
		return r;
	}
	sb->tap = true;
	sb->mtu = (uint16_t)r;
	sb->tap_owner = req->tap_owner;
	sb->tap_group = req->tap_group_set ? req->tap_group : UINT32_MAX;
	sb->tap_queues = (uint16_t)(req->tap_queues ? req->tap_queues : 1);
	snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "eth0");
	sb->netns_path[0] = '\0';
	sb->netns_owned = false;
	tap_mac_from_name(sb->name, sb->mac);
	while ((other = sandbox_next(d->sandboxes, &cur))) {
		if (strcmp(other->host_ifname, sb->host_ifname) == 0) {
			snprintf(err, errsz, "%s is already sandbox %s's interface", sb->host_ifname,
				 other->name);
			return -EBUSY;
		}
		/* 46 hashed bits: never in practice, but two guests must not share one. */
		if (other->tap && memcmp(other->mac, sb->mac, sizeof(sb->mac)) == 0) {
			snprintf(err, errsz, "the MAC derived from this name is sandbox %s's; "
				 "choose another name", other->name);
			return -EEXIST;
		}
	}
	return 0;
}

int daemon_tap_build(struct daemon *d, struct sandbox *sb, const struct policy *pol,
		     const struct sandbox_request *req, char *err, size_t errsz)
{
	struct fw_sandbox fv;
	struct tap_spec s;
	int r;

	if (req->netns || req->ifname || req->attach_host_ifname || req->addr_ipv4 ||
	    req->addr_ipv6) {
		snprintf(err, errsz, "a tap sandbox takes no netns, ifname, attach or addresses");
		return -EINVAL;
	}
	r = tap_fields(d, sb, req, err, errsz);
	if (r < 0)
		return r;
	/* Rules before the tap: the guest's first frame is already under policy. */
	r = daemon_sandbox_rules(d, sb, pol, &fv, err, errsz);
	if (r < 0)
		return r;
	s = spec_of(sb);
	r = d->lk->ops->tap_create(d->lk, &s);
	if (r < 0) {
		snprintf(err, errsz, "cannot create tap %s: %s", sb->host_ifname,
			 r == -EEXIST ? "an interface of that name exists" : strerror(-r));
		fw_sandbox_del(d->fw, &fv);
		return r == -EEXIST ? -EBUSY : r;
	}
	r = configure(d, sb);
	if (r < 0) {
		snprintf(err, errsz, "cannot configure tap %s: %s", sb->host_ifname, strerror(-r));
		d->lk->ops->tap_delete(d->lk, sb->host_ifname);
		fw_sandbox_del(d->fw, &fv);
		return r;
	}
	daemon_dns_direct(d, sb);
	return 0;
}

int daemon_tap_restore(struct daemon *d, struct sandbox *sb)
{
	struct tap_spec s = spec_of(sb);
	struct tap_info ti;
	int r;

	(void)d;
	tap_mac_from_name(sb->name, sb->mac);
	r = d->lk->ops->tap_query(d->lk, sb->host_ifname, &ti);
	if (r == 0 && ti.is_tap && ti.persist && ti.has_owner && ti.owner == sb->tap_owner)
		return 0;
	if (r == 0 || r == -EMEDIUMTYPE) {
		/* Someone else's interface of that name now: never take it over. */
		log_err("sandbox %s: %s is no longer netd's tap (owner, kind or persistence changed)",
			sb->name, sb->host_ifname);
		return -EBUSY;
	}
	if (r != -ENODEV)
		return r;
	/* Gone (a reboot): made again, down, until the rules are back (daemon_tap_up()). */
	r = d->lk->ops->tap_create(d->lk, &s);
	if (r == 0)
		log_info("sandbox %s: tap %s was gone; created it again (owner %u)", sb->name,
			 sb->host_ifname, sb->tap_owner);
	return r;
}

void daemon_tap_up(struct daemon *d, struct sandbox *sb)
{
	int r = configure(d, sb);

	(void)d;
	if (r < 0)
		log_err("sandbox %s: cannot configure tap %s: %s", sb->name, sb->host_ifname,
			strerror(-r));
}

/* The guest's configuration, the way a VMM and a guest kernel take it. */
void daemon_tap_json(const struct sandbox *sb, json_t *o)
{
	char mac[TAP_MAC_STRLEN], iparg[TAP_IP_ARG_MAX];
	json_t *dns = json_array();

	tap_mac_format(sb->mac, mac);
	if (!sb->addr4.family || tap_kernel_ip_arg(&sb->addr4, &sb->gw4, 30, iparg, sizeof(iparg)) < 0)
		iparg[0] = '\0';
	if (dns && sb->gw4.family)
		json_array_append_new(dns, daemon_json_addr(&sb->gw4));
	if (dns && sb->gw6.family)
		json_array_append_new(dns, daemon_json_addr(&sb->gw6));
	json_object_update_new(o, json_pack("{s:s, s:s, s:I, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, "
					    "s:o, s:s, s:I, s:s?}",
					    "kind", "tap", "tap", sb->host_ifname,
					    "tap_owner", (json_int_t)sb->tap_owner,
					    "tap_group", sb->tap_group == UINT32_MAX ? json_null() :
					    json_integer(sb->tap_group),
					    "tap_queues", (json_int_t)sb->tap_queues,
					    "guest_ipv4", daemon_json_addr(&sb->addr4),
					    "gateway_ipv4", daemon_json_addr(&sb->gw4),
					    "prefix_ipv4", sb->addr4.family ? json_integer(30) : json_null(),
					    "guest_ipv6", daemon_json_addr(&sb->addr6),
					    "gateway_ipv6", daemon_json_addr(&sb->gw6),
					    "prefix_ipv6", sb->addr6.family ? json_integer(126) : json_null(),
					    "dns", dns ? dns : json_array(), "mac", mac,
					    "mtu", (json_int_t)sb->mtu,
					    "kernel_ip_arg", iparg[0] ? iparg : NULL));
}
