/*
 * lifecycle - sandboxes come and go: create (netd's veth, in a netns netd
 * makes or one it is given, or with its peer left for the caller to move:
 * a Docker endpoint), attach (a chained CNI attachment: rules only),
 * delete, and retire (the same, for one whose interface vanished).
 * Order of every change is chosen so that a sandbox is never without
 * rules:
 *
 *   create: nf_tables chain/sets/elements first, then the interface;
 *   delete: the interface first, then the rules.
 *
 * A request is checked whole before anything is made: names, addresses
 * (hostcheck.h: never the host's own, its router, its resolver or
 * loopback) and interfaces (never the egress interface or lo).
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ifname.h"
#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "netd/trail/acct.h"
#include "netd/trail/audit.h"
#include "netd/trail/ctcut.h"
#include "netd/daemon/hostcheck.h"
#include "netd/fw.h"
#include "netd/link/kernel.h"
#include "netd/link/tap.h"
#include "netd/model/pinreg.h"
#include "netd/trail/trail.h"

void daemon_fw_view(const struct sandbox *sb, struct fw_sandbox *out)
{
	memset(out, 0, sizeof(*out));	/* fields added later default to off */
	out->name = sb->name;
	out->host_ifname = sb->host_ifname;
	out->addr4 = sb->addr4;
	out->addr6 = sb->addr6;
	out->ct_mark = ACCT_MARK(sb->slot);
	out->chained = sb->chained;
	out->mode = sb->mode;
	out->tap = sb->tap;
	memcpy(out->mac, sb->mac, sizeof(out->mac));
}

int daemon_sandbox_rules(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			 struct fw_sandbox *fv, char *err, size_t errsz)
{
	int r;

	daemon_fw_view(sb, fv);
	r = fw_sandbox_add(d->fw, fv, pol);
	if (r < 0) {
		snprintf(err, errsz, "nf_tables rejected the sandbox's rules: %s", strerror(-r));
		return r;
	}
	proxy_sandbox_reset(d->proxy, sb->name);	/* fresh: no pins */
	return 0;
}

/* Close @sb's gateway listeners: after its dns_local elements are gone. */
static void dns_direct_close(struct daemon *d, struct sandbox *sb)
{
	int *lid[2] = { &sb->dns_lid4, &sb->dns_lid6 };

	for (int f = 0; f < 2; f++) {
		if (!*lid[f])
			continue;
		proxy_listen_del(d->proxy, *lid[f]);
		*lid[f] = 0;
		if (d->n_dns_listeners)
			d->n_dns_listeners--;
	}
}

/*
 * The proxy's own UDP port 53 on @sb's gateway addresses, then their
 * dns_local elements (fw_sandbox_set_dns()): the sandbox's queries to its
 * resolver skip conntrack and the redirect.  Best effort: whatever does not
 * work out stays on the redirect, which catches all of its DNS anyway.
 * The interface must exist (the sockets are bound to it).
 */
void daemon_dns_direct(struct daemon *d, struct sandbox *sb)
{
	struct addr on[2] = { { 0 } };
	int *lid[2] = { &sb->dns_lid4, &sb->dns_lid6 };
	const struct addr *gw[2] = { &sb->gw4, &sb->gw6 };
	int r;

	/* A box opens no socket on the host's network (netd/daemon.h). */
	if (sb->chained || !d->proxy || !d->fw || d->box)
		return;
	/* Two sockets a sandbox; the rest of netd (API clients, DNS over TCP,
	 * c-ares, netlink, files) keeps DNS_DIRECT_FD_RESERVE descriptors. */
	if (d->n_dns_listeners + 2 + DNS_DIRECT_FD_RESERVE > d->fd_limit) {
		log_info("sandbox %s: DNS to its gateway stays on the redirect (%u descriptors "
			 "allowed, %u gateway sockets open)", sb->name, d->fd_limit,
			 d->n_dns_listeners);
		return;
	}
	for (int f = 0; f < 2; f++) {
		if (gw[f]->family != (f == 0 ? AF_INET : AF_INET6) || (f == 1 && !d->cfg.pool6_enabled))
			continue;
		r = proxy_listen_add(d->proxy, gw[f], sb->host_ifname);
		if (r > 0) {
			*lid[f] = r;
			on[f] = *gw[f];
			d->n_dns_listeners++;
		} else {
			log_info("sandbox %s: DNS to its gateway stays on the redirect (port 53 on %s: %s)",
				 sb->name, sb->host_ifname, strerror(-r));
		}
	}
	if (!on[0].family && !on[1].family)
		return;
	r = fw_sandbox_set_dns(d->fw, sb->name, &on[0], &on[1]);
	if (r < 0) {
		log_warn("sandbox %s: DNS to its gateway stays on the redirect: %s", sb->name,
			 strerror(-r));
		dns_direct_close(d, sb);
	}
}

