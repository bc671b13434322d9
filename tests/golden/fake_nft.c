/*
 * fake_nft - see fake_nft.h.  What the model does is what nf_tables does
 * for the messages netd sends: NEW* creates an object or keeps an existing
 * one (no NLM_F_EXCL), DEL* of a missing object is -ENOENT, DELRULE without
 * a handle flushes the chain, DELSETELEM without elements flushes the set,
 * a chain with rules cannot be deleted (-EBUSY).  A batch that fails
 * anywhere is undone whole: the model is rebuilt from the batches accepted
 * before it.
 */
#include "tests/golden/fake_nft.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

struct fk_elem {
	uint8_t key[64];
	uint32_t len;
	struct nftnl_set_elem *e;
};

struct fk_set {
	struct nftnl_set *s;	/* definition only */
	struct fk_elem *el;
	size_t n;
};

struct fk_chain {
	struct nftnl_chain *c;
	struct nftnl_rule **rules;
	size_t n;
};

struct fk_table {
	uint32_t family;
	char name[NFT_TABLE_MAXNAMELEN];
	struct fk_chain *chains;
	size_t n_chains;
	struct fk_set *sets;
	size_t n_sets;
	struct nftnl_obj **objs;
	size_t n_objs;
};

struct fake {
	struct fw_kernel k;
	struct fk_table *t;
	size_t n_t;
	char *log;		/* the accepted batches, concatenated */
	size_t log_len;
};

#define GROW(arr, n) ((arr) = realloc((arr), ((n) + 1) * sizeof(*(arr))))

static void table_free(struct fk_table *t)
{
	for (size_t i = 0; i < t->n_chains; i++) {
		for (size_t j = 0; j < t->chains[i].n; j++)
			nftnl_rule_free(t->chains[i].rules[j]);
		free(t->chains[i].rules);
		nftnl_chain_free(t->chains[i].c);
	}
	for (size_t i = 0; i < t->n_sets; i++) {
		for (size_t j = 0; j < t->sets[i].n; j++)
			nftnl_set_elem_free(t->sets[i].el[j].e);
		free(t->sets[i].el);
		nftnl_set_free(t->sets[i].s);
	}
	for (size_t i = 0; i < t->n_objs; i++)
		nftnl_obj_free(t->objs[i]);
	free(t->chains);
	free(t->sets);
	free(t->objs);
}

static void model_free(struct fake *f)
{
	for (size_t i = 0; i < f->n_t; i++)
		table_free(&f->t[i]);
	free(f->t);
	f->t = NULL;
	f->n_t = 0;
}

static struct fk_table *table_find(struct fake *f, uint32_t family, const char *name)
{
	for (size_t i = 0; i < f->n_t; i++)
		if (f->t[i].family == family && name && strcmp(f->t[i].name, name) == 0)
			return &f->t[i];
	return NULL;
}

static struct fk_chain *chain_find(struct fk_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->n_chains; i++)
		if (strcmp(nftnl_chain_get_str(t->chains[i].c, NFTNL_CHAIN_NAME), name) == 0)
			return &t->chains[i];
	return NULL;
}

static struct fk_set *set_find(struct fk_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->n_sets; i++)
		if (strcmp(nftnl_set_get_str(t->sets[i].s, NFTNL_SET_NAME), name) == 0)
			return &t->sets[i];
	return NULL;
}

static ssize_t obj_find(struct fk_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->n_objs; i++)
		if (strcmp(nftnl_obj_get_str(t->objs[i], NFTNL_OBJ_NAME), name) == 0)
			return (ssize_t)i;
	return -1;
}

