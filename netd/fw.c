/*
 * fw - netd's only speaker to nf_tables (libnftnl + libmnl).
 *
 * Every change is one atomic batch (BEGIN ... END in one sendmsg) whose
 * messages all carry NLM_F_ACK; the acknowledgements are read back and the
 * error of the lowest failing sequence number is returned as -errno (and
 * described by fw_last_error()).  The ruleset is documented in fw.h.
 *
 * This module does not log and does not exec anything; the interval
 * arithmetic lives in ruleset.c (pure, unit-tested).
 */
#include "netd/fw.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter_bridge.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>

#include "netd/ruleset.h"

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

/* nft's datatype ids (nftables include/datatype.h), so `nft list` prints keys. */
#define TYPE_IPADDR        7
#define TYPE_IP6ADDR       8
#define TYPE_INET_PROTOCOL 12
#define TYPE_INET_SERVICE  13
#define TYPE_IFNAME        41
#define TYPE_BITS          6	/* concat type = t1 << 6 | t2 ... (nft concat_type_alloc) */

#define FW_TABLE_DEFAULT   "netd"
#define FW_PIN_SET_SIZE    65536	/* elements per pin set; full -> -ENOSPC */
#define FW_PINS_PER_CALL   4096	/* pins per fw_pin() call */
#define FW_ELEMS_PER_MSG   32	/* keeps each message far below FW_MSG_MAX */
#define FW_MSG_MAX         (16u * 1024)	/* slack after the batch limit: one message fits */
#define FW_BATCH_MIN       (64u * 1024)
#define FW_BATCH_MAX       (64u * 1024 * 1024)
#define FW_RCVBUF          (8 * 1024 * 1024)
#define FW_ACK_WAIT_MS     2000

#define PRIO_RAW    (-300)
#define PRIO_DSTNAT (-100)
#define PRIO_FILTER 0
#define PRIO_SRCNAT 100

/* 32-bit registers; a 16-byte value at REG32(0) spans REG32(0..3) (nft's reg 1). */
#define REG32(n) (NFT_REG32_00 + (n))

struct fw_sb_rec {
	char name[POLICY_NAME_MAX + 1];
	char ifname[IFNAMSIZ];
	struct addr addr4, addr6;
	struct addr dns4, dns6;
	bool chained;
};

/* What each message of the current batch was, to describe a failure. */
struct fw_msg_rec {
	uint16_t type;
	char what[96];
};

struct fw {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	char table[NFT_TABLE_MAXNAMELEN];
	uint16_t dns_port;
	uint16_t log_group;	/* nflog group of deny events; 0 = no logging */
	char egress[IFNAMSIZ];
	struct prefix pool4, pool6;

	/* The batch buffer, reused across calls; grows on demand. */
	char *buf;
	size_t buf_cap;
	struct mnl_nlmsg_batch *b;
	int sndbuf;
	char rbuf[16384];

	struct fw_msg_rec *msgs;
	size_t n_msgs, cap_msgs;

	struct fw_sb_rec *sbs;
	size_t n_sbs, cap_sbs;

	char err[256];
};

/* One batch being built. */
struct bt {
	struct fw *fw;
	uint32_t seq0;		/* BATCH_BEGIN's sequence number */
	uint32_t n;		/* messages after BEGIN that expect an ack */
	int err;		/* sticky: -ENOMEM, -EOVERFLOW (buffer too small), ... */
	/*
	 * Reconcile mode (restart, reload): objects that may already exist are
	 * created without NLM_F_EXCL and then emptied, so every NEWCHAIN is
	 * followed by a flush of its rules and every NEWSET of a set without
	 * timeouts by a flush of its elements.  Sets with timeouts (the pins)
	 * keep their elements.  All of it in one batch: no window.
	 */
	bool keep;
	/*
	 * The family of the objects being emitted: NFPROTO_INET (0 reads as
	 * inet) for "table inet NAME", NFPROTO_BRIDGE while the bridge table
	 * of chained attachments is written.
	 */
	uint8_t family;
};

static uint8_t bt_fam(const struct bt *bt)
{
	return bt->family ? bt->family : NFPROTO_INET;
}

/* ---- validation --------------------------------------------------------- */

static bool name_ok(const char *s)
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

static bool ifname_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n < IFNAMSIZ;
}

/* ---- batch -------------------------------------------------------------- */

static void bt_start(struct fw *fw, struct bt *bt, size_t cap)
{
	memset(bt, 0, sizeof(*bt));
	bt->fw = fw;
	fw->n_msgs = 0;
	if (cap > fw->buf_cap || !fw->b) {
		char *nb;

		mnl_nlmsg_batch_stop(fw->b);
		fw->b = NULL;
		nb = realloc(fw->buf, cap);
		if (!nb) {
			bt->err = -ENOMEM;
			return;
		}
		fw->buf = nb;
		fw->buf_cap = cap;
		/*
		 * The limit leaves FW_MSG_MAX of slack: a message is written
		 * before mnl_nlmsg_batch_next() can tell that it overflowed.
		 */
		fw->b = mnl_nlmsg_batch_start(fw->buf, cap - FW_MSG_MAX);
		if (!fw->b) {
			bt->err = -ENOMEM;
			return;
		}
	} else {
		/* Never left overflowed (we grow instead), so this just rewinds. */
		mnl_nlmsg_batch_reset(fw->b);
	}
	bt->seq0 = ++fw->seq;
	nftnl_batch_begin(mnl_nlmsg_batch_current(fw->b), bt->seq0);
	mnl_nlmsg_batch_next(fw->b);
}

/* Start one message of @type; NULL if the batch already failed. */
static struct nlmsghdr *bt_hdr(struct bt *bt, uint16_t type, uint16_t flags)
{
	struct fw *fw = bt->fw;

	if (bt->err)
		return NULL;
	if (fw->n_msgs == fw->cap_msgs) {
		size_t nc = fw->cap_msgs ? 2 * fw->cap_msgs : 64;
		struct fw_msg_rec *nm = realloc(fw->msgs, nc * sizeof(*nm));

		if (!nm) {
			bt->err = -ENOMEM;
			return NULL;
		}
		fw->msgs = nm;
		fw->cap_msgs = nc;
	}
	return nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(fw->b), type, bt_fam(bt),
				     flags | NLM_F_ACK, ++fw->seq);
}

/* Finish the message started by bt_hdr(); @what describes it for errors. */
static void bt_done(struct bt *bt, struct nlmsghdr *nlh, const char *what)
{
	struct fw_msg_rec *m = &bt->fw->msgs[bt->fw->n_msgs++];

	m->type = (uint16_t)(nlh->nlmsg_type & 0xff);
	snprintf(m->what, sizeof(m->what), "%s", what);
	bt->n++;
	if (!mnl_nlmsg_batch_next(bt->fw->b))
		bt->err = -EOVERFLOW;	/* caller retries with a bigger buffer */
}

static void bt_table(struct bt *bt, uint16_t type, uint16_t flags)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, bt->fw->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, type, flags);
	if (nlh) {
		nftnl_table_nlmsg_build_payload(nlh, t);
		bt_done(bt, nlh, bt->fw->table);
	}
	nftnl_table_free(t);
}

static void bt_flush_chain(struct bt *bt, const char *name);
static void bt_flush_set(struct bt *bt, const char *name);

/* @hook < 0: a regular chain. */
static void bt_chain(struct bt *bt, uint16_t type, const char *name, int hook, int prio,
		     const char *ctype)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (!c) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, bt->fw->table);
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
		bt_done(bt, nlh, name);
	}
	nftnl_chain_free(c);
	if (bt->keep && type == NFT_MSG_NEWCHAIN)
		bt_flush_chain(bt, name);
}

/* Delete every rule of chain @name. */
static void bt_flush_chain(struct bt *bt, const char *name)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nlmsghdr *nlh;

	if (!r) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, bt->fw->table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, name);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, NFT_MSG_DELRULE, 0);
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r);
		bt_done(bt, nlh, name);
	}
	nftnl_rule_free(r);
}

struct setdef {
	char name[NFT_SET_MAXNAMELEN];
	uint32_t flags;
	uint32_t key_type, key_len;
	bool verdict_map;
	uint8_t concat[4];	/* field lengths (unpadded), 0-terminated; only for interval+concat */
	uint32_t size;		/* 0 = unlimited */
	uint32_t key_byteorder;	/* nft's BYTEORDER_*: 0 = leave unset (concatenations) */
};

/* nft's enum byteorder, stored in set userdata so `nft list` can print keys. */
#define BYTEORDER_HOST_ENDIAN 1
#define BYTEORDER_BIG_ENDIAN  2

static void bt_set(struct bt *bt, uint16_t type, const struct setdef *d)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;

	if (!s) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, bt->fw->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, d->name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, bt_fam(bt));
	if (type == NFT_MSG_NEWSET) {
		nftnl_set_set_u32(s, NFTNL_SET_FLAGS, d->flags);
		nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, d->key_type);
		nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, d->key_len);
		nftnl_set_set_u32(s, NFTNL_SET_ID, bt->fw->seq + 1);
		if (d->verdict_map)
			nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, NFT_DATA_VERDICT);
		if (d->concat[0])
			nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, d->concat,
					   (uint32_t)strnlen((const char *)d->concat, sizeof(d->concat)));
		if (d->size)
			nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, d->size);
		if (d->key_byteorder) {
			struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(64);

			if (!ud || !nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER,
							d->key_byteorder)) {
				nftnl_udata_buf_free(ud);
				nftnl_set_free(s);
				bt->err = bt->err ? bt->err : -ENOMEM;
				return;
			}
			nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud),
					   nftnl_udata_buf_len(ud));
			nftnl_udata_buf_free(ud);
		}
	}
	nlh = bt_hdr(bt, type, type == NFT_MSG_NEWSET ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, s);
		bt_done(bt, nlh, d->name);
	}
	nftnl_set_free(s);
	if (bt->keep && type == NFT_MSG_NEWSET && !(d->flags & NFT_SET_TIMEOUT))
		bt_flush_set(bt, d->name);
}

/* Delete every element of set @name (DELSETELEM without a list). */
static void bt_flush_set(struct bt *bt, const char *name)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;

	if (!s) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, bt->fw->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, bt_fam(bt));
	nlh = bt_hdr(bt, NFT_MSG_DELSETELEM, 0);
	if (nlh) {
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
		bt_done(bt, nlh, name);
	}
	nftnl_set_free(s);
}

/* Elements of one set, sent FW_ELEMS_PER_MSG per message. */
struct elemq {
	struct bt *bt;
	uint16_t type;		/* NFT_MSG_NEWSETELEM / NFT_MSG_DELSETELEM */
	const char *set;
	struct nftnl_set *s;
	unsigned int n;
};