void daemon_audit_sandbox(struct daemon *d, const struct sandbox *sb, const char *action)
{
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s}", "sandbox", sb->name, "policy", sb->policy,
				"action", action, "netns", sb->netns_path);

	/* Who it was for, on each lifecycle record (docs/audit.md): not on every conn/dns record. */
	if (rec)
		workload_json(&sb->workload, rec, false);
	/* Gone with its netns, and nothing follows it there: say so (health.c). */
	if (rec && strcmp(action, "vanished") == 0 && daemon_sandbox_by_path(sb)) {
		json_object_set_new(rec, "reattached", json_false());
		json_object_set_new(rec, "why", json_string(daemon_vanished_why()));
	}
	audit_write(d->audit, "sandbox", rec);
}

/*
 * Open @sb's netns (creating it if @create_netns) and check it may become a
 * sandbox: not netd's own, not another sandbox's, and (if attached) with
 * no interface but lo.  Return: the netns fd (caller closes); -errno with
 * @err filled (a created netns is left for the caller to delete).
 */
static int build_netns(struct daemon *d, struct sandbox *sb, bool create_netns, char *err,
		       size_t errsz)
{
	struct sandbox *other;
	struct stat own, target;
	char first[IFNAMSIZ];
	uint32_t cur = 0;
	int nsfd, r;

	if (create_netns) {
		r = d->lk->ops->netns_create(d->lk, sb->name);
		if (r < 0) {
			snprintf(err, errsz, "cannot create netns %s: %s", sb->name,
				 r == -EEXIST ? "a netns of that name exists (attach it with \"netns\")" :
						strerror(-r));
			return r;
		}
	}
	nsfd = d->lk->ops->netns_open(d->lk, sb->netns_path);
	if (nsfd < 0) {
		snprintf(err, errsz, "%s: %s", sb->netns_path,
			 nsfd == -EINVAL ? "not a network namespace" : strerror(-nsfd));
		return nsfd;
	}
	/* Attaching netd's own netns (--pid 1, say) would put the host under a policy chain. */
	if (fstat(nsfd, &target) < 0 || stat("/proc/self/ns/net", &own) < 0 ||
	    (own.st_dev == target.st_dev && own.st_ino == target.st_ino)) {
		snprintf(err, errsz, "%s is netd's own network namespace, not a sandbox's",
			 sb->netns_path);
		r = -EINVAL;
		goto fail;
	}
	sb->netns_dev = (uint64_t)target.st_dev;
	sb->netns_ino = (uint64_t)target.st_ino;
	if (create_netns)
		return nsfd;
	/* One sandbox per netns: two would give its processes both policies. */
	while ((other = sandbox_next(d->sandboxes, &cur))) {
		if (other != sb && other->netns_ino == sb->netns_ino &&
		    other->netns_dev == sb->netns_dev) {
			snprintf(err, errsz, "%s is already sandbox %s's network namespace",
				 sb->netns_path, other->name);
			r = -EBUSY;
			goto fail;
		}
	}
	/* netd's veth must be the only way out of the namespace. */
	r = d->lk->ops->netns_other_links(d->lk, nsfd, first, sizeof(first));
	if (r > 0) {
		snprintf(err, errsz,
			 "%s already has interface %s: traffic through it would bypass "
			 "netd (attach a namespace with only lo, e.g. docker run --network none)",
			 sb->netns_path, first);
		r = -EBUSY;
	} else if (r < 0) {
		snprintf(err, errsz, "%s: cannot list its interfaces: %s", sb->netns_path,
			 strerror(-r));
	}
	if (r == 0)
		return nsfd;
fail:
	close(nsfd);
	return r;
}

