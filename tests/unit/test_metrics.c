/*
 * test_metrics - the exposition writer (HELP/TYPE, label escaping, the
 * histogram's cumulative buckets), the /proc/self/stat parser, the
 * metrics_listen request classifier, and deny folding (netd/trail/denyfold.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/trail/denyfold.h"
#include "netd/common/metrics.h"
#include "netd/api/metrics_http.h"

static char *capture(void (*fn)(FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fn(f);
	fclose(f);
	return text;
}

static void write_some(FILE *f)
{
	const char *l[] = { "sandbox", "a\"b\\c\nd", "reason", "not-pinned", NULL };
	static const double le[] = { 0.001, 0.01 };
	static const uint64_t counts[] = { 2, 3, 1 };

	metrics_family(f, "netd_x_total", "counter", "One\nline \\ here.");
	metrics_u64(f, "netd_x_total", l, 42);
	metrics_family(f, "netd_h_seconds", "histogram", "H.");
	metrics_histogram(f, "netd_h_seconds", le, counts, 2, 0.0125);
}

static void test_writer(void **state)
{
	char *t = capture(write_some);

	(void)state;
	assert_string_equal(t,
			    "# HELP netd_x_total One\\nline \\\\ here.\n"
			    "# TYPE netd_x_total counter\n"
			    "netd_x_total{sandbox=\"a\\\"b\\\\c\\nd\",reason=\"not-pinned\"} 42\n"
			    "# HELP netd_h_seconds H.\n"
			    "# TYPE netd_h_seconds histogram\n"
			    "netd_h_seconds_bucket{le=\"0.001\"} 2\n"
			    "netd_h_seconds_bucket{le=\"0.01\"} 5\n"
			    "netd_h_seconds_bucket{le=\"+Inf\"} 6\n"
			    "netd_h_seconds_sum 0.012500000000000001\n"
			    "netd_h_seconds_count 6\n");
	free(t);
}

static void test_proc_stat(void **state)
{
	/* proc(5) fields; comm with a space and a ')' in it. */
	const char line[] = "4242 (ne)td x) S 1 4242 4242 0 -1 4194560 300 0 0 0 "
			    "150 50 0 0 20 0 3 0 987654 123456789 2500 18446744073709551615";
	uint64_t cpu, start, vsize, rss;

	(void)state;
	assert_int_equal(metrics_proc_stat(line, &cpu, &start, &vsize, &rss), 0);
	assert_int_equal(cpu, 200);
	assert_int_equal(start, 987654);
	assert_int_equal(vsize, 123456789);
	assert_int_equal(rss, 2500);
	assert_int_equal(metrics_proc_stat("4242 (netd S 1", &cpu, &start, &vsize, &rss), -EINVAL);
	assert_int_equal(metrics_proc_stat("4242 (netd) S 1 2 3", &cpu, &start, &vsize, &rss),
			 -EINVAL);
	assert_int_equal(metrics_proc_stat(NULL, &cpu, &start, &vsize, &rss), -EINVAL);
}

static int verdict(const char *req, int *head)
{
	struct metrics_http_req r;
	int n = metrics_http_parse(req, strlen(req), &r);

	if (n == 0)
		return 0;
	if (head)
		*head = r.head;
	return (int)r.verdict;
}

