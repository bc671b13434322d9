/*
 * state - the state dir (STATE_DIR/sandboxes/NAME.json, one file per
 * sandbox, written atomically) and the restore at startup: every file is
 * parsed (statefile.c, pure), re-adopted into the registry, and nf_tables
 * opened with all of them in ONE reconcile batch, so there is no moment at
 * which a restored sandbox is without rules.  Also the orphan sweep:
 * netd-named veths no sandbox owns.
 */
#include "netd/daemon/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/log.h"
#include "netd/daemon.h"
#include "netd/trail/audit.h"
#include "netd/daemon/policyview.h"
#include "netd/daemon/statefile.h"
#include "netd/fw.h"
#include "netd/link/kernel.h"
#include "netd/model/rbudget.h"

static void state_path(const struct daemon *d, const char *name, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/sandboxes/%s.json", d->cfg.state_dir, name);
}

void daemon_state_remove(struct daemon *d, const char *name)
{
	char path[PATH_MAX];

	state_path(d, name, path, sizeof(path));
	unlink(path);
}

/* What @sb's state file says (the inverse of restore_one()'s apply). */
static void state_of(const struct sandbox *sb, struct statefile *sf)
{
	memset(sf, 0, sizeof(*sf));
	snprintf(sf->name, sizeof(sf->name), "%s", sb->name);
	snprintf(sf->policy, sizeof(sf->policy), "%s", sb->policy);
	snprintf(sf->netns, sizeof(sf->netns), "%s", sb->netns_path);
	sf->netns_owned = sb->netns_owned;
	snprintf(sf->ifname, sizeof(sf->ifname), "%s", sb->peer_ifname);
	sf->slot = sb->slot;
	sf->created = (int64_t)sb->created;
	/* The policy's digest is in its own file (pdigest.c), not in each sandbox's. */
	sf->ipv6 = sb->addr6.family != 0;
	sf->mode = sb->mode;
	sf->workload = sb->workload;
	sf->bw_egress_bps = sb->bw_egress_bps;
	sf->bw_ingress_bps = sb->bw_ingress_bps;
	sf->shaped_egress_bps = sb->shaped_egress_bps;
	sf->shaped_ingress_bps = sb->shaped_ingress_bps;
	for (size_t i = 0; sb->budgets && i < sb->budgets->n && i < POLICY_BUDGET_RULES; i++) {
		const struct rbudget_counter *c = &sb->budgets->c[i];
		struct statefile_budget *o = &sf->budgets[sf->n_budgets++];

		snprintf(o->rule, sizeof(o->rule), "%s", c->key);
		o->period_s = c->period_s;
		o->window_s = c->window_s < 0 ? 0 : c->window_s;
		o->used = c->used > INT64_MAX ? INT64_MAX : c->used;
	}
	if (sb->chained) {
		/* A chained attachment: its bridge port and its own addresses (not the slot's). */
		sf->kind = STATEFILE_CHAINED;
		snprintf(sf->host_ifname, sizeof(sf->host_ifname), "%s", sb->host_ifname);
		sf->addr4 = sb->addr4;
		sf->addr6 = sb->addr6;
	} else if (sb->tap) {
		/* A microVM's tap: the pool's addresses, the tap's own settings. */
		sf->kind = STATEFILE_TAP;
		snprintf(sf->host_ifname, sizeof(sf->host_ifname), "%s", sb->host_ifname);
		sf->tap_owner = sb->tap_owner;
		sf->tap_group = sb->tap_group;
		sf->tap_queues = sb->tap_queues;
		sf->mtu = sb->mtu;
	} else if (sb->own_addrs) {
		/* An IPAM plugin's addresses on netd's veth (not the slot's);
		 * a peer (a Docker endpoint): its owner's, and the peer's MAC. */
		sf->kind = sb->peer ? STATEFILE_PEER : STATEFILE_IPAM;
		memcpy(sf->mac, sb->mac, sizeof(sf->mac));
		sf->addr4 = sb->addr4;
		sf->gw4 = sb->gw4;
		sf->plen4 = sb->plen4;
		sf->addr6 = sb->addr6;
		sf->gw6 = sb->gw6;
		sf->plen6 = sb->plen6;
	}
}

