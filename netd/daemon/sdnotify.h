/*
 * sdnotify - tell systemd (Type=notify) where the daemon is: ready,
 * reloading, stopping.  A thin wrapper over libsystemd's sd_notify(3);
 * without $NOTIFY_SOCKET (not under systemd) every call does nothing.
 */
#ifndef NETD_SDNOTIFY_H
#define NETD_SDNOTIFY_H

/*
 * sdnotify_ready() - READY=1 with STATUS=@status (NULL: none): startup is
 * done, or a reload finished.  Send only once the control socket listens
 * and the rules are committed: systemd then starts what is ordered after
 * netd.  Return: > 0 sent; 0 not under systemd; -errno.
 */
int sdnotify_ready(const char *status);

/*
 * sdnotify_reloading() - RELOADING=1 (and MONOTONIC_USEC, which systemd
 * 253+ wants with it): a reload began; follow with sdnotify_ready().
 * Return: as sdnotify_ready().
 */
int sdnotify_reloading(void);

/* sdnotify_stopping() - STOPPING=1: shutdown began.  Return: as above. */
int sdnotify_stopping(void);

#endif
