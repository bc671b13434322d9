/*
 * daemon - `netd run`.  Startup is all-or-nothing (a bad config or policy
 * stops it with file:line:col); afterwards a bad request is refused and the
 * last good state kept.  Order of every sandbox change is chosen so that a
 * sandbox is never without rules:
 *
 *   create: nf_tables chain/sets/elements first, then the interface;
 *   delete: the interface first, then the rules.
 */
#include "netd/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/addr.h"
#include "common/diag.h"
#include "common/log.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/proxy.h"
#include "dnsproxy/wire.h"
#include "netd/audit.h"
#include "netd/config.h"
#include "netd/ctl.h"
#include "netd/fw.h"
#include "netd/link.h"

#define DAEMON_MAX_POLICIES 1024
#define DAEMON_MAX_INTERNAL 256
#define NETNS_ETC_DIR "/etc/netns"

struct daemon {
	struct config cfg;
	struct event_base *base;
	struct fw *fw;
	struct proxy *proxy;
	struct audit *audit;
	struct ctl *ctl;
	struct sandbox_table *sandboxes;
	struct policy *policies[DAEMON_MAX_POLICIES];
	size_t n_policies;
	struct prefix internal[DAEMON_MAX_INTERNAL];
	size_t n_internal;
	char egress_ifname[16];
	int lock_fd;
	time_t started;
	uint64_t dns_allowed, dns_denied, dns_failed;
};

static const struct policy *policy_by_name(const struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_policies; i++)
		if (strcmp(d->policies[i]->name, name) == 0)
			return d->policies[i];
	return NULL;
}

/* ---- policies ------------------------------------------------------------ */

static int yaml_file(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
				  (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Load every .yaml/.yml file in @dir into @out; all or nothing.  Errors are
 * logged with file:line:col.
 */
static int load_policies(const char *dir, struct policy **out, size_t *n_out)
{
	char *names[DAEMON_MAX_POLICIES];
	size_t n_names = 0, n = 0;
	struct dirent *e;
	DIR *dh = opendir(dir);
	int r = 0;

	if (!dh) {
		r = -errno;
		log_err("cannot read policy_dir %s: %s", dir, strerror(-r));
		return r;
	}
	while ((e = readdir(dh))) {
		if (!yaml_file(e->d_name))
			continue;
		if (n_names == DAEMON_MAX_POLICIES) {
			log_err("%s: more than %d policy files", dir, DAEMON_MAX_POLICIES);
			r = -E2BIG;
			break;
		}
		names[n_names] = strdup(e->d_name);
		if (!names[n_names]) {
			r = -ENOMEM;
			break;
		}
		n_names++;
	}
	closedir(dh);
	qsort(names, n_names, sizeof(names[0]), name_cmp);
	for (size_t i = 0; r == 0 && i < n_names; i++) {
		char path[PATH_MAX], msg[1024];
		struct diag err = { 0 };
		struct policy *p;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		r = policy_load_file(path, &p, &err);
		if (r < 0) {
			log_err("%s", diag_format(&err, msg, sizeof(msg)));
			break;
		}
		for (size_t j = 0; j < n; j++) {
			if (strcmp(out[j]->name, p->name) == 0) {
				log_err("%s: policy name \"%s\" is also used by %s", path, p->name,
					out[j]->file ? out[j]->file : "another file");
				policy_free(p);
				r = -EEXIST;
				break;
			}
		}
		if (r == 0)
			out[n++] = p;
	}
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			policy_free(out[i]);
		return r;
	}
	*n_out = n;
	return 0;
}

/* ---- JSON views ---------------------------------------------------------- */

static json_t *json_addr(const struct addr *a)
{
	char buf[ADDR_STRLEN];

	if (!a->family)
		return json_null();
	return json_string(addr_format(a, buf, sizeof(buf)));
}

json_t *daemon_sandbox_json(struct daemon *d, const struct sandbox *sb)
{
	char created[32];
	struct tm tm;

	gmtime_r(&sb->created, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	(void)d;
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:{s:I, s:I}}",
			 "name", sb->name, "policy", sb->policy, "netns", sb->netns_path,
			 "netns_owned", sb->netns_owned, "host_ifname", sb->host_ifname,
			 "ifname", sb->peer_ifname, "ipv4", json_addr(&sb->addr4),
			 "gateway4", json_addr(&sb->gw4), "ipv6", json_addr(&sb->addr6),
			 "gateway6", json_addr(&sb->gw6), "created", created, "dns",
			 "allowed", (json_int_t)sb->dns_allowed, "denied",
			 (json_int_t)sb->dns_denied);
}

