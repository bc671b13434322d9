/*
 * ftdev - what fw asks of the kernel at fw_open(), with batches it checks
 * and aborts: whether it has flowtables at all (the fast path, which
 * flowtable.c renders) and whether it takes the SNI check's queue rules
 * (the replies forward queues, base.c); and the egress interface back among
 * the flowtable's devices after it went and came back.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>

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

/* A table of its own with one queue rule: never created (fw_run_check()). */
static void render_queue_probe(struct bt *bt, const void *arg)
{
	struct fw_rcfg rc = *bt->rc;
	struct bt p = *bt;
	struct rb rb;

	(void)arg;
	snprintf(rc.table, sizeof(rc.table), "%.200s-qprobe", bt->rc->table);	/* same queue_native */
	p.rc = &rc;
	bt_table(&p, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	bt_chain(&p, NFT_MSG_NEWCHAIN, "probe", NF_INET_FORWARD, PRIO_FILTER, "filter");
	rb_init(&rb, &rc, "probe");
	fx_queue(&rb, FW_SNI_QUEUE_LOG, true);
	bt_rule(&p, &rb);
}

int fw_sni_queue_probe(struct fw *fw)
{
	return fw_run_check(fw, render_queue_probe, NULL);
}

bool fw_sni_replies(const struct fw *fw)
{
	return fw && fw->rc.sni_queue;
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
