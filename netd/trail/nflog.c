/*
 * nflog - nfnetlink_log over libmnl; per-sandbox token buckets (common/tbucket.h).
 */
#include "netd/trail/nflog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>

#include "common/log.h"
#include "common/tbucket.h"
#include "common/nlbuf.h"

#define NFLOG_RCVBUF      (4u << 20)	/* bytes */
#define NFLOG_COPY_RANGE  128	/* bytes of each packet: the headers */
#define NFLOG_POLL_BATCH  1024

struct bucket {
	struct tbucket tb;	/* deny records: cfg.rate_per_s a second, cfg.burst deep */
	bool used;
	uint64_t suppressed;
};

struct nflog {
	struct nflog_config cfg;
	const struct nflog_ops *ops;
	void *ctx;
	struct mnl_socket *nl;
	uint32_t portid, seq;
	struct event *ev_read, *ev_flush;
	struct bucket *b;	/* NFLOG_MAX_SLOTS */
	struct nflog_stats st;
	char buf[1 << 16];
};

bool nflog_admit(struct nflog *n, uint32_t slot, uint64_t now_ms, uint64_t *ret_suppressed)
{
	struct bucket *b;

	if (slot >= NFLOG_MAX_SLOTS)
		return false;
	b = &n->b[slot];
	if (!b->used) {
		b->used = true;
		tbucket_init(&b->tb, n->cfg.burst, now_ms);
	}
	if (!tbucket_take(&b->tb, n->cfg.rate_per_s, n->cfg.burst, now_ms)) {
		b->suppressed++;
		n->st.suppressed++;
		return false;
	}
	*ret_suppressed = b->suppressed;
	b->suppressed = 0;
	return true;
}

void nflog_forget(struct nflog *n, uint32_t slot)
{
	if (n && slot < NFLOG_MAX_SLOTS)
		memset(&n->b[slot], 0, sizeof(n->b[slot]));
}

static void pkt_cb(const void *msg, size_t len, void *data)
{
	struct nflog *n = data;
	struct ct_logpkt p;
	int r = ct_parse_log(msg, len, &p);

	if (r < 0) {
		if (r == -EBADMSG)
			n->st.bad++;
		return;
	}
	if (strncmp(p.prefix, NFLOG_PREFIX, strlen(NFLOG_PREFIX)) != 0)
		return;
	n->st.packets++;
	n->ops->packet(n->ctx, &p, p.prefix + strlen(NFLOG_PREFIX));
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct nflog *n = arg;

	(void)what;
	for (int i = 0; i < NFLOG_POLL_BATCH; i++) {
		ssize_t len = nlbuf_recv(fd, n->buf, sizeof(n->buf), MSG_DONTWAIT);

		if (len == -EMSGSIZE) {
			n->st.bad++;	/* not read, as a bad length is not walked */
			continue;
		}
		if (len < 0) {
			if (len == -ENOBUFS) {
				/* Logged packets were dropped before reaching us: count, say so. */
				n->st.enobufs++;
				log_warn("nflog: receive buffer overrun (ENOBUFS, %llu so far): deny events lost",
					 (unsigned long long)n->st.enobufs);
				continue;
			}
			break;
		}
		if (ct_walk(n->buf, (size_t)len, 0, pkt_cb, n) == -EBADMSG)
			n->st.bad++;
	}
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	struct nflog *n = arg;

	(void)fd;
	(void)what;
	for (uint32_t s = 0; s < NFLOG_MAX_SLOTS; s++) {
		struct bucket *b = &n->b[s];

		if (b->used && b->suppressed) {
			uint64_t c = b->suppressed;

			b->suppressed = 0;
			n->ops->suppressed(n->ctx, s, c);
		}
	}
}

/* One NFULNL_MSG_CONFIG request with an ack. */
static int config_req(struct nflog *n, uint16_t family, uint16_t res_id,
		      void (*fill)(struct nlmsghdr *nlh, const void *arg), const void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	uint32_t seq = ++n->seq;
	int r;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = (uint8_t)family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(res_id);
	fill(nlh, arg);
	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do
		r = nlbuf_recv_run(mnl_socket_get_fd(n->nl), n->buf, sizeof(n->buf), 0, seq, n->portid,
				   NULL, NULL);
	while (r > 0);
	return r;
}

static void fill_bind(struct nlmsghdr *nlh, const void *arg)
{
	struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };

	(void)arg;
	mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
}

static void fill_mode(struct nlmsghdr *nlh, const void *arg)
{
	struct nfulnl_msg_config_mode mode = {
		.copy_range = htonl(NFLOG_COPY_RANGE),
		.copy_mode = NFULNL_COPY_PACKET,
	};

	(void)arg;
	mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(mode), &mode);
	/* Flush batches after 100 ms (the kernel default is 1 s). */
	mnl_attr_put_u32(nlh, NFULA_CFG_TIMEOUT, htonl(10));
}

int nflog_new(struct event_base *base, const struct nflog_config *cfg,
	      const struct nflog_ops *ops, void *ctx, struct nflog **ret)
{
	struct nflog *n = calloc(1, sizeof(*n));
	int sz = NFLOG_RCVBUF, r;
	struct timeval tv;

	if (!n)
		return -ENOMEM;
	n->cfg = *cfg;
	if (!n->cfg.rate_per_s)
		n->cfg.rate_per_s = 20;
	if (!n->cfg.burst)
		n->cfg.burst = 50;
	if (!n->cfg.flush_s)
		n->cfg.flush_s = 10;
	n->ops = ops;
	n->ctx = ctx;
	n->seq = (uint32_t)time(NULL);
	r = -EINVAL;
	if (!cfg->group)
		goto fail;
	r = -ENOMEM;
	n->b = calloc(NFLOG_MAX_SLOTS, sizeof(*n->b));
	if (!n->b)
		goto fail;
	n->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!n->nl || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto fail;
	}
	n->portid = mnl_socket_get_portid(n->nl);
	if (setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	r = config_req(n, AF_UNSPEC, cfg->group, fill_bind, NULL);
	if (r == 0)
		r = config_req(n, AF_UNSPEC, cfg->group, fill_mode, NULL);
	if (r < 0)
		goto fail;
	n->ev_read = event_new(base, mnl_socket_get_fd(n->nl), EV_READ | EV_PERSIST, on_read, n);
	n->ev_flush = event_new(base, -1, EV_PERSIST, on_flush, n);
	tv = (struct timeval){ .tv_sec = n->cfg.flush_s };
	if (!n->ev_read || !n->ev_flush || event_add(n->ev_read, NULL) < 0 ||
	    event_add(n->ev_flush, &tv) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = n;
	return 0;
fail:
	nflog_free(n);
	return r;
}

void nflog_free(struct nflog *n)
{
	if (!n)
		return;
	if (n->ev_read)
		event_free(n->ev_read);
	if (n->ev_flush)
		event_free(n->ev_flush);
	if (n->nl)
		mnl_socket_close(n->nl);	/* closing the socket unbinds the group */
	free(n->b);
	free(n);
}

void nflog_get_stats(const struct nflog *n, struct nflog_stats *out)
{
	if (n)
		*out = n->st;
	else
		memset(out, 0, sizeof(*out));
}
