/*
 * netd-cni - the CNI plugin (spec 1.0.0/1.1.0; answers 0.3.0-0.4.0 too): a
 * thin client of netd's control socket.  CNI_COMMAND dispatch, env
 * validation, the verbs and their tombstone files; what the verbs read in
 * the container's netns is in netns.c.
 * netd itself creates the veth, the addresses, the routes and the rules.
 *
 * Output discipline (spec §5): stdout carries exactly one JSON document
 * (result, VERSION answer or error) or nothing; diagnostics go to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cni-plugin/cni.h"
#include "cni-plugin/install.h"
#include "cni-plugin/ipam.h"
#include "cni-plugin/netns.h"
#include "common/fsutil.h"
#include "common/httpc.h"

#define POLICY_PATH_MAX 128

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

static void print_json(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	if (text) {
		fputs(text, stdout);
		fputc('\n', stdout);
	}
	fflush(stdout);
	free(text);
	json_decref(o);
}

/* Print the §5 error object on stdout (what libcni parses) and return 1. */
static int fail(const char *version, const struct cni_err *err)
{
	fprintf(stderr, "netd-cni: error %d: %s%s%s\n", err->code, err->msg,
		err->details[0] ? ": " : "", err->details);
	print_json(cni_error_json(version, err));
	return 1;
}

static int read_stdin(char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > CNI_STDIN_MAX) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* Is this client error "netd is not there"?  Then ADD fails closed with 11. */
static bool netd_down(int r)
{
	return r == -ENOENT || r == -ECONNREFUSED || r == -ETIMEDOUT || r == -ENOTDIR ||
	       r == -EACCES || r == -ECONNRESET || r == -EPIPE || r == -EBADMSG;
}

static int err_netd_down(struct cni_err *err, const char *socket, int r)
{
	return cni_err_set(err, CNI_ERR_TRY_LATER, "netd is not reachable: try again later",
			   "control socket %s: %s; no network was attached (fail closed)", socket,
			   strerror(-r));
}

static const char *netd_message(json_t *reply)
{
	json_t *m = json_object_get(json_object_get(reply, "error"), "message");

	return json_is_string(m) ? json_string_value(m) : "no message";
}

/*
 * Check the attachment env of spec §2 (ADD/DEL/CHECK).  @need_netns: ADD
 * and CHECK; DEL may come with an empty CNI_NETNS (containerd's
 * RemovePodSandbox, ctr).  Names every bad variable (spec §5 code 4).
 */
static int check_env(bool need_netns, struct cni_err *err)
{
	const char *cid = env("CNI_CONTAINERID"), *ifn = env("CNI_IFNAME"),
		   *ns = env("CNI_NETNS");
	char bad[256] = "";

	if (!cid)
		strcat(bad, " CNI_CONTAINERID (missing)");
	else if (!cni_name_valid(cid))
		strcat(bad, " CNI_CONTAINERID (must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$)");
	if (!ifn)
		strcat(bad, " CNI_IFNAME (missing)");
	else if (!cni_ifname_valid(ifn))
		strcat(bad, " CNI_IFNAME (1-15 bytes, no '/', ':' or whitespace)");
	if (need_netns && !ns)
		strcat(bad, " CNI_NETNS (missing)");
	else if (ns && (ns[0] != '/' || strlen(ns) >= PATH_MAX))
		strcat(bad, " CNI_NETNS (must be an absolute path)");
	if (bad[0])
		return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables", "%s",
				   bad + 1);
	return 0;
}

/* ---- verbs ------------------------------------------------------------------ */

/*
 * One ADD in progress: what its steps below share.  Everything borrowed
 * lives until cmd_add() returns.
 */
struct add_op {
	const struct cni_conf *c;
	const char *cid, *ifn, *ns;		/* CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS */
	char name[CNI_SANDBOX_NAME_LEN + 1];	/* the netd sandbox */
	char pbuf[CNI_POLICY_MAX + 2];		/* CNI_ARGS NETD_POLICY, if that is the source */
	const char *policy;			/* borrowed: @c, @pbuf; NULL if not opted in */
	enum cni_policy_source src;
	struct chained_view cv;			/* chained mode */
	struct cni_ipam ipam;			/* with an IPAM plugin */
	json_t *ipam_res;			/* owned: the IPAM plugin's result, or NULL */
	struct workload wl;			/* CNI_CONTAINERID and the pod, for netd's record */
	char egress[CNI_RATE_MAX], ingress[CNI_RATE_MAX];	/* its own rates, "" for none */
};

