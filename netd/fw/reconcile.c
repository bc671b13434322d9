/*
 * reconcile - the restart's whole-ruleset transaction (fw_open_reconcile()):
 * inventory the kernel's table, then ONE batch that keeps-and-refills the
 * base ruleset, removes what sandboxes that are gone (and older netds)
 * left, and re-renders the ones that stay.  All-or-nothing however many
 * sandboxes it covers: one batch, one sendmsg(), one nf_tables transaction
 * (nl.c).  A policy reload's transaction is update.c.
 */
#include "netd/fw/core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/object.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>

#include "common/clock.h"

/* What the table's dump found: policy chains and sets, quotas, what older netds made. */
enum found_kind {
	FOUND_CHAIN,	/* sb-NAME: a per-sandbox chain of an older netd; owner = the sandbox */
	FOUND_PCHAIN,	/* pe-/pa-POLICY, and its twin ge-/ga-POLICY: a policy chain (pchain.c) */
	FOUND_PCSET,	/* pc-POLICY-cidr4/6: owner = the policy */
	FOUND_CONNSET,	/* ce-/ca-POLICY-N: a policy chain's conn-limit set */
	FOUND_OLDSET,	/* sb-NAME-pin4/cidr4/...: a per-sandbox set of an older netd */
	FOUND_QUOTA,	/* q-NAME: owner = the sandbox */
	FOUND_GWSET,	/* gw4/gw6, sb_gwq_cut, sb_gwlim: the gateway's (removed when there is none now) */
	FOUND_RETIRED,	/* a base set an older netd had and this one has not (retired[]): removed */
};

/* Base sets of older netds: metered_ifs became FW_METERED_MARK (fw/render.h). */
static const char *const retired[] = { "metered_ifs" };

static bool is_retired(const char *set)
{
	for (size_t i = 0; i < sizeof(retired) / sizeof(retired[0]); i++)
		if (strcmp(set, retired[i]) == 0)
			return true;
	return false;
}

struct dump_list {
	const char *table;
	struct {
		char obj[NFT_SET_MAXNAMELEN];	/* the chain or set name */
		char owner[POLICY_NAME_MAX + 1];
		enum found_kind kind;
	} *v;
	size_t n, cap;
	int err;
};

/* The owner's length in @obj ("PFX" OWNER SUFFIX), or 0 if @obj has none of @sfx. */
static size_t owner_len(const char *obj, size_t n, const char *const *sfx, size_t n_sfx)
{
	for (size_t i = 0; i < n_sfx; i++) {
		size_t sl = strlen(sfx[i]);

		if (n > 3 + sl && strcmp(obj + n - sl, sfx[i]) == 0)
			return n - 3 - sl;
	}
	return 0;
}

