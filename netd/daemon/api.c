/*
 * netd/daemon/ - the jobs of `netd run` besides startup (netd/daemon.c),
 * one a file: sandbox lifecycle, reload and its plan, the state dir, the
 * ops of the control API, the DNS proxy and the SNI check, signals
 * (opsig.c), systemd's notify (sdnotify.c), the policy_dir watch
 * (policywatch.c).  struct daemon is internal.h's, for these files only.
 */
/*
 * api - the daemon's side of the control API (netd/api/ctl.h's ops): JSON
 * views of sandboxes and policies, GET /v1/status and /v1/metrics, and the
 * calls that change state, which go to lifecycle.c and reload.c.  Shapes
 * JSON only; it decides nothing.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnsproxy/proxy.h"
#include "netd/trail/audit.h"
#include "netd/trail/ipfixexp.h"
#include "netd/trail/journal.h"
#include "netd/daemon/policyview.h"
#include "netd/fw.h"
#include "netd/common/metrics.h"
#include "netd/trail/trail.h"
#include "netd/common/version.h"
#include "netd/gw/ca.h"
#include "netd/link/tap.h"
#include "common/log.h"

json_t *daemon_json_addr(const struct addr *a)
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
			 "ifname", sb->peer_ifname, "ipv4", daemon_json_addr(&sb->addr4),
			 "gateway4", daemon_json_addr(&sb->gw4), "ipv6", daemon_json_addr(&sb->addr6),
			 "gateway6", daemon_json_addr(&sb->gw6), "created", created, "dns",
			 "allowed", (json_int_t)sb->dns_allowed, "denied",
			 (json_int_t)sb->dns_denied);
	if (o)
		json_object_set_new(o, "kind", json_string(sb->chained ? "chained" :
							   sb->peer ? "peer" : "interface"));
	if (o && sb->peer) {	/* the MAC its owner keeps when it moves the peer */
		char mac[TAP_MAC_STRLEN];

		tap_mac_format(sb->mac, mac);
		json_object_set_new(o, "mac", json_string(mac));
	}
	/* The mode in force: its own (create --mode), else its policy's. */
	if (o)
		json_object_set_new(o, "mode", json_string(fw_mode_audit(sb->mode,
				    daemon_policy_find(d, sb->policy)) ? "audit" : "enforce"));
	/* The counters under one name for every kind ("dns" is a tap's resolver list). */
	if (o)
		json_object_set_new(o, "dns_queries",
				    json_pack("{s:I, s:I}", "allowed", (json_int_t)sb->dns_allowed,
					      "denied", (json_int_t)sb->dns_denied));
	if (o)
		workload_json(&sb->workload, o, true);
	if (o && sb->tap)
		daemon_tap_json(sb, o);
	if (o && d->trail)
		json_object_set_new(o, "traffic", trail_sandbox_json(d->trail, sb));
	if (o)	/* limits only: the kernel's counters are for GET of one (api_sandbox_get()) */
		json_object_set_new(o, "bandwidth", daemon_bw_json(d, sb, false));
	if (o)
		json_object_set_new(o, "budgets", daemon_budget_json(sb));
	return o;
}

static json_t *api_sandboxes(void *ctx)
{
	struct daemon *d = ctx;
	json_t *arr = json_array();
	uint32_t cur = 0;
	struct sandbox *sb;

	while ((sb = sandbox_next(d->sandboxes, &cur)))
		json_array_append_new(arr, daemon_sandbox_json(d, sb));
	return arr;
}

static json_t *api_policies(void *ctx)
{
	struct daemon *d = ctx;
	json_t *arr = json_array();

	for (size_t i = 0; i < d->n_policies; i++) {
		const struct policy *p = d->policies[i];

		json_array_append_new(arr, json_pack("{s:s, s:s?, s:I}", "name", p->name, "file",
						     p->file, "rules", (json_int_t)p->n_rules));
	}
	return arr;
}

/*
 * GET /v1/policies/NAME: the policy as written (pview_json(), every key it
 * has) and "defaults": what applies where it says nothing, from netd.yaml
 * (dns.min_ttl, dns.max_ttl, dns.idle_grace, limits.connections) and the
 * built-in defaults (mode, on_deny, tls.sni, tls.ech: strip where the SNI
 * is checked, http.host, a wildcard rule's dns).  Not in the digest.
 */
