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
#include <net/if.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/addr.h"
#include "common/diag.h"
#include "common/jsonl.h"
#include "common/log.h"
#include "common/special.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/proxy.h"
#include "dnsproxy/wire.h"
#include "netd/audit.h"
#include "netd/config.h"
#include "netd/ctl.h"
#include "netd/ctcut.h"
#include "netd/fw.h"
#include "netd/grace.h"
#include "netd/link.h"
#include "netd/pinsrc.h"
#include "netd/policy_dns.h"
#include "netd/policywatch.h"
#include "netd/acct.h"
#include "netd/trail.h"

#define DAEMON_MAX_POLICIES 1024
#define DNS_DENY_AUDIT_RATE  20.0	/* denied-query records per second per sandbox */
#define DNS_DENY_AUDIT_BURST 100.0
#define DAEMON_MAX_INTERNAL 256
#define NETNS_ETC_DIR "/etc/netns"

/* The "who" members of the last DNS audit record (audit_who()). */
struct audit_who {
	bool valid;
	char sandbox[SANDBOX_NAME_MAX + 1], policy[POLICY_NAME_MAX + 1], transport[8];
	struct addr client;
	char members[512];
	size_t len;
};

/* The "what" members of the last DNS audit record (audit_what()). */
#define AUDIT_WHAT_ADDRS 16
struct audit_what {
	bool valid, allowed;
	char qname[256], reason[32];
	uint16_t qtype;
	uint8_t rcode;
	uint32_t ttl_s;
	size_t n_rebind, n_answers;
	struct addr answers[AUDIT_WHAT_ADDRS];
	char members[2048];
	size_t len;
};

struct daemon {
	struct config cfg;
	struct event_base *base;
	struct fw *fw;
	struct proxy *proxy;
	struct audit *audit;
	struct ctl *ctl;
	struct trail *trail;	/* conn/deny records (issue: accounting) */
	struct sandbox_table *sandboxes;
	struct policy *policies[DAEMON_MAX_POLICIES];
	size_t n_policies;
	struct prefix internal[DAEMON_MAX_INTERNAL];
	size_t n_internal;
	char egress_ifname[16];
	int lock_fd;
	int netns_lock_fd;	/* abstract unix socket: one netd per netns */
	time_t started;
	uint64_t dns_allowed, dns_denied, dns_failed;
	struct pinsrc *pinsrc;	/* pin -> qnames, for reloads (netd/pinsrc.h) */
	uint64_t reloads, reloads_rejected;
	struct audit_who who;	/* caches of ops_audit() */
	struct audit_what what;
	unsigned int fd_limit;	/* RLIMIT_NOFILE after raising it */
	unsigned int n_dns_listeners;	/* sockets of sandbox_dns_direct() */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const struct policy *policy_by_name(const struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_policies; i++)
		if (strcmp(d->policies[i]->name, name) == 0)
			return d->policies[i];
	return NULL;
}

static const struct policy *trail_policy(void *ctx, const char *name)
{
	return policy_by_name(ctx, name);
}

/*
 * The idle grace's pin (trail.h, netd/grace.h): the kernel's own element
 * is asked first (it may hold more than the proxy tracked, after a
 * restart), then the pin goes through the proxy's pin tracking, so a grace
 * never shortens a longer pin (an add SETS the timeout), a later shorter
 * answer never shortens the grace, and dns.max_pins holds.  One loop, one
 * thread: nothing pins between lookup and add.
 */
static int trail_grace_pin(void *ctx, const char *sandbox, const struct fw_pin *pin)
{
	struct daemon *d = ctx;
	uint64_t left_ms = 0;
	int r = fw_pin_lookup(d->fw, sandbox, &pin->addr, pin->proto, pin->port, &left_ms);

	if (r < 0)
		return r;
	if (r == 1 && left_ms >= pin->timeout_ms)
		return 0;
	r = proxy_pin_extend(d->proxy, sandbox, pin, 1);
	return r < 0 ? r : 1;
}

/* Idle graces on iff dns.idle_grace or some loaded rule's idle_grace is non-zero. */
static void grace_update(struct daemon *d)
{
	bool want = false;
	int r;

	for (size_t i = 0; i < d->n_policies && !want; i++)
		want = grace_policy_wants(d->policies[i], d->cfg.dns_idle_grace_s);
	r = trail_set_grace(d->trail, want);
	if (r < 0)
		log_warn("idle grace: cannot watch closing connections: %s", strerror(-r));
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

/* Log a policy loading error and keep its text in @buf (if non-NULL). */
__attribute__((format(printf, 3, 4)))
static void policies_err(char *buf, size_t sz, const char *fmt, ...)
{
	char local[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(local, sizeof(local), fmt, ap);
	va_end(ap);
	log_err("%s", local);
	if (buf && sz)
		snprintf(buf, sz, "%s", local);
}

/*
 * Load every .yaml/.yml file in @dir into @out; all or nothing.  Errors are
 * logged with file:line:col, and the first one kept in @ebuf (may be NULL).
 */
static int load_policies(const char *dir, struct policy **out, size_t *n_out, char *ebuf,
			 size_t esz)
{
	char *names[DAEMON_MAX_POLICIES];
	size_t n_names = 0, n = 0;
	struct dirent *e;
	DIR *dh = opendir(dir);
	int r = 0;

	if (!dh) {
		r = -errno;
		policies_err(ebuf, esz, "cannot read policy_dir %s: %s", dir, strerror(-r));
		return r;
	}
	while ((e = readdir(dh))) {
		if (!yaml_file(e->d_name))
			continue;
		if (n_names == DAEMON_MAX_POLICIES) {
			policies_err(ebuf, esz, "%s: more than %d policy files", dir, DAEMON_MAX_POLICIES);
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
			policies_err(ebuf, esz, "%s", diag_format(&err, msg, sizeof(msg)));
			break;
		}
		for (size_t j = 0; j < n; j++) {
			if (strcmp(out[j]->name, p->name) == 0) {
				policies_err(ebuf, esz, "%s:%u:%u: name: policy name '%s' is also used by %s:%u",
					     path, p->name_line, p->name_col, p->name,
					     out[j]->file ? out[j]->file : "another file",
					     out[j]->name_line);
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
	json_t *o;

	o = json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:{s:I, s:I}}",
			 "name", sb->name, "policy", sb->policy, "netns", sb->netns_path,
			 "netns_owned", sb->netns_owned, "host_ifname", sb->host_ifname,
			 "ifname", sb->peer_ifname, "ipv4", json_addr(&sb->addr4),
			 "gateway4", json_addr(&sb->gw4), "ipv6", json_addr(&sb->addr6),
			 "gateway6", json_addr(&sb->gw6), "created", created, "dns",
			 "allowed", (json_int_t)sb->dns_allowed, "denied",
			 (json_int_t)sb->dns_denied);
	if (o)
		json_object_set_new(o, "kind", json_string(sb->chained ? "chained" : "interface"));
	if (o && d->trail)
		json_object_set_new(o, "traffic", trail_sandbox_json(d->trail, sb));
	return o;
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
	{
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:o}", "name", p->name, "description",
				      p->description, "file", p->file, "egress", rules);

		/*
		 * Only when set, so the digest of a policy without limits (state
		 * files, reload change detection) is what it was before limits.
		 */
		if (o && p->egress_bytes)
			json_object_set_new(o, "limits", json_pack("{s:I, s:s}", "egress_bytes",
					    (json_int_t)p->egress_bytes, "on_exceed",
					    p->quota_cut ? "cut" : "finish"));
		return o;
	}
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

/* One DNS proxy counter: its GET /v1/status "dns_proxy" key (NULL: metrics
 * only) and its Prometheus name. */
struct dns_counter {
	const char *status, *metric;
	bool gauge;
	uint64_t v;
};

#define DNS_COUNTERS 20

/* The proxy's counters for status and metrics alike; d->proxy is set. */
static size_t dns_counters(struct daemon *d, struct dns_counter c[DNS_COUNTERS])
{
	const struct proxy_stats *ps = proxy_get_stats(d->proxy);
	const struct dns_counter all[DNS_COUNTERS] = {
		{ NULL, "netd_dns_queries_allowed_total", false, d->dns_allowed },
		{ NULL, "netd_dns_queries_denied_total", false, d->dns_denied },
		{ NULL, "netd_dns_queries_failed_total", false, d->dns_failed },
		{ "cache_hits", "netd_dns_cache_hits_total", false, ps->cache_hits },
		{ "cache_misses", "netd_dns_cache_misses_total", false, ps->cache_misses },
		{ "cache_entries", "netd_dns_cache_entries", true, ps->cache_entries },
		{ "pins_sent", "netd_dns_pin_batches_total", false, ps->pins_sent },
		{ "pins_skipped", "netd_dns_pins_skipped_total", false, ps->pins_skipped },
		{ "pins_tracked", "netd_dns_pins_tracked", true, ps->pins_tracked },
		{ "pin_p50_us", "netd_dns_pin_latency_p50_us", true, proxy_stats_quantile(ps, 0.50) },
		{ "pin_p99_us", "netd_dns_pin_latency_p99_us", true, proxy_stats_quantile(ps, 0.99) },
		{ "pin_max_us", "netd_dns_pin_latency_max_us", true, ps->pin_max_us },
		{ "rate_limited", "netd_dns_rate_limited_total", false, ps->limit_qps },
		{ "outstanding_limited", "netd_dns_outstanding_limited_total", false,
		  ps->limit_outstanding },
		{ "pin_limited", "netd_dns_pin_limited_total", false, ps->limit_pins },
		{ "name_limited", "netd_dns_name_limited_total", false, ps->limit_name },
		{ "tunnel_suspect", "netd_dns_tunnel_suspect_total", false, ps->tunnel_suspect },
		{ "udp_gso_sends", "netd_dns_udp_gso_sends_total", false, ps->udp_gso_sends },
		{ "udp_gso_replies", "netd_dns_udp_gso_replies_total", false, ps->udp_gso_replies },
		{ "udp_gso_refused", "netd_dns_udp_gso_refused_total", false, ps->udp_gso_refused },
	};

	memcpy(c, all, sizeof(all));
	return DNS_COUNTERS;
}

json_t *daemon_status_json(struct daemon *d)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:{s:I, s:I}}", "status", "ok",
			 "uptime_s", (json_int_t)(time(NULL) - d->started), "sandboxes",
			 (json_int_t)sandbox_count(d->sandboxes), "policies",
			 (json_int_t)d->n_policies, "dns", "allowed", (json_int_t)d->dns_allowed,
			 "denied", (json_int_t)d->dns_denied, "failed", (json_int_t)d->dns_failed,
			 "audit", "written", (json_int_t)audit_written(d->audit), "dropped",
			 (json_int_t)audit_dropped(d->audit));

	if (o)	/* "audit" is a fresh object from json_pack above */
		json_object_set_new(json_object_get(o, "audit"), "rotations",
				    json_integer((json_int_t)audit_rotations(d->audit)));

	if (o && d->trail)
		json_object_set_new(o, "accounting", trail_stats_json(d->trail));
	if (o && d->proxy) {
		struct dns_counter c[DNS_COUNTERS];
		size_t n = dns_counters(d, c);
		json_t *dp = json_object();

		for (size_t i = 0; dp && i < n; i++)
			if (c[i].status)
				json_object_set_new(dp, c[i].status, json_integer((json_int_t)c[i].v));
		json_object_set_new(o, "dns_proxy", dp);
	}
	return o;
}

