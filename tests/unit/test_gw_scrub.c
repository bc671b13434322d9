/*
 * test_gw_scrub - netd/gw/scrub.c: a secret an upstream echoes is masked
 * byte for byte (the length kept), in one buffer and across the pieces of a
 * body however it is cut; only a tail that could begin a secret is held
 * back, and an SSE event's end never is; short secrets and credentials this
 * connection does not carry are not looked for; header blocks too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/gw/scrub.h"

#define V1 "Bearer sk-echo-secret-0123456789"	/* the secret from byte 7 */
#define V2 "key=abcdefgh;"			/* "abcdefgh", 8 bytes, from byte 4 */

static const struct gw_cred creds[] = {
	{ .name = "openai", .header = "Authorization", .placeholder = "ph-openai-000000001",
	  .value = (const uint8_t *)V1, .value_len = sizeof(V1) - 1, .secret_off = 7,
	  .secret_len = sizeof(V1) - 1 - 7 },
	{ .name = "other", .header = "X-Key", .placeholder = "ph-other-0000000001",
	  .value = (const uint8_t *)V2, .value_len = sizeof(V2) - 1, .secret_off = 4,
	  .secret_len = 8 },
	/* not this connection's: no value, nothing to look for */
	{ .name = "elsewhere", .header = "X-Key", .placeholder = "ph-elsewhere-00001" },
	/* too short to look for (GW_SCRUB_MIN) */
	{ .name = "short", .header = "X-Key", .placeholder = "ph-short-000000001",
	  .value = (const uint8_t *)"k=1234567", .value_len = 9, .secret_off = 2,
	  .secret_len = 7 },
};
static const struct gw_req_ctx ctx = { .sni = "api.example", .creds = creds, .n_creds = 4 };

#define S1 "sk-echo-secret-0123456789"
#define M1 "*************************"

/* Everything @in gives through a stream cut at every @step bytes. */
static char *stream(const char *in, size_t step, uint64_t *masked)
{
	struct gw_scrub s = { 0 };
	size_t len = strlen(in), at = 0, n = 0;
	char *out = calloc(1, len + 1);

	do {
		size_t k = len - at < step ? len - at : step;
		uint8_t *tmp = malloc(gw_scrub_room(&s, k) + 1);
		size_t w = gw_scrub_run(&s, &ctx, (const uint8_t *)in + at, k, at + k == len, tmp);

		assert_true(n + w <= len);
		memcpy(out + n, tmp, w);
		n += w;
		at += k;
		free(tmp);
	} while (at < len);
	assert_int_equal(n, len);	/* the end flushed what was held */
	assert_int_equal(s.n_hold, 0);
	if (masked)
		*masked = s.masked;
	gw_scrub_free(&s);
	return out;
}

static void test_mask_whole(void **state)
{
	char buf[] = "{\"auth\":\"Bearer " S1 "\",\"k\":\"abcdefgh\",\"s\":\"1234567\"}";
	size_t len = strlen(buf);

	(void)state;
	assert_true(gw_scrub_any(&ctx));
	assert_int_equal(gw_scrub_mask(&ctx, (uint8_t *)buf, len), 2);
	assert_string_equal(buf, "{\"auth\":\"Bearer " M1 "\",\"k\":\"********\",\"s\":\"1234567\"}");
	assert_int_equal(strlen(buf), len);
}

static void test_mask_repeats(void **state)
{
	char buf[] = S1 S1 "-" S1;

	(void)state;
	assert_int_equal(gw_scrub_mask(&ctx, (uint8_t *)buf, strlen(buf)), 3);
	assert_string_equal(buf, M1 M1 "-" M1);
}

/* Cut anywhere, the stream gives what masking the whole gives. */
static void test_stream_any_cut(void **state)
{
	static const char in[] = "HTTP/1.1 200 OK\r\nX-Echo: Bearer " S1 "\r\n\r\n"
				 "data: sk-echo-secret-01234567 (not it)\n\n"
				 "data: " S1 S1 "\n\nabcdefgh abcdefg sk-echo-secret-012345678";
	char want[sizeof(in)];

	(void)state;
	memcpy(want, in, sizeof(in));
	gw_scrub_mask(&ctx, (uint8_t *)want, strlen(want));
	assert_non_null(strstr(want, "(not it)"));
	assert_null(strstr(want, S1));
	for (size_t step = 1; step <= sizeof(in); step++) {
		uint64_t masked;
		char *got = stream(in, step, &masked);

		assert_string_equal(got, want);
		assert_int_equal(masked, 4);
		free(got);
	}
}

