/*
 * netd/fw/ - everything netd puts into nf_tables: a pure renderer (base.c,
 * pchain.c, sandbox.c, flowtable.c, expr.c, emit.c, ruleset.c), the batch
 * (batch.c), nl.c (the only nf_tables socket), the transactions (fw.c,
 * reconcile.c, update.c, ftdev.c).  Public interface: netd/fw.h.
 */
/*
 * base - the base ruleset fw_open() creates: table inet NAME with its sets,
 * verdict maps and base chains, and table bridge NAME for chained
 * attachments (netd/fw.h draws both).  Pure renderer: appends to a batch.
 *
 * The order of the rules is the policy; each function renders one chain
 * (or one part of one), in the order render_base() calls them.
 */
#include "netd/fw/render.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_ether.h>
#include <linux/netfilter.h>
#include <linux/netfilter_arp.h>
#include <linux/netfilter_bridge.h>

#include "common/reason.h"

/* Link-local and DAD's "::": the IPv6 sources neighbour discovery needs. */
static const struct prefix nd_srcs[2] = {
	{ { AF_INET6, { 0xfe, 0x80 } }, 10 },
	{ { AF_INET6, { 0 } }, 128 },
};

/* Families the ruleset serves: IPv4, and IPv6 when a pool6 is configured. */
static size_t n_fams(const struct bt *bt)
{
	return fw_rcfg_v6(bt->rc) ? 2 : 1;
}

/* The pool of family @f, or NULL if not configured. */
static const struct prefix *pool_of(const struct bt *bt, const struct fw_fam *f)
{
	const struct prefix *p = f == FW_FAM_V4 ? &bt->rc->pool4 : &bt->rc->pool6;

	return p->addr.family == f->af ? p : NULL;
}

/*
 * Start a rule of @chain in @rb: the source is in @f's pool.  false (nothing
 * started): no pool of that family.
 */
static bool rb_pool_src(struct bt *bt, struct rb *rb, const char *chain, const struct fw_fam *f)
{
	const struct prefix *pool = pool_of(bt, f);

	if (!pool)
		return false;
	rb_init(rb, bt->rc, chain);
	fm_nfproto(rb, f->nfproto);
	fm_prefix(rb, f->saddr_off, pool);
	return true;
}

/*
 * The elements of interval set @set: the merged @internal prefixes of @f,
 * as nft sends rbtree intervals: an opening interval-end at 0 (unless a
 * range starts there), then start / end+1 pairs; a range reaching the top
 * of the address space has no end element.
 */
static void internal_elems(struct bt *bt, const struct prefix *internal, size_t n_internal,
			   const struct fw_fam *f, const char *set)
{
	struct ruleset_range *r = calloc(RULESET_ELEMS_MAX, sizeof(*r));
	uint8_t zero[16] = { 0 };
	struct nftnl_set_elem *e;
	struct elemq q;
	int n;

	if (!r) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	n = ruleset_merge_prefixes(f->af, internal, n_internal, r, RULESET_ELEMS_MAX);
	if (n < 0) {
		bt_fail(bt, n);
		free(r);
		return;
	}
	elq_init(&q, bt, NFT_MSG_NEWSETELEM, set);
	if (n > 0 && memcmp(r[0].lo, zero, f->alen) != 0) {
		e = elem_new(zero, f->alen);
		if (e)
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
		elq_add(&q, e);
	}
	for (int i = 0; i < n; i++) {
		uint8_t end[16];
		size_t j;

		elq_add(&q, elem_new(r[i].lo, f->alen));
		memcpy(end, r[i].hi, f->alen);
		for (j = f->alen; j-- > 0;)
			if (++end[j] != 0)
				break;
		if (j == (size_t)-1)
			continue;	/* wrapped: the range ends at the last address */
		e = elem_new(end, f->alen);
		if (e)
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
		elq_add(&q, e);
	}
	elq_flush(&q);
	free(r);
}

/* A set of at most @size elements (0: no bound; 1 element per sandbox: FW_SANDBOX_SET_SIZE). */
static void base_set_sized(struct bt *bt, const char *name, uint32_t type, uint32_t len,
			   uint32_t flags, uint32_t size)
{
	struct setdef d;

	setdef_plain(&d, name, type, len, flags);
	d.verdict_map = (flags & NFT_SET_MAP) != 0;
	d.size = size;
	bt_set(bt, NFT_MSG_NEWSET, &d);
}

static void base_set(struct bt *bt, const char *name, uint32_t type, uint32_t len,
		     uint32_t flags)
{
	base_set_sized(bt, name, type, len, flags, 0);
}