void daemon_metrics(struct daemon *d, FILE *out)
{
	struct dns_counter c[DNS_COUNTERS];
	size_t n = d->proxy ? dns_counters(d, c) : 0;

	trail_metrics(d->trail, out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "# TYPE %s %s\n%s %llu\n", c[i].metric, c[i].gauge ? "gauge" : "counter",
			c[i].metric, (unsigned long long)c[i].v);
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
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	/* The rename itself must reach the disk before we report success. */
	{
		char dir[PATH_MAX];
		char *slash;
		int dfd;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd >= 0) {
				fsync(dfd);
				close(dfd);
			}
		}
	}
	return 0;
}

static void state_path(const struct daemon *d, const char *name, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/sandboxes/%s.json", d->cfg.state_dir, name);
}

static json_t *policy_json(const struct policy *p);

/*
 * A digest of @p's content (FNV-1a 64 of its canonical JSON), stored in the
 * state file so that a restart can tell whether the policy changed while
 * netd was down.  @buf >= 17 bytes.
 */
static const char *policy_digest(const struct policy *p, char *buf, size_t sz)
{
	json_t *j = p ? policy_json(p) : NULL;
	char *text;
	uint64_t h = 0xcbf29ce484222325ull;

	if (j)
		json_object_del(j, "file");	/* where it lives is not what it says */
	text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text) {
		snprintf(buf, sz, "%s", "");
		return buf;
	}
	for (const char *c = text; *c; c++) {
		h ^= (uint8_t)*c;
		h *= 0x100000001b3ull;
	}
	free(text);
	snprintf(buf, sz, "%016llx", (unsigned long long)h);
	return buf;
}

static int state_save(struct daemon *d, const struct sandbox *sb)
{
	char path[PATH_MAX], dig[24];
	json_t *obj = json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:I, s:s, s:b}", "name", sb->name,
				"policy", sb->policy, "netns", sb->netns_path, "netns_owned",
				sb->netns_owned, "ifname", sb->peer_ifname, "slot", (int)sb->slot,
				"created", (json_int_t)sb->created, "policy_digest",
				policy_digest(policy_by_name(d, sb->policy), dig, sizeof(dig)),
				"ipv6", sb->addr6.family != 0);
	char *text;
	int r;

	/* An IPAM plugin's addresses on netd's veth (not the slot's). */
	if (obj && sb->own_addrs && !sb->chained)
		json_object_update_new(obj, json_pack("{s:o, s:o, s:i, s:o, s:o, s:i}",
						      "ipv4_addr", json_addr(&sb->addr4),
						      "gateway4", json_addr(&sb->gw4),
						      "plen4", (int)sb->plen4,
						      "ipv6_addr", json_addr(&sb->addr6),
						      "gateway6", json_addr(&sb->gw6),
						      "plen6", (int)sb->plen6));
	/* A chained attachment: its bridge port and its own addresses (not the slot's). */
	if (obj && sb->chained)
		json_object_update_new(obj, json_pack("{s:s, s:s, s:o, s:o}", "kind", "chained",
						      "host_ifname", sb->host_ifname,
						      "ipv4_addr", json_addr(&sb->addr4),
						      "ipv6_addr", json_addr(&sb->addr6)));
	text = obj ? json_dumps(obj, JSON_INDENT(2)) : NULL;
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
	memset(out, 0, sizeof(*out));	/* fields added later default to off */
	out->name = sb->name;
	out->host_ifname = sb->host_ifname;
	out->addr4 = sb->addr4;
	out->addr6 = sb->addr6;
	out->ct_mark = ACCT_MARK(sb->slot);
	out->chained = sb->chained;
}

#define DNS_DIRECT_FD_RESERVE 4096	/* descriptors the gateway sockets leave to the rest */
#define NETD_NOFILE_MIN       65536	/* RLIMIT_NOFILE netd raises itself to */

/* Close @sb's gateway listeners: after its dns_local elements are gone. */
static void sandbox_dns_direct_close(struct daemon *d, struct sandbox *sb)
{
	int *lid[2] = { &sb->dns_lid4, &sb->dns_lid6 };

	for (int f = 0; f < 2; f++) {
		if (!*lid[f])
			continue;
		proxy_listen_del(d->proxy, *lid[f]);
		*lid[f] = 0;
		if (d->n_dns_listeners)
			d->n_dns_listeners--;
	}
}

/*
 * The proxy's own UDP port 53 on @sb's gateway addresses, then their
 * dns_local elements (fw_sandbox_set_dns()): the sandbox's queries to its
 * resolver skip conntrack and the redirect.  Best effort: whatever does not
 * work out stays on the redirect, which catches all of its DNS anyway.
 * The interface must exist (the sockets are bound to it).
 */