static void eq_flush(struct elemq *q)
{
	struct nlmsghdr *nlh;

	if (!q->s)
		return;
	nlh = bt_hdr(q->bt, q->type, q->type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0);
	if (nlh) {
		nftnl_set_elems_nlmsg_build_payload(nlh, q->s);
		bt_done(q->bt, nlh, q->set);
	}
	nftnl_set_free(q->s);
	q->s = NULL;
	q->n = 0;
}

static void eq_init(struct elemq *q, struct bt *bt, uint16_t type, const char *set)
{
	memset(q, 0, sizeof(*q));
	q->bt = bt;
	q->type = type;
	q->set = set;
}

/* Takes ownership of @e (may be NULL: allocation failed). */
static void eq_add(struct elemq *q, struct nftnl_set_elem *e)
{
	if (!e || q->bt->err) {
		if (!q->bt->err)
			q->bt->err = -ENOMEM;
		nftnl_set_elem_free(e);
		return;
	}
	if (!q->s) {
		q->s = nftnl_set_alloc();
		if (!q->s) {
			q->bt->err = -ENOMEM;
			nftnl_set_elem_free(e);
			return;
		}
		nftnl_set_set_str(q->s, NFTNL_SET_TABLE, q->bt->fw->table);
		nftnl_set_set_str(q->s, NFTNL_SET_NAME, q->set);
	}
	nftnl_set_elem_add(q->s, e);
	if (++q->n == FW_ELEMS_PER_MSG)
		eq_flush(q);
}

static struct nftnl_set_elem *el_new(const void *key, size_t len)
{
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();

	if (e)
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, (uint32_t)len);
	return e;
}

/* Send the batch and collect every acknowledgement; see fw_run(). */
static int bt_send(struct bt *bt)
{
	struct fw *fw = bt->fw;
	int fd = mnl_socket_get_fd(fw->nl);
	size_t len = mnl_nlmsg_batch_size(fw->b);
	uint32_t acks = 0, err_seq = 0;
	int err = 0;

	if (len > (size_t)fw->sndbuf) {
		int sz = (int)len;

		/* A batch must reach the kernel in one sendmsg to be atomic. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0 &&
		    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
			return -errno;
		fw->sndbuf = sz;
	}
	if (mnl_socket_sendto(fw->nl, mnl_nlmsg_batch_head(fw->b), len) < 0)
		return -errno;

	/*
	 * nfnetlink handles the batch synchronously inside sendmsg, so every
	 * ack is queued by now; drain until the socket is empty, and wait a
	 * little only if some are still missing.
	 */
	for (;;) {
		ssize_t n = recv(fd, fw->rbuf, sizeof(fw->rbuf), MSG_DONTWAIT);
		const struct nlmsghdr *nlh;
		int rem;

		if (n < 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if (err || acks >= bt->n)
				break;
			if (poll(&p, 1, FW_ACK_WAIT_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		rem = (int)n;
		for (nlh = (const struct nlmsghdr *)fw->rbuf; mnl_nlmsg_ok(nlh, rem);
		     nlh = mnl_nlmsg_next(nlh, &rem)) {
			const struct nlmsgerr *e;

			if (nlh->nlmsg_type != NLMSG_ERROR ||
			    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
				continue;
			/* Acks of an earlier, abandoned exchange. */
			if (nlh->nlmsg_seq < bt->seq0 || nlh->nlmsg_seq > bt->seq0 + bt->n + 1)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			acks++;
			if (e->error && (!err || nlh->nlmsg_seq < err_seq)) {
				err = e->error < 0 ? e->error : -e->error;
				err_seq = nlh->nlmsg_seq;
			}
		}
	}
	if (err) {
		uint32_t i = err_seq - bt->seq0;	/* 1..n: the messages */

		if (i >= 1 && i <= fw->n_msgs)
			snprintf(fw->err, sizeof(fw->err), "message %u (type %u, %s): %s", i,
				 fw->msgs[i - 1].type, fw->msgs[i - 1].what, strerror(-err));
		else
			snprintf(fw->err, sizeof(fw->err), "batch: %s", strerror(-err));
	}
	return err;
}

/*
 * Build with @build into the batch buffer (growing it until the batch fits),
 * close the batch and send it.  @build is deterministic and only appends.
 */
static int fw_run_mode(struct fw *fw, void (*build)(struct bt *bt, const void *arg),
		       const void *arg, bool keep)
{
	size_t cap = fw->buf_cap > FW_BATCH_MIN ? fw->buf_cap : FW_BATCH_MIN;
	struct bt bt;

	fw->err[0] = '\0';
	for (;;) {
		bt_start(fw, &bt, cap);
		bt.keep = keep;
		if (!bt.err)
			build(&bt, arg);
		if (!bt.err) {
			nftnl_batch_end(mnl_nlmsg_batch_current(fw->b), bt.seq0 + bt.n + 1);
			if (!mnl_nlmsg_batch_next(fw->b))
				bt.err = -EOVERFLOW;
		}
		if (bt.err != -EOVERFLOW)
			break;
		/* The overflowed batch is abandoned; start a clean, bigger one. */
		mnl_nlmsg_batch_stop(fw->b);
		fw->b = NULL;
		cap *= 2;
		if (cap > FW_BATCH_MAX) {
			snprintf(fw->err, sizeof(fw->err), "batch larger than %u bytes", FW_BATCH_MAX);
			return -E2BIG;
		}
	}
	if (bt.err) {
		snprintf(fw->err, sizeof(fw->err), "building batch: %s", strerror(-bt.err));
		return bt.err;
	}
	/* fw->seq also counts the END message. */
	fw->seq = bt.seq0 + bt.n + 1;
	return bt_send(&bt);
}

static int fw_run(struct fw *fw, void (*build)(struct bt *bt, const void *arg), const void *arg)
{
	return fw_run_mode(fw, build, arg, false);
}

/* ---- expressions ---------------------------------------------------------- */

/* A rule under construction; the first failure sticks. */
struct rb {
	struct nftnl_rule *r;
	int err;
};

static void rb_init(struct rb *rb, const struct fw *fw, const char *chain)
{
	rb->err = 0;
	rb->r = nftnl_rule_alloc();
	if (!rb->r) {
		rb->err = -ENOMEM;
		return;
	}
	nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, fw->table);
	nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
}

static struct nftnl_expr *x_new(struct rb *rb, const char *name)
{
	struct nftnl_expr *e;

	if (rb->err)
		return NULL;
	e = nftnl_expr_alloc(name);
	if (!e) {
		rb->err = -ENOMEM;
		return NULL;
	}
	nftnl_rule_add_expr(rb->r, e);	/* the rule owns it from here */
	return e;
}

static void x_meta(struct rb *rb, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = x_new(rb, "meta");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	}
}

static void x_payload(struct rb *rb, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = x_new(rb, "payload");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	}
}

static void x_cmp(struct rb *rb, uint32_t sreg, uint32_t op, const void *data, size_t len)
{
	struct nftnl_expr *e = x_new(rb, "cmp");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
		nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, (uint32_t)len);
	}
}

static void x_bitwise(struct rb *rb, uint32_t reg, const void *mask, const void *xor, size_t len)
{
	struct nftnl_expr *e = x_new(rb, "bitwise");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, (uint32_t)len);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, (uint32_t)len);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, (uint32_t)len);
	}
}

/* @dreg < 0: a plain membership test; NFT_REG_VERDICT: a verdict map. */
static void x_lookup(struct rb *rb, const char *set, uint32_t sreg, int dreg, bool inv)
{
	struct nftnl_expr *e = x_new(rb, "lookup");

	if (e) {
		nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
		if (dreg >= 0)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, (uint32_t)dreg);
		if (inv)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
	}
}

static void x_verdict(struct rb *rb, int verdict)
{
	struct nftnl_expr *e = x_new(rb, "immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	}
}

static void x_counter(struct rb *rb)
{
	x_new(rb, "counter");
}

/* notrack: the packet gets no conntrack entry (raw priority chains only). */
static void x_notrack(struct rb *rb)
{
	x_new(rb, "notrack");
}

/*
 * log prefix "netd:@reason" group N snaplen 128: a deny event for nflog.c
 * (the headers are all it needs).  Nothing when logging is off.
 */
static void x_deny_log(struct rb *rb, const struct fw *fw, const char *reason)
{
	char prefix[64];
	struct nftnl_expr *e;

	if (!fw->log_group)
		return;
	e = x_new(rb, "log");
	if (e) {
		snprintf(prefix, sizeof(prefix), "netd:%s", reason);
		nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, fw->log_group);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, 128);
	}
}

/* ct mark set @mark: ties the connection's conntrack entry to its sandbox (acct.h). */
static void x_ct_mark_set(struct rb *rb, uint32_t mark)
{
	struct nftnl_expr *e = x_new(rb, "immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &mark, sizeof(mark));
	}
	e = x_new(rb, "ct");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_MARK);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, NFT_REG_1);
	}
}

/* --- match fragments (each leaves its result in the registers it names) --- */

static void m_nfproto(struct rb *rb, uint8_t nfproto)
{
	x_meta(rb, NFT_META_NFPROTO, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &nfproto, 1);
}

static void m_l4proto(struct rb *rb, uint8_t proto)
{
	x_meta(rb, NFT_META_L4PROTO, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &proto, 1);
}

/* th dport == @port */
static void m_dport(struct rb *rb, uint16_t port)
{
	uint16_t be = htons(port);

	x_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

/* th sport == @port */
static void m_sport(struct rb *rb, uint16_t port)
{
	uint16_t be = htons(port);

	x_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

/* iifname/oifname [!=] @set */
static void m_ifset(struct rb *rb, uint32_t meta_key, const char *set, bool inv)
{
	x_meta(rb, meta_key, NFT_REG_1);
	x_lookup(rb, set, NFT_REG_1, -1, inv);
}

static void m_ifname_eq(struct rb *rb, uint32_t meta_key, const char *name)
{
	char buf[IFNAMSIZ] = { 0 };

	/* Zero-padded to IFNAMSIZ: an exact name match, not a prefix. */
	memcpy(buf, name, strnlen(name, sizeof(buf) - 1));
	x_meta(rb, meta_key, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, buf, sizeof(buf));
}

/* ct state established,related */
static void m_ct_est(struct rb *rb)
{
	uint32_t mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
	uint32_t zero = 0;
	struct nftnl_expr *e = x_new(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	x_bitwise(rb, NFT_REG_1, &mask, &zero, 4);
	x_cmp(rb, NFT_REG_1, NFT_CMP_NEQ, &zero, 4);
}

/* ct state new: the first packet of a connection (not established/related). */
static void m_ct_new(struct rb *rb)
{
	uint32_t mask = NF_CT_STATE_BIT(IP_CT_NEW);
	uint32_t zero = 0;
	struct nftnl_expr *e = x_new(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	x_bitwise(rb, NFT_REG_1, &mask, &zero, 4);
	x_cmp(rb, NFT_REG_1, NFT_CMP_NEQ, &zero, 4);
}

/* ip saddr / ip6 saddr (@off: its offset in the network header) in @p. */
static void m_prefix(struct rb *rb, uint32_t off, const struct prefix *p)
{
	size_t len = addr_len(p->addr.family);
	uint8_t mask[16] = { 0 }, zero[16] = { 0 };

	for (unsigned int bit = 0; bit < p->plen; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	x_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, (uint32_t)len, NFT_REG_1);
	if (p->plen < len * 8)
		x_bitwise(rb, NFT_REG_1, mask, zero, len);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, p->addr.a, len);
}

/* daddr . meta l4proto . th dport @set */
static void m_tuple_lookup(struct rb *rb, int family, const char *set)
{
	uint32_t alen = family == AF_INET ? 4 : 16;

	x_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 16 : 24, alen, REG32(0));
	x_meta(rb, NFT_META_L4PROTO, REG32(alen / 4));
	x_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, REG32(alen / 4 + 1));
	x_lookup(rb, set, REG32(0), -1, false);
}

/* iifname . saddr != @set */
static void m_ifaddr_not_in(struct rb *rb, int family, const char *set)
{
	x_meta(rb, NFT_META_IIFNAME, REG32(0));
	x_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 12 : 8,
		  family == AF_INET ? 4 : 16, REG32(4));
	x_lookup(rb, set, REG32(0), -1, true);
}

