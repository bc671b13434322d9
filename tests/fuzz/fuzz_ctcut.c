/*
 * fuzz_ctcut - the conntrack dump parser of a policy reload's connection
 * cut (netd/trail/ctcut.c: dump_cb(), parse_ip(), parse_proto(), hit_add()) on
 * arbitrary bytes, run through nlbuf_walk() as ct_wait() runs a recv()
 * buffer.  Once for ctcut_run() (a list of cut destinations) and once for
 * ctcut_source() (every entry from the source).
 *
 * The callbacks are static (only a ctnetlink socket reaches them), so this
 * harness includes netd/trail/ctcut.c; the library archive supplies the rest.
 *
 * Asserts: at most CTCUT_MAX hits; each kept tuple is a whole attribute of
 * at most CTCUT_TUPLE_MAX bytes whose original source, parsed again from
 * the copy, is the sandbox address; with a cut list, its protocol, port
 * and destination are on the list.
 */
#include "netd/trail/ctcut.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The seeds' sandbox and destinations (tests/fuzz/corpus/fuzz_ct too). */
static const struct pinreg_cut cuts[] = {
	{ .addr = { .family = AF_INET, .a = { 198, 51, 100, 10 } }, .proto = IPPROTO_TCP, .port = 443 },
	{ .addr = { .family = AF_INET, .a = { 203, 0, 113, 53 } }, .proto = IPPROTO_UDP, .port = 53 },
	{ .addr = { .family = AF_INET6, .a = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 } },
	  .proto = IPPROTO_TCP, .port = 443 },
};

static void hits_check(const struct dump_ctx *c)
{
	if (c->n_hits > CTCUT_MAX)
		abort();
	for (size_t i = 0; i < c->n_hits; i++) {
		const struct hit *h = &c->hits[i];
		const struct nlattr *orig = (const struct nlattr *)h->tuple, *a;
		struct tuple t = { 0 };
		bool listed = false;

		if (h->len < sizeof(*orig) || h->len > CTCUT_TUPLE_MAX || orig->nla_len != h->len ||
		    mnl_attr_get_type(orig) != CTA_TUPLE_ORIG)
			abort();
		mnl_attr_for_each_nested(a, orig) {
			if (mnl_attr_get_type(a) == CTA_TUPLE_IP)
				parse_ip(a, &t);
			else if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO)
				parse_proto(a, &t);
		}
		if (!addr_equal(&t.s, c->src))
			abort();
		if (c->all)
			continue;
		for (size_t k = 0; k < c->n; k++)
			listed |= c->cut[k].proto == t.proto && c->cut[k].port == t.dport &&
				  addr_equal(&c->cut[k].addr, &t.d);
		if (!listed || !t.have_ports)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct addr v4 = { .family = AF_INET, .a = { 10, 87, 0, 2 } };
	static const struct addr v6 = { .family = AF_INET6, .a = { 0xfd, 0x00, 0x00, 0x87, [15] = 2 } };
	static struct hit *hits;
	struct dump_ctx c;
	uint32_t *copy;

	if (size > 32768)	/* the kernel's largest dump skb */
		return 0;
	if (!hits && !(hits = calloc(CTCUT_MAX, sizeof(*hits))))
		return 0;
	copy = malloc(size + 4);	/* 4-byte aligned, as a recv() buffer */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (int pass = 0; pass < 4; pass++) {
		c = (struct dump_ctx){ .src = pass & 2 ? &v6 : &v4, .cut = cuts,
				       .n = sizeof(cuts) / sizeof(cuts[0]), .all = pass & 1,
				       .hits = hits };
		(void)nlbuf_walk(copy, size, 0, 0, dump_cb, &c);	/* as ct_wait() */
		hits_check(&c);
	}
	free(copy);
	return 0;
}
