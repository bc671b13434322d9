/*
 * reload - POST /v1/policies/reload and SIGHUP, in four steps:
 *
 *   1. load:   the whole policy_dir is parsed aside; any error rejects all;
 *   2. plan:   reload_plan.c (pure) says which sandboxes change and how;
 *   3. commit: every changed sandbox in ONE nf_tables batch, which the
 *              kernel takes whole or not at all; only then are the new
 *              policies swapped in;
 *   4. report: after the commit, pins are forgotten, live connections to
 *              removed names cut (reload.cut_removed), each change logged,
 *              audited ("policy_reload") and returned to the API client.
 *
 * "What the reload reports" lives in report_change() below.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "dnsproxy/proxy.h"
#include "netd/trail/audit.h"
#include "netd/trail/ctcut.h"
#include "netd/daemon/reload_plan.h"
#include "netd/fw.h"
#include "netd/model/pinreg.h"
#include "netd/daemon/policywatch.h"

/* 3. Commit @plan in one batch.  Return: 0; -errno (nothing changed, @err filled). */
static int reload_commit(struct daemon *d, const struct reload_plan *plan, char *err,
			 size_t errsz)
{
	struct fw_update *up = calloc(plan->n_changes ? plan->n_changes : 1, sizeof(*up));
	struct fw_sandbox *fv = calloc(plan->n_changes ? plan->n_changes : 1, sizeof(*fv));
	size_t n = 0;	/* the changes whose rules changed: the batch's */
	int r;

	if (!up || !fv) {
		free(up);
		free(fv);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct reload_change *c = &plan->changes[i];

		if (!c->rules)
			continue;	/* only its limits changed: no nf_tables rule does */
		daemon_fw_view(c->sb, &fv[n]);
		up[n] = (struct fw_update){ .sb = &fv[n], .pol = c->pol, .replace_pins = true,
					    .pins = c->keep, .n_pins = c->n_keep };
		n++;
	}
	/* CIDR sets refilled, pins replaced by what the new policy still allows. */
	r = fw_sandboxes_update(d->fw, up, n);
	if (r < 0)
		snprintf(err, errsz, "nf_tables rejected the reload: %s", fw_last_error(d->fw));
	free(up);
	free(fv);
	return r;
}

/* Cut @c's live connections to the pins the reload removed.  Return: connections cut. */
static int reload_cut(struct daemon *d, const struct reload_change *c)
{
	int n_conn = 0;

	if (!d->cfg.reload_cut_removed || !c->n_cut || d->box)	/* a box has no conntrack */
		return 0;
	for (int f = 0; f < 2; f++) {
		const struct addr *src = f == 0 ? &c->sb->addr4 : &c->sb->addr6;
		int k;

		if (!src->family)
			continue;
		k = ctcut_run(src, c->cut, c->n_cut);
		if (k == -EBUSY)
			log_warn("sandbox %s: cannot cut connections to removed names: the kernel "
				 "refuses to delete conntrack entries offloaded to the flowtable "
				 "(ctnetlink before Linux 6.4 and its backports): set "
				 "dataplane.flowtable: false",
				 c->sb->name);
		else if (k < 0)
			log_warn("sandbox %s: cannot cut connections to removed names: %s",
				 c->sb->name, strerror(-k));
		else
			n_conn += k;
	}
	return n_conn;
}

/*
 * 4. What the reload reports for one changed sandbox: a log line, an audit
 * record "policy_reload" and the same object in the API's "changed" array:
 * {sandbox, policy, deny_all, added, removed, limits ["WHAT: OLD -> NEW"],
 * pins_kept, pins_removed ["QNAME ADDR PROTO/PORT"], connections_cut}.
 * What changed is the plan's (reload_plan.c); this only says it.
 */
static void report_change(struct daemon *d, const struct reload_change *c, int n_conn,
			  json_t *report)
{
	json_t *cut_list = json_array(), *rec;
	char *a, *rm, *lim;

	for (size_t k = 0; cut_list && k < c->n_cut; k++) {
		char addr[ADDR_STRLEN], line[400];

		snprintf(line, sizeof(line), "%s %s %s/%u", c->cut[k].qname,
			 addr_format(&c->cut[k].addr, addr, sizeof(addr)),
			 c->cut[k].proto == IPPROTO_UDP ? "udp" : "tcp", c->cut[k].port);
		json_array_append_new(cut_list, json_string(line));
	}
	if (c->deny_all)
		log_warn("sandbox %s: policy %s is gone from %s; it is denied all egress",
			 c->sb->name, c->sb->policy, d->cfg.policy_dir);
	a = json_dumps(c->added, JSON_COMPACT);
	rm = json_dumps(c->removed, JSON_COMPACT);
	lim = json_dumps(c->limits, JSON_COMPACT);
	log_info("reload: sandbox %s (policy %s): added %s, removed %s, limits %s; %zu pins kept, %zu removed, %d connections cut",
		 c->sb->name, c->sb->policy, a ? a : "?", rm ? rm : "?", lim ? lim : "?",
		 c->n_keep, c->n_cut, n_conn);
	free(a);
	free(rm);
	free(lim);
	rec = json_pack("{s:s, s:s, s:b, s:O, s:O, s:O, s:I, s:o, s:I}", "sandbox", c->sb->name,
			"policy", c->sb->policy, "deny_all", c->deny_all, "added", c->added,
			"removed", c->removed, "limits", c->limits, "pins_kept", (json_int_t)c->n_keep,
			"pins_removed", cut_list, "connections_cut", (json_int_t)n_conn);
	if (rec) {
		json_array_append(report, rec);
		audit_write(d->audit, "policy_reload", rec);
	}
}

