/*
 * workload - the container/pod a sandbox is for: field names, limits and
 * the one validity rule (workload.h).  Pure.
 */
#include "common/workload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *key, *cni_arg;
	size_t max;
	size_t off;
} fields[WORKLOAD_FIELDS] = {
	[WORKLOAD_CONTAINER_ID] = { "container_id", NULL, WORKLOAD_CONTAINER_ID_MAX,
				    offsetof(struct workload, container_id) },
	[WORKLOAD_POD_NAMESPACE] = { "pod_namespace", "K8S_POD_NAMESPACE",
				     WORKLOAD_POD_NAMESPACE_MAX,
				     offsetof(struct workload, pod_namespace) },
	[WORKLOAD_POD_NAME] = { "pod_name", "K8S_POD_NAME", WORKLOAD_POD_NAME_MAX,
				offsetof(struct workload, pod_name) },
	[WORKLOAD_POD_UID] = { "pod_uid", "K8S_POD_UID", WORKLOAD_POD_UID_MAX,
			       offsetof(struct workload, pod_uid) },
};

const char *workload_key(enum workload_field f)
{
	return fields[f].key;
}

const char *workload_cni_arg(enum workload_field f)
{
	return fields[f].cni_arg;
}

size_t workload_max(enum workload_field f)
{
	return fields[f].max;
}

const char *workload_get(const struct workload *w, enum workload_field f)
{
	return (const char *)w + fields[f].off;
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int workload_set(struct workload *w, enum workload_field f, const char *value, char *err,
		 size_t errsz)
{
	char *dst = (char *)w + fields[f].off;
	size_t n = strnlen(value, fields[f].max + 1);

	if (n > fields[f].max) {
		snprintf(err, errsz, "\"%s\" is longer than %zu bytes", fields[f].key, fields[f].max);
		return -ENAMETOOLONG;
	}
	/* CNI spec 1.1.0 §2 (CNI_CONTAINERID): ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$ */
	for (size_t i = 0; i < n; i++)
		if (!alnum(value[i]) && (i == 0 || (value[i] != '_' && value[i] != '.' &&
						     value[i] != '-'))) {
			snprintf(err, errsz, "\"%s\" must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
				 fields[f].key);
			return -EINVAL;
		}
	memcpy(dst, value, n);
	dst[n] = '\0';
	return 0;
}

bool workload_valid(const struct workload *w)
{
	struct workload again;
	char why[128];

	memset(&again, 0, sizeof(again));
	for (int f = 0; f < WORKLOAD_FIELDS; f++) {
		const char *v = workload_get(w, (enum workload_field)f);

		/* Terminated inside its field, then the rule, then the same bytes. */
		if (!memchr(v, '\0', fields[f].max + 1) ||
		    workload_set(&again, (enum workload_field)f, v, why, sizeof(why)) < 0 ||
		    strcmp(v, workload_get(&again, (enum workload_field)f)) != 0)
			return false;
	}
	return true;
}

bool workload_empty(const struct workload *w)
{
	for (int f = 0; f < WORKLOAD_FIELDS; f++)
		if (workload_get(w, (enum workload_field)f)[0])
			return false;
	return true;
}

void workload_json(const struct workload *w, json_t *o, bool nulls)
{
	for (int f = 0; f < WORKLOAD_FIELDS; f++) {
		const char *v = workload_get(w, (enum workload_field)f);

		if (v[0] || nulls)
			json_object_set_new(o, workload_key((enum workload_field)f),
					    v[0] ? json_string(v) : json_null());
	}
}