static json_t *api_policy(void *ctx, const char *name)
{
	struct daemon *d = ctx;
	const struct policy *p = daemon_policy_find(d, name);
	json_t *o = p ? pview_json(p) : NULL;

	json_t *def = o ? json_pack("{s:I, s:I, s:I, s:{s:s, s:s}, s:{s:s}}",
				    "min_ttl", (json_int_t)d->cfg.min_ttl_s,
				    "max_ttl", (json_int_t)d->cfg.max_ttl_s,
				    "idle_grace", (json_int_t)d->cfg.dns_idle_grace_s,
				    "tls", "sni", "off", "ech",
				    policy_ech_str(POLICY_ECH_STRIP), "http", "host", "off") : NULL;

	/* Only what the policy leaves unsaid (the per-rule keys may say more). */
	if (def && !p->max_conns)
		json_object_set_new(def, "connections", json_integer((json_int_t)d->cfg.conn_limit));
	if (def && !p->audit)
		json_object_set_new(def, "mode", json_string("enforce"));
	if (def && !p->reject)
		json_object_set_new(def, "on_deny", json_string("drop"));
	if (def)
		json_object_set_new(def, "max_qname_length", json_integer(0));	/* no cap */
	if (def) {	/* a wildcard rule's dns: (an exact one's: off, off) */
		struct policy_rule wild = { .dns_budget = POLICY_DNS_BUDGET_DEF,
					    .dns_window_s = POLICY_DNS_WINDOW_DEF };
		char b[32];

		json_object_set_new(def, "dns", json_pack("{s:s, s:s}", "budget",
				    policy_dns_budget_format(&wild, b, sizeof(b)), "encoded",
				    policy_encoded_str(POLICY_ENCODED_REFUSE)));
	}
	if (o)
		json_object_set_new(o, "defaults", def);
	return o;
}

/* One DNS proxy counter: its GET /v1/status "dns_proxy" key (NULL: metrics
 * only), its Prometheus name (NULL: status only) and HELP. */
struct dns_counter {
	const char *status, *metric;
	bool gauge;
	uint64_t v;
	const char *help;
};

#define DNS_COUNTERS 22

/* The proxy's counters for status and metrics alike; d->proxy is set. */
static size_t dns_counters(struct daemon *d, struct dns_counter c[DNS_COUNTERS])
{
	const struct proxy_stats *ps = proxy_get_stats(d->proxy);
	/* Pin latency: quantiles in status only; /metrics has the histogram. */
	const struct dns_counter all[DNS_COUNTERS] = {
		{ "cache_hits", "netd_dns_cache_hits_total", false, ps->cache_hits,
		  "Allowed DNS queries answered from the cache." },
		{ "cache_misses", "netd_dns_cache_misses_total", false, ps->cache_misses,
		  "Allowed DNS queries not in the cache (asked upstream)." },
		{ "cache_entries", "netd_dns_cache_entries", true, ps->cache_entries,
		  "DNS answers held in the cache." },
		{ "pins_sent", "netd_dns_pin_batches_total", false, ps->pins_sent,
		  "Pin batches sent to the kernel before an answer left." },
		{ "pins_skipped", "netd_dns_pins_skipped_total", false, ps->pins_skipped,
		  "Answers whose pins the kernel already covered (no batch)." },
		{ "pins_tracked", "netd_dns_pins_tracked", true, ps->pins_tracked,
		  "Live pin elements over all sandboxes." },
		{ "pin_p50_us", NULL, true, proxy_stats_quantile(ps, 0.50), NULL },
		{ "pin_p99_us", NULL, true, proxy_stats_quantile(ps, 0.99), NULL },
		{ "pin_max_us", NULL, true, ps->pin_max_us, NULL },
		{ "rate_limited", "netd_dns_rate_limited_total", false, ps->limit_qps,
		  "DNS queries refused over dns.qps/dns.burst." },
		{ "outstanding_limited", "netd_dns_outstanding_limited_total", false,
		  ps->limit_outstanding, "DNS queries refused over dns.max_outstanding." },
		{ "pin_limited", "netd_dns_pin_limited_total", false, ps->limit_pins,
		  "Answers refused over dns.max_pins." },
		{ "name_limited", "netd_dns_name_limited_total", false, ps->limit_name,
		  "Answers refused over dns.max_pins_per_name." },
		{ "tunnel_suspect", "netd_dns_tunnel_suspect_total", false, ps->tunnel_suspect,
		  "DNS queries whose name the encoded-label score flags (refused or logged)." },
		{ "encoded_refused", "netd_dns_encoded_refused_total", false, ps->encoded_refused,
		  "DNS queries refused as encoded (a rule's dns.encoded: refuse)." },
		{ "budget_refused", "netd_dns_budget_refused_total", false, ps->budget_refused,
		  "DNS queries refused over a rule's name budget (dns.budget)." },
		{ "budget_full", "netd_dns_budget_full_total", false, ps->budget_full,
		  "DNS queries refused because the sandbox holds the most budgeted names." },
		{ "budget_names", "netd_dns_budget_names", true, ps->budget_names,
		  "Names counted in name budgets' windows, all sandboxes." },
		{ "ech_stripped", "netd_dns_ech_stripped_total", false, ps->ech_stripped,
		  "DNS answers handed out without their ECH configs (a rule checks the SNI)." },
		{ "udp_gso_sends", "netd_dns_udp_gso_sends_total", false, ps->udp_gso_sends,
		  "UDP GSO sends (replies to one client in one send)." },
		{ "udp_gso_replies", "netd_dns_udp_gso_replies_total", false, ps->udp_gso_replies,
		  "DNS replies that left in UDP GSO sends." },
		{ "udp_gso_refused", "netd_dns_udp_gso_refused_total", false, ps->udp_gso_refused,
		  "UDP GSO sends the kernel refused (the replies went one by one)." },
	};

	memcpy(c, all, sizeof(all));
	return DNS_COUNTERS;
}

