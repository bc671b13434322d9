/*
 * netd-docker - Docker's remote network driver for netd (`docker network
 * create -d netd -o netd.policy=NAME`), a thin client of netd's control
 * socket as netd-cni is.  It serves the plugin protocol (JSON over HTTP,
 * libevent's evhttp) on a unix socket in Docker's plugin directory, keeps
 * what Docker says once and needs later in a small state dir (a network's
 * policy and pools from CreateNetwork, an endpoint's addresses from
 * CreateEndpoint until its Join), and asks netd for the rest: at Join a
 * sandbox of kind "peer" (netd makes the veth with the host end under its
 * rules and leaves the peer for Docker to move into the container), at
 * DeleteEndpoint its removal.  netd, not this process, touches links and
 * nf_tables: netd-docker needs no capability.
 *
 * The calls, in the order Docker 20.10 makes them for `docker run
 * --network NET`: CreateEndpoint, Join, (the container starts),
 * EndpointOperInfo (docker inspect), Leave, DeleteEndpoint; `docker
 * restart` is all of them again with a new endpoint.  docs/docker.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "common/fsutil.h"
#include "common/httpc.h"
#include "docker-plugin/dkreq.h"

#define DK_VERSION         "0.1.0"
#define DK_HEADERS_MAX     8192		/* bytes of a request's header block */
#define DK_TIMEOUT_S       30		/* a connection idle or a request unfinished */
/*
 * A call to netd, whole: well under DK_TIMEOUT_S (past it libevent drops
 * Docker's connection while we wait, and Docker shows "EOF") and under
 * Docker's plugin timeout (30 s, pkg/plugins defaultTimeOut); a create
 * takes milliseconds.  A hung netd (SIGSTOP) gets Docker a JSON Err.
 */
#define DK_NETD_TIMEOUT_MS 10000
#define DK_BACKLOG         64
#define DK_CONTENT_TYPE    "application/vnd.docker.plugins.v1+json"

struct drv {
	const char *socket;		/* ours, in Docker's plugin directory */
	const char *netd_socket;	/* netd's control API */
	const char *state_dir;
	const char *tombstone_dir;	/* netd reads it at its start (netd-cni's too) */
	const char *default_policy;	/* a network without -o netd.policy */
	struct event_base *base;
	struct evhttp *http;
};

static void say(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line on stderr (journald keeps it): "netd-docker: LEVEL: message". */
static void say(const char *level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One line each: a request's bytes (an option's name) never start another. */
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stderr, "netd-docker: %s: %s\n", level, buf);
}

/* ---- the state dir: networks/ID.json, endpoints/ID.json ------------------------- */

static void record_path(const struct drv *d, const char *kind, const char *id, char *buf,
			size_t sz)
{
	snprintf(buf, sz, "%s/%s/%s.json", d->state_dir, kind, id);
}

/* Write @o (consumed) as @kind/@id.json, atomically.  Return: 0; -errno. */
static int record_save(const struct drv *d, const char *kind, const char *id, json_t *o)
{
	char path[PATH_MAX], *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	int r = -ENOMEM;

	json_decref(o);
	if (text) {
		record_path(d, kind, id, path, sizeof(path));
		r = fs_mkdir_parent(path, 0700);
		if (r == 0)
			r = fs_write_atomic(path, text, strlen(text), 0600);
	}
	free(text);
	return r;
}

