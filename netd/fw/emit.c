/*
 * emit - fw's renderer writes objects through these: each builds one
 * libnftnl object (table, chain, set, elements, rule, quota) and appends it
 * to the batch as one message.  Pure: memory only.  Allocation failures
 * stick in the batch (fw_batch_err()), so callers just carry on.
 */
#include "netd/fw/render.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libnftnl/chain.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/object.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>

static uint8_t bt_fam(const struct bt *bt)
{
	return bt->family ? bt->family : NFPROTO_INET;
}

/* Start one message of @type; NULL if the batch already failed. */
static struct nlmsghdr *bt_hdr(struct bt *bt, uint16_t type, uint16_t flags)
{
	return fw_batch_msg_start(bt->b, type, bt_fam(bt), flags);
}

void bt_table(struct bt *bt, uint16_t type, uint16_t flags)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, bt->rc->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, type, flags);
	if (nlh) {
		nftnl_table_nlmsg_build_payload(nlh, t);
		fw_batch_msg_end(bt->b, nlh, bt->rc->table);
	}
	nftnl_table_free(t);
}

void bt_chain(struct bt *bt, uint16_t type, const char *name, int hook, int prio,
	      const char *ctype)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (!c) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, bt->rc->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, bt_fam(bt));
	if (hook >= 0 && type == NFT_MSG_NEWCHAIN) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, ctype);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	}
	nlh = bt_hdr(bt, type, type == NFT_MSG_NEWCHAIN ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_chain_nlmsg_build_payload(nlh, c);
		fw_batch_msg_end(bt->b, nlh, name);
	}
	nftnl_chain_free(c);
	if (bt->keep && type == NFT_MSG_NEWCHAIN)
		bt_flush_chain(bt, name);
}

void bt_flowtable(struct bt *bt, uint16_t type, const char *name, const char *const *devs,
		  size_t n)
{
	struct nftnl_flowtable *ft = nftnl_flowtable_alloc();
	const char *list[2] = { n ? devs[0] : NULL, NULL };
	struct nlmsghdr *nlh;

	if (!ft || n > 1) {
		nftnl_flowtable_free(ft);
		bt_fail(bt, ft ? -E2BIG : -ENOMEM);
		return;
	}
	nftnl_flowtable_set_str(ft, NFTNL_FLOWTABLE_TABLE, bt->rc->table);
	nftnl_flowtable_set_str(ft, NFTNL_FLOWTABLE_NAME, name);
	nftnl_flowtable_set_u32(ft, NFTNL_FLOWTABLE_FAMILY, bt_fam(bt));
	if (type == NFT_MSG_NEWFLOWTABLE) {
		nftnl_flowtable_set_u32(ft, NFTNL_FLOWTABLE_HOOKNUM, NF_NETDEV_INGRESS);
		nftnl_flowtable_set_s32(ft, NFTNL_FLOWTABLE_PRIO, FW_FT_PRIO);
		/* conntrack's counters go on counting what the fast path forwards */
		nftnl_flowtable_set_u32(ft, NFTNL_FLOWTABLE_FLAGS, NFT_FLOWTABLE_COUNTER);
	}
	if (n)
		nftnl_flowtable_set_array(ft, NFTNL_FLOWTABLE_DEVICES, list);
	nlh = bt_hdr(bt, type, type == NFT_MSG_NEWFLOWTABLE ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_flowtable_nlmsg_build_payload(nlh, ft);
		fw_batch_msg_end(bt->b, nlh, name);
	}
	nftnl_flowtable_free(ft);
}

/* Delete every rule of chain @name. */
void bt_flush_chain(struct bt *bt, const char *name)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nlmsghdr *nlh;

	if (!r) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, bt->rc->table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, name);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, NFT_MSG_DELRULE, 0);
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r);
		fw_batch_msg_end(bt->b, nlh, name);
	}
	nftnl_rule_free(r);
}

/* nft's key (and map data) byte order in the set's userdata (so `nft list` prints them). */
static int set_udata(struct nftnl_set *s, uint32_t byteorder, uint32_t data_byteorder)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(64);

	if (!ud || !nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER, byteorder) ||
	    (data_byteorder &&
	     !nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_DATABYTEORDER, data_byteorder))) {
		nftnl_udata_buf_free(ud);
		return -ENOMEM;
	}
	nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);
	return 0;
}