json_t *daemon_sandboxes_json(struct daemon *d)
{
	json_t *arr = json_array();
	uint32_t cur = 0;
	struct sandbox *sb;

	while ((sb = sandbox_next(d->sandboxes, &cur)))
		json_array_append_new(arr, daemon_sandbox_json(d, sb));
	return arr;
}

static json_t *policy_json(const struct policy *p)
{
	json_t *rules = json_array();

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		json_t *rule = json_object(), *ports = json_array();

		if (r->n_domains) {
			json_t *arr = json_array();

			for (size_t j = 0; j < r->n_domains; j++)
				json_array_append_new(arr, json_string(r->domains[j]));
			json_object_set_new(rule, "domains", arr);
		} else {
			json_t *arr = json_array();
			char buf[PREFIX_STRLEN];

			for (size_t j = 0; j < r->n_cidrs; j++)
				json_array_append_new(arr, json_string(prefix_format(
								   &r->cidrs[j], buf, sizeof(buf))));
			json_object_set_new(rule, "cidrs", arr);
		}
		for (size_t j = 0; j < r->n_ports; j++) {
			char buf[16];

			if (r->ports[j].lo == r->ports[j].hi)
				json_array_append_new(ports, json_integer(r->ports[j].lo));
			else {
				snprintf(buf, sizeof(buf), "%u-%u", r->ports[j].lo, r->ports[j].hi);
				json_array_append_new(ports, json_string(buf));
			}
		}
		json_object_set_new(rule, "ports", ports);
		json_object_set_new(rule, "protocol",
				    json_string(r->proto == IPPROTO_UDP ? "udp" : "tcp"));
		json_array_append_new(rules, rule);
	}
	return json_pack("{s:s, s:s?, s:s?, s:o}", "name", p->name, "description", p->description,
			 "file", p->file, "egress", rules);
}

json_t *daemon_policies_json(struct daemon *d)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < d->n_policies; i++) {
		const struct policy *p = d->policies[i];

		json_array_append_new(arr, json_pack("{s:s, s:s?, s:I}", "name", p->name, "file",
						     p->file, "rules", (json_int_t)p->n_rules));
	}
	return arr;
}

json_t *daemon_policy_json(struct daemon *d, const char *name)
{
	const struct policy *p = policy_by_name(d, name);

	return p ? policy_json(p) : NULL;
}

json_t *daemon_status_json(struct daemon *d)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:{s:I, s:I}}", "status", "ok",
			 "uptime_s", (json_int_t)(time(NULL) - d->started), "sandboxes",
			 (json_int_t)sandbox_count(d->sandboxes), "policies",
			 (json_int_t)d->n_policies, "dns", "allowed", (json_int_t)d->dns_allowed,
			 "denied", (json_int_t)d->dns_denied, "failed", (json_int_t)d->dns_failed,
			 "audit", "written", (json_int_t)audit_written(d->audit), "dropped",
			 (json_int_t)audit_dropped(d->audit));
}

/* ---- state dir ----------------------------------------------------------- */

/* Atomic write: temp file, fsync, rename, so a crash never leaves half a file. */
static int write_file_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

static void state_path(const struct daemon *d, const char *name, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/sandboxes/%s.json", d->cfg.state_dir, name);
}

static int state_save(struct daemon *d, const struct sandbox *sb)
{
	char path[PATH_MAX];
	json_t *obj = json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:I}", "name", sb->name, "policy",
				sb->policy, "netns", sb->netns_path, "netns_owned",
				sb->netns_owned, "ifname", sb->peer_ifname, "slot", (int)sb->slot,
				"created", (json_int_t)sb->created);
	char *text = obj ? json_dumps(obj, JSON_INDENT(2)) : NULL;
	int r;

	json_decref(obj);
	if (!text)
		return -ENOMEM;
	state_path(d, sb->name, path, sizeof(path));
	r = write_file_atomic(path, text, strlen(text));
	free(text);
	return r;
}