/* The veth's addresses for @sb into @v (pool /30 and /126, or an IPAM plugin's). */
static void build_veth_addrs(const struct sandbox *sb, struct link_veth *v)
{
	if (sb->own_addrs) {
		/*
		 * An IPAM plugin's addresses: the gateway sits on the host end
		 * as a point-to-point /32 (/128) to the sandbox's address, so
		 * many sandboxes of one IPAM range each get their own host
		 * route; the sandbox end keeps the range's prefix length.
		 */
		if (sb->addr4.family) {
			v->host4 = (struct prefix){ sb->gw4, 32 };
			v->peer4 = (struct prefix){ sb->addr4, sb->plen4 };
		}
		if (sb->addr6.family) {
			v->host6 = (struct prefix){ sb->gw6, 128 };
			v->peer6 = (struct prefix){ sb->addr6, sb->plen6 };
		}
	} else {
		v->host4 = (struct prefix){ sb->gw4, 30 };
		v->peer4 = (struct prefix){ sb->addr4, 30 };
		if (sb->addr6.family) {
			v->host6 = (struct prefix){ sb->gw6, 126 };
			v->peer6 = (struct prefix){ sb->addr6, 126 };
		}
	}
}

/*
 * Bring @sb up: rules first, then interface; roll back on error.
 * @create_netns: create /run/netns/NAME (else sb->netns_path must exist).
 */
static int sandbox_build(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			 bool create_netns, char *err, size_t errsz)
{
	struct fw_sandbox fv;
	struct link_veth v = { 0 };
	int nsfd, r;

	nsfd = build_netns(d, sb, create_netns, err, errsz);
	if (nsfd < 0) {
		r = nsfd;
		goto fail_ns;
	}
	/* Rules before the interface: the sandbox's first packet is already under policy. */
	r = daemon_sandbox_rules(d, sb, pol, &fv, err, errsz);
	if (r < 0)
		goto fail_ns;
	v.host_ifname = sb->host_ifname;
	v.peer_ifname = sb->peer_ifname;
	v.netns_fd = nsfd;
	build_veth_addrs(sb, &v);
	r = d->lk->ops->veth_setup(d->lk, &v);
	if (r == -EACCES && sb->addr6.family) {
		/*
		 * The netns has IPv6 disabled (Docker's --network none does
		 * that): IPv4 only.  The rules are re-made without the IPv6
		 * address first, so no sandbox_src6 element exists and every
		 * IPv6 packet from the interface is dropped as spoofed.
		 */
		log_info("sandbox %s: IPv6 is disabled in %s; IPv4 only", sb->name,
			 sb->netns_path);
		fw_sandbox_del(d->fw, &fv);
		memset(&sb->addr6, 0, sizeof(sb->addr6));
		memset(&sb->gw6, 0, sizeof(sb->gw6));
		memset(&v.host6, 0, sizeof(v.host6));
		memset(&v.peer6, 0, sizeof(v.peer6));
		r = daemon_sandbox_rules(d, sb, pol, &fv, err, errsz);
		if (r < 0)
			goto fail_ns;
		r = d->lk->ops->veth_setup(d->lk, &v);
	}
	if (r < 0) {
		snprintf(err, errsz, "cannot set up interfaces %s/%s: %s", sb->host_ifname,
			 sb->peer_ifname,
			 r == -EEXIST ? "an interface of that name, or a default route, already exists "
					"in the namespace" : strerror(-r));
		fw_sandbox_del(d->fw, &fv);
		goto fail_ns;
	}
	close(nsfd);
	daemon_dns_direct(d, sb);
	return 0;
fail_ns:
	if (nsfd >= 0)
		close(nsfd);
	if (create_netns)
		d->lk->ops->netns_delete(d->lk, sb->name);
	return r;
}

