/*
 * flowtable - the flowtable fast path's part of the ruleset (render.h,
 * "flowtable.c"): flowtable ft on the egress interface and the rule in
 * forward that feeds it.  Pure renderer: appends to a batch.
 *
 * A sandbox's connection is offloaded by `flow add @ft` (nft_flow_offload:
 * TCP once established, UDP, after conntrack confirmed it) when one of its
 * replies crosses forward towards the sandbox's interface; from then on
 * the kernel's ingress hook of ft forwards the connection's replies as they
 * arrive on the egress interface, NAT undone, before prerouting: no
 * conntrack lookup, no chain.  The flowtable's counter flag keeps
 * conntrack's byte and packet counts exact, so the audit trail and the
 * metrics see every packet.  The sandbox's own interface is no device of
 * ft, so what it sends crosses every rule as without the flowtable.
 */
#include "netd/fw/render.h"

#include <linux/netfilter.h>

void render_ft_uplink(struct bt *bt)
{
	const char *up[1] = { bt->rc->egress };

	bt_flowtable(bt, NFT_MSG_NEWFLOWTABLE, FW_FT_NAME, up, bt->rc->ft_uplink ? 1 : 0);
}

void render_ft_base(struct bt *bt)
{
	const struct fw_rcfg *rc = bt->rc;

	if (rc->flowtable) {
		render_ft_uplink(bt);
	} else if (bt->keep && rc->ft_kernel) {
		/* Created (or kept) then deleted: gone afterwards, never an error. */
		bt_flowtable(bt, NFT_MSG_NEWFLOWTABLE, FW_FT_NAME, NULL, 0);
		bt_flowtable(bt, NFT_MSG_DELFLOWTABLE, FW_FT_NAME, NULL, 0);
	}
}

void render_ft_rules(struct bt *bt)
{
	struct rb rb;

	if (!bt->rc->flowtable)
		return;
	/*
	 * A reply to a sandbox: compares first (state, direction), one lookup
	 * last, so what a sandbox sends costs two compares here.  Chained
	 * attachments' replies go to a bridge, not one of sandbox_ifs.
	 */
	rb_init(&rb, bt->rc, "forward");
	fm_ct_est_only(&rb);
	fm_ct_reply(&rb);
	fm_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", false);
	fx_flow_add(&rb, FW_FT_NAME);
	bt_rule(bt, &rb);
}