/*
 * A set with an element per sandbox (its interface, or its interface and
 * address): bounded by the sandboxes a host can have, so the kernel gives
 * it the fixed-size hash, whose lookup skips the resizable hash's table
 * indirection - most of these are looked up for every packet a sandbox
 * sends (docs/performance.md).
 */
static void sandbox_set(struct bt *bt, const char *name, uint32_t type, uint32_t len,
			uint32_t flags)
{
	base_set_sized(bt, name, type, len, flags, FW_SANDBOX_SET_SIZE);
}

static void base_sets(struct bt *bt, const struct prefix *internal, size_t n_internal)
{
	sandbox_set(bt, "sandbox_ifs", TYPE_IFNAME, IFNAMSIZ, 0);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		sandbox_set(bt, fw_fam_name("sandbox_src", f).s, TYPE_IFNAME << TYPE_BITS | f->addr_type,
			 IFNAMSIZ + f->alen, 0);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		sandbox_set(bt, fw_fam_name("dns_local", f).s, TYPE_IFNAME << TYPE_BITS | f->addr_type,
			 IFNAMSIZ + f->alen, 0);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		struct fw_name n = fw_fam_name("internal", f);

		base_set(bt, n.s, f->addr_type, f->alen, NFT_SET_INTERVAL);
		internal_elems(bt, internal, n_internal, f, n.s);
	}
	/*
	 * The pins of every sandbox, keyed by its source address (made
	 * trustworthy by the anti-spoofing rules): one set per family, so a
	 * create, delete or reload never makes or looks up per-sandbox sets
	 * (nf_tables finds sets by name in a list).  Kept across a restart.
	 */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		struct setdef d;

		setdef_pin(&d, f);
		bt_set(bt, NFT_MSG_NEWSET, &d);
	}
	/* The gateway pins likewise (only with a gateway port). */
	render_gw_sets(bt);
	sandbox_set(bt, "sandbox_fwd", TYPE_IFNAME, IFNAMSIZ, NFT_SET_MAP);
	/*
	 * prerouting_raw's one lookup for every packet: a sandbox interface ->
	 * goto its anti-spoofing chain (sandbox_raw, or tap_raw for a tap).
	 */
	sandbox_set(bt, "raw_ifs", TYPE_IFNAME, IFNAMSIZ, NFT_SET_MAP);
	/*
	 * What the policy chains (pchain.c) read of each sandbox: its mark by
	 * source address, then by mark its quota object and its reject rate
	 * (the packet path's own elements, kept across a restart).
	 */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		struct setdef d;

		setdef_mark_map(&d, f);
		bt_set(bt, NFT_MSG_NEWSET, &d);
	}
	{
		struct setdef d;

		setdef_quota_map(&d);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		setdef_by_mark(&d, "sb_reject");
		bt_set(bt, NFT_MSG_NEWSET, &d);
	}
	/* Taps (microVMs): the guest's MAC, beside its addresses. */
	sandbox_set(bt, "tap_ifs", TYPE_IFNAME, IFNAMSIZ, 0);
	sandbox_set(bt, "tap_mac", TYPE_IFNAME << TYPE_BITS | TYPE_ETHERADDR, FKEY_IFMAC_LEN, 0);
	/*
	 * Chained attachments (an interface another CNI plugin made, behind
	 * a bridge): the inet hooks see the bridge as iif, never the
	 * container's veth, so they are known by source address instead.
	 * The bridge table makes that address trustworthy.
	 */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		base_set(bt, fw_fam_name("chained_src", f).s, f->addr_type, f->alen, 0);
	/*
	 * The families some chained attachment has an address of (never
	 * emptied but with the table: a gate that stays open is only the old
	 * cost): prerouting_raw's chained checks run behind it, so without
	 * chained attachments every other packet pays a test of a one-byte key
	 * there (the kernel's bitmap set type), not a hash lookup.
	 */
	base_set(bt, "chained_fams", TYPE_NFPROTO, 1, 0);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		base_set(bt, fw_fam_name("chained_fwd", f).s, f->addr_type, f->alen, NFT_SET_MAP);
}

static void base_chains(struct bt *bt)
{
	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting_raw", NF_INET_PRE_ROUTING, PRIO_RAW, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting_nat", NF_INET_PRE_ROUTING, PRIO_DSTNAT, "nat");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "input", NF_INET_LOCAL_IN, PRIO_FILTER, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "forward", NF_INET_FORWARD, PRIO_FILTER, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "postrouting_nat", NF_INET_POST_ROUTING, PRIO_SRCNAT, "nat");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "output_raw", NF_INET_LOCAL_OUT, PRIO_RAW, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "chained_in", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "sandbox_raw", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "tap_raw", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "metered_raw", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "metered_tap_raw", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "chained_raw", -1, 0, NULL);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "sni_reply", -1, 0, NULL);
}

