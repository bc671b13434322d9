/*
 * policywatch - reload the policies when policy_dir changes (config key
 * policy_watch: true).  inotify on the directory itself: kubelet updates a
 * ConfigMap volume by writing a new timestamped directory and renaming a
 * "..data" symlink over the old one (one IN_MOVED_TO in policy_dir), an
 * editor saves by IN_CLOSE_WRITE or by renaming a temp file.  Events are
 * debounced, then the same reload as POST /v1/policies/reload runs; a bad
 * policy set is rejected whole there and the last good state stays.
 * Not here: what a reload does (netd/daemon/reload.c, which also starts
 * the watch: daemon_policy_watch()), polling.
 */
#ifndef NETD_POLICYWATCH_H
#define NETD_POLICYWATCH_H

struct event_base;
struct policywatch;

#define POLICYWATCH_DEBOUNCE_MS 300	/* quiet time after the last event before a reload */
#define POLICYWATCH_RETRY_MS    1000	/* re-adding the watch after policy_dir vanished */

/*
 * policywatch_new() - watch @dir on @base; after each burst of changes
 * (POLICYWATCH_DEBOUNCE_MS without a further event) call @fn(@arg).  If
 * @dir itself is removed or renamed, the watch is re-added (and @fn called)
 * once it is back.  @dir is copied.  @ret: caller frees with
 * policywatch_free().
 * Return: 0; -errno from inotify (-ENOENT: no @dir; -EMFILE/-ENOSPC:
 * inotify limits); -ENOMEM.
 */
int policywatch_new(struct event_base *base, const char *dir, void (*fn)(void *arg), void *arg,
		    struct policywatch **ret);

/* policywatch_reloads() - how many times the callback ran (for tests and status). */
unsigned long policywatch_reloads(const struct policywatch *w);

/* policywatch_free() - stop watching; NULL-safe. */
void policywatch_free(struct policywatch *w);

#endif
