/*
 * fw - netd's only speaker to nf_tables (libnftnl + libmnl).  Every change is
 * one atomic netlink batch; kernel errors are mapped back by sequence number
 * and returned as -errno.  Never execs nft.  The implementation is in
 * netd/fw/ (docs/architecture.md): a pure renderer, one file with the
 * netlink socket (nl.c).
 *
 * The ruleset lives in one table, "inet netd" (name configurable for tests):
 *
 *   set  sandbox_ifs  { type ifname }                  host-side ifaces of all sandboxes
 *   set  sandbox_src4 { type ifname . ipv4_addr }      anti-spoofing
 *   set  sandbox_src6 { type ifname . ipv6_addr }
 *   set  dns_local4   { type ifname . ipv4_addr }      where the proxy listens on :53 itself
 *   set  dns_local6   { type ifname . ipv6_addr }      (a sandbox's gateway address)
 *   set  internal4 / internal6 { flags interval }      never reachable through a pin
 *   map  sandbox_fwd  { type ifname : verdict }        iif -> jump pe-/pa-POLICY
 *   set  metered_ifs  { type ifname }                  sandboxes with an egress quota: no fast path
 *   map  raw_ifs      { type ifname : verdict }        iif -> goto sandbox_raw (tap: tap_raw)
 *   set  chained_fams { type nf_proto }                families with a chained attachment
 *   chain prerouting_raw   (filter, prerouting, raw)   iifname vmap @raw_ifs -> sandbox_raw:
 *                                                      drop spoofed sources; udp to
 *                                                      @dns_local4/6 port 53: notrack;
 *                                                      other interfaces: pool sources
 *                                                      dropped; @chained_fams -> chained_raw
 *   chain output_raw       (filter, output, raw)       udp from @dns_local4/6 port 53: notrack
 *   chain prerouting_nat   (nat, prerouting, dstnat)   udp/tcp 53 to any address -> redirect to :dns_port
 *   chain input            (filter, input)             sandbox -> host: only the proxy port (+ ICMPv6 ND)
 *   chain forward          (filter, forward)           flowtable
 *                                                      (dataplane.flowtable):
 *                                                      established reply to a sandbox: flow add @ft;
 *                                                      fast path: established, not
 *                                                      metered -> accept; to a sandbox:
 *                                                      established only; from a sandbox:
 *                                                      iifname vmap @sandbox_fwd
 *   chain postrouting_nat  (nat, postrouting, srcnat)  pool, sandbox veths -> egress: masquerade
 *   set  pin4 { type ipv4_addr . ipv4_addr . inet_proto . inet_service; flags timeout }
 *   set  pin6 { ipv6 likewise }                   DNS pins of every sandbox: its source . daddr
 *                                                  . proto . port (the anti-spoofing rules
 *                                                  make the source its own)
 *   set  gw4 { type ipv4_addr . ipv4_addr . inet_service; flags timeout }
 *   set  gw6 { ipv6 likewise }                    gateway pins (fw_config.gw_port only):
 *                                                  source . daddr . TCP port; prerouting_nat
 *                                                  sets the sandbox's ct mark (sb_mark4/6) on
 *                                                  such a connection and redirects it to
 *                                                  :gw_port, input accepts it there
 *                                                  (netd/fw/gwsteer.c)
 *   map  sb_gwlim { type mark : verdict }          gateway only: a sandbox's mark -> jump
 *                                                  ge-/ga-POLICY, its policy chain's twin
 *                                                  (the conn limit of steered connections,
 *                                                  prerouting_nat, before their redirect)
 *   map  sb_mark4/6 { type addr : mark }           a sandbox's source -> its ct mark (acct.h)
 *   map  sb_quota   { type mark : quota }          its mark -> its quota object q-NAME
 *   set  sb_reject  { type mark; flags dynamic }   its mark -> its reject rate (limit)
 *   per policy (and mode: pe- enforce, pa- audit), shared by its sandboxes:
 *   sets pc-POLICY-cidr4/6 { type addr . inet_proto . inet_service; flags interval }
 *                                                  its CIDR rules
 *   set  ce-/ca-POLICY-N { type mark; flags dynamic }  each sandbox's ct count (limit N)
 *   chain ge-/ga-POLICY (gateway only): new: add @ce-/ca-POLICY-N { ... over N } drop;
 *                    prerouting_nat jumps there for a steered connection (sb_gwlim)
 *   chain pe-POLICY: ct state invalid,untracked drop;
 *                    new: ct mark set saddr map @sb_mark4/6;
 *                    quota name ct mark map @sb_quota over: drop;   (limits.egress_bytes)
 *                    ct established,related accept;
 *                    new: add @ce-POLICY-N { ct mark ct count over N } drop;
 *                    daddr . l4proto . dport @pc-POLICY-cidr4/6 accept;   (explicit CIDR rules)
 *                    daddr @internal4/6 drop;
 *                    saddr . daddr . l4proto . dport @pin4/6 accept;      (DNS pins, with timeouts)
 *                    drop   (on_deny: reject: reject at each sandbox's own rate first;
 *                            mode: audit, chain pa-POLICY: count, accept)
 *   flowtable ft { hook ingress; counter; devices = { egress iface } }   (netd/fw/flowtable.c,
 *                                                  where the kernel has flowtables)
 *   No set or chain is a sandbox's own: nf_tables finds sets by name in a
 *   list and validates every chain on each commit that adds a rule or a
 *   jump, so per-sandbox ones made every create, reload and restart slower
 *   with every sandbox (docs/architecture.md, "How a pin is rendered").
 *   A sandbox's own state is elements: create and delete add and remove
 *   elements only.
 *
 * Chained attachments (a bridge port another CNI plugin made; the inet
 * hooks see only the bridge) are matched by source address instead:
 *   sets chained_src4/6 { addr }, maps chained_fwd4/6 { addr : verdict }
 *   (prerouting_nat redirect, input -> chain chained_in, forward vmap,
 *   postrouting masquerade), and "table bridge NAME" makes those sources
 *   trustworthy: chain prerouting drops frames from a chained port
 *   (set chained_ports) whose source is not its own (chained_port_src4/6;
 *   ARP and ND pass), chain forward drops frames to or from a chained
 *   port (the bridge's own traffic never crosses it).
 *
 * A microVM's tap (fw_sandbox.tap) is a sandbox interface like a veth (in
 * sandbox_ifs, sandbox_src4/6, sandbox_fwd), and its guest's MAC is pinned
 * as well, because the guest's kernel writes whole frames:
 *   sets tap_ifs { ifname }, tap_mac { ifname . ether_addr }: raw_ifs sends a
 *   tap's packets to chain tap_raw, which drops one whose Ethernet source is
 *   not its guest's, then goes on to sandbox_raw;
 *   "table arp NAME": chain input drops ARP from a tap unless it is
 *   Ethernet/IPv4 ARP whose frame source, sender MAC and sender address are
 *   the guest's own (tap_ifs, tap_arp { ifname . ether_addr . ether_addr .
 *   ipv4_addr }).
 *
 * Per-packet cost is a handful of set/map lookups whatever the number of
 * sandboxes or pins.  Deleting a sandbox deletes its elements (and its
 * policy's chain with the policy's last sandbox) and exactly its
 * pin elements (fw records each one it gives in the pin registry,
 * netd/model/pinreg.h, before the batch that sends it), so pins
 * can never outlive it or leak to a later sandbox given the same address.
 */
