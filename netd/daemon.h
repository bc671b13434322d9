/*
 * daemon - `netd run`: owns the configuration, the policies, the sandbox
 * registry, the nf_tables table, the DNS proxy, the audit log and the
 * control socket, and ties them together on one libevent loop.
 */
#ifndef NETD_DAEMON_H
#define NETD_DAEMON_H

#include <stdio.h>

#include <jansson.h>

#include "netd/policy.h"
#include "netd/sandbox.h"

struct daemon;

/*
 * daemon_main() - run the daemon until SIGINT/SIGTERM.  @config_path may be
 * NULL (all defaults); @socket_override, if non-NULL, replaces the
 * config's socket.  Return: process exit status (0 clean stop, 1 startup
 * error, already reported on stderr).
 */
int daemon_main(const char *config_path, const char *socket_override);

/* The control API's view of the daemon (netd/ctl.c). */

struct sandbox_request {
	const char *name;
	const char *policy;
	const char *netns;	/* NULL: create /run/netns/NAME */
	const char *ifname;	/* interface name inside the sandbox; NULL: "eth0" */
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
};

/*
 * daemon_sandbox_create() - create and enforce a sandbox.  Rules are in the
 * kernel before the interface exists, so its first packet is under policy.
 * @err/@errsz: a message for the API client on failure.
 * Return: 0 (@ret borrowed from the registry); -EINVAL (bad request),
 * -ENOENT (unknown policy or netns), -EEXIST (name taken), -ENOSPC, -errno.
 */
int daemon_sandbox_create(struct daemon *d, const struct sandbox_request *req,
			  struct sandbox **ret, char *err, size_t errsz);

/*
 * daemon_sandbox_delete() - remove the interface, rules, pins, state and (if
 * netd created it) the netns.  Return: 0; -ENOENT (no such sandbox).
 */
int daemon_sandbox_delete(struct daemon *d, const char *name);

/* daemon_sandbox_find() - borrowed or NULL. */
struct sandbox *daemon_sandbox_find(struct daemon *d, const char *name);

/* daemon_sandbox_json() - a new JSON object describing @sb (caller decrefs). */
json_t *daemon_sandbox_json(struct daemon *d, const struct sandbox *sb);

/* daemon_sandboxes_json() - a new JSON array of every sandbox. */
json_t *daemon_sandboxes_json(struct daemon *d);

/* daemon_policies_json() - a new JSON array describing the loaded policies. */
json_t *daemon_policies_json(struct daemon *d);

/* daemon_policy_json() - one policy in full, or NULL if unknown. */
json_t *daemon_policy_json(struct daemon *d, const char *name);

/*
 * daemon_policy_reload() - re-read policy_dir (POST /v1/policies/reload,
 * SIGHUP).  The new set is validated whole first: any error rejects all of
 * it, the old policies stay in force and @err gets FILE:LINE:COL and the
 * message.  Otherwise every sandbox whose policy changed is updated in ONE
 * nf_tables batch: its CIDR sets refilled, its pins for names the new
 * policy no longer allows removed (and, if reload.cut_removed, its live
 * connections to them cut); a sandbox whose policy file is gone is denied
 * all egress.  Each change is logged and audited ("policy_reload").
 * @ret_report: on success a new JSON array, one object per changed sandbox
 * (caller decrefs).  Return: 0; -EINVAL/-errno (nothing changed).
 */
int daemon_policy_reload(struct daemon *d, json_t **ret_report, char *err, size_t errsz);

/* daemon_status_json() - health and counters. */
json_t *daemon_status_json(struct daemon *d);

/* daemon_metrics() - Prometheus text exposition of the counters, to @out. */
void daemon_metrics(struct daemon *d, FILE *out);

#endif
