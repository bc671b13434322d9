/*
 * daemon - `netd run`: startup and shutdown.  Startup is all-or-nothing (a
 * bad config or policy stops it with file:line:col); afterwards a bad
 * request is refused and the last good state kept.  The jobs themselves
 * live in netd/daemon/ (internal.h has the map); this file only puts them
 * together in order:
 *
 *   config -> locks -> policies -> host facts -> registry -> audit ->
 *   restore (one reconcile batch) -> tombstones, orphans -> event loop:
 *   accounting, DNS proxy, link watch, control socket, signals -> run.
 *
 * The audit log gets a "netd" record at start (version, what was
 * restored) and at stop.
 */
#include "netd/daemon.h"
#include "netd/common/version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/diag.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/special.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/proxy.h"
#include "netd/trail/audit.h"
#include "netd/api/ctl.h"
#include "netd/api/metrics_http.h"
#include "netd/daemon/internal.h"
#include "netd/fw.h"
#include "netd/link/kernel.h"
#include "netd/daemon/opsig.h"
#include "netd/model/pinreg.h"
#include "netd/daemon/policywatch.h"
#include "netd/daemon/sdnotify.h"
#include "netd/trail/trail.h"
#include "netd/trail/ipfixexp.h"
#include "netd/trail/journal.h"
#include "netd/gw/ca.h"
#include "netd/gw/creds.h"

/* SIGHUP: the same reload as POST /v1/policies/reload; the outcome is logged. */
static void on_sighup(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	json_t *report = NULL;
	char err[1200];

	(void)sig;
	(void)what;
	/* Not the audit log: that is SIGUSR1 (netd/daemon/opsig.c), so logrotate never reloads. */
	sdnotify_reloading();
	log_info("SIGHUP: reloading policies from %s", d->cfg.policy_dir);
	if (daemon_policy_reload(d, &report, err, sizeof(err)) == 0)
		json_decref(report);
	sdnotify_ready(NULL);	/* a rejected reload keeps the old state: still ready */
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	log_info("signal %d: shutting down (the kernel keeps the rules; sandboxes stay enforced)",
		 (int)sig);
	sdnotify_stopping();
	event_base_loopbreak(d->base);
}

static int build_internal(struct daemon *d)
{
	struct prefix *host;
	int n;

	/* The never-pin table, every address of the host (however many), the pools. */
	n = d->lk->ops->local_addrs(d->lk, &host);
	if (n < 0)
		return n;
	free(d->internal);
	d->internal = calloc(SPECIAL_TABLE_MAX + (size_t)n + 2, sizeof(*d->internal));
	if (!d->internal) {
		free(host);
		return -ENOMEM;
	}
	d->n_internal = special_prefixes(d->internal, SPECIAL_TABLE_MAX,
					 d->cfg.dns_never_pin_doc ? SPECIAL_WITH_DOC : 0);
	if (n)
		memcpy(d->internal + d->n_internal, host, (size_t)n * sizeof(*host));
	free(host);
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

	r = fs_mkdir_p(d->cfg.state_dir, 0750);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/sandboxes", d->cfg.state_dir);
		r = fs_mkdir_p(path, 0750);
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

/*
 * Sockets are bounded by netd's own limits, not a 1024 soft default: the
 * soft limit goes to the hard one, and (as root may) both to at least
 * NETD_NOFILE_MIN - each sandbox's gateway takes two sockets.
 */
static unsigned int raise_fd_limit(void)
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
	return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)INT_MAX ?
		       (unsigned int)rl.rlim_cur : (unsigned int)INT_MAX;
}

