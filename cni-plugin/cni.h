/*
 * cni - the pure core of netd-cni: the network config (CNI spec 1.1.0 §1),
 * the environment's values (§2), policy selection, the attachment key, and
 * the result and error JSON (§5) in the version the runtime asked for.
 * No I/O: cni-plugin/main.c reads stdin/env and talks to netd.
 *
 * An attachment is keyed by (network name, CNI_CONTAINERID, CNI_IFNAME),
 * never by netns path or address (runtimes send DEL with an empty
 * CNI_NETNS, and IPAM reuses addresses at once).  Its netd sandbox is named
 * "cni-" + 8 hex (network) + "-" + 16 hex (the whole key), so GC can find
 * every sandbox of one network by prefix.
 */
#ifndef NETD_CNI_H
#define NETD_CNI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/paths.h"
#include <stdint.h>

#include "common/workload.h"

#define CNI_STDIN_MAX      (1u << 20)	/* bytes of network config we read */
#define CNI_ARGS_MAX       65536	/* bytes of CNI_ARGS we look at */
#define CNI_NAME_MAX       256		/* network name, container ID: bytes */
#define CNI_POLICY_MAX     64		/* = netd's policy name limit */
#define CNI_SANDBOX_PREFIX "cni-"
#define CNI_SANDBOX_NAME_LEN 29		/* "cni-" 8 hex "-" 16 hex */
#define CNI_DEFAULT_SOCKET NETD_DEFAULT_SOCKET	/* common/paths.h */
#define CNI_DEFAULT_TOMBSTONE_DIR "/var/lib/netd/tombstones"
#define CNI_DEFAULT_POLICY "deny-all"
#define CNI_ANNOTATION_CAP "io.kubernetes.cri.pod-annotations"
#define CNI_ANNOTATION_KEY "netd.io/policy"
#define CNI_NAMESPACES_MAX 1024		/* entries of "namespaces" */
#define CNI_K8S_NAMESPACE_MAX 63	/* a namespace is a DNS label (RFC 1123) */
#define CNI_SUPPORTED_VERSIONS "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"

/* Well-known error codes (CNI spec §5 "Error") and ours (100+). */
enum cni_code {
	CNI_ERR_VERSION = 1,		/* incompatible CNI version */
	CNI_ERR_UNSUPPORTED_FIELD = 2,
	CNI_ERR_UNKNOWN_CONTAINER = 3,
	CNI_ERR_ENV = 4,		/* invalid necessary environment variables */
	CNI_ERR_IO = 5,
	CNI_ERR_DECODE = 6,		/* failed to decode content */
	CNI_ERR_CONFIG = 7,		/* invalid network config */
	CNI_ERR_TRY_LATER = 11,		/* netd not reachable: try again later */
	CNI_ERR_STATUS_DOWN = 50,	/* STATUS: plugin not available */
	CNI_ERR_NETD = 100,		/* netd refused the request */
	CNI_ERR_EXISTS = 101,		/* ADD: the attachment exists already */
	CNI_ERR_CHECK_RECORD = 102,	/* CHECK: netd has no record of it */
	CNI_ERR_CHECK_LINK = 103,	/* CHECK: interface/address missing in the netns */
	CNI_ERR_POLICY = 104,		/* the selected policy is unknown to netd */
};

struct cni_err {
	int code;
	char msg[128];
	char details[1024];
	char version[8];	/* the config's cniVersion once known to be supported, or "" */
};

enum cni_mode { CNI_MODE_INTERFACE, CNI_MODE_CHAINED };

/* Where the policy came from (for messages and the audit trail). */
enum cni_policy_source {
	CNI_POLICY_NAMESPACE, CNI_POLICY_ANNOTATION, CNI_POLICY_ARGS, CNI_POLICY_CONFIG,
	CNI_POLICY_DEFAULT, CNI_POLICY_BUILTIN,
	CNI_POLICY_NONE,	/* "optIn" and the pod did not opt in: pass it through */
};