/*
 * iifname/oifname (@meta_key) . ip daddr/saddr (@daddr) @set, for set of type
 * ifname . address; nfproto checked first.
 */
static void m_ifaddr_in(struct rb *rb, uint32_t meta_key, int family, bool daddr, const char *set)
{
	m_nfproto(rb, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
	x_meta(rb, meta_key, REG32(0));
	x_payload(rb, NFT_PAYLOAD_NETWORK_HEADER,
		  family == AF_INET ? (daddr ? 16 : 12) : (daddr ? 24 : 8),
		  family == AF_INET ? 4 : 16, REG32(4));
	x_lookup(rb, set, REG32(0), -1, false);
}

/*
 * A sandbox's UDP query to, or (@reply) its answer from, port 53 of an
 * address in dns_local4/6 (family @f: 0 IPv4, 1 IPv6) on its interface:
 * udp dport 53 iifname . ip daddr @dns_local4, or for a reply udp sport 53
 * oifname . ip saddr.
 */
static void m_dns_local(struct rb *rb, int f, bool reply)
{
	m_l4proto(rb, IPPROTO_UDP);
	if (reply)
		m_sport(rb, 53);
	else
		m_dport(rb, 53);
	m_ifaddr_in(rb, reply ? NFT_META_OIFNAME : NFT_META_IIFNAME, f == 0 ? AF_INET : AF_INET6,
		    !reply, f == 0 ? "dns_local4" : "dns_local6");
}

/* ip saddr / ip6 saddr (@daddr: daddr) [vmap] @set; nfproto checked first. */
static void m_addr_in(struct rb *rb, int family, bool daddr, const char *set, bool vmap)
{
	uint32_t off = family == AF_INET ? (daddr ? 16 : 12) : (daddr ? 24 : 8);

	m_nfproto(rb, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
	x_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, family == AF_INET ? 4 : 16, NFT_REG_1);
	x_lookup(rb, set, NFT_REG_1, vmap ? NFT_REG_VERDICT : -1, false);
}

/*
 * The packet mark bit the bridge table sets on frames it has checked as
 * coming from a chained container's own port with its own source; the
 * inet table drops packets claiming a chained source without it (from the
 * uplink, say).  One bit, ORed in: other users of the mark keep theirs.
 */
#define FW_CHAINED_MARK 0x00800000u

/* meta mark |= FW_CHAINED_MARK */
static void x_mark_chained(struct rb *rb)
{
	uint32_t mask = ~FW_CHAINED_MARK, xor = FW_CHAINED_MARK;
	struct nftnl_expr *e;

	x_meta(rb, NFT_META_MARK, NFT_REG_1);
	x_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
	e = x_new(rb, "meta");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	}
}

/* meta mark & FW_CHAINED_MARK == 0 */
static void m_not_marked_chained(struct rb *rb)
{
	uint32_t mask = FW_CHAINED_MARK, xor = 0, zero = 0;

	x_meta(rb, NFT_META_MARK, NFT_REG_1);
	x_bitwise(rb, NFT_REG_1, &mask, &xor, 4);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &zero, 4);
}

/* Bridge family: ether type == @ethertype (host byte order). */
static void m_ethertype(struct rb *rb, uint16_t ethertype)
{
	uint16_t be = htons(ethertype);

	x_payload(rb, NFT_PAYLOAD_LL_HEADER, 12, 2, NFT_REG_1);
	x_cmp(rb, NFT_REG_1, NFT_CMP_EQ, &be, 2);
}

static void bt_rule(struct bt *bt, struct rb *rb)
{
	struct nlmsghdr *nlh;

	if (rb->err && !bt->err)
		bt->err = rb->err;
	nlh = bt_hdr(bt, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	if (nlh) {
		nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, bt_fam(bt));
		nftnl_rule_nlmsg_build_payload(nlh, rb->r);
		bt_done(bt, nlh, nftnl_rule_get_str(rb->r, NFTNL_RULE_CHAIN));
	}
	if (rb->r)
		nftnl_rule_free(rb->r);
	rb->r = NULL;
}

/* ---- keys ------------------------------------------------------------------ */

static size_t key_ifname(uint8_t *out, const char *ifname)
{
	memset(out, 0, IFNAMSIZ);
	memcpy(out, ifname, strnlen(ifname, IFNAMSIZ - 1));
	return IFNAMSIZ;
}

/* addr . inet_proto . inet_service, each field padded to 4 bytes. */
static size_t key_tuple(uint8_t *out, const uint8_t *a, size_t alen, uint8_t proto, uint16_t port)
{
	uint16_t be = htons(port);

	memset(out, 0, alen + 8);
	memcpy(out, a, alen);
	out[alen] = proto;
	memcpy(out + alen + 4, &be, 2);
	return alen + 8;
}

static size_t key_ifaddr(uint8_t *out, const char *ifname, const struct addr *a)
{
	size_t alen = addr_len(a->family);

	key_ifname(out, ifname);
	memcpy(out + IFNAMSIZ, a->a, alen);
	return IFNAMSIZ + alen;
}

/* ---- set definitions ----------------------------------------------------- */

static void def_plain(struct setdef *d, const char *name, uint32_t type, uint32_t len,
		      uint32_t flags)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->key_type = type;
	d->key_len = len;
	d->flags = flags;
	if (type == TYPE_IFNAME)
		d->key_byteorder = BYTEORDER_HOST_ENDIAN;
	else if (type == TYPE_IPADDR || type == TYPE_IP6ADDR)
		d->key_byteorder = BYTEORDER_BIG_ENDIAN;
}

/* addr . inet_proto . inet_service: pins (timeout) or CIDR rules (interval). */
static void def_tuple(struct setdef *d, const char *sb, const char *kind, int family)
{
	uint32_t at = family == AF_INET ? TYPE_IPADDR : TYPE_IP6ADDR;
	uint8_t alen = family == AF_INET ? 4 : 16;
	bool pin = strcmp(kind, "pin") == 0;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "sb-%s-%s%c", sb, kind, family == AF_INET ? '4' : '6');
	d->key_type = (at << TYPE_BITS | TYPE_INET_PROTOCOL) << TYPE_BITS | TYPE_INET_SERVICE;
	d->key_len = alen + 4u + 4u;
	if (pin) {
		d->flags = NFT_SET_TIMEOUT;
		d->size = FW_PIN_SET_SIZE;
	} else {
		/* Interval + concatenation: the kernel picks pipapo. */
		d->flags = NFT_SET_INTERVAL | NFT_SET_CONCAT;
		d->concat[0] = alen;
		d->concat[1] = 1;
		d->concat[2] = 2;
	}
}

/* ---- fw_open ------------------------------------------------------------- */

struct open_arg {
	const struct fw_config *cfg;
};

static void add_internal(struct bt *bt, const struct fw_config *cfg, int family, const char *set)
{
	struct ruleset_range *r = calloc(RULESET_ELEMS_MAX, sizeof(*r));
	size_t len = addr_len(family);
	uint8_t zero[16] = { 0 };
	struct nftnl_set_elem *e;
	struct elemq q;
	int n;

	if (!r) {
		bt->err = -ENOMEM;
		return;
	}
	n = ruleset_merge_prefixes(family, cfg->internal, cfg->n_internal, r, RULESET_ELEMS_MAX);
	if (n < 0) {
		bt->err = n;
		free(r);
		return;
	}
	eq_init(&q, bt, NFT_MSG_NEWSETELEM, set);
	/*
	 * rbtree intervals as nft sends them: an opening interval-end at 0
	 * (unless a range starts there), then start / end+1 pairs; a range
	 * reaching the top of the address space has no end element.
	 */
	if (n > 0 && memcmp(r[0].lo, zero, len) != 0) {
		e = el_new(zero, len);
		if (e)
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
		eq_add(&q, e);
	}
	for (int i = 0; i < n; i++) {
		uint8_t end[16];
		size_t j;

		eq_add(&q, el_new(r[i].lo, len));
		memcpy(end, r[i].hi, len);
		for (j = len; j-- > 0;)
			if (++end[j] != 0)
				break;
		if (j == (size_t)-1)
			continue;	/* wrapped: the range ends at the last address */
		e = el_new(end, len);
		if (e)
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
		eq_add(&q, e);
	}
	eq_flush(&q);
	free(r);
}

/*
 * "table bridge NAME": what only the bridge hooks can see, the port a frame
 * came in on.  prerouting: a frame from a chained port must carry its own
 * container's IPv4/IPv6 source (ARP, and ICMPv6 from link-local or "::"
 * for neighbour discovery, pass; anything else, VLAN-tagged frames
 * included, is dropped), so the inet table may trust source addresses.
 * forward: no frame between a chained port and any other port: a chained
 * container reaches only the host (its gateway), where the inet table
 * applies its policy; the bridge's own traffic never crosses this hook.
 */