/*
 * Bring up a kind "peer" sandbox (a Docker endpoint): rules first, then the
 * veth whose peer stays in netd's netns, down and bare, for the caller to
 * move (link_veth.peer_here).  netd opens no netns: the one named is where
 * the peer will go (Docker makes it after the driver's Join), so the
 * one-sandbox-per-netns and only-lo checks of an attach cannot be made.
 */
static int sandbox_build_peer(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			      const struct sandbox_request *req, char *err, size_t errsz)
{
	struct fw_sandbox fv;
	struct link_veth v = { 0 };
	int r;

	if (req->mac && tap_mac_parse(req->mac, sb->mac) < 0) {
		snprintf(err, errsz, "\"mac\" must be a unicast MAC, xx:xx:xx:xx:xx:xx");
		return -EINVAL;
	}
	if (!req->mac)
		tap_mac_from_name(sb->name, sb->mac);	/* stable, locally administered */
	if (!req->ifname)
		snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "ndp%05x", sb->slot);
	sb->peer = true;
	r = daemon_sandbox_rules(d, sb, pol, &fv, err, errsz);
	if (r < 0)
		return r;
	v.host_ifname = sb->host_ifname;
	v.peer_ifname = sb->peer_ifname;
	v.netns_fd = -1;
	v.peer_here = true;
	v.peer_mac = sb->mac;
	build_veth_addrs(sb, &v);
	r = d->lk->ops->veth_setup(d->lk, &v);
	if (r < 0) {
		snprintf(err, errsz, "cannot make interfaces %s/%s: %s", sb->host_ifname,
			 sb->peer_ifname, r == -EEXIST ? "an interface of that name exists" :
			 strerror(-r));
		fw_sandbox_del(d->fw, &fv);
		return r;
	}
	daemon_dns_direct(d, sb);
	return 0;
}

/* The host's facts for hostcheck.h, gathered for one request. */
struct host_facts {
	struct hostcheck_facts h;
	struct prefix *local;
	struct addr routers[16];
	struct addr upstreams[CONFIG_MAX_UPSTREAM];
};

static void host_facts_done(struct host_facts *f)
{
	free(f->local);
	f->local = NULL;
}

/*
 * The host's addresses (however many), routers
 * and netd's upstreams and egress interface.  Return: 0; -errno (@err filled).
 */
static int host_facts_get(struct daemon *d, struct host_facts *f, char *err, size_t errsz)
{
	int n, r;

	memset(f, 0, sizeof(*f));
	n = d->lk->ops->local_addrs(d->lk, &f->local);	/* sized from what the host has */
	if (n < 0) {
		r = n;
		goto fail;
	}
	f->h.local = f->local;
	f->h.n_local = (size_t)n;
	n = d->lk->ops->default_gateways(d->lk, f->routers, sizeof(f->routers) / sizeof(f->routers[0]));
	if (n < 0) {
		r = n;
		goto fail;
	}
	f->h.routers = f->routers;
	f->h.n_routers = (size_t)n;
	for (unsigned int i = 0; i < d->cfg.n_upstream && i < CONFIG_MAX_UPSTREAM; i++)
		f->upstreams[f->h.n_upstreams++] = d->cfg.upstream[i].addr;
	f->h.upstreams = f->upstreams;
	f->h.egress_ifname = d->egress_ifname;
	return 0;
fail:
	snprintf(err, errsz, "cannot list the host's addresses and routes to check the request: %s",
		 strerror(-r));
	host_facts_done(f);
	return r;
}

/*
 * May the request's @what (e.g. "attach: ipv4") be @a in @role?  Besides
 * the host (hostcheck_addr()), never another sandbox's own address; an
 * IPAM gateway may be shared with other interface-mode sandboxes.
 * Return: 0; -EINVAL (@err filled).
 */
