/*
 * acct_burst - load generator for tests/integ/acct_burst.sh (test code, not
 * product code).  Built by the test with the system compiler.
 *
 *   acct_burst server ADDR PORT      accept and close at once, forever
 *   acct_burst client ADDR PORT RATE SECONDS
 *       open RATE TCP connections per second for SECONDS, each closed as
 *       soon as it is established; prints "attempts N ok N failed N".
 *
 * One thread, epoll, non-blocking sockets: fast enough for thousands of
 * connections per second on one core, which curl or python are not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_INFLIGHT 4096
#define CONNECT_TIMEOUT_MS 3000

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int addr_parse(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/*
 * The server waits for the client's FIN before closing, so the client
 * closes first and holds TIME_WAIT: its kernel then never reuses a source
 * port the server still remembers.  (With the server closing first, a
 * reused port meets the server's TIME_WAIT socket, is refused with an ACK
 * and RST by the client, and retried: two real conntrack flows, two conn
 * records, for one connect().)
 */
static int server(const struct sockaddr_in *sa)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd < 0 || ep < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(fd, 4096) < 0) {
		perror("bind/listen");
		return 1;
	}
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			char buf[512];

			if (evs[i].data.fd == fd) {
				int c;

				while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
					struct epoll_event cev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = c };

					epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
				}
				continue;
			}
			/* Data, EOF or an error: EOF/error closes, data is discarded. */
			ssize_t r = read(evs[i].data.fd, buf, sizeof(buf));

			if (r <= 0 && !(r < 0 && errno == EAGAIN))
				close(evs[i].data.fd);
		}
	}
}

struct conn {
	int fd;
	uint64_t started_ms;
};

static int client(const struct sockaddr_in *sa, long rate, long seconds)
{
	static struct conn conns[MAX_INFLIGHT];
	uint64_t t0 = now_ms(), end_ms = t0 + (uint64_t)seconds * 1000;
	uint64_t want_total = (uint64_t)rate * (uint64_t)seconds;
	uint64_t attempts = 0, okn = 0, failed = 0;
	int ep = epoll_create1(0), inflight = 0;

	for (int i = 0; i < MAX_INFLIGHT; i++)
		conns[i].fd = -1;
	while (attempts < want_total || inflight > 0) {
		struct epoll_event evs[256];
		uint64_t now = now_ms();
		/* Pace: by now, (now - t0) * rate / 1000 attempts are due. */
		uint64_t due = now >= end_ms ? want_total : (now - t0) * (uint64_t)rate / 1000;
		int n;

		while (attempts < due && inflight < MAX_INFLIGHT) {
			int slot = 0, fd;

			while (conns[slot].fd >= 0)
				slot++;
			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			attempts++;
			if (fd < 0) {
				failed++;
				continue;
			}
			if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 &&
			    errno != EINPROGRESS) {
				failed++;
				close(fd);
				continue;
			}
			conns[slot].fd = fd;
			conns[slot].started_ms = now;
			struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)slot };
			epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			inflight++;
		}
		n = epoll_wait(ep, evs, 256, 1);
		for (int i = 0; i < n; i++) {
			struct conn *c = &conns[evs[i].data.u32];
			int err = 0;
			socklen_t len = sizeof(err);

			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err == 0)
				okn++;
			else
				failed++;
			close(c->fd);
			c->fd = -1;
			inflight--;
		}
		now = now_ms();
		for (int i = 0; i < MAX_INFLIGHT; i++)
			if (conns[i].fd >= 0 && now - conns[i].started_ms > CONNECT_TIMEOUT_MS) {
				close(conns[i].fd);
				conns[i].fd = -1;
				failed++;
				inflight--;
			}
	}
	printf("attempts %llu ok %llu failed %llu elapsed_ms %llu\n", (unsigned long long)attempts,
	       (unsigned long long)okn, (unsigned long long)failed,
	       (unsigned long long)(now_ms() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;

	if (argc == 4 && strcmp(argv[1], "server") == 0 && addr_parse(argv[2], argv[3], &sa) == 0)
		return server(&sa);
	if (argc == 6 && strcmp(argv[1], "client") == 0 && addr_parse(argv[2], argv[3], &sa) == 0)
		return client(&sa, atol(argv[4]), atol(argv[5]));
	fprintf(stderr, "usage: acct_burst server ADDR PORT | client ADDR PORT RATE SECONDS\n");
	return 2;
}