static void set_describe(struct bt *bt, struct nftnl_set *s, const struct setdef *d)
{
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, d->flags);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, d->key_type);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, d->key_len);
	/* The id of the message about to be built (a set referred to in the same batch). */
	nftnl_set_set_u32(s, NFTNL_SET_ID, fw_batch_seq_end(bt->b) + 1);
	if (d->verdict_map)
		nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, NFT_DATA_VERDICT);
	if (d->data_len) {
		nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, d->data_type);
		nftnl_set_set_u32(s, NFTNL_SET_DATA_LEN, d->data_len);
	}
	if (d->obj_type)
		nftnl_set_set_u32(s, NFTNL_SET_OBJ_TYPE, d->obj_type);
	if (d->concat[0])
		nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, d->concat,
				   (uint32_t)strnlen((const char *)d->concat, sizeof(d->concat)));
	if (d->size)
		nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, d->size);
	/* A mark is a host-order u32 in the kernel's registers (ct mark set, map data). */
	if (d->key_byteorder &&
	    set_udata(s, d->key_byteorder, d->data_type == TYPE_MARK ? BYTEORDER_HOST_ENDIAN : 0) < 0)
		bt_fail(bt, -ENOMEM);
}

void bt_set(struct bt *bt, uint16_t type, const struct setdef *d)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;

	if (!s) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, bt->rc->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, d->name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, bt_fam(bt));
	if (type == NFT_MSG_NEWSET)
		set_describe(bt, s, d);
	nlh = bt_hdr(bt, type, type == NFT_MSG_NEWSET ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, s);
		fw_batch_msg_end(bt->b, nlh, d->name);
	}
	nftnl_set_free(s);
	/* Pins (timeouts) and what the packet path keeps (dynamic: counts, buckets) stay. */
	if (bt->keep && type == NFT_MSG_NEWSET && !(d->flags & (NFT_SET_TIMEOUT | NFT_SET_EVAL)))
		bt_flush_set(bt, d->name);
}

/* Delete every element of set @name (DELSETELEM without a list). */
void bt_flush_set(struct bt *bt, const char *name)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;

	if (!s) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, bt->rc->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, NFT_MSG_DELSETELEM, 0);
	if (nlh) {
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
		fw_batch_msg_end(bt->b, nlh, name);
	}
	nftnl_set_free(s);
}

void bt_rule(struct bt *bt, struct rb *rb)
{
	struct nlmsghdr *nlh;

	if (rb->err)
		bt_fail(bt, rb->err);
	nlh = bt_hdr(bt, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	if (nlh) {
		nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, bt_fam(bt));
		nftnl_rule_nlmsg_build_payload(nlh, rb->r);
		fw_batch_msg_end(bt->b, nlh, nftnl_rule_get_str(rb->r, NFTNL_RULE_CHAIN));
	}
	if (rb->r)
		nftnl_rule_free(rb->r);
	rb->r = NULL;
}

/*
 * Named quota object "q-NAME" (the sandbox's egress byte quota), flags
 * "over": an objref to it matches once more than @bytes went through it.
 * NEWOBJ on an existing quota updates its limit and keeps what it has
 * consumed (the kernel's nft_quota_obj_update), so a reconcile or a policy
 * reload does not hand the sandbox a fresh quota.
 */
void bt_quota(struct bt *bt, uint16_t type, const char *sb_name, uint64_t bytes)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	char name[NFT_OBJ_MAXNAMELEN];
	struct nlmsghdr *nlh;

	if (!o) {
		bt_fail(bt, -ENOMEM);
		return;
	}
	snprintf(name, sizeof(name), "q-%s", sb_name);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, bt->rc->table);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_QUOTA);
	if (type == NFT_MSG_NEWOBJ) {
		nftnl_obj_set_u64(o, NFTNL_OBJ_QUOTA_BYTES, bytes);
		nftnl_obj_set_u32(o, NFTNL_OBJ_QUOTA_FLAGS, NFT_QUOTA_F_INV);
	}
	nlh = bt_hdr(bt, type, type == NFT_MSG_NEWOBJ ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_obj_nlmsg_build_payload(nlh, o);
		fw_batch_msg_end(bt->b, nlh, name);
	}
	nftnl_obj_free(o);
}

void bt_quota_remove(struct bt *bt, const char *sb_name)
{
	bt_quota(bt, NFT_MSG_NEWOBJ, sb_name, 1);
	bt_quota(bt, NFT_MSG_DELOBJ, sb_name, 0);
}

