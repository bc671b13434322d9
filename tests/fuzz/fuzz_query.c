/*
 * fuzz_query - wire_parse_query() on arbitrary bytes (what a sandbox may
 * send), then wire_build_response() from whatever it parsed, the way the
 * proxy answers (REFUSED/FORMERR/NOTIMP/TC/BADVERS), checking the response
 * is a response of the same ID, with an OPT exactly when the query had one.
 * And wire_build_query() (netd verify's queries) both ways: a parsed plain
 * name builds a query that parses back to the same question, and the input
 * taken as a name either is refused or builds a query that parses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* wire_build_query() on @data as a name: refused, or a query that parses back. */
static void build_own(const uint8_t *data, size_t size)
{
	uint8_t out[WIRE_HDR_LEN + WIRE_NAME_MAX + 4];
	char name[WIRE_NAME_STRLEN];
	size_t len = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
	struct wire_query q;
	int n;

	memcpy(name, data, len);
	name[len] = '\0';
	n = wire_build_query(out, sizeof(out), 0x4242, name, WIRE_TYPE_AAAA);
	if (n == -EINVAL || n == -EMSGSIZE)
		return;
	if (n < 0)
		abort();	/* the buffer always fits one question */
	if (wire_parse_query(out, (size_t)n, &q) != 0 || q.id != 0x4242 || q.flags != 0x0100 ||
	    q.qtype != WIRE_TYPE_AAAA || q.qclass != WIRE_CLASS_IN || q.question_end != (size_t)n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[WIRE_HDR_LEN + WIRE_NAME_MAX + 4 + 11];
	struct wire_query q;
	int r, n;

	if (size > WIRE_MSG_MAX)
		return 0;
	build_own(data, size);
	r = wire_parse_query(data, size, &q);
	if (r == -EPROTO)
		return 0;
	if (r == 0) {
		/* The presentation name is NUL-terminated and fits. */
		if (strlen(q.qname) >= WIRE_NAME_STRLEN || q.question_end > size ||
		    q.udp_size < WIRE_UDP_MIN)
			abort();
		/* A plain name round-trips through netd's own query builder. */
		if (q.qname_plain) {
			struct wire_query q2;

			n = wire_build_query(out, sizeof(out), q.id, q.qname, q.qtype);
			if (n < 0 || wire_parse_query(out, (size_t)n, &q2) != 0 || q2.id != q.id ||
			    q2.qtype != q.qtype || strcmp(q2.qname, q.qname) != 0)
				abort();
		}
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
	/* An EDNS query's answers carry an OPT (RFC 6891 7), whatever went
	 * wrong with it, so BADVERS can be said; NOTIMP has no RA. */
	if (q.has_opt != (out[11] == 1))
		abort();
	n = wire_build_response(data, size, &q, WIRE_RCODE_BADVERS, false, out, sizeof(out));
	if (q.has_opt) {
		if (n < WIRE_HDR_LEN + 11 || (out[3] & 0x0f) != 0 ||
		    memcmp(out + n - 11, "\0\0\x29", 3) != 0 || out[n - 11 + 5] != 1 ||
		    out[n - 11 + 6] != 0)
			abort();
	} else if (n != -EINVAL) {
		abort();
	}
	n = wire_build_response(data, size, &q, WIRE_RCODE_NOTIMP, false, out, sizeof(out));
	if (n < 0 || (out[3] & 0x80))
		abort();
	return 0;
}
