/*
 * vanish - sandboxes whose interface disappears while netd runs: the netns
 * died under them (`docker rm -f` of a container attached by --pid or
 * --netns, `ip netns del` of an attached one), which takes the veth with
 * it, or another plugin deleted a chained attachment's bridge port.  Each
 * is retired like a delete (rules, pins, state), audited as "vanished".
 * The event only says "look": the interface's absence is checked again
 * before anything is removed, so a name reused since is never retired.
 */
#include "netd/daemon/internal.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "netd/link/kernel.h"

/* Retire @sb if its interface is really gone.  Return: true if retired. */
static bool vanish_check(struct daemon *d, struct sandbox *sb)
{
	char name[SANDBOX_NAME_MAX + 1], ifname[16];

	if (d->lk->ops->exists(d->lk, sb->host_ifname) != 0)
		return false;	/* there (or cannot tell: keep it, fail closed) */
	snprintf(name, sizeof(name), "%s", sb->name);
	snprintf(ifname, sizeof(ifname), "%s", sb->host_ifname);
	log_warn("sandbox %s: its interface %s vanished (netns %s gone?); retiring it%s%s", name,
		 ifname, sb->netns_path, daemon_sandbox_by_path(sb) ? ". " : "",
		 daemon_sandbox_by_path(sb) ? daemon_vanished_why() : "");
	daemon_vanished_note(d, sb);	/* before the retire frees it */
	if (daemon_sandbox_retire(d, name, "vanished") == 0)
		d->vanished++;
	return true;
}

static void on_deleted(void *ctx, const char *ifname)
{
	struct daemon *d = ctx;
	struct sandbox *sb;
	uint32_t cur = 0;

	while ((sb = sandbox_next(d->sandboxes, &cur)))
		if (strcmp(sb->host_ifname, ifname) == 0) {
			vanish_check(d, sb);
			return;
		}
}

static void on_lost(void *ctx)
{
	struct daemon *d = ctx;
	struct sandbox *sb;
	uint32_t cur = 0;

	log_warn("link events were lost; checking every sandbox's interface");
	/* A retired sandbox leaves its slot; the cursor moves on past it. */
	while ((sb = sandbox_next(d->sandboxes, &cur)))
		vanish_check(d, sb);
}

static const struct linkwatch_ops vanish_ops = {
	.deleted = on_deleted,
	.lost = on_lost,
};

int daemon_vanish_watch(struct daemon *d)
{
	return d->lk->ops->watch(d->lk, d->base, &vanish_ops, d, &d->linkwatch);
}