static int do_table(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_table *nt = nftnl_table_alloc();
	struct fk_table *t;
	const char *name;
	uint32_t fam;
	int r = 0;

	if (!nt || nftnl_table_nlmsg_parse(nlh, nt) < 0) {
		nftnl_table_free(nt);
		return -EINVAL;
	}
	name = nftnl_table_get_str(nt, NFTNL_TABLE_NAME);
	fam = nftnl_table_get_u32(nt, NFTNL_TABLE_FAMILY);
	t = table_find(f, fam, name);
	if (type == NFT_MSG_NEWTABLE && !t) {
		GROW(f->t, f->n_t);
		t = &f->t[f->n_t++];
		memset(t, 0, sizeof(*t));
		t->family = fam;
		snprintf(t->name, sizeof(t->name), "%s", name);
	} else if (type == NFT_MSG_DELTABLE) {
		if (!t) {
			r = -ENOENT;
		} else {
			table_free(t);
			*t = f->t[--f->n_t];
		}
	}
	nftnl_table_free(nt);
	return r;
}

static int do_chain(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct fk_table *t;
	struct fk_chain *ch;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		return -EINVAL;
	}
	t = table_find(f, nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY),
		       nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE));
	ch = chain_find(t, nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (!t || (type == NFT_MSG_DELCHAIN && !ch)) {
		nftnl_chain_free(c);
		return -ENOENT;
	}
	if (type == NFT_MSG_DELCHAIN) {
		nftnl_chain_free(c);
		if (ch->n)
			return -EBUSY;
		nftnl_chain_free(ch->c);
		free(ch->rules);
		memmove(ch, ch + 1, (size_t)(t->chains + t->n_chains - ch - 1) * sizeof(*ch));
		t->n_chains--;
		return 0;
	}
	if (ch) {
		nftnl_chain_free(c);	/* exists: kept as it is */
		return 0;
	}
	GROW(t->chains, t->n_chains);
	t->chains[t->n_chains++] = (struct fk_chain){ .c = c };
	return 0;
}

static int do_rule(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct fk_chain *ch;

	if (!r || nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		nftnl_rule_free(r);
		return -EINVAL;
	}
	ch = chain_find(table_find(f, nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY),
				   nftnl_rule_get_str(r, NFTNL_RULE_TABLE)),
			nftnl_rule_get_str(r, NFTNL_RULE_CHAIN));
	if (!ch) {
		nftnl_rule_free(r);
		return -ENOENT;
	}
	if (type == NFT_MSG_DELRULE) {	/* no handle: the whole chain */
		for (size_t i = 0; i < ch->n; i++)
			nftnl_rule_free(ch->rules[i]);
		ch->n = 0;
		nftnl_rule_free(r);
		return 0;
	}
	GROW(ch->rules, ch->n);
	ch->rules[ch->n++] = r;
	return 0;
}

static int do_set(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct fk_table *t;
	struct fk_set *st;

	if (!s || nftnl_set_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		return -EINVAL;
	}
	t = table_find(f, nftnl_set_get_u32(s, NFTNL_SET_FAMILY),
		       nftnl_set_get_str(s, NFTNL_SET_TABLE));
	st = set_find(t, nftnl_set_get_str(s, NFTNL_SET_NAME));
	if (!t || (type == NFT_MSG_DELSET && !st)) {
		nftnl_set_free(s);
		return -ENOENT;
	}
	if (type == NFT_MSG_DELSET) {
		for (size_t i = 0; i < st->n; i++)
			nftnl_set_elem_free(st->el[i].e);
		free(st->el);
		nftnl_set_free(st->s);
		memmove(st, st + 1, (size_t)(t->sets + t->n_sets - st - 1) * sizeof(*st));
		t->n_sets--;
		nftnl_set_free(s);
		return 0;
	}
	if (st) {
		nftnl_set_free(s);
		return 0;
	}
	/* Ids differ from batch to batch: not part of what a set is. */
	nftnl_set_unset(s, NFTNL_SET_ID);
	GROW(t->sets, t->n_sets);
	t->sets[t->n_sets++] = (struct fk_set){ .s = s };
	return 0;
}

static ssize_t elem_find(const struct fk_set *st, const void *key, uint32_t len)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->el[i].len == len && memcmp(st->el[i].key, key, len) == 0)
			return (ssize_t)i;
	return -1;
}

static int elem_cmp(const void *a, const void *b)
{
	const struct fk_elem *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->key, y->key, n);

	return c ? c : (int)x->len - (int)y->len;
}