struct cni_conf {
	json_t *root;			/* owned: the parsed stdin */
	const char *cni_version;	/* borrowed from @root, a supported version */
	bool ip_version_field;		/* 0.x results carry ips[].version */
	const char *name, *type;
	const char *socket;		/* "socket", default CNI_DEFAULT_SOCKET */
	const char *tombstone_dir;	/* "tombstoneDir" */
	enum cni_mode mode;		/* "mode": "interface" (default) | "chained" */
	const char *policy;		/* "policy", or NULL */
	const char *default_policy;	/* "defaultPolicy", or NULL */
	const char *annotation_policy;	/* runtimeConfig pod annotation netd.io/policy, or NULL */
	bool opt_in;			/* "optIn": enforce only pods that name a policy
					 * (chained mode only); others pass untouched */
	json_t *namespaces;		/* "namespaces": {K8S_POD_NAMESPACE: policy},
					 * borrowed from @root, or NULL */
	json_t *prev_result;		/* borrowed from @root, or NULL */
	json_t *valid_attachments;	/* GC: borrowed array, or NULL */
	const char *ipam_type;		/* interface mode: "ipam"."type", a binary name
					 * in CNI_PATH (no '/'), or NULL: netd's pool */
	/* runtimeConfig "bandwidth" (the capability of that name): bits per
	 * second, 0 if not given; bursts are not used (netd sizes its own) */
	uint64_t rc_egress_bps, rc_ingress_bps;
};

/*
 * cni_ipam_type_valid() - an IPAM "type" netd-cni will look up in CNI_PATH:
 * 1-255 bytes, no '/', not "." or "..", no control characters.
 */
bool cni_ipam_type_valid(const char *s);

/*
 * cni_version_supported() - true if @v is one of CNI_SUPPORTED_VERSIONS.
 */
bool cni_version_supported(const char *v);

/*
 * cni_conf_parse() - decode the network config a runtime writes on stdin
 * (spec §1, §3 "Deriving request configuration").  Unknown keys are
 * ignored (libcni passes `capabilities` through, and §1 asks plugins not to
 * reject them); runtimeConfig keys are matched case-insensitively.
 * @buf, @len: the bytes; not retained (copied into @out->root).
 * @out: filled on success; release with cni_conf_done().
 * @err: on failure, the CNI error to print (code 6 bad JSON, 7 bad config,
 * 1 unsupported cniVersion).
 * Return: 0; -EINVAL (see @err); -ENOMEM.
 */
int cni_conf_parse(const char *buf, size_t len, struct cni_conf *out, struct cni_err *err);

/* cni_conf_done() - release what cni_conf_parse() filled; NULL-safe, idempotent. */
void cni_conf_done(struct cni_conf *c);

/*
 * cni_name_valid() - network name / container ID rule of the spec:
 * ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$, at most CNI_NAME_MAX bytes.
 */
bool cni_name_valid(const char *s);

/*
 * cni_ifname_valid() - CNI_IFNAME: 1-15 bytes, not "." or "..", no '/', ':'
 * or whitespace (libcni's ValidateInterfaceName).
 */
bool cni_ifname_valid(const char *s);

/*
 * cni_args_get() - the value of @key in CNI_ARGS ("K=V;K=V"; split on ';'
 * then on the first '='; unknown keys ignored).  @args may be NULL.
 * @out, @outsz: the value, NUL-terminated.
 * Return: 1 found; 0 absent; -EINVAL (over CNI_ARGS_MAX bytes);
 * -ENAMETOOLONG (value does not fit @out).
 */
int cni_args_get(const char *args, const char *key, char *out, size_t outsz);

/*
 * cni_sandbox_name() - the netd sandbox name of attachment (@network,
 * @container_id, @ifname): CNI_SANDBOX_PREFIX + FNV-1a-32(network) + "-" +
 * FNV-1a-64(network NUL container_id NUL ifname), lower-case hex.
 * @out: at least CNI_SANDBOX_NAME_LEN + 1 bytes.  Return: @out.
 */
char *cni_sandbox_name(const char *network, const char *container_id, const char *ifname,
		       char *out);

/*
 * cni_sandbox_prefix() - "cni-XXXXXXXX-": the name prefix shared by every
 * sandbox of @network.  @out: at least 14 bytes.  Return: @out.
 */
char *cni_sandbox_prefix(const char *network, char *out);

/*
 * cni_policy_select() - the policy for an attachment: the "namespaces"
 * entry of CNI_ARGS K8S_POD_NAMESPACE (a listed namespace's policy is not
 * overridden by its pods), then the pod annotation, then CNI_ARGS
 * NETD_POLICY=, then (without "optIn") the config's "policy", then
 * "defaultPolicy", then CNI_DEFAULT_POLICY.  @args: CNI_ARGS or NULL.
 * @buf/@bufsz hold a value taken from @args.  @src: where it came from.
 * Return: the name (borrowed from @c or @buf); NULL with *@src ==
 * CNI_POLICY_NONE if "optIn" is set and the pod named no policy (not an
 * error: the caller passes it through); NULL with @err filled (code 7 / 4)
 * if the chosen value is not a valid policy name.
 */
const char *cni_policy_select(const struct cni_conf *c, const char *args, char *buf,
			      size_t bufsz, enum cni_policy_source *src, struct cni_err *err);

