/*
 * special - the never-pin table (see special.h) and lookups over it.
 *
 * One table, in one file.  Each row names its source: the RFC that assigned
 * the block (as the IANA registries cite it) or the provider's document for
 * a metadata / host-agent address.  A row more specific than another (a
 * metadata address inside 169.254.0.0/16) is there to name the address in
 * logs and warnings; special_find() reports the most specific row.
 *
 * Not here: the host's own addresses and the sandbox pools (runtime data the
 * daemon appends), and ISATAP interface identifiers (RFC 5214): they sit in
 * ordinary global prefixes and reach an IPv4 host only through an ISATAP
 * router of that prefix, never through this host.
 */
#include "common/special.h"

#include <string.h>
#include <sys/socket.h>

/* The IANA registries: https://www.iana.org/assignments/iana-ipv4-special-registry
 * and .../iana-ipv6-special-registry (RFC 6890 section 2.2, RFC 8190). */
const struct special_entry special_table[] = {
	/* ---- IPv4 special-purpose registry ---- */
	{ "0.0.0.0/8", "\"this network\"", "RFC 791 3.2", 0 },
	{ "0.0.0.0/32", "\"this host on this network\"", "RFC 1122 3.2.1.3", 0 },
	{ "10.0.0.0/8", "private-use", "RFC 1918", 0 },
	{ "100.64.0.0/10", "shared address space (CGNAT)", "RFC 6598", 0 },
	{ "127.0.0.0/8", "loopback", "RFC 1122 3.2.1.3", 0 },
	{ "169.254.0.0/16", "link-local", "RFC 3927", 0 },
	{ "172.16.0.0/12", "private-use", "RFC 1918", 0 },
	{ "192.0.0.0/24", "IETF protocol assignments", "RFC 6890 2.1", 0 },
	{ "192.0.0.0/29", "IPv4 service continuity prefix (DS-Lite)", "RFC 7335", 0 },
	{ "192.0.0.8/32", "IPv4 dummy address", "RFC 7600", 0 },
	{ "192.0.0.9/32", "Port Control Protocol anycast", "RFC 7723", 0 },
	{ "192.0.0.10/32", "TURN anycast", "RFC 8155", 0 },
	{ "192.0.0.170/32", "NAT64/DNS64 discovery", "RFC 8880, RFC 7050 2.2", 0 },
	{ "192.0.0.171/32", "NAT64/DNS64 discovery", "RFC 8880, RFC 7050 2.2", 0 },
	{ "192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737", SPECIAL_DOC },
	{ "192.31.196.0/24", "AS112-v4", "RFC 7535", 0 },
	{ "192.52.193.0/24", "AMT", "RFC 7450", 0 },
	{ "192.88.99.0/24", "6to4 relay anycast (deprecated)", "RFC 7526", 0 },
	{ "192.88.99.2/32", "6a44 relay anycast", "RFC 6751", 0 },
	{ "192.168.0.0/16", "private-use", "RFC 1918", 0 },
	{ "192.175.48.0/24", "direct delegation AS112 service", "RFC 7534", 0 },
	{ "198.18.0.0/15", "benchmarking", "RFC 2544", 0 },
	{ "198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737", SPECIAL_DOC },
	{ "203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737", SPECIAL_DOC },
	{ "240.0.0.0/4", "reserved", "RFC 1112 4", 0 },
	{ "255.255.255.255/32", "limited broadcast", "RFC 8190, RFC 919 7", 0 },
	/* ---- IPv4, outside that registry ---- */
	{ "224.0.0.0/4", "multicast", "RFC 5771", 0 },

	/* ---- IPv4 cloud metadata and host agents ---- */
	{ "169.254.169.254/32",
	  "instance metadata service (AWS, Azure, GCP metadata.google.internal, Oracle, "
	  "DigitalOcean, Hetzner, OpenStack, Linode, IBM Cloud, Vultr, Exoscale)",
	  "AWS EC2 User Guide \"Instance metadata and user data\"; Azure \"Azure Instance "
	  "Metadata Service\"; Google Compute Engine \"About VM metadata\"; OCI \"Getting "
	  "Instance Metadata\"; DigitalOcean \"Metadata API\"; Hetzner Cloud API \"Server "
	  "Metadata\"; OpenStack Nova \"Metadata service\"", SPECIAL_CLOUD },
	{ "169.254.169.253/32", "AWS Amazon DNS server (Route 53 Resolver)",
	  "AWS VPC User Guide \"Amazon DNS server\"", SPECIAL_CLOUD },
	{ "169.254.169.123/32", "AWS Time Sync Service",
	  "AWS EC2 User Guide \"Set the time for your instance\"", SPECIAL_CLOUD },
	{ "169.254.170.2/32", "AWS ECS task metadata and credentials endpoint",
	  "AWS ECS Developer Guide \"Task IAM role\"", SPECIAL_CLOUD },
	{ "169.254.170.23/32", "AWS EKS Pod Identity Agent",
	  "AWS EKS User Guide \"EKS Pod Identity\"", SPECIAL_CLOUD },
	{ "169.254.0.23/32", "Tencent Cloud instance metadata (metadata.tencentyun.com)",
	  "Tencent Cloud CVM \"Querying Instance Metadata\"", SPECIAL_CLOUD },
	{ "169.254.42.42/32", "Scaleway instance metadata",
	  "Scaleway Instances \"Instance metadata\"", SPECIAL_CLOUD },
	{ "168.63.129.16/32", "Azure WireServer (host agent, DNS, DHCP, health probes)",
	  "Azure Virtual Network \"What is IP address 168.63.129.16?\"", SPECIAL_CLOUD },
	{ "192.0.0.192/32", "Oracle Cloud (Classic) instance metadata",
	  "Oracle Cloud Infrastructure Classic \"Retrieving instance metadata\"", SPECIAL_CLOUD },
	{ "100.100.100.200/32", "Alibaba Cloud ECS instance metadata",
	  "Alibaba Cloud ECS \"Instance metadata\"", SPECIAL_CLOUD },

	/* ---- IPv6 special-purpose registry ---- */
	{ "::1/128", "loopback", "RFC 4291 2.5.3", 0 },
	{ "::/128", "unspecified", "RFC 4291 2.5.2", 0 },
	{ "::ffff:0:0/96", "IPv4-mapped", "RFC 4291 2.5.5.2", 0 },
	{ "64:ff9b::/96", "IPv4/IPv6 translation (NAT64 well-known prefix)", "RFC 6052 2.1", 0 },
	{ "64:ff9b:1::/48", "local-use IPv4/IPv6 translation", "RFC 8215", 0 },
	{ "100::/64", "discard-only", "RFC 6666", 0 },
	{ "100:0:0:1::/64", "dummy IPv6 prefix", "RFC 9780", 0 },
	{ "2001::/23", "IETF protocol assignments", "RFC 2928", 0 },
	{ "2001::/32", "Teredo", "RFC 4380, RFC 8190", 0 },
	{ "2001:1::1/128", "Port Control Protocol anycast", "RFC 7723", 0 },
	{ "2001:1::2/128", "TURN anycast", "RFC 8155", 0 },
	{ "2001:1::3/128", "DNS-SD service registration protocol anycast", "RFC 9665", 0 },
	{ "2001:2::/48", "benchmarking", "RFC 5180", 0 },
	{ "2001:3::/32", "AMT", "RFC 7450", 0 },
	{ "2001:4:112::/48", "AS112-v6", "RFC 7535", 0 },
	{ "2001:10::/28", "ORCHID (deprecated)", "RFC 4843", 0 },
	{ "2001:20::/28", "ORCHIDv2", "RFC 7343", 0 },
	{ "2001:30::/28", "drone remote ID entity tags", "RFC 9374", 0 },
	{ "2001:db8::/32", "documentation", "RFC 3849", SPECIAL_DOC },
	{ "2002::/16", "6to4", "RFC 3056", 0 },
	{ "2620:4f:8000::/48", "direct delegation AS112 service", "RFC 7534", 0 },
	{ "3fff::/20", "documentation", "RFC 9637", SPECIAL_DOC },
	{ "5f00::/16", "segment routing (SRv6) SIDs", "RFC 9602", 0 },
	{ "fc00::/7", "unique-local", "RFC 4193", 0 },
	{ "fe80::/10", "link-local", "RFC 4291 2.5.6", 0 },
	/* ---- IPv6, outside that registry ---- */
	{ "::/96", "IPv4-compatible (deprecated)", "RFC 4291 2.5.5.1", 0 },
	{ "::ffff:0:0:0/96", "IPv4-translated (SIIT)", "RFC 2765 2.1", 0 },
	{ "fec0::/10", "site-local (deprecated, still routed by some)", "RFC 3879", 0 },
	{ "ff00::/8", "multicast", "RFC 4291 2.7", 0 },

	/* ---- IPv6 cloud metadata and host agents ---- */
	{ "fd00:ec2::254/128", "AWS instance metadata service (IPv6)",
	  "AWS EC2 User Guide \"Instance metadata and user data\"", SPECIAL_CLOUD },
	{ "fd00:ec2::253/128", "AWS Amazon DNS server (IPv6)",
	  "AWS VPC User Guide \"Amazon DNS server\"", SPECIAL_CLOUD },
	{ "fd00:ec2::123/128", "AWS Time Sync Service (IPv6)",
	  "AWS EC2 User Guide \"Set the time for your instance\"", SPECIAL_CLOUD },
	{ "fd00:ec2::23/128", "AWS EKS Pod Identity Agent (IPv6)",
	  "AWS EKS User Guide \"EKS Pod Identity\"", SPECIAL_CLOUD },
	{ "fd20:ce::254/128", "Google Compute Engine metadata server (IPv6)",
	  "Google Compute Engine \"Access VM metadata\"", SPECIAL_CLOUD },
	{ "fd00:c1::a9fe:a9fe/128", "Oracle Cloud instance metadata (IPv6)",
	  "OCI \"Getting Instance Metadata\"", SPECIAL_CLOUD },
	{ "fd00:42::42/128", "Scaleway instance metadata (IPv6)",
	  "Scaleway Instances \"Instance metadata\"", SPECIAL_CLOUD },
	{ "fd00:a9fe:a9fe::1/128", "Akamai (Linode) metadata service (IPv6)",
	  "Akamai Cloud \"Metadata service\"", SPECIAL_CLOUD },
	{ "fe80::a9fe:a9fe/128", "OpenStack metadata service (IPv6)",
	  "OpenStack Neutron \"Metadata service\" (IPv6 metadata address)", SPECIAL_CLOUD },
};

