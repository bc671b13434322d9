/*
 * fuzz_cni_conf - netd-cni's network config decoder on arbitrary bytes,
 * then everything the plugin derives from a config it accepted: policy
 * selection (with the input's tail as CNI_ARGS), the attachment name and
 * the ADD result.  Checks the documented invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cni-plugin/cni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_attachment a = {
		.host_ifname = "nd00001", .ifname = "eth0", .netns = "/proc/1/ns/net",
		.ipv4 = "10.87.0.2", .gateway4 = "10.87.0.1", .plen4 = 30,
	};
	enum cni_policy_source src;
	struct cni_conf c;
	struct cni_err err = { 0 };
	char buf[CNI_POLICY_MAX + 2], name[CNI_SANDBOX_NAME_LEN + 1], args[256];
	const char *p;
	json_t *res;
	size_t n = size < sizeof(args) - 1 ? size : sizeof(args) - 1;

	if (cni_conf_parse((const char *)data, size, &c, &err) < 0) {
		if (err.code < 1 || err.code > 11 || !err.msg[0] || c.root)
			abort();
		return 0;
	}
	if (!c.cni_version || !cni_version_supported(c.cni_version) || !cni_name_valid(c.name) ||
	    !c.type || !c.socket || c.socket[0] != '/' || !c.tombstone_dir)
		abort();
	memcpy(args, data + size - n, n);
	args[n] = '\0';
	p = cni_policy_select(&c, args, buf, sizeof(buf), &src, &err);
	if (p && (!cni_name_valid(p) || strlen(p) > CNI_POLICY_MAX))
		abort();
	/* No policy is either "not opted in" (only with optIn) or an error. */
	if (!p && (src == CNI_POLICY_NONE ? !c.opt_in : !err.msg[0]))
		abort();
	cni_sandbox_name(c.name, "cid", "eth0", name);
	if (strlen(name) != CNI_SANDBOX_NAME_LEN)
		abort();
	res = cni_result_new(&c, &a);
	if (res) {
		char *text = json_dumps(res, JSON_COMPACT);

		free(text);
		json_decref(res);
	}
	cni_conf_done(&c);
	return 0;
}
