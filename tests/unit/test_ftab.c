/*
 * test_ftab - the SNI checks' flow table (netd/sni/ftab.c): an entry is
 * found by its whole 4-tuple and family only, owners' shares count open
 * entries and stop at open_max, a full table forgets its oldest settled
 * entry (never an open one), the sweep ages each entry by its own keep,
 * and every entry let go is freed exactly once.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/sni/ftab.h"

struct tflow {
	int tag;
	struct fentry e;	/* not first: ftab_entry() must subtract its offset */
};

static int n_freed;

static void tflow_free(struct fentry *e)
{
	n_freed++;
	free(ftab_entry(e, struct tflow, e));
}

static struct ftuple tuple(int family, uint8_t last, uint16_t sport)
{
	struct ftuple k;

	memset(&k, 0, sizeof(k));
	k.src.family = k.dst.family = (uint8_t)family;
	k.src.a[0] = 10, k.src.a[3] = last;
	k.dst.a[0] = 198, k.dst.a[3] = 10;
	k.sport = sport;
	k.dport = 443;
	return k;
}

/* A new settled entry of @k, owner @owner, started at @start_ms. */
static struct tflow *add(struct ftab *t, const struct ftuple *k, uint32_t owner, uint64_t start_ms)
{
	struct tflow *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->e.key = *k;
	f->e.owner = owner;
	f->e.start_ms = start_ms;
	assert_true(ftab_make_room(t));
	assert_null(*ftab_find(t, k));
	ftab_link(t, ftab_find(t, k), &f->e);
	return f;
}

static void test_find_by_whole_key(void **state)
{
	struct ftuple k4 = tuple(AF_INET, 2, 40000), k6 = tuple(AF_INET6, 2, 40000);
	struct ftuple other_port = tuple(AF_INET, 2, 40001), back = k4, other_dst = k4,
		      other_dport = k4;
	struct ftab t;
	struct tflow *f;

	(void)state;
	n_freed = 0;
	assert_int_equal(ftab_init(&t, 1, 8, 2, 4, tflow_free), 0);	/* one chain: keys compared */
	f = add(&t, &k4, 0, 0);
	f->tag = 7;
	assert_ptr_equal(*ftab_find(&t, &k4), &f->e);
	assert_int_equal(ftab_entry(*ftab_find(&t, &k4), struct tflow, e)->tag, 7);
	assert_null(*ftab_find(&t, &other_port));
	assert_null(*ftab_find(&t, &k6));	/* same bytes, another family */
	back.src = k4.dst, back.dst = k4.src, back.sport = k4.dport, back.dport = k4.sport;
	assert_null(*ftab_find(&t, &back));	/* the reply's direction is another key */
	other_dst.dst.a[3] = 11;
	assert_null(*ftab_find(&t, &other_dst));
	other_dport.dport = 80;
	assert_null(*ftab_find(&t, &other_dport));
	add(&t, &k6, 0, 0);
	assert_int_equal(t.n, 2);
	ftab_unlink(&t, ftab_find(&t, &k4));
	assert_int_equal(n_freed, 1);
	assert_null(*ftab_find(&t, &k4));
	assert_non_null(*ftab_find(&t, &k6));
	ftab_fini(&t);
	assert_int_equal(n_freed, 2);
}

static void test_shares(void **state)
{
	struct ftuple k[3];
	struct tflow *f[3];
	struct ftab t;

	(void)state;
	n_freed = 0;
	assert_int_equal(ftab_init(&t, 16, 8, 2, 4, tflow_free), 0);
	for (int i = 0; i < 3; i++) {
		k[i] = tuple(AF_INET, 2, (uint16_t)(40000 + i));
		f[i] = add(&t, &k[i], 1, 0);
	}
	assert_int_equal(ftab_open_count(&t, 1), 0);	/* linked settled */
	ftab_set_open(&t, &f[0]->e, true);
	ftab_set_open(&t, &f[0]->e, true);	/* again: a no-op */
	assert_int_equal(ftab_open_count(&t, 1), 1);
	assert_false(ftab_share_full(&t, 1));
	ftab_set_open(&t, &f[1]->e, true);
	assert_true(ftab_share_full(&t, 1));
	assert_false(ftab_share_full(&t, 2));	/* another owner's share is its own */
	assert_false(ftab_share_full(&t, 99));	/* beyond the owners: no share, no bound */
	ftab_set_open(&t, &f[1]->e, false);
	assert_int_equal(ftab_open_count(&t, 1), 1);
	/* unlinking an open entry gives its place in the share back */
	ftab_unlink(&t, ftab_find(&t, &k[0]));
	assert_int_equal(ftab_open_count(&t, 1), 0);
	assert_int_equal(ftab_open_count(&t, 99), 0);
	/* nothing settled, but room below max: not full */
	ftab_set_open(&t, &f[1]->e, true);
	ftab_set_open(&t, &f[2]->e, true);
	assert_null(t.lru.head);
	assert_false(ftab_full(&t));
	assert_true(ftab_make_room(&t));
	ftab_fini(&t);
	assert_int_equal(n_freed, 3);
}