static int mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;

			*p = '\0';
			if (mkdir(buf, mode) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

/* ---- resolv.conf for created namespaces ---------------------------------- */

static int resolv_conf_write(const struct sandbox *sb)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], text[256], a4[ADDR_STRLEN], a6[ADDR_STRLEN];
	int n, r;

	snprintf(dir, sizeof(dir), NETNS_ETC_DIR "/%s", sb->name);
	r = mkdir_p(dir, 0755);
	if (r < 0)
		return r;
	n = snprintf(text, sizeof(text),
		     "# written by netd for sandbox %s: every DNS query goes to netd's proxy\n"
		     "nameserver %s\n",
		     sb->name, addr_format(&sb->gw4, a4, sizeof(a4)));
	if (sb->gw6.family)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "nameserver %s\n",
			      addr_format(&sb->gw6, a6, sizeof(a6)));
	snprintf(path, sizeof(path), "%s/resolv.conf", dir);
	return write_file_atomic(path, text, (size_t)n);
}

static void resolv_conf_remove(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NETNS_ETC_DIR "/%s/resolv.conf", name);
	unlink(path);
	snprintf(path, sizeof(path), NETNS_ETC_DIR "/%s", name);
	rmdir(path);
}

/* ---- sandboxes ----------------------------------------------------------- */

static void fw_view(const struct sandbox *sb, struct fw_sandbox *out)
{
	out->name = sb->name;
	out->host_ifname = sb->host_ifname;
	out->addr4 = sb->addr4;
	out->addr6 = sb->addr6;
}

static void audit_sandbox(struct daemon *d, const struct sandbox *sb, const char *action)
{
	audit_write(d->audit, "sandbox",
		    json_pack("{s:s, s:s, s:s, s:s}", "sandbox", sb->name, "policy", sb->policy,
			      "action", action, "netns", sb->netns_path));
}

static bool ifname_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return true;
}

/*
 * Bring @sb up: rules first, then interface; roll back on error.
 * @create_netns: create /run/netns/NAME (else sb->netns_path must exist).
 */
static int sandbox_build(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			 bool create_netns, char *err, size_t errsz)
{
	struct fw_sandbox fv;
	struct link_veth v = { 0 };
	int nsfd = -1, r;

	fw_view(sb, &fv);
	if (create_netns) {
		r = link_netns_create(sb->name);
		if (r < 0) {
			snprintf(err, errsz, "cannot create netns %s: %s", sb->name,
				 r == -EEXIST ? "a netns of that name exists (attach it with \"netns\")" :
						strerror(-r));
			return r;
		}
	}
	nsfd = link_netns_open(sb->netns_path);
	if (nsfd < 0) {
		r = nsfd;
		snprintf(err, errsz, "%s: %s", sb->netns_path,
			 r == -EINVAL ? "not a network namespace" : strerror(-r));
		goto fail_ns;
	}
	/* Rules before the interface: the sandbox's first packet is already under policy. */
	r = fw_sandbox_add(d->fw, &fv, pol);
	if (r < 0) {
		snprintf(err, errsz, "nf_tables rejected the sandbox's rules: %s", strerror(-r));
		goto fail_ns;
	}
	v.host_ifname = sb->host_ifname;
	v.peer_ifname = sb->peer_ifname;
	v.netns_fd = nsfd;
	v.host4 = (struct prefix){ sb->gw4, 30 };
	v.peer4 = (struct prefix){ sb->addr4, 30 };
	if (sb->addr6.family) {
		v.host6 = (struct prefix){ sb->gw6, 126 };
		v.peer6 = (struct prefix){ sb->addr6, 126 };
	}
	r = link_veth_setup(&v);
	if (r < 0) {
		snprintf(err, errsz, "cannot set up interfaces %s/%s: %s", sb->host_ifname,
			 sb->peer_ifname,
			 r == -EEXIST ? "an interface of that name exists" : strerror(-r));
		fw_sandbox_del(d->fw, &fv);
		goto fail_ns;
	}
	close(nsfd);
	return 0;
fail_ns:
	if (nsfd >= 0)
		close(nsfd);
	if (create_netns)
		link_netns_delete(sb->name);
	return r;
}

int daemon_sandbox_create(struct daemon *d, const struct sandbox_request *req,
			  struct sandbox **ret, char *err, size_t errsz)
{
	const struct policy *pol;
	struct sandbox *sb;
	char q[160];
	int r;