/* Pin latency as a histogram in seconds (the proxy keeps 1 us buckets). */
static void pin_histogram(const struct proxy_stats *ps, FILE *out)
{
	static const double le_s[] = { 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
				       0.001, 0.002 };
	static const unsigned int le_us[] = { 10, 25, 50, 100, 250, 500, 1000, 2000 };
	enum { N = sizeof(le_us) / sizeof(le_us[0]) };
	uint64_t counts[N + 1] = { 0 };
	size_t b = 0;

	/* pin_hist[i]: batches that took i us (truncated); the last, more. */
	for (size_t i = 0; i <= PROXY_PIN_HIST_US; i++) {
		while (b < N && (i == PROXY_PIN_HIST_US || i > le_us[b]))
			b++;
		counts[b] += ps->pin_hist[i];
	}
	metrics_family(out, "netd_dns_pin_duration_seconds", "histogram",
		       "Time from an upstream answer parsed to the kernel's ack of its pins.");
	metrics_histogram(out, "netd_dns_pin_duration_seconds", le_s, counts, N,
			  (double)ps->pin_sum_us / 1e6);
}

/* "dataplane": the fast paths in use, and why the flowtable is not. */
static json_t *dataplane_json(const struct daemon *d)
{
	const char *why = "";
	bool ft = d->fw && fw_flowtable_state(d->fw, &why);

	return json_pack("{s:b, s:b, s:s, s:I}", "fast_path", d->cfg.fast_path, "flowtable", ft,
			 "flowtable_off_because", ft ? "" : why, "flowtable_failures",
			 (json_int_t)d->ft_failures);
}

/* One "paths" member: @path made absolute if it exists (netd's cwd is not the client's). */
static void path_json(json_t *o, const char *key, const char *path)
{
	char abs[PATH_MAX];

	if (!path || !*path)
		return;
	json_object_set_new(o, key, json_string(realpath(path, abs) ? abs : path));
}

/*
 * "paths": where this daemon keeps its config, control socket, state,
 * policies and audit log.  `netd exec` hides each from the command it runs
 * (netd/link/nsexec.h), taking them from here so it hides what the daemon uses.
 */
static json_t *paths_json(const struct daemon *d)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	path_json(o, "config", d->config_file);
	path_json(o, "socket", d->cfg.socket);
	path_json(o, "state_dir", d->cfg.state_dir);
	path_json(o, "policy_dir", d->cfg.policy_dir);
	path_json(o, "audit_log", d->cfg.audit_log);
	return o;
}

