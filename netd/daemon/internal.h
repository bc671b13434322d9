/*
 * daemon/internal.h - what the files of `netd run` share, and nothing
 * else includes: the daemon's state (struct daemon) and the functions one
 * job offers another.  Map (docs/architecture.md, "netd/daemon/"):
 *
 *   netd/daemon.c            startup and shutdown: config, locks, the loop
 *   daemon/policies.c        the loaded policy set: load a directory, find, deny-all
 *   daemon/policyview.c      pure: a policy as JSON, its digest, its items
 *   daemon/api.c             the control API's ops: JSON views, status, metrics
 *   daemon/lifecycle.c       sandbox create / attach / delete / retire
 *   daemon/hostcheck.c       pure: requested addresses vs the host's own
 *   daemon/resolv.c          /etc/netns/NAME/resolv.conf
 *   daemon/state.c           the state dir: save, restore, orphans
 *   daemon/statefile.c       pure: one state file, parsed and formatted (fuzzed)
 *   daemon/reload_plan.c     pure: old state + new policies -> plan
 *   daemon/reload.c          reload: load, plan, commit, report
 *   daemon/tombstones.c      CNI DELs that arrived while netd was down
 *   daemon/dnsglue.c         the DNS proxy's ops and its audit records
 *   daemon/graceglue.c       the idle grace's pin and policy lookups
 *   daemon/vanish.c          sandboxes whose interface vanished (netd/link/linkwatch.c)
 *   daemon/health.c          status "degraded": other tables' forward drops, unfollowed vanishes
 *   daemon/sniglue.c         the SNI/Host check's queues, verdicts and audit (docs/sni.md)
 *   daemon/tapsb.c           microVM sandboxes: netd's tap instead of a veth
 *   daemon/verify.c          `netd verify`: probes from inside each sandbox, verify_interval
 *   daemon/verify_plan.c     pure: which probes, their judgement, the report
 *
 * Dependencies point one way: the pure files (policyview, hostcheck,
 * statefile, reload_plan) include no daemon state; the others include
 * this header; netd/api/ctl.c sees none of it (it calls struct ctl_ops).
 */
#ifndef NETD_DAEMON_INTERNAL_H
#define NETD_DAEMON_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "common/addr.h"
#include "netd/model/config.h"
#include "netd/fw.h"
#include "netd/api/ctl.h"
#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"
#include "netd/model/sandbox.h"

struct fw_sandbox;
struct pin;
struct proxy_ops;
struct fw_config;
struct linkwatch;
struct policywatch;
struct pdigest;
struct link_kernel;
struct daemon_box;
struct proxy_event;
struct verify;
struct gw_ca;
struct ct_flow;
struct statefile;
struct event;

#define DAEMON_MAX_POLICIES 1024
#define NETNS_ETC_DIR "/etc/netns"
#define DNS_DIRECT_FD_RESERVE 4096	/* descriptors the gateway sockets leave to the rest */
#define NETD_NOFILE_MIN       65536	/* RLIMIT_NOFILE netd raises itself to */

/* The "who" members of the last DNS audit record (dnsglue.c). */
struct audit_who {
	bool valid;
	char sandbox[SANDBOX_NAME_MAX + 1], policy[POLICY_NAME_MAX + 1], transport[8];
	struct addr client;
	char members[512];
	size_t len;
};

/* The "what" members of the last DNS audit record (dnsglue.c). */
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

#define GW_HIST_N 10	/* request-duration histogram bounds (gwglue.c) */
#define GW_SERIES_MAX 4096	/* (sandbox, host, status) series of the request counter */
#define GW_SERIES_SLOTS (2 * GW_SERIES_MAX)	/* their index: open addressing, half full at most */

/* The gateway's counters (gwglue.c, /metrics). */
struct gw_stats {
	uint64_t requests, restarts, lost;	/* lost: messages to the worker that did not fit */
	uint64_t conns[3];	/* by verdict: enum gw_ipc_action */
	uint64_t hist[GW_HIST_N + 1];
	uint64_t hist_sum_us;
	struct {
		char sandbox[64], host[254];
		unsigned int status;
		uint64_t n;
	} series[GW_SERIES_MAX];
	size_t n_series;
	uint16_t series_index[GW_SERIES_SLOTS];	/* series + 1 by label hash; 0 free (gwdecide.c) */
	uint64_t dropped_series;	/* requests of series past GW_SERIES_MAX (still in requests) */
};