static void build_open_bridge(struct bt *bt)
{
	static const struct prefix ll = { { AF_INET6, { 0xfe, 0x80 } }, 10 };
	static const struct prefix unspec = { { AF_INET6, { 0 } }, 128 };
	struct fw *fw = bt->fw;
	struct setdef d;
	struct rb rb;

	bt->family = NFPROTO_BRIDGE;
	bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	if (!bt->keep) {
		bt_table(bt, NFT_MSG_DELTABLE, 0);
		bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	}
	def_plain(&d, "chained_ports", TYPE_IFNAME, IFNAMSIZ, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "chained_port_src4", TYPE_IFNAME << TYPE_BITS | TYPE_IPADDR, IFNAMSIZ + 4, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "chained_port_src6", TYPE_IFNAME << TYPE_BITS | TYPE_IP6ADDR, IFNAMSIZ + 16,
		  0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting", NF_BR_PRE_ROUTING, NF_BR_PRI_FILTER_BRIDGED,
		 "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "forward", NF_BR_FORWARD, NF_BR_PRI_FILTER_BRIDGED,
		 "filter");

	rb_init(&rb, fw, "prerouting");
	m_ifset(&rb, NFT_META_IIFNAME, "chained_ports", true);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	rb_init(&rb, fw, "prerouting");
	m_ethertype(&rb, ETH_P_ARP);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	rb_init(&rb, fw, "prerouting");
	m_ethertype(&rb, ETH_P_IP);
	x_meta(&rb, NFT_META_IIFNAME, REG32(0));
	x_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 12, 4, REG32(4));
	x_lookup(&rb, "chained_port_src4", REG32(0), -1, false);
	x_mark_chained(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, fw, "prerouting");
		m_ethertype(&rb, ETH_P_IPV6);
		m_prefix(&rb, 8, i == 0 ? &ll : &unspec);
		m_l4proto(&rb, IPPROTO_ICMPV6);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "prerouting");
	m_ethertype(&rb, ETH_P_IPV6);
	x_meta(&rb, NFT_META_IIFNAME, REG32(0));
	x_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, REG32(4));
	x_lookup(&rb, "chained_port_src6", REG32(0), -1, false);
	x_mark_chained(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	rb_init(&rb, fw, "prerouting");
	x_counter(&rb);
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);

	for (int i = 0; i < 2; i++) {
		rb_init(&rb, fw, "forward");
		m_ifset(&rb, i == 0 ? NFT_META_IIFNAME : NFT_META_OIFNAME, "chained_ports", false);
		x_counter(&rb);
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	bt->family = 0;
}

static void build_open(struct bt *bt, const void *arg)
{
	const struct fw_config *cfg = ((const struct open_arg *)arg)->cfg;
	struct fw *fw = bt->fw;
	bool v6 = fw->pool6.addr.family == AF_INET6;
	struct setdef d;
	struct rb rb;

	/*
	 * Create-delete-create: a missing table is not an error, an old one
	 * goes.  Reconciling keeps the table (and the pins in it): every base
	 * chain and set below is then created-or-kept and emptied (bt->keep).
	 */
	bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	if (!bt->keep) {
		bt_table(bt, NFT_MSG_DELTABLE, 0);
		bt_table(bt, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	}

	def_plain(&d, "sandbox_ifs", TYPE_IFNAME, IFNAMSIZ, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "sandbox_src4", TYPE_IFNAME << TYPE_BITS | TYPE_IPADDR, IFNAMSIZ + 4, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "sandbox_src6", TYPE_IFNAME << TYPE_BITS | TYPE_IP6ADDR, IFNAMSIZ + 16, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "dns_local4", TYPE_IFNAME << TYPE_BITS | TYPE_IPADDR, IFNAMSIZ + 4, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "dns_local6", TYPE_IFNAME << TYPE_BITS | TYPE_IP6ADDR, IFNAMSIZ + 16, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "internal4", TYPE_IPADDR, 4, NFT_SET_INTERVAL);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	add_internal(bt, cfg, AF_INET, "internal4");
	def_plain(&d, "internal6", TYPE_IP6ADDR, 16, NFT_SET_INTERVAL);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	add_internal(bt, cfg, AF_INET6, "internal6");
	def_plain(&d, "sandbox_fwd", TYPE_IFNAME, IFNAMSIZ, NFT_SET_MAP);
	d.verdict_map = true;
	bt_set(bt, NFT_MSG_NEWSET, &d);
	/*
	 * Chained attachments (an interface another CNI plugin made, behind
	 * a bridge): the inet hooks see the bridge as iif, never the
	 * container's veth, so they are known by source address instead.
	 * The bridge table below makes that address trustworthy.
	 */
	def_plain(&d, "chained_src4", TYPE_IPADDR, 4, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "chained_src6", TYPE_IP6ADDR, 16, 0);
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "chained_fwd4", TYPE_IPADDR, 4, NFT_SET_MAP);
	d.verdict_map = true;
	bt_set(bt, NFT_MSG_NEWSET, &d);
	def_plain(&d, "chained_fwd6", TYPE_IP6ADDR, 16, NFT_SET_MAP);
	d.verdict_map = true;
	bt_set(bt, NFT_MSG_NEWSET, &d);

	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting_raw", NF_INET_PRE_ROUTING, PRIO_RAW, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "prerouting_nat", NF_INET_PRE_ROUTING, PRIO_DSTNAT, "nat");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "input", NF_INET_LOCAL_IN, PRIO_FILTER, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "forward", NF_INET_FORWARD, PRIO_FILTER, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "postrouting_nat", NF_INET_POST_ROUTING, PRIO_SRCNAT, "nat");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "output_raw", NF_INET_LOCAL_OUT, PRIO_RAW, "filter");
	bt_chain(bt, NFT_MSG_NEWCHAIN, "chained_in", -1, 0, NULL);

	/*
	 * prerouting_raw: anti-spoofing, before conntrack sees the packet.
	 * The ICMPv6 exceptions (link-local and DAD's "::" sources, which
	 * neighbour discovery needs) must precede the drop.
	 */
	if (v6) {
		static const struct prefix ll = { { AF_INET6, { 0xfe, 0x80 } }, 10 };
		static const struct prefix unspec = { { AF_INET6, { 0 } }, 128 };
		const struct prefix *srcs[] = { &ll, &unspec };

		for (size_t i = 0; i < 2; i++) {
			/* Cheap compares before set lookups: every packet of
			 * every sandbox crosses this chain. */
			rb_init(&rb, fw, "prerouting_raw");
			m_nfproto(&rb, NFPROTO_IPV6);
			m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
			m_prefix(&rb, 8, srcs[i]);
			m_l4proto(&rb, IPPROTO_ICMPV6);
			x_verdict(&rb, NF_ACCEPT);
			bt_rule(bt, &rb);
		}
	}
	for (int f = 0; f < 2; f++) {
		rb_init(&rb, fw, "prerouting_raw");
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		m_ifaddr_not_in(&rb, f == 0 ? AF_INET : AF_INET6, f == 0 ? "sandbox_src4" : "sandbox_src6");
		x_counter(&rb);
		x_deny_log(&rb, fw, "spoof");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}

	/*
	 * A chained container's source address is only believed on a packet
	 * the bridge table checked at the container's own port (the mark):
	 * from anywhere else (the uplink, another interface) it is a spoof.
	 */
	for (int f = 0; f < 2; f++) {
		rb_init(&rb, fw, "prerouting_raw");
		m_addr_in(&rb, f == 0 ? AF_INET : AF_INET6, false,
			  f == 0 ? "chained_src4" : "chained_src6", false);
		m_not_marked_chained(&rb);
		x_counter(&rb);
		x_deny_log(&rb, fw, "spoof");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}

	/*
	 * A sandbox's UDP query to its gateway's port 53, where the proxy
	 * listens itself (dns_local4/6): no conntrack entry (and so no
	 * redirect) for it or for the answer - the busiest flow there is
	 * costs neither a lookup nor NAT per packet.  After the anti-spoofing
	 * above; input accepts it by the same set.
	 */
	for (int f = 0; f < (v6 ? 2 : 1); f++) {
		rb_init(&rb, fw, "prerouting_raw");
		m_dns_local(&rb, f, false);
		x_notrack(&rb);
		bt_rule(bt, &rb);
		rb_init(&rb, fw, "output_raw");
		m_dns_local(&rb, f, true);
		x_notrack(&rb);
		bt_rule(bt, &rb);
	}

	/* prerouting_nat: all sandbox DNS, whatever the destination, to the proxy. */
	for (int i = 0; i < 2; i++) {
		uint16_t port_be = htons(fw->dns_port);
		struct nftnl_expr *e;

		rb_init(&rb, fw, "prerouting_nat");
		m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		m_l4proto(&rb, i == 0 ? IPPROTO_UDP : IPPROTO_TCP);
		m_dport(&rb, 53);
		e = x_new(&rb, "immediate");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
			nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &port_be, 2);
		}
		e = x_new(&rb, "redir");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
			nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
		}
		bt_rule(bt, &rb);
	}
	/* The same for chained attachments, known by their source address. */
	for (int i = 0; i < 4; i++) {
		uint16_t port_be = htons(fw->dns_port);
		struct nftnl_expr *e;

		rb_init(&rb, fw, "prerouting_nat");
		m_addr_in(&rb, i < 2 ? AF_INET : AF_INET6, false,
			  i < 2 ? "chained_src4" : "chained_src6", false);
		m_l4proto(&rb, i % 2 == 0 ? IPPROTO_UDP : IPPROTO_TCP);
		m_dport(&rb, 53);
		e = x_new(&rb, "immediate");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
			nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &port_be, 2);
		}
		e = x_new(&rb, "redir");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
			nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
		}
		bt_rule(bt, &rb);
	}

	/*
	 * input, first: a sandbox's query to the proxy, the one packet every
	 * DNS lookup sends here, accepted without the rules below (what they
	 * would decide for it: the source was checked in prerouting_raw, and
	 * chained_in accepts the proxy port too).  IPv6 only if enabled.
	 */
	for (int f = 0; f < (v6 ? 2 : 1); f++) {
		rb_init(&rb, fw, "input");
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_l4proto(&rb, IPPROTO_UDP);
		m_dport(&rb, fw->dns_port);
		m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
		/* The untracked query to the gateway's own :53 (prerouting_raw). */
		rb_init(&rb, fw, "input");
		m_dns_local(&rb, f, false);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}

	/*
	 * Pool addresses arriving on an interface that is not (or not yet, or
	 * no longer) a sandbox's are dropped, so a sandbox whose chain is
	 * missing for any reason (a restart re-adding sandboxes, a half-failed
	 * create) fails closed in input and forward alike.
	 */
	for (int f = 0; f < 2; f++) {
		const struct prefix *pool = f == 0 ? &fw->pool4 : &fw->pool6;

		if (pool->addr.family != (f == 0 ? AF_INET : AF_INET6))
			continue;
		for (int c = 0; c < 2; c++) {
			rb_init(&rb, fw, c == 0 ? "input" : "forward");
			m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
			m_prefix(&rb, f == 0 ? 12 : 8, pool);
			m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
			x_counter(&rb);
			x_verdict(&rb, NF_DROP);
			bt_rule(bt, &rb);
		}
	}

	/*
	 * input, chained attachments first (they arrive on a bridge, not on
	 * one of sandbox_ifs, so the proxy-port drop below would hit their
	 * redirected DNS): replies and the DNS proxy only.  Their sources
	 * are vouched for by the bridge table's anti-spoofing.
	 */
	for (int f = 0; f < 2; f++) {
		struct nftnl_expr *e;

		rb_init(&rb, fw, "input");
		m_addr_in(&rb, f == 0 ? AF_INET : AF_INET6, false,
			  f == 0 ? "chained_src4" : "chained_src6", false);
		e = x_new(&rb, "immediate");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
			nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)NFT_GOTO);
			nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, "chained_in");
		}
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "chained_in");
	m_ct_est(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, fw, "chained_in");
		m_l4proto(&rb, i == 0 ? IPPROTO_UDP : IPPROTO_TCP);
		m_dport(&rb, fw->dns_port);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "chained_in");
	x_counter(&rb);
	x_deny_log(&rb, fw, "to-host");
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);

	/*
	 * The proxy port is for sandboxes only (and local tools on lo): from
	 * the uplink it would be a free resolver and a way to fill the proxy's
	 * TCP slots, or to pose as a sandbox with an IPv4-mapped source.
	 */
	for (int i = 0; i < 2; i++) {
		static const char lo[IFNAMSIZ] = "lo";

		rb_init(&rb, fw, "input");
		m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
		x_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
		x_cmp(&rb, NFT_REG_1, NFT_CMP_NEQ, lo, IFNAMSIZ);
		m_l4proto(&rb, i == 0 ? IPPROTO_UDP : IPPROTO_TCP);
		m_dport(&rb, fw->dns_port);
		x_counter(&rb);
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}

	/* input: a sandbox may reach only the DNS proxy (and ND) on the host. */
	rb_init(&rb, fw, "input");
	m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", true);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	if (!v6) {
		rb_init(&rb, fw, "input");
		m_nfproto(&rb, NFPROTO_IPV6);
		x_counter(&rb);
		x_deny_log(&rb, fw, "ipv6-disabled");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "input");
	m_ct_est(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	for (int i = 0; i < 2; i++) {
		rb_init(&rb, fw, "input");
		m_l4proto(&rb, i == 0 ? IPPROTO_UDP : IPPROTO_TCP);
		m_dport(&rb, fw->dns_port);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	if (v6) {
		struct nftnl_expr *e;
		uint8_t lo = 133, hi = 136;	/* RFC 4861: RS, RA, NS, NA */

		rb_init(&rb, fw, "input");
		m_nfproto(&rb, NFPROTO_IPV6);
		m_l4proto(&rb, IPPROTO_ICMPV6);
		x_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
		e = x_new(&rb, "range");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
			nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
			nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, &lo, 1);
			nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, &hi, 1);
		}
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	/*
	 * A "port unreachable" about an untracked answer (the proxy's reply
	 * to a client that had gone): conntrack cannot call it related, and
	 * it is not a denied attempt worth a record.  Dropped quietly - only
	 * that: type and code, and the packet it quotes is UDP from port 53
	 * (netd's answers carry no IP options: the quoted UDP header is at a
	 * fixed offset).  Any other ICMP error is logged as before.
	 */
	for (int f = 0; f < (v6 ? 2 : 1); f++) {
		/* ICMP 3/3 (RFC 792), ICMPv6 1/4 (RFC 4443 3.1) */
		uint8_t type_code[2] = { f == 0 ? 3 : 1, f == 0 ? 3 : 4 };
		uint8_t udp = IPPROTO_UDP;
		/* the quoted IP header starts 8 bytes in; its protocol field
		 * (IPv4 +9, IPv6 next header +6), its UDP source port after
		 * 20 (IPv4, no options) or 40 (IPv6) bytes */
		uint32_t proto_off = 8 + (f == 0 ? 9 : 6), sport_off = 8 + (f == 0 ? 20 : 40);
		uint16_t port53 = htons(53);

		rb_init(&rb, fw, "input");
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_l4proto(&rb, f == 0 ? IPPROTO_ICMP : IPPROTO_ICMPV6);
		x_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_1);
		x_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, type_code, 2);
		x_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, proto_off, 1, NFT_REG_1);
		x_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, &udp, 1);
		x_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, sport_off, 2, NFT_REG_1);
		x_cmp(&rb, NFT_REG_1, NFT_CMP_EQ, &port53, 2);
		x_counter(&rb);
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "input");
	x_counter(&rb);
	x_deny_log(&rb, fw, "to-host");
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);

	/* forward: into a sandbox only replies; out of one via its own chain. */
	rb_init(&rb, fw, "forward");
	m_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", false);
	m_ct_est(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	rb_init(&rb, fw, "forward");
	m_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", false);
	x_counter(&rb);
	x_deny_log(&rb, fw, "to-sandbox");
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
	if (!v6) {
		rb_init(&rb, fw, "forward");
		m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
		m_nfproto(&rb, NFPROTO_IPV6);
		x_counter(&rb);
		x_deny_log(&rb, fw, "ipv6-disabled");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, "forward");
	x_meta(&rb, NFT_META_IIFNAME, NFT_REG_1);
	x_lookup(&rb, "sandbox_fwd", NFT_REG_1, NFT_REG_VERDICT, false);
	bt_rule(bt, &rb);
	/* A sandbox interface without a map entry (cannot happen): still deny. */
	rb_init(&rb, fw, "forward");
	m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
	x_counter(&rb);
	x_deny_log(&rb, fw, "no-sandbox-chain");
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);
	/* Chained attachments, by address: into one only replies; out of one via its chain. */
	for (int f = 0; f < 2; f++) {
		int family = f == 0 ? AF_INET : AF_INET6;
		const char *src = f == 0 ? "chained_src4" : "chained_src6";

		rb_init(&rb, fw, "forward");
		m_addr_in(&rb, family, true, src, false);
		m_ct_est(&rb);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
		rb_init(&rb, fw, "forward");
		m_addr_in(&rb, family, true, src, false);
		x_counter(&rb);
		x_deny_log(&rb, fw, "to-sandbox");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
		rb_init(&rb, fw, "forward");
		m_addr_in(&rb, family, false, f == 0 ? "chained_fwd4" : "chained_fwd6", true);
		bt_rule(bt, &rb);
	}

	/* postrouting_nat: the pools leave masqueraded. */
	for (int f = 0; f < 2; f++) {
		const struct prefix *pool = f == 0 ? &fw->pool4 : &fw->pool6;

		if (pool->addr.family != (f == 0 ? AF_INET : AF_INET6))
			continue;
		rb_init(&rb, fw, "postrouting_nat");
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_prefix(&rb, f == 0 ? 12 : 8, pool);
		if (fw->egress[0])
			m_ifname_eq(&rb, NFT_META_OIFNAME, fw->egress);
		else
			m_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", true);
		x_new(&rb, "masq");
		bt_rule(bt, &rb);
	}
	for (int f = 0; f < 2; f++) {
		rb_init(&rb, fw, "postrouting_nat");
		m_addr_in(&rb, f == 0 ? AF_INET : AF_INET6, false,
			  f == 0 ? "chained_src4" : "chained_src6", false);
		if (fw->egress[0])
			m_ifname_eq(&rb, NFT_META_OIFNAME, fw->egress);
		else
			m_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", true);
		x_new(&rb, "masq");
		bt_rule(bt, &rb);
	}
	/*
	 * Sandboxes with an IPAM plugin's addresses (outside the pools): the
	 * anti-spoof drop in prerouting_raw lets out of a sandbox veth only
	 * that sandbox's own sources, so "came in on a sandbox veth" is
	 * "a sandbox's address".
	 */
	rb_init(&rb, fw, "postrouting_nat");
	m_ifset(&rb, NFT_META_IIFNAME, "sandbox_ifs", false);
	if (fw->egress[0])
		m_ifname_eq(&rb, NFT_META_OIFNAME, fw->egress);
	else
		m_ifset(&rb, NFT_META_OIFNAME, "sandbox_ifs", true);
	x_new(&rb, "masq");
	bt_rule(bt, &rb);
	build_open_bridge(bt);
}