const size_t special_table_n = sizeof(special_table) / sizeof(special_table[0]);

_Static_assert(sizeof(special_table) / sizeof(special_table[0]) <= SPECIAL_TABLE_MAX,
	       "raise SPECIAL_TABLE_MAX");

static bool wanted(const struct special_entry *e, unsigned int flags)
{
	return !(e->flags & SPECIAL_DOC) || (flags & SPECIAL_WITH_DOC);
}

size_t special_prefixes(struct prefix *out, size_t max, unsigned int flags)
{
	size_t n = 0;

	for (size_t i = 0; i < special_table_n && n < max; i++) {
		if (!wanted(&special_table[i], flags))
			continue;
		/* Constant, valid text (test_special checks every row). */
		if (prefix_parse(special_table[i].cidr, &out[n]) == 0)
			n++;
	}
	return n;
}

static bool bytes_are(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void put_v4(struct special_v4 *o, const uint8_t *b, bool invert, const char *form)
{
	memset(&o->v4, 0, sizeof(o->v4));
	o->v4.family = AF_INET;
	for (int i = 0; i < 4; i++)
		o->v4.a[i] = invert ? (uint8_t)~b[i] : b[i];
	o->form = form;
}

size_t special_embedded_v4(const struct addr *a, struct special_v4 out[2])
{
	const uint8_t *b = a->a;

	if (a->family != AF_INET6)
		return 0;
	/* ::ffff:V4 (RFC 4291 2.5.5.2) */
	if (bytes_are(b, 10, 0) && b[10] == 0xff && b[11] == 0xff) {
		put_v4(&out[0], b + 12, false, "IPv4-mapped");
		return 1;
	}
	/* ::V4 (RFC 4291 2.5.5.1, deprecated); :: and ::1 are themselves */
	if (bytes_are(b, 15, 0) && b[15] <= 1)
		return 0;
	if (bytes_are(b, 12, 0)) {
		put_v4(&out[0], b + 12, false, "IPv4-compatible");
		return 1;
	}
	/* ::ffff:0:V4 (RFC 2765 2.1) */
	if (bytes_are(b, 8, 0) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) {
		put_v4(&out[0], b + 12, false, "IPv4-translated");
		return 1;
	}
	/* 64:ff9b::V4 (RFC 6052 2.1, /96: the address in the last 32 bits) */
	if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && bytes_are(b + 4, 8, 0)) {
		put_v4(&out[0], b + 12, false, "NAT64");
		return 1;
	}
	/* 2002:V4::/48 (RFC 3056 2) */
	if (b[0] == 0x20 && b[1] == 0x02) {
		put_v4(&out[0], b + 2, false, "6to4");
		return 1;
	}
	/* 2001:0:SERVER:FLAGS:PORT:CLIENT, client and port bit-inverted (RFC 4380 4) */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
		put_v4(&out[0], b + 4, false, "Teredo server");
		put_v4(&out[1], b + 12, true, "Teredo client");
		return 2;
	}
	return 0;
}

