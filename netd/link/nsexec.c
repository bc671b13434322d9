/*
 * nsexec - `ip netns exec` without ip(8), walled off from netd: enter a
 * netns, give the command a private mount namespace with a /sys and /etc
 * that match the sandbox and with netd's own files covered, and a PID
 * namespace of its own, then exec it under a small init.  It is the only
 * code in netd that changes the process's own namespaces.
 *
 * What keeps the command out of netd's netns is the missing CAP_SYS_ADMIN
 * (setns(2) needs it, whatever the command can open); the PID namespace and
 * its /proc keep every other process's /proc/PID/{ns,root} out of sight,
 * and the covers over /run/netns and netd's paths keep the names out of
 * sight.  Without CAP_SYS_ADMIN the command cannot unmount any of them.
 *
 * Capabilities are dropped with prctl(2) and capset(2) directly (no
 * libcap): the bounding set, ambient and inheritable sets first (they need
 * CAP_SETPCAP), then the ids (they need CAP_SETUID and CAP_SETGID), then,
 * for --no-caps, permitted and effective.  What was dropped is read back
 * before exec; anything left fails the command instead of running it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "netd/link/link.h"
#include "netd/link/nsexec.h"

#define NETNS_ETC_DIR "/etc/netns"

/* Bind /etc/netns/NAME/FILE over /etc/FILE for each FILE (ip-netns(8)). */
static int bind_etc(const char *name)
{
	char dir[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n, r = 0;

	n = snprintf(dir, sizeof(dir), "%s/%s", NETNS_ETC_DIR, name);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((errno = 0, e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n = snprintf(src, sizeof(src), "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n >= sizeof(src))
			continue;
		n = snprintf(dst, sizeof(dst), "/etc/%s", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(dst))
			continue;
		if (mount(src, dst, "none", MS_BIND, NULL) < 0) {
			/* No /etc/FILE to cover: ip(8) warns and goes on. */
			if (errno == ENOENT)
				continue;
			r = -errno;
			break;
		}
	}
	if (r == 0 && errno != 0)
		r = -errno;
	closedir(d);
	return r;
}

/* A /sys whose sysfs instance belongs to the netns we are now in. */
static int remount_sys(void)
{
	unsigned long flags = 0;
	struct statvfs sv;

	if (umount2("/sys", MNT_DETACH) < 0) {
		/* Not mounted, or busy: overlay it, read-only if it was. */
		if (statvfs("/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY))
			flags = MS_RDONLY;
	}
	if (mount("sysfs", "/sys", "sysfs", flags, NULL) < 0)
		return -errno;
	return 0;
}

/* A decimal id, or -1. */
static long parse_id(const char *s)
{
	char *end;
	long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v >= (long)UINT32_MAX)
		return -1;
	return v;
}

int nsexec_parse_user(const char *spec, struct nsexec_cred *ret)
{
	char user[256];
	const char *colon;
	struct passwd *pw;
	size_t ul;
	long id;

	if (!spec || !*spec)
		return -EINVAL;
	colon = strchr(spec, ':');
	ul = colon ? (size_t)(colon - spec) : strlen(spec);
	if (ul == 0 || ul >= sizeof(user) || (colon && (!colon[1] || strchr(colon + 1, ':'))))
		return -EINVAL;
	memcpy(user, spec, ul);
	user[ul] = '\0';

	id = parse_id(user);
	pw = id >= 0 ? getpwuid((uid_t)id) : getpwnam(user);
	if (!pw && id < 0)
		return -ENOENT;
	ret->uid = pw ? pw->pw_uid : (uid_t)id;
	if (colon) {
		long gid = parse_id(colon + 1);
		struct group *gr = gid >= 0 ? NULL : getgrnam(colon + 1);

		if (gid < 0 && !gr)
			return -ENOENT;
		ret->gid = gr ? gr->gr_gid : (gid_t)gid;
	} else if (pw) {
		ret->gid = pw->pw_gid;
	} else {
		return -EINVAL;	/* a bare numeric UID nobody knows: say the group */
	}
	ret->n_groups = 1;
	ret->groups[0] = ret->gid;
	if (pw) {
		int n = NSEXEC_MAX_GROUPS;

		/* The user's own groups, as login(1) would give them. */
		if (getgrouplist(pw->pw_name, ret->gid, ret->groups, &n) < 0)
			n = NSEXEC_MAX_GROUPS;	/* truncated: keep the first ones */
		ret->n_groups = n;
	}
	ret->set_user = true;
	return 0;
}

/*
 * The bounding set of every command not under --no-caps: Docker's default
 * set without CAP_MKNOD (there is no device cgroup here to stop what a new
 * device node would open).  CAP_NET_RAW is in it (raw and packet sockets
 * are per netns).  Gone in particular: CAP_SYS_ADMIN (setns() into any
 * other netns, mount and umount, so the covers below stay), CAP_NET_ADMIN
 * unless --net-admin, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH
 * (open_by_handle_at() reaches files past any mount), CAP_SYS_MODULE,
 * CAP_SYS_RAWIO, CAP_BPF, CAP_PERFMON.
 *
 * Why not CAP_NET_ADMIN: the kernel gives the sandbox's netns an id for
 * the netns its veth's peer is in, netd's own, and rtnetlink acts on the
 * netns an id names (IFLA_TARGET_NETNSID) for anyone with CAP_NET_ADMIN in
 * the user namespace owning it, the initial one here: list, create and
 * delete netd's interfaces, no setns() needed.
 */
#define CAPBIT(c) (1ULL << (c))
#define NSEXEC_DEFAULT_CAPS                                                                     \
	(CAPBIT(CAP_CHOWN) | CAPBIT(CAP_DAC_OVERRIDE) | CAPBIT(CAP_FOWNER) | CAPBIT(CAP_FSETID) | \
	 CAPBIT(CAP_KILL) | CAPBIT(CAP_SETGID) | CAPBIT(CAP_SETUID) | CAPBIT(CAP_SETPCAP) |       \
	 CAPBIT(CAP_NET_BIND_SERVICE) | CAPBIT(CAP_NET_RAW) | CAPBIT(CAP_SYS_CHROOT) |            \
	 CAPBIT(CAP_AUDIT_WRITE) | CAPBIT(CAP_SETFCAP))

static int capset_zero(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/*
 * Cut the bounding set to @keep, clear the ambient set, and the inheritable
 * set to @keep (root's exec gives it its inheritable set on top of the
 * bounding one).  Needs CAP_SETPCAP.  Return: 0; -errno.
 */
static int caps_bound(uint64_t keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	for (int c = 0; c <= 63; c++) {
		if (keep & CAPBIT(c))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;	/* past the kernel's last capability */
			return -errno;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[0].inheritable &= (uint32_t)keep;
	d[1].inheritable &= (uint32_t)(keep >> 32);
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/*
 * True if no capability outside @keep is left in the bounding, ambient or
 * inheritable set; with @none also nothing effective or permitted, and
 * no_new_privs on.
 */
static bool caps_within(uint64_t keep, bool none)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	if ((d[0].inheritable & ~(uint32_t)keep) || (d[1].inheritable & ~(uint32_t)(keep >> 32)))
		return false;
	for (int i = 0; none && i < 2; i++)
		if (d[i].effective || d[i].permitted)
			return false;
	for (int c = 0; c <= 63; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (r < 0)
			break;	/* past the kernel's last capability */
		if (keep & CAPBIT(c))
			continue;
		if (r == 1 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
			return false;
	}
	return !none || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/*
 * Become @cred (NULL: root, with NSEXEC_DEFAULT_CAPS): the order matters
 * (see the file comment).  Return: 0; -EPERM if the result is not what was
 * asked; -errno.
 */
static int drop_cred(const struct nsexec_cred *cred)
{
	bool none = cred && cred->no_caps;
	uint64_t keep = none ? 0 : NSEXEC_DEFAULT_CAPS;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int r;

	if (cred && cred->net_admin && !none)
		keep |= CAPBIT(CAP_NET_ADMIN);

	/* No setuid or file-capability program may give any back. */
	if (none && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	r = caps_bound(keep);
	if (r < 0)
		return r;
	if (cred && cred->set_user) {
		/* Groups before ids: setgroups() needs CAP_SETGID, gone after setresuid(). */
		if (setgroups((size_t)cred->n_groups, cred->groups) < 0 ||
		    setresgid(cred->gid, cred->gid, cred->gid) < 0 ||
		    setresuid(cred->uid, cred->uid, cred->uid) < 0)
			return -errno;
		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
			return -errno;
		if (ru != cred->uid || eu != cred->uid || su != cred->uid || rg != cred->gid ||
		    eg != cred->gid || sg != cred->gid)
			return -EPERM;
	}
	if (none) {
		r = capset_zero();
		if (r < 0)
			return r;
	}
	return caps_within(keep, none) ? 0 : -EPERM;
}

/*
 * Cover @path (absolute) with nothing, in our mount namespace: an empty
 * read-only tmpfs over a directory; over anything else (the control socket,
 * a file) /dev/null bound read-only and nodev, so it can be neither opened
 * nor connected to.  A path that does not exist, or lies under one already
 * covered, is skipped.  Return: 0; -EINVAL (relative, or "/"); -errno.
 */
static int hide_path(const char *path)
{
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
	struct stat st;

	if (path[0] != '/' || strcmp(path, "/") == 0)
		return -EINVAL;
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return mount("tmpfs", path, "tmpfs", ro, "size=4k,mode=0555") < 0 ? -errno : 0;
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | ro, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * The command's mounts, in the mount namespace the init was cloned into: /
 * a recursive slave first, so none of them propagates back to the host;
 * /sys for the netns we are in; /etc/netns/@netns_name; @hide and the netns
 * directories covered; last a /proc of our PID namespace.  Return: 0; -errno.
 */
static int setup_mounts(const char *netns_name, const char *const hide[])
{
	/* Where `ip netns add` and most tools name namespaces: netd's own, in a test world. */
	static const char *const netns_dirs[] = { "/run/netns", "/var/run/netns" };
	int r;

	if (mount("", "/", "none", MS_SLAVE | MS_REC, NULL) < 0)
		return -errno;
	r = remount_sys();
	if (r < 0)
		return r;
	if (netns_name) {
		r = bind_etc(netns_name);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; hide && hide[i]; i++) {
		r = hide_path(hide[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < sizeof(netns_dirs) / sizeof(netns_dirs[0]); i++) {
		r = hide_path(netns_dirs[i]);
		if (r < 0)
			return r;
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	return 0;
}

/* ---- the PID namespace: netd exec -> init (PID 1) -> the command (PID 2) ---- */

static const int fwd_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };
static volatile sig_atomic_t fwd_pid;	/* where forward_signal() sends; 0 = nowhere */

/*
 * Pass a signal on, unless the terminal sent it (SI_KERNEL): the terminal
 * signals the whole foreground process group, the command included, which
 * must not get it twice.  kill(2), sigqueue(2) and tgkill(2) codes are <= 0.
 */
static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (fwd_pid > 0 && si->si_code <= 0)
		kill((pid_t)fwd_pid, sig);
}

/*
 * Forward fwd_sigs to @to from now on, except those the caller ignores
 * (`nohup netd exec ...`: the command ignores them too), then restore the
 * signal mask @mask.
 */
static void forward_signals(pid_t to, const sigset_t *mask)
{
	struct sigaction sa = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct sigaction old;

	sigemptyset(&sa.sa_mask);
	fwd_pid = to;
	for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
		if (sigaction(fwd_sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fwd_sigs[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
}

/* A wait(2) status as a shell reports it: the exit code, or 128 + the signal. */
static int exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* Report @err (< 0) to netd exec through @err_fd, and end this process. */
static _Noreturn void child_fail(int err_fd, int err)
{
	ssize_t n = write(err_fd, &err, sizeof(err));

	(void)n;	/* if the pipe is gone, so is the one who would read it */
	_exit(err == -ENOENT ? 127 : 126);
}

/*
 * PID 2: the caller's signal mask back (its dispositions are still the
 * caller's: forked before the init sets its handlers), @cred, exec.
 */
static _Noreturn void run_command(const struct nsexec_cred *cred, char *const argv[],
				  const sigset_t *mask, int err_fd)
{
	int r;

	sigprocmask(SIG_SETMASK, mask, NULL);
	/* Last: the mounts before need CAP_SYS_ADMIN. */
	r = drop_cred(cred);
	if (r == 0) {
		execvp(argv[0], argv);
		r = -errno;
	}
	child_fail(err_fd, r);
}

/*
 * PID 1 of the new PID namespace: a /proc that shows only this namespace,
 * then the command as its child; forwards signals to it, reaps whatever is
 * orphaned onto it, and exits with the command's status (the kernel then
 * kills whatever else is left in the namespace).  A command that is PID 1
 * itself would ignore every signal it has no handler for, SIGTERM included.
 */
static _Noreturn void run_init(const char *netns_name, const char *const hide[],
			       const struct nsexec_cred *cred, char *const argv[],
			       const sigset_t *mask, int err_fd)
{
	int st = 0, r;
	pid_t cmd, p;

	/* If netd exec is killed, the namespace goes with it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(err_fd, -errno);
	/* The command (root, perhaps) may not ptrace us or read /proc/1/{root,mem,...}. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(err_fd, -errno);
	r = setup_mounts(netns_name, hide);
	if (r < 0)
		child_fail(err_fd, r);
	cmd = fork();
	if (cmd < 0)
		child_fail(err_fd, -errno);
	if (cmd == 0)
		run_command(cred, argv, mask, err_fd);
	close(err_fd);
	forward_signals(cmd, mask);
	for (;;) {
		p = waitpid(-1, &st, 0);
		if (p == cmd)
			_exit(exit_code(st));
		if (p < 0 && errno != EINTR)
			_exit(126);	/* ECHILD: cannot happen while cmd is ours */
	}
}

int nsexec_run(const char *netns_path, const char *netns_name, const struct nsexec_cred *cred,
	       const char *const hide[], char *const argv[])
{
	sigset_t block, orig;
	int fd, r, err = 0, st, pfd[2];
	ssize_t n;
	pid_t init;

	if (!netns_path || !argv || !argv[0])
		return -EINVAL;
	if (netns_name && (!*netns_name || strchr(netns_name, '/') ||
			   strcmp(netns_name, ".") == 0 ||
			   strcmp(netns_name, "..") == 0))
		return -EINVAL;
	/* uid 0 owns the host's files (netd's among them) with or without capabilities. */
	if (cred && cred->no_caps &&
	    (!cred->set_user || cred->uid == 0 || cred->net_admin))
		return -EINVAL;

	fd = link_netns_open(netns_path);
	if (fd < 0)
		return fd;
	if (setns(fd, CLONE_NEWNET) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	close(fd);

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	/* Blocked until each process has its handler: none is lost, none kills early. */
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); i++)
		sigaddset(&block, fwd_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &orig);
	/*
	 * fork() into a new PID and mount namespace.  clone(2), not unshare():
	 * this process stays where it was, with its own /proc and children in
	 * its own PID namespace (LeakSanitizer's tracer at exit is one).
	 */
	init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL,
			      NULL);
	if (init < 0) {
		r = -errno;
		sigprocmask(SIG_SETMASK, &orig, NULL);
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (init == 0) {
		close(pfd[0]);
		run_init(netns_name, hide, cred, argv, &orig, pfd[1]);
	}
	close(pfd[1]);
	forward_signals(init, &orig);
	/* EOF: the command was exec'd (the pipe is close-on-exec); else why not. */
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(init, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (n == (ssize_t)sizeof(err) && err < 0)
		return err;
	return exit_code(st);
}
