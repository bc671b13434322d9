/*
 * test_userns_link - netd's link edge (netd/link/link.c, rtnl.c,
 * forwarding.c, linkwatch.c) on a real kernel without root: the test
 * process makes a user namespace of its own with a network and a mount
 * namespace (as `unshare -Urnm` does; as root it first becomes nobody),
 * where it holds CAP_NET_ADMIN over a private network stack and mounts a
 * tmpfs on /run for /run/netns.  Nothing it does is seen outside: not the
 * host's links, nor its /run.  Where the kernel allows no user namespace
 * (a sysctl, a container's seccomp) the test fails and says so: Debian 12
 * allows them, and a skip would hide it.  (Taps need /dev/net/tun, root's
 * alone: test_tap and the root integration tests cover tap.c.)
 *
 * Asserted through the kernel's own view (if_nametoindex(), /proc/sys,
 * /run/netns) and link.c's readers against what its writers did.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "common/addr.h"
#include "netd/link/forwarding.h"
#include "netd/link/link.h"
#include "netd/link/linkwatch.h"

#define NOBODY 65534

static bool in_userns;	/* group_setup() made it */

/* Write @text to /proc/self/@file.  Return: 0; -errno. */
static int proc_write(const char *file, const char *text)
{
	char path[64];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = -errno;
	close(fd);
	return r;
}

/* The first line of @path into @buf; "" if it cannot be read. */
static const char *first_line(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)sz, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

/*
 * This process into a user namespace of its own (uid and gid 0 inside
 * mapped to its own outside), with its own network and mount namespaces,
 * /run a fresh tmpfs.  Return: 0; -errno (the kernel allows none).
 */
static int enter_userns(void)
{
	char map[64];
	uid_t uid;
	gid_t gid;

	/* As the box's tests: root becomes nobody unless NETD_BOX_AS_ROOT is set. */
	if (geteuid() == 0 && !getenv("NETD_BOX_AS_ROOT") &&
	    (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0))
		return -errno;
	/* A process that changed its uid is not dumpable: /proc/self/uid_map would be root's. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -errno;
	uid = geteuid();
	gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0)
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (proc_write("uid_map", map) < 0 || proc_write("setgroups", "deny") < 0)
		return -EPERM;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (proc_write("gid_map", map) < 0)
		return -EPERM;
	/* Nothing mounted here propagates back; /run is ours alone. */
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0)
		return -errno;
	return 0;
}

/* An interface address @a/@plen (host bits set, as struct link_veth takes it). */
static void ifaddr(const char *a, uint8_t plen, struct prefix *p)
{
	assert_int_equal(addr_parse(a, &p->addr), 0);
	p->plen = plen;
}

/* Does link_local_addrs() list @pfx (as prefix_format() writes it)? */
static bool local_addr(const char *pfx)
{
	struct prefix *addrs = NULL;
	int n = link_local_addrs(&addrs);
	bool seen = false;

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		char s[PREFIX_STRLEN];

		prefix_format(&addrs[i], s, sizeof(s));
		seen |= strcmp(s, pfx) == 0;
	}
	free(addrs);
	return seen;
}

static int group_setup(void **state)
{
	int r = enter_userns();

	in_userns = r == 0;
	if (!in_userns)	/* Debian 12 allows them: a skip here would hide a broken setup */
		fprintf(stderr, "test_userns_link: no user namespace here (%s): failed\n",
			strerror(-r));
	return in_userns ? 0 : -1;
}

static void need_userns(void)
{
	if (!in_userns)
		fail_msg("no user namespace");
}

/* The forwarding sysctls of this netns (netd/link/forwarding.c). */
static void test_forwarding(void **state)
{
	char v[16];

	need_userns();
	assert_string_equal(first_line("/proc/sys/net/ipv4/ip_forward", v, sizeof(v)), "0");
	assert_int_equal(forwarding_enable(0), 0);
	assert_string_equal(first_line("/proc/sys/net/ipv4/ip_forward", v, sizeof(v)), "1");
	assert_int_equal(forwarding_enable(1), 0);
	assert_string_equal(first_line("/proc/sys/net/ipv6/conf/all/forwarding", v, sizeof(v)),
			    "1");
}

/*
 * A named netns and a veth into it, as a sandbox's create makes them; the
 * readers see what the writers did; delete leaves nothing.
 */
static void test_netns_veth(void **state)
{
	struct link_veth v = { .host_ifname = "utv0", .peer_ifname = "eth0" };
	char (*names)[16] = NULL, first[16] = "", gw[16];
	struct addr gws[4];
	bool seen_lo = false, seen_v = false;
	int fd, n;

	need_userns();
	assert_int_equal(link_netns_create("ut1"), 0);
	assert_int_equal(access("/run/netns/ut1", F_OK), 0);
	assert_int_equal(link_netns_create("ut1"), -EEXIST);
	fd = link_netns_open("/run/netns/ut1");
	assert_true(fd >= 0);
	assert_int_equal(link_netns_open("/run"), -EINVAL);	/* not a netns */
	assert_int_equal(link_netns_other_links(fd, first, sizeof(first)), 0);	/* only lo */

	v.netns_fd = fd;
	ifaddr("10.87.0.1", 30, &v.host4);
	ifaddr("10.87.0.2", 30, &v.peer4);
	assert_int_equal(link_veth_setup(&v), 0);
	assert_int_equal(link_veth_setup(&v), -EEXIST);
	assert_int_equal(link_exists("utv0"), 1);
	assert_true(if_nametoindex("utv0") > 0);	/* the kernel's own answer (SIOCGIFINDEX) */
	assert_int_equal(link_exists("eth0"), 0);	/* the peer went into ut1 */
	assert_int_equal(link_netns_other_links(fd, first, sizeof(first)), 1);
	assert_string_equal(first, "eth0");

	n = link_names(&names);
	assert_true(n >= 2);
	for (int i = 0; i < n; i++) {
		seen_lo |= strcmp(names[i], "lo") == 0;
		seen_v |= strcmp(names[i], "utv0") == 0;
	}
	free(names);
	assert_true(seen_lo && seen_v);
	assert_true(local_addr("10.87.0.1/32"));
	/* This netns has no default route (the sandbox's has, via the host end). */
	assert_int_equal(link_default_route_ifname(gw, sizeof(gw)), -ENOENT);
	assert_int_equal(link_default_gateways(gws, 4), 0);

	assert_int_equal(link_delete("utv0"), 0);
	assert_int_equal(link_exists("utv0"), 0);
	assert_int_equal(link_delete("utv0"), 0);	/* missing: not an error */
	assert_int_equal(link_netns_other_links(fd, first, sizeof(first)), 0);	/* the peer went too */
	close(fd);
	assert_int_equal(link_netns_delete("ut1"), 0);
	assert_int_equal(access("/run/netns/ut1", F_OK), -1);
	assert_int_equal(link_netns_delete("ut1"), 0);
}

