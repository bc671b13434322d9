/*
 * workload - who a sandbox is for, as the container runtime names it: the
 * container ID (CNI_CONTAINERID) and, from CNI_ARGS, the Kubernetes pod's
 * namespace, name and UID.  netd-cni reads them, the control API and the
 * state file carry them, `netd sandbox show`, the audit log's `sandbox`
 * records and netd_sandbox_info show them.  Pure: the one
 * place that says what a valid value is, for the plugin and netd alike.
 *
 * Every field is optional ("" = not known).  Values follow the CNI name
 * rule, ^[A-Za-z0-9][A-Za-z0-9_.-]*$ (CNI spec 1.1.0 §2 for
 * CNI_CONTAINERID), which every real value fits: Kubernetes names are
 * RFC 1123 labels and subdomains, UIDs are UUIDs, podman's and nerdctl's
 * names and IDs use the same set.  So a value is safe in a table column,
 * a log line and a Prometheus label as it is.
 */
#ifndef NETD_COMMON_WORKLOAD_H
#define NETD_COMMON_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define WORKLOAD_CONTAINER_ID_MAX 256	/* bytes; libcni's IDs are 64 hex, nerdctl's "<ns>-<64 hex>" */
#define WORKLOAD_POD_NAMESPACE_MAX 63	/* an RFC 1123 label (Kubernetes' limit) */
#define WORKLOAD_POD_NAME_MAX 253	/* an RFC 1123 subdomain (Kubernetes' limit) */
#define WORKLOAD_POD_UID_MAX 64		/* a UUID is 36; a static pod's a 32-hex hash */

enum workload_field {
	WORKLOAD_CONTAINER_ID,
	WORKLOAD_POD_NAMESPACE,
	WORKLOAD_POD_NAME,
	WORKLOAD_POD_UID,
	WORKLOAD_FIELDS
};

struct workload {
	char container_id[WORKLOAD_CONTAINER_ID_MAX + 1];
	char pod_namespace[WORKLOAD_POD_NAMESPACE_MAX + 1];
	char pod_name[WORKLOAD_POD_NAME_MAX + 1];
	char pod_uid[WORKLOAD_POD_UID_MAX + 1];
};

/*
 * workload_key() - @f's name as a JSON key, state file key and metrics
 * label: "container_id", "pod_namespace", "pod_name", "pod_uid".
 * Static storage.
 */
const char *workload_key(enum workload_field f);

/*
 * workload_cni_arg() - the CNI_ARGS key @f comes from ("K8S_POD_NAMESPACE",
 * "K8S_POD_NAME", "K8S_POD_UID"), or NULL for the container ID (which is
 * CNI_CONTAINERID).  Static storage.
 */
const char *workload_cni_arg(enum workload_field f);

/* workload_max() - the longest value of @f, in bytes. */
size_t workload_max(enum workload_field f);

/*
 * workload_get() - @w's value of @f ("" if not known); borrowed from @w.
 */
const char *workload_get(const struct workload *w, enum workload_field f);

/*
 * workload_set() - check @value for @f and copy it into @w.  @value ""
 * clears the field.  @err/@errsz: on failure, why, naming the key
 * (workload_key()) and the rule, never quoting the value (the caller
 * quotes it if it wants).
 * Return: 0; -EINVAL (a byte outside the name rule, or a leading '.',
 * '-' or '_'); -ENAMETOOLONG (over workload_max(@f)).
 */
int workload_set(struct workload *w, enum workload_field f, const char *value, char *err,
		 size_t errsz);

/*
 * workload_json() - set @w's fields on JSON object @o under their keys
 * (workload_key()): a field not known is null if @nulls (a fixed shape,
 * as the API's), else left out (short records, as the audit log's).  Out
 * of memory leaves a field out.
 */
void workload_json(const struct workload *w, json_t *o, bool nulls);

/*
 * workload_valid() - true if every field of @w is one workload_set() would
 * keep (what a parser that filled @w must guarantee; the fuzz targets
 * check it).
 */
bool workload_valid(const struct workload *w);

/* workload_empty() - true if @w has no field set. */
bool workload_empty(const struct workload *w);

#endif
