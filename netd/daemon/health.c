/*
 * health - what netd status must say besides "ok": that something outside
 * netd stops the sandboxes, that a sandbox is gone and nothing took its
 * place, or that the gateway is down.  Three kinds, each with what to do
 * about it:
 *
 *   forward blockers: another table's forward-hook chain that drops what
 *     netd accepted (netd/fw.h fw_forward_blockers(): Docker's FORWARD
 *     policy DROP, ufw, firewalld's final reject).  Read from the kernel
 *     when asked: for each status request and verify run, and for metrics
 *     at most every HEALTH_RECHECK_MS (scrapes come often); a change is
 *     logged once.
 *   vanished, not re-attached: a sandbox attached by PID or netns path whose
 *     netns went away (the container stopped, restarted, was removed).
 *     netd does not follow a container to its next netns; it keeps the last
 *     DAEMON_VANISHED_KEEP such sandboxes until one of that name is created
 *     again, says so in status and puts "reattached": false on the audit
 *     record.
 *
 *   the gateway worker: wanted (a policy has a gateway: rule) and not
 *     running, other than in its first pause before a restart
 *     (gwglue.c daemon_gw_trouble()).
 *
 * GET /v1/status gets "status": "degraded" and "warnings" (one sentence
 * each) while any of them is there.
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>

#include "common/clock.h"
#include "common/log.h"
#include "netd/common/metrics.h"
#include "netd/fw.h"

#define HEALTH_RECHECK_MS 2000	/* a metrics scrape reads the kernel at most this often */

bool daemon_sandbox_by_path(const struct sandbox *sb)
{
	return !sb->netns_owned && !sb->chained && !sb->tap && !sb->peer && sb->netns_path[0];
}

const char *daemon_vanished_why(void)
{
	return "its network namespace is gone (the container stopped, restarted or was removed) and "
	       "netd does not follow a namespace attached by PID or path: it is not re-attached. "
	       "Attach the new one (netd sandbox create --pid), or run the container on a netd "
	       "Docker network, whose driver gives every start its sandbox (docs/docker.md)";
}

void daemon_vanished_note(struct daemon *d, const struct sandbox *sb)
{
	struct vanished_rec *v;

	if (!daemon_sandbox_by_path(sb))
		return;
	daemon_vanished_forget(d, sb->name);	/* one entry per name: the latest */
	if (d->n_vanished_recent == DAEMON_VANISHED_KEEP) {
		/* the oldest goes; counted, never silent */
		memmove(&d->vanished_recent[0], &d->vanished_recent[1],
			(DAEMON_VANISHED_KEEP - 1) * sizeof(d->vanished_recent[0]));
		d->n_vanished_recent--;
		d->vanished_recent_dropped++;
	}
	v = &d->vanished_recent[d->n_vanished_recent++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", sb->name);
	snprintf(v->policy, sizeof(v->policy), "%s", sb->policy);
	snprintf(v->netns, sizeof(v->netns), "%s", sb->netns_path);
	snprintf(v->host_ifname, sizeof(v->host_ifname), "%s", sb->host_ifname);
	v->workload = sb->workload;
	v->at = time(NULL);
}

void daemon_vanished_forget(struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_vanished_recent; i++) {
		if (strcmp(d->vanished_recent[i].name, name) != 0)
			continue;
		memmove(&d->vanished_recent[i], &d->vanished_recent[i + 1],
			(d->n_vanished_recent - i - 1) * sizeof(d->vanished_recent[0]));
		d->n_vanished_recent--;
		return;
	}
}

static const char *family_name(uint8_t f)
{
	return f == NFPROTO_IPV4 ? "ip" : f == NFPROTO_IPV6 ? "ip6" : "inet";
}