/* Read @kind/@id.json whole (at most DK_BODY_MAX + 1 bytes).  Return: 0; -ENOENT; -errno. */
static int record_read(const struct drv *d, const char *kind, const char *id, char **ret,
		       size_t *ret_len)
{
	char path[PATH_MAX], *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	record_path(d, kind, id, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(DK_BODY_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < DK_BODY_MAX + 1 && (n = read(fd, buf + len, DK_BODY_MAX + 1 - len)) != 0) {
		if (n < 0) {
			n = -errno;
			close(fd);
			free(buf);
			return (int)n;
		}
		len += (size_t)n;
	}
	close(fd);
	*ret = buf;
	*ret_len = len;
	return 0;
}

static void record_remove(const struct drv *d, const char *kind, const char *id)
{
	char path[PATH_MAX];

	record_path(d, kind, id, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		say("warn", "cannot remove %s: %s", path, strerror(errno));
}

static int network_load(const struct drv *d, const char *nid, struct dk_network *n, char *err,
			size_t errsz)
{
	char *text = NULL, why[256];
	size_t len = 0;
	int r = record_read(d, "networks", nid, &text, &len);

	if (r == 0)
		r = dk_network_parse(text, len, n, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-r));
	free(text);
	if (r < 0)
		snprintf(err, errsz, "netd-docker has no record of network %.12s (%s) in %s: "
			 "remove the network and create it again", nid, why, d->state_dir);
	return r;
}

static int endpoint_load(const struct drv *d, const char *eid, struct dk_endpoint *e, char *err,
			 size_t errsz)
{
	char *text = NULL, why[256];
	size_t len = 0;
	int r = record_read(d, "endpoints", eid, &text, &len);

	if (r == 0)
		r = dk_endpoint_parse(text, len, e, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-r));
	free(text);
	if (r < 0)
		snprintf(err, errsz, "netd-docker has no record of endpoint %.12s (%s)", eid, why);
	return r;
}

/* ---- netd ------------------------------------------------------------------------ */

/*
 * @method @path (@body may be NULL) to netd.  *@ret: its JSON answer
 * (caller decrefs; may be NULL).  Return: the HTTP status; -errno when
 * netd cannot be reached (@err says so).
 */
static int netd_call(const struct drv *d, const char *method, const char *path,
		     const json_t *body, json_t **ret, char *err, size_t errsz)
{
	int status = 0, r;

	*ret = NULL;
	r = httpc_request_timeout(d->netd_socket, method, path, body, &status, ret,
				  DK_NETD_TIMEOUT_MS);
	if (r == -ETIMEDOUT) {
		snprintf(err, errsz, "netd is not reachable at %s: timed out after %d s (it is "
			 "there but does not answer: hung or stopped?)", d->netd_socket,
			 DK_NETD_TIMEOUT_MS / 1000);
		return r;
	}
	if (r < 0) {
		snprintf(err, errsz, "netd is not reachable at %s (%s): is it running?",
			 d->netd_socket, strerror(-r));
		return r;
	}
	return status;
}

/* netd's own error message from its answer @o, else "HTTP @status". */
static void netd_error(const json_t *o, int status, char *err, size_t errsz)
{
	const char *m = json_string_value(json_object_get(json_object_get(o, "error"), "message"));

	if (m)
		snprintf(err, errsz, "netd: %s", m);
	else
		snprintf(err, errsz, "netd answered HTTP %d", status);
}

/* Is @policy loaded in netd?  Return: 0; -ENOENT or -errno (@err filled). */
static int policy_check(const struct drv *d, const char *policy, char *err, size_t errsz)
{
	char path[128];
	json_t *o;
	int s;

	snprintf(path, sizeof(path), "/v1/policies/%s", policy);	/* a name: no escaping needed */
	s = netd_call(d, "GET", path, NULL, &o, err, errsz);
	json_decref(o);
	if (s < 0)
		return s;
	if (s == 404) {
		snprintf(err, errsz, "netd has no policy \"%s\" (netd policy list shows those it has)",
			 policy);
		return -ENOENT;
	}
	if (s != 200) {
		snprintf(err, errsz, "netd answered HTTP %d for policy \"%s\"", s, policy);
		return -EIO;
	}
	return 0;
}

/* ---- the calls --------------------------------------------------------------------- */

static json_t *create_network(struct drv *d, const struct dk_req *r, char *err, size_t errsz)
{
	struct dk_network n = r->net;

	if (!n.policy[0])
		snprintf(n.policy, sizeof(n.policy), "%s", d->default_policy);
	for (size_t i = 0; i < n.n_v4; i++)
		if (!n.v4[i].gateway.family) {
			snprintf(err, errsz, "an IPv4 pool without a gateway: netd routes containers "
				 "through the gateway Docker's IPAM chooses");
			return NULL;
		}
	if (policy_check(d, n.policy, err, errsz) < 0)
		return NULL;
	if (record_save(d, "networks", r->network_id, dk_network_json(&n)) < 0) {
		snprintf(err, errsz, "cannot save the network in %s", d->state_dir);
		return NULL;
	}
	say("info", "network %.12s: policy %s%s%s", r->network_id, n.policy,
	    n.mode[0] ? ", mode " : "", n.mode);
	return json_object();
}

