/*
 * ctl - control API server (evhttp on a unix socket) and its blocking
 * client for the CLI.  Routing and JSON shaping only: every state change
 * goes through daemon_*().
 */
#include "netd/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "common/log.h"
#include "netd/ctlreq.h"
#include "netd/daemon.h"

struct ctl {
	struct evhttp *http;
	struct evconnlistener *listener;
	struct daemon *d;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static void reply_json(struct evhttp_request *req, int status, json_t *body)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = body ? json_dumps(body, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	if (buf && text) {
		evbuffer_add(buf, text, strlen(text));
		evbuffer_add(buf, "\n", 1);
	}
	evhttp_send_reply(req, status, NULL, buf);
	if (buf)
		evbuffer_free(buf);
	free(text);
	json_decref(body);
}

static void reply_error(struct evhttp_request *req, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_error(struct evhttp_request *req, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply_json(req, status, json_pack("{s:{s:i, s:s}}", "error", "code", status, "message", msg));
}

static int errno_to_status(int r)
{
	switch (-r) {
	case EINVAL:
	case ENAMETOOLONG:
		return 400;
	case ENOENT:
		return 404;
	case EEXIST:
	case EBUSY:
		return 409;
	case ENOSPC:
		return 507;
	default:
		return 500;
	}
}

static void handle_sandbox_create(struct ctl *c, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct sandbox_request sr;
	struct sandbox *sb;
	char err[512] = "";
	json_t *obj = NULL;
	char *text;
	int r;

	if (len > CTL_MAX_BODY) {
		reply_error(req, 413, "request body over %d bytes", CTL_MAX_BODY);
		return;
	}
	text = malloc(len ? len : 1);
	if (!text) {
		reply_error(req, 503, "out of memory");
		return;
	}
	evbuffer_copyout(in, text, len);
	/* All parsing and validation of the body is ctlreq's (fuzzed). */
	r = ctlreq_sandbox(text, len, &sr, &obj, err, sizeof(err));
	free(text);
	if (r < 0) {
		reply_error(req, r == -ENOMEM ? 503 : 400, "%s", err[0] ? err : strerror(-r));
		return;
	}
	r = daemon_sandbox_create(c->d, &sr, &sb, err, sizeof(err));
	if (r < 0)
		reply_error(req, errno_to_status(r), "%s", err[0] ? err : strerror(-r));
	else
		reply_json(req, 201, daemon_sandbox_json(c->d, sb));
	json_decref(obj);
}

/* GET /v1/metrics: Prometheus text exposition format 0.0.4. */
static void reply_metrics(struct ctl *c, struct evhttp_request *req)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f) {
		daemon_metrics(c->d, f);
		fclose(f);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4");
	if (buf && text)
		evbuffer_add(buf, text, len);
	evhttp_send_reply(req, f && buf ? 200 : 500, NULL, buf);
	if (buf)
		evbuffer_free(buf);
	free(text);
}

static void handle(struct evhttp_request *req, void *arg)
{
	struct ctl *c = arg;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *raw = uri ? evhttp_uri_get_path(uri) : NULL;
	char *path = raw ? evhttp_uridecode(raw, 0, NULL) : NULL;
	const char *rest;

	if (!path) {
		reply_error(req, 400, "bad request path");
		return;
	}
	if (strcmp(path, "/v1/status") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_json(req, 200, daemon_status_json(c->d));
		else
			reply_error(req, 405, "use GET on %s", path);
	} else if (strcmp(path, "/v1/metrics") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_metrics(c, req);
		else
			reply_error(req, 405, "use GET on %s", path);
	} else if (strcmp(path, "/v1/sandboxes") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_json(req, 200, json_pack("{s:o}", "sandboxes",
						       daemon_sandboxes_json(c->d)));
		else if (cmd == EVHTTP_REQ_POST)
			handle_sandbox_create(c, req);
		else
			reply_error(req, 405, "use GET or POST on /v1/sandboxes");
	} else if (strncmp(path, "/v1/sandboxes/", 14) == 0 && path[14] &&
		   !strchr(path + 14, '/')) {
		struct sandbox *sb;

		rest = path + 14;
		sb = daemon_sandbox_find(c->d, rest);
		if (!sb) {
			char q[160];

			reply_error(req, 404, "no sandbox \"%s\"",
				    log_quote(rest, strlen(rest), q, sizeof(q)));
		} else if (cmd == EVHTTP_REQ_GET) {
			reply_json(req, 200, daemon_sandbox_json(c->d, sb));
		} else if (cmd == EVHTTP_REQ_DELETE) {
			int r = daemon_sandbox_delete(c->d, rest);

			if (r < 0)
				reply_error(req, errno_to_status(r), "delete failed: %s",
					    strerror(-r));
			else
				reply_json(req, 200, json_pack("{s:s}", "deleted", rest));
		} else {
			reply_error(req, 405, "use GET or DELETE on /v1/sandboxes/NAME");
		}
	} else if (strcmp(path, "/v1/policies") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_json(req, 200, json_pack("{s:o}", "policies",
						       daemon_policies_json(c->d)));
		else
			reply_error(req, 405, "use GET on /v1/policies");
	} else if (strcmp(path, "/v1/policies/reload") == 0 && cmd == EVHTTP_REQ_POST) {
		/* Validated whole first: a bad file is a 400 with FILE:LINE:COL, nothing changes. */
		char msg[1200];
		json_t *report = NULL;
		int r = daemon_policy_reload(c->d, &report, msg, sizeof(msg));

		if (r < 0)
			reply_error(req, r == -EINVAL || r == -EEXIST || r == -E2BIG || r == -ENOENT ?
					 400 : 500, "%s", msg);
		else
			reply_json(req, 200, json_pack("{s:o}", "changed", report));
	} else if (strncmp(path, "/v1/policies/", 13) == 0 && path[13] &&
		   !strchr(path + 13, '/')) {
		json_t *p = daemon_policy_json(c->d, path + 13);

		if (cmd != EVHTTP_REQ_GET) {
			json_decref(p);
			reply_error(req, 405, "use GET on /v1/policies/NAME");
		} else if (!p) {
			char q[160];

			reply_error(req, 404, "no policy \"%s\"",
				    log_quote(path + 13, strlen(path + 13), q, sizeof(q)));
		} else {
			reply_json(req, 200, p);
		}
	} else {
		char q[160];

		reply_error(req, 404, "no such endpoint \"%s\" (see /v1/status, /v1/sandboxes, /v1/policies)",
			    log_quote(path, strlen(path), q, sizeof(q)));
	}
	free(path);
}

/* Is something answering on @path?  (A stale file refuses the connect.) */
static bool socket_alive(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool alive;

	if (fd < 0)
		return false;
	alive = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return alive;
}

static int mkdir_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;