/* @b in one sentence, with the fix. */
static void blocker_message(const struct fw_blocker *b, char *buf, size_t sz)
{
	const char *ipt = b->family == NFPROTO_IPV6 ? "ip6tables" : "iptables";
	const char *way = b->egress && b->reply ? "both ways" : b->egress ?
			  "what sandboxes send" : "what comes back to sandboxes";
	bool iptables_like = b->family != NFPROTO_INET && strcmp(b->table, "filter") == 0 &&
			     strcmp(b->chain, "FORWARD") == 0;
	int n;

	n = snprintf(buf, sz, "forward chain %s %s %s (priority %d%s) %s the sandboxes' traffic "
		     "netd accepted (%s): names resolve but nothing connects. ",
		     family_name(b->family), b->table, b->chain, (int)b->priority,
		     b->policy_drop ? ", policy drop" : "", b->drops ? "drops" : "may drop", way);
	if (n < 0 || (size_t)n >= sz)
		return;
	if (iptables_like)
		snprintf(buf + n, sz - (size_t)n,
			 "Let netd's interfaces through: %s -I DOCKER-USER -i nd+ -j ACCEPT and "
			 "%s -I DOCKER-USER -o nd+ -j ACCEPT (Docker's chain for your rules%s; "
			 "without Docker: %s -I FORWARD -i nd+ -j ACCEPT, and -o nd+) "
			 "(docs/install.md#beside-dockers-firewallds-and-ufws-forward-chains)",
			 ipt, ipt, b->docker_user ? "" : ": -N DOCKER-USER and -I FORWARD -j "
			 "DOCKER-USER first if Docker has not made it yet", ipt);
	else
		snprintf(buf + n, sz - (size_t)n,
			 "Let netd's interfaces through: nft insert rule %s %s %s iifname \"nd*\" "
			 "accept, and the same with oifname "
			 "(docs/install.md#beside-dockers-firewallds-and-ufws-forward-chains)",
			 family_name(b->family), b->table, b->chain);
}

/* Why the last read could not judge (d->blockers_err set). */
static const char *check_error(const struct daemon *d)
{
	return d->blockers_err == -ENODEV ? "netd knows no egress interface" :
					    strerror(-d->blockers_err);
}

/* Two reads found the same blockers (for logging a change once). */
static bool blockers_same(const struct fw_blocker *a, size_t na, const struct fw_blocker *b,
			  size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].family != b[i].family || a[i].drops != b[i].drops ||
		    a[i].egress != b[i].egress || a[i].reply != b[i].reply ||
		    strcmp(a[i].table, b[i].table) != 0 || strcmp(a[i].chain, b[i].chain) != 0)
			return false;
	return true;
}

void daemon_health_refresh(struct daemon *d, bool force)
{
	struct fw_blocker now[FW_BLOCKERS_MAX];
	uint64_t t = clock_mono_ms();
	size_t n = 0;
	char msg[1024];
	int r;

	if (!d->fw || (!force && d->blockers_read && t - d->blockers_at_ms < HEALTH_RECHECK_MS))
		return;
	d->blockers_at_ms = t;
	/* Without the egress interface's name no verdict can be told apart from a guess. */
	r = !d->egress_ifname[0] ? -ENODEV :
	    fw_forward_blockers(d->fw, d->egress_ifname, d->cfg.pool6_enabled, now, FW_BLOCKERS_MAX,
				&n);
	if (r < 0) {
		bool first = d->blockers_err != r;

		d->blockers_err = r;
		if (first)
			log_warn("cannot judge other tables' forward chains: %s", check_error(d));
		return;
	}
	d->blockers_err = 0;
	if (!d->blockers_read || !blockers_same(now, n, d->blockers, d->n_blockers)) {
		for (size_t i = 0; i < n; i++) {
			blocker_message(&now[i], msg, sizeof(msg));
			log_warn("%s", msg);
		}
		if (!n && d->blockers_read && d->n_blockers)
			log_info("forward chains: no other table stops the sandboxes' traffic any more");
	}
	memcpy(d->blockers, now, n * sizeof(now[0]));
	d->n_blockers = n;
	d->blockers_read = true;
}

