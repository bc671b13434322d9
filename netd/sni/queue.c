/*
 * sniq - nfnetlink_queue for the SNI check.  See queue.h.  One netlink
 * socket per queue; messages built with libnetfilter_queue's nlmsg helpers
 * (the libmnl flavour: no libnfnetlink handle), parsed with libmnl.
 */
#include "netd/sni/queue.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netinet/in.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "netd/fw.h"
#include "common/nlbuf.h"

#define SNIQ_BUF (0xffff + 4096)	/* one whole packet + its attributes */
#define SNIQ_RCVBUF (4 * 1024 * 1024)

struct sniq {
	struct mnl_socket *nl;
	struct mnl_socket *ct;	/* ctnetlink, blocking: the done mark */
	unsigned int portid, ct_portid;
	uint32_t ct_seq;
	uint16_t num;
	char buf[SNIQ_BUF] __attribute__((aligned(8)));	/* nlmsghdr alignment */
};

/* Send one config message and wait for its ack. */
static int cfg_send(struct sniq *q, struct nlmsghdr *nlh)
{
	char ack[8192] __attribute__((aligned(8)));
	uint32_t seq = nlh->nlmsg_seq;
	int r;

	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* One datagram holds the ack; anything but the ack or an error (a
	 * bad length among them: -EBADMSG) is not taken for success. */
	r = nlbuf_recv_run(sniq_fd(q), ack, sizeof(ack), 0, seq, q->portid, NULL, NULL);
	return r > 0 ? -EBADMSG : r;
}