/* Where the records go besides the file: {"ipfix": [per collector], "journal": {...}}. */
static json_t *export_json(const struct daemon *d)
{
	return json_pack("{s:o, s:{s:b, s:I, s:I}}", "ipfix", ipfixexp_status_json(d->ipfix),
			 "journal", "on", d->journal != NULL, "written",
			 (json_int_t)journal_written(d->journal), "dropped",
			 (json_int_t)journal_dropped(d->journal));
}

/* netd_ipfix_* per collector (ipfixexp.h) and the journal's two counters, when configured. */
static void export_metrics(const struct daemon *d, FILE *out)
{
	if (d->ipfix)
		ipfixexp_metrics(d->ipfix, out);
	if (!d->journal)
		return;
	metrics_family(out, "netd_audit_journal_written_total", "counter",
		       "Audit records the systemd journal took (audit.journal).");
	metrics_u64(out, "netd_audit_journal_written_total", NULL, journal_written(d->journal));
	metrics_family(out, "netd_audit_journal_dropped_total", "counter",
		       "Audit records not sent to the journal: its queue was full, or sending failed.");
	metrics_u64(out, "netd_audit_journal_dropped_total", NULL, journal_dropped(d->journal));
}

static json_t *api_status(void *ctx)
{
	struct daemon *d = ctx;
	json_t *o = json_pack("{s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:{s:I, s:I}}", "uptime_s", (json_int_t)(time(NULL) - d->started), "sandboxes",
			 (json_int_t)sandbox_count(d->sandboxes), "policies",
			 (json_int_t)d->n_policies, "dns", "allowed", (json_int_t)d->dns_allowed,
			 "denied", (json_int_t)d->dns_denied, "failed", (json_int_t)d->dns_failed,
			 "audit", "written", (json_int_t)audit_written(d->audit), "dropped",
			 (json_int_t)audit_dropped(d->audit));

	if (o)	/* "audit" is a fresh object from json_pack above */
		json_object_set_new(json_object_get(o, "audit"), "rotations",
				    json_integer((json_int_t)audit_rotations(d->audit)));
	if (o)	/* where the log is: `netd audit` reads it from here */
		json_object_set_new(json_object_get(o, "audit"), "file",
				    json_string(d->cfg.audit_log));

	if (o)	/* "status": "ok", or "degraded" with "warnings" (health.c) */
		daemon_health_json(d, o);
	if (o)
		json_object_set_new(o, "sandboxes_vanished", json_integer((json_int_t)d->vanished));
	if (o)
		json_object_set_new(o, "dataplane", dataplane_json(d));
	if (o)
		json_object_set_new(o, "paths", paths_json(d));
	if (o && d->trail)
		json_object_set_new(o, "accounting", trail_stats_json(d->trail));
	if (o)
		json_object_set_new(o, "export", export_json(d));
	if (o)
		json_object_set_new(o, "gateway", daemon_gw_status(d));
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

/*
 * netd_sandbox_info: one series per sandbox, value 1, naming the container
 * and pod it is for (Prometheus' info-metric pattern, as kube_pod_info):
 * join it on "sandbox" rather than adding these labels to every series.
 * A field not known is "" (to Prometheus: no such label).  Bounded: one
 * series per sandbox, values checked by workload_set().
 */
static void sandbox_info(struct daemon *d, FILE *out)
{
	uint32_t cur = 0;
	struct sandbox *sb;

	metrics_family(out, "netd_sandbox_info", "gauge",
		       "1 per sandbox; labels name the container and Kubernetes pod it is for.");
	while ((sb = sandbox_next(d->sandboxes, &cur))) {
		const char *l[2 * (1 + WORKLOAD_FIELDS) + 1] = { "sandbox", sb->name };

		for (int f = 0; f < WORKLOAD_FIELDS; f++) {
			l[2 + 2 * f] = workload_key((enum workload_field)f);
			l[3 + 2 * f] = workload_get(&sb->workload, (enum workload_field)f);
		}
		metrics_u64(out, "netd_sandbox_info", l, 1);
	}
}

static void api_metrics(void *ctx, FILE *out)
{
	struct daemon *d = ctx;
	struct dns_counter c[DNS_COUNTERS];
	size_t n = d->proxy ? dns_counters(d, c) : 0;

	metrics_build_info(out, NETD_VERSION);
	metrics_family(out, "netd_sandboxes", "gauge", "Sandboxes netd manages.");
	metrics_u64(out, "netd_sandboxes", NULL, sandbox_count(d->sandboxes));
	sandbox_info(d, out);
	metrics_family(out, "netd_policies", "gauge", "Policies loaded.");
	metrics_u64(out, "netd_policies", NULL, d->n_policies);
	metrics_family(out, "netd_flowtable_active", "gauge",
		       "1 if the replies of sandboxes' connections are offloaded to an nftables flowtable.");
	metrics_u64(out, "netd_flowtable_active", NULL, d->fw && fw_flowtable_state(d->fw, NULL));
	metrics_family(out, "netd_flowtable_failures_total", "counter",
		       "Re-adds of the egress interface to the flowtable (at reloads) nf_tables refused.");
	metrics_u64(out, "netd_flowtable_failures_total", NULL, d->ft_failures);
	trail_metrics(d->trail, out);
	export_metrics(d, out);
	for (size_t i = 0; i < n; i++) {
		if (!c[i].metric)
			continue;
		metrics_family(out, c[i].metric, c[i].gauge ? "gauge" : "counter", c[i].help);
		metrics_u64(out, c[i].metric, NULL, c[i].v);
	}
	if (d->proxy)
		pin_histogram(proxy_get_stats(d->proxy), out);
	daemon_verify_metrics(d, out);
	daemon_health_metrics(d, out);
	daemon_gw_metrics(d, out);
	daemon_bw_metrics(d, out);
	daemon_budget_metrics(d, out);
	metrics_process(out);
}

static int api_sandbox_create(void *ctx, const struct sandbox_request *req, json_t **ret,
			      char *err, size_t errsz)
{
	struct daemon *d = ctx;
	struct sandbox *sb;
	int r = daemon_sandbox_create(d, req, &sb, err, errsz);

	*ret = r < 0 ? NULL : daemon_sandbox_json(d, sb);
	return r;
}

static int api_sandbox_delete(void *ctx, const char *name)
{
	return daemon_sandbox_retire(ctx, name, "delete");
}

static json_t *api_sandbox_get(void *ctx, const char *name)
{
	struct daemon *d = ctx;
	struct sandbox *sb = sandbox_find(d->sandboxes, name);
	json_t *o = sb ? daemon_sandbox_json(d, sb) : NULL;

	/* One sandbox: its shapers' counters and current rates too (two rtnetlink gets). */
	if (o)
		json_object_set_new(o, "bandwidth", daemon_bw_json(d, sb, true));
	return o;
}

/* The reload's credentials: read again from their files, and how many changed. */
static json_t *api_reload_info(void *ctx)
{
	struct daemon *d = ctx;

	return json_pack("{s:I, s:I}", "credentials_read", (json_int_t)d->gw_creds_read,
			 "credentials_changed", (json_int_t)d->gw_creds_changed);
}

static int api_policy_reload(void *ctx, json_t **report, char *err, size_t errsz)
{
	return daemon_policy_reload(ctx, report, err, errsz);
}

static int api_verify(void *ctx, const struct verify_request *req, ctl_verify_done_fn *done,
		      void *arg, char *err, size_t errsz)
{
	return daemon_verify_start(ctx, req, "api", done, arg, err, errsz);
}

static void api_verify_cancel(void *ctx, void *arg)
{
	daemon_verify_cancel(ctx, arg);
}

/*
 * GET /v1/gateway/ca: the CA in STATE_DIR/gateway-ca/, loaded or made on
 * the first request only, so a host that never asks has none on disk.
 */
static int api_gateway_ca(void *ctx, char **pem, char *err, size_t errsz)
{
	struct daemon *d = ctx;
	int r = daemon_gw_ca(d, err, errsz);

	return r < 0 ? r : gw_ca_cert_pem(d->gw_ca, pem, NULL);
}

const struct ctl_ops daemon_ctl_ops = {
	.sandbox_create = api_sandbox_create,
	.sandbox_delete = api_sandbox_delete,
	.sandbox_get = api_sandbox_get,
	.sandboxes = api_sandboxes,
	.policies = api_policies,
	.policy = api_policy,
	.policy_reload = api_policy_reload,
	.reload_info = api_reload_info,
	.status = api_status,
	.metrics = api_metrics,
	.verify = api_verify,
	.verify_cancel = api_verify_cancel,
	.gateway_ca = api_gateway_ca,
};
