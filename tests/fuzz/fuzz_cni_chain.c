/*
 * fuzz_cni_chain - the installer's conflist surgery on arbitrary bytes (a
 * node's network config is whatever the cluster's CNI wrote).  After a
 * successful merge the entry is in plugins[] exactly where promised, a
 * second merge changes nothing, and unchaining leaves no netd-cni entry.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cni-plugin/chain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count_ours(json_t *conf)
{
	json_t *p;
	size_t i, n = 0;

	json_array_foreach(json_object_get(conf, "plugins"), i, p) {
		const char *t = json_string_value(json_object_get(p, "type"));

		n += t && strcmp(t, CNI_CHAIN_TYPE) == 0;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *conf = json_loadb((const char *)data, size, 0, NULL);
	json_t *entry = json_pack("{s:s, s:s, s:b}", "type", "netd-cni", "mode", "chained",
				  "optIn", 1);
	struct cni_err err = { 0 };
	size_t before;
	int r;

	if (!conf || !entry)
		goto out;
	before = count_ours(conf);
	r = cni_chain_merge(conf, entry, &err);
	if (r == -EINVAL && (!err.msg[0] || err.code != CNI_ERR_CONFIG))
		abort();
	if (r >= 0) {
		if (count_ours(conf) != (before ? before : 1))
			abort();
		if (cni_chain_merge(conf, entry, &err) != 0)
			abort();
		if (cni_chain_remove(conf) < 1 || count_ours(conf) != 0)
			abort();
	}
out:
	json_decref(conf);
	json_decref(entry);
	return 0;
}