			*p = '\0';
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

int ctl_new(struct event_base *base, const char *path, struct daemon *d, struct ctl **ret)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl *c;
	int fd = -1, r;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (socket_alive(&sun))
		return -EADDRINUSE;
	r = mkdir_parent(path);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->d = d;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	unlink(path);		/* stale: nobody answered above */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0660) < 0 ||
	    listen(fd, 64) < 0) {
		r = -errno;
		goto fail;
	}
	c->listener = evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE, 64, fd);
	if (!c->listener) {
		r = -ENOMEM;
		goto fail;
	}
	fd = -1;
	c->http = evhttp_new(base);
	if (!c->http || !evhttp_bind_listener(c->http, c->listener)) {
		r = -ENOMEM;
		goto fail;
	}
	evhttp_set_max_body_size(c->http, CTL_MAX_BODY);
	evhttp_set_max_headers_size(c->http, CTL_MAX_HEADERS);
	evhttp_set_timeout(c->http, 10);
	evhttp_set_allowed_methods(c->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(c->http, handle, c);
	*ret = c;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (c->http)
		evhttp_free(c->http);	/* frees the bound listener too */
	else if (c->listener)
		evconnlistener_free(c->listener);
	if (c->listener || fd >= 0)
		unlink(path);
	free(c);
	return r;
}

void ctl_free(struct ctl *c)
{
	if (!c)
		return;
	evhttp_free(c->http);
	unlink(c->path);
	free(c);
}