static void sandbox_dns_direct(struct daemon *d, struct sandbox *sb)
{
	struct addr on[2] = { { 0 } };
	int *lid[2] = { &sb->dns_lid4, &sb->dns_lid6 };
	const struct addr *gw[2] = { &sb->gw4, &sb->gw6 };
	int r;

	if (sb->chained || !d->proxy || !d->fw)
		return;
	/* Two sockets a sandbox; the rest of netd (API clients, DNS over TCP,
	 * c-ares, netlink, files) keeps DNS_DIRECT_FD_RESERVE descriptors. */
	if (d->n_dns_listeners + 2 + DNS_DIRECT_FD_RESERVE > d->fd_limit) {
		log_info("sandbox %s: DNS to its gateway stays on the redirect (%u descriptors "
			 "allowed, %u gateway sockets open)", sb->name, d->fd_limit,
			 d->n_dns_listeners);
		return;
	}
	for (int f = 0; f < 2; f++) {
		if (gw[f]->family != (f == 0 ? AF_INET : AF_INET6) || (f == 1 && !d->cfg.pool6_enabled))
			continue;
		r = proxy_listen_add(d->proxy, gw[f], sb->host_ifname);
		if (r > 0) {
			*lid[f] = r;
			on[f] = *gw[f];
			d->n_dns_listeners++;
		} else {
			log_info("sandbox %s: DNS to its gateway stays on the redirect (port 53 on %s: %s)",
				 sb->name, sb->host_ifname, strerror(-r));
		}
	}
	if (!on[0].family && !on[1].family)
		return;
	r = fw_sandbox_set_dns(d->fw, sb->name, &on[0], &on[1]);
	if (r < 0) {
		log_warn("sandbox %s: DNS to its gateway stays on the redirect: %s", sb->name,
			 strerror(-r));
		sandbox_dns_direct_close(d, sb);
	}
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
static void sandbox_teardown(struct daemon *d, struct sandbox *sb);

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
	/* Attaching netd's own netns (--pid 1, say) would put the host under a sandbox chain. */
	{
		struct stat own, target;

		if (fstat(nsfd, &target) < 0 || stat("/proc/self/ns/net", &own) < 0 ||
		    (own.st_dev == target.st_dev && own.st_ino == target.st_ino)) {
			r = -EINVAL;
			snprintf(err, errsz, "%s is netd's own network namespace, not a sandbox's",
				 sb->netns_path);
			goto fail_ns;
		}
		sb->netns_dev = (uint64_t)target.st_dev;
		sb->netns_ino = (uint64_t)target.st_ino;
	}
	if (!create_netns) {
		struct sandbox *other;
		uint32_t cur = 0;
		char first[IFNAMSIZ];

		/* One sandbox per netns: two would give its processes both policies. */
		while ((other = sandbox_next(d->sandboxes, &cur))) {
			if (other != sb && other->netns_ino == sb->netns_ino &&
			    other->netns_dev == sb->netns_dev) {
				r = -EBUSY;
				snprintf(err, errsz, "%s is already sandbox %s's network namespace",
					 sb->netns_path, other->name);
				goto fail_ns;
			}
		}
		/* netd's veth must be the only way out of the namespace. */
		r = link_netns_other_links(nsfd, first, sizeof(first));
		if (r != 0) {
			if (r > 0) {
				snprintf(err, errsz,
					 "%s already has interface %s: traffic through it would bypass "
					 "netd (attach a namespace with only lo, e.g. docker run --network none)",
					 sb->netns_path, first);
				r = -EBUSY;
			} else {
				snprintf(err, errsz, "%s: cannot list its interfaces: %s",
					 sb->netns_path, strerror(-r));
			}
			goto fail_ns;
		}
	}
	/* Rules before the interface: the sandbox's first packet is already under policy. */
	r = fw_sandbox_add(d->fw, &fv, pol);
	if (r < 0) {
		snprintf(err, errsz, "nf_tables rejected the sandbox's rules: %s", strerror(-r));
		goto fail_ns;
	}
	proxy_sandbox_reset(d->proxy, sb->name);	/* fresh, empty pin sets */
	v.host_ifname = sb->host_ifname;
	v.peer_ifname = sb->peer_ifname;
	v.netns_fd = nsfd;
	if (sb->own_addrs) {
		/*
		 * An IPAM plugin's addresses: the gateway sits on the host end
		 * as a point-to-point /32 (/128) to the sandbox's address, so
		 * many sandboxes of one IPAM range each get their own host
		 * route; the sandbox end keeps the range's prefix length.
		 */
		if (sb->addr4.family) {
			v.host4 = (struct prefix){ sb->gw4, 32 };
			v.peer4 = (struct prefix){ sb->addr4, sb->plen4 };
		}
		if (sb->addr6.family) {
			v.host6 = (struct prefix){ sb->gw6, 128 };
			v.peer6 = (struct prefix){ sb->addr6, sb->plen6 };
		}
	} else {
		v.host4 = (struct prefix){ sb->gw4, 30 };
		v.peer4 = (struct prefix){ sb->addr4, 30 };
		if (sb->addr6.family) {
			v.host6 = (struct prefix){ sb->gw6, 126 };
			v.peer6 = (struct prefix){ sb->addr6, 126 };
		}
	}
	r = link_veth_setup(&v);
	if (r == -EACCES && sb->addr6.family) {
		/*
		 * The netns has IPv6 disabled (Docker's --network none does
		 * that): IPv4 only.  The rules are re-made without the IPv6
		 * address first, so no sandbox_src6 element exists and every
		 * IPv6 packet from the interface is dropped as spoofed.
		 */
		log_info("sandbox %s: IPv6 is disabled in %s; IPv4 only", sb->name,
			 sb->netns_path);
		fw_sandbox_del(d->fw, &fv);
		memset(&sb->addr6, 0, sizeof(sb->addr6));
		memset(&sb->gw6, 0, sizeof(sb->gw6));
		memset(&v.host6, 0, sizeof(v.host6));
		memset(&v.peer6, 0, sizeof(v.peer6));
		fw_view(sb, &fv);
		r = fw_sandbox_add(d->fw, &fv, pol);
		if (r < 0) {
			snprintf(err, errsz, "nf_tables rejected the sandbox's rules: %s",
				 strerror(-r));
			goto fail_ns;
		}
		r = link_veth_setup(&v);
	}
	if (r < 0) {
		snprintf(err, errsz, "cannot set up interfaces %s/%s: %s", sb->host_ifname,
			 sb->peer_ifname,
			 r == -EEXIST ? "an interface of that name, or a default route, already exists "
					"in the namespace" : strerror(-r));
		fw_sandbox_del(d->fw, &fv);
		goto fail_ns;
	}
	close(nsfd);
	sandbox_dns_direct(d, sb);
	return 0;
fail_ns:
	if (nsfd >= 0)
		close(nsfd);
	if (create_netns)
		link_netns_delete(sb->name);
	return r;
}

/*
 * Bind a chained CNI attachment: the bridge port @req->attach_host_ifname
 * (made by the plugin before netd-cni, e.g. `bridge`) and the container's
 * own addresses.  Rules only: netd creates no interface and no netns.
 */
static int sandbox_attach(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			  const struct sandbox_request *req, char *err, size_t errsz)
{
	const char *host = req->attach_host_ifname;
	struct addr a4 = { 0 }, a6 = { 0 };
	struct fw_sandbox fv;
	struct sandbox *other;
	uint32_t cur = 0;
	char q[64];
	int r;

	if (!ifname_valid(host)) {
		snprintf(err, errsz, "attach: invalid host_ifname \"%s\"",
			 log_quote(host, strlen(host), q, sizeof(q)));
		return -EINVAL;
	}
	if ((req->attach_ipv4 && (addr_parse(req->attach_ipv4, &a4) < 0 || a4.family != AF_INET)) ||
	    (req->attach_ipv6 && (addr_parse(req->attach_ipv6, &a6) < 0 || a6.family != AF_INET6))) {
		snprintf(err, errsz, "attach: ipv4/ipv6 must be a bare IPv4/IPv6 address");
		return -EINVAL;
	}
	r = link_exists(host);
	if (r != 1) {
		snprintf(err, errsz, "attach: no interface %s in netd's network namespace", host);
		return r < 0 ? r : -ENOENT;
	}
	while ((other = sandbox_next(d->sandboxes, &cur)))
		if (strcmp(other->host_ifname, host) == 0) {
			snprintf(err, errsz, "attach: %s is already sandbox %s's interface", host,
				 other->name);
			return -EBUSY;
		}
	r = sandbox_set_addrs(d->sandboxes, sb, &a4, &a6);
	if (r < 0) {
		snprintf(err, errsz, "attach: %s",
			 r == -EADDRINUSE ? "another sandbox has that address" :
			 !a4.family && !a6.family ? "ipv4 or ipv6 is required" :
			 "the address is inside netd's own pool");
		return r == -EADDRINUSE ? -EBUSY : r;
	}
	snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s", host);
	sb->chained = true;
	fw_view(sb, &fv);
	r = fw_sandbox_add(d->fw, &fv, pol);
	if (r < 0) {
		snprintf(err, errsz, "nf_tables rejected the sandbox's rules: %s", strerror(-r));
		return r;
	}
	proxy_sandbox_reset(d->proxy, sb->name);	/* fresh, empty pin sets */
	return 0;
}

/* "ADDR/PLEN" (host bits kept) of @family into @a/@plen; PLEN 1..(bits-1). */
static int ifaddr_parse(const char *s, int family, struct addr *a, uint8_t *plen)
{
	char buf[PREFIX_STRLEN + 1], *slash, *end;
	unsigned long n;

	if (strlen(s) > PREFIX_STRLEN)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	errno = 0;
	n = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || addr_parse(buf, a) < 0 || a->family != family ||
	    n == 0 || n >= addr_len(family) * 8)
		return -EINVAL;
	*plen = (uint8_t)n;
	return 0;
}

