/*
 * fuzz_sniflow - the SNI check's flow table (netd/sni/flow.c) driven by an
 * arbitrary sequence of segments from sandboxes and servers, verdicts and
 * sweeps: the state a sandbox's packets reach netd with.  Each record is
 * 8 bytes (op, port, sequence offset (2), length, flags, owner, ms) and the
 * record's payload bytes follow it.  Asserts beyond the sanitizers: the
 * table never holds more than SNIFLOW_MAX flows nor an owner more than
 * SNIFLOW_OPEN_PER_OWNER under check; a result carries a name only when it
 * says it found one; SNIFLOW_CONFIRMED comes from replies only and is
 * followed by SNIFLOW_ACCEPTED for that flow; a sweep past every deadline
 * empties the table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netd/sni/flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OWNERS 4
#define ISN 0xfffffc00u		/* sequence numbers wrap */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sniflow_tab *t;
	uint64_t now = 0;
	size_t i = 0;

	if (sniflow_new(OWNERS, &t) < 0)
		return 0;
	while (i + 8 <= size) {
		const uint8_t *r = data + i;
		struct sniflow_pkt p = { .sport = (uint16_t)(1000 + r[1] % 8), .dport = 443 };
		struct sni_result res = { .status = SNI_MORE };
		uint32_t owner = r[6] % (OWNERS + 1);	/* OWNERS: out of range */
		enum sniflow_step s;
		size_t len = r[4];

		i += 8;
		if (len > size - i)
			len = size - i;
		p.payload = data + i;
		p.len = len;
		i += len;
		p.src.family = p.dst.family = AF_INET;
		p.src.a[0] = 10;
		p.src.a[3] = (uint8_t)(2 + owner);
		p.dst.a[0] = 192;
		p.dst.a[3] = 50;
		p.syn = r[5] & 1;
		p.ack = r[5] & 2;
		p.rst = r[5] & 4;
		p.fin = r[5] & 8;
		p.urg = r[5] & 16;
		p.odd_opt = r[5] & 32;
		p.seq = p.syn ? ISN : ISN + 1 + (uint32_t)(r[2] << 8 | r[3]);
		p.ack_seq = p.seq;
		now += r[7];
		switch (r[0] % 4) {
		case 0:
			s = sniflow_packet(t, &p, owner, now, 5000, &res);
			if (s == SNIFLOW_CONFIRMED)
				abort();
			if (res.name[0] && res.status != SNI_NAME && res.status != SNI_ECH)
				abort();
			break;
		case 1: {
			struct sniflow_pkt q = p;

			q.src = p.dst;
			q.dst = p.src;
			q.sport = p.dport;
			q.dport = p.sport;
			q.payload = NULL;
			q.len = 0;
			q.ack_seq = ISN + 1 + (uint32_t)(r[2] << 8 | r[3]) * 8;
			s = sniflow_reply(t, &q, now);
			if (s == SNIFLOW_CONFIRMED && sniflow_reply(t, &q, now) != SNIFLOW_ACCEPTED)
				abort();
			break;
		}
		case 2:
			sniflow_settle(t, &p, r[5] & 64, now);
			break;
		default:
			sniflow_sweep(t, now, 5000);
			break;
		}
		if (sniflow_count(t) > SNIFLOW_MAX)
			abort();
		for (uint32_t o = 0; o < OWNERS; o++)
			if (sniflow_open_count(t, o) > SNIFLOW_OPEN_PER_OWNER)
				abort();
	}
	sniflow_sweep(t, now + SNIFLOW_KEEP_MS + 5000, 5000);
	if (sniflow_count(t) != 0)
		abort();
	for (uint32_t o = 0; o < OWNERS; o++)
		if (sniflow_open_count(t, o) != 0)
			abort();
	sniflow_free(t);
	return 0;
}