/* The netlink socket and the fw object, no batch sent yet. */
static int fw_sock_new(const struct fw_config *cfg, struct fw **ret)
{
	const char *table = cfg->table && cfg->table[0] ? cfg->table : FW_TABLE_DEFAULT;
	int one = 1, rcv = FW_RCVBUF, r;
	struct fw *fw;

	*ret = NULL;
	if (strlen(table) >= NFT_TABLE_MAXNAMELEN || cfg->dns_port == 0 ||
	    (cfg->egress_ifname && strlen(cfg->egress_ifname) >= IFNAMSIZ) ||
	    (cfg->pool4.addr.family && cfg->pool4.addr.family != AF_INET) ||
	    (cfg->pool6.addr.family && cfg->pool6.addr.family != AF_INET6) ||
	    (cfg->n_internal && !cfg->internal) || cfg->n_internal > RULESET_ELEMS_MAX)
		return -EINVAL;
	fw = calloc(1, sizeof(*fw));
	if (!fw)
		return -ENOMEM;
	snprintf(fw->table, sizeof(fw->table), "%s", table);
	fw->dns_port = cfg->dns_port;
	fw->log_group = cfg->log_group;
	if (cfg->egress_ifname)
		snprintf(fw->egress, sizeof(fw->egress), "%s", cfg->egress_ifname);
	fw->pool4 = cfg->pool4;
	fw->pool6 = cfg->pool6;

	fw->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!fw->nl) {
		r = -errno;
		goto fail;
	}
	if (mnl_socket_bind(fw->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto fail;
	}
	fw->portid = mnl_socket_get_portid(fw->nl);
	/* Acks without a copy of the request: small, so many fit the queue. */
	mnl_socket_setsockopt(fw->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(fw->nl), SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		setsockopt(mnl_socket_get_fd(fw->nl), SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	{
		socklen_t sl = sizeof(fw->sndbuf);

		if (getsockopt(mnl_socket_get_fd(fw->nl), SOL_SOCKET, SO_SNDBUF, &fw->sndbuf, &sl) < 0)
			fw->sndbuf = 0;
		fw->sndbuf /= 2;	/* the kernel reports double the usable size */
	}
	*ret = fw;
	return 0;
fail:
	fw_close(fw);
	return r;
}

int fw_open(const struct fw_config *cfg, struct fw **ret)
{
	struct open_arg arg = { cfg };
	struct fw *fw;
	int r;

	r = fw_sock_new(cfg, &fw);
	if (r < 0)
		return r;
	r = fw_run(fw, build_open, &arg);
	if (r < 0) {
		fw_close(fw);
		return r;
	}
	*ret = fw;
	return 0;
}

void fw_close(struct fw *fw)
{
	if (!fw)
		return;
	if (fw->nl)
		mnl_socket_close(fw->nl);
	mnl_nlmsg_batch_stop(fw->b);
	free(fw->buf);
	free(fw->msgs);
	free(fw->sbs);
	free(fw);
}

const char *fw_last_error(const struct fw *fw)
{
	return fw ? fw->err : "";
}

/* ---- sandboxes ------------------------------------------------------------ */

struct sb_arg {
	const struct fw_sandbox *sb;
	const struct fw_sb_rec *old;	/* what fw_sandbox_add() made before, or NULL */
	const struct policy *pol;	/* NULL: delete only */
	const struct ruleset_box *box[2];
	int n_box[2];
	/* Reconcile mode only: replace the pin sets' contents by these. */
	bool replace_pins;
	const struct fw_pin *pins;
	size_t n_pins;
};

/* NEWSETELEM then DELSETELEM of one element: gone afterwards, never an error. */
static void elem_remove(struct bt *bt, const char *set, const void *key, size_t len,
			const char *jump)
{
	struct elemq q;

	for (int pass = 0; pass < 2; pass++) {
		struct nftnl_set_elem *e = el_new(key, len);

		if (e && jump && pass == 0) {
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, (uint32_t)NFT_JUMP);
			nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, jump);
		}
		eq_init(&q, bt, pass == 0 ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, set);
		eq_add(&q, e);
		eq_flush(&q);
	}
}

