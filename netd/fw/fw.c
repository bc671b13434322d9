/*
 * fw - the public calls of netd/fw.h: validate, render one transaction
 * (base.c, sandbox.c), commit it through the kernel (nl.c, or a test's
 * stand-in), and remember what each sandbox was given so a later call can
 * undo it.  Every change is one batch: the kernel applies it whole or not
 * at all, and a record changes only after the kernel acknowledged.
 *
 * This module does not log and does not exec anything.
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/common.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>

#include "common/clock.h"
#include "common/hash.h"
#include "common/ifname.h"
#include "netd/model/pinreg.h"

#define FW_TABLE_DEFAULT "netd"
#define FW_PINS_PER_CALL 4096	/* pins per fw_pin() call */
#define FW_SEQ_WRAP      0x40000000u	/* batches count up to here, then from 1 again */

/* ---- validation ----------------------------------------------------------- */

bool fw_name_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > POLICY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

bool fw_sb_ok(const struct fw_sandbox *sb)
{
	return sb && fw_name_ok(sb->name) && sb->host_ifname &&
	       ifname_valid(sb->host_ifname) &&
	       (sb->addr4.family == 0 || sb->addr4.family == AF_INET) &&
	       (sb->addr6.family == 0 || sb->addr6.family == AF_INET6) &&
	       (!sb->chained || sb->addr4.family || sb->addr6.family) &&
	       !(sb->ct_mark & FW_SNI_CTMARK_BITS);
}

bool fw_pin_ok(const struct fw_rcfg *rc, const struct pin *p)
{
	return fw_fam_of(p->addr.family) && (p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP) &&
	       p->timeout_ms > 0 && (!p->gateway || (p->proto == IPPROTO_TCP && rc->gw_port));
}

/* ---- records -------------------------------------------------------------- */

static uint32_t name_bucket(const char *name)
{
	return fnv32_str(FNV32_INIT, name) & (FW_NAME_BUCKETS - 1);
}

struct fw_sb_rec *fw_sb_find(struct fw *fw, const char *name)
{
	for (uint32_t k = fw->by_name[name_bucket(name)]; k; k = fw->sbs[k - 1].name_next)
		if (strcmp(fw->sbs[k - 1].name, name) == 0)
			return &fw->sbs[k - 1];
	return NULL;
}

void fw_sb_index_add(struct fw *fw, size_t i)
{
	uint32_t *head = &fw->by_name[name_bucket(fw->sbs[i].name)];

	fw->sbs[i].name_next = *head;
	*head = (uint32_t)(i + 1);
}

/* Take record @i out of the name index. */
static void index_del(struct fw *fw, size_t i)
{
	uint32_t *pp = &fw->by_name[name_bucket(fw->sbs[i].name)];

	while (*pp && *pp != i + 1)
		pp = &fw->sbs[*pp - 1].name_next;
	if (*pp)
		*pp = fw->sbs[i].name_next;
}

struct fw_sandbox fw_sb_view(const struct fw_sb_rec *rec)
{
	return (struct fw_sandbox){ .name = rec->name, .host_ifname = rec->ifname,
				    .addr4 = rec->addr4, .addr6 = rec->addr6,
				    .chained = rec->chained, .tap = rec->tap,
				    .mac = { rec->mac[0], rec->mac[1], rec->mac[2], rec->mac[3],
					     rec->mac[4], rec->mac[5] } };
}

/* Is @rec the only record whose chain uses the sets of its policy? */
static bool rec_policy_last(const struct fw *fw, const struct fw_sb_rec *rec)
{
	return rec->policy[0] != '\0' && fw_pc_policy_refs(fw, rec->policy) <= 1;
}

/* @a's removal half of what @rec jumped to: its chain and mark; the chain goes if @rec was its last user. */
static void arg_old_chain(struct fw *fw, struct sb_arg *a, const struct fw_sb_rec *rec,
			  const char *new_chain)
{
	const struct fw_pchain *pc = fw_pc_find(fw, rec->chain);

	a->old_chain = rec->chain[0] ? rec->chain : NULL;
	a->old_mark = rec->ct_mark;
	a->old_metered = rec->metered;
	if (pc && pc->refs <= 1 && (!new_chain || strcmp(new_chain, rec->chain) != 0)) {
		a->drop_chain = pc->nm.chain;
		a->drop_connset = pc->nm.connset;
	}
}

