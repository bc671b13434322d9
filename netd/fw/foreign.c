/*
 * foreign - other tables' forward-hook chains that stop what netd's own
 * forward chain accepted (fw_forward_blockers()).  Reads only, through
 * kernel.h's talk(): one dump of every chain finds the forward-hook base
 * chains of families ip, ip6 and inet outside netd's table; each of their
 * tables' chains and rules is dumped and reduced to what fjudge.c can
 * judge (interface conditions, "something else", a verdict), and each such
 * base chain is judged for a sandbox's packet both ways.  Not here: what to
 * tell the user (the daemon's health.c), iptables-legacy's x_tables (not
 * nf_tables: invisible), the bridge family (chained attachments).
 */
#include "netd/fw/core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "netd/fw/fjudge.h"

#define FOREIGN_TABLES  FW_BLOCKERS_MAX	/* tables with a forward-hook chain, read at most */
#define FOREIGN_CHAINS  4096		/* chains of one table read at most */
#define FOREIGN_RULES   65536		/* rules of one table read at most */

/* A forward-hook base chain found by the first dump. */
struct fwd_chain {
	uint8_t family;
	char table[FJ_NAME_MAX];
	char chain[FJ_NAME_MAX];
	int32_t prio;
	bool policy_drop;
};

struct fwd_list {
	struct fw *fw;
	struct fwd_chain c[FOREIGN_TABLES];
	size_t n;
	bool more;		/* some were left out */
};

static bool family_ours(uint32_t f)
{
	return f == NFPROTO_IPV4 || f == NFPROTO_IPV6 || f == NFPROTO_INET;
}

/* The chain of dump message @nlh (caller frees), or NULL (no memory, a message libnftnl refuses). */
static struct nftnl_chain *chain_of(const struct nlmsghdr *nlh)
{
	struct nftnl_chain *c = nftnl_chain_alloc();

	if (c && nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		c = NULL;
	}
	return c;
}

static int fwd_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fwd_list *l = data;
	struct nftnl_chain *c = chain_of(nlh);
	uint32_t fam;
	const char *tb, *nm;

	if (!c)
		return MNL_CB_ERROR;
	fam = nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	tb = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE);
	nm = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	if (tb && nm && family_ours(fam) && nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM) &&
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM) == NF_INET_FORWARD &&
	    !(fam == NFPROTO_INET && strcmp(tb, l->fw->rc.table) == 0)) {
		if (l->n == FOREIGN_TABLES) {
			l->more = true;
		} else {
			struct fwd_chain *f = &l->c[l->n++];

			f->family = (uint8_t)fam;
			snprintf(f->table, sizeof(f->table), "%s", tb);
			snprintf(f->chain, sizeof(f->chain), "%s", nm);
			f->prio = (int32_t)nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO);
			f->policy_drop = nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY) &&
					 nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY) == NF_DROP;
		}
	}
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* One table's chains and rules, reduced for fjudge.c. */
struct table_read {
	uint8_t family;
	const char *table;
	struct fj_chain *chains;
	size_t n_chains;
	struct fj_rule *rules;	/* every rule, grouped per chain after the read */
	size_t *rule_chain;	/* the chain index of rules[i] */
	size_t n_rules, cap_rules;
	bool too_big;
	bool docker_user;	/* a chain named DOCKER-USER */
};

static int table_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct table_read *t = data;
	struct nftnl_chain *c = chain_of(nlh);
	const char *tb, *nm;

	if (!c)
		return MNL_CB_ERROR;
	tb = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE);
	nm = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	if (tb && nm && strcmp(tb, t->table) == 0 &&
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY) == t->family) {
		if (t->n_chains == FOREIGN_CHAINS) {
			t->too_big = true;
		} else {
			struct fj_chain *fc = &t->chains[t->n_chains++];

			memset(fc, 0, sizeof(*fc));
			snprintf(fc->name, sizeof(fc->name), "%s", nm);
			fc->base = nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM);
			fc->policy_drop = nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY) &&
					  nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY) == NF_DROP;
			if (strcmp(nm, "DOCKER-USER") == 0)
				t->docker_user = true;
		}
	}
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* What a register holds, as far as a rule's conditions go. */
enum { REG_NONE = 0, REG_IIF, REG_OIF, REG_OTHER };
#define REGS 32

struct rule_read {
	struct fj_rule *r;
	uint8_t reg[REGS];
};

static void reg_set(struct rule_read *rr, struct nftnl_expr *e, uint16_t attr, uint8_t what)
{
	uint32_t reg;

	if (!nftnl_expr_is_set(e, attr))
		return;
	reg = nftnl_expr_get_u32(e, attr);
	if (reg < REGS)
		rr->reg[reg] = what;
}