/* Add the pins of @family among @pins[0..@n) to sandbox @name's pin set. */
static void pins_add(struct bt *bt, const char *name, int family, const struct fw_pin *pins,
		     size_t n)
{
	size_t alen = addr_len(family);
	struct setdef d;
	struct elemq q;

	def_tuple(&d, name, "pin", family);
	eq_init(&q, bt, NFT_MSG_NEWSETELEM, d.name);
	for (size_t i = 0; i < n; i++) {
		const struct fw_pin *p = &pins[i];
		struct nftnl_set_elem *e;
		uint8_t key[24];

		if (p->addr.family != family)
			continue;
		e = el_new(key, key_tuple(key, p->addr.a, alen, p->proto, p->port));
		if (e) {
			/*
			 * An existing element is updated in place (no
			 * NLM_F_EXCL); giving the expiration as well makes
			 * the kernel restart the countdown even when the
			 * timeout value is unchanged.
			 */
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, p->timeout_ms);
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_EXPIRATION, p->timeout_ms);
		}
		eq_add(&q, e);
	}
	eq_flush(&q);
}

/* Remove @ifname . @a from set @base + "4" or "6" by @a's family (family 0: nothing). */
static void ifaddr_remove(struct bt *bt, const char *base, const char *ifname, const struct addr *a)
{
	uint8_t key[IFNAMSIZ + 16];
	char set[32];

	if (a->family != AF_INET && a->family != AF_INET6)
		return;
	snprintf(set, sizeof(set), "%s%c", base, a->family == AF_INET ? '4' : '6');
	elem_remove(bt, set, key, key_ifaddr(key, ifname, a), NULL);
}

/* The removal half: everything a sandbox may own, created-then-deleted. */
static void sb_remove(struct bt *bt, const char *name, const char *ifname,
		      const struct addr *a4, const struct addr *a6, const struct addr *d4,
		      const struct addr *d6, bool chained)
{
	char chain[NFT_CHAIN_MAXNAMELEN];
	uint8_t key[IFNAMSIZ + 16];
	size_t len;

	snprintf(chain, sizeof(chain), "sb-%s", name);
	if (chained) {
		/* The verdict map elements reference the chain: they go first. */
		for (int f = 0; f < 2; f++) {
			const struct addr *a = f == 0 ? a4 : a6;

			if (a->family != (f == 0 ? AF_INET : AF_INET6))
				continue;
			elem_remove(bt, f == 0 ? "chained_fwd4" : "chained_fwd6", a->a,
				    addr_len(a->family), chain);
			elem_remove(bt, f == 0 ? "chained_src4" : "chained_src6", a->a,
				    addr_len(a->family), NULL);
		}
		bt->family = NFPROTO_BRIDGE;
		len = key_ifname(key, ifname);
		elem_remove(bt, "chained_ports", key, len, NULL);
		ifaddr_remove(bt, "chained_port_src", ifname, a4);
		ifaddr_remove(bt, "chained_port_src", ifname, a6);
		bt->family = 0;
		return;
	}
	len = key_ifname(key, ifname);
	/* The map element references the chain: it goes first. */
	elem_remove(bt, "sandbox_fwd", key, len, chain);
	elem_remove(bt, "sandbox_ifs", key, len, NULL);
	ifaddr_remove(bt, "sandbox_src", ifname, a4);
	ifaddr_remove(bt, "sandbox_src", ifname, a6);
	ifaddr_remove(bt, "dns_local", ifname, d4);
	ifaddr_remove(bt, "dns_local", ifname, d6);
}

/*
 * Named quota object "q-NAME" (the sandbox's egress byte quota), flags
 * "over": an objref to it matches once more than @bytes went through it.
 * NEWOBJ on an existing quota updates its limit and keeps what it has
 * consumed (the kernel's nft_quota_obj_update), so a reconcile or a policy
 * reload does not hand the sandbox a fresh quota.
 */
static void bt_quota(struct bt *bt, uint16_t type, const char *sb_name, uint64_t bytes)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	char name[NFT_OBJ_MAXNAMELEN];
	struct nlmsghdr *nlh;

	if (!o) {
		bt->err = bt->err ? bt->err : -ENOMEM;
		return;
	}
	snprintf(name, sizeof(name), "q-%s", sb_name);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, bt->fw->table);
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
		bt_done(bt, nlh, name);
	}
	nftnl_obj_free(o);
}

/* Remove the quota object if there is one: create-then-delete never fails. */
static void bt_quota_remove(struct bt *bt, const char *sb_name)
{
	bt_quota(bt, NFT_MSG_NEWOBJ, sb_name, 1);
	bt_quota(bt, NFT_MSG_DELOBJ, sb_name, 0);
}

static void sb_remove_chain_sets(struct bt *bt, const char *name)
{
	char chain[NFT_CHAIN_MAXNAMELEN];
	static const char *const kinds[] = { "pin", "cidr" };
	struct setdef d;

	snprintf(chain, sizeof(chain), "sb-%s", name);
	bt_flush_chain(bt, chain);
	bt_chain(bt, NFT_MSG_DELCHAIN, chain, -1, 0, NULL);
	for (int k = 0; k < 2; k++)
		for (int f = 0; f < 2; f++) {
			def_tuple(&d, name, kinds[k], f == 0 ? AF_INET : AF_INET6);
			bt_set(bt, NFT_MSG_NEWSET, &d);
			bt_set(bt, NFT_MSG_DELSET, &d);
		}
	/* After the chain: its rules referenced the quota. */
	bt_quota_remove(bt, name);
}

