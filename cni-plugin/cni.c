/*
 * cni - pure core of netd-cni (see cni.h): config decoding, validation,
 * policy selection, attachment names, result and error JSON.  Never logs,
 * never touches the system.
 */
#include "cni-plugin/cni.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/hash.h"
#include "common/log.h"

static const char *const supported[] = { CNI_SUPPORTED_VERSIONS };

int cni_err_set(struct cni_err *err, int code, const char *msg, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	err->details[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(err->details, sizeof(err->details), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

bool cni_version_supported(const char *v)
{
	for (size_t i = 0; v && i < sizeof(supported) / sizeof(supported[0]); i++)
		if (strcmp(v, supported[i]) == 0)
			return true;
	return false;
}

static bool name_char(char c, bool first)
{
	bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

	return alnum || (!first && (c == '_' || c == '.' || c == '-'));
}

bool cni_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > CNI_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i], i == 0))
			return false;
	return true;
}

bool cni_ifname_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '/' || c == ':' || c <= ' ' || c == 0x7f)
			return false;
	}
	return true;
}

bool cni_ipam_type_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 255 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return false;
	return true;
}

static bool policy_valid(const char *s)
{
	return s && strlen(s) <= CNI_POLICY_MAX && cni_name_valid(s);
}

/* A member that must be a string if present: 1 set, 0 absent, -EINVAL wrong type. */
static int opt_string(json_t *obj, const char *key, const char **out, struct cni_err *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"%s\" must be a string", key);
	*out = json_string_value(v);
	return 1;
}

/* Case-insensitive member lookup (runtimes differ in key casing). */
static json_t *get_ci(json_t *obj, const char *key)
{
	const char *k;
	json_t *v;

	if (!json_is_object(obj))
		return NULL;
	json_object_foreach(obj, k, v)
		if (strcasecmp(k, key) == 0)
			return v;
	return NULL;
}

/*
 * "optIn" (bool) and "namespaces" ({namespace: policy}).  Opting in only
 * makes sense behind another plugin that made the interface (chained), and
 * a default policy would opt every pod in.
 */
static int conf_opt_in(struct cni_conf *c, struct cni_err *err)
{
	json_t *v = json_object_get(c->root, "optIn"), *p;
	const char *k;

	if (v && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "\"optIn\" must be true or false");
		c->opt_in = json_is_true(v);
	}
	if (c->opt_in && c->mode != CNI_MODE_CHAINED)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"optIn\" needs \"mode\": \"chained\" (a pod that does not "
				   "opt in keeps the interface the plugin before netd-cni made)");
	if (c->opt_in && (c->policy || c->default_policy))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"optIn\" with \"%s\" would opt every pod in: drop one of them",
				   c->policy ? "policy" : "defaultPolicy");
	v = json_object_get(c->root, "namespaces");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v) || json_object_size(v) > CNI_NAMESPACES_MAX)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"namespaces\" must be an object {namespace: policy} of at most "
				   "%u entries", CNI_NAMESPACES_MAX);
	json_object_foreach(v, k, p) {
		if (!k[0] || strlen(k) > CNI_K8S_NAMESPACE_MAX || !json_is_string(p) ||
		    !policy_valid(json_string_value(p)))
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "\"namespaces\": entry \"%.64s\" must map a namespace (1-63 "
					   "bytes) to a netd policy name", k);
	}
	c->namespaces = v;
	return 0;
}

void cni_conf_done(struct cni_conf *c)
{
	if (!c)
		return;
	json_decref(c->root);
	memset(c, 0, sizeof(*c));
}

/*
 * Bytes -> a JSON object in @c->root (owned by @c, also on failure: the
 * caller decrefs it).  Duplicate keys are rejected.
 */
