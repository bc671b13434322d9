/*
 * tombstones - netd-cni writes STATE_DIR/tombstones/NAME when a CNI DEL
 * finds netd down (DEL must still succeed).  At start, after the restore,
 * every sandbox named by a tombstone is deleted and the tombstone removed,
 * before the control socket opens, so no new ADD can race with it.
 */
#include "netd/daemon/internal.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

void daemon_tombstones_process(struct daemon *d)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/tombstones", d->cfg.state_dir);
	dh = opendir(dir);
	if (!dh)
		return;
	while ((e = readdir(dh))) {
		char path[PATH_MAX + 256], q[160];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!policy_name_valid(e->d_name)) {
			log_warn("%s: not a sandbox name; ignored",
				 log_quote(path, strlen(path), q, sizeof(q)));
			continue;
		}
		if (daemon_sandbox_retire(d, e->d_name, "delete") == 0)
			log_info("sandbox %s deleted: a CNI DEL arrived while netd was down",
				 e->d_name);
		unlink(path);
	}
	closedir(dh);
}