static json_t *create_endpoint(struct drv *d, const struct dk_req *r, char *err, size_t errsz)
{
	struct dk_network n;
	struct dk_endpoint e;
	char mac[18];

	if (network_load(d, r->network_id, &n, err, errsz) < 0)
		return NULL;
	if (r->ports_published) {
		snprintf(err, errsz, "a netd network publishes no ports (-p, -P): a sandbox takes "
			 "no connections from outside");
		return NULL;
	}
	if (dk_endpoint_from(r, &e, err, errsz) < 0)
		return NULL;
	if (e.policy[0] && policy_check(d, e.policy, err, errsz) < 0)
		return NULL;
	if (record_save(d, "endpoints", r->endpoint_id, dk_endpoint_json(&e)) < 0) {
		snprintf(err, errsz, "cannot save the endpoint in %s", d->state_dir);
		return NULL;
	}
	if (r->mac_given)
		return json_object();	/* Docker's own: it must get nothing back */
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", e.mac[0], e.mac[1], e.mac[2],
		 e.mac[3], e.mac[4], e.mac[5]);
	return json_pack("{s:{s:s}}", "Interface", "MacAddress", mac);
}

/* Does netd's sandbox @sb hold endpoint @e's addresses (a Join asked again)? */
static bool same_endpoint(const json_t *sb, const struct dk_endpoint *e)
{
	const char *a4 = json_string_value(json_object_get(sb, "ipv4"));
	const char *a6 = json_string_value(json_object_get(sb, "ipv6"));
	char buf[ADDR_STRLEN];

	return e->addr4.family ? a4 && strcmp(a4, addr_format(&e->addr4, buf, sizeof(buf))) == 0 :
				 a6 && e->addr6.family &&
					 strcmp(a6, addr_format(&e->addr6, buf, sizeof(buf))) == 0;
}

/*
 * Is another endpoint of ours joined to container netns @key?  Two netd
 * endpoints in one container would be two sandboxes under two policies,
 * the union of both: a second Join is refused, naming the first network.
 * Return: 0 (none); -EEXIST (@err filled); -errno (the state dir unreadable).
 */
static int joined_elsewhere(const struct drv *d, const char *eid, const char *key, char *err,
			    size_t errsz)
{
	char dir[PATH_MAX], why[256], id[DK_ID_LEN + 1];
	struct dk_endpoint o;
	struct dirent *de;
	DIR *dp;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s/endpoints", d->state_dir);
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dp))) {
		if (strlen(de->d_name) != DK_ID_LEN + 5 ||
		    strcmp(de->d_name + DK_ID_LEN, ".json") != 0 ||
		    strspn(de->d_name, "0123456789abcdef") != DK_ID_LEN)
			continue;
		memcpy(id, de->d_name, DK_ID_LEN);
		id[DK_ID_LEN] = '\0';
		if (strcmp(id, eid) == 0 || endpoint_load(d, id, &o, why, sizeof(why)) < 0 ||
		    strcmp(o.sandbox_key, key) != 0)
			continue;
		snprintf(err, errsz, "the container is already on netd network %.12s (endpoint %.12s, "
			 "sandbox " DK_SANDBOX_PREFIX "%.12s): a container may be on one netd network "
			 "only (two would be two sandboxes, the union of their policies)",
			 o.network, id, id);
		r = -EEXIST;
		break;
	}
	closedir(dp);
	return r;
}