/* @what: 'c' a chain, 's' a set, 'q' a quota object. */
static void dump_note(struct dump_list *l, const char *table, const char *obj, char what)
{
	static const char *const old_sfx[] = { "-pin4", "-pin6", "-cidr4", "-cidr6" };
	static const char *const pc_sfx[] = { "-cidr4", "-cidr6" };
	size_t n = obj ? strlen(obj) : 0, k = n - 3;
	enum found_kind kind;

	if (!table || strcmp(table, l->table) != 0 || n <= 2 || n >= sizeof(l->v[0].obj))
		return;
	if (what == 'q' && strncmp(obj, "q-", 2) == 0) {
		kind = FOUND_QUOTA;
		k = n - 2;
	} else if (what == 's' && (strcmp(obj, "gw4") == 0 || strcmp(obj, "gw6") == 0 ||
				   strcmp(obj, "sb_gwq_cut") == 0 || strcmp(obj, "sb_gwlim") == 0)) {
		kind = FOUND_GWSET;
		k = 0;	/* a base set: no owner */
	} else if (what == 's' && is_retired(obj)) {
		kind = FOUND_RETIRED;
		k = 0;
	} else if (n <= 3) {
		return;	/* every other kind has a 3-byte prefix and an owner */
	} else if (what == 'c' && strncmp(obj, "sb-", 3) == 0) {
		kind = FOUND_CHAIN;
	} else if (what == 'c' && (strncmp(obj, "pe-", 3) == 0 || strncmp(obj, "pa-", 3) == 0 ||
				   strncmp(obj, "ge-", 3) == 0 || strncmp(obj, "ga-", 3) == 0)) {
		kind = FOUND_PCHAIN;
	} else if (what == 's' && strncmp(obj, "sb-", 3) == 0) {
		kind = FOUND_OLDSET;
		k = owner_len(obj, n, old_sfx, 4);
	} else if (what == 's' && strncmp(obj, "pc-", 3) == 0) {
		kind = FOUND_PCSET;
		k = owner_len(obj, n, pc_sfx, 2);
	} else if (what == 's' && (strncmp(obj, "ce-", 3) == 0 || strncmp(obj, "ca-", 3) == 0)) {
		kind = FOUND_CONNSET;
		k = 0;	/* judged by its whole name */
	} else {
		return;	/* not one of ours */
	}
	if (k > POLICY_NAME_MAX ||
	    (k == 0 && kind != FOUND_CONNSET && kind != FOUND_GWSET && kind != FOUND_RETIRED))
		return;
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
	memcpy(l->v[l->n].owner, obj + (kind == FOUND_QUOTA || kind == FOUND_GWSET ? 2 : 3), k);
	l->v[l->n].owner[k] = '\0';
	l->v[l->n].kind = kind;
	l->n++;
}

static int dump_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_chain *c = nftnl_chain_alloc();

	if (!c)
		return MNL_CB_ERROR;
	if (nftnl_chain_nlmsg_parse(nlh, c) == 0 && !nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		dump_note(data, nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE),
			  nftnl_chain_get_str(c, NFTNL_CHAIN_NAME), 'c');
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
			  nftnl_set_get_str(s, NFTNL_SET_NAME), 's');
	nftnl_set_free(s);
	return MNL_CB_OK;
}

static int dump_obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_obj *o = nftnl_obj_alloc();

	if (!o)
		return MNL_CB_ERROR;
	if (nftnl_obj_nlmsg_parse(nlh, o) == 0 &&
	    nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE) == NFT_OBJECT_QUOTA)
		dump_note(data, nftnl_obj_get_str(o, NFTNL_OBJ_TABLE),
			  nftnl_obj_get_str(o, NFTNL_OBJ_NAME), 'q');
	nftnl_obj_free(o);
	return MNL_CB_OK;
}

/* The elements of pin4/6 (or, @gateway, of gw4/6) found (any number of them). */
struct pin_dump {
	const struct fw_fam *f;
	bool gateway;
	struct {
		uint8_t key[FKEY_PIN_MAX];
		uint64_t left_ms;	/* until it expires; 0: no expiry given */
	} *v;
	size_t n, cap;
	int err;
};

static void pin_dump_add(void *arg, const void *key, uint32_t len, uint64_t left_ms)
{
	struct pin_dump *d = arg;

	if (len != 2u * d->f->alen + (d->gateway ? 4u : 8u))
		return;	/* not a key of this layout */
	if (d->n == d->cap) {
		size_t nc = d->cap ? 2 * d->cap : 256;
		void *nv = realloc(d->v, nc * sizeof(*d->v));

		if (!nv) {
			d->err = -ENOMEM;
			return;
		}
		d->v = nv;
		d->cap = nc;
	}
	memcpy(d->v[d->n].key, key, len);
	d->v[d->n].left_ms = left_ms;
	d->n++;
}

static int dump_pin_cb(const struct nlmsghdr *nlh, void *data)
{
	return fw_elems_each(nlh, pin_dump_add, data);
}