#ifndef NETD_FW_H
#define NETD_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "common/pin.h"	/* struct pin */
#include "netd/model/policy.h"

/*
 * The SNI/Host check (netd/sni/, docs/sni.md).  For a sandbox whose policy
 * has rules with tls.sni or http.host, its chain queues the first packets
 * of TCP connections to a pinned address on those rules' ports (from the
 * SYN on, while the conntrack mark bit FW_SNI_DONE_CTMARK is clear) to
 * netd: enforce ports to FW_SNI_QUEUE_ENFORCE (no bypass: with netd down
 * they are dropped), log-only ports to FW_SNI_QUEUE_LOG (bypass: with netd
 * down they pass).  netd's verdict sets the bit when it is done, or sends
 * the packet round again with the packet mark bit FW_SNI_RESET_MARK, which
 * the chain's first rule answers with a TCP reset.  The bit of the ct mark
 * is outside what ACCT_MARK() uses (acct.h); the packet mark bit is next
 * to FW_CHAINED_MARK.
 */
#define FW_SNI_QUEUE_ENFORCE 4100
#define FW_SNI_QUEUE_LOG     4101
#define FW_SNI_DONE_CTMARK   0x00008000u
#define FW_SNI_RESET_MARK    0x00400000u
/*
 * Watched: set with the SYN's queue rule (and again on a SYN that reuses an
 * established entry), so that forward queues the server's replies of a
 * connection not yet done to the same queue: netd sets the done bit (and
 * clears these) only once the server acknowledged the bytes it read
 * (netd/sni/flow.h).  A SYN
 * on an established entry (conntrack reuses an entry the server reset)
 * clears the done bit, so the new connection is checked from its start.
 * The three bits are outside what ACCT_MARK() uses (acct.h); the rules that
 * key on a sandbox's mark mask them off (fx_ct_mark_key()).
 */
