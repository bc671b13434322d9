/*
 * reconcile - the two whole-ruleset transactions: a restart
 * (fw_open_reconcile(): inventory the kernel's table, then ONE batch that
 * keeps-and-refills the base ruleset, removes the sandboxes that are gone
 * and re-renders the ones that stay) and a policy reload
 * (fw_sandboxes_update(): ONE batch re-rendering many sandboxes in place).
 * Both are all-or-nothing however many sandboxes they cover: one batch,
 * one sendmsg(), one nf_tables transaction (nl.c).
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/common.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>

/* sb-* chains and sets found in the kernel's table (any number of them). */
struct dump_list {
	const char *table;
	struct {
		char obj[NFT_SET_MAXNAMELEN];	/* the chain or set name */
		char owner[POLICY_NAME_MAX + 1];	/* the sandbox it belongs to */
		bool is_set;
	} *v;
	size_t n, cap;
	int err;
};

/* The sandbox name in a set name "sb-NAME-pin4" etc.: its length, or 0 if not ours. */
static size_t set_owner_len(const char *obj, size_t n)
{
	static const char *const sfx[] = { "-pin4", "-pin6", "-cidr4", "-cidr6" };

	for (size_t i = 0; i < 4; i++) {
		size_t sl = strlen(sfx[i]);

		if (n > 3 + sl && strcmp(obj + n - sl, sfx[i]) == 0)
			return n - 3 - sl;
	}
	return 0;
}

static void dump_note(struct dump_list *l, const char *table, const char *obj, bool is_set)
{
	size_t n = obj ? strlen(obj) : 0, k;

	if (!table || strcmp(table, l->table) != 0 || n <= 3 || strncmp(obj, "sb-", 3) != 0 ||
	    n >= sizeof(l->v[0].obj))
		return;
	k = is_set ? set_owner_len(obj, n) : n - 3;
	if (k == 0 || k > POLICY_NAME_MAX)
		return;	/* not one of ours */
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 64;
		void *nv = realloc(l->v, nc * sizeof(*l->v));

		if (!nv) {
			l->err = -ENOMEM;
			return;
		}
		l->v = nv;
		l->cap = nc;
	}
	memcpy(l->v[l->n].obj, obj, n + 1);
	memcpy(l->v[l->n].owner, obj + 3, k);
	l->v[l->n].owner[k] = '\0';
	l->v[l->n].is_set = is_set;
	l->n++;
}

static int dump_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_chain *c = nftnl_chain_alloc();

	if (!c)
		return MNL_CB_ERROR;
	if (nftnl_chain_nlmsg_parse(nlh, c) == 0 && !nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		dump_note(data, nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE),
			  nftnl_chain_get_str(c, NFTNL_CHAIN_NAME), false);
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

static int dump_set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_set *s = nftnl_set_alloc();

	if (!s)
		return MNL_CB_ERROR;
	if (nftnl_set_nlmsg_parse(nlh, s) == 0)
		dump_note(data, nftnl_set_get_str(s, NFTNL_SET_TABLE),
			  nftnl_set_get_str(s, NFTNL_SET_NAME), true);
	nftnl_set_free(s);
	return MNL_CB_OK;
}

/* One dump of @type (family inet) into @l. */
static int dump(struct fw *fw, uint16_t type, mnl_cb_t cb, struct dump_list *l)
{
	char req[256];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(req, type, NFPROTO_INET, NLM_F_DUMP, 0);
	int r = fw->k->ops->talk(fw->k, nlh, cb, l);

	return r < 0 ? r : l->err;
}

struct rc_arg {
	const struct fw_config *cfg;
	struct sb_arg *sbs;	/* one per kept sandbox */
	size_t n;
	const struct dump_list *found;	/* NULL: replacing, nothing to remove */
};

static bool rc_kept(const struct rc_arg *a, const char *owner)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->sbs[i].sb->name, owner) == 0)
			return true;
	return false;
}