static int conf_decode(const char *buf, size_t len, struct cni_conf *c, struct cni_err *err)
{
	json_error_t jerr;

	if (len > CNI_STDIN_MAX)
		return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				   "network config over %u bytes", CNI_STDIN_MAX);
	c->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!c->root)
		return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				   "network config is not JSON: line %d column %d: %s", jerr.line,
				   jerr.column, jerr.text);
	if (!json_is_object(c->root))
		return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				   "network config must be a JSON object");
	return 0;
}

/*
 * "cniVersion": required and one of CNI_SUPPORTED_VERSIONS.  From here on
 * errors answer in that version (@err->version).
 */
static int conf_version(struct cni_conf *c, struct cni_err *err)
{
	int r;

	if ((r = opt_string(c->root, "cniVersion", &c->cni_version, err)) < 0)
		return r;
	if (!c->cni_version)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"cniVersion\" is required");
	if (!cni_version_supported(c->cni_version)) {
		char q[64];

		snprintf(q, sizeof(q), "%s", c->cni_version);
		c->cni_version = NULL;	/* the error answers in our own version */
		return cni_err_set(err, CNI_ERR_VERSION, "Incompatible CNI version",
				   "config is \"%s\", plugin supports 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0", q);
	}
	c->ip_version_field = c->cni_version[0] == '0';
	snprintf(err->version, sizeof(err->version), "%s", c->cni_version);
	return 0;
}

/*
 * The plugin object's string keys: every one is type-checked before any
 * is validated, so a wrong type is reported first.  @mode: "mode", borrowed
 * from @c->root, or NULL; conf_mode() reads it.
 */
static int conf_plugin_keys(struct cni_conf *c, const char **mode, struct cni_err *err)
{
	int r;

	if ((r = opt_string(c->root, "name", &c->name, err)) < 0 ||
	    (r = opt_string(c->root, "type", &c->type, err)) < 0 ||
	    (r = opt_string(c->root, "socket", &c->socket, err)) < 0 ||
	    (r = opt_string(c->root, "tombstoneDir", &c->tombstone_dir, err)) < 0 ||
	    (r = opt_string(c->root, "mode", mode, err)) < 0 ||
	    (r = opt_string(c->root, "policy", &c->policy, err)) < 0 ||
	    (r = opt_string(c->root, "defaultPolicy", &c->default_policy, err)) < 0)
		return r;
	if (!cni_name_valid(c->name))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   c->name ? "\"name\" must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ (max 256 bytes)" :
					     "\"name\" is required");
	if (!c->type || !c->type[0] || strchr(c->type, '/'))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"type\" is required and must be a binary name without '/'");
	if (!c->socket)
		c->socket = CNI_DEFAULT_SOCKET;
	if (c->socket[0] != '/' || strlen(c->socket) > 107)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"socket\" must be an absolute path of at most 107 bytes");
	if (!c->tombstone_dir)
		c->tombstone_dir = CNI_DEFAULT_TOMBSTONE_DIR;
	if (c->tombstone_dir[0] != '/' || strlen(c->tombstone_dir) > 1024)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"tombstoneDir\" must be an absolute path of at most 1024 bytes");
	return 0;
}

/* "mode" (@mode, NULL = "interface") and the policy names the config gives. */
static int conf_mode(struct cni_conf *c, const char *mode, struct cni_err *err)
{
	if (!mode || strcmp(mode, "interface") == 0)
		c->mode = CNI_MODE_INTERFACE;
	else if (strcmp(mode, "chained") == 0)
		c->mode = CNI_MODE_CHAINED;
	else
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"mode\" must be \"interface\" or \"chained\"");
	if ((c->policy && !policy_valid(c->policy)) ||
	    (c->default_policy && !policy_valid(c->default_policy)))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"policy\"/\"defaultPolicy\" must be a netd policy name (1-64 of [A-Za-z0-9_.-])");
	return 0;
}