/* One dump of @type (family inet) into @l. */
static int dump(struct fw *fw, uint16_t type, mnl_cb_t cb, struct dump_list *l)
{
	char req[256];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(req, type, NFPROTO_INET, NLM_F_DUMP, 0);
	int r = fw->k->ops->talk(fw->k, nlh, cb, l);

	return r < 0 ? r : l->err;
}

/* Every element of pin set @d->f (a missing set: none). */
static int dump_pins(struct fw *fw, struct pin_dump *d)
{
	char req[512];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSETELEM, NFPROTO_INET,
						     NLM_F_DUMP, 0);
	struct nftnl_set *s = nftnl_set_alloc();
	struct setdef def;
	int r;

	if (!s)
		return -ENOMEM;
	setdef_pin_of(&def, d->f, d->gateway);
	nftnl_set_set_str(s, NFTNL_SET_TABLE, fw->rc.table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, def.name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nftnl_set_free(s);
	r = fw->k->ops->talk(fw->k, nlh, dump_pin_cb, d);
	if (r == -ENOENT)
		return 0;	/* an older table: no shared pin set yet */
	return r < 0 ? r : d->err;
}

struct rc_arg {
	const struct fw_config *cfg;
	struct sb_arg *sbs;	/* one per kept sandbox */
	const char **names;	/* the kept sandboxes' names, sorted (rc_kept()) */
	uint64_t *digests;	/* one per kept sandbox: of what was rendered for it */
	size_t n;
	struct pchain_names *chains;	/* the policy chains the kept sandboxes use */
	uint64_t *chain_digests;	/* one per chain: of its rules as rendered */
	size_t n_chains;
	const struct dump_list *found;	/* NULL: replacing, nothing to remove */
	/* Pins whose source is no kept sandbox's: removed (keep mode only). */
	const uint8_t *orphans[4];	/* keys, orphan_stride bytes apart: pin4, pin6, gw4, gw6 */
	size_t orphan_stride;
	size_t n_orphans[4];
};

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Is @owner one of the kept sandboxes?  (A binary search: thousands of them.) */
static bool rc_kept(const struct rc_arg *a, const char *owner)
{
	return a->n && bsearch(&owner, a->names, a->n, sizeof(*a->names), name_cmp);
}

static bool rc_policy_used(const struct rc_arg *a, const char *policy)
{
	for (size_t i = 0; i < a->n_chains; i++)
		if (strcmp(a->chains[i].chain + 3, policy) == 0)
			return true;
	return false;
}

/*
 * Is @name a chain (or, @connset, a conn-limit set) a kept sandbox's policy
 * chain uses?  A twin (ge-/ga-) is used while its chain is and there is a
 * gateway (@gw).
 */
static bool rc_chain_used(const struct rc_arg *a, const char *name, bool connset, bool gw)
{
	char twin[NFT_CHAIN_MAXNAMELEN];

	for (size_t i = 0; i < a->n_chains; i++) {
		const char *have = connset ? a->chains[i].connset : a->chains[i].chain;

		if (!connset && name[0] == 'g') {
			pchain_gw_name(have, twin);
			have = gw ? twin : "";
		}
		if (strcmp(have, name) == 0)
			return true;
	}
	return false;
}

/*
 * Before the kept sandboxes are rendered: the per-sandbox chains of an
 * older netd (every one: the jumps to them went with the base maps'
 * flush), then the quotas of sandboxes not kept (nothing refers to them
 * any more).
 */
static void render_stale_chains(struct bt *bt, const struct rc_arg *a)
{
	for (size_t i = 0; i < a->found->n; i++)
		if (a->found->v[i].kind == FOUND_CHAIN) {
			bt_flush_chain(bt, a->found->v[i].obj);
			bt_chain(bt, NFT_MSG_DELCHAIN, a->found->v[i].obj, -1, 0, NULL);
		}
	for (size_t i = 0; i < a->found->n; i++)
		if (a->found->v[i].kind == FOUND_QUOTA && !rc_kept(a, a->found->v[i].owner))
			bt_quota(bt, NFT_MSG_DELOBJ, a->found->v[i].owner, 0);
}

