/*
 * fuzz_config - config_parse() on arbitrary bytes, on top of the defaults.
 * Checks that a failed parse leaves the config untouched and that a
 * successful one respects the documented ranges.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/model/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, before;
	struct diag err;
	int r;

	if (config_init(&c) < 0)
		return 0;
	before = c;
	r = config_parse(&c, (const char *)data, size, "fuzz.yaml", &err);
	if (r < 0) {
		if (memcmp(&c, &before, sizeof(c)) != 0)
			abort();
	} else {
		if (c.min_ttl_s < 1 || c.min_ttl_s > c.max_ttl_s || c.max_ttl_s > CONFIG_MAX_TTL_S ||
		    c.dns_port == 0 || c.n_upstream > CONFIG_MAX_UPSTREAM ||
		    c.pool4.addr.family != AF_INET || c.pool4.plen < 8 || c.pool4.plen > 28 ||
		    (c.pool6_enabled && (c.pool6.plen < 8 || c.pool6.plen > 64)) ||
		    !c.socket || !c.socket[0] || strlen(c.socket) > 107 ||
		    (c.deny_rcode != 3 && c.deny_rcode != 5) ||
		    memchr(c.egress_interface, '\0', sizeof(c.egress_interface)) == NULL)
			abort();
		for (unsigned int i = 0; i < c.n_upstream; i++)
			if (c.upstream[i].port == 0)
				abort();
	}
	config_done(&c);
	return 0;
}
