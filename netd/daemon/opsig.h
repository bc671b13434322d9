/*
 * opsig - SIGUSR1, the operator's "reopen the audit log" (logrotate's
 * postrotate), kept apart from SIGHUP, which reloads policies: a log
 * rotation must never apply a half-edited policy.
 */
#ifndef NETD_OPSIG_H
#define NETD_OPSIG_H

struct audit;
struct event_base;

/*
 * opsig_start() - on SIGUSR1, audit_reopen(@a) and log it (@path is the
 * audit log's name for that line).  @a and @path are borrowed until
 * opsig_stop().  One per process (signals are).  Return: 0; -ENOMEM.
 */
int opsig_start(struct event_base *base, struct audit *a, const char *path);

/* opsig_stop() - remove the handler; safe if opsig_start() failed or never ran. */
void opsig_stop(void);

#endif
