/*
 * tap_driver - command-line front to netd/link/tap.c for tests/integ/microvm_boot.sh:
 *   tap_driver create IF UID[:GID] QUEUES MTU | delete IF | query IF
 * Prints "ok ..." (query: its fields) or "err ERRNAME"; exits 0 or 1.
 * Test code only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd/link/tap.h"

static int report(int r)
{
	if (r < 0) {
		const char *n = strerrorname_np(-r);

		printf("err %s\n", n ? n : "?");
		return 1;
	}
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct tap_spec s = { 0 };
	struct tap_info ti;
	int r;

	if (argc == 6 && strcmp(argv[1], "create") == 0) {
		s.ifname = argv[2];
		if (tap_owner_parse(argv[3], &s.owner, &s.group) < 0)
			return report(-EINVAL);
		s.queues = (unsigned)strtoul(argv[4], NULL, 10);
		s.mtu = (unsigned)strtoul(argv[5], NULL, 10);
		return report(tap_create(&s));
	}
	if (argc == 3 && strcmp(argv[1], "delete") == 0)
		return report(tap_delete(argv[2]));
	if (argc == 3 && strcmp(argv[1], "query") == 0) {
		r = tap_query(argv[2], &ti);
		if (r < 0)
			return report(r);
		printf("ok tap=%d persist=%d multi_queue=%d vnet_hdr=%d owner=%ld group=%ld attached=%u mtu=%u\n",
		       ti.is_tap, ti.persist, ti.multi_queue, ti.vnet_hdr,
		       ti.has_owner ? (long)ti.owner : -1L, ti.has_group ? (long)ti.group : -1L,
		       ti.attached, ti.mtu);
		return 0;
	}
	fprintf(stderr, "usage: tap_driver create IF UID[:GID] QUEUES MTU | delete IF | query IF\n");
	return 2;
}