/* The chains (pass 0), then the sets and quotas (pass 1) of sandboxes not kept. */
static void render_stale(struct bt *bt, const struct rc_arg *a)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < a->found->n; i++) {
			const char *obj = a->found->v[i].obj;
			bool is_set = a->found->v[i].is_set;

			if (rc_kept(a, a->found->v[i].owner))
				continue;
			if (pass == 0 && !is_set) {
				bt_flush_chain(bt, obj);
				bt_chain(bt, NFT_MSG_DELCHAIN, obj, -1, 0, NULL);
			} else if (pass == 1 && is_set) {
				struct setdef d = { 0 };

				snprintf(d.name, sizeof(d.name), "%s", obj);
				bt_set(bt, NFT_MSG_DELSET, &d);
			} else if (pass == 1) {
				/* A stale sandbox chain: its quota, if any (chains are gone now). */
				bt_quota_remove(bt, a->found->v[i].owner);
			}
		}
}

/*
 * The whole start-up in one batch: the base ruleset (created, or kept and
 * refilled), the chains and sets of sandboxes that are no longer in the
 * state dir removed, and every kept sandbox re-rendered.  The order inside
 * the batch matters: the base sets (vmap included) are emptied first, so
 * no jump refers to a stale chain when it is deleted; a stale chain's rules
 * go before its sets.
 */
static void render_reconcile(struct bt *bt, const void *argp)
{
	const struct rc_arg *a = argp;

	fw_render_open(bt, a->cfg);
	if (a->found)
		render_stale(bt, a);
	for (size_t i = 0; i < a->n; i++)
		render_sandbox(bt, &a->sbs[i]);
}

static int sb_records(struct fw *fw, const struct fw_restore *sbs, size_t n)
{
	fw->sbs = calloc(n ? n : 1, sizeof(*fw->sbs));
	if (!fw->sbs)
		return -ENOMEM;
	fw->cap_sbs = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct fw_sb_rec *rec = &fw->sbs[fw->n_sbs++];

		snprintf(rec->name, sizeof(rec->name), "%s", sbs[i].sb.name);
		snprintf(rec->ifname, sizeof(rec->ifname), "%s", sbs[i].sb.host_ifname);
		rec->addr4 = sbs[i].sb.addr4;
		rec->addr6 = sbs[i].sb.addr6;
		rec->chained = sbs[i].sb.chained;
	}
	return 0;
}

static int rc_args(struct rc_arg *a, const struct fw_restore *sbs, size_t n)
{
	a->sbs = calloc(n ? n : 1, sizeof(*a->sbs));
	if (!a->sbs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r;

		if (!fw_sb_ok(&sbs[i].sb) || !sbs[i].pol)
			return -EINVAL;
		r = sb_arg_init(&a->sbs[i], &sbs[i].sb, sbs[i].pol);
		if (r < 0)
			return r;
		a->sbs[i].replace_pins = sbs[i].flush_pins;	/* with no pins: emptied */
	}
	return 0;
}

/* Keep the table: inventory it, then reconcile it in one batch. */
static int reconcile_keep(struct fw *fw, struct rc_arg *a, struct dump_list *found,
			  struct fw_reconcile_info *info)
{
	int r;

	found->table = fw->rc.table;
	r = dump(fw, NFT_MSG_GETCHAIN, dump_chain_cb, found);
	if (r == 0)
		r = dump(fw, NFT_MSG_GETSET, dump_set_cb, found);
	if (r < 0) {
		snprintf(fw->err, sizeof(fw->err), "listing the table's chains and sets: %s",
			 strerror(-r));
		return r;
	}
	a->found = found;
	r = fw_run(fw, render_reconcile, a, true);
	if (r < 0)
		return r;
	info->kept = true;
	for (size_t i = 0; i < found->n; i++)
		if (!rc_kept(a, found->v[i].owner) && !found->v[i].is_set)
			info->n_stale++;
	return 0;
}

