/*
 * opsig - operator signals that do not need the daemon's internals:
 * SIGUSR1 reopens the audit log and does nothing else.  (SIGHUP, the
 * policy reload, and SIGTERM stay in daemon.c, which owns that state.)
 */
#include "netd/daemon/opsig.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include <event2/event.h>

#include "common/log.h"
#include "netd/trail/audit.h"

static struct event *usr1;
static struct audit *usr1_audit;
static const char *usr1_path;

static void on_sigusr1(evutil_socket_t sig, short what, void *arg)
{
	int r;

	(void)sig;
	(void)what;
	(void)arg;
	r = audit_reopen(usr1_audit);
	if (r == 0)
		log_info("SIGUSR1: audit log %s reopened", usr1_path);
	else
		log_err("SIGUSR1: audit log %s: %s (retried on the next record)", usr1_path,
			strerror(-r));
}

int opsig_start(struct event_base *base, struct audit *a, const char *path)
{
	usr1_audit = a;
	usr1_path = path;
	usr1 = evsignal_new(base, SIGUSR1, on_sigusr1, NULL);
	if (!usr1 || evsignal_add(usr1, NULL) < 0) {
		opsig_stop();
		return -ENOMEM;
	}
	return 0;
}

void opsig_stop(void)
{
	if (usr1)
		event_free(usr1);
	usr1 = NULL;
	usr1_audit = NULL;
	usr1_path = NULL;
}