/* "prevResult" (spec §4 chained plugins): an object if present. */
static int conf_prev_result(struct cni_conf *c, struct cni_err *err)
{
	json_t *v = json_object_get(c->root, "prevResult");

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				   "\"prevResult\" must be an object");
	c->prev_result = v;
	return 0;
}

/*
 * Pod annotations reach us only when we declare the capability
 * (containerd >= 1.5); runtimeConfig holds exactly the declared
 * capabilities the runtime had values for (spec §3).
 */
static int conf_runtime_config(struct cni_conf *c, struct cni_err *err)
{
	json_t *rc = get_ci(c->root, "runtimeConfig"), *v = get_ci(rc, CNI_ANNOTATION_CAP), *p;
	json_t *bw = get_ci(rc, "bandwidth");
	uint64_t *rate[2] = { &c->rc_egress_bps, &c->rc_ingress_bps };
	static const char *const key[2] = { "egressRate", "ingressRate" };

	/* The bandwidth capability (spec conventions): bits per second, bursts unused. */
	for (int i = 0; json_is_object(bw) && i < 2; i++) {
		json_t *r = get_ci(bw, key[i]);

		if (!r || json_is_null(r))
			continue;
		if (!json_is_integer(r) || json_integer_value(r) <= 0)
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "runtimeConfig bandwidth.%s must be a positive number of "
					   "bits per second", key[i]);
		*rate[i] = (uint64_t)json_integer_value(r);
	}
	if (!json_is_object(v))
		return 0;
	p = json_object_get(v, CNI_ANNOTATION_KEY);
	if (p && !json_is_string(p))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "pod annotation %s must be a string", CNI_ANNOTATION_KEY);
	if (p)
		c->annotation_policy = json_string_value(p);
	return 0;
}

/* Interface mode may delegate addressing to an IPAM plugin (spec §4). */
static int conf_ipam(struct cni_conf *c, struct cni_err *err)
{
	json_t *v = json_object_get(c->root, "ipam"), *t;

	if (!v || json_is_null(v) || c->mode != CNI_MODE_INTERFACE)
		return 0;
	t = json_object_get(v, "type");
	if (!json_is_object(v) || !json_is_string(t) || !cni_ipam_type_valid(json_string_value(t)))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"ipam\" must be an object whose \"type\" names a plugin "
				   "binary in CNI_PATH (no '/')");
	c->ipam_type = json_string_value(t);
	return 0;
}

/* GC's valid attachments (spec 1.1.0 §2 GC): [{containerID, ifname}, ...]. */
static int conf_valid_attachments(struct cni_conf *c, struct cni_err *err)
{
	json_t *v, *a;
	size_t i;

	/* libcni sends both; the spec text used the second name (libcni #1101). */
	v = json_object_get(c->root, "cni.dev/valid-attachments");
	if (!v)
		v = json_object_get(c->root, "cni.dev/attachments");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				   "cni.dev/valid-attachments must be an array");
	json_array_foreach(v, i, a) {
		json_t *cid = json_object_get(a, "containerID"), *ifn = json_object_get(a, "ifname");

		if (!json_is_string(cid) || !json_is_string(ifn))
			return cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
					   "cni.dev/valid-attachments[%zu] needs string containerID and ifname",
					   i);
	}
	c->valid_attachments = v;
	return 0;
}

/*
 * The steps run in this order, and the first error wins: which error a
 * config with several faults gets is part of the behaviour.
 */
int cni_conf_parse(const char *buf, size_t len, struct cni_conf *out, struct cni_err *err)
{
	struct cni_conf c = { 0 };
	const char *mode = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	err->version[0] = '\0';
	if ((r = conf_decode(buf, len, &c, err)) < 0 || (r = conf_version(&c, err)) < 0 ||
	    (r = conf_plugin_keys(&c, &mode, err)) < 0 || (r = conf_mode(&c, mode, err)) < 0 ||
	    (r = conf_opt_in(&c, err)) < 0 || (r = conf_prev_result(&c, err)) < 0 ||
	    (r = conf_runtime_config(&c, err)) < 0 || (r = conf_ipam(&c, err)) < 0 ||
	    (r = conf_valid_attachments(&c, err)) < 0) {
		json_decref(c.root);
		return r;
	}
	*out = c;
	return 0;
}

