/*
 * fuzz_cni_ipam - the IPAM plugin's ADD result, as netd-cni reads it in
 * interface mode (bytes another program printed).  A success must hold at
 * least one address with its gateway and prefix length in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cni-plugin/cni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_err err = { 0 };
	struct cni_ipam ip;
	json_t *res = json_loadb((const char *)data, size, 0, NULL);

	if (!res)
		return 0;
	memset(&ip, 0, sizeof(ip));
	if (cni_ipam_parse(res, &ip, &err) == 0) {
		if (!ip.ipv4[0] && !ip.ipv6[0])
			abort();
		if ((ip.ipv4[0] && (!ip.gateway4[0] || ip.plen4 > 32)) ||
		    (ip.ipv6[0] && (!ip.gateway6[0] || ip.plen6 > 128)))
			abort();
	} else if (!err.msg[0]) {
		abort();
	}
	json_decref(res);
	return 0;
}