/* The configuration: file, socket override, upstreams from resolv.conf.  Return: 0; -1 (logged). */
static int startup_config(struct daemon *d, const char *config_path, const char *socket_override)
{
	struct diag err = { 0 };
	char msg[1024];
	int r;

	config_init(&d->cfg);
	if (config_path) {
		r = config_load_file(&d->cfg, config_path, &err);
		if (r < 0) {
			log_err("%s", diag_format(&err, msg, sizeof(msg)));
			return -1;
		}
		/* Reported in /v1/status for `netd exec`, which hides it. */
		if (!realpath(config_path, d->config_file))
			snprintf(d->config_file, sizeof(d->config_file), "%s", config_path);
	}
	/* pool.node_block4/6: this node's block of the pools (NETD_NODE_IP). */
	if (config_pool_for_node(&d->cfg, getenv("NETD_NODE_IP"), &err) < 0) {
		log_err("%s", diag_format(&err, msg, sizeof(msg)));
		return -1;
	}
	if (socket_override) {
		free(d->cfg.socket);
		d->cfg.socket = strdup(socket_override);
		if (!d->cfg.socket) {
			log_err("out of memory");
			return -1;
		}
	}
	log_set_level((enum log_level)d->cfg.log_level);
	if (d->cfg.n_upstream == 0) {
		r = config_read_resolv_conf(&d->cfg, "/etc/resolv.conf");
		if (r < 0 || d->cfg.n_upstream == 0) {
			log_err("no upstream resolver: set \"upstream\" in the config (/etc/resolv.conf has none)");
			return -1;
		}
	}
	return 0;
}

/*
 * Everything before nf_tables: locks, policies, the egress interface, the
 * host's addresses, the registry, forwarding, the audit log.
 * Return: 0; -1 (logged).
 */
static int startup_host(struct daemon *d)
{
	int r;

	/* The netns lock guards the kernel's table; a box's table is its stand-in's. */
	if (lock_state_dir(d) < 0 || (!d->box && lock_netns(d) < 0))
		return -1;
	if (socket_answers(d->cfg.socket)) {
		log_err("control socket %s: another netd is answering there", d->cfg.socket);
		return -1;
	}
	if (daemon_policies_load(&d->cfg, d->policies, &d->n_policies, NULL, 0) < 0)
		return -1;
	if (daemon_gw_creds_reload(d, NULL, 0) < 0)
		return -1;
	if (d->cfg.egress_interface[0]) {
		_Static_assert(sizeof(d->egress_ifname) == sizeof(d->cfg.egress_interface), "IFNAMSIZ");
		memcpy(d->egress_ifname, d->cfg.egress_interface, sizeof(d->egress_ifname));
		d->egress_ifname[sizeof(d->egress_ifname) - 1] = '\0';
	} else if (d->lk->ops->default_route_ifname(d->lk, d->egress_ifname,
						      sizeof(d->egress_ifname)) < 0) {
		log_warn("no default route: masquerading out of every non-sandbox interface");
		d->egress_ifname[0] = '\0';
	}
	r = build_internal(d);
	if (r < 0) {
		log_err("cannot list the host's addresses: %s", strerror(-r));
		return -1;
	}
	r = sandbox_table_new(&d->cfg.pool4, d->cfg.pool6_enabled ? &d->cfg.pool6 :
					&(struct prefix){ 0 }, &d->sandboxes);
	if (r < 0) {
		log_err("pool: %s", strerror(-r));
		return -1;
	}
	r = d->lk->ops->forwarding_enable(d->lk, d->cfg.pool6_enabled);
	if (r < 0) {
		log_err("cannot enable forwarding: %s", strerror(-r));
		return -1;
	}
	r = audit_open(d->cfg.audit_log, &d->audit);
	if (r < 0) {
		log_err("audit_log %s: %s", d->cfg.audit_log, strerror(-r));
		return -1;
	}
	audit_set_rotation(d->audit, d->cfg.audit_rotate_bytes, d->cfg.audit_keep);
	return 0;
}