/*
 * An interface-mode sandbox whose addresses an IPAM plugin chose
 * (netd-cni delegating, CNI spec §4): @req->addr_* in place of the pool's.
 * The gateway must lie in the address's prefix (the sandbox's default
 * route goes through it on-link).
 */
static int sandbox_ipam_addrs(struct daemon *d, struct sandbox *sb,
			      const struct sandbox_request *req, char *err, size_t errsz)
{
	struct addr a4 = { 0 }, a6 = { 0 }, g4 = { 0 }, g6 = { 0 };
	uint8_t p4 = 0, p6 = 0;
	int r;

	if ((req->addr_ipv4 && (ifaddr_parse(req->addr_ipv4, AF_INET, &a4, &p4) < 0 ||
				!req->addr_gateway4 || addr_parse(req->addr_gateway4, &g4) < 0 ||
				g4.family != AF_INET ||
				!prefix_contains(&(struct prefix){ a4, p4 }, &g4) ||
				addr_equal(&a4, &g4))) ||
	    (req->addr_ipv6 && (ifaddr_parse(req->addr_ipv6, AF_INET6, &a6, &p6) < 0 ||
				!req->addr_gateway6 || addr_parse(req->addr_gateway6, &g6) < 0 ||
				g6.family != AF_INET6 ||
				!prefix_contains(&(struct prefix){ a6, p6 }, &g6) ||
				addr_equal(&a6, &g6)))) {
		snprintf(err, errsz, "addresses: ipv4/ipv6 must be ADDR/PLEN with a different "
			 "gateway4/gateway6 inside that prefix");
		return -EINVAL;
	}
	/* IPv6 off in netd's config: the sandbox runs IPv4 only, as pool sandboxes do. */
	if (!sb->addr6.family)
		memset(&a6, 0, sizeof(a6));
	if (!a4.family && !a6.family) {
		snprintf(err, errsz, "addresses: only IPv6 given, and IPv6 is disabled in netd");
		return -EINVAL;
	}
	r = sandbox_set_addrs(d->sandboxes, sb, &a4, &a6);
	if (r < 0) {
		snprintf(err, errsz, "addresses: %s",
			 r == -EADDRINUSE ? "another sandbox has that address" :
					    "the address is inside netd's own pool");
		return r == -EADDRINUSE ? -EBUSY : r;
	}
	sb->gw4 = a4.family ? g4 : (struct addr){ 0 };
	sb->gw6 = a6.family ? g6 : (struct addr){ 0 };
	sb->plen4 = p4;
	sb->plen6 = p6;
	return 0;
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
	if (req->netns || req->attach_host_ifname) {
		snprintf(sb->netns_path, sizeof(sb->netns_path), "%s", req->netns ? req->netns : "");
		sb->netns_owned = false;
	} else {
		snprintf(sb->netns_path, sizeof(sb->netns_path), NETNS_RUN_DIR "/%s", sb->name);
		sb->netns_owned = true;
	}
	sb->created = time(NULL);
	if (!req->attach_host_ifname && (req->addr_ipv4 || req->addr_ipv6)) {
		r = sandbox_ipam_addrs(d, sb, req, err, errsz);
		if (r < 0) {
			sandbox_release(d->sandboxes, sb);
			return r;
		}
	}
	r = req->attach_host_ifname ? sandbox_attach(d, sb, pol, req, err, errsz) :
				      sandbox_build(d, sb, pol, sb->netns_owned, err, errsz);
	if (r < 0) {
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	/* For `ip netns exec` (named) and `netd exec` (any): the proxy's address. */
	r = sb->chained ? 0 : resolv_conf_write(sb);
	if (r < 0)
		log_warn("sandbox %s: cannot write resolv.conf: %s", sb->name, strerror(-r));
	/*
	 * Without its state file a restarted netd would not know this sandbox
	 * and could not enforce it: fail the create rather than keep a
	 * sandbox that a restart would orphan.
	 */
	r = state_save(d, sb);
	if (r < 0) {
		snprintf(err, errsz, "cannot save the sandbox's state in %s: %s", d->cfg.state_dir,
			 strerror(-r));
		sandbox_teardown(d, sb);
		sandbox_release(d->sandboxes, sb);
		return r;
	}
	sandbox_insert(d->sandboxes, sb);
	log_info("sandbox %s created: policy %s, %s, host interface %s", sb->name, sb->policy,
		 sb->netns_path, sb->host_ifname);
	audit_sandbox(d, sb, "create");
	*ret = sb;
	return 0;
}

/* Tear down @sb's kernel state: interface first, then the rules. */
static void sandbox_teardown(struct daemon *d, struct sandbox *sb)
{
	struct fw_sandbox fv;
	char path[PATH_MAX];
	int r;

	/* A chained attachment's interface belongs to the plugin before netd-cni. */
	r = sb->chained ? 0 : link_delete(sb->host_ifname);
	if (r < 0)
		log_warn("sandbox %s: cannot delete %s: %s", sb->name, sb->host_ifname,
			 strerror(-r));
	fw_view(sb, &fv);
	/* At start-up (no fw yet) the reconcile batch drops the rules. */
	r = d->fw ? fw_sandbox_del(d->fw, &fv) : 0;
	if (r < 0)
		log_warn("sandbox %s: cannot delete rules: %s", sb->name, strerror(-r));
	sandbox_dns_direct_close(d, sb);	/* after its dns_local elements went */
	/*
	 * Its flows die with it: a conntrack entry left behind would let the
	 * next sandbox given this address ride "ct established" past its own
	 * policy.
	 */
	for (int f = 0; f < 2; f++) {
		const struct addr *a = f == 0 ? &sb->addr4 : &sb->addr6;

		if (a->family && (r = ctcut_source(a)) < 0)
			log_warn("sandbox %s: cannot flush its conntrack entries: %s", sb->name,
				 strerror(-r));
	}
	proxy_sandbox_reset(d->proxy, sb->name);
	if (sb->netns_owned) {
		r = link_netns_delete(sb->name);
		if (r < 0)
			log_warn("sandbox %s: cannot delete netns: %s", sb->name, strerror(-r));
	}
	resolv_conf_remove(sb->name);
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
	trail_sandbox_gone(d->trail, sb);
	pinsrc_forget(d->pinsrc, sb->name);
	sandbox_remove(d->sandboxes, sb);
	return 0;
}

struct sandbox *daemon_sandbox_find(struct daemon *d, const char *name)
{
	return sandbox_find(d->sandboxes, name);
}

/*
 * A policy that allows nothing, named @name: what a sandbox runs under when
 * its policy file is gone (fail closed).  Added to the loaded set, marked
 * by a NULL file and a description saying why.  Borrowed from @d.
 */
static struct policy *deny_all_new(const char *name)
{
	char text[256];
	struct diag err = { 0 };
	struct policy *p;

	if (!policy_name_valid(name))
		return NULL;
	snprintf(text, sizeof(text),
		 "name: %s\ndescription: \"deny all: its policy file is gone\"\negress: []\n", name);
	if (policy_parse(text, strlen(text), NULL, &p, &err) < 0)
		return NULL;
	free(p->file);
	p->file = NULL;
	return p;
}

static const struct policy *policy_deny_all(struct daemon *d, const char *name)
{
	struct policy *p;

	if (d->n_policies == DAEMON_MAX_POLICIES || !(p = deny_all_new(name)))
		return NULL;
	d->policies[d->n_policies++] = p;
	return p;
}

/*
 * Re-adopt the sandboxes recorded in the state dir (after a restart or a
 * crash) and open nf_tables with them: fw_open_reconcile() keeps the
 * kernel's table, pins and all, and fixes it up in ONE batch, so there is
 * no moment at which a sandbox is without rules.  A sandbox whose interface
 * vanished while netd was down (its netns was deleted) is cleaned up and
 * logged; one whose policy file is gone runs under deny-all.
 * Return: 0; -errno (fatal: nf_tables unusable).
 */
/* Record which netns @sb lives in, for the one-sandbox-per-netns check. */
static void netns_identity(struct sandbox *sb)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(sb->netns_path, &sfs) == 0 && (unsigned long)sfs.f_type == 0x6e736673UL &&
	    stat(sb->netns_path, &st) == 0) {
		sb->netns_dev = (uint64_t)st.st_dev;
		sb->netns_ino = (uint64_t)st.st_ino;
	}
}

