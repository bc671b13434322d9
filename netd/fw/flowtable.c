/*
 * flowtable - the flowtable fast path's part of the ruleset (render.h,
 * "flowtable.c"): the shards ft-S with their chains fl-S, map flow_fwd and
 * forward's two rules that feed it.  Pure renderer: appends to a batch.
 *
 * A connection is offloaded by `flow add @ft-S` (nft_flow_offload: TCP once
 * established, UDP, after conntrack confirmed it) when a packet of it
 * crosses forward from or to a sandbox in flow_fwd; from then on the
 * kernel's ingress hook of ft-S forwards its packets on the devices of ft-S
 * before prerouting: no conntrack lookup, no chain.  The flowtable's
 * counter flag keeps conntrack's byte and packet counts exact, so the
 * audit trail and the metrics see every packet.  What must see every packet
 * stays out: a metered sandbox (quota, SNI check) has no flow_fwd element
 * and its interface is no device (fw_flowtable_sync()), chained
 * attachments arrive on a bridge, which is none either.
 */
#include "netd/fw/render.h"

#include <linux/netfilter.h>

struct fw_name fw_ft_name(unsigned shard)
{
	struct fw_name n;

	snprintf(n.s, sizeof(n.s), "ft-%u", shard);
	return n;
}

struct fw_name fw_fl_name(unsigned shard)
{
	struct fw_name n;

	snprintf(n.s, sizeof(n.s), "fl-%u", shard);
	return n;
}

void render_ft_shard(struct bt *bt, unsigned shard)
{
	const char *up[1] = { bt->rc->egress };
	struct fw_name ft = fw_ft_name(shard), fl = fw_fl_name(shard);
	struct rb rb;

	if (!bt->rc->flowtable || (bt->ft_done & (1u << shard)))
		return;
	bt->ft_done |= 1u << shard;
	/* Created, or its devices kept (NEWFLOWTABLE on one that exists adds what is new). */
	bt_flowtable(bt, NFT_MSG_NEWFLOWTABLE, ft.s, up, bt->rc->ft_uplink ? 1 : 0);
	bt_chain(bt, NFT_MSG_NEWCHAIN, fl.s, -1, 0, NULL);
	if (!bt->keep)	/* reconcile mode flushed it already */
		bt_flush_chain(bt, fl.s);
	rb_init(&rb, bt->rc, fl.s);
	fx_flow_add(&rb, ft.s);
	bt_rule(bt, &rb);
}

/* Created (or kept) then deleted: gone afterwards, never an error. */
static void ft_shard_remove(struct bt *bt, unsigned shard)
{
	struct fw_name ft = fw_ft_name(shard), fl = fw_fl_name(shard);

	bt_chain(bt, NFT_MSG_NEWCHAIN, fl.s, -1, 0, NULL);
	if (!bt->keep)
		bt_flush_chain(bt, fl.s);
	bt_chain(bt, NFT_MSG_DELCHAIN, fl.s, -1, 0, NULL);
	bt_flowtable(bt, NFT_MSG_NEWFLOWTABLE, ft.s, NULL, 0);
	bt_flowtable(bt, NFT_MSG_DELFLOWTABLE, ft.s, NULL, 0);
}

void render_ft_base(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;
	struct setdef d;

	if (!rc->flowtable && !(bt->keep && rc->ft_kernel))
		return;
	setdef_plain(&d, "flow_fwd", TYPE_IFNAME, IFNAMSIZ, NFT_SET_MAP);
	d.verdict_map = true;
	/* In reconcile mode, the map's elements go (flushed) before the chains they jump to. */
	bt_set(bt, NFT_MSG_NEWSET, &d);
	if (rc->flowtable)
		return;
	for (unsigned s = 0; s < FW_FT_SHARDS; s++)
		ft_shard_remove(bt, s);
	bt_set(bt, NFT_MSG_DELSET, &d);
}

void render_ft_unused(struct bt *bt)
{
	if (!bt->rc->flowtable || !bt->keep)
		return;
	for (unsigned s = 0; s < FW_FT_SHARDS; s++)
		if (!(bt->ft_done & (1u << s)))
			ft_shard_remove(bt, s);
}

void render_ft_rules(struct bt *bt)
{
	static const uint32_t keys[2] = { NFT_META_IIFNAME, NFT_META_OIFNAME };
	struct rb rb;

	if (!bt->rc->flowtable)
		return;
	/*
	 * From a sandbox (iifname) and, for replies, to one (oifname): ct
	 * state first (a compare), then one lookup.  A miss goes on to the
	 * rules below; fl-S returns here when it is done.
	 */
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, bt->rc, "forward");
		fm_ct_est_only(&rb);
		fx_meta(&rb, keys[i], NFT_REG_1);
		fx_lookup(&rb, "flow_fwd", NFT_REG_1, NFT_REG_VERDICT, false);
		bt_rule(bt, &rb);
	}
}
