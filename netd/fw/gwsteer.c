/*
 * gwsteer - the API gateway's part of the ruleset (docs/gateway.md): the
 * gateway pins' sets gw4/gw6 and the rules that steer a sandbox's TCP
 * connections to them into netd's gateway, rendered only when fw's config
 * has a gateway port (fw_config.gw_port); with 0 nothing here renders and
 * the ruleset is what it was without the gateway.  Pure renderer.
 *
 *   set gw4 { type ipv4_addr . ipv4_addr . inet_service; flags timeout }   saddr . daddr . dport
 *   set gw6 { ipv6 likewise }
 *   prerouting_nat, after the DNS redirects, three rules of the same head
 *   (a connection's first packet; before the redirect, so a deny record
 *   names the destination the sandbox asked for):
 *     iifname @sandbox_ifs meta l4proto tcp ip saddr . ip daddr . tcp dport @gw4
 *         ct mark set ip saddr map @sb_mark4 ...
 *       ... ct mark objref map @sb_quota drop     (limits.egress_bytes spent: no new one)
 *       ... ct mark vmap @sb_gwlim                (limits.connections)
 *       ... redirect to :GW_PORT
 *     (chained attachments: ip saddr @chained_src4 instead of the interface)
 *   input:  the egress quota of a steered connection's later packets:
 *             tcp dport GW_PORT ct status dnat ct status confirmed ct mark @sb_gwq_cut
 *                 ct mark objref map @sb_quota drop                   (on_exceed: cut)
 *             tcp dport GW_PORT ct status dnat ct status confirmed ct mark != @sb_gwq_cut
 *                 ct mark objref map @sb_quota                        (on_exceed: finish)
 *           then meta l4proto tcp th dport GW_PORT ct status dnat iifname @sandbox_ifs accept
 *           (chained_in likewise), and from anything but a sandbox or lo: drop
 *   map sb_gwlim { type mark : verdict }   a sandbox's mark -> jump ge-/ga-POLICY,
 *           its policy chain's twin (pchain.c), which holds the policy's
 *           conn-limit rule on the same ce-/ca-POLICY-N set: steered and
 *           forwarded connections count together against one limit.
 *
 * A steered connection never reaches forward, where a sandbox's quota rule
 * counts what it sends (fw/pchain.c pc_quota()), so its packets to the
 * gateway are counted here, by the same quota object, each once: the first
 * in prerouting_nat (the nat chain sees no other), every later one in
 * input, where the first is not yet confirmed (a retransmitted SYN is,
 * and is counted there).  A sandbox whose policy cuts has its mark in
 * sb_gwq_cut (fw/sandbox.c, with its sb_quota element), every other one
 * meets the second input rule, which counts only; a sandbox without a
 * quota has no sb_quota element and matches none of them.
 *
 * Not here: a gateway pin is never an element of pin4/6, so a steered
 * connection never reaches forward: with the gateway down it is refused
 * (nothing listens on the port), never let through directly.  The
 * accounting mark is set here, at the connection's first packet, because
 * the policy chain that sets it for forwarded connections never sees it;
 * conntrack's original tuple keeps the destination the sandbox asked for
 * (the trail's conn records, and SO_ORIGINAL_DST for the gateway).
 */
#include "netd/fw/render.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "common/reason.h"

static bool gw_on(const struct bt *bt)
{
	return bt->rc->gw_port != 0;
}

void setdef_gw(struct setdef *d, const struct fw_fam *f)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "gw%c", f->sfx);
	d->key_type = (f->addr_type << TYPE_BITS | f->addr_type) << TYPE_BITS | TYPE_INET_SERVICE;
	d->key_len = 2u * f->alen + 4u;
	d->flags = NFT_SET_TIMEOUT;
	d->size = FW_PIN_SET_TOTAL;
}

size_t fkey_gw(uint8_t *out, const struct addr *src, const struct pin *p)
{
	size_t alen = addr_len(p->addr.family);
	uint16_t be = htons(p->port);

	memcpy(out, src->a, alen);
	memcpy(out + alen, p->addr.a, alen);
	memset(out + 2 * alen, 0, 4);
	memcpy(out + 2 * alen, &be, 2);
	return 2 * alen + 4;
}

void setdef_pin_of(struct setdef *d, const struct fw_fam *f, bool gateway)
{
	if (gateway)
		setdef_gw(d, f);
	else
		setdef_pin(d, f);
}

size_t fkey_pin_of(uint8_t *out, const struct addr *src, const struct pin *p)
{
	return p->gateway ? fkey_gw(out, src, p) : fkey_pin(out, src, p);
}