#define FW_SNI_WATCH_ENFORCE 0x00010000u
#define FW_SNI_WATCH_LOG     0x00020000u
#define FW_SNI_CTMARK_BITS   (FW_SNI_DONE_CTMARK | FW_SNI_WATCH_ENFORCE | FW_SNI_WATCH_LOG)
/*
 * QUIC (issue 25): the check's UDP flows.  Their first datagrams are
 * queued like a TCP connection's (a checked udp port: until the done bit,
 * and every long-header packet - RFC 9000 17.2, the first bit of the UDP
 * payload - even after it, since a new connection on the same addresses
 * and ports starts with one); a refused flow's entry gets
 * FW_SNI_DROP_CTMARK under FW_SNI_CTMARK_BITS (both watch bits, no done
 * bit: a value no TCP connection has while checked, no bit of
 * ACCT_MARK()'s), which the policy chain's first rules drop.  No watch bit
 * is set for UDP: no reply of a UDP flow is queued.  A TCP connection the
 * check resets gets the same mark before its reset, so that its records
 * say it was refused (netd/trail/ctmsg.h ct_flow_sni_refused()): its
 * server's replies match neither of sni_reply's rules and take the fast
 * path to the sandbox, which the reset has closed; a new connection
 * reusing the entry clears it with the SYN (fw/pchain.c).
 */
#define FW_SNI_DROP_CTMARK   (FW_SNI_WATCH_ENFORCE | FW_SNI_WATCH_LOG)

/*
 * The packet mark bit the bridge table sets on frames it has checked as
 * coming from a chained container's own port with its own source; the
 * inet table drops packets claiming a chained source without it (from the
 * uplink, say).  One bit, ORed in: other users of the mark keep theirs.
 * So a logged packet that carries it is the chained container's whose
 * source it has (netd/trail/attrib.c), though its interface is the bridge.
 */
#define FW_CHAINED_MARK 0x00800000u

struct fw;
struct pinreg;