/* xt targets that do not end the rule's chain walk (iptables-nft's -j LOG and the like). */
static bool xt_target_continues(const char *name)
{
	static const char *const go_on[] = { "LOG", "NFLOG", "MARK", "CONNMARK", "TCPMSS",
					     "CHECKSUM", "CLASSIFY", "DSCP", "TOS", "TRACE", "AUDIT",
					     "CT", "IDLETIMER", "LED", "SECMARK", "CONNSECMARK",
					     "TEE", "HMARK", "SET", NULL };

	for (size_t i = 0; go_on[i]; i++)
		if (strcmp(name, go_on[i]) == 0)
			return true;
	return false;
}

static void cmp_read(struct rule_read *rr, struct nftnl_expr *e)
{
	uint32_t reg = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG);
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP), len = 0;
	const void *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);
	struct fj_rule *r = rr->r;
	struct fj_match *m;

	if (reg >= REGS || (rr->reg[reg] != REG_IIF && rr->reg[reg] != REG_OIF) || !d ||
	    len == 0 || len > FJ_IFNAME_MAX || (op != NFT_CMP_EQ && op != NFT_CMP_NEQ) ||
	    r->n_m == FJ_MATCHES) {
		r->unknown = true;
		return;
	}
	m = &r->m[r->n_m++];
	memset(m, 0, sizeof(*m));
	m->field = rr->reg[reg] == REG_IIF ? FJ_IIFNAME : FJ_OIFNAME;
	m->neq = op == NFT_CMP_NEQ;
	m->len = (uint8_t)len;
	memcpy(m->name, d, len);
}

static void imm_read(struct rule_read *rr, struct nftnl_expr *e)
{
	struct fj_rule *r = rr->r;
	const char *chain;

	if (!nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
		reg_set(rr, e, NFTNL_EXPR_IMM_DREG, REG_OTHER);
		return;
	}
	switch ((int32_t)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT)) {
	case NF_ACCEPT: r->verdict = FJ_ACCEPT; break;
	case NF_DROP: r->verdict = FJ_DROP; break;
	case NFT_CONTINUE: r->verdict = FJ_CONTINUE; break;
	case NFT_RETURN: r->verdict = FJ_RETURN; break;
	case NFT_JUMP:
	case NFT_GOTO:
		chain = nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN);
		r->verdict = (int32_t)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == NFT_JUMP ?
				     FJ_JUMP : FJ_GOTO;
		snprintf(r->target, sizeof(r->target), "%s", chain ? chain : "");
		break;
	default: r->verdict = FJ_ANY; break;
	}
}

/* One expression of a rule into rr->r (fjudge.h says what is kept). */
static int expr_read(struct nftnl_expr *e, void *data)
{
	struct rule_read *rr = data;
	struct fj_rule *r = rr->r;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (!name) {
		r->unknown = true;
	} else if (strcmp(name, "meta") == 0) {
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

		reg_set(rr, e, NFTNL_EXPR_META_DREG, key == NFT_META_IIFNAME ? REG_IIF :
						     key == NFT_META_OIFNAME ? REG_OIF : REG_OTHER);
	} else if (strcmp(name, "cmp") == 0) {
		cmp_read(rr, e);
	} else if (strcmp(name, "immediate") == 0) {
		imm_read(rr, e);
	} else if (strcmp(name, "lookup") == 0) {
		r->unknown = true;	/* a set: some names in it, maybe */
		if (nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG) == NFT_REG_VERDICT)
			r->verdict = FJ_ANY;	/* a verdict map */
		else
			reg_set(rr, e, NFTNL_EXPR_LOOKUP_DREG, REG_OTHER);
	} else if (strcmp(name, "reject") == 0) {
		r->verdict = FJ_DROP;
	} else if (strcmp(name, "target") == 0) {
		const char *tg = nftnl_expr_get_str(e, NFTNL_EXPR_TG_NAME);

		if (tg && strcmp(tg, "REJECT") == 0)
			r->verdict = FJ_DROP;
		else if (!tg || !xt_target_continues(tg))
			r->verdict = FJ_ANY;
	} else if (strcmp(name, "queue") == 0) {
		r->verdict = FJ_ANY;
	} else if (strcmp(name, "match") == 0 || strcmp(name, "limit") == 0 ||
		   strcmp(name, "quota") == 0 || strcmp(name, "connlimit") == 0 ||
		   strcmp(name, "range") == 0) {
		r->unknown = true;
	} else if (strcmp(name, "counter") == 0 || strcmp(name, "log") == 0 ||
		   strcmp(name, "objref") == 0 || strcmp(name, "notrack") == 0 ||
		   strcmp(name, "dynset") == 0 || strcmp(name, "dup") == 0 ||
		   strcmp(name, "flow_offload") == 0 || strcmp(name, "nat") == 0 ||
		   strcmp(name, "masq") == 0 || strcmp(name, "redir") == 0) {
		/* statements: they decide nothing about where the packet goes */
	} else {
		static const struct { const char *name; uint16_t dreg; } loads[] = {
			{ "payload", NFTNL_EXPR_PAYLOAD_DREG }, { "ct", NFTNL_EXPR_CT_DREG },
			{ "exthdr", NFTNL_EXPR_EXTHDR_DREG }, { "bitwise", NFTNL_EXPR_BITWISE_DREG },
			{ "byteorder", NFTNL_EXPR_BYTEORDER_DREG }, { "fib", NFTNL_EXPR_FIB_DREG },
			{ "rt", NFTNL_EXPR_RT_DREG }, { "socket", NFTNL_EXPR_SOCKET_DREG },
			{ "hash", NFTNL_EXPR_HASH_DREG }, { "numgen", NFTNL_EXPR_NG_DREG },
		};
		size_t i;

		/* A value loaded into a register: a cmp of it is "something else". */
		for (i = 0; i < sizeof(loads) / sizeof(loads[0]); i++)
			if (strcmp(name, loads[i].name) == 0)
				break;
		if (i < sizeof(loads) / sizeof(loads[0])) {
			reg_set(rr, e, loads[i].dreg, REG_OTHER);
		} else {
			/* An expression netd does not know: a condition it cannot tell,
			 * and no register is what it was. */
			r->unknown = true;
			memset(rr->reg, REG_OTHER, sizeof(rr->reg));
		}
	}
	return 0;
}

