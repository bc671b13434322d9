/*
 * fuzz_gw_req - gw_req_check() and gw_req_refusal() (netd/gw/req.c), the
 * check both HTTP engines share, as HTTP/2 reaches it (any bytes in every
 * field, :authority given or not).  Input: byte 0 picks the context (bit
 * 0: :authority given; bit 1: path rules; bit 2: method rules), then
 * fields split at NUL: method, authority, path, then header name, value,
 * name, value... (at most 32 headers).
 * Beyond the sanitizers: a request taken has an origin-form path, an
 * authority equal to the SNI (ASCII case, optional ":443"), an allowed
 * method and path, no placeholder in its path, and every header holding a
 * placeholder rewritten (its credential's own header, a credential whose
 * value this connection holds), each at most once; a misdirected one names
 * a credential whose placeholder is there; the status is the verdict's;
 * a refusal body is JSON with no secret and no placeholder.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "netd/gw/req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SECRET "Bearer sk-AAAA-real-secret-0001"
#define MAX_HDRS 32

static bool has(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static bool authority_ok(const char *a, size_t n, const char *sni)
{
	size_t l = strlen(sni);

	while (n && (*a == ' ' || *a == '\t')) {
		a++;
		n--;
	}
	while (n && (a[n - 1] == ' ' || a[n - 1] == '\t'))
		n--;
	if (n < l || strncasecmp(a, sni, l) != 0)
		return false;
	return n == l || (n == l + 4 && memcmp(a + l, ":443", 4) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST" };
	static const char *const paths[] = { "/v1/*", "/health" };
	static const char *const hosts[] = { "api.openai.com" };
	static const unsigned int status_of[] = { 0, 421, 403, 403, 429, 403, 400, 502 };
	const struct gw_cred creds[2] = {
		{ .name = "openai", .header = "Authorization",
		  .placeholder = "netd-placeholder-openai-0001", .value = (const uint8_t *)SECRET,
		  .value_len = strlen(SECRET), .hosts = hosts, .n_hosts = 1 },
		{ .name = "github", .header = "X-Api-Key",
		  .placeholder = "netd-placeholder-github-0002" },
	};
	struct gw_req_ctx ctx = { .sni = "api.openai.com", .sandbox = "sb1", .policy = "p",
				  .creds = creds, .n_creds = 2 };
	const char *field[3 + 2 * MAX_HDRS];
	size_t flen[3 + 2 * MAX_HDRS], nf = 0, n_hdrs;
	struct gw_hdr hdrs[MAX_HDRS];
	struct gw_req_result res;
	char *copy, body[GW_REQ_REFUSAL_MAX];
	const char *authority, *q;
	size_t alen, plen;

	if (size < 1)
		return 0;
	if (data[0] & 2) {
		ctx.paths = paths;
		ctx.n_paths = 2;
	}
	if (data[0] & 4) {
		ctx.methods = methods;
		ctx.n_methods = 2;
	}
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	for (size_t at = 0; at <= size - 1 && nf < 3 + 2 * MAX_HDRS;) {
		const char *nul = memchr(copy + at, '\0', size - 1 - at);
		size_t end = nul ? (size_t)(nul - copy) : size - 1;

		field[nf] = copy + at;
		flen[nf++] = end - at;
		at = end + 1;
	}
	while (nf < 3) {
		field[nf] = "";
		flen[nf++] = 0;
	}
	n_hdrs = (nf - 3) / 2;
	for (size_t i = 0; i < n_hdrs; i++) {
		hdrs[i] = (struct gw_hdr){ field[3 + 2 * i], flen[3 + 2 * i],
					   field[4 + 2 * i], flen[4 + 2 * i] };
	}
	authority = data[0] & 1 ? field[1] : NULL;
	alen = data[0] & 1 ? flen[1] : 0;
	gw_req_check(&ctx, field[0], flen[0], authority, alen, 443, field[2], flen[2], hdrs,
		     n_hdrs, &res);

	if (res.verdict > GW_REQ_BAD || res.status != status_of[res.verdict])
		abort();
	q = memchr(field[2], '?', flen[2]);
	plen = q ? (size_t)(q - field[2]) : flen[2];
	if (res.verdict == GW_REQ_OK) {
		bool seen[MAX_HDRS] = { false };

		if (!flen[2] || field[2][0] != '/')
			abort();
		if (!authority) {
			for (size_t i = 0; i < n_hdrs; i++)
				if (hdrs[i].name_len == 4 && !strncasecmp(hdrs[i].name, "host", 4)) {
					authority = hdrs[i].value;
					alen = hdrs[i].value_len;
				}
			if (!authority)
				abort();
		}
		if (!authority_ok(authority, alen, ctx.sni))
			abort();
		if (ctx.n_methods && !((flen[0] == 3 && !memcmp(field[0], "GET", 3)) ||
				       (flen[0] == 4 && !memcmp(field[0], "POST", 4))))
			abort();
		if (ctx.n_paths && !(plen >= 4 && !memcmp(field[2], "/v1/", 4)) &&
		    !(plen == 7 && !memcmp(field[2], "/health", 7)))
			abort();
		for (size_t c = 0; c < 2; c++)
			if (has(field[2], flen[2], creds[c].placeholder))
				abort();
		for (size_t r = 0; r < res.n_rewrites; r++) {
			const struct gw_hdr *h = &hdrs[res.rewrites[r].index];
			const struct gw_cred *cr = res.rewrites[r].cred;

			if (res.rewrites[r].index >= n_hdrs || seen[res.rewrites[r].index] ||
			    !cr->value || h->name_len != strlen(cr->header) ||
			    strncasecmp(h->name, cr->header, h->name_len) != 0)
				abort();
			seen[res.rewrites[r].index] = true;
		}
		for (size_t i = 0; i < n_hdrs; i++)
			for (size_t c = 0; c < 2; c++)
				if (has(hdrs[i].value, hdrs[i].value_len, creds[c].placeholder) &&
				    !seen[i])
					abort();
	} else {
		json_t *j;

		if (res.n_rewrites && res.verdict != GW_REQ_CRED_MISDIRECTED)
			abort();
		if (res.verdict == GW_REQ_CRED_MISDIRECTED) {
			bool found = false;

			if (!res.cred || !res.cred_name || strcmp(res.cred->name, res.cred_name))
				abort();
			found = has(field[2], flen[2], res.cred->placeholder);
			for (size_t i = 0; i < n_hdrs; i++)
				found |= has(hdrs[i].value, hdrs[i].value_len, res.cred->placeholder);
			if (!found)
				abort();
		}
		gw_req_refusal(&ctx, &res, body, sizeof(body));
		j = json_loads(body, 0, NULL);
		if (!j)
			abort();
		json_decref(j);
		if (strstr(body, "sk-AAAA") || strstr(body, "netd-placeholder"))
			abort();
	}
	free(copy);
	return 0;
}
