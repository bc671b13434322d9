/*
 * tc - the traffic-control messages that shape a sandbox's interface
 * (rtnetlink RTM_NEWQDISC, RTM_NEWTCLASS, RTM_NEWTFILTER, their deletes and
 * gets; linux/pkt_sched.h, pkt_cls.h, tc_act/tc_mirred.h), built into a
 * caller's buffer, and the reply that reports a qdisc's counters parsed.
 * Pure: no socket, no logging; netd/link/shape.c sends them (through
 * rtnl.c) and tests/unit/test_tc.c checks their bytes.  What is built, one
 * direction on one device (docs/policies.md, "Bandwidth"):
 *
 *   qdisc htb 1: root default 1 direct_qlen 0 (rate estimator 1 s / 4 s)
 *     class htb 1:1 rate R ceil R burst B cburst B
 *       qdisc bfifo 10: limit Q                   (the queue: ~100 ms at R)
 *
 * and, to shape what arrives on a device (a sandbox's uploads), that same
 * shaper on an IFB device it is redirected to:
 *
 *   qdisc ingress ffff:
 *     filter u32 prio 1 protocol all handle 800::800 match u32 0 0
 *       action mirred egress redirect dev IFB
 */
#ifndef NETD_LINK_TC_H
#define NETD_LINK_TC_H

#include <stdbool.h>
#include <stdint.h>

struct nlmsghdr;

#define TC_HTB_HANDLE     0x00010000u	/* 1: */
#define TC_HTB_CLASS      0x00010001u	/* 1:1, the default class */
#define TC_LEAF_HANDLE    0x000a0000u	/* 10: */
#define TC_INGRESS_HANDLE 0xffff0000u	/* ffff: */
#define TC_FILTER_HANDLE  0x80000800u	/* 800::800, the u32 root hash table's first node */
#define TC_FILTER_PRIO    1

#define TC_QUEUE_MS       100		/* the leaf queue holds this long at the rate */
#define TC_QUEUE_MIN      (128u * 1024)	/* bytes: two 64 KiB GSO packets at least */
#define TC_QUEUE_MAX      (32u * 1024 * 1024)
#define TC_BURST_MS       20		/* the bucket: 20 ms at the rate (below) */
#define TC_BURST_MIN      3200u		/* bytes: two full Ethernet frames */
#define TC_BURST_MAX      (32u * 1024 * 1024)

/* One direction's shaper on one device. */
struct tc_shaper {
	int ifindex;
	uint64_t rate_bps;	/* bits per second (an IP packet with its Ethernet header) */
	uint32_t burst;		/* bytes the bucket holds */
	uint32_t queue;		/* bytes the leaf queue holds */
};

/*
 * tc_shaper_for() - the shaper of @rate_bps on @ifindex: its burst
 * (TC_BURST_MS at the rate, TC_BURST_MIN..TC_BURST_MAX) and queue
 * (TC_QUEUE_MS, TC_QUEUE_MIN..TC_QUEUE_MAX).  HTB sends a packet while the
 * bucket is not empty and lets it run into debt, so a 64 KiB GSO packet
 * passes whole at any rate and the bucket can stay small (the average
 * stays at the rate; TBF would have to split such packets).  The bucket
 * holds 20 ms because tokens beyond it are lost: when the host is busy the
 * qdisc's timer runs late, and with 4 ms a loaded 2-core host measured
 * 86-92% of the rate, with 20 ms 93-98% (docs/performance.md).
 */
struct tc_shaper tc_shaper_for(int ifindex, uint64_t rate_bps);

/*
 * tc_htb_qdisc() - RTM_NEWQDISC: htb 1: as @ifindex's root, default class
 * 1, no direct queue (what would bypass the classes is dropped), with a
 * rate estimator (1 s interval, 4 s average), flags
 * NLM_F_CREATE | NLM_F_EXCL (EEXIST: there already; HTB's options cannot
 * be changed in place).  @buf: >= MNL_SOCKET_BUFFER_SIZE bytes, the
 * message is built there.  Return: the message.
 */
struct nlmsghdr *tc_htb_qdisc(char *buf, int ifindex);

/*
 * tc_htb_class() - RTM_NEWTCLASS: class 1:1 of htb 1: at @s's rate (ceil =
 * rate; TCA_HTB_RATE64/CEIL64 at 2^32 bytes/s and over, where the 32-bit
 * field says ~0), buffer and cbuffer = @s->burst in psched ticks (64 ns),
 * flags NLM_F_CREATE (an existing class is changed in place: a reload's
 * new rate, queued packets kept).  Return: the message.
 */
struct nlmsghdr *tc_htb_class(char *buf, const struct tc_shaper *s);

/*
 * tc_leaf_qdisc() - RTM_NEWQDISC: bfifo 10: under 1:1, limit @s->queue
 * bytes, flags NLM_F_CREATE | NLM_F_REPLACE (an existing 10: gets the new
 * limit in place).  Return: the message.
 */
struct nlmsghdr *tc_leaf_qdisc(char *buf, const struct tc_shaper *s);

/* tc_root_del() - RTM_DELQDISC of @ifindex's root (the device's default returns). */
struct nlmsghdr *tc_root_del(char *buf, int ifindex);

/* tc_root_get() - RTM_GETQDISC of @ifindex's root: one reply with its counters. */
struct nlmsghdr *tc_root_get(char *buf, int ifindex);

/* tc_qdisc_dump() - RTM_GETQDISC dump: every qdisc of every device of the netns. */
struct nlmsghdr *tc_qdisc_dump(char *buf);

/* tc_ingress_qdisc() - RTM_NEWQDISC: ingress ffff: on @ifindex, NLM_F_CREATE | NLM_F_EXCL. */
struct nlmsghdr *tc_ingress_qdisc(char *buf, int ifindex);

/* tc_ingress_del() - RTM_DELQDISC of @ifindex's ingress (its filters go with it). */
struct nlmsghdr *tc_ingress_del(char *buf, int ifindex);

/*
 * tc_redirect_filter() - RTM_NEWTFILTER under @ifindex's ingress: u32,
 * every packet (one key, mask 0), handle TC_FILTER_HANDLE, prio
 * TC_FILTER_PRIO, protocol all, action mirred egress redirect to
 * @to_ifindex (TC_ACT_STOLEN), flags NLM_F_CREATE | NLM_F_EXCL.
 * Return: the message.
 */
struct nlmsghdr *tc_redirect_filter(char *buf, int ifindex, int to_ifindex);

/* What an RTM_NEWQDISC message (a get's or dump's reply) says. */
struct tc_qstats {
	int ifindex;
	uint32_t handle, parent;
	char kind[16];
	uint64_t bytes, packets;	/* dequeued (sent on) */
	uint32_t drops, backlog, qlen;
	uint64_t rate_bps;	/* the rate estimator's, bits per second; 0 without one */
	bool has_rate;
};

/*
 * tc_qdisc_parse() - decode RTM_NEWQDISC @nlh (TCA_KIND, TCA_STATS2:
 * basic, queue, rate estimator) into @out (zeroed first).
 * Return: 0; -EBADMSG (not a qdisc message, or a bad attribute length);
 * -ENOMSG (another message type).
 */
int tc_qdisc_parse(const struct nlmsghdr *nlh, struct tc_qstats *out);

#endif