/*
 * After every kept sandbox is rendered (so no rule or jump refers to them
 * any more): the policy chains no kept sandbox uses, then the per-sandbox
 * and retired base sets of an older netd, the CIDR sets of policies no kept
 * sandbox has and the conn-limit sets no chain uses.
 */
static void render_stale_sets(struct bt *bt, const struct rc_arg *a)
{
	/* No gateway now: sb_gwlim's jumps to the twins go before the twins. */
	for (size_t i = 0; i < a->found->n && !bt->rc->gw_port; i++)
		if (a->found->v[i].kind == FOUND_GWSET && strcmp(a->found->v[i].obj, "sb_gwlim") == 0)
			bt_flush_set(bt, a->found->v[i].obj);
	for (size_t i = 0; i < a->found->n; i++)
		if (a->found->v[i].kind == FOUND_PCHAIN &&
		    !rc_chain_used(a, a->found->v[i].obj, false, bt->rc->gw_port != 0)) {
			bt_flush_chain(bt, a->found->v[i].obj);
			bt_chain(bt, NFT_MSG_DELCHAIN, a->found->v[i].obj, -1, 0, NULL);
		}
	for (size_t i = 0; i < a->found->n; i++) {
		enum found_kind k = a->found->v[i].kind;
		struct setdef d = { 0 };

		/* No gateway now: an earlier run's gateway pins go with their sets. */
		if ((k == FOUND_GWSET && !bt->rc->gw_port) || k == FOUND_RETIRED) {
			snprintf(d.name, sizeof(d.name), "%s", a->found->v[i].obj);
			bt_set(bt, NFT_MSG_DELSET, &d);
			continue;
		}
		if ((k != FOUND_OLDSET && k != FOUND_PCSET && k != FOUND_CONNSET) ||
		    (k == FOUND_PCSET && rc_policy_used(a, a->found->v[i].owner)) ||
		    (k == FOUND_CONNSET && rc_chain_used(a, a->found->v[i].obj, true, false)))
			continue;
		snprintf(d.name, sizeof(d.name), "%s", a->found->v[i].obj);
		bt_set(bt, NFT_MSG_DELSET, &d);
	}
}

/*
 * The whole start-up in one batch: the base ruleset (created, or kept and
 * refilled), what an older netd or sandboxes no longer in the state dir
 * left and the pins of no kept sandbox removed, every kept sandbox
 * rendered (each policy chain once), then the chains and sets nothing
 * refers to any more removed.  The order inside the batch matters: the
 * base sets (vmaps included) are emptied first, so no jump refers to a
 * stale chain when it is deleted; a set goes only after the last rule
 * referring to it.
 */
static void render_reconcile(struct bt *bt, const void *argp)
{
	const struct rc_arg *a = argp;

	fw_render_open(bt, a->cfg);
	if (a->found) {
		render_stale_chains(bt, a);
		for (int i = 0; i < 4; i++)
			render_pin_keys_remove(bt, &fw_fams[i % 2], i / 2, a->orphans[i],
					       a->orphan_stride, a->n_orphans[i]);
	}
	for (size_t i = 0; i < a->n; i++)
		render_sandbox(bt, &a->sbs[i]);
	if (a->found)
		render_stale_sets(bt, a);
}