	if (!policy_name_valid(req->name)) {
		snprintf(err, errsz,
			 "invalid sandbox name \"%s\": use 1-64 of [A-Za-z0-9_.-], starting alphanumeric",
			 log_quote(req->name, strlen(req->name), q, sizeof(q)));
		return -EINVAL;
	}
	pol = policy_by_name(d, req->policy);
	if (!pol) {
		snprintf(err, errsz, "unknown policy \"%s\" (see GET /v1/policies)",
			 log_quote(req->policy, strlen(req->policy), q, sizeof(q)));
		return -ENOENT;
	}
	if (req->ifname && !ifname_valid(req->ifname)) {
		snprintf(err, errsz, "invalid interface name \"%s\"",
			 log_quote(req->ifname, strlen(req->ifname), q, sizeof(q)));
		return -EINVAL;
	}
	if (req->netns && (req->netns[0] != '/' || strlen(req->netns) >= PATH_MAX)) {
		snprintf(err, errsz, "netns must be an absolute path such as /proc/PID/ns/net");
		return -EINVAL;
	}
	r = sandbox_alloc(d->sandboxes, req->name, -1, &sb);
	if (r < 0) {
		snprintf(err, errsz, "%s", r == -EEXIST ? "a sandbox of that name exists" :
					 r == -ENOSPC ? "the address pool is full" :
							strerror(-r));
		return r;
	}
	snprintf(sb->policy, sizeof(sb->policy), "%s", pol->name);
	if (req->ifname)
		snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "%s", req->ifname);
	if (req->netns) {
		snprintf(sb->netns_path, sizeof(sb->netns_path), "%s", req->netns);
		sb->netns_owned = false;
	} else {
		snprintf(sb->netns_path, sizeof(sb->netns_path), NETNS_RUN_DIR "/%s", sb->name);
		sb->netns_owned = true;
	}
	sb->created = time(NULL);
	r = sandbox_build(d, sb, pol, sb->netns_owned, err, errsz);
	if (r < 0) {
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	if (sb->netns_owned) {
		r = resolv_conf_write(sb);
		if (r < 0)
			log_warn("sandbox %s: cannot write resolv.conf: %s", sb->name, strerror(-r));
	}
	r = state_save(d, sb);
	if (r < 0)
		log_warn("sandbox %s: cannot save state: %s", sb->name, strerror(-r));
	sandbox_insert(d->sandboxes, sb);
	log_info("sandbox %s created: policy %s, %s, host interface %s", sb->name, sb->policy,
		 sb->netns_path, sb->host_ifname);
	audit_sandbox(d, sb, "create");
	*ret = sb;
	return 0;
}

/* Tear down @sb's kernel state: interface first, then the rules. */
static void sandbox_teardown(struct daemon *d, const struct sandbox *sb)
{
	struct fw_sandbox fv;
	char path[PATH_MAX];
	int r;

	r = link_delete(sb->host_ifname);
	if (r < 0)
		log_warn("sandbox %s: cannot delete %s: %s", sb->name, sb->host_ifname,
			 strerror(-r));
	fw_view(sb, &fv);
	r = fw_sandbox_del(d->fw, &fv);
	if (r < 0)
		log_warn("sandbox %s: cannot delete rules: %s", sb->name, strerror(-r));
	if (sb->netns_owned) {
		r = link_netns_delete(sb->name);
		if (r < 0)
			log_warn("sandbox %s: cannot delete netns: %s", sb->name, strerror(-r));
		resolv_conf_remove(sb->name);
	}
	state_path(d, sb->name, path, sizeof(path));
	unlink(path);
}

int daemon_sandbox_delete(struct daemon *d, const char *name)
{
	struct sandbox *sb = sandbox_find(d->sandboxes, name);

	if (!sb)
		return -ENOENT;
	sandbox_teardown(d, sb);
	log_info("sandbox %s deleted", sb->name);
	audit_sandbox(d, sb, "delete");
	sandbox_remove(d->sandboxes, sb);
	return 0;
}

struct sandbox *daemon_sandbox_find(struct daemon *d, const char *name)
{
	return sandbox_find(d->sandboxes, name);
}

/*
 * Re-adopt the sandboxes recorded in the state dir (after a restart): one
 * whose interface still exists gets its rules back; one whose interface or
 * netns is gone is cleaned up and logged.
 */
