/*
 * fuzz_query - wire_parse_query() on arbitrary bytes (what a sandbox may
 * send), then wire_build_response() from whatever it parsed, the way the
 * proxy answers (REFUSED/FORMERR/NOTIMP/TC), checking the response parses
 * as a response of the same ID and size.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
	struct wire_query q;
	int r, n;

	if (size > WIRE_MSG_MAX)
		return 0;
	r = wire_parse_query(data, size, &q);
	if (r == -EPROTO)
		return 0;
	if (r == 0) {
		/* The presentation name is NUL-terminated and fits. */
		if (strlen(q.qname) >= WIRE_NAME_STRLEN || q.question_end > size ||
		    q.udp_size < WIRE_UDP_MIN)
			abort();
	} else if (r != -EBADMSG && r != -EMSGSIZE && r != -EOPNOTSUPP) {
		abort();
	}
	if (r == -EOPNOTSUPP)
		q.question_end = WIRE_HDR_LEN;
	n = wire_build_response(data, size, &q, r ? WIRE_RCODE_FORMERR : WIRE_RCODE_REFUSED,
				r == 0, out, sizeof(out));
	if (n < 0)
		abort();	/* the buffer always fits one question + OPT */
	if ((size_t)n < WIRE_HDR_LEN || memcmp(out, data, 2) != 0 || !(out[2] & 0x80))
		abort();
	return 0;
}