int cni_args_get(const char *args, const char *key, char *out, size_t outsz)
{
	size_t klen = strlen(key);
	const char *p = args;

	if (!args)
		return 0;
	if (strnlen(args, CNI_ARGS_MAX + 1) > CNI_ARGS_MAX)
		return -EINVAL;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);

		if (eq && (size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
			size_t vlen = n - klen - 1;

			if (vlen + 1 > outsz)
				return -ENAMETOOLONG;
			memcpy(out, eq + 1, vlen);
			out[vlen] = '\0';
			return 1;
		}
		p += n;
		if (*p == ';')
			p++;
	}
	return 0;
}

/* FNV-1a 64 over a sequence of fields, each with its NUL (so "ab","c" != "a","bc"). */
static uint64_t fields_hash(const char *const *f, size_t n)
{
	uint64_t h = FNV64_INIT;

	for (size_t i = 0; i < n; i++)
		h = fnv64_add(h, f[i], strlen(f[i]) + 1);
	return h;
}

char *cni_sandbox_prefix(const char *network, char *out)
{
	snprintf(out, 14, CNI_SANDBOX_PREFIX "%08x-", fnv32_str(FNV32_INIT, network));
	return out;
}

char *cni_sandbox_name(const char *network, const char *container_id, const char *ifname,
		       char *out)
{
	const char *f[] = { network, container_id, ifname };

	snprintf(out, CNI_SANDBOX_NAME_LEN + 1, CNI_SANDBOX_PREFIX "%08x-%016llx",
		 fnv32_str(FNV32_INIT, network), (unsigned long long)fields_hash(f, 3));
	return out;
}

const char *cni_policy_source_name(enum cni_policy_source src)
{
	switch (src) {
	case CNI_POLICY_NAMESPACE: return "network config \"namespaces\" (K8S_POD_NAMESPACE)";
	case CNI_POLICY_ANNOTATION: return "pod annotation " CNI_ANNOTATION_KEY;
	case CNI_POLICY_NONE: return "nothing (optIn: the pod did not opt in)";
	case CNI_POLICY_ARGS: return "CNI_ARGS NETD_POLICY";
	case CNI_POLICY_CONFIG: return "network config \"policy\"";
	case CNI_POLICY_DEFAULT: return "network config \"defaultPolicy\"";
	default: return "built-in default";
	}
}

const char *cni_policy_select(const struct cni_conf *c, const char *args, char *buf,
			      size_t bufsz, enum cni_policy_source *src, struct cni_err *err)
{
	char ns[CNI_K8S_NAMESPACE_MAX + 2];
	int r;

	/* A listed namespace's policy is the admin's: its pods cannot pick another. */
	if (c->namespaces && cni_args_get(args, "K8S_POD_NAMESPACE", ns, sizeof(ns)) == 1) {
		json_t *p = json_object_get(c->namespaces, ns);

		if (p) {
			*src = CNI_POLICY_NAMESPACE;
			return json_string_value(p);	/* validated by cni_conf_parse() */
		}
	}
	if (c->annotation_policy) {
		*src = CNI_POLICY_ANNOTATION;
		if (!policy_valid(c->annotation_policy)) {
			cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				    "pod annotation %s is not a valid policy name",
				    CNI_ANNOTATION_KEY);
			return NULL;
		}
		return c->annotation_policy;
	}
	r = cni_args_get(args, "NETD_POLICY", buf, bufsz);
	if (r != 0) {
		*src = CNI_POLICY_ARGS;
		if (r < 0 || !policy_valid(buf)) {
			cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
				    "CNI_ARGS NETD_POLICY is not a valid policy name (1-64 of [A-Za-z0-9_.-])");
			return NULL;
		}
		return buf;
	}
	if (c->opt_in) {
		*src = CNI_POLICY_NONE;
		return NULL;
	}
	if (c->policy) {
		*src = CNI_POLICY_CONFIG;
		return c->policy;
	}
	if (c->default_policy) {
		*src = CNI_POLICY_DEFAULT;
		return c->default_policy;
	}
	*src = CNI_POLICY_BUILTIN;
	return CNI_DEFAULT_POLICY;
}