/*
 * A veth whose peer stays here (link_veth.peer_here), as a Docker endpoint
 * is made: the host end up with its point-to-point address, the peer here
 * with the MAC asked for; moved into a netns (as Docker moves it) it is
 * gone from here and the host end stays; deleting the host end takes it.
 */
static void test_peer_here(void **state)
{
	static const uint8_t mac[6] = { 0x02, 0x42, 0xac, 0x12, 0x00, 0x02 };
	struct link_veth v = { .host_ifname = "utp0", .peer_ifname = "ndp00001",
			       .netns_fd = -1, .peer_here = true, .peer_mac = mac };
	char first[16] = "", line[512];
	FILE *pipe;
	int fd;

	need_userns();
	ifaddr("172.18.0.1", 32, &v.host4);
	ifaddr("172.18.0.2", 16, &v.peer4);
	v.peer_mac = NULL;
	assert_int_equal(link_veth_setup(&v), -EINVAL);	/* a peer here needs its MAC */
	v.peer_mac = mac;
	assert_int_equal(link_veth_setup(&v), 0);
	assert_int_equal(link_exists("utp0"), 1);
	assert_int_equal(link_exists("ndp00001"), 1);	/* left here, for its owner */
	assert_true(local_addr("172.18.0.1/32"));
	/* (this netns's /sys is not mounted here: ip(8) reads it over rtnetlink) */
	pipe = popen("ip -o link show dev ndp00001", "r");
	assert_non_null(pipe);
	assert_non_null(fgets(line, sizeof(line), pipe));
	pclose(pipe);
	assert_non_null(strstr(line, "link/ether 02:42:ac:12:00:02"));
	assert_non_null(strstr(line, "state DOWN"));
	assert_int_equal(link_veth_setup(&v), -EEXIST);

	assert_int_equal(link_netns_create("ut3"), 0);
	assert_int_equal(system("ip link set dev ndp00001 netns ut3"), 0);	/* as Docker does */
	assert_int_equal(link_exists("ndp00001"), 0);
	assert_int_equal(link_exists("utp0"), 1);
	fd = link_netns_open("/run/netns/ut3");
	assert_true(fd >= 0);
	assert_int_equal(link_netns_other_links(fd, first, sizeof(first)), 1);
	assert_string_equal(first, "ndp00001");
	assert_int_equal(link_delete("utp0"), 0);
	assert_int_equal(link_netns_other_links(fd, first, sizeof(first)), 0);	/* the peer went too */
	close(fd);
	assert_int_equal(link_netns_delete("ut3"), 0);
}

struct watched {
	struct event_base *base;
	char gone[16];
};

static void on_deleted(void *ctx, const char *ifname)
{
	struct watched *w = ctx;

	if (strcmp(ifname, "utw0") == 0) {
		snprintf(w->gone, sizeof(w->gone), "%s", ifname);
		event_base_loopbreak(w->base);
	}
}

static void on_lost(void *ctx)
{
}

/* A veth deleted: linkwatch says so, by name (netd/link/linkwatch.c). */
static void test_linkwatch(void **state)
{
	static const struct linkwatch_ops ops = { on_deleted, on_lost };
	struct link_veth v = { .host_ifname = "utw0", .peer_ifname = "eth0" };
	struct watched w = { 0 };
	struct linkwatch *lw = NULL;
	struct timeval bound = { 30, 0 };	/* a bound, not a timing */

	need_userns();
	assert_int_equal(link_netns_create("ut2"), 0);
	v.netns_fd = link_netns_open("/run/netns/ut2");
	assert_true(v.netns_fd >= 0);
	assert_int_equal(link_veth_setup(&v), 0);
	w.base = event_base_new();
	assert_non_null(w.base);
	assert_int_equal(linkwatch_new(w.base, &ops, &w, &lw), 0);
	/* The peer's netns goes: the kernel deletes the pair, as when a container dies. */
	close(v.netns_fd);
	assert_int_equal(link_netns_delete("ut2"), 0);
	event_base_loopexit(w.base, &bound);
	event_base_dispatch(w.base);
	assert_string_equal(w.gone, "utw0");
	assert_int_equal(link_exists("utw0"), 0);
	linkwatch_free(lw);
	event_base_free(w.base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forwarding),
		cmocka_unit_test(test_netns_veth),
		cmocka_unit_test(test_peer_here),
		cmocka_unit_test(test_linkwatch),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