/* Re-adopt the state dir in one reconcile batch, then CNI DELs and orphans.  Return: 0; -1. */
static int startup_restore(struct daemon *d)
{
	struct fw_config fc = {
		.table = "netd",
		.dns_port = d->cfg.dns_port,
		.egress_ifname = d->egress_ifname,
		.pool4 = d->cfg.pool4,
		.internal = d->internal,
		.n_internal = d->n_internal,
		.log_group = TRAIL_LOG_GROUP,
		.no_fast_path = !d->cfg.fast_path,
		.conn_limit = d->cfg.conn_limit,
		.gw_port = d->cfg.gw_port,	/* the API gateway's port (0: none) */
		.pins = d->pins,
		.flowtable = d->cfg.flowtable == CONFIG_FLOWTABLE_ON    ? FW_FLOWTABLE_ON :
			     d->cfg.flowtable == CONFIG_FLOWTABLE_OFF   ? FW_FLOWTABLE_OFF :
									  FW_FLOWTABLE_AUTO,
	};
	if (d->box)	/* a stand-in kernel is asked nothing (no flowtable, no queue probe) */
		fc.flowtable = FW_FLOWTABLE_NONE;
	if (d->cfg.pool6_enabled)
		fc.pool6 = d->cfg.pool6;
	if (daemon_state_restore(d, &fc) < 0)
		return -1;
	/* Before the control socket opens, so no new ADD can race with them. */
	daemon_tombstones_process(d);
	daemon_orphans_remove(d);
	daemon_flowtable_report(d);
	/* Another table's forward chain that drops what netd accepts: said at once (health.c). */
	if (!d->box)
		daemon_health_refresh(d, true);
	return 0;
}

/* Conntrack accounting and the idle grace (netd/trail/trail.h).  Return: 0; -1 (logged). */
static int startup_trail(struct daemon *d)
{
	struct trail_config tc = {
		.update_interval_s = d->cfg.conn_update_interval_s,
		.rcvbuf_bytes = d->cfg.conntrack_rcvbuf_bytes,
		.log_group = TRAIL_LOG_GROUP,
		.pool4 = d->cfg.pool4,
		.idle_grace_s = d->cfg.dns_idle_grace_s,
		.grace_pin = daemon_trail_grace_pin,
		.conn_open = d->cfg.conn_open,
		.gw_port = d->cfg.gw_port,
		.no_kernel = d->box != NULL,	/* a box has no conntrack or nflog */
		.pins = d->pins,
		.budget_bytes = daemon_budget_bytes,
	};

	if (trail_new(d->base, &tc, d->audit, d->sandboxes, daemon_trail_policy, d, &d->trail) < 0)
		return -1;
	daemon_grace_update(d);
	/* ipfix: the same records, to collectors (netd/trail/ipfixexp.h; docs/flows.md). */
	if (d->cfg.ipfix.n_collectors) {
		int r = ipfixexp_new(d->base, &d->cfg.ipfix, &d->ipfix);

		if (r < 0) {
			log_err("ipfix: %s", strerror(-r));
			return -1;
		}
		trail_set_export(d->trail, d->ipfix, d->cfg.ipfix.interim_s);
		log_info("ipfix: exporting connections to %u collector(s), observation domain %u, "
			 "enterprise number %u%s", d->cfg.ipfix.n_collectors,
			 d->cfg.ipfix.observation_domain, d->cfg.ipfix.enterprise,
			 d->cfg.ipfix.enterprise == 32473 ? " (RFC 5612's, for documentation: set "
			 "your own in ipfix.enterprise)" : "");
	}
	return 0;
}

/* audit.journal: every audit record to the systemd journal too (netd/trail/journal.h). */
static int startup_journal(struct daemon *d)
{
	int r;

	if (!d->cfg.audit_journal)
		return 0;
	r = journal_new(&d->journal);
	if (r < 0) {
		log_err("audit.journal: cannot start its writer: %s", strerror(-r));
		return -1;
	}
	audit_set_journal(d->audit, d->journal);
	/* libsystemd drops records silently without journald: say so once. */
	if (access("/run/systemd/journal/socket", F_OK) < 0)
		log_warn("audit.journal: no journald here (/run/systemd/journal/socket: %s); "
			 "records go to the audit log only", strerror(errno));
	return 0;
}

