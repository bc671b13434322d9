/*
 * dkreq - the pure core of netd-docker, Docker's remote network driver for
 * netd: the plugin protocol's requests decoded and checked (libnetwork's
 * docs/remote.md; what Docker 20.10 sends, measured in docs/docker.md),
 * the driver's two kinds of state record (a network's policy and address
 * pools, an endpoint's addresses between CreateEndpoint and Join), the
 * names it derives, the body of netd's create and the replies.  No I/O:
 * docker-plugin/main.c serves the socket, keeps the files, talks to netd.
 *
 * Strict where netd depends on the value (IDs are 64 hex digits, addresses
 * parse, policy names are netd's names, a netd.* option is known), lenient
 * where Docker may grow (unknown members are ignored); everything bounded.
 */
#ifndef NETD_DKREQ_H
#define NETD_DKREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/addr.h"
#include "common/paths.h"

#define DK_BODY_MAX        65536	/* bytes of a request body */
#define DK_ID_LEN          64		/* a NetworkID, EndpointID: hex digits */
#define DK_POLICY_MAX      64		/* = netd's policy name limit */
#define DK_PATH_MAX        1024		/* bytes of a SandboxKey */
#define DK_POOLS_MAX       8		/* address pools of one family, per network */
#define DK_SANDBOX_PREFIX  "dk-"
#define DK_SANDBOX_HEX     12		/* hex digits of the EndpointID in a sandbox's name */
#define DK_SANDBOX_NAME_LEN (sizeof(DK_SANDBOX_PREFIX) - 1 + DK_SANDBOX_HEX)
#define DK_DEFAULT_SOCKET  "/run/docker/plugins/netd.sock"	/* Docker finds driver "netd" by it */
#define DK_DEFAULT_STATE   "/var/lib/netd-docker"
#define DK_DEFAULT_TOMBSTONE_DIR "/var/lib/netd/tombstones"	/* = netd-cni's, netd reads it */
#define DK_DEFAULT_POLICY  "deny-all"
#define DK_OPT_POLICY      "netd.policy"
#define DK_OPT_MODE        "netd.mode"
#define DK_DST_PREFIX      "eth"	/* Docker names the moved interface eth0, eth1, ... */

/* The protocol's calls (the request path without its leading '/'). */
enum dk_method {
	DK_UNKNOWN = 0,
	DK_ACTIVATE,			/* Plugin.Activate */
	DK_CAPABILITIES,		/* NetworkDriver.GetCapabilities */
	DK_CREATE_NETWORK,
	DK_DELETE_NETWORK,
	DK_CREATE_ENDPOINT,
	DK_DELETE_ENDPOINT,
	DK_ENDPOINT_INFO,		/* EndpointOperInfo */
	DK_JOIN,
	DK_LEAVE,
	DK_PROGRAM_EXTERNAL,		/* ProgramExternalConnectivity */
	DK_REVOKE_EXTERNAL,		/* RevokeExternalConnectivity */
	DK_DISCOVER_NEW,
	DK_DISCOVER_DELETE,
	DK_METHODS
};

/*
 * dk_method_of() - the call a request path names ("/NetworkDriver.Join"),
 * exactly and case-sensitively.  Return: the method; DK_UNKNOWN (Docker
 * wants 404 then, to learn what a driver does not implement).
 */
enum dk_method dk_method_of(const char *path);

/* dk_method_name() - "NetworkDriver.Join", ...; "" for DK_UNKNOWN. */
const char *dk_method_name(enum dk_method m);

/* An address pool of a network (Docker's IPAM) and its gateway. */
struct dk_pool {
	struct prefix pool;	/* the CIDR, host bits clear */
	struct addr gateway;	/* family 0: none */
};

/* What a network is to the driver: CreateNetwork's, kept until DeleteNetwork. */
struct dk_network {
	char policy[DK_POLICY_MAX + 1];	/* "" until chosen: the driver's default */
	char mode[8];			/* "", "audit" or "enforce" */
	struct dk_pool v4[DK_POOLS_MAX], v6[DK_POOLS_MAX];
	size_t n_v4, n_v6;
};

/* What an endpoint is between CreateEndpoint and DeleteEndpoint. */
struct dk_endpoint {
	char network[DK_ID_LEN + 1];
	struct addr addr4, addr6;	/* family 0: none; at least one */
	uint8_t plen4, plen6;
	uint8_t mac[6];
	char policy[DK_POLICY_MAX + 1];	/* its own (--driver-opt netd.policy), or "" */
	char mode[8];			/* its own, or "" */
	char sandbox_key[DK_PATH_MAX + 1];	/* the container's netns, from its Join; "" before */
};

/* One decoded request; which members are set depends on the method. */
struct dk_req {
	enum dk_method method;
	char network_id[DK_ID_LEN + 1];
	char endpoint_id[DK_ID_LEN + 1];
	char sandbox_key[DK_PATH_MAX + 1];	/* Join */
	struct dk_network net;			/* CreateNetwork */
	/* CreateEndpoint: the interface Docker's IPAM gave (plen 0: none) */
	struct addr addr4, addr6;
	uint8_t plen4, plen6;
	bool mac_given;
	uint8_t mac[6];
	char policy[DK_POLICY_MAX + 1];		/* CreateEndpoint: its netd.policy, or "" */
	char mode[8];
	bool ports_published;			/* CreateEndpoint: a non-empty portmap (-p) */
};

