/*
 * snirst - the refused segment as a RST toward the server.  See rst.h.
 * Only the fixed headers are written: an IPv4 header without options, an
 * IPv6 header whose next header is TCP, a 20-byte TCP header.
 */
#include "netd/sni/rst.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "netd/sni/flow.h"

uint32_t snirst_csum(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (i < len)
		sum += (uint32_t)p[i] << 8;	/* an odd last byte, padded with zero */
	return sum;
}

uint16_t snirst_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

int snirst_build(const uint8_t *ip, size_t len, uint32_t seq, uint8_t out[SNIRST_MAX])
{
	struct sniflow_pkt p;
	uint8_t *th;
	uint32_t sum;
	size_t hl;
	int r;

	if ((r = sniflow_pkt_parse(ip, len, &p)) < 0)
		return r;
	if (p.syn || p.rst)
		return -EINVAL;
	memset(out, 0, SNIRST_MAX);
	if (p.src.family == AF_INET) {
		hl = 20;
		out[0] = 0x45;
		out[1] = ip[1];		/* TOS */
		put16(out + 2, 40);
		memcpy(out + 4, ip + 4, 2);	/* ID */
		out[6] = ip[6] & 0x40;	/* DF; not a fragment (the parser said so) */
		out[8] = ip[8];		/* TTL, as the kernel already decremented it */
		out[9] = 6;
		memcpy(out + 12, ip + 12, 8);	/* source, destination */
		put16(out + 10, snirst_csum_fold(snirst_csum(0, out, 20)));
		sum = snirst_csum(0, out + 12, 8);	/* pseudo-header: addresses, */
	} else {
		hl = 40;
		memcpy(out, ip, 4);	/* version, traffic class, flow label */
		put16(out + 4, 20);
		out[6] = 6;
		out[7] = ip[7];		/* hop limit */
		memcpy(out + 8, ip + 8, 32);	/* source, destination */
		sum = snirst_csum(0, out + 8, 32);
	}
	th = out + hl;
	put16(th, p.sport);
	put16(th + 2, p.dport);
	put32(th + 4, seq);
	put32(th + 8, p.ack ? p.ack_seq : 0);
	th[12] = 5 << 4;
	th[13] = 0x04 | (p.ack ? 0x10 : 0);	/* RST, ACK if it had one */
	/* ... protocol and TCP length (the same sum for IPv4 and IPv6: RFC
	 * 8200 8.1's 32-bit length and next header add up alike). */
	sum += 6 + 20;
	put16(th + 16, snirst_csum_fold(snirst_csum(sum, th, 20)));
	return (int)(hl + 20);
}