/* The DNS proxy, and restored sandboxes' own gateway sockets.  Return: 0; -1 (logged). */
static int startup_proxy(struct daemon *d)
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
	struct sandbox *sb;
	uint32_t cur = 0;
	int r;

	if (d->box && !d->box->proxy_new)
		return 0;	/* a box without DNS */
	r = d->box ? d->box->proxy_new(d->box->ctx, d->base, &pc, &daemon_proxy_ops, d,
				       &d->proxy) :
		     proxy_new(d->base, &pc, &daemon_proxy_ops, d, &d->proxy);
	if (r < 0) {
		log_err("DNS proxy: cannot listen on port %u: %s", d->cfg.dns_port, strerror(-r));
		return -1;
	}
	if (!d->cfg.dns_udp_gso)
		log_info("DNS proxy: replies are never grouped (dns.udp_gso: false)");
	/* Restored sandboxes: their gateways' own :53 (the reconcile emptied
	 * dns_local; until now their DNS took the redirect). */
	while ((sb = sandbox_next(d->sandboxes, &cur)))
		daemon_dns_direct(d, sb);
	return 0;
}

/* The "netd" audit record of a start or a stop. */
static void audit_lifecycle(struct daemon *d, const char *action)
{
	json_t *rec = json_pack("{s:s, s:s, s:I, s:I, s:I}", "action", action, "version",
				NETD_VERSION, "pid", (json_int_t)getpid(), "sandboxes",
				(json_int_t)sandbox_count(d->sandboxes), "policies",
				(json_int_t)d->n_policies);

	if (rec && strcmp(action, "start") == 0)
		json_object_set_new(rec, "restored", json_integer((json_int_t)d->n_restored));
	if (rec && strcmp(action, "stop") == 0)
		json_object_set_new(rec, "uptime_s", json_integer((json_int_t)(time(NULL) - d->started)));
	audit_write(d->audit, "netd", rec);
}