int daemon_state_save(struct daemon *d, const struct sandbox *sb)
{
	char path[PATH_MAX];
	struct statefile sf;
	char *text;
	int r;

	state_of(sb, &sf);
	text = statefile_format(&sf);
	if (!text)
		return -ENOMEM;
	state_path(d, sb->name, path, sizeof(path));
	r = fs_write_atomic(path, text, strlen(text), 0644);
	free(text);
	return r;
}

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
 * Interfaces named like netd's veths ("nd" + 5 hex digits) or taps ("ndt" +
 * 4, and a tap) that no sandbox
 * owns are leftovers (a state file lost to a full disk, a crash between
 * steps): delete them, so nothing is attached to the host unmanaged.
 */
static int ifname_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void daemon_orphans_remove(struct daemon *d)
{
	char (*names)[IFNAMSIZ], (*ifbs)[IFNAMSIZ];
	const char **owned_by = NULL;	/* every sandbox's host interface and IFB, sorted */
	int n = d->lk->ops->names(d->lk, &names);
	size_t n_owned = 0, n_ifbs = 0;
	struct sandbox *sb;
	uint32_t cur = 0;

	if (n < 0) {
		log_warn("cannot list interfaces to find orphaned sandbox veths: %s", strerror(-n));
		return;
	}
	/* Every sandbox's host interface, and its IFB if its uploads are shaped. */
	owned_by = calloc(2 * SANDBOX_MAX, sizeof(*owned_by));
	ifbs = calloc(SANDBOX_MAX, sizeof(*ifbs));
	if (!owned_by || !ifbs) {
		free(owned_by);
		free(ifbs);
		free(names);
		return;	/* nothing is deleted when in doubt */
	}
	while (n_ifbs < SANDBOX_MAX && (sb = sandbox_next(d->sandboxes, &cur))) {
		owned_by[n_owned++] = sb->host_ifname;
		if (sb->shaped_egress_bps &&
		    shape_ifb_name(sb->slot, ifbs[n_ifbs], sizeof(ifbs[0])) == 0)
			owned_by[n_owned++] = ifbs[n_ifbs++];
	}
	qsort(owned_by, n_owned, sizeof(*owned_by), ifname_cmp);
	for (int i = 0; i < n; i++) {
		const char *x = names[i];
		struct tap_info ti;

		bool veth = strlen(x) == 7 && strncmp(x, SANDBOX_IFNAME_PREFIX, 2) == 0 &&
			    strspn(x + 2, "0123456789abcdef") == 5;
		/* netd's own tap names ("ndt" + 4 hex digits), if it is a tap. */
		bool tap = strlen(x) == 7 && strncmp(x, TAP_IFNAME_PREFIX, 3) == 0 &&
			   strspn(x + 3, "0123456789abcdef") == 4 && d->lk->ops->tap_query(d->lk, x, &ti) == 0 &&
			   ti.is_tap;

		bool ifb = shape_is_ifb_name(x);

		if (!veth && !tap && !ifb)
			continue;
		if (n_owned && bsearch(&x, owned_by, n_owned, sizeof(*owned_by), ifname_cmp))
			continue;
		log_warn("interface %s looks like a sandbox %s but no sandbox owns it; deleting it", x,
			 tap ? "tap" : ifb ? "IFB" : "veth");
		d->lk->ops->del(d->lk, x);
		audit_write(d->audit, "sandbox", json_pack("{s:s, s:s}", "action", "orphan-removed",
							   "host_ifname", x));
	}
	free(owned_by);
	free(ifbs);
	free(names);
}

/* Read @path whole (at most STATEFILE_MAX_LEN + 1 bytes, so the parser sees an over-long one). */
static int read_small_file(const char *path, char **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len = 0, cap = STATEFILE_MAX_LEN + 1;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < cap && (n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0) {
			int r = -errno;

			close(fd);
			free(buf);
			return r;
		}
		len += (size_t)n;
	}
	close(fd);
	*ret = buf;
	*ret_len = len;
	return 0;
}

/*
 * A registry entry for @sf (not inserted).  The registry checks what the
 * parser cannot: the slot is free, the addresses are not taken.
 * Return: 0; -errno (logged).
 */
static int state_apply(struct daemon *d, const char *path, const struct statefile *sf,
		       struct sandbox **ret)
{
	struct sandbox *sb;
	int r = sandbox_alloc(d->sandboxes, sf->name, sf->slot, &sb);

