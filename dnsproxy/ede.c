/*
 * ede - RFC 8914 Extended DNS Error options on denied answers.  The answer
 * itself is wire_build_response()'s; this appends one option to the OPT
 * RR it ends with, so the DNS codec stays the one place a header or a
 * question is written.
 */
#include "dnsproxy/ede.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/reason.h"

#define OPT_RR_LEN 11	/* root owner, TYPE, CLASS, TTL, RDLEN (RFC 6891 6.1.2) */

char *ede_policy_text(char *buf, size_t sz, const char *reason)
{
	int head;

	if (sz > EDE_TEXT_MAX + 1)
		sz = EDE_TEXT_MAX + 1;
	/* Not the policy's name: that is the operator's (it may name a customer
	 * or a project); the sandbox learns why, the audit record says which. */
	head = snprintf(buf, sz, "netd: blocked by the sandbox's policy: ");
	if (!reason)
		reason = reason_dns_name(REASON_DNS_NOT_IN_POLICY);
	/* The audit log's reason in words: "not-in-policy" -> "not in policy". */
	if (head >= 0 && (size_t)head < sz)
		snprintf(buf + head, sz - (size_t)head, "%s", reason);
	for (size_t n = 0; buf[n]; n++)
		if ((unsigned char)buf[n] < 0x20 || (unsigned char)buf[n] > 0x7e)
			buf[n] = '?';
		else if (head >= 0 && n >= (size_t)head && buf[n] == '-')
			buf[n] = ' ';
	return buf;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int ede_build_response(const uint8_t *query, size_t qlen, const struct wire_query *q,
		       uint8_t rcode, uint16_t info_code, const char *text, uint8_t *out,
		       size_t outmax)
{
	size_t tl = text ? strnlen(text, EDE_TEXT_MAX) : 0, len;
	int n = wire_build_response(query, qlen, q, rcode, false, out, outmax);
	uint8_t *opt;

	if (n < 0 || !q->has_opt)
		return n;
	len = (size_t)n;
	/* wire_build_response() ends with our OPT RR and no options: check,
	 * rather than trust, that layout before extending its RDATA. */
	if (len < WIRE_HDR_LEN + OPT_RR_LEN)
		return -EINVAL;
	opt = out + len - OPT_RR_LEN;
	if (opt[0] != 0 || opt[1] != 0 || opt[2] != WIRE_TYPE_OPT || opt[9] != 0 || opt[10] != 0)
		return -EINVAL;
	if (len + 6 + tl > outmax)
		return -ENOBUFS;
	put16(opt + 9, (uint16_t)(6 + tl));		/* RDLEN */
	put16(out + len, EDE_OPTION_CODE);
	put16(out + len + 2, (uint16_t)(2 + tl));	/* OPTION-LENGTH */
	put16(out + len + 4, info_code);
	for (size_t i = 0; i < tl; i++)		/* EXTRA-TEXT: UTF-8; we send ASCII */
		out[len + 6 + i] = (unsigned char)text[i] >= 0x20 && (unsigned char)text[i] < 0x7f
				   ? (uint8_t)text[i] : '?';
	return (int)(len + 6 + tl);
}