/* The loop's edges: link watch, control socket, signals.  Return: 0; -1 (logged). */
static int startup_edges(struct daemon *d, struct event *sig[3])
{
	int r = daemon_vanish_watch(d);

	if (r < 0)	/* not fatal: a vanished sandbox then stays until the next start */
		log_warn("cannot watch link events (vanished sandboxes stay until restart): %s",
			 strerror(-r));
	r = ctl_new(d->base, d->cfg.socket, &daemon_ctl_ops, d, &d->ctl);
	if (r < 0) {
		log_err("control socket %s: %s", d->cfg.socket,
			r == -EADDRINUSE ? "another netd is answering there" : strerror(-r));
		return -1;
	}
	if (d->cfg.metrics_addr.family) {
		char ab[ADDR_STRLEN];

		addr_format(&d->cfg.metrics_addr, ab, sizeof(ab));
		r = metrics_http_new(d->base, &d->cfg.metrics_addr, d->cfg.metrics_port,
				     daemon_ctl_ops.metrics, d, &d->metrics_http);
		if (r < 0) {
			log_err("metrics_listen %s port %u: %s", ab, d->cfg.metrics_port, strerror(-r));
			return -1;
		}
		log_info("metrics on http://%s%s%s:%u/metrics", strchr(ab, ':') ? "[" : "", ab,
			 strchr(ab, ':') ? "]" : "", d->cfg.metrics_port);
	}
	sig[0] = evsignal_new(d->base, SIGINT, on_signal, d);
	sig[1] = evsignal_new(d->base, SIGTERM, on_signal, d);
	sig[2] = evsignal_new(d->base, SIGHUP, on_sighup, d);
	for (int i = 0; i < 3; i++)
		if (!sig[i] || evsignal_add(sig[i], NULL) < 0)
			return -1;
	if (d->cfg.policy_watch && daemon_policy_watch(d) < 0)
		return -1;
	if (daemon_verify_init(d) < 0 || daemon_budget_start(d) < 0)
		return -1;
	if (d->cfg.verify_interval_s)
		log_info("verify_interval: every sandbox probed every %u s (docs/verify.md)",
			 d->cfg.verify_interval_s);
	if (opsig_start(d->base, d->audit, d->cfg.audit_log) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Free everything startup made, in reverse; every step NULL-safe. */
static void daemon_done(struct daemon *d, struct event *sig[3])
{
	for (int i = 0; i < 3; i++)
		if (sig[i])
			event_free(sig[i]);
	opsig_stop();
	daemon_sni_stop(d);
	policywatch_free(d->pwatch);
	metrics_http_free(d->metrics_http);
	ctl_free(d->ctl);
	daemon_verify_free(d);
	daemon_budget_stop(d);	/* counters that changed saved, while the sandboxes are there */
	daemon_gw_stop(d);
	gw_ca_free(d->gw_ca);
	gw_creds_free(d->gw_creds);
	if (d->lk)
		d->lk->ops->unwatch(d->lk, d->linkwatch);
	proxy_free(d->proxy);
	daemon_pdigest_free(d);
	trail_free(d->trail);	/* its last records reach the exporter, then it goes */
	ipfixexp_free(d->ipfix);
	audit_close(d->audit);
	journal_free(d->journal);	/* after the last record was queued */
	fw_close(d->fw);
	pinreg_free(d->pins);	/* after fw and the trail, which borrow it */
	d->pins = NULL;
	free(d->internal);
	d->internal = NULL;
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
}

int daemon_main(const char *config_path, const char *socket_override)
{
	return daemon_run(config_path, socket_override, NULL);
}

int daemon_run(const char *config_path, const char *socket_override,
	       const struct daemon_box *box)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	struct event *sig[3] = { NULL, NULL, NULL };
	int status = 1, r;

	if (box && (!box->fw_kernel_new || !box->link)) {
		log_err("daemon box: the nf_tables and link stand-ins are required");
		return 1;
	}
	memset(d, 0, sizeof(*d));	/* a box may run the daemon again in one process */
	d->box = box;
	d->lk = box ? box->link : link_kernel_rtnl();
	d->lock_fd = -1;
	d->netns_lock_fd = -1;
	d->fd_limit = raise_fd_limit();
	if (readlink("/proc/self/exe", d->self_exe, sizeof(d->self_exe) - 1) < 0)
		d->self_exe[0] = '\0';
	d->started = time(NULL);
	if (pinreg_new(&d->pins) < 0) {
		log_err("out of memory");
		return 1;
	}
	if (startup_config(d, config_path, socket_override) < 0 || startup_host(d) < 0 ||
	    startup_restore(d) < 0)
		goto out;
	d->base = event_base_new();
	if (!d->base || audit_attach(d->audit, d->base) < 0)
		goto out;
	if (startup_journal(d) < 0 || startup_trail(d) < 0 || startup_proxy(d) < 0 ||
	    startup_edges(d, sig) < 0)
		goto out;
	/* A box has no nfnetlink_queue: the SNI check is not bound (netd/daemon.h). */
	if (!d->box && (r = daemon_sni_start(d)) < 0)
		log_err("SNI check: cannot bind netfilter queues %u/%u: %s; connections under "
			"tls.sni/http.host enforce are dropped, under log they pass unchecked",
			FW_SNI_QUEUE_ENFORCE, FW_SNI_QUEUE_LOG, strerror(-r));
	/* The gateway: not in a box (no worker process there). */
	if (!d->box && daemon_gw_start(d) < 0)
		log_err("gateway: not started; connections steered to it are refused (docs/gateway.md)");
	if (link_mntns_own())
		log_warn("netd runs in a mount namespace of its own (started under `ip netns exec` "
			 "or `unshare -m`?): the sandboxes' /run/netns entries it mounts are not "
			 "visible to netd exec, ip netns or container runtimes; start it with "
			 "`nsenter --net=/run/netns/NAME netd run` instead (docs/operations.md)");
	log_info("ready: %zu policies, %zu sandboxes, DNS proxy on port %u, egress %s, control %s",
		 d->n_policies, sandbox_count(d->sandboxes), d->cfg.dns_port,
		 d->egress_ifname[0] ? d->egress_ifname : "(any)", d->cfg.socket);
	sdnotify_ready("ready");
	audit_lifecycle(d, "start");
	event_base_dispatch(d->base);
	audit_lifecycle(d, "stop");
	status = 0;
out:
	daemon_done(d, sig);
	return status;
}