static void state_restore(struct daemon *d)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/sandboxes", d->cfg.state_dir);
	dh = opendir(dir);
	if (!dh)
		return;
	while ((e = readdir(dh))) {
		const char *name, *policy, *netns, *ifname;
		char path[PATH_MAX + 256];
		const struct policy *pol;
		struct fw_sandbox fv;
		struct sandbox *sb;
		json_error_t jerr;
		int owned = 0, slot = -1, r;
		json_int_t created = 0;
		json_t *obj;
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		obj = json_load_file(path, 0, &jerr);
		if (!obj || json_unpack_ex(obj, &jerr, 0, "{s:s, s:s, s:s, s:b, s:s, s:i, s?I}",
					   "name", &name, "policy", &policy, "netns", &netns,
					   "netns_owned", &owned, "ifname", &ifname, "slot", &slot,
					   "created", &created) < 0) {
			log_err("%s: unreadable sandbox state (%s); left in place", path, jerr.text);
			json_decref(obj);
			continue;
		}
		r = sandbox_alloc(d->sandboxes, name, slot, &sb);
		if (r < 0) {
			log_err("%s: cannot restore sandbox: %s", path, strerror(-r));
			json_decref(obj);
			continue;
		}
		snprintf(sb->policy, sizeof(sb->policy), "%s", policy);
		snprintf(sb->netns_path, sizeof(sb->netns_path), "%s", netns);
		snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "%s", ifname);
		sb->netns_owned = owned;
		sb->created = (time_t)created;
		json_decref(obj);
		pol = policy_by_name(d, sb->policy);
		if (link_exists(sb->host_ifname) != 1 || !pol) {
			log_warn("sandbox %s: %s; cleaning up", sb->name,
				 pol ? "its interface is gone" : "its policy is gone");
			sandbox_teardown(d, sb);
			sandbox_release(d->sandboxes, sb);
			continue;
		}
		fw_view(sb, &fv);
		r = fw_sandbox_add(d->fw, &fv, pol);
		if (r < 0) {
			log_err("sandbox %s: cannot restore rules: %s; removing it", sb->name,
				strerror(-r));
			sandbox_teardown(d, sb);
			sandbox_release(d->sandboxes, sb);
			continue;
		}
		sandbox_insert(d->sandboxes, sb);
		log_info("sandbox %s restored (policy %s)", sb->name, sb->policy);
	}
	closedir(dh);
}

/* ---- the proxy's view ---------------------------------------------------- */

static int ops_lookup(void *ctx, const struct addr *src, struct proxy_client *out)
{
	struct daemon *d = ctx;
	struct sandbox *sb = sandbox_by_addr(d->sandboxes, src);
	const struct policy *pol;

	if (!sb)
		return -ENOENT;
	pol = policy_by_name(d, sb->policy);
	if (!pol)
		return -ENOENT;
	out->sandbox = sb->name;
	out->policy = pol;
	return 0;
}

static int ops_pin(void *ctx, const char *sandbox, const struct fw_pin *pins, size_t n)
{
	struct daemon *d = ctx;

	return fw_pin(d->fw, sandbox, pins, n);
}

static const char *qtype_name(uint16_t t, char *buf, size_t sz)
{
	switch (t) {
	case WIRE_TYPE_A: return "A";
	case WIRE_TYPE_NS: return "NS";
	case WIRE_TYPE_CNAME: return "CNAME";
	case WIRE_TYPE_SOA: return "SOA";
	case WIRE_TYPE_PTR: return "PTR";
	case WIRE_TYPE_MX: return "MX";
	case WIRE_TYPE_TXT: return "TXT";
	case WIRE_TYPE_AAAA: return "AAAA";
	case WIRE_TYPE_DNAME: return "DNAME";
	case WIRE_TYPE_SVCB: return "SVCB";
	case WIRE_TYPE_HTTPS: return "HTTPS";
	case WIRE_TYPE_ANY: return "ANY";
	default:
		snprintf(buf, sz, "TYPE%u", t);	/* RFC 3597 presentation */
		return buf;
	}
}

static const char *rcode_name(uint8_t rc)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP", "REFUSED" };

	return rc < 6 ? names[rc] : "OTHER";
}