/*
 * Interfaces named like netd's veths ("nd" + 5 hex digits) that no sandbox
 * owns are leftovers (a state file lost to a full disk, a crash between
 * steps): delete them, so nothing is attached to the host unmanaged.
 */
static void orphans_remove(struct daemon *d)
{
	static char names[4096][IFNAMSIZ];
	int n = link_names(names, sizeof(names) / sizeof(names[0]));

	if (n < 0) {
		log_warn("cannot list interfaces to find orphaned sandbox veths: %s", strerror(-n));
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *x = names[i];
		struct sandbox *sb;
		uint32_t cur = 0;
		bool owned = false;

		if (strlen(x) != 7 || strncmp(x, SANDBOX_IFNAME_PREFIX, 2) != 0 ||
		    strspn(x + 2, "0123456789abcdef") != 5)
			continue;
		while (!owned && (sb = sandbox_next(d->sandboxes, &cur)))
			owned = strcmp(sb->host_ifname, x) == 0;
		if (owned)
			continue;
		log_warn("interface %s looks like a sandbox veth but no sandbox owns it; deleting it", x);
		link_delete(x);
		audit_write(d->audit, "sandbox", json_pack("{s:s, s:s}", "action", "orphan-removed",
							   "host_ifname", x));
	}
}

static int state_restore(struct daemon *d, const struct fw_config *fc)
{
	struct fw_reconcile_info info;
	struct fw_restore *keep = NULL;
	size_t n_keep = 0, cap_keep = 0;
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dh;
	int r;

	snprintf(dir, sizeof(dir), "%s/sandboxes", d->cfg.state_dir);
	dh = opendir(dir);
	while (dh && (e = readdir(dh))) {
		const char *name, *policy, *netns, *ifname, *digest = NULL;
		char path[PATH_MAX + 256], dig[24];
		const struct policy *pol;
		struct sandbox *sb;
		json_error_t jerr;
		int owned = 0, slot = -1, ipv6 = 1;
		json_int_t created = 0;
		json_t *obj;
		size_t n = strlen(e->d_name);
		bool flush;

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		obj = json_load_file(path, 0, &jerr);
		if (!obj || json_unpack_ex(obj, &jerr, 0, "{s:s, s:s, s:s, s:b, s:s, s:i, s?I, s?s, s?b}",
					   "name", &name, "policy", &policy, "netns", &netns,
					   "netns_owned", &owned, "ifname", &ifname, "slot", &slot,
					   "created", &created, "policy_digest", &digest,
					   "ipv6", &ipv6) < 0) {
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
		if (!ipv6) {	/* created IPv4 only (IPv6 disabled in its netns) */
			memset(&sb->addr6, 0, sizeof(sb->addr6));
			memset(&sb->gw6, 0, sizeof(sb->gw6));
		}
		if (json_is_string(json_object_get(obj, "kind")) &&
		    strcmp(json_string_value(json_object_get(obj, "kind")), "chained") == 0) {
			/* A chained attachment: its bridge port and its own addresses. */
			json_t *h = json_object_get(obj, "host_ifname"),
			       *j4 = json_object_get(obj, "ipv4_addr"),
			       *j6 = json_object_get(obj, "ipv6_addr");
			struct addr a4 = { 0 }, a6 = { 0 };

			if (!json_is_string(h) || !ifname_valid(json_string_value(h)) ||
			    (json_is_string(j4) && addr_parse(json_string_value(j4), &a4) < 0) ||
			    (json_is_string(j6) && addr_parse(json_string_value(j6), &a6) < 0) ||
			    sandbox_set_addrs(d->sandboxes, sb, &a4, &a6) < 0) {
				log_err("%s: bad chained attachment state; left in place", path);
				sandbox_release(d->sandboxes, sb);
				json_decref(obj);
				continue;
			}
			snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s",
				 json_string_value(h));
			sb->chained = true;
		} else if (json_object_get(obj, "plen4") || json_object_get(obj, "plen6")) {
			/* netd's veth with an IPAM plugin's addresses (state_save()). */
			json_t *j4 = json_object_get(obj, "ipv4_addr"),
			       *j6 = json_object_get(obj, "ipv6_addr"),
			       *k4 = json_object_get(obj, "gateway4"),
			       *k6 = json_object_get(obj, "gateway6");
			json_int_t p4 = json_integer_value(json_object_get(obj, "plen4")),
				   p6 = json_integer_value(json_object_get(obj, "plen6"));
			struct addr a4 = { 0 }, a6 = { 0 }, g4 = { 0 }, g6 = { 0 };

			if ((json_is_string(j4) && (addr_parse(json_string_value(j4), &a4) < 0 ||
						    a4.family != AF_INET || !json_is_string(k4) ||
						    addr_parse(json_string_value(k4), &g4) < 0 ||
						    p4 < 1 || p4 > 31)) ||
			    (json_is_string(j6) && (addr_parse(json_string_value(j6), &a6) < 0 ||
						    a6.family != AF_INET6 || !json_is_string(k6) ||
						    addr_parse(json_string_value(k6), &g6) < 0 ||
						    p6 < 1 || p6 > 127)) ||
			    sandbox_set_addrs(d->sandboxes, sb, &a4, &a6) < 0) {
				log_err("%s: bad IPAM address state; left in place", path);
				sandbox_release(d->sandboxes, sb);
				json_decref(obj);
				continue;
			}
			sb->gw4 = g4;
			sb->gw6 = g6;
			sb->plen4 = a4.family ? (uint8_t)p4 : 0;
			sb->plen6 = a6.family ? (uint8_t)p6 : 0;
		}
		pol = policy_by_name(d, sb->policy);
		flush = !digest || !pol ||
			strcmp(digest, policy_digest(pol, dig, sizeof(dig))) != 0;
		json_decref(obj);
		if (link_exists(sb->host_ifname) != 1) {
			log_warn("sandbox %s: its interface %s vanished while netd was down (netns %s gone?); cleaning up",
				 sb->name, sb->host_ifname, sb->netns_path);
			sandbox_teardown(d, sb);
			audit_sandbox(d, sb, "vanished");
			sandbox_release(d->sandboxes, sb);
			continue;
		}
		if (!pol) {
			pol = policy_deny_all(d, sb->policy);
			log_warn("sandbox %s: policy %s is gone; it is denied all egress", sb->name,
				 sb->policy);
		}
		if (!pol || (n_keep == cap_keep &&
			     !(keep = reallocarray(keep, cap_keep = cap_keep ? 2 * cap_keep : 64,
						   sizeof(*keep))))) {
			log_err("sandbox %s: out of memory; left in place for the next start", sb->name);
			sandbox_release(d->sandboxes, sb);
			r = -ENOMEM;
			goto out;
		}
		netns_identity(sb);
		sandbox_insert(d->sandboxes, sb);
		fw_view(sb, &keep[n_keep].sb);
		keep[n_keep].pol = pol;
		keep[n_keep].flush_pins = flush;
		n_keep++;
	}
	r = fw_open_reconcile(fc, keep, n_keep, &d->fw, &info);
	if (r < 0) {
		log_err("nf_tables: cannot set up table inet netd: %s", strerror(-r));
		goto out;
	}
	if (info.replaced_because[0])
		log_warn("nf_tables: the existing table could not be reconciled (%s); replaced it in one batch, pins dropped",
			 info.replaced_because);
	else if (info.n_stale)
		log_warn("nf_tables: removed the rules of %zu sandbox(es) no longer in %s", info.n_stale,
			 dir);
	for (size_t i = 0; i < n_keep; i++) {
		struct sandbox *sb = sandbox_find(d->sandboxes, keep[i].sb.name);

		log_info("sandbox %s restored (policy %s%s)", keep[i].sb.name, keep[i].pol->name,
			 !info.kept ? ", pins dropped: table replaced" :
			 keep[i].flush_pins ? ", pins dropped: the policy changed while netd was down" :
					      ", pins kept");
		if (sb && keep[i].flush_pins && keep[i].pol->file)
			state_save(d, sb);
	}
out:
	if (dh)
		closedir(dh);
	free(keep);
	return r;
}


/* ---- policy reload ------------------------------------------------------- */