/*
 * Which policy, and does this ADD go to netd at all?  "optIn" and a pod
 * that named no policy: the spec's "pass through" (§2 ADD: a plugin MUST
 * output prevResult), printed here without asking netd, so CoreDNS and
 * the cluster's own pods never depend on netd running.
 * Return: 0 go on; 1 passed through (done); -EINVAL with @err filled.
 */
static int add_pick_policy(struct add_op *op, struct cni_err *err)
{
	const struct cni_conf *c = op->c;

	op->policy = cni_policy_select(c, getenv("CNI_ARGS"), op->pbuf, sizeof(op->pbuf),
				       &op->src, err);
	if (!op->policy && op->src != CNI_POLICY_NONE)
		return -EINVAL;
	if (!op->policy && c->prev_result) {
		fprintf(stderr, "netd-cni: ADD %s/%s on %s: not opted in, passed through\n",
			op->cid, op->ifn, c->name);
		print_json(json_incref(c->prev_result));
		return 1;
	}
	return 0;
}

/* Chained mode: what the plugins before us made (prevResult) must be usable. */
static int add_check_chained(struct add_op *op, struct cni_err *err)
{
	if (op->c->mode != CNI_MODE_CHAINED)
		return 0;
	if (!op->c->prev_result)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "\"mode\": \"chained\" needs a prevResult: put netd-cni "
				   "after an interface plugin (bridge, ptp) in the conflist");
	if (chained_view(op->c, op->ifn, op->ns, &op->cv, err) < 0)
		return -EINVAL;
	return 0;
}

/* An unknown policy fails ADD before anything is created. */
static int add_check_policy(const struct add_op *op, struct cni_err *err)
{
	const struct cni_conf *c = op->c;
	char path[POLICY_PATH_MAX];
	json_t *reply = NULL;
	int r, status;

	snprintf(path, sizeof(path), "/v1/policies/%s", op->policy);
	r = httpc_request(c->socket, "GET", path, NULL, &status, &reply);
	if (r < 0)
		return netd_down(r) ? err_netd_down(err, c->socket, r) :
			cni_err_set(err, CNI_ERR_IO, "I/O failure", "control socket %s: %s",
				    c->socket, strerror(-r));
	json_decref(reply);
	if (status == 404)
		return cni_err_set(err, CNI_ERR_POLICY, "Unknown policy",
				   "policy \"%s\" (from %s) is not loaded in netd", op->policy,
				   cni_policy_source_name(op->src));
	if (status != 200)
		return cni_err_set(err, CNI_ERR_NETD, "netd refused the request",
				   "GET %s: HTTP %d", path, status);
	return 0;
}

/*
 * Interface mode with an IPAM plugin (spec §4): it picks the addresses
 * first; from here on every failure releases them again (cmd_add()).
 */
static int add_run_ipam(struct add_op *op, struct cni_err *err)
{
	if (ipam_exec(op->c, "ADD", &op->ipam_res, err) < 0)
		return -EINVAL;
	if (cni_ipam_parse(op->ipam_res, &op->ipam, err) < 0) {
		ipam_undo(op->c);
		json_decref(op->ipam_res);
		op->ipam_res = NULL;
		return -EINVAL;
	}
	return 0;
}

/*
 * The POST /v1/sandboxes body: the attachment, plus the IPAM plugin's
 * addresses or the chained interface.  Return: the request (caller
 * decrefs); NULL with @err filled.
 */
