/*
 * test_nlbuf - netd's netlink receive path on hostile and unusual replies:
 * truncated messages (nlmsg_len past the datagram, shorter than a header,
 * over INT_MAX), a datagram larger than the buffer, a length that is not a
 * multiple of 4, a multi-part dump ending in NLMSG_DONE, NLMSG_ERROR as an
 * ack, as an error and cut short, and replies to another port id or
 * sequence number.  Each case is one datagram sent on a SOCK_SEQPACKET
 * socketpair (datagram boundaries and MSG_TRUNC as on a netlink socket)
 * and read back by nlbuf_recv_run() (common/nlbuf.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "common/nlbuf.h"

#define SEQ 1000u
#define PORTID 4242u
#define BUF_SIZE 8192

/* The path under test: every netlink receive of netd goes through it. */
static int recv_run(int fd, void *buf, size_t size, uint32_t seq, uint32_t portid,
		    mnl_cb_t cb, void *data)
{
	return nlbuf_recv_run(fd, buf, size, 0, seq, portid, cb, data);
}

struct world {
	int sv[2];
	uint32_t *buf;		/* what the reader reads into (4-byte aligned) */
	uint8_t out[65536] __attribute__((aligned(4)));
	size_t out_len;
	unsigned int seen;	/* data messages the callback saw */
	size_t seen_len;	/* the last one's nlmsg_len */
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	if (!w || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w->sv) < 0)
		return -1;
	w->buf = malloc(BUF_SIZE);
	*state = w;
	return w->buf ? 0 : -1;
}

static int teardown(void **state)
{
	struct world *w = *state;

	close(w->sv[0]);
	close(w->sv[1]);
	free(w->buf);
	free(w);
	return 0;
}

/* Append a message of @type with @payload_len bytes of payload (zeros); its
 * nlmsg_len says @claim if non-zero.  Return: the header, for tweaks. */
static struct nlmsghdr *put(struct world *w, uint16_t type, uint16_t flags, uint32_t seq,
			    uint32_t portid, size_t payload_len, uint32_t claim)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(w->out + w->out_len);
	size_t len = NLMSG_HDRLEN + payload_len;

	assert_true(w->out_len + NLMSG_ALIGN(len) <= sizeof(w->out));
	memset(nlh, 0, NLMSG_ALIGN(len));
	nlh->nlmsg_len = claim ? claim : (uint32_t)len;
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = portid;
	w->out_len += NLMSG_ALIGN(len);
	return nlh;
}

static void put_err(struct world *w, int error, uint32_t seq, uint32_t portid)
{
	struct nlmsghdr *nlh = put(w, NLMSG_ERROR, 0, seq, portid, sizeof(struct nlmsgerr), 0);
	struct nlmsgerr *e = NLMSG_DATA(nlh);

	e->error = error;
}

/* Send what was put as one datagram of @len bytes (0: all of it). */
static void send_dgram(struct world *w, size_t len)
{
	assert_int_equal(send(w->sv[1], w->out, len ? len : w->out_len, 0),
			 (ssize_t)(len ? len : w->out_len));
	w->out_len = 0;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct world *w = data;

	w->seen++;
	w->seen_len = nlh->nlmsg_len;
	return MNL_CB_OK;
}

static int run(struct world *w)
{
	return recv_run(w->sv[0], w->buf, BUF_SIZE, SEQ, PORTID, data_cb, w);
}

/* nlmsg_len says more than the datagram holds: not "wait for more". */
static void test_len_past_end(void **state)
{
	struct world *w = *state;

	put(w, 16, 0, SEQ, PORTID, 16, 200);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EBADMSG);
	assert_int_equal(w->seen, 0);
}

/* nlmsg_len shorter than a header: malformed, not skipped. */
static void test_len_below_header(void **state)
{
	struct world *w = *state;

	put(w, 16, 0, SEQ, PORTID, 16, 8);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EBADMSG);
	assert_int_equal(w->seen, 0);
}

/* A good message, then one cut off by the end of the datagram. */
static void test_second_cut(void **state)
{
	struct world *w = *state;

	put(w, 16, 0, SEQ, PORTID, 4, 0);
	put(w, 16, 0, SEQ, PORTID, 64, 0);
	send_dgram(w, NLMSG_ALIGN(NLMSG_LENGTH(4)) + NLMSG_LENGTH(8));
	assert_int_equal(run(w), -EBADMSG);
}

