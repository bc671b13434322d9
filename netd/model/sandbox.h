/*
 * sandbox - the daemon's registry of sandboxes: names, pool addresses,
 * interfaces and the policy each one runs under.  Pure bookkeeping: the
 * netlink and nf_tables work is done by the daemon through link.c and fw.c.
 *
 * Addressing: slot i of the pool gets the /30 at pool4 + 4*i (.1 host side,
 * .2 sandbox) and, if IPv6 is on, the /126 at pool6 + 4*i (::1, ::2), so a
 * source address maps back to its sandbox with arithmetic, no search.
 * A sandbox attached to an interface someone else made (a chained CNI
 * attachment) has its own addresses instead (sandbox_set_addrs()); those
 * are found through a small hash table.  It still holds a slot (its ct mark
 * and its place in iteration order).
 */
#ifndef NETD_SANDBOX_H
#define NETD_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/addr.h"
#include "common/tbucket.h"
#include "common/workload.h"

#define SANDBOX_NAME_MAX 64
#define SANDBOX_MAX      16384	/* slots; also bounded by the pool size */
#define SANDBOX_IFNAME_PREFIX "nd"	/* host-side veths netd creates: "nd" + 5 hex digits */

struct rbudget_set;

struct sandbox {
	char name[SANDBOX_NAME_MAX + 1];
	char policy[SANDBOX_NAME_MAX + 1];
	char netns_path[PATH_MAX];
	uint64_t netns_dev, netns_ino;	/* identity of the netns (0: not known yet) */
	bool netns_owned;	/* netd created /run/netns/NAME and deletes it */
	char host_ifname[16];
	char peer_ifname[16];
	uint32_t slot;
	struct addr addr4, gw4;	/* family 0 if none */
	struct addr addr6, gw6;
	time_t created;
	uint64_t dns_allowed, dns_denied;
	struct tbucket audit_bucket;	/* denied-query audit records (zeroed: full at first use) */
	uint64_t audit_suppressed;	/* records left out since the last one */
	bool own_addrs;		/* addresses not from the pool (sandbox_set_addrs()) */
	uint8_t plen4, plen6;	/* own_addrs of netd's veth (an IPAM plugin's): prefix
				 * lengths on the sandbox end; 0 for pool and chained */
	int dns_lid4, dns_lid6;	/* proxy listeners on gw4/gw6 port 53 (proxy_listen_add()); 0 = none */
	bool chained;		/* a chained CNI attachment: host_ifname is a bridge port
				 * another plugin made; netd neither creates nor deletes it */
	uint8_t mode;		/* FW_MODE_* (netd/fw.h): its own mode from create
				 * (--mode), or 0: its policy's mode: key decides */
	/* A microVM's tap (kind "tap"): host_ifname is the persistent tap netd
	 * made in its own netns (no netns, no peer); the guest behind it is
	 * configured statically from addr4/gw4 (plen 30), addr6/gw6 (126). */
	bool tap;
	/* A veth whose peer netd left in its own netns for the caller to move
	 * (kind "peer": a Docker endpoint).  peer_ifname is the peer's name as
	 * made, netns_path where it goes (recorded, never opened by a create),
	 * mac its MAC; addresses as own_addrs (the caller's IPAM). */
	bool peer;
	uint8_t mac[6];		/* tap: the guest's MAC, tap_mac_from_name(); anti-spoofing;
				 * peer: the peer's MAC (a permanent neighbour on the host end) */
	uint32_t tap_owner;	/* tap: UID whose VMM may open it */
	uint32_t tap_group;	/* tap: GID, or UINT32_MAX for none */
	uint16_t tap_queues;	/* tap: 1..TAP_QUEUES_MAX */
	uint16_t mtu;		/* tap: the tap's and the guest's MTU */
	struct workload workload;	/* the container/pod it is for, as its create
					 * said (netd-cni: CNI_CONTAINERID, CNI_ARGS) */
	/* Bandwidth (netd/link/shape.h): its own rates from create, bit/s, 0 =
	 * its policy's limits.bandwidth; what is on its interfaces now; the
	 * interfaces' indexes then (for the metrics' dump). */
	uint64_t bw_egress_bps, bw_ingress_bps;
	uint64_t shaped_egress_bps, shaped_ingress_bps;
	int shape_ifindex, shape_ifb_index;
	struct rbudget_set *budgets;	/* owned: its rules' byte budgets (netd/model/rbudget.h);
					 * NULL: its policy has none */
	struct sandbox *hnext[2];	/* address hash chains, [0] IPv4, [1] IPv6; private */
	struct sandbox *nnext;		/* name hash chain; private */
};