static void build_sandbox(struct bt *bt, const void *argp)
{
	static const struct addr none;
	const struct sb_arg *a = argp;
	const struct fw_sandbox *sb = a->sb;
	struct fw *fw = bt->fw;
	char chain[NFT_CHAIN_MAXNAMELEN];
	uint8_t key[IFNAMSIZ + 16];
	struct setdef d;
	struct elemq q;
	struct rb rb;

	snprintf(chain, sizeof(chain), "sb-%s", sb->name);

	/*
	 * 1. Make sure the chain exists so the removals below can refer to it.
	 * (Its dns_local elements are in the record of an earlier add only:
	 * fw_sandbox_set_dns() adds them.)
	 * Reconciling (bt->keep) skips this: the chain and CIDR sets are
	 * emptied and refilled in place, the pin sets are kept, and the
	 * hookup elements below are re-added unchanged.
	 */
	if (!bt->keep) {
		bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
		/*
		 * Whatever an earlier fw_sandbox_add() of this name hooked up (its
		 * interface or addresses may differ), then whatever the new
		 * description would collide with.  Removing twice is harmless.
		 */
		if (a->old)
			sb_remove(bt, a->old->name, a->old->ifname, &a->old->addr4,
				  &a->old->addr6, &a->old->dns4, &a->old->dns6, a->old->chained);
		sb_remove(bt, sb->name, sb->host_ifname, &sb->addr4, &sb->addr6, &none,
			  &none, sb->chained);
		sb_remove_chain_sets(bt, sb->name);
	}
	if (!a->pol)
		return;

	/* 2. Build the sandbox afresh: its sets first, then the chain. */
	for (int f = 0; f < 2; f++) {
		int family = f == 0 ? AF_INET : AF_INET6;
		size_t alen = addr_len(family);

		def_tuple(&d, sb->name, "pin", family);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		if (bt->keep && a->replace_pins) {
			bt_flush_set(bt, d.name);
			pins_add(bt, sb->name, family, a->pins, a->n_pins);
		}
		def_tuple(&d, sb->name, "cidr", family);
		bt_set(bt, NFT_MSG_NEWSET, &d);
		eq_init(&q, bt, NFT_MSG_NEWSETELEM, d.name);
		for (int i = 0; i < a->n_box[f]; i++) {
			const struct ruleset_box *b = &a->box[f][i];
			uint8_t lo[24], hi[24];
			struct nftnl_set_elem *e;
			size_t len;

			len = key_tuple(lo, b->lo, alen, b->proto, b->port_lo);
			key_tuple(hi, b->hi, alen, b->proto, b->port_hi);
			e = el_new(lo, len);
			if (e)
				nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY_END, hi, (uint32_t)len);
			eq_add(&q, e);
		}
		eq_flush(&q);
	}

	bt_chain(bt, NFT_MSG_NEWCHAIN, chain, -1, 0, NULL);
	/*
	 * Egress byte quota (policy limits.egress_bytes), first in the chain
	 * so every packet leaving the sandbox is counted exactly once (one
	 * objref per packet: each evaluation adds the packet's length).  Over
	 * the quota: "finish" drops only packets of new connections, "cut"
	 * every packet.  The quota is evaluated before the ct state test, so
	 * established packets are counted even though they do not match.
	 */
	if (a->pol->egress_bytes) {
		struct nftnl_expr *e;
		char qname[NFT_OBJ_MAXNAMELEN];

		snprintf(qname, sizeof(qname), "q-%s", sb->name);
		bt_quota(bt, NFT_MSG_NEWOBJ, sb->name, a->pol->egress_bytes);
		rb_init(&rb, fw, chain);
		e = x_new(&rb, "objref");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_QUOTA);
			nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, qname);
		}
		if (!a->pol->quota_cut)
			m_ct_new(&rb);
		x_counter(&rb);
		x_deny_log(&rb, fw, "quota");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	} else if (bt->keep) {
		/* A reload that dropped the limit: the chain no longer refers to it. */
		bt_quota_remove(bt, sb->name);
	}
	rb_init(&rb, fw, chain);
	m_ct_est(&rb);
	x_verdict(&rb, NF_ACCEPT);
	bt_rule(bt, &rb);
	/* Every new connection of the sandbox carries its mark (acct.h). */
	if (sb->ct_mark) {
		rb_init(&rb, fw, chain);
		x_ct_mark_set(&rb, sb->ct_mark);
		bt_rule(bt, &rb);
	}
	/* Explicit CIDR rules win over the internal ranges ... */
	for (int f = 0; f < 2; f++) {
		def_tuple(&d, sb->name, "cidr", f == 0 ? AF_INET : AF_INET6);
		rb_init(&rb, fw, chain);
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_tuple_lookup(&rb, f == 0 ? AF_INET : AF_INET6, d.name);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	/* ... but a DNS answer can never open an internal address. */
	for (int f = 0; f < 2; f++) {
		rb_init(&rb, fw, chain);
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		x_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, f == 0 ? 16 : 24, f == 0 ? 4 : 16,
			  NFT_REG_1);
		x_lookup(&rb, f == 0 ? "internal4" : "internal6", NFT_REG_1, -1, false);
		x_counter(&rb);
		x_deny_log(&rb, fw, "internal");
		x_verdict(&rb, NF_DROP);
		bt_rule(bt, &rb);
	}
	for (int f = 0; f < 2; f++) {
		def_tuple(&d, sb->name, "pin", f == 0 ? AF_INET : AF_INET6);
		rb_init(&rb, fw, chain);
		m_nfproto(&rb, f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		m_tuple_lookup(&rb, f == 0 ? AF_INET : AF_INET6, d.name);
		x_verdict(&rb, NF_ACCEPT);
		bt_rule(bt, &rb);
	}
	rb_init(&rb, fw, chain);
	x_counter(&rb);
	x_deny_log(&rb, fw, "not-pinned");
	x_verdict(&rb, NF_DROP);
	bt_rule(bt, &rb);

	/*
	 * 3. Hook it up: interface, anti-spoofing sources, then the jump.
	 * A chained attachment: its port and port . source pairs in the
	 * bridge table (anti-spoofing, isolation), then its addresses and the
	 * address -> chain map in the inet table.
	 */
	if (sb->chained) {
		bt->family = NFPROTO_BRIDGE;
		eq_init(&q, bt, NFT_MSG_NEWSETELEM, "chained_ports");
		eq_add(&q, el_new(key, key_ifname(key, sb->host_ifname)));
		eq_flush(&q);
		for (int f = 0; f < 2; f++) {
			const struct addr *ad = f == 0 ? &sb->addr4 : &sb->addr6;

			if (ad->family != (f == 0 ? AF_INET : AF_INET6))
				continue;
			eq_init(&q, bt, NFT_MSG_NEWSETELEM,
				f == 0 ? "chained_port_src4" : "chained_port_src6");
			eq_add(&q, el_new(key, key_ifaddr(key, sb->host_ifname, ad)));
			eq_flush(&q);
		}
		bt->family = 0;
		for (int f = 0; f < 2; f++) {
			const struct addr *ad = f == 0 ? &sb->addr4 : &sb->addr6;
			struct nftnl_set_elem *e;

			if (ad->family != (f == 0 ? AF_INET : AF_INET6))
				continue;
			eq_init(&q, bt, NFT_MSG_NEWSETELEM, f == 0 ? "chained_src4" : "chained_src6");
			eq_add(&q, el_new(ad->a, addr_len(ad->family)));
			eq_flush(&q);
			eq_init(&q, bt, NFT_MSG_NEWSETELEM, f == 0 ? "chained_fwd4" : "chained_fwd6");
			e = el_new(ad->a, addr_len(ad->family));
			if (e) {
				nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, (uint32_t)NFT_JUMP);
				nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, chain);
			}
			eq_add(&q, e);
			eq_flush(&q);
		}
		return;
	}
	eq_init(&q, bt, NFT_MSG_NEWSETELEM, "sandbox_ifs");
	eq_add(&q, el_new(key, key_ifname(key, sb->host_ifname)));
	eq_flush(&q);
	if (sb->addr4.family == AF_INET) {
		eq_init(&q, bt, NFT_MSG_NEWSETELEM, "sandbox_src4");
		eq_add(&q, el_new(key, key_ifaddr(key, sb->host_ifname, &sb->addr4)));
		eq_flush(&q);
	}
	if (sb->addr6.family == AF_INET6) {
		eq_init(&q, bt, NFT_MSG_NEWSETELEM, "sandbox_src6");
		eq_add(&q, el_new(key, key_ifaddr(key, sb->host_ifname, &sb->addr6)));
		eq_flush(&q);
	}
	eq_init(&q, bt, NFT_MSG_NEWSETELEM, "sandbox_fwd");
	{
		struct nftnl_set_elem *e = el_new(key, key_ifname(key, sb->host_ifname));

		if (e) {
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, (uint32_t)NFT_JUMP);
			nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, chain);
		}
		eq_add(&q, e);
	}
	eq_flush(&q);
}

static bool sb_ok(const struct fw_sandbox *sb)
{
	return sb && name_ok(sb->name) && ifname_ok(sb->host_ifname) &&
	       (sb->addr4.family == 0 || sb->addr4.family == AF_INET) &&
	       (sb->addr6.family == 0 || sb->addr6.family == AF_INET6) &&
	       (!sb->chained || sb->addr4.family || sb->addr6.family);
}

static struct fw_sb_rec *sb_find(struct fw *fw, const char *name)
{
	for (size_t i = 0; i < fw->n_sbs; i++)
		if (strcmp(fw->sbs[i].name, name) == 0)
			return &fw->sbs[i];
	return NULL;
}

int fw_sandbox_add(struct fw *fw, const struct fw_sandbox *sb, const struct policy *pol)
{
	struct ruleset_box *b4 = NULL, *b6 = NULL;
	struct fw_sb_rec *old, rec;
	struct sb_arg a;
	int r;

	if (!fw || !sb_ok(sb) || !pol)
		return -EINVAL;
	r = ruleset_cidr_boxes(pol, AF_INET, &b4);
	if (r < 0)
		return r;
	a = (struct sb_arg){ .sb = sb, .pol = pol, .box = { b4, NULL }, .n_box = { r, 0 } };
	r = ruleset_cidr_boxes(pol, AF_INET6, &b6);
	if (r < 0)
		goto out;
	a.box[1] = b6;
	a.n_box[1] = r;
	old = sb_find(fw, sb->name);
	if (old) {
		rec = *old;
		a.old = &rec;
	} else if (fw->n_sbs == fw->cap_sbs) {
		size_t nc = fw->cap_sbs ? 2 * fw->cap_sbs : 16;
		struct fw_sb_rec *ns = realloc(fw->sbs, nc * sizeof(*ns));

		r = -ENOMEM;
		if (!ns)
			goto out;
		fw->sbs = ns;
		fw->cap_sbs = nc;
	}
	r = fw_run(fw, build_sandbox, &a);
	if (r < 0)
		goto out;
	if (!old)
		old = &fw->sbs[fw->n_sbs++];
	memset(old, 0, sizeof(*old));
	snprintf(old->name, sizeof(old->name), "%s", sb->name);
	snprintf(old->ifname, sizeof(old->ifname), "%s", sb->host_ifname);
	old->addr4 = sb->addr4;
	old->addr6 = sb->addr6;
	old->chained = sb->chained;
out:
	free(b4);
	free(b6);
	return r;
}

struct dns_arg {
	const char *ifname;
	struct addr old[2], cur[2];	/* [0] IPv4, [1] IPv6 */
	bool v6;
};

/* dns_local4/6: the old pair(s) out, the new one(s) in. */
static void build_dns(struct bt *bt, const void *argp)
{
	static const char *const sets[2] = { "dns_local4", "dns_local6" };
	const struct dns_arg *a = argp;
	uint8_t key[IFNAMSIZ + 16];
	struct elemq q;

	for (int f = 0; f < 2; f++)
		ifaddr_remove(bt, "dns_local", a->ifname, &a->old[f]);
	for (int f = 0; f < (a->v6 ? 2 : 1); f++) {
		if (a->cur[f].family != (f == 0 ? AF_INET : AF_INET6))
			continue;
		eq_init(&q, bt, NFT_MSG_NEWSETELEM, sets[f]);
		eq_add(&q, el_new(key, key_ifaddr(key, a->ifname, &a->cur[f])));
		eq_flush(&q);
	}
}

int fw_sandbox_set_dns(struct fw *fw, const char *name, const struct addr *dns4,
		       const struct addr *dns6)
{
	struct fw_sb_rec *rec;
	struct dns_arg a = { 0 };
	int r;

	if (!fw || !name || !dns4 || !dns6 || (dns4->family && dns4->family != AF_INET) ||
	    (dns6->family && dns6->family != AF_INET6))
		return -EINVAL;
	rec = sb_find(fw, name);
	if (!rec)
		return -ENOENT;
	if (rec->chained)
		return -EINVAL;
	a.ifname = rec->ifname;
	a.old[0] = rec->dns4;
	a.old[1] = rec->dns6;
	a.cur[0] = *dns4;
	a.cur[1] = *dns6;
	a.v6 = fw->pool6.addr.family == AF_INET6;
	r = fw_run(fw, build_dns, &a);
	if (r < 0)
		return r;
	rec->dns4 = *dns4;
	rec->dns6 = a.v6 ? *dns6 : (struct addr){ 0 };
	return 0;
}

int fw_sandbox_del(struct fw *fw, const struct fw_sandbox *sb)
{
	struct fw_sb_rec *old, rec;
	struct sb_arg a = { .sb = sb };
	int r;

	if (!fw || !sb_ok(sb))
		return -EINVAL;
	old = sb_find(fw, sb->name);
	if (old) {
		rec = *old;
		a.old = &rec;
	}
	r = fw_run(fw, build_sandbox, &a);
	/* Only the table or its base sets can be missing: nothing left to delete. */
	if (r == -ENOENT)
		r = 0;
	if (r == 0 && old) {
		*old = fw->sbs[--fw->n_sbs];
	}
	return r;
}

/* ---- pins ----------------------------------------------------------------- */

struct pin_arg {
	const char *name;
	const struct fw_pin *pins;
	size_t n;
};

static void build_pins(struct bt *bt, const void *argp)
{
	const struct pin_arg *a = argp;

	for (int f = 0; f < 2; f++)
		pins_add(bt, a->name, f == 0 ? AF_INET : AF_INET6, a->pins, a->n);
}

int fw_pin(struct fw *fw, const char *name, const struct fw_pin *pins, size_t n)
{
	struct pin_arg a = { name, pins, n };
	int r;

	if (!fw || !name_ok(name) || (n && !pins))
		return -EINVAL;
	if (n > FW_PINS_PER_CALL)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if ((pins[i].addr.family != AF_INET && pins[i].addr.family != AF_INET6) ||
		    (pins[i].proto != IPPROTO_TCP && pins[i].proto != IPPROTO_UDP) ||
		    pins[i].timeout_ms == 0)
			return -EINVAL;
	if (n == 0)
		return 0;
	r = fw_run(fw, build_pins, &a);
	/* The kernel says a set at its size limit is full with ENFILE. */
	return r == -ENFILE ? -ENOSPC : r;
}

