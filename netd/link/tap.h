/*
 * tap - tap devices for microVM sandboxes (Firecracker, Cloud Hypervisor,
 * QEMU microvm): a persistent tap netd creates in its own netns through
 * /dev/net/tun, owned by the user whose VMM will attach to it, and the
 * pure helpers for the guest's static configuration (MAC, kernel ip=
 * argument, MTU, owner syntax).
 *
 * Not here: addresses, routes and nf_tables (the daemon puts the gateway
 * addresses on the tap through link.c and gives it the veth sandboxes'
 * rules through fw.c), and the VMM itself.
 */
#ifndef NETD_TAP_H
#define NETD_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/addr.h"

#define TAP_IFNAME_PREFIX "ndt"	/* taps netd names itself: "ndt" + 4 hex digits */
#define TAP_QUEUES_MAX    256	/* the kernel's MAX_TAP_QUEUES */
#define TAP_MTU_MIN       1280	/* RFC 8200 5: IPv6's minimum link MTU */
#define TAP_MTU_MAX       65521	/* tun's own limit (MAX_MTU less headers) */
#define TAP_MTU_DEFAULT   1500
#define TAP_MAC_STRLEN    18	/* "02:xx:xx:xx:xx:xx" and NUL */
#define TAP_IP_ARG_MAX    96
#define TAP_NO_GROUP      ((gid_t)-1)

struct tap_spec {
	const char *ifname;	/* at most 15 bytes */
	uid_t owner;		/* the VMM's user; required: never ownerless */
	gid_t group;		/* a group that may attach too, or TAP_NO_GROUP */
	unsigned queues;	/* 1, or 2..TAP_QUEUES_MAX: IFF_MULTI_QUEUE */
	unsigned mtu;		/* TAP_MTU_MIN..TAP_MTU_MAX; 0: leave the kernel's 1500 */
};

/*
 * tap_create() - create the persistent tap @s->ifname in the caller's netns.
 * Order is the safety property: the device is born attached to netd's fd
 * (not yet persistent), gets its owner (and group), and only then is made
 * persistent, so a failure at any step closes the fd and the device is
 * gone; at no moment does a persistent tap exist that any user could
 * attach to.  Flags: IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, IFF_MULTI_QUEUE
 * when @s->queues > 1 (the VMM must then open it multi-queue too; the
 * VMM's own TUNSETIFF sets the per-attach flags such as the vnet header).
 * IFF_TUN_EXCL: an existing interface of that name is never taken over.
 * Return: 0; -EINVAL (bad spec, no owner); -EEXIST (the name exists);
 * -errno from /dev/net/tun (-EPERM without CAP_NET_ADMIN).
 */
int tap_create(const struct tap_spec *s);

/*
 * tap_delete() - delete the tap @ifname (RTM_DELLINK), even while a VMM
 * still holds it open (its queues are detached).  Missing is not an error.
 * Return: 0; -errno.
 */
int tap_delete(const char *ifname);

/*
 * tap_configure() - put the gateway addresses on the tap @ifname in the
 * caller's netns (@host4, @host6: interface addresses with their prefix
 * length, e.g. 10.87.0.5/30; family 0 = none; IPv6 without DAD) and bring
 * it up.  Idempotent (a restart re-applies it): an address that is already
 * there is replaced.  Call it only after the tap's rules are in place: a
 * tap that is down drops what a VMM writes into it.
 * Return: 0; -ENODEV; -errno.
 */
int tap_configure(const char *ifname, const struct prefix *host4, const struct prefix *host6);

struct tap_info {
	bool is_tap;		/* a tun device in tap mode */
	bool persist, multi_queue, vnet_hdr;
	bool has_owner, has_group;
	uid_t owner;
	gid_t group;
	unsigned attached;	/* queues a VMM has open now */
	unsigned mtu;
};

/*
 * tap_query() - what the kernel says about the tun device @ifname in the
 * caller's netns (RTM_GETLINK, IFLA_INFO_KIND "tun", IFLA_TUN_*).  A
 * restart checks with it that a recorded tap is still netd's.
 * Return: 0; -ENODEV (no such interface); -EMEDIUMTYPE (not a tun
 * device); -errno.
 */
int tap_query(const char *ifname, struct tap_info *ret);

#define TAP_INJECT_MAX 1514	/* tap_inject(): an Ethernet frame, at most */