/* The gateway worker, as netd supervises it (gwglue.c). */
struct gw_proc {
	pid_t pid;		/* 0: none runs */
	int chan;		/* netd's end of the socketpair; -1 */
	struct event *ev;	/* on chan */
	struct event *restart;	/* the restart timer */
	uint64_t started_ms, backoff_ms;
	bool started;		/* daemon_gw_start() began supervising (restarts included) */
	int err;		/* the read end of the worker's stdout/stderr pipe; -1 */
	struct event *err_ev;	/* on err: its lines into netd's log, quoted */
	char err_line[1024];	/* a line not yet ended */
	size_t err_len;
	char why[256];		/* why netd gave up starting one; "" */
};

struct gw_creds;
struct gw_ipc_ask;
struct ipfixexp;
struct journal;
struct gw_ipc_verdict;
struct gw_ipc_http;

/* A sandbox attached by PID or netns path that vanished and was not re-attached (health.c). */
#define DAEMON_VANISHED_KEEP 16
struct vanished_rec {
	char name[SANDBOX_NAME_MAX + 1];
	char policy[SANDBOX_NAME_MAX + 1];
	char netns[PATH_MAX];
	char host_ifname[16];
	struct workload workload;
	time_t at;
};

struct daemon {
	struct config cfg;
	const struct daemon_box *box;	/* the daemon in a box (netd/daemon.h); NULL = real edges */
	struct link_kernel *lk;	/* the host's links (netd/link/kernel.h): rtnetlink, or a box's */
	struct event_base *base;
	struct fw *fw;
	struct proxy *proxy;
	struct audit *audit;
	struct ctl *ctl;
	struct metrics_http *metrics_http;	/* metrics_listen, or NULL */
	struct policywatch *pwatch;	/* policy_watch: inotify on policy_dir; NULL = off */
	struct trail *trail;	/* conn/deny records (issue: accounting) */
	struct ipfixexp *ipfix;	/* ipfix: flow export to collectors; NULL = none */
	struct journal *journal;	/* audit.journal: the records in the journal too; NULL = off */
	struct linkwatch *linkwatch;	/* vanished interfaces (vanish.c) */
	struct sandbox_table *sandboxes;
	struct policy *policies[DAEMON_MAX_POLICIES];
	size_t n_policies;
	struct prefix *internal;	/* malloc()ed by build_internal(), sized from what it holds */
	size_t n_internal;
	char egress_ifname[16];
	int lock_fd;
	int netns_lock_fd;	/* abstract unix socket: one netd per netns */
	time_t started;
	char config_file[PATH_MAX];	/* the config file read at startup, absolute; "" = none */
	uint64_t dns_allowed, dns_denied, dns_failed;
	struct pinreg *pins;	/* the pin registry (netd/model/pinreg.h): fw, the trail,
				 * reloads and the SNI check read it; freed after both */
	uint64_t reloads, reloads_rejected;
	uint64_t vanished;	/* sandboxes retired because their interface vanished */
	/* health.c: the last DAEMON_VANISHED_KEEP sandboxes attached by path that
	 * vanished (oldest first) and how many older ones were let go */
	struct vanished_rec vanished_recent[DAEMON_VANISHED_KEEP];
	size_t n_vanished_recent;
	uint64_t vanished_recent_dropped;
	/* health.c: other tables' forward chains that stop sandboxes, as last read */
	struct fw_blocker blockers[FW_BLOCKERS_MAX];
	size_t n_blockers;
	bool blockers_read;
	int blockers_err;	/* the last read's -errno, 0 if it worked */
	uint64_t blockers_at_ms;	/* when last read (monotonic) */
	char forward_detail[256];	/* daemon_health_forward()'s answer */
	uint64_t ft_failures;	/* egress interface additions nf_tables refused (flowglue.c) */
	struct audit_who who;	/* caches of the DNS audit (dnsglue.c) */
	struct audit_what what;
	unsigned int fd_limit;	/* RLIMIT_NOFILE after raising it */
	unsigned int n_dns_listeners;	/* sockets of daemon_dns_direct() */
	size_t n_restored;	/* sandboxes re-adopted at startup */
	struct pdigest *pdigests;	/* the policy digest files (pdigest.c) */
	size_t n_pdigests;
	struct verify *verify;	/* verify.c: the run under way, its counters; NULL until used */
	struct gw_ca *gw_ca;	/* the gateway's CA (netd/gw/ca.h); NULL until first asked for */
	struct gw_creds *gw_creds;	/* netd.yaml's credentials with their secrets (netd/gw/creds.h) */
	size_t gw_creds_read, gw_creds_changed;	/* at the last (re)load, for its report */
	struct gw_proc gw;	/* the gateway worker (gwglue.c) */
	struct gw_stats gw_stats;
	char self_exe[PATH_MAX];	/* this binary, for the gateway worker's exec */
	struct event *budget_tick;	/* rbudgetglue.c: windows and saves */
	uint64_t budget_closures;	/* rules closed by their budget since start */
};