/* The records of the kept sandboxes (the registry has what of their pins is in the kernel). */
static int sb_records(struct fw *fw, const struct fw_restore *sbs, size_t n,
		      const uint64_t *digests, const struct rc_arg *a)
{
	fw->sbs = calloc(n ? n : 1, sizeof(*fw->sbs));
	if (!fw->sbs)
		return -ENOMEM;
	fw->cap_sbs = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct fw_sb_rec *rec = &fw->sbs[fw->n_sbs++];

		snprintf(rec->name, sizeof(rec->name), "%s", sbs[i].sb.name);
		snprintf(rec->ifname, sizeof(rec->ifname), "%s", sbs[i].sb.host_ifname);
		snprintf(rec->policy, sizeof(rec->policy), "%s", sbs[i].pol->name);
		rec->ct_mark = sbs[i].sb.ct_mark;
		rec->metered = pchain_slow_path(sbs[i].pol);
		{
			struct pchain_names nm;
			uint64_t cd = 0;

			pchain_names(&fw->rc, sbs[i].pol, fw_mode_audit(sbs[i].sb.mode, sbs[i].pol),
				     &nm);
			for (size_t k = 0; k < a->n_chains; k++)
				if (strcmp(a->chains[k].chain, nm.chain) == 0)
					cd = a->chain_digests[k];
			if (fw_pc_ref(fw, &nm, cd) < 0)
				return -ENOMEM;
			snprintf(rec->chain, sizeof(rec->chain), "%s", nm.chain);
		}
		rec->addr4 = sbs[i].sb.addr4;
		rec->addr6 = sbs[i].sb.addr6;
		rec->chained = sbs[i].sb.chained;
		rec->tap = sbs[i].sb.tap;
		memcpy(rec->mac, sbs[i].sb.mac, sizeof(rec->mac));
		rec->digest = digests[i];
		fw_sb_index_add(fw, fw->n_sbs - 1);
	}
	return 0;
}

/*
 * The index of policy chain @nm in @a->chains, added if new (*@added).
 * Return: the index; -ENOMEM.
 */
static int rc_chain_index(struct rc_arg *a, const struct pchain_names *nm, bool *added)
{
	*added = false;
	for (size_t i = 0; i < a->n_chains; i++)
		if (strcmp(a->chains[i].chain, nm->chain) == 0)
			return (int)i;
	a->chains[a->n_chains] = *nm;
	*added = true;
	return (int)a->n_chains++;
}

static int rc_args(const struct fw_rcfg *rc, struct rc_arg *a, const struct fw_restore *sbs,
		   size_t n)
{
	a->sbs = calloc(n ? n : 1, sizeof(*a->sbs));
	a->digests = calloc(n ? n : 1, sizeof(*a->digests));
	a->names = calloc(n ? n : 1, sizeof(*a->names));
	a->chains = calloc(n ? n : 1, sizeof(*a->chains));
	a->chain_digests = calloc(n ? n : 1, sizeof(*a->chain_digests));
	if (!a->sbs || !a->digests || !a->names || !a->chains || !a->chain_digests)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r;

		if (!fw_sb_ok(&sbs[i].sb) || !sbs[i].pol)
			return -EINVAL;
		r = sb_arg_init(&a->sbs[i], &sbs[i].sb, sbs[i].pol);
		if (r < 0)
			return r;
		a->sbs[i].replace_pins = sbs[i].flush_pins;	/* with no pins: emptied */
		a->sbs[i].digest_out = &a->digests[i];
		a->names[i] = sbs[i].sb.name;
		{
			struct pchain_names nm;
			bool added;
			int k;

			pchain_names(rc, sbs[i].pol, fw_mode_audit(sbs[i].sb.mode, sbs[i].pol), &nm);
			k = rc_chain_index(a, &nm, &added);
			/* The first of each chain renders it (created, or kept and refilled). */
			a->sbs[i].render_chain = added;
			a->sbs[i].chain_exists = true;
			a->sbs[i].chain_digest_out = &a->chain_digests[k];
		}
	}
	qsort(a->names, n, sizeof(*a->names), name_cmp);
	sb_args_mark_cidr(a->sbs, n);
	return 0;
}

struct src_ix {
	uint8_t a[16];	/* the source address, zero-padded */
	size_t i;	/* index into rc_arg.sbs */
};

