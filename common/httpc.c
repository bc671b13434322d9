/*
 * httpc - blocking HTTP client for netd's control socket (see httpc.h).
 * "Connection: close" framing: the reply ends when netd closes.
 */
#include "common/httpc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int httpc_request(const char *socket_path, const char *method, const char *path,
		  const json_t *body, int *ret_status, json_t **ret_json)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char *text = NULL, *reply = NULL, *hdr_end;
	size_t len = 0, cap = 0;
	char head[1024];
	int fd = -1, r, status;

	*ret_json = NULL;
	*ret_status = 0;
	if (strlen(socket_path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, socket_path, strlen(socket_path) + 1);
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		if (!text)
			return -ENOMEM;
	}
	if ((size_t)snprintf(head, sizeof(head),
			     "%s %s HTTP/1.1\r\nHost: netd\r\nConnection: close\r\n"
			     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
			     method, path, text ? strlen(text) : 0) >= sizeof(head)) {
		r = -ENAMETOOLONG;
		goto out;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		goto out;
	}
	r = write_all(fd, head, strlen(head));
	if (r == 0 && text)
		r = write_all(fd, text, strlen(text));
	if (r < 0)
		goto out;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		r = poll(&pfd, 1, HTTPC_TIMEOUT_MS);
		if (r == 0) {
			r = -ETIMEDOUT;
			goto out;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (cap - len < 4096) {
			char *nr;

			if (cap >= HTTPC_MAX_REPLY) {
				r = -EMSGSIZE;
				goto out;
			}
			cap = cap ? cap * 2 : 8192;
			nr = realloc(reply, cap + 1);
			if (!nr) {
				r = -ENOMEM;
				goto out;
			}
			reply = nr;
		}
		n = read(fd, reply + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	r = -EBADMSG;
	if (!reply)
		goto out;
	reply[len] = '\0';
	if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1)
		goto out;
	hdr_end = strstr(reply, "\r\n\r\n");
	if (!hdr_end)
		goto out;
	*ret_status = status;
	if (hdr_end[4])
		*ret_json = json_loads(hdr_end + 4, 0, NULL);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(reply);
	free(text);
	return r;
}