struct fw_config {
	const char *table;	/* default "netd" (family inet) */
	uint16_t dns_port;	/* the proxy's port in this netns (host byte order) */
	const char *egress_ifname;	/* masquerade out of this one; "" = any non-sandbox iface */
	struct prefix pool4;	/* sandbox IPv4 pool (masquerade source) */
	struct prefix pool6;	/* family 0 = IPv6 disabled: all sandbox IPv6 is dropped */
	const struct prefix *internal;	/* never reachable through a pin; borrowed during fw_open() */
	size_t n_internal;
	uint16_t log_group;	/* nflog group for deny events ("log group N prefix netd:REASON"); 0 = none */
	bool no_fast_path;	/* config dataplane.fast_path: false - no fast-path rule at the
				 * head of forward (docs/architecture.md, "The fast path") */
	uint32_t conn_limit;	/* tracked connections per sandbox whose policy sets no
				 * limits.connections ("ct count over N"); 0 = none */
	uint8_t flowtable;	/* FW_FLOWTABLE_*: the flowtable fast path (config
				 * dataplane.flowtable); 0 = none, and the kernel is not asked */
	/*
	 * The API gateway's TCP port in this netns (host byte order; netd.yaml
	 * gateway.port): gateway pins (struct pin.gateway) go into gw4/6, and
	 * a sandbox's new TCP connection to (its source . daddr . dport) in
	 * gw4/6 gets its accounting mark and is redirected to this port
	 * (prerouting_nat), which input accepts from sandboxes for redirected
	 * connections only.  0 = no gateway: no gw4/6, no such rules (the
	 * ruleset is as without the gateway), and fw_pin() refuses gateway
	 * pins (-EOPNOTSUPP).
	 */
	uint16_t gw_port;
	struct pinreg *pins;	/* the pin registry (netd/model/pinreg.h), required: fw
				 * records there what it gives each sandbox in pin4/6 and
				 * reads it back to delete exactly those; borrowed, must
				 * outlive the fw (fw_close() first) */
};

/*
 * The flowtable fast path (docs/architecture.md, "The flowtable"): flowtable
 * "ft" (hook ingress, flags counter) whose one device is the egress
 * interface, fed by `flow add @ft` in forward for replies to sandboxes.
 * fw_open() asks the kernel first (a batch it checks and aborts).
 */
#define FW_FLOWTABLE_NONE 0	/* no flowtable, and no question asked: not of the
				 * flowtable nor of the SNI check's queue rules
				 * (taken as there) - tests' stand-in kernels */
#define FW_FLOWTABLE_OFF  1	/* none; one an earlier run made is removed */
#define FW_FLOWTABLE_AUTO 2	/* used if the kernel has it (flowtables, flow_offload)
				 * and an egress interface is known */
#define FW_FLOWTABLE_ON   3	/* required: fw_open() fails without it (-EOPNOTSUPP; -ENODEV: no egress) */

struct fw_sandbox {
	const char *name;	/* sandbox name, [A-Za-z0-9][A-Za-z0-9_.-]{0,63} */
	const char *host_ifname;	/* host side interface (veth), <= 15 bytes */
	struct addr addr4;	/* family 0 if none */
	struct addr addr6;	/* family 0 if none */
	uint32_t ct_mark;	/* set on every new connection of the sandbox (acct.h ACCT_MARK); 0 = none;
				 * never with a bit of FW_SNI_CTMARK_BITS (-EINVAL) */
	bool chained;		/* a chained CNI attachment: @host_ifname is a bridge port
				 * someone else made; matched by address (chained_* sets,
				 * table bridge NAME), needs addr4 or addr6 */
	uint8_t mode;		/* FW_MODE_*: the sandbox's own mode, over its policy's */
	bool tap;		/* a microVM's tap: @host_ifname is a tap, and frames from it
				 * must also carry @mac (tap_ifs, tap_mac; table arp NAME) */
	uint8_t mac[6];		/* tap: the guest's MAC */
};

#define FW_MODE_POLICY  0	/* the policy's mode: key decides */
#define FW_MODE_ENFORCE 1
#define FW_MODE_AUDIT   2

/* fw_mode_audit() - is a sandbox of own mode @mode under @pol in audit mode? */
static inline bool fw_mode_audit(uint8_t mode, const struct policy *pol)
{
	return mode == FW_MODE_AUDIT || (mode != FW_MODE_ENFORCE && pol && pol->audit);
}