/*
 * dk_parse() - decode the body @text/@len (not NUL-terminated; at most
 * DK_BODY_MAX bytes) of a request for @method into @out (zeroed first).
 * Plugin.Activate, GetCapabilities, Discover*: any body or none.  The
 * others: a JSON object whose NetworkID/EndpointID are 64 hex digits;
 * CreateNetwork's Options may carry "com.docker.network.generic" with
 * netd.policy (a netd name) and netd.mode (audit | enforce), no other
 * netd.* key and no key without a dot ("policy": "did you mean
 * 'netd.policy'?"; keys of other namespaces, com.docker.*, pass); IPv4Data/IPv6Data entries have a Pool (CIDR) and a Gateway
 * (ADDR/PLEN inside it), at most DK_POOLS_MAX each; CreateEndpoint's
 * Interface has Address/AddressIPv6 (ADDR/PLEN, "" for none) and
 * MacAddress (unicast, "" for none), its Options netd.policy/netd.mode as
 * above; Join's SandboxKey is an absolute path without NUL.  Unknown
 * members are ignored.  @err/@errsz: why not, for the {"Err"} reply.
 * Return: 0; -EINVAL (@err filled); -EMSGSIZE; -ENOMEM.
 */
int dk_parse(enum dk_method method, const char *text, size_t len, struct dk_req *out,
	     char *err, size_t errsz);

/*
 * dk_sandbox_name() - netd's sandbox for endpoint @eid (64 hex digits):
 * "dk-" + its first 12, into @buf (>= DK_SANDBOX_NAME_LEN + 1 bytes).
 */
void dk_sandbox_name(const char *eid, char *buf, size_t sz);

/*
 * dk_endpoint_mac() - the MAC an endpoint without Docker's gets: 02:42 and
 * its IPv4 address (Docker's own convention for its bridge), else 02:42 and
 * the first 8 hex digits of @eid.  Locally administered unicast.
 */
void dk_endpoint_mac(const struct dk_req *r, uint8_t mac[6]);

/*
 * dk_endpoint_from() - the endpoint record of CreateEndpoint @r (its
 * network, addresses, MAC: Docker's or dk_endpoint_mac()'s, own policy).
 * Return: 0; -EINVAL (no address at all: @err says so).
 */
int dk_endpoint_from(const struct dk_req *r, struct dk_endpoint *ep, char *err, size_t errsz);

/*
 * dk_network_json(), dk_endpoint_json() - a record as its state file's
 * JSON (a new object, caller decrefs; NULL on ENOMEM).
 * dk_network_parse(), dk_endpoint_parse() - back; the same checks as the
 * requests they came from.  @text/@len not NUL-terminated.
 * Return: 0; -EINVAL (@err); -EMSGSIZE; -ENOMEM.
 */
json_t *dk_network_json(const struct dk_network *n);
int dk_network_parse(const char *text, size_t len, struct dk_network *out, char *err,
		     size_t errsz);
json_t *dk_endpoint_json(const struct dk_endpoint *e);
int dk_endpoint_parse(const char *text, size_t len, struct dk_endpoint *out, char *err,
		      size_t errsz);

/*
 * dk_policy_of() - the policy and mode endpoint @e gets on network @n: its
 * own (--driver-opt), else its network's (-o), else @dflt.  Borrowed.
 */
void dk_policy_of(const struct dk_endpoint *e, const struct dk_network *n, const char *dflt,
		  const char **policy, const char **mode);

/*
 * dk_gateway_of() - the gateway of the pool of @n that holds @a (IPv4 or
 * IPv6); family 0 into @gw if none does.  Return: true if found.
 */
bool dk_gateway_of(const struct dk_network *n, const struct addr *a, struct addr *gw);

/*
 * dk_create_body() - netd's POST /v1/sandboxes for endpoint @eid (its
 * record @e, network @n) joining sandbox @key: kind "peer", its addresses
 * with their pool's gateway, its MAC, the netns path, policy and mode
 * (dk_policy_of() with @dflt).  Return: a new object; NULL on ENOMEM or
 * -EINVAL with @err filled (an address outside every pool).
 */
json_t *dk_create_body(const char *eid, const struct dk_endpoint *e, const struct dk_network *n,
		       const char *key, const char *dflt, char *err, size_t errsz);

/*
 * dk_join_reply() - Join's answer from netd's sandbox @sb (GET/POST
 * /v1/sandboxes): InterfaceName {SrcName: its "ifname", DstPrefix "eth"},
 * Gateway/GatewayIPv6 from "gateway4"/"gateway6", DisableGatewayService
 * true (Docker must add no docker_gwbridge interface: it would bypass
 * netd).  Return: a new object; NULL (ENOMEM, or @sb lacks an ifname).
 */
json_t *dk_join_reply(const json_t *sb);

/*
 * dk_oper_info() - EndpointOperInfo's {"Value": {...}}: the sandbox's name,
 * and from @sb (may be NULL) its policy, mode, host interface and
 * addresses; @state says what is known when @sb is NULL ("not joined",
 * "netd not reachable").  A new object, NULL on ENOMEM.
 */
json_t *dk_oper_info(const char *name, const json_t *sb, const char *state);

/* dk_error() - {"Err": @msg}: the protocol's error reply.  A new object. */
json_t *dk_error(const char *msg);

#endif