/* ---- gwglue.c ---- */

extern const double gw_hist_le[GW_HIST_N];	/* seconds */

/*
 * daemon_gw_ca() - load or make the gateway CA (STATE_DIR/gateway-ca/) once.
 * Return: 0; -errno (@err says why, logged).
 */
int daemon_gw_ca(struct daemon *d, char *err, size_t errsz);

/*
 * daemon_gw_start() - start the gateway worker (a listening socket on
 * gateway.port, the worker's channel) once a loaded policy has a gateway:
 * rule and gateway.port is not 0; called at start and after each reload,
 * a no-op once started.  Return: 0; -errno (logged).
 */
int daemon_gw_start(struct daemon *d);

/*
 * daemon_gw_creds_reload() - read netd.yaml's credentials' secrets again
 * (netd/gw/creds.h): the next connections get them, and the worker puts
 * the changed ones into the connections that hold them; the old set is
 * kept if one fails.  Counts in gw_creds_read/gw_creds_changed.
 * @err: why, FILE:LINE:COL (logged too).
 * Return: 0; -errno.
 */
int daemon_gw_creds_reload(struct daemon *d, char *err, size_t errsz);

/*
 * daemon_gw_decide() - netd's verdict @v for the worker's question @a
 * (gwdecide.c): refuse (with a reason), pass (a name without gateway:
 * pinned there) or gateway (leaf, the rule's checks, credentials).  @v's
 * strings are new (gw_ipc_verdict_clear()).
 */
void daemon_gw_decide(struct daemon *d, const struct gw_ipc_ask *a, struct gw_ipc_verdict *v);

/* daemon_gw_record() - one request's "http" audit record and its counters (gwdecide.c). */
void daemon_gw_record(struct daemon *d, const struct gw_ipc_http *h);

/*
 * daemon_gw_send() - message @msg/@len (JSON, heap) to the worker; wipes and
 * frees it.  A full channel loses it (gw_stats.lost).
 */
void daemon_gw_send(struct daemon *d, char *msg, size_t len);

/* daemon_gw_stop() - end the worker (its channel closed, SIGTERM, reaped). */
void daemon_gw_stop(struct daemon *d);

/*
 * daemon_gw_status() - the gateway in GET /v1/status: {"enabled", "port",
 * "worker" (running, idle, restarting or failed, in words), "worker_pid",
 * "worker_up", "restarts", "requests", "connections": by verdict}.  A new
 * object (caller decrefs).
 */
json_t *daemon_gw_status(const struct daemon *d);

/*
 * daemon_gw_trouble() - a sentence for status's "warnings" when the worker
 * is wanted and not running, other than in its first pause before a
 * restart: netd gave up starting it (why), or it keeps ending.  Writes
 * @msg (@size bytes).  Return: true when there is one.
 */
bool daemon_gw_trouble(const struct daemon *d, char *msg, size_t size);

/* daemon_gw_metrics() - netd_gateway_* families, to @out. */
void daemon_gw_metrics(struct daemon *d, FILE *out);

/* ---- health.c ---- */

/*
 * daemon_sandbox_by_path() - @sb was attached by PID or netns path (netd
 * did not make its netns; not chained, not a tap, not a peer: a Docker
 * driver's endpoint, made again at each container start): the kind whose
 * container netd does not follow to its next netns.
 */
bool daemon_sandbox_by_path(const struct sandbox *sb);

/* daemon_vanished_why() - why such a sandbox is gone and what to do, one sentence (static). */
const char *daemon_vanished_why(void);

/*
 * daemon_vanished_note() - remember @sb (attached by path, just retired as
 * vanished) for status until a sandbox of its name is created again; the
 * oldest of DAEMON_VANISHED_KEEP is let go (counted).  Others: nothing.
 */