/* Rule @ru (parsed) reduced to what fjudge.c judges, into @out. */
static void rule_reduce(struct nftnl_rule *ru, struct fj_rule *out)
{
	struct rule_read rr = { .r = out };

	memset(out, 0, sizeof(*out));
	nftnl_expr_foreach(ru, expr_read, &rr);
}

static long table_chain_index(const struct table_read *t, const char *name)
{
	for (size_t i = 0; i < t->n_chains; i++)
		if (strcmp(t->chains[i].name, name) == 0)
			return (long)i;
	return -1;
}

/*
 * Each expression of rule message @nlh has its name: libnftnl (1.2.4)
 * reads it without looking (a NULL dereference; fuzz_foreign found it).
 * The kernel always sends one; a message that has none is refused here.
 */
static bool exprs_named(const struct nlmsghdr *nlh)
{
	const struct nlattr *a, *e, *n;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_RULE_EXPRESSIONS)
			continue;
		mnl_attr_for_each_nested(e, a) {
			bool named = false;

			mnl_attr_for_each_nested(n, e)
				named |= mnl_attr_get_type(n) == NFTA_EXPR_NAME &&
					 mnl_attr_validate(n, MNL_TYPE_NUL_STRING) == 0;
			if (!named)
				return false;
		}
	}
	return true;
}

static int table_rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct table_read *t = data;
	struct nftnl_rule *ru;
	const char *ch;
	long ci;

	if (!exprs_named(nlh))
		return MNL_CB_ERROR;
	ru = nftnl_rule_alloc();
	if (!ru)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, ru) < 0) {
		nftnl_rule_free(ru);
		return MNL_CB_ERROR;
	}
	ch = nftnl_rule_get_str(ru, NFTNL_RULE_CHAIN);
	ci = ch ? table_chain_index(t, ch) : -1;
	if (ci < 0) {
		/* a chain added since the chain dump: judged without it (anything) */
	} else if (t->n_rules == FOREIGN_RULES) {
		t->too_big = true;
	} else {
		if (t->n_rules == t->cap_rules) {
			size_t cap = t->cap_rules ? 2 * t->cap_rules : 256;
			struct fj_rule *nr = reallocarray(t->rules, cap, sizeof(*nr));
			size_t *nc = nr ? reallocarray(t->rule_chain, cap, sizeof(*nc)) : NULL;

			if (nr)
				t->rules = nr;
			if (!nc) {
				nftnl_rule_free(ru);
				return MNL_CB_ERROR;
			}
			t->rule_chain = nc;
			t->cap_rules = cap;
		}
		rule_reduce(ru, &t->rules[t->n_rules]);
		t->rule_chain[t->n_rules++] = (size_t)ci;
	}
	nftnl_rule_free(ru);
	return MNL_CB_OK;
}

static void table_read_done(struct table_read *t)
{
	free(t->chains);
	free(t->rules);
	free(t->rule_chain);
	memset(t, 0, sizeof(*t));
}

/*
 * Dump table @family @table's chains, then its rules (the kernel lists a
 * chain's rules in order, chains one after another), and point each chain
 * at its own.  Return: 0; -errno.
 */