static int src_cmp(const void *x, const void *y)
{
	return memcmp(x, y, 16);
}

/*
 * Each pin found is given (the registry) to the kept sandbox whose source
 * it has; the others (no kept sandbox sends from there) are moved to the
 * front of @d and become @a's orphans of that set (@set: pin4, pin6, gw4,
 * gw6; a gateway pin's key has no protocol: TCP).
 */
static int attribute_pins(struct rc_arg *a, struct pin_dump *d, int set)
{
	int fam = set % 2;
	const struct fw_fam *f = d->f;
	struct src_ix *ix = calloc(a->n ? a->n : 1, sizeof(*ix));
	uint64_t now = clock_mono_ms();
	size_t n_ix = 0, k = 0;
	int r = 0;

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		const struct addr *src = fam == 0 ? &a->sbs[i].sb->addr4 : &a->sbs[i].sb->addr6;

		if (src->family != f->af)
			continue;
		memcpy(ix[n_ix].a, src->a, f->alen);
		ix[n_ix++].i = i;
	}
	qsort(ix, n_ix, sizeof(*ix), src_cmp);
	for (size_t j = 0; j < d->n && r == 0; j++) {
		struct src_ix want = { 0 };
		const struct src_ix *hit;
		const uint8_t *key = d->v[j].key;
		struct pin p = { .addr.family = f->af, .gateway = d->gateway,
				 .proto = d->gateway ? IPPROTO_TCP : key[2 * f->alen] };
		uint16_t be;

		memcpy(want.a, key, f->alen);
		hit = n_ix ? bsearch(&want, ix, n_ix, sizeof(*ix), src_cmp) : NULL;
		if (!hit) {
			if (k != j)
				d->v[k] = d->v[j];
			k++;
			continue;
		}
		memcpy(p.addr.a, key + f->alen, f->alen);
		memcpy(&be, key + 2 * f->alen + (d->gateway ? 0 : 4), 2);
		p.port = ntohs(be);
		/* The remaining lifetime; an element without expiry lasts as long as possible. */
		p.timeout_ms = d->v[j].left_ms && d->v[j].left_ms < UINT32_MAX ?
				       (uint32_t)d->v[j].left_ms : UINT32_MAX;
		r = pinreg_give(a->cfg->pins, a->sbs[hit->i].sb->name, &p, 1, now, NULL);
	}
	free(ix);
	if (r < 0)
		return r;
	a->orphans[set] = d->n ? d->v[0].key : NULL;
	a->orphan_stride = sizeof(d->v[0]);
	a->n_orphans[set] = k;
	return 0;
}

/* Sandboxes not kept, as far as a chain of an older netd or a quota tells (each counted once). */
static size_t rc_count_stale(const struct rc_arg *a, const struct dump_list *found)
{
	const char **who = calloc(found->n ? found->n : 1, sizeof(*who));
	size_t n = 0, stale = 0;

	if (!who)
		return 0;
	for (size_t i = 0; i < found->n; i++)
		if ((found->v[i].kind == FOUND_CHAIN || found->v[i].kind == FOUND_QUOTA) &&
		    !rc_kept(a, found->v[i].owner))
			who[n++] = found->v[i].owner;
	qsort(who, n, sizeof(*who), name_cmp);
	for (size_t i = 0; i < n; i++)
		stale += i == 0 || strcmp(who[i], who[i - 1]) != 0;
	free(who);
	return stale;
}

/* Keep the table: inventory it, then reconcile it in one batch. */
static int reconcile_keep(struct fw *fw, struct rc_arg *a, struct dump_list *found,
			  struct pin_dump pins[4], struct fw_reconcile_info *info)
{
	int r;