void daemon_vanished_note(struct daemon *d, const struct sandbox *sb);

/* daemon_vanished_forget() - a sandbox named @name exists again: drop its entry. */
void daemon_vanished_forget(struct daemon *d, const char *name);

/*
 * daemon_health_refresh() - read other tables' forward chains again
 * (fw_forward_blockers()) unless read within the last 2 s (@force: now);
 * a change is logged, each blocker with its fix.  No fw yet: nothing.
 */
void daemon_health_refresh(struct daemon *d, bool force);

/*
 * daemon_health_forward() - `netd verify`'s foreign-forward probe: "" when
 * no other table's forward chain stops the sandboxes, else which one
 * (borrowed from @d until the next call).  @fresh: read the kernel now.
 */
const char *daemon_health_forward(struct daemon *d, bool fresh);

/*
 * daemon_health_json() - read the kernel now, then on the status object @o: "status" ("ok", or
 * "degraded" with "warnings"), "forward_blockers", "vanished" (attached by
 * path, not re-attached), "vanished_not_listed"; "forward_check_error" if the
 * kernel could not be read.
 */
void daemon_health_json(struct daemon *d, json_t *o);

/* daemon_health_metrics() - netd_forward_blocker(s) and netd_sandboxes_vanished_unattached. */
void daemon_health_metrics(struct daemon *d, FILE *out);

/* ---- policies.c ---- */

/* daemon_policy_find() - the loaded policy named @name (borrowed) or NULL. */
const struct policy *daemon_policy_find(const struct daemon *d, const char *name);

/*
 * daemon_policies_load() - every .yaml/.yml file of @cfg's policy_dir into
 * @out (at most DAEMON_MAX_POLICIES), sorted by file name; all or nothing.
 * A gateway rule must name credentials @cfg defines, and needs
 * gateway.port.  Errors are logged with file:line:col and the first kept
 * in @ebuf (may be NULL).  @out entries: caller frees with policy_free().
 * Return: 0; -errno.
 */
int daemon_policies_load(const struct config *cfg, struct policy **out, size_t *n_out,
			 char *ebuf, size_t esz);

/* daemon_policy_deny_all() - add reload_deny_all_new(@name) to the loaded set; borrowed. */
const struct policy *daemon_policy_deny_all(struct daemon *d, const char *name);

/* ---- api.c ---- */

/* The control API's calls into the daemon (netd/api/ctl.h); ctx is the daemon. */
extern const struct ctl_ops daemon_ctl_ops;

/* daemon_sandbox_json() - a new JSON object describing @sb (caller decrefs). */
json_t *daemon_sandbox_json(struct daemon *d, const struct sandbox *sb);

/* daemon_json_addr() - @a as a JSON string, or null for family 0. */
json_t *daemon_json_addr(const struct addr *a);

/* ---- lifecycle.c ---- */

/*
 * daemon_sandbox_create() - create and enforce a sandbox.  Rules are in the
 * kernel before the interface exists, so its first packet is under policy.
 * Requested addresses and interfaces are checked against the host's own
 * (hostcheck.h) first: nothing is created for a colliding request.
 * @err/@errsz: a message for the API client on failure.
 * Return: 0 (@ret borrowed from the registry); -EINVAL (bad request),
 * -ENOENT (unknown policy or netns), -EEXIST (name taken), -EBUSY, -ENOSPC, -errno.
 */
int daemon_sandbox_create(struct daemon *d, const struct sandbox_request *req,
			  struct sandbox **ret, char *err, size_t errsz);

/*
 * daemon_sandbox_retire() - remove the interface, rules, pins, state and (if
 * netd created it) the netns of the sandbox named @name; audit @action
 * ("delete", "vanished").  Return: 0; -ENOENT (no such sandbox).
 */
int daemon_sandbox_retire(struct daemon *d, const char *name, const char *action);

/* daemon_sandbox_teardown() - @sb's kernel state and files: interface first, then rules. */
void daemon_sandbox_teardown(struct daemon *d, struct sandbox *sb);

/* daemon_fw_view() - the nf_tables module's view of @sb. */
void daemon_fw_view(const struct sandbox *sb, struct fw_sandbox *out);

/*
 * daemon_sandbox_rules() - put @sb's rules under @pol into nf_tables
 * (fw_sandbox_add()), then forget any pins the proxy kept for its name (a
 * new sandbox has none).  @fv: filled with the view the rules were made
 * from, for the caller's fw_sandbox_del() should a later step fail.
 * @err, @errsz: why not, for the API's reply.
 * Return: 0; fw_sandbox_add()'s -errno.
 */