struct sandbox_table;

/*
 * sandbox_table_new() - an empty registry over @pool4 (and @pool6 if its
 * family is non-zero).  Caller frees with sandbox_table_free().
 * Return: 0; -EINVAL (pool too small); -ENOMEM.
 */
int sandbox_table_new(const struct prefix *pool4, const struct prefix *pool6,
		      struct sandbox_table **ret);

/* sandbox_table_free() - frees the table and every sandbox in it; NULL-safe. */
void sandbox_table_free(struct sandbox_table *t);

/*
 * sandbox_alloc() - a new sandbox named @name in a free slot, with its
 * addresses and host interface name filled in; not yet in the table
 * (sandbox_insert() does that).  @want_slot: a specific slot (restoring
 * state) or -1 for the next free one (round-robin, so a freed address is
 * not handed out again at once).
 * Return: 0; -EEXIST (name taken); -ENOSPC (pool full); -ENOMEM.
 */
int sandbox_alloc(struct sandbox_table *t, const char *name, int64_t want_slot,
		  struct sandbox **ret);

/*
 * sandbox_set_addrs() - give @sb (from sandbox_alloc(), not yet inserted)
 * @a4 and/or @a6 (family 0 = none; at least one) in place of its pool
 * addresses, and no gateways: for an interface and addresses another
 * plugin made, or for netd's veth with an IPAM plugin's addresses (the
 * caller then sets gw4/gw6 and plen4/plen6).  sandbox_by_addr() finds it by them once it is inserted.
 * Return: 0; -EINVAL (wrong family, none, or inside one of netd's pools,
 * whose addresses netd hands out itself); -EADDRINUSE (another sandbox in
 * the table has one of them).
 */
int sandbox_set_addrs(struct sandbox_table *t, struct sandbox *sb, const struct addr *a4,
		      const struct addr *a6);

/* sandbox_insert() - make @sb (from sandbox_alloc()) visible; takes ownership. */
void sandbox_insert(struct sandbox_table *t, struct sandbox *sb);

/* sandbox_remove() - take @sb out of the table and free it (and its budgets). */
void sandbox_remove(struct sandbox_table *t, struct sandbox *sb);

/* sandbox_release() - free an allocated sandbox that was never inserted. */
void sandbox_release(struct sandbox_table *t, struct sandbox *sb);

/* sandbox_find() - by name; borrowed pointer or NULL. */
struct sandbox *sandbox_find(const struct sandbox_table *t, const char *name);

/*
 * sandbox_by_addr() - the sandbox whose own address is @a: pool arithmetic,
 * else the hash of sandbox_set_addrs() addresses; O(1); or NULL.
 */
struct sandbox *sandbox_by_addr(const struct sandbox_table *t, const struct addr *a);

/*
 * sandbox_by_slot() - the sandbox in slot @slot (its ct mark's, its host
 * veth's "nd%05x"), whatever its addresses (pool, an IPAM's, a chained
 * attachment's, a peer's); O(1); borrowed or NULL.
 */
struct sandbox *sandbox_by_slot(const struct sandbox_table *t, uint32_t slot);

/* sandbox_count() - sandboxes in the table. */
size_t sandbox_count(const struct sandbox_table *t);

/*
 * sandbox_next() - iterate in slot order: start with *@cursor = 0; returns
 * the next sandbox (borrowed) or NULL at the end.
 */
struct sandbox *sandbox_next(const struct sandbox_table *t, uint32_t *cursor);

#endif