/* on_deny: reject answers at most this many denied packets a second per
 * sandbox (burst FW_REJECT_BURST); the rest are dropped. */
#define FW_REJECT_RATE  50
#define FW_REJECT_BURST 100

/*
 * fw_open() - open a netlink socket in the caller's current netns and
 * (re)create the base table in one batch (any old table of that name is
 * replaced atomically).  Sandbox chains are added later.
 * @ret: caller frees with fw_close().  Return: 0; -errno.
 */
int fw_open(const struct fw_config *cfg, struct fw **ret);

/* One sandbox to keep across a restart (fw_open_reconcile()). */
struct fw_restore {
	struct fw_sandbox sb;	/* strings borrowed for the call */
	const struct policy *pol;	/* borrowed for the call */
	bool flush_pins;	/* its policy changed while netd was down: drop its pins */
};

struct fw_reconcile_info {
	bool kept;		/* the existing table was kept (pins and all) */
	size_t n_stale;		/* sandboxes not in @sbs whose leftovers (quota, older chain) were removed */
	char replaced_because[256];	/* non-empty: reconciling failed, table replaced */
};

/*
 * fw_open_reconcile() - open like fw_open(), for a restart: if the table
 * exists it is kept with every pin in it, and ONE batch re-creates-or-keeps
 * and refills the base chains and sets, deletes the chains and sets of
 * sandboxes not in @sbs, and re-renders each sandbox of @sbs in place
 * (chain and its policy's CIDR sets refilled, its pins kept unless
 * flush_pins; pins of no sandbox in @sbs removed).  If that
 * batch fails (an incompatible older base ruleset, say), the table is
 * replaced with everything in @sbs in one batch instead (pins lost; see
 * @info->replaced_because).  There is no moment without rules either way.
 * @ret: caller frees with fw_close().  @info: filled.  Return: 0; -errno.
 */
int fw_open_reconcile(const struct fw_config *cfg, const struct fw_restore *sbs, size_t n,
		      struct fw **ret, struct fw_reconcile_info *info);

struct fw_kernel;

/*
 * fw_open_reconcile_with() - fw_open_reconcile() on the kernel @k
 * (netd/fw/kernel.h: a stand-in, for the daemon in a box, netd/daemon.h)
 * instead of a netlink socket; @k NULL: the netlink socket.  Takes
 * ownership of @k (freed by fw_close(), or here on failure).
 */
int fw_open_reconcile_with(const struct fw_config *cfg, struct fw_kernel *k,
			   const struct fw_restore *sbs, size_t n, struct fw **ret,
			   struct fw_reconcile_info *info);

/* One sandbox of a reload (fw_sandboxes_update()). */
struct fw_update {
	const struct fw_sandbox *sb;	/* must have been added; borrowed for the call */
	const struct policy *pol;	/* its new policy; borrowed for the call */
	bool replace_pins;	/* replace its pins with @pins */
	const struct pin *pins;	/* timeouts are the remaining lifetimes */
	size_t n_pins;		/* <= 65536 (a sandbox's pin limit) */
};

/*
 * fw_sandboxes_update() - a policy reload for @n sandboxes in ONE batch:
 * each one's chain (and once per policy its CIDR sets) is re-rendered from its new policy in
 * place (the interface hookup and established connections untouched); its
 * pins are kept, or replaced by exactly @pins if replace_pins.
 * Return: 0; -EINVAL (unknown sandbox, bad pin); -ENOSPC; -errno (nothing
 * changed: the kernel applies the batch whole or not at all).
 */
int fw_sandboxes_update(struct fw *fw, const struct fw_update *u, size_t n);

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
 * fw_sni_replies() - does forward queue the SNI check's server replies
 * (the kernel took a queue rule when fw_open() asked)?  Without them the
 * check cannot wait for a server's acknowledgment (netd/sni/flow.h) and
 * settles on what it read.
 */
bool fw_sni_replies(const struct fw *fw);