/* The most specific wanted entry containing @a, or NULL. */
static const struct special_entry *find_direct(const struct addr *a, unsigned int flags)
{
	const struct special_entry *best = NULL;
	int best_len = -1;

	for (size_t i = 0; i < special_table_n; i++) {
		struct prefix p;

		if (!wanted(&special_table[i], flags) ||
		    prefix_parse(special_table[i].cidr, &p) < 0)
			continue;
		if (p.addr.family == a->family && prefix_contains(&p, a) && p.plen > best_len) {
			best = &special_table[i];
			best_len = p.plen;
		}
	}
	return best;
}

bool special_find(const struct addr *a, unsigned int flags, struct special_hit *hit)
{
	const struct special_entry *e;
	struct special_v4 v[2];
	size_t n;

	/* The embedded address first: "the 6to4 form of 168.63.129.16" says
	 * more than "6to4", and still finds it were the 6to4 row removed. */
	n = special_embedded_v4(a, v);
	for (size_t i = 0; i < n; i++) {
		e = find_direct(&v[i].v4, flags);
		if (e) {
			if (hit) {
				hit->entry = e;
				hit->form = v[i].form;
				hit->v4 = v[i].v4;
			}
			return true;
		}
	}
	e = find_direct(a, flags);
	if (e && hit) {
		memset(hit, 0, sizeof(*hit));
		hit->entry = e;
	}
	return e != NULL;
}

size_t special_overlaps(const struct prefix *p, unsigned int flags,
			const struct special_entry **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < special_table_n; i++) {
		struct prefix e;

		if (!wanted(&special_table[i], flags) ||
		    prefix_parse(special_table[i].cidr, &e) < 0 || e.addr.family != p->addr.family)
			continue;
		/* Two prefixes overlap iff the shorter contains the other's network. */
		if (e.plen <= p->plen ? prefix_contains(&e, &p->addr) : prefix_contains(p, &e.addr)) {
			if (n < max)
				out[n] = &special_table[i];
			n++;
		}
	}
	return n;
}