/* A copy of the attributes netd sets (libnftnl does not export its clone). */
static struct nftnl_set_elem *elem_copy(const struct nftnl_set_elem *e)
{
	static const uint16_t attrs[] = { NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END,
					  NFTNL_SET_ELEM_FLAGS, NFTNL_SET_ELEM_TIMEOUT,
					  NFTNL_SET_ELEM_EXPIRATION, NFTNL_SET_ELEM_VERDICT,
					  NFTNL_SET_ELEM_CHAIN };
	struct nftnl_set_elem *c = nftnl_set_elem_alloc();

	for (size_t i = 0; c && i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		uint32_t len = 0;
		const void *v;

		if (!nftnl_set_elem_is_set(e, attrs[i]))
			continue;
		v = nftnl_set_elem_get((struct nftnl_set_elem *)e, attrs[i], &len);
		if (attrs[i] == NFTNL_SET_ELEM_CHAIN)
			nftnl_set_elem_set_str(c, attrs[i], v);
		else
			nftnl_set_elem_set(c, attrs[i], v, len);
	}
	return c;
}

/* Move @e into @st (replacing an element of the same key), or remove it (@del). */
static int elem_apply(struct fk_set *st, struct nftnl_set_elem *e, bool del)
{
	uint32_t len = 0;
	const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
	ssize_t i;

	if (!key || len > sizeof(st->el[0].key))
		return -EINVAL;
	i = elem_find(st, key, len);
	if (del) {
		if (i < 0)
			return -ENOENT;
		nftnl_set_elem_free(st->el[i].e);
		st->el[i] = st->el[--st->n];
	} else {
		struct nftnl_set_elem *c = elem_copy(e);

		if (!c)
			return -ENOMEM;
		if (i >= 0) {
			nftnl_set_elem_free(st->el[i].e);
			st->el[i].e = c;
			return 0;
		}
		GROW(st->el, st->n);
		st->el[st->n] = (struct fk_elem){ .len = len, .e = c };
		memcpy(st->el[st->n].key, key, len);
		st->n++;
	}
	qsort(st->el, st->n, sizeof(*st->el), elem_cmp);
	return 0;
}

/*
 * libnftnl numbers the element nests of a message it builds 1, 2, 3, ...
 * (the kernel ignores the type) but parses only NFTA_LIST_ELEM: renumber
 * a copy the way the kernel's own dumps are written.
 */
static struct nlmsghdr *elems_renumbered(const struct nlmsghdr *in)
{
	struct nlmsghdr *nlh = malloc(in->nlmsg_len);
	struct nlattr *a, *e;

	if (!nlh)
		return NULL;
	memcpy(nlh, in, in->nlmsg_len);
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
			continue;
		mnl_attr_for_each_nested(e, a)
			e->nla_type = (uint16_t)((e->nla_type & ~NLA_TYPE_MASK) | NFTA_LIST_ELEM);
	}
	return nlh;
}

static int do_elems_parsed(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	struct fk_set *st;
	bool del = type == NFT_MSG_DELSETELEM, any = false;
	int r = 0;

	if (!s || nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		return -EINVAL;
	}
	st = set_find(table_find(f, nftnl_set_get_u32(s, NFTNL_SET_FAMILY),
				 nftnl_set_get_str(s, NFTNL_SET_TABLE)),
		      nftnl_set_get_str(s, NFTNL_SET_NAME));
	if (!st) {
		nftnl_set_free(s);
		return -ENOENT;
	}
	it = nftnl_set_elems_iter_create(s);
	while (it && r == 0 && (e = nftnl_set_elems_iter_next(it))) {
		any = true;
		r = elem_apply(st, e, del);
	}
	nftnl_set_elems_iter_destroy(it);
	if (del && !any) {	/* no list: flush */
		for (size_t i = 0; i < st->n; i++)
			nftnl_set_elem_free(st->el[i].e);
		st->n = 0;
	}
	nftnl_set_free(s);
	return r;
}

