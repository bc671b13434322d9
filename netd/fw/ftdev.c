/*
 * ftdev - what fw asks of the kernel for the flowtable fast path
 * (flowtable.c renders its rules): whether the kernel has flowtables at
 * all, and each shard's devices, which follow the interfaces.  An
 * interface can be a device only once it exists, and fw_sandbox_add()
 * puts the rules in place before it does: so fw_flowtable_attach() adds
 * it afterwards, and fw_flowtable_sync() squares every shard with the
 * records after a restart or a reload (a sandbox that became metered
 * leaves its shard: what it sends must meet its quota rule again).
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/common.h>
#include <libnftnl/flowtable.h>
#include <linux/netfilter.h>

/* ---- the probe ---------------------------------------------------------- */

/* A table of its own with one flowtable: never created (fw_run_check()). */
static void render_probe(struct bt *bt, const void *arg)
{
	struct fw_rcfg rc = *bt->rc;
	struct bt p = *bt;

	(void)arg;
	snprintf(rc.table, sizeof(rc.table), "%.200s-ftprobe", bt->rc->table);
	p.rc = &rc;
	bt_table(&p, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	bt_flowtable(&p, NFT_MSG_NEWFLOWTABLE, "probe", NULL, 0);
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

/* ---- attach ------------------------------------------------------------- */

struct ft_devs {
	unsigned shard;
	const char *const *add, *const *del;
	size_t n_add, n_del;
};

/* Shard @a->shard made sure of, @a->del devices out and @a->add in, FW_FT_DEVS_PER_MSG a message. */
static void render_devs(struct bt *bt, const struct ft_devs *a)
{
	struct fw_name ft = fw_ft_name(a->shard);

	render_ft_shard(bt, a->shard);
	for (size_t i = 0; i < a->n_del; i += FW_FT_DEVS_PER_MSG)
		bt_flowtable(bt, NFT_MSG_DELFLOWTABLE, ft.s, a->del + i,
			     a->n_del - i < FW_FT_DEVS_PER_MSG ? a->n_del - i : FW_FT_DEVS_PER_MSG);
	for (size_t i = 0; i < a->n_add; i += FW_FT_DEVS_PER_MSG)
		bt_flowtable(bt, NFT_MSG_NEWFLOWTABLE, ft.s, a->add + i,
			     a->n_add - i < FW_FT_DEVS_PER_MSG ? a->n_add - i : FW_FT_DEVS_PER_MSG);
}

static void render_devs_fn(struct bt *bt, const void *arg)
{
	render_devs(bt, arg);
}

/* A record whose host interface belongs in a shard: netd's own, unmetered. */
static bool rec_wants_dev(const struct fw_sb_rec *rec)
{
	return !rec->chained && !rec->metered && rec->ifname[0];
}

int fw_flowtable_attach(struct fw *fw, const char *name)
{
	const struct fw_sb_rec *rec = fw_sb_find(fw, name);
	const char *dev[1];
	struct ft_devs a = { 0 };

	if (!rec)
		return -ENOENT;
	if (!fw->rc.flowtable || !rec_wants_dev(rec))
		return 0;
	dev[0] = rec->ifname;
	a.shard = fw_ft_shard(rec->ct_mark);
	a.add = dev;
	a.n_add = 1;
	return fw_run(fw, render_devs_fn, &a, false);
}

/* ---- sync --------------------------------------------------------------- */

/* Device names, sorted when compared. */
struct names {
	char (*v)[IFNAMSIZ];
	size_t n, cap;
};

static int names_add(struct names *l, const char *name)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 16;
		void *nv = realloc(l->v, nc * sizeof(*l->v));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	snprintf(l->v[l->n++], IFNAMSIZ, "%s", name);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strncmp(a, b, IFNAMSIZ);
}

/* What the kernel has (@have, from the dump) and what the records want, per shard. */
struct ft_sync {
	const char *table;
	bool exists[FW_FT_SHARDS];
	struct names have[FW_FT_SHARDS], want[FW_FT_SHARDS];
	int err;
};

/* "ft-S" with S < FW_FT_SHARDS: S; else -1. */
static int shard_of_name(const char *name)
{
	char *end;
	unsigned long s;

	if (!name || strncmp(name, "ft-", 3) != 0 || name[3] < '0' || name[3] > '9')
		return -1;
	s = strtoul(name + 3, &end, 10);
	return *end == '\0' && s < FW_FT_SHARDS ? (int)s : -1;
}

static int dump_ft_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ft_sync *y = data;
	struct nftnl_flowtable *ft = nftnl_flowtable_alloc();
	const char *const *devs;
	const char *table;
	int s;

	if (!ft)
		return MNL_CB_ERROR;
	if (nftnl_flowtable_nlmsg_parse(nlh, ft) < 0)
		goto out;
	table = nftnl_flowtable_get_str(ft, NFTNL_FLOWTABLE_TABLE);
	s = shard_of_name(nftnl_flowtable_get_str(ft, NFTNL_FLOWTABLE_NAME));
	if (!table || strcmp(table, y->table) != 0 || s < 0)
		goto out;
	y->exists[s] = true;
	devs = nftnl_flowtable_is_set(ft, NFTNL_FLOWTABLE_DEVICES) ?
		       nftnl_flowtable_get_array(ft, NFTNL_FLOWTABLE_DEVICES) : NULL;
	for (size_t i = 0; devs && devs[i] && !y->err; i++)
		y->err = names_add(&y->have[s], devs[i]);
out:
	nftnl_flowtable_free(ft);
	return y->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* The records' wishes: each unmetered sandbox whose interface exists, and the egress interface. */
static int sync_wants(const struct fw *fw, struct ft_sync *y)
{
	int r = 0;

	for (size_t i = 0; i < fw->n_sbs && r == 0; i++) {
		const struct fw_sb_rec *rec = &fw->sbs[i];

		if (rec_wants_dev(rec) && if_nametoindex(rec->ifname) != 0)
			r = names_add(&y->want[fw_ft_shard(rec->ct_mark)], rec->ifname);
	}
	for (unsigned s = 0; s < FW_FT_SHARDS && r == 0; s++)
		if (fw->rc.ft_uplink && (y->exists[s] || y->want[s].n))
			r = names_add(&y->want[s], fw->rc.egress);
	return r;
}

/* @x minus @y (both sorted), as pointers into @x. */
static size_t names_minus(const struct names *x, const struct names *y, const char **out)
{
	size_t i = 0, j = 0, n = 0;

	while (i < x->n) {
		int c = j < y->n ? name_cmp(x->v[i], y->v[j]) : -1;

		if (c < 0)
			out[n++] = x->v[i++];
		else if (c > 0)
			j++;
		else
			i++, j++;
	}
	return n;
}

/* One shard's changes in one batch; failing that (an interface went meanwhile), one device a batch. */
static int sync_shard(struct fw *fw, unsigned s, struct ft_sync *y)
{
	struct names *have = &y->have[s], *want = &y->want[s];
	const char **add = calloc(want->n + 1, sizeof(*add));
	const char **del = calloc(have->n + 1, sizeof(*del));
	struct ft_devs a = { .shard = s, .add = add, .del = del };
	int r = 0;

	if (!add || !del) {
		r = -ENOMEM;
		goto out;
	}
	qsort(have->v, have->n, sizeof(*have->v), name_cmp);
	qsort(want->v, want->n, sizeof(*want->v), name_cmp);
	a.n_add = names_minus(want, have, add);
	a.n_del = names_minus(have, want, del);
	if (a.n_add + a.n_del == 0 && (y->exists[s] || !want->n))
		goto out;
	r = fw_run(fw, render_devs_fn, &a, false);
	if (r < 0) {
		int first = r;

		r = 0;
		for (size_t i = 0; i < a.n_del + a.n_add; i++) {
			struct ft_devs one = { .shard = s };

			if (i < a.n_del) {
				one.del = &del[i];
				one.n_del = 1;
			} else {
				one.add = &add[i - a.n_del];
				one.n_add = 1;
			}
			if (fw_run(fw, render_devs_fn, &one, false) < 0 && r == 0)
				r = first;
		}
	}
out:
	free(add);
	free(del);
	return r;
}

int fw_flowtable_sync(struct fw *fw)
{
	char req[512];
	struct nlmsghdr *nlh;
	struct ft_sync *y;
	int r, r1;

	if (!fw->rc.flowtable)
		return 0;
	y = calloc(1, sizeof(*y));
	if (!y)
		return -ENOMEM;
	y->table = fw->rc.table;
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETFLOWTABLE, NFPROTO_INET, NLM_F_DUMP, 0);
	r = fw->k->ops->talk(fw->k, nlh, dump_ft_cb, y);
	if (r == 0)
		r = y->err;
	if (r < 0)
		snprintf(fw->err, sizeof(fw->err), "listing the flowtables: %s", strerror(-r));
	if (r == 0)
		r = sync_wants(fw, y);
	for (unsigned s = 0; s < FW_FT_SHARDS && r == 0; s++) {
		r1 = sync_shard(fw, s, y);	/* every shard tried; the first failure returned */
		if (r1 < 0) {
			for (unsigned t = s + 1; t < FW_FT_SHARDS; t++)
				sync_shard(fw, t, y);
			r = r1;
		}
	}
	for (unsigned s = 0; s < FW_FT_SHARDS; s++) {
		free(y->have[s].v);
		free(y->want[s].v);
	}
	free(y);
	return r;
}