static json_t *join(struct drv *d, const struct dk_req *r, char *err, size_t errsz)
{
	char name[DK_SANDBOX_NAME_LEN + 1], path[64];
	struct dk_network n;
	struct dk_endpoint e;
	json_t *body, *sb = NULL, *reply;
	int s;

	if (endpoint_load(d, r->endpoint_id, &e, err, errsz) < 0 ||
	    network_load(d, r->network_id, &n, err, errsz) < 0)
		return NULL;
	s = joined_elsewhere(d, r->endpoint_id, r->sandbox_key, err, errsz);
	if (s == -EEXIST)
		return NULL;
	if (s < 0) {
		snprintf(err, errsz, "cannot read %s/endpoints: %s", d->state_dir, strerror(-s));
		return NULL;
	}
	/* Recorded before netd is asked; DeleteEndpoint removes it either way. */
	snprintf(e.sandbox_key, sizeof(e.sandbox_key), "%s", r->sandbox_key);
	if (record_save(d, "endpoints", r->endpoint_id, dk_endpoint_json(&e)) < 0) {
		snprintf(err, errsz, "cannot save the endpoint in %s", d->state_dir);
		return NULL;
	}
	body = dk_create_body(r->endpoint_id, &e, &n, r->sandbox_key, d->default_policy, err,
			      errsz);
	if (!body)
		return NULL;
	dk_sandbox_name(r->endpoint_id, name, sizeof(name));
	s = netd_call(d, "POST", "/v1/sandboxes", body, &sb, err, errsz);
	json_decref(body);
	if (s == 409) {
		/* Asked again (Docker retried, or a restart of ours between): the same
		 * endpoint's sandbox is the answer; another one's is a collision. */
		json_decref(sb);
		snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
		s = netd_call(d, "GET", path, NULL, &sb, err, errsz);
		if (s == 200 && !same_endpoint(sb, &e)) {
			snprintf(err, errsz, "netd has a sandbox %s of another endpoint", name);
			json_decref(sb);
			return NULL;
		}
	}
	if (s < 0)
		return NULL;
	if (s != 200 && s != 201) {
		netd_error(sb, s, err, errsz);
		json_decref(sb);
		return NULL;
	}
	reply = dk_join_reply(sb);
	if (!reply)
		snprintf(err, errsz, "netd's sandbox %s names no interface", name);
	else
		say("info", "endpoint %.12s joined: sandbox %s, policy %s, interface %s for %s", r->endpoint_id,
		    name, json_string_value(json_object_get(sb, "policy")),
		    json_string_value(json_object_get(sb, "ifname")), r->sandbox_key);
	json_decref(sb);
	return reply;
}

/* netd is down at DeleteEndpoint: it deletes the sandbox at its next start. */
static int tombstone(const struct drv *d, const char *name, const char *eid)
{
	char path[PATH_MAX], text[128];
	int r = fs_mkdir_p(d->tombstone_dir, 0750);

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", d->tombstone_dir, name);
	snprintf(text, sizeof(text), "netd-docker endpoint %s\n", eid);
	return fs_write_atomic(path, text, strlen(text), 0640);
}

static json_t *delete_endpoint(struct drv *d, const struct dk_req *r, char *err, size_t errsz)
{
	char name[DK_SANDBOX_NAME_LEN + 1], path[64];
	json_t *o;
	int s;

	dk_sandbox_name(r->endpoint_id, name, sizeof(name));
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	s = netd_call(d, "DELETE", path, NULL, &o, err, errsz);
	if (s < 0) {
		int t = tombstone(d, name, r->endpoint_id);

		if (t < 0) {
			snprintf(err, errsz, "netd is not reachable and the tombstone %s/%s cannot be "
				 "written: %s", d->tombstone_dir, name, strerror(-t));
			return NULL;
		}
		say("warn", "endpoint %.12s: netd not reachable; tombstone %s/%s written (netd "
		    "deletes sandbox %s when it starts)", r->endpoint_id, d->tombstone_dir, name, name);
	} else if (s != 200 && s != 404) {	/* 404: gone already (a retry, or it vanished) */
		netd_error(o, s, err, errsz);
		json_decref(o);
		return NULL;
	} else {
		say("info", "endpoint %.12s deleted: sandbox %s%s", r->endpoint_id, name,
		    s == 404 ? " was gone already" : "");
	}
	json_decref(o);
	record_remove(d, "endpoints", r->endpoint_id);
	return json_object();
}

static json_t *endpoint_info(struct drv *d, const struct dk_req *r)
{
	char name[DK_SANDBOX_NAME_LEN + 1], path[64], err[256];
	json_t *sb = NULL, *reply;
	int s;

	dk_sandbox_name(r->endpoint_id, name, sizeof(name));
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	s = netd_call(d, "GET", path, NULL, &sb, err, sizeof(err));
	reply = dk_oper_info(name, s == 200 ? sb : NULL,
			     s < 0 ? "netd not reachable" : s == 404 ? "not joined" : "unknown");
	json_decref(sb);
	return reply;
}