/* A datagram longer than the buffer is reported, not cut or walked. */
static void test_oversized(void **state)
{
	struct world *w = *state;
	int sz = 1 << 20;

	setsockopt(w->sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	put(w, 16, 0, SEQ, PORTID, BUF_SIZE * 2, 0);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EMSGSIZE);
	assert_int_equal(w->seen, 0);
	/* The datagram is gone: the next one reads cleanly. */
	put_err(w, 0, SEQ, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), 0);
}

/* nlmsg_len 21 (not a multiple of 4): padded to 24, the ACK after it read. */
static void test_unaligned(void **state)
{
	struct world *w = *state;

	put(w, 16, 0, SEQ, PORTID, 5, 0);
	put_err(w, 0, SEQ, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), 0);
	assert_int_equal(w->seen, 1);
	assert_int_equal(w->seen_len, 21);

	/* The same message last, with no padding after it. */
	put(w, 16, 0, SEQ, PORTID, 5, 0);
	send_dgram(w, 21);
	assert_int_equal(run(w), 1);
	assert_int_equal(w->seen, 2);
}

/* A last message of 21 bytes: the 3 bytes to its aligned end (what libmnl's
 * attribute walk reads) are zeros, not an earlier datagram's bytes. */
static void test_unaligned_padding(void **state)
{
	struct world *w = *state;
	const uint8_t *b = (const uint8_t *)w->buf;

	memset(w->buf, 0xff, BUF_SIZE);
	put(w, 16, 0, SEQ, PORTID, 5, 0);
	send_dgram(w, 21);
	assert_int_equal(nlbuf_recv(w->sv[0], w->buf, BUF_SIZE, 0), 21);
	assert_int_equal(b[20], 0);	/* the message's own last byte */
	assert_int_equal(b[21], 0);
	assert_int_equal(b[22], 0);
	assert_int_equal(b[23], 0);
	assert_int_equal(b[24], 0xff);	/* nothing past the aligned end */
}

/* A dump: two datagrams of NLM_F_MULTI parts, then NLMSG_DONE. */
static void test_multipart_done(void **state)
{
	struct world *w = *state;

	put(w, 16, NLM_F_MULTI, SEQ, PORTID, 8, 0);
	put(w, 16, NLM_F_MULTI, SEQ, PORTID, 8, 0);
	send_dgram(w, 0);
	assert_int_equal(run(w), 1);
	assert_int_equal(w->seen, 2);
	put(w, 16, NLM_F_MULTI, SEQ, PORTID, 8, 0);
	put(w, NLMSG_DONE, NLM_F_MULTI, SEQ, PORTID, 4, 0);
	send_dgram(w, 0);
	assert_int_equal(run(w), 0);
	assert_int_equal(w->seen, 3);
}

/* NLMSG_ERROR: error 0 is the ACK; otherwise the kernel's -errno. */
static void test_error_and_ack(void **state)
{
	struct world *w = *state;

	put_err(w, 0, SEQ, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), 0);
	put_err(w, -EEXIST, SEQ, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EEXIST);
	/* An error that is no errno (the kernel's are 1..4095). */
	put_err(w, -100000, SEQ, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EBADMSG);
	/* An NLMSG_ERROR too short for its struct nlmsgerr. */
	put(w, NLMSG_ERROR, 0, SEQ, PORTID, 2, 0);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EBADMSG);
}

/* A reply to another socket or request is not taken for ours. */
static void test_other_portid_seq(void **state)
{
	struct world *w = *state;

	put_err(w, 0, SEQ, PORTID + 1);
	send_dgram(w, 0);
	assert_int_equal(run(w), -ESRCH);	/* libmnl's codes: ESRCH port id */
	put_err(w, 0, SEQ - 1, PORTID);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EPROTO);	/* EPROTO sequence number */
	/* A multicast reader (seq 0, portid 0) takes anything. */
	put(w, 16, 0, 77, 0, 4, 0);
	send_dgram(w, 0);
	assert_int_equal(recv_run(w->sv[0], w->buf, BUF_SIZE, 0, 0, data_cb, w), 1);
	assert_int_equal(w->seen, 1);
}

/* nlmsg_len over INT_MAX: libmnl's int compare takes it as negative and
 * steps outside the buffer (common/nlbuf.h).  Last: on the old path ASan
 * stops the binary here. */
static void test_len_huge(void **state)
{
	struct world *w = *state;

	put(w, 16, 0, SEQ, PORTID, 16, 0xfffffff0u);
	send_dgram(w, 0);
	assert_int_equal(run(w), -EBADMSG);
	assert_int_equal(w->seen, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_len_past_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_len_below_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unaligned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unaligned_padding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multipart_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_and_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_portid_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_len_huge, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