int cni_workload(const char *container_id, const char *args, struct workload *out,
		 struct cni_err *err)
{
	char buf[WORKLOAD_CONTAINER_ID_MAX + 2], why[128], q[96];

	memset(out, 0, sizeof(*out));
	if (workload_set(out, WORKLOAD_CONTAINER_ID, container_id, why, sizeof(why)) < 0)
		return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
				   "CNI_CONTAINERID: %s", why);
	for (int f = WORKLOAD_CONTAINER_ID + 1; f < WORKLOAD_FIELDS; f++) {
		const char *key = workload_cni_arg((enum workload_field)f);
		int r = cni_args_get(args, key, buf, workload_max((enum workload_field)f) + 1);

		if (r == -EINVAL)
			return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
					   "CNI_ARGS is over %d bytes", CNI_ARGS_MAX);
		if (r == -ENAMETOOLONG)
			return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
					   "CNI_ARGS %s is longer than %zu bytes", key,
					   workload_max((enum workload_field)f));
		if (r == 1 && workload_set(out, (enum workload_field)f, buf, why, sizeof(why)) < 0)
			return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
					   "CNI_ARGS %s=\"%s\" must match "
					   "^[A-Za-z0-9][A-Za-z0-9_.-]*$", key,
					   log_quote(buf, strlen(buf), q, sizeof(q)));
	}
	return 0;
}

#define RATE_CHARS "0123456789.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

int cni_bandwidth(const struct cni_conf *c, const char *args, char *eg, char *in,
		  struct cni_err *err)
{
	static const char *const key[2] = { "NETD_EGRESS_RATE", "NETD_INGRESS_RATE" };
	char *out[2] = { eg, in };
	const uint64_t rc[2] = { c->rc_egress_bps, c->rc_ingress_bps };

	for (int i = 0; i < 2; i++) {
		int r;

		out[i][0] = '\0';
		if (rc[i]) {
			snprintf(out[i], CNI_RATE_MAX, "%llubit", (unsigned long long)rc[i]);
			continue;
		}
		r = cni_args_get(args, key[i], out[i], CNI_RATE_MAX);
		if (r == -EINVAL)
			return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
					   "CNI_ARGS is over %d bytes", CNI_ARGS_MAX);
		/* A rate is digits, a point and a unit's letters (netd says what is wrong). */
		if (r == -ENAMETOOLONG || (r == 1 && strspn(out[i], RATE_CHARS) != strlen(out[i]))) {
			out[i][0] = '\0';
			return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
					   "CNI_ARGS %s must be a rate such as 20mbit", key[i]);
		}
	}
	return 0;
}

/* ---- results --------------------------------------------------------------- */

static json_t *copy_array(json_t *obj, const char *key)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_array(v) ? json_deep_copy(v) : json_array();
}

static int add_ip(json_t *ips, const struct cni_conf *c, const char *addr, unsigned int plen,
		  const char *gw, size_t iface, const char *ver)
{
	char cidr[64];
	json_t *ip;

	snprintf(cidr, sizeof(cidr), "%s/%u", addr, plen);
	ip = json_pack("{s:s, s:I}", "address", cidr, "interface", (json_int_t)iface);
	if (!ip)
		return -ENOMEM;
	if (gw)
		json_object_set_new(ip, "gateway", json_string(gw));
	/* 0.3.0-0.4.0 results carry "version"; 1.0.0 removed it (spec-upgrades.md). */
	if (c->ip_version_field)
		json_object_set_new(ip, "version", json_string(ver));
	return json_array_append_new(ips, ip);
}