/*
 * cni_workload() - who the attachment is for, for netd's sandbox record:
 * @container_id (CNI_CONTAINERID, already checked by the caller) and, from
 * CNI_ARGS @args (or NULL), K8S_POD_NAMESPACE, K8S_POD_NAME and K8S_POD_UID
 * (containerd and CRI-O send all three; podman sends K8S_POD_NAME = the
 * container's name).  An empty value counts as absent.  Every value must
 * pass workload_set().
 * Return: 0; -EINVAL with @err filled (code 4, naming the CNI_ARGS key,
 * the rule and the value, quoted with log_quote()).
 */
int cni_workload(const char *container_id, const char *args, struct workload *out,
		 struct cni_err *err);

#define CNI_RATE_MAX 32	/* bytes of a rate passed on to netd, with its NUL */

/*
 * cni_bandwidth() - the attachment's own bandwidth limits as netd's API
 * takes them ("20mbit"; runtimeConfig's bits per second as "NNNbit"):
 * first the runtime's "bandwidth" capability (runtimeConfig.bandwidth
 * egressRate / ingressRate: Kubernetes' kubernetes.io/egress-bandwidth and
 * ingress-bandwidth pod annotations, through containerd or CRI-O), then
 * CNI_ARGS NETD_EGRESS_RATE / NETD_INGRESS_RATE (podman, nerdctl).  netd
 * checks them as it checks a policy's; here only their size and bytes.
 * @eg, @in: CNI_RATE_MAX bytes each; "" for none.
 * Return: 0; -EINVAL (@err: code 4, a bad CNI_ARGS value).
 */
int cni_bandwidth(const struct cni_conf *c, const char *args, char *eg, char *in,
		  struct cni_err *err);

/* cni_policy_source_name() - "pod annotation netd.io/policy", "CNI_ARGS NETD_POLICY", ... */
const char *cni_policy_source_name(enum cni_policy_source src);

/* What netd returned for a sandbox, plus what the plugin saw on the links. */
struct cni_attachment {
	const char *host_ifname;
	const char *host_mac;		/* NULL if unknown */
	const char *ifname;		/* CNI_IFNAME */
	const char *mac;		/* NULL if unknown */
	const char *netns;		/* CNI_NETNS */
	const char *ipv4, *gateway4;	/* bare addresses or NULL */
	const char *ipv6, *gateway6;
	unsigned int plen4, plen6;	/* prefix lengths of the point-to-point links */
	json_t *routes;			/* borrowed: an IPAM result's routes, or NULL
					 * (default routes via the gateways) */
};

/* The addresses an IPAM plugin chose (one per family; netd takes no more). */
struct cni_ipam {
	char ipv4[48], gateway4[48];	/* bare addresses, "" if none */
	char ipv6[48], gateway6[48];
	unsigned int plen4, plen6;
	json_t *routes;			/* borrowed from the parsed result, or NULL */
};

/*
 * cni_ipam_parse() - read an IPAM plugin's ADD result (spec §4 delegation,
 * §5 "ADD Success"; 0.x and 1.x): the first IPv4 and the first IPv6 of
 * ips[] ("address" as ADDR/PLEN, "gateway"), and routes[].  Each address
 * needs a gateway inside its prefix: netd puts the gateway on the host end
 * of the veth and routes the sandbox through it.
 * @res: the parsed result; @out borrows routes from it.
 * Return: 0; -EINVAL with @err filled (code 7: no usable address, missing
 * or off-prefix gateway, malformed entries).
 */
int cni_ipam_parse(json_t *res, struct cni_ipam *out, struct cni_err *err);

/*
 * cni_result_new() - the ADD result (spec §5 "ADD Success") in @c's
 * version: if @c has a prevResult, it is passed through with ours appended
 * (interface indexes adjusted); ips[] point at the CNI_IFNAME interface
 * (containerd CRI needs that); 0.x results carry ips[].version;
 * dns.nameservers are the gateways, where netd's DNS proxy answers.
 * Return: a new object (caller decrefs); NULL on out of memory.
 */
json_t *cni_result_new(const struct cni_conf *c, const struct cni_attachment *a);

/*
 * cni_error_json() - the error object of spec §5 "Error":
 * {cniVersion, code, msg, details?}.  @version may be NULL ("1.1.0").
 * Return: a new object (caller decrefs).
 */
json_t *cni_error_json(const char *version, const struct cni_err *err);

/* cni_version_json() - the VERSION answer for request version @version (or NULL). */
json_t *cni_version_json(const char *version);

/*
 * cni_err_set() - fill @err (printf-style details); always returns -EINVAL
 * so callers can `return cni_err_set(...)`.
 */
int cni_err_set(struct cni_err *err, int code, const char *msg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