int sniq_open(uint16_t num, uint32_t maxlen, bool fail_open, struct sniq **ret)
{
	struct sniq *q = calloc(1, sizeof(*q));
	uint32_t flags = fail_open ? NFQA_CFG_F_FAIL_OPEN : 0;
	int one = 1, rcv = SNIQ_RCVBUF, r, fl;
	struct nlmsghdr *nlh;

	*ret = NULL;
	if (!q)
		return -ENOMEM;
	q->num = num;
	/* Blocking while configuring (each ack is read back), then non-blocking. */
	q->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!q->nl) {
		r = -errno;
		free(q);
		return r;
	}
	if (mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	q->portid = mnl_socket_get_portid(q->nl);
	/* Overruns are reported (ENOBUFS) rather than silent. */
	mnl_socket_setsockopt(q->nl, NETLINK_NO_ENOBUFS, &(int){ 0 }, sizeof(int));
	setsockopt(mnl_socket_get_fd(q->nl), SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	mnl_socket_setsockopt(q->nl, NETLINK_EXT_ACK, &one, sizeof(one));

	nlh = nfq_nlmsg_put(q->buf, NFQNL_MSG_CONFIG, num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_UNSPEC, NFQNL_CFG_CMD_BIND);
	if ((r = cfg_send(q, nlh)) < 0)
		goto fail_r;
	nlh = nfq_nlmsg_put(q->buf, NFQNL_MSG_CONFIG, num);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 0xffff);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, maxlen);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(flags));
	if ((r = cfg_send(q, nlh)) < 0)
		goto fail_r;
	q->ct = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!q->ct || mnl_socket_bind(q->ct, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	q->ct_portid = mnl_socket_get_portid(q->ct);
	fl = fcntl(sniq_fd(q), F_GETFL);
	if (fl < 0 || fcntl(sniq_fd(q), F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	*ret = q;
	return 0;
fail:
	r = -errno;
fail_r:
	if (q->ct)
		mnl_socket_close(q->ct);
	mnl_socket_close(q->nl);
	free(q);
	return r ? r : -EIO;
}

void sniq_close(struct sniq *q)
{
	if (!q)
		return;
	mnl_socket_close(q->nl);	/* the kernel unbinds a closed socket's queue */
	if (q->ct)
		mnl_socket_close(q->ct);
	free(q);
}

int sniq_fd(const struct sniq *q)
{
	return mnl_socket_get_fd(q->nl);
}

struct cb_arg {
	struct sniq *q;
	void (*cb)(void *ctx, struct sniq *q, const struct sniq_packet *p);
	void *ctx;
};

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cb_arg *arg = data;
	struct nlattr *attr[NFQA_MAX + 1] = { NULL };
	struct sniq_packet p = { 0 };
	const struct nfqnl_msg_packet_hdr *ph;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR] || !attr[NFQA_PAYLOAD])
		return MNL_CB_OK;	/* not a packet: nothing to give a verdict on */
	if (mnl_attr_get_payload_len(attr[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	p.id = ntohl(ph->packet_id);
	if (attr[NFQA_MARK])
		p.mark = ntohl(mnl_attr_get_u32(attr[NFQA_MARK]));
	p.ip = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
	p.len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	arg->cb(arg->ctx, arg->q, &p);
	return MNL_CB_OK;
}

int sniq_receive(struct sniq *q, unsigned int max_msgs,
		 void (*cb)(void *ctx, struct sniq *q, const struct sniq_packet *p), void *ctx)
{
	struct cb_arg arg = { .q = q, .cb = cb, .ctx = ctx };
	unsigned int n = 0;

	while (n < max_msgs) {
		ssize_t len = nlbuf_recv(sniq_fd(q), q->buf, sizeof(q->buf), MSG_DONTWAIT);

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			break;
		if (len < 0)
			return (int)len;	/* -ENOBUFS; -EMSGSIZE: over SNIQ_BUF */
		n++;
		/* portid 0: packets come from the kernel, not as a reply to us.
		 * An error message (a late verdict's ack) or a buffer with a bad
		 * length (-EBADMSG, not walked): nothing to give a verdict on. */
		(void)nlbuf_walk(q->buf, (size_t)len, 0, 0, msg_cb, &arg);
	}
	return (int)n;
}

/*
 * IPCTNL_MSG_CT_NEW without NLM_F_CREATE on @t's entry: an update.  ct mark
 * = (ct mark & ~(DONE | WATCH_*)) ^ @mark (ctnetlink_change_mark()): with
 * FW_SNI_DONE_CTMARK the done bit on, the watched bits off (forward stops
 * looking at its replies); with FW_SNI_DROP_CTMARK a refused flow's mark
 * (a QUIC flow's, which its chain drops; a TCP connection's before its
 * reset); the sandbox's accounting mark untouched.
 */
static int ct_mark_set(struct sniq *q, const struct sniq_tuple *t, uint32_t mark)
{
	char buf[512] __attribute__((aligned(8))), ack[4096] __attribute__((aligned(8)));
	int r;
	bool v4 = t->src.family == AF_INET;
	struct nlattr *orig, *ip, *proto;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++q->ct_seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = (uint8_t)t->src.family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	orig = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, addr_len(t->src.family), t->src.a);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, addr_len(t->dst.family), t->dst.a);
	mnl_attr_nest_end(nlh, ip);
	proto = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, t->proto ? t->proto : IPPROTO_TCP);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(t->sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(t->dport));
	mnl_attr_nest_end(nlh, proto);
	mnl_attr_nest_end(nlh, orig);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(mark));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(FW_SNI_CTMARK_BITS));
	if (mnl_socket_sendto(q->ct, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* One datagram, the ack or the error (-ENOENT: gone); no ack is no success. */
	r = nlbuf_recv_run(mnl_socket_get_fd(q->ct), ack, sizeof(ack), 0, q->ct_seq, q->ct_portid,
			   NULL, NULL);
	return r > 0 ? -EBADMSG : r;
}

int sniq_verdict(struct sniq *q, const struct sniq_packet *p, enum sniq_verdict v,
		 const struct sniq_tuple *t)
{
	char buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, q->num);
	int r = 0;

	switch (v) {
	case SNIQ_ACCEPT:
		nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_ACCEPT);
		break;
	case SNIQ_ACCEPT_DONE:
		/* The mark first, so no later packet of it is queued. */
		r = t ? ct_mark_set(q, t, FW_SNI_DONE_CTMARK) : -EINVAL;
		nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_ACCEPT);
		break;
	case SNIQ_DROP_MARK:
		/* An entry not confirmed yet (the flow's first datagram) is not
		 * found: -ENOENT; its next datagram comes here again. */
		r = t ? ct_mark_set(q, t, FW_SNI_DROP_CTMARK) : -EINVAL;
		nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_DROP);
		break;
	case SNIQ_DROP:
		nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_DROP);
		break;
	case SNIQ_RESET:
		if (p->mark & FW_SNI_RESET_MARK) {
			/* It came back with our mark: the reset rule is missing.
			 * Never loop; drop it. */
			nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_DROP);
			break;
		}
		/* Its entry marked refused first (its records say so), then
		 * through the hook again with the mark: the chain's first rule
		 * rejects it with a TCP reset. */
		r = t ? ct_mark_set(q, t, FW_SNI_DROP_CTMARK) : 0;
		nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_REPEAT);
		nfq_nlmsg_verdict_put_mark(nlh, p->mark | FW_SNI_RESET_MARK);
		break;
	}
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return r;
}

int sniq_verdict_replace(struct sniq *q, const struct sniq_packet *p, const uint8_t *ip,
			 size_t len, const struct sniq_tuple *t)
{
	char buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	int r;

	if (len > SNIQ_REPLACE_MAX)
		return -EMSGSIZE;
	r = ct_mark_set(q, t, FW_SNI_DROP_CTMARK);
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, q->num);
	nfq_nlmsg_verdict_put(nlh, (int)p->id, NF_ACCEPT);
	/* NFQA_PAYLOAD with the verdict: the kernel puts these bytes in the
	 * packet's place (nfqnl_mangle()) and it goes on from the hook as
	 * accepted: the rest of forward, then NAT as its connection has it. */
	nfq_nlmsg_verdict_put_pkt(nlh, ip, (uint32_t)len);
	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return r;
}
