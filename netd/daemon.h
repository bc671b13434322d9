/*
 * daemon - `netd run`: owns the configuration, the policies, the sandbox
 * registry, the nf_tables table, the DNS proxy, the audit log and the
 * control socket, and ties them together on one libevent loop.  Its parts
 * live in netd/daemon/ (see netd/daemon/internal.h and
 * docs/architecture.md); the control API reaches them only through
 * struct ctl_ops (netd/api/ctl.h).
 */
#ifndef NETD_DAEMON_H
#define NETD_DAEMON_H


struct event_base;
struct fw_kernel;
struct link_kernel;
struct proxy;
struct proxy_config;
struct proxy_ops;

/*
 * daemon_main() - run the daemon until SIGINT/SIGTERM.  @config_path may be
 * NULL (all defaults); @socket_override, if non-NULL, replaces the
 * config's socket.  Return: process exit status (0 clean stop, 1 startup
 * error, already reported on stderr).
 */
int daemon_main(const char *config_path, const char *socket_override);

/*
 * struct daemon_box - the daemon in a box, as Unbound's testbound runs its
 * worker: `netd run`'s own code with its kernel edges stood in, so a test
 * (tests/unit/test_daemon.c) runs it as an ordinary user.  Not a user's
 * switch: nothing but a test builds one, and `netd run` has none (every
 * edge real, failing closed).  In a box there is no conntrack, nflog or
 * nfnetlink_queue socket (no conn or deny records, no SNI check, a
 * reload's and a delete's conntrack cuts skipped), no per-netns lock (it
 * guards the kernel's table, and the box's table is the stand-in's) and no
 * DNS listener on a sandbox's gateway.
 */
struct daemon_box {
	/*
	 * nf_tables (netd/fw/kernel.h: tests/golden/fake_nft.c, say), made
	 * when the daemon opens its table, instead of a netlink socket; fw
	 * takes *@ret.  Required.  Return: 0; -errno (a startup error).
	 */
	int (*fw_kernel_new)(void *ctx, struct fw_kernel **ret);
	struct link_kernel *link;	/* links (netd/link/kernel.h); borrowed for the run; required */
	/*
	 * The DNS proxy, made instead of proxy_new() (the replay seam's
	 * replay_new(), say: no socket).  NULL: no proxy.
	 * Return: 0; -errno (a startup error).
	 */
	int (*proxy_new)(void *ctx, struct event_base *base, const struct proxy_config *cfg,
			 const struct proxy_ops *ops, void *ops_ctx, struct proxy **ret);
	void *ctx;		/* the constructors' */
	const char *etc_netns_dir;	/* resolv.conf goes under DIR/NAME/, not /etc/netns */
};

/*
 * daemon_run() - daemon_main() in @box (NULL: the real edges, as
 * daemon_main()).  @box and what it borrows must outlive the call.
 * Return: as daemon_main().
 */
int daemon_run(const char *config_path, const char *socket_override,
	       const struct daemon_box *box);

#endif