/* Fill @rec from @sb under @pol (chain @chain). */
static void rec_set(struct fw_sb_rec *rec, const struct fw_sandbox *sb, const struct policy *pol,
		    const char *chain)
{
	uint32_t name_next = rec->name_next;	/* the name is the same: its place in the index too */

	memset(rec, 0, sizeof(*rec));
	rec->name_next = name_next;
	snprintf(rec->name, sizeof(rec->name), "%s", sb->name);
	snprintf(rec->ifname, sizeof(rec->ifname), "%s", sb->host_ifname);
	snprintf(rec->policy, sizeof(rec->policy), "%s", pol->name);
	snprintf(rec->chain, sizeof(rec->chain), "%s", chain);
	rec->ct_mark = sb->ct_mark;
	rec->addr4 = sb->addr4;
	rec->addr6 = sb->addr6;
	rec->chained = sb->chained;
	rec->tap = sb->tap;
	rec->metered = pchain_slow_path(pol);
	memcpy(rec->mac, sb->mac, sizeof(rec->mac));
}

/* ---- one transaction --------------------------------------------------------- */

/* fw_run(), or with @check a batch the kernel checks and aborts (fw_run_check()). */
static int run(struct fw *fw, fw_render_fn *render, const void *arg, bool keep, bool check)
{
	struct bt bt = { .b = fw->b, .rc = &fw->rc, .keep = keep };
	int r;

	fw->err[0] = '\0';
	if (fw->seq >= FW_SEQ_WRAP)
		fw->seq = 0;
	fw_batch_begin(fw->b, fw->seq + 1);
	render(&bt, arg);
	r = check ? fw_batch_close_check(fw->b) : fw_batch_close(fw->b);
	fw->seq = fw_batch_seq_end(fw->b);
	if (r == -E2BIG) {
		snprintf(fw->err, sizeof(fw->err), "batch of %zu messages: larger than one sendmsg() "
			 "may carry", fw_batch_count(fw->b));
		return r;
	}
	if (r < 0) {
		snprintf(fw->err, sizeof(fw->err), "building batch: %s", strerror(-r));
		return r;
	}
	r = fw->k->ops->commit(fw->k, fw->b, fw->err, sizeof(fw->err));
	/*
	 * Whether the kernel applied it is not known: what fw believes of the
	 * policy chains may be wrong, so each is sent again (emptied and
	 * refilled) by the next batch that uses it, never trusted unseen.
	 */
	if (r == -ETIMEDOUT)
		for (size_t i = 0; i < fw->n_pcs; i++)
			fw->pcs[i].digest = 0;
	return r;
}

int fw_run(struct fw *fw, fw_render_fn *render, const void *arg, bool keep)
{
	return run(fw, render, arg, keep, false);
}

int fw_run_check(struct fw *fw, fw_render_fn *render, const void *arg)
{
	return run(fw, render, arg, false, true);
}

/* ---- open and close ------------------------------------------------------ */

/*
 * The flowtable fast path by @mode (FW_FLOWTABLE_*): the kernel asked
 * unless NONE.  Return: 0; -EOPNOTSUPP (ON, and the kernel has none);
 * -ENODEV (ON, and no egress interface is known); the probe's -errno (ON).
 */
static int ft_setup(struct fw *fw, uint8_t mode)
{
	int r;

	snprintf(fw->ft_why, sizeof(fw->ft_why), "disabled by configuration");
	if (mode == FW_FLOWTABLE_NONE)
		return 0;
	r = fw_ft_probe(fw);
	fw->rc.ft_kernel = r == 0;
	if (mode == FW_FLOWTABLE_OFF) {
		fw->err[0] = '\0';
		return 0;
	}
	if (r == -ENOENT || r == -EOPNOTSUPP) {
		snprintf(fw->ft_why, sizeof(fw->ft_why), "the kernel has no flowtables "
			 "(CONFIG_NF_FLOW_TABLE_INET, CONFIG_NFT_FLOW_OFFLOAD): every packet "
			 "takes the rules path");
		r = -EOPNOTSUPP;
	} else if (r < 0) {
		snprintf(fw->ft_why, sizeof(fw->ft_why), "the flowtable probe failed: %.200s",
			 fw->err);
	} else if (!fw->rc.egress[0]) {
		snprintf(fw->ft_why, sizeof(fw->ft_why), "no egress interface (egress_interface, "
			 "or a default route): no device for the flowtable");
		r = -ENODEV;
	}
	fw->err[0] = '\0';
	if (r < 0)
		return mode == FW_FLOWTABLE_ON ? r : 0;
	fw->rc.flowtable = true;
	fw->rc.ft_uplink = if_nametoindex(fw->rc.egress) != 0;
	return 0;
}