/*
 * A rule of @chain: [@fam's nfproto,] then a counter, a deny log (@reason) and drop.
 * @reason is the deny record's (reason_deny_name()), but for two prefixes of
 * the trail's own: "to-sandbox" (recorded as sandbox-to-sandbox) and
 * "no-sandbox-chain"; NULL: no log.
 */
static void rule_drop(struct bt *bt, struct rb *rb, const char *reason)
{
	fx_counter(rb);
	if (reason)
		fx_deny_log(rb, bt->rc, reason);
	fx_verdict(rb, NF_DROP);
	bt_rule(bt, rb);
}

static void rule_accept(struct bt *bt, struct rb *rb)
{
	fx_verdict(rb, NF_ACCEPT);
	bt_rule(bt, rb);
}

/*
 * prerouting_raw and output_raw: anti-spoofing, before conntrack sees the
 * packet.  Every packet of every sandbox crosses prerouting_raw, and so does
 * every reply, so the order is by what each packet pays:
 *
 *   prerouting_raw: iifname vmap @raw_ifs        a sandbox's packet: one lookup, then
 *                                                only its own checks (goto)
 *                   ip saddr POOL4 drop          the pools on any other interface
 *                   ip6 saddr POOL6 drop         (compares, no lookup)
 *                   meta nfproto @chained_fams goto chained_raw
 *   chained_raw:    ip saddr @chained_src4 ...   a chained source not from its port
 *   metered_raw:    meta mark |= FW_METERED_MARK; goto sandbox_raw
 *   metered_tap_raw: meta mark |= FW_METERED_MARK; goto tap_raw
 *   tap_raw:        iifname . ether saddr != @tap_mac drop; goto sandbox_raw
 *   sandbox_raw:    IPv4 first (its DNS notrack, iifname . saddr @sandbox_src4
 *                   accept, drop), then IPv6 (neighbour discovery, the same three)
 *
 * A packet that passes the end of a chain reached by goto meets
 * prerouting_raw's policy: accept.  A pool source on an interface that is
 * not (or not yet, or no longer) a sandbox's is dropped here for input and
 * forward alike, so a sandbox whose chain is missing for any reason (a
 * restart re-adding sandboxes, a half-failed create, a deleted sandbox's
 * veth still up) fails closed, and forward's established packets meet no
 * such rule before the fast path.
 */
static void raw_dispatch(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	rb_init(&rb, rc, "prerouting_raw");
	fx_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
	fx_lookup(&rb, "raw_ifs", NFT_REG_1, NFT_REG_VERDICT, false);
	bt_rule(bt, &rb);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		if (rb_pool_src(bt, &rb, "prerouting_raw", f))
			rule_drop(bt, &rb, NULL);
	/*
	 * A chained container's source address is only believed on a packet
	 * the bridge table checked at the container's own port (the mark):
	 * from anywhere else (the uplink, another interface) it is a spoof.
	 * Behind the chained_fams gate (a family with no chained address has
	 * no chained source to spoof).
	 */
	rb_init(&rb, rc, "prerouting_raw");
	fx_meta(&rb, NFT_META_NFPROTO, NFT_REG_1);
	fx_lookup(&rb, "chained_fams", NFT_REG_1, -1, false);
	fx_goto(&rb, "chained_raw");
	bt_rule(bt, &rb);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		rb_init(&rb, rc, "chained_raw");
		fm_addr_in(&rb, f, false, fw_fam_name("chained_src", f).s, false);
		fm_marks_clear(&rb, FW_CHAINED_MARK);
		rule_drop(bt, &rb, reason_deny_name(REASON_DENY_SPOOF));
	}
}

/*
 * tap_raw.  A tap's guest writes whole frames: one whose Ethernet source
 * is not the guest's MAC is a spoof, whatever it carries (and before the
 * neighbour discovery exceptions of sandbox_raw, which it must not ride).
 * metered_raw and metered_tap_raw: a metered sandbox's way in (its raw_ifs
 * element), the mark forward's fast path tests, then the same checks.
 */
static void raw_tap_metered(struct bt *bt)
{
	static const char *const metered[2][2] = { { "metered_raw", "sandbox_raw" },
						   { "metered_tap_raw", "tap_raw" } };
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	rb_init(&rb, rc, "tap_raw");
	fx_meta(&rb, NFT_META_IIFNAME, REG32(0));
	fx_payload(&rb, NFT_PAYLOAD_LL_HEADER, 6, 6, REG32(4));
	fx_lookup(&rb, "tap_mac", REG32(0), -1, true);
	rule_drop(bt, &rb, reason_deny_name(REASON_DENY_SPOOF));
	rb_init(&rb, rc, "tap_raw");
	fx_goto(&rb, "sandbox_raw");
	bt_rule(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, metered[i][0]);
		fx_mark_or(&rb, FW_METERED_MARK);
		fx_goto(&rb, metered[i][1]);
		bt_rule(bt, &rb);
	}
}