	if (r < 0) {
		log_err("%s: cannot restore sandbox: %s", path, strerror(-r));
		return r;
	}
	snprintf(sb->policy, sizeof(sb->policy), "%s", sf->policy);
	snprintf(sb->netns_path, sizeof(sb->netns_path), "%s", sf->netns);
	snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "%s", sf->ifname);
	sb->netns_owned = sf->netns_owned;
	sb->created = (time_t)sf->created;
	sb->mode = sf->mode;
	sb->workload = sf->workload;
	sb->bw_egress_bps = sf->bw_egress_bps;
	sb->bw_ingress_bps = sf->bw_ingress_bps;
	/* What a netd before this restart put on its interfaces (daemon_bw_sync_all() checks). */
	sb->shaped_egress_bps = sf->shaped_egress_bps;
	sb->shaped_ingress_bps = sf->shaped_ingress_bps;
	if (!sf->ipv6) {	/* created IPv4 only (IPv6 disabled in its netns) */
		memset(&sb->addr6, 0, sizeof(sb->addr6));
		memset(&sb->gw6, 0, sizeof(sb->gw6));
	}
	if (sf->kind != STATEFILE_POOL && sf->kind != STATEFILE_TAP) {
		r = sandbox_set_addrs(d->sandboxes, sb, &sf->addr4, &sf->addr6);
		if (r < 0) {
			log_err("%s: bad %s address state (%s); left in place", path,
				sf->kind == STATEFILE_CHAINED ? "chained attachment" :
				sf->kind == STATEFILE_PEER ? "peer" : "IPAM",
				r == -EADDRINUSE ? "another sandbox has the address" : strerror(-r));
			sandbox_release(d->sandboxes, sb);
			return r;
		}
	}
	if (sf->kind == STATEFILE_CHAINED) {
		snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s", sf->host_ifname);
		sb->chained = true;
	} else if (sf->kind == STATEFILE_TAP) {
		snprintf(sb->host_ifname, sizeof(sb->host_ifname), "%s", sf->host_ifname);
		sb->tap = true;
		sb->tap_owner = sf->tap_owner;
		sb->tap_group = sf->tap_group;
		sb->tap_queues = sf->tap_queues;
		sb->mtu = sf->mtu;
	} else if (sf->kind == STATEFILE_IPAM || sf->kind == STATEFILE_PEER) {
		sb->peer = sf->kind == STATEFILE_PEER;
		memcpy(sb->mac, sf->mac, sizeof(sb->mac));
		sb->gw4 = sf->gw4;
		sb->gw6 = sf->gw6;
		sb->plen4 = sf->plen4;
		sb->plen6 = sf->plen6;
	}
	*ret = sb;
	return 0;
}

/* The sandboxes kept for the reconcile batch. */
struct restore_set {
	struct fw_restore *keep;
	size_t n, cap;
};

/*
 * Restore the state file @path into the registry and @set.  A sandbox
 * whose interface vanished while netd was down is cleaned up (audit
 * "vanished"); one whose policy file is gone runs under deny-all.
 * Return: 0 (restored, or skipped and logged); -ENOMEM (fatal).
 */