int fw_new(const struct fw_config *cfg, struct fw_kernel *k, struct fw **ret)
{
	const char *table = cfg->table && cfg->table[0] ? cfg->table : FW_TABLE_DEFAULT;
	struct fw *fw;
	int r;

	*ret = NULL;
	if (strlen(table) >= NFT_TABLE_MAXNAMELEN || cfg->dns_port == 0 ||
	    (cfg->egress_ifname && strlen(cfg->egress_ifname) >= IFNAMSIZ) ||
	    (cfg->pool4.addr.family && cfg->pool4.addr.family != AF_INET) ||
	    (cfg->pool6.addr.family && cfg->pool6.addr.family != AF_INET6) ||
	    (cfg->n_internal && !cfg->internal) || !cfg->pins) {
		k->ops->free(k);
		return -EINVAL;
	}
	fw = calloc(1, sizeof(*fw));
	if (fw) {
		fw->b = fw_batch_new();
		fw->by_name = calloc(FW_NAME_BUCKETS, sizeof(*fw->by_name));
	}
	if (!fw || !fw->b || !fw->by_name) {
		if (fw) {
			fw_batch_free(fw->b);
			free(fw->by_name);
		}
		free(fw);
		k->ops->free(k);
		return -ENOMEM;
	}
	fw->k = k;
	fw->pins = cfg->pins;
	snprintf(fw->rc.table, sizeof(fw->rc.table), "%s", table);
	fw->rc.dns_port = cfg->dns_port;
	fw->rc.log_group = cfg->log_group;
	fw->rc.conn_limit = cfg->conn_limit;
	fw->rc.gw_port = cfg->gw_port;
	if (cfg->egress_ifname)
		snprintf(fw->rc.egress, sizeof(fw->rc.egress), "%s", cfg->egress_ifname);
	fw->rc.pool4 = cfg->pool4;
	fw->rc.pool6 = cfg->pool6;
	fw->rc.fast_path = !cfg->no_fast_path;
	r = ft_setup(fw, cfg->flowtable);
	if (r < 0) {
		fw_close(fw);
		return r;
	}
	/*
	 * The queue rules: nftables' own "queue" first (loaded on demand), else
	 * the xtables target (the kernel does not load it for an inet table).
	 * A stand-in kernel (FW_FLOWTABLE_NONE) is asked nothing: xtables.
	 */
	if (cfg->flowtable == FW_FLOWTABLE_NONE) {
		fw->rc.sni_queue = true;
	} else {
		fw->rc.queue_native = true;
		if (fw_sni_queue_probe(fw) < 0) {
			fw->rc.queue_native = false;
			fw->rc.sni_queue = fw_sni_queue_probe(fw) == 0;
		} else {
			fw->rc.sni_queue = true;
		}
	}
	fw->err[0] = '\0';
	*ret = fw;
	return 0;
}

void fw_render_open(struct bt *bt, const void *arg)
{
	const struct fw_config *cfg = arg;

	render_base(bt, cfg->internal, cfg->n_internal);
}

int fw_open_with(const struct fw_config *cfg, struct fw_kernel *k, struct fw **ret)
{
	struct fw *fw;
	int r;

	*ret = NULL;
	r = fw_new(cfg, k, &fw);
	if (r < 0)
		return r;
	r = fw_run(fw, fw_render_open, cfg, false);
	if (r < 0) {
		fw_close(fw);
		return r;
	}
	*ret = fw;
	return 0;
}

int fw_open(const struct fw_config *cfg, struct fw **ret)
{
	struct fw_kernel *k;
	int r;

	*ret = NULL;
	r = fw_nl_new(&k);
	if (r < 0)
		return r;
	return fw_open_with(cfg, k, ret);
}

void fw_close(struct fw *fw)
{
	if (!fw)
		return;
	if (fw->k)
		fw->k->ops->free(fw->k);
	fw_batch_free(fw->b);
	free(fw->sbs);
	free(fw->by_name);
	free(fw->pcs);
	free(fw);
}