/* What @p allows, one string per (domain or cidr) x (protocol, ports), in @set. */
static void policy_items(const struct policy *p, json_t *set)
{
	for (size_t i = 0; p && i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		char ports[512] = "", item[700];
		size_t n = 0;

		for (size_t k = 0; k < r->n_ports && n < sizeof(ports) - 16; k++)
			n += (size_t)snprintf(ports + n, sizeof(ports) - n,
					      r->ports[k].lo == r->ports[k].hi ? "%s%u" : "%s%u-%u",
					      k ? "," : "", r->ports[k].lo, r->ports[k].hi);
		if (!r->n_ports)
			snprintf(ports, sizeof(ports), "any");
		for (size_t k = 0; k < r->n_domains; k++) {
			snprintf(item, sizeof(item), "%s %s/%s", r->domains[k],
				 r->proto == IPPROTO_UDP ? "udp" : "tcp", ports);
			json_object_set_new(set, item, json_true());
		}
		for (size_t k = 0; k < r->n_cidrs; k++) {
			char a[ADDR_STRLEN];

			snprintf(item, sizeof(item), "%s/%u %s/%s",
				 addr_format(&r->cidrs[k].addr, a, sizeof(a)), r->cidrs[k].plen,
				 r->proto == IPPROTO_UDP ? "udp" : "tcp", ports);
			json_object_set_new(set, item, json_true());
		}
	}
}

/* The keys of @a that are not in @b, as a sorted JSON array. */
static json_t *items_minus(json_t *a, json_t *b)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach(a, k, v)
		if (!json_object_get(b, k))
			json_array_append_new(out, json_string(k));
	return out;
}

struct reload_sb {
	struct sandbox *sb;
	const struct policy *pol;	/* the new one (in @newp) */
	struct fw_sandbox fv;
	struct fw_pin *keep;
	struct pinsrc_cut *cut;
	size_t n_keep, n_cut;
	bool deny_all;
	json_t *added, *removed;	/* policy items, for the report */
};

