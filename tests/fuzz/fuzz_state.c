/*
 * fuzz_state - statefile_parse() on arbitrary bytes: what a corrupted,
 * truncated or hand-edited STATE_DIR/sandboxes/NAME.json can hold.  On
 * success the parse must be a fixed point of format: parse(format(x))
 * gives back exactly x, and what the restore relies on holds (valid
 * names, an interface name that fits, a slot in range, addresses of the
 * right family, container and pod names that pass workload_set()).  A
 * failure must say why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/daemon/statefile.h"
#include "netd/model/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct statefile a, b;
	char err[256] = "";
	char *text;
	int r;

	r = statefile_parse((const char *)data, size, &a, err, sizeof(err));
	if (r < 0) {
		if (!err[0] || a.name[0])
			abort();
		return 0;
	}
	if (!policy_name_valid(a.name) || !policy_name_valid(a.policy) || !a.ifname[0] ||
	    strlen(a.ifname) > 15 || a.slot >= SANDBOX_MAX)
		abort();
	if ((a.addr4.family && a.addr4.family != AF_INET) ||
	    (a.addr6.family && a.addr6.family != AF_INET6))
		abort();
	if (a.kind == STATEFILE_CHAINED && (!a.host_ifname[0] || (!a.addr4.family && !a.addr6.family)))
		abort();
	if ((a.kind == STATEFILE_IPAM || a.kind == STATEFILE_PEER) &&
	    ((a.addr4.family && (!a.gw4.family || !a.plen4)) ||
	     (a.addr6.family && (!a.gw6.family || !a.plen6))))
		abort();
	/* A peer's MAC is unicast and not zero (tap_mac_parse()); no one else has one. */
	if (a.kind == STATEFILE_PEER ? (a.mac[0] & 1) || !(a.mac[0] | a.mac[1] | a.mac[2] |
							     a.mac[3] | a.mac[4] | a.mac[5]) :
				       (a.mac[0] | a.mac[1] | a.mac[2] | a.mac[3] | a.mac[4] | a.mac[5]))
		abort();
	if (!workload_valid(&a.workload))
		abort();
	text = statefile_format(&a);
	if (!text)
		return 0;	/* out of memory */
	r = statefile_parse(text, strlen(text), &b, err, sizeof(err));
	free(text);
	if (r < 0 || memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	return 0;
}
