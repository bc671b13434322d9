/*
 * ctlreq - the control API's request bodies, parsed and validated.  Pure:
 * JSON text in, a struct out (no daemon state, no I/O), so every byte an
 * API client can send is covered by a fuzz target (tests/fuzz/fuzz_ctlreq).
 */
#ifndef NETD_CTLREQ_H
#define NETD_CTLREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/workload.h"

/*
 * What POST /v1/sandboxes asks for; pointers into the parsed body
 * (ctlreq_sandbox()).  The daemon checks that the values make sense.
 */
struct sandbox_request {
	const char *name;
	const char *policy;
	const char *netns;	/* NULL: create /run/netns/NAME */
	const char *ifname;	/* interface name inside the sandbox; NULL: "eth0" */
	const char *mode;	/* "audit" | "enforce" (checked); NULL: the policy's mode */
	/*
	 * A chained CNI attachment (all NULL otherwise): bind the existing
	 * bridge port @attach_host_ifname and the container's own addresses
	 * (at least one) to the policy; netd creates and deletes no
	 * interface or netns.  POST /v1/sandboxes {"attach": {...}}.
	 */
	const char *attach_host_ifname;
	const char *attach_ipv4, *attach_ipv6;
	/*
	 * Interface mode with addresses from an IPAM plugin (all NULL
	 * otherwise: the pool's): "ADDR/PLEN" for the sandbox end and the bare
	 * gateway, which netd puts on the host end as a point-to-point address.
	 * POST /v1/sandboxes {"addresses": {"ipv4", "gateway4", "ipv6", "gateway6"}}.
	 */
	const char *addr_ipv4, *addr_gateway4;
	const char *addr_ipv6, *addr_gateway6;
	/*
	 * A microVM's tap (kind "tap"; false/NULL/0 otherwise): netd creates
	 * the persistent tap in its own netns, owned by @tap_owner (always
	 * set: a tap is never ownerless), and no netns.  POST /v1/sandboxes
	 * {"kind": "tap", "tap": {"name", "owner", "group", "queues", "mtu"}}.
	 */
	bool tap;
	const char *tap_name;	/* NULL: "ndt" + the slot in hex (tap_ifname()) */
	uint32_t tap_owner;	/* UID */
	bool tap_group_set;
	uint32_t tap_group;	/* GID, if tap_group_set */
	unsigned tap_queues;	/* 0 or 1: single queue; up to TAP_QUEUES_MAX */
	unsigned tap_mtu;	/* 0: tap_mtu()'s choice */
	/*
	 * A veth whose peer netd leaves in its own netns for the caller to
	 * move (kind "peer"; false/NULL otherwise): a Docker network driver's
	 * endpoint (docker-plugin/), which Docker moves into the container and
	 * renames.  Needs "addresses" (the caller configures the peer with
	 * them); @ifname is the peer's name as made (NULL: "ndp" + the slot in
	 * hex), @netns where it will live (recorded, not opened: it may not
	 * exist yet), @mac its MAC ("xx:xx:xx:xx:xx:xx"; NULL: derived from
	 * the name).  POST /v1/sandboxes {"kind": "peer", "addresses", "mac"?}.
	 */
	bool peer;
	const char *mac;
	/*
	 * Who the sandbox is for (common/workload.h), checked here; each ""
	 * if not given.  POST /v1/sandboxes {"container_id", "pod_namespace",
	 * "pod_name", "pod_uid"}: netd-cni sends them, any client may.
	 */
	struct workload workload;
	/*
	 * Its own bandwidth limits, bits per second (0: its policy's
	 * limits.bandwidth for that direction), checked here as a policy's
	 * are (policy_rate_parse()).  POST /v1/sandboxes {"bandwidth":
	 * {"egress": "20mbit", "ingress": "100mbit"}}: egress is what the
	 * sandbox sends, ingress what it receives.
	 */
	uint64_t bw_egress_bps, bw_ingress_bps;
};

