/*
 * test_flowtab - the per-flow fold table (netd/trail/flowtab.c): live deltas add
 * up to the final counters exactly, a close is recorded once, a late
 * DESTROY reports only what came after the close, a full table degrades
 * to "record at DESTROY" without double counting, and deletion keeps
 * every other entry findable.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "netd/trail/flowtab.h"

static struct ct_flow flow(uint32_t id, uint64_t out, uint64_t in)
{
	struct ct_flow f;

	memset(&f, 0, sizeof(f));
	f.id = id;
	f.proto = IPPROTO_TCP;
	f.src.family = f.dst.family = AF_INET;
	f.src.a[0] = 10, f.src.a[3] = 2;
	f.dst.a[0] = 198, f.dst.a[3] = 10;
	f.sport = (uint16_t)(40000 + id);
	f.dport = 443;
	f.bytes_out = out;
	f.bytes_in = in;
	f.packets_out = out / 100;
	f.packets_in = in / 100;
	return f;
}

static void test_live_then_end(void **state)
{
	struct flowtab *t;
	struct flow_ctr fold, late, sum = { 0 };
	struct ct_flow f;

	(void)state;
	assert_int_equal(flowtab_new(64, &t), 0);
	for (uint64_t b = 1000; b <= 5000; b += 1000) {
		f = flow(1, b, b * 2);
		assert_int_equal(flowtab_live(t, &f, &fold), 1);
		assert_int_equal(fold.bytes_out, 1000);
		sum.bytes_out += fold.bytes_out;
		sum.bytes_in += fold.bytes_in;
	}
	f = flow(1, 5000, 10000);
	assert_int_equal(flowtab_live(t, &f, &fold), 1);	/* nothing grew */
	assert_true(flowtab_ctr_zero(&fold));
	f = flow(1, 5500, 12000);
	assert_false(flowtab_end(t, &f, &fold, &late));	/* never recorded: write conn */
	assert_true(flowtab_ctr_zero(&late));
	sum.bytes_out += fold.bytes_out;
	sum.bytes_in += fold.bytes_in;
	assert_int_equal(sum.bytes_out, 5500);	/* exact: the final counters */
	assert_int_equal(sum.bytes_in, 12000);
	assert_int_equal(flowtab_count(t), 0);
	flowtab_free(t);
}

static void test_close_then_destroy(void **state)
{
	struct flowtab *t;
	struct flow_ctr fold, late;
	struct ct_flow f;

	(void)state;
	assert_int_equal(flowtab_new(64, &t), 0);
	f = flow(7, 300, 900);
	assert_int_equal(flowtab_live(t, &f, &fold), 1);
	f = flow(7, 400, 1000);
	assert_int_equal(flowtab_close(t, &f, &fold), 1);	/* write conn now */
	assert_int_equal(fold.bytes_out, 100);
	assert_int_equal(flowtab_close(t, &f, &fold), 0);	/* CLOSE after TIME_WAIT */
	assert_true(flowtab_ctr_zero(&fold));
	/* A dump in TIME_WAIT sees a retransmitted FIN: folded, but not "recorded". */
	f = flow(7, 452, 1000);
	assert_int_equal(flowtab_live(t, &f, &fold), 2);	/* no conn_update after conn */
	assert_int_equal(fold.bytes_out, 52);
	/* DESTROY: nothing more for the metrics, 52 bytes after the record. */
	assert_true(flowtab_end(t, &f, &fold, &late));
	assert_true(flowtab_ctr_zero(&fold));
	assert_int_equal(late.bytes_out, 52);
	assert_int_equal(late.bytes_in, 0);
	/* The same close with nothing after it: no late record. */
	f = flow(8, 400, 1000);
	assert_int_equal(flowtab_close(t, &f, &fold), 1);
	assert_int_equal(fold.bytes_out, 400);
	assert_true(flowtab_end(t, &f, &fold, &late));
	assert_true(flowtab_ctr_zero(&fold));
	assert_true(flowtab_ctr_zero(&late));
	flowtab_free(t);
}

static void test_full(void **state)
{
	struct flowtab *t;
	struct flow_ctr fold, late;
	struct ct_flow f;
	int live = 0;

	(void)state;
	assert_int_equal(flowtab_new(16, &t), 0);
	for (uint32_t i = 0; i < 16; i++) {
		f = flow(100 + i, 10, 10);
		live += flowtab_live(t, &f, &fold);
	}
	assert_int_equal(live, 12);	/* live adds stop at 3/4 */
	f = flow(115, 10, 10);	/* untracked: nothing folded now ... */
	assert_int_equal(flowtab_live(t, &f, &fold), 0);
	assert_true(flowtab_ctr_zero(&fold));
	assert_false(flowtab_end(t, &f, &fold, &late));	/* ... all of it at the end */
	assert_int_equal(fold.bytes_out, 10);
	for (uint32_t i = 0; i < 3; i++) {	/* closes may use the rest but one */
		f = flow(200 + i, 10, 10);
		assert_int_equal(flowtab_close(t, &f, &fold), 1);
	}
	f = flow(300, 10, 10);
	assert_int_equal(flowtab_close(t, &f, &fold), -ENOSPC);
	assert_false(flowtab_end(t, &f, &fold, &late));	/* recorded at DESTROY, whole */
	assert_int_equal(fold.bytes_out, 10);
	/* Every tracked entry is still found after deletions in the clusters. */
	for (uint32_t i = 0; i < 12; i += 2) {
		f = flow(100 + i, 10, 10);
		assert_false(flowtab_end(t, &f, &fold, &late));
		assert_true(flowtab_ctr_zero(&fold));
	}
	for (uint32_t i = 1; i < 12; i += 2) {
		f = flow(100 + i, 20, 10);
		assert_int_equal(flowtab_live(t, &f, &fold), 1);
		assert_int_equal(fold.bytes_out, 10);
	}
	assert_int_equal(flowtab_count(t), 9);
	flowtab_free(t);
}