/*
 * tap_hwaddr() - the host side's own MAC of @ifname (SIOCGIFHWADDR), in
 * the caller's netns, into @mac (6 octets): the destination a guest's
 * unicast frame to its gateway carries.  Return: 0; -EINVAL; -errno.
 */
int tap_hwaddr(const char *ifname, uint8_t mac[6]);

/*
 * tap_inject() - write @n Ethernet frames (@frames[i], @lens[i] bytes,
 * 14..TAP_INJECT_MAX, borrowed) into the tap @ifname as its guest would:
 * they arrive as the tap's received frames, through the host's ingress
 * (raw prerouting and the rest) exactly like the guest's own.  netd
 * attaches a queue (TUNSETIFF on the name, the device's own flags),
 * writes, and closes it, all in this call; the persistent tap stays.
 * Only while no VMM holds a queue of it: attaching to a running guest's
 * tap would take host->guest frames (a multi-queue tap spreads them over
 * every queue, and a queue netd does not read loses them) and a
 * single-queue tap has no second queue to give.  A VMM that starts in the
 * microseconds netd holds a single-queue tap sees EBUSY from TUNSETIFF.
 * (An AF_PACKET send on the tap goes the other way, to the guest.)
 * Return: 0 (all written); -EBUSY (a VMM holds it: nothing written);
 * -ENODEV; -EMEDIUMTYPE (not a tap); -EINVAL; -errno.
 */
int tap_inject(const char *ifname, const uint8_t *const frames[], const size_t lens[], size_t n);

/* ---- pure helpers ------------------------------------------------------ */

/*
 * tap_ifname() - netd's own name for slot @slot's tap: "ndt" + 4 lower-case
 * hex digits (slots < 0x10000) into @buf (>= 16 bytes).  Disjoint from the
 * veths' "nd" + 5 hex digits ('t' is not a hex digit).
 * Return: 0; -ERANGE (slot too big); -ENOSPC.
 */
int tap_ifname(uint32_t slot, char *buf, size_t sz);

/*
 * tap_mac_from_name() - the guest's MAC for sandbox @name: FNV-1a 64 of the
 * name, first octet's low bits set to locally administered (bit 1) unicast
 * (bit 0 clear), IEEE 802 "U/L" and "I/G" bits.  Stable across restarts.
 * @mac: 6 octets, filled.
 */
void tap_mac_from_name(const char *name, uint8_t mac[6]);

/* tap_mac_format() - "02:ab:..." (lower case) into @buf (>= TAP_MAC_STRLEN). */
void tap_mac_format(const uint8_t mac[6], char buf[TAP_MAC_STRLEN]);

/*
 * tap_mac_parse() - "xx:xx:xx:xx:xx:xx" (hex, either case) into @mac; the
 * address must be unicast and not all zeros.  Return: 0; -EINVAL.
 */
int tap_mac_parse(const char *s, uint8_t mac[6]);

/*
 * tap_kernel_ip_arg() - the Linux kernel's static IP argument for the guest
 * (Documentation/admin-guide/nfs/nfsroot.rst, "ip="):
 * "ip=GUEST::GATEWAY:NETMASK::eth0:off", no server, hostname or DNS fields
 * (netd answers DNS on the gateway and redirects any other resolver to it).
 * @guest4/@gw4 IPv4, @plen4 1..32.  Into @buf/@sz.
 * Return: length written (without NUL); -EINVAL; -ENOSPC.
 */
int tap_kernel_ip_arg(const struct addr *guest4, const struct addr *gw4, unsigned plen4,
		      char *buf, size_t sz);

/*
 * tap_mtu() - the MTU for the tap and the guest: @want if non-zero (must be
 * within TAP_MTU_MIN..TAP_MTU_MAX), else the uplink's @uplink_mtu when that
 * is smaller than 1500 (so the guest never sends what the uplink would
 * have to fragment or drop), but not below TAP_MTU_MIN, else 1500.
 * Return: the MTU; -ERANGE (@want out of range).
 */
int tap_mtu(unsigned want, unsigned uplink_mtu);

/*
 * tap_owner_parse() - "UID" or "UID:GID" (decimal) into @uid/@gid
 * (TAP_NO_GROUP when no GID is given).  Names are resolved by the CLI, not
 * here.  (uid_t)-1 is "no user" to the kernel and is refused.
 * Return: 0; -EINVAL.
 */
int tap_owner_parse(const char *s, uid_t *uid, gid_t *gid);

#endif