struct lookup_res {
	bool found;
	uint64_t expires_ms;
};

static int lookup_cb(const struct nlmsghdr *nlh, void *data)
{
	struct lookup_res *res = data;
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
	if (it) {
		e = nftnl_set_elems_iter_next(it);
		if (e) {
			res->found = true;
			if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
				res->expires_ms = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
		}
		nftnl_set_elems_iter_destroy(it);
	}
	nftnl_set_free(s);
	return MNL_CB_OK;
}

/* One non-batch request; @cb (may be NULL) sees the replies.  Return: 0; -errno. */
static int fw_request(struct fw *fw, uint16_t type, struct nftnl_set *s, bool elems,
		      mnl_cb_t cb, void *data)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	uint32_t seq = ++fw->seq;
	int fd = mnl_socket_get_fd(fw->nl), r;

	nlh = nftnl_nlmsg_build_hdr(req, type, NFPROTO_INET, NLM_F_ACK, seq);
	if (elems)
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
	else
		nftnl_set_nlmsg_build_payload(nlh, s);
	if (mnl_socket_sendto(fw->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, FW_ACK_WAIT_MS) <= 0)
			return -ETIMEDOUT;
		n = mnl_socket_recvfrom(fw->nl, fw->rbuf, sizeof(fw->rbuf));
		if (n < 0)
			return -errno;
		r = mnl_cb_run(fw->rbuf, (size_t)n, seq, fw->portid, cb, data);
		if (r < 0)
			return -errno;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

int fw_pin_lookup(struct fw *fw, const char *name, const struct addr *addr, uint8_t proto,
		  uint16_t port, uint64_t *ret_expires_ms)
{
	struct lookup_res res = { 0 };
	struct nftnl_set *s;
	struct nftnl_set_elem *e;
	struct setdef d;
	uint8_t key[24];
	int r;

	if (!fw || !name_ok(name) || !addr ||
	    (addr->family != AF_INET && addr->family != AF_INET6))
		return -EINVAL;
	def_tuple(&d, name, "pin", addr->family);
	s = nftnl_set_alloc();
	e = el_new(key, key_tuple(key, addr->a, addr_len(addr->family), proto, port));
	if (!s || !e) {
		nftnl_set_free(s);
		nftnl_set_elem_free(e);
		return -ENOMEM;
	}
	nftnl_set_set_str(s, NFTNL_SET_TABLE, fw->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, d.name);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_elem_add(s, e);
	r = fw_request(fw, NFT_MSG_GETSETELEM, s, true, lookup_cb, &res);
	if (r == -ENOENT) {
		/* No such element, or no such set?  Ask for the set itself. */
		r = fw_request(fw, NFT_MSG_GETSET, s, false, NULL, NULL);
		res.found = false;
	}
	nftnl_set_free(s);
	if (r < 0)
		return r;
	if (res.found && ret_expires_ms)
		*ret_expires_ms = res.expires_ms;
	return res.found;
}

/* ---- restart and reload: reconcile in place --------------------------------- */

#define FW_DUMP_BUF 32768	/* libmnl's MNL_SOCKET_DUMP_SIZE: one dump skb */
#define FW_STALE_MAX 65536	/* sb-* objects remembered from a dump */

/* sb-* chains and sets found in the kernel's table. */
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

static void dump_note(struct dump_list *l, const char *table, const char *obj, bool is_set)
{
	static const char *const sfx[] = { "-pin4", "-pin6", "-cidr4", "-cidr6" };
	size_t n = strlen(obj), k;

	if (!table || strcmp(table, l->table) != 0 || n <= 3 || strncmp(obj, "sb-", 3) != 0 ||
	    n >= sizeof(l->v[0].obj))
		return;
	k = n - 3;
	if (is_set) {
		size_t i;

		for (i = 0; i < 4; i++) {
			size_t sl = strlen(sfx[i]);

			if (n > 3 + sl && strcmp(obj + n - sl, sfx[i]) == 0) {
				k = n - 3 - sl;
				break;
			}
		}
		if (i == 4)
			return;	/* not one of ours */
	}
	if (k > POLICY_NAME_MAX || l->n == FW_STALE_MAX)
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

/* One dump request of @type (family inet); @cb sees every object. */
static int fw_dump(struct fw *fw, uint16_t type, mnl_cb_t cb, void *data)
{
	char req[256];
	struct nlmsghdr *nlh;
	uint32_t seq = ++fw->seq;
	int fd = mnl_socket_get_fd(fw->nl), r = 0;
	char *buf = malloc(FW_DUMP_BUF);

	if (!buf)
		return -ENOMEM;
	nlh = nftnl_nlmsg_build_hdr(req, type, NFPROTO_INET, NLM_F_DUMP, seq);
	if (mnl_socket_sendto(fw->nl, nlh, nlh->nlmsg_len) < 0) {
		r = -errno;
		goto out;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, FW_ACK_WAIT_MS) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		n = mnl_socket_recvfrom(fw->nl, buf, FW_DUMP_BUF);
		if (n < 0) {
			r = -errno;
			break;
		}
		r = mnl_cb_run(buf, (size_t)n, seq, fw->portid, cb, data);
		if (r < 0) {
			r = errno ? -errno : -EIO;
			break;
		}
		if (r == MNL_CB_STOP) {
			r = 0;
			break;
		}
	}
out:
	free(buf);
	return r;
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

/*
 * The whole start-up in one batch: the base ruleset (created, or kept and
 * refilled), the chains and sets of sandboxes that are no longer in the
 * state dir removed, and every kept sandbox re-rendered.  The order inside
 * the batch matters: the base sets (vmap included) are emptied first, so
 * no jump refers to a stale chain when it is deleted; a stale chain's rules
 * go before its sets.
 */
static void build_reconcile(struct bt *bt, const void *argp)
{
	const struct rc_arg *a = argp;
	struct open_arg oa = { a->cfg };

	build_open(bt, &oa);
	for (int pass = 0; a->found && pass < 2; pass++)
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
	for (size_t i = 0; i < a->n; i++)
		build_sandbox(bt, &a->sbs[i]);
}

/* Fill @a from @sb/@pol (its CIDR boxes; free with sb_arg_done()). */
static int sb_arg_init(struct sb_arg *a, const struct fw_sandbox *sb, const struct policy *pol)
{
	struct ruleset_box *b;
	int r;

	memset(a, 0, sizeof(*a));
	if (!sb_ok(sb) || !pol)
		return -EINVAL;
	a->sb = sb;
	a->pol = pol;
	for (int f = 0; f < 2; f++) {
		r = ruleset_cidr_boxes(pol, f == 0 ? AF_INET : AF_INET6, &b);
		if (r < 0)
			return r;
		a->box[f] = b;
		a->n_box[f] = r;
	}
	return 0;
}

static void sb_arg_done(struct sb_arg *a)
{
	free((void *)a->box[0]);
	free((void *)a->box[1]);
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

int fw_open_reconcile(const struct fw_config *cfg, const struct fw_restore *sbs, size_t n,
		      struct fw **ret, struct fw_reconcile_info *info)
{
	struct dump_list found = { 0 };
	struct rc_arg a = { .cfg = cfg, .n = n };
	struct fw *fw = NULL;
	char first_err[sizeof(fw->err)] = "";
	int r;

	*ret = NULL;
	memset(info, 0, sizeof(*info));
	if (n && !sbs)
		return -EINVAL;
	r = fw_sock_new(cfg, &fw);
	if (r < 0)
		return r;
	a.sbs = calloc(n ? n : 1, sizeof(*a.sbs));
	if (!a.sbs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r = sb_arg_init(&a.sbs[i], &sbs[i].sb, sbs[i].pol);
		if (r < 0)
			goto out;
		a.sbs[i].replace_pins = sbs[i].flush_pins;	/* with no pins: emptied */
	}
	found.table = fw->table;
	r = fw_dump(fw, NFT_MSG_GETCHAIN, dump_chain_cb, &found);
	if (r == 0)
		r = fw_dump(fw, NFT_MSG_GETSET, dump_set_cb, &found);
	if (r == 0)
		r = found.err;
	if (r == 0) {
		a.found = &found;
		r = fw_run_mode(fw, build_reconcile, &a, true);
		if (r == 0) {
			info->kept = true;
			for (size_t i = 0; i < found.n; i++)
				if (!rc_kept(&a, found.v[i].owner) && !found.v[i].is_set)
					info->n_stale++;
		}
	}
	if (r < 0) {
		/*
		 * The kept table could not be reconciled (its base ruleset is
		 * of another version, say): replace it whole, still in one
		 * batch, so there is no moment without rules.  Pins are lost;
		 * established connections are not (conntrack is not in it).
		 */
		snprintf(first_err, sizeof(first_err), "%s", fw->err[0] ? fw->err : strerror(-r));
		a.found = NULL;
		for (size_t i = 0; i < n; i++)
			a.sbs[i].replace_pins = false;
		r = fw_run_mode(fw, build_reconcile, &a, false);
		if (r == 0)
			snprintf(info->replaced_because, sizeof(info->replaced_because), "%s",
				 first_err);
	}
	if (r == 0)
		r = sb_records(fw, sbs, n);
out:
	if (a.sbs)
		for (size_t i = 0; i < n; i++)
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

static void build_update(struct bt *bt, const void *argp)
{
	const struct upd_arg *a = argp;

	for (size_t i = 0; i < a->n; i++)
		build_sandbox(bt, &a->sbs[i]);
}

int fw_sandboxes_update(struct fw *fw, const struct fw_update *u, size_t n)
{
	struct upd_arg a = { .n = n };
	int r = 0;

	if (!fw || (n && !u))
		return -EINVAL;
	if (n == 0)
		return 0;
	a.sbs = calloc(n, sizeof(*a.sbs));
	if (!a.sbs)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (!u[i].sb || !name_ok(u[i].sb->name) || !sb_find(fw, u[i].sb->name) ||
		    u[i].n_pins > FW_PIN_SET_SIZE || (u[i].n_pins && !u[i].pins)) {
			r = -EINVAL;
			break;
		}
		for (size_t j = 0; j < u[i].n_pins; j++) {
			const struct fw_pin *p = &u[i].pins[j];

			if ((p->addr.family != AF_INET && p->addr.family != AF_INET6) ||
			    (p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP) ||
			    p->timeout_ms == 0)
				r = -EINVAL;
		}
		if (r < 0)
			break;
		r = sb_arg_init(&a.sbs[i], u[i].sb, u[i].pol);
		a.sbs[i].replace_pins = u[i].replace_pins;
		a.sbs[i].pins = u[i].pins;
		a.sbs[i].n_pins = u[i].n_pins;
	}
	if (r == 0)
		r = fw_run_mode(fw, build_update, &a, true);
	for (size_t i = 0; i < n; i++)
		sb_arg_done(&a.sbs[i]);
	free(a.sbs);
	return r == -ENFILE ? -ENOSPC : r;
}
