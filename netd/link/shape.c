/*
 * shape - a sandbox's bandwidth limits, sent through rtnetlink; see
 * shape.h.  The messages are built by tc.c (pure); this file only orders
 * them, creates and deletes the IFB, and reads the counters back.
 */
#include "netd/link/shape.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "netd/link/rtnl.h"

int shape_ifb_name(uint32_t slot, char *buf, size_t sz)
{
	if (slot > 0xfffff || sz < 9)
		return -EINVAL;
	snprintf(buf, sz, SHAPE_IFB_PREFIX "%05x", slot);
	return 0;
}

bool shape_is_ifb_name(const char *name)
{
	return strlen(name) == 8 && strncmp(name, SHAPE_IFB_PREFIX, 3) == 0 &&
	       strspn(name + 3, "0123456789abcdef") == 5;
}

/* Send @nlh; an error in @ok_a or @ok_b counts as done.  Return: 0; -errno. */
static int talk_ok(struct rtnl *nl, struct nlmsghdr *nlh, int ok_a, int ok_b)
{
	int r = rtnl_talk(nl, nlh, NULL, NULL);

	return r == ok_a || r == ok_b ? 0 : r;
}

/* HTB, its class and its queue on @s->ifindex; a second run changes rate and queue in place. */
static int shaper_put(struct rtnl *nl, const struct tc_shaper *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int r;

	r = talk_ok(nl, tc_htb_qdisc(buf, s->ifindex), -EEXIST, 0);
	if (r == 0)
		r = rtnl_talk(nl, tc_htb_class(buf, s), NULL, NULL);
	if (r == 0)
		r = rtnl_talk(nl, tc_leaf_qdisc(buf, s), NULL, NULL);
	return r;
}

static int link_set_up(struct rtnl *nl, int index)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh = rtnl_link_req(buf, RTM_SETLINK, 0, index, NULL, &ifi);

	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return rtnl_talk(nl, nlh, NULL, NULL);
}

/*
 * The IFB @name: made (down, without an IPv6 link-local address: netd/link/link.c
 * says why thousands of those cost every create), then up; *@made says it
 * was.  Return: its index; -errno.
 */
static int ifb_get(struct rtnl *nl, const char *name, bool *made)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlattr *li, *spec, *inet6;
	struct nlmsghdr *nlh;
	int idx = rtnl_ifindex(nl, name), r;

	*made = false;
	if (idx != -ENODEV)
		return idx;
	*made = true;
	nlh = rtnl_link_req(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, name, NULL);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "ifb");
	mnl_attr_nest_end(nlh, li);
	r = rtnl_talk(nl, nlh, NULL, NULL);
	if (r < 0)
		return r;
	idx = rtnl_ifindex(nl, name);
	if (idx < 0)
		return idx;
	nlh = rtnl_link_req(buf, RTM_SETLINK, 0, idx, NULL, NULL);
	spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	inet6 = mnl_attr_nest_start(nlh, AF_INET6);
	mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
	mnl_attr_nest_end(nlh, inet6);
	mnl_attr_nest_end(nlh, spec);
	r = talk_ok(nl, nlh, -EAFNOSUPPORT, 0);	/* a host without IPv6 */
	if (r == 0)
		r = link_set_up(nl, idx);
	return r < 0 ? r : idx;
}

static int ifb_del(struct rtnl *nl, const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	return talk_ok(nl, rtnl_link_req(buf, RTM_DELLINK, 0, 0, name, NULL), -ENODEV, 0);
}