int daemon_sandbox_rules(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			 struct fw_sandbox *fv, char *err, size_t errsz);

/* daemon_dns_direct() - the proxy's own port 53 on @sb's gateways (best effort). */
void daemon_dns_direct(struct daemon *d, struct sandbox *sb);

/*
 * daemon_flowtable_report() - log whether the flowtable fast path is on, and
 * if not why.  daemon_flowtable_refresh() - the egress interface back among
 * its devices (fw_flowtable_refresh(); best effort: logged, counted in
 * d->ft_failures, netd_flowtable_failures_total).
 */
void daemon_flowtable_report(const struct daemon *d);
void daemon_flowtable_refresh(struct daemon *d);

/* daemon_audit_sandbox() - one "sandbox" audit record: @action on @sb. */
void daemon_audit_sandbox(struct daemon *d, const struct sandbox *sb, const char *action);


/* ---- tapsb.c ---- */

/*
 * daemon_tap_build() - make @sb (from sandbox_alloc(), @req->tap) a tap
 * sandbox: its fields from @req, rules, the tap (owned by
 * @req->tap_owner), addresses and link up, DNS on its gateways.  On
 * failure nothing is left.  Return: 0; -EINVAL, -EBUSY (name taken),
 * -EEXIST, -errno with @err filled.
 */
int daemon_tap_build(struct daemon *d, struct sandbox *sb, const struct policy *pol,
		     const struct sandbox_request *req, char *err, size_t errsz);

/*
 * daemon_tap_restore() - at startup, before the reconcile batch: check that
 * @sb's recorded tap is still netd's (a persistent tap owned by its
 * owner), or create it again (down) if it is gone.  Return: 0; -EBUSY (an
 * interface of that name is not netd's tap: the sandbox is not restored);
 * -errno.
 */
int daemon_tap_restore(struct daemon *d, struct sandbox *sb);

/* daemon_tap_up() - after its rules are back: addresses on @sb's tap, link up. */
void daemon_tap_up(struct daemon *d, struct sandbox *sb);

/* daemon_tap_json() - add @sb's tap and guest fields to its API object @o. */
void daemon_tap_json(const struct sandbox *sb, json_t *o);

/* ---- bwglue.c ---- */

/*
 * daemon_bw_want() - the rates @sb should have, bit/s (0: none): its own
 * from create, else its policy's limits.bandwidth.
 */
void daemon_bw_want(const struct daemon *d, const struct sandbox *sb, uint64_t *eg,
		    uint64_t *in);

/*
 * daemon_bw_apply() - put daemon_bw_want()'s rates on @sb's host interface
 * and its IFB (netd/link/shape.h) unless they are there already (@force:
 * send anyway, to repair what the kernel has after a restart; a sandbox
 * with no rate then and none before still costs nothing).  Records them in
 * sb->shaped_*.  Return: 1 (sent); 0 (nothing to do); -errno (@err says
 * why; sb->shaped_* unchanged).
 */
int daemon_bw_apply(struct daemon *d, struct sandbox *sb, bool force, char *err, size_t errsz);

/* daemon_bw_remove() - at teardown: the IFB (and a chained port's qdiscs) go. */
void daemon_bw_remove(struct daemon *d, struct sandbox *sb);

/*
 * daemon_bw_sync_all() - daemon_bw_apply() for every sandbox (after a
 * reload; @force after a restore), each change logged and saved in its
 * state file; a failure is logged and leaves that sandbox's rates as they were.
 */
void daemon_bw_sync_all(struct daemon *d, bool force);

/*
 * daemon_bw_json() - {"egress", "ingress"}: each null or {"limit",
 * "limit_bps", "from": "policy"|"sandbox"}; @live adds the kernel's
 * counters ("rate_bps", "bytes", "packets", "drops", "backlog_bytes"),
 * two rtnetlink gets.  A new object.
 */
json_t *daemon_bw_json(struct daemon *d, const struct sandbox *sb, bool live);

/* daemon_bw_metrics() - netd_sandbox_bandwidth_* families (one qdisc dump), to @out. */
void daemon_bw_metrics(struct daemon *d, FILE *out);

/* ---- rbudgetglue.c ---- */