const char *daemon_health_forward(struct daemon *d, bool fresh)
{
	const struct fw_blocker *b = d->blockers;

	daemon_health_refresh(d, fresh);
	if (d->blockers_err)
		snprintf(d->forward_detail, sizeof(d->forward_detail),
			 "cannot judge other tables' forward chains: %s", check_error(d));
	else if (!d->n_blockers)
		d->forward_detail[0] = '\0';
	else
		snprintf(d->forward_detail, sizeof(d->forward_detail),
			 "forward chain %s %.48s %.48s %s what netd accepts%s (netd status says how to "
			 "let it through)", family_name(b->family), b->table, b->chain,
			 b->drops ? "drops" : "may drop",
			 d->n_blockers > 1 ? ", and others" : "");
	return d->forward_detail;
}

void daemon_health_json(struct daemon *d, json_t *o)
{
	json_t *warn = json_array(), *fb = json_array(), *van = json_array();
	char msg[1024], when[32];

	if (!warn || !fb || !van) {
		json_decref(warn);
		json_decref(fb);
		json_decref(van);
		return;
	}
	daemon_health_refresh(d, true);	/* an operator asks: what is there now */
	for (size_t i = 0; i < d->n_blockers; i++) {
		const struct fw_blocker *b = &d->blockers[i];

		blocker_message(b, msg, sizeof(msg));
		json_array_append_new(warn, json_string(msg));
		json_array_append_new(fb, json_pack("{s:s, s:s, s:s, s:i, s:b, s:s, s:b, s:b}",
						    "family", family_name(b->family), "table", b->table,
						    "chain", b->chain, "priority", (int)b->priority,
						    "policy_drop", b->policy_drop, "verdict",
						    b->drops ? "drops" : "may-drop", "egress", b->egress,
						    "reply", b->reply));
	}
	for (size_t i = 0; i < d->n_vanished_recent; i++) {
		const struct vanished_rec *v = &d->vanished_recent[i];
		struct tm tm;
		json_t *e;

		gmtime_r(&v->at, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(msg, sizeof(msg), "sandbox %s (policy %s, netns %s) vanished at %s: %s",
			 v->name, v->policy, v->netns, when, daemon_vanished_why());
		json_array_append_new(warn, json_string(msg));
		e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "sandbox", v->name, "policy",
			      v->policy, "netns", v->netns, "host_ifname", v->host_ifname, "at", when,
			      "reattached", 0);
		if (e)
			workload_json(&v->workload, e, false);
		json_array_append_new(van, e);
	}
	if (daemon_gw_trouble(d, msg, sizeof(msg)))
		json_array_append_new(warn, json_string(msg));
	json_object_set_new(o, "status", json_string(json_array_size(warn) ? "degraded" : "ok"));
	json_object_set_new(o, "warnings", warn);
	json_object_set_new(o, "forward_blockers", fb);
	if (d->blockers_err)
		json_object_set_new(o, "forward_check_error", json_string(check_error(d)));
	json_object_set_new(o, "vanished", van);
	json_object_set_new(o, "vanished_not_listed", json_integer((json_int_t)d->vanished_recent_dropped));
}

void daemon_health_metrics(struct daemon *d, FILE *out)
{
	daemon_health_refresh(d, false);
	metrics_family(out, "netd_forward_blockers", "gauge",
		       "Forward-hook chains of other tables that drop (or may drop) what netd accepted.");
	metrics_u64(out, "netd_forward_blockers", NULL, d->n_blockers);
	metrics_family(out, "netd_forward_blocker", "gauge",
		       "1 per forward-hook chain of another table that stops the sandboxes' traffic.");
	for (size_t i = 0; i < d->n_blockers; i++) {
		const struct fw_blocker *b = &d->blockers[i];
		const char *l[] = { "family", family_name(b->family), "table", b->table, "chain",
				    b->chain, "verdict", b->drops ? "drops" : "may-drop", NULL };

		metrics_u64(out, "netd_forward_blocker", l, 1);
	}
	metrics_family(out, "netd_sandboxes_vanished_unattached", "gauge",
		       "Sandboxes attached by PID or netns path whose netns went away, not re-attached.");
	metrics_u64(out, "netd_sandboxes_vanished_unattached", NULL, d->n_vanished_recent);
}