	found->table = fw->rc.table;
	r = dump(fw, NFT_MSG_GETCHAIN, dump_chain_cb, found);
	if (r == 0)
		r = dump(fw, NFT_MSG_GETSET, dump_set_cb, found);
	if (r == 0)
		r = dump(fw, NFT_MSG_GETOBJ, dump_obj_cb, found);
	/* pin4, pin6, and with a gateway gw4, gw6 (without one they go whole). */
	for (int i = 0; i < (fw->rc.gw_port ? 4 : 2) && r == 0; i++) {
		pins[i].f = &fw_fams[i % 2];
		pins[i].gateway = i >= 2;
		r = dump_pins(fw, &pins[i]);
		if (r == 0)
			r = attribute_pins(a, &pins[i], i);
	}
	if (r < 0) {
		snprintf(fw->err, sizeof(fw->err), "listing the table's chains, sets and pins: %s",
			 strerror(-r));
		return r;
	}
	/* Pins to be replaced: out with what was found. */
	for (size_t i = 0; i < a->n; i++)
		if (a->sbs[i].replace_pins) {
			a->sbs[i].old_pins = a->cfg->pins;
			a->sbs[i].old_pins_of = a->sbs[i].sb->name;
			a->sbs[i].old_src[0] = a->sbs[i].sb->addr4;
			a->sbs[i].old_src[1] = a->sbs[i].sb->addr6;
		}
	a->found = found;
	r = fw_run(fw, render_reconcile, a, true);
	if (r < 0)
		return r;
	info->kept = true;
	for (size_t i = 0; i < a->n; i++)
		if (a->sbs[i].replace_pins)
			pinreg_retain(a->cfg->pins, a->sbs[i].sb->name, 0);	/* replaced by none */
	info->n_stale = rc_count_stale(a, found);
	return 0;
}

int fw_open_reconcile(const struct fw_config *cfg, const struct fw_restore *sbs, size_t n,
		      struct fw **ret, struct fw_reconcile_info *info)
{
	return fw_open_reconcile_with(cfg, NULL, sbs, n, ret, info);
}

int fw_open_reconcile_with(const struct fw_config *cfg, struct fw_kernel *k,
			   const struct fw_restore *sbs, size_t n, struct fw **ret,
			   struct fw_reconcile_info *info)
{
	struct dump_list found = { 0 };
	struct pin_dump pins[4] = { { 0 } };
	struct rc_arg a = { .cfg = cfg, .n = n };
	struct fw *fw = NULL;
	int r = 0;

	*ret = NULL;
	memset(info, 0, sizeof(*info));
	if (n && !sbs) {
		if (k)
			k->ops->free(k);
		return -EINVAL;
	}
	if (!k)
		r = fw_nl_new(&k);
	if (r == 0)
		r = fw_new(cfg, k, &fw);
	if (r < 0)
		return r;
	r = rc_args(&fw->rc, &a, sbs, n);
	if (r < 0)
		goto out;
	r = reconcile_keep(fw, &a, &found, pins, info);
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
		for (size_t i = 0; i < n; i++) {
			a.sbs[i].replace_pins = false;
			a.sbs[i].old_pins = NULL;
			pinreg_retain(cfg->pins, a.sbs[i].sb->name, 0);
		}
		r = fw_run(fw, render_reconcile, &a, false);
		if (r < 0)
			info->replaced_because[0] = '\0';
	}
	if (r == 0)
		r = sb_records(fw, sbs, n, a.digests, &a);
out:
	for (size_t i = 0; a.sbs && i < n; i++) {
		if (r < 0 && a.sbs[i].sb)	/* no fw: it holds nothing */
			pinreg_retain(cfg->pins, a.sbs[i].sb->name, 0);
		sb_arg_done(&a.sbs[i]);
	}
	free(a.sbs);
	free(a.digests);
	free(a.names);
	free(a.chains);
	free(a.chain_digests);
	free(found.v);
	for (int i = 0; i < 4; i++)
		free(pins[i].v);
	if (r < 0) {
		fw_close(fw);
		return r;
	}
	*ret = fw;
	return 0;
}
