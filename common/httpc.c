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
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
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

/* The value of header @name (case-insensitive) in @hdr[0..@n), or NULL. */
static const char *header_value(const char *hdr, size_t n, const char *name, size_t *ret_len)
{
	size_t nl = strlen(name);

	for (const char *p = hdr, *end = hdr + n; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t ll = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (ll > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
			const char *v = p + nl + 1;

			while (v < p + ll && (*v == ' ' || *v == '\t'))
				v++;
			*ret_len = (size_t)(p + ll - v);
			return v;
		}
		p += ll + 1;
	}
	return NULL;
}

int httpc_parse_reply(const char *reply, size_t len, int *ret_status, json_t **ret_json)
{
	const char *hdr_end = NULL, *cl;
	size_t body_len, cl_len, hlen;
	int status = 0;

	*ret_status = 0;
	*ret_json = NULL;
	/* "HTTP/1." DIGIT SP 3DIGIT */
	if (len < 12 || memcmp(reply, "HTTP/1.", 7) != 0 || reply[7] < '0' || reply[7] > '9' ||
	    reply[8] != ' ')
		return -EBADMSG;
	for (int i = 9; i < 12; i++) {
		if (reply[i] < '0' || reply[i] > '9')
			return -EBADMSG;
		status = status * 10 + (reply[i] - '0');
	}
	if (status < 100 || status > 599 || (len > 12 && reply[12] != ' ' && reply[12] != '\r'))
		return -EBADMSG;
	for (size_t i = 12; i + 4 <= len && !hdr_end; i++)
		if (memcmp(reply + i, "\r\n\r\n", 4) == 0)
			hdr_end = reply + i;
	if (!hdr_end)
		return -EBADMSG;
	hlen = (size_t)(hdr_end - reply);
	body_len = len - hlen - 4;
	cl = header_value(reply, hlen, "Content-Length", &cl_len);
	if (cl) {
		size_t v = 0, k = 0;

		while (k < cl_len && cl[k] >= '0' && cl[k] <= '9' && v <= HTTPC_MAX_REPLY)
			v = v * 10 + (size_t)(cl[k++] - '0');
		if (k > 0 && v < body_len)
			body_len = v;
	}
	*ret_status = status;
	if (body_len)
		*ret_json = json_loadb(hdr_end + 4, body_len, 0, NULL);
	return 0;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * @timeout_ms > 0: a deadline for the whole exchange (SO_SNDTIMEO bounds
 * the connect and the writes, poll() the reads); 0: HTTPC_TIMEOUT_MS per
 * read, nothing else bounded (httpc_request(), as it always was).
 */
static int request(const char *socket_path, const char *method, const char *path,
		   const json_t *body, int *ret_status, json_t **ret_json, int timeout_ms)
{
	long long deadline = timeout_ms > 0 ? mono_ms() + timeout_ms : 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char *text = NULL, *reply = NULL;
	size_t len = 0, cap = 0;
	char head[1024];
	int fd = -1, r;

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
	if (timeout_ms > 0) {
		struct timeval tv = { .tv_sec = timeout_ms / 1000,
				      .tv_usec = (timeout_ms % 1000) * 1000 };

		/* A unix connect waits for room in a full backlog up to SO_SNDTIMEO. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
			r = -errno;
			goto out;
		}
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = errno == EAGAIN && timeout_ms > 0 ? -ETIMEDOUT : -errno;
		goto out;
	}
	r = write_all(fd, head, strlen(head));
	if (r == 0 && text)
		r = write_all(fd, text, strlen(text));
	if (r == -EAGAIN && timeout_ms > 0)
		r = -ETIMEDOUT;
	if (r < 0)
		goto out;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline ? deadline - mono_ms() : HTTPC_TIMEOUT_MS;
		ssize_t n;

		if (left <= 0) {
			r = -ETIMEDOUT;
			goto out;
		}
		r = poll(&pfd, 1, (int)left);
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
	r = reply ? httpc_parse_reply(reply, len, ret_status, ret_json) : -EBADMSG;
out:
	if (fd >= 0)
		close(fd);
	free(reply);
	free(text);
	return r;
}

int httpc_request(const char *socket_path, const char *method, const char *path,
		  const json_t *body, int *ret_status, json_t **ret_json)
{
	return request(socket_path, method, path, body, ret_status, ret_json, 0);
}

int httpc_request_timeout(const char *socket_path, const char *method, const char *path,
			  const json_t *body, int *ret_status, json_t **ret_json, int timeout_ms)
{
	return request(socket_path, method, path, body, ret_status, ret_json,
		       timeout_ms > 0 ? timeout_ms : HTTPC_TIMEOUT_MS);
}