static int check_addr(struct daemon *d, const struct hostcheck_facts *h, const char *what,
		      const struct addr *a, enum hostcheck_role role, char *err, size_t errsz)
{
	const struct sandbox *owner, *other;
	char why[128], buf[ADDR_STRLEN];
	bool shared = false;
	uint32_t cur = 0;

	if (!a->family)
		return 0;
	owner = sandbox_by_addr(d->sandboxes, a);
	while (role == HOSTCHECK_GATEWAY && !shared && (other = sandbox_next(d->sandboxes, &cur)))
		shared = !other->chained && (addr_equal(&other->gw4, a) || addr_equal(&other->gw6, a));
	if (role == HOSTCHECK_GATEWAY && owner) {
		snprintf(err, errsz, "%s %s is sandbox %s's address", what,
			 addr_format(a, buf, sizeof(buf)), owner->name);
		return -EINVAL;
	}
	if (hostcheck_addr(h, a, role, shared, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "%s %s %s", what, addr_format(a, buf, sizeof(buf)), why);
		return -EINVAL;
	}
	return 0;
}

/*
 * Bind a chained CNI attachment: the bridge port @req->attach_host_ifname
 * (made by the plugin before netd-cni, e.g. `bridge`) and the container's
 * own addresses.  Rules only: netd creates no interface and no netns.
 */
static int sandbox_attach(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			  const struct sandbox_request *req, char *err, size_t errsz)
{
	const char *host = req->attach_host_ifname;
	struct addr a4 = { 0 }, a6 = { 0 };
	struct host_facts hf;
	char why[128];
	struct fw_sandbox fv;
	struct sandbox *other;
	uint32_t cur = 0;
	char q[64];
	int r;

	if (!ifname_valid(host)) {
		snprintf(err, errsz, "attach: invalid host_ifname \"%s\"",
			 log_quote(host, strlen(host), q, sizeof(q)));
		return -EINVAL;
	}
	if ((req->attach_ipv4 && (addr_parse(req->attach_ipv4, &a4) < 0 || a4.family != AF_INET)) ||
	    (req->attach_ipv6 && (addr_parse(req->attach_ipv6, &a6) < 0 || a6.family != AF_INET6))) {
		snprintf(err, errsz, "attach: ipv4/ipv6 must be a bare IPv4/IPv6 address");
		return -EINVAL;
	}
	r = host_facts_get(d, &hf, err, errsz);
	if (r < 0)
		return r;
	if (hostcheck_ifname(&hf.h, host, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "attach: host_ifname %s %s", host, why);
		r = -EINVAL;
	} else if ((r = check_addr(d, &hf.h, "attach: ipv4", &a4, HOSTCHECK_SANDBOX, err,
				   errsz)) == 0) {
		r = check_addr(d, &hf.h, "attach: ipv6", &a6, HOSTCHECK_SANDBOX, err, errsz);
	}
	host_facts_done(&hf);
	if (r < 0)
		return r;
	r = d->lk->ops->exists(d->lk, host);
	if (r != 1) {
		snprintf(err, errsz, "attach: no interface %s in netd's network namespace", host);
		return r < 0 ? r : -ENOENT;
	}
	while ((other = sandbox_next(d->sandboxes, &cur)))
		if (strcmp(other->host_ifname, host) == 0) {
			snprintf(err, errsz, "attach: %s is already sandbox %s's interface", host,
				 other->name);
			return -EBUSY;
		}
	r = sandbox_set_addrs(d->sandboxes, sb, &a4, &a6);
	if (r < 0) {
		snprintf(err, errsz, "attach: %s",
			 r == -EADDRINUSE ? "another sandbox has that address" :
			 !a4.family && !a6.family ? "ipv4 or ipv6 is required" :
			 "the address is inside netd's own pool");
		return r == -EADDRINUSE ? -EBUSY : r;
	}
	snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s", host);
	sb->chained = true;
	return daemon_sandbox_rules(d, sb, pol, &fv, err, errsz);
}

