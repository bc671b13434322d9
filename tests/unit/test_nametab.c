/*
 * test_nametab - the names live flows were opened under (netd/trail/nametab.c):
 * one copy per name, counted; the last reference frees it and its id is
 * used again; a full table hands out nothing; long names and NULL get no id.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "netd/trail/nametab.h"

static void test_refs(void **state)
{
	struct nametab *t;
	uint32_t a, b, a2, c;

	(void)state;
	assert_int_equal(nametab_new(4, &t), 0);
	a = nametab_get(t, "pypi.org");
	b = nametab_get(t, "198.51.100.0/24");
	a2 = nametab_get(t, "pypi.org");
	assert_true(a && b && a != b);
	assert_int_equal(a2, a);
	assert_int_equal(nametab_count(t), 2);
	assert_string_equal(nametab_str(t, a), "pypi.org");
	assert_string_equal(nametab_str(t, b), "198.51.100.0/24");
	nametab_put(t, a);
	assert_string_equal(nametab_str(t, a), "pypi.org");	/* one reference left */
	nametab_put(t, a);
	assert_null(nametab_str(t, a));
	assert_int_equal(nametab_count(t), 1);
	c = nametab_get(t, "files.pythonhosted.org");
	assert_int_equal(c, a);	/* the freed id is used again */
	assert_string_equal(nametab_str(t, c), "files.pythonhosted.org");
	assert_int_equal(nametab_get(t, "pypi.org") != 0, 1);	/* found anew */
	nametab_put(t, 0);	/* ignored */
	nametab_put(t, 1000);	/* not an id: ignored */
	assert_null(nametab_str(t, 0));
	nametab_free(t);
}

static void test_limits(void **state)
{
	struct nametab *t;
	char name[300], key[32];

	(void)state;
	assert_int_equal(nametab_new(0, &t), -EINVAL);
	assert_int_equal(nametab_new((1u << 24) + 1, &t), -EINVAL);
	assert_int_equal(nametab_new(3, &t), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "n%d.example", i);
		assert_true(nametab_get(t, key) != 0);
	}
	assert_int_equal(nametab_get(t, "full.example"), 0);	/* full */
	assert_true(nametab_get(t, "n1.example") != 0);	/* held ones still counted */
	assert_int_equal(nametab_get(t, NULL), 0);
	memset(name, 'a', sizeof(name));
	name[NAMETAB_NAME_MAX + 1] = '\0';
	assert_int_equal(nametab_get(t, name), 0);	/* one byte too long */
	assert_int_equal(nametab_count(t), 3);
	nametab_free(t);
	nametab_free(NULL);
}

/* Many names through one small table: chains stay whole as entries come and go. */
static void test_churn(void **state)
{
	struct nametab *t;
	uint32_t id[64];
	char key[64];

	(void)state;
	assert_int_equal(nametab_new(64, &t), 0);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 64; i++) {
			snprintf(key, sizeof(key), "r%d-n%d.example", round, i);
			id[i] = nametab_get(t, key);
			assert_true(id[i] != 0);
		}
		for (int i = 0; i < 64; i += 2)
			nametab_put(t, id[i]);
		for (int i = 1; i < 64; i += 2) {
			snprintf(key, sizeof(key), "r%d-n%d.example", round, i);
			assert_string_equal(nametab_str(t, id[i]), key);
			assert_int_equal(nametab_get(t, key), id[i]);	/* found, not added */
			nametab_put(t, id[i]);
			nametab_put(t, id[i]);
		}
		assert_int_equal(nametab_count(t), 0);
	}
	nametab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