/*
 * fw_flowtable_state() - is the flowtable fast path in use (true), and if
 * not, why (@why, may be NULL: "disabled by configuration", or what the
 * kernel answered).  Borrowed: valid until fw_close().
 */
bool fw_flowtable_state(const struct fw *fw, const char **why);

/*
 * fw_flowtable_refresh() - the egress interface back among flowtable ft's
 * devices, if the flowtable is on and the interface exists (the kernel
 * drops a device that goes away, and one that comes back under its name is
 * not the same device).  One batch; the kernel keeps a device it has.
 * Return: 0; -errno (fw_last_error() says why).
 */
int fw_flowtable_refresh(struct fw *fw);

/*
 * fw_sandbox_add() - add (or replace) one sandbox: its policy's chain (if
 * new or changed) and CIDR sets filled from @pol's cidr rules, its mark,
 * quota, jump and anti-spoof elements; one batch.  Replacing drops its old
 * pins.  A policy with an egress quota needs @sb->ct_mark (-EINVAL).
 * Return: 0; -errno (nothing changed).
 */
int fw_sandbox_add(struct fw *fw, const struct fw_sandbox *sb, const struct policy *pol);

/*
 * fw_sandbox_set_dns() - the addresses on sandbox @name's host interface
 * where the proxy itself listens on UDP port 53 (a socket bound to them):
 * the sandbox's UDP queries to them, and the answers, skip conntrack and
 * the redirect (set dns_local4/6, chains prerouting_raw/output_raw/input).
 * Replaces what an earlier call set; family 0 = none (DNS to that address
 * reaches the proxy by the redirect, as all other DNS does).  Bind the
 * socket BEFORE setting an address, and clear it before closing the
 * socket: a query let through untracked with no socket would be lost.
 * Not for chained attachments.  fw_sandbox_del() removes them too.
 * Return: 0; -ENOENT (no such sandbox); -EINVAL; -errno (nothing changed).
 */
int fw_sandbox_set_dns(struct fw *fw, const char *name, const struct addr *dns4,
		       const struct addr *dns6);

/*
 * fw_sandbox_del() - remove everything fw_sandbox_add() made for @sb, in one
 * batch.  Missing pieces are not an error.  Return: 0; -errno.
 */
int fw_sandbox_del(struct fw *fw, const struct fw_sandbox *sb);

/*
 * fw_pin() - add @n pins for sandbox @name, each with its own timeout;
 * an existing element gets its timeout refreshed.  Blocks until the kernel
 * acknowledged the whole batch: after a 0 return the addresses are
 * reachable.  A gateway pin (struct pin.gateway, TCP only) goes into
 * gw4/6 (steered to the API gateway), never into pin4/6; both kinds count
 * against the limits.  Return: 0; -errno (-ENOENT: no such sandbox;
 * -ENOSPC: the sandbox would hold more than 65,536 live pins, or the
 * shared set is full; -EOPNOTSUPP: a gateway pin without a gateway port);
 * nothing is pinned on error.
 */
int fw_pin(struct fw *fw, const char *name, const struct pin *pins, size_t n);

/*
 * fw_pin_lookup() - is (@addr, @proto, @port) currently pinned for @name?
 * For tests and diagnostics (one netlink get).  @ret_expires_ms: remaining
 * time if found (may be NULL).  Return: 1 yes; 0 no; -errno.
 */
int fw_pin_lookup(struct fw *fw, const char *name, const struct addr *addr, uint8_t proto,
		  uint16_t port, uint64_t *ret_expires_ms);

/*
 * fw_pin_find() - fw_pin_lookup() for a pin of either kind: is (@addr,
 * @what->proto, @what->port) pinned for @name in pin4/6, or, if
 * @what->gateway, in gw4/6 (no gateway port: never)?  @what's address and
 * timeout are not read.  One netlink get.  @ret_expires_ms: remaining
 * time if found (may be NULL).  Return: 1 yes; 0 no; -errno.
 */
int fw_pin_find(struct fw *fw, const char *name, const struct addr *addr, const struct pin *what,
		uint64_t *ret_expires_ms);