json_t *cni_result_new(const struct cni_conf *c, const struct cni_attachment *a)
{
	json_t *prev = c->prev_result, *res, *ifs, *ips, *routes, *dns, *ns, *v;
	size_t peer_idx;

	ifs = copy_array(prev, "interfaces");
	ips = copy_array(prev, "ips");
	routes = copy_array(prev, "routes");
	v = prev ? json_object_get(prev, "dns") : NULL;
	dns = json_is_object(v) ? json_deep_copy(v) : json_object();
	res = json_object();
	if (!ifs || !ips || !routes || !dns || !res)
		goto fail;
	/*
	 * A prevResult in another format than the one asked for (a runtime
	 * normally converts it already): 0.x carries ips[].version, 1.x not.
	 */
	{
		size_t i;
		json_t *ip;

		json_array_foreach(ips, i, ip) {
			const char *ad = json_string_value(json_object_get(ip, "address"));

			if (!json_is_object(ip))
				continue;
			if (!c->ip_version_field)
				json_object_del(ip, "version");
			else if (!json_object_get(ip, "version") && ad)
				json_object_set_new(ip, "version",
						    json_string(strchr(ad, ':') ? "6" : "4"));
		}
	}
	if (a->host_ifname) {
		json_t *hi = json_pack("{s:s}", "name", a->host_ifname);

		if (a->host_mac)
			json_object_set_new(hi, "mac", json_string(a->host_mac));
		json_array_append_new(ifs, hi);
	}
	if (a->ifname) {
		json_t *pi = json_pack("{s:s, s:s}", "name", a->ifname, "sandbox",
				       a->netns ? a->netns : "");

		if (a->mac)
			json_object_set_new(pi, "mac", json_string(a->mac));
		json_array_append_new(ifs, pi);
	}
	peer_idx = json_array_size(ifs) ? json_array_size(ifs) - 1 : 0;
	if (a->ipv4 && add_ip(ips, c, a->ipv4, a->plen4, a->gateway4, peer_idx, "4") < 0)
		goto fail;
	if (a->ipv6 && add_ip(ips, c, a->ipv6, a->plen6, a->gateway6, peer_idx, "6") < 0)
		goto fail;
	if (json_array_size(a->routes)) {
		/* The IPAM plugin's routes; netd routes all of them via the gateway. */
		json_array_extend(routes, a->routes);
	} else {
		if (a->ipv4 && a->gateway4)
			json_array_append_new(routes, json_pack("{s:s, s:s}", "dst", "0.0.0.0/0",
								"gw", a->gateway4));
		if (a->ipv6 && a->gateway6)
			json_array_append_new(routes, json_pack("{s:s, s:s}", "dst", "::/0", "gw",
								a->gateway6));
	}
	/* netd's proxy answers on the gateway (and every DNS packet is sent to it anyway). */
	ns = json_array();
	if (!ns)
		goto fail;
	if (a->gateway4)
		json_array_append_new(ns, json_string(a->gateway4));
	if (a->gateway6)
		json_array_append_new(ns, json_string(a->gateway6));
	if (json_array_size(ns))
		json_object_set_new(dns, "nameservers", ns);
	else
		json_decref(ns);
	json_object_set_new(res, "cniVersion", json_string(c->cni_version));
	json_object_set_new(res, "interfaces", ifs);
	json_object_set_new(res, "ips", ips);
	json_object_set_new(res, "routes", routes);
	json_object_set_new(res, "dns", dns);
	return res;
fail:
	json_decref(ifs);
	json_decref(ips);
	json_decref(routes);
	json_decref(dns);
	json_decref(res);
	return NULL;
}