/* ---- elements ------------------------------------------------------------ */

void elq_flush(struct elemq *q)
{
	struct nlmsghdr *nlh;

	if (!q->s)
		return;
	nlh = bt_hdr(q->bt, q->type, q->type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_set_elems_nlmsg_build_payload(nlh, q->s);
		fw_batch_msg_end(q->bt->b, nlh, q->set);
	}
	nftnl_set_free(q->s);
	q->s = NULL;
	q->n = 0;
}

void elq_init(struct elemq *q, struct bt *bt, uint16_t type, const char *set)
{
	memset(q, 0, sizeof(*q));
	q->bt = bt;
	q->type = type;
	q->set = set;
}

void elq_add(struct elemq *q, struct nftnl_set_elem *e)
{
	if (!e || fw_batch_err(q->bt->b)) {
		bt_fail(q->bt, -ENOMEM);
		nftnl_set_elem_free(e);
		return;
	}
	if (!q->s) {
		q->s = nftnl_set_alloc();
		if (!q->s) {
			bt_fail(q->bt, -ENOMEM);
			nftnl_set_elem_free(e);
			return;
		}
		nftnl_set_set_str(q->s, NFTNL_SET_TABLE, q->bt->rc->table);
		nftnl_set_set_str(q->s, NFTNL_SET_NAME, q->set);
	}
	nftnl_set_elem_add(q->s, e);
	if (++q->n == FW_ELEMS_PER_MSG)
		elq_flush(q);
}

struct nftnl_set_elem *elem_new(const void *key, size_t len)
{
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();

	if (e)
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, (uint32_t)len);
	return e;
}

/* An element of a verdict map: @key -> @verdict (NFT_JUMP, NFT_GOTO) @chain. */
static struct nftnl_set_elem *elem_new_verdict(const void *key, size_t len, int verdict,
					       const char *chain)
{
	struct nftnl_set_elem *e = elem_new(key, len);

	if (e) {
		nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, (uint32_t)verdict);
		nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, chain);
	}
	return e;
}

struct nftnl_set_elem *elem_new_jump(const void *key, size_t len, const char *chain)
{
	return elem_new_verdict(key, len, NFT_JUMP, chain);
}

struct nftnl_set_elem *elem_new_goto(const void *key, size_t len, const char *chain)
{
	return elem_new_verdict(key, len, NFT_GOTO, chain);
}

void elem_add1(struct bt *bt, const char *set, struct nftnl_set_elem *e)
{
	struct elemq q;

	elq_init(&q, bt, NFT_MSG_NEWSETELEM, set);
	elq_add(&q, e);
	elq_flush(&q);
}

void elem_remove(struct bt *bt, const char *set, const void *key, size_t len, const char *jump)
{
	struct elemq q;

	for (int pass = 0; pass < 2; pass++) {
		struct nftnl_set_elem *e =
			jump && pass == 0 ? elem_new_jump(key, len, jump) : elem_new(key, len);

		elq_init(&q, bt, pass == 0 ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, set);
		elq_add(&q, e);
		elq_flush(&q);
	}
}

struct nftnl_set_elem *elem_new_data(const void *key, size_t len, const void *data, size_t dlen)
{
	struct nftnl_set_elem *e = elem_new(key, len);

	if (e)
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA, data, (uint32_t)dlen);
	return e;
}

struct nftnl_set_elem *elem_new_obj(const void *key, size_t len, const char *obj)
{
	struct nftnl_set_elem *e = elem_new(key, len);

	if (e)
		nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_OBJREF, obj);
	return e;
}

void elem_remove_data(struct bt *bt, const char *set, struct nftnl_set_elem *created,
		      const void *key, size_t len)
{
	struct elemq q;

	elem_add1(bt, set, created);
	elq_init(&q, bt, NFT_MSG_DELSETELEM, set);
	elq_add(&q, elem_new(key, len));
	elq_flush(&q);
}

void ifaddr_remove(struct bt *bt, const char *base, const char *ifname, const struct addr *a)
{
	const struct fw_fam *f = fw_fam_of(a->family);
	uint8_t key[IFNAMSIZ + 16];

	if (!f)
		return;
	elem_remove(bt, fw_fam_name(base, f).s, key, fkey_ifaddr(key, ifname, a), NULL);
}
