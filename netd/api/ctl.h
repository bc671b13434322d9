/*
 * ctl - the control API: HTTP/1.1 + JSON on a unix socket (libevent's
 * evhttp, jansson).  Versioned paths:
 *
 *   GET    /v1/status                GET  /v1/metrics (and /metrics)
 *   GET    /v1/sandboxes             POST /v1/sandboxes {name, policy, netns?, ifname?, ...}
 *   GET    /v1/sandboxes/NAME        DELETE /v1/sandboxes/NAME
 *   GET    /v1/policies              GET  /v1/policies/NAME
 *   POST   /v1/policies/reload       POST /v1/verify {sandboxes | all, allowed?}
 *   GET    /v1/gateway/ca            (the gateway CA's certificate, PEM in JSON)
 *
 * Errors are 4xx/5xx with {"error": {"code": N, "message": "..."}}.
 * Bodies are limited to CTL_MAX_BODY bytes; a malformed request never
 * affects the daemon's state.  The server calls the daemon only through
 * struct ctl_ops (it includes no daemon header), as the DNS proxy does.
 *
 * Limits (docs/api.md): at most CTL_MAX_CONNS connections are served
 * at once (the rest wait in the listen backlog); a connection must deliver
 * each complete request within CTL_REQUEST_DEADLINE_S of being accepted or
 * of its previous request, however slowly it trickles bytes, or it is shut
 * down; when accept() runs out of descriptors the listener pauses for
 * CTL_ACCEPT_PAUSE_MS instead of spinning; such events are logged at most
 * once a second, with a count of what was left out.
 */
#ifndef NETD_CTL_H
#define NETD_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "netd/api/ctlreq.h"

struct event_base;
struct ctl;

#define CTL_MAX_BODY    65536	/* bytes */
#define CTL_MAX_HEADERS 8192	/* bytes */
#define CTL_MAX_CONNS   256	/* connections served at once */
#define CTL_BACKLOG     256	/* listen(2) backlog: connections waiting beyond CTL_MAX_CONNS */
#define CTL_REQUEST_DEADLINE_S 10	/* seconds for each whole request (slow clients) */
#define CTL_ACCEPT_PAUSE_MS    250	/* accept paused this long after EMFILE/ENFILE */

/*
 * The end of a verify run (ctl_ops.verify): @report is its JSON report
 * (verify_plan.h; the callee takes it; NULL: out of memory).
 */
typedef void ctl_verify_done_fn(void *arg, json_t *report);

/*
 * What the control API asks of the daemon.  @ctx is ctl_new()'s.  Every
 * json_t returned is new (the server decrefs it); NULL means out of memory
 * (or "no such" where said).  @err/@errsz: a message for the client.
 */
struct ctl_ops {
	/* Create; on success *@ret is the new sandbox's JSON.  Return: 0; -errno
	 * (-EINVAL 400, -ENOENT 404, -EEXIST/-EBUSY 409, -ENOSPC 507, else 500). */
	int (*sandbox_create)(void *ctx, const struct sandbox_request *req, json_t **ret,
			      char *err, size_t errsz);
	/* Delete by name.  Return: 0; -ENOENT; -errno. */
	int (*sandbox_delete)(void *ctx, const char *name);
	/* One sandbox's JSON, or NULL if there is none of that name. */
	json_t *(*sandbox_get)(void *ctx, const char *name);
	/* Array of every sandbox. */
	json_t *(*sandboxes)(void *ctx);
	/* Array describing the loaded policies. */
	json_t *(*policies)(void *ctx);
	/* One policy in full, or NULL if unknown. */
	json_t *(*policy)(void *ctx, const char *name);
	/* Reload policy_dir; *@report: array of changed sandboxes.
	 * Return: 0; -EINVAL/-EEXIST/-E2BIG/-ENOENT (400); -errno (500). */
	int (*policy_reload)(void *ctx, json_t **report, char *err, size_t errsz);
	/* After a reload: more of its reply, e.g. {"credentials_read": N, "credentials_changed": M}; NULL: none. */
	json_t *(*reload_info)(void *ctx);
	/* Health and counters (GET /v1/status); the server adds "control". */
	json_t *(*status)(void *ctx);
	/* Prometheus text exposition of the counters, to @out. */
	void (*metrics)(void *ctx, FILE *out);
	/*
	 * Start a verify run (POST /v1/verify); @done(@arg, report) is called
	 * once it is over, from the event loop, never from inside this call.
	 * Return: 0 (started); -ENOENT (a named sandbox does not exist, 404);
	 * -EBUSY (a run is under way, 409); -errno (500); @err says why.
	 */
	int (*verify)(void *ctx, const struct verify_request *req, ctl_verify_done_fn *done,
		      void *arg, char *err, size_t errsz);
	/* The client of the run started with @arg is gone: do not call its @done. */
	void (*verify_cancel)(void *ctx, void *arg);
	/* The gateway CA's certificate as PEM, the CA made on the first call
	 * (netd/gw/ca.h).  *@pem: NUL-terminated, the server frees it.
	 * Return: 0; -ENOMEM (503); -errno (500), @err says why. */
	int (*gateway_ca)(void *ctx, char **pem, char *err, size_t errsz);
};

/* Counters of the control socket (GET /v1/status "control"). */
struct ctl_stats {
	unsigned int connections;	/* open now */
	uint64_t accepted;		/* since start */
	uint64_t timed_out;		/* shut down by CTL_REQUEST_DEADLINE_S */
	uint64_t at_cap;		/* times accepting paused at CTL_MAX_CONNS */
	uint64_t accept_errors;		/* accept(2) failures (EMFILE, ...) */
};

/*
 * ctl_new() - listen on unix socket @path (mode 0660; its directory is
 * created 0755).  Refuses with -EADDRINUSE if another process answers on
 * @path; a stale socket file is replaced.  @ops/@ctx: borrowed for the
 * server's life.  @ret: caller frees with ctl_free().  Return: 0; -errno.
 */
int ctl_new(struct event_base *base, const char *path, const struct ctl_ops *ops, void *ctx,
	    struct ctl **ret);

/* ctl_get_stats() - the counters above, as of now. */
void ctl_get_stats(const struct ctl *c, struct ctl_stats *out);

/* ctl_free() - stop listening, close every connection, unlink the socket; NULL-safe. */
void ctl_free(struct ctl *c);

#endif