/*
 * sandbox_raw, a family at a time, IPv4 (the most) first: a packet meets
 * the DNS notrack, then the accept of its own source (iifname . saddr
 * @sandbox_src4/6), then its family's drop: an IPv4 packet is decided by
 * the first two rules (no drop rule with an inverted lookup, no accept
 * rule after it), and never meets the IPv6 rules.
 */
static void raw_sandbox(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		/* The ICMPv6 exceptions neighbour discovery needs must precede the drop. */
		for (size_t i = 0; f == FW_FAM_V6 && fw_rcfg_v6(rc) && i < 2; i++) {
			/* Cheap compares before set lookups. */
			rb_init(&rb, rc, "sandbox_raw");
			fm_nfproto(&rb, NFPROTO_IPV6);
			fm_prefix(&rb, FW_FAM_V6->saddr_off, &nd_srcs[i]);
			fm_l4proto(&rb, IPPROTO_ICMPV6);
			rule_accept(bt, &rb);
		}
		/*
		 * A sandbox's UDP query to its gateway's port 53, where the
		 * proxy listens itself (dns_local4/6): no conntrack entry (and
		 * so no redirect) for it or for the answer - the busiest flow
		 * there is costs neither a lookup nor NAT per packet.  Untracked
		 * before the source check decides (a forged one is dropped all
		 * the same); input accepts it by the same set.
		 */
		if (f == FW_FAM_V4 || fw_rcfg_v6(rc)) {
			rb_init(&rb, rc, "sandbox_raw");
			fm_dns_local(&rb, f, false);
			fx_notrack(&rb);
			bt_rule(bt, &rb);
			rb_init(&rb, rc, "output_raw");
			fm_dns_local(&rb, f, true);
			fx_notrack(&rb);
			bt_rule(bt, &rb);
		}
		rb_init(&rb, rc, "sandbox_raw");
		fm_ifaddr_in(&rb, NFT_META_IIFNAME, f, false, fw_fam_name("sandbox_src", f).s);
		rule_accept(bt, &rb);
		rb_init(&rb, rc, "sandbox_raw");
		fm_nfproto(&rb, f->nfproto);
		rule_drop(bt, &rb, reason_deny_name(REASON_DENY_SPOOF));
	}
}

static void base_raw(struct bt *bt)
{
	raw_dispatch(bt);
	raw_tap_metered(bt);
	raw_sandbox(bt);
}

/* prerouting_nat: all sandbox DNS, whatever the destination, to the proxy. */
static void base_prerouting_nat(struct bt *bt)
{
	static const uint8_t protos[2] = { IPPROTO_UDP, IPPROTO_TCP };
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, "prerouting_nat");
		fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		fm_l4proto(&rb, protos[i]);
		fm_dport(&rb, 53);
		fx_redirect(&rb, rc->dns_port);
		bt_rule(bt, &rb);
	}
	/* The same for chained attachments, known by their source address. */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		for (int i = 0; i < 2; i++) {
			rb_init(&rb, rc, "prerouting_nat");
			fm_addr_in(&rb, f, false, fw_fam_name("chained_src", f).s, false);
			fm_l4proto(&rb, protos[i]);
			fm_dport(&rb, 53);
			fx_redirect(&rb, rc->dns_port);
			bt_rule(bt, &rb);
		}
	/* Connections to a gateway pin: to the API gateway (gwsteer.c). */
	render_gw_nat(bt, n_fams(bt));
}

/*
 * input, first: a sandbox's query to the proxy, the one packet every DNS
 * lookup sends here, accepted without the rules below (what they would
 * decide for it: the source was checked in prerouting_raw, and chained_in
 * accepts the proxy port too).  (Pool addresses arriving on an interface
 * that is not a sandbox's never get here: prerouting_raw drops them.)
 */
static void base_input_head(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	for (size_t i = 0; i < n_fams(bt); i++) {
		rb_init(&rb, rc, "input");
		fm_nfproto(&rb, fw_fams[i].nfproto);
		fm_l4proto(&rb, IPPROTO_UDP);
		fm_dport(&rb, rc->dns_port);
		fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		rule_accept(bt, &rb);
		/* The untracked query to the gateway's own :53 (prerouting_raw). */
		rb_init(&rb, rc, "input");
		fm_dns_local(&rb, &fw_fams[i], false);
		rule_accept(bt, &rb);
	}
	/* A steered connection to the API gateway's port (gwsteer.c). */
	render_gw_input(bt, n_fams(bt));
}

