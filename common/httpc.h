/*
 * httpc - the tiny HTTP/1.1 client for netd's control socket (netd/api/ctl.h
 * describes the API), shared by the CLI and netd-cni.  Blocking, one
 * request per connection, bounded in time and size; no libevent, so the
 * plugin does not link the daemon.
 */
#ifndef NETD_COMMON_HTTPC_H
#define NETD_COMMON_HTTPC_H

#include <jansson.h>

#define HTTPC_TIMEOUT_MS 60000	/* per read; a sandbox create takes milliseconds */
#define HTTPC_MAX_REPLY  (64u << 20)	/* bytes (`netd verify --all` at 1,000 sandboxes: ~4 MiB) */

/*
 * httpc_request() - send @method @path with @body (may be NULL) to the
 * unix socket @socket_path and read the whole reply.
 * @ret_status: the HTTP status; @ret_json: the parsed body (caller decrefs;
 * NULL if none or not JSON).
 * Return: 0; -ENOENT/-ECONNREFUSED (netd not running); -ETIMEDOUT;
 * -EBADMSG (not HTTP); -EMSGSIZE; -errno.
 */
int httpc_request(const char *socket_path, const char *method, const char *path,
		  const json_t *body, int *ret_status, json_t **ret_json);

/*
 * httpc_request_timeout() - httpc_request() with a deadline of @timeout_ms
 * (> 0) for the whole exchange: the connect (a full backlog of a hung
 * netd), the request's write and the reply's reads.  netd-docker must
 * answer Docker before Docker gives up on it.  Return: as httpc_request();
 * -ETIMEDOUT when the deadline passes.
 */
int httpc_request_timeout(const char *socket_path, const char *method, const char *path,
			  const json_t *body, int *ret_status, json_t **ret_json, int timeout_ms);

/*
 * httpc_parse_reply() - the status line and body of a whole HTTP/1.x reply
 * of @len bytes at @reply (RFC 9112 section 4: "HTTP/1.x NNN reason"; the
 * header ends at the first empty line; the body is whatever follows, up to
 * Content-Length when one is given).  Pure.  @ret_status: 100-599;
 * @ret_json: the body parsed as JSON (caller decrefs; NULL if empty or not
 * JSON).  Return: 0; -EBADMSG (no status line, a status out of range, no
 * end of header).
 */
int httpc_parse_reply(const char *reply, size_t len, int *ret_status, json_t **ret_json);

#endif
