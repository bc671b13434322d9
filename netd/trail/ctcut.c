/*
 * ctcut - conntrack deletes for a policy reload; see ctcut.h.  Messages are
 * nfnetlink (NFNL_SUBSYS_CTNETLINK); the matching entries' CTA_TUPLE_ORIG
 * attributes are copied verbatim from the dump into the DELETE requests,
 * so the kernel finds exactly the entry it reported.
 */
#include "netd/trail/ctcut.h"
#include "netd/trail/ctmsg.h"
#include "common/nlbuf.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#define CTCUT_WAIT_MS 2000
#define CTCUT_TUPLE_MAX 256	/* bytes of one CTA_TUPLE_ORIG */

struct hit {
	uint16_t len;
	uint8_t tuple[CTCUT_TUPLE_MAX];	/* the whole attribute, header included */
	bool zone;
	uint16_t zone_be;
};

struct dump_ctx {
	const struct addr *src;
	const struct pinreg_cut *cut;
	size_t n;
	bool all;		/* every entry from @src, whatever its destination */
	struct hit *hits;
	size_t n_hits;
};

struct tuple {
	struct addr s, d;
	uint8_t proto;
	uint16_t dport;		/* host byte order */
	bool have_ports;
};

static int parse_ip(const struct nlattr *nest, struct tuple *t)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);
		size_t len = mnl_attr_get_payload_len(a);
		struct addr *dst = NULL;
		int fam = 0;

		if (type == CTA_IP_V4_SRC || type == CTA_IP_V4_DST)
			fam = AF_INET;
		else if (type == CTA_IP_V6_SRC || type == CTA_IP_V6_DST)
			fam = AF_INET6;
		if (!fam || len != addr_len(fam))
			continue;
		dst = (type == CTA_IP_V4_SRC || type == CTA_IP_V6_SRC) ? &t->s : &t->d;
		dst->family = (uint8_t)fam;
		memcpy(dst->a, mnl_attr_get_payload(a), len);
	}
	return 0;
}

static void parse_proto(const struct nlattr *nest, struct tuple *t)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case CTA_PROTO_NUM:
			if (mnl_attr_get_payload_len(a) >= 1)
				t->proto = mnl_attr_get_u8(a);
			break;
		case CTA_PROTO_DST_PORT:
			if (mnl_attr_get_payload_len(a) >= 2) {
				t->dport = ntohs(mnl_attr_get_u16(a));
				t->have_ports = true;
			}
			break;
		}
	}
}

/* Keep entry @orig (its original-direction tuple attribute) and @zone for
 * the deletes; full at CTCUT_MAX (the rest are left). */
static void hit_add(struct dump_ctx *c, const struct nlattr *orig, const struct nlattr *zone)
{
	struct hit *h;

	if (c->n_hits == CTCUT_MAX)
		return;
	h = &c->hits[c->n_hits++];
	h->len = orig->nla_len;
	memcpy(h->tuple, orig, orig->nla_len);
	h->zone = zone && mnl_attr_get_payload_len(zone) >= 2;
	if (h->zone)
		h->zone_be = mnl_attr_get_u16(zone);
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	const struct nlattr *a, *orig = NULL, *zone = NULL;
	struct tuple t = { 0 };

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_ORIG)
			orig = a;
		else if (mnl_attr_get_type(a) == CTA_ZONE)
			zone = a;
	}
	if (!orig || orig->nla_len > CTCUT_TUPLE_MAX)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(a, orig) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_IP)
			parse_ip(a, &t);
		else if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO)
			parse_proto(a, &t);
	}
	if (!addr_equal(&t.s, c->src))
		return MNL_CB_OK;
	if (c->all) {
		hit_add(c, orig, zone);
		return MNL_CB_OK;
	}
	if (!t.have_ports)
		return MNL_CB_OK;
	for (size_t i = 0; i < c->n; i++) {
		if (c->cut[i].proto != t.proto || c->cut[i].port != t.dport ||
		    !addr_equal(&c->cut[i].addr, &t.d))
			continue;
		hit_add(c, orig, zone);
		break;
	}
	return MNL_CB_OK;
}

/* Read replies to @seq until done (or the ack); Return: 0; -errno. */
static int ct_wait(struct mnl_socket *nl, char *buf, size_t sz, uint32_t seq, uint32_t portid,
		   mnl_cb_t cb, void *data)
{
	int fd = mnl_socket_get_fd(nl);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r;

		if (poll(&p, 1, CTCUT_WAIT_MS) <= 0)
			return -ETIMEDOUT;
		r = nlbuf_recv_run(fd, buf, sz, 0, seq, portid, cb, data);	/* EBADMSG: bad length */
		if (r <= 0)
			return r;
	}
}

static int ctcut_do(struct dump_ctx *cp);

int ctcut_run(const struct addr *src, const struct pinreg_cut *cut, size_t n)
{
	struct dump_ctx c = { .src = src, .cut = cut, .n = n };

	if (!src || (n && !cut))
		return -EINVAL;
	if (n == 0)
		return 0;
	return ctcut_do(&c);
}

int ctcut_source(const struct addr *src)
{
	struct dump_ctx c = { .src = src, .all = true };

	if (!src)
		return -EINVAL;
	return ctcut_do(&c);
}

static int ctcut_do(struct dump_ctx *cp)
{
	struct dump_ctx c = *cp;
	const struct addr *src = c.src;
	struct mnl_socket *nl = NULL;
	size_t bufsz = 32768;	/* one dump skb (libmnl's MNL_SOCKET_DUMP_SIZE) */
	char *buf = NULL;
	uint32_t portid, seq = (uint32_t)time(NULL);
	int r = 0, deleted = 0, busy = 0;

	if (src->family != AF_INET && src->family != AF_INET6)
		return -EINVAL;
	buf = malloc(bufsz);
	c.hits = calloc(CTCUT_MAX, sizeof(*c.hits));
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!buf || !c.hits || !nl) {
		r = nl ? -ENOMEM : -errno;
		goto out;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	{
		struct nlmsghdr *nlh = ct_put_request(buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP,
					      (uint8_t)src->family, ++seq);

		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
			r = -errno;
			goto out;
		}
		r = ct_wait(nl, buf, bufsz, seq, portid, dump_cb, &c);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < c.n_hits; i++) {
		struct nlmsghdr *nlh = ct_put_request(buf, IPCTNL_MSG_CT_DELETE, NLM_F_ACK,
					      (uint8_t)src->family, ++seq);
		void *tail = mnl_nlmsg_get_payload_tail(nlh);

		memcpy(tail, c.hits[i].tuple, c.hits[i].len);
		nlh->nlmsg_len += MNL_ALIGN(c.hits[i].len);
		if (c.hits[i].zone)
			mnl_attr_put_u16(nlh, CTA_ZONE, c.hits[i].zone_be);
		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
			continue;
		/* -ENOENT: it ended by itself meanwhile. */
		r = ct_wait(nl, buf, bufsz, seq, portid, NULL, NULL);
		deleted += r == 0;
		busy += r == -EBUSY;
	}
	r = busy ? -EBUSY : deleted;
out:
	if (nl)
		mnl_socket_close(nl);
	free(c.hits);
	free(buf);
	return r;
}