json_t *cni_error_json(const char *version, const struct cni_err *err)
{
	json_t *o = json_pack("{s:s, s:i, s:s}", "cniVersion", version ? version : "1.1.0", "code",
			      err->code, "msg", err->msg[0] ? err->msg : "error");

	if (o && err->details[0])
		json_object_set_new(o, "details", json_string(err->details));
	return o;
}

json_t *cni_version_json(const char *version)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
		json_array_append_new(arr, json_string(supported[i]));
	return json_pack("{s:s, s:o}", "cniVersion",
			 cni_version_supported(version) ? version : "1.1.0", "supportedVersions",
			 arr);
}

/* "ADDR/PLEN" into a bare address of @family and a prefix length (1..bits-1). */
static int cidr_split(const char *s, int family, char *addr, size_t addrsz, unsigned int *plen)
{
	unsigned char bin[16];
	const char *slash = s ? strchr(s, '/') : NULL;
	char *end;
	unsigned long n;

	if (!slash || (size_t)(slash - s) >= addrsz)
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(family, addr, bin) != 1 || slash[1] < '0' || slash[1] > '9')
		return -EINVAL;
	n = strtoul(slash + 1, &end, 10);
	if (*end || n == 0 || n >= (family == AF_INET ? 32u : 128u))
		return -EINVAL;
	*plen = (unsigned int)n;
	return 0;
}

/* Is @gw (bare, of @family) inside @addr/@plen? */
static bool same_prefix(int family, const char *addr, const char *gw, unsigned int plen)
{
	unsigned char a[16], g[16];

	if (inet_pton(family, addr, a) != 1 || inet_pton(family, gw, g) != 1)
		return false;
	for (unsigned int i = 0; i < plen; i++)
		if ((a[i / 8] ^ g[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return memcmp(a, g, family == AF_INET ? 4 : 16) != 0;
}

int cni_ipam_parse(json_t *res, struct cni_ipam *out, struct cni_err *err)
{
	json_t *ips = json_object_get(res, "ips"), *routes = json_object_get(res, "routes"), *ip;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(res) || !json_is_array(ips))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "the IPAM plugin's result has no \"ips\" array");
	if (routes && !json_is_null(routes) && !json_is_array(routes))
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "the IPAM plugin's \"routes\" must be an array");
	json_array_foreach(ips, i, ip) {
		json_t *ad = json_object_get(ip, "address"), *gw = json_object_get(ip, "gateway");
		const char *a = json_string_value(ad);
		int family = a && strchr(a, ':') ? AF_INET6 : AF_INET;
		char *addr = family == AF_INET ? out->ipv4 : out->ipv6;
		char *gwo = family == AF_INET ? out->gateway4 : out->gateway6;
		unsigned int *plen = family == AF_INET ? &out->plen4 : &out->plen6;
		char tmp[48];
		unsigned int tplen;

		if (!json_is_object(ip) || !a ||
		    cidr_split(a, family, tmp, sizeof(tmp), &tplen) < 0)
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "the IPAM plugin's ips[%zu] has no valid \"address\" "
					   "(ADDR/PLEN)", i);
		if (addr[0])
			continue;	/* one address per family: netd's veth has one */
		if (!json_is_string(gw) || strlen(json_string_value(gw)) >= sizeof(out->gateway4) ||
		    !same_prefix(family, tmp, json_string_value(gw), tplen))
			return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
					   "the IPAM plugin's address %s needs a \"gateway\" inside "
					   "its prefix (netd routes the container through it; set the "
					   "range's gateway)", a);
		snprintf(addr, 48, "%s", tmp);
		snprintf(gwo, 48, "%s", json_string_value(gw));
		*plen = tplen;
	}
	if (!out->ipv4[0] && !out->ipv6[0])
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "the IPAM plugin returned no IP address");
	out->routes = json_is_array(routes) ? routes : NULL;
	return 0;
}