/*
 * What `netd verify` reads back of one sandbox (fw_sandbox_check()): each
 * string is "" when the kernel has what fw rendered, else what is missing
 * or different (for the report).  Gets only: nothing is changed.
 */
struct fw_sb_check {
	char jump[128];		/* its element in sandbox_fwd (chained: chained_fwd4/6); sb_gwlim's */
	char ifs[96];		/* in sandbox_ifs, and in raw_ifs to its anti-spoofing chain */
	char src[96];		/* sandbox_src4/6: (interface . source), the anti-spoofing pair */
	char mark[96];		/* sb_mark4/6: its source -> its ct mark (if it has one) */
	char tap[96];		/* a tap's tap_ifs and tap_mac elements */
	char chain[64];		/* the policy chain it should jump to */
	bool mark_set, tap_set, chained;
};

/*
 * fw_sandbox_check() - read back sandbox @name's elements (fw.h draws
 * them) and compare them with what fw rendered last.  One netlink get per
 * element; the table is not changed.  @out: filled.
 * Return: 0 (@out says what held); -EINVAL; -ENOENT (fw has no such sandbox).
 */
int fw_sandbox_check(struct fw *fw, const char *name, struct fw_sb_check *out);

/* What `netd verify` reads back of the base rules every sandbox relies on. */
struct fw_base_check {
	char redirect[128];	/* "" or why not: prerouting_nat's UDP and TCP port 53 redirects */
	char spoof[128];	/* "" or why not: sandbox_raw's anti-spoofing drops */
	char tap_mac[128];	/* "" or why not: sandbox_raw's drop of a tap frame from another MAC */
};

/*
 * fw_base_check() - dump prerouting_nat and sandbox_raw and look for the
 * DNS redirects (l4proto udp/tcp, iifname @sandbox_ifs, redirect to the
 * proxy's port), the anti-spoofing drops (iifname . saddr not in
 * @sandbox_src4/6, drop) and a tap's MAC drop (iifname . ether saddr not
 * in @tap_mac, drop).  Read only.  Return: 0 (@out filled); -EINVAL.
 */
int fw_base_check(struct fw *fw, struct fw_base_check *out);

/*
 * Another table's forward-hook chain that stops a sandbox's traffic netd's
 * own forward chain accepted (fw_forward_blockers()).  nf_tables runs every
 * base chain on the hook: a drop in any of them wins over netd's accept.
 */
#define FW_BLOCKERS_MAX 16
struct fw_blocker {
	uint8_t family;		/* NFPROTO_IPV4 ("ip"), NFPROTO_IPV6 ("ip6"), NFPROTO_INET */
	char table[256];
	char chain[256];
	int32_t priority;
	bool policy_drop;	/* its policy is drop */
	bool drops;		/* every packet of the kind is dropped; false: it may be,
				 * by rules whose conditions netd cannot tell (ct state, ...) */
	bool egress;		/* what a sandbox sends is stopped (or may be) */
	bool reply;		/* what comes back to it is */
	bool docker_user;	/* its table has a DOCKER-USER chain (Docker's place for rules) */
};

/*
 * fw_forward_blockers() - every forward-hook base chain of families ip, ip6
 * (only if @ipv6: sandboxes have IPv6 addresses) and inet outside netd's
 * table that drops, or may drop, a packet between a sandbox's interface
 * ("nd" + 5 hex digits) and @egress_ifname, either way (netd/fw/fjudge.h:
 * interface conditions are judged, any other condition may or may not
 * hold, jumps are followed, the policy ends it).  Dumps only: nothing is
 * changed.  @out: at most @max, *@n_out of them filled.
 * Return: 0; -EINVAL; -ENOMEM; the kernel's -errno.
 */
int fw_forward_blockers(struct fw *fw, const char *egress_ifname, bool ipv6,
			struct fw_blocker *out, size_t max, size_t *n_out);

#endif
