/*
 * test_workload - who a sandbox is for (common/workload.c): the name rule
 * and the length limits per field, and the same fields in a POST
 * /v1/sandboxes body (ctlreq_sandbox(): 400 on a bad value, absent or null
 * leaves them empty).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/workload.h"
#include "netd/api/ctlreq.h"

/* A string of @n copies of @c (static; one at a time). */
static const char *rep(char c, size_t n)
{
	static char buf[512];

	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

static void test_rule(void **state)
{
	struct workload w;
	char err[128];

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_true(workload_empty(&w));
	assert_int_equal(workload_set(&w, WORKLOAD_CONTAINER_ID, rep('a', 64), err, sizeof(err)), 0);
	assert_int_equal(workload_set(&w, WORKLOAD_POD_NAMESPACE, "kube-system", err, sizeof(err)), 0);
	assert_int_equal(workload_set(&w, WORKLOAD_POD_NAME, "coredns-5d78c9869d-x2x7k.v1", err,
				      sizeof(err)), 0);
	assert_int_equal(workload_set(&w, WORKLOAD_POD_UID, "3f1b2c4d-0a9e-4b7c-8d6f-1e2a3b4c5d6e",
				      err, sizeof(err)), 0);
	assert_false(workload_empty(&w));
	assert_string_equal(workload_get(&w, WORKLOAD_POD_NAMESPACE), "kube-system");
	assert_string_equal(w.pod_name, "coredns-5d78c9869d-x2x7k.v1");
	/* nerdctl's "<namespace>-<id>", ctr's "default-t1", podman's names with '_'. */
	assert_int_equal(workload_set(&w, WORKLOAD_CONTAINER_ID, "default-t1", err, sizeof(err)), 0);
	assert_int_equal(workload_set(&w, WORKLOAD_POD_NAME, "my_app.1", err, sizeof(err)), 0);

	/* Refused: a leading '-', '.', '_'; spaces, quotes, '/', ';', '=', non-ASCII, control. */
	static const char *const bad[] = { "-x", ".x", "_x", "a b", "a\"b", "a/b", "a;b", "a=b",
					   "caf\xc3\xa9", "a\nb", "a\\b", "a{b}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(workload_set(&w, WORKLOAD_POD_NAME, bad[i], err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "\"pod_name\" must match"));
	}
	/* A refused value leaves the old one. */
	assert_string_equal(w.pod_name, "my_app.1");
	assert_true(workload_valid(&w));
	w.pod_uid[0] = ' ';	/* as a bad parser might leave it */
	assert_false(workload_valid(&w));
	w.pod_uid[0] = '\0';
	memset(w.pod_namespace, 'n', sizeof(w.pod_namespace));	/* unterminated */
	assert_false(workload_valid(&w));
	w.pod_namespace[0] = '\0';
	/* "" clears. */
	assert_int_equal(workload_set(&w, WORKLOAD_POD_NAME, "", err, sizeof(err)), 0);
	assert_string_equal(w.pod_name, "");
}

static void test_limits(void **state)
{
	static const struct { enum workload_field f; size_t max; } lim[] = {
		{ WORKLOAD_CONTAINER_ID, 256 }, { WORKLOAD_POD_NAMESPACE, 63 },
		{ WORKLOAD_POD_NAME, 253 }, { WORKLOAD_POD_UID, 64 },
	};
	struct workload w;
	char err[128];

	(void)state;
	memset(&w, 0, sizeof(w));
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		assert_int_equal(workload_max(lim[i].f), lim[i].max);
		assert_int_equal(workload_set(&w, lim[i].f, rep('z', lim[i].max), err, sizeof(err)), 0);
		assert_int_equal(strlen(workload_get(&w, lim[i].f)), lim[i].max);
		assert_int_equal(workload_set(&w, lim[i].f, rep('z', lim[i].max + 1), err, sizeof(err)),
				 -ENAMETOOLONG);
		assert_non_null(strstr(err, workload_key(lim[i].f)));
	}
	assert_string_equal(workload_cni_arg(WORKLOAD_POD_NAMESPACE), "K8S_POD_NAMESPACE");
	assert_string_equal(workload_cni_arg(WORKLOAD_POD_NAME), "K8S_POD_NAME");
	assert_string_equal(workload_cni_arg(WORKLOAD_POD_UID), "K8S_POD_UID");
	assert_null(workload_cni_arg(WORKLOAD_CONTAINER_ID));
}

static void test_json(void **state)
{
	struct workload w;
	char err[128];
	json_t *o = json_object();

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(workload_set(&w, WORKLOAD_CONTAINER_ID, "c1", err, sizeof(err)), 0);
	workload_json(&w, o, false);
	assert_int_equal(json_object_size(o), 1);
	assert_string_equal(json_string_value(json_object_get(o, "container_id")), "c1");
	workload_json(&w, o, true);
	assert_int_equal(json_object_size(o), 4);
	assert_true(json_is_null(json_object_get(o, "pod_uid")));
	json_decref(o);
}

static int req(const char *body, struct sandbox_request *sr, char *err, size_t errsz)
{
	json_t *obj = NULL;
	int r = ctlreq_sandbox(body, strlen(body), sr, &obj, err, errsz);

	json_decref(obj);
	return r;
}

static void test_request(void **state)
{
	struct sandbox_request sr;
	char err[256], body[1024];

	(void)state;
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\"}", &sr, err, sizeof(err)), 0);
	assert_true(workload_empty(&sr.workload));
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"container_id\":\"abc\","
			     "\"pod_namespace\":\"ns\",\"pod_name\":\"web-0\",\"pod_uid\":null}",
			     &sr, err, sizeof(err)), 0);
	assert_string_equal(sr.workload.container_id, "abc");
	assert_string_equal(sr.workload.pod_namespace, "ns");
	assert_string_equal(sr.workload.pod_name, "web-0");
	assert_string_equal(sr.workload.pod_uid, "");
	/* With a tap too (a microVM may name its container). */
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"kind\":\"tap\",\"tap\":{\"owner\":1},"
			     "\"container_id\":\"vm1\"}", &sr, err, sizeof(err)), 0);
	assert_string_equal(sr.workload.container_id, "vm1");

	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"pod_name\":7}", &sr, err,
			     sizeof(err)), -EINVAL);
	assert_string_equal(err, "\"pod_name\" must be a string");
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"pod_namespace\":\"a b\"}", &sr, err,
			     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"pod_namespace\" must match"));
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"container_id\":\"a\\u0000b\"}", &sr,
			     err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
	snprintf(body, sizeof(body), "{\"name\":\"a\",\"policy\":\"p\",\"pod_namespace\":\"%s\"}",
		 rep('n', 64));
	assert_int_equal(req(body, &sr, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "\"pod_namespace\" is longer than 63 bytes");
	assert_true(workload_empty(&sr.workload));	/* zeroed on failure */
	assert_int_equal(req("{\"name\":\"a\",\"policy\":\"p\",\"pod\":\"x\"}", &sr, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "pod_namespace, pod_name, pod_uid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