/*
 * The name a flow was opened under stays with it to its end (a new user's
 * conn record named a name that pinned the address after the connection
 * was made by number); a flow whose open was not seen has none to give.
 */
static void test_opened_name(void **state)
{
	struct flowtab *t;
	struct flow_ctr fold, late;
	struct ct_flow f = flow(7, 0, 0), g = flow(8, 0, 0);
	uint32_t name = 99;

	(void)state;
	assert_int_equal(flowtab_new(16, &t), 0);
	assert_false(flowtab_name(t, &f, &name));	/* never seen */
	assert_int_equal(name, 0);
	assert_int_equal(flowtab_open(t, &f, 5), 1);
	assert_int_equal(flowtab_open(t, &f, 6), 0);	/* a second NEW keeps the first */
	assert_int_equal(flowtab_open(t, &g, 0), 1);	/* opened by address: no name */
	f.bytes_out = 300;
	assert_int_equal(flowtab_live(t, &f, &fold), 1);
	assert_int_equal(fold.bytes_out, 300);
	assert_int_equal(flowtab_close(t, &f, &fold), 1);
	assert_true(flowtab_name(t, &f, &name));
	assert_int_equal(name, 5);
	assert_true(flowtab_name(t, &g, &name));
	assert_int_equal(name, 0);
	assert_true(flowtab_end(t, &f, &fold, &late));
	assert_false(flowtab_name(t, &f, &name));	/* forgotten with its end */
	/* opens stop at 3/4, as live adds do */
	for (uint32_t i = 0; i < 11; i++) {
		f = flow(100 + i, 0, 0);
		assert_int_equal(flowtab_open(t, &f, 1), 1);
	}
	f = flow(200, 0, 0);
	assert_int_equal(flowtab_open(t, &f, 1), -ENOSPC);
	assert_false(flowtab_name(t, &f, &name));
	flowtab_free(t);
}

static void test_bad_args(void **state)
{
	struct flowtab *t = NULL;

	(void)state;
	assert_int_equal(flowtab_new(0, &t), -EINVAL);
	assert_int_equal(flowtab_new((1u << 24) + 1, &t), -EINVAL);
	flowtab_free(NULL);
}

/* IPFIX interim records: each reports what grew since the last; the final one the rest. */
static void test_interim(void **state)
{
	struct flowtab *t = NULL;
	struct ct_flow f = flow(9, 1000, 5000);
	struct flow_ctr d, done, fold, late;
	uint64_t since = 0;
	const uint64_t s = 1000000000ull;

	(void)state;
	assert_int_equal(flowtab_new(64, &t), 0);
	f.start_ns = 100 * s;
	/* Untracked: never due, nothing exported. */
	assert_false(flowtab_interim(t, &f, 200 * s, 10 * s, &d, &since));
	assert_int_equal(flowtab_open(t, &f, 0), 1);
	/* Not before the interval has passed since the start; never with interval 0. */
	assert_false(flowtab_interim(t, &f, 105 * s, 10 * s, &d, &since));
	assert_false(flowtab_interim(t, &f, 200 * s, 0, &d, &since));
	assert_true(flowtab_interim(t, &f, 110 * s, 10 * s, &d, &since));
	assert_int_equal(since, 100 * s);
	assert_int_equal(d.bytes_out, 1000);
	assert_int_equal(d.bytes_in, 5000);
	f.bytes_out = 1500;
	f.bytes_in = 9000;
	assert_false(flowtab_interim(t, &f, 119 * s, 10 * s, &d, &since));
	assert_true(flowtab_interim(t, &f, 120 * s, 10 * s, &d, &since));
	assert_int_equal(since, 110 * s);
	assert_int_equal(d.bytes_out, 500);
	assert_int_equal(d.bytes_in, 4000);
	done = flowtab_exported(t, &f, &since);
	assert_int_equal(since, 120 * s);
	assert_int_equal(done.bytes_out, 1500);
	/* The close: the final record reports the rest; no interim after it. */
	f.bytes_out = 1600;
	assert_int_equal(flowtab_close(t, &f, &fold), 1);
	d = flowtab_ctr(&f);
	d = flowtab_ctr_sub(&d, &done);
	assert_int_equal(d.bytes_out, 100);
	assert_int_equal(d.bytes_in, 0);
	assert_false(flowtab_interim(t, &f, 500 * s, 10 * s, &d, &since));
	assert_true(flowtab_end(t, &f, &fold, &late));
	/* Gone: nothing exported, nothing due. */
	done = flowtab_exported(t, &f, &since);
	assert_true(flowtab_ctr_zero(&done));
	assert_int_equal(since, 0);
	flowtab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_then_end),
		cmocka_unit_test(test_close_then_destroy),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_opened_name),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_interim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
