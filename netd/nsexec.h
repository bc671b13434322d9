/*
 * nsexec - run a command inside a sandbox's netns the way `ip netns exec`
 * does (`netd exec NAME -- cmd...`).  Not for the daemon: it changes the
 * calling process's namespaces and credentials and then replaces the process.
 */
#ifndef NETD_NSEXEC_H
#define NETD_NSEXEC_H

#include <stdbool.h>
#include <sys/types.h>

#define NSEXEC_MAX_GROUPS 64	/* supplementary groups kept for --user */

/* Who the command runs as; zero-initialised = root with every capability. */
struct nsexec_cred {
	bool set_user;		/* --user: switch to @uid/@gid/@groups */
	uid_t uid;
	gid_t gid;
	gid_t groups[NSEXEC_MAX_GROUPS];	/* supplementary groups */
	int n_groups;
	bool no_caps;		/* --no-caps: empty bounding, ambient, inheritable,
				 * permitted and effective sets; no_new_privs */
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
 * nsexec_run() - enter the netns at @netns_path and exec @argv there.
 * @netns_path: "/run/netns/NAME", "/proc/PID/ns/net", ...; borrowed.
 * @netns_name: if not NULL, each file in /etc/netns/NAME/ is bind-mounted
 *   over /etc/FILE (resolv.conf in particular); files whose /etc/FILE does
 *   not exist are skipped, as ip(8) does.  May be NULL.
 * @cred: the user and capabilities to exec with; NULL = unchanged (root,
 *   every capability: CAP_NET_ADMIN, CAP_NET_RAW and the rest).
 * @argv: NULL-terminated, argv[0] looked up in PATH (execvp).
 * Steps: setns(CLONE_NEWNET); unshare(CLONE_NEWNS) and make / a recursive
 * slave so none of our mounts propagate back; remount /sys so
 * /sys/class/net lists the sandbox's interfaces; the /etc bind mounts;
 * drop to @cred (then checks that it took: fails rather than exec with
 * more than asked); execvp().  Must be called from a single-threaded
 * process (setns and unshare of the mount namespace are refused otherwise).
 * REPLACES THE CALLING PROCESS: on success it does not return.  On failure
 * the process may already be in the target netns / a new mount namespace,
 * so the caller should only report and exit.
 * Return (failure only): -EINVAL (bad args / not a netns); -ENOENT; -EPERM
 * (credentials could not be dropped); -errno.
 */
int nsexec_run(const char *netns_path, const char *netns_name, const struct nsexec_cred *cred,
	       char *const argv[]);

#endif