/* "ADDR/PLEN" (host bits kept) of @family into @a/@plen; PLEN 1..(bits-1). */
static int ifaddr_parse(const char *s, int family, struct addr *a, uint8_t *plen)
{
	char buf[PREFIX_STRLEN + 1], *slash, *end;
	unsigned long n;

	if (strlen(s) > PREFIX_STRLEN)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	errno = 0;
	n = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || addr_parse(buf, a) < 0 || a->family != family ||
	    n == 0 || n >= addr_len(family) * 8)
		return -EINVAL;
	*plen = (uint8_t)n;
	return 0;
}

/*
 * An interface-mode sandbox whose addresses an IPAM plugin chose
 * (netd-cni delegating, CNI spec §4): @req->addr_* in place of the pool's.
 * The gateway must lie in the address's prefix (the sandbox's default
 * route goes through it on-link).
 */
static int sandbox_ipam_addrs(struct daemon *d, struct sandbox *sb,
			      const struct sandbox_request *req, char *err, size_t errsz)
{
	struct addr a4 = { 0 }, a6 = { 0 }, g4 = { 0 }, g6 = { 0 };
	uint8_t p4 = 0, p6 = 0;
	struct host_facts hf;
	int r;

	if ((req->addr_ipv4 && (ifaddr_parse(req->addr_ipv4, AF_INET, &a4, &p4) < 0 ||
				!req->addr_gateway4 || addr_parse(req->addr_gateway4, &g4) < 0 ||
				g4.family != AF_INET ||
				!prefix_contains(&(struct prefix){ a4, p4 }, &g4) ||
				addr_equal(&a4, &g4))) ||
	    (req->addr_ipv6 && (ifaddr_parse(req->addr_ipv6, AF_INET6, &a6, &p6) < 0 ||
				!req->addr_gateway6 || addr_parse(req->addr_gateway6, &g6) < 0 ||
				g6.family != AF_INET6 ||
				!prefix_contains(&(struct prefix){ a6, p6 }, &g6) ||
				addr_equal(&a6, &g6)))) {
		snprintf(err, errsz, "addresses: ipv4/ipv6 must be ADDR/PLEN with a different "
			 "gateway4/gateway6 inside that prefix");
		return -EINVAL;
	}
	/* IPv6 off in netd's config: the sandbox runs IPv4 only, as pool sandboxes do. */
	if (!sb->addr6.family)
		memset(&a6, 0, sizeof(a6));
	if (!a4.family && !a6.family) {
		snprintf(err, errsz, "addresses: only IPv6 given, and IPv6 is disabled in netd");
		return -EINVAL;
	}
	r = host_facts_get(d, &hf, err, errsz);
	if (r < 0)
		return r;
	if ((r = check_addr(d, &hf.h, "addresses: ipv4", &a4, HOSTCHECK_SANDBOX, err, errsz)) == 0 &&
	    (r = check_addr(d, &hf.h, "addresses: gateway4", a4.family ? &g4 : &a4,
			    HOSTCHECK_GATEWAY, err, errsz)) == 0 &&
	    (r = check_addr(d, &hf.h, "addresses: ipv6", &a6, HOSTCHECK_SANDBOX, err, errsz)) == 0)
		r = check_addr(d, &hf.h, "addresses: gateway6", a6.family ? &g6 : &a6,
			       HOSTCHECK_GATEWAY, err, errsz);
	host_facts_done(&hf);
	if (r < 0)
		return r;
	r = sandbox_set_addrs(d->sandboxes, sb, &a4, &a6);
	if (r < 0) {
		snprintf(err, errsz, "addresses: %s",
			 r == -EADDRINUSE ? "another sandbox has that address" :
					    "the address is inside netd's own pool");
		return r == -EADDRINUSE ? -EBUSY : r;
	}
	sb->gw4 = a4.family ? g4 : (struct addr){ 0 };
	sb->gw6 = a6.family ? g6 : (struct addr){ 0 };
	sb->plen4 = p4;
	sb->plen6 = p6;
	return 0;
}

int daemon_sandbox_create(struct daemon *d, const struct sandbox_request *req,
			  struct sandbox **ret, char *err, size_t errsz)
{
	const struct policy *pol;
	struct sandbox *sb;
	char q[160];
	int r;