static int restore_one(struct daemon *d, const char *path, struct restore_set *set)
{
	char err[256], dig[PVIEW_DIGEST_LEN + 8];
	const struct policy *pol;
	struct statefile sf;
	struct sandbox *sb;
	size_t len = 0;
	char *text = NULL;
	const char *was;
	bool flush;
	int r;

	r = read_small_file(path, &text, &len);
	if (r == 0)
		r = statefile_parse(text, len, &sf, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", strerror(-r));
	free(text);
	if (r < 0) {
		log_err("%s: unreadable sandbox state (%s); left in place", path, err);
		return r == -ENOMEM ? r : 0;
	}
	if (state_apply(d, path, &sf, &sb) < 0)
		return 0;
	pol = daemon_policy_find(d, sb->policy);
	/* Under which rules were its pins made?  Its policy's digest file; older netds wrote it here. */
	was = daemon_pdigest_get(d, sb->policy);
	if (!was[0])
		was = sf.digest;
	flush = !was[0] || !pol || strcmp(was, pview_digest(pol, dig, sizeof(dig))) != 0;
	/* A tap outlives netd but not a reboot: made again if it is gone. */
	if (sb->tap && daemon_tap_restore(d, sb) < 0) {
		log_err("sandbox %s: cannot restore its tap %s; left in place for the next start",
			sb->name, sb->host_ifname);
		sandbox_release(d->sandboxes, sb);
		return 0;
	}
	if (d->lk->ops->exists(d->lk, sb->host_ifname) != 1) {
		log_warn("sandbox %s: its interface %s vanished while netd was down (netns %s gone?); cleaning up",
			 sb->name, sb->host_ifname, sb->netns_path);
		daemon_sandbox_teardown(d, sb);
		daemon_audit_sandbox(d, sb, "vanished");
		daemon_vanished_note(d, sb);
		sandbox_release(d->sandboxes, sb);
		return 0;
	}
	if (!pol) {
		pol = daemon_policy_deny_all(d, sb->policy);
		log_warn("sandbox %s: policy %s is gone; it is denied all egress", sb->name,
			 sb->policy);
	}
	if (!pol || (set->n == set->cap &&
		     !(set->keep = reallocarray(set->keep, set->cap = set->cap ? 2 * set->cap : 64,
						sizeof(*set->keep))))) {
		log_err("sandbox %s: out of memory; left in place for the next start", sb->name);
		sandbox_release(d->sandboxes, sb);
		return -ENOMEM;
	}
	netns_identity(sb);
	daemon_budget_restore(d, sb, pol, &sf);	/* its counters, as the file had them */
	sandbox_insert(d->sandboxes, sb);
	daemon_fw_view(sb, &set->keep[set->n].sb);
	set->keep[set->n].pol = pol;
	/* A rule closed by its budget: which pins its names held is not known after a
	 * restart, so none is kept (the open rules' names pin again on their next answer). */
	set->keep[set->n].flush_pins = flush || rbudget_any_closed(sb->budgets);
	set->n++;
	return 0;
}

int daemon_state_restore(struct daemon *d, const struct fw_config *fc)
{
	struct fw_reconcile_info info;
	struct restore_set set = { 0 };
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dh;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s/sandboxes", d->cfg.state_dir);
	dh = opendir(dir);
	while (dh && r == 0 && (e = readdir(dh))) {
		char path[PATH_MAX + 256];
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		r = restore_one(d, path, &set);
	}
	if (r < 0)
		goto out;
	if (d->box) {	/* the daemon in a box: its nf_tables stand-in (netd/daemon.h) */
		struct fw_kernel *k = NULL;

		r = d->box->fw_kernel_new(d->box->ctx, &k);
		if (r == 0)
			r = fw_open_reconcile_with(fc, k, set.keep, set.n, &d->fw, &info);
	} else {
		r = fw_open_reconcile(fc, set.keep, set.n, &d->fw, &info);
	}
	if (fc->flowtable == FW_FLOWTABLE_ON && (r == -EOPNOTSUPP || r == -ENODEV)) {
		log_err("dataplane.flowtable: true, but %s; set it to auto to run without the "
			"flowtable fast path", r == -ENODEV ? "netd knows no egress interface "
			"(egress_interface, or a default route) to put in it" :
			"this kernel has no nftables flowtables (CONFIG_NF_FLOW_TABLE_INET, "
			"CONFIG_NFT_FLOW_OFFLOAD)");
		goto out;
	}
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
	for (size_t i = 0; i < set.n; i++) {
		struct fw_restore *k = &set.keep[i];
		struct sandbox *sb = sandbox_find(d->sandboxes, k->sb.name);

		log_info("sandbox %s restored (policy %s%s)", k->sb.name, k->pol->name,
			 !info.kept ? ", pins dropped: table replaced" :
			 k->flush_pins && rbudget_any_closed(sb ? sb->budgets : NULL) ?
				", pins dropped: a rule is closed by its budget" :
			 k->flush_pins ? ", pins dropped: the policy changed while netd was down" :
					 ", pins kept");
		if (sb && sb->tap)	/* its rules are in: now the tap may carry traffic */
			daemon_tap_up(d, sb);
	}
	/* Rates as they are to be now (the policy may have changed, a tap been made again). */
	daemon_bw_sync_all(d, true);
	d->n_restored = set.n;
	daemon_pdigest_save_all(d);	/* the rules just applied to them */
out:
	if (dh)
		closedir(dh);
	free(set.keep);
	return r;
}