/* @chain (input, chained_in): accept ICMPv6 of types @lo..@hi (one type if equal). */
static void input_icmpv6_accept(struct bt *bt, const char *chain, uint8_t lo, uint8_t hi)
{
	struct rb rb;
	struct nftnl_expr *e;

	rb_init(&rb, bt->rc, chain);
	fm_nfproto(&rb, NFPROTO_IPV6);
	fm_l4proto(&rb, IPPROTO_ICMPV6);
	fx_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
	if (lo == hi) {
		fx_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, &lo, 1);
		rule_accept(bt, &rb);
		return;
	}
	e = fx_new(&rb, "range");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
		nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, &lo, 1);
		nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, &hi, 1);
	}
	rule_accept(bt, &rb);
}

/*
 * RFC 4861 Neighbour Discovery from a sandbox: Router Solicitation (133),
 * Neighbour Solicitation and Advertisement (135-136), into @chain.  Never
 * a Router Advertisement (134) or a Redirect (137): a host that takes RAs
 * while forwarding (accept_ra=2, inherited by every new veth) would
 * install a default route through the sandbox.
 */
static void input_nd_accept(struct bt *bt, const char *chain)
{
	if (!fw_rcfg_v6(bt->rc))
		return;
	input_icmpv6_accept(bt, chain, 133, 133);
	input_icmpv6_accept(bt, chain, 135, 136);
}

/*
 * input, chained attachments first (they arrive on a bridge, not on one of
 * sandbox_ifs, so the proxy-port drop below would hit their redirected
 * DNS): chain chained_in, replies and the DNS proxy only.  Their sources
 * are vouched for by the bridge table's anti-spoofing.  Then the proxy
 * port is for sandboxes only (and local tools on lo): from the uplink it
 * would be a free resolver and a way to fill the proxy's TCP slots, or to
 * pose as a sandbox with an IPv4-mapped source.
 */
static void base_input_chained(struct bt *bt)
{
	static const uint8_t protos[2] = { IPPROTO_UDP, IPPROTO_TCP };
	static const char lo[IFNAMSIZ] = "lo";
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		rb_init(&rb, rc, "input");
		fm_addr_in(&rb, f, false, fw_fam_name("chained_src", f).s, false);
		fx_goto(&rb, "chained_in");
		bt_rule(bt, &rb);
	}
	rb_init(&rb, rc, "chained_in");
	fm_ct_est(&rb);
	rule_accept(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, "chained_in");
		fm_l4proto(&rb, protos[i]);
		fm_dport(&rb, rc->dns_port);
		rule_accept(bt, &rb);
	}
	render_gw_chained_in(bt);
	/* Its neighbour discovery: a container with a global address solicits
	 * its gateway from it (RFC 4861 7.2.2), a source in chained_src6. */
	input_nd_accept(bt, "chained_in");
	rb_init(&rb, rc, "chained_in");
	rule_drop(bt, &rb, reason_deny_name(REASON_DENY_TO_HOST));

	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, "input");
		fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
		fx_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
		fx_cmp(&rb, NFT_REG_1, NFT_CMP_NEQ, lo, IFNAMSIZ);
		fm_l4proto(&rb, protos[i]);
		fm_dport(&rb, rc->dns_port);
		rule_drop(bt, &rb, NULL);
	}
	render_gw_input_drop(bt);
}

/*
 * A "port unreachable" about an untracked answer (the proxy's reply to a
 * client that had gone): conntrack cannot call it related, and it is not a
 * denied attempt worth a record.  Dropped quietly - only that: type and
 * code, and the packet it quotes is UDP from port 53 (netd's answers carry
 * no IP options: the quoted UDP header is at a fixed offset).
 */
static void input_icmp_unreach_53(struct bt *bt, const struct fw_fam *f)
{
	uint8_t udp = IPPROTO_UDP;
	/* the quoted IP header starts 8 bytes in: its protocol field, and the
	 * UDP source port right after it (netd's answers carry no options) */
	uint32_t proto_off = 8u + f->proto_off, sport_off = 8u + f->hdr_len;
	uint16_t port53 = htons(53);
	struct rb rb;

	rb_init(&rb, bt->rc, "input");
	fm_nfproto(&rb, f->nfproto);
	fm_l4proto(&rb, f->icmp);
	fx_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_1);
	fx_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, f->port_unreach, 2);
	fx_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, proto_off, 1, NFT_REG_1);
	fx_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, &udp, 1);
	fx_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, sport_off, 2, NFT_REG_1);
	fx_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, &port53, 2);
	rule_drop(bt, &rb, NULL);
}

