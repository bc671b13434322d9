/*
 * fuzz_ctlreq - POST /v1/sandboxes and POST /v1/verify bodies: anything
 * an API client sends.
 * Checks that a success has what the daemon relies on and a failure says
 * why, and that nothing leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/api/ctl.h"
#include "netd/api/ctlreq.h"
#include "netd/link/tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sandbox_request sr;
	char err[512] = "";
	json_t *obj = NULL;
	int r;

	if (size > CTL_MAX_BODY)
		return 0;
	r = ctlreq_sandbox((const char *)data, size, &sr, &obj, err, sizeof(err));
	if (r == 0) {
		if (!obj || !sr.name || !sr.policy)
			abort();
		if (sr.attach_host_ifname && !sr.attach_ipv4 && !sr.attach_ipv6)
			abort();
		/* A tap: never ownerless, never with a netns or an attachment. */
		if (sr.tap && (sr.tap_owner == UINT32_MAX || sr.netns || sr.ifname ||
			       sr.attach_host_ifname || sr.addr_ipv4 || sr.addr_ipv6 ||
			       sr.tap_queues > TAP_QUEUES_MAX))
			abort();
		if (!sr.tap && (sr.tap_name || sr.tap_queues || sr.tap_mtu))
			abort();
		if (!workload_valid(&sr.workload))
			abort();
		/* Pointers stay valid while obj lives. */
		if (strlen(sr.name) > CTL_MAX_BODY || strlen(sr.policy) > CTL_MAX_BODY)
			abort();
	} else {
		if (obj || err[0] == '\0' || sr.name || !workload_empty(&sr.workload))
			abort();
	}
	json_decref(obj);

	/* The same bytes as a POST /v1/verify body. */
	{
		struct verify_request vr;
		size_t i;
		json_t *v;

		err[0] = '\0';
		obj = NULL;
		r = ctlreq_verify((const char *)data, size, &vr, &obj, err, sizeof(err));
		if (r == 0) {
			/* Exactly one of "all" or names, each a string of 1..CTLREQ_SEG_MAX bytes. */
			if (!obj || vr.all == (json_array_size(vr.names) > 0))
				abort();
			json_array_foreach(vr.names, i, v)
				if (!json_is_string(v) || !json_string_length(v) ||
				    json_string_length(v) > CTLREQ_SEG_MAX)
					abort();
		} else if (obj || err[0] == '\0' || vr.names || vr.all) {
			abort();
		}
		json_decref(obj);
	}
	return 0;
}