static int do_elems(struct fake *f, uint16_t type, const struct nlmsghdr *in)
{
	struct nlmsghdr *nlh = elems_renumbered(in);
	int r;

	if (!nlh)
		return -ENOMEM;
	r = do_elems_parsed(f, type, nlh);
	free(nlh);
	return r;
}

static int do_obj(struct fake *f, uint16_t type, const struct nlmsghdr *nlh)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct fk_table *t;
	ssize_t i;

	if (!o || nftnl_obj_nlmsg_parse(nlh, o) < 0) {
		nftnl_obj_free(o);
		return -EINVAL;
	}
	t = table_find(f, nftnl_obj_get_u32(o, NFTNL_OBJ_FAMILY),
		       nftnl_obj_get_str(o, NFTNL_OBJ_TABLE));
	i = obj_find(t, nftnl_obj_get_str(o, NFTNL_OBJ_NAME));
	if (!t || (type == NFT_MSG_DELOBJ && i < 0)) {
		nftnl_obj_free(o);
		return -ENOENT;
	}
	if (type == NFT_MSG_DELOBJ) {
		nftnl_obj_free(t->objs[i]);
		memmove(&t->objs[i], &t->objs[i + 1], (t->n_objs - (size_t)i - 1) * sizeof(*t->objs));
		t->n_objs--;
		nftnl_obj_free(o);
	} else if (i >= 0) {
		nftnl_obj_free(t->objs[i]);	/* an update: the new limit */
		t->objs[i] = o;
	} else {
		GROW(t->objs, t->n_objs);
		t->objs[t->n_objs++] = o;
	}
	return 0;
}

static int apply_msg(struct fake *f, const struct nlmsghdr *nlh)
{
	uint16_t type = nlh->nlmsg_type & 0xff;

	if ((nlh->nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES)
		return -EINVAL;
	switch (type) {
	case NFT_MSG_NEWTABLE: case NFT_MSG_DELTABLE:
		return do_table(f, type, nlh);
	case NFT_MSG_NEWCHAIN: case NFT_MSG_DELCHAIN:
		return do_chain(f, type, nlh);
	case NFT_MSG_NEWRULE: case NFT_MSG_DELRULE:
		return do_rule(f, type, nlh);
	case NFT_MSG_NEWSET: case NFT_MSG_DELSET:
		return do_set(f, type, nlh);
	case NFT_MSG_NEWSETELEM: case NFT_MSG_DELSETELEM:
		return do_elems(f, type, nlh);
	case NFT_MSG_NEWOBJ: case NFT_MSG_DELOBJ:
		return do_obj(f, type, nlh);
	default:
		return -EOPNOTSUPP;
	}
}

/* Apply every message of @buf; Return 0 or the first -errno (*ret_seq: its message). */
static int apply_buf(struct fake *f, const char *buf, size_t len, uint32_t *ret_seq)
{
	int rem = (int)len;

	for (const struct nlmsghdr *nlh = (const void *)buf; mnl_nlmsg_ok(nlh, rem);
	     nlh = mnl_nlmsg_next(nlh, &rem)) {
		int r;

		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN || nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		r = apply_msg(f, nlh);
		if (r < 0) {
			*ret_seq = nlh->nlmsg_seq;
			return r;
		}
	}
	return 0;
}

static int fake_commit(struct fw_kernel *k, const struct fw_batch *b, char *err, size_t err_len)
{
	struct fake *f = (struct fake *)k;
	size_t n_iov, len = 0;
	struct iovec *iov = fw_batch_iov(b, &n_iov);
	uint32_t seq = 0, dummy;
	char *buf;
	int r;

	if (!iov)
		return -ENOMEM;
	for (size_t i = 0; i < n_iov; i++)
		len += iov[i].iov_len;
	buf = realloc(f->log, f->log_len + len);
	if (!buf) {
		free(iov);
		return -ENOMEM;
	}
	f->log = buf;
	for (size_t i = 0, off = f->log_len; i < n_iov; off += iov[i].iov_len, i++)
		memcpy(f->log + off, iov[i].iov_base, iov[i].iov_len);
	free(iov);
	r = apply_buf(f, f->log + f->log_len, len, &seq);
	if (r == 0) {
		f->log_len += len;
		return 0;
	}
	/* Whole or not at all: rebuild from the batches accepted before. */
	model_free(f);
	apply_buf(f, f->log, f->log_len, &dummy);
	{
		const struct fw_batch_msg *m = fw_batch_msg(b, seq);

		snprintf(err, err_len, "message %u of %zu (type %u, %s): %s",
			 m ? m->seq - fw_batch_seq_begin(b) : 0, fw_batch_count(b),
			 m ? m->type : 0, m ? m->what : "?", strerror(-r));
	}
	return r;
}

static int fake_talk(struct fw_kernel *k, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	(void)k, (void)req, (void)cb, (void)data;
	return -EOPNOTSUPP;
}

static void fake_free(struct fw_kernel *k)
{
	struct fake *f = (struct fake *)k;

	if (!f)
		return;
	model_free(f);
	free(f->log);
	free(f);
}

static const struct fw_kernel_ops fake_ops = {
	.commit = fake_commit,
	.talk = fake_talk,
	.free = fake_free,
};

struct fw_kernel *fake_nft_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->k.ops = &fake_ops;
	return &f->k;
}

