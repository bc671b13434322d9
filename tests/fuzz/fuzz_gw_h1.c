/*
 * fuzz_gw_h1 - the gateway's HTTP/1.x engine (netd/gw/h1.c, h1_head.c,
 * req.c, rate.c): one engine with a fixed context and two credentials is
 * fed arbitrary splits of client and upstream bytes, EOFs and upstream
 * errors.  Input: byte 0 picks the connection (bit 0: the SNI is
 * openai's or github's host, each connection holding only its own
 * credential's value; bit 1: path rules; bit 2: a rate), then records of
 * [op, len, len bytes]: op & 3 = 0 client bytes, 1 upstream bytes, 2
 * client EOF, 3 upstream EOF / 502 / 504 (by op >> 2).
 * Beyond the sanitizers: the connection's secret never reaches the client
 * whole, even when the upstream echoes it (masked: netd/gw/scrub.h), the
 * other credential's only if the upstream sent it; a secret reaches the
 * upstream only whole, as the value of its credential's header line, in a request whose Host is that
 * credential's host (so a placeholder in any other header, or toward
 * another host, is never rewritten), and never the other credential's
 * secret; nothing is sent after GW_H1_DONE; statuses are 0 or 100-599;
 * GW_H1_READ_CLIENT clear means fewer bytes were taken.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netd/gw/h1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SECRET_A "Bearer sk-AAAA-real-secret-0001"
#define SECRET_B "token ghp-BBBB-real-secret-0002"

#define CAP (256 * 1024)	/* more than any 4 KiB input makes */

struct sink {
	uint8_t *buf;
	size_t len;
};

struct fz {
	struct gw_h1 *h;
	struct sink client_out, upstream_out, client_in, upstream_in;
	size_t records;
};

static void put(struct sink *s, const uint8_t *buf, size_t len)
{
	if (s->len + len > CAP)
		len = CAP - s->len;	/* the checks below see a prefix; good enough */
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
}

static int to_client(void *user, const uint8_t *buf, size_t len)
{
	struct fz *f = user;

	if (gw_h1_flags(f->h) & GW_H1_DONE)
		abort();
	put(&f->client_out, buf, len);
	return 0;
}

static int to_upstream(void *user, const uint8_t *buf, size_t len)
{
	struct fz *f = user;

	if (gw_h1_flags(f->h) & GW_H1_DONE)
		abort();
	put(&f->upstream_out, buf, len);
	return 0;
}

static void on_record(void *user, const struct gw_h1_record *r)
{
	struct fz *f = user;

	if (r->status && (r->status < 100 || r->status > 599))
		abort();
	if (!r->method || !r->host || !r->path)
		abort();
	f->records++;
}

static const struct gw_h1_ops ops = { to_client, to_upstream, on_record };

static bool has(const struct sink *s, const char *needle)
{
	return memmem(s->buf, s->len, needle, strlen(needle)) != NULL;
}

/*
 * Every @secret in what went upstream sits on a line "@header: @secret"
 * of a head whose Host line names @host.  The head is the bytes between
 * the empty lines around it (a head holds no empty line).
 */
