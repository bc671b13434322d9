/*
 * fuzz_ct - the kernel message decoders of the audit trail (ctnetlink
 * entries and nfnetlink_log packets, netd/trail/ctmsg.c) on arbitrary bytes,
 * then the record bodies built from whatever parsed.  The input is a
 * stream of netlink messages, walked the way acct.c/nflog.c walk a recv()
 * buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/trail/ctmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const void *msg, size_t len, void *arg)
{
	struct ct_flow f;
	struct ct_logpkt p;
	json_t *o;
	int r;

	(void)arg;
	r = ct_parse(msg, len, &f);
	if (r == CT_EV_NEW || r == CT_EV_DESTROY) {
		o = ct_conn_json(&f, "sb", "pol", NULL, 1);
		if (!o)
			abort();
		json_decref(o);
	} else if (r != -EBADMSG && r != -EPROTONOSUPPORT) {
		abort();
	}
	r = ct_parse_log(msg, len, &p);
	if (r == 0) {
		if (strnlen(p.prefix, sizeof(p.prefix)) >= sizeof(p.prefix))
			abort();
		o = ct_deny_json(&p, "sb", "pol", "d", "r", 0, NULL);
		if (!o)
			abort();
		json_decref(o);
	} else if (r != -EBADMSG && r != -EPROTONOSUPPORT) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Netlink messages are 4-byte aligned in a recv() buffer. */
	uint32_t *copy;

	if (size > (1 << 16))
		return 0;
	copy = malloc(size + 4);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	/* Also walked with a sequence number, as a dump reply is. */
	ct_walk(copy, size, 0, one, NULL);
	ct_walk(copy, size, 1, one, NULL);
	free(copy);
	return 0;
}