/* From the sandbox: the IFB's shaper first, then the redirect to it. */
static int egress_put(struct rtnl *nl, struct shape_req *req)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct tc_shaper s;
	bool made;
	int r, ifb = ifb_get(nl, req->ifb, &made);

	if (ifb < 0)
		return ifb;
	req->ifb_index = ifb;
	s = tc_shaper_for(ifb, req->egress_bps);
	r = shaper_put(nl, &s);
	/* A new IFB is a new device: a redirect left from an older one (it was
	 * deleted behind netd's back) would send every upload nowhere. */
	if (r == 0 && made)
		r = talk_ok(nl, tc_ingress_del(buf, req->ifindex), -ENOENT, -EINVAL);
	if (r == 0)
		r = talk_ok(nl, tc_ingress_qdisc(buf, req->ifindex), -EEXIST, 0);
	if (r == 0)
		r = talk_ok(nl, tc_redirect_filter(buf, req->ifindex, ifb), -EEXIST, 0);
	return r;
}

/* No limit from the sandbox: the redirect goes first, then the IFB. */
static int egress_clear(struct rtnl *nl, struct shape_req *req)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int r = talk_ok(nl, tc_ingress_del(buf, req->ifindex), -ENOENT, -EINVAL);

	req->ifb_index = 0;
	return r < 0 ? r : ifb_del(nl, req->ifb);
}

int shape_set(struct shape_req *req)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct rtnl nl;
	int r;

	req->ifindex = req->ifb_index = 0;
	if (!req->ifname || !req->ifb || rtnl_ifname_check(req->ifb) < 0)
		return -EINVAL;
	r = rtnl_open(&nl, -1);
	if (r < 0)
		return r;
	r = rtnl_ifindex(&nl, req->ifname);
	if (r < 0)
		goto out;
	req->ifindex = r;
	if (req->ingress_bps) {
		struct tc_shaper s = tc_shaper_for(req->ifindex, req->ingress_bps);

		r = shaper_put(&nl, &s);
	} else {
		/* The device's own default comes back; none there is no error. */
		r = talk_ok(&nl, tc_root_del(buf, req->ifindex), -ENOENT, -EINVAL);
	}
	if (r == 0)
		r = req->egress_bps ? egress_put(&nl, req) : egress_clear(&nl, req);
out:
	rtnl_close(&nl);
	return r;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tc_qstats *q = data;

	return tc_qdisc_parse(nlh, q) == -EBADMSG ? MNL_CB_ERROR : MNL_CB_OK;
}

/* The root qdisc of @ifname, if it is our HTB.  Return: 1; 0 (none); -errno. */
static int root_of(struct rtnl *nl, const char *ifname, struct tc_qstats *q)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int idx = rtnl_ifindex(nl, ifname), r;

	memset(q, 0, sizeof(*q));
	if (idx == -ENODEV)
		return 0;
	if (idx < 0)
		return idx;
	r = rtnl_talk(nl, tc_root_get(buf, idx), stats_cb, q);
	if (r == -ENOENT || r == -EINVAL)
		return 0;
	if (r < 0)
		return r;
	return q->handle == TC_HTB_HANDLE && strcmp(q->kind, "htb") == 0;
}

int shape_get(const char *ifname, const char *ifb, struct shape_stats *out)
{
	struct rtnl nl;
	int r;

	memset(out, 0, sizeof(*out));
	r = rtnl_open(&nl, -1);
	if (r < 0)
		return r;
	r = root_of(&nl, ifname, &out->ingress);
	out->has_ingress = r > 0;
	if (r >= 0 && ifb) {
		r = root_of(&nl, ifb, &out->egress);
		out->has_egress = r > 0;
	}
	rtnl_close(&nl);
	return r < 0 ? r : 0;
}

struct dump_ctx {
	shape_dump_fn *fn;
	void *ctx;
	int n;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	struct tc_qstats q;

	if (tc_qdisc_parse(nlh, &q) < 0)
		return MNL_CB_OK;	/* not one of ours to read */
	if (q.parent == TC_H_ROOT && q.handle == TC_HTB_HANDLE && strcmp(q.kind, "htb") == 0) {
		c->fn(c->ctx, &q);
		c->n++;
	}
	return MNL_CB_OK;
}

