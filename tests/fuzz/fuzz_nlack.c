/*
 * fuzz_nlack - acks_parse() of netd/fw/nl.c, which reads the replies to a
 * batch (nf_tables acks and errors: NLMSG_ERROR messages) and decides its
 * outcome.  The input: three sequence numbers (the batch's first, its last
 * message, its END), then one recv() buffer.
 *
 * acks_parse() is static (it is only ever fed by the socket), so this
 * harness includes nl.c.  Asserts, against a reference walk of its own: a
 * buffer libmnl would misread is -EBADMSG; otherwise "acked" is exactly "an
 * error-0 reply to the last message", and the error kept is the one of the
 * lowest-numbered failed message of this batch (replies to other sequence
 * numbers are ignored); an error is always negative.
 */
#include "netd/fw/nl.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t seq[3];
	struct acks a = { 0 };
	bool want_acked = false;
	int want_err = 0;
	uint32_t want_seq = 0;
	char *buf;
	size_t len;

	if (size < sizeof(seq))
		return 0;
	memcpy(seq, data, sizeof(seq));
	a.seq0 = seq[0];
	a.seq_last = seq[1];
	a.seq_end = seq[2];
	len = size - sizeof(seq);
	buf = malloc(len ? len : 1);	/* aligned, and exactly @len bytes */
	if (!buf)
		return 0;
	memcpy(buf, data + sizeof(seq), len);
	acks_parse(&a, buf, len);
	if (nlbuf_check(buf, len) < 0) {
		if (a.err != -EBADMSG || a.acked)
			abort();
		free(buf);
		return 0;
	}
	/* The reference: walk the (checked) buffer by hand. */
	for (size_t off = 0; off + sizeof(struct nlmsghdr) <= len;) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + off);
		size_t step = NLMSG_ALIGN(h->nlmsg_len);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > len - off)
			break;
		if (h->nlmsg_type == NLMSG_ERROR &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr)) &&
		    h->nlmsg_seq >= a.seq0 && h->nlmsg_seq <= a.seq_end) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (e->error == 0 && h->nlmsg_seq == a.seq_last)
				want_acked = true;
			else if (e->error != 0 && (!want_err || h->nlmsg_seq < want_seq)) {
				want_err = e->error < 0 ? e->error : -e->error;
				want_seq = h->nlmsg_seq;
			}
		}
		if (step == 0 || step > len - off)
			break;
		off += step;
	}
	if (a.acked != want_acked || a.err != want_err || (want_err && a.err_seq != want_seq) ||
	    a.err > 0)
		abort();
	free(buf);
	return 0;
}