int daemon_policy_reload(struct daemon *d, json_t **ret_report, char *err, size_t errsz)
{
	struct policy **newp = calloc(DAEMON_MAX_POLICIES, sizeof(*newp));
	struct reload_sb *ch = NULL;
	struct fw_update *up = NULL;
	size_t n_new = 0, n_ch = 0, n_sb = sandbox_count(d->sandboxes);
	size_t cap = pinsrc_count(d->pinsrc) + 1;
	uint64_t now = mono_ms();
	json_t *report = json_array();
	struct sandbox *sb;
	uint32_t cur = 0;
	int r;

	*ret_report = NULL;
	err[0] = '\0';
	if (!newp || !report) {
		r = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	/* 1. Validate the whole new set aside; any error rejects all of it. */
	r = load_policies(d->cfg.policy_dir, newp, &n_new, err, errsz);
	if (r < 0) {
		if (!err[0])
			snprintf(err, errsz, "%s: %s", d->cfg.policy_dir, strerror(-r));
		goto out;
	}
	ch = calloc(n_sb ? n_sb : 1, sizeof(*ch));
	up = calloc(n_sb ? n_sb : 1, sizeof(*up));
	if (!ch || !up) {
		r = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	/* 2. Plan: which sandboxes change, which of their pins stay. */
	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		const struct policy *old = policy_by_name(d, sb->policy), *np = NULL;
		char d1[24], d2[24];
		struct reload_sb *c;

		for (size_t i = 0; i < n_new && !np; i++)
			if (strcmp(newp[i]->name, sb->policy) == 0)
				np = newp[i];
		if (!np) {
			/* Its file is gone: fail closed, deny all (logged below). */
			if (n_new == DAEMON_MAX_POLICIES || !(newp[n_new] = deny_all_new(sb->policy))) {
				r = -ENOMEM;
				snprintf(err, errsz, "cannot make a deny-all policy for %s", sb->policy);
				goto out;
			}
			np = newp[n_new++];
		}
		if (old && strcmp(policy_digest(old, d1, sizeof(d1)),
				  policy_digest(np, d2, sizeof(d2))) == 0)
			continue;
		c = &ch[n_ch];
		c->sb = sb;
		c->pol = np;
		c->deny_all = !np->file;
		c->keep = calloc(cap, sizeof(*c->keep));
		c->cut = calloc(cap, sizeof(*c->cut));
		if (!c->keep || !c->cut) {
			free(c->keep);
			free(c->cut);
			r = -ENOMEM;
			snprintf(err, errsz, "out of memory");
			goto out;
		}
		n_ch++;
		r = pinsrc_split(d->pinsrc, sb->name, np, now, c->keep, cap, &c->n_keep, c->cut,
				 cap, &c->n_cut);
		if (r < 0) {
			snprintf(err, errsz, "sandbox %s: %s", sb->name, strerror(-r));
			goto out;
		}
		if (c->n_keep > 65536)
			c->n_keep = 65536;	/* the set's size; the rest re-resolve */
		{
			json_t *io = json_object(), *in = json_object();

			policy_items(old, io);
			policy_items(np, in);
			c->added = items_minus(in, io);
			c->removed = items_minus(io, in);
			json_decref(io);
			json_decref(in);
		}
		fw_view(sb, &c->fv);
		up[n_ch - 1] = (struct fw_update){ .sb = &c->fv, .pol = np, .replace_pins = true,
						   .pins = c->keep, .n_pins = c->n_keep };
	}
	/*
	 * 3. Commit: every changed sandbox in ONE batch (CIDR sets refilled,
	 * pin sets replaced by what the new policy still allows); the kernel
	 * takes it whole or not at all.  Only then swap the policies in.
	 */
	r = fw_sandboxes_update(d->fw, up, n_ch);
	if (r < 0) {
		snprintf(err, errsz, "nf_tables rejected the reload: %s", fw_last_error(d->fw));
		goto out;
	}
	for (size_t i = 0; i < d->n_policies; i++)
		policy_free(d->policies[i]);
	memcpy(d->policies, newp, n_new * sizeof(*newp));
	d->n_policies = n_new;
	n_new = 0;
	/* 4. After the commit: cut live connections, report. */
	for (size_t i = 0; i < n_ch; i++) {
		struct reload_sb *c = &ch[i];
		json_t *cut_list = json_array(), *rec;
		int n_conn = 0;

		pinsrc_drop(d->pinsrc, c->sb->name, c->cut, c->n_cut);
		/* The proxy re-pins on the next answer instead of trusting its cache. */
		proxy_sandbox_reset(d->proxy, c->sb->name);
		if (d->cfg.reload_cut_removed && c->n_cut) {
			for (int f = 0; f < 2; f++) {
				const struct addr *src = f == 0 ? &c->sb->addr4 : &c->sb->addr6;
				int k;

				if (!src->family)
					continue;
				k = ctcut_run(src, c->cut, c->n_cut);
				if (k < 0)
					log_warn("sandbox %s: cannot cut connections to removed names: %s",
						 c->sb->name, strerror(-k));
				else
					n_conn += k;
			}
		}
		for (size_t k = 0; k < c->n_cut; k++) {
			char a[ADDR_STRLEN], line[400];

			snprintf(line, sizeof(line), "%s %s %s/%u", c->cut[k].qname,
				 addr_format(&c->cut[k].addr, a, sizeof(a)),
				 c->cut[k].proto == IPPROTO_UDP ? "udp" : "tcp", c->cut[k].port);
			json_array_append_new(cut_list, json_string(line));
		}
		if (c->deny_all)
			log_warn("sandbox %s: policy %s is gone from %s; it is denied all egress",
				 c->sb->name, c->sb->policy, d->cfg.policy_dir);
		{
			char *a = json_dumps(c->added, JSON_COMPACT), *rm = json_dumps(c->removed, JSON_COMPACT);

			log_info("reload: sandbox %s (policy %s): added %s, removed %s; %zu pins kept, %zu removed, %d connections cut",
				 c->sb->name, c->sb->policy, a ? a : "?", rm ? rm : "?", c->n_keep,
				 c->n_cut, n_conn);
			free(a);
			free(rm);
		}
		rec = json_pack("{s:s, s:s, s:b, s:O, s:O, s:I, s:o, s:I}", "sandbox", c->sb->name,
				"policy", c->sb->policy, "deny_all", c->deny_all, "added", c->added,
				"removed", c->removed, "pins_kept", (json_int_t)c->n_keep,
				"pins_removed", cut_list, "connections_cut", (json_int_t)n_conn);
		if (rec) {
			json_array_append(report, rec);
			audit_write(d->audit, "policy_reload", rec);
		}
		r = state_save(d, c->sb);
		if (r < 0)
			log_warn("sandbox %s: cannot save state: %s", c->sb->name, strerror(-r));
	}
	log_info("policy reload: %zu policies, %zu sandbox(es) changed", d->n_policies, n_ch);
	r = 0;
out:
	for (size_t i = 0; i < n_new; i++)
		policy_free(newp[i]);
	free(newp);
	for (size_t i = 0; ch && i < n_ch; i++) {
		free(ch[i].keep);
		free(ch[i].cut);
		json_decref(ch[i].added);
		json_decref(ch[i].removed);
	}
	free(ch);
	free(up);
	if (r < 0) {
		d->reloads_rejected++;
		json_decref(report);
		log_err("policy reload rejected, the old policies stay: %s", err);
	} else {
		d->reloads++;
		if (d->trail)
			grace_update(d);
		*ret_report = report;
	}
	return r;
}

/*
 * Tombstones: netd-cni writes STATE_DIR/tombstones/NAME when a CNI DEL
 * finds netd down (DEL must still succeed).  At start, after the restore,
 * every sandbox named by a tombstone is deleted and the tombstone removed,
 * before the control socket opens, so no new ADD can race with it.
 */
static void tombstones_process(struct daemon *d)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/tombstones", d->cfg.state_dir);
	dh = opendir(dir);
	if (!dh)
		return;
	while ((e = readdir(dh))) {
		char path[PATH_MAX + 256], q[160];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!policy_name_valid(e->d_name)) {
			log_warn("%s: not a sandbox name; ignored",
				 log_quote(path, strlen(path), q, sizeof(q)));
			continue;
		}
		if (daemon_sandbox_delete(d, e->d_name) == 0)
			log_info("sandbox %s deleted: a CNI DEL arrived while netd was down",
				 e->d_name);
		unlink(path);
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
	out->policy = policy_dns_view(pol);
	out->owner = sb;	/* ops_audit() of this same call gets it back */
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

/*
 * audit_who() - the members that say who asked ("sandbox", "policy",
 * "client", "transport"), from a one-entry cache: one sandbox's queries
 * come in runs, and these are the same for the whole run.
 */
static void audit_who(struct daemon *d, const struct proxy_event *ev, struct jsonl *j)
{
	struct audit_who *w = &d->who;
	const char *transport = ev->transport ? ev->transport : "udp";
	struct addr none = { 0 };
	const struct addr *client = ev->client ? ev->client : &none;

	if (!w->valid || !ev->sandbox || !ev->policy || strcmp(w->sandbox, ev->sandbox) != 0 ||
	    strcmp(w->policy, ev->policy) != 0 || strcmp(w->transport, transport) != 0 ||
	    !addr_equal(&w->client, client)) {
		char cbuf[ADDR_STRLEN];
		struct jsonl m;
		int n;

		w->valid = false;
		jsonl_init(&m, w->members, sizeof(w->members));
		jsonl_str(&m, "sandbox", ev->sandbox);
		jsonl_str(&m, "policy", ev->policy);
		jsonl_str(&m, "client", ev->client ? addr_format(ev->client, cbuf, sizeof(cbuf)) : NULL);
		jsonl_str(&m, "transport", transport);
		n = jsonl_done(&m);
		if (n < 0) {
			j->overflow = true;	/* counted as dropped by the caller */
			return;
		}
		w->len = (size_t)n;
		/* Cached only when every key is known (names fit: <= 64 bytes). */
		if (ev->sandbox && ev->policy && strlen(ev->sandbox) < sizeof(w->sandbox) &&
		    strlen(ev->policy) < sizeof(w->policy) && strlen(transport) < sizeof(w->transport)) {
			strcpy(w->sandbox, ev->sandbox);
			strcpy(w->policy, ev->policy);
			strcpy(w->transport, transport);
			w->client = *client;
			w->valid = true;
		}
	}
	jsonl_raw(j, w->members, w->len);
}

/* Does the one-entry cache @w hold the "what" members of @ev? */
static bool audit_what_same(const struct audit_what *w, const struct proxy_event *ev)
{
	return w->valid && ev->qname && ev->reason && w->qtype == ev->qtype &&
	       w->allowed == ev->allowed && w->rcode == ev->rcode && w->ttl_s == ev->ttl_s &&
	       w->n_rebind == ev->n_rebind && w->n_answers == ev->n_answers &&
	       strcmp(w->qname, ev->qname) == 0 && strcmp(w->reason, ev->reason) == 0 &&
	       (ev->n_answers == 0 ||
		memcmp(w->answers, ev->answers, ev->n_answers * sizeof(ev->answers[0])) == 0);
}

/*
 * audit_what() - the members that say what was asked and decided ("qname"
 * ... "rebind"), from a one-entry cache like audit_who()'s: a client that
 * asks the same name again gets the same record but for its timestamp.
 */
static void audit_what(struct daemon *d, const struct proxy_event *ev, struct jsonl *j)
{
	struct audit_what *w = &d->what;
	char tbuf[16], cbuf[ADDR_STRLEN];
	struct jsonl m;
	int n;

	if (audit_what_same(w, ev)) {
		jsonl_raw(j, w->members, w->len);
		return;
	}
	w->valid = false;
	jsonl_init(&m, w->members, sizeof(w->members));
	jsonl_str(&m, "qname", ev->qname ? ev->qname : "");
	jsonl_str(&m, "qtype", qtype_name(ev->qtype, tbuf, sizeof(tbuf)));
	jsonl_str(&m, "verdict", ev->allowed ? "allow" : "deny");
	jsonl_str(&m, "reason", ev->reason ? ev->reason : "");
	jsonl_str(&m, "rcode", rcode_name(ev->rcode));
	jsonl_array_begin(&m, "answers");
	for (size_t i = 0; i < ev->n_answers; i++)
		jsonl_array_str(&m, addr_format(&ev->answers[i], cbuf, sizeof(cbuf)));
	jsonl_array_end(&m);
	jsonl_uint(&m, "ttl", ev->ttl_s);
	jsonl_uint(&m, "rebind", ev->n_rebind);
	n = jsonl_done(&m);
	if (n < 0) {
		j->overflow = true;	/* counted as dropped by the caller */
		return;
	}
	w->len = (size_t)n;
	jsonl_raw(j, w->members, w->len);
	/* Kept for the next record only if every field fits the cache. */
	if (ev->qname && ev->reason && strlen(ev->qname) < sizeof(w->qname) &&
	    strlen(ev->reason) < sizeof(w->reason) && ev->n_answers <= AUDIT_WHAT_ADDRS) {
		strcpy(w->qname, ev->qname);
		strcpy(w->reason, ev->reason);
		w->qtype = ev->qtype;
		w->allowed = ev->allowed;
		w->rcode = ev->rcode;
		w->ttl_s = ev->ttl_s;
		w->n_rebind = ev->n_rebind;
		w->n_answers = ev->n_answers;
		if (ev->n_answers)	/* (no answers: ev->answers may be NULL) */
			memcpy(w->answers, ev->answers, ev->n_answers * sizeof(ev->answers[0]));
		w->valid = true;
	}
}

static void ops_audit(void *ctx, const struct proxy_event *ev)
{
	struct daemon *d = ctx;
	struct sandbox *sb = ev->owner;	/* ops_lookup()'s, earlier in this call */

	/* Which names each pin came from: a reload needs them (pinsrc.h). */
	if (ev->allowed && ev->sandbox && ev->qname && ev->n_pins)
		pinsrc_note(d->pinsrc, ev->sandbox, ev->qname, ev->pins, ev->n_pins, mono_ms());
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
		/* The names conn/deny records report for these addresses. */
		if (ev->allowed && ev->qname)
			trail_pinned(d->trail, sb, ev->qname, ev->answers, ev->n_answers);
	}
	/*
	 * Denied queries cost a sandbox nothing to send, so their records are
	 * rate limited per sandbox (a flood must not fill the disk); what was
	 * left out is counted in the next record's "suppressed".
	 */
	if (!ev->allowed && sb) {
		uint64_t now = mono_ms();

		sb->audit_tokens += (double)(now - sb->audit_refill_ms) * DNS_DENY_AUDIT_RATE / 1000.0;
		if (sb->audit_tokens > DNS_DENY_AUDIT_BURST)
			sb->audit_tokens = DNS_DENY_AUDIT_BURST;
		sb->audit_refill_ms = now;
		if (sb->audit_tokens < 1.0) {
			sb->audit_suppressed++;
			return;
		}
		sb->audit_tokens -= 1.0;
	}
	if (sb && sb->audit_suppressed && !ev->allowed) {
		json_t *rec = json_pack("{s:s?, s:s?, s:s, s:s, s:I}", "sandbox", ev->sandbox, "policy",
					ev->policy, "verdict", "deny", "reason", "rate-limited",
					"suppressed", (json_int_t)sb->audit_suppressed);

		audit_write(d->audit, "dns_suppressed", rec);
		sb->audit_suppressed = 0;
	}
	/* Hot path: one line per query, built without jansson (common/jsonl.h). */
	{
		char members[AUDIT_LINE_MAX - 128];
		struct jsonl j;
		int n;

		jsonl_init(&j, members, sizeof(members));
		audit_who(d, ev, &j);
		audit_what(d, ev, &j);
		n = jsonl_done(&j);
		if (n < 0)
			audit_write(d->audit, "dns", NULL);	/* counted as dropped */
		else
			audit_write_members(d->audit, "dns", members, (size_t)n);
	}
}