/* input, the rest: a sandbox may reach only the DNS proxy (and ND) on the host. */
static void base_input_tail(struct bt *bt)
{
	static const uint8_t protos[2] = { IPPROTO_UDP, IPPROTO_TCP };
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	rb_init(&rb, rc, "input");
	fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
	rule_accept(bt, &rb);
	if (!fw_rcfg_v6(rc)) {
		rb_init(&rb, rc, "input");
		fm_nfproto(&rb, NFPROTO_IPV6);
		rule_drop(bt, &rb, reason_deny_name(REASON_DENY_IPV6_DISABLED));
	}
	rb_init(&rb, rc, "input");
	fm_ct_est(&rb);
	rule_accept(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, "input");
		fm_l4proto(&rb, protos[i]);
		fm_dport(&rb, rc->dns_port);
		rule_accept(bt, &rb);
	}
	input_nd_accept(bt, "input");
	for (size_t i = 0; i < n_fams(bt); i++)
		input_icmp_unreach_53(bt, &fw_fams[i]);
	rb_init(&rb, rc, "input");
	rule_drop(bt, &rb, reason_deny_name(REASON_DENY_TO_HOST));
}

/*
 * forward, the fast path: an established packet is accepted by the first
 * rule it can match, whatever its direction - what the rules below would
 * decide for it too, except where they still have work.  Not a related
 * one: an ICMP error a sandbox sends from its own address is "related" to
 * whatever connection its inner header names, another sandbox's included,
 * and leaves NATed as part of it; a sandbox's related packets go on to
 * its policy's chain, which never accepts them (fw/pchain.c), replies
 * related to a sandbox's connection (a "fragmentation needed" for its
 * path MTU) to the rule below that accepts them.  Also off the fast path:
 *  - a sandbox with an egress quota or an SNI/Host check (FW_METERED_MARK,
 *    set in prerouting_raw; fw/pchain.c pchain_slow_path()): its quota rule
 *    counts every packet it sends, the check queues the first payload
 *    packets of established connections, so those go on to its policy
 *    chain (replies to it take the fast path);
 *  - a chained attachment (the bridge table's mark): its policy chain, by address;
 *  - what the rule above this one drops: IPv6 when disabled (a pool
 *    source on an interface that is not a sandbox's, a sandbox deleted,
 *    its veth still up, is dropped in prerouting_raw, before conntrack).
 * Conntrack, NAT and the anti-spoofing in prerouting_raw are untouched; a
 * connection whose entry ctcut deletes comes back as "new" and meets its
 * policy chain.  Cheap tests first: ct state fails for every new
 * connection's first packet; the one mark test (both bits) costs no lookup.
 */
static void forward_fast(struct bt *bt)
{
	struct rb rb;

	if (!bt->rc->fast_path)
		return;
	rb_init(&rb, bt->rc, "forward");
	fm_ct_est_only(&rb);
	fm_marks_clear(&rb, FW_CHAINED_MARK | FW_METERED_MARK);
	rule_accept(bt, &rb);
}

/*
 * forward, first: a server's reply in a connection the SNI check still
 * watches (fw.h FW_SNI_WATCH_*; netd clears them with the done bit) goes
 * to the check's queue of the same mode, so netd sees what the server
 * acknowledged:
 *
 *   forward:   ct mark & 0x30000 != 0 jump sni_reply
 *   sni_reply: ct mark & 0x38000 == WATCH_ENFORCE ct direction reply queue num 4100
 *              ct mark & 0x38000 == WATCH_LOG ct direction reply queue num 4101 bypass
 *
 * One rule for every other packet, the mark test, which costs no lookup.
 * The sandbox's own packets return (its policy chain queues them).  An
 * accept from the queue ends forward for the packet, so neither the fast
 * path nor the flowtable takes the connection before netd is done.
 */
static void forward_sni_replies(struct bt *bt)
{
	static const uint32_t watch[2] = { FW_SNI_WATCH_ENFORCE, FW_SNI_WATCH_LOG };
	struct rb rb;

	rb_init(&rb, bt->rc, "forward");
	fm_ct_mark_any(&rb, FW_SNI_WATCH_ENFORCE | FW_SNI_WATCH_LOG);
	fx_jump(&rb, "sni_reply");
	bt_rule(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, bt->rc, "sni_reply");
		fm_ct_mark_masked(&rb, FW_SNI_CTMARK_BITS, watch[i]);
		fm_ct_reply(&rb);
		fx_queue(&rb, i ? FW_SNI_QUEUE_LOG : FW_SNI_QUEUE_ENFORCE, i == 1);
		bt_rule(bt, &rb);
	}
}

