/*
 * fsutil.c - see fsutil.h.
 */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;

			*p = '\0';
			if (buf[0] && mkdir(buf, mode) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

int fs_mkdir_parent(const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	return fs_mkdir_p(dir, mode);
}

int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t off = 0;
	int fd, dfd, r = 0;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX.tmp", dir, base) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* Beside @path (rename(2) stays on one filesystem); a dot file ending
	 * in .tmp, which no reader of a directory (CNI's, ours) picks up. */
	fd = mkostemps(tmp, 4, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0)
		r = -errno;
	while (r == 0 && off < len) {
		ssize_t n = write(fd, (const char *)data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	/* The rename itself must reach the disk before we report success. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int fs_open_stat(const char *path, int flags, mode_t mode, struct stat *st)
{
	int fd = open(path, flags, mode), r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
