/*
 * attrib - whose sandbox a logged packet came from (attrib.h): its incoming
 * interface, cached by ifindex; behind a bridge, its bridge-checked source.
 */
#include "netd/trail/attrib.h"

#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd/fw.h"
#include "netd/model/sandbox.h"
#include "netd/trail/ctmsg.h"

#define ATTRIB_IFCACHE 1024	/* interfaces remembered; direct-mapped by ifindex */
#define SLOT_NONE      (-1)	/* the interface is no sandbox's */

struct attrib {
	struct sandbox_table *sbs;
	struct {
		uint32_t ifindex;	/* 0: empty */
		int32_t slot;		/* SLOT_NONE: no sandbox's */
		size_t count;		/* SLOT_NONE: sandbox_count() then; a new
					 * sandbox (a tap) may have made it one's */
	} ifcache[ATTRIB_IFCACHE];
};

int attrib_new(struct sandbox_table *sbs, struct attrib **ret)
{
	struct attrib *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->sbs = sbs;
	*ret = a;
	return 0;
}

void attrib_free(struct attrib *a)
{
	free(a);
}

void attrib_forget(struct attrib *a)
{
	if (a)
		memset(a->ifcache, 0, sizeof(a->ifcache));
}

/* The slot of the sandbox whose interface @name is, or SLOT_NONE. */
static int32_t slot_of_ifname(const struct attrib *a, const char *name)
{
	const size_t plen = strlen(SANDBOX_IFNAME_PREFIX);
	uint32_t cur = 0;
	struct sandbox *sb;
	unsigned int slot;
	char extra;

	/* netd's host-side veths are "nd%05x" of the slot (fw/sandbox.c). */
	if (strncmp(name, SANDBOX_IFNAME_PREFIX, plen) == 0 &&
	    sscanf(name + plen, "%x%c", &slot, &extra) == 1 && slot < SANDBOX_MAX)
		return (int32_t)slot;
	/* Any other name (a microVM's tap, ndtXXXX or its own): the sandbox
	 * whose tap it is. */
	while ((sb = sandbox_next(a->sbs, &cur)) && strcmp(sb->host_ifname, name) != 0)
		;
	return sb && sb->tap ? (int32_t)sb->slot : SLOT_NONE;
}

/* The slot of the sandbox whose interface @ifindex is, or SLOT_NONE; cached. */
static int32_t slot_of_ifindex(struct attrib *a, uint32_t ifindex)
{
	size_t i = ifindex % ATTRIB_IFCACHE;
	char name[IF_NAMESIZE];
	int32_t slot;

	if (!ifindex)
		return SLOT_NONE;
	if (a->ifcache[i].ifindex == ifindex &&
	    (a->ifcache[i].slot != SLOT_NONE || a->ifcache[i].count == sandbox_count(a->sbs)))
		return a->ifcache[i].slot;
	if (!if_indextoname(ifindex, name))
		return SLOT_NONE;	/* gone already: not remembered */
	slot = slot_of_ifname(a, name);
	a->ifcache[i].ifindex = ifindex;
	a->ifcache[i].slot = slot;
	a->ifcache[i].count = sandbox_count(a->sbs);
	return slot;
}

struct sandbox *attrib_sandbox(struct attrib *a, const struct ct_logpkt *p)
{
	int32_t slot = slot_of_ifindex(a, p->indev);
	struct sandbox *sb;

	if (slot != SLOT_NONE)
		return sandbox_by_slot(a->sbs, (uint32_t)slot);
	if (!(p->mark & FW_CHAINED_MARK))
		return NULL;
	sb = sandbox_by_addr(a->sbs, &p->src);
	return sb && sb->chained ? sb : NULL;
}