static void ops_audit(void *ctx, const struct proxy_event *ev)
{
	struct daemon *d = ctx;
	struct sandbox *sb = ev->client ? sandbox_by_addr(d->sandboxes, ev->client) : NULL;
	json_t *answers = json_array();
	char tbuf[16], cbuf[ADDR_STRLEN];

	if (ev->allowed && ev->rcode != WIRE_RCODE_SERVFAIL)
		d->dns_allowed++;
	else if (ev->allowed)
		d->dns_failed++;
	else
		d->dns_denied++;
	if (sb) {
		if (ev->allowed)
			sb->dns_allowed++;
		else
			sb->dns_denied++;
	}
	for (size_t i = 0; i < ev->n_answers; i++)
		json_array_append_new(answers, json_addr(&ev->answers[i]));
	audit_write(d->audit, "dns",
		    json_pack("{s:s?, s:s?, s:s?, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I}",
			      "sandbox", ev->sandbox, "policy", ev->policy, "client",
			      ev->client ? addr_format(ev->client, cbuf, sizeof(cbuf)) : NULL,
			      "transport", ev->transport ? ev->transport : "udp", "qname",
			      ev->qname ? ev->qname : "", "qtype",
			      qtype_name(ev->qtype, tbuf, sizeof(tbuf)), "verdict",
			      ev->allowed ? "allow" : "deny", "reason",
			      ev->reason ? ev->reason : "", "rcode", rcode_name(ev->rcode),
			      "answers", answers, "ttl", (json_int_t)ev->ttl_s, "rebind",
			      (json_int_t)ev->n_rebind));
}

static const struct proxy_ops daemon_proxy_ops = {
	.lookup = ops_lookup,
	.pin = ops_pin,
	.audit = ops_audit,
};

/* ---- startup ------------------------------------------------------------- */

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	log_info("signal %d: shutting down (the kernel keeps the rules; sandboxes stay enforced)",
		 (int)sig);
	event_base_loopbreak(d->base);
}

static int build_internal(struct daemon *d)
{
	int n;

	d->n_internal = decide_internal_default(d->internal, DAEMON_MAX_INTERNAL);
	n = link_local_addrs(d->internal + d->n_internal, DAEMON_MAX_INTERNAL - d->n_internal - 2);
	if (n < 0)
		return n;
	d->n_internal += (size_t)n;
	d->internal[d->n_internal++] = d->cfg.pool4;
	if (d->cfg.pool6_enabled)
		d->internal[d->n_internal++] = d->cfg.pool6;
	return 0;
}

static int lock_state_dir(struct daemon *d)
{
	char path[PATH_MAX];
	int r;

	r = mkdir_p(d->cfg.state_dir, 0750);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/sandboxes", d->cfg.state_dir);
		r = mkdir_p(path, 0750);
	}
	if (r < 0) {
		log_err("state_dir %s: %s", d->cfg.state_dir, strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "%s/lock", d->cfg.state_dir);
	d->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (d->lock_fd < 0) {
		r = -errno;
		log_err("%s: %s", path, strerror(-r));
		return r;
	}
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		log_err("another netd is already running on state_dir %s", d->cfg.state_dir);
		return -EBUSY;
	}
	return 0;
}