static int table_read(struct fw *fw, uint8_t family, const char *table, struct table_read *t)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftnl_rule *ru = nftnl_rule_alloc();
	struct nlmsghdr *nlh;
	struct fj_rule *sorted = NULL;
	int r = -ENOMEM;

	memset(t, 0, sizeof(*t));
	t->family = family;
	t->table = table;
	t->chains = calloc(FOREIGN_CHAINS, sizeof(*t->chains));
	if (!c || !ru || !t->chains)
		goto out;
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETCHAIN, family, NLM_F_DUMP, 0);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	r = fw->k->ops->talk(fw->k, nlh, table_chain_cb, t);
	if (r < 0)
		goto out;
	nftnl_rule_set_str(ru, NFTNL_RULE_TABLE, table);
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETRULE, family, NLM_F_DUMP, 0);
	nftnl_rule_nlmsg_build_payload(nlh, ru);
	r = fw->k->ops->talk(fw->k, nlh, table_rule_cb, t);
	if (r < 0)
		goto out;
	/* Each chain's rules together, in the order the kernel gave them (a
	 * counting sort: the kernel may interleave them). */
	sorted = t->n_rules ? malloc(t->n_rules * sizeof(*sorted)) : NULL;
	if (t->n_rules && !sorted) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->n_rules; i++)
		t->chains[t->rule_chain[i]].n_rules++;
	for (size_t ci = 0, k = 0; ci < t->n_chains; ci++) {
		t->chains[ci].rules = sorted ? sorted + k : NULL;
		k += t->chains[ci].n_rules;
		t->chains[ci].n_rules = 0;
	}
	for (size_t i = 0; i < t->n_rules; i++) {
		struct fj_chain *fc = &t->chains[t->rule_chain[i]];

		sorted[(size_t)(fc->rules - sorted) + fc->n_rules++] = t->rules[i];
	}
	free(t->rules);
	t->rules = sorted;
	r = 0;
out:
	nftnl_chain_free(c);
	nftnl_rule_free(ru);
	return r;
}

/* The worse of two outcomes (fjudge.h's order: passes < may drop < drops). */
static int worse(int a, int b)
{
	return a > b ? a : b;
}

int fw_forward_blockers(struct fw *fw, const char *egress_ifname, bool ipv6,
			struct fw_blocker *out, size_t max, size_t *n_out)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct fwd_list *l;
	struct nlmsghdr *nlh;
	int r;

	*n_out = 0;
	if (!fw || !egress_ifname)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fw = fw;
	nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETCHAIN, NFPROTO_UNSPEC, NLM_F_DUMP, 0);
	r = fw->k->ops->talk(fw->k, nlh, fwd_chain_cb, l);
	for (size_t i = 0; r == 0 && i < l->n; i++) {
		const struct fwd_chain *f = &l->c[i];
		/* what a sandbox sends, and what comes back to it */
		const struct fj_packet egress = { .iifname = NULL, .oifname = egress_ifname };
		const struct fj_packet reply = { .iifname = egress_ifname, .oifname = NULL };
		struct table_read t;
		struct fj_table ft;
		int e, b;

		if (f->family == NFPROTO_IPV6 && !ipv6)
			continue;	/* no sandbox has an IPv6 address */
		r = table_read(fw, f->family, f->table, &t);
		if (r < 0) {
			table_read_done(&t);
			if (r == -ENOENT) {	/* the table went away meanwhile */
				r = 0;
				continue;
			}
			break;
		}
		ft.chains = t.chains;
		ft.n_chains = t.n_chains;
		e = fj_judge(&ft, f->chain, &egress);
		b = fj_judge(&ft, f->chain, &reply);
		if (e < 0 || b < 0) {
			table_read_done(&t);
			r = -ENOMEM;
			break;
		}
		/* Rules left unread: what they do is not known. */
		if (t.too_big && worse(e, b) == FJ_PASSES && f->policy_drop)
			e = FJ_MAY_DROP;
		if (worse(e, b) != FJ_PASSES && *n_out < max) {
			struct fw_blocker *o = &out[(*n_out)++];

			memset(o, 0, sizeof(*o));
			o->family = f->family;
			snprintf(o->table, sizeof(o->table), "%s", f->table);
			snprintf(o->chain, sizeof(o->chain), "%s", f->chain);
			o->priority = f->prio;
			o->policy_drop = f->policy_drop;
			o->drops = worse(e, b) == FJ_DROPS;
			o->egress = e != FJ_PASSES;
			o->reply = b != FJ_PASSES;
			o->docker_user = t.docker_user;
		}
		table_read_done(&t);
	}
	free(l);
	return r;
}
