/*
 * fuzz_sni - sni_parse() on arbitrary bytes.  Checks the contract: a name
 * only with SNI_NAME/SNI_ECH and then already normalized; the stream fed in
 * two pieces (split where the first byte says) decides the same as the
 * whole; a decided prefix stays decided the same way when more follows
 * (except that a longer stream may only turn "more" into a verdict); and
 * sni_match() of the name against a fixed policy does not crash.  The ECH
 * mark only on an ECH hello (SNI_ECH, or a bad outer name), always on
 * SNI_ECH, the same in pieces; sni_ech_outer() turns SNI_ECH into a name
 * or none, and nothing else.  The same bytes as an IP packet
 * (sniflow_pkt_parse()): the payload lies inside them.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/sni/flow.h"
#include "netd/sni/sni.h"
#include "netd/sni/sni_match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct policy *pol;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sni_stream st;
	static const char yaml[] = "name: f\negress:\n  - domains: [a.example, \"*.b.example\"]\n"
				   "    ports: [443]\n";
	const char *pinned[] = { "a.example", "x.b.example" };
	struct sni_result whole, piece, pre;
	char norm[SNI_NAME_MAX + 1];
	size_t cut;

	if (!pol) {
		struct diag err;

		if (policy_parse(yaml, strlen(yaml), "f.yaml", &pol, &err) < 0)
			abort();
	}
	sni_parse(data, size, &whole);
	if (whole.status == SNI_NAME || (whole.status == SNI_ECH && whole.name[0])) {
		if (sni_name_norm(whole.name, strlen(whole.name), norm) < 0 ||
		    strcmp(norm, whole.name) != 0)
			abort();
		sni_match(pol, pinned, 2, IPPROTO_TCP, 443, whole.name);
	} else if (whole.status != SNI_ECH && whole.name[0]) {
		abort();
	}
	if ((whole.status == SNI_ECH && !whole.ech) ||
	    (whole.ech && whole.status != SNI_ECH && whole.status != SNI_BAD_NAME))
		abort();
	{
		struct sni_result o = whole;

		sni_ech_outer(&o);
		if (whole.status == SNI_ECH ?
			    o.status != (whole.name[0] ? SNI_NAME : SNI_NO_NAME) || !o.ech :
			    o.status != whole.status)
			abort();
		if (strcmp(o.name, whole.name) != 0)
			abort();
	}
	cut = size ? data[0] % (size + 1) : 0;
	sni_stream_init(&st);
	sni_stream_feed(&st, data, cut, &pre);
	sni_stream_feed(&st, data + cut, size - cut, &piece);
	if (piece.status != whole.status || strcmp(piece.name, whole.name) != 0 ||
	    piece.ech != whole.ech)
		abort();
	{
		struct sniflow_pkt p;

		if (sniflow_pkt_parse(data, size, &p) == 0 &&
		    (p.payload < data || p.payload + p.len > data + size))
			abort();
	}
	/* a prefix that decided must agree with the whole */
	sni_parse(data, cut, &pre);
	if (pre.status != SNI_MORE && (pre.status != whole.status || strcmp(pre.name, whole.name)))
		abort();
	return 0;
}