/* ---- printing ------------------------------------------------------------ */

static int table_cmp(const void *a, const void *b)
{
	const struct fk_table *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void print_table(const struct fk_table *t, FILE *out)
{
	char buf[65536];

	fprintf(out, "table family %u %s\n", t->family, t->name);
	for (size_t i = 0; i < t->n_chains; i++) {
		nftnl_chain_snprintf(buf, sizeof(buf), t->chains[i].c, NFTNL_OUTPUT_DEFAULT, 0);
		fprintf(out, "\nchain %s\n", buf);
		for (size_t j = 0; j < t->chains[i].n; j++) {
			nftnl_rule_snprintf(buf, sizeof(buf), t->chains[i].rules[j],
					    NFTNL_OUTPUT_DEFAULT, 0);
			fprintf(out, "  rule %s\n", buf);
		}
	}
	for (size_t i = 0; i < t->n_sets; i++) {
		const struct nftnl_set *s = t->sets[i].s;

		nftnl_set_snprintf(buf, sizeof(buf), s, NFTNL_OUTPUT_DEFAULT, 0);
		fprintf(out, "\nset %s\n", buf);
		/* What libnftnl's printer leaves out: the key and data types. */
		fprintf(out, "  key_type 0x%x key_len %u", nftnl_set_get_u32(s, NFTNL_SET_KEY_TYPE),
			nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN));
		if (nftnl_set_is_set(s, NFTNL_SET_DATA_TYPE))
			fprintf(out, " data_type 0x%x", nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE));
		if (nftnl_set_is_set(s, NFTNL_SET_DESC_CONCAT)) {
			uint32_t len = 0;
			const uint8_t *c = nftnl_set_get_data(s, NFTNL_SET_DESC_CONCAT, &len);

			fprintf(out, " concat");
			for (uint32_t j = 0; c && j < len; j++)
				fprintf(out, " %u", c[j]);
		}
		fprintf(out, "\n");
		for (size_t j = 0; j < t->sets[i].n; j++) {
			nftnl_set_elem_snprintf(buf, sizeof(buf), t->sets[i].el[j].e,
						NFTNL_OUTPUT_DEFAULT, 0);
			fprintf(out, "  %s\n", buf);
		}
	}
	for (size_t i = 0; i < t->n_objs; i++) {
		nftnl_obj_snprintf(buf, sizeof(buf), t->objs[i], NFTNL_OUTPUT_DEFAULT, 0);
		fprintf(out, "\nobj %s\n", buf);
	}
	fprintf(out, "\n");
}

void fake_nft_print(struct fw_kernel *k, FILE *out)
{
	struct fake *f = (struct fake *)k;

	qsort(f->t, f->n_t, sizeof(*f->t), table_cmp);
	for (size_t i = 0; i < f->n_t; i++)
		print_table(&f->t[i], out);
}
