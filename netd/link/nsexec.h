/*
 * nsexec - run a command inside a sandbox's netns the way `ip netns exec`
 * does (`netd exec NAME -- cmd...`), in its own mount and PID namespaces
 * that hide netd's files and every other process.  Not for the daemon: it
 * changes the calling process's namespaces.
 */
#ifndef NETD_NSEXEC_H
#define NETD_NSEXEC_H

#include <stdbool.h>
#include <sys/types.h>

#define NSEXEC_MAX_GROUPS 64	/* supplementary groups kept for --user */

/* Who the command runs as; zero-initialised = root with the default
 * capabilities (nsexec_run()). */
struct nsexec_cred {
	bool set_user;		/* --user: switch to @uid/@gid/@groups */
	uid_t uid;
	gid_t gid;
	gid_t groups[NSEXEC_MAX_GROUPS];	/* supplementary groups */
	int n_groups;
	bool no_caps;		/* --no-caps: empty bounding, ambient, inheritable,
				 * permitted and effective sets; no_new_privs.
				 * Only with set_user and uid != 0. */
	bool net_admin;		/* --net-admin: CAP_NET_ADMIN in the bounding set
				 * too (not with no_caps).  It reaches netd's
				 * interfaces through the netns id of the veth's
				 * peer (IFLA_TARGET_NETNSID): not a boundary. */
};

/*
 * nsexec_parse_user() - resolve "USER[:GROUP]" (names, or numeric ids) into
 * @ret (set_user, uid, gid, the user's supplementary groups).  Without
 * GROUP the user's primary group; a numeric UID with no passwd entry needs
 * GROUP.  Call before nsexec_run(): the lookups use the host's NSS.
 * Return: 0; -EINVAL (malformed, or numeric UID without passwd entry and no
 * GROUP); -ENOENT (no such user or group).
 */
int nsexec_parse_user(const char *spec, struct nsexec_cred *ret);

/*
 * nsexec_run() - run @argv inside the netns at @netns_path, walled off from
 * netd itself, and wait for it.
 * @netns_path: "/run/netns/NAME", "/proc/PID/ns/net", ...; borrowed.
 * @netns_name: if not NULL, each file in /etc/netns/NAME/ is bind-mounted
 *   over /etc/FILE (resolv.conf in particular); files whose /etc/FILE does
 *   not exist are skipped, as ip(8) does.  May be NULL.
 * @cred: the user and capabilities to exec with.  NULL: root, with a
 *   container's capabilities (Docker's default set without CAP_MKNOD:
 *   CAP_NET_RAW, but never CAP_NET_ADMIN unless @cred->net_admin, and never
 *   CAP_SYS_ADMIN, CAP_SYS_PTRACE or CAP_DAC_READ_SEARCH).  @cred->no_caps
 *   needs @cred->set_user with a uid other than 0, and no net_admin.
 * @hide: NULL-terminated absolute paths (netd's config, control socket,
 *   state_dir, policy_dir, audit log) to cover in the command's mount
 *   namespace: an empty read-only tmpfs over a directory, /dev/null bound
 *   read-only and nodev over anything else; missing ones are skipped.  May
 *   be NULL.  /run/netns and /var/run/netns are always covered.
 * @argv: NULL-terminated, argv[0] looked up in PATH (execvp).
 * Steps: setns(CLONE_NEWNET); clone an init into new PID and mount
 * namespaces (PID 1), which makes / a recursive slave so none of its mounts
 * propagate back, remounts /sys so /sys/class/net lists the sandbox's
 * interfaces, makes the /etc bind mounts and the covers, mounts a /proc of
 * its own PID namespace (no other process's /proc/PID/ns/net, root or
 * memory is reachable), and forks the command (PID 2), which drops to
 * @cred (checking that it took: fails rather than exec with more than
 * asked) and execs.  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2
 * and SIGWINCH sent to the caller are passed on to the command (those the
 * terminal sends reach it directly).  When the command exits, whatever it
 * left running in the namespace is killed.  Must be called from a
 * single-threaded process (setns is refused otherwise).  The caller is
 * left in the sandbox's netns, and should only report and exit.
 * Return: the command's exit status (0-255; 128 + N if signal N ended it);
 * -EINVAL (bad args, not a netns, no_caps for uid 0 or with net_admin);
 * -ENOENT (no such command, no such netns); -EPERM (credentials could not
 * be dropped); -errno.
 */
int nsexec_run(const char *netns_path, const char *netns_name, const struct nsexec_cred *cred,
	       const char *const hide[], char *const argv[]);

#endif