const char *fw_last_error(const struct fw *fw)
{
	return fw ? fw->err : "";
}

/* ---- sandboxes ------------------------------------------------------------ */

struct pin_arg {
	struct addr src[2];
	const struct pin *pins;	/* to add */
	size_t n;
	const struct pinreg *reg;	/* to remove: what it gave @name */
	const char *name;
};

static void render_pins_fn(struct bt *bt, const void *arg)
{
	const struct pin_arg *a = arg;

	render_pins(bt, a->src, a->pins, a->n);
}

static void render_pins_remove_fn(struct bt *bt, const void *arg)
{
	const struct pin_arg *a = arg;

	render_pins_remove(bt, a->src, a->reg, a->name);
}

static void render_sandbox_fn(struct bt *bt, const void *arg)
{
	render_sandbox(bt, arg);
}

/*
 * A sandbox's add, after the removal of what other records (whose delete
 * failed, say) hold for its addresses (pins, marks) or its mark (quota).
 */
struct add_arg {
	struct sb_arg *a;
	const struct pinreg *reg;
	struct fw_sb_rec *clash[2];	/* other records with its IPv4 / IPv6 address, or NULL */
	struct fw_sb_rec *mark_clash;	/* another record with its mark, or NULL */
};

static void render_add_fn(struct bt *bt, const void *arg)
{
	const struct add_arg *x = arg;

	for (int i = 0; i < 2; i++)
		if (x->clash[i] && (i == 0 || x->clash[1] != x->clash[0])) {
			const struct addr src[2] = { x->clash[i]->addr4, x->clash[i]->addr6 };
			struct fw_sandbox v = fw_sb_view(x->clash[i]);

			render_pins_remove(bt, src, x->reg, x->clash[i]->name);
			render_marks_remove(bt, &v, x->clash[i]->ct_mark);
		}
	if (x->mark_clash) {
		const uint32_t marks[2] = { x->mark_clash->ct_mark, 0 };

		render_quota_remove(bt, x->mark_clash->name, marks);
	}
	render_sandbox(bt, x->a);
}

/* Another record than @self with conntrack mark @mark (not 0); NULL if none. */
static struct fw_sb_rec *rec_with_mark(struct fw *fw, const struct fw_sb_rec *self, uint32_t mark)
{
	for (size_t i = 0; mark && i < fw->n_sbs; i++)
		if (&fw->sbs[i] != self && fw->sbs[i].ct_mark == mark)
			return &fw->sbs[i];
	return NULL;
}

/* Another record than @self whose address of @a's family is @a; NULL if none. */
static struct fw_sb_rec *rec_with_addr(struct fw *fw, const struct fw_sb_rec *self,
				       const struct addr *a)
{
	if (!a->family)
		return NULL;
	for (size_t i = 0; i < fw->n_sbs; i++) {
		const struct addr *b = a->family == AF_INET ? &fw->sbs[i].addr4 : &fw->sbs[i].addr6;

		if (&fw->sbs[i] != self && addr_equal(a, b))
			return &fw->sbs[i];
	}
	return NULL;
}

