/*
 * link_driver - command-line front to netd/link/link.c and netd/link/nsexec.c for
 * tests/integ/link_netlink.sh.  Prints "ok ..." or "err ERRNAME" and exits
 * 0 or 1 (exec: the command's own status).  Test code only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/addr.h"
#include "netd/link/forwarding.h"
#include "netd/link/link.h"
#include "netd/link/nsexec.h"

static int report(int r)
{
	if (r < 0) {
		const char *n = strerrorname_np(-r);
		printf("err %s\n", n ? n : "?");
		return 1;
	}
	printf("ok %d\n", r);
	return 0;
}

/* "ADDR/LEN" with host bits allowed (an interface address), or "-". */
static int parse_ifaddr(const char *s, struct prefix *p)
{
	char buf[PREFIX_STRLEN];
	char *slash, *end;
	long plen;

	memset(p, 0, sizeof(*p));
	if (strcmp(s, "-") == 0)
		return 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if (addr_parse(buf, &p->addr) < 0)
		return -EINVAL;
	errno = 0;
	plen = strtol(slash + 1, &end, 10);
	if (errno || *end || plen < 0 || (size_t)plen > addr_len(p->addr.family) * 8)
		return -EINVAL;
	p->plen = (uint8_t)plen;
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: link_driver netns-create NAME | netns-delete NAME | netns-open PATH\n"
		"       | veth HOSTIF PEERIF NETNS_PATH HOST4 PEER4 HOST6 PEER6 ('-' = none)\n"
		"       | delete IF | exists IF | default-route | local-addrs | names\n"
		"       | forwarding 0|1 | exec NETNS_PATH NAME|- -- CMD...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return usage();
	cmd = argv[1];

	if (strcmp(cmd, "netns-create") == 0 && argc == 3)
		return report(link_netns_create(argv[2]));
	if (strcmp(cmd, "netns-delete") == 0 && argc == 3)
		return report(link_netns_delete(argv[2]));
	if (strcmp(cmd, "netns-open") == 0 && argc == 3) {
		int fd = link_netns_open(argv[2]);

		if (fd >= 0)
			close(fd);
		return report(fd < 0 ? fd : 0);
	}
	if (strcmp(cmd, "veth") == 0 && argc == 9) {
		struct link_veth v = { .host_ifname = argv[2], .peer_ifname = argv[3] };
		int r;

		if (parse_ifaddr(argv[5], &v.host4) < 0 || parse_ifaddr(argv[6], &v.peer4) < 0 ||
		    parse_ifaddr(argv[7], &v.host6) < 0 || parse_ifaddr(argv[8], &v.peer6) < 0)
			return usage();
		v.netns_fd = link_netns_open(argv[4]);
		if (v.netns_fd < 0)
			return report(v.netns_fd);
		r = link_veth_setup(&v);
		close(v.netns_fd);
		return report(r);
	}
	if (strcmp(cmd, "delete") == 0 && argc == 3)
		return report(link_delete(argv[2]));
	if (strcmp(cmd, "exists") == 0 && argc == 3)
		return report(link_exists(argv[2]));
	if (strcmp(cmd, "default-route") == 0 && argc == 2) {
		char name[16];
		int r = link_default_route_ifname(name, sizeof(name));

		if (r == 0)
			printf("ifname %s\n", name);
		return report(r);
	}
	if (strcmp(cmd, "local-addrs") == 0 && argc == 2) {
		struct prefix *out;
		char buf[PREFIX_STRLEN];
		int r, i;

		r = link_local_addrs(&out);
		for (i = 0; i < r; i++)
			printf("addr %s\n", prefix_format(&out[i], buf, sizeof(buf)));
		free(out);
		return report(r);
	}
	if (strcmp(cmd, "names") == 0 && argc == 2) {
		char (*names)[16];
		int r = link_names(&names);

		for (int i = 0; i < r; i++)
			printf("name %s\n", names[i]);
		free(names);
		return report(r);
	}
	if (strcmp(cmd, "forwarding") == 0 && argc == 3)
		return report(forwarding_enable(atoi(argv[2])));
	if (strcmp(cmd, "exec") == 0 && argc >= 6 && strcmp(argv[4], "--") == 0) {
		const char *name = strcmp(argv[3], "-") == 0 ? NULL : argv[3];

		int r = nsexec_run(argv[2], name, NULL, NULL, &argv[5]);

		return r >= 0 ? r : report(r);	/* the command's status, or why it did not run */
	}
	return usage();
}