static json_t *add_request(const struct add_op *op, struct cni_err *err)
{
	json_t *req = json_pack("{s:s, s:s, s:s, s:s}", "name", op->name, "policy", op->policy,
				"netns", op->ns, "ifname", op->ifn);

	/* So `netd sandbox show` and the audit log name the container (docs/cni.md). */
	if (req)
		workload_json(&op->wl, req, false);
	/* Its own bandwidth limits (docs/cni.md); netd checks them. */
	if (req && (op->egress[0] || op->ingress[0]))
		json_object_set_new(req, "bandwidth",
				    json_pack("{s:s?, s:s?}", "egress", op->egress[0] ? op->egress : NULL,
					      "ingress", op->ingress[0] ? op->ingress : NULL));

	if (req && op->c->ipam_type) {
		char a4[64], a6[64];
		json_t *ad = json_object();

		snprintf(a4, sizeof(a4), "%s/%u", op->ipam.ipv4, op->ipam.plen4);
		snprintf(a6, sizeof(a6), "%s/%u", op->ipam.ipv6, op->ipam.plen6);
		if (ad && op->ipam.ipv4[0]) {
			json_object_set_new(ad, "ipv4", json_string(a4));
			json_object_set_new(ad, "gateway4", json_string(op->ipam.gateway4));
		}
		if (ad && op->ipam.ipv6[0]) {
			json_object_set_new(ad, "ipv6", json_string(a6));
			json_object_set_new(ad, "gateway6", json_string(op->ipam.gateway6));
		}
		if (!ad || json_object_set_new(req, "addresses", ad) < 0) {
			json_decref(req);
			req = NULL;
		}
	}
	if (req && op->c->mode == CNI_MODE_CHAINED) {
		json_t *at = json_pack("{s:s}", "host_ifname", op->cv.host_ifname);

		if (at && op->cv.ipv4[0])
			json_object_set_new(at, "ipv4", json_string(op->cv.ipv4));
		if (at && op->cv.ipv6[0])
			json_object_set_new(at, "ipv6", json_string(op->cv.ipv6));
		if (!at || json_object_set_new(req, "attach", at) < 0) {
			json_decref(req);
			cni_err_set(err, CNI_ERR_IO, "I/O failure", "out of memory");
			return NULL;
		}
	}
	if (!req)
		cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
			    "CNI_NETNS is not valid UTF-8");
	return req;
}

/* A refused POST /v1/sandboxes (@status, netd's @m) as the CNI error. */
static int add_refused(const struct add_op *op, int status, const char *m, struct cni_err *err)
{
	if (status == 409 && strstr(m, "sandbox of that name"))
		return cni_err_set(err, CNI_ERR_EXISTS, "Attachment exists",
				   "container %s already has %s on network %s (netd sandbox %s): "
				   "DEL it first", op->cid, op->ifn, op->c->name, op->name);
	if (status == 409)
		return cni_err_set(err, CNI_ERR_EXISTS, "Interface exists", "netd: %s", m);
	if (status == 404)
		return cni_err_set(err, CNI_ERR_ENV, "Invalid environment variables",
				   "CNI_NETNS: netd: %s", m);
	return cni_err_set(err, CNI_ERR_NETD, "netd refused the request", "HTTP %d: %s", status,
			   m);
}

/*
 * Ask netd to attach; netd programs the rules before it creates the
 * interface (netd/daemon.c).  @ret_reply: netd's answer on success (caller
 * decrefs).  @ret_exists: set when the attachment exists already: its
 * address is in use by it, so the IPAM plugin must keep it.
 * Return: 0; -EINVAL with @err filled.
 */
static int add_call_netd(const struct add_op *op, json_t **ret_reply, bool *ret_exists,
			 struct cni_err *err)
{
	const struct cni_conf *c = op->c;
	json_t *req = add_request(op, err), *reply = NULL;
	int r, status;

	if (!req)
		return -EINVAL;
	r = httpc_request(c->socket, "POST", "/v1/sandboxes", req, &status, &reply);
	json_decref(req);
	if (r < 0)
		return netd_down(r) ? err_netd_down(err, c->socket, r) :
			cni_err_set(err, CNI_ERR_IO, "I/O failure", "control socket %s: %s",
				    c->socket, strerror(-r));
	if (status != 201) {
		const char *m = netd_message(reply);

		r = add_refused(op, status, m, err);
		*ret_exists = status == 409 && strstr(m, "sandbox of that name");
		json_decref(reply);
		return r;
	}
	*ret_reply = reply;
	return 0;
}

/* The attachment an ADD result describes, with the buffers it borrows. */
struct add_view {
	struct cni_attachment a;
	char host_mac[18];		/* a.host_mac points here */
	struct peer_probe probe;	/* a.mac points into it */
};

/*
 * Fill @v from netd's @reply (borrowed into @v->a: keep @reply until the
 * result is built).  Chained mode: prevResult passes through; only
 * dns.nameservers change: the gateway, since netd redirects all of the
 * container's :53.
 */
