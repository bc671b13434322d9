/*
 * fw - netd's only speaker to nf_tables (libnftnl + libmnl).  Every change is
 * one atomic netlink batch; kernel errors are mapped back by sequence number
 * and returned as -errno.  Never execs nft.
 *
 * The ruleset lives in one table, "inet netd" (name configurable for tests):
 *
 *   set  sandbox_ifs  { type ifname }                  host-side ifaces of all sandboxes
 *   set  sandbox_src4 { type ifname . ipv4_addr }      anti-spoofing
 *   set  sandbox_src6 { type ifname . ipv6_addr }
 *   set  internal4 / internal6 { flags interval }      never reachable through a pin
 *   map  sandbox_fwd  { type ifname : verdict }        iif -> jump sb-NAME
 *   chain prerouting_raw   (filter, prerouting, raw)   drop spoofed sources
 *   chain prerouting_nat   (nat, prerouting, dstnat)   udp/tcp 53 to any address -> redirect to :dns_port
 *   chain input            (filter, input)             sandbox -> host: only the proxy port (+ ICMPv6 ND)
 *   chain forward          (filter, forward)           to a sandbox: established only;
 *                                                      from a sandbox: iifname vmap @sandbox_fwd
 *   chain postrouting_nat  (nat, postrouting, srcnat)  pool -> egress interface: masquerade
 *   per sandbox:
 *   chain sb-NAME:  ct established,related accept;
 *                   daddr . l4proto . dport @sb-NAME-cidr4/6 accept;   (explicit CIDR rules)
 *                   daddr @internal4/6 drop;
 *                   daddr . l4proto . dport @sb-NAME-pin4/6 accept;    (DNS pins, with timeouts)
 *                   drop
 *   sets sb-NAME-pin4, sb-NAME-pin6   { type addr . inet_proto . inet_service; flags timeout }
 *   sets sb-NAME-cidr4, sb-NAME-cidr6 { same key; flags interval }
 *
 * Per-packet cost is a handful of set/map lookups whatever the number of
 * sandboxes or pins.  Deleting a sandbox deletes its chain and sets, so
 * pins can never outlive it or leak to a later sandbox given the same
 * address.
 */
#ifndef NETD_FW_H
#define NETD_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/policy.h"

struct fw;

struct fw_config {
	const char *table;	/* default "netd" (family inet) */
	uint16_t dns_port;	/* the proxy's port in this netns (host byte order) */
	const char *egress_ifname;	/* masquerade out of this one; "" = any non-sandbox iface */
	struct prefix pool4;	/* sandbox IPv4 pool (masquerade source) */
	struct prefix pool6;	/* family 0 = IPv6 disabled: all sandbox IPv6 is dropped */
	const struct prefix *internal;	/* never reachable through a pin; borrowed during fw_open() */
	size_t n_internal;
};

struct fw_sandbox {
	const char *name;	/* sandbox name, [A-Za-z0-9][A-Za-z0-9_.-]{0,63} */
	const char *host_ifname;	/* host side interface (veth), <= 15 bytes */
	struct addr addr4;	/* family 0 if none */
	struct addr addr6;	/* family 0 if none */
};

struct fw_pin {
	struct addr addr;	/* destination */
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port;		/* host byte order */
	uint32_t timeout_ms;	/* element timeout; > 0 */
};

/*
 * fw_open() - open a netlink socket in the caller's current netns and
 * (re)create the base table in one batch (any old table of that name is
 * replaced atomically).  Sandbox chains are added later.
 * @ret: caller frees with fw_close().  Return: 0; -errno.
 */
int fw_open(const struct fw_config *cfg, struct fw **ret);

/* fw_close() - close the socket; the table stays in the kernel. NULL-safe. */
void fw_close(struct fw *fw);

/*
 * fw_last_error() - what the last failed call ran into, for the caller's log
 * line: the failing batch message (its number, nf_tables message type and
 * object name) and strerror(), or "" if the last call succeeded.
 * Borrowed: valid until the next fw_* call on @fw.  NULL-safe.
 */
const char *fw_last_error(const struct fw *fw);

/*
 * fw_sandbox_add() - add (or replace) one sandbox: its chain, its pin and
 * CIDR sets filled from @pol's cidr rules, the vmap and anti-spoof
 * elements; one batch.  Replacing drops its old pins.
 * Return: 0; -errno (nothing changed).
 */
int fw_sandbox_add(struct fw *fw, const struct fw_sandbox *sb, const struct policy *pol);

/*
 * fw_sandbox_del() - remove everything fw_sandbox_add() made for @sb, in one
 * batch.  Missing pieces are not an error.  Return: 0; -errno.
 */
int fw_sandbox_del(struct fw *fw, const struct fw_sandbox *sb);

/*
 * fw_pin() - add @n pins for sandbox @name, each with its own timeout;
 * an existing element gets its timeout refreshed.  Blocks until the kernel
 * acknowledged the whole batch: after a 0 return the addresses are
 * reachable.  Return: 0; -errno (-ENOENT: no such sandbox; -ENOSPC: set
 * full); nothing is pinned on error.
 */
int fw_pin(struct fw *fw, const char *name, const struct fw_pin *pins, size_t n);

/*
 * fw_pin_lookup() - is (@addr, @proto, @port) currently pinned for @name?
 * For tests and diagnostics (one netlink get).  @ret_expires_ms: remaining
 * time if found (may be NULL).  Return: 1 yes; 0 no; -errno.
 */
int fw_pin_lookup(struct fw *fw, const char *name, const struct addr *addr, uint8_t proto,
		  uint16_t port, uint64_t *ret_expires_ms);

#endif