/* forward: into a sandbox only replies; out of one via its own chain. */
static void base_forward(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	if (rc->sni_queue)
		forward_sni_replies(bt);
	if (!fw_rcfg_v6(rc)) {
		/* nfproto first: a compare, where iifname is a lookup. */
		rb_init(&rb, rc, "forward");
		fm_nfproto(&rb, NFPROTO_IPV6);
		fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		rule_drop(bt, &rb, reason_deny_name(REASON_DENY_IPV6_DISABLED));
	}
	render_ft_rules(bt);
	forward_fast(bt);
	rb_init(&rb, rc, "forward");
	fm_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", false);
	fm_ct_est(&rb);
	rule_accept(bt, &rb);
	rb_init(&rb, rc, "forward");
	fm_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", false);
	rule_drop(bt, &rb, "to-sandbox");
	rb_init(&rb, rc, "forward");
	fx_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
	fx_lookup(&rb, "sandbox_fwd", NFT_REG_1, NFT_REG_VERDICT, false);
	bt_rule(bt, &rb);
	/* A sandbox interface without a map entry (cannot happen): still deny. */
	rb_init(&rb, rc, "forward");
	fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
	rule_drop(bt, &rb, "no-sandbox-chain");
	/* Chained attachments, by address: into one only replies; out of one via its chain. */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		struct fw_name src = fw_fam_name("chained_src", f);

		rb_init(&rb, rc, "forward");
		fm_addr_in(&rb, f, true, src.s, false);
		fm_ct_est(&rb);
		rule_accept(bt, &rb);
		rb_init(&rb, rc, "forward");
		fm_addr_in(&rb, f, true, src.s, false);
		rule_drop(bt, &rb, "to-sandbox");
		rb_init(&rb, rc, "forward");
		fm_addr_in(&rb, f, false, fw_fam_name("chained_fwd", f).s, true);
		bt_rule(bt, &rb);
		/* Its chain returned (empty, or missing from the map: cannot happen): still deny. */
		rb_init(&rb, rc, "forward");
		fm_addr_in(&rb, f, false, src.s, false);
		rule_drop(bt, &rb, "no-sandbox-chain");
	}
}

/* postrouting_nat: the pools, chained sources and sandbox veths leave masqueraded. */
static void base_postrouting(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		if (!rb_pool_src(bt, &rb, "postrouting_nat", f))
			continue;
		fm_egress(&rb, rc);
		fx_new(&rb, "masq");
		bt_rule(bt, &rb);
	}
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		rb_init(&rb, rc, "postrouting_nat");
		fm_addr_in(&rb, f, false, fw_fam_name("chained_src", f).s, false);
		fm_egress(&rb, rc);
		fx_new(&rb, "masq");
		bt_rule(bt, &rb);
	}
	/*
	 * Sandboxes with an IPAM plugin's addresses (outside the pools): the
	 * anti-spoof drop in prerouting_raw lets out of a sandbox veth only
	 * that sandbox's own sources, so "came in on a sandbox veth" is
	 * "a sandbox's address".
	 */
	rb_init(&rb, rc, "postrouting_nat");
	fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
	fm_egress(&rb, rc);
	fx_new(&rb, "masq");
	bt_rule(bt, &rb);
}

/* Create-delete-create: a missing table is not an error, an old one goes. */
static void base_table(struct bt *bt)
{
	bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	if (!bt->keep) {
		bt_table(bt, NFT_MSG_DELTABLE, 0);
		bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	}
}

/*
 * "table bridge NAME": what only the bridge hooks can see, the port a frame
 * came in on.  prerouting: a frame from a chained port must carry its own
 * container's IPv4/IPv6 source (ARP, and ICMPv6 from link-local or "::"
 * for neighbour discovery, pass; anything else, VLAN-tagged frames
 * included, is dropped), so the inet table may trust source addresses.
 * forward: no frame between a chained port and any other port: a chained
 * container reaches only the host (its gateway), where the inet table
 * applies its policy; the bridge's own traffic never crosses this hook.
 */