static void test_http_parse(void **state)
{
	int head = -1;

	(void)state;
	assert_int_equal(verdict("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &head), 200);
	assert_int_equal(head, 0);
	assert_int_equal(verdict("HEAD /metrics HTTP/1.0\r\n\r\n", &head), 200);
	assert_int_equal(head, 1);
	assert_int_equal(verdict("GET /metrics?x=1 HTTP/1.1\n\n", NULL), 200);
	assert_int_equal(verdict("GET / HTTP/1.1\r\n\r\n", NULL), 404);
	assert_int_equal(verdict("GET /metricsx HTTP/1.1\r\n\r\n", NULL), 404);
	assert_int_equal(verdict("GET /v1/status HTTP/1.1\r\n\r\n", NULL), 404);
	assert_int_equal(verdict("POST /metrics HTTP/1.1\r\n\r\n", NULL), 405);
	assert_int_equal(verdict("DELETE /v1/sandboxes/x HTTP/1.1\r\n\r\n", NULL), 405);
	assert_int_equal(verdict("GET /metrics\r\n\r\n", NULL), 400);	/* HTTP/0.9 */
	assert_int_equal(verdict("GET  /metrics HTTP/1.1\r\n\r\n", NULL), 400);
	assert_int_equal(verdict("G(T /metrics HTTP/1.1\r\n\r\n", NULL), 400);
	assert_int_equal(verdict("GET /metrics HTTP/2.0\r\n\r\n", NULL), 400);
	assert_int_equal(verdict("GET /metrics HTTP/1.1\r\nHost: x\r\n", NULL), 0);	/* more */
	assert_int_equal(verdict("", NULL), 0);
}

static struct ct_logpkt syn(uint16_t sport)
{
	struct ct_logpkt p;

	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_TCP;
	p.src.family = p.dst.family = AF_INET;
	p.src.a[0] = 10, p.src.a[3] = 2;
	p.dst.a[0] = 203, p.dst.a[3] = 66;
	p.sport = sport;
	p.dport = 80;
	return p;
}

static void test_denyfold(void **state)
{
	struct denyfold *d;
	struct ct_logpkt p = syn(40000), q = syn(40001);
	struct denyfold_rec r;

	(void)state;
	assert_int_equal(denyfold_new(&d), 0);
	/* A SYN and its retransmits at +1 s and +3 s: one attempt. */
	assert_false(denyfold_join(d, 3, &p, "not-pinned", 1000, 1000));
	assert_false(denyfold_add(d, 3, &p, "not-pinned", 7, 1000, 1000, &r));
	assert_true(denyfold_join(d, 3, &p, "not-pinned", 2000, 2000));
	assert_true(denyfold_join(d, 3, &p, "not-pinned", 4000, 4000));
	/* Another port, another sandbox, another reason: other attempts. */
	assert_false(denyfold_join(d, 3, &q, "not-pinned", 4000, 4000));
	assert_false(denyfold_join(d, 4, &p, "not-pinned", 4000, 4000));
	assert_false(denyfold_join(d, 3, &p, "quota", 4000, 4000));
	assert_false(denyfold_take(d, 6000, -1, false, &r));	/* not quiet long enough */
	assert_true(denyfold_take(d, 7001, -1, false, &r));
	assert_int_equal(r.span.count, 3);
	assert_int_equal(r.span.first_ns, 1000);
	assert_int_equal(r.span.last_ns, 4000);
	assert_int_equal(r.suppressed, 7);
	assert_int_equal(r.slot, 3);
	assert_false(denyfold_take(d, 7001, -1, false, &r));
	/* After a gap longer than DENYFOLD_GAP_MS a packet is a new attempt. */
	assert_false(denyfold_add(d, 3, &p, "not-pinned", 0, 10000, 10000, &r));
	assert_false(denyfold_join(d, 3, &p, "not-pinned", 14000, 14000));
	assert_true(denyfold_add(d, 3, &p, "not-pinned", 0, 14000, 14000, &r));	/* old one out */
	assert_int_equal(r.span.count, 1);
	/* A sandbox going: its attempts are taken whatever their age. */
	assert_true(denyfold_take(d, 14000, 3, false, &r));
	assert_int_equal(denyfold_pending(d), 0);
	/* Full: the oldest is pushed out, never lost. */
	for (unsigned int i = 0; i < DENYFOLD_CAP - 1; i++) {
		struct ct_logpkt x = syn((uint16_t)i);

		assert_false(denyfold_add(d, 1, &x, "not-pinned", 0, 20000 + i, 0, &r));
	}
	assert_true(denyfold_add(d, 1, &q, "to-host", 0, 30000, 0, &r));
	assert_int_equal(r.pkt.sport, 0);	/* the oldest */
	assert_int_equal(denyfold_pending(d), DENYFOLD_CAP - 1);
	while (denyfold_take(d, 0, -1, true, &r))
		;
	assert_int_equal(denyfold_pending(d), 0);
	denyfold_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_http_parse),
		cmocka_unit_test(test_denyfold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