static void add_view(const struct add_op *op, json_t *reply, struct add_view *v)
{
	const struct cni_ipam *ipam = &op->ipam;
	struct cni_attachment *a = &v->a;

	memset(v, 0, sizeof(*v));
	if (op->c->mode == CNI_MODE_CHAINED) {
		a->gateway4 = op->cv.gateway4;
		a->gateway6 = op->cv.gateway6;
		return;
	}
	a->host_ifname = cni_json_str(reply, "host_ifname");
	a->ifname = op->ifn;
	a->netns = op->ns;
	a->ipv4 = cni_json_str(reply, "ipv4");
	a->gateway4 = cni_json_str(reply, "gateway4");
	a->ipv6 = cni_json_str(reply, "ipv6");
	a->gateway6 = cni_json_str(reply, "gateway6");
	a->plen4 = 30;	/* netd's point-to-point links (netd/model/sandbox.h) */
	a->plen6 = 126;
	if (op->c->ipam_type) {
		/* What the IPAM plugin chose (netd echoes it: same addresses). */
		a->ipv4 = ipam->ipv4[0] && a->ipv4 ? ipam->ipv4 : NULL;
		a->gateway4 = a->ipv4 ? ipam->gateway4 : NULL;
		a->ipv6 = ipam->ipv6[0] && a->ipv6 ? ipam->ipv6 : NULL;
		a->gateway6 = a->ipv6 ? ipam->gateway6 : NULL;
		a->plen4 = ipam->plen4;
		a->plen6 = ipam->plen6;
		a->routes = ipam->routes;
	}
	if (a->host_ifname && link_mac(a->host_ifname, v->host_mac, sizeof(v->host_mac)) == 0)
		a->host_mac = v->host_mac;
	v->probe.ifname = op->ifn;
	if (in_netns(op->ns, probe_peer, &v->probe) == 0 && v->probe.has_mac)
		a->mac = v->probe.mac;
}

/*
 * Build the spec §5 result from netd's @reply (consumed) and print it.
 * Out of memory after netd attached it: undo, so nothing is half there.
 */
static int add_result(const struct add_op *op, json_t *reply, struct cni_err *err)
{
	const struct cni_conf *c = op->c;
	struct add_view v;
	char path[POLICY_PATH_MAX];
	json_t *res;
	int status;

	add_view(op, reply, &v);
	res = cni_result_new(c, &v.a);
	json_decref(reply);	/* only now: v.a borrows from it */
	if (!res) {
		snprintf(path, sizeof(path), "/v1/sandboxes/%s", op->name);
		if (httpc_request(c->socket, "DELETE", path, NULL, &status, &reply) == 0)
			json_decref(reply);
		return cni_err_set(err, CNI_ERR_IO, "I/O failure", "out of memory");
	}
	fprintf(stderr, "netd-cni: ADD %s/%s on %s: netd sandbox %s, policy %s (%s)\n", op->cid,
		op->ifn, c->name, op->name, op->policy, cni_policy_source_name(op->src));
	print_json(res);
	return 0;
}

/*
 * ADD (spec §2): pick the policy, check prevResult (chained) and the
 * policy, let the IPAM plugin pick addresses, have netd attach, print the
 * result.  A failure after IPAM ADD releases the addresses again, unless
 * the attachment exists already.
 */
static int cmd_add(const struct cni_conf *c, struct cni_err *err)
{
	struct add_op op = { .c = c, .cid = env("CNI_CONTAINERID"), .ifn = env("CNI_IFNAME"),
			     .ns = env("CNI_NETNS") };
	json_t *reply = NULL;
	bool exists = false;
	int r;

	if (check_env(true, err) < 0)
		return -EINVAL;
	r = add_pick_policy(&op, err);
	if (r != 0)
		return r > 0 ? 0 : r;
	/* Bad pod names fail ADD before anything is made (code 4). */
	if ((r = cni_workload(op.cid, getenv("CNI_ARGS"), &op.wl, err)) < 0 ||
	    (r = cni_bandwidth(c, getenv("CNI_ARGS"), op.egress, op.ingress, err)) < 0)
		return r;
	if ((r = add_check_chained(&op, err)) < 0)
		return r;
	cni_sandbox_name(c->name, op.cid, op.ifn, op.name);
	if ((r = add_check_policy(&op, err)) < 0)
		return r;
	if (c->ipam_type && (r = add_run_ipam(&op, err)) < 0)
		return r;
	r = add_call_netd(&op, &reply, &exists, err);
	if (r == 0)
		r = add_result(&op, reply, err);
	if (r < 0 && c->ipam_type && !exists)
		ipam_undo(c);
	json_decref(op.ipam_res);
	return r;
}

