/*
 * fsutil.h - small file-system helpers shared by the daemon, the control
 * socket and the audit log.
 */
#ifndef NETD_COMMON_FSUTIL_H
#define NETD_COMMON_FSUTIL_H

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

#endif