/* Swap the plan's policy set in for the loaded one. */
static void reload_swap(struct daemon *d, struct reload_plan *plan)
{
	struct policy **set;
	size_t n;

	for (size_t i = 0; i < d->n_policies; i++)
		policy_free(d->policies[i]);
	set = reload_plan_take_policies(plan, &n);
	memcpy(d->policies, set, n * sizeof(*set));
	d->n_policies = n;
	free(set);
}

int daemon_policy_reload(struct daemon *d, json_t **ret_report, char *err, size_t errsz)
{
	struct policy **newp = calloc(DAEMON_MAX_POLICIES, sizeof(*newp));
	struct reload_input in = {
		.sandboxes = d->sandboxes,
		.old = (const struct policy *const *)d->policies,
		.n_old = d->n_policies,
		.pins = d->pins,
		.now_ms = clock_mono_ms(),
		.max_policies = DAEMON_MAX_POLICIES,
	};
	struct reload_plan plan = { 0 };
	json_t *report = json_array();
	size_t n_new = 0;
	int r;

	*ret_report = NULL;
	err[0] = '\0';
	if (!newp || !report) {
		r = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	/* 1. Validate the whole new set aside; any error rejects all of it. */
	r = daemon_policies_load(&d->cfg, newp, &n_new, err, errsz);
	if (r < 0) {
		if (!err[0])
			snprintf(err, errsz, "%s: %s", d->cfg.policy_dir, strerror(-r));
		goto out;
	}
	/* The gateway's secrets, re-read (rotation); a bad one rejects the reload. */
	r = daemon_gw_creds_reload(d, err, errsz);
	if (r < 0) {
		for (size_t i = 0; i < n_new; i++)
			policy_free(newp[i]);
		goto out;
	}
	/* 2. Plan (takes the new policies). */
	r = reload_plan_build(&in, newp, n_new, &plan, err, errsz);
	if (r < 0)
		goto out;
	/* 3. Commit in one batch; only then swap the policies in. */
	r = reload_commit(d, &plan, err, errsz);
	if (r < 0)
		goto out;
	reload_swap(d, &plan);
	/* The first policy with gateway: starts the worker (not in a box). */
	if (!d->box && daemon_gw_start(d) < 0)
		log_err("gateway: not started; connections steered to it are refused");
	/* 4. After the commit: forget and cut what was removed, report; record the digests. */
	for (size_t i = 0; i < plan.n_changes; i++) {
		const struct reload_change *c = &plan.changes[i];

		pinreg_drop(d->pins, c->sb->name, c->cut, c->n_cut);
		/* The proxy re-pins on the next answer instead of trusting its cache. */
		if (c->rules)
			proxy_sandbox_reset(d->proxy, c->sb->name);
		report_change(d, c, reload_cut(d, c), report);
	}
	/* A sandbox's state file does not change with its policy's rules: one file per policy does. */
	daemon_pdigest_save_all(d);
	/* Rates and budgets as the new policies say (no nf_tables rule: not in the batch). */
	daemon_bw_sync_all(d, false);
	daemon_budget_sync_all(d);
	/* The count is the plan's: a sandbox whose rates or budgets alone changed is in it. */
	log_info("policy reload: %zu policies, %zu sandbox(es) changed", d->n_policies,
		 plan.n_changes);
	r = 0;
out:
	free(newp);
	reload_plan_free(&plan);
	if (r < 0) {
		d->reloads_rejected++;
		json_decref(report);
		log_err("policy reload rejected, the old policies stay: %s", err);
	} else {
		d->reloads++;
		if (d->trail)
			daemon_grace_update(d);
		daemon_flowtable_refresh(d);	/* an egress interface that went and came back */
		*ret_report = report;
	}
	return r;
}

/* policy_watch: a change under policy_dir is a reload (one daemon per process). */
static void on_policy_change(void *arg)
{
	struct daemon *d = arg;
	json_t *report = NULL;
	char err[1200];

	log_info("policy_watch: %s changed: reloading policies", d->cfg.policy_dir);
	/* daemon_policy_reload() logs the outcome, and keeps the old set on error. */
	if (daemon_policy_reload(d, &report, err, sizeof(err)) == 0)
		json_decref(report);
}

int daemon_policy_watch(struct daemon *d)
{
	int r = policywatch_new(d->base, d->cfg.policy_dir, on_policy_change, d, &d->pwatch);

	if (r < 0)
		log_err("policy_watch: cannot watch %s: %s", d->cfg.policy_dir, strerror(-r));
	else
		log_info("policy_watch: watching %s for changes", d->cfg.policy_dir);
	return r;
}
