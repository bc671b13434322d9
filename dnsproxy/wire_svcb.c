/*
 * wire_svcb - the SVCB/HTTPS RDATA validator (RFC 9460): the rules under
 * which "clients MUST consider an RR malformed" (2.2) and the value
 * formats of the keys netd knows (7.1-7.4).  Pure, over the RDATA bytes
 * alone (TargetName may not be compressed, so the RDATA is self-contained);
 * wire.c collects the address hints once the RDATA passed.
 */
#include "dnsproxy/wire.h"

#include <errno.h>

#define SVC_KEY_MANDATORY 0	/* RFC 9460 14.3.2 */
#define SVC_KEY_ALPN      1
#define SVC_KEY_NODEFALPN 2
#define SVC_KEY_PORT      3
#define SVC_KEY_INVALID   65535

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Is @key among the SvcParams in [@pos, @end) (already walked)? */
static bool svc_has_key(const uint8_t *b, size_t pos, size_t end, uint16_t key)
{
	while (end - pos >= 4) {
		if (get16(b + pos) == key)
			return true;
		pos += 4u + get16(b + pos + 2);
	}
	return false;
}

/*
 * svc_value_ok() - the SvcParamValue of @key at @v has its key's format
 * (2.2: else malformed): mandatory a non-empty, strictly increasing list
 * of keys without itself, each present in the RR (7.2); alpn non-empty
 * length-prefixed ids filling the value, no-default-alpn empty (7.1);
 * port two octets (7.2); hints a non-empty multiple of the address size
 * (7.3).  Other keys are opaque.
 */
static bool svc_value_ok(const uint8_t *b, uint16_t key, size_t v, uint16_t vlen,
			 size_t params, size_t end)
{
	switch (key) {
	case SVC_KEY_MANDATORY:
		if (vlen == 0 || vlen % 2)
			return false;
		for (size_t i = 0; i < vlen; i += 2) {
			uint16_t k = get16(b + v + i);

			if (k == SVC_KEY_MANDATORY || (i && k <= get16(b + v + i - 2)) ||
			    !svc_has_key(b, params, end, k))
				return false;
		}
		return true;
	case SVC_KEY_ALPN:
		for (size_t i = 0; i < vlen; i += 1u + b[v + i])
			if (b[v + i] == 0 || vlen - i < 1u + b[v + i])
				return false;
		return vlen > 0;
	case SVC_KEY_NODEFALPN:
		return vlen == 0;
	case SVC_KEY_PORT:
		return vlen == 2;
	case WIRE_SVC_IPV4HINT:
		return vlen > 0 && vlen % 4 == 0;
	case WIRE_SVC_IPV6HINT:
		return vlen > 0 && vlen % 16 == 0;
	default:
		return true;
	}
}

int wire_svcb_check(const uint8_t *rdata, size_t rdlen)
{
	size_t pos = 2, params, total = 0;
	bool first = true;
	uint16_t prev = 0;

	if (rdlen < 3)
		return -EBADMSG;
	/* TargetName: uncompressed labels inside the RDATA, <= 255 octets. */
	for (;;) {
		uint8_t l = rdata[pos];

		if (l & 0xc0)
			return -EBADMSG;
		if (rdlen - pos < 1u + l || (total += 1u + l) > WIRE_NAME_MAX)
			return -EBADMSG;
		pos += 1u + l;
		if (l == 0)
			break;
		if (pos >= rdlen)
			return -EBADMSG;
	}
	/* SvcParams fill the RDATA exactly, keys strictly increasing (so
	 * each at most once), never the invalid key 65535. */
	params = pos;
	while (pos < rdlen) {
		uint16_t key, vlen;

		if (rdlen - pos < 4)
			return -EBADMSG;
		key = get16(rdata + pos);
		vlen = get16(rdata + pos + 2);
		if (rdlen - pos - 4 < vlen || (!first && key <= prev) || key == SVC_KEY_INVALID)
			return -EBADMSG;
		first = false;
		prev = key;
		pos += 4u + vlen;
	}
	/* Values once the key list is known good (mandatory looks keys up). */
	for (pos = params; pos < rdlen; pos += 4u + get16(rdata + pos + 2))
		if (!svc_value_ok(rdata, get16(rdata + pos), pos + 4, get16(rdata + pos + 2),
				  params, rdlen))
			return -EBADMSG;
	return (int)params;
}