/* The call @r: its reply (200), or NULL with @err (200 {"Err"}, remote.md's "Errors"). */
static json_t *dispatch(struct drv *d, const struct dk_req *r, char *err, size_t errsz)
{
	switch (r->method) {
	case DK_ACTIVATE:
		return json_pack("{s:[s]}", "Implements", "NetworkDriver");
	case DK_CAPABILITIES:
		/* This host's interfaces, this host's netd: local both ways. */
		return json_pack("{s:s, s:s}", "Scope", "local", "ConnectivityScope", "local");
	case DK_CREATE_NETWORK:
		return create_network(d, r, err, errsz);
	case DK_DELETE_NETWORK:
		record_remove(d, "networks", r->network_id);
		say("info", "network %.12s removed", r->network_id);
		return json_object();
	case DK_CREATE_ENDPOINT:
		return create_endpoint(d, r, err, errsz);
	case DK_JOIN:
		return join(d, r, err, errsz);
	case DK_DELETE_ENDPOINT:
		return delete_endpoint(d, r, err, errsz);
	case DK_ENDPOINT_INFO:
		return endpoint_info(d, r);
	default:
		/* Leave: Docker moves the interface back; DeleteEndpoint removes the sandbox.
		 * External connectivity: netd's rules are it.  Discovery: one host. */
		return json_object();
	}
}

/* ---- HTTP --------------------------------------------------------------------------- */

static void reply(struct evhttp_request *req, int status, json_t *o)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", DK_CONTENT_TYPE);
	if (buf && text) {
		evbuffer_add(buf, text, strlen(text));
		evbuffer_add(buf, "\n", 1);
	} else if (buf) {
		evbuffer_add_printf(buf, "{\"Err\":\"out of memory\"}\n");
		status = 500;
	}
	evhttp_send_reply(req, status, NULL, buf);
	if (buf)
		evbuffer_free(buf);
	free(text);
}

static void handle(struct evhttp_request *req, void *arg)
{
	struct drv *d = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	enum dk_method m = dk_method_of(path);
	char err[1024] = "", *text;
	struct dk_req *r;
	json_t *o;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		reply(req, 405, dk_error("the plugin protocol takes POST only"));
		return;
	}
	if (m == DK_UNKNOWN) {
		/* 404 tells Docker this driver does not implement the call (remote.md). */
		snprintf(err, sizeof(err), "netd-docker implements no call \"%.128s\"",
			 path ? path : "");
		reply(req, 404, dk_error(err));
		return;
	}
	text = malloc(len + 1);
	r = malloc(sizeof(*r));
	if (!text || !r) {
		free(text);
		free(r);
		reply(req, 500, dk_error("out of memory"));
		return;
	}
	evbuffer_copyout(in, text, len);
	if (dk_parse(m, text, len, r, err, sizeof(err)) < 0) {
		say("warn", "%s: bad request: %s", dk_method_name(m), err);
		reply(req, 400, dk_error(err));
	} else if ((o = dispatch(d, r, err, sizeof(err)))) {
		reply(req, 200, o);
	} else {
		say("warn", "%s: %s", dk_method_name(m), err[0] ? err : "out of memory");
		reply(req, 200, dk_error(err[0] ? err : "out of memory"));
	}
	free(text);
	free(r);
}

/* Does something already answer on @sun (another netd-docker)? */
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

/* The listening socket at d->socket (a stale one replaced).  Return: the fd; -errno. */
static int listen_at(const struct drv *d)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(d->socket) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, d->socket, strlen(d->socket) + 1);
	if (socket_alive(&sun))
		return -EADDRINUSE;
	r = fs_mkdir_parent(d->socket, 0755);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(d->socket);	/* stale: nobody answered above */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(d->socket, 0660) < 0 ||
	    listen(fd, DK_BACKLOG) < 0) {
		r = -errno;
		close(fd);
		unlink(d->socket);
		return r;
	}
	return fd;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct drv *d = arg;

	say("info", "signal %d: stopping", (int)sig);
	event_base_loopexit(d->base, NULL);
}

