/*
 * fsutil.h - small file-system helpers shared by the daemon, the control
 * socket, the audit log and netd-cni.
 */
#ifndef NETD_COMMON_FSUTIL_H
#define NETD_COMMON_FSUTIL_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * fs_mkdir_p() - create @dir and every missing parent, each with @mode
 * (before the umask).  Existing directories are left as they are.
 * Return: 0; -ENAMETOOLONG if @dir is longer than PATH_MAX; -errno of mkdir(2).
 */
int fs_mkdir_p(const char *dir, mode_t mode);

/*
 * fs_mkdir_parent() - fs_mkdir_p() of the directory that holds @path (the
 * part before its last '/'); nothing for a bare name or a file in "/".
 * Return: as fs_mkdir_p().
 */
int fs_mkdir_parent(const char *path, mode_t mode);

/*
 * fs_write_atomic() - replace @path by @data (@len bytes) with mode @mode:
 * a temp file beside it (DIR/.NAME.XXXXXX.tmp, same filesystem), written whole,
 * fsync'ed, renamed over @path, and the directory fsync'ed, so a crash
 * leaves the old file or the new one, never half of one, and two writers
 * never share a temp file.  Return: 0; -errno (the temp file is removed).
 */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/*
 * fs_open_stat() - open(@path, @flags, @mode), then fstat() what was opened
 * into @st (the file itself, whatever replaced @path meanwhile).
 * Return: the descriptor (the caller closes it); -errno of open(2) or
 * fstat(2) (then nothing is left open).
 */
int fs_open_stat(const char *path, int flags, mode_t mode, struct stat *st);

#endif
