/*
 * fuzz_answer - what an upstream may send back: wire_walk_answer() and
 * wire_cap_ttls() (on a copy, as the proxy does) on arbitrary bytes, once
 * against a fixed query ("www.example.com" A) and once against a query
 * rebuilt from the input's own question, so mutated answers get past the
 * question check.  Checks the invariants the pinning relies on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dnsproxy/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size, const struct wire_query *q)
{
	static uint8_t copy[WIRE_MSG_MAX];
	struct wire_addr addrs[64];
	struct wire_answer a;
	int r;

	r = wire_walk_answer(data, size, q, addrs, 64, &a);
	if (r == 0) {
		if (a.n_addrs > 64 || a.chain_len > WIRE_CHAIN_MAX)
			abort();
		for (size_t i = 0; i < a.n_addrs; i++) {
			if (addrs[i].addr.family != AF_INET && addrs[i].addr.family != AF_INET6)
				abort();
			if (addrs[i].ttl_s & 0x80000000u || addrs[i].ttl_s < a.min_ttl_s)
				abort();
		}
	} else if (r != -EBADMSG && r != -ELOOP && r != -ENOBUFS) {
		abort();
	}

	memcpy(copy, data, size);
	r = wire_cap_ttls(copy, size, 300);
	if (r == 0) {
		/* Idempotent, and the walk sees no TTL above the cap. */
		if (wire_cap_ttls(copy, size, 300) != 0)
			abort();
		if (wire_walk_answer(copy, size, q, addrs, 64, &a) == 0)
			for (size_t i = 0; i < a.n_addrs; i++)
				if (addrs[i].ttl_s > 300)
					abort();
	} else if (r != -EBADMSG) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t fixed[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
				       "\x03www\x07" "example\x03" "com\x00\x00\x01\x00\x01";
	static struct wire_query qfixed;
	static int have_fixed;
	struct wire_query q;
	uint8_t qbuf[WIRE_HDR_LEN + 2 * WIRE_NAME_MAX + 4];
	size_t n;

	if (size > WIRE_MSG_MAX)
		return 0;
	if (!have_fixed) {
		if (wire_parse_query(fixed, sizeof(fixed) - 1, &qfixed) != 0)
			abort();
		have_fixed = 1;
	}
	walk(data, size, &qfixed);

	/* A query from the input's question: header with QR=0 and counts
	 * 1/0/0/0, then the question bytes as far as they go. */
	if (size < WIRE_HDR_LEN)
		return 0;
	n = size < sizeof(qbuf) ? size : sizeof(qbuf);
	memcpy(qbuf, data, n);
	qbuf[2] &= 0x7f;
	qbuf[2] &= 0x87;	/* opcode QUERY */
	memcpy(qbuf + 4, "\x00\x01\x00\x00\x00\x00\x00\x00", 8);
	for (size_t len = WIRE_HDR_LEN + 5; len <= n; len++) {
		if (wire_parse_query(qbuf, len, &q) == 0) {
			walk(data, size, &q);
			break;
		}
	}
	return 0;
}
