/* Unit tests for common/jsonl.c: output is valid JSON that jansson reads back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/jsonl.h"

static json_t *parse(const char *members, int n)
{
	char text[4096];
	json_t *obj;

	assert_true(n >= 0 && (size_t)n + 3 < sizeof(text));
	snprintf(text, sizeof(text), "{%.*s}", n, members);
	obj = json_loads(text, 0, NULL);
	if (!obj)
		fail_msg("not JSON: %s", text);
	return obj;
}

static void test_members(void **state)
{
	char buf[1024];
	struct jsonl j;
	json_t *o, *arr;
	int n;

	(void)state;
	jsonl_init(&j, buf, sizeof(buf));
	jsonl_str(&j, "sandbox", "sb1");
	jsonl_str(&j, "client", NULL);
	jsonl_str(&j, "qname", "a\\.b\\000\"q\x01\xff.example");
	jsonl_uint(&j, "ttl", 0);
	jsonl_uint(&j, "big", (uint64_t)1 << 40);
	jsonl_array_begin(&j, "answers");
	jsonl_array_end(&j);
	jsonl_array_begin(&j, "two");
	jsonl_array_str(&j, "198.51.100.10");
	jsonl_array_str(&j, "2001:db8::1");
	jsonl_array_end(&j);
	jsonl_uint(&j, "after", 7);
	n = jsonl_done(&j);
	o = parse(buf, n);
	assert_string_equal(json_string_value(json_object_get(o, "sandbox")), "sb1");
	assert_true(json_is_null(json_object_get(o, "client")));
	assert_string_equal(json_string_value(json_object_get(o, "qname")),
			    "a\\.b\\000\"q\x01\xc3\xbf.example");	/* \u00ff read back as UTF-8 */
	assert_int_equal(json_integer_value(json_object_get(o, "ttl")), 0);
	assert_int_equal(json_array_size(json_object_get(o, "answers")), 0);
	arr = json_object_get(o, "two");
	assert_int_equal(json_array_size(arr), 2);
	assert_string_equal(json_string_value(json_array_get(arr, 1)), "2001:db8::1");
	assert_int_equal(json_integer_value(json_object_get(o, "after")), 7);
	for (int i = 0; i < n; i++)
		assert_true((unsigned char)buf[i] >= 0x20 && (unsigned char)buf[i] < 0x7f);
	json_decref(o);
}

static void test_overflow(void **state)
{
	char buf[16];
	struct jsonl j;

	(void)state;
	jsonl_init(&j, buf, sizeof(buf));
	jsonl_str(&j, "k", "0123456789a");	/* 17 bytes: one too many */
	assert_int_equal(jsonl_done(&j), -ENOBUFS);
	jsonl_init(&j, buf, sizeof(buf));
	jsonl_str(&j, "k", "v");
	assert_int_equal(jsonl_done(&j), 7);
}

/*
 * The writer has two paths (straight into a roomy buffer, checked byte
 * runs near the end): for every buffer size the result is either exactly
 * the roomy result or -ENOBUFS, never a different string.
 */
static void test_paths_agree(void **state)
{
	char s[256], big[2048], small[2048];
	struct jsonl j;
	int want, n;

	(void)state;
	for (int i = 0; i < 255; i++)
		s[i] = (char)(i + 1);	/* every byte value but NUL */
	s[255] = '\0';
	jsonl_init(&j, big, sizeof(big));
	jsonl_str(&j, "k\"ey", s);
	want = jsonl_done(&j);
	assert_true(want > 0);
	for (size_t cap = 0; cap <= (size_t)want + 8; cap++) {
		jsonl_init(&j, small, cap);
		jsonl_str(&j, "k\"ey", s);
		n = jsonl_done(&j);
		if ((size_t)want <= cap) {
			assert_int_equal(n, want);
			assert_memory_equal(small, big, (size_t)want);
		} else {
			assert_int_equal(n, -ENOBUFS);
		}
	}
	json_decref(parse(big, want));
}

/* jsonl_raw(): members of another writer, spliced in with the commas right. */
static void test_raw(void **state)
{
	char who[128], buf[256], small[24];
	struct jsonl w, j;
	json_t *o;
	int n, wn;

	(void)state;
	jsonl_init(&w, who, sizeof(who));
	jsonl_str(&w, "sandbox", "sb1");
	jsonl_str(&w, "client", "10.87.0.2");
	wn = jsonl_done(&w);
	assert_true(wn > 0);
	jsonl_init(&j, buf, sizeof(buf));
	jsonl_raw(&j, who, (size_t)wn);
	jsonl_str(&j, "qname", "a.example");
	n = jsonl_done(&j);
	o = parse(buf, n);
	assert_string_equal(json_string_value(json_object_get(o, "client")), "10.87.0.2");
	assert_string_equal(json_string_value(json_object_get(o, "qname")), "a.example");
	json_decref(o);
	/* after a member, and empty */
	jsonl_init(&j, buf, sizeof(buf));
	jsonl_uint(&j, "n", 1);
	jsonl_raw(&j, who, 0);
	jsonl_raw(&j, who, (size_t)wn);
	n = jsonl_done(&j);
	o = parse(buf, n);
	assert_int_equal(json_object_size(o), 3);
	json_decref(o);
	/* too long for the buffer: overflow, never a cut member */
	jsonl_init(&j, small, sizeof(small));
	jsonl_raw(&j, who, (size_t)wn);
	assert_int_equal(jsonl_done(&j), -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_paths_agree),
		cmocka_unit_test(test_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
