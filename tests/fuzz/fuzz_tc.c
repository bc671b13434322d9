/*
 * fuzz_tc - the traffic-control reply parser on arbitrary bytes:
 * tc_qdisc_parse() (netd/link/tc.c: kind, TCA_STATS2 and its members) and
 * the callbacks of netd/link/shape.c that read the kernel's answers to a
 * qdisc get and dump and a link dump (shape_get(), shape_dump(),
 * shape_survey()).  The input is one recv() buffer, walked by nlbuf_walk()
 * as rtnl_talk() walks it.  shape.c's callbacks are static, so this
 * harness includes the file (as fuzz_link includes link.c).
 *
 * Asserts: a parsed kind is NUL-terminated within its 16 bytes; a
 * surveyed name within IFNAMSIZ; counts never exceed what was stored.
 */
#include "netd/link/shape.c"

#include "common/nlbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int dumped;

static void on_qdisc(void *ctx, const struct tc_qstats *q)
{
	(void)ctx;
	if (strnlen(q->kind, sizeof(q->kind)) >= sizeof(q->kind))
		abort();
	dumped++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_ctx dc = { .fn = on_qdisc };
	struct survey sv = { 0 };
	struct tc_qstats q = { 0 };
	uint32_t *copy;

	if (size > 32768)
		return 0;
	/* Netlink messages are 4-byte aligned in a recv() buffer. */
	copy = malloc(size + 4);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	nlbuf_walk(copy, size, 0, 0, stats_cb, &q);
	if (strnlen(q.kind, sizeof(q.kind)) >= sizeof(q.kind))
		abort();
	dumped = 0;
	nlbuf_walk(copy, size, 0, 0, dump_cb, &dc);
	if ((unsigned int)dc.n != dumped)
		abort();
	nlbuf_walk(copy, size, 0, 0, survey_link_cb, &sv);
	if (sv.n > sv.cap)
		abort();
	if (sv.n)
		qsort(sv.dev, sv.n, sizeof(*sv.dev), dev_index_cmp);
	nlbuf_walk(copy, size, 0, 0, survey_qdisc_cb, &sv);
	for (size_t i = 0; i < sv.n; i++)
		if (strnlen(sv.dev[i].name, IFNAMSIZ) >= IFNAMSIZ)
			abort();
	free(sv.dev);
	free(copy);
	return 0;
}