/*
 * daemon_budget_bytes() - trail_config.budget_bytes (netd/trail/trail.h):
 * @bytes of flow @f of @sb, opened under @domain, against the budget of
 * the rule that allowed it; the rule is closed for @sb (its names no
 * longer resolve, its pins are removed, its live connections cut, a
 * "budget" record) when that reaches the budget.  @ctx is the daemon.
 */
void daemon_budget_bytes(void *ctx, const struct sandbox *sb, const struct ct_flow *f,
			 const char *domain, uint64_t bytes);

/* daemon_budget_init() - a new sandbox's counters for @pol, all at 0.  Return: 0; -ENOMEM. */
int daemon_budget_init(struct daemon *d, struct sandbox *sb, const struct policy *pol);

/*
 * daemon_budget_restore() - at a restore, @sb's counters for @pol from its
 * state file @sf (a window that ended since starts at 0).
 */
void daemon_budget_restore(struct daemon *d, struct sandbox *sb, const struct policy *pol,
			   const struct statefile *sf);

/*
 * daemon_budget_sync_all() - after a reload: every sandbox's counters for
 * its policy now (kept by rule key); a rule the reload closed (a budget
 * lowered below what was used) is refused, one it opened said.
 */
void daemon_budget_sync_all(struct daemon *d);

/* daemon_budget_start() - the timer: windows roll, changed counters saved.  Return: 0; -ENOMEM. */
int daemon_budget_start(struct daemon *d);

/* daemon_budget_stop() - stop it and save what changed. */
void daemon_budget_stop(struct daemon *d);

/*
 * daemon_budget_dns_view() - the DNS decision's view of @pol for @sb: the
 * policy without the rules closed for it (borrows @sb's budgets and @pol).
 */
struct decide_policy daemon_budget_dns_view(struct sandbox *sb, const struct policy *pol);

/* daemon_budget_json() - @sb's budgets as an array (a new one; [] if none). */
json_t *daemon_budget_json(const struct sandbox *sb);

/* daemon_budget_metrics() - netd_rule_budget_* families, to @out. */
void daemon_budget_metrics(struct daemon *d, FILE *out);

/* ---- resolv.c ---- */

/*
 * daemon_resolv_conf_write() - /etc/netns/NAME/resolv.conf (a box's
 * etc_netns_dir/NAME/resolv.conf) naming @sb's gateways.  Return: 0; -errno.
 */
int daemon_resolv_conf_write(const struct daemon *d, const struct sandbox *sb);

/* daemon_resolv_conf_remove() - remove it and its directory; best effort. */
void daemon_resolv_conf_remove(const struct daemon *d, const char *name);

/* ---- pdigest.c ---- */

/*
 * daemon_pdigest_get() - what STATE_DIR/policies/@name.digest says: the
 * digest (policyview.h) of the rules netd last applied to the sandboxes of
 * policy @name; read once, then cached.  Return: borrowed until the next
 * pdigest call; "" if there is no readable file.
 */
const char *daemon_pdigest_get(struct daemon *d, const char *name);

/*
 * daemon_pdigest_save() - record @pol's digest in its file (atomically), if
 * the file does not already say it.  Call after the commit that applied
 * @pol.  A deny-all stand-in (no file) is not recorded.  Return: 0; -errno.
 */
int daemon_pdigest_save(struct daemon *d, const struct policy *pol);

/* daemon_pdigest_save_all() - daemon_pdigest_save() for every loaded policy; errors logged. */
void daemon_pdigest_save_all(struct daemon *d);

/* daemon_pdigest_free() - the cache. */
void daemon_pdigest_free(struct daemon *d);

/* ---- state.c ---- */

/* daemon_state_save() - write @sb's state file atomically.  Return: 0; -errno. */
int daemon_state_save(struct daemon *d, const struct sandbox *sb);

/* daemon_state_remove() - unlink @name's state file. */
void daemon_state_remove(struct daemon *d, const char *name);

/*
 * daemon_state_restore() - re-adopt the sandboxes recorded in the state
 * dir and open nf_tables with them in one reconcile batch (@fc).
 * Return: 0; -errno (fatal: nf_tables unusable).
 */
int daemon_state_restore(struct daemon *d, const struct fw_config *fc);

/* daemon_orphans_remove() - delete netd-named veths no sandbox owns. */
void daemon_orphans_remove(struct daemon *d);

/* ---- reload.c ---- */

