/*
 * gw/h1_head - the HTTP/1.x engine's own strict reading of message heads and
 * chunked framing (RFC 9112), in front of http-parser, which is lenient
 * where request smuggling lives (netd/gw/h1.c says how the two agree), and
 * the writing of a request head the upstream gets.
 * Pure: bytes in, a verdict and a parsed view out; no allocation.
 */
#ifndef NETD_GW_H1_HEAD_H
#define NETD_GW_H1_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/gw/req.h"

#define GW_H1_HEAD_MAX (32 * 1024)	/* bytes of one head, start line to the empty line */
#define GW_H1_FIELDS_MAX 100	/* header fields of one head */

/* One head, parsed; every pointer points into the buffer parsed. */
struct gw_h1_head {
	const char *method, *target;	/* requests */
	size_t method_len, target_len;
	unsigned int status;	/* responses: 100-599 */
	unsigned int minor;	/* HTTP/1.minor: 0 or 1 */
	size_t line_len;	/* the start line, CRLF excluded */
	struct gw_hdr hdrs[GW_H1_FIELDS_MAX];	/* values without surrounding OWS */
	size_t n_hdrs;
	int host;		/* index of Host in hdrs, -1 if none */
	bool chunked;		/* Transfer-Encoding ending in chunked */
	bool has_length;	/* Content-Length given ... */
	uint64_t length;	/* ... this many bytes */
	bool upgrade;		/* an Upgrade field */
	bool upgrade_websocket;	/* ... naming only "websocket" */
	bool expect_continue;	/* Expect: 100-continue */
};

/*
 * gw_h1_head_end() - find the end of a head arriving byte by byte.
 * @buf, @len: the head's bytes so far (leading empty lines already
 * dropped); @from: where the previous call stopped (0 at first).
 * Return: the head's length (through the empty line's LF) once it is
 * complete; 0 if more is needed; -EBADMSG for a bare LF or CR (RFC 9112
 * 2.2: we never take a bare LF as a line end) or -EMSGSIZE past
 * GW_H1_HEAD_MAX bytes.
 */
long gw_h1_head_end(const char *buf, size_t len, size_t from);

/*
 * gw_h1_head_parse() - read a complete head strictly (RFC 9112 2-6).
 * @buf, @len: the head, ending in CRLF CRLF (gw_h1_head_end()); borrowed,
 * @out points into it.  @request: a request head (else a response).
 * Refused (-EBADMSG): a start line other than "METHOD SP target SP
 * HTTP/1.0|1.1" (HTTP/0.9, other versions, extra spaces) or "HTTP/1.x SP
 * 3DIGIT [SP reason]"; obs-fold (a line starting with SP or HTAB, RFC 9112
 * 5.2); a field name with non-token bytes or whitespace before the colon
 * (RFC 9112 5.1); a value with control bytes other than HTAB; more than
 * GW_H1_FIELDS_MAX fields; two Content-Length fields (even equal) or one
 * not all digits (RFC 9112 6.3); Content-Length with Transfer-Encoding; a
 * Transfer-Encoding whose last coding is not chunked, or that names chunked
 * twice, or comes twice, or is in an HTTP/1.0 message (RFC 9112 6.1); a
 * request without Host in HTTP/1.1 (RFC 9112 3.2) or with two Hosts.
 * Return: 0, @out filled; -EBADMSG.
 */
int gw_h1_head_parse(const char *buf, size_t len, bool request, struct gw_h1_head *out);

/*
 * gw_h1_head_forward() - request head @hd, parsed from @line (the buffer
 * whose first hd->line_len bytes are its request line), re-serialized for
 * the upstream into @out, or only measured (@out NULL): the request line as
 * received, each field as "name: value" in order, a field @res rewrites
 * given its credential's value wholesale; with a rewrite, the fields
 * gw_req_field_dropped() names left out and "Accept-Encoding: identity"
 * last (RFC 9110 12.5.3); then the empty line (RFC 9112 2.1).
 * Return: the bytes written (or @out would need).  @out holds a secret
 * when @res rewrites: the caller wipes it.
 */
size_t gw_h1_head_forward(const char *line, const struct gw_h1_head *hd,
			  const struct gw_req_result *res, char *out);

/* The state of a chunked body being scanned (RFC 9112 7.1); zero it to start. */
struct gw_h1_chunks {
	int state;
	uint64_t left;		/* data bytes left in the current chunk */
	unsigned int digits;	/* hex digits of the size so far */
	bool last;		/* the size was 0: trailers follow */
	size_t trailer_len;	/* bytes of trailer section so far */
};

/*
 * gw_h1_chunks_scan() - walk @len more bytes of a chunked body.  Strict:
 * CRLF after every size line and chunk (no bare LF or CR), at most 15 hex
 * digits, extensions of visible bytes, SP and HTAB only, trailer lines as
 * header lines (no obs-fold), the trailer section under GW_H1_HEAD_MAX.
 * @used: set to the bytes that belong to the body (all of @len unless it
 * ended).  Return: 1 the body ended after *@used bytes; 0 more needed;
 * -EBADMSG.
 */
int gw_h1_chunks_scan(struct gw_h1_chunks *c, const uint8_t *buf, size_t len, size_t *used);

#endif
