/*
 * fuzz_snirst - netd/sni/rst.c: any bytes as the queued packet (the first
 * 4 are the sequence number to put in).  Asserts beyond the sanitizers: a
 * packet the parser refuses is refused with the same error; a SYN or RST is
 * refused; otherwise the output is 40 (IPv4) or 60 (IPv6) bytes, parses
 * back as a bare RST of the same addresses and ports with that sequence
 * number and no payload, and its checksums sum to 0xffff as a receiver
 * checks them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/addr.h"
#include "netd/sni/flow.h"
#include "netd/sni/rst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int sums_ok(const uint8_t *pseudo, size_t plen, const uint8_t *b, size_t len)
{
	uint32_t s = snirst_csum(snirst_csum(0, pseudo, plen), b, len);

	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sniflow_pkt in, out;
	uint8_t rst[SNIRST_MAX], ph[40] = { 0 };
	uint32_t seq;
	int r, pr;

	if (size < 4)
		return 0;
	seq = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
	data += 4;
	size -= 4;
	r = snirst_build(data, size, seq, rst);
	pr = sniflow_pkt_parse(data, size, &in);
	if (pr < 0) {
		CHECK(r == pr);
		return 0;
	}
	if (in.syn || in.rst) {
		CHECK(r == -EINVAL);
		return 0;
	}
	CHECK(r == (in.src.family == AF_INET ? 40 : 60));
	CHECK(sniflow_pkt_parse(rst, (size_t)r, &out) == 0);
	CHECK(out.rst && !out.syn && !out.fin && !out.urg && !out.odd_opt && out.len == 0);
	CHECK(out.ack == in.ack && (!in.ack || out.ack_seq == in.ack_seq));
	CHECK(out.seq == seq && out.sport == in.sport && out.dport == in.dport);
	CHECK(addr_equal(&out.src, &in.src) && addr_equal(&out.dst, &in.dst));
	if (r == 40) {
		CHECK(sums_ok(NULL, 0, rst, 20));
		memcpy(ph, rst + 12, 8);
		ph[9] = 6;
		ph[11] = 20;
		CHECK(sums_ok(ph, 12, rst + 20, 20));
	} else {
		memcpy(ph, rst + 8, 32);
		ph[35] = 20;
		ph[39] = 6;
		CHECK(sums_ok(ph, 40, rst + 40, 20));
	}
	return 0;
}