/*
 * daemon_policy_reload() - re-read policy_dir (POST /v1/policies/reload,
 * SIGHUP).  The new set is validated whole first: any error rejects all of
 * it, the old policies stay in force and @err gets FILE:LINE:COL and the
 * message.  Otherwise every sandbox whose policy changed is updated in ONE
 * nf_tables batch (reload_plan.h says what changes); each change is logged
 * and audited ("policy_reload").  @ret_report: on success a new JSON
 * array, one object per changed sandbox (caller decrefs).
 * Return: 0; -EINVAL/-errno (nothing changed).
 */
int daemon_policy_reload(struct daemon *d, json_t **ret_report, char *err, size_t errsz);

/*
 * daemon_policy_watch() - policy_watch: true: watch cfg.policy_dir
 * (netd/daemon/policywatch.h) into d->pwatch; each change runs
 * daemon_policy_reload(), its outcome logged.  Return: 0; -errno (logged).
 */
int daemon_policy_watch(struct daemon *d);

/* ---- tombstones.c ---- */

/* daemon_tombstones_process() - delete the sandboxes CNI DELs named while netd was down. */
void daemon_tombstones_process(struct daemon *d);

/* ---- dnsglue.c ---- */

/* The DNS proxy's calls into the daemon (dnsproxy/proxy.h); ctx is the daemon. */
extern const struct proxy_ops daemon_proxy_ops;

/* ---- graceglue.c ---- */

/* daemon_trail_policy() - trail's policy lookup (trail_policy_fn); @ctx is the daemon. */
const struct policy *daemon_trail_policy(void *ctx, const char *name);

/* daemon_trail_grace_pin() - trail_config.grace_pin; @ctx is the daemon. */
int daemon_trail_grace_pin(void *ctx, const char *sandbox, const struct pin *pin);

/* daemon_grace_update() - idle graces on iff some loaded policy could give one. */
void daemon_grace_update(struct daemon *d);

/* ---- vanish.c ---- */

/*
 * daemon_vanish_watch() - subscribe to link events on d->base: a sandbox
 * whose host interface disappears (its netns died) is retired with audit
 * action "vanished".  Return: 0; -errno (logged by the caller).
 */
int daemon_vanish_watch(struct daemon *d);

/* ---- sniglue.c ---- */

/*
 * daemon_sni_start() - bind the SNI check's two netfilter queues (fw.h) on
 * d->base.  Return: 0; -errno (logged by the caller: then enforce rules'
 * connections are dropped by the kernel, log rules' pass).
 */
int daemon_sni_start(struct daemon *d);

/* daemon_sni_stop() - close them; NULL-safe state. */
void daemon_sni_stop(struct daemon *d);

/* ---- verify.c ---- */

typedef ctl_verify_done_fn daemon_verify_done_fn;

/*
 * daemon_verify_start() - start a verify run over @req's sandboxes
 * (docs/verify.md): their probes run as events of d->base, a chunk of
 * sandboxes per loop turn; @done(@arg, report) is called at the end, from
 * the loop (never from here; NULL: nobody waits).  Every run writes a
 * "verify" audit record and updates the verify metrics.  @trigger: "api"
 * or "interval" (static).  @req->names is read during the call only.
 * Return: 0; -EBUSY (a run is under way); -ENOENT (no such sandbox);
 * -ENOMEM; -EIO; @err says why.
 */
int daemon_verify_start(struct daemon *d, const struct verify_request *req, const char *trigger,
			daemon_verify_done_fn *done, void *arg, char *err, size_t errsz);

/* daemon_verify_cancel() - the run started with @arg reports to nobody. */
void daemon_verify_cancel(struct daemon *d, void *arg);

/*
 * daemon_verify_dns() - is @ev (a decision of the DNS proxy for @sb) one
 * of a verify probe's token queries?  Then it is noted as the probe's
 * evidence, and the caller neither counts nor records it.
 */
bool daemon_verify_dns(struct daemon *d, const struct sandbox *sb, const struct proxy_event *ev);

/* daemon_verify_init() - verify_interval's timer, if configured.  Return: 0; -ENOMEM. */
int daemon_verify_init(struct daemon *d);

/* daemon_verify_free() - a run under way is dropped (no report), the timer stops. */
void daemon_verify_free(struct daemon *d);

/* daemon_verify_metrics() - netd_verify_* families, to @out. */
void daemon_verify_metrics(struct daemon *d, FILE *out);

#endif
