/*
 * nsexec - run a command inside a sandbox's netns the way `ip netns exec`
 * does (`netd exec NAME -- cmd...`).  Not for the daemon: it changes the
 * calling process's namespaces and then replaces the process.
 */
#ifndef NETD_NSEXEC_H
#define NETD_NSEXEC_H

/*
 * nsexec_run() - enter the netns at @netns_path and exec @argv there.
 * @netns_path: "/run/netns/NAME", "/proc/PID/ns/net", ...; borrowed.
 * @netns_name: if not NULL, each file in /etc/netns/NAME/ is bind-mounted
 *   over /etc/FILE (resolv.conf in particular); files whose /etc/FILE does
 *   not exist are skipped, as ip(8) does.  May be NULL.
 * @argv: NULL-terminated, argv[0] looked up in PATH (execvp).
 * Steps: setns(CLONE_NEWNET); unshare(CLONE_NEWNS) and make / a recursive
 * slave so none of our mounts propagate back; remount /sys so
 * /sys/class/net lists the sandbox's interfaces; the /etc bind mounts;
 * execvp().  Must be called from a single-threaded process (setns and
 * unshare of the mount namespace are refused otherwise).
 * REPLACES THE CALLING PROCESS: on success it does not return.  On failure
 * the process may already be in the target netns / a new mount namespace,
 * so the caller should only report and exit.
 * Return (failure only): -EINVAL (bad args / not a netns); -ENOENT; -errno.
 */
int nsexec_run(const char *netns_path, const char *netns_name, char *const argv[]);

#endif