void setdef_gwq_cut(struct setdef *d)
{
	setdef_plain(d, "sb_gwq_cut", TYPE_MARK, 4, 0);
	d->key_byteorder = BYTEORDER_HOST_ENDIAN;
	d->size = FW_MARK_SET_SIZE;
}

void render_gw_quota_mode(struct bt *bt, uint32_t mark, bool cut)
{
	struct setdef d;

	if (!gw_on(bt) || !mark)
		return;
	setdef_gwq_cut(&d);
	if (cut)
		elem_add1(bt, d.name, elem_new(&mark, sizeof(mark)));
	else	/* created-then-deleted: there or not */
		elem_remove(bt, d.name, &mark, sizeof(mark), NULL);
}

void setdef_gwlim(struct setdef *d)
{
	setdef_plain(d, "sb_gwlim", TYPE_MARK, 4, NFT_SET_MAP);
	d->verdict_map = true;
	d->key_byteorder = BYTEORDER_HOST_ENDIAN;
	d->size = FW_MARK_SET_SIZE;
}

void render_gw_jump(struct bt *bt, uint32_t mark, const char *chain, bool add)
{
	char twin[NFT_CHAIN_MAXNAMELEN];
	struct setdef d;

	if (!gw_on(bt) || !mark || !chain)
		return;
	pchain_gw_name(chain, twin);
	setdef_gwlim(&d);
	if (add)
		elem_add1(bt, d.name, elem_new_jump(&mark, sizeof(mark), twin));
	else	/* created-then-deleted: there or not (the twin exists: render_pchain()) */
		elem_remove(bt, d.name, &mark, sizeof(mark), twin);
}

void render_gw_sets(struct bt *bt)
{
	struct setdef d;

	if (!gw_on(bt))
		return;
	/* Its elements come and go with the sandboxes' sb_quota elements. */
	setdef_gwq_cut(&d);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	/* Its elements come and go with the sandboxes' jumps (sandbox.c sb_hookup()). */
	setdef_gwlim(&d);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	/* Kept across a restart with their elements, as pin4/6 are. */
	for (const struct fw_fam *f = FW_FAM_V4; f <= FW_FAM_V6; f++) {
		setdef_gw(&d, f);
		bt_set(bt, NFT_MSG_NEWSET, &d);
	}
}

/* saddr . daddr . th dport @gw4/6 (after a TCP match). */
static void fm_gw_lookup(struct rb *rb, const struct fw_fam *f)
{
	struct setdef d;

	setdef_gw(&d, f);
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->saddr_off, f->alen, REG32(0));
	fx_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, f->daddr_off, f->alen, REG32(f->alen / 4));
	fx_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, REG32(2 * f->alen / 4));
	fx_lookup(rb, d.name, REG32(0), -1, false);
}

/* render_gw_nat()'s rules, in order, for each family and kind of attachment. */
enum gw_nat_step { GW_NAT_QUOTA, GW_NAT_LIMIT, GW_NAT_REDIRECT };

/*
 * The head every rule of render_gw_nat() shares: a sandbox's (or, @chained,
 * a chained attachment's) TCP to a gateway pin of family @f, its mark set
 * from sb_mark4/6.
 */
static void gw_nat_head(struct rb *rb, const struct bt *bt, const struct fw_fam *f, bool chained)
{
	struct setdef m;

	setdef_mark_map(&m, f);
	rb_init(rb, bt->rc, "prerouting_nat");
	if (chained) {
		fm_addr_in(rb, f, false, fw_fam_name("chained_src", f).s, false);
	} else {
		fm_nfproto(rb, f->nfproto);
		fm_ifset(rb, NFT_META_IIFNAME, "sandbox_ifs", false);
	}
	fm_l4proto(rb, IPPROTO_TCP);
	fm_gw_lookup(rb, f);
	fx_ct_mark_from_src(rb, f, m.name);
}

