/*
 * fuzz_gw_scrub - gw_scrub_run() (netd/gw/scrub.c): an upstream's response
 * bytes, cut into pieces anywhere, with a secret of the input's choosing
 * (one credential; an alphabet small enough that echoes, near misses and
 * overlaps are common).  Beyond the sanitizers: the pieces out, joined,
 * equal masking the whole at once (a reference: every whole occurrence,
 * left to right); as many bytes come out as went in; the secret is nowhere
 * in them; nothing is held after the end; what is held is never more than
 * the secret less one byte.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/gw/scrub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ALPHA "ab-s\n"

/* The reference: every whole occurrence of @sec, left to right, masked. */
static void reference(uint8_t *buf, size_t len, const uint8_t *sec, size_t n)
{
	for (size_t i = 0; i + n <= len;) {
		if (memcmp(buf + i, sec, n) == 0) {
			memset(buf + i, GW_SCRUB_MASK, n);
			i += n;
		} else {
			i++;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t value[64], *in, *want, *got;
	size_t n, len, got_len = 0, at = 0;
	struct gw_cred cred = { .name = "c", .header = "Authorization", .placeholder = "p" };
	struct gw_req_ctx ctx = { .sni = "x", .creds = &cred, .n_creds = 1 };
	struct gw_scrub s = { 0 };

	if (size < 2)
		return 0;
	/* byte 0: the secret's length; then the secret, then cut sizes and bytes, in pairs */
	n = GW_SCRUB_MIN + data[0] % 24;
	if (size < 1 + n)
		return 0;
	memcpy(value, "Key ", 4);
	for (size_t i = 0; i < n; i++)
		value[4 + i] = (uint8_t)ALPHA[data[1 + i] % 5];
	cred.value = value;
	cred.value_len = 4 + n;
	cred.secret_off = 4;
	cred.secret_len = n;
	data += 1 + n;
	size -= 1 + n;
	len = size / 2;
	in = malloc(len + 1);
	want = malloc(len + 1);
	got = malloc(len + 1);
	if (!in || !want || !got)
		abort();
	for (size_t i = 0; i < len; i++)
		in[i] = (uint8_t)ALPHA[data[2 * i + 1] % 5];
	memcpy(want, in, len);
	reference(want, len, value + 4, n);
	while (at < len) {
		/* the cut: 1..16 bytes, from the even bytes */
		size_t k = 1 + data[2 * at] % 16, w;
		uint8_t *tmp;

		if (at + k > len)
			k = len - at;
		tmp = malloc(gw_scrub_room(&s, k) + 1);
		if (!tmp)
			abort();
		w = gw_scrub_run(&s, &ctx, in + at, k, at + k == len, tmp);
		if (got_len + w > len || s.n_hold >= n)
			abort();
		memcpy(got + got_len, tmp, w);
		got_len += w;
		at += k;
		free(tmp);
	}
	if (got_len != len || s.n_hold != 0 || memcmp(got, want, len) != 0)
		abort();
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(got + i, value + 4, n) == 0)
			abort();
	gw_scrub_free(&s);
	free(in);
	free(want);
	free(got);
	return 0;
}
