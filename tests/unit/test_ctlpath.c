/*
 * test_ctlpath - control API paths decoded strictly (issue 12): a name in
 * a path is exactly what the client sent, or the request is refused:
 * %00, %2F, control characters, "." and "..", bad percent-encoding and
 * over-long segments never reach the daemon.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "netd/api/ctlreq.h"

static void test_good(void **state)
{
	struct ctlreq_path p;
	char err[160] = "";

	assert_int_equal(ctlreq_path("/v1/sandboxes/sb1", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 3);
	assert_string_equal(p.seg[0], "v1");
	assert_string_equal(p.seg[2], "sb1");
	assert_int_equal(ctlreq_path("/v1/sandboxes/a%2Db.c_d", &p, err, sizeof(err)), 0);
	assert_string_equal(p.seg[2], "a-b.c_d");
	assert_int_equal(ctlreq_path("/v1/sandboxes/", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 3);
	assert_string_equal(p.seg[2], "");	/* routing says 404 */
	assert_int_equal(ctlreq_path("/", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 1);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"/v1/sandboxes/sb1%00x",	/* was: DELETE deleted sb1 */
		"/v1/sandboxes/a%2Fb",
		"/v1/sandboxes/a%2fb",
		"/v1/sandboxes/..",
		"/v1/sandboxes/%2e%2e",
		"/v1/sandboxes/.",
		"/v1/sandboxes/a%0Ab",
		"/v1/sandboxes/a%7Fb",
		"/v1/sandboxes/a%",
		"/v1/sandboxes/a%4",
		"/v1/sandboxes/a%zz",
		"v1/status",
		"",
		"/a/b/c/d/e/f/g/h/i",
	};
	struct ctlreq_path p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[160] = "";

		if (ctlreq_path(bad[i], &p, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
		assert_int_equal(p.n, 0);
	}
	assert_int_equal(ctlreq_path(NULL, &p, (char[8]){ 0 }, 8), -EINVAL);
}

static void test_lengths(void **state)
{
	char path[CTLREQ_PATH_MAX + 64], err[160];
	struct ctlreq_path p;

	memset(path, 'a', sizeof(path));
	memcpy(path, "/v1/sandboxes/", 14);
	path[14 + CTLREQ_SEG_MAX] = '\0';
	assert_int_equal(ctlreq_path(path, &p, err, sizeof(err)), 0);
	path[14 + CTLREQ_SEG_MAX] = 'a';
	path[14 + CTLREQ_SEG_MAX + 1] = '\0';
	assert_int_equal(ctlreq_path(path, &p, err, sizeof(err)), -ENAMETOOLONG);
	memset(path, '/', sizeof(path));
	path[CTLREQ_PATH_MAX + 1] = '\0';
	assert_int_equal(ctlreq_path(path, &p, err, sizeof(err)), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
