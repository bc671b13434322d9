/*
 * policywatch - inotify on policy_dir, debounced, then a reload (see
 * policywatch.h).  One inotify fd and two libevent events; no threads.
 */
#include "netd/daemon/policywatch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"

/*
 * What changes a directory's listing or a file's bytes.  IN_ATTR is not
 * among them (touch, chmod); IN_DELETE_SELF/IN_MOVE_SELF arrive anyway
 * followed by IN_IGNORED when the directory itself goes.
 */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct policywatch {
	char *dir;
	int fd, wd;		/* wd < 0: the directory is gone, re-add on the timer */
	struct event *ev_read, *ev_timer;
	void (*fn)(void *arg);
	void *arg;
	unsigned long reloads;
};

static void arm(struct policywatch *w, unsigned int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	/* Re-adding a pending timer moves it: the debounce restarts at each event. */
	evtimer_add(w->ev_timer, &tv);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct policywatch *w = arg;

	(void)fd;
	(void)what;
	if (w->wd < 0) {
		w->wd = inotify_add_watch(w->fd, w->dir, WATCH_MASK);
		if (w->wd < 0) {
			arm(w, POLICYWATCH_RETRY_MS);
			return;
		}
		log_info("policy_watch: %s is back, watching it again", w->dir);
	}
	w->reloads++;
	w->fn(w->arg);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct policywatch *w = arg;
	/* Aligned as inotify(7) asks; events are read whole or not at all. */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	(void)what;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			if (e->mask & IN_IGNORED) {
				/* policy_dir removed or renamed: the watch died with it. */
				if (e->wd == w->wd) {
					log_warn("policy_watch: %s is gone; the loaded policies stay, "
						 "retrying every %u ms", w->dir, POLICYWATCH_RETRY_MS);
					w->wd = -1;
				}
			}
			changed = true;	/* IN_Q_OVERFLOW too: something changed */
			p += sizeof(*e) + e->len;
		}
	}
	if (changed)
		arm(w, w->wd < 0 ? POLICYWATCH_RETRY_MS : POLICYWATCH_DEBOUNCE_MS);
}

int policywatch_new(struct event_base *base, const char *dir, void (*fn)(void *arg), void *arg,
		    struct policywatch **ret)
{
	struct policywatch *w = calloc(1, sizeof(*w));
	int r = -ENOMEM;

	*ret = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = w->wd = -1;
	w->fn = fn;
	w->arg = arg;
	w->dir = strdup(dir);
	if (!w->dir)
		goto fail;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		r = -errno;
		goto fail;
	}
	w->wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
	if (w->wd < 0) {
		r = -errno;
		goto fail;
	}
	w->ev_read = event_new(base, w->fd, EV_READ | EV_PERSIST, on_read, w);
	w->ev_timer = evtimer_new(base, on_timer, w);
	if (!w->ev_read || !w->ev_timer || event_add(w->ev_read, NULL) < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	policywatch_free(w);
	return r;
}

unsigned long policywatch_reloads(const struct policywatch *w)
{
	return w ? w->reloads : 0;
}

void policywatch_free(struct policywatch *w)
{
	if (!w)
		return;
	if (w->ev_read)
		event_free(w->ev_read);
	if (w->ev_timer)
		event_free(w->ev_timer);
	if (w->fd >= 0)
		close(w->fd);
	free(w->dir);
	free(w);
}
