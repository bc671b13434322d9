/*
 * ftdev - what fw asks of the kernel for the flowtable fast path
 * (flowtable.c renders it): whether the kernel has flowtables at all (a
 * batch it checks and aborts), and the egress interface back among the
 * flowtable's devices after it went and came back.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

/* A table of its own with one flowtable: never created (fw_run_check()). */
static void render_probe(struct bt *bt, const void *arg)
{
	struct fw_rcfg rc = *bt->rc;
	struct bt p = *bt;
	struct rb rb;

	(void)arg;
	snprintf(rc.table, sizeof(rc.table), "%.200s-ftprobe", bt->rc->table);
	p.rc = &rc;
	bt_table(&p, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	bt_flowtable(&p, NFT_MSG_NEWFLOWTABLE, FW_FT_NAME, NULL, 0);
	/* and the expression that feeds it (nft_flow_offload, a module of its own) */
	bt_chain(&p, NFT_MSG_NEWCHAIN, "probe", -1, 0, NULL);
	rb_init(&rb, &rc, "probe");
	fx_flow_add(&rb, FW_FT_NAME);
	bt_rule(&p, &rb);
}

int fw_ft_probe(struct fw *fw)
{
	return fw_run_check(fw, render_probe, NULL);
}

bool fw_flowtable_state(const struct fw *fw, const char **why)
{
	if (why)
		*why = fw->rc.flowtable ? "" : fw->ft_why;
	return fw->rc.flowtable;
}

static void render_uplink_fn(struct bt *bt, const void *arg)
{
	(void)arg;
	render_ft_uplink(bt);
}

int fw_flowtable_refresh(struct fw *fw)
{
	if (!fw->rc.flowtable || !fw->rc.egress[0])
		return 0;
	fw->rc.ft_uplink = if_nametoindex(fw->rc.egress) != 0;
	if (!fw->rc.ft_uplink)
		return 0;	/* not there (now): nothing to add */
	return fw_run(fw, render_uplink_fn, NULL, false);
}
