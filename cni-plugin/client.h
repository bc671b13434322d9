/*
 * client - netd-cni's tiny HTTP/1.1 client for netd's control socket
 * (netd/ctl.h describes the API).  Blocking, one request per connection,
 * bounded in time and size.  The plugin does not link the daemon's ctl.c,
 * which needs the daemon and libevent.
 */
#ifndef NETD_CNI_CLIENT_H
#define NETD_CNI_CLIENT_H

#include <jansson.h>

#define CNI_CLIENT_TIMEOUT_MS 30000	/* per read; netd answers in milliseconds */
#define CNI_CLIENT_MAX_REPLY  (4u << 20)	/* bytes */

/*
 * cni_client_request() - send @method @path with @body (may be NULL) to the
 * unix socket @socket_path and read the whole reply.
 * @ret_status: the HTTP status; @ret_json: the parsed body (caller decrefs;
 * NULL if none or not JSON).
 * Return: 0; -ENOENT/-ECONNREFUSED (netd not running); -ETIMEDOUT;
 * -EBADMSG (not HTTP); -EMSGSIZE; -errno.
 */
int cni_client_request(const char *socket_path, const char *method, const char *path,
		       const json_t *body, int *ret_status, json_t **ret_json);

#endif