/* The record of @name, or a new empty slot at the end (not yet counted). */
static int rec_slot(struct fw *fw, const char *name, struct fw_sb_rec **ret, bool *existed)
{
	*ret = fw_sb_find(fw, name);
	*existed = *ret != NULL;
	if (*ret)
		return 0;
	if (fw->n_sbs == fw->cap_sbs) {
		size_t nc = fw->cap_sbs ? 2 * fw->cap_sbs : 16;
		struct fw_sb_rec *ns = realloc(fw->sbs, nc * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		fw->sbs = ns;
		fw->cap_sbs = nc;
	}
	*ret = &fw->sbs[fw->n_sbs];
	memset(*ret, 0, sizeof(**ret));
	return 0;
}

/* @a's removal half from @rec: its pins, sent from its addresses. */
static void arg_old_pins(const struct fw *fw, struct sb_arg *a, const struct fw_sb_rec *rec)
{
	a->old_pins = fw->pins;
	a->old_pins_of = rec->name;
	a->old_src[0] = rec->addr4;
	a->old_src[1] = rec->addr6;
}

/*
 * @a's removal half from @rec, the sandbox as fw has it before this call:
 * @old_rec and @old (the caller's, alive while @a is used) keep that copy;
 * @new_chain is the policy chain it is about to jump to (NULL: none).
 */
static void arg_old(struct fw *fw, struct sb_arg *a, const struct fw_sb_rec *rec,
		    struct fw_sb_rec *old_rec, struct fw_sandbox *old, const char *new_chain)
{
	*old_rec = *rec;
	*old = fw_sb_view(old_rec);
	a->old = old;
	a->old_dns4 = old_rec->dns4;
	a->old_dns6 = old_rec->dns6;
	arg_old_pins(fw, a, rec);
	if (rec_policy_last(fw, rec))
		a->drop_policy = old_rec->policy;
	arg_old_chain(fw, a, old_rec, new_chain);
}

int fw_sandbox_add(struct fw *fw, const struct fw_sandbox *sb, const struct policy *pol)
{
	struct fw_sb_rec *rec = NULL, old_rec;
	const struct fw_pchain *pc;
	struct pchain_names nm;
	struct fw_sandbox old;
	uint64_t digest = 0, cd = 0;
	struct add_arg x;
	struct sb_arg a;
	bool existed = false;
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	/* The quota is found by the mark: without one it could not apply. */
	if (!fw || !fw_sb_ok(sb) || !pol || (pol->egress_bytes && !sb->ct_mark))
		return -EINVAL;
	r = sb_arg_init(&a, sb, pol);
	if (r == 0)
		r = rec_slot(fw, sb->name, &rec, &existed);
	if (r == 0)
		r = fw_pc_reserve(fw, 1);
	if (r < 0)
		goto out;
	pchain_names(&fw->rc, pol, fw_mode_audit(sb->mode, pol), &nm);
	if (existed)
		arg_old(fw, &a, rec, &old_rec, &old, nm.chain);
	a.fill_cidr = true;
	a.digest_out = &digest;
	/* Its policy's chain: sent only if new or its rules changed. */
	pc = fw_pc_find(fw, nm.chain);
	a.render_chain = true;
	a.chain_exists = pc != NULL;
	a.chain_old_digest = pc ? pc->digest : 0;
	a.chain_digest_out = &cd;
	if (pc && pc->nm.connset[0] && strcmp(pc->nm.connset, nm.connset) != 0)
		a.old_connset = pc->nm.connset;	/* N changed: the old counts' set goes */
	/*
	 * Pins another record still holds for these addresses (its delete
	 * failed, say) go in the same batch: a pin is keyed by its source
	 * address, and this sandbox must never inherit one.
	 */
	x = (struct add_arg){ .a = &a, .reg = fw->pins, .clash = { rec_with_addr(fw, rec, &sb->addr4),
						  rec_with_addr(fw, rec, &sb->addr6) },
			      .mark_clash = rec_with_mark(fw, rec, sb->ct_mark) };
	r = fw_run(fw, render_add_fn, &x, false);
	if (r < 0)
		goto out;
	for (int i = 0; i < 2; i++)
		if (x.clash[i])
			pinreg_retain(fw->pins, x.clash[i]->name, 0);
	/* Recorded only now the kernel has it; an earlier dns_local was removed. */
	if (existed) {
		pinreg_retain(fw->pins, rec->name, 0);	/* the add removed them */
		fw_pc_unref(fw, old_rec.chain);
	}
	if (fw_pc_ref(fw, &nm, cd) < 0)
		nm.chain[0] = '\0';	/* not counted: a later delete keeps the chain */
	rec_set(rec, sb, pol, nm.chain);
	rec->digest = digest;
	if (!existed)
		fw_sb_index_add(fw, fw->n_sbs++);
out:
	sb_arg_done(&a);
	return r;
}

struct dns_arg {
	const char *ifname;
	struct addr old[2], cur[2];	/* [0] IPv4, [1] IPv6 */
};

static void render_dns_fn(struct bt *bt, const void *arg)
{
	const struct dns_arg *a = arg;

	render_dns(bt, a->ifname, a->old, a->cur);
}

int fw_sandbox_set_dns(struct fw *fw, const char *name, const struct addr *dns4,
		       const struct addr *dns6)
{
	struct fw_sb_rec *rec;
	struct dns_arg a;
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || !name || !dns4 || !dns6 || (dns4->family && dns4->family != AF_INET) ||
	    (dns6->family && dns6->family != AF_INET6))
		return -EINVAL;
	rec = fw_sb_find(fw, name);
	if (!rec)
		return -ENOENT;
	if (rec->chained)
		return -EINVAL;
	a = (struct dns_arg){ .ifname = rec->ifname, .old = { rec->dns4, rec->dns6 },
			      .cur = { *dns4, *dns6 } };
	r = fw_run(fw, render_dns_fn, &a, false);
	if (r < 0)
		return r;
	rec->dns4 = *dns4;
	rec->dns6 = fw_rcfg_v6(&fw->rc) ? *dns6 : (struct addr){ 0 };
	return 0;
}