static int usage(FILE *f, int status)
{
	fprintf(f,
		"usage: netd-docker [--socket PATH] [--netd-socket PATH] [--state-dir DIR]\n"
		"                   [--tombstone-dir DIR] [--default-policy NAME]\n"
		"Docker's network driver for netd: docker network create -d netd -o netd.policy=NAME NET\n"
		"  --socket PATH          where Docker finds the driver (default %s;\n"
		"                         its file name is the driver's name)\n"
		"  --netd-socket PATH     netd's control socket (default %s)\n"
		"  --state-dir DIR        networks and endpoints Docker told about (default %s)\n"
		"  --tombstone-dir DIR    deletes netd was down for (default %s)\n"
		"  --default-policy NAME  a network without netd.policy (default %s)\n",
		DK_DEFAULT_SOCKET, NETD_DEFAULT_SOCKET, DK_DEFAULT_STATE, DK_DEFAULT_TOMBSTONE_DIR,
		DK_DEFAULT_POLICY);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "netd-socket", required_argument, NULL, 'n' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "tombstone-dir", required_argument, NULL, 't' },
		{ "default-policy", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct drv d = { .socket = DK_DEFAULT_SOCKET, .netd_socket = NETD_DEFAULT_SOCKET,
			 .state_dir = DK_DEFAULT_STATE, .tombstone_dir = DK_DEFAULT_TOMBSTONE_DIR,
			 .default_policy = DK_DEFAULT_POLICY };
	struct event *sig[2] = { NULL, NULL };
	char err[256];
	int c, fd, r = 1;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': d.socket = optarg; break;
		case 'n': d.netd_socket = optarg; break;
		case 'd': d.state_dir = optarg; break;
		case 't': d.tombstone_dir = optarg; break;
		case 'p': d.default_policy = optarg; break;
		case 'h': return usage(stdout, 0);
		case 'V': printf("netd-docker %s\n", DK_VERSION); return 0;
		default: return usage(stderr, 2);
		}
	}
	if (optind != argc)
		return usage(stderr, 2);
	if (d.state_dir[0] != '/' || d.tombstone_dir[0] != '/' || d.socket[0] != '/') {
		fprintf(stderr, "netd-docker: --socket, --state-dir and --tombstone-dir must be "
			"absolute paths\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((r = fs_mkdir_p(d.state_dir, 0700)) < 0) {
		say("error", "cannot make %s: %s", d.state_dir, strerror(-r));
		return 1;
	}
	d.base = event_base_new();
	d.http = d.base ? evhttp_new(d.base) : NULL;
	if (!d.http) {
		say("error", "cannot set up libevent");
		goto out;
	}
	fd = listen_at(&d);
	if (fd < 0) {
		say("error", "cannot listen on %s: %s", d.socket,
		    fd == -EADDRINUSE ? "another netd-docker answers there" : strerror(-fd));
		goto out;
	}
	evhttp_set_max_body_size(d.http, DK_BODY_MAX);
	evhttp_set_max_headers_size(d.http, DK_HEADERS_MAX);
	evhttp_set_timeout(d.http, DK_TIMEOUT_S);
	/* Every method reaches handle(), which answers a non-POST in JSON. */
	evhttp_set_allowed_methods(d.http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(d.http, handle, &d);
	if (!evhttp_accept_socket_with_handle(d.http, fd)) {
		say("error", "cannot serve %s", d.socket);
		close(fd);
		unlink(d.socket);
		goto out;
	}
	sig[0] = evsignal_new(d.base, SIGTERM, on_signal, &d);
	sig[1] = evsignal_new(d.base, SIGINT, on_signal, &d);
	if (!sig[0] || !sig[1] || evsignal_add(sig[0], NULL) < 0 || evsignal_add(sig[1], NULL) < 0) {
		say("error", "cannot catch SIGTERM/SIGINT");
		unlink(d.socket);
		goto out;
	}
	if (policy_check(&d, d.default_policy, err, sizeof(err)) < 0)
		say("warn", "default policy: %s (networks without netd.policy cannot be created "
		    "until it is there)", err);
	say("info", "serving Docker's network driver protocol on %s (netd at %s, state in %s)",
	    d.socket, d.netd_socket, d.state_dir);
	event_base_dispatch(d.base);
	unlink(d.socket);	/* Docker must not find a socket nobody answers */
	r = 0;
out:
	for (int i = 0; i < 2; i++)
		if (sig[i])
			event_free(sig[i]);
	if (d.http)
		evhttp_free(d.http);
	if (d.base)
		event_base_free(d.base);
	return r;
}