int fw_open_reconcile(const struct fw_config *cfg, const struct fw_restore *sbs, size_t n,
		      struct fw **ret, struct fw_reconcile_info *info)
{
	struct dump_list found = { 0 };
	struct rc_arg a = { .cfg = cfg, .n = n };
	struct fw_kernel *k;
	struct fw *fw = NULL;
	int r;

	*ret = NULL;
	memset(info, 0, sizeof(*info));
	if (n && !sbs)
		return -EINVAL;
	r = fw_nl_new(&k);
	if (r == 0)
		r = fw_new(cfg, k, &fw);
	if (r < 0)
		return r;
	r = rc_args(&a, sbs, n);
	if (r < 0)
		goto out;
	r = reconcile_keep(fw, &a, &found, info);
	if (r < 0) {
		/*
		 * The kept table could not be reconciled (its base ruleset is
		 * of another version, say): replace it whole, still in one
		 * batch, so there is no moment without rules.  Pins are lost;
		 * established connections are not (conntrack is not in it).
		 */
		snprintf(info->replaced_because, sizeof(info->replaced_because), "%.*s",
			 (int)sizeof(info->replaced_because) - 1, fw->err[0] ? fw->err : strerror(-r));
		a.found = NULL;
		for (size_t i = 0; i < n; i++)
			a.sbs[i].replace_pins = false;
		r = fw_run(fw, render_reconcile, &a, false);
		if (r < 0)
			info->replaced_because[0] = '\0';
	}
	if (r == 0)
		r = sb_records(fw, sbs, n);
out:
	for (size_t i = 0; a.sbs && i < n; i++)
		sb_arg_done(&a.sbs[i]);
	free(a.sbs);
	free(found.v);
	if (r < 0) {
		fw_close(fw);
		return r;
	}
	*ret = fw;
	return 0;
}

struct upd_arg {
	struct sb_arg *sbs;
	size_t n;
};

static void render_update(struct bt *bt, const void *argp)
{
	const struct upd_arg *a = argp;

	for (size_t i = 0; i < a->n; i++)
		render_sandbox(bt, &a->sbs[i]);
}

static int update_ok(struct fw *fw, const struct fw_update *u)
{
	if (!u->sb || !fw_name_ok(u->sb->name) || !fw_sb_ok(u->sb) || !u->pol ||
	    !fw_sb_find(fw, u->sb->name) || u->n_pins > FW_PIN_SET_SIZE || (u->n_pins && !u->pins))
		return -EINVAL;
	for (size_t j = 0; j < u->n_pins; j++)
		if (!fw_pin_ok(&u->pins[j]))
			return -EINVAL;
	return 0;
}

int fw_sandboxes_update(struct fw *fw, const struct fw_update *u, size_t n)
{
	struct upd_arg a = { .n = n };
	int r = 0;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || (n && !u))
		return -EINVAL;
	if (n == 0)
		return 0;
	a.sbs = calloc(n, sizeof(*a.sbs));
	if (!a.sbs)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		r = update_ok(fw, &u[i]);
		if (r == 0)
			r = sb_arg_init(&a.sbs[i], u[i].sb, u[i].pol);
		a.sbs[i].replace_pins = u[i].replace_pins;
		a.sbs[i].pins = u[i].pins;
		a.sbs[i].n_pins = u[i].n_pins;
		if (r < 0)	/* nothing was sent: say which sandbox */
			snprintf(fw->err, sizeof(fw->err), "sandbox %.64s (%zu of %zu): %s, nothing sent",
				 u[i].sb && u[i].sb->name ? u[i].sb->name : "?", i + 1, n, strerror(-r));
	}
	if (r == 0)
		r = fw_run(fw, render_update, &a, true);
	for (size_t i = 0; i < n; i++)
		sb_arg_done(&a.sbs[i]);
	free(a.sbs);
	return r == -ENFILE ? -ENOSPC : r;
}