	if (!policy_name_valid(req->name)) {
		snprintf(err, errsz,
			 "invalid sandbox name \"%s\": use 1-64 of [A-Za-z0-9_.-], starting alphanumeric",
			 log_quote(req->name, strlen(req->name), q, sizeof(q)));
		return -EINVAL;
	}
	pol = daemon_policy_find(d, req->policy);
	if (!pol) {
		snprintf(err, errsz, "unknown policy \"%s\": not among those loaded from policy_dir (netd policy list)",
			 log_quote(req->policy, strlen(req->policy), q, sizeof(q)));
		return -ENOENT;
	}
	if (req->ifname && !ifname_valid(req->ifname)) {
		snprintf(err, errsz, "invalid interface name \"%s\"",
			 log_quote(req->ifname, strlen(req->ifname), q, sizeof(q)));
		return -EINVAL;
	}
	if (req->netns && (req->netns[0] != '/' || strlen(req->netns) >= PATH_MAX)) {
		snprintf(err, errsz, "netns must be an absolute path such as /proc/PID/ns/net");
		return -EINVAL;
	}
	r = sandbox_alloc(d->sandboxes, req->name, -1, &sb);
	if (r < 0) {
		snprintf(err, errsz, "%s", r == -EEXIST ? "a sandbox of that name exists" :
					 r == -ENOSPC ? "the address pool is full" :
							strerror(-r));
		return r;
	}
	snprintf(sb->policy, sizeof(sb->policy), "%s", pol->name);
	sb->workload = req->workload;	/* checked by ctlreq_sandbox() */
	sb->bw_egress_bps = req->bw_egress_bps;	/* checked by ctlreq_sandbox() too */
	sb->bw_ingress_bps = req->bw_ingress_bps;
	if (daemon_budget_init(d, sb, pol) < 0) {	/* its rules' byte budgets, from 0 */
		snprintf(err, errsz, "out of memory");
		sandbox_release(d->sandboxes, sb);
		return -ENOMEM;
	}
	/* ctlreq_sandbox() took only "audit" or "enforce". */
	if (req->mode)
		sb->mode = strcmp(req->mode, "audit") == 0 ? FW_MODE_AUDIT : FW_MODE_ENFORCE;
	if (req->ifname)
		snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "%s", req->ifname);
	if (req->netns || req->attach_host_ifname || req->peer) {
		snprintf(sb->netns_path, sizeof(sb->netns_path), "%s", req->netns ? req->netns : "");
		sb->netns_owned = false;
	} else {
		snprintf(sb->netns_path, sizeof(sb->netns_path), NETNS_RUN_DIR "/%s", sb->name);
		sb->netns_owned = true;
	}
	sb->created = time(NULL);
	if (!req->tap && !req->attach_host_ifname && (req->addr_ipv4 || req->addr_ipv6)) {
		r = sandbox_ipam_addrs(d, sb, req, err, errsz);
		if (r < 0) {
			sandbox_release(d->sandboxes, sb);
			return r;
		}
	}
	r = req->tap ? daemon_tap_build(d, sb, pol, req, err, errsz) :
	    req->attach_host_ifname ? sandbox_attach(d, sb, pol, req, err, errsz) :
	    req->peer ? sandbox_build_peer(d, sb, pol, req, err, errsz) :
			sandbox_build(d, sb, pol, sb->netns_owned, err, errsz);
	if (r < 0) {
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	/*
	 * Its rates, on the interface that exists now (netd made it a moment
	 * ago and the create has not returned: nothing has used it).  A limit
	 * that cannot be put on fails the create: a sandbox never runs above
	 * the rate its policy says.
	 */
	r = daemon_bw_apply(d, sb, false, err, errsz);
	if (r < 0) {
		daemon_sandbox_teardown(d, sb);
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	/* For `ip netns exec` (named) and `netd exec` (any): the proxy's address. */
	r = sb->chained || sb->tap ? 0 : daemon_resolv_conf_write(d, sb);
	if (r < 0)
		log_warn("sandbox %s: cannot write resolv.conf: %s", sb->name, strerror(-r));
	/*
	 * Without its state file a restarted netd would not know this sandbox
	 * and could not enforce it: fail the create rather than keep a
	 * sandbox that a restart would orphan.
	 */
	r = daemon_state_save(d, sb);
	if (r < 0) {
		snprintf(err, errsz, "cannot save the sandbox's state in %s: %s", d->cfg.state_dir,
			 strerror(-r));
		daemon_sandbox_teardown(d, sb);
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	/* Its pins are made under its policy's rules: a restart must know which (pdigest.c). */
	if ((r = daemon_pdigest_save(d, daemon_policy_find(d, sb->policy))) < 0)
		log_warn("policy %s: cannot save its digest: %s (a restart will drop its sandboxes' pins)",
			 sb->policy, strerror(-r));
	sandbox_insert(d->sandboxes, sb);
	daemon_vanished_forget(d, sb->name);	/* re-attached: no longer a warning */
	log_info("sandbox %s created: policy %s, %s, host interface %s", sb->name, sb->policy,
		 sb->tap ? "tap" : sb->netns_path, sb->host_ifname);
	daemon_audit_sandbox(d, sb, "create");
	*ret = sb;
	return 0;
}

/* Tear down @sb's kernel state: interface first, then the rules. */
void daemon_sandbox_teardown(struct daemon *d, struct sandbox *sb)
{
	struct fw_sandbox fv;
	int r;

	/* A chained attachment's interface belongs to the plugin before netd-cni. */
	r = sb->chained ? 0 : d->lk->ops->del(d->lk, sb->host_ifname);
	if (r < 0)
		log_warn("sandbox %s: cannot delete %s: %s", sb->name, sb->host_ifname,
			 strerror(-r));
	daemon_bw_remove(d, sb);	/* its IFB, after the redirect to it went with the interface */
	daemon_fw_view(sb, &fv);
	/* At start-up (no fw yet) the reconcile batch drops the rules. */
	r = d->fw ? fw_sandbox_del(d->fw, &fv) : 0;
	if (r < 0)
		log_warn("sandbox %s: cannot delete rules: %s", sb->name, strerror(-r));
	dns_direct_close(d, sb);	/* after its dns_local elements went */
	/*
	 * Its flows die with it: a conntrack entry left behind would let the
	 * next sandbox given this address ride "ct established" past its own
	 * policy.
	 */
	for (int f = 0; f < 2; f++) {
		const struct addr *a = f == 0 ? &sb->addr4 : &sb->addr6;

		if (a->family && !d->box && (r = ctcut_source(a)) < 0)
			log_warn("sandbox %s: cannot flush its conntrack entries: %s", sb->name,
				 r == -EBUSY ? "the kernel refuses to delete those offloaded to the "
				 "flowtable (ctnetlink before Linux 6.4): set dataplane.flowtable: false" :
				 strerror(-r));
	}
	proxy_sandbox_reset(d->proxy, sb->name);
	if (sb->netns_owned) {
		r = d->lk->ops->netns_delete(d->lk, sb->name);
		if (r < 0)
			log_warn("sandbox %s: cannot delete netns: %s", sb->name, strerror(-r));
	}
	daemon_resolv_conf_remove(d, sb->name);
	daemon_state_remove(d, sb->name);
}

int daemon_sandbox_retire(struct daemon *d, const char *name, const char *action)
{
	struct sandbox *sb = sandbox_find(d->sandboxes, name);

	if (!sb)
		return -ENOENT;
	daemon_sandbox_teardown(d, sb);
	log_info("sandbox %s %s", sb->name, strcmp(action, "delete") == 0 ? "deleted" : action);
	daemon_audit_sandbox(d, sb, action);
	trail_sandbox_gone(d->trail, sb);
	pinreg_forget(d->pins, sb->name);	/* after the trail's last records named it */
	sandbox_remove(d->sandboxes, sb);
	return 0;
}