/*
 * Did this attachment opt in?  DEL and CHECK get the same CNI_ARGS and
 * runtimeConfig as ADD (containerd builds them from the sandbox config
 * each time), so they decide as ADD did.  An invalid value counts as
 * opted in: DEL then cleans up as for any enforced pod.
 */
static bool opted_in(const struct cni_conf *c)
{
	char pbuf[CNI_POLICY_MAX + 2];
	enum cni_policy_source src;
	struct cni_err e = { 0 };

	return cni_policy_select(c, getenv("CNI_ARGS"), pbuf, sizeof(pbuf), &src, &e) ||
	       src != CNI_POLICY_NONE;
}

static int tombstone_write(const struct cni_conf *c, const char *name, const char *cid,
			   const char *ifn, struct cni_err *err)
{
	char path[PATH_MAX];
	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "sandbox", name, "network", c->name,
			      "containerID", cid, "ifname", ifn);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int r = 0;

	json_decref(o);
	if (!text)
		return cni_err_set(err, CNI_ERR_IO, "I/O failure", "out of memory");
	/* The directory's parent belongs to netd; create only the last level. */
	if (mkdir(c->tombstone_dir, 0750) < 0 && errno != EEXIST) {
		r = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", c->tombstone_dir, name);
	r = fs_write_atomic(path, text, strlen(text), 0640);
out:
	free(text);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, "I/O failure",
				   "netd is not running and the tombstone %s/%s cannot be written: %s",
				   c->tombstone_dir, name, strerror(-r));
	return 0;
}

/*
 * DEL is best effort and idempotent (spec §2 DEL): gone netns, gone
 * interface, no record in netd - all success.  If netd is down, a
 * tombstone tells it at its next start to drop the attachment.
 */
static int cmd_del(const struct cni_conf *c, struct cni_err *err)
{
	const char *cid = env("CNI_CONTAINERID"), *ifn = env("CNI_IFNAME");
	char name[CNI_SANDBOX_NAME_LEN + 1], path[64];
	json_t *reply = NULL;
	int r, status;

	if (check_env(false, err) < 0)
		return -EINVAL;
	cni_sandbox_name(c->name, cid, ifn, name);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	if (!opted_in(c)) {
		/*
		 * Not opted in: nothing of ours to undo, and DEL must not fail
		 * or stall because of netd.  Still ask netd to drop the name
		 * (best effort, errors ignored): if the pod's namespace was
		 * taken off "namespaces" between ADD and DEL, its sandbox goes.
		 */
		if (httpc_request(c->socket, "DELETE", path, NULL, &status, &reply) == 0)
			json_decref(reply);
		return 0;
	}
	r = httpc_request(c->socket, "DELETE", path, NULL, &status, &reply);
	if (r < 0 && netd_down(r)) {
		r = tombstone_write(c, name, cid, ifn, err);
		if (r < 0)
			return r;
		fprintf(stderr, "netd-cni: DEL %s/%s: netd not reachable; tombstone %s/%s written\n",
			cid, ifn, c->tombstone_dir, name);
		/* The address is released even so (§4: DEL runs the delegate). */
		return c->ipam_type ? ipam_exec(c, "DEL", NULL, err) : 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, "I/O failure", "control socket %s: %s",
				   c->socket, strerror(-r));
	if (status != 200 && status != 404) {
		r = cni_err_set(err, CNI_ERR_NETD, "netd refused the request",
				"DELETE %s: HTTP %d: %s", path, status, netd_message(reply));
		json_decref(reply);
		return r;
	}
	json_decref(reply);
	/* After netd let go of the address, the IPAM plugin releases it (§4). */
	return c->ipam_type ? ipam_exec(c, "DEL", NULL, err) : 0;
}