int daemon_main(const char *config_path, const char *socket_override)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	struct event *sig_int = NULL, *sig_term = NULL;
	struct diag err = { 0 };
	char msg[1024];
	int r, status = 1;

	d->lock_fd = -1;
	d->started = time(NULL);
	config_init(&d->cfg);
	if (config_path) {
		r = config_load_file(&d->cfg, config_path, &err);
		if (r < 0) {
			log_err("%s", diag_format(&err, msg, sizeof(msg)));
			goto out;
		}
	}
	if (socket_override) {
		free(d->cfg.socket);
		d->cfg.socket = strdup(socket_override);
	}
	log_set_level((enum log_level)d->cfg.log_level);
	if (d->cfg.n_upstream == 0) {
		r = config_read_resolv_conf(&d->cfg, "/etc/resolv.conf");
		if (r < 0 || d->cfg.n_upstream == 0) {
			log_err("no upstream resolver: set \"upstream\" in the config (/etc/resolv.conf has none)");
			goto out;
		}
	}
	if (lock_state_dir(d) < 0)
		goto out;
	r = load_policies(d->cfg.policy_dir, d->policies, &d->n_policies);
	if (r < 0)
		goto out;
	if (d->cfg.egress_interface[0]) {
		_Static_assert(sizeof(d->egress_ifname) == sizeof(d->cfg.egress_interface), "IFNAMSIZ");
		memcpy(d->egress_ifname, d->cfg.egress_interface, sizeof(d->egress_ifname));
		d->egress_ifname[sizeof(d->egress_ifname) - 1] = '\0';
	} else if (link_default_route_ifname(d->egress_ifname, sizeof(d->egress_ifname)) < 0) {
		log_warn("no default route: masquerading out of every non-sandbox interface");
		d->egress_ifname[0] = '\0';
	}
	r = build_internal(d);
	if (r < 0) {
		log_err("cannot list the host's addresses: %s", strerror(-r));
		goto out;
	}
	r = sandbox_table_new(&d->cfg.pool4, d->cfg.pool6_enabled ? &d->cfg.pool6 :
					&(struct prefix){ 0 }, &d->sandboxes);
	if (r < 0) {
		log_err("pool: %s", strerror(-r));
		goto out;
	}
	r = link_enable_forwarding(d->cfg.pool6_enabled);
	if (r < 0) {
		log_err("cannot enable forwarding: %s", strerror(-r));
		goto out;
	}
	{
		struct fw_config fc = {
			.table = "netd",
			.dns_port = d->cfg.dns_port,
			.egress_ifname = d->egress_ifname,
			.pool4 = d->cfg.pool4,
			.internal = d->internal,
			.n_internal = d->n_internal,
		};

		if (d->cfg.pool6_enabled)
			fc.pool6 = d->cfg.pool6;
		r = fw_open(&fc, &d->fw);
		if (r < 0) {
			log_err("nf_tables: cannot create table inet netd: %s", strerror(-r));
			goto out;
		}
	}
	r = audit_open(d->cfg.audit_log, &d->audit);
	if (r < 0) {
		log_err("audit_log %s: %s", d->cfg.audit_log, strerror(-r));
		goto out;
	}
	state_restore(d);
	d->base = event_base_new();
	if (!d->base)
		goto out;
	{
		struct proxy_config pc = {
			.port = d->cfg.dns_port,
			.upstream = d->cfg.upstream,
			.n_upstream = d->cfg.n_upstream,
			.min_ttl_s = d->cfg.min_ttl_s,
			.max_ttl_s = d->cfg.max_ttl_s,
			.deny_rcode = d->cfg.deny_rcode,
			.internal = d->internal,
			.n_internal = d->n_internal,
			.upstream_timeout_ms = 2000,
		};

		r = proxy_new(d->base, &pc, &daemon_proxy_ops, d, &d->proxy);
		if (r < 0) {
			log_err("DNS proxy: cannot listen on port %u: %s", d->cfg.dns_port,
				strerror(-r));
			goto out;
		}
	}
	r = ctl_new(d->base, d->cfg.socket, d, &d->ctl);
	if (r < 0) {
		log_err("control socket %s: %s", d->cfg.socket,
			r == -EADDRINUSE ? "another netd is answering there" : strerror(-r));
		goto out;
	}
	sig_int = evsignal_new(d->base, SIGINT, on_signal, d);
	sig_term = evsignal_new(d->base, SIGTERM, on_signal, d);
	if (!sig_int || !sig_term || evsignal_add(sig_int, NULL) < 0 ||
	    evsignal_add(sig_term, NULL) < 0)
		goto out;
	signal(SIGPIPE, SIG_IGN);
	log_info("ready: %zu policies, %zu sandboxes, DNS proxy on port %u, egress %s, control %s",
		 d->n_policies, sandbox_count(d->sandboxes), d->cfg.dns_port,
		 d->egress_ifname[0] ? d->egress_ifname : "(any)", d->cfg.socket);
	event_base_dispatch(d->base);
	status = 0;
out:
	if (sig_int)
		event_free(sig_int);
	if (sig_term)
		event_free(sig_term);
	ctl_free(d->ctl);
	proxy_free(d->proxy);
	audit_close(d->audit);
	fw_close(d->fw);
	sandbox_table_free(d->sandboxes);
	for (size_t i = 0; i < d->n_policies; i++)
		policy_free(d->policies[i]);
	if (d->base)
		event_base_free(d->base);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	config_done(&d->cfg);
	return status;
}