static const struct proxy_ops daemon_proxy_ops = {
	.lookup = ops_lookup,
	.pin = ops_pin,
	.audit = ops_audit,
};

/* ---- startup ------------------------------------------------------------- */

/* SIGHUP: the same reload as POST /v1/policies/reload; the outcome is logged. */
static void on_sighup(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	json_t *report = NULL;
	char err[1200];

	(void)sig;
	(void)what;
	/* SIGHUP also reopens the audit log (logrotate: move, then HUP). */
	if (audit_reopen(d->audit) == 0)
		log_info("SIGHUP: audit log %s reopened", d->cfg.audit_log);
	log_info("SIGHUP: reloading policies from %s", d->cfg.policy_dir);
	if (daemon_policy_reload(d, &report, err, sizeof(err)) == 0)
		json_decref(report);
}

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

	d->n_internal = special_prefixes(d->internal, DAEMON_MAX_INTERNAL,
					 d->cfg.dns_never_pin_doc ? SPECIAL_WITH_DOC : 0);
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

/*
 * One netd per network namespace, whatever its state_dir or socket: two
 * would fight over table inet netd.  An abstract unix socket name is scoped
 * to the netns and released by the kernel when the process dies (also on
 * SIGKILL), so there is no stale lock to clean up.
 */
static int lock_netns(struct daemon *d)
{
	static const char name[] = "\0netd/instance/table/netd";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	memcpy(sa.sun_path, name, sizeof(name) - 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof(name) - 1)) < 0) {
		int r = -errno;

		close(fd);
		if (r == -EADDRINUSE)
			log_err("another netd is already running in this network namespace");
		else
			log_err("cannot take the per-netns instance lock: %s", strerror(-r));
		return r;
	}
	d->netns_lock_fd = fd;
	return 0;
}

/*
 * Does a process answer on unix socket @path?  Checked before nf_tables is
 * touched: a second netd with another state_dir must not reconcile (and so
 * strip) the first one's table before ctl_new() would refuse it.
 */
static bool socket_answers(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool yes;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	yes = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return yes;
}

int daemon_main(const char *config_path, const char *socket_override)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	struct event *sig_int = NULL, *sig_term = NULL, *sig_hup = NULL;
	struct policywatch *pwatch = NULL;
	struct diag err = { 0 };
	char msg[1024];
	int r, status = 1;

	d->lock_fd = -1;
	d->netns_lock_fd = -1;
	/*
	 * Sockets are bounded by netd's own limits, not a 1024 soft default:
	 * the soft limit goes to the hard one, and (as root may) both to at
	 * least NETD_NOFILE_MIN - each sandbox's gateway takes two sockets.
	 */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < NETD_NOFILE_MIN) {
			struct rlimit want = { NETD_NOFILE_MIN, NETD_NOFILE_MIN };

			setrlimit(RLIMIT_NOFILE, &want);	/* fails without CAP_SYS_RESOURCE: fine */
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		d->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)INT_MAX ?
				      (unsigned int)rl.rlim_cur : (unsigned int)INT_MAX;
	}
	d->started = time(NULL);
	if (pinsrc_new(&d->pinsrc) < 0) {
		log_err("out of memory");
		return 1;
	}
	config_init(&d->cfg);
	if (config_path) {
		r = config_load_file(&d->cfg, config_path, &err);
		if (r < 0) {
			log_err("%s", diag_format(&err, msg, sizeof(msg)));
			goto out;
		}
	}
	if (config_pool_for_node(&d->cfg, getenv("NETD_NODE_IP"), &err) < 0) {
		log_err("%s", diag_format(&err, msg, sizeof(msg)));
		goto out;
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
	if (lock_state_dir(d) < 0 || lock_netns(d) < 0)
		goto out;
	if (socket_answers(d->cfg.socket)) {
		log_err("control socket %s: another netd is answering there", d->cfg.socket);
		goto out;
	}
	r = load_policies(d->cfg.policy_dir, d->policies, &d->n_policies, NULL, 0);
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
	r = audit_open(d->cfg.audit_log, &d->audit);
	if (r < 0) {
		log_err("audit_log %s: %s", d->cfg.audit_log, strerror(-r));
		goto out;
	}
	audit_set_rotation(d->audit, d->cfg.audit_rotate_bytes, d->cfg.audit_keep);
	{
		struct fw_config fc = {
			.table = "netd",
			.dns_port = d->cfg.dns_port,
			.egress_ifname = d->egress_ifname,
			.pool4 = d->cfg.pool4,
			.internal = d->internal,
			.n_internal = d->n_internal,
			.log_group = TRAIL_LOG_GROUP,
		};

		if (d->cfg.pool6_enabled)
			fc.pool6 = d->cfg.pool6;
		r = state_restore(d, &fc);
		if (r < 0)
			goto out;
	}
	tombstones_process(d);
	orphans_remove(d);
	d->base = event_base_new();
	if (!d->base || audit_attach(d->audit, d->base) < 0)
		goto out;
	{
		struct trail_config tc = {
			.update_interval_s = d->cfg.conn_update_interval_s,
			.rcvbuf_bytes = d->cfg.conntrack_rcvbuf_bytes,
			.log_group = TRAIL_LOG_GROUP,
			.pool4 = d->cfg.pool4,
			.idle_grace_s = d->cfg.dns_idle_grace_s,
			.grace_pin = trail_grace_pin,
		};

		r = trail_new(d->base, &tc, d->audit, d->sandboxes, trail_policy, d, &d->trail);
		if (r < 0)
			goto out;	/* logged */
		grace_update(d);
	}
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
			.upstream_deadline_ms = d->cfg.dns_upstream_deadline_ms,
			.qps = d->cfg.dns_qps,
			.burst = d->cfg.dns_burst,
			.max_outstanding = d->cfg.dns_max_outstanding,
			.max_pins_per_sandbox = d->cfg.dns_max_pins,
			.max_addrs_per_name = d->cfg.dns_max_pins_per_name,
			.cache_size = d->cfg.dns_cache_size,
			.no_udp_gso = !d->cfg.dns_udp_gso,
		};

		r = proxy_new(d->base, &pc, &daemon_proxy_ops, d, &d->proxy);
		if (r < 0) {
			log_err("DNS proxy: cannot listen on port %u: %s", d->cfg.dns_port,
				strerror(-r));
			goto out;
		}
		if (!d->cfg.dns_udp_gso)
			log_info("DNS proxy: replies are never grouped (dns.udp_gso: false)");
		/* Restored sandboxes: their gateways' own :53 (the reconcile
		 * emptied dns_local; until now their DNS took the redirect). */
		{
			struct sandbox *sb;
			uint32_t cur = 0;

			while ((sb = sandbox_next(d->sandboxes, &cur)))
				sandbox_dns_direct(d, sb);
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
	sig_hup = evsignal_new(d->base, SIGHUP, on_sighup, d);
	if (!sig_int || !sig_term || !sig_hup || evsignal_add(sig_int, NULL) < 0 ||
	    evsignal_add(sig_term, NULL) < 0 || evsignal_add(sig_hup, NULL) < 0)
		goto out;
	if (d->cfg.policy_watch && policywatch_daemon(d->base, d->cfg.policy_dir, d, &pwatch) < 0)
		goto out;
	signal(SIGPIPE, SIG_IGN);
	log_info("ready: %zu policies, %zu sandboxes, DNS proxy on port %u, egress %s, control %s",
		 d->n_policies, sandbox_count(d->sandboxes), d->cfg.dns_port,
		 d->egress_ifname[0] ? d->egress_ifname : "(any)", d->cfg.socket);
	event_base_dispatch(d->base);
	status = 0;
out:
	policywatch_free(pwatch);
	if (sig_int)
		event_free(sig_int);
	if (sig_term)
		event_free(sig_term);
	if (sig_hup)
		event_free(sig_hup);
	ctl_free(d->ctl);
	proxy_free(d->proxy);
	pinsrc_free(d->pinsrc);
	d->pinsrc = NULL;
	trail_free(d->trail);
	audit_close(d->audit);
	fw_close(d->fw);
	sandbox_table_free(d->sandboxes);
	for (size_t i = 0; i < d->n_policies; i++)
		policy_free(d->policies[i]);
	if (d->base)
		event_base_free(d->base);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	if (d->netns_lock_fd >= 0)
		close(d->netns_lock_fd);
	config_done(&d->cfg);
	return status;
}
