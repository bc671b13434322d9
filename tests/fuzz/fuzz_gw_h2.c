/*
 * fuzz_gw_h2 - the HTTP/2 engine (netd/gw/h2.c, h2buf.c) fed arbitrary
 * bytes from both sides: the client's after the connection preface, the
 * upstream's from the first byte, interleaved as the input says, with the
 * clock moving, the rate bucket emptying and the upstream failing.
 * Input: records [op][len][len bytes]; op & 3: 0 client bytes, 1 upstream
 * bytes, 2 the clock + 0.25 s and the rate toggled, 3 the upstream failed
 * (op & 4: a timeout).  An engine error ends the connection, as the worker
 * does.  Beyond the sanitizers: at most one record a client stream, each
 * with its times in order; an op error is passed back; nothing to the
 * client holds the secret's bytes unless the upstream sent them.
 *
 * The request check is netd/gw/req.c's own, as the worker runs it: a
 * rule with methods and paths (the seeds' "/denied" is refused), one
 * credential whose value this connection holds, with its hosts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd/gw/h2.h"
#include "netd/gw/req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SNI "api.example.test"
#define PLACEHOLDER "netd-placeholder-openai-0001"
#define SECRET "Bearer sk-FUZZ-SECRET-0123456789"

static const char *const methods[] = { "GET", "POST", "PUT" };
static const char *const paths[] = { "/", "/v1/*", "/echo", "/ok", "/stream*" };
static const char *const cred_hosts[] = { SNI };

struct fz {
	bool rate_over, upstream_had_secret, client_got_secret;
	size_t records;
	int32_t last_sid;
};

static int to_client(void *user, const uint8_t *buf, size_t len)
{
	struct fz *f = user;

	if (memmem(buf, len, "sk-FUZZ-SECRET", 14))
		f->client_got_secret = true;
	return 0;
}

static int to_upstream(void *user, const uint8_t *buf, size_t len)
{
	return 0;
}

static int rate(void *user, uint64_t now_ns, uint32_t *retry_after_s)
{
	struct fz *f = user;

	*retry_after_s = 3;
	return f->rate_over ? -EAGAIN : 0;
}

static void record(void *user, const struct gw_h2_record *r)
{
	struct fz *f = user;

	f->records++;
	if (r->stream_id <= 0 || !r->method || !r->host || !r->path)
		abort();
	if (r->end_ns < r->start_ns || (r->first_byte_ns && r->first_byte_ns < r->start_ns))
		abort();
	if (strchr(r->path, '?'))
		abort();	/* the record's path has no query */
}

static const struct gw_h2_ops ops = { to_client, to_upstream, rate, record };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	struct gw_cred cred = { .name = "openai", .header = "authorization",
				.placeholder = PLACEHOLDER, .value = (const uint8_t *)SECRET,
				.value_len = strlen(SECRET), .hosts = cred_hosts, .n_hosts = 1 };
	struct gw_req_ctx ctx = { .sni = SNI, .sandbox = "sb", .policy = "p", .rule = 0,
				  .methods = methods, .n_methods = 3,
				  .paths = paths, .n_paths = 5, .creds = &cred, .n_creds = 1 };
	struct fz f = { 0 };
	uint64_t now = 1000000000ull;
	struct gw_h2 *h2 = gw_h2_new(&ctx, 443, &ops, &f, now);
	int rv;

	if (!h2)
		return 0;
	rv = gw_h2_start(h2, now);
	if (rv == 0)
		rv = gw_h2_from_client(h2, preface, sizeof(preface) - 1, now);
	while (rv == 0 && size >= 2) {
		uint8_t op = data[0];
		size_t len = data[1] < size - 2 ? data[1] : size - 2;
		const uint8_t *p = data + 2;

		data += 2 + len;
		size -= 2 + len;
		switch (op & 3) {
		case 0:
			rv = gw_h2_from_client(h2, p, len, now);
			break;
		case 1:
			if (memmem(p, len, "sk-FUZZ", 7) || len)
				f.upstream_had_secret = true;	/* HPACK/split: anything may echo */
			rv = gw_h2_from_upstream(h2, p, len, now);
			break;
		case 2:
			now += 250000000ull;
			f.rate_over = !f.rate_over;
			break;
		default:
			rv = gw_h2_upstream_failed(h2, op & 4 ? 504 : 502,
						   op & 4 ? "upstream-timeout" : "upstream-failure", now);
			break;
		}
		if (rv != 0 && rv != -EPROTO)
			abort();	/* the ops never fail here; ENOMEM is not fuzzed */
		(void)gw_h2_finished(h2);
	}
	gw_h2_free(h2);
	/* the secret goes upstream only: without upstream bytes, never to the client */
	if (f.client_got_secret && !f.upstream_had_secret)
		abort();
	return 0;
}