static int cmd_check(const struct cni_conf *c, struct cni_err *err)
{
	const char *cid = env("CNI_CONTAINERID"), *ifn = env("CNI_IFNAME"),
		   *ns = env("CNI_NETNS");
	char name[CNI_SANDBOX_NAME_LEN + 1], path[64];
	struct peer_probe probe = { 0 };
	json_t *reply = NULL;
	const char *host;
	int r, status;

	if (c->cni_version[0] == '0' && strcmp(c->cni_version, "0.4.0") != 0)
		return cni_err_set(err, CNI_ERR_VERSION, "Incompatible CNI version",
				   "config version %s does not allow CHECK (0.4.0 or later)",
				   c->cni_version);
	if (check_env(true, err) < 0)
		return -EINVAL;
	if (!opted_in(c))
		return 0;	/* passed through at ADD: nothing of ours to check */
	cni_sandbox_name(c->name, cid, ifn, name);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	r = httpc_request(c->socket, "GET", path, NULL, &status, &reply);
	if (r < 0)
		return netd_down(r) ? err_netd_down(err, c->socket, r) :
			cni_err_set(err, CNI_ERR_IO, "I/O failure", "%s", strerror(-r));
	if (status == 404) {
		json_decref(reply);
		return cni_err_set(err, CNI_ERR_CHECK_RECORD, "Attachment not enforced",
				   "netd has no sandbox %s for container %s interface %s", name,
				   cid, ifn);
	}
	if (status != 200) {
		r = cni_err_set(err, CNI_ERR_NETD, "netd refused the request", "GET %s: HTTP %d",
				path, status);
		json_decref(reply);
		return r;
	}
	host = cni_json_str(reply, "host_ifname");
	probe.ifname = ifn;
	probe.want4 = cni_json_str(reply, "ipv4");
	r = 0;
	if (!host || if_nametoindex(host) == 0)
		r = cni_err_set(err, CNI_ERR_CHECK_LINK, "Interface missing",
				"host-side interface %s of sandbox %s is gone", host ? host : "?",
				name);
	else if (in_netns(ns, probe_peer, &probe) < 0)
		r = cni_err_set(err, CNI_ERR_CHECK_LINK, "Interface missing",
				"%s is not in netns %s", ifn, ns);
	else if (probe.want4 && !probe.has_addr)
		r = cni_err_set(err, CNI_ERR_CHECK_LINK, "Address missing",
				"%s in %s does not have %s", ifn, ns, probe.want4);
	json_decref(reply);
	/* The IPAM plugin checks its own records (§4: CHECK runs the delegate). */
	if (r == 0 && c->ipam_type)
		r = ipam_exec(c, "CHECK", NULL, err);
	return r;
}

/*
 * GC (spec 1.1.0 §2): drop every sandbox of this network whose attachment
 * is not in the valid list.  Continues past errors and reports the first.
 */
