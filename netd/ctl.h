/*
 * ctl - the control API: HTTP/1.1 + JSON on a unix socket (libevent's
 * evhttp, jansson).  Versioned paths:
 *
 *   GET    /v1/status
 *   GET    /v1/sandboxes             POST /v1/sandboxes {name, policy, netns?, ifname?}
 *   GET    /v1/sandboxes/NAME        DELETE /v1/sandboxes/NAME
 *   GET    /v1/policies              GET  /v1/policies/NAME
 *
 * Errors are 4xx/5xx with {"error": {"code": N, "message": "..."}}.
 * Bodies are limited to CTL_MAX_BODY bytes; a malformed request never
 * affects the daemon's state.
 */
#ifndef NETD_CTL_H
#define NETD_CTL_H

#include <stddef.h>

#include <jansson.h>

struct daemon;
struct event_base;
struct ctl;

#define CTL_MAX_BODY    65536	/* bytes */
#define CTL_MAX_HEADERS 8192	/* bytes */

/*
 * ctl_new() - listen on unix socket @path (mode 0660; its directory is
 * created 0755).  Refuses with -EADDRINUSE if another process answers on
 * @path; a stale socket file is replaced.
 * @ret: caller frees with ctl_free().  Return: 0; -errno.
 */
int ctl_new(struct event_base *base, const char *path, struct daemon *d, struct ctl **ret);

/* ctl_free() - stop listening and unlink the socket; NULL-safe. */
void ctl_free(struct ctl *c);

#endif