int fw_sandbox_del(struct fw *fw, const struct fw_sandbox *sb)
{
	struct fw_sb_rec *rec, old_rec;
	struct fw_sandbox old;
	struct sb_arg a = { .sb = sb };
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || !fw_sb_ok(sb))
		return -EINVAL;
	rec = fw_sb_find(fw, sb->name);
	if (rec)
		arg_old(fw, &a, rec, &old_rec, &old, NULL);
	r = fw_run(fw, render_sandbox_fn, &a, false);
	/*
	 * Only the table or its base sets can be missing.  The batch changed
	 * nothing, though: the pins go on their own (gone with the table if
	 * that is what is missing), or the record stays.
	 */
	if (r == -ENOENT && rec && pinreg_given_count(fw->pins, rec->name)) {
		struct pin_arg pa = { .src = { rec->addr4, rec->addr6 }, .reg = fw->pins,
				      .name = rec->name };

		r = fw_run(fw, render_pins_remove_fn, &pa, false);
	}
	if (r == -ENOENT)
		r = 0;
	if (r == 0 && rec) {
		size_t i = (size_t)(rec - fw->sbs), last = fw->n_sbs - 1;

		pinreg_retain(fw->pins, rec->name, 0);
		fw_pc_unref(fw, rec->chain);
		index_del(fw, i);
		if (i != last) {	/* the last record moves into the hole */
			index_del(fw, last);
			*rec = fw->sbs[last];
			fw_sb_index_add(fw, i);
		}
		fw->n_sbs--;
	}
	return r;
}

/* ---- pins ----------------------------------------------------------------- */

int fw_pin(struct fw *fw, const char *name, const struct pin *pins, size_t n)
{
	struct fw_sb_rec *rec;
	struct pin_arg a;
	uint64_t now;
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || !fw_name_ok(name) || (n && !pins))
		return -EINVAL;
	if (n > FW_PINS_PER_CALL)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		/* Without a gateway a gateway pin has no set: never a plain pin instead. */
		if (pins[i].gateway && !fw->rc.gw_port)
			return -EOPNOTSUPP;
		if (!fw_pin_ok(&fw->rc, &pins[i]))
			return -EINVAL;
	}
	rec = fw_sb_find(fw, name);
	if (!rec)
		return -ENOENT;
	if (n == 0)
		return 0;
	now = clock_mono_ms();
	/* What it was given bounds what is live: count only when it might be over. */
	if (pinreg_given_count(fw->pins, name) + n > FW_PIN_SET_SIZE &&
	    pinreg_given_live(fw->pins, name, pins, n, now) > FW_PIN_SET_SIZE)
		return -ENOSPC;
	/*
	 * All sandboxes together stay under half the shared set's size, so a
	 * removal (which creates each element before deleting it) always has
	 * room, whatever the others hold.  Counted on the registry's given
	 * entries; past the limit, the lapsed ones are dropped first.
	 */
	if (pinreg_given_total(fw->pins) + n > FW_PINS_TOTAL_MAX) {
		pinreg_sweep(fw->pins, now);
		if (pinreg_given_total(fw->pins) + n > FW_PINS_TOTAL_MAX)
			return -ENOSPC;
	}
	/*
	 * Recorded before the batch is sent: a pin the kernel has must be in
	 * the registry, or the sandbox's removal would leave it behind; one
	 * the kernel refused is removed harmlessly later.  One probe a pin;
	 * the answer's pinreg_note() after the ack finds them again without
	 * one (the registry's memo).
	 */
	r = pinreg_give(fw->pins, name, pins, n, now, NULL);
	if (r < 0)
		return r;
	a = (struct pin_arg){ .src = { rec->addr4, rec->addr6 }, .pins = pins, .n = n };
	r = fw_run(fw, render_pins_fn, &a, false);
	/* The kernel says a set at its size limit is full with ENFILE. */
	return r == -ENFILE ? -ENOSPC : r;
}