void render_gw_nat(struct bt *bt, size_t n_fams)
{
	struct setdef lim, q;
	struct rb rb;

	if (!gw_on(bt))
		return;
	/*
	 * After the DNS redirects: a query to port 53 always goes to the proxy,
	 * whatever a gateway pin says.  The nat chain sees a connection's first
	 * packet only; the mark is the one forward's policy chain would have set
	 * (sb_mark4/6 by the anti-spoofing-checked source), so conn records
	 * attribute the connection to its sandbox.  A source without a mark
	 * does not match: the connection goes on to forward, where no pin4/6
	 * element lets it through (fail closed).
	 *
	 * Before the redirect, so that a deny record names where the connection
	 * was going: its first packet counted by the sandbox's quota
	 * (limits.egress_bytes; spent: dropped, whether the policy cuts or
	 * finishes), then the conn limit (limits.connections, a jump by the
	 * mark to the policy chain's twin: the head comment); then the redirect.
	 */
	setdef_gwlim(&lim);
	setdef_quota_map(&q);
	for (size_t i = 0; i < n_fams; i++) {
		for (int step = GW_NAT_QUOTA; step <= GW_NAT_REDIRECT; step++) {
			for (int chained = 0; chained < 2; chained++) {
				gw_nat_head(&rb, bt, &fw_fams[i], chained);
				if (step == GW_NAT_REDIRECT) {
					fx_redirect(&rb, bt->rc->gw_port);
					bt_rule(bt, &rb);
					continue;
				}
				fx_ct_mark_key(&rb);
				if (step == GW_NAT_LIMIT) {
					fx_lookup(&rb, lim.name, NFT_REG_1, NFT_REG_VERDICT, false);
				} else {
					fx_objref_map(&rb, NFT_REG_1, q.name);
					fx_counter(&rb);
					fx_deny_log(&rb, bt->rc, reason_deny_name(REASON_DENY_QUOTA));
					fx_verdict(&rb, NF_DROP);
				}
				bt_rule(bt, &rb);
			}
		}
	}
}

/* ct status & @bits != 0 */
static void fm_ct_status(struct rb *rb, uint32_t bits)
{
	uint32_t mask = bits, xor = 0, zero = 0;
	struct nftnl_expr *e = fx_new(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATUS);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	fx_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
	fx_cmp(rb, NFT_REG_1, NFT_CMP_NEQ, &zero, 4);
}

/* The steered connection's port, after netd's own redirect: the head of each rule below. */
static void fm_gw_steered(struct rb *rb, const struct bt *bt)
{
	fm_l4proto(rb, IPPROTO_TCP);
	fm_dport(rb, bt->rc->gw_port);
	fm_ct_status(rb, IPS_DST_NAT);	/* redirected (only steered ones reach the port) */
}

/* The quota of what a sandbox sends to the gateway (the head comment): cut, then finish. */
static void gw_quota(struct bt *bt)
{
	struct setdef q, cut;
	struct rb rb;

	setdef_quota_map(&q);
	setdef_gwq_cut(&cut);
	for (int finish = 0; finish < 2; finish++) {
		rb_init(&rb, bt->rc, "input");
		fm_gw_steered(&rb, bt);
		/* The first packet was counted (and judged) in prerouting_nat. */
		fm_ct_status(&rb, IPS_CONFIRMED);
		fx_ct_mark_key(&rb);
		fx_lookup(&rb, cut.name, NFT_REG_1, -1, finish);
		fx_objref_map(&rb, NFT_REG_1, q.name);
		if (finish) {	/* counted only: its new connections go in prerouting_nat */
			bt_rule(bt, &rb);
			continue;
		}
		fx_counter(&rb);
		fx_deny_log(&rb, bt->rc, reason_deny_name(REASON_DENY_QUOTA));
		fx_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
}

void render_gw_input(struct bt *bt, size_t n_fams)
{
	struct rb rb;

	if (!gw_on(bt))
		return;
	gw_quota(bt);
	for (size_t i = 0; i < n_fams; i++) {
		rb_init(&rb, bt->rc, "input");
		fm_nfproto(&rb, fw_fams[i].nfproto);
		fm_gw_steered(&rb, bt);
		fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		fx_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
}

void render_gw_chained_in(struct bt *bt)
{
	struct rb rb;

	if (!gw_on(bt))
		return;
	rb_init(&rb, bt->rc, "chained_in");
	fm_gw_steered(&rb, bt);
	fx_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
}

void render_gw_input_drop(struct bt *bt)
{
	static const char lo[IFNAMSIZ] = "lo";
	struct rb rb;

	if (!gw_on(bt))
		return;
	/* The gateway port is for steered sandbox connections (and local tools on lo). */
	rb_init(&rb, bt->rc, "input");
	fm_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
	fx_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
	fx_cmp(&rb, NFT_REG_1, NFT_CMP_NEQ, lo, IFNAMSIZ);
	fm_l4proto(&rb, IPPROTO_TCP);
	fm_dport(&rb, bt->rc->gw_port);
	fx_counter(&rb);
	fx_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
}
