/*
 * fuzz_sniq - the SNI check's nfqueue receive path on arbitrary bytes: one
 * recv() buffer walked by nlbuf_walk() with netd/sni/queue.c's msg_cb(),
 * as sniq_receive() walks it (the packet header, the mark and the payload
 * attributes of NFQNL_MSG_PACKET, libnetfilter_queue's nfq_nlmsg_parse()).
 * msg_cb() is static, so this harness includes the file (as fuzz_tc
 * includes shape.c).
 *
 * The buffer is as nlbuf_recv() leaves it: the datagram, then zeros to
 * its next 4-byte boundary (libmnl reads a last message's attributes up
 * to its aligned end; this harness found that, common/nlbuf.c says it).
 *
 * Asserts: every packet handed on lies inside that buffer (its payload
 * pointer and length), and no more packets are handed on than the buffer
 * holds netlink headers.
 */
#include "netd/sni/queue.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	const uint8_t *lo, *hi;
	size_t n;
};

static void on_packet(void *ctx, struct sniq *q, const struct sniq_packet *p)
{
	struct seen *s = ctx;

	(void)q;
	if (p->len && (p->ip < s->lo || p->ip + p->len > s->hi || p->ip + p->len < p->ip))
		abort();
	s->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A recv() buffer is aligned (sniq's is): so is the copy. */
	size_t padded = NLMSG_ALIGN(size);
	uint8_t *buf = aligned_alloc(8, padded ? (padded + 7) & ~(size_t)7 : 8);
	struct seen s;
	struct cb_arg arg = { .q = NULL, .cb = on_packet, .ctx = &s };

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(buf + size, 0, padded - size);	/* as nlbuf_recv() does */
	s = (struct seen){ .lo = buf, .hi = buf + padded };
	(void)nlbuf_walk(buf, size, 0, 0, msg_cb, &arg);
	if (s.n > size / sizeof(struct nlmsghdr))
		abort();
	free(buf);
	return 0;
}