struct lookup_res {
	bool found;
	uint64_t expires_ms;
};

int fw_set_elems_walk(const struct nlmsghdr *nlh, fw_set_elem_fn *fn, void *arg)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;

	if (!s)
		return MNL_CB_ERROR;
	if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		return MNL_CB_ERROR;
	}
	it = nftnl_set_elems_iter_create(s);
	while (it && (e = nftnl_set_elems_iter_next(it)))
		fn(arg, e);
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return MNL_CB_OK;
}

struct each_arg {
	fw_elem_fn *fn;
	void *arg;
};

static void each_elem(void *arg, const struct nftnl_set_elem *ce)
{
	const struct each_arg *a = arg;
	struct nftnl_set_elem *e = (struct nftnl_set_elem *)ce;	/* libnftnl's getters take non-const */
	uint32_t len = 0;
	const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);

	if (key)
		a->fn(a->arg, key, len,
		      nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION) ?
			      nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION) : 0);
}

int fw_elems_each(const struct nlmsghdr *nlh, fw_elem_fn *fn, void *arg)
{
	struct each_arg a = { fn, arg };

	return fw_set_elems_walk(nlh, each_elem, &a);
}

/* The first element answers the lookup. */
static void lookup_elem(void *arg, const void *key, uint32_t len, uint64_t expires_ms)
{
	struct lookup_res *res = arg;

	(void)key;
	(void)len;
	if (res->found)
		return;
	res->found = true;
	res->expires_ms = expires_ms;
}

static int lookup_cb(const struct nlmsghdr *nlh, void *data)
{
	return fw_elems_each(nlh, lookup_elem, data);
}

/* One get of @s (@elems: its elements, else the set itself). */
static int get_set(struct fw *fw, uint16_t type, struct nftnl_set *s, bool elems, mnl_cb_t cb,
		   void *data)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(req, type, NFPROTO_INET, 0, 0);

	if (elems)
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
	else
		nftnl_set_nlmsg_build_payload(nlh, s);
	return fw->k->ops->talk(fw->k, nlh, cb, data);
}

int fw_pin_lookup(struct fw *fw, const char *name, const struct addr *addr, uint8_t proto,
		  uint16_t port, uint64_t *ret_expires_ms)
{
	const struct pin p = { .proto = proto, .port = port };

	return fw_pin_find(fw, name, addr, &p, ret_expires_ms);
}

int fw_pin_find(struct fw *fw, const char *name, const struct addr *addr, const struct pin *what,
		uint64_t *ret_expires_ms)
{
	const struct fw_fam *f = addr ? fw_fam_of(addr->family) : NULL;
	struct pin pin = *what;
	struct lookup_res res = { 0 };
	const struct fw_sb_rec *rec;
	struct nftnl_set_elem *e;
	const struct addr *src;
	uint8_t key[FKEY_PIN_MAX];
	struct nftnl_set *s;
	struct setdef d;
	int r;

	if (fw)
		fw->err[0] = '\0';	/* argument errors below are not the kernel's */

	if (!fw || !fw_name_ok(name) || !f || !what)
		return -EINVAL;
	if (what->gateway && !fw->rc.gw_port)
		return 0;	/* no gateway, no gw4/6: no gateway pin */
	rec = fw_sb_find(fw, name);
	if (!rec)
		return -ENOENT;
	src = f->af == AF_INET ? &rec->addr4 : &rec->addr6;
	if (src->family != f->af)
		return 0;	/* it cannot send from this family: no pin */
	pin.addr = *addr;
	setdef_pin_of(&d, f, pin.gateway);
	s = nftnl_set_alloc();
	e = elem_new(key, fkey_pin_of(key, src, &pin));
	if (!s || !e) {
		nftnl_set_free(s);
		nftnl_set_elem_free(e);
		return -ENOMEM;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, fw->rc.table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, d.name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_elem_add(s, e);
	r = get_set(fw, NFT_MSG_GETSETELEM, s, true, lookup_cb, &res);
	if (r == -ENOENT) {
		/* No such element, or no such set?  Ask for the set itself. */
		r = get_set(fw, NFT_MSG_GETSET, s, false, NULL, NULL);
		res.found = false;
	}
	nftnl_set_free(s);
	if (r < 0)
		return r;
	if (res.found && ret_expires_ms)
		*ret_expires_ms = res.expires_ms;
	return res.found;
}
