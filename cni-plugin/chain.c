/*
 * chain - pure conflist surgery for the installer (see chain.h).
 */
#include "cni-plugin/chain.h"

#include <errno.h>
#include <string.h>

static bool is_ours(const json_t *p)
{
	const char *t = json_string_value(json_object_get(p, "type"));

	return t && strcmp(t, CNI_CHAIN_TYPE) == 0;
}

int cni_chain_merge(json_t *conflist, const json_t *entry, struct cni_err *err)
{
	json_t *plugins = json_object_get(conflist, "plugins"), *p, *copy;
	const char *mode = json_string_value(json_object_get(entry, "mode"));
	size_t i, at = (size_t)-1;

	if (!json_is_object(entry) || !is_ours(entry) || !mode || strcmp(mode, "chained") != 0)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "the entry to chain must be {\"type\": \"netd-cni\", \"mode\": "
				   "\"chained\", ...}");
	if (!json_is_object(conflist) || !json_is_array(plugins) || !json_array_size(plugins))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "not a conflist with a non-empty \"plugins\" array (a single-plugin "
				   ".conf cannot be chained: convert it to a .conflist)");
	json_array_foreach(plugins, i, p) {
		if (!json_is_object(p))
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "plugins[%zu] is not an object", i);
		if (is_ours(p) && at == (size_t)-1)
			at = i;
	}
	if (at == 0)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "netd-cni is the first plugin: chained mode needs the cluster's "
				   "own plugin before it");
	if (at != (size_t)-1 && json_equal(json_array_get(plugins, at), (json_t *)entry))
		return 0;
	copy = json_deep_copy(entry);
	if (!copy)
		return -ENOMEM;
	if (at == (size_t)-1)
		return json_array_append_new(plugins, copy) < 0 ? -ENOMEM : 1;
	return json_array_set_new(plugins, at, copy) < 0 ? -ENOMEM : 1;
}

int cni_chain_remove(json_t *conflist)
{
	json_t *plugins = json_object_get(conflist, "plugins");
	int n = 0;

	if (!json_is_array(plugins))
		return -EINVAL;
	for (size_t i = json_array_size(plugins); i-- > 0;)
		if (is_ours(json_array_get(plugins, i))) {
			json_array_remove(plugins, i);
			n++;
		}
	return n;
}