int shape_dump(shape_dump_fn *fn, void *ctx)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct dump_ctx c = { .fn = fn, .ctx = ctx };
	struct rtnl nl;
	int r = rtnl_open(&nl, -1);

	if (r < 0)
		return r;
	/* A qdisc that came or went meanwhile makes the kernel mark the dump. */
	for (int i = 0; i < RTNL_DUMP_TRIES; i++) {
		c.n = 0;
		r = rtnl_talk(&nl, tc_qdisc_dump(buf), dump_cb, &c);
		if (r != -EINTR)
			break;
	}
	rtnl_close(&nl);
	return r < 0 ? r : c.n;
}

struct survey {
	struct shape_dev *dev;
	size_t n, cap;
	bool oom;
};

static int survey_link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct survey *sv = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		struct shape_dev *d;

		if (mnl_attr_get_type(a) != IFLA_IFNAME || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ||
		    mnl_attr_get_payload_len(a) > sizeof(d->name))
			continue;
		if (sv->n == sv->cap) {
			struct shape_dev *nd = reallocarray(sv->dev, sv->cap = sv->cap ? 2 * sv->cap : 256,
							    sizeof(*nd));

			if (!nd) {
				sv->oom = true;
				return MNL_CB_ERROR;
			}
			sv->dev = nd;
		}
		d = &sv->dev[sv->n++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", mnl_attr_get_str(a));
		d->ifindex = ifi->ifi_index;
	}
	return MNL_CB_OK;
}

static int dev_index_cmp(const void *a, const void *b)
{
	const struct shape_dev *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

static int dev_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct shape_dev *)a)->name, ((const struct shape_dev *)b)->name);
}

static int survey_qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct survey *sv = data;
	struct shape_dev key, *d;
	struct tc_qstats q;

	if (tc_qdisc_parse(nlh, &q) < 0)
		return MNL_CB_OK;
	key.ifindex = q.ifindex;
	d = sv->n ? bsearch(&key, sv->dev, sv->n, sizeof(*sv->dev), dev_index_cmp) : NULL;
	if (!d)
		return MNL_CB_OK;
	if (q.parent == TC_H_ROOT && q.handle == TC_HTB_HANDLE && strcmp(q.kind, "htb") == 0)
		d->htb_root = true;
	if (q.parent == TC_H_INGRESS && strcmp(q.kind, "ingress") == 0)
		d->ingress = true;
	return MNL_CB_OK;
}

/* One try: links, then qdiscs.  Return: count; -EINTR (a dump was interrupted); -errno. */
static int survey_once(struct rtnl *nl, struct survey *sv)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int r;

	sv->n = 0;
	nlh = rtnl_link_req(buf, RTM_GETLINK, NLM_F_DUMP, 0, NULL, NULL);
	r = rtnl_talk(nl, nlh, survey_link_cb, sv);
	if (r < 0)
		return sv->oom ? -ENOMEM : r;
	if (sv->n)
		qsort(sv->dev, sv->n, sizeof(*sv->dev), dev_index_cmp);
	r = rtnl_talk(nl, tc_qdisc_dump(buf), survey_qdisc_cb, sv);
	if (r < 0)
		return r;
	if (sv->n)
		qsort(sv->dev, sv->n, sizeof(*sv->dev), dev_name_cmp);
	return (int)sv->n;
}

int shape_survey(struct shape_dev **ret)
{
	struct survey sv = { 0 };
	struct rtnl nl;
	int r = rtnl_open(&nl, -1);

	*ret = NULL;
	if (r < 0)
		return r;
	/* Devices or qdiscs that came or went meanwhile: asked again. */
	for (int i = 0; i < RTNL_DUMP_TRIES; i++) {
		r = survey_once(&nl, &sv);
		if (r != -EINTR)
			break;
	}
	rtnl_close(&nl);
	if (r < 0) {
		free(sv.dev);
		return r;
	}
	*ret = sv.dev;
	return r;
}
