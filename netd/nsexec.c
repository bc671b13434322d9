/*
 * nsexec - `ip netns exec` without ip(8): enter a netns, give the command a
 * private mount namespace with a /sys and /etc that match the sandbox, and
 * exec it.  It is the only code in netd that changes the process's own
 * namespaces, which is why it ends in exec and never returns to the caller.
 *
 * --user and --no-caps: capabilities are dropped with prctl(2) and capset(2)
 * directly (no libcap): the bounding set, ambient and inheritable sets
 * first (they need CAP_SETPCAP), then the ids (they need CAP_SETUID and
 * CAP_SETGID), then permitted and effective.  What was dropped is read back
 * before exec; anything left fails the command instead of running it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "netd/link.h"
#include "netd/nsexec.h"

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

static int capset_zero(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* True if no capability is left in any set, and no_new_privs is on. */
static bool caps_all_gone(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return false;
	for (int c = 0; c <= 63; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (r < 0)
			break;	/* past the kernel's last capability */
		if (r == 1 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
			return false;
	}
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/*
 * Become @cred: the order matters (see the file comment).  Return: 0;
 * -EPERM if the result is not what was asked; -errno.
 */
static int drop_cred(const struct nsexec_cred *cred)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (cred->no_caps) {
		/* No setuid or file-capability program may give any back. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return -errno;
		for (int c = 0; c <= 63; c++)
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;	/* past the kernel's last capability */
				return -errno;
			}
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	}
	if (cred->set_user) {
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
	if (cred->no_caps) {
		int r = capset_zero();

		if (r < 0)
			return r;
		if (!caps_all_gone())
			return -EPERM;
	}
	return 0;
}

int nsexec_run(const char *netns_path, const char *netns_name, const struct nsexec_cred *cred,
	       char *const argv[])
{
	int fd, r;

	if (!netns_path || !argv || !argv[0])
		return -EINVAL;
	if (netns_name && (!*netns_name || strchr(netns_name, '/') ||
			   strcmp(netns_name, ".") == 0 ||
			   strcmp(netns_name, "..") == 0))
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

	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* Our /sys and /etc mounts must never propagate back to the host. */
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
	/* Last: the mounts above need CAP_SYS_ADMIN. */
	if (cred) {
		r = drop_cred(cred);
		if (r < 0)
			return r;
	}
	execvp(argv[0], argv);
	return -errno;
}