static void test_room_takes_oldest_settled(void **state)
{
	struct ftuple k[4], k_new = tuple(AF_INET, 9, 1);
	struct tflow *f[4];
	struct ftab t;

	(void)state;
	n_freed = 0;
	assert_int_equal(ftab_init(&t, 2, 4, 4, 1, tflow_free), 0);
	for (int i = 0; i < 4; i++) {
		k[i] = tuple(AF_INET, (uint8_t)i, 40000);
		f[i] = add(&t, &k[i], 0, 0);
	}
	/* k0 opens, k1 settles again (now the newest): the oldest settled is k2 */
	ftab_set_open(&t, &f[0]->e, true);
	ftab_set_open(&t, &f[1]->e, true);
	ftab_set_open(&t, &f[1]->e, false);
	assert_false(ftab_full(&t));	/* at max, but k1, k2, k3 are settled */
	add(&t, &k_new, 0, 0);
	assert_int_equal(t.n, 4);
	assert_null(*ftab_find(&t, &k[2]));
	assert_non_null(*ftab_find(&t, &k[0]));
	assert_non_null(*ftab_find(&t, &k[1]));
	assert_non_null(*ftab_find(&t, &k[3]));
	/* all open: no room, and nothing is forgotten */
	ftab_set_open(&t, &f[1]->e, true);
	ftab_set_open(&t, &f[3]->e, true);
	ftab_set_open(&t, *ftab_find(&t, &k_new), true);
	assert_true(ftab_full(&t));
	assert_false(ftab_make_room(&t));
	assert_int_equal(t.n, 4);
	assert_int_equal(n_freed, 1);
	ftab_fini(&t);
	assert_int_equal(n_freed, 5);
}

/* keep: the entry's tag, in ms, times *@ctx */
static uint64_t keep_tag(const struct fentry *e, const void *ctx)
{
	return (uint64_t)ftab_entry(e, const struct tflow, e)->tag * *(const unsigned *)ctx;
}

static void test_sweep(void **state)
{
	const unsigned one = 1, two = 2;
	struct ftuple k[3];
	struct tflow *f;
	struct ftab t;

	(void)state;
	n_freed = 0;
	assert_int_equal(ftab_init(&t, 1, 8, 4, 1, tflow_free), 0);	/* one chain */
	for (int i = 0; i < 3; i++) {
		k[i] = tuple(AF_INET, (uint8_t)i, 40000);
		f = add(&t, &k[i], 0, 100);
		f->tag = 10 * (i + 1);	/* kept 10, 20, 30 ms from 100 */
		if (i == 1)
			ftab_set_open(&t, &f->e, true);
	}
	assert_int_equal(ftab_sweep(&t, 109, keep_tag, &one), 0);
	assert_int_equal(ftab_sweep(&t, 120, keep_tag, &one), 2);	/* at its end, not after */
	assert_null(*ftab_find(&t, &k[0]));
	assert_null(*ftab_find(&t, &k[1]));
	assert_non_null(*ftab_find(&t, &k[2]));
	assert_int_equal(ftab_open_count(&t, 0), 0);	/* the open one left its share */
	assert_int_equal(ftab_sweep(&t, 159, keep_tag, &two), 0);	/* 30 ms x 2 */
	assert_int_equal(ftab_sweep(&t, 160, keep_tag, &two), 1);
	assert_int_equal(t.n, 0);
	assert_null(t.lru.head);
	ftab_fini(&t);
	assert_int_equal(n_freed, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_by_whole_key),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_room_takes_oldest_settled),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