static void check_upstream(const struct sink *s, const char *secret, const char *header,
			   const char *host)
{
	size_t sl = strlen(secret), hl = strlen(header);
	const uint8_t *p = s->buf, *end = s->buf + s->len;

	while ((p = memmem(p, (size_t)(end - p), secret, sl)) != NULL) {
		const uint8_t *line = p, *from = p, *to;
		char want[128];
		bool host_ok = false;

		while (line > s->buf && !(line[-1] == '\n' && line - 1 > s->buf && line[-2] == '\r'))
			line--;
		if ((size_t)(p - line) != hl + 2 || strncasecmp((const char *)line, header, hl) != 0 ||
		    memcmp(line + hl, ": ", 2) != 0 || end - p < (long)sl + 2 ||
		    memcmp(p + sl, "\r\n", 2) != 0)
			abort();
		while (from > s->buf && !(from - s->buf >= 4 && memcmp(from - 4, "\r\n\r\n", 4) == 0))
			from--;
		to = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (!to)
			abort();
		for (const uint8_t *q = from; q < to; q++) {
			size_t n;

			if (q != from && !(q - from >= 2 && q[-1] == '\n' && q[-2] == '\r'))
				continue;
			n = (size_t)snprintf(want, sizeof(want), "host: %s\r\n", host);
			if (strncasecmp((const char *)q, want, n) == 0)
				host_ok = true;
			n = (size_t)snprintf(want, sizeof(want), "host: %s:443\r\n", host);
			if (strncasecmp((const char *)q, want, n) == 0)
				host_ok = true;
		}
		if (!host_ok)
			abort();
		p += sl;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hosts_a[] = { "api.openai.com" };
	static const char *const hosts_b[] = { "api.github.com" };
	static const char *const paths[] = { "/v1/*", "/health" };
	static const char *const methods[] = { "GET", "POST", "HEAD" };
	static uint8_t bufs[4][CAP];
	struct gw_cred creds[2] = {
		{ .name = "openai", .header = "Authorization",
		  .placeholder = "netd-placeholder-openai-0001", .hosts = hosts_a, .n_hosts = 1 },
		{ .name = "github", .header = "X-Api-Key",
		  .placeholder = "netd-placeholder-github-0002", .hosts = hosts_b, .n_hosts = 1 },
	};
	struct gw_req_ctx ctx = { .sandbox = "sb1", .policy = "p", .rule = 0,
				  .creds = creds, .n_creds = 2,
				  .methods = methods, .n_methods = 3 };
	struct fz f = { 0 };
	struct gw_rate *rate = NULL;
	bool github;
	size_t i = 1;
	uint64_t now = 1000000000ull;

	if (size < 1)
		return 0;
	github = data[0] & 1;
	if (github) {
		ctx.sni = "api.github.com";
		creds[1].value = (const uint8_t *)SECRET_B;
		creds[1].value_len = strlen(SECRET_B);
		creds[1].secret_off = 6;	/* after "token " */
		creds[1].secret_len = strlen(SECRET_B) - 6;
	} else {
		ctx.sni = "api.openai.com";
		creds[0].value = (const uint8_t *)SECRET_A;
		creds[0].value_len = strlen(SECRET_A);
		creds[0].secret_off = 7;	/* after "Bearer " */
		creds[0].secret_len = strlen(SECRET_A) - 7;
	}
	if (data[0] & 2) {
		ctx.paths = paths;
		ctx.n_paths = 2;
	}
	if (data[0] & 4) {
		rate = gw_rate_new(4);
		ctx.rate_milli = 2000;
		ctx.burst = 2;
	}
	f.client_out.buf = bufs[0];
	f.upstream_out.buf = bufs[1];
	f.client_in.buf = bufs[2];
	f.upstream_in.buf = bufs[3];
	f.h = gw_h1_new(&ctx, 443, rate, &ops, &f);
	if (!f.h)
		abort();
	while (i < size) {
		uint8_t op = data[i++];
		size_t len = i < size ? data[i++] : 0;

		if (len > size - i)
			len = size - i;
		now += 1000000ull * (op >> 4);
		switch (op & 3) {
		case 0: {
			size_t took = gw_h1_from_client(f.h, data + i, len, now);

			if (took > len || (took < len && (gw_h1_flags(f.h) & GW_H1_READ_CLIENT)))
				abort();
			put(&f.client_in, data + i, took);
			break;
		}
		case 1:
			gw_h1_from_upstream(f.h, data + i, len, now);
			put(&f.upstream_in, data + i, len);
			break;
		case 2:
			gw_h1_client_eof(f.h, now);
			len = 0;
			break;
		case 3:
			if ((op >> 2) % 3 == 0)
				gw_h1_upstream_eof(f.h, now);
			else
				gw_h1_upstream_error(f.h, (op >> 2) % 3 == 1 ? 502 : 504,
						     (op >> 2) % 3 == 1 ? "upstream-failure"
									: "upstream-timeout", now);
			len = 0;
			break;
		}
		i += len;
	}
	gw_h1_client_eof(f.h, now);
	gw_h1_upstream_error(f.h, 502, "upstream-failure", now);

	/*
	 * The connection's secret never toward the client whole, not even when
	 * the upstream echoes it (netd/gw/scrub.h; unless the client sent it
	 * itself); the other one it never had (an upstream that sends it knew it).
	 */
	{
		const char *own = github ? &SECRET_B[6] : &SECRET_A[7];

		if (!has(&f.client_in, own) && has(&f.client_out, own))
			abort();
	}
	if (!has(&f.upstream_in, SECRET_A) && has(&f.client_out, SECRET_A))
		abort();
	if (!has(&f.upstream_in, SECRET_B) && has(&f.client_out, SECRET_B))
		abort();
	/* toward the upstream: only this connection's own, only rewritten in place */
	if (!has(&f.client_in, SECRET_A) && !has(&f.client_in, SECRET_B)) {
		if (github) {
			if (has(&f.upstream_out, SECRET_A))
				abort();
			check_upstream(&f.upstream_out, SECRET_B, "X-Api-Key", "api.github.com");
		} else {
			if (has(&f.upstream_out, SECRET_B))
				abort();
			check_upstream(&f.upstream_out, SECRET_A, "Authorization", "api.openai.com");
		}
	}
	gw_h1_free(f.h);
	gw_rate_free(rate);
	return 0;
}