/*
 * ctlreq_sandbox() - parse a POST /v1/sandboxes body:
 *   {"name", "policy", "netns"?, "ifname"?, "mode"? ("audit" | "enforce"),
 *    "attach"?: {"host_ifname", "ipv4"?, "ipv6"?},
 *    "addresses"?: {"ipv4"?, "gateway4"?, "ipv6"?, "gateway6"?},
 *    "kind"?: "interface" | "tap" | "peer", "mac"? (with "peer"),
 *    "tap"?: {"name"?, "owner", "group"?, "queues"?, "mtu"?},
 *    "container_id"?, "pod_namespace"?, "pod_name"?, "pod_uid"?,
 *    "bandwidth"?: {"egress"?, "ingress"?}}
 * Unknown keys, wrong types and duplicate keys are errors; "name" and
 * "policy" are required; "attach" needs "host_ifname" and an address;
 * "addresses" needs each address with its gateway and excludes "attach";
 * "kind": "tap" needs "tap" with "owner" (a UID) and takes none of netns,
 * ifname, attach, addresses; "tap" without "kind": "tap" is an error;
 * "kind": "peer" needs "addresses" and takes no "attach"; "mac" only with it;
 * "container_id" and the pod's fields must pass workload_set() (400 with
 * the key and the rule otherwise); a "bandwidth" rate must read as a
 * policy's does ("20mbit", 8kbit..100gbit: 400 with the reason).
 * (Whether the values make sense — a valid name, an existing policy —
 * is daemon_sandbox_create()'s to say.)
 * @text, @len: the body, not NUL-terminated; at most CTL_MAX_BODY bytes.
 * @sr: filled with pointers into *@ret_obj, valid until the caller
 *      json_decref()s it.
 * @err, @errsz: on failure, a message for an HTTP 400 body.
 * Return: 0; -EINVAL (bad request, @err filled); -ENOMEM.
 */
int ctlreq_sandbox(const char *text, size_t len, struct sandbox_request *sr, json_t **ret_obj,
		   char *err, size_t errsz);

/* What POST /v1/verify asks for (ctlreq_verify()). */
struct verify_request {
	bool all;		/* every sandbox */
	bool allowed;		/* positive probes too */
	const json_t *names;	/* !all: a JSON array of sandbox names, borrowed from the body */
};

/*
 * ctlreq_verify() - parse a POST /v1/verify body:
 *   {"sandboxes"?: ["NAME", ...], "all"?: bool, "allowed"?: bool}
 * exactly one of a non-empty "sandboxes" (each a string of 1..64 bytes, at
 * most CTLREQ_VERIFY_NAMES) or "all": true.  Unknown keys, wrong types and
 * duplicate keys are errors.  @text, @len: the body, not NUL-terminated.
 * @vr: filled, pointing into *@ret_obj (caller json_decref()s it).
 * @err, @errsz: on failure, a message for an HTTP 400 body.
 * Return: 0; -EINVAL (@err filled); -ENOMEM.
 */
#define CTLREQ_VERIFY_NAMES 16384
int ctlreq_verify(const char *text, size_t len, struct verify_request *vr, json_t **ret_obj,
		  char *err, size_t errsz);

#define CTLREQ_PATH_MAX 1024	/* bytes of a request path, encoded */
#define CTLREQ_SEG_MAX  64	/* bytes of one decoded segment (a name: SANDBOX_NAME_MAX) */
#define CTLREQ_SEGS_MAX 8	/* segments of a path */

/* A request path split at '/' and percent-decoded, segment by segment. */
struct ctlreq_path {
	size_t n;			/* segments ("/v1/sandboxes/sb1": 3) */
	char seg[CTLREQ_SEGS_MAX][CTLREQ_SEG_MAX + 1];	/* NUL-terminated; may be "" */
};

/*
 * ctlreq_path() - split the raw (still percent-encoded) path @raw of a
 * request at its literal '/' and decode each segment (RFC 3986 2.1, 3.3)
 * strictly: a '%' needs two hex digits; a segment must not decode to a
 * NUL, a '/', another control character, "." or "..", nor be longer than
 * CTLREQ_SEG_MAX bytes; the path starts with '/', is at most
 * CTLREQ_PATH_MAX bytes and CTLREQ_SEGS_MAX segments.  So a name in a path
 * is exactly the bytes the client meant, or the request is refused
 * (`DELETE /v1/sandboxes/sb1%00x` never reaches sb1).
 * @err/@errsz: on failure, why (for an HTTP 400 body).
 * Return: 0; -EINVAL; -ENAMETOOLONG (a segment or the path too long).
 */
int ctlreq_path(const char *raw, struct ctlreq_path *out, char *err, size_t errsz);

#endif