static int cmd_gc(const struct cni_conf *c, struct cni_err *err)
{
	char prefix[16];
	json_t *reply = NULL, *list, *sb;
	size_t i, n_valid = json_array_size(c->valid_attachments), failed = 0, dropped = 0;
	char (*valid)[CNI_SANDBOX_NAME_LEN + 1] = NULL;
	int r, status;

	cni_sandbox_prefix(c->name, prefix);
	r = httpc_request(c->socket, "GET", "/v1/sandboxes", NULL, &status, &reply);
	if (r < 0)
		return netd_down(r) ? err_netd_down(err, c->socket, r) :
			cni_err_set(err, CNI_ERR_IO, "I/O failure", "%s", strerror(-r));
	list = json_object_get(reply, "sandboxes");
	if (status != 200 || !json_is_array(list)) {
		json_decref(reply);
		return cni_err_set(err, CNI_ERR_NETD, "netd refused the request",
				   "GET /v1/sandboxes: HTTP %d", status);
	}
	valid = calloc(n_valid ? n_valid : 1, sizeof(*valid));
	if (!valid) {
		json_decref(reply);
		return cni_err_set(err, CNI_ERR_IO, "I/O failure", "out of memory");
	}
	for (i = 0; i < n_valid; i++) {
		json_t *a = json_array_get(c->valid_attachments, i);

		cni_sandbox_name(c->name, json_string_value(json_object_get(a, "containerID")),
				 json_string_value(json_object_get(a, "ifname")), valid[i]);
	}
	json_array_foreach(list, i, sb) {
		const char *name = cni_json_str(sb, "name");
		char path[128];
		json_t *dr = NULL;
		size_t j;
		int ds;

		if (!name || strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		for (j = 0; j < n_valid && strcmp(valid[j], name) != 0; j++)
			;
		if (j < n_valid)
			continue;
		snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
		r = httpc_request(c->socket, "DELETE", path, NULL, &ds, &dr);
		json_decref(dr);
		if (r < 0 || (ds != 200 && ds != 404)) {
			if (!failed++)
				cni_err_set(err, CNI_ERR_NETD, "GC incomplete",
					    "cannot delete sandbox %s: %s", name,
					    r < 0 ? strerror(-r) : "netd refused");
		} else {
			dropped++;
			fprintf(stderr, "netd-cni: GC %s: dropped sandbox %s\n", c->name, name);
		}
	}
	free(valid);
	json_decref(reply);
	if (c->ipam_type) {
		/*
		 * §4: GC runs the delegate, which frees what the valid list does
		 * not hold.  IPAM plugins older than spec 1.1 have no GC: that
		 * is logged, not fatal (their DEL released each address).
		 */
		struct cni_err e = { 0 };

		if (ipam_exec(c, "GC", NULL, &e) < 0)
			fprintf(stderr, "netd-cni: GC: IPAM plugin %s: %s: %s\n", c->ipam_type,
				e.msg, e.details);
	}
	return failed ? -EIO : 0;
}

static int cmd_status(const struct cni_conf *c, struct cni_err *err)
{
	json_t *reply = NULL;
	int r, status;

	r = httpc_request(c->socket, "GET", "/v1/status", NULL, &status, &reply);
	json_decref(reply);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_STATUS_DOWN, "netd is not available",
				   "control socket %s: %s", c->socket, strerror(-r));
	if (status != 200)
		return cni_err_set(err, CNI_ERR_STATUS_DOWN, "netd is not available",
				   "GET /v1/status: HTTP %d", status);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = env("CNI_COMMAND");
	struct cni_conf c = { 0 };
	struct cni_err err = { 0 };
	char *in = NULL;
	size_t len = 0;
	int r;

	/* Runtimes exec a plugin without arguments; the installer passes some. */
	if (argc > 1 && !cmd)
		return install_main(argc, argv);
	if (!cmd) {
		cni_err_set(&err, CNI_ERR_ENV, "Invalid environment variables",
			    "CNI_COMMAND is missing (ADD, DEL, CHECK, GC, STATUS or VERSION)");
		return fail(NULL, &err);
	}
	r = read_stdin(&in, &len);
	if (r < 0) {
		cni_err_set(&err, r == -EFBIG ? CNI_ERR_DECODE : CNI_ERR_IO,
			    r == -EFBIG ? "Failed to decode content" : "I/O failure",
			    "reading the network config from stdin: %s", strerror(-r));
		return fail(NULL, &err);
	}
	if (strcmp(cmd, "VERSION") == 0) {
		/* Only CNI_COMMAND matters; stdin holds the runtime's version (or nothing). */
		json_t *o = json_loadb(in, len, 0, NULL);

		print_json(cni_version_json(cni_json_str(o, "cniVersion")));
		json_decref(o);
		free(in);
		return 0;
	}
	if (strcmp(cmd, "ADD") != 0 && strcmp(cmd, "DEL") != 0 && strcmp(cmd, "CHECK") != 0 &&
	    strcmp(cmd, "GC") != 0 && strcmp(cmd, "STATUS") != 0) {
		free(in);
		cni_err_set(&err, CNI_ERR_ENV, "Invalid environment variables",
			    "CNI_COMMAND: unknown command (want ADD, DEL, CHECK, GC, STATUS or VERSION)");
		return fail(NULL, &err);
	}
	r = cni_conf_parse(in, len, &c, &err);
	if (r < 0) {
		free(in);
		return fail(err.version[0] ? err.version : NULL, &err);
	}
	ipam_stdin(in, len);
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(cmd, "ADD") == 0)
		r = cmd_add(&c, &err);
	else if (strcmp(cmd, "DEL") == 0)
		r = cmd_del(&c, &err);
	else if (strcmp(cmd, "CHECK") == 0)
		r = cmd_check(&c, &err);
	else if (strcmp(cmd, "GC") == 0)
		r = cmd_gc(&c, &err);
	else
		r = cmd_status(&c, &err);
	if (r < 0)
		r = fail(c.cni_version, &err);
	cni_conf_done(&c);
	free(in);
	return r;
}