/* Only a tail that could begin a secret waits; the end of an SSE event never does. */
static void test_hold_only_prefix(void **state)
{
	struct gw_scrub s = { 0 };
	uint8_t out[256];
	size_t n;

	(void)state;
	n = gw_scrub_run(&s, &ctx, (const uint8_t *)"data: {\"x\":1}\n\n", 15, false, out);
	assert_int_equal(n, 15);
	assert_int_equal(s.n_hold, 0);
	n = gw_scrub_run(&s, &ctx, (const uint8_t *)"data: sk-ec", 11, false, out);
	assert_int_equal(n, 6);	/* "sk-ec" may begin the secret */
	assert_int_equal(s.n_hold, 5);
	n = gw_scrub_run(&s, &ctx, (const uint8_t *)"ho-secrets", 10, false, out);
	/* "sk-echo-secrets" is not the secret; only its last "s" may begin one */
	assert_int_equal(n, 14);
	assert_memory_equal(out, "sk-echo-secret", 14);
	assert_int_equal(s.n_hold, 1);
	n = gw_scrub_run(&s, &ctx, NULL, 0, true, out);
	assert_int_equal(s.n_hold, 0);
	gw_scrub_free(&s);
}

static void test_hblock(void **state)
{
	struct gw_hblock b = { 0 };

	(void)state;
	assert_int_equal(gw_hblock_add(&b, (const uint8_t *)"x-echo", 6,
				       (const uint8_t *)"Bearer " S1, strlen("Bearer " S1)), 0);
	assert_int_equal(gw_hblock_add(&b, (const uint8_t *)"x-other", 7,
				       (const uint8_t *)"nothing here", 12), 0);
	/* an upstream that makes a field name of the secret */
	assert_int_equal(gw_hblock_add(&b, (const uint8_t *)S1, strlen(S1),
				       (const uint8_t *)"1", 1), 0);
	assert_int_equal(gw_scrub_hblock(&ctx, &b), 2);
	assert_string_equal(b.f[0].value, "Bearer " M1);
	assert_string_equal(b.f[1].value, "nothing here");
	assert_string_equal(b.f[2].name, M1);
	assert_memory_equal(b.f[2].name, M1, strlen(M1));
	assert_string_equal(b.f[2].value, "1");
	gw_hblock_clear(&b);
}

static void test_body_add(void **state)
{
	struct gw_scrub s = { 0 };
	struct gw_body b = { 0 };

	(void)state;
	assert_int_equal(gw_scrub_body_add(&s, &ctx, &b, (const uint8_t *)"{\"k\":\"sk-echo-", 14,
					   false), 0);
	assert_int_equal(b.len - b.off, 6);
	assert_int_equal(gw_scrub_body_add(&s, &ctx, &b, (const uint8_t *)"secret-0123456789\"}",
					   19, false), 0);
	assert_int_equal(gw_scrub_body_add(&s, &ctx, &b, NULL, 0, true), 0);
	assert_int_equal(b.len - b.off, 33);
	assert_memory_equal(b.p + b.off, "{\"k\":\"" M1 "\"}", 33);
	gw_body_free(&b);
	gw_scrub_free(&s);
}

static const uint8_t *emitted;
static size_t emitted_len;

static int note_emit(void *arg, const uint8_t *p, size_t n)
{
	(void)arg;
	emitted = p;
	emitted_len = n;
	return 0;
}

/* No secret to look for and nothing held: the bytes go out as they are, uncopied. */
static void test_pass_uncopied(void **state)
{
	static const struct gw_req_ctx none = { .sni = "x", .creds = &creds[2], .n_creds = 1 };
	static const uint8_t body[] = "data: " S1 "\n\n";
	struct gw_scrub s = { 0 };

	(void)state;
	assert_false(gw_scrub_any(&none));
	assert_int_equal(gw_scrub_pass(&s, &none, body, sizeof(body) - 1, false, note_emit, NULL), 0);
	assert_ptr_equal(emitted, body);
	assert_int_equal(emitted_len, sizeof(body) - 1);
	/* with a secret: a masked copy */
	assert_int_equal(gw_scrub_pass(&s, &ctx, body, sizeof(body) - 1, false, note_emit, NULL), 0);
	assert_ptr_not_equal(emitted, body);
	gw_scrub_free(&s);
}

/* A span outside the value, or no value: nothing looked for. */
static void test_secret_span(void **state)
{
	struct gw_cred c = creds[0];
	const uint8_t *p;
	size_t n;

	(void)state;
	assert_true(gw_scrub_secret(&c, &p, &n));
	assert_int_equal(n, strlen(S1));
	assert_memory_equal(p, S1, n);
	c.secret_off = c.value_len;
	assert_false(gw_scrub_secret(&c, &p, &n));
	c.secret_off = 7;
	c.secret_len = c.value_len;
	assert_false(gw_scrub_secret(&c, &p, &n));
	c = creds[2];
	assert_false(gw_scrub_secret(&c, &p, &n));
	c = creds[3];
	assert_false(gw_scrub_secret(&c, &p, &n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask_whole),
		cmocka_unit_test(test_mask_repeats),
		cmocka_unit_test(test_stream_any_cut),
		cmocka_unit_test(test_hold_only_prefix),
		cmocka_unit_test(test_hblock),
		cmocka_unit_test(test_body_add),
		cmocka_unit_test(test_pass_uncopied),
		cmocka_unit_test(test_secret_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