static void base_bridge(struct bt *bt)
{
	static const uint16_t ethertypes[2] = { ETH_P_IP, ETH_P_IPV6 };
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	bt->family = NFPROTO_BRIDGE;
	base_table(bt);
	base_set(bt, "chained_ports", TYPE_IFNAME, IFNAMSIZ, 0);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++)
		base_set(bt, fw_fam_name("chained_port_src", f).s,
			 TYPE_IFNAME << TYPE_BITS | f->addr_type, IFNAMSIZ + f->alen, 0);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting", NF_BR_PRE_ROUTING, NF_BR_PRI_FILTER_BRIDGED,
		 "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "forward", NF_BR_FORWARD, NF_BR_PRI_FILTER_BRIDGED,
		 "filter");

	rb_init(&rb, rc, "prerouting");
	fm_ifset(&rb, NFT_META_IIFNAME, "chained_ports", true);
	rule_accept(bt, &rb);
	rb_init(&rb, rc, "prerouting");
	fm_ethertype(&rb, ETH_P_ARP);
	rule_accept(bt, &rb);
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		/* IPv6: neighbour discovery from link-local or "::" first. */
		for (size_t i = 0; f == FW_FAM_V6 && i < 2; i++) {
			rb_init(&rb, rc, "prerouting");
			fm_ethertype(&rb, ETH_P_IPV6);
			fm_prefix(&rb, f->saddr_off, &nd_srcs[i]);
			fm_l4proto(&rb, IPPROTO_ICMPV6);
			rule_accept(bt, &rb);
		}
		rb_init(&rb, rc, "prerouting");
		fm_ethertype(&rb, ethertypes[f - fw_fams]);
		fx_meta(&rb, NFT_META_IIFNAME, REG32(0));
		fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, f->saddr_off, f->alen, REG32(4));
		fx_lookup(&rb, fw_fam_name("chained_port_src", f).s, REG32(0), -1, false);
		fx_mark_or(&rb, FW_CHAINED_MARK);
		rule_accept(bt, &rb);
	}
	rb_init(&rb, rc, "prerouting");
	rule_drop(bt, &rb, NULL);

	for (int i = 0; i < 2; i++) {
		rb_init(&rb, rc, "forward");
		fm_ifset(&rb, i == 0 ? NFT_META_IIFNAME : NFT_META_OIFNAME, "chained_ports", false);
		rule_drop(bt, &rb, NULL);
	}
	bt->family = 0;
}

/*
 * "table arp NAME": ARP never reaches the inet hooks, and a tap's guest
 * could otherwise answer for addresses that are not its own or speak
 * with another MAC.  chain input: from a tap (tap_ifs) only Ethernet/IPv4
 * ARP (htype 1, ptype 0x0800, hlen 6, plen 4) whose frame source, sender
 * MAC and sender address are the guest's (tap_arp) passes.  (Counted, not
 * logged: the deny log's records are IP packets.)
 */
static void base_arp(struct bt *bt)
{
	static const uint8_t eth_ip4[6] = { 0x00, 0x01, 0x08, 0x00, 6, 4 };
	const struct fw_rcfg *rc = bt->rc;
	struct rb rb;

	bt->family = NFPROTO_ARP;
	base_table(bt);
	sandbox_set(bt, "tap_ifs", TYPE_IFNAME, IFNAMSIZ, 0);
	base_set(bt, "tap_arp",
		 ((TYPE_IFNAME << TYPE_BITS | TYPE_ETHERADDR) << TYPE_BITS | TYPE_ETHERADDR)
				 << TYPE_BITS | TYPE_IPADDR,
		 FKEY_IFARP_LEN, 0);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "input", NF_ARP_IN, 0, "filter");

	rb_init(&rb, rc, "input");
	fm_ifset(&rb, NFT_META_IIFNAME, "tap_ifs", false);
	fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 0, sizeof(eth_ip4), NFT_REG_1);
	fx_cmp(&rb, NFT_REG_1, NFT_CMP_NEQ, eth_ip4, sizeof(eth_ip4));
	rule_drop(bt, &rb, NULL);

	rb_init(&rb, rc, "input");
	fm_ifset(&rb, NFT_META_IIFNAME, "tap_ifs", false);
	fx_meta(&rb, NFT_META_IIFNAME, REG32(0));
	fx_payload(&rb, NFT_PAYLOAD_LL_HEADER, 6, 6, REG32(4));
	fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 8, 6, REG32(6));	/* sender MAC */
	fx_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 14, 4, REG32(8));	/* sender address */
	fx_lookup(&rb, "tap_arp", REG32(0), -1, true);
	rule_drop(bt, &rb, NULL);
	bt->family = 0;
}

void render_base(struct bt *bt, const struct prefix *internal, size_t n_internal)
{
	/*
	 * Reconciling keeps the table (and the pins in it): every base chain
	 * and set below is then created-or-kept and emptied (bt->keep).
	 */
	base_table(bt);
	base_sets(bt, internal, n_internal);
	base_chains(bt);
	render_ft_base(bt);
	base_raw(bt);
	base_prerouting_nat(bt);
	base_input_head(bt);
	base_input_chained(bt);
	base_input_tail(bt);
	base_forward(bt);
	base_postrouting(bt);
	base_bridge(bt);
	base_arp(bt);
}
